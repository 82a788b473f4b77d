/* Conv2D, DepthwiseConv2dNative and their input and filter gradients
 * (float and half; half is stored as half and computed in float).
 *
 * Conv2D and its gradients run on the matmul family's GEMM (gemm.h) with
 * the filter as a [KH * KW * Cin, Cout] matrix:
 *   forward          out[rows, Cout] = col[rows, K] * filter, where col is
 *                    the input's im2col (a temp); a 1x1 stride-1 unpadded
 *                    convolution multiplies the input itself;
 *   backprop input   dcol = out_backprop * filter^T, then col2im: each
 *                    work-item owns one element of the input gradient and
 *                    sums the taps that reach it (no atomics);
 *   backprop filter  dfilter = col^T * out_backprop.
 * NCHW runs natively: im2col/col2im read and write through strides, and
 * the GEMMs of the forward and input gradient run per image ([Cout, P] =
 * filter^T * col[K, P]); only the filter gradient transposes out_backprop
 * to NHWC first. col is processed in chunks of images (of taps for the
 * filter gradient) so that a temp stays under COL_MAX_ELEMENTS.
 *
 * Depthwise convolutions are direct kernels: their GEMMs would have one
 * column per channel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "kernel_families.h"
#include "launch.h"

extern const char ocl_cl_source_conv[];

static const struct ocl_family families[OCL_NUM_STORAGES] =
    OCL_TYPED_FAMILIES("conv", ocl_cl_source_conv);

/* At most this many elements per im2col temp (64 MiB of float): big images
 * go through in chunks instead of one temp of rows * K. */
#define COL_MAX_ELEMENTS ((int64_t)1 << 24)

/* The 2-D kernels' work-group: 16 channels (one AVX-512 vector on PoCL) by
 * 16 rows. Fixed, because PoCL compiles a kernel again per local size. */
enum { LOCAL_C = 16, LOCAL_R = 16 };

enum conv_kind {
  CONV_FORWARD,
  CONV_BACKPROP_INPUT,
  CONV_BACKPROP_FILTER,
  DEPTHWISE_FORWARD,
  DEPTHWISE_BACKPROP_INPUT,
  DEPTHWISE_BACKPROP_FILTER
};

static const char *const input_sizes_arg[] = {"input_sizes", NULL};
static const char *const filter_sizes_arg[] = {"filter_sizes", NULL};

struct conv_op {
  const char *op;
  enum conv_kind kind;
  const char *const *host_args;
  const char *label; /* TensorFlow's name for the op in shape messages */
};

static const struct conv_op conv_ops[] = {
    {"Conv2D", CONV_FORWARD, NULL, NULL},
    {"Conv2DBackpropInput", CONV_BACKPROP_INPUT, input_sizes_arg,
     "Conv2DSlowBackpropInput"},
    {"Conv2DBackpropFilter", CONV_BACKPROP_FILTER, filter_sizes_arg,
     "Conv2DSlowBackpropFilter"},
    {"DepthwiseConv2dNative", DEPTHWISE_FORWARD, NULL, NULL},
    {"DepthwiseConv2dNativeBackpropInput", DEPTHWISE_BACKPROP_INPUT,
     input_sizes_arg, "DepthwiseConv2DBackpropInput"},
    {"DepthwiseConv2dNativeBackpropFilter", DEPTHWISE_BACKPROP_FILTER,
     filter_sizes_arg, "DepthwiseConv2DBackpropFilter"},
};
#define NUM_CONV_OPS ((int)(sizeof(conv_ops) / sizeof(conv_ops[0])))

struct conv_kernel {
  const struct conv_op *op;
  TF_DataType dtype;
  struct ocl_conv_attrs attrs;
};

/* conv.cl's conv_t: 8-byte members only, so no padding differs. */
struct conv_args {
  cl_long batch, in_rows, in_cols, in_depth;
  cl_long filter_rows, filter_cols, out_depth, out_rows, out_cols;
  cl_long stride_rows, stride_cols, dil_rows, dil_cols, pad_top, pad_left;
  cl_long depth_multiplier;
  cl_long in_sn, in_sh, in_sw, in_sc;
  cl_long out_sn, out_sh, out_sw, out_sc;
};

