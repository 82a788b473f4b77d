/* References of the select family.
 *
 * InTopKV2: whether fewer than k classes are strictly more probable than
 * the target (ties at the boundary in), false for a target out of range or
 * a row with a non-finite prediction, as TensorFlow's kernels. Exact.
 *
 * Where: the coordinates of the nonzero elements in row-major order, int64
 * [count, rank] (-0 is zero, NaN is not). Exact.
 *
 * TopKV2: each row's k largest values, the
 * largest first and the lower index first among equal values (-0 equal to
 * +0), with NaN above every number as TensorFlow's GPU kernel orders them;
 * the indices as int32. Exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

static const double *row_values; /* for the comparison below */

/* Larger first, NaN largest, then the lower index. */
static int by_rank(const void *pa, const void *pb)
{
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  double x = row_values[a], y = row_values[b];
  bool xn = isnan(x), yn = isnan(y);
  if (xn != yn)
    return xn ? -1 : 1;
  if (!xn && x != y)
    return x > y ? -1 : 1;
  return a < b ? -1 : a > b;
}

static int topk_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *kt = &c->inputs[1];
  if (kt->rank != 0 || x->rank < 1) {
    snprintf(error, (size_t)error_len, "k must be a scalar, input >= 1-D");
    return -1;
  }
  int64_t k = (int64_t)kt->v[0], n = x->dims[x->rank - 1];
  if (k < 0 || k > n) {
    snprintf(error, (size_t)error_len, "k out of [0, n]");
    return -1;
  }
  int64_t dims[REF_MAX_DIMS];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  dims[x->rank - 1] = k;
  ref_tensor_alloc(&out[0], x->dtype, dims, x->rank);
  ref_tensor_alloc(&out[1], TF_INT32, dims, x->rank);
  int64_t rows = n > 0 ? x->elements / n : 0;
  int64_t *order = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (order == NULL) {
    snprintf(error, (size_t)error_len, "out of memory");
    return -1;
  }
  for (int64_t r = 0; r < rows; r++) {
    row_values = x->v + r * n;
    for (int64_t j = 0; j < n; j++)
      order[j] = j;
    qsort(order, (size_t)n, sizeof(int64_t), by_rank);
    for (int64_t i = 0; i < k; i++) {
      out[0].v[r * k + i] = row_values[order[i]];
      out[1].v[r * k + i] = (double)order[i];
    }
  }
  free(order);
  return 2;
}

