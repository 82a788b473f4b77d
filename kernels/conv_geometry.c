/* Convolution and pooling geometry shared by the windowed families; see
 * conv_geometry.h. */
#include "conv_geometry.h"

#include <stdio.h>
#include <string.h>

#include "shape.h"
#include "status_format.h"

/* ---- Windowed ops: convolutions and pooling ------------------------------ */

bool ocl_padding_parse(const char *name, enum ocl_padding *padding)
{
  if (strcmp(name, "VALID") == 0)
    *padding = OCL_PADDING_VALID;
  else if (strcmp(name, "SAME") == 0)
    *padding = OCL_PADDING_SAME;
  else if (strcmp(name, "EXPLICIT") == 0)
    *padding = OCL_PADDING_EXPLICIT;
  else
    return false;
  return true;
}

bool ocl_windowed_output_size(int64_t input, int64_t filter, int64_t dilation,
                              int64_t stride, enum ocl_padding padding,
                              int64_t *output, int64_t *pad_before,
                              int64_t *pad_after, TF_Status *status)
{
  if (stride <= 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Stride must be > 0, but got %lld", (long long)stride);
    return false;
  }
  if (dilation < 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Dilation rate must be >= 1, but got %lld",
                   (long long)dilation);
    return false;
  }
  int64_t effective = (filter - 1) * dilation + 1;
  switch (padding) {
  case OCL_PADDING_VALID:
    *output = (input - effective + stride) / stride;
    *pad_before = *pad_after = 0;
    break;
  case OCL_PADDING_EXPLICIT:
    *output = (input + *pad_before + *pad_after - effective + stride) / stride;
    break;
  case OCL_PADDING_SAME: {
    *output = (input + stride - 1) / stride;
    int64_t needed = (*output - 1) * stride + effective - input;
    if (needed < 0)
      needed = 0;
    /* An odd total pads more after, as TensorFlow does. */
    *pad_before = needed / 2;
    *pad_after = needed - *pad_before;
    break;
  }
  }
  if (*output < 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Computed output size would be negative: %lld "
                   "[input_size: %lld, effective_filter_size: %lld, stride: "
                   "%lld]",
                   (long long)*output, (long long)input, (long long)effective,
                   (long long)stride);
    return false;
  }
  return true;
}

/* Index of dim 'N', 'C', 'H' or 'W' in a 4-D shape of the data format. */
static int conv_dim(bool channels_first, char dim)
{
  switch (dim) {
  case 'N': return 0;
  case 'C': return channels_first ? 1 : 3;
  case 'H': return channels_first ? 2 : 1;
  default: return channels_first ? 3 : 2;
  }
}

bool ocl_conv_check_padding(const struct ocl_conv_attrs *a, TF_Status *status)
{
  if (a->padding != OCL_PADDING_EXPLICIT) {
    if (a->num_explicit_paddings != 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "explicit_paddings attribute must be empty if the "
                     "padding attribute is not EXPLICIT");
      return false;
    }
    return true;
  }
  if (a->num_explicit_paddings != 8) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "explicit_paddings attribute must contain 8 values, but "
                   "got: %d",
                   a->num_explicit_paddings);
    return false;
  }
  for (int i = 0; i < 8; i++) {
    if (a->explicit_paddings[i] < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "All elements of explicit_paddings must be "
                     "nonnegative");
      return false;
    }
  }
  int n = conv_dim(a->channels_first, 'N'),
      c = conv_dim(a->channels_first, 'C');
  if (a->explicit_paddings[2 * n] != 0 ||
      a->explicit_paddings[2 * n + 1] != 0 ||
      a->explicit_paddings[2 * c] != 0 ||
      a->explicit_paddings[2 * c + 1] != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Nonzero explicit padding in the batch or depth dimensions "
                   "is not supported");
    return false;
  }
  return true;
}

bool ocl_conv_check_attrs(const struct ocl_conv_attrs *a, bool backprop,
                          bool depthwise, TF_Status *status)
{
  enum ocl_conv_check kind = depthwise  ? OCL_CHECK_DEPTHWISE
                             : backprop ? OCL_CHECK_BACKPROP_FILTER
                                        : OCL_CHECK_CONV2D;
  return ocl_conv_check_kind(a, kind, status);
}

