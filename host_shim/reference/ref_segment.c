/* References of the segment family: Segment{Sum,Mean,Prod,Min,Max} and
 * SparseSegment{Sum,Mean,SqrtN}[WithNumSegments].
 *
 * Output row s reduces, in float64 and in order, the data rows whose
 * segment id is s (sparse forms: the rows indices[i] names); its row count
 * is the last id + 1, or num_segments. Empty segments hold 0 (SegmentProd:
 * 1). Min and Max take NaN as TensorFlow's CPU kernel does (measured on
 * 2.19.1): a NaN element makes the accumulator NaN, the next element
 * replaces a NaN accumulator. Mean
 * divides by the count, SqrtN by its square root.
 *
 * Bad input fails as TensorFlow's CPU kernels fail (INVALID_ARGUMENT): ids
 * not increasing or negative, an index out of range, num_segments too
 * small or negative, mismatched sizes and ranks.
 *
 * The gradients SparseSegment{Sum,Mean,SqrtN}Grad add each grad row,
 * scaled, into the output rows indices name; ids and indices out of range
 * fail.
 *
 * Tolerances (float32): sums of up to 60 terms in [-3, 3] round each
 * partial (and TensorFlow's sparse kernels scale by 1/n before adding in
 * eights): rtol 1e-5, atol 1e-5; products of up to 60 factors in (0.1, 4]
 * round once per factor: rtol 2e-5. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

enum reduce { R_SUM, R_MEAN, R_SQRTN, R_PROD, R_MIN, R_MAX };

struct seg_desc {
  const char *op;
  enum reduce reduce;
  bool sparse, num_segments;
};

static const struct seg_desc descs[] = {
    {"SegmentSum", R_SUM, false, false},
    {"SegmentMean", R_MEAN, false, false},
    {"SegmentProd", R_PROD, false, false},
    {"SegmentMin", R_MIN, false, false},
    {"SegmentMax", R_MAX, false, false},
    {"SparseSegmentSum", R_SUM, true, false},
    {"SparseSegmentMean", R_MEAN, true, false},
    {"SparseSegmentSqrtN", R_SQRTN, true, false},
    {"SparseSegmentSumWithNumSegments", R_SUM, true, true},
    {"SparseSegmentMeanWithNumSegments", R_MEAN, true, true},
    {"SparseSegmentSqrtNWithNumSegments", R_SQRTN, true, true},
};

static const struct seg_desc *desc_of(const char *op)
{
  for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++)
    if (strcmp(descs[i].op, op) == 0)
      return &descs[i];
  return NULL;
}

static int fail(char *error, int error_len, const char *why)
{
  snprintf(error, (size_t)error_len, "%s", why);
  return -1;
}

static double combine(enum reduce r, double a, double b)
{
  switch (r) {
  case R_PROD: return a * b;
  case R_MIN: return b >= a ? a : b;
  case R_MAX: return b <= a ? a : b;
  default: return a + b;
  }
}

static int segment_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct seg_desc *d = desc_of(c->op);
  if (d == NULL)
    return fail(error, error_len, "unknown op");
  const struct ref_tensor *data = &c->inputs[0];
  const struct ref_tensor *idx = d->sparse ? &c->inputs[1] : NULL;
  const struct ref_tensor *ids = d->sparse ? &c->inputs[2] : &c->inputs[1];
  int64_t rows_out = 0;
  if (d->num_segments) {
    if (c->inputs[3].rank != 0)
      return fail(error, error_len, "num_segments not a scalar");
    rows_out = (int64_t)c->inputs[3].v[0];
    if (rows_out < 0)
      return fail(error, error_len, "negative num_segments");
  }
  if (data->rank < 1)
    return fail(error, error_len, "data of rank 0");
  if (ids->rank != 1 || (idx != NULL && idx->rank != 1))
    return fail(error, error_len, "ids or indices not a vector");
  int64_t m = ids->elements;
  if (idx != NULL ? idx->elements != m : m != data->dims[0])
    return fail(error, error_len, "sizes differ");
  if (m > 0) {
    int64_t last = (int64_t)ids->v[m - 1];
    if (d->num_segments && rows_out < last + 1)
      return fail(error, error_len, "segment ids past num_segments");
    if (!d->num_segments)
      rows_out = last + 1;
    if (rows_out <= 0)
      return fail(error, error_len, "negative segment ids");
  }
  for (int64_t i = 0; i < m; i++) {
    if (ids->v[i] < 0 || (i > 0 && ids->v[i] < ids->v[i - 1]))
      return fail(error, error_len, "segment ids not sorted");
    if (idx != NULL && (idx->v[i] < 0 || idx->v[i] >= (double)data->dims[0]))
      return fail(error, error_len, "index out of range");
  }
  int64_t dims[REF_MAX_DIMS];
  memcpy(dims, data->dims, sizeof(dims));
  dims[0] = rows_out;
  if (!ref_tensor_alloc(&out[0], data->dtype, dims, data->rank))
    return fail(error, error_len, "cannot allocate the output");
  int64_t w = 1;
  for (int k = 1; k < data->rank; k++)
    w *= data->dims[k];
  double empty = d->reduce == R_PROD && !d->sparse ? 1.0 : 0.0;
  for (int64_t s = 0, i = 0; s < rows_out; s++) {
    int64_t lo = i;
    while (i < m && (int64_t)ids->v[i] == s)
      i++;
    for (int64_t col = 0; col < w; col++) {
      double acc = empty;
      for (int64_t j = lo; j < i; j++) {
        int64_t row = idx != NULL ? (int64_t)idx->v[j] : j;
        double v = data->v[row * w + col];
        acc = j == lo ? v : combine(d->reduce, acc, v);
      }
      int64_t count = i - lo;
      if (count > 0 && d->reduce == R_MEAN)
        acc /= (double)count;
      if (count > 0 && d->reduce == R_SQRTN)
        acc /= sqrt((double)count);
      out[0].v[s * w + col] = acc;
    }
  }
  return 1;
}

/* Sorted ids: `m` of them over `segments` segments, with gaps, a few long
 * runs, and segment `segments - 1` always present. */
