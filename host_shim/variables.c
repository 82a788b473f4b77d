/* Resource variables, as TensorFlow core models them (framework/resource_var.h,
 * kernels/resource_variable_ops.cc), and the kernels_experimental.h functions
 * a device plugin updates them through (tensorflow/c/kernels_experimental.cc).
 *
 * A variable is a mutex + a device tensor + an initialized flag + the
 * copy-on-read mode. Its resource handle is a scalar host tensor of dtype
 * TF_RESOURCE whose buffer is the variable itself: every reference to the
 * handle's buffer holds one reference to the variable, so the variable goes
 * away with the last handle reference (and the lock holders' references).
 *
 * Copy-on-write: the variable's tensor is shared with whoever read it (a
 * kernel input, tfocl_variable_value). An update first copies the buffer
 * (the plugin's copyFunc) when anyone else still references it, so readers
 * keep the value they read, as TensorFlow's PrepareToUpdateVariable does.
 *
 * Callback arguments: TensorFlow hands copyFunc/updateFunc fresh TF_Tensors
 * (TF_TensorFromTensor) and never deletes them, so the callbacks own them.
 * The shim does the same: each argument is a new reference the callback
 * deletes.
 *
 * Locks: `mu` is TensorFlow's Var::mu(), exclusive for updates and shared for
 * reads (and for use_locking=false, as TensorFlow's tf_shared_lock). The
 * fields are also guarded by the short `state` lock, always taken after `mu`,
 * because lock-free (use_locking=false) updates may replace the tensor
 * concurrently. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/kernels_experimental.h"
#include "shim_internal.h"

/* TensorFlow's DenseUpdateType: the `Op` of TF_AssignUpdateVariable. */
#define SHIM_UPDATE_ADD 0
#define SHIM_UPDATE_SUB 1

struct shim_variable {
  _Atomic int refcount;
  pthread_rwlock_t mu;
  pthread_mutex_t state;
  struct tfocl_device *device;
  TF_DataType dtype;  /* 0 until known */
  TF_Tensor *tensor;  /* device tensor; NULL while uninitialized */
  bool copy_on_read_mode;
  char name[40];
};

struct TF_VariableInputLockHolder {
  struct shim_variable **vars; /* locked, in acquisition order, referenced */
  int num_vars;
  bool exclusive;
};

static _Atomic long long next_variable_id = 1;

/* ---- the variable object ------------------------------------------------ */

static void variable_unref(struct shim_variable *var)
{
  if (var == NULL ||
      atomic_fetch_sub_explicit(&var->refcount, 1, memory_order_acq_rel) != 1)
    return;
  TF_DeleteTensor(var->tensor);
  pthread_rwlock_destroy(&var->mu);
  pthread_mutex_destroy(&var->state);
  free(var);
}

static void variable_ref(struct shim_variable *var)
{
  atomic_fetch_add_explicit(&var->refcount, 1, memory_order_relaxed);
}

/* The handle buffer's deallocator: the last handle reference is gone. */
static void handle_release(void *data, size_t len, void *arg)
{
  (void)len;
  (void)arg;
  variable_unref(data);
}

/* The variable behind a resource handle tensor, or NULL if it is not one of
 * the shim's handles. No reference is taken: the handle keeps it alive. */
static struct shim_variable *variable_of(const TF_Tensor *handle)
{
  if (handle == NULL || handle->dtype != TF_RESOURCE ||
      handle->buf->kind != SHIM_BUFFER_HOST_EXTERNAL ||
      handle->buf->deallocator != handle_release)
    return NULL;
  return handle->buf->data;
}

