/* References of the scatter family's segment reductions
 * (UnsortedSegmentSum, UnsortedSegmentMax, UnsortedSegmentMin,
 * UnsortedSegmentProd) and tensor forms (GatherNd, ScatterNd,
 * TensorScatter{Update,Add,Sub,Min,Max}, ScatterNdNonAliasingAdd). (Its
 * resource-variable ops take variable handles, which reference cases cannot
 * express: tests/ops/test_variables.c covers them.)
 *
 * The nd forms: update rows apply in index order (Update: the last one
 * wins), rows whose index is out of range are dropped and gathers of one
 * give zeros, as on TensorFlow's GPU (its CPU kernels fail instead).
 *
 * The device applies the rows of each segment in index order, one step at a
 * time, rounding to the dtype after each step as TensorFlow's CPU kernels
 * do; the reference does the same in float64 with ref_round_to, so results
 * agree to the last bit but for double rounding: rtol = atol = 1e-6
 * (half: the ops suite widens it). Out-of-range segment ids are dropped,
 * as TensorFlow's GPU kernel does (its CPU kernel fails on ids >=
 * num_segments). Empty segments hold 0 (Sum), 1 (Prod), the dtype's lowest
 * (Max) or highest (Min) finite value. Max/Min follow Eigen's argument
 * order: output = max(data, output) keeps a NaN datum. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

static int fail(char *error, int error_len, const char *why)
{
  snprintf(error, (size_t)error_len, "%s", why);
  return -1;
}

static bool is_float(TF_DataType t)
{
  return t == TF_FLOAT || t == TF_HALF || t == TF_DOUBLE || t == TF_BFLOAT16;
}

/* Indices with deterministic values in [lo, hi]. */
static void index_input(struct ref_case *c, TF_DataType dtype,
                        const int64_t *dims, int rank, int64_t lo, int64_t hi)
{
  struct ref_tensor *t = ref_case_input_values(c, dtype, dims, rank, NULL);
  uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(c->num_inputs + 1);
  for (const char *s = c->label; *s; s++)
    state = (state ^ (unsigned char)*s) * 1099511628211ull;
  for (int64_t i = 0; i < t->elements; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t->v[i] = (double)(lo + (int64_t)((state >> 33) % (uint64_t)(hi - lo + 1)));
  }
}

static void scalar_input(struct ref_case *c, TF_DataType dtype, double v)
{
  ref_case_input_values(c, dtype, NULL, 0, &v);
}

/* TensorFlow's Lowest / Highest. */
static double extreme(TF_DataType dtype, bool lowest)
{
  double v;
  switch (dtype) {
  case TF_HALF: v = 65504.0; break;
  case TF_BFLOAT16: v = 3.3895313892515355e38; break;
  case TF_DOUBLE: v = DBL_MAX; break;
  case TF_INT32: return lowest ? -2147483648.0 : 2147483647.0;
  default: v = FLT_MAX; break;
  }
  return lowest ? -v : v;
}

enum seg_op { SEG_SUM, SEG_MAX, SEG_MIN, SEG_PROD };

static enum seg_op seg_op_of(const char *op)
{
  if (strcmp(op, "UnsortedSegmentMax") == 0)
    return SEG_MAX;
  if (strcmp(op, "UnsortedSegmentMin") == 0)
    return SEG_MIN;
  if (strcmp(op, "UnsortedSegmentProd") == 0)
    return SEG_PROD;
  return SEG_SUM;
}

