/* Unary element-wise ops, their gradients, and Cast.
 *
 * Built once per storage type: -DT=float|half|long|uchar|double (uchar =
 * bool; double only on devices with cl_khr_fp64, computed in double), and
 * once with -DCAST for Cast's kernels (every source/destination pair; those
 * with float64 in a -DCAST -DCAST_FP64 program of their own). half
 * is stored as half and computed in float, rounded to nearest even on store:
 * what TensorFlow's CPU kernels do, and it needs no cl_khr_fp16.
 *
 * One work item per element and no loop inside a work item, so that PoCL
 * vectorises across work items. Every kernel takes the same arguments
 * (x, y, n, alpha) or (p, q, z, n, alpha), so the host launches them all
 * alike; alpha is LeakyRelu's and is ignored by the others. The ops
 * themselves (name, types, math) are unary.def's rows; this file holds
 * their helpers and the kernel shapes. */
#if defined(T_IS_DOUBLE)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

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

/* Stores: half as ocl_half_bits_rte's bits; everything else as converted. */
#define SV_f16(p, i, v) OCL_STORE_HALF(p, i, v)
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
    (void)truncate;                                                       \
    OCL_FOR_FLAT(long, i, n)                                              \
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

/* PopulationCount of the 8- and 16-bit integers, here since these types
 * have no typed program and this one has every type. The bits are the
 * type's own (a negative int8 has 8), counted as a uint: no narrow
 * llvm.ctpop for an OpenCL implementation to lack. alpha: unary_compute's
 * argument list. */
#define UT_i8 uchar
#define UT_u8 uchar
#define UT_i16 ushort
#define UT_u16 ushort
#define POPCOUNT_KERNEL(SRC)                                                \
  __kernel void population_count_##SRC(OCL_TENSOR_ARG(const ST_##SRC, x),   \
                                       OCL_TENSOR_ARG(uchar, y), long n,    \
                                       float alpha)                         \
  {                                                                         \
    (void)alpha;                                                            \
    OCL_FOR_FLAT(long, i, n)                                                \
    OCL_PTR(uchar, y)[i] =                                                  \
        (uchar)popcount((uint)(UT_##SRC)OCL_PTR(const ST_##SRC, x)[i]);     \
  }
POPCOUNT_KERNEL(i8)
POPCOUNT_KERNEL(u8)
POPCOUNT_KERNEL(i16)
POPCOUNT_KERNEL(u16)
#endif

#else /* !CAST */

#if defined(T_IS_HALF)
typedef float CT; /* compute type */
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
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
    (void)alpha;                                                          \
    OCL_FOR_FLAT(long, i, n)                                              \
    {                                                                     \
      CT a = LOAD(OCL_PTR(const T, x), i);                                \
      STORE_OUT(OCL_PTR(OUT_T, y), i, (EXPR));                            \
    }                                                                     \
  }

/* Gradients: a and b are the op's two inputs in TensorFlow's order. */
#define GRAD_KERNEL(NAME, EXPR)                                           \
  __kernel void NAME(OCL_TENSOR_ARG(const T, p),                   \
                            OCL_TENSOR_ARG(const T, q),                   \
                            OCL_TENSOR_ARG(T, z), long n, float alpha)     \
  {                                                                       \
    (void)alpha;                                                          \
    OCL_FOR_FLAT(long, i, n)                                              \
    {                                                                     \
      CT a = LOAD(OCL_PTR(const T, p), i);                                \
      CT b = LOAD(OCL_PTR(const T, q), i);                                \
      STORE(OCL_PTR(T, z), i, (EXPR));                                    \
    }                                                                     \
  }

#define UNARY(NAME, EXPR) UNARY_KERNEL(NAME, T, STORE, EXPR)
#define PREDICATE(NAME, EXPR) UNARY_KERNEL(NAME, uchar, STORE_BOOL, EXPR)

#if defined(T_IS_FLOAT) || defined(T_IS_HALF)

/* The helpers of unary.def's float rows. */

#define SELU_SCALE 1.0507009873554804934193349852946f
#define SELU_SCALE_ALPHA (1.0507009873554804934193349852946f * \
                          1.6732632423543772848170429916717f)

