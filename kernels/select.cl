/* TopKV2 (select.c). Each row's elements become 64-bit keys whose ascending
 * order is TensorFlow's: value descending, then index ascending (the lower
 * index first among equal values). The high word is the value's bits
 * mapped to an unsigned order and inverted, the low word the index; a row
 * is padded to a power of two with keys above every real one. The rows are
 * sorted (bitonic: a work-group's share in local memory, the longer strides
 * in global steps), then the first k keys name the outputs.
 *
 * Values order as TensorFlow's GPU kernel orders them (a radix sort of
 * the same mapping): NaN above +inf; -0 is taken as +0 so that zeros tie
 * and keep index order, as on the CPU. */
#include "common.clh"

#if !defined(WHERE) && !defined(IN_TOP_K)
/* T is the storage type: ushort for half (read through vload_half, so
 * that devices without cl_khr_fp16 take it too), moved as it is. */
static uint ordered_bits(__global const T *x, uint i)
{
#if defined(T_IS_INT)
  return as_uint(x[i]) ^ 0x80000000u;
#else
#if defined(T_IS_HALF)
  float v = vload_half(i, (__global const half *)x);
#else
  float v = x[i];
#endif
  uint u = v == 0.0f ? 0u : as_uint(v);
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
#endif
}

/* keys[row * npad + j]: the key of x[row * n + j], or all ones past n. */
__kernel void topk_keys(OCL_TENSOR_ARG(const T, x),
                        OCL_TENSOR_ARG(ulong, keys), uint n, uint npad,
                        uint total)
{
  uint g = get_global_id(0);
  OCL_GUARD(g, total);
  uint row = g / npad, j = g - row * npad;
  ulong key = ~(ulong)0;
  if (j < n) {
    uint hi = ~ordered_bits(OCL_PTR(const T, x), row * n + j);
    key = ((ulong)hi << 32) | j;
  }
  OCL_PTR(ulong, keys)[g] = key;
}

/* One compare-exchange of the bitonic network: pair p of the rows' pairs
 * (npad / 2 per row), stage `size` (the length of the sequences being
 * merged), stride `stride`. Neighbouring work-items touch neighbouring
 * keys. */
__kernel void topk_step(OCL_TENSOR_ARG(ulong, keys), uint npad, uint size,
                        uint stride, uint pairs)
{
  uint p = get_global_id(0);
  OCL_GUARD(p, pairs);
  uint half_row = npad / 2;
  uint row = p / half_row, q = p - row * half_row;
  uint lo = (q / stride) * 2 * stride + q % stride;
  uint hi = lo + stride;
  __global ulong *k = OCL_PTR(ulong, keys) + (ulong)row * npad;
  ulong a = k[lo], b = k[hi];
  bool ascending = (lo & size) == 0;
  if ((a > b) == ascending) {
    k[lo] = b;
    k[hi] = a;
  }
}

/* Every stage and stride below 2 * local size at once, in local memory:
 * a work-group sorts (first == 1) or finishes merging (first == 0, strides
 * from the group's size down) a chunk of 2 * local keys of one row. */
