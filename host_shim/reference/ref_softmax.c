/* References of the softmax kernel family: Softmax, LogSoftmax,
 * SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits.
 *
 * The formulas are TensorFlow's (SoftmaxEigenImpl, XentEigenImpl): shift by
 * the row max (NaN-propagating), exp, sum. So a row holding NaN, +Inf or
 * only -Inf is NaN throughout, as in TensorFlow.
 *
 * Tolerances (float32): exp and log of OpenCL are within a few ulp and the
 * row sums accumulate in another order: Softmax rtol 1e-5 atol 1e-7,
 * LogSoftmax rtol 1e-5 atol 2e-6. The losses sum n terms of
 * labels * (log(sum) - shifted) that may cancel (labels in [-3, 3] here, rows
 * of up to 1031 classes): rtol 1e-5 atol 2e-4.
 *
 * SparseSoftmaxCrossEntropyWithLogits: an out-of-range label gives NaN in
 * that row's loss and backprop, as TensorFlow's GPU kernel does (the labels
 * stay in device memory; TensorFlow's CPU kernel fails the op instead). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* Row max (NaN-propagating) and sum(exp(x - max)) of n values at stride. */
static void row_stats(const double *x, int64_t stride, int64_t n, double *max,
                      double *sum)
{
  double m = -INFINITY, s = 0;
  for (int64_t c = 0; c < n; c++) {
    double v = x[c * stride];
    m = (isnan(v) || v > m) ? v : m;
  }
  for (int64_t c = 0; c < n; c++)
    s += exp(x[c * stride] - m);
  *max = m;
  *sum = s;
}

static int softmax_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  bool log_softmax = !strcmp(c->op, "LogSoftmax");
  if (x->rank < 1) {
    snprintf(error, (size_t)error_len, "rank 0");
    return -1;
  }
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  int64_t n = x->dims[x->rank - 1];
  int64_t rows = n == 0 ? 0 : x->elements / n;
  for (int64_t r = 0; r < rows; r++) {
    const double *row = x->v + r * n;
    double m, s;
    row_stats(row, 1, n, &m, &s);
    for (int64_t k = 0; k < n; k++) {
      double v = log_softmax ? (row[k] - m) - log(s) : exp(row[k] - m) / s;
      out[0].v[r * n + k] = ref_round_to(x->dtype, v);
    }
  }
  return 1;
}

static int xent_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *f = &c->inputs[0], *l = &c->inputs[1];
  int64_t dims[REF_MAX_DIMS * 2];
  int rank;
  if (!ref_broadcast_shape(f, l, dims, &rank) || rank != 2) {
    snprintf(error, (size_t)error_len, "not broadcastable to a matrix");
    return -1;
  }
  int64_t rows = dims[0], n = dims[1];
  ref_tensor_alloc(&out[0], f->dtype, dims, 1);
  ref_tensor_alloc(&out[1], f->dtype, dims, 2);
  double *shifted_row = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (shifted_row == NULL) {
    snprintf(error, (size_t)error_len, "out of host memory");
    return -1;
  }
  for (int64_t r = 0; r < rows; r++) {
    double m = -INFINITY, s = 0, loss = 0;
    for (int64_t k = 0; k < n; k++) {
      int64_t fi, li;
      ref_broadcast_index(f, l, dims, 2, r * n + k, &fi, &li);
      shifted_row[k] = f->v[fi];
    }
    row_stats(shifted_row, 1, n, &m, &s);
    for (int64_t k = 0; k < n; k++) {
      int64_t fi, li;
      ref_broadcast_index(f, l, dims, 2, r * n + k, &fi, &li);
      double shifted = f->v[fi] - m, label = l->v[li];
      loss += label * (log(s) - shifted);
      out[1].v[r * n + k] = ref_round_to(f->dtype, exp(shifted) / s - label);
    }
    out[0].v[r] = ref_round_to(f->dtype, loss);
  }
  free(shifted_row);
  return 2;
}

static int sparse_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *f = &c->inputs[0], *l = &c->inputs[1];
  if (f->rank != 2 || l->rank != 1 || f->dims[0] != l->dims[0] ||
      f->dims[1] < 1) {
    snprintf(error, (size_t)error_len, "bad shapes");
    return -1;
  }
  int64_t rows = f->dims[0], n = f->dims[1];
  ref_tensor_alloc(&out[0], f->dtype, f->dims, 1);
  ref_tensor_alloc(&out[1], f->dtype, f->dims, 2);
  for (int64_t r = 0; r < rows; r++) {
    const double *row = f->v + r * n;
    double label = l->v[r], m, s;
    bool valid = label >= 0 && label < (double)n;
    row_stats(row, 1, n, &m, &s);
    out[0].v[r] = valid ? ref_round_to(f->dtype,
                                       log(s) - (row[(int64_t)label] - m))
                        : NAN;
    for (int64_t k = 0; k < n; k++) {
      double g = exp(row[k] - m) / s - (k == (int64_t)label ? 1.0 : 0.0);
      out[1].v[r * n + k] = valid ? ref_round_to(f->dtype, g) : NAN;
    }
  }
  return 2;
}

