/* Platform, devices, enumeration filters, kernel registration.
 *
 * The filter and two-device cases expect what the ICD loader offers (PoCL
 * is asked for two CPU devices; a GPU machine or Intel's CPU runtime has
 * one): a case the devices present cannot exercise says so on a SKIPPED
 * line, which ci/test lists, and checks what it still can. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CL/cl.h>

#include "cl_fixture.h"

/* Devices of any of `types` over all platforms, asked of OpenCL here (in
 * the test's process, with its environment, as the plugin asks). */
static int cl_count(cl_device_type types) {
  cl_platform_id platforms[16];
  cl_uint num_platforms = 0;
  int total = 0;

  if (clGetPlatformIDs(16, platforms, &num_platforms) != CL_SUCCESS) return 0;
  for (cl_uint i = 0; i < num_platforms && i < 16; i++) {
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[i], types, 0, NULL, &n) == CL_SUCCESS)
      total += (int)n;
  }
  return total;
}

/* A case the devices present cannot exercise, said where ci/test reads it. */
static void skipped(const char *what, const char *why) {
  printf("SKIPPED cl_platform %s: %s\n", what, why);
  fflush(stdout);
}

START_TEST(platform_fields) {
  struct clt t = {0};
  clt_load(&t);
  ck_assert_str_eq(t.platform->name, "TFOCL");
  ck_assert_str_eq(t.platform->type, "OPENCL");
  ck_assert_int_eq(t.platform->supports_unified_memory, 0);
  ck_assert_int_eq(t.platform->use_bfc_allocator, 1);
  ck_assert_int_eq(t.platform->force_memory_growth, 1);
  ck_assert_ptr_nonnull(t.platform_fns->get_device_count);
  ck_assert_ptr_nonnull(t.platform_fns->create_timer_fns);
  ck_assert_ptr_nonnull(t.platform_fns->destroy_timer_fns);
  clt_close(&t);
}
END_TEST

/* Every SP_StreamExecutor member but the unified-memory pair is set. */
START_TEST(stream_executor_complete) {
  struct clt t = {0};
  clt_load(&t);
  const SP_StreamExecutor *se = t.se;
  ck_assert_uint_eq(se->struct_size, SP_STREAMEXECUTOR_STRUCT_SIZE);
  const void *members[] = {
      (void *)se->allocate, (void *)se->deallocate,
      (void *)se->host_memory_allocate, (void *)se->host_memory_deallocate,
      (void *)se->get_allocator_stats, (void *)se->device_memory_usage,
      (void *)se->create_stream, (void *)se->destroy_stream,
      (void *)se->create_stream_dependency, (void *)se->get_stream_status,
      (void *)se->create_event, (void *)se->destroy_event,
      (void *)se->get_event_status, (void *)se->record_event,
      (void *)se->wait_for_event, (void *)se->create_timer,
      (void *)se->destroy_timer, (void *)se->start_timer,
      (void *)se->stop_timer, (void *)se->memcpy_dtoh, (void *)se->memcpy_htod,
      (void *)se->memcpy_dtod, (void *)se->sync_memcpy_dtoh,
      (void *)se->sync_memcpy_htod, (void *)se->sync_memcpy_dtod,
      (void *)se->block_host_for_event, (void *)se->block_host_until_done,
      (void *)se->synchronize_all_activity, (void *)se->mem_zero,
      (void *)se->memset, (void *)se->memset32, (void *)se->host_callback,
      (void *)se->create_stream_with_options};
  for (size_t i = 0; i < sizeof members / sizeof members[0]; i++)
    ck_assert_msg(members[i] != NULL, "member %zu is NULL", i);
  ck_assert_ptr_null(se->unified_memory_allocate);
  clt_close(&t);
}
END_TEST

START_TEST(device_properties) {
  struct clt t = {0};
  int64_t free_bytes = -1, total = -1;
  clt_open(&t, 0);
  ck_assert_int_eq(t.sp->ordinal, 0);
  ck_assert_ptr_nonnull(t.sp->device_handle);
  ck_assert_ptr_nonnull(t.sp->hardware_name);
  ck_assert_int_gt(strlen(t.sp->hardware_name), 0);
  ck_assert_ptr_nonnull(t.sp->device_vendor);
  ck_assert(t.se->device_memory_usage(t.sp, &free_bytes, &total));
  ck_assert_int_gt(total, 0);
  ck_assert_int_le(free_bytes, total);
  const SP_DeviceFns *fns = tfocl_plugin_device_fns(t.plugin);
  ck_assert_ptr_nonnull(fns);
  ck_assert_int_gt(fns->get_memory_bandwidth(t.sp), 0);
  ck_assert(fns->get_gflops(t.sp) > 0.0);
  ck_assert_int_lt(fns->get_numa_node(t.sp), 0);
  clt_close(&t);
}
END_TEST

