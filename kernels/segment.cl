/* Sorted segment reductions: Segment{Sum,Mean,Prod,Min,Max} and
 * SparseSegment{Sum,Mean,SqrtN}[WithNumSegments].
 *
 * The data is seen as [rows, w]; segment_ids (sorted) name the output row
 * of each input row, or of each row `indices` picks (sparse forms). Output
 * row s reduces the input rows whose id is s: a binary search finds that
 * run [lo, hi) of the ids, so no atomics are needed and each output
 * element is written once, empty segments included (their value comes from
 * the host: 0, or 1 for Prod).
 *
 * Built per storage type (-DT_IS_FLOAT|T_IS_HALF|T_IS_BF16|T_IS_DOUBLE);
 * half and bfloat16 accumulate in float, as TensorFlow's GPU kernels do.
 * Ids and indices are read as long whatever their width (ID_IS_LONG,
 * IDX_IS_LONG select the stored width).
 *
 * Shapes:
 *  seg_<op>_cols: GPUs, a 2-D range: dimension 0 the columns (neighbouring
 *    work-items on neighbouring addresses), dimension 1 the segments, so a
 *    work-group is a row block of one segment.
 *  seg_<op>_blocks: CPU devices, a work-item per (segment, 16 adjacent
 *    columns), walking the segment's rows with 16 accumulators so that each
 *    step reads contiguous memory.
 *  seg_<op>_group: GPUs, narrow rows in long segments: a work-group per
 *    (segment, column), its work-items striding over the segment's rows
 *    and combining in a tree in local memory.
 * The first two add in input order, as TensorFlow's CPU kernel does.
 *
 * seg_check: a work-item per id finds the first position where the input
 * is not what TensorFlow accepts (ids decreasing or negative, an index out
 * of range, an id past num_segments), and records the last id; the host
 * reads both at once and, only on failure, replays TensorFlow's checks for
 * its message. */
#include "common.clh"

#ifndef BINCOUNT
#if defined(T_IS_HALF)
typedef half S;
typedef float ACC;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#elif defined(T_IS_BF16)
typedef ushort S;
typedef float ACC;
#define LOAD(p, i) ocl_bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = ocl_float_to_bf16(v))
#elif defined(T_IS_DOUBLE)
typedef double S;
typedef double ACC;
#else
typedef float S;
typedef float ACC;
#endif
#ifndef LOAD
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

#ifdef ID_IS_LONG
typedef long ID;
#else
typedef int ID;
#endif
#ifdef IDX_IS_LONG
typedef long IX;
#else
typedef int IX;
#endif

/* The first position in ids[0, n) whose id is >= s (ids sorted). */
static inline long lower_bound(__global const ID *ids, long n, long s)
{
  long lo = 0, hi = n;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if ((long)ids[mid] < s)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* TensorFlow's CPU Min and Max, accumulator a first. Up to 2.21 (as
 * measured on 2.19.1 and 2.21): a NaN element makes the accumulator NaN,
 * and the next element replaces a NaN accumulator, so only a NaN last in
 * its segment shows. From 2.22 any NaN makes the segment NaN (`sticky`,
 * chosen by the host). */
static inline ACC op_sum(ACC a, ACC b, int sticky) { return a + b; }
static inline ACC op_prod(ACC a, ACC b, int sticky) { return a * b; }
static inline ACC op_min(ACC a, ACC b, int sticky)
{
  return sticky && isnan(a) ? a : b >= a ? a : b;
}
static inline ACC op_max(ACC a, ACC b, int sticky)
{
  return sticky && isnan(a) ? a : b <= a ? a : b;
}

/* The finish of a non-empty segment of `count` rows. */
#define FIN_NONE(acc, count) (acc)
#define FIN_MEAN(acc, count) ((acc) / (ACC)(count))
#define FIN_SQRTN(acc, count) ((acc) / sqrt((ACC)(count)))

