/* Convolutions: Conv2D and Conv3D with their input and filter gradients
 * (grouped ones included), _FusedConv2D (Conv2D + BiasAdd + an
 * activation), and DepthwiseConv2dNative with its gradients; float, half,
 * bfloat16 and double (half and bfloat16 stored as such and computed in
 * float; double only on devices with cl_khr_fp64).
 *
 * Every op reduces to one geometry (struct conv_geo): 3 spatial dims (a
 * 2-D convolution has one plane), groups, and element strides of both
 * sides, so that channels-last and channels-first run the same kernels.
 * Two kernel shapes, chosen per device (ocl_device_info.cpu_shape):
 *
 * CPU shape (PoCL). float and half ungrouped channels-last convolutions
 * run direct kernels (conv_direct.c): the forward, the stride-1 input
 * gradient (as the forward it is, below) and the filter gradient (Cin a
 * multiple of 8, Cout of 16) compute the GEMM's 8 x 32 register block with
 * A read from the image itself, the filter in padded panels, the fused
 * bias and activation in the forward's epilogue; the filter gradient sums
 * lines in splits that share the cores' caches. Where they do not apply
 * (channels-first, other channel counts, strided input gradients,
 * TFOCL_CONV=im2col) the convolution runs on the matmul family's GEMM
 * (gemm.h) with the filter as a [taps * Cin, Cout] matrix:
 *   forward          out[rows, Cout] = col[rows, K] * filter, col the
 *                    input's im2col (a temp); a 1x1 stride-1 unpadded
 *                    convolution multiplies the input itself;
 *   backprop input   dcol = out_backprop * filter^T, then col2im: each
 *                    work-item owns one element of the input gradient and
 *                    sums the taps that reach it (no atomics); a stride-1
 *                    channels-last one whose input is not much larger
 *                    than its output is instead the forward convolution
 *                    of out_backprop with the flipped filter;
 *   backprop filter  dfilter = col^T * out_backprop.
 * In channels-last, where the GEMM runs its packed CPU kernel, col (col^T
 * for the filter gradient) is written straight into that kernel's A panels
 * (gemm.h), in cache-sized chunks for the forward: no col matrix, and no
 * packing pass over it.
 * Channels-first runs natively: im2col/col2im read and write through
 * strides, and the GEMMs of the forward and input gradient run per image
 * ([Cout, P] = filter^T * col[K, P]); only the filter gradient transposes
 * out_backprop to channels-last first. col goes through in chunks of
 * images (of taps for the filter gradient) so that a temp stays under
 * COL_MAX_ELEMENTS. Depthwise convolutions in channels-last with
 * multiplier 1 (MobileNet's) take a work-item per image row on 16-wide
 * vectors; the filter gradient sums row chunks in parallel, then the
 * chunks. Everything else (double, bfloat16, grouped, other depthwise)
 * takes the GPU shape's kernels, which PoCL runs too.
 *
 * GPU shape: implicit GEMM (conv.cl's igemm_*: no im2col buffer, tiles
 * staged in local memory, coalesced in both layouts), the filter
 * gradient split over many work-groups and summed in a second pass; the
 * fused bias and activation are the forward kernel's epilogue. Products
 * with fewer than DIRECT_MAX_COLS channels on a tile's column side (where a
 * tile would be mostly padding) take direct kernels, a work-item per result
 * element. Depthwise: a work-item per element, neighbouring work-items on
 * neighbouring addresses, the filter gradient a reduction over many
 * work-groups.
 *
 * Index arithmetic is 32-bit unless a tensor exceeds NARROW_MAX_ELEMENTS
 * (then the -DIDX64 build of the same source).
 *
 * This file holds the ops, their attributes, create and compute, and the
 * choice between the shapes; conv_gemm.c the im2col + GEMM paths,
 * conv_igemm.c the implicit GEMM and direct kernels, conv_depthwise.c the
 * depthwise ones, conv3d.c the 3-D shape checks (conv_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"
#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_conv[];

/* ---- Programs and kernels ----------------------------------------------- */

#define CONV_PROGRAMS(name, extra)                                         \
  {                                                                        \
    {name "_float", ocl_cl_source_conv, "-DT=float -DT_IS_FLOAT" extra},   \
    {name "_half", ocl_cl_source_conv, "-DT=half -DT_IS_HALF" extra},      \
    {name "_double", ocl_cl_source_conv, "-DT=double -DT_IS_DOUBLE" extra},\
    {name "_bf16", ocl_cl_source_conv, "-DT=ushort -DT_IS_BFLOAT16" extra},\
  }