static int segment_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct ref_tensor *data = &c->inputs[0], *ids = &c->inputs[1],
                          *num = &c->inputs[2];
  if (num->rank != 0)
    return fail(error, error_len, "num_segments should be a scalar");
  if (ids->rank > data->rank)
    return fail(error, error_len, "data does not start with segment_ids");
  for (int d = 0; d < ids->rank; d++)
    if (ids->dims[d] != data->dims[d])
      return fail(error, error_len, "data does not start with segment_ids");
  int64_t segments = (int64_t)num->v[0];
  if (segments < 0)
    return fail(error, error_len, "negative num_segments");
  int64_t dims[REF_MAX_DIMS];
  int rank = 0;
  dims[rank++] = segments;
  int64_t w = 1;
  for (int d = ids->rank; d < data->rank; d++)
    w *= dims[rank++] = data->dims[d];
  if (!ref_tensor_alloc(&out[0], data->dtype, dims, rank))
    return fail(error, error_len, "output rank too high");
  enum seg_op op = seg_op_of(c->op);
  int lanes = ref_lanes(data->dtype);
  double init = op == SEG_SUM    ? 0.0
                : op == SEG_PROD ? 1.0
                                 : extreme(data->dtype, op == SEG_MAX);
  for (int64_t i = 0; i < out[0].elements * lanes; i++)
    out[0].v[i] = lanes == 2 && i % 2 ? 0.0 : init;
  if (data->elements == 0)
    return 1;
  for (int64_t j = 0; j < ids->elements; j++) {
    int64_t t = (int64_t)ids->v[j];
    if (t < 0 || t >= segments)
      continue;
    for (int64_t k = 0; k < w * lanes; k++) {
      double *o = &out[0].v[t * w * lanes + k];
      double x = data->v[j * w * lanes + k];
      double r;
      switch (op) {
      case SEG_SUM: r = *o + x; break;
      case SEG_PROD: r = *o * x; break;
      case SEG_MAX: r = x < *o ? *o : x; break;
      default: r = *o < x ? *o : x; break;
      }
      *o = ref_round_to(data->dtype, r);
    }
  }
  return 1;
}

struct shape {
  int rank;
  int64_t dims[3];
};

static void segment_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  static const struct {
    struct shape data;
    int ids_rank;
    int64_t segments;
    int64_t lo, hi; /* segment ids in [lo, hi] */
    TF_DataType itype, ntype;
  } shapes[] = {
      {{2, {7, 3}}, 1, 4, 0, 3, TF_INT32, TF_INT32},
      /* long segments, many duplicates */
      {{1, {1031}}, 1, 5, 0, 4, TF_INT64, TF_INT64},
      /* dropped ids, both sides */
      {{2, {13, 4}}, 1, 5, -3, 7, TF_INT32, TF_INT64},
      {{3, {3, 4, 5}}, 2, 6, 0, 5, TF_INT64, TF_INT32},
      /* scalar segment_ids: the whole data is one row */
      {{2, {3, 2}}, 0, 3, 1, 1, TF_INT32, TF_INT32},
      {{2, {0, 3}}, 1, 4, 0, 3, TF_INT32, TF_INT32},
      {{2, {5, 2}}, 1, 0, 0, 2, TF_INT32, TF_INT32},
      {{2, {5, 0}}, 1, 3, 0, 2, TF_INT64, TF_INT32},
      /* rows of 37: the CPU shape's 16-column groups with a tail; more
       * than 512 rows: the GPU shape's global sort stages */
      {{2, {600, 37}}, 1, 7, -1, 7, TF_INT32, TF_INT32},
      {{2, {9, 1}}, 1, 1031, 0, 1030, TF_INT64, TF_INT32},
  };
  bool prod = strcmp(op->op, "UnsortedSegmentProd") == 0;
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    /* Products of many integers leave int32: keep segments short. */
    if (prod && dtype == TF_INT32 && shapes[i].data.dims[0] > 20)
      continue;
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, shapes[i].data.dims, shapes[i].data.rank,
                   prod ? REF_POSITIVE : REF_ANY);
    index_input(c, shapes[i].itype, shapes[i].data.dims, shapes[i].ids_rank,
                shapes[i].lo, shapes[i].hi);
    scalar_input(c, shapes[i].ntype, (double)shapes[i].segments);
    /* The case's own index type, whichever Tindices kernel it was listed
     * under: the ops suite pins only attributes a case leaves free. */
    ref_case_attr_type(c, "Tindices", shapes[i].itype);
  }
  if (is_float(dtype)) {
    static const double specials[] = {NAN, 1.0, INFINITY, -2.0, -INFINITY,
                                      NAN, 3.5, -0.0,     0.0,  1e30};
    int64_t n = sizeof(specials) / sizeof(specials[0]);
    struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
    ref_case_input_values(c, dtype, &n, 1, specials);
    ref_case_input_values(c, TF_INT32, &n, 1,
                          (double[]){0, 0, 1, 1, 2, 2, 0, 3, 3, 1});
    scalar_input(c, TF_INT32, 4);
    ref_case_attr_type(c, "Tindices", TF_INT32);
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s vector num_segments",
                                    op->op);
  ref_case_input(c, dtype, (int64_t[]){4, 2}, 2, REF_ANY);
  index_input(c, TF_INT32, (int64_t[]){4}, 1, 0, 2);
  ref_case_input_values(c, TF_INT32, (int64_t[]){1}, 1, (double[]){3});
  ref_case_attr_type(c, "Tindices", TF_INT32);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s ids not a prefix", op->op);
  ref_case_input(c, dtype, (int64_t[]){4, 2}, 2, REF_ANY);
  index_input(c, TF_INT32, (int64_t[]){2}, 1, 0, 2);
  scalar_input(c, TF_INT32, 3);
  ref_case_attr_type(c, "Tindices", TF_INT32);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s negative num_segments", op->op);
  ref_case_input(c, dtype, (int64_t[]){4, 2}, 2, REF_ANY);
  index_input(c, TF_INT64, (int64_t[]){4}, 1, 0, 2);
  scalar_input(c, TF_INT64, -1);
  ref_case_attr_type(c, "Tindices", TF_INT64);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- The nd forms ---------------------------------------------------- */

