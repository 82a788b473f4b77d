/* MatMul and BatchMatMul: a CPU-style packed GEMM and a direct kernel.
 *
 * Built once per storage type: -DT=float or -DT=half (half is loaded and
 * stored as half, everything in between is float, as TensorFlow's CPU half
 * kernels do; no cl_khr_fp16 needed).
 *
 * The packed path (the one that is fast on CPU devices) works as BLIS does:
 *   pack       A into micro-panels [M/MR][K][MR] and B into [N/NR][K][NR],
 *              zero-padded at the M and N edges, converted to float, with any
 *              transpose folded into the strides the packing reads with;
 *   gemm_8x2   one work-item computes one 8 x 32 block of C for one K
 *              slice, with 2 float16 accumulators per row: PoCL does
 *              not vectorise across work-items once a loop sits inside a
 *              work-item, so the vectors are explicit. Work-items of a group
 *              share one B micro-panel (it stays in L1) and walk down the
 *              rows of A.
 * The host launches gemm once per K slice (KC deep) so that a B micro-panel
 * fits in L1; later slices add into C.
 *
 * gemm_direct (one work-item per element of C, strided loads) serves tiny
 * products where packing costs more than it saves, and K == 0 (zeros). */
#include "common.clh"

#if defined(T_IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define LOAD16(p, i) vload_half16((i), (p))
#define STORE16(p, i, v) vstore_half16_rte((v), (i), (p))
#else
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOAD16(p, i) vload16((i), (p))
#define STORE16(p, i, v) vstore16((v), (i), (p))
#endif

/* The collapsed broadcast of the batch dims as matmul.c lays it out (struct
 * batch_args): strides count whole matrices of x and y. */
typedef struct {
  long dims[8];
  long x_strides[8];
  long y_strides[8];
  long rank;
} batch_t;

static inline void batch_index(const batch_t *s, long b, long *xb, long *yb)
{
  long x = 0, y = 0;
  for (int d = (int)s->rank - 1; d >= 0; d--) {
    long c = b % s->dims[d];
    b /= s->dims[d];
    x += c * s->x_strides[d];
    y += c * s->y_strides[d];
  }
  *xb = x;
  *yb = y;
}

/* dst[batch][rows/width][depth][width] = src[batch](row, k) as float, 0 past
 * `rows`. One work-item per (k, block, batch) copies one row of a
 * micro-panel: no integer division per element (64-bit divisions made the
 * packing cost as much as the product). */
__kernel void pack(OCL_TENSOR_ARG(const T, src), OCL_TENSOR_ARG(float, dst),
                   long src_off, long rows, long depth, long s_row,
                   long s_depth, long batch_stride, long per_batch, int width)
{
  long k = get_global_id(0);
  long blk = get_global_id(1);
  long b = get_global_id(2);
  long blocks = (rows + width - 1) / width;
  OCL_GUARD(k, depth);
  OCL_GUARD(blk, blocks);
  __global const T *s = OCL_PTR(const T, src) + src_off + b * batch_stride +
                        k * s_depth + blk * width * s_row;
  __global float *d = OCL_PTR(float, dst) + b * per_batch +
                      (blk * depth + k) * width;
  int n = (int)min((long)width, rows - blk * width);
  if (s_row == 1 && n == width && width % 16 == 0) {
    for (int r = 0; r < width; r += 16)
      vstore16(LOAD16(s, r / 16), r / 16, d);
    return;
  }
  for (int r = 0; r < n; r++)
    d[r] = LOAD(s, r * s_row);
  for (int r = n; r < width; r++)
    d[r] = 0.0f;
}

/* One MR x (16 * NV) block of C per work-item, over K slice [k0, k0 + kc).
 * accumulate: add to C (later K slices) instead of overwriting it. */
