/* ocl_op_gemm (gemm.h) on top of the GEMM entry the matmul family offers
 * on this branch, ocl_gemm on kernels/launch.h. The matmul family's move
 * onto runtime.h defines ocl_op_gemm itself: this file then goes (the two
 * definitions would collide at link time, which says so). */
#include "gemm.h"
#include "launch.h"

bool ocl_op_gemm(struct ocl_op *op, TF_DataType dtype,
                 const struct ocl_gemm_desc *desc, const TF_Tensor *a,
                 const TF_Tensor *b, const TF_Tensor *c)
{
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, op->ctx, op->status))
    return false;
  return ocl_gemm(&launch, dtype, desc, a, b, c, op->status);
}
