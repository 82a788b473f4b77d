/* Linear algebra: Qr (tf.linalg.qr; Keras' Orthogonal initializer runs it).
 *
 * float and double, as TensorFlow's GPU registers it. (TensorFlow's GPU
 * kernel is its CPU one with every argument in host memory; this one runs
 * on the device: linalg.cl, a work-group per matrix, the whole batch in one
 * launch.) q and r follow LAPACK's geqrf/orgqr, which is what TensorFlow's
 * CPU kernel (Eigen's HouseholderQR) computes too: R's diagonal is
 * -sign(a_jj) times the column's norm, and a column already zero below its
 * diagonal is left unreflected. */
#include <stdlib.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_linalg[];

enum { P_FLOAT, P_DOUBLE, NUM_PROGRAMS };
static const struct ocl_program programs[NUM_PROGRAMS] = {
    [P_FLOAT] = {"linalg_float", ocl_cl_source_linalg, "-DT=float"},
    [P_DOUBLE] = {"linalg_double", ocl_cl_source_linalg,
                  "-DT=double -DT_IS_DOUBLE"},
};

/* The work-group of a matrix: as wide as linalg.cl's local scratch, and
 * fixed per device (PoCL compiles a kernel again per local size). */
#define QR_LOCAL 256

struct qr_kernel {
  TF_DataType dtype;
  bool full_matrices;
  struct ocl_kernel qr;
};

static void *qr_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct qr_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  TF_Bool full = 0;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "full_matrices", &full,
                                          status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->full_matrices = full != 0;
  if (!ocl_kernel_init(&k->qr,
                       &programs[k->dtype == TF_DOUBLE ? P_DOUBLE : P_FLOAT],
                       "qr_householder")) {
    ocl_set_status(status, TF_INTERNAL, "Qr: kernel name too long");
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void qr_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct qr_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK];
  ocl_op_begin(&op, ctx);

  TF_Tensor *in = ocl_op_input(&op, 0);
  if (in == NULL)
    goto done;
  int rank = ocl_tf.NumDims(in);
  if (rank < 2) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "Input tensor 0 must have rank >= 2, got %d", rank);
    goto done;
  }
  for (int i = 0; i < rank && i < OCL_MAX_RANK; i++)
    dims[i] = ocl_tf.Dim(in, i);
  int64_t m = dims[rank - 2], n = dims[rank - 1];
  int64_t p = m < n ? m : n;
  int64_t batch = ocl_shape_elements(dims, rank - 2);
  int64_t qc = k->full_matrices ? m : p, rr = k->full_matrices ? m : p;

  dims[rank - 1] = qc;
  TF_Tensor *q = ocl_op_output(&op, 0, k->dtype, dims, rank);
  dims[rank - 2] = rr;
  dims[rank - 1] = n;
  TF_Tensor *r = q != NULL ? ocl_op_output(&op, 1, k->dtype, dims, rank)
                           : NULL;
  if (r == NULL)
    goto done;
  /* Nothing to write (an [m, 0] input still has the identity as its full
   * q, which the kernel writes). */
  if (batch * m * qc == 0 && batch * rr * n == 0)
    goto done;

  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto done;
  if (k->dtype == TF_DOUBLE && !info->has_fp64) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "Qr in double needs cl_khr_fp64, which OpenCL device %d "
                "lacks",
                info->ordinal);
    goto done;
  }
  if (m * n >= INT32_MAX / 2 || m * qc >= INT32_MAX / 2) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "Qr of %lld x %lld matrices is beyond the OPENCL kernel "
                "(one work-group per matrix)",
                (long long)m, (long long)n);
    goto done;
  }
  TF_Tensor *work = ocl_op_temp(&op, k->dtype, batch * (m * n + p));
  if (work == NULL)
    goto done;
  size_t local = ocl_kernel_fit_local(&op, &k->qr, QR_LOCAL);
  if (local == 0)
    goto done;
  size_t global = (size_t)batch * local;
  const struct ocl_arg args[] = {
      OCL_TENSOR(in),   OCL_TENSOR(q),     OCL_TENSOR(r),
      OCL_TENSOR(work), OCL_INT(m),        OCL_INT(n),
      OCL_INT(k->full_matrices),
      OCL_LOCAL(local * ocl_tf.DataTypeSize(k->dtype)),
  };
  ocl_launch(&op, &k->qr, 1, &global, &local, args,
             (int)(sizeof(args) / sizeof(args[0])));
done:
  ocl_op_end(&op);
}

static void qr_delete(void *kernel) { free(kernel); }

void ocl_register_linalg_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_DOUBLE};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "Qr",
        .create = qr_create,
        .compute = qr_compute,
        .destroy = qr_delete,
        .type_attrs = {"T"},
        .types = {types[i]},
    });
}