/* The input row of position i: i itself, or indices[i] (sparse). */
#ifdef SPARSE
#define ROW(i) ((long)indices[i])
#define INDICES_ARG , OCL_TENSOR_ARG(const IX, idx)
#define INDICES_PTR __global const IX *indices = OCL_PTR(const IX, idx);
#else
#define ROW(i) (i)
#define INDICES_ARG
#define INDICES_PTR
#endif

#define BLOCK 16

#define SEG_KERNELS(NAME, OP, FIN)                                       \
  __kernel void NAME##_cols(OCL_TENSOR_ARG(const S, x) INDICES_ARG,           \
                            OCL_TENSOR_ARG(const ID, seg),                    \
                            OCL_TENSOR_ARG(S, y), long n, long segments,      \
                            long w, float empty, int sticky)                              \
  {                                                                           \
    long c = (long)get_global_id(0), s = (long)get_global_id(1);              \
    if (c >= w || s >= segments)                                              \
      return;                                                                 \
    __global const S *in = OCL_PTR(const S, x);                               \
    __global const ID *ids = OCL_PTR(const ID, seg);                          \
    INDICES_PTR                                                               \
    long lo = lower_bound(ids, n, s), hi = lower_bound(ids, n, s + 1);        \
    __global S *out = OCL_PTR(S, y) + s * w + c;                              \
    if (hi == lo) {                                                           \
      STORE(out, 0, (ACC)empty);                                              \
      return;                                                                 \
    }                                                                         \
    /* The first row as it is (a lone row is copied, -0 included). */        \
    ACC acc = LOAD(in, ROW(lo) * w + c);                                      \
    for (long i = lo + 1; i < hi; i++)                                        \
      acc = OP(acc, LOAD(in, ROW(i) * w + c), sticky);                                \
    STORE(out, 0, FIN(acc, hi - lo));                                         \
  }                                                                           \
                                                                              \
  __kernel void NAME##_blocks(OCL_TENSOR_ARG(const S, x) INDICES_ARG,         \
                              OCL_TENSOR_ARG(const ID, seg),                  \
                              OCL_TENSOR_ARG(S, y), long n, long segments,    \
                              long w, float empty, int sticky)                            \
  {                                                                           \
    long blocks = (w + BLOCK - 1) / BLOCK;                                    \
    long gid = (long)get_global_id(0);                                        \
    if (gid >= segments * blocks)                                             \
      return;                                                                 \
    long s = gid / blocks, c0 = (gid - s * blocks) * BLOCK;                   \
    int cw = (int)min(w - c0, (long)BLOCK);                                   \
    __global const S *in = OCL_PTR(const S, x);                               \
    __global S *out = OCL_PTR(S, y) + s * w + c0;                             \
    __global const ID *ids = OCL_PTR(const ID, seg);                          \
    INDICES_PTR                                                               \
    long lo = lower_bound(ids, n, s), hi = lower_bound(ids, n, s + 1);        \
    if (hi == lo) {                                                           \
      for (int j = 0; j < cw; j++)                                            \
        STORE(out, j, (ACC)empty);                                            \
      return;                                                                 \
    }                                                                         \
    ACC acc[BLOCK];                                                           \
    long first = ROW(lo) * w + c0;                                            \
    for (int j = 0; j < BLOCK; j++)                                           \
      acc[j] = j < cw ? LOAD(in, first + j) : (ACC)0;                         \
    for (long i = lo + 1; i < hi; i++) {                                      \
      long at = ROW(i) * w + c0;                                              \
      for (int j = 0; j < cw; j++)                                            \
        acc[j] = OP(acc[j], LOAD(in, at + j), sticky);                                \
    }                                                                         \
    for (int j = 0; j < cw; j++)                                              \
      STORE(out, j, FIN(acc[j], hi - lo));                                    \
  }                                                                           \
                                                                              \
  __kernel void NAME##_group(OCL_TENSOR_ARG(const S, x) INDICES_ARG,          \
                             OCL_TENSOR_ARG(const ID, seg),                   \
                             OCL_TENSOR_ARG(S, y), long n, long segments,     \
                             long w, float empty, int sticky,                 \
                             __local ACC *part, __local int *has)             \
  {                                                                           \
    int lid = (int)get_local_id(0), lsize = (int)get_local_size(0);           \
    long sc = (long)get_global_id(1);                                         \
    if (sc >= segments * w)                                                   \
      return;                                                                 \
    long s = sc / w, c = sc - s * w;                                          \
    __global const S *in = OCL_PTR(const S, x);                               \
    __global const ID *ids = OCL_PTR(const ID, seg);                          \
    INDICES_PTR                                                               \
    long lo = lower_bound(ids, n, s), hi = lower_bound(ids, n, s + 1);        \
    __global S *out = OCL_PTR(S, y) + s * w + c;                              \
    if (hi == lo) {                                                           \
      if (lid == 0)                                                           \
        STORE(out, 0, (ACC)empty);                                            \
      return;                                                                 \
    }                                                                         \
    ACC acc = (ACC)0;                                                         \
    int mine = 0;                                                             \
    for (long i = lo + lid; i < hi; i += lsize) {                             \
      ACC v = LOAD(in, ROW(i) * w + c);                                       \
      acc = mine ? OP(acc, v, sticky) : v;                                    \
      mine = 1;                                                               \
    }                                                                         \
    part[lid] = acc;                                                          \
    has[lid] = mine;                                                          \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
    for (int off = lsize / 2; off > 0; off /= 2) {                            \
      if (lid < off && has[lid + off]) {                                      \
        part[lid] = has[lid] ? OP(part[lid], part[lid + off], sticky)         \
                             : part[lid + off];                               \
        has[lid] = 1;                                                         \
      }                                                                       \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
    }                                                                         \
    if (lid == 0)                                                             \
      STORE(out, 0, FIN(part[0], hi - lo));                                   \
  }


