/* Host references of the complex family (kernels/complex.c): Complex,
 * Real, Imag, Conj, ComplexAbs, Angle, and the complex64/complex128
 * kernels of AddV2, Sub, Mul, RealDiv, Neg, Square and Exp, which
 * ref_op_find_typed picks over the binary and unary families' rows for
 * complex dtypes.
 *
 * Each element is computed in long double with the formula TensorFlow's
 * CPU kernels run (Eigen's schoolbook product, scaled division and complex
 * exp, hypot, atan2), then rounded once to the output type: the same NaN
 * and infinity patterns as the device, and a check of its rounding. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

typedef long double wide_t;

struct wide_complex {
  wide_t re, im;
};

static struct wide_complex complex_mul(struct wide_complex a,
                                       struct wide_complex b)
{
  return (struct wide_complex){a.re * b.re - a.im * b.im,
                               a.re * b.im + a.im * b.re};
}

/* Eigen's pdiv_complex: divisor scaled by the larger magnitude of its
 * parts. */
static struct wide_complex complex_div(struct wide_complex a,
                                       struct wide_complex b)
{
  wide_t scale = fmaxl(fabsl(b.re), fabsl(b.im));
  wide_t b_re = b.re / scale, b_im = b.im / scale;
  wide_t denominator = b_re * b_re + b_im * b_im;
  return (
      struct wide_complex){(a.re * b_re + a.im * b_im) / denominator / scale,
                           (a.im * b_re - a.re * b_im) / denominator / scale};
}

static TF_DataType real_type_of(TF_DataType dtype)
{
  return dtype == TF_COMPLEX128 ? TF_DOUBLE : TF_FLOAT;
}

static struct wide_complex element(const struct ref_tensor *t, int64_t i)
{
  return (struct wide_complex){t->v[2 * i], t->v[2 * i + 1]};
}

static void store(struct ref_tensor *t, int64_t i, struct wide_complex v)
{
  t->v[2 * i] = ref_round_to(t->dtype, (double)v.re);
  t->v[2 * i + 1] = ref_round_to(t->dtype, (double)v.im);
}

/* ---- Binary ops -------------------------------------------------------- */

static struct wide_complex binary_value(const char *op, struct wide_complex a,
                                        struct wide_complex b)
{
  if (strcmp(op, "AddV2") == 0)
    return (struct wide_complex){a.re + b.re, a.im + b.im};
  if (strcmp(op, "Sub") == 0)
    return (struct wide_complex){a.re - b.re, a.im - b.im};
  if (strcmp(op, "Mul") == 0)
    return complex_mul(a, b);
  return complex_div(a, b);
}

static int binary_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *y = &c->inputs[1];
  int64_t dims[REF_MAX_DIMS];
  int rank;
  if (!ref_broadcast_shape(x, y, dims, &rank)) {
    snprintf(error, (size_t)error_len, "Incompatible shapes");
    return -1;
  }
  bool make = strcmp(c->op, "Complex") == 0;
  TF_DataType out_type = !make                   ? x->dtype
                         : x->dtype == TF_DOUBLE ? TF_COMPLEX128
                                                 : TF_COMPLEX64;
  ref_tensor_alloc(&out[0], out_type, dims, rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    int64_t xi, yi;
    ref_broadcast_index(x, y, dims, rank, i, &xi, &yi);
    if (make)
      store(&out[0], i, (struct wide_complex){x->v[xi], y->v[yi]});
    else
      store(&out[0], i, binary_value(c->op, element(x, xi), element(y, yi)));
  }
  return 1;
}

/* |a| in double: hypot's C99 rule (infinite where a part is, even beside a
 * NaN) holds there under valgrind too, whose x87 emulation (long double
 * computed as double) makes hypotl return NaN for it. */
static wide_t complex_abs(struct wide_complex a)
{
  return hypot((double)a.re, (double)a.im);
}

/* Eigen's pexp_complex, as complex.cl's c_exp; in double, as complex_abs
 * and for its reason (valgrind's expl(inf) is NaN). */
