/* Plugin loading: TensorFlow's validation (one stub per broken rule, exact
 * code and message), the lifecycle order, and repeated load/unload. */
#include <unistd.h>

#include "test_util.h"

/* stage: 0 = tfocl_plugin_load fails, 1 = tfocl_device_open fails */
struct negative_case {
  const char *stub;
  int stage;
  TF_Code code;
  const char *message;
};

static const struct negative_case negative_cases[] = {
    {"init_status", 0, TF_INTERNAL, "stub: SE_InitPlugin refused"},
    {"params_struct_size", 0, TF_FAILED_PRECONDITION,
     "Expected initialized `SE_PlatformRegistrationParams` structure with "
     "`struct_size` field set to SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE. "
     "Found `struct_size` = 0."},
    {"no_destroy_platform", 0, TF_FAILED_PRECONDITION,
     "'destroy_platform' field in SE_PlatformRegistrationParams must be set."},
    {"no_destroy_platform_fns", 0, TF_FAILED_PRECONDITION,
     "'destroy_platform_fns' field in SE_PlatformRegistrationParams must be "
     "set."},
    {"platform_struct_size", 0, TF_FAILED_PRECONDITION,
     "Expected initialized `SP_Platform` structure with `struct_size` field "
     "set to SP_PLATFORM_STRUCT_SIZE. Found `struct_size` = 0."},
    {"no_name", 0, TF_FAILED_PRECONDITION,
     "'name' field in SP_Platform must be set."},
    {"no_type", 0, TF_FAILED_PRECONDITION,
     "'type' field in SP_Platform must be set."},
    {"bad_name", 0, TF_FAILED_PRECONDITION,
     "Device name/type 'STUB2' must match [A-Z][A-Z_]*."},
    {"bad_type", 0, TF_FAILED_PRECONDITION,
     "Device name/type 'stub' must match [A-Z][A-Z_]*."},
    {"platform_fns_struct_size", 0, TF_FAILED_PRECONDITION,
     "Expected initialized `SP_PlatformFns` structure with `struct_size` "
     "field set to SP_PLATFORM_FNS_STRUCT_SIZE. Found `struct_size` = 0."},
    {"no_create_device", 0, TF_FAILED_PRECONDITION,
     "'create_device' field in SP_PlatformFns must be set."},
    {"no_destroy_device", 0, TF_FAILED_PRECONDITION,
     "'destroy_device' field in SP_PlatformFns must be set."},
    {"no_create_stream_executor", 0, TF_FAILED_PRECONDITION,
     "'create_stream_executor' field in SP_PlatformFns must be set."},
    {"no_destroy_stream_executor", 0, TF_FAILED_PRECONDITION,
     "'destroy_stream_executor' field in SP_PlatformFns must be set."},
    {"no_create_device_fns", 0, TF_FAILED_PRECONDITION,
     "'create_device_fns' field in SP_PlatformFns must be set."},
    {"no_destroy_device_fns", 0, TF_FAILED_PRECONDITION,
     "'destroy_device_fns' field in SP_PlatformFns must be set."},
    {"no_get_device_count", 0, TF_FAILED_PRECONDITION,
     "'get_device_count' field in SP_PlatformFns must be set."},
    {"no_destroy_timer_fns", 0, TF_FAILED_PRECONDITION,
     "'destroy_timer_fns' field in SP_PlatformFns must be set."},
    {"create_device_fns_fails", 0, TF_INTERNAL,
     "stub: create_device_fns failed"},
    {"device_fns_struct_size", 0, TF_FAILED_PRECONDITION,
     "Expected initialized `SP_DeviceFns` structure with `struct_size` field "
     "set to SP_DEVICE_FNS_STRUCT_SIZE. Found `struct_size` = 0."},
    {"create_stream_executor_fails", 0, TF_UNAVAILABLE,
     "stub: create_stream_executor failed"},
    {"se_struct_size", 0, TF_FAILED_PRECONDITION,
     "Expected initialized `SP_StreamExecutor` structure with `struct_size` "
     "field set to SP_STREAM_EXECUTOR_STRUCT_SIZE. Found `struct_size` = 0."},
    {"no_allocate", 0, TF_FAILED_PRECONDITION,
     "'allocate' field in SP_StreamExecutor must be set."},
    {"no_memset32", 0, TF_FAILED_PRECONDITION,
     "'memset32' field in SP_StreamExecutor must be set."},
    {"no_host_callback", 0, TF_FAILED_PRECONDITION,
     "'host_callback' field in SP_StreamExecutor must be set."},
    {"no_block_host_for_event", 0, TF_FAILED_PRECONDITION,
     "'block_host_for_event' field in SP_StreamExecutor must be set."},
    {"unified_no_alloc", 0, TF_FAILED_PRECONDITION,
     "'unified_memory_allocate' field in SP_StreamExecutor must be set."},
    {"device_struct_size", 1, TF_FAILED_PRECONDITION,
     "Expected initialized `SP_Device` structure with `struct_size` field "
     "set to SP_DEVICE_STRUCT_SIZE. Found `struct_size` = 0."},
    {"memory_usage_false", 1, TF_INTERNAL,
     "Failed to query available memory for device STUB:0"},
    {"create_stream_fails", 1, TF_RESOURCE_EXHAUSTED,
     "stub: no more streams"},
};
#define NUM_NEGATIVE (int)(sizeof(negative_cases) / sizeof(negative_cases[0]))

