/* The list of kernel families: one call per family. */
#include "kernel_families.h"

void ocl_register_kernel_families(void)
{
  ocl_register_binary_kernels();
  ocl_register_unary_kernels();
  ocl_register_reduce_kernels();
  ocl_register_softmax_kernels();
  ocl_register_matmul_kernels();
  ocl_register_movement_kernels();
  ocl_register_gather_kernels();
  ocl_register_variables_kernels();
  ocl_register_conv_kernels();
  ocl_register_pool_kernels();
  ocl_register_batch_norm_kernels();
  ocl_register_random_kernels();
  ocl_register_scatter_kernels();
  ocl_register_linalg_kernels();
  ocl_register_fused_kernels();
  ocl_register_image_kernels();
  ocl_register_einsum_kernels();
  ocl_register_scan_kernels();
  ocl_register_select_kernels();
  ocl_register_segment_kernels();
  ocl_register_numerics_kernels();
  ocl_register_fft_kernels();
  ocl_register_complex_kernels();
  ocl_register_rnn_kernels();
}
