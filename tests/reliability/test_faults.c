/* Fault injection (a -Dfault-injection=true build; plugin/fault.h): every
 * OpenCL call kind the plugin makes is made to fail at its 1st, 2nd, ...
 * call inside a workload (device tensors, host-to-device and device-to-host
 * copies, AddV2/MatMul/Sum/Relu kernels, events, a host callback, pinned
 * host memory). Each failure must come back as a clean TF_Status naming
 * the call (or be absorbed where the plugin can go on), the same workload
 * must then pass with correct results, and the allocator's bytes in use
 * and the live cl_mem / cl_event / cl_command_queue / cl_kernel /
 * cl_program counts must be back where they were: the error path leaks
 * nothing. ASan/LSan (this build is sanitized in CI) and valgrind check
 * host memory on top. Prints how many faults were injected per call. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "fault.h"
#include "rel.h"

static tfocl_fault_control_fn *control;

static void arm(const char *spec) { control(1, spec, NULL); }

static struct tfocl_fault_stats stats(void)
{
  struct tfocl_fault_stats s;
  control(0, NULL, &s);
  return s;
}

static void callback(void *arg, TF_Status *st)
{
  (*(int *)arg)++;
  TF_SetStatus(st, TF_OK, "");
}

/* The workload; returns its status code, the failing message in st. The
 * result is checked when everything succeeded. */
