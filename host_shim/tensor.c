/* TF_Tensor: a shape and a type over a refcounted buffer that lives on the
 * host or on a plugin device. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

/* TensorFlow's EIGEN_MAX_ALIGN_BYTES on x86-64 with AVX-512 builds. */
#define SHIM_ALIGN 64

/* What 0-element tensors point at, as TensorFlow's EmptyTensor does: a host
 * address that is never a device pointer and never written. */
static char shim_empty_dummy;

int64_t shim_num_elements(const int64_t *dims, int num_dims)
{
  int64_t n = 1;
  for (int i = 0; i < num_dims; i++) {
    if (dims[i] < 0)
      return -1;
    if (dims[i] != 0 && n > INT64_MAX / dims[i])
      return -1;
    n *= dims[i];
  }
  return n;
}

/* Bytes of n elements of elem bytes; SIZE_MAX when that does not fit in a
 * size_t (no allocation can succeed: it fails as out of memory). */
static size_t byte_size(int64_t n, size_t elem)
{
  if (n < 0 || (elem > 0 && (uint64_t)n > SIZE_MAX / elem))
    return SIZE_MAX;
  return (size_t)n * elem;
}

void shim_format_shape(struct shim_strbuf *b, const int64_t *dims,
                       int num_dims)
{
  shim_strbuf_printf(b, "[");
  for (int i = 0; i < num_dims; i++)
    shim_strbuf_printf(b, "%s%lld", i ? "," : "", (long long)dims[i]);
  shim_strbuf_printf(b, "]");
}

static struct shim_buffer *buffer_new(enum shim_buffer_kind kind, void *data,
                                      size_t len)
{
  struct shim_buffer *buf = calloc(1, sizeof(*buf));
  if (buf == NULL)
    return NULL;
  buf->refcount = 1;
  buf->kind = kind;
  buf->data = data;
  buf->len = len;
  return buf;
}

static void buffer_ref(struct shim_buffer *buf)
{
  atomic_fetch_add_explicit((_Atomic int *)&buf->refcount, 1,
                            memory_order_relaxed);
}

static void buffer_unref(struct shim_buffer *buf)
{
  if (buf == NULL)
    return;
  if (atomic_fetch_sub_explicit((_Atomic int *)&buf->refcount, 1,
                                memory_order_acq_rel) != 1)
    return;
  switch (buf->kind) {
  case SHIM_BUFFER_HOST_OWNED:
    free(buf->data);
    break;
  case SHIM_BUFFER_HOST_EXTERNAL:
    if (buf->deallocator != NULL)
      buf->deallocator(buf->data, buf->len, buf->deallocator_arg);
    break;
  case SHIM_BUFFER_DEVICE:
    shim_device_release(buf->device, buf->data, buf->len);
    break;
  case SHIM_BUFFER_PINNED:
    shim_host_memory_deallocate(buf->device, buf->data);
    break;
  case SHIM_BUFFER_EMPTY:
    break;
  }
  free(buf);
}

int shim_buffer_refcount(const TF_Tensor *t)
{
  return atomic_load_explicit((_Atomic int *)&t->buf->refcount,
                              memory_order_acquire);
}

/* Takes ownership of buf (also on failure). */
static TF_Tensor *tensor_new(TF_DataType dtype, const int64_t *dims,
                             int num_dims, struct shim_buffer *buf,
                             size_t offset, size_t byte_size)
{
  TF_Tensor *t;

  if (buf == NULL || num_dims < 0)
    goto fail;
  t = calloc(1, sizeof(*t));
  if (t == NULL)
    goto fail;
  t->dims = malloc(sizeof(int64_t) * (size_t)(num_dims > 0 ? num_dims : 1));
  if (t->dims == NULL) {
    free(t);
    goto fail;
  }
  if (num_dims > 0)
    memcpy(t->dims, dims, sizeof(int64_t) * (size_t)num_dims);
  t->dtype = dtype;
  t->num_dims = num_dims;
  t->buf = buf;
  t->offset = offset;
  t->byte_size = byte_size;
  return t;

fail:
  buffer_unref(buf);
  return NULL;
}

static struct shim_buffer *empty_buffer(void)
{
  return buffer_new(SHIM_BUFFER_EMPTY, &shim_empty_dummy, 0);
}

