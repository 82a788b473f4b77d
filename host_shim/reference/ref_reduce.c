/* References of the reduce kernel family: Sum, Mean, Prod, Max, Min, All,
 * Any, ArgMax, ArgMin, BiasAddGrad, L2Loss.
 *
 * Tolerances (float32): Sum, Mean, BiasAddGrad and L2Loss add blocks of
 * four terms as a tree and the block sums with Kahan's compensation, then
 * fold lanes, work-items and parts as trees: within about one ulp of the
 * exact sum where the terms share a sign (the accuracy cases: 1000 +
 * [-0.5, 0.5) down columns of up to 50000 rows), hence rtol 2.5e-7 (two
 * ulps); where random terms in [-3, 3] cancel, the tree's partials (up to
 * ~sqrt(n) * 3) round at eps each: atol 2e-4. A sequential float32 sum
 * (these kernels before compensation, ~sqrt(n) ulps: up to 2e-6 relative)
 * fails the accuracy cases; TensorFlow's CPU stays within ~1.5e-6 on them
 * (tests/tf/test_reductions.py compares the two). Prod rounds once
 * per factor (cases multiply at most 14 factors): rtol 2e-6. Max, Min, All,
 * Any, ArgMax, ArgMin and every integer reduction are exact.
 *
 * Semantics checked here: Max/Min propagate NaN (TensorFlow's GPU
 * reductions); ArgMax/ArgMin follow Eigen's pair reducers (TensorFlow's CPU
 * kernel): strictly better than the start value (lowest/highest finite)
 * wins, ties go to the first index, NaN never wins, and a row with no
 * winner gives 0. An empty reduction gives the identity (Sum 0, Prod 1,
 * Max -inf or the integer minimum, Min +inf or the maximum, Mean NaN for
 * floats and 0 for integers, All true, Any false). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

enum kind { SUM, MEAN, PROD, MAX, MIN, ALL, ANY, ARG_MAX, ARG_MIN, BIAS_GRAD,
            L2_LOSS, UNKNOWN };

static enum kind kind_of(const char *op)
{
  static const char *const names[] = {"Sum", "Mean", "Prod", "Max", "Min",
                                      "All", "Any", "ArgMax", "ArgMin",
                                      "BiasAddGrad", "L2Loss"};
  for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
    if (!strcmp(op, names[i]))
      return (enum kind)i;
  return UNKNOWN;
}

static bool is_float(TF_DataType t)
{
  return t == TF_FLOAT || t == TF_HALF || t == TF_DOUBLE;
}

static double lowest(TF_DataType t)
{
  return is_float(t) ? -INFINITY : t == TF_INT32 ? (double)INT32_MIN
                                                 : (double)INT64_MIN;
}

static double highest(TF_DataType t)
{
  return is_float(t) ? INFINITY : t == TF_INT32 ? (double)INT32_MAX
                                                : (double)INT64_MAX;
}

static double identity(enum kind k, TF_DataType t)
{
  switch (k) {
  case PROD: case ALL: return 1;
  case MAX: return lowest(t);
  case MIN: return highest(t);
  case MEAN: return is_float(t) ? NAN : 0;
  default: return 0;
  }
}

static double combine(enum kind k, TF_DataType t, double acc, double v)
{
  switch (k) {
  case PROD: return acc * v;
  case MAX: return (isnan(v) || v > acc) ? v : acc;
  case MIN: return (isnan(v) || v < acc) ? v : acc;
  case ALL: return acc != 0 && v != 0;
  case ANY: return acc != 0 || v != 0;
  case L2_LOSS: return acc + v * v;
  default:
    (void)t;
    return acc + v;
  }
}

/* Reduces x over the axes marked in `reduce`. */
static void reduce_over(enum kind k, const struct ref_tensor *x,
                        const bool *reduce, bool keep_dims,
                        struct ref_tensor *out)
{
  int64_t out_dims[REF_MAX_DIMS];
  int out_rank = 0;
  int64_t count = 1;
  for (int d = 0; d < x->rank; d++) {
    if (!reduce[d])
      out_dims[out_rank++] = x->dims[d];
    else {
      count *= x->dims[d];
      if (keep_dims)
        out_dims[out_rank++] = 1;
    }
  }
  ref_tensor_alloc(out, x->dtype, out_dims, out_rank);
  bool *started = calloc((size_t)(out->elements > 0 ? out->elements : 1), 1);
  if (started == NULL)
    abort();
  for (int64_t o = 0; o < out->elements; o++)
    out->v[o] = identity(k == MEAN ? SUM : k, x->dtype);
  for (int64_t i = 0; i < x->elements; i++) {
    int64_t rem = i, o = 0, scale = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
      int64_t coord = rem % x->dims[d];
      rem /= x->dims[d];
      if (!reduce[d]) {
        o += coord * scale;
        scale *= x->dims[d];
      }
    }
    double v = x->v[i];
    /* Start from the first element, as the device does. */
    if (!started[o]) {
      started[o] = true;
      out->v[o] = k == L2_LOSS ? v * v : v;
    } else {
      out->v[o] = combine(k, x->dtype, out->v[o], v);
    }
  }
  for (int64_t o = 0; o < out->elements; o++) {
    double v = out->v[o];
    if (k == MEAN) {
      if (is_float(x->dtype))
        v = v / (double)count;
      else
        v = count == 0 ? 0 : trunc(ref_round_to(x->dtype, v) / (double)count);
    } else if (k == L2_LOSS) {
      v = v / 2;
    }
    /* INT64_MAX is 2^63 in float64: no int64 rounding for it. */
    out->v[o] = x->dtype == TF_INT64 && v >= 9.2e18 ? v
                                                     : ref_round_to(x->dtype, v);
  }
  free(started);
}

