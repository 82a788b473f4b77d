/* Fill, gather and select: kernels that move elements without looking at
 * their values.
 *
 * Built once per element size, not per dtype: -DT=uchar|ushort|uint|ulong|
 * ulong2 with -DELEM_SIZE=1|2|4|8|16. Every dtype of a size shares the
 * program of that size (a half moves as a ushort, a bool as a uchar, a
 * complex64 as a ulong, a complex128 as a ulong2); bit patterns travel
 * unchanged. Range is the one op that computes: its float and int64
 * kernels live in the 4- and 8-byte programs.
 *
 * Index arithmetic comes in two widths: the kernels suffixed 32 index with
 * int (the host picks them when every extent fits), the others with long. */
#include "common.clh"

/* out[i] = value[0]: Fill, whose value lives in device memory, read once
 * per work-item's run (OCL_FOR_FLAT). */
__kernel void fill(OCL_TENSOR_ARG(const T, value), OCL_TENSOR_ARG(T, out),
                   long n)
{
  T v = OCL_PTR(const T, value)[0];
  OCL_FOR_FLAT(long, i, n)
  OCL_PTR(T, out)[i] = v;
}

/* ---- GatherV2 --------------------------------------------------------------
 *
 * params viewed as [batch, outer, limit, inner], indices as [batch, nb] and
 * the output as [batch, outer, nb, inner] (batch = 1 without batch_dims):
 *   out[b, o, j, k] = params[b, o, indices[b, j], k].
 * An index outside [0, limit) gives zeros, as TensorFlow's GPU kernel does
 * (its CPU kernel fails the op instead; the host cannot check
 * device-resident indices without waiting for the device). The index is
 * compared at its own width before it is narrowed. */

/* One work-item per output element: neighbouring work-items write
 * neighbouring elements and read along a params row. */
#define GATHER(NAME, IT, I)                                                   \
  __kernel void NAME(OCL_TENSOR_ARG(const T, params),                         \
                     OCL_TENSOR_ARG(const IT, indices),                       \
                     OCL_TENSOR_ARG(T, out), I n, I limit, I inner, I nb,     \
                     I outer)                                                 \
  {                                                                           \
    I i = (I)get_global_id(0);                                                \
    OCL_GUARD(i, n);                                                          \
    I k = i % inner;                                                          \
    I r = i / inner;                                                          \
    I j = r % nb;                                                             \
    r /= nb;                                                                  \
    I o = r % outer;                                                          \
    I b = r / outer;                                                          \
    IT raw = OCL_PTR(const IT, indices)[b * nb + j];                          \
    T v = (T)0;                                                               \
    if (raw >= 0 && (long)raw < (long)limit)                                  \
      v = OCL_PTR(const T, params)[((b * outer + o) * limit + (I)raw) * inner \
                                   + k];                                      \
    OCL_PTR(T, out)[i] = v;                                                   \
  }
GATHER(gather32_i16, short, int)
GATHER(gather32_i32, int, int)
GATHER(gather32_i64, long, int)
GATHER(gather_i16, short, long)
GATHER(gather_i32, int, long)
GATHER(gather_i64, long, long)

/* CPU shape: one work-item per block of `per_item` output rows of `inner`
 * elements, plain copy loops the compiler turns into vector moves (a
 * work-group per row would cost PoCL more than the copy). */
