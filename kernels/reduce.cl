/* Reductions: Sum, Mean, Prod, Max, Min, All, Any, ArgMax, ArgMin (and
 * BiasAddGrad, L2Loss, which reduce.c expresses as sums).
 *
 * Built once per storage type: -DT=float|half|long|uchar (uchar = bool).
 * half is stored as half and accumulated in float.
 *
 * Two shapes of kernel per op:
 *  _general: one work-item per output element, looping over the reduced
 *            elements of any strided layout (red_t). Best when there are many
 *            outputs, or the reduction is short.
 *  _group:   one work-group per output element of the [outer, reduce, inner]
 *            form: each work-item folds a strided share of the row, then a
 *            tree in local memory. Best for long rows on GPUs.
 *  _rows_vec, _cols_vec: for CPU devices (PoCL), where a work-item is a
 *            thread and explicit 16-wide vectors are what reach SIMD: one
 *            work-item per row ([outer, reduce], inner 1), or per 16
 *            adjacent outputs of [outer, reduce, inner]. Not for bool.
 * Max/Min propagate NaN, as TensorFlow's GPU reductions do. A reduction of
 * at least one element starts from the first element rather than from the
 * identity, so a length-1 "reduction" is an exact copy (keeps -0.0, as
 * TensorFlow's copy short-cut does). */
#include "common.clh"

#if defined(T_IS_HALF)
typedef float ACC;
typedef float16 VACC;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#define LOAD16(p, i) vload_half16(0, (p) + (i))
#else
typedef T ACC;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOAD16(p, i) vload16(0, (p) + (i))
#if defined(T_IS_FLOAT)
typedef float16 VACC;
#elif defined(T_IS_LONG)
typedef long16 VACC;
#endif
#endif

#if defined(T_IS_FLOAT) || defined(T_IS_HALF)
#define LOWEST (-INFINITY)
#define HIGHEST INFINITY
#define COMB_MAX(a, b) ((isnan(b) || (b) > (a)) ? (b) : (a))
#define COMB_MIN(a, b) ((isnan(b) || (b) < (a)) ? (b) : (a))
#define FIN_DIV(acc, d) ((acc) / (ACC)(d))
#if defined(T_IS_HALF)
#define LOWEST_FINITE (-65504.0f)
#define HIGHEST_FINITE 65504.0f
#else
#define LOWEST_FINITE (-FLT_MAX)
#define HIGHEST_FINITE FLT_MAX
#endif
#else
#define LOWEST_FINITE LONG_MIN
#define HIGHEST_FINITE LONG_MAX
#define LOWEST LONG_MIN
#define HIGHEST LONG_MAX
#define COMB_MAX(a, b) ((b) > (a) ? (b) : (a))
#define COMB_MIN(a, b) ((b) < (a) ? (b) : (a))
/* Integer Mean of nothing: 0 rather than a division by zero. */
#define FIN_DIV(acc, d) ((d) == 0 ? (ACC)0 : (acc) / (ACC)(d))
#endif

#define P_ID(v) (v)
#define P_SQ(v) ((v) * (v))
#define C_ADD(a, b) ((a) + (b))
#define C_MUL(a, b) ((a) * (b))
#define C_AND(a, b) ((ACC)((a) && (b)))
#define C_OR(a, b) ((ACC)((a) || (b)))
#define F_NONE(acc, d) (acc)

/* The strided form as reduce.c lays it out (struct red_args): kept dims in
 * output order, reduced dims, element strides of each in the input. */
typedef struct {
  long out_dims[8];
  long out_strides[8];
  long red_dims[8];
  long red_strides[8];
  long n_out;
  long n_red;
  long count; /* reduced elements per output */
} red_t;

static long out_base(const red_t *s, long o)
{
  long base = 0;
  for (long d = s->n_out - 1; d >= 0; d--) {
    base += (o % s->out_dims[d]) * s->out_strides[d];
    o /= s->out_dims[d];
  }
  return base;
}

static long red_offset(const red_t *s, long r)
{
  long off = 0;
  for (long d = s->n_red - 1; d >= 0; d--) {
    off += (r % s->red_dims[d]) * s->red_strides[d];
    r /= s->red_dims[d];
  }
  return off;
}

