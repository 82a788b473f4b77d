/* References of the binary kernel family: element-wise binary ops with
 * broadcasting, BiasAdd and AddN.
 *
 * Tolerances (float32): one rounding for +, -, *, / (rtol 1e-6); pow and
 * the OpenCL built-ins it uses may be off by a few ulp (rtol 4e-6);
 * comparisons, logical ops and every integer op are exact. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

static bool is_float(TF_DataType t) { return t == TF_FLOAT || t == TF_HALF; }

static double apply(const char *op, TF_DataType dtype, double a, double b)
{
  bool flt = is_float(dtype);
  if (!strcmp(op, "AddV2") || !strcmp(op, "Add") || !strcmp(op, "BiasAdd") ||
      !strcmp(op, "AddN"))
    return a + b;
  if (!strcmp(op, "Sub"))
    return a - b;
  if (!strcmp(op, "Mul"))
    return a * b;
  if (!strcmp(op, "RealDiv"))
    return a / b;
  if (!strcmp(op, "DivNoNan"))
    return b == 0 ? 0 : a / b;
  if (!strcmp(op, "Maximum"))
    return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b);
  if (!strcmp(op, "Minimum"))
    return isnan(a) ? a : isnan(b) ? b : (a < b ? a : b);
  if (!strcmp(op, "Pow"))
    return pow(a, b);
  if (!strcmp(op, "SquaredDifference"))
    return (a - b) * (a - b);
  if (!strcmp(op, "FloorDiv")) {
    /* The quotient is rounded to float before the floor, as the device and
     * TensorFlow's CPU kernel both compute it. */
    return flt ? floor(ref_round_to(TF_FLOAT, a / b)) : floor(a / b);
  }
  if (!strcmp(op, "FloorMod")) {
    double r = fmod(a, b);
    return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
  }
  if (!strcmp(op, "Equal"))
    return a == b;
  if (!strcmp(op, "NotEqual"))
    return a != b;
  if (!strcmp(op, "Less"))
    return a < b;
  if (!strcmp(op, "LessEqual"))
    return a <= b;
  if (!strcmp(op, "Greater"))
    return a > b;
  if (!strcmp(op, "GreaterEqual"))
    return a >= b;
  if (!strcmp(op, "LogicalAnd"))
    return a != 0 && b != 0;
  if (!strcmp(op, "LogicalOr"))
    return a != 0 || b != 0;
  if (!strcmp(op, "BitwiseAnd"))
    return (double)((int64_t)a & (int64_t)b);
  if (!strcmp(op, "BitwiseOr"))
    return (double)((int64_t)a | (int64_t)b);
  if (!strcmp(op, "BitwiseXor"))
    return (double)((int64_t)a ^ (int64_t)b);
  if (!strcmp(op, "LeftShift") || !strcmp(op, "RightShift")) {
    int bits = dtype == TF_INT32 ? 32 : 64;
    int64_t s = (int64_t)b < 0 ? 0 : (int64_t)b > bits - 1 ? bits - 1 : (int64_t)b;
    int64_t x = (int64_t)a;
    if (!strcmp(op, "RightShift")) /* arithmetic: floor(x / 2^s) */
      return floor((double)x / ldexp(1.0, (int)s));
    uint64_t u = (uint64_t)x << s;
    return bits == 32 ? (double)(int32_t)(uint32_t)u : (double)(int64_t)u;
  }
  if (!strcmp(op, "Atan2"))
    return atan2(a, b);
  if (!strcmp(op, "Xlogy"))
    return a == 0 ? 0 : a * log(b);
  if (!strcmp(op, "Xdivy"))
    return a == 0 ? 0 : a / b;
  if (!strcmp(op, "Xlog1py"))
    return a == 0 ? 0 : a * log1p(b);
  if (!strcmp(op, "NextAfter")) /* in float32, the only dtype it takes */
    return nextafterf((float)a, (float)b);
  return NAN;
}

static bool bool_output(const char *op)
{
  static const char *const names[] = {"Equal",   "NotEqual",     "Less",
                                      "LessEqual", "Greater",    "GreaterEqual",
                                      "LogicalAnd", "LogicalOr"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!strcmp(op, names[i]))
      return true;
  return false;
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
  TF_DataType out_type = bool_output(c->op) ? TF_BOOL : x->dtype;
  ref_tensor_alloc(&out[0], out_type, dims, rank);
  for (int64_t i = 0; i < out[0].elements; i++) {
    int64_t xi, yi;
    ref_broadcast_index(x, y, dims, rank, i, &xi, &yi);
    out[0].v[i] = ref_round_to(out_type, apply(c->op, x->dtype, x->v[xi], y->v[yi]));
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
  return apply(op, dtype, a, b);
}

#define EXACT 0.0, 0.0
#define ROUNDED 1e-6, 1e-30

const struct ref_op ref_ops_binary[] = {
    {"AddV2", ROUNDED, REF_ANY, ref_cases_binary, binary_compute},
    {"Add", ROUNDED, REF_ANY, ref_cases_binary, binary_compute},
    {"Sub", ROUNDED, REF_ANY, ref_cases_binary, binary_compute},
    {"Mul", ROUNDED, REF_ANY, ref_cases_binary, binary_compute},
    {"RealDiv", ROUNDED, REF_NONZERO, ref_cases_binary, binary_compute},
    {"DivNoNan", ROUNDED, REF_ANY, ref_cases_binary, binary_compute},
    {"Maximum", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"Minimum", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"Pow", 4e-6, 1e-30, REF_POSITIVE, ref_cases_binary, binary_compute},
    {"SquaredDifference", ROUNDED, REF_ANY, ref_cases_binary, binary_compute},
    {"FloorDiv", EXACT, REF_NONZERO, floor_cases, binary_compute},
    {"FloorMod", 1e-6, 1e-6, REF_NONZERO, floor_cases, binary_compute},
    {"Equal", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"NotEqual", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"Less", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"LessEqual", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"Greater", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"GreaterEqual", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"LogicalAnd", EXACT, REF_BOOL, ref_cases_binary, binary_compute},
    {"LogicalOr", EXACT, REF_BOOL, ref_cases_binary, binary_compute},
    {"BitwiseAnd", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"BitwiseOr", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    {"BitwiseXor", EXACT, REF_ANY, ref_cases_binary, binary_compute},
    /* Built-ins of a few ulp (half: widened by the ops suite). */
    {"Atan2", 4e-6, 1e-30, REF_ANY, special_cases, binary_compute},
    {"Xlogy", 4e-6, 1e-30, REF_POSITIVE, special_cases, binary_compute},
    {"Xdivy", ROUNDED, REF_NONZERO, special_cases, binary_compute},
    {"Xlog1py", 4e-6, 1e-30, REF_POSITIVE, special_cases, binary_compute},
    {"NextAfter", EXACT, REF_ANY, special_cases, binary_compute},
    {"LeftShift", EXACT, REF_ANY, shift_cases, binary_compute},
    {"RightShift", EXACT, REF_ANY, shift_cases, binary_compute},
    {"BiasAdd", ROUNDED, REF_ANY, bias_cases, bias_compute},
    {"AddN", ROUNDED, REF_ANY, addn_cases, addn_compute},
    {.op = NULL},
};
