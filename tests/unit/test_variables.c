/* The shim's resource variables and kernels_experimental.h against the stub
 * plugin, whose device memory is host memory: test kernels registered here
 * update variables on the host through TF_AssignUpdateVariable,
 * TF_MaybeLockVariableInputMutexesInOrder and TF_GetInputTensorFromVariable,
 * so copy-on-write, lock holders and handle lifetime are checked without
 * OpenCL. */
#include <pthread.h>
#include <unistd.h>

#include "tensorflow/c/kernels_experimental.h"
#include "test_util.h"

static struct tfocl_plugin *plugin;
static struct tfocl_device *device;
static int copies;        /* copy_fn calls */
static void *seen[2];     /* TestLockTwo: the tensors' data it got */
static bool test_sparse;  /* TestLockTwo: ask for sparse access */

/* ---- test kernels (device type STUB: device memory is host memory) ------- */

static void copy_fn(TF_OpKernelContext *ctx, TF_Tensor *source, TF_Tensor *dest)
{
  (void)ctx;
  copies++;
  memcpy(TF_TensorData(dest), TF_TensorData(source), TF_TensorByteSize(dest));
  TF_DeleteTensor(source);
  TF_DeleteTensor(dest);
}

static void update_fn(TF_OpKernelContext *ctx, TF_Tensor *tensor,
                      TF_Tensor *value, int op)
{
  float *t = TF_TensorData(tensor);
  const float *v = TF_TensorData(value);
  (void)ctx;
  for (int64_t i = 0; i < TF_TensorElementCount(tensor); i++)
    t[i] = op == 1 ? t[i] - v[i] : t[i] + v[i];
  TF_DeleteTensor(tensor);
  TF_DeleteTensor(value);
}

static void assign_add_compute(void *kernel, TF_OpKernelContext *ctx)
{
  TF_Status *st = TF_NewStatus();
  (void)kernel;
  TF_AssignUpdateVariable(ctx, 0, 1, 0, 0, copy_fn, update_fn, st);
  if (TF_GetCode(st) != TF_OK)
    TF_OpKernelContext_Failure(ctx, st);
  TF_DeleteStatus(st);
}

static void assign_compute(void *kernel, TF_OpKernelContext *ctx)
{
  TF_Status *st = TF_NewStatus();
  (void)kernel;
  TF_AssignVariable(ctx, 0, 1, true, copy_fn, st);
  if (TF_GetCode(st) != TF_OK)
    TF_OpKernelContext_Failure(ctx, st);
  TF_DeleteStatus(st);
}

/* Locks both resource inputs, fetches their tensors, adds 1 to each. */
static void lock_two_compute(void *kernel, TF_OpKernelContext *ctx)
{
  static const int inputs[] = {0, 1};
  TF_Status *st = TF_NewStatus();
  TF_VariableInputLockHolder *locks = NULL;
  TF_Tensor *t[2] = {NULL, NULL};
  (void)kernel;
  TF_MaybeLockVariableInputMutexesInOrder(ctx, true, test_sparse, inputs, 2,
                                          copy_fn, &locks, st);
  for (int i = 0; i < 2 && TF_GetCode(st) == TF_OK; i++) {
    TF_GetInputTensorFromVariable(ctx, i, true, false, test_sparse, copy_fn,
                                  &t[i], st);
    if (TF_GetCode(st) == TF_OK) {
      seen[i] = TF_TensorData(t[i]);
      ((float *)TF_TensorData(t[i]))[0] += 1;
    }
  }
  if (TF_GetCode(st) != TF_OK)
    TF_OpKernelContext_Failure(ctx, st);
  TF_DeleteTensor(t[0]);
  TF_DeleteTensor(t[1]);
  TF_ReleaseVariableInputLockHolder(locks);
  TF_DeleteStatus(st);
}

static void register_kernel(const char *op,
                            void (*compute)(void *, TF_OpKernelContext *))
{
  TF_Status *st = TF_NewStatus();
  TF_KernelBuilder *b = TF_NewKernelBuilder(op, "STUB", NULL, compute, NULL);
  TF_RegisterKernelBuilder(op, b, st);
  ck_assert_ok(st);
  TF_DeleteStatus(st);
}

static void setup(void)
{
  TF_Status *st = TF_NewStatus();
  plugin = tfocl_plugin_load(stub_path("ok"), st);
  ck_assert_ok(st);
  device = tfocl_device_open(plugin, 0, st);
  ck_assert_ok(st);
  if (!tfocl_op_def_exists("TestAssignAdd")) {
    tfocl_op_def_add("TestAssignAdd", "resource: resource, value: float", "",
                     "", st);
    ck_assert_ok(st);
    tfocl_op_def_add("TestAssign", "resource: resource, value: float", "", "",
                     st);
    ck_assert_ok(st);
    tfocl_op_def_add("TestLockTwo", "a: resource, b: resource", "", "", st);
    ck_assert_ok(st);
    register_kernel("TestAssignAdd", assign_add_compute);
    register_kernel("TestAssign", assign_compute);
    register_kernel("TestLockTwo", lock_two_compute);
  }
  copies = 0;
  test_sparse = false;
  TF_DeleteStatus(st);
}

