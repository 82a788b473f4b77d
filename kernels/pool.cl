/* Pooling and batch normalisation: MaxPool, MaxPoolGrad, AvgPool,
 * AvgPoolGrad, FusedBatchNormV3, FusedBatchNormGradV3.
 *
 * Built per storage type (-DT=float or -DT=half); half is stored as half
 * and computed in float. Batch norm's per-channel tensors (scale, mean, ...)
 * are float whatever T is (TensorFlow's U).
 *
 * The pooling kernels take one work-item per element they write; the
 * gradients own an input element each and walk the windows that hold it,
 * so nothing is accumulated across work-items (no float atomics). The batch
 * norm kernels take one work-group per channel. */
#include "common.clh"

#if defined(T_IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define LOWEST (-65504.0f)
#else
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOWEST (-FLT_MAX)
#endif

/* struct pool_args of pool.c: 8-byte members only. */
typedef struct {
  long batch, rows, cols, depth;
  long out_rows, out_cols;
  long window_rows, window_cols;
  long stride_rows, stride_cols;
  long pad_top, pad_left;
  long channels_first;
  long count; /* work-items that do something */
} pool_t;

/* Element (n, c, h, w) of a [batch, rows, cols, depth] image tensor. */
static long at(const pool_t *p, long n, long c, long h, long w, long rows,
               long cols)
{
  return p->channels_first ? ((n * p->depth + c) * rows + h) * cols + w
                           : ((n * rows + h) * cols + w) * p->depth + c;
}

/* The inverse of at(). */
static void split(const pool_t *p, long i, long rows, long cols, long *n,
                  long *c, long *h, long *w)
{
  if (p->channels_first) {
    *w = i % cols;
    i /= cols;
    *h = i % rows;
    i /= rows;
    *c = i % p->depth;
    *n = i / p->depth;
  } else {
    *c = i % p->depth;
    i /= p->depth;
    *w = i % cols;
    i /= cols;
    *h = i % rows;
    *n = i / rows;
  }
}

/* The in-bounds part [*start, *end) of output position o's window along one
 * spatial axis (TensorFlow clips windows at the padding). */
static void window(long o, long stride, long pad, long size, long extent,
                   long *start, long *end)
{
  long first = o * stride - pad;
  *start = max(first, 0L);
  *end = min(first + size, extent);
}

/* The outputs [*lo, *hi] whose windows hold input index i along one axis. */
static void windows_of(long i, long stride, long pad, long size, long outs,
                       long *lo, long *hi)
{
  long padded = i + pad;
  *lo = padded < size ? 0 : (padded - size) / stride + 1;
  *hi = min(padded / stride, outs - 1);
}

/* TensorFlow's CPU MaxPool starts from the lowest finite value and takes
 * an element only when it is greater: NaN never wins, and a window of -inf
 * gives the lowest finite value. */
__kernel void max_pool(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                       pool_t p)
{
  long o = get_global_id(0);
  OCL_GUARD(o, p.count);
  const __global T *xp = OCL_PTR(const T, x);
  long n, c, oh, ow, hs, he, ws, we;
  split(&p, o, p.out_rows, p.out_cols, &n, &c, &oh, &ow);
  window(oh, p.stride_rows, p.pad_top, p.window_rows, p.rows, &hs, &he);
  window(ow, p.stride_cols, p.pad_left, p.window_cols, p.cols, &ws, &we);
  float best = LOWEST;
  for (long h = hs; h < he; h++)
    for (long w = ws; w < we; w++) {
      float v = LOAD(xp, at(&p, n, c, h, w, p.rows, p.cols));
      if (best < v)
        best = v;
    }
  STORE(OCL_PTR(T, y), o, best);
}

/* Mean over the window's in-bounds elements (SAME padding counts only
 * those, as TensorFlow does). */
__kernel void avg_pool(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                       pool_t p)
{
  long o = get_global_id(0);
  OCL_GUARD(o, p.count);
  const __global T *xp = OCL_PTR(const T, x);
  long n, c, oh, ow, hs, he, ws, we;
  split(&p, o, p.out_rows, p.out_cols, &n, &c, &oh, &ow);
  window(oh, p.stride_rows, p.pad_top, p.window_rows, p.rows, &hs, &he);
  window(ow, p.stride_cols, p.pad_left, p.window_cols, p.cols, &ws, &we);
  float sum = 0.0f;
  for (long h = hs; h < he; h++)
    for (long w = ws; w < we; w++)
      sum += LOAD(xp, at(&p, n, c, h, w, p.rows, p.cols));
  STORE(OCL_PTR(T, y), o, sum / (float)((he - hs) * (we - ws)));
}

/* The input index TensorFlow's CPU MaxPoolGrad routes output (oh, ow)'s
 * gradient to: the window's first element in row-major order, replaced
 * only by a strictly greater one (ties go to the first; a leading NaN
 * keeps the gradient). */
