/* Kernel launch layer; see launch.h. */
#include "launch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One cl_kernel per (program, kernel name). clSetKernelArg on a shared
 * cl_kernel is not thread-safe and TensorFlow runs ops from several threads,
 * so each entry has a lock held from the first clSetKernelArg to the end of
 * clEnqueueNDRangeKernel (which captures the arguments). All ops of a device
 * go through one in-order compute queue anyway, so the lock costs nothing
 * measurable; a pool per kernel would buy nothing. */
struct kernel_entry {
  cl_program program;
  char *name;
  cl_kernel kernel;
  pthread_mutex_t lock;
};

static struct {
  pthread_mutex_t lock;
  struct kernel_entry **slots; /* open addressing, power-of-two size */
  size_t capacity;
  size_t count;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t entry_hash(cl_program program, const char *name)
{
  /* FNV-1a over the name, mixed with the program handle. */
  uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)program;
  for (const char *c = name; *c; c++)
    h = (h ^ (unsigned char)*c) * 1099511628211ull;
  return (size_t)(h ^ (h >> 29));
}

/* Caller holds cache.lock. */
static struct kernel_entry **find_slot(cl_program program, const char *name)
{
  size_t mask = cache.capacity - 1;
  for (size_t i = entry_hash(program, name) & mask;; i = (i + 1) & mask) {
    struct kernel_entry *e = cache.slots[i];
    if (e == NULL || (e->program == program && strcmp(e->name, name) == 0))
      return &cache.slots[i];
  }
}

/* Caller holds cache.lock. */
static bool grow(void)
{
  size_t new_capacity = cache.capacity ? cache.capacity * 2 : 64;
  struct kernel_entry **old = cache.slots;
  size_t old_capacity = cache.capacity;
  struct kernel_entry **slots = calloc(new_capacity, sizeof(*slots));
  if (slots == NULL)
    return false;
  cache.slots = slots;
  cache.capacity = new_capacity;
  for (size_t i = 0; i < old_capacity; i++)
    if (old[i] != NULL)
      *find_slot(old[i]->program, old[i]->name) = old[i];
  free(old);
  return true;
}

/* Returns the entry for (program, name), locked; creates it on first use. */
static struct kernel_entry *lock_kernel(cl_program program, const char *name,
                                        TF_Status *status)
{
  struct kernel_entry *entry = NULL;

  pthread_mutex_lock(&cache.lock);
  if ((cache.count + 1) * 2 > cache.capacity && !grow()) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                   "out of host memory for the kernel cache");
    goto out;
  }
  struct kernel_entry **slot = find_slot(program, name);
  if (*slot == NULL) {
    cl_int err;
    cl_kernel kernel = clCreateKernel(program, name, &err);
    if (err != CL_SUCCESS) {
      char call[160];
      snprintf(call, sizeof(call), "clCreateKernel(%s)", name);
      ocl_set_cl_error(status, err, call);
      goto out;
    }
    entry = calloc(1, sizeof(*entry));
    char *name_copy = strdup(name);
    if (entry == NULL || name_copy == NULL) {
      free(entry);
      free(name_copy);
      entry = NULL;
      clReleaseKernel(kernel);
      ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                     "out of host memory for the kernel cache");
      goto out;
    }
    entry->program = program;
    entry->name = name_copy;
    entry->kernel = kernel;
    pthread_mutex_init(&entry->lock, NULL);
    *slot = entry;
    cache.count++;
  }
  entry = *slot;
out:
  pthread_mutex_unlock(&cache.lock);
  if (entry != NULL)
    pthread_mutex_lock(&entry->lock);
  return entry;
}

void ocl_kernel_cache_clear(void)
{
  pthread_mutex_lock(&cache.lock);
  for (size_t i = 0; i < cache.capacity; i++) {
    struct kernel_entry *e = cache.slots[i];
    if (e == NULL)
      continue;
    clReleaseKernel(e->kernel);
    pthread_mutex_destroy(&e->lock);
    free(e->name);
    free(e);
  }
  free(cache.slots);
  cache.slots = NULL;
  cache.capacity = 0;
  cache.count = 0;
  pthread_mutex_unlock(&cache.lock);
}