static int read_axes(const struct ref_case *c, int rank, bool *reduce,
                     char *error, int error_len)
{
  const struct ref_tensor *axes = &c->inputs[1];
  for (int64_t i = 0; i < axes->elements; i++) {
    int64_t a = (int64_t)axes->v[i];
    if (a < -rank || a >= rank) {
      snprintf(error, (size_t)error_len, "axis %lld out of range",
               (long long)a);
      return -1;
    }
    if (reduce[a < 0 ? a + rank : a]) {
      snprintf(error, (size_t)error_len, "axis %lld repeated", (long long)a);
      return -1;
    }
    reduce[a < 0 ? a + rank : a] = true;
  }
  return 0;
}

static int reduce_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  enum kind k = kind_of(c->op);
  const struct ref_tensor *x = &c->inputs[0];
  bool reduce[REF_MAX_DIMS] = {false};
  bool keep_dims = ref_case_attr_bool_or(c, "keep_dims", false);

  if (k == BIAS_GRAD) {
    bool nchw = !strcmp(ref_case_attr_string_or(c, "data_format", "NHWC"),
                        "NCHW");
    if (x->rank < 2) {
      snprintf(error, (size_t)error_len, "rank < 2");
      return -1;
    }
    int channel = nchw ? 1 : x->rank - 1;
    for (int d = 0; d < x->rank; d++)
      reduce[d] = d != channel;
    reduce_over(SUM, x, reduce, false, &out[0]);
    return 1;
  }
  if (k == L2_LOSS) {
    for (int d = 0; d < x->rank; d++)
      reduce[d] = true;
    reduce_over(L2_LOSS, x, reduce, false, &out[0]);
    return 1;
  }
  if (read_axes(c, x->rank, reduce, error, error_len) < 0)
    return -1;
  reduce_over(k, x, reduce, keep_dims, &out[0]);
  return 1;
}

