/* MatMul, BatchMatMul and _FusedMatMul: the matmul family's kernels.
 *
 * Built per storage type (-DT=float, or -DT=half -DT_IS_HALF: half is
 * loaded and stored as half and everything in between is float, as
 * TensorFlow's CPU half kernels do; no cl_khr_fp16 needed) and per kernel
 * shape: -DMATMUL_CPU (CPU devices) or -DMATMUL_GPU, with IDX_T the index
 * type of the kernels that index whole products (int wherever every extent
 * fits, long beyond).
 *
 * CPU shape (the one that is fast on PoCL) works as BLIS does:
 *   pack       A into micro-panels [M/MR][K][MR] and B into [N/NR][K][NR],
 *              zero-padded at the M and N edges, converted to float, with any
 *              transpose folded into the strides the packing reads with;
 *   gemm_8x2   one work-item computes one 8 x 32 block of C for one K
 *              slice, with 2 float16 accumulators per row: PoCL does not
 *              vectorise across work-items once a loop sits inside a
 *              work-item, so the vectors are explicit. Work-items of a group
 *              share one B micro-panel (it stays in L1) and walk down the
 *              rows of A.
 * The host launches gemm once per K slice (KC deep) so that a B micro-panel
 * fits in L1; later slices add into C. Small float products skip packing:
 * gemm_8x2 reads A, and B when it is not transposed and N is a multiple
 * of 32, where they lie.
 *
 * GPU shape: gemm_t<TM>x<TN>_<ta><tb>, a work-group of 256 (or 64) computes
 * a TM x TN tile of C; K goes by in tiles of 16 staged in local memory,
 * loaded with neighbouring work-items on neighbouring addresses (4-wide
 * vectors along whichever dimension is contiguous in memory) and, while the
 * group computes on one tile, the next is already on its way into
 * registers. Each work-item keeps a WM x WN block of C in registers, as
 * 4 x 4 sub-blocks spread TM/(WM/4) rows and TN/(WN/4) columns apart, so
 * that its reads from local memory are aligned float4s that neighbours
 * share or that lie side by side, and its stores to C are coalesced. Edges
 * (M, N or K not a multiple of the tile) are bounds-checked per element;
 * bias and activation (_FusedMatMul) are applied before the store. The
 * third NDRange dimension is the batch: each operand's matrix is found
 * through its own batch strides (0 where it is broadcast).
 *
 * gemm_direct (one work-item per element of C, strided loads) serves tiny
 * products where tiling or packing costs more than it saves, and bias_act
 * applies _FusedMatMul's epilogue after a path that cannot (the CPU
 * kernel's half products and K splits, CLBlast, a host BLAS). */
#include "activations.clh"
#include "common.clh"

#if defined(T_IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#define LOAD4(p) vload_half4(0, (p))
#define STORE4(p, v) OCL_VSTORE_HALF4((v), 0, (p))
#define LOAD16(p, i) vload_half16((i), (p))
#define STORE16(p, i, v) OCL_VSTORE_HALF16((v), (i), (p))
#else
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOAD4(p) vload4(0, (p))
#define STORE4(p, v) vstore4((v), 0, (p))
#define LOAD16(p, i) vload16((i), (p))
#define STORE16(p, i, v) vstore16((v), (i), (p))
#endif

#ifndef IDX_T
#define IDX_T long
#endif
typedef IDX_T idx_t;

/* _FusedMatMul's activations: matmul.c's enum activation. */
#define ACT_NONE 0
#define ACT_RELU 1
#define ACT_RELU6 2
#define ACT_ELU 3
#define ACT_LEAKY_RELU 4
#define ACT_TANH 5
#define ACT_SIGMOID 6
#define ACT_GELU_APPROXIMATE 7
#define ACT_GELU_EXACT 8

static inline float activate(float x, int act, float alpha)
{
  switch (act) {
  case ACT_RELU: return ACT_RELU_OF(float, x);
  case ACT_RELU6: return ACT_RELU6_OF(float, x);
  case ACT_ELU: return ACT_ELU_OF(float, x);
  case ACT_LEAKY_RELU: return ACT_LEAKY_RELU_OF(float, x, alpha);
  case ACT_TANH: return TANH_OF(float, x);
  case ACT_SIGMOID: return ACT_SIGMOID_OF(float, x);
  case ACT_GELU_APPROXIMATE: return ACT_GELU_APPROXIMATE_OF(float, x);
  case ACT_GELU_EXACT: return ACT_GELU_EXACT_OF(float, x);
  default: return x;
  }
}

/* The batch of a product as matmul.c's struct gemm_batch_args lays it out:
 * output matrix b decomposes over dims (row-major); each operand's matrix
 * starts sum c_d * strides[d] elements in (0 where it is broadcast). */