static void topk_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  static const struct {
    int rank;
    int64_t dims[3];
    int64_t k;
    bool ties; /* few distinct values: many equal ones */
  } shapes[] = {
      {1, {10}, 3, false},       {2, {4, 7}, 1, false},
      {2, {5, 33}, 16, true},    {2, {5, 33}, 17, false},
      {2, {3, 100}, 100, true},  /* tf.sort: k = n */
      {3, {2, 3, 41}, 5, false}, {2, {300, 37}, 4, true},
      /* Longer than a work-group's chunk: the global bitonic steps. */
      {2, {2, 2000}, 2000, true}, {1, {1500}, 50, false},
      {2, {3, 1}, 1, false},     {2, {3, 6}, 0, false},
      {2, {0, 6}, 2, false},     {2, {4, 0}, 0, false},
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu k=%lld",
                                      op->op, i, (long long)shapes[i].k);
    struct ref_tensor *x = ref_case_input(c, dtype, shapes[i].dims,
                                          shapes[i].rank, REF_ANY);
    if (shapes[i].ties)
      for (int64_t e = 0; e < x->elements; e++)
        x->v[e] = round(x->v[e]);
    double k = (double)shapes[i].k;
    ref_case_input_values(c, TF_INT32, NULL, 0, &k);
  }
  if (dtype != TF_INT32) {
    static const double specials[] = {0.0,  -0.0, NAN,       1.0, -INFINITY,
                                      INFINITY, 1.0, -0.0, NAN, -1.0};
    int64_t n = sizeof(specials) / sizeof(specials[0]);
    struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
    ref_case_input_values(c, dtype, &n, 1, specials);
    double k = (double)n;
    ref_case_input_values(c, TF_INT32, NULL, 0, &k);
  }
  static const struct {
    int rank;
    int64_t k;
  } bad[] = {{2, -1}, {2, 8}, {0, 1}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s bad#%zu", op->op, i);
    ref_case_input(c, dtype, (int64_t[]){3, 7}, bad[i].rank, REF_ANY);
    double k = (double)bad[i].k;
    ref_case_input_values(c, TF_INT32, NULL, 0, &k);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

static int where_compute(const struct ref_case *c, struct ref_tensor *out,
                         char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  int lanes = ref_lanes(x->dtype);
  if (x->rank < 1 || x->rank > 8) {
    snprintf(error, (size_t)error_len, "ranks 1 to 8 only");
    return -1;
  }
  int64_t count = 0;
  for (int64_t e = 0; e < x->elements; e++)
    count += x->v[e * lanes] != 0 || (lanes == 2 && x->v[e * lanes + 1] != 0);
  ref_tensor_alloc(&out[0], TF_INT64, (int64_t[]){count, x->rank}, 2);
  int64_t at = 0;
  for (int64_t e = 0; e < x->elements; e++) {
    if (!(x->v[e * lanes] != 0 || (lanes == 2 && x->v[e * lanes + 1] != 0)))
      continue;
    int64_t rem = e;
    for (int d = x->rank - 1; d >= 0; d--) {
      out[0].v[at * x->rank + d] = (double)(rem % x->dims[d]);
      rem /= x->dims[d];
    }
    at++;
  }
  return 1;
}

static void where_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  static const struct {
    int rank;
    int64_t dims[4];
    double density; /* the share of true elements */
  } shapes[] = {
      {1, {10}, 0.5},           {2, {7, 13}, 0.3},     {3, {4, 5, 6}, 0.9},
      {4, {2, 3, 4, 5}, 0.1},   {1, {20011}, 0.5},     {2, {100, 257}, 0.02},
      {1, {5000}, 0.0},         {1, {4097}, 1.0},      {2, {0, 5}, 0.5},
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    struct ref_tensor *x = ref_case_input(c, dtype, shapes[i].dims,
                                          shapes[i].rank, REF_ANY);
    /* A deterministic pattern of the case's density; true elements keep
     * the generated value (never 0: REF_ANY's integers may be). */
    uint64_t state = 0x2545f4914f6cdd1dull + i;
    for (int64_t e = 0; e < x->elements; e++) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      bool on = (double)(state >> 11) / 9007199254740992.0 < shapes[i].density;
      x->v[e] = on ? (x->v[e] != 0 ? x->v[e] : 1) : 0;
      if (dtype == TF_BOOL)
        x->v[e] = on;
    }
  }
  /* A scalar: TensorFlow's kernels take ranks 1 to 8 only. */
  struct ref_case *bad = ref_case_add(out, op->op, "%s scalar", op->op);
  ref_case_input_values(bad, dtype, NULL, 0, (double[]){1});
  bad->expect_code = TF_INVALID_ARGUMENT;
  if (dtype == TF_FLOAT) {
    /* No subnormals: devices may flush them (OpenCL makes float denormals
     * optional). */
    static const double specials[] = {0.0, -0.0, NAN, 1e-30, -INFINITY,
                                      0.0, 5.0,  -0.0, 1e-37};
    int64_t n = sizeof(specials) / sizeof(specials[0]);
    struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
    ref_case_input_values(c, dtype, &n, 1, specials);
  }
}

/* InTopKV2: fewer than k classes strictly more probable than the target;
 * false for a target out of range or a row with a non-finite prediction. */
static int in_top_k_compute(const struct ref_case *c, struct ref_tensor *out,
                            char *error, int error_len)
{
  const struct ref_tensor *p = &c->inputs[0], *t = &c->inputs[1],
                          *kt = &c->inputs[2];
  if (kt->rank != 0 || p->rank != 2 || t->rank != 1 ||
      p->dims[0] != t->dims[0]) {
    snprintf(error, (size_t)error_len, "bad shapes");
    return -1;
  }
  int64_t rows = p->dims[0], classes = p->dims[1];
  double k = kt->v[0];
  ref_tensor_alloc(&out[0], TF_BOOL, &rows, 1);
  for (int64_t r = 0; r < rows; r++) {
    const double *row = p->v + r * classes;
    double target = t->v[r];
    bool ok = target >= 0 && target < (double)classes &&
              isfinite(row[(int64_t)target]);
    int64_t more = 0;
    for (int64_t i = 0; ok && i < classes; i++) {
      if (!isfinite(row[i]))
        ok = false;
      else if (row[i] > row[(int64_t)target])
        more++;
    }
    out[0].v[r] = ok && (double)more < k;
  }
  return 1;
}

