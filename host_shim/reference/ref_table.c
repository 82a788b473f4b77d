/* The table of op references: one array per kernel family, each ended by
 * an entry with op == NULL. */
#include <string.h>

#include "reference.h"

extern const struct ref_op ref_ops_binary[];
extern const struct ref_op ref_ops_unary[];
extern const struct ref_op ref_ops_reduce[];
extern const struct ref_op ref_ops_softmax[];
extern const struct ref_op ref_ops_matmul[];
extern const struct ref_op ref_ops_movement[];
extern const struct ref_op ref_ops_gather[];
extern const struct ref_op ref_ops_conv[];
extern const struct ref_op ref_ops_pool[];
extern const struct ref_op ref_ops_random[];
extern const struct ref_op ref_ops_scatter[];
extern const struct ref_op ref_ops_linalg[];
extern const struct ref_op ref_ops_einsum[];
extern const struct ref_op ref_ops_scan[];
extern const struct ref_op ref_ops_batch_norm[];
extern const struct ref_op ref_ops_fused[];
extern const struct ref_op ref_ops_image[];
extern const struct ref_op ref_ops_select[];
extern const struct ref_op ref_ops_segment[];
extern const struct ref_op ref_ops_numerics[];
extern const struct ref_op ref_ops_fft[];
extern const struct ref_op ref_ops_complex[];
extern const struct ref_op ref_ops_complex_overloads[];
extern const struct ref_op ref_ops_rnn[];

static const struct ref_op *const families[] = {
    ref_ops_binary, ref_ops_unary,    ref_ops_reduce,     ref_ops_softmax,
    ref_ops_matmul, ref_ops_movement, ref_ops_gather,     ref_ops_conv,
    ref_ops_pool,   ref_ops_random,   ref_ops_scatter,    ref_ops_linalg,
    ref_ops_einsum, ref_ops_scan,     ref_ops_batch_norm, ref_ops_fused,
    ref_ops_image,  ref_ops_select,   ref_ops_segment,    ref_ops_numerics,
    ref_ops_fft,    ref_ops_complex,  ref_ops_rnn,
};

#define NUM_FAMILIES (sizeof(families) / sizeof(families[0]))

extern const struct ref_check ref_checks_linalg[];

static const struct ref_check *const check_tables[] = {
    ref_checks_linalg,
};

const struct ref_check *ref_check_find(const char *name)
{
  for (size_t t = 0; t < sizeof(check_tables) / sizeof(check_tables[0]); t++)
    for (const struct ref_check *c = check_tables[t]; c->op != NULL; c++)
      if (strcmp(c->op, name) == 0)
        return c;
  return NULL;
}

extern const struct ref_double_tolerance ref_double_tolerances_unary[];
extern const struct ref_double_tolerance ref_double_tolerances_binary[];
extern const struct ref_double_tolerance ref_double_tolerances_reduce[];
extern const struct ref_double_tolerance ref_double_tolerances_softmax[];

static const struct ref_double_tolerance *const double_tolerance_tables[] = {
    ref_double_tolerances_unary,
    ref_double_tolerances_binary,
    ref_double_tolerances_reduce,
    ref_double_tolerances_softmax,
};

const struct ref_double_tolerance *ref_double_tolerance_find(const char *name)
{
  for (size_t t = 0;
       t < sizeof(double_tolerance_tables) / sizeof(double_tolerance_tables[0]);
       t++)
    for (const struct ref_double_tolerance *d = double_tolerance_tables[t];
         d->op != NULL; d++)
      if (strcmp(d->op, name) == 0)
        return d;
  return NULL;
}

int ref_op_count(void)
{
  int n = 0;
  for (size_t f = 0; f < NUM_FAMILIES; f++)
    for (const struct ref_op *op = families[f]; op->op != NULL; op++)
      n++;
  return n;
}

const struct ref_op *ref_op_at(int index)
{
  for (size_t f = 0; f < NUM_FAMILIES; f++)
    for (const struct ref_op *op = families[f]; op->op != NULL; op++)
      if (index-- == 0)
        return op;
  return NULL;
}

const struct ref_op *ref_op_find(const char *name)
{
  for (size_t f = 0; f < NUM_FAMILIES; f++)
    for (const struct ref_op *op = families[f]; op->op != NULL; op++)
      if (strcmp(op->op, name) == 0)
        return op;
  return NULL;
}

const struct ref_op *ref_op_find_typed(const char *name, TF_DataType dtype)
{
  if (dtype == TF_COMPLEX64 || dtype == TF_COMPLEX128)
    for (const struct ref_op *op = ref_ops_complex_overloads; op->op != NULL;
         op++)
      if (strcmp(op->op, name) == 0)
        return op;
  return ref_op_find(name);
}