#define GATHER_ROWS(NAME, IT)                                                 \
  __kernel void NAME(OCL_TENSOR_ARG(const T, params),                         \
                     OCL_TENSOR_ARG(const IT, indices),                       \
                     OCL_TENSOR_ARG(T, out), long rows, long limit,           \
                     long inner, long nb, long outer, long per_item)          \
  {                                                                           \
    long r0 = get_global_id(0) * per_item;                                    \
    OCL_GUARD(r0, rows);                                                      \
    long r1 = min(r0 + per_item, rows);                                       \
    for (long r = r0; r < r1; r++) {                                          \
      long j = r % nb;                                                        \
      long t = r / nb;                                                        \
      long o = t % outer;                                                     \
      long b = t / outer;                                                     \
      IT raw = OCL_PTR(const IT, indices)[b * nb + j];                        \
      __global T *dst = OCL_PTR(T, out) + r * inner;                          \
      if (raw >= 0 && (long)raw < limit) {                                    \
        __global const T *src = OCL_PTR(const T, params) +                    \
                                ((b * outer + o) * limit + raw) * inner;      \
        for (long k = 0; k < inner; k++)                                      \
          dst[k] = src[k];                                                    \
      } else {                                                                \
        for (long k = 0; k < inner; k++)                                      \
          dst[k] = (T)0;                                                      \
      }                                                                       \
    }                                                                         \
  }
GATHER_ROWS(gather_rows_i16, short)
GATHER_ROWS(gather_rows_i32, int)
GATHER_ROWS(gather_rows_i64, long)

/* ---- Select, SelectV2 ------------------------------------------------------- */

/* The collapsed three-way broadcast as gather.c's bcast3 structs lay it
 * out: members of one width only, so host and device agree. */
typedef struct {
  long dims[8];
  long strides[3][8];
  long rank;
} bcast3_t;

typedef struct {
  int dims[8];
  int strides[3][8];
  int rank;
} bcast3_32_t;

/* Select/SelectV2 with condition, then and else of one shape. */
__kernel void select_flat(OCL_TENSOR_ARG(const uchar, cond),
                          OCL_TENSOR_ARG(const T, then_),
                          OCL_TENSOR_ARG(const T, else_),
                          OCL_TENSOR_ARG(T, out), long n)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  OCL_PTR(T, out)[i] = OCL_PTR(const uchar, cond)[i]
                           ? OCL_PTR(const T, then_)[i]
                           : OCL_PTR(const T, else_)[i];
}

#if ELEM_SIZE <= 8
#define VEC16_OF(t) t##16
#define VEC16(t) VEC16_OF(t)
typedef VEC16(T) T16;
/* cond != 0 as a select() mask of T16's element width (-1 or 0). */
#if ELEM_SIZE == 1
#define TAKE16(cv) ((cv) != (uchar16)0)
#elif ELEM_SIZE == 2
#define TAKE16(cv) convert_short16((cv) != (uchar16)0)
#elif ELEM_SIZE == 4
#define TAKE16(cv) convert_int16((cv) != (uchar16)0)
#else
#define TAKE16(cv) convert_long16((cv) != (uchar16)0)
#endif

/* The CPU shape of Select/SelectV2 where each operand holds the output's
 * elements or a single one (bit j of `full`: operand j has them all): a
 * work-item per 16 elements, as explicit vectors. PoCL left select_flat's
 * conditional loads element by element (4M floats: 1.5-3.0 ms in a
 * standalone harness, this 0.78-1.06; a flat add 1.0-1.14). */
__kernel void select_vec16(OCL_TENSOR_ARG(const uchar, cond),
                           OCL_TENSOR_ARG(const T, then_),
                           OCL_TENSOR_ARG(const T, else_),
                           OCL_TENSOR_ARG(T, out), long n, int full)
{
  long i = (long)get_global_id(0) * 16;
  if (i >= n)
    return;
  const __global uchar *c = OCL_PTR(const uchar, cond);
  const __global T *t = OCL_PTR(const T, then_);
  const __global T *e = OCL_PTR(const T, else_);
  __global T *o = OCL_PTR(T, out);
  long ci = full & 1 ? i : 0, ti = full & 2 ? i : 0, ei = full & 4 ? i : 0;
  if (i + 16 <= n) {
    uchar16 cv = full & 1 ? vload16(0, c + ci) : (uchar16)(c[0]);
    T16 tv = full & 2 ? vload16(0, t + ti) : (T16)(t[0]);
    T16 ev = full & 4 ? vload16(0, e + ei) : (T16)(e[0]);
    vstore16(select(ev, tv, TAKE16(cv)), 0, o + i);
    return;
  }
  for (long k = 0; i + k < n; k++)
    o[i + k] = c[full & 1 ? ci + k : 0] ? t[full & 2 ? ti + k : 0]
                                        : e[full & 4 ? ei + k : 0];
}
#endif

