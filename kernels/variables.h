/* What other families borrow from the variables family (kernels/variables.c). */
#ifndef TFOCL_KERNELS_VARIABLES_H_
#define TFOCL_KERNELS_VARIABLES_H_

#include "runtime.h"

/* The copyFunc of kernels_experimental.h: dest := source (device tensors of
 * one size) in compute-stream order; owns and deletes both tensors, fails
 * the kernel on error. */
void ocl_variable_copy(TF_OpKernelContext *ctx, TF_Tensor *source,
                       TF_Tensor *dest);

#endif /* TFOCL_KERNELS_VARIABLES_H_ */
