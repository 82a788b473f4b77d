/* tfocl plugin: SP_Event = the cl_event of the last marker recorded
 * (contract 2). Events are re-recorded; the status is only PENDING or
 * COMPLETE, because TensorFlow aborts on UNKNOWN or ERROR: a failed marker
 * reads COMPLETE and its error goes to the stream it was recorded on.
 *
 * Also the plugin's only ways to block the host (ocl_wait_event,
 * ocl_finish_queue) and to make a queue wait for an event of another
 * cl_context. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ocl.h"

/* ---- Host waits ----------------------------------------------------------
 *
 * clFinish and clWaitForEvents spin a CPU core on NVIDIA's OpenCL for as
 * long as the device works. Drivers other than those known to sleep in
 * their own waits (ocl_host_wait_kind) get one of two waits instead.
 *
 * On a GPU the host polls the event's status: yielding its core between
 * polls for the first TFOCL_HOST_WAIT_SPIN_US (CUDA's default wait spins
 * for as long as the device works), then sleeping between polls, each
 * sleep twice the last up to POLL_SLEEP_MAX_NS. A wait then ends at most
 * that long after the work, and a long one costs a wake-up per sleep. Event callbacks were the
 * GPU's wait before: on NVIDIA's driver (an H200, tfocl bench, a wait per
 * call) they came about 0.2 ms after a 0.1 ms copy and 4-9 ms after a
 * 0.7 ms GEMM, which then ran at a seventh to a thirteenth of its speed.
 *
 * On a CPU device a poller would take a core from the kernels it waits
 * for: there the host registers a CL_COMPLETE callback on the event and
 * sleeps on a condition variable. The callback only signals: OpenCL runs
 * it on a driver thread (or at once, inside clSetEventCallback, when the
 * event already finished), where blocking or enqueueing is not allowed. It
 * also runs when the event fails, with the negative status. The waiter is
 * on the heap with two references (the waiting thread's and the
 * callback's) so that whichever side finishes last frees it: the callback
 * may still be leaving the mutex when the waiter wakes. */

#define DEFAULT_SPIN_US 100
#define POLL_SLEEP_MIN_NS 5000
#define POLL_SLEEP_MAX_NS 100000

struct host_waiter {
  pthread_mutex_t lock;
  pthread_cond_t done_cond;
  bool done;
  cl_int exec_status; /* CL_COMPLETE or the event's negative status */
  int refs;
};

