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

/* ---- Program variants ---------------------------------------------------- */

/* The typed families (binary, unary, reduce) build one program per storage
 * type. int32 never reaches the device there: as in TensorFlow's GPU
 * kernels, its arguments live in host memory and the host computes. */
enum ocl_storage {
  OCL_STORAGE_FLOAT,
  OCL_STORAGE_HALF, /* stored as half, computed in float */
  OCL_STORAGE_LONG,
  OCL_STORAGE_BOOL, /* uchar 0/1 */
  OCL_NUM_STORAGES,
  OCL_STORAGE_HOST_INT32 = OCL_NUM_STORAGES
};

enum ocl_storage ocl_storage_of(TF_DataType dtype);

/* The four programs of a typed family, indexed by enum ocl_storage. */
#define OCL_TYPED_FAMILIES(name, source)                                 \
  {                                                                      \
    [OCL_STORAGE_FLOAT] = {name "_float", source, "-DT=float -DT_IS_FLOAT"}, \
    [OCL_STORAGE_HALF] = {name "_half", source, "-DT=half -DT_IS_HALF"},     \
    [OCL_STORAGE_LONG] = {name "_long", source, "-DT=long -DT_IS_LONG"},     \
    [OCL_STORAGE_BOOL] = {name "_bool", source, "-DT=uchar -DT_IS_BOOL"},    \
  }

/* Families that only move bytes (movement, gather) build one program per
 * element size, so every dtype of that size shares it. */
#define OCL_SIZED_FAMILIES(name, source)                   \
  {                                                        \
    {name "_1", source, "-DT=uchar -DELEM_SIZE=1"},        \
    {name "_2", source, "-DT=ushort -DELEM_SIZE=2"},       \
    {name "_4", source, "-DT=uint -DELEM_SIZE=4"},         \
    {name "_8", source, "-DT=ulong -DELEM_SIZE=8"},        \
  }

/* The program of OCL_SIZED_FAMILIES for dtype's element size; NULL for a
 * size they do not cover. */
const struct ocl_family *ocl_sized_family(const struct ocl_family families[4],
                                          TF_DataType dtype);

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
/* Ends a failed create call: fails the construction with `status`
 * (TF_OpKernelConstruction_Failure), deletes the status, frees `kernel`
 * (may be NULL) and returns NULL for the create function to return. */
void *ocl_create_failed(TF_OpKernelConstruction *ctx, TF_Status *status,
                        void *kernel);
/* A 1-D device temp of `elements` (TF_AllocateTemp), or NULL with the
 * status set (UNIMPLEMENTED on a TensorFlow without TF_AllocateTemp).
 * Temps may be deleted as soon as the work using them is enqueued: later
 * work on the in-order stream reuses the memory only after it
 * (TensorFlow's stream-ordered allocation). */
TF_Tensor *ocl_allocate_temp(const struct ocl_launch *launch,
                             TF_DataType dtype, int64_t elements,
                             TF_Status *status);
/* Element i of a host-memory tensor of any integer dtype, int8 to uint64:
 * shape, axis and index arguments (TensorFlow lets StridedSlice's Index be
 * int16 and SplitV's Tlen int8, so a kernel that does not constrain the
 * attribute must read every width). 0 for a non-integer dtype, which
 * ocl_is_integer_type tells apart. */
int64_t ocl_host_int(const TF_Tensor *tensor, int64_t i);
bool ocl_is_integer_type(TF_DataType dtype);

/* Element offset of a host pointer, for host-memory (int32) kernels. */
static inline void *ocl_host_data(const TF_Tensor *tensor)
{
  return ocl_tf.TensorData(tensor);
}

/* ---- Registration -------------------------------------------------------- */

/* Type-constrained attributes per kernel: enough for BatchMatMulV3's
 * Ta, Tb and Tout. */
#define OCL_MAX_TYPE_ATTRS 3

/* One kernel to register: op, create/compute/destroy, a type constraint
 * type_attrs[i] = types[i] for each attribute listed (the list ends at the
 * first NULL or after OCL_MAX_TYPE_ATTRS; none for ops without a type
 * attribute) and the arguments that live in host memory. */
