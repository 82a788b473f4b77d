/* References of the unary kernel family: element-wise unary ops, their
 * gradients and Cast.
 *
 * Tolerances (float32) follow the OpenCL built-ins' accuracy (full profile,
 * in ulp: exp, expm1, log 3; log1p, rsqrt 2; sin, cos 4; tanh 5; erf 16;
 * x / y 2.5), not what one driver achieves (PoCL measured: 1 ulp for the
 * built-ins, 2 for Sigmoid, 6 for Softplus just past its threshold, where
 * TensorFlow's formula returns exp(x) for log1p(exp(x))):
 * - exact: Neg, Abs, Sign, Floor, Ceil, Round, Relu, Relu6, ReluGrad,
 *   Relu6Grad, the predicates, LogicalNot, Cast, every integer op;
 * - rtol 1e-6 (a few roundings of + - * /): Square, LeakyRelu and the
 *   gradients built from arithmetic only. Their references round each
 *   intermediate to float as the device (and TensorFlow) compute them, so
 *   an intermediate that overflows (y*y of a large y) gives the same Inf or
 *   NaN; TanhGrad computes 1 - y*y with fma, so it stays accurate as y
 *   nears 1;
 * - rtol 4e-6 (~33 ulp: the built-ins' bounds, erf's 16 ulp = 1.9e-6
 *   included, composed with a rounding or two): everything else.
 * atol 1e-30 covers flushed subnormals (Sigmoid of large negatives). half
 * is widened by the harness (REF_HALF_FACTOR); PoCL measured 0 half ulp.
 *
 * Cast of NaN or an out-of-range float to an integer gives the most
 * negative integer (what TensorFlow's CPU kernel gives on x86-64, see
 * unary.cl). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

static bool is_float(TF_DataType t)
{
  return t == TF_FLOAT || t == TF_HALF || t == TF_DOUBLE;
}

/* Any floating type Cast takes. */
static bool is_floating(TF_DataType t)
{
  return is_float(t) || t == TF_BFLOAT16 || t == TF_DOUBLE;
}

/* The constants as the device holds them: float ones for float and half,
 * double ones for double. */
