/* Pooling: MaxPool, AvgPool and their gradients, in 2-D (a plane extent of
 * 1) and 3-D, channels last (NHWC, NDHWC) or first (NCHW, NCDHW);
 * MaxPoolWithArgmax and its gradients; LRN and LRNGrad.
 *
 * Built per storage type (-DT=float, half, ushort for bfloat16, double)
 * and index width (-DIDX=int where every index of the problem fits in 32
 * bits, long beyond). half and bfloat16 are stored as such and computed in
 * float; double in double.
 *
 * Two shapes of each kernel, one element function: the GPU shape takes
 * one work-item per element written, neighbouring work-items on
 * neighbouring addresses (channels innermost in NHWC, columns in NCHW); the
 * CPU shape (_rows) one work-item per row of the image written (its
 * columns and, channels last, its channels), walked in memory order, so
 * that no element pays the index divisions. The gradients gather: each
 * input element walks the windows that hold it and sums their
 * contributions in output order, so nothing is accumulated across
 * work-items (no float atomics) and the result does not depend on
 * scheduling. */
#include "common.clh"

#if defined(T_IS_HALF)
#define ACC float
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#define LOWEST (-65504.0f)
#define ACC16 float16
#define LOAD16(p) vload_half16(0, (p))
#define STORE16(p, v) OCL_VSTORE_HALF16((v), 0, (p))
#define ACC8 float8
#define LOAD8(p) vload_half8(0, (p))
#define STORE8(p, v) OCL_VSTORE_HALF8((v), 0, (p))
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
#define ACC16 double16
#define LOAD16(p) vload16(0, (p))
#define STORE16(p, v) vstore16((v), 0, (p))
#define ACC8 double8
#define LOAD8(p) vload8(0, (p))
#define STORE8(p, v) vstore8((v), 0, (p))
#else
#define ACC float
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOWEST (-FLT_MAX)
#define ACC16 float16
#define LOAD16(p) vload16(0, (p))
#define STORE16(p, v) vstore16((v), 0, (p))
#define ACC8 float8
#define LOAD8(p) vload8(0, (p))
#define STORE8(p, v) vstore8((v), 0, (p))
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
  /* MaxPoolGrad's fused ReluGrad (pool.c): the gradient times
   * (orig_input > 0), in the one-pass kernels. */
  IDX relu_grad;
  IDX count; /* work-items that do something: elements, or _rows rows */
} pool_t;

/* An image's layout around one (n, c): the flat index of (n, c, 0, 0, 0)
 * and the steps of its three spatial axes. */
typedef struct {
  IDX base, sp, sh, sw;
} layout_t;

/* The layout of (n, c) in an image of spatial extents (ep, eh, ew). */
static layout_t layout_of(const pool_t *q, IDX n, IDX c, IDX ep, IDX eh,
                          IDX ew)
{
  layout_t l;
  IDX spatial = ep * eh * ew;
  l.sw = q->channels_first ? 1 : q->depth;
  l.base = q->channels_first ? (n * q->depth + c) * spatial
                             : n * spatial * q->depth + c;
  l.sh = l.sw * ew;
  l.sp = l.sh * eh;
  return l;
}

static IDX at(const layout_t *l, IDX p, IDX h, IDX w)
{
  return l->base + p * l->sp + h * l->sh + w * l->sw;
}

/* Splits flat index i of an image of spatial extents (ep, eh, ew) into
 * (n, c, p, h, w). */
static void split(const pool_t *q, IDX i, IDX ep, IDX eh, IDX ew, IDX *n,
                  IDX *c, IDX *p, IDX *h, IDX *w)
{
  if (q->channels_first) {
    *w = i % ew;
    i /= ew;
    *h = i % eh;
    i /= eh;
    *p = i % ep;
    i /= ep;
    *c = i % q->depth;
    *n = i / q->depth;
  } else {
    *c = i % q->depth;
    i /= q->depth;
    *w = i % ew;
    i /= ew;
    *h = i % eh;
    i /= eh;
    *p = i % ep;
    *n = i / ep;
  }
}

/* Row `row` of an image of extents (ep, eh): (n, c, p, h), channels first
 * a row per channel, channels last c = 0 (the row holds every channel). */
static void split_row(const pool_t *q, IDX row, IDX ep, IDX eh, IDX *n,
                      IDX *c, IDX *p, IDX *h)
{
  *h = row % eh;
  row /= eh;
  *p = row % ep;
  row /= ep;
  *c = q->channels_first ? row % q->depth : 0;
  *n = q->channels_first ? row / q->depth : row;
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

/* ---- The kernels' two shapes ------------------------------------------------
 * Each operation is a function of one element written (an output element
 * for the forward ops, an input element for the gradients) given its
 * coordinates and the layouts of its (n, c) in the image it writes (self)
 * and the other one; ONE_ARGS are the tensors, OP the function. The GPU
 * kernel splits its global id, the _rows kernel walks a row. */
#define POOL_KERNEL_GPU(name, ONE_PARAMS, ONE_ARGS, self_p, self_h, self_w, \
                        other_p, other_h, other_w)                           \
  __kernel void name(UNPAREN ONE_PARAMS, pool_t q)                           \
  {                                                                          \
    IDX i = (IDX)get_global_id(0);                                           \
    OCL_GUARD(i, q.count);                                                   \
    IDX n, c, p, h, w;                                                       \
    split(&q, i, q.self_p, q.self_h, q.self_w, &n, &c, &p, &h, &w);          \
    layout_t ls = layout_of(&q, n, c, q.self_p, q.self_h, q.self_w);         \
    layout_t lo = layout_of(&q, n, c, q.other_p, q.other_h, q.other_w);      \
    name##_one(&q, UNPAREN ONE_ARGS, i, p, h, w, &ls, &lo);                  \
  }

#define POOL_KERNEL_ROWS(name, ONE_PARAMS, ONE_ARGS, self_p, self_h, self_w,  \
                         other_p, other_h, other_w)                          \
  __kernel void name##_rows(UNPAREN ONE_PARAMS, pool_t q)                    \
  {                                                                          \
    IDX row = (IDX)get_global_id(0);                                         \
    OCL_GUARD(row, q.count);                                                 \
    IDX n, c0, p, h;                                                         \
    split_row(&q, row, q.self_p, q.self_h, &n, &c0, &p, &h);                 \
    IDX channels = q.channels_first ? 1 : q.depth;                           \
    for (IDX w = 0; w < q.self_w; w++)                                       \
      for (IDX ci = 0; ci < channels; ci++) {                                \
        IDX c = c0 + ci;                                                     \
        layout_t ls = layout_of(&q, n, c, q.self_p, q.self_h, q.self_w);     \
        layout_t lo = layout_of(&q, n, c, q.other_p, q.other_h, q.other_w);  \
        name##_one(&q, UNPAREN ONE_ARGS, at(&ls, p, h, w), p, h, w, &ls,     \
                   &lo);                                                     \
      }                                                                      \
  }

