/* Fill, gather and select: Fill, ZerosLike, OnesLike, GatherV2, Select,
 * SelectV2, OneHot, BroadcastTo and Range.
 *
 * These ops move elements without looking at them, so gather.cl is built
 * once per element size (1, 2, 4, 8, 16 bytes) rather than per dtype, and
 * each op takes every fixed-size dtype TensorFlow's GPU kernels take for it
 * (float8 and 4-bit types aside). Memory placement follows TensorFlow's GPU
 * registrations: shape-like arguments (dims, axis, depth, shape, Range's
 * start/limit/delta) are HostMemory; int32 Fill, ZerosLike/OnesLike's
 * output, BroadcastTo and Range are computed on the host with host outputs
 * (TensorFlow's int32 special kernels), while int32 GatherV2, Select,
 * SelectV2 and OneHot stay on the device as TensorFlow's GPU kernels do.
 *
 * GatherV2 writes zeros for out-of-range indices, like TensorFlow's GPU
 * kernel: the indices live on the device and checking them on the host
 * would block. batch_dims follows TensorFlow's GatherOp (gather_op.cc):
 * params [batch, outer, limit, inner], indices [batch, nb]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gather.h"
#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_gather[];

/* The kernels only move elements: one program per element size, plus one
 * for the 16-byte complex128. */
enum { NUM_SIZES = 5 };
OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_SIZES] = {
    {"gather_1", ocl_cl_source_gather, "-DT=uchar -DELEM_SIZE=1"},
    {"gather_2", ocl_cl_source_gather, "-DT=ushort -DELEM_SIZE=2"},
    {"gather_4", ocl_cl_source_gather, "-DT=uint -DELEM_SIZE=4"},
    {"gather_8", ocl_cl_source_gather, "-DT=ulong -DELEM_SIZE=8"},
    {"gather_16", ocl_cl_source_gather, "-DT=ulong2 -DELEM_SIZE=16"},
};

const struct ocl_program *ocl_gather_program(TF_DataType dtype)
{
  switch (ocl_tf.DataTypeSize(dtype)) {
  case 1: return &programs[0];
  case 2: return &programs[1];
  case 4: return &programs[2];
  case 8: return &programs[3];
  case 16: return &programs[4];
  default: return NULL;
  }
}

enum op_kind {
  FILL, ZEROS_LIKE, ONES_LIKE, GATHER_V2, SELECT, SELECT_V2, ONE_HOT,
  BROADCAST_TO, RANGE
};

/* The dtypes of TensorFlow's GPU registrations, as bits of TF_DataType
 * (every value below 64). */
#define TB(t) (UINT64_C(1) << (t))
#define BASE_TYPES                                                         \
  (TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_BFLOAT16) | TB(TF_DOUBLE) |          \
   TB(TF_COMPLEX64) | TB(TF_COMPLEX128) | TB(TF_BOOL) | TB(TF_INT64))
#define SMALL_INTS \
  (TB(TF_INT8) | TB(TF_UINT8) | TB(TF_INT16) | TB(TF_UINT16))
#define WIDE_UINTS (TB(TF_UINT32) | TB(TF_UINT64))

struct gather_op {
  const char *op;
  enum op_kind kind;
  const char *type_attr; /* the data type's attribute */
  uint64_t types;        /* TensorFlow's GPU kernels' dtypes */
  /* HostMemory args of the device kernels, then of the int32 host kernels
   * (NULL-terminated). */
  const char *host_args[5];
  const char *int32_host_args[5];
};

static const struct gather_op gather_ops[] = {
    {"Fill", FILL, "T", BASE_TYPES | SMALL_INTS | TB(TF_INT32), {"dims"},
     {"dims", "value", "output"}},
    {"ZerosLike", ZEROS_LIKE, "T",
     BASE_TYPES | SMALL_INTS | WIDE_UINTS | TB(TF_INT32), {NULL}, {"y"}},
    {"OnesLike", ONES_LIKE, "T",
     BASE_TYPES | SMALL_INTS | WIDE_UINTS | TB(TF_INT32), {NULL}, {"y"}},
    {"GatherV2", GATHER_V2, "Tparams", BASE_TYPES | TB(TF_INT32), {"axis"},
     {"axis"}},
    {"Select", SELECT, "T", BASE_TYPES | TB(TF_INT32), {NULL}, {NULL}},
    {"SelectV2", SELECT_V2, "T",
     BASE_TYPES | SMALL_INTS | WIDE_UINTS | TB(TF_INT32), {NULL}, {NULL}},
    {"OneHot", ONE_HOT, "T", BASE_TYPES | TB(TF_INT8) | TB(TF_INT32),
     {"depth"}, {"depth"}},
    {"BroadcastTo", BROADCAST_TO, "T", BASE_TYPES | TB(TF_INT32), {"shape"},
     {"input", "shape", "output"}},
    {"Range", RANGE, "Tidx", TB(TF_FLOAT) | TB(TF_INT32) | TB(TF_INT64),
     {"start", "limit", "delta"}, {"start", "limit", "delta", "output"}},
};

#define NUM_OPS (sizeof(gather_ops) / sizeof(gather_ops[0]))

/* The cl_kernels one op instance launches (named at create time). */
enum { MAX_KERNELS = 5 };

struct gather_kernel {
  const struct gather_op *op;
  TF_DataType dtype;
  bool on_host; /* int32 computed on the host (int32_host_args) */
  int64_t batch_dims; /* GatherV2 */
  int64_t axis;       /* OneHot */
  struct ocl_kernel k[MAX_KERNELS];
  struct ocl_gather_kernels gather; /* GatherV2 */
};

/* GatherV2's kernels, and Select's, OneHot's and BroadcastTo's: 32-bit
 * index math first, 64-bit second, then a CPU device's rows kernel. */
