/* C-clean rendition of
 * tensorflow/c/experimental/stream_executor/stream_executor.h, the
 * StreamExecutor C API of TensorFlow 2.18-2.22. The layout is the same across
 * these releases except that 2.22 appends SP_StreamExecutor's last member,
 * create_stream_with_options (and adds SP_StreamOptions for it): an older
 * core's struct_size ends at host_callback, so the plugin fills only that
 * much and the core never sees the new member (SE_MINOR stays 0 in 2.22).
 *
 * Conventions (TensorFlow's): SE_ structs are filled by the core, SP_ structs
 * by the plugin. Both sides set struct_size to the *_STRUCT_SIZE they were
 * compiled with, so a reader must not touch a member past struct_size. `ext`
 * is reserved. Every offset below is checked at compile time. */
#ifndef TENSORFLOW_C_EXPERIMENTAL_STREAM_EXECUTOR_STREAM_EXECUTOR_H_
#define TENSORFLOW_C_EXPERIMENTAL_STREAM_EXECUTOR_STREAM_EXECUTOR_H_

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SE_MAJOR 0
#define SE_MINOR 0
#define SE_PATCH 1

/* Opaque handles; the plugin defines the structs. */
typedef struct SP_Stream_st *SP_Stream;
typedef struct SP_Event_st *SP_Event;
typedef struct SP_Timer_st *SP_Timer;

/* Host callbacks receive their argument first. */
typedef void (*SE_StatusCallbackFn)(void *const, TF_Status *const);

typedef struct SP_TimerFns {
  size_t struct_size;
  void *ext;
  uint64_t (*nanoseconds)(SP_Timer timer);
} SP_TimerFns;
#define SP_TIMER_FNS_STRUCT_SIZE TF_OFFSET_OF_END(SP_TimerFns, nanoseconds)

/* Options of a stream created by create_stream_with_options (2.22): the
 * priority of a logical device's streams (GPUOptions' virtual device
 * `priority`). */
typedef struct SP_StreamOptions {
  size_t struct_size;
  void *ext;
  TF_Bool has_priority;
  int priority;
} SP_StreamOptions;
#define SP_STREAM_OPTIONS_STRUCT_SIZE \
  TF_OFFSET_OF_END(SP_StreamOptions, priority)

/* Note: no `ext` member here, unlike every other struct. */
typedef struct SP_AllocatorStats {
  size_t struct_size;
  int64_t num_allocs;
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  int64_t largest_alloc_size;
  int8_t has_bytes_limit;
  int64_t bytes_limit;
  int64_t bytes_reserved;
  int64_t peak_bytes_reserved;
  int8_t has_bytes_reservable_limit;
  int64_t bytes_reservable_limit;
  int64_t largest_free_block_bytes;
} SP_AllocatorStats;
#define SP_ALLOCATORSTATS_STRUCT_SIZE \
  TF_OFFSET_OF_END(SP_AllocatorStats, largest_free_block_bytes)

/* TensorFlow aborts on UNKNOWN and ERROR: a plugin reports only PENDING or
 * COMPLETE and surfaces errors through the stream status. */
typedef enum SE_EventStatus {
  SE_EVENT_UNKNOWN,
  SE_EVENT_ERROR,
  SE_EVENT_PENDING,
  SE_EVENT_COMPLETE
} SE_EventStatus;

/* `opaque` is the device address TensorFlow does arithmetic on; `size` and
 * `payload` do not survive TensorFlow's allocators (deallocate sees 0). */
typedef struct SP_DeviceMemoryBase {
  size_t struct_size;
  void *ext;
  void *opaque;
  uint64_t size;
  uint64_t payload;
} SP_DeviceMemoryBase;
#define SP_DEVICE_MEMORY_BASE_STRUCT_SIZE \
  TF_OFFSET_OF_END(SP_DeviceMemoryBase, payload)

