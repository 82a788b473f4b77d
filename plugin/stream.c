/* tfocl plugin: SP_Stream = one in-order cl_command_queue (contract 2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

struct ocl_device *ocl_stream_device(SP_Stream stream) {
  return stream ? stream->dev : NULL;
}

cl_command_queue ocl_stream_queue(SP_Stream stream) {
  return stream ? stream->queue : NULL;
}

void ocl_stream_set_error_code(SP_Stream stream, TF_Code code,
                               const char *message) {
  if (!stream || code == TF_OK) return;
  pthread_mutex_lock(&stream->lock);
  if (stream->error_code == TF_OK) {
    stream->error_code = code;
    snprintf(stream->error_message, sizeof stream->error_message, "%s",
             message ? message : "");
  }
  pthread_mutex_unlock(&stream->lock);
  OCL_TRACE("stream %p: error %d: %s", (void *)stream, (int)code,
            message ? message : "");
}

void ocl_stream_set_error(SP_Stream stream, const TF_Status *error) {
  if (!stream || !error) return;
  ocl_stream_set_error_code(stream, ocl_tf.GetCode(error),
                            ocl_tf.Message(error));
}

bool ocl_stream_live(const SP_Device *device, SP_Stream stream,
                     const char *fn, TF_Status *status) {
  struct ocl_device *dev = ocl_sp_device(device);
  bool live = false;

  if (dev && stream) {
    /* Compares addresses only: never reads a stream that is not listed. */
    pthread_mutex_lock(&dev->streams_lock);
    for (struct SP_Stream_st *s = dev->streams; s && !live; s = s->next)
      live = s == stream;
    pthread_mutex_unlock(&dev->streams_lock);
  }
  if (!live)
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: stream %p is not a live stream of this device", fn,
                   (void *)stream);
  return live;
}

void ocl_stream_ref(SP_Stream stream) {
  __atomic_add_fetch(&stream->refs, 1, __ATOMIC_RELAXED);
}

void ocl_stream_unref(SP_Stream stream) {
  if (!stream || __atomic_sub_fetch(&stream->refs, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  pthread_mutex_destroy(&stream->lock);
  free(stream);
}

void ocl_create_stream(const SP_Device *device, SP_Stream *stream,
                       TF_Status *status) {
  struct ocl_device *dev = ocl_sp_device(device);
  struct SP_Stream_st *s;
  cl_int err;

  ocl_set_ok(status);
  *stream = NULL;
  if (!dev) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "create_stream: no device");
    return;
  }
  s = calloc(1, sizeof *s);
  if (!s) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "create_stream: out of memory");
    return;
  }
  s->dev = dev;
  s->refs = 1;
  pthread_mutex_init(&s->lock, NULL);
  /* In order (markers and barriers give the ordering across queues), with
   * profiling on so that a profile can start at any time
   * (plugin/profiler). */
  const cl_queue_properties profiled[] = {CL_QUEUE_PROPERTIES,
                                          CL_QUEUE_PROFILING_ENABLE, 0};
  s->queue = clCreateCommandQueueWithProperties(ocl_device_context(dev),
                                                dev->id, profiled, &err);
  OCL_CHECK(err, status, "clCreateCommandQueueWithProperties");
  pthread_mutex_lock(&dev->streams_lock);
  s->next = dev->streams;
  if (dev->streams) dev->streams->prev = s;
  dev->streams = s;
  pthread_mutex_unlock(&dev->streams_lock);
  *stream = s;
  return;
fail:
  pthread_mutex_destroy(&s->lock);
  free(s);
}

