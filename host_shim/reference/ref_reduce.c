/* References of the reduce kernel family. */
#include "reference.h"

const struct ref_op ref_ops_reduce[] = {
    {.op = NULL},
};
