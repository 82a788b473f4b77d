/* Image ops (the list in image.c). Resizing: ResizeBilinear,
 * ResizeNearestNeighbor and their gradients, NHWC, with TensorFlow's align_corners / half_pixel_centers
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
 * same monotone coordinate maps). The CPU shapes of ResizeBicubicGrad,
 * CropAndResizeGradImage and ResizeBilinearGrad (float, double) instead
 * give a work-item a row of the output that it alone clears and adds into.
 * No atomics, so the sums are deterministic.
 *
 * Two shapes: the GPU shape, a work-item per output element (channels
 * fastest: neighbouring work-items on neighbouring addresses), and the CPU
 * shape, a work-item per output row (the row's coordinates computed once;
 * ResizeBilinear a block of rows, ResizeBilinearGrad of float and double a
 * row that it clears and adds into). */
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
#define STORE(p, i, v) OCL_STORE_HALF(p, i, (float)(v))
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

/* Float and half pixels load as vectors: the CPU shapes take a pixel's
 * channels W at a time where W divides them (a loop of 8 channels or
 * fewer stays scalar in a vectoriser that wants 16 lanes: ResizeBilinear
 * of 8 channels ran at 0.4x TensorFlow's CPU kernel). */
#if defined(T_IS_FLOAT)
#define PIXEL_VECTORS 1
#define LOADV(W, p) vload##W(0, p)
#elif defined(T_IS_HALF)
#define PIXEL_VECTORS 1
#define LOADV(W, p) vload_half##W(0, p)
#endif

#ifdef PIXEL_VECTORS
/* lerp2 lane by lane: the same operations in the same order. */
#define LERP2_VECTOR(W)                                                      \
  static inline float##W lerp2_##W(float##W tl, float##W tr, float##W bl,   \
                                   float##W br, float xl, float yl)          \
  {                                                                          \
    float##W top = tl + (tr - tl) * xl;                                      \
    float##W bottom = bl + (br - bl) * xl;                                   \
    return top + (bottom - top) * yl;                                        \
  }
LERP2_VECTOR(3)
LERP2_VECTOR(4)
LERP2_VECTOR(8)

/* Output pixel o's C channels (C % W == 0) from the four taps' offsets. */
#define BILINEAR_PIXEL(W)                                                    \
  for (idx_t c = 0; c < C; c += W)                                           \
    vstore##W(lerp2_##W(LOADV(W, in + tl + c), LOADV(W, in + tr + c),        \
                        LOADV(W, in + bl + c), LOADV(W, in + br + c),        \
                        tx.lerp, ylerp[r]),                                  \
              0, o + c);
#endif

/* nrows output rows from `out` on, rows of taps top/bottom (element
 * offsets) and weights ylerp. */
static inline void bilinear_row_block(__global const S *in,
                                      __global float *out, resize_t s,
                                      idx_t C, int nrows, const idx_t *top,
                                      const idx_t *bottom, const float *ylerp)
{
  for (idx_t ox = 0; ox < s.out_w; ox++) {
    taps_t tx = bilinear_taps(ox, s.width_scale, s.in_w, s.half_pixel);
    idx_t left = tx.lower * C, right = tx.upper * C;
    for (int r = 0; r < nrows; r++) {
      idx_t tl = top[r] + left, tr = top[r] + right;
      idx_t bl = bottom[r] + left, br = bottom[r] + right;
      __global float *o = out + (r * s.out_w + ox) * C;
#ifdef PIXEL_VECTORS
      if (C % 8 == 0) {
        BILINEAR_PIXEL(8)
        continue;
      }
      if (C % 4 == 0) {
        BILINEAR_PIXEL(4)
        continue;
      }
      if (C == 3) {
        BILINEAR_PIXEL(3)
        continue;
      }
#endif
      for (idx_t c = 0; c < C; c++)
        o[c] = lerp2(LOAD(in, tl + c), LOAD(in, tr + c), LOAD(in, bl + c),
                     LOAD(in, br + c), tx.lerp, ylerp[r]);
    }
  }
}

/* CPU shape: a work-item per block of output rows of one image (s.n /
 * s.batch blocks per image, image.c's choice), its pixels' column taps
 * computed once for BILINEAR_ROWS rows at a time (a work-item per row
 * spent more on the taps than on the lerps). */
