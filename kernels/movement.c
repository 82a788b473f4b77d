/* Data movement: Transpose, ConcatV2, Pack, Unpack, Split, SplitV, Slice,
 * StridedSlice, StridedSliceGrad, Tile, Pad, PadV2, and the
 * _ParallelConcatStart/_ParallelConcatUpdate pair of tf.parallel_stack.
 *
 * These ops move bytes, so one program per element size serves every dtype
 * (movement.cl). Every op but Tile and Pad reduces on the host to strided
 * copies (kernels/shape.h ocl_strided_copy): a contiguous one becomes
 * clEnqueueCopyBuffer (a memcpy on CPU devices), the rest one kernel.
 * Concat/Split/Pack/Unpack are one [rows, cols] block copy per input or
 * output.
 *
 * int32 data stays in device memory; only the shape-like arguments (perm,
 * axis, begin/end/strides, sizes, multiples, paddings) are HostMemory, read
 * on the host in whatever integer width TensorFlow allows (no Tidx-style
 * constraint is registered: StridedSlice's Index may be int16, SplitV's
 * Tlen int8). Outputs equal to an input (identity slices,
 * perms, tiles, pads, one-way splits) forward the input, as TensorFlow
 * does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "launch.h"

extern const char ocl_cl_source_movement[];

/* One program per element size: 1, 2, 4, 8 bytes. */
static const struct ocl_family families[4] =
    OCL_SIZED_FAMILIES("movement", ocl_cl_source_movement);

enum movement_kind {
  TRANSPOSE, CONCAT_V2, PACK, UNPACK, SPLIT, SPLIT_V, SLICE, STRIDED_SLICE,
  STRIDED_SLICE_GRAD, TILE, PAD, PAD_V2, PARALLEL_CONCAT_START,
  PARALLEL_CONCAT_UPDATE
};

struct movement_op {
  const char *op;
  enum movement_kind kind;
  const char *host_args[5]; /* NULL-terminated */
  const char *type_attr;    /* NULL: "T" */
  /* int32's instead of host_args (NULL: the same): all in host memory,
   * computed on the host. */
  const char *const *int32_host_args;
};

static const char *const start_int32_host[] = {"output", NULL};
static const char *const update_int32_host[] = {"value", "update", "output",
                                                NULL};

static const struct movement_op movement_ops[] = {
    {"Transpose", TRANSPOSE, {"perm", NULL}, NULL, NULL},
    {"ConcatV2", CONCAT_V2, {"axis", NULL}, NULL, NULL},
    {"Pack", PACK, {NULL}, NULL, NULL},
    {"Unpack", UNPACK, {NULL}, NULL, NULL},
    {"Split", SPLIT, {"split_dim", NULL}, NULL, NULL},
    {"SplitV", SPLIT_V, {"size_splits", "split_dim", NULL}, NULL, NULL},
    {"Slice", SLICE, {"begin", "size", NULL}, NULL, NULL},
    {"StridedSlice", STRIDED_SLICE, {"begin", "end", "strides", NULL}, NULL,
     NULL},
    {"StridedSliceGrad", STRIDED_SLICE_GRAD,
     {"shape", "begin", "end", "strides", NULL}, NULL, NULL},
    {"Tile", TILE, {"multiples", NULL}, NULL, NULL},
    {"Pad", PAD, {"paddings", NULL}, NULL, NULL},
    {"PadV2", PAD_V2, {"paddings", NULL}, NULL, NULL},
    /* TensorFlow's parallel_concat rewrite makes a Start, one in-place
     * Update per value, and an Identity of Start's output that waits for
     * the updates by control edges only. All three must run on one device:
     * with Start and Update on the CPU and the Identity here, the copy to
     * the device left before the updates and parallel_stack returned
     * zeros. */
    {"_ParallelConcatStart", PARALLEL_CONCAT_START, {NULL}, "dtype",
     start_int32_host},
    {"_ParallelConcatUpdate", PARALLEL_CONCAT_UPDATE, {NULL}, NULL,
     update_int32_host},
};

#define NUM_OPS ((int)(sizeof(movement_ops) / sizeof(movement_ops[0])))

enum { BEGIN_MASK, END_MASK, ELLIPSIS_MASK, NEW_AXIS_MASK, SHRINK_AXIS_MASK };

struct movement_kernel {
  const struct movement_op *op;
  TF_DataType dtype;
  size_t element_size;
  const struct ocl_family *family;
  int64_t axis; /* Pack, Unpack; _ParallelConcatUpdate's loc */
  int64_t masks[5]; /* StridedSlice(Grad) */
  int shape_rank;   /* _ParallelConcatStart's shape */
  int64_t shape[OCL_MAX_DIMS];
};

/* What movement.cl's movement_t reads: 8-byte members only. */
struct movement_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long in_strides[OCL_MAX_DIMS];
  cl_long out_strides[OCL_MAX_DIMS];
  cl_long in_dims[OCL_MAX_DIMS];
  cl_long before[OCL_MAX_DIMS];
  cl_long rank;
  cl_long in_offset;
  cl_long out_offset;
};

/* One compute call. */
struct run {
  TF_OpKernelContext *ctx;
  const struct movement_kernel *k;
  TF_Status *status;
  struct ocl_launch launch;
  bool launch_ready;
};

/* ---- Helpers --------------------------------------------------------------- */

static bool failed(const struct run *r)
{
  return ocl_tf.GetCode(r->status) != TF_OK;
}

static bool ensure_launch(struct run *r)
{
  if (!r->launch_ready)
    r->launch_ready = ocl_launch_init(&r->launch, r->ctx, r->status);
  return r->launch_ready;
}

struct shape {
  int rank;
  int64_t dims[OCL_MAX_DIMS];
  int64_t elements;
  char str[192]; /* "[2,3]" */
};

