/* Pooling: MaxPool, MaxPoolV2, AvgPool, MaxPool3D, AvgPool3D and their
 * gradients (MaxPoolGrad[V2], AvgPoolGrad, MaxPool3DGrad, AvgPool3DGrad)
 * and second gradients (MaxPoolGradGrad[V2], MaxPool3DGradGrad), channels
 * last or first, in the dtypes TensorFlow's GPU kernels take: half,
 * bfloat16, float and (2-D) double. Batch normalisation is batch_norm.c.
 *
 * Semantics are TensorFlow's CPU kernels' (pooling_ops_common.cc,
 * maxpooling_op.cc, avgpooling_op.cc, pooling_ops_3d.cc), which take only
 * NHWC/NDHWC; the same arithmetic runs on NCHW/NCDHW, as TensorFlow's GPU
 * kernels allow. In particular MaxPoolGrad routes each window's gradient
 * to its first maximum, MaxPool3DGrad to every element within 1e-5 of it
 * (both as the CPU kernels do). Depthwise pooling (a depth window other
 * than 1) is UNIMPLEMENTED.
 *
 * MaxPoolWithArgmax, MaxPoolGradWithArgmax and MaxPoolGradGradWithArgmax
 * (NHWC, an int64 argmax as TensorFlow's GPU kernels take) run on the same
 * geometry; LRN and LRNGrad (across channels, float and half) are at the
 * end of the file.
 *
 * A 2-D problem is a 3-D one with a single plane: pool.cl has one kernel
 * per operation, built per dtype and per index width (32-bit whenever every
 * index fits). The geometry of 2-D ops is ocl_pool2d_init's
 * (conv_geometry.h), of 3-D ones pool3d_init's below. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_geometry.h"
#include "fused_attrs.h"
#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_pool[];

enum pool_type { PT_FLOAT, PT_HALF, PT_BFLOAT16, PT_DOUBLE, NUM_POOL_TYPES };
enum { IDX32, IDX64, NUM_WIDTHS };

OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_POOL_TYPES][NUM_WIDTHS] = {
    [PT_FLOAT] = {{"pool_float_32", ocl_cl_source_pool,
                   "-DT=float -DT_IS_FLOAT -DIDX=int"},
                  {"pool_float_64", ocl_cl_source_pool,
                   "-DT=float -DT_IS_FLOAT -DIDX=long"}},
    [PT_HALF] = {{"pool_half_32", ocl_cl_source_pool,
                  "-DT=half -DT_IS_HALF -DIDX=int"},
                 {"pool_half_64", ocl_cl_source_pool,
                  "-DT=half -DT_IS_HALF -DIDX=long"}},
    [PT_BFLOAT16] = {{"pool_bfloat16_32", ocl_cl_source_pool,
                      "-DT=ushort -DT_IS_BFLOAT16 -DIDX=int"},
                     {"pool_bfloat16_64", ocl_cl_source_pool,
                      "-DT=ushort -DT_IS_BFLOAT16 -DIDX=long"}},
    [PT_DOUBLE] = {{"pool_double_32", ocl_cl_source_pool,
                    "-DT=double -DT_IS_DOUBLE -DIDX=int"},
                   {"pool_double_64", ocl_cl_source_pool,
                    "-DT=double -DT_IS_DOUBLE -DIDX=long"}},
};

enum pool_kind { MAX_POOL, AVG_POOL, MAX_POOL_GRAD, AVG_POOL_GRAD,
                 MAX_POOL_GRAD_GRAD, MAX_POOL_ARGMAX, MAX_POOL_GRAD_ARGMAX,
                 MAX_POOL_GRAD_GRAD_ARGMAX };

struct pool_op {
  const char *op;
  enum pool_kind kind;
  int spatial;  /* 2 or 3 */
  bool v2;      /* ksize and strides are (host) inputs */
  int num_inputs;
  const char *const *host_args;
};

static const char *const avg_grad_host[] = {"orig_input_shape", NULL};
static const char *const v2_host[] = {"ksize", "strides", NULL};

static const struct pool_op pool_ops[] = {
    {"MaxPool", MAX_POOL, 2, false, 1, NULL},
    {"MaxPoolV2", MAX_POOL, 2, true, 3, v2_host},
    {"AvgPool", AVG_POOL, 2, false, 1, NULL},
    {"MaxPoolGrad", MAX_POOL_GRAD, 2, false, 3, NULL},
    {"MaxPoolGradV2", MAX_POOL_GRAD, 2, true, 5, v2_host},
    {"AvgPoolGrad", AVG_POOL_GRAD, 2, false, 2, avg_grad_host},
    {"MaxPoolGradGrad", MAX_POOL_GRAD_GRAD, 2, false, 3, NULL},
    {"MaxPoolGradGradV2", MAX_POOL_GRAD_GRAD, 2, true, 5, v2_host},
    {"MaxPool3D", MAX_POOL, 3, false, 1, NULL},
    {"AvgPool3D", AVG_POOL, 3, false, 1, NULL},
    {"MaxPool3DGrad", MAX_POOL_GRAD, 3, false, 3, NULL},
    {"AvgPool3DGrad", AVG_POOL_GRAD, 3, false, 2, avg_grad_host},
    {"MaxPool3DGradGrad", MAX_POOL_GRAD_GRAD, 3, false, 3, NULL},
    {"MaxPoolWithArgmax", MAX_POOL_ARGMAX, 2, false, 1, NULL},
    {"MaxPoolGradWithArgmax", MAX_POOL_GRAD_ARGMAX, 2, false, 3, NULL},
    {"MaxPoolGradGradWithArgmax", MAX_POOL_GRAD_GRAD_ARGMAX, 2, false, 3,
     NULL},
};

#define NUM_POOL_OPS ((int)(sizeof(pool_ops) / sizeof(pool_ops[0])))

/* The pool.cl kernels an op launches, in order (MaxPoolGrad: two passes,
 * or the one of its third where windows do not overlap). */
#define NUM_STAGES 3
static const char *const stage_kernels[][NUM_STAGES] = {
    [MAX_POOL] = {"max_pool", NULL},
    [AVG_POOL] = {"avg_pool", NULL},
    [MAX_POOL_GRAD] = {"max_pool_argmax", "max_pool_grad",
                       "max_pool_grad_tiles"},
    [AVG_POOL_GRAD] = {"avg_pool_grad", NULL},
    [MAX_POOL_GRAD_GRAD] = {"max_pool_grad_grad", NULL},
    [MAX_POOL_ARGMAX] = {"max_pool_with_argmax", NULL},
    [MAX_POOL_GRAD_ARGMAX] = {"max_pool_grad_with_argmax", NULL},
    [MAX_POOL_GRAD_GRAD_ARGMAX] = {"max_pool_grad_grad_with_argmax", NULL},
};
/* MaxPool3DGrad's (TensorFlow's CPU semantics differ from MaxPoolGrad's). */
static const char *const near_grad_kernels[NUM_STAGES] = {"max_pool_grad_near",
                                                          NULL};