#define REDUCE_KERNELS(NAME, IDENT, PREP, COMB, FIN)                          \
  __kernel void NAME##_general(OCL_TENSOR_ARG(const T, x),                    \
                               OCL_TENSOR_ARG(T, y), long n, long divisor,    \
                               red_t s)                                       \
  {                                                                           \
    long o = get_global_id(0);                                                \
    OCL_GUARD(o, n);                                                          \
    const __global T *xp = OCL_PTR(const T, x);                               \
    long base = out_base(&s, o);                                              \
    ACC acc = IDENT;                                                          \
    if (s.count > 0) {                                                        \
      ACC v = LOAD(xp, base);                                                 \
      acc = PREP(v);                                                          \
    }                                                                         \
    if (s.n_red == 1) {                                                       \
      long stride = s.red_strides[0];                                         \
      for (long r = 1; r < s.count; r++) {                                    \
        ACC v = LOAD(xp, base + r * stride);                                  \
        acc = COMB(acc, PREP(v));                                             \
      }                                                                       \
    } else {                                                                  \
      for (long r = 1; r < s.count; r++) {                                    \
        ACC v = LOAD(xp, base + red_offset(&s, r));                           \
        acc = COMB(acc, PREP(v));                                             \
      }                                                                       \
    }                                                                         \
    STORE(OCL_PTR(T, y), o, FIN(acc, divisor));                               \
  }                                                                           \
  __kernel void NAME##_group(OCL_TENSOR_ARG(const T, x),                      \
                             OCL_TENSOR_ARG(T, y), long divisor, long reduce, \
                             long inner, __local ACC *scratch)                \
  {                                                                           \
    long o = get_group_id(0);                                                 \
    long lid = get_local_id(0), ls = get_local_size(0);                       \
    const __global T *xp = OCL_PTR(const T, x);                               \
    long base = (o / inner) * reduce * inner + o % inner;                     \
    ACC acc = IDENT;                                                          \
    long r = lid;                                                             \
    if (r < reduce) {                                                         \
      ACC v = LOAD(xp, base + r * inner);                                     \
      acc = PREP(v);                                                          \
      r += ls;                                                                \
    }                                                                         \
    for (; r < reduce; r += ls) {                                             \
      ACC v = LOAD(xp, base + r * inner);                                     \
      acc = COMB(acc, PREP(v));                                               \
    }                                                                         \
    scratch[lid] = acc;                                                       \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
    for (long step = ls / 2; step > 0; step /= 2) {                           \
      if (lid < step)                                                         \
        scratch[lid] = COMB(scratch[lid], scratch[lid + step]);               \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
    }                                                                         \
    if (lid == 0)                                                             \
      STORE(OCL_PTR(T, y), o, FIN(scratch[0], divisor));                      \
  }


/* The CPU kernels. The combine macros work on vectors as well (OpenCL's
 * ?: selects lane by lane); lanes fold in order 0..15 at the end. Both
 * start from the first 16 elements, so `reduce` (rows) or `inner` (cols,
 * per full chunk) is at least 16 where the vector path runs. */
