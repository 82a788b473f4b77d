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
#include "runtime.h"
#include "shape.h"
#include "status_format.h"
#include "tensorflow/c/kernels.h"

/* The interface the families had before kernels/runtime.h, kept while they
 * move onto it: the same programs (struct ocl_family is struct
 * ocl_program), but kernels looked up by name at every launch. */
#define ocl_family ocl_program
#define OCL_TYPED_FAMILIES OCL_TYPED_PROGRAMS
#define OCL_SIZED_FAMILIES OCL_SIZED_PROGRAMS
#define ocl_sized_family ocl_sized_program

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

/* Reductions and softmax come in two shapes: a work-group per row, folding
 * in local memory (GPUs), or a work-item per row with explicit 16-wide
 * vectors (CPU devices such as PoCL, where a work-item is a thread and
 * vector types are what reach SIMD). True for the second: by device type,
 * unless TFOCL_KERNEL_STYLE=cpu|gpu says otherwise (tests run both). */
bool ocl_use_row_vector_kernels(const struct ocl_device *device);

/* Enqueues n work-items of a heavy per-row kernel (the vector shape above)
 * in small work-groups, so that even a few rows spread over the cores. */
bool ocl_enqueue_rows(const struct ocl_launch *launch,
                      const struct ocl_family *family, const char *kernel_name,
                      size_t n, const struct ocl_arg *args, int num_args,
                      TF_Status *status);

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
/* A 1-D device temp of `elements` (TF_AllocateTemp), or NULL with the
 * status set (UNIMPLEMENTED on a TensorFlow without TF_AllocateTemp).
 * Temps may be deleted as soon as the work using them is enqueued: later
 * work on the in-order stream reuses the memory only after it
 * (TensorFlow's stream-ordered allocation). */
TF_Tensor *ocl_allocate_temp(const struct ocl_launch *launch,
                             TF_DataType dtype, int64_t elements,
                             TF_Status *status);
/* Releases every cached cl_kernel (and with them their programs'
 * references). Called at platform teardown, before contexts go. */
void ocl_kernel_cache_clear(void);

/* The launch of runtime.c by program and kernel name (the slow path). */
bool ocl_launch_by_name(struct ocl_op *op, const struct ocl_program *program,
                        const char *name, cl_uint work_dim,
                        const size_t *global, const size_t *local,
                        const struct ocl_arg *args, int num_args);

#endif /* TFOCL_KERNELS_LAUNCH_H_ */