static double selu_scale(TF_DataType dtype)
{
  return dtype == TF_DOUBLE ? 1.0507009873554804934193349852946
                            : (double)1.0507009873554804934193349852946f;
}
static double selu_scale_alpha(TF_DataType dtype)
{
  return dtype == TF_DOUBLE ? 1.0507009873554804934193349852946 *
                                  1.6732632423543772848170429916717
                            : (double)(1.0507009873554804934193349852946f *
                                       1.6732632423543772848170429916717f);
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* psi in float64: reflection below 0 (NaN at the poles, 0 included, as
 * TensorFlow up to 2.21 and the host shim answer; 2.22 gives -inf at 0,
 * which the plugin follows there), recurrence up to 20, then the
 * asymptotic series to x^-14. */
static double digamma(double x)
{
  double result = 0;
  if (isnan(x) || x == -INFINITY)
    return NAN;
  if (x <= 0) {
    if (x == floor(x))
      return NAN;
    /* cot has period pi: x less its nearest integer, exactly (x modulo 2
     * was exact only for float's digits), keeps cot's digits near the
     * poles. */
    double r = x - nearbyint(x);
    result = -M_PI * cos(M_PI * r) / sin(M_PI * r);
    x = 1 - x;
  }
  if (x == INFINITY)
    return x;
  while (x < 20) {
    result -= 1 / x;
    x += 1;
  }
  static const double b[] = {1.0 / 12,  -1.0 / 120, 1.0 / 252, -1.0 / 240,
                             1.0 / 132, -691.0 / 32760, 1.0 / 12};
  double f = 1 / (x * x), t = 0, p = f;
  for (int k = 0; k < 7; k++, p *= f)
    t += b[k] * p;
  return result + log(x) - 0.5 / x - t;
}

/* The standard normal quantile in float64: Newton's method on
 * log Phi(z) = log p from the lower tail (Phi(z) = erfc(-z / sqrt 2) / 2
 * keeps its digits there), the upper half by symmetry. */
static double ndtri(double p)
{
  if (isnan(p) || p < 0 || p > 1)
    return NAN;
  if (p == 0)
    return -INFINITY;
  if (p == 1)
    return INFINITY;
  if (p == 0.5)
    return 0;
  if (p > 0.5)
    return -ndtri(1 - p);
  double z = -sqrt(-2 * log(p)); /* a start below the root */
  for (int i = 0; i < 100; i++) {
    double cdf = 0.5 * erfc(-z / M_SQRT2);
    double pdf = exp(-0.5 * z * z) / sqrt(2 * M_PI);
    double step = (log(cdf) - log(p)) * cdf / pdf;
    z -= step;
    if (fabs(step) <= 1e-15 * (1 + fabs(z)))
      break;
  }
  return z;
}

/* erf(y) = x <=> y = ndtri((1 + x) / 2) / sqrt 2, from whichever side
 * keeps (1 + x) / 2 exact; below |x| = 1/2, 1 -+ x rounds away a
 * double x's low digits (a float's still fit), which Newton steps on erf
 * itself restore. */
static double erfinv(double x)
{
  if (x == 0)
    return x;
  double y =
      x > 0 ? -ndtri((1 - x) / 2) / M_SQRT2 : ndtri((1 + x) / 2) / M_SQRT2;
  for (int i = 0; i < 3 && fabs(x) < 0.5; i++)
    y -= (erf(y) - x) / (M_2_SQRTPI * exp(-y * y));
  return y;
}

/* ---- Bessel functions, in float64 ----------------------------------------
 * Apart from the device's Cephes fits: I_n and K_n by the trapezoidal rule
 * on their integral representations (exponentially accurate here: the
 * integrands are analytic, periodic for I_n and decaying double
 * exponentially for K_n), with Hankel's asymptotic series for large x;
 * J and Y from the C library (POSIX j0, j1, y0, y1). The edges are
 * TensorFlow's: K's +inf for x <= 0, Y0's -inf for x <= 0, Y1's -inf below
 * 0 and NaN at 0, NaN for I0, I1 at +-inf and for J0, J1 at +-inf. */

/* Hankel's series for large x: sum_k (+-1)^k a_k(n) / x^k, a_k(n) =
 * prod_{j<=k} (4n^2 - (2j - 1)^2) / (k! 8^k), to its fifth term. */
static double hankel_series(int n, double x, double sign)
{
  double mu = 4.0 * n * n, term = 1, sum = 1;
  for (int k = 1; k < 6; k++) {
    term *= sign * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
    sum += term;
  }
  return sum;
}

/* exp(-|x|) I_n(|x|) = (1 / pi) int_0^pi exp(|x| (cos t - 1)) cos(n t) dt. */
static double bessel_i_scaled(int n, double x)
{
  double ax = fabs(x);
  if (ax > 1e4)
    return hankel_series(n, ax, -1) / sqrt(2 * M_PI * ax);
  if (ax < 20) {
    /* The power series sum (x/2)^(2k+n) / (k! (k+n)!), all terms
     * positive: it keeps the digits the integral loses to cancellation
     * near 0 (I1(1e-30) = 5e-31). */
    double term = n == 0 ? 1 : ax / 2, sum = term;
    for (int k = 1; term > 1e-18 * sum; k++) {
      term *= (ax / 2) * (ax / 2) / (k * (double)(k + n));
      sum += term;
    }
    return sum * exp(-ax);
  }
  int steps = 64 + (int)(16 * sqrt(ax));
  double h = M_PI / steps, sum = 0;
  for (int i = 0; i <= steps; i++) {
    double t = i * h, f = exp(ax * (cos(t) - 1)) * cos(n * t);
    sum += (i == 0 || i == steps) ? 0.5 * f : f;
  }
  return sum * h / M_PI;
}

/* exp(x) K_n(x) = int_0^inf exp(-x (cosh t - 1)) cosh(n t) dt, x > 0. */
static double bessel_k_scaled(int n, double x)
{
  if (x > 1e4)
    return hankel_series(n, x, 1) * sqrt(M_PI / (2 * x));
  double h = 0.1 / sqrt(1 + x), sum = 0.5;
  for (int i = 1;; i++) {
    double t = i * h, f = exp(-x * (cosh(t) - 1) + n * t) * 0.5 *
                          (1 + exp(-2.0 * n * t));
    sum += f;
    if (f < 1e-18 * sum && x * (cosh(t) - 1) > n * t)
      break;
  }
  return sum * h;
}

/* kind 'I', 'K', 'J' or 'Y'; scaled: the e variant (I0e, K1e). */
static double bessel_value(char kind, int order, bool scaled, double x)
{
  if (isnan(x))
    return x;
  if (kind == 'I') {
    double s = isinf(x) ? 0 : bessel_i_scaled(order, x);
    if (order == 1 && x < 0)
      s = -s;
    if (order == 1 && x == 0)
      s = 0; /* +0 at -0 */
    if (scaled)
      return s;
    return isinf(x) ? NAN : exp(fabs(x)) * s;
  }
  if (kind == 'K') {
    if (x <= 0)
      return INFINITY;
    if (isinf(x))
      return 0;
    double s = bessel_k_scaled(order, x);
    return scaled ? s : exp(-x) * s;
  }
  if (kind == 'J') {
    if (isinf(x))
      return NAN;
    return order == 0 ? j0(x) : j1(x);
  }
  /* Y */
  if (x < 0 || (order == 0 && x == 0))
    return -INFINITY;
  if (x == 0 || isinf(x))
    return NAN;
  return order == 0 ? y0(x) : y1(x);
}

static double softplus(double x)
{
  /* log1p(exp(x)) without overflow. */
  return x > 30 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* ---- One float64 reference per unary.def row: ref_<KERNEL> --------------
 * x in a; alpha is the op's attribute. Only the rows whose TYPES take
 * integers look at dtype: they wrap around in two's complement
 * (ref_round_to wraps the result into int32 where needed). */

static bool integer_path(TF_DataType dtype)
{
  return !is_float(dtype) && dtype != TF_BOOL;
}

#define REF_VALUE(KERNEL, VALUE)                                              \
  static double ref_##KERNEL(TF_DataType dtype, double a, double alpha)       \
  {                                                                           \
    (void)dtype;                                                              \
    (void)alpha;                                                              \
    return VALUE;                                                             \
  }

static double ref_neg(TF_DataType dtype, double a, double alpha)
{
  (void)alpha;
  if (integer_path(dtype))
    return (double)(int64_t)(0 - (uint64_t)(int64_t)a);
  return -a;
}

static double ref_abs(TF_DataType dtype, double a, double alpha)
{
  (void)alpha;
  if (integer_path(dtype)) {
    int64_t i = (int64_t)a;
    return (double)(i < 0 ? (int64_t)(0 - (uint64_t)i) : i);
  }
  return fabs(a);
}

static double ref_sign(TF_DataType dtype, double a, double alpha)
{
  (void)alpha;
  if (integer_path(dtype)) {
    int64_t i = (int64_t)a;
    return (double)((i > 0) - (i < 0));
  }
  return isnan(a) ? a : (double)((a > 0) - (a < 0));
}

static double ref_square(TF_DataType dtype, double a, double alpha)
{
  (void)alpha;
  if (integer_path(dtype)) {
    uint64_t u = (uint64_t)(int64_t)a;
    return dtype == TF_INT32 ? (double)(int32_t)(uint32_t)(u * u)
                             : (double)(int64_t)(u * u);
  }
  return a * a;
}

static double ref_reciprocal(TF_DataType dtype, double a, double alpha)
{
  (void)alpha;
  if (integer_path(dtype)) {
    int64_t i = (int64_t)a;
    return i == 0 ? 0 : (double)(1 / i); /* 1 / 0 is defined as 0 */
  }
  return 1.0 / a;
}

/* Integers only. */
static double ref_invert(TF_DataType dtype, double a, double alpha)
{
  (void)dtype;
  (void)alpha;
  return (double)~(int64_t)a;
}

/* Integers only, of the type's own width: a negative int32 has 32 bits,
 * not 64, a negative int8 8. */
static double ref_population_count(TF_DataType dtype, double a, double alpha)
{
  (void)alpha;
  uint64_t bits = (uint64_t)(int64_t)a;
  switch (dtype) {
  case TF_INT8: case TF_UINT8: bits = (uint8_t)bits; break;
  case TF_INT16: case TF_UINT16: bits = (uint16_t)bits; break;
  case TF_INT32: case TF_UINT32: bits = (uint32_t)bits; break;
  default: break;
  }
  int count = 0;
  for (; bits != 0; bits >>= 1)
    count += (int)(bits & 1);
  return count;
}

static double ref_round(TF_DataType dtype, double a, double alpha)
{
  (void)alpha;
  if (integer_path(dtype))
    return (double)(int64_t)a; /* whole already */
  return rint(a); /* half to even in the default rounding mode */
}

REF_VALUE(exp, exp(a))
REF_VALUE(expm1, expm1(a))
REF_VALUE(log, log(a))
REF_VALUE(log1p, log1p(a))
REF_VALUE(sqrt, sqrt(a))
REF_VALUE(rsqrt, 1.0 / sqrt(a))
REF_VALUE(digamma, digamma(a))
REF_VALUE(erfinv, erfinv(a))
REF_VALUE(ndtri, ndtri(a))
REF_VALUE(bessel_i0e, bessel_value('I', 0, true, a))
REF_VALUE(bessel_i1e, bessel_value('I', 1, true, a))
REF_VALUE(bessel_i0, bessel_value('I', 0, false, a))
REF_VALUE(bessel_i1, bessel_value('I', 1, false, a))
REF_VALUE(bessel_j0, bessel_value('J', 0, false, a))
REF_VALUE(bessel_j1, bessel_value('J', 1, false, a))
REF_VALUE(bessel_y0, bessel_value('Y', 0, false, a))
REF_VALUE(bessel_y1, bessel_value('Y', 1, false, a))
REF_VALUE(bessel_k0, bessel_value('K', 0, false, a))
REF_VALUE(bessel_k0e, bessel_value('K', 0, true, a))
REF_VALUE(bessel_k1, bessel_value('K', 1, false, a))
REF_VALUE(bessel_k1e, bessel_value('K', 1, true, a))
REF_VALUE(tanh, tanh(a))
REF_VALUE(sigmoid, sigmoid(a))
REF_VALUE(relu, a < 0 ? 0 : a)
REF_VALUE(relu6, a < 0 ? 0 : a > 6 ? 6 : a)
REF_VALUE(elu, a < 0 ? expm1(a) : a)
REF_VALUE(selu,
          a < 0 ? selu_scale_alpha(dtype) * expm1(a) : selu_scale(dtype) * a)
REF_VALUE(leaky_relu, a > 0 ? a : a * alpha)
REF_VALUE(softplus, softplus(a))
REF_VALUE(softsign, a / (fabs(a) + 1))
REF_VALUE(erf, erf(a))
REF_VALUE(erfc, erfc(a))
REF_VALUE(tan, tan(a))
REF_VALUE(asin, asin(a))
REF_VALUE(acos, acos(a))
REF_VALUE(atan, atan(a))
REF_VALUE(sinh, sinh(a))
REF_VALUE(cosh, cosh(a))
REF_VALUE(asinh, asinh(a))
REF_VALUE(acosh, acosh(a))
REF_VALUE(atanh, atanh(a))
REF_VALUE(lgamma, lgamma(a))
REF_VALUE(rint, nearbyint(a))
REF_VALUE(sin, sin(a))
REF_VALUE(cos, cos(a))
REF_VALUE(floor, floor(a))
REF_VALUE(ceil, ceil(a))
REF_VALUE(logical_not, a == 0)
REF_VALUE(is_nan, isnan(a))
REF_VALUE(is_finite, isfinite(a))
REF_VALUE(is_inf, isinf(a))

/* By unary.def's rows, which the gradients' references below complete. */
static double unary_value(const char *op, TF_DataType dtype, double a,
                          double alpha);
static TF_DataType unary_out_type(const char *op, TF_DataType dtype);

static int unary_compute(const struct ref_case *c, struct ref_tensor *out,
                         char *error, int error_len)
{
  (void)error;
  (void)error_len;
  const struct ref_tensor *x = &c->inputs[0];
  /* alpha as the float the device receives. */
  double alpha = (float)ref_case_attr_float_or(c, "alpha", 0.2);
  TF_DataType out_type = unary_out_type(c->op, x->dtype);
  ref_tensor_alloc(&out[0], out_type, x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++)
    out[0].v[i] =
        ref_round_to(out_type, unary_value(c->op, x->dtype, x->v[i], alpha));
  return 1;
}

/* Extra cases beyond the standard unary set. */
static void unary_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  ref_cases_unary(op, dtype, out);
  if (is_float(dtype)) {
    /* A wide, evenly spaced range through every regime of the function
     * (Softplus's thresholds, Sigmoid's tails, exp's growth). */
    double wide[401];
    int64_t n = 401;
    for (int i = 0; i < 401; i++)
      wide[i] = -20.0 + 0.1 * i;
    struct ref_case *c = ref_case_add(out, op->op, "%s wide range", op->op);
    ref_case_input_values(c, dtype, &n, 1, wide);
    static const double extremes[] = {-100, -88, -50, -30, -16, -14, 14,
                                      16,   30,  50,  88,  100, 1e-7, -1e-7,
                                      1e-3, -1e-3};
    int64_t m = sizeof(extremes) / sizeof(extremes[0]);
    c = ref_case_add(out, op->op, "%s extremes", op->op);
    ref_case_input_values(c, dtype, &m, 1, extremes);
  }
  if (!strcmp(op->op, "Round") || !strcmp(op->op, "Floor") ||
      !strcmp(op->op, "Ceil")) {
    static const double halves[] = {-3.5, -2.5, -1.5, -0.5, 0.5, 1.5,
                                    2.5,  3.5,  -0.49, 0.51, 1e7 + 0.5};
    int64_t n = sizeof(halves) / sizeof(halves[0]);
    if (is_float(dtype)) {
      struct ref_case *c = ref_case_add(out, op->op, "%s halves", op->op);
      ref_case_input_values(c, dtype, &n, 1, halves);
    }
  }
  if (dtype == TF_INT32) {
    /* Wrap-around at the edges of int32. */
    static const double edges[] = {-2147483648.0, 2147483647.0, -1, 0, 1,
                                   65536, -46341};
    int64_t n = sizeof(edges) / sizeof(edges[0]);
    struct ref_case *c = ref_case_add(out, op->op, "%s int32 edges", op->op);
    ref_case_input_values(c, dtype, &n, 1, edges);
  }
  if (!strcmp(op->op, "LeakyRelu") && is_float(dtype)) {
    static const float alphas[] = {0.01f, 1.5f, -0.5f, 0.0f};
    for (size_t k = 0; k < sizeof(alphas) / sizeof(alphas[0]); k++) {
      struct ref_case *c =
          ref_case_add(out, op->op, "LeakyRelu alpha=%g", (double)alphas[k]);
      ref_case_input(c, dtype, (int64_t[]){3, 7}, 2, REF_ANY);
      ref_case_attr_float(c, "alpha", alphas[k]);
    }
  }
  if (!strcmp(op->op, "Ndtri") || !strcmp(op->op, "Erfinv")) {
    /* The middle, the tails down to 1e-30 and the edges. */
    static const double p[] = {1e-30, 1e-20, 1e-12, 1e-7,  3e-5, 0.01,
                               0.2,   0.5,   0.7,   0.999, 1 - 1e-6,
                               0,     1,     -0.25, 1.25,  0.3173};
    double v[sizeof(p) / sizeof(p[0])];
    int64_t n = sizeof(p) / sizeof(p[0]);
    bool erf_side = !strcmp(op->op, "Erfinv");
    for (int64_t i = 0; i < n; i++)
      v[i] = erf_side ? 2 * p[i] - 1 : p[i];
    struct ref_case *c = ref_case_add(out, op->op, "%s quantiles", op->op);
    ref_case_input_values(c, dtype, &n, 1, v);
    c = ref_case_add(out, op->op, "%s (0, 1)", op->op);
    double u[513];
    n = 513;
    for (int i = 0; i < 513; i++)
      u[i] = erf_side ? (i - 256) / 257.0 : (i + 1) / 514.0;
    ref_case_input_values(c, dtype, &n, 1, u);
  }
  if (!strncmp(op->op, "Bessel", 6) && is_float(dtype)) {
    /* Both sides of every fit's switch (2, 8), the edges, and large x
     * where the phase of J and Y needs its digits. */
    static const double x[] = {NAN,  -INFINITY, -30, -8.5, -2,  -1e-3, -0.0,
                               0.0,  1e-30,     1e-3, 0.5, 1.99, 2,    2.01,
                               7.99, 8,         8.01, 25,  60,   INFINITY};
    int64_t n = sizeof(x) / sizeof(x[0]);
    struct ref_case *c = ref_case_add(out, op->op, "%s edges", op->op);
    ref_case_input_values(c, dtype, &n, 1, x);
  }
  if (!strcmp(op->op, "PopulationCount")) {
    static const double x[] = {0, 1, -1, 255, 256, -2147483648.0, 2147483647.0,
                               12345, -7};
    int64_t n = sizeof(x) / sizeof(x[0]);
    struct ref_case *c = ref_case_add(out, op->op, "PopulationCount bits");
    ref_case_input_values(c, dtype, &n, 1, x);
  }
  if (!strcmp(op->op, "Digamma")) {
    static const double x[] = {0,    -0.0, -1,    -2,   -2.5, -0.5, 1e-6,
                               1e-3, 1,    1.4616, 2,   30,   1e5,  -99.5};
    int64_t n = sizeof(x) / sizeof(x[0]);
    struct ref_case *c = ref_case_add(out, op->op, "Digamma poles and zeros");
    ref_case_input_values(c, dtype, &n, 1, x);
  }
  if (!strcmp(op->op, "Erf") || !strcmp(op->op, "Erfc")) {
    /* The device's fits switch at |x| = 1 (erf) and clamp at 10.1; erfc's
     * tail keeps its relative digits down to 1e-30 (x near 8.1). A sweep
     * of [-10.5, 10.5] by 1/64 and the edges. */
    enum { SWEEP = 1345 };
    double x[SWEEP + 10] = {NAN,   -INFINITY, INFINITY,  -0.0, 0.0,
                            1e-30, 0.9999999, 1.0000001, 10.1, -10.1};
    for (int i = 0; i < SWEEP; i++)
      x[10 + i] = -10.5 + i / 64.0;
    int64_t n = SWEEP + 10;
    struct ref_case *c = ref_case_add(out, op->op, "%s sweep", op->op);
    ref_case_input_values(c, dtype, &n, 1, x);
  }
  if (is_float(dtype) && (!strcmp(op->op, "Sin") || !strcmp(op->op, "Cos") ||
                          !strcmp(op->op, "Tan"))) {
    /* The float fits reduce |x| by pi / 2 with 96 bits of 2 / pi picked by
     * x's exponent: every exponent from 2^-8 to 2^127 (each start of that
     * window, a wrong table word or shift fails there), the floats nearest
     * the multiples of pi / 2 (the reduced argument nearly 0; 16367173
     * 2^72 is the nearest of all floats), both sides of pi / 4, where no
     * reduction is taken, the edges, and [-20 pi, 20 pi] by 1/20. */
    enum { EDGES = 16, MULTIPLES = 80, EXPONENTS = 136, SWEEP = 2514 };
    double x[EDGES + MULTIPLES + EXPONENTS + SWEEP] = {
        NAN,          INFINITY,      -INFINITY,  0.0,
        -0.0,         1e-45,         -1e-30,     0.78539813,
        0.78539819,   -0.78539819,   2.3561944,  16367173 * 0x1p72,
        3.4028235e38, -3.4028235e38, 16777216.0, -16777218.0};
    double *multiples = x + EDGES;
    for (int k = 0; k < MULTIPLES; k++) {
      double factor = k < 64 ? k + 1 : pow(10, k - 60);
      multiples[k] = (k & 1 ? -1 : 1) * (double)(float)(factor * M_PI_2);
    }
    double *exponents = multiples + MULTIPLES;
    for (int j = 0; j < EXPONENTS; j++)
      exponents[j] = (j & 1 ? -1.2345 : 1.2345) * ldexp(1, j - 8);
    double *sweep = exponents + EXPONENTS;
    for (int i = 0; i < SWEEP; i++)
      sweep[i] = -20 * M_PI + i / 20.0;
    int64_t n = sizeof(x) / sizeof(x[0]);
    struct ref_case *c =
        ref_case_add(out, op->op, "%s reduction by pi / 2", op->op);
    ref_case_input_values(c, dtype, &n, 1, x);
  }
  if (is_float(dtype) && !strcmp(op->op, "Lgamma")) {
    /* The float fit's poles (0, the negative integers, where the
     * reflection's sin(pi x) is 0), its zeros (1, 2), the shift's switch
     * (4), the tiny and the large, and [-20, 20] by 1/64 (the reflection
     * below 0). */
    enum { EDGES = 26, SWEEP = 2561 };
    double x[EDGES + SWEEP] = {NAN,       INFINITY,     -INFINITY, 0.0,
                               -0.0,      1e-30,        -1e-30,    -1.0,
                               -2.0,      -1e6,         0.9999999, 1.0000001,
                               1.9999999, 2.0000002,    3.9999998, 4.0000005,
                               -0.5,      -2.5,         -1000.5,   -4096.25,
                               1e30,      3.4028235e38, 2.5,       0.1,
                               -0.1,      1e-7};
    for (int i = 0; i < SWEEP; i++)
      x[EDGES + i] = -20 + i / 64.0;
    int64_t n = EDGES + SWEEP;
    struct ref_case *c = ref_case_add(out, op->op, "Lgamma edges and sweep");
    ref_case_input_values(c, dtype, &n, 1, x);
  }
  if (is_float(dtype) &&
      (!strcmp(op->op, "Atan") || !strcmp(op->op, "Asin") ||
       !strcmp(op->op, "Acos") || !strcmp(op->op, "Atanh") ||
       !strcmp(op->op, "Asinh") || !strcmp(op->op, "Acosh") ||
       !strcmp(op->op, "Sinh") || !strcmp(op->op, "Cosh"))) {
    /* The float fits switch at tan(pi / 8) and tan(3 pi / 8) (atan), 1/2
     * (asin, acos), 4096 (asinh, acosh) and 80 (sinh, cosh, whose results
     * overflow from 89.42); atanh and acos near -1, where
     * a form in x rather than |x| loses its digits. Then the edges, and
     * [-20, 20] by 1/64 (outside an op's domain: NaN, as the reference). */
    enum { EDGES = 44, SWEEP = 2561 };
    double x[EDGES + SWEEP] = {
        NAN,         INFINITY,     -INFINITY,     0.0,         -0.0,
        1e-30,       -1e-30,       1e-8,          0.41421354,  0.41421357,
        -0.41421357, 2.41421342,   2.41421366,    -2.41421366, 0.5,
        -0.5,        0.50000006,   -0.50000006,   0.99999994,  -0.99999994,
        1.0,         -1.0,         1.0000001,     -1.0000001,  1.00001,
        4095.9998,   4096.0,       4096.0005,     -4096.0005,  1e20,
        -1e20,       3.4028235e38, -3.4028235e38, 0.9,         -0.9,
        2.0};
    for (int i = 0; i < SWEEP; i++)
      x[EDGES + i] = -20 + i / 64.0;
    int64_t n = EDGES + SWEEP;
    struct ref_case *c =
        ref_case_add(out, op->op, "%s edges and sweep", op->op);
    ref_case_input_values(c, dtype, &n, 1, x);
  }
  if (is_float(dtype) &&
      (!strcmp(op->op, "Exp") || !strcmp(op->op, "Expm1") ||
       !strcmp(op->op, "Log") || !strcmp(op->op, "Log1p") ||
       !strcmp(op->op, "Tanh") || !strcmp(op->op, "Sigmoid") ||
       !strcmp(op->op, "Softplus"))) {
    /* The device's float fits (activations.clh) switch, clamp or scale at
     * these points: exp's overflow and subnormal results, expm1's series
     * edge (0.7), tanh's clamp (7.905) and saturation (9), log's subnormal
     * inputs, its halving above sqrt(2), log1p's u = 1 and u = 0. Then
     * [-110, 110] by 1/8 and the powers of ten, each sign. */
    enum { EDGES = 34, SWEEP = 1761, DECADES = 83 };
    double x[EDGES + SWEEP + 2 * DECADES] = {
        NAN,        -INFINITY,  INFINITY,   -0.0,
        0.0,        1e-45,      1e-40,      1.17549435e-38,
        -1e-30,     1e-8,       -1e-8,      0.7,
        -0.7,       0.70001,    -0.70001,   0.9999999,
        1.0000001,  1.41421354, 1.41421366, 7.9053,
        7.9054,     8.5,        9.0,        9.01,
        -9.01,      88.72,      88.73,      -87.34,
        -103.9,     -104.1,     -0.9999999, -1.0,
        -1.0000001, 3e38};
    for (int i = 0; i < SWEEP; i++)
      x[EDGES + i] = -110 + i / 8.0;
    for (int i = 0; i < DECADES; i++) {
      x[EDGES + SWEEP + 2 * i] = pow(10, i - 44);
      x[EDGES + SWEEP + 2 * i + 1] = -pow(10, i - 44);
    }
    int64_t n = EDGES + SWEEP + 2 * DECADES;
    struct ref_case *c =
        ref_case_add(out, op->op, "%s edges and sweep", op->op);
    ref_case_input_values(c, dtype, &n, 1, x);
  }
  if (!strcmp(op->op, "Log1p") && is_float(dtype)) {
    struct ref_case *c = ref_case_add(out, op->op, "Log1p (-0.95, 0.95)");
    ref_case_input(c, dtype, (int64_t[]){257}, 1, REF_UNIT);
  }
}

/* ---- Gradients ----------------------------------------------------------- */

/* One rounding to the compute type: float for float and half (the device
 * computes in float, and so does TensorFlow), none for double. */
static double round_to_compute(TF_DataType dtype, double v)
{
  return dtype == TF_DOUBLE ? v : (double)(float)v;
}
#define F(v) round_to_compute(dtype, (v))

/* a and b are the op's inputs in TensorFlow's order. Each intermediate is
 * rounded to the compute type as on the device, so that an intermediate
 * that overflows (y*y of a large y) gives the device's Inf or NaN; the
 * formulas are otherwise exact, so the tolerance is the few roundings. */
#define REF_GRAD(KERNEL, VALUE) \
  static double ref_##KERNEL##_grad(TF_DataType dtype, double a, double b, \
                                    double alpha) \
  { \
    (void)dtype; \
    (void)alpha; \
    return VALUE; \
  }