/* TensorFlow's thresholds: log(FLT_EPSILON) + 2. Above -threshold,
 * softplus(x) == x and below threshold softplus(x) == exp(x) within float
 * precision, and log1p(exp(x)) would overflow or lose exp(x). */
static CT softplus_of(CT a)
{
  const CT threshold = -13.942385152878742f;
  CT e = exp_float(a);
  return a > -threshold ? a : a < threshold ? e : log1p_float(e);
}


/* M. Giles' single-precision erfinv ("Approximating the erfinv function"),
 * given w = -log((1 - x)(1 + x)) computed by the caller without
 * cancellation: p(w) * x is erfinv(x). Both of his polynomials, then a
 * select: with a branch, or PoCL's log, PoCL ran it element by element
 * (32 ms per 4M floats against TensorFlow's CPU's 10.7). */
static CT erfinv_factor(CT w)
{
  CT v = w - (CT)2.5;
  CT p = (CT)2.81022636e-08f;
  p = (CT)3.43273939e-07f + p * v;
  p = (CT)-3.5233877e-06f + p * v;
  p = (CT)-4.39150654e-06f + p * v;
  p = (CT)0.00021858087f + p * v;
  p = (CT)-0.00125372503f + p * v;
  p = (CT)-0.00417768164f + p * v;
  p = (CT)0.246640727f + p * v;
  p = (CT)1.50140941f + p * v;
  CT u = sqrt(w) - (CT)3;
  CT q = (CT)-0.000200214257f;
  q = (CT)0.000100950558f + q * u;
  q = (CT)0.00134934322f + q * u;
  q = (CT)-0.00367342844f + q * u;
  q = (CT)0.00573950773f + q * u;
  q = (CT)-0.0076224613f + q * u;
  q = (CT)0.00943887047f + q * u;
  q = (CT)1.00167406f + q * u;
  q = (CT)2.83297682f + q * u;
  return w < (CT)5 ? p : q;
}

static CT erfinv_of(CT x)
{
  /* |x| > 1 and NaN: the log of a negative number or NaN. */
  CT y = erfinv_factor(-log_float(((CT)1 - x) * ((CT)1 + x))) * x;
  return fabs(x) == (CT)1 ? copysign((CT)INFINITY, x) : y;
}

/* The inverse of the standard normal CDF: sqrt(2) erfinv(2p - 1), with
 * (1 - x)(1 + x) = 4p(1 - p) taken from p itself, so tiny p keep their
 * digits. Giles' fit covers w up to 16 (every float x in (-1, 1)); p
 * nearer 0 or 1 than that start from Abramowitz and Stegun's 26.2.23
 * (error below 4.5e-4) and take Newton steps on 0.5 erfc(-z / sqrt(2)) = p,
 * where the CDF's tail keeps its digits (nearer the middle a step would
 * only add erfc's error). */
static CT ndtri_newton_step(CT z, CT p)
{
  /* The CDF's tail on the side of p, where it keeps its digits. */
  CT tail = (CT)0.5 * erfc_float(fabs(z) * (CT)M_SQRT1_2_F);
  CT cdf = z < (CT)0 ? tail : (CT)1 - tail;
  CT pdf = exp_float((CT)-0.5 * z * z) * (CT)0.3989422804014327f;
  return pdf > (CT)0 ? z - (cdf - p) / pdf : z;
}
static CT ndtri_of(CT p)
{
  CT w = -log_float((CT)4 * p * ((CT)1 - p));
  CT middle = (CT)M_SQRT2_F * erfinv_factor(w) * ((CT)2 * p - (CT)1);
  CT t = sqrt((CT)-2 * log_float(fmin(p, (CT)1 - p)));
  CT z = t - ((CT)2.515517f + t * ((CT)0.802853f + t * (CT)0.010328f)) /
                 ((CT)1 + t * ((CT)1.432788f +
                               t * ((CT)0.189269f + t * (CT)0.001308f)));
  z = p < (CT)0.5 ? -z : z;
  z = ndtri_newton_step(z, p);
  z = ndtri_newton_step(z, p);
  /* Both ends computed, then selects: the branches kept PoCL from
   * vectorising the loop around them (4M floats: 29 ms with them, 20
   * so; TensorFlow's CPU 11). */
  CT y = w <= (CT)16 ? middle : z;
  y = p == (CT)0 ? -(CT)INFINITY : y;
  y = p == (CT)1 ? (CT)INFINITY : y;
  return p >= (CT)0 && p <= (CT)1 ? y : (CT)NAN;
}