TF_Tensor *TF_NewTensor(TF_DataType dtype, const int64_t *dims, int num_dims,
                        void *data, size_t len,
                        void (*deallocator)(void *, size_t, void *),
                        void *deallocator_arg)
{
  struct shim_buffer *buf;
  size_t elem = TF_DataTypeSize(dtype);
  int64_t n = shim_num_elements(dims, num_dims);

  /* As TensorFlow: a buffer too small for the shape is refused. */
  if (n < 0 || (elem > 0 && len < byte_size(n, elem)))
    return NULL;
  buf = buffer_new(SHIM_BUFFER_HOST_EXTERNAL, data, len);
  if (buf == NULL)
    return NULL;
  buf->deallocator = deallocator;
  buf->deallocator_arg = deallocator_arg;
  return tensor_new(dtype, dims, num_dims, buf, 0, len);
}

static TF_Tensor *alloc_host(TF_DataType dtype, const int64_t *dims,
                             int num_dims, size_t len)
{
  struct shim_buffer *buf;
  void *data;

  if (len == 0)
    return tensor_new(dtype, dims, num_dims, empty_buffer(), 0, 0);
  if (len > SIZE_MAX - SHIM_ALIGN) /* the rounding below would wrap */
    return NULL;
  data = aligned_alloc(SHIM_ALIGN, (len + SHIM_ALIGN - 1) / SHIM_ALIGN *
                                       SHIM_ALIGN);
  if (data == NULL)
    return NULL;
  buf = buffer_new(SHIM_BUFFER_HOST_OWNED, data, len);
  if (buf == NULL) {
    free(data);
    return NULL;
  }
  return tensor_new(dtype, dims, num_dims, buf, 0, len);
}

TF_Tensor *TF_AllocateTensor(TF_DataType dtype, const int64_t *dims,
                             int num_dims, size_t len)
{
  int64_t n;
  size_t elem = TF_DataTypeSize(dtype);

  if (num_dims < 0 || (num_dims > 0 && dims == NULL))
    return NULL;
  /* As TensorFlow's TF_NewTensor: a length too small for the shape (or a
   * shape whose element count overflows) is refused. */
  n = shim_num_elements(dims, num_dims);
  if (n < 0 || (elem > 0 && len < byte_size(n, elem)))
    return NULL;
  return alloc_host(dtype, dims, num_dims, len);
}

TF_Tensor *shim_tensor_alloc_host(TF_DataType dtype, const int64_t *dims,
                                  int num_dims, TF_Status *status)
{
  int64_t n = shim_num_elements(dims, num_dims);
  size_t elem = TF_DataTypeSize(dtype);
  TF_Tensor *t;

  if (n < 0 || elem == 0) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Cannot allocate a host tensor of type %s with %d dims",
                    tfocl_type_name(dtype), num_dims);
    return NULL;
  }
  t = alloc_host(dtype, dims, num_dims, byte_size(n, elem));
  if (t == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED,
                    "OOM when allocating host tensor of %lld elements of %s",
                    (long long)n, tfocl_type_name(dtype));
    return NULL;
  }
  shim_set_ok(status);
  return t;
}

/* A tensor in memory of the plugin's: device memory (allocate) or its host
 * memory (host_memory_allocate), as TensorFlow's allocators would ask. */
static TF_Tensor *alloc_from_plugin(struct tfocl_device *device,
                                    enum shim_buffer_kind kind,
                                    TF_DataType dtype, const int64_t *dims,
                                    int num_dims, TF_Status *status)
{
  int64_t n = shim_num_elements(dims, num_dims);
  size_t elem = TF_DataTypeSize(dtype);
  bool pinned = kind == SHIM_BUFFER_PINNED;
  struct shim_buffer *buf;
  struct shim_strbuf shape = {0};
  size_t len;
  void *data;
  TF_Tensor *t;

  if (device == NULL || num_dims < 0 || (num_dims > 0 && dims == NULL) ||
      n < 0 || elem == 0) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Cannot allocate a %s tensor of type %s with %d dims",
                    pinned ? "host" : "device", tfocl_type_name(dtype),
                    num_dims);
    return NULL;
  }
  len = byte_size(n, elem); /* SIZE_MAX: fails below as out of memory */
  if (len == 0) {
    /* TensorFlow never calls the plugin for 0 bytes (DeviceMemAllocator). */
    t = tensor_new(dtype, dims, num_dims, empty_buffer(), 0, 0);
    goto done;
  }
  data = pinned ? shim_host_memory_allocate(device, len, status)
                : shim_device_allocate(device, len, status);
  if (data == NULL) {
    if (TF_GetCode(status) != TF_RESOURCE_EXHAUSTED)
      return NULL;
    shim_format_shape(&shape, dims, num_dims);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED,
                    "OOM when allocating tensor with shape%s and type %s on "
                    "%s by allocator %s%s",
                    shim_strbuf_str(&shape), shim_type_short_name(dtype),
                    device->name, device->plugin->platform_name,
                    pinned ? " (host memory)" : "");
    shim_strbuf_finish(&shape);
    return NULL;
  }
  buf = buffer_new(kind, data, len);
  if (buf == NULL) {
    if (pinned)
      shim_host_memory_deallocate(device, data);
    else
      shim_device_deallocate(device, data);
    t = NULL;
    goto done;
  }
  buf->device = device;
  t = tensor_new(dtype, dims, num_dims, buf, 0, len);

