/* References of the data-movement kernel family (and NoOp). */
#include "reference.h"

static void noop_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  (void)dtype;
  ref_case_add(out, op->op, "NoOp");
}

static int noop_compute(const struct ref_case *c, struct ref_tensor *outputs,
                        char *error, int error_len)
{
  (void)c;
  (void)outputs;
  (void)error;
  (void)error_len;
  return 0;
}

const struct ref_op ref_ops_movement[] = {
    {"NoOp", 0.0, 0.0, REF_ANY, noop_cases, noop_compute},
    {.op = NULL},
};
