/* The runtime layer: everything a kernel family sees of the device.
 *
 * A family describes its OpenCL programs (struct ocl_program, static) and,
 * when TensorFlow creates a kernel instance, names the cl_kernels it will
 * launch (struct ocl_kernel, in the instance). The first launch of each
 * resolves it to a per-context kernel slot (program built once per
 * context, cl_kernel created once, work-group limits read from the built
 * kernel); later launches find the slot with one atomic load: no string
 * formatting, no lookup by name, no allocation on the hot path.
 *
 * A compute call runs inside one struct ocl_op: its status, the inputs,
 * outputs and temps it created (deleted at the end), and, once asked for,
 * the device, stream and queue. Families never see struct ocl_device or a
 * stream: they bind tensors, launch, copy and fill through this header,
 * and choose kernel shapes from struct ocl_device_info. */
#ifndef TFOCL_KERNELS_RUNTIME_H_
#define TFOCL_KERNELS_RUNTIME_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

#include "config.h"
#include "device_info.h"
#include "shape.h"
#include "status_format.h"
#include "tensorflow/c/kernels.h"
#include "tf_api.h"

/* The one device type this plugin registers kernels for. */
#define OCL_RUNTIME_DEVICE_TYPE "OPENCL"

/* ---- Programs and kernels ------------------------------------------------ */

/* One OpenCL program: a family's source built with one set of options.
 * Static; `name` keys the per-context program cache and names the program
 * in build errors. */
struct ocl_program {
  const char *name;
  const char *source;
  const char *build_options; /* may be NULL */
};

/* Every static program table is marked OCL_PROGRAM_TABLE (on the line
 * before its definition): the tables land in one section, where the
 * plugin finds a program by name and options alone. A second process
 * builds the programs its device used in earlier ones before its kernels
 * ask (plugin/program_cache.c), and only ever programs of these tables: a
 * name read from the cache directory selects one, it never brings source
 * of its own. The compiler may align a table further than its elements:
 * zeros then sit between two tables (plugin/program_table.c steps over
 * them). */
#define OCL_PROGRAM_TABLE __attribute__((used, section("ocl_programs")))

struct ocl_kernel_slot; /* runtime.c: one cl_kernel of one context */

/* A cl_kernel a kernel instance launches: set up at create time
 * (ocl_kernel_init), resolved at its first launch. */
#define OCL_KERNEL_NAME_MAX 64
struct ocl_kernel {
  const struct ocl_program *program;
  char name[OCL_KERNEL_NAME_MAX];
  /* The slot of the context it was first launched in. */
  _Atomic(struct ocl_kernel_slot *) slot;
};

/* Names kernel `name` of `program` (not a hot path: create time). False if
 * the name does not fit. */
bool ocl_kernel_init(struct ocl_kernel *kernel,
                     const struct ocl_program *program, const char *name);
