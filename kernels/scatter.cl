/* Sparse updates of resource variables and segment reductions: the
 * arithmetic behind ResourceScatter{Add,Sub,Mul,Div,Min,Max,Update},
 * ResourceScatterNd{Add,Sub,Update}, UnsortedSegment{Sum,Max,Min,Prod} and
 * the element add of TensorList gradients (AddN of DT_VARIANT).
 *
 * Every one of them applies M update rows of W elements to rows of a
 * destination: row j goes to destination row tgt[j] (-1: dropped, an
 * out-of-range index). Rows that name the same destination row are applied
 * in ascending j, one after the other, as TensorFlow's CPU kernels do: the
 * result is deterministic and bit-identical to the CPU's, duplicates
 * included (TensorFlow's GPU kernels use atomics, whose order varies from
 * run to run). Two shapes reach that order:
 *  - CPU: a work-item per group of 16 columns walks all M rows in order
 *    (scatter_serial_*);
 *  - GPU: the (row, j) pairs are sorted on the device (a bitonic sort of
 *    64-bit keys tgt << 32 | j, local memory for the short strides), then
 *    the first work-item of each run of equal rows, one per column, applies
 *    the run in order (scatter_sorted_*): neighbouring work-items on
 *    neighbouring columns, no atomics.
 *
 * Built with -DSORT_ONLY for the key, sort and target kernels (one program
 * for every dtype), else once per storage type: -DT=float|half|ushort
 * (bfloat16)|double|float2 (complex64)|double2 (complex128), or an integer
 * type with -DT_IS_INT -DUT=<its unsigned twin> [-DT_IS_SIGNED], or
 * -DT=ulong2 -DT_MOVE_ONLY for 16-byte Update moves. half and
 * bfloat16 are computed in float and rounded to their type after every
 * step, as TensorFlow's CPU kernels round each operation. */
#include "common.clh"

/* Destination rows: in [0, 2^31) for the sort keys. */
#define NO_ROW (-1)

#ifdef SORT_ONLY

/* ---- Destination rows ------------------------------------------------------ */

/* tgt[j] = indices[j] when it is in [0, rows), else NO_ROW. */
#define TARGETS_INDEX(NAME, IT)                                               \
  __kernel void NAME(OCL_TENSOR_ARG(const IT, indices),                       \
                     OCL_TENSOR_ARG(int, tgt), int m, long rows)              \
  {                                                                           \
    int j = (int)get_global_id(0);                                            \
    OCL_GUARD(j, m);                                                          \
    IT idx = OCL_PTR(const IT, indices)[j];                                   \
    OCL_PTR(int, tgt)[j] = (idx >= 0 && (long)idx < rows) ? (int)idx : NO_ROW; \
  }
TARGETS_INDEX(targets_i32, int)
TARGETS_INDEX(targets_i64, long)

/* The first k dims of a ScatterNd destination (struct nd_args of
 * scatter.c): index tuple j (k values) names row sum idx_d * strides[d]. */
typedef struct {
  long dims[8];
  long strides[8];
  long k;
} nd_t;

#define TARGETS_ND(NAME, IT)                                                  \
  __kernel void NAME(OCL_TENSOR_ARG(const IT, indices),                       \
                     OCL_TENSOR_ARG(int, tgt), int m, nd_t s)                 \
  {                                                                           \
    int j = (int)get_global_id(0);                                            \
    OCL_GUARD(j, m);                                                          \
    __global const IT *idx = OCL_PTR(const IT, indices) + (long)j * s.k;      \
    long row = 0;                                                             \
    bool ok = true;                                                           \
    for (int d = 0; d < s.k; d++) {                                           \
      long v = (long)idx[d];                                                  \
      ok = ok && v >= 0 && v < s.dims[d];                                     \
      row += v * s.strides[d];                                                \
    }                                                                         \
    OCL_PTR(int, tgt)[j] = ok ? (int)row : NO_ROW;                            \
  }