/* [wide][storage]: wide = 64-bit index arithmetic. */
OCL_PROGRAM_TABLE
static const struct ocl_program programs[2][NUM_CS] = {
    CONV_PROGRAMS("conv", ""),
    CONV_PROGRAMS("conv64", " -DIDX64"),
};

/* clang-format off */
const char *const conv_kern_names[NUM_KERNS] = {
    "im2col", "col2im", "to_float", "nchw_to_nhwc", "bias_act",
    "dw_fwd_rows", "dw_bpi_rows", "dw_bpf_rows", "splitk_sum",
    "dw_fwd_elem", "dw_bpi_elem", "dw_bpf_nhwc", "dw_bpf_nchw",
    "igemm_fwd_64", "igemm_fwd_32", "igemm_fwd_16",
    "igemm_bpi_64", "igemm_bpi_32", "igemm_bpi_16",
    "igemm_bpf_64", "igemm_bpf_32", "igemm_bpf_16",
    "direct_fwd", "direct_bpi", "direct_bpf", "im2col_panels",
    "im2col_panels_t", "flip_filter", "filter_panels", "direct_fwd_8x2",
    "direct_bpf_8x1", "direct_bpf_8x2", "direct_fwd_line_8x2",
    "direct_bpf_gather_8x1", "direct_bpf_gather_8x2", "flip_filter_tiles",
};
/* clang-format on */

/* At most this many elements of split partial sums. */
#define PARTIAL_MAX_ELEMENTS ((int64_t)1 << 24)

/* ---- Ops ------------------------------------------------------------------ */

enum conv_kind {
  CONV_FORWARD,
  CONV_BACKPROP_INPUT,
  CONV_BACKPROP_FILTER,
  DW_FORWARD,
  DW_BACKPROP_INPUT,
  DW_BACKPROP_FILTER
};
/* conv_compute turns a convolution's kind into its depthwise one by
 * offset (as_depthwise). */
_Static_assert(DW_BACKPROP_INPUT - DW_FORWARD ==
                       CONV_BACKPROP_INPUT - CONV_FORWARD &&
                   DW_BACKPROP_FILTER - DW_FORWARD ==
                       CONV_BACKPROP_FILTER - CONV_FORWARD,
               "the depthwise kinds in the convolutions' order");

static const char *const input_sizes_arg[] = {"input_sizes", NULL};
static const char *const filter_sizes_arg[] = {"filter_sizes", NULL};
static const char *const host_args_arg[] = {"host_args", NULL};

struct conv_op {
  const char *op;
  enum conv_kind kind;
  int spatial; /* 2 or 3 */
  bool fused;  /* _FusedConv2D */
  const char *const *host_args;
  /* TensorFlow's name for the op in shape messages. */
  const char *label;
};

static const struct conv_op conv_ops[] = {
    {"Conv2D", CONV_FORWARD, 2, false, NULL, NULL},
    {"Conv2DBackpropInput", CONV_BACKPROP_INPUT, 2, false, input_sizes_arg,
     "Conv2DCustomBackpropInput"},
    {"Conv2DBackpropFilter", CONV_BACKPROP_FILTER, 2, false, filter_sizes_arg,
     "Conv2DCustomBackpropFilter"},
    {"DepthwiseConv2dNative", DW_FORWARD, 2, false, NULL, NULL},
    {"DepthwiseConv2dNativeBackpropInput", DW_BACKPROP_INPUT, 2, false,
     input_sizes_arg, "DepthwiseConv2DBackpropInput"},
    {"DepthwiseConv2dNativeBackpropFilter", DW_BACKPROP_FILTER, 2, false,
     filter_sizes_arg, "DepthwiseConv2DBackpropFilter"},
    {"Conv3D", CONV_FORWARD, 3, false, NULL, NULL},
    {"Conv3DBackpropInputV2", CONV_BACKPROP_INPUT, 3, false, input_sizes_arg,
     "Conv3DBackpropInputOp"},
    {"Conv3DBackpropFilterV2", CONV_BACKPROP_FILTER, 3, false,
     filter_sizes_arg, "Conv3DBackpropFilterOp"},
    {"_FusedConv2D", CONV_FORWARD, 2, true, host_args_arg, NULL},
    /* The V1 3-D gradients (deprecated in TensorFlow's GraphDef version 10,
     * still in old graphs): the input (filter) itself instead of its
     * shape, a device tensor whose dims alone are read, and no
     * data_format (NDHWC). */
    {"Conv3DBackpropInput", CONV_BACKPROP_INPUT, 3, false, NULL,
     "Conv3DBackpropInputOp"},
    {"Conv3DBackpropFilter", CONV_BACKPROP_FILTER, 3, false, NULL,
     "Conv3DBackpropFilterOp"},
};
#define NUM_CONV_OPS ((int)(sizeof(conv_ops) / sizeof(conv_ops[0])))