#define GEMM_BATCH_DIMS 4
typedef struct {
  long a_strides[GEMM_BATCH_DIMS];
  long b_strides[GEMM_BATCH_DIMS];
  long dims[GEMM_BATCH_DIMS];
  int rank;
  int pad;
} gemm_batch_t;

static inline void batch_offsets(const gemm_batch_t *s, long b, long *ao,
                                 long *bo)
{
  long x = 0, y = 0;
  for (int d = s->rank - 1; d >= 0; d--) {
    long c = b % s->dims[d];
    b /= s->dims[d];
    x += c * s->a_strides[d];
    y += c * s->b_strides[d];
  }
  *ao = x;
  *bo = y;
}

/* C[b](m, n) = sum_k A(m, k) * B(k, n) with element strides for A and B, so
 * transposes cost nothing here. One work-item per element of C. */
__kernel void gemm_direct(OCL_TENSOR_ARG(const T, a),
                          OCL_TENSOR_ARG(const T, b), OCL_TENSOR_ARG(T, c),
                          long a_off, long b_off, long c_off, idx_t M,
                          idx_t N, idx_t K, idx_t a_sm, idx_t a_sk,
                          idx_t b_sk, idx_t b_sn, idx_t total,
                          gemm_batch_t s)
{
  idx_t e = get_global_id(0);
  OCL_GUARD(e, total);
  idx_t n = e % N;
  idx_t m = (e / N) % M;
  idx_t bi = e / (M * N);
  long xb, yb;
  batch_offsets(&s, bi, &xb, &yb);
  __global const T *pa = OCL_PTR(const T, a) + a_off + xb + m * a_sm;
  __global const T *pb = OCL_PTR(const T, b) + b_off + yb + n * b_sn;
  float acc = 0.0f;
  for (idx_t k = 0; k < K; k++)
    acc = fma(LOAD(pa, k * a_sk), LOAD(pb, k * b_sk), acc);
  STORE(OCL_PTR(T, c) + c_off, e, acc);
}

/* gemm_direct where every index of the product, and of each operand's
 * whole batch, fits in 31 bits: a flat index's row, column and batch
 * coordinates by multiply and shift (ocl_fastdiv) instead of a division
 * each, which GPUs emulate. The GPU shape's; CPU devices take
 * gemm_direct_rows. */
typedef struct {
  int a_strides[GEMM_BATCH_DIMS];
  int b_strides[GEMM_BATCH_DIMS];
  uint dims[GEMM_BATCH_DIMS];
  uint magic[GEMM_BATCH_DIMS];
  uint shift[GEMM_BATCH_DIMS];
  int rank;
  uint n_magic, n_shift, m_magic, m_shift;
} gemm_batch32_t;

/* Where output matrix bi's operands start (elements), as batch_offsets. */
static inline void batch32_offsets(const gemm_batch32_t *s, uint bi, int *xb,
                                   int *yb)
{
  int x = 0, y = 0;
  for (int d = s->rank - 1; d >= 0; d--) {
    const uint q = ocl_fastdiv(bi, s->magic[d], s->shift[d]);
    const int coord = (int)(bi - q * s->dims[d]);
    x += coord * s->a_strides[d];
    y += coord * s->b_strides[d];
    bi = q;
  }
  *xb = x;
  *yb = y;
}

__kernel void gemm_direct32(OCL_TENSOR_ARG(const T, a),
                            OCL_TENSOR_ARG(const T, b), OCL_TENSOR_ARG(T, c),
                            long a_off, long b_off, long c_off, int M, int N,
                            int K, int a_sm, int a_sk, int b_sk, int b_sn,
                            int total, gemm_batch32_t s)
{
  const int e = (int)get_global_id(0);
  OCL_GUARD(e, total);
  const uint row = ocl_fastdiv((uint)e, s.n_magic, s.n_shift);
  const int n = e - (int)row * N;
  const uint bi = ocl_fastdiv(row, s.m_magic, s.m_shift);
  const int m = (int)row - (int)bi * M;
  int xb, yb;
  batch32_offsets(&s, bi, &xb, &yb);
  __global const T *pa = OCL_PTR(const T, a) + a_off + xb + m * a_sm;
  __global const T *pb = OCL_PTR(const T, b) + b_off + yb + n * b_sn;
  float acc = 0.0f;
  for (int k = 0; k < K; k++)
    acc = fma(LOAD(pa, k * a_sk), LOAD(pb, k * b_sk), acc);
  STORE(OCL_PTR(T, c) + c_off, e, acc);
}

#ifdef MATMUL_CPU
/* gemm_direct32's product in the CPU shape: one work-item per row of C
 * (rows over the batch), 16 columns at a time in a float16 accumulator.
 * PoCL does not vectorise across work-items once a loop sits inside one
 * (the K loop), so the vectors are explicit; B's row runs are vector
 * loads where its columns are contiguous, else element loads into a
 * private vector. A Transformer block's attention products (batches of
 * 32 of 12 x 12 x 8) took 30-35 us a launch one element per work-item,
 * scalar; 14-19 us so, and its 96 x 32 x 32 gradients 80-115 -> 7. */