enum { K32 = 0, K64 = 1, KROWS = 2 };
/* Select's: select_flat, select_bcast32, select_bcast, then a CPU
 * device's select_vec16 (elements of up to 8 bytes) and select_rows. */
enum { SELECT_VEC16 = 3, SELECT_ROWS = 4 };
/* The shortest innermost dim select_rows takes: a SIMD vector of floats;
 * shorter rows stay with select_bcast32. */
#define SELECT_ROWS_MIN_INNER 16

static bool host_int32(const struct gather_op *op, TF_DataType dtype)
{
  return dtype == TF_INT32 &&
         (op->kind == FILL || op->kind == ZEROS_LIKE || op->kind == ONES_LIKE ||
          op->kind == BROADCAST_TO || op->kind == RANGE);
}

/* ---- Helpers --------------------------------------------------------------- */

/* t's dims, any rank (these ops collapse what they index). */
static int read_dims(const TF_Tensor *t, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  for (int i = 0; i < rank; i++)
    dims[i] = ocl_tf.Dim(t, i);
  return rank;
}

static void shape_string(const TF_Tensor *t, char *buf, int len)
{
  int64_t dims[OCL_MAX_RANK];
  ocl_shape_format(dims, read_dims(t, dims), buf, len);
}

static bool fits_int32(int64_t n) { return n <= INT32_MAX; }

/* A shape from a host int32/int64 vector (Fill's dims, BroadcastTo's
 * shape), with TensorShapeUtils::MakeShape's checks. */
static int shape_from_tensor(struct ocl_op *op, const TF_Tensor *t,
                             const char *what, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  int64_t n = ocl_tf.TensorElementCount(t);
  /* IsLegacyVector: a vector, or a scalar standing for one. */
  if (rank > 1) {
    char s[160];
    shape_string(t, s, sizeof(s));
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s must be a vector, got shape %s",
                what, s);
    return -1;
  }
  if (n > OCL_MAX_RANK) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Too many dimensions in tensor: %lld (at most %d)",
                (long long)n, OCL_MAX_RANK);
    return -1;
  }
  int64_t elements = 1;
  for (int64_t i = 0; i < n; i++) {
    dims[i] = ocl_host_int(t, i);
    if (dims[i] < 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "Dimension %lld must be >= 0",
                  (long long)dims[i]);
      return -1;
    }
    /* As TensorShape: the element count must fit in int64. */
    if (dims[i] != 0 && elements > INT64_MAX / dims[i]) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Encountered overflow when multiplying shape dimensions "
                  "of %s",
                  what);
      return -1;
    }
    elements *= dims[i];
  }
  return (int)n;
}

/* The bit pattern of 1 in `dtype`; its size. */
static size_t one_pattern(TF_DataType dtype, void *pattern)
{
  memset(pattern, 0, 16);
  switch (dtype) {
  case TF_FLOAT: case TF_COMPLEX64: *(float *)pattern = 1.0f; break;
  case TF_DOUBLE: case TF_COMPLEX128: *(double *)pattern = 1.0; break;
  case TF_HALF: *(uint16_t *)pattern = 0x3c00; break;
  case TF_BFLOAT16: *(uint16_t *)pattern = 0x3f80; break;
  default: *(uint8_t *)pattern = 1; break; /* integers and bool, little-endian */
  }
  return ocl_tf.DataTypeSize(dtype);
}

/* ---- Fill, ZerosLike, OnesLike ------------------------------------------- */

static void fill_compute(struct gather_kernel *k, struct ocl_op *op)
{
  int64_t dims[OCL_MAX_RANK];
  char s[160];

  TF_Tensor *dims_t = ocl_op_input(op, 0);
  TF_Tensor *value = dims_t ? ocl_op_input(op, 1) : NULL;
  if (value == NULL)
    return;
  int rank = shape_from_tensor(op, dims_t, "dims", dims);
  if (rank < 0)
    return;
  /* IsLegacyScalar: a scalar, or a one-element vector. */
  if (!(ocl_tf.NumDims(value) == 0 ||
        (ocl_tf.NumDims(value) == 1 && ocl_tf.Dim(value, 0) == 1))) {
    shape_string(value, s, sizeof(s));
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "value must be a scalar, got shape %s",
                s);
    return;
  }
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, dims, rank);
  if (out == NULL)
    return;
  int64_t n = ocl_shape_elements(dims, rank);
  if (k->on_host) {
    int32_t v = *(const int32_t *)ocl_host_data(value);
    int32_t *o = ocl_host_data(out);
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    return;
  }
  const struct ocl_arg args[] = {OCL_TENSOR(value), OCL_TENSOR(out),
                                 OCL_LONG(n)};
  ocl_launch_flat(op, &k->k[0], (size_t)n, args, 3);
}

static void like_compute(struct gather_kernel *k, struct ocl_op *op)
{
  int64_t dims[OCL_MAX_RANK];
  uint64_t pattern[2] = {0, 0};

  TF_Tensor *x = ocl_op_input(op, 0);
  if (x == NULL)
    return;
  int rank = read_dims(x, dims);
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, dims, rank);
  if (y == NULL)
    return;
  size_t size = ocl_tf.DataTypeSize(k->dtype);
  if (k->op->kind == ONES_LIKE)
    size = one_pattern(k->dtype, pattern);
  if (k->on_host) {
    int32_t *o = ocl_host_data(y);
    int64_t n = ocl_shape_elements(dims, rank);
    for (int64_t i = 0; i < n; i++)
      o[i] = k->op->kind == ONES_LIKE;
    return;
  }
  ocl_op_fill(op, y, 0, pattern, size, ocl_tf.TensorByteSize(y));
}

/* ---- GatherV2 ------------------------------------------------------------- */