typedef struct SP_Device {
  size_t struct_size;
  void *ext;
  int32_t ordinal;
  void *device_handle; /* plugin state */
  const char *hardware_name; /* [Optional] */
  const char *device_vendor; /* [Optional] */
  const char *pci_bus_id;    /* [Optional] */
} SP_Device;
#define SP_DEVICE_STRUCT_SIZE TF_OFFSET_OF_END(SP_Device, pci_bus_id)

typedef struct SE_CreateDeviceParams {
  size_t struct_size;
  void *ext;
  int32_t ordinal;
  SP_Device *device; /* in/out: core sets struct_size, plugin fills */
} SE_CreateDeviceParams;
#define SE_CREATE_DEVICE_PARAMS_STRUCT_SIZE \
  TF_OFFSET_OF_END(SE_CreateDeviceParams, device)

typedef struct SP_DeviceFns {
  size_t struct_size;
  void *ext;
  int32_t (*get_numa_node)(const SP_Device *device);        /* [Optional] */
  int64_t (*get_memory_bandwidth)(const SP_Device *device); /* [Optional] */
  double (*get_gflops)(const SP_Device *device);            /* [Optional] */
} SP_DeviceFns;
#define SP_DEVICE_FNS_STRUCT_SIZE TF_OFFSET_OF_END(SP_DeviceFns, get_gflops)

typedef struct SE_CreateDeviceFnsParams {
  size_t struct_size;
  void *ext;
  SP_DeviceFns *device_fns; /* output */
} SE_CreateDeviceFnsParams;
#define SE_CREATE_DEVICE_FNS_PARAMS_STRUCT_SIZE \
  TF_OFFSET_OF_END(SE_CreateDeviceFnsParams, device_fns)