/* The parameter and argument lists travel parenthesised; the extents of
 * the image written and of the other one are OUT_IN (forward ops) or
 * IN_OUT (gradients), expanded before the kernels' macros take them. */
#define UNPAREN(...) __VA_ARGS__
#define OUT_IN out_p, out_h, out_w, in_p, in_h, in_w
#define IN_OUT in_p, in_h, in_w, out_p, out_h, out_w
#define GPU_KERNEL(...) POOL_KERNEL_GPU(__VA_ARGS__)
#define ROWS_KERNEL(...) POOL_KERNEL_ROWS(__VA_ARGS__)
#define FORWARD(name, ONE_PARAMS, ONE_ARGS)            \
  GPU_KERNEL(name, ONE_PARAMS, ONE_ARGS, OUT_IN)       \
  ROWS_KERNEL(name, ONE_PARAMS, ONE_ARGS, OUT_IN)
#define BACKWARD(name, ONE_PARAMS, ONE_ARGS)           \
  GPU_KERNEL(name, ONE_PARAMS, ONE_ARGS, IN_OUT)       \
  ROWS_KERNEL(name, ONE_PARAMS, ONE_ARGS, IN_OUT)

#define ARGS_XY (OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y))
#define PASS_XY (OCL_PTR(const T, x), OCL_PTR(T, y))

/* TensorFlow's CPU MaxPool and MaxPool3D start from the lowest finite
 * value and take an element only when it is greater: NaN never wins, and a
 * window of -inf gives the lowest finite value. */
static void max_pool_one(const pool_t *q, const __global T *xp,
                         __global T *yp, IDX o, IDX op, IDX oh, IDX ow,
                         const layout_t *lo, const layout_t *li)
{
  win_t r = window_of_output(q, op, oh, ow);
  ACC best = LOWEST;
  for (IDX p = r.p0; p < r.p1; p++)
    for (IDX h = r.h0; h < r.h1; h++)
      for (IDX w = r.w0; w < r.w1; w++) {
        ACC v = LOAD(xp, at(li, p, h, w));
        if (best < v)
          best = v;
      }
  STORE(yp, o, best);
}
GPU_KERNEL(max_pool, ARGS_XY, PASS_XY, OUT_IN)

/* Mean over the window's in-bounds elements (SAME padding counts only
 * those, as TensorFlow does). */
static void avg_pool_one(const pool_t *q, const __global T *xp,
                         __global T *yp, IDX o, IDX op, IDX oh, IDX ow,
                         const layout_t *lo, const layout_t *li)
{
  win_t r = window_of_output(q, op, oh, ow);
  ACC sum = 0;
  for (IDX p = r.p0; p < r.p1; p++)
    for (IDX h = r.h0; h < r.h1; h++)
      for (IDX w = r.w0; w < r.w1; w++)
        sum += LOAD(xp, at(li, p, h, w));
  STORE(yp, o, sum / (ACC)((r.p1 - r.p0) * (r.h1 - r.h0) * (r.w1 - r.w0)));
}
GPU_KERNEL(avg_pool, ARGS_XY, PASS_XY, OUT_IN)

/* The CPU shape of max_pool and avg_pool, channels last: a row's outputs
 * take their windows 16 channels at a time (contiguous in x and y), the
 * running maxima or sums in a vector register (ACC16; bfloat16, which has
 * no vector conversion, and the last channels lane by lane), in the
 * element function's order: the same comparisons (a maximum is a value of
 * T, exact in y) and the same sums, in ACC. Channels first, element by
 * element. */
static void pool_row_last(const pool_t *q, const __global T *xp,
                          __global T *yp, IDX n, IDX op, IDX oh, bool is_max)
{
  layout_t lo = layout_of(q, n, 0, q->out_p, q->out_h, q->out_w);
  layout_t li = layout_of(q, n, 0, q->in_p, q->in_h, q->in_w);
#if defined(ACC16)
  IDX whole = q->depth / 16 * 16;
#else
  IDX whole = 0;
#endif
  for (IDX ow = 0; ow < q->out_w; ow++) {
    win_t r = window_of_output(q, op, oh, ow);
    __global T *yo = yp + at(&lo, op, oh, ow);
    ACC count = (ACC)((r.p1 - r.p0) * (r.h1 - r.h0) * (r.w1 - r.w0));
#if defined(ACC16)
    for (IDX c = 0; c < whole; c += 16) {
      ACC16 acc = is_max ? (ACC16)LOWEST : (ACC16)0;
      for (IDX p = r.p0; p < r.p1; p++)
        for (IDX h = r.h0; h < r.h1; h++)
          for (IDX w = r.w0; w < r.w1; w++) {
            ACC16 v = LOAD16(xp + at(&li, p, h, w) + c);
            acc = is_max ? select(acc, v, acc < v) : acc + v;
          }
      STORE16(yo + c, is_max ? acc : acc / count);
    }
#endif
    for (IDX c = whole; c < q->depth; c++) {
      ACC acc = is_max ? LOWEST : (ACC)0;
      for (IDX p = r.p0; p < r.p1; p++)
        for (IDX h = r.h0; h < r.h1; h++)
          for (IDX w = r.w0; w < r.w1; w++) {
            ACC v = LOAD(xp, at(&li, p, h, w) + c);
            acc = is_max ? (acc < v ? v : acc) : acc + v;
          }
      STORE(yo, c, is_max ? acc : acc / count);
    }
  }
}

#define POOL_ROWS(name, is_max)                                              \
  __kernel void name##_rows(OCL_TENSOR_ARG(const T, x),                     \
                            OCL_TENSOR_ARG(T, y), pool_t q)                 \
  {                                                                          \
    IDX row = (IDX)get_global_id(0);                                         \
    OCL_GUARD(row, q.count);                                                 \
    IDX n, c0, p, h;                                                         \
    split_row(&q, row, q.out_p, q.out_h, &n, &c0, &p, &h);                   \
    const __global T *xp = OCL_PTR(const T, x);                              \
    __global T *yp = OCL_PTR(T, y);                                          \
    if (!q.channels_first) {                                                 \
      pool_row_last(&q, xp, yp, n, p, h, is_max);                            \
      return;                                                                \
    }                                                                        \
    IDX channels = q.channels_first ? 1 : q.depth;                           \
    for (IDX w = 0; w < q.out_w; w++)                                        \
      for (IDX ci = 0; ci < channels; ci++) {                                \
        layout_t lo = layout_of(&q, n, c0 + ci, q.out_p, q.out_h, q.out_w);  \
        layout_t li = layout_of(&q, n, c0 + ci, q.in_p, q.in_h, q.in_w);     \
        name##_one(&q, xp, yp, at(&lo, p, h, w), p, h, w, &lo, &li);         \
      }                                                                      \
  }
POOL_ROWS(max_pool, true)
POOL_ROWS(avg_pool, false)

/* MaxPoolGrad, pass 1: where TensorFlow's CPU kernel routes output o's
 * gradient, as an offset in o's unclipped window: the first element in
 * window order, replaced only by a strictly greater one (ties go to the
 * first; a leading NaN keeps the gradient). */
