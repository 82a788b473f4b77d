/* Image resizing: ResizeBilinear, ResizeNearestNeighbor and their
 * gradients, NHWC, with TensorFlow's align_corners / half_pixel_centers
 * coordinate rules (image_resizer_state.h) evaluated in float exactly as
 * TensorFlow's kernels write them: the same pixels are picked, the same
 * weights computed.
 *
 * Built per dtype (-DT_IS_FLOAT|T_IS_HALF|T_IS_BF16|T_IS_DOUBLE: values
 * computed in float, as TensorFlow's kernels do, double accumulating in
 * double) and, for the nearest-neighbour forward pass that only moves
 * elements, per element size (-DRAW=ushort|uint|ulong). -DI=int|long is
 * the index type: int whenever every tensor of the launch has fewer than
 * 2^31 elements.
 *
 * The gradients gather: each work-item owns one element of the original
 * image and sums, in the order TensorFlow's CPU kernel adds them, the
 * resized pixels that read it (their range found by binary search on the
 * same monotone coordinate maps). No atomics, so the sums are
 * deterministic.
 *
 * Two shapes: the GPU shape, a work-item per output element (channels
 * fastest: neighbouring work-items on neighbouring addresses), and the CPU
 * shape, a work-item per output row (the row's coordinates computed once). */
#include "common.clh"

/* TensorFlow evaluates (x + 0.5f) * scale - 0.5f and the lerps as written;
 * a fused multiply-add would pick other pixels at exact boundaries. */
#pragma OPENCL FP_CONTRACT OFF

typedef I idx_t;

/* struct resize_args of image.c, at the width of I. */
typedef struct {
  idx_t batch;
  idx_t in_h, in_w;   /* the input tensor's (grads for the gradients) */
  idx_t out_h, out_w; /* the output tensor's */
  idx_t channels;
  idx_t n;            /* work-items: elements (flat) or rows */
  float height_scale, width_scale;
  int half_pixel, align_corners;
} resize_t;

/* Nearest neighbour: the source coordinate of destination coordinate i
 * (TensorFlow's LegacyScaler or HalfPixelScalerForNN, floor or round,
 * clamped to [0, size)). */
static inline idx_t nn_source(idx_t i, float scale, idx_t size,
                              int half_pixel, int align_corners)
{
  float v = half_pixel ? ((float)i + 0.5f) * scale : (float)i * scale;
  idx_t j = align_corners ? (idx_t)round(v) : (idx_t)floor(v);
  j = min(j, size - 1);
  return half_pixel ? max(j, (idx_t)0) : j;
}

#ifdef RAW
/* ---- ResizeNearestNeighbor: elements moved as raw bytes ---------------- */

__kernel void nn_flat(OCL_TENSOR_ARG(const RAW, x), OCL_TENSOR_ARG(RAW, y),
                      resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t i = (idx_t)gid;
  idx_t c = i % s.channels, t = i / s.channels;
  idx_t ox = t % s.out_w;
  t /= s.out_w;
  idx_t oy = t % s.out_h, b = t / s.out_h;
  idx_t iy = nn_source(oy, s.height_scale, s.in_h, s.half_pixel,
                       s.align_corners);
  idx_t ix = nn_source(ox, s.width_scale, s.in_w, s.half_pixel,
                       s.align_corners);
  OCL_PTR(RAW, y)[i] =
      OCL_PTR(const RAW, x)[((b * s.in_h + iy) * s.in_w + ix) * s.channels + c];
}

__kernel void nn_rows(OCL_TENSOR_ARG(const RAW, x), OCL_TENSOR_ARG(RAW, y),
                      resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t row = (idx_t)gid;
  idx_t oy = row % s.out_h, b = row / s.out_h;
  idx_t iy = nn_source(oy, s.height_scale, s.in_h, s.half_pixel,
                       s.align_corners);
  __global const RAW *in = OCL_PTR(const RAW, x) + (b * s.in_h + iy) * s.in_w * s.channels;
  __global RAW *out = OCL_PTR(RAW, y) + row * s.out_w * s.channels;
  for (idx_t ox = 0; ox < s.out_w; ox++) {
    idx_t ix = nn_source(ox, s.width_scale, s.in_w, s.half_pixel,
                         s.align_corners);
    for (idx_t c = 0; c < s.channels; c++)
      out[ox * s.channels + c] = in[ix * s.channels + c];
  }
}

#else
/* ---- Typed kernels: values in float ------------------------------------ */