typedef struct SP_StreamExecutor {
  size_t struct_size;
  void *ext;

  /* Memory. deallocate receives only `opaque`. */
  void (*allocate)(const SP_Device *device, uint64_t size,
                   int64_t memory_space, SP_DeviceMemoryBase *mem);
  void (*deallocate)(const SP_Device *device, SP_DeviceMemoryBase *memory);
  void *(*host_memory_allocate)(const SP_Device *device, uint64_t size);
  void (*host_memory_deallocate)(const SP_Device *device, void *mem);
  /* Required only when SP_Platform.supports_unified_memory. */
  void *(*unified_memory_allocate)(const SP_Device *device, uint64_t bytes);
  void (*unified_memory_deallocate)(const SP_Device *device, void *location);
  TF_Bool (*get_allocator_stats)(const SP_Device *device,
                                 SP_AllocatorStats *stats);
  /* Must return true: TensorFlow refuses a device whose memory is unknown. */
  TF_Bool (*device_memory_usage)(const SP_Device *device, int64_t *free,
                                 int64_t *total);

  /* Streams. */
  void (*create_stream)(const SP_Device *device, SP_Stream *stream,
                        TF_Status *status);
  void (*destroy_stream)(const SP_Device *device, SP_Stream stream);
  /* Later work on `dependent` waits for all work now on `other`. */
  void (*create_stream_dependency)(const SP_Device *device,
                                   SP_Stream dependent, SP_Stream other,
                                   TF_Status *status);
  void (*get_stream_status)(const SP_Device *device, SP_Stream stream,
                            TF_Status *status);

  /* Events. */
  void (*create_event)(const SP_Device *device, SP_Event *event,
                       TF_Status *status);
  void (*destroy_event)(const SP_Device *device, SP_Event event);
  SE_EventStatus (*get_event_status)(const SP_Device *device, SP_Event event);
  void (*record_event)(const SP_Device *device, SP_Stream stream,
                       SP_Event event, TF_Status *status);
  void (*wait_for_event)(const SP_Device *const device, SP_Stream stream,
                         SP_Event event, TF_Status *const status);

  /* Timers: still in the layout; current TensorFlow never calls them. */
  void (*create_timer)(const SP_Device *device, SP_Timer *timer,
                       TF_Status *status);
  void (*destroy_timer)(const SP_Device *device, SP_Timer timer);
  void (*start_timer)(const SP_Device *device, SP_Stream stream,
                      SP_Timer timer, TF_Status *status);
  void (*stop_timer)(const SP_Device *device, SP_Stream stream, SP_Timer timer,
                     TF_Status *status);

  /* Copies. The asynchronous ones are ordered on `stream`; the host buffer
   * stays alive until an event recorded after them completes. */
  void (*memcpy_dtoh)(const SP_Device *device, SP_Stream stream,
                      void *host_dst, const SP_DeviceMemoryBase *device_src,
                      uint64_t size, TF_Status *status);
  void (*memcpy_htod)(const SP_Device *device, SP_Stream stream,
                      SP_DeviceMemoryBase *device_dst, const void *host_src,
                      uint64_t size, TF_Status *status);
  void (*memcpy_dtod)(const SP_Device *device, SP_Stream stream,
                      SP_DeviceMemoryBase *device_dst,
                      const SP_DeviceMemoryBase *device_src, uint64_t size,
                      TF_Status *status);
  void (*sync_memcpy_dtoh)(const SP_Device *device, void *host_dst,
                           const SP_DeviceMemoryBase *device_src,
                           uint64_t size, TF_Status *status);
  void (*sync_memcpy_htod)(const SP_Device *device,
                           SP_DeviceMemoryBase *device_dst,
                           const void *host_src, uint64_t size,
                           TF_Status *status);
  void (*sync_memcpy_dtod)(const SP_Device *device,
                           SP_DeviceMemoryBase *device_dst,
                           const SP_DeviceMemoryBase *device_src,
                           uint64_t size, TF_Status *status);

  /* Synchronisation. */
  void (*block_host_for_event)(const SP_Device *device, SP_Event event,
                               TF_Status *status);
  void (*block_host_until_done)(const SP_Device *device, SP_Stream stream,
                                TF_Status *status); /* [Optional] */
  void (*synchronize_all_activity)(const SP_Device *device,
                                   TF_Status *status);

  /* Fills, ordered on `stream`; `size` is in bytes (memset32: a multiple of
   * 4). */
  void (*mem_zero)(const SP_Device *device, SP_Stream stream,
                   SP_DeviceMemoryBase *location, uint64_t size,
                   TF_Status *status);
  void (*memset)(const SP_Device *device, SP_Stream stream,
                 SP_DeviceMemoryBase *location, uint8_t pattern,
                 uint64_t size, TF_Status *status);
  void (*memset32)(const SP_Device *device, SP_Stream stream,
                   SP_DeviceMemoryBase *location, uint32_t pattern,
                   uint64_t size, TF_Status *status);

  /* Runs callback_fn(callback_arg, status) on the host once all earlier work
   * on `stream` is done; later work on `stream` waits for it. Returns true if
   * the callback was enqueued. */
  TF_Bool (*host_callback)(const SP_Device *device, SP_Stream stream,
                           SE_StatusCallbackFn callback_fn,
                           void *callback_arg);

  /* [Optional, 2.22] create_stream with options; a core without it (or a
   * plugin leaving it NULL) uses create_stream. */
  void (*create_stream_with_options)(const SP_Device *device,
                                     const SP_StreamOptions *options,
                                     SP_Stream *stream, TF_Status *status);
} SP_StreamExecutor;
#define SP_STREAMEXECUTOR_STRUCT_SIZE \
  TF_OFFSET_OF_END(SP_StreamExecutor, create_stream_with_options)
/* struct_size of a TensorFlow 2.18-2.21 core's SP_StreamExecutor. */
#define SP_STREAMEXECUTOR_STRUCT_SIZE_2_21 \
  TF_OFFSET_OF_END(SP_StreamExecutor, host_callback)

typedef struct SE_CreateStreamExecutorParams {
  size_t struct_size;
  void *ext;
  SP_StreamExecutor *stream_executor; /* output */
} SE_CreateStreamExecutorParams;
#define SE_CREATE_STREAM_EXECUTOR_PARAMS_STRUCT_SIZE \
  TF_OFFSET_OF_END(SE_CreateStreamExecutorParams, stream_executor)

