/* Pooling: MaxPool, AvgPool and their gradients, in 2-D (a plane extent of
 * 1) and 3-D, channels last (NHWC, NDHWC) or first (NCHW, NCDHW).
 *
 * Built per storage type (-DT=float, half, ushort for bfloat16, double)
 * and index width (-DIDX=int where every index of the problem fits in 32
 * bits, long beyond). half and bfloat16 are stored as such and computed in
 * float; double in double.
 *
 * One work-item per element written: neighbouring work-items write
 * neighbouring addresses (channels innermost in NHWC, columns in NCHW).
 * The gradients gather: each input element walks the windows that hold it
 * and sums their contributions in output order, so nothing is accumulated
 * across work-items (no float atomics) and the result does not depend on
 * scheduling. */
#include "common.clh"

#if defined(T_IS_HALF)
#define ACC float
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define LOWEST (-65504.0f)
#elif defined(T_IS_BFLOAT16)
#define ACC float
#define LOAD(p, i) ocl_bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = ocl_float_to_bf16(v))
#define LOWEST (-3.38953139e38f)
#elif defined(T_IS_DOUBLE)
#define ACC double
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOWEST (-DBL_MAX)
#else
#define ACC float
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOWEST (-FLT_MAX)
#endif

/* struct pool_args32/64 of pool.c: IDX members only. Spatial axes are
 * (plane, row, column); a 2-D problem has one plane and a unit window,
 * stride and no padding along it. */
typedef struct {
  IDX batch, depth;
  IDX in_p, in_h, in_w;
  IDX out_p, out_h, out_w;
  IDX win_p, win_h, win_w;
  IDX str_p, str_h, str_w;
  IDX pad_p, pad_h, pad_w;
  IDX channels_first;
  IDX count; /* work-items that do something */
} pool_t;

/* An image's layout: the flat index of (n, c, 0, 0, 0) and the steps of
 * its three spatial axes. */
typedef struct {
  IDX base, sp, sh, sw;
} layout_t;

/* Splits flat index i of an image of spatial extents (ep, eh, ew) into
 * (n, c, p, h, w) and gives the image's layout around it. */
static layout_t locate(const pool_t *q, IDX i, IDX ep, IDX eh, IDX ew, IDX *c,
                       IDX *p, IDX *h, IDX *w)
{
  layout_t l;
  IDX n;
  if (q->channels_first) {
    *w = i % ew;
    i /= ew;
    *h = i % eh;
    i /= eh;
    *p = i % ep;
    i /= ep;
    *c = i % q->depth;
    n = i / q->depth;
    l.sw = 1;
    l.base = (n * q->depth + *c) * ep * eh * ew;
  } else {
    *c = i % q->depth;
    i /= q->depth;
    *w = i % ew;
    i /= ew;
    *h = i % eh;
    i /= eh;
    *p = i % ep;
    n = i / ep;
    l.sw = q->depth;
    l.base = n * ep * eh * ew * q->depth + *c;
  }
  l.sh = l.sw * ew;
  l.sp = l.sh * eh;
  return l;
}

static IDX at(const layout_t *l, IDX p, IDX h, IDX w)
{
  return l->base + p * l->sp + h * l->sh + w * l->sw;
}

/* The same (n, c) in the other image (input <-> output) of the problem. */
static layout_t other(const pool_t *q, const layout_t *l, IDX ep, IDX eh,
                      IDX ew, IDX from_elems)
{
  layout_t o;
  IDX spatial = ep * eh * ew;
  if (q->channels_first) {
    o.sw = 1;
    o.base = l->base / from_elems * spatial;
  } else {
    IDX c = l->base % q->depth;
    IDX n = l->base / (from_elems * q->depth);
    o.sw = q->depth;
    o.base = n * spatial * q->depth + c;
  }
  o.sh = o.sw * ew;
  o.sp = o.sh * eh;
  return o;
}

