/* Two OpenCL devices working together, as TensorFlow's MirroredStrategy
 * and cross-device copies drive them: streams, events and memory of
 * different SP_Devices in one call. Run with POCL_DEVICES="pthread pthread"
 * (two PoCL devices, one cl_context) and, where Oclgrind is installed, with
 * PoCL and Oclgrind as two platforms (two cl_contexts: the host relays).
 * Fewer than two devices: skipped (exit 77). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl_fixture.h"

struct two {
  struct clt t; /* device 0 (t.device, t.sp) */
  struct tfocl_device *device1;
  const SP_Device *sp1;
};

static void two_open(struct two *w) {
  clt_open(&w->t, 0);
  w->device1 = tfocl_device_open(w->t.plugin, 1, w->t.st);
  ck_assert_msg(w->device1 != NULL, "open 1: %s", TF_Message(w->t.st));
  w->sp1 = tfocl_device_sp(w->device1);
}

static void two_close(struct two *w) {
  tfocl_device_close(w->device1);
  clt_close(&w->t);
}

static void *alloc_on(const struct clt *t, const SP_Device *sp,
                      uint64_t bytes) {
  SP_DeviceMemoryBase mem = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
  t->se->allocate(sp, bytes, 0, &mem);
  ck_assert_msg(mem.opaque != NULL, "allocate(%llu) failed",
                (unsigned long long)bytes);
  return mem.opaque;
}

static void free_on(const struct clt *t, const SP_Device *sp, void *p) {
  SP_DeviceMemoryBase mem = clt_mem(p);
  t->se->deallocate(sp, &mem);
}

static void slow_writer(void *arg, TF_Status *status) {
  struct timespec ts = {0, 100 * 1000 * 1000};
  nanosleep(&ts, NULL);
  *(volatile uint32_t *)arg = 42;
  TF_SetStatus(status, TF_OK, "");
}

/* TensorFlow's device-to-device copy: the sender's copy stream waits for
 * the sender's compute stream and for the receiver's compute stream
 * (create_stream_dependency with a stream of another device), then
 * memcpy_dtod on the sender's stream into the receiver's memory. Both
 * directions. */
START_TEST(copies_between_devices_both_ways) {
  struct two w = {0};
  enum { WORDS = 4096, BYTES = WORDS * 4 };
  two_open(&w);
  const SP_StreamExecutor *se = w.t.se;
  const SP_Device *sp[2] = {w.t.sp, w.sp1};
  struct tfocl_device *devs[2] = {w.t.device, w.device1};
  uint32_t *out = malloc(BYTES);
  for (int from = 0; from < 2; from++) {
    int to = 1 - from;
    SP_Stream compute = tfocl_device_stream(devs[from], TFOCL_STREAM_COMPUTE);
    SP_Stream copy = tfocl_device_stream(devs[from],
                                         TFOCL_STREAM_DEVICE_TO_DEVICE);
    SP_Stream recv = tfocl_device_stream(devs[to], TFOCL_STREAM_COMPUTE);
    char *src = alloc_on(&w.t, sp[from], BYTES);
    char *dst = alloc_on(&w.t, sp[to], BYTES);
    SP_DeviceMemoryBase ms = clt_mem(src), md = clt_mem(dst);
    for (uint32_t rep = 0; rep < 3; rep++) {
      uint32_t value = 0x1000u * (uint32_t)(from + 1) + rep;
      se->memset32(sp[to], recv, &md, 0, BYTES, w.t.st);
      clt_ok(&w.t);
      se->memset32(sp[from], compute, &ms, value, BYTES, w.t.st);
      clt_ok(&w.t);
      se->create_stream_dependency(sp[from], copy, compute, w.t.st);
      clt_ok(&w.t);
      se->create_stream_dependency(sp[from], copy, recv, w.t.st);
      clt_ok(&w.t);
      se->memcpy_dtod(sp[from], copy, &md, &ms, BYTES, w.t.st);
      clt_ok(&w.t);
      se->block_host_until_done(sp[from], copy, w.t.st);
      clt_ok(&w.t);
      memset(out, 0, BYTES);
      se->sync_memcpy_dtoh(sp[to], out, &md, BYTES, w.t.st);
      clt_ok(&w.t);
      ck_assert_uint_eq(out[0], value);
      ck_assert_uint_eq(out[WORDS - 1], value);
    }
    /* The synchronous form, the other way round. */
    se->memset32(sp[to], recv, &md, 0x77u, BYTES, w.t.st);
    se->sync_memcpy_dtod(sp[to], &ms, &md, BYTES, w.t.st);
    clt_ok(&w.t);
    se->sync_memcpy_dtoh(sp[from], out, &ms, BYTES, w.t.st);
    clt_ok(&w.t);
    ck_assert_uint_eq(out[0], 0x77u);
    ck_assert_uint_eq(out[WORDS - 1], 0x77u);
    free_on(&w.t, sp[from], src);
    free_on(&w.t, sp[to], dst);
  }
  free(out);
  two_close(&w);
}
END_TEST