/* ---- Bessel functions --------------------------------------------------
 * The single-precision Chebyshev and polynomial fits of S. L. Moshier's
 * Cephes library (i0f, i1f, k0f, k1f, j0f, j1f), the ones Eigen evaluates
 * for TensorFlow's float and half kernels, so that the edges agree with
 * TensorFlow: K0, K1 and their scaled forms are +inf for x <= 0, Y0 is
 * -inf for x <= 0, Y1 -inf for x < 0 and NaN at 0 (2/pi (0 * log 0)),
 * I0(+-inf) and I1(+-inf) are NaN (exp(inf) times a scaled value of 0), J0
 * and J1 of +-inf NaN (cos(inf)). */
#define CHEB(name, ...) __constant float name[] = {__VA_ARGS__}
CHEB(I0_A, -1.30002500998624804212E-8f, 6.04699502254191894932E-8f,
     -2.67079385394061173391E-7f, 1.11738753912010371815E-6f,
     -4.41673835845875056359E-6f, 1.64484480707288970893E-5f,
     -5.75419501008210370398E-5f, 1.88502885095841655729E-4f,
     -5.76375574538582365885E-4f, 1.63947561694133579842E-3f,
     -4.32430999505057594430E-3f, 1.05464603945949983183E-2f,
     -2.37374148058994688156E-2f, 4.93052842396707084878E-2f,
     -9.49010970480476444210E-2f, 1.71620901522208775349E-1f,
     -3.04682672343198398683E-1f, 6.76795274409476084995E-1f);
CHEB(I0_B, 3.39623202570838634515E-9f, 2.26666899049817806459E-8f,
     2.04891858946906374183E-7f, 2.89137052083475648297E-6f,
     6.88975834691682398426E-5f, 3.36911647825569408990E-3f,
     8.04490411014108831608E-1f);
CHEB(I1_A, 9.38153738649577178388E-9f, -4.44505912879632808065E-8f,
     2.00329475355213526229E-7f, -8.56872026469545474066E-7f,
     3.47025130813767847674E-6f, -1.32731636560394358279E-5f,
     4.78156510755005422638E-5f, -1.61760815825896745588E-4f,
     5.12285956168575772895E-4f, -1.51357245063125314899E-3f,
     4.15642294431288815669E-3f, -1.05640848946261981558E-2f,
     2.47264490306265168283E-2f, -5.29459812080949914269E-2f,
     1.02643658689847095384E-1f, -1.76416518357834055153E-1f,
     2.52587186443633654823E-1f);
CHEB(I1_B, -3.83538038596423702205E-9f, -2.63146884688951950684E-8f,
     -2.51223623787020892529E-7f, -3.88256480887769039346E-6f,
     -1.10588938762623716291E-4f, -9.76109749136146840777E-3f,
     7.78576235018280120474E-1f);
CHEB(K0_A, 1.90451637722020886025E-9f, 2.53479107902614945675E-7f,
     2.28621210311945178607E-5f, 1.26461541144692592338E-3f,
     3.59799365153615016266E-2f, 3.44289899924628486886E-1f,
     -5.35327393233902768720E-1f);
