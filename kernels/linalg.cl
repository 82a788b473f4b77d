/* Linear algebra: Qr (tf.linalg.qr), Cholesky, the LU family
 * (MatrixInverse, MatrixSolve, MatrixDeterminant, LogMatrixDeterminant),
 * MatrixTriangularSolve, and the diagonal and band ops that only move
 * elements (MatrixDiagPartV3, MatrixDiagV3, MatrixSetDiagV3,
 * MatrixBandPart).
 *
 * Built per type: the arithmetic kernels with -DT=float, or -DT=double
 * -DT_IS_DOUBLE (common.clh turns cl_khr_fp64 on; the host builds it only on
 * devices that have it); the moving kernels with -DLINALG_MOVE and T an
 * unsigned type of the element's size (uchar to ulong2), so that one
 * program serves every dtype of that size.
 *
 * The factorisations run one work-group per matrix, the matrix in global
 * memory (a work area of the op's), every step fenced by a barrier on both
 * memories: each element is written by one work-item per step and read by
 * others only after the barrier. Work-items take neighbouring columns, so
 * neighbouring work-items touch neighbouring addresses of a row. A
 * work-group of one work-item (the CPU shape: the batch spreads over the
 * cores) runs the same code as a plain loop.
 *
 * Qr: Householder QR of small and medium matrices, as LAPACK's unblocked
 * geqr2 + org2r do it:
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
 * L / CW row groups, whose partial dot products meet in local memory. */
#include "common.clh"

#ifndef LINALG_MOVE

/* A barrier that orders both memories: the factorisations write global
 * memory between steps and reduce in local memory. */
#define SYNC() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)


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


/* ---- Triangular substitution ----------------------------------------- */

/* Solves a X = X in place for triangular a (n x n): X is n x nrhs
 * (row-major), a(i, k) = A[i * rs + k * cs] (rs, cs = n, 1, or 1, n for a
 * transposed a). forward: a is lower triangular, else upper; unit: its
 * diagonal is taken as ones. Right-looking: once row k of X is final, the
 * rows still to come lose a(i, k) X[k, :], in parallel over (i, column). */
static void substitute(__global T *X, int nrhs, int n, __global const T *A,
                       int rs, int cs, bool forward, bool unit, int lid,
                       int L)
{
  for (int s = 0; s < n; s++) {
    const int k = forward ? s : n - 1 - s;
    /* The barrier outside the branch: see lu(). */
    if (!unit) {
      const T d = A[k * rs + k * cs];
      for (int c = lid; c < nrhs; c += L)
        X[k * nrhs + c] /= d;
    }
    SYNC();
    const int lo = forward ? k + 1 : 0, rows = forward ? n - k - 1 : k;
    for (int e = lid; e < rows * nrhs; e += L) {
      const int i = lo + e / nrhs, c = e % nrhs;
      X[i * nrhs + c] -= A[i * rs + k * cs] * X[k * nrhs + c];
    }
    SYNC();
  }
}

/* ---- Cholesky ------------------------------------------------------------- */

/* out [batch, n, n] = the lower Cholesky factor of in's lower triangle
 * (the upper one is never read: cuSolver's potrf, TensorFlow's GPU kernel,
 * reads only that triangle too). Right-looking, unblocked: for column j,
 * d = sqrt(L[j, j]), the column below divided by d, and the trailing lower
 * triangle loses the outer product of that column. A pivot that is not
 * positive (or NaN) stops the factorisation: as TensorFlow's GPU kernel
 * does then, the whole lower triangle becomes NaN and the op succeeds. */
__kernel void cholesky(OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(T, out),
                       int n)
{
  const int lid = get_local_id(0), L = get_local_size(0);
  const long b = get_group_id(0);
  __global const T *A = OCL_PTR(const T, in) + b * n * n;
  __global T *C = OCL_PTR(T, out) + b * n * n;

  for (int e = lid; e < n * n; e += L)
    C[e] = e % n <= e / n ? A[e] : (T)0;
  SYNC();
  bool failed = false;
  for (int j = 0; j < n; j++) {
    /* Uniform: every work-item reads the same pivot. Past a failure the
     * loop only meets its barriers, which stay outside every branch (see
     * lu()). */
    const T d = C[j * n + j];
    failed |= !(d > 0);
    SYNC();
    const int m = failed ? 0 : n - j - 1;
    const T r = sqrt(d);
    if (!failed && lid == 0)
      C[j * n + j] = r;
    for (int i = j + 1 + lid; i < j + 1 + m; i += L)
      C[i * n + j] /= r;
    SYNC();
    for (int e = lid; e < m * m; e += L) {
      const int i = j + 1 + e / m, c = j + 1 + e % m;
      if (c <= i)
        C[i * n + c] -= C[i * n + j] * C[c * n + j];
    }
    SYNC();
  }
  /* The loop ended on a barrier. */
  if (failed) {
    for (int e = lid; e < n * n; e += L)
      if (e % n <= e / n)
        C[e] = (T)NAN;
  }
}

