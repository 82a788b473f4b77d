/* What the scatter family (kernels/scatter.c) borrows from the gather
 * family: its element-moving programs and the GatherV2 launch, which
 * ResourceGather shares. */
#ifndef TFOCL_KERNELS_GATHER_H_
#define TFOCL_KERNELS_GATHER_H_

#include "runtime.h"

/* gather.cl built for dtype's element size (1, 2, 4, 8 or 16 bytes); NULL
 * for another size. */
const struct ocl_program *ocl_gather_program(TF_DataType dtype);

/* The kernels of one gather of `dtype` elements by `itype` indices (int16,
 * int32, int64), named at create time. False for another index type. */
struct ocl_gather_kernels {
  struct ocl_kernel k[3];
};
bool ocl_gather_kernels_init(struct ocl_gather_kernels *g, TF_DataType dtype,
                             TF_DataType itype);

/* out[b, o, j, k] = params[b, o, indices[b, j], k] with params viewed as
 * [batch, outer, limit, inner] and out as [batch, outer, nb, inner]; zeros
 * for an index outside [0, limit). */
bool ocl_gather_launch(struct ocl_op *op, struct ocl_gather_kernels *g,
                       const TF_Tensor *params, const TF_Tensor *indices,
                       TF_Tensor *out, int64_t batch, int64_t outer,
                       int64_t limit, int64_t inner, int64_t nb);

#endif /* TFOCL_KERNELS_GATHER_H_ */