/* Whether a gradient takes its result's shape from a tensor's dims (the V1
 * 3-D gradients, which therefore have no host argument) rather than from
 * a sizes vector. */
static bool sizes_from_tensor(const struct conv_op *op)
{
  return (op->kind == CONV_BACKPROP_INPUT ||
          op->kind == CONV_BACKPROP_FILTER) &&
         op->host_args == NULL;
}

/* ---- Geometry ------------------------------------------------------------ */

/* Element strides (n, d, h, w, c) of a tensor with spatial dims sp[3] and
 * c channels in the geometry's layout. */
static void layout_strides(bool nchw, const int64_t *sp, int64_t c,
                           int64_t *s)
{
  int64_t pixels = sp[0] * sp[1] * sp[2];
  if (nchw) {
    s[0] = c * pixels;
    s[1] = sp[1] * sp[2];
    s[2] = sp[2];
    s[3] = 1;
    s[4] = pixels;
  } else {
    s[0] = pixels * c;
    s[1] = sp[1] * sp[2] * c;
    s[2] = sp[2] * c;
    s[3] = c;
    s[4] = 1;
  }
}

static void geo_fields(const struct conv_geo *g, int64_t *v)
{
  int i = 0;
  v[i++] = g->batch;
  v[i++] = g->groups;
  v[i++] = g->cg;
  v[i++] = g->og;
  v[i++] = g->mult;
  v[i++] = g->cin;
  v[i++] = g->cout;
  const int64_t *const dims[6] = {g->in, g->k, g->out, g->s, g->dl, g->pad};
  for (int a = 0; a < 6; a++)
    for (int d = 0; d < 3; d++)
      v[i++] = dims[a][d];
  layout_strides(g->nchw, g->in, g->cin, &v[i]);
  i += 5;
  layout_strides(g->nchw, g->out, g->cout, &v[i]);
}

/* A 2-D geometry from conv_geometry.c's. */
static void geo_from_2d(struct conv_geo *g, const struct ocl_conv2d *c,
                        bool nchw, bool depthwise)
{
  memset(g, 0, sizeof(*g));
  g->nchw = nchw;
  g->batch = c->batch;
  g->cin = c->in_depth;
  g->cout = c->out_depth;
  if (depthwise) {
    g->groups = 1;
    g->mult = c->depth_multiplier;
    g->cg = c->in_depth;
    g->og = c->out_depth;
  } else {
    g->groups = c->groups;
    g->mult = 1;
    g->cg = c->filter_depth;
    g->og = c->groups > 0 ? c->out_depth / c->groups : c->out_depth;
  }
  int64_t v[6][3] = {
      {1, c->in_rows, c->in_cols},       {1, c->filter_rows, c->filter_cols},
      {1, c->out_rows, c->out_cols},     {1, c->stride_rows, c->stride_cols},
      {1, c->dilation_rows, c->dilation_cols}, {0, c->pad_top, c->pad_left},
  };
  memcpy(g->in, v[0], sizeof(g->in));
  memcpy(g->k, v[1], sizeof(g->k));
  memcpy(g->out, v[2], sizeof(g->out));
  memcpy(g->s, v[3], sizeof(g->s));
  memcpy(g->dl, v[4], sizeof(g->dl));
  memcpy(g->pad, v[5], sizeof(g->pad));
}

/* ---- One compute call ---------------------------------------------------- */

void conv_run_set_geo(struct run *r, const struct conv_geo *g)
{
  int64_t v[GEO_FIELDS];
  geo_fields(g, v);
  for (int i = 0; i < GEO_FIELDS; i++) {
    if (r->wide)
      r->geo.l[i] = v[i];
    else
      r->geo.i[i] = (cl_int)v[i];
  }
  r->geo_size = r->wide ? sizeof(cl_long) * GEO_FIELDS
                        : sizeof(cl_int) * GEO_FIELDS;
}

bool conv_fill_zero(struct run *r, TF_Tensor *t)
{
  size_t bytes = ocl_tf.TensorByteSize(t);
  const cl_uchar zero = 0;
  return bytes == 0 || ocl_op_fill(r->op, t, 0, &zero, 1, bytes);
}

