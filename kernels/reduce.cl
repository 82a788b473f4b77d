/* Reductions: Sum, Mean, Prod, Max, Min, All, Any, ArgMax, ArgMin (and
 * BiasAddGrad, L2Loss, which reduce.c expresses as sums).
 *
 * Built once per storage type: -DT=float|half|long|uchar|double (uchar =
 * bool; double only on devices with cl_khr_fp64, accumulated in double),
 * and once more with -DIDX_64 for tensors whose element indices do not fit
 * in an int (index arithmetic is 32-bit otherwise). half is stored as half
 * and accumulated in float.
 *
 * Every kernel reduces the middle extent of [outer, reduce, inner], the
 * reduced extent cut into `parts` chunks of `chunk` rows: part p of output
 * (o, i) goes to (o * parts + p) * inner + i, so with parts == 1 the
 * output is [outer, inner] itself. reduce.c folds the parts (and the
 * reduced groups of a reduction over several separate axes) in further
 * passes of the same kernels, over ACC partials.
 *  _rows_vec: CPU devices, inner == 1: a work-item per (row, part) on
 *             16-wide vectors (PoCL maps a work-item to a thread; explicit
 *             vectors are what reach SIMD).
 *  _cols_vec: CPU devices: a work-item per (outer, part, 16 adjacent
 *             columns), folding 16-wide vectors down the rows.
 *  _items:    a work-item per (outer, part, column), looping down the rows:
 *             CPU devices (short rows, narrow columns) and GPUs
 *             (reductions shorter than a work-group could share).
 *  _tile:     GPUs: a work-group per (outer, part, `width` adjacent
 *             columns); its local_size / width lanes take every lanes-th row
 *             (neighbouring work-items on neighbouring addresses), then fold
 *             in a local-memory tree. width 1 is a row per work-group.
 *
 * Sums of floats carry Kahan's compensation, so the rounding error does not
 * grow with the length of a work-item's run: at least as accurate as
 * Eigen's tree reductions on TensorFlow's CPU. The scalar kernels add
 * blocks of four terms as a tree and compensate the block sums; the vector
 * kernels keep four compensated accumulators.
 * Max/Min propagate NaN, as TensorFlow's GPU reductions do. */
#if defined(T_IS_DOUBLE)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#include "common.clh"

#ifdef IDX_64
typedef long IDX;
typedef long16 VIDX;
#define TO_VIDX convert_long16
#else
typedef int IDX;
typedef int16 VIDX;
#define TO_VIDX convert_int16
#endif

#if defined(T_IS_HALF)
typedef float ACC;
typedef float16 VACC;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#define LOAD16(p, i) vload_half16(0, (p) + (i))
#else
typedef T ACC;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOAD16(p, i) vload16(0, (p) + (i))
#if defined(T_IS_FLOAT)
typedef float16 VACC;
#elif defined(T_IS_DOUBLE)
typedef double16 VACC;
#elif defined(T_IS_LONG)
typedef long16 VACC;
#elif defined(T_IS_BOOL)
typedef uchar16 VACC;
#endif
#endif

#if defined(T_IS_FLOAT) || defined(T_IS_HALF) || defined(T_IS_DOUBLE)
#define IS_FLOAT_TYPE 1
#define LOWEST (-INFINITY)
#define HIGHEST INFINITY
#define COMB_MAX(a, b) ((isnan(b) || (b) > (a)) ? (b) : (a))
#define COMB_MIN(a, b) ((isnan(b) || (b) < (a)) ? (b) : (a))
#define FIN_DIV(acc, d) ((acc) / (ACC)(d))
#if defined(T_IS_HALF)
#define LOWEST_FINITE (-65504.0f)
#define HIGHEST_FINITE 65504.0f
#elif defined(T_IS_DOUBLE)
#define LOWEST_FINITE (-DBL_MAX)
#define HIGHEST_FINITE DBL_MAX
#else
#define LOWEST_FINITE (-FLT_MAX)
#define HIGHEST_FINITE FLT_MAX
#endif
#else
#define IS_FLOAT_TYPE 0
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