#define GEMM_KERNEL(MR, NV)                                                  \
  __kernel void gemm_##MR##x##NV(                                            \
      OCL_TENSOR_ARG(const float, ap), OCL_TENSOR_ARG(const float, bp),      \
      OCL_TENSOR_ARG(T, c), long c_off, long M, long N, long K, long k0,     \
      long kc,                                                               \
      int accumulate, long mblocks, long nblocks, batch_t s)                 \
  {                                                                          \
    const int NR = 16 * NV;                                                  \
    long j = get_global_id(0);                                               \
    long i = get_global_id(1);                                               \
    long b = get_global_id(2);                                               \
    OCL_GUARD(j, nblocks);                                                   \
    OCL_GUARD(i, mblocks);                                                   \
    long xb, yb;                                                             \
    batch_index(&s, b, &xb, &yb);                                            \
    __global const float *A =                                                \
        OCL_PTR(const float, ap) + ((xb * mblocks + i) * K + k0) * MR;       \
    __global const float *B =                                                \
        OCL_PTR(const float, bp) + ((yb * nblocks + j) * K + k0) * NR;       \
    __global T *C = OCL_PTR(T, c) + c_off + b * M * N + i * MR * N + j * NR; \
    float16 acc[MR][NV];                                                     \
    _Pragma("unroll") for (int r = 0; r < MR; r++)                           \
      _Pragma("unroll") for (int v = 0; v < NV; v++) acc[r][v] = 0.0f;       \
    for (long k = 0; k < kc; k++) {                                          \
      float16 bv[NV];                                                        \
      _Pragma("unroll") for (int v = 0; v < NV; v++)                         \
        bv[v] = vload16(k * NV + v, B);                                      \
      _Pragma("unroll") for (int r = 0; r < MR; r++) {                       \
        float a = A[k * MR + r];                                             \
        _Pragma("unroll") for (int v = 0; v < NV; v++)                       \
          acc[r][v] = fma((float16)a, bv[v], acc[r][v]);                     \
      }                                                                      \
    }                                                                        \
    long rows = min((long)MR, M - i * MR);                                   \
    long cols = min((long)NR, N - j * NR);                                   \
    if (cols == NR) {                                                        \
      _Pragma("unroll") for (int r = 0; r < MR; r++) {                       \
        if (r < rows) {                                                      \
          _Pragma("unroll") for (int v = 0; v < NV; v++) {                   \
            float16 o = acc[r][v];                                           \
            if (accumulate)                                                  \
              o += LOAD16(C + r * N, v);                                     \
            STORE16(C + r * N, v, o);                                        \
          }                                                                  \
        }                                                                    \
      }                                                                      \
    } else {                                                                 \
      for (int r = 0; r < rows; r++) {                                       \
        float tmp[NR];                                                       \
        _Pragma("unroll") for (int v = 0; v < NV; v++)                       \
          vstore16(acc[r][v], v, tmp);                                       \
        for (int q = 0; q < cols; q++) {                                     \
          float o = tmp[q];                                                  \
          if (accumulate)                                                    \
            o += LOAD(C, r * N + q);                                         \
          STORE(C, r * N + q, o);                                            \
        }                                                                    \
      }                                                                      \
    }                                                                        \
  }

/* 8 x 32: see GEMM_MR in matmul.c for the shapes measured against it. */
GEMM_KERNEL(8, 2)

/* C[b](m, n) = sum_k A(m, k) * B(k, n) with element strides for A and B, so
 * transposes cost nothing here. One work-item per element of C. */
__kernel void gemm_direct(OCL_TENSOR_ARG(const T, a), OCL_TENSOR_ARG(const T, b),
                          OCL_TENSOR_ARG(T, c), long a_off, long b_off,
                          long c_off, long M, long N, long K,
                          long a_sm, long a_sk, long b_sk, long b_sn,
                          long a_batch, long b_batch, long total, batch_t s)
{
  long e = get_global_id(0);
  OCL_GUARD(e, total);
  long n = e % N;
  long m = (e / N) % M;
  long bi = e / (M * N);
  long xb, yb;
  batch_index(&s, bi, &xb, &yb);
  __global const T *pa = OCL_PTR(const T, a) + a_off + xb * a_batch + m * a_sm;
  __global const T *pb = OCL_PTR(const T, b) + b_off + yb * b_batch + n * b_sn;
  float acc = 0.0f;
  for (long k = 0; k < K; k++)
    acc = fma(LOAD(pa, k * a_sk), LOAD(pb, k * b_sk), acc);
  STORE(OCL_PTR(T, c) + c_off, e, acc);
}