#define REDUCE_VEC_KERNELS(NAME, PREP, COMB, FIN)                             \
  /* The fold of xp[0, len), len >= 16, PREP applied, no FIN. */              \
  static ACC NAME##_fold_row(const __global T *xp, long len)                  \
  {                                                                           \
    long full = len / 16 * 16;                                                \
    VACC v = LOAD16(xp, 0);                                                   \
    VACC accv = PREP(v);                                                      \
    for (long r = 16; r < full; r += 16) {                                    \
      v = LOAD16(xp, r);                                                      \
      accv = COMB(accv, PREP(v));                                             \
    }                                                                         \
    ACC lanes[16];                                                            \
    vstore16(accv, 0, lanes);                                                 \
    ACC acc = lanes[0];                                                       \
    for (int l = 1; l < 16; l++)                                              \
      acc = COMB(acc, lanes[l]);                                              \
    for (long r = full; r < len; r++) {                                       \
      ACC w = LOAD(xp, r);                                                    \
      acc = COMB(acc, PREP(w));                                               \
    }                                                                         \
    return acc;                                                               \
  }                                                                           \
  /* Rows [r0, r1) of the column run at xp (16 wide unless `width` says     \
   * fewer: the tail) into out[0, width), PREP applied, no FIN. */            \
  static void NAME##_fold_cols(const __global T *xp, long inner, long r0,     \
                               long r1, long width, ACC *out)                 \
  {                                                                           \
    if (width == 16) {                                                        \
      VACC v = LOAD16(xp, r0 * inner);                                        \
      VACC accv = PREP(v);                                                    \
      for (long r = r0 + 1; r < r1; r++) {                                    \
        v = LOAD16(xp, r * inner);                                            \
        accv = COMB(accv, PREP(v));                                           \
      }                                                                       \
      vstore16(accv, 0, out);                                                 \
      return;                                                                 \
    }                                                                         \
    for (long c = 0; c < width; c++) {                                        \
      ACC w = LOAD(xp, r0 * inner + c);                                       \
      ACC acc = PREP(w);                                                      \
      for (long r = r0 + 1; r < r1; r++) {                                    \
        w = LOAD(xp, r * inner + c);                                          \
        acc = COMB(acc, PREP(w));                                             \
      }                                                                       \
      out[c] = acc;                                                           \
    }                                                                         \
  }                                                                           \
  __kernel void NAME##_rows_vec(OCL_TENSOR_ARG(const T, x),                   \
                                OCL_TENSOR_ARG(T, y), long divisor,           \
                                long reduce, long rows)                       \
  {                                                                           \
    long o = get_global_id(0);                                                \
    OCL_GUARD(o, rows);                                                       \
    ACC acc = NAME##_fold_row(OCL_PTR(const T, x) + o * reduce, reduce);      \
    STORE(OCL_PTR(T, y), o, FIN(acc, divisor));                               \
  }                                                                           \
  __kernel void NAME##_cols_vec(OCL_TENSOR_ARG(const T, x),                   \
                                OCL_TENSOR_ARG(T, y), long divisor,           \
                                long reduce, long inner, long chunks)         \
  {                                                                           \
    long g = get_global_id(0);                                                \
    OCL_GUARD(g, chunks);                                                     \
    long per_outer = (inner + 15) / 16;                                       \
    long o = g / per_outer, c0 = g % per_outer * 16;                          \
    long width = min(16L, inner - c0);                                        \
    ACC out[16];                                                              \
    NAME##_fold_cols(OCL_PTR(const T, x) + o * reduce * inner + c0, inner, 0, \
                     reduce, width, out);                                     \
    __global T *yp = OCL_PTR(T, y) + o * inner + c0;                          \
    for (long c = 0; c < width; c++)                                          \
      STORE(yp, c, FIN(out[c], divisor));                                     \
  }                                                                           \
  /* A long reduction into few outputs, split so that every core works:     \
   * part p of the reduced extent of [outer, reduce, inner] goes to          \
   * part[outer, parts, inner] (ACC); NAME##_fold_parts folds those. Work    \
   * item g: column run g % runs, part g / runs % parts, outer g / runs /    \
   * parts (runs = 1 and len >= 16 per part for rows, inner == 1). */        \
  __kernel void NAME##_parts_vec(OCL_TENSOR_ARG(const T, x),                  \
                                 OCL_TENSOR_ARG(ACC, part), long reduce,      \
                                 long inner, long parts, long items)          \
  {                                                                           \
    long g = get_global_id(0);                                                \
    OCL_GUARD(g, items);                                                      \
    long runs = (inner + 15) / 16;                                            \
    long c0 = g % runs * 16, p = g / runs % parts, o = g / runs / parts;      \
    long r0 = reduce * p / parts, r1 = reduce * (p + 1) / parts;              \
    const __global T *xp = OCL_PTR(const T, x) + o * reduce * inner;          \
    __global ACC *pp = OCL_PTR(ACC, part) + (o * parts + p) * inner;          \
    if (inner == 1) {                                                         \
      pp[0] = NAME##_fold_row(xp + r0, r1 - r0);                              \
      return;                                                                 \
    }                                                                         \
    long width = min(16L, inner - c0);                                        \
    ACC out[16];                                                              \
    NAME##_fold_cols(xp + c0, inner, r0, r1, width, out);                     \
    for (long c = 0; c < width; c++)                                          \
      pp[c0 + c] = out[c];                                                    \
  }                                                                           \
  __kernel void NAME##_fold_parts(OCL_TENSOR_ARG(const ACC, part),            \
                                  OCL_TENSOR_ARG(T, y), long divisor,         \
                                  long parts, long inner, long n)             \
  {                                                                           \
    long i = get_global_id(0);                                                \
    OCL_GUARD(i, n);                                                          \
    const __global ACC *pp =                                                  \
        OCL_PTR(const ACC, part) + i / inner * parts * inner + i % inner;     \
    ACC acc = pp[0];                                                          \
    for (long p = 1; p < parts; p++)                                          \
      acc = COMB(acc, pp[p * inner]);                                         \
    STORE(OCL_PTR(T, y), i, FIN(acc, divisor));                               \
  }

#if defined(T_IS_BOOL)

REDUCE_KERNELS(all, (ACC)1, P_ID, C_AND, F_NONE)
REDUCE_KERNELS(any, (ACC)0, P_ID, C_OR, F_NONE)