/* A stream of device 1 waits for an event recorded on device 0, behind a
 * slow host callback: the copy on device 1 must see what device 0 wrote
 * after the callback (and the copy does not run before it). */
START_TEST(stream_waits_for_event_of_other_device) {
  struct two w = {0};
  static uint32_t word;
  uint32_t out = 0;
  SP_Event ev;
  two_open(&w);
  const SP_StreamExecutor *se = w.t.se;
  SP_Stream s0 = tfocl_device_stream(w.t.device, TFOCL_STREAM_HOST_TO_DEVICE);
  SP_Stream s1 = tfocl_device_stream(w.device1, TFOCL_STREAM_COMPUTE);
  char *a0 = alloc_on(&w.t, w.t.sp, 4);
  char *b1 = alloc_on(&w.t, w.sp1, 4);
  SP_DeviceMemoryBase ma = clt_mem(a0), mb = clt_mem(b1);
  se->create_event(w.t.sp, &ev, w.t.st);
  clt_ok(&w.t);
  for (int rep = 0; rep < 2; rep++) {
    word = 7;
    se->memset32(w.sp1, s1, &mb, 0, 4, w.t.st);
    ck_assert(se->host_callback(w.t.sp, s0, slow_writer, &word));
    se->memcpy_htod(w.t.sp, s0, &ma, &word, 4, w.t.st);
    clt_ok(&w.t);
    se->record_event(w.t.sp, s0, ev, w.t.st);
    clt_ok(&w.t);
    se->wait_for_event(w.sp1, s1, ev, w.t.st);
    clt_ok(&w.t);
    se->memcpy_dtod(w.sp1, s1, &mb, &ma, 4, w.t.st);
    clt_ok(&w.t);
    se->memcpy_dtoh(w.sp1, s1, &out, &mb, 4, w.t.st);
    clt_ok(&w.t);
    se->block_host_until_done(w.sp1, s1, w.t.st);
    clt_ok(&w.t);
    ck_assert_uint_eq(out, 42);
    ck_assert_int_eq(se->get_event_status(w.t.sp, ev), SE_EVENT_COMPLETE);
  }
  /* The event may be waited for on the host through the other device. */
  se->block_host_for_event(w.sp1, ev, w.t.st);
  clt_ok(&w.t);
  se->destroy_event(w.t.sp, ev);
  free_on(&w.t, w.t.sp, a0);
  free_on(&w.t, w.sp1, b1);
  two_close(&w);
}
END_TEST

/* Each device's streams are its own: a stream of device 1 passed with
 * device 0 works, a destroyed one is an error on either device, and so is
 * a pointer that never was a stream. */
START_TEST(streams_are_checked_against_their_own_device) {
  struct two w = {0};
  SP_Stream extra = NULL;
  static char not_a_stream[256];
  two_open(&w);
  const SP_StreamExecutor *se = w.t.se;
  SP_Stream s0 = tfocl_device_stream(w.t.device, TFOCL_STREAM_COMPUTE);
  SP_Stream s1 = tfocl_device_stream(w.device1, TFOCL_STREAM_COMPUTE);
  se->create_stream_dependency(w.t.sp, s0, s1, w.t.st);
  clt_ok(&w.t);
  se->create_stream_dependency(w.sp1, s1, s0, w.t.st);
  clt_ok(&w.t);
  se->create_stream(w.sp1, &extra, w.t.st);
  clt_ok(&w.t);
  se->destroy_stream(w.sp1, extra);
  se->create_stream_dependency(w.t.sp, s0, extra, w.t.st);
  ck_assert_int_eq(TF_GetCode(w.t.st), TF_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(TF_Message(w.t.st), "not a live stream"));
  se->create_stream_dependency(w.sp1, extra, s1, w.t.st);
  ck_assert_int_eq(TF_GetCode(w.t.st), TF_INVALID_ARGUMENT);
  se->create_stream_dependency(w.t.sp, s0, (SP_Stream)not_a_stream, w.t.st);
  ck_assert_int_eq(TF_GetCode(w.t.st), TF_INVALID_ARGUMENT);
  se->block_host_until_done(w.t.sp, (SP_Stream)not_a_stream, w.t.st);
  ck_assert_int_eq(TF_GetCode(w.t.st), TF_INVALID_ARGUMENT);
  ck_assert(!se->host_callback(w.sp1, extra, slow_writer, NULL));
  se->destroy_stream(w.t.sp, extra); /* a second destroy: ignored */
  se->block_host_until_done(w.t.sp, s0, w.t.st);
  clt_ok(&w.t);
  two_close(&w);
}
END_TEST

static Suite *multi_device_suite(void) {
  Suite *s = suite_create("multi_device");
  TCase *tc = tcase_create("multi_device");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, copies_between_devices_both_ways);
  tcase_add_test(tc, stream_waits_for_event_of_other_device);
  tcase_add_test(tc, streams_are_checked_against_their_own_device);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return clt_main_devices(multi_device_suite(), 2); }
