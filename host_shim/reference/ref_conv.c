/* References of the convolution kernel family. */
#include "reference.h"

const struct ref_op ref_ops_conv[] = {
    {.op = NULL},
};