enum nd_update { ND_ASSIGN, ND_ADD, ND_SUB, ND_MIN, ND_MAX };

static enum nd_update nd_update_of(const char *op)
{
  if (strcmp(op, "TensorScatterUpdate") == 0)
    return ND_ASSIGN;
  if (strcmp(op, "TensorScatterSub") == 0)
    return ND_SUB;
  if (strcmp(op, "TensorScatterMin") == 0)
    return ND_MIN;
  if (strcmp(op, "TensorScatterMax") == 0)
    return ND_MAX;
  return ND_ADD; /* ScatterNd, TensorScatterAdd, ScatterNdNonAliasingAdd */
}

/* The flat row of `out` that index row j of `indices` names (the first k
 * dims of out), or -1 when out of range. */
static int64_t nd_row(const struct ref_tensor *indices, int64_t j, int64_t k,
                      const int64_t *dims)
{
  int64_t row = 0;
  for (int64_t d = 0; d < k; d++) {
    int64_t i = (int64_t)indices->v[j * k + d];
    if (i < 0 || i >= dims[d])
      return -1;
    row = row * dims[d] + i;
  }
  return row;
}

/* The last dim of indices (1 for a vector), after TensorFlow's shape checks
 * of indices against a tensor of `rank` dims; -1 on a bad shape. */
static int64_t nd_depth(const struct ref_tensor *indices, int rank)
{
  if (indices->rank < 1)
    return -1;
  int64_t k = indices->rank > 1 ? indices->dims[indices->rank - 1] : 1;
  return k >= 1 && k <= rank ? k : -1;
}

static int gather_nd_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  const struct ref_tensor *params = &c->inputs[0], *indices = &c->inputs[1];
  if (params->rank < 1 || indices->rank < 1)
    return fail(error, error_len, "params and indices must be at least 1-D");
  int64_t k = indices->dims[indices->rank - 1];
  if (k > params->rank)
    return fail(error, error_len, "index depth exceeds the params' rank");
  int64_t dims[REF_MAX_DIMS];
  int rank = 0;
  int64_t rows = 1, w = 1;
  for (int d = 0; d < indices->rank - 1; d++)
    rows *= dims[rank++] = indices->dims[d];
  for (int d = (int)k; d < params->rank; d++)
    w *= dims[rank++] = params->dims[d];
  if (!ref_tensor_alloc(&out[0], params->dtype, dims, rank))
    return fail(error, error_len, "output rank too high");
  if (rows > 0 && w > 0 && params->elements == 0)
    return fail(error, error_len, "gather from an empty params");
  int lanes = ref_lanes(params->dtype);
  for (int64_t j = 0; j < rows; j++) {
    int64_t row = nd_row(indices, j, k, params->dims);
    for (int64_t e = 0; e < w * lanes; e++)
      out[0].v[j * w * lanes + e] =
          row < 0 ? 0.0 : params->v[row * w * lanes + e];
  }
  return 1;
}

