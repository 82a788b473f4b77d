/* References of the scan kernel family: Cumsum, Cumprod,
 * CumulativeLogsumexp.
 *
 * Each line along the axis is scanned in float64, in order (reversed for
 * reverse), the exclusive output being what the accumulator held before
 * the element. Integers wrap as TensorFlow's do: they are accumulated in
 * unsigned 64-bit arithmetic and truncated to the dtype's width.
 * CumulativeLogsumexp combines as TensorFlow's LogSumExp (lse below): a
 * larger operand of -inf is the result, else log1p(exp(min - max)) + max;
 * its exclusive start is -inf (the CPU kernel's; TensorFlow's GPU kernel
 * starts from the lowest finite value).
 *
 * Tolerances (float32): a sum of n terms in [-3, 3] rounds each partial,
 * partials reaching ~100 on the longest lines (2100 terms): rtol 1e-5,
 * atol 1e-3 (~1e-5 of the partials). Products of up to 12 random factors,
 * or of up to 2100 factors within 1% of 1 (long lines), round once per
 * factor: rtol 5e-5. Log-sum-exp rounds each step at its result's
 * magnitude (up to ~11): rtol 2e-5, atol 2e-4. Integers are exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

enum kind { SUM, PROD, LSE, UNKNOWN };

static enum kind kind_of(const char *op)
{
  if (!strcmp(op, "Cumsum"))
    return SUM;
  if (!strcmp(op, "Cumprod"))
    return PROD;
  if (!strcmp(op, "CumulativeLogsumexp"))
    return LSE;
  return UNKNOWN;
}

static bool is_integer(TF_DataType t) { return t == TF_INT32 || t == TF_INT64; }

/* Released TensorFlow (2.19 to 2.22) takes min and max with Eigen's
 * default comparisons, in which NaN never wins: a NaN element counts as a
 * copy of the accumulator, a NaN accumulator stays NaN. */
static double lse(double acc, double v)
{
  double lo = v < acc ? v : acc, hi = acc < v ? v : acc;
  if (hi == -INFINITY)
    return hi;
  return log1p(exp(lo - hi)) + hi;
}

static double wrap(TF_DataType t, uint64_t v)
{
  return t == TF_INT32 ? (double)(int32_t)(uint32_t)v : (double)(int64_t)v;
}

static int scan_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  enum kind k = kind_of(c->op);
  const struct ref_tensor *x = &c->inputs[0], *axis_t = &c->inputs[1];
  if (axis_t->rank != 0) {
    snprintf(error, (size_t)error_len, "axis not a scalar");
    return -1;
  }
  int64_t axis = (int64_t)axis_t->v[0];
  if (axis < 0)
    axis += x->rank;
  if (axis < 0 || axis >= x->rank) {
    snprintf(error, (size_t)error_len, "axis out of range");
    return -1;
  }
  bool exclusive = ref_case_attr_bool_or(c, "exclusive", false);
  bool reverse = ref_case_attr_bool_or(c, "reverse", false);
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  int64_t len = x->dims[axis], stride = 1;
  for (int d = x->rank - 1; d > axis; d--)
    stride *= x->dims[d];
  /* Every element that starts a line: index 0 along the axis. */
  for (int64_t start = 0; start < x->elements; start++) {
    if ((start / stride) % len != 0)
      continue;
    double acc = k == PROD ? 1.0 : k == LSE ? -INFINITY : 0.0;
    uint64_t iacc = k == PROD ? 1 : 0;
    for (int64_t j = 0; j < len; j++) {
      int64_t at = start + (reverse ? len - 1 - j : j) * stride;
      double v = x->v[at];
      double before = is_integer(x->dtype) ? wrap(x->dtype, iacc) : acc;
      if (is_integer(x->dtype)) {
        uint64_t u = (uint64_t)(int64_t)v;
        iacc = k == PROD ? iacc * u : iacc + u;
      } else {
        acc = k == PROD ? acc * v : k == LSE ? lse(acc, v) : acc + v;
      }
      double after = is_integer(x->dtype) ? wrap(x->dtype, iacc) : acc;
      out[0].v[at] = exclusive ? before : after;
    }
  }
  return 1;
}

/* Shapes, axes and attributes. `short_axis`: the scanned extent is at most
 * 12, so that random products stay finite and exact. */