#define BILINEAR_ROWS 4
__kernel void bilinear_rows(OCL_TENSOR_ARG(const S, x),
                            OCL_TENSOR_ARG(float, y), resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t C = s.channels;
  idx_t blocks = s.n / s.batch;
  idx_t b = (idx_t)gid / blocks;
  idx_t per_block = (s.out_h + blocks - 1) / blocks;
  idx_t begin = ((idx_t)gid - b * blocks) * per_block;
  idx_t end = min(begin + per_block, s.out_h);
  __global const S *in = OCL_PTR(const S, x);
  for (idx_t oy0 = begin; oy0 < end; oy0 += BILINEAR_ROWS) {
    int nrows = (int)min((idx_t)BILINEAR_ROWS, end - oy0);
    __global float *out =
        OCL_PTR(float, y) + (b * s.out_h + oy0) * s.out_w * C;
    idx_t top[BILINEAR_ROWS], bottom[BILINEAR_ROWS];
    float ylerp[BILINEAR_ROWS];
    for (int r = 0; r < nrows; r++) {
      taps_t ty =
          bilinear_taps(oy0 + r, s.height_scale, s.in_h, s.half_pixel);
      top[r] = (b * s.in_h + ty.lower) * s.in_w * C;
      bottom[r] = (b * s.in_h + ty.upper) * s.in_w * C;
      ylerp[r] = ty.lerp;
    }
    bilinear_row_block(in, out, s, C, nrows, top, bottom, ylerp);
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

/* Resized pixel value v's four terms in TensorFlow's order (top-left,
 * top-right, bottom-left, bottom-right), each computed in float, given to
 * LEFT (the left tap's) and RIGHT where row tap ty reaches original row
 * oy. */
#define BILINEAR_GRAD_TERMS(v, LEFT, RIGHT)                                  \
  if (ty.lower == oy) {                                                      \
    LEFT((v) * inv_y * inv_x);                                               \
    RIGHT((v) * inv_y * tx.lerp);                                            \
  }                                                                          \
  if (ty.upper == oy) {                                                      \
    LEFT((v) * ty.lerp * inv_x);                                             \
    RIGHT((v) * ty.lerp * tx.lerp);                                          \
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
#define GATHER_LEFT(t) \
  if (tx.lower == ox)  \
    acc += TO_ACC(t);
#define GATHER_RIGHT(t) \
  if (tx.upper == ox)   \
    acc += TO_ACC(t);
      BILINEAR_GRAD_TERMS(v, GATHER_LEFT, GATHER_RIGHT)
#undef GATHER_LEFT
#undef GATHER_RIGHT
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

/* CPU shape: a work-item per row of the original image.
 *
 * Where the output holds what the sums accumulate in (float, double), the
 * row is cleared, then every resized pixel of the rows that read it adds
 * its terms into the pixels its taps name, resized pixels in order, each
 * in the CPU kernel's order: every output element sees the same additions
 * in the same order as TensorFlow's scatter, with no search per pixel (the
 * gather below ran ResizeBilinearGrad of 8 channels at 0.6x TensorFlow's
 * CPU kernel, of 3 at 0.3x). A pixel's channels go 8 at a time where 8
 * divides them (float).
 *
 * Half and bfloat16 sum in float, so each output element is a gather: the
 * channels of a pixel in blocks of CHUNK, so that each resized pixel's
 * taps are computed once per block and its gradients read contiguously. */
#define CHUNK 16
__kernel void bilinear_grad_rows(OCL_TENSOR_ARG(const float, g),
                                 OCL_TENSOR_ARG(S, y), resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t row = (idx_t)gid, C = s.channels;
  idx_t oy = row % s.out_h, b = row / s.out_h;
  idx_t y_lo, y_hi;
  bilinear_range(oy, s.in_h, s.height_scale, s.out_h, s.half_pixel, &y_lo,
                 &y_hi);
#if defined(T_IS_FLOAT) || defined(T_IS_DOUBLE)
  __global ACC *row_out = OCL_PTR(S, y) + row * s.out_w * C;
  for (idx_t i = 0; i < s.out_w * C; i++)
    row_out[i] = 0;
  for (idx_t yy = y_lo; yy < y_hi; yy++) {
    taps_t ty = bilinear_taps(yy, s.height_scale, s.out_h, s.half_pixel);
    float inv_y = 1.0f - ty.lerp;
    __global const float *grow =
        OCL_PTR(const float, g) + (b * s.in_h + yy) * s.in_w * C;
    for (idx_t xx = 0; xx < s.in_w; xx++) {
      taps_t tx = bilinear_taps(xx, s.width_scale, s.out_w, s.half_pixel);
      float inv_x = 1.0f - tx.lerp;
      __global const float *gp = grow + xx * C;
#if defined(T_IS_FLOAT)
      if (C % 8 == 0) {
        for (idx_t c = 0; c < C; c += 8) {
          float8 v = vload8(0, gp + c);
          __global float *lo = row_out + tx.lower * C + c;
          __global float *hi = row_out + tx.upper * C + c;
#define ADD8_LO(t) vstore8(vload8(0, lo) + (t), 0, lo);
#define ADD8_HI(t) vstore8(vload8(0, hi) + (t), 0, hi);
          BILINEAR_GRAD_TERMS(v, ADD8_LO, ADD8_HI)
#undef ADD8_LO
#undef ADD8_HI
        }
        continue;
      }
#endif
      for (idx_t c = 0; c < C; c++) {
        float v = gp[c];
        __global ACC *lo = row_out + tx.lower * C + c;
        __global ACC *hi = row_out + tx.upper * C + c;
#define ADD_LO(t) *lo += TO_ACC(t);
#define ADD_HI(t) *hi += TO_ACC(t);
        BILINEAR_GRAD_TERMS(v, ADD_LO, ADD_HI)
#undef ADD_LO
#undef ADD_HI
      }
    }
  }
#else
  idx_t x_lo, x_hi;
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
#define GATHER_LEFT(t) \
  if (tx.lower == ox)  \
    acc[k] += TO_ACC(t);
#define GATHER_RIGHT(t) \
  if (tx.upper == ox)   \
    acc[k] += TO_ACC(t);
            BILINEAR_GRAD_TERMS(v, GATHER_LEFT, GATHER_RIGHT)
#undef GATHER_LEFT
#undef GATHER_RIGHT
          }
        }
      }
      for (idx_t k = 0; k < nc; k++)
        STORE(out, (row * s.out_w + ox) * C + c0 + k, acc[k]);
    }
  }
#endif
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

/* ======================================================================== */
/* The second half of the family: ResizeBicubic and its gradient,
 * CropAndResize and its two gradients, ExtractImagePatches, the colour
 * space conversions and the contrast, saturation and hue adjustments. Their
 * arguments are passed as 64-bit sizes (one struct per op) and narrowed to
 * idx_t in the kernel, so one host struct serves both index widths. */

#ifdef RAW
/* ---- ExtractImagePatches: elements moved as raw bytes ------------------ */

typedef struct {
  long batch, in_h, in_w, depth;
  long out_h, out_w;
  long k_rows, k_cols, stride_rows, stride_cols, rate_rows, rate_cols;
  long pad_top, pad_left;
  long n; /* work-items: output elements (flat) or output pixels (rows) */
} patches_t;

/* Output pixel (b, oy, ox): its ksize_rows x ksize_cols x depth patch,
 * zeros where the window leaves the image. */
static inline void patch_pixel(__global const RAW *in, __global RAW *out,
                               patches_t s, idx_t pixel)
{
  idx_t ox = pixel % (idx_t)s.out_w, t = pixel / (idx_t)s.out_w;
  idx_t oy = t % (idx_t)s.out_h, b = t / (idx_t)s.out_h;
  idx_t D = (idx_t)s.depth;
  __global RAW *o = out + pixel * (idx_t)s.k_rows * (idx_t)s.k_cols * D;
  for (idx_t r = 0; r < (idx_t)s.k_rows; r++) {
    idx_t iy = oy * (idx_t)s.stride_rows - (idx_t)s.pad_top + r * (idx_t)s.rate_rows;
    for (idx_t c = 0; c < (idx_t)s.k_cols; c++, o += D) {
      idx_t ix = ox * (idx_t)s.stride_cols - (idx_t)s.pad_left + c * (idx_t)s.rate_cols;
      bool inside = iy >= 0 && iy < (idx_t)s.in_h && ix >= 0 && ix < (idx_t)s.in_w;
      __global const RAW *src = in + ((b * (idx_t)s.in_h + iy) * (idx_t)s.in_w + ix) * D;
      for (idx_t d = 0; d < D; d++)
        o[d] = inside ? src[d] : (RAW)0;
    }
  }
}

