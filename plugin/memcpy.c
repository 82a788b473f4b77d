/* tfocl plugin: copies and fills, on a stream (asynchronous) or on the
 * device's service queue (the sync_* forms, which block).
 *
 * Pointers are classified by looking them up in the address maps, never by
 * the callback's name alone (tensorflow#57095: TF once passed a device
 * pointer as the "host" source of memcpy_htod): a "host" pointer that
 * resolves is device memory and the copy becomes device to device.
 *
 * Asynchronous host copies enqueue non-blocking reads and writes: the core
 * keeps the host buffer alive until an event recorded after the copy
 * completes, which is what OpenCL needs. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocl.h"
#include "profiler/profiler.h"

/* Blocking copies on a device that shares host memory (PoCL) go through
 * map + parallel memcpy + unmap at or above this size, else
 * clEnqueue{Read,Write}Buffer. Measured on PoCL 3.1 pthread, 2-core Xeon:
 *   size     Write/ReadBuffer      map+memcpy+unmap (1 thread)
 *   4 KiB    13-15 us              26-29 us
 *   256 KiB  23-30 us (9-11 GB/s)  39-47 us (6-7 GB/s)
 *   1 MiB    ~80-100 us            ~85-95 us      (even)
 *   64 MiB   4.8-7 GB/s            4.8-7 GB/s     (both one memcpy)
 * Mapping alone wins nothing: both are one single-threaded memcpy. Its
 * gain is that the memcpy is ours, so it can use several threads: 64 MiB
 * host memcpy 6.8 GB/s on one thread, 12.2 GB/s on two. Hence map only
 * from 4 MiB up, where the copy dwarfs the ~25 us map round trip and a
 * helper thread's start. Asynchronous copies keep Write/ReadBuffer (the
 * host must not block). */
#define OCL_MAP_COPY_THRESHOLD (4u * 1024u * 1024u)
#define OCL_COPY_MAX_THREADS 4

struct copy_job {
  void *dst;
  const void *src;
  size_t bytes;
};

static void *copy_job_run(void *arg) {
  struct copy_job *job = arg;
  memcpy(job->dst, job->src, job->bytes);
  return NULL;
}

/* memcpy split over up to OCL_COPY_MAX_THREADS threads (the caller's plus
 * helpers, one per online CPU); a helper that cannot start is done inline. */
static void parallel_memcpy(void *dst, const void *src, size_t bytes) {
  struct copy_job jobs[OCL_COPY_MAX_THREADS];
  pthread_t threads[OCL_COPY_MAX_THREADS];
  bool started[OCL_COPY_MAX_THREADS] = {false};
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t n = cpus < 1 ? 1 : cpus > OCL_COPY_MAX_THREADS ? OCL_COPY_MAX_THREADS
                                                         : (size_t)cpus;
  size_t chunk = (bytes / n + 63) / 64 * 64;

  for (size_t i = 0; i < n; i++) {
    size_t at = i * chunk < bytes ? i * chunk : bytes;
    size_t len = bytes - at < chunk ? bytes - at : chunk;
    jobs[i] = (struct copy_job){(char *)dst + at, (const char *)src + at, len};
  }
  for (size_t i = 1; i < n; i++)
    started[i] = pthread_create(&threads[i], NULL, copy_job_run, &jobs[i]) == 0;
  copy_job_run(&jobs[0]);
  for (size_t i = 1; i < n; i++) {
    if (started[i])
      pthread_join(threads[i], NULL);
    else
      copy_job_run(&jobs[i]);
  }
}

struct where {
  struct ocl_device *owner; /* NULL: host memory */
  cl_mem mem;
  size_t offset;
  uint64_t left;
};

static void classify(const void *p, struct where *w) {
  memset(w, 0, sizeof *w);
  w->owner = ocl_address_owner(p, &w->mem, &w->offset, &w->left);
}

/* The device side of a copy must resolve, with `size` bytes to spare. */
static bool require_device(struct ocl_device *dev, const void *p,
                           uint64_t size, struct where *w, TF_Status *status) {
  memset(w, 0, sizeof *w);
  if (!ocl_resolve(dev, p, size, &w->mem, &w->offset, status)) return false;
  w->owner = ocl_address_owner(p, NULL, NULL, &w->left);
  return true;
}

static bool check_host_side(const struct where *w, const void *p,
                            uint64_t size, TF_Status *status) {
  if (w->owner && w->left < size) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "device address %p + %" PRIu64
                   " bytes runs past its allocation (%" PRIu64 " bytes left)",
                   p, size, w->left);
    return false;
  }
  return true;
}