static const struct scan_shape {
  int rank;
  int64_t dims[4];
  int64_t axis;
  bool exclusive, reverse;
  bool short_axis;
  TF_Code code;
} shapes[] = {
    {1, {7}, 0, false, false, true, TF_OK},
    {1, {7}, 0, true, false, true, TF_OK},
    {1, {7}, 0, false, true, true, TF_OK},
    {1, {7}, 0, true, true, true, TF_OK},
    {2, {3, 5}, 1, false, false, true, TF_OK},
    {2, {3, 5}, 0, true, false, true, TF_OK},
    {2, {3, 5}, -1, false, true, true, TF_OK},
    {2, {3, 5}, -2, true, true, true, TF_OK},
    {3, {2, 3, 7}, 1, false, false, true, TF_OK},
    {3, {2, 3, 7}, 1, true, true, true, TF_OK},
    {3, {2, 3, 7}, 0, false, true, true, TF_OK},
    {3, {2, 3, 7}, 2, true, false, true, TF_OK},
    {4, {2, 3, 4, 5}, 2, false, true, true, TF_OK},
    {2, {1, 1}, 0, true, false, true, TF_OK},
    /* Many short rows, and many columns (whole and partial blocks of 16). */
    {2, {600, 9}, 1, false, false, true, TF_OK},
    {2, {600, 9}, 1, true, true, true, TF_OK},
    {2, {9, 300}, 0, false, true, true, TF_OK},
    {3, {3, 11, 37}, 1, true, false, true, TF_OK},
    /* Long lines: rows beyond a work-group's chunk (GPU shape: carries
     * across chunks), columns walked far. */
    {1, {1031}, 0, false, false, false, TF_OK},
    {2, {3, 1500}, 1, true, false, false, TF_OK},
    {2, {3, 1500}, 1, false, true, false, TF_OK},
    {2, {40, 2100}, -1, true, true, false, TF_OK},
    {2, {1500, 3}, 0, false, false, false, TF_OK},
    {3, {2, 1100, 5}, 1, true, true, false, TF_OK},
    {2, {70, 65}, 1, false, false, false, TF_OK},
    /* Empty. */
    {1, {0}, 0, false, false, true, TF_OK},
    {2, {4, 0}, 1, true, false, true, TF_OK},
    {2, {0, 4}, 1, false, true, true, TF_OK},
    {3, {3, 0, 2}, 0, false, false, true, TF_OK},
    /* Bad axes, and a scalar input (no axis in range). */
    {2, {3, 5}, 2, false, false, true, TF_INVALID_ARGUMENT},
    {2, {3, 5}, -3, false, false, true, TF_INVALID_ARGUMENT},
    {0, {0}, 0, false, false, true, TF_INVALID_ARGUMENT},
    {2, {0, 4}, 5, false, false, true, TF_INVALID_ARGUMENT},
};

/* NaN, infinities and huge values, a row each. */
static const double special_rows[5][4] = {
    {1, NAN, 2, 3},
    {-INFINITY, -1, -INFINITY, 0},
    {INFINITY, -INFINITY, 1, 2},
    {-INFINITY, -INFINITY, -INFINITY, -INFINITY},
    {1e30, 1e30, -1e30, 5e29},
};

static void scan_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  bool prod = kind_of(op->op) == PROD;
  static double near_one[2100 * 40];
  for (int i = 0; i < 2100 * 40; i++)
    near_one[i] = 1.0 + 0.001 * (double)((i * 7919) % 21 - 10);
  int n = 0;
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    const struct scan_shape *s = &shapes[i];
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    int64_t elements = 1;
    for (int d = 0; d < s->rank; d++)
      elements *= s->dims[d];
    if (prod && !s->short_axis && !is_integer(dtype) &&
        elements <= (int64_t)(sizeof(near_one) / sizeof(near_one[0])))
      ref_case_input_values(c, dtype, s->dims, s->rank, near_one);
    else
      ref_case_input(c, dtype, s->dims, s->rank, op->domain);
    double axis = (double)s->axis;
    /* Alternate int32 and int64 axes (Tidx). */
    ref_case_input_values(c, n++ % 2 ? TF_INT64 : TF_INT32, NULL, 0, &axis);
    if (s->exclusive)
      ref_case_attr_bool(c, "exclusive", true);
    if (s->reverse)
      ref_case_attr_bool(c, "reverse", true);
    c->expect_code = s->code;
  }
  struct ref_case *c =
      ref_case_add(out, op->op, "%s axis not scalar", op->op);
  ref_case_input(c, dtype, (int64_t[]){3, 5}, 2, op->domain);
  ref_case_input_values(c, TF_INT32, (int64_t[]){1}, 1, (double[]){0});
  c->expect_code = TF_INVALID_ARGUMENT;
  if (!is_integer(dtype))
    for (int axis = 0; axis < 2; axis++)
      for (int mode = 0; mode < 4; mode++) {
        c = ref_case_add(out, op->op, "%s special values axis %d mode %d",
                         op->op, axis, mode);
        /* Products of the huge row overflow float32, not float64. */
        ref_case_input_values(c, dtype, (int64_t[]){prod ? 4 : 5, 4}, 2,
                              &special_rows[0][0]);
        double a = axis;
        ref_case_input_values(c, TF_INT64, NULL, 0, &a);
        if (mode & 1)
          ref_case_attr_bool(c, "exclusive", true);
        if (mode & 2)
          ref_case_attr_bool(c, "reverse", true);
      }
}

const struct ref_op ref_ops_scan[] = {
    {"Cumsum", 1e-5, 1e-3, REF_ANY, scan_cases, scan_compute},
    {"Cumprod", 5e-5, 1e-30, REF_ANY, scan_cases, scan_compute},
    {"CumulativeLogsumexp", 2e-5, 2e-4, REF_ANY, scan_cases, scan_compute},
    {.op = NULL},
};