static bool gather_check_batch_dims(struct ocl_op *op, int64_t *batch_dims,
                                    int64_t axis, const int64_t *p_dims,
                                    int p_rank, const int64_t *i_dims,
                                    int i_rank)
{
  int64_t b = *batch_dims;
  if (b == 0)
    return true;
  if (b < -i_rank || b > i_rank)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Expected batch_dims in the range [%d, %d], but got "
                       "%lld",
                       -i_rank, i_rank, (long long)b);
  if (b < 0)
    b += i_rank;
  if (b >= p_rank)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "batch_dims (%lld) must be less than rank(params) "
                       "(%d).",
                       (long long)b, p_rank);
  if (axis < b)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "batch_dims (%lld) must be less than or equal to axis "
                       "(%lld).",
                       (long long)b, (long long)axis);
  for (int i = 0; i < b; i++)
    if (p_dims[i] != i_dims[i])
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "params.shape[%d]: %lld should be equal to "
                         "indices.shape[%d]: %lld",
                         i, (long long)p_dims[i], i, (long long)i_dims[i]);
  *batch_dims = b;
  return true;
}

static void gather_compute(struct gather_kernel *k, struct ocl_op *op)
{
  int64_t p_dims[OCL_MAX_RANK], i_dims[OCL_MAX_RANK];

  TF_Tensor *params = ocl_op_input(op, 0);
  TF_Tensor *indices = params ? ocl_op_input(op, 1) : NULL;
  TF_Tensor *axis_t = indices ? ocl_op_input(op, 2) : NULL;
  if (axis_t == NULL)
    return;
  int p_rank = read_dims(params, p_dims);
  int i_rank = read_dims(indices, i_dims);
  if (p_rank < 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "params must be at least 1 dimensional");
    return;
  }
  if (ocl_tf.NumDims(axis_t) != 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "axis must be scalar");
    return;
  }
  int64_t axis = ocl_host_int(axis_t, 0);
  /* Saturating: axis may be INT64_MIN or INT64_MAX. */
  int64_t min_dims = axis < 0 ? (axis == INT64_MIN ? INT64_MAX : -axis)
                              : (axis == INT64_MAX ? INT64_MAX : axis + 1);
  if (p_rank < min_dims) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Shape must be at least rank %lld but is rank %d",
                (long long)min_dims, p_rank);
    return;
  }
  if (axis < 0)
    axis += p_rank;
  int64_t batch_dims = k->batch_dims;
  if (!gather_check_batch_dims(op, &batch_dims, axis, p_dims, p_rank, i_dims,
                               i_rank))
    return;
  int64_t limit = p_dims[axis];
  TF_DataType itype = ocl_tf.TensorType(indices);
  if (itype == TF_INT32 && limit > INT32_MAX) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "params.shape[%lld] too large for int32 indexing: %lld > %d",
                (long long)axis, (long long)limit, INT32_MAX);
    return;
  }
  /* params[:axis] + indices[batch_dims:] + params[axis+1:] */
  int64_t o_dims[2 * OCL_MAX_RANK];
  int o_rank = 0;
  int64_t batch = 1, outer = 1, inner = 1;
  for (int d = 0; d < batch_dims; d++)
    batch *= o_dims[o_rank++] = p_dims[d];
  for (int d = (int)batch_dims; d < axis; d++)
    outer *= o_dims[o_rank++] = p_dims[d];
  for (int d = (int)batch_dims; d < i_rank; d++)
    o_dims[o_rank++] = i_dims[d];
  for (int d = (int)axis + 1; d < p_rank; d++)
    inner *= o_dims[o_rank++] = p_dims[d];
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, o_dims, o_rank);
  int64_t num_indices = ocl_tf.TensorElementCount(indices);
  if (out == NULL || num_indices == 0)
    return;
  int64_t nb = num_indices / batch; /* batch divides it: leading dims match */
  ocl_gather_launch(op, &k->gather, params, indices, out, batch, outer, limit,
                    inner, nb);
}

bool ocl_gather_launch(struct ocl_op *op, struct ocl_gather_kernels *g,
                       const TF_Tensor *params, const TF_Tensor *indices,
                       TF_Tensor *out, int64_t batch, int64_t outer,
                       int64_t limit, int64_t inner, int64_t nb)
{
  int64_t n = batch * outer * nb * inner;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (n == 0)
    return true;
  int64_t p_elements = ocl_tf.TensorElementCount(params);
  if (info->cpu_shape && inner >= 16) {
    /* Blocks of rows: a few work-items per core, at most ~64 KiB each. */
    int64_t rows = n / inner;
    int64_t per_item = rows / (16 * (int64_t)info->compute_units);
    int64_t cap = 16384 / inner;
    per_item = per_item > cap ? cap : per_item < 1 ? 1 : per_item;
    size_t items = (size_t)((rows + per_item - 1) / per_item);
    const struct ocl_arg args[] = {
        OCL_TENSOR(params), OCL_TENSOR(indices), OCL_TENSOR(out),
        OCL_LONG(rows),     OCL_LONG(limit),     OCL_LONG(inner),
        OCL_LONG(nb),       OCL_LONG(outer),     OCL_LONG(per_item)};
    return ocl_launch_rows(op, &g->k[KROWS], items, args, 9);
  }
  if (fits_int32(n) && fits_int32(p_elements)) {
    const struct ocl_arg args[] = {
        OCL_TENSOR(params), OCL_TENSOR(indices), OCL_TENSOR(out),
        OCL_INT(n),         OCL_INT(limit),      OCL_INT(inner),
        OCL_INT(nb),        OCL_INT(outer)};
    return ocl_launch_1d(op, &g->k[K32], (size_t)n, args, 8);
  }
  const struct ocl_arg args[] = {
      OCL_TENSOR(params), OCL_TENSOR(indices), OCL_TENSOR(out),
      OCL_LONG(n),        OCL_LONG(limit),     OCL_LONG(inner),
      OCL_LONG(nb),       OCL_LONG(outer)};
  return ocl_launch_1d(op, &g->k[K64], (size_t)n, args, 8);
}

