/* tfocl plugin: OpenCL fault injection (meson -Dfault-injection=true only).
 *
 * The one seam: ocl.h includes this header last, and in a fault-injection
 * build every OpenCL call of plugin/ and kernels/ that can fail is
 * redirected by a macro below to a wrapper in fault.c. The wrapper counts
 * the calls matching TFOCL_FAULT=<call>:<n>[,<call>:<n>...] and makes the
 * n-th matching one fail (once) with the error a driver gives there:
 *
 *   call                          injected error
 *   clCreateBuffer                CL_MEM_OBJECT_ALLOCATION_FAILURE
 *   clEnqueueMapBuffer            CL_MAP_FAILURE
 *   clBuildProgram                CL_OUT_OF_HOST_MEMORY (transient)
 *   clCreate* (others)            CL_OUT_OF_HOST_MEMORY
 *   clEnqueue*, clFinish, ...     CL_OUT_OF_RESOURCES
 *   clSetEventCallback            CL_OUT_OF_HOST_MEMORY
 *   CLBlast* (a library's call)   the op fails before the library runs
 *
 * <call> is a function name ("clEnqueueNDRangeKernel") or a prefix ending
 * in '*' ("clEnqueue*", "*" = any). The wrappers also count the OpenCL
 * objects alive (made minus released) per kind, so tests prove an error
 * path releases what it made.
 *
 * In such a build the plugin exports one more symbol, tfocl_fault_control
 * (tests reach it with dlsym): tests re-arm faults without touching the
 * environment, and read the counters. */
#ifndef TFOCL_PLUGIN_FAULT_H_
#define TFOCL_PLUGIN_FAULT_H_

#include <stdint.h>

#include <CL/cl.h>

/* Counters since the plugin was loaded (live_*: made minus released). */
struct tfocl_fault_stats {
  int64_t calls;            /* wrapped calls */
  int64_t injected;         /* faults injected */
  int64_t live_mem;         /* cl_mem */
  int64_t live_events;      /* cl_event (enqueue outputs, user events) */
  int64_t live_queues;      /* cl_command_queue */
  int64_t live_kernels;     /* cl_kernel */
  int64_t live_programs;    /* cl_program */
  char last_injected[64];   /* name of the last call a fault was injected in */
};

/* Re-arms with `spec` (TFOCL_FAULT syntax; NULL or "" = no fault) when
 * spec_set is true (match counts restart), then copies the counters into
 * *stats when it is not NULL. */
typedef void tfocl_fault_control_fn(int spec_set, const char *spec,
                                    struct tfocl_fault_stats *stats);
#define TFOCL_FAULT_CONTROL_SYMBOL "tfocl_fault_control"

#if defined(TFOCL_FAULT_INJECTION)

cl_mem ocl_fault_clCreateBuffer(cl_context, cl_mem_flags, size_t, void *,
                                cl_int *);
cl_context ocl_fault_clCreateContext(const cl_context_properties *, cl_uint,
                                     const cl_device_id *,
                                     void(CL_CALLBACK *)(const char *,
                                                         const void *, size_t,
                                                         void *),
                                     void *, cl_int *);
cl_command_queue ocl_fault_clCreateCommandQueueWithProperties(
    cl_context, cl_device_id, const cl_queue_properties *, cl_int *);
cl_program ocl_fault_clCreateProgramWithSource(cl_context, cl_uint,
                                               const char **, const size_t *,
                                               cl_int *);
cl_program ocl_fault_clCreateProgramWithBinary(cl_context, cl_uint,
                                               const cl_device_id *,
                                               const size_t *,
                                               const unsigned char **,
                                               cl_int *, cl_int *);
cl_int ocl_fault_clBuildProgram(cl_program, cl_uint, const cl_device_id *,
                                const char *,
                                void(CL_CALLBACK *)(cl_program, void *),
                                void *);
cl_kernel ocl_fault_clCreateKernel(cl_program, const char *, cl_int *);
cl_event ocl_fault_clCreateUserEvent(cl_context, cl_int *);
cl_int ocl_fault_clSetKernelArg(cl_kernel, cl_uint, size_t, const void *);
cl_int ocl_fault_clEnqueueNDRangeKernel(cl_command_queue, cl_kernel, cl_uint,
                                        const size_t *, const size_t *,
                                        const size_t *, cl_uint,
                                        const cl_event *, cl_event *);
cl_int ocl_fault_clEnqueueWriteBuffer(cl_command_queue, cl_mem, cl_bool,
                                      size_t, size_t, const void *, cl_uint,
                                      const cl_event *, cl_event *);
cl_int ocl_fault_clEnqueueReadBuffer(cl_command_queue, cl_mem, cl_bool, size_t,
                                     size_t, void *, cl_uint, const cl_event *,
                                     cl_event *);
cl_int ocl_fault_clEnqueueCopyBuffer(cl_command_queue, cl_mem, cl_mem, size_t,
                                     size_t, size_t, cl_uint, const cl_event *,
                                     cl_event *);
cl_int ocl_fault_clEnqueueFillBuffer(cl_command_queue, cl_mem, const void *,
                                     size_t, size_t, size_t, cl_uint,
                                     const cl_event *, cl_event *);
void *ocl_fault_clEnqueueMapBuffer(cl_command_queue, cl_mem, cl_bool,
                                   cl_map_flags, size_t, size_t, cl_uint,
                                   const cl_event *, cl_event *, cl_int *);
cl_int ocl_fault_clEnqueueUnmapMemObject(cl_command_queue, cl_mem, void *,
                                         cl_uint, const cl_event *,
                                         cl_event *);