done:
  if (t == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  shim_set_ok(status);
  return t;
}

TF_Tensor *shim_tensor_alloc_pinned(struct tfocl_device *device,
                                    TF_DataType dtype, const int64_t *dims,
                                    int num_dims, TF_Status *status)
{
  return alloc_from_plugin(device, SHIM_BUFFER_PINNED, dtype, dims, num_dims,
                           status);
}

TF_Tensor *TF_TensorMaybeMove(TF_Tensor *tensor)
{
  /* TensorFlow moves only a tensor whose buffer nobody else references. */
  if (tensor != NULL && shim_buffer_refcount(tensor) == 1)
    return tensor;
  return NULL;
}

void TF_DeleteTensor(TF_Tensor *tensor)
{
  if (tensor == NULL)
    return;
  buffer_unref(tensor->buf);
  free(tensor->dims);
  free(tensor);
}

TF_DataType TF_TensorType(const TF_Tensor *tensor) { return tensor->dtype; }

void TF_SetShape(TF_Tensor *tensor, const int64_t *dims, int num_dims)
{
  int64_t *d;

  if (num_dims < 0)
    return;
  d = realloc(tensor->dims,
              sizeof(int64_t) * (size_t)(num_dims > 0 ? num_dims : 1));
  if (d == NULL)
    return;
  if (num_dims > 0)
    memcpy(d, dims, sizeof(int64_t) * (size_t)num_dims);
  tensor->dims = d;
  tensor->num_dims = num_dims;
}

int TF_NumDims(const TF_Tensor *tensor) { return tensor->num_dims; }

int64_t TF_Dim(const TF_Tensor *tensor, int dim_index)
{
  if (dim_index < 0 || dim_index >= tensor->num_dims)
    return -1;
  return tensor->dims[dim_index];
}

size_t TF_TensorByteSize(const TF_Tensor *tensor) { return tensor->byte_size; }

void *TF_TensorData(const TF_Tensor *tensor)
{
  if (tensor->buf->kind == SHIM_BUFFER_EMPTY)
    return tensor->buf->data;
  return (char *)tensor->buf->data + tensor->offset;
}

int64_t TF_TensorElementCount(const TF_Tensor *tensor)
{
  return shim_num_elements(tensor->dims, tensor->num_dims);
}

void TF_TensorBitcastFrom(const TF_Tensor *from, TF_DataType type,
                          TF_Tensor *to, const int64_t *new_dims,
                          int num_new_dims, TF_Status *status)
{
  size_t in_size = TF_DataTypeSize(from->dtype);
  size_t out_size = TF_DataTypeSize(type);
  int64_t in_n = TF_TensorElementCount(from);
  int64_t out_n = shim_num_elements(new_dims, num_new_dims);
  int64_t *d;

  if (in_size == 0 || out_size == 0 || out_n < 0 ||
      (size_t)in_n * in_size != (size_t)out_n * out_size) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "TensorShape of %lld elements of %s is not compatible "
                    "with %lld elements of %s",
                    (long long)in_n, tfocl_type_name(from->dtype),
                    (long long)out_n, tfocl_type_name(type));
    return;
  }
  d = malloc(sizeof(int64_t) * (size_t)(num_new_dims > 0 ? num_new_dims : 1));
  if (d == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  if (num_new_dims > 0)
    memcpy(d, new_dims, sizeof(int64_t) * (size_t)num_new_dims);
  /* Reference first: from and to may share the buffer already. */
  buffer_ref(from->buf);
  buffer_unref(to->buf);
  free(to->dims);
  to->buf = from->buf;
  to->offset = from->offset;
  to->byte_size = from->byte_size;
  to->dtype = type;
  to->dims = d;
  to->num_dims = num_new_dims;
  shim_set_ok(status);
}

bool TF_TensorIsAligned(const TF_Tensor *tensor)
{
  /* Device addresses are the plugin's; TensorFlow asks only of host data. */
  return ((uintptr_t)TF_TensorData(tensor) % SHIM_ALIGN) == 0;
}