/* ---- LU with partial pivoting ------------------------------------------ */

enum { LU_DET, LU_LOGDET, LU_INVERSE, LU_SOLVE };

/* One matrix per work-group, factored as cuBLAS' getrf does (unblocked
 * right-looking LU, the row of the largest |value| in the column as
 * pivot, the first such row on ties), then, by mode:
 *   LU_DET:     out0[b] = (-1)^swaps prod(u_ii), as exp(sum log|u_ii|)
 *               times the sign, which is TensorFlow's GPU formula;
 *   LU_LOGDET:  out0[b] = that sign (0 for a singular matrix), out1[b] =
 *               sum log|u_ii| (-inf);
 *   LU_INVERSE: out0 [n, n] = the solution of A X = I;
 *   LU_SOLVE:   out0 [n, nrhs] = the solution of A X = rhs.
 * adjoint: A is in's transpose. work: batch * n * n (the factors), perm:
 * batch * n ints (row i of the factored matrix is row perm[i] of A). A
 * zero pivot (an exactly singular matrix: cuBLAS' info > 0) sets *info,
 * which the host turns into TensorFlow's error for the two solvers. val
 * and idx: a T and an int per work-item. */
__kernel void lu(OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(const T, rhs),
                 OCL_TENSOR_ARG(T, out0), OCL_TENSOR_ARG(T, out1),
                 OCL_TENSOR_ARG(T, work), OCL_TENSOR_ARG(int, perm),
                 OCL_TENSOR_ARG(int, info), int n, int nrhs, int adjoint,
                 int mode, __local T *val, __local int *idx)
{
  const int lid = get_local_id(0), L = get_local_size(0);
  const long b = get_group_id(0);
  __global const T *A = OCL_PTR(const T, in) + b * n * n;
  __global T *W = OCL_PTR(T, work) + b * n * n;
  __global int *P = OCL_PTR(int, perm) + b * n;

  for (int e = lid; e < n * n; e += L)
    W[e] = adjoint ? A[(e % n) * n + e / n] : A[e];
  for (int i = lid; i < n; i += L)
    P[i] = i;
  SYNC();
  int swaps = 0;
  bool singular = false;
  for (int j = 0; j < n; j++) {
    T best = -1;
    int row = j;
    for (int i = j + lid; i < n; i += L) {
      const T v = fabs(W[i * n + j]);
      if (v > best) {
        best = v;
        row = i;
      }
    }
    val[lid] = best;
    idx[lid] = row;
    SYNC();
    for (int s = L / 2; s > 0; s >>= 1) {
      if (lid < s && (val[lid + s] > val[lid] ||
                      (val[lid + s] == val[lid] && idx[lid + s] < idx[lid]))) {
        val[lid] = val[lid + s];
        idx[lid] = idx[lid + s];
      }
      SYNC();
    }
    const T pivot_abs = val[0];
    const int p = idx[0];
    SYNC();
    /* LAPACK's getf2 goes on past a zero pivot: the column below is zero
     * too, so there is nothing to eliminate. The barriers stay outside
     * every branch: PoCL 3.1 gave wrong factors with a barrier inside
     * this (uniform) condition. */
    const bool live = pivot_abs > 0;
    singular |= !live;
    const bool swap = live && p != j;
    if (swap) {
      for (int c = lid; c < n; c += L) {
        const T t = W[j * n + c];
        W[j * n + c] = W[p * n + c];
        W[p * n + c] = t;
      }
      if (lid == 0) {
        const int t = P[j];
        P[j] = P[p];
        P[p] = t;
      }
    }
    swaps += swap;
    SYNC();
    const int m = live ? n - j - 1 : 0;
    const T pivot = W[j * n + j];
    for (int i = j + 1 + lid; i < j + 1 + m; i += L)
      W[i * n + j] /= pivot;
    SYNC();
    for (int e = lid; e < m * m; e += L) {
      const int i = j + 1 + e / m, c = j + 1 + e % m;
      W[i * n + c] -= W[i * n + j] * W[j * n + c];
    }
    SYNC();
  }

  if (mode == LU_DET || mode == LU_LOGDET) {
    if (lid == 0) {
      T sign = swaps & 1 ? (T)-1 : (T)1, log_abs = 0;
      for (int i = 0; i < n; i++) {
        const T u = W[i * n + i];
        log_abs += log(fabs(u));
        sign *= u > 0 ? (T)1 : u < 0 ? (T)-1 : (T)0;
      }
      if (mode == LU_DET) {
        OCL_PTR(T, out0)[b] = sign * exp(log_abs);
      } else {
        OCL_PTR(T, out0)[b] = sign;
        OCL_PTR(T, out1)[b] = log_abs;
      }
    }
    return;
  }
  __global T *X = OCL_PTR(T, out0) + b * n * nrhs;
  __global const T *B = OCL_PTR(const T, rhs) + b * n * nrhs;
  if (singular) {
    if (lid == 0)
      atomic_or(OCL_PTR(int, info), 1);
    return;
  }
  for (int e = lid; e < n * nrhs; e += L) {
    const int i = e / nrhs, c = e % nrhs;
    X[e] = mode == LU_INVERSE ? (T)(P[i] == c) : B[P[i] * nrhs + c];
  }
  SYNC();
  substitute(X, nrhs, n, W, n, 1, true, true, lid, L);
  substitute(X, nrhs, n, W, n, 1, false, false, lid, L);
}