/* GPU shape: a work-item per output element (the patch's depth fastest). */
__kernel void patches_flat(OCL_TENSOR_ARG(const RAW, x), OCL_TENSOR_ARG(RAW, y),
                           patches_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t i = (idx_t)gid, D = (idx_t)s.depth;
  idx_t d = i % D, t = i / D;
  idx_t c = t % (idx_t)s.k_cols;
  t /= (idx_t)s.k_cols;
  idx_t r = t % (idx_t)s.k_rows, pixel = t / (idx_t)s.k_rows;
  idx_t ox = pixel % (idx_t)s.out_w;
  t = pixel / (idx_t)s.out_w;
  idx_t oy = t % (idx_t)s.out_h, b = t / (idx_t)s.out_h;
  idx_t iy = oy * (idx_t)s.stride_rows - (idx_t)s.pad_top + r * (idx_t)s.rate_rows;
  idx_t ix = ox * (idx_t)s.stride_cols - (idx_t)s.pad_left + c * (idx_t)s.rate_cols;
  bool inside = iy >= 0 && iy < (idx_t)s.in_h && ix >= 0 && ix < (idx_t)s.in_w;
  OCL_PTR(RAW, y)[i] =
      inside ? OCL_PTR(const RAW, x)[((b * (idx_t)s.in_h + iy) * (idx_t)s.in_w + ix) * D + d]
             : (RAW)0;
}

/* CPU shape: a work-item per output pixel, its patch copied row by row. */
__kernel void patches_rows(OCL_TENSOR_ARG(const RAW, x), OCL_TENSOR_ARG(RAW, y),
                           patches_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  patch_pixel(OCL_PTR(const RAW, x), OCL_PTR(RAW, y), s, (idx_t)gid);
}

#else /* typed kernels */

/* ---- ResizeBicubic, ResizeBicubicGrad ---------------------------------- */

/* TensorFlow's coefficient table (kTableSize = 1024 entries of the cubic
 * convolution kernel with A = -0.75, or Keys' A = -0.5 with
 * half_pixel_centers), evaluated at the same sample points. TensorFlow
 * evaluates the polynomials in double and rounds to float; without fp64
 * they are evaluated here in float: the weights agree to a few ulps. */
#define CUBIC_TABLE 1024
static inline float cubic_near(int i, float a)
{
  float x = (float)i / (float)CUBIC_TABLE;
  return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
}
static inline float cubic_far(int i, float a)
{
  float x = (float)i / (float)CUBIC_TABLE + 1.0f;
  return ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a;
}

/* The four taps and weights of resized coordinate i (TensorFlow's
 * GetWeightsAndIndices: the legacy scaler with A = -0.75, or the half-pixel
 * scaler with Keys' kernel, out-of-image taps weighted 0 and the rest
 * renormalised). */
typedef struct {
  idx_t index[4];
  float weight[4];
} cubic_t;

static inline idx_t cubic_base(idx_t i, float scale, int keys)
{
  float in = keys ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
  return (idx_t)floor(in);
}

static inline cubic_t cubic_taps(idx_t i, float scale, idx_t limit, int keys)
{
  float in = keys ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
  float in_floor = floor(in);
  idx_t base = (idx_t)in_floor;
  int offset = (int)rint((in - in_floor) * (float)CUBIC_TABLE);
  float a = keys ? -0.5f : -0.75f;
  cubic_t t;
  t.weight[0] = cubic_far(offset, a);
  t.weight[1] = cubic_near(offset, a);
  t.weight[2] = cubic_near(CUBIC_TABLE - offset, a);
  t.weight[3] = cubic_far(CUBIC_TABLE - offset, a);
  for (int k = 0; k < 4; k++) {
    idx_t want = base - 1 + k;
    t.index[k] = min(limit - 1, max((idx_t)0, want));
    if (keys && t.index[k] != want)
      t.weight[k] = 0.0f;
  }
  if (keys) {
    float sum = t.weight[0] + t.weight[1] + t.weight[2] + t.weight[3];
    if (fabs(sum) >= 1000.0f * FLT_MIN) {
      float inv = 1.0f / sum;
      for (int k = 0; k < 4; k++)
        t.weight[k] *= inv;
    }
  }
  return t;
}

/* One output element: each of the four columns interpolated down the rows,
 * then across, in TensorFlow's order of float operations. */
static inline float bicubic_value(__global const S *in, idx_t C, idx_t in_w,
                                  idx_t batch_base, cubic_t ty, cubic_t tx,
                                  idx_t c)
{
  float col[4];
  for (int j = 0; j < 4; j++) {
    idx_t xo = tx.index[j] * C + c;
    float v0 = LOAD(in, (batch_base + ty.index[0]) * in_w * C + xo);
    float v1 = LOAD(in, (batch_base + ty.index[1]) * in_w * C + xo);
    float v2 = LOAD(in, (batch_base + ty.index[2]) * in_w * C + xo);
    float v3 = LOAD(in, (batch_base + ty.index[3]) * in_w * C + xo);
    col[j] = v0 * ty.weight[0] + v1 * ty.weight[1] + v2 * ty.weight[2] +
             v3 * ty.weight[3];
  }
  return col[0] * tx.weight[0] + col[1] * tx.weight[1] +
         col[2] * tx.weight[2] + col[3] * tx.weight[3];
}

__kernel void bicubic_flat(OCL_TENSOR_ARG(const S, x), OCL_TENSOR_ARG(float, y),
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
  cubic_t ty = cubic_taps(oy, s.height_scale, s.in_h, s.half_pixel);
  cubic_t tx = cubic_taps(ox, s.width_scale, s.in_w, s.half_pixel);
  OCL_PTR(float, y)[i] =
      bicubic_value(OCL_PTR(const S, x), C, s.in_w, b * s.in_h, ty, tx, c);
}

__kernel void bicubic_rows(OCL_TENSOR_ARG(const S, x), OCL_TENSOR_ARG(float, y),
                           resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t row = (idx_t)gid, C = s.channels;
  idx_t oy = row % s.out_h, b = row / s.out_h;
  cubic_t ty = cubic_taps(oy, s.height_scale, s.in_h, s.half_pixel);
  __global float *out = OCL_PTR(float, y) + row * s.out_w * C;
  /* The four input rows once per output row, the four columns once per
   * output pixel; the channels innermost, contiguous. */
  __global const S *in = OCL_PTR(const S, x);
  idx_t r0 = (b * s.in_h + ty.index[0]) * s.in_w * C;
  idx_t r1 = (b * s.in_h + ty.index[1]) * s.in_w * C;
  idx_t r2 = (b * s.in_h + ty.index[2]) * s.in_w * C;
  idx_t r3 = (b * s.in_h + ty.index[3]) * s.in_w * C;
  for (idx_t ox = 0; ox < s.out_w; ox++) {
    cubic_t tx = cubic_taps(ox, s.width_scale, s.in_w, s.half_pixel);
    for (idx_t c = 0; c < C; c++) {
      float col[4];
      for (int j = 0; j < 4; j++) {
        idx_t xo = tx.index[j] * C + c;
        col[j] = LOAD(in, r0 + xo) * ty.weight[0] +
                 LOAD(in, r1 + xo) * ty.weight[1] +
                 LOAD(in, r2 + xo) * ty.weight[2] +
                 LOAD(in, r3 + xo) * ty.weight[3];
      }
      out[ox * C + c] = col[0] * tx.weight[0] + col[1] * tx.weight[1] +
                        col[2] * tx.weight[2] + col[3] * tx.weight[3];
    }
  }
}

