/* tfocl profiler: OpenCL command timestamps as a TensorFlow profile
 * (plugin/profiler/).
 *
 * While TensorFlow takes a profile (TF_InitProfiler's start .. stop), every
 * kernel launch, copy and fill the plugin enqueues hands its cl_event to
 * ocl_profiler_record; collect_data_xspace turns the events' profiling
 * timestamps (converted to host time) into one XPlane per device,
 * "/device:CUSTOM:<ordinal>", one line per command queue, one event per
 * command named after its kernel. Outside a profile the only cost is one
 * relaxed atomic load per command (ocl_profiler_active). */
#ifndef TFOCL_PLUGIN_PROFILER_PROFILER_H_
#define TFOCL_PLUGIN_PROFILER_PROFILER_H_

#include <stdatomic.h>
#include <stdbool.h>

#include <CL/cl.h>

struct ocl_device;

/* Whether a profile is being taken. */
extern _Atomic bool ocl_profiling;

static inline bool ocl_profiler_active(void)
{
  return atomic_load_explicit(&ocl_profiling, memory_order_relaxed);
}

/* What a recorded command did; copies are named after their kind. */
enum ocl_activity {
  OCL_ACTIVITY_KERNEL,
  OCL_ACTIVITY_COPY_H2D,
  OCL_ACTIVITY_COPY_D2H,
  OCL_ACTIVITY_COPY_D2D,
  OCL_ACTIVITY_FILL,
};

/* Records a command enqueued on `queue` of `dev` during a profile. Takes
 * over `event` (released when the profile is collected or dropped); `name`
 * (a kernel's) is copied, and may be NULL for copies and fills. Never
 * fails the command: when out of memory the event is dropped and the
 * profile says how many were. */
void ocl_profiler_record(struct ocl_device *dev, cl_command_queue queue,
                         cl_event event, enum ocl_activity kind,
                         const char *name);

/* Drops whatever was recorded (destroy_platform: before the queues go). */
void ocl_profiler_teardown(void);

#endif /* TFOCL_PLUGIN_PROFILER_PROFILER_H_ */
