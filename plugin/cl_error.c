/* tfocl plugin: the one OpenCL error path. Nothing else formats CL errors. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ocl.h"

#define CASE(x) \
  case x:       \
    return #x

const char *ocl_cl_error_name(cl_int err) {
  switch (err) {
    CASE(CL_SUCCESS);
    CASE(CL_DEVICE_NOT_FOUND);
    CASE(CL_DEVICE_NOT_AVAILABLE);
    CASE(CL_COMPILER_NOT_AVAILABLE);
    CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    CASE(CL_OUT_OF_RESOURCES);
    CASE(CL_OUT_OF_HOST_MEMORY);
    CASE(CL_PROFILING_INFO_NOT_AVAILABLE);
    CASE(CL_MEM_COPY_OVERLAP);
    CASE(CL_IMAGE_FORMAT_MISMATCH);
    CASE(CL_IMAGE_FORMAT_NOT_SUPPORTED);
    CASE(CL_BUILD_PROGRAM_FAILURE);
    CASE(CL_MAP_FAILURE);
    CASE(CL_MISALIGNED_SUB_BUFFER_OFFSET);
    CASE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CASE(CL_COMPILE_PROGRAM_FAILURE);
    CASE(CL_LINKER_NOT_AVAILABLE);
    CASE(CL_LINK_PROGRAM_FAILURE);
    CASE(CL_DEVICE_PARTITION_FAILED);
    CASE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
    CASE(CL_INVALID_VALUE);
    CASE(CL_INVALID_DEVICE_TYPE);
    CASE(CL_INVALID_PLATFORM);
    CASE(CL_INVALID_DEVICE);
    CASE(CL_INVALID_CONTEXT);
    CASE(CL_INVALID_QUEUE_PROPERTIES);
    CASE(CL_INVALID_COMMAND_QUEUE);
    CASE(CL_INVALID_HOST_PTR);
    CASE(CL_INVALID_MEM_OBJECT);
    CASE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    CASE(CL_INVALID_IMAGE_SIZE);
    CASE(CL_INVALID_SAMPLER);
    CASE(CL_INVALID_BINARY);
    CASE(CL_INVALID_BUILD_OPTIONS);
    CASE(CL_INVALID_PROGRAM);
    CASE(CL_INVALID_PROGRAM_EXECUTABLE);
    CASE(CL_INVALID_KERNEL_NAME);
    CASE(CL_INVALID_KERNEL_DEFINITION);
    CASE(CL_INVALID_KERNEL);
    CASE(CL_INVALID_ARG_INDEX);
    CASE(CL_INVALID_ARG_VALUE);
    CASE(CL_INVALID_ARG_SIZE);
    CASE(CL_INVALID_KERNEL_ARGS);
    CASE(CL_INVALID_WORK_DIMENSION);
    CASE(CL_INVALID_WORK_GROUP_SIZE);
    CASE(CL_INVALID_WORK_ITEM_SIZE);
    CASE(CL_INVALID_GLOBAL_OFFSET);
    CASE(CL_INVALID_EVENT_WAIT_LIST);
    CASE(CL_INVALID_EVENT);
    CASE(CL_INVALID_OPERATION);
    CASE(CL_INVALID_GL_OBJECT);
    CASE(CL_INVALID_BUFFER_SIZE);
    CASE(CL_INVALID_MIP_LEVEL);
    CASE(CL_INVALID_GLOBAL_WORK_SIZE);
    CASE(CL_INVALID_PROPERTY);
    CASE(CL_INVALID_IMAGE_DESCRIPTOR);
    CASE(CL_INVALID_COMPILER_OPTIONS);
    CASE(CL_INVALID_LINKER_OPTIONS);
    CASE(CL_INVALID_DEVICE_PARTITION_COUNT);
    CASE(CL_INVALID_PIPE_SIZE);
    CASE(CL_INVALID_DEVICE_QUEUE);
    CASE(CL_INVALID_SPEC_ID);
    CASE(CL_MAX_SIZE_RESTRICTION_EXCEEDED);
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_UNKNOWN_ERROR";
  }
}

#undef CASE

TF_Code ocl_cl_error_code(cl_int err) {
  switch (err) {
    case CL_SUCCESS:
      return TF_OK;
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
      return TF_RESOURCE_EXHAUSTED;
    default:
      /* CL_INVALID_* are our bugs; build failures carry their log. */
      return TF_INTERNAL;
  }
}

TF_Code ocl_cl_exec_error_code(cl_int exec_status) {
  switch (exec_status) {
    case CL_SUCCESS:
      return TF_OK;
    case CL_OUT_OF_HOST_MEMORY:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
      return TF_RESOURCE_EXHAUSTED;
    default:
      return exec_status > 0 ? TF_OK : TF_INTERNAL;
  }
}

static bool is_wait(const char *call) {
  return call && (strcmp(call, "clFinish") == 0 ||
                  strcmp(call, "clWaitForEvents") == 0);
}

void ocl_set_status(TF_Status *status, TF_Code code, const char *fmt, ...) {
  char message[1024];
  va_list ap;

  if (!status || !ocl_tf.SetStatus) return;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  ocl_tf.SetStatus(status, code, message);
}

void ocl_set_ok(TF_Status *status) {
  if (status && ocl_tf.SetStatus) ocl_tf.SetStatus(status, TF_OK, "");
}

void ocl_set_cl_error(TF_Status *status, cl_int err, const char *call) {
  OCL_TRACE("%s: %s (%d)", call, ocl_cl_error_name(err), (int)err);
  if (is_wait(call)) {
    ocl_set_status(status, ocl_cl_exec_error_code(err), "%s: %s (%d)%s", call,
                   ocl_cl_error_name(err), (int)err,
                   err == CL_OUT_OF_RESOURCES
                       ? ": work enqueued before failed on the device (on "
                         "NVIDIA a kernel's fault, after which every call "
                         "fails so)"
                       : "");
    return;
  }
  ocl_set_status(status, ocl_cl_error_code(err), "%s: %s (%d)", call,
                 ocl_cl_error_name(err), (int)err);
}