CHEB(K0_B, -1.69753450938905987466E-9f, 8.57403401741422608519E-9f,
     -4.66048989768794782956E-8f, 2.76681363944501510342E-7f,
     -1.83175552271911948767E-6f, 1.39498137188764993662E-5f,
     -1.28495495816278026384E-4f, 1.56988388573005337491E-3f,
     -3.14481013119645005427E-2f, 2.44030308206595545468E0f);
CHEB(K1_A, -2.21338763073472585583E-8f, -2.43340614156596823496E-6f,
     -1.73028895751305206302E-4f, -6.97572385963986435018E-3f,
     -1.22611180822657148235E-1f, -3.53155960776544875667E-1f,
     1.52530022733894777053E0f);
CHEB(K1_B, 2.01504975519703286596E-9f, -1.03457624656780970260E-8f,
     5.74108412545004946722E-8f, -3.50196060308781257119E-7f,
     2.40648494783721712015E-6f, -1.93619797416608296024E-5f,
     1.95215518471351631108E-4f, -2.85781685962277938680E-3f,
     1.03923736576817238437E-1f, 2.72062619048444266945E0f);
/* J0, Y0: Cephes' polynomials of the small range, and of modulus and phase
 * (x + q R(q^2) - pi/4, q = 1/x) beyond 2. */
CHEB(J0_P, -6.068350350393235E-008f, 6.388945720783375E-006f,
     -3.969646342510940E-004f, 1.332913422519003E-002f,
     -1.729150680240724E-001f);
CHEB(Y0_P, 9.454583683980369E-008f, -9.413212653797057E-006f,
     5.344486707214273E-004f, -1.584289289821316E-002f,
     1.707584643733568E-001f);
CHEB(J0_MO, -6.838999669318810E-002f, 1.864949361379502E-001f,
     -2.145007480346739E-001f, 1.197549369473540E-001f,
     -3.560281861530129E-003f, -4.969382655296620E-002f,
     -3.355424622293709E-006f, 7.978845717621440E-001f);
CHEB(J0_PH, 3.242077816988247E+001f, -3.630592630518434E+001f,
     1.756221482109099E+001f, -4.974978466280903E+000f,
     1.001973420681837E+000f, -1.939906941791308E-001f,
     6.490598792654666E-002f, -1.249992184872738E-001f);
CHEB(J1_P, -4.878788132172128E-009f, 6.009061827883699E-007f,
     -4.541343896997497E-005f, 1.937383947804541E-003f,
     -3.405537384615824E-002f);
CHEB(Y1_P, 8.061978323326852E-009f, -9.496460629917016E-007f,
     6.719543806674249E-005f, -2.641785726447862E-003f,
     4.202369946500099E-002f);
CHEB(J1_MO, 6.913942741265801E-002f, -2.284801500053359E-001f,
     3.138238455499697E-001f, -2.102302420403875E-001f,
     5.435364690523026E-003f, 1.493389585089498E-001f,
     4.976029650847191E-006f, 7.978845453073848E-001f);
CHEB(J1_PH, -4.497014141919556E+001f, 5.073465654089319E+001f,
     -2.485774108720340E+001f, 7.222973196770240E+000f,
     -1.544842782180211E+000f, 3.503787691653334E-001f,
     -1.637986776941202E-001f, 3.749989509080821E-001f);

/* Clenshaw's recurrence for sum' c_k T_k(x / 2), Cephes' chbevl, one
 * function per count n (chebyshev(x, c, n) names it): with n a parameter
 * the loop stayed a loop, and the loop around the kernel element by
 * element (I0e of 4M floats 17 ms, TensorFlow's CPU 4.2). */
#define CHEBYSHEV_OF_COUNT(N)                                     \
  static float chebyshev##N(float x, __constant const float *c) \
  {                                                             \
    float b0 = c[0], b1 = 0.0f, b2 = 0.0f;                      \
    _Pragma("unroll") for (int i = 1; i < N; i++)               \
    {                                                           \
      b2 = b1;                                                  \
      b1 = b0;                                                  \
      b0 = x * b1 - b2 + c[i];                                  \
    }                                                           \
    return 0.5f * (b0 - b2);                                    \
  }
