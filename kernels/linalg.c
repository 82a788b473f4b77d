/* Linear algebra: Qr (tf.linalg.qr) and MatrixDiagPartV3
 * (tf.linalg.diag_part), which Keras' Orthogonal initializer runs; Cholesky,
 * MatrixInverse, MatrixSolve, MatrixDeterminant, LogMatrixDeterminant and
 * MatrixTriangularSolve (tf.linalg.cholesky, inv, solve, det, slogdet,
 * triangular_solve); MatrixDiagV3, MatrixSetDiagV3 and MatrixBandPart
 * (tf.linalg.diag, set_diag, band_part).
 *
 * The arithmetic ops take float and double, as TensorFlow's GPU registers
 * them (its complex64/complex128 kernels are not here); the element moves
 * take every type TensorFlow's GPU registers them for (bool, half,
 * bfloat16, float, double, complex64, complex128), through one program per
 * element size. Qr: TensorFlow's GPU kernel is its CPU one with every
 * argument in host memory; this one runs on the device (linalg.cl, a
 * work-group per matrix, the whole batch in one launch). q and r follow
 * LAPACK's geqrf/orgqr, which is what TensorFlow's CPU kernel (Eigen's
 * HouseholderQR) computes too: R's diagonal is -sign(a_jj) times the
 * column's norm, and a column already zero below its diagonal is left
 * unreflected.
 *
 * The factorisations follow TensorFlow's GPU kernels (cuSolver/cuBLAS):
 * partial pivoting for the LU family, the determinant as the sign times
 * exp(sum log|u_ii|). Where those kernels check LAPACK's info on the host
 * after the work ran (MatrixInverse, MatrixSolve: "not invertible"), the
 * kernel here raises a flag in device memory and the op reads it back,
 * waiting for the stream as TensorFlow's GPU op waits for its info
 * callback. Cholesky of a matrix that is not positive definite does not
 * fail on TensorFlow's GPU (2.19): it logs a warning and fills the lower
 * triangle with NaN; so does this kernel (the upper triangle stays zero),
 * without the warning. */
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_linalg[];

enum {
  P_FLOAT,
  P_DOUBLE,
  P_FLOAT_GLOBAL,
  P_DOUBLE_GLOBAL,
  P_MOVE_1,
  P_MOVE_2,
  P_MOVE_4,
  P_MOVE_8,
  P_MOVE_16,
  NUM_PROGRAMS
};
OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_PROGRAMS] = {
    [P_FLOAT] = {"linalg_float", ocl_cl_source_linalg, "-DT=float"},
    [P_DOUBLE] = {"linalg_double", ocl_cl_source_linalg,
                  "-DT=double -DT_IS_DOUBLE"},
    /* The Jacobi kernels with their matrices in global memory (beyond the
     * device's local memory). */
    [P_FLOAT_GLOBAL] = {"linalg_float_global", ocl_cl_source_linalg,
                        "-DT=float -DJACOBI_GLOBAL -DJACOBI_MEM=__global"},
    [P_DOUBLE_GLOBAL] = {"linalg_double_global", ocl_cl_source_linalg,
                         "-DT=double -DT_IS_DOUBLE -DJACOBI_GLOBAL "
                         "-DJACOBI_MEM=__global"},
    [P_MOVE_1] = {"linalg_move_1", ocl_cl_source_linalg,
                  "-DLINALG_MOVE -DT=uchar"},
    [P_MOVE_2] = {"linalg_move_2", ocl_cl_source_linalg,
                  "-DLINALG_MOVE -DT=ushort"},
    [P_MOVE_4] = {"linalg_move_4", ocl_cl_source_linalg,
                  "-DLINALG_MOVE -DT=uint"},
    [P_MOVE_8] = {"linalg_move_8", ocl_cl_source_linalg,
                  "-DLINALG_MOVE -DT=ulong"},
    /* complex128 */
    [P_MOVE_16] = {"linalg_move_16", ocl_cl_source_linalg,
                   "-DLINALG_MOVE -DT=ulong2"},
};

/* The element-moving program for dtype's size. */
static const struct ocl_program *move_program(TF_DataType dtype)
{
  switch (ocl_tf.DataTypeSize(dtype)) {
  case 1: return &programs[P_MOVE_1];
  case 2: return &programs[P_MOVE_2];
  case 4: return &programs[P_MOVE_4];
  case 8: return &programs[P_MOVE_8];
  default: return &programs[P_MOVE_16];
  }
}

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

/* k, num_rows, num_cols and padding_value live in host memory, as on
 * TensorFlow's GPUs. */
static const char *const diag_part_host_args[] = {"k", "padding_value", NULL};
static const char *const diag_host_args[] = {"k", "num_rows", "num_cols",
                                             "padding_value", NULL};
static const char *const set_diag_host_args[] = {"k", NULL};

/* MatrixDiagPartV3, MatrixDiagV3 and MatrixSetDiagV3 share the align
 * attribute and these. */
struct diag_kernel {
  TF_DataType dtype;
  bool right_super, right_sub;
  struct ocl_kernel part;
};

static void *diag_create_named(TF_OpKernelConstruction *ctx,
                               const char *kernel_name)
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
  if (!ocl_kernel_init(&k->part, move_program(k->dtype), kernel_name)) {
    ocl_set_status(status, TF_INTERNAL, "%s: kernel name", kernel_name);
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void *diag_part_create(TF_OpKernelConstruction *ctx)
{
  return diag_create_named(ctx, "matrix_diag_part");
}

static void *diag_create(TF_OpKernelConstruction *ctx)
{
  return diag_create_named(ctx, "matrix_diag");
}

static void diag_part_compute(void *kernel, TF_OpKernelContext *ctx)
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
  /* The padding value's bytes: the kernel moves elements as unsigned
   * integers of their size. */
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
      OCL_BYTES(ocl_tf.TensorData(pad), ocl_tf.DataTypeSize(k->dtype)),
      OCL_INT(total),
  };
  ocl_launch_1d(&op, &k->part, (size_t)total, args,
                (int)(sizeof(args) / sizeof(args[0])));
