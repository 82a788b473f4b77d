/* Resource variables on the device: AssignAdd/Sub/AssignVariableOp and the
 * optimizers (ResourceApplyGradientDescent, ResourceApplyMomentum,
 * ResourceApplyAdam) through the host shim's variables, step by step
 * against float64 host computations of TensorFlow's formulas, plus
 * TensorFlow's errors, copy on write and lock ordering.
 *
 * Tolerances (|got - want| <= atol + rtol * |want|, per step, from the
 * device's previous state so errors do not accumulate): float 1e-5 relative
 * + 1e-6 absolute (float32 arithmetic of a few operations); half 2e-3 + 2e-3
 * (computed in float, stored as half: one half ulp, plus m and v of Adam
 * rounded to half); bfloat16 4e-3 + 4e-3 (one bfloat16 ulp is 2^-8 relative);
 * double 1e-14; integers exact, wrapping around as TensorFlow's do.
 *
 * With TFOCL_HIDE_TF_EXPERIMENTAL=1 (the meson test
 * ops-variables-no-experimental) the plugin sees a TensorFlow without
 * kernels_experimental.h, as the 2.20/2.21 wheels: AssignAddVariableOp must
 * still be registered and fail with UNIMPLEMENTED naming the problem, and
 * no ResourceApply* kernel may be registered. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "tfocl/host.h"

static struct tfocl_plugin *plugin;
static struct tfocl_device *device;

#define MAX_N 1100

#define ck_assert_code(st, code)                                           \
  ck_assert_msg(TF_GetCode(st) == (code), "expected code %d, got %d: %s", \
                (int)(code), (int)TF_GetCode(st), TF_Message(st))
#define ck_assert_has(st, needle)                                          \
  ck_assert_msg(strstr(TF_Message(st), (needle)) != NULL,                  \
                "message \"%s\" lacks \"%s\"", TF_Message(st), (needle))

/* ---- helpers ------------------------------------------------------------ */

static TF_Tensor *host_tensor(TF_DataType dtype, const int64_t *dims,
                              int rank, const double *values)
{
  struct ref_tensor t;
  TF_Status *st = TF_NewStatus();
  ck_assert(ref_tensor_alloc(&t, dtype, dims, rank));
  for (int64_t i = 0; i < t.elements; i++)
    t.v[i] = values[i];
  TF_Tensor *r = ref_tensor_to_tf(&t, st);
  ck_assert_msg(r != NULL, "%s", TF_Message(st));
  ref_tensor_finish(&t);
  TF_DeleteStatus(st);
  return r;
}

static TF_Tensor *host_scalar(TF_DataType dtype, double v)
{
  return host_tensor(dtype, NULL, 0, &v);
}

/* Random values in [lo, hi), deterministic per seed, rounded to dtype. */
static bool is_integer(TF_DataType dtype)
{
  switch (dtype) {
  case TF_INT8: case TF_UINT8: case TF_INT16: case TF_UINT16:
  case TF_INT32: case TF_UINT32: case TF_INT64: case TF_UINT64:
    return true;
  default:
    return false;
  }
}

static bool is_unsigned(TF_DataType dtype)
{
  return dtype == TF_UINT8 || dtype == TF_UINT16 || dtype == TF_UINT32 ||
         dtype == TF_UINT64;
}

static void fill(double *v, int64_t n, TF_DataType dtype, unsigned seed,
                 double lo, double hi)
{
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    double u = (double)((seed >> 8) & 0xffff) / 65536.0;
    v[i] = lo + (hi - lo) * u;
    if (is_integer(dtype))
      v[i] = floor(v[i]);
    v[i] = ref_round_to(dtype, v[i]);
  }
}

/* The variable's value as doubles (n elements). */
static void read_var(const TF_Tensor *handle, double *out, int64_t n)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *h = tfocl_variable_read(handle, st);
  ck_assert_msg(h != NULL, "%s", TF_Message(st));
  struct ref_tensor t;
  ck_assert(ref_tensor_from_tf(&t, h));
  ck_assert_int_eq(t.elements, n);
  memcpy(out, t.v, sizeof(double) * (size_t)n);
  ref_tensor_finish(&t);
  TF_DeleteTensor(h);
  TF_DeleteStatus(st);
}

static TF_Tensor *new_var(TF_DataType dtype, const int64_t *dims, int rank,
                          const double *values)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *h = host_tensor(dtype, dims, rank, values);
  TF_Tensor *var = tfocl_variable_create(device, h, st);
  ck_assert_msg(var != NULL, "%s", TF_Message(st));
  TF_DeleteTensor(h);
  TF_DeleteStatus(st);
  return var;
}

static void tolerance(TF_DataType dtype, double *rtol, double *atol)
{
  switch (dtype) {
  case TF_HALF: *rtol = 2e-3; *atol = 2e-3; break;
  case TF_BFLOAT16: *rtol = 4e-3; *atol = 4e-3; break;
  case TF_FLOAT: *rtol = 1e-5; *atol = 1e-6; break;
  case TF_DOUBLE: *rtol = 1e-14; *atol = 1e-14; break;
  default: *rtol = 0; *atol = 0; break;
  }
}

static void expect_close(const char *what, TF_DataType dtype, const double *got,
                         const double *want, int64_t n)
{
  double rtol, atol;
  tolerance(dtype, &rtol, &atol);
  for (int64_t i = 0; i < n; i++) {
    double w = ref_round_to(dtype, want[i]);
    ck_assert_msg(fabs(got[i] - w) <= atol + rtol * fabs(w),
                  "%s [%s] element %lld: got %.9g, want %.9g", what,
                  tfocl_type_name(dtype), (long long)i, got[i], w);
  }
}

/* Runs an op without outputs; returns its status code (message in st). */
static TF_Code run(const char *op, const struct tfocl_attr *attrs,
                   int num_attrs, TF_Tensor *const *inputs, int num_inputs,
                   TF_Status *st)
{
  tfocl_run_op(device, op, attrs, num_attrs, inputs, num_inputs, NULL, 0,
               NULL, st);
  return TF_GetCode(st);
}

static bool registered(const char *op)
{
  int n = tfocl_kernel_count();
  for (int i = 0; i < n; i++) {
    struct tfocl_kernel_info info;
    if (tfocl_kernel_get(i, &info) && strcmp(info.op_name, op) == 0 &&
        strcmp(info.device_type, "OPENCL") == 0)
      return true;
  }
  return false;
}

/* Whether `op` has an OPENCL kernel whose first type constraint allows
 * dtype. */
static bool registered_for(const char *op, TF_DataType dtype)
{
  int n = tfocl_kernel_count();
  for (int i = 0; i < n; i++) {
    struct tfocl_kernel_info info;
    if (!tfocl_kernel_get(i, &info) || strcmp(info.op_name, op) != 0 ||
        strcmp(info.device_type, "OPENCL") != 0 || info.num_constraints < 1)
      continue;
    for (int t = 0; t < info.constraints[0].num_types; t++)
      if (info.constraints[0].types[t] == dtype)
        return true;
  }
  return false;
}

/* ---- AssignAdd / AssignSub / AssignVariableOp ---------------------------- */

/* Every real number type TensorFlow's DEVICE_DEFAULT AssignAdd/Sub cover
 * (complex: assign_add_sub_complex). */
static const TF_DataType update_types[] = {
    TF_FLOAT, TF_HALF,  TF_BFLOAT16, TF_DOUBLE, TF_INT8,   TF_UINT8,
    TF_INT16, TF_UINT16, TF_INT32,   TF_UINT32, TF_INT64,  TF_UINT64,
};
#define NUM_UPDATE_TYPES \
  ((int)(sizeof(update_types) / sizeof(update_types[0])))

static const struct {
  int rank;
  int64_t dims[2];
} shapes[] = {{0, {0}}, {1, {7}}, {2, {3, 5}}, {1, {1031}}, {1, {0}}};
#define NUM_SHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

START_TEST(assign_add_sub)
{
  TF_DataType dtype = update_types[_i / NUM_SHAPES];
  int s = _i % NUM_SHAPES;
  const int64_t *dims = shapes[s].dims;
  int rank = shapes[s].rank;
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= dims[d];
  static double cur[MAX_N], want[MAX_N], delta[MAX_N], got[MAX_N];
  TF_Status *st = TF_NewStatus();

  /* Unsigned values stay clear of 0 so the float64 expectation needs no
   * wrap-around; the signed ones wrap in element 0. */
  double lo = is_unsigned(dtype) ? 60 : -50;
  fill(cur, n, dtype, 7u + (unsigned)_i, lo, lo + 100);
  if (n > 0 && (dtype == TF_INT8 || dtype == TF_INT16 || dtype == TF_INT32))
    cur[0] = dtype == TF_INT8 ? 120 : dtype == TF_INT16 ? 32760 : 2147483640.0;
  TF_Tensor *var = new_var(dtype, dims, rank, cur);
  for (int step = 0; step < 4; step++) {
    const char *op = step % 2 ? "AssignSubVariableOp" : "AssignAddVariableOp";
    fill(delta, n, dtype, 100u * (unsigned)step + (unsigned)_i,
         is_unsigned(dtype) ? 0 : -10, 10);
    if ((dtype == TF_INT64 || dtype == TF_UINT64) && n > 0)
      delta[0] = 9.0e15; /* large values stay exact */
    else if (n > 0 && (dtype == TF_INT8 || dtype == TF_INT16 ||
                       dtype == TF_INT32))
      delta[0] = 20; /* past the largest value and back: wraps */
    TF_Tensor *value = host_tensor(dtype, dims, rank, delta);
    TF_Tensor *in[2] = {var, value};
    ck_assert_msg(run(op, NULL, 0, in, 2, st) == TF_OK, "%s: %s", op,
                  TF_Message(st));
    for (int64_t i = 0; i < n; i++)
      want[i] = step % 2 ? cur[i] - delta[i] : cur[i] + delta[i];
    read_var(var, got, n);
    expect_close(op, dtype, got, want, n);
    memcpy(cur, got, sizeof(double) * (size_t)n);
    TF_DeleteTensor(value);
  }
  TF_DeleteTensor(var);
  TF_DeleteStatus(st);
}
END_TEST