static void max_pool_argmax_one(const pool_t *q, const __global T *xp,
                                __global int *argp, IDX o, IDX op, IDX oh,
                                IDX ow, const layout_t *lo,
                                const layout_t *li)
{
  win_t r = window_of_output(q, op, oh, ow);
  int best_at = -1;
  ACC best = LOWEST;
  for (IDX p = r.p0; p < r.p1; p++)
    for (IDX h = r.h0; h < r.h1; h++)
      for (IDX w = r.w0; w < r.w1; w++) {
        ACC v = LOAD(xp, at(li, p, h, w));
        if (best_at < 0 || best < v) {
          best = v;
          best_at = (int)(((p - r.fp) * q->win_h + (h - r.fh)) * q->win_w +
                          (w - r.fw));
        }
      }
  argp[o] = best_at;
}
GPU_KERNEL(max_pool_argmax,
           (OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(int, arg)),
           (OCL_PTR(const T, x), OCL_PTR(int, arg)), OUT_IN)

/* The CPU shape: channels last, a row's outputs scan their windows 16
 * channels at a time (contiguous in x and arg), the running maxima in
 * registers (vector ones for float and half); channels first, element by
 * element. */
#define ARGMAX_LANES 16
__kernel void max_pool_argmax_rows(OCL_TENSOR_ARG(const T, x),
                                   OCL_TENSOR_ARG(int, arg), pool_t q)
{
  IDX row = (IDX)get_global_id(0);
  OCL_GUARD(row, q.count);
  IDX n, c0, op, oh;
  split_row(&q, row, q.out_p, q.out_h, &n, &c0, &op, &oh);
  const __global T *xp = OCL_PTR(const T, x);
  __global int *argp = OCL_PTR(int, arg);
  if (q.channels_first) {
    layout_t lo = layout_of(&q, n, c0, q.out_p, q.out_h, q.out_w);
    layout_t li = layout_of(&q, n, c0, q.in_p, q.in_h, q.in_w);
    for (IDX ow = 0; ow < q.out_w; ow++)
      max_pool_argmax_one(&q, xp, argp, at(&lo, op, oh, ow), op, oh, ow, &lo,
                          &li);
    return;
  }
  layout_t lo = layout_of(&q, n, 0, q.out_p, q.out_h, q.out_w);
  layout_t li = layout_of(&q, n, 0, q.in_p, q.in_h, q.in_w);
  for (IDX ow = 0; ow < q.out_w; ow++) {
    win_t r = window_of_output(&q, op, oh, ow);
    __global int *ao = argp + at(&lo, op, oh, ow);
    IDX cb = 0;
#if defined(ACC16) && !defined(T_IS_DOUBLE)
    for (; cb + 16 <= q.depth; cb += 16) {
      ACC16 best = (ACC16)LOWEST;
      int16 best_at = (int16)(-1);
      for (IDX p = r.p0; p < r.p1; p++)
        for (IDX h = r.h0; h < r.h1; h++)
          for (IDX w = r.w0; w < r.w1; w++) {
            ACC16 v = LOAD16(xp + at(&li, p, h, w) + cb);
            int rel = (int)(((p - r.fp) * q.win_h + (h - r.fh)) * q.win_w +
                            (w - r.fw));
            int16 take = best_at < 0 || best < v;
            best = select(best, v, take);
            best_at = select(best_at, (int16)rel, take);
          }
      vstore16(best_at, 0, ao + cb);
    }
#endif
    for (; cb < q.depth; cb += ARGMAX_LANES) {
      IDX lanes = min((IDX)ARGMAX_LANES, q.depth - cb);
      ACC best[ARGMAX_LANES];
      int best_at[ARGMAX_LANES];
      for (IDX j = 0; j < ARGMAX_LANES; j++) {
        best[j] = LOWEST;
        best_at[j] = -1;
      }
      for (IDX p = r.p0; p < r.p1; p++)
        for (IDX h = r.h0; h < r.h1; h++)
          for (IDX w = r.w0; w < r.w1; w++) {
            const __global T *xi = xp + at(&li, p, h, w) + cb;
            int rel = (int)(((p - r.fp) * q.win_h + (h - r.fh)) * q.win_w +
                            (w - r.fw));
            for (IDX j = 0; j < lanes; j++) {
              ACC v = LOAD(xi, j);
              if (best_at[j] < 0 || best[j] < v) {
                best[j] = v;
                best_at[j] = rel;
              }
            }
          }
      for (IDX j = 0; j < lanes; j++)
        ao[cb + j] = best_at[j];
    }
  }
}

/* MaxPoolGrad, pass 2: one input element, the sum in output order of the
 * gradients of the windows that routed theirs to it. */
static void max_pool_grad_one(const pool_t *q, const __global int *argp,
                              const __global T *dyp, __global T *dxp, IDX i,
                              IDX p, IDX h, IDX w, const layout_t *li,
                              const layout_t *lo)
{
  IDX p0, p1, h0, h1, w0, w1;
  windows_of(p, q->str_p, q->pad_p, q->win_p, q->out_p, &p0, &p1);
  windows_of(h, q->str_h, q->pad_h, q->win_h, q->out_h, &h0, &h1);
  windows_of(w, q->str_w, q->pad_w, q->win_w, q->out_w, &w0, &w1);
  ACC acc = 0;
  for (IDX op = p0; op <= p1; op++)
    for (IDX oh = h0; oh <= h1; oh++)
      for (IDX ow = w0; ow <= w1; ow++) {
        IDX o = at(lo, op, oh, ow);
        int mine = (int)(((p - (op * q->str_p - q->pad_p)) * q->win_h +
                          (h - (oh * q->str_h - q->pad_h))) * q->win_w +
                         (w - (ow * q->str_w - q->pad_w)));
        if (argp[o] == mine)
          acc += LOAD(dyp, o);
      }
  STORE(dxp, i, acc);
}
GPU_KERNEL(max_pool_grad,
           (OCL_TENSOR_ARG(const int, arg), OCL_TENSOR_ARG(const T, dy),
            OCL_TENSOR_ARG(T, dx)),
           (OCL_PTR(const int, arg), OCL_PTR(const T, dy), OCL_PTR(T, dx)),
           IN_OUT)

#if defined(T_IS_FLOAT)
/* AvgPoolGrad's CPU shape for float, channels last: an input position
 * takes the windows over it in turn, working out a window's size and its
 * reciprocal once (a division per window and 16 channels kept the core's
 * divider the bottleneck), and adds the window's gradient times it into
 * its dx channels, which stay in the L1 cache between windows. Windows in
 * the element function's order; TensorFlow's CPU kernel also multiplies by
 * the reciprocal. */