static struct wide_complex complex_exp(struct wide_complex a)
{
  double x = (double)a.re, y = (double)a.im;
  double e = exp(x);
  if (y == 0)
    return (struct wide_complex){e, y};
  double c = cos(y), s = sin(y);
  if (isinf(x) && isnan(c))
    return x < 0 ? (struct wide_complex){0, 0}
                 : (struct wide_complex){copysign(e, y), NAN};
  if (isinf(e) && isfinite(y)) {
    c = copysign(1, c);
    s = copysign(1, s);
  }
  return (struct wide_complex){(wide_t)e * c, (wide_t)e * s};
}

/* ---- Unary ops --------------------------------------------------------- */

static int unary_compute(const struct ref_case *c, struct ref_tensor *out,
                         char *error, int error_len)
{
  (void)error;
  (void)error_len;
  const struct ref_tensor *x = &c->inputs[0];
  bool to_real = strcmp(c->op, "Real") == 0 || strcmp(c->op, "Imag") == 0 ||
                 strcmp(c->op, "ComplexAbs") == 0 ||
                 strcmp(c->op, "Angle") == 0;
  ref_tensor_alloc(&out[0], to_real ? real_type_of(x->dtype) : x->dtype,
                   x->dims, x->rank);
  for (int64_t i = 0; i < x->elements; i++) {
    struct wide_complex a = element(x, i);
    if (!to_real) {
      struct wide_complex v =
          strcmp(c->op, "Neg") == 0    ? (struct wide_complex){-a.re, -a.im}
          : strcmp(c->op, "Conj") == 0 ? (struct wide_complex){a.re, -a.im}
          : strcmp(c->op, "Exp") == 0  ? complex_exp(a)
                                       : complex_mul(a, a);
      store(&out[0], i, v);
      continue;
    }
    wide_t v = strcmp(c->op, "Real") == 0         ? a.re
               : strcmp(c->op, "Imag") == 0       ? a.im
               : strcmp(c->op, "ComplexAbs") == 0 ? complex_abs(a)
                                                  : atan2l(a.im, a.re);
    out[0].v[i] = ref_round_to(out[0].dtype, (double)v);
  }
  return 1;
}

/* ---- Cases ------------------------------------------------------------- */

/* Parts of the special values: signed zeros, infinities, NaN, and
 * magnitudes far from 1. Products of two parts stay within float's range
 * (1e18 squared is 1e36): where float overflows and long double does not,
 * the NaN of inf - inf would be the reference's 0. */
static const double product_parts[] = {0.0,       -0.0, 1.0,  -2.5,  INFINITY,
                                       -INFINITY, NAN,  1e18, -1e-18};
/* Sums, quotients (the divisor's parts are scaled to at most 1 before any
 * product) and the unary ops take float's extremes. The divisor's parts
 * never pair 1e30 with a part that would underflow once scaled by it. */
static const double wide_parts[] = {0.0,       -0.0, 1.0,  -2.5, INFINITY,
                                    -INFINITY, NAN,  1e30, -3e-3};
#define NUM_PARTS 9
_Static_assert(sizeof(product_parts) / sizeof(product_parts[0]) == NUM_PARTS,
               "product_parts");
_Static_assert(sizeof(wide_parts) / sizeof(wide_parts[0]) == NUM_PARTS,
               "wide_parts");
/* Every (real, imaginary) pair of the parts. */
#define NUM_SPECIAL_COMPLEX (NUM_PARTS * NUM_PARTS)

static const double *parts_for(const char *op)
{
  return strcmp(op, "Mul") == 0 || strcmp(op, "Square") == 0 ? product_parts
                                                             : wide_parts;
}

static void special_complex(const double *parts, int64_t k, double *re,
                            double *im)
{
  *re = parts[k / NUM_PARTS];
  *im = parts[k % NUM_PARTS];
}

/* The most collapsed dims a kernel takes: 8 that alternate between the
 * sides, so none merge. */
