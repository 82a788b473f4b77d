/* The geometry of convolutions and pooling: TensorFlow's attribute checks,
 * windowed output sizes and padding, in plain C with no OpenCL. The conv,
 * pool and image families share it. */
#ifndef TFOCL_KERNELS_CONV_GEOMETRY_H_
#define TFOCL_KERNELS_CONV_GEOMETRY_H_

#include <stdbool.h>
#include <stdint.h>

#include "tensorflow/c/tf_status.h"

/* ---- Windowed ops: convolutions and pooling ------------------------------ */

/* TensorFlow's `padding` attribute of windowed ops. */
enum ocl_padding { OCL_PADDING_VALID, OCL_PADDING_SAME, OCL_PADDING_EXPLICIT };

/* "VALID", "SAME" or "EXPLICIT"; false for anything else. */
bool ocl_padding_parse(const char *name, enum ocl_padding *padding);

/* TensorFlow's GetWindowedOutputSizeVerbose (kernel_shape_util.cc): the
 * output size of one spatial dim and its padding. For EXPLICIT,
 * pad_before/pad_after are inputs; otherwise outputs. INVALID_ARGUMENT with
 * TensorFlow's messages for a bad stride or dilation or a negative size. */
bool ocl_windowed_output_size(int64_t input, int64_t filter, int64_t dilation,
                              int64_t stride, enum ocl_padding padding,
                              int64_t *output, int64_t *pad_before,
                              int64_t *pad_after, TF_Status *status);

/* The attributes of a 2-D convolution, in the data format's order (strides,
 * dilations: 4; explicit_paddings: 2 per dim). */
struct ocl_conv_attrs {
  bool channels_first; /* NCHW */
  enum ocl_padding padding;
  int64_t strides[4];
  int num_strides;
  int64_t dilations[4];
  int num_dilations;
  int64_t explicit_paddings[8];
  int num_explicit_paddings;
};

/* TensorFlow's CheckValidPadding (util/padding.cc) for 4-D tensors. */
bool ocl_conv_check_padding(const struct ocl_conv_attrs *attrs,
                            TF_Status *status);

/* The attribute checks of TensorFlow's Conv2D constructor
 * (InitConv2DParameters) when `depthwise` is false; of
 * Conv2DBackpropFilter (conv_grad_filter_ops.cc) when `backprop` is true
 * (same rules, INVALID_ARGUMENT where Conv2D says UNIMPLEMENTED); of the
 * DepthwiseConv2dNative ops when `depthwise` is true (equal row and column
 * strides, unit dilations). ocl_conv_check_kind below with the matching
 * kind. */
bool ocl_conv_check_attrs(const struct ocl_conv_attrs *attrs, bool backprop,
                          bool depthwise, TF_Status *status);

/* Whose attribute checks ocl_conv_check_kind makes: TensorFlow's CPU
 * kernels (what TensorFlow runs when no GPU is there) differ in the codes
 * of a few. */
enum ocl_conv_check {
  OCL_CHECK_CONV2D,          /* Conv2D, _FusedConv2D */
  OCL_CHECK_BACKPROP_INPUT,  /* Conv2DBackpropInput */
  OCL_CHECK_BACKPROP_FILTER, /* Conv2DBackpropFilter */
  OCL_CHECK_DEPTHWISE,       /* DepthwiseConv2dNative and its gradients */
};

/* ocl_conv_check_attrs for one op: UNIMPLEMENTED for a stride or dilation
 * in the batch or depth dimension from Conv2D and Conv2DBackpropInput,
 * INVALID_ARGUMENT from the others. */
bool ocl_conv_check_kind(const struct ocl_conv_attrs *attrs,
                         enum ocl_conv_check kind, TF_Status *status);

/* One 2-D convolution's geometry, layout-independent. in_depth is
 * filter_depth * groups; for a depthwise convolution out_depth is
 * in_depth * depth_multiplier (filter_depth = in_depth, groups = 1). */
struct ocl_conv2d {
  int64_t batch, in_rows, in_cols, in_depth;
  int64_t filter_rows, filter_cols, filter_depth, out_depth;
  int64_t out_rows, out_cols;
  int64_t stride_rows, stride_cols, dilation_rows, dilation_cols;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
  int64_t groups, depth_multiplier;
  /* The output (forward) / input (backprop) shape in the data format. */
  int64_t out_dims[4];
};

