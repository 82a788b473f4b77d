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

void ocl_stream_set_work_failed(SP_Stream stream, cl_int exec_status,
                                const char *what) {
  char message[160];

  if (!stream) return;
  snprintf(message, sizeof message, "%s: the work before it failed: %s (%d)",
           what, ocl_cl_error_name(exec_status), (int)exec_status);
  ocl_stream_set_error_code(stream, ocl_cl_exec_error_code(exec_status),
                            message);
}

/* Compares addresses only: never reads a stream that is not listed. */
static bool listed(struct ocl_device *dev, SP_Stream stream) {
  bool found = false;

  pthread_mutex_lock(&dev->streams_lock);
  for (struct SP_Stream_st *s = dev->streams; s && !found; s = s->next)
    found = s == stream;
  pthread_mutex_unlock(&dev->streams_lock);
  return found;
}

bool ocl_stream_live(const SP_Device *device, SP_Stream stream,
                     const char *fn, TF_Status *status) {
  struct ocl_device *hint = ocl_sp_device(device);
  bool live = false;

  if (stream) {
    /* TensorFlow passes the device of the stream it calls on, but the
     * other stream of create_stream_dependency (and the memory of a copy)
     * may be another device's: each stream is checked against the live
     * set of its own device, the caller's first. */
    live = hint && listed(hint, stream);
    for (int i = 0, n = live ? 0 : ocl_device_count(); i < n && !live; i++) {
      struct ocl_device *dev = ocl_device_get(i);
      live = dev && dev != hint && listed(dev, stream);
    }
  }
  if (!live)
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: stream %p is not a live stream of any OpenCL device "
                   "of tfocl",
                   fn, (void *)stream);
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

/* A priority of TensorFlow's (GPUOptions' virtual device `priority`, CUDA's
 * sense: lower is more urgent) as a cl_khr_priority_hints level; 0 where the
 * device has no hints (the priority is accepted and has no effect). */
static cl_queue_properties priority_hint(const struct ocl_device *dev,
                                         const SP_StreamOptions *options) {
  if (!options || !dev->has_priority_hints) return 0;
  if (options->struct_size &&
      options->struct_size < TF_OFFSET_OF_END(SP_StreamOptions, priority))
    return 0;
  if (!options->has_priority) return 0;
  return options->priority < 0   ? CL_QUEUE_PRIORITY_HIGH_KHR
         : options->priority > 0 ? CL_QUEUE_PRIORITY_LOW_KHR
                                 : CL_QUEUE_PRIORITY_MED_KHR;
}