/* Element strides (n, h, w, c) of a 4-D tensor in the data format. */
static void format_strides(bool channels_first, int64_t rows, int64_t cols,
                           int64_t depth, cl_long s[4])
{
  if (channels_first) {
    s[0] = depth * rows * cols;
    s[1] = cols;
    s[2] = 1;
    s[3] = rows * cols;
  } else {
    s[0] = rows * cols * depth;
    s[1] = cols * depth;
    s[2] = depth;
    s[3] = 1;
  }
}

static struct conv_args make_args(const struct ocl_conv2d *c,
                                  bool channels_first)
{
  struct conv_args a = {
      .batch = c->batch,
      .in_rows = c->in_rows,
      .in_cols = c->in_cols,
      .in_depth = c->in_depth,
      .filter_rows = c->filter_rows,
      .filter_cols = c->filter_cols,
      .out_depth = c->out_depth,
      .out_rows = c->out_rows,
      .out_cols = c->out_cols,
      .stride_rows = c->stride_rows,
      .stride_cols = c->stride_cols,
      .dil_rows = c->dilation_rows,
      .dil_cols = c->dilation_cols,
      .pad_top = c->pad_top,
      .pad_left = c->pad_left,
      .depth_multiplier = c->depth_multiplier,
  };
  cl_long s[4];
  format_strides(channels_first, c->in_rows, c->in_cols, c->in_depth, s);
  a.in_sn = s[0], a.in_sh = s[1], a.in_sw = s[2], a.in_sc = s[3];
  format_strides(channels_first, c->out_rows, c->out_cols, c->out_depth, s);
  a.out_sn = s[0], a.out_sh = s[1], a.out_sw = s[2], a.out_sc = s[3];
  return a;
}

/* ---- Launch helpers ----------------------------------------------------- */

/* A 2-D (channel, row) kernel of conv.cl. */
static bool enqueue_2d(const struct ocl_launch *launch, TF_DataType dtype,
                       const char *name, int64_t channels, int64_t rows,
                       const struct ocl_arg *args, int num_args,
                       TF_Status *status)
{
  /* im2col and col2im loop over channels inside a work-item: their dim 0
   * (taps, channel blocks) is short, so their groups run along rows. */
  bool runs = strcmp(name, "im2col") == 0 || strcmp(name, "col2im") == 0;
  size_t local[2] = {runs ? 1 : LOCAL_C, runs ? LOCAL_C * LOCAL_R : LOCAL_R};
  size_t max = ocl_device_max_work_group_size(launch->device);
  while (local[0] * local[1] > max && local[1] > 1)
    local[1] /= 2;
  while (local[0] * local[1] > max && local[0] > 1)
    local[0] /= 2;
  size_t global[2] = {(size_t)channels, (size_t)rows};
  return ocl_enqueue(launch, &families[ocl_storage_of(dtype)], name, 2,
                     global, local, args, num_args, status);
}

/* Temps are freed right after the work that uses them is enqueued
 * (ocl_allocate_temp). */
static void free_temp(TF_Tensor **t)
{
  if (*t != NULL)
    ocl_tf.DeleteTensor(*t);
  *t = NULL;
}

static bool fill_zero(const struct ocl_launch *launch, const TF_Tensor *t,
                      TF_Status *status)
{
  size_t bytes = ocl_tf.TensorByteSize(t);
  if (bytes == 0)
    return true;
  cl_mem mem;
  size_t off;
  if (!ocl_resolve(launch->device, ocl_tf.TensorData(t), bytes, &mem, &off,
                   status))
    return false;
  const cl_uchar zero = 0;
  cl_int err = clEnqueueFillBuffer(launch->queue, mem, &zero, 1, off, bytes, 0,
                                   NULL, NULL);
  if (err != CL_SUCCESS) {
    ocl_set_cl_error(status, err, "clEnqueueFillBuffer");
    return false;
  }
  return true;
}

