/* References of the fill, gather and select kernel family: Fill, ZerosLike,
 * OnesLike, GatherV2, Select, SelectV2, OneHot, BroadcastTo and Range.
 *
 * Tolerances: every op here moves or picks values without arithmetic, so
 * all are exact, except Range with floats: start + i * delta rounded once
 * to float (the device uses fma), rtol 1e-6.
 *
 * GatherV2 gives zeros for indices outside [0, n): TensorFlow's GPU
 * behaviour, which the device follows (its CPU kernel fails instead).
 * batch_dims (positive or negative) as TensorFlow's GatherOp. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

static bool is_float(TF_DataType t)
{
  return t == TF_FLOAT || t == TF_HALF || t == TF_DOUBLE || t == TF_BFLOAT16;
}

/* Copies element `from` of src to element `to` of dst, every lane. */
static void copy_element(struct ref_tensor *dst, int64_t to,
                         const struct ref_tensor *src, int64_t from)
{
  int lanes = ref_lanes(src->dtype);
  for (int l = 0; l < lanes; l++)
    dst->v[to * lanes + l] = src->v[from * lanes + l];
}

static int fail(char *error, int error_len, const char *why)
{
  snprintf(error, (size_t)error_len, "%s", why);
  return -1;
}

/* A legacy scalar: a scalar or a one-element vector. */
static bool legacy_scalar(const struct ref_tensor *t)
{
  return t->rank == 0 || (t->rank == 1 && t->dims[0] == 1);
}

/* Indices with deterministic values in [lo, hi]. */
static struct ref_tensor *index_input(struct ref_case *c, TF_DataType dtype,
                                      const int64_t *dims, int rank,
                                      int64_t lo, int64_t hi)
{
  struct ref_tensor *t = ref_case_input_values(c, dtype, dims, rank, NULL);
  uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(c->num_inputs + 1);
  for (const char *s = c->label; *s; s++)
    state = (state ^ (unsigned char)*s) * 1099511628211ull;
  for (int64_t i = 0; i < t->elements; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t->v[i] = (double)(lo + (int64_t)((state >> 33) % (uint64_t)(hi - lo + 1)));
  }
  return t;
}

static void int_input(struct ref_case *c, TF_DataType dtype,
                      const int64_t *dims, int rank, const double *values)
{
  ref_case_input_values(c, dtype, dims, rank, values);
}

/* A scalar of value v (a complex one: v + 0.5i). */
static void scalar_input(struct ref_case *c, TF_DataType dtype, double v)
{
  double lanes[2] = {v, 0.5};
  ref_case_input_values(c, dtype, NULL, 0, lanes);
}

/* ---- Fill, ZerosLike, OnesLike --------------------------------------------- */

static int fill_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *dims = &c->inputs[0], *value = &c->inputs[1];
  if (dims->rank > 1 || dims->elements > REF_MAX_DIMS)
    return fail(error, error_len, "dims must be a vector");
  if (!legacy_scalar(value))
    return fail(error, error_len, "value must be a scalar");
  int64_t shape[REF_MAX_DIMS];
  for (int64_t i = 0; i < dims->elements; i++) {
    shape[i] = (int64_t)dims->v[i];
    if (shape[i] < 0)
      return fail(error, error_len, "negative dimension");
  }
  ref_tensor_alloc(&out[0], value->dtype, shape, (int)dims->elements);
  for (int64_t i = 0; i < out[0].elements; i++)
    copy_element(&out[0], i, value, 0);
  return 1;
}