static bool get_shape(struct run *r, const TF_Tensor *t, struct shape *s)
{
  s->rank = ocl_tensor_dims(t, s->dims, r->status);
  if (s->rank < 0)
    return false;
  s->elements = ocl_shape_elements(s->dims, s->rank);
  ocl_shape_format(s->dims, s->rank, s->str, sizeof(s->str));
  return true;
}

static bool same_dims(const int64_t *a, int a_rank, const int64_t *b,
                      int b_rank)
{
  return a_rank == b_rank &&
         (a_rank == 0 || memcmp(a, b, sizeof(int64_t) * (size_t)a_rank) == 0);
}

static int64_t product(const int64_t *dims, int from, int to)
{
  int64_t n = 1;
  for (int d = from; d < to; d++)
    n *= dims[d];
  return n;
}

static TF_Tensor *alloc_output(struct run *r, int index, const int64_t *dims,
                               int rank)
{
  TF_Tensor *t = ocl_tf.AllocateOutput(r->ctx, index, r->k->dtype, dims, rank,
                                       0, r->status);
  if (failed(r)) {
    if (t != NULL)
      ocl_tf.DeleteTensor(t);
    return NULL;
  }
  return t;
}

/* Output `index` is input `x` itself. */
static void forward(struct run *r, int index, const TF_Tensor *x)
{
  ocl_tf.SetOutput(r->ctx, index, x, r->status);
}

/* Resolves element `offset` of a device tensor and `elements` after it. */
static bool resolve(struct run *r, const TF_Tensor *t, int64_t offset,
                    int64_t elements, cl_mem *buffer, size_t *byte_offset)
{
  size_t es = r->k->element_size;
  const char *base = ocl_tf.TensorData(t);
  return ocl_resolve(r->launch.device, base + (size_t)offset * es,
                     (uint64_t)elements * es, buffer, byte_offset, r->status);
}

static bool enqueue(struct run *r, const char *kernel,
                    const struct ocl_arg *args, int num_args, int64_t n)
{
  return ocl_enqueue_1d(&r->launch, r->k->family, kernel, (size_t)n, args,
                        num_args, r->status);
}

/* y[view] = x[view]: a buffer copy when contiguous, else a kernel. */
static bool strided_copy(struct run *r, const TF_Tensor *x, TF_Tensor *y,
                         const int64_t *dims, int rank,
                         const int64_t *in_strides, const int64_t *out_strides,
                         int64_t in_offset, int64_t out_offset)
{
  struct ocl_strided_copy c;
  ocl_strided_copy_init(&c, dims, rank, in_strides, out_strides, in_offset,
                        out_offset);
  if (c.elements == 0)
    return true;
  if (!ensure_launch(r))
    return false;
  if (c.contiguous) {
    cl_mem src, dst;
    size_t src_offset, dst_offset;
    if (!resolve(r, x, c.in_offset, c.elements, &src, &src_offset) ||
        !resolve(r, y, c.out_offset, c.elements, &dst, &dst_offset))
      return false;
    cl_int err = clEnqueueCopyBuffer(r->launch.queue, src, dst, src_offset,
                                     dst_offset,
                                     (size_t)c.elements * r->k->element_size,
                                     0, NULL, NULL);
    if (err != CL_SUCCESS) {
      ocl_set_cl_error(r->status, err, "clEnqueueCopyBuffer");
      return false;
    }
    return true;
  }
  struct movement_args a;
  memset(&a, 0, sizeof(a));
  a.in_offset = c.in_offset;
  a.out_offset = c.out_offset;
  /* Rank 1 runs as [1, n] through the 2-D kernel. */
  int shift = c.rank == 1 ? 1 : 0;
  a.rank = c.rank + shift;
  a.dims[0] = 1;
  for (int d = 0; d < c.rank; d++) {
    a.dims[d + shift] = c.dims[d];
    a.in_strides[d + shift] = c.in_strides[d];
    a.out_strides[d + shift] = c.out_strides[d];
  }
  if (a.rank == 2 && a.in_strides[1] != 1 && a.dims[0] >= 8 &&
      a.dims[1] >= 8) {
    /* Reads that stride along each output row (a transpose): 8x8 tiles
     * per work item (movement.cl). */
    size_t local[2] = {16, 4};
    size_t global[2] = {(size_t)(a.dims[1] + 7) / 8,
                        (size_t)(a.dims[0] + 7) / 8};
    const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(y),
                                   OCL_BYTES(&a, sizeof(a))};
    return ocl_enqueue(&r->launch, r->k->family, "strided_copy_tiles", 2,
                       global, local, args, 3, r->status);
  }
  if (a.rank == 2 && a.dims[1] >= 256) {
    /* Rows of a work-group or more: a 2-D range, no index division. */
    size_t local[2] = {ocl_elementwise_local_size(r->launch.device), 1};
    size_t global[2] = {(size_t)a.dims[1], (size_t)a.dims[0]};
    const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(y),
                                   OCL_BYTES(&a, sizeof(a))};
    return ocl_enqueue(&r->launch, r->k->family, "strided_copy_rows", 2,
                       global, local, args, 3, r->status);
  }
  const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(y),
                                 OCL_LONG(c.elements),
                                 OCL_BYTES(&a, sizeof(a))};
  return enqueue(r, a.rank == 2 ? "strided_copy_2d" : "strided_copy", args, 4,
                 c.elements);
}

/* A [rows, cols] block between row-major matrices of in_row and out_row
 * columns, at column offsets in_col and out_col (concat, split). */
static bool copy_block(struct run *r, const TF_Tensor *x, TF_Tensor *y,
                       int64_t rows, int64_t cols, int64_t in_row,
                       int64_t in_col, int64_t out_row, int64_t out_col)
{
  return strided_copy(r, x, y, (int64_t[]){rows, cols}, 2,
                      (int64_t[]){in_row, 1}, (int64_t[]){out_row, 1}, in_col,
                      out_col);
}

/* ---- Transpose --------------------------------------------------------- */