static void waiter_unref(struct host_waiter *w) {
  bool last;

  pthread_mutex_lock(&w->lock);
  last = --w->refs == 0;
  pthread_mutex_unlock(&w->lock);
  if (!last) return;
  pthread_cond_destroy(&w->done_cond);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

static void CL_CALLBACK waiter_signal(cl_event event, cl_int exec_status,
                                      void *arg) {
  struct host_waiter *w = arg;

  (void)event;
  pthread_mutex_lock(&w->lock);
  w->exec_status = exec_status < 0 ? exec_status : CL_COMPLETE;
  w->done = true;
  pthread_cond_signal(&w->done_cond);
  pthread_mutex_unlock(&w->lock);
  waiter_unref(w);
}

bool ocl_host_waits_in_driver(struct ocl_device *dev)
{
  enum ocl_host_wait kind = ocl_host_wait_kind(dev);

  return kind == OCL_HOST_WAIT_DRIVER || kind == OCL_HOST_WAIT_DRIVER_ONLY;
}

enum ocl_host_wait ocl_host_wait_kind(struct ocl_device *dev) {
  int kind;
  enum ocl_host_wait_choice choice;

  if (!dev) return OCL_HOST_WAIT_CALLBACK;
  kind = __atomic_load_n(&dev->host_wait, __ATOMIC_RELAXED);
  if (kind) return (enum ocl_host_wait)kind;
  /* Decided the same way by any thread that gets here first. */
  choice = ocl_config()->host_wait;
  if (dev->ctx->is_oclgrind)
    kind = OCL_HOST_WAIT_DRIVER_ONLY;
  else if (choice == OCL_HOST_WAIT_FORCE_CALLBACK)
    kind = OCL_HOST_WAIT_CALLBACK;
  else if (choice == OCL_HOST_WAIT_FORCE_DRIVER)
    kind = OCL_HOST_WAIT_DRIVER;
  else if (choice == OCL_HOST_WAIT_FORCE_POLL)
    kind = OCL_HOST_WAIT_POLL;
  else if (dev->ctx->is_pocl)
    /* PoCL's clFinish and clWaitForEvents sleep on condition variables,
     * and clFinish of an idle queue returns at once: TensorFlow's
     * synchronize_all_activity after every step costs ~1 us there, against
     * ~150-300 us for markers and callbacks on a loaded 2-core host. */
    kind = OCL_HOST_WAIT_DRIVER;
  else
    kind = ocl_device_is_cpu(dev) ? OCL_HOST_WAIT_CALLBACK : OCL_HOST_WAIT_POLL;
  __atomic_store_n(&dev->host_wait, kind, __ATOMIC_RELAXED);
  OCL_TRACE("device %d: host waits by %s", dev->ordinal,
            kind == OCL_HOST_WAIT_CALLBACK ? "event callbacks"
            : kind == OCL_HOST_WAIT_POLL   ? "polling"
                                           : "the driver");
  return (enum ocl_host_wait)kind;
}

/* The driver's own wait: where it sleeps, or where it refused the
 * callback (out of host memory). */
static cl_int driver_wait(cl_event event, cl_int *exec_status) {
  cl_int err = clWaitForEvents(1, &event), state = CL_COMPLETE;

  if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
    if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state,
                       &state, NULL) != CL_SUCCESS || state >= 0)
      state = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    err = CL_SUCCESS;
  } else if (err == CL_SUCCESS &&
             (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                             sizeof state, &state, NULL) != CL_SUCCESS ||
              state > 0)) {
    /* NVIDIA's clWaitForEvents returns CL_SUCCESS for a failed event too
     * (an H200, ci/gpu): its status says so. */
    state = CL_COMPLETE;
  }
  *exec_status = state;
  return err;
}

static int64_t monotonic_ns(void)
{
  struct timespec t;

  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static cl_int poll_wait(cl_event event, cl_int *exec_status)
{
  int spin_us = ocl_config()->host_wait_spin_us;
  int64_t spin_end;
  long sleep_ns = POLL_SLEEP_MIN_NS;

  spin_end = monotonic_ns() +
             (int64_t)(spin_us < 0 ? DEFAULT_SPIN_US : spin_us) * 1000;
  for (;;) {
    cl_int state;
    cl_int err = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                sizeof state, &state, NULL);

    if (err != CL_SUCCESS)
      return err;
    if (state <= CL_COMPLETE) {
      *exec_status = state < 0 ? state : CL_COMPLETE;
      return CL_SUCCESS;
    }
    if (monotonic_ns() < spin_end) {
      sched_yield();
    } else {
      struct timespec pause = {0, sleep_ns};

      nanosleep(&pause, NULL);
      sleep_ns =
          sleep_ns * 2 < POLL_SLEEP_MAX_NS ? sleep_ns * 2 : POLL_SLEEP_MAX_NS;
    }
  }
}

cl_int ocl_wait_event(struct ocl_device *dev, cl_command_queue flush,
                      cl_event event, cl_int *exec_status, const char **call) {
  struct host_waiter *w = NULL;
  cl_int status_storage, err;

  if (!exec_status) exec_status = &status_storage;
  *exec_status = CL_COMPLETE;
  /* Submitted, or a driver that batches (NVIDIA) may never start it. */
  if (flush && (err = clFlush(flush)) != CL_SUCCESS) {
    if (call) *call = "clFlush";
    return err;
  }
  switch (ocl_host_wait_kind(dev)) {
  case OCL_HOST_WAIT_POLL:
    err = poll_wait(event, exec_status);
    if (err != CL_SUCCESS && call)
      *call = "clGetEventInfo";
    return err;
  case OCL_HOST_WAIT_CALLBACK: w = calloc(1, sizeof *w); break;
  default: break;
  }
  if (w) {
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->done_cond, NULL);
    w->refs = 2;
    err = clSetEventCallback(event, CL_COMPLETE, waiter_signal, w);
    if (err == CL_SUCCESS) {
      pthread_mutex_lock(&w->lock);
      while (!w->done) pthread_cond_wait(&w->done_cond, &w->lock);
      *exec_status = w->exec_status;
      pthread_mutex_unlock(&w->lock);
      waiter_unref(w);
      return CL_SUCCESS;
    }
    OCL_TRACE("clSetEventCallback: %s: waiting in the driver",
              ocl_cl_error_name(err));
    w->refs = 1;
    waiter_unref(w);
  }
  err = driver_wait(event, exec_status);
  if (err != CL_SUCCESS && call) *call = "clWaitForEvents";
  return err;
}

