/* Binary element-wise ops with NumPy broadcasting.
 *
 * Built once per storage type: -DT=float|half|long|uchar (uchar = bool).
 * half is stored as half and computed in float, rounded to nearest even on
 * store: what TensorFlow's CPU kernels do, and it needs no cl_khr_fp16.
 *
 * Each op has five kernels, chosen on the host from the collapsed broadcast
 * (kernels/shape.h): _flat (same shapes), _xscalar, _yscalar (one side a
 * single element) and _bcast (general, up to 8 collapsed dims) in 32-bit
 * index arithmetic, or _bcast64 when an extent needs 64 bits (64-bit
 * division is emulated, and slow, on GPUs). Only the _bcast kernels loop
 * inside a work-item; the others stay vectorisable by PoCL. */
#include "common.clh"

#if defined(T_IS_HALF)
typedef float CT; /* compute type */
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#else
typedef T CT;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

#define STORE_BOOL(p, i, v) ((p)[i] = (uchar)((v) ? 1 : 0))

/* The collapsed broadcast as the host lays it out (struct bcast_args and
 * bcast32_args in binary.c): members of one size, so both sides agree on
 * the layout. */
typedef struct {
  long dims[8];
  long x_strides[8];
  long y_strides[8];
  long rank;
} bcast_t;

typedef struct {
  int dims[8];
  int x_strides[8];
  int y_strides[8];
  int rank;
} bcast32_t;

#define BINARY_KERNELS(NAME, OUT_T, STORE_OUT, EXPR)                         \
  __kernel void NAME##_flat(OCL_TENSOR_ARG(const T, x),                      \
                            OCL_TENSOR_ARG(const T, y),                      \
                            OCL_TENSOR_ARG(OUT_T, z), long n)                \
  {                                                                          \
    long i = get_global_id(0);                                               \
    OCL_GUARD(i, n);                                                         \
    CT a = LOAD(OCL_PTR(const T, x), i);                                     \
    CT b = LOAD(OCL_PTR(const T, y), i);                                     \
    STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                                 \
  }                                                                          \
  __kernel void NAME##_xscalar(OCL_TENSOR_ARG(const T, x),                   \
                               OCL_TENSOR_ARG(const T, y),                   \
                               OCL_TENSOR_ARG(OUT_T, z), long n)             \
  {                                                                          \
    long i = get_global_id(0);                                               \
    OCL_GUARD(i, n);                                                         \
    CT a = LOAD(OCL_PTR(const T, x), 0);                                     \
    CT b = LOAD(OCL_PTR(const T, y), i);                                     \
    STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                                 \
  }                                                                          \
  __kernel void NAME##_yscalar(OCL_TENSOR_ARG(const T, x),                   \
                               OCL_TENSOR_ARG(const T, y),                   \
                               OCL_TENSOR_ARG(OUT_T, z), long n)             \
  {                                                                          \
    long i = get_global_id(0);                                               \
    OCL_GUARD(i, n);                                                         \
    CT a = LOAD(OCL_PTR(const T, x), i);                                     \
    CT b = LOAD(OCL_PTR(const T, y), 0);                                     \
    STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                                 \
  }                                                                          \
  __kernel void NAME##_bcast(OCL_TENSOR_ARG(const T, x),                     \
                             OCL_TENSOR_ARG(const T, y),                     \
                             OCL_TENSOR_ARG(OUT_T, z), int n, bcast32_t s)   \
  {                                                                          \
    int i = get_global_id(0);                                                \
    OCL_GUARD(i, n);                                                         \
    int rem = i, xi = 0, yi = 0;                                             \
    for (int d = s.rank - 1; d >= 0; d--) {                                  \
      int c = rem % s.dims[d];                                               \
      rem /= s.dims[d];                                                      \
      xi += c * s.x_strides[d];                                              \
      yi += c * s.y_strides[d];                                              \
    }                                                                        \
    CT a = LOAD(OCL_PTR(const T, x), xi);                                    \
    CT b = LOAD(OCL_PTR(const T, y), yi);                                    \
    STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                                 \
  }                                                                          \
  /* Up to three collapsed dims as the NDRange itself (s.dims[0] outermost, \
   * dims[2] innermost along dimension 0): no division per element, and   \
   * neighbouring work-items on neighbouring elements of z (per-channel    \
   * scale and shift, row-wise normalisation). */                          \
  __kernel void NAME##_bcast3d(OCL_TENSOR_ARG(const T, x),                   \
                               OCL_TENSOR_ARG(const T, y),                   \
                               OCL_TENSOR_ARG(OUT_T, z), bcast32_t s)        \
  {                                                                          \
    int i = get_global_id(0), j = get_global_id(1), k = get_global_id(2);    \
    if (i >= s.dims[2] || j >= s.dims[1] || k >= s.dims[0])                  \
      return;                                                                \
    int xi = k * s.x_strides[0] + j * s.x_strides[1] + i * s.x_strides[2];   \
    int yi = k * s.y_strides[0] + j * s.y_strides[1] + i * s.y_strides[2];   \
    CT a = LOAD(OCL_PTR(const T, x), xi);                                    \
    CT b = LOAD(OCL_PTR(const T, y), yi);                                    \
    STORE_OUT(OCL_PTR(OUT_T, z), (k * s.dims[1] + j) * s.dims[2] + i,        \
              (EXPR));                                                       \
  }                                                                          \
  __kernel void NAME##_bcast64(OCL_TENSOR_ARG(const T, x),                   \
                               OCL_TENSOR_ARG(const T, y),                   \
                               OCL_TENSOR_ARG(OUT_T, z), long n, bcast_t s)  \
  {                                                                          \
    long i = get_global_id(0);                                               \
    OCL_GUARD(i, n);                                                         \
    long rem = i, xi = 0, yi = 0;                                            \
    for (long d = s.rank - 1; d >= 0; d--) {                                 \
      long c = rem % s.dims[d];                                              \
      rem /= s.dims[d];                                                      \
      xi += c * s.x_strides[d];                                              \
      yi += c * s.y_strides[d];                                              \
    }                                                                        \
    CT a = LOAD(OCL_PTR(const T, x), xi);                                    \
    CT b = LOAD(OCL_PTR(const T, y), yi);                                    \
    STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                                 \
  }