/* The queue to use for buffers of `owner` when the copy was asked on
 * `dev`'s queue q: q itself within one cl_context, else owner's service
 * queue (a queue only takes buffers of its own context). */
static cl_command_queue queue_for(struct ocl_device *dev, cl_command_queue q,
                                  struct ocl_device *owner) {
  return owner->ctx == dev->ctx ? q : owner->service_queue;
}

/* Sleeps until `done` (the last command of a copy, enqueued on q, a queue
 * of dev) finished, and releases it. *call names the command: a failed
 * command is its error. */
static cl_int wait_done(struct ocl_device *dev, cl_command_queue q,
                        cl_event done, const char **call) {
  const char *wait_call = *call;
  cl_int exec_status, err;

  err = ocl_wait_event(dev, q, done, &exec_status, &wait_call);
  clReleaseEvent(done);
  if (err != CL_SUCCESS) {
    *call = wait_call;
    return err;
  }
  return exec_status < 0 ? exec_status : CL_SUCCESS;
}

/* Hands a copy's or fill's event to the profile while one is taken
 * (profiler.h); the caller keeps its own reference. */
static void profile(struct ocl_device *dev, cl_command_queue q, cl_event ev,
                    enum ocl_activity kind) {
  if (ev != NULL && clRetainEvent(ev) == CL_SUCCESS)
    ocl_profiler_record(dev, q, ev, kind, NULL);
}

/* A blocking copy through a mapping: map, parallel memcpy, unmap, each
 * command waited for. to_device: host -> mapping, else mapping -> host. */
static cl_int map_copy(struct ocl_device *dev, cl_command_queue q,
                       cl_mem mem, size_t offset,
                       size_t size, void *host, bool to_device,
                       const char **call) {
  cl_map_flags flags = to_device ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ;
  cl_event done = NULL;
  cl_int err, unmap_err;
  void *p;

  *call = "clEnqueueMapBuffer";
  p = clEnqueueMapBuffer(q, mem, CL_FALSE, flags, offset, size, 0, NULL, &done,
                         &err);
  if (err != CL_SUCCESS) return err;
  err = wait_done(dev, q, done, call);
  if (err == CL_SUCCESS) {
    if (to_device)
      parallel_memcpy(p, host, size);
    else
      parallel_memcpy(host, p, size);
  }
  /* Unmapped whatever happened: the mapping is the buffer's. */
  unmap_err = clEnqueueUnmapMemObject(q, mem, p, 0, NULL,
                                      err == CL_SUCCESS ? &done : NULL);
  if (err != CL_SUCCESS) return err;
  *call = "clEnqueueUnmapMemObject";
  if (unmap_err != CL_SUCCESS) return unmap_err;
  return wait_done(dev, q, done, call);
}

/* Host to device. Every command is enqueued non-blocking: a blocking
 * OpenCL copy or map waits inside the driver (spinning on NVIDIA), so a
 * blocking copy waits for the command's event with ocl_wait_event. */
static cl_int write_buffer(struct ocl_device *dev, cl_command_queue q,
                           cl_bool blocking, cl_mem mem, size_t offset,
                           size_t size, const void *src, const char **call) {
  cl_event done = NULL;
  cl_int err;

  if (blocking && dev->host_unified_memory && size >= OCL_MAP_COPY_THRESHOLD)
    return map_copy(dev, q, mem, offset, size, (void *)src, true, call);
  *call = "clEnqueueWriteBuffer";
  bool profiling = ocl_profiler_active();
  err = clEnqueueWriteBuffer(q, mem, CL_FALSE, offset, size, src, 0, NULL,
                             blocking || profiling ? &done : NULL);
  if (err != CL_SUCCESS) return err;
  if (profiling) profile(dev, q, done, OCL_ACTIVITY_COPY_H2D);
  if (!blocking) {
    if (done) clReleaseEvent(done);
    return CL_SUCCESS;
  }
  return wait_done(dev, q, done, call);
}

/* Device to host; as write_buffer. */
static cl_int read_buffer(struct ocl_device *dev, cl_command_queue q,
                          cl_bool blocking, cl_mem mem, size_t offset,
                          size_t size, void *dst, const char **call) {
  cl_event done = NULL;
  cl_int err;

  if (blocking && dev->host_unified_memory && size >= OCL_MAP_COPY_THRESHOLD)
    return map_copy(dev, q, mem, offset, size, dst, false, call);
  *call = "clEnqueueReadBuffer";
  bool profiling = ocl_profiler_active();
  err = clEnqueueReadBuffer(q, mem, CL_FALSE, offset, size, dst, 0, NULL,
                            blocking || profiling ? &done : NULL);
  if (err != CL_SUCCESS) return err;
  if (profiling) profile(dev, q, done, OCL_ACTIVITY_COPY_D2H);
  if (!blocking) {
    if (done) clReleaseEvent(done);
    return CL_SUCCESS;
  }
  return wait_done(dev, q, done, call);
}