static void fill_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  static const struct {
    int rank;
    double dims[3];
    TF_DataType index_type;
    TF_Code code;
  } shapes[] = {
      {2, {2, 3}, TF_INT32, TF_OK},   {1, {1031}, TF_INT64, TF_OK},
      {0, {0}, TF_INT32, TF_OK},      {2, {4, 0}, TF_INT32, TF_OK},
      {3, {2, 3, 7}, TF_INT64, TF_OK}, {2, {-1, 2}, TF_INT32, TF_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "Fill shape#%zu", i);
    int64_t n = shapes[i].rank;
    int_input(c, shapes[i].index_type, &n, 1, shapes[i].dims);
    ref_case_input(c, dtype, NULL, 0, REF_ANY);
    c->expect_code = shapes[i].code;
  }
  struct ref_case *c;
  if (is_float(dtype)) {
    c = ref_case_add(out, op->op, "Fill NaN");
    int_input(c, TF_INT32, (int64_t[]){2}, 1, (double[]){3, 5});
    scalar_input(c, dtype, NAN);
  }
  c = ref_case_add(out, op->op, "Fill legacy scalar value [1]");
  int_input(c, TF_INT32, (int64_t[]){1}, 1, (double[]){7});
  ref_case_input(c, dtype, (int64_t[]){1}, 1, REF_ANY);
  c = ref_case_add(out, op->op, "Fill matrix dims");
  int_input(c, TF_INT32, (int64_t[]){2, 2}, 2, (double[]){1, 2, 3, 4});
  ref_case_input(c, dtype, NULL, 0, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "Fill vector value");
  int_input(c, TF_INT32, (int64_t[]){1}, 1, (double[]){3});
  ref_case_input(c, dtype, (int64_t[]){2}, 1, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
}

static int like_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  (void)error;
  (void)error_len;
  const struct ref_tensor *x = &c->inputs[0];
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  double v = strcmp(c->op, "OnesLike") == 0 ? 1.0 : 0.0;
  int lanes = ref_lanes(x->dtype);
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i * lanes] = v; /* the imaginary part stays 0 */
  return 1;
}

/* ---- GatherV2 ---------------------------------------------------------------- */

static int gather_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *params = &c->inputs[0], *indices = &c->inputs[1],
                          *axis_t = &c->inputs[2];
  int64_t batch_dims = ref_case_attr_int_or(c, "batch_dims", 0);
  if (params->rank < 1)
    return fail(error, error_len, "params must be at least 1 dimensional");
  if (axis_t->rank != 0)
    return fail(error, error_len, "axis must be scalar");
  int64_t axis = (int64_t)axis_t->v[0];
  if (axis < -params->rank || axis >= params->rank)
    return fail(error, error_len, "axis out of range");
  if (axis < 0)
    axis += params->rank;
  /* TensorFlow's GatherOp: batch_dims in [-rank(indices), rank(indices)],
   * below rank(params), at most axis, leading dims equal. */
  if (batch_dims < -indices->rank || batch_dims > indices->rank)
    return fail(error, error_len, "batch_dims out of range");
  if (batch_dims < 0)
    batch_dims += indices->rank;
  if (batch_dims >= params->rank || axis < batch_dims)
    return fail(error, error_len, "batch_dims too large");
  for (int d = 0; d < batch_dims; d++)
    if (params->dims[d] != indices->dims[d])
      return fail(error, error_len, "batch dims differ");
  int64_t dims[REF_MAX_DIMS * 2];
  int rank = 0;
  int64_t batch = 1, outer = 1, inner = 1, limit = params->dims[axis];
  for (int d = 0; d < batch_dims; d++)
    batch *= dims[rank++] = params->dims[d];
  for (int d = (int)batch_dims; d < axis; d++)
    outer *= dims[rank++] = params->dims[d];
  for (int d = (int)batch_dims; d < indices->rank; d++)
    dims[rank++] = indices->dims[d];
  for (int d = (int)axis + 1; d < params->rank; d++)
    inner *= dims[rank++] = params->dims[d];
  if (!ref_tensor_alloc(&out[0], params->dtype, dims, rank))
    return fail(error, error_len, "output rank too high");
  int lanes = ref_lanes(params->dtype);
  int64_t nb = batch > 0 ? indices->elements / batch : 0;
  for (int64_t b = 0; b < batch; b++)
    for (int64_t o = 0; o < outer; o++)
      for (int64_t j = 0; j < nb; j++) {
        int64_t idx = (int64_t)indices->v[b * nb + j];
        for (int64_t k = 0; k < inner * lanes; k++) {
          int64_t at = (((b * outer + o) * nb + j) * inner) * lanes + k;
          out[0].v[at] =
              idx >= 0 && idx < limit
                  ? params->v[(((b * outer + o) * limit + idx) * inner) *
                                  lanes + k]
                  : 0.0;
        }
      }
  return 1;
}

