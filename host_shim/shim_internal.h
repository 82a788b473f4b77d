/* Internal declarations of the host shim (libtfocl_host).
 *
 * Ownership, in one place:
 *   struct tfocl_plugin  owns the dlopen handle, the host's *copies* of the
 *                        plugin tables, and the list of its open devices.
 *   struct tfocl_device  owns its SP_Device (a stable address handed to every
 *                        SP_StreamExecutor call), its four streams and its
 *                        pool of reusable events.
 *   struct shim_buffer   one tensor allocation, refcounted; the last unref
 *                        frees host memory or calls the plugin's deallocate.
 *   struct shim_kernel   one TF_RegisterKernelBuilder entry, owned by the
 *                        global registry, tagged with the plugin that was
 *                        loading when it was registered.
 *   struct shim_op_def   one op signature, owned by the global op table.
 *   struct shim_variable one resource variable (variables.c), refcounted:
 *                        its handle tensors' buffer and its lock holders
 *                        reference it; it owns its device tensor. */
#ifndef TFOCL_SHIM_INTERNAL_H_
#define TFOCL_SHIM_INTERNAL_H_

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/experimental/grappler/grappler.h"
#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "tfocl/host.h"

/* Reads a trailing member only when the writer's struct_size covers it. */
#define SHIM_HAS_FIELD(p, TYPE, field) \
  ((p)->struct_size >= TF_OFFSET_OF_END(TYPE, field))

#define SHIM_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* TensorShape::kMaxDimensions. */
#define SHIM_MAX_DIMS 254
/* How the shim's errors for what TensorFlow would abort on begin (the
 * suites fail on them: a kernel must refuse such input itself). */
#define SHIM_TF_ABORTS "TensorFlow aborts the process here"

/* ---- status.c ----------------------------------------------------------- */
void shim_set_status(TF_Status *s, TF_Code code, const char *fmt, ...)
    SHIM_PRINTF(3, 4);
void shim_set_ok(TF_Status *s);
void shim_copy_status(TF_Status *dst, const TF_Status *src);
/* Prefixes the current message of a non-OK status with `prefix`. */
void shim_prefix_status(TF_Status *s, const char *prefix);
bool shim_ok(const TF_Status *s);
/* TFOCL_TRACE=1: one line per call on stderr; otherwise nothing. */
void shim_trace(const char *file, int line, const char *fmt, ...)
    SHIM_PRINTF(3, 4);
#define SHIM_TRACE(...) shim_trace(__FILE__, __LINE__, __VA_ARGS__)

/* ---- strbuf (status.c) ------------------------------------------------- */
/* A growable string; `data` is always NUL-terminated (or NULL when empty). */
struct shim_strbuf {
  char *data;
  size_t len;
  size_t cap;
};
void shim_strbuf_printf(struct shim_strbuf *b, const char *fmt, ...)
    SHIM_PRINTF(2, 3);
const char *shim_strbuf_str(const struct shim_strbuf *b);
void shim_strbuf_finish(struct shim_strbuf *b);

/* ---- dl.c: the only file that includes <dlfcn.h> ------------------------ */
/* Returns NULL on failure with NOT_FOUND and dlerror()'s text. */
void *shim_dl_open(const char *path, TF_Status *status);
/* NULL if the symbol is not there (an optional entry point). */
void *shim_dl_sym(void *handle, const char *name);
void shim_dl_close(void *handle);

/* ---- types.c ------------------------------------------------------------ */
/* "float" (TensorFlow's DataTypeString spelling), "unknown" if not known. */
const char *shim_type_short_name(TF_DataType dtype);

/* ---- plugins (loader.c, validate.c) ------------------------------------- */
struct tfocl_plugin {
  char *path;
  void *dl;
  bool has_se; /* SE_InitPlugin was there */
  SP_Platform platform;
  SP_PlatformFns platform_fns;
  SP_DeviceFns device_fns;
  SP_StreamExecutor se;
  SP_TimerFns timer_fns;
  void (*destroy_platform)(SP_Platform *platform);
  void (*destroy_platform_fns)(SP_PlatformFns *platform_fns);
  char *platform_name; /* copies: the plugin's strings die with dlclose */
  char *device_type;
  /* TF_InitGraph's registration (grappler.c); graph_device_type NULL
   * without one. */
  char *graph_device_type;
  TP_Optimizer graph_optimizer;
  TP_OptimizerConfigs graph_configs;
  /* TF_InitProfiler's registration (profiler.c); profiler_device_type NULL
   * without one. */
  char *profiler_device_type;
  TP_Profiler profiler;
  TP_ProfilerFns profiler_fns;
  void (*destroy_profiler)(TP_Profiler *profiler);
  void (*destroy_profiler_fns)(TP_ProfilerFns *profiler_fns);
  pthread_mutex_t lock; /* devices list */
  struct tfocl_device **devices;
  int num_devices;
  struct tfocl_plugin *next; /* registry of loaded plugins */
};