static void transpose(struct run *r, TF_Tensor **in)
{
  struct shape xs, ps;
  struct ocl_transpose t;
  int64_t perm[OCL_MAX_DIMS] = {0};

  if (!get_shape(r, in[0], &xs) || !get_shape(r, in[1], &ps))
    return;
  if (ps.rank != 1) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "perm must be rank 1, got shape %s", ps.str);
    return;
  }
  bool identity = true;
  for (int64_t i = 0; i < ps.elements && i < OCL_MAX_DIMS; i++) {
    perm[i] = ocl_host_int(in[1], i);
    identity &= perm[i] == i;
  }
  if (!ocl_transpose_init(&t, xs.dims, xs.rank, perm, (int)ps.elements,
                          r->status))
    return;
  if (identity) {
    forward(r, 0, in[0]);
    return;
  }
  TF_Tensor *y = alloc_output(r, 0, t.out_dims, t.out_rank);
  if (y == NULL)
    return;
  int64_t out_strides[OCL_MAX_DIMS];
  ocl_shape_strides(t.dims, t.rank, out_strides);
  strided_copy(r, in[0], y, t.dims, t.rank, t.in_strides, out_strides, 0, 0);
  ocl_tf.DeleteTensor(y);
}

/* ---- ConcatV2, Pack ----------------------------------------------------- */

static void concat(struct run *r, TF_Tensor **in, int num_inputs)
{
  int n = num_inputs - 1;
  struct shape as, first, s;

  if (!get_shape(r, in[n], &as) || !get_shape(r, in[0], &first))
    return;
  if (!(as.rank == 0 || (as.rank == 1 && as.dims[0] == 1))) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "axis tensor should be a scalar integer, but got shape %s",
                   as.str);
    return;
  }
  int64_t concat_dim = ocl_host_int(in[n], 0);
  int rank = first.rank;
  int64_t axis = concat_dim < 0 ? concat_dim + rank : concat_dim;
  /* concat_dim 0 also concatenates scalars into a vector. */
  if (!((0 <= axis && axis < rank) || concat_dim == 0)) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "ConcatOp : Expected concatenating dimensions in the range "
                   "[%d, %d), but got %lld",
                   -rank, rank, (long long)concat_dim);
    return;
  }
  int64_t out_concat = 0;
  for (int i = 0; i < n; i++) {
    if (!get_shape(r, in[i], &s))
      return;
    bool match = s.rank == rank;
    const char *what = "Ranks of all input tensors should match";
    for (int d = 0; match && d < rank; d++) {
      if (d != axis && s.dims[d] != first.dims[d]) {
        match = false;
        what = "Dimensions of inputs should match";
      }
    }
    if (!match) {
      ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                     "ConcatOp : %s: shape[0] = %s vs. shape[%d] = %s", what,
                     first.str, i, s.str);
      return;
    }
    out_concat += rank > 0 ? s.dims[axis] : 1;
  }
  int64_t out_dims[OCL_MAX_DIMS];
  memcpy(out_dims, first.dims, sizeof(out_dims));
  int out_rank = rank > 0 ? rank : 1;
  out_dims[rank > 0 ? axis : 0] = out_concat;
  TF_Tensor *y = alloc_output(r, 0, out_dims, out_rank);
  if (y == NULL)
    return;
  /* Each input is a [outer, cols] block of the [outer, out_cols] output. */
  int64_t outer = product(first.dims, 0, (int)axis);
  int64_t inner = rank > 0 ? product(first.dims, (int)axis + 1, rank) : 1;
  int64_t out_cols = out_concat * inner, col = 0;
  for (int i = 0; i < n && !failed(r); i++) {
    int64_t cols = (rank > 0 ? ocl_tf.Dim(in[i], (int)axis) : 1) * inner;
    copy_block(r, in[i], y, outer, cols, cols, 0, out_cols, col);
    col += cols;
  }
  ocl_tf.DeleteTensor(y);
}

static void pack(struct run *r, TF_Tensor **in, int n)
{
  struct shape first, s;

  if (!get_shape(r, in[0], &first))
    return;
  int expanded = first.rank + 1;
  int64_t axis = r->k->axis < 0 ? r->k->axis + expanded : r->k->axis;
  if (axis < 0 || axis >= expanded) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT, "axis = %lld not in [%d, %d)",
                   (long long)r->k->axis, -expanded, expanded);
    return;
  }
  if (expanded > OCL_MAX_DIMS) {
    ocl_set_status(r->status, TF_UNIMPLEMENTED,
                   "Pack to rank %d is not supported on the OPENCL device (at "
                   "most %d)",
                   expanded, OCL_MAX_DIMS);
    return;
  }
  for (int i = 1; i < n; i++) {
    if (!get_shape(r, in[i], &s))
      return;
    if (!same_dims(s.dims, s.rank, first.dims, first.rank)) {
      ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                     "Shapes of all inputs must match: values[0].shape = %s "
                     "!= values[%d].shape = %s",
                     first.str, i, s.str);
      return;
    }
  }
  int64_t out_dims[OCL_MAX_DIMS];
  for (int d = 0, j = 0; d < expanded; d++)
    out_dims[d] = d == axis ? n : first.dims[j++];
  TF_Tensor *y = alloc_output(r, 0, out_dims, expanded);
  if (y == NULL)
    return;
  int64_t outer = product(first.dims, 0, (int)axis);
  int64_t inner = product(first.dims, (int)axis, first.rank);
  for (int i = 0; i < n && !failed(r); i++)
    copy_block(r, in[i], y, outer, inner, inner, 0, n * inner, i * inner);
  ocl_tf.DeleteTensor(y);
}

/* ---- Unpack, Split, SplitV ------------------------------------------------ */

/* Output i takes sizes[i] of x's dim `axis` (removed from the output's
 * shape when `squeeze`, as Unpack does). */
