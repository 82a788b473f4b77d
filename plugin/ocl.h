/* tfocl plugin: internal header of the OpenCL device (plugin/) and the op
 * kernel families (kernels/).
 *
 * Ownership (every OpenCL object has exactly one owner):
 *
 *   object                      owner                      made / released
 *   --------------------------  -------------------------  ---------------------------------
 *   cl_context                  struct ocl_context (one    first device opened on the
 *                               per OpenCL platform)       platform / destroy_platform
 *   cl_program (program cache)  struct ocl_context         first ocl_program_get of a family
 *                                                          / destroy_platform
 *   cl_device_id, service queue struct ocl_device          enumeration, first open /
 *                                                          destroy_platform
 *   address-space reservation   struct ocl_device (map)    first open / destroy_platform
 *   cl_mem (device memory)      address-map entry          allocate / deallocate (leftovers:
 *                                                          destroy_platform)
 *   cl_mem (pinned host memory) host-allocation record     host_memory_allocate / _deallocate
 *   cl_command_queue            struct SP_Stream_st        create_stream / destroy_stream
 *   cl_event (recorded marker)  struct SP_Event_st         record_event (replaces) /
 *                                                          destroy_event
 *   cl_event (callback marker,  struct ocl_callback record host_callback / after it ran
 *     user event)
 *   cl_event (relay user event  ocl_enqueue_wait_for + its  wait_for_event or
 *     across cl_contexts)       event callback (one ref     create_stream_dependency across
 *                               each)                       contexts / barrier enqueued +
 *                                                           callback ran
 *
 * clRetain* is used only where a second owner really exists; each use says
 * which. Every destroy function accepts NULL.
 *
 * OpenCL event callbacks (host waits, host callbacks, relays) only signal;
 * the plugin is linked -z nodelete because driver threads run them.
 *
 * Threads: TensorFlow calls every SP_* function from several threads at
 * once. struct ocl_device is created once and never moves; its lazy state is
 * made under its init lock; the address map has its own rwlock. */
#ifndef TFOCL_PLUGIN_OCL_H_
#define TFOCL_PLUGIN_OCL_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/tf_status.h"

#include "config.h"
#include "device_info.h"
#include "tf_api.h"

#define OCL_EXPORT __attribute__((visibility("default")))

/* The platform's device type and name (both must match [A-Z][A-Z_]*). */
#define OCL_DEVICE_TYPE "OPENCL"
#define OCL_PLATFORM_NAME "TFOCL"

/* ---- Tracing (TFOCL_TRACE=1 only; the plugin prints nothing else) ------ */

