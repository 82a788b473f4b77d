/* The runtime layer (kernels/runtime.h), implemented over the plugin's
 * device, stream and address-map internals (ocl.h): kernels/ declares what
 * it needs of the device, plugin/ provides it, and kernels/ is built
 * without plugin/ on its include path. */
#include "runtime.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"
#include "profiler/profiler.h"

/* ---- Kernel slots ------------------------------------------------------------ */

/* One cl_kernel of one program of one context. clSetKernelArg on a shared
 * cl_kernel is not thread-safe and TensorFlow runs ops from several
 * threads, so `lock` is held from the first clSetKernelArg to the end of
 * clEnqueueNDRangeKernel (which captures the arguments). Uncontended in
 * practice: the ops of a device go through one in-order compute queue. */
struct ocl_kernel_slot {
  struct ocl_context *context;
  cl_program program; /* owned by the program cache */
  char *name;
  cl_kernel kernel;   /* owned */
  pthread_mutex_t lock;
  /* The smallest over the context's devices: a slot serves all of them. */
  size_t max_local;
  size_t preferred_multiple;
};

/* Every slot, by (program, name): open addressing, power-of-two size. Only
 * the first launch of a struct ocl_kernel in a context comes here. */
static struct {
  pthread_mutex_t lock;
  struct ocl_kernel_slot **slots;
  size_t capacity;
  size_t count;
} registry = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t slot_hash(cl_program program, const char *name)
{
  /* FNV-1a over the name, mixed with the program handle. */
  uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)program;
  for (const char *c = name; *c; c++)
    h = (h ^ (unsigned char)*c) * 1099511628211ull;
  return (size_t)(h ^ (h >> 29));
}

/* Caller holds registry.lock. */
static struct ocl_kernel_slot **find_slot(cl_program program, const char *name)
{
  size_t mask = registry.capacity - 1;
  for (size_t i = slot_hash(program, name) & mask;; i = (i + 1) & mask) {
    struct ocl_kernel_slot *s = registry.slots[i];
    if (s == NULL || (s->program == program && strcmp(s->name, name) == 0))
      return &registry.slots[i];
  }
}

/* Caller holds registry.lock. */
static bool grow(void)
{
  size_t new_capacity = registry.capacity ? registry.capacity * 2 : 64;
  struct ocl_kernel_slot **old = registry.slots;
  size_t old_capacity = registry.capacity;
  struct ocl_kernel_slot **slots = calloc(new_capacity, sizeof(*slots));
  if (slots == NULL)
    return false;
  registry.slots = slots;
  registry.capacity = new_capacity;
  for (size_t i = 0; i < old_capacity; i++)
    if (old[i] != NULL)
      *find_slot(old[i]->program, old[i]->name) = old[i];
  free(old);
  return true;
}

/* CL_KERNEL_WORK_GROUP_SIZE and the preferred multiple, the smallest over
 * the context's devices. */
static cl_int query_limits(struct ocl_kernel_slot *s)
{
  const struct ocl_context *ctx = s->context;
  s->max_local = SIZE_MAX;
  s->preferred_multiple = SIZE_MAX;
  for (cl_uint d = 0; d < ctx->num_devices; d++) {
    size_t max_local = 0, multiple = 0;
    cl_int err = clGetKernelWorkGroupInfo(s->kernel, ctx->devices[d],
                                          CL_KERNEL_WORK_GROUP_SIZE,
                                          sizeof(max_local), &max_local, NULL);
    if (err != CL_SUCCESS)
      return err;
    err = clGetKernelWorkGroupInfo(
        s->kernel, ctx->devices[d],
        CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof(multiple),
        &multiple, NULL);
    if (err != CL_SUCCESS)
      return err;
    if (max_local < s->max_local)
      s->max_local = max_local;
    if (multiple < s->preferred_multiple)
      s->preferred_multiple = multiple;
  }
  if (s->max_local == 0 || s->max_local == SIZE_MAX)
    s->max_local = 1;
  if (s->preferred_multiple == 0 || s->preferred_multiple == SIZE_MAX)
    s->preferred_multiple = 1;
  return CL_SUCCESS;
}

/* The slot of (program, name) in dev's context, made on first use. */
static struct ocl_kernel_slot *slot_get(struct ocl_device *dev,
                                        const struct ocl_program *p,
                                        const char *name, TF_Status *status)
{
  struct ocl_kernel_slot *slot = NULL;
  cl_program program = ocl_program_get(dev, p->name, p->source,
                                       p->build_options, status);
  if (program == NULL)
    return NULL;

  pthread_mutex_lock(&registry.lock);
  if ((registry.count + 1) * 2 > registry.capacity && !grow()) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                   "out of host memory for the kernel registry");
    goto out;
  }
  struct ocl_kernel_slot **at = find_slot(program, name);
  if (*at != NULL) {
    slot = *at;
    goto out;
  }
  cl_int err;
  cl_kernel kernel = clCreateKernel(program, name, &err);
  if (err != CL_SUCCESS) {
    char call[160];
    snprintf(call, sizeof(call), "clCreateKernel(%s)", name);
    ocl_set_cl_error(status, err, call);
    goto out;
  }
  struct ocl_kernel_slot *s = calloc(1, sizeof(*s));
  char *name_copy = strdup(name);
  if (s == NULL || name_copy == NULL) {
    free(s);
    free(name_copy);
    clReleaseKernel(kernel);
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                   "out of host memory for the kernel registry");
    goto out;
  }
  s->context = dev->ctx;
  s->program = program;
  s->name = name_copy;
  s->kernel = kernel;
  err = query_limits(s);
  if (err != CL_SUCCESS) {
    ocl_set_cl_error(status, err, "clGetKernelWorkGroupInfo");
    clReleaseKernel(kernel);
    free(name_copy);
    free(s);
    goto out;
  }
  pthread_mutex_init(&s->lock, NULL);
  *at = s;
  registry.count++;
  slot = s;