/* The resized coordinates [lo, hi) among [0, n) whose four taps may include
 * original coordinate o: clamp(base - 1) <= o <= clamp(base + 2), both
 * monotone in the resized coordinate. */
static inline void cubic_range(idx_t o, idx_t n, float scale, idx_t size,
                               int keys, idx_t *lo, idx_t *hi)
{
  idx_t a = 0, z = n;
  while (a < z) {
    idx_t mid = a + (z - a) / 2;
    if (min(size - 1, max((idx_t)0, cubic_base(mid, scale, keys) + 2)) >= o)
      z = mid;
    else
      a = mid + 1;
  }
  *lo = a;
  z = n;
  while (a < z) {
    idx_t mid = a + (z - a) / 2;
    if (min(size - 1, max((idx_t)0, cubic_base(mid, scale, keys) - 1)) > o)
      z = mid;
    else
      a = mid + 1;
  }
  *hi = a;
}

/* The gradient of original element (b, oy, ox, c): the terms TensorFlow's
 * kernel scatters into it, in its order (resized pixels in order, then the
 * sixteen taps row by row), each g * wy * wx in the dtype as TensorFlow
 * computes it. */
static inline ACC bicubic_grad_sum(__global const float *g, resize_t s,
                                   idx_t b, idx_t oy, idx_t ox, idx_t c,
                                   idx_t y_lo, idx_t y_hi, idx_t x_lo,
                                   idx_t x_hi)
{
  ACC acc = 0;
  for (idx_t y = y_lo; y < y_hi; y++) {
    cubic_t ty = cubic_taps(y, s.height_scale, s.out_h, s.half_pixel);
    __global const float *grow = g + (b * s.in_h + y) * s.in_w * s.channels + c;
    for (idx_t x = x_lo; x < x_hi; x++) {
      cubic_t tx = cubic_taps(x, s.width_scale, s.out_w, s.half_pixel);
      ACC v = TO_ACC(grow[x * s.channels]);
      for (int k = 0; k < 4; k++) {
        if (ty.index[k] != oy)
          continue;
        for (int j = 0; j < 4; j++)
          if (tx.index[j] == ox)
            acc += v * TO_ACC(ty.weight[k]) * TO_ACC(tx.weight[j]);
      }
    }
  }
  return acc;
}

/* ResizeBicubicGrad: grads (float, in_h x in_w) to the original image's
 * shape (T, out_h x out_w), gathered per original element. */
__kernel void bicubic_grad_flat(OCL_TENSOR_ARG(const float, g),
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
  cubic_range(oy, s.in_h, s.height_scale, s.out_h, s.half_pixel, &y_lo, &y_hi);
  cubic_range(ox, s.in_w, s.width_scale, s.out_w, s.half_pixel, &x_lo, &x_hi);
  STORE(OCL_PTR(S, y), i,
        bicubic_grad_sum(OCL_PTR(const float, g), s, b, oy, ox, c, y_lo, y_hi,
                         x_lo, x_hi));
}

/* CPU shape: a work-item per row of the original image, which it owns: it
 * clears the row, then adds into it what each resized row that reads it
 * contributes, pixel by pixel, in TensorFlow's order (resized pixels in
 * order, then the taps row by row). The taps of a resized pixel are
 * computed once for all its channels. */
__kernel void bicubic_grad_rows(OCL_TENSOR_ARG(const float, g),
                                OCL_TENSOR_ARG(S, y), resize_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t row = (idx_t)gid, C = s.channels;
  idx_t oy = row % s.out_h, b = row / s.out_h;
  idx_t y_lo, y_hi;
  cubic_range(oy, s.in_h, s.height_scale, s.out_h, s.half_pixel, &y_lo, &y_hi);
  __global S *out = OCL_PTR(S, y) + row * s.out_w * C;
  for (idx_t i = 0; i < s.out_w * C; i++)
    STORE(out, i, (ACC)0);
  for (idx_t yy = y_lo; yy < y_hi; yy++) {
    cubic_t ty = cubic_taps(yy, s.height_scale, s.out_h, s.half_pixel);
    __global const float *grow =
        OCL_PTR(const float, g) + (b * s.in_h + yy) * s.in_w * C;
    for (idx_t xx = 0; xx < s.in_w; xx++) {
      cubic_t tx = cubic_taps(xx, s.width_scale, s.out_w, s.half_pixel);
      for (int k = 0; k < 4; k++) {
        if (ty.index[k] != oy)
          continue;
        for (int j = 0; j < 4; j++) {
          __global S *o = out + tx.index[j] * C;
          ACC w = TO_ACC(ty.weight[k]);
          ACC wx = TO_ACC(tx.weight[j]);
          for (idx_t c = 0; c < C; c++)
            STORE(o, c, LOAD_ACC(o, c) + TO_ACC(grow[xx * C + c]) * w * wx);
        }
      }
    }
  }
}

/* ---- CropAndResize and its gradients ------------------------------------ */

typedef struct {
  long num_boxes, batch, image_h, image_w, depth, crop_h, crop_w;
  long n; /* work-items */
  float extrapolation;
  int nearest;
} crop_t;

/* A box's sampling along one axis, as TensorFlow's kernels compute it in
 * float: coordinate t of the crop samples start + t * scale of the image,
 * or the box's centre when the crop has one sample. */
typedef struct {
  float start, scale, centre;
  idx_t samples, size;
} axis_t;

static inline axis_t crop_axis(float lo, float hi, idx_t size, idx_t samples)
{
  axis_t a;
  float last = (float)(size - 1);
  a.scale = samples > 1 ? (hi - lo) * last / (float)(samples - 1) : 0.0f;
  a.start = lo * last;
  /* TensorFlow evaluates 0.5 * (lo + hi) * (size - 1) in double and rounds
   * it to float. Without fp64: the float sum and product with their exact
   * rounding errors (TwoSum, an fma), so that the result is that value
   * rounded once, as good as the double one but for ties. */
  float sum = lo + hi, hi_part = sum - lo;
  float sum_err = (lo - (sum - hi_part)) + (hi - hi_part);
  float product = sum * last;
  float product_err = fma(sum, last, -product);
  a.centre = 0.5f * (product + (product_err + sum_err * last));
  a.samples = samples;
  a.size = size;
  return a;
}

