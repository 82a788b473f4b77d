/* The op runner: one node, its kernel chosen and constructed as
 * TensorFlow's CreateOpKernel does, and compute calls with inputs moved to
 * where the kernel wants them. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

static _Atomic int64_t next_step_id = 1;

/* Where each flat input/output lives: HostMemory names op-def args. */
static bool memory_types(struct tfocl_op *op, TF_Status *status)
{
  const struct shim_node *node = &op->node;
  const struct shim_op_def *def = node->def;

  op->input_on_host = calloc((size_t)node->num_inputs + 1, sizeof(bool));
  op->output_on_host = calloc((size_t)node->num_outputs + 1, sizeof(bool));
  if (op->input_on_host == NULL || op->output_on_host == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return false;
  }
  /* DT_RESOURCE lives in host memory whatever the kernel says, as in
   * TensorFlow's MemoryTypesForNode (MTypeFromDType). */
  for (int i = 0; i < node->num_inputs; i++)
    op->input_on_host[i] = node->input_types[i] == TF_RESOURCE;
  for (int i = 0; i < node->num_outputs; i++)
    op->output_on_host[i] = node->output_types[i] == TF_RESOURCE;
  for (int h = 0; h < op->kernel->b.num_host_memory; h++) {
    const char *name = op->kernel->b.host_memory[h];
    bool found = false;
    for (int a = 0; a < def->num_inputs; a++) {
      if (strcmp(def->inputs[a].name, name) != 0)
        continue;
      for (int i = node->input_arg_start[a]; i < node->input_arg_start[a + 1];
           i++)
        op->input_on_host[i] = true;
      found = true;
    }
    for (int a = 0; a < def->num_outputs; a++) {
      if (strcmp(def->outputs[a].name, name) != 0)
        continue;
      for (int i = node->output_arg_start[a];
           i < node->output_arg_start[a + 1]; i++)
        op->output_on_host[i] = true;
      found = true;
    }
    if (!found) {
      shim_set_status(status, TF_INVALID_ARGUMENT,
                      "HostMemory arg '%s' of kernel '%s' is not an input "
                      "or output of Op<name=%s; signature=%s>",
                      name, op->kernel->kernel_name, def->name,
                      def->signature);
      return false;
    }
  }
  return true;
}

struct tfocl_op *tfocl_op_create(struct tfocl_device *device,
                                 const char *op_name,
                                 const struct tfocl_attr *attrs,
                                 int num_attrs,
                                 const TF_DataType *input_types,
                                 int num_inputs, TF_Status *status)
{
  const struct shim_op_def *def;
  struct tfocl_op *op;
  TF_OpKernelConstruction cons;

  if (device == NULL || op_name == NULL || num_attrs < 0 || num_inputs < 0 ||
      (num_attrs > 0 && attrs == NULL) ||
      (num_inputs > 0 && input_types == NULL)) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "tfocl_op_create: invalid arguments");
    return NULL;
  }
  def = shim_op_def_find(op_name);
  if (def == NULL) {
    shim_set_status(status, TF_NOT_FOUND,
                    "Op type not registered '%s' in binary running on the "
                    "tfocl host shim. Add its signature with "
                    "tfocl_op_def_add or to host_shim/op_def_table.c.",
                    op_name);
    return NULL;
  }
  op = calloc(1, sizeof(*op));
  if (op == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  op->device = device;
  pthread_mutex_init(&op->lock, NULL);
  if (!shim_node_init(&op->node, def, attrs, num_attrs, input_types,
                      num_inputs, status))
    goto fail_op;
  op->kernel =
      shim_registry_find(&op->node, device->plugin->device_type, status);
  if (op->kernel == NULL)
    goto fail_node;
  if (!memory_types(op, status))
    goto fail_kernel;

  cons = (TF_OpKernelConstruction){.op = op, .failure = TF_NewStatus()};
  if (cons.failure == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail_kernel;
  }
  if (op->kernel->b.create_func != NULL)
    op->kernel_state = op->kernel->b.create_func(&cons);
  if (!shim_ok(cons.failure)) {
    shim_copy_status(status, cons.failure);
    TF_DeleteStatus(cons.failure);
    /* TensorFlow deletes a kernel whose construction failed. */
    if (op->kernel->b.delete_func != NULL && op->kernel_state != NULL)
      op->kernel->b.delete_func(op->kernel_state);
    goto fail_kernel;
  }
  TF_DeleteStatus(cons.failure);
  shim_set_ok(status);
  return op;

fail_kernel:
  shim_kernel_unref(op->kernel);
fail_node:
  shim_node_finish(&op->node);
fail_op:
  free(op->input_on_host);
  free(op->output_on_host);
  pthread_mutex_destroy(&op->lock);
  free(op);
  return NULL;
}

