/* Softmax, LogSoftmax and the softmax cross-entropy losses, row by row over
 * the last dim.
 *
 * Built once per storage type: -DT=float|half|double (half is stored as
 * half and computed in float; double, only on devices with cl_khr_fp64,
 * computed in double), and once more with -DIDX_64 for tensors whose
 * element indices do not fit in an int (index arithmetic is 32-bit
 * otherwise). ACC is the compute type, of the maxima, sums and the
 * split rows' statistics.
 * Every op has three shapes with one formula:
 *  _rows:     a work-item per row (short rows, or columns broadcast);
 *  _group:    a work-group per row, partial maxima and sums folded in
 *             local-memory trees (long rows on GPUs);
 *  _rows_vec: a work-item per row on 16-wide vectors (CPU devices, where a
 *             work-item is a thread and explicit vectors reach SIMD).
 * Softmax, LogSoftmax and SparseSoftmaxCrossEntropyWithLogits over few long
 * rows split each row into parts as well: softmax_parts_vec/_group find
 * each part's max m and sum of exp(x - m), softmax_fold combines the parts
 * of a row into its max M, 1 / S and log S (S = sum of exp(x - M)), and an
 * element-wise kernel writes the outputs.
 * The formulas are TensorFlow's (XentEigenImpl, SoftmaxEigenImpl): shift by
 * the row max, so a row holding +Inf, or only -Inf, or a NaN comes out NaN
 * as in TensorFlow. Sums of exp add blocks of four terms as a tree, so that
 * a work-item's run of additions is a quarter as long. */
#if defined(T_IS_DOUBLE)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#include "common.clh"

#ifdef IDX_64
typedef long IDX;
#else
typedef int IDX;
#endif

#if defined(T_IS_DOUBLE)
typedef double ACC;
typedef double16 VACC;
#else
typedef float ACC;
typedef float16 VACC;
#endif

#if defined(T_IS_HALF)
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#define LOAD16(p, i) vload_half16(0, (p) + (i))
#define STORE16(p, i, v) OCL_VSTORE_HALF16((v), 0, (p) + (i))
#else
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOAD16(p, i) vload16(0, (p) + (i))
#define STORE16(p, i, v) vstore16((v), 0, (p) + (i))
#endif

#define MAX_NAN(a, b) ((isnan(b) || (b) > (a)) ? (b) : (a))

/* ---- Work-item and work-group folds --------------------------------------- */

/* The max of p[c * stride] over c = lid, lid + ls, ... < n. */
static ACC item_max(const __global T *p, IDX stride, IDX lid, IDX ls, IDX n)
{
  ACC m = -INFINITY;
  for (IDX c = lid; c < n; c += ls)
    m = MAX_NAN(m, LOAD(p, c * stride));
  return m;
}

/* The sum of exp(p[c * stride] - m) over the same columns. */
static ACC item_sum_exp(const __global T *p, IDX stride, IDX lid, IDX ls,
                        IDX n, ACC m)
{
  ACC s = (ACC)0;
  IDX c = lid;
  for (; c + 3 * ls < n; c += 4 * ls) {
    ACC a = exp(LOAD(p, c * stride) - m);
    ACC b = exp(LOAD(p, (c + ls) * stride) - m);
    ACC e = exp(LOAD(p, (c + 2 * ls) * stride) - m);
    ACC f = exp(LOAD(p, (c + 3 * ls) * stride) - m);
    s += (a + b) + (e + f);
  }
  for (; c < n; c += ls)
    s += exp(LOAD(p, c * stride) - m);
  return s;
}

/* Called by every work-item of the group; the leading barrier keeps the
 * previous call's readers of scratch[0] safe, and each level of the tree
 * reads only slots no work-item writes in it. */
