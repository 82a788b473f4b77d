/* References of the data-movement kernel family (and NoOp).
 *
 * Tolerances: none. These ops copy elements, so every output must equal
 * the reference exactly for every dtype (rtol = atol = 0; the ops suite
 * still widens half's tolerance, which exact copies do not need).
 *
 * Data inputs are filled with distinct, exactly representable values (a
 * different sequence per input) so that a wrong index cannot go unseen;
 * 64-bit integer data uses values above 2^32 so that all 8 bytes move.
 * Every op has cases of rank 9 to 12 whose dims do not collapse, so that
 * the kernels split them into several launches. Host-memory
 * shape arguments (perm, axis, begin, ...) are int32 inputs, int64 in one
 * case per op. The StridedSlice reference follows Python's slice.indices
 * over the sparse spec, independently of kernels/shape.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

/* ---- Case helpers -------------------------------------------------------- */

/* Input `which` of a case: distinct values of the dtype. */
static struct ref_tensor *data(struct ref_case *c, TF_DataType dtype,
                               const int64_t *dims, int rank)
{
  struct ref_tensor *t = ref_case_input_values(c, dtype, dims, rank, NULL);
  int64_t k = c->num_inputs;
  /* Complex: every lane (real, imaginary) a value of its own. */
  for (int64_t i = 0; i < t->elements * ref_lanes(dtype); i++) {
    int64_t h = i * 7919 + k * 104729;
    double v;
    switch (dtype) {
    case TF_INT8: v = (double)(h % 255 - 127); break;
    case TF_UINT8: v = (double)(h % 256); break;
    case TF_INT16: v = (double)(h % 65535 - 32767); break;
    case TF_UINT16: v = (double)(h % 65536); break;
    case TF_INT32: v = (double)(h % 2000003 - 1000000); break;
    case TF_UINT32: v = (double)(h % 4000000007); break;
    case TF_INT64: v = (double)(h % 2000003 - 1000000) * 4294967296.0 + 7; break;
    case TF_UINT64: v = (double)(h % 2000003) * 4294967296.0 + 7; break;
    case TF_BOOL: v = (h % 3) != 0; break;
    /* Multiples of 1/64 in [-3, 3]: exact in half, bfloat16 and float
     * (complex: the real part, see reference.c). */
    default: v = (double)(h % 385 - 192) / 64.0; break;
    }
    t->v[i] = ref_round_to(dtype, v);
  }
  return t;
}

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})
#define N(...) ((int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/* A host-memory int vector (int32 unless `wide`). */
static void ints(struct ref_case *c, int64_t n, const double *v, bool wide)
{
  ref_case_input_values(c, wide ? TF_INT64 : TF_INT32, &n, 1, v);
}

/* An index vector of another integer width (StridedSlice's Index may be
 * int16, SplitV's Tlen int8). */
static void ints_of(struct ref_case *c, TF_DataType itype, int64_t n,
                    const double *v)
{
  ref_case_input_values(c, itype, &n, 1, v);
}

static void scalar_int(struct ref_case *c, double v, bool wide)
{
  ref_case_input_values(c, wide ? TF_INT64 : TF_INT32, NULL, 0, &v);
}

static int fail(char *error, int error_len, const char *what)
{
  snprintf(error, (size_t)error_len, "%s", what);
  return -1;
}

static int64_t at(const struct ref_tensor *t, int64_t i)
{
  return (int64_t)t->v[i];
}

/* dst element `to` = src element `from`, every lane (complex: two). */
static void put(struct ref_tensor *dst, int64_t to, const struct ref_tensor *src,
                int64_t from)
{
  int lanes = ref_lanes(src->dtype);
  for (int l = 0; l < lanes; l++)
    dst->v[to * lanes + l] = src->v[from * lanes + l];
}

/* dst element `to` = the scalar tensor c, or zero when c is NULL. */
static void put_value(struct ref_tensor *dst, int64_t to,
                      const struct ref_tensor *c)
{
  int lanes = ref_lanes(dst->dtype);
  for (int l = 0; l < lanes; l++)
    dst->v[to * lanes + l] = c != NULL ? c->v[l] : 0.0;
}

static void strides_of(const int64_t *dims, int rank, int64_t *strides)
{
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    strides[d] = s;
    s *= dims[d];
  }
}

/* Coordinates of flat index i. */
static void unravel(int64_t i, const int64_t *dims, int rank, int64_t *coord)
{
  for (int d = rank - 1; d >= 0; d--) {
    coord[d] = dims[d] ? i % dims[d] : 0;
    i = dims[d] ? i / dims[d] : 0;
  }
}

/* ---- Transpose ---------------------------------------------------------- */

static int transpose_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *p = &c->inputs[1];
  int rank = x->rank;
  int64_t dims[REF_MAX_DIMS], in_strides[REF_MAX_DIMS], coord[REF_MAX_DIMS];
  bool seen[REF_MAX_DIMS] = {false};
  if (p->elements != rank)
    return fail(error, error_len, "perm size");
  for (int i = 0; i < rank; i++) {
    int64_t d = at(p, i);
    if (d < 0 || d >= rank || seen[d])
      return fail(error, error_len, "bad perm");
    seen[d] = true;
    dims[i] = x->dims[d];
  }
  strides_of(x->dims, rank, in_strides);
  ref_tensor_alloc(&out[0], x->dtype, dims, rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    unravel(i, dims, rank, coord);
    int64_t xi = 0;
    for (int d = 0; d < rank; d++)
      xi += coord[d] * in_strides[at(p, d)];
    put(&out[0], i, x, xi);
  }
  return 1;
}

static void transpose_case(struct ref_cases *out, TF_DataType dtype,
                           const char *label, const int64_t *dims, int rank,
                           const double *perm, bool wide)
{
  struct ref_case *c = ref_case_add(out, "Transpose", "Transpose %s", label);
  data(c, dtype, dims, rank);
  /* "too long" cases pass one more perm entry than the rank. */
  ints(c, rank + (strstr(label, "too long") != NULL), perm, wide);
}

static void transpose_cases(const struct ref_op *op, TF_DataType dtype,
                            struct ref_cases *out)
{
  (void)op;
  transpose_case(out, dtype, "scalar", NULL, 0, NULL, false);
  transpose_case(out, dtype, "[7]", D(7), 1, V(0), false);
  transpose_case(out, dtype, "[3,5] 2-D", D(3, 5), 2, V(1, 0), false);
  transpose_case(out, dtype, "[1031,3] odd", D(1031, 3), 2, V(1, 0), false);
  transpose_case(out, dtype, "[13,37] tiles", D(13, 37), 2, V(1, 0), false);
  transpose_case(out, dtype, "[2,3,4] (2,0,1)", D(2, 3, 4), 3, V(2, 0, 1),
                 true);
  transpose_case(out, dtype, "[2,3,4,5] (3,1,2,0)", D(2, 3, 4, 5), 4,
                 V(3, 1, 2, 0), false);
  transpose_case(out, dtype, "[2,1,3] size-1 swap", D(2, 1, 3), 3, V(1, 0, 2),
                 false);
  transpose_case(out, dtype, "identity", D(4, 3), 2, V(0, 1), false);
  transpose_case(out, dtype, "empty [0,3]", D(0, 3), 2, V(1, 0), false);
  transpose_case(out, dtype, "[37,45] tiles", D(37, 45), 2, V(1, 0), false);
  transpose_case(out, dtype, "[3,70,33] batched", D(3, 70, 33), 3, V(0, 2, 1),
                 false);
  transpose_case(out, dtype, "rank 9 reversed", D(2, 3, 2, 2, 3, 2, 2, 3, 2), 9,
                 V(8, 7, 6, 5, 4, 3, 2, 1, 0), false);
  transpose_case(out, dtype, "rank 10 shuffled", D(2, 3, 2, 2, 3, 2, 2, 1, 3, 2),
                 10, V(3, 9, 0, 6, 2, 8, 5, 1, 7, 4), true);
  transpose_case(out, dtype, "rank 12 reversed",
                 D(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2), 12,
                 V(11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), false);
  transpose_case(out, dtype, "rank 11 pairs swapped",
                 D(2, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2), 11,
                 V(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 10), false);
  transpose_case(out, dtype, "perm too long", D(4, 3), 2, V(0, 1, 2), false);
  out->items[out->count - 1].expect_code = TF_INVALID_ARGUMENT;
  transpose_case(out, dtype, "perm repeats", D(4, 3), 2, V(0, 0), false);
  out->items[out->count - 1].expect_code = TF_INVALID_ARGUMENT;
  transpose_case(out, dtype, "perm out of range", D(4, 3), 2, V(0, 2), false);
  out->items[out->count - 1].expect_code = TF_INVALID_ARGUMENT;
}

/* ---- ConcatV2, Pack ---------------------------------------------------- */

static int concat_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  int n = c->num_inputs - 1;
  const struct ref_tensor *first = &c->inputs[0];
  int rank = first->rank;
  int64_t cd = at(&c->inputs[n], 0);
  int64_t axis = cd < 0 ? cd + rank : cd;
  if (!((axis >= 0 && axis < rank) || cd == 0))
    return fail(error, error_len, "axis");
  if (rank == 0)
    return fail(error, error_len, "Can't concatenate scalars");
  int64_t dims[REF_MAX_DIMS], coord[REF_MAX_DIMS];
  int out_rank = rank ? rank : 1;
  memcpy(dims, first->dims, sizeof(dims));
  dims[axis] = 0;
  for (int k = 0; k < n; k++) {
    const struct ref_tensor *t = &c->inputs[k];
    if (t->rank != rank)
      return fail(error, error_len, "ranks");
    for (int d = 0; d < rank; d++)
      if (d != axis && t->dims[d] != first->dims[d])
        return fail(error, error_len, "dims");
    dims[axis] += rank ? t->dims[axis] : 1;
  }
  ref_tensor_alloc(&out[0], first->dtype, dims, out_rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    unravel(i, dims, out_rank, coord);
    int k = 0;
    int64_t a = coord[axis];
    while (a >= (rank ? c->inputs[k].dims[axis] : 1)) {
      a -= rank ? c->inputs[k].dims[axis] : 1;
      k++;
    }
    const struct ref_tensor *t = &c->inputs[k];
    if (rank == 0) {
      put(&out[0], i, t, 0);
      continue;
    }
    coord[axis] = a;
    int64_t strides[REF_MAX_DIMS], xi = 0;
    strides_of(t->dims, rank, strides);
    for (int d = 0; d < rank; d++)
      xi += coord[d] * strides[d];
    put(&out[0], i, t, xi);
  }
  return 1;
}

/* Inputs of the shapes given (count of them), then the axis. */
static struct ref_case *concat_case(struct ref_cases *out, TF_DataType dtype,
                                    const char *label, int count,
                                    const int64_t *const *shapes, int rank,
                                    double axis, bool wide)
{
  struct ref_case *c = ref_case_add(out, "ConcatV2", "ConcatV2 %s", label);
  for (int i = 0; i < count; i++)
    data(c, dtype, shapes[i], rank);
  scalar_int(c, axis, wide);
  return c;
}

#define SHAPES(...) ((const int64_t *const[]){__VA_ARGS__})

static void concat_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  (void)op;
  concat_case(out, dtype, "axis 0", 2, SHAPES(D(2, 3), D(4, 3)), 2, 0, false);
  concat_case(out, dtype, "axis 1 x3", 3, SHAPES(D(2, 3), D(2, 5), D(2, 1)),
              2, 1, false);
  concat_case(out, dtype, "axis -1 3-D", 2, SHAPES(D(2, 3, 4), D(2, 3, 1)), 3,
              -1, true);
  concat_case(out, dtype, "axis 2 4-D", 2,
              SHAPES(D(2, 3, 2, 5), D(2, 3, 3, 5)), 4, 2, false);
  concat_case(out, dtype, "long rows", 2, SHAPES(D(3, 300), D(3, 2)), 2, 1,
              false);
  concat_case(out, dtype, "scalars", 3, SHAPES(NULL, NULL, NULL), 0, 0, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  concat_case(out, dtype, "rank 9 axis 4", 2,
              SHAPES(D(2, 1, 2, 3, 2, 2, 1, 2, 3), D(2, 1, 2, 3, 3, 2, 1, 2, 3)),
              9, 4, false);
  concat_case(out, dtype, "rank 11 axis -1", 3,
              SHAPES(D(2, 2, 1, 2, 2, 2, 1, 2, 2, 2, 3),
                     D(2, 2, 1, 2, 2, 2, 1, 2, 2, 2, 1),
                     D(2, 2, 1, 2, 2, 2, 1, 2, 2, 2, 2)),
              11, -1, true);
  concat_case(out, dtype, "odd [1031]+[5]", 2, SHAPES(D(1031), D(5)), 1, 0,
              false);
  concat_case(out, dtype, "with empty", 3, SHAPES(D(2, 0), D(2, 3), D(2, 0)),
              2, 1, false);
  concat_case(out, dtype, "all empty", 2, SHAPES(D(0, 3), D(0, 3)), 2, 0,
              false);
  /* Inner-axis concats go in one launch per 8 inputs: 11 inputs (an empty
   * one among them) take two, and a launch's work-items split rows and
   * parts wherever their chunks end. */
  concat_case(out, dtype, "axis 1 x11", 11,
              SHAPES(D(3, 2), D(3, 1), D(3, 4), D(3, 3), D(3, 0), D(3, 5),
                     D(3, 1), D(3, 2), D(3, 7), D(3, 1), D(3, 3)),
              2, 1, false);
  concat_case(out, dtype, "gates [40,1024]", 4,
              SHAPES(D(40, 300), D(40, 211), D(40, 1), D(40, 512)), 2, 1,
              false);
  /* More than CPU_CHUNK_MIN elements with odd widths: the CPU shape's
   * second chunk starts mid-row, inside the second part. */
  concat_case(out, dtype, "chunk mid-part [30,7]+[30,331]", 2,
              SHAPES(D(30, 7), D(30, 331)), 2, 1, false);
  concat_case(out, dtype, "axis out of range", 2, SHAPES(D(2, 3), D(2, 3)), 2,
              2, false)->expect_code = TF_INVALID_ARGUMENT;
  concat_case(out, dtype, "axis -3 for rank 2", 2, SHAPES(D(2, 3), D(2, 3)),
              2, -3, false)->expect_code = TF_INVALID_ARGUMENT;
  concat_case(out, dtype, "dims differ", 2, SHAPES(D(2, 3), D(3, 3)), 2, 1,
              false)->expect_code = TF_INVALID_ARGUMENT;
  struct ref_case *c = ref_case_add(out, "ConcatV2", "ConcatV2 ranks differ");
  data(c, dtype, D(2, 3), 2);
  data(c, dtype, D(2, 3, 1), 3);
  scalar_int(c, 0, false);
  c->expect_code = TF_INVALID_ARGUMENT;
}