void shim_validate_registration_params(const SE_PlatformRegistrationParams *p,
                                       TF_Status *status);
void shim_validate_platform(const SP_Platform *p, TF_Status *status);
void shim_validate_platform_fns(const SP_PlatformFns *p, TF_Status *status);
void shim_validate_device_fns(const SP_DeviceFns *p, TF_Status *status);
void shim_validate_stream_executor(const SP_StreamExecutor *se,
                                   const SP_Platform *platform,
                                   TF_Status *status);
void shim_validate_device(const SP_Device *d, TF_Status *status);
void shim_validate_device_type(const char *type, TF_Status *status);

void shim_plugin_forget_device(struct tfocl_plugin *p,
                               struct tfocl_device *d);
/* The loaded plugins (loader.c; read under the load lock). */
struct tfocl_plugin *shim_loaded_plugins(void);

/* ---- graph optimizers (grappler.c) -------------------------------------- */
typedef void (*shim_graph_init_fn)(TP_OptimizerRegistrationParams *,
                                   TF_Status *);
/* InitGraphPlugin: TF_InitGraph with stamped tables, TensorFlow's
 * validation, one optimizer per device type. Called with the load lock
 * held; on failure registers nothing. */
void shim_graph_init(struct tfocl_plugin *p, shim_graph_init_fn init,
                     TF_Status *status);

/* TensorFlow's checks of a plugin's tables (TF_VALIDATE_STRUCT_SIZE,
 * TF_VALIDATE_NOT_NULL), for functions with a TF_Status *status that
 * return void. */