static int arg_compute(const struct ref_case *c, struct ref_tensor *out,
                       char *error, int error_len)
{
  bool is_max = kind_of(c->op) == ARG_MAX;
  const struct ref_tensor *x = &c->inputs[0], *dim = &c->inputs[1];
  if (dim->rank != 0) {
    snprintf(error, (size_t)error_len, "dimension not a scalar");
    return -1;
  }
  int64_t axis = (int64_t)dim->v[0];
  if (axis < 0)
    axis += x->rank;
  if (axis < 0 || axis >= x->rank || x->dims[axis] == 0) {
    snprintf(error, (size_t)error_len, "bad or empty axis");
    return -1;
  }
  if (x->rank > 7 && x->elements / x->dims[axis] > 0) {
    snprintf(error, (size_t)error_len, "rank above 7");
    return -1;
  }
  TF_DataType index_type = TF_INT64;
  const struct tfocl_attr *a = ref_case_attr(c, "output_type");
  if (a != NULL)
    index_type = a->value.type;
  int64_t out_dims[REF_MAX_DIMS];
  int out_rank = 0;
  int64_t outer = 1, inner = 1, n = x->dims[axis];
  for (int d = 0; d < x->rank; d++) {
    if (d != axis)
      out_dims[out_rank++] = x->dims[d];
    if (d < axis)
      outer *= x->dims[d];
    if (d > axis)
      inner *= x->dims[d];
  }
  ref_tensor_alloc(&out[0], index_type, out_dims, out_rank);
  /* Eigen's start values: the lowest/highest finite value of the type. */
  double start;
  switch (x->dtype) {
  case TF_FLOAT: start = 3.4028234663852886e38; break;
  case TF_HALF: start = 65504.0; break;
  case TF_DOUBLE: start = DBL_MAX; break;
  case TF_INT32: start = INT32_MAX; break;
  default: start = (double)INT64_MAX; break;
  }
  if (is_max)
    start = x->dtype == TF_INT32 ? (double)INT32_MIN
            : x->dtype == TF_INT64 ? (double)INT64_MIN : -start;
  for (int64_t o = 0; o < outer * inner; o++) {
    int64_t base = (o / inner) * n * inner + o % inner, index = 0;
    double best = start;
    for (int64_t r = 0; r < n; r++) {
      double v = x->v[base + r * inner];
      if (is_max ? v > best : v < best) {
        best = v;
        index = r;
      }
    }
    out[0].v[o] = (double)index;
  }
  return 1;
}

/* ---- Cases -------------------------------------------------------------- */

struct reduce_shape {
  int rank;
  int64_t dims[4];
  int num_axes;
  int64_t axes[3];
  bool keep_dims;
  TF_Code code;
};

static const struct reduce_shape reduce_shapes[] = {
    {2, {3, 5}, 1, {1}, false, TF_OK},
    {2, {3, 5}, 1, {0}, true, TF_OK},
    {3, {2, 3, 7}, 2, {0, 2}, false, TF_OK}, /* general form */
    {3, {2, 3, 7}, 1, {-1}, true, TF_OK},
    {3, {2, 3, 7}, 3, {1, 2, -2}, false, TF_INVALID_ARGUMENT}, /* repeat */
    {3, {2, 3, 7}, 3, {0, 1, 2}, false, TF_OK},                /* to a scalar */
    {4, {2, 3, 4, 5}, 2, {1, 3}, true, TF_OK}, /* general form */
    {1, {1031}, 1, {0}, false, TF_OK},         /* one long row */
    {2, {3, 300}, 1, {1}, false, TF_OK},       /* long rows */
    {2, {300, 5}, 1, {0}, false, TF_OK},       /* long columns */
    {2, {37, 45}, 1, {0}, false, TF_OK},       /* wide: 16-runs, tail */
    {2, {37, 150}, 1, {0}, false, TF_OK},      /* 64-runs, 16, tail */
    {3, {3, 40, 70}, 1, {1}, true, TF_OK},     /* a 64-run per outer */
    {2, {3000, 100}, 1, {0}, false, TF_OK},    /* 64-runs split */
    {3, {2, 33, 20}, 1, {1}, true, TF_OK},     /* [outer, reduce, inner] */
    {2, {3, 20000}, 1, {1}, false, TF_OK},     /* few long rows: split */
    {1, {50000}, 1, {0}, false, TF_OK},        /* to a scalar: split */
    {2, {700, 21}, 1, {0}, false, TF_OK},      /* few column runs: split */
    {2, {4, 5}, 0, {0}, false, TF_OK},         /* no axes: a copy */
    {3, {4, 1, 5}, 1, {1}, false, TF_OK},      /* size-1 axis: a copy */
    {0, {0}, 0, {0}, false, TF_OK},            /* scalar */
    {2, {0, 4}, 1, {0}, false, TF_OK},         /* empty: the identity */
    {2, {0, 4}, 1, {1}, true, TF_OK},          /* empty output */
    {2, {3, 5}, 1, {2}, false, TF_INVALID_ARGUMENT},
    {2, {3, 5}, 1, {-3}, false, TF_INVALID_ARGUMENT},
};

