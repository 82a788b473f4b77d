/* Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits and
 * SparseSoftmaxCrossEntropyWithLogits for float and half (softmax.cl).
 *
 * All four work row by row over the last dim: a work-item per row for short
 * rows, a work-group per row (fixed size, local-memory tree) for long ones;
 * on CPU devices Softmax and LogSoftmax take long rows a work-item each on
 * 16-wide vectors instead (ocl_use_row_vector_kernels).
 *
 * SparseSoftmaxCrossEntropyWithLogits keeps its labels in device memory as
 * TensorFlow's GPU kernel does, so it cannot fail the op on an
 * out-of-range label the way the CPU kernel does; like the GPU kernel it
 * writes NaN to that row's loss and backprop instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "launch.h"

extern const char ocl_cl_source_softmax[];

static const struct ocl_family family_float = {
    "softmax_float", ocl_cl_source_softmax, "-DT=float -DT_IS_FLOAT"};
static const struct ocl_family family_half = {
    "softmax_half", ocl_cl_source_softmax, "-DT=half -DT_IS_HALF"};

enum softmax_kind { SOFTMAX, LOG_SOFTMAX, XENT, SPARSE_XENT };

/* Rows at least this long get a work-group each, of this fixed size (PoCL
 * compiles a kernel again for each new local size). */
#define GROUP_MIN_ROW 128
#define GROUP_SIZE 128
/* softmax_rows_vec: rows at least one vector long. */
#define VECTOR_MIN_ROW 16

struct softmax_kernel {
  enum softmax_kind kind;
  TF_DataType dtype;
};

static const struct ocl_family *family_of(TF_DataType dtype)
{
  return dtype == TF_HALF ? &family_half : &family_float;
}

/* Enqueues `kernel`_rows (one work-item per row, `rows` appended as the
 * last argument) or `kernel`_group (one work-group per row, local scratch
 * appended). args has room for one more entry. */
static bool run_rows(TF_OpKernelContext *ctx, TF_DataType dtype,
                     const char *kernel, int64_t rows, int64_t n,
                     struct ocl_arg *args, int num_args, TF_Status *status)
{
  struct ocl_launch launch;
  char name[64];
  if (rows == 0)
    return true;
  if (!ocl_launch_init(&launch, ctx, status))
    return false;
  if (strcmp(kernel, "softmax") == 0 && n >= VECTOR_MIN_ROW &&
      ocl_use_row_vector_kernels(launch.device)) {
    args[num_args] = OCL_LONG(rows);
    return ocl_enqueue_rows(&launch, family_of(dtype), "softmax_rows_vec",
                            (size_t)rows, args, num_args + 1, status);
  }
  if (n >= GROUP_MIN_ROW) {
    size_t local = GROUP_SIZE, max = ocl_device_max_work_group_size(launch.device);
    while (local > 1 && local > max)
      local /= 2;
    size_t global = (size_t)rows * local;
    args[num_args] = OCL_LOCAL(local * sizeof(cl_float));
    snprintf(name, sizeof(name), "%s_group", kernel);
    return ocl_enqueue(&launch, family_of(dtype), name, 1, &global, &local,
                       args, num_args + 1, status);
  }
  args[num_args] = OCL_LONG(rows);
  snprintf(name, sizeof(name), "%s_rows", kernel);
  return ocl_enqueue_1d(&launch, family_of(dtype), name, (size_t)rows, args,
                        num_args + 1, status);
}

/* ---- Softmax, LogSoftmax ------------------------------------------------ */

static void softmax_compute_one(const struct softmax_kernel *k,
                                TF_OpKernelContext *ctx, TF_Status *status)
{
  TF_Tensor *x = NULL, *y = NULL;
  int64_t dims[OCL_MAX_DIMS];
  char shape[160];

  if (!ocl_get_inputs(ctx, &x, 1, status))
    return;
  int rank = ocl_tensor_dims(x, dims, status);
  if (rank < 0)
    goto out;
  if (rank < 1) {
    ocl_shape_format(dims, rank, shape, sizeof(shape));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "logits must have >= 1 dimension, got %s", shape);
    goto out;
  }
  y = ocl_tf.AllocateOutput(ctx, 0, k->dtype, dims, rank, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  int64_t n = dims[rank - 1];
  int64_t elements = ocl_shape_elements(dims, rank);
  if (elements == 0)
    goto out;
  struct ocl_arg args[5] = {
      OCL_TENSOR(x), OCL_TENSOR(y), OCL_LONG(n), OCL_INT(k->kind == LOG_SOFTMAX),
  };
  run_rows(ctx, k->dtype, "softmax", elements / n, n, args, 4, status);
out:
  if (y != NULL)
    ocl_tf.DeleteTensor(y);
  ocl_delete_tensors(&x, 1);
}