static inline float crop_coord(axis_t a, idx_t t)
{
  return a.samples > 1 ? a.start + (float)t * a.scale : a.centre;
}

static inline bool crop_inside(axis_t a, float v)
{
  return v >= 0.0f && v <= (float)(a.size - 1);
}

/* One crop element: bilinear or nearest, extrapolation_value outside. */
static inline float crop_value(__global const S *img, crop_t s, idx_t b_in,
                               axis_t ay, axis_t ax, idx_t y, idx_t x,
                               idx_t d)
{
  float in_y = crop_coord(ay, y), in_x = crop_coord(ax, x);
  if (!crop_inside(ay, in_y) || !crop_inside(ax, in_x))
    return s.extrapolation;
  idx_t W = (idx_t)s.image_w, D = (idx_t)s.depth;
  idx_t base = b_in * (idx_t)s.image_h;
  if (s.nearest) {
    idx_t cy = (idx_t)round(in_y), cx = (idx_t)round(in_x);
    return LOAD(img, ((base + cy) * W + cx) * D + d);
  }
  idx_t top = (idx_t)floor(in_y), bottom = (idx_t)ceil(in_y);
  idx_t left = (idx_t)floor(in_x), right = (idx_t)ceil(in_x);
  float yl = in_y - (float)top, xl = in_x - (float)left;
  float tl = LOAD(img, ((base + top) * W + left) * D + d);
  float tr = LOAD(img, ((base + top) * W + right) * D + d);
  float bl = LOAD(img, ((base + bottom) * W + left) * D + d);
  float br = LOAD(img, ((base + bottom) * W + right) * D + d);
  float t = tl + (tr - tl) * xl;
  float u = bl + (br - bl) * xl;
  return t + (u - t) * yl;
}

static inline void box_axes(__global const float *boxes, idx_t b, crop_t s,
                            axis_t *ay, axis_t *ax)
{
  __global const float *box = boxes + b * 4;
  *ay = crop_axis(box[0], box[2], (idx_t)s.image_h, (idx_t)s.crop_h);
  *ax = crop_axis(box[1], box[3], (idx_t)s.image_w, (idx_t)s.crop_w);
}

/* CropAndResize, GPU shape: a work-item per crop element. The host has
 * checked every box_index against the batch. */
__kernel void crop_flat(OCL_TENSOR_ARG(const S, image),
                        OCL_TENSOR_ARG(const float, boxes),
                        OCL_TENSOR_ARG(const int, box_index),
                        OCL_TENSOR_ARG(float, crops), crop_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t i = (idx_t)gid, D = (idx_t)s.depth;
  idx_t d = i % D, t = i / D;
  idx_t x = t % (idx_t)s.crop_w;
  t /= (idx_t)s.crop_w;
  idx_t y = t % (idx_t)s.crop_h, b = t / (idx_t)s.crop_h;
  axis_t ay, ax;
  box_axes(OCL_PTR(const float, boxes), b, s, &ay, &ax);
  OCL_PTR(float, crops)[i] = crop_value(OCL_PTR(const S, image), s,
                                        OCL_PTR(const int, box_index)[b], ay,
                                        ax, y, x, d);
}

/* CPU shape: a work-item per crop row. */
__kernel void crop_rows(OCL_TENSOR_ARG(const S, image),
                        OCL_TENSOR_ARG(const float, boxes),
                        OCL_TENSOR_ARG(const int, box_index),
                        OCL_TENSOR_ARG(float, crops), crop_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t row = (idx_t)gid, D = (idx_t)s.depth, W = (idx_t)s.crop_w;
  idx_t y = row % (idx_t)s.crop_h, b = row / (idx_t)s.crop_h;
  axis_t ay, ax;
  box_axes(OCL_PTR(const float, boxes), b, s, &ay, &ax);
  idx_t b_in = OCL_PTR(const int, box_index)[b];
  __global float *out = OCL_PTR(float, crops) + row * W * D;
  for (idx_t x = 0; x < W; x++)
    for (idx_t d = 0; d < D; d++)
      out[x * D + d] =
          crop_value(OCL_PTR(const S, image), s, b_in, ay, ax, y, x, d);
}

/* The crop samples [lo, hi) (in increasing order) whose coordinate v
 * satisfies lower < v < upper (bilinear: the samples whose floor or ceil
 * is o) or lower <= v < upper (nearest: round(v) == o). The coordinates are
 * monotone in the sample, increasing or decreasing (a flipped box): the
 * search runs over them in increasing order of v. */
static inline void crop_range(axis_t a, idx_t o, int nearest, idx_t *lo,
                              idx_t *hi)
{
  float lower = nearest ? (float)o - 0.5f : (float)(o - 1);
  float upper = nearest ? (float)o + 0.5f : (float)(o + 1);
  idx_t n = a.samples;
  bool down = a.samples > 1 && a.scale < 0.0f;
  idx_t p = 0, z = n;
  while (p < z) { /* first rank whose v passes lower */
    idx_t mid = p + (z - p) / 2;
    float v = crop_coord(a, down ? n - 1 - mid : mid);
    if (nearest ? v >= lower : v > lower)
      z = mid;
    else
      p = mid + 1;
  }
  idx_t first = p;
  z = n;
  while (p < z) { /* first rank whose v reaches upper */
    idx_t mid = p + (z - p) / 2;
    float v = crop_coord(a, down ? n - 1 - mid : mid);
    if (v >= upper)
      z = mid;
    else
      p = mid + 1;
  }
  if (down) {
    *lo = n - p;
    *hi = n - first;
  } else {
    *lo = first;
    *hi = p;
  }
}

/* The gradient of image element (b_in, iy, ix, d): the terms TensorFlow's
 * CPU kernel scatters into it, in its order (boxes, crop rows, crop
 * columns, then its four taps), each computed in float. */
