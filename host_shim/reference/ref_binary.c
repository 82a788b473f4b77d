/* References of the binary kernel family: element-wise binary ops with
 * broadcasting (kernels/binary.def's rows: their tolerance, input domain
 * and cases come from there, the references are this file's own), BiasAdd
 * and AddN. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

static bool is_float(TF_DataType t)
{
  return t == TF_FLOAT || t == TF_HALF || t == TF_DOUBLE;
}

/* ---- Special functions, in float64 ----------------------------------------
 * Written apart from the device's Cephes code: the regularised incomplete
 * gamma functions by the series of P below x < a + 1 and the modified
 * Lentz evaluation of Q's continued fraction above (Numerical Recipes'
 * split); Hurwitz zeta by direct summation to N + q >= 20 + x and the
 * Euler-Maclaurin tail with Bernoulli numbers to B_20. The edges are
 * TensorFlow's (see binary.cl). */

/* P(a, x) for x < a + 1, Q(a, x) otherwise, with a, x > 0 finite. */
static double gamma_p_series(double a, double x)
{
  double term = 1 / a, sum = term;
  for (int n = 1; n < 100000 && fabs(term) > 1e-17 * fabs(sum); n++) {
    term *= x / (a + n);
    sum += term;
  }
  return sum * exp(a * log(x) - x - lgamma(a));
}

static double gamma_q_fraction(double a, double x)
{
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; i++) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    d = fabs(d) < tiny ? tiny : d;
    c = b + an / c;
    c = fabs(c) < tiny ? tiny : c;
    d = 1 / d;
    double delta = d * c;
    h *= delta;
    if (fabs(delta - 1) < 1e-16)
      break;
  }
  return exp(a * log(x) - x - lgamma(a)) * h;
}

static double igamma_ref(double a, double x, bool upper)
{
  if (!upper && x == 0)
    return 0;
  if (isnan(a) || isnan(x) || x < 0 || a <= 0)
    return NAN;
  double p;
  if (isinf(x))
    p = isinf(a) ? 0 : 1; /* TensorFlow: P(inf, inf) = 0 = Q(inf, inf) */
  else if (isinf(a))
    p = 0;
  else if (x == 0)
    p = 0;
  else if (x < a + 1)
    p = gamma_p_series(a, x);
  else
    p = 1 - gamma_q_fraction(a, x);
  if (!upper)
    return p;
  if (isinf(x))
    return 0;
  return x < a + 1 || isinf(a) ? 1 - p : gamma_q_fraction(a, x);
}

/* B_2k / (2k)! for k = 1..10. */
static const double bernoulli_over_factorial[] = {
    1.0 / 12,
    -1.0 / 720,
    1.0 / 30240,
    -1.0 / 1209600,
    1.0 / 47900160,
    -691.0 / 1307674368000.0,
    1.0 / 74724249600.0,
    -3617.0 / 10670622842880000.0,
    43867.0 / 5109094217170944000.0,
    -174611.0 / 802857662698291200000.0,
};

static double zeta_ref(double x, double q)
{
  if (isnan(x) || isnan(q))
    return NAN;
  if (x == 1)
    return INFINITY;
  if (x < 1)
    return NAN;
  if (q <= 0) {
    if (q == floor(q))
      return x == floor(x) && (isinf(x) || fmod(x, 2) == 0) ? INFINITY : NAN;
    if (x != floor(x))
      return NAN;
  }
  if (isinf(q))
    return 0;
  if (isinf(x))
    return q < 1 ? INFINITY : q == 1 ? 1 : 0;
  /* Directly until n >= 20 + x: the tail's terms shrink by about
   * (x + 2j)^2 / (2 pi n)^2 each, too slowly for ten of them to reach
   * double's precision where n is not well above x (zeta(31, 20) was
   * 1e-11 off with n >= 20 alone). */
  double sum = 0, n = q;
  for (; n < 20 + fmin(x, 1e6); n += 1)
    sum += pow(n, -x);
  /* sum_{k>=0} (n + k)^-x = n^(1-x)/(x-1) + n^-x/2
   *   + sum_j B_2j/(2j)! x (x+1) ... (x+2j-2) n^(-x-2j+1) */
  double tail = pow(n, 1 - x) / (x - 1) + 0.5 * pow(n, -x);
  double rising = x, power = pow(n, -x - 1);
  for (int j = 0; j < 10; j++) {
    tail += bernoulli_over_factorial[j] * rising * power;
    rising *= (x + 2 * j + 1) * (x + 2 * j + 2);
    power /= n * n;
  }
  return sum + tail;
}

static double polygamma_ref(double n, double x)
{
  if (isnan(n) || n != floor(n) || n < 0)
    return NAN;
  if (n == 0)
    return ref_unary_value("Digamma", TF_FLOAT, x) /* float: its non-integer path */;
  double sign = fmod(n, 2) == 0 ? -1 : 1; /* (-1)^(n+1) */
  if (isinf(n))
    sign = 1;
  return sign * exp(lgamma(n + 1)) * zeta_ref(n + 1, x);
}

/* ---- One float64 reference per binary.def row: ref_<KERNEL> -------------
 * Each takes the inputs' dtype, which only some need. */