/* A float copy of a half tensor (or the tensor itself when float). */
static TF_Tensor *as_float(const struct ocl_launch *launch, TF_DataType dtype,
                           const TF_Tensor *t, bool *owned, TF_Status *status)
{
  *owned = false;
  if (dtype == TF_FLOAT)
    return (TF_Tensor *)t;
  int64_t n = ocl_tf.TensorElementCount(t);
  TF_Tensor *f = ocl_allocate_temp(launch, TF_FLOAT, n, status);
  if (f == NULL)
    return NULL;
  *owned = true;
  const struct ocl_arg args[] = {OCL_TENSOR(t), OCL_TENSOR(f), OCL_LONG(n)};
  if (!ocl_enqueue_1d(launch, &families[ocl_storage_of(dtype)], "to_float",
                      (size_t)n, args, 3, status)) {
    ocl_tf.DeleteTensor(f);
    *owned = false;
    return NULL;
  }
  return f;
}

/* How col is laid out: [rows, K] (NHWC-like; rows = image * P + p) or per
 * image [K, P] (NCHW). Strides in elements for (image, p, k). */
struct col_layout {
  int64_t sn, sp, sk;
};

static struct col_layout col_layout(bool per_image_kp, int64_t pixels,
                                    int64_t kcols)
{
  if (per_image_kp)
    return (struct col_layout){kcols * pixels, 1, pixels};
  return (struct col_layout){pixels * kcols, kcols, 1};
}

/* col of images [n0, n0 + images) and taps [t0, t0 + ntaps). */
static bool im2col(const struct ocl_launch *launch, TF_DataType dtype,
                   const struct conv_args *g, const TF_Tensor *in,
                   const TF_Tensor *col, int64_t n0, int64_t images,
                   int64_t t0, int64_t ntaps, struct col_layout l,
                   TF_Status *status)
{
  int64_t rows = images * g->out_rows * g->out_cols;
  const struct ocl_arg args[] = {
      OCL_TENSOR(in),   OCL_TENSOR(col),  OCL_BYTES(g, sizeof(*g)),
      OCL_LONG(n0),     OCL_LONG(rows),   OCL_LONG(t0),
      OCL_LONG(ntaps),  OCL_LONG(l.sn),   OCL_LONG(l.sp),
      OCL_LONG(l.sk),
  };
  return enqueue_2d(launch, dtype, "im2col", ntaps, rows, args,
                    (int)(sizeof(args) / sizeof(args[0])), status);
}

/* A 1x1 window with stride 1 and no padding: the input is its own col. */
static bool is_pointwise(const struct ocl_conv2d *c)
{
  return c->filter_rows == 1 && c->filter_cols == 1 && c->stride_rows == 1 &&
         c->stride_cols == 1 && c->pad_top == 0 && c->pad_left == 0 &&
         c->out_rows == c->in_rows && c->out_cols == c->in_cols;
}

/* Images per chunk so that one chunk's col (per_image elements each) stays
 * under COL_MAX_ELEMENTS; at least one. */
static int64_t images_per_chunk(int64_t batch, int64_t per_image)
{
  int64_t n = per_image > 0 ? COL_MAX_ELEMENTS / per_image : batch;
  return n < 1 ? 1 : n > batch ? batch : n;
}

/* ---- Conv2D ------------------------------------------------------------- */

