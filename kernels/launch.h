/* From a TF_OpKernelContext to an enqueued OpenCL kernel.
 *
 * Every family uses this layer: it finds the compute stream's queue, builds
 * the family's program once per context (program cache), hands out
 * cl_kernel objects safely across threads, resolves tensor addresses to
 * (cl_mem, byte offset) pairs and enqueues without blocking. */
#ifndef TFOCL_KERNELS_LAUNCH_H_
#define TFOCL_KERNELS_LAUNCH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

#include "ocl.h"
#include "shape.h"
#include "status_format.h"
#include "tensorflow/c/kernels.h"

/* One kernel family's OpenCL program. */
struct ocl_family {
  const char *name;          /* "elementwise": the program cache key */
  const char *source;        /* embedded by embed_cl.py */
  const char *build_options; /* may be NULL */
};

/* The device side of one compute call. */
struct ocl_launch {
  TF_OpKernelContext *ctx;
  SP_Stream stream;
  struct ocl_device *device;
  cl_command_queue queue;
};

/* Fills `launch` from the kernel context's compute stream. */
bool ocl_launch_init(struct ocl_launch *launch, TF_OpKernelContext *ctx,
                     TF_Status *status);

enum ocl_arg_kind {
  /* A tensor: two kernel arguments, its cl_mem and its data's byte offset
   * in it (ulong). Kernels address it with OCL_PTR() of common.clh. */
  OCL_ARG_TENSOR,
  OCL_ARG_INT,   /* int */
  OCL_ARG_LONG,  /* long */
  OCL_ARG_FLOAT, /* float */
  OCL_ARG_LOCAL, /* __local scratch of local_bytes */
  OCL_ARG_BYTES  /* any POD of `size` bytes (structs, vectors) */
};

struct ocl_arg {
  enum ocl_arg_kind kind;
  union {
    const TF_Tensor *tensor;
    int32_t i;
    int64_t l;
    float f;
    size_t local_bytes;
    struct {
      const void *data;
      size_t size;
    } bytes;
  } v;
};

#define OCL_TENSOR(t) \
  ((struct ocl_arg){.kind = OCL_ARG_TENSOR, .v.tensor = (t)})
#define OCL_INT(x) ((struct ocl_arg){.kind = OCL_ARG_INT, .v.i = (int32_t)(x)})
#define OCL_LONG(x) \
  ((struct ocl_arg){.kind = OCL_ARG_LONG, .v.l = (int64_t)(x)})
#define OCL_FLOAT(x) \
  ((struct ocl_arg){.kind = OCL_ARG_FLOAT, .v.f = (float)(x)})
#define OCL_LOCAL(n) \
  ((struct ocl_arg){.kind = OCL_ARG_LOCAL, .v.local_bytes = (n)})
#define OCL_BYTES(p, n) \
  ((struct ocl_arg){.kind = OCL_ARG_BYTES, .v.bytes = {(p), (n)}})

/* Enqueues `kernel_name` of `family` over `global` work items. With a local
 * size, the global size is rounded up to a multiple of it (PoCL has no
 * non-uniform work-groups), so kernels bounds-check; local NULL lets the
 * driver choose. Returns false with the status set (CL errors through the
 * one CL-error path; a build failure carries the build log). */
bool ocl_enqueue(const struct ocl_launch *launch,
                 const struct ocl_family *family, const char *kernel_name,
                 cl_uint work_dim, const size_t *global, const size_t *local,
                 const struct ocl_arg *args, int num_args, TF_Status *status);

/* One work item per element, with the device's element-wise local size.
 * n == 0 enqueues nothing. */
bool ocl_enqueue_1d(const struct ocl_launch *launch,
                    const struct ocl_family *family, const char *kernel_name,
                    size_t n, const struct ocl_arg *args, int num_args,
                    TF_Status *status);

/* The local size ocl_enqueue_1d uses: fixed per device, because PoCL
 * compiles each kernel again for each new local size. */
size_t ocl_elementwise_local_size(const struct ocl_device *device);

/* ---- Compute-side helpers shared by the families ------------------------ */

/* TF_GetInput for inputs [0, n); on failure deletes what it got. */
bool ocl_get_inputs(TF_OpKernelContext *ctx, TF_Tensor **inputs, int n,
                    TF_Status *status);
/* TF_DeleteTensor on each (NULL entries skipped) and clears them. */
void ocl_delete_tensors(TF_Tensor **tensors, int n);
/* The tensor's dims into dims[OCL_MAX_DIMS]; returns the rank, or -1 with
 * UNIMPLEMENTED when it exceeds OCL_MAX_DIMS. */
int ocl_tensor_dims(const TF_Tensor *tensor, int64_t *dims, TF_Status *status);
/* Ends a compute call: a non-OK status fails the op
 * (TF_OpKernelContext_Failure); the status is deleted either way. */
void ocl_compute_done(TF_OpKernelContext *ctx, TF_Status *status);
/* Element offset of a host pointer, for host-memory (int32) kernels. */
static inline void *ocl_host_data(const TF_Tensor *tensor)
{
  return ocl_tf.TensorData(tensor);
}

/* Releases every cached cl_kernel (and with them their programs'
 * references). Called at platform teardown, before contexts go. */
void ocl_kernel_cache_clear(void);

#endif /* TFOCL_KERNELS_LAUNCH_H_ */