#define REF_VALUE(KERNEL, VALUE)                                              \
  static double ref_##KERNEL(TF_DataType dtype, double a, double b)           \
  {                                                                           \
    (void)dtype;                                                              \
    return VALUE;                                                             \
  }

REF_VALUE(add, a + b)
REF_VALUE(sub, a - b)
REF_VALUE(mul, a * b)
REF_VALUE(real_div, a / b)
REF_VALUE(div_no_nan, b == 0 ? 0 : a / b)
REF_VALUE(maximum, isnan(a) ? a : isnan(b) ? b : (a > b ? a : b))
REF_VALUE(minimum, isnan(a) ? a : isnan(b) ? b : (a < b ? a : b))
REF_VALUE(power, pow(a, b))
REF_VALUE(squared_difference, (a - b) * (a - b))
REF_VALUE(equal, a == b)
REF_VALUE(not_equal, a != b)
REF_VALUE(less, a < b)
REF_VALUE(less_equal, a <= b)
REF_VALUE(greater, a > b)
REF_VALUE(greater_equal, a >= b)
REF_VALUE(logical_and, a != 0 && b != 0)
REF_VALUE(logical_or, a != 0 || b != 0)
REF_VALUE(bitwise_and, (double)((int64_t)a & (int64_t)b))
REF_VALUE(bitwise_or, (double)((int64_t)a | (int64_t)b))
REF_VALUE(bitwise_xor, (double)((int64_t)a ^ (int64_t)b))
REF_VALUE(arc_tangent2, atan2(a, b))
REF_VALUE(xlogy, a == 0 ? 0 : a * log(b))
REF_VALUE(xdivy, a == 0 ? 0 : a / b)
REF_VALUE(xlog1py, a == 0 ? 0 : a * log1p(b))
static double ref_next_after(TF_DataType dtype, double a, double b)
{
  return dtype == TF_DOUBLE ? nextafter(a, b) : nextafterf((float)a, (float)b);
}
REF_VALUE(igamma, igamma_ref(a, b, false))
REF_VALUE(igammac, igamma_ref(a, b, true))
REF_VALUE(zeta, zeta_ref(a, b))
REF_VALUE(polygamma, polygamma_ref(a, b))

static double ref_floor_div(TF_DataType dtype, double a, double b)
{
  /* The quotient is rounded to float (float, half) before the floor, as
   * the device and TensorFlow's CPU kernel both compute it. */
  if (dtype == TF_FLOAT || dtype == TF_HALF)
    return floor(ref_round_to(TF_FLOAT, a / b));
  return floor(a / b);
}

static double ref_floor_mod(TF_DataType dtype, double a, double b)
{
  (void)dtype;
  double r = fmod(a, b);
  return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
}

/* TensorFlow clamps the amount to [0, bits - 1]. */
static int64_t shift_amount(TF_DataType dtype, double b)
{
  int bits = dtype == TF_INT32 ? 32 : 64;
  int64_t s = (int64_t)b;
  return s < 0 ? 0 : s > bits - 1 ? bits - 1 : s;
}

static double ref_left_shift(TF_DataType dtype, double a, double b)
{
  uint64_t u = (uint64_t)(int64_t)a << shift_amount(dtype, b);
  return dtype == TF_INT32 ? (double)(int32_t)(uint32_t)u : (double)(int64_t)u;
}

static double ref_right_shift(TF_DataType dtype, double a, double b)
{
  /* Arithmetic: floor(x / 2^s). */
  return floor((double)(int64_t)a / ldexp(1.0, (int)shift_amount(dtype, b)));
}

/* Integers: C's truncation; by zero and MIN / -1 as the device defines
 * them (the int32 host path refuses a zero instead). */
static double ref_truncate_div(TF_DataType dtype, double a, double b)
{
  (void)dtype;
  int64_t p = (int64_t)a, q = (int64_t)b;
  if (q == 0)
    return 0;
  if (q == -1)
    return (double)(int64_t)(0 - (uint64_t)p);
  return (double)(p / q);
}

static double ref_truncate_mod(TF_DataType dtype, double a, double b)
{
  if (is_float(dtype))
    return fmod(a, b);
  int64_t p = (int64_t)a, q = (int64_t)b;
  if (q == 0 || q == -1)
    return 0;
  return (double)(p % q);
}

typedef double (*binary_fn)(TF_DataType dtype, double a, double b);

#define FORM_BOOL_OUT_ARITH false
#define FORM_BOOL_OUT_COMPARE true

/* Every row macro is defined: the .def's default forwarding would expand
 * the columns (MATH's OpenCL C among them) before they are dropped. */
struct binary_ref {
  const char *op;
  binary_fn fn;
  bool bool_out;
};