bool ocl_kernel_initf(struct ocl_kernel *kernel,
                      const struct ocl_program *program, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- Program variants ------------------------------------------------------ */

/* The typed families (binary, unary, reduce) build one program per storage
 * type. int32 never reaches the device there: as in TensorFlow's GPU
 * kernels, its arguments live in host memory and the host computes. */
enum ocl_storage {
  OCL_STORAGE_FLOAT,
  OCL_STORAGE_HALF, /* stored as half, computed in float */
  OCL_STORAGE_LONG,
  OCL_STORAGE_BOOL, /* uchar 0/1 */
  /* Built only where a kernel is asked for on it, so only on devices with
   * cl_khr_fp64 (ocl_register_kernel leaves float64 to the CPU elsewhere);
   * a family without float64 kernels never builds its double program. */
  OCL_STORAGE_DOUBLE,
  OCL_NUM_STORAGES,
  OCL_STORAGE_HOST_INT32 = OCL_NUM_STORAGES
};

enum ocl_storage ocl_storage_of(TF_DataType dtype);

/* The programs of a typed family, indexed by enum ocl_storage. */
#define OCL_TYPED_PROGRAMS(name, source) \
  { \
    [OCL_STORAGE_FLOAT] = {name "_float", source, "-DT=float -DT_IS_FLOAT"}, \
    [OCL_STORAGE_HALF] = {name "_half", source, "-DT=half -DT_IS_HALF"}, \
    [OCL_STORAGE_LONG] = {name "_long", source, "-DT=long -DT_IS_LONG"}, \
    [OCL_STORAGE_BOOL] = {name "_bool", source, "-DT=uchar -DT_IS_BOOL"}, \
    [OCL_STORAGE_DOUBLE] = {name "_double", source, \
                            "-DT=double -DT_IS_DOUBLE"}, \
  }

/* Families that only move bytes (movement, gather) build one program per
 * element size, so every dtype of that size shares it. */
#define OCL_SIZED_PROGRAMS(name, source)                   \
  {                                                        \
    {name "_1", source, "-DT=uchar -DELEM_SIZE=1"},        \
    {name "_2", source, "-DT=ushort -DELEM_SIZE=2"},       \
    {name "_4", source, "-DT=uint -DELEM_SIZE=4"},         \
    {name "_8", source, "-DT=ulong -DELEM_SIZE=8"},        \
  }

/* The program of OCL_SIZED_PROGRAMS for dtype's element size; NULL for a
 * size they do not cover. */
const struct ocl_program *ocl_sized_program(const struct ocl_program programs[4],
                                            TF_DataType dtype);

/* ---- One compute call ------------------------------------------------------ */

struct ocl_device;
struct SP_Stream_st;

/* Tensors an op may own at once (inputs, outputs, temps); ops with more
 * inputs (AddN, ConcatV2 of many) delete them as they go. */
#define OCL_OP_MAX_OWNED 24

struct ocl_op {
  TF_OpKernelContext *ctx;
  TF_Status *status; /* owned */
  /* Set by ocl_op_device(), else NULL. */
  struct ocl_device *device;
  struct SP_Stream_st *stream;
  cl_command_queue queue;
  const struct ocl_device_info *info;
  int num_owned;
  TF_Tensor *owned[OCL_OP_MAX_OWNED];
};

/* Starts a compute call (a fresh status). */
void ocl_op_begin(struct ocl_op *op, TF_OpKernelContext *ctx);
/* Ends it: deletes every tensor it owns, fails the op if the status is not
 * OK (TF_OpKernelContext_Failure), deletes the status. */
void ocl_op_end(struct ocl_op *op);
static inline bool ocl_op_ok(const struct ocl_op *op)
{
  return ocl_tf.GetCode(op->status) == TF_OK;
}
/* Fails the op with code + formatted message. Returns false, so that
 * `return ocl_op_fail(...)` reads as it should. */
bool ocl_op_fail(struct ocl_op *op, TF_Code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* *product = a * b for a dimension built from input values (Tile's
 * multiples, ...); false with TensorFlow's InvalidArgumentError where the
 * product overflows int64 (as MultiplyWithoutOverflow would say). */
bool ocl_op_dim_product(struct ocl_op *op, int64_t a, int64_t b,
                        int64_t *product);

/* Input i (owned by the op); NULL with the status set on failure. */
TF_Tensor *ocl_op_input(struct ocl_op *op, int index);
/* Output i, allocated (owned by the op); NULL with the status set. */
TF_Tensor *ocl_op_output(struct ocl_op *op, int index, TF_DataType dtype,
                         const int64_t *dims, int rank);
/* Output i as one of the `candidates` inputs' buffers when TensorFlow can
 * hand it over (an input no one else holds, of the output's type, size
 * and memory), else allocated (TF_ForwardInputOrAllocateOutput; plain
 * allocation on a TensorFlow without it). Element-wise kernels may write
 * their output over an input they read at the same index. Some graphs
 * require it (the collectives of tf.distribute's ring all-reduce): there
 * TensorFlow refuses a plain allocation. *forwarded: the input used, or
 * -1. */
TF_Tensor *ocl_op_output_forward(struct ocl_op *op, int index,
                                 const int *candidates, int num_candidates,
                                 const int64_t *dims, int rank,
                                 int *forwarded);
/* ocl_op_output_forward for a kernel holding the candidates' inputs:
 * held[c] is its TF_Tensor of input candidates[c] (from ocl_op_input). They
 * are released first (TensorFlow forwards no buffer a TF_Tensor still
 * references) and taken again after, so held[] is valid on success; NULL
 * with the status set otherwise. */
TF_Tensor *ocl_op_output_over_inputs(struct ocl_op *op, int index,
                                     TF_Tensor **held, const int *candidates,
                                     int num_candidates, const int64_t *dims,
                                     int rank, int *forwarded);
/* A 1-D device temp (owned by the op; TF_AllocateTemp). Temps may be
 * deleted as soon as the work using them is enqueued: later work on the
 * in-order stream reuses the memory only after it. */
TF_Tensor *ocl_op_temp(struct ocl_op *op, TF_DataType dtype,
                       int64_t elements);
/* Output i is `input` itself (TF_SetOutput shares the buffer). */
bool ocl_op_forward(struct ocl_op *op, int index, const TF_Tensor *input);
/* Gives up the op's ownership of `t` and deletes it now (an op with many
 * inputs, done with one). */
void ocl_op_release(struct ocl_op *op, TF_Tensor *t);
/* t's dims into dims[OCL_MAX_DIMS]; the rank, or -1 (UNIMPLEMENTED) when it
 * exceeds OCL_MAX_DIMS. */
int ocl_op_dims(struct ocl_op *op, const TF_Tensor *t, int64_t *dims);

/* The device side (stream, queue, device facts), found on first use. False
 * with the status set when the kernel's stream is not an OPENCL stream. */
bool ocl_op_device(struct ocl_op *op);
/* The device's facts (ocl_op_device first); NULL with the status set. */
const struct ocl_device_info *ocl_op_info(struct ocl_op *op);

/* ---- Kernel arguments ------------------------------------------------------ */

/* A tensor's data as (cl_mem, byte offset). */
struct ocl_buffer {
  cl_mem mem;
  size_t offset;
};

enum ocl_arg_kind {
  /* A tensor: two kernel arguments, its cl_mem and its data's byte offset
   * in it (ulong). Kernels address it with OCL_PTR() of common.clh. */
  OCL_ARG_TENSOR,
  OCL_ARG_BUFFER, /* the same two arguments, already resolved */
  OCL_ARG_INT,    /* int */
  OCL_ARG_LONG,   /* long */
  OCL_ARG_FLOAT,  /* float */
  OCL_ARG_LOCAL,  /* __local scratch of local_bytes */
  OCL_ARG_BYTES   /* any POD of `size` bytes (structs, vectors) */
};

struct ocl_arg {
  enum ocl_arg_kind kind;
  union {
    const TF_Tensor *tensor;
    struct ocl_buffer buffer;
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
#define OCL_BUF(b) ((struct ocl_arg){.kind = OCL_ARG_BUFFER, .v.buffer = (b)})
#define OCL_INT(x) ((struct ocl_arg){.kind = OCL_ARG_INT, .v.i = (int32_t)(x)})
#define OCL_LONG(x) \
  ((struct ocl_arg){.kind = OCL_ARG_LONG, .v.l = (int64_t)(x)})
#define OCL_FLOAT(x) \
  ((struct ocl_arg){.kind = OCL_ARG_FLOAT, .v.f = (float)(x)})
#define OCL_LOCAL(n) \
  ((struct ocl_arg){.kind = OCL_ARG_LOCAL, .v.local_bytes = (n)})
#define OCL_BYTES(p, n) \
  ((struct ocl_arg){.kind = OCL_ARG_BYTES, .v.bytes = {(p), (n)}})

/* Resolves bytes [byte_offset, byte_offset + bytes) of a device tensor. An
 * empty tensor (a host dummy pointer, contract 7) resolves to no buffer. */
bool ocl_op_buffer(struct ocl_op *op, const TF_Tensor *t, size_t byte_offset,
                   size_t bytes, struct ocl_buffer *buffer);

/* ---- Launching ---------------------------------------------------------- */

/* The most work-groups a launch has in NDRange dimensions 1 and 2: CUDA's
 * grid limit (65535), which NVIDIA's OpenCL inherits, on every device so
 * that the paths that respect it run everywhere. TFOCL_MAX_GROUPS_YZ (a
 * test hook) lowers it. ocl_launch splits a larger launch by global
 * offsets, which kernels that index by get_global_id(1|2) follow; kernels
 * that read get_group_id(1|2) (the tiled GEMM, conv's implicit GEMM) stay
 * within it themselves, launching blocks with a base of their own. */
size_t ocl_max_groups_yz(void);

/* Enqueues `kernel` over `global` work items. With a local size, the global
 * size is rounded up to a multiple of it (PoCL has no non-uniform
 * work-groups), so kernels bounds-check; a local size above what the built
 * kernel allows (CL_KERNEL_WORK_GROUP_SIZE) is an INTERNAL error: ask
 * ocl_kernel_max_local first. local NULL lets the driver choose. Degenerate
 * work (a zero global size) is skipped. False with the status set (CL
 * errors through the one CL-error path; a build failure carries the build
 * log). */
bool ocl_launch(struct ocl_op *op, struct ocl_kernel *kernel, cl_uint work_dim,
                const size_t *global, const size_t *local,
                const struct ocl_arg *args, int num_args);
/* One work item per element, in work-groups of the element-wise local size
 * (ocl_elementwise_local), capped by the kernel's limit. */
bool ocl_launch_1d(struct ocl_op *op, struct ocl_kernel *kernel, size_t n,
                   const struct ocl_arg *args, int num_args);
/* A flat element-wise kernel over n elements (OCL_FOR_FLAT's): a
 * work-item per element, or per run of OCL_FLAT_SPAN where the device
 * takes runs (ocl_device_info.flat_runs). */
bool ocl_launch_flat(struct ocl_op *op, struct ocl_kernel *kernel, size_t n,
                     const struct ocl_arg *args, int num_args);
/* n work-items of a heavy per-row kernel, one per work-group, so that even
 * a few rows spread over a CPU device's cores. */
bool ocl_launch_rows(struct ocl_op *op, struct ocl_kernel *kernel, size_t n,
                     const struct ocl_arg *args, int num_args);

/* n work-items of a light per-row kernel (rows of row_len elements), as
 * many rows to a work-group as make a few thousand elements while every
 * core still gets two groups. */
bool ocl_launch_row_groups(struct ocl_op *op, struct ocl_kernel *kernel,
                           size_t rows, int64_t row_len,
                           const struct ocl_arg *args, int num_args);
/* A row kernel of the CPU shape over padded collapsed dims [outer, mid,
 * inner] (dims[0] outermost): dimension 0 counts spans of a row, 1 and 2
 * are mid and outer; each work-item loops over its span of at most 4096
 * elements. The span's length is appended as the last argument
 * (args[num_args], which must be there to write). */
bool ocl_launch_spans(struct ocl_op *op, struct ocl_kernel *kernel,
                      const int64_t dims[3], struct ocl_arg *args,
                      int num_args);

/* Commands a family enqueues itself (a native kernel, a library's call)
 * show in a profile too: where ocl_op_profiling() holds, pass an event
 * pointer to the enqueue and hand the event to ocl_op_record, which takes
 * it over (named `name`, copied). */
bool ocl_op_profiling(void);
void ocl_op_record(struct ocl_op *op, cl_event event, const char *name);

/* A host function run in stream order over `count` buffer ranges mapped
 * into host memory (on a CPU device its memory is host memory: no copy),
 * as an OpenCL native kernel; only where the device has
 * CL_EXEC_NATIVE_KERNEL. Each range's mapped pointer is written to
 * *host_ptr, which points into `args`, before the driver copies `args`
 * (args_size bytes) for `fn`. Every range is unmapped again behind it,
 * whatever failed. `name` labels it in a profile. */
struct ocl_host_range {
  struct ocl_buffer buffer;
  size_t bytes;
  cl_map_flags flags;
  void **host_ptr;
};
bool ocl_op_host_task(struct ocl_op *op, const char *name,
                      void (*fn)(void *args), void *args, size_t args_size,
                      const struct ocl_host_range *ranges, int count);
/* The op's queue, for a library that enqueues on it itself (CLBlast):
 * NULL with the status set where the device is gone or, in a
 * fault-injection build, where `call` is to fail as an injected fault, so
 * that library calls are among the failures the fault tests reach. */
cl_command_queue ocl_op_library_queue(struct ocl_op *op, const char *call);
/* The OpenCL device the op runs on (for queries: name, driver,
 * capabilities); NULL with the status set. */
cl_device_id ocl_op_device_id(struct ocl_op *op);

/* Blocks the calling thread until everything enqueued on the op's stream
 * has run, without spinning a core (clFinish does on NVIDIA's OpenCL: the
 * plugin's host waits, event.c). For measurements (gemm_tune.c), never in
 * an op's ordinary path. False if the wait or the work failed (the op's
 * status untouched). */
bool ocl_op_finish(struct ocl_op *op);

/* The largest work-group `kernel` can run with on this device (its
 * CL_KERNEL_WORK_GROUP_SIZE: registers and local memory limit it below the
 * device's maximum); 0 with the status set if it cannot be built. */
size_t ocl_kernel_max_local(struct ocl_op *op, struct ocl_kernel *kernel);
/* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE (the SIMD width: 32 on
 * NVIDIA); 0 with the status set. */
size_t ocl_kernel_preferred_multiple(struct ocl_op *op,
                                     struct ocl_kernel *kernel);
/* The largest power of two <= wanted that `kernel` can run with. */
size_t ocl_kernel_fit_local(struct ocl_op *op, struct ocl_kernel *kernel,
                            size_t wanted);
/* The element-wise local size: fixed per device (256, or the device's
 * maximum if smaller), because PoCL compiles a kernel again for each new
 * local size. */
size_t ocl_elementwise_local(const struct ocl_device_info *info);

/* ---- Copies and fills ------------------------------------------------------ */

/* bytes from src at src_offset to dst at dst_offset (bytes), in stream
 * order. */
bool ocl_op_copy(struct ocl_op *op, const TF_Tensor *src, size_t src_offset,
                 TF_Tensor *dst, size_t dst_offset, size_t bytes);
/* bytes of src from offset into host memory dst, once the stream's work
 * before it is done: the host waits (ops whose output shape depends on
 * values the device computes, such as Where's count, as TensorFlow's GPU
 * kernels wait there too). */
bool ocl_op_read(struct ocl_op *op, const TF_Tensor *src, size_t offset,
                 void *dst, size_t bytes);
/* The `pattern_size`-byte pattern repeated over bytes [offset,
 * offset + bytes) of t (clEnqueueFillBuffer: sizes a power of two up to
 * 128, offsets and bytes multiples of it). */
bool ocl_op_fill(struct ocl_op *op, TF_Tensor *t, size_t offset,
                 const void *pattern, size_t pattern_size, size_t bytes);

/* ---- Host-memory tensors ---------------------------------------------------- */

/* The data of a host-memory tensor (int32 kernels, shape arguments). */
static inline void *ocl_host_data(const TF_Tensor *tensor)
{
  return ocl_tf.TensorData(tensor);
}
/* Element i of a host-memory tensor of any integer dtype, int8 to uint64:
 * shape, axis and index arguments (TensorFlow lets StridedSlice's Index be
 * int16 and SplitV's Tlen int8, so a kernel that does not constrain the
 * attribute must read every width). 0 for a non-integer dtype, which
 * ocl_is_integer_type tells apart. */
int64_t ocl_host_int(const TF_Tensor *tensor, int64_t i);
bool ocl_is_integer_type(TF_DataType dtype);

/* ---- Kernel construction ---------------------------------------------------- */

/* Ends a failed create call: fails the construction with `status`
 * (TF_OpKernelConstruction_Failure), deletes the status, frees `kernel`
 * (may be NULL) and returns NULL for the create function to return. */
void *ocl_create_failed(TF_OpKernelConstruction *ctx, TF_Status *status,
                        void *kernel);

/* String attribute `name` into buf (terminated, at most len - 1 bytes);
 * false with the status set (UNIMPLEMENTED on a TensorFlow whose C API
 * lacks string attributes). */
bool ocl_string_attr(TF_OpKernelConstruction *ctx, const char *name, char *buf,
                     size_t len, TF_Status *status);

/* The fused_ops of TensorFlow's _FusedMatMul and _FusedConv2D where they
 * are "BiasAdd" alone (returns 0) or "BiasAdd" and activations[i]
 * (returns i + 1, so a family lists its names in the order of its
 * activation enum after its "none"); anything else is TensorFlow's
 * "Fusion is not implemented" (UNIMPLEMENTED) and returns -1 with the
 * status set. `what` names the op in TensorFlow's messages ("Fused
 * MatMul"). */
int ocl_fused_activation_attr(TF_OpKernelConstruction *ctx, const char *what,
                              const char *const *activations,
                              int num_activations, TF_Status *status);

/* ---- Registration ------------------------------------------------------------ */

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
  /* Only for nodes whose "_kernel" attribute says this (TensorFlow's kernel
   * labels); NULL for every node. Left unregistered where TensorFlow lacks
   * TF_KernelBuilder_Label. */
  const char *label;
};

/* The label of kernels that keep in host memory what the op's usual
 * kernel keeps on the device; the graph optimizer gives it to the nodes
 * whose operands and readers are on the host. */
#define OCL_HOST_KERNEL_LABEL "TfoclHost"

/* Builds the kernel, constrains it, marks its host-memory arguments and
 * registers it as "<op>_OPENCL[_<type>...]", one number per constrained
 * type. A failure is reported once and returns false. */
bool ocl_register_kernel(const struct ocl_kernel_spec *spec);

/* ---- Create thunks ------------------------------------------------------------ */

/* TF_NewKernelBuilder passes no user data to create functions, so a family
 * with a table of ops needs one create function per table entry.
 * OCL_FAMILY_CREATES(prefix, fn) defines
 *   static void *(*const prefix_creates[OCL_MAX_FAMILY_OPS])(
 *       TF_OpKernelConstruction *);
 * whose entry i calls fn(ctx, i), fn being a
 * void *(*)(TF_OpKernelConstruction *, int index). Each family
 * _Static_asserts that its table fits. (The indices are written out: pasting
 * digits together would make octal literals such as 08.) */
#define OCL_MAX_FAMILY_OPS 64

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
  OCL_CREATE_THUNKS4_(prefix, fn, 48, 49, 50, 51)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 52, 53, 54, 55)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 56, 57, 58, 59)                      \
  OCL_CREATE_THUNKS4_(prefix, fn, 60, 61, 62, 63)                      \
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
      prefix##_create_48, prefix##_create_49, prefix##_create_50,      \
      prefix##_create_51, prefix##_create_52, prefix##_create_53,      \
      prefix##_create_54, prefix##_create_55, prefix##_create_56,      \
      prefix##_create_57, prefix##_create_58, prefix##_create_59,      \
      prefix##_create_60, prefix##_create_61, prefix##_create_62,      \
      prefix##_create_63,                                              \
  }

#endif /* TFOCL_KERNELS_RUNTIME_H_ */