CHEBYSHEV_OF_COUNT(7)
CHEBYSHEV_OF_COUNT(10)
CHEBYSHEV_OF_COUNT(17)
CHEBYSHEV_OF_COUNT(18)
#define chebyshev(x, c, n) chebyshev##n(x, c)

/* Horner's scheme, highest power first (Cephes' polevl). */
static float polynomial(float x, __constant const float *c, int n)
{
  float r = c[0];
  for (int i = 1; i < n; i++)
    r = r * x + c[i];
  return r;
}

/* Both ranges' series, then a select (a branch between them kept the
 * loop around the kernel element by element too). */
static float bessel_i0e_of(float x)
{
  float y = fabs(x);
  float near = chebyshev(0.5f * y - 2.0f, I0_A, 18);
  float far = chebyshev(32.0f / y - 2.0f, I0_B, 7) * rsqrt(y);
  return y <= 8.0f ? near : far;
}

/* Odd: the sign of x, +0 at -0. */
static float bessel_i1e_of(float x)
{
  float y = fabs(x);
  float near = y * chebyshev(0.5f * y - 2.0f, I1_A, 17);
  float far = chebyshev(32.0f / y - 2.0f, I1_B, 7) * rsqrt(y);
  float r = y <= 8.0f ? near : far;
  return x < 0.0f ? -r : r;
}

static float bessel_i0_of(float x)
{
  return exp_float(fabs(x)) * bessel_i0e_of(x);
}
static float bessel_i1_of(float x)
{
  return exp_float(fabs(x)) * bessel_i1e_of(x);
}

/* exp(x) K0(x) when scaled, else K0(x). */
static float bessel_k0_of(float x, bool scaled)
{
  if (x <= 0.0f)
    return INFINITY;
  if (x <= 2.0f) {
    float r = chebyshev(x * x - 2.0f, K0_A, 7) - log(0.5f * x) * bessel_i0_of(x);
    return scaled ? r * exp(x) : r;
  }
  float r = chebyshev(8.0f / x - 2.0f, K0_B, 10) * rsqrt(x);
  return scaled ? r : exp(-x) * r;
}

static float bessel_k1_of(float x, bool scaled)
{
  if (x <= 0.0f)
    return INFINITY;
  if (x <= 2.0f) {
    float r = chebyshev(x * x - 2.0f, K1_A, 7) / x +
              log(0.5f * x) * bessel_i1_of(x);
    return scaled ? r * exp(x) : r;
  }
  float r = chebyshev(8.0f / x - 2.0f, K1_B, 10) * rsqrt(x);
  return scaled ? r : exp(-x) * r;
}

/* Beyond 2: modulus(y) * cos or sin of phase(y), y = |x|, with phase
 * offset -pi/4 (order 0) or -3pi/4 (order 1). */
static float bessel_modulus(float y, __constant const float *mo)
{
  return rsqrt(y) * polynomial(1.0f / y, mo, 8);
}
static float bessel_phase(float y, __constant const float *ph, float offset)
{
  float q = 1.0f / y;
  return q * polynomial(q * q, ph, 8) + offset + y;
}

static float bessel_j0_of(float x)
{
  float y = fabs(x), z = y * y;
  if (y <= 2.0f)
    return y < 1e-3f ? 1.0f - 0.25f * z
                     : (z - 5.78318596294678452118f) * polynomial(z, J0_P, 5);
  return bessel_modulus(y, J0_MO) *
         cos(bessel_phase(y, J0_PH, -0.78539816339744830962f));
}