out:
  pthread_mutex_unlock(&registry.lock);
  return slot;
}

void ocl_kernel_cache_clear(void)
{
  pthread_mutex_lock(&registry.lock);
  for (size_t i = 0; i < registry.capacity; i++) {
    struct ocl_kernel_slot *s = registry.slots[i];
    if (s == NULL)
      continue;
    clReleaseKernel(s->kernel);
    pthread_mutex_destroy(&s->lock);
    free(s->name);
    free(s);
  }
  free(registry.slots);
  registry.slots = NULL;
  registry.capacity = 0;
  registry.count = 0;
  pthread_mutex_unlock(&registry.lock);
}

bool ocl_kernel_init(struct ocl_kernel *kernel,
                     const struct ocl_program *program, const char *name)
{
  return ocl_kernel_initf(kernel, program, "%s", name);
}

bool ocl_kernel_initf(struct ocl_kernel *kernel,
                      const struct ocl_program *program, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(kernel->name, sizeof(kernel->name), fmt, ap);
  va_end(ap);
  kernel->program = program;
  atomic_init(&kernel->slot, NULL);
  return n > 0 && (size_t)n < sizeof(kernel->name);
}

/* The kernel's slot for the op's device: one atomic load once resolved.
 * The slot cached is the first context's; a kernel instance used in
 * another context (two OpenCL platforms) looks its slot up each time. */
static struct ocl_kernel_slot *resolve(struct ocl_op *op,
                                       struct ocl_kernel *kernel)
{
  if (!ocl_op_device(op))
    return NULL;
  struct ocl_kernel_slot *slot =
      atomic_load_explicit(&kernel->slot, memory_order_acquire);
  if (slot != NULL && slot->context == op->device->ctx)
    return slot;
  slot = slot_get(op->device, kernel->program, kernel->name, op->status);
  if (slot != NULL) {
    struct ocl_kernel_slot *expected = NULL;
    atomic_compare_exchange_strong_explicit(&kernel->slot, &expected, slot,
                                            memory_order_acq_rel,
                                            memory_order_acquire);
  }
  return slot;
}

size_t ocl_kernel_max_local(struct ocl_op *op, struct ocl_kernel *kernel)
{
  struct ocl_kernel_slot *slot = resolve(op, kernel);
  if (slot == NULL)
    return 0;
  size_t device_max = op->info->max_work_group_size;
  return slot->max_local < device_max ? slot->max_local : device_max;
}

size_t ocl_kernel_preferred_multiple(struct ocl_op *op,
                                     struct ocl_kernel *kernel)
{
  struct ocl_kernel_slot *slot = resolve(op, kernel);
  return slot != NULL ? slot->preferred_multiple : 0;
}

size_t ocl_kernel_fit_local(struct ocl_op *op, struct ocl_kernel *kernel,
                            size_t wanted)
{
  size_t max = ocl_kernel_max_local(op, kernel);
  if (max == 0)
    return 0;
  size_t local = 1;
  while (local * 2 <= wanted && local * 2 <= max)
    local *= 2;
  return local;
}

size_t ocl_elementwise_local(const struct ocl_device_info *info)
{
  /* 256 reached the host's memory bandwidth on PoCL; GPUs are happy with
   * it too. Never above what the device allows. */
  return info->max_work_group_size < 256 ? info->max_work_group_size : 256;
}

/* ---- One compute call ------------------------------------------------------ */

void ocl_op_begin(struct ocl_op *op, TF_OpKernelContext *ctx)
{
  op->ctx = ctx;
  op->status = ocl_tf.NewStatus();
  op->device = NULL;
  op->stream = NULL;
  op->queue = NULL;
  op->info = NULL;
  op->num_owned = 0;
}

void ocl_op_end(struct ocl_op *op)
{
  for (int i = 0; i < op->num_owned; i++)
    if (op->owned[i] != NULL)
      ocl_tf.DeleteTensor(op->owned[i]);
  op->num_owned = 0;
  if (ocl_tf.GetCode(op->status) != TF_OK)
    ocl_tf.OpKernelContext_Failure(op->ctx, op->status);
  ocl_tf.DeleteStatus(op->status);
  op->status = NULL;
}

bool ocl_op_fail(struct ocl_op *op, TF_Code code, const char *fmt, ...)
{
  char message[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof(message), fmt, ap);
  va_end(ap);
  ocl_tf.SetStatus(op->status, code, message);
  return false;
}

