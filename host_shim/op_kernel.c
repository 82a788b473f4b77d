/* TF_OpKernelConstruction (attributes at kernel creation) and
 * TF_OpKernelContext (inputs, outputs, allocation at compute), as
 * tensorflow/c/kernels.cc provides them. */
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/kernels_experimental.h"
#include "shim_internal.h"

/* ---- construction-time attributes --------------------------------------- */

/* The attr, or NULL with TensorFlow's NOT_FOUND / INVALID_ARGUMENT. */
static const struct shim_attr_value *get_attr(TF_OpKernelConstruction *ctx,
                                              const char *name,
                                              enum tfocl_attr_kind want,
                                              TF_Status *status)
{
  const struct shim_node *node = &ctx->op->node;
  const struct shim_attr_value *v =
      name != NULL ? shim_node_attr(node, name) : NULL;

  if (v == NULL) {
    shim_set_status(status, TF_NOT_FOUND,
                    "No attr named '%s' in NodeDef:\n\t [[{{node %s}}]]",
                    name != NULL ? name : "(null)", node->name);
    return NULL;
  }
  if (v->kind != want) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "AttrValue had value with type '%s' when '%s' "
                    "expected\n\t for attr '%s'\n\t [[{{node %s}}]]",
                    shim_attr_kind_name(v->kind), shim_attr_kind_name(want),
                    name, node->name);
    return NULL;
  }
  shim_set_ok(status);
  return v;
}

void TF_OpKernelConstruction_GetAttrSize(TF_OpKernelConstruction *ctx,
                                         const char *attr_name,
                                         int32_t *list_size,
                                         int32_t *total_size,
                                         TF_Status *status)
{
  const struct shim_attr_value *v =
      attr_name != NULL ? shim_node_attr(&ctx->op->node, attr_name) : NULL;
  int64_t total = 0;

  if (v == NULL) {
    get_attr(ctx, attr_name, TFOCL_ATTR_INT, status);
    return;
  }
  if (!shim_attr_kind_is_list(v->kind)) {
    *list_size = -1;
    *total_size = v->kind == TFOCL_ATTR_STRING  ? (int32_t)strlen(v->v.s)
                  : v->kind == TFOCL_ATTR_SHAPE ? v->v.shape.num_dims
                                                : -1;
    shim_set_ok(status);
    return;
  }
  *list_size = v->v.list.count;
  if (v->kind == TFOCL_ATTR_STRING_LIST) {
    for (int i = 0; i < v->v.list.count; i++)
      total += (int64_t)strlen(((char **)v->v.list.items)[i]);
  } else if (v->kind == TFOCL_ATTR_SHAPE_LIST) {
    for (int i = 0; i < v->v.list.count; i++) {
      int nd = ((struct tfocl_shape *)v->v.list.items)[i].num_dims;
      total += nd > 0 ? nd : 0;
    }
  } else {
    total = -1;
  }
  *total_size = (int32_t)total;
  shim_set_ok(status);
}

void TF_OpKernelConstruction_GetAttrType(TF_OpKernelConstruction *ctx,
                                         const char *attr_name,
                                         TF_DataType *val, TF_Status *status)
{
  const struct shim_attr_value *v =
      get_attr(ctx, attr_name, TFOCL_ATTR_TYPE, status);
  if (v != NULL)
    *val = v->v.type;
}

void TF_OpKernelConstruction_GetAttrInt32(TF_OpKernelConstruction *ctx,
                                          const char *attr_name, int32_t *val,
                                          TF_Status *status)
{
  const struct shim_attr_value *v =
      get_attr(ctx, attr_name, TFOCL_ATTR_INT, status);
  if (v == NULL)
    return;
  if (v->v.i < INT32_MIN || v->v.i > INT32_MAX) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Attr %s has value %lld out of range for an int32",
                    attr_name, (long long)v->v.i);
    return;
  }
  *val = (int32_t)v->v.i;
}

void TF_OpKernelConstruction_GetAttrInt64(TF_OpKernelConstruction *ctx,
                                          const char *attr_name, int64_t *val,
                                          TF_Status *status)
{
  const struct shim_attr_value *v =
      get_attr(ctx, attr_name, TFOCL_ATTR_INT, status);
  if (v != NULL)
    *val = v->v.i;
}