void ocl_create_stream_with_options(const SP_Device *device,
                                    const SP_StreamOptions *options,
                                    SP_Stream *stream, TF_Status *status) {
  struct ocl_device *dev = ocl_sp_device(device);
  struct SP_Stream_st *s;
  cl_queue_properties props[5] = {CL_QUEUE_PROPERTIES,
                                  CL_QUEUE_PROFILING_ENABLE, 0};
  cl_queue_properties hint;
  cl_int err;

  ocl_set_ok(status);
  *stream = NULL;
  if (!dev) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "create_stream: no device");
    return;
  }
  hint = priority_hint(dev, options);
  if (hint) {
    props[2] = CL_QUEUE_PRIORITY_KHR;
    props[3] = hint;
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
  s->queue = clCreateCommandQueueWithProperties(ocl_device_context(dev),
                                                dev->id, props, &err);
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

void ocl_create_stream(const SP_Device *device, SP_Stream *stream,
                       TF_Status *status) {
  ocl_create_stream_with_options(device, NULL, stream, status);
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
  ocl_finish_queue(dev, stream->queue, NULL, NULL);
  clReleaseCommandQueue(stream->queue);
  stream->queue = NULL;
  ocl_stream_unref(stream);
}

void ocl_create_stream_dependency(const SP_Device *device, SP_Stream dependent,
                                  SP_Stream other, TF_Status *status) {
  const char *call = "clEnqueueMarkerWithWaitList";
  cl_event marker = NULL;

  ocl_set_ok(status);
  if (!dependent || !other || dependent == other) return;
  /* `other` may be a stream of another device: a device-to-device copy
   * waits on the sender's stream for the receiver's compute stream. */
  if (!ocl_stream_live(device, dependent, "create_stream_dependency", status) ||
      !ocl_stream_live(device, other, "create_stream_dependency", status))
    return;
  OCL_CHECK(clEnqueueMarkerWithWaitList(other->queue, 0, NULL, &marker), status,
            "clEnqueueMarkerWithWaitList");
  /* A cross-queue wait needs the marker submitted. */
  OCL_CHECK(clFlush(other->queue), status, "clFlush");
  OCL_CHECK(ocl_enqueue_wait_for(dependent->queue, dependent->dev, marker,
                                 other->dev, &call),
            status, call);
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
  const char *call = "clFinish";
  cl_int exec_status;

  ocl_set_ok(status);
  if (!stream) return;
  if (!ocl_stream_live(device, stream, "block_host_until_done", status)) return;
  OCL_CHECK(ocl_finish_queue(stream->dev, stream->queue, &exec_status, &call),
            status, call);
  if (exec_status < 0) {
    ocl_stream_set_work_failed(stream, exec_status, "block_host_until_done");
    ocl_get_stream_status(device, stream, status);
  }
fail:
  return;
}

/* Driver waits: finishes every stream of dev in turn. Outside the lock: a
 * host callback that a queue waits for may itself create or destroy
 * streams. Each queue is retained meanwhile (the second owner is this
 * function, for its duration). */
static cl_int finish_streams(struct ocl_device *dev, const char **call) {
  cl_command_queue few[8], *queues = few;
  size_t n = 0, count = 0;
  cl_int err = CL_SUCCESS;

  pthread_mutex_lock(&dev->streams_lock);
  for (struct SP_Stream_st *s = dev->streams; s; s = s->next) count++;
  if (count > sizeof few / sizeof few[0])
    queues = calloc(count, sizeof *queues);
  for (struct SP_Stream_st *s = dev->streams; queues && s; s = s->next) {
    clRetainCommandQueue(s->queue);
    queues[n++] = s->queue;
  }
  pthread_mutex_unlock(&dev->streams_lock);
  if (!queues) {
    *call = "calloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (size_t i = 0; i < n; i++) {
    const char *c = "clFinish";
    cl_int e = ocl_finish_queue(dev, queues[i], NULL, &c);
    if (err == CL_SUCCESS && e != CL_SUCCESS) {
      err = e;
      *call = c;
    }
    clReleaseCommandQueue(queues[i]);
  }
  if (queues != few) free(queues);
  return err;
}

/* A barrier on q behind a marker of each of dev's streams but `except`
 * (NULL: all). Markers are enqueued under the lock (enqueueing never
 * blocks), so no stream can be destroyed meanwhile; each is flushed, as q
 * waits for it. */
static cl_int barrier_after_streams(struct ocl_device *dev, SP_Stream except,
                                    cl_command_queue q, const char **call)
{
  cl_event few[8], *markers = few;
  size_t n = 0, count = 0;
  cl_int err = CL_SUCCESS;

  pthread_mutex_lock(&dev->streams_lock);
  for (struct SP_Stream_st *s = dev->streams; s; s = s->next)
    count += s != except;
  if (count > sizeof few / sizeof few[0])
    markers = calloc(count, sizeof *markers);
  if (!markers) {
    pthread_mutex_unlock(&dev->streams_lock);
    *call = "calloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (struct SP_Stream_st *s = dev->streams; s && err == CL_SUCCESS;
       s = s->next) {
    if (s == except)
      continue;
    *call = "clEnqueueMarkerWithWaitList";
    err = clEnqueueMarkerWithWaitList(s->queue, 0, NULL, &markers[n]);
    if (err != CL_SUCCESS) break;
    n++;
    *call = "clFlush";
    err = clFlush(s->queue);
  }
  pthread_mutex_unlock(&dev->streams_lock);
  if (err == CL_SUCCESS && n > 0) {
    *call = "clEnqueueBarrierWithWaitList";
    err = clEnqueueBarrierWithWaitList(q, (cl_uint)n, markers, NULL);
  }
  for (size_t i = 0; i < n; i++) clReleaseEvent(markers[i]);
  if (markers != few) free(markers);
  return err;
}

cl_int ocl_service_queue_after_streams(struct ocl_device *dev,
                                       const char **call)
{
  if (ocl_host_waits_in_driver(dev))
    return finish_streams(dev, call);
  return barrier_after_streams(dev, NULL, dev->service_queue, call);
}

/* As ocl_service_queue_after_streams, but nothing ever blocks: a copy
 * enqueued from TensorFlow's executor must not wait on the host. */
cl_int ocl_stream_after_other_streams(SP_Stream stream, const char **call)
{
  return barrier_after_streams(stream->dev, stream, stream->queue, call);
}

void ocl_synchronize_all_activity(const SP_Device *device, TF_Status *status) {
  struct ocl_device *dev = ocl_sp_device(device);
  const char *call = "clFinish";
  cl_int exec_status;

  ocl_set_ok(status);
  if (!dev) return;
  /* With callback waits, one host wait for every stream: the service
   * queue's marker comes after a barrier on a marker of each. */
  OCL_CHECK(ocl_service_queue_after_streams(dev, &call), status, call);
  OCL_CHECK(ocl_finish_queue(dev, dev->service_queue, &exec_status, &call),
            status, call);
  if (exec_status < 0)
    ocl_set_status(status, ocl_cl_error_code(exec_status),
                   "synchronize_all_activity: the work before it failed: %s "
                   "(%d)",
                   ocl_cl_error_name(exec_status), (int)exec_status);
fail:
  return;
}
