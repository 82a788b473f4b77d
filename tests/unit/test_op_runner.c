/* The op runner against the stub plugin's kernels: real compute, memory
 * types, kernel selection and its errors. */
#include <pthread.h>

#include "test_util.h"

static struct tfocl_plugin *plugin;
static struct tfocl_device *device;

static void setup(void)
{
  TF_Status *st = TF_NewStatus();
  plugin = tfocl_plugin_load(stub_path("ok"), st);
  ck_assert_ok(st);
  device = tfocl_device_open(plugin, 0, st);
  ck_assert_ok(st);
  tfocl_op_def_add("StubAdd", "x: T, y: T", "z: T", "T: type", st);
  ck_assert_ok(st);
  tfocl_op_def_add("StubScale", "x: T", "y: T", "T: type, scale: float", st);
  ck_assert_ok(st);
  tfocl_op_def_add("StubFail", "", "", "", st);
  tfocl_op_def_add("StubNoOutput", "", "out: float", "", st);
  tfocl_op_def_add("StubCtorFail", "", "", "", st);
  ck_assert_ok(st);
  TF_DeleteStatus(st);
}

static void teardown(void)
{
  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
}

static TF_Tensor *host_floats(const float *v, int64_t n)
{
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, &n, 1, sizeof(float) * n);
  memcpy(TF_TensorData(t), v, sizeof(float) * n);
  return t;
}