static inline ACC crop_grad_sum(__global const float *grads,
                                __global const float *boxes,
                                __global const int *box_index, crop_t s,
                                idx_t b_in, idx_t iy, idx_t ix, idx_t d)
{
  ACC acc = 0;
  idx_t D = (idx_t)s.depth, CW = (idx_t)s.crop_w, CH = (idx_t)s.crop_h;
  for (idx_t b = 0; b < (idx_t)s.num_boxes; b++) {
    if (box_index[b] != b_in)
      continue;
    axis_t ay, ax;
    box_axes(boxes, b, s, &ay, &ax);
    idx_t y_lo, y_hi, x_lo, x_hi;
    crop_range(ay, iy, s.nearest, &y_lo, &y_hi);
    if (y_lo >= y_hi)
      continue;
    crop_range(ax, ix, s.nearest, &x_lo, &x_hi);
    for (idx_t y = y_lo; y < y_hi; y++) {
      float in_y = crop_coord(ay, y);
      if (!crop_inside(ay, in_y))
        continue;
      idx_t top = (idx_t)floor(in_y), bottom = (idx_t)ceil(in_y);
      float yl = in_y - (float)top;
      __global const float *grow = grads + ((b * CH + y) * CW) * D + d;
      for (idx_t x = x_lo; x < x_hi; x++) {
        float in_x = crop_coord(ax, x);
        if (!crop_inside(ax, in_x))
          continue;
        float g = grow[x * D];
        if (s.nearest) {
          if ((idx_t)round(in_y) == iy && (idx_t)round(in_x) == ix)
            acc += TO_ACC(g);
          continue;
        }
        idx_t left = (idx_t)floor(in_x), right = (idx_t)ceil(in_x);
        float xl = in_x - (float)left;
        float dtop = (1.0f - yl) * g, dbottom = yl * g;
        if (top == iy) {
          if (left == ix)
            acc += TO_ACC((1.0f - xl) * dtop);
          if (right == ix)
            acc += TO_ACC(xl * dtop);
        }
        if (bottom == iy) {
          if (left == ix)
            acc += TO_ACC((1.0f - xl) * dbottom);
          if (right == ix)
            acc += TO_ACC(xl * dbottom);
        }
      }
    }
  }
  return acc;
}

/* CropAndResizeGradImage: a work-item per image element (GPU shape), or
 * per image row (CPU shape); no atomics, the sums deterministic. */
__kernel void crop_grad_image_flat(OCL_TENSOR_ARG(const float, grads),
                                   OCL_TENSOR_ARG(const float, boxes),
                                   OCL_TENSOR_ARG(const int, box_index),
                                   OCL_TENSOR_ARG(S, out), crop_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t i = (idx_t)gid, D = (idx_t)s.depth;
  idx_t d = i % D, t = i / D;
  idx_t ix = t % (idx_t)s.image_w;
  t /= (idx_t)s.image_w;
  idx_t iy = t % (idx_t)s.image_h, b_in = t / (idx_t)s.image_h;
  STORE(OCL_PTR(S, out), i,
        crop_grad_sum(OCL_PTR(const float, grads), OCL_PTR(const float, boxes),
                      OCL_PTR(const int, box_index), s, b_in, iy, ix, d));
}

/* CPU shape: a work-item per image row, which it owns: it clears the row,
 * then, box by box in order, adds what the box's crop rows that read it
 * contribute, in the CPU kernel's order (crop rows, crop columns, then the
 * four taps); coordinates once per crop pixel, not per channel. */
__kernel void crop_grad_image_rows(OCL_TENSOR_ARG(const float, grads),
                                   OCL_TENSOR_ARG(const float, boxes),
                                   OCL_TENSOR_ARG(const int, box_index),
                                   OCL_TENSOR_ARG(S, out), crop_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t row = (idx_t)gid, D = (idx_t)s.depth, W = (idx_t)s.image_w;
  idx_t iy = row % (idx_t)s.image_h, b_in = row / (idx_t)s.image_h;
  idx_t CW = (idx_t)s.crop_w, CH = (idx_t)s.crop_h;
  __global S *o = OCL_PTR(S, out) + row * W * D;
  for (idx_t i = 0; i < W * D; i++)
    STORE(o, i, (ACC)0);
  for (idx_t b = 0; b < (idx_t)s.num_boxes; b++) {
    if (OCL_PTR(const int, box_index)[b] != b_in)
      continue;
    axis_t ay, ax;
    box_axes(OCL_PTR(const float, boxes), b, s, &ay, &ax);
    idx_t y_lo, y_hi;
    crop_range(ay, iy, s.nearest, &y_lo, &y_hi);
    for (idx_t y = y_lo; y < y_hi; y++) {
      float in_y = crop_coord(ay, y);
      if (!crop_inside(ay, in_y))
        continue;
      idx_t top = (idx_t)floor(in_y), bottom = (idx_t)ceil(in_y);
      float yl = in_y - (float)top;
      if (s.nearest && (idx_t)round(in_y) != iy)
        continue;
      __global const float *grow =
          OCL_PTR(const float, grads) + (b * CH + y) * CW * D;
      for (idx_t x = 0; x < CW; x++) {
        float in_x = crop_coord(ax, x);
        if (!crop_inside(ax, in_x))
          continue;
        __global const float *gp = grow + x * D;
        if (s.nearest) {
          __global S *op = o + (idx_t)round(in_x) * D;
          for (idx_t d = 0; d < D; d++)
            STORE(op, d, LOAD_ACC(op, d) + TO_ACC(gp[d]));
          continue;
        }
        idx_t left = (idx_t)floor(in_x), right = (idx_t)ceil(in_x);
        float xl = in_x - (float)left;
        __global S *ol = o + left * D, *orr = o + right * D;
        for (idx_t d = 0; d < D; d++) {
          float dtop = (1.0f - yl) * gp[d], dbottom = yl * gp[d];
          if (top == iy) {
            STORE(ol, d, LOAD_ACC(ol, d) + TO_ACC((1.0f - xl) * dtop));
            STORE(orr, d, LOAD_ACC(orr, d) + TO_ACC(xl * dtop));
          }
          if (bottom == iy) {
            STORE(ol, d, LOAD_ACC(ol, d) + TO_ACC((1.0f - xl) * dbottom));
            STORE(orr, d, LOAD_ACC(orr, d) + TO_ACC(xl * dbottom));
          }
        }
      }
    }
  }
}

/* CropAndResizeGradBoxes. One crop pixel's sampling, as TensorFlow's
 * CropAndResizeBackpropBoxes computes it (its coordinates scale by
 * (y2 - y1) * ratio, which rounds otherwise than the forward op's
 * (y2 - y1) * (H - 1) / (CH - 1)); `inside` false where it skips the
 * pixel. */
typedef struct {
  bool inside;
  idx_t top, bottom, left, right;
  float yl, xl;
  float dy1, dy2, dx1, dx2; /* d in_y / d y1, y2; d in_x / d x1, x2 */
} box_pixel_t;