bool ocl_conv_check_kind(const struct ocl_conv_attrs *a,
                         enum ocl_conv_check kind, TF_Status *status)
{
  bool cf = a->channels_first;
  bool depthwise = kind == OCL_CHECK_DEPTHWISE;
  /* TensorFlow's kernels disagree on the code for a stride or dilation in
   * the batch or depth dimension: Conv2D and Conv2DCustomBackpropInput say
   * UNIMPLEMENTED, the rest INVALID_ARGUMENT. */
  TF_Code stride_code =
      kind == OCL_CHECK_CONV2D || kind == OCL_CHECK_BACKPROP_INPUT
          ? TF_UNIMPLEMENTED
          : TF_INVALID_ARGUMENT;
  TF_Code dilation_code = stride_code;
  if (!depthwise && a->num_dilations != 4) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Sliding window dilations field must specify 4 "
                   "dimensions");
    return false;
  }
  if (a->num_strides != 4) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Sliding window strides field must specify 4 dimensions");
    return false;
  }
  int64_t sn = a->strides[conv_dim(cf, 'N')],
          sc = a->strides[conv_dim(cf, 'C')];
  int64_t sh = a->strides[conv_dim(cf, 'H')],
          sw = a->strides[conv_dim(cf, 'W')];
  if (depthwise && sh != sw) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Current implementation only supports equal length "
                   "strides in the row and column dimensions.");
    return false;
  }
  if (sn != 1 || sc != 1) {
    ocl_set_status(status, stride_code,
                   "Current implementation does not yet support strides in "
                   "the batch and depth dimensions.");
    return false;
  }
  if (!depthwise && (sh <= 0 || sw <= 0)) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Row and column strides should be larger than 0.");
    return false;
  }
  if (depthwise) {
    /* TensorFlow's depthwise kernels ignore dilations, so they require 1. */
    for (int i = 0; i < a->num_dilations; i++) {
      if (a->dilations[i] != 1) {
        char joined[96];
        int used = 0;
        for (int j = 0; j < a->num_dilations && used < (int)sizeof(joined); j++)
          used += snprintf(joined + used, sizeof(joined) - (size_t)used,
                           "%s%lld", j ? ", " : "", (long long)a->dilations[j]);
        ocl_set_status(status, TF_UNIMPLEMENTED,
                       "Current kernel implementation does not support "
                       "dilations, received [%s]",
                       joined);
        return false;
      }
    }
  } else {
    int64_t dn = a->dilations[conv_dim(cf, 'N')];
    int64_t dc = a->dilations[conv_dim(cf, 'C')];
    int64_t dh = a->dilations[conv_dim(cf, 'H')];
    int64_t dw = a->dilations[conv_dim(cf, 'W')];
    if (dn != 1 || dc != 1) {
      ocl_set_status(status, dilation_code,
                     "Current implementation does not yet support dilations "
                     "in the batch and depth dimensions.");
      return false;
    }
    if (dh <= 0 || dw <= 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Dilated rates should be larger than 0.");
      return false;
    }
  }
  return ocl_conv_check_padding(a, status);
}

/* Strides, dilations and explicit padding of H and W into c. */
static void conv_spatial_attrs(struct ocl_conv2d *c,
                               const struct ocl_conv_attrs *a)
{
  int h = conv_dim(a->channels_first, 'H'),
      w = conv_dim(a->channels_first, 'W');
  c->stride_rows = a->strides[h];
  c->stride_cols = a->strides[w];
  c->dilation_rows = a->num_dilations == 4 ? a->dilations[h] : 1;
  c->dilation_cols = a->num_dilations == 4 ? a->dilations[w] : 1;
  c->pad_top = c->pad_bottom = c->pad_left = c->pad_right = 0;
  if (a->padding == OCL_PADDING_EXPLICIT) {
    c->pad_top = a->explicit_paddings[2 * h];
    c->pad_bottom = a->explicit_paddings[2 * h + 1];
    c->pad_left = a->explicit_paddings[2 * w];
    c->pad_right = a->explicit_paddings[2 * w + 1];
  }
}

