/* tfocl plugin: the entry points SE_InitPlugin (platform) and TF_InitKernel
 * (kernels); the third, TF_InitGraph (the graph optimizer), is in
 * graph/init.c.
 *
 * SE_InitPlugin never returns a failing status: TensorFlow aborts the
 * process on one (contract 4). Anything that makes the plugin unusable
 * (unknown ABI, no TF C API, no OpenCL) registers the platform normally
 * with 0 devices and prints one line on stderr saying why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

/* TensorFlow releases whose layouts we know: 2.18 and later keep the same
 * StreamExecutor layout and only ever append members (struct_size tells
 * us how much of ours the core has room for). */
#define OCL_TF_MIN_MAJOR 2
#define OCL_TF_MIN_MINOR 18

static void get_device_count(const SP_Platform *platform, int *device_count,
                             TF_Status *status) {
  (void)platform;
  ocl_set_ok(status);
  *device_count = ocl_device_count();
}

static void destroy_platform(SP_Platform *platform) {
  (void)platform;
  ocl_devices_teardown();
}

static void destroy_platform_fns(SP_PlatformFns *platform_fns) {
  (void)platform_fns; /* nothing allocated */
}

/* Why the core's TensorFlow is unusable, or NULL. */
static const char *check_tf_version(char *buf, size_t size) {
  int major = 0, minor = 0;
  const char *version = ocl_tf.Version ? ocl_tf.Version() : NULL;

  if (!version) return NULL; /* the host shim: no TF_Version */
  if (sscanf(version, "%d.%d", &major, &minor) != 2 ||
      major != OCL_TF_MIN_MAJOR || minor < OCL_TF_MIN_MINOR) {
    snprintf(buf, size, "TensorFlow %s: tfocl needs %d.%d or later", version,
             OCL_TF_MIN_MAJOR, OCL_TF_MIN_MINOR);
    return buf;
  }
  return NULL;
}

/* Whether the core's struct (struct_size first) has room for all of ours. */
static bool big_enough(const void *p, size_t ours) {
  size_t theirs;
  if (!p) return false;
  memcpy(&theirs, p, sizeof theirs);
  return theirs == 0 || theirs >= ours;
}

OCL_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams *params,
                              TF_Status *status) {
  const char *missing = NULL, *why = NULL;
  char reason[256];
  SP_Platform platform = {
      .struct_size = SP_PLATFORM_STRUCT_SIZE,
      .ext = NULL,
      .name = OCL_PLATFORM_NAME,
      .type = OCL_DEVICE_TYPE,
      .supports_unified_memory = 0,
      /* BFC with growth: regions start at ~2 MiB and double, each within
       * CL_DEVICE_MAX_MEM_ALLOC_SIZE, and tensors are sub-allocated
       * without an OpenCL call each. */
      .use_bfc_allocator = 1,
      .force_memory_growth = 1,
  };
  SP_PlatformFns fns = {
      .struct_size = SP_PLATFORM_FNS_STRUCT_SIZE,
      .ext = NULL,
      .get_device_count = get_device_count,
      .create_device = ocl_create_device,
      .destroy_device = ocl_destroy_device,
      .create_device_fns = ocl_create_device_fns,
      .destroy_device_fns = ocl_destroy_device_fns,
      .create_stream_executor = ocl_create_stream_executor,
      .destroy_stream_executor = ocl_destroy_stream_executor,
      .create_timer_fns = ocl_create_timer_fns,
      .destroy_timer_fns = ocl_destroy_timer_fns,
  };

  if (!ocl_tf_resolve(&missing)) {
    snprintf(reason, sizeof reason,
             "the TensorFlow C API lacks %s (neither libtensorflow_framework."
             "so.2 nor libtfocl_host.so is loaded?)",
             missing);
    why = reason;
  }
  ocl_set_ok(status);
  if (!params) return;
  if (!big_enough(params, SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE)) {
    /* Nothing can be written safely; the core will reject the plugin. */
    ocl_report_unusable("0 OpenCL devices: unknown StreamExecutor ABI "
                        "(registration params too small)");
    return;
  }
  params->destroy_platform = destroy_platform;
  params->destroy_platform_fns = destroy_platform_fns;
  if (params->platform) ocl_fill_struct(params->platform, &platform,
                                        SP_PLATFORM_STRUCT_SIZE);
  if (params->platform_fns)
    ocl_fill_struct(params->platform_fns, &fns, SP_PLATFORM_FNS_STRUCT_SIZE);

  if (!why && params->major_version != SE_MAJOR) {
    snprintf(reason, sizeof reason,
             "StreamExecutor C API %d.%d.%d, tfocl speaks %d.x",
             (int)params->major_version, (int)params->minor_version,
             (int)params->patch_version, SE_MAJOR);
    why = reason;
  }
  if (!why && (!big_enough(params->platform, SP_PLATFORM_STRUCT_SIZE) ||
               !big_enough(params->platform_fns, SP_PLATFORM_FNS_STRUCT_SIZE)))
    why = "unknown StreamExecutor ABI (platform tables smaller than ours)";
  if (!why) why = check_tf_version(reason, sizeof reason);
  if (why) {
    ocl_devices_disable();
    ocl_report_unusable("0 OpenCL devices: %s", why);
  }
}

OCL_EXPORT void TF_InitKernel(void) {
  const char *missing = NULL;

  if (!ocl_tf_resolve(&missing)) {
    ocl_report_unusable("no OpenCL kernels registered: the TensorFlow C API "
                        "lacks %s",
                        missing);
    return;
  }
  ocl_register_kernels();
}
