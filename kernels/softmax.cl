/* Softmax, LogSoftmax and the softmax cross-entropy losses, row by row over
 * the last dim.
 *
 * Built once per storage type: -DT=float|half; half is stored as half and
 * computed in float. Every op has two kernels with one body:
 *  _rows:  one work-item per row (short rows);
 *  _group: one work-group per row, partial results folded in local memory
 *          (long rows, GPUs).
 * Softmax and LogSoftmax have a third, softmax_rows_vec, for long rows on
 * CPU devices: a work-item per row on 16-wide vectors, so that exp runs
 * vectorised (14x the _group kernel on PoCL).
 * The formulas are TensorFlow's (XentEigenImpl, SoftmaxEigenImpl): shift by
 * the row max, so a row holding +Inf, or only -Inf, or a NaN comes out NaN
 * as in TensorFlow. */
#include "common.clh"

#if defined(T_IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define LOAD16(p, i) vload_half16(0, (p) + (i))
#define STORE16(p, i, v) vstore_half16_rte((v), 0, (p) + (i))
#else
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOAD16(p, i) vload16(0, (p) + (i))
#define STORE16(p, i, v) vstore16((v), 0, (p) + (i))
#endif

#define MAX_NAN(a, b) ((isnan(b) || (b) > (a)) ? (b) : (a))

/* Both helpers are called by every work-item of the group; the leading
 * barrier keeps the previous call's readers of scratch[0] safe. */
