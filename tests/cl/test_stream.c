/* Streams, events and host callbacks: ordering across streams. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl_fixture.h"

/* Producer fills A with i, consumer copies A into slot i of B; events order
 * the read after the write (RAW) and the next write after the read (WAR).
 * 10,000 iterations; every slot must hold exactly its iteration number. */
START_TEST(producer_consumer_events) {
  struct clt t = {0};
  enum { ITERS = 10000, WORDS = 16, BYTES = WORDS * 4 };
  SP_Event produced, consumed;
  clt_open(&t, 0);
  SP_Stream producer = clt_stream(&t, TFOCL_STREAM_COMPUTE);
  SP_Stream consumer = clt_stream(&t, TFOCL_STREAM_DEVICE_TO_DEVICE);
  char *a = clt_alloc(&t, BYTES);
  char *b = clt_alloc(&t, (uint64_t)ITERS * BYTES);
  t.se->create_event(t.sp, &produced, t.st);
  clt_ok(&t);
  t.se->create_event(t.sp, &consumed, t.st);
  clt_ok(&t);
  /* Waiting for an event never recorded waits for nothing. */
  t.se->wait_for_event(t.sp, producer, consumed, t.st);
  clt_ok(&t);
  for (uint32_t i = 0; i < ITERS; i++) {
    SP_DeviceMemoryBase ma = clt_mem(a), mb = clt_mem(b + (size_t)i * BYTES);
    t.se->wait_for_event(t.sp, producer, consumed, t.st);
    t.se->memset32(t.sp, producer, &ma, i, BYTES, t.st);
    t.se->record_event(t.sp, producer, produced, t.st);
    t.se->wait_for_event(t.sp, consumer, produced, t.st);
    t.se->memcpy_dtod(t.sp, consumer, &mb, &ma, BYTES, t.st);
    t.se->record_event(t.sp, consumer, consumed, t.st);
    if (TF_GetCode(t.st) != TF_OK) break;
  }
  clt_ok(&t);
  t.se->block_host_for_event(t.sp, consumed, t.st);
  clt_ok(&t);
  ck_assert_int_eq(t.se->get_event_status(t.sp, consumed), SE_EVENT_COMPLETE);
  uint32_t *out = malloc((size_t)ITERS * BYTES);
  SP_DeviceMemoryBase mb = clt_mem(b);
  t.se->sync_memcpy_dtoh(t.sp, out, &mb, (uint64_t)ITERS * BYTES, t.st);
  clt_ok(&t);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < ITERS; i++)
    for (int w = 0; w < WORDS; w++) {
      ck_assert_uint_eq(out[i * WORDS + w], i);
      sum += out[i * WORDS + w];
    }
  ck_assert_uint_eq(sum, (uint64_t)WORDS * ITERS * (ITERS - 1) / 2);
  free(out);
  t.se->destroy_event(t.sp, produced);
  t.se->destroy_event(t.sp, consumed);
  clt_free(&t, a);
  clt_free(&t, b);
  clt_close(&t);
}
END_TEST

START_TEST(event_status_values) {
  struct clt t = {0};
  SP_Event e;
  clt_open(&t, 0);
  SP_Stream s = clt_stream(&t, TFOCL_STREAM_COMPUTE);
  t.se->create_event(t.sp, &e, t.st);
  clt_ok(&t);
  ck_assert_int_eq(t.se->get_event_status(t.sp, e), SE_EVENT_COMPLETE);
  t.se->block_host_for_event(t.sp, e, t.st); /* never recorded: returns */
  clt_ok(&t);
  char *big = clt_alloc(&t, 64 << 20);
  SP_DeviceMemoryBase m = clt_mem(big);
  for (int rep = 0; rep < 3; rep++) { /* events are re-recorded */
    t.se->memset(t.sp, s, &m, (uint8_t)rep, 64 << 20, t.st);
    t.se->record_event(t.sp, s, e, t.st);
    clt_ok(&t);
    SE_EventStatus st = t.se->get_event_status(t.sp, e);
    ck_assert(st == SE_EVENT_PENDING || st == SE_EVENT_COMPLETE);
    t.se->block_host_for_event(t.sp, e, t.st);
    clt_ok(&t);
    ck_assert_int_eq(t.se->get_event_status(t.sp, e), SE_EVENT_COMPLETE);
  }
  t.se->destroy_event(t.sp, e);
  t.se->destroy_event(t.sp, NULL);
  clt_free(&t, big);
  clt_close(&t);
}
END_TEST