static ACC group_max(ACC v, IDX lid, IDX ls, __local ACC *scratch)
{
  barrier(CLK_LOCAL_MEM_FENCE);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (IDX step = ls / 2; step > 0; step /= 2) {
    if (lid < step)
      scratch[lid] = MAX_NAN(scratch[lid], scratch[lid + step]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}

static ACC group_sum(ACC v, IDX lid, IDX ls, __local ACC *scratch)
{
  barrier(CLK_LOCAL_MEM_FENCE);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (IDX step = ls / 2; step > 0; step /= 2) {
    if (lid < step)
      scratch[lid] += scratch[lid + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}

#define ITEM_ONLY(v) (v)
#define GROUP_MAX(v) group_max((v), lid, ls, scratch)
#define GROUP_SUM(v) group_sum((v), lid, ls, scratch)

/* The max of a contiguous run (n >= 0), 16-wide: a compare and a select
 * per vector, which passes over a NaN after the first vector; the sum of
 * exps that follows every call carries it (exp(NaN - m) is NaN), so the
 * outputs are NaN as TensorFlow's. MAX_NAN's `||` on vectors kept PoCL
 * from vectorising the loop: 4096 rows of 1024 floats took 3x a sum's
 * time. */
static ACC vec_max(const __global T *p, IDX n)
{
  ACC m = -INFINITY;
  IDX c = 0;
  if (n >= 16) {
    VACC mv = LOAD16(p, 0);
    for (c = 16; c + 16 <= n; c += 16) {
      VACC v = LOAD16(p, c);
      mv = select(mv, v, v > mv);
    }
    ACC lanes[16];
    vstore16(mv, 0, lanes);
    m = lanes[0];
    for (int l = 1; l < 16; l++)
      m = MAX_NAN(m, lanes[l]);
  }
  for (; c < n; c++)
    m = MAX_NAN(m, LOAD(p, c));
  return m;
}

/* The sum of exp(p[c] - m) over a contiguous run, 16-wide: blocks of four
 * vectors as a tree, then the lanes as a tree. With `keep`, each exp is
 * stored to out[c] as well (a constant at each call: the compiler makes
 * two loops). */
static ACC vec_sum_exp(const __global T *p, IDX n, ACC m, bool keep,
                       __global T *out)
{
  VACC sv = (ACC)0;
  IDX c = 0;
  for (; c + 64 <= n; c += 64) {
    VACC a = exp(LOAD16(p, c) - m), b = exp(LOAD16(p, c + 16) - m);
    VACC e = exp(LOAD16(p, c + 32) - m), f = exp(LOAD16(p, c + 48) - m);
    if (keep) {
      STORE16(out, c, a);
      STORE16(out, c + 16, b);
      STORE16(out, c + 32, e);
      STORE16(out, c + 48, f);
    }
    sv += (a + b) + (e + f);
  }
  for (; c + 16 <= n; c += 16) {
    VACC a = exp(LOAD16(p, c) - m);
    if (keep)
      STORE16(out, c, a);
    sv += a;
  }
  ACC lanes[16];
  vstore16(sv, 0, lanes);
  for (int w = 8; w > 0; w /= 2)
    for (int l = 0; l < w; l++)
      lanes[l] += lanes[l + w];
  ACC s = lanes[0];
  for (; c < n; c++) {
    ACC a = exp(LOAD(p, c) - m);
    if (keep)
      STORE(out, c, a);
    s += a;
  }
  return s;
}

/* ---- Softmax, LogSoftmax --------------------------------------------------- */

/* Row `o` of [rows, n]; work-item lid of ls takes columns lid, lid+ls, ...
 * Softmax = exp(x - max) * (1 / sum); LogSoftmax = (x - max) - log(sum). */
#define SOFTMAX_BODY(RMAX, RSUM)                                              \
  const __global T *xp = OCL_PTR(const T, x) + o * n;                         \
  __global T *yp = OCL_PTR(T, y) + o * n;                                     \
  ACC m = RMAX(item_max(xp, 1, lid, ls, n));                                  \
  ACC s = RSUM(item_sum_exp(xp, 1, lid, ls, n, m));                           \
  if (log_softmax) {                                                          \
    ACC log_sum = log(s);                                                     \
    for (IDX c = lid; c < n; c += ls)                                         \
      STORE(yp, c, (LOAD(xp, c) - m) - log_sum);                              \
  } else {                                                                    \
    ACC inv = (ACC)1 / s;                                                     \
    for (IDX c = lid; c < n; c += ls)                                         \
      STORE(yp, c, exp(LOAD(xp, c) - m) * inv);                               \
  }

__kernel void softmax_rows(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                           IDX n, int log_softmax, IDX rows)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, rows);
  const IDX lid = 0, ls = 1;
  SOFTMAX_BODY(ITEM_ONLY, ITEM_ONLY)
}

__kernel void softmax_group(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                            IDX n, int log_softmax, __local ACC *scratch)
{
  IDX o = (IDX)get_group_id(0);
  IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);
  SOFTMAX_BODY(GROUP_MAX, GROUP_SUM)
}

__kernel void softmax_rows_vec(OCL_TENSOR_ARG(const T, x),
                               OCL_TENSOR_ARG(T, y), IDX n, int log_softmax,
                               IDX rows)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, rows);
  const __global T *xp = OCL_PTR(const T, x) + o * n;
  __global T *yp = OCL_PTR(T, y) + o * n;
  ACC m = vec_max(xp, n);
  IDX full = n / 16 * 16;