TF_Tensor *shim_tensor_ref(const TF_Tensor *t)
{
  buffer_ref(t->buf);
  return tensor_new(t->dtype, t->dims, t->num_dims, t->buf, t->offset,
                    t->byte_size);
}

TF_Tensor *shim_tensor_reshape_ref(const TF_Tensor *t, const int64_t *dims,
                                   int num_dims)
{
  buffer_ref(t->buf);
  return tensor_new(t->dtype, dims, num_dims, t->buf, t->offset,
                    t->byte_size);
}

/* ---- public tensor API (host.h) ----------------------------------------- */

TF_Tensor *tfocl_tensor_alloc_device(struct tfocl_device *device,
                                     TF_DataType dtype, const int64_t *dims,
                                     int num_dims, TF_Status *status)
{
  return alloc_from_plugin(device, SHIM_BUFFER_DEVICE, dtype, dims, num_dims,
                           status);
}

bool tfocl_tensor_on_device(const TF_Tensor *tensor)
{
  return tensor != NULL && tensor->buf->kind == SHIM_BUFFER_DEVICE;
}

struct tfocl_device *tfocl_tensor_device(const TF_Tensor *tensor)
{
  return tfocl_tensor_on_device(tensor) ? tensor->buf->device : NULL;
}

TF_Tensor *tfocl_tensor_view(const TF_Tensor *tensor, size_t byte_offset,
                             TF_DataType dtype, const int64_t *dims,
                             int num_dims, TF_Status *status)
{
  int64_t n = shim_num_elements(dims, num_dims);
  size_t elem = TF_DataTypeSize(dtype);
  size_t len;
  TF_Tensor *t;

  if (tensor == NULL || num_dims < 0 || (num_dims > 0 && dims == NULL) ||
      n < 0 || elem == 0) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Invalid view: type %s, %d dims", tfocl_type_name(dtype),
                    num_dims);
    return NULL;
  }
  len = byte_size(n, elem);
  if (byte_offset > tensor->byte_size ||
      len > tensor->byte_size - byte_offset) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "View of %zu bytes at offset %zu does not fit in a "
                    "tensor of %zu bytes",
                    len, byte_offset, tensor->byte_size);
    return NULL;
  }
  if (len == 0)
    t = tensor_new(dtype, dims, num_dims, empty_buffer(), 0, 0);
  else {
    buffer_ref(tensor->buf);
    t = tensor_new(dtype, dims, num_dims, tensor->buf,
                   tensor->offset + byte_offset, len);
  }
  if (t == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  shim_set_ok(status);
  return t;
}

TF_Tensor *tfocl_tensor_to_device(struct tfocl_device *device,
                                  const TF_Tensor *tensor, TF_Status *status)
{
  TF_Tensor *out;
  enum tfocl_stream_role role;

  if (device == NULL || tensor == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "tfocl_tensor_to_device: NULL device or tensor");
    return NULL;
  }
  out = tfocl_tensor_alloc_device(device, tensor->dtype, tensor->dims,
                                  tensor->num_dims, status);
  if (out == NULL)
    return NULL;
  if (out->byte_size == 0)
    return out;
  role = tfocl_tensor_on_device(tensor) ? TFOCL_STREAM_DEVICE_TO_DEVICE
                                        : TFOCL_STREAM_HOST_TO_DEVICE;
  shim_device_copy(device, role, TF_TensorData(out), TF_TensorData(tensor),
                   out->byte_size, status);
  if (!shim_ok(status)) {
    TF_DeleteTensor(out);
    return NULL;
  }
  return out;
}

TF_Tensor *tfocl_tensor_to_host(const TF_Tensor *tensor, TF_Status *status)
{
  TF_Tensor *out;

  if (tensor == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "tfocl_tensor_to_host: NULL tensor");
    return NULL;
  }
  if (!tfocl_tensor_on_device(tensor)) {
    out = shim_tensor_ref(tensor);
    if (out == NULL)
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    else
      shim_set_ok(status);
    return out;
  }
  out = alloc_host(tensor->dtype, tensor->dims, tensor->num_dims,
                   tensor->byte_size);
  if (out == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  shim_device_copy(tensor->buf->device, TFOCL_STREAM_DEVICE_TO_HOST,
                   TF_TensorData(out), TF_TensorData(tensor), out->byte_size,
                   status);
  if (!shim_ok(status)) {
    TF_DeleteTensor(out);
    return NULL;
  }
  return out;
}
