/* Fill, gather and select: Fill, ZerosLike, OnesLike, GatherV2, Select,
 * SelectV2, OneHot, BroadcastTo and Range.
 *
 * These ops move elements without looking at them, so gather.cl is built
 * once per element size (1, 2, 4, 8 bytes) rather than per dtype. Memory
 * placement follows TensorFlow's GPU registrations: shape-like arguments
 * (dims, axis, depth, shape, Range's start/limit/delta) are HostMemory;
 * int32 Fill, ZerosLike/OnesLike's output, BroadcastTo and Range are
 * computed on the host with host outputs (TensorFlow's int32 special
 * kernels), while int32 GatherV2, Select, SelectV2 and OneHot stay on the
 * device as TensorFlow's GPU kernels do.
 *
 * GatherV2 writes zeros for out-of-range indices, like TensorFlow's GPU
 * kernel: the indices live on the device and checking them on the host
 * would block. batch_dims != 0 is UNIMPLEMENTED. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "launch.h"

extern const char ocl_cl_source_gather[];

/* The kernels only move elements: one program per element size. */
static const struct ocl_family families[4] =
    OCL_SIZED_FAMILIES("gather", ocl_cl_source_gather);

enum op_kind {
  FILL, ZEROS_LIKE, ONES_LIKE, GATHER_V2, SELECT, SELECT_V2, ONE_HOT,
  BROADCAST_TO, RANGE
};

struct gather_op {
  const char *op;
  enum op_kind kind;
  const char *type_attr; /* the data type's attribute */
  /* HostMemory args of the device kernels, then of the int32 host kernels
   * (NULL-terminated). */
  const char *host_args[5];
  const char *int32_host_args[5];
};

static const struct gather_op gather_ops[] = {
    {"Fill", FILL, "T", {"dims"}, {"dims", "value", "output"}},
    {"ZerosLike", ZEROS_LIKE, "T", {NULL}, {"y"}},
    {"OnesLike", ONES_LIKE, "T", {NULL}, {"y"}},
    {"GatherV2", GATHER_V2, "Tparams", {"axis"}, {"axis"}},
    {"Select", SELECT, "T", {NULL}, {NULL}},
    {"SelectV2", SELECT_V2, "T", {NULL}, {NULL}},
    {"OneHot", ONE_HOT, "T", {"depth"}, {"depth"}},
    {"BroadcastTo", BROADCAST_TO, "T", {"shape"}, {"input", "shape", "output"}},
    {"Range", RANGE, "Tidx", {"start", "limit", "delta"},
     {"start", "limit", "delta", "output"}},
};

#define NUM_OPS (sizeof(gather_ops) / sizeof(gather_ops[0]))

struct gather_kernel {
  const struct gather_op *op;
  TF_DataType dtype;
  bool on_host; /* int32 computed on the host (int32_host_args) */
  int64_t batch_dims; /* GatherV2 */
  int64_t axis;       /* OneHot */
};

static bool host_int32(const struct gather_op *op, TF_DataType dtype)
{
  return dtype == TF_INT32 &&
         (op->kind == FILL || op->kind == ZEROS_LIKE || op->kind == ONES_LIKE ||
          op->kind == BROADCAST_TO || op->kind == RANGE);
}

/* ---- Helpers --------------------------------------------------------------- */

static bool failed(TF_Status *status) { return ocl_tf.GetCode(status) != TF_OK; }

static void shape_string(const TF_Tensor *t, char *buf, int len)
{
  int64_t dims[OCL_MAX_DIMS];
  int rank = ocl_tf.NumDims(t);
  for (int i = 0; i < rank && i < OCL_MAX_DIMS; i++)
    dims[i] = ocl_tf.Dim(t, i);
  ocl_shape_format(dims, rank < OCL_MAX_DIMS ? rank : OCL_MAX_DIMS, buf, len);
}

/* A shape from a host int32/int64 vector (Fill's dims, BroadcastTo's
 * shape), with TensorShapeUtils::MakeShape's checks. */