static void split_outputs(struct run *r, const TF_Tensor *x,
                          const struct shape *xs, int axis,
                          const int64_t *sizes, int num, bool squeeze)
{
  int64_t outer = product(xs->dims, 0, axis);
  int64_t inner = product(xs->dims, axis + 1, xs->rank);
  int64_t in_cols = xs->dims[axis] * inner, start = 0;
  for (int i = 0; i < num && !failed(r); i++) {
    int64_t dims[OCL_MAX_DIMS];
    int rank = 0;
    for (int d = 0; d < xs->rank; d++) {
      if (d != axis)
        dims[rank++] = xs->dims[d];
      else if (!squeeze)
        dims[rank++] = sizes[i];
    }
    TF_Tensor *y = alloc_output(r, i, dims, rank);
    if (y == NULL)
      return;
    int64_t cols = sizes[i] * inner;
    copy_block(r, x, y, outer, cols, in_cols, start * inner, cols, 0);
    start += sizes[i];
    ocl_tf.DeleteTensor(y);
  }
}

static void unpack(struct run *r, TF_Tensor **in)
{
  struct shape xs;
  int num = ocl_tf.NumOutputs(r->ctx);

  if (!get_shape(r, in[0], &xs))
    return;
  int64_t axis = r->k->axis < 0 ? r->k->axis + xs.rank : r->k->axis;
  if (axis < 0 || axis >= xs.rank) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT, "axis = %lld not in [%d, %d)",
                   (long long)r->k->axis, -xs.rank, xs.rank);
    return;
  }
  if (xs.dims[axis] != num) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "Input shape axis %d must equal %d, got shape %s",
                   (int)axis, num, xs.str);
    return;
  }
  int64_t *sizes = malloc(sizeof(int64_t) * (size_t)(num > 0 ? num : 1));
  if (sizes == NULL) {
    ocl_set_status(r->status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  for (int i = 0; i < num; i++)
    sizes[i] = 1;
  split_outputs(r, in[0], &xs, (int)axis, sizes, num, true);
  free(sizes);
}

/* The split dim, normalised and range-checked; -1 on error. */
static int split_axis(struct run *r, int64_t split_dim, const struct shape *xs)
{
  int64_t axis = split_dim < 0 ? split_dim + xs->rank : split_dim;
  if (axis < 0 || axis >= xs->rank) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "-input rank(-%d) <= split_dim < input rank (%d), but got "
                   "%lld",
                   xs->rank, xs->rank, (long long)split_dim);
    return -1;
  }
  return (int)axis;
}

static void split(struct run *r, TF_Tensor **in)
{
  struct shape ds, xs;
  int num = ocl_tf.NumOutputs(r->ctx);
  int64_t *sizes = NULL;

  if (!get_shape(r, in[0], &ds) || !get_shape(r, in[1], &xs))
    return;
  if (ds.rank != 0) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "split_dim must be a scalar but has rank %d", ds.rank);
    return;
  }
  int axis = split_axis(r, ocl_host_int(in[0], 0), &xs);
  if (axis < 0)
    return;
  if (xs.dims[axis] % num != 0) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "Number of ways to split should evenly divide the split "
                   "dimension, but got split_dim %d (size = %lld) and "
                   "num_split %d",
                   axis, (long long)xs.dims[axis], num);
    return;
  }
  if (num == 1) {
    forward(r, 0, in[1]);
    return;
  }
  sizes = malloc(sizeof(int64_t) * (size_t)num);
  if (sizes == NULL) {
    ocl_set_status(r->status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  for (int i = 0; i < num; i++)
    sizes[i] = xs.dims[axis] / num;
  split_outputs(r, in[1], &xs, axis, sizes, num, false);
  free(sizes);
}

static void split_v(struct run *r, TF_Tensor **in)
{
  struct shape xs, ss, ds;
  int num = ocl_tf.NumOutputs(r->ctx);
  int64_t *sizes = NULL;

  if (!get_shape(r, in[0], &xs) || !get_shape(r, in[1], &ss) ||
      !get_shape(r, in[2], &ds))
    return;
  if (ds.elements != 1) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "split_dim_tensor must have exactly one element.");
    return;
  }
  if (ss.rank != 1 || ss.elements != num) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "size of the split_tensor must be 1-D and have the same "
                   "elements as outputs got %d -D and %lld elements",
                   ss.rank, (long long)ss.elements);
    return;
  }
  int axis = split_axis(r, ocl_host_int(in[2], 0), &xs);
  if (axis < 0)
    return;
  int64_t input_size = xs.dims[axis];
  if (num == 1) {
    if (ocl_host_int(in[1], 0) != input_size) {
      ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                     "If there is only one output, it must have the same size "
                     "as the input. Input size: %lld output size: %lld",
                     (long long)input_size, (long long)ocl_host_int(in[1], 0));
      return;
    }
    forward(r, 0, in[0]);
    return;
  }
  sizes = malloc(sizeof(int64_t) * (size_t)num);
  if (sizes == NULL) {
    ocl_set_status(r->status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  int neg_one = -1;
  int64_t determined = 0;
  for (int i = 0; i < num; i++) {
    sizes[i] = ocl_host_int(in[1], i);
    if (sizes[i] == -1) {
      if (neg_one != -1) {
        ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                       "There can only be one -1 in the input.");
        goto out;
      }
      neg_one = i;
    } else {
      determined += sizes[i];
    }
  }
  if (!((neg_one == -1 && determined == input_size) ||
        (neg_one >= 0 && determined <= input_size))) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "Determined shape must either match input shape along "
                   "split_dim exactly if fully specified, or be less than the "
                   "size of the input along split_dim if not fully "
                   "specified.  Got: %lld",
                   (long long)determined);
    goto out;
  }
  if (neg_one >= 0)
    sizes[neg_one] = input_size - determined;
  for (int i = 0; i < num; i++) {
    if (sizes[i] < 0) {
      ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                     "Split size at index %d must be >= 0. Got: %lld", i,
                     (long long)sizes[i]);
      goto out;
    }
  }
  split_outputs(r, in[0], &xs, axis, sizes, num, false);