START_TEST(add_runs_on_device)
{
  static const float a[] = {1, 2, 3}, b[] = {10, 20, 30};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *in[2] = {host_floats(a, 3), host_floats(b, 3)};
  TF_Tensor *out[1] = {NULL}, *h;
  int n = 0;
  tfocl_run_op(device, "StubAdd", NULL, 0, in, 2, out, 1, &n, st);
  ck_assert_ok(st);
  ck_assert_int_eq(n, 1);
  ck_assert(tfocl_tensor_on_device(out[0]));
  h = tfocl_tensor_to_host(out[0], st);
  ck_assert_ok(st);
  ck_assert(((float *)TF_TensorData(h))[2] == 33.0f);
  TF_DeleteTensor(h);
  TF_DeleteTensor(out[0]);
  TF_DeleteTensor(in[0]);
  TF_DeleteTensor(in[1]);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(device_inputs_are_used_in_place)
{
  static const float a[] = {1, 2};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *h = host_floats(a, 2);
  TF_Tensor *d = tfocl_tensor_to_device(device, h, st);
  TF_Tensor *in[2] = {d, h}; /* one device, one host input */
  TF_Tensor *out[1] = {NULL}, *r;
  tfocl_run_op(device, "StubAdd", NULL, 0, in, 2, out, 1, NULL, st);
  ck_assert_ok(st);
  r = tfocl_tensor_to_host(out[0], st);
  ck_assert(((float *)TF_TensorData(r))[1] == 4.0f);
  TF_DeleteTensor(r);
  TF_DeleteTensor(out[0]);
  TF_DeleteTensor(d);
  TF_DeleteTensor(h);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(host_memory_output_and_attr)
{
  static const float a[] = {1, 2};
  TF_Status *st = TF_NewStatus();
  struct tfocl_attr attrs[] = {TFOCL_ATTR_F("scale", 3.0f)};
  TF_Tensor *in[1] = {host_floats(a, 2)};
  TF_Tensor *out[1] = {NULL};
  tfocl_run_op(device, "StubScale", attrs, 1, in, 1, out, 1, NULL, st);
  ck_assert_ok(st);
  ck_assert(!tfocl_tensor_on_device(out[0]));
  ck_assert(((float *)TF_TensorData(out[0]))[1] == 6.0f);
  TF_DeleteTensor(out[0]);
  TF_DeleteTensor(in[0]);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(unknown_op)
{
  TF_Status *st = TF_NewStatus();
  ck_assert_ptr_null(tfocl_op_create(device, "Nope", NULL, 0, NULL, 0, st));
  ck_assert_status(st, TF_NOT_FOUND);
  ck_assert_msg_has(st, "Op type not registered 'Nope'");
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(no_kernel_for_op)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType t[] = {TF_FLOAT};
  ck_assert_ptr_null(tfocl_op_create(device, "Relu", NULL, 0, t, 1, st));
  ck_assert_status(st, TF_NOT_FOUND);
  ck_assert_msg_has(st, "No registered 'Relu' OpKernel for 'STUB' devices "
                        "compatible with node {{node Relu}}");
  ck_assert_msg_has(st, "<no registered kernels>");
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(constraint_mismatch)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType t[] = {TF_DOUBLE, TF_DOUBLE};
  ck_assert_ptr_null(tfocl_op_create(device, "StubAdd", NULL, 0, t, 2, st));
  ck_assert_status(st, TF_NOT_FOUND);
  ck_assert_msg_has(st, "No registered 'StubAdd' OpKernel for 'STUB' devices");
  ck_assert_msg_has(st, "(OpKernel was found, but attributes didn't match) "
                        "Requested Attributes: T=DT_DOUBLE");
  ck_assert_msg_has(st, "device='STUB'; T in [DT_FLOAT]");
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(inconsistent_input_types)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType t[] = {TF_FLOAT, TF_INT32};
  ck_assert_ptr_null(tfocl_op_create(device, "StubAdd", NULL, 0, t, 2, st));
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "Inconsistent values for attr 'T'");
  ck_assert_ptr_null(tfocl_op_create(device, "StubAdd", NULL, 0, t, 1, st));
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(missing_required_attr)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType t[] = {TF_FLOAT};
  ck_assert_ptr_null(tfocl_op_create(device, "StubScale", NULL, 0, t, 1, st));
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "NodeDef missing attr 'scale'");
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(kernel_failure_propagates)
{
  TF_Status *st = TF_NewStatus();
  tfocl_run_op(device, "StubFail", NULL, 0, NULL, 0, NULL, 0, NULL, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_str_eq(TF_Message(st), "StubFail: failing on purpose");
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(unset_output_is_internal)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *out[1] = {NULL};
  tfocl_run_op(device, "StubNoOutput", NULL, 0, NULL, 0, out, 1, NULL, st);
  ck_assert_status(st, TF_INTERNAL);
  ck_assert_msg_has(st, "output 0 was not set");
  ck_assert_ptr_null(out[0]);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(constructor_failure)
{
  TF_Status *st = TF_NewStatus();
  ck_assert_ptr_null(
      tfocl_op_create(device, "StubCtorFail", NULL, 0, NULL, 0, st));
  ck_assert_status(st, TF_UNIMPLEMENTED);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(wrong_input_dtype_at_compute)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType t[] = {TF_FLOAT, TF_FLOAT};
  int64_t n = 1;
  struct tfocl_op *op = tfocl_op_create(device, "StubAdd", NULL, 0, t, 2, st);
  TF_Tensor *in[2] = {TF_AllocateTensor(TF_INT32, &n, 1, 4),
                      TF_AllocateTensor(TF_FLOAT, &n, 1, 4)};
  TF_Tensor *out[1] = {NULL};
  ck_assert_ok(st);
  ck_assert_int_eq(tfocl_op_num_outputs(op), 1);
  tfocl_op_compute(op, in, 2, out, 1, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  tfocl_op_destroy(op);
  TF_DeleteTensor(in[0]);
  TF_DeleteTensor(in[1]);
  TF_DeleteStatus(st);
}
END_TEST

struct thread_arg {
  struct tfocl_op *op;
  int failures;
};

static void *hammer(void *p)
{
  struct thread_arg *a = p;
  TF_Status *st = TF_NewStatus();
  static const float v[] = {1, 2, 3, 4};
  for (int i = 0; i < 200; i++) {
    TF_Tensor *in[2] = {host_floats(v, 4), host_floats(v, 4)};
    TF_Tensor *out[1] = {NULL};
    tfocl_op_compute(a->op, in, 2, out, 1, st);
    a->failures += TF_GetCode(st) != TF_OK;
    TF_DeleteTensor(out[0]);
    TF_DeleteTensor(in[0]);
    TF_DeleteTensor(in[1]);
  }
  TF_DeleteStatus(st);
  return NULL;
}

START_TEST(compute_from_several_threads)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType t[] = {TF_FLOAT, TF_FLOAT};
  struct thread_arg args[4];
  pthread_t th[4];
  struct tfocl_op *op = tfocl_op_create(device, "StubAdd", NULL, 0, t, 2, st);
  ck_assert_ok(st);
  for (int i = 0; i < 4; i++) {
    args[i] = (struct thread_arg){.op = op};
    pthread_create(&th[i], NULL, hammer, &args[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].failures, 0);
  }
  tfocl_op_destroy(op);
  TF_DeleteStatus(st);
}
END_TEST

/* TensorFlow's BFC allocator (2.22) aborts on a sub-allocator region that
 * is not 256-byte aligned; the shim refuses it with an error instead. Runs
 * `op` on stub variant `variant` and expects that refusal naming `call`. */
static void expect_misaligned_refused(const char *variant, const char *op,
                                      const struct tfocl_attr *attrs,
                                      int num_attrs, int num_inputs,
                                      const char *call)
{
  static const float a[] = {1, 2};
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub_path(variant), st);
  struct tfocl_device *d;
  TF_Tensor *in[2] = {host_floats(a, 2), host_floats(a, 2)};
  TF_Tensor *out[1] = {NULL};
  char expected[64];
  ck_assert_ok(st);
  tfocl_op_def_add("StubAdd", "x: T, y: T", "z: T", "T: type", st);
  ck_assert_ok(st);
  tfocl_op_def_add("StubScale", "x: T", "y: T", "T: type, scale: float", st);
  ck_assert_ok(st);
  d = tfocl_device_open(p, 0, st);
  ck_assert_ok(st);
  tfocl_run_op(d, op, attrs, num_attrs, in, num_inputs, out, 1, NULL, st);
  ck_assert_status(st, TF_INTERNAL);
  snprintf(expected, sizeof(expected), "%s returned", call);
  ck_assert_msg_has(st, expected);
  ck_assert_msg_has(st, "not aligned to 256 bytes");
  ck_assert_ptr_null(out[0]);
  TF_DeleteTensor(in[0]);
  TF_DeleteTensor(in[1]);
  tfocl_device_close(d);
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}

START_TEST(misaligned_host_memory_is_refused)
{
  struct tfocl_attr attrs[] = {TFOCL_ATTR_F("scale", 3.0f)};
  /* StubScale's output is in host memory. */
  expect_misaligned_refused("misaligned_host_memory", "StubScale", attrs, 1,
                            1, "host_memory_allocate");
}
END_TEST

START_TEST(misaligned_device_memory_is_refused)
{
  expect_misaligned_refused("misaligned_allocate", "StubAdd", NULL, 0, 2,
                            "allocate");
}
END_TEST

static Suite *runner_suite(void)
{
  Suite *s = suite_create("op_runner");
  TCase *tc = tcase_create("runner");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, add_runs_on_device);
  tcase_add_test(tc, device_inputs_are_used_in_place);
  tcase_add_test(tc, host_memory_output_and_attr);
  tcase_add_test(tc, unknown_op);
  tcase_add_test(tc, no_kernel_for_op);
  tcase_add_test(tc, constraint_mismatch);
  tcase_add_test(tc, inconsistent_input_types);
  tcase_add_test(tc, missing_required_attr);
  tcase_add_test(tc, kernel_failure_propagates);
  tcase_add_test(tc, unset_output_is_internal);
  tcase_add_test(tc, constructor_failure);
  tcase_add_test(tc, wrong_input_dtype_at_compute);
  tcase_add_test(tc, compute_from_several_threads);
  suite_add_tcase(s, tc);
  tc = tcase_create("alignment");
  tcase_add_test(tc, misaligned_host_memory_is_refused);
  tcase_add_test(tc, misaligned_device_memory_is_refused);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(runner_suite()); }
