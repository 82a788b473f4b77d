/* tfocl plugin: host callbacks in stream order (contract 3).
 *
 * host_callback enqueues, on the stream, a marker (the prior work) and then
 * a barrier on a fresh user event, the gate (later work waits for the
 * callback, as CUDA's cuLaunchHostFunc does and TensorFlow assumes). The
 * marker's CL_COMPLETE event callback only marks the record ready and
 * wakes the stream's worker thread (started on its first callback); it
 * runs on a driver thread, or at once inside clSetEventCallback, where
 * blocking or enqueueing is not allowed. The worker runs ready records in
 * FIFO order with a new TF_Status, records a non-OK status on the stream
 * and opens the gate. No thread waits inside a driver call (NVIDIA's
 * clWaitForEvents spins a core), except on a driver that runs queued work
 * only inside its own waits (Oclgrind): there the worker waits for the
 * marker in the driver, which runs the queue up to it.
 * Deadlock-free: a record only waits for work enqueued before it, and FIFO
 * order per stream keeps every earlier callback ahead of it. */
#include <stdlib.h>

#include "ocl.h"

struct ocl_callback_worker;

struct ocl_callback {
  SE_StatusCallbackFn fn;
  void *arg;
  cl_event marker; /* owned: the stream's work before the callback */
  cl_event gate;   /* owned: user event the stream's later work waits for */
  struct ocl_callback_worker *worker;
  /* Under worker->lock: */
  bool ready;          /* the marker finished (or failed) */
  bool wait_on_host;   /* no event callback: the worker waits for it */
  cl_int marker_status; /* CL_COMPLETE or the marker's negative status */
  struct ocl_callback *next;
};

struct ocl_callback_worker {
  SP_Stream stream;
  pthread_t thread;
  /* Held by host_callback from the marker's enqueue to the record's
   * append, so the list order is the queue order even when threads add
   * callbacks to one stream at once (else the head could wait for a gate
   * behind it). Never taken by an event callback. */
  pthread_mutex_t order;
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

/* The marker's event callback: signal only. The record stays valid until
 * it is ready, and is not touched once the lock is released. */
static void CL_CALLBACK marker_done(cl_event event, cl_int exec_status,
                                    void *arg) {
  struct ocl_callback *cb = arg;
  struct ocl_callback_worker *w = cb->worker;

  (void)event;
  pthread_mutex_lock(&w->lock);
  cb->marker_status = exec_status < 0 ? exec_status : CL_COMPLETE;
  cb->ready = true;
  pthread_cond_signal(&w->wake);
  pthread_mutex_unlock(&w->lock);
}

static void run_one(SP_Stream stream, struct ocl_callback *cb) {
  TF_Status *status;
  cl_int marker_status = cb->marker_status;

  if (cb->wait_on_host &&
      ocl_wait_event(stream->dev, NULL, cb->marker, &marker_status, NULL) !=
          CL_SUCCESS)
    marker_status = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  /* The callback runs whatever the work did (CUDA runs it too); a failure
   * of the work before it goes to the stream. */
  if (marker_status < 0)
    ocl_stream_set_work_failed(stream, marker_status, "host_callback");
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
    /* Markers of one in-order queue finish in order, but their event
     * callbacks may arrive in any order: only the head may run. */
    while (!(w->head && w->head->ready) && !(w->stop && !w->head))
      pthread_cond_wait(&w->wake, &w->lock);
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
  pthread_mutex_init(&w->order, NULL);
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->wake, NULL);
  if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    pthread_mutex_destroy(&w->order);
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
  /* The worker drains first: every pending marker's event callback has
   * run (or the worker waited for it) when it exits. */
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->wake);
  pthread_mutex_destroy(&w->lock);
  pthread_mutex_destroy(&w->order);
  free(w);
}

TF_Bool ocl_host_callback(const SP_Device *device, SP_Stream stream,
                          SE_StatusCallbackFn callback_fn, void *callback_arg) {
  struct ocl_callback_worker *w;
  struct ocl_callback *cb;
  bool driver_only;
  cl_int err;

  if (!stream || !callback_fn) return 0;
  if (!ocl_stream_live(device, stream, "host_callback", NULL)) return 0;
  driver_only = ocl_host_wait_kind(stream->dev) == OCL_HOST_WAIT_DRIVER_ONLY;
  pthread_mutex_lock(&stream->lock);
  if (!stream->worker) stream->worker = worker_create(stream);
  w = stream->worker;
  pthread_mutex_unlock(&stream->lock);
  if (!w) return 0;
  cb = calloc(1, sizeof *cb);
  if (!cb) return 0;
  cb->fn = callback_fn;
  cb->arg = callback_arg;
  cb->worker = w;
  cb->marker_status = CL_COMPLETE;
  cb->gate = clCreateUserEvent(ocl_device_context(stream->dev), &err);
  if (err != CL_SUCCESS) goto fail_cb;
  pthread_mutex_lock(&w->order);
  err = clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &cb->marker);
  if (err != CL_SUCCESS) goto fail_gate;
  err = clEnqueueBarrierWithWaitList(stream->queue, 1, &cb->gate, NULL);
  if (err != CL_SUCCESS) goto fail_marker;
  /* Set before the record is queued: it may run at once (or on a driver
   * thread any time) and then only marks the record, which the worker
   * cannot take before it is queued. */
  if (driver_only)
    err = CL_INVALID_OPERATION; /* its work runs only inside its waits */
  else
    err = clSetEventCallback(cb->marker, CL_COMPLETE, marker_done, cb);
  pthread_mutex_lock(&w->lock);
  if (err != CL_SUCCESS) {
    /* The barrier is in: the callback must still run. The worker waits
     * for the marker itself. */
    OCL_TRACE("host_callback: no event callback (%s): waiting on the host",
              ocl_cl_error_name(err));
    cb->wait_on_host = true;
    cb->ready = true;
  }
  if (w->tail)
    w->tail->next = cb;
  else
    w->head = cb;
  w->tail = cb;
  pthread_cond_signal(&w->wake);
  pthread_mutex_unlock(&w->lock);
  pthread_mutex_unlock(&w->order);
  /* The marker must reach the device for its callback to come. Not where
   * the driver runs work only inside its waits: Oclgrind's clFlush runs
   * the queue on this thread, into the gate that only the callback opens;
   * there the worker's own wait runs the queue up to the marker. */
  if (!driver_only) clFlush(stream->queue);
  return 1;
fail_marker:
  clReleaseEvent(cb->marker);
fail_gate:
  pthread_mutex_unlock(&w->order);
  clSetUserEventStatus(cb->gate, CL_COMPLETE);
  clReleaseEvent(cb->gate);
fail_cb:
  OCL_TRACE("host_callback: %s (%d)", ocl_cl_error_name(err), (int)err);
  free(cb);
  return 0;
}