#define ARITH(NAME, EXPR) BINARY_KERNELS(NAME, T, STORE, EXPR)
#define COMPARE(NAME, EXPR) BINARY_KERNELS(NAME, uchar, STORE_BOOL, EXPR)

#if defined(T_IS_BOOL)

BINARY_KERNELS(logical_and, uchar, STORE_BOOL, a && b)
BINARY_KERNELS(logical_or, uchar, STORE_BOOL, a || b)
COMPARE(equal, a == b)
COMPARE(not_equal, a != b)

#else

ARITH(add, a + b)
ARITH(sub, a - b)
ARITH(mul, a * b)
/* TensorFlow's Maximum/Minimum propagate NaN (Eigen::PropagateNaN). */
#if defined(T_IS_FLOAT) || defined(T_IS_HALF)
ARITH(maximum, isnan(a) ? a : isnan(b) ? b : fmax(a, b))
ARITH(minimum, isnan(a) ? a : isnan(b) ? b : fmin(a, b))
ARITH(real_div, a / b)
ARITH(div_no_nan, b == (CT)0 ? (CT)0 : a / b)
/* Not "pow": PoCL defines it as an object-like macro. */
ARITH(power, pow(a, b))
ARITH(squared_difference, (a - b) * (a - b))
ARITH(floor_div, floor(a / b))
/* google_floor_fmod: the remainder takes the divisor's sign. */
static CT floor_mod_of(CT a, CT b)
{
  CT r = fmod(a, b);
  return (r != (CT)0 && ((b < (CT)0) != (r < (CT)0))) ? r + b : r;
}
ARITH(floor_mod, floor_mod_of(a, b))
/* Atan2's inputs are (y, x). Not "atan2", which PoCL defines as a macro. */
ARITH(arc_tangent2, atan2(a, b))
/* TensorFlow's xlogy family: 0 wherever x == 0, whatever y is (0, NaN). */
ARITH(xlogy, a == (CT)0 ? (CT)0 : a * log(b))
ARITH(xdivy, a == (CT)0 ? (CT)0 : a / b)
ARITH(xlog1py, a == (CT)0 ? (CT)0 : a * log1p(b))
ARITH(next_after, nextafter(a, b))
#else
ARITH(maximum, max(a, b))
ARITH(minimum, min(a, b))
ARITH(squared_difference, (a - b) * (a - b))
/* google_floor_div / google_floor_mod for integers. Division by zero is
 * undefined on devices; TensorFlow's CPU kernel fails the op instead, which
 * the host checks for before launching (see binary.c). */
static CT floor_div_of(CT a, CT b)
{
  /* MIN / -1 traps on x86 (PoCL runs this on the CPU): negate with
   * wrap-around instead, as TensorFlow's int kernels wrap. */
  if ((CT)-1 < (CT)0 && b == (CT)-1)
    return (CT)((ulong)0 - (ulong)a);
  if ((a < 0) != (b < 0)) {
    CT abs_a = a < 0 ? -a : a;
    CT abs_b = b < 0 ? -b : b;
    return -((abs_a + abs_b - 1) / abs_b);
  }
  return a / b;
}
static CT floor_mod_of(CT a, CT b)
{
  if ((CT)-1 < (CT)0 && b == (CT)-1)
    return 0; /* and MIN % -1 would trap */
  CT r = a % b;
  return ((a < 0) != (b < 0) && r != 0) ? r + b : r;
}
ARITH(floor_div, b == 0 ? 0 : floor_div_of(a, b))
ARITH(floor_mod, b == 0 ? 0 : floor_mod_of(a, b))
ARITH(bitwise_and, a & b)
ARITH(bitwise_or, a | b)
ARITH(bitwise_xor, a ^ b)
/* TensorFlow clamps the shift to [0, bits - 1]; the left shift goes through
 * the unsigned type (shifting a negative signed value is undefined), the
 * right shift of a signed value is arithmetic. */
#define SHIFT_OF(b) clamp(b, (CT)0, (CT)(sizeof(CT) * 8 - 1))
ARITH(left_shift, (CT)((ulong)a << (ulong)SHIFT_OF(b)))
ARITH(right_shift, a >> SHIFT_OF(b))
#endif
COMPARE(equal, a == b)
COMPARE(not_equal, a != b)
COMPARE(less, a < b)
COMPARE(less_equal, a <= b)
COMPARE(greater, a > b)
COMPARE(greater_equal, a >= b)

#endif