static void conv_format_dims(bool channels_first, int64_t n, int64_t h,
                             int64_t w, int64_t ch, int64_t *dims)
{
  dims[conv_dim(channels_first, 'N')] = n;
  dims[conv_dim(channels_first, 'H')] = h;
  dims[conv_dim(channels_first, 'W')] = w;
  dims[conv_dim(channels_first, 'C')] = ch;
}

static bool conv_windows(struct ocl_conv2d *c, const struct ocl_conv_attrs *a,
                         TF_Status *status)
{
  return ocl_windowed_output_size(c->in_rows, c->filter_rows, c->dilation_rows,
                                  c->stride_rows, a->padding, &c->out_rows,
                                  &c->pad_top, &c->pad_bottom, status) &&
         ocl_windowed_output_size(c->in_cols, c->filter_cols, c->dilation_cols,
                                  c->stride_cols, a->padding, &c->out_cols,
                                  &c->pad_left, &c->pad_right, status);
}

bool ocl_conv2d_forward_init(struct ocl_conv2d *c,
                             const struct ocl_conv_attrs *a,
                             const int64_t *input, int input_rank,
                             const int64_t *filter, int filter_rank,
                             TF_Status *status)
{
  bool cf = a->channels_first;
  memset(c, 0, sizeof(*c));
  if (input_rank != 4) {
    char s[160];
    ocl_shape_format(input, input_rank, s, sizeof(s));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "convolution input must be 4-dimensional: %s", s);
    return false;
  }
  if (filter_rank != 4) {
    char s[160];
    ocl_shape_format(filter, filter_rank, s, sizeof(s));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "convolution filter must be 4-dimensional: %s", s);
    return false;
  }
  for (int i = 0; i < 3; i++) {
    if (filter[i] > INT32_MAX) {
      ocl_set_status(status, TF_INVALID_ARGUMENT, "filter too large");
      return false;
    }
  }
  c->in_depth = input[conv_dim(cf, 'C')];
  c->filter_depth = filter[2];
  if (c->in_depth > INT32_MAX) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "Input depth too large");
    return false;
  }
  if (c->filter_depth <= 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "filter depth must be stricly positive, got %lld",
                   (long long)c->filter_depth);
    return false;
  }
  if (c->in_depth % c->filter_depth != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "input depth must be evenly divisible by filter depth: "
                   "%lld vs %lld",
                   (long long)c->in_depth, (long long)c->filter_depth);
    return false;
  }
  c->groups = c->in_depth / c->filter_depth;
  c->depth_multiplier = 1;
  c->out_depth = filter[3];
  c->in_rows = input[conv_dim(cf, 'H')];
  c->in_cols = input[conv_dim(cf, 'W')];
  c->batch = input[0];
  c->filter_rows = filter[0];
  c->filter_cols = filter[1];
  if (c->in_rows > INT32_MAX || c->in_cols > INT32_MAX ||
      c->batch > INT32_MAX) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   c->batch > INT32_MAX     ? "batch is too large"
                   : c->in_rows > INT32_MAX ? "Input rows too large"
                                            : "Input cols too large");
    return false;
  }
  conv_spatial_attrs(c, a);
  if (!conv_windows(c, a, status))
    return false;
  conv_format_dims(cf, c->batch, c->out_rows, c->out_cols, c->out_depth,
                   c->out_dims);
  return true;
}

bool ocl_conv2d_check_filter(const struct ocl_conv2d *c, const int64_t *input,
                             const int64_t *filter, TF_Status *status)
{
  /* Conv2D returns an empty output, and zeros for an empty input, before
   * its launcher refuses an empty filter; so only then does it fail. */
  if (ocl_shape_elements(c->out_dims, 4) == 0 ||
      ocl_shape_elements(input, 4) == 0 || ocl_shape_elements(filter, 4) != 0)
    return true;
  ocl_set_status(status, TF_INVALID_ARGUMENT,
                 "filter must not have zero elements (i.e. all dimensions "
                 "must be non-zero)");
  return false;
}