done:
  ocl_op_end(&op);
}

static void diag_delete(void *kernel) { free(kernel); }


/* k of the V3 diagonal ops: a scalar or a vector of one or two elements,
 * int32 in host memory. False with TensorFlow's message. */
static bool diag_index(struct ocl_op *op, const TF_Tensor *kt, int64_t *lo,
                       int64_t *hi)
{
  int k_rank = ocl_tf.NumDims(kt);
  if (k_rank > 1) {
    char shape[96];
    int64_t kd[OCL_MAX_DIMS];
    int r = ocl_op_dims(op, kt, kd);
    if (r < 0)
      return false;
    ocl_shape_format(kd, r, shape, (int)sizeof(shape));
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "diag_index must be a scalar or vector, received "
                       "shape: %s",
                       shape);
  }
  int64_t count = ocl_tf.TensorElementCount(kt);
  if (k_rank == 1 && (count < 1 || count > 2))
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "diag_index must have only one or two elements, "
                       "received %lld elements.",
                       (long long)count);
  *lo = ocl_host_int(kt, 0);
  *hi = count == 2 ? ocl_host_int(kt, 1) : *lo;
  return true;
}

/* A scalar operand read as TensorFlow's kernels read it (its first
 * element): false with the op failed where it has none. */
static bool has_first(struct ocl_op *op, const TF_Tensor *t, const char *name)
{
  if (ocl_tf.TensorElementCount(t) >= 1)
    return true;
  return ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s must not be empty", name);
}

/* MatrixDiagV3 (input 0 the diagonals) and MatrixSetDiagV3 (input 0 the
 * matrices, input 1 the diagonals), one kernel. */
static void diag_compute(void *kernel, TF_OpKernelContext *ctx, bool set)
{
  struct diag_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK], ddims[OCL_MAX_RANK];
  char shape[256], dshape[256], eshape[256];
  ocl_op_begin(&op, ctx);
  TF_Tensor *in = NULL, *diag, *kt, *rows_t = NULL, *cols_t = NULL;
  TF_Tensor *pad = NULL;
  if (set) {
    in = ocl_op_input(&op, 0);
    diag = in != NULL ? ocl_op_input(&op, 1) : NULL;
    kt = diag != NULL ? ocl_op_input(&op, 2) : NULL;
    if (kt == NULL)
      goto done;
  } else {
    diag = ocl_op_input(&op, 0);
    kt = diag != NULL ? ocl_op_input(&op, 1) : NULL;
    rows_t = kt != NULL ? ocl_op_input(&op, 2) : NULL;
    cols_t = rows_t != NULL ? ocl_op_input(&op, 3) : NULL;
    pad = cols_t != NULL ? ocl_op_input(&op, 4) : NULL;
    if (pad == NULL)
      goto done;
  }
  int64_t lo = 0, hi = 0;
  if (!diag_index(&op, kt, &lo, &hi))
    goto done;
  int drank = ocl_op_dims(&op, diag, ddims);
  if (drank < 0)
    goto done;
  ocl_shape_format(ddims, drank, dshape, (int)sizeof(dshape));
  int64_t num_diags = hi - lo + 1;
  int64_t M, N, max_len, batch;
  int rank;
  if (set) {
    rank = ocl_op_dims(&op, in, dims);
    if (rank < 0)
      goto done;
    ocl_shape_format(dims, rank, shape, (int)sizeof(shape));
    if (rank < 2) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "input must be at least 2-dim, received shape: %s", shape);
      goto done;
    }
    if (drank < 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "diagonal must be at least 1-dim, received shape: %s",
                  dshape);
      goto done;
    }
    M = dims[rank - 2];
    N = dims[rank - 1];
    if (!((-M < lo && lo < N) || lo == 0)) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "lower_diag_index is out of bound: %lld It must be between "
                  "%lld and %lld",
                  (long long)lo, (long long)-M, (long long)N);
      goto done;
    }
    if (!((-M < hi && hi < N) || hi == 0)) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "upper_diag_index is out of bound: %lld It must be between "
                  "%lld and %lld",
                  (long long)hi, (long long)-M, (long long)N);
      goto done;
    }
    if (lo > hi) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "lower_diag_index must not be larger than upper_diag_index: "
                  "%lld > %lld",
                  (long long)lo, (long long)hi);
      goto done;
    }
    if (lo != hi && (drank < 2 || ddims[rank - 2] != num_diags)) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "The number of diagonals provided in `diag` is not "
                  "consistent with `lower_diag_index` and "
                  "`upper_diag_index`");
      goto done;
    }
    int64_t expect[OCL_MAX_RANK];
    int erank = rank - 2;
    memcpy(expect, dims, sizeof(int64_t) * (size_t)erank);
    if (num_diags > 1)
      expect[erank++] = num_diags;
    max_len = M + (hi < 0 ? hi : 0);
    if (N - (lo > 0 ? lo : 0) < max_len)
      max_len = N - (lo > 0 ? lo : 0);
    expect[erank++] = max_len;
    bool same = erank == drank;
    for (int i = 0; same && i < erank; i++)
      same = expect[i] == ddims[i];
    if (!same) {
      ocl_shape_format(expect, erank, eshape, (int)sizeof(eshape));
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Either first dimensions of diagonal don't match "
                  "input.shape[:-2], or diagonal.shape[:-1] is not equal to "
                  "the longests diagonal in range "
                  "[lower_diag_index:upper_diag_index].\nInput shape: "
                  "%s\nDiagonal shape: %s\nExpected diagonal shape: %s",
                  shape, dshape, eshape);
      goto done;
    }
    batch = ocl_shape_elements(dims, rank - 2);
    if (batch * M * N == 0) {
      ocl_op_forward(&op, 0, in);
      goto done;
    }
  } else {
    if (!has_first(&op, rows_t, "num_rows") ||
        !has_first(&op, cols_t, "num_cols") ||
        !has_first(&op, pad, "padding_value"))
      goto done;
    M = (int32_t)ocl_host_int(rows_t, 0);
    N = (int32_t)ocl_host_int(cols_t, 0);
    if (drank < 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "diagonal must be at least 1-dim, received shape: %s",
                  dshape);
      goto done;
    }
    if (lo > hi) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "lower_diag_index must not be larger than upper_diag_index: "
                  "%lld > %lld",
                  (long long)lo, (long long)hi);
      goto done;
    }
    if (lo != hi && (drank < 2 || ddims[drank - 2] != num_diags)) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "The number of diagonals provided in the input does not "
                  "match the lower_diag_index and upper_diag_index range.");
      goto done;
    }
    max_len = ddims[drank - 1];
    int64_t min_rows = max_len - (hi < 0 ? hi : 0);
    int64_t min_cols = max_len + (lo > 0 ? lo : 0);
    if (M != -1 && M < min_rows) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "The number of rows is too small.");
      goto done;
    }
    if (N != -1 && N < min_cols) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "The number of columns is too small.");
      goto done;
    }
    if (M == -1 && N == -1) {
      M = N = min_rows > min_cols ? min_rows : min_cols;
    } else if (M == -1) {
      M = min_rows;
    } else if (N == -1) {
      N = min_cols;
    }
    if (M != min_rows && N != min_cols) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "The number of rows or columns is not consistent with the "
                  "specified d_lower, d_upper, and diagonal.");
      goto done;
    }
    memcpy(dims, ddims, sizeof(int64_t) * (size_t)drank);
    if (num_diags == 1) {
      dims[drank - 1] = M;
      dims[drank] = N;
      rank = drank + 1;
    } else {
      dims[drank - 2] = M;
      dims[drank - 1] = N;
      rank = drank;
    }
    batch = ocl_shape_elements(dims, rank - 2);
  }

  int64_t total;
  if (!ocl_op_dim_product(&op, batch, M * N, &total))
    goto done;
  const int cand[] = {0};
  int fwd;
  TF_Tensor *out =
      set ? ocl_op_output_forward(&op, 0, cand, 1, dims, rank, &fwd)
          : ocl_op_output(&op, 0, k->dtype, dims, rank);
  if (out == NULL || total == 0)
    goto done;
  if (total >= INT32_MAX || ocl_tf.TensorElementCount(diag) >= INT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "%s on OPENCL takes tensors of fewer than 2^31 elements",
                set ? "MatrixSetDiagV3" : "MatrixDiagV3");
    goto done;
  }
  static const uint8_t zero[16];
  const struct ocl_arg args[] = {
      OCL_TENSOR(set ? in : diag),
      OCL_TENSOR(diag),
      OCL_TENSOR(out),
      OCL_INT(M),
      OCL_INT(N),
      OCL_INT(lo),
      OCL_INT(hi),
      OCL_INT(max_len),
      OCL_INT(k->right_super),
      OCL_INT(k->right_sub),
      OCL_BYTES(set ? (const void *)zero : ocl_tf.TensorData(pad),
                ocl_tf.DataTypeSize(k->dtype)),
      OCL_INT(set),
      OCL_INT(total),
  };
  ocl_launch_1d(&op, &k->part, (size_t)total, args,
                (int)(sizeof(args) / sizeof(args[0])));