/* create_stream_dependency: the dependent stream sees the other's work. */
START_TEST(stream_dependency) {
  struct clt t = {0};
  enum { N = 32 << 20 };
  clt_open(&t, 0);
  SP_Stream compute = clt_stream(&t, TFOCL_STREAM_COMPUTE);
  SP_Stream d2h = clt_stream(&t, TFOCL_STREAM_DEVICE_TO_HOST);
  unsigned char *out = malloc(N);
  char *p = clt_alloc(&t, N);
  SP_DeviceMemoryBase m = clt_mem(p);
  for (int rep = 0; rep < 3; rep++) {
    t.se->memset(t.sp, compute, &m, (uint8_t)(0x10 + rep), N, t.st);
    clt_ok(&t);
    t.se->create_stream_dependency(t.sp, d2h, compute, t.st);
    clt_ok(&t);
    t.se->memcpy_dtoh(t.sp, d2h, out, &m, N, t.st);
    t.se->block_host_until_done(t.sp, d2h, t.st);
    clt_ok(&t);
    ck_assert_int_eq(out[0], 0x10 + rep);
    ck_assert_int_eq(out[N - 1], 0x10 + rep);
  }
  t.se->synchronize_all_activity(t.sp, t.st);
  clt_ok(&t);
  clt_free(&t, p);
  free(out);
  clt_close(&t);
}
END_TEST

struct order_log {
  pthread_mutex_t lock;
  int next;
  int seen[1000];
};

struct order_arg {
  struct order_log *log;
  int index;
};

static void record_order(void *arg, TF_Status *status) {
  struct order_arg *a = arg;
  pthread_mutex_lock(&a->log->lock);
  a->log->seen[a->log->next++] = a->index;
  pthread_mutex_unlock(&a->log->lock);
  TF_SetStatus(status, TF_OK, "");
}

START_TEST(host_callbacks_in_order) {
  struct clt t = {0};
  static struct order_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  static struct order_arg args[1000];
  clt_open(&t, 0);
  SP_Stream s = clt_stream(&t, TFOCL_STREAM_COMPUTE);
  char *p = clt_alloc(&t, 4096);
  SP_DeviceMemoryBase m = clt_mem(p);
  for (int i = 0; i < 1000; i++) {
    args[i] = (struct order_arg){&log, i};
    if (i % 100 == 0) t.se->memset(t.sp, s, &m, (uint8_t)i, 4096, t.st);
    ck_assert(t.se->host_callback(t.sp, s, record_order, &args[i]));
  }
  t.se->block_host_until_done(t.sp, s, t.st);
  clt_ok(&t);
  ck_assert_int_eq(log.next, 1000);
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(log.seen[i], i);
  t.se->get_stream_status(t.sp, s, t.st);
  clt_ok(&t);
  clt_free(&t, p);
  clt_close(&t);
}
END_TEST

static void slow_writer(void *arg, TF_Status *status) {
  struct timespec ts = {0, 100 * 1000 * 1000};
  nanosleep(&ts, NULL);
  *(volatile uint32_t *)arg = 42;
  TF_SetStatus(status, TF_OK, "");
}

/* Work enqueued after a callback waits for it: the htod reads the host
 * word only after the (slow) callback wrote it. */
START_TEST(later_work_waits_for_callback) {
  struct clt t = {0};
  static uint32_t word;
  uint32_t out = 0;
  clt_open(&t, 0);
  SP_Stream s = clt_stream(&t, TFOCL_STREAM_HOST_TO_DEVICE);
  char *p = clt_alloc(&t, 4);
  SP_DeviceMemoryBase m = clt_mem(p);
  word = 7;
  ck_assert(t.se->host_callback(t.sp, s, slow_writer, &word));
  t.se->memcpy_htod(t.sp, s, &m, &word, 4, t.st);
  clt_ok(&t);
  t.se->memcpy_dtoh(t.sp, s, &out, &m, 4, t.st);
  t.se->block_host_until_done(t.sp, s, t.st);
  clt_ok(&t);
  ck_assert_uint_eq(out, 42);
  clt_free(&t, p);
  clt_close(&t);
}
END_TEST

/* A callback that enqueues on its own stream (TensorFlow's executor may
 * schedule the next op from one): that work lands behind the callback's
 * gate, which opens only when the callback returns. A driver whose enqueue
 * blocks on an unsignalled user event would hang here (the test times
 * out); on every driver the work must run after the callback, and a
 * second callback from inside the first runs too. */