#define SHIM_VALIDATE_STRUCT_SIZE(STRUCT, obj, SIZE_NAME)                     \
  do {                                                                        \
    if ((obj)->struct_size == 0) {                                            \
      shim_set_status(status, TF_FAILED_PRECONDITION,                         \
                      "struct_size field in " #STRUCT " must be set to "      \
                      #SIZE_NAME ".");                                        \
      return;                                                                 \
    }                                                                         \
  } while (0)

#define SHIM_VALIDATE_MEMBER(STRUCT, obj, field)                              \
  do {                                                                        \
    if ((obj)->field == 0) {                                                  \
      shim_set_status(status, TF_FAILED_PRECONDITION,                         \
                      "'" #field "' field in " #STRUCT " must be set.");      \
      return;                                                                 \
    }                                                                         \
  } while (0)

/* ---- profilers (profiler.c) ---------------------------------------------- */
typedef void (*shim_profiler_init_fn)(TF_ProfilerRegistrationParams *,
                                      TF_Status *);
/* InitPluginProfiler: TF_InitProfiler with stamped tables and TensorFlow's
 * validation. Called with the load lock held; on failure registers
 * nothing. */
void shim_profiler_init(struct tfocl_plugin *p, shim_profiler_init_fn init,
                        TF_Status *status);
/* Calls the plugin's destroy functions (unload). */
void shim_profiler_finish(struct tfocl_plugin *p);

/* ---- devices (device.c) ------------------------------------------------- */
/* At most this many freed device blocks are kept for reuse. */
#define SHIM_KEPT_BLOCKS_MAX 32

struct tfocl_device {
  struct tfocl_plugin *plugin;
  SP_Device sp; /* stable: the plugin may keep &sp */
  int ordinal;
  SP_Stream streams[TFOCL_STREAM_ROLE_COUNT];
  char name[128]; /* "/job:localhost/replica:0/task:0/device:OPENCL:0" */
  pthread_mutex_t lock; /* event pool, kept blocks */
  SP_Event *free_events;
  int num_free_events;
  int cap_free_events;
  /* tfocl_device_keep_freed_memory: freed device blocks handed out again
   * for an allocation of the same size. */
  bool keep_freed;
  /* tfocl_device_poison_outputs */
  bool poison_outputs;
  int num_kept;
  struct shim_kept_block {
    void *opaque;
    uint64_t size;
  } kept[SHIM_KEPT_BLOCKS_MAX];
};

/* TensorFlow's BFC allocator CHECK-fails (2.22 and later: aborts) on a region
 * from a sub-allocator that is not aligned to this; the shim refuses such
 * memory with an error instead, so the Check suites catch it. */
#define SHIM_SUBALLOCATOR_ALIGN 256u

/* One plugin allocate(). NULL with `status` set on failure:
 * TF_RESOURCE_EXHAUSTED (out of memory: the caller words the message), or
 * TF_INTERNAL for an address TensorFlow would abort on. */
void *shim_device_allocate(struct tfocl_device *d, uint64_t size,
                           TF_Status *status);
/* deallocate() with only `opaque` set, as TensorFlow's DeviceMemAllocator. */
void shim_device_deallocate(struct tfocl_device *d, void *opaque);
/* A tensor's block of `size` bytes is free: kept for reuse where the device
 * keeps freed memory and there is room, else deallocated. */
void shim_device_release(struct tfocl_device *d, void *opaque, uint64_t size);
/* host_memory_allocate(), as TensorFlow's host allocator for
 * device-compatible host tensors; failures as shim_device_allocate. */
void *shim_host_memory_allocate(struct tfocl_device *d, uint64_t size,
                                TF_Status *status);
void shim_host_memory_deallocate(struct tfocl_device *d, void *mem);
/* Makes `role` wait for the compute stream, runs `copy` on it and waits for
 * it with a recorded event (TensorFlow's EventMgr in synchronous form). */
void shim_device_copy(struct tfocl_device *d, enum tfocl_stream_role role,
                      void *dst, const void *src, uint64_t size,
                      TF_Status *status);

/* ---- tensors (tensor.c) ------------------------------------------------- */
enum shim_buffer_kind {
  SHIM_BUFFER_HOST_OWNED,    /* aligned_alloc'ed by the shim */
  SHIM_BUFFER_HOST_EXTERNAL, /* TF_NewTensor: the caller's deallocator */
  SHIM_BUFFER_DEVICE,        /* one plugin allocate() */
  SHIM_BUFFER_PINNED,        /* one plugin host_memory_allocate() */
  SHIM_BUFFER_EMPTY          /* 0 bytes: the static dummy */
};

struct shim_buffer {
  int refcount; /* atomic */
  enum shim_buffer_kind kind;
  void *data;
  size_t len;
  void (*deallocator)(void *data, size_t len, void *arg);
  void *deallocator_arg;
  struct tfocl_device *device; /* SHIM_BUFFER_DEVICE and _PINNED only */
};

struct TF_Tensor {
  TF_DataType dtype;
  int num_dims;
  int64_t *dims;
  struct shim_buffer *buf;
  size_t offset;    /* into buf->data */
  size_t byte_size; /* TF_TensorByteSize */
};

int64_t shim_num_elements(const int64_t *dims, int num_dims);
/* NULL with RESOURCE_EXHAUSTED / INVALID_ARGUMENT on failure. */
/* A host tensor in the plugin's host memory of `device`, as TensorFlow
 * allocates host-memory outputs of a PluggableDevice kernel. */
TF_Tensor *shim_tensor_alloc_pinned(struct tfocl_device *device,
                                    TF_DataType dtype, const int64_t *dims,
                                    int num_dims, TF_Status *status);
TF_Tensor *shim_tensor_alloc_host(TF_DataType dtype, const int64_t *dims,
                                  int num_dims, TF_Status *status);
/* Another reference to the same buffer, shape and type. */
TF_Tensor *shim_tensor_ref(const TF_Tensor *t);
/* A reference to t's buffer with a new shape (same dtype, same bytes). */
TF_Tensor *shim_tensor_reshape_ref(const TF_Tensor *t, const int64_t *dims,
                                   int num_dims);
int shim_buffer_refcount(const TF_Tensor *t);
/* "[2,3]" */
void shim_format_shape(struct shim_strbuf *b, const int64_t *dims,
                       int num_dims);

/* ---- attribute values (attr.c) ------------------------------------------ */
/* An owned deep copy of a tfocl_attr value. */
struct shim_attr_value {
  enum tfocl_attr_kind kind;
  union {
    int64_t i;
    float f;
    bool b;
    TF_DataType type;
    char *s;
    struct {
      int64_t *dims;
      int num_dims;
    } shape;
    struct {
      void *items; /* int64_t, float, bool, TF_DataType, char *, shape */
      int count;
    } list;
  } v;
};

struct shim_attr {
  char *name;
  struct shim_attr_value value;
};

/* deep copy of a public attr into `out`; false on malloc failure */
bool shim_attr_value_from_public(const struct tfocl_attr *a,
                                 struct shim_attr_value *out);
bool shim_attr_value_copy(const struct shim_attr_value *src,
                          struct shim_attr_value *dst);
void shim_attr_value_finish(struct shim_attr_value *v);
/* "int", "list(type)", ... as TensorFlow names attr types. */
const char *shim_attr_kind_name(enum tfocl_attr_kind kind);
bool shim_attr_kind_is_list(enum tfocl_attr_kind kind);
/* TensorFlow's SummarizeAttrValue spelling: 3, DT_FLOAT, "s", [1, 2]. */
void shim_attr_value_format(struct shim_strbuf *b,
                            const struct shim_attr_value *v);
void shim_attrs_free(struct shim_attr *attrs, int n);

/* ---- op definitions (op_def.c) ------------------------------------------ */
struct shim_arg_def {
  char *name;
  TF_DataType fixed_type; /* 0 when typed by an attr */
  char *type_attr;        /* "T" in "x: T" or "x: N * T" */
  char *number_attr;      /* "N" in "x: N * T" */
  char *type_list_attr;   /* "T" in "x: T" where T is list(type) */
};

struct shim_attr_def {
  char *name;
  enum tfocl_attr_kind kind;
  bool has_default;
  struct shim_attr_value def;
  bool has_minimum;
  int64_t minimum;
  TF_DataType *allowed; /* NULL: any type */
  int num_allowed;
};

struct shim_op_def {
  char *name;
  char *signature; /* for messages: "x: T, y: T -> z: T; T: type" */
  struct shim_arg_def *inputs;
  int num_inputs;
  struct shim_arg_def *outputs;
  int num_outputs;
  struct shim_attr_def *attrs;
  int num_attrs;
  /* Registered through TF_RegisterOpDefinition (ops_api.c): the shape
   * function (NULL: none), and the plugin whose TF_InitKernel registered it
   * (NULL: none, the op stays). An owner's ops are retired at its unload:
   * unknown to lookups from then on, kept in memory for the nodes made of
   * them, their shape function forgotten. */
  void (*shape_fn)(TF_ShapeInferenceContext *ctx, TF_Status *status);
  const struct tfocl_plugin *owner;
  bool retired;
};

/* Built-in op signatures (op_def_table.c), one row per op. */
struct shim_op_def_row {
  const char *name;
  const char *inputs;
  const char *outputs;
  const char *attrs;
};
extern const struct shim_op_def_row shim_builtin_op_defs[];
extern const int shim_num_builtin_op_defs;

/* Never freed while the process lives; NULL if unknown. */
const struct shim_op_def *shim_op_def_find(const char *name);
/* Adds an op as TF_RegisterOpDefinition does: ALREADY_EXISTS with
 * TensorFlow's words for a name taken, INVALID_ARGUMENT for a malformed
 * signature. Tagged with the plugin being loaded, if any. */
void shim_op_def_register(const char *name, const char *inputs,
                          const char *outputs, const char *attrs,
                          void (*shape_fn)(TF_ShapeInferenceContext *,
                                           TF_Status *),
                          TF_Status *status);
/* Retires the ops plugin p registered (its unload). */
void shim_op_defs_remove_plugin(const struct tfocl_plugin *p);

/* ---- shape functions (ops_api.c) ----------------------------------------- */
struct tfocl_shape_result {
  int num_dims; /* -1: unknown rank */
  int64_t *dims; /* -1: unknown dim; malloc'ed, the caller frees */
};
struct shim_node;
/* Runs node's op's shape function on input shapes (num_inputs of them):
 * the node's outputs into `outputs`. NOT_FOUND when the op has none; the
 * function's own status when it fails. */
bool shim_infer_shapes(const struct shim_node *node,
                       const struct tfocl_shape *input_shapes,
                       struct tfocl_shape_result *outputs, TF_Status *status);
const struct shim_attr_def *shim_op_def_attr(const struct shim_op_def *def,
                                             const char *name);

/* A node: op + complete attributes + input/output types (op_def.c). */
struct shim_node {
  const struct shim_op_def *def;
  char *name;
  struct shim_attr *attrs;
  int num_attrs;
  TF_DataType *input_types;
  int num_inputs;
  TF_DataType *output_types;
  int num_outputs;
  /* [start, stop) of each input/output arg in the flat lists */
  int *input_arg_start;
  int *output_arg_start;
};

/* Fills attrs (given, inferred from input types, defaults), checks them and
 * computes output types. INVALID_ARGUMENT naming what is wrong. */
bool shim_node_init(struct shim_node *node, const struct shim_op_def *def,
                    const struct tfocl_attr *attrs, int num_attrs,
                    const TF_DataType *input_types, int num_inputs,
                    TF_Status *status);
void shim_node_finish(struct shim_node *node);
const struct shim_attr_value *shim_node_attr(const struct shim_node *node,
                                             const char *name);
/* "T=DT_FLOAT, N=2" sorted by name, internal attrs included. */
void shim_node_format_attrs(struct shim_strbuf *b,
                            const struct shim_node *node);

/* ---- kernel registry (kernel_registry.c) -------------------------------- */
struct shim_constraint {
  char *attr;
  TF_DataType *types;
  int num_types;
};

struct TF_KernelBuilder {
  char *op_name;
  char *device_type;
  void *(*create_func)(TF_OpKernelConstruction *);
  void (*compute_func)(void *, TF_OpKernelContext *);
  void (*compute_async_func)(void *, TF_OpKernelContext *,
                             TF_AsyncOpKernelDoneCallback *);
  void (*delete_func)(void *);
  struct shim_constraint *constraints;
  int num_constraints;
  char **host_memory;
  int num_host_memory;
  int32_t priority;
  char *label;
};

struct shim_kernel {
  struct TF_KernelBuilder b; /* moved from the registered builder */
  char *kernel_name;
  struct tfocl_plugin *owner;
  uint64_t seq;
  int refcount; /* registry + live ops; atomic */
  /* the public view handed out by tfocl_kernel_get */
  struct tfocl_type_constraint *pub_constraints;
};

/* The plugin whose SE_InitPlugin/TF_InitKernel is running (loader.c sets it
 * under the load lock): kernels registered meanwhile belong to it. */
void shim_registry_set_loading_plugin(struct tfocl_plugin *p);
/* The plugin whose init runs on this thread, or NULL. */
struct tfocl_plugin *shim_registry_loading_plugin(void);
void shim_registry_remove_plugin(const struct tfocl_plugin *p);
/* Picks the kernel for `node` on `device_type` as TensorFlow's
 * FindKernelRegistration does, with a reference the caller drops with
 * shim_kernel_unref. NOT_FOUND with TensorFlow's wording. */
struct shim_kernel *shim_registry_find(const struct shim_node *node,
                                       const char *device_type,
                                       TF_Status *status);
void shim_kernel_unref(struct shim_kernel *k);
bool shim_kernel_is_host_memory(const struct shim_kernel *k,
                                const char *arg_name);

/* ---- op kernels (op_kernel.c, op_runner.c) ------------------------------ */
struct tfocl_op {
  struct tfocl_device *device;
  struct shim_node node;
  struct shim_kernel *kernel;
  void *kernel_state; /* create_func's result */
  bool *input_on_host;
  bool *output_on_host;
  pthread_mutex_t lock; /* one compute at a time */
};

struct TF_OpKernelConstruction {
  struct tfocl_op *op;
  TF_Status *failure;
};

struct TF_OpKernelContext {
  struct tfocl_op *op;
  TF_Tensor **inputs;
  int num_inputs;
  TF_Tensor **outputs;
  int num_outputs;
  TF_Status *failure;
  int64_t step_id;
};

struct TF_AsyncOpKernelDoneCallback {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool done;
};

/* Allocates where output/temp memory of this op goes. */
TF_Tensor *shim_ctx_alloc(TF_OpKernelContext *ctx, TF_DataType dtype,
                          const int64_t *dims, int num_dims, bool on_host,
                          TF_Status *status);

#endif /* TFOCL_SHIM_INTERNAL_H_ */