typedef struct SP_Platform {
  size_t struct_size;
  void *ext;
  /* Both match [A-Z][A-Z_]* and must outlive the platform (static). */
  const char *name; /* platform, a.k.a. subtype */
  const char *type; /* device type, e.g. "OPENCL" */
  TF_Bool supports_unified_memory;
  TF_Bool use_bfc_allocator;
  TF_Bool force_memory_growth;
} SP_Platform;
#define SP_PLATFORM_STRUCT_SIZE \
  TF_OFFSET_OF_END(SP_Platform, force_memory_growth)

typedef struct SP_PlatformFns {
  size_t struct_size;
  void *ext;
  /* Not validated by TensorFlow but always called. */
  void (*get_device_count)(const SP_Platform *platform, int *device_count,
                           TF_Status *status);
  void (*create_device)(const SP_Platform *platform,
                        SE_CreateDeviceParams *params, TF_Status *status);
  /* Frees what the plugin hung off `device`, not `device` itself. */
  void (*destroy_device)(const SP_Platform *platform, SP_Device *device);
  void (*create_device_fns)(const SP_Platform *platform,
                            SE_CreateDeviceFnsParams *params,
                            TF_Status *status);
  void (*destroy_device_fns)(const SP_Platform *platform,
                             SP_DeviceFns *device_fns);
  void (*create_stream_executor)(const SP_Platform *platform,
                                 SE_CreateStreamExecutorParams *params,
                                 TF_Status *status);
  void (*destroy_stream_executor)(const SP_Platform *platform,
                                  SP_StreamExecutor *stream_executor);
  /* Not validated; destroy_timer_fns is called unconditionally at teardown. */
  void (*create_timer_fns)(const SP_Platform *platform, SP_TimerFns *timer,
                           TF_Status *status);
  void (*destroy_timer_fns)(const SP_Platform *platform,
                            SP_TimerFns *timer_fns);
} SP_PlatformFns;
#define SP_PLATFORM_FNS_STRUCT_SIZE \
  TF_OFFSET_OF_END(SP_PlatformFns, destroy_timer_fns)

typedef struct SE_PlatformRegistrationParams {
  size_t struct_size;
  void *ext;
  /* Set by the core to SE_MAJOR/MINOR/PATCH. */
  int32_t major_version;
  int32_t minor_version;
  int32_t patch_version;
  /* The core's objects (on its stack during SE_InitPlugin): fill them, never
   * keep the pointers. */
  SP_Platform *platform;
  SP_PlatformFns *platform_fns;
  void (*destroy_platform)(SP_Platform *platform);
  void (*destroy_platform_fns)(SP_PlatformFns *platform_fns);
} SE_PlatformRegistrationParams;
#define SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE \
  TF_OFFSET_OF_END(SE_PlatformRegistrationParams, destroy_platform_fns)

/* The plugin's entry point (exported by the plugin, not by the core). */
void SE_InitPlugin(SE_PlatformRegistrationParams *params, TF_Status *status);

/* Layout of TensorFlow 2.18-2.21 on LP64. */
#if TFOCL_ABI_LP64
TFOCL_ABI_ASSERT(SP_TIMER_FNS_STRUCT_SIZE == 24, "SP_TimerFns size");
TFOCL_ABI_ASSERT(sizeof(SP_AllocatorStats) == 96, "SP_AllocatorStats sizeof");
TFOCL_ABI_ASSERT(SP_ALLOCATORSTATS_STRUCT_SIZE == 96, "SP_AllocatorStats size");
TFOCL_ABI_ASSERT(offsetof(SP_AllocatorStats, has_bytes_limit) == 40,
                 "SP_AllocatorStats.has_bytes_limit");
