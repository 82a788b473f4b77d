/* tfocl host shim: TensorFlow's core side of the PluggableDevice ABI, in C.
 *
 * libtfocl_host loads any PluggableDevice plugin (SE_InitPlugin and/or
 * TF_InitKernel), validates its tables as TensorFlow does (same checks and
 * messages, but a TF_Status instead of an abort), opens its devices and
 * streams, and runs its registered kernels:
 *
 *     op name + attributes + input tensors -> output tensors
 *
 * It also exports the TF_* kernel C API (tensorflow/c/kernels.h,
 * tf_tensor.h, tf_status.h) that a plugin calls back into.
 *
 * Conventions: every function taking a TF_Status sets it (TF_OK on success)
 * and leaves its outputs untouched on failure. Destroy functions accept NULL.
 * Objects are safe to use from several threads unless noted. */
#ifndef TFOCL_HOST_H_
#define TFOCL_HOST_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/experimental/grappler/grappler.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFOCL_HOST_EXPORT TF_CAPI_EXPORT

/* The TensorFlow release whose core behaviour the shim reproduces. */
#define TFOCL_HOST_TF_VERSION "2.21.0"

/* ---- Plugins ------------------------------------------------------------ */

/* A loaded and validated PluggableDevice plugin. */
struct tfocl_plugin;

/* dlopen()s `path` and initialises it as TensorFlow's
 * RegisterPluggableDevicePlugin does: SE_InitPlugin (if exported) with
 * zeroed, struct_size-stamped tables, validation, create_device_fns,
 * create_stream_executor, validation, then TF_InitKernel (if exported).
 * Kernels registered during TF_InitKernel belong to this plugin.
 * On any failure returns NULL with the code and message TensorFlow would
 * give, after undoing what was done; it never aborts. */
TFOCL_HOST_EXPORT struct tfocl_plugin *tfocl_plugin_load(const char *path,
                                                        TF_Status *status);
/* Reverse of load: unregisters the plugin's kernels, calls every destroy
 * callback in TensorFlow's order (destroy_device_fns,
 * destroy_stream_executor, destroy_timer_fns, destroy_platform,
 * destroy_platform_fns) and dlclose()s it, unless TFOCL_NO_DLCLOSE=1 (keeps
 * leak reports symbolised). All devices must be closed first. */
TFOCL_HOST_EXPORT void tfocl_plugin_unload(struct tfocl_plugin *plugin);

TFOCL_HOST_EXPORT const char *tfocl_plugin_path(const struct tfocl_plugin *p);
/* False for a kernels-only plugin (no SE_InitPlugin): it has no devices. */
TFOCL_HOST_EXPORT bool tfocl_plugin_has_devices(const struct tfocl_plugin *p);
/* The host's copies of the plugin's tables (NULL without SE_InitPlugin). */
TFOCL_HOST_EXPORT const SP_Platform *tfocl_plugin_platform(
    const struct tfocl_plugin *p);
TFOCL_HOST_EXPORT const SP_PlatformFns *tfocl_plugin_platform_fns(
    const struct tfocl_plugin *p);
TFOCL_HOST_EXPORT const SP_DeviceFns *tfocl_plugin_device_fns(
    const struct tfocl_plugin *p);
TFOCL_HOST_EXPORT const SP_StreamExecutor *tfocl_plugin_stream_executor(
    const struct tfocl_plugin *p);
/* get_device_count; 0 for a plugin without devices. */
TFOCL_HOST_EXPORT int tfocl_plugin_device_count(struct tfocl_plugin *p,
                                                TF_Status *status);

/* ---- Graph optimizers --------------------------------------------------- */

/* A plugin that exports TF_InitGraph registers a graph optimizer at load,
 * after TF_InitKernel, as in TensorFlow (InitGraphPlugin): stamped
 * TP_OptimizerRegistrationParams, TP_Optimizer and TP_OptimizerConfigs,
 * TensorFlow's validation and messages, and one optimizer per device type
 * (a second one for a type fails the load with ALREADY_EXISTS where
 * TensorFlow aborts). A failing TF_InitGraph fails the load. */

/* The device type the plugin's optimizer registered for; NULL without
 * one. */
TFOCL_HOST_EXPORT const char *tfocl_plugin_graph_device_type(
    const struct tfocl_plugin *p);
/* The TP_OptimizerConfigs the plugin filled; false without an optimizer. */
TFOCL_HOST_EXPORT bool tfocl_plugin_graph_configs(
    const struct tfocl_plugin *p, TP_OptimizerConfigs *configs);