void TF_OpKernelConstruction_GetAttrFloat(TF_OpKernelConstruction *ctx,
                                          const char *attr_name, float *val,
                                          TF_Status *status)
{
  const struct shim_attr_value *v =
      get_attr(ctx, attr_name, TFOCL_ATTR_FLOAT, status);
  if (v != NULL)
    *val = v->v.f;
}

void TF_OpKernelConstruction_GetAttrBool(TF_OpKernelConstruction *ctx,
                                         const char *attr_name, TF_Bool *val,
                                         TF_Status *status)
{
  const struct shim_attr_value *v =
      get_attr(ctx, attr_name, TFOCL_ATTR_BOOL, status);
  if (v != NULL)
    *val = v->v.b;
}

void TF_OpKernelConstruction_GetAttrString(TF_OpKernelConstruction *ctx,
                                           const char *attr_name, char *val,
                                           size_t max_length,
                                           TF_Status *status)
{
  const struct shim_attr_value *v =
      get_attr(ctx, attr_name, TFOCL_ATTR_STRING, status);
  size_t n;
  if (v == NULL || max_length == 0)
    return;
  n = strlen(v->v.s);
  memcpy(val, v->v.s, n < max_length ? n : max_length);
}

void TF_OpKernelConstruction_GetAttrTensor(TF_OpKernelConstruction *ctx,
                                           const char *attr_name,
                                           TF_Tensor **val, TF_Status *status)
{
  /* Tensor attributes cannot be given to the shim: a present attr is of
   * another type, a missing one is missing. */
  const struct shim_attr_value *v =
      attr_name != NULL ? shim_node_attr(&ctx->op->node, attr_name) : NULL;
  (void)val;
  if (v == NULL) {
    get_attr(ctx, attr_name, TFOCL_ATTR_INT, status);
    return;
  }
  shim_set_status(status, TF_INVALID_ARGUMENT,
                  "AttrValue had value with type '%s' when 'tensor' "
                  "expected\n\t for attr '%s'",
                  shim_attr_kind_name(v->kind), attr_name);
}

void TF_OpKernelConstruction_GetAttrTensorList(TF_OpKernelConstruction *ctx,
                                               const char *attr_name,
                                               TF_Tensor **vals,
                                               int max_values,
                                               TF_Status *status)
{
  const struct shim_attr_value *v =
      attr_name != NULL ? shim_node_attr(&ctx->op->node, attr_name) : NULL;
  (void)vals;
  (void)max_values;
  if (v == NULL) {
    get_attr(ctx, attr_name, TFOCL_ATTR_INT, status);
    return;
  }
  shim_set_status(status, TF_INVALID_ARGUMENT,
                  "AttrValue had value with type '%s' when 'list(tensor)' "
                  "expected\n\t for attr '%s'",
                  shim_attr_kind_name(v->kind), attr_name);
}

#define GET_LIST(NAME, KIND, CTYPE, STORE)                                   \
  void TF_OpKernelConstruction_GetAttr##NAME##List(                          \
      TF_OpKernelConstruction *ctx, const char *attr_name, CTYPE *vals,      \
      int max_vals, TF_Status *status)                                       \
  {                                                                          \
    const struct shim_attr_value *v = get_attr(ctx, attr_name, KIND, status); \
    if (v == NULL)                                                           \
      return;                                                                \
    for (int i = 0; i < v->v.list.count && i < max_vals; i++) {              \
      STORE;                                                                 \
    }                                                                        \
  }

GET_LIST(Type, TFOCL_ATTR_TYPE_LIST, TF_DataType,
         vals[i] = ((TF_DataType *)v->v.list.items)[i])
GET_LIST(Int64, TFOCL_ATTR_INT_LIST, int64_t,
         vals[i] = ((int64_t *)v->v.list.items)[i])
GET_LIST(Float, TFOCL_ATTR_FLOAT_LIST, float,
         vals[i] = ((float *)v->v.list.items)[i])
GET_LIST(Bool, TFOCL_ATTR_BOOL_LIST, TF_Bool,
         vals[i] = ((bool *)v->v.list.items)[i])