static void avg_grad_position(const pool_t *q, const __global float *dyp,
                              __global float *dxi, const layout_t *lo,
                              IDX p0, IDX p1, IDX h0, IDX h1, IDX w0, IDX w1)
{
  IDX depth = q->depth, c = 0;
  for (; c + 16 <= depth; c += 16)
    vstore16((float16)0.0f, 0, dxi + c);
  for (; c < depth; c++)
    dxi[c] = 0.0f;
  for (IDX op = p0; op <= p1; op++)
    for (IDX oh = h0; oh <= h1; oh++)
      for (IDX ow = w0; ow <= w1; ow++) {
        win_t r = window_of_output(q, op, oh, ow);
        float inv =
            1.0f / (float)((r.p1 - r.p0) * (r.h1 - r.h0) * (r.w1 - r.w0));
        const __global float *g = dyp + at(lo, op, oh, ow);
        for (c = 0; c + 16 <= depth; c += 16)
          vstore16(vload16(0, dxi + c) + vload16(0, g + c) * inv, 0, dxi + c);
        for (; c < depth; c++)
          dxi[c] += g[c] * inv;
      }
}
#endif

/* The CPU shape of the gradients' gathers (max_pool_grad: arg given;
 * avg_pool_grad: arg NULL), channels last: a row's input positions sum
 * the windows over them 16 channels at a time in a vector register (float
 * and half; double and the last channels one at a time), contiguous in
 * dy, arg and dx, in the element function's order; float avg_pool_grad's
 * positions take avg_grad_position. */
static void grad_row_last(const pool_t *q, const __global int *argp,
                          const __global T *dyp, __global T *dxp, IDX n,
                          IDX p, IDX h)
{
  IDX depth = q->depth;
  layout_t li = layout_of(q, n, 0, q->in_p, q->in_h, q->in_w);
  layout_t lo = layout_of(q, n, 0, q->out_p, q->out_h, q->out_w);
  IDX p0, p1, h0, h1;
  windows_of(p, q->str_p, q->pad_p, q->win_p, q->out_p, &p0, &p1);
  windows_of(h, q->str_h, q->pad_h, q->win_h, q->out_h, &h0, &h1);
  for (IDX w = 0; w < q->in_w; w++) {
    IDX w0, w1;
    windows_of(w, q->str_w, q->pad_w, q->win_w, q->out_w, &w0, &w1);
    __global T *dxi = dxp + at(&li, p, h, w);
#if defined(T_IS_FLOAT)
    if (argp == NULL) {
      avg_grad_position(q, dyp, dxi, &lo, p0, p1, h0, h1, w0, w1);
      continue;
    }
#endif
    IDX c = 0;
#if defined(ACC16) && !defined(T_IS_DOUBLE)
    for (; c + 16 <= depth; c += 16) {
      ACC16 acc = (ACC16)0;
      for (IDX op = p0; op <= p1; op++)
        for (IDX oh = h0; oh <= h1; oh++)
          for (IDX ow = w0; ow <= w1; ow++) {
            IDX o = at(&lo, op, oh, ow);
            ACC16 g = LOAD16(dyp + o + c);
            if (argp != NULL) {
              int mine = (int)(((p - (op * q->str_p - q->pad_p)) * q->win_h +
                                (h - (oh * q->str_h - q->pad_h))) *
                                   q->win_w +
                               (w - (ow * q->str_w - q->pad_w)));
              acc += select((ACC16)0, g, vload16(0, argp + o + c) == mine);
            } else {
              win_t r = window_of_output(q, op, oh, ow);
              acc += g / (ACC)((r.p1 - r.p0) * (r.h1 - r.h0) * (r.w1 - r.w0));
            }
          }
      STORE16(dxi + c, acc);
    }
#endif
    for (; c < depth; c++) {
      ACC acc = 0;
      for (IDX op = p0; op <= p1; op++)
        for (IDX oh = h0; oh <= h1; oh++)
          for (IDX ow = w0; ow <= w1; ow++) {
            IDX o = at(&lo, op, oh, ow);
            if (argp != NULL) {
              int mine = (int)(((p - (op * q->str_p - q->pad_p)) * q->win_h +
                                (h - (oh * q->str_h - q->pad_h))) *
                                   q->win_w +
                               (w - (ow * q->str_w - q->pad_w)));
              if (argp[o + c] == mine)
                acc += LOAD(dyp, o + c);
            } else {
              win_t r = window_of_output(q, op, oh, ow);
              acc += LOAD(dyp, o + c) /
                     (ACC)((r.p1 - r.p0) * (r.h1 - r.h0) * (r.w1 - r.w0));
            }
          }
      STORE(dxi, c, acc);
    }
  }
}

#define GRAD_ROWS(name, ROWS_PARAMS, ARG, ONE_ARGS)                          \
  __kernel void name##_rows(UNPAREN ROWS_PARAMS, pool_t q)                   \
  {                                                                          \
    IDX row = (IDX)get_global_id(0);                                         \
    OCL_GUARD(row, q.count);                                                 \
    IDX n, c0, p, h;                                                         \
    split_row(&q, row, q.in_p, q.in_h, &n, &c0, &p, &h);                     \
    if (!q.channels_first) {                                                 \
      grad_row_last(&q, ARG, OCL_PTR(const T, dy), OCL_PTR(T, dx), n, p, h); \
      return;                                                                \
    }                                                                        \
    IDX channels = q.channels_first ? 1 : q.depth;                           \
    for (IDX w = 0; w < q.in_w; w++)                                         \
      for (IDX ci = 0; ci < channels; ci++) {                                \
        layout_t li = layout_of(&q, n, c0 + ci, q.in_p, q.in_h, q.in_w);     \
        layout_t lo = layout_of(&q, n, c0 + ci, q.out_p, q.out_h, q.out_w);  \
        name##_one(&q, UNPAREN ONE_ARGS, at(&li, p, h, w), p, h, w, &li,     \
                   &lo);                                                     \
      }                                                                      \
  }
GRAD_ROWS(max_pool_grad,
          (OCL_TENSOR_ARG(const int, arg), OCL_TENSOR_ARG(const T, dy),
           OCL_TENSOR_ARG(T, dx)),
          OCL_PTR(const int, arg),
          (OCL_PTR(const int, arg), OCL_PTR(const T, dy), OCL_PTR(T, dx)))

/* MaxPoolGrad in one pass where windows do not overlap (stride >= window
 * along rows and columns, 2-D): each input element lies in at most one
 * window, so the argmax and the gradient's routing need no int tensor
 * between two launches. Same routing as pass 1 above (first in window
 * order, replaced only by a strictly greater element). The GPU shape: one
 * work-item per input element, which scans its own window (a neighbouring
 * work-item, the next channel, scans the next addresses). */
