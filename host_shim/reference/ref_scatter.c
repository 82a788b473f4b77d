/* References of the scatter family's segment reductions:
 * UnsortedSegmentSum, UnsortedSegmentMax, UnsortedSegmentMin,
 * UnsortedSegmentProd. (Its resource-variable ops take variable handles,
 * which reference cases cannot express: tests/ops/test_variables.c covers
 * them.)
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

const struct ref_op ref_ops_scatter[] = {
    {"UnsortedSegmentSum", 1e-6, 1e-6, REF_ANY, segment_cases,
     segment_compute},
    {"UnsortedSegmentMax", 0.0, 0.0, REF_ANY, segment_cases, segment_compute},
    {"UnsortedSegmentMin", 0.0, 0.0, REF_ANY, segment_cases, segment_compute},
    {"UnsortedSegmentProd", 1e-6, 1e-6, REF_POSITIVE, segment_cases,
     segment_compute},
    {.op = NULL},
};