static void gather_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  static const struct {
    int p_rank;
    int64_t p_dims[4];
    int i_rank;
    int64_t i_dims[3];
    int64_t axis;
    TF_DataType itype, atype;
    int64_t lo, hi_extra; /* index range [lo, dim - 1 + hi_extra] */
    int64_t batch_dims;
    TF_Code code;
  } shapes[] = {
      {2, {5, 3}, 1, {4}, 0, TF_INT32, TF_INT32, 0, 0, 0, TF_OK},
      {3, {2, 7, 3}, 2, {2, 2}, 1, TF_INT64, TF_INT32, 0, 0, 0, TF_OK},
      {3, {3, 4, 5}, 1, {6}, -1, TF_INT32, TF_INT64, 0, 0, 0, TF_OK},
      {2, {7, 3}, 0, {0}, 0, TF_INT32, TF_INT32, 0, 0, 0, TF_OK},
      {1, {1031}, 1, {1031}, 0, TF_INT64, TF_INT64, 0, 0, 0, TF_OK},
      /* out of range: zeros */
      {2, {3, 9}, 1, {13}, 1, TF_INT32, TF_INT32, -3, 4, 0, TF_OK},
      {2, {4, 6}, 1, {5}, -2, TF_INT16, TF_INT32, 0, 0, 0, TF_OK},
      {2, {5, 3}, 1, {0}, 0, TF_INT32, TF_INT32, 0, 0, 0, TF_OK},
      /* nothing to pick from */
      {2, {0, 3}, 1, {2}, 0, TF_INT32, TF_INT32, 0, 2, 0, TF_OK},
      /* rows of 37 (the CPU shape's row kernel) */
      {2, {11, 37}, 1, {9}, 0, TF_INT64, TF_INT32, -1, 1, 0, TF_OK},
      {2, {5, 3}, 1, {2}, 2, TF_INT32, TF_INT32, 0, 0, 0, TF_INVALID_ARGUMENT},
      {2, {5, 3}, 1, {2}, -3, TF_INT32, TF_INT32, 0, 0, 0, TF_INVALID_ARGUMENT},
      /* batch_dims */
      {2, {3, 5}, 2, {3, 4}, 1, TF_INT32, TF_INT32, 0, 0, 1, TF_OK},
      {3, {2, 3, 5}, 2, {2, 4}, 2, TF_INT64, TF_INT32, -1, 1, 1, TF_OK},
      {4, {2, 3, 7, 2}, 3, {2, 3, 5}, 2, TF_INT32, TF_INT64, 0, 0, 2, TF_OK},
      {4, {2, 3, 7, 2}, 3, {2, 3, 5}, 2, TF_INT32, TF_INT32, 0, 0, -1, TF_OK},
      {3, {2, 3, 17}, 2, {2, 3}, -1, TF_INT32, TF_INT32, 0, 0, -1, TF_OK},
      {3, {4, 6, 19}, 2, {4, 9}, 1, TF_INT64, TF_INT32, -2, 3, 1, TF_OK},
      {3, {2, 0, 3}, 2, {2, 4}, 1, TF_INT32, TF_INT32, 0, 1, 1, TF_OK},
      {2, {0, 5}, 2, {0, 4}, 1, TF_INT32, TF_INT32, 0, 0, 1, TF_OK},
      {3, {2, 3, 5}, 2, {2, 3}, 2, TF_INT32, TF_INT32, 0, 0, 2, TF_OK},
      /* batch_dims errors: out of [-rank(indices), rank(indices)], not
       * below rank(params), above axis, leading dims differ */
      {2, {3, 5}, 2, {3, 4}, 1, TF_INT32, TF_INT32, 0, 0, 3,
       TF_INVALID_ARGUMENT},
      {2, {3, 5}, 2, {3, 4}, 1, TF_INT32, TF_INT32, 0, 0, -3,
       TF_INVALID_ARGUMENT},
      {2, {3, 5}, 2, {3, 5}, 1, TF_INT32, TF_INT32, 0, 0, 2,
       TF_INVALID_ARGUMENT},
      {3, {2, 3, 5}, 2, {2, 3}, 0, TF_INT32, TF_INT32, 0, 0, 1,
       TF_INVALID_ARGUMENT},
      {2, {3, 5}, 2, {4, 4}, 1, TF_INT32, TF_INT32, 0, 0, 1,
       TF_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "GatherV2 shape#%zu", i);
    ref_case_input(c, dtype, shapes[i].p_dims, shapes[i].p_rank, REF_ANY);
    int64_t axis = shapes[i].axis;
    bool bad_axis = axis >= shapes[i].p_rank || axis < -shapes[i].p_rank;
    int64_t dim = bad_axis ? 1
                           : shapes[i].p_dims[axis < 0 ? axis + shapes[i].p_rank
                                                       : axis];
    index_input(c, shapes[i].itype, shapes[i].i_dims, shapes[i].i_rank,
                shapes[i].lo, dim - 1 + shapes[i].hi_extra);
    scalar_input(c, shapes[i].atype, (double)axis);
    if (shapes[i].batch_dims != 0)
      ref_case_attr_int(c, "batch_dims", shapes[i].batch_dims);
    c->expect_code = bad_axis ? TF_INVALID_ARGUMENT : shapes[i].code;
  }
  struct ref_case *c = ref_case_add(out, op->op, "GatherV2 scalar params");
  ref_case_input(c, dtype, NULL, 0, REF_ANY);
  index_input(c, TF_INT32, (int64_t[]){2}, 1, 0, 0);
  scalar_input(c, TF_INT32, 0);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "GatherV2 vector axis");
  ref_case_input(c, dtype, (int64_t[]){5, 3}, 2, REF_ANY);
  index_input(c, TF_INT32, (int64_t[]){2}, 1, 0, 4);
  int_input(c, TF_INT32, (int64_t[]){1}, 1, (double[]){0});
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- Select, SelectV2 ---------------------------------------------------------- */