/* complex64 and complex128 add component-wise. */
START_TEST(assign_add_sub_complex)
{
  TF_DataType dtype = _i == 0 ? TF_COMPLEX64 : TF_COMPLEX128;
  int64_t dims[] = {5};
  const int n = 5;
  double cur[10], delta[10], got[10];
  TF_Status *st = TF_NewStatus();
  size_t part = dtype == TF_COMPLEX64 ? sizeof(float) : sizeof(double);

  for (int i = 0; i < 2 * n; i++) {
    cur[i] = 0.25 * i - 1.0;
    delta[i] = 0.5 * (i % 3) + 0.125;
  }
  TF_Tensor *init = TF_AllocateTensor(dtype, dims, 1, 2 * n * part);
  TF_Tensor *value = TF_AllocateTensor(dtype, dims, 1, 2 * n * part);
  for (int i = 0; i < 2 * n; i++) {
    if (part == sizeof(float)) {
      ((float *)TF_TensorData(init))[i] = (float)cur[i];
      ((float *)TF_TensorData(value))[i] = (float)delta[i];
    } else {
      ((double *)TF_TensorData(init))[i] = cur[i];
      ((double *)TF_TensorData(value))[i] = delta[i];
    }
  }
  TF_Tensor *var = tfocl_variable_create(device, init, st);
  ck_assert_msg(var != NULL, "%s", TF_Message(st));
  TF_Tensor *in[2] = {var, value};
  ck_assert_msg(run("AssignAddVariableOp", NULL, 0, in, 2, st) == TF_OK, "%s",
                TF_Message(st));
  ck_assert_msg(run("AssignSubVariableOp", NULL, 0, in, 2, st) == TF_OK, "%s",
                TF_Message(st));
  ck_assert_msg(run("AssignAddVariableOp", NULL, 0, in, 2, st) == TF_OK, "%s",
                TF_Message(st));
  TF_Tensor *h = tfocl_variable_read(var, st);
  ck_assert_msg(h != NULL, "%s", TF_Message(st));
  ck_assert_int_eq(TF_TensorType(h), dtype);
  for (int i = 0; i < 2 * n; i++)
    got[i] = part == sizeof(float) ? ((float *)TF_TensorData(h))[i]
                                   : ((double *)TF_TensorData(h))[i];
  /* Every value here is exact in float: the sums must be too. */
  for (int i = 0; i < 2 * n; i++)
    ck_assert_msg(got[i] == cur[i] + delta[i], "%s part %d: %g, want %g",
                  tfocl_type_name(dtype), i, got[i], cur[i] + delta[i]);
  TF_DeleteTensor(h);
  TF_DeleteTensor(var);
  TF_DeleteTensor(value);
  TF_DeleteTensor(init);
  TF_DeleteStatus(st);
}
END_TEST

/* Every (op, dtype) TensorFlow's DEVICE_DEFAULT AssignAdd/Sub take has an
 * OPENCL kernel of its own (with or without kernels_experimental.h). */
START_TEST(updates_registered_for_every_default_dtype)
{
  static const char *const ops[] = {"AssignAddVariableOp",
                                     "AssignSubVariableOp"};
  static const TF_DataType complex_types[] = {TF_COMPLEX64, TF_COMPLEX128};
  for (int o = 0; o < 2; o++) {
    for (int t = 0; t < NUM_UPDATE_TYPES + 2; t++) {
      TF_DataType dtype = t < NUM_UPDATE_TYPES
                              ? update_types[t]
                              : complex_types[t - NUM_UPDATE_TYPES];
      ck_assert_msg(registered_for(ops[o], dtype), "%s has no OPENCL kernel "
                    "for %s", ops[o], tfocl_type_name(dtype));
    }
  }
}
END_TEST