TARGETS_ND(targets_nd_i32, int)
TARGETS_ND(targets_nd_i64, long)

/* ---- The sort --------------------------------------------------------------- */

/* Keys of n (a power of two) slots: row << 32 | j, ULONG_MAX for dropped
 * rows and the padding, which sorts them last. */
__kernel void sort_keys(OCL_TENSOR_ARG(const int, tgt),
                        OCL_TENSOR_ARG(ulong, keys), uint m, uint n)
{
  uint p = (uint)get_global_id(0);
  OCL_GUARD(p, n);
  ulong key = ULONG_MAX;
  if (p < m) {
    int t = OCL_PTR(const int, tgt)[p];
    if (t >= 0)
      key = ((ulong)t << 32) | p;
  }
  OCL_PTR(ulong, keys)[p] = key;
}

/* One compare-exchange of the bitonic network: stage k, distance j, pair t
 * (of n / 2). The direction comes from the global index, so local and
 * global steps make one network. */
static inline void compare_exchange(__local ulong *s, uint a, uint b,
                                    bool ascending)
{
  ulong x = s[a], y = s[b];
  if ((x > y) == ascending) {
    s[a] = y;
    s[b] = x;
  }
}

/* Each work-group sorts its 2 * local-size keys through every stage
 * k <= 2 * local-size, alternating direction by chunk. */
