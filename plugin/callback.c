/* tfocl plugin: host callbacks in stream order (contract 3).
 *
 * host_callback enqueues, on the stream, a marker (the prior work) and then
 * a barrier on a fresh user event (later work waits for the callback). The
 * stream's own worker thread, started on its first callback, takes records
 * in FIFO order, waits for the marker, runs the callback with a new
 * TF_Status, records a non-OK status on the stream and completes the user
 * event. Callbacks never run inside an OpenCL event callback (drivers run
 * those on their own threads, where blocking or enqueueing is unsafe).
 * Deadlock-free: a record only waits for work enqueued before it, and FIFO
 * order per stream keeps every earlier callback ahead of it. */
#include <stdlib.h>

#include "ocl.h"

struct ocl_callback {
  SE_StatusCallbackFn fn;
  void *arg;
  cl_event marker; /* owned: the stream's work before the callback */
  cl_event gate;   /* owned: user event the stream's later work waits for */
  struct ocl_callback *next;
};

struct ocl_callback_worker {
  SP_Stream stream;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  struct ocl_callback *head, *tail;
  bool stop;
};

/* Completes the gate the stream's later work waits for. It must open, or
 * the queue (and whoever waits for it) hangs: a failure is retried, then
 * the gate is opened with an error status (the waiting commands fail, and
 * the stream records the error). */
static void open_gate(SP_Stream stream, cl_event gate) {
  cl_int err = CL_SUCCESS;
  for (int attempt = 0; attempt < 3; attempt++)
    if ((err = clSetUserEventStatus(gate, CL_COMPLETE)) == CL_SUCCESS) return;
  ocl_stream_set_error_code(stream, ocl_cl_error_code(err),
                            "host_callback: clSetUserEventStatus failed");
  for (int attempt = 0; attempt < 3; attempt++)
    if (clSetUserEventStatus(gate, CL_OUT_OF_RESOURCES) == CL_SUCCESS) return;
}

static void run_one(SP_Stream stream, struct ocl_callback *cb) {
  TF_Status *status;
  cl_int err = CL_SUCCESS;

  /* A failed wait (out of resources) is retried: only a failure of the
   * work itself, which every retry reports again, marks the stream. */
  for (int attempt = 0; attempt < 3; attempt++)
    if ((err = clWaitForEvents(1, &cb->marker)) == CL_SUCCESS) break;
  if (err != CL_SUCCESS)
    ocl_stream_set_error_code(stream, ocl_cl_error_code(err),
                              "host_callback: the work before it failed");
  status = ocl_tf.NewStatus();
  cb->fn(cb->arg, status);
  if (ocl_tf.GetCode(status) != TF_OK) ocl_stream_set_error(stream, status);
  ocl_tf.DeleteStatus(status);
  open_gate(stream, cb->gate);
  clReleaseEvent(cb->gate);
  clReleaseEvent(cb->marker);
  free(cb);
}

static void *worker_main(void *arg) {
  struct ocl_callback_worker *w = arg;

  for (;;) {
    struct ocl_callback *cb;
    pthread_mutex_lock(&w->lock);
    while (!w->head && !w->stop) pthread_cond_wait(&w->wake, &w->lock);
    cb = w->head;
    if (cb) {
      w->head = cb->next;
      if (!w->head) w->tail = NULL;
    }
    pthread_mutex_unlock(&w->lock);
    if (!cb) break; /* stopping and drained */
    run_one(w->stream, cb);
  }
  return NULL;
}

static struct ocl_callback_worker *worker_create(SP_Stream stream) {
  struct ocl_callback_worker *w = calloc(1, sizeof *w);

  if (!w) return NULL;
  w->stream = stream;
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->wake, NULL);
  if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
    return NULL;
  }
  return w;
}

void ocl_callback_worker_destroy(struct ocl_callback_worker *w) {
  if (!w) return;
  pthread_mutex_lock(&w->lock);
  w->stop = true;
  pthread_cond_signal(&w->wake);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->wake);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

TF_Bool ocl_host_callback(const SP_Device *device, SP_Stream stream,
                          SE_StatusCallbackFn callback_fn, void *callback_arg) {
  struct ocl_callback_worker *w;
  struct ocl_callback *cb;
  cl_int err;

  if (!stream || !callback_fn) return 0;
  if (!ocl_stream_live(device, stream, "host_callback", NULL)) return 0;
  pthread_mutex_lock(&stream->lock);
  if (!stream->worker) stream->worker = worker_create(stream);
  w = stream->worker;
  pthread_mutex_unlock(&stream->lock);
  if (!w) return 0;
  cb = calloc(1, sizeof *cb);
  if (!cb) return 0;
  cb->fn = callback_fn;
  cb->arg = callback_arg;
  cb->gate = clCreateUserEvent(ocl_device_context(stream->dev), &err);
  if (err != CL_SUCCESS) goto fail_cb;
  err = clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &cb->marker);
  if (err != CL_SUCCESS) goto fail_gate;
  err = clEnqueueBarrierWithWaitList(stream->queue, 1, &cb->gate, NULL);
  if (err != CL_SUCCESS) goto fail_marker;
  clFlush(stream->queue);
  pthread_mutex_lock(&w->lock);
  if (w->tail)
    w->tail->next = cb;
  else
    w->head = cb;
  w->tail = cb;
  pthread_cond_signal(&w->wake);
  pthread_mutex_unlock(&w->lock);
  return 1;
fail_marker:
  clReleaseEvent(cb->marker);
fail_gate:
  clSetUserEventStatus(cb->gate, CL_COMPLETE);
  clReleaseEvent(cb->gate);
fail_cb:
  OCL_TRACE("host_callback: %s (%d)", ocl_cl_error_name(err), (int)err);
  free(cb);
  return 0;
}