bool ocl_conv2d_backprop_init(struct ocl_conv2d *c, const char *label,
                              const struct ocl_conv_attrs *a,
                              const int64_t *input, int input_rank,
                              const int64_t *filter, int filter_rank,
                              const int64_t *out, int out_rank,
                              TF_Status *status)
{
  bool cf = a->channels_first;
  memset(c, 0, sizeof(*c));
  const char *bad = input_rank != 4    ? "input"
                    : filter_rank != 4 ? "filter"
                    : out_rank != 4    ? "out_backprop"
                                       : NULL;
  if (bad != NULL) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "%s: %s must be 4-dimensional",
                   label, bad);
    return false;
  }
  c->batch = input[0];
  if (c->batch != out[0]) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: input and out_backprop must have the same batch "
                   "size. Input batch: %lld, outbackprop batch: %lld, "
                   "batch_dim: 0",
                   label, (long long)c->batch, (long long)out[0]);
    return false;
  }
  c->in_depth = input[conv_dim(cf, 'C')];
  c->filter_depth = filter[2];
  if (c->filter_depth <= 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: filter depth must be strictly greated than zero",
                   label);
    return false;
  }
  if (c->in_depth % c->filter_depth != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: input depth must be evenly divisible by filter depth",
                   label);
    return false;
  }
  c->groups = c->in_depth / c->filter_depth;
  c->depth_multiplier = 1;
  c->out_depth = filter[3];
  if (c->out_depth != out[conv_dim(cf, 'C')]) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: filter and out_backprop must have the same out_depth",
                   label);
    return false;
  }
  c->in_rows = input[conv_dim(cf, 'H')];
  c->in_cols = input[conv_dim(cf, 'W')];
  c->filter_rows = filter[0];
  c->filter_cols = filter[1];
  conv_spatial_attrs(c, a);
  if (!conv_windows(c, a, status))
    return false;
  for (int i = 0; i < 2; i++) {
    int dim = conv_dim(cf, i == 0 ? 'H' : 'W');
    int64_t got = out[dim], want = i == 0 ? c->out_rows : c->out_cols;
    if (got != want) {
      ocl_set_status(
          status, TF_INVALID_ARGUMENT,
          "%s: Size of out_backprop doesn't match computed: actual = %lld, "
          "computed = %lld spatial_dim: %d input: %lld filter: %lld output: "
          "%lld stride: %lld dilation: %lld",
          label, (long long)got, (long long)want, dim,
          (long long)(i == 0 ? c->in_rows : c->in_cols), (long long)filter[i],
          (long long)got, (long long)(i == 0 ? c->stride_rows : c->stride_cols),
          (long long)(i == 0 ? c->dilation_rows : c->dilation_cols));
      return false;
    }
  }
  memcpy(c->out_dims, input, sizeof(c->out_dims));
  return true;
}