/* ---- MatrixTriangularSolve --------------------------------------------- */

/* The batch broadcast of MatrixTriangularSolve (TensorFlow's MatMulBCast),
 * collapsed: output batch index -> matrix and rhs batch indices. */
struct tri_bcast {
  int rank;
  int dims[8];
  int a_strides[8];
  int b_strides[8];
};

/* out [batch, n, nrhs] = the solution of op(a) X = rhs, op(a) = a or a^T
 * (adjoint), a lower or upper triangular (the other triangle is never
 * read), one work-group per output matrix. A zero on the diagonal gives
 * infinities and NaNs, as cuBLAS' trsm does: TensorFlow checks nothing. */
__kernel void triangular_solve(OCL_TENSOR_ARG(const T, matrix),
                               OCL_TENSOR_ARG(const T, rhs),
                               OCL_TENSOR_ARG(T, out), int n, int nrhs,
                               int lower, int adjoint, struct tri_bcast bc)
{
  const int lid = get_local_id(0), L = get_local_size(0);
  const int ob = get_group_id(0);
  int rest = ob;
  long ai = 0, bi = 0;
  for (int d = bc.rank - 1; d >= 0; d--) {
    const int i = rest % bc.dims[d];
    rest /= bc.dims[d];
    ai += (long)i * bc.a_strides[d];
    bi += (long)i * bc.b_strides[d];
  }
  __global const T *A = OCL_PTR(const T, matrix) + ai * n * n;
  __global const T *B = OCL_PTR(const T, rhs) + bi * n * nrhs;
  __global T *X = OCL_PTR(T, out) + (long)ob * n * nrhs;
  for (int e = lid; e < n * nrhs; e += L)
    X[e] = B[e];
  SYNC();
  substitute(X, nrhs, n, A, adjoint ? 1 : n, adjoint ? n : 1,
             lower != adjoint, false, lid, L);
}

/* ---- Jacobi: Svd and SelfAdjointEigV2 ------------------------------------ */

/* Both run a work-group per matrix. Where the factors fit the device's
 * local memory the host builds this file as is (JACOBI_MEM __local: the
 * matrix lives in the local buffer `lmat`); else with -DJACOBI_GLOBAL
 * -DJACOBI_MEM=__global (a work area of the op's per matrix), so that any
 * size runs, through the same code.
 *
 * Rotations: the pairs of a round-robin (circle) schedule are disjoint, so
 * a round computes every pair's rotation from the same matrix, then
 * applies them all at once. Columns are n2 = n rounded up to even; the pair
 * holding the padding column n2 - 1 = n (odd n) is the identity.
 *
 * The matrix is scaled by 1/max|a| on load (and the values back at the
 * end), so that squares and sums of squares neither overflow nor
 * underflow. A pair is rotated while its coupling is above tol = rows * eps
 * relative to its own norms (what keeps the singular vectors orthonormal,
 * LAPACK's gesvj test) and above a floor of eps^2 (noise of a rank-deficient
 * matrix); a sweep without rotation ends the loop, JACOBI_SWEEPS bounds it.
 * A non-finite input skips the sweeps: Svd's outputs become NaN (as
 * TensorFlow's CPU kernel gives), SelfAdjointEigV2 raises *info. */
#ifndef JACOBI_MEM
#define JACOBI_MEM __local
#endif
#ifdef T_IS_DOUBLE
#define T_EPS DBL_EPSILON
#define T2 double2
#else
#define T_EPS FLT_EPSILON
#define T2 float2
#endif
#define JACOBI_SWEEPS 40

/* The local ints of the Jacobi kernels (`lint`): flags, then (local build)
 * a rank per column. */
enum { JF_ROTATED, JF_NONFINITE, JF_FLAGS };

/* Pair k of round r of the circle schedule over n2 (even) indices: index
 * n2 - 1 stays put, the others turn. p < q. */
static void round_robin_pair(int k, int r, int n2, int *p, int *q)
{
  const int m = n2 - 1;
  int a, b;
  if (k == 0) {
    a = r;
    b = m;
  } else {
    a = (r + k) % m;
    b = (r - k + m) % m;
  }
  *p = min(a, b);
  *q = max(a, b);
}