static const struct binary_ref binary_refs[] = {
#define BINARY_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN, CASES,  \
                  MATH, INT_MATH)                                            \
  {#NAME, ref_##KERNEL, FORM_BOOL_OUT_##FORM},
#define BINARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,   \
                        CASES, MATH, INT_MATH, ENUM, OPCODE, FUSED_TEXT,     \
                        FUSED_TYPES, COST)                                   \
  {#NAME, ref_##KERNEL, FORM_BOOL_OUT_##FORM},
#define BINARY_ALIAS(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,      \
                     CASES, ENUM)                                            \
  {#NAME, ref_##KERNEL, FORM_BOOL_OUT_##FORM},
#include "../../kernels/binary.def"
    /* Not binary.def's: sums, for ref_binary_value's callers. */
    {"BiasAdd", ref_add, false},
    {"AddN", ref_add, false},
};

static const struct binary_ref *binary_ref_of(const char *op)
{
  for (size_t i = 0; i < sizeof(binary_refs) / sizeof(binary_refs[0]); i++)
    if (!strcmp(op, binary_refs[i].op))
      return &binary_refs[i];
  return NULL;
}

static int binary_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *y = &c->inputs[1];
  int64_t dims[REF_MAX_DIMS * 2];
  int rank;
  if (!ref_broadcast_shape(x, y, dims, &rank) || rank > REF_MAX_DIMS) {
    snprintf(error, (size_t)error_len, "incompatible shapes");
    return -1;
  }
  const struct binary_ref *r = binary_ref_of(c->op);
  if (r == NULL) {
    snprintf(error, (size_t)error_len, "no reference for %s", c->op);
    return -1;
  }
  TF_DataType out_type = r->bool_out ? TF_BOOL : x->dtype;
  ref_tensor_alloc(&out[0], out_type, dims, rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    int64_t xi, yi;
    ref_broadcast_index(x, y, dims, rank, i, &xi, &yi);
    out[0].v[i] = ref_round_to(out_type, r->fn(x->dtype, x->v[xi], y->v[yi]));
  }
  return 1;
}

static void floor_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  ref_cases_binary(op, dtype, out);
  if (dtype == TF_INT64 || dtype == TF_INT32) {
    /* Every sign combination, exact multiples and remainders. */
    static const double x[] = {7, -7, 7, -7, 6, -6, 0, 1, -1, 100, -100, 13};
    static const double y[] = {2, 2, -2, -2, 3, 3, 5, -3, 3, 7, 7, -4};
    int64_t n = sizeof(x) / sizeof(x[0]);
    struct ref_case *c = ref_case_add(out, op->op, "%s signs", op->op);
    ref_case_input_values(c, dtype, &n, 1, x);
    ref_case_input_values(c, dtype, &n, 1, y);
  }
}

/* The x-ops (Xlogy, Xdivy, Xlog1py) and Atan2, NextAfter: random cases,
 * then zeros, signed zeros, NaN and infinities on both sides. */
static void special_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  ref_cases_binary(op, dtype, out);
  static const double x[] = {0, 0, 0, -0.0, 2, -2, NAN, 1, INFINITY, 0.5, 3, 1};
  static const double y[] = {0, NAN, -1, 2, 0, -0.0, 1, INFINITY, 1, -1, 1e-3,
                             -INFINITY};
  int64_t n = sizeof(x) / sizeof(x[0]);
  struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
  ref_case_input_values(c, dtype, &n, 1, x);
  ref_case_input_values(c, dtype, &n, 1, y);
}

/* Shifts: random values, then every amount from -3 to past the width. */
static void shift_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  ref_cases_binary(op, dtype, out);
  double x[72], s[72];
  int64_t n = 72;
  for (int i = 0; i < 72; i++) {
    x[i] = i % 3 == 0 ? -7 : i % 3 == 1 ? 12345 : -1;
    s[i] = i - 3;
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s every amount", op->op);
  ref_case_input_values(c, dtype, &n, 1, x);
  ref_case_input_values(c, dtype, &n, 1, s);
}

/* Drops the last case that ref_cases_binary added: every special value
 * against every other, where the ops below leave the range in which
 * TensorFlow's float algorithms converge (Igamma(1e30, 1e30) stops at its
 * 2000th term far from 0.5). Their own cases take the edges. */
static void drop_special_values(struct ref_cases *out)
{
  if (out->count == 0)
    return;
  struct ref_case *c = &out->items[out->count - 1];
  if (strstr(c->label, "special values") == NULL)
    return;
  for (int j = 0; j < c->num_inputs; j++)
    ref_tensor_finish(&c->inputs[j]);
  out->count--;
}

static void add_pairs(struct ref_cases *out, const char *op, TF_DataType dtype,
                      const char *what, const double *x, const double *y,
                      int64_t n)
{
  struct ref_case *c = ref_case_add(out, op, "%s %s", op, what);
  ref_case_input_values(c, dtype, &n, 1, x);
  ref_case_input_values(c, dtype, &n, 1, y);
}

/* Pow: random cases, then negative bases against odd and even integers
 * (up to 2^24 - 1, the largest odd float), bases a few ulps from 1 against
 * large exponents, results at overflow, at the subnormals and at 0, and a
 * sweep of bases from 1e-38 to 1e38, each against exponents that take
 * |y log2 x| to 1, 12, 60 and 120: where a logarithm in float alone is off
 * by up to |y log2 x| ulps. */