__kernel void gemm_direct_rows(OCL_TENSOR_ARG(const T, a),
                               OCL_TENSOR_ARG(const T, b),
                               OCL_TENSOR_ARG(T, c), long a_off, long b_off,
                               long c_off, int M, int N, int K, int a_sm,
                               int a_sk, int b_sk, int b_sn, int rows,
                               gemm_batch32_t s)
{
  const int r = (int)get_global_id(0);
  OCL_GUARD(r, rows);
  const uint bi = ocl_fastdiv((uint)r, s.m_magic, s.m_shift);
  const int m = r - (int)bi * M;
  int xb, yb;
  batch32_offsets(&s, bi, &xb, &yb);
  __global const T *pa = OCL_PTR(const T, a) + a_off + xb + m * a_sm;
  __global const T *pb = OCL_PTR(const T, b) + b_off + yb;
  __global T *pc = OCL_PTR(T, c) + c_off + (long)r * N;
  for (int n0 = 0; n0 < N; n0 += 16) {
    const int width = min(16, N - n0);
    float16 acc = (float16)(0.0f);
    if (width == 16 && b_sn == 1) {
      for (int k = 0; k < K; k++)
        acc = fma((float16)(LOAD(pa, k * a_sk)),
                  LOAD16(pb + k * b_sk + n0, 0), acc);
    } else {
      for (int k = 0; k < K; k++) {
        float part[16];
        for (int j = 0; j < 16; j++)
          part[j] = j < width ? LOAD(pb, k * b_sk + (n0 + j) * b_sn) : 0.0f;
        acc = fma((float16)(LOAD(pa, k * a_sk)), vload16(0, part), acc);
      }
    }
    if (width == 16) {
      STORE16(pc + n0, 0, acc);
    } else {
      float part[16];
      vstore16(acc, 0, part);
      for (int j = 0; j < width; j++)
        STORE(pc, n0 + j, part[j]);
    }
  }
}
#endif

/* out[i] = act(out[i] + bias[i % N]) over `total` elements of the product's
 * rows (bias may be absent: has_bias 0). */
__kernel void bias_act(OCL_TENSOR_ARG(T, c), OCL_TENSOR_ARG(const T, bias),
                       long c_off, idx_t N, idx_t total, int has_bias,
                       int act, float alpha)
{
  idx_t i = get_global_id(0);
  OCL_GUARD(i, total);
  __global T *C = OCL_PTR(T, c) + c_off;
  float v = LOAD(C, i);
  if (has_bias)
    v += LOAD(OCL_PTR(const T, bias), i % N);
  STORE(C, i, activate(v, act, alpha));
}

#ifdef MATMUL_CPU

/* Where work-item (k, block, batch) of a pack reads (row 0 of its block at
 * depth k) and writes (its panel row); false past the edges. */