/* Applies round r's rotations (rot: cos, sin per pair, np pairs of the
 * n2-index schedule; a pair whose q is past `count` is padding) to vectors
 * of length len stored len apart: vec[p] and vec[q] of each pair, element
 * by element, the work-group's L work-items striding over them. */
static void rotate_vectors(JACOBI_MEM T *vec, int len, int count, int np,
                           int r, int n2, JACOBI_MEM const T *rot, int lid,
                           int L)
{
  for (int e = lid; e < np * len; e += L) {
    const int k = e / len, i = e % len;
    int p, q;
    round_robin_pair(k, r, n2, &p, &q);
    const T c = rot[2 * k], s = rot[2 * k + 1];
    if (q < count && s != 0) {
      const T x = vec[p * len + i], y = vec[q * len + i];
      vec[p * len + i] = c * x - s * y;
      vec[q * len + i] = s * x + c * y;
    }
  }
}

/* max(x) over the work-group (L a power of two), in every work-item. */
static T group_max(T x, __local T *scratch, int lid, int L)
{
  scratch[lid] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = L / 2; s > 0; s >>= 1) {
    if (lid < s)
      scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  T m = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return m;
}

/* The rotation (c, s) that makes columns x, y (|x|^2 = al, |y|^2 = be,
 * x.y = ga) orthogonal as x' = c x - s y, y' = s x + c y; or that zeroes
 * a_pq of a symmetric 2x2 [al ga; ga be] as J^T A J. (1, 0) when they
 * already are, within tol and the floor; *rotated is raised otherwise. */
static T2 jacobi_rotation(T al, T be, T ga, T tol, T floor_abs,
                          __local int *rotated)
{
  T2 cs = (T2)(1, 0);
  if (fabs(ga) > tol * sqrt(fabs(al)) * sqrt(fabs(be)) &&
      fabs(ga) > floor_abs) {
    const T zeta = (be - al) / (2 * ga);
    const T t = copysign((T)1, zeta) / (fabs(zeta) + hypot((T)1, zeta));
    const T c = 1 / sqrt(1 + t * t);
    cs = (T2)(c, c * t);
    if (cs.y != 0)
      atomic_or(rotated, 1);
  }
  return cs;
}

/* The row of the largest of the L values scratch[0..L) (the rows in
 * scratch[L..2L)), the lowest row among equals, scanned by every
 * work-item alone: the completion loop below reduces with such scans, not
 * with trees of barriers. Barrier loops nested in that loop made PoCL
 * build the kernel for minutes (189 s in the GPU shape, 78 s in the CPU
 * one, each dtype and memory build; 59 s and 25 s with the scans); L
 * reads of one local address by every work-item are a broadcast on a GPU,
 * and a column's orthogonalisation already reads c times as much. */
static T serial_argmax(__local const T *scratch, int L)
{
  T top = scratch[0], top_row = scratch[L];
  for (int w = 1; w < L; w++) {
    const T v = scratch[w], row = scratch[L + w];
    if (v > top || (v == top && row < top_row)) {
      top = v;
      top_row = row;
    }
  }
  return top_row;
}

/* Column c of X (R rows, Rc columns, row-major) minus its projections on
 * columns 0..c-1 (orthonormal), their dots in `dots`. Nothing where !fill
 * (the barriers still met). */
static void orthogonalise(__global T *X, int Rc, int R, int c,
                          JACOBI_MEM T *dots, bool fill, int lid, int L)
{
  for (int j = lid; fill && j < c; j += L) {
    T d = 0;
    for (int i = 0; i < R; i++)
      d += X[i * Rc + j] * X[i * Rc + c];
    dots[j] = d;
  }
  SYNC();
  for (int i = lid; fill && i < R; i += L) {
    T x = X[i * Rc + c];
    for (int j = 0; j < c; j++)
      x -= dots[j] * X[i * Rc + j];
    X[i * Rc + c] = x;
  }
  SYNC();
}

/* Svd of in [batch, M, N]: one-sided (Hestenes) Jacobi on the columns of
 * W = A (M >= N) or A^T (M < N): R x C, R >= C, column-major, so that
 * neighbouring work-items take neighbouring rows of a column. The right
 * factor V (C x C, column-major) accumulates the rotations. Afterwards
 * s_j = |w_j|, sorted descending on the device (a rank per column); the
 * left factor's columns are w_j / s_j, and where s_j is negligible (rank
 * deficiency) or full_matrices asks for R columns, the rest are completed
 * by Gram-Schmidt (twice) from unit vectors. For M < N, u and v swap:
 * A = (W's V) s (W's left)^T.
 *
 * work: batch * (max(R C, R) + C C + n2) elements and iwork batch * C ints
 * (global build; the local build takes the same from lmat and lint).
 * scratch: 3 T per work-item. */