#else

REDUCE_KERNELS(sum, (ACC)0, P_ID, C_ADD, FIN_DIV)
REDUCE_KERNELS(sumsq, (ACC)0, P_SQ, C_ADD, FIN_DIV)
REDUCE_KERNELS(prod, (ACC)1, P_ID, C_MUL, F_NONE)
REDUCE_KERNELS(max, LOWEST, P_ID, COMB_MAX, F_NONE)
REDUCE_KERNELS(min, HIGHEST, P_ID, COMB_MIN, F_NONE)
REDUCE_VEC_KERNELS(sum, P_ID, C_ADD, FIN_DIV)
REDUCE_VEC_KERNELS(sumsq, P_SQ, C_ADD, FIN_DIV)
REDUCE_VEC_KERNELS(prod, P_ID, C_MUL, F_NONE)
REDUCE_VEC_KERNELS(max, P_ID, COMB_MAX, F_NONE)
REDUCE_VEC_KERNELS(min, P_ID, COMB_MIN, F_NONE)

/* ArgMax/ArgMin follow Eigen's ArgMax/ArgMinPairReducer (TensorFlow's CPU
 * kernel): start from (index 0, lowest/highest value), take an element only
 * when strictly better, ties to the lower index. So NaN never wins, and a
 * row with nothing strictly better than the start value gives 0. Partial
 * results carry index -1 for "nothing taken". The output is int32 or int64
 * (out64). */
static void store_index(__global int *y, long o, long index, int out64)
{
  if (out64)
    ((__global long *)y)[o] = index;
  else
    y[o] = (int)index;
}

#define ARG_KERNELS(NAME, START, BETTER)                                      \
  __kernel void NAME##_general(OCL_TENSOR_ARG(const T, x),                    \
                               OCL_TENSOR_ARG(int, y), long n, long reduce,   \
                               long inner, int out64)                         \
  {                                                                           \
    long o = get_global_id(0);                                                \
    OCL_GUARD(o, n);                                                          \
    const __global T *xp = OCL_PTR(const T, x);                               \
    long base = (o / inner) * reduce * inner + o % inner;                     \
    ACC best = START;                                                         \
    long index = 0;                                                           \
    for (long r = 0; r < reduce; r++) {                                       \
      ACC v = LOAD(xp, base + r * inner);                                     \
      if (BETTER(v, best)) {                                                  \
        best = v;                                                             \
        index = r;                                                            \
      }                                                                       \
    }                                                                         \
    store_index(OCL_PTR(int, y), o, index, out64);                            \
  }                                                                           \
  __kernel void NAME##_group(OCL_TENSOR_ARG(const T, x),                      \
                             OCL_TENSOR_ARG(int, y), long reduce, long inner, \
                             int out64, __local ACC *values,                  \
                             __local long *indices)                           \
  {                                                                           \
    long o = get_group_id(0);                                                 \
    long lid = get_local_id(0), ls = get_local_size(0);                       \
    const __global T *xp = OCL_PTR(const T, x);                               \
    long base = (o / inner) * reduce * inner + o % inner;                     \
    ACC best = START;                                                         \
    long index = -1;                                                          \
    for (long r = lid; r < reduce; r += ls) {                                 \
      ACC v = LOAD(xp, base + r * inner);                                     \
      if (BETTER(v, best)) {                                                  \
        best = v;                                                             \
        index = r;                                                            \
      }                                                                       \
    }                                                                         \
    values[lid] = best;                                                       \
    indices[lid] = index;                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
    for (long step = ls / 2; step > 0; step /= 2) {                           \
      if (lid < step) {                                                       \
        long a = indices[lid], b = indices[lid + step];                       \
        ACC av = values[lid], bv = values[lid + step];                        \
        if (b >= 0 &&                                                         \
            (a < 0 || BETTER(bv, av) || (bv == av && b < a))) {               \
          values[lid] = bv;                                                   \
          indices[lid] = b;                                                   \
        }                                                                     \
      }                                                                       \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
    }                                                                         \
    if (lid == 0)                                                             \
      store_index(OCL_PTR(int, y), o, indices[0] < 0 ? 0 : indices[0],        \
                  out64);                                                     \
  }

#define GREATER(a, b) ((a) > (b))
#define LESS(a, b) ((a) < (b))
ARG_KERNELS(argmax, LOWEST_FINITE, GREATER)
ARG_KERNELS(argmin, HIGHEST_FINITE, LESS)

#endif
