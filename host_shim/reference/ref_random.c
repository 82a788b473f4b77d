/* References of the random-number kernel family. */
#include "reference.h"

const struct ref_op ref_ops_random[] = {
    {.op = NULL},
};