/* ---- Select, SelectV2 ------------------------------------------------------ */

/* The collapsed broadcast as gather.cl's bcast3_t and bcast3_32_t read it. */
struct bcast3_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long strides[3][OCL_MAX_DIMS];
  cl_long rank;
};

struct bcast3_32_args {
  cl_int dims[OCL_MAX_DIMS];
  cl_int strides[3][OCL_MAX_DIMS];
  cl_int rank;
};

static bool same_shape(const int64_t *a, int a_rank, const int64_t *b,
                       int b_rank)
{
  return a_rank == b_rank &&
         memcmp(a, b, sizeof(int64_t) * (size_t)a_rank) == 0;
}

/* Select's rules (TensorFlow's SelectOp): a scalar condition picks a whole
 * tensor; a vector condition with a higher-rank `then` picks rows; otherwise
 * all three have one shape. The condition's shape as seen by the three-way
 * broadcast goes to c_dims. */
static bool select_v1_shapes(struct ocl_op *op, const int64_t *const dims[3],
                             const int ranks[3], int64_t *c_dims, int *c_rank)
{
  char s[3][160];
  for (int j = 0; j < 3; j++)
    ocl_shape_format(dims[j], ranks[j], s[j], sizeof(s[j]));
  bool cond_scalar = ranks[0] == 0;
  bool rows = ranks[0] == 1 && ranks[1] != 1;
  if (rows && ranks[1] < 1)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "'then' must be at least a vector, but saw shape: %s",
                       s[1]);
  if (rows && dims[1][0] != dims[0][0])
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Number of batches of 'then' must match size of "
                       "'cond', but saw: %lld vs. %lld",
                       (long long)dims[1][0], (long long)dims[0][0]);
  if (cond_scalar || rows) {
    if (!same_shape(dims[1], ranks[1], dims[2], ranks[2]))
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "'then' and 'else' must have the same size.  but "
                         "received: %s vs. %s",
                         s[1], s[2]);
  } else {
    for (int j = 1; j < 3; j++)
      if (!same_shape(dims[0], ranks[0], dims[j], ranks[j]))
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "Inputs to operation Select of type Select must "
                           "have the same size and shape.  Input 0: %s != "
                           "input %d: %s",
                           s[0], j, s[j]);
  }
  *c_rank = ranks[0];
  memcpy(c_dims, dims[0], sizeof(int64_t) * (size_t)ranks[0]);
  if (rows) { /* [n] -> [n, 1, ..., 1] */
    *c_rank = ranks[1];
    for (int d = 1; d < ranks[1]; d++)
      c_dims[d] = 1;
  }
  return true;
}

/* One launch over collapsed dims [first, b->rank) (at most OCL_MAX_DIMS),
 * at element offsets at[3] of cond/then/else and out_at of the output. */
static bool launch_select(struct ocl_op *op, struct gather_kernel *k,
                          const struct ocl_bcast3 *b, int first,
                          TF_Tensor *const in[3], const int64_t at[3],
                          TF_Tensor *out, int64_t out_at, int64_t n)
{
  size_t size = ocl_tf.DataTypeSize(k->dtype);
  struct ocl_buffer buf[4];
  for (int j = 0; j < 3; j++) {
    size_t esize = j == 0 ? 1 : size;
    size_t off = (size_t)at[j] * esize;
    if (!ocl_op_buffer(op, in[j], off, ocl_tf.TensorByteSize(in[j]) - off,
                       &buf[j]))
      return false;
  }
  if (!ocl_op_buffer(op, out, (size_t)out_at * size, (size_t)n * size,
                     &buf[3]))
    return false;
  int rank = b->rank - first;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (fits_int32(b->out_elements)) {
    struct bcast3_32_args a = {.rank = rank};
    for (int i = 0; i < rank; i++) {
      a.dims[i] = (cl_int)b->dims[first + i];
      for (int j = 0; j < 3; j++)
        a.strides[j][i] = (cl_int)b->strides[j][first + i];
    }
    int64_t inner = b->dims[b->rank - 1];
    if (info->cpu_shape && inner >= SELECT_ROWS_MIN_INNER && size <= 8) {
      int64_t dims[3] = {1, n / inner, inner};
      struct ocl_arg argv[] = {OCL_BUF(buf[0]),
                               OCL_BUF(buf[1]),
                               OCL_BUF(buf[2]),
                               OCL_BUF(buf[3]),
                               OCL_INT(dims[1]),
                               OCL_BYTES(&a, sizeof(a)),
                               {0}};
      return ocl_launch_spans(op, &k->k[SELECT_ROWS], dims, argv, 6);
    }
    const struct ocl_arg argv[] = {OCL_BUF(buf[0]), OCL_BUF(buf[1]),
                                   OCL_BUF(buf[2]), OCL_BUF(buf[3]),
                                   OCL_INT(n), OCL_BYTES(&a, sizeof(a))};
    return ocl_launch_1d(op, &k->k[K32 + 1], (size_t)n, argv, 6);
  }
  struct bcast3_args a = {.rank = rank};
  for (int i = 0; i < rank; i++) {
    a.dims[i] = b->dims[first + i];
    for (int j = 0; j < 3; j++)
      a.strides[j][i] = b->strides[j][first + i];
  }
  const struct ocl_arg argv[] = {OCL_BUF(buf[0]), OCL_BUF(buf[1]),
                                 OCL_BUF(buf[2]), OCL_BUF(buf[3]),
                                 OCL_LONG(n), OCL_BYTES(&a, sizeof(a))};
  return ocl_launch_1d(op, &k->k[K64 + 1], (size_t)n, argv, 6);
}