#if defined(T_IS_HALF)
typedef half S;
typedef float ACC;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((float)(v), (i), (p))
#define TO_ACC(v) (v)
#define LOAD_ACC(p, i) LOAD(p, i)
#elif defined(T_IS_BF16)
typedef ushort S;
typedef float ACC;
#define LOAD(p, i) ocl_bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = ocl_float_to_bf16((float)(v)))
#define TO_ACC(v) (v)
#define LOAD_ACC(p, i) LOAD(p, i)
#elif defined(T_IS_DOUBLE)
/* TensorFlow interpolates in float and accumulates gradients in double. */
typedef double S;
typedef double ACC;
#define LOAD(p, i) ((float)(p)[i])
#define STORE(p, i, v) ((p)[i] = (double)(v))
#define TO_ACC(v) ((double)(v))
#define LOAD_ACC(p, i) ((p)[i])
#else
typedef float S;
typedef float ACC;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (float)(v))
#define TO_ACC(v) (v)
#define LOAD_ACC(p, i) LOAD(p, i)
#endif

/* A resized coordinate's source position (LegacyScaler or
 * HalfPixelScaler) and its two taps and weight, as TensorFlow's
 * compute_interpolation_weights. */
typedef struct {
  idx_t lower, upper;
  float lerp;
} taps_t;

static inline taps_t bilinear_taps(idx_t i, float scale, idx_t size,
                                   int half_pixel)
{
  float in = half_pixel ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
  float in_f = floor(in);
  taps_t t;
  t.lower = max((idx_t)in_f, (idx_t)0);
  t.upper = min((idx_t)ceil(in), size - 1);
  t.lerp = in - in_f;
  return t;
}

static inline float lerp2(float tl, float tr, float bl, float br, float xl,
                          float yl)
{
  float top = tl + (tr - tl) * xl;
  float bottom = bl + (br - bl) * xl;
  return top + (bottom - top) * yl;
}

/* ResizeBilinear: images (T) to float. */
__kernel void bilinear_flat(OCL_TENSOR_ARG(const S, x),
                            OCL_TENSOR_ARG(float, y), resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t i = (idx_t)gid, C = s.channels;
  idx_t c = i % C, t = i / C;
  idx_t ox = t % s.out_w;
  t /= s.out_w;
  idx_t oy = t % s.out_h, b = t / s.out_h;
  taps_t ty = bilinear_taps(oy, s.height_scale, s.in_h, s.half_pixel);
  taps_t tx = bilinear_taps(ox, s.width_scale, s.in_w, s.half_pixel);
  __global const S *in = OCL_PTR(const S, x);
  idx_t top = (b * s.in_h + ty.lower) * s.in_w, bottom = (b * s.in_h + ty.upper) * s.in_w;
  OCL_PTR(float, y)[i] = lerp2(
      LOAD(in, (top + tx.lower) * C + c), LOAD(in, (top + tx.upper) * C + c),
      LOAD(in, (bottom + tx.lower) * C + c),
      LOAD(in, (bottom + tx.upper) * C + c), tx.lerp, ty.lerp);
}

__kernel void bilinear_rows(OCL_TENSOR_ARG(const S, x),
                            OCL_TENSOR_ARG(float, y), resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t row = (idx_t)gid, C = s.channels;
  idx_t oy = row % s.out_h, b = row / s.out_h;
  taps_t ty = bilinear_taps(oy, s.height_scale, s.in_h, s.half_pixel);
  __global const S *in = OCL_PTR(const S, x);
  __global float *out = OCL_PTR(float, y) + row * s.out_w * C;
  idx_t top = (b * s.in_h + ty.lower) * s.in_w, bottom = (b * s.in_h + ty.upper) * s.in_w;
  for (idx_t ox = 0; ox < s.out_w; ox++) {
    taps_t tx = bilinear_taps(ox, s.width_scale, s.in_w, s.half_pixel);
    idx_t tl = (top + tx.lower) * C, tr = (top + tx.upper) * C;
    idx_t bl = (bottom + tx.lower) * C, br = (bottom + tx.upper) * C;
    for (idx_t c = 0; c < C; c++)
      out[ox * C + c] = lerp2(LOAD(in, tl + c), LOAD(in, tr + c),
                              LOAD(in, bl + c), LOAD(in, br + c), tx.lerp,
                              ty.lerp);
  }
}

/* The resized coordinates [lo, hi) among [0, n) whose taps include
 * original coordinate o: the first whose upper tap reaches o, up to the
 * first whose lower tap passes it (both maps are monotone). */
static inline void bilinear_range(idx_t o, idx_t n, float scale, idx_t size,
                                  int half_pixel, idx_t *lo, idx_t *hi)
{
  idx_t a = 0, z = n;
  while (a < z) {
    idx_t mid = a + (z - a) / 2;
    if (bilinear_taps(mid, scale, size, half_pixel).upper >= o)
      z = mid;
    else
      a = mid + 1;
  }
  *lo = a;
  z = n;
  while (a < z) {
    idx_t mid = a + (z - a) / 2;
    if (bilinear_taps(mid, scale, size, half_pixel).lower > o)
      z = mid;
    else
      a = mid + 1;
  }
  *hi = a;
}