static void max_pool_grad_tiles_one(const pool_t *q, const __global T *xp,
                                    const __global T *dyp, __global T *dxp,
                                    IDX i, IDX p, IDX h, IDX w,
                                    const layout_t *li, const layout_t *lo)
{
  IDX p0, p1, h0, h1, w0, w1;
  windows_of(p, q->str_p, q->pad_p, q->win_p, q->out_p, &p0, &p1);
  windows_of(h, q->str_h, q->pad_h, q->win_h, q->out_h, &h0, &h1);
  windows_of(w, q->str_w, q->pad_w, q->win_w, q->out_w, &w0, &w1);
  ACC g = 0;
  if (p0 <= p1 && h0 <= h1 && w0 <= w1) {
    win_t r = window_of_output(q, p0, h0, w0);
    IDX best_h = -1, best_w = -1;
    ACC best = LOWEST;
    for (IDX wh = r.h0; wh < r.h1; wh++)
      for (IDX ww = r.w0; ww < r.w1; ww++) {
        ACC v = LOAD(xp, at(li, p, wh, ww));
        if (best_h < 0 || best < v) {
          best = v;
          best_h = wh;
          best_w = ww;
        }
      }
    if (best_h == h && best_w == w) { /* 0 + dy as the two passes: -0 -> +0 */
      g += LOAD(dyp, at(lo, p0, h0, w0));
      /* ReluGrad's product: times 0 keeps a NaN and a sign as it does. */
      if (q->relu_grad)
        g *= best > (ACC)0 ? (ACC)1 : (ACC)0;
    }
  }
  STORE(dxp, i, g);
}
GPU_KERNEL(max_pool_grad_tiles,
           (OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(const T, dy),
            OCL_TENSOR_ARG(T, dx)),
           (OCL_PTR(const T, x), OCL_PTR(const T, dy), OCL_PTR(T, dx)),
           IN_OUT)

/* The next window's clipped start along one axis, or the extent after the
 * last window: window o owns the input from its own start to there (its
 * own elements, then the gap a stride wider than the window leaves). */
static IDX tile_end(IDX o, IDX stride, IDX pad, IDX outs, IDX extent)
{
  return o + 1 < outs ? clamp((o + 1) * stride - pad, (IDX)0, extent)
                      : extent;
}

/* The CPU shape: one work-item per row of windows (n, oh; channels first
 * also c), writing every input row that row owns: each window's maxima
 * found 16 channels at a time in registers (vector ones for float and
 * half), then its elements written
 * (the gradient at the maximum, 0 elsewhere), then the columns and rows
 * that no window holds zeroed. */
__kernel void max_pool_grad_tiles_rows(OCL_TENSOR_ARG(const T, x),
                                       OCL_TENSOR_ARG(const T, dy),
                                       OCL_TENSOR_ARG(T, dx), pool_t q)
{
  IDX row = (IDX)get_global_id(0);
  OCL_GUARD(row, q.count);
  IDX n, c0, op, oh;
  split_row(&q, row, q.out_p, q.out_h, &n, &c0, &op, &oh);
  const __global T *xp = OCL_PTR(const T, x);
  const __global T *dyp = OCL_PTR(const T, dy);
  __global T *dxp = OCL_PTR(T, dx);
  IDX channels = q.channels_first ? 1 : q.depth;
  layout_t li = layout_of(&q, n, c0, q.in_p, q.in_h, q.in_w);
  layout_t lo = layout_of(&q, n, c0, q.out_p, q.out_h, q.out_w);
  IDX row_end = tile_end(oh, q.str_h, q.pad_h, q.out_h, q.in_h);
  for (IDX ow = 0; ow < q.out_w; ow++) {
    win_t r = window_of_output(&q, op, oh, ow);
    IDX col_end = tile_end(ow, q.str_w, q.pad_w, q.out_w, q.in_w);
    const __global T *dyo = dyp + at(&lo, op, oh, ow);
    IDX cb = 0;
#if defined(ACC16) && !defined(T_IS_DOUBLE)
    /* Whole blocks of 16 channels in vector registers (float and half:
     * their comparisons give int16 masks, as the offsets are int16). */
    for (; cb + 16 <= channels; cb += 16) {
      ACC16 best = (ACC16)LOWEST;
      int16 best_at = (int16)(-1);
      int rel = 0;
      for (IDX h = r.h0; h < r.h1; h++)
        for (IDX w = r.w0; w < r.w1; w++, rel++) {
          ACC16 v = LOAD16(xp + at(&li, op, h, w) + cb);
          int16 take = best_at < 0 || best < v;
          best = select(best, v, take);
          best_at = select(best_at, (int16)rel, take);
        }
      /* 0 + dy as the two passes (-0 -> +0); then ReluGrad's product on
       * the maximum, the orig_input there (times 0 leaves a NaN and a sign
       * as it does). */
      ACC16 g = (ACC16)0 + LOAD16(dyo + cb);
      if (q.relu_grad)
        g *= select((ACC16)0, (ACC16)1, best > (ACC16)0);
      rel = 0;
      for (IDX h = r.h0; h < r.h1; h++) {
        for (IDX w = r.w0; w < r.w1; w++, rel++)
          STORE16(dxp + at(&li, op, h, w) + cb,
                  select((ACC16)0, g, best_at == rel));
        for (IDX w = r.w1; w < col_end; w++)
          STORE16(dxp + at(&li, op, h, w) + cb, (ACC16)0);
      }
    }
#endif
    for (; cb < channels; cb += ARGMAX_LANES) {
      IDX lanes = min((IDX)ARGMAX_LANES, channels - cb);
      ACC best[ARGMAX_LANES];
      int best_at[ARGMAX_LANES];
      for (IDX j = 0; j < ARGMAX_LANES; j++) {
        best[j] = LOWEST;
        best_at[j] = -1;
      }
      int rel = 0;
      for (IDX h = r.h0; h < r.h1; h++)
        for (IDX w = r.w0; w < r.w1; w++, rel++) {
          const __global T *xi = xp + at(&li, op, h, w) + cb;
          for (IDX j = 0; j < lanes; j++) {
            ACC v = LOAD(xi, j);
            if (best_at[j] < 0 || best[j] < v) {
              best[j] = v;
              best_at[j] = rel;
            }
          }
        }
      rel = 0;
      for (IDX h = r.h0; h < r.h1; h++) {
        for (IDX w = r.w0; w < r.w1; w++, rel++) {
          __global T *dxi = dxp + at(&li, op, h, w) + cb;
          for (IDX j = 0; j < lanes; j++) {
            ACC g = (ACC)0 + (best_at[j] == rel ? LOAD(dyo, cb + j) : (ACC)0);
            if (q.relu_grad && best_at[j] == rel)
              g *= best[j] > (ACC)0 ? (ACC)1 : (ACC)0;
            STORE(dxi, j, g);
          }
        }
        for (IDX w = r.w1; w < col_end; w++) {
          __global T *dxi = dxp + at(&li, op, h, w) + cb;
          for (IDX j = 0; j < lanes; j++)
            STORE(dxi, j, (ACC)0);
        }
      }
    }
  }
  win_t r = window_of_output(&q, op, oh, 0);
  for (IDX h = r.h1; h < row_end; h++)
    for (IDX w = 0; w < q.in_w; w++) {
      __global T *dxi = dxp + at(&li, op, h, w);
      for (IDX j = 0; j < channels; j++)
        STORE(dxi, j, (ACC)0);
    }
}

/* MaxPool3DGrad as TensorFlow's CPU kernel: every element of a window
 * within 1e-5 of the window's maximum (orig_output) receives the window's
 * gradient, ties included; summed in output order. */