/* Takes ownership of t (deleted at ocl_op_end). */
static bool own(struct ocl_op *op, TF_Tensor *t)
{
  if (op->num_owned == OCL_OP_MAX_OWNED) {
    ocl_tf.DeleteTensor(t);
    return ocl_op_fail(op, TF_INTERNAL,
                       "an OPENCL kernel held more than %d tensors at once",
                       OCL_OP_MAX_OWNED);
  }
  op->owned[op->num_owned++] = t;
  return true;
}

TF_Tensor *ocl_op_input(struct ocl_op *op, int index)
{
  TF_Tensor *t = NULL;
  ocl_tf.GetInput(op->ctx, index, &t, op->status);
  if (ocl_tf.GetCode(op->status) != TF_OK) {
    if (t != NULL)
      ocl_tf.DeleteTensor(t);
    return NULL;
  }
  return own(op, t) ? t : NULL;
}

/* TensorFlow builds a TensorShape from every shape a kernel allocates and
 * aborts the process on one it cannot hold (TensorShape::AddDimWithStatus
 * would say why): every allocation is checked here first, with TensorFlow's
 * words, so that input values that make a shape (Tile's multiples, Fill's
 * dims, Range's limits, ...) give InvalidArgumentError. */
static bool shape_fits(struct ocl_op *op, const int64_t *dims, int rank)
{
  int64_t n = 1;

  if (rank > 254)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Too many dimensions in tensor: %d (at most 254)",
                       rank);
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "Dimension %lld must be >= 0", (long long)dims[i]);
    if (dims[i] != 0 && n > INT64_MAX / dims[i])
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "Encountered overflow when multiplying %lld with "
                         "%lld, result: -1",
                         (long long)n, (long long)dims[i]);
    n *= dims[i];
  }
  return true;
}

bool ocl_op_dim_product(struct ocl_op *op, int64_t a, int64_t b,
                        int64_t *product)
{
  if (__builtin_mul_overflow(a, b, product))
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Encountered overflow when multiplying %lld with "
                       "%lld, result: -1",
                       (long long)a, (long long)b);
  return true;
}

TF_Tensor *ocl_op_output(struct ocl_op *op, int index, TF_DataType dtype,
                         const int64_t *dims, int rank)
{
  if (!shape_fits(op, dims, rank))
    return NULL;
  TF_Tensor *t = ocl_tf.AllocateOutput(op->ctx, index, dtype, dims, rank, 0,
                                       op->status);
  if (ocl_tf.GetCode(op->status) != TF_OK) {
    if (t != NULL)
      ocl_tf.DeleteTensor(t);
    return NULL;
  }
  return own(op, t) ? t : NULL;
}

TF_Tensor *ocl_op_output_forward(struct ocl_op *op, int index,
                                 const int *candidates, int num_candidates,
                                 const int64_t *dims, int rank,
                                 int *forwarded)
{
  *forwarded = -1;
  if (!shape_fits(op, dims, rank))
    return NULL;
  if (ocl_tf.ForwardInputOrAllocateOutput == NULL)
    return ocl_op_output(op, index, ocl_tf.ExpectedOutputDataType(op->ctx,
                                                                  index),
                         dims, rank);
  TF_Tensor *t = ocl_tf.ForwardInputOrAllocateOutput(
      op->ctx, candidates, num_candidates, index, dims, rank, forwarded,
      op->status);
  if (ocl_tf.GetCode(op->status) != TF_OK) {
    if (t != NULL)
      ocl_tf.DeleteTensor(t);
    return NULL;
  }
  return own(op, t) ? t : NULL;
}

TF_Tensor *ocl_op_output_over_inputs(struct ocl_op *op, int index,
                                     TF_Tensor **held, const int *candidates,
                                     int num_candidates, const int64_t *dims,
                                     int rank, int *forwarded)
{
  /* TensorFlow hands over only a buffer nothing else references, and the
   * TF_Tensor TF_GetInput gave is a reference: this op's go first. */
  for (int c = 0; c < num_candidates; c++) {
    ocl_op_release(op, held[c]);
    held[c] = NULL;
  }
  TF_Tensor *out = ocl_op_output_forward(op, index, candidates, num_candidates,
                                         dims, rank, forwarded);
  for (int c = 0; out != NULL && c < num_candidates; c++) {
    held[c] = ocl_op_input(op, candidates[c]);
    if (held[c] == NULL)
      return NULL;
  }
  return out;
}

TF_Tensor *ocl_op_temp(struct ocl_op *op, TF_DataType dtype, int64_t elements)
{
  if (!shape_fits(op, &elements, 1))
    return NULL;
  if (ocl_tf.AllocateTemp == NULL) {
    ocl_op_fail(op, TF_UNIMPLEMENTED,
                "this TensorFlow lacks TF_AllocateTemp, which this OPENCL "
                "kernel needs");
    return NULL;
  }
  TF_Tensor *t =
      ocl_tf.AllocateTemp(op->ctx, dtype, &elements, 1, NULL, op->status);
  if (ocl_tf.GetCode(op->status) != TF_OK) {
    if (t != NULL)
      ocl_tf.DeleteTensor(t);
    return NULL;
  }
  return own(op, t) ? t : NULL;
}