REF_GRAD(relu, a * (b > 0 ? 1.0 : 0.0))
REF_GRAD(relu6, a * (b > 0 && b < 6 ? 1.0 : 0.0))
REF_GRAD(elu, b < 0 ? a * F(b + 1) : a)
REF_GRAD(selu,
         b < 0 ? a * F(b + selu_scale_alpha(dtype)) : a * selu_scale(dtype))
REF_GRAD(leaky_relu, b > 0 ? a : a * alpha)
REF_GRAD(softplus, a / (exp(-b) + 1))
REF_GRAD(softsign, a / F(F(fabs(b) + 1) * F(fabs(b) + 1)))
REF_GRAD(sigmoid, F(b * a) * F(1 - a))
/* The device's fma: one rounding of 1 - y*y. */
REF_GRAD(tanh, F(fma(-a, a, 1)) * b)
REF_GRAD(sqrt, F(0.5 * b) / a)
REF_GRAD(rsqrt, F(-0.5 * F(a * a)) * F(a * b))
REF_GRAD(reciprocal, F(-a * a) * b)
#undef F

/* ---- unary.def's rows: each op's references and output --------------------
 * By KIND: the row's value (x -> y) or gradient (two inputs), its output
 * type (0: the input's), whether its two inputs must have one shape. KERNEL
 * is passed on to these, expanded first: C defines none of unary.def's
 * kernels as a macro. */
