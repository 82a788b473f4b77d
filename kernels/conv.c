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
 * CPU shape (PoCL). float and half ungrouped convolutions run on the
 * matmul family's GEMM (gemm.h) with the filter as a [taps * Cin, Cout]
 * matrix:
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
 * (then the -DIDX64 build of the same source). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_geometry.h"
#include "gemm.h"
#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_conv[];

/* ---- Programs and kernels ----------------------------------------------- */

enum conv_storage { CS_FLOAT, CS_HALF, CS_DOUBLE, CS_BF16, NUM_CS };

#define CONV_PROGRAMS(name, extra)                                         \
  {                                                                        \
    {name "_float", ocl_cl_source_conv, "-DT=float -DT_IS_FLOAT" extra},   \
    {name "_half", ocl_cl_source_conv, "-DT=half -DT_IS_HALF" extra},      \
    {name "_double", ocl_cl_source_conv, "-DT=double -DT_IS_DOUBLE" extra},\
    {name "_bf16", ocl_cl_source_conv, "-DT=ushort -DT_IS_BFLOAT16" extra},\
  }

/* [wide][storage]: wide = 64-bit index arithmetic. */
static const struct ocl_program programs[2][NUM_CS] = {
    CONV_PROGRAMS("conv", ""),
    CONV_PROGRAMS("conv64", " -DIDX64"),
};

enum conv_kern {
  K_IM2COL, K_COL2IM, K_TO_FLOAT, K_NCHW_TO_NHWC, K_BIAS_ACT,
  K_DW_FWD_ROWS, K_DW_BPI_ROWS, K_DW_BPF_ROWS, K_SPLITK_SUM,
  K_DW_FWD_ELEM, K_DW_BPI_ELEM, K_DW_BPF_NHWC, K_DW_BPF_NCHW,
  K_FWD_64, K_FWD_32, K_FWD_16,
  K_BPI_64, K_BPI_32, K_BPI_16,
  K_BPF_64, K_BPF_32, K_BPF_16,
  K_DIRECT_FWD, K_DIRECT_BPI, K_DIRECT_BPF, K_IM2COL_PANELS,
  K_IM2COL_PANELS_T, K_FLIP_FILTER, NUM_KERNS
};

static const char *const kern_names[NUM_KERNS] = {
    "im2col", "col2im", "to_float", "nchw_to_nhwc", "bias_act",
    "dw_fwd_rows", "dw_bpi_rows", "dw_bpf_rows", "splitk_sum",
    "dw_fwd_elem", "dw_bpi_elem", "dw_bpf_nhwc", "dw_bpf_nchw",
    "igemm_fwd_64", "igemm_fwd_32", "igemm_fwd_16",
    "igemm_bpi_64", "igemm_bpi_32", "igemm_bpi_16",
    "igemm_bpf_64", "igemm_bpf_32", "igemm_bpf_16",
    "direct_fwd", "direct_bpi", "direct_bpf", "im2col_panels",
    "im2col_panels_t", "flip_filter",
};

/* conv.cl's igemm flags and depth of a k slice. */
enum { IG_A_FAST_K = 1, IG_B_FAST_K = 2, IG_SWAP = 4, IG_BIAS = 8 };
enum { IG_TK = 16 };
/* conv.cl's DW_LANES. */
enum { DW_LANES = 64 };

/* At most this many elements per im2col temp (64 MiB of float): big images
 * go through in chunks instead of one temp of rows * K. */
#define COL_MAX_ELEMENTS ((int64_t)1 << 24)
/* The GEMM's A panels (CPU devices) go in chunks of about this many
 * elements (4 MiB), what the cores' caches hold between the kernel that
 * writes them and the GEMM that reads them: conv2d/forward of tfocl bench
 * ran at 31 GFLOP/s with one 9 MiB chunk, 46-62 with 2.4-4.8 MiB ones. */
#define PANEL_CHUNK_ELEMENTS ((int64_t)1 << 20)
/* At most this many elements of split partial sums. */
#define PARTIAL_MAX_ELEMENTS ((int64_t)1 << 24)
/* The GPU shape's direct kernels take products whose tile columns (output
 * channels of a group; input channels for the input gradient) are fewer
 * than this: a GEMM tile would be mostly padding. */
#define DIRECT_MAX_COLS 16
/* ... and filter gradients of at most this many multiply-adds (beyond, a
 * work-item per filter element is too few work-items). */
#define DIRECT_MAX_BPF_MACS ((int64_t)1 << 22)

/* _FusedConv2D's activations: conv.cl's ACT_*. */
enum conv_activation {
  ACT_NONE, ACT_RELU, ACT_RELU6, ACT_ELU, ACT_LEAKY_RELU, ACT_TANH,
  ACT_SIGMOID
};

/* ---- Ops ------------------------------------------------------------------ */

enum conv_kind {
  CONV_FORWARD,
  CONV_BACKPROP_INPUT,
  CONV_BACKPROP_FILTER,
  DW_FORWARD,
  DW_BACKPROP_INPUT,
  DW_BACKPROP_FILTER
};

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

/* The attributes, as read at construction: strides and dilations hold up
 * to 5 values (counts beyond are kept so that the checks reject them). */
struct conv_attrs {
  bool channels_first;
  enum ocl_padding padding;
  int64_t strides[5];
  int num_strides;
  int64_t dilations[5];
  int num_dilations;
  int64_t explicit_paddings[8];
  int num_explicit_paddings;
};

struct conv_kernel {
  const struct conv_op *op;
  TF_DataType dtype;
  enum conv_storage storage;
  struct conv_attrs attrs;
  struct ocl_conv_attrs attrs2d; /* 2-D ops: conv_geometry.c's form */
  enum conv_activation act;      /* _FusedConv2D */
  float alpha;                   /* LeakyRelu */
  struct ocl_kernel kernels[2][NUM_KERNS];
};

/* ---- Geometry ------------------------------------------------------------- */

/* One convolution, layout-independent; spatial dims in (d, h, w) order, a
 * 2-D one with d = 1 and no padding there. The image side is the input
 * (x, or dx for the input gradient), the out side the output (y, or dy). */
struct conv_geo {
  bool nchw; /* channels first */
  int64_t batch, groups, cg, og, mult, cin, cout;
  int64_t in[3], k[3], out[3], s[3], dl[3], pad[3];
};

#define GEO_FIELDS 35