struct pool_kernel {
  const struct pool_op *op;
  TF_DataType dtype;
  bool channels_first;
  /* The *WithArgmax ops' include_batch_in_index. */
  bool with_batch;
  /* Attributes (V2 ops: from the inputs at compute time). */
  int64_t ksize[5], strides[5];
  int ksize_len, strides_len;
  enum ocl_padding padding;
  int64_t explicit_paddings[8];
  int num_explicit;
  /* MaxPoolGrad followed by the ReluGrad of its orig_input (the graph
   * pass's fusion, pass_fusion.c, attribute POOL_RELU_GRAD_ATTR): the
   * gradient times (orig_input > 0), as ReluGrad computes it. Only where
   * windows do not overlap: the one-pass kernel, which holds the window's
   * maximum, the orig_input there, when it writes. */
  bool relu_grad;
  /* TFOCL_INDEX_WIDTH=64 (read at create time): the 64-bit index variants
   * even where 32 bits do, so that tests reach them without 2^31-element
   * tensors. */
  bool force64;
  /* [index width][stage][GPU shape, CPU shape (_rows)]: the cl_kernels of
   * this op and dtype. */
  struct ocl_kernel kernels[NUM_WIDTHS][NUM_STAGES][2];
};

/* One pooling problem in three spatial axes (plane, row, column); 2-D has
 * one plane. */
struct pool_geom {
  bool channels_first;
  /* MaxPoolGrad's ReLU epilogue (pool_kernel.relu_grad). */
  bool relu_grad;
  int64_t batch, depth;
  int64_t in[3], out[3], win[3], stride[3], pad[3];
  int rank;
  int64_t in_dims[5], out_dims[5]; /* in the data format */
  int64_t in_elements, out_elements;
};

/* pool.cl's pool_t for each index width. */
/* One line per group of fields, as pool_t. */
/* clang-format off */
#define POOL_ARGS_FIELDS(type)                  \
  type batch, depth;                            \
  type in_p, in_h, in_w;                        \
  type out_p, out_h, out_w;                     \
  type win_p, win_h, win_w;                     \
  type str_p, str_h, str_w;                     \
  type pad_p, pad_h, pad_w;                     \
  type channels_first;                          \
  type relu_grad;                               \
  type count;
/* clang-format on */
struct pool_args32 {
  POOL_ARGS_FIELDS(cl_int)
};
struct pool_args64 {
  POOL_ARGS_FIELDS(cl_long)
};

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
  if (ocl_tf.GetCode(status) != TF_OK)
    return -1;
  /* TensorFlow reads ksize and strides as int32 lists and refuses what does
   * not fit; explicit_paddings are int64. */
  if (strcmp(name, "explicit_paddings") != 0) {
    for (int i = 0; i < size && i < max; i++) {
      if (vals[i] < INT32_MIN || vals[i] > INT32_MAX) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Attr %s has value %lld out of range for an int32",
                       name, (long long)vals[i]);
        return -1;
      }
    }
  }
  return size;
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

/* Index of a data format's 'N', 'C' and spatial axis s (0 = first) in a
 * shape or attribute of rank 2 + spatial. */
static int axis_c(bool channels_first, int spatial)
{
  return channels_first ? 1 : spatial + 1;
}
static int axis_s(bool channels_first, int s)
{
  return channels_first ? 2 + s : 1 + s;
}

/* The checks TensorFlow's 3-D pooling constructors make (pooling_ops_3d.cc),
 * in their order; `strides_word` is "stride" or "strides" as each says. */
static bool check_attrs_3d(const struct pool_kernel *k,
                           const char *strides_word, TF_Status *status)
{
  int c = axis_c(k->channels_first, 3);
  if (k->ksize_len != 5) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Sliding window ksize field must specify 5 dimensions");
    return false;
  }
  for (int i = 0; i < 5; i++) {
    /* Only the forward ops check this; a non-positive window means nothing
     * to the gradients either. */
    if (k->ksize[i] <= 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Sliding window ksize field must have non-negative "
                     "dimensions");
      return false;
    }
  }
  if (k->strides_len != 5) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Sliding window %s field must specify 5 dimensions",
                   strides_word);
    return false;
  }
  if (k->ksize[0] != 1 || k->strides[0] != 1) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "Pooling is not yet supported on the batch dimension.");
    return false;
  }
  if (k->ksize[c] != 1 || k->strides[c] != 1) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   k->op->kind == MAX_POOL_GRAD_GRAD
                       ? "MaxPooling3dGradGrad is not yet supported on the "
                         "depth dimension."
                       : "Pooling is not yet supported on the depth "
                         "dimension.");
    return false;
  }
  return true;
}

/* The 2-D attribute checks (pooling_ops_common.cc's and the ops'
 * constructors'), for attributes or, in the V2 ops, the ksize and strides
 * inputs. */
