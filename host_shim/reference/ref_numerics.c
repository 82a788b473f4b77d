/* Float64 references of the numerics family (kernels/numerics.c):
 * CheckNumerics and CheckNumericsV2 pass their input through, or fail when
 * it holds NaN or an infinity. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

static int check_numerics_compute(const struct ref_case *c,
                                  struct ref_tensor *out, char *error,
                                  int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  for (int64_t i = 0; i < x->elements; i++) {
    if (!isfinite(x->v[i])) {
      snprintf(error, (size_t)error_len, "element %lld is %g",
               (long long)i, x->v[i]);
      return -1;
    }
  }
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  memcpy(out[0].v, x->v, (size_t)x->elements * sizeof(double));
  return 1;
}

static void check_numerics_cases(const struct ref_op *op, TF_DataType dtype,
                                 struct ref_cases *out)
{
  /* Odd sizes, an empty tensor, a scalar, and one past the kernel's
   * work-group count times its local size (many strides per work-item). */
  static const int64_t shapes[][3] = {{1, 1, 1},  {3, 5, 7},   {0, 4, 1},
                                      {1, 1, 0},  {7, 33, 65}, {3, 97, 131}};
  static const int ranks[] = {0, 3, 2, 3, 3, 3};
  for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s finite #%zu", op->op, s);
    ref_case_attr_string(c, "message", "finite");
    ref_case_input(c, dtype, shapes[s], ranks[s], REF_ANY);
  }
  /* Each kind alone and together, at the first, a middle and the last
   * element: where it lands decides which work-item and group finds it. */
  static const double specials[] = {NAN, INFINITY, -INFINITY};
  for (size_t kind = 0; kind < 3; kind++) {
    for (int where = 0; where < 3; where++) {
      struct ref_case *c = ref_case_add(out, op->op, "%s %g at %d", op->op,
                                        specials[kind], where);
      ref_case_attr_string(c, "message", "a check");
      struct ref_tensor *x = ref_case_input(
          c, dtype, (int64_t[]){3, 97, 131}, 3, REF_ANY);
      int64_t at = where == 0 ? 0 : where == 1 ? x->elements / 3 : x->elements - 1;
      x->v[at] = specials[kind];
      c->expect_code = TF_INVALID_ARGUMENT;
    }
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s every kind", op->op);
  ref_case_attr_string(c, "message", "");
  struct ref_tensor *x = ref_case_input(c, dtype, (int64_t[]){9, 11}, 2, REF_ANY);
  x->v[3] = NAN;
  x->v[50] = INFINITY;
  x->v[98] = -INFINITY;
  c->expect_code = TF_INVALID_ARGUMENT;
  /* Largest finite values and signed zeros are not flagged. */
  static const double edges[] = {-0.0, 0.0, 65504.0, -65504.0, 1e-3, -2.5};
  int64_t n = sizeof(edges) / sizeof(edges[0]);
  c = ref_case_add(out, op->op, "%s finite edges", op->op);
  ref_case_attr_string(c, "message", "edges");
  ref_case_input_values(c, dtype, &n, 1, edges);
}

const struct ref_op ref_ops_numerics[] = {
    {"CheckNumerics", 0.0, 0.0, REF_ANY, check_numerics_cases,
     check_numerics_compute},
    {"CheckNumericsV2", 0.0, 0.0, REF_ANY, check_numerics_cases,
     check_numerics_compute},
    {.op = NULL},
};