struct ocl_kernel_spec {
  const char *op;
  void *(*create)(TF_OpKernelConstruction *);
  void (*compute)(void *, TF_OpKernelContext *);
  void (*destroy)(void *);
  const char *type_attrs[OCL_MAX_TYPE_ATTRS];
  TF_DataType types[OCL_MAX_TYPE_ATTRS];
  const char *const *host_args; /* NULL-terminated, or NULL for none */
};

/* Builds the kernel, constrains it, marks its host-memory arguments and
 * registers it (ocl_register_builder) as "<op>_OPENCL[_<type>...]", one
 * number per constrained type. A failure is reported (ocl_report_unusable)
 * and returns false. */
bool ocl_register_kernel(const struct ocl_kernel_spec *spec);

/* ---- Create thunks ------------------------------------------------------ */

/* TF_NewKernelBuilder passes no user data to create functions, so a family
 * with a table of ops needs one create function per table entry.
 * OCL_FAMILY_CREATES(prefix, fn) defines
 *   static void *(*const prefix_creates[OCL_MAX_FAMILY_OPS])(
 *       TF_OpKernelConstruction *);
 * whose entry i calls fn(ctx, i), fn being a
 * void *(*)(TF_OpKernelConstruction *, int index). Each family
 * _Static_asserts that its table fits. (The indices are written out: pasting
 * digits together would make octal literals such as 08.) */
#define OCL_MAX_FAMILY_OPS 48

#define OCL_CREATE_THUNK_(prefix, fn, i)                              \
  static void *prefix##_create_##i(TF_OpKernelConstruction *ctx)       \
  {                                                                    \
    return fn(ctx, i);                                                 \
  }
#define OCL_CREATE_THUNKS4_(prefix, fn, a, b, c, d)                   \
  OCL_CREATE_THUNK_(prefix, fn, a) OCL_CREATE_THUNK_(prefix, fn, b)    \
  OCL_CREATE_THUNK_(prefix, fn, c) OCL_CREATE_THUNK_(prefix, fn, d)
#define OCL_FAMILY_CREATES(prefix, fn)                                 \
  OCL_CREATE_THUNKS4_(prefix, fn, 0, 1, 2, 3)                          \
  OCL_CREATE_THUNKS4_(prefix, fn, 4, 5, 6, 7)                          \
  OCL_CREATE_THUNKS4_(prefix, fn, 8, 9, 10, 11)                        \
  OCL_CREATE_THUNKS4_(prefix, fn, 12, 13, 14, 15)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 16, 17, 18, 19)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 20, 21, 22, 23)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 24, 25, 26, 27)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 28, 29, 30, 31)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 32, 33, 34, 35)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 36, 37, 38, 39)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 40, 41, 42, 43)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 44, 45, 46, 47)                      \
  static void *(*const prefix##_creates[OCL_MAX_FAMILY_OPS])(          \
      TF_OpKernelConstruction *) = {                                   \
      prefix##_create_0, prefix##_create_1, prefix##_create_2,         \
      prefix##_create_3, prefix##_create_4, prefix##_create_5,         \
      prefix##_create_6, prefix##_create_7, prefix##_create_8,         \
      prefix##_create_9, prefix##_create_10, prefix##_create_11,       \
      prefix##_create_12, prefix##_create_13, prefix##_create_14,      \
      prefix##_create_15, prefix##_create_16, prefix##_create_17,      \
      prefix##_create_18, prefix##_create_19, prefix##_create_20,      \
      prefix##_create_21, prefix##_create_22, prefix##_create_23,      \
      prefix##_create_24, prefix##_create_25, prefix##_create_26,      \
      prefix##_create_27, prefix##_create_28, prefix##_create_29,      \
      prefix##_create_30, prefix##_create_31, prefix##_create_32,      \
      prefix##_create_33, prefix##_create_34, prefix##_create_35,      \
      prefix##_create_36, prefix##_create_37, prefix##_create_38,      \
      prefix##_create_39, prefix##_create_40, prefix##_create_41,      \
      prefix##_create_42, prefix##_create_43, prefix##_create_44,      \
      prefix##_create_45, prefix##_create_46, prefix##_create_47,      \
  }

/* Releases every cached cl_kernel (and with them their programs'
 * references). Called at platform teardown, before contexts go. */
void ocl_kernel_cache_clear(void);

#endif /* TFOCL_KERNELS_LAUNCH_H_ */
