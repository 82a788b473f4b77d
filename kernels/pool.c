/* Pooling and batch normalisation: MaxPool, MaxPoolGrad, AvgPool,
 * AvgPoolGrad, FusedBatchNormV3 and FusedBatchNormGradV3, for float and half
 * (batch norm: T float or half with U float), NHWC and NCHW.
 *
 * Semantics are TensorFlow's CPU kernels' (pooling_ops_common.cc,
 * maxpooling_op.cc, avgpooling_op.cc, fused_batch_norm_op.cc). Where the
 * CPU kernels take only NHWC (MaxPool, AvgPool and their gradients,
 * FusedBatchNormGradV3 with is_training=false) the same arithmetic runs on
 * NCHW, as TensorFlow's GPU kernels allow. Depthwise pooling (a depth
 * window other than 1) is UNIMPLEMENTED. The shapes are worked out by
 * ocl_pool2d_init (shape.h); pool.cl has one kernel per op.
 *
 * FusedBatchNormV3's reserve_space_1/2 hold the batch mean and biased
 * variance in training (the CPU kernel's choice, not cuDNN's inverse
 * variance: our gradient reads them back), the given mean and variance in
 * inference; reserve_space_3 is empty, shape [0], as on the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "launch.h"

extern const char ocl_cl_source_pool[];

static const struct ocl_family families[OCL_NUM_STORAGES] =
    OCL_TYPED_FAMILIES("pool", ocl_cl_source_pool);

enum pool_kind {
  MAX_POOL,
  MAX_POOL_GRAD,
  AVG_POOL,
  AVG_POOL_GRAD,
  BATCH_NORM,
  BATCH_NORM_GRAD
};

struct pool_op {
  const char *op;
  enum pool_kind kind;
  int num_inputs;
  const char *const *host_args;
};

static const char *const avg_pool_grad_host[] = {"orig_input_shape", NULL};

static const struct pool_op pool_ops[] = {
    {"MaxPool", MAX_POOL, 1, NULL},
    {"MaxPoolGrad", MAX_POOL_GRAD, 3, NULL},
    {"AvgPool", AVG_POOL, 1, NULL},
    {"AvgPoolGrad", AVG_POOL_GRAD, 2, avg_pool_grad_host},
    {"FusedBatchNormV3", BATCH_NORM, 5, NULL},
    {"FusedBatchNormGradV3", BATCH_NORM_GRAD, 6, NULL},
};

struct pool_kernel {
  const struct pool_op *op;
  TF_DataType dtype;
  enum ocl_storage storage;
  bool channels_first;
  /* Pooling. */
  int64_t ksize[4], strides[4], explicit_paddings[8];
  enum ocl_padding padding;
  /* Batch norm. */
  float epsilon, factor;
  bool training;
};

/* pool.cl's pool_t: 8-byte members only. */
struct pool_args {
  cl_long batch, rows, cols, depth;
  cl_long out_rows, out_cols;
  cl_long window_rows, window_cols;
  cl_long stride_rows, stride_cols;
  cl_long pad_top, pad_left;
  cl_long channels_first;
  cl_long count;
};

/* The fixed work-group size of the batch-norm kernels, one group per
 * channel (PoCL compiles a kernel again for each new local size). */
#define BN_GROUP_SIZE 128

/* ---- Attributes ---------------------------------------------------------- */

/* Reads an int list attribute into vals[max]; returns its length (values
 * read only when it fits), or -1 with the status set. */
