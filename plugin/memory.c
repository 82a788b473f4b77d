/* tfocl plugin: device memory (allocate/deallocate through the address map),
 * pinned host memory, allocator statistics, and address resolution. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

/* Host memory handed to TensorFlow is aligned to this: TensorFlow 2.22's BFC
 * allocator CHECK-fails (aborts the process) on a sub-allocator region that
 * is not 256-byte aligned, and drivers map CL_MEM_ALLOC_HOST_PTR buffers at
 * whatever alignment they like (PoCL 3.1: 128 bytes). */
#define OCL_HOST_ALIGN 256u

/* One pinned host allocation: a CL_MEM_ALLOC_HOST_PTR buffer kept mapped,
 * OCL_HOST_ALIGN - 1 bytes larger than asked so that an aligned start fits. */
struct ocl_host_alloc {
  void *ptr;    /* what TensorFlow gets: mapped, rounded up to the alignment */
  void *mapped; /* what clEnqueueMapBuffer returned, for the unmap */
  cl_mem mem;   /* owned */
  struct ocl_host_alloc *next;
};

static void alloc_failed(struct ocl_device *dev, uint64_t size,
                         const char *why) {
  pthread_mutex_lock(&dev->mem_lock);
  snprintf(dev->last_alloc_error, sizeof dev->last_alloc_error,
           "allocating %" PRIu64 " bytes on OpenCL device %d: %s", size,
           dev->ordinal, why);
  pthread_mutex_unlock(&dev->mem_lock);
  OCL_TRACE("allocating %" PRIu64 " bytes on device %d failed: %s", size,
            dev->ordinal, why);
}