SEG_KERNELS(seg_sum, op_sum, FIN_NONE)
SEG_KERNELS(seg_mean, op_sum, FIN_MEAN)
SEG_KERNELS(seg_sqrtn, op_sum, FIN_SQRTN)
SEG_KERNELS(seg_prod, op_prod, FIN_NONE)
SEG_KERNELS(seg_min, op_min, FIN_NONE)
SEG_KERNELS(seg_max, op_max, FIN_NONE)

/* state: int first_bad (INT_MAX: none; the host fills it), then the last
 * id as a long at byte 8. rows: the input's rows (indices must be below);
 * limit: num_segments, or -1 for none. */
__kernel void seg_check(OCL_TENSOR_ARG(const ID, seg) INDICES_ARG,
                        OCL_TENSOR_ARG(int, st), int n, long rows, long limit)
{
  int i = (int)get_global_id(0);
  if (i >= n)
    return;
  __global const ID *ids = OCL_PTR(const ID, seg);
  __global int *state = OCL_PTR(int, st);
  INDICES_PTR
  long id = (long)ids[i];
  bool bad = id < 0 || (i > 0 && id < (long)ids[i - 1]) ||
             (limit >= 0 && id >= limit);
#ifdef SPARSE
  bad = bad || ROW(i) < 0 || ROW(i) >= rows;
#else
  (void)rows;
#endif
  if (bad)
    atomic_min(state, i);
  if (i == n - 1)
    ((__global long *)state)[1] = id;
}

/* ---- SparseSegment{Sum,Mean,SqrtN}Grad ------------------------------------
 * output[indices[i]] += grad[segment_ids[i]] * scale, scale 1 (Sum),
 * 1 / n (Mean) or 1 / sqrt(n) (SqrtN) for the n ids of that segment
 * (grad_count's).
 * Rows named by several indices add with atomics, in no fixed order (as
 * TensorFlow's GPU kernel); half and bfloat16 add into a float temp that
 * grad_cast rounds once. */