static int scatter_nd_compute(const struct ref_case *c, struct ref_tensor *out,
                              char *error, int error_len)
{
  bool zeros = strcmp(c->op, "ScatterNd") == 0;
  const struct ref_tensor *indices = &c->inputs[zeros ? 0 : 1];
  const struct ref_tensor *updates = &c->inputs[zeros ? 1 : 2];
  int64_t dims[REF_MAX_DIMS];
  int rank;
  TF_DataType dtype = updates->dtype;
  if (zeros) {
    const struct ref_tensor *shape = &c->inputs[2];
    if (shape->rank != 1 || shape->elements > REF_MAX_DIMS)
      return fail(error, error_len, "shape must be a vector");
    rank = (int)shape->elements;
    for (int d = 0; d < rank; d++)
      if ((dims[d] = (int64_t)shape->v[d]) < 0)
        return fail(error, error_len, "negative dimension");
  } else {
    rank = c->inputs[0].rank;
    memcpy(dims, c->inputs[0].dims, sizeof(int64_t) * (size_t)rank);
  }
  if (updates->rank < 1 || rank < 1)
    return fail(error, error_len, "updates and output must be at least 1-D");
  int64_t k = nd_depth(indices, rank);
  if (k < 0)
    return fail(error, error_len, "bad index depth");
  /* updates.shape == indices.shape[:-1] + output.shape[k:] */
  int outer = indices->rank - 1;
  if (updates->rank != outer + rank - (int)k)
    return fail(error, error_len, "updates' rank does not match");
  for (int d = 0; d < outer; d++)
    if (updates->dims[d] != indices->dims[d])
      return fail(error, error_len, "outer dims differ");
  for (int d = outer; d < updates->rank; d++)
    if (updates->dims[d] != dims[k + d - outer])
      return fail(error, error_len, "inner dims differ");
  if (!ref_tensor_alloc(&out[0], dtype, dims, rank))
    return fail(error, error_len, "output rank too high");
  int64_t rows = 1, w = 1;
  for (int d = 0; d < outer; d++)
    rows *= indices->dims[d];
  for (int d = (int)k; d < rank; d++)
    w *= dims[d];
  if (out[0].elements == 0 && updates->elements > 0)
    return fail(error, error_len, "updates for an empty output");
  int lanes = ref_lanes(dtype);
  for (int64_t i = 0; i < out[0].elements * lanes; i++)
    out[0].v[i] = zeros ? 0.0 : c->inputs[0].v[i];
  enum nd_update u = nd_update_of(c->op);
  for (int64_t j = 0; j < rows; j++) {
    int64_t row = nd_row(indices, j, k, dims);
    if (row < 0)
      continue;
    for (int64_t e = 0; e < w * lanes; e++) {
      double *o = &out[0].v[row * w * lanes + e];
      double x = updates->v[j * w * lanes + e], r;
      switch (u) {
      case ND_ASSIGN: r = x; break;
      case ND_SUB: r = *o - x; break;
      case ND_MIN: r = x < *o ? x : *o; break;
      case ND_MAX: r = x > *o ? x : *o; break;
      default: r = *o + x; break;
      }
      *o = ref_round_to(dtype, r);
    }
  }
  return 1;
}

/* Index values as a case's input: `rows` index rows of `k`, row j naming
 * ((j * step) + offset) modulo the product of dims[0..k), with every
 * `bad`-th row (0: none) out of range on one side or the other. */
static void nd_indices(struct ref_case *c, TF_DataType itype,
                       const int64_t *idims, int irank, int64_t k,
                       const int64_t *dims, int64_t step, int64_t bad)
{
  double v[4096];
  int64_t rows = 1, total = 1;
  for (int d = 0; d < irank - 1; d++)
    rows *= idims[d];
  for (int64_t d = 0; d < k; d++)
    total *= dims[d];
  for (int64_t j = 0; j < rows && j * k + k <= 4096; j++) {
    int64_t flat = total > 0 ? (j * step + 1) % total : 0;
    for (int64_t d = k - 1; d >= 0; d--) {
      v[j * k + d] = (double)(dims[d] > 0 ? flat % dims[d] : 0);
      flat = dims[d] > 0 ? flat / dims[d] : 0;
    }
    if (bad > 0 && j % bad == bad - 1)
      v[j * k] = j % (2 * bad) == bad - 1 ? -1.0 : (double)dims[0];
  }
  ref_case_input_values(c, itype, idims, irank, v);
}