bool conv_splitk_sum(struct run *r, const TF_Tensor *partial,
                     const TF_Tensor *out, int64_t n, int64_t splits)
{
  const struct ocl_arg args[] = {
      OCL_TENSOR(partial), OCL_TENSOR(out), idx_arg(r, n), idx_arg(r, splits),
  };
  return ocl_launch_1d(r->op, kern(r, K_SPLITK_SUM), (size_t)n, args,
                       NARGS(args));
}

int64_t conv_split_reduction(int64_t length, int64_t groups, int64_t target,
                             int64_t min_piece, int64_t align,
                             int64_t per_split, int64_t *chunk)
{
  int64_t splits = groups >= target ? 1 : ceil_div(target, groups);
  int64_t by_length = length / min_piece;
  if (splits > by_length)
    splits = by_length;
  int64_t by_memory = per_split > 0 ? PARTIAL_MAX_ELEMENTS / per_split : 1;
  if (splits > by_memory)
    splits = by_memory;
  if (splits < 1)
    splits = 1;
  *chunk = ceil_div(ceil_div(length, splits), align) * align;
  return ceil_div(length, *chunk);
}

/* ---- Which kernels -------------------------------------------------------- */

/* The im2col/GEMM path takes float and half ungrouped convolutions on
 * CPU-shaped devices, where the GEMM is a packed vector kernel or a host
 * BLAS; everything else takes the implicit GEMM. */
static bool use_gemm(const struct run *r, const struct conv_geo *g)
{
  return r->info->cpu_shape && g->groups == 1 &&
         (r->dtype == TF_FLOAT || r->dtype == TF_HALF);
}

static bool conv_forward(struct run *r, const struct conv_geo *g,
                         const TF_Tensor *x, const TF_Tensor *f,
                         TF_Tensor *y, const TF_Tensor *bias)
{
  if (taps_of(g) * g->cg == 0) {
    /* Nothing to sum: zeros, then the fused epilogue if any. */
    return conv_fill_zero(r, y) &&
           (bias == NULL || conv_bias_act(r, g, y, bias));
  }
  if (use_gemm(r, g)) {
    bool done = false;
    if (conv_direct_enabled() &&
        !conv_direct_forward(r, g, x, f, y, bias, &done))
      return false;
    return done || (conv_gemm_forward(r, g, x, f, y) &&
                    (bias == NULL || conv_bias_act(r, g, y, bias)));
  }
  return conv_igemm_forward(r, g, x, f, y, bias);
}

static bool conv_backprop_input(struct run *r, const struct conv_geo *g,
                                const TF_Tensor *f, const TF_Tensor *dy,
                                TF_Tensor *dx)
{
  if (g->batch * out_pixels(g) == 0 || g->cout == 0 || taps_of(g) == 0)
    return conv_fill_zero(r, dx);
  if (use_gemm(r, g))
    return conv_gemm_backprop_input(r, g, f, dy, dx);
  return conv_igemm_backprop_input(r, g, f, dy, dx);
}

static bool conv_backprop_filter(struct run *r, const struct conv_geo *g,
                                 const TF_Tensor *x, const TF_Tensor *dy,
                                 TF_Tensor *dw)
{
  if (g->batch * out_pixels(g) == 0)
    return conv_fill_zero(r, dw);
  if (use_gemm(r, g)) {
    bool done = false;
    if (conv_direct_enabled() &&
        !conv_direct_backprop_filter(r, g, x, dy, dw, &done))
      return false;
    return done || conv_gemm_backprop_filter(r, g, x, dy, dw);
  }
  return conv_igemm_backprop_filter(r, g, x, dy, dw);
}

/* ---- Construction ------------------------------------------------------------ */