/* Device to device, asked on q (a queue of dev; the sender's stream, as
 * TensorFlow asks, or the service queue for the sync form). Within one
 * cl_context, whichever devices own the buffers: clEnqueueCopyBuffer on q.
 * Across contexts (two OpenCL platforms): staged through host memory on
 * the host, in order: q's earlier work, the read, the write, each waited
 * for without spinning, so later work on q comes after the copy. */
static void copy_dtod(struct ocl_device *dev, cl_command_queue q,
                      cl_bool blocking, const struct where *dst,
                      const struct where *src, uint64_t size,
                      TF_Status *status) {
  const char *call = "clEnqueueCopyBuffer";
  cl_command_queue src_q = queue_for(dev, q, src->owner);
  cl_command_queue dst_q = queue_for(dev, q, dst->owner);
  void *staging = NULL;
  cl_event done = NULL;
  cl_int err;

  if (dst->owner->ctx == src->owner->ctx) {
    /* Another context's queue is not ordered after q: q's work first. */
    if (src_q != q)
      OCL_CHECK(ocl_finish_queue(dev, q, NULL, &call), status, call);
    blocking = blocking || src_q != q;
    call = "clEnqueueCopyBuffer";
    bool profiling = ocl_profiler_active();
    struct ocl_device *q_dev = src_q == q ? dev : src->owner;
    err = clEnqueueCopyBuffer(src_q, src->mem, dst->mem, src->offset,
                              dst->offset, size, 0, NULL,
                              blocking || profiling ? &done : NULL);
    if (err == CL_SUCCESS && profiling)
      profile(q_dev, src_q, done, OCL_ACTIVITY_COPY_D2D);
    if (err == CL_SUCCESS && blocking)
      err = wait_done(q_dev, src_q, done, &call);
    else if (done != NULL)
      clReleaseEvent(done);
    OCL_CHECK(err, status, call);
    return;
  }
  OCL_TRACE("dtod across cl_contexts (device %d -> %d): staged via host",
            src->owner->ordinal, dst->owner->ordinal);
  staging = malloc(size);
  if (!staging) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                   "memcpy_dtod: no host memory to stage %" PRIu64 " bytes",
                   size);
    return;
  }
  if (src_q != q) OCL_CHECK(ocl_finish_queue(dev, q, NULL, &call), status, call);
  err = read_buffer(src->owner, src_q, CL_TRUE, src->mem, src->offset, size,
                    staging, &call);
  OCL_CHECK(err, status, call);
  err = write_buffer(dst->owner, dst_q, CL_TRUE, dst->mem, dst->offset, size,
                     staging, &call);
  OCL_CHECK(err, status, call);
fail:
  free(staging);
}

static void copy_to_device(struct ocl_device *dev, cl_command_queue q,
                           cl_bool blocking, void *dst, const void *src,
                           uint64_t size, TF_Status *status) {
  struct where d, s;
  const char *call;

  ocl_set_ok(status);
  if (size == 0) return;
  if (!dev || !q) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "memcpy_htod: no device/stream");
    return;
  }
  if (!require_device(dev, dst, size, &d, status)) return;
  classify(src, &s);
  if (!check_host_side(&s, src, size, status)) return;
  if (s.owner) {
    OCL_TRACE("memcpy_htod: source %p is device memory: copying on device",
              src);
    copy_dtod(dev, q, blocking, &d, &s, size, status);
    return;
  }
  OCL_CHECK(write_buffer(dev, q, blocking, d.mem, d.offset, size, src, &call),
            status, call);
fail:
  return;
}

static void copy_to_host(struct ocl_device *dev, cl_command_queue q,
                         cl_bool blocking, void *dst, const void *src,
                         uint64_t size, TF_Status *status) {
  struct where d, s;
  const char *call;

  ocl_set_ok(status);
  if (size == 0) return;
  if (!dev || !q) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "memcpy_dtoh: no device/stream");
    return;
  }
  if (!require_device(dev, src, size, &s, status)) return;
  classify(dst, &d);
  if (!check_host_side(&d, dst, size, status)) return;
  if (d.owner) {
    OCL_TRACE("memcpy_dtoh: destination %p is device memory: copying on device",
              dst);
    copy_dtod(dev, q, blocking, &d, &s, size, status);
    return;
  }
  OCL_CHECK(read_buffer(dev, q, blocking, s.mem, s.offset, size, dst, &call),
            status, call);
