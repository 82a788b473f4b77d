/* The conv family's 3-D shapes: Conv3D's attribute checks and the shape
 * checks of Conv3D and its gradients, with TensorFlow's messages
 * (conv_ops_3d.cc, conv_grad_shape_utils.cc). */
#include <string.h>

#include "conv_internal.h"

/* Index of dim 'N', 'C' or spatial dim 0..2 in a 5-D shape. */
static int dim5(bool channels_first, int which)
{
  if (which == 'N')
    return 0;
  if (which == 'C')
    return channels_first ? 1 : 4;
  return channels_first ? 2 + which : 1 + which;
}

bool conv3d_check_attrs(const struct conv_attrs *a, TF_Status *status)
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

static void conv3d_format_dims(bool cf, int64_t n, const int64_t *sp, int64_t c,
                               int64_t *dims)
{
  dims[0] = n;
  dims[dim5(cf, 'C')] = c;
  for (int i = 0; i < 3; i++)
    dims[dim5(cf, i)] = sp[i];
}

bool conv3d_forward_init(struct conv_geo *g, const struct conv_attrs *a,
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
    ocl_set_status(status, TF_INVALID_ARGUMENT, "filter must be 5-dimensional");
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

bool conv3d_backprop_init(struct conv_geo *g, const char *label,
                          const struct conv_attrs *a, const int64_t *input,
                          int input_rank, const int64_t *filter,
                          int filter_rank, const int64_t *out, int out_rank,
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