#define KIND_PLAIN(KERNEL) ref_##KERNEL, NULL, 0, false
#define KIND_PREDICATE(KERNEL) ref_##KERNEL, NULL, TF_BOOL, false
#define KIND_NEG KIND_PLAIN
#define KIND_ABS KIND_PLAIN
#define KIND_SIGN KIND_PLAIN
#define KIND_SQUARE KIND_PLAIN
#define KIND_ROUND KIND_PLAIN
#define KIND_INVERT KIND_PLAIN
#define KIND_POPCOUNT(KERNEL) ref_##KERNEL, NULL, TF_UINT8, false
#define KIND_GRAD_SHAPE(KERNEL) NULL, ref_##KERNEL##_grad, 0, true
#define KIND_GRAD_ELEMENTS(KERNEL) NULL, ref_##KERNEL##_grad, 0, false

/* By TYPES: whether the value takes integers, and floats (bool goes the
 * float way). An op given a dtype its row lacks (ref_unary_value's callers
 * may ask) gets NaN, or on the integer path the integer unchanged. */
#define PATHS_FLOATS false, true
#define PATHS_SINGLE_FLOATS false, true
#define PATHS_FLOAT_DOUBLE false, true
#define PATHS_FLOATS_INT64 true, true
#define PATHS_FLOATS_INTEGERS true, true
#define PATHS_INTEGERS true, false
#define PATHS_BOOL false, true