static void in_top_k_cases(const struct ref_op *op, TF_DataType dtype,
                           struct ref_cases *out)
{
  static const struct {
    int64_t rows, classes, k;
    bool ties;
  } shapes[] = {{8, 10, 1, false}, {8, 10, 3, true},  {33, 1000, 5, false},
                {5, 7, 0, false},  {5, 7, 7, false},  {300, 3, 2, true},
                {0, 4, 1, false},  {4, 2000, 100, true}, {3, 5, -1, false}};
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    struct ref_tensor *p = ref_case_input(
        c, TF_FLOAT, (int64_t[]){shapes[i].rows, shapes[i].classes}, 2,
        REF_ANY);
    if (shapes[i].ties)
      for (int64_t e = 0; e < p->elements; e++)
        p->v[e] = round(p->v[e]);
    double targets[300];
    for (int64_t r = 0; r < shapes[i].rows; r++)
      targets[r] = (double)((r * 7 + 3) % shapes[i].classes);
    ref_case_input_values(c, dtype, &shapes[i].rows, 1, targets);
    double k = (double)shapes[i].k;
    ref_case_input_values(c, dtype, NULL, 0, &k);
  }
  /* Out-of-range targets and non-finite predictions: false. */
  static const double preds[] = {0.1, 0.9, 0.5, NAN, 0.2, 0.3,
                                 0.4, 0.3, INFINITY, 1.0, 2.0, 3.0};
  struct ref_case *c = ref_case_add(out, op->op, "%s edges", op->op);
  ref_case_input_values(c, TF_FLOAT, (int64_t[]){4, 3}, 2, preds);
  ref_case_input_values(c, dtype, (int64_t[]){4}, 1,
                        (double[]){1, 0, 2, 5});
  ref_case_input_values(c, dtype, NULL, 0, (double[]){2});
  c = ref_case_add(out, op->op, "%s targets not a vector", op->op);
  ref_case_input(c, TF_FLOAT, (int64_t[]){4, 3}, 2, REF_ANY);
  ref_case_input_values(c, dtype, (int64_t[]){2, 2}, 2,
                        (double[]){0, 1, 2, 0});
  ref_case_input_values(c, dtype, NULL, 0, (double[]){1});
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s rows differ", op->op);
  ref_case_input(c, TF_FLOAT, (int64_t[]){4, 3}, 2, REF_ANY);
  ref_case_input_values(c, dtype, (int64_t[]){3}, 1, (double[]){0, 1, 2});
  ref_case_input_values(c, dtype, NULL, 0, (double[]){1});
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* Whether elements a and b of x are equal as TensorFlow's CPU kernel
 * finds them: as numbers (every NaN distinct, -0 equal to +0), but in half,
 * whose hash tells -0 from +0. */
static bool unique_equal(const struct ref_tensor *x, int64_t a, int64_t b)
{
  return x->v[a] == x->v[b] &&
         (x->dtype != TF_HALF || signbit(x->v[a]) == signbit(x->v[b]));
}

/* Unique, UniqueWithCounts and their V2 ops: the distinct values (slices
 * along the V2 ops' axis) in the order of their first occurrence, each
 * element's (slice's) position among them and each one's count; a
 * quadratic walk over small inputs. */