out:
  free(sizes);
}

/* ---- Slice, StridedSlice, StridedSliceGrad ------------------------------ */

static void slice(struct run *r, TF_Tensor **in)
{
  struct shape xs, bs, ss;
  int64_t begin[OCL_MAX_DIMS], size[OCL_MAX_DIMS];

  if (!get_shape(r, in[0], &xs) || !get_shape(r, in[1], &bs) ||
      !get_shape(r, in[2], &ss))
    return;
  if (bs.rank != 1 || ss.rank != 1 || bs.elements != xs.rank ||
      ss.elements != xs.rank) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "Expected begin and size arguments to be 1-D tensors of "
                   "size %d, but got shapes %s and %s instead.",
                   xs.rank, bs.str, ss.str);
    return;
  }
  bool identity = true;
  for (int i = 0; i < xs.rank; i++) {
    int64_t b = ocl_host_int(in[1], i), s = ocl_host_int(in[2], i);
    int64_t dim = xs.dims[i];
    if (s == -1)
      s = dim - b; /* all elements from begin[i] on */
    if (dim == 0) {
      if (b != 0 || s != 0) {
        ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                       "Expected begin[%d] == 0 (got %lld) and size[%d] == 0 "
                       "(got %lld) when input.dim_size(%d) == 0",
                       i, (long long)b, i, (long long)s, i);
        return;
      }
    } else {
      if (b < 0 || b > dim) {
        ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                       "Expected begin[%d] in [0, %lld], but got %lld", i,
                       (long long)dim, (long long)b);
        return;
      }
      if (s < 0 || b + s > dim) {
        ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                       "Expected size[%d] in [0, %lld], but got %lld", i,
                       (long long)(dim - b), (long long)s);
        return;
      }
    }
    begin[i] = b;
    size[i] = s;
    identity &= b == 0 && s == dim;
  }
  if (identity) {
    forward(r, 0, in[0]);
    return;
  }
  TF_Tensor *y = alloc_output(r, 0, size, xs.rank);
  if (y == NULL)
    return;
  int64_t in_strides[OCL_MAX_DIMS], out_strides[OCL_MAX_DIMS];
  ocl_shape_strides(xs.dims, xs.rank, in_strides);
  ocl_shape_strides(size, xs.rank, out_strides);
  int64_t offset = 0;
  for (int i = 0; i < xs.rank; i++)
    offset += begin[i] * in_strides[i];
  strided_copy(r, in[0], y, size, xs.rank, in_strides, out_strides, offset, 0);
  ocl_tf.DeleteTensor(y);
}

/* begin/end/strides (in[first..first+2]) against a tensor of `dims`. */
static bool strided_slice_spec(struct run *r, TF_Tensor **in, int first,
                               const struct shape *xs,
                               struct ocl_strided_slice *s)
{
  struct shape bs, es, ss;
  int64_t begin[OCL_SLICE_SPEC_MAX], end[OCL_SLICE_SPEC_MAX],
      strides[OCL_SLICE_SPEC_MAX];

  if (!get_shape(r, in[first], &bs) || !get_shape(r, in[first + 1], &es) ||
      !get_shape(r, in[first + 2], &ss))
    return false;
  if (bs.rank != 1 || es.rank != 1 || ss.rank != 1 ||
      bs.elements != ss.elements || es.elements != ss.elements ||
      bs.elements >= OCL_SLICE_SPEC_MAX) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "Expected begin, end, and strides to be 1D equal size "
                   "tensors, but got shapes %s, %s, and %s instead.",
                   bs.str, es.str, ss.str);
    return false;
  }
  int n = (int)ss.elements;
  for (int i = 0; i < n; i++) {
    begin[i] = ocl_host_int(in[first], i);
    end[i] = ocl_host_int(in[first + 1], i);
    strides[i] = ocl_host_int(in[first + 2], i);
  }
  const int64_t *m = r->k->masks;
  return ocl_strided_slice_init(s, xs->dims, xs->rank, begin, end, strides, n,
                                m[BEGIN_MASK], m[END_MASK], m[ELLIPSIS_MASK],
                                m[NEW_AXIS_MASK], m[SHRINK_AXIS_MASK],
                                r->status);
}

/* The slice as a view of a tensor of `dims`: element strides and offset. */
static int64_t slice_view(const struct ocl_strided_slice *s,
                          const int64_t *dims, int64_t *view_strides)
{
  int64_t strides[OCL_MAX_DIMS], offset = 0;
  ocl_shape_strides(dims, s->rank, strides);
  for (int d = 0; d < s->rank; d++) {
    view_strides[d] = s->strides[d] * strides[d];
    offset += s->begin[d] * strides[d];
  }
  return offset;
}

static void strided_slice(struct run *r, TF_Tensor **in)
{
  struct shape xs;
  struct ocl_strided_slice s;

  if (!get_shape(r, in[0], &xs) || !strided_slice_spec(r, in, 1, &xs, &s))
    return;
  if (s.is_identity && same_dims(s.final_dims, s.final_rank, xs.dims, xs.rank)) {
    forward(r, 0, in[0]);
    return;
  }
  TF_Tensor *y = alloc_output(r, 0, s.final_dims, s.final_rank);
  if (y == NULL)
    return;
  int64_t in_strides[OCL_MAX_DIMS], out_strides[OCL_MAX_DIMS];
  int64_t offset = slice_view(&s, xs.dims, in_strides);
  ocl_shape_strides(s.processing_dims, s.rank, out_strides);
  strided_copy(r, in[0], y, s.processing_dims, s.rank, in_strides,
               out_strides, offset, 0);
  ocl_tf.DeleteTensor(y);
}