/* Conv2D's ComputeConv2DDimension (conv_ops.cc): input and filter shapes
 * against the attributes (already checked), with TensorFlow's messages. */
bool ocl_conv2d_forward_init(struct ocl_conv2d *c,
                             const struct ocl_conv_attrs *attrs,
                             const int64_t *input, int input_rank,
                             const int64_t *filter, int filter_rank,
                             TF_Status *status);

/* After ocl_conv2d_forward_init: Conv2D's launcher refuses a filter with
 * no elements when the output and the input have some (INVALID_ARGUMENT
 * "filter must not have zero elements (i.e. all dimensions must be
 * non-zero)"). _FusedConv2D's CPU kernel does not check. */
bool ocl_conv2d_check_filter(const struct ocl_conv2d *c, const int64_t *input,
                             const int64_t *filter, TF_Status *status);

/* ConvBackpropComputeDimensionsV2 (conv_grad_shape_utils.cc) with `label`
 * ("Conv2DSlowBackpropInput", ...): the three shapes must agree. */
bool ocl_conv2d_backprop_init(struct ocl_conv2d *c, const char *label,
                              const struct ocl_conv_attrs *attrs,
                              const int64_t *input, int input_rank,
                              const int64_t *filter, int filter_rank,
                              const int64_t *out_backprop, int out_rank,
                              TF_Status *status);

/* DepthwiseConv2dNativeOp::Compute's checks (depthwise_conv_op.cc) when
 * out_backprop is NULL, else the EXTRACT_AND_VERIFY_DIMENSIONS of
 * depthwise_conv_grad_op.cc with `label`. */
bool ocl_depthwise_init(struct ocl_conv2d *c, const char *label,
                        const struct ocl_conv_attrs *attrs,
                        const int64_t *input, int input_rank,
                        const int64_t *filter, int filter_rank,
                        const int64_t *out_backprop, int out_rank,
                        TF_Status *status);

/* Conv2DBackpropInput's input_sizes (Conv2DBackpropComputeInputShape,
 * conv_grad_shape_utils.cc): 4 values, or 2 (rows, cols) completed from
 * out_backprop's batch and the filter's depth. `what` names the op in the
 * messages ("Conv2DBackpropInput"). */
bool ocl_conv_input_sizes(const int32_t *sizes, int64_t count, int sizes_rank,
                          const int64_t *filter, int filter_rank,
                          const int64_t *out_backprop, int out_rank,
                          bool channels_first, int64_t *dims,
                          TF_Status *status);

/* ---- Pooling (kernels/pool.c) -------------------------------------------- */

/* The attributes of a 2-D pooling op, checked as TensorFlow's pooling
 * kernels check them at construction: 4 ksize and stride values, ksize
 * positive, for EXPLICIT 8 non-negative explicit_paddings that leave batch
 * and depth alone (CheckValidPadding), no pooling over the batch. */
bool ocl_pool2d_check_attrs(const int64_t *ksize, int ksize_len,
                            const int64_t *strides, int strides_len,
                            enum ocl_padding padding,
                            const int64_t *explicit_paddings, int num_explicit,
                            bool channels_first, TF_Status *status);

/* One 2-D pooling problem (TensorFlow's PoolParameters), NHWC or NCHW. */
struct ocl_pool2d {
  bool channels_first;
  int64_t batch, rows, cols, depth;
  int64_t window_rows, window_cols, stride_rows, stride_cols;
  int64_t out_rows, out_cols;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
  int64_t out_dims[4]; /* the forward output's shape, in the data format */
  int64_t in_elements, out_elements;
};

/* Attributes as ocl_pool2d_check_attrs accepted them (explicit_paddings:
 * 8 values for EXPLICIT, else unused). INVALID_ARGUMENT "tensor_in_shape
 * must have 2 spatial dimensions. 3 0" for a rank other than 4 (the last
 * number is TensorFlow's format enum: 0 NHWC, 1 NCHW), the windowed-size
 * errors, "Top padding 3 needs to be smaller than the window size 2" for
 * EXPLICIT; UNIMPLEMENTED for a depth window other than 1. */
bool ocl_pool2d_init(struct ocl_pool2d *p, const int64_t *in_dims, int in_rank,
                     const int64_t *ksize, const int64_t *strides,
                     enum ocl_padding padding, const int64_t *explicit_paddings,
                     bool channels_first, TF_Status *status);

#endif /* TFOCL_KERNELS_CONV_GEOMETRY_H_ */