static bool conv_forward(const struct ocl_launch *launch, TF_DataType dtype,
                         bool nchw, const struct ocl_conv2d *c,
                         const TF_Tensor *in, const TF_Tensor *filter,
                         const TF_Tensor *out, TF_Status *status)
{
  int64_t P = c->out_rows * c->out_cols, K = c->filter_rows *
                                               c->filter_cols * c->in_depth;
  int64_t Cout = c->out_depth;
  struct conv_args g = make_args(c, nchw);

  if (is_pointwise(c)) {
    struct ocl_gemm_desc d =
        nchw ? (struct ocl_gemm_desc){.m = Cout, .n = P, .k = K,
                                      .trans_a = true, .batches = c->batch,
                                      .a_shared = true}
             : (struct ocl_gemm_desc){.m = c->batch * P, .n = Cout, .k = K,
                                      .batches = 1, .b_shared = true};
    return nchw ? ocl_gemm(launch, dtype, &d, filter, in, out, status)
                : ocl_gemm(launch, dtype, &d, in, filter, out, status);
  }

  int64_t chunk = images_per_chunk(c->batch, P * K);
  TF_Tensor *col = ocl_allocate_temp(launch, dtype, chunk * P * K, status);
  if (col == NULL)
    return false;
  bool ok = true;
  struct col_layout l = col_layout(nchw, P, K);
  for (int64_t n0 = 0; ok && n0 < c->batch; n0 += chunk) {
    int64_t images = c->batch - n0 < chunk ? c->batch - n0 : chunk;
    ok = im2col(launch, dtype, &g, in, col, n0, images, 0,
                c->filter_rows * c->filter_cols, l, status);
    if (!ok)
      break;
    struct ocl_gemm_desc d =
        nchw ? (struct ocl_gemm_desc){.m = Cout, .n = P, .k = K,
                                      .trans_a = true, .batches = images,
                                      .a_shared = true,
                                      .c_offset = n0 * Cout * P}
             : (struct ocl_gemm_desc){.m = images * P, .n = Cout, .k = K,
                                      .batches = 1, .b_shared = true,
                                      .c_offset = n0 * P * Cout};
    ok = nchw ? ocl_gemm(launch, dtype, &d, filter, col, out, status)
              : ocl_gemm(launch, dtype, &d, col, filter, out, status);
  }
  free_temp(&col);
  return ok;
}

static bool conv_backprop_input(const struct ocl_launch *launch,
                                TF_DataType dtype, bool nchw,
                                const struct ocl_conv2d *c,
                                const TF_Tensor *filter, const TF_Tensor *dout,
                                const TF_Tensor *dx, TF_Status *status)
{
  int64_t P = c->out_rows * c->out_cols, K = c->filter_rows *
                                               c->filter_cols * c->in_depth;
  int64_t Cout = c->out_depth;
  struct conv_args g = make_args(c, nchw);

  if (c->batch * P == 0 || Cout == 0)
    return fill_zero(launch, dx, status);
  if (is_pointwise(c)) {
    /* dx = dout * filter^T straight into dx: one rounding for half. */
    struct ocl_gemm_desc d =
        nchw ? (struct ocl_gemm_desc){.m = K, .n = P, .k = Cout,
                                      .batches = c->batch, .a_shared = true}
             : (struct ocl_gemm_desc){.m = c->batch * P, .n = K, .k = Cout,
                                      .trans_b = true, .batches = 1,
                                      .b_shared = true};
    return nchw ? ocl_gemm(launch, dtype, &d, filter, dout, dx, status)
                : ocl_gemm(launch, dtype, &d, dout, filter, dx, status);
  }

  /* dcol is float for every dtype, so that col2im sums unrounded taps: the
   * GEMM runs in float on float copies of half operands. */
  bool own_f = false, own_dy = false, ok = false;
  TF_Tensor *dcol = NULL, *ff = NULL, *fdy = NULL;
  ff = as_float(launch, dtype, filter, &own_f, status);
  if (ff == NULL)
    goto out;
  fdy = as_float(launch, dtype, dout, &own_dy, status);
  if (fdy == NULL)
    goto out;
  int64_t chunk = images_per_chunk(c->batch, P * K);
  dcol = ocl_allocate_temp(launch, TF_FLOAT, chunk * P * K, status);
  if (dcol == NULL)
    goto out;
  struct col_layout l = col_layout(nchw, P, K);
  for (int64_t n0 = 0; n0 < c->batch; n0 += chunk) {
    int64_t images = c->batch - n0 < chunk ? c->batch - n0 : chunk;
    struct ocl_gemm_desc d =
        nchw ? (struct ocl_gemm_desc){.m = K, .n = P, .k = Cout,
                                      .batches = images, .a_shared = true,
                                      .b_offset = n0 * Cout * P}
             : (struct ocl_gemm_desc){.m = images * P, .n = K, .k = Cout,
                                      .trans_b = true, .batches = 1,
                                      .b_shared = true,
                                      .a_offset = n0 * P * Cout};
    if (!(nchw ? ocl_gemm(launch, TF_FLOAT, &d, ff, fdy, dcol, status)
               : ocl_gemm(launch, TF_FLOAT, &d, fdy, ff, dcol, status)))
      goto out;
    int64_t rows = images * c->in_rows * c->in_cols;
    const struct ocl_arg args[] = {
        OCL_TENSOR(dcol), OCL_TENSOR(dx), OCL_BYTES(&g, sizeof(g)),
        OCL_LONG(n0),     OCL_LONG(rows), OCL_LONG(l.sn),
        OCL_LONG(l.sp),   OCL_LONG(l.sk),
    };
    if (!enqueue_2d(launch, dtype, "col2im", (c->in_depth + 15) / 16, rows,
                    args,
                    (int)(sizeof(args) / sizeof(args[0])), status))
      goto out;
  }
  ok = true;
out:
  free_temp(&dcol);
  if (own_f)
    free_temp(&ff);
  if (own_dy)
    free_temp(&fdy);
  return ok;
}