/* A broadcast of more collapsed dims than the kernel takes: one launch per
 * index of the leading dims. */
static void launch_select_split(struct ocl_op *op, struct gather_kernel *k,
                                const struct ocl_bcast3 *b,
                                TF_Tensor *const in[3], TF_Tensor *out)
{
  int outer = b->rank - OCL_MAX_DIMS;
  int64_t inner = 1, index[OCL_MAX_RANK] = {0};
  for (int d = outer; d < b->rank; d++)
    inner *= b->dims[d];
  for (int64_t out_at = 0; out_at < b->out_elements; out_at += inner) {
    int64_t at[3] = {0, 0, 0};
    for (int d = 0; d < outer; d++)
      for (int j = 0; j < 3; j++)
        at[j] += index[d] * b->strides[j][d];
    if (!launch_select(op, k, b, outer, in, at, out, out_at, inner))
      return;
    for (int d = outer - 1; d >= 0 && ++index[d] == b->dims[d]; d--)
      index[d] = 0;
  }
}

static void select_compute(struct gather_kernel *k, struct ocl_op *op)
{
  int64_t c_dims[OCL_MAX_RANK];
  int ranks[3], c_rank = 0;
  struct ocl_bcast3 b;
  TF_Tensor *in[3];

  for (int j = 0; j < 3; j++)
    if ((in[j] = ocl_op_input(op, j)) == NULL)
      return;
  int64_t dims_store[3][OCL_MAX_RANK];
  for (int j = 0; j < 3; j++)
    ranks[j] = read_dims(in[j], dims_store[j]);
  const int64_t *const dims[3] = {dims_store[0], dims_store[1], dims_store[2]};
  if (k->op->kind == SELECT) {
    if (!select_v1_shapes(op, dims, ranks, c_dims, &c_rank))
      return;
    const int64_t *const v1_dims[3] = {c_dims, dims[1], dims[2]};
    const int v1_ranks[3] = {c_rank, ranks[1], ranks[2]};
    if (!ocl_bcast3_init(&b, v1_dims, v1_ranks, op->status))
      return;
  } else if (!ocl_bcast3_init(&b, dims, ranks, op->status)) {
    if (ocl_tf.GetCode(op->status) == TF_INVALID_ARGUMENT) {
      char s[3][160];
      for (int j = 0; j < 3; j++)
        ocl_shape_format(dims[j], ranks[j], s[j], sizeof(s[j]));
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "condition %s, then %s, and else %s must be broadcastable",
                  s[0], s[1], s[2]);
    }
    return;
  }
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, b.out_dims, b.out_rank);
  if (out == NULL || b.out_elements == 0)
    return;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  int full = 0;
  bool flat = true;
  for (int j = 0; j < 3; j++) {
    int64_t count = ocl_tf.TensorElementCount(in[j]);
    full |= (count == b.out_elements) << j;
    flat = flat && (count == b.out_elements || count == 1);
  }
  if (info->cpu_shape && flat && ocl_tf.DataTypeSize(k->dtype) <= 8) {
    const struct ocl_arg argv[] = {OCL_TENSOR(in[0]),        OCL_TENSOR(in[1]),
                                   OCL_TENSOR(in[2]),        OCL_TENSOR(out),
                                   OCL_LONG(b.out_elements), OCL_INT(full)};
    ocl_launch_1d(op, &k->k[SELECT_VEC16], (size_t)((b.out_elements + 15) / 16),
                  argv, 6);
    return;
  }
  if (b.same_shape) {
    const struct ocl_arg argv[] = {OCL_TENSOR(in[0]), OCL_TENSOR(in[1]),
                                   OCL_TENSOR(in[2]), OCL_TENSOR(out),
                                   OCL_LONG(b.out_elements)};
    ocl_launch_1d(op, &k->k[0], (size_t)b.out_elements, argv, 5);
  } else if (b.rank > OCL_MAX_DIMS) {
    launch_select_split(op, k, &b, in, out);
  } else {
    static const int64_t zero[3] = {0, 0, 0};
    launch_select(op, k, &b, 0, in, zero, out, 0, b.out_elements);
  }
}

/* ---- OneHot ---------------------------------------------------------------- */

static void one_hot_compute(struct gather_kernel *k, struct ocl_op *op)
{
  int64_t i_dims[OCL_MAX_RANK];
  char s[160];
  static const char *const names[4] = {"indices", "depth", "on_value",
                                       "off_value"};
  TF_Tensor *in[4];

  for (int j = 0; j < 4; j++)
    if ((in[j] = ocl_op_input(op, j)) == NULL)
      return;
  int i_rank = read_dims(in[0], i_dims);
  if (!(k->axis == -1 || (k->axis >= 0 && k->axis < i_rank + 1))) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Expected axis to be -1 or between [0, %d).  But received: "
                "%lld",
                i_rank + 1, (long long)k->axis);
    return;
  }
  for (int j = 1; j < 4; j++) {
    if (ocl_tf.NumDims(in[j]) != 0) {
      shape_string(in[j], s, sizeof(s));
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s must be a scalar, but got: %s",
                  names[j], s);
      return;
    }
  }
  int32_t depth = *(const int32_t *)ocl_host_data(in[1]);
  if (depth < 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "depth must be non-negative, got: %d",
                depth);
    return;
  }
  int axis = k->axis == -1 ? i_rank : (int)k->axis;
  int64_t o_dims[OCL_MAX_RANK + 1];
  int64_t suffix = 1;
  for (int d = 0, j = 0; d <= i_rank; d++) {
    if (d == axis) {
      o_dims[d] = depth;
      continue;
    }
    o_dims[d] = i_dims[j];
    if (d > axis)
      suffix *= i_dims[j];
    j++;
  }
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, o_dims, i_rank + 1);
  if (out == NULL)
    return;
  int64_t n = ocl_shape_elements(o_dims, i_rank + 1);
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  if (info->cpu_shape && suffix == 1 && fits_int32(n) && n > 0) {
    int64_t dims[3] = {1, n / depth, depth};
    struct ocl_arg args[] = {OCL_TENSOR(in[0]),
                             OCL_TENSOR(in[2]),
                             OCL_TENSOR(in[3]),
                             OCL_TENSOR(out),
                             OCL_INT(dims[1]),
                             OCL_INT(depth),
                             {0}};
    ocl_launch_spans(op, &k->k[KROWS], dims, args, 6);
    return;
  }
  if (fits_int32(n)) {
    const struct ocl_arg args[] = {
        OCL_TENSOR(in[0]), OCL_TENSOR(in[2]), OCL_TENSOR(in[3]),
        OCL_TENSOR(out),   OCL_INT(n),        OCL_INT(depth),
        OCL_INT(suffix)};
    ocl_launch_1d(op, &k->k[K32], (size_t)n, args, 7);
  } else {
    const struct ocl_arg args[] = {
        OCL_TENSOR(in[0]), OCL_TENSOR(in[2]), OCL_TENSOR(in[3]),
        OCL_TENSOR(out),   OCL_LONG(n),       OCL_LONG(depth),
        OCL_LONG(suffix)};
    ocl_launch_1d(op, &k->k[K64], (size_t)n, args, 7);
  }
}

