/* Linear algebra: Qr (tf.linalg.qr) and MatrixDiagPartV3
 * (tf.linalg.diag_part): Keras' Orthogonal initializer runs both.
 *
 * float and double, as TensorFlow's GPU registers it. (TensorFlow's GPU
 * kernel is its CPU one with every argument in host memory; this one runs
 * on the device: linalg.cl, a work-group per matrix, the whole batch in one
 * launch.) q and r follow LAPACK's geqrf/orgqr, which is what TensorFlow's
 * CPU kernel (Eigen's HouseholderQR) computes too: R's diagonal is
 * -sign(a_jj) times the column's norm, and a column already zero below its
 * diagonal is left unreflected. */
#include <stdlib.h>
#include <string.h>

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

/* ---- MatrixDiagPartV3 ------------------------------------------------------ */

/* k and padding_value live in host memory, as on TensorFlow's GPUs. */
static const char *const diag_host_args[] = {"k", "padding_value", NULL};

struct diag_kernel {
  TF_DataType dtype;
  bool right_super, right_sub;
  struct ocl_kernel part;
};

static void *diag_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct diag_kernel *k = calloc(1, sizeof(*k));
  /* GetAttrString copies the bytes without a terminator. */
  char align[32] = {0};
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  /* TensorFlow's default, RIGHT_LEFT: superdiagonals right-aligned,
   * subdiagonals left-aligned. */
  k->right_super = true;
  if (ocl_tf.OpKernelConstruction_GetAttrString != NULL) {
    ocl_tf.OpKernelConstruction_GetAttrString(ctx, "align", align,
                                              sizeof(align) - 1, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
    if (align[0] != '\0') {
      if (strcmp(align, "RIGHT_LEFT") && strcmp(align, "LEFT_RIGHT") &&
          strcmp(align, "LEFT_LEFT") && strcmp(align, "RIGHT_RIGHT")) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Unknown alignment: %s", align);
        goto fail;
      }
      k->right_super = strncmp(align, "RIGHT", 5) == 0;
      k->right_sub = strcmp(align + strlen(align) - 5, "RIGHT") == 0;
    }
  }
  if (!ocl_kernel_init(&k->part,
                       &programs[k->dtype == TF_DOUBLE ? P_DOUBLE : P_FLOAT],
                       "matrix_diag_part")) {
    ocl_set_status(status, TF_INTERNAL, "MatrixDiagPartV3: kernel name");
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void diag_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct diag_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK];
  ocl_op_begin(&op, ctx);
  TF_Tensor *in = ocl_op_input(&op, 0);
  TF_Tensor *kt = in != NULL ? ocl_op_input(&op, 1) : NULL;
  TF_Tensor *pad = kt != NULL ? ocl_op_input(&op, 2) : NULL;
  if (pad == NULL)
    goto done;
  int rank = ocl_tf.NumDims(in);
  if (rank < 2) {
    if (rank == 1)
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "input must be at least 2-dim, received shape: [%lld]",
                  (long long)ocl_tf.Dim(in, 0));
    else
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "input must be at least 2-dim, received shape: []");
    goto done;
  }
  int k_rank = ocl_tf.NumDims(kt);
  int64_t k_count = ocl_tf.TensorElementCount(kt);
  if (k_rank > 1 || k_count < 1 || k_count > 2) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "diag_index must be a scalar or vector with at most two "
                "elements, received %lld elements",
                (long long)k_count);
    goto done;
  }
  if (ocl_tf.TensorElementCount(pad) != 1 || ocl_tf.NumDims(pad) != 0) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "padding_value must be a scalar");
    goto done;
  }
  int64_t k_lo = ocl_host_int(kt, 0);
  int64_t k_hi = k_count == 2 ? ocl_host_int(kt, 1) : k_lo;
  for (int i = 0; i < rank; i++)
    dims[i] = ocl_tf.Dim(in, i);
  int64_t M = dims[rank - 2], N = dims[rank - 1];
  if (k_lo > k_hi) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "lower_diag_index must not be larger than upper_diag_index: "
                "%lld > %lld",
                (long long)k_lo, (long long)k_hi);
    goto done;
  }
  if ((M != 0 || N != 0) && (k_lo <= -M || k_lo >= N)) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "lower_diag_index is out of bound: %lld. It must be between "
                "%lld and %lld",
                (long long)k_lo, (long long)-M, (long long)N);
    goto done;
  }
  if ((M != 0 || N != 0) && (k_hi <= -M || k_hi >= N)) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "upper_diag_index is out of bound: %lld. It must be between "
                "%lld and %lld",
                (long long)k_hi, (long long)-M, (long long)N);
    goto done;
  }
  int64_t num_diags = k_hi - k_lo + 1;
  int64_t max_len = M + (k_hi < 0 ? k_hi : 0);
  if (N - (k_lo > 0 ? k_lo : 0) < max_len)
    max_len = N - (k_lo > 0 ? k_lo : 0);
  if (max_len < 0)
    max_len = 0;
  int64_t batch = ocl_shape_elements(dims, rank - 2);
  int out_rank = rank - 2;
  if (num_diags > 1)
    dims[out_rank++] = num_diags;
  dims[out_rank++] = max_len;
  TF_Tensor *out = ocl_op_output(&op, 0, k->dtype, dims, out_rank);
  int64_t total = batch * num_diags * max_len;
  if (out == NULL || total == 0)
    goto done;
  if (batch * M * N >= INT32_MAX || total >= INT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "MatrixDiagPartV3 on OPENCL takes tensors of fewer than "
                "2^31 elements");
    goto done;
  }
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto done;
  if (k->dtype == TF_DOUBLE && !info->has_fp64) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "MatrixDiagPartV3 in double needs cl_khr_fp64, which OpenCL "
                "device %d lacks",
                info->ordinal);
    goto done;
  }
  const void *pad_data = ocl_tf.TensorData(pad);
  double padding = k->dtype == TF_DOUBLE ? *(const double *)pad_data
                                         : *(const float *)pad_data;
  float padding_f = (float)padding;
  const struct ocl_arg args[] = {
      OCL_TENSOR(in),
      OCL_TENSOR(out),
      OCL_INT(M),
      OCL_INT(N),
      OCL_INT(k_hi),
      OCL_INT(num_diags),
      OCL_INT(max_len),
      OCL_INT(k->right_super),
      OCL_INT(k->right_sub),
      k->dtype == TF_DOUBLE ? OCL_BYTES(&padding, sizeof(padding))
                            : OCL_BYTES(&padding_f, sizeof(padding_f)),
      OCL_INT(total),
  };
  ocl_launch_1d(&op, &k->part, (size_t)total, args,
                (int)(sizeof(args) / sizeof(args[0])));
done:
  ocl_op_end(&op);
}

static void diag_delete(void *kernel) { free(kernel); }

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
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "MatrixDiagPartV3",
        .create = diag_create,
        .compute = diag_compute,
        .destroy = diag_delete,
        .type_attrs = {"T"},
        .types = {types[i]},
        .host_args = diag_host_args,
    });
}