#ifdef SPARSE
#if defined(T_IS_DOUBLE)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
static inline void add_acc(volatile __global ACC *p, ACC v)
{
  /* A first guess of 0 (the accumulator starts zeroed) instead of a plain
   * read, which would race with other work-items' exchanges. */
  ulong old = 0, assumed;
  do {
    assumed = old;
    old = atom_cmpxchg((volatile __global ulong *)p, assumed,
                       as_ulong(as_double(assumed) + v));
  } while (old != assumed);
}
#else
static inline void add_acc(volatile __global ACC *p, ACC v)
{
  uint old = 0, assumed; /* as above */
  do {
    assumed = old;
    old = atomic_cmpxchg((volatile __global uint *)p, assumed,
                         as_uint(as_float(assumed) + v));
  } while (old != assumed);
}
#endif

/* Dimension 0: the columns (neighbouring work-items on neighbouring
 * addresses); dimension 1: the positions. mode: 0 Sum, 1 Mean, 2 SqrtN. */
/* The ids of each segment (Mean, SqrtN), counted as TensorFlow's
 * ComputeScalingFactors counts them: sorted or not. Ids out of range are
 * left out (the host fails those before grad_add runs). */
__kernel void grad_count(OCL_TENSOR_ARG(const ID, seg),
                         OCL_TENSOR_ARG(int, cnt), int n, long segments)
{
  int i = (int)get_global_id(0);
  if (i >= n)
    return;
  long s = (long)OCL_PTR(const ID, seg)[i];
  if (s >= 0 && s < segments)
    atomic_inc(OCL_PTR(int, cnt) + s);
}

/* counts: grad_count's (Mean, SqrtN). rmap (V2, use_map): the output row
 * of each dense row. */
__kernel void grad_add(OCL_TENSOR_ARG(const S, x), OCL_TENSOR_ARG(const IX, idx),
                       OCL_TENSOR_ARG(const ID, seg),
                       OCL_TENSOR_ARG(ACC, acc), long n, long w, int mode,
                       OCL_TENSOR_ARG(const int, counts),
                       OCL_TENSOR_ARG(const int, rmap), int use_map)
{
  long c = (long)get_global_id(0), i = (long)get_global_id(1);
  if (c >= w || i >= n)
    return;
  __global const ID *ids = OCL_PTR(const ID, seg);
  __global const IX *indices = OCL_PTR(const IX, idx);
  long s = (long)ids[i];
  ACC scale = (ACC)1;
  if (mode != 0) {
    ACC k = (ACC)max(OCL_PTR(const int, counts)[s], 1);
    scale = mode == 1 ? (ACC)1 / k : (ACC)1 / sqrt(k);
  }
  ACC v = LOAD(OCL_PTR(const S, x), s * w + c) * scale;
  long row = use_map ? (long)OCL_PTR(const int, rmap)[indices[i]]
                     : (long)indices[i];
  add_acc(OCL_PTR(ACC, acc) + row * w + c, v);
}

#if defined(T_IS_HALF) || defined(T_IS_BF16)
__kernel void grad_cast(OCL_TENSOR_ARG(const float, acc),
                        OCL_TENSOR_ARG(S, y), long n)
{
  long i = (long)get_global_id(0);
  if (i >= n)
    return;
  STORE(OCL_PTR(S, y), i, OCL_PTR(const float, acc)[i]);
}
#endif

/* state: ints first bad segment id position, first bad index position
 * (INT_MAX: none; the host fills them), then the last id as a long at
 * byte 8. segments: grad's rows; rows: output_dim0. */
__kernel void grad_check(OCL_TENSOR_ARG(const ID, seg),
                         OCL_TENSOR_ARG(const IX, idx),
                         OCL_TENSOR_ARG(int, st), int n, long segments,
                         long rows)
{
  int i = (int)get_global_id(0);
  if (i >= n)
    return;
  __global int *state = OCL_PTR(int, st);
  long id = (long)OCL_PTR(const ID, seg)[i];
  long row = (long)OCL_PTR(const IX, idx)[i];
  if (id < 0 || id >= segments)
    atomic_min(state, i);
  if (row < 0 || row >= rows)
    atomic_min(state + 1, i);
  if (i == n - 1)
    ((__global long *)state)[1] = id;
}