START_TEST(timers_are_stubs) {
  struct clt t = {0};
  SP_TimerFns timer_fns = {.struct_size = SP_TIMER_FNS_STRUCT_SIZE};
  SP_Timer timer = (SP_Timer)&timer_fns;
  clt_open(&t, 0);
  t.platform_fns->create_timer_fns(t.platform, &timer_fns, t.st);
  clt_ok(&t);
  ck_assert_ptr_nonnull(timer_fns.nanoseconds);
  t.platform_fns->destroy_timer_fns(t.platform, &timer_fns);
  t.se->create_timer(t.sp, &timer, t.st);
  ck_assert_int_eq(TF_GetCode(t.st), TF_UNIMPLEMENTED);
  ck_assert_ptr_null(timer);
  t.se->destroy_timer(t.sp, NULL);
  clt_close(&t);
}
END_TEST

START_TEST(noop_kernel_registered) {
  struct clt t = {0};
  bool found = false;
  clt_load(&t);
  for (int i = 0; i < tfocl_kernel_count(); i++) {
    struct tfocl_kernel_info info;
    if (tfocl_kernel_get(i, &info) && strcmp(info.op_name, "NoOp") == 0 &&
        strcmp(info.device_type, "OPENCL") == 0)
      found = true;
  }
  ck_assert(found);
  clt_close(&t);
}
END_TEST

static int count_with_env(void) {
  struct clt t = {0};
  int n;
  clt_load(&t);
  n = tfocl_plugin_device_count(t.plugin, t.st);
  clt_ok(&t);
  ck_assert_int_eq(tfocl_plugin_device_count(t.plugin, t.st), n); /* cached */
  clt_close(&t);
  return n;
}

START_TEST(visible_devices_filter) {
  /* _i = 0: unset, 1: "", 2: "0", 3: "1", 4: "1,0", 5: "7" (out of range
   * below 8 devices); needs: the devices a case needs to keep any. */
  static const char *const values[] = {NULL, "", "0", "1", "1,0", "7"};
  static const int needs[] = {1, 0, 1, 2, 2, 8};
  setenv("POCL_DEVICES", "pthread pthread", 1);
  int all = cl_count(CL_DEVICE_TYPE_ALL);
  /* Parsing stops at the first index out of range: "1,0" keeps none on
   * one device. */
  const int expected[] = {all, 0, all >= 1, all >= 2, all >= 2 ? 2 : 0,
                          all >= 8};
  if (values[_i])
    setenv("TFOCL_VISIBLE_DEVICES", values[_i], 1);
  else
    unsetenv("TFOCL_VISIBLE_DEVICES");
  if (all < needs[_i] && _i != 5) {
    char what[64], why[128];
    snprintf(what, sizeof what, "visible_devices_filter \"%s\"", values[_i]);
    snprintf(why, sizeof why,
             "needs %d OpenCL devices, %d present (checked: the filter keeps "
             "%d)", needs[_i], all, expected[_i]);
    skipped(what, why);
  }
  int n = count_with_env();
  ck_assert_int_eq(n, expected[_i]);
  if (n > 0) { /* ordinal 0 of the filtered list opens */
    struct clt t = {0};
    clt_open(&t, 0);
    clt_close(&t);
  }
}
END_TEST

START_TEST(device_types_filter) {
  const cl_device_type accelerator =
      CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM;
  int gpus = cl_count(CL_DEVICE_TYPE_GPU);
  int others = cl_count(CL_DEVICE_TYPE_CPU | accelerator);

  ck_assert_int_ge(gpus + others, 1);
  /* A type with no device keeps none, without an error. */
  setenv("TFOCL_DEVICE_TYPES", "gpu", 1);
  ck_assert_int_eq(count_with_env(), gpus);
  setenv("TFOCL_DEVICE_TYPES", "cpu,accelerator", 1);
  ck_assert_int_eq(count_with_env(), others);
  setenv("TFOCL_DEVICE_TYPES", "CPU,Gpu", 1); /* case does not matter */
  ck_assert_int_eq(count_with_env(),
                   cl_count(CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU));
  setenv("TFOCL_DEVICE_TYPES", "fpga", 1); /* no such type: none */
  ck_assert_int_eq(count_with_env(), 0);
  if (gpus == 0)
    skipped("device_types_filter gpu", "no GPU present (checked: \"gpu\" "
                                       "keeps none, without an error)");
  if (others == 0)
    skipped("device_types_filter cpu,accelerator",
            "no CPU or accelerator device present (checked: the filter keeps "
            "none, without an error)");
}
END_TEST