done:
  ocl_op_end(&op);
}

static void matrix_diag_compute(void *kernel, TF_OpKernelContext *ctx)
{
  diag_compute(kernel, ctx, false);
}

static void set_diag_compute(void *kernel, TF_OpKernelContext *ctx)
{
  diag_compute(kernel, ctx, true);
}

/* ---- MatrixBandPart -------------------------------------------------------- */

static const char *const band_host_args[] = {"num_lower", "num_upper", NULL};

struct band_kernel {
  TF_DataType dtype;
  struct ocl_kernel band;
  struct ocl_kernel band_rows; /* CPU devices */
};

static void *band_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct band_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  if (!ocl_kernel_init(&k->band, move_program(k->dtype), "matrix_band_part") ||
      !ocl_kernel_init(&k->band_rows, move_program(k->dtype),
                       "matrix_band_part_rows")) {
    ocl_set_status(status, TF_INTERNAL, "MatrixBandPart: kernel name");
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

/* The bound of input `index` ("num_lower"/"num_upper"): a scalar, at most
 * `limit`; false with TensorFlow's message. */
static bool band_bound(struct ocl_op *op, const TF_Tensor *t, const char *name,
                       const char *what, int64_t limit, int64_t *bound)
{
  if (ocl_tf.NumDims(t) != 0) {
    int64_t d[OCL_MAX_DIMS];
    char shape[96];
    int r = ocl_op_dims(op, t, d);
    if (r < 0)
      return false;
    ocl_shape_format(d, r, shape, (int)sizeof(shape));
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "%s must be scalar, got shape %s", name, shape);
  }
  *bound = ocl_host_int(t, 0);
  if (*bound > limit)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "%s must be negative or less or equal to number of %s "
                       "(%lld) got: %lld",
                       name, what, (long long)limit, (long long)*bound);
  return true;
}

static void band_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct band_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK];
  ocl_op_begin(&op, ctx);
  TF_Tensor *in = ocl_op_input(&op, 0);
  TF_Tensor *lo_t = in != NULL ? ocl_op_input(&op, 1) : NULL;
  TF_Tensor *hi_t = lo_t != NULL ? ocl_op_input(&op, 2) : NULL;
  if (hi_t == NULL)
    goto done;
  int rank = ocl_op_dims(&op, in, dims);
  if (rank < 0)
    goto done;
  if (rank < 2) {
    char shape[96];
    ocl_shape_format(dims, rank, shape, (int)sizeof(shape));
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "input must be at least 2-dim, received shape: %s", shape);
    goto done;
  }
  int64_t M = dims[rank - 2], N = dims[rank - 1], lower, upper;
  if (!band_bound(&op, lo_t, "num_lower", "rows", M, &lower) ||
      !band_bound(&op, hi_t, "num_upper", "columns", N, &upper))
    goto done;
  int64_t total = ocl_shape_elements(dims, rank);
  if (total == 0 || ((lower < 0 || lower == M) && (upper < 0 || upper == N))) {
    ocl_op_forward(&op, 0, in);
    goto done;
  }
  if (total >= INT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "MatrixBandPart on OPENCL takes tensors of fewer than 2^31 "
                "elements");
    goto done;
  }
  const int cand[] = {0};
  int fwd;
  TF_Tensor *out = ocl_op_output_forward(&op, 0, cand, 1, dims, rank, &fwd);
  if (out == NULL)
    goto done;
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto done;
  struct ocl_arg args[] = {
      OCL_TENSOR(in),
      OCL_TENSOR(out),
      OCL_INT(M),
      OCL_INT(N),
      OCL_INT(lower < 0 ? -1 : lower),
      OCL_INT(upper < 0 ? -1 : upper),
      OCL_INT(info->cpu_shape ? total / N : total),
      {0},
  };
  if (info->cpu_shape) {
    int64_t spans[3] = {1, total / N, N};
    ocl_launch_spans(&op, &k->band_rows, spans, args, 7);
  } else {
    ocl_launch_1d(&op, &k->band, (size_t)total, args, 7);
  }
