/* Unary element-wise ops, their gradients, and Cast.
 *
 * Built once per storage type: -DT=float|half|long|uchar (uchar = bool), and
 * once with -DCAST for Cast's kernels (every source/destination pair; those
 * with float64 in a -DCAST -DCAST_FP64 program of their own). half
 * is stored as half and computed in float, rounded to nearest even on store:
 * what TensorFlow's CPU kernels do, and it needs no cl_khr_fp16.
 *
 * One work item per element and no loop inside a work item, so that PoCL
 * vectorises across work items. Every kernel takes the same arguments
 * (x, y, n, alpha) or (p, q, z, n, alpha), so the host launches them all
 * alike; alpha is LeakyRelu's and is ignored by the others. Kernel names
 * are passed whole (unary_exp, not exp): PoCL defines some built-ins as
 * macros, which would expand inside a macro argument. */
#include "activations.clh"
#include "common.clh"

#if defined(CAST)

/* ---- Cast ------------------------------------------------------------------
 * Every pair of the 13 types below (one program; pairs with float64 in a
 * second one, -DCAST_FP64, built only on devices with cl_khr_fp64). A value
 * is loaded into its class's type (F: float, for float, half and
 * bfloat16; D: double; I: long, for the signed integers, the narrower
 * unsigned ones and bool; U: ulong) and converted to the destination from
 * there, as TensorFlow's static_casts do on x86-64. Names: f32 f16 bf16
 * f64 i8 u8 i16 u16 i32 u32 i64 u64 b. */
#define ST_f32 float
#define ST_f16 half
#define ST_bf16 ushort
#define ST_f64 double
#define ST_i8 char
#define ST_u8 uchar
#define ST_i16 short
#define ST_u16 ushort
#define ST_i32 int
#define ST_u32 uint
#define ST_i64 long
#define ST_u64 ulong
#define ST_b uchar

#define CLASS_f32 F
#define CLASS_f16 F
#define CLASS_bf16 F
#define CLASS_f64 D
#define CLASS_i8 I
#define CLASS_u8 I
#define CLASS_i16 I
#define CLASS_u16 I
#define CLASS_i32 I
#define CLASS_u32 I
#define CLASS_i64 I
#define CLASS_u64 U
#define CLASS_b I

#define LD_f32(p, i) ((p)[i])
#define LD_f16(p, i) vload_half((i), (p))
#define LD_bf16(p, i) ocl_bf16_to_float((p)[i])
#define LD_f64(p, i) ((p)[i])
#define LD_I(p, i) ((long)(p)[i])
#define LD_i8 LD_I
#define LD_u8 LD_I
#define LD_i16 LD_I
#define LD_u16 LD_I
#define LD_i32 LD_I
#define LD_u32 LD_I
#define LD_i64 LD_I
#define LD_u64(p, i) ((p)[i])
#define LD_b LD_I

/* Float to integer truncates toward zero (static_cast). NaN and values out
 * of range give the most negative integer: what TensorFlow's CPU kernel
 * produces on x86-64 (cvttss2si's "integer indefinite"), made explicit so
 * every device agrees. Narrower integers take the low bits of the int32
 * conversion (uint32 of the int64 one), as the compiled casts do. */
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
/* uint64 as TensorFlow's CPU kernel gives it: [2^63, 2^64) exactly, the
 * rest (negatives wrap) through the int64 conversion. TensorFlow's results
 * for NaN and values out of range of uint32/uint64 depend on an element's
 * position (vectorised body vs scalar tail): these definitions are the
 * scalar ones, for every element. */
static ulong float_to_ulong(float v)
{
  return (v >= 0x1p63f && v < 0x1p64f)
             ? ((ulong)convert_long_rtz(v - 0x1p63f) ^ 0x8000000000000000ul)
             : (ulong)float_to_long(v);
}

/* Truncate=true (float to half only, as TensorFlow): the low 13 mantissa
 * bits are cleared before rounding, so the conversion truncates. */
static float truncate_to_half(float v, int truncate)
{
  return (truncate && !isnan(v)) ? as_float(as_uint(v) & 0xffffe000u) : v;
}