TFOCL_ABI_ASSERT(offsetof(SP_AllocatorStats, bytes_limit) == 48,
                 "SP_AllocatorStats.bytes_limit");
TFOCL_ABI_ASSERT(offsetof(SP_AllocatorStats, has_bytes_reservable_limit) == 72,
                 "SP_AllocatorStats.has_bytes_reservable_limit");
TFOCL_ABI_ASSERT(offsetof(SP_AllocatorStats, bytes_reservable_limit) == 80,
                 "SP_AllocatorStats.bytes_reservable_limit");
TFOCL_ABI_ASSERT(offsetof(SP_AllocatorStats, largest_free_block_bytes) == 88,
                 "SP_AllocatorStats.largest_free_block_bytes");
TFOCL_ABI_ASSERT(sizeof(SE_EventStatus) == 4, "SE_EventStatus");
TFOCL_ABI_ASSERT(offsetof(SP_DeviceMemoryBase, opaque) == 16,
                 "SP_DeviceMemoryBase.opaque");
TFOCL_ABI_ASSERT(offsetof(SP_DeviceMemoryBase, size) == 24,
                 "SP_DeviceMemoryBase.size");
TFOCL_ABI_ASSERT(offsetof(SP_DeviceMemoryBase, payload) == 32,
                 "SP_DeviceMemoryBase.payload");
TFOCL_ABI_ASSERT(SP_DEVICE_MEMORY_BASE_STRUCT_SIZE == 40,
                 "SP_DeviceMemoryBase size");
TFOCL_ABI_ASSERT(offsetof(SP_Device, ordinal) == 16, "SP_Device.ordinal");
TFOCL_ABI_ASSERT(offsetof(SP_Device, device_handle) == 24,
                 "SP_Device.device_handle");
TFOCL_ABI_ASSERT(offsetof(SP_Device, hardware_name) == 32,
                 "SP_Device.hardware_name");
TFOCL_ABI_ASSERT(offsetof(SP_Device, device_vendor) == 40,
                 "SP_Device.device_vendor");
TFOCL_ABI_ASSERT(offsetof(SP_Device, pci_bus_id) == 48, "SP_Device.pci_bus_id");
TFOCL_ABI_ASSERT(SP_DEVICE_STRUCT_SIZE == 56, "SP_Device size");
TFOCL_ABI_ASSERT(offsetof(SE_CreateDeviceParams, ordinal) == 16,
                 "SE_CreateDeviceParams.ordinal");
TFOCL_ABI_ASSERT(offsetof(SE_CreateDeviceParams, device) == 24,
                 "SE_CreateDeviceParams.device");
TFOCL_ABI_ASSERT(SE_CREATE_DEVICE_PARAMS_STRUCT_SIZE == 32,
                 "SE_CreateDeviceParams size");
TFOCL_ABI_ASSERT(offsetof(SP_DeviceFns, get_numa_node) == 16,
                 "SP_DeviceFns.get_numa_node");
TFOCL_ABI_ASSERT(SP_DEVICE_FNS_STRUCT_SIZE == 40, "SP_DeviceFns size");
TFOCL_ABI_ASSERT(SE_CREATE_DEVICE_FNS_PARAMS_STRUCT_SIZE == 24,
                 "SE_CreateDeviceFnsParams size");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, allocate) == 16,
                 "SP_StreamExecutor.allocate");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, create_stream) == 80,
                 "SP_StreamExecutor.create_stream");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, create_event) == 112,
                 "SP_StreamExecutor.create_event");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, create_timer) == 152,
                 "SP_StreamExecutor.create_timer");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, memcpy_dtoh) == 184,
                 "SP_StreamExecutor.memcpy_dtoh");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, block_host_for_event) == 232,
                 "SP_StreamExecutor.block_host_for_event");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, mem_zero) == 256,
                 "SP_StreamExecutor.mem_zero");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, memset32) == 272,
                 "SP_StreamExecutor.memset32");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, host_callback) == 280,
                 "SP_StreamExecutor.host_callback");