static void power_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  ref_cases_binary(op, dtype, out);
  static const double bases[] = {-2,   -0.5, -3,        -1,
                                 -0.0, 0,    -INFINITY, INFINITY};
  static const double exponents[] = {3,       -3,   2,        -2,
                                     0.5,     -1.5, 16777215, -16777215,
                                     8388609, 1e10, INFINITY, -INFINITY};
  enum { NB = sizeof(bases) / sizeof(bases[0]) };
  enum { NE = sizeof(exponents) / sizeof(exponents[0]) };
  double x[NB * NE], y[NB * NE];
  for (int i = 0; i < NB; i++)
    for (int j = 0; j < NE; j++) {
      x[i * NE + j] = bases[i];
      y[i * NE + j] = exponents[j];
    }
  add_pairs(out, op->op, dtype, "signs and integers", x, y, NB * NE);

  static const double near_one[] = {1 + 0x1p-23, 1 + 0x1p-22, 1 + 3 * 0x1p-23,
                                    1 - 0x1p-24, 1 - 0x1p-23, 1 - 3 * 0x1p-24,
                                    1 + 0x1p-23, 1 - 0x1p-24, 1 + 0x1p-22,
                                    1 - 0x1p-23};
  static const double large[] = {1e3,  -1e6, 1e8, -2147483648.0, 3e8,
                                 -4e8, 1e9,  1e9, -5e8,          2e9};
  add_pairs(out, op->op, dtype, "near one", near_one, large, 10);

  static const double edge_x[] = {2,     2,     2,     2,   2,    2,
                                  0.5,   10,    10,    10,  10,   3.4e38,
                                  1e-45, 1e-45, 1e-40, 1.5, 0.75, 1.1};
  static const double edge_y[] = {127.99, 128,  -126, -149,  -149.5, -140.3,
                                  149,    38.5, 38.0, -37.9, -45.5,  1,
                                  1,      0.5,  -0.9, 218.8, 360.1,  931.3};
  add_pairs(out, op->op, dtype, "overflow and underflow", edge_x, edge_y,
            sizeof(edge_x) / sizeof(edge_x[0]));

  enum { SWEEP = 48, SPANS = 8 };
  static const double spans[SPANS] = {1, -1, 12, -12, 60, -60, 120, -120};
  double sx[SWEEP * SPANS], sy[SWEEP * SPANS];
  for (int i = 0; i < SWEEP; i++) {
    double base = pow(10, -38 + 76.0 * i / (SWEEP - 1));
    if (base == 1)
      base = 1.25;
    for (int j = 0; j < SPANS; j++) {
      sx[i * SPANS + j] = base;
      sy[i * SPANS + j] = spans[j] / log2(base);
    }
  }
  add_pairs(out, op->op, dtype, "sweep", sx, sy, SWEEP * SPANS);
}

/* Igamma, Igammac, Zeta, Polygamma: random cases, a grid through the
 * range where float converges, and TensorFlow's edges. */
static void special_function_cases(const struct ref_op *op, TF_DataType dtype,
                                   struct ref_cases *out)
{
  ref_cases_binary(op, dtype, out);
  drop_special_values(out);
  enum { G = 12 };
  static const double grid[G] = {0.01, 0.1, 0.5, 1, 1.5, 2,
                                 3.25, 5, 8, 12.5, 20, 30};
  double x[G * G], y[G * G];
  bool zeta = !strcmp(op->op, "Zeta"), polygamma = !strcmp(op->op, "Polygamma");
  for (int i = 0; i < G; i++)
    for (int j = 0; j < G; j++) {
      /* Zeta's order above 1, Polygamma's an integer up to 5. */
      x[i * G + j] = zeta ? 1 + grid[i] : polygamma ? i % 6 : grid[i];
      y[i * G + j] = grid[j];
    }
  add_pairs(out, op->op, dtype, "grid", x, y, G * G);
  if (!strcmp(op->op, "Igamma") || !strcmp(op->op, "Igammac")) {
    static const double a[] = {NAN, 1,  -1, 0, 0, 0,  1, 2,  INFINITY,
                               1,   1e-3, 5, 0.5, 1, 3, 2, 1,  -1, 60};
    static const double v[] = {1, NAN, 1, 1, 0, -1, 0, -1, 1,
                               INFINITY, 1, 5, 0.5, 1e-3, 100, 1e10, -0.0, 0, 50};
    add_pairs(out, op->op, dtype, "edges", a, v, sizeof(a) / sizeof(a[0]));
  }
  if (zeta) {
    static const double s[] = {1, 2, 3,   0.5, NAN, INFINITY, -1, 2, 2,
                               2, 2, 1.5, 2,   3,   2,        4,  3};
    static const double q[] = {1, 1,  1,        1,   1, 1,    1,    0, -1,
                               -1.5, INFINITY, NAN, 1e-3, 0, -2, -2.5, 1e5};
    add_pairs(out, op->op, dtype, "edges", s, q, sizeof(s) / sizeof(s[0]));
  }
  if (polygamma) {
    static const double n[] = {0, 1, 2, 3, 1.5, -1, NAN, INFINITY, 1, 0, 2, 0,
                               4, 1};
    static const double v[] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, -2.5, -2.5,
                               0.25, 1e-3};
    add_pairs(out, op->op, dtype, "edges", n, v, sizeof(n) / sizeof(n[0]));
  }
}