static inline bool pack_place(__global const T *src, __global float *dst,
                              long src_off, long rows, long depth,
                              long s_row, long s_depth, long batch_stride,
                              long per_batch, int width, long k,
                              __global const T **s, __global float **d)
{
  long blk = get_global_id(1);
  long b = get_global_id(2);
  if (k >= depth || blk * width >= rows)
    return false;
  *s = src + src_off + b * batch_stride + k * s_depth + blk * width * s_row;
  *d = dst + b * per_batch + (blk * depth + k) * width;
  return true;
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
  __global const T *s;
  __global float *d;
  if (!pack_place(OCL_PTR(const T, src), OCL_PTR(float, dst), src_off, rows,
                  depth, s_row, s_depth, batch_stride, per_batch, width, k,
                  &s, &d))
    return;
  int n = (int)min((long)width, rows - (long)get_global_id(1) * width);
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

/* pack where depth is contiguous in src (s_depth 1: A as it is, B
 * transposed) and width a multiple of 8: one work-item per 16 depths of a
 * block. The element loop of pack reads 16 depths of one row per vector
 * but stores them `width` floats apart; here 8 rows of 16 depths are read
 * as vectors and transposed in registers, so that each depth's 8 values
 * leave as one vector, into the 16 * width floats the tile's panel rows
 * fill contiguously (a transposed B of 2048 x 1024: 0.27-0.32 ms against
 * 1.0-1.07 through pack; ResNet50's packs: 5.2-5.3 ms a step against
 * 7.7). The last tile (depth % 16) goes element by element. */
#define PACK_COLUMN(lane)                                                    \
  (float8)(v[0].s##lane, v[1].s##lane, v[2].s##lane, v[3].s##lane,          \
           v[4].s##lane, v[5].s##lane, v[6].s##lane, v[7].s##lane)
#define PACK_STORE(lane, k) \
  vstore8(PACK_COLUMN(lane), 0, tile + (k) * width + g);
__kernel void pack_depth16(OCL_TENSOR_ARG(const T, src),
                           OCL_TENSOR_ARG(float, dst), long src_off,
                           long rows, long depth, long s_row,
                           long batch_stride, long per_batch, int width)
{
  long k0 = get_global_id(0) * 16;
  __global const T *s;
  __global float *tile;
  if (!pack_place(OCL_PTR(const T, src), OCL_PTR(float, dst), src_off, rows,
                  depth, s_row, 1, batch_stride, per_batch, width, k0, &s,
                  &tile))
    return;
  int n = (int)min((long)width, rows - (long)get_global_id(1) * width);
  int kn = (int)min(16L, depth - k0);
  if (kn < 16) {
    for (int k = 0; k < kn; k++)
      for (int r = 0; r < width; r++)
        tile[k * width + r] = r < n ? LOAD(s, r * s_row + k) : 0.0f;
    return;
  }
  for (int g = 0; g < width; g += 8) {
    float16 v[8];
    for (int r = 0; r < 8; r++)
      v[r] = g + r < n ? LOAD16(s + (g + r) * s_row, 0) : (float16)0.0f;
    OCL_EACH_LANE16(PACK_STORE)
  }
}

/* pack where rows are contiguous in src (s_row 1: A transposed, B as it
 * is) and width a power of two from 8: one work-item per 16 rows at one
 * depth, read as one vector, stored as 8-float pieces into their panels
 * (pack spent a work-item and a 64-bit division on each 8 or 32 floats:
 * the two packs of a 1024 x 256 x 4096 product with A transposed took
 * 4.7-6.1 ms, now 1.6-1.8). Neighbouring work-items take neighbouring
 * depths, whose pieces are neighbours in their panel. Rows past `rows`
 * are zero up to the last block's edge. */
__kernel void pack_rows16(OCL_TENSOR_ARG(const T, src),
                          OCL_TENSOR_ARG(float, dst), long src_off,
                          long rows, long depth, long s_depth,
                          long batch_stride, long per_batch, int width)
{
  long k = get_global_id(0);
  long r0 = get_global_id(1) * 16;
  if (k >= depth)
    return;
  __global const T *s = OCL_PTR(const T, src) + src_off +
                        get_global_id(2) * batch_stride + k * s_depth + r0;
  __global float *d = OCL_PTR(float, dst) + get_global_id(2) * per_batch;
  int shift = 31 - clz(width);
  long padded = ((rows + width - 1) >> shift) << shift;
  float16 v;
  if (r0 + 16 <= rows) {
    v = LOAD16(s, 0);
  } else {
    float t[16];
    for (int i = 0; i < 16; i++)
      t[i] = r0 + i < rows ? LOAD(s, i) : 0.0f;
    v = vload16(0, t);
  }
  long blk = r0 >> shift;
  vstore8(v.lo, 0, d + (blk * depth + k) * width + (r0 - (blk << shift)));
  long r1 = r0 + 8;
  if (r1 >= padded)
    return;
  blk = r1 >> shift;
  vstore8(v.hi, 0, d + (blk * depth + k) * width + (r1 - (blk << shift)));
}

/* One MR x (16 * NV) block of C per work-item, over K slice [k0, k0 + kc).
 * accumulate: add to C (later K slices) instead of overwriting it. Packed
 * panels are per operand matrix: a_mat/b_mat come from the batch strides,
 * which the host gives in packed matrices here. Split K: global dim 2 is
 * batch * splits, split s takes slice [k0 + s * kc, + kc) and writes its
 * own partial C, split_stride elements after the previous split's (the
 * host sums them: split_sum). Unsplit, splits is 1.
 * in_place (float products whose packing would cost what it saves:
 * small ones, or few enough rows for one work-group, unless A is
 * transposed with many rows; matmul.c run_packed_from): bit 0, ap is A itself from a_off, matrix xb M * K elements on,
 * element (row, k) at row * a_sr + k * a_sk (rows past M read row M - 1,
 * never stored); bit 1, bp is B itself from b_off, matrix yb K * N on,
 * rows ldb apart (whole 32-column blocks only). finish (float, the last K slice of an unsplit product):
 * _FusedMatMul's epilogue, + bias (bit 0) then the activation act, as
 * bias_act would apply it after the store. */
/* The activation over 16 values: Relu as a select (NaN stays NaN, as
 * ACT_RELU_OF keeps it), the others one by one. */
static inline float16 finish16(float16 o, int act, float alpha)
{
  if (act == ACT_NONE)
    return o;
  if (act == ACT_RELU)
    return select(o, (float16)0.0f, o < 0.0f);
  float t[16];
  vstore16(o, 0, t);
  for (int i = 0; i < 16; i++)
    t[i] = activate(t[i], act, alpha);
  return vload16(0, t);
}

/* acc += kc steps of A's column (the expression, of k and r) times B's
 * row (ldb_ apart). */
#define GEMM_STEPS(MR, NV, A_AT)                                             \
  for (long k = 0; k < kc; k++) {                                            \
    float16 bv[NV];                                                          \
    _Pragma("unroll") for (int v = 0; v < NV; v++)                           \
      bv[v] = vload16(v, B + k * ldb_);                                      \
    _Pragma("unroll") for (int r = 0; r < MR; r++) {                         \
      float a = A_AT;                                                        \
      _Pragma("unroll") for (int v = 0; v < NV; v++)                         \
        acc[r][v] = fma((float16)a, bv[v], acc[r][v]);                       \
    }                                                                        \
  }

#define GEMM_KERNEL(MR, NV)                                                  \
  __kernel void gemm_##MR##x##NV(                                            \
      OCL_TENSOR_ARG(const float, ap), OCL_TENSOR_ARG(const float, bp),      \
      OCL_TENSOR_ARG(T, c), long c_off, long M, long N, long K, long k0,     \
      long slice, int accumulate, long mblocks, long nblocks, long splits,   \
      long split_stride, gemm_batch_t s, int in_place, long a_off,           \
      long a_sr, long a_sk, long b_off, long ldb,                            \
      OCL_TENSOR_ARG(const T, bias), int finish, int act, float alpha)       \
  {                                                                          \
    const int NR = 16 * NV;                                                  \
    long j = get_global_id(0);                                               \
    long i = get_global_id(1);                                               \
    long b = get_global_id(2);                                               \
    OCL_GUARD(j, nblocks);                                                   \
    OCL_GUARD(i, mblocks);                                                   \
    long split = b % splits;                                                 \
    b /= splits;                                                             \
    long kb = k0 + split * slice;                                            \
    long kc = min(slice, K - kb);                                            \
    long xb, yb;                                                             \
    batch_offsets(&s, b, &xb, &yb);                                          \
    __global const float *A =                                                \
        OCL_PTR(const float, ap) + ((xb * mblocks + i) * K + kb) * MR;       \
    __global const float *B =                                                \
        OCL_PTR(const float, bp) + ((yb * nblocks + j) * K + kb) * NR;       \
    long ldb_ = NR;                                                          \
    if (in_place & 2) {                                                      \
      B = OCL_PTR(const float, bp) + b_off + yb * K * N + kb * ldb + j * NR; \
      ldb_ = ldb;                                                            \
    }                                                                        \
    __global T *C = OCL_PTR(T, c) + c_off + split * split_stride +           \
                    b * M * N + i * MR * N + j * NR;                         \
    float16 acc[MR][NV];                                                     \
    _Pragma("unroll") for (int r = 0; r < MR; r++)                           \
      _Pragma("unroll") for (int v = 0; v < NV; v++) acc[r][v] = 0.0f;       \
    if (in_place & 1) {                                                      \
      __global const float *Ar[MR];                                          \
      _Pragma("unroll") for (int r = 0; r < MR; r++)                         \
        Ar[r] = OCL_PTR(const float, ap) + a_off + xb * M * K +              \
                min(i * MR + r, M - 1) * a_sr + kb * a_sk;                   \
      GEMM_STEPS(MR, NV, Ar[r][k * a_sk])                                    \
    } else {                                                                 \
      GEMM_STEPS(MR, NV, A[k * MR + r])                                      \
    }                                                                        \
    long rows = min((long)MR, M - i * MR);                                   \
    long cols = min((long)NR, N - j * NR);                                   \
    __global const T *bias_at = OCL_PTR(const T, bias) + j * NR;             \
    if (cols == NR) {                                                        \
      float16 bv[NV];                                                        \
      _Pragma("unroll") for (int v = 0; v < NV; v++)                         \
        bv[v] = (finish & 1) ? LOAD16(bias_at, v) : (float16)0.0f;           \
      _Pragma("unroll") for (int r = 0; r < MR; r++) {                       \
        if (r < rows) {                                                      \
          _Pragma("unroll") for (int v = 0; v < NV; v++) {                   \
            float16 o = acc[r][v];                                           \
            if (accumulate)                                                  \
              o += LOAD16(C + r * N, v);                                     \
            if (finish)                                                      \
              o = finish16((finish & 1) ? o + bv[v] : o, act, alpha);        \
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
          if (finish & 1)                                                    \
            o += LOAD(bias_at, q);                                           \
          if (finish)                                                        \
            o = activate(o, act, alpha);                                     \
          STORE(C, r * N + q, o);                                            \
        }                                                                    \
      }                                                                      \
    }                                                                        \
  }

/* 8 x 32: see GEMM_MR in matmul.c for the shapes measured against it. */
GEMM_KERNEL(8, 2)

/* c[e] = the sum of the splits' partial products of element e (float
 * GEMMs only: half ones never split). */
__kernel void split_sum(OCL_TENSOR_ARG(const float, parts),
                        OCL_TENSOR_ARG(T, c), long c_off, long n, long splits)
{
  long e = get_global_id(0);
  OCL_GUARD(e, n);
  __global const float *p = OCL_PTR(const float, parts) + e;
  float acc = 0.0f;
  for (long s = 0; s < splits; s++)
    acc += p[s * n];
  STORE(OCL_PTR(T, c) + c_off, e, acc);
}

#endif /* MATMUL_CPU */

#ifdef MATMUL_GPU

/* K tile and the padding of local rows: with 4 floats of padding a
 * 4-wide load scattered along k into [k][m] rows lands on at most 2 banks
 * of 32 at once (none would give 4-way conflicts), and rows stay 16-byte
 * aligned for the float4 reads of the inner loop. */
#define TK 16
#define LPAD 4

/* Four elements from p, of which `avail` exist (0 beyond), none unless
 * `ok`: the edge-safe load. `aligned`: p is 16-byte aligned (float only),
 * a single vector load. */
static inline float4 load4(__global const T *p, bool ok, idx_t avail,
                           bool aligned)
{
  (void)aligned; /* half has no whole-vector load without cl_khr_fp16 */
  if (ok && avail >= 4) {
#if !defined(T_IS_HALF)
    if (aligned)
      return *(__global const float4 *)p;
#endif
    return LOAD4(p);
  }
  float4 v = (float4)(0.0f);
  if (ok) {
    if (avail > 0)
      v.s0 = LOAD(p, 0);
    if (avail > 1)
      v.s1 = LOAD(p, 1);
    if (avail > 2)
      v.s2 = LOAD(p, 2);
  }
  return v;
}

/* The four columns of C from p, of which `avail` exist. */
static inline void store4(__global T *p, float4 v, idx_t avail, bool aligned)
{
  (void)aligned;
  if (avail >= 4) {
#if !defined(T_IS_HALF)
    if (aligned) {
      *(__global float4 *)p = v;
      return;
    }
#endif
    STORE4(p, v);
    return;
  }
  if (avail > 0)
    STORE(p, 0, v.s0);
  if (avail > 1)
    STORE(p, 1, v.s1);
  if (avail > 2)
    STORE(p, 2, v.s2);
}

static inline float4 activate4(float4 v, int act, float alpha)
{
  return (float4)(activate(v.s0, act, alpha), activate(v.s1, act, alpha),
                  activate(v.s2, act, alpha), activate(v.s3, act, alpha));
}

/* One TM x TN tile of C. TA/TB: the operand is stored transposed (A as
 * K x M, B as N x K). Work-group (TN / WN, TM / WM): local id 0 runs along
 * N, 1 along M. Group id 0 picks the M tile, 1 the N tile (plus n_tile0),
 * 2 the batch (plus batch0): the host splits launches at 65535 groups in
 * dims 1 and 2, the most some drivers allow.
 *
 * aligned: bit 0 A, bit 1 B, bit 2 C have 16-byte aligned rows (offset
 * and leading dimension), so whole-vector loads and stores apply. epilogue:
 * has_bias, act, alpha as in bias_act. */
#define GEMM_TILED(NAME, TM, TN, WM, WN, TA, TB)                              \
  __kernel void NAME(                                                         \
      OCL_TENSOR_ARG(const T, a), OCL_TENSOR_ARG(const T, b),                 \
      OCL_TENSOR_ARG(T, c), OCL_TENSOR_ARG(const T, bias), long a_off,        \
      long b_off, long c_off, idx_t M, idx_t N, idx_t K, int n_tile0,         \
      long batch0, gemm_batch_t s, int aligned, int has_bias, int act,        \
      float alpha)                                                            \
  {                                                                           \
    enum {                                                                    \
      NTX = TN / WN, NTY = TM / WM, NT = NTX * NTY,                           \
      LA = TM * TK / 4 / NT, LB = TN * TK / 4 / NT,                           \
      AS = TM + LPAD, BS = TN + LPAD                                          \
    };                                                                        \
    __local float4 as4[TK * AS / 4];                                          \
    __local float4 bs4[TK * BS / 4];                                          \
    __local float *as = (__local float *)as4;                                 \
    __local float *bs = (__local float *)bs4;                                 \
    const int tx = get_local_id(0), ty = get_local_id(1);                     \
    const int tid = ty * NTX + tx;                                            \
    const idx_t m0 = (idx_t)get_group_id(0) * TM;                             \
    const idx_t n0 = ((idx_t)get_group_id(1) + n_tile0) * TN;                 \
    const long bi = batch0 + (long)get_group_id(2);                           \
    long ab, bb;                                                              \
    batch_offsets(&s, bi, &ab, &bb);                                          \
    __global const T *A = OCL_PTR(const T, a) + a_off + ab;                   \
    __global const T *B = OCL_PTR(const T, b) + b_off + bb;                   \
    __global T *C = OCL_PTR(T, c) + c_off + bi * (long)M * (long)N;           \
    const idx_t lda = TA ? M : K, ldb = TB ? K : N;                           \
    const bool a_al = aligned & 1, b_al = (aligned >> 1) & 1;                 \
    const bool c_al = (aligned >> 2) & 1;                                     \
                                                                              \
    float4 ra[LA], rb[LB];                                                    \
    float acc[WM][WN];                                                        \
    for (int i = 0; i < WM; i++)                                              \
      for (int j = 0; j < WN; j++)                                            \
        acc[i][j] = 0.0f;                                                     \
                                                                              \
    /* Global -> registers: the tile at k0. */                                \
    idx_t k0 = 0;                                                             \
    _Pragma("unroll") for (int p = 0; p < LA; p++) {                          \
      int e = p * NT + tid;                                                   \
      if (TA) {                                                               \
        int kk = e / (TM / 4), r = (e % (TM / 4)) * 4;                        \
        ra[p] = load4(A + (k0 + kk) * lda + m0 + r, k0 + kk < K, M - m0 - r,  \
                      a_al);                                                  \
      } else {                                                                \
        int r = e / (TK / 4), kk = (e % (TK / 4)) * 4;                        \
        ra[p] = load4(A + (m0 + r) * lda + k0 + kk, m0 + r < M, K - k0 - kk,  \
                      a_al);                                                  \
      }                                                                       \
    }                                                                         \
    _Pragma("unroll") for (int p = 0; p < LB; p++) {                          \
      int e = p * NT + tid;                                                   \
      if (TB) {                                                               \
        int c = e / (TK / 4), kk = (e % (TK / 4)) * 4;                        \
        rb[p] = load4(B + (n0 + c) * ldb + k0 + kk, n0 + c < N, K - k0 - kk,  \
                      b_al);                                                  \
      } else {                                                                \
        int kk = e / (TN / 4), c = (e % (TN / 4)) * 4;                        \
        rb[p] = load4(B + (k0 + kk) * ldb + n0 + c, k0 + kk < K, N - n0 - c,  \
                      b_al);                                                  \
      }                                                                       \
    }                                                                         \
                                                                              \
    for (; k0 < K; k0 += TK) {                                                \
      /* Everyone is done reading the previous tile. */                       \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
      _Pragma("unroll") for (int p = 0; p < LA; p++) {                        \
        int e = p * NT + tid;                                                 \
        if (TA) {                                                             \
          int kk = e / (TM / 4), r = (e % (TM / 4)) * 4;                      \
          as4[(kk * AS + r) / 4] = ra[p];                                     \
        } else {                                                              \
          int r = e / (TK / 4), kk = (e % (TK / 4)) * 4;                      \
          as[(kk + 0) * AS + r] = ra[p].s0;                                   \
          as[(kk + 1) * AS + r] = ra[p].s1;                                   \
          as[(kk + 2) * AS + r] = ra[p].s2;                                   \
          as[(kk + 3) * AS + r] = ra[p].s3;                                   \
        }                                                                     \
      }                                                                       \
      _Pragma("unroll") for (int p = 0; p < LB; p++) {                        \
        int e = p * NT + tid;                                                 \
        if (TB) {                                                             \
          int c = e / (TK / 4), kk = (e % (TK / 4)) * 4;                      \
          bs[(kk + 0) * BS + c] = rb[p].s0;                                   \
          bs[(kk + 1) * BS + c] = rb[p].s1;                                   \
          bs[(kk + 2) * BS + c] = rb[p].s2;                                   \
          bs[(kk + 3) * BS + c] = rb[p].s3;                                   \
        } else {                                                              \
          int kk = e / (TN / 4), c = (e % (TN / 4)) * 4;                      \
          bs4[(kk * BS + c) / 4] = rb[p];                                     \
        }                                                                     \
      }                                                                       \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
                                                                              \
      /* The next tile's loads overlap this tile's arithmetic. */             \
      const idx_t k1 = k0 + TK;                                               \
      if (k1 < K) {                                                           \
        _Pragma("unroll") for (int p = 0; p < LA; p++) {                      \
          int e = p * NT + tid;                                               \
          if (TA) {                                                           \
            int kk = e / (TM / 4), r = (e % (TM / 4)) * 4;                    \
            ra[p] = load4(A + (k1 + kk) * lda + m0 + r, k1 + kk < K,          \
                          M - m0 - r, a_al);                                  \
          } else {                                                            \
            int r = e / (TK / 4), kk = (e % (TK / 4)) * 4;                    \
            ra[p] = load4(A + (m0 + r) * lda + k1 + kk, m0 + r < M,           \
                          K - k1 - kk, a_al);                                 \
          }                                                                   \
        }                                                                     \
        _Pragma("unroll") for (int p = 0; p < LB; p++) {                      \
          int e = p * NT + tid;                                               \
          if (TB) {                                                           \
            int c = e / (TK / 4), kk = (e % (TK / 4)) * 4;                    \
            rb[p] = load4(B + (n0 + c) * ldb + k1 + kk, n0 + c < N,           \
                          K - k1 - kk, b_al);                                 \
          } else {                                                            \
            int kk = e / (TN / 4), c = (e % (TN / 4)) * 4;                    \
            rb[p] = load4(B + (k1 + kk) * ldb + n0 + c, k1 + kk < K,          \
                          N - n0 - c, b_al);                                  \
          }                                                                   \
        }                                                                     \
      }                                                                       \
                                                                              \
      _Pragma("unroll") for (int kk = 0; kk < TK; kk++) {                     \
        float4 av[WM / 4], bv[WN / 4];                                        \
        _Pragma("unroll") for (int g = 0; g < WM / 4; g++)                    \
          av[g] = as4[(kk * AS + g * NTY * 4 + ty * 4) / 4];                  \
        _Pragma("unroll") for (int h = 0; h < WN / 4; h++)                    \
          bv[h] = bs4[(kk * BS + h * NTX * 4 + tx * 4) / 4];                  \
        _Pragma("unroll") for (int g = 0; g < WM / 4; g++) {                  \
          float a4[4] = {av[g].s0, av[g].s1, av[g].s2, av[g].s3};             \
          _Pragma("unroll") for (int r = 0; r < 4; r++) {                     \
            _Pragma("unroll") for (int h = 0; h < WN / 4; h++) {              \
              const int i = g * 4 + r, j = h * 4;                             \
              acc[i][j + 0] = fma(a4[r], bv[h].s0, acc[i][j + 0]);            \
              acc[i][j + 1] = fma(a4[r], bv[h].s1, acc[i][j + 1]);            \
              acc[i][j + 2] = fma(a4[r], bv[h].s2, acc[i][j + 2]);            \
              acc[i][j + 3] = fma(a4[r], bv[h].s3, acc[i][j + 3]);            \
            }                                                                 \
          }                                                                   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
                                                                              \
    float4 bias4[WN / 4];                                                     \
    _Pragma("unroll") for (int h = 0; h < WN / 4; h++) {                      \
      idx_t n = n0 + h * NTX * 4 + tx * 4;                                    \
      bias4[h] = load4(OCL_PTR(const T, bias) + n, has_bias && n < N, N - n,  \
                       false);                                                \
    }                                                                         \
    _Pragma("unroll") for (int g = 0; g < WM / 4; g++) {                      \
      _Pragma("unroll") for (int r = 0; r < 4; r++) {                         \
        idx_t m = m0 + g * NTY * 4 + ty * 4 + r;                              \
        if (m < M) {                                                          \
          _Pragma("unroll") for (int h = 0; h < WN / 4; h++) {                \
            idx_t n = n0 + h * NTX * 4 + tx * 4;                              \
            const int i = g * 4 + r, j = h * 4;                               \
            float4 v = (float4)(acc[i][j], acc[i][j + 1], acc[i][j + 2],      \
                                acc[i][j + 3]) +                              \
                       bias4[h];                                              \
            if (act != ACT_NONE)                                              \
              v = activate4(v, act, alpha);                                   \
            if (n < N)                                                        \
              store4(C + m * N + n, v, N - n, c_al);                          \
          }                                                                   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }

/* The tile shapes, each in every transpose combination: 128 x 128 with
 * 8 x 8 per work-item (large products), 64 x 64 with 4 x 4 (smaller ones:
 * more work-groups to fill the compute units), both 256 work-items; and
 * 32 x 32 with 4 x 4 in 64 work-items, for devices (or kernels) whose
 * limit is below 256. */
#define GEMM_TILED_ALL(TM, TN, WM, WN)                                   \
  GEMM_TILED(gemm_t##TM##x##TN##_nn, TM, TN, WM, WN, 0, 0)               \
  GEMM_TILED(gemm_t##TM##x##TN##_nt, TM, TN, WM, WN, 0, 1)               \
  GEMM_TILED(gemm_t##TM##x##TN##_tn, TM, TN, WM, WN, 1, 0)               \
  GEMM_TILED(gemm_t##TM##x##TN##_tt, TM, TN, WM, WN, 1, 1)

GEMM_TILED_ALL(128, 128, 8, 8)
GEMM_TILED_ALL(64, 64, 4, 4)
GEMM_TILED_ALL(32, 32, 4, 4)

#endif /* MATMUL_GPU */