static void max_pool_grad_near_one(const pool_t *q, const __global T *xp,
                                   const __global T *yp,
                                   const __global T *dyp, __global T *dxp,
                                   IDX i, IDX p, IDX h, IDX w,
                                   const layout_t *li, const layout_t *lo)
{
  IDX p0, p1, h0, h1, w0, w1;
  windows_of(p, q->str_p, q->pad_p, q->win_p, q->out_p, &p0, &p1);
  windows_of(h, q->str_h, q->pad_h, q->win_h, q->out_h, &h0, &h1);
  windows_of(w, q->str_w, q->pad_w, q->win_w, q->out_w, &w0, &w1);
  ACC xv = LOAD(xp, i), acc = 0;
  for (IDX op = p0; op <= p1; op++)
    for (IDX oh = h0; oh <= h1; oh++)
      for (IDX ow = w0; ow <= w1; ow++) {
        IDX o = at(lo, op, oh, ow);
        if (fabs(xv - LOAD(yp, o)) < (ACC)1e-5)
          acc += LOAD(dyp, o);
      }
  STORE(dxp, i, acc);
}
GPU_KERNEL(max_pool_grad_near,
           (OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(const T, y),
            OCL_TENSOR_ARG(const T, dy), OCL_TENSOR_ARG(T, dx)),
           (OCL_PTR(const T, x), OCL_PTR(const T, y), OCL_PTR(const T, dy),
            OCL_PTR(T, dx)),
           IN_OUT)

/* The sum of max_pool_grad_near_one for W channels from c of the input
 * pixel at i, in vector registers: the same comparisons and sums in the
 * same order (adding +0 where an element is not near leaves the sum as it
 * is, which never holds -0). */
