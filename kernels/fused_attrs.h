/* Attributes the graph passes (plugin/graph) add to TensorFlow's own ops
 * to fuse work into them, which the ops' kernels and the host reference
 * read. Internal ("_"): TensorFlow's op definitions do not list them, so
 * only the plugin's passes write them. */
#ifndef TFOCL_KERNELS_FUSED_ATTRS_H_
#define TFOCL_KERNELS_FUSED_ATTRS_H_

/* bool, on MaxPoolGrad: the ReluGrad of its orig_input follows, fused
 * (pass_fusion.c): the gradient times (orig_input > 0). */
#define POOL_RELU_GRAD_ATTR "_tfocl_relu_grad"

#endif