/* SparseSegment*GradV2's sorted unique indices: uniq_mark marks the rows
 * indices name (in range: the host checks after), uniq_scan (one
 * work-group, chunks of its size with a carry) turns the marks into each
 * row's output position and writes the count as a long at byte 16 of the
 * state, uniq_write lists the marked rows in order. */
__kernel void uniq_mark(OCL_TENSOR_ARG(const IX, idx), OCL_TENSOR_ARG(int, mk),
                        int n, int m)
{
  int i = (int)get_global_id(0);
  if (i >= n)
    return;
  long row = (long)OCL_PTR(const IX, idx)[i];
  if (row >= 0 && row < m)
    atomic_xchg(OCL_PTR(int, mk) + row, 1);
}

__kernel void uniq_scan(OCL_TENSOR_ARG(const int, mk), OCL_TENSOR_ARG(int, ps),
                        OCL_TENSOR_ARG(long, st), int m, __local int *sums)
{
  int lid = (int)get_local_id(0), lsize = (int)get_local_size(0);
  __global const int *mark = OCL_PTR(const int, mk);
  __global int *pos = OCL_PTR(int, ps);
  int carry = 0;
  for (int start = 0; start < m; start += lsize) {
    int p = start + lid;
    int v = p < m ? mark[p] : 0;
    sums[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < lsize; off <<= 1) {
      int t = lid >= off ? sums[lid - off] : 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      sums[lid] += t;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (p < m)
      pos[p] = carry + sums[lid] - v;
    carry += sums[lsize - 1];
    /* The next chunk overwrites sums. */
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    OCL_PTR(long, st)[2] = carry;
}

__kernel void uniq_write(OCL_TENSOR_ARG(const int, mk),
                         OCL_TENSOR_ARG(const int, ps),
                         OCL_TENSOR_ARG(IX, uq), int m)
{
  int r = (int)get_global_id(0);
  if (r >= m || !OCL_PTR(const int, mk)[r])
    return;
  OCL_PTR(IX, uq)[OCL_PTR(const int, ps)[r]] = (IX)r;
}
#endif /* SPARSE */
#endif /* !BINCOUNT */

/* ---- Bincount, DenseBincount ------------------------------------------------
 * Built per output type (BC_T: int or float) and input width (BC_IDX).
 * A work-item per input element adds its weight (or 1) into its row's bin
 * with an atomic add, in no fixed order, as TensorFlow's GPU kernels;
 * binary_output stores 1 (an atomic exchange: several work-items may name
 * one bin). Values outside [0, size) are dropped, as TensorFlow's GPU
 * kernels drop them. cols: the input's row length (rank 2), else n. */
#ifdef BINCOUNT
#ifdef BC_T_IS_FLOAT
static inline void bc_add(volatile __global float *p, float v)
{
  uint old = 0, assumed; /* a first guess of 0, the bins start zeroed */
  do {
    assumed = old;
    old = atomic_cmpxchg((volatile __global uint *)p, assumed,
                         as_uint(as_float(assumed) + v));
  } while (old != assumed);
}
#else
static inline void bc_add(volatile __global int *p, int v)
{
  atomic_add(p, v);
}
#endif

__kernel void bincount(OCL_TENSOR_ARG(const BC_IDX, arr),
                       OCL_TENSOR_ARG(const BC_T, wt),
                       OCL_TENSOR_ARG(BC_T, bins), long n, long cols,
                       long size, int weighted, int binary)
{
  long i = (long)get_global_id(0);
  if (i >= n)
    return;
  long v = (long)OCL_PTR(const BC_IDX, arr)[i];
  if (v < 0 || v >= size)
    return;
  volatile __global BC_T *bin = OCL_PTR(BC_T, bins) + (i / cols) * size + v;
  if (binary)
    atomic_xchg(bin, (BC_T)1);
  else
    bc_add(bin, weighted ? OCL_PTR(const BC_T, wt)[i] : (BC_T)1);
}
#endif