done:
  ocl_op_end(&op);
}

static void band_delete(void *kernel) { free(kernel); }

/* ---- Cholesky, the LU family, MatrixTriangularSolve ------------------------ */

/* The work-group of a matrix on GPU-shaped devices: a power of two (the
 * pivot search reduces in a tree), fixed per device (PoCL compiles a
 * kernel again per local size). The CPU shape runs a work-item per matrix
 * and spreads the batch over the cores. */
#define SOLVE_LOCAL 128

/* Must match enum in linalg.cl. */
enum { LU_DET, LU_LOGDET, LU_INVERSE, LU_SOLVE };

struct solve_kernel {
  TF_DataType dtype;
  int mode; /* LU_*, for the LU family */
  bool adjoint, lower;
  struct ocl_kernel k;
};

/* Builds a solve_kernel running kernel `name`; reads the `adjoint` (and
 * `lower`) attributes where the op has them. */
static void *solve_create(TF_OpKernelConstruction *ctx, const char *name,
                          int mode, bool has_adjoint, bool has_lower)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct solve_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->mode = mode;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  TF_Bool b = 0;
  if (has_adjoint) {
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "adjoint", &b, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
    k->adjoint = b != 0;
  }
  if (has_lower) {
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "lower", &b, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
    k->lower = b != 0;
  }
  if (!ocl_kernel_init(&k->k,
                       &programs[k->dtype == TF_DOUBLE ? P_DOUBLE : P_FLOAT],
                       name)) {
    ocl_set_status(status, TF_INTERNAL, "%s: kernel name", name);
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void *cholesky_create(TF_OpKernelConstruction *ctx)
{
  return solve_create(ctx, "cholesky", 0, false, false);
}
static void *det_create(TF_OpKernelConstruction *ctx)
{
  return solve_create(ctx, "lu", LU_DET, false, false);
}
static void *logdet_create(TF_OpKernelConstruction *ctx)
{
  return solve_create(ctx, "lu", LU_LOGDET, false, false);
}
static void *inverse_create(TF_OpKernelConstruction *ctx)
{
  return solve_create(ctx, "lu", LU_INVERSE, true, false);
}
static void *matrix_solve_create(TF_OpKernelConstruction *ctx)
{
  return solve_create(ctx, "lu", LU_SOLVE, true, false);
}
static void *trisolve_create(TF_OpKernelConstruction *ctx)
{
  return solve_create(ctx, "triangular_solve", 0, true, true);
}

static void solve_delete(void *kernel) { free(kernel); }

/* The device and the work-group size for kernel `k` of op `what`; 0 with
 * the op failed. */
static size_t solve_local(struct ocl_op *op, struct solve_kernel *k,
                          const char *what)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return 0;
  if (k->dtype == TF_DOUBLE && !info->has_fp64) {
    ocl_op_fail(op, TF_UNIMPLEMENTED,
                "%s in double needs cl_khr_fp64, which OpenCL device %d lacks",
                what, info->ordinal);
    return 0;
  }
  if (info->cpu_shape)
    return ocl_kernel_max_local(op, &k->k) > 0 ? 1 : 0;
  return ocl_kernel_fit_local(op, &k->k, SOLVE_LOCAL);
}

/* A [..., n, n] input: its dims, batch and n; false with the GPU kernel's
 * messages (`square` starts the one for a non-square input). */
static bool square_input(struct ocl_op *op, const TF_Tensor *in,
                         const char *square, int64_t *dims, int *rank,
                         int64_t *batch, int64_t *n)
{
  *rank = ocl_op_dims(op, in, dims);
  if (*rank < 0)
    return false;
  if (*rank < 2)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Input must have rank >= 2, got %d", *rank);
  *n = dims[*rank - 1];
  if (dims[*rank - 2] != *n)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s%lld != %lld", square,
                       (long long)dims[*rank - 2], (long long)*n);
  *batch = ocl_shape_elements(dims, *rank - 2);
  if (*n * *n >= INT32_MAX / 2)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "%lld x %lld matrices are beyond the OPENCL kernels "
                       "(one work-group per matrix)",
                       (long long)*n, (long long)*n);
  return true;
}

static void cholesky_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct solve_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK], batch, n;
  int rank;
  ocl_op_begin(&op, ctx);
  TF_Tensor *in = ocl_op_input(&op, 0);
  if (in == NULL ||
      !square_input(&op, in, "Input matrices must be squares, got", dims,
                    &rank, &batch, &n))
    goto done;
  /* X X^T == X for an empty X. */
  if (batch * n == 0) {
    ocl_op_forward(&op, 0, in);
    goto done;
  }
  const int cand[] = {0};
  int fwd;
  TF_Tensor *out = ocl_op_output_forward(&op, 0, cand, 1, dims, rank, &fwd);
  if (out == NULL)
    goto done;
  size_t local = solve_local(&op, k, "Cholesky");
  if (local == 0)
    goto done;
  size_t global = (size_t)batch * local;
  const struct ocl_arg args[] = {OCL_TENSOR(in), OCL_TENSOR(out), OCL_INT(n)};
  ocl_launch(&op, &k->k, 1, &global, &local, args,
             (int)(sizeof(args) / sizeof(args[0])));