static float group_max(float v, long lid, long ls, __local float *scratch)
{
  barrier(CLK_LOCAL_MEM_FENCE);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long step = ls / 2; step > 0; step /= 2) {
    if (lid < step)
      scratch[lid] = MAX_NAN(scratch[lid], scratch[lid + step]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}

static float group_sum(float v, long lid, long ls, __local float *scratch)
{
  barrier(CLK_LOCAL_MEM_FENCE);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long step = ls / 2; step > 0; step /= 2) {
    if (lid < step)
      scratch[lid] += scratch[lid + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}

#define ITEM_ONLY(v) (v)
#define GROUP_MAX(v) group_max((v), lid, ls, scratch)
#define GROUP_SUM(v) group_sum((v), lid, ls, scratch)

/* Row `o` of [rows, n]; work-item lid of ls takes columns lid, lid+ls, ... */
#define ROW_MAX_SUM(RMAX, RSUM, XP, XI)                                       \
  float m = -INFINITY;                                                        \
  for (long c = lid; c < n; c += ls)                                          \
    m = MAX_NAN(m, LOAD(XP, XI));                                             \
  m = RMAX(m);                                                                \
  float s = 0.0f;                                                             \
  for (long c = lid; c < n; c += ls)                                          \
    s += exp(LOAD(XP, XI) - m);                                               \
  s = RSUM(s);

/* Softmax = exp(x - max) * (1 / sum); LogSoftmax = (x - max) - log(sum). */
#define SOFTMAX_BODY(RMAX, RSUM)                                              \
  const __global T *xp = OCL_PTR(const T, x);                                 \
  __global T *yp = OCL_PTR(T, y);                                             \
  long base = o * n;                                                          \
  ROW_MAX_SUM(RMAX, RSUM, xp, base + c)                                       \
  if (log_softmax) {                                                          \
    float log_sum = log(s);                                                   \
    for (long c = lid; c < n; c += ls)                                        \
      STORE(yp, base + c, (LOAD(xp, base + c) - m) - log_sum);                \
  } else {                                                                    \
    float inv = 1.0f / s;                                                     \
    for (long c = lid; c < n; c += ls)                                        \
      STORE(yp, base + c, exp(LOAD(xp, base + c) - m) * inv);                 \
  }

__kernel void softmax_rows(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                           long n, int log_softmax, long rows)
{
  long o = get_global_id(0);
  OCL_GUARD(o, rows);
  const long lid = 0, ls = 1;
  SOFTMAX_BODY(ITEM_ONLY, ITEM_ONLY)
}

__kernel void softmax_group(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                            long n, int log_softmax, __local float *scratch)
{
  long o = get_group_id(0);
  long lid = get_local_id(0), ls = get_local_size(0);
  SOFTMAX_BODY(GROUP_MAX, GROUP_SUM)
}

/* n >= 16. MAX_NAN works lane by lane on vectors (?: selects). */
__kernel void softmax_rows_vec(OCL_TENSOR_ARG(const T, x),
                               OCL_TENSOR_ARG(T, y), long n, int log_softmax,
                               long rows)
{
  long o = get_global_id(0);
  OCL_GUARD(o, rows);
  const __global T *xp = OCL_PTR(const T, x) + o * n;
  __global T *yp = OCL_PTR(T, y) + o * n;
  long full = n / 16 * 16;
  float lanes[16];
  float16 mv = LOAD16(xp, 0);
  for (long c = 16; c < full; c += 16) {
    float16 v = LOAD16(xp, c);
    mv = MAX_NAN(mv, v);
  }
  vstore16(mv, 0, lanes);
  float m = lanes[0];
  for (int l = 1; l < 16; l++)
    m = MAX_NAN(m, lanes[l]);
  for (long c = full; c < n; c++)
    m = MAX_NAN(m, LOAD(xp, c));
  float16 sv = 0.0f;
  for (long c = 0; c < full; c += 16)
    sv += exp(LOAD16(xp, c) - m);
  vstore16(sv, 0, lanes);
  float s = 0.0f;
  for (int l = 0; l < 16; l++)
    s += lanes[l];
  for (long c = full; c < n; c++)
    s += exp(LOAD(xp, c) - m);
  if (log_softmax) {
    float log_sum = log(s);
    for (long c = 0; c < full; c += 16)
      STORE16(yp, c, (LOAD16(xp, c) - m) - log_sum);
    for (long c = full; c < n; c++)
      STORE(yp, c, (LOAD(xp, c) - m) - log_sum);
  } else {
    float inv = 1.0f / s;
    for (long c = 0; c < full; c += 16)
      STORE16(yp, c, exp(LOAD16(xp, c) - m) * inv);
    for (long c = full; c < n; c++)
      STORE(yp, c, exp(LOAD(xp, c) - m) * inv);
  }
}

/* SoftmaxCrossEntropyWithLogits, features and labels addressed through
 * (row, column) strides so either may be broadcast:
 *   loss = sum(labels * (log(sum) - (f - max)))
 *   backprop = exp(f - max) / sum - labels */
#define XENT_BODY(RMAX, RSUM)                                                 \
  const __global T *fp = OCL_PTR(const T, features);                          \
  const __global T *lp = OCL_PTR(const T, labels);                            \
  __global T *bp = OCL_PTR(T, backprop);                                      \
  ROW_MAX_SUM(RMAX, RSUM, fp, o * f_rs + c * f_cs)                            \
  float log_sum = log(s), part = 0.0f;                                        \
  for (long c = lid; c < n; c += ls) {                                        \
    float shifted = LOAD(fp, o * f_rs + c * f_cs) - m;                        \
    float label = LOAD(lp, o * l_rs + c * l_cs);                              \
    part += label * (log_sum - shifted);                                      \
    STORE(bp, o * n + c, exp(shifted) / s - label);                           \
  }                                                                           \
  part = RSUM(part);                                                          \
  if (lid == 0)                                                               \
    STORE(OCL_PTR(T, loss), o, part);

#define XENT_ARGS                                                             \
  OCL_TENSOR_ARG(const T, features), OCL_TENSOR_ARG(const T, labels),         \
      OCL_TENSOR_ARG(T, loss), OCL_TENSOR_ARG(T, backprop), long n,           \
      long f_rs, long f_cs, long l_rs, long l_cs

__kernel void xent_rows(XENT_ARGS, long rows)
{
  long o = get_global_id(0);
  OCL_GUARD(o, rows);
  const long lid = 0, ls = 1;
  XENT_BODY(ITEM_ONLY, ITEM_ONLY)
}

__kernel void xent_group(XENT_ARGS, __local float *scratch)
{
  long o = get_group_id(0);
  long lid = get_local_id(0), ls = get_local_size(0);
  XENT_BODY(GROUP_MAX, GROUP_SUM)
}

/* SparseSoftmaxCrossEntropyWithLogits: labels int32 or int64 (labels64).
 * An out-of-range label makes its row's loss and backprop NaN, as
 * TensorFlow's GPU kernel does (the CPU kernel fails the op, which needs
 * the labels on the host). */
#define SPARSE_BODY(RMAX, RSUM)                                               \
  const __global T *fp = OCL_PTR(const T, features);                          \
  __global T *bp = OCL_PTR(T, backprop);                                      \
  long label = labels64 ? ((const __global long *)OCL_PTR(const int,          \
                                                          labels))[o]         \
                        : (long)OCL_PTR(const int, labels)[o];                \
  bool valid = label >= 0 && label < n;                                       \
  long base = o * n;                                                          \
  ROW_MAX_SUM(RMAX, RSUM, fp, base + c)                                       \
  for (long c = lid; c < n; c += ls) {                                        \
    float shifted = LOAD(fp, base + c) - m;                                   \
    float g = exp(shifted) / s - (c == label ? 1.0f : 0.0f);                  \
    STORE(bp, base + c, valid ? g : NAN);                                     \
  }                                                                           \
  if (lid == 0)                                                               \
    STORE(OCL_PTR(T, loss), o,                                                \
          valid ? log(s) - (LOAD(fp, base + label) - m) : NAN);

#define SPARSE_ARGS                                                           \
  OCL_TENSOR_ARG(const T, features), OCL_TENSOR_ARG(const int, labels),       \
      OCL_TENSOR_ARG(T, loss), OCL_TENSOR_ARG(T, backprop), long n,           \
      int labels64

__kernel void sparse_xent_rows(SPARSE_ARGS, long rows)
{
  long o = get_global_id(0);
  OCL_GUARD(o, rows);
  const long lid = 0, ls = 1;
  SPARSE_BODY(ITEM_ONLY, ITEM_ONLY)
}

__kernel void sparse_xent_group(SPARSE_ARGS, __local float *scratch)
{
  long o = get_group_id(0);
  long lid = get_local_id(0), ls = get_local_size(0);
  SPARSE_BODY(GROUP_MAX, GROUP_SUM)
}
