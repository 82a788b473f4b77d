/* Unary element-wise ops, their gradients, and Cast.
 *
 * Built once per storage type: -DT=float|half|long|uchar (uchar = bool), and
 * once with -DCAST for Cast's kernels (every source/destination pair). half
 * is stored as half and computed in float, rounded to nearest even on store:
 * what TensorFlow's CPU kernels do, and it needs no cl_khr_fp16.
 *
 * One work item per element and no loop inside a work item, so that PoCL
 * vectorises across work items. Every kernel takes the same arguments
 * (x, y, n, alpha) or (p, q, z, n, alpha), so the host launches them all
 * alike; alpha is LeakyRelu's and is ignored by the others. Kernel names
 * are passed whole (unary_exp, not exp): PoCL defines some built-ins as
 * macros, which would expand inside a macro argument. */
#include "common.clh"

#if defined(CAST)

/* ---- Cast ------------------------------------------------------------------
 * Storage, load and store per type name. A value travels as its type's
 * compute type (half as float, bool as uchar). */
#define ST_float float
#define ST_half half
#define ST_int int
#define ST_long long
#define ST_bool uchar

#define LD_float(p, i) ((p)[i])
#define LD_half(p, i) vload_half((i), (p))
#define LD_int(p, i) ((p)[i])
#define LD_long(p, i) ((p)[i])
#define LD_bool(p, i) ((p)[i])

#define SV_float(p, i, v) ((p)[i] = (v))
#define SV_half(p, i, v) vstore_half_rte((v), (i), (p))
#define SV_int(p, i, v) ((p)[i] = (v))
#define SV_long(p, i, v) ((p)[i] = (v))
#define SV_bool(p, i, v) ((p)[i] = (v))

/* Float to integer truncates toward zero (static_cast). NaN and values out
 * of range give the most negative integer: what TensorFlow's CPU kernel
 * produces on x86-64 (cvttss2si's "integer indefinite"), made explicit so
 * every device agrees. */
static int float_to_int(float v)
{
  return (isnan(v) || v >= 0x1p31f || v < -0x1p31f) ? INT_MIN
                                                     : convert_int_rtz(v);
}
static long float_to_long(float v)
{
  return (isnan(v) || v >= 0x1p63f || v < -0x1p63f) ? LONG_MIN
                                                     : convert_long_rtz(v);
}

/* Truncate=true (float to half only, as TensorFlow): the low 13 mantissa
 * bits are cleared before rounding, so the conversion truncates. */
static float truncate_to_half(float v, int truncate)
{
  return (truncate && !isnan(v)) ? as_float(as_uint(v) & 0xffffe000u) : v;
}

/* Conversions by (destination, source class): F = float or half, I = an
 * integer or bool. Integers reach half through float, as Eigen does. */
#define CV_float_F(v) (v)
#define CV_float_I(v) ((float)(v))
#define CV_half_F(v) truncate_to_half((v), truncate)
#define CV_half_I(v) ((float)(v))
#define CV_int_F(v) float_to_int(v)
#define CV_int_I(v) ((int)(v))
#define CV_long_F(v) float_to_long(v)
#define CV_long_I(v) ((long)(v))
#define CV_bool_F(v) ((uchar)((v) != 0.0f))
#define CV_bool_I(v) ((uchar)((v) != 0))

#define CLASS_float F
#define CLASS_half F
#define CLASS_int I
#define CLASS_long I
#define CLASS_bool I

#define CV_(DST, CLS, v) CV_##DST##_##CLS(v)
#define CV(DST, CLS, v) CV_(DST, CLS, v)

#define CAST_KERNEL(SRC, DST)                                             \
  __kernel void cast_##SRC##_##DST(OCL_TENSOR_ARG(const ST_##SRC, x),     \
                                   OCL_TENSOR_ARG(ST_##DST, y), long n,    \
                                   int truncate)                           \
  {                                                                       \
    long i = get_global_id(0);                                            \
    OCL_GUARD(i, n);                                                      \
    (void)truncate;                                                       \
    SV_##DST(OCL_PTR(ST_##DST, y), i,                                     \
             CV(DST, CLASS_##SRC, LD_##SRC(OCL_PTR(const ST_##SRC, x), i))); \
  }

#define CASTS_FROM(SRC)  \
  CAST_KERNEL(SRC, float) \
  CAST_KERNEL(SRC, half)  \
  CAST_KERNEL(SRC, int)   \
  CAST_KERNEL(SRC, long)  \
  CAST_KERNEL(SRC, bool)

CASTS_FROM(float)
CASTS_FROM(half)
CASTS_FROM(int)
CASTS_FROM(long)
CASTS_FROM(bool)

#else /* !CAST */

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

#define UNARY_KERNEL(NAME, OUT_T, STORE_OUT, EXPR)                        \
  __kernel void NAME(OCL_TENSOR_ARG(const T, x),                  \
                             OCL_TENSOR_ARG(OUT_T, y), long n, float alpha) \
  {                                                                       \
    long i = get_global_id(0);                                            \
    OCL_GUARD(i, n);                                                      \
    (void)alpha;                                                          \
    CT a = LOAD(OCL_PTR(const T, x), i);                                  \
    STORE_OUT(OCL_PTR(OUT_T, y), i, (EXPR));                              \
  }

/* Gradients: a and b are the op's two inputs in TensorFlow's order. */
#define GRAD_KERNEL(NAME, EXPR)                                           \
  __kernel void NAME(OCL_TENSOR_ARG(const T, p),                   \
                            OCL_TENSOR_ARG(const T, q),                   \
                            OCL_TENSOR_ARG(T, z), long n, float alpha)     \
  {                                                                       \
    long i = get_global_id(0);                                            \
    OCL_GUARD(i, n);                                                      \
    (void)alpha;                                                          \
    CT a = LOAD(OCL_PTR(const T, p), i);                                  \
    CT b = LOAD(OCL_PTR(const T, q), i);                                  \
    STORE(OCL_PTR(T, z), i, (EXPR));                                      \
  }

#define UNARY(NAME, EXPR) UNARY_KERNEL(NAME, T, STORE, EXPR)
#define PREDICATE(NAME, EXPR) UNARY_KERNEL(NAME, uchar, STORE_BOOL, EXPR)

#if defined(T_IS_BOOL)

UNARY(unary_logical_not, (uchar)(a == 0))

#elif defined(T_IS_FLOAT) || defined(T_IS_HALF)

#define SELU_SCALE 1.0507009873554804934193349852946f
#define SELU_SCALE_ALPHA (1.0507009873554804934193349852946f * \
                          1.6732632423543772848170429916717f)

