/* References of the pooling and batch-normalisation kernel family. */
#include "reference.h"

const struct ref_op ref_ops_pool[] = {
    {.op = NULL},
};