__kernel void svd_jacobi(OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(T, s_out),
                         OCL_TENSOR_ARG(T, u_out), OCL_TENSOR_ARG(T, v_out),
                         OCL_TENSOR_ARG(T, work), OCL_TENSOR_ARG(int, iwork),
                         int M, int N, int compute_uv, int full,
                         __local T *lmat, __local T *scratch,
                         __local int *lint)
{
  const int lid = get_local_id(0), L = get_local_size(0);
  const long b = get_group_id(0);
  const bool wide = M < N;
  const int R = wide ? N : M, C = wide ? M : N;
  const int C2 = C + (C & 1), np = C2 / 2;
  const int Rc = full ? R : C;
  const int wlen = max(R * C, R);
#ifdef JACOBI_GLOBAL
  JACOBI_MEM T *W = OCL_PTR(T, work) + b * ((long)wlen + C * C + C2);
  JACOBI_MEM int *rank = OCL_PTR(int, iwork) + b * C;
#else
  JACOBI_MEM T *W = lmat;
  JACOBI_MEM int *rank = lint + JF_FLAGS;
#endif
  JACOBI_MEM T *V = W + wlen;
  /* Rotations during the sweeps (c, s per pair), then the norms s_j. */
  JACOBI_MEM T *rot = V + C * C;
  __global const T *A = OCL_PTR(const T, in) + b * M * N;
  __global T *S = OCL_PTR(T, s_out) + b * C;
  /* The left factor (R x Rc) and the right one (C x C), row-major. */
  __global T *UL = (wide ? OCL_PTR(T, v_out) : OCL_PTR(T, u_out)) + b * R * Rc;
  __global T *VR = (wide ? OCL_PTR(T, u_out) : OCL_PTR(T, v_out)) + b * C * C;

  if (lid == 0) {
    lint[JF_ROTATED] = 0;
    lint[JF_NONFINITE] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  T amax = 0;
  for (int e = lid; e < M * N; e += L) {
    const T x = A[e];
    if (!isfinite(x))
      atomic_or(&lint[JF_NONFINITE], 1);
    amax = fmax(amax, fabs(x));
  }
  amax = group_max(amax, scratch, lid, L);
  const T inv = amax > 0 ? amax : (T)1;
  T part = 0;
  for (int e = lid; e < M * N; e += L) {
    const T x = A[e] / inv;
    /* W's column-major (R x C) is A's row-major when A is wide. */
    W[wide ? e : (e % N) * M + e / N] = x;
    part += x * x;
  }
  for (int e = lid; e < C * C; e += L)
    V[e] = e / C == e % C;
  const T frob2 = group_sum(part, scratch, lid, L);
  const bool nonfinite = lint[JF_NONFINITE] != 0;
  const T tol = (T)R * T_EPS, floor_abs = T_EPS * T_EPS;
  const T negligible = T_EPS * sqrt(frob2);
  SYNC();

  /* G pairs at once, lw lanes (a power of two) per pair. */
  int G = 1;
  while (G * 2 <= L && G < np)
    G *= 2;
  const int lw = L / G, lane = lid % lw, slot = lid / lw;
  bool done = nonfinite || C < 2;
  for (int sweep = 0; sweep < JACOBI_SWEEPS && !done; sweep++) {
    for (int r = 0; r < C2 - 1; r++) {
      for (int pb = 0; pb < np; pb += G) {
        const int k = pb + slot;
        int p = 0, q = C;
        if (k < np)
          round_robin_pair(k, r, C2, &p, &q);
        T al = 0, be = 0, ga = 0;
        if (q < C)
          for (int i = lane; i < R; i += lw) {
            const T x = W[p * R + i], y = W[q * R + i];
            al += x * x;
            be += y * y;
            ga += x * y;
          }
        scratch[3 * lid] = al;
        scratch[3 * lid + 1] = be;
        scratch[3 * lid + 2] = ga;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = lw / 2; s > 0; s >>= 1) {
          if (lane < s)
            for (int v = 0; v < 3; v++)
              scratch[3 * lid + v] += scratch[3 * (lid + s) + v];
          barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lane == 0 && k < np) {
          T2 cs = (T2)(1, 0);
          if (q < C)
            cs = jacobi_rotation(scratch[3 * lid], scratch[3 * lid + 1],
                                 scratch[3 * lid + 2], tol, floor_abs,
                                 &lint[JF_ROTATED]);
          rot[2 * k] = cs.x;
          rot[2 * k + 1] = cs.y;
        }
        SYNC();
      }
      rotate_vectors(W, R, C, np, r, C2, rot, lid, L);
      if (compute_uv)
        rotate_vectors(V, C, C, np, r, C2, rot, lid, L);
      SYNC();
    }
    done = lint[JF_ROTATED] == 0;
    SYNC();
    if (lid == 0)
      lint[JF_ROTATED] = 0;
    /* Before the next sweep's first rotation raises it. */
    SYNC();
  }

  /* s_j = |w_j|, G columns at once. */
  for (int cb = 0; cb < C; cb += G) {
    const int j = cb + slot;
    T sum = 0;
    if (j < C)
      for (int i = lane; i < R; i += lw) {
        const T x = W[j * R + i];
        sum += x * x;
      }
    scratch[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = lw / 2; s > 0; s >>= 1) {
      if (lane < s)
        scratch[lid] += scratch[lid + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && j < C)
      rot[j] = sqrt(scratch[lid]);
    SYNC();
  }
  /* Descending; equal values keep their column order. */
  for (int j = lid; j < C; j += L) {
    const T sj = rot[j];
    int before = 0;
    for (int k = 0; k < C; k++) {
      const T sk = rot[k];
      before += sk > sj || (sk == sj && k < j);
    }
    /* NaN norms compare false: keep the columns' order. */
    if (nonfinite)
      before = j;
    rank[j] = before;
    S[before] = nonfinite ? (T)NAN : sj * inv;
  }
  /* Every work-item counts the same: a uniform bound for the loop below. */
  int kept = 0;
  for (int k = 0; k < C; k++)
    kept += rot[k] > negligible;
  SYNC();
  for (int e = lid; compute_uv && e < R * Rc; e += L)
    UL[e] = nonfinite ? (T)NAN : 0;
  for (int e = lid; compute_uv && e < C * C; e += L) {
    const int j = e / C, i = e % C;
    VR[i * C + rank[j]] = nonfinite ? (T)NAN : V[e];
  }
  SYNC();
  for (int e = lid; compute_uv && !nonfinite && e < R * C; e += L) {
    const int j = e / R, i = e % R;
    const T sj = rot[j];
    if (sj > negligible)
      UL[i * Rc + rank[j]] = W[e] / sj;
  }
  SYNC();

  /* Completion: column c from the unit vector e_k the columns so far
   * cover least (the largest 1 - sum_j UL[k, j]^2: at least (R - c) / R),
   * made orthogonal to columns 0..c-1 twice (their dots in W, free by
   * now) and normalised. The loop runs over every column, its bound an
   * argument's, not a computed one (no uniform branch around barriers);
   * columns before `kept`, or all where no factor is asked for, only meet
   * the barriers. */
  JACOBI_MEM T *dots = W;
  const int first = compute_uv && !nonfinite ? kept : Rc;
  for (int c = 0; c < Rc; c++) {
    const bool fill = c >= first;
    T best = -1, best_row = 0;
    for (int i = lid; fill && i < R; i += L) {
      T left = 1;
      for (int j = 0; j < c; j++)
        left -= UL[i * Rc + j] * UL[i * Rc + j];
      if (left > best) {
        best = left;
        best_row = i;
      }
    }
    scratch[lid] = best;
    scratch[L + lid] = best_row;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int k = (int)serial_argmax(scratch, L);
    for (int i = lid; fill && i < R; i += L)
      UL[i * Rc + c] = i == k;
    SYNC();
    /* Twice, written out: PoCL 3.1 dropped the second pass's update as
     * a two-trip loop around these barriers. */
    orthogonalise(UL, Rc, R, c, dots, fill, lid, L);
    orthogonalise(UL, Rc, R, c, dots, fill, lid, L);
    T sq = 0;
    for (int i = lid; fill && i < R; i += L)
      sq += UL[i * Rc + c] * UL[i * Rc + c];
    scratch[lid] = sq;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* The same sum in every work-item (one order); the next write to
     * scratch is past the SYNC below. */
    sq = 0;
    for (int w = 0; w < L; w++)
      sq += scratch[w];
    const T f = 1 / sqrt(sq);
    for (int i = lid; fill && i < R; i += L)
      UL[i * Rc + c] *= f;
    SYNC();
  }
}

/* SelfAdjointEigV2 of in [batch, n, n]: cyclic two-sided Jacobi on the
 * symmetric matrix made of in's lower triangle (the upper one is never
 * read, as TensorFlow's kernels read it), A' = J^T A J per round. A round
 * updates 2x2 blocks (pair k1's rows, pair k2's columns), each block and
 * its mirror by one work-item, so A stays exactly symmetric; a rotated
 * pair's own block gets its diagonal as a_pp - t a_pq, a_qq + t a_pq and
 * exact zeros off it. V (column-major) accumulates V J. Eigenvalues are
 * the diagonal, sorted ascending on the device with V's columns. A
 * non-finite value in the lower triangle raises *info (TensorFlow's CPU
 * kernel fails the op). work: batch * (2 n n + n2), iwork batch * n in the
 * global build. */
__kernel void eig_jacobi(OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(T, e_out),
                         OCL_TENSOR_ARG(T, v_out), OCL_TENSOR_ARG(T, work),
                         OCL_TENSOR_ARG(int, iwork), OCL_TENSOR_ARG(int, info),
                         int n, int compute_v, __local T *lmat,
                         __local T *scratch, __local int *lint)
{
  const int lid = get_local_id(0), L = get_local_size(0);
  const long b = get_group_id(0);
  const int n2 = n + (n & 1), np = n2 / 2;
#ifdef JACOBI_GLOBAL
  JACOBI_MEM T *Aw = OCL_PTR(T, work) + b * (2L * n * n + n2);
  JACOBI_MEM int *rank = OCL_PTR(int, iwork) + b * n;
#else
  JACOBI_MEM T *Aw = lmat;
  JACOBI_MEM int *rank = lint + JF_FLAGS;
#endif
  JACOBI_MEM T *V = Aw + n * n;
  JACOBI_MEM T *rot = V + n * n;
  __global const T *A = OCL_PTR(const T, in) + b * n * n;
  __global T *E = OCL_PTR(T, e_out) + b * n;
  __global T *VO = OCL_PTR(T, v_out) + b * n * n;

  if (lid == 0) {
    lint[JF_ROTATED] = 0;
    lint[JF_NONFINITE] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  T amax = 0;
  for (int e = lid; e < n * n; e += L) {
    if (e % n > e / n)
      continue;
    const T x = A[e];
    if (!isfinite(x))
      atomic_or(&lint[JF_NONFINITE], 1);
    amax = fmax(amax, fabs(x));
  }
  amax = group_max(amax, scratch, lid, L);
  const T inv = amax > 0 ? amax : (T)1;
  for (int e = lid; e < n * n; e += L) {
    const int i = e / n, j = e % n;
    Aw[e] = A[max(i, j) * n + min(i, j)] / inv;
    V[e] = i == j;
  }
  const bool nonfinite = lint[JF_NONFINITE] != 0;
  if (nonfinite && lid == 0)
    atomic_or(OCL_PTR(int, info), 1);
  const T tol = (T)n * T_EPS, floor_abs = T_EPS * T_EPS;
  SYNC();

  bool done = nonfinite || n < 2;
  for (int sweep = 0; sweep < JACOBI_SWEEPS && !done; sweep++) {
    for (int r = 0; r < n2 - 1; r++) {
      for (int k = lid; k < np; k += L) {
        int p, q;
        round_robin_pair(k, r, n2, &p, &q);
        T2 cs = (T2)(1, 0);
        if (q < n)
          cs = jacobi_rotation(Aw[p * n + p], Aw[q * n + q], Aw[p * n + q],
                               tol, floor_abs, &lint[JF_ROTATED]);
        rot[2 * k] = cs.x;
        rot[2 * k + 1] = cs.y;
      }
      SYNC();
      for (int e = lid; e < np * np; e += L) {
        const int k1 = e / np, k2 = e % np;
        const T c1 = rot[2 * k1], s1 = rot[2 * k1 + 1];
        const T c2 = rot[2 * k2], s2 = rot[2 * k2 + 1];
        if (k1 > k2 || (s1 == 0 && s2 == 0))
          continue;
        int p1, q1, p2, q2;
        round_robin_pair(k1, r, n2, &p1, &q1);
        round_robin_pair(k2, r, n2, &p2, &q2);
        if (k1 == k2) {
          const T t = s1 / c1, apq = Aw[p1 * n + q1];
          Aw[p1 * n + p1] -= t * apq;
          Aw[q1 * n + q1] += t * apq;
          Aw[p1 * n + q1] = 0;
          Aw[q1 * n + p1] = 0;
          continue;
        }
        /* A padding index (q = n) has s = 0: its row or column is absent
         * and the other one passes unchanged. */
        const bool hq1 = q1 < n, hq2 = q2 < n;
        const T bpp = Aw[p1 * n + p2];
        const T bpq = hq2 ? Aw[p1 * n + q2] : 0;
        const T bqp = hq1 ? Aw[q1 * n + p2] : 0;
        const T bqq = hq1 && hq2 ? Aw[q1 * n + q2] : 0;
        /* Rows: J1^T B; then columns: (J1^T B) J2. */
        const T rpp = c1 * bpp - s1 * bqp, rpq = c1 * bpq - s1 * bqq;
        const T rqp = s1 * bpp + c1 * bqp, rqq = s1 * bpq + c1 * bqq;
        const T npp = c2 * rpp - s2 * rpq, npq = s2 * rpp + c2 * rpq;
        const T nqp = c2 * rqp - s2 * rqq, nqq = s2 * rqp + c2 * rqq;
        Aw[p1 * n + p2] = npp;
        Aw[p2 * n + p1] = npp;
        if (hq2) {
          Aw[p1 * n + q2] = npq;
          Aw[q2 * n + p1] = npq;
        }
        if (hq1) {
          Aw[q1 * n + p2] = nqp;
          Aw[p2 * n + q1] = nqp;
        }
        if (hq1 && hq2) {
          Aw[q1 * n + q2] = nqq;
          Aw[q2 * n + q1] = nqq;
        }
      }
      if (compute_v)
        rotate_vectors(V, n, n, np, r, n2, rot, lid, L);
      SYNC();
    }
    done = lint[JF_ROTATED] == 0;
    SYNC();
    if (lid == 0)
      lint[JF_ROTATED] = 0;
    /* Before the next sweep's first rotation raises it. */
    SYNC();
  }

  /* Ascending; equal values keep their column order. */
  for (int j = lid; j < n; j += L) {
    const T ej = Aw[j * n + j];
    int before = 0;
    for (int k = 0; k < n; k++) {
      const T ek = Aw[k * n + k];
      before += ek < ej || (ek == ej && k < j);
    }
    rank[j] = before;
    E[before] = ej * inv;
  }
  SYNC();
  for (int e = lid; compute_v && e < n * n; e += L) {
    const int j = e / n, i = e % n;
    VO[i * n + rank[j]] = V[e];
  }
}

#else /* LINALG_MOVE */

/* ---- Diagonals and bands: element moves ---------------------------------- */

/* Where diagonal d of an M x N matrix starts within a stored diagonal of
 * max_len elements: 0 when it is aligned left, else max_len - its length.
 * right_super aligns the d >= 0 ones right, right_sub the d < 0 ones. */
static int content_offset(int d, int M, int N, int max_len, int right_super,
                       int right_sub)
{
  const int len = min(M + min(0, d), N - max(0, d));
  const int right = d >= 0 ? right_super : right_sub;
  return right ? max_len - len : 0;
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
  const int offset = content_offset(d, M, N, max_len, right_super, right_sub);
  const int y = n + max(-d, 0) - offset, x = n + max(d, 0) - offset;
  T v = padding;
  if (y >= 0 && y < M && x >= 0 && x < N)
    v = OCL_PTR(const T, in)[b * M * N + y * N + x];
  OCL_PTR(T, out)[i] = v;
}

/* MatrixDiagV3 (diag -> out) and MatrixSetDiagV3 (in with diag -> out):
 * out [batch, M, N], diag [batch, num_diags, max_len] holding diagonals
 * k_hi down to k_lo. Element (i, j) of a diagonal d = j - i in range is
 * diag[b, k_hi - d, j - max(d, 0) + offset(d)]; the others are the padding
 * value (set = 0) or in's element (set = 1). A work-item per output
 * element. */
__kernel void matrix_diag(OCL_TENSOR_ARG(const T, in),
                          OCL_TENSOR_ARG(const T, diag),
                          OCL_TENSOR_ARG(T, out), int M, int N, int k_lo,
                          int k_hi, int max_len, int right_super,
                          int right_sub, T padding, int set, int total)
{
  const int e = get_global_id(0);
  OCL_GUARD(e, total);
  const int j = e % N, rest = e / N;
  const int i = rest % M, b = rest / M;
  const int d = j - i;
  T v;
  if (d >= k_lo && d <= k_hi) {
    const int offset = content_offset(d, M, N, max_len, right_super, right_sub);
    const int num_diags = k_hi - k_lo + 1;
    v = OCL_PTR(const T, diag)[((long)b * num_diags + (k_hi - d)) * max_len +
                               j - max(d, 0) + offset];
  } else {
    v = set ? OCL_PTR(const T, in)[e] : padding;
  }
  OCL_PTR(T, out)[e] = v;
}

/* MatrixBandPart: out = in inside the band -lower <= j - i <= upper (a
 * negative bound keeps that whole triangle), zero outside. */
__kernel void matrix_band_part(OCL_TENSOR_ARG(const T, in),
                               OCL_TENSOR_ARG(T, out), int M, int N,
                               int lower, int upper, int total)
{
  const int e = get_global_id(0);
  OCL_GUARD(e, total);
  const int j = e % N, i = (e / N) % M;
  const bool keep = (lower < 0 || i - j <= lower) &&
                    (upper < 0 || j - i <= upper);
  OCL_PTR(T, out)[e] = keep ? OCL_PTR(const T, in)[e] : (T)0;
}

/* The CPU shape's: a work-item per span of a matrix row (ocl_launch_spans
 * over [1, rows of every matrix, N]), the row's index found once, every
 * element loaded and then kept or zeroed, so that the span vectorises.
 * The kernel above divides per element: 0.16x TensorFlow's CPU for a
 * 1024 x 1024 lower triangle. */
__kernel void matrix_band_part_rows(OCL_TENSOR_ARG(const T, in),
                                    OCL_TENSOR_ARG(T, out), int M, int N,
                                    int lower, int upper, int rows, int span)
{
  int j0 = get_global_id(0) * span, row = get_global_id(1);
  if (j0 >= N || row >= rows)
    return;
  int i = row % M, len = min(span, N - j0);
  const __global T *src = OCL_PTR(const T, in) + row * N + j0;
  __global T *dst = OCL_PTR(T, out) + row * N + j0;
  for (int c = 0; c < len; c++) {
    int j = j0 + c;
    bool keep =
        (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
    T v = src[c];
    dst[c] = keep ? v : (T)0;
  }
}

#endif /* LINALG_MOVE */