TFOCL_ABI_ASSERT(SP_STREAMEXECUTOR_STRUCT_SIZE_2_21 == 288,
                 "SP_StreamExecutor size (2.18-2.21)");
TFOCL_ABI_ASSERT(offsetof(SP_StreamExecutor, create_stream_with_options) ==
                     288,
                 "SP_StreamExecutor.create_stream_with_options");
TFOCL_ABI_ASSERT(SP_STREAMEXECUTOR_STRUCT_SIZE == 296,
                 "SP_StreamExecutor size (2.22)");
TFOCL_ABI_ASSERT(offsetof(SP_StreamOptions, has_priority) == 16,
                 "SP_StreamOptions.has_priority");
TFOCL_ABI_ASSERT(offsetof(SP_StreamOptions, priority) == 20,
                 "SP_StreamOptions.priority");
TFOCL_ABI_ASSERT(SP_STREAM_OPTIONS_STRUCT_SIZE == 24,
                 "SP_StreamOptions size");
TFOCL_ABI_ASSERT(SE_CREATE_STREAM_EXECUTOR_PARAMS_STRUCT_SIZE == 24,
                 "SE_CreateStreamExecutorParams size");
TFOCL_ABI_ASSERT(offsetof(SP_Platform, name) == 16, "SP_Platform.name");
TFOCL_ABI_ASSERT(offsetof(SP_Platform, type) == 24, "SP_Platform.type");
TFOCL_ABI_ASSERT(offsetof(SP_Platform, supports_unified_memory) == 32,
                 "SP_Platform.supports_unified_memory");
TFOCL_ABI_ASSERT(offsetof(SP_Platform, use_bfc_allocator) == 33,
                 "SP_Platform.use_bfc_allocator");
TFOCL_ABI_ASSERT(offsetof(SP_Platform, force_memory_growth) == 34,
                 "SP_Platform.force_memory_growth");
TFOCL_ABI_ASSERT(SP_PLATFORM_STRUCT_SIZE == 35, "SP_Platform size");
TFOCL_ABI_ASSERT(sizeof(SP_Platform) == 40, "SP_Platform sizeof");
TFOCL_ABI_ASSERT(offsetof(SP_PlatformFns, get_device_count) == 16,
                 "SP_PlatformFns.get_device_count");
TFOCL_ABI_ASSERT(offsetof(SP_PlatformFns, create_timer_fns) == 72,
                 "SP_PlatformFns.create_timer_fns");
TFOCL_ABI_ASSERT(offsetof(SP_PlatformFns, destroy_timer_fns) == 80,
                 "SP_PlatformFns.destroy_timer_fns");
TFOCL_ABI_ASSERT(SP_PLATFORM_FNS_STRUCT_SIZE == 88, "SP_PlatformFns size");
TFOCL_ABI_ASSERT(offsetof(SE_PlatformRegistrationParams, major_version) == 16,
                 "SE_PlatformRegistrationParams.major_version");
TFOCL_ABI_ASSERT(offsetof(SE_PlatformRegistrationParams, patch_version) == 24,
                 "SE_PlatformRegistrationParams.patch_version");
TFOCL_ABI_ASSERT(offsetof(SE_PlatformRegistrationParams, platform) == 32,
                 "SE_PlatformRegistrationParams.platform");
TFOCL_ABI_ASSERT(offsetof(SE_PlatformRegistrationParams, platform_fns) == 40,
                 "SE_PlatformRegistrationParams.platform_fns");
TFOCL_ABI_ASSERT(offsetof(SE_PlatformRegistrationParams, destroy_platform) ==
                     48,
                 "SE_PlatformRegistrationParams.destroy_platform");
TFOCL_ABI_ASSERT(SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE == 64,
                 "SE_PlatformRegistrationParams size");
#endif

#ifdef __cplusplus
}
#endif

#endif /* TENSORFLOW_C_EXPERIMENTAL_STREAM_EXECUTOR_STREAM_EXECUTOR_H_ */