static bool same_shape(const struct ref_tensor *a, const struct ref_tensor *b)
{
  return a->rank == b->rank &&
         memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* Output index i of `dims` mapped into `t`, right-aligned with broadcast. */
static int64_t bcast_index(const struct ref_tensor *t, const int64_t *dims,
                           int rank, int64_t i)
{
  int64_t index = 0, stride = 1;
  for (int d = rank - 1; d >= 0; d--) {
    int64_t coord = i % dims[d];
    i /= dims[d];
    int td = d - (rank - t->rank);
    if (td < 0)
      continue;
    if (t->dims[td] != 1)
      index += coord * stride;
    stride *= t->dims[td];
  }
  return index;
}

static int select_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *cond = &c->inputs[0], *t = &c->inputs[1],
                          *e = &c->inputs[2];
  int64_t dims[REF_MAX_DIMS];
  int rank = 0;
  if (strcmp(c->op, "Select") == 0) {
    if (cond->rank == 0 || (cond->rank == 1 && t->rank != 1)) {
      if (!same_shape(t, e))
        return fail(error, error_len, "then and else differ");
      if (cond->rank == 1 && (t->rank < 1 || t->dims[0] != cond->dims[0]))
        return fail(error, error_len, "batch size mismatch");
    } else if (!same_shape(cond, t) || !same_shape(cond, e)) {
      return fail(error, error_len, "shapes differ");
    }
    rank = t->rank;
    memcpy(dims, t->dims, sizeof(int64_t) * (size_t)rank);
    ref_tensor_alloc(&out[0], t->dtype, dims, rank);
    int64_t rows = cond->rank == 1 && t->rank != 1 ? cond->dims[0] : 0;
    for (int64_t i = 0; i < out[0].elements; i++) {
      int64_t ci = cond->rank == 0 ? 0
                   : rows > 0      ? i / (t->elements / rows)
                                   : i;
      copy_element(&out[0], i, cond->v[ci] != 0 ? t : e, i);
    }
    return 1;
  }
  const struct ref_tensor *ops[3] = {cond, t, e};
  for (int k = 0; k < 3; k++)
    rank = ops[k]->rank > rank ? ops[k]->rank : rank;
  for (int d = 0; d < rank; d++) {
    dims[d] = 1;
    for (int k = 0; k < 3; k++) {
      int kd = d - (rank - ops[k]->rank);
      int64_t v = kd < 0 ? 1 : ops[k]->dims[kd];
      if (v == dims[d] || v == 1)
        continue;
      if (dims[d] != 1)
        return fail(error, error_len, "not broadcastable");
      dims[d] = v;
    }
  }
  ref_tensor_alloc(&out[0], t->dtype, dims, rank);
  for (int64_t i = 0; i < out[0].elements; i++)
    if (cond->v[bcast_index(cond, dims, rank, i)] != 0)
      copy_element(&out[0], i, t, bcast_index(t, dims, rank, i));
    else
      copy_element(&out[0], i, e, bcast_index(e, dims, rank, i));
  return 1;
}