/* Prod multiplies at most 14 factors, so that float64 stays exact for the
 * integer types and the products stay finite. */
static const struct reduce_shape prod_shapes[] = {
    {2, {3, 5}, 1, {1}, false, TF_OK},
    {2, {5, 3}, 1, {0}, true, TF_OK},
    {3, {2, 3, 7}, 2, {0, 2}, false, TF_OK},
    {3, {2, 3, 7}, 1, {-1}, false, TF_OK},
    {2, {200, 3}, 1, {1}, false, TF_OK},
    {2, {5, 40}, 1, {0}, false, TF_OK},
    {2, {4, 5}, 0, {0}, false, TF_OK},
    {0, {0}, 0, {0}, false, TF_OK},
    {2, {0, 4}, 1, {0}, false, TF_OK},
    {2, {3, 5}, 1, {2}, false, TF_INVALID_ARGUMENT},
};

/* NaN, infinities, signed zeros and huge values, a row each. */
static const double special_rows[5][4] = {
    {1, NAN, 2, 3},
    {-INFINITY, -1, -INFINITY, 0},
    {INFINITY, -INFINITY, 1, 2},
    {-0.0, -0.0, -0.0, -0.0},
    {1e30, 1e30, -1e30, 5e29},
};

static void add_shapes(const struct ref_op *op, TF_DataType dtype,
                       const struct reduce_shape *shapes, size_t count,
                       struct ref_cases *out)
{
  TF_DataType value_type = dtype == TF_BOOL ? TF_BOOL : dtype;
  for (size_t i = 0; i < count; i++) {
    const struct reduce_shape *s = &shapes[i];
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, value_type, s->dims, s->rank, op->domain);
    double axes[3];
    for (int a = 0; a < s->num_axes; a++)
      axes[a] = (double)s->axes[a];
    int64_t n = s->num_axes;
    /* Alternate int32 and int64 axes (Tidx). */
    ref_case_input_values(c, i % 2 ? TF_INT64 : TF_INT32, &n, 1, axes);
    if (s->keep_dims)
      ref_case_attr_bool(c, "keep_dims", true);
    c->expect_code = s->code;
  }
  if (is_float(dtype)) {
    /* [5, 4] as is, and [5, 20] (its columns five times over): rows and
     * columns long enough for the 16-wide kernels of CPU devices. */
    double wide[5][20];
    for (int r = 0; r < 5; r++)
      for (int col = 0; col < 20; col++)
        wide[r][col] = special_rows[r][col % 4];
    for (int w = 0; w < 2; w++) {
      for (int axis = 0; axis < 2; axis++) {
        struct ref_case *c = ref_case_add(out, op->op,
                                          "%s special values [5,%d] axis %d",
                                          op->op, w ? 20 : 4, axis);
        ref_case_input_values(c, dtype, (int64_t[]){5, w ? 20 : 4}, 2,
                              w ? &wide[0][0] : &special_rows[0][0]);
        double a = axis;
        ref_case_input_values(c, TF_INT32, NULL, 0, &a);
      }
    }
    /* One NaN late in a long row: it must survive a split reduction. */
    static double late_nan[9000];
    for (int i = 0; i < 9000; i++)
      late_nan[i] = i == 8000 ? NAN : (double)(i % 7) - 3.0;
    struct ref_case *c =
        ref_case_add(out, op->op, "%s NaN at 8000 of [9000]", op->op);
    ref_case_input_values(c, dtype, (int64_t[]){9000}, 1, late_nan);
    double a = 0;
    ref_case_input_values(c, TF_INT32, NULL, 0, &a);
  }
}

/* Ranks above 8 (TensorFlow takes up to 254): collapsed, these alternate
 * up to 12 kept and reduced groups, more than a kernel's argument struct
 * holds, so the device reduces them one group per pass. Prod's (the last
 * three) multiply at most 12 factors. */