static long window_argmax(const pool_t *p, const __global T *xp, long n,
                          long c, long oh, long ow)
{
  long hs, he, ws, we;
  window(oh, p->stride_rows, p->pad_top, p->window_rows, p->rows, &hs, &he);
  window(ow, p->stride_cols, p->pad_left, p->window_cols, p->cols, &ws, &we);
  long arg = -1;
  float best = LOWEST;
  for (long h = hs; h < he; h++)
    for (long w = ws; w < we; w++) {
      long i = at(p, n, c, h, w, p->rows, p->cols);
      float v = LOAD(xp, i);
      if (arg < 0 || best < v) {
        best = v;
        arg = i;
      }
    }
  return arg;
}

/* One work-item per input element: the sum, in output order, of the
 * gradients of the windows whose argmax it is. */
__kernel void max_pool_grad(OCL_TENSOR_ARG(const T, x),
                            OCL_TENSOR_ARG(const T, dy),
                            OCL_TENSOR_ARG(T, dx), pool_t p)
{
  long i = get_global_id(0);
  OCL_GUARD(i, p.count);
  const __global T *xp = OCL_PTR(const T, x);
  const __global T *dyp = OCL_PTR(const T, dy);
  long n, c, h, w, oh0, oh1, ow0, ow1;
  split(&p, i, p.rows, p.cols, &n, &c, &h, &w);
  windows_of(h, p.stride_rows, p.pad_top, p.window_rows, p.out_rows, &oh0,
             &oh1);
  windows_of(w, p.stride_cols, p.pad_left, p.window_cols, p.out_cols, &ow0,
             &ow1);
  float acc = 0.0f;
  for (long oh = oh0; oh <= oh1; oh++)
    for (long ow = ow0; ow <= ow1; ow++)
      if (window_argmax(&p, xp, n, c, oh, ow) == i)
        acc += LOAD(dyp, at(&p, n, c, oh, ow, p.out_rows, p.out_cols));
  STORE(OCL_PTR(T, dx), i, acc);
}

/* One work-item per input element: each window holding it passes on its
 * gradient divided by the window's in-bounds element count. */
__kernel void avg_pool_grad(OCL_TENSOR_ARG(const T, dy),
                            OCL_TENSOR_ARG(T, dx), pool_t p)
{
  long i = get_global_id(0);
  OCL_GUARD(i, p.count);
  const __global T *dyp = OCL_PTR(const T, dy);
  long n, c, h, w, oh0, oh1, ow0, ow1;
  split(&p, i, p.rows, p.cols, &n, &c, &h, &w);
  windows_of(h, p.stride_rows, p.pad_top, p.window_rows, p.out_rows, &oh0,
             &oh1);
  windows_of(w, p.stride_cols, p.pad_left, p.window_cols, p.out_cols, &ow0,
             &ow1);
  float acc = 0.0f;
  for (long oh = oh0; oh <= oh1; oh++) {
    long hs, he;
    window(oh, p.stride_rows, p.pad_top, p.window_rows, p.rows, &hs, &he);
    for (long ow = ow0; ow <= ow1; ow++) {
      long ws, we;
      window(ow, p.stride_cols, p.pad_left, p.window_cols, p.cols, &ws, &we);
      float coeff = 1.0f / (float)((he - hs) * (we - ws));
      acc += LOAD(dyp, at(&p, n, c, oh, ow, p.out_rows, p.out_cols)) * coeff;
    }
  }
  STORE(OCL_PTR(T, dx), i, acc);
}

/* ---- Batch normalisation --------------------------------------------------
 * x is viewed as [outer, depth, inner]: NHWC is [N*H*W, C, 1], NCHW is
 * [N, C, H*W]. Channel c's r-th element of the `outer * inner` it reduces
 * over sits at bn_at(). */

static long bn_at(long r, long c, long depth, long inner)
{
  return ((r / inner) * depth + c) * inner + r % inner;
}

/* Sum over the work-group (power-of-two local size). */
static float group_sum(float v, __local float *scratch)
{
  long lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long step = get_local_size(0) / 2; step > 0; step /= 2) {
    if (lid < step)
      scratch[lid] += scratch[lid + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float sum = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE); /* scratch is reused by the next sum */
  return sum;
}

/* One work-group per channel. Training: the batch mean and biased
 * variance (two passes) normalise; batch_variance is the Bessel-corrected
 * one, and with exponential_avg_factor != 1 both running statistics blend
 * the incoming ones (TensorFlow's CPU functor). Inference: the given mean
 * and variance normalise and pass through. */