static bool conv_backprop_filter(const struct ocl_launch *launch,
                                 TF_DataType dtype, bool nchw,
                                 const struct ocl_conv2d *c,
                                 const TF_Tensor *in, const TF_Tensor *dout,
                                 const TF_Tensor *dw, TF_Status *status)
{
  int64_t P = c->out_rows * c->out_cols, M = c->batch * P;
  int64_t taps = c->filter_rows * c->filter_cols, Cin = c->in_depth;
  int64_t Cout = c->out_depth;
  struct conv_args g = make_args(c, nchw);
  bool ok = false;
  TF_Tensor *col = NULL, *dy = NULL;

  if (M == 0)
    return fill_zero(launch, dw, status);
  /* The GEMM's inner dimension runs over (image, p): NCHW out_backprop is
   * transposed to [N, P, Cout] so that it is one matrix. */
  const TF_Tensor *dyt = dout;
  if (nchw) {
    dy = ocl_allocate_temp(launch, dtype, M * Cout, status);
    if (dy == NULL)
      goto out;
    const struct ocl_arg args[] = {
        OCL_TENSOR(dout), OCL_TENSOR(dy), OCL_LONG(Cout), OCL_LONG(P),
        OCL_LONG(M),
    };
    if (!enqueue_2d(launch, dtype, "nchw_to_nhwc", Cout, M, args, 5, status))
      goto out;
    dyt = dy;
  }
  if (is_pointwise(c) && !nchw) {
    struct ocl_gemm_desc d = {.m = Cin, .n = Cout, .k = M, .trans_a = true,
                              .batches = 1};
    ok = ocl_gemm(launch, dtype, &d, in, dyt, dw, status);
    goto out;
  }
  /* Chunks of taps: each writes its own rows of dfilter, so no chunk
   * accumulates (half rounds once). */
  int64_t per_tap = M * Cin;
  int64_t tchunk = per_tap > 0 ? COL_MAX_ELEMENTS / per_tap : taps;
  if (tchunk < 1)
    tchunk = 1;
  if (tchunk > taps)
    tchunk = taps;
  col = ocl_allocate_temp(launch, dtype, M * tchunk * Cin, status);
  if (col == NULL)
    goto out;
  for (int64_t t0 = 0; t0 < taps; t0 += tchunk) {
    int64_t nt = taps - t0 < tchunk ? taps - t0 : tchunk;
    int64_t kcols = nt * Cin;
    if (!im2col(launch, dtype, &g, in, col, 0, c->batch, t0, nt,
                col_layout(false, P, kcols), status))
      goto out;
    struct ocl_gemm_desc d = {.m = kcols, .n = Cout, .k = M, .trans_a = true,
                              .batches = 1, .c_offset = t0 * Cin * Cout};
    if (!ocl_gemm(launch, dtype, &d, col, dyt, dw, status))
      goto out;
  }
  ok = true;
out:
  free_temp(&col);
  free_temp(&dy);
  return ok;
}