/* conv.cl's geo_t in one index width. */
union geo_args {
  cl_int i[GEO_FIELDS];
  cl_long l[GEO_FIELDS];
};

static int64_t taps_of(const struct conv_geo *g)
{
  return g->k[0] * g->k[1] * g->k[2];
}

static int64_t in_pixels(const struct conv_geo *g)
{
  return g->in[0] * g->in[1] * g->in[2];
}

static int64_t out_pixels(const struct conv_geo *g)
{
  return g->out[0] * g->out[1] * g->out[2];
}

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

/* ---- 3-D shapes (conv_ops_3d.cc, conv_grad_shape_utils.cc) ---------------- */

/* Index of dim 'N', 'C' or spatial dim 0..2 in a 5-D shape. */
static int dim5(bool channels_first, int which)
{
  if (which == 'N')
    return 0;
  if (which == 'C')
    return channels_first ? 1 : 4;
  return channels_first ? 2 + which : 1 + which;
}

static bool conv3d_check_attrs(const struct conv_attrs *a, TF_Status *status)
{
  bool cf = a->channels_first;
  if (a->num_strides != 5) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Sliding window strides field must specify 5 dimensions");
    return false;
  }
  if (a->strides[dim5(cf, 'N')] != 1 || a->strides[dim5(cf, 'C')] != 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Current implementation does not yet support strides in "
                   "the batch and depth dimensions.");
    return false;
  }
  for (int i = 0; i < 3; i++) {
    if (a->strides[dim5(cf, i)] <= 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Spatial strides should be larger than 0.");
      return false;
    }
  }
  if (a->num_dilations != 5) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Dilation rates field must specify 5 dimensions");
    return false;
  }
  if (a->dilations[dim5(cf, 'N')] != 1 || a->dilations[dim5(cf, 'C')] != 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Current implementation does not yet support dilation "
                   "rates in the batch and depth dimensions.");
    return false;
  }
  for (int i = 0; i < 3; i++) {
    if (a->dilations[dim5(cf, i)] <= 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Dilated rates should be larger than 0.");
      return false;
    }
  }
  if (a->padding == OCL_PADDING_EXPLICIT) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Value for attr 'padding' of \"EXPLICIT\" is not in the "
                   "list of allowed values: \"SAME\", \"VALID\"");
    return false;
  }
  return true;
}

/* Spatial sizes, strides, dilations and the output size with its padding
 * for each of the 3 spatial dims. */
static bool conv3d_windows(struct conv_geo *g, const struct conv_attrs *a,
                           const int64_t *input, const int64_t *filter,
                           TF_Status *status)
{
  bool cf = a->channels_first;
  for (int i = 0; i < 3; i++) {
    g->in[i] = input[dim5(cf, i)];
    g->k[i] = filter[i];
    g->s[i] = a->strides[dim5(cf, i)];
    g->dl[i] = a->dilations[dim5(cf, i)];
    int64_t after = 0;
    g->pad[i] = 0;
    if (!ocl_windowed_output_size(g->in[i], g->k[i], g->dl[i], g->s[i],
                                  a->padding, &g->out[i], &g->pad[i], &after,
                                  status))
      return false;
  }
  return true;
}

static void conv3d_format_dims(bool cf, int64_t n, const int64_t *sp,
                               int64_t c, int64_t *dims)
{
  dims[0] = n;
  dims[dim5(cf, 'C')] = c;
  for (int i = 0; i < 3; i++)
    dims[dim5(cf, i)] = sp[i];
}

/* Conv3DOp::Compute's checks. */
static bool conv3d_forward_init(struct conv_geo *g, const struct conv_attrs *a,
                                const int64_t *input, int input_rank,
                                const int64_t *filter, int filter_rank,
                                int64_t *out_dims, TF_Status *status)
{
  bool cf = a->channels_first;
  memset(g, 0, sizeof(*g));
  g->nchw = cf;
  if (input_rank != 5) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "input must be 5-dimensional");
    return false;
  }
  if (filter_rank != 5) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "filter must be 5-dimensional");
    return false;
  }
  g->batch = input[0];
  g->cin = input[dim5(cf, 'C')];
  g->cg = filter[3];
  g->cout = filter[4];
  if (g->cg == 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "filter_depth must be non-zero");
    return false;
  }
  if (g->cin % g->cg != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Input depth must be evenly divisible by filter depth: "
                   "%lld vs %lld",
                   (long long)g->cin, (long long)g->cg);
    return false;
  }
  /* Conv3D refuses an empty filter even for an empty output. */
  if (ocl_shape_elements(filter, 5) == 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "filter must not have zero elements (i.e. all dimensions "
                   "must be non-zero)");
    return false;
  }
  g->groups = g->cin / g->cg;
  g->og = g->cout / g->groups;
  g->mult = 1;
  if (!conv3d_windows(g, a, input, filter, status))
    return false;
  conv3d_format_dims(cf, g->batch, g->out, g->cout, out_dims);
  return true;
}

/* ConvBackpropComputeDimensionsV2 for 3 spatial dims, with `label`. */
static bool conv3d_backprop_init(struct conv_geo *g, const char *label,
                                 const struct conv_attrs *a,
                                 const int64_t *input, int input_rank,
                                 const int64_t *filter, int filter_rank,
                                 const int64_t *out, int out_rank,
                                 TF_Status *status)
{
  bool cf = a->channels_first;
  memset(g, 0, sizeof(*g));
  g->nchw = cf;
  const char *bad = input_rank != 5    ? "input"
                    : filter_rank != 5 ? "filter"
                    : out_rank != 5    ? "out_backprop"
                                       : NULL;
  if (bad != NULL) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "%s: %s must be 5-dimensional",
                   label, bad);
    return false;
  }
  g->batch = input[0];
  if (g->batch != out[0]) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: input and out_backprop must have the same batch "
                   "size. Input batch: %lld, outbackprop batch: %lld, "
                   "batch_dim: 0",
                   label, (long long)g->batch, (long long)out[0]);
    return false;
  }
  g->cin = input[dim5(cf, 'C')];
  g->cg = filter[3];
  if (g->cg <= 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: filter depth must be strictly greated than zero",
                   label);
    return false;
  }
  if (g->cin % g->cg != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: input depth must be evenly divisible by filter depth",
                   label);
    return false;
  }
  g->groups = g->cin / g->cg;
  g->mult = 1;
  g->cout = filter[4];
  g->og = g->cout / g->groups;
  if (g->cout != out[dim5(cf, 'C')]) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: filter and out_backprop must have the same out_depth",
                   label);
    return false;
  }
  if (!conv3d_windows(g, a, input, filter, status))
    return false;
  for (int i = 0; i < 3; i++) {
    int dim = dim5(cf, i);
    if (out[dim] != g->out[i]) {
      ocl_set_status(
          status, TF_INVALID_ARGUMENT,
          "%s: Size of out_backprop doesn't match computed: actual = %lld, "
          "computed = %lld spatial_dim: %d input: %lld filter: %lld output: "
          "%lld stride: %lld dilation: %lld",
          label, (long long)out[dim], (long long)g->out[i], dim,
          (long long)g->in[i], (long long)g->k[i], (long long)out[dim],
          (long long)g->s[i], (long long)g->dl[i]);
      return false;
    }
  }
  return true;
}