static void sorted_ids(double *ids, int64_t m, int64_t segments)
{
  for (int64_t i = 0; i < m; i++)
    ids[i] = (double)((i * segments) / m);
  if (m > 0)
    ids[m - 1] = (double)(segments - 1);
  /* A gap: no row for segment 1 where there are at least 3 segments. */
  for (int64_t i = 0; segments >= 3 && i < m; i++)
    if (ids[i] == 1)
      ids[i] = 2;
}

struct seg_shape {
  int rank;
  int64_t dims[4];
  int64_t segments; /* distinct ids span [0, segments) */
};

static const struct seg_shape shapes[] = {
    {1, {7}, 3},          {2, {6, 5}, 6},      {3, {9, 3, 4}, 4},
    {1, {1}, 1},          {2, {1, 17}, 1},     {2, {60, 3}, 10},
    {2, {300, 3}, 40},    {2, {12, 37}, 5},    {2, {40, 130}, 9},
    {3, {5, 2, 1}, 9},    {2, {0, 3}, 0},      {1, {0}, 0},
    /* Long segments (sums only: products would leave half's range). */
    {2, {200, 2}, 2}, {1, {1000}, 3}, {2, {700, 3}, 300},
};

static void add_types(struct ref_case *c, const struct seg_desc *d,
                      TF_DataType id_type, TF_DataType idx_type)
{
  ref_case_attr_type(c, d->sparse ? "Tsegmentids" : "Tindices", id_type);
  if (d->sparse)
    ref_case_attr_type(c, "Tidx", idx_type);
}