cl_int ocl_finish_queue(struct ocl_device *dev, cl_command_queue q,
                        cl_int *exec_status, const char **call) {
  cl_event marker = NULL;
  cl_int err;

  if (exec_status) *exec_status = CL_COMPLETE;
  if (ocl_host_waits_in_driver(dev)) {
    err = clFinish(q);
    if (err != CL_SUCCESS && call) *call = "clFinish";
    return err;
  }
  err = clEnqueueMarkerWithWaitList(q, 0, NULL, &marker);
  if (err != CL_SUCCESS) {
    if (call) *call = "clEnqueueMarkerWithWaitList";
    return err;
  }
  err = ocl_wait_event(dev, q, marker, exec_status, call);
  clReleaseEvent(marker);
  return err;
}

/* Completes the user event of another context with the status its source
 * event ended with, then drops the reference the relay held. Signalling
 * only: clSetUserEventStatus never blocks. */
static void CL_CALLBACK relay_signal(cl_event event, cl_int exec_status,
                                     void *arg) {
  cl_event user = arg;

  (void)event;
  clSetUserEventStatus(user, exec_status < 0 ? exec_status : CL_COMPLETE);
  clReleaseEvent(user);
}

cl_int ocl_enqueue_wait_for(cl_command_queue q, struct ocl_device *q_dev,
                            cl_event event, struct ocl_device *event_dev,
                            const char **call) {
  cl_event user;
  cl_int err, exec_status;

  if (q_dev->ctx == event_dev->ctx) {
    *call = "clEnqueueBarrierWithWaitList";
    return clEnqueueBarrierWithWaitList(q, 1, &event, NULL);
  }
  /* Nobody would run the other queue's work but a wait on it. */
  if (ocl_host_wait_kind(event_dev) == OCL_HOST_WAIT_DRIVER_ONLY)
    return ocl_wait_event(event_dev, NULL, event, &exec_status, call);
  /* A queue only waits for events of its own context: a user event of
   * q_dev's stands in, completed when `event` is (no host thread waits). */
  user = clCreateUserEvent(q_dev->ctx->context, &err);
  if (err != CL_SUCCESS) {
    *call = "clCreateUserEvent";
    return err;
  }
  clRetainEvent(user); /* the relay's reference, dropped by relay_signal */
  err = clSetEventCallback(event, CL_COMPLETE, relay_signal, user);
  if (err != CL_SUCCESS) {
    /* No relay: wait on the host instead, then nothing is left to wait
     * for on q. */
    clSetUserEventStatus(user, CL_COMPLETE);
    clReleaseEvent(user);
    clReleaseEvent(user);
    return ocl_wait_event(event_dev, NULL, event, &exec_status, call);
  }
  *call = "clEnqueueBarrierWithWaitList";
  err = clEnqueueBarrierWithWaitList(q, 1, &user, NULL);
  clReleaseEvent(user);
  return err;
}

void ocl_create_event(const SP_Device *device, SP_Event *event,
                      TF_Status *status) {
  struct SP_Event_st *e;

  ocl_set_ok(status);
  *event = NULL;
  e = calloc(1, sizeof *e);
  if (!e) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "create_event: out of memory");
    return;
  }
  e->dev = ocl_sp_device(device);
  pthread_mutex_init(&e->lock, NULL);
  *event = e;
}

void ocl_destroy_event(const SP_Device *device, SP_Event event) {
  (void)device;
  if (!event) return;
  if (event->marker) clReleaseEvent(event->marker);
  ocl_stream_unref(event->stream);
  pthread_mutex_destroy(&event->lock);
  free(event);
}