/* An int list attribute into vals[max]; its length, or -1 with the status
 * set. Absent (older graphs without explicit_paddings): 0 when optional. A
 * list longer than max is not read: the checks reject its length. */
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
  if (size > max)
    return size;
  if (size > 0)
    ocl_tf.OpKernelConstruction_GetAttrInt64List(ctx, name, vals, size,
                                                 status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return -1;
  /* TensorFlow reads strides and dilations as int32 lists and refuses what
   * does not fit; explicit_paddings are int64. */
  if (strcmp(name, "explicit_paddings") != 0) {
    for (int i = 0; i < size; i++) {
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

/* A string attribute; absent ones read as `fallback` when given. */
static bool get_string(TF_OpKernelConstruction *ctx, const char *name,
                       char *buf, size_t len, const char *fallback,
                       TF_Status *status)
{
  if (ocl_string_attr(ctx, name, buf, len, status))
    return true;
  if (fallback == NULL || ocl_tf.OpKernelConstruction_GetAttrString == NULL)
    return false;
  ocl_set_ok(status);
  snprintf(buf, len, "%s", fallback);
  return true;
}

/* In enum conv_activation's order (ocl_fused_activation_attr). */
static const char *const fused_activations[] = {
    "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid",
};
#define NUM_FUSED_ACTIVATIONS \
  ((int)(sizeof(fused_activations) / sizeof(fused_activations[0])))

/* _FusedConv2D's fused_ops, num_args, leakyrelu_alpha and filter_format,
 * as TensorFlow's FusedConv2DOp reads them, with its messages. */
static bool fused_attrs(TF_OpKernelConstruction *ctx, struct conv_kernel *k,
                        TF_Status *status)
{
  int act = ocl_fused_activation_attr(ctx, "Fused Conv2D", fused_activations,
                                      NUM_FUSED_ACTIVATIONS, status);
  if (act < 0)
    return false;
  k->act = (enum conv_activation)act;
  int64_t num_args = 0;
  ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "num_args", &num_args, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return false;
  if (num_args != 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Fused Conv2D with BiasAdd must have one extra argument: "
                   "bias or 4 extra arguments: bias, side_input, "
                   "conv_input_scale and side_input_scale");
    return false;
  }
  k->alpha = 0.2f;
  if (k->act == ACT_LEAKY_RELU) {
    ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "leakyrelu_alpha",
                                             &k->alpha, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      return false;
  }
  char filter_format[16];
  if (!get_string(ctx, "filter_format", filter_format, sizeof(filter_format),
                  "HWIO", status))
    return false;
  if (strcmp(filter_format, "HWIO") != 0) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "_FusedConv2D with filter_format %s is not supported on "
                   "the OPENCL device (HWIO only)",
                   filter_format);
    return false;
  }
  return true;
}

static enum conv_storage storage_of(TF_DataType dtype)
{
  switch (dtype) {
  case TF_HALF: return CS_HALF;
  case TF_DOUBLE: return CS_DOUBLE;
  case TF_BFLOAT16: return CS_BF16;
  default: return CS_FLOAT;
  }
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
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->storage = storage_of(k->dtype);
  struct conv_attrs *a = &k->attrs;
  a->num_strides = get_int_list(ctx, "strides", a->strides, 5, false, status);
  if (a->num_strides < 0)
    goto fail;
  a->num_dilations =
      get_int_list(ctx, "dilations", a->dilations, 5, false, status);
  if (a->num_dilations < 0)
    goto fail;
  a->num_explicit_paddings = get_int_list(
      ctx, "explicit_paddings", a->explicit_paddings, 8, true, status);
  if (a->num_explicit_paddings < 0)
    goto fail;
  if (!get_string(ctx, "padding", padding, sizeof(padding), NULL, status) ||
      !get_string(ctx, "data_format", format, sizeof(format),
                  sizes_from_tensor(op) ? "NDHWC" : NULL, status))
    goto fail;
  if (!ocl_padding_parse(padding, &a->padding)) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Value for attr 'padding' of \"%s\" is not in the list of "
                   "allowed values: \"SAME\", \"VALID\", \"EXPLICIT\"",
                   padding);
    goto fail;
  }
  const char *last = op->spatial == 3 ? "NDHWC" : "NHWC";
  const char *first = op->spatial == 3 ? "NCDHW" : "NCHW";
  if (op->fused && strcmp(format, "NCHW_VECT_C") == 0) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "_FusedConv2D in NCHW_VECT_C is not supported on the "
                   "OPENCL device");
    goto fail;
  }
  if (strcmp(format, last) != 0 && strcmp(format, first) != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "Invalid data format");
    goto fail;
  }
  a->channels_first = strcmp(format, first) == 0;
  if (op->fused && !fused_attrs(ctx, k, status))
    goto fail;
  if (op->spatial == 3) {
    if (!conv3d_check_attrs(a, status))
      goto fail;
  } else {
    struct ocl_conv_attrs *a2 = &k->attrs2d;
    a2->channels_first = a->channels_first;
    a2->padding = a->padding;
    a2->num_strides = a->num_strides;
    a2->num_dilations = a->num_dilations;
    a2->num_explicit_paddings = a->num_explicit_paddings;
    if (a->num_strides <= 4)
      memcpy(a2->strides, a->strides, sizeof(int64_t) * (size_t)a->num_strides);
    if (a->num_dilations <= 4)
      memcpy(a2->dilations, a->dilations,
             sizeof(int64_t) * (size_t)a->num_dilations);
    memcpy(a2->explicit_paddings, a->explicit_paddings,
           sizeof(a2->explicit_paddings));
    enum ocl_conv_check check = op->kind == CONV_BACKPROP_INPUT
                                    ? OCL_CHECK_BACKPROP_INPUT
                                : op->kind == CONV_BACKPROP_FILTER
                                    ? OCL_CHECK_BACKPROP_FILTER
                                : op->kind >= DW_FORWARD ? OCL_CHECK_DEPTHWISE
                                                         : OCL_CHECK_CONV2D;
    if (!ocl_conv_check_kind(a2, check, status))
      goto fail;
  }
  for (int w = 0; w < 2; w++)
    for (int i = 0; i < NUM_KERNS; i++)
      if (!ocl_kernel_init(&k->kernels[w][i], &programs[w][k->storage],
                           conv_kern_names[i])) {
        ocl_set_status(status, TF_INTERNAL, "kernel name too long: %s",
                       conv_kern_names[i]);
        goto fail;
      }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