/* What Grappler's GrapplerItem tells an optimizer besides the graph: the
 * fetch nodes ("name" or "name:port"), and more nodes to preserve (feeds,
 * keep ops, init ops). The nodes to preserve a plugin sees are the fetch
 * nodes' names and these, each once, as in GrapplerItem::NodesToPreserve. */
struct tfocl_graph_item {
  const char *const *fetch;
  int num_fetch;
  const char *const *preserve;
  int num_preserve;
};

/* Runs the plugin's optimizer on a serialized GraphDef as Grappler's
 * CGraphOptimizer does: create_func, optimize_func with the graph and the
 * item, destroy_func. On success *out (free with tfocl_graph_free) holds
 * the *out_size bytes the optimizer wrote; the status is the optimizer's
 * (TensorFlow keeps its graph when it is not OK). `item` may be NULL. */
TFOCL_HOST_EXPORT void tfocl_graph_optimize(struct tfocl_plugin *p,
                                            const void *graph, size_t size,
                                            const struct tfocl_graph_item *item,
                                            void **out, size_t *out_size,
                                            TF_Status *status);
TFOCL_HOST_EXPORT void tfocl_graph_free(void *graph);

/* A plugin that exports TF_InitProfiler registers its profiler at load,
 * after its graph optimizer, as in TensorFlow (InitPluginProfiler: stamped
 * tables, TensorFlow's validation; a failing one fails the load). The
 * device type it profiles, or NULL without one. */
TFOCL_HOST_EXPORT const char *tfocl_plugin_profiler_device_type(
    const struct tfocl_plugin *p);
/* A profile, as TensorFlow takes one: start, ... , stop, then collect: the
 * serialized XSpace (tsl/profiler/protobuf/xplane.proto) in *out (free
 * with free()), *size bytes. FAILED_PRECONDITION without a profiler. */
TFOCL_HOST_EXPORT void tfocl_profiler_start(struct tfocl_plugin *p,
                                            TF_Status *status);
TFOCL_HOST_EXPORT void tfocl_profiler_stop(struct tfocl_plugin *p,
                                           TF_Status *status);
TFOCL_HOST_EXPORT void tfocl_profiler_collect(struct tfocl_plugin *p,
                                              void **out, size_t *size,
                                              TF_Status *status);

/* ---- Devices ------------------------------------------------------------ */

/* The streams TensorFlow's PluggableDevice creates for each device. */
enum tfocl_stream_role {
  TFOCL_STREAM_COMPUTE,
  TFOCL_STREAM_HOST_TO_DEVICE,
  TFOCL_STREAM_DEVICE_TO_HOST,
  TFOCL_STREAM_DEVICE_TO_DEVICE,
  TFOCL_STREAM_ROLE_COUNT
};

/* One opened device: its SP_Device and its streams. */
struct tfocl_device;

/* create_device(ordinal), validation, device_memory_usage (must return
 * true, as in TensorFlow), then one stream per role. */
TFOCL_HOST_EXPORT struct tfocl_device *tfocl_device_open(
    struct tfocl_plugin *plugin, int ordinal, TF_Status *status);
/* Synchronises, destroys the streams, then destroy_device. */
TFOCL_HOST_EXPORT void tfocl_device_close(struct tfocl_device *device);
/* As TensorFlow's BFC allocator, which TensorFlow puts over a platform that
 * asks for it (SP_Platform.use_bfc_allocator): a tensor's freed device
 * memory is kept (up to 32 blocks) and handed out again, in stream order,
 * to an allocation of the same size, instead of a deallocate() and an
 * allocate() per tensor. Off by default (every tensor its own allocate(),
 * as the Check suites want). Returns whether it is on: never for a
 * platform without use_bfc_allocator. Off releases what was kept; so does
 * an allocation that fails, before it tries again. */
TFOCL_HOST_EXPORT bool tfocl_device_keep_freed_memory(
    struct tfocl_device *device, bool keep);
/* Every device output and temporary a kernel allocates (TF_AllocateOutput,
 * TF_AllocateTemp) is filled with 0xff bytes on the compute stream before
 * the kernel's own work: NaN in a floating-point tensor, -1 in an integer
 * one, so that a kernel leaving elements of its output unwritten, or
 * reading a temporary it did not write, fails a comparison, where fresh
 * memory would have read as zeros. TensorFlow's allocator hands out memory
 * that held other tensors. Off by default. */
TFOCL_HOST_EXPORT void tfocl_device_poison_outputs(struct tfocl_device *device,
                                                   bool poison);