#if !defined(T_IS_HALF)
  /* exp once: kept in y (x's row is read and y's written at each index
   * alike, so y may be x), then scaled there (4096 rows of 1024 floats:
   * 0.93 ms against 1.10 with two exps). A half row would be rounded
   * before the scaling: it takes the exps again. */
  if (!log_softmax) {
    ACC inv = (ACC)1 / vec_sum_exp(xp, n, m, true, yp);
    for (IDX c = 0; c < full; c += 16)
      STORE16(yp, c, LOAD16(yp, c) * inv);
    for (IDX c = full; c < n; c++)
      STORE(yp, c, LOAD(yp, c) * inv);
    return;
  }
#endif
  ACC s = vec_sum_exp(xp, n, m, false, yp);
  if (log_softmax) {
    ACC log_sum = log(s);
    for (IDX c = 0; c < full; c += 16)
      STORE16(yp, c, (LOAD16(xp, c) - m) - log_sum);
    for (IDX c = full; c < n; c++)
      STORE(yp, c, (LOAD(xp, c) - m) - log_sum);
  } else {
    ACC inv = (ACC)1 / s;
    for (IDX c = 0; c < full; c += 16)
      STORE16(yp, c, exp(LOAD16(xp, c) - m) * inv);
    for (IDX c = full; c < n; c++)
      STORE(yp, c, exp(LOAD(xp, c) - m) * inv);
  }
}

/* ---- Rows split into parts --------------------------------------------------- */

/* Part p of row o: columns [p * chunk, min((p + 1) * chunk, n)); its max
 * and sum of exp(x - max) go to stats[(o * parts + p) * 2 + {0, 1}]. */
__kernel void softmax_parts_vec(OCL_TENSOR_ARG(const T, x),
                                OCL_TENSOR_ARG(ACC, stats), IDX n, IDX chunk,
                                IDX parts, IDX items)
{
  IDX g = (IDX)get_global_id(0);
  OCL_GUARD(g, items);
  IDX p = g % parts, o = g / parts;
  IDX c0 = p * chunk, len = min(chunk, n - c0);
  const __global T *xp = OCL_PTR(const T, x) + o * n + c0;
  ACC m = vec_max(xp, len);
  __global ACC *sp = OCL_PTR(ACC, stats) + g * 2;
  sp[0] = m;
  sp[1] = vec_sum_exp(xp, len, m, false, (__global T *)0);
}