struct shape {
  int rank;
  int64_t dims[3];
};

static void select_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  bool v2 = strcmp(op->op, "SelectV2") == 0;
  /* clang-format off */
  static const struct {
    struct shape c, t, e;
    TF_Code v1, v2;
  } shapes[] = {
      {{2, {3, 5}}, {2, {3, 5}}, {2, {3, 5}}, TF_OK, TF_OK},
      {{1, {1031}}, {1, {1031}}, {1, {1031}}, TF_OK, TF_OK},
      {{0, {0}}, {2, {3, 5}}, {2, {3, 5}}, TF_OK, TF_OK},
      {{1, {4}}, {3, {4, 3, 2}}, {3, {4, 3, 2}}, TF_OK, TF_INVALID_ARGUMENT},
      {{0, {0}}, {0, {0}}, {0, {0}}, TF_OK, TF_OK},
      {{2, {0, 3}}, {2, {0, 3}}, {2, {0, 3}}, TF_OK, TF_OK},
      {{2, {3, 5}}, {2, {3, 5}}, {2, {5, 3}}, TF_INVALID_ARGUMENT,
       TF_INVALID_ARGUMENT},
      {{1, {3}}, {2, {4, 2}}, {2, {4, 2}}, TF_INVALID_ARGUMENT,
       TF_INVALID_ARGUMENT},
      {{1, {4}}, {2, {4, 2}}, {2, {4, 3}}, TF_INVALID_ARGUMENT,
       TF_INVALID_ARGUMENT},
      {{2, {5, 1}}, {2, {5, 3}}, {0, {0}}, TF_INVALID_ARGUMENT, TF_OK},
      {{1, {3}}, {2, {2, 1}}, {2, {1, 3}}, TF_INVALID_ARGUMENT, TF_OK},
      {{3, {2, 1, 4}}, {2, {3, 1}}, {1, {4}}, TF_INVALID_ARGUMENT, TF_OK},
      {{1, {2}}, {1, {3}}, {1, {1}}, TF_INVALID_ARGUMENT, TF_INVALID_ARGUMENT},
      /* A CPU device's select_vec16: each operand whole or a single
       * element, 16-wide with tails; the last SelectV2 broadcasts. */
      {{2, {3, 37}}, {2, {3, 37}}, {0, {0}}, TF_INVALID_ARGUMENT, TF_OK},
      {{0, {0}}, {1, {40}}, {1, {40}}, TF_OK, TF_OK},
      {{2, {2, 37}}, {0, {0}}, {2, {1, 1}}, TF_INVALID_ARGUMENT, TF_OK},
      {{1, {37}}, {2, {37, 1}}, {2, {37, 1}}, TF_OK, TF_OK},
      /* A CPU device's select_rows (innermost collapsed dim of 16 or
       * more): each operand's innermost stride 1 or 0 in turn, a condition
       * constant along the row (a copy or a fill), and rows of two spans
       * (4096 elements each at most). */
      {{2, {3, 37}}, {1, {37}}, {2, {3, 37}}, TF_INVALID_ARGUMENT, TF_OK},
      {{3, {2, 3, 20}}, {3, {2, 1, 20}}, {0, {0}}, TF_INVALID_ARGUMENT, TF_OK},
      {{1, {20}}, {2, {4, 1}}, {2, {4, 20}}, TF_INVALID_ARGUMENT, TF_OK},
      {{2, {5, 20}}, {2, {5, 1}}, {2, {5, 1}}, TF_INVALID_ARGUMENT, TF_OK},
      {{2, {3, 1}}, {2, {3, 40}}, {1, {40}}, TF_INVALID_ARGUMENT, TF_OK},
      {{2, {4, 1}}, {0, {0}}, {2, {4, 33}}, TF_INVALID_ARGUMENT, TF_OK},
      {{2, {6, 1}}, {2, {6, 33}}, {0, {0}}, TF_INVALID_ARGUMENT, TF_OK},
      {{2, {2, 5000}}, {1, {5000}}, {2, {2, 5000}}, TF_INVALID_ARGUMENT,
       TF_OK},
      {{2, {3, 1}}, {2, {3, 5000}}, {1, {5000}}, TF_INVALID_ARGUMENT, TF_OK},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, TF_BOOL, shapes[i].c.dims, shapes[i].c.rank, REF_BOOL);
    ref_case_input(c, dtype, shapes[i].t.dims, shapes[i].t.rank, REF_ANY);
    ref_case_input(c, dtype, shapes[i].e.dims, shapes[i].e.rank, REF_ANY);
    c->expect_code = v2 ? shapes[i].v2 : shapes[i].v1;
  }
}