struct reentrant {
  struct clt *t;
  SP_Stream stream;
  SP_DeviceMemoryBase mem;
  uint32_t *word;
};

static void enqueue_from_callback(void *arg, TF_Status *status) {
  struct reentrant *r = arg;
  *r->word = 5;
  r->t->se->memset32(r->t->sp, r->stream, &r->mem, 99, 4, status);
  if (TF_GetCode(status) != TF_OK) return;
  if (!r->t->se->host_callback(r->t->sp, r->stream, slow_writer, r->word))
    TF_SetStatus(status, TF_INTERNAL, "host_callback from a callback failed");
}

START_TEST(callback_enqueues_on_its_stream) {
  struct clt t = {0};
  static uint32_t word;
  uint32_t out[2] = {0, 0};
  clt_open(&t, 0);
  SP_Stream s = clt_stream(&t, TFOCL_STREAM_COMPUTE);
  char *p = clt_alloc(&t, 8);
  struct reentrant r = {&t, s, clt_mem(p), &word};
  word = 1;
  ck_assert(t.se->host_callback(t.sp, s, enqueue_from_callback, &r));
  /* Enqueued from here, before or after the callback's own: both behind
   * the first gate; the htod behind the second callback too when it was
   * enqueued first, else before it. Either way the memset's 99 lands. */
  t.se->block_host_until_done(t.sp, s, t.st);
  clt_ok(&t);
  t.se->get_stream_status(t.sp, s, t.st);
  clt_ok(&t);
  t.se->sync_memcpy_dtoh(t.sp, out, &r.mem, 4, t.st);
  clt_ok(&t);
  ck_assert_uint_eq(out[0], 99);
  ck_assert_uint_eq(word, 42); /* the second callback ran */
  clt_free(&t, p);
  clt_close(&t);
}
END_TEST

/* Synchronous copies come after the work already on the device's streams
 * (CUDA's legacy default stream semantics): a zero-fill held back behind a
 * slow callback must not land over a later synchronous write, and a
 * synchronous read sees an asynchronous write held back the same way. */
START_TEST(sync_copies_wait_for_streams) {
  struct clt t = {0};
  static uint32_t word;
  uint32_t ones = 0x01010101u, out = 0;
  clt_open(&t, 0);
  SP_Stream s = clt_stream(&t, TFOCL_STREAM_COMPUTE);
  char *p = clt_alloc(&t, 8);
  SP_DeviceMemoryBase lo = clt_mem(p), hi = clt_mem(p + 4);
  word = 7;
  ck_assert(t.se->host_callback(t.sp, s, slow_writer, &word));
  t.se->mem_zero(t.sp, s, &lo, 4, t.st);
  clt_ok(&t);
  t.se->sync_memcpy_htod(t.sp, &lo, &ones, 4, t.st);
  clt_ok(&t);
  t.se->sync_memcpy_dtoh(t.sp, &out, &lo, 4, t.st);
  clt_ok(&t);
  ck_assert_uint_eq(out, ones);
  ck_assert(t.se->host_callback(t.sp, s, slow_writer, &word));
  t.se->memcpy_htod(t.sp, s, &hi, &word, 4, t.st);
  clt_ok(&t);
  t.se->sync_memcpy_dtoh(t.sp, &out, &hi, 4, t.st);
  clt_ok(&t);
  ck_assert_uint_eq(out, 42);
  clt_free(&t, p);
  clt_close(&t);
}
END_TEST

/* TensorFlow copies a tensor it received (an RPC from a parameter server,
 * a constant) onto the device on the host-to-device stream without making
 * that stream wait for the compute stream (PluggableDevice::
 * MaybeCopyTensorToPluggableDevice: sync_dst_compute false), into memory
 * its allocator may just have taken back from a tensor whose last reader
 * is enqueued on the compute stream but has not run. The reader must still
 * see the old contents: here the compute stream is held by a slow callback
 * while its copy out of the buffer waits behind it, and the write into
 * the buffer comes on the host-to-device stream meanwhile. */
