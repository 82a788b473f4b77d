/* Linear algebra: Qr (tf.linalg.qr), Householder QR of small and medium
 * matrices.
 *
 * Built per type: -DT=float, or -DT=double -DT_IS_DOUBLE (common.clh turns
 * cl_khr_fp64 on; the host builds it only on devices that have it).
 *
 * One work-group per matrix (group id 0 = matrix in the batch), as LAPACK's
 * unblocked geqr2 + org2r do it:
 *   1. the matrix is copied into a work area W (M x N, row-major);
 *   2. for each column j < P = min(M, N): the norm of W[j+1:, j] (a tree
 *      reduction in local memory), the reflector H_j = I - tau v v^T with
 *      LAPACK's sign convention (beta = -sign(alpha) * ||(alpha, x)||; no
 *      reflection, tau = 0, when x is zero), v stored below the diagonal,
 *      beta on it; then H_j applied to the columns right of j;
 *   3. R = the upper triangle of W's first rows; Q = H_0 H_1 ... H_{P-1}
 *      applied to the identity's first columns, accumulated backwards so
 *      each H_j touches rows and columns >= j only.
 * Applying a reflector to a block of columns is a dot product and an update
 * per column: the work-group splits into CW lanes (neighbouring columns,
 * so neighbouring work-items touch neighbouring addresses of a row) times
 * L / CW row groups, whose partial dot products meet in local memory.
 * Every pass over W or Q is fenced by a barrier on both memories: each
 * element is written by the one work-item that owns its (row group,
 * column), and read by others only after a barrier. */
#include "common.clh"

/* Lanes along the columns: a warp's worth. */
#define CW 32

/* Sum of x over the work-group (local size L, a power of two), in every
 * work-item. `scratch` is free again when it returns. */
static T group_sum(T x, __local T *scratch, int lid, int L)
{
  scratch[lid] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = L / 2; s > 0; s >>= 1) {
    if (lid < s)
      scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  T sum = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return sum;
}

/* X[r0:, c0:c1] = (I - t v v^T) X[r0:, c0:c1], X with `ld` columns, v_r0 = 1
 * and v_i = V[i * ldv] below. */
static void reflect(__global T *X, int ld, int rows, int r0, int c0, int c1,
                    __global const T *V, int ldv, T t, __local T *scratch,
                    int lid, int L)
{
  const int cw = L < CW ? L : CW, groups = L / cw;
  const int lane = lid % cw, rg = lid / cw;
  for (int cb = c0; cb < c1; cb += cw) {
    const int c = cb + lane;
    T partial = 0;
    if (c < c1)
      for (int i = r0 + rg; i < rows; i += groups)
        partial += (i == r0 ? (T)1 : V[i * ldv]) * X[i * ld + c];
    scratch[lid] = partial;
    barrier(CLK_LOCAL_MEM_FENCE);
    T w = 0;
    for (int g = 0; g < groups; g++)
      w += scratch[g * cw + lane];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (c < c1)
      for (int i = r0 + rg; i < rows; i += groups)
        X[i * ld + c] -= t * (i == r0 ? (T)1 : V[i * ldv]) * w;
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

/* in [batch, M, N] -> q [batch, M, qc], r [batch, rr, N] with qc = rr = M
 * (full) or P. work: batch * (M * N + P) elements (W, then the taus).
 * scratch: a T per work-item, from the host. As an array declared in the
 * kernel, and handed to the helpers above, PoCL 3.1 gave work-groups
 * running at once on different threads the same memory: wrong q and r
 * under load, never with one thread. */
__kernel void qr_householder(OCL_TENSOR_ARG(const T, in),
                             OCL_TENSOR_ARG(T, q), OCL_TENSOR_ARG(T, r),
                             OCL_TENSOR_ARG(T, work), int M, int N, int full,
                             __local T *scratch)
{
  const int lid = get_local_id(0), L = get_local_size(0);
  const long b = get_group_id(0);
  const int P = min(M, N), qc = full ? M : P, rr = full ? M : P;
  __global const T *A = OCL_PTR(const T, in) + b * M * N;
  __global T *W = OCL_PTR(T, work) + b * ((long)M * N + P);
  __global T *tau = W + M * N;
  __global T *Q = OCL_PTR(T, q) + b * M * qc;
  __global T *R = OCL_PTR(T, r) + b * rr * N;

  for (int i = lid; i < M * N; i += L)
    W[i] = A[i];
  barrier(CLK_GLOBAL_MEM_FENCE);

  for (int j = 0; j < P; j++) {
    T part = 0;
    for (int i = j + 1 + lid; i < M; i += L) {
      T x = W[i * N + j];
      part += x * x;
    }
    const T sigma = group_sum(part, scratch, lid, L);
    const T alpha = W[j * N + j];
    /* Everyone has alpha before W[j, j] becomes beta. */
    barrier(CLK_GLOBAL_MEM_FENCE);
    T beta = alpha, t = 0, scale = 0;
    if (sigma != 0) {
      beta = -copysign(sqrt(alpha * alpha + sigma), alpha);
      t = (beta - alpha) / beta;
      scale = 1 / (alpha - beta);
    }
    for (int i = j + 1 + lid; i < M; i += L)
      W[i * N + j] *= scale;
    if (lid == 0) {
      W[j * N + j] = beta;
      tau[j] = t;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (t != 0)
      reflect(W, N, M, j, j + 1, N, W + j, N, t, scratch, lid, L);
  }

  for (int e = lid; e < rr * N; e += L) {
    int i = e / N, c = e % N;
    R[e] = c >= i ? W[e] : 0;
  }
  for (int e = lid; e < M * qc; e += L) {
    int i = e / qc, c = e % qc;
    Q[e] = i == c ? 1 : 0;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (int j = P - 1; j >= 0; j--) {
    const T t = tau[j];
    if (t != 0)
      reflect(Q, qc, M, j, j, qc, W + j, N, t, scratch, lid, L);
  }
}

/* MatrixDiagPartV3: out [batch, num_diags, max_len] (the host drops
 * num_diags when it is 1). Diagonal m of the output is d = k_hi - m; its
 * element n reads in[n + y, n + x], y = max(-d, 0) - offset,
 * x = max(d, 0) - offset, where offset = max_len - len(d) for a diagonal
 * aligned right (right_super: d >= 0 ones; right_sub: d < 0 ones), else 0;
 * outside the matrix: the padding value. A work-item per output element. */
__kernel void matrix_diag_part(OCL_TENSOR_ARG(const T, in),
                               OCL_TENSOR_ARG(T, out), int M, int N,
                               int k_hi, int num_diags, int max_len,
                               int right_super, int right_sub, T padding,
                               int total)
{
  const int i = get_global_id(0);
  OCL_GUARD(i, total);
  const int n = i % max_len;
  const int rest = i / max_len;
  const int m = rest % num_diags;
  const int b = rest / num_diags;
  const int d = k_hi - m;
  const int len = min(M + min(0, d), N - max(0, d));
  const int right = d >= 0 ? right_super : right_sub;
  const int offset = right ? max_len - len : 0;
  const int y = n + max(-d, 0) - offset, x = n + max(d, 0) - offset;
  T v = padding;
  if (y >= 0 && y < M && x >= 0 && x < N)
    v = OCL_PTR(const T, in)[b * M * N + y * N + x];
  OCL_PTR(T, out)[i] = v;
}
