/* The matmul family's GEMM, for other families (convolutions).
 *
 * c[b] = op(a[b]) * op(b[b]) for b < batches, op a transpose where asked;
 * c's matrices are contiguous (m * n apart), a's m * k apart and b's k * n
 * apart unless shared by every batch. The implementation is chosen as
 * matmul.c's MatMul chooses it: per device and size class (our own kernels
 * in the device's shape, CLBlast, or on CPU devices a host BLAS run in
 * stream order), see matmul.c. */
#ifndef TFOCL_KERNELS_GEMM_H_
#define TFOCL_KERNELS_GEMM_H_

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

struct ocl_gemm_desc {
  int64_t m, n, k;
  bool trans_a; /* a is stored k x m */
  bool trans_b; /* b is stored n x k */
  int64_t batches; /* >= 1 */
  bool a_shared, b_shared; /* one matrix for every batch */
  /* Where each operand starts in its tensor, in elements. */
  int64_t a_offset, b_offset, c_offset;
};

/* Enqueues the product on op's stream (dtype float or half; all three
 * tensors of that dtype). k == 0 writes zeros; m, n or batches == 0
 * enqueues nothing. False with op's status set. */
bool ocl_op_gemm(struct ocl_op *op, TF_DataType dtype,
                 const struct ocl_gemm_desc *desc, const TF_Tensor *a,
                 const TF_Tensor *b, const TF_Tensor *c);

/* A caller that builds a's rows itself (a convolution's im2col) can write
 * them straight into the packed CPU kernel's panels instead of a plain
 * matrix, saving that kernel's packing pass over them: panel p holds rows
 * [p * OCL_GEMM_PANEL_ROWS, + OCL_GEMM_PANEL_ROWS) as float, k-major
 * (panel[(p * k + kk) * OCL_GEMM_PANEL_ROWS + r] = a[p * ROWS + r][kk]),
 * rows past m zero (a meaning op(a): trans_a changes nothing here).
 * ocl_gemm_takes_panels says whether the product `desc` (one batch) would
 * run there on this device and configuration; only then may
 * ocl_op_gemm_panels run it. False with op's status set where the device
 * side cannot be reached. */
#define OCL_GEMM_PANEL_ROWS 8
bool ocl_gemm_takes_panels(struct ocl_op *op, TF_DataType dtype,
                           const struct ocl_gemm_desc *desc);
/* Panel elements for a product of m rows and depth k. */
int64_t ocl_gemm_panel_elements(int64_t m, int64_t k);
bool ocl_op_gemm_panels(struct ocl_op *op, TF_DataType dtype,
                        const struct ocl_gemm_desc *desc,
                        const TF_Tensor *a_panels, const TF_Tensor *b,
                        const TF_Tensor *c);

#endif /* TFOCL_KERNELS_GEMM_H_ */