/* The CPU shape of a broadcast Select/SelectV2: a work-item per span of an
 * output row (the innermost collapsed dim, of `inner` elements), each
 * operand's row found once and read along the span (stride 1) or as one
 * value (stride 0), a loop per combination so that each vectorises, with
 * both values loaded before the choice. select_bcast32's divisions per
 * element ran tf.where(mask, x, row) at 0.16x TensorFlow's CPU. */
#define SELECT_ROW_LOOP(C, TV, EV)                                           \
  for (int i = 0; i < len; i++) {                                            \
    T then_value = TV, else_value = EV;                                      \
    o[i] = (C) ? then_value : else_value;                                    \
  }
__kernel void select_rows(OCL_TENSOR_ARG(const uchar, cond),
                          OCL_TENSOR_ARG(const T, then_),
                          OCL_TENSOR_ARG(const T, else_),
                          OCL_TENSOR_ARG(T, out), int rows, bcast3_32_t s,
                          int span)
{
  int last = s.rank - 1, inner = s.dims[last];
  int i0 = get_global_id(0) * span, row = get_global_id(1);
  if (i0 >= inner || row >= rows)
    return;
  int at[3] = {0, 0, 0}, rest = row;
  for (int d = last - 1; d >= 0; d--) {
    int index = rest % s.dims[d];
    rest /= s.dims[d];
    at[0] += index * s.strides[0][d];
    at[1] += index * s.strides[1][d];
    at[2] += index * s.strides[2][d];
  }
  int len = min(span, inner - i0);
  bool cs = s.strides[0][last] != 0, ts = s.strides[1][last] != 0,
       es = s.strides[2][last] != 0;
  const __global uchar *c = OCL_PTR(const uchar, cond) + at[0] + (cs ? i0 : 0);
  const __global T *t = OCL_PTR(const T, then_) + at[1] + (ts ? i0 : 0);
  const __global T *e = OCL_PTR(const T, else_) + at[2] + (es ? i0 : 0);
  __global T *o = OCL_PTR(T, out) + row * inner + i0;
  uchar c0 = c[0];
  T t0 = t[0], e0 = e[0];
  if (cs) {
    if (ts && es)
      SELECT_ROW_LOOP(c[i], t[i], e[i])
    else if (ts)
      SELECT_ROW_LOOP(c[i], t[i], e0)
    else if (es)
      SELECT_ROW_LOOP(c[i], t0, e[i])
    else
      SELECT_ROW_LOOP(c[i], t0, e0)
  } else {
    /* One condition for the whole span: a copy or a fill. */
    if (c0 ? ts : es) {
      const __global T *src = c0 ? t : e;
      for (int i = 0; i < len; i++)
        o[i] = src[i];
    } else {
      T value = c0 ? t0 : e0;
      for (int i = 0; i < len; i++)
        o[i] = value;
    }
  }
}

/* Select/SelectV2 with any broadcast of the three (collapsed to at most 8
 * dims; the host splits higher ranks). */
#define SELECT_BCAST(NAME, S, I)                                             \
  __kernel void NAME(OCL_TENSOR_ARG(const uchar, cond),                      \
                     OCL_TENSOR_ARG(const T, then_),                         \
                     OCL_TENSOR_ARG(const T, else_), OCL_TENSOR_ARG(T, out), \
                     I n, S s)                                               \
  {                                                                          \
    I i = (I)get_global_id(0);                                               \
    OCL_GUARD(i, n);                                                         \
    I rem = i, ci = 0, ti = 0, ei = 0;                                       \
    for (I d = s.rank - 1; d >= 0; d--) {                                    \
      I c = rem % s.dims[d];                                                 \
      rem /= s.dims[d];                                                      \
      ci += c * s.strides[0][d];                                             \
      ti += c * s.strides[1][d];                                             \
      ei += c * s.strides[2][d];                                             \
    }                                                                        \
    OCL_PTR(T, out)[i] = OCL_PTR(const uchar, cond)[ci]                      \
                             ? OCL_PTR(const T, then_)[ti]                   \
                             : OCL_PTR(const T, else_)[ei];                  \
  }