/* Where a kernel's results go (its `store` argument). */
#define STORE_OUT 0  /* y is T: finished results (FIN applied) */
#define STORE_ACC 1  /* y is ACC: partials of a later pass */
#define STORE_HALF 2 /* y is half, finished: the last pass of a half
                        reduction, which runs in this (float) program */

#if defined(T_IS_FLOAT)
#define STORE_AS_HALF(yb, i, v) OCL_STORE_HALF(yb, i, v)
#else
#define STORE_AS_HALF(yb, i, v) STORE((__global T *)(yb), (i), (v))
#endif

#define PUT(FIN, yb, i, acc)                                                  \
  do {                                                                        \
    if (store == STORE_ACC)                                                   \
      ((__global ACC *)(yb))[i] = (acc);                                      \
    else if (store == STORE_HALF)                                             \
      STORE_AS_HALF(yb, i, FIN((acc), divisor));                              \
    else                                                                      \
      STORE((__global T *)(yb), i, FIN((acc), divisor));                      \
  } while (0)

/* The compensation once the sum is Inf or NaN: none (Inf - Inf would make
 * every later sum NaN). */
#if defined(T_IS_DOUBLE)
/* The conditional operator, not select: a scalar double's isfinite is an
 * int, which select's long mask for double takes only ambiguously. */
#define KEEP_FINITE(TYPE, t, e) (isfinite(t) ? (e) : (TYPE)(0))
#elif IS_FLOAT_TYPE
#define KEEP_FINITE(TYPE, t, e) select((TYPE)(0), (e), isfinite(t))
#else
#define KEEP_FINITE(TYPE, t, e) (e)
#endif

/* s += v with Kahan's compensation c when KAHAN (sums of floats), else
 * s = COMB(s, v). TYPE is ACC or VACC. */
#define ADD_TO(TYPE, KAHAN, COMB, s, c, v)                                    \
  do {                                                                        \
    TYPE v_ = (v);                                                            \
    if (KAHAN) {                                                              \
      TYPE y_ = v_ - (c);                                                     \
      TYPE t_ = (s) + y_;                                                     \
      (c) = KEEP_FINITE(TYPE, t_, (t_ - (s)) - y_);                           \
      (s) = t_;                                                               \
    } else {                                                                  \
      (s) = COMB((s), v_);                                                    \
    }                                                                         \
  } while (0)
#define VALUE(KAHAN, s, c) ((KAHAN) ? (s) - (c) : (s))

/* The arguments every reduction kernel takes. */
#define RED_ARGS                                                              \
  OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(uchar, y), long divisor,         \
      IDX reduce, IDX inner, IDX chunk, IDX parts, IDX n, int store

/* Part p's rows of the reduced extent. */
#define PART_ROWS(p)                                                          \
  IDX r0 = (p) * chunk;                                                       \
  IDX r1 = min(r0 + chunk, reduce)