/* TruncateDiv, TruncateMod: every sign combination, MIN / -1, and (int32)
 * a zero divisor, which fails the op as TensorFlow's CPU kernel does. */
static void truncate_cases(const struct ref_op *op, TF_DataType dtype,
                           struct ref_cases *out)
{
  ref_cases_binary(op, dtype, out);
  if (is_float(dtype)) {
    drop_special_values(out);
    static const double x[] = {7, -7, 7, -7, -0.0, INFINITY, 1, 5.5, NAN, 3};
    static const double y[] = {2, 2, -2, 0, 1, 1, INFINITY, -2.5, 1, NAN};
    add_pairs(out, op->op, dtype, "signs", x, y, sizeof(x) / sizeof(x[0]));
    return;
  }
  double min = dtype == TF_INT32 ? -2147483648.0 : -9223372036854775808.0;
  double x[] = {7, -7, 7, -7, 6, -6, 0, 100, min, min};
  double y[] = {2, 2, -2, -2, 3, 3, 5, -7, -1, 3};
  add_pairs(out, op->op, dtype, "signs", x, y, sizeof(x) / sizeof(x[0]));
  static const double zx[] = {7, 1}, zy[] = {0, 1};
  struct ref_case *c = ref_case_add(out, op->op, "%s by zero", op->op);
  int64_t n = 2;
  ref_case_input_values(c, dtype, &n, 1, zx);
  ref_case_input_values(c, dtype, &n, 1, zy);
  /* int64 runs on the device, which (as TensorFlow's GPU kernels) does not
   * check: 0 there. */
  c->expect_code = dtype == TF_INT32 ? TF_INTERNAL : TF_OK;
}

/* ---- ApproximateEqual ------------------------------------------------------ */

static int approx_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *y = &c->inputs[1];
  if (x->rank != y->rank ||
      memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->rank) != 0) {
    snprintf(error, (size_t)error_len, "x and y must be of the same shape");
    return -1;
  }
  float tolerance = (float)ref_case_attr_float_or(c, "tolerance", 1e-5);
  ref_tensor_alloc(&out[0], TF_BOOL, x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++)
    out[0].v[i] = fabsf((float)(x->v[i] - y->v[i])) < tolerance;
  return 1;
}

static void approx_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  static const int64_t shapes[][3] = {{0}, {7}, {3, 5}, {2, 3, 4}};
  static const int ranks[] = {1, 1, 2, 3};
  for (int i = 0; i < 4; i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s shape#%d", op->op, i);
    ref_case_input(c, dtype, shapes[i], ranks[i], REF_ANY);
    c->label[0] ^= 1;
    ref_case_input(c, dtype, shapes[i], ranks[i], REF_ANY);
    c->label[0] ^= 1;
    ref_case_attr_float(c, "tolerance", 2.0f);
  }
  static const double x[] = {1, NAN, INFINITY, 1, 0, -0.0, 1e30, 3};
  static const double y[] = {1.000001, NAN, INFINITY, 1.1, 1e-6, 0, 1e30, 2.99999};
  add_pairs(out, op->op, dtype, "edges", x, y, 8);
  struct ref_case *c = ref_case_add(out, op->op, "%s [3] vs [1]", op->op);
  ref_case_input(c, dtype, (int64_t[]){3}, 1, REF_ANY);
  ref_case_input(c, dtype, (int64_t[]){1}, 1, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- Betainc and ClipByValue ------------------------------------------------ */

/* The continued fraction of I_x(a, b) (modified Lentz), for x below
 * (a + 1) / (a + b + 2), where it converges fast. */
static double beta_fraction(double a, double b, double x)
{
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1), h;
  d = 1 / (fabs(d) < tiny ? tiny : d);
  h = d;
  for (int m = 1; m < 100000; m++) {
    for (int half = 0; half < 2; half++) {
      double step = half == 0
                        ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                        : -(a + m) * (a + b + m) * x /
                              ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + step * d;
      d = 1 / (fabs(d) < tiny ? tiny : d);
      c = 1 + step / c;
      c = fabs(c) < tiny ? tiny : c;
      h *= d * c;
      if (half == 1 && fabs(d * c - 1) < 1e-16)
        return h;
    }
  }
  return h;
}

/* TensorFlow's edges before 2.22 (the host shim reports no version, so the
 * kernel takes these): NaN for a, b <= 0, for x outside [0, 1] and for an
 * infinite a or b inside it. */
static double betainc_ref(double a, double b, double x)
{
  if (isnan(a) || isnan(b) || isnan(x) || a <= 0 || b <= 0)
    return NAN;
  if (x == 0 || x == 1)
    return x;
  if (x < 0 || x > 1 || isinf(a) || isinf(b))
    return NAN;
  double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
                     b * log1p(-x));
  if (x < (a + 1) / (a + b + 2))
    return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