SELECT_BCAST(select_bcast, bcast3_t, long)
SELECT_BCAST(select_bcast32, bcast3_32_t, int)

/* ---- OneHot ------------------------------------------------------------------ */

/* OneHot with the output viewed as [prefix, depth, suffix] and indices as
 * [prefix, suffix]. Negative and too-large indices match no position, so
 * their row is all off_value. */
#define ONE_HOT(NAME, IT, I)                                                  \
  __kernel void NAME(OCL_TENSOR_ARG(const IT, indices),                       \
                     OCL_TENSOR_ARG(const T, on), OCL_TENSOR_ARG(const T, off), \
                     OCL_TENSOR_ARG(T, out), I n, I depth, I suffix)          \
  {                                                                           \
    I i = (I)get_global_id(0);                                                \
    OCL_GUARD(i, n);                                                          \
    I s = i % suffix;                                                         \
    I r = i / suffix;                                                         \
    I d = r % depth;                                                          \
    I p = r / depth;                                                          \
    long idx = (long)OCL_PTR(const IT, indices)[p * suffix + s];              \
    OCL_PTR(T, out)[i] = idx == (long)d ? OCL_PTR(const T, on)[0]             \
                                        : OCL_PTR(const T, off)[0];           \
  }
ONE_HOT(one_hot_u8, uchar, long)
ONE_HOT(one_hot_i8, char, long)
ONE_HOT(one_hot_i32, int, long)
ONE_HOT(one_hot_i64, long, long)
ONE_HOT(one_hot32_u8, uchar, int)
ONE_HOT(one_hot32_i8, char, int)
ONE_HOT(one_hot32_i32, int, int)
ONE_HOT(one_hot32_i64, long, int)

/* The CPU shape's OneHot along the last axis: a work-item per span of an
 * index's row of depth, which is written whole, so its stores vectorise
 * (the flat kernel's divisions per element ran 0.06x TensorFlow's CPU:
 * 24.7 ms for 1M indices and depth 16, against 1.5). */
#define ONE_HOT_ROWS(NAME, IT)                                                \
  __kernel void NAME(OCL_TENSOR_ARG(const IT, indices),                       \
                     OCL_TENSOR_ARG(const T, on), OCL_TENSOR_ARG(const T, off), \
                     OCL_TENSOR_ARG(T, out), int rows, int depth, int span)   \
  {                                                                           \
    int d0 = get_global_id(0) * span, row = get_global_id(1);                 \
    if (d0 >= depth || row >= rows)                                           \
      return;                                                                 \
    int len = min(span, depth - d0);                                          \
    long index = (long)OCL_PTR(const IT, indices)[row];                       \
    int hit = index >= d0 && index < d0 + len ? (int)(index - d0) : -1;      \
    T on_value = OCL_PTR(const T, on)[0], off_value = OCL_PTR(const T, off)[0]; \
    __global T *out_row = OCL_PTR(T, out) + row * depth + d0;                 \
    for (int d = 0; d < len; d++)                                             \
      out_row[d] = d == hit ? on_value : off_value;                           \
  }
ONE_HOT_ROWS(one_hot_rows_u8, uchar)
ONE_HOT_ROWS(one_hot_rows_i8, char)
ONE_HOT_ROWS(one_hot_rows_i32, int)
ONE_HOT_ROWS(one_hot_rows_i64, long)

/* ---- BroadcastTo --------------------------------------------------------------- */

/* The collapsed broadcast (struct ocl_broadcast_to), at most 8 dims. */
typedef struct {
  long dims[8];
  long in_strides[8];
  long rank;
} bto_t;

