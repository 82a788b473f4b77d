/* Registration entry points of the kernel families. */
#ifndef TFOCL_KERNELS_KERNEL_FAMILIES_H_
#define TFOCL_KERNELS_KERNEL_FAMILIES_H_

/* Registers every family's kernels (TF_InitKernel, once the TensorFlow C
 * API has been resolved). */
void ocl_register_kernel_families(void);

void ocl_register_binary_kernels(void);
void ocl_register_unary_kernels(void);
void ocl_register_reduce_kernels(void);
void ocl_register_softmax_kernels(void);
void ocl_register_matmul_kernels(void);
void ocl_register_movement_kernels(void);
void ocl_register_gather_kernels(void);
void ocl_register_variables_kernels(void);
void ocl_register_conv_kernels(void);
void ocl_register_pool_kernels(void);
void ocl_register_batch_norm_kernels(void);
void ocl_register_random_kernels(void);
void ocl_register_scatter_kernels(void);
void ocl_register_linalg_kernels(void);
void ocl_register_fused_kernels(void);
void ocl_register_image_kernels(void);
void ocl_register_einsum_kernels(void);
void ocl_register_scan_kernels(void);
void ocl_register_select_kernels(void);
void ocl_register_segment_kernels(void);
void ocl_register_numerics_kernels(void);
void ocl_register_fft_kernels(void);
void ocl_register_complex_kernels(void);
void ocl_register_rnn_kernels(void);

/* The source of the program that fused.c's kernels name `name` ("fused:"
 * and the program's text), malloc'd; NULL for any other name. How a
 * program listed by an earlier process (plugin/program_cache.c) is built
 * ahead: the name is parsed and checked as a graph's program is, never
 * taken as source. */
char *ocl_fused_program_source(const char *name);

#endif /* TFOCL_KERNELS_KERNEL_FAMILIES_H_ */