/* ---- BroadcastTo ------------------------------------------------------------ */

/* The collapsed broadcast as gather.cl's bto_t and bto32_t read it. */
struct bto_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long in_strides[OCL_MAX_DIMS];
  cl_long rank;
};

struct bto32_args {
  cl_int dims[OCL_MAX_DIMS];
  cl_int in_strides[OCL_MAX_DIMS];
  cl_int rank;
};

/* The shortest innermost dim broadcast_to_rows takes: a SIMD vector of
 * floats; shorter rows stay with the flat kernel. */
#define BROADCAST_ROWS_MIN_INNER 16

/* One launch over collapsed dims [first, b->rank), at element offsets. */
static bool launch_broadcast_to(struct ocl_op *op, struct gather_kernel *k,
                                const struct ocl_broadcast_to *b, int first,
                                const TF_Tensor *in, int64_t in_at,
                                TF_Tensor *out, int64_t out_at, int64_t n)
{
  size_t size = ocl_tf.DataTypeSize(k->dtype);
  struct ocl_buffer ib, ob;
  size_t off = (size_t)in_at * size;
  if (!ocl_op_buffer(op, in, off, ocl_tf.TensorByteSize(in) - off, &ib) ||
      !ocl_op_buffer(op, out, (size_t)out_at * size, (size_t)n * size, &ob))
    return false;
  int rank = b->rank - first;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (fits_int32(b->out_elements)) {
    struct bto32_args a = {.rank = rank};
    for (int i = 0; i < rank; i++) {
      a.dims[i] = (cl_int)b->dims[first + i];
      a.in_strides[i] = (cl_int)b->in_strides[first + i];
    }
    int64_t inner = b->dims[b->rank - 1];
    if (info->cpu_shape && inner >= BROADCAST_ROWS_MIN_INNER) {
      int64_t dims[3] = {1, n / inner, inner};
      struct ocl_arg argv[] = {OCL_BUF(ib),
                               OCL_BUF(ob),
                               OCL_INT(dims[1]),
                               OCL_BYTES(&a, sizeof(a)),
                               {0}};
      return ocl_launch_spans(op, &k->k[KROWS], dims, argv, 4);
    }
    const struct ocl_arg argv[] = {OCL_BUF(ib), OCL_BUF(ob), OCL_INT(n),
                                   OCL_BYTES(&a, sizeof(a))};
    return ocl_launch_1d(op, &k->k[K32], (size_t)n, argv, 4);
  }
  struct bto_args a = {.rank = rank};
  for (int i = 0; i < rank; i++) {
    a.dims[i] = b->dims[first + i];
    a.in_strides[i] = b->in_strides[first + i];
  }
  const struct ocl_arg argv[] = {OCL_BUF(ib), OCL_BUF(ob), OCL_LONG(n),
                                 OCL_BYTES(&a, sizeof(a))};
  return ocl_launch_1d(op, &k->k[K64], (size_t)n, argv, 4);
}

static void broadcast_to_compute(struct gather_kernel *k, struct ocl_op *op)
{
  int64_t in_dims[OCL_MAX_RANK], o_dims[OCL_MAX_RANK];
  struct ocl_broadcast_to b;

  TF_Tensor *in = ocl_op_input(op, 0);
  TF_Tensor *shape = in ? ocl_op_input(op, 1) : NULL;
  if (shape == NULL)
    return;
  int in_rank = read_dims(in, in_dims);
  int o_rank = shape_from_tensor(op, shape, "shape", o_dims);
  if (o_rank < 0 || !ocl_broadcast_to_init(&b, in_dims, in_rank, o_dims,
                                           o_rank, op->status))
    return;
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, o_dims, o_rank);
  if (out == NULL || b.out_elements == 0)
    return;
  if (k->on_host) {
    const int32_t *x = ocl_host_data(in);
    int32_t *y = ocl_host_data(out);
    for (int64_t i = 0; i < b.out_elements; i++) {
      int64_t rem = i, src = 0;
      for (int d = b.rank - 1; d >= 0; d--) {
        src += rem % b.dims[d] * b.in_strides[d];
        rem /= b.dims[d];
      }
      y[i] = x[src];
    }
    return;
  }
  if (b.rank <= OCL_MAX_DIMS) {
    launch_broadcast_to(op, k, &b, 0, in, 0, out, 0, b.out_elements);
    return;
  }
  /* More collapsed dims than the kernel takes: a launch per index of the
   * leading dims. */
  int outer = b.rank - OCL_MAX_DIMS;
  int64_t inner = 1, index[OCL_MAX_RANK] = {0};
  for (int d = outer; d < b.rank; d++)
    inner *= b.dims[d];
  for (int64_t out_at = 0; out_at < b.out_elements; out_at += inner) {
    int64_t in_at = 0;
    for (int d = 0; d < outer; d++)
      in_at += index[d] * b.in_strides[d];
    if (!launch_broadcast_to(op, k, &b, outer, in, in_at, out, out_at, inner))
      return;
    for (int d = outer - 1; d >= 0 && ++index[d] == b.dims[d]; d--)
      index[d] = 0;
  }
}