__kernel void topk_local(OCL_TENSOR_ARG(ulong, keys), uint npad, uint size,
                         uint chunks, __local ulong *tile)
{
  uint local_size = get_local_size(0), t = get_local_id(0);
  uint chunk = get_group_id(0);
  if (chunk >= chunks)
    return;
  uint span = 2 * local_size;
  __global ulong *k = OCL_PTR(ulong, keys) + (ulong)chunk * span;
  /* The chunk's offset within its row decides its merge directions. */
  uint base = (uint)(((ulong)chunk * span) % npad);
  tile[t] = k[t];
  tile[t + local_size] = k[t + local_size];
  barrier(CLK_LOCAL_MEM_FENCE);
  uint first_size = size == 0 ? 2 : size;
  uint last_size = size == 0 ? span : size;
  for (uint s = first_size; s <= last_size; s *= 2) {
    for (uint stride = s / 2 < local_size ? s / 2 : local_size; stride > 0;
         stride /= 2) {
      uint lo = (t / stride) * 2 * stride + t % stride;
      uint hi = lo + stride;
      ulong a = tile[lo], b = tile[hi];
      bool ascending = ((base + lo) & s) == 0;
      if ((a > b) == ascending) {
        tile[lo] = b;
        tile[hi] = a;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  k[t] = tile[t];
  k[t + local_size] = tile[t + local_size];
}

/* The first k keys of each row: values and int32 indices. */
__kernel void topk_take(OCL_TENSOR_ARG(const T, x),
                        OCL_TENSOR_ARG(const ulong, keys),
                        OCL_TENSOR_ARG(T, values), OCL_TENSOR_ARG(int, indices),
                        uint n, uint npad, uint k, uint total)
{
  uint g = get_global_id(0);
  OCL_GUARD(g, total);
  uint row = g / k, i = g - row * k;
  uint j = (uint)OCL_PTR(const ulong, keys)[row * npad + i];
  OCL_PTR(T, values)[g] = OCL_PTR(const T, x)[row * n + j];
  OCL_PTR(int, indices)[g] = (int)j;
}

/* The CPU shape for small k: a work-item per row keeps the row's best k
 * keys sorted in private memory (insertion), one pass over the row. */
#define TOPK_SMALL 16
__kernel void topk_small(OCL_TENSOR_ARG(const T, x),
                         OCL_TENSOR_ARG(T, values),
                         OCL_TENSOR_ARG(int, indices), uint n, uint k,
                         uint rows)
{
  uint row = get_global_id(0);
  OCL_GUARD(row, rows);
  __global const T *xr = OCL_PTR(const T, x) + (ulong)row * n;
  ulong best[TOPK_SMALL];
  uint count = 0;
  for (uint j = 0; j < n; j++) {
    ulong key = ((ulong)(~ordered_bits(xr, j)) << 32) | j;
    if (count == k && key >= best[k - 1])
      continue;
    uint at = count < k ? count++ : k - 1;
    while (at > 0 && best[at - 1] > key) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = key;
  }
  for (uint i = 0; i < k; i++) {
    uint j = (uint)best[i];
    OCL_PTR(T, values)[(ulong)row * k + i] = xr[j];
    OCL_PTR(int, indices)[(ulong)row * k + i] = (int)j;
  }
}

/* ---- Unique and UniqueWithCounts (select.c) ---------------------------------
 * The values sorted with their indices (keys as TopKV2's, ascending: equal
 * values adjacent, the lowest index first), then: a segment of equal
 * values starts where a value differs from the one before (NaN differs from
 * everything, so every NaN is a value of its own; -0 equals +0 in float,
 * not in half, where TensorFlow's CPU kernel hashes the bits of a value
 * that compares equal: -0 and +0 fall apart there), its head
 * is the value's first occurrence; Where's compaction lists the heads in
 * input order (the uniques' order) and in sorted order (the segments). */
static bool same_value(__global const T *x, uint a, uint b)
{
#if defined(T_IS_HALF)
  return x[a] == x[b] && !isnan(vload_half(a, (__global const half *)x));
#else
  return x[a] == x[b];
#endif
}

/* A key's value half: ordered_bits, with half's -0 below +0 rather than
 * equal to it. */
static uint unique_bits(__global const T *x, uint i)
{
#if defined(T_IS_HALF)
  uint u = as_uint(vload_half(i, (__global const half *)x));
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
#else
  return ordered_bits(x, i);
#endif
}

/* keys[j]: value then index, ascending; all ones past n. */
__kernel void unique_keys(OCL_TENSOR_ARG(const T, x),
                          OCL_TENSOR_ARG(ulong, keys), uint n, uint npad)
{
  uint j = get_global_id(0);
  OCL_GUARD(j, npad);
  OCL_PTR(ulong, keys)[j] =
      j < n ? ((ulong)unique_bits(OCL_PTR(const T, x), j) << 32) | j
            : ~(ulong)0;
}

/* heads[s]: sorted position s starts a segment; firsts[j]: input element j
 * is its value's first occurrence. */
__kernel void unique_flags(OCL_TENSOR_ARG(const T, x),
                           OCL_TENSOR_ARG(const ulong, keys),
                           OCL_TENSOR_ARG(uchar, heads),
                           OCL_TENSOR_ARG(uchar, firsts), uint n)
{
  uint s = get_global_id(0);
  OCL_GUARD(s, n);
  __global const ulong *k = OCL_PTR(const ulong, keys);
  uint j = (uint)k[s];
  bool head = s == 0 || !same_value(OCL_PTR(const T, x), j, (uint)k[s - 1]);
  OCL_PTR(uchar, heads)[s] = head;
  OCL_PTR(uchar, firsts)[j] = head;
}

/* y[u] = x[firsts[u]] (the bits as they are), and the unique number of
 * each first occurrence. */
__kernel void unique_values(OCL_TENSOR_ARG(const T, x),
                            OCL_TENSOR_ARG(const long, firsts),
                            OCL_TENSOR_ARG(T, y), OCL_TENSOR_ARG(uint, uid),
                            uint uniques)
{
  uint u = get_global_id(0);
  OCL_GUARD(u, uniques);
  uint j = (uint)OCL_PTR(const long, firsts)[u];
  OCL_PTR(T, y)[u] = OCL_PTR(const T, x)[j];
  OCL_PTR(uint, uid)[j] = u;
}

/* The segment holding sorted position s: the last start at or before it. */
static uint segment_of(__global const long *starts, uint segments, uint s)
{
  uint lo = 0, hi = segments - 1;
  while (lo < hi) {
    uint mid = hi - (hi - lo) / 2;
    if ((uint)starts[mid] <= s)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* idx[j] for the element at sorted position s: its segment head's unique
 * number; count[u]: its segment's length. IDX_T is out_idx's type. */
#define UNIQUE_INDEX(IDX_T)                                                   \
  __kernel void unique_index_##IDX_T(                                        \
      OCL_TENSOR_ARG(const ulong, keys), OCL_TENSOR_ARG(const long, starts), \
      OCL_TENSOR_ARG(const uint, uid), OCL_TENSOR_ARG(IDX_T, idx), uint n,   \
      uint segments)                                                         \
  {                                                                          \
    uint s = get_global_id(0);                                               \
    OCL_GUARD(s, n);                                                         \
    __global const ulong *k = OCL_PTR(const ulong, keys);                    \
    __global const long *st = OCL_PTR(const long, starts);                   \
    uint head = (uint)k[st[segment_of(st, segments, s)]];                    \
    OCL_PTR(IDX_T, idx)[(uint)k[s]] = (IDX_T)OCL_PTR(const uint, uid)[head]; \
  }                                                                          \
  __kernel void unique_counts_##IDX_T(                                       \
      OCL_TENSOR_ARG(const ulong, keys), OCL_TENSOR_ARG(const long, starts), \
      OCL_TENSOR_ARG(const uint, uid), OCL_TENSOR_ARG(IDX_T, count), uint n, \
      uint segments)                                                         \
  {                                                                          \
    uint g = get_global_id(0);                                               \
    OCL_GUARD(g, segments);                                                  \
    __global const long *st = OCL_PTR(const long, starts);                   \
    ulong end = g + 1 < segments ? (ulong)st[g + 1] : (ulong)n;              \
    uint head = (uint)OCL_PTR(const ulong, keys)[st[g]];                     \
    OCL_PTR(IDX_T, count)[OCL_PTR(const uint, uid)[head]] =                  \
        (IDX_T)(end - (ulong)st[g]);                                         \
  }
UNIQUE_INDEX(int)
UNIQUE_INDEX(long)

/* UniqueV2 and UniqueWithCountsV2 along an axis of slices of more than one
 * element: x as [outer, slices, inner]; slice j's representative is the
 * first slice equal to it element by element (itself where none before
 * is: a slice holding NaN equals no other). A work-item per slice walks the
 * slices before it, each comparison stopping at the first difference. */
__kernel void unique_slice_rep(OCL_TENSOR_ARG(const T, x),
                               OCL_TENSOR_ARG(uint, rep),
                               OCL_TENSOR_ARG(uchar, firsts), uint outer,
                               uint slices, uint inner)
{
  uint j = get_global_id(0);
  OCL_GUARD(j, slices);
  __global const T *p = OCL_PTR(const T, x);
  uint found = j;
  for (uint i = 0; i < j && found == j; i++) {
    bool equal = true;
    for (uint o = 0; o < outer && equal; o++) {
      ulong a = ((ulong)o * slices + i) * inner, b = ((ulong)o * slices + j) * inner;
      for (uint q = 0; q < inner && equal; q++)
        equal = same_value(p, (uint)(a + q), (uint)(b + q));
    }
    if (equal)
      found = i;
  }
  OCL_PTR(uint, rep)[j] = found;
  OCL_PTR(uchar, firsts)[j] = found == j;
}

/* uid[first_at[u]] = u. */
__kernel void unique_slice_uid(OCL_TENSOR_ARG(const long, first_at),
                               OCL_TENSOR_ARG(uint, uid), uint uniques)
{
  uint u = get_global_id(0);
  OCL_GUARD(u, uniques);
  OCL_PTR(uint, uid)[(uint)OCL_PTR(const long, first_at)[u]] = u;
}

/* y[o, u, q] = x[o, first_at[u], q], a work-item per element of y. */
__kernel void unique_slice_gather(OCL_TENSOR_ARG(const T, x),
                                  OCL_TENSOR_ARG(const long, first_at),
                                  OCL_TENSOR_ARG(T, y), uint slices,
                                  uint uniques, uint inner, ulong total)
{
  ulong e = get_global_id(0);
  OCL_GUARD(e, total);
  ulong q = e % inner, r = e / inner;
  ulong u = r % uniques, o = r / uniques;
  ulong from = (o * slices + (ulong)OCL_PTR(const long, first_at)[u]) * inner + q;
  OCL_PTR(T, y)[e] = OCL_PTR(const T, x)[from];
}

/* idx[j] = uid[rep[j]]; tally[idx[j]] counted (integer atomics: the
 * totals do not depend on the order). */
#define UNIQUE_SLICE_INDEX(IDX_T)                                            \
  __kernel void unique_slice_index_##IDX_T(                                 \
      OCL_TENSOR_ARG(const uint, rep), OCL_TENSOR_ARG(const uint, uid),     \
      OCL_TENSOR_ARG(IDX_T, idx), OCL_TENSOR_ARG(uint, tally), uint slices) \
  {                                                                         \
    uint j = get_global_id(0);                                              \
    OCL_GUARD(j, slices);                                                   \
    uint u = OCL_PTR(const uint, uid)[OCL_PTR(const uint, rep)[j]];         \
    OCL_PTR(IDX_T, idx)[j] = (IDX_T)u;                                      \
    atomic_inc(OCL_PTR(uint, tally) + u);                                   \
  }                                                                         \
  __kernel void unique_slice_counts_##IDX_T(                                \
      OCL_TENSOR_ARG(const uint, tally), OCL_TENSOR_ARG(IDX_T, count),      \
      uint uniques)                                                         \
  {                                                                         \
    uint u = get_global_id(0);                                              \
    OCL_GUARD(u, uniques);                                                  \
    OCL_PTR(IDX_T, count)[u] = (IDX_T)OCL_PTR(const uint, tally)[u];        \
  }
UNIQUE_SLICE_INDEX(int)
UNIQUE_SLICE_INDEX(long)
#endif /* !WHERE && !IN_TOP_K */

#if defined(WHERE)
/* Where (select.c): the coordinates of the true (nonzero) elements, in row-
 * major order. A work-group counts a chunk of `chunk` elements (its items
 * on neighbouring elements), one work-item turns the counts into offsets,
 * then each work-group writes its chunk's coordinates tile by tile, a tile's
 * order from a scan in local memory. W_T is the element's storage; floats
 * compare as numbers (-0 is false, NaN true). */
#define TRUE_AT(p, i) ((p)[i] != 0)

__kernel void where_count(OCL_TENSOR_ARG(const W_T, x),
                          OCL_TENSOR_ARG(uint, counts), uint n, uint chunk,
                          __local uint *scratch)
{
  uint t = get_local_id(0), local_size = get_local_size(0);
  uint start = get_group_id(0) * chunk;
  uint end = min(start + chunk, n);
  __global const W_T *p = OCL_PTR(const W_T, x);
  uint c = 0;
  for (uint i = start + t; i < end; i += local_size)
    c += TRUE_AT(p, i) ? 1u : 0u;
  scratch[t] = c;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = local_size / 2; s > 0; s /= 2) {
    if (t < s)
      scratch[t] += scratch[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0)
    OCL_PTR(uint, counts)[get_group_id(0)] = scratch[0];
}

/* offsets[g]: the true elements before chunk g; offsets[groups]: all. A
 * single work-item: there are few chunks. */
__kernel void where_offsets(OCL_TENSOR_ARG(const uint, counts),
                            OCL_TENSOR_ARG(ulong, offsets), uint groups)
{
  if (get_global_id(0) != 0)
    return;
  __global const uint *c = OCL_PTR(const uint, counts);
  __global ulong *o = OCL_PTR(ulong, offsets);
  ulong sum = 0;
  for (uint g = 0; g < groups; g++) {
    o[g] = sum;
    sum += c[g];
  }
  o[groups] = sum;
}

/* select.c's struct where_dims. */
typedef struct {
  uint strides[8];
  uint rank;
} where_dims_t;

__kernel void where_write(OCL_TENSOR_ARG(const W_T, x),
                          OCL_TENSOR_ARG(const ulong, offsets),
                          OCL_TENSOR_ARG(long, out), uint n, uint chunk,
                          where_dims_t d, __local uint *scan)
{
  uint t = get_local_id(0), local_size = get_local_size(0);
  uint g = get_group_id(0);
  uint start = g * chunk;
  uint end = min(start + chunk, n);
  __global const W_T *p = OCL_PTR(const W_T, x);
  __global long *o = OCL_PTR(long, out);
  ulong base = OCL_PTR(const ulong, offsets)[g];
  for (uint tile = start; tile < end; tile += local_size) {
    uint i = tile + t;
    uint flag = i < end && TRUE_AT(p, i) ? 1u : 0u;
    scan[t] = flag;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < local_size; s *= 2) {
      uint v = t >= s ? scan[t - s] : 0u;
      barrier(CLK_LOCAL_MEM_FENCE);
      scan[t] += v;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (flag) {
      ulong at = (base + scan[t] - 1) * d.rank;
      uint rem = i;
      for (uint k = 0; k < d.rank; k++) {
        o[at + k] = (long)(rem / d.strides[k]);
        rem %= d.strides[k];
      }
    }
    base += scan[local_size - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
#endif /* WHERE */

#if defined(IN_TOP_K)
/* InTopKV2 (select.c): whether each row's target class is among its k most
 * probable, ties at the boundary counted in (fewer than k classes strictly
 * more probable), false wherever the target is out of range or any of the
 * row's predictions is not finite, as TensorFlow's kernels answer. A
 * work-group per row; k is a device scalar of the targets' type. */
__kernel void in_top_k(OCL_TENSOR_ARG(const float, predictions),
                       OCL_TENSOR_ARG(const TARGET_T, targets),
                       OCL_TENSOR_ARG(const TARGET_T, k_tensor),
                       OCL_TENSOR_ARG(uchar, out), uint classes,
                       __local uint *more, __local uint *bad)
{
  uint t = get_local_id(0), local_size = get_local_size(0);
  uint row = get_group_id(0);
  __global const float *p = OCL_PTR(const float, predictions) + (ulong)row * classes;
  TARGET_T target = OCL_PTR(const TARGET_T, targets)[row];
  bool in_range = target >= 0 && target < (TARGET_T)classes;
  float at_target = in_range ? p[target] : 0.0f;
  uint count = 0, nonfinite = in_range && isfinite(at_target) ? 0u : 1u;
  for (uint i = t; i < classes; i += local_size) {
    float v = p[i];
    nonfinite |= isfinite(v) ? 0u : 1u;
    count += v > at_target ? 1u : 0u;
  }
  more[t] = count;
  bad[t] = nonfinite;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = local_size / 2; s > 0; s /= 2) {
    if (t < s) {
      more[t] += more[t + s];
      bad[t] |= bad[t + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) {
    TARGET_T k = OCL_PTR(const TARGET_T, k_tensor)[0];
    OCL_PTR(uchar, out)[row] = !bad[0] && (TARGET_T)more[0] < k ? 1 : 0;
  }
}
#endif /* IN_TOP_K */
