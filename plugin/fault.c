/* tfocl plugin: the OpenCL fault injector (see fault.h). Compiled only in a
 * -Dfault-injection=true build. */
#define TFOCL_FAULT_NO_REDIRECT 1
#include "fault.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

#define MAX_RULES 8

struct rule {
  char pattern[64]; /* name, or prefix when wildcard */
  bool wildcard;
  int64_t n;        /* fail the n-th match (1-based) */
  int64_t seen;     /* matches so far */
};

static struct {
  pthread_mutex_t lock;
  bool env_read;
  int num_rules;
  struct rule rules[MAX_RULES];
  struct tfocl_fault_stats stats;
} fi = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Caller holds fi.lock. Malformed entries are ignored (traced). */
static void parse(const char *spec) {
  fi.num_rules = 0;
  while (spec && *spec && fi.num_rules < MAX_RULES) {
    const char *end = strchr(spec, ',');
    size_t len = end ? (size_t)(end - spec) : strlen(spec);
    const char *colon = memchr(spec, ':', len);
    if (colon && (size_t)(colon - spec) < sizeof fi.rules[0].pattern) {
      struct rule *r = &fi.rules[fi.num_rules];
      size_t name_len = (size_t)(colon - spec);
      memcpy(r->pattern, spec, name_len);
      r->pattern[name_len] = '\0';
      r->wildcard = name_len > 0 && r->pattern[name_len - 1] == '*';
      if (r->wildcard) r->pattern[name_len - 1] = '\0';
      r->n = strtoll(colon + 1, NULL, 10);
      r->seen = 0;
      if (r->n > 0) fi.num_rules++;
    } else {
      OCL_TRACE("TFOCL_FAULT: ignoring malformed entry '%.*s'", (int)len, spec);
    }
    spec = end ? end + 1 : NULL;
  }
}

/* Counts a call of `name`; true when this one must fail. */
static bool should_fail(const char *name) {
  bool fail = false;
  pthread_mutex_lock(&fi.lock);
  if (!fi.env_read) {
    fi.env_read = true;
    parse(getenv("TFOCL_FAULT"));
  }
  fi.stats.calls++;
  for (int i = 0; i < fi.num_rules; i++) {
    struct rule *r = &fi.rules[i];
    bool match = r->wildcard ? strncmp(name, r->pattern, strlen(r->pattern)) == 0
                             : strcmp(name, r->pattern) == 0;
    if (match && ++r->seen == r->n) fail = true;
  }
  if (fail) {
    fi.stats.injected++;
    snprintf(fi.stats.last_injected, sizeof fi.stats.last_injected, "%s", name);
  }
  pthread_mutex_unlock(&fi.lock);
  if (fail) OCL_TRACE("TFOCL_FAULT: failing %s", name);
  return fail;
}

static void count(int64_t *counter, int64_t delta) {
  pthread_mutex_lock(&fi.lock);
  *counter += delta;
  pthread_mutex_unlock(&fi.lock);
}

static void count_event(const cl_event *event) {
  if (event && *event) count(&fi.stats.live_events, 1);
}

OCL_EXPORT void tfocl_fault_control(int spec_set, const char *spec,
                                    struct tfocl_fault_stats *stats);
OCL_EXPORT void tfocl_fault_control(int spec_set, const char *spec,
                                    struct tfocl_fault_stats *stats) {
  pthread_mutex_lock(&fi.lock);
  if (spec_set) {
    fi.env_read = true;
    parse(spec);
  }
  if (stats) *stats = fi.stats;
  pthread_mutex_unlock(&fi.lock);
}

/* ---- Creates: errcode_ret out parameter -------------------------------- */

#define FAIL_CREATE(name, code)                \
  do {                                         \
    if (should_fail(name)) {                   \
      if (errcode_ret) *errcode_ret = (code);  \
      return NULL;                             \
    }                                          \
  } while (0)

cl_mem ocl_fault_clCreateBuffer(cl_context c, cl_mem_flags f, size_t s,
                                void *h, cl_int *errcode_ret) {
  FAIL_CREATE("clCreateBuffer", CL_MEM_OBJECT_ALLOCATION_FAILURE);
  cl_mem m = clCreateBuffer(c, f, s, h, errcode_ret);
  if (m) count(&fi.stats.live_mem, 1);
  return m;
}

cl_context ocl_fault_clCreateContext(
    const cl_context_properties *p, cl_uint n, const cl_device_id *d,
    void(CL_CALLBACK *cb)(const char *, const void *, size_t, void *),
    void *u, cl_int *errcode_ret) {
  FAIL_CREATE("clCreateContext", CL_OUT_OF_HOST_MEMORY);
  return clCreateContext(p, n, d, cb, u, errcode_ret);
}