__kernel void softmax_parts_group(OCL_TENSOR_ARG(const T, x),
                                  OCL_TENSOR_ARG(ACC, stats), IDX n,
                                  IDX chunk, IDX parts,
                                  __local ACC *scratch)
{
  IDX g = (IDX)get_group_id(0);
  IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);
  IDX p = g % parts, o = g / parts;
  IDX c0 = p * chunk, len = min(chunk, n - c0);
  const __global T *xp = OCL_PTR(const T, x) + o * n + c0;
  ACC m = GROUP_MAX(item_max(xp, 1, lid, ls, len));
  ACC s = GROUP_SUM(item_sum_exp(xp, 1, lid, ls, len, m));
  if (lid == 0) {
    __global ACC *sp = OCL_PTR(ACC, stats) + g * 2;
    sp[0] = m;
    sp[1] = s;
  }
}

/* Row o's parts into row_stats[o * 4 + {0, 1, 2}] = M, 1 / S, log S. A part
 * whose max is -Inf (all -Inf) adds nothing where M is finite; with M -Inf
 * or NaN the outputs come out NaN through x - M, as unsplit. */
__kernel void softmax_fold(OCL_TENSOR_ARG(const ACC, stats),
                           OCL_TENSOR_ARG(ACC, row_stats), IDX parts,
                           IDX rows)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, rows);
  const __global ACC *sp = OCL_PTR(const ACC, stats) + o * parts * 2;
  ACC m = -INFINITY;
  for (IDX p = 0; p < parts; p++)
    m = MAX_NAN(m, sp[p * 2]);
  ACC s = (ACC)0;
  for (IDX p = 0; p < parts; p++)
    if (sp[p * 2] != -INFINITY)
      s += sp[p * 2 + 1] * exp(sp[p * 2] - m);
  __global ACC *rp = OCL_PTR(ACC, row_stats) + o * 4;
  rp[0] = m;
  rp[1] = (ACC)1 / s;
  rp[2] = log(s);
}

/* Element (o, c) of [rows, n]: dim 0 is the column, dim 1 the row. */
__kernel void softmax_apply(OCL_TENSOR_ARG(const T, x),
                            OCL_TENSOR_ARG(const ACC, row_stats),
                            OCL_TENSOR_ARG(T, y), IDX n, int log_softmax,
                            IDX rows)
{
  IDX c = (IDX)get_global_id(0), o = (IDX)get_global_id(1);
  if (c >= n || o >= rows)
    return;
  const __global ACC *rp = OCL_PTR(const ACC, row_stats) + o * 4;
  ACC v = LOAD(OCL_PTR(const T, x), o * n + c) - rp[0];
  STORE(OCL_PTR(T, y), o * n + c, log_softmax ? v - rp[2] : exp(v) * rp[1]);
}

/* ---- SoftmaxCrossEntropyWithLogits ----------------------------------------- */

/* Features and labels addressed through (row, column) strides so either
 * may be broadcast:
 *   loss = sum(labels * (log(sum) - (f - max)))
 *   backprop = exp(f - max) / sum - labels */
#define XENT_BODY(RMAX, RSUM)                                                 \
  const __global T *fp = OCL_PTR(const T, features) + o * f_rs;               \
  const __global T *lp = OCL_PTR(const T, labels) + o * l_rs;                 \
  __global T *bp = OCL_PTR(T, backprop) + o * n;                              \
  ACC m = RMAX(item_max(fp, f_cs, lid, ls, n));                               \
  ACC s = RSUM(item_sum_exp(fp, f_cs, lid, ls, n, m));                        \
  ACC log_sum = log(s), part = (ACC)0;                                        \
  for (IDX c = lid; c < n; c += ls) {                                         \
    ACC shifted = LOAD(fp, c * f_cs) - m;                                     \
    ACC label = LOAD(lp, c * l_cs);                                           \
    part += label * (log_sum - shifted);                                      \
    STORE(bp, c, exp(shifted) / s - label);                                   \
  }                                                                           \
  part = RSUM(part);                                                          \
  if (lid == 0)                                                               \
    STORE(OCL_PTR(T, loss), o, part);