#define REDUCE_KERNELS(NAME, IDENT, PREP, COMB, FIN, KAHAN)                   \
  /* Rows [r0, r1) of the column at xp (rows `stride` apart). */              \
  static ACC NAME##_fold_strided(const __global T *xp, IDX stride, IDX r0,    \
                                 IDX r1)                                      \
  {                                                                           \
    ACC s = IDENT, c = 0;                                                     \
    IDX r = r0;                                                               \
    for (; r + 4 <= r1; r += 4) {                                             \
      ACC a = LOAD(xp, r * stride), b = LOAD(xp, (r + 1) * stride);           \
      ACC e = LOAD(xp, (r + 2) * stride), f = LOAD(xp, (r + 3) * stride);     \
      a = PREP(a); b = PREP(b); e = PREP(e); f = PREP(f);                     \
      ADD_TO(ACC, KAHAN, COMB, s, c, COMB(COMB(a, b), COMB(e, f)));           \
    }                                                                         \
    for (; r < r1; r++) {                                                     \
      ACC a = LOAD(xp, r * stride);                                           \
      ADD_TO(ACC, KAHAN, COMB, s, c, PREP(a));                                \
    }                                                                         \
    return VALUE(KAHAN, s, c);                                                \
  }                                                                           \
  __kernel void NAME##_items(RED_ARGS)                                        \
  {                                                                           \
    IDX g = (IDX)get_global_id(0);                                            \
    OCL_GUARD(g, n);                                                          \
    IDX i = g % inner, q = g / inner;                                         \
    IDX p = q % parts, o = q / parts;                                         \
    PART_ROWS(p);                                                             \
    const __global T *xp = OCL_PTR(const T, x) + o * reduce * inner + i;      \
    ACC acc = NAME##_fold_strided(xp, inner, r0, r1);                         \
    PUT(FIN, OCL_PTR(uchar, y), g, acc);                                      \
  }                                                                           \
  /* n: work-groups. `width` (a power of two dividing the local size):      \
   * adjacent columns per work-group. */                                     \
  __kernel void NAME##_tile(RED_ARGS, IDX width, __local ACC *scratch)        \
  {                                                                           \
    IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);              \
    IDX lanes = ls / width, lane = lid / width, col = lid % width;            \
    IDX runs = (inner + width - 1) / width;                                   \
    IDX g = (IDX)get_group_id(0);                                             \
    IDX run = g % runs, q = g / runs;                                         \
    IDX p = q % parts, o = q / parts;                                         \
    IDX i = run * width + col;                                                \
    PART_ROWS(p);                                                             \
    ACC s = IDENT, c = 0;                                                     \
    if (g < n && i < inner) {                                                 \
      const __global T *xp = OCL_PTR(const T, x) + o * reduce * inner + i;    \
      IDX r = r0 + lane;                                                      \
      for (; r + 3 * lanes < r1; r += 4 * lanes) {                            \
        ACC a = LOAD(xp, r * inner);                                          \
        ACC b = LOAD(xp, (r + lanes) * inner);                                \
        ACC e = LOAD(xp, (r + 2 * lanes) * inner);                            \
        ACC f = LOAD(xp, (r + 3 * lanes) * inner);                            \
        a = PREP(a); b = PREP(b); e = PREP(e); f = PREP(f);                   \
        ADD_TO(ACC, KAHAN, COMB, s, c, COMB(COMB(a, b), COMB(e, f)));         \
      }                                                                       \
      for (; r < r1; r += lanes) {                                            \
        ACC a = LOAD(xp, r * inner);                                          \
        ADD_TO(ACC, KAHAN, COMB, s, c, PREP(a));                              \
      }                                                                       \
    }                                                                         \
    /* Each level reads slots that no work-item writes in it. */             \
    scratch[lid] = VALUE(KAHAN, s, c);                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
    for (IDX w = lanes / 2; w > 0; w /= 2) {                                  \
      if (lane < w)                                                           \
        scratch[lid] = COMB(scratch[lid], scratch[lid + w * width]);          \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
    }                                                                         \
    if (lane == 0 && g < n && i < inner)                                      \
      PUT(FIN, OCL_PTR(uchar, y), (o * parts + p) * inner + i, scratch[lid]); \
  }

/* The CPU kernels: the combine macros work on vectors as well (OpenCL's ?:
 * selects lane by lane). */