#if defined(CAST_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
static int double_to_int(double v)
{
  return (isnan(v) || v >= 0x1p31 || v < -0x1p31) ? INT_MIN
                                                   : convert_int_rtz(v);
}
static long double_to_long(double v)
{
  return (isnan(v) || v >= 0x1p63 || v < -0x1p63) ? LONG_MIN
                                                   : convert_long_rtz(v);
}
static ulong double_to_ulong(double v)
{
  return (v >= 0x1p63 && v < 0x1p64)
             ? ((ulong)convert_long_rtz(v - 0x1p63) ^ 0x8000000000000000ul)
             : (ulong)double_to_long(v);
}
/* Eigen's half and bfloat16 from double go through float. */
#define CV_f32_D(v) ((float)(v))
#define CV_f16_D(v) ((float)(v))
#define CV_bf16_D(v) ocl_float_to_bf16((float)(v))
#define CV_f64_F(v) ((double)(v))
#define CV_f64_D(v) (v)
#define CV_f64_I(v) ((double)(v))
#define CV_f64_U(v) ((double)(v))
#define CV_i8_D(v) ((char)double_to_int(v))
#define CV_u8_D(v) ((uchar)double_to_int(v))
#define CV_i16_D(v) ((short)double_to_int(v))
#define CV_u16_D(v) ((ushort)double_to_int(v))
#define CV_i32_D(v) double_to_int(v)
#define CV_u32_D(v) ((uint)double_to_long(v))
#define CV_i64_D(v) double_to_long(v)
#define CV_u64_D(v) double_to_ulong(v)
#define CV_b_D(v) ((uchar)((v) != 0.0))
#endif

/* Conversions by (destination, source class). */
#define CV_f32_F(v) (v)
#define CV_f32_I(v) ((float)(v))
#define CV_f32_U(v) ((float)(v))
#define CV_f16_F(v) truncate_to_half((v), truncate)
#define CV_f16_I(v) ((float)(v))
#define CV_f16_U(v) ((float)(v))
#define CV_bf16_F(v) ocl_float_to_bf16(v)
#define CV_bf16_I(v) ocl_float_to_bf16((float)(v))
#define CV_bf16_U(v) ocl_float_to_bf16((float)(v))
#define CV_i8_F(v) ((char)float_to_int(v))
#define CV_u8_F(v) ((uchar)float_to_int(v))
#define CV_i16_F(v) ((short)float_to_int(v))
#define CV_u16_F(v) ((ushort)float_to_int(v))
#define CV_i32_F(v) float_to_int(v)
#define CV_u32_F(v) ((uint)float_to_long(v))
#define CV_i64_F(v) float_to_long(v)
#define CV_u64_F(v) float_to_ulong(v)
#define CV_b_F(v) ((uchar)((v) != 0.0f))
#define CV_i8_I(v) ((char)(v))
#define CV_u8_I(v) ((uchar)(v))
#define CV_i16_I(v) ((short)(v))
#define CV_u16_I(v) ((ushort)(v))
#define CV_i32_I(v) ((int)(v))
#define CV_u32_I(v) ((uint)(v))
#define CV_i64_I(v) ((long)(v))
#define CV_u64_I(v) ((ulong)(v))
#define CV_b_I(v) ((uchar)((v) != 0))
#define CV_i8_U(v) ((char)(v))
#define CV_u8_U(v) ((uchar)(v))
#define CV_i16_U(v) ((short)(v))
#define CV_u16_U(v) ((ushort)(v))
#define CV_i32_U(v) ((int)(v))
#define CV_u32_U(v) ((uint)(v))
#define CV_i64_U(v) ((long)(v))
#define CV_u64_U(v) (v)
#define CV_b_U(v) ((uchar)((v) != 0))

/* Stores: half through vstore_half_rte; everything else as converted. */
#define SV_f16(p, i, v) vstore_half_rte((v), (i), (p))
#define SV_PLAIN(p, i, v) ((p)[i] = (v))
#define SV_f32 SV_PLAIN
#define SV_bf16 SV_PLAIN
#define SV_f64 SV_PLAIN
#define SV_i8 SV_PLAIN
#define SV_u8 SV_PLAIN
#define SV_i16 SV_PLAIN
#define SV_u16 SV_PLAIN
#define SV_i32 SV_PLAIN
#define SV_u32 SV_PLAIN
#define SV_i64 SV_PLAIN
#define SV_u64 SV_PLAIN
#define SV_b SV_PLAIN

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