struct unary_ref {
  const char *op;
  double (*value)(TF_DataType dtype, double a, double alpha);
  double (*grad)(TF_DataType dtype, double a, double b, double alpha);
  int out_type;
  bool same_shape;
  bool on_integers, on_floats;
};

#define UNARY_REF_ROW(NAME, KERNEL, KIND, TYPES) \
  {#NAME, KIND_##KIND(KERNEL), PATHS_##TYPES},

/* Every row macro is defined: the .def's default forwarding would expand
 * the columns (MATH's OpenCL C among them) before they are dropped. */
static const struct unary_ref unary_refs[] = {
#define UNARY_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,          \
                 INT_MATH)                                                   \
  UNARY_REF_ROW(NAME, KERNEL, KIND, TYPES)
#define UNARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,    \
                       INT_MATH, ENUM, OPCODE, FUSED_TYPES, COST)            \
  UNARY_REF_ROW(NAME, KERNEL, KIND, TYPES)
#define UNARY_ALIAS(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, ENUM)       \
  UNARY_REF_ROW(NAME, KERNEL, KIND, TYPES)
#include "../../kernels/unary.def"
};

static const struct unary_ref *unary_ref_of(const char *op)
{
  for (size_t i = 0; i < sizeof(unary_refs) / sizeof(unary_refs[0]); i++)
    if (!strcmp(op, unary_refs[i].op))
      return &unary_refs[i];
  return NULL;
}