static int get_int_list(TF_OpKernelConstruction *ctx, const char *name,
                        int64_t *vals, int max, TF_Status *status)
{
  int32_t size = 0, total = 0;
  if (ocl_tf.OpKernelConstruction_GetAttrSize == NULL ||
      ocl_tf.OpKernelConstruction_GetAttrInt64List == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks list attributes in its C API");
    return -1;
  }
  ocl_tf.OpKernelConstruction_GetAttrSize(ctx, name, &size, &total, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return -1;
  if (size > 0 && size <= max)
    ocl_tf.OpKernelConstruction_GetAttrInt64List(ctx, name, vals, size,
                                                 status);
  return ocl_tf.GetCode(status) == TF_OK ? size : -1;
}

/* A string attribute into buf (NUL-terminated); `fallback` when absent. */
static void get_string(TF_OpKernelConstruction *ctx, const char *name,
                       char *buf, size_t len, const char *fallback,
                       TF_Status *status)
{
  memset(buf, 0, len);
  if (ocl_tf.OpKernelConstruction_GetAttrString != NULL)
    ocl_tf.OpKernelConstruction_GetAttrString(ctx, name, buf, len - 1, status);
  if (ocl_tf.OpKernelConstruction_GetAttrString == NULL ||
      ocl_tf.GetCode(status) != TF_OK) {
    ocl_set_ok(status);
    snprintf(buf, len, "%s", fallback);
  }
}

static bool create_pool(TF_OpKernelConstruction *ctx, struct pool_kernel *k,
                        TF_Status *status)
{
  char padding[16];
  int num_explicit = 0;
  int ksize_len = get_int_list(ctx, "ksize", k->ksize, 4, status);
  if (ksize_len < 0)
    return false;
  int strides_len = get_int_list(ctx, "strides", k->strides, 4, status);
  if (strides_len < 0)
    return false;
  get_string(ctx, "padding", padding, sizeof(padding), "", status);
  bool known = ocl_padding_parse(padding, &k->padding);
  if (known && k->padding != OCL_PADDING_EXPLICIT) {
    /* VALID or SAME. */
  } else if (known &&
             (k->op->kind == MAX_POOL || k->op->kind == MAX_POOL_GRAD)) {
    num_explicit = get_int_list(ctx, "explicit_paddings",
                                k->explicit_paddings, 8, status);
    if (num_explicit < 0)
      return false;
  } else {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Value for attr 'padding' of \"%s\" is not in the list of "
                   "allowed values",
                   padding);
    return false;
  }
  return ocl_pool2d_check_attrs(k->ksize, ksize_len, k->strides, strides_len,
                                k->padding, k->explicit_paddings, num_explicit,
                                k->channels_first, status);
}

static bool create_batch_norm(TF_OpKernelConstruction *ctx,
                              struct pool_kernel *k, TF_Status *status)
{
  TF_Bool training = 1;
  k->epsilon = 1e-4f;
  k->factor = 1.0f;
  ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "epsilon", &k->epsilon,
                                           status);
  ocl_set_ok(status); /* absent: TensorFlow's default */
  if (k->op->kind == BATCH_NORM) {
    ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "exponential_avg_factor",
                                             &k->factor, status);
    ocl_set_ok(status);
  }
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "is_training", &training,
                                          status);
  ocl_set_ok(status);
  k->training = training != 0;
  return true;
}

static void *pool_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct pool_op *op = &pool_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct pool_kernel *k = calloc(1, sizeof(*k));
  char format[16];
  bool is_bn = op->kind == BATCH_NORM || op->kind == BATCH_NORM_GRAD;
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->storage = ocl_storage_of(k->dtype);
  get_string(ctx, "data_format", format, sizeof(format), "NHWC", status);
  if (strcmp(format, "NCHW") == 0 || (is_bn && strcmp(format, "NCDHW") == 0)) {
    k->channels_first = true;
  } else if (strcmp(format, "NHWC") != 0 &&
             !(is_bn && strcmp(format, "NDHWC") == 0)) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "Invalid data format");
    goto fail;
  }
  if (!(is_bn ? create_batch_norm(ctx, k, status)
              : create_pool(ctx, k, status)))
    goto fail;
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void pool_delete(void *kernel) { free(kernel); }

/* ---- Pooling ---------------------------------------------------------------- */

static bool same_dims(const int64_t *a, int a_rank, const int64_t *b,
                      int b_rank)
{
  if (a_rank != b_rank)
    return false;
  for (int i = 0; i < a_rank; i++)
    if (a[i] != b[i])
      return false;
  return true;
}

/* INVALID_ARGUMENT "Expected <what> shape to be [..], but got [..]" unless
 * t has the forward output's shape. */
