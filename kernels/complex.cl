/* The complex family (complex.c): element-wise ops on complex64 and
 * complex128 tensors, stored as float2 / double2 (real, imaginary), the
 * layout of std::complex and of TensorFlow's tensors.
 *
 * Built with -DT_IS_DOUBLE for complex128 (double throughout, which needs
 * cl_khr_fp64), else in float: no fp64 in complex64 kernels. -DINDEX=uint
 * or ulong: 32-bit index math wherever the tensor allows it, since 64-bit
 * division is emulated, and slow, on GPUs.
 *
 * Each binary op has a _flat kernel (equal shapes, or one side a single
 * element: its step is 0) and a _bcast kernel (up to MAX_DIMS collapsed
 * dims, element strides 0 along a broadcast dim). Neighbouring work-items
 * write neighbouring elements. */
#include "common.clh"

/* Contracting a*b - c*d into an fma would round differently from
 * TensorFlow's CPU kernels and, for infinite parts, give another NaN
 * pattern than the host reference. */
#pragma OPENCL FP_CONTRACT OFF

#ifdef T_IS_DOUBLE
typedef double real_t;
typedef double2 cplx_t;
#else
typedef float real_t;
typedef float2 cplx_t;
#endif

#define MAX_DIMS 8

/* complex.c's struct bcast_args_32 / bcast_args_64. */
struct bcast_args {
  INDEX dims[MAX_DIMS];
  INDEX x_strides[MAX_DIMS];
  INDEX y_strides[MAX_DIMS];
  int rank;
};

/* The schoolbook product, as Eigen's vectorised complex product (and
 * TensorFlow's GPU kernels) compute it: no C99 Annex G recovery of
 * infinities, so (1+0i) * (inf+inf i) is NaN in both parts there too. */
static inline cplx_t c_mul(cplx_t a, cplx_t b)
{
  return (cplx_t)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* Eigen's pdiv_complex, which TensorFlow's CPU kernels run: the divisor is
 * scaled by the larger magnitude of its parts first, so that |b|^2 neither
 * overflows nor underflows where the quotient itself is representable
 * ((1+i) / (1e30+1e30i) is 1e-30, not 0), and a zero or infinite divisor
 * gives NaN, as there. */
static inline cplx_t c_div(cplx_t a, cplx_t b)
{
  real_t scale = fmax(fabs(b.x), fabs(b.y));
  cplx_t b_scaled = b / scale;
  real_t denominator = b_scaled.x * b_scaled.x + b_scaled.y * b_scaled.y;
  cplx_t numerator = (cplx_t)(a.x * b_scaled.x + a.y * b_scaled.y,
                              a.y * b_scaled.x - a.x * b_scaled.y);
  return numerator / denominator / scale;
}

/* Eigen's pexp_complex, which TensorFlow's CPU kernels run: exp(x) cis(y)
 * with its edge cases. A real argument (y = +-0) stays real; where exp(x)
 * is infinite and y finite, cis(y) keeps only its signs, so that no
 * inf * 0 makes a NaN; x = -inf gives a zero even where cis(y) is NaN, and
 * x = +inf with an infinite or NaN y gives (+-inf, NaN), the sign y's. */
static inline cplx_t c_exp(cplx_t a)
{
  real_t e = exp(a.x);
  if (a.y == 0)
    return (cplx_t)(e, a.y);
  real_t c;
  real_t s = sincos(a.y, &c);
  if (isinf(a.x) && isnan(c))
    return a.x < 0 ? (cplx_t)(0, 0) : (cplx_t)(copysign(e, a.y), NAN);
  if (isinf(e) && isfinite(a.y)) {
    c = copysign((real_t)1, c);
    s = copysign((real_t)1, s);
  }
  return (cplx_t)(e * c, e * s);
}

#define BINARY_KERNELS(NAME, IN, OUT, EXPR)                                  \
  __kernel void NAME##_flat(OCL_TENSOR_ARG(const IN, x),                     \
                            OCL_TENSOR_ARG(const IN, y),                     \
                            OCL_TENSOR_ARG(OUT, z), INDEX n, INDEX x_step,   \
                            INDEX y_step)                                    \
  {                                                                          \
    INDEX i = (INDEX)get_global_id(0);                                       \
    OCL_GUARD(i, n);                                                         \
    IN a = OCL_PTR(const IN, x)[i * x_step];                                 \
    IN b = OCL_PTR(const IN, y)[i * y_step];                                 \
    OCL_PTR(OUT, z)[i] = (EXPR);                                             \
  }                                                                          \
  __kernel void NAME##_bcast(OCL_TENSOR_ARG(const IN, x),                    \
                             OCL_TENSOR_ARG(const IN, y),                    \
                             OCL_TENSOR_ARG(OUT, z), INDEX n,                \
                             struct bcast_args shape)                        \
  {                                                                          \
    INDEX i = (INDEX)get_global_id(0);                                       \
    OCL_GUARD(i, n);                                                         \
    INDEX rest = i, xi = 0, yi = 0;                                          \
    for (int d = shape.rank - 1; d >= 0; d--) {                              \
      INDEX coord = rest % shape.dims[d];                                    \
      rest /= shape.dims[d];                                                 \
      xi += coord * shape.x_strides[d];                                      \
      yi += coord * shape.y_strides[d];                                      \
    }                                                                        \
    IN a = OCL_PTR(const IN, x)[xi];                                         \
    IN b = OCL_PTR(const IN, y)[yi];                                         \
    OCL_PTR(OUT, z)[i] = (EXPR);                                             \
  }

BINARY_KERNELS(complex_add, cplx_t, cplx_t, a + b)
BINARY_KERNELS(complex_sub, cplx_t, cplx_t, a - b)
BINARY_KERNELS(complex_mul, cplx_t, cplx_t, c_mul(a, b))
BINARY_KERNELS(complex_div, cplx_t, cplx_t, c_div(a, b))
BINARY_KERNELS(complex_make, real_t, cplx_t, (cplx_t)(a, b))

#define UNARY_KERNEL(NAME, OUT, EXPR)                                        \
  __kernel void NAME(OCL_TENSOR_ARG(const cplx_t, x), OCL_TENSOR_ARG(OUT, y), \
                     INDEX n)                                                \
  {                                                                          \
    INDEX i = (INDEX)get_global_id(0);                                       \
    OCL_GUARD(i, n);                                                         \
    cplx_t a = OCL_PTR(const cplx_t, x)[i];                                  \
    OCL_PTR(OUT, y)[i] = (EXPR);                                             \
  }

UNARY_KERNEL(complex_neg, cplx_t, -a)
UNARY_KERNEL(complex_conj, cplx_t, (cplx_t)(a.x, -a.y))
UNARY_KERNEL(complex_square, cplx_t, c_mul(a, a))
UNARY_KERNEL(complex_exp, cplx_t, c_exp(a))
UNARY_KERNEL(complex_real, real_t, a.x)
UNARY_KERNEL(complex_imag, real_t, a.y)
/* hypot, as std::abs: no overflow of |a|^2 where |a| is finite, and
 * infinite wherever a part is infinite, even beside a NaN. */
UNARY_KERNEL(complex_abs, real_t, hypot(a.x, a.y))
/* std::arg: the signs of zeros choose between 0, pi and -pi. */
UNARY_KERNEL(complex_angle, real_t, atan2(a.y, a.x))