void tfocl_op_destroy(struct tfocl_op *op)
{
  if (op == NULL)
    return;
  if (op->kernel->b.delete_func != NULL)
    op->kernel->b.delete_func(op->kernel_state);
  shim_kernel_unref(op->kernel);
  shim_node_finish(&op->node);
  free(op->input_on_host);
  free(op->output_on_host);
  pthread_mutex_destroy(&op->lock);
  free(op);
}

int tfocl_op_num_outputs(const struct tfocl_op *op)
{
  return op != NULL ? op->node.num_outputs : 0;
}

/* An op registered with a shape function (TF_RegisterOpDefinition): what
 * TensorFlow would have inferred from the inputs' shapes must be what the
 * kernel produced. TensorFlow infers at graph construction and never
 * checks again; the shim checks both sides of the contract. */
static void check_shapes(const struct tfocl_op *op, TF_Tensor *const *inputs,
                         TF_Tensor *const *outputs, TF_Status *status)
{
  const struct shim_node *node = &op->node;
  struct tfocl_shape *in = calloc((size_t)node->num_inputs + 1, sizeof(*in));
  struct tfocl_shape_result *out =
      calloc((size_t)node->num_outputs + 1, sizeof(*out));
  int64_t **dims = calloc((size_t)node->num_inputs + 1, sizeof(*dims));
  bool ok = in != NULL && out != NULL && dims != NULL;
  for (int i = 0; ok && i < node->num_inputs; i++) {
    int rank = TF_NumDims(inputs[i]);
    dims[i] = calloc((size_t)rank + 1, sizeof(int64_t));
    ok = dims[i] != NULL;
    for (int d = 0; ok && d < rank; d++)
      dims[i][d] = TF_Dim(inputs[i], d);
    in[i] = (struct tfocl_shape){dims[i], rank};
  }
  if (!ok) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto done;
  }
  if (!shim_infer_shapes(node, in, out, status)) {
    shim_set_status(status, TF_INTERNAL,
                    "%s: the kernel ran, but the op's shape function rejects "
                    "its inputs: %s",
                    node->name, TF_Message(status));
    goto done;
  }
  for (int i = 0; i < node->num_outputs; i++) {
    int rank = TF_NumDims(outputs[i]);
    bool same = out[i].num_dims < 0 || out[i].num_dims == rank;
    for (int d = 0; same && out[i].num_dims >= 0 && d < rank; d++)
      same = out[i].dims[d] < 0 || out[i].dims[d] == TF_Dim(outputs[i], d);
    if (!same) {
      struct shim_strbuf want = {0}, got = {0};
      int64_t *got_dims = calloc((size_t)rank + 1, sizeof(int64_t));
      for (int d = 0; got_dims != NULL && d < rank; d++)
        got_dims[d] = TF_Dim(outputs[i], d);
      shim_format_shape(&want, out[i].dims, out[i].num_dims);
      if (got_dims != NULL)
        shim_format_shape(&got, got_dims, rank);
      shim_set_status(status, TF_INTERNAL,
                      "%s: the shape function says output %d is %s, the "
                      "kernel made %s",
                      node->name, i, shim_strbuf_str(&want),
                      shim_strbuf_str(&got));
      shim_strbuf_finish(&want);
      shim_strbuf_finish(&got);
      free(got_dims);
      goto done;
    }
  }
  shim_set_ok(status);
done:
  for (int i = 0; dims != NULL && i < node->num_inputs; i++)
    free(dims[i]);
  for (int i = 0; out != NULL && i < node->num_outputs; i++)
    free(out[i].dims);
  free(dims);
  free(in);
  free(out);
}

/* A reference to `t` where input i must live. */
static TF_Tensor *place_input(struct tfocl_op *op, int i, const TF_Tensor *t,
                              TF_Status *status)
{
  if (op->input_on_host[i])
    return tfocl_tensor_to_host(t, status);
  if (tfocl_tensor_device(t) == op->device || t->buf->kind == SHIM_BUFFER_EMPTY) {
    TF_Tensor *r = shim_tensor_ref(t);
    if (r == NULL)
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    else
      shim_set_ok(status);
    return r;
  }
  return tfocl_tensor_to_device(op->device, t, status);
}

static void run_kernel(struct tfocl_op *op, TF_OpKernelContext *ctx)
{
  TF_AsyncOpKernelDoneCallback done;

  if (op->kernel->b.compute_func != NULL) {
    op->kernel->b.compute_func(op->kernel_state, ctx);
    return;
  }
  /* Async kernels: wait for done, whichever thread calls it. */
  pthread_mutex_init(&done.lock, NULL);
  pthread_cond_init(&done.cond, NULL);
  done.done = false;
  op->kernel->b.compute_async_func(op->kernel_state, ctx, &done);
  pthread_mutex_lock(&done.lock);
  while (!done.done)
    pthread_cond_wait(&done.cond, &done.lock);
  pthread_mutex_unlock(&done.lock);
  pthread_cond_destroy(&done.cond);
  pthread_mutex_destroy(&done.lock);
}