void TF_OpKernelConstruction_GetAttrInt32List(TF_OpKernelConstruction *ctx,
                                              const char *attr_name,
                                              int32_t *vals, int max_vals,
                                              TF_Status *status)
{
  const struct shim_attr_value *v =
      get_attr(ctx, attr_name, TFOCL_ATTR_INT_LIST, status);
  if (v == NULL)
    return;
  /* Check everything first: outputs stay untouched on failure. */
  for (int i = 0; i < v->v.list.count; i++) {
    int64_t x = ((int64_t *)v->v.list.items)[i];
    if (x < INT32_MIN || x > INT32_MAX) {
      shim_set_status(status, TF_INVALID_ARGUMENT,
                      "Attr %s has value %lld out of range for an int32",
                      attr_name, (long long)x);
      return;
    }
  }
  for (int i = 0; i < v->v.list.count && i < max_vals; i++)
    vals[i] = (int32_t)((int64_t *)v->v.list.items)[i];
}

void TF_OpKernelConstruction_GetAttrStringList(TF_OpKernelConstruction *ctx,
                                               const char *attr_name,
                                               char **vals, size_t *lengths,
                                               int max_values, void *storage,
                                               size_t storage_size,
                                               TF_Status *status)
{
  const struct shim_attr_value *v =
      get_attr(ctx, attr_name, TFOCL_ATTR_STRING_LIST, status);
  size_t used = 0;
  char *dst = storage;

  if (v == NULL)
    return;
  for (int i = 0; i < v->v.list.count && i < max_values; i++) {
    const char *s = ((char **)v->v.list.items)[i];
    size_t n = strlen(s);
    if (n > storage_size - used) {
      shim_set_status(status, TF_INVALID_ARGUMENT,
                      "Not enough storage to hold the requested list of "
                      "strings");
      return;
    }
    memcpy(dst + used, s, n);
    vals[i] = dst + used;
    lengths[i] = n;
    used += n;
  }
}

void TF_OpKernelConstruction_GetAttrTensorShape(TF_OpKernelConstruction *ctx,
                                                const char *attr_name,
                                                int64_t *dims,
                                                size_t num_dims,
                                                TF_Status *status)
{
  const struct shim_attr_value *v =
      get_attr(ctx, attr_name, TFOCL_ATTR_SHAPE, status);
  if (v == NULL)
    return;
  if (v->v.shape.num_dims < 0 || (size_t)v->v.shape.num_dims != num_dims) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Invalid number of dimensions: attr '%s' has %d, %zu "
                    "were asked for",
                    attr_name, v->v.shape.num_dims, num_dims);
    return;
  }
  if (num_dims > 0)
    memcpy(dims, v->v.shape.dims, sizeof(int64_t) * num_dims);
}

bool TF_OpKernelConstruction_HasAttr(TF_OpKernelConstruction *ctx,
                                     const char *attr_name, TF_Status *status)
{
  shim_set_ok(status);
  return attr_name != NULL && shim_node_attr(&ctx->op->node, attr_name);
}

TF_StringView TF_OpKernelConstruction_GetName(TF_OpKernelConstruction *ctx)
{
  const char *n = ctx->op->node.name;
  return (TF_StringView){.data = n, .len = strlen(n)};
}

void TF_OpKernelConstruction_Failure(TF_OpKernelConstruction *ctx,
                                     TF_Status *status)
{
  shim_copy_status(ctx->failure, status);
}

/* ---- compute-time context ----------------------------------------------- */

SP_Stream TF_GetStream(TF_OpKernelContext *ctx, TF_Status *status)
{
  shim_set_ok(status);
  return ctx->op->device->streams[TFOCL_STREAM_COMPUTE];
}

int TF_NumInputs(TF_OpKernelContext *ctx) { return ctx->num_inputs; }

int TF_NumOutputs(TF_OpKernelContext *ctx) { return ctx->num_outputs; }

void TF_GetInput(TF_OpKernelContext *ctx, int i, TF_Tensor **tensor,
                 TF_Status *status)
{
  TF_Tensor *t;

  if (i < 0 || i >= ctx->num_inputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "input index out of range");
    return;
  }
  t = shim_tensor_ref(ctx->inputs[i]);
  if (t == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  *tensor = t;
  shim_set_ok(status);
}