/* TFOCL_MEMORY_LIMIT_MB caps what the device offers; an allocation past
 * the cap is RESOURCE_EXHAUSTED; garbage values leave the device as is. */
/* What device_memory_usage reports for a cap: the cap plus the part
 * TensorFlow's PluggableDeviceFactory keeps back (255 MiB under 2 GiB). */
#define REPORTED_FOR_CAP(mib) (((int64_t)(mib) + 255) << 20)

START_TEST(memory_limit_env) {
  struct clt t = {0};
  int64_t free_bytes = 0, total = 0, uncapped = 0;
  static const char *const ignored[] = {"", "0", "12x", "-5", "64x,1",
                                        "99999999999999999999", ",64"};

  unsetenv("TFOCL_MEMORY_LIMIT_MB");
  clt_open(&t, 0);
  ck_assert(t.se->device_memory_usage(t.sp, &free_bytes, &uncapped));
  clt_close(&t);
  ck_assert_int_gt(uncapped, 64ll << 20);

  /* Read when the device opens, not when the plugin loads: the tfocl
   * Python package sets it after `import tensorflow`. */
  clt_load(&t);
  setenv("TFOCL_MEMORY_LIMIT_MB", "64", 1);
  t.device = tfocl_device_open(t.plugin, 0, t.st);
  clt_ok(&t);
  t.sp = tfocl_device_sp(t.device);
  ck_assert(t.se->device_memory_usage(t.sp, &free_bytes, &total));
  ck_assert_int_eq(total, REPORTED_FOR_CAP(64));
  void *a = clt_alloc(&t, 48 << 20);
  SP_DeviceMemoryBase m = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
  t.se->allocate(t.sp, 32 << 20, 0, &m);
  ck_assert_ptr_null(m.opaque);
  ck_assert(t.se->device_memory_usage(t.sp, &free_bytes, &total));
  ck_assert_int_eq(free_bytes, REPORTED_FOR_CAP(64) - (48ll << 20));
  clt_free(&t, a);
  clt_close(&t);

  /* A list: one entry per device ordinal. */
  setenv("TFOCL_MEMORY_LIMIT_MB", "96,", 1);
  clt_open(&t, 0);
  ck_assert(t.se->device_memory_usage(t.sp, &free_bytes, &total));
  ck_assert_int_eq(total, REPORTED_FOR_CAP(96));
  clt_close(&t);

  for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) {
    setenv("TFOCL_MEMORY_LIMIT_MB", ignored[i], 1);
    clt_open(&t, 0);
    ck_assert(t.se->device_memory_usage(t.sp, &free_bytes, &total));
    ck_assert_msg(total == uncapped, "\"%s\": total %lld", ignored[i],
                  (long long)total);
    clt_close(&t);
  }
  unsetenv("TFOCL_MEMORY_LIMIT_MB");
}
END_TEST

/* create_stream_with_options (TensorFlow 2.22): a priority is a hint where
 * the device has cl_khr_priority_hints, else accepted and ignored; either
 * way the stream works. */
START_TEST(stream_with_priority) {
  struct clt t = {0};
  static const int priorities[] = {-1, 0, 1};
  uint32_t out[4];
  clt_open(&t, 0);
  ck_assert_ptr_nonnull(t.se->create_stream_with_options);
  void *buf = clt_alloc(&t, sizeof out);
  for (size_t i = 0; i < 4; i++) {
    SP_StreamOptions options = {.struct_size = SP_STREAM_OPTIONS_STRUCT_SIZE,
                                .has_priority = i < 3,
                                .priority = i < 3 ? priorities[i] : 0};
    SP_Stream s = NULL;
    SP_DeviceMemoryBase m = clt_mem(buf);
    t.se->create_stream_with_options(t.sp, &options, &s, t.st);
    clt_ok(&t);
    ck_assert_ptr_nonnull(s);
    t.se->memset32(t.sp, s, &m, 7u + (uint32_t)i, sizeof out, t.st);
    clt_ok(&t);
    t.se->block_host_until_done(t.sp, s, t.st);
    clt_ok(&t);
    t.se->sync_memcpy_dtoh(t.sp, out, &m, sizeof out, t.st);
    clt_ok(&t);
    ck_assert_uint_eq(out[3], 7u + (uint32_t)i);
    t.se->destroy_stream(t.sp, s);
  }
  clt_free(&t, buf);
  clt_close(&t);
}
END_TEST