/* The in-bounds part [*start, *end) of output position o's window along one
 * axis (TensorFlow clips windows at the padding); *first: the unclipped
 * start. */
static void window(IDX o, IDX stride, IDX pad, IDX size, IDX extent,
                   IDX *first, IDX *start, IDX *end)
{
  *first = o * stride - pad;
  *start = max(*first, (IDX)0);
  *end = min(*first + size, extent);
}

/* The outputs [*lo, *hi] whose windows hold input index i along one axis. */
static void windows_of(IDX i, IDX stride, IDX pad, IDX size, IDX outs,
                       IDX *lo, IDX *hi)
{
  IDX padded = i + pad;
  *lo = padded < size ? 0 : (padded - size) / stride + 1;
  *hi = min(padded / stride, outs - 1);
}

/* The output's window: in-bounds ranges per axis and unclipped starts. */
typedef struct {
  IDX p0, p1, h0, h1, w0, w1; /* [x0, x1) */
  IDX fp, fh, fw;             /* unclipped starts */
} win_t;

static win_t window_of_output(const pool_t *q, IDX op, IDX oh, IDX ow)
{
  win_t r;
  window(op, q->str_p, q->pad_p, q->win_p, q->in_p, &r.fp, &r.p0, &r.p1);
  window(oh, q->str_h, q->pad_h, q->win_h, q->in_h, &r.fh, &r.h0, &r.h1);
  window(ow, q->str_w, q->pad_w, q->win_w, q->in_w, &r.fw, &r.w0, &r.w1);
  return r;
}

/* TensorFlow's CPU MaxPool and MaxPool3D start from the lowest finite
 * value and take an element only when it is greater: NaN never wins, and a
 * window of -inf gives the lowest finite value. */
__kernel void max_pool(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                       pool_t q)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, q.count);
  const __global T *xp = OCL_PTR(const T, x);
  IDX c, op, oh, ow;
  layout_t lo = locate(&q, o, q.out_p, q.out_h, q.out_w, &c, &op, &oh, &ow);
  layout_t li = other(&q, &lo, q.in_p, q.in_h, q.in_w,
                      q.out_p * q.out_h * q.out_w);
  win_t r = window_of_output(&q, op, oh, ow);
  ACC best = LOWEST;
  for (IDX p = r.p0; p < r.p1; p++)
    for (IDX h = r.h0; h < r.h1; h++)
      for (IDX w = r.w0; w < r.w1; w++) {
        ACC v = LOAD(xp, at(&li, p, h, w));
        if (best < v)
          best = v;
      }
  STORE(OCL_PTR(T, y), o, best);
}

/* Mean over the window's in-bounds elements (SAME padding counts only
 * those, as TensorFlow does). */
__kernel void avg_pool(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                       pool_t q)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, q.count);
  const __global T *xp = OCL_PTR(const T, x);
  IDX c, op, oh, ow;
  layout_t lo = locate(&q, o, q.out_p, q.out_h, q.out_w, &c, &op, &oh, &ow);
  layout_t li = other(&q, &lo, q.in_p, q.in_h, q.in_w,
                      q.out_p * q.out_h * q.out_w);
  win_t r = window_of_output(&q, op, oh, ow);
  ACC sum = 0;
  for (IDX p = r.p0; p < r.p1; p++)
    for (IDX h = r.h0; h < r.h1; h++)
      for (IDX w = r.w0; w < r.w1; w++)
        sum += LOAD(xp, at(&li, p, h, w));
  STORE(OCL_PTR(T, y), o,
        sum / (ACC)((r.p1 - r.p0) * (r.h1 - r.h0) * (r.w1 - r.w0)));
}

/* MaxPoolGrad, pass 1: where TensorFlow's CPU kernel routes output o's
 * gradient, as an offset in o's unclipped window: the first element in
 * window order, replaced only by a strictly greater one (ties go to the
 * first; a leading NaN keeps the gradient). */