/* dx = zeros(shape); dx[slice] = dy. */
static void strided_slice_grad(struct run *r, TF_Tensor **in)
{
  struct shape shs, dys, xs;
  struct ocl_strided_slice s;

  if (!get_shape(r, in[0], &shs) || !get_shape(r, in[4], &dys))
    return;
  if (shs.rank != 1) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "shape must be 1-D, got shape.shape = %s", shs.str);
    return;
  }
  if (shs.elements > OCL_MAX_DIMS) {
    ocl_set_status(r->status, TF_UNIMPLEMENTED,
                   "StridedSliceGrad of rank %lld is not supported on the "
                   "OPENCL device (at most %d)",
                   (long long)shs.elements, OCL_MAX_DIMS);
    return;
  }
  xs.rank = (int)shs.elements;
  for (int d = 0; d < xs.rank; d++) {
    xs.dims[d] = ocl_host_int(in[0], d);
    if (xs.dims[d] < 0) {
      ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                     "Dimension %lld must be >= 0", (long long)xs.dims[d]);
      return;
    }
  }
  xs.elements = ocl_shape_elements(xs.dims, xs.rank);
  if (!strided_slice_spec(r, in, 1, &xs, &s))
    return;
  if (!same_dims(s.final_dims, s.final_rank, dys.dims, dys.rank)) {
    char want[192];
    ocl_shape_format(s.final_dims, s.final_rank, want, sizeof(want));
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "shape of dy was %s instead of %s", dys.str, want);
    return;
  }
  TF_Tensor *dx = alloc_output(r, 0, xs.dims, xs.rank);
  if (dx == NULL)
    return;
  if (xs.elements > 0 && ensure_launch(r)) {
    /* Zero bits are zero in every dtype. */
    cl_mem buffer;
    size_t offset;
    cl_ulong zero = 0;
    size_t es = r->k->element_size;
    if (resolve(r, dx, 0, xs.elements, &buffer, &offset)) {
      cl_int err = clEnqueueFillBuffer(r->launch.queue, buffer, &zero, es,
                                       offset, (size_t)xs.elements * es, 0,
                                       NULL, NULL);
      if (err != CL_SUCCESS)
        ocl_set_cl_error(r->status, err, "clEnqueueFillBuffer");
    }
    if (!failed(r)) {
      int64_t in_strides[OCL_MAX_DIMS], out_strides[OCL_MAX_DIMS];
      int64_t offset_out = slice_view(&s, xs.dims, out_strides);
      ocl_shape_strides(s.processing_dims, s.rank, in_strides);
      strided_copy(r, in[4], dx, s.processing_dims, s.rank, in_strides,
                   out_strides, 0, offset_out);
    }
  }
  ocl_tf.DeleteTensor(dx);
}

/* ---- Tile, Pad, PadV2 ------------------------------------------------------ */

static void tile(struct run *r, TF_Tensor **in)
{
  struct shape xs, ms;

  if (!get_shape(r, in[0], &xs) || !get_shape(r, in[1], &ms))
    return;
  if (ms.rank != 1) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "Expected multiples to be 1-D, but got shape %s", ms.str);
    return;
  }
  if (ms.elements != xs.rank) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "Expected multiples argument to be a vector of length %d "
                   "but got length %lld",
                   xs.rank, (long long)ms.dims[0]);
    return;
  }
  struct movement_args a;
  memset(&a, 0, sizeof(a));
  bool all_one = true;
  for (int d = 0; d < xs.rank; d++) {
    int64_t m = ocl_host_int(in[1], d);
    if (m < 0) {
      ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                     "Expected multiples[%d] >= 0, but got %lld", d,
                     (long long)m);
      return;
    }
    all_one &= m == 1;
    a.dims[d] = xs.dims[d] * m;
    a.in_dims[d] = xs.dims[d];
  }
  if (all_one) {
    forward(r, 0, in[0]);
    return;
  }
  int64_t out_dims[OCL_MAX_DIMS], in_strides[OCL_MAX_DIMS];
  for (int d = 0; d < xs.rank; d++)
    out_dims[d] = a.dims[d];
  ocl_shape_strides(xs.dims, xs.rank, in_strides);
  for (int d = 0; d < xs.rank; d++)
    a.in_strides[d] = in_strides[d];
  a.rank = xs.rank;
  TF_Tensor *y = alloc_output(r, 0, out_dims, xs.rank);
  if (y == NULL)
    return;
  int64_t n = ocl_shape_elements(out_dims, xs.rank);
  if (n > 0 && ensure_launch(r)) {
    const struct ocl_arg args[] = {OCL_TENSOR(in[0]), OCL_TENSOR(y),
                                   OCL_LONG(n), OCL_BYTES(&a, sizeof(a))};
    enqueue(r, "tile", args, 4, n);
  }
  ocl_tf.DeleteTensor(y);
}