START_TEST(copy_in_waits_for_earlier_readers)
{
  struct clt t = {0};
  static uint32_t word;
  uint32_t before[4] = {1, 2, 3, 4}, after[4] = {5, 6, 7, 8}, seen[4] = {0};
  clt_open(&t, 0);
  SP_Stream compute = clt_stream(&t, TFOCL_STREAM_COMPUTE);
  SP_Stream h2d = clt_stream(&t, TFOCL_STREAM_HOST_TO_DEVICE);
  char *p = clt_alloc(&t, 32);
  SP_DeviceMemoryBase freed = clt_mem(p), reader_out = clt_mem(p + 16);
  t.se->sync_memcpy_htod(t.sp, &freed, before, sizeof before, t.st);
  clt_ok(&t);
  ck_assert(t.se->host_callback(t.sp, compute, slow_writer, &word));
  t.se->memcpy_dtod(t.sp, compute, &reader_out, &freed, sizeof before, t.st);
  clt_ok(&t);
  t.se->memcpy_htod(t.sp, h2d, &freed, after, sizeof after, t.st);
  clt_ok(&t);
  t.se->block_host_until_done(t.sp, compute, t.st);
  t.se->block_host_until_done(t.sp, h2d, t.st);
  clt_ok(&t);
  t.se->sync_memcpy_dtoh(t.sp, seen, &reader_out, sizeof seen, t.st);
  clt_ok(&t);
  ck_assert_mem_eq(seen, before, sizeof before);
  t.se->sync_memcpy_dtoh(t.sp, seen, &freed, sizeof seen, t.st);
  clt_ok(&t);
  ck_assert_mem_eq(seen, after, sizeof after);
  clt_free(&t, p);
  clt_close(&t);
}
END_TEST

static void failing_callback(void *arg, TF_Status *status) {
  (void)arg;
  TF_SetStatus(status, TF_DATA_LOSS, "callback says no");
}

START_TEST(callback_error_goes_to_stream) {
  struct clt t = {0};
  clt_open(&t, 0);
  SP_Stream s = clt_stream(&t, TFOCL_STREAM_COMPUTE);
  SP_Stream other = clt_stream(&t, TFOCL_STREAM_DEVICE_TO_HOST);
  ck_assert(t.se->host_callback(t.sp, s, failing_callback, NULL));
  t.se->block_host_until_done(t.sp, s, t.st);
  clt_ok(&t);
  t.se->get_stream_status(t.sp, s, t.st);
  ck_assert_int_eq(TF_GetCode(t.st), TF_DATA_LOSS);
  ck_assert_str_eq(TF_Message(t.st), "callback says no");
  t.se->get_stream_status(t.sp, other, t.st);
  clt_ok(&t);
  clt_close(&t);
}
END_TEST

/* Streams made and destroyed directly, with callbacks still pending. */
START_TEST(stream_lifecycle) {
  struct clt t = {0};
  static struct order_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  static struct order_arg args[10];
  SP_Stream s = NULL;
  clt_open(&t, 0);
  t.se->create_stream(t.sp, &s, t.st);
  clt_ok(&t);
  ck_assert_ptr_nonnull(s);
  for (int i = 0; i < 10; i++) {
    args[i] = (struct order_arg){&log, i};
    ck_assert(t.se->host_callback(t.sp, s, record_order, &args[i]));
  }
  SP_Event e;
  t.se->create_event(t.sp, &e, t.st);
  t.se->record_event(t.sp, s, e, t.st);
  clt_ok(&t);
  t.se->destroy_stream(t.sp, s); /* runs the pending callbacks */
  ck_assert_int_eq(log.next, 10);
  ck_assert_int_eq(t.se->get_event_status(t.sp, e), SE_EVENT_COMPLETE);
  t.se->destroy_event(t.sp, e); /* after its stream: fine */
  t.se->destroy_stream(t.sp, NULL);
  clt_close(&t);
}
END_TEST

static Suite *stream_suite(void) {
  Suite *s = suite_create("stream");
  TCase *tc = tcase_create("stream");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, producer_consumer_events);
  tcase_add_test(tc, event_status_values);
  tcase_add_test(tc, stream_dependency);
  tcase_add_test(tc, host_callbacks_in_order);
  tcase_add_test(tc, callback_enqueues_on_its_stream);
  tcase_add_test(tc, later_work_waits_for_callback);
  tcase_add_test(tc, sync_copies_wait_for_streams);
  tcase_add_test(tc, copy_in_waits_for_earlier_readers);
  tcase_add_test(tc, callback_error_goes_to_stream);
  tcase_add_test(tc, stream_lifecycle);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return clt_main(stream_suite()); }