cl_command_queue ocl_fault_clCreateCommandQueueWithProperties(
    cl_context c, cl_device_id d, const cl_queue_properties *p,
    cl_int *errcode_ret) {
  FAIL_CREATE("clCreateCommandQueueWithProperties", CL_OUT_OF_HOST_MEMORY);
  cl_command_queue q = clCreateCommandQueueWithProperties(c, d, p, errcode_ret);
  if (q) count(&fi.stats.live_queues, 1);
  return q;
}

cl_program ocl_fault_clCreateProgramWithSource(cl_context c, cl_uint n,
                                               const char **s, const size_t *l,
                                               cl_int *errcode_ret) {
  FAIL_CREATE("clCreateProgramWithSource", CL_OUT_OF_HOST_MEMORY);
  cl_program p = clCreateProgramWithSource(c, n, s, l, errcode_ret);
  if (p) count(&fi.stats.live_programs, 1);
  return p;
}

cl_program ocl_fault_clCreateProgramWithBinary(
    cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,
    const unsigned char **b, cl_int *binary_status, cl_int *errcode_ret) {
  FAIL_CREATE("clCreateProgramWithBinary", CL_OUT_OF_HOST_MEMORY);
  cl_program p =
      clCreateProgramWithBinary(c, n, d, l, b, binary_status, errcode_ret);
  if (p) count(&fi.stats.live_programs, 1);
  return p;
}

cl_kernel ocl_fault_clCreateKernel(cl_program p, const char *name,
                                   cl_int *errcode_ret) {
  FAIL_CREATE("clCreateKernel", CL_OUT_OF_HOST_MEMORY);
  cl_kernel k = clCreateKernel(p, name, errcode_ret);
  if (k) count(&fi.stats.live_kernels, 1);
  return k;
}

cl_event ocl_fault_clCreateUserEvent(cl_context c, cl_int *errcode_ret) {
  FAIL_CREATE("clCreateUserEvent", CL_OUT_OF_HOST_MEMORY);
  cl_event e = clCreateUserEvent(c, errcode_ret);
  if (e) count(&fi.stats.live_events, 1);
  return e;
}

void *ocl_fault_clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool b,
                                   cl_map_flags f, size_t o, size_t s,
                                   cl_uint n, const cl_event *w, cl_event *e,
                                   cl_int *errcode_ret) {
  FAIL_CREATE("clEnqueueMapBuffer", CL_MAP_FAILURE);
  void *p = clEnqueueMapBuffer(q, m, b, f, o, s, n, w, e, errcode_ret);
  if (p) count_event(e);
  return p;
}

/* ---- Calls returning cl_int -------------------------------------------- */

#define FAIL_CALL(name, code)            \
  do {                                   \
    if (should_fail(name)) return (code); \
  } while (0)

cl_int ocl_fault_clBuildProgram(cl_program p, cl_uint n, const cl_device_id *d,
                                const char *o,
                                void(CL_CALLBACK *cb)(cl_program, void *),
                                void *u) {
  FAIL_CALL("clBuildProgram", CL_OUT_OF_HOST_MEMORY);
  return clBuildProgram(p, n, d, o, cb, u);
}

cl_int ocl_fault_clSetKernelArg(cl_kernel k, cl_uint i, size_t s,
                                const void *v) {
  FAIL_CALL("clSetKernelArg", CL_OUT_OF_RESOURCES);
  return clSetKernelArg(k, i, s, v);
}

/* An enqueue: may fail, counts the event it makes. */
#define ENQUEUE(name, call)                      \
  do {                                           \
    FAIL_CALL(name, CL_OUT_OF_RESOURCES);        \
    cl_int err_ = (call);                        \
    if (err_ == CL_SUCCESS) count_event(e);      \
    return err_;                                 \
  } while (0)

cl_int ocl_fault_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k,
                                        cl_uint dim, const size_t *go,
                                        const size_t *gs, const size_t *ls,
                                        cl_uint n, const cl_event *w,
                                        cl_event *e) {
  ENQUEUE("clEnqueueNDRangeKernel",
          clEnqueueNDRangeKernel(q, k, dim, go, gs, ls, n, w, e));
}

cl_int ocl_fault_clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool b,
                                      size_t o, size_t s, const void *p,
                                      cl_uint n, const cl_event *w,
                                      cl_event *e) {
  ENQUEUE("clEnqueueWriteBuffer", clEnqueueWriteBuffer(q, m, b, o, s, p, n, w, e));
}

cl_int ocl_fault_clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool b,
                                     size_t o, size_t s, void *p, cl_uint n,
                                     const cl_event *w, cl_event *e) {
  ENQUEUE("clEnqueueReadBuffer", clEnqueueReadBuffer(q, m, b, o, s, p, n, w, e));
}