static float bessel_j1_of(float x)
{
  float y = fabs(x), z = y * y;
  if (y <= 2.0f)
    return (z - 1.46819706421238932572E1f) * x * polynomial(z, J1_P, 5);
  float r = bessel_modulus(y, J1_MO) *
            cos(bessel_phase(y, J1_PH, -2.35619449019234492885f));
  return x < 0.0f ? -r : r;
}

static float bessel_y0_of(float x)
{
  if (x <= 2.0f) {
    if (x <= 0.0f)
      return -INFINITY;
    float z = x * x;
    return (z - 0.43221455686510834878f) * polynomial(z, Y0_P, 5) +
           0.636619772367581343075535f * log(x) * bessel_j0_of(x);
  }
  return bessel_modulus(x, J0_MO) *
         sin(bessel_phase(x, J0_PH, -0.78539816339744830962f));
}

static float bessel_y1_of(float x)
{
  if (x <= 2.0f) {
    if (x < 0.0f)
      return -INFINITY;
    float z = x * x;
    return (z - 4.66539330185668857532f) * polynomial(z, Y1_P, 5) * x +
           0.636619772367581343075535f *
               (bessel_j1_of(x) * log(x) - 1.0f / x);
  }
  return bessel_modulus(x, J1_MO) *
         sin(bessel_phase(x, J1_PH, -2.35619449019234492885f));
}

#endif

#if defined(T_IS_DOUBLE)
/* The helpers of unary.def's rows that have double, in double: the
 * constants as double literals and TensorFlow's softplus threshold for
 * double, log(DBL_EPSILON) + 2 (the float one would return x or exp(x)
 * where log1p(exp(x)) still differs in double). */
#define SELU_SCALE 1.0507009873554804934193349852946
#define SELU_SCALE_ALPHA (1.0507009873554804934193349852946 * \
                          1.6732632423543772848170429916717)

static CT softplus_of(CT a)
{
  const CT threshold = -34.04365338911715;
  CT e = exp(a);
  return a > -threshold ? a : a < threshold ? e : log1p(e);
}

/* Abramowitz and Stegun's 26.2.23: the lower tail's quantile for q in
 * (0, 1/2] within 4.5e-4, a start for the Newton steps below. */