static bool check_attrs_2d(const struct pool_kernel *k,
                           const int64_t *ksize, int ksize_len,
                           const int64_t *strides, int strides_len,
                           TF_Status *status)
{
  /* The gradients' constructors say "strides" where ocl_pool2d_check_attrs
   * says "stride", and check ksize's length first. */
  enum pool_kind kind = k->op->kind;
  bool argmax = kind == MAX_POOL_ARGMAX || kind == MAX_POOL_GRAD_ARGMAX ||
                kind == MAX_POOL_GRAD_GRAD_ARGMAX;
  if (kind != MAX_POOL && kind != AVG_POOL && !argmax && ksize_len == 4 &&
      strides_len != 4) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Sliding window strides field must specify 4 dimensions");
    return false;
  }
  /* MaxPool's and AvgPool's own words for a window that is not positive. */
  if ((kind == MAX_POOL || kind == AVG_POOL) && ksize_len == 4) {
    for (int i = 0; i < 4; i++) {
      if (ksize[i] > 0)
        continue;
      if (kind == AVG_POOL)
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "ksize must be a positive int32 value, got:%lld",
                       (long long)ksize[i]);
      else if (k->op->v2)
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Sliding window ksize must be positive.");
      else
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Sliding window ksize must be positive. The specified "
                       "or inferred ksize is: %lld,%lld,%lld,%lld",
                       (long long)ksize[0], (long long)ksize[1],
                       (long long)ksize[2], (long long)ksize[3]);
      return false;
    }
  }
  if (!ocl_pool2d_check_attrs(ksize, ksize_len, strides, strides_len,
                              k->padding, k->explicit_paddings,
                              k->num_explicit, k->channels_first, status))
    return false;
  int c = axis_c(k->channels_first, 2);
  /* The max gradients refuse a window or stride across depth at once (the
   * V2 grad-of-grad in MaxPoolGrad's words, as TensorFlow has it); average
   * pooling refuses a depth window as non-spatial. */
  if ((kind == MAX_POOL_GRAD || kind == MAX_POOL_GRAD_GRAD) &&
      (ksize[c] != 1 || strides[c] != 1)) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "%s is not yet supported on the depth dimension.",
                   kind == MAX_POOL_GRAD || k->op->v2 ? "MaxPoolingGrad"
                                                      : "MaxPoolingGradGrad");
    return false;
  }
  if ((kind == AVG_POOL || kind == AVG_POOL_GRAD) && ksize[c] != 1 &&
      ksize[axis_s(k->channels_first, 0)] == 1 &&
      ksize[axis_s(k->channels_first, 1)] == 1) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "Non-spatial pooling is not yet supported. Volunteers? :)");
    return false;
  }
  return true;
}

static bool create_attrs(TF_OpKernelConstruction *ctx, struct pool_kernel *k,
                         TF_Status *status)
{
  const struct pool_op *op = k->op;
  char padding[16];
  get_string(ctx, "padding", padding, sizeof(padding), "", status);
  bool known = ocl_padding_parse(padding, &k->padding);
  bool explicit_ok = op->spatial == 2 && !op->v2 &&
                     (op->kind == MAX_POOL || op->kind == MAX_POOL_GRAD);
  if (!known || (k->padding == OCL_PADDING_EXPLICIT && !explicit_ok)) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Value for attr 'padding' of \"%s\" is not in the list of "
                   "allowed values",
                   padding);
    return false;
  }
  if (k->padding == OCL_PADDING_EXPLICIT) {
    k->num_explicit = get_int_list(ctx, "explicit_paddings",
                                   k->explicit_paddings, 8, status);
    if (k->num_explicit < 0)
      return false;
  }
  if (op->v2)
    return true;
  int max = op->spatial + 2;
  k->ksize_len = get_int_list(ctx, "ksize", k->ksize, max, status);
  if (k->ksize_len < 0)
    return false;
  k->strides_len = get_int_list(ctx, "strides", k->strides, max, status);
  if (k->strides_len < 0)
    return false;
  if (op->spatial == 3)
    return check_attrs_3d(k,
                          op->kind == MAX_POOL_GRAD_GRAD ? "strides" : "stride",
                          status);
  return check_attrs_2d(k, k->ksize, k->ksize_len, k->strides,
                        k->strides_len, status);
}

static enum pool_type pool_type_of(TF_DataType dtype)
{
  switch (dtype) {
  case TF_HALF: return PT_HALF;
  case TF_BFLOAT16: return PT_BFLOAT16;
  case TF_DOUBLE: return PT_DOUBLE;
  default: return PT_FLOAT;
  }
}

static void *pool_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct pool_op *op = &pool_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct pool_kernel *k = calloc(1, sizeof(*k));
  char format[16];
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  get_string(ctx, "data_format", format, sizeof(format),
             op->spatial == 3 ? "NDHWC" : "NHWC", status);
  if (strcmp(format, op->spatial == 3 ? "NCDHW" : "NCHW") == 0) {
    k->channels_first = true;
  } else if (strcmp(format, op->spatial == 3 ? "NDHWC" : "NHWC") != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "Invalid data format");
    goto fail;
  }
  if (!create_attrs(ctx, k, status))
    goto fail;
  if (op->kind == MAX_POOL_ARGMAX || op->kind == MAX_POOL_GRAD_ARGMAX ||
      op->kind == MAX_POOL_GRAD_GRAD_ARGMAX) {
    TF_Bool with_batch = 0;
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "include_batch_in_index",
                                            &with_batch, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
    k->with_batch = with_batch;
  }
  /* An attribute only the graph pass sets: absent (the status says so)
   * is false. */
  TF_Bool relu_grad = 0;
  TF_Status *absent = ocl_tf.NewStatus();
  if (absent == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, POOL_RELU_GRAD_ATTR, &relu_grad,
                                          absent);
  k->relu_grad = ocl_tf.GetCode(absent) == TF_OK && relu_grad;
  ocl_tf.DeleteStatus(absent);
  if (k->relu_grad &&
      (op->kind != MAX_POOL_GRAD || op->v2 || op->spatial != 2)) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: attribute " POOL_RELU_GRAD_ATTR
                   " is MaxPoolGrad's only",
                   op->op);
    goto fail;
  }
  k->force64 = ocl_config()->hooks.index64;
  enum pool_type type = pool_type_of(k->dtype);
  const char *const *stages = stage_kernels[op->kind];
  if (op->kind == MAX_POOL_GRAD && op->spatial == 3)
    stages = near_grad_kernels;
  for (int w = 0; w < NUM_WIDTHS; w++)
    for (int s = 0; s < NUM_STAGES && stages[s] != NULL; s++) {
      ocl_kernel_init(&k->kernels[w][s][0], &programs[type][w], stages[s]);
      ocl_kernel_initf(&k->kernels[w][s][1], &programs[type][w], "%s_rows",
                       stages[s]);
    }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void pool_delete(void *kernel) { free(kernel); }

/* ---- Geometry ------------------------------------------------------------- */

/* A 2-D problem (ocl_pool2d_init's checks and messages) as a 3-D one. */
static bool geom_2d(struct pool_geom *g, const struct pool_kernel *k,
                    const int64_t *ksize, const int64_t *strides,
                    const int64_t *dims, int rank, TF_Status *status)
{
  struct ocl_pool2d p;
  if (!ocl_pool2d_init(&p, dims, rank, ksize, strides, k->padding,
                       k->explicit_paddings, k->channels_first, status))
    return false;
  *g = (struct pool_geom){
      .channels_first = k->channels_first,
      .batch = p.batch,
      .depth = p.depth,
      .in = {1, p.rows, p.cols},
      .out = {1, p.out_rows, p.out_cols},
      .win = {1, p.window_rows, p.window_cols},
      .stride = {1, p.stride_rows, p.stride_cols},
      .pad = {0, p.pad_top, p.pad_left},
      .rank = 4,
      .in_elements = p.in_elements,
      .out_elements = p.out_elements,
  };
  memcpy(g->in_dims, dims, sizeof(int64_t) * 4);
  memcpy(g->out_dims, p.out_dims, sizeof(p.out_dims));
  return true;
}