bool ocl_op_forward(struct ocl_op *op, int index, const TF_Tensor *input)
{
  ocl_tf.SetOutput(op->ctx, index, input, op->status);
  return ocl_op_ok(op);
}

void ocl_op_release(struct ocl_op *op, TF_Tensor *t)
{
  for (int i = 0; i < op->num_owned; i++) {
    if (op->owned[i] == t) {
      op->owned[i] = op->owned[--op->num_owned];
      break;
    }
  }
  ocl_tf.DeleteTensor(t);
}

int ocl_op_dims(struct ocl_op *op, const TF_Tensor *t, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  if (rank > OCL_MAX_DIMS) {
    ocl_op_fail(op, TF_UNIMPLEMENTED,
                "tensors of rank %d are not supported on the OPENCL device "
                "(at most %d)",
                rank, OCL_MAX_DIMS);
    return -1;
  }
  for (int i = 0; i < rank; i++)
    dims[i] = ocl_tf.Dim(t, i);
  return rank;
}

bool ocl_op_device(struct ocl_op *op)
{
  if (op->device != NULL)
    return true;
  SP_Stream stream = ocl_tf.GetStream(op->ctx, op->status);
  if (ocl_tf.GetCode(op->status) != TF_OK)
    return false;
  struct ocl_device *dev = ocl_stream_device(stream);
  cl_command_queue queue = ocl_stream_queue(stream);
  if (dev == NULL || queue == NULL)
    return ocl_op_fail(op, TF_INTERNAL,
                       "the kernel's stream is not an OPENCL stream");
  op->stream = stream;
  op->device = dev;
  op->queue = queue;
  op->info = &dev->info;
  return true;
}

const struct ocl_device_info *ocl_op_info(struct ocl_op *op)
{
  return ocl_op_device(op) ? op->info : NULL;
}

/* ---- Arguments and launches -------------------------------------------------- */

bool ocl_op_buffer(struct ocl_op *op, const TF_Tensor *t, size_t byte_offset,
                   size_t bytes, struct ocl_buffer *buffer)
{
  buffer->mem = NULL;
  buffer->offset = 0;
  if (!ocl_op_device(op))
    return false;
  /* Empty tensors carry a host dummy pointer, never a device address: no
   * buffer; the kernel must not touch it. */
  if (ocl_tf.TensorByteSize(t) == 0)
    return true;
  const char *data = ocl_tf.TensorData(t);
  return ocl_resolve(op->device, data + byte_offset, bytes, &buffer->mem,
                     &buffer->offset, op->status);
}

/* Sets the arguments; false with the status set. */
static bool set_args(struct ocl_op *op, cl_kernel kernel, const char *name,
                     const struct ocl_arg *args, int num_args)
{
  cl_uint index = 0;
  cl_int err = CL_SUCCESS;

  for (int i = 0; i < num_args && err == CL_SUCCESS; i++) {
    const struct ocl_arg *a = &args[i];
    switch (a->kind) {
    case OCL_ARG_TENSOR:
    case OCL_ARG_BUFFER: {
      struct ocl_buffer b = a->v.buffer;
      if (a->kind == OCL_ARG_TENSOR &&
          !ocl_op_buffer(op, a->v.tensor, 0,
                         ocl_tf.TensorByteSize(a->v.tensor), &b))
        return false;
      cl_ulong off = b.offset;
      err = clSetKernelArg(kernel, index++, sizeof(cl_mem), &b.mem);
      if (err == CL_SUCCESS)
        err = clSetKernelArg(kernel, index++, sizeof(off), &off);
      break;
    }
    case OCL_ARG_INT: {
      cl_int v = a->v.i;
      err = clSetKernelArg(kernel, index++, sizeof(v), &v);
      break;
    }
    case OCL_ARG_LONG: {
      cl_long v = a->v.l;
      err = clSetKernelArg(kernel, index++, sizeof(v), &v);
      break;
    }
    case OCL_ARG_FLOAT: {
      cl_float v = a->v.f;
      err = clSetKernelArg(kernel, index++, sizeof(v), &v);
      break;
    }
    case OCL_ARG_LOCAL:
      err = clSetKernelArg(kernel, index++, a->v.local_bytes, NULL);
      break;
    case OCL_ARG_BYTES:
      err = clSetKernelArg(kernel, index++, a->v.bytes.size, a->v.bytes.data);
      break;
    }
  }
  if (err != CL_SUCCESS) {
    char call[160];
    snprintf(call, sizeof(call), "clSetKernelArg(%s, %u)", name, index - 1);
    ocl_set_cl_error(op->status, err, call);
    return false;
  }
  return true;
}

/* 65535 unless TFOCL_MAX_GROUPS_YZ (a test hook) says less. */
size_t ocl_max_groups_yz(void)
{
  size_t forced = ocl_config()->hooks.max_groups_yz;
  return forced != 0 ? forced : 65535;
}

