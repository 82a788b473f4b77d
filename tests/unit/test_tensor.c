/* TF_Tensor: host tensors, views, device tensors on the stub device. */
#include <stdint.h>
#include <unistd.h>

#include "test_util.h"

static int dealloc_calls;
static void count_dealloc(void *data, size_t len, void *arg)
{
  (void)data;
  (void)len;
  (void)arg;
  dealloc_calls++;
}

START_TEST(allocate_tensor_is_aligned_host)
{
  int64_t dims[] = {2, 3};
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims, 2, 24);
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(TF_TensorType(t), TF_FLOAT);
  ck_assert_int_eq(TF_NumDims(t), 2);
  ck_assert_int_eq(TF_Dim(t, 1), 3);
  ck_assert_int_eq(TF_TensorElementCount(t), 6);
  ck_assert_uint_eq(TF_TensorByteSize(t), 24);
  ck_assert(TF_TensorIsAligned(t));
  ck_assert_uint_eq((uintptr_t)TF_TensorData(t) % 64, 0);
  ck_assert(!tfocl_tensor_on_device(t));
  TF_DeleteTensor(t);
}
END_TEST

START_TEST(new_tensor_calls_deallocator_once)
{
  static float data[4];
  int64_t dims[] = {4};
  TF_Tensor *t = TF_NewTensor(TF_FLOAT, dims, 1, data, sizeof(data),
                              count_dealloc, NULL);
  TF_Tensor *u = TF_AllocateTensor(TF_FLOAT, dims, 1, 16);
  TF_Status *st = TF_NewStatus();
  ck_assert_ptr_eq(TF_TensorData(t), data);
  TF_TensorBitcastFrom(t, TF_INT32, u, dims, 1, st);
  ck_assert_ok(st);
  ck_assert_ptr_eq(TF_TensorData(u), data);
  TF_DeleteTensor(t);
  ck_assert_int_eq(dealloc_calls, 0);
  TF_DeleteTensor(u);
  ck_assert_int_eq(dealloc_calls, 1);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(new_tensor_refuses_short_buffer)
{
  static float data[2];
  int64_t dims[] = {4};
  ck_assert_ptr_null(
      TF_NewTensor(TF_FLOAT, dims, 1, data, sizeof(data), NULL, NULL));
}
END_TEST

START_TEST(bitcast_size_mismatch)
{
  int64_t dims[] = {4}, bad[] = {3};
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims, 1, 16);
  TF_Tensor *u = TF_AllocateTensor(TF_FLOAT, dims, 1, 16);
  TF_Status *st = TF_NewStatus();
  TF_TensorBitcastFrom(t, TF_INT32, u, bad, 1, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_DeleteTensor(t);
  TF_DeleteTensor(u);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(set_shape_and_maybe_move)
{
  int64_t dims[] = {6}, nd[] = {2, 3};
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims, 1, 24);
  TF_SetShape(t, nd, 2);
  ck_assert_int_eq(TF_NumDims(t), 2);
  ck_assert_int_eq(TF_Dim(t, 0), 2);
  ck_assert_ptr_eq(TF_TensorMaybeMove(t), t);
  TF_DeleteTensor(t);
}
END_TEST

START_TEST(view_is_interior_pointer)
{
  int64_t dims[] = {8}, vd[] = {2};
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims, 1, 32);
  TF_Status *st = TF_NewStatus();
  TF_Tensor *v = tfocl_tensor_view(t, 8, TF_FLOAT, vd, 1, st);
  ck_assert_ok(st);
  ck_assert_ptr_eq(TF_TensorData(v), (char *)TF_TensorData(t) + 8);
  ck_assert_uint_eq(TF_TensorByteSize(v), 8);
  /* shared: t cannot be moved now */
  ck_assert_ptr_null(TF_TensorMaybeMove(t));
  TF_DeleteTensor(t);
  ((float *)TF_TensorData(v))[1] = 5.0f; /* still alive */
  TF_DeleteTensor(v);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(view_must_fit)
{
  int64_t dims[] = {8}, vd[] = {4};
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims, 1, 32);
  TF_Status *st = TF_NewStatus();
  ck_assert_ptr_null(tfocl_tensor_view(t, 20, TF_FLOAT, vd, 1, st));
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_DeleteTensor(t);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(data_type_sizes_and_names)
{
  TF_DataType t;
  ck_assert_uint_eq(TF_DataTypeSize(TF_FLOAT), 4);
  ck_assert_uint_eq(TF_DataTypeSize(TF_HALF), 2);
  ck_assert_uint_eq(TF_DataTypeSize(TF_COMPLEX128), 16);
  ck_assert_uint_eq(TF_DataTypeSize(TF_STRING), 0);
  ck_assert_str_eq(tfocl_type_name(TF_DOUBLE), "DT_DOUBLE");
  ck_assert_str_eq(tfocl_type_name((TF_DataType)999), "DT_INVALID");
  ck_assert(tfocl_type_from_name("f32", &t) && t == TF_FLOAT);
  ck_assert(tfocl_type_from_name("DT_INT64", &t) && t == TF_INT64);
  ck_assert(tfocl_type_from_name("half", &t) && t == TF_HALF);
  ck_assert(!tfocl_type_from_name("nope", &t));
}
END_TEST

/* ---- device tensors on the stub device --------------------------------- */

static char log_path[64];
static struct tfocl_plugin *plugin;
static struct tfocl_device *device;

static void device_setup(void)
{
  TF_Status *st = TF_NewStatus();
  int fd;
  snprintf(log_path, sizeof(log_path), "/tmp/tfocl-tensor-XXXXXX");
  fd = mkstemp(log_path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  setenv("TFOCL_STUB_LOG", log_path, 1);
  setenv("TFOCL_STUB_LOG_MEM", "1", 1);
  plugin = tfocl_plugin_load(stub_path("ok"), st);
  ck_assert_ok(st);
  device = tfocl_device_open(plugin, 0, st);
  ck_assert_ok(st);
  TF_DeleteStatus(st);
}

static void device_teardown(void)
{
  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
  unlink(log_path);
}

static int count_lines(const char *what)
{
  FILE *f = fopen(log_path, "r");
  char line[256];
  int n = 0;
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = '\0';
    n += strcmp(line, what) == 0;
  }
  fclose(f);
  return n;
}

START_TEST(device_tensor_round_trip)
{
  int64_t dims[] = {3};
  float in[3] = {1, 2, 3};
  TF_Tensor *h = TF_NewTensor(TF_FLOAT, dims, 1, in, sizeof(in), NULL, NULL);
  TF_Status *st = TF_NewStatus();
  TF_Tensor *d = tfocl_tensor_to_device(device, h, st), *back;
  ck_assert_ok(st);
  ck_assert(tfocl_tensor_on_device(d));
  ck_assert_ptr_eq(tfocl_tensor_device(d), device);
  ck_assert_ptr_ne(TF_TensorData(d), in);
  back = tfocl_tensor_to_host(d, st);
  ck_assert_ok(st);
  ck_assert(!tfocl_tensor_on_device(back));
  ck_assert_mem_eq(TF_TensorData(back), in, sizeof(in));
  TF_DeleteTensor(h);
  TF_DeleteTensor(d);
  TF_DeleteTensor(back);
  ck_assert_int_eq(count_lines("allocate"), 1);
  ck_assert_int_eq(count_lines("deallocate"), 1);
  ck_assert_int_eq(count_lines("BAD_DEALLOCATE"), 0);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(device_view_and_copy)
{
  int64_t dims[] = {4}, vd[] = {2};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *d = tfocl_tensor_alloc_device(device, TF_FLOAT, dims, 1, st);
  TF_Tensor *v, *d2;
  ck_assert_ok(st);
  v = tfocl_tensor_view(d, 8, TF_FLOAT, vd, 1, st);
  ck_assert_ok(st);
  ck_assert(tfocl_tensor_on_device(v));
  ck_assert_ptr_eq(TF_TensorData(v), (char *)TF_TensorData(d) + 8);
  d2 = tfocl_tensor_to_device(device, v, st); /* device to device */
  ck_assert_ok(st);
  TF_DeleteTensor(d);
  ck_assert_int_eq(count_lines("deallocate"), 0); /* v keeps it */
  TF_DeleteTensor(v);
  TF_DeleteTensor(d2);
  ck_assert_int_eq(count_lines("allocate"), 2);
  ck_assert_int_eq(count_lines("deallocate"), 2);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(empty_device_tensor_has_host_dummy)
{
  int64_t dims[] = {0, 5};
  TF_Status *st = TF_NewStatus();
  TF_Tensor *a = tfocl_tensor_alloc_device(device, TF_FLOAT, dims, 2, st);
  TF_Tensor *b = tfocl_tensor_alloc_device(device, TF_INT32, dims, 2, st);
  ck_assert_ok(st);
  ck_assert_ptr_nonnull(TF_TensorData(a));
  ck_assert_ptr_eq(TF_TensorData(a), TF_TensorData(b));
  ck_assert_int_eq(TF_TensorElementCount(a), 0);
  TF_DeleteTensor(a);
  TF_DeleteTensor(b);
  ck_assert_int_eq(count_lines("allocate"), 0);
  ck_assert_int_eq(count_lines("deallocate"), 0);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(host_memory_outputs_use_the_plugin_host_allocator)
{
  static const float a[] = {1, 2};
  int64_t n = 2;
  TF_Status *st = TF_NewStatus();
  struct tfocl_attr attrs[] = {TFOCL_ATTR_F("scale", 2.0f)};
  TF_Tensor *in[1] = {TF_AllocateTensor(TF_FLOAT, &n, 1, sizeof(a))};
  TF_Tensor *out[1] = {NULL};
  memcpy(TF_TensorData(in[0]), a, sizeof(a));
  tfocl_op_def_add("StubScale", "x: T", "y: T", "T: type, scale: float", st);
  ck_assert_ok(st);
  tfocl_run_op(device, "StubScale", attrs, 1, in, 1, out, 1, NULL, st);
  ck_assert_ok(st);
  ck_assert(!tfocl_tensor_on_device(out[0]));
  ck_assert_uint_eq((uintptr_t)TF_TensorData(out[0]) % 256, 0);
  ck_assert(((float *)TF_TensorData(out[0]))[1] == 4.0f);
  ck_assert_int_eq(count_lines("host_memory_allocate"), 1);
  TF_DeleteTensor(out[0]);
  ck_assert_int_eq(count_lines("host_memory_deallocate"), 1);
  TF_DeleteTensor(in[0]);
  TF_DeleteStatus(st);
}
END_TEST

static Suite *tensor_suite(void)
{
  Suite *s = suite_create("tensor");
  TCase *host = tcase_create("host");
  TCase *dev = tcase_create("device");
  tcase_add_test(host, allocate_tensor_is_aligned_host);
  tcase_add_test(host, new_tensor_calls_deallocator_once);
  tcase_add_test(host, new_tensor_refuses_short_buffer);
  tcase_add_test(host, bitcast_size_mismatch);
  tcase_add_test(host, set_shape_and_maybe_move);
  tcase_add_test(host, view_is_interior_pointer);
  tcase_add_test(host, view_must_fit);
  tcase_add_test(host, data_type_sizes_and_names);
  tcase_add_checked_fixture(dev, device_setup, device_teardown);
  tcase_add_test(dev, device_tensor_round_trip);
  tcase_add_test(dev, device_view_and_copy);
  tcase_add_test(dev, empty_device_tensor_has_host_dummy);
  tcase_add_test(dev, host_memory_outputs_use_the_plugin_host_allocator);
  suite_add_tcase(s, host);
  suite_add_tcase(s, dev);
  return s;
}

int main(void) { return run_suite(tensor_suite()); }