TFOCL_HOST_EXPORT struct tfocl_plugin *tfocl_device_plugin(
    const struct tfocl_device *device);
TFOCL_HOST_EXPORT const SP_Device *tfocl_device_sp(
    const struct tfocl_device *device);
TFOCL_HOST_EXPORT SP_Stream tfocl_device_stream(
    const struct tfocl_device *device, enum tfocl_stream_role role);
/* The platform's device type, e.g. "OPENCL". */
TFOCL_HOST_EXPORT const char *tfocl_device_type(
    const struct tfocl_device *device);
/* synchronize_all_activity, then get_stream_status of every stream. */
TFOCL_HOST_EXPORT void tfocl_device_synchronize(struct tfocl_device *device,
                                                TF_Status *status);

/* ---- Tensors ------------------------------------------------------------ */

/* A device tensor from the device's allocator (one allocate() per tensor,
 * as TensorFlow's simple allocator; 0 elements get a host dummy pointer and
 * no allocation, as in TensorFlow). Contents undefined. */
TFOCL_HOST_EXPORT TF_Tensor *tfocl_tensor_alloc_device(
    struct tfocl_device *device, TF_DataType dtype, const int64_t *dims,
    int num_dims, TF_Status *status);
/* True if the tensor's data is device memory (of any device). */
TFOCL_HOST_EXPORT bool tfocl_tensor_on_device(const TF_Tensor *tensor);
/* The device a device tensor belongs to, NULL for host tensors. */
TFOCL_HOST_EXPORT struct tfocl_device *tfocl_tensor_device(
    const TF_Tensor *tensor);
/* A new tensor sharing `tensor`'s buffer from byte_offset on, with another
 * type and shape (as Tensor::Slice or a sub-buffer in TensorFlow): its
 * TF_TensorData is an interior pointer. Fails if it would not fit. */
TFOCL_HOST_EXPORT TF_Tensor *tfocl_tensor_view(const TF_Tensor *tensor,
                                               size_t byte_offset,
                                               TF_DataType dtype,
                                               const int64_t *dims,
                                               int num_dims,
                                               TF_Status *status);
/* Host -> device copy through memcpy_htod on the host-to-device stream
 * (after create_stream_dependency on the compute stream), waited for with an
 * event as TensorFlow's EventMgr does. A device tensor is copied device to
 * device. */
TFOCL_HOST_EXPORT TF_Tensor *tfocl_tensor_to_device(
    struct tfocl_device *device, const TF_Tensor *tensor, TF_Status *status);
/* Device -> host copy through memcpy_dtoh on the device-to-host stream,
 * after the compute stream's work; a host tensor gives a new reference. */
TFOCL_HOST_EXPORT TF_Tensor *tfocl_tensor_to_host(const TF_Tensor *tensor,
                                                  TF_Status *status);

/* ---- Attributes --------------------------------------------------------- */

enum tfocl_attr_kind {
  TFOCL_ATTR_INT,
  TFOCL_ATTR_FLOAT,
  TFOCL_ATTR_BOOL,
  TFOCL_ATTR_TYPE,
  TFOCL_ATTR_STRING,
  TFOCL_ATTR_SHAPE,
  TFOCL_ATTR_INT_LIST,
  TFOCL_ATTR_FLOAT_LIST,
  TFOCL_ATTR_BOOL_LIST,
  TFOCL_ATTR_TYPE_LIST,
  TFOCL_ATTR_STRING_LIST,
  TFOCL_ATTR_SHAPE_LIST
};

struct tfocl_shape {
  const int64_t *dims;
  int num_dims; /* -1: unknown rank */
};

/* A node attribute. Arrays are borrowed for the duration of the call that
 * receives them (the shim copies what it keeps). */
struct tfocl_attr {
  const char *name;
  enum tfocl_attr_kind kind;
  union {
    int64_t i;
    float f;
    bool b;
    TF_DataType type;
    const char *s;
    struct tfocl_shape shape;
    struct { const int64_t *items; int count; } ints;
    struct { const float *items; int count; } floats;
    struct { const bool *items; int count; } bools;
    struct { const TF_DataType *items; int count; } types;
    struct { const char *const *items; int count; } strings;
    struct { const struct tfocl_shape *items; int count; } shapes;
  } value;
};

#define TFOCL_ATTR_I(n, v) \
  ((struct tfocl_attr){.name = (n), .kind = TFOCL_ATTR_INT, .value.i = (v)})