static void segment_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  const struct seg_desc *d = desc_of(op->op);
  static double ids[1200], idx[1200];
  enum ref_domain domain = d->reduce == R_PROD ? REF_POSITIVE : REF_ANY;
  int n = 0;
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++, n++) {
    const struct seg_shape *s = &shapes[i];
    if (d->reduce == R_PROD && s->dims[0] / (s->segments + 1) > 20)
      continue;
    TF_DataType id_type = n % 2 ? TF_INT64 : TF_INT32;
    TF_DataType idx_type = n % 3 ? TF_INT32 : TF_INT64;
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    int64_t rows = s->dims[0];
    /* Sparse: the ids pick rows of data in a scrambled order, some twice,
     * and there are more ids than rows where rows are few. */
    int64_t m = d->sparse ? (rows == 0 ? 0 : rows + 3) : rows;
    sorted_ids(ids, m, s->segments > 0 ? s->segments : 1);
    for (int64_t j = 0; j < m; j++)
      idx[j] = (double)((j * 7 + 3) % (rows > 0 ? rows : 1));
    ref_case_input(c, dtype, s->dims, s->rank, domain);
    if (d->sparse)
      ref_case_input_values(c, idx_type, &m, 1, idx);
    ref_case_input_values(c, id_type, &m, 1, ids);
    if (d->num_segments) {
      double num = (double)(s->segments + (int64_t)(i % 3));
      ref_case_input_values(c, i % 2 ? TF_INT64 : TF_INT32, NULL, 0, &num);
    }
    add_types(c, d, id_type, idx_type);
  }
  /* NaN and infinities within segments. */
  static const double specials[] = {NAN, 1.0, INFINITY, -2.0, -INFINITY,
                                    NAN, 3.5, -0.0,     0.0,  1e30};
  int64_t ns = 10;
  struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
  ref_case_input_values(c, dtype, &ns, 1, specials);
  static const double special_ids[] = {0, 0, 1, 1, 2, 2, 3, 3, 5, 5};
  if (d->sparse)
    ref_case_input_values(c, TF_INT32, &ns, 1,
                          (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  ref_case_input_values(c, TF_INT32, &ns, 1, special_ids);
  if (d->num_segments)
    ref_case_input_values(c, TF_INT32, NULL, 0, (double[]){7});
  add_types(c, d, TF_INT32, TF_INT32);

  /* Bad input: each must fail as TensorFlow's CPU kernel does. */
  static const struct {
    const char *what;
    int64_t m;
    double ids[5];
    double idx[5];
    double num;
  } bad[] = {
      {"ids decreasing", 5, {0, 1, 3, 2, 4}, {0, 1, 2, 3, 4}, 6},
      {"first id negative", 4, {-1, 0, 1, 1}, {0, 1, 2, 3}, 3},
      {"all ids negative", 3, {-3, -2, -1}, {0, 1, 2}, 3},
      {"index past the rows", 4, {0, 0, 1, 1}, {0, 1, 5, 2}, 3},
      {"index negative", 4, {0, 0, 1, 1}, {0, -1, 2, 3}, 3},
      {"ids past num_segments", 4, {0, 0, 1, 4}, {0, 1, 2, 3}, 3},
      {"num_segments negative", 4, {0, 0, 1, 1}, {0, 1, 2, 3}, -1},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    bool sparse_only = i >= 3;
    if (sparse_only && !d->sparse)
      continue;
    if (i >= 5 && !d->num_segments)
      continue;
    c = ref_case_add(out, op->op, "%s %s", op->op, bad[i].what);
    int64_t m = bad[i].m, dims[2] = {d->sparse ? 5 : m, 3};
    ref_case_input(c, dtype, dims, 2, domain);
    if (d->sparse)
      ref_case_input_values(c, TF_INT64, &m, 1, bad[i].idx);
    ref_case_input_values(c, TF_INT32, &m, 1, bad[i].ids);
    if (d->num_segments)
      ref_case_input_values(c, TF_INT32, NULL, 0, &bad[i].num);
    add_types(c, d, TF_INT32, TF_INT64);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
  /* Shapes TensorFlow rejects: ids of another size or rank, scalar data. */
  for (int k = 0; k < 3; k++) {
    c = ref_case_add(out, op->op, "%s bad shape %d", op->op, k);
    int64_t dims[2] = {k == 2 ? 1 : 4, 3};
    ref_case_input(c, dtype, dims, k == 2 ? 0 : 2, domain);
    int64_t m = k == 0 ? 3 : 4;
    int64_t id_dims[2] = {2, 2};
    if (d->sparse)
      ref_case_input_values(c, TF_INT32, k == 0 ? (int64_t[]){4} : &m, 1,
                            (double[]){0, 1, 2, 3});
    ref_case_input_values(c, TF_INT32, k == 1 ? id_dims : &m, k == 1 ? 2 : 1,
                          (double[]){0, 0, 1, 1});
    if (d->num_segments)
      ref_case_input_values(c, TF_INT32, NULL, 0, (double[]){3});
    add_types(c, d, TF_INT32, TF_INT32);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

/* SparseSegment{Sum,Mean,SqrtN}Grad: output[indices[i]] +=
 * grad[segment_ids[i]] * scale, scale 1, 1 / n or 1 / sqrt(n) for the n
 * ids equal to segment_ids[i]. Rows of the output no index names are 0. */
static int grad_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *grad = &c->inputs[0], *idx = &c->inputs[1],
                          *ids = &c->inputs[2], *dim0 = &c->inputs[3];
  /* V2's input 3 is dense_output_dim0: the same checks. */
  bool mean = strstr(c->op, "Mean") != NULL;
  bool sqrtn = strstr(c->op, "SqrtN") != NULL;
  if (idx->rank != 1 || ids->rank != 1 || dim0->rank != 0)
    return fail(error, error_len, "bad ranks");
  int64_t n = idx->elements;
  if (ids->elements != n)
    return fail(error, error_len, "sizes differ");
  if (grad->rank < 1)
    return fail(error, error_len, "grad of rank 0");
  int64_t rows = (int64_t)dim0->v[0];
  if (rows < 0)
    return fail(error, error_len, "negative output_dim0");
  int64_t segments = grad->dims[0];
  /* TensorFlow checks ids and indices only where there is work. */
  for (int64_t i = 0; rows > 0 && i < n; i++)
    if (ids->v[i] < 0 || ids->v[i] >= (double)segments || idx->v[i] < 0 ||
        idx->v[i] >= (double)rows)
      return fail(error, error_len, "id or index out of range");
  int64_t dims[REF_MAX_DIMS];
  memcpy(dims, grad->dims, sizeof(dims));
  dims[0] = rows;
  if (!ref_tensor_alloc(&out[0], grad->dtype, dims, grad->rank))
    return fail(error, error_len, "cannot allocate the output");
  int64_t w = 1;
  for (int k = 1; k < grad->rank; k++)
    w *= grad->dims[k];
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = 0.0;
  for (int64_t i = 0; rows > 0 && i < n; i++) {
    int64_t s = (int64_t)ids->v[i], r = (int64_t)idx->v[i], count = 0;
    for (int64_t j = 0; j < n; j++)
      count += (int64_t)ids->v[j] == s;
    double scale = mean ? 1.0 / (double)count
                   : sqrtn ? 1.0 / sqrt((double)count)
                           : 1.0;
    for (int64_t col = 0; col < w; col++)
      out[0].v[r * w + col] += grad->v[s * w + col] * scale;
  }
  return 1;
}

/* SparseSegment*GradV2: the rows of the V1 gradient that indices name, in
 * increasing order, and those row numbers. */
static int grad_v2_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  struct ref_tensor dense = {0};
  const struct ref_tensor *idx = &c->inputs[1];
  if (c->inputs[3].rank == 0 && c->inputs[0].rank >= 1 &&
      ((int64_t)c->inputs[3].v[0] == 0 || idx->elements == 0) &&
      idx->rank == 1 && c->inputs[2].rank == 1 &&
      idx->elements == c->inputs[2].elements) {
    /* Nothing to do: empty outputs, before any check. */
    int64_t dims[REF_MAX_DIMS];
    memcpy(dims, c->inputs[0].dims, sizeof(dims));
    dims[0] = 0;
    int64_t zero = 0;
    if (!ref_tensor_alloc(&out[0], c->inputs[0].dtype, dims,
                          c->inputs[0].rank) ||
        !ref_tensor_alloc(&out[1], idx->dtype, &zero, 1))
      return fail(error, error_len, "cannot allocate the outputs");
    return 2;
  }
  if (grad_compute(c, &dense, error, error_len) < 0)
    return -1;
  int64_t rows = dense.dims[0], w = rows > 0 ? dense.elements / rows : 0;
  int64_t unique = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < idx->elements; i++)
      if ((int64_t)idx->v[i] == r) {
        unique++;
        break;
      }
  int64_t dims[REF_MAX_DIMS];
  memcpy(dims, dense.dims, sizeof(dims));
  dims[0] = unique;
  if (!ref_tensor_alloc(&out[0], dense.dtype, dims, dense.rank) ||
      !ref_tensor_alloc(&out[1], idx->dtype, &unique, 1)) {
    ref_tensor_finish(&dense);
    return fail(error, error_len, "cannot allocate the outputs");
  }
  int64_t j = 0;
  for (int64_t r = 0; r < rows; r++) {
    bool named = false;
    for (int64_t i = 0; i < idx->elements && !named; i++)
      named = (int64_t)idx->v[i] == r;
    if (!named)
      continue;
    memcpy(&out[0].v[j * w], &dense.v[r * w], sizeof(double) * (size_t)w);
    out[1].v[j++] = (double)r;
  }
  ref_tensor_finish(&dense);
  return 2;
}

static void grad_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  static double ids[400], idx[400];
  static const struct {
    int rank;
    int64_t dims[3]; /* grad's */
    int64_t n, rows; /* ids, output_dim0 */
  } grad_shapes[] = {
      {2, {4, 3}, 7, 6},    {1, {5}, 9, 4},      {3, {3, 2, 5}, 5, 8},
      {2, {1, 17}, 3, 2},   {2, {40, 6}, 300, 50}, {2, {6, 300}, 11, 9},
      {2, {2, 3}, 0, 4},    {2, {3, 4}, 4, 0},
  };
  for (size_t i = 0; i < sizeof(grad_shapes) / sizeof(grad_shapes[0]); i++) {
    int64_t n = grad_shapes[i].n, segments = grad_shapes[i].dims[0];
    int64_t rows = grad_shapes[i].rows;
    sorted_ids(ids, n, segments);
    for (int64_t j = 0; j < n; j++)
      idx[j] = (double)((j * 5 + 2) % (rows > 0 ? rows : 1));
    TF_DataType id_type = i % 2 ? TF_INT64 : TF_INT32;
    TF_DataType idx_type = i % 3 ? TF_INT32 : TF_INT64;
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, grad_shapes[i].dims, grad_shapes[i].rank,
                   REF_ANY);
    ref_case_input_values(c, idx_type, &n, 1, idx);
    ref_case_input_values(c, id_type, &n, 1, ids);
    double r = (double)rows;
    ref_case_input_values(c, TF_INT32, NULL, 0, &r);
    ref_case_attr_type(c, "Tsegmentids", id_type);
    ref_case_attr_type(c, "Tidx", idx_type);
  }
  /* Unsorted ids: TensorFlow counts each segment's ids all the same. */
  struct ref_case *u = ref_case_add(out, op->op, "%s unsorted ids", op->op);
  int64_t nu = 6;
  ref_case_input(u, dtype, (int64_t[]){3, 4}, 2, REF_ANY);
  ref_case_input_values(u, TF_INT32, &nu, 1, (double[]){0, 3, 1, 3, 4, 2});
  ref_case_input_values(u, TF_INT32, &nu, 1, (double[]){2, 0, 2, 1, 2, 0});
  ref_case_input_values(u, TF_INT32, NULL, 0, (double[]){5});
  ref_case_attr_type(u, "Tsegmentids", TF_INT32);
  ref_case_attr_type(u, "Tidx", TF_INT32);
  static const struct {
    const char *what;
    double ids[4], idx[4], rows;
  } bad[] = {
      {"last id past grad's rows", {0, 1, 1, 3}, {0, 1, 2, 3}, 5},
      {"negative id", {-1, 0, 1, 1}, {0, 1, 2, 3}, 5},
      {"index past output_dim0", {0, 0, 1, 1}, {0, 7, 2, 3}, 5},
      {"negative index", {0, 0, 1, 1}, {0, 1, -2, 3}, 5},
      {"negative output_dim0", {0, 0, 1, 1}, {0, 1, 2, 3}, -1},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct ref_case *c =
        ref_case_add(out, op->op, "%s %s", op->op, bad[i].what);
    int64_t n = 4;
    ref_case_input(c, dtype, (int64_t[]){3, 2}, 2, REF_ANY);
    ref_case_input_values(c, TF_INT32, &n, 1, bad[i].idx);
    ref_case_input_values(c, TF_INT64, &n, 1, bad[i].ids);
    ref_case_input_values(c, TF_INT32, NULL, 0, &bad[i].rows);
    ref_case_attr_type(c, "Tsegmentids", TF_INT64);
    ref_case_attr_type(c, "Tidx", TF_INT32);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

/* Bincount, DenseBincount: bins[row][v] += weight (or 1; binary_output:
 * = 1) for each value v of the input (row: its row for a rank-2
 * DenseBincount input, else 0). Values outside [0, size) are dropped, as
 * TensorFlow's GPU kernels do (its CPU kernels fail on negative ones). */
static int bincount_compute(const struct ref_case *c, struct ref_tensor *out,
                            char *error, int error_len)
{
  const struct ref_tensor *arr = &c->inputs[0], *size_t_ = &c->inputs[1],
                          *wt = &c->inputs[2];
  bool dense = strcmp(c->op, "DenseBincount") == 0;
  bool binary = ref_case_attr_bool_or(c, "binary_output", false);
  if (dense && arr->rank > 2)
    return fail(error, error_len, "input of rank > 2");
  if (size_t_->rank != 0)
    return fail(error, error_len, "size not a scalar");
  int64_t size = (int64_t)size_t_->v[0];
  if (size < 0)
    return fail(error, error_len, "negative size");
  if (wt->elements != 0) {
    bool same = wt->elements == arr->elements;
    if (dense) {
      same = wt->rank == arr->rank;
      for (int d = 0; same && d < arr->rank; d++)
        same = wt->dims[d] == arr->dims[d];
    }
    if (!same)
      return fail(error, error_len, "weights of another shape");
  }
  bool rows2 = dense && arr->rank == 2;
  int64_t dims[2] = {rows2 ? arr->dims[0] : size, size};
  if (!ref_tensor_alloc(&out[0], wt->dtype, dims, rows2 ? 2 : 1))
    return fail(error, error_len, "cannot allocate the output");
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = 0.0;
  int64_t cols = rows2 ? arr->dims[1] : (arr->elements > 0 ? arr->elements : 1);
  for (int64_t i = 0; i < arr->elements; i++) {
    int64_t v = (int64_t)arr->v[i];
    if (v < 0 || v >= size)
      continue;
    double *bin = &out[0].v[(i / cols) * size + v];
    *bin = binary ? 1.0 : *bin + (wt->elements ? wt->v[i] : 1.0);
  }
  return 1;
}

static void bincount_cases(const struct ref_op *op, TF_DataType dtype,
                           struct ref_cases *out)
{
  bool dense = strcmp(op->op, "DenseBincount") == 0;
  static double values[2000];
  static const struct {
    int rank;
    int64_t dims[3];
    int64_t size, hi; /* values in [-1, hi) where hi > size */
    bool weighted, binary;
    bool dense_only;
  } bc_shapes[] = {
      {1, {7}, 5, 5, false, false, false},
      {1, {9}, 6, 8, true, false, false},
      {1, {1000}, 37, 40, true, false, false},
      {1, {1000}, 300, 300, false, false, false},
      {0, {0}, 4, 4, true, false, false},
      {1, {0}, 3, 3, false, false, false},
      {1, {5}, 0, 3, false, false, false},
      {2, {3, 4}, 6, 5, true, false, false},
      {2, {3, 4}, 6, 7, true, false, true},
      {2, {4, 50}, 10, 12, false, false, true},
      {2, {4, 50}, 10, 12, true, true, true},
      {1, {60}, 8, 10, true, true, true},
      {2, {0, 3}, 4, 4, false, false, true},
  };
  for (size_t i = 0; i < sizeof(bc_shapes) / sizeof(bc_shapes[0]); i++) {
    if (bc_shapes[i].dense_only && !dense)
      continue;
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    int64_t n = 1;
    for (int d = 0; d < bc_shapes[i].rank; d++)
      n *= bc_shapes[i].dims[d];
    /* Negative values only where they are dropped (DenseBincount's rank 2
     * and Bincount fail on the CPU; the device drops all the same). */
    for (int64_t j = 0; j < n; j++)
      values[j] = (double)((j * 7919 + 3) % (bc_shapes[i].hi + 1)) - 1;
    TF_DataType itype = dense && i % 2 ? TF_INT64 : TF_INT32;
    ref_case_input_values(c, itype, bc_shapes[i].dims, bc_shapes[i].rank, values);
    double size = (double)bc_shapes[i].size;
    ref_case_input_values(c, itype, NULL, 0, &size);
    if (bc_shapes[i].weighted)
      ref_case_input(c, dtype, bc_shapes[i].dims, bc_shapes[i].rank, REF_ANY);
    else
      ref_case_input_values(c, dtype, (int64_t[]){0}, 1, NULL);
    if (dense) {
      ref_case_attr_type(c, "Tidx", itype);
      if (bc_shapes[i].binary)
        ref_case_attr_bool(c, "binary_output", true);
    }
  }
  static const struct {
    const char *what;
    int rank;
    int64_t dims[3];
    int size_rank;
    double size;
    int64_t wn; /* weights' elements, as a vector */
    bool dense_only;
  } bad[] = {
      {"negative size", 1, {4}, 0, -1, 0, false},
      {"size not a scalar", 1, {4}, 1, 3, 0, false},
      {"weights of another size", 1, {4}, 0, 3, 3, false},
      {"rank-2 input, vector weights", 2, {2, 2}, 0, 3, 4, true},
      {"rank 3", 3, {2, 2, 1}, 0, 3, 0, true},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    if (bad[i].dense_only && !dense)
      continue;
    struct ref_case *c = ref_case_add(out, op->op, "%s %s", op->op, bad[i].what);
    double v[4] = {0, 1, 2, 1};
    ref_case_input_values(c, TF_INT32, bad[i].dims, bad[i].rank, v);
    ref_case_input_values(c, TF_INT32, (int64_t[]){1}, bad[i].size_rank,
                          &bad[i].size);
    ref_case_input(c, dtype, &bad[i].wn, 1, REF_ANY);
    if (dense)
      ref_case_attr_type(c, "Tidx", TF_INT32);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

const struct ref_op ref_ops_segment[] = {
    {"SegmentSum", 1e-5, 1e-5, REF_ANY, segment_cases, segment_compute},
    {"SegmentMean", 1e-5, 1e-5, REF_ANY, segment_cases, segment_compute},
    {"SegmentProd", 2e-5, 1e-30, REF_POSITIVE, segment_cases,
     segment_compute},
    {"SegmentMin", 0, 0, REF_ANY, segment_cases, segment_compute},
    {"SegmentMax", 0, 0, REF_ANY, segment_cases, segment_compute},
    {"SparseSegmentSum", 1e-5, 1e-5, REF_ANY, segment_cases, segment_compute},
    {"SparseSegmentMean", 1e-5, 1e-5, REF_ANY, segment_cases,
     segment_compute},
    {"SparseSegmentSqrtN", 1e-5, 1e-5, REF_ANY, segment_cases,
     segment_compute},
    {"SparseSegmentSumWithNumSegments", 1e-5, 1e-5, REF_ANY, segment_cases,
     segment_compute},
    {"SparseSegmentMeanWithNumSegments", 1e-5, 1e-5, REF_ANY, segment_cases,
     segment_compute},
    {"SparseSegmentSqrtNWithNumSegments", 1e-5, 1e-5, REF_ANY, segment_cases,
     segment_compute},
    {"SparseSegmentSumGrad", 1e-5, 1e-5, REF_ANY, grad_cases, grad_compute},
    {"SparseSegmentMeanGrad", 1e-5, 1e-5, REF_ANY, grad_cases, grad_compute},
    {"SparseSegmentSqrtNGrad", 1e-5, 1e-5, REF_ANY, grad_cases,
     grad_compute},
    {"SparseSegmentSumGradV2", 1e-5, 1e-5, REF_ANY, grad_cases,
     grad_v2_compute},
    {"SparseSegmentMeanGradV2", 1e-5, 1e-5, REF_ANY, grad_cases,
     grad_v2_compute},
    {"SparseSegmentSqrtNGradV2", 1e-5, 1e-5, REF_ANY, grad_cases,
     grad_v2_compute},
    {"Bincount", 1e-5, 1e-5, REF_ANY, bincount_cases, bincount_compute},
    {"DenseBincount", 1e-5, 1e-5, REF_ANY, bincount_cases, bincount_compute},
    {.op = NULL},
};