cl_int ocl_fault_clEnqueueMarkerWithWaitList(cl_command_queue, cl_uint,
                                             const cl_event *, cl_event *);
cl_int ocl_fault_clEnqueueBarrierWithWaitList(cl_command_queue, cl_uint,
                                              const cl_event *, cl_event *);
cl_int ocl_fault_clFinish(cl_command_queue);
cl_int ocl_fault_clFlush(cl_command_queue);
cl_int ocl_fault_clWaitForEvents(cl_uint, const cl_event *);
cl_int ocl_fault_clSetUserEventStatus(cl_event, cl_int);
cl_int ocl_fault_clSetEventCallback(cl_event, cl_int,
                                    void(CL_CALLBACK *)(cl_event, cl_int,
                                                        void *),
                                    void *);
cl_int ocl_fault_clEnqueueNativeKernel(cl_command_queue,
                                      void(CL_CALLBACK *)(void *), void *,
                                      size_t, cl_uint, const cl_mem *,
                                      const void **, cl_uint,
                                      const cl_event *, cl_event *);
/* A library that enqueues itself (CLBlast) cannot be redirected: the
 * runtime asks before each of its calls whether `call` fails now. */
int ocl_fault_library_call_fails(const char *call);
/* Counted only, never failed. */
cl_int ocl_fault_clReleaseMemObject(cl_mem);
cl_int ocl_fault_clReleaseEvent(cl_event);
cl_int ocl_fault_clRetainEvent(cl_event);
cl_int ocl_fault_clReleaseCommandQueue(cl_command_queue);
cl_int ocl_fault_clRetainCommandQueue(cl_command_queue);
cl_int ocl_fault_clReleaseKernel(cl_kernel);
cl_int ocl_fault_clReleaseProgram(cl_program);

#if !defined(TFOCL_FAULT_NO_REDIRECT) /* fault.c calls the real ones */

#define clCreateBuffer(...) ocl_fault_clCreateBuffer(__VA_ARGS__)
#define clCreateContext(...) ocl_fault_clCreateContext(__VA_ARGS__)
#define clCreateCommandQueueWithProperties(...) \
  ocl_fault_clCreateCommandQueueWithProperties(__VA_ARGS__)
#define clCreateProgramWithSource(...) \
  ocl_fault_clCreateProgramWithSource(__VA_ARGS__)
#define clCreateProgramWithBinary(...) \
  ocl_fault_clCreateProgramWithBinary(__VA_ARGS__)
#define clBuildProgram(...) ocl_fault_clBuildProgram(__VA_ARGS__)
#define clCreateKernel(...) ocl_fault_clCreateKernel(__VA_ARGS__)
#define clCreateUserEvent(...) ocl_fault_clCreateUserEvent(__VA_ARGS__)
#define clSetKernelArg(...) ocl_fault_clSetKernelArg(__VA_ARGS__)
#define clEnqueueNDRangeKernel(...) \
  ocl_fault_clEnqueueNDRangeKernel(__VA_ARGS__)
#define clEnqueueWriteBuffer(...) ocl_fault_clEnqueueWriteBuffer(__VA_ARGS__)
#define clEnqueueReadBuffer(...) ocl_fault_clEnqueueReadBuffer(__VA_ARGS__)
#define clEnqueueCopyBuffer(...) ocl_fault_clEnqueueCopyBuffer(__VA_ARGS__)
#define clEnqueueFillBuffer(...) ocl_fault_clEnqueueFillBuffer(__VA_ARGS__)
#define clEnqueueMapBuffer(...) ocl_fault_clEnqueueMapBuffer(__VA_ARGS__)
#define clEnqueueNativeKernel(...) \
  ocl_fault_clEnqueueNativeKernel(__VA_ARGS__)
#define clEnqueueUnmapMemObject(...) \
  ocl_fault_clEnqueueUnmapMemObject(__VA_ARGS__)
#define clEnqueueMarkerWithWaitList(...) \
  ocl_fault_clEnqueueMarkerWithWaitList(__VA_ARGS__)
#define clEnqueueBarrierWithWaitList(...) \
  ocl_fault_clEnqueueBarrierWithWaitList(__VA_ARGS__)
#define clFinish(...) ocl_fault_clFinish(__VA_ARGS__)
#define clFlush(...) ocl_fault_clFlush(__VA_ARGS__)
#define clWaitForEvents(...) ocl_fault_clWaitForEvents(__VA_ARGS__)
#define clSetUserEventStatus(...) ocl_fault_clSetUserEventStatus(__VA_ARGS__)
#define clSetEventCallback(...) ocl_fault_clSetEventCallback(__VA_ARGS__)
#define clReleaseMemObject(...) ocl_fault_clReleaseMemObject(__VA_ARGS__)
#define clReleaseEvent(...) ocl_fault_clReleaseEvent(__VA_ARGS__)
#define clRetainEvent(...) ocl_fault_clRetainEvent(__VA_ARGS__)
#define clReleaseCommandQueue(...) ocl_fault_clReleaseCommandQueue(__VA_ARGS__)
#define clRetainCommandQueue(...) ocl_fault_clRetainCommandQueue(__VA_ARGS__)
#define clReleaseKernel(...) ocl_fault_clReleaseKernel(__VA_ARGS__)
#define clReleaseProgram(...) ocl_fault_clReleaseProgram(__VA_ARGS__)

#endif /* !TFOCL_FAULT_NO_REDIRECT */
#endif /* TFOCL_FAULT_INJECTION */

#endif /* TFOCL_PLUGIN_FAULT_H_ */