/* exp(-|a|) never overflows: large negative inputs give 0, not NaN. */
static CT sigmoid_of(CT a)
{
  CT e = exp(-fabs(a));
  CT s = (CT)1 / ((CT)1 + e);
  return a >= (CT)0 ? s : e * s;
}

/* TensorFlow's thresholds: log(FLT_EPSILON) + 2. Above -threshold,
 * softplus(x) == x and below threshold softplus(x) == exp(x) within float
 * precision, and log1p(exp(x)) would overflow or lose exp(x). */
static CT softplus_of(CT a)
{
  const CT threshold = -13.942385152878742f;
  CT e = exp(a);
  return a > -threshold ? a : a < threshold ? e : log1p(e);
}

static CT relu6_of(CT a)
{
  CT r = a < (CT)0 ? (CT)0 : a;
  return r > (CT)6 ? (CT)6 : r;
}

/* Eigen's sign: NaN stays NaN, both zeros give +0. */
UNARY(unary_neg, -a)
UNARY(unary_abs, fabs(a))
UNARY(unary_sign, isnan(a) ? a : (CT)((a > (CT)0) - (a < (CT)0)))
UNARY(unary_exp, exp(a))
UNARY(unary_expm1, expm1(a))
UNARY(unary_log, log(a))
UNARY(unary_log1p, log1p(a))
UNARY(unary_sqrt, sqrt(a))
UNARY(unary_rsqrt, rsqrt(a))
UNARY(unary_square, a * a)
UNARY(unary_reciprocal, (CT)1 / a)
UNARY(unary_tanh, tanh(a))
UNARY(unary_sigmoid, sigmoid_of(a))
/* std::max(a, 0) (and std::min(., 6), relu6_of) as Eigen's CPU kernels
 * compute them: NaN propagates, -0 stays -0. */
UNARY(unary_relu, a < (CT)0 ? (CT)0 : a)
UNARY(unary_relu6, relu6_of(a))
UNARY(unary_elu, a < (CT)0 ? expm1(a) : a)
UNARY(unary_selu, a < (CT)0 ? SELU_SCALE_ALPHA * expm1(a) : SELU_SCALE * a)
UNARY(unary_leaky_relu, a > (CT)0 ? a : a * (CT)alpha)
UNARY(unary_softplus, softplus_of(a))
UNARY(unary_softsign, a / (fabs(a) + (CT)1))
UNARY(unary_erf, erf(a))
UNARY(unary_sin, sin(a))
UNARY(unary_cos, cos(a))
UNARY(unary_floor, floor(a))
UNARY(unary_ceil, ceil(a))
/* Round half to even, as TensorFlow's Round. */
UNARY(unary_round, rint(a))
PREDICATE(unary_is_nan, isnan(a))
PREDICATE(unary_is_finite, isfinite(a))
PREDICATE(unary_is_inf, isinf(a))

/* The relu family multiplies by the mask rather than selecting, as
 * TensorFlow does: a NaN or infinite gradient gives NaN where the mask is
 * 0. */
GRAD_KERNEL(grad_relu, a * (CT)(b > (CT)0))
GRAD_KERNEL(grad_relu6, a * (CT)((b > (CT)0) & (b < (CT)6)))
GRAD_KERNEL(grad_elu, b < (CT)0 ? a * (b + (CT)1) : a)
GRAD_KERNEL(grad_selu, b < (CT)0 ? a * (b + SELU_SCALE_ALPHA) : a * SELU_SCALE)
GRAD_KERNEL(grad_leaky_relu, b > (CT)0 ? a : a * (CT)alpha)
GRAD_KERNEL(grad_softplus, a / (exp(-b) + (CT)1))
/* (y, dy) ops: a = y, b = dy. */
GRAD_KERNEL(grad_sigmoid, b * a * ((CT)1 - a))
/* fma: no cancellation in 1 - y*y as y nears 1. */
GRAD_KERNEL(grad_tanh, b * fma(-a, a, (CT)1))
GRAD_KERNEL(grad_sqrt, (CT)0.5 * b / a)
GRAD_KERNEL(grad_rsqrt, (CT)-0.5 * (a * a) * (a * b))
GRAD_KERNEL(grad_reciprocal, -a * a * b)

#else /* long */

/* Two's complement wrap-around, as TensorFlow's integer kernels. */
UNARY(unary_neg, (long)(0ul - (ulong)a))
UNARY(unary_abs, a < 0 ? (long)(0ul - (ulong)a) : a)
UNARY(unary_sign, (long)((a > 0) - (a < 0)))
UNARY(unary_square, (long)((ulong)a * (ulong)a))
UNARY(unary_round, a)
/* 1 / 0 has no integer answer; devices differ, so it is defined as 0. */
UNARY(unary_reciprocal, a == 0 ? 0 : 1 / a)

#endif
#endif /* CAST */