/* ---- Range ------------------------------------------------------------------- */

/* A float Range's host scalar (float, or an integer type widened). */
static double range_value(const TF_Tensor *t)
{
  const void *data = ocl_host_data(t);
  switch (ocl_tf.TensorType(t)) {
  case TF_FLOAT: return ((const float *)data)[0];
  case TF_INT64: return (double)((const int64_t *)data)[0];
  default: return ((const int32_t *)data)[0];
  }
}

static void range_compute(struct gather_kernel *k, struct ocl_op *op)
{
  static const char *const names[3] = {"start", "limit", "delta"};
  char s[160];
  TF_Tensor *in[3];

  for (int j = 0; j < 3; j++)
    if ((in[j] = ocl_op_input(op, j)) == NULL)
      return;
  for (int j = 0; j < 3; j++) {
    int rank = ocl_tf.NumDims(in[j]);
    if (!(rank == 0 || (rank == 1 && ocl_tf.Dim(in[j], 0) == 1))) {
      shape_string(in[j], s, sizeof(s));
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s must be a scalar, not shape %s",
                  names[j], s);
      return;
    }
  }
  /* Integers are checked and sized in int64 (the values themselves, not a
   * double rounding of them); floats in float, as TensorFlow computes. */
  int64_t size;
  bool is_float = k->dtype == TF_FLOAT;
  int64_t istart = 0, ilimit = 0, idelta = 0;
  float fstart = 0, flimit = 0, fdelta = 0;
  if (is_float) {
    fstart = (float)range_value(in[0]);
    flimit = (float)range_value(in[1]);
    fdelta = (float)range_value(in[2]);
  } else {
    istart = ocl_host_int(in[0], 0);
    ilimit = ocl_host_int(in[1], 0);
    idelta = ocl_host_int(in[2], 0);
  }
  bool zero = is_float ? fdelta == 0 : idelta == 0;
  bool positive = is_float ? fdelta > 0 : idelta > 0;
  bool ordered = positive ? (is_float ? fstart <= flimit : istart <= ilimit)
                          : (is_float ? fstart >= flimit : istart >= ilimit);
  /* The element count, in unsigned / double so extreme arguments cannot
   * overflow; a count past int64 is an error, as in TensorFlow. */
  bool too_many = false;
  if (!zero && ordered) {
    if (is_float) {
      double n =
          ceil(fabs(((double)flimit - (double)fstart) / (double)fdelta));
      too_many = !(n < 9.2e18);
      size = too_many ? 0 : (int64_t)n;
    } else {
      uint64_t span = ilimit > istart ? (uint64_t)ilimit - (uint64_t)istart
                                      : (uint64_t)istart - (uint64_t)ilimit;
      uint64_t step = idelta < 0 ? 0 - (uint64_t)idelta : (uint64_t)idelta;
      uint64_t n = span / step + (span % step != 0);
      too_many = n > (uint64_t)INT64_MAX;
      size = too_many ? 0 : (int64_t)n;
    }
  }
  if (zero || !ordered || too_many) {
    char a[64], b[64], c[64];
    if (is_float) {
      snprintf(a, sizeof(a), "%g", (double)fstart);
      snprintf(b, sizeof(b), "%g", (double)flimit);
      snprintf(c, sizeof(c), "%g", (double)fdelta);
    } else {
      snprintf(a, sizeof(a), "%lld", (long long)istart);
      snprintf(b, sizeof(b), "%lld", (long long)ilimit);
      snprintf(c, sizeof(c), "%lld", (long long)idelta);
    }
    if (zero)
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "Requires delta != 0: %s", c);
    else if (!ordered)
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Requires start %s limit when delta %s 0: %s/%s",
                  positive ? "<=" : ">=", positive ? ">" : "<", a, b);
    else
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Requires ((limit - start) / delta) <= %lld: %s/%s/%s",
                  (long long)INT64_MAX, a, b, c);
    return;
  }
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, &size, 1);
  if (out == NULL || size == 0)
    return;
  if (k->on_host) {
    int32_t *o = ocl_host_data(out);
    for (int64_t i = 0; i < size; i++)
      o[i] = (int32_t)(istart + i * idelta);
    return;
  }
  if (is_float) {
    const struct ocl_arg args[] = {OCL_TENSOR(out), OCL_LONG(size),
                                   OCL_FLOAT(fstart), OCL_FLOAT(fdelta)};
    ocl_launch_1d(op, &k->k[0], (size_t)size, args, 4);
  } else {
    const struct ocl_arg args[] = {OCL_TENSOR(out), OCL_LONG(size),
                                   OCL_LONG(istart), OCL_LONG(idelta)};
    ocl_launch_1d(op, &k->k[0], (size_t)size, args, 4);
  }
}

/* ---- Kernel callbacks ---------------------------------------------------- */