static int unique_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  const struct tfocl_attr *idx_attr = ref_case_attr(c, "out_idx");
  TF_DataType idx_type = idx_attr != NULL ? idx_attr->value.type : TF_INT32;
  bool with_counts = strstr(c->op, "WithCounts") != NULL;
  bool v2 = strstr(c->op, "V2") != NULL;
  int64_t outer = 1, slices = x->elements, inner = 1;
  int axis = 0;
  if (v2 && (c->inputs[1].rank != 1 || c->inputs[1].elements > 1)) {
    snprintf(error, (size_t)error_len, "bad axis");
    return -1;
  }
  if (v2 && c->inputs[1].elements == 1) {
    int64_t a = (int64_t)c->inputs[1].v[0];
    a = a < 0 ? a + x->rank : a;
    if (a < 0 || a >= x->rank) {
      snprintf(error, (size_t)error_len, "axis out of range");
      return -1;
    }
    axis = (int)a;
    outer = 1;
    for (int i = 0; i < axis; i++)
      outer *= x->dims[i];
    slices = x->dims[axis];
    for (int i = axis + 1; i < x->rank; i++)
      inner *= x->dims[i];
  } else if (x->rank != 1) {
    snprintf(error, (size_t)error_len, "unique expects a 1D vector.");
    return -1;
  }
  int64_t size = slices > 0 ? slices : 1, uniques = 0;
  int64_t *first = malloc(sizeof(int64_t) * (size_t)size);
  int64_t *idx = malloc(sizeof(int64_t) * (size_t)size);
  int64_t *counts = calloc((size_t)size, sizeof(int64_t));
  if (first == NULL || idx == NULL || counts == NULL) {
    free(first), free(idx), free(counts);
    snprintf(error, (size_t)error_len, "out of host memory");
    return -1;
  }
  for (int64_t j = 0; j < slices; j++) {
    int64_t u = 0;
    for (; u < uniques; u++) {
      bool equal = true;
      for (int64_t o = 0; o < outer && equal; o++)
        for (int64_t q = 0; q < inner && equal; q++)
          equal = unique_equal(x, (o * slices + first[u]) * inner + q,
                               (o * slices + j) * inner + q);
      if (equal)
        break;
    }
    if (u == uniques)
      first[uniques++] = j;
    idx[j] = u;
    counts[u]++;
  }
  int64_t y_dims[REF_MAX_DIMS];
  memcpy(y_dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  y_dims[axis] = uniques;
  ref_tensor_alloc(&out[0], x->dtype, y_dims, x->rank);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t u = 0; u < uniques; u++)
      for (int64_t q = 0; q < inner; q++)
        out[0].v[(o * uniques + u) * inner + q] =
            x->v[(o * slices + first[u]) * inner + q];
  ref_tensor_alloc(&out[1], idx_type, (int64_t[]){slices}, 1);
  for (int64_t j = 0; j < slices; j++)
    out[1].v[j] = (double)idx[j];
  if (with_counts) {
    ref_tensor_alloc(&out[2], idx_type, (int64_t[]){uniques}, 1);
    for (int64_t u = 0; u < uniques; u++)
      out[2].v[u] = (double)counts[u];
  }
  free(first), free(idx), free(counts);
  return with_counts ? 3 : 2;
}

/* The V2 ops' axis input: none (an empty vector) or one value. */
static void axis_input(struct ref_case *c, const struct ref_op *op, int axis,
                       bool none, TF_DataType type)
{
  if (strstr(op->op, "V2") == NULL)
    return;
  ref_case_input_values(c, type, (int64_t[]){none ? 0 : 1}, 1,
                        (double[]){(double)axis});
}