/* ---- OneHot ---------------------------------------------------------------------- */

static int one_hot_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct ref_tensor *indices = &c->inputs[0], *depth_t = &c->inputs[1],
                          *on = &c->inputs[2], *off = &c->inputs[3];
  int64_t axis = ref_case_attr_int_or(c, "axis", -1);
  if (!(axis == -1 || (axis >= 0 && axis <= indices->rank)))
    return fail(error, error_len, "bad axis");
  if (depth_t->rank != 0 || on->rank != 0 || off->rank != 0)
    return fail(error, error_len, "not scalars");
  int64_t depth = (int64_t)depth_t->v[0];
  if (depth < 0)
    return fail(error, error_len, "negative depth");
  if (axis == -1)
    axis = indices->rank;
  int64_t dims[REF_MAX_DIMS];
  int64_t suffix = 1;
  for (int d = 0, j = 0; d <= indices->rank; d++) {
    if (d == axis) {
      dims[d] = depth;
      continue;
    }
    dims[d] = indices->dims[j++];
    if (d > axis)
      suffix *= dims[d];
  }
  if (!ref_tensor_alloc(&out[0], on->dtype, dims, indices->rank + 1))
    return fail(error, error_len, "rank too high");
  for (int64_t i = 0; i < out[0].elements; i++) {
    int64_t s = i % suffix, r = i / suffix;
    int64_t d = r % depth, p = r / depth;
    copy_element(&out[0], i,
                 (int64_t)indices->v[p * suffix + s] == d ? on : off, 0);
  }
  return 1;
}

static void one_hot_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  static const struct {
    int rank;
    int64_t dims[2];
    TF_DataType itype;
    int64_t depth, axis;
    TF_Code code;
  } shapes[] = {
      {1, {6}, TF_INT32, 4, -1, TF_OK},
      {2, {2, 3}, TF_INT64, 5, 0, TF_OK},
      {2, {2, 3}, TF_UINT8, 3, 1, TF_OK},
      {2, {3, 7}, TF_INT8, 4, 2, TF_OK},
      {0, {0}, TF_INT32, 7, -1, TF_OK},
      {1, {1031}, TF_INT32, 3, -1, TF_OK},
      {1, {5}, TF_INT64, 0, -1, TF_OK},
      {1, {0}, TF_INT32, 3, 0, TF_OK},
      {1, {5}, TF_INT32, -1, -1, TF_INVALID_ARGUMENT},
      {1, {5}, TF_INT32, 3, 2, TF_INVALID_ARGUMENT},
      {1, {5}, TF_INT32, 3, -2, TF_INVALID_ARGUMENT},
      /* A CPU device's rows (the last axis): rows of a vector and more,
       * and of two spans (4096 elements each at most). */
      {2, {3, 5}, TF_INT64, 40, -1, TF_OK},
      {1, {7}, TF_INT32, 4100, -1, TF_OK},
  };
  double on = dtype == TF_BOOL ? 1 : 5.5, off = dtype == TF_BOOL ? 0 : -2;
  if (!is_float(dtype) && dtype != TF_BOOL)
    on = 5;
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "OneHot shape#%zu", i);
    int64_t depth = shapes[i].depth;
    /* Include negative and too-large indices (except for uint8). */
    int64_t lo = shapes[i].itype == TF_UINT8 ? 0 : -1;
    index_input(c, shapes[i].itype, shapes[i].dims, shapes[i].rank, lo,
                depth > 0 ? depth : 1);
    scalar_input(c, TF_INT32, (double)depth);
    scalar_input(c, dtype, i % 2 ? off : on);
    scalar_input(c, dtype, i % 2 ? on : off);
    ref_case_attr_int(c, "axis", shapes[i].axis);
    c->expect_code = shapes[i].code;
  }
  struct ref_case *c = ref_case_add(out, op->op, "OneHot vector on_value");
  index_input(c, TF_INT32, (int64_t[]){3}, 1, 0, 2);
  scalar_input(c, TF_INT32, 3);
  ref_case_input(c, dtype, (int64_t[]){2}, 1, REF_ANY);
  scalar_input(c, dtype, off);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- BroadcastTo ------------------------------------------------------------------- */