static TF_Tensor *variable_new(struct tfocl_device *device, TF_DataType dtype,
                               TF_Status *status)
{
  struct shim_variable *var;
  TF_Tensor *handle;

  if (device == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT, "NULL device");
    return NULL;
  }
  var = calloc(1, sizeof(*var));
  if (var == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  var->refcount = 1; /* the handle's buffer */
  pthread_rwlock_init(&var->mu, NULL);
  pthread_mutex_init(&var->state, NULL);
  var->device = device;
  var->dtype = dtype;
  snprintf(var->name, sizeof(var->name), "Variable_%lld",
           atomic_fetch_add(&next_variable_id, 1));
  handle = TF_NewTensor(TF_RESOURCE, NULL, 0, var, sizeof(*var),
                        handle_release, NULL);
  if (handle == NULL) {
    /* TF_NewTensor has not taken the buffer: nothing references var. */
    variable_unref(var);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  shim_set_ok(status);
  return handle;
}

/* ResourceMgr's answer for a variable that does not exist yet, in the words
 * of ReadVariableOp (TensorFlow 2 creates the Var at the first assignment). */
static void set_not_found(TF_Status *status, const struct shim_variable *var)
{
  shim_set_status(status, TF_FAILED_PRECONDITION,
                  "Could not find variable %s. This could mean that the "
                  "variable has been deleted. In TF1, it can also mean the "
                  "variable is uninitialized. Debug info: container=localhost, "
                  "status error message=Resource "
                  "localhost/%s/N10tensorflow3VarE does not exist.",
                  var->name, var->name);
}

static void format_shape(struct shim_strbuf *b, const TF_Tensor *t)
{
  shim_format_shape(b, t->dims, t->num_dims);
}

static bool same_shape(const TF_Tensor *a, const TF_Tensor *b)
{
  return a->num_dims == b->num_dims &&
         (a->num_dims == 0 ||
          memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->num_dims) == 0);
}

/* ---- the public API (host.h) -------------------------------------------- */

TF_Tensor *tfocl_variable_create_uninitialized(struct tfocl_device *device,
                                               TF_DataType dtype,
                                               TF_Status *status)
{
  return variable_new(device, dtype, status);
}

TF_Tensor *tfocl_variable_create(struct tfocl_device *device,
                                 const TF_Tensor *initial_value,
                                 TF_Status *status)
{
  TF_Tensor *handle;

  if (initial_value == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "tfocl_variable_create: NULL initial value (use "
                    "tfocl_variable_create_uninitialized)");
    return NULL;
  }
  handle = variable_new(device, initial_value->dtype, status);
  if (handle == NULL)
    return NULL;
  tfocl_variable_assign(handle, initial_value, status);
  if (!shim_ok(status)) {
    TF_DeleteTensor(handle);
    return NULL;
  }
  return handle;
}

const char *tfocl_variable_name(const TF_Tensor *handle)
{
  const struct shim_variable *var = variable_of(handle);
  return var != NULL ? var->name : NULL;
}

bool tfocl_variable_is_initialized(const TF_Tensor *handle)
{
  struct shim_variable *var = variable_of(handle);
  bool initialized;

  if (var == NULL)
    return false;
  pthread_mutex_lock(&var->state);
  initialized = var->tensor != NULL;
  pthread_mutex_unlock(&var->state);
  return initialized;
}

static struct shim_variable *public_variable(const TF_Tensor *handle,
                                             TF_Status *status)
{
  struct shim_variable *var = variable_of(handle);
  if (var == NULL)
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Expected a resource variable handle (a DT_RESOURCE "
                    "tensor from tfocl_variable_create), got %s",
                    handle != NULL ? tfocl_type_name(handle->dtype) : "NULL");
  return var;
}

