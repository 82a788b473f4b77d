/* Convolutions: the data movement around the GEMM (im2col, col2im) and
 * direct depthwise kernels.
 *
 * Built once per storage type (-DT=float or -DT=half; half is stored as
 * half and computed in float). Every tensor is addressed through element
 * strides per dimension (n, h, w, c), so NHWC and NCHW are the same kernels.
 * Kernels run over 2-D index spaces (channel, row) with a fixed local size:
 * dimension 0 is the channel, the contiguous dimension of NHWC, so that
 * PoCL vectorises across it; row decompositions happen once per work-item.
 * No kernel uses atomics: each work-item owns the element it writes and
 * loops over whatever contributes to it. */
#include "common.clh"

#if defined(T_IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define LOAD(p, i) ((float)(p)[i])
#define STORE(p, i, v) ((p)[i] = (T)(v))
#endif

/* One convolution's geometry as conv.c's struct conv_args lays it out. */
typedef struct {
  long batch, in_rows, in_cols, in_depth;
  long filter_rows, filter_cols, out_depth, out_rows, out_cols;
  long stride_rows, stride_cols, dil_rows, dil_cols, pad_top, pad_left;
  long depth_multiplier;
  long in_sn, in_sh, in_sw, in_sc;     /* the image (input, dx) */
  long out_sn, out_sh, out_sw, out_sc; /* the output side (out, dout) */
} conv_t;

/* col[nl, p, (t0 + tt) * Cin + ci] = input[n0 + nl, window of p at tap
 * t0 + tt, ci], 0 in the padding; col addressed by strides (col_sn,
 * col_sp, col_sk) so that it is [rows, K] for NHWC and [n][K][P] for NCHW.
 * One work-item per (tap, row) copies a run of Cin channels, so index
 * divisions happen once per run rather than per element (64-bit divisions
 * per element cost more than the copy). Copied exactly. */
__kernel void im2col(OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(T, col),
                     conv_t g, long n0, long rows, long t0, long ntaps,
                     long col_sn, long col_sp, long col_sk)
{
  long tt = get_global_id(0);
  long r = get_global_id(1);
  OCL_GUARD(tt, ntaps);
  OCL_GUARD(r, rows);
  long tap = t0 + tt;
  long kw = tap % g.filter_cols, kh = tap / g.filter_cols;
  long P = g.out_rows * g.out_cols;
  long nl = r / P, p = r % P;
  long oh = p / g.out_cols, ow = p % g.out_cols;
  long h = oh * g.stride_rows - g.pad_top + kh * g.dil_rows;
  long w = ow * g.stride_cols - g.pad_left + kw * g.dil_cols;
  long C = g.in_depth;
  __global T *dst =
      OCL_PTR(T, col) + nl * col_sn + p * col_sp + tt * C * col_sk;
  if (h < 0 || h >= g.in_rows || w < 0 || w >= g.in_cols) {
    for (long c = 0; c < C; c++)
      STORE(dst, c * col_sk, 0.0f);
    return;
  }
  __global const T *src = OCL_PTR(const T, in) + (n0 + nl) * g.in_sn +
                          h * g.in_sh + w * g.in_sw;
  if (col_sk == 1 && g.in_sc == 1) {
    for (long c = 0; c < C; c++)
      STORE(dst, c, LOAD(src, c));
  } else {
    for (long c = 0; c < C; c++)
      STORE(dst, c * col_sk, LOAD(src, c * g.in_sc));
  }
}

/* The sum over the taps that read input pixel (h, w) of col[.., k0 + c]
 * for channels c < n; the caller adds each tap's k offset. */
#define COL2IM_TAPS(BODY)                                                 \
  for (long kh = 0; kh < g.filter_rows; kh++) {                            \
    long t = h + g.pad_top - kh * g.dil_rows;                              \
    if (t < 0 || (g.stride_rows != 1 && t % g.stride_rows != 0))           \
      continue;                                                            \
    long oh = g.stride_rows == 1 ? t : t / g.stride_rows;                  \
    if (oh >= g.out_rows)                                                  \
      continue;                                                            \
    for (long kw = 0; kw < g.filter_cols; kw++) {                          \
      long u = w + g.pad_left - kw * g.dil_cols;                           \
      if (u < 0 || (g.stride_cols != 1 && u % g.stride_cols != 0))         \
        continue;                                                          \
      long ow = g.stride_cols == 1 ? u : u / g.stride_cols;                \
      if (ow >= g.out_cols)                                                \
        continue;                                                          \
      long base = (oh * g.out_cols + ow) * col_sp +                        \
                  (kh * g.filter_cols + kw) * g.in_depth * col_sk;         \
      BODY                                                                 \
    }                                                                      \
  }