/* Get3dOutputSizeV2 (pooling_ops_3d.cc, columns first) or, for
 * MaxPool3DGradGrad, Pool3dParameters (planes first): dims of rank 5 (the
 * caller checks); the first axis that fails gives the message. */
static bool geom_3d(struct pool_geom *g, const struct pool_kernel *k,
                    const int64_t *dims, TF_Status *status)
{
  bool cf = k->channels_first;
  memset(g, 0, sizeof(*g));
  g->channels_first = cf;
  g->batch = dims[0];
  g->depth = dims[axis_c(cf, 3)];
  for (int s = 0; s < 3; s++) {
    g->in[s] = dims[axis_s(cf, s)];
    g->win[s] = k->ksize[axis_s(cf, s)];
    g->stride[s] = k->strides[axis_s(cf, s)];
  }
  bool planes_first = k->op->kind == MAX_POOL_GRAD_GRAD;
  for (int i = 0; i < 3; i++) {
    int s = planes_first ? i : 2 - i;
    int64_t after;
    if (!ocl_windowed_output_size(g->in[s], g->win[s], 1, g->stride[s],
                                  k->padding, &g->out[s], &g->pad[s], &after,
                                  status))
      return false;
  }
  g->rank = 5;
  memcpy(g->in_dims, dims, sizeof(int64_t) * 5);
  g->out_dims[0] = g->batch;
  g->out_dims[axis_c(cf, 3)] = g->depth;
  for (int s = 0; s < 3; s++)
    g->out_dims[axis_s(cf, s)] = g->out[s];
  g->in_elements = ocl_shape_elements(g->in_dims, 5);
  g->out_elements = ocl_shape_elements(g->out_dims, 5);
  return true;
}

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
 * t has shape `want`. */
static bool check_shape(struct ocl_op *op, const TF_Tensor *t,
                        const int64_t *want, int want_rank, const char *what)
{
  int64_t dims[OCL_MAX_DIMS];
  char w[160], got[160];
  int rank = ocl_op_dims(op, t, dims);
  if (rank < 0)
    return false;
  if (same_dims(dims, rank, want, want_rank))
    return true;
  ocl_shape_format(want, want_rank, w, sizeof(w));
  ocl_shape_format(dims, rank, got, sizeof(got));
  return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                     "Expected %s shape to be %s, but got %s", what, w, got);
}

static bool check_rank(struct ocl_op *op, const TF_Tensor *t, int rank,
                       const char *what)
{
  if (ocl_tf.NumDims(t) == rank)
    return true;
  return ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s must be %d-dimensional",
                     what, rank);
}

/* The V2 ops' ksize and strides inputs, checked as the ops' Compute does. */
static bool read_v2_attrs(struct ocl_op *op, const struct pool_kernel *k,
                          const TF_Tensor *ksize_t, const TF_Tensor *strides_t,
                          int64_t *ksize, int64_t *strides)
{
  int64_t nk = ocl_tf.TensorElementCount(ksize_t);
  int64_t ns = ocl_tf.TensorElementCount(strides_t);
  for (int64_t i = 0; i < nk && i < 4; i++)
    ksize[i] = ocl_host_int(ksize_t, i);
  for (int64_t i = 0; i < ns && i < 4; i++)
    strides[i] = ocl_host_int(strides_t, i);
  if (nk != 4)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Sliding window ksize field must specify 4 dimensions");
  if (ns != 4)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Sliding window %s field must specify 4 dimensions",
                       k->op->kind == MAX_POOL ? "stride" : "strides");
  return check_attrs_2d(k, ksize, 4, strides, 4, op->status);
}

/* ---- Launching ---------------------------------------------------------- */

/* Whether every index (and every intermediate of pool.cl's index
 * arithmetic: an element count plus a window) fits in a 32-bit int. */
static bool fits_32(const struct pool_geom *g)
{
  int64_t limit = INT32_MAX / 2;
  if (g->in_elements > limit || g->out_elements > limit)
    return false;
  for (int a = 0; a < 3; a++)
    if (g->in[a] + g->win[a] + g->pad[a] + g->stride[a] > limit ||
        g->out[a] * g->stride[a] > limit)
      return false;
  return true;
}

static void fill_args32(struct pool_args32 *a, const struct pool_geom *g,
                        int64_t count)
{
  /* clang-format off */
  *a = (struct pool_args32){
      (cl_int)g->batch, (cl_int)g->depth,
      (cl_int)g->in[0], (cl_int)g->in[1], (cl_int)g->in[2],
      (cl_int)g->out[0], (cl_int)g->out[1], (cl_int)g->out[2],
      (cl_int)g->win[0], (cl_int)g->win[1], (cl_int)g->win[2],
      (cl_int)g->stride[0], (cl_int)g->stride[1], (cl_int)g->stride[2],
      (cl_int)g->pad[0], (cl_int)g->pad[1], (cl_int)g->pad[2],
      (cl_int)g->channels_first, (cl_int)g->relu_grad, (cl_int)count,
  };
  /* clang-format on */
}

static void fill_args64(struct pool_args64 *a, const struct pool_geom *g,
                        int64_t count)
{
  /* clang-format off */
  *a = (struct pool_args64){
      g->batch, g->depth,
      g->in[0], g->in[1], g->in[2],
      g->out[0], g->out[1], g->out[2],
      g->win[0], g->win[1], g->win[2],
      g->stride[0], g->stride[1], g->stride[2],
      g->pad[0], g->pad[1], g->pad[2],
      g->channels_first, g->relu_grad, count,
  };
  /* clang-format on */
}

/* Enqueues stage `stage`, which writes `count` elements of the output
 * (forward) or of the input (`backward`), with tensors args[0..n) and the
 * geometry as the last argument: a work-item per element in the GPU
 * shape, per row of the image written in the CPU shape. */