fail:
  return;
}

static void copy_on_device(struct ocl_device *dev, cl_command_queue q,
                           cl_bool blocking, void *dst, const void *src,
                           uint64_t size, TF_Status *status) {
  struct where d, s;

  ocl_set_ok(status);
  if (size == 0) return;
  if (!dev || !q) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "memcpy_dtod: no device/stream");
    return;
  }
  /* The destination may be another device's (the receiver's) memory. */
  classify(dst, &d);
  classify(src, &s);
  if (!d.owner || !s.owner) {
    const void *bad = d.owner ? src : dst;
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "memcpy_dtod: %s address %p is not memory of any OpenCL "
                   "device of tfocl",
                   d.owner ? "source" : "destination", bad);
    return;
  }
  if (!check_host_side(&d, dst, size, status) ||
      !check_host_side(&s, src, size, status))
    return;
  copy_dtod(dev, q, blocking, &d, &s, size, status);
}

/* The asynchronous copies run on the stream's own device (the one
 * TensorFlow passes), whose memory or another device's may be either side. */
void ocl_memcpy_dtoh(const SP_Device *device, SP_Stream stream, void *host_dst,
                     const SP_DeviceMemoryBase *device_src, uint64_t size,
                     TF_Status *status) {
  if (!ocl_stream_live(device, stream, "memcpy_dtoh", status)) return;
  copy_to_host(stream->dev, stream->queue, CL_FALSE, host_dst,
               device_src->opaque, size, status);
}

/* TensorFlow enqueues some copies to the device on the host-to-device
 * stream without a dependency on the compute stream (PluggableDevice::
 * MaybeCopyTensorToPluggableDevice: tensors received from another task,
 * constants), into memory its allocator just took back from a tensor
 * whose last reader is enqueued on the compute stream and may not have
 * run yet. With a loaded queue it happened: a parameter-server step's
 * weight gradient read 64 bytes of the next variable read in place of its
 * input (2 runs of 80 of test_multi_worker.py's parameter-server case).
 * So every copy in comes after the work already enqueued on the device's
 * other streams. */
void ocl_memcpy_htod(const SP_Device *device, SP_Stream stream,
                     SP_DeviceMemoryBase *device_dst, const void *host_src,
                     uint64_t size, TF_Status *status) {
  const char *call = "clEnqueueBarrierWithWaitList";

  if (!ocl_stream_live(device, stream, "memcpy_htod", status)) return;
  if (size > 0)
    OCL_CHECK(ocl_stream_after_other_streams(stream, &call), status, call);
  copy_to_device(stream->dev, stream->queue, CL_FALSE, device_dst->opaque,
                 host_src, size, status);
fail:
  return;
}

void ocl_memcpy_dtod(const SP_Device *device, SP_Stream stream,
                     SP_DeviceMemoryBase *device_dst,
                     const SP_DeviceMemoryBase *device_src, uint64_t size,
                     TF_Status *status) {
  if (!ocl_stream_live(device, stream, "memcpy_dtod", status)) return;
  copy_on_device(stream->dev, stream->queue, CL_FALSE, device_dst->opaque,
                 device_src->opaque, size, status);
}

/* A synchronous copy comes after all work already enqueued on the device's
 * streams, as CUDA's legacy default stream orders cuMemcpy after every
 * blocking stream: TensorFlow code written against CUDA relies on that.
 * The service queue waits for a marker of each stream (nothing blocks
 * yet); the copy then waits once, for its own last command. Returns the
 * service queue to copy on, or NULL with status set. */
static cl_command_queue after_all_streams(const SP_Device *device,
                                          const char *what, TF_Status *status) {
  struct ocl_device *dev = ocl_sp_device(device);
  const char *call = "clEnqueueBarrierWithWaitList";

  ocl_set_ok(status);
  if (!dev) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "%s: no device", what);
    return NULL;
  }
  OCL_CHECK(ocl_service_queue_after_streams(dev, &call), status, call);
  return dev->service_queue;
fail:
  return NULL;
}

void ocl_sync_memcpy_dtoh(const SP_Device *device, void *host_dst,
                          const SP_DeviceMemoryBase *device_src, uint64_t size,
                          TF_Status *status) {
  cl_command_queue q = after_all_streams(device, "sync_memcpy_dtoh", status);
  if (!q) return;
  copy_to_host(ocl_sp_device(device), q, CL_TRUE, host_dst,
               device_src->opaque, size, status);
}