/* The gradient of original element (b, oy, ox, c): what TensorFlow's CPU
 * kernel adds into it, in its order (resized pixels in order, then top-left,
 * top-right, bottom-left, bottom-right), each term computed in float. */
static inline ACC bilinear_grad_sum(__global const float *g, resize_t s,
                                    idx_t b, idx_t oy, idx_t ox, idx_t c,
                                    idx_t y_lo, idx_t y_hi, idx_t x_lo,
                                    idx_t x_hi)
{
  ACC acc = 0;
  for (idx_t y = y_lo; y < y_hi; y++) {
    taps_t ty = bilinear_taps(y, s.height_scale, s.out_h, s.half_pixel);
    float inv_y = 1.0f - ty.lerp;
    __global const float *grow = g + (b * s.in_h + y) * s.in_w * s.channels + c;
    for (idx_t x = x_lo; x < x_hi; x++) {
      taps_t tx = bilinear_taps(x, s.width_scale, s.out_w, s.half_pixel);
      float inv_x = 1.0f - tx.lerp;
      float v = grow[x * s.channels];
      if (ty.lower == oy) {
        if (tx.lower == ox)
          acc += TO_ACC(v * inv_y * inv_x);
        if (tx.upper == ox)
          acc += TO_ACC(v * inv_y * tx.lerp);
      }
      if (ty.upper == oy) {
        if (tx.lower == ox)
          acc += TO_ACC(v * ty.lerp * inv_x);
        if (tx.upper == ox)
          acc += TO_ACC(v * ty.lerp * tx.lerp);
      }
    }
  }
  return acc;
}

/* ResizeBilinearGrad: grads (float, in_h x in_w) to the original image's
 * shape (T, out_h x out_w). */
__kernel void bilinear_grad_flat(OCL_TENSOR_ARG(const float, g),
                                 OCL_TENSOR_ARG(S, y), resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t i = (idx_t)gid, C = s.channels;
  idx_t c = i % C, t = i / C;
  idx_t ox = t % s.out_w;
  t /= s.out_w;
  idx_t oy = t % s.out_h, b = t / s.out_h;
  idx_t y_lo, y_hi, x_lo, x_hi;
  bilinear_range(oy, s.in_h, s.height_scale, s.out_h, s.half_pixel, &y_lo,
                 &y_hi);
  bilinear_range(ox, s.in_w, s.width_scale, s.out_w, s.half_pixel, &x_lo,
                 &x_hi);
  STORE(OCL_PTR(S, y), i,
        bilinear_grad_sum(OCL_PTR(const float, g), s, b, oy, ox, c, y_lo,
                          y_hi, x_lo, x_hi));
}

/* CPU shape: a work-item per row of the original image; the channels of a
 * pixel in blocks of CHUNK, so that each resized pixel's taps are computed
 * once per block and its gradients read contiguously. */
#define CHUNK 16
__kernel void bilinear_grad_rows(OCL_TENSOR_ARG(const float, g),
                                 OCL_TENSOR_ARG(S, y), resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t row = (idx_t)gid, C = s.channels;
  idx_t oy = row % s.out_h, b = row / s.out_h;
  idx_t y_lo, y_hi, x_lo, x_hi;
  bilinear_range(oy, s.in_h, s.height_scale, s.out_h, s.half_pixel, &y_lo,
                 &y_hi);
  __global const float *grads = OCL_PTR(const float, g);
  __global S *out = OCL_PTR(S, y);
  for (idx_t ox = 0; ox < s.out_w; ox++) {
    bilinear_range(ox, s.in_w, s.width_scale, s.out_w, s.half_pixel, &x_lo,
                   &x_hi);
    for (idx_t c0 = 0; c0 < C; c0 += CHUNK) {
      idx_t nc = min((idx_t)CHUNK, C - c0);
      ACC acc[CHUNK];
      for (idx_t k = 0; k < CHUNK; k++)
        acc[k] = 0;
      for (idx_t yy = y_lo; yy < y_hi; yy++) {
        taps_t ty = bilinear_taps(yy, s.height_scale, s.out_h, s.half_pixel);
        float inv_y = 1.0f - ty.lerp;
        __global const float *grow =
            grads + (b * s.in_h + yy) * s.in_w * C + c0;
        for (idx_t xx = x_lo; xx < x_hi; xx++) {
          taps_t tx = bilinear_taps(xx, s.width_scale, s.out_w, s.half_pixel);
          float inv_x = 1.0f - tx.lerp;
          __global const float *gp = grow + xx * C;
          /* The terms in the CPU kernel's order, each in float. */
          for (idx_t k = 0; k < nc; k++) {
            float v = gp[k];
            if (ty.lower == oy) {
              if (tx.lower == ox)
                acc[k] += TO_ACC(v * inv_y * inv_x);
              if (tx.upper == ox)
                acc[k] += TO_ACC(v * inv_y * tx.lerp);
            }
            if (ty.upper == oy) {
              if (tx.lower == ox)
                acc[k] += TO_ACC(v * ty.lerp * inv_x);
              if (tx.upper == ox)
                acc[k] += TO_ACC(v * ty.lerp * tx.lerp);
            }
          }
        }
      }
      for (idx_t k = 0; k < nc; k++)
        STORE(out, (row * s.out_w + ox) * C + c0 + k, acc[k]);
    }
  }
}