void tfocl_variable_assign(const TF_Tensor *handle, const TF_Tensor *value,
                           TF_Status *status)
{
  struct shim_variable *var = public_variable(handle, status);
  TF_Tensor *t, *old;

  if (var == NULL)
    return;
  if (value == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT, "NULL value");
    return;
  }
  pthread_rwlock_wrlock(&var->mu);
  pthread_mutex_lock(&var->state);
  /* AssignVariableOp's check: an initialized variable keeps its dtype. */
  if (var->tensor != NULL && var->dtype != value->dtype) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Trying to assign variable with wrong dtype. Expected %s "
                    "got %s",
                    shim_type_short_name(var->dtype),
                    shim_type_short_name(value->dtype));
    goto out;
  }
  /* TensorFlow shares the value's buffer (later updates copy on write);
   * in copy-on-read mode, or from another place, it copies. */
  if (tfocl_tensor_device(value) == var->device && !var->copy_on_read_mode) {
    t = shim_tensor_ref(value);
    if (t == NULL)
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    else
      shim_set_ok(status);
  } else {
    t = tfocl_tensor_to_device(var->device, value, status);
  }
  if (t == NULL)
    goto out;
  old = var->tensor;
  var->tensor = t;
  var->dtype = value->dtype;
  TF_DeleteTensor(old);
out:
  pthread_mutex_unlock(&var->state);
  pthread_rwlock_unlock(&var->mu);
}

/* A reference to the variable's current tensor (shared lock), or NULL with
 * the uninitialized error. */
static TF_Tensor *current_tensor(struct shim_variable *var, bool copy_on_read,
                                 TF_Status *status)
{
  TF_Tensor *t = NULL;

  pthread_rwlock_rdlock(&var->mu);
  pthread_mutex_lock(&var->state);
  if (var->tensor == NULL) {
    set_not_found(status, var);
  } else if (copy_on_read && var->copy_on_read_mode) {
    /* ReadVariableOp copies in copy-on-read mode: sparse updates write the
     * buffer in place. */
    t = tfocl_tensor_to_device(var->device, var->tensor, status);
  } else {
    t = shim_tensor_ref(var->tensor);
    if (t == NULL)
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    else
      shim_set_ok(status);
  }
  pthread_mutex_unlock(&var->state);
  pthread_rwlock_unlock(&var->mu);
  return t;
}

TF_Tensor *tfocl_variable_value(const TF_Tensor *handle, TF_Status *status)
{
  struct shim_variable *var = public_variable(handle, status);
  return var != NULL ? current_tensor(var, true, status) : NULL;
}

TF_Tensor *tfocl_variable_read(const TF_Tensor *handle, TF_Status *status)
{
  struct shim_variable *var = public_variable(handle, status);
  TF_Tensor *t, *host;

  if (var == NULL)
    return NULL;
  /* The reference makes any concurrent update copy first, so the transfer
   * needs no lock. */
  t = current_tensor(var, false, status);
  if (t == NULL)
    return NULL;
  host = tfocl_tensor_to_host(t, status);
  TF_DeleteTensor(t);
  return host;
}

/* ---- kernels_experimental.h ------------------------------------------------ */

/* The variable of resource input `index`, checked to live on the kernel's
 * device. NULL with the status (and the kernel) failed. */
static struct shim_variable *input_variable(TF_OpKernelContext *ctx,
                                            int index, TF_Status *status)
{
  struct shim_variable *var;

  if (index < 0 || index >= ctx->num_inputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "input index %d out of range",
                    index);
    return NULL;
  }
  var = variable_of(ctx->inputs[index]);
  if (var == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Input %d of %s is not a resource variable handle (%s)",
                    index, ctx->op->node.name,
                    tfocl_type_name(ctx->inputs[index]->dtype));
    return NULL;
  }
  if (var->device != ctx->op->device) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Trying to access resource %s located in device %s from "
                    "device %s",
                    var->name, var->device->name, ctx->op->device->name);
    return NULL;
  }
  return var;
}

/* Errors of these functions fail the kernel too, as OP_REQUIRES does. */
static void fail(TF_OpKernelContext *ctx, TF_Status *status)
{
  if (!shim_ok(status))
    shim_copy_status(ctx->failure, status);
}

/* *slot := a new device tensor holding a copy of *slot, through the
 * plugin's copyFunc (TensorFlow's allocate_temp + copyFunc). Caller holds
 * var->state. */