done:
  ocl_op_end(&op);
}

/* MatrixDeterminant, LogMatrixDeterminant, MatrixInverse, MatrixSolve. */
static void lu_compute(void *kernel, TF_OpKernelContext *ctx)
{
  static const char *const names[] = {
      [LU_DET] = "MatrixDeterminant", [LU_LOGDET] = "LogMatrixDeterminant",
      [LU_INVERSE] = "MatrixInverse", [LU_SOLVE] = "MatrixSolve"};
  struct solve_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK], rdims[OCL_MAX_RANK], batch, n, nrhs = 0;
  int rank, rrank = 0;
  const bool det = k->mode == LU_DET || k->mode == LU_LOGDET;
  ocl_op_begin(&op, ctx);
  TF_Tensor *in = ocl_op_input(&op, 0), *rhs = NULL;
  if (in == NULL)
    goto done;
  if (k->mode == LU_SOLVE) {
    rhs = ocl_op_input(&op, 1);
    if (rhs == NULL)
      goto done;
    rank = ocl_op_dims(&op, in, dims);
    rrank = ocl_op_dims(&op, rhs, rdims);
    if (rank < 0 || rrank < 0)
      goto done;
    if (rank < 2) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Input must have rank >= 2, got %d", rank);
      goto done;
    }
    if (rrank != rank) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Input and right-hand side must have same rank, got %d != "
                  "%d",
                  rank, rrank);
      goto done;
    }
  }
  if (!square_input(&op, in,
                    det                   ? "Input matrices must be square, got"
                    : k->mode == LU_SOLVE ? "Input matrices must be squares, "
                                            "got "
                                          : "Input matrices must be squares, "
                                            "got",
                    dims, &rank, &batch, &n))
    goto done;
  if (k->mode == LU_SOLVE) {
    nrhs = rdims[rank - 1];
    if (rdims[rank - 2] != n) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Input matrix and right-hand side must have the same number "
                  "of rows, got %lld != %lld",
                  (long long)n, (long long)rdims[rank - 2]);
      goto done;
    }
    for (int d = 0; d < rank - 2; d++)
      if (dims[d] != rdims[d]) {
        ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                    "All input tensors must have the same outer dimensions.");
        goto done;
      }
    if (n * nrhs >= INT32_MAX / 2) {
      ocl_op_fail(&op, TF_UNIMPLEMENTED,
                  "MatrixSolve of %lld right-hand sides is beyond the OPENCL "
                  "kernel",
                  (long long)nrhs);
      goto done;
    }
  } else if (k->mode == LU_INVERSE) {
    nrhs = n;
  }

  TF_Tensor *out0 = NULL, *out1 = NULL;
  if (det) {
    out0 = ocl_op_output(&op, 0, k->dtype, dims, rank - 2);
    if (out0 != NULL && k->mode == LU_LOGDET)
      out1 = ocl_op_output(&op, 1, k->dtype, dims, rank - 2);
    if (out0 == NULL || (k->mode == LU_LOGDET && out1 == NULL) || batch == 0)
      goto done;
    if (n == 0) {
      /* The determinant of an empty matrix is one. */
      const double one = 1.0, zero = 0.0;
      const float one_f = 1.0f, zero_f = 0.0f;
      size_t size = ocl_tf.DataTypeSize(k->dtype);
      const bool dbl = k->dtype == TF_DOUBLE;
      if (ocl_op_fill(&op, out0, 0, dbl ? (const void *)&one : &one_f, size,
                      ocl_tf.TensorByteSize(out0)) &&
          out1 != NULL)
        ocl_op_fill(&op, out1, 0, dbl ? (const void *)&zero : &zero_f, size,
                    ocl_tf.TensorByteSize(out1));
      goto done;
    }
  } else if (k->mode == LU_INVERSE) {
    /* The inverse of an empty matrix is empty. */
    if (batch * n == 0) {
      ocl_op_forward(&op, 0, in);
      goto done;
    }
    out0 = ocl_op_output(&op, 0, k->dtype, dims, rank);
    if (out0 == NULL)
      goto done;
  } else {
    /* Not over rhs: the kernel reads rhs's rows in pivot order. */
    out0 = ocl_op_output(&op, 0, k->dtype, rdims, rank);
    if (out0 == NULL || batch * n * nrhs == 0)
      goto done;
  }

  size_t local = solve_local(&op, k, names[k->mode]);
  if (local == 0)
    goto done;
  TF_Tensor *work = ocl_op_temp(&op, k->dtype, batch * n * n);
  TF_Tensor *perm = work != NULL ? ocl_op_temp(&op, TF_INT32, batch * n)
                                 : NULL;
  TF_Tensor *info = perm != NULL && !det ? ocl_op_temp(&op, TF_INT32, 1)
                                         : perm;
  if (info == NULL)
    goto done;
  const int32_t clear = 0;
  if (!det && !ocl_op_fill(&op, info, 0, &clear, sizeof(clear),
                           sizeof(clear)))
    goto done;
  size_t global = (size_t)batch * local;
  size_t tsize = ocl_tf.DataTypeSize(k->dtype);
  const struct ocl_arg args[] = {
      OCL_TENSOR(in),
      OCL_TENSOR(rhs != NULL ? rhs : in),
      OCL_TENSOR(out0),
      OCL_TENSOR(out1 != NULL ? out1 : out0),
      OCL_TENSOR(work),
      OCL_TENSOR(perm),
      OCL_TENSOR(info),
      OCL_INT(n),
      OCL_INT(nrhs),
      OCL_INT(k->adjoint),
      OCL_INT(k->mode),
      OCL_LOCAL(local * tsize),
      OCL_LOCAL(local * sizeof(cl_int)),
  };
  if (!ocl_launch(&op, &k->k, 1, &global, &local, args,
                  (int)(sizeof(args) / sizeof(args[0]))) ||
      det)
    goto done;
  int32_t singular = 0;
  if (!ocl_op_read(&op, info, 0, &singular, sizeof(singular)))
    goto done;
  if (singular)
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "%s",
                k->mode == LU_INVERSE ? "Input is not invertible."
                                      : "Input matrix is not invertible.");