/* ---- Cases -------------------------------------------------------------- */

static const double special_rows[4][4] = {
    {1, NAN, 2, 3},
    {-INFINITY, -INFINITY, -INFINITY, -INFINITY},
    {INFINITY, 1, 2, 3},
    {1e30, -1e30, 0, 1},
};

/* Rows of 50: past the 16-wide kernels' first vector, where their max
 * loop finds a NaN (col 33), +Inf (col 40) and the max (col 47), and in
 * the scalar tail (a NaN at col 49); one row all -Inf. */
enum { LATE_ROWS = 5, LATE_COLS = 50 };
static const double *late_rows(void)
{
  static double rows[LATE_ROWS][LATE_COLS];
  for (int r = 0; r < LATE_ROWS; r++)
    for (int col = 0; col < LATE_COLS; col++)
      rows[r][col] = r == 1 ? -INFINITY : (double)(col % 13) * 0.25 - 1.5;
  rows[0][33] = NAN;
  rows[2][40] = INFINITY;
  rows[3][49] = NAN;
  rows[4][47] = 30;
  return &rows[0][0];
}

static void softmax_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  static const struct {
    int rank;
    int64_t dims[10];
  } shapes[] = {
      {1, {7}},    {2, {3, 5}},   {3, {2, 3, 7}}, {2, {2, 1031}},
      {2, {4, 200}}, {2, {0, 5}}, {2, {3, 0}},    {2, {1, 1}},
      {2, {3, 32}},
      /* Few long rows: split into parts. */
      {2, {2, 20000}}, {1, {70001}},
      {10, {2, 1, 3, 2, 1, 2, 1, 2, 1, 9}},
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, shapes[i].dims, shapes[i].rank, op->domain);
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){4, 4}, 2, &special_rows[0][0]);
  /* The same rows five times over: long enough for the 16-wide kernel. */
  double wide[4][20];
  for (int r = 0; r < 4; r++)
    for (int col = 0; col < 20; col++)
      wide[r][col] = special_rows[r][col % 4];
  c = ref_case_add(out, op->op, "%s special values [4,20]", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){4, 20}, 2, &wide[0][0]);
  c = ref_case_add(out, op->op, "%s late special values", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){LATE_ROWS, LATE_COLS}, 2,
                        late_rows());
  /* Split rows holding a late NaN, only -Inf, a late +Inf, and -Inf over
   * a whole first part. */
  static double split_rows[4][20000];
  for (int r = 0; r < 4; r++)
    for (int col = 0; col < 20000; col++)
      split_rows[r][col] = r == 1 || (r == 3 && col < 12000)
                               ? -INFINITY
                               : (double)(col % 13) * 0.25 - 1.5;
  split_rows[0][15000] = NAN;
  split_rows[2][17000] = INFINITY;
  c = ref_case_add(out, op->op, "%s special values [4,20000]", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){4, 20000}, 2, &split_rows[0][0]);
  c = ref_case_add(out, op->op, "%s large logits", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){1, 4}, 2,
                        (double[]){1000, 999, 998, -1000});
  c = ref_case_add(out, op->op, "%s scalar", op->op);
  ref_case_input(c, dtype, NULL, 0, op->domain);
  c->expect_code = TF_INVALID_ARGUMENT;
}

static void xent_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  static const struct {
    int f_rank;
    int64_t f[3];
    int l_rank;
    int64_t l[3];
    TF_Code code;
  } shapes[] = {
      {2, {3, 5}, 2, {3, 5}, TF_OK},
      {2, {4, 200}, 2, {4, 200}, TF_OK},
      {2, {2, 1031}, 2, {2, 1031}, TF_OK},
      {2, {2, 20000}, 2, {2, 20000}, TF_OK},
      {2, {3, 5}, 1, {5}, TF_OK},         /* labels broadcast over rows */
      {2, {1, 40}, 2, {3, 40}, TF_OK},    /* features broadcast, long rows */
      {2, {3, 1}, 2, {3, 40}, TF_OK},     /* over long columns */
      {2, {3, 40}, 2, {3, 1}, TF_OK},     /* labels over long columns */
      {2, {1, 5}, 2, {3, 5}, TF_OK},      /* features broadcast */
      {2, {3, 1}, 2, {3, 4}, TF_OK},      /* features broadcast over cols */
      {2, {0, 5}, 2, {0, 5}, TF_OK},
      {2, {3, 0}, 2, {3, 0}, TF_OK},
      {2, {3, 5}, 2, {3, 4}, TF_INVALID_ARGUMENT},
      {3, {2, 3, 5}, 3, {2, 3, 5}, TF_INVALID_ARGUMENT},
      {1, {5}, 1, {5}, TF_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, shapes[i].f, shapes[i].f_rank, op->domain);
    c->label[0] ^= 1; /* labels differ from features */
    ref_case_input(c, dtype, shapes[i].l, shapes[i].l_rank, op->domain);
    c->label[0] ^= 1;
    c->expect_code = shapes[i].code;
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){4, 4}, 2, &special_rows[0][0]);
  c->label[0] ^= 1;
  ref_case_input(c, dtype, (int64_t[]){4, 4}, 2, REF_POSITIVE);
  c->label[0] ^= 1;
  c = ref_case_add(out, op->op, "%s late special values", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){LATE_ROWS, LATE_COLS}, 2,
                        late_rows());
  ref_case_input(c, dtype, (int64_t[]){LATE_ROWS, LATE_COLS}, 2, REF_POSITIVE);
}