#define TFOCL_ATTR_F(n, v) \
  ((struct tfocl_attr){.name = (n), .kind = TFOCL_ATTR_FLOAT, .value.f = (v)})
#define TFOCL_ATTR_B(n, v) \
  ((struct tfocl_attr){.name = (n), .kind = TFOCL_ATTR_BOOL, .value.b = (v)})
#define TFOCL_ATTR_T(n, v) \
  ((struct tfocl_attr){.name = (n), .kind = TFOCL_ATTR_TYPE, .value.type = (v)})
#define TFOCL_ATTR_S(n, v) \
  ((struct tfocl_attr){.name = (n), .kind = TFOCL_ATTR_STRING, .value.s = (v)})

/* ---- Op definitions ----------------------------------------------------- */

/* The shim knows ops by a signature in TensorFlow's REGISTER_OP notation:
 *   inputs  "x: T, y: T"      or "values: N * T, axis: Tidx" or "a: int32"
 *   outputs "z: T"            or "output: num * T"
 *   attrs   "T: type, N: int, keep_dims: bool = false, Tidx: type = int32"
 * Attribute values not given to a run are inferred from input types
 * (T, N) or taken from the default. Built-in definitions cover every op the
 * project's kernels implement; this adds more (tests, other plugins).
 * INVALID_ARGUMENT on a malformed signature, ALREADY_EXISTS on a clash. */
TFOCL_HOST_EXPORT void tfocl_op_def_add(const char *op_name,
                                        const char *inputs,
                                        const char *outputs, const char *attrs,
                                        TF_Status *status);
TFOCL_HOST_EXPORT bool tfocl_op_def_exists(const char *op_name);

/* Runs the shape function an op was registered with
 * (TF_OpDefinitionBuilderSetShapeInferenceFunction, tensorflow/c/ops.h) as
 * TensorFlow's shape inference does: attributes completed as for a run,
 * input shapes with num_dims -1 for an unknown rank and -1 for an unknown
 * dim. Output `output`'s shape goes to dims[max_dims] and *num_dims (-1:
 * unknown rank). NOT_FOUND for an op without one; the function's status
 * when it fails. tfocl_op_compute runs it too, after every successful run
 * of such an op, and fails with INTERNAL when it disagrees with the
 * kernel. */
TFOCL_HOST_EXPORT bool tfocl_infer_shape(
    const char *op_name, const struct tfocl_attr *attrs, int num_attrs,
    const TF_DataType *input_types, const struct tfocl_shape *input_shapes,
    int num_inputs, int output, int64_t *dims, int max_dims, int *num_dims,
    TF_Status *status);

/* ---- Running ops -------------------------------------------------------- */

/* A kernel instance for one node: op, attributes and input types fixed,
 * the kernel chosen as TensorFlow chooses it (device type, type
 * constraints, highest priority) and constructed (create_func). */
struct tfocl_op;

/* NOT_FOUND, with TensorFlow's wording, when no kernel matches;
 * construction failures (TF_OpKernelConstruction_Failure) as reported. */
TFOCL_HOST_EXPORT struct tfocl_op *tfocl_op_create(
    struct tfocl_device *device, const char *op_name,
    const struct tfocl_attr *attrs, int num_attrs,
    const TF_DataType *input_types, int num_inputs, TF_Status *status);
TFOCL_HOST_EXPORT void tfocl_op_destroy(struct tfocl_op *op);
TFOCL_HOST_EXPORT int tfocl_op_num_outputs(const struct tfocl_op *op);

/* Runs the kernel once (compute_func). Inputs may be host or device tensors:
 * each is copied to where the kernel declared it (device, or host for
 * HostMemory arguments). Outputs are new tensors where the kernel put them
 * (device unless HostMemory) and belong to the caller; the compute stream
 * may still be working on them (tfocl_tensor_to_host waits). Fails with the
 * status the kernel set through TF_OpKernelContext_Failure. */
TFOCL_HOST_EXPORT void tfocl_op_compute(struct tfocl_op *op,
                                        TF_Tensor *const *inputs,
                                        int num_inputs, TF_Tensor **outputs,
                                        int max_outputs, TF_Status *status);

/* create + compute + destroy. */
TFOCL_HOST_EXPORT void tfocl_run_op(struct tfocl_device *device,
                                    const char *op_name,
                                    const struct tfocl_attr *attrs,
                                    int num_attrs, TF_Tensor *const *inputs,
                                    int num_inputs, TF_Tensor **outputs,
                                    int max_outputs, int *num_outputs,
                                    TF_Status *status);