done:
  ocl_op_end(&op);
}

/* Must match struct tri_bcast of linalg.cl. */
struct tri_bcast {
  cl_int rank;
  cl_int dims[OCL_MAX_DIMS];
  cl_int a_strides[OCL_MAX_DIMS];
  cl_int b_strides[OCL_MAX_DIMS];
};

static void trisolve_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct solve_kernel *k = kernel;
  struct ocl_op op;
  int64_t adims[OCL_MAX_RANK], bdims[OCL_MAX_RANK];
  char ashape[256], bshape[256];
  ocl_op_begin(&op, ctx);
  TF_Tensor *a = ocl_op_input(&op, 0);
  TF_Tensor *b = a != NULL ? ocl_op_input(&op, 1) : NULL;
  if (b == NULL)
    goto done;
  int ar = ocl_op_dims(&op, a, adims), br = ocl_op_dims(&op, b, bdims);
  if (ar < 0 || br < 0)
    goto done;
  if (ar < 2) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "In[0] ndims must be >= 2: %d", ar);
    goto done;
  }
  if (br < 2) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "In[1] ndims must be >= 2: %d", br);
    goto done;
  }
  int64_t n = adims[ar - 1];
  if (adims[ar - 2] != n) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "In[0] matrices in the last dimensions must be square (%lld "
                "=/= %lld)",
                (long long)n, (long long)adims[ar - 2]);
    goto done;
  }
  ocl_shape_format(adims, ar, ashape, (int)sizeof(ashape));
  ocl_shape_format(bdims, br, bshape, (int)sizeof(bshape));
  /* MatMulBCast: the batch dims broadcast as NumPy's do. */
  for (int i = 1; i <= ar - 2 && i <= br - 2; i++) {
    int64_t x = adims[ar - 2 - i], y = bdims[br - 2 - i];
    if (x != y && x != 1 && y != 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "In[0] and In[1] must have compatible batch dimensions: %s "
                  "vs. %s",
                  ashape, bshape);
      goto done;
    }
  }
  int64_t d2 = bdims[br - 2], nrhs = bdims[br - 1];
  if (n != d2) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "In[0] mismatch In[1] shape: %lld vs. %lld: %s %s %d %d",
                (long long)n, (long long)d2, ashape, bshape, k->lower,
                k->adjoint);
    goto done;
  }
  struct ocl_bcast bcast, *bc = &bcast;
  if (!ocl_bcast_init(bc, adims, ar - 2, bdims, br - 2, op.status))
    goto done;
  int64_t odims[OCL_MAX_RANK];
  int orank = bc->out_rank;
  memcpy(odims, bc->out_dims, sizeof(int64_t) * (size_t)orank);
  odims[orank++] = n;
  odims[orank++] = nrhs;
  int64_t batch = bc->out_elements;
  struct tri_bcast tb = {.rank = bc->rank};
  bool fits = bc->rank <= OCL_MAX_DIMS;
  for (int i = 0; fits && i < bc->rank; i++) {
    tb.dims[i] = (cl_int)bc->dims[i];
    tb.a_strides[i] = (cl_int)bc->x_strides[i];
    tb.b_strides[i] = (cl_int)bc->y_strides[i];
  }
  TF_Tensor *out = ocl_op_output(&op, 0, k->dtype, odims, orank);
  if (out == NULL || batch * n * nrhs == 0)
    goto done;
  if (!fits || n * n >= INT32_MAX / 2 || n * nrhs >= INT32_MAX / 2 ||
      batch >= INT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "MatrixTriangularSolve of %s and %s is beyond the OPENCL "
                "kernel",
                ashape, bshape);
    goto done;
  }
  size_t local = solve_local(&op, k, "MatrixTriangularSolve");
  if (local == 0)
    goto done;
  size_t global = (size_t)batch * local;
  const struct ocl_arg args[] = {
      OCL_TENSOR(a),         OCL_TENSOR(b),           OCL_TENSOR(out),
      OCL_INT(n),            OCL_INT(nrhs),           OCL_INT(k->lower),
      OCL_INT(k->adjoint),   OCL_BYTES(&tb, sizeof(tb)),
  };
  ocl_launch(&op, &k->k, 1, &global, &local, args,
             (int)(sizeof(args) / sizeof(args[0])));
done:
  ocl_op_end(&op);
}

/* ---- Svd, SelfAdjointEigV2 (Jacobi) ---------------------------------------- */

/* The work-group of a matrix on GPU-shaped devices: a power of two (the
 * column dots reduce in trees), fixed per device. The CPU shape runs a
 * work-item per matrix. */
#define JACOBI_LOCAL 256
/* The most local memory the factors take: what GPUs give a work-group (48
 * KiB on NVIDIA's, 64 on AMD's); CPU drivers report far more (PoCL: 2 MiB)
 * of what is only ordinary memory there, and the global path serves them
 * as well. */
#define JACOBI_LOCAL_MEM (64 * 1024)
/* Must match JF_FLAGS of linalg.cl. */
#define JACOBI_FLAGS 2

struct jacobi_kernel {
  TF_DataType dtype;
  bool eig;
  bool vectors;       /* compute_uv / compute_v */
  bool full_matrices; /* Svd */
  struct ocl_kernel in_local, in_global;
};