static double unary_value(const char *op, TF_DataType dtype, double a,
                          double alpha)
{
  const struct unary_ref *r = unary_ref_of(op);
  bool integer = integer_path(dtype);
  if (r == NULL || r->value == NULL ||
      !(integer ? r->on_integers : r->on_floats))
    return integer ? (double)(int64_t)a : NAN;
  return r->value(dtype, a, alpha);
}

static TF_DataType unary_out_type(const char *op, TF_DataType dtype)
{
  const struct unary_ref *r = unary_ref_of(op);
  return r != NULL && r->out_type != 0 ? (TF_DataType)r->out_type : dtype;
}

static double grad_value(const char *op, TF_DataType dtype, double a, double b,
                         double alpha)
{
  const struct unary_ref *r = unary_ref_of(op);
  return r != NULL && r->grad != NULL ? r->grad(dtype, a, b, alpha) : NAN;
}

/* The relu family requires equal shapes, the (y, dy) ops equal element
 * counts (the output takes the first input's shape). */
static bool same_shape_grad(const char *op)
{
  const struct unary_ref *r = unary_ref_of(op);
  return r != NULL && r->same_shape;
}

static int grad_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *a = &c->inputs[0], *b = &c->inputs[1];
  bool shape_ok = a->elements == b->elements;
  if (same_shape_grad(c->op))
    shape_ok = a->rank == b->rank &&
               !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
  if (!shape_ok) {
    snprintf(error, (size_t)error_len, "input shapes differ");
    return -1;
  }
  double alpha = (float)ref_case_attr_float_or(c, "alpha", 0.2);
  ref_tensor_alloc(&out[0], a->dtype, a->dims, a->rank);
  for (int64_t i = 0; i < a->elements; i++)
    out[0].v[i] = ref_round_to(a->dtype, grad_value(c->op, a->dtype, a->v[i],
                                                    b->v[i], alpha));
  return 1;
}

struct grad_shapes {
  int rank_a, rank_b;
  int64_t a[3], b[3];
};