bool ocl_launch(struct ocl_op *op, struct ocl_kernel *kernel, cl_uint work_dim,
                const size_t *global, const size_t *local,
                const struct ocl_arg *args, int num_args)
{
  size_t rounded[3];
  size_t group = 1;
  /* Work-items per enqueue in each dimension: all of dim 0, at most
   * ocl_max_groups_yz() work-groups of dims 1 and 2. */
  size_t step[3] = {0, 0, 0};
  bool split = false;

  for (cl_uint d = 0; d < work_dim; d++) {
    if (global[d] == 0)
      return true; /* degenerate work is skipped, never enqueued */
    size_t l = local != NULL ? local[d] : 1;
    group *= l;
    rounded[d] = (global[d] + l - 1) / l * l;
    step[d] = rounded[d];
    if (d > 0 && rounded[d] / l > ocl_max_groups_yz()) {
      step[d] = ocl_max_groups_yz() * l;
      split = true;
    }
  }
  struct ocl_kernel_slot *slot = resolve(op, kernel);
  if (slot == NULL)
    return false;
  if (group > slot->max_local || group > op->info->max_work_group_size)
    return ocl_op_fail(op, TF_INTERNAL,
                       "kernel %s: a work-group of %zu exceeds its limit %zu "
                       "on OpenCL device %d",
                       kernel->name, group, slot->max_local,
                       op->info->ordinal);
  bool ok = false;
  /* An event only while a profile is taken (profiler.h). */
  cl_event event = NULL;
  bool profiling = ocl_profiler_active();
  pthread_mutex_lock(&slot->lock);
  if (!set_args(op, slot->kernel, kernel->name, args, num_args))
    goto out;
  /* Beyond the limit, one enqueue per block of dims 1 and 2, each at its
   * global offset: kernels index by get_global_id there (the kernels that
   * read get_group_id(1|2) keep within the limit themselves). */
  size_t offset[3] = {0, 0, 0}, size[3];
  size[0] = rounded[0];
  do {
    for (cl_uint d = 1; d < work_dim; d++)
      size[d] = rounded[d] - offset[d] < step[d] ? rounded[d] - offset[d]
                                                 : step[d];
    cl_int err = clEnqueueNDRangeKernel(op->queue, slot->kernel, work_dim,
                                        split ? offset : NULL, size, local, 0,
                                        NULL, profiling ? &event : NULL);
    if (err != CL_SUCCESS) {
      char call[160];
      snprintf(call, sizeof(call), "clEnqueueNDRangeKernel(%s)", kernel->name);
      ocl_set_cl_error(op->status, err, call);
      goto out;
    }
    if (event != NULL) {
      ocl_profiler_record(op->device, op->queue, event, OCL_ACTIVITY_KERNEL,
                          kernel->name);
      event = NULL;
    }
    /* The next block: dim 1 first, then dim 2. */
    cl_uint d = 1;
    for (; d < work_dim; d++) {
      offset[d] += step[d];
      if (offset[d] < rounded[d])
        break;
      offset[d] = 0;
    }
    if (d >= work_dim)
      break;
  } while (split);
  ok = true;
out:
  pthread_mutex_unlock(&slot->lock);
  return ok;
}

bool ocl_op_profiling(void) { return ocl_profiler_active(); }

bool ocl_op_finish(struct ocl_op *op)
{
  cl_int exec_status = CL_COMPLETE;
  if (!ocl_op_device(op))
    return false;
  return ocl_finish_queue(op->device, op->queue, &exec_status, NULL) ==
             CL_SUCCESS &&
         exec_status >= 0;
}

void ocl_op_record(struct ocl_op *op, cl_event event, const char *name)
{
  ocl_profiler_record(op->device, op->queue, event, OCL_ACTIVITY_KERNEL, name);
}

bool ocl_op_host_task(struct ocl_op *op, const char *name,
                      void (*fn)(void *args), void *args, size_t args_size,
                      const struct ocl_host_range *ranges, int count)
{
  cl_int err = CL_SUCCESS;
  const char *call = "clEnqueueMapBuffer";
  int mapped = 0;

  if (!ocl_op_device(op))
    return false;
  /* Not blocking: the queue is in order, so the native kernel behind the
   * maps sees them done. */
  for (; mapped < count; mapped++) {
    const struct ocl_host_range *r = &ranges[mapped];
    *r->host_ptr = clEnqueueMapBuffer(op->queue, r->buffer.mem, CL_FALSE,
                                      r->flags, r->buffer.offset, r->bytes, 0,
                                      NULL, NULL, &err);
    if (err != CL_SUCCESS)
      break;
  }
  if (err == CL_SUCCESS) {
    cl_event event = NULL;
    call = "clEnqueueNativeKernel";
    err = clEnqueueNativeKernel(op->queue, fn, args, args_size, 0, NULL, NULL,
                                0, NULL,
                                ocl_profiler_active() ? &event : NULL);
    if (err == CL_SUCCESS && event != NULL)
      ocl_op_record(op, event, name);
  }
  /* What was mapped must not stay mapped, whatever failed. */
  for (int i = 0; i < mapped; i++) {
    cl_int unmap_err = clEnqueueUnmapMemObject(
        op->queue, ranges[i].buffer.mem, *ranges[i].host_ptr, 0, NULL, NULL);
    if (err == CL_SUCCESS && unmap_err != CL_SUCCESS) {
      err = unmap_err;
      call = "clEnqueueUnmapMemObject";
    }
  }
  if (err != CL_SUCCESS) {
    ocl_set_cl_error(op->status, err, call);
    return false;
  }
  return true;
}