static int broadcast_to_compute(const struct ref_case *c,
                                struct ref_tensor *out, char *error,
                                int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *shape = &c->inputs[1];
  if (shape->rank != 1 || shape->elements > REF_MAX_DIMS ||
      shape->elements < x->rank)
    return fail(error, error_len, "bad shape");
  int rank = (int)shape->elements;
  int64_t dims[REF_MAX_DIMS];
  for (int d = 0; d < rank; d++) {
    dims[d] = (int64_t)shape->v[d];
    int xd = d - (rank - x->rank);
    if (xd >= 0 && x->dims[xd] != 1 && x->dims[xd] != dims[d])
      return fail(error, error_len, "not broadcastable");
  }
  ref_tensor_alloc(&out[0], x->dtype, dims, rank);
  for (int64_t i = 0; i < out[0].elements; i++)
    copy_element(&out[0], i, x, bcast_index(x, dims, rank, i));
  return 1;
}

static void broadcast_to_cases(const struct ref_op *op, TF_DataType dtype,
                               struct ref_cases *out)
{
  static const struct {
    struct shape in;
    int rank;
    double dims[3];
    TF_DataType stype;
    TF_Code code;
  } shapes[] = {
      {{1, {3}}, 2, {2, 3}, TF_INT32, TF_OK},
      {{2, {2, 1}}, 2, {2, 5}, TF_INT64, TF_OK},
      {{0, {0}}, 2, {4, 3}, TF_INT32, TF_OK},
      {{1, {1031}}, 2, {2, 1031}, TF_INT32, TF_OK},
      {{3, {1, 3, 1}}, 3, {2, 3, 4}, TF_INT32, TF_OK},
      {{2, {3, 5}}, 2, {3, 5}, TF_INT64, TF_OK},
      {{2, {0, 3}}, 3, {2, 0, 3}, TF_INT32, TF_OK},
      {{0, {0}}, 0, {0}, TF_INT32, TF_OK},
      {{1, {3}}, 1, {4}, TF_INT32, TF_INVALID_ARGUMENT},
      {{2, {2, 3}}, 1, {3}, TF_INT32, TF_INVALID_ARGUMENT},
      /* A CPU device's rows (an innermost collapsed dim of 16 or more):
       * filled from one element, copied, over several outer dims, and of
       * two spans (4096 elements each at most). */
      {{2, {2, 1}}, 2, {2, 40}, TF_INT32, TF_OK},
      {{3, {3, 1, 20}}, 3, {3, 4, 20}, TF_INT32, TF_OK},
      {{2, {1, 17}}, 3, {2, 5, 17}, TF_INT64, TF_OK},
      {{1, {1}}, 1, {5000}, TF_INT32, TF_OK},
      {{1, {4100}}, 2, {3, 4100}, TF_INT32, TF_OK},
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "BroadcastTo shape#%zu", i);
    ref_case_input(c, dtype, shapes[i].in.dims, shapes[i].in.rank, REF_ANY);
    int64_t n = shapes[i].rank;
    int_input(c, shapes[i].stype, &n, 1, shapes[i].dims);
    c->expect_code = shapes[i].code;
  }
}