#define NEAR_GRAD_CHANNELS(W)                                                \
  do {                                                                       \
    ACC##W xv = LOAD##W(xp + i + c), acc = (ACC##W)0;                        \
    for (IDX op = p0; op <= p1; op++)                                        \
      for (IDX oh = h0; oh <= h1; oh++)                                      \
        for (IDX ow = w0; ow <= w1; ow++) {                                  \
          IDX o = at(&lo, op, oh, ow) + c;                                   \
          acc += select((ACC##W)0, LOAD##W(dyp + o),                         \
                        fabs(xv - LOAD##W(yp + o)) < (ACC##W)1e-5);          \
        }                                                                    \
    STORE##W(dxp + i + c, acc);                                              \
  } while (0)

/* The CPU shape: a work-item per input row (n, p, h; channels first also
 * c). Channels last, a pixel's windows are found once for all its
 * channels, which go 16 and then 8 at a time in vector registers, the last
 * ones lane by lane; channels first, element by element. */
__kernel void max_pool_grad_near_rows(OCL_TENSOR_ARG(const T, x),
                                      OCL_TENSOR_ARG(const T, y),
                                      OCL_TENSOR_ARG(const T, dy),
                                      OCL_TENSOR_ARG(T, dx), pool_t q)
{
  IDX row = (IDX)get_global_id(0);
  OCL_GUARD(row, q.count);
  IDX n, c0, p, h;
  split_row(&q, row, q.in_p, q.in_h, &n, &c0, &p, &h);
  const __global T *xp = OCL_PTR(const T, x);
  const __global T *yp = OCL_PTR(const T, y);
  const __global T *dyp = OCL_PTR(const T, dy);
  __global T *dxp = OCL_PTR(T, dx);
  if (q.channels_first) {
    layout_t li = layout_of(&q, n, c0, q.in_p, q.in_h, q.in_w);
    layout_t lo = layout_of(&q, n, c0, q.out_p, q.out_h, q.out_w);
    for (IDX w = 0; w < q.in_w; w++)
      max_pool_grad_near_one(&q, xp, yp, dyp, dxp, at(&li, p, h, w), p, h, w,
                             &li, &lo);
    return;
  }
  layout_t li = layout_of(&q, n, 0, q.in_p, q.in_h, q.in_w);
  layout_t lo = layout_of(&q, n, 0, q.out_p, q.out_h, q.out_w);
  IDX p0, p1, h0, h1;
  windows_of(p, q.str_p, q.pad_p, q.win_p, q.out_p, &p0, &p1);
  windows_of(h, q.str_h, q.pad_h, q.win_h, q.out_h, &h0, &h1);
  for (IDX w = 0; w < q.in_w; w++) {
    IDX w0, w1;
    windows_of(w, q.str_w, q.pad_w, q.win_w, q.out_w, &w0, &w1);
    IDX i = at(&li, p, h, w), c = 0;
#if defined(ACC16)
    for (; c + 16 <= q.depth; c += 16)
      NEAR_GRAD_CHANNELS(16);
    if (c + 8 <= q.depth) {
      NEAR_GRAD_CHANNELS(8);
      c += 8;
    }
#endif
    for (; c < q.depth; c++) {
      ACC xv = LOAD(xp, i + c), acc = 0;
      for (IDX op = p0; op <= p1; op++)
        for (IDX oh = h0; oh <= h1; oh++)
          for (IDX ow = w0; ow <= w1; ow++) {
            IDX o = at(&lo, op, oh, ow) + c;
            if (fabs(xv - LOAD(yp, o)) < (ACC)1e-5)
              acc += LOAD(dyp, o);
          }
      STORE(dxp, i + c, acc);
    }
  }
}

/* One input element: each window holding it passes on its gradient
 * divided by the window's in-bounds element count. */
static void avg_pool_grad_one(const pool_t *q, const __global T *dyp,
                              __global T *dxp, IDX i, IDX p, IDX h, IDX w,
                              const layout_t *li, const layout_t *lo)
{
  IDX p0, p1, h0, h1, w0, w1;
  windows_of(p, q->str_p, q->pad_p, q->win_p, q->out_p, &p0, &p1);
  windows_of(h, q->str_h, q->pad_h, q->win_h, q->out_h, &h0, &h1);
  windows_of(w, q->str_w, q->pad_w, q->win_w, q->out_w, &w0, &w1);
  ACC acc = 0;
  for (IDX op = p0; op <= p1; op++)
    for (IDX oh = h0; oh <= h1; oh++)
      for (IDX ow = w0; ow <= w1; ow++) {
        win_t r = window_of_output(q, op, oh, ow);
        ACC count = (ACC)((r.p1 - r.p0) * (r.h1 - r.h0) * (r.w1 - r.w0));
        acc += LOAD(dyp, at(lo, op, oh, ow)) / count;
      }
  STORE(dxp, i, acc);
}
GPU_KERNEL(avg_pool_grad, (OCL_TENSOR_ARG(const T, dy), OCL_TENSOR_ARG(T, dx)),
           (OCL_PTR(const T, dy), OCL_PTR(T, dx)), IN_OUT)
GRAD_ROWS(avg_pool_grad, (OCL_TENSOR_ARG(const T, dy), OCL_TENSOR_ARG(T, dx)),
          (const __global int *)0, (OCL_PTR(const T, dy), OCL_PTR(T, dx)))

/* MaxPoolGradGrad and MaxPool3DGradGrad as TensorFlow's CPU kernels: output
 * o takes the gradient (an input-shaped tensor) at the first element of its
 * window equal to orig_output[o]; 0 when none is. */
static void max_pool_grad_grad_one(const pool_t *q, const __global T *xp,
                                   const __global T *yp, const __global T *gp,
                                   __global T *outp, IDX o, IDX op, IDX oh,
                                   IDX ow, const layout_t *lo,
                                   const layout_t *li)
{
  win_t r = window_of_output(q, op, oh, ow);
  ACC yv = LOAD(yp, o), result = 0;
  bool found = false;
  for (IDX p = r.p0; p < r.p1 && !found; p++)
    for (IDX h = r.h0; h < r.h1 && !found; h++)
      for (IDX w = r.w0; w < r.w1 && !found; w++) {
        IDX i = at(li, p, h, w);
        if (LOAD(xp, i) == yv) {
          result = LOAD(gp, i);
          found = true;
        }
      }
  STORE(outp, o, result);
}
FORWARD(max_pool_grad_grad,
        (OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(const T, y),
         OCL_TENSOR_ARG(const T, g), OCL_TENSOR_ARG(T, out)),
        (OCL_PTR(const T, x), OCL_PTR(const T, y), OCL_PTR(const T, g),
         OCL_PTR(T, out)))

/* ---- MaxPoolWithArgmax and its gradients ------------------------------------
 * NHWC only. An argmax is the flat index of the chosen input element,
 * ((n * in_h + h) * in_w + w) * depth + c with with_batch (the op's
 * include_batch_in_index), else the same without the n term: at() of the
 * input's layout, less the batch's base. */
static IDX argmax_base(const pool_t *q, IDX n, int with_batch)
{
  return with_batch ? 0 : n * q->in_h * q->in_w * q->depth;
}

/* The forward pass as TensorFlow's kernels (CPU and GPU alike) choose: the
 * first element in window order strictly greater than the lowest finite
 * value and every earlier choice; -1 where none is (a window of NaN or
 * -inf). */
static void max_pool_with_argmax_one(const pool_t *q, const __global T *xp,
                                     __global T *yp, __global long *argp,
                                     int with_batch, IDX o, IDX op, IDX oh,
                                     IDX ow, const layout_t *lo,
                                     const layout_t *li)
{
  win_t r = window_of_output(q, op, oh, ow);
  ACC best = LOWEST;
  long best_at = -1;
  for (IDX h = r.h0; h < r.h1; h++)
    for (IDX w = r.w0; w < r.w1; w++) {
      IDX i = at(li, 0, h, w);
      ACC v = LOAD(xp, i);
      if (v > best) {
        best = v;
        best_at = (long)i;
      }
    }
  IDX n = o / (q->out_h * q->out_w * q->depth);
  STORE(yp, o, best);
  argp[o] = best_at < 0 ? -1 : best_at - (long)argmax_base(q, n, with_batch);
}
FORWARD(max_pool_with_argmax,
        (OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
         OCL_TENSOR_ARG(long, arg), int with_batch),
        (OCL_PTR(const T, x), OCL_PTR(T, y), OCL_PTR(long, arg), with_batch))

/* MaxPoolGradWithArgmax: one input element, the sum in output order of the
 * gradients whose argmax names it. TensorFlow scatters each gradient to
 * its argmax; gathering from the windows over the element is the same for
 * the argmax MaxPoolWithArgmax wrote (always inside the window), and needs
 * no atomics. An argmax outside its window, which TensorFlow's CPU kernel
 * refuses only when it leaves the batch, is ignored. */
static void max_pool_grad_with_argmax_one(const pool_t *q,
                                          const __global T *dyp,
                                          const __global long *argp,
                                          __global T *dxp, int with_batch,
                                          IDX i, IDX p, IDX h, IDX w,
                                          const layout_t *li,
                                          const layout_t *lo)
{
  IDX h0, h1, w0, w1;
  windows_of(h, q->str_h, q->pad_h, q->win_h, q->out_h, &h0, &h1);
  windows_of(w, q->str_w, q->pad_w, q->win_w, q->out_w, &w0, &w1);
  IDX n = i / (q->in_h * q->in_w * q->depth);
  long mine = (long)(i - argmax_base(q, n, with_batch));
  ACC acc = 0;
  for (IDX oh = h0; oh <= h1; oh++)
    for (IDX ow = w0; ow <= w1; ow++) {
      IDX o = at(lo, 0, oh, ow);
      if (argp[o] == mine)
        acc += LOAD(dyp, o);
    }
  STORE(dxp, i, acc);
}
BACKWARD(max_pool_grad_with_argmax,
         (OCL_TENSOR_ARG(const T, dy), OCL_TENSOR_ARG(const long, arg),
          OCL_TENSOR_ARG(T, dx), int with_batch),
         (OCL_PTR(const T, dy), OCL_PTR(const long, arg), OCL_PTR(T, dx),
          with_batch))

/* MaxPoolGradGradWithArgmax: output o is the (input-shaped) gradient at
 * o's argmax; 0 for an argmax outside the input (TensorFlow's GPU kernel
 * reads whatever lies there). */
static void max_pool_grad_grad_with_argmax_one(
    const pool_t *q, const __global T *gp, const __global long *argp,
    __global T *outp, int with_batch, IDX o, IDX op, IDX oh, IDX ow,
    const layout_t *lo, const layout_t *li)
{
  IDX n = o / (q->out_h * q->out_w * q->depth);
  long at_in = argp[o] + (long)argmax_base(q, n, with_batch);
  long in_elements = (long)q->batch * q->in_h * q->in_w * q->depth;
  STORE(outp, o, at_in >= 0 && at_in < in_elements ? LOAD(gp, at_in)
                                                   : (ACC)0);
}
FORWARD(max_pool_grad_grad_with_argmax,
        (OCL_TENSOR_ARG(const T, g), OCL_TENSOR_ARG(const long, arg),
         OCL_TENSOR_ARG(T, out), int with_batch),
        (OCL_PTR(const T, g), OCL_PTR(const long, arg), OCL_PTR(T, out),
         with_batch))

/* ---- LRN and LRNGrad ------------------------------------------------------ */

/* Local response normalisation across the channels of NHWC rows (float and
 * half, computed in float). struct lrn_args32/64 of pool.c. beta_mode: 1
 * for beta 0.5 (rsqrt), 2 for 1 (a reciprocal), else exp(log(n) * -beta),
 * the three forms TensorFlow's CPU kernel takes. */
#if !defined(T_IS_DOUBLE) && !defined(T_IS_BFLOAT16)
typedef struct {
  IDX depth, radius, count, beta_mode;
  float bias, alpha, beta;
} lrn_t;

/* The channels [*lo, *hi) of the window around channel d; radius + d may
 * exceed IDX (LRNGrad does not bound the radius), so nothing adds them. */
static void lrn_window(const lrn_t *q, IDX d, IDX *lo, IDX *hi)
{
  *lo = d > q->radius ? d - q->radius : 0;
  *hi = q->radius >= q->depth - d ? q->depth : d + q->radius + 1;
}

static float lrn_scale(const lrn_t *q, float norm)
{
  if (q->beta_mode == 1)
    return rsqrt(norm);
  if (q->beta_mode == 2)
    return 1.0f / norm;
  return exp(log(norm) * -q->beta);
}

/* The GPU shape: a work-item per element, channels innermost, so that a
 * work-group's reads of a window overlap in cache. */
__kernel void lrn(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y), lrn_t q)
{
  IDX i = (IDX)get_global_id(0);
  OCL_GUARD(i, q.count);
  const __global T *xp = OCL_PTR(const T, x);
  IDX d = i % q.depth, row = i - d, lo, hi;
  lrn_window(&q, d, &lo, &hi);
  float sum = 0.0f;
  for (IDX k = lo; k < hi; k++) {
    float v = LOAD(xp, row + k);
    sum += v * v;
  }
  float norm = sum * q.alpha + q.bias;
  STORE(OCL_PTR(T, y), i, LOAD(xp, i) * lrn_scale(&q, norm));
}

/* The CPU shape: a work-item per row, the window's sum of squares carried
 * along the channels. */
__kernel void lrn_rows(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                       lrn_t q)
{
  IDX row = (IDX)get_global_id(0);
  OCL_GUARD(row, q.count);
  const __global T *xp = OCL_PTR(const T, x) + row * q.depth;
  __global T *yp = OCL_PTR(T, y) + row * q.depth;
  IDX lo, hi;
  lrn_window(&q, 0, &lo, &hi);
  float sum = 0.0f;
  for (IDX k = lo; k < hi; k++) {
    float v = LOAD(xp, k);
    sum += v * v;
  }
  for (IDX d = 0; d < q.depth; d++) {
    if (d > 0) {
      IDX nlo, nhi;
      lrn_window(&q, d, &nlo, &nhi);
      if (nlo > lo) {
        float v = LOAD(xp, lo);
        sum -= v * v;
      }
      if (nhi > hi) {
        float v = LOAD(xp, hi);
        sum += v * v;
      }
      lo = nlo;
      hi = nhi;
    }
    /* A window sum carried in float drifts; recompute now and then so that
     * long rows stay as close to TensorFlow's as short ones. */
    if ((d & 63) == 63) {
      sum = 0.0f;
      for (IDX k = lo; k < hi; k++) {
        float v = LOAD(xp, k);
        sum += v * v;
      }
    }
    float norm = sum * q.alpha + q.bias;
    STORE(yp, d, LOAD(xp, d) * lrn_scale(&q, norm));
  }
}

/* LRNGrad, pass 1, per channel j of a row: with N_j = bias + alpha *
 * (the window's sum of squares), t[j] = g_j * -2 alpha beta * y_j / N_j
 * (every x_k of j's window takes x_k * t[j]) and t[n + j] = g_j * N_j^-beta
 * (x_j's own term). A zero gradient contributes nothing, as TensorFlow's
 * CPU kernel skips it (even where N_j is 0). */
static void lrn_grad_terms_one(const lrn_t *q, const __global T *gp,
                               const __global T *xp, const __global T *yp,
                               __global float *tp, IDX i, IDX row, IDX j)
{
  float g = LOAD(gp, i);
  IDX n = q->count, lo, hi;
  if (g == 0.0f) {
    tp[i] = 0.0f;
    tp[n + i] = 0.0f;
    return;
  }
  lrn_window(q, j, &lo, &hi);
  float sum = 0.0f;
  for (IDX k = lo; k < hi; k++) {
    float v = LOAD(xp, row + k);
    sum += v * v;
  }
  float norm = q->alpha * sum + q->bias;
  tp[i] = -2.0f * q->alpha * q->beta * LOAD(yp, i) / norm * g;
  tp[n + i] = pow(norm, -q->beta) * g;
}

/* Pass 2, per channel k: dx_k = x_k * sum of t[j] over the windows holding
 * k (the same channels: the window is symmetric) + t[n + k]. */
static void lrn_grad_sum_one(const lrn_t *q, const __global T *xp,
                             const __global float *tp, __global T *dxp, IDX i,
                             IDX row, IDX k)
{
  IDX lo, hi;
  lrn_window(q, k, &lo, &hi);
  float sum = 0.0f;
  for (IDX j = lo; j < hi; j++)
    sum += tp[row + j];
  STORE(dxp, i, LOAD(xp, i) * sum + tp[q->count + i]);
}

/* In both passes count is the element count (t's halves are count long);
 * the GPU shape takes a work-item per element, the CPU shape (rows_t) one
 * per row. */
__kernel void lrn_grad_terms(OCL_TENSOR_ARG(const T, g),
                             OCL_TENSOR_ARG(const T, x),
                             OCL_TENSOR_ARG(const T, y),
                             OCL_TENSOR_ARG(float, t), lrn_t q)
{
  IDX i = (IDX)get_global_id(0);
  OCL_GUARD(i, q.count);
  IDX j = i % q.depth;
  lrn_grad_terms_one(&q, OCL_PTR(const T, g), OCL_PTR(const T, x),
                     OCL_PTR(const T, y), OCL_PTR(float, t), i, i - j, j);
}

__kernel void lrn_grad_terms_rows(OCL_TENSOR_ARG(const T, g),
                                  OCL_TENSOR_ARG(const T, x),
                                  OCL_TENSOR_ARG(const T, y),
                                  OCL_TENSOR_ARG(float, t), lrn_t q)
{
  IDX row = (IDX)get_global_id(0) * q.depth;
  OCL_GUARD(row, q.count);
  for (IDX j = 0; j < q.depth; j++)
    lrn_grad_terms_one(&q, OCL_PTR(const T, g), OCL_PTR(const T, x),
                       OCL_PTR(const T, y), OCL_PTR(float, t), row + j, row,
                       j);
}

__kernel void lrn_grad_sum(OCL_TENSOR_ARG(const T, x),
                           OCL_TENSOR_ARG(const float, t),
                           OCL_TENSOR_ARG(T, dx), lrn_t q)
{
  IDX i = (IDX)get_global_id(0);
  OCL_GUARD(i, q.count);
  IDX k = i % q.depth;
  lrn_grad_sum_one(&q, OCL_PTR(const T, x), OCL_PTR(const float, t),
                   OCL_PTR(T, dx), i, i - k, k);
}

__kernel void lrn_grad_sum_rows(OCL_TENSOR_ARG(const T, x),
                                OCL_TENSOR_ARG(const float, t),
                                OCL_TENSOR_ARG(T, dx), lrn_t q)
{
  IDX row = (IDX)get_global_id(0) * q.depth;
  OCL_GUARD(row, q.count);
  for (IDX k = 0; k < q.depth; k++)
    lrn_grad_sum_one(&q, OCL_PTR(const T, x), OCL_PTR(const float, t),
                     OCL_PTR(T, dx), row + k, row, k);
}
#endif