/* ---- Depthwise ---------------------------------------------------------- */

static bool depthwise(const struct ocl_launch *launch, TF_DataType dtype,
                      enum conv_kind kind, bool nchw,
                      const struct ocl_conv2d *c, const TF_Tensor *a,
                      const TF_Tensor *b, const TF_Tensor *out,
                      TF_Status *status)
{
  struct conv_args g = make_args(c, nchw);
  const struct ocl_arg args[] = {
      OCL_TENSOR(a), OCL_TENSOR(b), OCL_TENSOR(out), OCL_BYTES(&g, sizeof(g)),
  };
  switch (kind) {
  case DEPTHWISE_FORWARD:
    return enqueue_2d(launch, dtype, "depthwise_forward", c->out_depth,
                      c->batch * c->out_rows * c->out_cols, args, 4, status);
  case DEPTHWISE_BACKPROP_INPUT:
    return enqueue_2d(launch, dtype, "depthwise_backprop_input", c->in_depth,
                      c->batch * c->in_rows * c->in_cols, args, 4, status);
  default:
    return enqueue_2d(launch, dtype, "depthwise_backprop_filter", c->out_depth,
                      c->filter_rows * c->filter_cols, args, 4, status);
  }
}

/* ---- Kernel callbacks --------------------------------------------------- */

/* An int list attribute into vals[max]; its length, or -1 with the status
 * set. Absent (older graphs without explicit_paddings): 0 when optional. */
static int get_int_list(TF_OpKernelConstruction *ctx, const char *name,
                        int64_t *vals, int max, bool optional,
                        TF_Status *status)
{
  int32_t size = 0, total = 0;
  if (ocl_tf.OpKernelConstruction_GetAttrSize == NULL ||
      ocl_tf.OpKernelConstruction_GetAttrInt64List == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks list attributes in its C API");
    return -1;
  }
  ocl_tf.OpKernelConstruction_GetAttrSize(ctx, name, &size, &total, status);
  if (ocl_tf.GetCode(status) != TF_OK) {
    if (!optional)
      return -1;
    ocl_set_ok(status);
    return 0;
  }
  if (size > max) /* too long to be valid: the checks reject it */
    return size;
  if (size > 0)
    ocl_tf.OpKernelConstruction_GetAttrInt64List(ctx, name, vals, size,
                                                 status);
  return ocl_tf.GetCode(status) == TF_OK ? size : -1;
}

static bool get_string(TF_OpKernelConstruction *ctx, const char *name,
                       char *buf, size_t len, TF_Status *status)
{
  memset(buf, 0, len);
  if (ocl_tf.OpKernelConstruction_GetAttrString == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks string attributes in its C API");
    return false;
  }
  ocl_tf.OpKernelConstruction_GetAttrString(ctx, name, buf, len - 1, status);
  return ocl_tf.GetCode(status) == TF_OK;
}