bool ocl_launch_init(struct ocl_launch *launch, TF_OpKernelContext *ctx,
                     TF_Status *status)
{
  SP_Stream stream = ocl_tf.GetStream(ctx, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return false;
  launch->ctx = ctx;
  launch->stream = stream;
  launch->device = ocl_stream_device(stream);
  launch->queue = ocl_stream_queue(stream);
  if (launch->device == NULL || launch->queue == NULL) {
    ocl_set_status(status, TF_INTERNAL,
                   "the kernel's stream is not an OPENCL stream");
    return false;
  }
  return true;
}

/* Sets the arguments; returns false with the status set. */
static bool set_args(const struct ocl_launch *launch, cl_kernel kernel,
                     const char *kernel_name, const struct ocl_arg *args,
                     int num_args, TF_Status *status)
{
  cl_uint index = 0;
  cl_int err = CL_SUCCESS;

  for (int i = 0; i < num_args && err == CL_SUCCESS; i++) {
    const struct ocl_arg *a = &args[i];
    switch (a->kind) {
    case OCL_ARG_TENSOR: {
      cl_mem buffer = NULL;
      size_t offset = 0;
      size_t bytes = ocl_tf.TensorByteSize(a->v.tensor);
      /* Empty tensors carry a host dummy pointer, never a device address:
       * pass no buffer; the kernel must not touch it. */
      if (bytes > 0 && !ocl_resolve(launch->device,
                                    ocl_tf.TensorData(a->v.tensor), bytes,
                                    &buffer, &offset, status))
        return false;
      cl_ulong off = offset;
      err = clSetKernelArg(kernel, index++, sizeof(cl_mem), &buffer);
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
    char call[192];
    snprintf(call, sizeof(call), "clSetKernelArg(%s, %u)", kernel_name,
             index - 1);
    ocl_set_cl_error(status, err, call);
    return false;
  }
  return true;
}

bool ocl_enqueue(const struct ocl_launch *launch,
                 const struct ocl_family *family, const char *kernel_name,
                 cl_uint work_dim, const size_t *global, const size_t *local,
                 const struct ocl_arg *args, int num_args, TF_Status *status)
{
  size_t rounded[3];
  bool ok = false;

  for (cl_uint d = 0; d < work_dim; d++) {
    if (global[d] == 0)
      return true; /* degenerate work is skipped, never enqueued */
    size_t l = local != NULL ? local[d] : 1;
    rounded[d] = (global[d] + l - 1) / l * l;
  }

  cl_program program =
      ocl_program_get(launch->device, family->name, family->source,
                      family->build_options, status);
  if (program == NULL)
    return false;
  struct kernel_entry *entry = lock_kernel(program, kernel_name, status);
  if (entry == NULL)
    return false;
  if (!set_args(launch, entry->kernel, kernel_name, args, num_args, status))
    goto out;
  cl_int err = clEnqueueNDRangeKernel(launch->queue, entry->kernel, work_dim,
                                      NULL, rounded, local, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    char call[192];
    snprintf(call, sizeof(call), "clEnqueueNDRangeKernel(%s)", kernel_name);
    ocl_set_cl_error(status, err, call);
    goto out;
  }
  ok = true;
out:
  pthread_mutex_unlock(&entry->lock);
  return ok;
}

size_t ocl_elementwise_local_size(const struct ocl_device *device)
{
  /* 256 reached the host's memory bandwidth on PoCL; GPUs are happy with
   * it too. Never above what the device allows. */
  size_t max = ocl_device_max_work_group_size(device);
  return max < 256 ? max : 256;
}

bool ocl_enqueue_1d(const struct ocl_launch *launch,
                    const struct ocl_family *family, const char *kernel_name,
                    size_t n, const struct ocl_arg *args, int num_args,
                    TF_Status *status)
{
  size_t local = ocl_elementwise_local_size(launch->device);
  return ocl_enqueue(launch, family, kernel_name, 1, &n, &local, args,
                     num_args, status);
}

static enum { STYLE_BY_DEVICE, STYLE_CPU, STYLE_GPU } kernel_style;
static pthread_once_t kernel_style_once = PTHREAD_ONCE_INIT;

static void read_kernel_style(void)
{
  const char *v = getenv("TFOCL_KERNEL_STYLE");
  if (v == NULL || *v == '\0')
    return;
  if (strcmp(v, "cpu") == 0)
    kernel_style = STYLE_CPU;
  else if (strcmp(v, "gpu") == 0)
    kernel_style = STYLE_GPU;
  else
    OCL_TRACE("TFOCL_KERNEL_STYLE: ignoring \"%s\" (cpu or gpu)", v);
}

bool ocl_use_row_vector_kernels(const struct ocl_device *device)
{
  pthread_once(&kernel_style_once, read_kernel_style);
  if (kernel_style != STYLE_BY_DEVICE)
    return kernel_style == STYLE_CPU;
  return ocl_device_is_cpu(device);
}

bool ocl_enqueue_rows(const struct ocl_launch *launch,
                      const struct ocl_family *family, const char *kernel_name,
                      size_t n, const struct ocl_arg *args, int num_args,
                      TF_Status *status)
{
  /* PoCL runs a work-group on one core; a row is at least 16 elements of
   * vector work, so one work-item per group costs little and keeps every
   * core busy down to as many rows as cores. */
  size_t local = 1;
  return ocl_enqueue(launch, family, kernel_name, 1, &n, &local, args,
                     num_args, status);
}

TF_Tensor *ocl_allocate_temp(const struct ocl_launch *launch,
                             TF_DataType dtype, int64_t elements,
                             TF_Status *status)
{
  if (ocl_tf.AllocateTemp == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks TF_AllocateTemp, which this OPENCL "
                   "kernel needs");
    return NULL;
  }
  TF_Tensor *t =
      ocl_tf.AllocateTemp(launch->ctx, dtype, &elements, 1, NULL, status);
  if (ocl_tf.GetCode(status) != TF_OK) {
    if (t != NULL)
      ocl_tf.DeleteTensor(t);
    return NULL;
  }
  return t;
}

bool ocl_get_inputs(TF_OpKernelContext *ctx, TF_Tensor **inputs, int n,
                    TF_Status *status)
{
  for (int i = 0; i < n; i++) {
    inputs[i] = NULL;
    ocl_tf.GetInput(ctx, i, &inputs[i], status);
    if (ocl_tf.GetCode(status) != TF_OK) {
      ocl_delete_tensors(inputs, i + 1);
      return false;
    }
  }
  return true;
}

void ocl_delete_tensors(TF_Tensor **tensors, int n)
{
  for (int i = 0; i < n; i++) {
    if (tensors[i] != NULL)
      ocl_tf.DeleteTensor(tensors[i]);
    tensors[i] = NULL;
  }
}

int ocl_tensor_dims(const TF_Tensor *tensor, int64_t *dims, TF_Status *status)
{
  int rank = ocl_tf.NumDims(tensor);
  if (rank > OCL_MAX_DIMS) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "tensors of rank %d are not supported on the OPENCL device "
                   "(at most %d)",
                   rank, OCL_MAX_DIMS);
    return -1;
  }
  for (int i = 0; i < rank; i++)
    dims[i] = ocl_tf.Dim(tensor, i);
  return rank;
}