struct nd_shape {
  int rank;
  int64_t dims[3];  /* of the tensor scattered into or gathered from */
  int irank;
  int64_t idims[3]; /* of indices, last = k */
  int64_t step, bad;
  TF_DataType itype;
};

static const struct nd_shape nd_shapes[] = {
    {2, {5, 3}, 2, {3, 1}, 4, 0, TF_INT32},       /* rows, a duplicate */
    {2, {4, 3}, 2, {3, 2}, 7, 0, TF_INT64},       /* elements */
    {1, {9}, 1, {4}, 2, 0, TF_INT32},             /* a vector of indices */
    {3, {3, 4, 5}, 3, {2, 2, 1}, 1, 0, TF_INT64}, /* 2-D index batch */
    {3, {3, 4, 37}, 2, {40, 2}, 5, 7, TF_INT32},  /* dropped rows */
    /* More than 512 update rows: the GPU shape's global sort stages. */
    {2, {300, 7}, 2, {600, 1}, 37, 0, TF_INT32},
    /* Rows longer than a CPU device's span (4096), some of them dropped. */
    {2, {6, 4100}, 2, {5, 1}, 1, 2, TF_INT64},
    {2, {0, 3}, 2, {0, 1}, 1, 0, TF_INT32}, /* empty output, no updates */
    {2, {4, 3}, 2, {0, 1}, 1, 0, TF_INT64}, /* no updates */
};

static void nd_case_shapes(const struct nd_shape *s, int64_t *udims,
                           int *urank)
{
  int64_t k = s->idims[s->irank - 1];
  *urank = 0;
  for (int d = 0; d < s->irank - 1; d++)
    udims[(*urank)++] = s->idims[d];
  if (s->irank == 1) { /* a vector of k = 1 indices */
    udims[(*urank)++] = s->idims[0];
    k = 1;
  }
  for (int d = (int)k; d < s->rank; d++)
    udims[(*urank)++] = s->dims[d];
}