cl_command_queue ocl_op_library_queue(struct ocl_op *op, const char *call)
{
  if (!ocl_op_device(op))
    return NULL;
#if defined(TFOCL_FAULT_INJECTION)
  if (ocl_fault_library_call_fails(call)) {
    ocl_set_cl_error(op->status, CL_OUT_OF_RESOURCES, call);
    return NULL;
  }
#else
  (void)call;
#endif
  return op->queue;
}

cl_device_id ocl_op_device_id(struct ocl_op *op)
{
  return ocl_op_device(op) ? op->device->id : NULL;
}

bool ocl_launch_1d(struct ocl_op *op, struct ocl_kernel *kernel, size_t n,
                   const struct ocl_arg *args, int num_args)
{
  if (n == 0)
    return true;
  if (!ocl_op_device(op))
    return false;
  struct ocl_kernel_slot *slot = resolve(op, kernel);
  if (slot == NULL)
    return false;
  size_t local = ocl_elementwise_local(op->info);
  while (local > slot->max_local)
    local /= 2;
  return ocl_launch(op, kernel, 1, &n, &local, args, num_args);
}

bool ocl_launch_flat(struct ocl_op *op, struct ocl_kernel *kernel, size_t n,
                     const struct ocl_arg *args, int num_args)
{
  /* common.clh's OCL_FOR_FLAT: the kernel reads its run's length from the
   * global size. */
  enum { FLAT_SPAN = 16 };
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  size_t items = info->flat_runs ? (n + FLAT_SPAN - 1) / FLAT_SPAN : n;
  return ocl_launch_1d(op, kernel, items, args, num_args);
}

bool ocl_launch_rows(struct ocl_op *op, struct ocl_kernel *kernel, size_t n,
                     const struct ocl_arg *args, int num_args)
{
  /* PoCL runs a work-group on one core; a row is at least 16 elements of
   * vector work, so one work-item per group costs little and keeps every
   * core busy down to as many rows as cores. */
  size_t local = 1;
  return ocl_launch(op, kernel, 1, &n, &local, args, num_args);
}

/* Rows per work-group of a row kernel, rows of row_len elements: a power
 * of two, about GROUP_ELEMENTS elements a group (PoCL's cost per
 * work-group then weighs as little as for _flat's groups) while
 * `copies` * rows / group still gives two groups per compute unit. Powers
 * of two: each group size is compiled once. 0 with the status set. */
static size_t group_rows(struct ocl_op *op, struct ocl_kernel *kernel,
                         int64_t rows, int64_t row_len, int64_t copies)
{
  enum { GROUP_ELEMENTS = 4096 };
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return 0;
  int64_t groups_wanted =
      2 * (int64_t)(info->compute_units ? info->compute_units : 1);
  size_t most = ocl_kernel_max_local(op, kernel);
  size_t n = 1;
  while (most > 0 && 2 * n <= most &&
         (int64_t)(2 * n) * row_len <= GROUP_ELEMENTS &&
         (int64_t)(2 * n) <= rows &&
         copies * (rows / (int64_t)(2 * n)) >= groups_wanted)
    n *= 2;
  return most > 0 ? n : 0;
}

bool ocl_launch_row_groups(struct ocl_op *op, struct ocl_kernel *kernel,
                           size_t rows, int64_t row_len,
                           const struct ocl_arg *args, int num_args)
{
  size_t local = group_rows(op, kernel, (int64_t)rows, row_len, 1);
  return local > 0 && ocl_launch(op, kernel, 1, &rows, &local, args, num_args);
}

bool ocl_launch_spans(struct ocl_op *op, struct ocl_kernel *kernel,
                      const int64_t dims[3], struct ocl_arg *args, int num_args)
{
  /* Spans of at most ROW_SPAN elements, so that a few long rows still
   * spread over the cores. */
  enum { ROW_SPAN = 4096 };
  int64_t spans = (dims[2] + ROW_SPAN - 1) / ROW_SPAN;
  int64_t span = spans > 0 ? (dims[2] + spans - 1) / spans : 0;
  size_t rows = group_rows(op, kernel, dims[1], span, spans * dims[0]);
  if (rows == 0)
    return false;
  size_t global[3] = {(size_t)spans, (size_t)dims[1], (size_t)dims[0]};
  size_t local[3] = {1, rows, 1};
  args[num_args] = OCL_INT(span);
  return ocl_launch(op, kernel, 3, global, local, args, num_args + 1);
}

/* ---- Copies and fills ------------------------------------------------------ */

bool ocl_op_copy(struct ocl_op *op, const TF_Tensor *src, size_t src_offset,
                 TF_Tensor *dst, size_t dst_offset, size_t bytes)
{
  struct ocl_buffer from, to;
  if (bytes == 0)
    return true;
  if (!ocl_op_buffer(op, src, src_offset, bytes, &from) ||
      !ocl_op_buffer(op, dst, dst_offset, bytes, &to))
    return false;
  cl_event event = NULL;
  cl_int err = clEnqueueCopyBuffer(op->queue, from.mem, to.mem, from.offset,
                                   to.offset, bytes, 0, NULL,
                                   ocl_profiler_active() ? &event : NULL);
  if (err != CL_SUCCESS) {
    ocl_set_cl_error(op->status, err, "clEnqueueCopyBuffer");
    return false;
  }
  if (event != NULL)
    ocl_profiler_record(op->device, op->queue, event, OCL_ACTIVITY_COPY_D2D,
                        NULL);
  return true;
}