__kernel void max_pool_argmax(OCL_TENSOR_ARG(const T, x),
                              OCL_TENSOR_ARG(int, arg), pool_t q)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, q.count);
  const __global T *xp = OCL_PTR(const T, x);
  IDX c, op, oh, ow;
  layout_t lo = locate(&q, o, q.out_p, q.out_h, q.out_w, &c, &op, &oh, &ow);
  layout_t li = other(&q, &lo, q.in_p, q.in_h, q.in_w,
                      q.out_p * q.out_h * q.out_w);
  win_t r = window_of_output(&q, op, oh, ow);
  int best_at = -1;
  ACC best = LOWEST;
  for (IDX p = r.p0; p < r.p1; p++)
    for (IDX h = r.h0; h < r.h1; h++)
      for (IDX w = r.w0; w < r.w1; w++) {
        ACC v = LOAD(xp, at(&li, p, h, w));
        if (best_at < 0 || best < v) {
          best = v;
          best_at = (int)(((p - r.fp) * q.win_h + (h - r.fh)) * q.win_w +
                          (w - r.fw));
        }
      }
  OCL_PTR(int, arg)[o] = best_at;
}

/* MaxPoolGrad, pass 2: one work-item per input element, the sum in output
 * order of the gradients of the windows that routed theirs to it. */
__kernel void max_pool_grad(OCL_TENSOR_ARG(const int, arg),
                            OCL_TENSOR_ARG(const T, dy),
                            OCL_TENSOR_ARG(T, dx), pool_t q)
{
  IDX i = (IDX)get_global_id(0);
  OCL_GUARD(i, q.count);
  const __global int *argp = OCL_PTR(const int, arg);
  const __global T *dyp = OCL_PTR(const T, dy);
  IDX c, p, h, w, p0, p1, h0, h1, w0, w1;
  layout_t li = locate(&q, i, q.in_p, q.in_h, q.in_w, &c, &p, &h, &w);
  layout_t lo = other(&q, &li, q.out_p, q.out_h, q.out_w,
                      q.in_p * q.in_h * q.in_w);
  windows_of(p, q.str_p, q.pad_p, q.win_p, q.out_p, &p0, &p1);
  windows_of(h, q.str_h, q.pad_h, q.win_h, q.out_h, &h0, &h1);
  windows_of(w, q.str_w, q.pad_w, q.win_w, q.out_w, &w0, &w1);
  ACC acc = 0;
  for (IDX op = p0; op <= p1; op++)
    for (IDX oh = h0; oh <= h1; oh++)
      for (IDX ow = w0; ow <= w1; ow++) {
        IDX o = at(&lo, op, oh, ow);
        int mine = (int)(((p - (op * q.str_p - q.pad_p)) * q.win_h +
                          (h - (oh * q.str_h - q.pad_h))) * q.win_w +
                         (w - (ow * q.str_w - q.pad_w)));
        if (argp[o] == mine)
          acc += LOAD(dyp, o);
      }
  STORE(OCL_PTR(T, dx), i, acc);
}

/* MaxPool3DGrad as TensorFlow's CPU kernel: every element of a window
 * within 1e-5 of the window's maximum (orig_output) receives the window's
 * gradient, ties included; summed in output order. */
__kernel void max_pool_grad_near(OCL_TENSOR_ARG(const T, x),
                                 OCL_TENSOR_ARG(const T, y),
                                 OCL_TENSOR_ARG(const T, dy),
                                 OCL_TENSOR_ARG(T, dx), pool_t q)
{
  IDX i = (IDX)get_global_id(0);
  OCL_GUARD(i, q.count);
  const __global T *yp = OCL_PTR(const T, y);
  const __global T *dyp = OCL_PTR(const T, dy);
  IDX c, p, h, w, p0, p1, h0, h1, w0, w1;
  layout_t li = locate(&q, i, q.in_p, q.in_h, q.in_w, &c, &p, &h, &w);
  layout_t lo = other(&q, &li, q.out_p, q.out_h, q.out_w,
                      q.in_p * q.in_h * q.in_w);
  windows_of(p, q.str_p, q.pad_p, q.win_p, q.out_p, &p0, &p1);
  windows_of(h, q.str_h, q.pad_h, q.win_h, q.out_h, &h0, &h1);
  windows_of(w, q.str_w, q.pad_w, q.win_w, q.out_w, &w0, &w1);
  ACC xv = LOAD(OCL_PTR(const T, x), i), acc = 0;
  for (IDX op = p0; op <= p1; op++)
    for (IDX oh = h0; oh <= h1; oh++)
      for (IDX ow = w0; ow <= w1; ow++) {
        IDX o = at(&lo, op, oh, ow);
        if (fabs(xv - LOAD(yp, o)) < (ACC)1e-5)
          acc += LOAD(dyp, o);
      }
  STORE(OCL_PTR(T, dx), i, acc);
}