static void scatter_nd_cases(const struct ref_op *op, TF_DataType dtype,
                             struct ref_cases *out)
{
  bool zeros = strcmp(op->op, "ScatterNd") == 0;
  for (size_t i = 0; i < sizeof(nd_shapes) / sizeof(nd_shapes[0]); i++) {
    const struct nd_shape *s = &nd_shapes[i];
    int64_t udims[6];
    int urank;
    int64_t k = s->irank == 1 ? 1 : s->idims[s->irank - 1];
    int64_t idims[3] = {s->idims[0], s->idims[1], s->idims[2]};
    int irank = s->irank;
    if (irank == 1) { /* [n] indices of depth 1 are [n, 1] */
      idims[1] = 1;
      irank = 2;
    }
    nd_case_shapes(s, udims, &urank);
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    if (!zeros)
      ref_case_input(c, dtype, s->dims, s->rank, REF_ANY);
    nd_indices(c, s->itype, idims, irank, k, s->dims, s->step, s->bad);
    ref_case_input(c, dtype, udims, urank, REF_ANY);
    if (zeros) {
      double shape[3] = {(double)s->dims[0], (double)s->dims[1],
                         (double)s->dims[2]};
      int64_t n = s->rank;
      ref_case_input_values(c, s->itype, &n, 1, shape);
    }
    ref_case_attr_type(c, "Tindices", s->itype);
  }
  /* TensorFlow's rejections: updates whose outer dims differ from the
   * indices', an index deeper than the tensor, scalar indices. */
  static const struct {
    int64_t idims[2];
    int irank;
    int64_t udims[2];
    int urank;
  } bad[] = {{{3, 1}, 2, {2, 3}, 2}, {{2, 3}, 2, {2}, 1}, {{0}, 0, {3}, 1}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    static const int64_t dims[2] = {5, 3};
    struct ref_case *c = ref_case_add(out, op->op, "%s bad shapes#%zu",
                                      op->op, i);
    if (!zeros)
      ref_case_input(c, dtype, dims, 2, REF_ANY);
    int64_t n = 1;
    for (int d = 0; d < bad[i].irank; d++)
      n *= bad[i].idims[d];
    double zero_rows[8] = {0};
    ref_case_input_values(c, TF_INT32, bad[i].idims, bad[i].irank, zero_rows);
    (void)n;
    ref_case_input(c, dtype, bad[i].udims, bad[i].urank, REF_ANY);
    if (zeros)
      ref_case_input_values(c, TF_INT32, (int64_t[]){2}, 1,
                            (double[]){5, 3});
    ref_case_attr_type(c, "Tindices", TF_INT32);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
  if (zeros) {
    struct ref_case *c = ref_case_add(out, op->op, "%s negative shape",
                                      op->op);
    ref_case_input_values(c, TF_INT32, (int64_t[]){1, 1}, 2, (double[]){0});
    ref_case_input(c, dtype, (int64_t[]){1, 3}, 2, REF_ANY);
    ref_case_input_values(c, TF_INT32, (int64_t[]){2}, 1, (double[]){5, -3});
    ref_case_attr_type(c, "Tindices", TF_INT32);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

static void gather_nd_cases(const struct ref_op *op, TF_DataType dtype,
                            struct ref_cases *out)
{
  for (size_t i = 0; i < sizeof(nd_shapes) / sizeof(nd_shapes[0]); i++) {
    const struct nd_shape *s = &nd_shapes[i];
    int64_t k = s->irank == 1 ? 1 : s->idims[s->irank - 1];
    int64_t idims[3] = {s->idims[0], s->idims[1], s->idims[2]};
    int irank = s->irank;
    if (irank == 1) {
      idims[1] = 1;
      irank = 2;
    }
    /* Gathers from an empty params with indices fail on both devices. */
    if (s->dims[0] == 0)
      continue;
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, s->dims, s->rank, REF_ANY);
    nd_indices(c, s->itype, idims, irank, k, s->dims, s->step, s->bad);
    ref_case_attr_type(c, "Tindices", s->itype);
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s index too deep", op->op);
  ref_case_input(c, dtype, (int64_t[]){5, 3}, 2, REF_ANY);
  ref_case_input_values(c, TF_INT32, (int64_t[]){1, 3}, 2,
                        (double[]){0, 0, 0});
  ref_case_attr_type(c, "Tindices", TF_INT32);
  c->expect_code = TF_INVALID_ARGUMENT;
}

const struct ref_op ref_ops_scatter[] = {
    {"UnsortedSegmentSum", 1e-6, 1e-6, REF_ANY, segment_cases,
     segment_compute},
    {"UnsortedSegmentMax", 0.0, 0.0, REF_ANY, segment_cases, segment_compute},
    {"UnsortedSegmentMin", 0.0, 0.0, REF_ANY, segment_cases, segment_compute},
    {"UnsortedSegmentProd", 1e-6, 1e-6, REF_POSITIVE, segment_cases,
     segment_compute},
    {"GatherNd", 0.0, 0.0, REF_ANY, gather_nd_cases, gather_nd_compute},
    {"ScatterNd", 1e-6, 1e-6, REF_ANY, scatter_nd_cases, scatter_nd_compute},
    {"ScatterNdNonAliasingAdd", 1e-6, 1e-6, REF_ANY, scatter_nd_cases,
     scatter_nd_compute},
    {"TensorScatterUpdate", 0.0, 0.0, REF_ANY, scatter_nd_cases,
     scatter_nd_compute},
    {"TensorScatterAdd", 1e-6, 1e-6, REF_ANY, scatter_nd_cases,
     scatter_nd_compute},
    {"TensorScatterSub", 1e-6, 1e-6, REF_ANY, scatter_nd_cases,
     scatter_nd_compute},
    {"TensorScatterMin", 0.0, 0.0, REF_ANY, scatter_nd_cases,
     scatter_nd_compute},
    {"TensorScatterMax", 0.0, 0.0, REF_ANY, scatter_nd_cases,
     scatter_nd_compute},
    {.op = NULL},
};