/* ---- SoftmaxCrossEntropyWithLogits ---------------------------------------- */

/* Right-aligns a rank <= 2 shape into [rows, cols]. */
static void as_matrix(const int64_t *dims, int rank, int64_t *m)
{
  m[0] = rank >= 2 ? dims[rank - 2] : 1;
  m[1] = rank >= 1 ? dims[rank - 1] : 1;
}

static void xent_compute_one(const struct softmax_kernel *k,
                             TF_OpKernelContext *ctx, TF_Status *status)
{
  TF_Tensor *in[2] = {NULL, NULL};
  TF_Tensor *loss = NULL, *backprop = NULL;
  int64_t f_dims[OCL_MAX_DIMS], l_dims[OCL_MAX_DIMS];
  char f_shape[160], l_shape[160];

  if (!ocl_get_inputs(ctx, in, 2, status))
    return;
  int f_rank = ocl_tensor_dims(in[0], f_dims, status);
  int l_rank = f_rank < 0 ? -1 : ocl_tensor_dims(in[1], l_dims, status);
  if (l_rank < 0)
    goto out;
  ocl_shape_format(f_dims, f_rank, f_shape, sizeof(f_shape));
  ocl_shape_format(l_dims, l_rank, l_shape, sizeof(l_shape));
  bool same = f_rank == l_rank &&
              memcmp(f_dims, l_dims, sizeof(int64_t) * (size_t)f_rank) == 0;
  int out_rank = f_rank;
  int64_t f[2], l[2], out[2];
  if (!same) {
    struct ocl_bcast b;
    if (!ocl_bcast_init(&b, f_dims, f_rank, l_dims, l_rank, status)) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "logits and labels must be broadcastable: logits_size=%s "
                     "labels_size=%s",
                     f_shape, l_shape);
      goto out;
    }
    out_rank = b.out_rank;
  }
  if (out_rank != 2) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "logits and labels must be either 2-dimensional, or "
                   "broadcasted to be 2-dimensional");
    goto out;
  }
  as_matrix(f_dims, f_rank, f);
  as_matrix(l_dims, l_rank, l);
  out[0] = f[0] > l[0] ? f[0] : l[0];
  out[1] = f[1] > l[1] ? f[1] : l[1];
  if (f[0] == 0 || l[0] == 0)
    out[0] = 0;
  if (f[1] == 0 || l[1] == 0)
    out[1] = 0;
  loss = ocl_tf.AllocateOutput(ctx, 0, k->dtype, out, 1, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  backprop = ocl_tf.AllocateOutput(ctx, 1, k->dtype, out, 2, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK || out[0] == 0)
    goto out;
  /* With no classes only the loss (zeros) has a buffer: it stands in for
   * the empty tensors, which the kernel does not read. */
  bool empty = out[1] == 0;
  struct ocl_arg args[11] = {
      OCL_TENSOR(empty ? loss : in[0]),
      OCL_TENSOR(empty ? loss : in[1]),
      OCL_TENSOR(loss),
      OCL_TENSOR(empty ? loss : backprop),
      OCL_LONG(out[1]),
      OCL_LONG(f[0] == 1 ? 0 : f[1]),
      OCL_LONG(f[1] == 1 ? 0 : 1),
      OCL_LONG(l[0] == 1 ? 0 : l[1]),
      OCL_LONG(l[1] == 1 ? 0 : 1),
  };
  run_rows(ctx, k->dtype, "xent", out[0], out[1], args, 9, status);
out:
  if (loss != NULL)
    ocl_tf.DeleteTensor(loss);
  if (backprop != NULL)
    ocl_tf.DeleteTensor(backprop);
  ocl_delete_tensors(in, 2);
}

