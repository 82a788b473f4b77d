/* References of the matmul kernel family. */
#include "reference.h"

const struct ref_op ref_ops_matmul[] = {
    {.op = NULL},
};