static bool same_shape(const struct ref_tensor *a, const struct ref_tensor *b)
{
  return a->rank == b->rank &&
         !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

static int ternary_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct ref_tensor *in = c->inputs;
  bool clip = !strcmp(c->op, "ClipByValue");
  bool ok = true;
  if (clip) {
    for (int k = 1; k < 3; k++)
      ok = ok && (in[k].rank == 0 || same_shape(&in[0], &in[k]));
  } else {
    static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (int p = 0; p < 3; p++) {
      const struct ref_tensor *u = &in[pairs[p][0]], *w = &in[pairs[p][1]];
      ok = ok && (u->rank == 0 || w->rank == 0 || same_shape(u, w));
    }
  }
  if (!ok) {
    snprintf(error, (size_t)error_len, "inconsistent shapes");
    return -1;
  }
  int shape = 0;
  if (!clip)
    shape = in[2].rank > 0 ? 2 : in[1].rank > 0 ? 1 : 0;
  ref_tensor_alloc(&out[0], in[0].dtype, in[shape].dims, in[shape].rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    double v[3];
    for (int k = 0; k < 3; k++)
      v[k] = in[k].v[in[k].rank == 0 ? 0 : i];
    double r;
    if (clip) {
      double m = v[2] < v[0] ? v[2] : v[0];
      r = m < v[1] ? v[1] : m;
    } else {
      r = betainc_ref(v[0], v[1], v[2]);
    }
    out[0].v[i] = ref_round_to(in[0].dtype, r);
  }
  return 1;
}

static void ternary_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  bool clip = !strcmp(op->op, "ClipByValue");
  /* Which inputs are scalars, per case; the rest are [3, 5] (or [0]). */
  static const bool scalar[][3] = {{0, 0, 0}, {0, 1, 1}, {1, 0, 1},
                                   {1, 1, 0}, {0, 1, 0}, {1, 1, 1}};
  for (size_t s = 0; s < sizeof(scalar) / sizeof(scalar[0]); s++) {
    if (clip && scalar[s][0] && !(scalar[s][1] && scalar[s][2]))
      continue; /* t sets the shape */
    struct ref_case *c = ref_case_add(out, op->op, "%s scalars#%zu", op->op, s);
    for (int k = 0; k < 3; k++) {
      double v[15];
      for (int i = 0; i < 15; i++) {
        double u = ((i * 7 + k * 5 + (int)s) % 15 + 0.5) / 15; /* (0, 1) */
        v[i] = clip ? 6 * u - 3 : k < 2 ? 0.2 + 8 * u * u : u;
      }
      int64_t dims[2] = {3, 5};
      ref_case_input_values(c, dtype, dims, scalar[s][k] ? 0 : 2, v);
    }
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s empty", op->op);
  for (int k = 0; k < 3; k++)
    ref_case_input(c, dtype, (int64_t[]){0}, k == 0 || !clip ? 1 : 0,
                   REF_POSITIVE);
  if (clip) {
    static const double t[] = {NAN, 1, -5, 5, 0, -0.0, 1, 2, 3};
    static const double lo[] = {0, 0, 0, 0, 0, 0, NAN, 2.5, 0};
    static const double hi[] = {1, 1, 1, 1, 1, 1, 0.5, NAN, -1};
    int64_t n = 9;
    c = ref_case_add(out, op->op, "ClipByValue NaN and crossed bounds");
    ref_case_input_values(c, dtype, &n, 1, t);
    ref_case_input_values(c, dtype, &n, 1, lo);
    ref_case_input_values(c, dtype, &n, 1, hi);
    c = ref_case_add(out, op->op, "ClipByValue [3] with a [1] bound");
    ref_case_input(c, dtype, (int64_t[]){3}, 1, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){1}, 1, REF_ANY);
    ref_case_input(c, dtype, NULL, 0, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
    return;
  }
  static const double a[] = {NAN, 1, -1, 0, 1, 1,   1,   1,  2,    0.5,
                             5,   30, 1e-3, INFINITY, 1, 0.5, 20, 0.3, 12};
  static const double b[] = {1,   NAN, 1, 1,   0,   1,  1,    1,  3,   0.5,
                             2,   25, 1e-3, 1, INFINITY, 0.5, 14, 15, 0.7};
  static const double x[] = {0.5, 0.5, 0.5,  0.5,  0.5, NAN, 0, 1,   0.3,
                             0.9, 0.99, 0.6, 0.5, 0.5, 0.5, -0.1, 0.4, 0.01,
                             0.97};
  int64_t n = sizeof(a) / sizeof(a[0]);
  c = ref_case_add(out, op->op, "Betainc edges");
  ref_case_input_values(c, dtype, &n, 1, a);
  ref_case_input_values(c, dtype, &n, 1, b);
  ref_case_input_values(c, dtype, &n, 1, x);
  c = ref_case_add(out, op->op, "Betainc [2] vs [3]");
  ref_case_input(c, dtype, (int64_t[]){2}, 1, REF_POSITIVE);
  ref_case_input(c, dtype, (int64_t[]){3}, 1, REF_POSITIVE);
  ref_case_input(c, dtype, NULL, 0, REF_POSITIVE);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- BiasAdd ------------------------------------------------------------ */

static int bias_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *b = &c->inputs[1];
  bool nchw = !strcmp(ref_case_attr_string_or(c, "data_format", "NHWC"), "NCHW");
  if (x->rank < 2 || b->rank != 1) {
    snprintf(error, (size_t)error_len, "bad ranks");
    return -1;
  }
  int channel_dim = nchw ? 1 : x->rank - 1;
  if (b->dims[0] != x->dims[channel_dim]) {
    snprintf(error, (size_t)error_len, "bias size");
    return -1;
  }
  int64_t inner = 1;
  for (int d = channel_dim + 1; d < x->rank; d++)
    inner *= x->dims[d];
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++) {
    int64_t ch = (i / inner) % b->dims[0];
    out[0].v[i] = ref_round_to(x->dtype, x->v[i] + b->v[ch]);
  }
  return 1;
}