static const struct {
  int rank;
  int64_t dims[12];
  int num_axes;
  int64_t axes[12];
  bool keep_dims;
} rank_shapes[] = {
    {9, {2, 3, 2, 3, 2, 3, 2, 3, 2}, 4, {1, 3, 5, 7}, false},
    {10, {3, 2, 2, 3, 2, 2, 3, 2, 2, 3}, 5, {0, 2, 4, 6, 8}, false},
    {11, {2, 2, 3, 2, 2, 3, 2, 2, 3, 2, 2}, 5, {1, 2, 5, 8, 9}, true},
    {12, {2, 1, 3, 2, 1, 3, 2, 2, 3, 1, 2, 3}, 6, {0, -9, 4, 6, -4, 11}, false},
    {10, {2, 3, 2, 3, 2, 3, 2, 3, 2, 3}, 0, {0}, false},
    {10, {2, 3, 2, 3, 2, 3, 2, 3, 2, 3}, 1, {6}, true},
    {10, {2, 1, 2, 1, 2, 1, 2, 1, 2, 7}, 10, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
     false},
    /* Several groups, one of them long: passes that split into parts. */
    {3, {3, 2, 9000}, 2, {0, 2}, false},
    {4, {3, 5000, 2, 7}, 2, {1, 3}, true},
    {2, {40000, 3}, 1, {0}, false},
    {9, {2, 3, 1, 2, 3, 1, 2, 1, 2}, 4, {0, 2, 4, 7}, false},
    {10, {2, 2, 3, 1, 2, 3, 1, 2, 1, 3}, 3, {1, 4, 7}, false},
    {12, {1, 2, 1, 2, 1, 2, 1, 2, 1, 3, 1, 2}, 6, {0, 3, 5, 6, 8, 11}, true},
};
#define RANK_SHAPES ((int)(sizeof(rank_shapes) / sizeof(rank_shapes[0])))
#define PROD_RANK_SHAPES 3

static void add_rank_shapes(const struct ref_op *op, TF_DataType dtype,
                            struct ref_cases *out)
{
  bool prod = kind_of(op->op) == PROD;
  for (int i = prod ? RANK_SHAPES - PROD_RANK_SHAPES : 0; i < RANK_SHAPES;
       i++) {
    if (!prod && i >= RANK_SHAPES - PROD_RANK_SHAPES)
      break;
    struct ref_case *c =
        ref_case_add(out, op->op, "%s rank %d#%d", op->op, rank_shapes[i].rank, i);
    ref_case_input(c, dtype, rank_shapes[i].dims, rank_shapes[i].rank,
                   op->domain);
    double axes[12];
    for (int a = 0; a < rank_shapes[i].num_axes; a++)
      axes[a] = (double)rank_shapes[i].axes[a];
    int64_t n = rank_shapes[i].num_axes;
    ref_case_input_values(c, i % 2 ? TF_INT64 : TF_INT32, &n, 1, axes);
    if (rank_shapes[i].keep_dims)
      ref_case_attr_bool(c, "keep_dims", true);
  }
}

/* Accuracy of float32 sums: values of large mean and small spread (1000 +
 * [-0.5, 0.5)), so that the sum's rounding error is relative to the sum
 * itself. A sequential float32 sum of n such terms drifts by about
 * sqrt(n) ulps of the sum (a column of 100000 rows: ~2e-6 relative), more
 * than the tolerance of these ops allows (module comment); TensorFlow's
 * CPU (Eigen's tree reductions) stays within ~1e-6. Columns (the mean of
 * 32 rows, 1000 to 50000 rows, narrow and wide), rows, and everything to
 * one value, each through its own kernel shape; sized for Oclgrind's
 * ops-oclgrind run too. */
static const struct {
  int rank;
  int64_t dims[2];
  int64_t axis;
} accuracy_shapes[] = {
    {2, {32, 300}, 0},   {2, {1000, 37}, 0}, {2, {30000, 20}, 0},
    {2, {50000, 3}, 0},  {2, {8, 50000}, 1}, {1, {100000}, 0},
};