static bool launch(struct ocl_op *op, struct pool_kernel *k, int stage,
                   const struct pool_geom *g, bool backward, int64_t count,
                   struct ocl_arg *args, int n)
{
  struct pool_args32 a32;
  struct pool_args64 a64;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  bool rows = info->cpu_shape;
  if (rows) {
    /* Rows of the written image: its columns (and, channels last, its
     * channels) are one work-item's. */
    const int64_t *e = backward ? g->in : g->out;
    count = count == 0 ? 0 : count / e[2] / (g->channels_first ? 1 : g->depth);
  }
  int width = fits_32(g) && !k->force64 ? IDX32 : IDX64;
  if (width == IDX32) {
    fill_args32(&a32, g, count);
    args[n] = OCL_BYTES(&a32, sizeof(a32));
  } else {
    fill_args64(&a64, g, count);
    args[n] = OCL_BYTES(&a64, sizeof(a64));
  }
  struct ocl_kernel *kernel = &k->kernels[width][stage][rows];
  if (rows)
    return ocl_launch_rows(op, kernel, (size_t)count, args, n + 1);
  return ocl_launch_1d(op, kernel, (size_t)count, args, n + 1);
}

/* double needs cl_khr_fp64 (TensorFlow registers these kernels for its
 * GPUs, which all have it). */
static bool check_dtype(struct ocl_op *op, const struct pool_kernel *k)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (k->dtype == TF_DOUBLE && !info->has_fp64)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "%s in float64 needs an OpenCL device with "
                       "cl_khr_fp64; OpenCL device %d has none",
                       k->op->op, info->ordinal);
  return true;
}

/* ---- Compute: forward ------------------------------------------------------ */

/* The pooled image's geometry from input 0's dims (and, for the V2 ops,
 * the ksize and strides inputs). */
static bool input_geom(struct ocl_op *op, const struct pool_kernel *k,
                       TF_Tensor *const *in, struct pool_geom *g)
{
  int64_t dims[OCL_MAX_DIMS], ksize[4], strides[4];
  int rank = ocl_op_dims(op, in[0], dims);
  if (rank < 0)
    return false;
  if (k->op->spatial == 3)
    return check_rank(op, in[0], 5, "tensor_in") &&
           geom_3d(g, k, dims, op->status);
  if (k->op->v2) {
    int first = k->op->kind == MAX_POOL ? 1 : 3;
    if (!read_v2_attrs(op, k, in[first], in[first + 1], ksize, strides))
      return false;
    return geom_2d(g, k, ksize, strides, dims, rank, op->status);
  }
  return geom_2d(g, k, k->ksize, k->strides, dims, rank, op->status);
}

static void run_forward(struct ocl_op *op, struct pool_kernel *k,
                        TF_Tensor *const *in)
{
  struct pool_geom g;
  if (!input_geom(op, k, in, &g))
    return;
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, g.out_dims, g.rank);
  if (y == NULL || g.out_elements == 0 || !check_dtype(op, k))
    return;
  struct ocl_arg args[3] = {OCL_TENSOR(in[0]), OCL_TENSOR(y)};
  launch(op, k, 0, &g, false, g.out_elements, args, 2);
}

/* ---- Compute: gradients ------------------------------------------------------ */

static void run_max_grad(struct ocl_op *op, struct pool_kernel *k,
                         TF_Tensor *const *in)
{
  int rank = k->op->spatial + 2;
  int64_t dims[OCL_MAX_DIMS];
  struct pool_geom g;
  if (!check_rank(op, in[0], rank, "tensor_in") ||
      !check_rank(op, in[1], rank, "tensor_out") ||
      !check_rank(op, in[2], rank, "out_backprop") ||
      ocl_op_dims(op, in[0], dims) < 0)
    return;
  /* TensorFlow allocates before it validates, so an empty input passes
   * whatever the other shapes. */
  TF_Tensor *dx = ocl_op_output(op, 0, k->dtype, dims, rank);
  if (dx == NULL || ocl_shape_elements(dims, rank) == 0)
    return;
  if (!input_geom(op, k, in, &g) ||
      !check_shape(op, in[1], g.out_dims, rank, "orig_output") ||
      !check_shape(op, in[2], g.out_dims, rank, "grad") || !check_dtype(op, k))
    return;
  if (k->op->spatial == 3) {
    /* Every element within 1e-5 of its window's maximum: one pass. */
    struct ocl_arg args[5] = {OCL_TENSOR(in[0]), OCL_TENSOR(in[1]),
                              OCL_TENSOR(in[2]), OCL_TENSOR(dx)};
    launch(op, k, 0, &g, true, g.in_elements, args, 4);
    return;
  }
  if ((double)g.win[0] * (double)g.win[1] * (double)g.win[2] > INT32_MAX)
    return (void)ocl_op_fail(op, TF_UNIMPLEMENTED,
                             "MaxPoolGrad: a window of more than 2^31 "
                             "elements is not supported on OPENCL");
  if (g.out_elements == 0) {
    static const uint8_t zero = 0;
    ocl_op_fill(op, dx, 0, &zero, 1, ocl_tf.TensorByteSize(dx));
    return;
  }
  g.relu_grad = k->relu_grad;
  if (g.stride[1] >= g.win[1] && g.stride[2] >= g.win[2]) {
    struct ocl_arg args[4] = {OCL_TENSOR(in[0]), OCL_TENSOR(in[2]),
                              OCL_TENSOR(dx)};
    const struct ocl_device_info *info = ocl_op_info(op);
    /* The CPU shape's work-items are rows of windows (of the output). */
    if (info != NULL)
      launch(op, k, 2, &g, !info->cpu_shape,
             info->cpu_shape ? g.out_elements : g.in_elements, args, 3);
    return;
  }
  if (k->relu_grad)
    return (void)ocl_op_fail(op, TF_UNIMPLEMENTED,
                             "MaxPoolGrad with " POOL_RELU_GRAD_ATTR
                             " takes windows that do not overlap (strides "
                             "at least the window along rows and columns)");
  TF_Tensor *arg = ocl_op_temp(op, TF_INT32, g.out_elements);
  if (arg == NULL)
    return;
  struct ocl_arg a1[3] = {OCL_TENSOR(in[0]), OCL_TENSOR(arg)};
  if (!launch(op, k, 0, &g, false, g.out_elements, a1, 2))
    return;
  struct ocl_arg a2[4] = {OCL_TENSOR(arg), OCL_TENSOR(in[2]), OCL_TENSOR(dx)};
  launch(op, k, 1, &g, true, g.in_elements, a2, 3);
}

/* AvgPoolGrad's orig_input_shape and out_backprop, checked in
 * TensorFlow's order: `rank` values, out_backprop's rank, non-negative
 * values. */