static bool check_output_shape(const struct ocl_pool2d *p, const TF_Tensor *t,
                               const char *what, TF_Status *status)
{
  int64_t dims[OCL_MAX_DIMS];
  char want[160], got[160];
  int rank = ocl_tensor_dims(t, dims, status);
  if (rank < 0)
    return false;
  if (same_dims(dims, rank, p->out_dims, 4))
    return true;
  ocl_shape_format(p->out_dims, 4, want, sizeof(want));
  ocl_shape_format(dims, rank, got, sizeof(got));
  ocl_set_status(status, TF_INVALID_ARGUMENT,
                 "Expected %s shape to be %s, but got %s", what, want, got);
  return false;
}

static bool check_rank4(const TF_Tensor *t, const char *what,
                        TF_Status *status)
{
  if (ocl_tf.NumDims(t) == 4)
    return true;
  ocl_set_status(status, TF_INVALID_ARGUMENT, "%s must be 4-dimensional",
                 what);
  return false;
}

static bool pool_init(const struct pool_kernel *k, struct ocl_pool2d *p,
                      const int64_t *dims, int rank, TF_Status *status)
{
  return ocl_pool2d_init(p, dims, rank, k->ksize, k->strides, k->padding,
                         k->explicit_paddings, k->channels_first, status);
}

static void pool_args_init(struct pool_args *a, const struct ocl_pool2d *p,
                           int64_t count)
{
  *a = (struct pool_args){
      .batch = p->batch,
      .rows = p->rows,
      .cols = p->cols,
      .depth = p->depth,
      .out_rows = p->out_rows,
      .out_cols = p->out_cols,
      .window_rows = p->window_rows,
      .window_cols = p->window_cols,
      .stride_rows = p->stride_rows,
      .stride_cols = p->stride_cols,
      .pad_top = p->pad_top,
      .pad_left = p->pad_left,
      .channels_first = p->channels_first,
      .count = count,
  };
}