void ocl_compute_done(TF_OpKernelContext *ctx, TF_Status *status)
{
  if (ocl_tf.GetCode(status) != TF_OK)
    ocl_tf.OpKernelContext_Failure(ctx, status);
  ocl_tf.DeleteStatus(status);
}

void *ocl_create_failed(TF_OpKernelConstruction *ctx, TF_Status *status,
                        void *kernel)
{
  ocl_tf.OpKernelConstruction_Failure(ctx, status);
  ocl_tf.DeleteStatus(status);
  free(kernel);
  return NULL;
}

bool ocl_register_kernel(const struct ocl_kernel_spec *spec)
{
  char name[128];
  size_t len = (size_t)snprintf(name, sizeof(name), "%s_%s", spec->op,
                                OCL_DEVICE_TYPE);
  for (int i = 0; i < OCL_MAX_TYPE_ATTRS && spec->type_attrs[i] != NULL &&
                  len < sizeof(name);
       i++)
    len += (size_t)snprintf(name + len, sizeof(name) - len, "_%d",
                            (int)spec->types[i]);

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
  return ocl_register_builder(name, builder);
}

enum ocl_storage ocl_storage_of(TF_DataType dtype)
{
  switch (dtype) {
  case TF_FLOAT: return OCL_STORAGE_FLOAT;
  case TF_HALF: return OCL_STORAGE_HALF;
  case TF_INT64: return OCL_STORAGE_LONG;
  case TF_BOOL: return OCL_STORAGE_BOOL;
  default: return OCL_STORAGE_HOST_INT32;
  }
}

const struct ocl_family *ocl_sized_family(const struct ocl_family families[4],
                                          TF_DataType dtype)
{
  switch (ocl_tf.DataTypeSize(dtype)) {
  case 1: return &families[0];
  case 2: return &families[1];
  case 4: return &families[2];
  case 8: return &families[3];
  default: return NULL;
  }
}

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