static void bias_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  struct ref_case *c;
  c = ref_case_add(out, op->op, "BiasAdd [5,3]");
  ref_case_input(c, dtype, (int64_t[]){5, 3}, 2, REF_ANY);
  c->label[0] ^= 1;
  ref_case_input(c, dtype, (int64_t[]){3}, 1, REF_ANY);
  c = ref_case_add(out, op->op, "BiasAdd NHWC [2,3,5,7]");
  ref_case_input(c, dtype, (int64_t[]){2, 3, 5, 7}, 4, REF_ANY);
  c->label[0] ^= 1;
  ref_case_input(c, dtype, (int64_t[]){7}, 1, REF_ANY);
  c = ref_case_add(out, op->op, "BiasAdd NCHW [2,7,3,5]");
  ref_case_input(c, dtype, (int64_t[]){2, 7, 3, 5}, 4, REF_ANY);
  c->label[0] ^= 1;
  ref_case_input(c, dtype, (int64_t[]){7}, 1, REF_ANY);
  ref_case_attr_string(c, "data_format", "NCHW");
  c = ref_case_add(out, op->op, "BiasAdd empty [0,4]");
  ref_case_input(c, dtype, (int64_t[]){0, 4}, 2, REF_ANY);
  ref_case_input(c, dtype, (int64_t[]){4}, 1, REF_ANY);
  c = ref_case_add(out, op->op, "BiasAdd wrong bias size");
  ref_case_input(c, dtype, (int64_t[]){5, 3}, 2, REF_ANY);
  ref_case_input(c, dtype, (int64_t[]){4}, 1, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "BiasAdd 1-D input");
  ref_case_input(c, dtype, (int64_t[]){3}, 1, REF_ANY);
  ref_case_input(c, dtype, (int64_t[]){3}, 1, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* ---- AddN --------------------------------------------------------------- */

static int addn_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  for (int k = 1; k < c->num_inputs; k++) {
    if (c->inputs[k].rank != x->rank ||
        memcmp(c->inputs[k].dims, x->dims, sizeof(int64_t) * (size_t)x->rank)) {
      snprintf(error, (size_t)error_len, "shapes differ");
      return -1;
    }
  }
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++) {
    double sum = x->v[i];
    /* The device adds in input order, rounding after each add. */
    for (int k = 1; k < c->num_inputs; k++)
      sum = ref_round_to(x->dtype, sum + c->inputs[k].v[i]);
    out[0].v[i] = ref_round_to(x->dtype, sum);
  }
  return 1;
}