static int pack_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  int n = c->num_inputs;
  const struct ref_tensor *first = &c->inputs[0];
  int rank = first->rank + 1;
  int64_t axis = ref_case_attr_int_or(c, "axis", 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return fail(error, error_len, "axis");
  for (int k = 1; k < n; k++)
    if (c->inputs[k].rank != first->rank ||
        memcmp(c->inputs[k].dims, first->dims,
               sizeof(int64_t) * (size_t)first->rank))
      return fail(error, error_len, "shapes");
  int64_t dims[REF_MAX_DIMS], coord[REF_MAX_DIMS], strides[REF_MAX_DIMS];
  for (int d = 0, j = 0; d < rank; d++)
    dims[d] = d == axis ? n : first->dims[j++];
  strides_of(first->dims, first->rank, strides);
  ref_tensor_alloc(&out[0], first->dtype, dims, rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    unravel(i, dims, rank, coord);
    int64_t xi = 0;
    for (int d = 0, j = 0; d < rank; d++)
      if (d != axis)
        xi += coord[d] * strides[j++];
    put(&out[0], i, &c->inputs[coord[axis]], xi);
  }
  return 1;
}

static struct ref_case *pack_case(struct ref_cases *out, TF_DataType dtype,
                                  const char *label, int count,
                                  const int64_t *dims, int rank, int64_t axis)
{
  struct ref_case *c = ref_case_add(out, "Pack", "Pack %s", label);
  for (int i = 0; i < count; i++)
    data(c, dtype, dims, rank);
  ref_case_attr_int(c, "N", count);
  ref_case_attr_int(c, "axis", axis);
  return c;
}

static void pack_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  (void)op;
  pack_case(out, dtype, "axis 0", 3, D(2, 3), 2, 0);
  pack_case(out, dtype, "axis 1", 3, D(2, 3), 2, 1);
  pack_case(out, dtype, "axis 2", 2, D(2, 3), 2, 2);
  pack_case(out, dtype, "axis -1 3-D", 4, D(3, 1, 5), 3, -1);
  pack_case(out, dtype, "one input", 1, D(3, 5), 2, 1);
  pack_case(out, dtype, "scalars", 5, NULL, 0, 0);
  pack_case(out, dtype, "odd [1031]", 2, D(1031), 1, 1);
  pack_case(out, dtype, "empty", 2, D(0, 2), 2, 1);
  pack_case(out, dtype, "axis 1 x9", 9, D(3, 5), 2, 1);
  pack_case(out, dtype, "rank 9 axis 5", 3, D(2, 3, 2, 2, 3, 2, 2, 1, 2), 9, 5);
  pack_case(out, dtype, "rank 11 axis -1", 2,
            D(2, 2, 2, 3, 2, 2, 2, 1, 2, 2, 2), 11, -1);
  pack_case(out, dtype, "axis out of range", 2, D(2, 3), 2, 3)->expect_code =
      TF_INVALID_ARGUMENT;
  struct ref_case *c = ref_case_add(out, "Pack", "Pack shapes differ");
  data(c, dtype, D(2, 3), 2);
  data(c, dtype, D(3, 2), 2);
  ref_case_attr_int(c, "N", 2);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- Unpack, Split, SplitV ---------------------------------------------- */

/* Outputs of x split along axis into sizes (squeezed: Unpack). */
static int split_along(const struct ref_tensor *x, int axis,
                       const int64_t *sizes, int num, bool squeeze,
                       struct ref_tensor *out)
{
  int64_t strides[REF_MAX_DIMS], coord[REF_MAX_DIMS], start = 0;
  strides_of(x->dims, x->rank, strides);
  for (int k = 0; k < num; k++) {
    int64_t dims[REF_MAX_DIMS], full[REF_MAX_DIMS];
    int rank = 0;
    for (int d = 0; d < x->rank; d++) {
      full[d] = d == axis ? sizes[k] : x->dims[d];
      if (d != axis || !squeeze)
        dims[rank++] = full[d];
    }
    ref_tensor_alloc(&out[k], x->dtype, dims, rank);
    for (int64_t i = 0; i < out[k].elements; i++) {
      unravel(i, full, x->rank, coord);
      coord[axis] += start;
      int64_t xi = 0;
      for (int d = 0; d < x->rank; d++)
        xi += coord[d] * strides[d];
      put(&out[k], i, x, xi);
    }
    start += sizes[k];
  }
  return num;
}

static int unpack_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  int64_t num = ref_case_attr_int_or(c, "num", 0);
  int64_t axis = ref_case_attr_int_or(c, "axis", 0);
  if (axis < 0)
    axis += x->rank;
  if (axis < 0 || axis >= x->rank || x->dims[axis] != num)
    return fail(error, error_len, "axis");
  int64_t sizes[REF_MAX_TENSORS];
  for (int i = 0; i < num; i++)
    sizes[i] = 1;
  return split_along(x, (int)axis, sizes, (int)num, true, out);
}

static struct ref_case *unpack_case(struct ref_cases *out, TF_DataType dtype,
                                    const char *label, const int64_t *dims,
                                    int rank, int64_t num, int64_t axis)
{
  struct ref_case *c = ref_case_add(out, "Unpack", "Unpack %s", label);
  data(c, dtype, dims, rank);
  ref_case_attr_int(c, "num", num);
  ref_case_attr_int(c, "axis", axis);
  return c;
}

static void unpack_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  (void)op;
  unpack_case(out, dtype, "axis 0", D(3, 4), 2, 3, 0);
  unpack_case(out, dtype, "axis 1", D(3, 4), 2, 4, 1);
  unpack_case(out, dtype, "axis -1 3-D", D(2, 3, 5), 3, 5, -1);
  unpack_case(out, dtype, "to scalars", D(4), 1, 4, 0);
  unpack_case(out, dtype, "odd [2,1031]", D(2, 1031), 2, 2, 0);
  unpack_case(out, dtype, "empty outputs", D(2, 0), 2, 2, 0);
  unpack_case(out, dtype, "axis 1 x9", D(4, 9, 3), 3, 9, 1);
  unpack_case(out, dtype, "rank 10 axis 3", D(2, 2, 3, 3, 2, 2, 1, 2, 3, 2), 10,
              3, 3);
  unpack_case(out, dtype, "num differs", D(3, 4), 2, 4, 0)->expect_code =
      TF_INVALID_ARGUMENT;
  unpack_case(out, dtype, "axis out of range", D(3, 4), 2, 3, 2)->expect_code =
      TF_INVALID_ARGUMENT;
}

static int split_compute(const struct ref_case *c, struct ref_tensor *out,
                         char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[1];
  int64_t num = ref_case_attr_int_or(c, "num_split", 1);
  int64_t axis = at(&c->inputs[0], 0);
  if (axis < 0)
    axis += x->rank;
  if (axis < 0 || axis >= x->rank || x->dims[axis] % num != 0)
    return fail(error, error_len, "split");
  int64_t sizes[REF_MAX_TENSORS];
  for (int i = 0; i < num; i++)
    sizes[i] = x->dims[axis] / num;
  return split_along(x, (int)axis, sizes, (int)num, false, out);
}

static struct ref_case *split_case(struct ref_cases *out, TF_DataType dtype,
                                   const char *label, const int64_t *dims,
                                   int rank, int64_t num, double axis)
{
  struct ref_case *c = ref_case_add(out, "Split", "Split %s", label);
  scalar_int(c, axis, false);
  data(c, dtype, dims, rank);
  ref_case_attr_int(c, "num_split", num);
  return c;
}

static void split_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  (void)op;
  split_case(out, dtype, "dim 0", D(6, 4), 2, 3, 0);
  split_case(out, dtype, "dim 1", D(4, 6), 2, 2, 1);
  split_case(out, dtype, "dim -1 3-D", D(2, 3, 6), 3, 3, -1);
  split_case(out, dtype, "rank 4 dim 2", D(2, 3, 4, 5), 4, 2, 2);
  split_case(out, dtype, "one way", D(3, 5), 2, 1, 1);
  split_case(out, dtype, "odd [1030]", D(1030), 1, 2, 0);
  split_case(out, dtype, "empty", D(0, 4), 2, 2, 1);
  split_case(out, dtype, "dim 1 x10", D(3, 20), 2, 10, 1);
  split_case(out, dtype, "gates [64,1024]", D(64, 1024), 2, 4, 1);
  split_case(out, dtype, "rank 10 dim 6", D(2, 3, 2, 2, 3, 2, 4, 2, 1, 3), 10, 2,
             6);
  split_case(out, dtype, "uneven", D(5, 4), 2, 2, 0)->expect_code =
      TF_INVALID_ARGUMENT;
  split_case(out, dtype, "dim out of range", D(4, 4), 2, 2, -3)->expect_code =
      TF_INVALID_ARGUMENT;
}

static int split_v_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *s = &c->inputs[1];
  int64_t num = ref_case_attr_int_or(c, "num_split", 1);
  int64_t axis = at(&c->inputs[2], 0);
  if (axis < 0)
    axis += x->rank;
  if (axis < 0 || axis >= x->rank || s->elements != num)
    return fail(error, error_len, "split");
  int64_t sizes[REF_MAX_TENSORS], known = 0;
  int unknown = -1;
  for (int i = 0; i < num; i++) {
    sizes[i] = at(s, i);
    if (sizes[i] == -1) {
      if (unknown >= 0)
        return fail(error, error_len, "two -1");
      unknown = i;
    } else if (sizes[i] < 0) {
      return fail(error, error_len, "negative size");
    } else {
      known += sizes[i];
    }
  }
  if (unknown >= 0)
    sizes[unknown] = x->dims[axis] - known;
  if ((unknown < 0 && known != x->dims[axis]) || known > x->dims[axis])
    return fail(error, error_len, "sizes");
  return split_along(x, (int)axis, sizes, (int)num, false, out);
}

static struct ref_case *split_v_case(struct ref_cases *out, TF_DataType dtype,
                                     const char *label, const int64_t *dims,
                                     int rank, int num, const double *sizes,
                                     double axis, bool wide)
{
  struct ref_case *c = ref_case_add(out, "SplitV", "SplitV %s", label);
  data(c, dtype, dims, rank);
  ints(c, num, sizes, wide);
  scalar_int(c, axis, false);
  ref_case_attr_int(c, "num_split", num);
  return c;
}