/* ---- One compute call ------------------------------------------------------ */

struct run {
  struct ocl_op *op;
  struct conv_kernel *k;
  const struct ocl_device_info *info;
  TF_DataType dtype;
  bool wide;
  union geo_args geo;
  size_t geo_size;
};

static struct ocl_kernel *kern(struct run *r, enum conv_kern id)
{
  return &r->k->kernels[r->wide][id];
}

static struct ocl_arg idx_arg(const struct run *r, int64_t v)
{
  return r->wide ? OCL_LONG(v) : OCL_INT(v);
}

#define GEO_ARG(r) OCL_BYTES(&(r)->geo, (r)->geo_size)
#define NARGS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void run_set_geo(struct run *r, const struct conv_geo *g)
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

/* The float type partial sums and GEMM copies are kept in. */
static TF_DataType acc_dtype(const struct run *r)
{
  return r->dtype == TF_DOUBLE ? TF_DOUBLE : TF_FLOAT;
}

static bool fill_zero(struct run *r, TF_Tensor *t)
{
  size_t bytes = ocl_tf.TensorByteSize(t);
  const cl_uchar zero = 0;
  return bytes == 0 || ocl_op_fill(r->op, t, 0, &zero, 1, bytes);
}

/* A 2-D (short dim, rows) launch with work-groups along the rows. */
static bool launch_runs(struct run *r, enum conv_kern id, int64_t dim0,
                        int64_t rows, const struct ocl_arg *args, int n)
{
  size_t max = ocl_kernel_max_local(r->op, kern(r, id));
  if (max == 0)
    return false;
  size_t local[2] = {1, max < 256 ? max : 256};
  size_t global[2] = {(size_t)dim0, (size_t)rows};
  return ocl_launch(r->op, kern(r, id), 2, global, local, args, n);
}

/* The work-group of the TILE x TILE implicit GEMM for a rows x cols
 * product: the widest tile both extents fill and the built kernel can run
 * (kernels base, base + 1, base + 2 are tiles 64, 32, 16). */