bool ocl_gather_kernels_init(struct ocl_gather_kernels *g, TF_DataType dtype,
                             TF_DataType itype)
{
  const struct ocl_program *p = ocl_gather_program(dtype);
  const char *suffix = itype == TF_INT16   ? "i16"
                       : itype == TF_INT32 ? "i32"
                       : itype == TF_INT64 ? "i64"
                                           : NULL;
  return p != NULL && suffix != NULL &&
         ocl_kernel_initf(&g->k[K32], p, "gather32_%s", suffix) &&
         ocl_kernel_initf(&g->k[K64], p, "gather_%s", suffix) &&
         ocl_kernel_initf(&g->k[KROWS], p, "gather_rows_%s", suffix);
}

/* The suffix of an index dtype's kernels ("i32", ...); NULL for a dtype the
 * op does not take. */
static const char *index_suffix(TF_DataType t)
{
  switch (t) {
  case TF_UINT8: return "u8";
  case TF_INT8: return "i8";
  case TF_INT16: return "i16";
  case TF_INT32: return "i32";
  case TF_INT64: return "i64";
  default: return NULL;
  }
}

/* Names the kernels the instance launches (create time). */
static bool name_kernels(struct gather_kernel *k, TF_DataType itype,
                         TF_Status *status)
{
  const struct ocl_program *p = ocl_gather_program(k->dtype);
  const char *suffix = index_suffix(itype);
  bool ok = true;
  if (k->on_host)
    return true;
  if (p == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "%s: no OPENCL kernel for elements of %zu bytes",
                   k->op->op, ocl_tf.DataTypeSize(k->dtype));
    return false;
  }
  switch (k->op->kind) {
  case FILL:
    ok = ocl_kernel_init(&k->k[0], p, "fill");
    break;
  case GATHER_V2:
    ok = ocl_gather_kernels_init(&k->gather, k->dtype, itype);
    break;
  case SELECT:
  case SELECT_V2:
    ok = ocl_kernel_init(&k->k[0], p, "select_flat") &&
         ocl_kernel_init(&k->k[K32 + 1], p, "select_bcast32") &&
         ocl_kernel_init(&k->k[K64 + 1], p, "select_bcast") &&
         (ocl_tf.DataTypeSize(k->dtype) > 8 ||
          (ocl_kernel_init(&k->k[SELECT_VEC16], p, "select_vec16") &&
           ocl_kernel_init(&k->k[SELECT_ROWS], p, "select_rows")));
    break;
  case ONE_HOT:
    ok = suffix != NULL &&
         ocl_kernel_initf(&k->k[K32], p, "one_hot32_%s", suffix) &&
         ocl_kernel_initf(&k->k[K64], p, "one_hot_%s", suffix) &&
         ocl_kernel_initf(&k->k[KROWS], p, "one_hot_rows_%s", suffix);
    break;
  case BROADCAST_TO:
    ok = ocl_kernel_init(&k->k[K32], p, "broadcast_to32") &&
         ocl_kernel_init(&k->k[K64], p, "broadcast_to") &&
         ocl_kernel_init(&k->k[KROWS], p, "broadcast_to_rows");
    break;
  case RANGE:
    ok = ocl_kernel_init(&k->k[0], p,
                         k->dtype == TF_FLOAT ? "range_float" : "range_long");
    break;
  case ZEROS_LIKE:
  case ONES_LIKE:
    break; /* buffer fills */
  }
  if (!ok)
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: no OPENCL kernel for index type %d", k->op->op,
                   (int)itype);
  return ok;
}

static void *gather_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct gather_op *op = &gather_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct gather_kernel *k = calloc(1, sizeof(*k));
  TF_DataType itype = TF_INT32;
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, op->type_attr, &k->dtype,
                                          status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->on_host = host_int32(op, k->dtype);
  if (op->kind == GATHER_V2) {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "Tindices", &itype, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "batch_dims", &k->batch_dims,
                                             status);
    /* Absent from older graphs: TensorFlow's default is 0. */
    ocl_set_ok(status);
  }
  if (op->kind == ONE_HOT) {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "TI", &itype, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
    k->axis = -1;
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "axis", &k->axis, status);
    ocl_set_ok(status);
  }
  if (!name_kernels(k, itype, status))
    goto fail;
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void gather_compute_any(void *kernel, TF_OpKernelContext *ctx)
{
  struct gather_kernel *k = kernel;
  struct ocl_op op;
  ocl_op_begin(&op, ctx);
  switch (k->op->kind) {
  case FILL: fill_compute(k, &op); break;
  case ZEROS_LIKE:
  case ONES_LIKE: like_compute(k, &op); break;
  case GATHER_V2: gather_compute(k, &op); break;
  case SELECT:
  case SELECT_V2: select_compute(k, &op); break;
  case ONE_HOT: one_hot_compute(k, &op); break;
  case BROADCAST_TO: broadcast_to_compute(k, &op); break;
  case RANGE: range_compute(k, &op); break;
  }
  ocl_op_end(&op);
}

static void gather_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_OPS <= OCL_MAX_FAMILY_OPS, "one create function per op");
OCL_FAMILY_CREATES(gather, gather_create);

/* ---- Registration ------------------------------------------------------ */

void ocl_register_gather_kernels(void)
{
  for (size_t i = 0; i < NUM_OPS; i++) {
    const struct gather_op *op = &gather_ops[i];
    for (int t = 0; t < 64; t++) {
      TF_DataType dtype = (TF_DataType)t;
      if (!(op->types & TB(dtype)))
        continue;
      /* Index-type attributes (Tindices, TI, index_type, Tidx of
       * BroadcastTo, Taxis) stay unconstrained: the kernels read each
       * allowed index type. */
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = gather_creates[i],
          .compute = gather_compute_any,
          .destroy = gather_delete,
          .type_attrs = {op->type_attr},
          .types = {dtype},
          .host_args = host_int32(op, dtype) ? op->int32_host_args
                                             : op->host_args,
      });
    }
  }
}