static void addn_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  static const int counts[] = {1, 2, 3, 5};
  for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
    struct ref_case *c = ref_case_add(out, op->op, "AddN x%d", counts[k]);
    for (int i = 0; i < counts[k]; i++) {
      c->label[0] = (char)('A' + i); /* a different generator per input */
      ref_case_input(c, dtype, (int64_t[]){3, 1031}, 2, REF_ANY);
    }
    snprintf(c->label, sizeof(c->label), "AddN x%d", counts[k]);
  }
  struct ref_case *c = ref_case_add(out, op->op, "AddN empty");
  ref_case_input(c, dtype, (int64_t[]){0, 3}, 2, REF_ANY);
  ref_case_input(c, dtype, (int64_t[]){0, 3}, 2, REF_ANY);
  c = ref_case_add(out, op->op, "AddN shape mismatch");
  ref_case_input(c, dtype, (int64_t[]){2, 3}, 2, REF_ANY);
  ref_case_input(c, dtype, (int64_t[]){3, 2}, 2, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* For other references that compose these ops (ref_fused.c). */
double ref_binary_value(const char *op, TF_DataType dtype, double a, double b)
{
  const struct binary_ref *r = binary_ref_of(op);
  return r != NULL ? r->fn(dtype, a, b) : NAN;
}

/* binary.def's REF column: rtol, atol. One rounding for +, -, *, /; the
 * OpenCL built-ins (pow, atan2, log, log1p) may be off by a few ulp (half:
 * widened by the ops suite); comparisons, logical ops and every integer op
 * are exact. */
#define TOL_EXACT 0.0, 0.0
#define TOL_ROUNDED 1e-6, 1e-30
#define TOL_BUILTIN 4e-6, 1e-30
#define TOL_FLOOR_MOD 1e-6, 1e-6
/* Cephes' float algorithms: peak relative errors 7.8e-6 (igam, igamc)
 * and 6.9e-7 (zeta), through pow (16 ulp), exp and lgamma; the absolute
 * bound takes 1 - P near 0 and digamma near its zero. */
#define TOL_IGAMMA 2e-5, 2e-6
#define TOL_ZETA 1e-5, 1e-30
#define TOL_POLYGAMMA 2e-5, 1e-5

/* On double, a few ulp of double (2^-52 = 2.2e-16) by the same reasoning:
 * one rounding; the built-ins' double bounds (pow 16 ulp) composed with a
 * rounding, ~36 ulp as for float; FloorMod's r + b one rounding of b's
 * size. The rows whose TYPES have no double have none. */
#define DOUBLE_EXACT 0.0, 0.0
#define DOUBLE_ROUNDED 1e-15, 1e-300
#define DOUBLE_BUILTIN 8e-15, 1e-300
#define DOUBLE_FLOOR_MOD 1e-15, 1e-15
/* Cephes' zeta in double: pow's 16 ulp per term and the tail's roundings;
 * Polygamma through exp(lgamma), which OpenCL does not bound, and near
 * digamma's zero an absolute bound. */
#define DOUBLE_ZETA 1e-13, 1e-300
#define DOUBLE_IGAMMA 1e-12, 1e-13
#define DOUBLE_POLYGAMMA 1e-12, 1e-13

/* binary.def's CASES column. */
#define CASES_RANDOM ref_cases_binary
#define CASES_FLOOR floor_cases
#define CASES_SPECIAL_VALUES special_cases
#define CASES_SHIFT shift_cases
#define CASES_TRUNCATE truncate_cases
#define CASES_SPECIAL_FUNCTION special_function_cases
#define CASES_POWER power_cases

#define REF_ROW(NAME, REF, DOMAIN, CASES) \
  {#NAME, TOL_##REF, REF_##DOMAIN, CASES_##CASES, binary_compute},

const struct ref_op ref_ops_binary[] = {
#define BINARY_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN, CASES,  \
                  MATH, INT_MATH)                                            \
  REF_ROW(NAME, REF, DOMAIN, CASES)
#define BINARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,   \
                        CASES, MATH, INT_MATH, ENUM, OPCODE, FUSED_TEXT,     \
                        FUSED_TYPES, COST)                                   \
  REF_ROW(NAME, REF, DOMAIN, CASES)
#define BINARY_ALIAS(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,      \
                     CASES, ENUM)                                            \
  REF_ROW(NAME, REF, DOMAIN, CASES)
#include "../../kernels/binary.def"
    {"ApproximateEqual", TOL_EXACT, REF_ANY, approx_cases, approx_compute},
    /* Cephes' float incbet: peak 3.7e-5 relative and 2.2e-5 absolute for
     * a, b up to 30 (its own documentation). */
    {"Betainc", 5e-5, 3e-5, REF_POSITIVE, ternary_cases, ternary_compute},
    {"ClipByValue", TOL_EXACT, REF_ANY, ternary_cases, ternary_compute},
    {"BiasAdd", TOL_ROUNDED, REF_ANY, bias_cases, bias_compute},
    {"AddN", TOL_ROUNDED, REF_ANY, addn_cases, addn_compute},
    {.op = NULL},
};

/* By TYPES: a row with double gets its REF kind's double tolerance. */
#define DOUBLE_ROW(NAME, ...) {#NAME, __VA_ARGS__},
#define DOUBLE_ROW_FLOATS DOUBLE_ROW
#define DOUBLE_ROW_FLOAT_DOUBLE DOUBLE_ROW
#define DOUBLE_ROW_FLOAT_DOUBLE_INTEGERS DOUBLE_ROW
#define DOUBLE_ROW_NUMBERS DOUBLE_ROW
#define DOUBLE_ROW_NUMBERS_BOOL DOUBLE_ROW
#define DOUBLE_ROW_INTEGERS(NAME, ...)
#define DOUBLE_ROW_BOOL(NAME, ...)

const struct ref_double_tolerance ref_double_tolerances_binary[] = {
#define BINARY_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN, CASES, \
                  MATH, INT_MATH) \
  DOUBLE_ROW_##TYPES(NAME, DOUBLE_##REF)
#define BINARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN, \
                        CASES, MATH, INT_MATH, ENUM, OPCODE, FUSED_TEXT, \
                        FUSED_TYPES, COST) \
  DOUBLE_ROW_##TYPES(NAME, DOUBLE_##REF)
#define BINARY_ALIAS(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN, CASES, \
                     ENUM) \
  DOUBLE_ROW_##TYPES(NAME, DOUBLE_##REF)
#include "../../kernels/binary.def"
    /* Cephes' double incbet: its continued fractions and series to
     * double's epsilon, through lgamma and pow. */
    {"Betainc", 1e-12, 1e-13},
    {"ClipByValue", DOUBLE_EXACT},
    {"BiasAdd", DOUBLE_ROUNDED},
    {"AddN", DOUBLE_ROUNDED},
    {.op = NULL},
};