static bool pick_tile(struct run *r, enum conv_kern base, int64_t rows,
                      int64_t cols, enum conv_kern *id, int *tile)
{
  for (int i = 0; i < 3; i++) {
    int t = 64 >> i;
    if (i < 2 && (rows < t || cols < t))
      continue;
    size_t max = ocl_kernel_max_local(r->op, kern(r, base + i));
    if (max == 0)
      return false;
    if (max >= (size_t)(t / 4) * (size_t)(t / 4)) {
      *id = base + i;
      *tile = t;
      return true;
    }
  }
  return ocl_op_fail(r->op, TF_INTERNAL,
                     "OpenCL device %d runs no work-group of 16 work-items "
                     "for %s",
                     r->info->ordinal, kern_names[base + 2]);
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Launches an implicit-GEMM kernel of tile t over (col_tiles, row_tiles,
 * zs) work-groups. The kernels read get_group_id(1) and (2), so the launch
 * goes in blocks of at most ocl_max_groups_yz() row tiles and z entries
 * (NVIDIA's OpenCL takes no more), each with its bases in the last two
 * arguments, filled here. */
static bool igemm_launch(struct run *r, enum conv_kern id, int t,
                         int64_t col_tiles, int64_t row_tiles, int64_t zs,
                         struct ocl_arg *args, int num_args)
{
  const int64_t most = (int64_t)ocl_max_groups_yz();
  size_t local[3] = {(size_t)t / 4, (size_t)t / 4, 1};
  for (int64_t z0 = 0; z0 < zs; z0 += most)
    for (int64_t m0 = 0; m0 < row_tiles; m0 += most) {
      int64_t nz = zs - z0 < most ? zs - z0 : most;
      int64_t nm = row_tiles - m0 < most ? row_tiles - m0 : most;
      size_t global[3] = {(size_t)col_tiles * local[0],
                          (size_t)nm * local[1], (size_t)nz};
      args[num_args - 2] = idx_arg(r, m0);
      args[num_args - 1] = idx_arg(r, z0);
      if (!ocl_launch(r->op, kern(r, id), 3, global, local, args, num_args))
        return false;
    }
  return true;
}

/* ---- Implicit GEMM (GPU shape; double, bfloat16 and grouped anywhere) ---- */

static bool igemm_forward(struct run *r, const struct conv_geo *g,
                          const TF_Tensor *x, const TF_Tensor *f,
                          const TF_Tensor *y, const TF_Tensor *bias)
{
  if (g->og < DIRECT_MAX_COLS) {
    int64_t total = g->batch * out_pixels(g) * g->cout;
    const struct ocl_arg args[] = {
        OCL_TENSOR(x), OCL_TENSOR(f), OCL_TENSOR(y),
        OCL_TENSOR(bias != NULL ? bias : f), GEO_ARG(r), idx_arg(r, total),
        OCL_INT(g->nchw), OCL_INT(bias != NULL ? IG_BIAS : 0),
        OCL_INT(r->k->act), OCL_FLOAT(r->k->alpha),
    };
    return ocl_launch_1d(r->op, kern(r, K_DIRECT_FWD), (size_t)total, args,
                         NARGS(args));
  }
  int64_t rows = g->batch * out_pixels(g);
  enum conv_kern id;
  int t;
  if (!pick_tile(r, K_FWD_64, rows, g->og, &id, &t))
    return false;
  int flags = (g->nchw ? IG_SWAP : IG_A_FAST_K) | (bias != NULL ? IG_BIAS : 0);
  struct ocl_arg args[] = {
      OCL_TENSOR(x), OCL_TENSOR(f), OCL_TENSOR(y),
      OCL_TENSOR(bias != NULL ? bias : f), GEO_ARG(r), OCL_INT(flags),
      OCL_INT(r->k->act), OCL_FLOAT(r->k->alpha), idx_arg(r, 0), idx_arg(r, 0),
  };
  return igemm_launch(r, id, t, ceil_div(g->og, t), ceil_div(rows, t),
                      g->groups, args, NARGS(args));
}

static bool igemm_backprop_input(struct run *r, const struct conv_geo *g,
                                 const TF_Tensor *f, const TF_Tensor *dy,
                                 const TF_Tensor *dx)
{
  if (g->cg < DIRECT_MAX_COLS) {
    int64_t total = g->batch * in_pixels(g) * g->cin;
    const struct ocl_arg args[] = {
        OCL_TENSOR(dy), OCL_TENSOR(f),          OCL_TENSOR(dx),
        GEO_ARG(r),     idx_arg(r, total), OCL_INT(g->nchw),
    };
    return ocl_launch_1d(r->op, kern(r, K_DIRECT_BPI), (size_t)total, args,
                         NARGS(args));
  }
  int64_t rows = g->batch * in_pixels(g);
  enum conv_kern id;
  int t;
  if (!pick_tile(r, K_BPI_64, rows, g->cg, &id, &t))
    return false;
  int flags = g->nchw ? IG_SWAP : IG_A_FAST_K;
  struct ocl_arg args[] = {
      OCL_TENSOR(dy), OCL_TENSOR(f), OCL_TENSOR(dx), GEO_ARG(r),
      OCL_INT(flags), idx_arg(r, 0), idx_arg(r, 0),
  };
  return igemm_launch(r, id, t, ceil_div(g->cg, t), ceil_div(rows, t),
                      g->groups, args, NARGS(args));
}

/* partial[s] (acc type) -> out: the sum over splits, rounded once. */
static bool splitk_sum(struct run *r, const TF_Tensor *partial,
                       const TF_Tensor *out, int64_t n, int64_t splits)
{
  const struct ocl_arg args[] = {
      OCL_TENSOR(partial), OCL_TENSOR(out), idx_arg(r, n), idx_arg(r, splits),
  };
  return ocl_launch_1d(r->op, kern(r, K_SPLITK_SUM), (size_t)n, args,
                       NARGS(args));
}

/* How many pieces a reduction of `length` splits into so that `groups`
 * independent work-groups become about `target`, each piece at least
 * `min_piece` long and the partial sums (`per_split` elements each) within
 * PARTIAL_MAX_ELEMENTS; *chunk is a piece's length (a multiple of
 * `align`). Every piece is non-empty. */
static int64_t split_reduction(int64_t length, int64_t groups, int64_t target,
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

static bool igemm_backprop_filter(struct run *r, const struct conv_geo *g,
                                  const TF_Tensor *x, const TF_Tensor *dy,
                                  const TF_Tensor *dw)
{
  int64_t rows = taps_of(g) * g->cg, K = g->batch * out_pixels(g);
  int64_t elems = rows * g->cout;
  if (g->og < DIRECT_MAX_COLS && elems * K <= DIRECT_MAX_BPF_MACS) {
    const struct ocl_arg args[] = {
        OCL_TENSOR(x), OCL_TENSOR(dy), OCL_TENSOR(dw), GEO_ARG(r),
        idx_arg(r, elems),
    };
    return ocl_launch_1d(r->op, kern(r, K_DIRECT_BPF), (size_t)elems, args,
                         NARGS(args));
  }
  enum conv_kern id;
  int t;
  if (!pick_tile(r, K_BPF_64, rows, g->og, &id, &t))
    return false;
  int64_t tiles = ceil_div(rows, t) * ceil_div(g->og, t) * g->groups;
  int64_t target = (int64_t)r->info->compute_units * (r->info->cpu_shape ? 4 : 8);
  int64_t chunk;
  int64_t splits = split_reduction(K, tiles, target, 4 * IG_TK, IG_TK, elems,
                                   &chunk);
  TF_Tensor *partial = ocl_op_temp(r->op, acc_dtype(r), splits * elems);
  if (partial == NULL)
    return false;
  int flags = g->nchw ? IG_A_FAST_K | IG_B_FAST_K : 0;
  struct ocl_arg args[] = {
      OCL_TENSOR(x), OCL_TENSOR(dy), OCL_TENSOR(partial), GEO_ARG(r),
      OCL_INT(flags), idx_arg(r, splits), idx_arg(r, chunk), idx_arg(r, 0),
      idx_arg(r, 0),
  };
  bool ok = igemm_launch(r, id, t, ceil_div(g->og, t), ceil_div(rows, t),
                         g->groups * splits, args, NARGS(args)) &&
            splitk_sum(r, partial, dw, elems, splits);
  ocl_op_release(r->op, partial);
  return ok;
}

/* ---- im2col + GEMM (CPU shape, float and half) ---------------------------- */

/* How col is laid out: [rows, K] (channels-last; rows = image * P + p) or
 * per image [K, P] (channels-first). Strides in elements for (image, p,
 * k). */
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
static bool im2col(struct run *r, const struct conv_geo *g,
                   const TF_Tensor *in, const TF_Tensor *col, int64_t n0,
                   int64_t images, int64_t t0, int64_t ntaps,
                   struct col_layout l)
{
  int64_t lines = images * g->out[0] * g->out[1];
  const struct ocl_arg args[] = {
      OCL_TENSOR(in),     OCL_TENSOR(col),     GEO_ARG(r),
      idx_arg(r, n0),     idx_arg(r, lines),   idx_arg(r, t0),
      idx_arg(r, ntaps),  idx_arg(r, l.sn),    idx_arg(r, l.sp),
      idx_arg(r, l.sk),
  };
  /* conv.cl's IM2COL_PIXELS pixels of a line per work-item; small
   * work-groups, so that a few images' lines still spread over the
   * cores. */
  size_t global[2] = {(size_t)((g->out[2] + 15) / 16), (size_t)lines};
  size_t local[2] = {1, 8};
  return ocl_launch(r->op, kern(r, K_IM2COL), 2, global, local, args,
                    NARGS(args));
}

/* A 1x1 window with stride 1 and no padding: the input is its own col. */
static bool is_pointwise(const struct conv_geo *g)
{
  for (int i = 0; i < 3; i++)
    if (g->k[i] != 1 || g->s[i] != 1 || g->pad[i] != 0 || g->out[i] != g->in[i])
      return false;
  return true;
}

/* Images per chunk so that one chunk's col (per_image elements each) stays
 * under `limit` elements; at least one. */
static int64_t images_per_chunk_of(int64_t batch, int64_t per_image,
                                   int64_t limit)
{
  int64_t n = per_image > 0 ? limit / per_image : batch;
  return n < 1 ? 1 : n > batch ? batch : n;
}

static int64_t images_per_chunk(int64_t batch, int64_t per_image)
{
  return images_per_chunk_of(batch, per_image, COL_MAX_ELEMENTS);
}

/* The channels-last forward: out[rows, Cout] = col * filter, col built
 * per chunk of images straight into the GEMM's A panels where the GEMM
 * takes them (gemm.h; one pass over col instead of three), else as a plain
 * matrix. */
static bool panels_forward(struct run *r, const struct conv_geo *g,
                           const TF_Tensor *in, const TF_Tensor *filter,
                           const TF_Tensor *out, int64_t chunk)
{
  int64_t P = out_pixels(g), K = taps_of(g) * g->cin, Cout = g->cout;
  struct ocl_op *op = r->op;
  struct ocl_gemm_desc whole = {.m = chunk * P, .n = Cout, .k = K,
                                .batches = 1, .b_shared = true};
  bool panels = ocl_gemm_takes_panels(op, r->dtype, &whole);
  if (!ocl_op_ok(op))
    return false;
  if (panels) {
    /* Panels the GEMM reads back while the cores' caches still hold them. */
    chunk = images_per_chunk_of(g->batch, P * K, PANEL_CHUNK_ELEMENTS);
  }
  TF_Tensor *col =
      panels ? ocl_op_temp(op, TF_FLOAT, ocl_gemm_panel_elements(chunk * P, K))
             : ocl_op_temp(op, r->dtype, chunk * P * K);
  if (col == NULL)
    return false;
  bool ok = true;
  for (int64_t n0 = 0; ok && n0 < g->batch; n0 += chunk) {
    int64_t images = g->batch - n0 < chunk ? g->batch - n0 : chunk;
    struct ocl_gemm_desc d = {.m = images * P, .n = Cout, .k = K,
                              .batches = 1, .b_shared = true,
                              .c_offset = n0 * P * Cout};
    if (panels && ocl_gemm_takes_panels(op, r->dtype, &d)) {
      int64_t rows = images * P;
      const struct ocl_arg args[] = {
          OCL_TENSOR(in), OCL_TENSOR(col), GEO_ARG(r), idx_arg(r, n0),
          idx_arg(r, rows),
      };
      size_t global = (size_t)((rows + OCL_GEMM_PANEL_ROWS - 1) /
                               OCL_GEMM_PANEL_ROWS);
      size_t local = 16;
      ok = ocl_launch(op, kern(r, K_IM2COL_PANELS), 1, &global, &local, args,
                      NARGS(args)) &&
           ocl_op_gemm_panels(op, r->dtype, &d, col, filter, out);
    } else if (!ocl_op_ok(op)) {
      ok = false;
    } else if (panels) {
      /* A last chunk too small for the packed kernel: the plain path, its
       * col in a temp of the right type. */
      TF_Tensor *plain = ocl_op_temp(op, r->dtype, images * P * K);
      ok = plain != NULL &&
           im2col(r, g, in, plain, n0, images, 0, taps_of(g),
                  col_layout(false, P, K)) &&
           ocl_op_gemm(op, r->dtype, &d, plain, filter, out);
      if (plain != NULL)
        ocl_op_release(op, plain);
    } else {
      ok = im2col(r, g, in, col, n0, images, 0, taps_of(g),
                  col_layout(false, P, K)) &&
           ocl_op_gemm(op, r->dtype, &d, col, filter, out);
    }
  }
  ocl_op_release(op, col);
  return ok;
}

static bool gemm_forward(struct run *r, const struct conv_geo *g,
                         const TF_Tensor *in, const TF_Tensor *filter,
                         const TF_Tensor *out)
{
  int64_t P = out_pixels(g), K = taps_of(g) * g->cin, Cout = g->cout;
  bool nchw = g->nchw;
  struct ocl_op *op = r->op;

  if (is_pointwise(g)) {
    struct ocl_gemm_desc d =
        nchw ? (struct ocl_gemm_desc){.m = Cout, .n = P, .k = K,
                                      .trans_a = true, .batches = g->batch,
                                      .a_shared = true}
             : (struct ocl_gemm_desc){.m = g->batch * P, .n = Cout, .k = K,
                                      .batches = 1, .b_shared = true};
    return nchw ? ocl_op_gemm(op, r->dtype, &d, filter, in, out)
                : ocl_op_gemm(op, r->dtype, &d, in, filter, out);
  }

  int64_t chunk = images_per_chunk(g->batch, P * K);
  if (!nchw)
    return panels_forward(r, g, in, filter, out, chunk);
  /* Channels-first: per image [Cout, P] = filter^T * col[K, P]. */
  TF_Tensor *col = ocl_op_temp(op, r->dtype, chunk * P * K);
  if (col == NULL)
    return false;
  bool ok = true;
  struct col_layout l = col_layout(true, P, K);
  for (int64_t n0 = 0; ok && n0 < g->batch; n0 += chunk) {
    int64_t images = g->batch - n0 < chunk ? g->batch - n0 : chunk;
    struct ocl_gemm_desc d = {.m = Cout, .n = P, .k = K, .trans_a = true,
                              .batches = images, .a_shared = true,
                              .c_offset = n0 * Cout * P};
    ok = im2col(r, g, in, col, n0, images, 0, taps_of(g), l) &&
         ocl_op_gemm(op, r->dtype, &d, filter, col, out);
  }
  ocl_op_release(op, col);
  return ok;
}

/* A float copy of a half tensor (or the tensor itself when float). */
static const TF_Tensor *as_float(struct run *r, const TF_Tensor *t)
{
  if (r->dtype == TF_FLOAT)
    return t;
  int64_t n = ocl_tf.TensorElementCount(t);
  TF_Tensor *f = ocl_op_temp(r->op, TF_FLOAT, n);
  if (f == NULL)
    return NULL;
  const struct ocl_arg args[] = {OCL_TENSOR(t), OCL_TENSOR(f), idx_arg(r, n)};
  if (!ocl_launch_1d(r->op, kern(r, K_TO_FLOAT), (size_t)n, args, 3))
    return NULL;
  return f;
}

/* A stride-1 channels-last input gradient as the forward convolution it
 * is: dx = dy (padded by (k - 1) * dilation - pad before each axis)
 * convolved with the filter, taps reversed and channels swapped. It goes
 * through panels_forward (im2col into the GEMM's panels) instead of a
 * [pixels, taps * Cin] dcol that col2im then folds: two passes over the
 * largest temp of the step fewer. False, with nothing enqueued and the
 * status OK, where the geometry does not allow it. */
static bool flipped_backprop_input(struct run *r, const struct conv_geo *g,
                                   const TF_Tensor *filter,
                                   const TF_Tensor *dout, const TF_Tensor *dx,
                                   bool *done)
{
  *done = false;
  struct conv_geo t = *g;
  for (int i = 0; i < 3; i++) {
    if (g->s[i] != 1 || g->pad[i] > (g->k[i] - 1) * g->dl[i])
      return true;
    t.in[i] = g->out[i];
    t.out[i] = g->in[i];
    t.pad[i] = (g->k[i] - 1) * g->dl[i] - g->pad[i];
  }
  /* Its GEMM runs over the input's pixels, dcol's over the output's: a
   * valid convolution of a small image (13x13 to 11x11) costs more
   * flipped than the dcol pass saves. */
  if (g->nchw || g->groups != 1 || in_pixels(g) * 8 > out_pixels(g) * 9)
    return true;
  t.cin = t.cg = g->cout;
  t.cout = t.og = g->cin;
  int64_t taps = taps_of(g);
  TF_Tensor *flipped = ocl_op_temp(r->op, r->dtype, taps * g->cin * g->cout);
  if (flipped == NULL)
    return false;
  const struct ocl_arg args[] = {
      OCL_TENSOR(filter), OCL_TENSOR(flipped), idx_arg(r, taps),
      idx_arg(r, g->cin), idx_arg(r, g->cout),
  };
  if (!ocl_launch_1d(r->op, kern(r, K_FLIP_FILTER),
                     (size_t)(taps * g->cin * g->cout), args, NARGS(args)))
    return false;
  run_set_geo(r, &t);
  int64_t P = out_pixels(&t), K = taps * t.cin;
  bool ok = panels_forward(r, &t, dout, flipped, dx,
                           images_per_chunk(t.batch, P * K));
  run_set_geo(r, g);
  ocl_op_release(r->op, flipped);
  *done = ok;
  return ok;
}

static bool gemm_backprop_input(struct run *r, const struct conv_geo *g,
                                const TF_Tensor *filter, const TF_Tensor *dout,
                                const TF_Tensor *dx)
{
  int64_t P = out_pixels(g), K = taps_of(g) * g->cin, Cout = g->cout;
  bool nchw = g->nchw;
  struct ocl_op *op = r->op;

  if (is_pointwise(g)) {
    /* dx = dout * filter^T straight into dx: one rounding for half. */
    struct ocl_gemm_desc d =
        nchw ? (struct ocl_gemm_desc){.m = K, .n = P, .k = Cout,
                                      .batches = g->batch, .a_shared = true}
             : (struct ocl_gemm_desc){.m = g->batch * P, .n = K, .k = Cout,
                                      .trans_b = true, .batches = 1,
                                      .b_shared = true};
    return nchw ? ocl_op_gemm(op, r->dtype, &d, filter, dout, dx)
                : ocl_op_gemm(op, r->dtype, &d, dout, filter, dx);
  }

  bool flipped = false;
  if (!flipped_backprop_input(r, g, filter, dout, dx, &flipped))
    return false;
  if (flipped)
    return true;

  /* dcol is float for every dtype, so that col2im sums unrounded taps: the
   * GEMM runs in float on float copies of half operands. */
  const TF_Tensor *ff = as_float(r, filter);
  const TF_Tensor *fdy = ff != NULL ? as_float(r, dout) : NULL;
  if (fdy == NULL)
    return false;
  int64_t chunk = images_per_chunk(g->batch, P * K);
  TF_Tensor *dcol = ocl_op_temp(op, TF_FLOAT, chunk * P * K);
  if (dcol == NULL)
    return false;
  struct col_layout l = col_layout(nchw, P, K);
  bool ok = true;
  for (int64_t n0 = 0; ok && n0 < g->batch; n0 += chunk) {
    int64_t images = g->batch - n0 < chunk ? g->batch - n0 : chunk;
    struct ocl_gemm_desc d =
        nchw ? (struct ocl_gemm_desc){.m = K, .n = P, .k = Cout,
                                      .batches = images, .a_shared = true,
                                      .b_offset = n0 * Cout * P}
             : (struct ocl_gemm_desc){.m = images * P, .n = K, .k = Cout,
                                      .trans_b = true, .batches = 1,
                                      .b_shared = true,
                                      .a_offset = n0 * P * Cout};
    ok = nchw ? ocl_op_gemm(op, TF_FLOAT, &d, ff, fdy, dcol)
              : ocl_op_gemm(op, TF_FLOAT, &d, fdy, ff, dcol);
    if (!ok)
      break;
    int64_t rows = images * in_pixels(g);
    const struct ocl_arg args[] = {
        OCL_TENSOR(dcol), OCL_TENSOR(dx),   GEO_ARG(r),
        idx_arg(r, n0),   idx_arg(r, rows), idx_arg(r, l.sn),
        idx_arg(r, l.sp), idx_arg(r, l.sk),
    };
    ok = launch_runs(r, K_COL2IM, ceil_div(g->cin, 16), rows, args,
                     NARGS(args));
  }
  ocl_op_release(op, dcol);
  return ok;
}

static bool gemm_backprop_filter(struct run *r, const struct conv_geo *g,
                                 const TF_Tensor *in, const TF_Tensor *dout,
                                 const TF_Tensor *dw)
{
  int64_t P = out_pixels(g), M = g->batch * P;
  int64_t taps = taps_of(g), Cin = g->cin, Cout = g->cout;
  struct ocl_op *op = r->op;

  /* The GEMM's inner dimension runs over (image, p): channels-first
   * out_backprop is transposed to [N, P, Cout] so that it is one matrix. */
  const TF_Tensor *dyt = dout;
  if (g->nchw) {
    TF_Tensor *dy = ocl_op_temp(op, r->dtype, M * Cout);
    if (dy == NULL)
      return false;
    const struct ocl_arg args[] = {
        OCL_TENSOR(dout), OCL_TENSOR(dy), idx_arg(r, Cout), idx_arg(r, P),
        idx_arg(r, M),
    };
    size_t max = ocl_kernel_max_local(op, kern(r, K_NCHW_TO_NHWC));
    if (max == 0)
      return false;
    size_t local[2] = {16, max >= 256 ? 16 : max >= 16 ? max / 16 : 1};
    if (max < 16)
      local[0] = max;
    size_t global[2] = {(size_t)Cout, (size_t)M};
    if (!ocl_launch(op, kern(r, K_NCHW_TO_NHWC), 2, global, local, args,
                    NARGS(args)))
      return false;
    dyt = dy;
  }
  if (is_pointwise(g) && !g->nchw) {
    struct ocl_gemm_desc d = {.m = Cin, .n = Cout, .k = M, .trans_a = true,
                              .batches = 1};
    return ocl_op_gemm(op, r->dtype, &d, in, dyt, dw);
  }
  /* Chunks of taps: each writes its own rows of dfilter, so no chunk
   * accumulates (half rounds once). */
  int64_t per_tap = M * Cin;
  int64_t tchunk = per_tap > 0 ? COL_MAX_ELEMENTS / per_tap : taps;
  if (tchunk < 1)
    tchunk = 1;
  if (tchunk > taps)
    tchunk = taps;
  /* col^T goes straight into the GEMM's A panels where it takes them
   * (channels-last input: the panels read channels along c). */
  struct ocl_gemm_desc whole = {.m = tchunk * Cin, .n = Cout, .k = M,
                                .trans_a = true, .batches = 1};
  bool panels = !g->nchw && ocl_gemm_takes_panels(op, r->dtype, &whole);
  if (!ocl_op_ok(op))
    return false;
  TF_Tensor *col =
      panels ? ocl_op_temp(op, TF_FLOAT, ocl_gemm_panel_elements(tchunk * Cin, M))
             : ocl_op_temp(op, r->dtype, M * tchunk * Cin);
  if (col == NULL)
    return false;
  bool ok = true;
  for (int64_t t0 = 0; ok && t0 < taps; t0 += tchunk) {
    int64_t nt = taps - t0 < tchunk ? taps - t0 : tchunk;
    int64_t kcols = nt * Cin;
    struct ocl_gemm_desc d = {.m = kcols, .n = Cout, .k = M, .trans_a = true,
                              .batches = 1, .c_offset = t0 * Cin * Cout};
    if (panels && ocl_gemm_takes_panels(op, r->dtype, &d)) {
      const struct ocl_arg args[] = {
          OCL_TENSOR(in),   OCL_TENSOR(col),   GEO_ARG(r),
          idx_arg(r, M),    idx_arg(r, t0),    idx_arg(r, kcols),
      };
      size_t global[2] = {(size_t)((kcols + OCL_GEMM_PANEL_ROWS - 1) /
                                   OCL_GEMM_PANEL_ROWS),
                          (size_t)((M + 15) / 16)};
      size_t local[2] = {8, 1};
      ok = ocl_launch(op, kern(r, K_IM2COL_PANELS_T), 2, global, local, args,
                      NARGS(args)) &&
           ocl_op_gemm_panels(op, r->dtype, &d, col, dyt, dw);
      continue;
    }
    if (!ocl_op_ok(op))
      break;
    TF_Tensor *plain = col;
    if (panels) /* a last chunk the packed kernel does not take */
      plain = ocl_op_temp(op, r->dtype, M * kcols);
    ok = plain != NULL &&
         im2col(r, g, in, plain, 0, g->batch, t0, nt, col_layout(false, P, kcols)) &&
         ocl_op_gemm(op, r->dtype, &d, plain, dyt, dw);
    if (plain != NULL && plain != col)
      ocl_op_release(op, plain);
  }
  ocl_op_release(op, col);
  return ok;
}

/* _FusedConv2D's epilogue after a GEMM: y = act(y + bias) in place. */
static bool bias_act(struct run *r, const struct conv_geo *g,
                     const TF_Tensor *y, const TF_Tensor *bias)
{
  int64_t n = ocl_tf.TensorElementCount(y);
  int64_t run_len = g->nchw ? out_pixels(g) : g->cout;
  if (n == 0 || run_len == 0)
    return true;
  int64_t runs = n / run_len;
  const struct ocl_arg args[] = {
      OCL_TENSOR(y),         OCL_TENSOR(bias),     idx_arg(r, run_len),
      idx_arg(r, runs),      idx_arg(r, g->cout),  OCL_INT(!g->nchw),
      OCL_INT(r->k->act),    OCL_FLOAT(r->k->alpha),
  };
  size_t max = ocl_kernel_max_local(r->op, kern(r, K_BIAS_ACT));
  if (max == 0)
    return false;
  /* A run's elements side by side in a work-group (a power of two that
   * covers a run, up to the group size), whole runs filling the rest. */
  size_t wanted = max < 256 ? max : 256, x = 1;
  while (x < (size_t)run_len && x * 2 <= wanted)
    x *= 2;
  size_t local[2] = {x, wanted / x};
  size_t global[2] = {(size_t)run_len, (size_t)runs};
  return ocl_launch(r->op, kern(r, K_BIAS_ACT), 2, global, local, args,
                    NARGS(args));
}

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
    return fill_zero(r, y) && (bias == NULL || bias_act(r, g, y, bias));
  }
  if (use_gemm(r, g))
    return gemm_forward(r, g, x, f, y) &&
           (bias == NULL || bias_act(r, g, y, bias));
  return igemm_forward(r, g, x, f, y, bias);
}

static bool conv_backprop_input(struct run *r, const struct conv_geo *g,
                                const TF_Tensor *f, const TF_Tensor *dy,
                                TF_Tensor *dx)
{
  if (g->batch * out_pixels(g) == 0 || g->cout == 0 || taps_of(g) == 0)
    return fill_zero(r, dx);
  if (use_gemm(r, g))
    return gemm_backprop_input(r, g, f, dy, dx);
  return igemm_backprop_input(r, g, f, dy, dx);
}

static bool conv_backprop_filter(struct run *r, const struct conv_geo *g,
                                 const TF_Tensor *x, const TF_Tensor *dy,
                                 TF_Tensor *dw)
{
  if (g->batch * out_pixels(g) == 0)
    return fill_zero(r, dw);
  if (use_gemm(r, g))
    return gemm_backprop_filter(r, g, x, dy, dw);
  return igemm_backprop_filter(r, g, x, dy, dw);
}

/* ---- Depthwise -------------------------------------------------------------- */

/* conv.cl's DW_ROW_TAPS: the most taps the row kernels list per pixel. */
enum { DW_ROW_TAPS = 64 };

/* The row kernels (CPU shape): channels-last, multiplier 1. */
static bool dw_rows(const struct run *r, const struct conv_geo *g)
{
  return r->info->cpu_shape && !g->nchw && g->mult == 1 &&
         taps_of(g) <= DW_ROW_TAPS;
}

static bool dw_forward(struct run *r, const struct conv_geo *g,
                       const TF_Tensor *x, const TF_Tensor *f,
                       const TF_Tensor *y)
{
  if (dw_rows(r, g)) {
    const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(f), OCL_TENSOR(y),
                                   GEO_ARG(r)};
    return ocl_launch_rows(r->op, kern(r, K_DW_FWD_ROWS),
                           (size_t)(g->batch * g->out[1]), args, NARGS(args));
  }
  int64_t total = g->batch * out_pixels(g) * g->cout;
  const struct ocl_arg args[] = {
      OCL_TENSOR(x), OCL_TENSOR(f),          OCL_TENSOR(y),
      GEO_ARG(r),    idx_arg(r, total), OCL_INT(g->nchw),
  };
  return ocl_launch_1d(r->op, kern(r, K_DW_FWD_ELEM), (size_t)total, args,
                       NARGS(args));
}