static void split_v_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  (void)op;
  split_v_case(out, dtype, "dim 0 with -1", D(7, 4), 2, 3, V(2, -1, 1), 0,
               false);
  split_v_case(out, dtype, "dim 1 zero size", D(3, 10), 2, 3, V(1, 0, 9), 1,
               true);
  split_v_case(out, dtype, "dim -1 3-D", D(2, 3, 5), 3, 2, V(2, 3), -1, false);
  split_v_case(out, dtype, "one way", D(7), 1, 1, V(7), 0, false);
  split_v_case(out, dtype, "dim 1 x9 with empties", D(5, 30), 2, 9,
               V(3, 0, 4, 5, -1, 1, 0, 2, 6), 1, false);
  split_v_case(out, dtype, "chunk mid-part [40,301]", D(40, 301), 2, 2,
               V(150, -1), 1, false);
  split_v_case(out, dtype, "odd [1031]", D(1031), 1, 2, V(1000, -1), 0, false);
  split_v_case(out, dtype, "rank 9 dim -3", D(2, 2, 3, 2, 2, 3, 5, 2, 3), 9, 3,
               V(1, -1, 2), -3, false);
  struct ref_case *c =
      ref_case_add(out, "SplitV", "SplitV int8 size_splits");
  data(c, dtype, D(5, 4), 2);
  ints_of(c, TF_INT8, 3, V(1, -1, 2));
  scalar_int(c, 0, false);
  ref_case_attr_int(c, "num_split", 3);
  split_v_case(out, dtype, "two -1", D(7), 1, 3, V(-1, -1, 2), 0, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  split_v_case(out, dtype, "sum differs", D(7), 1, 2, V(2, 3), 0, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  split_v_case(out, dtype, "negative size", D(7), 1, 3, V(-2, 5, 4), 0, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  split_v_case(out, dtype, "one way wrong size", D(7), 1, 1, V(6), 0, false)
      ->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- Slice, StridedSlice, StridedSliceGrad ----------------------------- */

/* A slice of a tensor of `dims`: per input dim the first index, the step
 * and the count; out_dims the output's shape. */
struct ref_slice {
  int64_t start[REF_MAX_DIMS], step[REF_MAX_DIMS], count[REF_MAX_DIMS];
  int out_rank;
  int64_t out_dims[REF_MAX_DIMS + 8];
};

static int slice_compute(const struct ref_case *c, struct ref_tensor *out,
                         char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  const struct ref_tensor *b = &c->inputs[1], *s = &c->inputs[2];
  int64_t size[REF_MAX_DIMS], coord[REF_MAX_DIMS], strides[REF_MAX_DIMS];
  if (b->elements != x->rank || s->elements != x->rank)
    return fail(error, error_len, "lengths");
  for (int d = 0; d < x->rank; d++) {
    size[d] = at(s, d) == -1 ? x->dims[d] - at(b, d) : at(s, d);
    if (at(b, d) < 0 || size[d] < 0 || at(b, d) + size[d] > x->dims[d])
      return fail(error, error_len, "bounds");
  }
  strides_of(x->dims, x->rank, strides);
  ref_tensor_alloc(&out[0], x->dtype, size, x->rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    unravel(i, size, x->rank, coord);
    int64_t xi = 0;
    for (int d = 0; d < x->rank; d++)
      xi += (coord[d] + at(b, d)) * strides[d];
    put(&out[0], i, x, xi);
  }
  return 1;
}

static struct ref_case *slice_case(struct ref_cases *out, TF_DataType dtype,
                                   const char *label, const int64_t *dims,
                                   int rank, const double *begin,
                                   const double *size, bool wide)
{
  struct ref_case *c = ref_case_add(out, "Slice", "Slice %s", label);
  data(c, dtype, dims, rank);
  /* A scalar's cases with a begin and size pass one entry each. */
  int n = rank == 0 && begin != NULL ? 1 : rank;
  ints(c, n, begin, wide);
  ints(c, n, size, wide);
  return c;
}

static void slice_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  (void)op;
  slice_case(out, dtype, "[5]", D(5), 1, V(1), V(3), false);
  slice_case(out, dtype, "[4,6] size -1", D(4, 6), 2, V(1, 2), V(2, -1), true);
  slice_case(out, dtype, "rows", D(4, 6), 2, V(1, 0), V(2, 6), false);
  slice_case(out, dtype, "[2,3,4,5]", D(2, 3, 4, 5), 4, V(0, 1, 1, 2),
             V(2, 2, -1, 3), false);
  slice_case(out, dtype, "empty size", D(3, 4), 2, V(1, 0), V(0, 4), false);
  slice_case(out, dtype, "empty input", D(0, 4), 2, V(0, 1), V(0, 2), false);
  slice_case(out, dtype, "whole", D(3, 4), 2, V(0, 0), V(3, 4), false);
  slice_case(out, dtype, "scalar", NULL, 0, NULL, NULL, false);
  slice_case(out, dtype, "odd [1031]", D(1031), 1, V(5), V(1000), false);
  slice_case(out, dtype, "rank 10", D(3, 2, 3, 4, 3, 2, 3, 3, 2, 3), 10,
             V(1, 0, 1, 1, 0, 1, 1, 0, 1, 1), V(2, 1, 2, 2, 2, 1, 1, 3, 1, 2),
             true);
  slice_case(out, dtype, "rank 12", D(2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3), 12,
             V(1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1),
             V(1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, -1), false);
  slice_case(out, dtype, "scalar begin [0]", NULL, 0, V(0), V(1), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  slice_case(out, dtype, "begin past end", D(4, 6), 2, V(5, 0), V(1, 1), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  slice_case(out, dtype, "size too big", D(4, 6), 2, V(1, 0), V(4, 1), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  slice_case(out, dtype, "negative begin", D(4, 6), 2, V(-1, 0), V(1, 1),
             false)->expect_code = TF_INVALID_ARGUMENT;
  struct ref_case *c = ref_case_add(out, "Slice", "Slice wrong length");
  data(c, dtype, D(4, 6), 2);
  ints(c, 1, V(0), false);
  ints(c, 1, V(1), false);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* Python's slice(begin, end, step).indices(dim): start and count. */
static void python_slice(int64_t dim, bool has_begin, int64_t begin,
                         bool has_end, int64_t end, int64_t step,
                         int64_t *start, int64_t *count)
{
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? dim : dim - 1;
  int64_t b = has_begin ? (begin < 0 ? begin + dim : begin)
                        : (step > 0 ? lo : hi);
  int64_t e = has_end ? (end < 0 ? end + dim : end) : (step > 0 ? hi : lo);
  b = b < lo ? lo : b > hi ? hi : b;
  e = e < lo ? lo : e > hi ? hi : e;
  int64_t n = step > 0 ? (e - b + step - 1) / step : (b - e - step - 1) / -step;
  *start = b;
  *count = n > 0 ? n : 0;
}

/* The StridedSlice spec of c (inputs first..first+2, the mask attributes)
 * over a tensor of dims/rank. False when TensorFlow rejects it. */
static bool strided_slice_of(const struct ref_case *c, int first,
                             const int64_t *dims, int rank,
                             struct ref_slice *s)
{
  const struct ref_tensor *b = &c->inputs[first], *e = &c->inputs[first + 1],
                          *st = &c->inputs[first + 2];
  int64_t bm = ref_case_attr_int_or(c, "begin_mask", 0);
  int64_t em = ref_case_attr_int_or(c, "end_mask", 0);
  int64_t elm = ref_case_attr_int_or(c, "ellipsis_mask", 0);
  int64_t nam = ref_case_attr_int_or(c, "new_axis_mask", 0);
  int64_t sam = ref_case_attr_int_or(c, "shrink_axis_mask", 0);
  int n = (int)st->elements;
  if (b->elements != n || e->elements != n || (elm & (elm - 1)) != 0)
    return false;
  /* Real dims the entries after the ellipsis (or all, without one) take. */
  int ellipsis_at = -1, real_after = 0;
  for (int j = 0; j < n; j++) {
    if ((elm >> j) & 1) {
      ellipsis_at = j;
      real_after = 0;
    } else if (!((nam >> j) & 1)) {
      real_after++;
    }
  }
  memset(s, 0, sizeof(*s));
  int d = 0;
  for (int j = 0; j <= n; j++) {
    bool ellipsis = j == n ? ellipsis_at < 0 : ((elm >> j) & 1);
    if (j == n && !ellipsis)
      break;
    if (ellipsis) {
      /* Whole dims up to where the entries after the ellipsis start. */
      int until = j == n ? rank : rank - real_after;
      for (; d < until; d++) {
        s->start[d] = 0;
        s->step[d] = 1;
        s->count[d] = dims[d];
        s->out_dims[s->out_rank++] = dims[d];
      }
      continue;
    }
    if ((nam >> j) & 1) {
      s->out_dims[s->out_rank++] = 1;
      continue;
    }
    if (d >= rank)
      return false;
    int64_t step = at(st, j);
    if (step == 0)
      return false;
    if ((sam >> j) & 1) {
      int64_t i = at(b, j) < 0 ? at(b, j) + dims[d] : at(b, j);
      if (step < 0 || i < 0 || i >= dims[d])
        return false;
      s->start[d] = i;
      s->step[d] = 1;
      s->count[d] = 1;
    } else {
      python_slice(dims[d], !((bm >> j) & 1), at(b, j), !((em >> j) & 1),
                   at(e, j), step, &s->start[d], &s->count[d]);
      s->step[d] = step;
      s->out_dims[s->out_rank++] = s->count[d];
    }
    d++;
  }
  return d == rank;
}

/* Flat index in a tensor of dims of the slice element with flat index i. */
static int64_t slice_source(const struct ref_slice *s, const int64_t *dims,
                            int rank, int64_t i)
{
  int64_t coord[REF_MAX_DIMS], strides[REF_MAX_DIMS], xi = 0;
  unravel(i, s->count, rank, coord);
  strides_of(dims, rank, strides);
  for (int d = 0; d < rank; d++)
    xi += (s->start[d] + coord[d] * s->step[d]) * strides[d];
  return xi;
}

static int strided_slice_compute(const struct ref_case *c,
                                 struct ref_tensor *out, char *error,
                                 int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  struct ref_slice s;
  if (!strided_slice_of(c, 1, x->dims, x->rank, &s))
    return fail(error, error_len, "spec");
  ref_tensor_alloc(&out[0], x->dtype, s.out_dims, s.out_rank);
  for (int64_t i = 0; i < out[0].elements; i++)
    put(&out[0], i, x, slice_source(&s, x->dims, x->rank, i));
  return 1;
}

static int strided_slice_grad_compute(const struct ref_case *c,
                                      struct ref_tensor *out, char *error,
                                      int error_len)
{
  const struct ref_tensor *shape = &c->inputs[0], *dy = &c->inputs[4];
  int64_t dims[REF_MAX_DIMS];
  int rank = (int)shape->elements;
  struct ref_slice s;
  for (int d = 0; d < rank; d++)
    dims[d] = at(shape, d);
  if (!strided_slice_of(c, 1, dims, rank, &s) || s.out_rank != dy->rank ||
      memcmp(s.out_dims, dy->dims, sizeof(int64_t) * (size_t)dy->rank))
    return fail(error, error_len, "spec");
  ref_tensor_alloc(&out[0], dy->dtype, dims, rank);
  for (int64_t i = 0; i < dy->elements; i++)
    put(&out[0], slice_source(&s, dims, rank, i), dy, i);
  return 1;
}

/* One StridedSlice spec: entries and masks. */
struct spec {
  int n;
  double begin[REF_MAX_DIMS], end[REF_MAX_DIMS], strides[REF_MAX_DIMS];
  int64_t bm, em, elm, nam, sam;
};

static void spec_attrs(struct ref_case *c, const struct spec *s)
{
  if (s->bm)
    ref_case_attr_int(c, "begin_mask", s->bm);
  if (s->em)
    ref_case_attr_int(c, "end_mask", s->em);
  if (s->elm)
    ref_case_attr_int(c, "ellipsis_mask", s->elm);
  if (s->nam)
    ref_case_attr_int(c, "new_axis_mask", s->nam);
  if (s->sam)
    ref_case_attr_int(c, "shrink_axis_mask", s->sam);
}

static struct ref_case *strided_case(struct ref_cases *out, TF_DataType dtype,
                                     const char *label, const int64_t *dims,
                                     int rank, struct spec s,
                                     TF_DataType itype)
{
  struct ref_case *c =
      ref_case_add(out, "StridedSlice", "StridedSlice %s%s", label,
                   itype == TF_INT16 ? " (int16 indices)" : "");
  data(c, dtype, dims, rank);
  ints_of(c, itype, s.n, s.begin);
  ints_of(c, itype, s.n, s.end);
  ints_of(c, itype, s.n, s.strides);
  spec_attrs(c, &s);
  return c;
}

/* The specs both StridedSlice and its gradient run. */
struct spec_case {
  const char *label;
  int rank;
  int64_t dims[REF_MAX_DIMS];
  struct spec s;
};

static const struct spec_case spec_cases[] = {
    {"[10] 1:8:2", 1, {10}, {1, {1}, {8}, {2}, 0, 0, 0, 0, 0}},
    {"[10] 8:1:-3", 1, {10}, {1, {8}, {1}, {-3}, 0, 0, 0, 0, 0}},
    {"[10] ::-1", 1, {10}, {1, {0}, {0}, {-1}, 1, 1, 0, 0, 0}},
    {"[4,6] 1:3, -1:0:-2",
     2,
     {4, 6},
     {2, {1, -1}, {3, 0}, {1, -2}, 0, 0, 0, 0, 0}},
    {"[4,6] [-1] shrink", 2, {4, 6}, {1, {-1}, {0}, {1}, 0, 0, 0, 0, 1}},
    {"[2,3,4] [..., 1:3]",
     3,
     {2, 3, 4},
     {2, {0, 1}, {0, 3}, {1, 1}, 0, 0, 1, 0, 0}},
    {"[3,4] [newaxis, :, 2]",
     2,
     {3, 4},
     {3, {0, 0, 2}, {0, 0, 3}, {1, 1, 1}, 2, 2, 0, 1, 4}},
    {"[2,3,4] [1, ..., newaxis]",
     3,
     {2, 3, 4},
     {3, {1, 0, 0}, {2, 0, 0}, {1, 1, 1}, 0, 0, 2, 4, 1}},
    {"[2,3,4] [..., newaxis, ::2]",
     3,
     {2, 3, 4},
     {3, {0, 0, 0}, {0, 0, 0}, {1, 1, 2}, 4, 4, 1, 2, 0}},
    {"[5,3] empty 3:1", 2, {5, 3}, {1, {3}, {1}, {1}, 0, 0, 0, 0, 0}},
    {"[5,3] clamped -100:100",
     2,
     {5, 3},
     {1, {-100}, {100}, {1}, 0, 0, 0, 0, 0}},
    {"[3,4] whole", 2, {3, 4}, {2, {0, 0}, {0, 0}, {1, 1}, 3, 3, 0, 0, 0}},
    {"[3,4] to scalar", 2, {3, 4}, {2, {1, 2}, {2, 3}, {1, 1}, 0, 0, 0, 0, 3}},
    {"[2,3,4,5] mixed",
     4,
     {2, 3, 4, 5},
     {4, {0, 2, 1, 0}, {2, 0, 4, 5}, {1, -1, 2, 3}, 0, 0, 0, 0, 0}},
    {"[9,12] reversed columns",
     2,
     {9, 12},
     {2, {0, 0}, {0, 0}, {1, -1}, 3, 3, 0, 0, 0}},
    {"[1031] 3:1030:7", 1, {1031}, {1, {3}, {1030}, {7}, 0, 0, 0, 0, 0}},
    /* A recurrent cell's gate columns of its weights: a gradient over many
     * work-items, zero on both sides. */
    {"[40,300] [:, 100:250]",
     2,
     {40, 300},
     {2, {0, 100}, {0, 250}, {1, 1}, 1, 1, 0, 0, 0}},
    {"scalar [newaxis]", 0, {0}, {1, {0}, {0}, {1}, 0, 0, 0, 1, 0}},
    /* Strides in every dim: nothing collapses, two leading dims split. */
    {"rank 10 strided",
     10,
     {3, 2, 4, 3, 2, 5, 3, 2, 4, 3},
     {10,
      {0, 1, 3, 0, 1, 4, 2, 0, 0, 2},
      {3, 0, 0, 3, 2, 0, 0, 2, 4, 0},
      {2, -1, -2, 2, 1, -2, -1, 1, 2, -1},
      0,
      0,
      0,
      0,
      0}},
    {"rank 12 shrink and newaxis",
     12,
     {2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3},
     {12,
      {1, 0, 0, 2, 0, 0, 1, 0, 0, 0, 1, 0},
      {2, 3, 2, 0, 2, 3, 2, 3, 2, 3, 0, 3},
      {1, 2, 1, -1, 1, 2, 1, 2, 1, 2, -1, 2},
      0,
      0,
      0,
      4,
      1}},
};

#define NUM_SPEC_CASES ((int)(sizeof(spec_cases) / sizeof(spec_cases[0])))

static void strided_slice_cases(const struct ref_op *op, TF_DataType dtype,
                                struct ref_cases *out)
{
  (void)op;
  for (int i = 0; i < NUM_SPEC_CASES; i++)
    strided_case(out, dtype, spec_cases[i].label, spec_cases[i].dims,
                 spec_cases[i].rank, spec_cases[i].s,
                 i == 3 ? TF_INT64 : TF_INT32);
  /* Narrow indices read at their own width (once read as int32, the
   * strides of [2:7:2] came out wrong with no error). */
  for (int i = 0; i < 3; i++)
    strided_case(out, dtype, spec_cases[i].label, spec_cases[i].dims,
                 spec_cases[i].rank, spec_cases[i].s, TF_INT16);
  static const struct spec_case bad[] = {
      {"stride 0", 1, {10}, {1, {1}, {8}, {0}, 0, 0, 0, 0, 0}},
      {"shrink out of range", 2, {4, 6}, {1, {4}, {5}, {1}, 0, 0, 0, 0, 1}},
      {"shrink negative stride", 1, {4}, {1, {1}, {0}, {-1}, 0, 0, 0, 0, 1}},
      {"two ellipses", 2, {4, 6}, {2, {0, 0}, {0, 0}, {1, 1}, 0, 0, 3, 0, 0}},
      {"too many indices", 1, {4}, {2, {0, 0}, {1, 1}, {1, 1}, 0, 0, 0, 0, 0}},
      {"scalar index", 0, {0}, {1, {0}, {1}, {1}, 0, 0, 0, 0, 0}},
      {"scalar shrink", 0, {0}, {1, {0}, {1}, {1}, 0, 0, 0, 0, 1}},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    strided_case(out, dtype, bad[i].label, bad[i].dims, bad[i].rank, bad[i].s,
                 TF_INT32)->expect_code = TF_INVALID_ARGUMENT;
  struct ref_case *c =
      ref_case_add(out, "StridedSlice", "StridedSlice lengths differ");
  data(c, dtype, D(4, 6), 2);
  ints(c, 2, V(0, 0), false);
  ints(c, 1, V(1), false);
  ints(c, 2, V(1, 1), false);
  c->expect_code = TF_INVALID_ARGUMENT;
}

static void strided_slice_grad_cases(const struct ref_op *op,
                                     TF_DataType dtype, struct ref_cases *out)
{
  (void)op;
  for (int i = 0; i <= NUM_SPEC_CASES; i++) {
    /* The last round: a dy of the wrong shape. */
    const struct spec_case *sc = &spec_cases[i < NUM_SPEC_CASES ? i : 3];
    struct ref_case tmp;
    struct ref_slice s;
    memset(&tmp, 0, sizeof(tmp));
    ints(&tmp, sc->s.n, sc->s.begin, false);
    ints(&tmp, sc->s.n, sc->s.end, false);
    ints(&tmp, sc->s.n, sc->s.strides, false);
    spec_attrs(&tmp, &sc->s);
    bool ok = strided_slice_of(&tmp, 0, sc->dims, sc->rank, &s);
    for (int k = 0; k < tmp.num_inputs; k++)
      ref_tensor_finish(&tmp.inputs[k]);
    if (!ok)
      continue;
    struct ref_case *c = ref_case_add(out, "StridedSliceGrad",
                                      "StridedSliceGrad %s", sc->label);
    double shape[REF_MAX_DIMS];
    for (int d = 0; d < sc->rank; d++)
      shape[d] = (double)sc->dims[d];
    bool wide = i == 1;
    ints(c, sc->rank, shape, wide);
    ints(c, sc->s.n, sc->s.begin, wide);
    ints(c, sc->s.n, sc->s.end, wide);
    ints(c, sc->s.n, sc->s.strides, wide);
    spec_attrs(c, &sc->s);
    if (i < NUM_SPEC_CASES) {
      data(c, dtype, s.out_dims, s.out_rank);
    } else {
      snprintf(c->label, sizeof(c->label), "StridedSliceGrad dy shape wrong");
      data(c, dtype, D(7), 1);
      c->expect_code = TF_INVALID_ARGUMENT;
    }
  }
}

/* ---- Tile, Pad, PadV2 --------------------------------------------------- */

static int tile_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *m = &c->inputs[1];
  int64_t dims[REF_MAX_DIMS], coord[REF_MAX_DIMS], strides[REF_MAX_DIMS];
  if (m->elements != x->rank)
    return fail(error, error_len, "multiples length");
  for (int d = 0; d < x->rank; d++) {
    if (at(m, d) < 0)
      return fail(error, error_len, "negative multiple");
    dims[d] = x->dims[d] * at(m, d);
  }
  strides_of(x->dims, x->rank, strides);
  ref_tensor_alloc(&out[0], x->dtype, dims, x->rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    unravel(i, dims, x->rank, coord);
    int64_t xi = 0;
    for (int d = 0; d < x->rank; d++)
      xi += (coord[d] % x->dims[d]) * strides[d];
    put(&out[0], i, x, xi);
  }
  return 1;
}

static struct ref_case *tile_case(struct ref_cases *out, TF_DataType dtype,
                                  const char *label, const int64_t *dims,
                                  int rank, const double *multiples,
                                  int count, bool wide)
{
  struct ref_case *c = ref_case_add(out, "Tile", "Tile %s", label);
  data(c, dtype, dims, rank);
  ints(c, count, multiples, wide);
  return c;
}

static void tile_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  (void)op;
  tile_case(out, dtype, "[3] x2", D(3), 1, V(2), 1, false);
  tile_case(out, dtype, "[2,3] rows", D(2, 3), 2, V(2, 1), 2, true);
  tile_case(out, dtype, "[2,3] cols", D(2, 3), 2, V(1, 3), 2, false);
  tile_case(out, dtype, "[2,1,3]", D(2, 1, 3), 3, V(2, 3, 2), 3, false);
  tile_case(out, dtype, "[2,3,1,2]", D(2, 3, 1, 2), 4, V(1, 2, 3, 1), 4,
            false);
  tile_case(out, dtype, "scalar", NULL, 0, NULL, 0, false);
  tile_case(out, dtype, "all ones", D(3, 4), 2, V(1, 1), 2, false);
  tile_case(out, dtype, "zero multiple", D(3, 4), 2, V(2, 0), 2, false);
  tile_case(out, dtype, "empty input", D(0, 2), 2, V(2, 2), 2, false);
  tile_case(out, dtype, "odd [1031] x2", D(1031), 1, V(2), 1, false);
  /* Every dim repeats: 10 and 11 groups, few elements (Oclgrind). */
  tile_case(out, dtype, "rank 10", D(2, 1, 1, 1, 1, 1, 1, 1, 1, 3), 10,
            V(2, 2, 2, 2, 2, 2, 2, 2, 2, 2), 10, false);
  tile_case(out, dtype, "rank 12", D(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3), 12,
            V(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1), 12, true);
  tile_case(out, dtype, "repeats merge", D(2, 3, 4), 3, V(2, 1, 1), 3, false);
  tile_case(out, dtype, "negative", D(3, 4), 2, V(2, -1), 2, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  tile_case(out, dtype, "wrong length", D(3, 4), 2, V(2), 1, false)
      ->expect_code = TF_INVALID_ARGUMENT;
}

static int pad_compute(const struct ref_case *c, struct ref_tensor *out,
                       char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *p = &c->inputs[1];
  const struct ref_tensor *value = c->num_inputs > 2 ? &c->inputs[2] : NULL;
  int64_t dims[REF_MAX_DIMS], coord[REF_MAX_DIMS], strides[REF_MAX_DIMS];
  if (p->rank != 2 || p->dims[0] != x->rank || p->dims[1] != 2 ||
      (c->num_inputs > 2 && c->inputs[2].rank != 0))
    return fail(error, error_len, "paddings shape");
  for (int d = 0; d < x->rank; d++) {
    if (at(p, 2 * d) < 0 || at(p, 2 * d + 1) < 0)
      return fail(error, error_len, "negative padding");
    dims[d] = at(p, 2 * d) + x->dims[d] + at(p, 2 * d + 1);
  }
  strides_of(x->dims, x->rank, strides);
  ref_tensor_alloc(&out[0], x->dtype, dims, x->rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    unravel(i, dims, x->rank, coord);
    int64_t xi = 0;
    bool inside = true;
    for (int d = 0; d < x->rank; d++) {
      int64_t k = coord[d] - at(p, 2 * d);
      inside &= k >= 0 && k < x->dims[d];
      xi += k * strides[d];
    }
    if (inside)
      put(&out[0], i, x, xi);
    else
      put_value(&out[0], i, value);
  }
  return 1;
}

static struct ref_case *pad_case(struct ref_cases *out, const char *op,
                                 TF_DataType dtype, const char *label,
                                 const int64_t *dims, int rank,
                                 const double *paddings, int64_t pad_rows,
                                 bool wide)
{
  struct ref_case *c = ref_case_add(out, op, "%s %s", op, label);
  data(c, dtype, dims, rank);
  ref_case_input_values(c, wide ? TF_INT64 : TF_INT32, D(pad_rows, 2), 2,
                        paddings);
  if (!strcmp(op, "PadV2")) {
    /* Complex: the second lane is the imaginary part. */
    double v[2] = {dtype == TF_BOOL                               ? 1
                   : dtype == TF_INT64 || dtype == TF_UINT64 ? 5e15
                                                                   : -1.5,
                   0.75};
    ref_case_input_values(c, dtype, NULL, 0, v);
  }
  return c;
}

static void pad_cases(const struct ref_op *op, TF_DataType dtype,
                      struct ref_cases *out)
{
  const char *o = op->op;
  pad_case(out, o, dtype, "[3]", D(3), 1, V(1, 2), 1, false);
  pad_case(out, o, dtype, "[2,3]", D(2, 3), 2, V(1, 0, 2, 1), 2, true);
  pad_case(out, o, dtype, "[2,3,4]", D(2, 3, 4), 3, V(0, 1, 1, 1, 2, 0), 3,
           false);
  pad_case(out, o, dtype, "[2,1,3,2]", D(2, 1, 3, 2), 4,
           V(1, 0, 0, 2, 1, 1, 0, 1), 4, false);
  pad_case(out, o, dtype, "scalar", NULL, 0, NULL, 0, false);
  pad_case(out, o, dtype, "no padding", D(3, 4), 2, V(0, 0, 0, 0), 2, false);
  pad_case(out, o, dtype, "empty input", D(0, 3), 2, V(1, 1, 0, 0), 2, false);
  pad_case(out, o, dtype, "odd [1031]", D(1031), 1, V(3, 5), 1, false);
  /* Every dim padded: 10 groups, few elements (Oclgrind). */
  pad_case(out, o, dtype, "rank 10", D(2, 1, 1, 1, 1, 1, 1, 1, 1, 3), 10,
           V(1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 2), 10,
           false);
  pad_case(out, o, dtype, "rank 12 some dims", D(2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2),
           12, V(1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1),
           12, true);
  pad_case(out, o, dtype, "unpadded dims merge", D(3, 4, 5), 3,
           V(1, 2, 0, 0, 0, 0), 3, false);
  pad_case(out, o, dtype, "negative", D(3), 1, V(-1, 2), 1, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  pad_case(out, o, dtype, "wrong rows", D(3, 4), 2, V(1, 1), 1, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  struct ref_case *c = ref_case_add(out, o, "%s paddings not a matrix", o);
  data(c, dtype, D(3), 1);
  ints(c, 2, V(1, 1), false);
  c->expect_code = TF_INVALID_ARGUMENT;
  if (!strcmp(o, "PadV2")) {
    double v[2] = {0, 0};
    ref_case_input_values(c, dtype, NULL, 0, v);
    c = ref_case_add(out, o, "%s constant not scalar", o);
    data(c, dtype, D(3), 1);
    ref_case_input_values(c, TF_INT32, D(1, 2), 2, V(1, 1));
    data(c, dtype, D(2), 1);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

/* ---- SpaceToBatchND, BatchToSpaceND ------------------------------------------ */

/* Both ops map a batch-side tensor [B * prod(block), p_1..p_M, rest] and a
 * space-side one [B, s_1..s_M, rest]: batch-side element (k * B + b, p, r)
 * is space-side (b, p_i * block_i + k_i - pad_i, r), k the offsets in the
 * block (row-major). False when TensorFlow rejects the arguments. */
static bool space_batch_shapes(const struct ref_case *c, bool to_batch,
                               int64_t *block, int64_t *pads, int *m,
                               int64_t *out_dims)
{
  const struct ref_tensor *x = &c->inputs[0], *bs = &c->inputs[1],
                          *pd = &c->inputs[2];
  if (bs->rank != 1 || pd->rank != 2 || pd->dims[0] != bs->dims[0] ||
      pd->dims[1] != 2 || x->rank < 1 + bs->dims[0])
    return false;
  *m = (int)bs->dims[0];
  int64_t product = 1, internal = 0;
  for (int i = 0; i < *m; i++) {
    block[i] = at(bs, i);
    pads[2 * i] = at(pd, 2 * i);
    pads[2 * i + 1] = at(pd, 2 * i + 1);
    if (block[i] < 1 || pads[2 * i] < 0 || pads[2 * i + 1] < 0)
      return false;
    product *= block[i];
  }
  /* Block dims of 1 without padding count only between others. */
  int first = *m, last = -1;
  for (int i = 0; i < *m; i++) {
    if (!(block[i] == 1 && pads[2 * i] == 0 && pads[2 * i + 1] == 0)) {
      first = i < first ? i : first;
      last = i;
    }
  }
  internal = last >= first ? last - first + 1 : 0;
  if (internal > 4)
    return false;
  memcpy(out_dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  if (to_batch) {
    out_dims[0] = x->dims[0] * product;
    for (int i = 0; i < *m; i++) {
      int64_t padded = x->dims[i + 1] + pads[2 * i] + pads[2 * i + 1];
      if (padded % block[i] != 0)
        return false;
      out_dims[i + 1] = padded / block[i];
    }
  } else {
    if (x->dims[0] % product != 0)
      return false;
    out_dims[0] = x->dims[0] / product;
    for (int i = 0; i < *m; i++) {
      out_dims[i + 1] = x->dims[i + 1] * block[i] - pads[2 * i] - pads[2 * i + 1];
      if (out_dims[i + 1] < 0)
        return false;
    }
  }
  return true;
}

static int space_batch_compute(const struct ref_case *c,
                               struct ref_tensor *out, char *error,
                               int error_len)
{
  bool to_batch = strcmp(c->op, "SpaceToBatchND") == 0;
  const struct ref_tensor *x = &c->inputs[0];
  int64_t block[REF_MAX_DIMS], pads[2 * REF_MAX_DIMS], dims[REF_MAX_DIMS];
  int64_t coord[REF_MAX_DIMS], in_strides[REF_MAX_DIMS];
  int m = 0;
  if (!space_batch_shapes(c, to_batch, block, pads, &m, dims))
    return fail(error, error_len, "block_shape, paddings or crops");
  ref_tensor_alloc(&out[0], x->dtype, dims, x->rank);
  strides_of(x->dims, x->rank, in_strides);
  /* The space side's batch. */
  int64_t small = to_batch ? x->dims[0] : dims[0];
  for (int64_t i = 0; i < out[0].elements; i++) {
    unravel(i, dims, x->rank, coord);
    int64_t xi = 0;
    bool inside = true;
    if (to_batch) {
      /* coord is batch-side: find the space-side element. */
      int64_t kflat = coord[0] / small, b = coord[0] % small;
      xi = b * in_strides[0];
      for (int d = m - 1; d >= 0; d--) {
        int64_t k = kflat % block[d];
        kflat /= block[d];
        int64_t sp = coord[d + 1] * block[d] + k - pads[2 * d];
        inside &= sp >= 0 && sp < x->dims[d + 1];
        xi += sp * in_strides[d + 1];
      }
    } else {
      /* coord is space-side: find the batch-side element. */
      int64_t kflat = 0;
      for (int d = 0; d < m; d++) {
        int64_t padded = coord[d + 1] + pads[2 * d];
        kflat = kflat * block[d] + padded % block[d];
        xi += padded / block[d] * in_strides[d + 1];
      }
      xi += (kflat * small + coord[0]) * in_strides[0];
    }
    for (int d = m + 1; d < x->rank; d++)
      xi += coord[d] * in_strides[d];
    if (inside)
      put(&out[0], i, x, xi);
    else
      put_value(&out[0], i, NULL);
  }
  return 1;
}

static struct ref_case *space_batch_case(struct ref_cases *out, const char *op,
                                         TF_DataType dtype, const char *label,
                                         const int64_t *dims, int rank,
                                         int m, const double *block,
                                         const double *pads, bool wide)
{
  struct ref_case *c = ref_case_add(out, op, "%s %s", op, label);
  data(c, dtype, dims, rank);
  ints(c, m, block, wide);
  ref_case_input_values(c, wide ? TF_INT64 : TF_INT32, D(m, 2), 2, pads);
  return c;
}

static void space_to_batch_cases(const struct ref_op *op, TF_DataType dtype,
                                 struct ref_cases *out)
{
  const char *o = op->op;
  space_batch_case(out, o, dtype, "2x2", D(2, 4, 4, 3), 4, 2, V(2, 2),
                   V(0, 0, 0, 0), false);
  space_batch_case(out, o, dtype, "2x3 padded", D(1, 5, 3, 2), 4, 2, V(2, 3),
                   V(1, 0, 0, 0), true);
  space_batch_case(out, o, dtype, "padded both sides", D(2, 3, 5, 1), 4, 2,
                   V(2, 2), V(1, 0, 2, 1), false);
  space_batch_case(out, o, dtype, "one block dim", D(3, 7, 2), 3, 1, V(3),
                   V(1, 1), false);
  space_batch_case(out, o, dtype, "three block dims", D(1, 4, 2, 6, 2), 5, 3,
                   V(2, 1, 3), V(0, 0, 0, 0, 0, 0), false);
  space_batch_case(out, o, dtype, "dilation 2 of [2,9,9,5]", D(2, 9, 9, 5), 4,
                   2, V(2, 2), V(2, 3, 2, 3), false);
  space_batch_case(out, o, dtype, "rank 9", D(2, 4, 3, 2, 2, 3, 2, 1, 2), 9, 2,
                   V(2, 3), V(0, 0, 1, 2), false);
  space_batch_case(out, o, dtype, "identity", D(2, 3, 3), 3, 2, V(1, 1),
                   V(0, 0, 0, 0), false);
  space_batch_case(out, o, dtype, "empty batch", D(0, 4, 4, 1), 4, 2, V(2, 2),
                   V(0, 0, 0, 0), false);
  space_batch_case(out, o, dtype, "not divisible", D(1, 5, 4, 1), 4, 2,
                   V(2, 2), V(0, 0, 0, 0), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  space_batch_case(out, o, dtype, "negative padding", D(1, 4, 4, 1), 4, 2,
                   V(2, 2), V(-2, 0, 0, 0), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  space_batch_case(out, o, dtype, "block 0", D(1, 4, 4, 1), 4, 2, V(0, 2),
                   V(0, 0, 0, 0), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  space_batch_case(out, o, dtype, "input rank too small", D(4, 4), 2, 2,
                   V(2, 2), V(0, 0, 0, 0), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  space_batch_case(out, o, dtype, "five block dims", D(1, 2, 2, 2, 2, 2), 6, 5,
                   V(2, 2, 2, 2, 2), V(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  struct ref_case *c = ref_case_add(out, o, "%s paddings shape", o);
  data(c, dtype, D(1, 4, 4, 1), 4);
  ints(c, 2, V(2, 2), false);
  ints(c, 4, V(0, 0, 0, 0), false);
  c->expect_code = TF_INVALID_ARGUMENT;
}

static void batch_to_space_cases(const struct ref_op *op, TF_DataType dtype,
                                 struct ref_cases *out)
{
  const char *o = op->op;
  space_batch_case(out, o, dtype, "2x2", D(8, 2, 2, 3), 4, 2, V(2, 2),
                   V(0, 0, 0, 0), false);
  space_batch_case(out, o, dtype, "2x3 cropped", D(6, 3, 1, 2), 4, 2, V(2, 3),
                   V(1, 0, 0, 0), true);
  space_batch_case(out, o, dtype, "cropped both sides", D(8, 2, 4, 1), 4, 2,
                   V(2, 2), V(1, 0, 2, 1), false);
  space_batch_case(out, o, dtype, "one block dim", D(9, 3, 2), 3, 1, V(3),
                   V(1, 1), false);
  space_batch_case(out, o, dtype, "three block dims", D(6, 2, 2, 2, 2), 5, 3,
                   V(2, 1, 3), V(0, 0, 0, 0, 0, 0), false);
  space_batch_case(out, o, dtype, "dilation 2 of [8,7,7,5]", D(8, 7, 7, 5), 4,
                   2, V(2, 2), V(2, 3, 2, 3), false);
  space_batch_case(out, o, dtype, "rank 9", D(12, 2, 2, 2, 2, 3, 2, 1, 2), 9,
                   2, V(2, 3), V(0, 0, 1, 2), false);
  space_batch_case(out, o, dtype, "identity", D(2, 3, 3), 3, 2, V(1, 1),
                   V(0, 0, 0, 0), false);
  space_batch_case(out, o, dtype, "batch not divisible", D(6, 2, 2, 1), 4, 2,
                   V(2, 2), V(0, 0, 0, 0), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  space_batch_case(out, o, dtype, "negative crop", D(8, 2, 2, 1), 4, 2,
                   V(2, 2), V(0, -1, 0, 0), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  space_batch_case(out, o, dtype, "cropped below zero", D(4, 2, 2, 1), 4, 2,
                   V(2, 2), V(3, 2, 0, 0), false)
      ->expect_code = TF_INVALID_ARGUMENT;
  struct ref_case *c = ref_case_add(out, o, "%s crops shape", o);
  data(c, dtype, D(4, 2, 2, 1), 4);
  ints(c, 2, V(2, 2), false);
  ints(c, 4, V(0, 0, 0, 0), false);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- ReverseV2, Roll --------------------------------------------------------- */

/* Row-major flat index of coord. */
static int64_t ravel(const int64_t *coord, const int64_t *dims, int rank)
{
  int64_t i = 0;
  for (int d = 0; d < rank; d++)
    i = i * dims[d] + coord[d];
  return i;
}

static int copy_input(const struct ref_tensor *x, struct ref_tensor *out)
{
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++)
    put(&out[0], i, x, i);
  return 1;
}

static int reverse_v2_compute(const struct ref_case *c, struct ref_tensor *out,
                              char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *a = &c->inputs[1];
  int64_t coord[REF_MAX_DIMS];
  bool rev[REF_MAX_DIMS] = {false};
  if (x->rank == 0)
    return copy_input(x, out);
  if (a->rank != 1)
    return fail(error, error_len, "'dims' must be 1-dimension");
  for (int64_t i = 0; i < a->elements; i++) {
    int64_t ax = at(a, i) < 0 ? at(a, i) + x->rank : at(a, i);
    if (ax < 0 || ax >= x->rank)
      return fail(error, error_len, "axis out of valid range");
    if (rev[ax])
      return fail(error, error_len, "axis specified more than once");
    rev[ax] = true;
  }
  if (x->rank > 8)
    return fail(error, error_len, "reverse of rank > 8");
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++) {
    unravel(i, x->dims, x->rank, coord);
    for (int d = 0; d < x->rank; d++)
      if (rev[d])
        coord[d] = x->dims[d] - 1 - coord[d];
    put(&out[0], i, x, ravel(coord, x->dims, x->rank));
  }
  return 1;
}

static struct ref_case *reverse_case(struct ref_cases *out, TF_DataType dtype,
                                     const char *label, const int64_t *dims,
                                     int rank, const double *axes, int count,
                                     bool wide)
{
  struct ref_case *c = ref_case_add(out, "ReverseV2", "ReverseV2 %s", label);
  data(c, dtype, dims, rank);
  ints(c, count, axes, wide);
  return c;
}

static void reverse_v2_cases(const struct ref_op *op, TF_DataType dtype,
                             struct ref_cases *out)
{
  (void)op;
  reverse_case(out, dtype, "[7] axis 0", D(7), 1, V(0), 1, false);
  reverse_case(out, dtype, "[2,3] axis 1", D(2, 3), 2, V(1), 1, true);
  reverse_case(out, dtype, "[2,3,4] axes 0,2", D(2, 3, 4), 3, V(0, 2), 2,
               false);
  reverse_case(out, dtype, "[3,1,4,5] axes -1,-3", D(3, 1, 4, 5), 4,
               V(-1, -3), 2, false);
  reverse_case(out, dtype, "[2,3,2,3,5] every axis", D(2, 3, 2, 3, 5), 5,
               V(4, 0, 3, 1, 2), 5, false);
  reverse_case(out, dtype, "[3,4] no axes", D(3, 4), 2, NULL, 0, false);
  reverse_case(out, dtype, "scalar", NULL, 0, V(0), 1, false);
  reverse_case(out, dtype, "empty [0,3]", D(0, 3), 2, V(1), 1, false);
  reverse_case(out, dtype, "odd [1031]", D(1031), 1, V(-1), 1, false);
  reverse_case(out, dtype, "[37,70] axis 0", D(37, 70), 2, V(0), 1, false);
  reverse_case(out, dtype, "rank 8", D(2, 1, 2, 3, 2, 1, 2, 3), 8,
               V(0, 2, 4, 6, 7), 5, true);
  reverse_case(out, dtype, "duplicate axis", D(2, 3, 4), 3, V(1, -2), 2,
               false)
      ->expect_code = TF_INVALID_ARGUMENT;
  reverse_case(out, dtype, "axis 3 of rank 3", D(2, 3, 4), 3, V(3), 1, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  reverse_case(out, dtype, "axis -4 of rank 3", D(2, 3, 4), 3, V(-4), 1,
               true)
      ->expect_code = TF_INVALID_ARGUMENT;
  reverse_case(out, dtype, "rank 9", D(2, 1, 1, 1, 1, 1, 1, 1, 2), 9, V(0), 1,
               false)
      ->expect_code = TF_UNIMPLEMENTED;
  struct ref_case *c = ref_case_add(out, "ReverseV2", "ReverseV2 axis 2-D");
  data(c, dtype, D(2, 3), 2);
  ref_case_input_values(c, TF_INT32, D(1, 1), 2, V(1));
  c->expect_code = TF_INVALID_ARGUMENT;
}

static int roll_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *s = &c->inputs[1],
                          *a = &c->inputs[2];
  int64_t coord[REF_MAX_DIMS], shift[REF_MAX_DIMS] = {0};
  if (x->rank == 0)
    return fail(error, error_len, "input must be 1-D or higher");
  if (s->rank > 1 || a->rank > 1 || s->rank != a->rank ||
      s->elements != a->elements)
    return fail(error, error_len, "shift and axis shapes");
  for (int64_t i = 0; i < s->elements; i++) {
    int64_t ax = at(a, i) < 0 ? at(a, i) + x->rank : at(a, i);
    if (ax < 0 || ax >= x->rank)
      return fail(error, error_len, "axis out of range");
    shift[ax] += at(s, i);
  }
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++) {
    unravel(i, x->dims, x->rank, coord);
    for (int d = 0; d < x->rank; d++) {
      int64_t n = x->dims[d];
      coord[d] = ((coord[d] - shift[d]) % n + n) % n;
    }
    put(&out[0], i, x, ravel(coord, x->dims, x->rank));
  }
  return 1;
}

static struct ref_case *roll_case(struct ref_cases *out, TF_DataType dtype,
                                  const char *label, const int64_t *dims,
                                  int rank, const double *shifts,
                                  const double *axes, int count, bool wide)
{
  struct ref_case *c = ref_case_add(out, "Roll", "Roll %s", label);
  data(c, dtype, dims, rank);
  ints(c, count, shifts, wide);
  ints(c, count, axes, false);
  return c;
}

static void roll_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  (void)op;
  roll_case(out, dtype, "[7] by 3", D(7), 1, V(3), V(0), 1, false);
  roll_case(out, dtype, "[7] by -2", D(7), 1, V(-2), V(-1), 1, true);
  roll_case(out, dtype, "[2,3,4] two axes", D(2, 3, 4), 3, V(1, -7),
            V(2, 0), 2, false);
  roll_case(out, dtype, "[3,5] same axis twice", D(3, 5), 2, V(1, 2), V(1, 1),
            2, false);
  roll_case(out, dtype, "[5,6] large shift", D(5, 6), 2, V(1000003), V(1), 1,
            true);
  roll_case(out, dtype, "[5,6] large negative", D(5, 6), 2, V(-7777777),
            V(-2), 1, false);
  roll_case(out, dtype, "[4,3] shift a multiple", D(4, 3), 2, V(6), V(1), 1,
            false);
  roll_case(out, dtype, "no shifts", D(4, 3), 2, NULL, NULL, 0, false);
  roll_case(out, dtype, "empty [0,3]", D(0, 3), 2, V(1), V(1), 1, false);
  roll_case(out, dtype, "odd [1031]", D(1031), 1, V(517), V(0), 1, false);
  roll_case(out, dtype, "rank 5 every axis", D(2, 3, 2, 3, 5), 5,
            V(1, 1, 1, 2, -1), V(0, 1, 2, 3, 4), 5, false);
  roll_case(out, dtype, "rank 9 every axis", D(2, 2, 2, 2, 2, 2, 2, 2, 3), 9,
            V(1, 1, 1, 1, 1, 1, 1, 1, 2), V(0, 1, 2, 3, 4, 5, 6, 7, 8), 9,
            false);
  struct ref_case *c = ref_case_add(out, "Roll", "Roll scalar shift and axis");
  data(c, dtype, D(3, 5), 2);
  scalar_int(c, 2, false);
  scalar_int(c, 1, false);
  roll_case(out, dtype, "scalar input", NULL, 0, V(1), V(0), 1, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  roll_case(out, dtype, "axis 2 of rank 2", D(3, 5), 2, V(1), V(2), 1, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  roll_case(out, dtype, "axis -3 of rank 2", D(3, 5), 2, V(1), V(-3), 1,
            false)
      ->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, "Roll", "Roll shift and axis sizes differ");
  data(c, dtype, D(3, 5), 2);
  ints(c, 2, V(1, 2), false);
  ints(c, 1, V(1), false);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, "Roll", "Roll shift 2-D");
  data(c, dtype, D(3, 5), 2);
  ref_case_input_values(c, TF_INT32, D(1, 1), 2, V(1));
  ref_case_input_values(c, TF_INT32, D(1, 1), 2, V(1));
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- MirrorPad, MirrorPadGrad --------------------------------------------------- */

/* Coordinate k of a dim of n, reflected back into [0, n). */
static int64_t reflect(int64_t k, int64_t n, bool sym)
{
  while (k < 0 || k >= n)
    k = k < 0 ? (sym ? -k - 1 : -k) : (sym ? 2 * n - 1 - k : 2 * n - 2 - k);
  return k;
}

/* The paddings checked as TensorFlow does; out_dims the output shape. */
static bool mirror_shapes(const struct ref_case *c, bool grad, bool sym,
                          int64_t *out_dims)
{
  const struct ref_tensor *x = &c->inputs[0], *p = &c->inputs[1];
  if (x->rank > 5 || p->rank != 2 || p->dims[1] != 2 || p->dims[0] != x->rank)
    return false;
  for (int d = 0; d < x->rank; d++) {
    int64_t b = at(p, 2 * d), a = at(p, 2 * d + 1), n = x->dims[d];
    if (b < 0 || a < 0)
      return false;
    if (grad) {
      if (b + a >= n)
        return false;
      n -= b + a;
      out_dims[d] = n;
    } else {
      out_dims[d] = b + n + a;
    }
    if (sym ? (b > n || a > n) : (b >= n || a >= n))
      return false;
  }
  return true;
}

static bool mirror_sym(const struct ref_case *c)
{
  return !strcmp(ref_case_attr_string_or(c, "mode", ""), "SYMMETRIC");
}

static int mirror_pad_compute(const struct ref_case *c, struct ref_tensor *out,
                              char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *p = &c->inputs[1];
  int64_t dims[REF_MAX_DIMS], coord[REF_MAX_DIMS];
  bool sym = mirror_sym(c);
  if (!mirror_shapes(c, false, sym, dims))
    return fail(error, error_len, "paddings");
  ref_tensor_alloc(&out[0], x->dtype, dims, x->rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    unravel(i, dims, x->rank, coord);
    for (int d = 0; d < x->rank; d++)
      coord[d] = reflect(coord[d] - at(p, 2 * d), x->dims[d], sym);
    put(&out[0], i, x, ravel(coord, x->dims, x->rank));
  }
  return 1;
}

/* Every element of the padded gradient adds into the element it was
 * copied from. */
static int mirror_pad_grad_compute(const struct ref_case *c,
                                   struct ref_tensor *out, char *error,
                                   int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *p = &c->inputs[1];
  int64_t dims[REF_MAX_DIMS], coord[REF_MAX_DIMS];
  bool sym = mirror_sym(c);
  if (!mirror_shapes(c, true, sym, dims))
    return fail(error, error_len, "paddings");
  ref_tensor_alloc(&out[0], x->dtype, dims, x->rank);
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = 0.0;
  for (int64_t i = 0; i < x->elements; i++) {
    unravel(i, x->dims, x->rank, coord);
    for (int d = 0; d < x->rank; d++)
      coord[d] = reflect(coord[d] - at(p, 2 * d), dims[d], sym);
    out[0].v[ravel(coord, dims, x->rank)] += x->v[i];
  }
  return 1;
}

static struct ref_case *mirror_case(struct ref_cases *out, const char *op,
                                    TF_DataType dtype, const char *mode,
                                    const char *label, const int64_t *dims,
                                    int rank, const double *paddings,
                                    int64_t rows, bool wide)
{
  struct ref_case *c = ref_case_add(out, op, "%s %s %s", op, mode, label);
  data(c, dtype, dims, rank);
  ref_case_input_values(c, wide ? TF_INT64 : TF_INT32, D(rows, 2), 2,
                        paddings);
  ref_case_attr_string(c, "mode", mode);
  return c;
}

static void mirror_pad_cases(const struct ref_op *op, TF_DataType dtype,
                             struct ref_cases *out)
{
  const char *o = op->op;
  static const char *const modes[2] = {"REFLECT", "SYMMETRIC"};
  for (int i = 0; i < 2; i++) {
    const char *m = modes[i];
    TF_Code sym_only = i == 1 ? TF_OK : TF_INVALID_ARGUMENT;
    mirror_case(out, o, dtype, m, "[5]", D(5), 1, V(2, 3), 1, false);
    mirror_case(out, o, dtype, m, "[3,4]", D(3, 4), 2, V(1, 2, 3, 0), 2, true);
    mirror_case(out, o, dtype, m, "[2,3,4]", D(2, 3, 4), 3,
                V(1, 1, 2, 0, 3, 3), 3, false);
    mirror_case(out, o, dtype, m, "rank 5", D(2, 3, 2, 3, 2), 5,
                V(1, 0, 0, 2, 1, 1, 2, 0, 0, 1), 5, false);
    mirror_case(out, o, dtype, m, "scalar", NULL, 0, NULL, 0, false);
    mirror_case(out, o, dtype, m, "no padding", D(3, 4), 2, V(0, 0, 0, 0), 2,
                false);
    mirror_case(out, o, dtype, m, "odd [1031]", D(1031), 1, V(5, 7), 1, false);
    mirror_case(out, o, dtype, m, "[37,70]", D(37, 70), 2, V(3, 1, 9, 4), 2,
                false);
    mirror_case(out, o, dtype, m, "padding = dim", D(1, 3), 2,
                V(1, 1, 3, 3), 2, false)
        ->expect_code = sym_only;
    mirror_case(out, o, dtype, m, "empty [0,3]", D(0, 3), 2, V(0, 0, 1, 1), 2,
                false)
        ->expect_code = sym_only;
    mirror_case(out, o, dtype, m, "padding > dim", D(3), 1, V(0, 4), 1, false)
        ->expect_code = TF_INVALID_ARGUMENT;
    mirror_case(out, o, dtype, m, "negative", D(3), 1, V(-1, 0), 1, false)
        ->expect_code = TF_INVALID_ARGUMENT;
    mirror_case(out, o, dtype, m, "wrong rows", D(3, 4), 2, V(1, 1), 1, false)
        ->expect_code = TF_INVALID_ARGUMENT;
    mirror_case(out, o, dtype, m, "rank 6", D(2, 2, 2, 2, 2, 2), 6,
                V(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 6, false)
        ->expect_code = TF_UNIMPLEMENTED;
    struct ref_case *c = ref_case_add(out, o, "%s %s not a matrix", o, m);
    data(c, dtype, D(3), 1);
    ints(c, 2, V(1, 1), false);
    ref_case_attr_string(c, "mode", m);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
  struct ref_case *c = mirror_case(out, o, dtype, "CONSTANT", "bad mode",
                                   D(3), 1, V(1, 1), 1, false);
  c->expect_code = TF_INVALID_ARGUMENT;
}

static void mirror_pad_grad_cases(const struct ref_op *op, TF_DataType dtype,
                                  struct ref_cases *out)
{
  const char *o = op->op;
  static const char *const modes[2] = {"REFLECT", "SYMMETRIC"};
  for (int i = 0; i < 2; i++) {
    const char *m = modes[i];
    mirror_case(out, o, dtype, m, "[7]", D(7), 1, V(2, 1), 1, false);
    mirror_case(out, o, dtype, m, "[5,9]", D(5, 9), 2, V(1, 1, 2, 3), 2, true);
    mirror_case(out, o, dtype, m, "[4,5,6]", D(4, 5, 6), 3,
                V(1, 1, 0, 2, 2, 1), 3, false);
    mirror_case(out, o, dtype, m, "rank 5 corners", D(3, 4, 3, 4, 3), 5,
                V(1, 0, 1, 1, 0, 1, 1, 1, 1, 0), 5, false);
    mirror_case(out, o, dtype, m, "scalar", NULL, 0, NULL, 0, false);
    mirror_case(out, o, dtype, m, "no padding", D(3, 4), 2, V(0, 0, 0, 0), 2,
                false);
    mirror_case(out, o, dtype, m, "odd [1031]", D(1031), 1, V(3, 4), 1, false);
    mirror_case(out, o, dtype, m, "padding = output dim", D(6), 1, V(2, 2), 1,
                false)
        ->expect_code = i == 1 ? TF_OK : TF_INVALID_ARGUMENT;
    mirror_case(out, o, dtype, m, "total = dim", D(3, 7), 2, V(2, 1, 0, 0), 2,
                false)
        ->expect_code = TF_INVALID_ARGUMENT;
    mirror_case(out, o, dtype, m, "empty dim", D(0, 7), 2, V(0, 0, 0, 0), 2,
                false)
        ->expect_code = TF_INVALID_ARGUMENT;
    mirror_case(out, o, dtype, m, "negative", D(4, 7), 2, V(1, 1, -1, 0), 2,
                false)
        ->expect_code = TF_INVALID_ARGUMENT;
    mirror_case(out, o, dtype, m, "wrong rows", D(4, 7), 2, V(1, 1), 1, false)
        ->expect_code = TF_INVALID_ARGUMENT;
    mirror_case(out, o, dtype, m, "rank 6", D(4, 4, 4, 4, 4, 4), 6,
                V(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 6, false)
        ->expect_code = TF_UNIMPLEMENTED;
  }
}

/* ---- DepthToSpace, SpaceToDepth -------------------------------------------------- */

/* The deep tensor [n, h, w, bs * bs * d] (NHWC) against the wide one
 * [n, h * bs, w * bs, d]: wide (b, y, x, k) is deep (b, y / bs, x / bs,
 * ((y % bs) * bs + x % bs) * d + k), as TensorFlow's CPU kernel writes. */
static int depth_space_compute(const struct ref_case *c,
                               struct ref_tensor *out, char *error,
                               int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  bool to_space = !strcmp(c->op, "DepthToSpace");
  bool nchw = !strcmp(ref_case_attr_string_or(c, "data_format", "NHWC"),
                      "NCHW");
  if (strcmp(ref_case_attr_string_or(c, "data_format", "NHWC"), "NHWC") &&
      !nchw)
    return fail(error, error_len, "data_format");
  int64_t bs = ref_case_attr_int_or(c, "block_size", 0);
  if (x->rank != 4 || bs < 2)
    return fail(error, error_len, "rank or block size");
  int ci = nchw ? 1 : 3, hi = nchw ? 2 : 1, wi = nchw ? 3 : 2;
  int64_t n = x->dims[0], ch = x->dims[ci], h = x->dims[hi], w = x->dims[wi];
  int64_t dims[4];
  if (to_space ? ch % (bs * bs) != 0 : (h % bs != 0 || w % bs != 0))
    return fail(error, error_len, "not divisible");
  dims[0] = n;
  dims[ci] = to_space ? ch / (bs * bs) : ch * bs * bs;
  dims[hi] = to_space ? h * bs : h / bs;
  dims[wi] = to_space ? w * bs : w / bs;
  ref_tensor_alloc(&out[0], x->dtype, dims, 4);
  const int64_t *wide_dims = to_space ? dims : x->dims;
  const int64_t *deep_dims = to_space ? x->dims : dims;
  int64_t d = wide_dims[ci];
  int64_t wc[4], dc[4];
  for (int64_t i = 0; i < x->elements; i++) {
    unravel(i, wide_dims, 4, wc);
    dc[0] = wc[0];
    dc[hi] = wc[hi] / bs;
    dc[wi] = wc[wi] / bs;
    dc[ci] = ((wc[hi] % bs) * bs + wc[wi] % bs) * d + wc[ci];
    int64_t wide_i = i, deep_i = ravel(dc, deep_dims, 4);
    if (to_space)
      put(&out[0], wide_i, x, deep_i);
    else
      put(&out[0], deep_i, x, wide_i);
  }
  return 1;
}

static struct ref_case *depth_case(struct ref_cases *out, const char *op,
                                   TF_DataType dtype, const char *label,
                                   const int64_t *dims, int rank, int64_t bs,
                                   const char *format)
{
  struct ref_case *c = ref_case_add(out, op, "%s %s", op, label);
  data(c, dtype, dims, rank);
  ref_case_attr_int(c, "block_size", bs);
  if (format != NULL)
    ref_case_attr_string(c, "data_format", format);
  return c;
}

static void depth_to_space_cases(const struct ref_op *op, TF_DataType dtype,
                                 struct ref_cases *out)
{
  const char *o = op->op;
  depth_case(out, o, dtype, "[1,2,3,4] bs 2", D(1, 2, 3, 4), 4, 2, NULL);
  depth_case(out, o, dtype, "[2,3,2,18] bs 3", D(2, 3, 2, 18), 4, 3, "NHWC");
  depth_case(out, o, dtype, "[2,1,1,8] bs 2", D(2, 1, 1, 8), 4, 2, NULL);
  depth_case(out, o, dtype, "odd [3,5,7,4] bs 2", D(3, 5, 7, 4), 4, 2, NULL);
  depth_case(out, o, dtype, "[2,9,17,32] bs 4", D(2, 9, 17, 32), 4, 4, NULL);
  depth_case(out, o, dtype, "empty batch", D(0, 2, 2, 4), 4, 2, NULL);
  depth_case(out, o, dtype, "NCHW [2,8,3,2] bs 2", D(2, 8, 3, 2), 4, 2,
             "NCHW");
  depth_case(out, o, dtype, "NCHW [1,18,3,5] bs 3", D(1, 18, 3, 5), 4, 3,
             "NCHW");
  depth_case(out, o, dtype, "depth not divisible", D(1, 2, 2, 6), 4, 2, NULL)
      ->expect_code = TF_INVALID_ARGUMENT;
  depth_case(out, o, dtype, "rank 3", D(2, 2, 4), 3, 2, NULL)->expect_code =
      TF_INVALID_ARGUMENT;
  depth_case(out, o, dtype, "NCHW_VECT_C", D(1, 2, 2, 4), 4, 2, "NCHW_VECT_C")
      ->expect_code = TF_INVALID_ARGUMENT;
  depth_case(out, o, dtype, "block size 1", D(1, 2, 2, 4), 4, 1, NULL)
      ->expect_code = TF_INVALID_ARGUMENT;
}

static void space_to_depth_cases(const struct ref_op *op, TF_DataType dtype,
                                 struct ref_cases *out)
{
  const char *o = op->op;
  depth_case(out, o, dtype, "[1,4,6,3] bs 2", D(1, 4, 6, 3), 4, 2, NULL);
  depth_case(out, o, dtype, "[2,6,3,5] bs 3", D(2, 6, 3, 5), 4, 3, "NHWC");
  depth_case(out, o, dtype, "[2,2,2,1] bs 2", D(2, 2, 2, 1), 4, 2, NULL);
  depth_case(out, o, dtype, "odd [3,10,14,3] bs 2", D(3, 10, 14, 3), 4, 2,
             NULL);
  depth_case(out, o, dtype, "[1,36,68,2] bs 4", D(1, 36, 68, 2), 4, 4, NULL);
  depth_case(out, o, dtype, "empty batch", D(0, 4, 4, 2), 4, 2, NULL);
  depth_case(out, o, dtype, "NCHW [2,3,4,6] bs 2", D(2, 3, 4, 6), 4, 2,
             "NCHW");
  depth_case(out, o, dtype, "NCHW [1,2,9,3] bs 3", D(1, 2, 9, 3), 4, 3,
             "NCHW");
  depth_case(out, o, dtype, "width not divisible", D(1, 4, 5, 2), 4, 2, NULL)
      ->expect_code = TF_INVALID_ARGUMENT;
  depth_case(out, o, dtype, "height not divisible", D(1, 3, 4, 1), 4, 2, NULL)
      ->expect_code = TF_INVALID_ARGUMENT;
  depth_case(out, o, dtype, "rank 5", D(1, 2, 2, 2, 1), 5, 2, NULL)
      ->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- ReverseSequence ---------------------------------------------------------------- */

/* Lengths beyond the seq dim are clamped and negative ones reverse
 * nothing: TensorFlow's GPU kernel does not check them (its CPU kernel
 * refuses them), and ours keeps its reads inside the input. */
static int reverse_sequence_compute(const struct ref_case *c,
                                    struct ref_tensor *out, char *error,
                                    int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *lens = &c->inputs[1];
  int64_t sd = ref_case_attr_int_or(c, "seq_dim", -1);
  int64_t bd = ref_case_attr_int_or(c, "batch_dim", 0);
  int64_t coord[REF_MAX_DIMS];
  if (sd < 0 || bd < 0 || sd == bd || sd >= x->rank || bd >= x->rank ||
      lens->rank != 1 || lens->elements != x->dims[bd] || x->rank < 2 ||
      x->rank > 5)
    return fail(error, error_len, "dims");
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++) {
    unravel(i, x->dims, x->rank, coord);
    int64_t len = at(lens, coord[bd]);
    len = len < 0 ? 0 : len > x->dims[sd] ? x->dims[sd] : len;
    if (coord[sd] < len)
      coord[sd] = len - 1 - coord[sd];
    put(&out[0], i, x, ravel(coord, x->dims, x->rank));
  }
  return 1;
}

static struct ref_case *rev_seq_case(struct ref_cases *out, TF_DataType dtype,
                                     const char *label, const int64_t *dims,
                                     int rank, int64_t seq_dim,
                                     int64_t batch_dim, const double *lens,
                                     int count, bool int32)
{
  struct ref_case *c =
      ref_case_add(out, "ReverseSequence", "ReverseSequence %s", label);
  data(c, dtype, dims, rank);
  ref_case_input_values(c, int32 ? TF_INT32 : TF_INT64, (int64_t[]){count}, 1,
                        lens);
  ref_case_attr_int(c, "seq_dim", seq_dim);
  ref_case_attr_int(c, "batch_dim", batch_dim);
  return c;
}

static void reverse_sequence_cases(const struct ref_op *op, TF_DataType dtype,
                                   struct ref_cases *out)
{
  (void)op;
  rev_seq_case(out, dtype, "[3,5,2] seq 1", D(3, 5, 2), 3, 1, 0, V(1, 5, 3), 3,
               false);
  rev_seq_case(out, dtype, "[4,3] batch after seq", D(4, 3), 2, 0, 1,
               V(0, 4, 2), 3, true);
  rev_seq_case(out, dtype, "[2,3,4,5] seq last", D(2, 3, 4, 5), 4, 3, 1,
               V(5, 0, 2), 3, false);
  rev_seq_case(out, dtype, "rank 5", D(2, 2, 3, 2, 3), 5, 2, 4, V(3, 1, 2), 3,
               false);
  rev_seq_case(out, dtype, "[3,7] int32 lengths", D(3, 7), 2, 1, 0,
               V(7, 0, 4), 3, true);
  rev_seq_case(out, dtype, "odd [2,1031]", D(2, 1031), 2, 1, 0, V(1031, 500),
               2, false);
  rev_seq_case(out, dtype, "empty seq", D(3, 0, 2), 3, 1, 0, V(0, 0, 0), 3,
               false);
  rev_seq_case(out, dtype, "lengths out of range (clamped)", D(3, 5, 2), 3, 1,
               0, V(9, -1, 2), 3, false);
  rev_seq_case(out, dtype, "batch == seq", D(3, 5), 2, 1, 1, V(1, 2, 3, 4, 5),
               5, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  rev_seq_case(out, dtype, "seq_dim past rank", D(3, 5), 2, 2, 0, V(1, 2, 3),
               3, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  rev_seq_case(out, dtype, "batch_dim past rank", D(3, 5), 2, 1, 2, V(1), 1,
               false)
      ->expect_code = TF_INVALID_ARGUMENT;
  rev_seq_case(out, dtype, "too few lengths", D(3, 5), 2, 1, 0, V(1, 2), 2,
               false)
      ->expect_code = TF_INVALID_ARGUMENT;
  rev_seq_case(out, dtype, "negative seq_dim", D(3, 5), 2, -1, 0, V(1, 2, 3),
               3, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  rev_seq_case(out, dtype, "rank 6", D(2, 2, 1, 1, 1, 2), 6, 5, 0, V(1, 2), 2,
               false)
      ->expect_code = TF_INVALID_ARGUMENT;
  struct ref_case *c = ref_case_add(out, "ReverseSequence",
                                    "ReverseSequence lengths 2-D");
  data(c, dtype, D(3, 5), 2);
  ref_case_input_values(c, TF_INT64, D(1, 3), 2, V(1, 2, 3));
  ref_case_attr_int(c, "seq_dim", 1);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- LinSpace ------------------------------------------------------------------------ */

/* start + step * i in T (float or double), as TensorFlow's kernel: the
 * first value is start and the last stop, exactly. */
static int lin_space_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  const struct ref_tensor *s = &c->inputs[0], *e = &c->inputs[1],
                          *n_t = &c->inputs[2];
  if (s->rank != 0 || e->rank != 0 || n_t->rank != 0 || at(n_t, 0) <= 0)
    return fail(error, error_len, "scalars and num > 0");
  int64_t num = at(n_t, 0);
  ref_tensor_alloc(&out[0], s->dtype, &num, 1);
  bool f32 = s->dtype != TF_DOUBLE;
  double start = s->v[0], stop = e->v[0];
  float fstep = num > 1 ? ((float)stop - (float)start) / (float)(num - 1) : 0;
  double dstep = num > 1 ? (stop - start) / (double)(num - 1) : 0;
  for (int64_t i = 0; i < num; i++) {
    double v;
    if (i == 0)
      v = start;
    else if (i == num - 1)
      v = stop;
    else if (f32)
      v = (float)((float)start + (float)(fstep * (float)i));
    else
      v = start + dstep * (double)i;
    out[0].v[i] = v;
  }
  return 1;
}

static struct ref_case *linspace_case(struct ref_cases *out, TF_DataType dtype,
                                      const char *label, double start,
                                      double stop, double num, bool wide)
{
  struct ref_case *c = ref_case_add(out, "LinSpace", "LinSpace %s", label);
  double v = ref_round_to(dtype, start);
  ref_case_input_values(c, dtype, NULL, 0, &v);
  v = ref_round_to(dtype, stop);
  ref_case_input_values(c, dtype, NULL, 0, &v);
  scalar_int(c, num, wide);
  return c;
}

static void lin_space_cases(const struct ref_op *op, TF_DataType dtype,
                            struct ref_cases *out)
{
  (void)op;
  linspace_case(out, dtype, "1..2 in 5", 1, 2, 5, false);
  linspace_case(out, dtype, "0.1..0.7 in 7", 0.1, 0.7, 7, true);
  linspace_case(out, dtype, "num 1", -3, 5, 1, false);
  linspace_case(out, dtype, "num 2", -3, 5, 2, false);
  linspace_case(out, dtype, "10..-10 in 1031", 10, -10, 1031, false);
  linspace_case(out, dtype, "constant", 5, 5, 4, true);
  linspace_case(out, dtype, "num 0", 1, 2, 0, false)->expect_code =
      TF_INVALID_ARGUMENT;
  linspace_case(out, dtype, "num -1", 1, 2, -1, true)->expect_code =
      TF_INVALID_ARGUMENT;
  struct ref_case *c = ref_case_add(out, "LinSpace", "LinSpace start vector");
  ref_case_input_values(c, dtype, D(1), 1, V(1));
  ref_case_input_values(c, dtype, NULL, 0, V(2));
  scalar_int(c, 3, false);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, "LinSpace", "LinSpace num vector");
  ref_case_input_values(c, dtype, NULL, 0, V(1));
  ref_case_input_values(c, dtype, NULL, 0, V(2));
  ints(c, 1, V(3), false);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- NoOp ----------------------------------------------------------------- */

static void noop_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  (void)dtype;
  ref_case_add(out, op->op, "NoOp");
}

static int noop_compute(const struct ref_case *c, struct ref_tensor *outputs,
                        char *error, int error_len)
{
  (void)c;
  (void)outputs;
  (void)error;
  (void)error_len;
  return 0;
}

#define EXACT 0.0, 0.0

/* Dtypes of one element size share a program, so the full list of cases
 * runs for one dtype per size (and int32, which some ops keep in host
 * memory); the others run the first few, enough to show that their bytes
 * move. This keeps the suite short on Oclgrind. */
static bool runs_every_case(TF_DataType dtype)
{
  switch (dtype) {
  case TF_INT8: case TF_HALF: case TF_FLOAT: case TF_INT32: case TF_INT64:
  case TF_COMPLEX128:
    return true;
  default:
    return false;
  }
}

#define FEW_CASES 4

static void thin(struct ref_cases *out, int first, TF_DataType dtype)
{
  if (runs_every_case(dtype))
    return;
  for (int i = first + FEW_CASES; i < out->count; i++)
    for (int j = 0; j < out->items[i].num_inputs; j++)
      ref_tensor_finish(&out->items[i].inputs[j]);
  if (out->count > first + FEW_CASES)
    out->count = first + FEW_CASES;
}

#define THINNED(fn)                                                        \
  static void fn##_thinned(const struct ref_op *op, TF_DataType dtype,     \
                           struct ref_cases *out)                          \
  {                                                                        \
    int first = out->count;                                                \
    fn(op, dtype, out);                                                    \
    thin(out, first, dtype);                                               \
  }
THINNED(transpose_cases)
THINNED(concat_cases)
THINNED(pack_cases)
THINNED(unpack_cases)
THINNED(split_cases)
THINNED(split_v_cases)
THINNED(slice_cases)
THINNED(strided_slice_cases)
THINNED(strided_slice_grad_cases)
THINNED(tile_cases)
THINNED(pad_cases)
THINNED(space_to_batch_cases)
THINNED(batch_to_space_cases)
THINNED(reverse_v2_cases)
THINNED(roll_cases)
THINNED(depth_to_space_cases)
THINNED(space_to_depth_cases)
THINNED(reverse_sequence_cases)


/* ---- Bitcast --------------------------------------------------------------- */

static int bitcast_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  TF_DataType to = (TF_DataType)ref_case_attr(c, "type")->value.type;
  size_t in_size = TF_DataTypeSize(x->dtype), out_size = TF_DataTypeSize(to);
  int64_t dims[REF_MAX_DIMS + 1];
  int rank = x->rank;
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)rank);
  if (in_size > out_size) {
    dims[rank++] = (int64_t)(in_size / out_size);
  } else if (in_size < out_size) {
    if (rank == 0 || dims[rank - 1] != (int64_t)(out_size / in_size)) {
      snprintf(error, (size_t)error_len, "last dim");
      return -1;
    }
    rank--;
  }
  /* The bytes of x, read as `to`. */
  TF_Status *status = TF_NewStatus();
  TF_Tensor *bytes = ref_tensor_to_tf(x, status);
  TF_Tensor *as = TF_AllocateTensor(to, dims, rank, TF_TensorByteSize(bytes));
  memcpy(TF_TensorData(as), TF_TensorData(bytes), TF_TensorByteSize(bytes));
  bool ok = ref_tensor_from_tf(&out[0], as);
  TF_DeleteTensor(bytes);
  TF_DeleteTensor(as);
  TF_DeleteStatus(status);
  return ok ? 1 : -1;
}

static void bitcast_case(struct ref_cases *out, TF_DataType from, TF_DataType to,
                         const int64_t *dims, int rank, TF_Code code)
{
  struct ref_case *c = ref_case_add(out, "Bitcast", "Bitcast %d->%d rank %d",
                                    (int)from, (int)to, rank);
  ref_case_input(c, from, dims, rank, REF_ANY);
  ref_case_attr_type(c, "type", to);
  c->expect_code = code;
}

/* Bitcast has no type constraint: the cases cover pairs of sizes. */
static void bitcast_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  (void)op;
  (void)dtype;
  bitcast_case(out, TF_FLOAT, TF_INT32, (int64_t[]){3, 5}, 2, TF_OK);
  bitcast_case(out, TF_INT32, TF_FLOAT, (int64_t[]){7}, 1, TF_OK);
  bitcast_case(out, TF_FLOAT, TF_INT32, (int64_t[]){0}, 0, TF_OK);
  bitcast_case(out, TF_INT64, TF_INT32, (int64_t[]){5}, 1, TF_OK);
  bitcast_case(out, TF_INT32, TF_INT64, (int64_t[]){3, 2}, 2, TF_OK);
  bitcast_case(out, TF_HALF, TF_INT16, (int64_t[]){9}, 1, TF_OK);
  bitcast_case(out, TF_FLOAT, TF_HALF, (int64_t[]){4, 0}, 2, TF_OK);
  bitcast_case(out, TF_INT32, TF_INT64, (int64_t[]){3}, 1, TF_INVALID_ARGUMENT);
}

/* ---- _ParallelConcatStart, _ParallelConcatUpdate ----------------------- */

static void parallel_concat_start_cases(const struct ref_op *op,
                                        TF_DataType dtype,
                                        struct ref_cases *out)
{
  (void)op;
  static const struct {
    int rank;
    int64_t dims[3];
  } shapes[] = {{2, {4, 3}}, {1, {5}}, {3, {2, 0, 3}}, {3, {3, 2, 7}}};
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, "_ParallelConcatStart",
                                      "_ParallelConcatStart case %zu", i);
    ref_case_attr_shape(c, "shape", shapes[i].dims, shapes[i].rank);
    ref_case_attr_type(c, "dtype", dtype);
  }
}

/* The output's shape; its values are unspecified (atol INFINITY). */
static int parallel_concat_start_compute(const struct ref_case *c,
                                         struct ref_tensor *outputs,
                                         char *error, int error_len)
{
  (void)error;
  (void)error_len;
  const struct tfocl_attr *shape = ref_case_attr(c, "shape");
  const struct tfocl_attr *dtype = ref_case_attr(c, "dtype");
  ref_tensor_alloc(&outputs[0], dtype->value.type, shape->value.shape.dims,
                   shape->value.shape.num_dims);
  return 1;
}

static struct ref_case *parallel_update_case(struct ref_cases *out,
                                             TF_DataType dtype,
                                             const char *label,
                                             const int64_t *value_dims,
                                             int value_rank,
                                             const int64_t *update_dims,
                                             int update_rank, int64_t loc)
{
  struct ref_case *c = ref_case_add(out, "_ParallelConcatUpdate",
                                    "_ParallelConcatUpdate %s", label);
  data(c, dtype, value_dims, value_rank);
  data(c, dtype, update_dims, update_rank);
  ref_case_attr_int(c, "loc", loc);
  return c;
}

static void parallel_concat_update_cases(const struct ref_op *op,
                                         TF_DataType dtype,
                                         struct ref_cases *out)
{
  (void)op;
  parallel_update_case(out, dtype, "row 2 of [4,3]", D(4, 3), 2, D(1, 3), 2,
                       2);
  parallel_update_case(out, dtype, "row 0 of [5]", D(5), 1, D(1), 1, 0);
  parallel_update_case(out, dtype, "loc -1 of [3,2,7]", D(3, 2, 7), 3,
                       D(1, 2, 7), 3, -1);
  parallel_update_case(out, dtype, "last row of [1031,2]", D(1031, 2), 2,
                       D(1, 2), 2, 1030);
  parallel_update_case(out, dtype, "empty rows", D(3, 0), 2, D(1, 0), 2, 1);
  parallel_update_case(out, dtype, "rank 9", D(3, 2, 1, 2, 2, 1, 2, 3, 2), 9,
                       D(1, 2, 1, 2, 2, 1, 2, 3, 2), 9, 1);
  parallel_update_case(out, dtype, "scalar value", NULL, 0, NULL, 0, 0)
      ->expect_code = TF_INVALID_ARGUMENT;
  parallel_update_case(out, dtype, "loc past the rows", D(3, 2), 2, D(1, 2), 2,
                       3)
      ->expect_code = TF_INVALID_ARGUMENT;
  parallel_update_case(out, dtype, "two update rows", D(3, 2), 2, D(2, 2), 2,
                       0)
      ->expect_code = TF_INVALID_ARGUMENT;
  parallel_update_case(out, dtype, "ranks differ", D(3, 2), 2, D(1, 2, 1), 3,
                       0)
      ->expect_code = TF_INVALID_ARGUMENT;
  parallel_update_case(out, dtype, "row sizes differ", D(3, 2), 2, D(1, 3), 2,
                       0)
      ->expect_code = TF_INVALID_ARGUMENT;
}

/* value with row loc (modulo the rows) replaced by update[0]. */
static int parallel_concat_update_compute(const struct ref_case *c,
                                          struct ref_tensor *outputs,
                                          char *error, int error_len)
{
  const struct ref_tensor *v = &c->inputs[0], *u = &c->inputs[1];
  int64_t loc = ref_case_attr_int_or(c, "loc", 0);
  if (v->rank < 1)
    return fail(error, error_len, "value should be at least rank 1.");
  if (v->dims[0] <= loc)
    return fail(error, error_len, "0th dimension of value is less than loc_");
  bool same = v->rank == u->rank;
  for (int d = 1; same && d < v->rank; d++)
    same = v->dims[d] == u->dims[d];
  if (!same || u->dims[0] != 1)
    return fail(error, error_len, "update shape doesn't match");
  ref_tensor_alloc(&outputs[0], v->dtype, v->dims, v->rank);
  int lanes = ref_lanes(v->dtype);
  memcpy(outputs[0].v, v->v,
         sizeof(double) * (size_t)(v->elements * lanes));
  int64_t rows = v->dims[0], cols = v->elements / rows;
  int64_t row = ((loc % rows) + rows) % rows;
  memcpy(outputs[0].v + row * cols * lanes, u->v,
         sizeof(double) * (size_t)(cols * lanes));
  return 1;
}

const struct ref_op ref_ops_movement[] = {
    {"NoOp", EXACT, REF_ANY, noop_cases, noop_compute},
    {"Transpose", EXACT, REF_ANY, transpose_cases_thinned, transpose_compute},
    {"ConcatV2", EXACT, REF_ANY, concat_cases_thinned, concat_compute},
    {"Pack", EXACT, REF_ANY, pack_cases_thinned, pack_compute},
    {"Unpack", EXACT, REF_ANY, unpack_cases_thinned, unpack_compute},
    {"Split", EXACT, REF_ANY, split_cases_thinned, split_compute},
    {"SplitV", EXACT, REF_ANY, split_v_cases_thinned, split_v_compute},
    {"Slice", EXACT, REF_ANY, slice_cases_thinned, slice_compute},
    {"StridedSlice", EXACT, REF_ANY, strided_slice_cases_thinned,
     strided_slice_compute},
    {"StridedSliceGrad", EXACT, REF_ANY, strided_slice_grad_cases_thinned,
     strided_slice_grad_compute},
    {"Tile", EXACT, REF_ANY, tile_cases_thinned, tile_compute},
    {"Pad", EXACT, REF_ANY, pad_cases_thinned, pad_compute},
    {"PadV2", EXACT, REF_ANY, pad_cases_thinned, pad_compute},
    {"Bitcast", 0.0, 0.0, REF_ANY, bitcast_cases, bitcast_compute},
    {"_ParallelConcatStart", 0.0, INFINITY, REF_ANY,
     parallel_concat_start_cases, parallel_concat_start_compute},
    {"_ParallelConcatUpdate", EXACT, REF_ANY, parallel_concat_update_cases,
     parallel_concat_update_compute},
    {"SpaceToBatchND", EXACT, REF_ANY, space_to_batch_cases_thinned,
     space_batch_compute},
    {"BatchToSpaceND", EXACT, REF_ANY, batch_to_space_cases_thinned,
     space_batch_compute},
    {"ReverseV2", EXACT, REF_ANY, reverse_v2_cases_thinned,
     reverse_v2_compute},
    {"Roll", EXACT, REF_ANY, roll_cases_thinned, roll_compute},
    /* Float dtypes only (TensorFlow's GPU kernels): every case runs. */
    {"MirrorPad", EXACT, REF_ANY, mirror_pad_cases, mirror_pad_compute},
    /* Sums of up to 3^5 terms in another order than the reference's. */
    {"MirrorPadGrad", 1e-5, 1e-5, REF_ANY, mirror_pad_grad_cases,
     mirror_pad_grad_compute},
    {"DepthToSpace", EXACT, REF_ANY, depth_to_space_cases_thinned,
     depth_space_compute},
    {"SpaceToDepth", EXACT, REF_ANY, space_to_depth_cases_thinned,
     depth_space_compute},
    {"ReverseSequence", EXACT, REF_ANY, reverse_sequence_cases_thinned,
     reverse_sequence_compute},
    {"LinSpace", EXACT, REF_ANY, lin_space_cases, lin_space_compute},
    {.op = NULL},
};