static void add_accuracy_cases(const struct ref_op *op, struct ref_cases *out)
{
  for (size_t i = 0; i < sizeof(accuracy_shapes) / sizeof(accuracy_shapes[0]);
       i++) {
    if (kind_of(op->op) == BIAS_GRAD &&
        (accuracy_shapes[i].rank != 2 || accuracy_shapes[i].axis != 0))
      continue;
    int64_t n = accuracy_shapes[i].dims[0] *
                (accuracy_shapes[i].rank > 1 ? accuracy_shapes[i].dims[1] : 1);
    double *values = malloc(sizeof(double) * (size_t)n);
    if (values == NULL)
      abort(); /* test code: out of memory is fatal here */
    uint64_t state = 0x9e3779b97f4a7c15ull + i;
    for (int64_t e = 0; e < n; e++) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      values[e] = 1000.0 + (double)(state >> 11) / 9007199254740992.0 - 0.5;
    }
    struct ref_case *c = ref_case_add(out, op->op, "%s accuracy #%zu [%lld,%lld]",
                                      op->op, i, (long long)accuracy_shapes[i].dims[0],
                                      (long long)(accuracy_shapes[i].rank > 1
                                                      ? accuracy_shapes[i].dims[1]
                                                      : 1));
    ref_case_input_values(c, TF_FLOAT, accuracy_shapes[i].dims,
                          accuracy_shapes[i].rank, values);
    free(values);
    if (kind_of(op->op) == BIAS_GRAD)
      continue; /* BiasAddGrad's axes: all but the last */
    double axis = (double)accuracy_shapes[i].axis;
    ref_case_input_values(c, TF_INT32, NULL, 0, &axis);
  }
}

static void reduce_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  if (dtype == TF_FLOAT && (kind_of(op->op) == SUM || kind_of(op->op) == MEAN))
    add_accuracy_cases(op, out);
  if (kind_of(op->op) == PROD)
    add_shapes(op, dtype, prod_shapes,
               sizeof(prod_shapes) / sizeof(prod_shapes[0]), out);
  else
    add_shapes(op, dtype, reduce_shapes,
               sizeof(reduce_shapes) / sizeof(reduce_shapes[0]), out);
  add_rank_shapes(op, dtype, out);
}

static void arg_cases(const struct ref_op *op, TF_DataType dtype,
                      struct ref_cases *out)
{
  static const struct {
    int rank;
    int64_t dims[10];
    int64_t axis;
    TF_Code code;
  } shapes[] = {
      {2, {3, 5}, 1, TF_OK},        {2, {3, 5}, 0, TF_OK},
      {3, {2, 3, 7}, -2, TF_OK},    {1, {1031}, 0, TF_OK},
      {2, {3, 300}, 1, TF_OK},      {2, {300, 5}, 0, TF_OK},
      {2, {0, 3}, 1, TF_OK},        {3, {4, 1, 5}, 1, TF_OK},
      /* Long rows and columns into few outputs: split into parts. */
      {2, {3, 30000}, 1, TF_OK},    {2, {20000, 5}, 0, TF_OK},
      {2, {9000, 37}, 0, TF_OK},    {1, {70001}, 0, TF_OK},
      /* TensorFlow's ArgMax stops at rank 7, unless the output is
       * empty. */
      {7, {2, 3, 2, 3, 2, 3, 17}, -1, TF_OK},
      {9, {2, 1, 3, 2, 0, 3, 1, 2, 17}, -1, TF_OK},
      {10, {2, 3, 1, 2, 3, 2, 1, 3, 2, 2}, 5, TF_INVALID_ARGUMENT},
      {2, {0, 3}, 0, TF_INVALID_ARGUMENT},
      {2, {3, 5}, 2, TF_INVALID_ARGUMENT},
      {0, {0}, 0, TF_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, shapes[i].dims, shapes[i].rank, op->domain);
    double axis = (double)shapes[i].axis;
    ref_case_input_values(c, i % 2 ? TF_INT64 : TF_INT32, NULL, 0, &axis);
    if (i % 3 == 1)
      ref_case_attr_type(c, "output_type", TF_INT32);
    c->expect_code = shapes[i].code;
  }
  /* Ties go to the first index, in a short and in a long row, and across
   * the parts of a split one. */
  static double ties[20000];
  for (int i = 0; i < 20000; i++)
    ties[i] = (i % 7 == 3) ? 5 : (i % 7 == 4) ? -5 : (double)(i % 3);
  static const int64_t tie_lengths[] = {7, 260, 20000};
  for (int i = 0; i < 3; i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s ties %d", op->op, i);
    ref_case_input_values(c, dtype, &tie_lengths[i], 1, ties);
    double axis = 0;
    ref_case_input_values(c, TF_INT32, NULL, 0, &axis);
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s dimension not scalar",
                                    op->op);
  ref_case_input(c, dtype, (int64_t[]){3, 5}, 2, op->domain);
  ref_case_input_values(c, TF_INT32, (int64_t[]){1}, 1, (double[]){0});
  c->expect_code = TF_INVALID_ARGUMENT;
  if (is_float(dtype)) {
    for (int axis = 0; axis < 2; axis++) {
      c = ref_case_add(out, op->op, "%s special values axis %d", op->op, axis);
      ref_case_input_values(c, dtype, (int64_t[]){5, 4}, 2, &special_rows[0][0]);
      double a = axis;
      ref_case_input_values(c, TF_INT32, NULL, 0, &a);
    }
  }
}