void ocl_allocate(const SP_Device *device, uint64_t size, int64_t memory_space,
                  SP_DeviceMemoryBase *mem) {
  struct ocl_device *dev = ocl_sp_device(device);
  cl_mem buffer;
  cl_int err;
  uintptr_t start;
  bool fits;

  (void)memory_space;
  mem->opaque = NULL;
  mem->size = 0;
  mem->payload = 0;
  /* NULL is how the core learns of a failure (it reports OOM). */
  if (!dev || size == 0) return;
  if (size > dev->max_alloc_size) {
    alloc_failed(dev, size, "larger than CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    return;
  }
  /* Reserve the bytes first so concurrent allocations cannot overshoot. */
  pthread_mutex_lock(&dev->mem_lock);
  fits = (uint64_t)dev->bytes_in_use + size <= dev->global_mem_size;
  if (fits) dev->bytes_in_use += (int64_t)size;
  pthread_mutex_unlock(&dev->mem_lock);
  if (!fits) {
    alloc_failed(dev, size, "past CL_DEVICE_GLOBAL_MEM_SIZE");
    return;
  }
  /* PoCL backs buffers lazily at first use; we stay within the device's
   * global memory size, so a first use that fails is a driver-level
   * out-of-memory reported on the stream. */
  buffer = clCreateBuffer(ocl_device_context(dev), CL_MEM_READ_WRITE, size,
                          NULL, &err);
  if (err != CL_SUCCESS) {
    alloc_failed(dev, size, ocl_cl_error_name(err));
    goto fail;
  }
  start = ocl_address_map_insert(&dev->map, size, buffer);
  if (!start) {
    clReleaseMemObject(buffer);
    alloc_failed(dev, size, "device address space exhausted");
    goto fail;
  }
  pthread_mutex_lock(&dev->mem_lock);
  dev->num_allocs++;
  if (dev->bytes_in_use > dev->peak_bytes_in_use)
    dev->peak_bytes_in_use = dev->bytes_in_use;
  if ((int64_t)size > dev->largest_alloc_size)
    dev->largest_alloc_size = (int64_t)size;
  pthread_mutex_unlock(&dev->mem_lock);
  mem->opaque = (void *)start;
  mem->size = size;
  return;
fail:
  pthread_mutex_lock(&dev->mem_lock);
  dev->bytes_in_use -= (int64_t)size;
  pthread_mutex_unlock(&dev->mem_lock);
}

void ocl_deallocate(const SP_Device *device, SP_DeviceMemoryBase *memory) {
  struct ocl_device *dev = ocl_sp_device(device);
  uint64_t bytes = 0;
  cl_mem buffer;

  /* The core passes opaque only (size = payload = 0). */
  if (!dev || !memory || !memory->opaque) return;
  buffer = ocl_address_map_remove(&dev->map, (uintptr_t)memory->opaque, &bytes);
  if (!buffer) {
    OCL_TRACE("deallocate: %p is not the start of an allocation of device %d",
              memory->opaque, dev->ordinal);
    return;
  }
  /* Commands still queued on it keep the cl_mem alive (OpenCL retains it). */
  clReleaseMemObject(buffer);
  pthread_mutex_lock(&dev->mem_lock);
  dev->bytes_in_use -= (int64_t)bytes;
  pthread_mutex_unlock(&dev->mem_lock);
}

void *ocl_host_memory_allocate(const SP_Device *device, uint64_t size) {
  struct ocl_device *dev = ocl_sp_device(device);
  struct ocl_host_alloc *rec;
  cl_int err;

  size_t padded;

  if (!dev || size == 0 || size > SIZE_MAX - OCL_HOST_ALIGN) return NULL;
  padded = (size_t)size + OCL_HOST_ALIGN - 1;
  rec = calloc(1, sizeof *rec);
  if (!rec) return NULL;
  rec->mem = clCreateBuffer(ocl_device_context(dev),
                            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, padded,
                            NULL, &err);
  if (err != CL_SUCCESS) goto fail_rec;
  rec->mapped = clEnqueueMapBuffer(dev->service_queue, rec->mem, CL_TRUE,
                                   CL_MAP_READ | CL_MAP_WRITE, 0, padded, 0,
                                   NULL, NULL, &err);
  if (err != CL_SUCCESS) goto fail_mem;
  rec->ptr = (void *)(((uintptr_t)rec->mapped + OCL_HOST_ALIGN - 1) &
                      ~(uintptr_t)(OCL_HOST_ALIGN - 1));
  pthread_mutex_lock(&dev->mem_lock);
  rec->next = dev->host_allocs;
  dev->host_allocs = rec;
  pthread_mutex_unlock(&dev->mem_lock);
  return rec->ptr;
fail_mem:
  clReleaseMemObject(rec->mem);
fail_rec:
  OCL_TRACE("host_memory_allocate(%" PRIu64 "): %s", size,
            ocl_cl_error_name(err));
  free(rec);
  return NULL;
}

static void host_alloc_release(struct ocl_device *dev,
                               struct ocl_host_alloc *rec) {
  clEnqueueUnmapMemObject(dev->service_queue, rec->mem, rec->mapped, 0, NULL,
                          NULL);
  /* Not clFinish: NVIDIA's spins a core. */
  ocl_finish_queue(dev, dev->service_queue, NULL, NULL);
  clReleaseMemObject(rec->mem);
  free(rec);
}

void ocl_host_memory_deallocate(const SP_Device *device, void *mem) {
  struct ocl_device *dev = ocl_sp_device(device);
  struct ocl_host_alloc **link, *rec = NULL;

  if (!dev || !mem) return;
  pthread_mutex_lock(&dev->mem_lock);
  for (link = &dev->host_allocs; *link; link = &(*link)->next) {
    if ((*link)->ptr == mem) {
      rec = *link;
      *link = rec->next;
      break;
    }
  }
  pthread_mutex_unlock(&dev->mem_lock);
  if (!rec) {
    OCL_TRACE("host_memory_deallocate: %p was not allocated here", mem);
    return;
  }
  host_alloc_release(dev, rec);
}

void ocl_memory_teardown(struct ocl_device *dev) {
  while (dev->host_allocs) {
    struct ocl_host_alloc *rec = dev->host_allocs;
    dev->host_allocs = rec->next;
    host_alloc_release(dev, rec);
  }
}

TF_Bool ocl_get_allocator_stats(const SP_Device *device,
                                SP_AllocatorStats *stats) {
  struct ocl_device *dev = ocl_sp_device(device);
  SP_AllocatorStats s = {.struct_size = SP_ALLOCATORSTATS_STRUCT_SIZE};

  if (!dev || !stats) return 0;
  pthread_mutex_lock(&dev->mem_lock);
  s.num_allocs = dev->num_allocs;
  s.bytes_in_use = dev->bytes_in_use;
  s.peak_bytes_in_use = dev->peak_bytes_in_use;
  s.largest_alloc_size = dev->largest_alloc_size;
  pthread_mutex_unlock(&dev->mem_lock);
  s.has_bytes_limit = 1;
  s.bytes_limit = (int64_t)dev->global_mem_size;
  s.bytes_reserved = 0;
  s.peak_bytes_reserved = 0;
  s.has_bytes_reservable_limit = 0;
  s.bytes_reservable_limit = 0;
  s.largest_free_block_bytes = s.bytes_limit - s.bytes_in_use;
  if ((uint64_t)s.largest_free_block_bytes > dev->max_alloc_size)
    s.largest_free_block_bytes = (int64_t)dev->max_alloc_size;
  ocl_fill_struct(stats, &s, SP_ALLOCATORSTATS_STRUCT_SIZE);
  return 1;
}

/* TensorFlow keeps back part of what device_memory_usage reports as free
 * (PluggableDeviceFactory's MinSystemMemory: 255 MiB under 2 GiB, else
 * max(300 MiB, 6 %)), as a GPU's display and driver would need. A device
 * capped by TFOCL_MEMORY_LIMIT_MB reports the cap plus that reserve, so that
 * TensorFlow's device gets the cap the user asked for (256 MiB would
 * otherwise leave 1). */
static uint64_t with_tensorflow_reserve(uint64_t cap) {
  const uint64_t mib = 1ull << 20;

  if (cap + 255 * mib < (1ull << 31)) return cap + 255 * mib;
  if (cap + 300 * mib <= 5000 * mib) return cap + 300 * mib;
  return cap + (cap * 6 + 93) / 94; /* avail - 6 % of avail = cap */
}

TF_Bool ocl_device_memory_usage(const SP_Device *device, int64_t *free_bytes,
                                int64_t *total) {
  struct ocl_device *dev = ocl_sp_device(device);
  uint64_t offered;
  int64_t in_use;

  if (!dev) return 0;
  pthread_mutex_lock(&dev->mem_lock);
  in_use = dev->bytes_in_use;
  pthread_mutex_unlock(&dev->mem_lock);
  offered = dev->memory_limit ? with_tensorflow_reserve(dev->global_mem_size)
                              : dev->global_mem_size;
  if (total) *total = (int64_t)offered;
  if (free_bytes) *free_bytes = (int64_t)offered - in_use;
  return 1;
}

struct ocl_device *ocl_address_owner(const void *address, cl_mem *buffer,
                                     size_t *offset, uint64_t *left) {
  int n = ocl_device_count();

  for (int i = 0; i < n; i++) {
    struct ocl_device *dev = ocl_device_get(i);
    if (dev && atomic_load_explicit(&dev->ready, memory_order_acquire) &&
        ocl_address_map_lookup(&dev->map, (uintptr_t)address, buffer, offset,
                               left))
      return dev;
  }
  return NULL;
}

bool ocl_resolve(struct ocl_device *dev, const void *address, uint64_t bytes,
                 cl_mem *buffer, size_t *offset, TF_Status *status) {
  struct ocl_device *owner = NULL;
  uint64_t left = 0;

  if (dev && ocl_address_map_lookup(&dev->map, (uintptr_t)address, buffer,
                                    offset, &left))
    owner = dev;
  else
    owner = ocl_address_owner(address, buffer, offset, &left);
  if (!owner) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "device address %p is not memory of any OpenCL device of "
                   "tfocl (asked on device %d)",
                   address, dev ? dev->ordinal : -1);
    return false;
  }
  if (dev && owner->ctx != dev->ctx) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "device address %p belongs to OpenCL device %d, which "
                   "shares no cl_context with device %d",
                   address, owner->ordinal, dev->ordinal);
    return false;
  }
  if (bytes > left) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "device address %p + %" PRIu64
                   " bytes runs past its allocation (%" PRIu64 " bytes left)",
                   address, bytes, left);
    return false;
  }
  return true;
}