static void pad(struct run *r, TF_Tensor **in)
{
  struct shape xs, ps, cs;
  bool v2 = r->k->op->kind == PAD_V2;

  if (!get_shape(r, in[0], &xs) || !get_shape(r, in[1], &ps))
    return;
  if (ps.rank != 2 || ps.dims[1] != 2) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "paddings must be a matrix with 2 columns: %s", ps.str);
    return;
  }
  if (ps.dims[0] != xs.rank) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "The first dimension of paddings must be the rank of "
                   "inputs%s %s",
                   ps.str, xs.str);
    return;
  }
  if (v2) {
    if (!get_shape(r, in[2], &cs))
      return;
    if (cs.rank != 0) {
      ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                     "constant_values must be a scalar. Found: %s", cs.str);
      return;
    }
  }
  struct movement_args a;
  memset(&a, 0, sizeof(a));
  int64_t out_dims[OCL_MAX_DIMS], in_strides[OCL_MAX_DIMS];
  bool no_padding = true;
  for (int d = 0; d < xs.rank; d++) {
    int64_t before = ocl_host_int(in[1], 2 * d), after = ocl_host_int(in[1], 2 * d + 1);
    if (before < 0 || after < 0) {
      ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                     "Paddings must be non-negative: %lld %lld",
                     (long long)before, (long long)after);
      return;
    }
    if (before > INT64_MAX - xs.dims[d] || after > INT64_MAX - xs.dims[d] - before) {
      ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                     "Paddings %lld %lld of dimension %d overflow int64",
                     (long long)before, (long long)after, d);
      return;
    }
    no_padding &= before == 0 && after == 0;
    out_dims[d] = before + xs.dims[d] + after;
    a.dims[d] = out_dims[d];
    a.before[d] = before;
    a.in_dims[d] = xs.dims[d];
  }
  if (no_padding) {
    forward(r, 0, in[0]);
    return;
  }
  ocl_shape_strides(xs.dims, xs.rank, in_strides);
  for (int d = 0; d < xs.rank; d++)
    a.in_strides[d] = in_strides[d];
  a.rank = xs.rank;
  TF_Tensor *y = alloc_output(r, 0, out_dims, xs.rank);
  if (y == NULL)
    return;
  int64_t n = ocl_shape_elements(out_dims, xs.rank);
  if (n > 0 && ensure_launch(r)) {
    /* Pad passes x as the (unread) constant. */
    const struct ocl_arg args[] = {
        OCL_TENSOR(in[0]),          OCL_TENSOR(y),
        OCL_TENSOR(in[v2 ? 2 : 0]), OCL_INT(v2),
        OCL_LONG(n),                OCL_BYTES(&a, sizeof(a))};
    enqueue(r, "pad", args, 6, n);
  }
  ocl_tf.DeleteTensor(y);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

/* ---- _ParallelConcatStart, _ParallelConcatUpdate ----------------------- */

/* The `shape` attribute (fully defined: TensorFlow's rewrite copies
 * ParallelConcat's). */
static bool parallel_concat_shape(TF_OpKernelConstruction *ctx,
                                  struct movement_kernel *k, TF_Status *status)
{
  int32_t list_size = 0;
  int32_t rank = 0;
  ocl_tf.OpKernelConstruction_GetAttrSize(ctx, "shape", &list_size, &rank,
                                          status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return false;
  if (rank < 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "_ParallelConcatStart needs a shape of known rank");
    return false;
  }
  if (rank > OCL_MAX_DIMS) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "tensors of rank %d are not supported on the OPENCL device "
                   "(at most %d)",
                   (int)rank, OCL_MAX_DIMS);
    return false;
  }
  ocl_tf.OpKernelConstruction_GetAttrTensorShape(ctx, "shape", k->shape,
                                                 (size_t)rank, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return false;
  for (int d = 0; d < rank; d++) {
    if (k->shape[d] < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "_ParallelConcatStart needs a fully defined shape");
      return false;
    }
  }
  k->shape_rank = rank;
  return true;
}

/* Uninitialised, as TensorFlow's: every row is written by an update. */
static void parallel_concat_start(struct run *r)
{
  TF_Tensor *y = alloc_output(r, 0, r->k->shape, r->k->shape_rank);
  if (y != NULL)
    ocl_tf.DeleteTensor(y);
}

/* value[loc] = update[0], in place; the output is value itself. */
static void parallel_concat_update(struct run *r, TF_Tensor **in)
{
  struct shape vs, us;
  if (!get_shape(r, in[0], &vs) || !get_shape(r, in[1], &us))
    return;
  if (vs.rank < 1) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "value should be at least rank 1.");
    return;
  }
  if (vs.dims[0] <= r->k->axis) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "0th dimension of value %lld is less than loc_=%lld",
                   (long long)vs.dims[0], (long long)r->k->axis);
    return;
  }
  bool same = vs.rank == us.rank;
  for (int d = 1; same && d < vs.rank; d++)
    same = vs.dims[d] == us.dims[d];
  if (!same || us.dims[0] != 1) {
    ocl_set_status(r->status, TF_INVALID_ARGUMENT,
                   "%s shape doesn't match: %s vs. %s",
                   vs.rank == us.rank ? "update" : "value and update",
                   vs.str, us.str);
    return;
  }
  int64_t rows = vs.dims[0];
  int64_t row = ((r->k->axis % rows) + rows) % rows;
  int64_t cols = rows > 0 ? vs.elements / rows : 0;
  if (r->k->dtype == TF_INT32) {
    /* Host memory, as int32 shape-like values are (int32_host_args). */
    if (cols > 0)
      memcpy((int32_t *)ocl_host_data(in[0]) + row * cols,
             ocl_host_data(in[1]), sizeof(int32_t) * (size_t)cols);
  } else if (!copy_block(r, in[1], in[0], 1, cols, cols, 0, cols,
                         row * cols)) {
    return;
  }
  forward(r, 0, in[0]);
}