/* Validates, allocates output 0 and enqueues one pooling op. */
static bool run_pool(TF_OpKernelContext *ctx, const struct pool_kernel *k,
                     TF_Tensor **in, TF_Tensor **out, TF_Status *status)
{
  int64_t dims[OCL_MAX_DIMS];
  struct ocl_pool2d p;
  enum pool_kind kind = k->op->kind;
  int rank;

  /* The dims of the pooled image: the input, or the one AvgPoolGrad names. */
  if (kind == AVG_POOL_GRAD) {
    const TF_Tensor *shape = in[0];
    if (ocl_tf.NumDims(shape) != 1 ||
        ocl_tf.TensorElementCount(shape) != 4) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "out_backprop must be 1-dimensional and 4 elements");
      return false;
    }
    if (!check_rank4(in[1], "out_backprop", status))
      return false;
    const int32_t *v = ocl_host_data(shape);
    for (int i = 0; i < 4; i++) {
      if (v[i] < 0) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Dimension %d must be >= 0", (int)v[i]);
        return false;
      }
      dims[i] = v[i];
    }
    rank = 4;
  } else {
    if (kind == MAX_POOL_GRAD &&
        (!check_rank4(in[0], "tensor_in", status) ||
         !check_rank4(in[1], "tensor_out", status) ||
         !check_rank4(in[2], "out_backprop", status)))
      return false;
    rank = ocl_tensor_dims(in[0], dims, status);
    if (rank < 0)
      return false;
  }

  /* MaxPoolGrad allocates before validating, so an empty input passes. */
  bool is_grad = kind == MAX_POOL_GRAD || kind == AVG_POOL_GRAD;
  if (kind == MAX_POOL_GRAD) {
    *out = ocl_tf.AllocateOutput(ctx, 0, k->dtype, dims, rank, 0, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      return false;
    if (ocl_shape_elements(dims, rank) == 0)
      return true;
  }
  if (!pool_init(k, &p, dims, rank, status))
    return false;
  if (kind == MAX_POOL_GRAD &&
      (!check_output_shape(&p, in[1], "orig_output", status) ||
       !check_output_shape(&p, in[2], "grad", status)))
    return false;
  if (kind == AVG_POOL_GRAD && !check_output_shape(&p, in[1], "grad", status))
    return false;
  if (kind != MAX_POOL_GRAD) {
    *out = is_grad ? ocl_tf.AllocateOutput(ctx, 0, k->dtype, dims, 4, 0,
                                           status)
                   : ocl_tf.AllocateOutput(ctx, 0, k->dtype, p.out_dims, 4, 0,
                                           status);
    if (ocl_tf.GetCode(status) != TF_OK)
      return false;
  }

  int64_t count = is_grad ? p.in_elements : p.out_elements;
  if (count == 0)
    return true;
  struct pool_args args;
  pool_args_init(&args, &p, count);
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    return false;
  /* An empty gradient (windows wider than the image) has no device buffer;
   * nothing reads it then, so the output stands in. */
  const TF_Tensor *dy = NULL;
  if (is_grad) {
    dy = in[kind == MAX_POOL_GRAD ? 2 : 1];
    if (p.out_elements == 0)
      dy = *out;
  }
  switch (kind) {
  case MAX_POOL:
  case AVG_POOL: {
    const struct ocl_arg argv[] = {OCL_TENSOR(in[0]), OCL_TENSOR(*out),
                                   OCL_BYTES(&args, sizeof(args))};
    return ocl_enqueue_1d(&launch, &families[k->storage],
                          kind == MAX_POOL ? "max_pool" : "avg_pool",
                          (size_t)count, argv, 3, status);
  }
  case MAX_POOL_GRAD: {
    const struct ocl_arg argv[] = {OCL_TENSOR(in[0]), OCL_TENSOR(dy),
                                   OCL_TENSOR(*out),
                                   OCL_BYTES(&args, sizeof(args))};
    return ocl_enqueue_1d(&launch, &families[k->storage], "max_pool_grad",
                          (size_t)count, argv, 4, status);
  }
  default: {
    const struct ocl_arg argv[] = {OCL_TENSOR(dy), OCL_TENSOR(*out),
                                   OCL_BYTES(&args, sizeof(args))};
    return ocl_enqueue_1d(&launch, &families[k->storage], "avg_pool_grad",
                          (size_t)count, argv, 3, status);
  }
  }
}

/* ---- Batch normalisation ----------------------------------------------- */

/* INVALID_ARGUMENT "<what> must be <n>-dimensional[2,3]" (TensorFlow glues
 * the shape on) unless t's rank is allowed. */
static bool check_bn_rank(const TF_Tensor *t, const char *what, bool image,
                          TF_Status *status)
{
  int64_t dims[OCL_MAX_DIMS];
  char shape[160];
  int rank = ocl_tensor_dims(t, dims, status);
  if (rank < 0)
    return false;
  if (image ? (rank == 4 || rank == 5) : rank == 1)
    return true;
  ocl_shape_format(dims, rank, shape, sizeof(shape));
  ocl_set_status(status, TF_INVALID_ARGUMENT, "%s must be %s-dimensional%s",
                 what, image ? "4 or 5" : "1", shape);
  return false;
}

static bool check_channels(const TF_Tensor *t, const char *prefix,
                           const char *what, int64_t channels,
                           TF_Status *status)
{
  int64_t n = ocl_tf.TensorElementCount(t);
  if (n == channels)
    return true;
  ocl_set_status(status, TF_INVALID_ARGUMENT,
                 "%s%s must have the same number of elements as the channels "
                 "of x, got %lld and %lld",
                 prefix, what, (long long)n, (long long)channels);
  return false;
}

/* x as [outer, depth, inner]: the channel count, the elements reduced per
 * channel (rest) and the inner extent. */
static void bn_layout(const struct pool_kernel *k, const int64_t *dims,
                      int rank, int64_t *depth, int64_t *rest, int64_t *inner)
{
  int c = k->channels_first ? 1 : rank - 1;
  *depth = dims[c];
  *inner = 1;
  int64_t outer = 1;
  for (int i = 0; i < rank; i++) {
    if (i < c)
      outer *= dims[i];
    else if (i > c)
      *inner *= dims[i];
  }
  *rest = outer * *inner;
}