static bool copy_variable_tensor(TF_OpKernelContext *ctx,
                                 struct shim_variable *var,
                                 TF_VariableCopyFn copy_fn, TF_Status *status)
{
  TF_Tensor *old = var->tensor, *tmp, *src, *dst;

  if (copy_fn == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Variable %s must be copied before the update, but no "
                    "copyFunc was given",
                    var->name);
    return false;
  }
  tmp = shim_ctx_alloc(ctx, old->dtype, old->dims, old->num_dims, false,
                       status);
  if (tmp == NULL)
    return false;
  src = shim_tensor_ref(old);
  dst = shim_tensor_ref(tmp);
  if (src == NULL || dst == NULL) {
    TF_DeleteTensor(src);
    TF_DeleteTensor(dst);
    TF_DeleteTensor(tmp);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return false;
  }
  copy_fn(ctx, src, dst); /* owns src and dst */
  if (!shim_ok(ctx->failure)) {
    shim_copy_status(status, ctx->failure);
    TF_DeleteTensor(tmp);
    return false;
  }
  var->tensor = tmp;
  TF_DeleteTensor(old);
  shim_set_ok(status);
  return true;
}

/* PrepareToUpdateVariable: copy when a reader shares the buffer, or always
 * in copy-on-read mode. Caller holds var->state. */
static bool prepare_to_update(TF_OpKernelContext *ctx,
                              struct shim_variable *var,
                              TF_VariableCopyFn copy_fn, TF_Status *status)
{
  shim_set_ok(status);
  if (!var->copy_on_read_mode && shim_buffer_refcount(var->tensor) == 1)
    return true;
  return copy_variable_tensor(ctx, var, copy_fn, status);
}

/* EnsureSparseVariableAccess: switch to copy-on-read mode, copying first
 * if a reader shares the buffer. Caller holds var->state. */
static bool ensure_sparse_access(TF_OpKernelContext *ctx,
                                 struct shim_variable *var,
                                 TF_VariableCopyFn copy_fn, TF_Status *status)
{
  shim_set_ok(status);
  if (var->copy_on_read_mode || var->tensor == NULL)
    return true;
  if (shim_buffer_refcount(var->tensor) != 1 &&
      !copy_variable_tensor(ctx, var, copy_fn, status))
    return false;
  var->copy_on_read_mode = true;
  return true;
}

void TF_AssignVariable(TF_OpKernelContext *ctx, int input_index,
                       int value_index, bool validate_shape,
                       TF_VariableCopyFn copyFunc, TF_Status *status)
{
  struct shim_variable *var = input_variable(ctx, input_index, status);
  const TF_Tensor *value;
  TF_Tensor *t = NULL, *old;
  struct shim_strbuf a = {0}, b = {0};

  if (var == NULL)
    goto out;
  if (value_index < 0 || value_index >= ctx->num_inputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "input index %d out of range",
                    value_index);
    goto out;
  }
  value = ctx->inputs[value_index];
  pthread_rwlock_wrlock(&var->mu);
  pthread_mutex_lock(&var->state);
  if (validate_shape && var->tensor != NULL && !same_shape(var->tensor, value)) {
    format_shape(&a, var->tensor);
    format_shape(&b, value);
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Trying to assign to variable with tensor with wrong "
                    "shape. Expected %s got %s",
                    shim_strbuf_str(&a), shim_strbuf_str(&b));
  } else if (var->tensor != NULL && var->dtype != value->dtype) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Trying to assign variable with wrong dtype. Expected %s "
                    "got %s",
                    shim_type_short_name(var->dtype),
                    shim_type_short_name(value->dtype));
  } else if (var->copy_on_read_mode) {
    /* Sparse readers hold raw pointers: never share the value's buffer. */
    old = var->tensor;
    var->tensor = shim_tensor_ref(value);
    if (var->tensor != NULL && copy_variable_tensor(ctx, var, copyFunc, status))
      TF_DeleteTensor(old);
    else {
      TF_DeleteTensor(var->tensor);
      var->tensor = old;
      if (shim_ok(status))
        shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    }
  } else {
    t = shim_tensor_ref(value);
    if (t == NULL) {
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    } else {
      old = var->tensor;
      var->tensor = t;
      TF_DeleteTensor(old);
      shim_set_ok(status);
    }
  }
  if (shim_ok(status))
    var->dtype = value->dtype;
  pthread_mutex_unlock(&var->state);
  pthread_rwlock_unlock(&var->mu);