static char log_path[64];

static void log_setup(void)
{
  int fd;
  snprintf(log_path, sizeof(log_path), "/tmp/tfocl-loader-XXXXXX");
  fd = mkstemp(log_path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  setenv("TFOCL_STUB_LOG", log_path, 1);
}

static void log_teardown(void) { unlink(log_path); }

/* The log as one string, lines joined with ' '. */
static void read_log(char *buf, size_t size)
{
  FILE *f = fopen(log_path, "r");
  char line[256];
  size_t used = 0;
  buf[0] = '\0';
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = '\0';
    used += (size_t)snprintf(buf + used, size - used, "%s%s",
                             used ? " " : "", line);
    ck_assert_uint_lt(used, size);
  }
  fclose(f);
}

START_TEST(negative)
{
  const struct negative_case *c = &negative_cases[_i];
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub_path(c->stub), st);

  if (c->stage == 0) {
    ck_assert_msg(p == NULL, "%s: loaded", c->stub);
  } else {
    ck_assert_msg(p != NULL, "%s: %s", c->stub, TF_Message(st));
    ck_assert_ptr_null(tfocl_device_open(p, 0, st));
  }
  ck_assert_msg(TF_GetCode(st) == c->code, "%s: code %d, expected %d (%s)",
                c->stub, (int)TF_GetCode(st), (int)c->code, TF_Message(st));
  ck_assert_msg(strstr(TF_Message(st), c->message) != NULL,
                "%s: message \"%s\" lacks \"%s\"", c->stub, TF_Message(st),
                c->message);
  tfocl_plugin_unload(p);
  /* nothing of a failed plugin stays registered */
  ck_assert_int_eq(tfocl_kernel_count(), 0);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(missing_file_is_not_found)
{
  TF_Status *st = TF_NewStatus();
  ck_assert_ptr_null(tfocl_plugin_load("/nonexistent/libnothing.so", st));
  ck_assert_status(st, TF_NOT_FOUND);
  ck_assert_msg_has(st, "/nonexistent/libnothing.so");
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(not_a_shared_object_is_not_found)
{
  char path[] = "/tmp/tfocl-notso-XXXXXX";
  int fd = mkstemp(path);
  TF_Status *st = TF_NewStatus();
  ck_assert_int_eq(write(fd, "hello", 5), 5);
  close(fd);
  ck_assert_ptr_null(tfocl_plugin_load(path, st));
  ck_assert_status(st, TF_NOT_FOUND);
  ck_assert_msg_has(st, path);
  unlink(path);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(duplicate_platform_name)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *a = tfocl_plugin_load(stub_path("ok"), st);
  ck_assert_ok(st);
  ck_assert_ptr_null(tfocl_plugin_load(stub_path("ok_copy"), st));
  ck_assert_status(st, TF_ALREADY_EXISTS);
  ck_assert_msg_has(st, "platform is already registered with name: \"STUB\"");
  tfocl_plugin_unload(a);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(lifecycle_order)
{
  static const char expected[] =
      "SE_InitPlugin create_device_fns create_stream_executor TF_InitKernel "
      "get_device_count create_device create_stream create_stream "
      "create_stream create_stream destroy_stream destroy_stream "
      "destroy_stream destroy_stream destroy_device destroy_device_fns "
      "destroy_stream_executor destroy_timer_fns destroy_platform "
      "destroy_platform_fns";
  char got[2048];
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub_path("ok"), st);
  struct tfocl_device *d;
  ck_assert_ok(st);
  ck_assert(tfocl_plugin_has_devices(p));
  d = tfocl_device_open(p, 0, st);
  ck_assert_ok(st);
  ck_assert_str_eq(tfocl_device_type(d), "STUB");
  ck_assert_str_eq(tfocl_device_sp(d)->hardware_name, "Stub Device");
  ck_assert_ptr_nonnull(tfocl_device_stream(d, TFOCL_STREAM_COMPUTE));
  tfocl_device_synchronize(d, st);
  ck_assert_ok(st);
  tfocl_device_close(d);
  tfocl_plugin_unload(p);
  read_log(got, sizeof(got));
  ck_assert_str_eq(got, expected);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(failed_load_undoes_in_order)
{
  char got[1024];
  TF_Status *st = TF_NewStatus();
  ck_assert_ptr_null(tfocl_plugin_load(stub_path("se_struct_size"), st));
  read_log(got, sizeof(got));
  ck_assert_str_eq(got, "SE_InitPlugin create_device_fns "
                        "create_stream_executor destroy_device_fns "
                        "destroy_stream_executor destroy_platform "
                        "destroy_platform_fns");
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(tables_are_host_copies)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub_path("ok"), st);
  char got[2048];
  ck_assert_ok(st);
  ck_assert_str_eq(tfocl_plugin_platform(p)->name, "STUB");
  ck_assert_ptr_nonnull(tfocl_plugin_platform_fns(p)->create_device);
  ck_assert_ptr_nonnull(tfocl_plugin_stream_executor(p)->memcpy_htod);
  ck_assert_uint_eq(tfocl_plugin_device_fns(p)->struct_size,
                    SP_DEVICE_FNS_STRUCT_SIZE);
  ck_assert_int_eq(tfocl_plugin_device_count(p, st), 1);
  ck_assert_str_eq(tfocl_plugin_path(p), stub_path("ok"));
  tfocl_plugin_unload(p);
  read_log(got, sizeof(got));
  ck_assert_ptr_null(strstr(got, "BAD_PLATFORM_POINTER"));
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(kernels_only_and_empty_plugins)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *k = tfocl_plugin_load(stub_path("kernels_only"), st);
  struct tfocl_plugin *e;
  ck_assert_ok(st);
  ck_assert(!tfocl_plugin_has_devices(k));
  ck_assert_ptr_null(tfocl_plugin_platform(k));
  ck_assert_int_eq(tfocl_plugin_device_count(k, st), 0);
  ck_assert_ok(st);
  ck_assert_ptr_null(tfocl_device_open(k, 0, st));
  ck_assert_status(st, TF_FAILED_PRECONDITION);
  ck_assert_int_eq(tfocl_kernel_count(), 5);
  e = tfocl_plugin_load(stub_path("empty"), st);
  ck_assert_ok(st);
  ck_assert_int_eq(tfocl_kernel_count(), 5);
  tfocl_plugin_unload(e);
  tfocl_plugin_unload(k);
  ck_assert_int_eq(tfocl_kernel_count(), 0);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(bad_ordinal)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub_path("ok"), st);
  ck_assert_ptr_null(tfocl_device_open(p, 1, st));
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "ordinal 1");
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(unload_closes_open_devices)
{
  char got[2048];
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub_path("ok"), st);
  ck_assert_ptr_nonnull(tfocl_device_open(p, 0, st));
  tfocl_plugin_unload(p);
  read_log(got, sizeof(got));
  ck_assert_ptr_nonnull(strstr(got, "destroy_device destroy_device_fns"));
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(load_unload_loop)
{
  TF_Status *st = TF_NewStatus();
  for (int i = 0; i < 10; i++) {
    struct tfocl_plugin *p = tfocl_plugin_load(stub_path("ok"), st);
    struct tfocl_device *d;
    ck_assert_msg(p != NULL, "iteration %d: %s", i, TF_Message(st));
    ck_assert_int_eq(tfocl_kernel_count(), 5);
    d = tfocl_device_open(p, 0, st);
    ck_assert_ok(st);
    tfocl_device_close(d);
    tfocl_plugin_unload(p);
    ck_assert_int_eq(tfocl_kernel_count(), 0);
  }
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(two_plugins_side_by_side)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *a = tfocl_plugin_load(stub_path("ok"), st);
  struct tfocl_plugin *b;
  ck_assert_ok(st);
  b = tfocl_plugin_load(stub_path("other_name"), st);
  ck_assert_ok(st);
  ck_assert_str_eq(tfocl_plugin_platform(b)->name, "STUB_OTHER");
  tfocl_plugin_unload(a);
  tfocl_plugin_unload(b);
  TF_DeleteStatus(st);
}
END_TEST

static Suite *loader_suite(void)
{
  Suite *s = suite_create("plugin_loader");
  TCase *neg = tcase_create("negative");
  TCase *pos = tcase_create("lifecycle");
  tcase_add_checked_fixture(neg, log_setup, log_teardown);
  tcase_add_loop_test(neg, negative, 0, NUM_NEGATIVE);
  tcase_add_test(neg, missing_file_is_not_found);
  tcase_add_test(neg, not_a_shared_object_is_not_found);
  tcase_add_test(neg, duplicate_platform_name);
  tcase_add_checked_fixture(pos, log_setup, log_teardown);
  tcase_add_test(pos, lifecycle_order);
  tcase_add_test(pos, failed_load_undoes_in_order);
  tcase_add_test(pos, tables_are_host_copies);
  tcase_add_test(pos, kernels_only_and_empty_plugins);
  tcase_add_test(pos, bad_ordinal);
  tcase_add_test(pos, unload_closes_open_devices);
  tcase_add_test(pos, load_unload_loop);
  tcase_add_test(pos, two_plugins_side_by_side);
  suite_add_tcase(s, neg);
  suite_add_tcase(s, pos);
  return s;
}

int main(void) { return run_suite(loader_suite()); }
