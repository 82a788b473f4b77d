/* Scans: Cumsum, Cumprod and CumulativeLogsumexp over the middle extent of
 * [outer, len, inner], with TensorFlow's exclusive and reverse.
 *
 * Built per storage type (-DT_IS_FLOAT|T_IS_HALF|T_IS_BF16|T_IS_DOUBLE|
 * T_IS_LONG) and once more with -DIDX_64 for tensors whose element indices
 * do not fit in an int. half and bfloat16 are stored as such and
 * accumulated in float; int64 wraps around as TensorFlow's integer kernels
 * do (the arithmetic is unsigned, so overflow is defined).
 *
 * Each op is a kernel prefix (sum_, prod_, lse_; lse_ for floating types
 * only), each with four shapes:
 *  _rows:   a work-item per row of [rows, len] (inner == 1), walking it
 *           serially: CPU devices, and GPUs for short rows.
 *  _blocks: CPU devices, inner > 1: a work-item per (outer, 16 adjacent
 *           columns), walking the axis with 16 accumulators, so every step
 *           reads contiguous memory.
 *  _cols:   GPUs, inner > 1: a work-item per (outer, column), walking the
 *           axis: neighbouring work-items on neighbouring addresses.
 *  _group:  GPUs, inner == 1, long rows: a work-group per row. The row goes
 *           in chunks of SCAN_ITEMS * local size elements, loaded into local
 *           memory with neighbouring work-items on neighbouring addresses;
 *           each work-item folds SCAN_ITEMS adjacent elements, a
 *           Hillis-Steele scan over local memory combines the work-items'
 *           totals, and a carry takes each chunk's total into the next.
 *
 * The serial shapes combine in TensorFlow's CPU order, accumulator first
 * (Eigen's scan), so float results match its CPU kernel to the bit; the
 * group shape combines in a tree, as TensorFlow's GPU kernel (cub's block
 * scan) does. LogSumExp, which drops a NaN element (op_lse), is not
 * associative there: with NaN in a long row the group shape's outputs
 * depend on the grouping, as TensorFlow's GPU ones do. */
#include "common.clh"

/* TensorFlow computes log1p(exp(min - max)) + max as written. */
#pragma OPENCL FP_CONTRACT OFF

#ifdef IDX_64
typedef long IDX;
#else
typedef int IDX;
#endif

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
#elif defined(T_IS_LONG)
typedef long S;
typedef long ACC;
#else
typedef float S;
typedef float ACC;
#endif
#ifndef LOAD
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

#ifdef T_IS_LONG
static inline ACC op_sum(ACC a, ACC b) { return (long)((ulong)a + (ulong)b); }
static inline ACC op_prod(ACC a, ACC b) { return (long)((ulong)a * (ulong)b); }
#else
static inline ACC op_sum(ACC a, ACC b) { return a + b; }
static inline ACC op_prod(ACC a, ACC b) { return a * b; }
/* TensorFlow's LogSumExp (2.19 to 2.22), accumulator a first: Eigen's
 * default min and max, (b < a ? b : a) and (a < b ? b : a), so a NaN
 * element loses both comparisons to the accumulator and a NaN accumulator
 * stays NaN. Where the larger operand is -inf (below the lowest finite
 * value) it is the result, so -inf is the identity exactly; two +inf give
 * NaN (inf - inf), as before TensorFlow 2.22's +inf guard. */
static inline ACC op_lse(ACC a, ACC b)
{
  ACC mi = b < a ? b : a;
  ACC ma = a < b ? b : a;
  if (isinf(ma) && ma < 0)
    return ma;
  return log1p(exp(mi - ma)) + ma;
}
#endif

/* Elements a work-item of _group folds per chunk; columns of _blocks. */
#define SCAN_ITEMS 4
#define BLOCK 16

/* One line of `len` elements `stride` apart, serially. */
#define SCAN_LINE(OP, ID)                                                     \
  {                                                                           \
    IDX step = reverse ? -stride : stride;                                    \
    IDX at = reverse ? (len - 1) * stride : 0;                                \
    ACC acc = ID;                                                             \
    if (exclusive) {                                                          \
      for (IDX p = 0; p < len; p++, at += step) {                             \
        ACC v = LOAD(in, at);                                                 \
        STORE(out, at, acc);                                                  \
        acc = OP(acc, v);                                                     \
      }                                                                       \
    } else {                                                                  \
      for (IDX p = 0; p < len; p++, at += step) {                             \
        acc = OP(acc, LOAD(in, at));                                          \
        STORE(out, at, acc);                                                  \
      }                                                                       \
    }                                                                         \
  }