static int find_arg(const struct shim_arg_def *args, int n, const char *name)
{
  for (int i = 0; i < n; i++)
    if (strcmp(args[i].name, name) == 0)
      return i;
  return -1;
}

void TF_InputRange(TF_OpKernelContext *ctx, const char *name,
                   TF_InputRange_Args *args)
{
  const struct shim_node *node = &ctx->op->node;
  int a = name != NULL ? find_arg(node->def->inputs, node->def->num_inputs,
                                  name)
                       : -1;
  if (a < 0) {
    shim_set_status(args->status, TF_INVALID_ARGUMENT,
                    "Unknown input name: %s", name != NULL ? name : "(null)");
    return;
  }
  args->start = node->input_arg_start[a];
  args->stop = node->input_arg_start[a + 1];
  shim_set_ok(args->status);
}

TF_DataType TF_InputDatatype(TF_OpKernelContext *ctx, int index)
{
  if (index < 0 || index >= ctx->num_inputs)
    return (TF_DataType)0;
  return ctx->op->node.input_types[index];
}

void TF_SetOutput(TF_OpKernelContext *ctx, int i, const TF_Tensor *tensor,
                  TF_Status *status)
{
  TF_Tensor *t;

  if (i < 0 || i >= ctx->num_outputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "output index out of range");
    return;
  }
  if (tensor == NULL || tensor->dtype != ctx->op->node.output_types[i]) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Output %d of %s has type %s; %s expected", i,
                    ctx->op->node.name,
                    tensor ? tfocl_type_name(tensor->dtype) : "NULL",
                    tfocl_type_name(ctx->op->node.output_types[i]));
    return;
  }
  t = shim_tensor_ref(tensor);
  if (t == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  TF_DeleteTensor(ctx->outputs[i]);
  ctx->outputs[i] = t;
  shim_set_ok(status);
}

TF_Tensor *TF_GetMutableOutput(TF_OpKernelContext *ctx, int i,
                               TF_Status *status)
{
  TF_Tensor *t;

  if (i < 0 || i >= ctx->num_outputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "output index out of range");
    return NULL;
  }
  if (ctx->outputs[i] == NULL) {
    shim_set_status(status, TF_FAILED_PRECONDITION,
                    "output %d has not been set", i);
    return NULL;
  }
  t = shim_tensor_ref(ctx->outputs[i]);
  if (t == NULL)
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
  else
    shim_set_ok(status);
  return t;
}

void TF_GetSerializedFunctionDefLibrary(TF_OpKernelContext *ctx,
                                        void *serialized_function_def_library,
                                        TF_Status *status)
{
  (void)ctx;
  (void)serialized_function_def_library;
  shim_set_status(status, TF_UNIMPLEMENTED,
                  "The host shim has no function library");
}

void TF_GetSerializedConfigProto(TF_OpKernelContext *ctx,
                                 void *serialized_config_proto,
                                 TF_Status *status)
{
  (void)ctx;
  (void)serialized_config_proto;
  shim_set_status(status, TF_UNIMPLEMENTED,
                  "The host shim has no ConfigProto");
}

void TF_GetSerializedResourceHandleProto(
    TF_OpKernelContext *ctx, int i, void *serialized_resource_handle_proto,
    TF_Status *status)
{
  (void)ctx;
  (void)i;
  (void)serialized_resource_handle_proto;
  shim_set_status(status, TF_UNIMPLEMENTED,
                  "The host shim has no resource handles");
}

void TF_OpKernelContext_Failure(TF_OpKernelContext *ctx, TF_Status *status)
{
  shim_copy_status(ctx->failure, status);
}

TF_DataType TF_ExpectedOutputDataType(TF_OpKernelContext *ctx, int i)
{
  if (i < 0 || i >= ctx->num_outputs)
    return (TF_DataType)0;
  return ctx->op->node.output_types[i];
}

bool TF_IsHostMemoryInput(TF_OpKernelContext *ctx, int i, TF_Status *status)
{
  if (i < 0 || i >= ctx->num_inputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "input index out of range");
    return false;
  }
  shim_set_ok(status);
  return ctx->op->input_on_host[i];
}