cl_int ocl_fault_clEnqueueCopyBuffer(cl_command_queue q, cl_mem src,
                                     cl_mem dst, size_t so, size_t d_o,
                                     size_t s, cl_uint n, const cl_event *w,
                                     cl_event *e) {
  ENQUEUE("clEnqueueCopyBuffer",
          clEnqueueCopyBuffer(q, src, dst, so, d_o, s, n, w, e));
}

cl_int ocl_fault_clEnqueueFillBuffer(cl_command_queue q, cl_mem m,
                                     const void *p, size_t ps, size_t o,
                                     size_t s, cl_uint n, const cl_event *w,
                                     cl_event *e) {
  ENQUEUE("clEnqueueFillBuffer", clEnqueueFillBuffer(q, m, p, ps, o, s, n, w, e));
}

cl_int ocl_fault_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m,
                                         void *p, cl_uint n, const cl_event *w,
                                         cl_event *e) {
  ENQUEUE("clEnqueueUnmapMemObject", clEnqueueUnmapMemObject(q, m, p, n, w, e));
}

cl_int ocl_fault_clEnqueueNativeKernel(cl_command_queue q,
                                      void(CL_CALLBACK *fn)(void *),
                                      void *args, size_t size, cl_uint n_mem,
                                      const cl_mem *mem, const void **loc,
                                      cl_uint n, const cl_event *w,
                                      cl_event *e) {
  ENQUEUE("clEnqueueNativeKernel",
          clEnqueueNativeKernel(q, fn, args, size, n_mem, mem, loc, n, w, e));
}

int ocl_fault_library_call_fails(const char *call) {
  return should_fail(call);
}

cl_int ocl_fault_clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n,
                                             const cl_event *w, cl_event *e) {
  ENQUEUE("clEnqueueMarkerWithWaitList", clEnqueueMarkerWithWaitList(q, n, w, e));
}

cl_int ocl_fault_clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n,
                                              const cl_event *w, cl_event *e) {
  ENQUEUE("clEnqueueBarrierWithWaitList",
          clEnqueueBarrierWithWaitList(q, n, w, e));
}

cl_int ocl_fault_clFinish(cl_command_queue q) {
  FAIL_CALL("clFinish", CL_OUT_OF_RESOURCES);
  return clFinish(q);
}

cl_int ocl_fault_clFlush(cl_command_queue q) {
  FAIL_CALL("clFlush", CL_OUT_OF_RESOURCES);
  return clFlush(q);
}

cl_int ocl_fault_clWaitForEvents(cl_uint n, const cl_event *w) {
  FAIL_CALL("clWaitForEvents", CL_OUT_OF_RESOURCES);
  return clWaitForEvents(n, w);
}

cl_int ocl_fault_clSetUserEventStatus(cl_event e, cl_int s) {
  FAIL_CALL("clSetUserEventStatus", CL_OUT_OF_RESOURCES);
  return clSetUserEventStatus(e, s);
}

cl_int ocl_fault_clSetEventCallback(cl_event e, cl_int type,
                                    void(CL_CALLBACK *fn)(cl_event, cl_int,
                                                          void *),
                                    void *arg) {
  FAIL_CALL("clSetEventCallback", CL_OUT_OF_HOST_MEMORY);
  return clSetEventCallback(e, type, fn, arg);
}

/* ---- Releases and retains: counted, never failed ------------------------ */

#define COUNTED(counter, delta, call)             \
  do {                                            \
    cl_int err_ = (call);                         \
    if (err_ == CL_SUCCESS) count(&fi.stats.counter, (delta)); \
    return err_;                                  \
  } while (0)

cl_int ocl_fault_clReleaseMemObject(cl_mem m) {
  COUNTED(live_mem, -1, clReleaseMemObject(m));
}
cl_int ocl_fault_clReleaseEvent(cl_event e) {
  COUNTED(live_events, -1, clReleaseEvent(e));
}
cl_int ocl_fault_clRetainEvent(cl_event e) {
  COUNTED(live_events, 1, clRetainEvent(e));
}
cl_int ocl_fault_clReleaseCommandQueue(cl_command_queue q) {
  COUNTED(live_queues, -1, clReleaseCommandQueue(q));
}
cl_int ocl_fault_clRetainCommandQueue(cl_command_queue q) {
  COUNTED(live_queues, 1, clRetainCommandQueue(q));
}
cl_int ocl_fault_clReleaseKernel(cl_kernel k) {
  COUNTED(live_kernels, -1, clReleaseKernel(k));
}
cl_int ocl_fault_clReleaseProgram(cl_program p) {
  COUNTED(live_programs, -1, clReleaseProgram(p));
}