out:
  shim_strbuf_finish(&a);
  shim_strbuf_finish(&b);
  fail(ctx, status);
}

void TF_AssignUpdateVariable(TF_OpKernelContext *ctx, int input_index,
                             int value_index, int Op, int isVariantType,
                             TF_VariableCopyFn copyFunc,
                             TF_VariableUpdateFn updateFunc,
                             TF_Status *status)
{
  struct shim_variable *var = input_variable(ctx, input_index, status);
  const TF_Tensor *value;
  TF_Tensor *t, *v;
  struct shim_strbuf a = {0}, b = {0};
  bool locked = false;

  if (var == NULL)
    goto out;
  if (value_index < 0 || value_index >= ctx->num_inputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "input index %d out of range",
                    value_index);
    goto out;
  }
  if (isVariantType) {
    shim_set_status(status, TF_UNIMPLEMENTED,
                    "The host shim has no variant variables");
    goto out;
  }
  value = ctx->inputs[value_index];
  pthread_rwlock_wrlock(&var->mu);
  pthread_mutex_lock(&var->state);
  locked = true;
  /* TensorFlow aborts the process here; the shim reports what
   * ReadVariableOp would. */
  if (var->tensor == NULL) {
    set_not_found(status, var);
    goto out;
  }
  if (var->dtype != value->dtype) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Trying to update variable with wrong dtype. Expected %s "
                    "got %s",
                    shim_type_short_name(var->dtype),
                    shim_type_short_name(value->dtype));
    goto out;
  }
  if (!same_shape(var->tensor, value)) {
    format_shape(&a, var->tensor);
    format_shape(&b, value);
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Cannot update variable with shape %s using a Tensor "
                    "with shape %s, shapes must be equal.",
                    shim_strbuf_str(&a), shim_strbuf_str(&b));
    goto out;
  }
  if (!prepare_to_update(ctx, var, copyFunc, status))
    goto out;
  t = shim_tensor_ref(var->tensor);
  v = shim_tensor_ref(value);
  if (t == NULL || v == NULL) {
    TF_DeleteTensor(t);
    TF_DeleteTensor(v);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto out;
  }
  updateFunc(ctx, t, v, Op); /* owns t and v */
  shim_set_ok(status);
out:
  if (locked) {
    pthread_mutex_unlock(&var->state);
    pthread_rwlock_unlock(&var->mu);
  }
  shim_strbuf_finish(&a);
  shim_strbuf_finish(&b);
  fail(ctx, status);
}

static int compare_variables(const void *a, const void *b)
{
  uintptr_t x = (uintptr_t) * (struct shim_variable *const *)a;
  uintptr_t y = (uintptr_t) * (struct shim_variable *const *)b;
  return x < y ? -1 : x > y;
}