#define XENT_ARGS                                                             \
  OCL_TENSOR_ARG(const T, features), OCL_TENSOR_ARG(const T, labels),         \
      OCL_TENSOR_ARG(T, loss), OCL_TENSOR_ARG(T, backprop), IDX n, IDX f_rs,  \
      IDX f_cs, IDX l_rs, IDX l_cs

__kernel void xent_rows(XENT_ARGS, IDX rows)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, rows);
  const IDX lid = 0, ls = 1;
  XENT_BODY(ITEM_ONLY, ITEM_ONLY)
}

__kernel void xent_group(XENT_ARGS, __local ACC *scratch)
{
  IDX o = (IDX)get_group_id(0);
  IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);
  XENT_BODY(GROUP_MAX, GROUP_SUM)
}

/* Columns not broadcast (f_cs == l_cs == 1). */
__kernel void xent_rows_vec(XENT_ARGS, IDX rows)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, rows);
  const __global T *fp = OCL_PTR(const T, features) + o * f_rs;
  const __global T *lp = OCL_PTR(const T, labels) + o * l_rs;
  __global T *bp = OCL_PTR(T, backprop) + o * n;
  ACC m = vec_max(fp, n);
  ACC s = vec_sum_exp(fp, n, m, false, bp);
  ACC log_sum = log(s), inv = (ACC)1 / s;
  IDX full = n / 16 * 16;
  VACC pv = (ACC)0;
  for (IDX c = 0; c < full; c += 16) {
    VACC shifted = LOAD16(fp, c) - m;
    VACC label = LOAD16(lp, c);
    pv += label * (log_sum - shifted);
    STORE16(bp, c, exp(shifted) * inv - label);
  }
  ACC lanes[16];
  vstore16(pv, 0, lanes);
  for (int w = 8; w > 0; w /= 2)
    for (int l = 0; l < w; l++)
      lanes[l] += lanes[l + w];
  ACC part = lanes[0];
  for (IDX c = full; c < n; c++) {
    ACC shifted = LOAD(fp, c) - m;
    ACC label = LOAD(lp, c);
    part += label * (log_sum - shifted);
    STORE(bp, c, exp(shifted) * inv - label);
  }
  STORE(OCL_PTR(T, loss), o, part);
}

/* ---- SparseSoftmaxCrossEntropyWithLogits ----------------------------------- */

/* Labels int32 or int64 (labels64). An out-of-range label makes its row's
 * loss and backprop NaN, as TensorFlow's GPU kernel does (the CPU kernel
 * fails the op, which needs the labels on the host). */
static long read_label(const __global int *labels, IDX o, int labels64)
{
  return labels64 ? ((const __global long *)labels)[o] : (long)labels[o];
}

#define SPARSE_BODY(RMAX, RSUM)                                               \
  const __global T *fp = OCL_PTR(const T, features) + o * n;                  \
  __global T *bp = OCL_PTR(T, backprop) + o * n;                              \
  long label = read_label(OCL_PTR(const int, labels), o, labels64);           \
  bool valid = label >= 0 && label < n;                                       \
  ACC m = RMAX(item_max(fp, 1, lid, ls, n));                                  \
  ACC s = RSUM(item_sum_exp(fp, 1, lid, ls, n, m));                           \
  ACC inv = (ACC)1 / s;                                                       \
  for (IDX c = lid; c < n; c += ls) {                                         \
    ACC g = exp(LOAD(fp, c) - m) * inv - (c == label ? (ACC)1 : (ACC)0);      \
    STORE(bp, c, valid ? g : NAN);                                            \
  }                                                                           \
  if (lid == 0)                                                               \
    STORE(OCL_PTR(T, loss), o,                                                \
          valid ? log(s) - (LOAD(fp, (IDX)label) - m) : NAN);