/* The resized coordinates [lo, hi) among [0, n) that nearest-neighbour
 * resizing maps to original coordinate o. */
static inline void nn_range(idx_t o, idx_t n, float scale, idx_t size,
                            int half_pixel, int align_corners, idx_t *lo,
                            idx_t *hi)
{
  idx_t a = 0, z = n;
  while (a < z) {
    idx_t mid = a + (z - a) / 2;
    if (nn_source(mid, scale, size, half_pixel, align_corners) >= o)
      z = mid;
    else
      a = mid + 1;
  }
  *lo = a;
  z = n;
  while (a < z) {
    idx_t mid = a + (z - a) / 2;
    if (nn_source(mid, scale, size, half_pixel, align_corners) > o)
      z = mid;
    else
      a = mid + 1;
  }
  *hi = a;
}

static inline ACC nn_grad_sum(__global const S *g, resize_t s, idx_t b,
                              idx_t c, idx_t y_lo, idx_t y_hi, idx_t x_lo,
                              idx_t x_hi)
{
  ACC acc = 0;
  for (idx_t y = y_lo; y < y_hi; y++) {
    idx_t row = (b * s.in_h + y) * s.in_w;
    for (idx_t x = x_lo; x < x_hi; x++)
      acc += LOAD_ACC(g, (row + x) * s.channels + c);
  }
  return acc;
}

/* ResizeNearestNeighborGrad: grads (T, in_h x in_w) to the original size
 * (out_h x out_w). */
__kernel void nn_grad_flat(OCL_TENSOR_ARG(const S, g), OCL_TENSOR_ARG(S, y),
                           resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t i = (idx_t)gid, C = s.channels;
  idx_t c = i % C, t = i / C;
  idx_t ox = t % s.out_w;
  t /= s.out_w;
  idx_t oy = t % s.out_h, b = t / s.out_h;
  idx_t y_lo, y_hi, x_lo, x_hi;
  nn_range(oy, s.in_h, s.height_scale, s.out_h, s.half_pixel,
           s.align_corners, &y_lo, &y_hi);
  nn_range(ox, s.in_w, s.width_scale, s.out_w, s.half_pixel, s.align_corners,
           &x_lo, &x_hi);
  STORE(OCL_PTR(S, y), i,
        nn_grad_sum(OCL_PTR(const S, g), s, b, c, y_lo, y_hi, x_lo, x_hi));
}

/* CPU shape: a work-item per row of the original image, channels in
 * blocks of CHUNK (each window's gradients read contiguously). */
__kernel void nn_grad_rows(OCL_TENSOR_ARG(const S, g), OCL_TENSOR_ARG(S, y),
                           resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t row = (idx_t)gid, C = s.channels;
  idx_t oy = row % s.out_h, b = row / s.out_h;
  idx_t y_lo, y_hi, x_lo, x_hi;
  nn_range(oy, s.in_h, s.height_scale, s.out_h, s.half_pixel,
           s.align_corners, &y_lo, &y_hi);
  __global const S *grads = OCL_PTR(const S, g);
  __global S *out = OCL_PTR(S, y);
  for (idx_t ox = 0; ox < s.out_w; ox++) {
    nn_range(ox, s.in_w, s.width_scale, s.out_w, s.half_pixel,
             s.align_corners, &x_lo, &x_hi);
    for (idx_t c0 = 0; c0 < C; c0 += CHUNK) {
      idx_t nc = min((idx_t)CHUNK, C - c0);
      ACC acc[CHUNK];
      for (idx_t k = 0; k < CHUNK; k++)
        acc[k] = 0;
      for (idx_t yy = y_lo; yy < y_hi; yy++) {
        idx_t base = ((b * s.in_h + yy) * s.in_w) * C + c0;
        for (idx_t xx = x_lo; xx < x_hi; xx++)
          for (idx_t k = 0; k < nc; k++)
            acc[k] += LOAD_ACC(grads, base + xx * C + k);
      }
      for (idx_t k = 0; k < nc; k++)
        STORE(out, (row * s.out_w + ox) * C + c0 + k, acc[k]);
    }
  }
}

#endif /* RAW */