static void bias_grad_cases(const struct ref_op *op, TF_DataType dtype,
                            struct ref_cases *out)
{
  static const struct {
    int rank;
    int64_t dims[10];
    const char *format;
    TF_Code code;
  } shapes[] = {
      {2, {5, 3}, NULL, TF_OK},
      {10, {2, 3, 2, 1, 3, 2, 2, 1, 2, 3}, "NCHW", TF_OK},
      {10, {2, 3, 2, 1, 3, 2, 2, 1, 2, 3}, "NHWC", TF_OK},
      {3, {4, 5, 9000}, "NCHW", TF_OK},
      {4, {2, 3, 5, 7}, "NHWC", TF_OK},
      {4, {2, 7, 3, 5}, "NCHW", TF_OK},
      {2, {300, 4}, NULL, TF_OK},
      {3, {2, 4, 150}, "NCHW", TF_OK},
      {2, {0, 4}, NULL, TF_OK},
      {1, {3}, NULL, TF_INVALID_ARGUMENT},
  };
  if (dtype == TF_FLOAT)
    add_accuracy_cases(op, out);
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, shapes[i].dims, shapes[i].rank, op->domain);
    if (shapes[i].format != NULL)
      ref_case_attr_string(c, "data_format", shapes[i].format);
    c->expect_code = shapes[i].code;
  }
}

static void l2_loss_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  ref_cases_unary(op, dtype, out);
  struct ref_case *c = ref_case_add(out, op->op, "%s rank 10", op->op);
  ref_case_input(c, dtype, (int64_t[]){2, 3, 1, 2, 3, 2, 1, 3, 2, 2}, 10,
                 op->domain);
}

#define EXACT 0.0, 0.0
#define SUMMED 2.5e-7, 2e-4

const struct ref_op ref_ops_reduce[] = {
    {"Sum", SUMMED, REF_ANY, reduce_cases, reduce_compute},
    {"Mean", SUMMED, REF_ANY, reduce_cases, reduce_compute},
    {"Prod", 2e-6, 1e-30, REF_ANY, reduce_cases, reduce_compute},
    {"Max", EXACT, REF_ANY, reduce_cases, reduce_compute},
    {"Min", EXACT, REF_ANY, reduce_cases, reduce_compute},
    {"All", EXACT, REF_BOOL, reduce_cases, reduce_compute},
    {"Any", EXACT, REF_BOOL, reduce_cases, reduce_compute},
    {"ArgMax", EXACT, REF_ANY, arg_cases, arg_compute},
    {"ArgMin", EXACT, REF_ANY, arg_cases, arg_compute},
    {"BiasAddGrad", SUMMED, REF_ANY, bias_grad_cases, reduce_compute},
    {"L2Loss", SUMMED, REF_ANY, l2_loss_cases, reduce_compute},
    {.op = NULL},
};

/* On double: the device's compensated sums are nearer the exact sum than
 * this reference's plain float64 one, whose error is what the bound
 * covers (n * 2^-53 * sum |x|: 2e-12 for 9000 terms of [-3, 3], and a
 * relative bound for the large sums); Prod is a rounding per factor. */
#define SUMMED_DOUBLE 1e-13, 1e-11

const struct ref_double_tolerance ref_double_tolerances_reduce[] = {
    {"Sum", SUMMED_DOUBLE},
    {"Mean", SUMMED_DOUBLE},
    {"Prod", 1e-13, 1e-300},
    {"Max", EXACT},
    {"Min", EXACT},
    {"ArgMax", EXACT},
    {"ArgMin", EXACT},
    {"BiasAddGrad", SUMMED_DOUBLE},
    {"L2Loss", SUMMED_DOUBLE},
    {.op = NULL},
};