void TF_MaybeLockVariableInputMutexesInOrder(
    TF_OpKernelContext *ctx, bool do_lock, bool sparse,
    const int *const inputs, size_t len, TF_VariableCopyFn copyFunc,
    TF_VariableInputLockHolder **lockHolder, TF_Status *status)
{
  struct TF_VariableInputLockHolder *h = calloc(1, sizeof(*h));
  int n = 0;

  if (h == NULL || (len > 0 && (h->vars = calloc(len, sizeof(*h->vars))) ==
                                   NULL)) {
    free(h);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    fail(ctx, status);
    return;
  }
  /* Only resource inputs have a mutex here: the shim has no ref inputs. */
  for (size_t i = 0; i < len; i++) {
    int index = inputs[i];
    struct shim_variable *var;
    bool seen = false;
    if (index < 0 || index >= ctx->num_inputs ||
        ctx->op->node.input_types[index] != TF_RESOURCE)
      continue;
    var = variable_of(ctx->inputs[index]);
    if (var == NULL) {
      /* TensorFlow's GetTrainingVariableMutex: the kernel fails, the
       * remaining variables are still locked. */
      shim_set_status(ctx->failure, TF_INTERNAL,
                      "Invalid variable reference.");
      continue;
    }
    for (int j = 0; j < n; j++)
      seen = seen || h->vars[j] == var;
    if (!seen)
      h->vars[n++] = var;
  }
  /* One global order (the mutexes' addresses, as TensorFlow) makes two
   * kernels that lock the same variables in another order deadlock-free. */
  qsort(h->vars, (size_t)n, sizeof(*h->vars), compare_variables);
  h->num_vars = n;
  h->exclusive = do_lock;
  for (int j = 0; j < n; j++) {
    variable_ref(h->vars[j]);
    if (do_lock)
      pthread_rwlock_wrlock(&h->vars[j]->mu);
    else
      pthread_rwlock_rdlock(&h->vars[j]->mu);
  }
  shim_set_ok(status);
  /* After locking, as TensorFlow: switching modes needs the lock held. */
  for (int j = 0; sparse && j < n; j++) {
    pthread_mutex_lock(&h->vars[j]->state);
    ensure_sparse_access(ctx, h->vars[j], copyFunc, status);
    pthread_mutex_unlock(&h->vars[j]->state);
    if (!shim_ok(status))
      break;
  }
  *lockHolder = h;
  fail(ctx, status);
}

void TF_ReleaseVariableInputLockHolder(TF_VariableInputLockHolder *lockHolder)
{
  if (lockHolder == NULL)
    return;
  for (int j = lockHolder->num_vars - 1; j >= 0; j--) {
    pthread_rwlock_unlock(&lockHolder->vars[j]->mu);
    variable_unref(lockHolder->vars[j]);
  }
  free(lockHolder->vars);
  free(lockHolder);
}

void TF_GetInputTensorFromVariable(TF_OpKernelContext *ctx, int input,
                                   bool lock_held, bool isVariantType,
                                   bool sparse, TF_VariableCopyFn copyFunc,
                                   TF_Tensor **out, TF_Status *status)
{
  struct shim_variable *var;
  TF_Tensor *t = NULL;

  /* The locks are the caller's (TF_MaybeLockVariableInputMutexesInOrder). */
  (void)lock_held;
  if (input < 0 || input >= ctx->num_inputs) {
    shim_set_status(status, TF_OUT_OF_RANGE, "input index %d out of range",
                    input);
    fail(ctx, status);
    return;
  }
  if (ctx->op->node.input_types[input] != TF_RESOURCE) {
    /* A plain input stands for a ref variable: the tensor itself. */
    t = shim_tensor_ref(ctx->inputs[input]);
    if (t == NULL)
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    else
      shim_set_ok(status);
    goto done;
  }
  if (isVariantType) {
    shim_set_status(status, TF_UNIMPLEMENTED,
                    "The host shim has no variant variables");
    goto done;
  }
  var = input_variable(ctx, input, status);
  if (var == NULL)
    goto done;
  pthread_mutex_lock(&var->state);
  if (var->tensor == NULL)
    set_not_found(status, var);
  else if (sparse ? ensure_sparse_access(ctx, var, copyFunc, status)
                  : prepare_to_update(ctx, var, copyFunc, status)) {
    t = shim_tensor_ref(var->tensor);
    if (t == NULL)
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
  }
  pthread_mutex_unlock(&var->state);
done:
  if (t != NULL)
    *out = t;
  fail(ctx, status);
}