bool ocl_op_read(struct ocl_op *op, const TF_Tensor *src, size_t offset,
                 void *dst, size_t bytes)
{
  struct ocl_buffer from;
  if (bytes == 0)
    return true;
  if (!ocl_op_buffer(op, src, offset, bytes, &from))
    return false;
  /* Not blocking in the driver: the wait is ocl_op_finish's, which sleeps
   * where a blocking read would spin a core on some drivers. */
  cl_int err = clEnqueueReadBuffer(op->queue, from.mem, CL_FALSE, from.offset,
                                   bytes, dst, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    ocl_set_cl_error(op->status, err, "clEnqueueReadBuffer");
    return false;
  }
  if (!ocl_op_finish(op))
    return ocl_op_ok(op) ? ocl_op_fail(op, TF_INTERNAL,
                                       "the OPENCL stream failed before a "
                                       "read")
                         : false;
  return true;
}

bool ocl_op_fill(struct ocl_op *op, TF_Tensor *t, size_t offset,
                 const void *pattern, size_t pattern_size, size_t bytes)
{
  struct ocl_buffer b;
  if (bytes == 0)
    return true;
  if (!ocl_op_buffer(op, t, offset, bytes, &b))
    return false;
  cl_event event = NULL;
  cl_int err = clEnqueueFillBuffer(op->queue, b.mem, pattern, pattern_size,
                                   b.offset, bytes, 0, NULL,
                                   ocl_profiler_active() ? &event : NULL);
  if (err != CL_SUCCESS) {
    ocl_set_cl_error(op->status, err, "clEnqueueFillBuffer");
    return false;
  }
  if (event != NULL)
    ocl_profiler_record(op->device, op->queue, event, OCL_ACTIVITY_FILL,
                        NULL);
  return true;
}

/* ---- Host-memory tensors, construction, registration ------------------------ */

bool ocl_is_integer_type(TF_DataType dtype)
{
  switch (dtype) {
  case TF_INT8: case TF_UINT8: case TF_INT16: case TF_UINT16:
  case TF_INT32: case TF_UINT32: case TF_INT64: case TF_UINT64:
    return true;
  default:
    return false;
  }
}

int64_t ocl_host_int(const TF_Tensor *tensor, int64_t i)
{
  const void *data = ocl_tf.TensorData(tensor);
  switch (ocl_tf.TensorType(tensor)) {
  case TF_INT8: return ((const int8_t *)data)[i];
  case TF_UINT8: return ((const uint8_t *)data)[i];
  case TF_INT16: return ((const int16_t *)data)[i];
  case TF_UINT16: return ((const uint16_t *)data)[i];
  case TF_INT32: return ((const int32_t *)data)[i];
  case TF_UINT32: return ((const uint32_t *)data)[i];
  case TF_INT64: return ((const int64_t *)data)[i];
  case TF_UINT64: return (int64_t)((const uint64_t *)data)[i];
  default: return 0;
  }
}

void *ocl_create_failed(TF_OpKernelConstruction *ctx, TF_Status *status,
                        void *kernel)
{
  ocl_tf.OpKernelConstruction_Failure(ctx, status);
  ocl_tf.DeleteStatus(status);
  free(kernel);
  return NULL;
}

bool ocl_string_attr(TF_OpKernelConstruction *ctx, const char *name, char *buf,
                     size_t len, TF_Status *status)
{
  memset(buf, 0, len);
  if (ocl_tf.OpKernelConstruction_GetAttrString == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks string attributes in its C API");
    return false;
  }
  ocl_tf.OpKernelConstruction_GetAttrString(ctx, name, buf, len - 1, status);
  return ocl_tf.GetCode(status) == TF_OK;
}

int ocl_fused_activation_attr(TF_OpKernelConstruction *ctx, const char *what,
                              const char *const *activations,
                              int num_activations, TF_Status *status)
{
  int32_t count = 0, total = 0;
  if (ocl_tf.OpKernelConstruction_GetAttrSize == NULL ||
      ocl_tf.OpKernelConstruction_GetAttrStringList == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks list attributes in its C API");
    return -1;
  }
  ocl_tf.OpKernelConstruction_GetAttrSize(ctx, "fused_ops", &count, &total,
                                          status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return -1;
  if (count == 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s must have at least one fused op.", what);
    return -1;
  }
  /* Long lists and names match no pattern: read what fits to name them. */
  enum { MAX_OPS = 8 };
  char *names[MAX_OPS];
  size_t lengths[MAX_OPS];
  char storage[512];
  int read = count < MAX_OPS ? count : MAX_OPS;
  if (total > (int32_t)sizeof(storage)) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "Fusion is not implemented: (%d fused ops)", (int)count);
    return -1;
  }
  ocl_tf.OpKernelConstruction_GetAttrStringList(ctx, "fused_ops", names,
                                                lengths, read, storage,
                                                sizeof(storage), status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return -1;
  char joined[600] = "";
  size_t len = 0;
  for (int i = 0; i < read && len < sizeof(joined); i++)
    len += (size_t)snprintf(joined + len, sizeof(joined) - len, "%s%.*s",
                            i ? "," : "", (int)lengths[i], names[i]);

  if (count <= 2 && lengths[0] == 7 && memcmp(names[0], "BiasAdd", 7) == 0) {
    if (count == 1)
      return 0;
    for (int a = 0; a < num_activations; a++)
      if (strlen(activations[a]) == lengths[1] &&
          memcmp(activations[a], names[1], lengths[1]) == 0)
        return a + 1;
  }
  ocl_set_status(status, TF_UNIMPLEMENTED, "Fusion is not implemented: [%s]",
                 joined);
  return -1;
}