/* `w` adjacent columns of one outer index at once, walking the axis. */
#define SCAN_BLOCK(OP, ID, w)                                                 \
  {                                                                           \
    ACC acc[BLOCK];                                                           \
    for (int j = 0; j < BLOCK; j++)                                           \
      acc[j] = ID;                                                            \
    for (IDX p = 0; p < len; p++, at += step) {                               \
      for (int j = 0; j < (w); j++) {                                         \
        ACC v = LOAD(in, at + j);                                             \
        if (exclusive) {                                                      \
          STORE(out, at + j, acc[j]);                                         \
          acc[j] = OP(acc[j], v);                                             \
        } else {                                                              \
          acc[j] = OP(acc[j], v);                                             \
          STORE(out, at + j, acc[j]);                                         \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }

#define SCAN_KERNELS(NAME, OP, ID)                                            \
  __kernel void NAME##_rows(OCL_TENSOR_ARG(const S, x),                       \
                            OCL_TENSOR_ARG(S, y), IDX rows, IDX len,          \
                            int exclusive, int reverse)                       \
  {                                                                           \
    size_t gid = get_global_id(0);                                            \
    OCL_GUARD(gid, (size_t)rows);                                             \
    __global const S *in = OCL_PTR(const S, x) + (IDX)gid * len;              \
    __global S *out = OCL_PTR(S, y) + (IDX)gid * len;                         \
    IDX stride = 1;                                                           \
    SCAN_LINE(OP, ID)                                                         \
  }                                                                           \
                                                                              \
  __kernel void NAME##_cols(OCL_TENSOR_ARG(const S, x),                       \
                            OCL_TENSOR_ARG(S, y), IDX n, IDX len, IDX inner,  \
                            int exclusive, int reverse)                       \
  {                                                                           \
    size_t gid = get_global_id(0);                                            \
    OCL_GUARD(gid, (size_t)n);                                                \
    IDX o = (IDX)gid / inner, i = (IDX)gid - o * inner;                       \
    IDX base = o * len * inner + i;                                           \
    __global const S *in = OCL_PTR(const S, x) + base;                        \
    __global S *out = OCL_PTR(S, y) + base;                                   \
    IDX stride = inner;                                                       \
    SCAN_LINE(OP, ID)                                                         \
  }                                                                           \
                                                                              \
  __kernel void NAME##_blocks(OCL_TENSOR_ARG(const S, x),                     \
                              OCL_TENSOR_ARG(S, y), IDX n, IDX len,           \
                              IDX inner, int exclusive, int reverse)          \
  {                                                                           \
    size_t gid = get_global_id(0);                                            \
    OCL_GUARD(gid, (size_t)n);                                                \
    IDX blocks = (inner + BLOCK - 1) / BLOCK;                                 \
    IDX o = (IDX)gid / blocks, b = (IDX)gid - o * blocks;                     \
    IDX base = o * len * inner + b * BLOCK;                                   \
    __global const S *in = OCL_PTR(const S, x) + base;                        \
    __global S *out = OCL_PTR(S, y) + base;                                   \
    IDX step = reverse ? -inner : inner;                                      \
    IDX at = reverse ? (len - 1) * inner : 0;                                 \
    int w = (int)min(inner - b * BLOCK, (IDX)BLOCK);                          \
    /* A constant trip count where the block is whole, so that the column  \
     * loop is unrolled into vectors. */                                      \
    if (w == BLOCK)                                                           \
      SCAN_BLOCK(OP, ID, BLOCK)                                               \
    else                                                                      \
      SCAN_BLOCK(OP, ID, w)                                                   \
  }                                                                           \
                                                                              \
  __kernel void NAME##_group(OCL_TENSOR_ARG(const S, x),                      \
                             OCL_TENSOR_ARG(S, y), IDX len, int exclusive,    \
                             int reverse, __local ACC *data,                  \
                             __local ACC *sums)                               \
  {                                                                           \
    IDX row = (IDX)get_group_id(0);                                           \
    int lid = (int)get_local_id(0);                                           \
    int lsize = (int)get_local_size(0);                                       \
    IDX chunk = (IDX)lsize * SCAN_ITEMS;                                      \
    __global const S *in = OCL_PTR(const S, x) + row * len;                   \
    __global S *out = OCL_PTR(S, y) + row * len;                              \
    ACC carry = ID;                                                           \
    for (IDX start = 0; start < len; start += chunk) {                        \
      for (int k = 0; k < SCAN_ITEMS; k++) {                                  \
        IDX p = start + k * lsize + lid;                                      \
        data[k * lsize + lid] =                                               \
            p < len ? LOAD(in, reverse ? len - 1 - p : p) : ID;               \
      }                                                                       \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
      ACC e[SCAN_ITEMS];                                                      \
      ACC total = ID;                                                         \
      for (int k = 0; k < SCAN_ITEMS; k++) {                                  \
        e[k] = data[lid * SCAN_ITEMS + k];                                    \
        total = OP(total, e[k]);                                              \
      }                                                                       \
      sums[lid] = total;                                                      \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
      for (int off = 1; off < lsize; off <<= 1) {                             \
        ACC v = lid >= off ? sums[lid - off] : ID;                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                         \
        if (lid >= off)                                                       \
          sums[lid] = OP(v, sums[lid]);                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                         \
      }                                                                       \
      ACC r = OP(carry, lid > 0 ? sums[lid - 1] : ID);                        \
      carry = OP(carry, sums[lsize - 1]);                                     \
      for (int k = 0; k < SCAN_ITEMS; k++) {                                  \
        if (exclusive)                                                        \
          data[lid * SCAN_ITEMS + k] = r;                                     \
        r = OP(r, e[k]);                                                      \
        if (!exclusive)                                                       \
          data[lid * SCAN_ITEMS + k] = r;                                     \
      }                                                                       \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
      for (int k = 0; k < SCAN_ITEMS; k++) {                                  \
        IDX p = start + k * lsize + lid;                                      \
        if (p < len)                                                          \
          STORE(out, reverse ? len - 1 - p : p, data[k * lsize + lid]);       \
      }                                                                       \
      /* The next chunk overwrites data. */                                   \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
    }                                                                         \
  }

SCAN_KERNELS(sum, op_sum, (ACC)0)
SCAN_KERNELS(prod, op_prod, (ACC)1)
#ifndef T_IS_LONG
SCAN_KERNELS(lse, op_lse, (ACC)(-INFINITY))
#endif