/* dx[n0 + nl, h, w, c0 .. c0 + 16) = the sum of the col entries whose
 * window tap reads (h, w). One work-item per (16 channels, pixel): with
 * NHWC's contiguous channels the sums are float16 vectors. col is float
 * (the GEMM's output), so taps are summed unrounded. */
__kernel void col2im(OCL_TENSOR_ARG(const float, col), OCL_TENSOR_ARG(T, dx),
                     conv_t g, long n0, long rows, long col_sn, long col_sp,
                     long col_sk)
{
  long cb = get_global_id(0);
  long r = get_global_id(1);
  OCL_GUARD(cb * 16, g.in_depth);
  OCL_GUARD(r, rows);
  long w = r % g.in_cols;
  long h = (r / g.in_cols) % g.in_rows;
  long nl = r / (g.in_cols * g.in_rows);
  long c0 = cb * 16;
  __global const float *src = OCL_PTR(const float, col) + nl * col_sn + c0 * col_sk;
  __global T *out = OCL_PTR(T, dx) + (n0 + nl) * g.in_sn + h * g.in_sh +
                    w * g.in_sw + c0 * g.in_sc;
#if defined(T_IS_HALF) || defined(T_IS_FLOAT)
  if (col_sk == 1 && g.in_sc == 1 && c0 + 16 <= g.in_depth) {
    float16 acc = 0.0f;
    COL2IM_TAPS(acc += vload16(0, src + base);)
#if defined(T_IS_HALF)
    vstore_half16_rte(acc, 0, out);
#else
    vstore16(acc, 0, out);
#endif
    return;
  }
#endif
  long n = min(16L, g.in_depth - c0);
  for (long c = 0; c < n; c++) {
    float acc = 0.0f;
    COL2IM_TAPS(acc += src[base + c * col_sk];)
    STORE(out, c * g.in_sc, acc);
  }
}

/* dst[i] = (float)src[i]: half operands of a float GEMM whose output must
 * not round to half before col2im sums it. */
__kernel void to_float(OCL_TENSOR_ARG(const T, src), OCL_TENSOR_ARG(float, dst),
                       long n)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  OCL_PTR(float, dst)[i] = LOAD(OCL_PTR(const T, src), i);
}

/* [N, C, P] -> [N, P, C] (out_backprop of an NCHW filter gradient). */
__kernel void nchw_to_nhwc(OCL_TENSOR_ARG(const T, src), OCL_TENSOR_ARG(T, dst),
                           long channels, long pixels, long rows)
{
  long c = get_global_id(0);
  long r = get_global_id(1);
  OCL_GUARD(c, channels);
  OCL_GUARD(r, rows);
  long n = r / pixels, p = r % pixels;
  STORE(OCL_PTR(T, dst), r * channels + c,
        LOAD(OCL_PTR(const T, src), (n * channels + c) * pixels + p));
}

/* ---- Depthwise ---------------------------------------------------------
 * filter [KH, KW, C, M]: output channel co = c * M + q reads input channel
 * c, so filter element (kh, kw, co) sits at (kh * KW + kw) * C * M + co. */

/* out[n, oh, ow, co]: one work-item per output element. */
__kernel void depthwise_forward(OCL_TENSOR_ARG(const T, in),
                                OCL_TENSOR_ARG(const T, filter),
                                OCL_TENSOR_ARG(T, out), conv_t g)
{
  long co = get_global_id(0);
  long r = get_global_id(1);
  long rows = g.batch * g.out_rows * g.out_cols;
  OCL_GUARD(co, g.out_depth);
  OCL_GUARD(r, rows);
  long ow = r % g.out_cols;
  long oh = (r / g.out_cols) % g.out_rows;
  long n = r / (g.out_cols * g.out_rows);
  long c = co / g.depth_multiplier;
  __global const T *x = OCL_PTR(const T, in) + n * g.in_sn + c * g.in_sc;
  __global const T *f = OCL_PTR(const T, filter) + co;
  float acc = 0.0f;
  for (long kh = 0; kh < g.filter_rows; kh++) {
    long h = oh * g.stride_rows - g.pad_top + kh * g.dil_rows;
    if (h < 0 || h >= g.in_rows)
      continue;
    for (long kw = 0; kw < g.filter_cols; kw++) {
      long w = ow * g.stride_cols - g.pad_left + kw * g.dil_cols;
      if (w < 0 || w >= g.in_cols)
        continue;
      acc = fma(LOAD(x, h * g.in_sh + w * g.in_sw),
                LOAD(f, (kh * g.filter_cols + kw) * g.out_depth), acc);
    }
  }
  STORE(OCL_PTR(T, out),
        n * g.out_sn + oh * g.out_sh + ow * g.out_sw + co * g.out_sc, acc);
}