bool ocl_depthwise_init(struct ocl_conv2d *c, const char *label,
                        const struct ocl_conv_attrs *a, const int64_t *input,
                        int input_rank, const int64_t *filter, int filter_rank,
                        const int64_t *out, int out_rank, TF_Status *status)
{
  bool cf = a->channels_first;
  memset(c, 0, sizeof(*c));
  if (out == NULL) {
    char s[160];
    if (input_rank != 4) {
      ocl_shape_format(input, input_rank, s, sizeof(s));
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "input must be 4-dimensional%s", s);
      return false;
    }
    if (filter_rank != 4) {
      ocl_shape_format(filter, filter_rank, s, sizeof(s));
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "filter must be 4-dimensional: %s", s);
      return false;
    }
  } else {
    const char *bad = input_rank != 4    ? "input"
                      : filter_rank != 4 ? "filter"
                      : out_rank != 4    ? "out_backprop"
                                         : NULL;
    if (bad != NULL) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%s: %s must be 4-dimensional", label, bad);
      return false;
    }
    if (input[0] != out[0]) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%s: input and out_backprop must have the same batch "
                     "size",
                     label);
      return false;
    }
  }
  c->batch = input[0];
  c->in_depth = input[conv_dim(cf, 'C')];
  c->in_rows = input[conv_dim(cf, 'H')];
  c->in_cols = input[conv_dim(cf, 'W')];
  if (c->in_rows > INT32_MAX || c->in_cols > INT32_MAX) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   c->in_rows > INT32_MAX ? "Input rows too large"
                                          : "Input cols too large");
    return false;
  }
  if (c->in_depth != filter[2]) {
    if (out == NULL)
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "input and filter must have the same depth: %lld vs "
                     "%lld",
                     (long long)c->in_depth, (long long)filter[2]);
    else
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%s: input and filter must have the same in_depth", label);
    return false;
  }
  c->filter_rows = filter[0];
  c->filter_cols = filter[1];
  c->filter_depth = filter[2];
  c->depth_multiplier = filter[3];
  c->groups = 1;
  c->out_depth = c->in_depth * c->depth_multiplier;
  if (out != NULL && out[conv_dim(cf, 'C')] != c->out_depth) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: depth_multiplier * in_depth not equal to out_depth",
                   label);
    return false;
  }
  conv_spatial_attrs(c, a);
  if (!conv_windows(c, a, status))
    return false;
  if (out != NULL) {
    for (int i = 0; i < 2; i++) {
      int64_t got = out[conv_dim(cf, i == 0 ? 'H' : 'W')];
      int64_t want = i == 0 ? c->out_rows : c->out_cols;
      if (got != want) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "%s: Number of %s of out_backprop doesn't match "
                       "computed: actual = %lld, computed = %lld",
                       label, i == 0 ? "rows" : "cols", (long long)got,
                       (long long)want);
        return false;
      }
    }
    memcpy(c->out_dims, input, sizeof(c->out_dims));
  } else {
    conv_format_dims(cf, c->batch, c->out_rows, c->out_cols, c->out_depth,
                     c->out_dims);
  }
  return true;
}

bool ocl_conv_input_sizes(const int32_t *sizes, int64_t count, int sizes_rank,
                          const int64_t *filter, int filter_rank,
                          const int64_t *out, int out_rank, bool channels_first,
                          int64_t *dims, TF_Status *status)
{
  if (sizes_rank != 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Conv2DBackpropInput: input_sizes input must be 1-dim, not "
                   "%d",
                   sizes_rank);
    return false;
  }
  if (count == 4) {
    for (int i = 0; i < 4; i++) {
      if (sizes[i] < 0) {
        ocl_set_status(status, TF_INVALID_ARGUMENT, "Dimension %d must be >= 0",
                       (int)sizes[i]);
        return false;
      }
      dims[i] = sizes[i];
    }
    return true;
  }
  if (count == 2) {
    if (sizes[0] < 0 || sizes[1] < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Conv2DBackpropInput: elements of input_sizes must be "
                     ">= 0, not %dx%d",
                     (int)sizes[0], (int)sizes[1]);
      return false;
    }
    int64_t batch = out_rank == 4 ? out[0] : 0;
    int64_t depth = filter_rank == 4 ? filter[2] : 0;
    conv_format_dims(channels_first, batch, sizes[0], sizes[1], depth, dims);
    return true;
  }
  ocl_set_status(status, TF_INVALID_ARGUMENT,
                 "Conv2DBackpropInput requires input_sizes to contain 4 "
                 "values or 2 values, but got: %lld",
                 (long long)count);
  return false;
}

/* ---- Pooling ------------------------------------------------------------ */

