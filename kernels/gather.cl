/* Fill, gather and select: kernels that move elements without looking at
 * their values.
 *
 * Built once per element size, not per dtype: -DT=uchar|ushort|uint|ulong
 * with -DELEM_SIZE=1|2|4|8. float, half, int32, int64 and bool share the
 * program of their size (a half moves as a ushort, a bool as a uchar).
 * Range is the one op that computes: its float and int64 kernels live in
 * the 4- and 8-byte programs. */
#include "common.clh"

/* out[i] = value[0]: Fill, whose value lives in device memory. */
__kernel void fill(OCL_TENSOR_ARG(const T, value), OCL_TENSOR_ARG(T, out),
                   long n)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  OCL_PTR(T, out)[i] = OCL_PTR(const T, value)[0];
}

/* GatherV2 over params viewed as [outer, limit, inner] and output as
 * [outer, num_indices, inner]. An index outside [0, limit) gives zeros, as
 * TensorFlow's GPU kernel does (its CPU kernel fails the op instead; the
 * host cannot check device-resident indices without blocking). */
#define GATHER(NAME, IT)                                                     \
  __kernel void NAME(OCL_TENSOR_ARG(const T, params),                        \
                     OCL_TENSOR_ARG(const IT, indices),                      \
                     OCL_TENSOR_ARG(T, out), long n, long limit, long inner, \
                     long num_indices)                                       \
  {                                                                          \
    long i = get_global_id(0);                                               \
    OCL_GUARD(i, n);                                                         \
    long k = i % inner;                                                      \
    long r = i / inner;                                                      \
    long j = r % num_indices;                                                \
    long o = r / num_indices;                                                \
    long idx = (long)OCL_PTR(const IT, indices)[j];                          \
    OCL_PTR(T, out)[i] = (idx >= 0 && idx < limit)                           \
                             ? OCL_PTR(const T, params)[(o * limit + idx) *  \
                                                            inner + k]       \
                             : (T)0;                                         \
  }
GATHER(gather_i16, short)
GATHER(gather_i32, int)
GATHER(gather_i64, long)

/* The collapsed three-way broadcast as gather.c's bcast3_args lays it out:
 * 8-byte members only, so host and device agree on the layout. */
typedef struct {
  long dims[8];
  long strides[3][8];
  long rank;
} bcast3_t;

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

/* Select/SelectV2 with any broadcast of the three. */
__kernel void select_bcast(OCL_TENSOR_ARG(const uchar, cond),
                           OCL_TENSOR_ARG(const T, then_),
                           OCL_TENSOR_ARG(const T, else_),
                           OCL_TENSOR_ARG(T, out), long n, bcast3_t s)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  long rem = i, ci = 0, ti = 0, ei = 0;
  for (long d = s.rank - 1; d >= 0; d--) {
    long c = rem % s.dims[d];
    rem /= s.dims[d];
    ci += c * s.strides[0][d];
    ti += c * s.strides[1][d];
    ei += c * s.strides[2][d];
  }
  OCL_PTR(T, out)[i] = OCL_PTR(const uchar, cond)[ci]
                           ? OCL_PTR(const T, then_)[ti]
                           : OCL_PTR(const T, else_)[ei];
}

/* OneHot with the output viewed as [prefix, depth, suffix] and indices as
 * [prefix, suffix]. Negative and too-large indices match no position, so
 * their row is all off_value. */
#define ONE_HOT(NAME, IT)                                                    \
  __kernel void NAME(OCL_TENSOR_ARG(const IT, indices),                      \
                     OCL_TENSOR_ARG(const T, on), OCL_TENSOR_ARG(const T, off), \
                     OCL_TENSOR_ARG(T, out), long n, long depth, long suffix) \
  {                                                                          \
    long i = get_global_id(0);                                               \
    OCL_GUARD(i, n);                                                         \
    long s = i % suffix;                                                     \
    long r = i / suffix;                                                     \
    long d = r % depth;                                                      \
    long p = r / depth;                                                      \
    long idx = (long)OCL_PTR(const IT, indices)[p * suffix + s];             \
    OCL_PTR(T, out)[i] = idx == d ? OCL_PTR(const T, on)[0]                  \
                                  : OCL_PTR(const T, off)[0];                \
  }
ONE_HOT(one_hot_u8, uchar)
ONE_HOT(one_hot_i8, char)
ONE_HOT(one_hot_i32, int)
ONE_HOT(one_hot_i64, long)

/* The collapsed broadcast of BroadcastTo (struct ocl_broadcast_to). */
typedef struct {
  long dims[8];
  long in_strides[8];
  long rank;
} bto_t;

__kernel void broadcast_to(OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(T, out),
                           long n, bto_t s)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  long rem = i, src = 0;
  for (long d = s.rank - 1; d >= 0; d--) {
    long c = rem % s.dims[d];
    rem /= s.dims[d];
    src += c * s.in_strides[d];
  }
  OCL_PTR(T, out)[i] = OCL_PTR(const T, in)[src];
}

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