/* ---- SparseSoftmaxCrossEntropyWithLogits ---------------------------------- */

static void sparse_compute_one(const struct softmax_kernel *k,
                               TF_OpKernelContext *ctx, TF_Status *status)
{
  TF_Tensor *in[2] = {NULL, NULL};
  TF_Tensor *loss = NULL, *backprop = NULL;
  int64_t f_dims[OCL_MAX_DIMS], l_dims[OCL_MAX_DIMS];
  char f_shape[160], l_shape[160];

  if (!ocl_get_inputs(ctx, in, 2, status))
    return;
  int f_rank = ocl_tensor_dims(in[0], f_dims, status);
  int l_rank = f_rank < 0 ? -1 : ocl_tensor_dims(in[1], l_dims, status);
  if (l_rank < 0)
    goto out;
  ocl_shape_format(f_dims, f_rank, f_shape, sizeof(f_shape));
  ocl_shape_format(l_dims, l_rank, l_shape, sizeof(l_shape));
  if (f_rank != 2) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "logits must be 2-D, but got shape %s", f_shape);
    goto out;
  }
  if (l_rank != 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "labels must be 1-D, but got shape %s", l_shape);
    goto out;
  }
  if (f_dims[0] != l_dims[0]) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "logits and labels must have the same first dimension, got "
                   "logits shape %s and labels shape %s",
                   f_shape, l_shape);
    goto out;
  }
  if (f_dims[1] <= 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Must have at least one class, but got logits shape %s",
                   f_shape);
    goto out;
  }
  loss = ocl_tf.AllocateOutput(ctx, 0, k->dtype, f_dims, 1, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  backprop = ocl_tf.AllocateOutput(ctx, 1, k->dtype, f_dims, 2, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  struct ocl_arg args[7] = {
      OCL_TENSOR(in[0]),    OCL_TENSOR(in[1]),
      OCL_TENSOR(loss),     OCL_TENSOR(backprop),
      OCL_LONG(f_dims[1]),  OCL_INT(ocl_tf.TensorType(in[1]) == TF_INT64),
  };
  run_rows(ctx, k->dtype, "sparse_xent", f_dims[0], f_dims[1], args, 6,
           status);
out:
  if (loss != NULL)
    ocl_tf.DeleteTensor(loss);
  if (backprop != NULL)
    ocl_tf.DeleteTensor(backprop);
  ocl_delete_tensors(in, 2);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

/* kind: an enum softmax_kind. */
static void *softmax_create(TF_OpKernelConstruction *ctx, int kind)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct softmax_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
  } else {
    k->kind = (enum softmax_kind)kind;
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  }
  if (ocl_tf.GetCode(status) != TF_OK) {
    ocl_tf.OpKernelConstruction_Failure(ctx, status);
    free(k);
    k = NULL;
  }
  ocl_tf.DeleteStatus(status);
  return k;
}

_Static_assert(SPARSE_XENT < OCL_MAX_FAMILY_OPS,
               "one create function per softmax kind");
OCL_FAMILY_CREATES(softmax, softmax_create);

static void softmax_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct softmax_kernel *k = kernel;
  TF_Status *status = ocl_tf.NewStatus();
  switch (k->kind) {
  case SOFTMAX:
  case LOG_SOFTMAX: softmax_compute_one(k, ctx, status); break;
  case XENT: xent_compute_one(k, ctx, status); break;
  case SPARSE_XENT: sparse_compute_one(k, ctx, status); break;
  }
  ocl_compute_done(ctx, status);
}

static void softmax_delete(void *kernel) { free(kernel); }

/* ---- Registration ------------------------------------------------------ */

void ocl_register_softmax_kernels(void)
{
  static const struct {
    const char *op;
    enum softmax_kind kind;
  } ops[] = {
      {"Softmax", SOFTMAX},
      {"LogSoftmax", LOG_SOFTMAX},
      {"SoftmaxCrossEntropyWithLogits", XENT},
      {"SparseSoftmaxCrossEntropyWithLogits", SPARSE_XENT},
  };
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF};

  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = ops[i].op,
          .create = softmax_creates[ops[i].kind],
          .compute = softmax_compute,
          .destroy = softmax_delete,
          .type_attrs = {"T"},
          .types = {types[t]},
      });
}