static CT normal_quantile_start(CT q)
{
  CT t = sqrt(-2 * log(q));
  return -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                   (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
}

/* Newton steps from normal_quantile_start (quadratic: 4.5e-4 is below
 * 1e-20 after three), the residual taken where it keeps its digits: from
 * erfc in the tail, from erf (and q - 1/2, exact there) near the middle.
 * The upper half by symmetry, 1 - p being exact there. */
static CT ndtri_of(CT p)
{
  if (p == 0)
    return -INFINITY;
  if (p == 1)
    return INFINITY;
  if (!(p > 0 && p < 1))
    return NAN;
  CT q = p > 0.5 ? 1 - p : p;
  CT z = normal_quantile_start(q);
  for (int i = 0; i < 4; i++) {
    CT residual = q < 0.25 ? 0.5 * erfc(-z * M_SQRT1_2) - q
                           : 0.5 * erf(z * M_SQRT1_2) - (q - 0.5);
    z -= residual / (exp(-0.5 * z * z) * 0.3989422804014327);
  }
  return p > 0.5 ? -z : z;
}

/* Newton steps on erf(y) = |x| from the normal quantile's start, the
 * residual from erf below 1/2 and from erfc (and 1 - |x|, exact there)
 * above, so that neither small x nor x near 1 loses its digits. */
static CT erfinv_of(CT x)
{
  CT ax = fabs(x);
  if (ax == 1)
    return copysign((CT)INFINITY, x);
  if (!(ax < 1))
    return NAN;
  CT y = -normal_quantile_start((1 - ax) / 2) * M_SQRT1_2;
  for (int i = 0; i < 4; i++) {
    CT residual = ax < 0.5 ? erf(y) - ax : (1 - ax) - erfc(y);
    y -= residual / (exp(-y * y) * 1.1283791670955126);
  }
  return copysign(y, x);
}
#endif

/* ---- The kernels: one per row of unary.def with this storage type ----- */

/* The kernel's shape by the row's KIND. */
#define KIND_PLAIN(UNARY_NAME, GRAD_NAME, E) UNARY(UNARY_NAME, E)
#define KIND_NEG KIND_PLAIN
#define KIND_ABS KIND_PLAIN
#define KIND_SIGN KIND_PLAIN
#define KIND_SQUARE KIND_PLAIN
#define KIND_ROUND KIND_PLAIN
#define KIND_INVERT KIND_PLAIN
#define KIND_PREDICATE(UNARY_NAME, GRAD_NAME, E) PREDICATE(UNARY_NAME, E)
#define KIND_POPCOUNT(UNARY_NAME, GRAD_NAME, E) \
  UNARY_KERNEL(UNARY_NAME, uchar, STORE, E)
#define KIND_GRAD_SHAPE(UNARY_NAME, GRAD_NAME, E) GRAD_KERNEL(GRAD_NAME, E)
#define KIND_GRAD_ELEMENTS KIND_GRAD_SHAPE

/* Whether this program has a row's TYPES, and which of its expressions it
 * computes: MATH on float, half, double and bool, INT_MATH on int64 (int32
 * runs on the host). */
#if defined(T_IS_BOOL)
#define ON_BOOL(KIND, U, G, MATH, INT_MATH) KIND(U, G, MATH)
#elif defined(T_IS_FLOAT) || defined(T_IS_HALF)
/* Ops without half (FLOAT_DOUBLE) are built for half too, unregistered. */
#define ON_FLOATS(KIND, U, G, MATH, INT_MATH) KIND(U, G, MATH)
#define ON_SINGLE_FLOATS ON_FLOATS
#define ON_FLOAT_DOUBLE ON_FLOATS
#define ON_FLOATS_INT64 ON_FLOATS
#define ON_FLOATS_INTEGERS ON_FLOATS
#elif defined(T_IS_DOUBLE)
/* Not SINGLE_FLOATS' rows: their helpers are single-precision fits. */
#define ON_FLOATS(KIND, U, G, MATH, INT_MATH) KIND(U, G, MATH)
#define ON_FLOAT_DOUBLE ON_FLOATS
#define ON_FLOATS_INT64 ON_FLOATS
#define ON_FLOATS_INTEGERS ON_FLOATS
#else /* long */
#define ON_INTEGERS(KIND, U, G, MATH, INT_MATH) KIND(U, G, INT_MATH)
#define ON_FLOATS_INT64 ON_INTEGERS
#define ON_FLOATS_INTEGERS ON_INTEGERS
#endif
#define NOT_HERE(KIND, U, G, MATH, INT_MATH)
#ifndef ON_BOOL
#define ON_BOOL NOT_HERE
#endif
#ifndef ON_FLOATS
#define ON_FLOATS NOT_HERE
#define ON_FLOAT_DOUBLE NOT_HERE
#endif
#ifndef ON_SINGLE_FLOATS
#define ON_SINGLE_FLOATS NOT_HERE
#endif
#ifndef ON_INTEGERS
#define ON_INTEGERS NOT_HERE
#endif
#ifndef ON_FLOATS_INT64
#define ON_FLOATS_INT64 NOT_HERE
#define ON_FLOATS_INTEGERS NOT_HERE
#endif

/* The names are pasted here, before any macro could expand them (PoCL
 * defines some built-ins as macros), hence the fused rows' own macro. */
#define UNARY_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,          \
                 INT_MATH)                                                   \
  ON_##TYPES(KIND_##KIND, unary_##KERNEL, grad_##KERNEL, MATH, INT_MATH)
#define UNARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,    \
                       INT_MATH, ENUM, OPCODE, FUSED_TYPES, COST)            \
  ON_##TYPES(KIND_##KIND, unary_##KERNEL, grad_##KERNEL, MATH, INT_MATH)
#include "unary.def"

#endif /* CAST */