bool ocl_pool2d_check_attrs(const int64_t *ksize, int ksize_len,
                            const int64_t *strides, int strides_len,
                            enum ocl_padding padding,
                            const int64_t *explicit_paddings, int num_explicit,
                            bool channels_first, TF_Status *status)
{
  if (ksize_len != 4) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Sliding window ksize field must specify 4 dimensions");
    return false;
  }
  for (int i = 0; i < 4; i++) {
    if (ksize[i] <= 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Sliding window ksize for dimension %d was zero.", i);
      return false;
    }
  }
  if (strides_len != 4) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Sliding window stride field must specify 4 dimensions");
    return false;
  }
  if (padding == OCL_PADDING_EXPLICIT) {
    if (num_explicit != 8) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "explicit_paddings attribute must contain 8 values, but "
                     "got: %d",
                     num_explicit);
      return false;
    }
    for (int i = 0; i < 8; i++) {
      if (explicit_paddings[i] < 0) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "All elements of explicit_paddings must be "
                       "nonnegative");
        return false;
      }
    }
    int depth = channels_first ? 1 : 3;
    if (explicit_paddings[0] != 0 || explicit_paddings[1] != 0 ||
        explicit_paddings[2 * depth] != 0 ||
        explicit_paddings[2 * depth + 1] != 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Nonzero explicit padding in the batch or depth "
                     "dimensions is not supported");
      return false;
    }
  }
  if (ksize[0] != 1 || strides[0] != 1) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "Pooling is not yet supported on the batch dimension.");
    return false;
  }
  return true;
}

static bool pool_padding_fits(const char *side, int64_t pad, int64_t window,
                              TF_Status *status)
{
  if (pad >= 0 && pad < window)
    return true;
  ocl_set_status(status, TF_INVALID_ARGUMENT,
                 "%s padding %lld needs to be smaller than the window size "
                 "%lld",
                 side, (long long)pad, (long long)window);
  return false;
}

bool ocl_pool2d_init(struct ocl_pool2d *p, const int64_t *in_dims, int in_rank,
                     const int64_t *ksize, const int64_t *strides,
                     enum ocl_padding padding, const int64_t *explicit_paddings,
                     bool channels_first, TF_Status *status)
{
  memset(p, 0, sizeof(*p));
  if (in_rank != 4) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "tensor_in_shape must have 2 spatial dimensions. %d %d",
                   in_rank, channels_first ? 1 : 0);
    return false;
  }
  /* Index of H, W and C in dims, ksize and strides alike. */
  int h = channels_first ? 2 : 1, w = h + 1, c = channels_first ? 1 : 3;
  p->channels_first = channels_first;
  p->batch = in_dims[0];
  p->rows = in_dims[h];
  p->cols = in_dims[w];
  p->depth = in_dims[c];
  p->window_rows = ksize[h];
  p->window_cols = ksize[w];
  p->stride_rows = strides[h];
  p->stride_cols = strides[w];
  if (ksize[c] != 1) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   p->window_rows == 1 && p->window_cols == 1
                       ? "Depthwise pooling is not supported on OPENCL"
                       : "MaxPooling supports exactly one of pooling across "
                         "depth or pooling across width/height.");
    return false;
  }
  if (padding == OCL_PADDING_EXPLICIT) {
    p->pad_top = explicit_paddings[2 * h];
    p->pad_bottom = explicit_paddings[2 * h + 1];
    p->pad_left = explicit_paddings[2 * w];
    p->pad_right = explicit_paddings[2 * w + 1];
    if (!pool_padding_fits("Top", p->pad_top, p->window_rows, status) ||
        !pool_padding_fits("Bottom", p->pad_bottom, p->window_rows, status) ||
        !pool_padding_fits("Left", p->pad_left, p->window_cols, status) ||
        !pool_padding_fits("Right", p->pad_right, p->window_cols, status))
      return false;
  }
  if (!ocl_windowed_output_size(p->rows, p->window_rows, 1, p->stride_rows,
                                padding, &p->out_rows, &p->pad_top,
                                &p->pad_bottom, status) ||
      !ocl_windowed_output_size(p->cols, p->window_cols, 1, p->stride_cols,
                                padding, &p->out_cols, &p->pad_left,
                                &p->pad_right, status))
    return false;
  p->out_dims[0] = p->batch;
  p->out_dims[h] = p->out_rows;
  p->out_dims[w] = p->out_cols;
  p->out_dims[c] = p->depth;
  p->in_elements = ocl_shape_elements(in_dims, 4);
  p->out_elements = ocl_shape_elements(p->out_dims, 4);
  return true;
}