static bool read_shape(struct ocl_op *op, const TF_Tensor *shape,
                       const TF_Tensor *dy, int rank, int64_t *dims)
{
  if (ocl_tf.NumDims(shape) != 1 ||
      ocl_tf.TensorElementCount(shape) != rank)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       rank == 4 ? "out_backprop must be 1-dimensional and 4 "
                                   "elements"
                                 : "tensor_in must be 1-dimensional and 5 "
                                   "elements");
  if (!check_rank(op, dy, rank, "out_backprop"))
    return false;
  for (int i = 0; i < rank; i++) {
    dims[i] = ocl_host_int(shape, i);
    if (dims[i] < 0)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "Expected a non-negative size, got %lld",
                         (long long)dims[i]);
  }
  return true;
}

static void run_avg_grad(struct ocl_op *op, struct pool_kernel *k,
                         TF_Tensor *const *in)
{
  int rank = k->op->spatial + 2;
  int64_t dims[5], dy_dims[OCL_MAX_DIMS];
  struct pool_geom g;
  if (!read_shape(op, in[0], in[1], rank, dims) ||
      ocl_op_dims(op, in[1], dy_dims) < 0)
    return;
  TF_Tensor *dx = ocl_op_output(op, 0, k->dtype, dims, rank);
  if (dx == NULL)
    return;
  if (k->op->spatial == 2) {
    /* TensorFlow returns an empty gradient before it looks at the
     * windows. */
    if (ocl_shape_elements(dims, rank) == 0 ||
        !geom_2d(&g, k, k->ksize, k->strides, dims, rank, op->status))
      return;
  } else {
    /* TensorFlow's CPU kernel compares the batch and channel extents with
     * these words (its NDHWC indices), then reads the rest blindly; the
     * whole shape is checked after. */
    int c = axis_c(k->channels_first, 3);
    if (!geom_3d(&g, k, dims, op->status))
      return;
    if (dims[0] != dy_dims[0])
      return (void)ocl_op_fail(op, TF_INVALID_ARGUMENT,
                               "Expected first dimension of tensor_in_shape "
                               "and out_backprop to match, got %lld and %lld",
                               (long long)dims[0], (long long)dy_dims[0]);
    if (dims[c] != dy_dims[c])
      return (void)ocl_op_fail(op, TF_INVALID_ARGUMENT,
                               "Expected last dimension of tensor_in_shape "
                               "and out_backprop to match, got %lld and %lld",
                               (long long)dims[c], (long long)dy_dims[c]);
  }
  if (!check_shape(op, in[1], g.out_dims, rank, "grad") ||
      g.in_elements == 0 || !check_dtype(op, k))
    return;
  struct ocl_arg args[3] = {OCL_TENSOR(in[1]), OCL_TENSOR(dx)};
  launch(op, k, 0, &g, true, g.in_elements, args, 2);
}

/* ---- Compute: second gradients ------------------------------------------- */

/* MaxPool3DGradGrad's message for an empty input: TensorFlow names the
 * tensor and prints it (DebugString, without values: it is empty). */
static bool check_not_empty(struct ocl_op *op, const TF_Tensor *t,
                            const char *what)
{
  int64_t dims[OCL_MAX_DIMS];
  char shape[160];
  int rank = ocl_op_dims(op, t, dims);
  if (rank < 0)
    return false;
  if (ocl_shape_elements(dims, rank) > 0)
    return true;
  ocl_shape_format(dims, rank, shape, sizeof(shape));
  return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                     "received empty tensor %s: Tensor<type: %s shape: %s "
                     "values: >",
                     what, ocl_tf.TensorType(t) == TF_HALF       ? "half"
                           : ocl_tf.TensorType(t) == TF_BFLOAT16 ? "bfloat16"
                           : ocl_tf.TensorType(t) == TF_DOUBLE   ? "double"
                                                                 : "float",
                     shape);
}

static void run_max_grad_grad(struct ocl_op *op, struct pool_kernel *k,
                              TF_Tensor *const *in)
{
  int rank = k->op->spatial + 2;
  struct pool_geom g;
  if (!check_rank(op, in[0], rank, "tensor_in") ||
      !check_rank(op, in[1], rank, "tensor_out") ||
      !check_rank(op, in[2], rank, "out_grad_backprop") ||
      !input_geom(op, k, in, &g) ||
      !check_shape(op, in[1], g.out_dims, rank, "orig_output") ||
      !check_shape(op, in[2], g.in_dims, rank, "grad"))
    return;
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, g.out_dims, rank);
  if (out == NULL)
    return;
  if (k->op->spatial == 3 &&
      (!check_not_empty(op, in[0], "tensor_in") ||
       !check_not_empty(op, in[1], "tensor_out") ||
       !check_not_empty(op, in[2], "out_grad_backprop")))
    return;
  if (g.out_elements == 0 || !check_dtype(op, k))
    return;
  struct ocl_arg args[5] = {OCL_TENSOR(in[0]), OCL_TENSOR(in[1]),
                            OCL_TENSOR(in[2]), OCL_TENSOR(out)};
  launch(op, k, 0, &g, false, g.out_elements, args, 4);
}

/* ---- Compute: the argmax ops ------------------------------------------------ */

static void run_max_pool_argmax(struct ocl_op *op, struct pool_kernel *k,
                                TF_Tensor *const *in)
{
  struct pool_geom g;
  if (!input_geom(op, k, in, &g))
    return;
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, g.out_dims, g.rank);
  TF_Tensor *arg = y == NULL ? NULL
                             : ocl_op_output(op, 1, TF_INT64, g.out_dims,
                                             g.rank);
  if (arg == NULL || g.out_elements == 0 || !check_dtype(op, k))
    return;
  struct ocl_arg args[5] = {OCL_TENSOR(in[0]), OCL_TENSOR(y), OCL_TENSOR(arg),
                            OCL_INT(k->with_batch)};
  launch(op, k, 0, &g, false, g.out_elements, args, 4);
}

/* MaxPoolGradWithArgmax (input-shaped output) and
 * MaxPoolGradGradWithArgmax (pooled output): the shapes TensorFlow checks,
 * grad's then argmax's. */