typedef struct {
  int dims[8];
  int in_strides[8];
  int rank;
} bto32_t;

#define BROADCAST_TO(NAME, S, I)                                              \
  __kernel void NAME(OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(T, out),     \
                     I n, S s)                                                \
  {                                                                           \
    I i = (I)get_global_id(0);                                                \
    OCL_GUARD(i, n);                                                          \
    I rem = i, src = 0;                                                       \
    for (I d = s.rank - 1; d >= 0; d--) {                                     \
      I c = rem % s.dims[d];                                                  \
      rem /= s.dims[d];                                                       \
      src += c * s.in_strides[d];                                             \
    }                                                                         \
    OCL_PTR(T, out)[i] = OCL_PTR(const T, in)[src];                           \
  }
BROADCAST_TO(broadcast_to, bto_t, long)
BROADCAST_TO(broadcast_to32, bto32_t, int)

/* The CPU shape's: a work-item per span of an output row (the innermost
 * collapsed dim, of `inner` elements), whose source row is found once; the
 * row is a copy (innermost in_stride 1) or a fill (0). The flat kernel's
 * divisions per element ran 0.06x TensorFlow's CPU (a [1024] row to
 * [4096, 1024]: 6.3 ms against 0.38). */
__kernel void broadcast_to_rows(OCL_TENSOR_ARG(const T, in),
                                OCL_TENSOR_ARG(T, out), int rows, bto32_t s,
                                int span)
{
  int inner = s.dims[s.rank - 1];
  int i0 = get_global_id(0) * span, row = get_global_id(1);
  if (i0 >= inner || row >= rows)
    return;
  int src = 0, rest = row;
  for (int d = s.rank - 2; d >= 0; d--) {
    src += rest % s.dims[d] * s.in_strides[d];
    rest /= s.dims[d];
  }
  int len = min(span, inner - i0);
  const __global T *in_row = OCL_PTR(const T, in) + src;
  __global T *out_row = OCL_PTR(T, out) + row * inner + i0;
  if (s.in_strides[s.rank - 1] != 0) {
    for (int i = 0; i < len; i++)
      out_row[i] = in_row[i0 + i];
  } else {
    T value = in_row[0];
    for (int i = 0; i < len; i++)
      out_row[i] = value;
  }
}

/* ---- Range ------------------------------------------------------------------------ */

/* Range as TensorFlow's GPU kernel computes it: start + i * delta (its CPU
 * kernel accumulates instead). fma rounds once. */
#if ELEM_SIZE == 4
__kernel void range_float(OCL_TENSOR_ARG(float, out), long n, float start,
                          float delta)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  OCL_PTR(float, out)[i] = fma((float)i, delta, start);
}
#elif ELEM_SIZE == 8
__kernel void range_long(OCL_TENSOR_ARG(long, out), long n, long start,
                         long delta)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  OCL_PTR(long, out)[i] = start + i * delta;
}
#endif

/* ---- GatherNd, strided assignment (ResourceGatherNd,
 * ResourceStridedSliceAssign; kernels/scatter.c) ----------------------------- */

/* params viewed as [dims[0], ..., dims[k-1], slice], k <= 7 (k = 0: the
 * whole params per row); indices [n / slice, k]. An index tuple outside
 * params gives zeros, as TensorFlow's GPU kernel. */
typedef struct {
  long dims[8];
  long strides[8]; /* in slices */
  long k;
} gather_nd_t;

/* The offset (in slices) of the index tuple at idx, and whether every
 * index lies inside params. */
#define GATHER_ND_TUPLE(IT)                                                   \
  static long gather_nd_at_##IT(__global const IT *idx, gather_nd_t s,       \
                                bool *inside)                                 \
  {                                                                           \
    long at = 0;                                                              \
    bool ok = true;                                                           \
    for (int d = 0; d < s.k; d++) {                                           \
      long v = (long)idx[d];                                                  \
      ok = ok && v >= 0 && v < s.dims[d];                                     \
      at += v * s.strides[d];                                                 \
    }                                                                         \
    *inside = ok;                                                             \
    return at;                                                                \
  }