#define REDUCE_VEC_KERNELS(NAME, IDENT, PREP, COMB, FIN, KAHAN)               \
  /* The fold of xp[0, len), PREP applied, no FIN: four accumulators take   \
   * every fourth vector (independent chains, so compensation costs no     \
   * latency; a tree of loaded vectors instead makes PoCL's LLVM split the  \
   * loads into pairs of floats), then fold as a tree, lanes too, then the  \
   * tail. */                                                                \
  static ACC NAME##_fold_run(const __global T *xp, IDX len)                   \
  {                                                                           \
    IDX blocks = len / 64 * 64, full = len / 16 * 16;                         \
    VACC s0 = (VACC)(IDENT), s1 = s0, s2 = s0, s3 = s0;                       \
    VACC c0 = (VACC)(0), c1 = c0, c2 = c0, c3 = c0;                           \
    for (IDX r = 0; r < blocks; r += 64) {                                    \
      VACC a = LOAD16(xp, r), b = LOAD16(xp, r + 16);                         \
      VACC e = LOAD16(xp, r + 32), f = LOAD16(xp, r + 48);                    \
      ADD_TO(VACC, KAHAN, COMB, s0, c0, PREP(a));                             \
      ADD_TO(VACC, KAHAN, COMB, s1, c1, PREP(b));                             \
      ADD_TO(VACC, KAHAN, COMB, s2, c2, PREP(e));                             \
      ADD_TO(VACC, KAHAN, COMB, s3, c3, PREP(f));                             \
    }                                                                         \
    for (IDX r = blocks; r < full; r += 16) {                                 \
      VACC a = LOAD16(xp, r);                                                 \
      ADD_TO(VACC, KAHAN, COMB, s0, c0, PREP(a));                             \
    }                                                                         \
    VACC v = COMB(COMB(VALUE(KAHAN, s0, c0), VALUE(KAHAN, s1, c1)),           \
                  COMB(VALUE(KAHAN, s2, c2), VALUE(KAHAN, s3, c3)));          \
    ACC lanes[16];                                                            \
    vstore16(v, 0, lanes);                                                    \
    for (int w = 8; w > 0; w /= 2)                                            \
      for (int l = 0; l < w; l++)                                             \
        lanes[l] = COMB(lanes[l], lanes[l + w]);                              \
    ACC acc = lanes[0], ac = 0;                                               \
    for (IDX r = full; r < len; r++) {                                        \
      ACC a = LOAD(xp, r);                                                    \
      ADD_TO(ACC, KAHAN, COMB, acc, ac, PREP(a));                             \
    }                                                                         \
    return VALUE(KAHAN, acc, ac);                                             \
  }                                                                           \
  /* Rows [r0, r1) of the 64 columns at xp into out[64], an accumulator   \
   * per 16 of them, row by row: 256 contiguous bytes a row, where 16        \
   * columns at a time read 64 bytes of each row's page. */                 \
  static void NAME##_fold_cols64(const __global T *xp, IDX inner, IDX r0,     \
                                 IDX r1, ACC *out)                            \
  {                                                                           \
    VACC s0 = (VACC)(IDENT), s1 = s0, s2 = s0, s3 = s0;                       \
    VACC c0 = (VACC)(0), c1 = c0, c2 = c0, c3 = c0;                           \
    for (IDX r = r0; r < r1; r++) {                                           \
      const __global T *row = xp + r * inner;                                 \
      ADD_TO(VACC, KAHAN, COMB, s0, c0, PREP(LOAD16(row, 0)));                \
      ADD_TO(VACC, KAHAN, COMB, s1, c1, PREP(LOAD16(row, 16)));               \
      ADD_TO(VACC, KAHAN, COMB, s2, c2, PREP(LOAD16(row, 32)));               \
      ADD_TO(VACC, KAHAN, COMB, s3, c3, PREP(LOAD16(row, 48)));               \
    }                                                                         \
    vstore16(VALUE(KAHAN, s0, c0), 0, out);                                   \
    vstore16(VALUE(KAHAN, s1, c1), 0, out + 16);                              \
    vstore16(VALUE(KAHAN, s2, c2), 0, out + 32);                              \
    vstore16(VALUE(KAHAN, s3, c3), 0, out + 48);                              \
  }                                                                           \
  /* Rows [r0, r1) of the 16 columns at xp into out[16]: four accumulators  \
   * take every fourth row. */                                               \
  static void NAME##_fold_cols(const __global T *xp, IDX inner, IDX r0,       \
                               IDX r1, ACC *out)                              \
  {                                                                           \
    IDX blocks = r0 + (r1 - r0) / 4 * 4;                                      \
    VACC s0 = (VACC)(IDENT), s1 = s0, s2 = s0, s3 = s0;                       \
    VACC c0 = (VACC)(0), c1 = c0, c2 = c0, c3 = c0;                           \
    for (IDX r = r0; r < blocks; r += 4) {                                    \
      VACC a = LOAD16(xp, r * inner), b = LOAD16(xp, (r + 1) * inner);        \
      VACC e = LOAD16(xp, (r + 2) * inner), f = LOAD16(xp, (r + 3) * inner);  \
      ADD_TO(VACC, KAHAN, COMB, s0, c0, PREP(a));                             \
      ADD_TO(VACC, KAHAN, COMB, s1, c1, PREP(b));                             \
      ADD_TO(VACC, KAHAN, COMB, s2, c2, PREP(e));                             \
      ADD_TO(VACC, KAHAN, COMB, s3, c3, PREP(f));                             \
    }                                                                         \
    for (IDX r = blocks; r < r1; r++) {                                       \
      VACC a = LOAD16(xp, r * inner);                                         \
      ADD_TO(VACC, KAHAN, COMB, s0, c0, PREP(a));                             \
    }                                                                         \
    vstore16(COMB(COMB(VALUE(KAHAN, s0, c0), VALUE(KAHAN, s1, c1)),           \
                  COMB(VALUE(KAHAN, s2, c2), VALUE(KAHAN, s3, c3))),          \
             0, out);                                                         \
  }                                                                           \
  /* inner == 1; n = outer * parts. */                                        \
  __kernel void NAME##_rows_vec(RED_ARGS)                                     \
  {                                                                           \
    IDX g = (IDX)get_global_id(0);                                            \
    OCL_GUARD(g, n);                                                          \
    IDX p = g % parts, o = g / parts;                                         \
    PART_ROWS(p);                                                             \
    ACC acc = NAME##_fold_run(OCL_PTR(const T, x) + o * reduce + r0, r1 - r0); \
    PUT(FIN, OCL_PTR(uchar, y), g, acc);                                      \
  }                                                                           \
  /* n = outer * parts * runs of 64 columns (the last may be narrower: its \
   * blocks of 16, then column by column). */                                \
  __kernel void NAME##_cols_vec(RED_ARGS)                                     \
  {                                                                           \
    IDX g = (IDX)get_global_id(0);                                            \
    OCL_GUARD(g, n);                                                          \
    IDX runs = (inner + 63) / 64;                                             \
    IDX run = g % runs, q = g / runs;                                         \
    IDX p = q % parts, o = q / parts;                                         \
    PART_ROWS(p);                                                             \
    IDX c0 = run * 64, width = min((IDX)64, inner - c0);                      \
    const __global T *xp = OCL_PTR(const T, x) + o * reduce * inner + c0;     \
    IDX out0 = (o * parts + p) * inner + c0;                                  \
    __global uchar *yp = OCL_PTR(uchar, y);                                   \
    ACC out[64];                                                              \
    IDX l = 0;                                                                \
    if (width == 64) {                                                        \
      NAME##_fold_cols64(xp, inner, r0, r1, out);                             \
      l = 64;                                                                 \
    }                                                                         \
    for (; l + 16 <= width; l += 16)                                          \
      NAME##_fold_cols(xp + l, inner, r0, r1, out + l);                       \
    for (IDX j = 0; j < l; j++)                                               \
      PUT(FIN, yp, out0 + j, out[j]);                                         \
    for (; l < width; l++)                                                    \
      PUT(FIN, yp, out0 + l, NAME##_fold_strided(xp + l, inner, r0, r1));     \
  }

#define NO_KAHAN 0
#define SUM_KAHAN IS_FLOAT_TYPE

#if defined(T_IS_BOOL)

REDUCE_KERNELS(all, (ACC)1, P_ID, C_AND, F_NONE, NO_KAHAN)
REDUCE_KERNELS(any, (ACC)0, P_ID, C_OR, F_NONE, NO_KAHAN)
/* On vectors, && and || give -1: bools as 0 or 1 (any nonzero byte is
 * true) folded by min (All) and max (Any) instead. A work-item per output
 * looping over a row ran All over [4096, 1024] at 0.1x TensorFlow's CPU. */
#define P_BOOL(v) min((v), (uchar)1)
#define C_MIN(a, b) min((a), (b))
#define C_MAX(a, b) max((a), (b))
REDUCE_VEC_KERNELS(all, (ACC)1, P_BOOL, C_MIN, F_NONE, NO_KAHAN)
REDUCE_VEC_KERNELS(any, (ACC)0, P_BOOL, C_MAX, F_NONE, NO_KAHAN)

#else

REDUCE_KERNELS(sum, (ACC)0, P_ID, C_ADD, FIN_DIV, SUM_KAHAN)
REDUCE_KERNELS(sumsq, (ACC)0, P_SQ, C_ADD, FIN_DIV, SUM_KAHAN)
REDUCE_KERNELS(prod, (ACC)1, P_ID, C_MUL, F_NONE, NO_KAHAN)
REDUCE_KERNELS(max, LOWEST, P_ID, COMB_MAX, F_NONE, NO_KAHAN)
REDUCE_KERNELS(min, HIGHEST, P_ID, COMB_MIN, F_NONE, NO_KAHAN)
REDUCE_VEC_KERNELS(sum, (ACC)0, P_ID, C_ADD, FIN_DIV, SUM_KAHAN)
REDUCE_VEC_KERNELS(sumsq, (ACC)0, P_SQ, C_ADD, FIN_DIV, SUM_KAHAN)
REDUCE_VEC_KERNELS(prod, (ACC)1, P_ID, C_MUL, F_NONE, NO_KAHAN)
REDUCE_VEC_KERNELS(max, LOWEST, P_ID, COMB_MAX, F_NONE, NO_KAHAN)
REDUCE_VEC_KERNELS(min, HIGHEST, P_ID, COMB_MIN, F_NONE, NO_KAHAN)

/* ArgMax/ArgMin follow Eigen's ArgMax/ArgMinPairReducer (TensorFlow's CPU
 * kernel): start from (index 0, lowest/highest finite value), take an
 * element only when strictly better, ties to the lower index. So NaN never
 * wins, and a row with nothing strictly better than the start value gives
 * 0. Partial results (parts > 1) carry index -1 for "nothing taken", as a
 * value (ACC) in `y` and an index (IDX) in `yi`; the finished result is an
 * index in `yi`, int or long as `store` says. */
#define ARG_OUT32 0
#define ARG_OUT64 1
#define ARG_PARTIAL 2

#define ARG_ARGS                                                              \
  OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(ACC, y),                         \
      OCL_TENSOR_ARG(uchar, yi), IDX reduce, IDX inner, IDX chunk, IDX parts, \
      IDX n, int store

static void arg_put(__global ACC *yv, __global uchar *yi, IDX at, ACC best,
                    IDX index, int store)
{
  if (store == ARG_PARTIAL) {
    yv[at] = best;
    ((__global IDX *)yi)[at] = index;
  } else if (store == ARG_OUT64) {
    ((__global long *)yi)[at] = index < 0 ? 0 : index;
  } else {
    ((__global int *)yi)[at] = index < 0 ? 0 : (int)index;
  }
}

/* (bv, b) replaces (av, a) if b was taken and is better, or as good with a
 * lower index. */
#define ARG_TAKES(BETTER, av, a, bv, b)                                       \
  ((b) >= 0 && ((a) < 0 || BETTER(bv, av) || ((bv) == (av) && (b) < (a))))

#define ARG_KERNELS(NAME, START, BETTER)                                      \
  static void NAME##_fold_strided(const __global T *xp, IDX stride, IDX r0,   \
                                  IDX r1, ACC *best, IDX *index)              \
  {                                                                           \
    ACC bv = START;                                                           \
    IDX bi = -1;                                                              \
    for (IDX r = r0; r < r1; r++) {                                           \
      ACC v = LOAD(xp, r * stride);                                           \
      if (BETTER(v, bv)) {                                                    \
        bv = v;                                                               \
        bi = r;                                                               \
      }                                                                       \
    }                                                                         \
    *best = bv;                                                               \
    *index = bi;                                                              \
  }                                                                           \
  __kernel void NAME##_items(ARG_ARGS)                                        \
  {                                                                           \
    IDX g = (IDX)get_global_id(0);                                            \
    OCL_GUARD(g, n);                                                          \
    IDX i = g % inner, q = g / inner;                                         \
    IDX p = q % parts, o = q / parts;                                         \
    PART_ROWS(p);                                                             \
    ACC bv;                                                                   \
    IDX bi;                                                                   \
    NAME##_fold_strided(OCL_PTR(const T, x) + o * reduce * inner + i, inner,  \
                        r0, r1, &bv, &bi);                                    \
    arg_put(OCL_PTR(ACC, y), OCL_PTR(uchar, yi), g, bv, bi, store);           \
  }                                                                           \
  __kernel void NAME##_tile(ARG_ARGS, IDX width, __local ACC *values,         \
                            __local IDX *indices)                             \
  {                                                                           \
    IDX lid = (IDX)get_local_id(0), ls = (IDX)get_local_size(0);              \
    IDX lanes = ls / width, lane = lid / width, col = lid % width;            \
    IDX runs = (inner + width - 1) / width;                                   \
    IDX g = (IDX)get_group_id(0);                                             \
    IDX run = g % runs, q = g / runs;                                         \
    IDX p = q % parts, o = q / parts;                                         \
    IDX i = run * width + col;                                                \
    PART_ROWS(p);                                                             \
    ACC bv = START;                                                           \
    IDX bi = -1;                                                              \
    if (g < n && i < inner) {                                                 \
      const __global T *xp = OCL_PTR(const T, x) + o * reduce * inner + i;    \
      for (IDX r = r0 + lane; r < r1; r += lanes) {                           \
        ACC v = LOAD(xp, r * inner);                                          \
        if (BETTER(v, bv)) {                                                  \
          bv = v;                                                             \
          bi = r;                                                             \
        }                                                                     \
      }                                                                       \
    }                                                                         \
    values[lid] = bv;                                                         \
    indices[lid] = bi;                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
    for (IDX w = lanes / 2; w > 0; w /= 2) {                                  \
      if (lane < w) {                                                         \
        IDX a = indices[lid], b = indices[lid + w * width];                   \
        ACC av = values[lid], cv = values[lid + w * width];                   \
        if (ARG_TAKES(BETTER, av, a, cv, b)) {                                \
          values[lid] = cv;                                                   \
          indices[lid] = b;                                                   \
        }                                                                     \
      }                                                                       \
      barrier(CLK_LOCAL_MEM_FENCE);                                           \
    }                                                                         \
    if (lane == 0 && g < n && i < inner)                                      \
      arg_put(OCL_PTR(ACC, y), OCL_PTR(uchar, yi),                            \
              (o * parts + p) * inner + i, values[lid], indices[lid], store); \
  }                                                                           \
  /* The partials [outer, parts, inner] of a split: n = outer * inner       \
   * work-items, each folding its parts in order (earlier parts hold lower  \
   * indices). */                                                            \
  __kernel void NAME##_fold_parts(OCL_TENSOR_ARG(const ACC, pv),              \
                                  OCL_TENSOR_ARG(const IDX, pi),              \
                                  OCL_TENSOR_ARG(uchar, yi), IDX parts,       \
                                  IDX inner, IDX n, int store)                \
  {                                                                           \
    IDX g = (IDX)get_global_id(0);                                            \
    OCL_GUARD(g, n);                                                          \
    IDX at = g / inner * parts * inner + g % inner;                           \
    const __global ACC *vp = OCL_PTR(const ACC, pv) + at;                     \
    const __global IDX *ip = OCL_PTR(const IDX, pi) + at;                     \
    ACC bv = START;                                                           \
    IDX bi = -1;                                                              \
    for (IDX p = 0; p < parts; p++) {                                         \
      ACC v = vp[p * inner];                                                  \
      IDX j = ip[p * inner];                                                  \
      if (ARG_TAKES(BETTER, bv, bi, v, j)) {                                  \
        bv = v;                                                               \
        bi = j;                                                               \
      }                                                                       \
    }                                                                         \
    arg_put(0, OCL_PTR(uchar, yi), g, bv, bi, store);                         \
  }                                                                           \
  /* CPU, inner == 1: a work-item per (row, part); each lane keeps its own   \
   * best, the lanes fold by value then index. */                             \
  __kernel void NAME##_rows_vec(ARG_ARGS)                                     \
  {                                                                           \
    IDX g = (IDX)get_global_id(0);                                            \
    OCL_GUARD(g, n);                                                          \
    IDX p = g % parts, o = g / parts;                                         \
    PART_ROWS(p);                                                             \
    const __global T *xp = OCL_PTR(const T, x) + o * reduce;                  \
    VACC bv = (VACC)(START);                                                  \
    VIDX bi = (VIDX)(-1);                                                     \
    const VIDX iota = (VIDX)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,   \
                             14, 15);                                         \
    IDX r = r0;                                                               \
    for (; r + 16 <= r1; r += 16) {                                           \
      VACC v = LOAD16(xp, r);                                                 \
      VIDX take = TO_VIDX(BETTER(v, bv));                                     \
      bv = BETTER(v, bv) ? v : bv;                                            \
      bi = select(bi, (VIDX)(r) + iota, take);                                \
    }                                                                         \
    ACC lv[16];                                                               \
    IDX li[16];                                                               \
    vstore16(bv, 0, lv);                                                      \
    vstore16(bi, 0, li);                                                      \
    ACC best = START;                                                         \
    IDX index = -1;                                                           \
    for (int l = 0; l < 16; l++)                                              \
      if (ARG_TAKES(BETTER, best, index, lv[l], li[l])) {                     \
        best = lv[l];                                                         \
        index = li[l];                                                        \
      }                                                                       \
    for (; r < r1; r++) {                                                     \
      ACC v = LOAD(xp, r);                                                    \
      if (BETTER(v, best)) {                                                  \
        best = v;                                                             \
        index = r;                                                            \
      }                                                                       \
    }                                                                         \
    arg_put(OCL_PTR(ACC, y), OCL_PTR(uchar, yi), g, best, index, store);      \
  }                                                                           \
  /* CPU: a work-item per (outer, part, 16 adjacent columns). */              \
  __kernel void NAME##_cols_vec(ARG_ARGS)                                     \
  {                                                                           \
    IDX g = (IDX)get_global_id(0);                                            \
    OCL_GUARD(g, n);                                                          \
    IDX runs = (inner + 15) / 16;                                             \
    IDX run = g % runs, q = g / runs;                                         \
    IDX p = q % parts, o = q / parts;                                         \
    PART_ROWS(p);                                                             \
    IDX c0 = run * 16, width = min((IDX)16, inner - c0);                      \
    const __global T *xp = OCL_PTR(const T, x) + o * reduce * inner + c0;     \
    IDX out0 = (o * parts + p) * inner + c0;                                  \
    if (width == 16) {                                                        \
      VACC bv = (VACC)(START);                                                \
      VIDX bi = (VIDX)(-1);                                                   \
      for (IDX r = r0; r < r1; r++) {                                         \
        VACC v = LOAD16(xp, r * inner);                                       \
        VIDX take = TO_VIDX(BETTER(v, bv));                                   \
        bv = BETTER(v, bv) ? v : bv;                                          \
        bi = select(bi, (VIDX)(r), take);                                     \
      }                                                                       \
      ACC lv[16];                                                             \
      IDX li[16];                                                             \
      vstore16(bv, 0, lv);                                                    \
      vstore16(bi, 0, li);                                                    \
      for (int l = 0; l < 16; l++)                                            \
        arg_put(OCL_PTR(ACC, y), OCL_PTR(uchar, yi), out0 + l, lv[l], li[l],  \
                store);                                                       \
    } else {                                                                  \
      for (IDX l = 0; l < width; l++) {                                       \
        ACC bv;                                                               \
        IDX bi;                                                               \
        NAME##_fold_strided(xp + l, inner, r0, r1, &bv, &bi);                 \
        arg_put(OCL_PTR(ACC, y), OCL_PTR(uchar, yi), out0 + l, bv, bi,        \
                store);                                                       \
      }                                                                       \
    }                                                                         \
  }

#define GREATER(a, b) ((a) > (b))
#define LESS(a, b) ((a) < (b))
ARG_KERNELS(argmax, LOWEST_FINITE, GREATER)
ARG_KERNELS(argmin, HIGHEST_FINITE, LESS)

#endif