static void run_max_pool_grad_argmax(struct ocl_op *op, struct pool_kernel *k,
                                     TF_Tensor *const *in)
{
  struct pool_geom g;
  bool grad = k->op->kind == MAX_POOL_GRAD_ARGMAX;
  if (!input_geom(op, k, in, &g) ||
      !check_shape(op, in[1], grad ? g.out_dims : g.in_dims, 4, "grad") ||
      !check_shape(op, in[2], g.out_dims, 4, "argmax"))
    return;
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype,
                                 grad ? g.in_dims : g.out_dims, 4);
  int64_t elements = grad ? g.in_elements : g.out_elements;
  if (out == NULL || elements == 0 || !check_dtype(op, k))
    return;
  if (grad && g.out_elements == 0) {
    static const uint8_t zero = 0;
    ocl_op_fill(op, out, 0, &zero, 1, ocl_tf.TensorByteSize(out));
    return;
  }
  struct ocl_arg args[5] = {OCL_TENSOR(in[1]), OCL_TENSOR(in[2]),
                            OCL_TENSOR(out), OCL_INT(k->with_batch)};
  launch(op, k, 0, &g, grad, elements, args, 4);
}

/* ---- Kernel callbacks ------------------------------------------------------ */

#define MAX_INPUTS 5

static void pool_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct pool_kernel *k = kernel;
  struct ocl_op op;
  TF_Tensor *in[MAX_INPUTS] = {NULL};

  ocl_op_begin(&op, ctx);
  for (int i = 0; i < k->op->num_inputs; i++)
    if ((in[i] = ocl_op_input(&op, i)) == NULL)
      goto out;
  switch (k->op->kind) {
  case MAX_POOL:
  case AVG_POOL:
    run_forward(&op, k, in);
    break;
  case MAX_POOL_GRAD:
    run_max_grad(&op, k, in);
    break;
  case AVG_POOL_GRAD:
    run_avg_grad(&op, k, in);
    break;
  case MAX_POOL_GRAD_GRAD:
    run_max_grad_grad(&op, k, in);
    break;
  case MAX_POOL_ARGMAX:
    run_max_pool_argmax(&op, k, in);
    break;
  case MAX_POOL_GRAD_ARGMAX:
  case MAX_POOL_GRAD_GRAD_ARGMAX:
    run_max_pool_grad_argmax(&op, k, in);
    break;
  }
out:
  ocl_op_end(&op);
}

/* ---- LRN and LRNGrad ------------------------------------------------------ */

/* Local response normalisation (lrn_op.cc) across the channels of NHWC
 * images, in float and half: TensorFlow's CPU kernels' arithmetic (the
 * window's sum of squares, N = bias + alpha * sum, y = x * N^-beta; the
 * gradient as LRNGradOp's CPU loop writes it, a zero gradient skipped),
 * not cuDNN's, so none of cuDNN's limits on beta, bias and the radius
 * apply. The gradient gathers in two passes (pool.cl), nothing
 * accumulated across work-items. */
struct lrn_args32 {
  cl_int depth, radius, count, beta_mode;
  cl_float bias, alpha, beta;
};
struct lrn_args64 {
  cl_long depth, radius, count, beta_mode;
  cl_float bias, alpha, beta;
};

struct lrn_kernel {
  bool grad;
  TF_DataType dtype;
  int64_t radius;
  float bias, alpha, beta;
  bool force64;
  /* [index width][pass][GPU shape, CPU shape (_rows)] */
  struct ocl_kernel kernels[NUM_WIDTHS][2][2];
};

/* f rounded to half and back (to nearest even), as T(float) rounds an
 * attribute in TensorFlow's half kernels. In bits, not _Float16: clang
 * has no _Float16 on x86 before AVX-512 FP16 support (the fuzz build). */
static float half_round(float f)
{
  if (!isfinite(f))
    return f;
  float magnitude = fabsf(f);
  /* Past 65504 + half its ulp, ties to even go to infinity. */
  if (magnitude >= 65520.0f)
    return copysignf(INFINITY, f);
  int binade;
  frexpf(magnitude, &binade);
  /* half has 10 fraction bits; below 2^-14 its quantum stays 2^-24. */
  int exponent = binade - 1 < -14 ? -14 : binade - 1;
  float quantum = ldexpf(1.0f, exponent - 10);
  return copysignf(rintf(magnitude / quantum) * quantum, f);
}

static void *lrn_create_common(TF_OpKernelConstruction *ctx, bool grad)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct lrn_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->grad = grad;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "depth_radius", &k->radius,
                                           status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  /* FastBoundsCheck(depth_radius, INT_MAX): 0 <= radius < INT_MAX. */
  if (k->radius < 0 || k->radius >= INT32_MAX) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "depth_radius = %lld larger than int max",
                   (long long)k->radius);
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "bias", &k->bias, status);
  if (ocl_tf.GetCode(status) == TF_OK)
    ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "alpha", &k->alpha, status);
  if (ocl_tf.GetCode(status) == TF_OK)
    ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "beta", &k->beta, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  if (k->dtype == TF_HALF) {
    /* TensorFlow keeps the attributes as T: half rounds them. */
    k->bias = half_round(k->bias);
    k->alpha = half_round(k->alpha);
    k->beta = half_round(k->beta);
  }
  k->force64 = ocl_config()->hooks.index64;
  enum pool_type type = pool_type_of(k->dtype);
  static const char *const passes[2][2] = {{"lrn", NULL},
                                           {"lrn_grad_terms", "lrn_grad_sum"}};
  for (int w = 0; w < NUM_WIDTHS; w++)
    for (int s = 0; s < 2 && passes[grad][s] != NULL; s++) {
      ocl_kernel_init(&k->kernels[w][s][0], &programs[type][w],
                      passes[grad][s]);
      ocl_kernel_initf(&k->kernels[w][s][1], &programs[type][w], "%s_rows",
                       passes[grad][s]);
    }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void *lrn_create(TF_OpKernelConstruction *ctx)
{
  return lrn_create_common(ctx, false);
}
static void *lrn_grad_create(TF_OpKernelConstruction *ctx)
{
  return lrn_create_common(ctx, true);
}

/* Enqueues pass `pass` over `elements` elements of rows of `depth`
 * channels: count is the element count, except in the forward _rows
 * kernel, which takes the row count (the grad _rows kernels index rows by
 * their first element). */
