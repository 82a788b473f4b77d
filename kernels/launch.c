/* The families' interface before kernels/runtime.h (see launch.h), on top
 * of the runtime layer. */
#include "launch.h"

#include <stdlib.h>

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

/* An op view of an old-style launch: the caller's status, borrowed. */
static struct ocl_op op_of(const struct ocl_launch *launch, TF_Status *status)
{
  return (struct ocl_op){
      .ctx = launch->ctx,
      .status = status,
      .device = launch->device,
      .stream = launch->stream,
      .queue = launch->queue,
      .info = &launch->device->info,
  };
}

bool ocl_enqueue(const struct ocl_launch *launch,
                 const struct ocl_family *family, const char *kernel_name,
                 cl_uint work_dim, const size_t *global, const size_t *local,
                 const struct ocl_arg *args, int num_args, TF_Status *status)
{
  struct ocl_op op = op_of(launch, status);
  return ocl_launch_by_name(&op, family, kernel_name, work_dim, global, local,
                            args, num_args);
}

size_t ocl_elementwise_local_size(const struct ocl_device *device)
{
  return ocl_elementwise_local(&device->info);
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

bool ocl_use_row_vector_kernels(const struct ocl_device *device)
{
  return device->info.cpu_shape;
}

bool ocl_enqueue_rows(const struct ocl_launch *launch,
                      const struct ocl_family *family, const char *kernel_name,
                      size_t n, const struct ocl_arg *args, int num_args,
                      TF_Status *status)
{
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