_Static_assert(NUM_CONV_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per conv op");
OCL_FAMILY_CREATES(conv, conv_create);

/* ---- Compute ------------------------------------------------------------------ */

/* A tensor's dims into dims[OCL_MAX_RANK]; its rank. */
static int tensor_dims(const TF_Tensor *t, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  for (int i = 0; i < rank && i < OCL_MAX_RANK; i++)
    dims[i] = ocl_tf.Dim(t, i);
  return rank;
}

/* The host-memory shape argument (input_sizes or filter_sizes) of a
 * backprop op as dims[5]: its values checked as TensorFlow's MakeShape
 * checks them (a vector of non-negative sizes). */
static bool sizes_shape(struct ocl_op *op, const struct conv_kernel *k,
                        const TF_Tensor *sizes, const int64_t *filter,
                        int filter_rank, const int64_t *dout, int dout_rank,
                        int64_t *dims, int *rank)
{
  enum conv_kind kind = k->op->kind;
  int sizes_rank = ocl_tf.NumDims(sizes);
  int64_t count = ocl_tf.TensorElementCount(sizes);
  bool input_sizes = kind == CONV_BACKPROP_INPUT || kind == DW_BACKPROP_INPUT;
  if (k->op->spatial == 2 && kind == CONV_BACKPROP_INPUT) {
    int32_t v[4] = {0};
    for (int64_t i = 0; i < count && i < 4; i++)
      v[i] = (int32_t)ocl_host_int(sizes, i);
    *rank = 4;
    return ocl_conv_input_sizes(v, count, sizes_rank, filter, filter_rank,
                                dout, dout_rank, k->attrs.channels_first, dims,
                                op->status);
  }
  if (sizes_rank != 1) {
    if (k->op->spatial == 3 && input_sizes) {
      int64_t sd[OCL_MAX_RANK];
      char s[160];
      ocl_shape_format(sd, tensor_dims(sizes, sd), s, sizeof(s));
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "shape must be a vector of {int32,int64}, got shape "
                         "%s",
                         s);
    }
    if (k->op->spatial == 3)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "filter_sizes shape must be rank 1 but is rank %d",
                         sizes_rank);
    if (kind == CONV_BACKPROP_FILTER)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "Conv2DBackpropFilter: filter_sizes input must be "
                         "1-dim, not %d",
                         sizes_rank);
    return ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s: %s input must be 1-dim, not %d",
                       input_sizes ? "Conv2DBackpropInput"
                                   : "Conv2DBackpropFilter",
                       input_sizes ? "input_sizes" : "filter_sizes",
                       sizes_rank);
  }
  if (count > 5) {
    /* No valid shape of this rank: the rank checks below say so. */
    *rank = (int)count;
    return true;
  }
  for (int64_t i = 0; i < count; i++) {
    int64_t v = ocl_host_int(sizes, i);
    if (v < 0) {
      if (kind == DW_BACKPROP_INPUT)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "Dimension %lld of input_sizes must be >= 0",
                           (long long)i);
      return ocl_op_fail(op, TF_INVALID_ARGUMENT, "Dimension %lld must be >= 0",
                         (long long)v);
    }
    dims[i] = v;
  }
  *rank = (int)count;
  return true;
}

