/* tfocl plugin: SP_Event = the cl_event of the last marker recorded
 * (contract 2). Events are re-recorded; the status is only PENDING or
 * COMPLETE, because TensorFlow aborts on UNKNOWN or ERROR: a failed marker
 * reads COMPLETE and its error goes to the stream it was recorded on. */
#include <stdio.h>
#include <stdlib.h>

#include "ocl.h"

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
    char message[160];
    snprintf(message, sizeof message,
             "event: the work before it failed: %s (%d)",
             ocl_cl_error_name(state), (int)state);
    ocl_stream_set_error_code(stream, ocl_cl_error_code(state), message);
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
  cl_event marker;

  ocl_set_ok(status);
  if (!stream || !event) return;
  if (!ocl_stream_live(device, stream, "wait_for_event", status)) return;
  marker = take_marker(event, NULL);
  if (!marker) return;
  OCL_CHECK(clEnqueueBarrierWithWaitList(stream->queue, 1, &marker, NULL),
            status, "clEnqueueBarrierWithWaitList");
fail:
  clReleaseEvent(marker);
}

void ocl_block_host_for_event(const SP_Device *device, SP_Event event,
                              TF_Status *status) {
  cl_event marker;
  cl_int err;

  (void)device;
  ocl_set_ok(status);
  if (!event) return;
  marker = take_marker(event, NULL);
  if (!marker) return;
  err = clWaitForEvents(1, &marker);
  /* A failed marker still counts as done; its error is the stream's. */
  if (err != CL_SUCCESS && err != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    ocl_set_cl_error(status, err, "clWaitForEvents");
  clReleaseEvent(marker);
}