static bool lrn_launch(struct ocl_op *op, struct lrn_kernel *k, int pass,
                       int64_t elements, int64_t depth, struct ocl_arg *args,
                       int n)
{
  struct lrn_args32 a32;
  struct lrn_args64 a64;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  bool rows = info->cpu_shape;
  int64_t count = rows && !k->grad ? elements / depth : elements;
  int beta_mode = k->beta == 0.5f ? 1 : k->beta == 1.0f ? 2 : 0;
  /* The grad _rows kernels reach row * depth of the rounded-up launch. */
  int width = elements + depth <= INT32_MAX / 2 && !k->force64 ? IDX32 : IDX64;
  if (width == IDX32) {
    a32 = (struct lrn_args32){(cl_int)depth, (cl_int)k->radius,
                              (cl_int)count, beta_mode,
                              k->bias, k->alpha, k->beta};
    args[n] = OCL_BYTES(&a32, sizeof(a32));
  } else {
    a64 = (struct lrn_args64){depth, k->radius, count, beta_mode,
                              k->bias, k->alpha, k->beta};
    args[n] = OCL_BYTES(&a64, sizeof(a64));
  }
  struct ocl_kernel *kernel = &k->kernels[width][pass][rows];
  if (rows)
    return ocl_launch_rows(op, kernel, (size_t)(elements / depth), args,
                           n + 1);
  return ocl_launch_1d(op, kernel, (size_t)elements, args, n + 1);
}

static void lrn_forward(struct ocl_op *op, struct lrn_kernel *k,
                        const TF_Tensor *x)
{
  int64_t dims[OCL_MAX_DIMS];
  if (ocl_tf.NumDims(x) != 4)
    return (void)ocl_op_fail(op, TF_INVALID_ARGUMENT,
                             "in must be 4-dimensional");
  if (ocl_op_dims(op, x, dims) < 0)
    return;
  int64_t elements = ocl_shape_elements(dims, 4);
  if (elements >= INT32_MAX)
    return (void)ocl_op_fail(op, TF_INVALID_ARGUMENT,
                             "argument to LRN too large");
  if (dims[3] + k->radius > INT32_MAX)
    return (void)ocl_op_fail(op, TF_INVALID_ARGUMENT,
                             "depth %lld + depth_radius %lld exceeds int max.",
                             (long long)dims[3], (long long)k->radius);
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, dims, 4);
  if (y == NULL || elements == 0)
    return;
  struct ocl_arg args[3] = {OCL_TENSOR(x), OCL_TENSOR(y)};
  lrn_launch(op, k, 0, elements, dims[3], args, 2);
}

static void lrn_backward(struct ocl_op *op, struct lrn_kernel *k,
                         TF_Tensor *const *in)
{
  int64_t g_dims[OCL_MAX_DIMS], x_dims[OCL_MAX_DIMS], y_dims[OCL_MAX_DIMS];
  if (ocl_tf.NumDims(in[0]) != 4 || ocl_tf.NumDims(in[1]) != 4)
    return (void)ocl_op_fail(op, TF_INVALID_ARGUMENT,
                             "inputs must be 4-dimensional");
  if (ocl_op_dims(op, in[0], g_dims) < 0 || ocl_op_dims(op, in[1], x_dims) < 0 ||
      ocl_op_dims(op, in[2], y_dims) < 0)
    return;
  if (!same_dims(g_dims, 4, x_dims, 4) ||
      !same_dims(g_dims, 4, y_dims, ocl_tf.NumDims(in[2])))
    return (void)ocl_op_fail(op, TF_INVALID_ARGUMENT,
                             "input_grads, input_image, and out_image should "
                             "have the same shape");
  TF_Tensor *dx = ocl_op_output(op, 0, k->dtype, g_dims, 4);
  int64_t elements = ocl_shape_elements(g_dims, 4);
  if (dx == NULL || elements == 0)
    return;
  TF_Tensor *t = ocl_op_temp(op, TF_FLOAT, 2 * elements);
  if (t == NULL)
    return;
  struct ocl_arg a1[5] = {OCL_TENSOR(in[0]), OCL_TENSOR(in[1]),
                          OCL_TENSOR(in[2]), OCL_TENSOR(t)};
  if (!lrn_launch(op, k, 0, elements, g_dims[3], a1, 4))
    return;
  struct ocl_arg a2[4] = {OCL_TENSOR(in[1]), OCL_TENSOR(t), OCL_TENSOR(dx)};
  lrn_launch(op, k, 1, elements, g_dims[3], a2, 3);
}

static void lrn_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct lrn_kernel *k = kernel;
  struct ocl_op op;
  TF_Tensor *in[3] = {NULL};

  ocl_op_begin(&op, ctx);
  for (int i = 0; i < (k->grad ? 3 : 1); i++)
    if ((in[i] = ocl_op_input(&op, i)) == NULL)
      goto out;
  if (k->grad)
    lrn_backward(&op, k, in);
  else
    lrn_forward(&op, k, in[0]);
out:
  ocl_op_end(&op);
}

_Static_assert(NUM_POOL_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per pool op");
OCL_FAMILY_CREATES(pool, pool_create);

/* ---- Registration ------------------------------------------------------------ */

void ocl_register_pool_kernels(void)
{
  /* TensorFlow's GPU kernels: TF_CALL_GPU_NUMBER_TYPES for 2-D pooling,
   * float, half and bfloat16 for 3-D (pooling_ops_3d.cc). */
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_BFLOAT16,
                                      TF_DOUBLE};
  for (int i = 0; i < NUM_POOL_OPS; i++) {
    const struct pool_op *op = &pool_ops[i];
    /* MaxPool3DGrad constrains TInput as well. */
    bool tinput = op->kind == MAX_POOL_GRAD && op->spatial == 3;
    /* The *WithArgmax ops: TensorFlow's GPU kernels take an int64 argmax
     * only. */
    bool targmax = op->kind == MAX_POOL_ARGMAX ||
                   op->kind == MAX_POOL_GRAD_ARGMAX ||
                   op->kind == MAX_POOL_GRAD_GRAD_ARGMAX;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
      if (op->spatial == 3 && types[t] == TF_DOUBLE)
        continue;
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = pool_creates[i],
          .compute = pool_compute,
          .destroy = pool_delete,
          .type_attrs = {"T", tinput    ? "TInput"
                              : targmax ? "Targmax"
                                        : NULL},
          .types = {types[t], tinput ? types[t] : TF_INT64},
          .host_args = op->host_args,
      });
    }
  }
  /* LRN: TensorFlow's GPU kernels take float; its CPU kernels half too,
   * which the device computes in float. */
  static const TF_DataType lrn_types[] = {TF_FLOAT, TF_HALF};
  for (size_t t = 0; t < 2; t++) {
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "LRN", .create = lrn_create, .compute = lrn_compute,
        .destroy = pool_delete, .type_attrs = {"T"}, .types = {lrn_types[t]}});
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "LRNGrad", .create = lrn_grad_create, .compute = lrn_compute,
        .destroy = pool_delete, .type_attrs = {"T"}, .types = {lrn_types[t]}});
  }
}