/* ---- Resource variables ------------------------------------------------- */

/* TensorFlow's resource variables (Var in framework/resource_var.h): a lock,
 * a device tensor, an initialized flag and the copy-on-read mode. A variable
 * is known by its handle: a scalar host tensor of dtype TF_RESOURCE, passed
 * as the `resource: resource` input of ops (AssignAddVariableOp,
 * ResourceApplyAdam, ...), which reach it through the kernels_experimental.h
 * functions the shim exports (TF_AssignUpdateVariable, ...). Handles are
 * TF_Tensors: copies share the variable, and the variable is destroyed when
 * the last reference to it goes (TF_DeleteTensor of the last handle, and
 * any kernel still holding its lock). The device must outlive its
 * variables.
 *
 * Semantics are TensorFlow's: an assignment shares a device value's buffer,
 * and an update copies the buffer first (copy on write) while anyone else
 * still references it, so values read earlier do not change.
 *
 * Errors: a variable never assigned fails reads and updates with
 * FAILED_PRECONDITION "Could not find variable <name>. ..." (TensorFlow 2
 * creates the variable at its first assignment); a non-handle tensor is
 * INVALID_ARGUMENT. */

/* A variable on `device` holding `initial_value` (host: copied to the
 * device; a device tensor of that device: shared). Returns its handle. */
TFOCL_HOST_EXPORT TF_Tensor *tfocl_variable_create(
    struct tfocl_device *device, const TF_Tensor *initial_value,
    TF_Status *status);
/* A handle to a variable that has no value yet (VarHandleOp without an
 * AssignVariableOp). */
TFOCL_HOST_EXPORT TF_Tensor *tfocl_variable_create_uninitialized(
    struct tfocl_device *device, TF_DataType dtype, TF_Status *status);
/* AssignVariableOp (validate_shape=false): a new value of the same dtype
 * (INVALID_ARGUMENT otherwise, once initialized), any shape. */
TFOCL_HOST_EXPORT void tfocl_variable_assign(const TF_Tensor *handle,
                                             const TF_Tensor *value,
                                             TF_Status *status);
/* The current value, copied to a new host tensor (waits for the device). */
TFOCL_HOST_EXPORT TF_Tensor *tfocl_variable_read(const TF_Tensor *handle,
                                                 TF_Status *status);
/* ReadVariableOp: the current value as a device tensor sharing the
 * variable's buffer (later updates copy before writing). */
TFOCL_HOST_EXPORT TF_Tensor *tfocl_variable_value(const TF_Tensor *handle,
                                                  TF_Status *status);
TFOCL_HOST_EXPORT bool tfocl_variable_is_initialized(const TF_Tensor *handle);
/* The name used in messages ("Variable_3"); NULL for a non-handle. */
TFOCL_HOST_EXPORT const char *tfocl_variable_name(const TF_Tensor *handle);

/* ---- Kernel registry ---------------------------------------------------- */

struct tfocl_type_constraint {
  const char *attr;
  const TF_DataType *types;
  int num_types;
};

/* One registered kernel, as TF_RegisterKernelBuilder recorded it. */
struct tfocl_kernel_info {
  const char *kernel_name;
  const char *op_name;
  const char *device_type;
  int32_t priority;
  const struct tfocl_type_constraint *constraints;
  int num_constraints;
  const char *const *host_memory_args;
  int num_host_memory_args;
};

/* Snapshot count / entry i, ordered by op name, then device type, then
 * registration order. Strings live until the owning plugin is unloaded. */
TFOCL_HOST_EXPORT int tfocl_kernel_count(void);
TFOCL_HOST_EXPORT bool tfocl_kernel_get(int index,
                                        struct tfocl_kernel_info *info);
/* Entry i's TF_KernelBuilder_Label: only nodes whose "_kernel" attribute
 * says it get that kernel. "" for none or a bad index. (Apart from
 * tfocl_kernel_info, whose size programs built earlier rely on.) */
TFOCL_HOST_EXPORT const char *tfocl_kernel_label(int index);

/* "DT_FLOAT" style name, as TensorFlow prints types; "DT_INVALID" if
 * unknown. And the reverse ("float", "DT_FLOAT", "f32" accepted); returns
 * false if unknown. */
TFOCL_HOST_EXPORT const char *tfocl_type_name(TF_DataType dtype);
TFOCL_HOST_EXPORT bool tfocl_type_from_name(const char *name,
                                            TF_DataType *dtype);

#ifdef __cplusplus
}
#endif

#endif /* TFOCL_HOST_H_ */