#define SPARSE_ARGS                                                           \
  OCL_TENSOR_ARG(const T, features), OCL_TENSOR_ARG(const int, labels),       \
      OCL_TENSOR_ARG(T, loss), OCL_TENSOR_ARG(T, backprop), IDX n,            \
      int labels64

__kernel void sparse_xent_rows(SPARSE_ARGS, IDX rows)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, rows);
  const IDX lid = 0, ls = 1;
  SPARSE_BODY(ITEM_ONLY, ITEM_ONLY)
}

__kernel void sparse_xent_group(SPARSE_ARGS, __local ACC *scratch)
{
  IDX o = (IDX)get_group_id(0);
  IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);
  SPARSE_BODY(GROUP_MAX, GROUP_SUM)
}

__kernel void sparse_xent_rows_vec(SPARSE_ARGS, IDX rows)
{
  IDX o = (IDX)get_global_id(0);
  OCL_GUARD(o, rows);
  const __global T *fp = OCL_PTR(const T, features) + o * n;
  __global T *bp = OCL_PTR(T, backprop) + o * n;
  long label = read_label(OCL_PTR(const int, labels), o, labels64);
  bool valid = label >= 0 && label < n;
  ACC m = vec_max(fp, n);
  ACC at_label = LOAD(fp, valid ? (IDX)label : 0) - m;
  IDX full = n / 16 * 16;
#if defined(T_IS_HALF)
  ACC s = vec_sum_exp(fp, n, m, false, bp);
  ACC inv = valid ? (ACC)1 / s : NAN;
  for (IDX c = 0; c < full; c += 16)
    STORE16(bp, c, exp(LOAD16(fp, c) - m) * inv);
  for (IDX c = full; c < n; c++)
    STORE(bp, c, exp(LOAD(fp, c) - m) * inv);
  if (valid)
    STORE(bp, (IDX)label, exp(at_label) * inv - (ACC)1);
#else
  /* exp once, as softmax_rows_vec's */
  ACC s = vec_sum_exp(fp, n, m, true, bp);
  ACC inv = valid ? (ACC)1 / s : NAN;
  for (IDX c = 0; c < full; c += 16)
    STORE16(bp, c, LOAD16(bp, c) * inv);
  for (IDX c = full; c < n; c++)
    STORE(bp, c, LOAD(bp, c) * inv);
  if (valid)
    STORE(bp, (IDX)label, LOAD(bp, (IDX)label) - (ACC)1);
#endif
  STORE(OCL_PTR(T, loss), o, valid ? log(s) - at_label : NAN);
}

/* The element-wise pass of a split row (softmax_fold's row_stats); the
 * work-item of column 0 writes the row's loss. */
__kernel void sparse_xent_apply(SPARSE_ARGS,
                                OCL_TENSOR_ARG(const ACC, row_stats),
                                IDX rows)
{
  IDX c = (IDX)get_global_id(0), o = (IDX)get_global_id(1);
  if (c >= n || o >= rows)
    return;
  const __global T *fp = OCL_PTR(const T, features) + o * n;
  const __global ACC *rp = OCL_PTR(const ACC, row_stats) + o * 4;
  long label = read_label(OCL_PTR(const int, labels), o, labels64);
  bool valid = label >= 0 && label < n;
  ACC g = exp(LOAD(fp, c) - rp[0]) * rp[1] - (c == label ? (ACC)1 : (ACC)0);
  STORE(OCL_PTR(T, backprop) + o * n, c, valid ? g : NAN);
  if (c == 0)
    STORE(OCL_PTR(T, loss), o,
          valid ? rp[2] - (LOAD(fp, (IDX)label) - rp[0]) : NAN);
}