/* ---- Range --------------------------------------------------------------------------- */

static int range_compute(const struct ref_case *c, struct ref_tensor *out,
                         char *error, int error_len)
{
  for (int j = 0; j < 3; j++)
    if (!legacy_scalar(&c->inputs[j]))
      return fail(error, error_len, "not a scalar");
  TF_DataType dtype = c->inputs[0].dtype;
  double start = c->inputs[0].v[0], limit = c->inputs[1].v[0],
         delta = c->inputs[2].v[0];
  if (delta == 0 || (delta > 0 && start > limit) ||
      (delta < 0 && start < limit))
    return fail(error, error_len, "bad range");
  int64_t size;
  if (dtype == TF_FLOAT) {
    /* Sized in float, as TensorFlow does. */
    float q = ((float)limit - (float)start) / (float)delta;
    size = (int64_t)ceilf(fabsf(q));
  } else {
    size = (int64_t)((fabs(limit - start) + fabs(delta) - 1) / fabs(delta));
  }
  ref_tensor_alloc(&out[0], dtype, &size, 1);
  for (int64_t i = 0; i < size; i++)
    out[0].v[i] = ref_round_to(dtype, start + (double)i * delta);
  return 1;
}

static void range_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  static const struct {
    double start, limit, delta;
    bool fractional;
    TF_Code code;
  } ranges[] = {
      {0, 10, 1, false, TF_OK},      {5, -3, -2, false, TF_OK},
      {0, 7, 3, false, TF_OK},       {0, 1031, 1, false, TF_OK},
      {-4, 1027, 7, false, TF_OK},   {3, 3, 1, false, TF_OK},
      {4, 4, -2, false, TF_OK},      {0.5, 10, 0.25, true, TF_OK},
      {1, 2, 0.1, true, TF_OK},      {10, -3, -1.5, true, TF_OK},
      {0, 5, 0, false, TF_INVALID_ARGUMENT},
      {5, 1, 1, false, TF_INVALID_ARGUMENT},
      {1, 5, -1, false, TF_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
    if (ranges[i].fractional && dtype != TF_FLOAT)
      continue;
    struct ref_case *c = ref_case_add(out, op->op, "Range #%zu", i);
    scalar_input(c, dtype, ranges[i].start);
    scalar_input(c, dtype, ranges[i].limit);
    scalar_input(c, dtype, ranges[i].delta);
    c->expect_code = ranges[i].code;
  }
  struct ref_case *c = ref_case_add(out, op->op, "Range legacy [1] start");
  ref_case_input_values(c, dtype, (int64_t[]){1}, 1, (double[]){2});
  scalar_input(c, dtype, 9);
  scalar_input(c, dtype, 2);
  c = ref_case_add(out, op->op, "Range vector start");
  ref_case_input_values(c, dtype, (int64_t[]){2}, 1, (double[]){2, 3});
  scalar_input(c, dtype, 9);
  scalar_input(c, dtype, 2);
  c->expect_code = TF_INVALID_ARGUMENT;
}

#define EXACT 0.0, 0.0

const struct ref_op ref_ops_gather[] = {
    {"Fill", EXACT, REF_ANY, fill_cases, fill_compute},
    {"ZerosLike", EXACT, REF_ANY, ref_cases_unary, like_compute},
    {"OnesLike", EXACT, REF_ANY, ref_cases_unary, like_compute},
    {"GatherV2", EXACT, REF_ANY, gather_cases, gather_compute},
    {"Select", EXACT, REF_ANY, select_cases, select_compute},
    {"SelectV2", EXACT, REF_ANY, select_cases, select_compute},
    {"OneHot", EXACT, REF_ANY, one_hot_cases, one_hot_compute},
    {"BroadcastTo", EXACT, REF_ANY, broadcast_to_cases, broadcast_to_compute},
    {"Range", 1e-6, 1e-6, REF_ANY, range_cases, range_compute},
    {.op = NULL},
};