static void teardown(void)
{
  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
}

/* ---- helpers -------------------------------------------------------------- */

static TF_Tensor *floats(const float *v, int64_t n)
{
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, &n, 1, sizeof(float) * n);
  memcpy(TF_TensorData(t), v, sizeof(float) * n);
  return t;
}

static float read0(const TF_Tensor *var, int i)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *h = tfocl_variable_read(var, st);
  ck_assert_ok(st);
  float x = ((float *)TF_TensorData(h))[i];
  TF_DeleteTensor(h);
  TF_DeleteStatus(st);
  return x;
}

static void run2(const char *op, TF_Tensor *a, TF_Tensor *b, TF_Status *st)
{
  TF_Tensor *in[2] = {a, b};
  tfocl_run_op(device, op, NULL, 0, in, 2, NULL, 0, NULL, st);
}

/* ---- tests ------------------------------------------------------------------- */

START_TEST(create_read_assign)
{
  static const float a[] = {1, 2, 3}, b[] = {4, 5};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *ha = floats(a, 3), *hb = floats(b, 2);
  TF_Tensor *var = tfocl_variable_create(device, ha, st);
  ck_assert_ok(st);
  ck_assert_int_eq(TF_TensorType(var), TF_RESOURCE);
  ck_assert_int_eq(TF_NumDims(var), 0);
  ck_assert(!tfocl_tensor_on_device(var));
  ck_assert(tfocl_variable_is_initialized(var));
  ck_assert_ptr_nonnull(tfocl_variable_name(var));
  ck_assert(read0(var, 2) == 3.0f);

  /* Any shape, same dtype. */
  tfocl_variable_assign(var, hb, st);
  ck_assert_ok(st);
  ck_assert(read0(var, 1) == 5.0f);
  int64_t one = 1;
  TF_Tensor *i64 = TF_AllocateTensor(TF_INT64, &one, 1, 8);
  tfocl_variable_assign(var, i64, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "Trying to assign variable with wrong dtype. "
                        "Expected float got int64");

  /* Not a handle. */
  ck_assert_ptr_null(tfocl_variable_read(ha, st));
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_ptr_null(tfocl_variable_name(ha));
  ck_assert_ptr_null(tfocl_variable_create(device, NULL, st));
  ck_assert_status(st, TF_INVALID_ARGUMENT);

  TF_DeleteTensor(i64);
  TF_DeleteTensor(var);
  TF_DeleteTensor(ha);
  TF_DeleteTensor(hb);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(uninitialized)
{
  static const float a[] = {1, 2};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *var = tfocl_variable_create_uninitialized(device, TF_FLOAT, st);
  TF_Tensor *h = floats(a, 2);
  ck_assert_ok(st);
  ck_assert(!tfocl_variable_is_initialized(var));
  ck_assert_ptr_null(tfocl_variable_read(var, st));
  ck_assert_status(st, TF_FAILED_PRECONDITION);
  ck_assert_msg_has(st, "Could not find variable Variable_");
  ck_assert_msg_has(st, "it can also mean the variable is uninitialized");
  ck_assert_ptr_null(tfocl_variable_value(var, st));
  ck_assert_status(st, TF_FAILED_PRECONDITION);
  run2("TestAssignAdd", var, h, st);
  ck_assert_status(st, TF_FAILED_PRECONDITION);
  run2("TestLockTwo", var, var, st);
  ck_assert_status(st, TF_FAILED_PRECONDITION);
  /* TF_AssignVariable creates it. */
  run2("TestAssign", var, h, st);
  ck_assert_ok(st);
  ck_assert(read0(var, 1) == 2.0f);
  TF_DeleteTensor(h);
  TF_DeleteTensor(var);
  TF_DeleteStatus(st);
}
END_TEST

/* An update copies only while someone else references the buffer. */
START_TEST(copy_on_write)
{
  static const float a[] = {1, 2, 3}, one[] = {1, 1, 1};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *h = floats(a, 3), *inc = floats(one, 3);
  TF_Tensor *var = tfocl_variable_create(device, h, st);
  ck_assert_ok(st);

  run2("TestAssignAdd", var, inc, st);
  ck_assert_ok(st);
  ck_assert_int_eq(copies, 0);
  ck_assert(read0(var, 0) == 2.0f);

  TF_Tensor *held = tfocl_variable_value(var, st);
  ck_assert_ok(st);
  ck_assert(tfocl_tensor_on_device(held));
  run2("TestAssignAdd", var, inc, st);
  ck_assert_ok(st);
  ck_assert_int_eq(copies, 1);
  ck_assert(read0(var, 0) == 3.0f);
  ck_assert(((float *)TF_TensorData(held))[0] == 2.0f); /* stub: host memory */

  /* The variable's new buffer is its own: no further copy. */
  run2("TestAssignAdd", var, inc, st);
  ck_assert_ok(st);
  ck_assert_int_eq(copies, 1);
  ck_assert(((float *)TF_TensorData(held))[0] == 2.0f);

  /* An assigned device tensor is shared, so the next update copies. */
  TF_Tensor *d = tfocl_tensor_to_device(device, h, st);
  ck_assert_ok(st);
  tfocl_variable_assign(var, d, st);
  ck_assert_ok(st);
  TF_Tensor *v = tfocl_variable_value(var, st);
  ck_assert_ptr_eq(TF_TensorData(v), TF_TensorData(d));
  TF_DeleteTensor(v);
  run2("TestAssignAdd", var, inc, st);
  ck_assert_int_eq(copies, 2);
  ck_assert(((float *)TF_TensorData(d))[0] == 1.0f);
  ck_assert(read0(var, 0) == 2.0f);

  /* Shape and dtype errors. */
  TF_Tensor *two = floats(one, 2);
  run2("TestAssignAdd", var, two, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "Cannot update variable with shape [3] using a "
                        "Tensor with shape [2], shapes must be equal.");
  run2("TestAssign", var, two, st); /* validate_shape = true */
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "Expected [3] got [2]");

  TF_DeleteTensor(two);
  TF_DeleteTensor(d);
  TF_DeleteTensor(held);
  TF_DeleteTensor(var);
  TF_DeleteTensor(inc);
  TF_DeleteTensor(h);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(lock_holder)
{
  static const float a[] = {0, 0}, b[] = {10, 10};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *ha = floats(a, 2), *hb = floats(b, 2);
  TF_Tensor *va = tfocl_variable_create(device, ha, st);
  TF_Tensor *vb = tfocl_variable_create(device, hb, st);
  ck_assert_ok(st);

  run2("TestLockTwo", va, vb, st);
  ck_assert_ok(st);
  run2("TestLockTwo", vb, va, st);
  ck_assert_ok(st);
  ck_assert(read0(va, 0) == 2.0f && read0(vb, 0) == 12.0f);
  ck_assert_int_eq(copies, 0);
  /* The same variable twice: locked once (no self-deadlock). */
  run2("TestLockTwo", va, va, st);
  ck_assert_ok(st);

  /* Sparse access turns on copy-on-read: reads copy from then on. */
  test_sparse = true;
  run2("TestLockTwo", vb, vb, st);
  ck_assert_ok(st);
  TF_Tensor *v = tfocl_variable_value(vb, st);
  ck_assert_ok(st);
  ck_assert_ptr_ne(TF_TensorData(v), seen[0]);
  ck_assert(((float *)TF_TensorData(v))[0] == 14.0f);
  TF_DeleteTensor(v);

  /* A non-handle where a resource is expected. */
  run2("TestAssignAdd", ha, ha, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_DeleteTensor(va);
  TF_DeleteTensor(vb);
  TF_DeleteTensor(ha);
  TF_DeleteTensor(hb);
  TF_DeleteStatus(st);
}
END_TEST

/* The variable (and its device buffer) lives as long as any handle. */
START_TEST(lifetime)
{
  static const float a[] = {7};
  char path[] = "/tmp/tfocl_var_log_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  setenv("TFOCL_STUB_LOG", path, 1);
  setenv("TFOCL_STUB_LOG_MEM", "1", 1);

  TF_Status *st = TF_NewStatus();
  TF_Tensor *h = floats(a, 1);
  TF_Tensor *var = tfocl_variable_create(device, h, st);
  ck_assert_ok(st);
  TF_Tensor *copy = tfocl_tensor_to_host(var, st); /* another reference */
  ck_assert_ok(st);
  TF_DeleteTensor(var);
  ck_assert(read0(copy, 0) == 7.0f);
  TF_DeleteTensor(copy);
  TF_DeleteTensor(h);
  TF_DeleteStatus(st);
  unsetenv("TFOCL_STUB_LOG");
  unsetenv("TFOCL_STUB_LOG_MEM");

  int allocs = 0, frees = 0;
  char line[128];
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof(line), f) != NULL) {
    allocs += strcmp(line, "allocate\n") == 0;
    frees += strcmp(line, "deallocate\n") == 0;
  }
  fclose(f);
  unlink(path);
  ck_assert_int_gt(allocs, 0);
  ck_assert_int_eq(allocs, frees);
}
END_TEST

static Suite *variables_suite(void)
{
  Suite *s = suite_create("variables");
  TCase *tc = tcase_create("variables");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, create_read_assign);
  tcase_add_test(tc, uninitialized);
  tcase_add_test(tc, copy_on_write);
  tcase_add_test(tc, lock_holder);
  tcase_add_test(tc, lifetime);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(variables_suite()); }