__kernel void batch_norm(OCL_TENSOR_ARG(const T, x),
                         OCL_TENSOR_ARG(const float, scale),
                         OCL_TENSOR_ARG(const float, offset),
                         OCL_TENSOR_ARG(const float, mean),
                         OCL_TENSOR_ARG(const float, variance),
                         OCL_TENSOR_ARG(T, y),
                         OCL_TENSOR_ARG(float, batch_mean),
                         OCL_TENSOR_ARG(float, batch_var),
                         OCL_TENSOR_ARG(float, saved_mean),
                         OCL_TENSOR_ARG(float, saved_var), long depth,
                         long rest, long inner, float epsilon, float factor,
                         int training, __local float *scratch)
{
  long c = get_group_id(0);
  long lid = get_local_id(0), ls = get_local_size(0);
  const __global T *xp = OCL_PTR(const T, x);
  __global T *yp = OCL_PTR(T, y);
  float m, v;
  if (training) {
    float s = 0.0f;
    for (long r = lid; r < rest; r += ls)
      s += LOAD(xp, bn_at(r, c, depth, inner));
    m = group_sum(s, scratch) / (float)rest;
    float q = 0.0f;
    for (long r = lid; r < rest; r += ls) {
      float d = LOAD(xp, bn_at(r, c, depth, inner)) - m;
      q += d * d;
    }
    v = group_sum(q, scratch) / (float)rest;
  } else {
    m = OCL_PTR(const float, mean)[c];
    v = OCL_PTR(const float, variance)[c];
  }
  float k = rsqrt(v + epsilon) * OCL_PTR(const float, scale)[c];
  float b = OCL_PTR(const float, offset)[c];
  for (long r = lid; r < rest; r += ls) {
    long i = bn_at(r, c, depth, inner);
    STORE(yp, i, (LOAD(xp, i) - m) * k + b);
  }
  if (lid != 0)
    return;
  float new_mean = m, new_var = v;
  if (training) {
    float adjust = (float)rest / (float)(rest > 1 ? rest - 1 : 1);
    if (factor == 1.0f) {
      new_var = v * adjust;
    } else {
      float keep = 1.0f - factor;
      new_mean = keep * OCL_PTR(const float, mean)[c] + factor * m;
      new_var = keep * OCL_PTR(const float, variance)[c] + (factor * adjust) * v;
    }
  }
  if (rest == 0) /* TensorFlow's answer for an empty x */
    new_mean = new_var = m = v = NAN;
  OCL_PTR(float, batch_mean)[c] = new_mean;
  OCL_PTR(float, batch_var)[c] = new_var;
  OCL_PTR(float, saved_mean)[c] = m;
  OCL_PTR(float, saved_var)[c] = v;
}

/* One work-group per channel; mean and variance are reserve_space_1 and 2
 * (the batch's in training, the population's in inference). */
__kernel void batch_norm_grad(OCL_TENSOR_ARG(const T, dy),
                              OCL_TENSOR_ARG(const T, x),
                              OCL_TENSOR_ARG(const float, scale),
                              OCL_TENSOR_ARG(const float, mean),
                              OCL_TENSOR_ARG(const float, variance),
                              OCL_TENSOR_ARG(T, dx),
                              OCL_TENSOR_ARG(float, scale_backprop),
                              OCL_TENSOR_ARG(float, offset_backprop),
                              long depth, long rest, long inner, float epsilon,
                              int training, __local float *scratch)
{
  long c = get_group_id(0);
  long lid = get_local_id(0), ls = get_local_size(0);
  const __global T *dyp = OCL_PTR(const T, dy);
  const __global T *xp = OCL_PTR(const T, x);
  __global T *dxp = OCL_PTR(T, dx);
  float m = OCL_PTR(const float, mean)[c];
  float inv = rsqrt(OCL_PTR(const float, variance)[c] + epsilon);
  float g = OCL_PTR(const float, scale)[c];
  float s = 0.0f, sc = 0.0f;
  for (long r = lid; r < rest; r += ls) {
    long i = bn_at(r, c, depth, inner);
    float d = LOAD(dyp, i);
    s += d;
    sc += d * (LOAD(xp, i) - m);
  }
  float sum_dy = group_sum(s, scratch);
  float sum_dy_xc = group_sum(sc, scratch);
  if (lid == 0) {
    /* An empty x gives zero gradients, whatever the statistics hold. */
    OCL_PTR(float, offset_backprop)[c] = rest == 0 ? 0.0f : sum_dy;
    OCL_PTR(float, scale_backprop)[c] = rest == 0 ? 0.0f : sum_dy_xc * inv;
  }
  float coef1 = g * inv;
  float mean_dy = sum_dy / (float)rest;
  float coef2 = inv * inv * (sum_dy_xc / (float)rest);
  for (long r = lid; r < rest; r += ls) {
    long i = bn_at(r, c, depth, inner);
    float d = LOAD(dyp, i);
    float v = training ? coef1 * ((d - mean_dy) - (LOAD(xp, i) - m) * coef2)
                       : d * coef1;
    STORE(dxp, i, v);
  }
}