/* dx[n, h, w, c]: the taps that reach (h, w), times every multiplier. */
__kernel void depthwise_backprop_input(OCL_TENSOR_ARG(const T, dout),
                                       OCL_TENSOR_ARG(const T, filter),
                                       OCL_TENSOR_ARG(T, dx), conv_t g)
{
  long c = get_global_id(0);
  long r = get_global_id(1);
  long rows = g.batch * g.in_rows * g.in_cols;
  OCL_GUARD(c, g.in_depth);
  OCL_GUARD(r, rows);
  long w = r % g.in_cols;
  long h = (r / g.in_cols) % g.in_rows;
  long n = r / (g.in_cols * g.in_rows);
  long m = g.depth_multiplier;
  __global const T *dy =
      OCL_PTR(const T, dout) + n * g.out_sn + c * m * g.out_sc;
  __global const T *f = OCL_PTR(const T, filter) + c * m;
  float acc = 0.0f;
  for (long kh = 0; kh < g.filter_rows; kh++) {
    long t = h + g.pad_top - kh * g.dil_rows;
    if (t < 0 || t % g.stride_rows != 0)
      continue;
    long oh = t / g.stride_rows;
    if (oh >= g.out_rows)
      continue;
    for (long kw = 0; kw < g.filter_cols; kw++) {
      long u = w + g.pad_left - kw * g.dil_cols;
      if (u < 0 || u % g.stride_cols != 0)
        continue;
      long ow = u / g.stride_cols;
      if (ow >= g.out_cols)
        continue;
      long o = oh * g.out_sh + ow * g.out_sw;
      long fo = (kh * g.filter_cols + kw) * g.out_depth;
      for (long q = 0; q < m; q++)
        acc = fma(LOAD(dy, o + q * g.out_sc), LOAD(f, fo + q), acc);
    }
  }
  STORE(OCL_PTR(T, dx), n * g.in_sn + h * g.in_sh + w * g.in_sw + c * g.in_sc,
        acc);
}

/* dfilter[kh, kw, co]: a sum over every image and output position. */
__kernel void depthwise_backprop_filter(OCL_TENSOR_ARG(const T, in),
                                        OCL_TENSOR_ARG(const T, dout),
                                        OCL_TENSOR_ARG(T, dfilter), conv_t g)
{
  long co = get_global_id(0);
  long tap = get_global_id(1);
  OCL_GUARD(co, g.out_depth);
  OCL_GUARD(tap, g.filter_rows * g.filter_cols);
  long kh = tap / g.filter_cols, kw = tap % g.filter_cols;
  long c = co / g.depth_multiplier;
  __global const T *x = OCL_PTR(const T, in) + c * g.in_sc;
  __global const T *dy = OCL_PTR(const T, dout) + co * g.out_sc;
  float acc = 0.0f;
  for (long n = 0; n < g.batch; n++) {
    for (long oh = 0; oh < g.out_rows; oh++) {
      long h = oh * g.stride_rows - g.pad_top + kh * g.dil_rows;
      if (h < 0 || h >= g.in_rows)
        continue;
      for (long ow = 0; ow < g.out_cols; ow++) {
        long w = ow * g.stride_cols - g.pad_left + kw * g.dil_cols;
        if (w < 0 || w >= g.in_cols)
          continue;
        acc = fma(LOAD(x, n * g.in_sn + h * g.in_sh + w * g.in_sw),
                  LOAD(dy, n * g.out_sn + oh * g.out_sh + ow * g.out_sw), acc);
      }
    }
  }
  STORE(OCL_PTR(T, dfilter), tap * g.out_depth + co, acc);
}