/* _FusedConv2D's bias: a vector of out_depth values. */
static bool check_bias(struct ocl_op *op, const TF_Tensor *bias, int64_t cout)
{
  int64_t dims[OCL_MAX_RANK];
  int rank = tensor_dims(bias, dims);
  if (rank != 1) {
    char s[160];
    ocl_shape_format(dims, rank, s, sizeof(s));
    return ocl_op_fail(op, TF_INVALID_ARGUMENT, "bias must be 1-dimensional%s",
                       s);
  }
  if (dims[0] != cout)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "bias must have as many elements as the output depth: "
                       "%lld vs %lld",
                       (long long)dims[0], (long long)cout);
  return true;
}

/* Grouped: every group must have as many output channels. */
static bool check_groups(struct ocl_op *op, const struct conv_geo *g)
{
  if (g->groups > 1 && g->cout % g->groups != 0)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "output depth must be evenly divisible by number of "
                       "groups: %lld vs %lld",
                       (long long)g->cout, (long long)g->groups);
  return true;
}

/* A Conv2D whose groups take one input channel each (ConvNeXt's 7x7
 * Conv2D(groups=C)) is a depthwise convolution with a multiplier of its
 * outputs per group, over the same filter memory ([kh, kw, 1, cout]
 * against [kh, kw, cin, multiplier]): its geometry as the depthwise
 * kernels take it. A 7x7 one of 96 channels on [8, 8, 8, 96] took 1.90 ms
 * in the grouped implicit GEMM's direct kernel, 0.10 ms as a depthwise
 * one. */
static bool as_depthwise(struct conv_geo *g)
{
  if (g->groups <= 1 || g->cg != 1)
    return false;
  g->mult = g->og;
  g->cg = g->cin;
  g->og = g->cout;
  g->groups = 1;
  return true;
}

/* Index math fits in int: every tensor below this many elements (with
 * headroom for tile overshoot). */
#define NARROW_MAX_ELEMENTS ((int64_t)1 << 30)