typedef struct {
  float y1, x1, y2, x2;
  float hr, wr, hs, ws, centre_y, centre_x;
  idx_t H, W, CH, CW;
} box_grad_t;

/* The structs go by pointer: Oclgrind cannot run the noalias scopes that
 * inlining large by-value arguments leaves behind. */
static inline void box_grad_setup(__global const float *box, crop_t s,
                                  box_grad_t *g)
{
  g->y1 = box[0];
  g->x1 = box[1];
  g->y2 = box[2];
  g->x2 = box[3];
  g->H = (idx_t)s.image_h;
  g->W = (idx_t)s.image_w;
  g->CH = (idx_t)s.crop_h;
  g->CW = (idx_t)s.crop_w;
  g->hr = g->CH > 1 ? (float)(g->H - 1) / (float)(g->CH - 1) : 0.0f;
  g->wr = g->CW > 1 ? (float)(g->W - 1) / (float)(g->CW - 1) : 0.0f;
  g->hs = g->CH > 1 ? (g->y2 - g->y1) * g->hr : 0.0f;
  g->ws = g->CW > 1 ? (g->x2 - g->x1) * g->wr : 0.0f;
  g->centre_y = crop_axis(g->y1, g->y2, g->H, 1).centre;
  g->centre_x = crop_axis(g->x1, g->x2, g->W, 1).centre;
}

static inline void box_pixel(const box_grad_t *gp, idx_t y, idx_t x,
                             box_pixel_t *pp)
{
  box_grad_t g = *gp;
  box_pixel_t p;
  float in_y = g.CH > 1 ? g.y1 * (float)(g.H - 1) + (float)y * g.hs
                        : g.centre_y;
  float in_x = g.CW > 1 ? g.x1 * (float)(g.W - 1) + (float)x * g.ws
                        : g.centre_x;
  p.inside = in_y >= 0.0f && in_y <= (float)(g.H - 1) && in_x >= 0.0f &&
             in_x <= (float)(g.W - 1);
  if (!p.inside) {
    *pp = p;
    return;
  }
  p.top = (idx_t)floor(in_y);
  p.bottom = (idx_t)ceil(in_y);
  p.left = (idx_t)floor(in_x);
  p.right = (idx_t)ceil(in_x);
  p.yl = in_y - (float)p.top;
  p.xl = in_x - (float)p.left;
  float half_h = 0.5f * (float)(g.H - 1), half_w = 0.5f * (float)(g.W - 1);
  p.dy1 = g.CH > 1 ? (float)(g.H - 1) - (float)y * g.hr : half_h;
  p.dy2 = g.CH > 1 ? (float)y * g.hr : half_h;
  p.dx1 = g.CW > 1 ? (float)(g.W - 1) - (float)x * g.wr : half_w;
  p.dx2 = g.CW > 1 ? (float)x * g.wr : half_w;
  *pp = p;
}

/* Channel d of an inside pixel: its terms of the four coordinates'
 * gradients. */
static inline float4 box_term(__global const S *img, idx_t base, idx_t W,
                              idx_t D, const box_pixel_t *pp, idx_t d,
                              float top_grad)
{
  box_pixel_t p = *pp;
  float tl = LOAD(img, ((base + p.top) * W + p.left) * D + d);
  float tr = LOAD(img, ((base + p.top) * W + p.right) * D + d);
  float bl = LOAD(img, ((base + p.bottom) * W + p.left) * D + d);
  float br = LOAD(img, ((base + p.bottom) * W + p.right) * D + d);
  float gy = ((1.0f - p.xl) * (bl - tl) + p.xl * (br - tr)) * top_grad;
  float gx = ((1.0f - p.yl) * (tr - tl) + p.yl * (br - bl)) * top_grad;
  return (float4)(gy * p.dy1, gx * p.dx1, gy * p.dy2, gx * p.dx2);
}

/* A work-group per box: get_local_size(0) work-items (GPU shape) share the
 * box's crop elements, channels fastest, then reduce in a local-memory
 * tree; a single work-item (CPU shape) walks the crop pixel by pixel, each
 * pixel's sampling computed once for its channels. No atomics. */
__kernel void crop_grad_boxes(OCL_TENSOR_ARG(const float, grads),
                              OCL_TENSOR_ARG(const S, image),
                              OCL_TENSOR_ARG(const float, boxes),
                              OCL_TENSOR_ARG(const int, box_index),
                              OCL_TENSOR_ARG(float, out), crop_t s,
                              __local float4 *partial)
{
  idx_t b = (idx_t)get_group_id(0);
  idx_t lid = (idx_t)get_local_id(0), L = (idx_t)get_local_size(0);
  box_grad_t g;
  box_grad_setup(OCL_PTR(const float, boxes) + b * 4, s, &g);
  idx_t base = (idx_t)OCL_PTR(const int, box_index)[b] * g.H;
  idx_t D = (idx_t)s.depth;
  __global const S *img = OCL_PTR(const S, image);
  __global const float *gr = OCL_PTR(const float, grads) + b * g.CH * g.CW * D;
  float4 acc = (float4)(0.0f);
  if (L == 1) {
    for (idx_t y = 0; y < g.CH; y++)
      for (idx_t x = 0; x < g.CW; x++) {
        box_pixel_t p;
        box_pixel(&g, y, x, &p);
        if (!p.inside)
          continue;
        __global const float *gp = gr + (y * g.CW + x) * D;
        for (idx_t d = 0; d < D; d++)
          acc += box_term(img, base, g.W, D, &p, d, gp[d]);
      }
  } else {
    idx_t total = g.CH * g.CW * D;
    for (idx_t e = lid; e < total; e += L) {
      idx_t d = e % D, t = e / D;
      box_pixel_t p;
      box_pixel(&g, t / g.CW, t % g.CW, &p);
      if (p.inside)
        acc += box_term(img, base, g.W, D, &p, d, gr[e]);
    }
  }
  partial[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (idx_t half_l = L / 2; half_l > 0; half_l /= 2) {
    if (lid < half_l)
      partial[lid] += partial[lid + half_l];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    vstore4(partial[0], b, OCL_PTR(float, out));
}

/* ---- Colour spaces and adjustments ------------------------------------- */

/* Values in the dtype's arithmetic: float for float, half and bfloat16
 * (TensorFlow's GPU kernels convert to float), double for double. */
#ifdef T_IS_DOUBLE
typedef double V;
#define LOADV(p, i) ((p)[i])
#else
typedef float V;
#define LOADV(p, i) LOAD(p, i)
#endif

/* RGBToHSV (colorspace_op.h): h in [0, 1), s = range / v. */
__kernel void rgb_to_hsv(OCL_TENSOR_ARG(const S, x), OCL_TENSOR_ARG(S, y),
                         long pixels)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)pixels)
    return;
  idx_t p = (idx_t)gid * 3;
  __global const S *in = OCL_PTR(const S, x);
  V r = LOADV(in, p), g = LOADV(in, p + 1), b = LOADV(in, p + 2);
  V v = max(r, max(g, b));
  V range = v - min(r, min(g, b));
  V s = v > (V)0 ? range / v : (V)0;
  V norm = (V)1 / range * ((V)1 / (V)6);
  V h = r == v   ? norm * (g - b)
        : g == v ? norm * (b - r) + (V)2 / (V)6
                 : norm * (r - g) + (V)4 / (V)6;
  h = range > (V)0 ? h : (V)0;
  h = h < (V)0 ? h + (V)1 : h;
  __global S *out = OCL_PTR(S, y);
  STORE(out, p, h);
  STORE(out, p + 1, s);
  STORE(out, p + 2, v);
}