bool TF_IsHostMemoryOutput(TF_OpKernelContext *ctx, int i, TF_Status *status)
{
  if (i < 0 || i >= ctx->num_outputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "output index out of range");
    return false;
  }
  shim_set_ok(status);
  return ctx->op->output_on_host[i];
}

int64_t TF_StepId(TF_OpKernelContext *ctx) { return ctx->step_id; }

int TF_GetDeviceId(TF_OpKernelContext *ctx) { return ctx->op->device->ordinal; }

TF_StringView TF_GetDeviceName(TF_OpKernelContext *ctx)
{
  const char *n = ctx->op->device->name;
  return (TF_StringView){.data = n, .len = strlen(n)};
}

TF_StringView TF_GetOpKernelName(TF_OpKernelContext *ctx)
{
  const char *n = ctx->op->node.name;
  return (TF_StringView){.data = n, .len = strlen(n)};
}

TF_StringView TF_GetOpKernelRequestedInput(TF_OpKernelContext *ctx,
                                           size_t index)
{
  /* The shim's nodes have no graph inputs to name. */
  (void)ctx;
  (void)index;
  return (TF_StringView){.data = "", .len = 0};
}

TF_StringView TF_GetResourceMgrDefaultContainerName(TF_OpKernelContext *ctx)
{
  (void)ctx;
  return (TF_StringView){.data = "localhost", .len = 9};
}

/* TensorFlow builds a TensorShape from what a kernel asks to allocate and
 * CHECK-fails (aborts the process) on a shape it cannot hold: a kernel must
 * have refused such a shape with an error first. The shim fails instead,
 * with a message the suites look for. */
static bool shape_tensorflow_accepts(const int64_t *dims, int num_dims,
                                     TF_Status *status)
{
  int64_t n = 1;

  if (num_dims > SHIM_MAX_DIMS) {
    shim_set_status(status, TF_INTERNAL,
                    "%s: %d dimensions, more than TensorFlow's %d",
                    SHIM_TF_ABORTS, num_dims, SHIM_MAX_DIMS);
    return false;
  }
  for (int i = 0; i < num_dims; i++) {
    if (dims[i] < 0) {
      shim_set_status(status, TF_INTERNAL, "%s: dimension %d is %lld",
                      SHIM_TF_ABORTS, i, (long long)dims[i]);
      return false;
    }
    if (dims[i] != 0 && n > INT64_MAX / dims[i]) {
      shim_set_status(status, TF_INTERNAL,
                      "%s: Encountered overflow when multiplying %lld with "
                      "%lld",
                      SHIM_TF_ABORTS, (long long)n, (long long)dims[i]);
      return false;
    }
    n *= dims[i];
  }
  return true;
}

TF_Tensor *shim_ctx_alloc(TF_OpKernelContext *ctx, TF_DataType dtype,
                          const int64_t *dims, int num_dims, bool on_host,
                          TF_Status *status)
{
  if (num_dims < 0 || (num_dims > 0 && dims == NULL)) {
    shim_set_status(status, TF_INVALID_ARGUMENT, "invalid shape: %d dims",
                    num_dims);
    return NULL;
  }
  if (!shape_tensorflow_accepts(dims, num_dims, status))
    return NULL;
  /* As a PluggableDevice's host-memory outputs in TensorFlow: the
   * plugin's host allocator (which TensorFlow's BFC checks). */
  if (on_host)
    return shim_tensor_alloc_pinned(ctx->op->device, dtype, dims, num_dims,
                                    status);
  return tfocl_tensor_alloc_device(ctx->op->device, dtype, dims, num_dims,
                                   status);
}

/* tfocl_device_poison_outputs: t, just allocated in device memory unless
 * on_host. */
static bool poison(TF_OpKernelContext *context, bool on_host, TF_Tensor *t,
                   TF_Status *status)
{
  struct tfocl_device *d = context->op->device;
  if (!d->poison_outputs || on_host || t->byte_size == 0)
    return true;
  SP_DeviceMemoryBase mem = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                             .opaque = TF_TensorData(t),
                             .size = t->byte_size};
  d->plugin->se.memset(&d->sp, d->streams[TFOCL_STREAM_COMPUTE], &mem, 0xff,
                       t->byte_size, status);
  return shim_ok(status);
}