bool ocl_trace_enabled(void);
void ocl_trace_printf(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define OCL_TRACE(...)                                   \
  do {                                                   \
    if (ocl_trace_enabled())                             \
      ocl_trace_printf(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
/* The one line the plugin prints without TFOCL_TRACE: why it offers no
 * devices or registers no kernels. Printed at most once per process. (The
 * graph optimizer has one more, also once: the first graph it had to hand
 * back unchanged, graph/init.c.) */
void ocl_report_unusable(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Whether the last SE_InitPlugin of this library registered a second copy
 * of tfocl (plugin.c): no devices, no kernels, its own device type. */
bool ocl_copy_refused(void);
/* OCL_DEVICE_TYPE, or the second copy's own type. */
const char *ocl_registered_device_type(void);

/* ---- The OpenCL error path (cl_error.c) -------------------------------- */

/* "CL_OUT_OF_RESOURCES"; "CL_UNKNOWN_ERROR" for codes it does not know. */
const char *ocl_cl_error_name(cl_int err);
/* The TF_Code for a failed OpenCL call: RESOURCE_EXHAUSTED for CL_OUT_OF_*
 * and CL_MEM_OBJECT_ALLOCATION_FAILURE, INTERNAL for the rest. */
TF_Code ocl_cl_error_code(cl_int err);
/* The code for work that failed on the device: a negative execution
 * status, or the error of a wait for it (clFinish, clWaitForEvents).
 * CL_OUT_OF_RESOURCES there is no allocation of ours running out (NVIDIA
 * reports every kernel fault so, and every call after one): INTERNAL; only
 * CL_MEM_OBJECT_ALLOCATION_FAILURE and CL_OUT_OF_HOST_MEMORY stay
 * RESOURCE_EXHAUSTED. */
TF_Code ocl_cl_exec_error_code(cl_int exec_status);
/* status = "<call>: CL_X (-n)" with ocl_cl_error_code(err), or, for a wait
 * (clFinish, clWaitForEvents), ocl_cl_exec_error_code(err) and a word on
 * what CL_OUT_OF_RESOURCES means there. */
void ocl_set_cl_error(TF_Status *status, cl_int err, const char *call);
/* status = code + printf-style message. */
void ocl_set_status(TF_Status *status, TF_Code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* status = TF_OK. */
void ocl_set_ok(TF_Status *status);
/* Evaluates a cl_int expression; on failure fills status and jumps to fail. */
#define OCL_CHECK(expr, status, call)       \
  do {                                      \
    cl_int ocl_check_err_ = (expr);         \
    if (ocl_check_err_ != CL_SUCCESS) {     \
      ocl_set_cl_error(status, ocl_check_err_, call); \
      goto fail;                            \
    }                                       \
  } while (0)

/* ---- Address map (address_map.c; contract 1) --------------------------- */

/* Ranges are handed out at this alignment (>= 256 B, as TensorFlow's Eigen
 * maps expect; a page keeps a stray host access inside PROT_NONE pages). */
#define OCL_ADDRESS_ALIGN 4096u

struct ocl_range; /* address_map.c */

/* Free ranges are kept by size class: a power of two split in 8. */
#define OCL_MAP_SUB_BITS 3
#define OCL_MAP_SUBCLASSES (1 << OCL_MAP_SUB_BITS)

/* A PROT_NONE reservation of fake addresses carved into ranges: insert and
 * remove O(1) in the live ranges, lookup O(1) and lock-free
 * (address_map.c). `lock` serialises inserts and removes. */
struct ocl_address_map {
  pthread_rwlock_t lock;
  void *base;
  uint64_t size;
  struct ocl_range *ranges; /* every range, in address order */
  struct ocl_range *free_lists[64 * OCL_MAP_SUBCLASSES];
  uint8_t free_sub[64];  /* bit s: free_lists[8 * class + s] not empty */
  uint64_t free_classes; /* bit c: free_sub[c] != 0 */
  struct ocl_range *spare; /* recycled range records */
  /* Per 2 MiB chunk: a range covering it (tagged) or a leaf of 512 range
   * pointers, one per 4 KiB page. */
  _Atomic(uintptr_t) *chunks;
  uint64_t num_chunks;
  size_t count; /* used ranges */
};

/* Reserves `size` bytes of address space. False if mmap fails. */
bool ocl_address_map_init(struct ocl_address_map *map, uint64_t size);
/* Releases every cl_mem still mapped and the reservation. Accepts zeroed. */
void ocl_address_map_finish(struct ocl_address_map *map);
/* First-fit range for `bytes` (> 0) backed by `mem` (ownership passes to
 * the map on success). Returns the start, or 0 when no range is free. */
uintptr_t ocl_address_map_insert(struct ocl_address_map *map, uint64_t bytes,
                                 cl_mem mem);
/* Removes the mapping that starts exactly at `start`; returns its cl_mem
 * (now the caller's) and bytes, or NULL if nothing starts there. */
cl_mem ocl_address_map_remove(struct ocl_address_map *map, uintptr_t start,
                              uint64_t *bytes);
/* Resolves an address inside a mapping: its cl_mem (not retained: valid
 * while the allocation is), the byte offset and the bytes left to its end. */
bool ocl_address_map_lookup(struct ocl_address_map *map, uintptr_t address,
                            cl_mem *mem, size_t *offset, uint64_t *left);
/* Largest free range, for allocator statistics. */
uint64_t ocl_address_map_largest_free(struct ocl_address_map *map);

/* ---- Platforms and devices (device.c, discovery.c) ---------------------- */

struct ocl_program_cache;

/* One OpenCL platform with at least one visible device. */
struct ocl_context {
  cl_platform_id platform;
  /* The platform's driver, where one needs handling of its own (read from
   * its name once, at discovery): Oclgrind runs queued work only inside
   * its own waits and compiles one program at a time; PoCL's waits sleep. */
  bool is_oclgrind;
  bool is_pocl;
  cl_device_id *devices; /* the platform's visible devices */
  cl_uint num_devices;
  pthread_mutex_t lock;  /* guards context creation */
  cl_context context;    /* owned; made when the first device opens */
  struct ocl_program_cache *programs; /* owned */
};

struct ocl_host_alloc; /* memory.c */

struct ocl_device {
  int ordinal;
  cl_device_id id;
  struct ocl_context *ctx;
  /* Properties read at enumeration. */
  cl_device_type type;
  char name[256];
  char vendor[256];
  char pci_bus_id[32]; /* "" without cl_khr_pci_bus_info */
  cl_ulong global_mem_size; /* capped by memory_limit */
  cl_ulong max_alloc_size;
  cl_ulong memory_limit; /* TFOCL_MEMORY_LIMIT_MB in bytes, 0 = none */
  cl_uint compute_units;
  cl_uint max_clock_mhz;
  cl_uint vector_width_float;
  size_t max_work_group_size;
  bool has_fp16;
  bool has_fp64;
  bool has_priority_hints; /* cl_khr_priority_hints */
  bool host_unified_memory;
  /* What the kernel families see of the device (kernels/runtime.h). */
  struct ocl_device_info info;

  /* Made by ocl_device_open under init_lock, released at teardown.
   * `ready` is read without the lock (address lookups of every device):
   * set with release once all of it is made, read with acquire. */
  pthread_mutex_t init_lock;
  _Atomic bool ready;
  cl_command_queue service_queue; /* sync copies and host-memory maps */
  struct ocl_address_map map;

  /* Allocation accounting (memory.c). */
  pthread_mutex_t mem_lock;
  int64_t num_allocs;
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  int64_t largest_alloc_size;
  char last_alloc_error[256];
  struct ocl_host_alloc *host_allocs;

  /* Live streams, for synchronize_all_activity. */
  pthread_mutex_t streams_lock;
  struct SP_Stream_st *streams;

  /* How the host waits for this device's work (event.c, host waits): an
   * enum ocl_host_wait, chosen on first use (0: not yet). */
  int host_wait;
};

/* Enumerates once (lazily) and returns the visible devices. */
/* Inside TensorFlow, opens the ICD drivers with RTLD_DEEPBIND before the
 * ICD loader does (icd_preload.c says why). */
void ocl_icd_preload(void);
int ocl_device_count(void);
/* The device of ordinal i (NULL out of range); enumeration only. */
struct ocl_device *ocl_device_get(int ordinal);
/* Makes the device usable (context, service queue, address space) once;
 * thread-safe. False with status on failure. */
bool ocl_device_open(struct ocl_device *dev, TF_Status *status);
/* Releases everything of every device and context (destroy_platform). */
void ocl_devices_teardown(void);
/* Drops the settings read for this load (config.c): the next
 * ocl_config() reads the environment again. Only while nothing runs. */
void ocl_config_forget(void);
/* Marks the plugin unusable (unknown ABI, missing TF API): 0 devices. */
void ocl_devices_disable(void);

static inline struct ocl_device *ocl_sp_device(const SP_Device *device) {
  return device ? (struct ocl_device *)device->device_handle : NULL;
}

cl_context ocl_device_context(const struct ocl_device *dev);
cl_device_id ocl_device_id(const struct ocl_device *dev);
size_t ocl_device_max_work_group_size(const struct ocl_device *dev);
cl_uint ocl_device_compute_units(const struct ocl_device *dev);
bool ocl_device_has_fp16(const struct ocl_device *dev);
bool ocl_device_has_fp64(const struct ocl_device *dev);
bool ocl_device_is_cpu(const struct ocl_device *dev);
bool ocl_device_host_unified_memory(const struct ocl_device *dev);

/* SP_DeviceFns members and create_device / destroy_device (device.c). */
void ocl_create_device(const SP_Platform *platform,
                       SE_CreateDeviceParams *params, TF_Status *status);
void ocl_destroy_device(const SP_Platform *platform, SP_Device *device);
void ocl_create_device_fns(const SP_Platform *platform,
                           SE_CreateDeviceFnsParams *params,
                           TF_Status *status);
void ocl_destroy_device_fns(const SP_Platform *platform,
                            SP_DeviceFns *device_fns);

/* Copies our fully built struct into one the core allocated, never past the
 * core's struct_size (0 is taken as ours); keeps the core's struct_size. */
void ocl_fill_struct(void *dst, const void *src, size_t ours);

/* ---- Memory (memory.c) -------------------------------------------------- */

/* Resolves a device address of `dev` (or of another device sharing its
 * cl_context) covering `bytes` bytes to (buffer, offset). On failure sets
 * INVALID_ARGUMENT naming the address and returns false. */
bool ocl_resolve(struct ocl_device *dev, const void *address, uint64_t bytes,
                 cl_mem *buffer, size_t *offset, TF_Status *status);
/* Looks an address up in every open device. NULL owner when it is not
 * device memory of this plugin (i.e. a host pointer). */
struct ocl_device *ocl_address_owner(const void *address, cl_mem *buffer,
                                     size_t *offset, uint64_t *left);

void ocl_allocate(const SP_Device *device, uint64_t size, int64_t memory_space,
                  SP_DeviceMemoryBase *mem);
void ocl_deallocate(const SP_Device *device, SP_DeviceMemoryBase *memory);
void *ocl_host_memory_allocate(const SP_Device *device, uint64_t size);
void ocl_host_memory_deallocate(const SP_Device *device, void *mem);
TF_Bool ocl_get_allocator_stats(const SP_Device *device,
                                SP_AllocatorStats *stats);
TF_Bool ocl_device_memory_usage(const SP_Device *device, int64_t *free,
                                int64_t *total);
/* Releases leftover pinned host allocations of a device (teardown). */
void ocl_memory_teardown(struct ocl_device *dev);

/* ---- Streams (stream.c) and host callbacks (callback.c) ------------------ */

struct ocl_callback_worker; /* callback.c */

struct SP_Stream_st {
  struct ocl_device *dev;
  cl_command_queue queue; /* owned */
  int refs;               /* 1 for the core + 1 per event recorded on it */
  pthread_mutex_t lock;   /* guards the error */
  TF_Code error_code;     /* first error recorded, TF_OK if none */
  char error_message[512];
  struct ocl_callback_worker *worker; /* owned; started by host_callback */
  struct SP_Stream_st *prev, *next;   /* dev->streams list */
};

struct ocl_device *ocl_stream_device(SP_Stream stream);
cl_command_queue ocl_stream_queue(SP_Stream stream);
/* Records `error` on the stream unless it already holds one (first wins);
 * get_stream_status reports it. */
void ocl_stream_set_error(SP_Stream stream, const TF_Status *error);
void ocl_stream_set_error_code(SP_Stream stream, TF_Code code,
                               const char *message);
void ocl_stream_ref(SP_Stream stream);
/* Records on the stream that work before `what` ended with the negative
 * execution status `exec_status`. Accepts NULL. */
void ocl_stream_set_work_failed(SP_Stream stream, cl_int exec_status,
                                const char *what);
/* Whether `stream` is a live (created, not yet destroyed) stream of any
 * device of the plugin, looked up first among `device`'s (TensorFlow may
 * pass a stream of another device: the other stream of
 * create_stream_dependency in a device-to-device copy); if not, status =
 * INVALID_ARGUMENT naming `fn`. The SP_* entry points taking a stream check
 * it first and then use the stream's own device (stream->dev), so a
 * destroyed or foreign stream is an error, never a use after free. */
bool ocl_stream_live(const SP_Device *device, SP_Stream stream,
                     const char *fn, TF_Status *status);
void ocl_stream_unref(SP_Stream stream);

void ocl_create_stream(const SP_Device *device, SP_Stream *stream,
                       TF_Status *status);
void ocl_create_stream_with_options(const SP_Device *device,
                                    const SP_StreamOptions *options,
                                    SP_Stream *stream, TF_Status *status);
void ocl_destroy_stream(const SP_Device *device, SP_Stream stream);
void ocl_create_stream_dependency(const SP_Device *device, SP_Stream dependent,
                                  SP_Stream other, TF_Status *status);
void ocl_get_stream_status(const SP_Device *device, SP_Stream stream,
                           TF_Status *status);
void ocl_block_host_until_done(const SP_Device *device, SP_Stream stream,
                               TF_Status *status);
void ocl_synchronize_all_activity(const SP_Device *device, TF_Status *status);
/* Orders what is enqueued next on dev's service queue after all work
 * already on dev's live streams (CUDA's legacy default stream). With
 * callback waits: a barrier there behind a marker of each stream (nothing
 * blocks; the caller's one wait covers all). With driver waits: each
 * stream is finished (free when idle, as TensorFlow's per-step
 * synchronize_all_activity mostly finds them). On failure *call names the
 * failing call. */
cl_int ocl_service_queue_after_streams(struct ocl_device *dev,
                                       const char **call);
/* Orders `stream` after the work already enqueued on its device's other
 * streams: a barrier on its queue behind a marker of each (nothing
 * blocks). For copies into device memory that TensorFlow enqueues
 * without ordering them after the compute stream, where the memory's
 * last reader may still wait (see ocl_memcpy_htod). On failure *call
 * names the failing call. */
cl_int ocl_stream_after_other_streams(SP_Stream stream, const char **call);

TF_Bool ocl_host_callback(const SP_Device *device, SP_Stream stream,
                          SE_StatusCallbackFn callback_fn, void *callback_arg);
/* Runs the stream's pending callbacks and stops its worker (destroy_stream,
 * after the queue finished). Accepts NULL. */
void ocl_callback_worker_destroy(struct ocl_callback_worker *worker);

/* ---- Events (event.c) ---------------------------------------------------- */

struct SP_Event_st {
  struct ocl_device *dev;
  pthread_mutex_t lock;
  cl_event marker;         /* owned; NULL until recorded */
  struct SP_Stream_st *stream; /* referenced (ocl_stream_ref) */
};

void ocl_create_event(const SP_Device *device, SP_Event *event,
                      TF_Status *status);
void ocl_destroy_event(const SP_Device *device, SP_Event event);
SE_EventStatus ocl_get_event_status(const SP_Device *device, SP_Event event);
void ocl_record_event(const SP_Device *device, SP_Stream stream,
                      SP_Event event, TF_Status *status);
void ocl_wait_for_event(const SP_Device *const device, SP_Stream stream,
                        SP_Event event, TF_Status *const status);
void ocl_block_host_for_event(const SP_Device *device, SP_Event event,
                              TF_Status *status);

/* ---- Host waits and cross-context waits (event.c) ------------------------
 *
 * The only ways the plugin blocks the host. Where the driver's clFinish
 * and clWaitForEvents spin a CPU core (NVIDIA's OpenCL) they are not
 * called: the host polls the event, or sleeps until its callback. */

/* How the host waits until device work is done. Drivers whose own waits
 * sleep (PoCL: condition variables; clFinish of an idle queue costs
 * nothing) keep them; other drivers' GPUs are polled (a short spin, then
 * short sleeps: callbacks come milliseconds late on NVIDIA's), their CPU
 * devices get the event callback. Oclgrind runs queued work only inside
 * its own waits (no thread of its own), so there every wait is the
 * driver's, even the host-callback worker's and a cross-context relay's.
 * TFOCL_HOST_WAIT=callback|driver|poll overrides the first three (tests,
 * diagnosis). */
enum ocl_host_wait {
  OCL_HOST_WAIT_CALLBACK = 1,    /* CL_COMPLETE callback + condition variable */
  OCL_HOST_WAIT_DRIVER = 2,      /* clFinish / clWaitForEvents */
  OCL_HOST_WAIT_DRIVER_ONLY = 3, /* as DRIVER, and no event callbacks */
  OCL_HOST_WAIT_POLL = 4, /* the event's status, spinning then sleeping */
};
/* dev's mechanism (decided once per device). */
enum ocl_host_wait ocl_host_wait_kind(struct ocl_device *dev);
/* The kind is DRIVER or DRIVER_ONLY: clFinish is the cheapest wait. */
bool ocl_host_waits_in_driver(struct ocl_device *dev);

/* Flushes `flush` (when not NULL: the queue of `event`, so that it runs)
 * and sleeps until `event`, of dev's context, completed or failed. Returns
 * CL_SUCCESS, or the error of an OpenCL call (*call, when not NULL, names
 * it); *exec_status (may be NULL) = CL_COMPLETE, or the event's negative
 * status when the work failed. Must not be called from an OpenCL event
 * callback. */
cl_int ocl_wait_event(struct ocl_device *dev, cl_command_queue flush,
                      cl_event event, cl_int *exec_status, const char **call);
/* Sleeps until everything enqueued on q (a queue of dev) finished: a
 * marker waited for by ocl_wait_event, or the driver's clFinish. Same
 * results (a failed command shows in *exec_status with the marker only). */
cl_int ocl_finish_queue(struct ocl_device *dev, cl_command_queue q,
                        cl_int *exec_status, const char **call);
/* Makes work enqueued on q (a queue of q_dev) after this wait for `event`,
 * a submitted (flushed) event of event_dev. One cl_context: a barrier.
 * Across contexts: a barrier on a user event of q_dev's context that an
 * event callback of `event` completes (with its status), so no host thread
 * waits; the host waits here instead if the driver refuses the callback or
 * event_dev's driver runs work only inside its own waits. */
cl_int ocl_enqueue_wait_for(cl_command_queue q, struct ocl_device *q_dev,
                            cl_event event, struct ocl_device *event_dev,
                            const char **call);

/* ---- Timers (timer.c; TensorFlow no longer calls them) ----------------- */

void ocl_create_timer_fns(const SP_Platform *platform, SP_TimerFns *timer_fns,
                          TF_Status *status);
void ocl_destroy_timer_fns(const SP_Platform *platform,
                           SP_TimerFns *timer_fns);
void ocl_create_timer(const SP_Device *device, SP_Timer *timer,
                      TF_Status *status);
void ocl_destroy_timer(const SP_Device *device, SP_Timer timer);
void ocl_start_timer(const SP_Device *device, SP_Stream stream, SP_Timer timer,
                     TF_Status *status);
void ocl_stop_timer(const SP_Device *device, SP_Stream stream, SP_Timer timer,
                    TF_Status *status);

/* ---- Copies and fills (memcpy.c) ---------------------------------------- */

void ocl_memcpy_dtoh(const SP_Device *device, SP_Stream stream, void *host_dst,
                     const SP_DeviceMemoryBase *device_src, uint64_t size,
                     TF_Status *status);
void ocl_memcpy_htod(const SP_Device *device, SP_Stream stream,
                     SP_DeviceMemoryBase *device_dst, const void *host_src,
                     uint64_t size, TF_Status *status);
void ocl_memcpy_dtod(const SP_Device *device, SP_Stream stream,
                     SP_DeviceMemoryBase *device_dst,
                     const SP_DeviceMemoryBase *device_src, uint64_t size,
                     TF_Status *status);
void ocl_sync_memcpy_dtoh(const SP_Device *device, void *host_dst,
                          const SP_DeviceMemoryBase *device_src, uint64_t size,
                          TF_Status *status);
void ocl_sync_memcpy_htod(const SP_Device *device,
                          SP_DeviceMemoryBase *device_dst,
                          const void *host_src, uint64_t size,
                          TF_Status *status);
void ocl_sync_memcpy_dtod(const SP_Device *device,
                          SP_DeviceMemoryBase *device_dst,
                          const SP_DeviceMemoryBase *device_src, uint64_t size,
                          TF_Status *status);
void ocl_mem_zero(const SP_Device *device, SP_Stream stream,
                  SP_DeviceMemoryBase *location, uint64_t size,
                  TF_Status *status);
void ocl_memset(const SP_Device *device, SP_Stream stream,
                SP_DeviceMemoryBase *location, uint8_t pattern, uint64_t size,
                TF_Status *status);
void ocl_memset32(const SP_Device *device, SP_Stream stream,
                  SP_DeviceMemoryBase *location, uint32_t pattern,
                  uint64_t size, TF_Status *status);

/* ---- Stream executor table (stream_executor.c) -------------------------- */

void ocl_create_stream_executor(const SP_Platform *platform,
                                SE_CreateStreamExecutorParams *params,
                                TF_Status *status);
void ocl_destroy_stream_executor(const SP_Platform *platform,
                                 SP_StreamExecutor *stream_executor);

/* ---- Program cache (program_cache.c) ------------------------------------ */

/* The program of kernel family `family_name` for dev's cl_context, built
 * from `source` with `build_options` on first use (once per context, also
 * when several threads ask at once) and kept until the context goes. The
 * cache owns it: do not release. NULL with INTERNAL (and the build log) if
 * the build failed; the failure is remembered. */
cl_program ocl_program_get(struct ocl_device *dev, const char *family_name,
                           const char *source, const char *build_options,
                           TF_Status *status);
/* Releases every program of a context (teardown), after stopping its
 * builds ahead. Accepts NULL. */
void ocl_program_cache_destroy(struct ocl_program_cache *cache);
/* Once per context, when dev (ready) is its first device opened: starts
 * building, on a thread of its own, the programs that the context's
 * devices used in earlier processes (the cache directory's list of them,
 * most recent first), so that the kernels that ask for them find them
 * built or being built. Nothing without a list or a cache directory. */
void ocl_program_prefetch(struct ocl_device *dev);
/* How many programs this process built ahead that way (diagnostics,
 * tests). */
unsigned ocl_programs_prefetched(void);

/* ---- The static program tables (program_table.c) ------------------------ */

/* The source of the program `name` built with `options` ("" for none)
 * among the kernel families' static tables (OCL_PROGRAM_TABLE,
 * kernels/runtime.h), or NULL. */
const char *ocl_program_table_find(const char *name, const char *options);
/* The source of a generated program (a fused element-wise kernel's) from
 * its name, malloc'd; NULL for a name no kernel would give. */
char *ocl_program_generated_source(const char *name, const char *options);

/* ---- Program binaries kept between processes (program_binaries.c) ------ */

/* The program built from the binaries kept for every device, or NULL when
 * any is missing, foreign or corrupt, or the driver refuses them. */
cl_program ocl_program_binaries_load(const char *dir, cl_context context,
                                     cl_platform_id platform,
                                     const cl_device_id *devices,
                                     cl_uint num_devices, const char *family,
                                     const char *options, const char *source);
/* Keeps each device's binary of a program built from `source`. */
void ocl_program_binaries_save(const char *dir, cl_program program,
                               cl_platform_id platform, const char *family,
                               const char *options, const char *source);
/* How many programs this process built from kept binaries (diagnostics,
 * tests). */
unsigned ocl_program_binaries_loaded(void);

/* ---- Kernels (kernel_registry.c) ----------------------------------------- */

/* Registers every kernel family (TF_InitKernel, after the TF API was
 * resolved). */
void ocl_register_kernels(void);
/* Whether a kernel for `op` on OPENCL was registered whose type
 * constraints admit `dtype`: a registration named "<op>_OPENCL" (no type
 * constraint) or "<op>_OPENCL_<n>[_<n>...]" with dtype among the numbers,
 * as ocl_register_kernel names them. Thread-safe. */
bool ocl_kernel_registered(const char *op, TF_DataType dtype);
/* Whether the kernel of exactly this registration name is registered. */
bool ocl_kernel_name_registered(const char *kernel_name);
/* The kernels the graph optimizer needs from the plugin (graph/init.c),
 * registered after the families. */
void ocl_graph_register_kernels(void);
/* Defined by the kernel families (kernels/kernel_families.c, runtime.c):
 * registers every family (called by ocl_register_kernels), and releases
 * the families' cl_kernel cache (called at teardown, before the programs
 * and contexts go). */
void ocl_register_kernel_families(void);
void ocl_kernel_cache_clear(void);
/* Registers `builder` as `kernel_name` (ownership passes on); a failure is
 * traced and reported once; returns false on failure. */
bool ocl_register_builder(const char *kernel_name, TF_KernelBuilder *builder);

/* ---- Fault injection (fault.h; -Dfault-injection=true builds only) ----- */

/* Last: in a fault-injection build it redirects the OpenCL calls of every
 * file that includes ocl.h to the injector's wrappers. */
#include "fault.h"

#endif /* TFOCL_PLUGIN_OCL_H_ */