#if defined(CAST_FP64)
#define CASTS_WITH_DOUBLE(T) CAST_KERNEL(T, f64) CAST_KERNEL(f64, T)
CASTS_WITH_DOUBLE(f32)
CASTS_WITH_DOUBLE(f16)
CASTS_WITH_DOUBLE(bf16)
CASTS_WITH_DOUBLE(i8)
CASTS_WITH_DOUBLE(u8)
CASTS_WITH_DOUBLE(i16)
CASTS_WITH_DOUBLE(u16)
CASTS_WITH_DOUBLE(i32)
CASTS_WITH_DOUBLE(u32)
CASTS_WITH_DOUBLE(i64)
CASTS_WITH_DOUBLE(u64)
CASTS_WITH_DOUBLE(b)
CAST_KERNEL(f64, f64)
#else
#define CASTS_FROM(SRC)                                                   \
  CAST_KERNEL(SRC, f32) CAST_KERNEL(SRC, f16) CAST_KERNEL(SRC, bf16)      \
  CAST_KERNEL(SRC, i8) CAST_KERNEL(SRC, u8) CAST_KERNEL(SRC, i16)         \
  CAST_KERNEL(SRC, u16) CAST_KERNEL(SRC, i32) CAST_KERNEL(SRC, u32)       \
  CAST_KERNEL(SRC, i64) CAST_KERNEL(SRC, u64) CAST_KERNEL(SRC, b)
CASTS_FROM(f32)
CASTS_FROM(f16)
CASTS_FROM(bf16)
CASTS_FROM(i8)
CASTS_FROM(u8)
CASTS_FROM(i16)
CASTS_FROM(u16)
CASTS_FROM(i32)
CASTS_FROM(u32)
CASTS_FROM(i64)
CASTS_FROM(u64)
CASTS_FROM(b)
#endif

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

/* TensorFlow's thresholds: log(FLT_EPSILON) + 2. Above -threshold,
 * softplus(x) == x and below threshold softplus(x) == exp(x) within float
 * precision, and log1p(exp(x)) would overflow or lose exp(x). */