/* The recorded marker, retained for the caller (the second owner, for the
 * duration of one call), so a concurrent re-record cannot free it. */
static cl_event take_marker(SP_Event event, SP_Stream *stream) {
  cl_event marker;

  pthread_mutex_lock(&event->lock);
  marker = event->marker;
  if (marker) clRetainEvent(marker);
  if (stream) {
    *stream = event->stream;
    if (*stream) ocl_stream_ref(*stream);
  }
  pthread_mutex_unlock(&event->lock);
  return marker;
}

SE_EventStatus ocl_get_event_status(const SP_Device *device, SP_Event event) {
  SP_Stream stream = NULL;
  cl_event marker;
  cl_int state = CL_COMPLETE, err;

  (void)device;
  if (!event) return SE_EVENT_COMPLETE;
  marker = take_marker(event, &stream);
  if (!marker) goto out; /* never recorded: nothing to wait for */
  err = clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state,
                       &state, NULL);
  if (err != CL_SUCCESS) state = err;
  if (state < 0) {
    ocl_stream_set_work_failed(stream, state, "event");
    state = CL_COMPLETE;
  }
  clReleaseEvent(marker);
out:
  ocl_stream_unref(stream);
  return state == CL_COMPLETE ? SE_EVENT_COMPLETE : SE_EVENT_PENDING;
}

void ocl_record_event(const SP_Device *device, SP_Stream stream,
                      SP_Event event, TF_Status *status) {
  cl_event marker = NULL, old;
  SP_Stream old_stream;

  ocl_set_ok(status);
  if (!stream || !event) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "record_event: no %s",
                   stream ? "event" : "stream");
    return;
  }
  if (!ocl_stream_live(device, stream, "record_event", status)) return;
  OCL_CHECK(clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &marker),
            status, "clEnqueueMarkerWithWaitList");
  /* Submitted now, so that polling and other queues see it progress. */
  OCL_CHECK(clFlush(stream->queue), status, "clFlush");
  ocl_stream_ref(stream);
  pthread_mutex_lock(&event->lock);
  old = event->marker;
  old_stream = event->stream;
  event->marker = marker;
  event->stream = stream;
  pthread_mutex_unlock(&event->lock);
  if (old) clReleaseEvent(old);
  ocl_stream_unref(old_stream);
  return;
fail:
  if (marker) clReleaseEvent(marker);
}

void ocl_wait_for_event(const SP_Device *const device, SP_Stream stream,
                        SP_Event event, TF_Status *const status) {
  SP_Stream recorded_on = NULL;
  const char *call = "clEnqueueBarrierWithWaitList";
  cl_event marker;

  ocl_set_ok(status);
  if (!stream || !event) return;
  /* The stream and the event may belong to different devices (a stream of
   * device 1 waiting for work of device 0): each is its own device's. */
  if (!ocl_stream_live(device, stream, "wait_for_event", status)) return;
  marker = take_marker(event, &recorded_on);
  if (!marker) goto out;
  OCL_CHECK(ocl_enqueue_wait_for(stream->queue, stream->dev, marker,
                                 recorded_on->dev, &call),
            status, call);
fail:
  clReleaseEvent(marker);
out:
  ocl_stream_unref(recorded_on);
}

void ocl_block_host_for_event(const SP_Device *device, SP_Event event,
                              TF_Status *status) {
  SP_Stream recorded_on = NULL;
  const char *call = "clWaitForEvents";
  cl_event marker;
  cl_int err, exec_status;

  (void)device;
  ocl_set_ok(status);
  if (!event) return;
  marker = take_marker(event, &recorded_on);
  if (!marker) goto out;
  /* record_event flushed the marker's queue. A failed marker still counts
   * as done; its error goes to the stream it was recorded on. */
  err = ocl_wait_event(recorded_on->dev, NULL, marker, &exec_status, &call);
  if (err != CL_SUCCESS)
    ocl_set_cl_error(status, err, call);
  else if (exec_status < 0)
    ocl_stream_set_work_failed(recorded_on, exec_status, "event");
  clReleaseEvent(marker);
out:
  ocl_stream_unref(recorded_on);
}