static void *conv_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct conv_op *op = &conv_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct conv_kernel *k = calloc(1, sizeof(*k));
  char padding[16], format[16];
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  struct ocl_conv_attrs *a = &k->attrs;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  a->num_strides = get_int_list(ctx, "strides", a->strides, 4, false, status);
  if (a->num_strides < 0)
    goto fail;
  a->num_dilations =
      get_int_list(ctx, "dilations", a->dilations, 4, false, status);
  if (a->num_dilations < 0)
    goto fail;
  a->num_explicit_paddings = get_int_list(
      ctx, "explicit_paddings", a->explicit_paddings, 8, true, status);
  if (a->num_explicit_paddings < 0)
    goto fail;
  if (!get_string(ctx, "padding", padding, sizeof(padding), status) ||
      !get_string(ctx, "data_format", format, sizeof(format), status))
    goto fail;
  if (!ocl_padding_parse(padding, &a->padding)) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Value for attr 'padding' of \"%s\" is not in the list of "
                   "allowed values: \"SAME\", \"VALID\", \"EXPLICIT\"",
                   padding);
    goto fail;
  }
  if (strcmp(format, "NHWC") != 0 && strcmp(format, "NCHW") != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "Invalid data format");
    goto fail;
  }
  a->channels_first = strcmp(format, "NCHW") == 0;
  bool backprop = op->kind == CONV_BACKPROP_INPUT ||
                  op->kind == CONV_BACKPROP_FILTER;
  bool dw = op->kind >= DEPTHWISE_FORWARD;
  if (!ocl_conv_check_attrs(a, backprop, dw, status))
    goto fail;
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

_Static_assert(NUM_CONV_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per conv op");
OCL_FAMILY_CREATES(conv, conv_create);

/* The int32 host-memory shape argument (input_sizes or filter_sizes) as
 * dims of a 4-D shape. */
static bool sizes_shape(const struct conv_kernel *k, const TF_Tensor *sizes,
                        const int64_t *filter, int filter_rank,
                        const int64_t *dout, int dout_rank, int64_t *dims,
                        int *rank, TF_Status *status)
{
  int sizes_rank = ocl_tf.NumDims(sizes);
  int64_t count = ocl_tf.TensorElementCount(sizes);
  const int32_t *v = ocl_host_data(sizes);
  switch (k->op->kind) {
  case CONV_BACKPROP_INPUT:
    *rank = 4;
    return ocl_conv_input_sizes(v, count, sizes_rank, filter, filter_rank,
                                dout, dout_rank, k->attrs.channels_first, dims,
                                status);
  case CONV_BACKPROP_FILTER:
    if (sizes_rank != 1) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Conv2DBackpropFilter: filter_sizes input must be 1-dim, "
                     "not %d",
                     sizes_rank);
      return false;
    }
    break;
  default: /* the depthwise gradients */
    if (sizes_rank != 1) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%s: %s input must be 1-dim, not %d",
                     k->op->kind == DEPTHWISE_BACKPROP_INPUT
                         ? "Conv2DBackpropInput"
                         : "Conv2DBackpropFilter",
                     k->op->kind == DEPTHWISE_BACKPROP_INPUT ? "input_sizes"
                                                             : "filter_sizes",
                     sizes_rank);
      return false;
    }
    break;
  }
  if (count > OCL_MAX_DIMS) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: the shape argument has %lld values", k->op->label,
                   (long long)count);
    return false;
  }
  for (int64_t i = 0; i < count; i++) {
    if (v[i] < 0) {
      if (k->op->kind == DEPTHWISE_BACKPROP_INPUT)
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Dimension %lld of input_sizes must be >= 0",
                       (long long)i);
      else
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Dimension %d must be >= 0", (int)v[i]);
      return false;
    }
    dims[i] = v[i];
  }
  *rank = (int)count;
  return true;
}