/* HSVToRGB (colorspace_op.h). */
__kernel void hsv_to_rgb(OCL_TENSOR_ARG(const S, x), OCL_TENSOR_ARG(S, y),
                         long pixels)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)pixels)
    return;
  idx_t p = (idx_t)gid * 3;
  __global const S *in = OCL_PTR(const S, x);
  V h = LOADV(in, p), s = LOADV(in, p + 1), v = LOADV(in, p + 2);
  V dh = h * (V)6;
  V dr = clamp(fabs(dh - (V)3) - (V)1, (V)0, (V)1);
  V dg = clamp(-fabs(dh - (V)2) + (V)2, (V)0, (V)1);
  V db = clamp(-fabs(dh - (V)4) + (V)2, (V)0, (V)1);
  V one_s = -s + (V)1;
  __global S *out = OCL_PTR(S, y);
  STORE(out, p, (one_s + s * dr) * v);
  STORE(out, p + 1, (one_s + s * dg) * v);
  STORE(out, p + 2, (one_s + s * db) * v);
}

/* AdjustHue (hue = 1) and AdjustSaturation (hue = 0), as TensorFlow's GPU
 * kernel (adjust_hsv_gpu.cu.h): RGB to HSV in float, the adjustment, back.
 * `amount` is the scalar delta or scale, read on the device. */
__kernel void adjust_hsv(OCL_TENSOR_ARG(const S, x),
                         OCL_TENSOR_ARG(const float, amount),
                         OCL_TENSOR_ARG(S, y), long pixels, int hue)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)pixels)
    return;
  idx_t p = (idx_t)gid * 3;
  __global const S *in = OCL_PTR(const S, x);
  float r = LOAD(in, p), g = LOAD(in, p + 1), b = LOAD(in, p + 2);
  float M = fmax(r, fmax(g, b)), m = fmin(r, fmin(g, b));
  float chroma = M - m;
  float h = 0.0f, sat = 0.0f;
  if (chroma > 0.0f) {
    if (M == r) {
      float num = (g - b) / chroma;
      float sign = copysign(1.0f, num);
      h = ((sign < 0.0f) * 6.0f + sign * fmod(sign * num, 6.0f)) / 6.0f;
    } else if (M == g) {
      h = ((b - r) / chroma + 2.0f) / 6.0f;
    } else {
      h = ((r - g) / chroma + 4.0f) / 6.0f;
    }
  }
  if (M > 0.0f)
    sat = chroma / M;
  float a = OCL_PTR(const float, amount)[0];
  if (hue) {
    h = fmod(h + a, 1.0f);
    if (h < 0.0f)
      h = fmod(1.0f + h, 1.0f);
  } else {
    sat = fmin(1.0f, fmax(0.0f, sat * a));
  }
  float nh = h * 6.0f;
  float c = M * sat;
  float xx = c * (1.0f - fabs(fmod(nh, 2.0f) - 1.0f));
  float nm = M - c;
  bool s01 = nh >= 0.0f && nh < 1.0f, s12 = nh >= 1.0f && nh < 2.0f;
  bool s23 = nh >= 2.0f && nh < 3.0f, s34 = nh >= 3.0f && nh < 4.0f;
  bool s45 = nh >= 4.0f && nh < 5.0f, s56 = nh >= 5.0f && nh < 6.0f;
  __global S *out = OCL_PTR(S, y);
  STORE(out, p, c * (float)(s01 || s56) + xx * (float)(s12 || s45) + nm);
  STORE(out, p + 1, c * (float)(s12 || s23) + xx * (float)(s01 || s34) + nm);
  STORE(out, p + 2, c * (float)(s34 || s45) + xx * (float)(s23 || s56) + nm);
}

/* AdjustContrastv2, first pass: the mean of each (image, channel) over its
 * height x width pixels, in float. A work-group per (image, channel)
 * (get_local_size(0) work-items, one on CPU devices), strided sums then a
 * tree reduction in local memory. */
__kernel void contrast_mean(OCL_TENSOR_ARG(const S, x),
                            OCL_TENSOR_ARG(float, means), long pixels,
                            long channels, __local float *partial)
{
  idx_t group = (idx_t)get_group_id(0);
  idx_t lid = (idx_t)get_local_id(0), L = (idx_t)get_local_size(0);
  idx_t C = (idx_t)channels, P = (idx_t)pixels;
  idx_t b = group / C, c = group % C;
  __global const S *in = OCL_PTR(const S, x) + b * P * C + c;
  float acc = 0.0f;
  for (idx_t p = lid; p < P; p += L)
    acc += LOAD(in, p * C);
  partial[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (idx_t half_l = L / 2; half_l > 0; half_l /= 2) {
    if (lid < half_l)
      partial[lid] += partial[lid + half_l];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    OCL_PTR(float, means)[group] = partial[0] / (float)P;
}

/* Second pass, a work-item per element: (x - mean) * factor + mean. */
__kernel void contrast_apply(OCL_TENSOR_ARG(const S, x),
                             OCL_TENSOR_ARG(const float, means),
                             OCL_TENSOR_ARG(const float, factor),
                             OCL_TENSOR_ARG(S, y), long n, long pixels,
                             long channels)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)n)
    return;
  idx_t i = (idx_t)gid, C = (idx_t)channels;
  idx_t group = (i / (C * (idx_t)pixels)) * C + i % C;
  float mean = OCL_PTR(const float, means)[group];
  float f = OCL_PTR(const float, factor)[0];
  STORE(OCL_PTR(S, y), i, (LOAD(OCL_PTR(const S, x), i) - mean) * f + mean);
}

#endif /* RAW */