static bool dw_backprop_input(struct run *r, const struct conv_geo *g,
                              const TF_Tensor *f, const TF_Tensor *dy,
                              TF_Tensor *dx)
{
  if (dw_rows(r, g)) {
    const struct ocl_arg args[] = {OCL_TENSOR(dy), OCL_TENSOR(f),
                                   OCL_TENSOR(dx), GEO_ARG(r)};
    return ocl_launch_rows(r->op, kern(r, K_DW_BPI_ROWS),
                           (size_t)(g->batch * g->in[1]), args, NARGS(args));
  }
  int64_t total = g->batch * in_pixels(g) * g->cin;
  const struct ocl_arg args[] = {
      OCL_TENSOR(dy), OCL_TENSOR(f),          OCL_TENSOR(dx),
      GEO_ARG(r),     idx_arg(r, total), OCL_INT(g->nchw),
  };
  return ocl_launch_1d(r->op, kern(r, K_DW_BPI_ELEM), (size_t)total, args,
                       NARGS(args));
}

static bool dw_backprop_filter(struct run *r, const struct conv_geo *g,
                               const TF_Tensor *x, const TF_Tensor *dy,
                               TF_Tensor *dw)
{
  int64_t taps = taps_of(g), elems = taps * g->cout;
  int64_t rows = g->batch * g->out[1], pixels = rows * g->out[2];
  if (pixels == 0)
    return fill_zero(r, dw);
  struct ocl_op *op = r->op;
  int64_t units = r->info->compute_units > 0 ? r->info->compute_units : 1;
  int64_t chunk, splits;
  enum conv_kern id;
  if (dw_rows(r, g)) {
    /* A work-item per chunk of rows: enough chunks to keep every core
     * busy. */
    id = K_DW_BPF_ROWS;
    splits = split_reduction(rows, 1, units * 8, 1, 1, elems, &chunk);
  } else if (!g->nchw) {
    /* A work-item per (channel, tap, chunk): about 2048 per unit. */
    id = K_DW_BPF_NHWC;
    splits = split_reduction(rows, elems, units * 2048, 1, 1, elems, &chunk);
  } else {
    /* A work-group per (channel, tap, chunk of pixels). */
    id = K_DW_BPF_NCHW;
    splits = split_reduction(pixels, elems, units * 16, DW_LANES, 1, elems,
                             &chunk);
  }
  TF_Tensor *partial = ocl_op_temp(op, acc_dtype(r), splits * elems);
  if (partial == NULL)
    return false;
  const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(dy),
                                 OCL_TENSOR(partial), GEO_ARG(r),
                                 idx_arg(r, chunk)};
  bool ok;
  if (id == K_DW_BPF_ROWS) {
    ok = ocl_launch_rows(op, kern(r, id), (size_t)splits, args, NARGS(args));
  } else if (id == K_DW_BPF_NHWC) {
    size_t l = ocl_kernel_fit_local(op, kern(r, id), 64);
    size_t global[3] = {(size_t)g->cout, (size_t)taps, (size_t)splits};
    size_t local[3] = {l, 1, 1};
    ok = l > 0 && ocl_launch(op, kern(r, id), 3, global, local, args,
                             NARGS(args));
  } else {
    size_t global[3] = {(size_t)(DW_LANES * g->cout), (size_t)taps,
                        (size_t)splits};
    size_t local[3] = {DW_LANES, 1, 1};
    ok = ocl_launch(op, kern(r, id), 3, global, local, args, NARGS(args));
  }
  ok = ok && splitk_sum(r, partial, dw, elems, splits);
  ocl_op_release(op, partial);
  return ok;
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
  memset(buf, 0, len);
  if (ocl_tf.OpKernelConstruction_GetAttrString == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks string attributes in its C API");
    return false;
  }
  ocl_tf.OpKernelConstruction_GetAttrString(ctx, name, buf, len - 1, status);
  if (ocl_tf.GetCode(status) != TF_OK && fallback != NULL) {
    ocl_set_ok(status);
    snprintf(buf, len, "%s", fallback);
  }
  return ocl_tf.GetCode(status) == TF_OK;
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
                           kern_names[i])) {
        ocl_set_status(status, TF_INTERNAL, "kernel name too long: %s",
                       kern_names[i]);
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
      .op = &op, .k = k, .info = info, .dtype = k->dtype,
      .wide = biggest > NARROW_MAX_ELEMENTS,
  };
  run_set_geo(&run, &g);
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
    dw_forward(&run, &g, in[0], in[1], out);
    break;
  case DW_BACKPROP_INPUT:
    dw_backprop_input(&run, &g, in[1], in[2], out);
    break;
  case DW_BACKPROP_FILTER:
    dw_backprop_filter(&run, &g, in[0], in[2], out);
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