static void add_alternating_case(const struct ref_op *op, TF_DataType dtype,
                                 struct ref_cases *out)
{
  int64_t x_dims[8], y_dims[8];
  for (int d = 0; d < 8; d++) {
    x_dims[d] = d % 2 == 0 ? 2 : 1;
    y_dims[d] = d % 2 == 0 ? 1 : 3;
  }
  struct ref_case *c = ref_case_add(out, op->op, "%s alternating", op->op);
  ref_case_input(c, dtype, x_dims, 8, op->domain);
  c->label[0] ^= 1;
  ref_case_input(c, dtype, y_dims, 8, op->domain);
  c->label[0] ^= 1;
}

static void binary_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  ref_cases_binary(op, dtype, out);
  add_alternating_case(op, dtype, out);
  /* A larger row broadcast: many work-groups, a ragged last one. */
  struct ref_case *c = ref_case_add(out, op->op, "%s rows", op->op);
  ref_case_input(c, dtype, (int64_t[]){67, 129}, 2, op->domain);
  c->label[0] ^= 1;
  ref_case_input(c, dtype, (int64_t[]){129}, 1, op->domain);
  c->label[0] ^= 1;

  /* Every special value against every other. */
  const double *parts = parts_for(op->op);
  static double x[NUM_SPECIAL_COMPLEX * NUM_SPECIAL_COMPLEX * 2];
  static double y[NUM_SPECIAL_COMPLEX * NUM_SPECIAL_COMPLEX * 2];
  for (int64_t i = 0; i < NUM_SPECIAL_COMPLEX; i++)
    for (int64_t j = 0; j < NUM_SPECIAL_COMPLEX; j++) {
      int64_t at = 2 * (i * NUM_SPECIAL_COMPLEX + j);
      special_complex(parts, i, &x[at], &x[at + 1]);
      special_complex(parts, j, &y[at], &y[at + 1]);
    }
  int64_t dims[2] = {NUM_SPECIAL_COMPLEX, NUM_SPECIAL_COMPLEX};
  c = ref_case_add(out, op->op, "%s special values", op->op);
  ref_case_input_values(c, dtype, dims, 2, x);
  ref_case_input_values(c, dtype, dims, 2, y);

  if (strcmp(op->op, "RealDiv") != 0)
    return;
  /* Quotients of order 1 whose divisor's |b|^2 overflows or underflows
   * float: without the scaling these are NaN or 0. Then a quotient that
   * overflows, and divisors of float's smallest normal magnitudes. */
  static const double numerators[] = {
      1e30, 1e30, 1e-30, 2e-30, 1,    1,    3e38, 3e38, 1e-37, 4e-38,
      1,    -1,   -2e30, 5e30,  1e20, 1e20, 1,    1,    2.5,   -1.5,
  };
  static const double divisors[] = {
      1e30,  2e30,  3e-30, -1e-30, 1e30,  1e30, 1e-10, 1e-10,  2e-37, 2e-38,
      1e-37, 1e-37, 3e30,  4e30,   -1e20, 1e20, 1e-20, -1e-20, 0,     -2.0,
  };
  int64_t n = sizeof(numerators) / sizeof(numerators[0]) / 2;
  c = ref_case_add(out, op->op, "%s scaled divisors", op->op);
  ref_case_input_values(c, dtype, &n, 1, numerators);
  ref_case_input_values(c, dtype, &n, 1, divisors);
}

/* Tout of the cases from `first` on, where the op has it: its default
 * (float, complex64) would not match a double or complex128 kernel when a
 * case runs alone (tfocl run). */
static void set_tout(struct ref_cases *out, int first, TF_DataType tout)
{
  for (int i = first; i < out->count; i++)
    ref_case_attr_type(&out->items[i], "Tout", tout);
}

static void make_complex_cases(const struct ref_op *op, TF_DataType dtype,
                               struct ref_cases *out)
{
  int first = out->count;
  ref_cases_binary(op, dtype, out);
  add_alternating_case(op, dtype, out);
  /* Complex(1.0, y): the scalar real part of tf.complex(1.0, y). */
  struct ref_case *c = ref_case_add(out, op->op, "%s scalar real", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){1}, 0, (const double[]){1.0});
  ref_case_input(c, dtype, (int64_t[]){4, 33}, 2, op->domain);
  set_tout(out, first, dtype == TF_DOUBLE ? TF_COMPLEX128 : TF_COMPLEX64);
}