void tfocl_op_compute(struct tfocl_op *op, TF_Tensor *const *inputs,
                      int num_inputs, TF_Tensor **outputs, int max_outputs,
                      TF_Status *status)
{
  TF_OpKernelContext ctx = {0};
  int n_in, n_out;

  if (op == NULL || (num_inputs > 0 && inputs == NULL) ||
      (max_outputs > 0 && outputs == NULL)) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "tfocl_op_compute: invalid arguments");
    return;
  }
  n_in = op->node.num_inputs;
  n_out = op->node.num_outputs;
  if (num_inputs != n_in) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "%s expects %d inputs, %d were given", op->node.name,
                    n_in, num_inputs);
    return;
  }
  if (max_outputs < n_out) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "%s has %d outputs, room for %d was given", op->node.name,
                    n_out, max_outputs);
    return;
  }
  for (int i = 0; i < n_in; i++) {
    if (inputs[i] == NULL || inputs[i]->dtype != op->node.input_types[i]) {
      shim_set_status(status, TF_INVALID_ARGUMENT,
                      "Input %d of %s: expected %s, got %s", i,
                      op->node.name,
                      tfocl_type_name(op->node.input_types[i]),
                      inputs[i] ? tfocl_type_name(inputs[i]->dtype) : "NULL");
      return;
    }
  }

  ctx.op = op;
  ctx.num_inputs = n_in;
  ctx.num_outputs = n_out;
  ctx.inputs = calloc((size_t)n_in + 1, sizeof(TF_Tensor *));
  ctx.outputs = calloc((size_t)n_out + 1, sizeof(TF_Tensor *));
  ctx.failure = TF_NewStatus();
  ctx.step_id = atomic_fetch_add(&next_step_id, 1);
  if (ctx.inputs == NULL || ctx.outputs == NULL || ctx.failure == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto done;
  }
  for (int i = 0; i < n_in; i++) {
    ctx.inputs[i] = place_input(op, i, inputs[i], status);
    if (ctx.inputs[i] == NULL) {
      shim_prefix_status(status, "copying an input to the kernel: ");
      goto done;
    }
  }

  pthread_mutex_lock(&op->lock);
  run_kernel(op, &ctx);
  pthread_mutex_unlock(&op->lock);

  if (!shim_ok(ctx.failure)) {
    shim_copy_status(status, ctx.failure);
    goto done;
  }
  for (int i = 0; i < n_out; i++) {
    if (ctx.outputs[i] == NULL) {
      shim_set_status(status, TF_INTERNAL,
                      "Kernel '%s' of %s: output %d was not set",
                      op->kernel->kernel_name, op->node.name, i);
      goto done;
    }
  }
  if (op->node.def->shape_fn != NULL) {
    check_shapes(op, ctx.inputs, ctx.outputs, status);
    if (!shim_ok(status))
      goto done;
  }
  for (int i = 0; i < n_out; i++) {
    outputs[i] = ctx.outputs[i];
    ctx.outputs[i] = NULL;
  }
  shim_set_ok(status);

done:
  for (int i = 0; ctx.inputs != NULL && i < n_in; i++)
    TF_DeleteTensor(ctx.inputs[i]);
  for (int i = 0; ctx.outputs != NULL && i < n_out; i++)
    TF_DeleteTensor(ctx.outputs[i]);
  free(ctx.inputs);
  free(ctx.outputs);
  TF_DeleteStatus(ctx.failure);
}

void tfocl_run_op(struct tfocl_device *device, const char *op_name,
                  const struct tfocl_attr *attrs, int num_attrs,
                  TF_Tensor *const *inputs, int num_inputs,
                  TF_Tensor **outputs, int max_outputs, int *num_outputs,
                  TF_Status *status)
{
  TF_DataType *types;
  struct tfocl_op *op;

  if (num_inputs < 0 || (num_inputs > 0 && inputs == NULL)) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "tfocl_run_op: invalid inputs");
    return;
  }
  types = calloc((size_t)num_inputs + 1, sizeof(*types));
  if (types == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  for (int i = 0; i < num_inputs; i++) {
    if (inputs[i] == NULL) {
      free(types);
      shim_set_status(status, TF_INVALID_ARGUMENT, "input %d is NULL", i);
      return;
    }
    types[i] = inputs[i]->dtype;
  }
  op = tfocl_op_create(device, op_name, attrs, num_attrs, types, num_inputs,
                       status);
  free(types);
  if (op == NULL)
    return;
  tfocl_op_compute(op, inputs, num_inputs, outputs, max_outputs, status);
  if (shim_ok(status) && num_outputs != NULL)
    *num_outputs = op->node.num_outputs;
  tfocl_op_destroy(op);
}