static void sparse_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  static const struct {
    int f_rank;
    int64_t f[2];
    int l_rank;
    int64_t l[2];
    TF_Code code;
  } shapes[] = {
      {2, {3, 5}, 1, {3}, TF_OK},
      {2, {4, 200}, 1, {4}, TF_OK},
      {2, {2, 1031}, 1, {2}, TF_OK},
      {2, {3, 20000}, 1, {3}, TF_OK},     /* few long rows: split */
      {2, {1, 50001}, 1, {1}, TF_OK},
      {2, {7, 1}, 1, {7}, TF_OK},
      {2, {0, 5}, 1, {0}, TF_OK},
      {1, {5}, 1, {5}, TF_INVALID_ARGUMENT},
      {2, {3, 5}, 2, {3, 1}, TF_INVALID_ARGUMENT},
      {2, {3, 5}, 1, {4}, TF_INVALID_ARGUMENT},
      {2, {3, 0}, 1, {3}, TF_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, shapes[i].f, shapes[i].f_rank, op->domain);
    int64_t count = 1;
    for (int d = 0; d < shapes[i].l_rank; d++)
      count *= shapes[i].l[d];
    double labels[16];
    int64_t classes = shapes[i].f_rank == 2 ? shapes[i].f[1] : 1;
    for (int64_t k = 0; k < count; k++)
      labels[k] = classes > 0 ? (double)((k * 7 + 3) % classes) : 0;
    ref_case_input_values(c, i % 2 ? TF_INT32 : TF_INT64, shapes[i].l,
                          shapes[i].l_rank, labels);
    c->expect_code = shapes[i].code;
  }
  /* Out-of-range labels: NaN rows (TensorFlow's GPU behaviour), in short,
   * vector-long and split rows. */
  static const int64_t classes[] = {5, 40, 20000};
  for (int n = 0; n < 3; n++)
    for (int wide = 0; wide < 2; wide++) {
      struct ref_case *c = ref_case_add(
          out, op->op, "%s labels out of range %d/%d", op->op, n, wide);
      ref_case_input(c, dtype, (int64_t[]){4, classes[n]}, 2, op->domain);
      ref_case_input_values(c, wide ? TF_INT64 : TF_INT32, (int64_t[]){4}, 1,
                            (double[]){-1, 2, (double)classes[n], 4});
    }
  struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){4, 4}, 2, &special_rows[0][0]);
  ref_case_input_values(c, TF_INT64, (int64_t[]){4}, 1,
                        (double[]){0, 1, 2, 3});
  c = ref_case_add(out, op->op, "%s late special values", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){LATE_ROWS, LATE_COLS}, 2,
                        late_rows());
  ref_case_input_values(c, TF_INT32, (int64_t[]){LATE_ROWS}, 1,
                        (double[]){33, 0, 40, 20, 47});
}

const struct ref_op ref_ops_softmax[] = {
    {"Softmax", 1e-5, 1e-7, REF_ANY, softmax_cases, softmax_compute},
    {"LogSoftmax", 1e-5, 2e-6, REF_ANY, softmax_cases, softmax_compute},
    {"SoftmaxCrossEntropyWithLogits", 1e-5, 2e-4, REF_ANY, xent_cases,
     xent_compute},
    {"SparseSoftmaxCrossEntropyWithLogits", 1e-5, 1e-6, REF_ANY, sparse_cases,
     sparse_compute},
    {.op = NULL},
};

/* On double, float's bounds scaled to double's precision (2^-52 to
 * float's 2^-23): the few ulp of exp and log and the sums' order, the
 * losses' cancellation in absolute terms. */
const struct ref_double_tolerance ref_double_tolerances_softmax[] = {
    {"Softmax", 1e-13, 1e-300},
    {"LogSoftmax", 1e-13, 1e-14},
    {"SoftmaxCrossEntropyWithLogits", 1e-13, 1e-12},
    {"SparseSoftmaxCrossEntropyWithLogits", 1e-13, 1e-14},
    {.op = NULL},
};
