/* TensorFlow's checks of a plugin's tables (stream_executor.cc
 * Validate*, device_utils::ValidateDeviceType), with the same codes and
 * messages, plus the checks for members TensorFlow calls without testing
 * (it would crash where we report). */
#include <string.h>

#include "shim_internal.h"

#define VALIDATE_STRUCT_SIZE(STRUCT, obj, SIZE_NAME)                          \
  do {                                                                        \
    if ((obj)->struct_size == 0) {                                            \
      shim_set_status(status, TF_FAILED_PRECONDITION,                         \
                      "Expected initialized `" #STRUCT                        \
                      "` structure with `struct_size` field set to " #SIZE_NAME \
                      ". Found `struct_size` = 0.");                          \
      return;                                                                 \
    }                                                                         \
  } while (0)

#define VALIDATE_NOT_NULL(STRUCT, obj, field)                                 \
  do {                                                                        \
    if ((obj)->field == NULL) {                                               \
      shim_set_status(status, TF_FAILED_PRECONDITION,                         \
                      "'" #field "' field in " #STRUCT " must be set.");      \
      return;                                                                 \
    }                                                                         \
  } while (0)

void shim_validate_device_type(const char *type, TF_Status *status)
{
  /* Full match of [A-Z][A-Z_]*: TensorFlow's device-name grammar has no
   * room for digits (they would read as an ordinal). */
  bool ok = type[0] >= 'A' && type[0] <= 'Z';
  for (const char *c = type + 1; ok && *c != '\0'; c++)
    ok = (*c >= 'A' && *c <= 'Z') || *c == '_';
  if (!ok) {
    shim_set_status(status, TF_FAILED_PRECONDITION,
                    "Device name/type '%s' must match [A-Z][A-Z_]*.", type);
    return;
  }
  shim_set_ok(status);
}

void shim_validate_registration_params(const SE_PlatformRegistrationParams *p,
                                       TF_Status *status)
{
  VALIDATE_STRUCT_SIZE(SE_PlatformRegistrationParams, p,
                       SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE);
  VALIDATE_NOT_NULL(SE_PlatformRegistrationParams, p, destroy_platform);
  VALIDATE_NOT_NULL(SE_PlatformRegistrationParams, p, destroy_platform_fns);
  shim_set_ok(status);
}

void shim_validate_platform(const SP_Platform *p, TF_Status *status)
{
  VALIDATE_STRUCT_SIZE(SP_Platform, p, SP_PLATFORM_STRUCT_SIZE);
  VALIDATE_NOT_NULL(SP_Platform, p, name);
  VALIDATE_NOT_NULL(SP_Platform, p, type);
  shim_validate_device_type(p->name, status);
  if (!shim_ok(status))
    return;
  shim_validate_device_type(p->type, status);
}

void shim_validate_platform_fns(const SP_PlatformFns *p, TF_Status *status)
{
  VALIDATE_STRUCT_SIZE(SP_PlatformFns, p, SP_PLATFORM_FNS_STRUCT_SIZE);
  VALIDATE_NOT_NULL(SP_PlatformFns, p, create_device);
  VALIDATE_NOT_NULL(SP_PlatformFns, p, destroy_device);
  VALIDATE_NOT_NULL(SP_PlatformFns, p, create_stream_executor);
  VALIDATE_NOT_NULL(SP_PlatformFns, p, destroy_stream_executor);
  VALIDATE_NOT_NULL(SP_PlatformFns, p, create_device_fns);
  VALIDATE_NOT_NULL(SP_PlatformFns, p, destroy_device_fns);
  /* Beyond TensorFlow, which calls both unconditionally
   * (CPlatform::VisibleDeviceCount, ~CPlatform) and would crash. */
  VALIDATE_NOT_NULL(SP_PlatformFns, p, get_device_count);
  VALIDATE_NOT_NULL(SP_PlatformFns, p, destroy_timer_fns);
  shim_set_ok(status);
}

void shim_validate_device_fns(const SP_DeviceFns *p, TF_Status *status)
{
  VALIDATE_STRUCT_SIZE(SP_DeviceFns, p, SP_DEVICE_FNS_STRUCT_SIZE);
  shim_set_ok(status);
}

void shim_validate_stream_executor(const SP_StreamExecutor *se,
                                   const SP_Platform *platform,
                                   TF_Status *status)
{
  /* TensorFlow's message names SP_STREAM_EXECUTOR_STRUCT_SIZE although the
   * macro is spelled SP_STREAMEXECUTOR_STRUCT_SIZE; keep its wording. */
  VALIDATE_STRUCT_SIZE(SP_StreamExecutor, se, SP_STREAM_EXECUTOR_STRUCT_SIZE);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, allocate);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, deallocate);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, get_allocator_stats);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, host_memory_allocate);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, host_memory_deallocate);
  if (platform->supports_unified_memory) {
    VALIDATE_NOT_NULL(SP_StreamExecutor, se, unified_memory_allocate);
    VALIDATE_NOT_NULL(SP_StreamExecutor, se, unified_memory_deallocate);
  }
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, device_memory_usage);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, create_stream);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, destroy_stream);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, create_stream_dependency);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, get_stream_status);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, create_event);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, destroy_event);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, get_event_status);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, record_event);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, wait_for_event);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, memcpy_dtoh);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, memcpy_htod);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, sync_memcpy_dtoh);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, sync_memcpy_htod);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, block_host_for_event);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, synchronize_all_activity);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, host_callback);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, mem_zero);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, memset);
  VALIDATE_NOT_NULL(SP_StreamExecutor, se, memset32);
  shim_set_ok(status);
}

void shim_validate_device(const SP_Device *d, TF_Status *status)
{
  VALIDATE_STRUCT_SIZE(SP_Device, d, SP_DEVICE_STRUCT_SIZE);
  shim_set_ok(status);
}