static void conv_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct conv_kernel *k = kernel;
  const struct conv_op *cop = k->op;
  enum conv_kind kind = cop->kind;
  struct ocl_op op;
  ocl_op_begin(&op, ctx);
  int num_inputs = kind == CONV_FORWARD || kind == DW_FORWARD ? 2 : 3;
  if (cop->fused)
    num_inputs = 3;
  TF_Tensor *in[3] = {NULL, NULL, NULL};
  int64_t d[3][OCL_MAX_RANK];
  int r[3] = {0, 0, 0};
  struct conv_geo g;
  int64_t out_dims[5];
  int out_rank = cop->spatial + 2;

  for (int i = 0; i < num_inputs; i++) {
    in[i] = ocl_op_input(&op, i);
    if (in[i] == NULL)
      goto done;
  }
  bool v1 = sizes_from_tensor(cop);
  bool input_sizes =
      !v1 && (kind == CONV_BACKPROP_INPUT || kind == DW_BACKPROP_INPUT);
  bool filter_sizes =
      !v1 && (kind == CONV_BACKPROP_FILTER || kind == DW_BACKPROP_FILTER);
  for (int i = 0; i < num_inputs && i < 3; i++)
    if (!(input_sizes && i == 0) && !(filter_sizes && i == 1))
      r[i] = tensor_dims(in[i], d[i]);
  /* d[0] input, d[1] filter, d[2] out_backprop, whatever the op. The
   * message is TensorFlow's, wrong name and all. */
  if (cop->spatial == 2 && kind == CONV_BACKPROP_INPUT && r[2] != 4) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "input_sizes must be 4-dimensional, got: %d", r[2]);
    goto done;
  }
  if (input_sizes &&
      !sizes_shape(&op, k, in[0], d[1], r[1], d[2], r[2], d[0], &r[0]))
    goto done;
  if (filter_sizes &&
      !sizes_shape(&op, k, in[1], NULL, 0, d[2], r[2], d[1], &r[1]))
    goto done;

  bool ok;
  if (cop->spatial == 3) {
    if (kind == CONV_FORWARD)
      ok = conv3d_forward_init(&g, &k->attrs, d[0], r[0], d[1], r[1],
                               out_dims, op.status);
    else
      ok = conv3d_backprop_init(&g, cop->label, &k->attrs, d[0], r[0], d[1],
                                r[1], d[2], r[2], op.status);
  } else {
    struct ocl_conv2d c;
    const struct ocl_conv_attrs *a2 = &k->attrs2d;
    switch (kind) {
    case CONV_FORWARD:
      ok = ocl_conv2d_forward_init(&c, a2, d[0], r[0], d[1], r[1],
                                   op.status) &&
           (cop->fused || ocl_conv2d_check_filter(&c, d[0], d[1], op.status));
      break;
    case CONV_BACKPROP_INPUT:
    case CONV_BACKPROP_FILTER:
      ok = ocl_conv2d_backprop_init(&c, cop->label, a2, d[0], r[0], d[1],
                                    r[1], d[2], r[2], op.status);
      break;
    case DW_FORWARD:
      ok = ocl_depthwise_init(&c, NULL, a2, d[0], r[0], d[1], r[1], NULL, 0,
                              op.status);
      break;
    default:
      ok = ocl_depthwise_init(&c, cop->label, a2, d[0], r[0], d[1], r[1],
                              d[2], r[2], op.status);
      break;
    }
    if (ok) {
      geo_from_2d(&g, &c, a2->channels_first, kind >= DW_FORWARD);
      memcpy(out_dims, c.out_dims, sizeof(c.out_dims));
    }
  }
  if (!ok || !check_groups(&op, &g))
    goto done;
  if (cop->fused && !check_bias(&op, in[2], g.cout))
    goto done;

  const int64_t *result_dims = out_dims;
  if (kind == CONV_BACKPROP_INPUT || kind == DW_BACKPROP_INPUT)
    result_dims = d[0];
  else if (kind == CONV_BACKPROP_FILTER || kind == DW_BACKPROP_FILTER)
    result_dims = d[1];
  TF_Tensor *out = ocl_op_output(&op, 0, k->dtype, result_dims, out_rank);
  if (out == NULL || ocl_shape_elements(result_dims, out_rank) == 0)
    goto done;
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto done;
  if (k->dtype == TF_DOUBLE && !info->has_fp64) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "%s in float64 needs an OpenCL device with cl_khr_fp64; "
                "OpenCL device %d has none",
                cop->op, info->ordinal);
    goto done;
  }

  int64_t biggest = 0;
  for (int i = 0; i < num_inputs; i++) {
    int64_t n = ocl_tf.TensorElementCount(in[i]);
    biggest = n > biggest ? n : biggest;
  }
  int64_t n_out = ocl_tf.TensorElementCount(out);
  biggest = n_out > biggest ? n_out : biggest;
  struct run run = {
      .op = &op,
      .k = k,
      .info = info,
      .dtype = k->dtype,
      .wide = biggest > NARROW_MAX_ELEMENTS,
  };
  if (kind < DW_FORWARD && cop->spatial == 2 && as_depthwise(&g))
    kind = (enum conv_kind)(kind + DW_FORWARD - CONV_FORWARD);
  conv_run_set_geo(&run, &g);
  switch (kind) {
  case CONV_FORWARD:
    conv_forward(&run, &g, in[0], in[1], out, cop->fused ? in[2] : NULL);
    break;
  case CONV_BACKPROP_INPUT:
    conv_backprop_input(&run, &g, in[1], in[2], out);
    break;
  case CONV_BACKPROP_FILTER:
    conv_backprop_filter(&run, &g, in[0], in[2], out);
    break;
  case DW_FORWARD:
    if (conv_dw_forward(&run, &g, in[0], in[1], out) && cop->fused)
      conv_bias_act(&run, &g, out, in[2]);
    break;
  case DW_BACKPROP_INPUT:
    conv_dw_backprop_input(&run, &g, in[1], in[2], out);
    break;
  case DW_BACKPROP_FILTER:
    conv_dw_backprop_filter(&run, &g, in[0], in[2], out);
    break;
  }
done:
  ocl_op_end(&op);
}

static void conv_delete(void *kernel) { free(kernel); }

/* ---- Registration ------------------------------------------------------------ */

void ocl_register_conv_kernels(void)
{
  /* TensorFlow's GPU kernels: half, bfloat16, float and double for the
   * convolutions and their gradients; float and half for _FusedConv2D.
   * Conv3DBackpropInputV2's Tshape is left free, as there (the host reads
   * input_sizes of either width). */
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_BFLOAT16,
                                      TF_DOUBLE};
  for (int i = 0; i < NUM_CONV_OPS; i++) {
    const struct conv_op *op = &conv_ops[i];
    /* The V1 3-D gradients' T: half, float and double. */
    int num_types = op->fused ? 2 : 4;
    for (int t = 0; t < num_types; t++) {
      if (sizes_from_tensor(op) && types[t] == TF_BFLOAT16)
        continue;
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = conv_creates[i],
          .compute = conv_compute,
          .destroy = conv_delete,
          .type_attrs = {"T"},
          .types = {types[t]},
          .host_args = op->host_args,
      });
    }
  }
}