void ocl_sync_memcpy_htod(const SP_Device *device,
                          SP_DeviceMemoryBase *device_dst,
                          const void *host_src, uint64_t size,
                          TF_Status *status) {
  cl_command_queue q = after_all_streams(device, "sync_memcpy_htod", status);
  if (!q) return;
  copy_to_device(ocl_sp_device(device), q, CL_TRUE, device_dst->opaque,
                 host_src, size, status);
}

void ocl_sync_memcpy_dtod(const SP_Device *device,
                          SP_DeviceMemoryBase *device_dst,
                          const SP_DeviceMemoryBase *device_src, uint64_t size,
                          TF_Status *status) {
  cl_command_queue q = after_all_streams(device, "sync_memcpy_dtod", status);
  if (!q) return;
  copy_on_device(ocl_sp_device(device), q, CL_TRUE, device_dst->opaque,
                 device_src->opaque, size, status);
}

/* Fills [p, p + size) with a pattern of 1 or 4 bytes. clEnqueueFillBuffer
 * wants offset and size in multiples of the pattern size, so a 4-byte
 * pattern at an address that is not 4-aligned (a view at +3 bytes) fills
 * the aligned middle with the pattern rotated to match and the ragged head
 * and tail byte by byte. Fill patterns are copied at enqueue time. */
static void fill(const SP_Device *device, SP_Stream stream, const void *p,
                 const uint8_t *pattern, size_t pattern_size, uint64_t size,
                 TF_Status *status) {
  struct ocl_device *dev;
  cl_command_queue q;
  cl_mem mem;
  size_t offset, head, middle, pos = 0;
  uint8_t rotated[4];

  ocl_set_ok(status);
  if (!ocl_stream_live(device, stream, "memset", status)) return;
  dev = stream->dev;
  q = stream->queue;
  if (size == 0) return;
  if (!dev || !q) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "memset: no device/stream");
    return;
  }
  if (!ocl_resolve(dev, p, size, &mem, &offset, status)) return;
  if (pattern_size == 1) {
    cl_event ev = NULL;
    bool profiling = ocl_profiler_active();
    OCL_CHECK(clEnqueueFillBuffer(q, mem, pattern, 1, offset, size, 0, NULL,
                                  profiling ? &ev : NULL),
              status, "clEnqueueFillBuffer");
    if (ev != NULL) ocl_profiler_record(dev, q, ev, OCL_ACTIVITY_FILL, NULL);
    return;
  }
  head = (4 - offset % 4) % 4;
  if (head > size) head = size;
  middle = (size - head) / 4 * 4;
  for (; pos < head; pos++)
    OCL_CHECK(clEnqueueFillBuffer(q, mem, &pattern[pos % 4], 1, offset + pos, 1,
                                  0, NULL, NULL),
              status, "clEnqueueFillBuffer");
  for (size_t i = 0; i < 4; i++) rotated[i] = pattern[(head + i) % 4];
  if (middle)
    OCL_CHECK(clEnqueueFillBuffer(q, mem, rotated, 4, offset + head, middle, 0,
                                  NULL, NULL),
              status, "clEnqueueFillBuffer");
  for (pos = head + middle; pos < size; pos++)
    OCL_CHECK(clEnqueueFillBuffer(q, mem, &pattern[pos % 4], 1, offset + pos, 1,
                                  0, NULL, NULL),
              status, "clEnqueueFillBuffer");
fail:
  return;
}

void ocl_mem_zero(const SP_Device *device, SP_Stream stream,
                  SP_DeviceMemoryBase *location, uint64_t size,
                  TF_Status *status) {
  const uint8_t zero = 0;
  fill(device, stream, location->opaque, &zero, 1, size, status);
}

void ocl_memset(const SP_Device *device, SP_Stream stream,
                SP_DeviceMemoryBase *location, uint8_t pattern, uint64_t size,
                TF_Status *status) {
  fill(device, stream, location->opaque, &pattern, 1, size, status);
}

void ocl_memset32(const SP_Device *device, SP_Stream stream,
                  SP_DeviceMemoryBase *location, uint32_t pattern,
                  uint64_t size, TF_Status *status) {
  uint8_t bytes[4];
  memcpy(bytes, &pattern, 4); /* the word as it lies in memory */
  fill(device, stream, location->opaque, bytes, 4, size, status);
}