static TF_Code workload(TF_Status *st)
{
  const SP_StreamExecutor *se = tfocl_plugin_stream_executor(rel_plugin);
  const SP_Device *sp = tfocl_device_sp(rel_device);
  SP_Stream d2h = tfocl_device_stream(rel_device, TFOCL_STREAM_DEVICE_TO_HOST);
  const int64_t dims[] = {3, 3}, axis_dims[] = {1};
  static const float va[] = {1, -2, 3, -4, 5, -6, 7, -8, 9};
  static const int32_t axis[] = {0};
  TF_Tensor *ha = rel_host_f32(dims, 2, va, 9);
  TF_Tensor *hx = rel_host_i32(axis_dims, 1, axis);
  TF_Tensor *scratch = NULL;
  TF_Tensor *a = NULL, *sum = NULL, *mm = NULL, *relu = NULL, *res = NULL;
  SP_Event ev = NULL;
  void *pinned = NULL;
  int called = 0;

  a = tfocl_tensor_to_device(rel_device, ha, st);
  if (a == NULL)
    goto out;
  if (rel_run_op("AddV2", NULL, 0, (TF_Tensor *[]){a, a}, 2, &sum, st) != TF_OK)
    goto out;
  if (rel_run_op("MatMul", NULL, 0, (TF_Tensor *[]){sum, a}, 2, &mm, st) != TF_OK)
    goto out;
  if (rel_run_op("Relu", NULL, 0, (TF_Tensor *[]){mm}, 1, &relu, st) != TF_OK)
    goto out;
  if (rel_run_op("Sum", NULL, 0, (TF_Tensor *[]){relu, hx}, 2, &res, st) != TF_OK)
    goto out;
  /* A device-to-device copy and a fill (clEnqueueCopyBuffer, ...Fill...). */
  scratch = tfocl_tensor_alloc_device(rel_device, TF_FLOAT, dims, 2, st);
  if (scratch == NULL)
    goto out;
  SP_Stream compute = tfocl_device_stream(rel_device, TFOCL_STREAM_COMPUTE);
  SP_DeviceMemoryBase ms = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                            .opaque = TF_TensorData(scratch), .size = 36};
  SP_DeviceMemoryBase ma = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                            .opaque = TF_TensorData(a), .size = 36};
  se->memcpy_dtod(sp, compute, &ms, &ma, 36, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  se->memset32(sp, compute, &ms, 0x3f800000u, 36, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  se->create_event(sp, &ev, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  se->record_event(sp, tfocl_device_stream(rel_device, TFOCL_STREAM_COMPUTE),
                   ev, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  se->wait_for_event(sp, d2h, ev, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  pinned = se->host_memory_allocate(sp, 64);
  if (pinned == NULL) {
    TF_SetStatus(st, TF_RESOURCE_EXHAUSTED, "host_memory_allocate failed");
    goto out;
  }
  SP_DeviceMemoryBase m = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                           .opaque = TF_TensorData(res), .size = 12};
  se->memcpy_dtoh(sp, d2h, pinned, &m, 12, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  if (!se->host_callback(sp, d2h, callback, &called)) {
    TF_SetStatus(st, TF_INTERNAL, "host_callback failed");
    goto out;
  }
  se->block_host_until_done(sp, d2h, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  se->get_stream_status(sp, d2h, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  /* relu(2a @ a), summed over rows. */
  float want[3] = {0};
  for (int c = 0; c < 3; c++)
    for (int r = 0; r < 3; r++) {
      float v = 0;
      for (int k = 0; k < 3; k++)
        v += 2 * va[r * 3 + k] * va[k * 3 + c];
      want[c] += v > 0 ? v : 0;
    }
  ck_assert_int_eq(called, 1);
  ck_assert_msg(memcmp(pinned, want, sizeof(want)) == 0, "wrong result");
out:
  /* Whatever failed, the device settles before the host memory a copy
   * may still be writing (a failed wait leaves the copy in flight) is
   * freed. */
  TF_Status *s2 = TF_NewStatus();
  tfocl_device_synchronize(rel_device, s2);
  TF_DeleteStatus(s2);
  if (ev != NULL)
    se->destroy_event(sp, ev);
  if (pinned != NULL)
    se->host_memory_deallocate(sp, pinned);
  TF_DeleteTensor(ha);
  TF_DeleteTensor(hx);
  TF_DeleteTensor(a);
  TF_DeleteTensor(sum);
  TF_DeleteTensor(mm);
  TF_DeleteTensor(relu);
  TF_DeleteTensor(res);
  TF_DeleteTensor(scratch);
  return TF_GetCode(st);
}

static void expect_same_objects(const struct tfocl_fault_stats *b,
                                const struct tfocl_fault_stats *a,
                                const char *what)
{
  /* Events are not compared here: the shim keeps recorded events in a
   * pool; they are checked at the end, after the plugin's teardown. */
  ck_assert_msg(a->live_mem == b->live_mem &&
                    a->live_queues == b->live_queues &&
                    a->live_kernels == b->live_kernels &&
                    a->live_programs == b->live_programs,
                "%s: OpenCL objects leaked: mem %" PRId64 "->%" PRId64
                ", events %" PRId64 "->%" PRId64 ", queues %" PRId64
                "->%" PRId64 ", kernels %" PRId64 "->%" PRId64
                ", programs %" PRId64 "->%" PRId64,
                what, b->live_mem, a->live_mem, b->live_events, a->live_events,
                b->live_queues, a->live_queues, b->live_kernels,
                a->live_kernels, b->live_programs, a->live_programs);
}

static const char *const calls[] = {
    "clCreateBuffer", "clEnqueueWriteBuffer", "clEnqueueReadBuffer",
    "clEnqueueCopyBuffer", "clEnqueueFillBuffer", "clEnqueueNDRangeKernel",
    "clSetKernelArg", "clEnqueueMapBuffer", "clEnqueueUnmapMemObject",
    "clEnqueueMarkerWithWaitList", "clEnqueueBarrierWithWaitList",
    "clFinish", "clFlush", "clWaitForEvents", "clCreateUserEvent",
    "clSetUserEventStatus", "clSetEventCallback",
    /* The GEMM paths' own: the host BLAS's native kernel and CLBlast's
     * calls (through the runtime's library queue). */
    "clEnqueueNativeKernel", "CLBlastSgemm",
};
#define NUM_CALLS (int)(sizeof(calls) / sizeof(calls[0]))
static int injected[NUM_CALLS], failed_clean[NUM_CALLS], absorbed[NUM_CALLS];

START_TEST(every_call_fails_cleanly)
{
  const char *call = calls[_i];
  TF_Status *st = TF_NewStatus();
  int max_n = (int)rel_env_long("TFOCL_FAULT_MAX_N", 40);

  /* Warm: programs, kernels, pinned pools exist. */
  arm(NULL);
  ck_assert_msg(workload(st) == TF_OK, "%s", TF_Message(st));
  for (int n = 1; n <= max_n; n++) {
    SP_AllocatorStats a0, a1;
    rel_allocator_stats(&a0);
    struct tfocl_fault_stats s0 = stats();
    char spec[96];
    snprintf(spec, sizeof(spec), "%s:%d", call, n);
    arm(spec);
    TF_Code code = workload(st);
    struct tfocl_fault_stats s1 = stats();
    arm(NULL);
    if (s1.injected == s0.injected) {
      ck_assert_msg(code == TF_OK, "%s with no fault injected: %s", spec,
                    TF_Message(st));
      break; /* the workload makes fewer than n such calls */
    }
    injected[_i]++;
    if (code != TF_OK) {
      failed_clean[_i]++;
      /* allocate() has no status: TensorFlow's OOM message it is. */
      bool oom = strcmp(call, "clCreateBuffer") == 0 &&
                 TF_GetCode(st) == TF_RESOURCE_EXHAUSTED &&
                 strstr(TF_Message(st), "OOM") != NULL;
      ck_assert_msg(oom || strstr(TF_Message(st), call) != NULL ||
                        strstr(TF_Message(st), "host_callback") != NULL ||
                        strstr(TF_Message(st), "host_memory_allocate") != NULL,
                    "%s: the error does not name the call: %s", spec,
                    TF_Message(st));
    } else {
      absorbed[_i]++;
    }
    /* Later ops work, and nothing leaked. */
    ck_assert_msg(workload(st) == TF_OK, "%s: the next workload failed: %s",
                  spec, TF_Message(st));
    rel_allocator_stats(&a1);
    ck_assert_msg(a1.bytes_in_use == a0.bytes_in_use,
                  "%s: %lld bytes in use after, %lld before", spec,
                  (long long)a1.bytes_in_use, (long long)a0.bytes_in_use);
    struct tfocl_fault_stats s2 = stats();
    expect_same_objects(&s0, &s2, spec);
  }
  /* Where TFOCL_GEMM forces a path, the workload's MatMul takes it, and
   * that path's calls must have been reached. */
  const char *gemm = getenv("TFOCL_GEMM");
  bool path_call = (gemm != NULL && strcmp(gemm, "blas") == 0 &&
                    strcmp(call, "clEnqueueNativeKernel") == 0) ||
                   (gemm != NULL && strcmp(gemm, "clblast") == 0 &&
                    strcmp(call, "CLBlastSgemm") == 0);
  ck_assert_msg(!path_call || injected[_i] > 0,
                "TFOCL_GEMM=%s: no %s call to fail", gemm, call);
  printf("faults: %-30s injected %3d (failed cleanly %3d, absorbed %3d)\n",
         call, injected[_i], failed_clean[_i], absorbed[_i]);
  fflush(stdout);
  TF_DeleteStatus(st);
}
END_TEST

/* First-use calls: program creation and build, kernel creation, and a
 * stream's queue. A transient failure (out of host memory) is not
 * remembered: the next use builds again. */
START_TEST(first_use_failures_are_not_remembered)
{
  TF_Status *st = TF_NewStatus();
  static const struct { const char *call, *op; } cases[] = {
      {"clCreateProgramWithSource", "Tanh"},
      {"clBuildProgram", "Softmax"},
      {"clCreateKernel", "Sigmoid"},
  };
  const int64_t dims[] = {2, 3};
  static const float v[] = {0.5f, -1.0f, 2.0f};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    TF_Tensor *x = rel_host_f32(dims, 2, v, 3);
    struct tfocl_fault_stats s0 = stats();
    char spec[96];
    snprintf(spec, sizeof(spec), "%s:1", cases[i].call);
    arm(spec);
    TF_Code code = rel_run_op(cases[i].op, NULL, 0, &x, 1, NULL, st);
    struct tfocl_fault_stats s1 = stats();
    arm(NULL);
    ck_assert_msg(s1.injected == s0.injected + 1, "%s: not injected", spec);
    ck_assert_msg(code != TF_OK, "%s: %s succeeded", spec, cases[i].op);
    rel_assert_has(st, cases[i].call);
    printf("faults: %-30s injected   1: %s\n", cases[i].call, TF_Message(st));
    rel_run_op(cases[i].op, NULL, 0, &x, 1, NULL, st);
    rel_assert_ok(st);
    TF_DeleteTensor(x);
  }

  const SP_StreamExecutor *se = tfocl_plugin_stream_executor(rel_plugin);
  const SP_Device *sp = tfocl_device_sp(rel_device);
  struct tfocl_fault_stats s0 = stats();
  SP_Stream s = NULL;
  arm("clCreateCommandQueueWithProperties:1");
  se->create_stream(sp, &s, st);
  arm(NULL);
  ck_assert_ptr_null(s);
  rel_assert_has(st, "clCreateCommandQueueWithProperties");
  printf("faults: %-30s injected   1: %s\n",
         "clCreateCommandQueueWithProperties", TF_Message(st));
  expect_same_objects(&s0, &(struct tfocl_fault_stats){stats().calls, 0,
                      stats().live_mem, stats().live_events,
                      stats().live_queues, stats().live_kernels,
                      stats().live_programs, ""}, "create_stream");
  se->create_stream(sp, &s, st);
  rel_assert_ok(st);
  se->destroy_stream(sp, s);
  fflush(stdout);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(env_spec_fails_first_allocation)
{
  /* TFOCL_FAULT syntax with a wildcard: the 2nd clEnqueue* call fails. */
  TF_Status *st = TF_NewStatus();
  struct tfocl_fault_stats s0 = stats();
  arm("clEnqueue*:2");
  TF_Code code = workload(st);
  struct tfocl_fault_stats s1 = stats();
  arm(NULL);
  ck_assert_int_eq(s1.injected, s0.injected + 1);
  ck_assert_msg(code != TF_OK, "clEnqueue*:2 was not reported");
  rel_assert_has(st, "clEnqueue");
  ck_assert_int_eq(workload(st), TF_OK);
  TF_DeleteStatus(st);
}
END_TEST

int main(void)
{
  if (!rel_setup())
    return 77;
  void *h = dlopen(getenv("TFOCL_PLUGIN"), RTLD_NOW | RTLD_NOLOAD);
  control = h ? (tfocl_fault_control_fn *)dlsym(h, TFOCL_FAULT_CONTROL_SYMBOL)
              : NULL;
  if (control == NULL) {
    fprintf(stderr, "%s exports no %s: not a -Dfault-injection=true build\n",
            getenv("TFOCL_PLUGIN"), TFOCL_FAULT_CONTROL_SYMBOL);
    return EXIT_FAILURE;
  }
  Suite *s = suite_create("faults");
  TCase *tc = tcase_create("faults");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, first_use_failures_are_not_remembered);
  tcase_add_loop_test(tc, every_call_fails_cleanly, 0, NUM_CALLS);
  tcase_add_test(tc, env_spec_fails_first_allocation);
  suite_add_tcase(s, tc);
  int rc = rel_run(s);
  /* TFOCL_NO_DLCLOSE=1 (set by meson) keeps the plugin mapped, so its
   * counters are readable after destroy_platform: every OpenCL object it
   * made must be released by then. */
  rel_teardown();
  struct tfocl_fault_stats total = stats();
  printf("faults: %" PRId64 " injected in %" PRId64 " wrapped OpenCL calls; "
         "alive after unload: %" PRId64 " cl_mem, %" PRId64 " cl_event, %"
         PRId64 " queues, %" PRId64 " kernels, %" PRId64 " programs\n",
         total.injected, total.calls, total.live_mem, total.live_events,
         total.live_queues, total.live_kernels, total.live_programs);
  if (total.live_mem || total.live_events || total.live_queues ||
      total.live_kernels || total.live_programs) {
    fprintf(stderr, "faults: OpenCL objects leaked\n");
    rc = EXIT_FAILURE;
  }
  dlclose(h);
  return rc;
}