void ocl_destroy_stream(const SP_Device *device, SP_Stream stream) {
  struct ocl_device *dev;

  if (!stream) return;
  if (!ocl_stream_live(device, stream, "destroy_stream", NULL)) {
    OCL_TRACE("destroy_stream: %p is not a live stream", (void *)stream);
    return;
  }
  dev = stream->dev;
  pthread_mutex_lock(&dev->streams_lock);
  if (stream->prev) stream->prev->next = stream->next;
  if (stream->next) stream->next->prev = stream->prev;
  if (dev->streams == stream) dev->streams = stream->next;
  pthread_mutex_unlock(&dev->streams_lock);
  /* Pending callbacks still run: their user events gate the queue. */
  clFlush(stream->queue);
  ocl_callback_worker_destroy(stream->worker);
  stream->worker = NULL;
  clFinish(stream->queue);
  clReleaseCommandQueue(stream->queue);
  stream->queue = NULL;
  ocl_stream_unref(stream);
}

void ocl_create_stream_dependency(const SP_Device *device, SP_Stream dependent,
                                  SP_Stream other, TF_Status *status) {
  cl_event marker = NULL;

  ocl_set_ok(status);
  if (!dependent || !other || dependent == other) return;
  if (!ocl_stream_live(device, dependent, "create_stream_dependency", status) ||
      !ocl_stream_live(device, other, "create_stream_dependency", status))
    return;
  OCL_CHECK(clEnqueueMarkerWithWaitList(other->queue, 0, NULL, &marker), status,
            "clEnqueueMarkerWithWaitList");
  /* A cross-queue wait needs the marker submitted. */
  OCL_CHECK(clFlush(other->queue), status, "clFlush");
  OCL_CHECK(clEnqueueBarrierWithWaitList(dependent->queue, 1, &marker, NULL),
            status, "clEnqueueBarrierWithWaitList");
fail:
  if (marker) clReleaseEvent(marker);
}

void ocl_get_stream_status(const SP_Device *device, SP_Stream stream,
                           TF_Status *status) {
  ocl_set_ok(status);
  if (!stream) return;
  if (!ocl_stream_live(device, stream, "get_stream_status", status)) return;
  pthread_mutex_lock(&stream->lock);
  if (stream->error_code != TF_OK)
    ocl_tf.SetStatus(status, stream->error_code, stream->error_message);
  pthread_mutex_unlock(&stream->lock);
}

void ocl_block_host_until_done(const SP_Device *device, SP_Stream stream,
                               TF_Status *status) {
  ocl_set_ok(status);
  if (!stream) return;
  if (!ocl_stream_live(device, stream, "block_host_until_done", status)) return;
  OCL_CHECK(clFinish(stream->queue), status, "clFinish");
fail:
  return;
}

/* Finishes every stream of dev, then its service queue. */
cl_int ocl_device_finish_all(struct ocl_device *dev) {
  cl_command_queue *queues = NULL;
  size_t n = 0, cap = 0;
  cl_int err = CL_SUCCESS;

  /* Finish outside the lock: a host callback that a queue waits for may
   * itself create or destroy streams. Each queue is retained meanwhile (the
   * second owner is this function, for its duration). */
  pthread_mutex_lock(&dev->streams_lock);
  for (struct SP_Stream_st *s = dev->streams; s; s = s->next) cap++;
  queues = calloc(cap ? cap : 1, sizeof *queues);
  for (struct SP_Stream_st *s = dev->streams; queues && s; s = s->next) {
    clRetainCommandQueue(s->queue);
    queues[n++] = s->queue;
  }
  pthread_mutex_unlock(&dev->streams_lock);
  if (!queues) return CL_OUT_OF_HOST_MEMORY;
  for (size_t i = 0; i < n; i++) {
    cl_int e = clFinish(queues[i]);
    if (err == CL_SUCCESS) err = e;
    clReleaseCommandQueue(queues[i]);
  }
  free(queues);
  if (err == CL_SUCCESS) err = clFinish(dev->service_queue);
  return err;
}

void ocl_synchronize_all_activity(const SP_Device *device, TF_Status *status) {
  struct ocl_device *dev = ocl_sp_device(device);

  ocl_set_ok(status);
  if (!dev) return;
  OCL_CHECK(ocl_device_finish_all(dev), status, "clFinish");
fail:
  return;
}