static void grad_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  static const struct grad_shapes shapes[] = {
      {0, 0, {0}, {0}},         {1, 1, {7}, {7}},
      {2, 2, {3, 5}, {3, 5}},   {3, 3, {2, 3, 7}, {2, 3, 7}},
      {1, 1, {1031}, {1031}},   {1, 1, {0}, {0}},
      {2, 2, {4, 0}, {4, 0}},
  };
  /* The (y, dy) ops' y: positive where the formula divides by it. */
  enum ref_domain y_domain =
      (!strcmp(op->op, "SqrtGrad") || !strcmp(op->op, "RsqrtGrad"))
          ? REF_POSITIVE
          : REF_ANY;
  bool y_first = !same_shape_grad(op->op);
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    const struct grad_shapes *s = &shapes[i];
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%zu", op->op, i);
    ref_case_input(c, dtype, s->a, s->rank_a, y_first ? y_domain : REF_ANY);
    c->label[0] ^= 1; /* a different generator for the second input */
    ref_case_input(c, dtype, s->b, s->rank_b, REF_ANY);
    c->label[0] ^= 1;
  }
  /* Every special value against every other. */
  static const double special[] = {NAN,  INFINITY, -INFINITY, 0.0,  -0.0,
                                   1e30, -1e30,    3.5,       -2.25, 0.5,
                                   1.0,  -1.0,     6.0,       -0.75};
  enum { NS = sizeof(special) / sizeof(special[0]) };
  double x[NS * NS], y[NS * NS];
  for (int i = 0; i < NS; i++)
    for (int j = 0; j < NS; j++) {
      x[i * NS + j] = special[i];
      y[i * NS + j] = special[j];
    }
  int64_t dims[2] = {NS, NS};
  struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
  ref_case_input_values(c, dtype, dims, 2, x);
  ref_case_input_values(c, dtype, dims, 2, y);

  if (!strcmp(op->op, "LeakyReluGrad")) {
    c = ref_case_add(out, op->op, "LeakyReluGrad alpha=1.5");
    ref_case_input(c, dtype, (int64_t[]){3, 7}, 2, REF_ANY);
    c->label[0] ^= 1;
    ref_case_input(c, dtype, (int64_t[]){3, 7}, 2, REF_ANY);
    c->label[0] ^= 1;
    ref_case_attr_float(c, "alpha", 1.5f);
  }
  /* Same element count, other shape: only the relu family refuses it. */
  c = ref_case_add(out, op->op, "%s [2,3] vs [3,2]", op->op);
  ref_case_input(c, dtype, (int64_t[]){2, 3}, 2, y_domain);
  ref_case_input(c, dtype, (int64_t[]){3, 2}, 2, REF_ANY);
  c->expect_code = same_shape_grad(op->op) ? TF_INVALID_ARGUMENT : TF_OK;
  c = ref_case_add(out, op->op, "%s [2,3] vs [4]", op->op);
  ref_case_input(c, dtype, (int64_t[]){2, 3}, 2, y_domain);
  ref_case_input(c, dtype, (int64_t[]){4}, 1, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- Cast ------------------------------------------------------------------ */

static double float_to_integer(double v, double limit)
{
  /* x86-64's "integer indefinite" for NaN and out-of-range values. */
  return (isnan(v) || v >= limit || v < -limit) ? -limit : trunc(v);
}

/* float to uint64 (see unary.cl's float_to_ulong): [2^63, 2^64) exactly,
 * the rest through the int64 conversion. */
static double float_to_uint64(double v)
{
  if (v >= 9223372036854775808.0 && v < 18446744073709551616.0)
    return trunc(v);
  return (double)(uint64_t)(int64_t)float_to_integer(v, 9223372036854775808.0);
}

static double cast_value(TF_DataType src, TF_DataType dst, double v,
                         bool truncate)
{
  /* Narrow integers take the low bits of the int32 conversion, uint32 of
   * the int64 one. */
  double as_int32 = is_floating(src) ? float_to_integer(v, 2147483648.0) : v;
  double as_int64 =
      is_floating(src) ? float_to_integer(v, 9223372036854775808.0) : v;
  switch (dst) {
  case TF_INT8:
    return (double)(int8_t)(int64_t)as_int32;
  case TF_UINT8:
    return (double)(uint8_t)(int64_t)as_int32;
  case TF_INT16:
    return (double)(int16_t)(int64_t)as_int32;
  case TF_UINT16:
    return (double)(uint16_t)(int64_t)as_int32;
  case TF_UINT32:
    return (double)(uint32_t)(int64_t)as_int64;
  case TF_UINT64:
    return is_floating(src) ? float_to_uint64(v)
                            : (double)(uint64_t)(int64_t)v;
  case TF_DOUBLE:
    return v;
  case TF_BFLOAT16:
    return ref_round_to(TF_BFLOAT16, ref_round_to(TF_FLOAT, v));
  case TF_FLOAT:
    return ref_round_to(TF_FLOAT, v);
  case TF_HALF:
    if (src == TF_FLOAT && truncate && !isnan(v)) {
      float f = (float)v;
      uint32_t bits;
      memcpy(&bits, &f, sizeof(bits));
      bits &= 0xffffe000u;
      memcpy(&f, &bits, sizeof(f));
      v = f;
    }
    /* Integers reach half through float, as Eigen does. */
    return ref_round_to(TF_HALF, ref_round_to(TF_FLOAT, v));
  case TF_INT32:
    return is_floating(src) ? as_int32 : ref_round_to(TF_INT32, v);
  case TF_INT64:
    return as_int64;
  default:
    return v != 0;
  }
}

static int cast_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  (void)error;
  (void)error_len;
  const struct ref_tensor *x = &c->inputs[0];
  const struct tfocl_attr *dst_attr = ref_case_attr(c, "DstT");
  TF_DataType dst =
      dst_attr != NULL && dst_attr->kind == TFOCL_ATTR_TYPE ? dst_attr->value.type
                                                           : x->dtype;
  bool truncate = ref_case_attr_bool_or(c, "Truncate", false);
  ref_tensor_alloc(&out[0], dst, x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++)
    out[0].v[i] = cast_value(x->dtype, dst, x->v[i], truncate);
  return 1;
}

/* SrcT is `dtype`; the ops suite pins DstT from each kernel's registration,
 * so the cases set only what is common to every destination. */
static void cast_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  ref_cases_unary(op, dtype, out);
  struct ref_case *c;
  if (is_floating(dtype)) {
    /* Truncation toward zero, rounding to half (ties to even among
     * normals and subnormals, at the normal threshold, into infinity),
     * the int32 and int64 range edges and beyond them. */
    static const double values[] = {2.5,
                                    -2.5,
                                    2.9,
                                    -2.9,
                                    0.4,
                                    -0.6,
                                    1.0009765625,
                                    1.00048828125,
                                    3e9,
                                    -3e9,
                                    2147483520.0,
                                    -2147483648.0,
                                    1e19,
                                    -1e19,
                                    65504.0,
                                    70000.0,
                                    1.0 + 1.0 / 4096,
                                    3.14159265,
                                    -0.0,
                                    5.96e-8,
                                    0x1p-25,
                                    3 * 0x1p-25,
                                    -1.5 * 0x1p-24,
                                    0x1p-14 - 0x1p-25,
                                    5 * 0x1p-25,
                                    65519.0,
                                    65520.0,
                                    1 + 0x1p-11,
                                    1 + 3 * 0x1p-11,
                                    0x1p-149,
                                    -0x1p-24};
    int64_t n = sizeof(values) / sizeof(values[0]);
    c = ref_case_add(out, op->op, "Cast edges");
    ref_case_input_values(c, dtype, &n, 1, values);
    c = ref_case_add(out, op->op, "Cast edges, Truncate");
    ref_case_input_values(c, dtype, &n, 1, values);
    ref_case_attr_bool(c, "Truncate", true);
  } else if (dtype != TF_BOOL) {
    static const double values[] = {0,     1,     -1,         127,
                                    255,   256,   -129,       2049,
                                    65504, 70000, 2147483647, -2147483648.0,
                                    16777217};
    static const double wide[] = {4294967301.0, -4294967296.0,
                                  9007199254740992.0, 1099511627776.0};
    bool is_unsigned = dtype == TF_UINT8 || dtype == TF_UINT16 ||
                       dtype == TF_UINT32 || dtype == TF_UINT64;
    double held[sizeof(values) / sizeof(values[0])];
    int64_t n = 0;
    /* What the source type holds: unsigned sources drop the negatives. */
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
      if (!is_unsigned || values[i] >= 0)
        held[n++] = ref_round_to(dtype, values[i]);
    c = ref_case_add(out, op->op, "Cast integers");
    ref_case_input_values(c, dtype, &n, 1, held);
    if (dtype == TF_INT64 || dtype == TF_UINT64) {
      /* Wrap-around into int32, rounding into float. */
      double wide_held[sizeof(wide) / sizeof(wide[0])];
      int64_t m = 0;
      for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
        if (!is_unsigned || wide[i] >= 0)
          wide_held[m++] = wide[i];
      c = ref_case_add(out, op->op, "Cast wide %s", tfocl_type_name(dtype));
      ref_case_input_values(c, dtype, &m, 1, wide_held);
    }
  }
}