static CT softplus_of(CT a)
{
  const CT threshold = -13.942385152878742f;
  CT e = exp(a);
  return a > -threshold ? a : a < threshold ? e : log1p(e);
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
UNARY(unary_sigmoid, ACT_SIGMOID_OF(CT, a))
UNARY(unary_relu, ACT_RELU_OF(CT, a))
UNARY(unary_relu6, ACT_RELU6_OF(CT, a))
UNARY(unary_elu, ACT_ELU_OF(CT, a))
UNARY(unary_selu, a < (CT)0 ? SELU_SCALE_ALPHA * expm1(a) : SELU_SCALE * a)
UNARY(unary_leaky_relu, ACT_LEAKY_RELU_OF(CT, a, alpha))
UNARY(unary_softplus, softplus_of(a))
UNARY(unary_softsign, a / (fabs(a) + (CT)1))
UNARY(unary_erf, erf(a))
UNARY(unary_erfc, erfc(a))
UNARY(unary_tan, tan(a))
UNARY(unary_asin, asin(a))
UNARY(unary_acos, acos(a))
UNARY(unary_atan, atan(a))
UNARY(unary_sinh, sinh(a))
UNARY(unary_cosh, cosh(a))
UNARY(unary_asinh, asinh(a))
UNARY(unary_acosh, acosh(a))
UNARY(unary_atanh, atanh(a))
UNARY(unary_lgamma, lgamma(a))

/* psi(x): the reflection psi(x) = psi(1 - x) - pi cot(pi x) below 0 (NaN
 * at the poles -1, -2, ... as TensorFlow), the recurrence psi(x) =
 * psi(x + 1) - 1 / x up to 6, then the asymptotic series. At +-0 it gives
 * `at_zero`: TensorFlow's answer changed (NaN up to 2.21, -inf from 2.22),
 * so the host passes the running one. */
static CT digamma_of(CT x, CT at_zero)
{
  CT result = (CT)0;
  if (x == (CT)0)
    return at_zero;
  if (x <= (CT)0) {
    if (x == floor(x))
      return (CT)NAN;
    result = -M_PI_F * cospi(x) / sinpi(x);
    x = (CT)1 - x;
  }
  for (int i = 0; i < 6 && x < (CT)6; i++) {
    result -= (CT)1 / x;
    x += (CT)1;
  }
  CT f = (CT)1 / (x * x);
  CT t = f * ((CT)(-1.0 / 12) +
              f * ((CT)(1.0 / 120) +
                   f * ((CT)(-1.0 / 252) +
                        f * ((CT)(1.0 / 240) + f * (CT)(-1.0 / 132)))));
  return x == (CT)INFINITY ? x : result + log(x) - (CT)0.5 / x + t;
}

/* M. Giles' single-precision erfinv ("Approximating the erfinv function"),
 * given w = -log((1 - x)(1 + x)) computed by the caller without
 * cancellation: p(w) * x is erfinv(x). */
static CT erfinv_factor(CT w)
{
  CT p;
  if (w < (CT)5) {
    w -= (CT)2.5;
    p = (CT)2.81022636e-08f;
    p = (CT)3.43273939e-07f + p * w;
    p = (CT)-3.5233877e-06f + p * w;
    p = (CT)-4.39150654e-06f + p * w;
    p = (CT)0.00021858087f + p * w;
    p = (CT)-0.00125372503f + p * w;
    p = (CT)-0.00417768164f + p * w;
    p = (CT)0.246640727f + p * w;
    p = (CT)1.50140941f + p * w;
  } else {
    w = sqrt(w) - (CT)3;
    p = (CT)-0.000200214257f;
    p = (CT)0.000100950558f + p * w;
    p = (CT)0.00134934322f + p * w;
    p = (CT)-0.00367342844f + p * w;
    p = (CT)0.00573950773f + p * w;
    p = (CT)-0.0076224613f + p * w;
    p = (CT)0.00943887047f + p * w;
    p = (CT)1.00167406f + p * w;
    p = (CT)2.83297682f + p * w;
  }
  return p;
}

static CT erfinv_of(CT x)
{
  if (fabs(x) == (CT)1)
    return copysign((CT)INFINITY, x);
  /* |x| > 1 and NaN: the log of a negative number or NaN. */
  return erfinv_factor(-log(((CT)1 - x) * ((CT)1 + x))) * x;
}

/* The inverse of the standard normal CDF: sqrt(2) erfinv(2p - 1), with
 * (1 - x)(1 + x) = 4p(1 - p) taken from p itself, so tiny p keep their
 * digits. Giles' fit covers w up to 16 (every float x in (-1, 1)); p
 * nearer 0 or 1 than that start from Abramowitz and Stegun's 26.2.23
 * (error below 4.5e-4) and take Newton steps on 0.5 erfc(-z / sqrt(2)) = p,
 * where the CDF's tail keeps its digits (nearer the middle a step would
 * only add erfc's error). */
static CT ndtri_of(CT p)
{
  if (p == (CT)0)
    return -(CT)INFINITY;
  if (p == (CT)1)
    return (CT)INFINITY;
  if (!(p > (CT)0 && p < (CT)1))
    return (CT)NAN;
  CT w = -log((CT)4 * p * ((CT)1 - p));
  if (w <= (CT)16)
    return (CT)M_SQRT2_F * erfinv_factor(w) * ((CT)2 * p - (CT)1);
  CT t = sqrt((CT)-2 * log(fmin(p, (CT)1 - p)));
  CT z = t - ((CT)2.515517f + t * ((CT)0.802853f + t * (CT)0.010328f)) /
                 ((CT)1 + t * ((CT)1.432788f +
                               t * ((CT)0.189269f + t * (CT)0.001308f)));
  if (p < (CT)0.5)
    z = -z;
  for (int i = 0; i < 2; i++) {
    /* The CDF's tail on the side of p, where it keeps its digits. */
    CT cdf = z < (CT)0 ? (CT)0.5 * erfc(-z * (CT)M_SQRT1_2_F)
                       : (CT)1 - (CT)0.5 * erfc(z * (CT)M_SQRT1_2_F);
    CT pdf = exp((CT)-0.5 * z * z) * (CT)0.3989422804014327f;
    if (pdf > (CT)0)
      z -= (cdf - p) / pdf;
  }
  return z;
}

UNARY(unary_digamma, digamma_of(a, (CT)alpha))
UNARY(unary_erfinv, erfinv_of(a))
UNARY(unary_ndtri, ndtri_of(a))
UNARY(unary_rint, rint(a))
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
UNARY(unary_invert, ~a)

#endif
#endif /* CAST */