static int shape_from_tensor(const TF_Tensor *t, const char *what,
                             int64_t *dims, TF_Status *status)
{
  int rank = ocl_tf.NumDims(t);
  int64_t n = ocl_tf.TensorElementCount(t);
  /* IsLegacyVector: a vector, or a scalar standing for one. */
  if (rank > 1) {
    char s[160];
    shape_string(t, s, sizeof(s));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s must be a vector, got shape %s", what, s);
    return -1;
  }
  if (n > OCL_MAX_DIMS) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "tensors of rank %lld are not supported on the OPENCL "
                   "device (at most %d)",
                   (long long)n, OCL_MAX_DIMS);
    return -1;
  }
  int64_t elements = 1;
  for (int64_t i = 0; i < n; i++) {
    dims[i] = ocl_host_int(t, i);
    if (dims[i] < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Dimension %lld must be >= 0", (long long)dims[i]);
      return -1;
    }
    /* As TensorShape: the element count must fit in int64. */
    if (dims[i] != 0 && elements > INT64_MAX / dims[i]) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Encountered overflow when multiplying shape dimensions "
                     "of %s", what);
      return -1;
    }
    elements *= dims[i];
  }
  return (int)n;
}

/* Every element of `t` set to the `size`-byte pattern. */
static bool fill_pattern(const struct ocl_launch *launch, const TF_Tensor *t,
                         const void *pattern, size_t size, TF_Status *status)
{
  size_t bytes = ocl_tf.TensorByteSize(t);
  cl_mem buffer;
  size_t offset;
  if (bytes == 0)
    return true;
  if (!ocl_resolve(launch->device, ocl_tf.TensorData(t), bytes, &buffer,
                   &offset, status))
    return false;
  cl_int err = clEnqueueFillBuffer(launch->queue, buffer, pattern, size,
                                   offset, bytes, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    ocl_set_cl_error(status, err, "clEnqueueFillBuffer");
    return false;
  }
  return true;
}

/* The bit pattern of 1 in `dtype`. */
static size_t one_pattern(TF_DataType dtype, void *pattern)
{
  switch (dtype) {
  case TF_FLOAT: *(float *)pattern = 1.0f; return 4;
  case TF_HALF: *(uint16_t *)pattern = 0x3c00; return 2;
  case TF_INT32: *(int32_t *)pattern = 1; return 4;
  case TF_INT64: *(int64_t *)pattern = 1; return 8;
  default: *(uint8_t *)pattern = 1; return 1;
  }
}

/* ---- Fill, ZerosLike, OnesLike ------------------------------------------- */

static void fill_compute(const struct gather_kernel *k, TF_OpKernelContext *ctx,
                         TF_Status *status)
{
  TF_Tensor *in[2] = {NULL, NULL}, *out = NULL;
  int64_t dims[OCL_MAX_DIMS];
  char s[160];

  if (!ocl_get_inputs(ctx, in, 2, status))
    return;
  int rank = shape_from_tensor(in[0], "dims", dims, status);
  if (rank < 0)
    goto out;
  /* IsLegacyScalar: a scalar, or a one-element vector. */
  if (!(ocl_tf.NumDims(in[1]) == 0 ||
        (ocl_tf.NumDims(in[1]) == 1 && ocl_tf.Dim(in[1], 0) == 1))) {
    shape_string(in[1], s, sizeof(s));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "value must be a scalar, got shape %s", s);
    goto out;
  }
  out = ocl_tf.AllocateOutput(ctx, 0, k->dtype, dims, rank, 0, status);
  if (failed(status))
    goto out;
  int64_t n = ocl_shape_elements(dims, rank);
  if (k->on_host) {
    int32_t v = *(const int32_t *)ocl_host_data(in[1]);
    int32_t *o = ocl_host_data(out);
    for (int64_t i = 0; i < n; i++)
      o[i] = v;
    goto out;
  }
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    goto out;
  const struct ocl_arg args[] = {OCL_TENSOR(in[1]), OCL_TENSOR(out),
                                 OCL_LONG(n)};
  ocl_enqueue_1d(&launch, ocl_sized_family(families, k->dtype), "fill", (size_t)n, args, 3,
                 status);
out:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(in, 2);
}

static void like_compute(const struct gather_kernel *k, TF_OpKernelContext *ctx,
                         TF_Status *status)
{
  TF_Tensor *x = NULL, *y = NULL;
  int64_t dims[OCL_MAX_DIMS];
  uint64_t pattern = 0;

  if (!ocl_get_inputs(ctx, &x, 1, status))
    return;
  int rank = ocl_tensor_dims(x, dims, status);
  if (rank < 0)
    goto out;
  y = ocl_tf.AllocateOutput(ctx, 0, k->dtype, dims, rank, 0, status);
  if (failed(status))
    goto out;
  size_t size = ocl_tf.DataTypeSize(k->dtype);
  if (k->op->kind == ONES_LIKE)
    size = one_pattern(k->dtype, &pattern);
  if (k->on_host) {
    int32_t *o = ocl_host_data(y);
    int64_t n = ocl_shape_elements(dims, rank);
    for (int64_t i = 0; i < n; i++)
      o[i] = k->op->kind == ONES_LIKE;
    goto out;
  }
  struct ocl_launch launch;
  if (ocl_launch_init(&launch, ctx, status))
    fill_pattern(&launch, y, &pattern, size, status);
out:
  if (y != NULL)
    ocl_tf.DeleteTensor(y);
  ocl_delete_tensors(&x, 1);
}

/* ---- GatherV2 ------------------------------------------------------------- */

static void gather_compute(const struct gather_kernel *k,
                           TF_OpKernelContext *ctx, TF_Status *status)
{
  TF_Tensor *in[3] = {NULL, NULL, NULL}, *out = NULL;
  int64_t p_dims[OCL_MAX_DIMS], i_dims[OCL_MAX_DIMS];

  if (!ocl_get_inputs(ctx, in, 3, status))
    return;
  int p_rank = ocl_tensor_dims(in[0], p_dims, status);
  int i_rank = p_rank < 0 ? -1 : ocl_tensor_dims(in[1], i_dims, status);
  if (i_rank < 0)
    goto out;
  if (k->batch_dims != 0) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "GatherV2 with batch_dims = %lld is not supported on the "
                   "OPENCL device (only batch_dims = 0)",
                   (long long)k->batch_dims);
    goto out;
  }
  if (p_rank < 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "params must be at least 1 dimensional");
    goto out;
  }
  if (ocl_tf.NumDims(in[2]) != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "axis must be scalar");
    goto out;
  }
  int64_t axis = ocl_host_int(in[2], 0);
  /* Saturating: axis may be INT64_MIN or INT64_MAX. */
  int64_t min_dims = axis < 0 ? (axis == INT64_MIN ? INT64_MAX : -axis)
                              : (axis == INT64_MAX ? INT64_MAX : axis + 1);
  if (p_rank < min_dims) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Shape must be at least rank %lld but is rank %d",
                   (long long)min_dims, p_rank);
    goto out;
  }
  if (axis < 0)
    axis += p_rank;
  /* params[:axis] + indices.shape + params[axis+1:] */
  int64_t o_dims[2 * OCL_MAX_DIMS];
  int o_rank = 0;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) {
    o_dims[o_rank++] = p_dims[d];
    outer *= p_dims[d];
  }
  for (int d = 0; d < i_rank; d++)
    o_dims[o_rank++] = i_dims[d];
  for (int d = (int)axis + 1; d < p_rank; d++) {
    o_dims[o_rank++] = p_dims[d];
    inner *= p_dims[d];
  }
  out = ocl_tf.AllocateOutput(ctx, 0, k->dtype, o_dims, o_rank, 0, status);
  if (failed(status))
    goto out;
  int64_t num_indices = ocl_shape_elements(i_dims, i_rank);
  int64_t n = outer * num_indices * inner;
  if (n == 0)
    goto out;
  TF_DataType itype = ocl_tf.TensorType(in[1]);
  const char *name = itype == TF_INT64   ? "gather_i64"
                     : itype == TF_INT16 ? "gather_i16"
                                         : "gather_i32";
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    goto out;
  const struct ocl_arg args[] = {
      OCL_TENSOR(in[0]), OCL_TENSOR(in[1]),      OCL_TENSOR(out),
      OCL_LONG(n),       OCL_LONG(p_dims[axis]), OCL_LONG(inner),
      OCL_LONG(num_indices),
  };
  ocl_enqueue_1d(&launch, ocl_sized_family(families, k->dtype), name, (size_t)n, args, 7,
                 status);
out:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(in, 3);
}

/* ---- Select, SelectV2 ------------------------------------------------------ */

/* The collapsed broadcast as gather.cl's bcast3_t reads it. */
struct bcast3_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long strides[3][OCL_MAX_DIMS];
  cl_long rank;
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
static bool select_v1_shapes(const int64_t *dims[3], const int ranks[3],
                             int64_t *c_dims, int *c_rank, TF_Status *status)
{
  char s[3][160];
  for (int j = 0; j < 3; j++)
    ocl_shape_format(dims[j], ranks[j], s[j], sizeof(s[j]));
  bool cond_scalar = ranks[0] == 0;
  bool rows = ranks[0] == 1 && ranks[1] != 1;
  if (rows && ranks[1] < 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "'then' must be at least a vector, but saw shape: %s", s[1]);
    return false;
  }
  if (rows && dims[1][0] != dims[0][0]) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Number of batches of 'then' must match size of 'cond', "
                   "but saw: %lld vs. %lld",
                   (long long)dims[1][0], (long long)dims[0][0]);
    return false;
  }
  if (cond_scalar || rows) {
    if (!same_shape(dims[1], ranks[1], dims[2], ranks[2])) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "'then' and 'else' must have the same size.  but "
                     "received: %s vs. %s",
                     s[1], s[2]);
      return false;
    }
  } else {
    for (int j = 1; j < 3; j++) {
      if (!same_shape(dims[0], ranks[0], dims[j], ranks[j])) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Inputs to operation Select of type Select must have "
                       "the same size and shape.  Input 0: %s != input %d: %s",
                       s[0], j, s[j]);
        return false;
      }
    }
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

static void select_compute(const struct gather_kernel *k,
                           TF_OpKernelContext *ctx, TF_Status *status)
{
  TF_Tensor *in[3] = {NULL, NULL, NULL}, *out = NULL;
  int64_t d[3][OCL_MAX_DIMS], c_dims[OCL_MAX_DIMS];
  int ranks[3], c_rank;
  struct ocl_bcast3 b;

  if (!ocl_get_inputs(ctx, in, 3, status))
    return;
  for (int j = 0; j < 3; j++)
    if ((ranks[j] = ocl_tensor_dims(in[j], d[j], status)) < 0)
      goto out;
  const int64_t *dims[3] = {d[0], d[1], d[2]};
  if (k->op->kind == SELECT) {
    if (!select_v1_shapes(dims, ranks, c_dims, &c_rank, status))
      goto out;
    const int64_t *v1_dims[3] = {c_dims, d[1], d[2]};
    const int v1_ranks[3] = {c_rank, ranks[1], ranks[2]};
    if (!ocl_bcast3_init(&b, v1_dims, v1_ranks, status))
      goto out;
  } else if (!ocl_bcast3_init(&b, dims, ranks, status)) {
    if (ocl_tf.GetCode(status) == TF_INVALID_ARGUMENT) {
      char s[3][160];
      for (int j = 0; j < 3; j++)
        ocl_shape_format(d[j], ranks[j], s[j], sizeof(s[j]));
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "condition %s, then %s, and else %s must be "
                     "broadcastable",
                     s[0], s[1], s[2]);
    }
    goto out;
  }
  out = ocl_tf.AllocateOutput(ctx, 0, k->dtype, b.out_dims, b.out_rank, 0,
                              status);
  if (failed(status) || b.out_elements == 0)
    goto out;
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    goto out;
  struct bcast3_args args = {.rank = b.rank};
  for (int i = 0; i < b.rank; i++) {
    args.dims[i] = b.dims[i];
    for (int j = 0; j < 3; j++)
      args.strides[j][i] = b.strides[j][i];
  }
  const struct ocl_arg argv[] = {
      OCL_TENSOR(in[0]), OCL_TENSOR(in[1]),
      OCL_TENSOR(in[2]), OCL_TENSOR(out),
      OCL_LONG(b.out_elements), OCL_BYTES(&args, sizeof(args)),
  };
  ocl_enqueue_1d(&launch, ocl_sized_family(families, k->dtype),
                 b.same_shape ? "select_flat" : "select_bcast",
                 (size_t)b.out_elements, argv, b.same_shape ? 5 : 6, status);
out:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(in, 3);
}

/* ---- OneHot ---------------------------------------------------------------- */

static void one_hot_compute(const struct gather_kernel *k,
                            TF_OpKernelContext *ctx, TF_Status *status)
{
  TF_Tensor *in[4] = {NULL, NULL, NULL, NULL}, *out = NULL;
  int64_t i_dims[OCL_MAX_DIMS];
  char s[160];
  static const char *const names[4] = {"indices", "depth", "on_value",
                                       "off_value"};

  if (!ocl_get_inputs(ctx, in, 4, status))
    return;
  int i_rank = ocl_tensor_dims(in[0], i_dims, status);
  if (i_rank < 0)
    goto out;
  if (!(k->axis == -1 || (k->axis >= 0 && k->axis < i_rank + 1))) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Expected axis to be -1 or between [0, %d).  But received: "
                   "%lld",
                   i_rank + 1, (long long)k->axis);
    goto out;
  }
  for (int j = 1; j < 4; j++) {
    if (ocl_tf.NumDims(in[j]) != 0) {
      shape_string(in[j], s, sizeof(s));
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%s must be a scalar, but got: %s", names[j], s);
      goto out;
    }
  }
  int32_t depth = *(const int32_t *)ocl_host_data(in[1]);
  if (depth < 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "depth must be non-negative, got: %d", depth);
    goto out;
  }
  int axis = k->axis == -1 ? i_rank : (int)k->axis;
  int64_t o_dims[OCL_MAX_DIMS + 1];
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
  out = ocl_tf.AllocateOutput(ctx, 0, k->dtype, o_dims, i_rank + 1, 0, status);
  if (failed(status))
    goto out;
  int64_t n = ocl_shape_elements(o_dims, i_rank + 1);
  if (n == 0)
    goto out;
  TF_DataType itype = ocl_tf.TensorType(in[0]);
  const char *name = itype == TF_UINT8  ? "one_hot_u8"
                     : itype == TF_INT8 ? "one_hot_i8"
                     : itype == TF_INT64 ? "one_hot_i64"
                                         : "one_hot_i32";
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    goto out;
  const struct ocl_arg args[] = {
      OCL_TENSOR(in[0]), OCL_TENSOR(in[2]), OCL_TENSOR(in[3]), OCL_TENSOR(out),
      OCL_LONG(n),       OCL_LONG(depth),   OCL_LONG(suffix),
  };
  ocl_enqueue_1d(&launch, ocl_sized_family(families, k->dtype), name, (size_t)n, args, 7,
                 status);
out:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(in, 4);
}

/* ---- BroadcastTo ------------------------------------------------------------ */