TF_Tensor *TF_AllocateOutput(TF_OpKernelContext *context, int index,
                             TF_DataType dtype, const int64_t *dims,
                             int num_dims, size_t len, TF_Status *status)
{
  TF_Tensor *t, *ret;

  /* As TensorFlow: dtype and len are not used, the op def decides. */
  (void)dtype;
  (void)len;
  if (index < 0 || index >= context->num_outputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "output index out of range");
    return NULL;
  }
  t = shim_ctx_alloc(context, context->op->node.output_types[index], dims,
                     num_dims, context->op->output_on_host[index], status);
  if (t == NULL)
    return NULL;
  if (!poison(context, context->op->output_on_host[index], t, status)) {
    TF_DeleteTensor(t);
    return NULL;
  }
  ret = shim_tensor_ref(t);
  if (ret == NULL) {
    TF_DeleteTensor(t);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  TF_DeleteTensor(context->outputs[index]);
  context->outputs[index] = t;
  return ret;
}

TF_Tensor *TF_ForwardInputOrAllocateOutput(
    TF_OpKernelContext *context, const int *candidate_input_indices,
    int num_candidate_input_indices, int output_index,
    const int64_t *output_dims, int output_num_dims, int *forwarded_input,
    TF_Status *status)
{
  struct tfocl_op *op = context->op;
  int64_t n = shim_num_elements(output_dims, output_num_dims);

  if (forwarded_input != NULL)
    *forwarded_input = -1;
  if (output_index < 0 || output_index >= context->num_outputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "output index out of range");
    return NULL;
  }
  for (int c = 0; c < num_candidate_input_indices; c++) {
    int i = candidate_input_indices[c];
    TF_Tensor *in, *fwd, *ret;
    if (i < 0 || i >= context->num_inputs)
      continue;
    in = context->inputs[i];
    /* TensorFlow forwards only an unshared buffer of the same type, size
     * and memory type. */
    if (in->dtype != op->node.output_types[output_index] ||
        TF_TensorElementCount(in) != n ||
        op->input_on_host[i] != op->output_on_host[output_index] ||
        in->buf->kind == SHIM_BUFFER_EMPTY || shim_buffer_refcount(in) != 1)
      continue;
    fwd = shim_tensor_reshape_ref(in, output_dims, output_num_dims);
    ret = fwd != NULL ? shim_tensor_ref(fwd) : NULL;
    if (ret == NULL) {
      TF_DeleteTensor(fwd);
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
      return NULL;
    }
    TF_DeleteTensor(context->outputs[output_index]);
    context->outputs[output_index] = fwd;
    if (forwarded_input != NULL)
      *forwarded_input = i;
    shim_set_ok(status);
    return ret;
  }
  return TF_AllocateOutput(context, output_index,
                           op->node.output_types[output_index], output_dims,
                           output_num_dims, 0, status);
}

TF_Tensor *TF_AllocateTemp(TF_OpKernelContext *context, TF_DataType dtype,
                           const int64_t *dims, int num_dims,
                           TF_AllocatorAttributes *alloc_attrs,
                           TF_Status *status)
{
  bool on_host = false;

  if (alloc_attrs != NULL) {
    if (alloc_attrs->struct_size == 0) {
      shim_set_status(status, TF_FAILED_PRECONDITION,
                      "Expected initialized `TF_AllocatorAttributes` "
                      "structure with `struct_size` field set to "
                      "TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE. Found "
                      "`struct_size` = 0.");
      return NULL;
    }
    on_host = alloc_attrs->on_host != 0;
  }
  TF_Tensor *t =
      shim_ctx_alloc(context, dtype, dims, num_dims, on_host, status);
  if (t != NULL && !poison(context, on_host, t, status)) {
    TF_DeleteTensor(t);
    return NULL;
  }
  return t;
}

void TF_IncNumDeferredOps(TF_OpKernelContext *context) { (void)context; }

void TF_DecNumDeferredOps(TF_OpKernelContext *context) { (void)context; }

void TF_RunAsyncOpKernelDoneCallback(TF_AsyncOpKernelDoneCallback *done)
{
  pthread_mutex_lock(&done->lock);
  done->done = true;
  pthread_cond_broadcast(&done->cond);
  pthread_mutex_unlock(&done->lock);
}