static void *movement_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct movement_op *op = &movement_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct movement_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  ocl_tf.OpKernelConstruction_GetAttrType(
      ctx, op->type_attr != NULL ? op->type_attr : "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->element_size = ocl_tf.DataTypeSize(k->dtype);
  k->family = ocl_sized_family(families, k->dtype);
  if (k->family == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "%s of %zu-byte elements is not supported on the OPENCL "
                   "device",
                   op->op, k->element_size);
    goto fail;
  }
  if (op->kind == PACK || op->kind == UNPACK) {
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "axis", &k->axis, status);
    /* Absent: TensorFlow's default, 0. */
    if (ocl_tf.GetCode(status) != TF_OK)
      k->axis = 0;
    ocl_set_ok(status);
  }
  if (op->kind == PARALLEL_CONCAT_UPDATE) {
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "loc", &k->axis, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  if (op->kind == PARALLEL_CONCAT_START &&
      !parallel_concat_shape(ctx, k, status))
    goto fail;
  if (op->kind == STRIDED_SLICE || op->kind == STRIDED_SLICE_GRAD) {
    static const char *const names[5] = {"begin_mask", "end_mask",
                                         "ellipsis_mask", "new_axis_mask",
                                         "shrink_axis_mask"};
    for (int i = 0; i < 5; i++) {
      ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, names[i], &k->masks[i],
                                               status);
      if (ocl_tf.GetCode(status) != TF_OK)
        k->masks[i] = 0;
      ocl_set_ok(status);
    }
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void movement_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct movement_kernel *k = kernel;
  struct run r = {.ctx = ctx, .k = k, .status = ocl_tf.NewStatus()};
  int n = ocl_tf.NumInputs(ctx);
  TF_Tensor **in = calloc((size_t)(n > 0 ? n : 1), sizeof(*in));

  if (in == NULL) {
    ocl_set_status(r.status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto out;
  }
  if (!ocl_get_inputs(ctx, in, n, r.status))
    goto out;
  switch (k->op->kind) {
  case TRANSPOSE: transpose(&r, in); break;
  case CONCAT_V2: concat(&r, in, n); break;
  case PACK: pack(&r, in, n); break;
  case UNPACK: unpack(&r, in); break;
  case SPLIT: split(&r, in); break;
  case SPLIT_V: split_v(&r, in); break;
  case SLICE: slice(&r, in); break;
  case STRIDED_SLICE: strided_slice(&r, in); break;
  case STRIDED_SLICE_GRAD: strided_slice_grad(&r, in); break;
  case TILE: tile(&r, in); break;
  case PAD:
  case PAD_V2: pad(&r, in); break;
  case PARALLEL_CONCAT_START: parallel_concat_start(&r); break;
  case PARALLEL_CONCAT_UPDATE: parallel_concat_update(&r, in); break;
  }
out:
  if (in != NULL)
    ocl_delete_tensors(in, n);
  free(in);
  ocl_compute_done(ctx, r.status);
}

static void movement_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per movement op");
OCL_FAMILY_CREATES(movement, movement_create);

/* ---- Registration ------------------------------------------------------ */

/* ---- Bitcast ------------------------------------------------------------ */

/* Bitcast reinterprets the input's bytes as `type`. Like TensorFlow's
 * BitcastOp, the output shares the input's buffer (no copy, any dtype): a
 * wider input gains a last dim, a narrower one loses it. */
struct bitcast_kernel {
  TF_DataType in_type, out_type;
};

static void *bitcast_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct bitcast_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->in_type, status);
  if (ocl_tf.GetCode(status) == TF_OK)
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "type", &k->out_type, status);
  if (ocl_tf.GetCode(status) == TF_OK &&
      (ocl_tf.DataTypeSize(k->in_type) == 0 ||
       ocl_tf.DataTypeSize(k->out_type) == 0))
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "Bitcast of types without a fixed size (%d, %d) is not "
                   "supported",
                   (int)k->in_type, (int)k->out_type);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  ocl_tf.DeleteStatus(status);
  return k;
}

static void bitcast_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct bitcast_kernel *k = kernel;
  TF_Status *status = ocl_tf.NewStatus();
  TF_Tensor *in = NULL, *out = NULL;
  int64_t dims[OCL_MAX_DIMS + 1];

  if (!ocl_get_inputs(ctx, &in, 1, status))
    goto done;
  int rank = ocl_tensor_dims(in, dims, status);
  if (rank < 0)
    goto done;
  size_t in_size = ocl_tf.DataTypeSize(k->in_type);
  size_t out_size = ocl_tf.DataTypeSize(k->out_type);
  if (in_size > out_size) {
    dims[rank++] = (int64_t)(in_size / out_size);
  } else if (in_size < out_size) {
    if (rank == 0 || dims[rank - 1] != (int64_t)(out_size / in_size)) {
      char shape[160];
      ocl_shape_format(dims, rank, shape, sizeof(shape));
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Cannot bitcast from type %d to type %d: shape %s",
                     (int)k->in_type, (int)k->out_type, shape);
      goto done;
    }
    rank--;
  }
  /* An empty tensor of the output type takes over the input's buffer. */
  int64_t empty = 0;
  out = ocl_tf.AllocateTensor(k->out_type, &empty, 1, 0);
  if (out == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto done;
  }
  ocl_tf.TensorBitcastFrom(in, k->out_type, out, dims, rank, status);
  if (ocl_tf.GetCode(status) == TF_OK)
    ocl_tf.SetOutput(ctx, 0, out, status);
done:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(&in, 1);
  ocl_compute_done(ctx, status);
}

void ocl_register_movement_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_INT32, TF_INT64,
                                      TF_BOOL};

  for (int i = 0; i < NUM_OPS; i++) {
    const struct movement_op *op = &movement_ops[i];
    /* The pair must run together (see the table); Start's shape attribute
     * needs TF_OpKernelConstruction_GetAttrTensorShape, which only
     * TensorFlow's with kernels_experimental.h export. */
    if ((op->kind == PARALLEL_CONCAT_START ||
         op->kind == PARALLEL_CONCAT_UPDATE) &&
        (ocl_tf.OpKernelConstruction_GetAttrTensorShape == NULL ||
         ocl_tf.OpKernelConstruction_GetAttrSize == NULL))
      continue;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = movement_creates[i],
          .compute = movement_compute,
          .destroy = movement_delete,
          .type_attrs = {op->type_attr != NULL ? op->type_attr : "T"},
          .types = {types[t]},
          .host_args = types[t] == TF_INT32 && op->int32_host_args != NULL
                           ? op->int32_host_args
                           : op->host_args,
      });
  }

  /* Unconstrained, as TensorFlow's GPU registration: every dtype, in
   * device memory. It needs TF_TensorBitcastFrom to share the buffer. */
  if (ocl_tf.TensorBitcastFrom != NULL)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "Bitcast",
        .create = bitcast_create,
        .compute = bitcast_compute,
        .destroy = movement_delete,
    });
}