/* The collapsed broadcast as gather.cl's bto_t reads it. */
struct bto_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long in_strides[OCL_MAX_DIMS];
  cl_long rank;
};

static void broadcast_to_compute(const struct gather_kernel *k,
                                 TF_OpKernelContext *ctx, TF_Status *status)
{
  TF_Tensor *in[2] = {NULL, NULL}, *out = NULL;
  int64_t in_dims[OCL_MAX_DIMS], o_dims[OCL_MAX_DIMS];
  struct ocl_broadcast_to b;

  if (!ocl_get_inputs(ctx, in, 2, status))
    return;
  int in_rank = ocl_tensor_dims(in[0], in_dims, status);
  if (in_rank < 0)
    goto out;
  int o_rank = shape_from_tensor(in[1], "shape", o_dims, status);
  if (o_rank < 0 ||
      !ocl_broadcast_to_init(&b, in_dims, in_rank, o_dims, o_rank, status))
    goto out;
  out = ocl_tf.AllocateOutput(ctx, 0, k->dtype, o_dims, o_rank, 0, status);
  if (failed(status) || b.out_elements == 0)
    goto out;
  if (k->on_host) {
    const int32_t *x = ocl_host_data(in[0]);
    int32_t *y = ocl_host_data(out);
    for (int64_t i = 0; i < b.out_elements; i++) {
      int64_t rem = i, src = 0;
      for (int d = b.rank - 1; d >= 0; d--) {
        src += rem % b.dims[d] * b.in_strides[d];
        rem /= b.dims[d];
      }
      y[i] = x[src];
    }
    goto out;
  }
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    goto out;
  struct bto_args args = {.rank = b.rank};
  for (int i = 0; i < b.rank; i++) {
    args.dims[i] = b.dims[i];
    args.in_strides[i] = b.in_strides[i];
  }
  const struct ocl_arg argv[] = {OCL_TENSOR(in[0]), OCL_TENSOR(out),
                                 OCL_LONG(b.out_elements),
                                 OCL_BYTES(&args, sizeof(args))};
  ocl_enqueue_1d(&launch, ocl_sized_family(families, k->dtype), "broadcast_to",
                 (size_t)b.out_elements, argv, 4, status);
out:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(in, 2);
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

static void range_compute(const struct gather_kernel *k,
                          TF_OpKernelContext *ctx, TF_Status *status)
{
  TF_Tensor *in[3] = {NULL, NULL, NULL}, *out = NULL;
  static const char *const names[3] = {"start", "limit", "delta"};
  char s[160];

  if (!ocl_get_inputs(ctx, in, 3, status))
    return;
  for (int j = 0; j < 3; j++) {
    int rank = ocl_tf.NumDims(in[j]);
    if (!(rank == 0 || (rank == 1 && ocl_tf.Dim(in[j], 0) == 1))) {
      shape_string(in[j], s, sizeof(s));
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%s must be a scalar, not shape %s", names[j], s);
      goto out;
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
  bool zero = is_float ? fdelta == 0 : idelta == 0;
  bool positive = is_float ? fdelta > 0 : idelta > 0;
  bool ordered = positive ? (is_float ? fstart <= flimit : istart <= ilimit)
                          : (is_float ? fstart >= flimit : istart >= ilimit);
  if (zero) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "Requires delta != 0: %s", c);
    goto out;
  }
  if (!ordered) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Requires start %s limit when delta %s 0: %s/%s",
                   positive ? "<=" : ">=", positive ? ">" : "<", a, b);
    goto out;
  }
  /* The element count, in unsigned / double so extreme arguments cannot
   * overflow; a count past int64 is an error, as in TensorFlow. */
  if (is_float) {
    double n = ceil(fabs(((double)flimit - (double)fstart) / (double)fdelta));
    if (!(n < 9.2e18)) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Requires ((limit - start) / delta) <= %lld: %s/%s/%s",
                     (long long)INT64_MAX, a, b, c);
      goto out;
    }
    size = (int64_t)n;
  } else {
    uint64_t span = ilimit > istart ? (uint64_t)ilimit - (uint64_t)istart
                                    : (uint64_t)istart - (uint64_t)ilimit;
    uint64_t step = idelta < 0 ? 0 - (uint64_t)idelta : (uint64_t)idelta;
    uint64_t n = span / step + (span % step != 0);
    if (n > (uint64_t)INT64_MAX) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Requires ((limit - start) / delta) <= %lld: %s/%s/%s",
                     (long long)INT64_MAX, a, b, c);
      goto out;
    }
    size = (int64_t)n;
  }
  out = ocl_tf.AllocateOutput(ctx, 0, k->dtype, &size, 1, 0, status);
  if (failed(status) || size == 0)
    goto out;
  if (k->on_host) {
    int32_t *o = ocl_host_data(out);
    for (int64_t i = 0; i < size; i++)
      o[i] = (int32_t)(istart + i * idelta);
    goto out;
  }
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    goto out;
  if (is_float) {
    const struct ocl_arg args[] = {OCL_TENSOR(out), OCL_LONG(size),
                                   OCL_FLOAT(fstart), OCL_FLOAT(fdelta)};
    ocl_enqueue_1d(&launch, ocl_sized_family(families, k->dtype), "range_float", (size_t)size,
                   args, 4, status);
  } else {
    const struct ocl_arg args[] = {OCL_TENSOR(out), OCL_LONG(size),
                                   OCL_LONG(istart), OCL_LONG(idelta)};
    ocl_enqueue_1d(&launch, ocl_sized_family(families, k->dtype), "range_long", (size_t)size,
                   args, 4, status);
  }
out:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(in, 3);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

static void *gather_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct gather_op *op = &gather_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct gather_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, op->type_attr, &k->dtype,
                                          status);
  if (failed(status))
    goto fail;
  k->on_host = host_int32(op, k->dtype);
  if (op->kind == GATHER_V2) {
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "batch_dims", &k->batch_dims,
                                             status);
    /* Absent from older graphs: TensorFlow's default is 0. */
    ocl_set_ok(status);
  }
  if (op->kind == ONE_HOT) {
    k->axis = -1;
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "axis", &k->axis, status);
    ocl_set_ok(status);
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void gather_compute_any(void *kernel, TF_OpKernelContext *ctx)
{
  const struct gather_kernel *k = kernel;
  TF_Status *status = ocl_tf.NewStatus();
  switch (k->op->kind) {
  case FILL: fill_compute(k, ctx, status); break;
  case ZEROS_LIKE:
  case ONES_LIKE: like_compute(k, ctx, status); break;
  case GATHER_V2: gather_compute(k, ctx, status); break;
  case SELECT:
  case SELECT_V2: select_compute(k, ctx, status); break;
  case ONE_HOT: one_hot_compute(k, ctx, status); break;
  case BROADCAST_TO: broadcast_to_compute(k, ctx, status); break;
  case RANGE: range_compute(k, ctx, status); break;
  }
  ocl_compute_done(ctx, status);
}

static void gather_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_OPS <= OCL_MAX_FAMILY_OPS, "one create function per op");
OCL_FAMILY_CREATES(gather, gather_create);

/* ---- Registration ------------------------------------------------------ */

void ocl_register_gather_kernels(void)
{
  static const TF_DataType all_types[] = {TF_FLOAT, TF_HALF, TF_INT32,
                                          TF_INT64, TF_BOOL};
  static const TF_DataType range_types[] = {TF_FLOAT, TF_INT32, TF_INT64};

  for (size_t i = 0; i < NUM_OPS; i++) {
    const struct gather_op *op = &gather_ops[i];
    const TF_DataType *types = op->kind == RANGE ? range_types : all_types;
    size_t num_types = op->kind == RANGE ? 3 : 5;
    for (size_t t = 0; t < num_types; t++) {
      TF_DataType dtype = types[t];
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