/* For other references that compose these ops (ref_fused.c). */
double ref_unary_value(const char *op, TF_DataType dtype, double a)
{
  return unary_value(op, dtype, a, 0.2);
}

/* The fused op computes in float. */
double ref_grad_value(const char *op, double a, double b)
{
  return grad_value(op, TF_FLOAT, a, b, 0.2);
}

/* unary.def's REF column: rtol, atol. */
#define EXACT 0.0, 0.0
#define ROUNDED 1e-6, 1e-30
#define BUILTIN 4e-6, 1e-30
/* lgamma has no accuracy bound in OpenCL; near its zeros (1, 2) only an
 * absolute one makes sense. */
#define LGAMMA 1e-5, 1e-5
/* A few roundings in the series and the recurrence; near its zero
 * (1.4616) only an absolute bound makes sense. */
#define DIGAMMA 1e-5, 1e-5
/* Near p = 0.5 the quantile is near 0: an absolute bound there. */
#define NDTRI 4e-6, 1e-6
/* Cephes' single-precision fits (peak 4e-7 relative, 2.4e-7 absolute for J
 * and Y) composed with exp, log, cos, rsqrt of a few ulp. J and Y take an
 * absolute bound too, near their zeros and for large x, whose phase x + ...
 * rounds to float (up to ulp(x) / 2 radians times the modulus
 * sqrt(2 / (pi x)): 1.2e-5 at x = 65000). */
#define BESSEL 4e-6, 1e-30
#define BESSEL_JY 4e-6, 1.5e-5

/* On double, a few ulp of double (2^-52 = 2.2e-16), by the same reasoning:
 * a few roundings; the built-ins' bounds in double (exp, log 3 ulp, tanh
 * 5, erf, erfc, pow 16) composed with a rounding or two, ~36 ulp as for
 * float; lgamma's and digamma's absolute bound near their zeros (the
 * device's digamma adds up to ten 1 / x terms). The rows whose TYPES have
 * no double have none. */
#define DOUBLE_EXACT 0.0, 0.0
#define DOUBLE_ROUNDED 1e-15, 1e-300
#define DOUBLE_BUILTIN 8e-15, 1e-300
#define DOUBLE_LGAMMA 1e-13, 1e-13
#define DOUBLE_DIGAMMA 1e-13, 1e-13
/* Newton's last step leaves erf's or erfc's error; near p = 1/2 the
 * quantile is near 0: an absolute bound there. */
#define DOUBLE_NDTRI 8e-15, 1e-15

/* The case builder and computation by unary.def's KIND. */
#define REF_FNS_PLAIN unary_cases, unary_compute
#define REF_FNS_PREDICATE REF_FNS_PLAIN
#define REF_FNS_NEG REF_FNS_PLAIN
#define REF_FNS_ABS REF_FNS_PLAIN
#define REF_FNS_SIGN REF_FNS_PLAIN
#define REF_FNS_SQUARE REF_FNS_PLAIN
#define REF_FNS_ROUND REF_FNS_PLAIN
#define REF_FNS_INVERT REF_FNS_PLAIN
#define REF_FNS_POPCOUNT REF_FNS_PLAIN
#define REF_FNS_GRAD_SHAPE grad_cases, grad_compute
#define REF_FNS_GRAD_ELEMENTS REF_FNS_GRAD_SHAPE

/* REF comes last: it expands to two numbers. Every row macro is defined
 * here, since the .def's default forwarding would expand it early. */
#define REF_ROW(NAME, KIND, DOMAIN, ...) \
  {#NAME, __VA_ARGS__, REF_##DOMAIN, REF_FNS_##KIND},

const struct ref_op ref_ops_unary[] = {
#define UNARY_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,          \
                 INT_MATH)                                                   \
  REF_ROW(NAME, KIND, DOMAIN, REF)
#define UNARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,    \
                       INT_MATH, ENUM, OPCODE, FUSED_TYPES, COST)            \
  REF_ROW(NAME, KIND, DOMAIN, REF)
#define UNARY_ALIAS(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, ENUM)       \
  REF_ROW(NAME, KIND, DOMAIN, REF)
#include "../../kernels/unary.def"
    {"Cast", EXACT, REF_ANY, cast_cases, cast_compute},
    {.op = NULL},
};

/* By TYPES: a row with double gets its REF kind's double tolerance. */
#define DOUBLE_ROW(NAME, ...) {#NAME, __VA_ARGS__},
#define DOUBLE_ROW_FLOATS DOUBLE_ROW
#define DOUBLE_ROW_FLOATS_INT64 DOUBLE_ROW
#define DOUBLE_ROW_FLOATS_INTEGERS DOUBLE_ROW
#define DOUBLE_ROW_FLOAT_DOUBLE DOUBLE_ROW
#define DOUBLE_ROW_SINGLE_FLOATS(NAME, ...)
#define DOUBLE_ROW_INTEGERS(NAME, ...)
#define DOUBLE_ROW_BOOL(NAME, ...)

const struct ref_double_tolerance ref_double_tolerances_unary[] = {
#define UNARY_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH, INT_MATH) \
  DOUBLE_ROW_##TYPES(NAME, DOUBLE_##REF)
#define UNARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH, \
                       INT_MATH, ENUM, OPCODE, FUSED_TYPES, COST) \
  DOUBLE_ROW_##TYPES(NAME, DOUBLE_##REF)
#define UNARY_ALIAS(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, ENUM) \
  DOUBLE_ROW_##TYPES(NAME, DOUBLE_##REF)
#include "../../kernels/unary.def"
    {.op = NULL},
};