static void *jacobi_create(TF_OpKernelConstruction *ctx, bool eig)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct jacobi_kernel *k = calloc(1, sizeof(*k));
  const char *name = eig ? "eig_jacobi" : "svd_jacobi";
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->eig = eig;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  TF_Bool b = 0;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, eig ? "compute_v" : "compute_uv",
                                          &b, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->vectors = b != 0;
  if (!eig) {
    b = 0;
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "full_matrices", &b, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
    k->full_matrices = b != 0;
  }
  const bool dbl = k->dtype == TF_DOUBLE;
  if (!ocl_kernel_init(&k->in_local, &programs[dbl ? P_DOUBLE : P_FLOAT],
                       name) ||
      !ocl_kernel_init(&k->in_global,
                       &programs[dbl ? P_DOUBLE_GLOBAL : P_FLOAT_GLOBAL],
                       name)) {
    ocl_set_status(status, TF_INTERNAL, "%s: kernel name", name);
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void *svd_create(TF_OpKernelConstruction *ctx)
{
  return jacobi_create(ctx, false);
}
static void *eig_create(TF_OpKernelConstruction *ctx)
{
  return jacobi_create(ctx, true);
}
static void jacobi_delete(void *kernel) { free(kernel); }

/* Runs the Jacobi kernel of `k` over `batch` matrices: in local memory
 * where `elements` T and `ints` ints per matrix fit beside the reduction
 * scratch, else in a work area. args[work_arg], args[work_arg + 1] (work,
 * iwork) and the last three (the local buffers) are filled here. */
static void jacobi_launch(struct ocl_op *op, struct jacobi_kernel *k,
                          const char *what, int64_t batch, int64_t elements,
                          int64_t ints, struct ocl_arg *args, int num_args,
                          int work_arg, TF_Tensor *dummy)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  if (k->dtype == TF_DOUBLE && !info->has_fp64) {
    ocl_op_fail(op, TF_UNIMPLEMENTED,
                "%s in double needs cl_khr_fp64, which OpenCL device %d lacks",
                what, info->ordinal);
    return;
  }
  size_t tsize = ocl_tf.DataTypeSize(k->dtype);
  size_t flags = sizeof(cl_int) * JACOBI_FLAGS;
  size_t in_local = (size_t)elements * tsize + (size_t)ints * sizeof(cl_int);
  /* Decided on the largest work-group's scratch, so that the choice does
   * not depend on the kernel's limits. */
  size_t scratch_max = 3 * JACOBI_LOCAL * tsize;
  size_t local_budget = (size_t)info->local_mem_size < JACOBI_LOCAL_MEM
                            ? (size_t)info->local_mem_size
                            : JACOBI_LOCAL_MEM;
  bool local_mem = in_local + flags + scratch_max + 1024 <= local_budget;
  struct ocl_kernel *kern = local_mem ? &k->in_local : &k->in_global;
  size_t local = info->cpu_shape
                     ? (ocl_kernel_max_local(op, kern) > 0 ? 1 : 0)
                     : ocl_kernel_fit_local(op, kern, JACOBI_LOCAL);
  if (local == 0)
    return;
  TF_Tensor *work = dummy, *iwork = dummy;
  if (!local_mem) {
    work = ocl_op_temp(op, k->dtype, batch * elements);
    iwork = work != NULL ? ocl_op_temp(op, TF_INT32, batch * ints + 1)
                         : NULL;
    if (iwork == NULL)
      return;
  }
  args[work_arg] = OCL_TENSOR(work);
  args[work_arg + 1] = OCL_TENSOR(iwork);
  args[num_args - 3] = OCL_LOCAL(local_mem ? (size_t)elements * tsize : tsize);
  args[num_args - 2] = OCL_LOCAL(3 * local * tsize);
  args[num_args - 1] =
      OCL_LOCAL(flags + (local_mem ? (size_t)ints * sizeof(cl_int) : 0));
  size_t global = (size_t)batch * local;
  ocl_launch(op, kern, 1, &global, &local, args, num_args);
}

/* A scalar output of TensorFlow's CPU kernel for a factor not asked for:
 * its value is unspecified; zero here. */
static bool unused_factor(struct ocl_op *op, int index, TF_DataType dtype)
{
  TF_Tensor *t = ocl_op_output(op, index, dtype, NULL, 0);
  const double zero = 0;
  return t != NULL && ocl_op_fill(op, t, 0, &zero, ocl_tf.DataTypeSize(dtype),
                                  ocl_tf.DataTypeSize(dtype));
}

/* Input 0 as a batch of matrices, as TensorFlow's LinearAlgebraOp checks
 * it: its dims and rank, or NULL with the status set. */
static TF_Tensor *matrices_input(struct ocl_op *op, int64_t *dims, int *rank)
{
  TF_Tensor *in = ocl_op_input(op, 0);
  if (in == NULL)
    return NULL;
  *rank = ocl_op_dims(op, in, dims);
  if (*rank < 0)
    return NULL;
  if (*rank < 2) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Input tensor 0 must have rank >= 2, got %d", *rank);
    return NULL;
  }
  return in;
}

static void svd_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct jacobi_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK];
  int rank;
  ocl_op_begin(&op, ctx);
  TF_Tensor *in = matrices_input(&op, dims, &rank);
  if (in == NULL)
    goto done;
  const int64_t m = dims[rank - 2], n = dims[rank - 1];
  const int64_t p = m < n ? m : n, r = m < n ? n : m;
  const int64_t batch = ocl_shape_elements(dims, rank - 2);
  const bool full = k->full_matrices;
  const int64_t uc = full ? m : p, vc = full ? n : p;
  int64_t odims[OCL_MAX_RANK];
  memcpy(odims, dims, sizeof(int64_t) * (size_t)rank);
  odims[rank - 2] = p;
  TF_Tensor *s = ocl_op_output(&op, 0, k->dtype, odims, rank - 1);
  TF_Tensor *u = NULL, *v = NULL;
  if (s == NULL)
    goto done;
  if (k->vectors) {
    odims[rank - 2] = m;
    odims[rank - 1] = uc;
    u = ocl_op_output(&op, 1, k->dtype, odims, rank);
    odims[rank - 2] = n;
    odims[rank - 1] = vc;
    v = u != NULL ? ocl_op_output(&op, 2, k->dtype, odims, rank) : NULL;
    if (v == NULL)
      goto done;
  } else if (!unused_factor(&op, 1, k->dtype) ||
             !unused_factor(&op, 2, k->dtype)) {
    goto done;
  }
  if (batch * (p + (k->vectors ? m * uc + n * vc : 0)) == 0)
    goto done;
  if (r * (p > 1 ? p : 1) >= INT32_MAX / 4 || r * r >= INT32_MAX / 4 ||
      batch >= INT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "Svd of %lld x %lld matrices is beyond the OPENCL kernel (one "
                "work-group per matrix)",
                (long long)m, (long long)n);
    goto done;
  }
  const int64_t c2 = p + (p & 1);
  const int64_t elements = (r * p > r ? r * p : r) + p * p + c2;
  struct ocl_arg args[] = {
      OCL_TENSOR(in),   OCL_TENSOR(s),   OCL_TENSOR(u != NULL ? u : s),
      OCL_TENSOR(v != NULL ? v : s),     OCL_TENSOR(s), OCL_TENSOR(s),
      OCL_INT(m),       OCL_INT(n),      OCL_INT(k->vectors),
      OCL_INT(full),    OCL_LOCAL(1),    OCL_LOCAL(1),
      OCL_LOCAL(1),
  };
  jacobi_launch(&op, k, "Svd", batch, elements, p, args,
                (int)(sizeof(args) / sizeof(args[0])), 4, s);