static void unary_cases_untyped(const struct ref_op *op, TF_DataType dtype,
                                struct ref_cases *out)
{
  ref_cases_unary(op, dtype, out);
  const double *parts = parts_for(op->op);
  double values[NUM_SPECIAL_COMPLEX * 2];
  for (int64_t k = 0; k < NUM_SPECIAL_COMPLEX; k++)
    special_complex(parts, k, &values[2 * k], &values[2 * k + 1]);
  int64_t n = NUM_SPECIAL_COMPLEX;
  struct ref_case *c = ref_case_add(out, op->op, "%s special values", op->op);
  ref_case_input_values(c, dtype, &n, 1, values);
  /* Square of these overflows float where long double does not. */
  if (strcmp(op->op, "Square") == 0)
    return;
  if (strcmp(op->op, "Exp") == 0) {
    /* exp(x) beyond float's and double's range, and below it: the parts
     * keep only their signs, or vanish. */
    static const double exponents[] = {80,  1,    100,  1, -100, -2.5,
                                       750, -2.5, -750, 1, 100,  3e-3};
    n = sizeof(exponents) / sizeof(exponents[0]) / 2;
    c = ref_case_add(out, op->op, "%s overflow", op->op);
    ref_case_input_values(c, dtype, &n, 1, exponents);
  }
  /* |z| of parts near float's limits: hypot neither overflows nor loses
   * the small part. */
  static const double extremes[] = {3e38,  3e38,   3e38,  1e-30, 1e-37, 1e-37,
                                    3e-38, -4e-38, -1e38, 1e30,  2e-30, 1};
  n = sizeof(extremes) / sizeof(extremes[0]) / 2;
  c = ref_case_add(out, op->op, "%s extremes", op->op);
  ref_case_input_values(c, dtype, &n, 1, extremes);
}

static void unary_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  int first = out->count;
  unary_cases_untyped(op, dtype, out);
  if (strcmp(op->op, "Real") == 0 || strcmp(op->op, "Imag") == 0 ||
      strcmp(op->op, "ComplexAbs") == 0 || strcmp(op->op, "Angle") == 0)
    set_tout(out, first, real_type_of(dtype));
}

/* Tolerances are float32's: sums and parts round once (exact after the
 * reference's rounding), products and quotients a few times, and a part
 * may cancel to near zero (atol). */
const struct ref_op ref_ops_complex[] = {
    {"Complex", 0.0, 0.0, REF_ANY, make_complex_cases, binary_compute},
    {"Real", 0.0, 0.0, REF_ANY, unary_cases, unary_compute},
    {"Imag", 0.0, 0.0, REF_ANY, unary_cases, unary_compute},
    {"Conj", 0.0, 0.0, REF_ANY, unary_cases, unary_compute},
    {"ComplexAbs", 1e-6, 0.0, REF_ANY, unary_cases, unary_compute},
    {"Angle", 1e-6, 1e-6, REF_ANY, unary_cases, unary_compute},
    {.op = NULL},
};

/* The complex kernels of ops whose other kernels the binary and unary
 * families test (ref_op_find_typed). */
const struct ref_op ref_ops_complex_overloads[] = {
    {"AddV2", 1e-7, 0.0, REF_ANY, binary_cases, binary_compute},
    {"Sub", 1e-7, 0.0, REF_ANY, binary_cases, binary_compute},
    {"Mul", 1e-6, 1e-5, REF_ANY, binary_cases, binary_compute},
    {"RealDiv", 1e-5, 1e-5, REF_NONZERO, binary_cases, binary_compute},
    {"Neg", 0.0, 0.0, REF_ANY, unary_cases, unary_compute},
    {"Square", 1e-6, 1e-5, REF_ANY, unary_cases, unary_compute},
    /* exp, sin and cos within a few ulps each on the device. */
    {"Exp", 2e-6, 1e-6, REF_ANY, unary_cases, unary_compute},
    {.op = NULL},
};