/* A value read before an update keeps its contents (copy on write). */
START_TEST(update_copies_shared_buffer)
{
  static const double init[] = {1, 2, 3}, add[] = {10, 20, 30};
  int64_t dims[] = {3};
  double got[3];
  TF_Status *st = TF_NewStatus();
  TF_Tensor *var = new_var(TF_FLOAT, dims, 1, init);
  TF_Tensor *before = tfocl_variable_value(var, st);
  ck_assert_msg(before != NULL, "%s", TF_Message(st));
  ck_assert(tfocl_tensor_on_device(before));
  TF_Tensor *value = host_tensor(TF_FLOAT, dims, 1, add);
  TF_Tensor *in[2] = {var, value};
  ck_assert_msg(run("AssignAddVariableOp", NULL, 0, in, 2, st) == TF_OK, "%s",
                TF_Message(st));
  read_var(var, got, 3);
  ck_assert(got[0] == 11 && got[2] == 33);
  TF_Tensor *old = tfocl_tensor_to_host(before, st);
  ck_assert(((float *)TF_TensorData(old))[0] == 1.0f &&
            ((float *)TF_TensorData(old))[2] == 3.0f);
  TF_DeleteTensor(old);
  TF_DeleteTensor(before);
  TF_DeleteTensor(value);
  TF_DeleteTensor(var);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(assign_variable_op)
{
  static const double init[] = {1, 2}, next[] = {5, 6, 7};
  int64_t d2[] = {2}, d3[] = {3};
  double got[3];
  TF_Status *st = TF_NewStatus();
  if (!registered("AssignVariableOp")) {
    TF_DeleteStatus(st);
    return;
  }
  TF_Tensor *var = new_var(TF_FLOAT, d2, 1, init);
  TF_Tensor *value = host_tensor(TF_FLOAT, d3, 1, next);
  TF_Tensor *in[2] = {var, value};
  /* validate_shape=false (the default) lets the shape change. */
  ck_assert_msg(run("AssignVariableOp", NULL, 0, in, 2, st) == TF_OK, "%s",
                TF_Message(st));
  read_var(var, got, 3);
  ck_assert(got[0] == 5 && got[2] == 7);
  struct tfocl_attr validate = TFOCL_ATTR_B("validate_shape", true);
  TF_Tensor *small = host_tensor(TF_FLOAT, d2, 1, init);
  in[1] = small;
  ck_assert_int_eq(run("AssignVariableOp", &validate, 1, in, 2, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "Trying to assign to variable with tensor with wrong "
                    "shape. Expected [3] got [2]");
  TF_DeleteTensor(small);
  TF_DeleteTensor(value);
  TF_DeleteTensor(var);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(update_errors)
{
  static const double v[] = {1, 2, 3};
  int64_t d2[] = {2}, d3[] = {3};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *var = new_var(TF_FLOAT, d2, 1, v);
  TF_Tensor *wrong_shape = host_tensor(TF_FLOAT, d3, 1, v);
  TF_Tensor *wrong_type = host_tensor(TF_HALF, d2, 1, v);
  TF_Tensor *in[2] = {var, wrong_shape};

  ck_assert_int_eq(run("AssignAddVariableOp", NULL, 0, in, 2, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "Cannot update variable with shape [2] using a Tensor "
                    "with shape [3], shapes must be equal.");
  in[1] = wrong_type;
  ck_assert_int_eq(run("AssignSubVariableOp", NULL, 0, in, 2, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "wrong dtype");

  /* A variable that was never assigned. */
  TF_Tensor *uninit = tfocl_variable_create_uninitialized(device, TF_FLOAT, st);
  ck_assert_code(st, TF_OK);
  ck_assert(!tfocl_variable_is_initialized(uninit));
  TF_Tensor *value = host_tensor(TF_FLOAT, d2, 1, v);
  in[0] = uninit;
  in[1] = value;
  ck_assert_int_eq(run("AssignAddVariableOp", NULL, 0, in, 2, st),
                   TF_FAILED_PRECONDITION);
  ck_assert_has(st, "Could not find variable ");
  ck_assert_has(st, "uninitialized");
  ck_assert(tfocl_variable_read(uninit, st) == NULL);
  ck_assert_code(st, TF_FAILED_PRECONDITION);
  TF_Tensor *alpha = host_scalar(TF_FLOAT, 0.1);
  TF_Tensor *gd[3] = {uninit, alpha, value};
  ck_assert_int_eq(run("ResourceApplyGradientDescent", NULL, 0, gd, 3, st),
                   TF_FAILED_PRECONDITION);
  ck_assert_has(st, "Could not find variable ");
  /* Assigning initializes it. */
  tfocl_variable_assign(uninit, value, st);
  ck_assert_code(st, TF_OK);
  ck_assert(tfocl_variable_is_initialized(uninit));
  ck_assert_int_eq(run("ResourceApplyGradientDescent", NULL, 0, gd, 3, st),
                   TF_OK);

  /* A tensor that is not a handle. */
  tfocl_variable_assign(value, value, st);
  ck_assert_code(st, TF_INVALID_ARGUMENT);

  TF_DeleteTensor(alpha);
  TF_DeleteTensor(value);
  TF_DeleteTensor(uninit);
  TF_DeleteTensor(wrong_type);
  TF_DeleteTensor(wrong_shape);
  TF_DeleteTensor(var);
  TF_DeleteStatus(st);
}
END_TEST

/* ---- optimizers ---------------------------------------------------------- */

static const TF_DataType float_types[] = {TF_FLOAT, TF_HALF};

START_TEST(gradient_descent)
{
  TF_DataType dtype = float_types[_i / 2];
  int64_t dims[] = {_i % 2 ? 1031 : 7};
  int64_t n = dims[0];
  static double w[MAX_N], g[MAX_N], want[MAX_N], got[MAX_N];
  TF_Status *st = TF_NewStatus();
  fill(w, n, dtype, 1, -2, 2);
  TF_Tensor *var = new_var(dtype, dims, 1, w);
  for (int step = 0; step < 3; step++) {
    double lr = ref_round_to(dtype, 0.1 + 0.05 * step);
    fill(g, n, dtype, 10u + (unsigned)step, -1, 1);
    TF_Tensor *alpha = host_scalar(dtype, lr);
    TF_Tensor *delta = host_tensor(dtype, dims, 1, g);
    TF_Tensor *in[3] = {var, alpha, delta};
    ck_assert_msg(run("ResourceApplyGradientDescent", NULL, 0, in, 3, st) ==
                      TF_OK,
                  "%s", TF_Message(st));
    for (int64_t i = 0; i < n; i++)
      want[i] = w[i] - lr * g[i];
    read_var(var, got, n);
    expect_close("ResourceApplyGradientDescent", dtype, got, want, n);
    memcpy(w, got, sizeof(double) * (size_t)n);
    TF_DeleteTensor(alpha);
    TF_DeleteTensor(delta);
  }
  TF_DeleteTensor(var);
  TF_DeleteStatus(st);
}
END_TEST

/* ResourceApplyMomentum (_i < 8) and ResourceApplyKerasMomentum. */
START_TEST(momentum)
{
  TF_DataType dtype = float_types[(_i / 4) % 2];
  bool nesterov = _i % 2;
  bool locking = (_i / 2) % 2;
  bool keras = _i >= 8;
  const char *op =
      keras ? "ResourceApplyKerasMomentum" : "ResourceApplyMomentum";
  int64_t dims[] = {2, 9};
  int64_t n = 18;
  double w[18], a[18], g[18], want_w[18], want_a[18], got_w[18], got_a[18];
  TF_Status *st = TF_NewStatus();
  fill(w, n, dtype, 3, -2, 2);
  fill(a, n, dtype, 4, -1, 1);
  TF_Tensor *var = new_var(dtype, dims, 2, w);
  TF_Tensor *accum = new_var(dtype, dims, 2, a);
  struct tfocl_attr attrs[] = {TFOCL_ATTR_B("use_nesterov", nesterov),
                               TFOCL_ATTR_B("use_locking", locking)};
  for (int step = 0; step < 3; step++) {
    double lr = ref_round_to(dtype, 0.05), mom = ref_round_to(dtype, 0.9);
    fill(g, n, dtype, 20u + (unsigned)step, -1, 1);
    TF_Tensor *lr_t = host_scalar(dtype, lr), *mom_t = host_scalar(dtype, mom);
    TF_Tensor *grad = host_tensor(dtype, dims, 2, g);
    TF_Tensor *in[5] = {var, accum, lr_t, grad, mom_t};
    ck_assert_msg(run(op, attrs, 2, in, 5, st) == TF_OK, "%s: %s", op,
                  TF_Message(st));
    for (int64_t i = 0; i < n; i++) {
      if (keras) { /* Keras' SGD: the accumulator holds -lr * the sum */
        double acc = a[i] * mom - g[i] * lr;
        want_a[i] = acc;
        want_w[i] = w[i] + (nesterov ? acc * mom - g[i] * lr : acc);
      } else {
        double acc = a[i] * mom + g[i];
        want_a[i] = acc;
        want_w[i] = w[i] - (nesterov ? g[i] * lr + acc * mom * lr : lr * acc);
      }
    }
    read_var(var, got_w, n);
    read_var(accum, got_a, n);
    expect_close(keras ? "ResourceApplyKerasMomentum accum"
                       : "ResourceApplyMomentum accum",
                 dtype, got_a, want_a, n);
    expect_close(keras ? "ResourceApplyKerasMomentum var"
                       : "ResourceApplyMomentum var",
                 dtype, got_w, want_w, n);
    memcpy(w, got_w, sizeof(w));
    memcpy(a, got_a, sizeof(a));
    TF_DeleteTensor(lr_t);
    TF_DeleteTensor(mom_t);
    TF_DeleteTensor(grad);
  }
  TF_DeleteTensor(var);
  TF_DeleteTensor(accum);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(adam)
{
  TF_DataType dtype = float_types[_i / 4];
  bool nesterov = _i % 2;
  int64_t dims[] = {(_i / 2) % 2 ? 1031 : 13};
  int64_t n = dims[0];
  static double w[MAX_N], m[MAX_N], v[MAX_N], g[MAX_N];
  static double ww[MAX_N], wm[MAX_N], wv[MAX_N];
  static double gw[MAX_N], gm[MAX_N], gv[MAX_N];
  TF_Status *st = TF_NewStatus();
  fill(w, n, dtype, 5, -1, 1);
  for (int64_t i = 0; i < n; i++)
    m[i] = v[i] = 0;
  TF_Tensor *var = new_var(dtype, dims, 1, w);
  TF_Tensor *mv = new_var(dtype, dims, 1, m);
  TF_Tensor *vv = new_var(dtype, dims, 1, v);
  struct tfocl_attr attrs[] = {TFOCL_ATTR_B("use_nesterov", nesterov)};
  double b1 = ref_round_to(dtype, 0.9), b2 = ref_round_to(dtype, 0.999);
  double lr = ref_round_to(dtype, 0.01), eps = ref_round_to(dtype, 1e-3);
  for (int step = 1; step <= 3; step++) {
    double b1p = ref_round_to(dtype, pow(0.9, step));
    double b2p = ref_round_to(dtype, pow(0.999, step));
    fill(g, n, dtype, 30u + (unsigned)step, -1, 1);
    TF_Tensor *sc[6] = {host_scalar(dtype, b1p), host_scalar(dtype, b2p),
                        host_scalar(dtype, lr),  host_scalar(dtype, b1),
                        host_scalar(dtype, b2),  host_scalar(dtype, eps)};
    TF_Tensor *grad = host_tensor(dtype, dims, 1, g);
    TF_Tensor *in[10] = {var,   mv,    vv,    sc[0], sc[1],
                         sc[2], sc[3], sc[4], sc[5], grad};
    ck_assert_msg(run("ResourceApplyAdam", attrs, 1, in, 10, st) == TF_OK,
                  "%s", TF_Message(st));
    double mul = lr * sqrt(1 - b2p) / (1 - b1p);
    for (int64_t i = 0; i < n; i++) {
      double mi = m[i] + (1 - b1) * (g[i] - m[i]);
      double vi = v[i] + (1 - b2) * (g[i] * g[i] - v[i]);
      double num = nesterov ? mi * b1 + (1 - b1) * g[i] : mi;
      wm[i] = mi;
      wv[i] = vi;
      ww[i] = w[i] - mul * num / (eps + sqrt(vi));
    }
    read_var(var, gw, n);
    read_var(mv, gm, n);
    read_var(vv, gv, n);
    expect_close("ResourceApplyAdam m", dtype, gm, wm, n);
    expect_close("ResourceApplyAdam v", dtype, gv, wv, n);
    expect_close("ResourceApplyAdam var", dtype, gw, ww, n);
    memcpy(w, gw, sizeof(double) * (size_t)n);
    memcpy(m, gm, sizeof(double) * (size_t)n);
    memcpy(v, gv, sizeof(double) * (size_t)n);
    for (int i = 0; i < 6; i++)
      TF_DeleteTensor(sc[i]);
    TF_DeleteTensor(grad);
  }
  TF_DeleteTensor(var);
  TF_DeleteTensor(mv);
  TF_DeleteTensor(vv);
  TF_DeleteStatus(st);
}
END_TEST

/* Within `ulps` units in the last place of float: the drivers' division
 * and sqrt may be off by a few (OpenCL allows 2.5 and 3). */
static void expect_float_ulps(const char *what, const double *got,
                              const double *want, int64_t n, int ulps)
{
  for (int64_t i = 0; i < n; i++) {
    float w = (float)want[i];
    double ulp = nextafterf(fabsf(w), INFINITY) - fabsf(w);
    ck_assert_msg(fabs(got[i] - w) <= ulps * ulp,
                  "%s element %lld: got %.9g, want %.9g", what, (long long)i,
                  got[i], (double)w);
  }
}

/* _TfoclKerasAdam, Keras 3's Adam op for op (kernels/variables.cl): the
 * reference is float arithmetic in Keras' order, each op rounded; 1 - beta
 * comes rounded from double, as Keras casts Python's. ResourceApplyAdam's
 * 1 - float(beta_2) is 1.3e-5 relative off that, thousands of ulps of v. */
START_TEST(keras_adam)
{
  int64_t dims[] = {_i ? 1031 : 13};
  int64_t n = dims[0];
  static double w[MAX_N], m[MAX_N], v[MAX_N], g[MAX_N];
  static double ww[MAX_N], wm[MAX_N], wv[MAX_N];
  static double gw[MAX_N], gm[MAX_N], gv[MAX_N];
  TF_Status *st = TF_NewStatus();
  fill(w, n, TF_FLOAT, 7, -1, 1);
  for (int64_t i = 0; i < n; i++)
    m[i] = v[i] = 0;
  TF_Tensor *var = new_var(TF_FLOAT, dims, 1, w);
  TF_Tensor *mv = new_var(TF_FLOAT, dims, 1, m);
  TF_Tensor *vv = new_var(TF_FLOAT, dims, 1, v);
  float c1 = (float)(1 - 0.9), c2 = (float)(1 - 0.999), eps = 1e-7f;
  for (int step = 1; step <= 3; step++) {
    float lr = 0.01f;
    float b1p = powf(0.9f, (float)step), b2p = powf(0.999f, (float)step);
    float alpha = lr * sqrtf(1 - b2p) / (1 - b1p);
    fill(g, n, TF_FLOAT, 40u + (unsigned)step, -1, 1);
    TF_Tensor *sc[4] = {host_scalar(TF_FLOAT, alpha), host_scalar(TF_FLOAT, c1),
                        host_scalar(TF_FLOAT, c2), host_scalar(TF_FLOAT, eps)};
    TF_Tensor *grad = host_tensor(TF_FLOAT, dims, 1, g);
    TF_Tensor *in[8] = {var, mv, vv, sc[0], sc[1], sc[2], sc[3], grad};
    ck_assert_msg(run("_TfoclKerasAdam", NULL, 0, in, 8, st) == TF_OK, "%s",
                  TF_Message(st));
    for (int64_t i = 0; i < n; i++) {
      float gi = (float)g[i], mi = (float)m[i], vi = (float)v[i];
      float dm = (gi - mi) * c1;
      mi = mi + dm;
      float g2 = gi * gi;
      float dv = (g2 - vi) * c2;
      vi = vi + dv;
      float num = mi * alpha;
      float den = sqrtf(vi) + eps;
      wm[i] = mi;
      wv[i] = vi;
      ww[i] = (float)w[i] - num / den;
    }
    read_var(var, gw, n);
    read_var(mv, gm, n);
    read_var(vv, gv, n);
    expect_float_ulps("_TfoclKerasAdam m", gm, wm, n, 0);
    expect_float_ulps("_TfoclKerasAdam v", gv, wv, n, 0);
    expect_float_ulps("_TfoclKerasAdam var", gw, ww, n, 4);
    memcpy(w, gw, sizeof(double) * (size_t)n);
    memcpy(m, gm, sizeof(double) * (size_t)n);
    memcpy(v, gv, sizeof(double) * (size_t)n);
    for (int i = 0; i < 4; i++)
      TF_DeleteTensor(sc[i]);
    TF_DeleteTensor(grad);
  }
  /* Half weights stay with Keras' ops: no kernel for them. */
  ck_assert(!registered_for("_TfoclKerasAdam", TF_HALF));
  TF_DeleteTensor(var);
  TF_DeleteTensor(mv);
  TF_DeleteTensor(vv);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(optimizer_errors)
{
  static const double vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t d7[] = {7}, d6[] = {6}, d2[] = {2};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *var = new_var(TF_FLOAT, d7, 1, vals);
  TF_Tensor *accum = new_var(TF_FLOAT, d6, 1, vals);
  TF_Tensor *half_var = new_var(TF_HALF, d7, 1, vals);
  TF_Tensor *lr = host_scalar(TF_FLOAT, 0.1);
  TF_Tensor *lr2 = host_tensor(TF_FLOAT, d2, 1, vals);
  TF_Tensor *g7 = host_tensor(TF_FLOAT, d7, 1, vals);
  TF_Tensor *g6 = host_tensor(TF_FLOAT, d6, 1, vals);

  TF_Tensor *gd[3] = {var, lr, g6};
  ck_assert_int_eq(run("ResourceApplyGradientDescent", NULL, 0, gd, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "var and delta do not have the same shape[7] [6]");
  gd[1] = lr2;
  gd[2] = g7;
  ck_assert_int_eq(run("ResourceApplyGradientDescent", NULL, 0, gd, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "alpha is not a scalar: [2]");
  TF_Tensor *mo[5] = {var, accum, lr, g7, lr};
  ck_assert_int_eq(run("ResourceApplyMomentum", NULL, 0, mo, 5, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "var and accum do not have the same shape[7] [6]");
  /* A half variable updated by a float op. */
  gd[0] = half_var;
  gd[1] = lr;
  ck_assert_int_eq(run("ResourceApplyGradientDescent", NULL, 0, gd, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "dtype half");

  TF_DeleteTensor(g6);
  TF_DeleteTensor(g7);
  TF_DeleteTensor(lr2);
  TF_DeleteTensor(lr);
  TF_DeleteTensor(half_var);
  TF_DeleteTensor(accum);
  TF_DeleteTensor(var);
  TF_DeleteStatus(st);
}
END_TEST

/* ---- lock ordering ---------------------------------------------------------- */

struct swap_job {
  TF_Tensor *first, *second;
  int iterations;
  TF_Code code;
};

/* Momentum with (var, accum) = (first, second), locking. */
static void *momentum_loop(void *arg)
{
  struct swap_job *job = arg;
  TF_Status *st = TF_NewStatus();
  TF_Tensor *lr = host_scalar(TF_FLOAT, 0.001);
  TF_Tensor *mom = host_scalar(TF_FLOAT, 0.5);
  int64_t dims[] = {64};
  static const double zeros[64];
  TF_Tensor *grad = host_tensor(TF_FLOAT, dims, 1, zeros);
  struct tfocl_attr locking = TFOCL_ATTR_B("use_locking", true);
  struct tfocl_op *op = tfocl_op_create(
      device, "ResourceApplyMomentum", &locking, 1,
      (TF_DataType[]){TF_RESOURCE, TF_RESOURCE, TF_FLOAT, TF_FLOAT, TF_FLOAT},
      5, st);
  job->code = TF_GetCode(st);
  for (int i = 0; op != NULL && i < job->iterations && job->code == TF_OK;
       i++) {
    TF_Tensor *in[5] = {job->first, job->second, lr, grad, mom};
    tfocl_op_compute(op, in, 5, NULL, 0, st);
    job->code = TF_GetCode(st);
  }
  tfocl_op_destroy(op);
  TF_DeleteTensor(grad);
  TF_DeleteTensor(mom);
  TF_DeleteTensor(lr);
  TF_DeleteStatus(st);
  return NULL;
}

/* Two kernels naming the same two variables in opposite orders, at once:
 * without one global lock order they deadlock (the test times out). The
 * same variable twice is locked once. */
START_TEST(lock_order)
{
  static double ones[64];
  int64_t dims[] = {64};
  for (int i = 0; i < 64; i++)
    ones[i] = 1;
  TF_Tensor *a = new_var(TF_FLOAT, dims, 1, ones);
  TF_Tensor *b = new_var(TF_FLOAT, dims, 1, ones);
  struct swap_job jobs[2] = {{a, b, 200, TF_OK}, {b, a, 200, TF_OK}};
  pthread_t threads[2];
  for (int t = 0; t < 2; t++)
    ck_assert_int_eq(pthread_create(&threads[t], NULL, momentum_loop, &jobs[t]),
                     0);
  for (int t = 0; t < 2; t++)
    pthread_join(threads[t], NULL);
  ck_assert_int_eq(jobs[0].code, TF_OK);
  ck_assert_int_eq(jobs[1].code, TF_OK);

  /* grad 0: accum = accum * 0.5 each step, both orders agree. */
  double got[64];
  read_var(a, got, 64);
  ck_assert(isfinite(got[0]));

  struct swap_job same = {a, a, 3, TF_OK};
  momentum_loop(&same);
  ck_assert_int_eq(same.code, TF_OK);
  TF_DeleteTensor(a);
  TF_DeleteTensor(b);
}
END_TEST

/* ---- sparse access: gathers, scatters, strided assignment --------------------- */

/* Every dtype a sparse kernel may be registered for; each test runs the
 * ones the plugin registers (registered_for), so a dtype added to a
 * registration is tested at once. */
static const TF_DataType sparse_types[] = {
    TF_FLOAT, TF_HALF,  TF_BFLOAT16, TF_DOUBLE, TF_COMPLEX64, TF_COMPLEX128,
    TF_INT8,  TF_UINT8, TF_INT16,    TF_UINT16, TF_INT32,     TF_UINT32,
    TF_INT64, TF_UINT64, TF_BOOL,
};
#define NUM_SPARSE_TYPES \
  ((int)(sizeof(sparse_types) / sizeof(sparse_types[0])))

#define MAX_V 4096

static int lanes_of(TF_DataType dtype) { return ref_lanes(dtype); }

/* Random values for n elements of dtype (every lane), small enough that
 * products of a few stay exact in float64. */
static void fill_values(double *v, int64_t n, TF_DataType dtype, unsigned seed)
{
  int64_t count = n * lanes_of(dtype);
  if (dtype == TF_BOOL) {
    fill(v, count, TF_UINT8, seed, 0, 2);
    return;
  }
  if (is_unsigned(dtype))
    fill(v, count, dtype, seed, 1, 12);
  else if (is_integer(dtype))
    fill(v, count, dtype, seed, -12, 12);
  else
    fill(v, count, dtype == TF_COMPLEX64 ? TF_FLOAT
                   : dtype == TF_COMPLEX128 ? TF_DOUBLE : dtype,
         seed, -3, 3);
}

/* Unsigned variables start high enough that a few subtractions stay
 * positive (the float64 expectation does not wrap uint64). */
static void lift_unsigned(double *v, int64_t n, TF_DataType dtype)
{
  if (is_unsigned(dtype))
    for (int64_t i = 0; i < n; i++)
      v[i] += 100;
}

/* A host tensor holding n elements of dtype (every lane of v). */
static TF_Tensor *values_tensor(TF_DataType dtype, const int64_t *dims,
                                int rank, const double *v)
{
  struct ref_tensor t;
  TF_Status *st = TF_NewStatus();
  ck_assert(ref_tensor_alloc(&t, dtype, dims, rank));
  for (int64_t i = 0; i < t.elements * lanes_of(dtype); i++)
    t.v[i] = ref_round_to(dtype, v[i]);
  TF_Tensor *r = ref_tensor_to_tf(&t, st);
  ck_assert_msg(r != NULL, "%s", TF_Message(st));
  ref_tensor_finish(&t);
  TF_DeleteStatus(st);
  return r;
}

static TF_Tensor *index_tensor(TF_DataType itype, const int64_t *dims,
                               int rank, const int64_t *values)
{
  int64_t n = 1;
  double v[256] = {0};
  for (int d = 0; d < rank; d++)
    n *= dims[d];
  ck_assert(n <= 256);
  for (int64_t i = 0; i < n; i++)
    v[i] = (double)values[i];
  return host_tensor(itype, dims, rank, v);
}

static TF_Tensor *sparse_var(TF_DataType dtype, const int64_t *dims, int rank,
                             const double *v)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *h = values_tensor(dtype, dims, rank, v);
  TF_Tensor *var = tfocl_variable_create(device, h, st);
  ck_assert_msg(var != NULL, "%s", TF_Message(st));
  TF_DeleteTensor(h);
  TF_DeleteStatus(st);
  return var;
}

/* A tensor's values (every lane) as doubles; returns the element count. */
static int64_t tensor_values(const TF_Tensor *t, double *out, int64_t max)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *h = tfocl_tensor_to_host(t, st);
  ck_assert_msg(h != NULL, "%s", TF_Message(st));
  struct ref_tensor r;
  ck_assert(ref_tensor_from_tf(&r, h));
  int64_t n = r.elements * lanes_of(r.dtype);
  ck_assert(n <= max);
  memcpy(out, r.v, sizeof(double) * (size_t)n);
  ref_tensor_finish(&r);
  TF_DeleteTensor(h);
  TF_DeleteStatus(st);
  return n;
}

static int64_t var_values(const TF_Tensor *handle, double *out, int64_t max)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *h = tfocl_variable_read(handle, st);
  ck_assert_msg(h != NULL, "%s", TF_Message(st));
  int64_t n = tensor_values(h, out, max);
  TF_DeleteTensor(h);
  TF_DeleteStatus(st);
  return n;
}

/* |got - want| within dtype's tolerance for n values (lanes included). */
static void expect_values(const char *what, TF_DataType dtype,
                          const double *got, const double *want, int64_t n)
{
  double rtol, atol;
  TF_DataType part = dtype == TF_COMPLEX64    ? TF_FLOAT
                     : dtype == TF_COMPLEX128 ? TF_DOUBLE
                                              : dtype;
  tolerance(part, &rtol, &atol);
  for (int64_t i = 0; i < n; i++) {
    double w = ref_round_to(dtype, want[i]);
    ck_assert_msg(fabs(got[i] - w) <= atol + rtol * fabs(w),
                  "%s [%s] value %lld: got %.9g, want %.9g", what,
                  tfocl_type_name(dtype), (long long)i, got[i], w);
  }
}

/* Runs op with one output into *out (NULL: none); returns the code. */
static TF_Code run_out(const char *op, const struct tfocl_attr *attrs,
                       int num_attrs, TF_Tensor *const *in, int num_in,
                       TF_Tensor **out, TF_Status *st)
{
  int num_out = 0;
  TF_Tensor *outs[2] = {NULL, NULL};
  tfocl_run_op(device, op, attrs, num_attrs, in, num_in, outs, 2, &num_out,
               st);
  if (out != NULL)
    *out = outs[0];
  else
    TF_DeleteTensor(outs[0]);
  TF_DeleteTensor(outs[1]);
  return TF_GetCode(st);
}

/* The float64 value of one scatter step, as the device computes it:
 * rounded to dtype, integers wrapping, x / 0 = 0 for integers. */
enum sparse_update { SU_ASSIGN, SU_ADD, SU_SUB, SU_MUL, SU_DIV, SU_MIN, SU_MAX };

static double apply_update(enum sparse_update u, TF_DataType dtype, double a,
                           double x)
{
  double r;
  switch (u) {
  case SU_ASSIGN: r = x; break;
  case SU_ADD: r = a + x; break;
  case SU_SUB: r = a - x; break;
  case SU_MUL: r = a * x; break;
  case SU_DIV:
    if (is_integer(dtype))
      r = x == 0 ? 0 : trunc(a / x);
    else
      r = a / x;
    break;
  case SU_MIN: r = x < a ? x : a; break;
  default: r = a < x ? x : a; break;
  }
  return ref_round_to(dtype, r);
}

static const struct {
  const char *op;
  enum sparse_update u;
} scatter_ops[] = {
    {"ResourceScatterAdd", SU_ADD},    {"ResourceScatterSub", SU_SUB},
    {"ResourceScatterMul", SU_MUL},    {"ResourceScatterDiv", SU_DIV},
    {"ResourceScatterMin", SU_MIN},    {"ResourceScatterMax", SU_MAX},
    {"ResourceScatterUpdate", SU_ASSIGN},
};
#define NUM_SCATTER_OPS ((int)(sizeof(scatter_ops) / sizeof(scatter_ops[0])))

/* Whether op has a kernel for (dtype, index type). */
static bool registered_for2(const char *op, TF_DataType dtype,
                            TF_DataType itype)
{
  int n = tfocl_kernel_count();
  for (int i = 0; i < n; i++) {
    struct tfocl_kernel_info info;
    if (!tfocl_kernel_get(i, &info) || strcmp(info.op_name, op) != 0 ||
        strcmp(info.device_type, "OPENCL") != 0 || info.num_constraints < 2)
      continue;
    bool d = false, x = false;
    for (int c = 0; c < info.num_constraints; c++)
      for (int t = 0; t < info.constraints[c].num_types; t++) {
        TF_DataType ct = info.constraints[c].types[t];
        if (strcmp(info.constraints[c].attr, "Tindices") == 0)
          x = x || ct == itype;
        else
          d = d || ct == dtype;
      }
    if (d && x)
      return true;
  }
  return false;
}

/* ResourceScatter*: duplicate and out-of-range indices (dropped, as
 * TensorFlow's GPU kernels), then a scalar update, then no indices at all;
 * every registered (dtype, index type); against the float64 sequence. */
START_TEST(resource_scatter)
{
  int o = _i / 2;
  TF_DataType itype = _i % 2 ? TF_INT64 : TF_INT32;
  const char *op = scatter_ops[o].op;
  enum sparse_update u = scatter_ops[o].u;
  static double init[MAX_V], upd[MAX_V], want[MAX_V], got[MAX_V];
  TF_Status *st = TF_NewStatus();
  int tested = 0;

  for (int t = 0; t < NUM_SPARSE_TYPES; t++) {
    TF_DataType dtype = sparse_types[t];
    if (!registered_for2(op, dtype, itype))
      continue;
    tested++;
    /* [37, 5] rows: odd sizes; 41 updates with duplicates of row 3 and 36,
     * indices -1, 37 and 1000 dropped. */
    int64_t rows = 37, w = 5, m = 41;
    int64_t vdims[] = {rows, w}, idims[] = {m}, udims[] = {m, w};
    int64_t idx[41];
    for (int64_t j = 0; j < m; j++)
      idx[j] = (j * 7) % rows;
    idx[5] = 3, idx[9] = 3, idx[17] = 3, idx[20] = 36, idx[30] = 36;
    idx[11] = -1, idx[23] = rows, idx[29] = 1000;
    fill_values(init, rows * w, dtype, 11u + (unsigned)t);
    lift_unsigned(init, rows * w, dtype);
    fill_values(upd, m * w, dtype, 101u + (unsigned)t);
    if (u == SU_DIV)
      for (int64_t i = 0; i < m * w; i++)
        if (upd[i] == 0)
          upd[i] = 1;
    /* Integer division by zero gives 0: one of them. */
    if (u == SU_DIV && is_integer(dtype))
      upd[3 * w] = 0;
    TF_Tensor *var = sparse_var(dtype, vdims, 2, init);
    TF_Tensor *ind = index_tensor(itype, idims, 1, idx);
    TF_Tensor *val = values_tensor(dtype, udims, 2, upd);
    TF_Tensor *in[3] = {var, ind, val};
    ck_assert_msg(run(op, NULL, 0, in, 3, st) == TF_OK, "%s %s: %s", op,
                  tfocl_type_name(dtype), TF_Message(st));
    memcpy(want, init, sizeof(double) * (size_t)(rows * w));
    for (int64_t j = 0; j < m; j++)
      if (idx[j] >= 0 && idx[j] < rows)
        for (int64_t k = 0; k < w; k++)
          want[idx[j] * w + k] =
              apply_update(u, dtype, ref_round_to(dtype, want[idx[j] * w + k]),
                           ref_round_to(dtype, upd[j * w + k]));
    var_values(var, got, MAX_V);
    expect_values(op, dtype, got, want, rows * w);

    /* A scalar update to rows 2 (twice) and 30. */
    int64_t sdims[] = {3}, sidx[] = {2, 30, 2};
    double scalar = u == SU_DIV || u == SU_MUL ? 2 : 1;
    TF_Tensor *ind2 = index_tensor(itype, sdims, 1, sidx);
    TF_Tensor *val2 = values_tensor(dtype, NULL, 0, (double[]){scalar, 0});
    TF_Tensor *in2[3] = {var, ind2, val2};
    ck_assert_msg(run(op, NULL, 0, in2, 3, st) == TF_OK, "%s scalar: %s", op,
                  TF_Message(st));
    for (int j = 0; j < 3; j++)
      for (int64_t k = 0; k < w; k++)
        want[sidx[j] * w + k] = apply_update(
            u, dtype, want[sidx[j] * w + k], ref_round_to(dtype, scalar));
    var_values(var, got, MAX_V);
    expect_values(op, dtype, got, want, rows * w);

    /* No indices: nothing changes. */
    int64_t zero[] = {0}, zdims[] = {0, w};
    TF_Tensor *ind3 = index_tensor(itype, zero, 1, NULL);
    TF_Tensor *val3 = values_tensor(dtype, zdims, 2, NULL);
    TF_Tensor *in3[3] = {var, ind3, val3};
    ck_assert_msg(run(op, NULL, 0, in3, 3, st) == TF_OK, "%s empty: %s", op,
                  TF_Message(st));
    var_values(var, got, MAX_V);
    expect_values(op, dtype, got, want, rows * w);

    TF_DeleteTensor(val3);
    TF_DeleteTensor(ind3);
    TF_DeleteTensor(val2);
    TF_DeleteTensor(ind2);
    TF_DeleteTensor(val);
    TF_DeleteTensor(ind);
    TF_DeleteTensor(var);
  }
  ck_assert_msg(tested > 0, "%s has no OPENCL kernel", op);
  TF_DeleteStatus(st);
}
END_TEST

/* Many duplicates of one row (a hot embedding row): float sums in index
 * order, the same bits on every run. */
START_TEST(resource_scatter_add_deterministic)
{
  int64_t rows = 3, w = 19, m = 1500;
  static int64_t idx[1500];
  static double init[64], upd[1500 * 19], want[64], got[64], first[64];
  TF_Status *st = TF_NewStatus();
  for (int64_t j = 0; j < m; j++)
    idx[j] = j % 7 == 0 ? 2 : 1;
  fill_values(init, rows * w, TF_FLOAT, 3);
  fill(upd, m * w, TF_FLOAT, 5, -1000, 1000);
  for (int run_no = 0; run_no < 3; run_no++) {
    int64_t vdims[] = {rows, w}, idims[] = {m}, udims[] = {m, w};
    TF_Tensor *var = sparse_var(TF_FLOAT, vdims, 2, init);
    struct ref_tensor it;
    ck_assert(ref_tensor_alloc(&it, TF_INT64, idims, 1));
    for (int64_t j = 0; j < m; j++)
      it.v[j] = (double)idx[j];
    TF_Tensor *ind = ref_tensor_to_tf(&it, st);
    ref_tensor_finish(&it);
    TF_Tensor *val = values_tensor(TF_FLOAT, udims, 2, upd);
    TF_Tensor *in[3] = {var, ind, val};
    ck_assert_msg(run("ResourceScatterAdd", NULL, 0, in, 3, st) == TF_OK, "%s",
                  TF_Message(st));
    var_values(var, got, 64);
    if (run_no == 0) {
      memcpy(want, init, sizeof(want));
      for (int64_t j = 0; j < m; j++)
        for (int64_t k = 0; k < w; k++)
          want[idx[j] * w + k] = (double)(float)(want[idx[j] * w + k] +
                                                 (double)(float)upd[j * w + k]);
      /* float sums in index order: the sequence itself. */
      for (int64_t i = 0; i < rows * w; i++)
        ck_assert_msg(got[i] == want[i], "element %lld: %.9g, want %.9g",
                      (long long)i, got[i], want[i]);
      memcpy(first, got, sizeof(first));
    } else {
      ck_assert(memcmp(first, got, sizeof(double) * (size_t)(rows * w)) == 0);
    }
    TF_DeleteTensor(val);
    TF_DeleteTensor(ind);
    TF_DeleteTensor(var);
  }
  TF_DeleteStatus(st);
}
END_TEST

static const struct {
  const char *op;
  enum sparse_update u;
} scatter_nd_ops[] = {
    {"ResourceScatterNdAdd", SU_ADD},
    {"ResourceScatterNdSub", SU_SUB},
    {"ResourceScatterNdUpdate", SU_ASSIGN},
};

/* ResourceScatterNd*: index pairs into [6, 4, 3] (slices of 3), duplicates,
 * out-of-range pairs dropped; rank-1 indices address rows. */
START_TEST(resource_scatter_nd)
{
  int o = _i / 2;
  TF_DataType itype = _i % 2 ? TF_INT64 : TF_INT32;
  const char *op = scatter_nd_ops[o].op;
  enum sparse_update u = scatter_nd_ops[o].u;
  static double init[MAX_V], upd[MAX_V], want[MAX_V], got[MAX_V];
  TF_Status *st = TF_NewStatus();
  int tested = 0;
  for (int t = 0; t < NUM_SPARSE_TYPES; t++) {
    TF_DataType dtype = sparse_types[t];
    if (!registered_for2(op, dtype, itype))
      continue;
    tested++;
    int L = lanes_of(dtype);
    int64_t vdims[] = {6, 4, 3}, idims[] = {7, 2}, udims[] = {7, 3};
    int64_t idx[14] = {5, 3, 0, 0, 5, 3, 2, 1, 6, 0, 1, -1, 5, 3};
    fill_values(init, 72, dtype, 21u + (unsigned)t);
    lift_unsigned(init, 72, dtype);
    fill_values(upd, 21, dtype, 31u + (unsigned)t);
    TF_Tensor *var = sparse_var(dtype, vdims, 3, init);
    TF_Tensor *ind = index_tensor(itype, idims, 2, idx);
    TF_Tensor *val = values_tensor(dtype, udims, 2, upd);
    TF_Tensor *in[3] = {var, ind, val};
    ck_assert_msg(run(op, NULL, 0, in, 3, st) == TF_OK, "%s %s: %s", op,
                  tfocl_type_name(dtype), TF_Message(st));
    memcpy(want, init, sizeof(double) * (size_t)(72 * L));
    for (int j = 0; j < 7; j++) {
      int64_t a = idx[2 * j], b = idx[2 * j + 1];
      if (a < 0 || a >= 6 || b < 0 || b >= 4)
        continue;
      for (int k = 0; k < 3 * L; k++) {
        double *wv = &want[((a * 4 + b) * 3) * L + k];
        /* Complex parts add and subtract independently. */
        *wv = apply_update(u, dtype, ref_round_to(dtype, *wv),
                           ref_round_to(dtype, upd[j * 3 * L + k]));
      }
    }
    var_values(var, got, MAX_V);
    expect_values(op, dtype, got, want, 72 * L);

    /* Rank-1 indices: whole [4, 3] rows. */
    int64_t rdims[] = {2}, ridx[] = {4, 4}, rudims[] = {2, 4, 3};
    fill_values(upd, 24, dtype, 41u + (unsigned)t);
    TF_Tensor *ind2 = index_tensor(itype, rdims, 1, ridx);
    TF_Tensor *val2 = values_tensor(dtype, rudims, 3, upd);
    TF_Tensor *in2[3] = {var, ind2, val2};
    ck_assert_msg(run(op, NULL, 0, in2, 3, st) == TF_OK, "%s rows: %s", op,
                  TF_Message(st));
    for (int j = 0; j < 2; j++)
      for (int k = 0; k < 12 * L; k++)
        want[4 * 12 * L + k] = apply_update(
            u, dtype, want[4 * 12 * L + k],
            ref_round_to(dtype, upd[j * 12 * L + k]));
    var_values(var, got, MAX_V);
    expect_values(op, dtype, got, want, 72 * L);

    TF_DeleteTensor(val2);
    TF_DeleteTensor(ind2);
    TF_DeleteTensor(val);
    TF_DeleteTensor(ind);
    TF_DeleteTensor(var);
  }
  ck_assert_msg(tested > 0, "%s has no OPENCL kernel", op);
  TF_DeleteStatus(st);
}
END_TEST

/* ResourceGather: rows with duplicates, out-of-range indices give zeros,
 * batch_dims 1; ResourceGatherNd: index pairs, out-of-range pairs give
 * zeros, an empty index list. */
START_TEST(resource_gather)
{
  TF_DataType itype = _i ? TF_INT64 : TF_INT32;
  static double init[MAX_V], got[MAX_V], want[MAX_V];
  TF_Status *st = TF_NewStatus();
  int tested = 0;
  for (int t = 0; t < NUM_SPARSE_TYPES; t++) {
    TF_DataType dtype = sparse_types[t];
    if (!registered_for2("ResourceGather", dtype, itype))
      continue;
    tested++;
    int L = lanes_of(dtype);
    int64_t vdims[] = {4, 7, 3}, idims[] = {2, 3};
    int64_t idx[6] = {6, 0, 6, -1, 3, 7};
    fill_values(init, 84, dtype, 51u + (unsigned)t);
    TF_Tensor *var = sparse_var(dtype, vdims, 3, init);
    TF_Tensor *ind = index_tensor(itype, idims, 2, idx);
    struct tfocl_attr attrs[] = {TFOCL_ATTR_T("dtype", dtype)};
    TF_Tensor *in[2] = {var, ind}, *out = NULL;
    /* axis 0: [2, 3] + [7, 3]; indices past 4 give zeros */
    ck_assert_msg(run_out("ResourceGather", attrs, 1, in, 2, &out, st) ==
                      TF_OK,
                  "%s: %s", tfocl_type_name(dtype), TF_Message(st));
    ck_assert_int_eq(TF_NumDims(out), 4);
    int64_t n = tensor_values(out, got, MAX_V);
    ck_assert_int_eq(n, 6 * 21 * L);
    for (int j = 0; j < 6; j++)
      for (int k = 0; k < 21 * L; k++)
        want[j * 21 * L + k] =
            idx[j] >= 0 && idx[j] < 4 ? init[idx[j] * 21 * L + k] : 0;
    expect_values("ResourceGather", dtype, got, want, n);
    TF_DeleteTensor(out);

    /* batch_dims 1: [4, 7, 3] by [4, 2] -> [4, 2, 3] */
    int64_t bdims[] = {4, 2}, bidx[8] = {6, 0, 1, 1, 7, -2, 3, 5};
    TF_Tensor *bind = index_tensor(itype, bdims, 2, bidx);
    struct tfocl_attr battrs[] = {TFOCL_ATTR_T("dtype", dtype),
                                  TFOCL_ATTR_I("batch_dims", 1)};
    TF_Tensor *bin[2] = {var, bind};
    ck_assert_msg(run_out("ResourceGather", battrs, 2, bin, 2, &out, st) ==
                      TF_OK,
                  "batch_dims: %s", TF_Message(st));
    n = tensor_values(out, got, MAX_V);
    ck_assert_int_eq(n, 24 * L);
    for (int b = 0; b < 4; b++)
      for (int j = 0; j < 2; j++)
        for (int k = 0; k < 3 * L; k++) {
          int64_t x = bidx[b * 2 + j];
          want[(b * 2 + j) * 3 * L + k] =
              x >= 0 && x < 7 ? init[(b * 7 + x) * 3 * L + k] : 0;
        }
    expect_values("ResourceGather batch_dims", dtype, got, want, n);
    TF_DeleteTensor(out);
    TF_DeleteTensor(bind);

    if (registered_for2("ResourceGatherNd", dtype, itype)) {
      int64_t ndims[] = {3, 2}, nidx[6] = {3, 6, 0, 0, 4, 1};
      TF_Tensor *nind = index_tensor(itype, ndims, 2, nidx);
      TF_Tensor *nin[2] = {var, nind};
      ck_assert_msg(run_out("ResourceGatherNd", attrs, 1, nin, 2, &out, st) ==
                        TF_OK,
                    "ResourceGatherNd %s: %s", tfocl_type_name(dtype),
                    TF_Message(st));
      n = tensor_values(out, got, MAX_V);
      ck_assert_int_eq(n, 9 * L);
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3 * L; k++) {
          int64_t a = nidx[2 * j], b = nidx[2 * j + 1];
          want[j * 3 * L + k] = a >= 0 && a < 4 && b >= 0 && b < 7
                                    ? init[(a * 7 + b) * 3 * L + k]
                                    : 0;
        }
      expect_values("ResourceGatherNd", dtype, got, want, n);
      TF_DeleteTensor(out);
      TF_DeleteTensor(nind);
      int64_t edims[] = {0, 1};
      TF_Tensor *eind = index_tensor(itype, edims, 2, NULL);
      TF_Tensor *ein[2] = {var, eind};
      ck_assert_msg(run_out("ResourceGatherNd", attrs, 1, ein, 2, &out, st) ==
                        TF_OK,
                    "%s", TF_Message(st));
      ck_assert_int_eq(TF_NumDims(out), 3);
      ck_assert_int_eq(TF_Dim(out, 0), 0);
      TF_DeleteTensor(out);
      TF_DeleteTensor(eind);
    }
    TF_DeleteTensor(ind);
    TF_DeleteTensor(var);
  }
  ck_assert(tested > 0);
  TF_DeleteStatus(st);
}
END_TEST

/* ResourceStridedSliceAssign: strides, negative strides, broadcast value,
 * shrink and new axis, an empty slice; every registered dtype. */
START_TEST(strided_slice_assign)
{
  static double init[MAX_V], val[MAX_V], want[MAX_V], got[MAX_V];
  TF_Status *st = TF_NewStatus();
  int tested = 0;
  for (int t = 0; t < NUM_SPARSE_TYPES; t++) {
    TF_DataType dtype = sparse_types[t];
    if (!registered_for("ResourceStridedSliceAssign", dtype))
      continue;
    tested++;
    int L = lanes_of(dtype);
    int64_t vdims[] = {5, 6};
    fill_values(init, 30, dtype, 61u + (unsigned)t);
    TF_Tensor *var = sparse_var(dtype, vdims, 2, init);
    memcpy(want, init, sizeof(double) * (size_t)(30 * L));
    static const struct {
      int64_t begin[2], end[2], strides[2];
      int v_rank;
      int64_t v_dims[3];
      int64_t shrink, new_axis;
      /* the elements written: count, then (row, col, value index) */
      int count;
      int64_t at[12][3];
    } cases[] = {
        /* var[1:4, 0:6:2] = [3, 3] */
        {{1, 0}, {4, 6}, {1, 2}, 2, {3, 3}, 0, 0, 9,
         {{1, 0, 0}, {1, 2, 1}, {1, 4, 2}, {2, 0, 3}, {2, 2, 4}, {2, 4, 5},
          {3, 0, 6}, {3, 2, 7}, {3, 4, 8}}},
        /* var[4:0:-2, 5:0:-3] = [2, 2] */
        {{4, 5}, {0, 0}, {-2, -3}, 2, {2, 2}, 0, 0, 4,
         {{4, 5, 0}, {4, 2, 1}, {2, 5, 2}, {2, 2, 3}}},
        /* var[0:2, 1:5] = [4] (broadcast over rows) */
        {{0, 1}, {2, 5}, {1, 1}, 1, {4}, 0, 0, 8,
         {{0, 1, 0}, {0, 2, 1}, {0, 3, 2}, {0, 4, 3}, {1, 1, 0}, {1, 2, 1},
          {1, 3, 2}, {1, 4, 3}}},
        /* var[3, 2:5] = [1, 3] (shrink row, a leading 1 in the value) */
        {{3, 2}, {4, 5}, {1, 1}, 2, {1, 3}, 1, 0, 3,
         {{3, 2, 0}, {3, 3, 1}, {3, 4, 2}}},
        /* var[tf.newaxis, 2:3] = [1, 1]: broadcast over [1, 1, 6] */
        {{0, 2}, {0, 3}, {1, 1}, 2, {1, 1}, 0, 1, 6,
         {{2, 0, 0}, {2, 1, 0}, {2, 2, 0}, {2, 3, 0}, {2, 4, 0}, {2, 5, 0}}},
        /* var[2:2, :] = [0, 6]: nothing */
        {{2, 0}, {2, 6}, {1, 1}, 2, {0, 6}, 0, 0, 0, {{0}}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
      int64_t two[] = {2}, count = 1;
      for (int d = 0; d < cases[c].v_rank; d++)
        count *= cases[c].v_dims[d];
      fill_values(val, count, dtype, 71u + (unsigned)(t * 10 + (int)c));
      TF_Tensor *b = index_tensor(TF_INT32, two, 1, cases[c].begin);
      TF_Tensor *e = index_tensor(TF_INT32, two, 1, cases[c].end);
      TF_Tensor *s = index_tensor(TF_INT32, two, 1, cases[c].strides);
      TF_Tensor *v = values_tensor(dtype, cases[c].v_dims, cases[c].v_rank,
                                   val);
      struct tfocl_attr attrs[] = {
          TFOCL_ATTR_I("shrink_axis_mask", cases[c].shrink),
          TFOCL_ATTR_I("new_axis_mask", cases[c].new_axis)};
      TF_Tensor *in[5] = {var, b, e, s, v};
      ck_assert_msg(run("ResourceStridedSliceAssign", attrs, 2, in, 5, st) ==
                        TF_OK,
                    "case %zu %s: %s", c, tfocl_type_name(dtype),
                    TF_Message(st));
      for (int i = 0; i < cases[c].count; i++)
        for (int l = 0; l < L; l++)
          want[(cases[c].at[i][0] * 6 + cases[c].at[i][1]) * L + l] =
              val[cases[c].at[i][2] * L + l];
      var_values(var, got, MAX_V);
      expect_values("ResourceStridedSliceAssign", dtype, got, want, 30 * L);
      TF_DeleteTensor(v);
      TF_DeleteTensor(s);
      TF_DeleteTensor(e);
      TF_DeleteTensor(b);
    }
    TF_DeleteTensor(var);
  }
  ck_assert(tested > 0);
  TF_DeleteStatus(st);
}
END_TEST

/* TensorFlow's errors, in its words (resource_variable_ops.cc,
 * scatter_nd_op.cc, gather_nd_op.h, strided_slice_op.cc). */
START_TEST(sparse_errors)
{
  static const double v12[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  int64_t d43[] = {4, 3}, d1[] = {1}, d2[] = {2}, d12[] = {1, 2},
          d22[] = {2, 2}, d13[] = {1, 3}, d21[] = {2, 1}, d23[] = {2, 3},
          d13x[] = {1, 3};
  int64_t one[] = {1}, idx2[] = {1, 2}, idx3[] = {1, 1, 1}, i21[] = {1, 3};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *var = sparse_var(TF_FLOAT, d43, 2, v12);
  TF_Tensor *i1 = index_tensor(TF_INT32, d1, 1, one);
  TF_Tensor *u2 = values_tensor(TF_FLOAT, d2, 1, v12);
  TF_Tensor *u12 = values_tensor(TF_FLOAT, d12, 2, v12);
  TF_Tensor *uh = values_tensor(TF_HALF, d13, 2, v12);
  TF_Tensor *in[3] = {var, i1, u2};

  ck_assert_int_eq(run("ResourceScatterAdd", NULL, 0, in, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "Must have updates.shape = indices.shape + "
                    "params.shape[1:] or updates.shape = [], got "
                    "updates.shape [2], indices.shape [1], params.shape "
                    "[4,3]");
  /* Trailing dims that differ from the variable's (TensorFlow would write
   * out of bounds): the same message. */
  in[2] = u12;
  ck_assert_int_eq(run("ResourceScatterMul", NULL, 0, in, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "Must have updates.shape");
  in[2] = uh;
  ck_assert_int_eq(run("ResourceScatterUpdate", NULL, 0, in, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "DType of scatter resource and updates does not match.");
  TF_Tensor *i12 = index_tensor(TF_INT32, d12, 2, idx2);
  TF_Tensor *u213 = values_tensor(TF_FLOAT, (int64_t[]){2, 1, 3}, 3, v12);
  TF_Tensor *inp[3] = {var, i12, u213};
  ck_assert_int_eq(run("ResourceScatterSub", NULL, 0, inp, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "The shape of indices ([1,2]) must be a prefix of the "
                    "shape of updates ([2,1,3])");

  /* ScatterNd */
  TF_Tensor *n21 = index_tensor(TF_INT32, d21, 2, i21);
  TF_Tensor *u22 = values_tensor(TF_FLOAT, d22, 2, v12);
  TF_Tensor *u13 = values_tensor(TF_FLOAT, d13x, 2, v12);
  TF_Tensor *nd[3] = {var, n21, u22};
  ck_assert_int_eq(run("ResourceScatterNdAdd", NULL, 0, nd, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "Dimensions [1,2) of input[shape=[4,3]] must match "
                    "dimensions [1,2) of updates[shape=[2,2]]");
  nd[2] = u13;
  ck_assert_int_eq(run("ResourceScatterNdUpdate", NULL, 0, nd, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "Dimensions [0,1) of indices[shape=[2,1]] = 2 must "
                    "match dimensions [0,1) of updates[shape=[1,3]] = 1");
  TF_Tensor *n13 = index_tensor(TF_INT32, d13, 2, idx3);
  TF_Tensor *u1 = values_tensor(TF_FLOAT, d1, 1, v12);
  TF_Tensor *nd3[3] = {var, n13, u1};
  ck_assert_int_eq(run("ResourceScatterNdSub", NULL, 0, nd3, 3, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "Dimensions [3,2) of input[shape=[4,3]] must match "
                    "dimensions [3,1) of updates[shape=[1]]");

  /* Gathers */
  TF_Tensor *scalar = sparse_var(TF_FLOAT, NULL, 0, v12);
  struct tfocl_attr fa[] = {TFOCL_ATTR_T("dtype", TF_FLOAT)};
  TF_Tensor *g[2] = {scalar, i1};
  ck_assert_int_eq(run_out("ResourceGather", fa, 1, g, 2, NULL, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "params must be at least 1 dimensional");
  ck_assert_int_eq(run_out("ResourceGatherNd", fa, 1, g, 2, NULL, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "params must be at least a vector");
  TF_Tensor *gnd[2] = {var, n13};
  ck_assert_int_eq(run_out("ResourceGatherNd", fa, 1, gnd, 2, NULL, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "index innermost dimension length must be <= params "
                    "rank; saw: 3 vs. 2");
  struct tfocl_attr neg[] = {TFOCL_ATTR_T("dtype", TF_FLOAT),
                             TFOCL_ATTR_I("batch_dims", -1)};
  g[0] = var;
  ck_assert_int_eq(run_out("ResourceGather", neg, 2, g, 2, NULL, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "batch_dims is negative (-1)");
  struct tfocl_attr hf[] = {TFOCL_ATTR_T("dtype", TF_HALF)};
  ck_assert_int_eq(run_out("ResourceGather", hf, 1, g, 2, NULL, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "wrong dtype");

  /* Strided assignment */
  int64_t b0[] = {1, 0}, e0[] = {3, 3}, s0[] = {1, 2}, s00[] = {1, 0};
  TF_Tensor *b = index_tensor(TF_INT32, d2, 1, b0);
  TF_Tensor *e = index_tensor(TF_INT32, d2, 1, e0);
  TF_Tensor *s = index_tensor(TF_INT32, d2, 1, s0);
  TF_Tensor *sz = index_tensor(TF_INT32, d2, 1, s00);
  TF_Tensor *v23 = values_tensor(TF_FLOAT, d23, 2, v12);
  TF_Tensor *v22d = values_tensor(TF_DOUBLE, d22, 2, v12);
  TF_Tensor *sa[5] = {var, b, e, s, v23};
  ck_assert_int_eq(run("ResourceStridedSliceAssign", NULL, 0, sa, 5, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "Cannot broadcast input shape [2,3] into final shape "
                    "[2,2]");
  sa[4] = v22d;
  ck_assert_int_eq(run("ResourceStridedSliceAssign", NULL, 0, sa, 5, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "l-value dtype float does not match r-value dtype "
                    "double");
  sa[3] = sz;
  sa[4] = u22;
  ck_assert_int_eq(run("ResourceStridedSliceAssign", NULL, 0, sa, 5, st),
                   TF_INVALID_ARGUMENT);
  ck_assert_has(st, "strides[1] must be non-zero");

  /* A variable never assigned. */
  TF_Tensor *uninit =
      tfocl_variable_create_uninitialized(device, TF_FLOAT, st);
  TF_Tensor *un[3] = {uninit, i1, u13};
  ck_assert_int_ne(run("ResourceScatterAdd", NULL, 0, un, 3, st), TF_OK);
  ck_assert_has(st, "Could not find variable ");

  /* Nothing above changed the variable. */
  double got[12];
  var_values(var, got, 12);
  for (int i = 0; i < 12; i++)
    ck_assert(got[i] == v12[i]);

  TF_Tensor *all[] = {uninit, v22d, v23, sz, s, e, b, n13, u1, u13, u22,
                      n21, u213, i12, scalar, uh, u12, u2, i1, var};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    TF_DeleteTensor(all[i]);
  TF_DeleteStatus(st);
}
END_TEST

/* Sparse access turns the variable to copy-on-read (TensorFlow's
 * EnsureSparseVariableAccess): a value read before a scatter keeps its
 * contents, the scatter writes the variable in place, and reads after it
 * get copies. */
START_TEST(sparse_copy_on_read)
{
  static const double init[] = {1, 2, 3, 4, 5, 6}, upd[] = {10, 20, 30};
  int64_t dims[] = {2, 3}, idims[] = {1}, udims[] = {1, 3}, one[] = {1};
  double got[6];
  TF_Status *st = TF_NewStatus();
  TF_Tensor *var = sparse_var(TF_FLOAT, dims, 2, init);
  TF_Tensor *before = tfocl_variable_value(var, st);
  ck_assert_msg(before != NULL, "%s", TF_Message(st));
  TF_Tensor *ind = index_tensor(TF_INT64, idims, 1, one);
  TF_Tensor *val = values_tensor(TF_FLOAT, udims, 2, upd);
  TF_Tensor *in[3] = {var, ind, val};
  ck_assert_msg(run("ResourceScatterAdd", NULL, 0, in, 3, st) == TF_OK, "%s",
                TF_Message(st));
  tensor_values(before, got, 6);
  for (int i = 0; i < 6; i++)
    ck_assert(got[i] == init[i]);
  TF_Tensor *after = tfocl_variable_value(var, st);
  ck_assert_msg(after != NULL, "%s", TF_Message(st));
  ck_assert_msg(run("ResourceScatterAdd", NULL, 0, in, 3, st) == TF_OK, "%s",
                TF_Message(st));
  /* `after` is a copy: the second scatter does not show in it. */
  tensor_values(after, got, 6);
  ck_assert(got[3] == 14 && got[5] == 36);
  var_values(var, got, 6);
  ck_assert(got[3] == 24 && got[5] == 66 && got[0] == 1);
  TF_DeleteTensor(after);
  TF_DeleteTensor(val);
  TF_DeleteTensor(ind);
  TF_DeleteTensor(before);
  TF_DeleteTensor(var);
  TF_DeleteStatus(st);
}
END_TEST

/* ---- without kernels_experimental.h ----------------------------------------- */

START_TEST(missing_api_fails_clearly)
{
  static const double v[] = {1, 2};
  int64_t dims[] = {2};
  double got[2];
  TF_Status *st = TF_NewStatus();
  ck_assert_msg(registered("AssignAddVariableOp"),
                "AssignAddVariableOp must be registered to keep TensorFlow's "
                "DEFAULT kernel off device memory");
  ck_assert(registered("AssignSubVariableOp"));
  /* The optimizers are stand-ins (plugin/graph/init.c) that keep them on
   * the device for the graph rewrite, and fail when reached. */
  ck_assert(registered("ResourceApplyAdam"));
  ck_assert(registered("ResourceApplyGradientDescent"));
  ck_assert(registered("ResourceApplyMomentum"));
  /* No stand-in for Keras' momentum: tfocl's Python side keeps Keras' ops
   * where OPENCL has no kernel for it. */
  ck_assert(!registered("ResourceApplyKerasMomentum"));
  /* Keras' Adam op exists only where it can update in place. */
  ck_assert(!registered("_TfoclKerasAdam"));
  ck_assert(!registered("AssignVariableOp"));
  static const char *const sparse_ops[] = {
      "ResourceGather", "ResourceGatherNd", "ResourceScatterAdd",
      "ResourceScatterUpdate", "ResourceScatterNdAdd",
      "ResourceStridedSliceAssign"};
  for (size_t i = 0; i < sizeof(sparse_ops) / sizeof(sparse_ops[0]); i++)
    ck_assert_msg(!registered(sparse_ops[i]), "%s is registered",
                  sparse_ops[i]);
  /* The segment reductions need no variable. */
  ck_assert(registered("UnsortedSegmentSum"));

  TF_Tensor *var = new_var(TF_FLOAT, dims, 1, v);
  TF_Tensor *value = host_tensor(TF_FLOAT, dims, 1, v);
  TF_Tensor *in[2] = {var, value};
  ck_assert_int_eq(run("AssignAddVariableOp", NULL, 0, in, 2, st),
                   TF_UNIMPLEMENTED);
  ck_assert_has(st, "TF_AssignUpdateVariable");
  ck_assert_has(st, "tensorflow#126374");
  ck_assert_has(st, "2.19");
  ck_assert_int_eq(run("AssignSubVariableOp", NULL, 0, in, 2, st),
                   TF_UNIMPLEMENTED);
  TF_Tensor *alpha = host_scalar(TF_FLOAT, 0.5);
  TF_Tensor *gd[3] = {var, alpha, value};
  ck_assert_int_eq(run("ResourceApplyGradientDescent", NULL, 0, gd, 3, st),
                   TF_UNIMPLEMENTED);
  ck_assert_has(st, "kernels_experimental.h");
  ck_assert_has(st, "tf.function");
  TF_DeleteTensor(alpha);
  /* The variable is untouched. */
  read_var(var, got, 2);
  ck_assert(got[0] == 1 && got[1] == 2);
  TF_DeleteTensor(value);
  TF_DeleteTensor(var);
  TF_DeleteStatus(st);
}
END_TEST

int main(void)
{
  const char *path = getenv("TFOCL_PLUGIN");
  const char *hide = getenv("TFOCL_HIDE_TF_EXPERIMENTAL");
  bool hidden = hide != NULL && strcmp(hide, "1") == 0;
  TF_Status *status = TF_NewStatus();
  if (path == NULL) {
    fprintf(stderr, "TFOCL_PLUGIN is not set\n");
    return EXIT_FAILURE;
  }
  plugin = tfocl_plugin_load(path, status);
  if (plugin == NULL) {
    fprintf(stderr, "loading %s: %s\n", path, TF_Message(status));
    return EXIT_FAILURE;
  }
  if (tfocl_plugin_device_count(plugin, status) < 1) {
    fprintf(stderr, "no OpenCL device: skipped\n");
    tfocl_plugin_unload(plugin);
    TF_DeleteStatus(status);
    return 77;
  }
  device = tfocl_device_open(plugin, 0, status);
  if (device == NULL) {
    fprintf(stderr, "opening device 0: %s\n", TF_Message(status));
    return EXIT_FAILURE;
  }

  tfocl_device_poison_outputs(device, true);

  Suite *s = suite_create("variables");
  TCase *tc = tcase_create("variables");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, updates_registered_for_every_default_dtype);
  if (hidden) {
    tcase_add_test(tc, missing_api_fails_clearly);
  } else {
    tcase_add_loop_test(tc, assign_add_sub, 0, NUM_UPDATE_TYPES * NUM_SHAPES);
    tcase_add_loop_test(tc, assign_add_sub_complex, 0, 2);
    tcase_add_test(tc, update_copies_shared_buffer);
    tcase_add_test(tc, assign_variable_op);
    tcase_add_test(tc, update_errors);
    tcase_add_loop_test(tc, gradient_descent, 0, 4);
    tcase_add_loop_test(tc, momentum, 0, 16);
    tcase_add_loop_test(tc, adam, 0, 8);
    tcase_add_loop_test(tc, keras_adam, 0, 2);
    tcase_add_test(tc, optimizer_errors);
  }
  suite_add_tcase(s, tc);
  /* Kernels launched from two host threads at once: a case of its own,
   * tagged, so that a simulator which takes one host thread (Oclgrind)
   * runs every other case (CK_EXCLUDE_TAGS=threads). */
  if (!hidden) {
    TCase *threads = tcase_create("threads");
    tcase_set_tags(threads, "threads");
    tcase_set_timeout(threads, 300);
    tcase_add_test(threads, lock_order);
    suite_add_tcase(s, threads);
  }
  /* The sparse ops: a case of their own (CK_RUN_CASE=sparse). */
  if (!hidden) {
    TCase *sparse = tcase_create("sparse");
    tcase_set_timeout(sparse, 300);
    tcase_add_loop_test(sparse, resource_scatter, 0, 2 * NUM_SCATTER_OPS);
    tcase_add_test(sparse, resource_scatter_add_deterministic);
    tcase_add_loop_test(sparse, resource_scatter_nd, 0, 6);
    tcase_add_loop_test(sparse, resource_gather, 0, 2);
    tcase_add_test(sparse, strided_slice_assign);
    tcase_add_test(sparse, sparse_errors);
    tcase_add_test(sparse, sparse_copy_on_read);
    suite_add_tcase(s, sparse);
  }
  SRunner *sr = srunner_create(s);
  /* The device lives in this process: OpenCL state does not survive fork. */
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);

  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
  TF_DeleteStatus(status);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