/* One work-item per input element: each window holding it passes on its
 * gradient divided by the window's in-bounds element count. */
__kernel void avg_pool_grad(OCL_TENSOR_ARG(const T, dy),
                            OCL_TENSOR_ARG(T, dx), pool_t q)
{
  IDX i = (IDX)get_global_id(0);
  OCL_GUARD(i, q.count);
  const __global T *dyp = OCL_PTR(const T, dy);
  IDX c, p, h, w, p0, p1, h0, h1, w0, w1;
  layout_t li = locate(&q, i, q.in_p, q.in_h, q.in_w, &c, &p, &h, &w);
  layout_t lo = other(&q, &li, q.out_p, q.out_h, q.out_w,
                      q.in_p * q.in_h * q.in_w);
  windows_of(p, q.str_p, q.pad_p, q.win_p, q.out_p, &p0, &p1);
  windows_of(h, q.str_h, q.pad_h, q.win_h, q.out_h, &h0, &h1);
  windows_of(w, q.str_w, q.pad_w, q.win_w, q.out_w, &w0, &w1);
  ACC acc = 0;
  for (IDX op = p0; op <= p1; op++)
    for (IDX oh = h0; oh <= h1; oh++)
      for (IDX ow = w0; ow <= w1; ow++) {
        win_t r = window_of_output(&q, op, oh, ow);
        ACC count = (ACC)((r.p1 - r.p0) * (r.h1 - r.h0) * (r.w1 - r.w0));
        acc += LOAD(dyp, at(&lo, op, oh, ow)) / count;
      }
  STORE(OCL_PTR(T, dx), i, acc);
}

/* MaxPoolGradGrad and MaxPool3DGradGrad as TensorFlow's CPU kernels: output
 * o takes the gradient (an input-shaped tensor) at the first element of its
 * window equal to orig_output[o]; 0 when none is. */
__kernel void max_pool_grad_grad(OCL_TENSOR_ARG(const T, x),
                                 OCL_TENSOR_ARG(const T, y),
                                 OCL_TENSOR_ARG(const T, g),
                                 OCL_TENSOR_ARG(T, out), pool_t q)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, q.count);
  const __global T *xp = OCL_PTR(const T, x);
  IDX c, op, oh, ow;
  layout_t lo = locate(&q, o, q.out_p, q.out_h, q.out_w, &c, &op, &oh, &ow);
  layout_t li = other(&q, &lo, q.in_p, q.in_h, q.in_w,
                      q.out_p * q.out_h * q.out_w);
  win_t r = window_of_output(&q, op, oh, ow);
  ACC yv = LOAD(OCL_PTR(const T, y), o), result = 0;
  bool found = false;
  for (IDX p = r.p0; p < r.p1 && !found; p++)
    for (IDX h = r.h0; h < r.h1 && !found; h++)
      for (IDX w = r.w0; w < r.w1 && !found; w++) {
        IDX i = at(&li, p, h, w);
        if (LOAD(xp, i) == yv) {
          result = LOAD(OCL_PTR(const T, g), i);
          found = true;
        }
      }
  STORE(OCL_PTR(T, out), o, result);
}