static void conv_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct conv_kernel *k = kernel;
  const struct ocl_conv_attrs *a = &k->attrs;
  enum conv_kind kind = k->op->kind;
  TF_Status *status = ocl_tf.NewStatus();
  int num_inputs = kind == CONV_FORWARD || kind == DEPTHWISE_FORWARD ? 2 : 3;
  TF_Tensor *in[3] = {NULL, NULL, NULL};
  TF_Tensor *out = NULL;
  int64_t d[3][OCL_MAX_DIMS];
  int r[3] = {0, 0, 0};
  struct ocl_conv2d c;
  struct ocl_launch launch;

  if (!ocl_get_inputs(ctx, in, num_inputs, status))
    goto done;
  for (int i = 0; i < num_inputs; i++) {
    bool sizes = (kind == CONV_BACKPROP_INPUT ||
                  kind == DEPTHWISE_BACKPROP_INPUT)
                     ? i == 0
                     : (kind == CONV_BACKPROP_FILTER ||
                        kind == DEPTHWISE_BACKPROP_FILTER) &&
                           i == 1;
    if (!sizes && (r[i] = ocl_tensor_dims(in[i], d[i], status)) < 0)
      goto done;
  }
  /* d[0] input, d[1] filter, d[2] out_backprop, whatever the op. */
  if (kind == CONV_BACKPROP_INPUT || kind == DEPTHWISE_BACKPROP_INPUT) {
    if (!sizes_shape(k, in[0], d[1], r[1], d[2], r[2], d[0], &r[0], status))
      goto done;
  } else if (kind == CONV_BACKPROP_FILTER ||
             kind == DEPTHWISE_BACKPROP_FILTER) {
    if (!sizes_shape(k, in[1], NULL, 0, d[2], r[2], d[1], &r[1], status))
      goto done;
  }

  bool ok;
  switch (kind) {
  case CONV_FORWARD:
    ok = ocl_conv2d_forward_init(&c, a, d[0], r[0], d[1], r[1], status);
    break;
  case CONV_BACKPROP_INPUT:
  case CONV_BACKPROP_FILTER:
    ok = ocl_conv2d_backprop_init(&c, k->op->label, a, d[0], r[0], d[1], r[1],
                                  d[2], r[2], status);
    break;
  case DEPTHWISE_FORWARD:
    ok = ocl_depthwise_init(&c, NULL, a, d[0], r[0], d[1], r[1], NULL, 0,
                            status);
    break;
  default:
    ok = ocl_depthwise_init(&c, k->op->label, a, d[0], r[0], d[1], r[1], d[2],
                            r[2], status);
    break;
  }
  if (!ok)
    goto done;
  if (c.groups != 1 && kind <= CONV_BACKPROP_FILTER) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "grouped convolutions (input depth %lld, filter depth "
                   "%lld) are not supported on the OPENCL device",
                   (long long)c.in_depth, (long long)c.filter_depth);
    goto done;
  }

  bool filter_out =
      kind == CONV_BACKPROP_FILTER || kind == DEPTHWISE_BACKPROP_FILTER;
  out = ocl_tf.AllocateOutput(ctx, 0, k->dtype, filter_out ? d[1] : c.out_dims,
                              4, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto done;
  if (ocl_shape_elements(filter_out ? d[1] : c.out_dims, 4) == 0)
    goto done;
  if (!ocl_launch_init(&launch, ctx, status))
    goto done;
  bool nchw = a->channels_first;
  switch (kind) {
  case CONV_FORWARD:
    conv_forward(&launch, k->dtype, nchw, &c, in[0], in[1], out, status);
    break;
  case CONV_BACKPROP_INPUT:
    conv_backprop_input(&launch, k->dtype, nchw, &c, in[1], in[2], out,
                        status);
    break;
  case CONV_BACKPROP_FILTER:
    conv_backprop_filter(&launch, k->dtype, nchw, &c, in[0], in[2], out,
                         status);
    break;
  case DEPTHWISE_FORWARD:
    depthwise(&launch, k->dtype, kind, nchw, &c, in[0], in[1], out, status);
    break;
  case DEPTHWISE_BACKPROP_INPUT:
    depthwise(&launch, k->dtype, kind, nchw, &c, in[2], in[1], out, status);
    break;
  case DEPTHWISE_BACKPROP_FILTER:
    depthwise(&launch, k->dtype, kind, nchw, &c, in[0], in[2], out, status);
    break;
  }
done:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(in, 3);
  ocl_compute_done(ctx, status);
}

static void conv_delete(void *kernel) { free(kernel); }

/* ---- Registration ------------------------------------------------------ */

void ocl_register_conv_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF};

  for (int i = 0; i < NUM_CONV_OPS; i++)
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = conv_ops[i].op,
          .create = conv_creates[i],
          .compute = conv_compute,
          .destroy = conv_delete,
          .type_attrs = {"T"},
          .types = {types[t]},
          .host_args = conv_ops[i].host_args,
      });
}