__kernel void sort_local(OCL_TENSOR_ARG(ulong, keys), __local ulong *s)
{
  uint lid = (uint)get_local_id(0);
  uint size = (uint)get_local_size(0);
  uint base = (uint)get_group_id(0) * 2u * size;
  __global ulong *g = OCL_PTR(ulong, keys) + base;
  s[lid] = g[lid];
  s[lid + size] = g[lid + size];
  for (uint k = 2; k <= 2u * size; k <<= 1) {
    for (uint j = k >> 1; j > 0; j >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      uint i = 2u * j * (lid / j) + (lid % j);
      compare_exchange(s, i, i + j, ((base + i) & k) == 0);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  g[lid] = s[lid];
  g[lid + size] = s[lid + size];
}

/* Stage k, distance j >= 2 * local-size: one compare-exchange per
 * work-item in global memory. */
__kernel void sort_global(OCL_TENSOR_ARG(ulong, keys), uint k, uint j,
                          uint half_n)
{
  uint t = (uint)get_global_id(0);
  OCL_GUARD(t, half_n);
  uint i = 2u * j * (t / j) + (t % j);
  __global ulong *g = OCL_PTR(ulong, keys);
  ulong x = g[i], y = g[i + j];
  if ((x > y) == ((i & k) == 0)) {
    g[i] = y;
    g[i + j] = x;
  }
}

/* The rest of stage k, distances local-size down to 1, in local memory. */
__kernel void sort_merge(OCL_TENSOR_ARG(ulong, keys), uint k,
                         __local ulong *s)
{
  uint lid = (uint)get_local_id(0);
  uint size = (uint)get_local_size(0);
  uint base = (uint)get_group_id(0) * 2u * size;
  __global ulong *g = OCL_PTR(ulong, keys) + base;
  s[lid] = g[lid];
  s[lid + size] = g[lid + size];
  for (uint j = size; j > 0; j >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    uint i = 2u * j * (lid / j) + (lid % j);
    compare_exchange(s, i, i + j, ((base + i) & k) == 0);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  g[lid] = s[lid];
  g[lid + size] = s[lid + size];
}

#else /* a storage type */

/* ---- Element arithmetic ---------------------------------------------------- */

#if defined(T_MOVE_ONLY)
typedef T CT;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define ROUND(x) (x)
#elif defined(T_IS_HALF)
typedef float CT;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
/* The value a half holds after a store: each step rounds, as on the CPU. */
static inline float round_to_storage(float x)
{
  ushort bits = ocl_half_bits_rte(x);
  return vload_half(0, (const half *)&bits);
}
#define ROUND(x) round_to_storage(x)
#elif defined(T_IS_BFLOAT16)
typedef float CT;
#define LOAD(p, i) ocl_bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = ocl_float_to_bf16(v))
#define ROUND(x) ocl_bf16_to_float(ocl_float_to_bf16(x))
#else
typedef T CT;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define ROUND(x) (x)
#endif

#define OP_assign(a, u) (u)
#if defined(T_IS_INT)
/* Integers wrap as TensorFlow's do: arithmetic in the unsigned twin. */
#define OP_add(a, u) ((T)((UT)(a) + (UT)(u)))
#define OP_sub(a, u) ((T)((UT)(a) - (UT)(u)))
#define OP_mul(a, u) ((T)((UT)(a) * (UT)(u)))
/* x / 0 is 0 here (TensorFlow's CPU kernel refuses zeros on the host; the
 * device cannot check without waiting), and MIN / -1 wraps, where the CPU
 * would trap. */
#if defined(T_IS_SIGNED)
#define OP_div(a, u)                                                   \
  ((u) == (T)0 ? (T)0                                                  \
               : ((u) == (T)-1 ? (T)((UT)0 - (UT)(a)) : (T)((a) / (u))))
#else
#define OP_div(a, u) ((u) == (T)0 ? (T)0 : (T)((a) / (u)))
#endif
#else
#define OP_add(a, u) ((a) + (u))
#define OP_sub(a, u) ((a) - (u))
#define OP_mul(a, u) ((a) * (u))
#define OP_div(a, u) ((a) / (u))
#endif
/* Eigen's mini/maxi (std::min/max) in TensorFlow's argument order:
 * ResourceScatterMin/Max compute params = min(params, update), so a NaN in
 * params stays and a NaN update is ignored; UnsortedSegmentMin/Max compute
 * output = min(data, output), so a NaN datum wins. */
#define OP_minimum(a, u) ((u) < (a) ? (u) : (a))
#define OP_maximum(a, u) ((a) < (u) ? (u) : (a))
#define OP_seg_min(a, u) ((a) < (u) ? (a) : (u))
#define OP_seg_max(a, u) ((u) < (a) ? (a) : (u))

/* CPU shape: work-item (c, r) owns a block of columns (`cw` wide) of a
 * block of destination rows (`rh` rows) and walks the m update rows in
 * order, applying those that land in its block, along the row. A
 * work-item per 16 columns of every row instead touched a page per update
 * row for 16 floats: UnsortedSegmentSum of [4096, 1024] into 1024 rows
 * took 1.8 ms against TensorFlow CPU's 0.48. Updates row j starts at
 * j * us, column k at k * cs (us = cs = 0: one scalar update).
 *
 * GPU shape: work-item (p, k), p over the sorted keys, k over the columns
 * (neighbouring work-items on neighbouring columns). The first key of each
 * run of one destination row applies the run in order.
 *
 * Each comes with int (32) and long (64) index arithmetic. */
#define SCATTER_OP(OP)     \
  SCATTER_SERIAL(OP, 32)   \
  SCATTER_SERIAL(OP, 64)   \
  SCATTER_SORTED(OP, 32)   \
  SCATTER_SORTED(OP, 64)

#define I32 int
#define I64 long
#define SCATTER_SERIAL(OP, B) SCATTER_SERIAL_(OP, B, I##B)
#define SCATTER_SORTED(OP, B) SCATTER_SORTED_(OP, B, I##B)
#define SCATTER_SERIAL_(OP, B, I)                                             \
  __kernel void scatter_serial##B##_##OP(                                     \
      OCL_TENSOR_ARG(T, dst), OCL_TENSOR_ARG(const T, upd),                   \
      OCL_TENSOR_ARG(const int, tgt), I m, I w, I us, I cs, int rows,         \
      int rh, I cw)                                                           \
  {                                                                           \
    I c0 = (I)get_global_id(0) * cw;                                          \
    int r0 = (int)get_global_id(1) * rh;                                      \
    if (c0 >= w || r0 >= rows)                                                \
      return;                                                                 \
    I c1 = min(c0 + cw, w);                                                   \
    int r1 = min(r0 + rh, rows);                                              \
    /* Updates never alias the destination: restrict lets the compiler      \
     * move the columns as vectors. */                                       \
    __global T *restrict d = OCL_PTR(T, dst);                                 \
    __global const T *restrict u = OCL_PTR(const T, upd);                     \
    __global const int *restrict t = OCL_PTR(const int, tgt);                 \
    for (I j = 0; j < m; j++) {                                               \
      int row = t[j]; /* dropped ones are negative */                         \
      if (row < r0 || row >= r1)                                              \
        continue;                                                             \
      __global T *restrict dr = d + (I)row * w;                               \
      __global const T *restrict ur = u + j * us;                             \
      if (cs == 1) {                                                          \
        for (I k = c0; k < c1; k++)                                           \
          STORE(dr, k, (CT)(OP_##OP((CT)LOAD(dr, k), (CT)LOAD(ur, k))));      \
      } else {                                                                \
        CT v = (CT)LOAD(ur, 0);                                               \
        for (I k = c0; k < c1; k++)                                           \
          STORE(dr, k, (CT)(OP_##OP((CT)LOAD(dr, k), v)));                    \
      }                                                                       \
    }                                                                         \
  }
#define SCATTER_SORTED_(OP, B, I)                                             \
  __kernel void scatter_sorted##B##_##OP(                                     \
      OCL_TENSOR_ARG(T, dst), OCL_TENSOR_ARG(const T, upd),                   \
      OCL_TENSOR_ARG(const ulong, keys), I m, I w, I us, I cs)                \
  {                                                                           \
    I i = (I)get_global_id(0);                                                \
    OCL_GUARD(i, m * w);                                                      \
    I p = i / w;                                                              \
    I k = i - p * w;                                                          \
    __global const ulong *key = OCL_PTR(const ulong, keys);                   \
    ulong kp = key[p];                                                        \
    uint row = (uint)(kp >> 32);                                              \
    if (kp == ULONG_MAX || (p > 0 && (uint)(key[p - 1] >> 32) == row))        \
      return;                                                                 \
    __global T *d = OCL_PTR(T, dst);                                          \
    __global const T *u = OCL_PTR(const T, upd);                              \
    I at = (I)row * w + k;                                                    \
    CT acc = LOAD(d, at);                                                     \
    for (I q = p; q < m; q++) {                                               \
      ulong kq = key[q];                                                      \
      if (kq == ULONG_MAX || (uint)(kq >> 32) != row)                         \
        break;                                                                \
      I j = (I)(uint)kq;                                                      \
      acc = ROUND((CT)(OP_##OP(acc, (CT)LOAD(u, j * us + k * cs))));         \
    }                                                                         \
    STORE(d, at, acc);                                                        \
  }

SCATTER_OP(assign)
#if !defined(T_MOVE_ONLY)
SCATTER_OP(add)
SCATTER_OP(sub)
#endif
#if !defined(T_IS_COMPLEX) && !defined(T_MOVE_ONLY)
SCATTER_OP(mul)
SCATTER_OP(div)
SCATTER_OP(minimum)
SCATTER_OP(maximum)
SCATTER_OP(seg_min)
SCATTER_OP(seg_max)
#endif

#if !defined(T_MOVE_ONLY)
/* out = a + b, element-wise: the tensors inside TensorLists (AddN of
 * DT_VARIANT). half and bfloat16 round once, as Eigen's operator+. */
__kernel void add(OCL_TENSOR_ARG(const T, a), OCL_TENSOR_ARG(const T, b),
                  OCL_TENSOR_ARG(T, out), long n)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  STORE(OCL_PTR(T, out), i,
        (CT)OP_add(LOAD(OCL_PTR(const T, a), i), LOAD(OCL_PTR(const T, b), i)));
}
#endif

#endif /* SORT_ONLY */