done:
  ocl_op_end(&op);
}

static void eig_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct jacobi_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK];
  int rank;
  ocl_op_begin(&op, ctx);
  TF_Tensor *in = matrices_input(&op, dims, &rank);
  if (in == NULL)
    goto done;
  const int64_t n = dims[rank - 1];
  if (dims[rank - 2] != n) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "Input matrix must be square.");
    goto done;
  }
  const int64_t batch = ocl_shape_elements(dims, rank - 2);
  TF_Tensor *e = ocl_op_output(&op, 0, k->dtype, dims, rank - 1);
  TF_Tensor *v = NULL;
  if (e == NULL)
    goto done;
  if (k->vectors) {
    v = ocl_op_output(&op, 1, k->dtype, dims, rank);
    if (v == NULL)
      goto done;
  } else if (!unused_factor(&op, 1, k->dtype)) {
    goto done;
  }
  if (batch * n == 0)
    goto done;
  if (n * n >= INT32_MAX / 4 || batch >= INT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "SelfAdjointEigV2 of %lld x %lld matrices is beyond the "
                "OPENCL kernel (one work-group per matrix)",
                (long long)n, (long long)n);
    goto done;
  }
  TF_Tensor *failed = ocl_op_temp(&op, TF_INT32, 1);
  const int32_t clear = 0;
  if (failed == NULL ||
      !ocl_op_fill(&op, failed, 0, &clear, sizeof(clear), sizeof(clear)))
    goto done;
  const int64_t elements = 2 * n * n + n + (n & 1);
  struct ocl_arg args[] = {
      OCL_TENSOR(in),   OCL_TENSOR(e),      OCL_TENSOR(v != NULL ? v : e),
      OCL_TENSOR(e),    OCL_TENSOR(e),      OCL_TENSOR(failed),
      OCL_INT(n),       OCL_INT(k->vectors), OCL_LOCAL(1),
      OCL_LOCAL(1),     OCL_LOCAL(1),
  };
  jacobi_launch(&op, k, "SelfAdjointEigV2", batch, elements, n, args,
                (int)(sizeof(args) / sizeof(args[0])), 3, e);
  if (!ocl_op_ok(&op))
    goto done;
  int32_t bad = 0;
  if (!ocl_op_read(&op, failed, 0, &bad, sizeof(bad)))
    goto done;
  if (bad)
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "Self-adjoint eigen decomposition was not successful. The "
                "input might not be valid.");
done:
  ocl_op_end(&op);
}

void ocl_register_linalg_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_DOUBLE};
  /* The element moves: TensorFlow's TF_CALL_GPU_ALL_TYPES. */
  static const TF_DataType move_types[] = {TF_BOOL,   TF_HALF,
                                           TF_BFLOAT16, TF_FLOAT,
                                           TF_DOUBLE, TF_COMPLEX64,
                                           TF_COMPLEX128};
  static const struct {
    const char *op;
    void *(*create)(TF_OpKernelConstruction *);
    void (*compute)(void *, TF_OpKernelContext *);
    void (*destroy)(void *);
    const char *const *host_args;
    bool move;
  } ops[] = {
      {"Qr", qr_create, qr_compute, qr_delete, NULL, false},
      {"MatrixDiagPartV3", diag_part_create, diag_part_compute, diag_delete,
       diag_part_host_args, true},
      {"MatrixDiagV3", diag_create, matrix_diag_compute, diag_delete,
       diag_host_args, true},
      {"MatrixSetDiagV3", diag_create, set_diag_compute, diag_delete,
       set_diag_host_args, true},
      {"MatrixBandPart", band_create, band_compute, band_delete,
       band_host_args, true},
      {"Cholesky", cholesky_create, cholesky_compute, solve_delete, NULL,
       false},
      {"MatrixDeterminant", det_create, lu_compute, solve_delete, NULL,
       false},
      {"LogMatrixDeterminant", logdet_create, lu_compute, solve_delete, NULL,
       false},
      {"MatrixInverse", inverse_create, lu_compute, solve_delete, NULL,
       false},
      {"MatrixSolve", matrix_solve_create, lu_compute, solve_delete, NULL,
       false},
      {"MatrixTriangularSolve", trisolve_create, trisolve_compute,
       solve_delete, NULL, false},
      {"Svd", svd_create, svd_compute, jacobi_delete, NULL, false},
      {"SelfAdjointEigV2", eig_create, eig_compute, jacobi_delete, NULL,
       false},
  };
  for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
    const TF_DataType *t = ops[o].move ? move_types : types;
    size_t count = ops[o].move ? sizeof(move_types) / sizeof(move_types[0])
                               : sizeof(types) / sizeof(types[0]);
    for (size_t i = 0; i < count; i++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = ops[o].op,
          .create = ops[o].create,
          .compute = ops[o].compute,
          .destroy = ops[o].destroy,
          .type_attrs = {"T"},
          .types = {t[i]},
          .host_args = ops[o].host_args,
      });
  }
}