static void unique_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  bool v2 = strstr(op->op, "V2") != NULL;
  /* (length, distinct values): few values (many repeats), all distinct,
   * lengths off any power of two and past a work-group's sort chunk. */
  static const struct {
    int64_t n, distinct;
  } shapes[] = {{1, 1}, {7, 3}, {10, 10}, {100, 5}, {513, 40}, {3001, 2000},
                {1000, 1}};
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s n=%lld distinct<=%lld",
                                      op->op, (long long)shapes[i].n,
                                      (long long)shapes[i].distinct);
    struct ref_tensor *x =
        ref_case_input(c, dtype, &shapes[i].n, 1, REF_ANY);
    uint64_t state = 0x9e3779b97f4a7c15ull + i;
    for (int64_t e = 0; e < x->elements; e++) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      int64_t v = (int64_t)((state >> 33) % (uint64_t)shapes[i].distinct);
      /* Exact in half too: multiples of 1/4 up to 500. */
      x->v[e] = ref_round_to(dtype, dtype == TF_INT32 ? (double)(v - 7)
                                                      : (double)v / 4 - 3);
    }
    axis_input(c, op, i % 2 ? -1 : 0, i % 3 == 0, i % 2 ? TF_INT32 : TF_INT64);
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s empty", op->op);
  ref_case_input(c, dtype, (int64_t[]){0}, 1, REF_ANY);
  axis_input(c, op, 0, false, TF_INT64);
  if (dtype != TF_INT32) {
    static const double specials[] = {0.0,  -0.0, NAN, 1.5,  NAN,
                                      -0.0, 1.5,  INFINITY, -INFINITY, 0.0};
    int64_t n = sizeof(specials) / sizeof(specials[0]);
    c = ref_case_add(out, op->op, "%s zeros and NaN", op->op);
    ref_case_input_values(c, dtype, &n, 1, specials);
    axis_input(c, op, 0, true, TF_INT64);
  }
  if (v2) {
    /* Slices: rows, columns and a middle axis of values from {0, 1, 2}
     * (repeated slices), a slice with a NaN, slices of one element in an
     * N-D tensor, empty slices. */
    static const struct {
      int rank;
      int64_t dims[3];
      int axis;
    } slices[] = {{2, {40, 3}, 0}, {2, {3, 40}, 1}, {3, {2, 30, 2}, 1},
                  {3, {2, 30, 2}, -3}, {3, {1, 50, 1}, 1}, {2, {0, 5}, 1},
                  {2, {5, 0}, 0}};
    for (size_t i = 0; i < sizeof(slices) / sizeof(slices[0]); i++) {
      c = ref_case_add(out, op->op, "%s slices#%zu axis %d", op->op, i,
                       slices[i].axis);
      struct ref_tensor *x =
          ref_case_input(c, dtype, slices[i].dims, slices[i].rank, REF_ANY);
      for (int64_t e = 0; e < x->elements; e++)
        x->v[e] = (double)((e * 7 + e / 5) % 3 == 0 ? 1 : (e * e) % 2);
      if (i == 2 && dtype != TF_INT32)
        x->v[9] = NAN;
      axis_input(c, op, slices[i].axis, false,
                 i % 2 ? TF_INT32 : TF_INT64);
    }
    c = ref_case_add(out, op->op, "%s axis out of range", op->op);
    ref_case_input(c, dtype, (int64_t[]){2, 3}, 2, REF_ANY);
    axis_input(c, op, 2, false, TF_INT64);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s two axes", op->op);
    ref_case_input(c, dtype, (int64_t[]){2, 3}, 2, REF_ANY);
    ref_case_input_values(c, TF_INT64, (int64_t[]){2}, 1, (double[]){0, 1});
    c->expect_code = TF_INVALID_ARGUMENT;
  }
  c = ref_case_add(out, op->op, "%s 2-D", op->op);
  ref_case_input(c, dtype, (int64_t[]){2, 3}, 2, REF_ANY);
  axis_input(c, op, 0, true, TF_INT64);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s scalar", op->op);
  ref_case_input_values(c, dtype, NULL, 0, (double[]){1});
  axis_input(c, op, 0, true, TF_INT64);
  c->expect_code = TF_INVALID_ARGUMENT;
}

const struct ref_op ref_ops_select[] = {
    {"InTopKV2", 0.0, 0.0, REF_ANY, in_top_k_cases, in_top_k_compute},
    {"Where", 0.0, 0.0, REF_ANY, where_cases, where_compute},
    {"TopKV2", 0.0, 0.0, REF_ANY, topk_cases, topk_compute},
    {"Unique", 0.0, 0.0, REF_ANY, unique_cases, unique_compute},
    {"UniqueWithCounts", 0.0, 0.0, REF_ANY, unique_cases, unique_compute},
    {"UniqueV2", 0.0, 0.0, REF_ANY, unique_cases, unique_compute},
    {"UniqueWithCountsV2", 0.0, 0.0, REF_ANY, unique_cases, unique_compute},
    {.op = NULL},
};