GATHER_ND_TUPLE(int)
GATHER_ND_TUPLE(long)

#define GATHER_ND(NAME, IT, I)                                                \
  __kernel void NAME(OCL_TENSOR_ARG(const T, params),                         \
                     OCL_TENSOR_ARG(const IT, indices),                       \
                     OCL_TENSOR_ARG(T, out), I n, I slice, gather_nd_t s)     \
  {                                                                           \
    I i = (I)get_global_id(0);                                                \
    OCL_GUARD(i, n);                                                          \
    I r = i / slice;                                                          \
    I c = i - r * slice;                                                      \
    bool ok;                                                                  \
    long at = gather_nd_at_##IT(                                              \
        OCL_PTR(const IT, indices) + (long)r * s.k, s, &ok);                  \
    OCL_PTR(T, out)[i] = ok ? OCL_PTR(const T, params)[(I)at * slice + c]     \
                            : (T)0;                                           \
  }
GATHER_ND(gather_nd32_i32, int, int)
GATHER_ND(gather_nd32_i64, long, int)
GATHER_ND(gather_nd_i32, int, long)
GATHER_ND(gather_nd_i64, long, long)

/* The CPU shape's, 32-bit indices: a work-item per span of an output row
 * (ocl_launch_spans over [1, rows, slice]), its index tuple read once and
 * the span copied, or zeroed where the tuple is outside params. The kernel
 * above divides and reads the tuple per element: an embedding lookup of
 * 32768 rows of 128 took 6.3 ms against TensorFlow CPU's 0.9. */
#define GATHER_ND_ROWS(NAME, IT)                                              \
  __kernel void NAME(OCL_TENSOR_ARG(const T, params),                         \
                     OCL_TENSOR_ARG(const IT, indices),                       \
                     OCL_TENSOR_ARG(T, out), int rows, int slice,             \
                     gather_nd_t s, int span)                                 \
  {                                                                           \
    int c0 = get_global_id(0) * span, r = get_global_id(1);                   \
    if (c0 >= slice || r >= rows)                                             \
      return;                                                                 \
    bool ok;                                                                  \
    long at = gather_nd_at_##IT(                                              \
        OCL_PTR(const IT, indices) + (long)r * s.k, s, &ok);                  \
    int len = min(span, slice - c0);                                          \
    __global T *to = OCL_PTR(T, out) + r * slice + c0;                        \
    if (ok) {                                                                 \
      __global const T *from =                                                \
          OCL_PTR(const T, params) + (int)at * slice + c0;                    \
      for (int c = 0; c < len; c++)                                           \
        to[c] = from[c];                                                      \
    } else {                                                                  \
      for (int c = 0; c < len; c++)                                           \
        to[c] = (T)0;                                                         \
    }                                                                         \
  }
GATHER_ND_ROWS(gather_nd_rows_i32, int)
GATHER_ND_ROWS(gather_nd_rows_i64, long)

/* var[out_offset + c . out_strides] = value[c . in_strides] over the
 * collapsed index space (struct ocl_strided_copy, at most 8 dims); value
 * strides are 0 where it is broadcast. */
typedef struct {
  long dims[8];
  long in_strides[8];
  long out_strides[8];
  long rank;
  long out_offset;
} assign_t;

__kernel void strided_assign(OCL_TENSOR_ARG(const T, value),
                             OCL_TENSOR_ARG(T, var), long n, assign_t s)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  long rem = i, vi = s.out_offset, xi = 0;
  for (long d = s.rank - 1; d >= 0; d--) {
    long c = rem % s.dims[d];
    rem /= s.dims[d];
    xi += c * s.in_strides[d];
    vi += c * s.out_strides[d];
  }
  OCL_PTR(T, var)[vi] = OCL_PTR(const T, value)[xi];
}