/* Most float64 and complex128 kernels compute in double and can only fail
 * (UNIMPLEMENTED) on a device without cl_khr_fp64 (Intel's and many mobile
 * GPUs). Kernels are registered per device type, not per device, so where
 * any device lacks fp64 no such kernel is registered at all: TensorFlow
 * then places those ops on the CPU, as it does for a GPU plugin without
 * them, instead of on an OPENCL kernel that fails. */
static bool every_device_has_fp64(void)
{
  for (int i = 0, n = ocl_device_count(); i < n; i++) {
    struct ocl_device *dev = ocl_device_get(i);
    if (dev != NULL && !ocl_device_has_fp64(dev))
      return false;
  }
  return true;
}

bool ocl_register_kernel(const struct ocl_kernel_spec *spec)
{
  char name[128];
  static int fp64 = -1; /* registration runs on one thread, TF_InitKernel */

  if (fp64 < 0) {
    fp64 = every_device_has_fp64();
    if (!fp64)
      OCL_TRACE("a device lacks cl_khr_fp64: no float64 kernel is "
                "registered, float64 ops run on the CPU");
  }
  for (int i = 0; !fp64 && i < OCL_MAX_TYPE_ATTRS &&
                  spec->type_attrs[i] != NULL;
       i++)
    if (spec->types[i] == TF_DOUBLE || spec->types[i] == TF_COMPLEX128)
      return true; /* left to the CPU on purpose */
  size_t len = (size_t)snprintf(name, sizeof(name), "%s_%s", spec->op,
                                OCL_DEVICE_TYPE);
  for (int i = 0; i < OCL_MAX_TYPE_ATTRS && spec->type_attrs[i] != NULL &&
                  len < sizeof(name);
       i++)
    len += (size_t)snprintf(name + len, sizeof(name) - len, "_%d",
                            (int)spec->types[i]);
  if (spec->label != NULL) {
    /* The usual kernel serves the node then: only a chance is lost. */
    if (ocl_tf.KernelBuilder_Label == NULL)
      return true;
    if (len < sizeof(name))
      snprintf(name + len, sizeof(name) - len, "_%s", spec->label);
  }

  TF_KernelBuilder *builder =
      ocl_tf.NewKernelBuilder(spec->op, OCL_DEVICE_TYPE, spec->create,
                              spec->compute, spec->destroy);
  if (builder == NULL)
    return ocl_register_builder(name, NULL); /* reports it */
  TF_Status *status = ocl_tf.NewStatus();
  for (int i = 0; i < OCL_MAX_TYPE_ATTRS && spec->type_attrs[i] != NULL &&
                  ocl_tf.GetCode(status) == TF_OK;
       i++)
    ocl_tf.KernelBuilder_TypeConstraint(builder, spec->type_attrs[i],
                                        spec->types[i], status);
  bool ok = ocl_tf.GetCode(status) == TF_OK;
  if (!ok) {
    ocl_report_unusable("kernel %s: type constraint failed: %s", name,
                        ocl_tf.Message(status));
    ocl_tf.DeleteKernelBuilder(builder);
  }
  ocl_tf.DeleteStatus(status);
  if (!ok)
    return false;
  for (const char *const *arg = spec->host_args; arg != NULL && *arg != NULL;
       arg++)
    ocl_tf.KernelBuilder_HostMemory(builder, *arg);
  if (spec->label != NULL)
    ocl_tf.KernelBuilder_Label(builder, spec->label);
  return ocl_register_builder(name, builder);
}

enum ocl_storage ocl_storage_of(TF_DataType dtype)
{
  switch (dtype) {
  case TF_FLOAT: return OCL_STORAGE_FLOAT;
  case TF_HALF: return OCL_STORAGE_HALF;
  case TF_INT64: return OCL_STORAGE_LONG;
  case TF_BOOL: return OCL_STORAGE_BOOL;
  case TF_DOUBLE: return OCL_STORAGE_DOUBLE;
  default: return OCL_STORAGE_HOST_INT32;
  }
}

const struct ocl_program *ocl_sized_program(const struct ocl_program programs[4],
                                            TF_DataType dtype)
{
  switch (ocl_tf.DataTypeSize(dtype)) {
  case 1: return &programs[0];
  case 2: return &programs[1];
  case 4: return &programs[2];
  case 8: return &programs[3];
  default: return NULL;
  }
}
