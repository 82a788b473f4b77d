/* ocl_gemm for the families still on kernels/launch.h (convolutions): the
 * runtime.h GEMM inside an ocl_op of its own, its status handed back.
 * Goes with launch.h once every family has moved onto runtime.h. */
#include "gemm.h"
#include "launch.h"

bool ocl_gemm(const struct ocl_launch *launch, TF_DataType dtype,
              const struct ocl_gemm_desc *desc, const TF_Tensor *a,
              const TF_Tensor *b, const TF_Tensor *c, TF_Status *status)
{
  struct ocl_op op;
  ocl_op_begin(&op, launch->ctx);
  bool ok = ocl_op_gemm(&op, dtype, desc, a, b, c);
  if (!ok)
    ocl_tf.SetStatus(status, ocl_tf.GetCode(op.status),
                     ocl_tf.Message(op.status));
  /* ocl_op_end would fail the kernel context itself: the caller does. The
   * GEMM's temps are released as it goes; delete any left. */
  for (int i = 0; i < op.num_owned; i++)
    if (op.owned[i] != NULL)
      ocl_tf.DeleteTensor(op.owned[i]);
  ocl_tf.DeleteStatus(op.status);
  return ok;
}
