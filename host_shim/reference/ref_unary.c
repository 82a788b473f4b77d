/* References of the unary kernel family. */
#include "reference.h"

const struct ref_op ref_ops_unary[] = {
    {.op = NULL},
};