START_TEST(empty_icd_vendors) {
  char dir[] = "/tmp/tfocl-empty-icd-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("OCL_ICD_VENDORS", dir, 1);
  unsetenv("OCL_ICD_FILENAMES");
  ck_assert_int_eq(count_with_env(), 0);
  rmdir(dir);
}
END_TEST

START_TEST(open_bad_ordinal) {
  struct clt t = {0};
  clt_load(&t);
  ck_assert_ptr_null(tfocl_device_open(t.plugin, 99, t.st));
  ck_assert_int_ne(TF_GetCode(t.st), TF_OK);
  clt_close(&t);
}
END_TEST

START_TEST(two_devices_copy) {
  struct clt a = {0};
  setenv("POCL_DEVICES", "pthread pthread", 1);
  int all = cl_count(CL_DEVICE_TYPE_ALL);
  if (all < 2) {
    char why[64];
    snprintf(why, sizeof why, "needs 2 OpenCL devices, %d present", all);
    skipped("two_devices_copy", why);
    return;
  }
  clt_open(&a, 0);
  ck_assert_int_eq(tfocl_plugin_device_count(a.plugin, a.st), all);
  struct tfocl_device *dev1 = tfocl_device_open(a.plugin, 1, a.st);
  ck_assert_msg(dev1 != NULL, "%s", TF_Message(a.st));
  const SP_Device *sp1 = tfocl_device_sp(dev1);
  enum { N = 1 << 16 };
  unsigned char *in = malloc(N), *out = calloc(1, N);
  for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 13 + 5);
  void *p0 = clt_alloc(&a, N);
  SP_DeviceMemoryBase m1 = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
  a.se->allocate(sp1, N, 0, &m1);
  ck_assert_ptr_nonnull(m1.opaque);
  ck_assert_ptr_ne(m1.opaque, p0);
  SP_DeviceMemoryBase m0 = clt_mem(p0);
  SP_Stream s0 = clt_stream(&a, TFOCL_STREAM_DEVICE_TO_DEVICE);
  a.se->memcpy_htod(a.sp, s0, &m0, in, N, a.st);
  clt_ok(&a);
  /* As TensorFlow does: on the sender's device and stream, receiver's
   * pointer as the destination (at an interior offset). */
  SP_DeviceMemoryBase d1 = clt_mem((char *)m1.opaque + 3);
  SP_DeviceMemoryBase s0v = clt_mem((char *)p0 + 1);
  a.se->memcpy_dtod(a.sp, s0, &d1, &s0v, N - 3, a.st);
  clt_ok(&a);
  a.se->block_host_until_done(a.sp, s0, a.st);
  clt_ok(&a);
  a.se->sync_memcpy_dtoh(sp1, out, &m1, N, a.st);
  clt_ok(&a);
  ck_assert_int_eq(memcmp(out + 3, in + 1, N - 3), 0);
  a.se->deallocate(sp1, &m1);
  clt_free(&a, p0);
  tfocl_device_close(dev1);
  free(in);
  free(out);
  clt_close(&a);
}
END_TEST

START_TEST(load_unload_loop) {
  for (int i = 0; i < 3; i++) {
    struct clt t = {0};
    clt_open(&t, 0);
    void *p = clt_alloc(&t, 1000);
    clt_free(&t, p);
    clt_close(&t);
  }
}
END_TEST

static Suite *platform_suite(void) {
  Suite *s = suite_create("platform");
  TCase *tc = tcase_create("platform");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, platform_fields);
  tcase_add_test(tc, stream_executor_complete);
  tcase_add_test(tc, device_properties);
  tcase_add_test(tc, timers_are_stubs);
  tcase_add_test(tc, noop_kernel_registered);
  tcase_add_loop_test(tc, visible_devices_filter, 0, 6);
  tcase_add_test(tc, device_types_filter);
  tcase_add_test(tc, memory_limit_env);
  tcase_add_test(tc, stream_with_priority);
  tcase_add_test(tc, empty_icd_vendors);
  tcase_add_test(tc, open_bad_ordinal);
  tcase_add_test(tc, two_devices_copy);
  tcase_add_test(tc, load_unload_loop);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return clt_main(platform_suite()); }