static size_t bn_group_size(const struct ocl_device *device)
{
  size_t max = ocl_device_max_work_group_size(device), size = BN_GROUP_SIZE;
  while (size > 1 && size > max)
    size /= 2;
  return size;
}

/* A tensor for a kernel argument: an empty one has no device buffer and is
 * never read, so `stand_in` takes its place. */
static const TF_Tensor *or_stand_in(const TF_Tensor *t,
                                    const TF_Tensor *stand_in)
{
  return ocl_tf.TensorElementCount(t) == 0 ? stand_in : t;
}

static bool run_batch_norm(TF_OpKernelContext *ctx,
                           const struct pool_kernel *k, TF_Tensor **in,
                           TF_Tensor **out, TF_Status *status)
{
  int64_t dims[OCL_MAX_DIMS], depth, rest, inner;
  if (!check_bn_rank(in[0], "input", true, status) ||
      !check_bn_rank(in[1], "scale", false, status) ||
      !check_bn_rank(in[2], "offset", false, status) ||
      !check_bn_rank(in[3], "estimated_mean", false, status) ||
      !check_bn_rank(in[4], "estimated_variance", false, status))
    return false;
  int rank = ocl_tensor_dims(in[0], dims, status);
  bn_layout(k, dims, rank, &depth, &rest, &inner);
  if (!check_channels(in[1], "", "scale", depth, status) ||
      !check_channels(in[2], "", "offset", depth, status))
    return false;
  if (!k->training || k->factor != 1.0f) {
    const char *prefix = k->training ? "When exponential_avg_factor != 1, "
                                     : "When is_training=false, ";
    if (!check_channels(in[3], prefix, "mean", depth, status) ||
        !check_channels(in[4], prefix, "variance", depth, status))
      return false;
  }

  const int64_t none = 0;
  for (int i = 0; i < 6; i++) {
    bool image = i == 0;
    out[i] = ocl_tf.AllocateOutput(ctx, i, image ? k->dtype : TF_FLOAT,
                                   image ? dims : i == 5 ? &none : &depth,
                                   image ? rank : 1, 0, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      return false;
  }

  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    return false;
  if (depth == 0)
    return true;
  size_t local = bn_group_size(launch.device);
  size_t global = (size_t)depth * local;
  const TF_Tensor *any = in[1];
  const struct ocl_arg argv[] = {
      OCL_TENSOR(or_stand_in(in[0], any)),
      OCL_TENSOR(in[1]),
      OCL_TENSOR(in[2]),
      OCL_TENSOR(or_stand_in(in[3], any)),
      OCL_TENSOR(or_stand_in(in[4], any)),
      OCL_TENSOR(or_stand_in(out[0], any)),
      OCL_TENSOR(out[1]),
      OCL_TENSOR(out[2]),
      OCL_TENSOR(out[3]),
      OCL_TENSOR(out[4]),
      OCL_LONG(depth),
      OCL_LONG(rest),
      OCL_LONG(inner),
      OCL_FLOAT(k->epsilon),
      OCL_FLOAT(k->factor),
      OCL_INT(k->training),
      OCL_LOCAL(sizeof(float) * local),
  };
  return ocl_enqueue(&launch, &families[k->storage], "batch_norm", 1, &global,
                     &local, argv, (int)(sizeof(argv) / sizeof(argv[0])),
                     status);
}

static bool run_batch_norm_grad(TF_OpKernelContext *ctx,
                                const struct pool_kernel *k, TF_Tensor **in,
                                TF_Tensor **out, TF_Status *status)
{
  int64_t dims[OCL_MAX_DIMS], dy_dims[OCL_MAX_DIMS], depth, rest, inner;
  if (!check_bn_rank(in[0], "input", true, status) ||
      !check_bn_rank(in[1], "input", true, status) ||
      !check_bn_rank(in[2], "scale", false, status) ||
      !check_bn_rank(in[3], "saved mean", false, status) ||
      !check_bn_rank(in[4], "saved variance", false, status))
    return false;
  int dy_rank = ocl_tensor_dims(in[0], dy_dims, status);
  int rank = ocl_tensor_dims(in[1], dims, status);
  if (!same_dims(dims, rank, dy_dims, dy_rank)) {
    char x_shape[160], dy_shape[160];
    ocl_shape_format(dims, rank, x_shape, sizeof(x_shape));
    ocl_shape_format(dy_dims, dy_rank, dy_shape, sizeof(dy_shape));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "x and y_backprop must have same shape, but x has shape %s "
                   "and y_backprop has shape %s",
                   x_shape, dy_shape);
    return false;
  }
  bn_layout(k, dims, rank, &depth, &rest, &inner);
  if (!check_channels(in[2], "", "scale", depth, status) ||
      !check_channels(in[3], "", "reserve_space_1", depth, status) ||
      !check_channels(in[4], "", "reserve_space_2", depth, status))
    return false;

  int64_t zero = 0;
  for (int i = 0; i < 5; i++) {
    bool image = i == 0;
    out[i] = ocl_tf.AllocateOutput(ctx, i, image ? k->dtype : TF_FLOAT,
                                   image ? dims : i < 3 ? &depth : &zero,
                                   image ? rank : 1, 0, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      return false;
  }
  if (depth == 0)
    return true;

  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    return false;
  size_t local = bn_group_size(launch.device);
  size_t global = (size_t)depth * local;
  const TF_Tensor *any = in[2];
  const struct ocl_arg argv[] = {
      OCL_TENSOR(or_stand_in(in[0], any)),
      OCL_TENSOR(or_stand_in(in[1], any)),
      OCL_TENSOR(in[2]),
      OCL_TENSOR(in[3]),
      OCL_TENSOR(in[4]),
      OCL_TENSOR(or_stand_in(out[0], any)),
      OCL_TENSOR(out[1]),
      OCL_TENSOR(out[2]),
      OCL_LONG(depth),
      OCL_LONG(rest),
      OCL_LONG(inner),
      OCL_FLOAT(k->epsilon),
      OCL_INT(k->training),
      OCL_LOCAL(sizeof(float) * local),
  };
  return ocl_enqueue(&launch, &families[k->storage], "batch_norm_grad", 1,
                     &global, &local, argv,
                     (int)(sizeof(argv) / sizeof(argv[0])), status);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

#define MAX_INPUTS 6
#define MAX_OUTPUTS 6

static void pool_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct pool_kernel *k = kernel;
  TF_Status *status = ocl_tf.NewStatus();
  TF_Tensor *in[MAX_INPUTS] = {NULL}, *out[MAX_OUTPUTS] = {NULL};

  if (!ocl_get_inputs(ctx, in, k->op->num_inputs, status))
    goto done;
  switch (k->op->kind) {
  case BATCH_NORM:
    run_batch_norm(ctx, k, in, out, status);
    break;
  case BATCH_NORM_GRAD:
    run_batch_norm_grad(ctx, k, in, out, status);
    break;
  default:
    run_pool(ctx, k, in, out, status);
    break;
  }
done:
  ocl_delete_tensors(out, MAX_OUTPUTS);
  ocl_delete_tensors(in, MAX_INPUTS);
  ocl_compute_done(ctx, status);
}

#define NUM_POOL_OPS ((int)(sizeof(pool_ops) / sizeof(pool_ops[0])))
_Static_assert(NUM_POOL_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per pool op");
OCL_FAMILY_CREATES(pool, pool_create);

/* ---- Registration -------------------------------------------------------- */

void ocl_register_pool_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF};
  for (int i = 0; i < NUM_POOL_OPS; i++) {
    const struct pool_op *op = &pool_ops[i];
    bool is_bn = op->kind == BATCH_NORM || op->kind == BATCH_NORM_GRAD;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = pool_creates[i],
          .compute = pool_compute,
          .destroy = pool_delete,
          .type_attrs = {"T", is_bn ? "U" : NULL},
          .types = {types[t], TF_FLOAT},
          .host_args = op->host_args,
      });
    }
  }
}
