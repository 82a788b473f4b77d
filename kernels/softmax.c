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
#include "runtime.h"

extern const char ocl_cl_source_softmax[];

static const struct ocl_program program_float = {
    "softmax_float", ocl_cl_source_softmax, "-DT=float -DT_IS_FLOAT"};
static const struct ocl_program program_half = {
    "softmax_half", ocl_cl_source_softmax, "-DT=half -DT_IS_HALF"};

enum softmax_kind { SOFTMAX, LOG_SOFTMAX, XENT, SPARSE_XENT };

/* Rows at least this long get a work-group each, of this size at most
 * (fixed per device: PoCL compiles a kernel again for each new local
 * size). */
#define GROUP_MIN_ROW 128
#define GROUP_SIZE 128
/* softmax_rows_vec: rows at least one vector long. */
#define VECTOR_MIN_ROW 16

/* The kernels of one op (softmax.cl's suffixes). */
enum variant { ROWS, GROUP, ROWS_VEC, NUM_VARIANTS };

struct softmax_kernel {
  enum softmax_kind kind;
  TF_DataType dtype;
  struct ocl_kernel k[NUM_VARIANTS];
};

/* Enqueues the op's _rows kernel (one work-item per row, `rows` appended
 * as the last argument), _group kernel (one work-group per row, local
 * scratch appended) or, on CPU devices, _rows_vec. args has room for one
 * more entry. */
static bool run_rows(struct ocl_op *op, struct softmax_kernel *k,
                     int64_t rows, int64_t n, struct ocl_arg *args,
                     int num_args)
{
  if (rows == 0)
    return true;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  bool softmax = k->kind == SOFTMAX || k->kind == LOG_SOFTMAX;
  if (softmax && n >= VECTOR_MIN_ROW && info->cpu_shape) {
    args[num_args] = OCL_LONG(rows);
    return ocl_launch_rows(op, &k->k[ROWS_VEC], (size_t)rows, args,
                           num_args + 1);
  }
  if (n >= GROUP_MIN_ROW) {
    size_t local = ocl_kernel_fit_local(op, &k->k[GROUP], GROUP_SIZE);
    if (local == 0)
      return false;
    size_t global = (size_t)rows * local;
    args[num_args] = OCL_LOCAL(local * sizeof(cl_float));
    return ocl_launch(op, &k->k[GROUP], 1, &global, &local, args,
                      num_args + 1);
  }
  args[num_args] = OCL_LONG(rows);
  return ocl_launch_1d(op, &k->k[ROWS], (size_t)rows, args, num_args + 1);
}

/* ---- Softmax, LogSoftmax ------------------------------------------------ */

static void softmax_compute_one(struct softmax_kernel *k, struct ocl_op *op)
{
  int64_t dims[OCL_MAX_DIMS];
  char shape[160];

  TF_Tensor *x = ocl_op_input(op, 0);
  int rank = x != NULL ? ocl_op_dims(op, x, dims) : -1;
  if (rank < 0)
    return;
  if (rank < 1) {
    ocl_shape_format(dims, rank, shape, sizeof(shape));
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "logits must have >= 1 dimension, got %s", shape);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, dims, rank);
  if (y == NULL)
    return;
  int64_t n = dims[rank - 1];
  int64_t elements = ocl_shape_elements(dims, rank);
  if (elements == 0)
    return;
  struct ocl_arg args[5] = {
      OCL_TENSOR(x), OCL_TENSOR(y), OCL_LONG(n), OCL_INT(k->kind == LOG_SOFTMAX),
  };
  run_rows(op, k, elements / n, n, args, 4);
}

/* ---- SoftmaxCrossEntropyWithLogits ---------------------------------------- */

/* Right-aligns a rank <= 2 shape into [rows, cols]. */
static void as_matrix(const int64_t *dims, int rank, int64_t *m)
{
  m[0] = rank >= 2 ? dims[rank - 2] : 1;
  m[1] = rank >= 1 ? dims[rank - 1] : 1;
}

static void xent_compute_one(struct softmax_kernel *k, struct ocl_op *op)
{
  int64_t f_dims[OCL_MAX_DIMS], l_dims[OCL_MAX_DIMS];
  char f_shape[160], l_shape[160];

  TF_Tensor *features = ocl_op_input(op, 0);
  TF_Tensor *labels = features != NULL ? ocl_op_input(op, 1) : NULL;
  int f_rank = labels != NULL ? ocl_op_dims(op, features, f_dims) : -1;
  int l_rank = f_rank >= 0 ? ocl_op_dims(op, labels, l_dims) : -1;
  if (l_rank < 0)
    return;
  bool same = f_rank == l_rank &&
              memcmp(f_dims, l_dims, sizeof(int64_t) * (size_t)f_rank) == 0;
  int out_rank = f_rank;
  int64_t f[2], l[2], out[2];
  if (!same) {
    struct ocl_bcast b;
    if (!ocl_bcast_init(&b, f_dims, f_rank, l_dims, l_rank, op->status)) {
      ocl_shape_format(f_dims, f_rank, f_shape, sizeof(f_shape));
      ocl_shape_format(l_dims, l_rank, l_shape, sizeof(l_shape));
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "logits and labels must be broadcastable: logits_size=%s "
                  "labels_size=%s",
                  f_shape, l_shape);
      return;
    }
    out_rank = b.out_rank;
  }
  if (out_rank != 2) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "logits and labels must be either 2-dimensional, or "
                "broadcasted to be 2-dimensional");
    return;
  }
  as_matrix(f_dims, f_rank, f);
  as_matrix(l_dims, l_rank, l);
  out[0] = f[0] > l[0] ? f[0] : l[0];
  out[1] = f[1] > l[1] ? f[1] : l[1];
  if (f[0] == 0 || l[0] == 0)
    out[0] = 0;
  if (f[1] == 0 || l[1] == 0)
    out[1] = 0;
  TF_Tensor *loss = ocl_op_output(op, 0, k->dtype, out, 1);
  TF_Tensor *backprop =
      loss != NULL ? ocl_op_output(op, 1, k->dtype, out, 2) : NULL;
  if (backprop == NULL || out[0] == 0)
    return;
  /* With no classes only the loss (zeros) has a buffer: it stands in for
   * the empty tensors, which the kernel does not read. */
  bool empty = out[1] == 0;
  struct ocl_arg args[11] = {
      OCL_TENSOR(empty ? loss : features),
      OCL_TENSOR(empty ? loss : labels),
      OCL_TENSOR(loss),
      OCL_TENSOR(empty ? loss : backprop),
      OCL_LONG(out[1]),
      OCL_LONG(f[0] == 1 ? 0 : f[1]),
      OCL_LONG(f[1] == 1 ? 0 : 1),
      OCL_LONG(l[0] == 1 ? 0 : l[1]),
      OCL_LONG(l[1] == 1 ? 0 : 1),
  };
  run_rows(op, k, out[0], out[1], args, 9);
}

/* ---- SparseSoftmaxCrossEntropyWithLogits ---------------------------------- */

static void sparse_compute_one(struct softmax_kernel *k, struct ocl_op *op)
{
  int64_t f_dims[OCL_MAX_DIMS], l_dims[OCL_MAX_DIMS];
  char f_shape[160], l_shape[160];

  TF_Tensor *features = ocl_op_input(op, 0);
  TF_Tensor *labels = features != NULL ? ocl_op_input(op, 1) : NULL;
  int f_rank = labels != NULL ? ocl_op_dims(op, features, f_dims) : -1;
  int l_rank = f_rank >= 0 ? ocl_op_dims(op, labels, l_dims) : -1;
  if (l_rank < 0)
    return;
  ocl_shape_format(f_dims, f_rank, f_shape, sizeof(f_shape));
  ocl_shape_format(l_dims, l_rank, l_shape, sizeof(l_shape));
  if (f_rank != 2) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "logits must be 2-D, but got shape %s", f_shape);
    return;
  }
  if (l_rank != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "labels must be 1-D, but got shape %s", l_shape);
    return;
  }
  if (f_dims[0] != l_dims[0]) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "logits and labels must have the same first dimension, got "
                "logits shape %s and labels shape %s",
                f_shape, l_shape);
    return;
  }
  if (f_dims[1] <= 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Must have at least one class, but got logits shape %s",
                f_shape);
    return;
  }
  TF_Tensor *loss = ocl_op_output(op, 0, k->dtype, f_dims, 1);
  TF_Tensor *backprop =
      loss != NULL ? ocl_op_output(op, 1, k->dtype, f_dims, 2) : NULL;
  if (backprop == NULL)
    return;
  struct ocl_arg args[7] = {
      OCL_TENSOR(features), OCL_TENSOR(labels),
      OCL_TENSOR(loss),     OCL_TENSOR(backprop),
      OCL_LONG(f_dims[1]),  OCL_INT(ocl_tf.TensorType(labels) == TF_INT64),
  };
  run_rows(op, k, f_dims[0], f_dims[1], args, 6);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

/* kind: an enum softmax_kind. */
static void *softmax_create(TF_OpKernelConstruction *ctx, int kind)
{
  static const char *const prefixes[] = {
      [SOFTMAX] = "softmax", [LOG_SOFTMAX] = "softmax", [XENT] = "xent",
      [SPARSE_XENT] = "sparse_xent"};
  static const char *const suffixes[NUM_VARIANTS] = {"rows", "group",
                                                     "rows_vec"};
  TF_Status *status = ocl_tf.NewStatus();
  struct softmax_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  k->kind = (enum softmax_kind)kind;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  const struct ocl_program *program =
      k->dtype == TF_HALF ? &program_half : &program_float;
  for (int v = 0; v < NUM_VARIANTS; v++)
    ocl_kernel_initf(&k->k[v], program, "%s_%s", prefixes[kind], suffixes[v]);
  ocl_tf.DeleteStatus(status);
  return k;
}

_Static_assert(SPARSE_XENT < OCL_MAX_FAMILY_OPS,
               "one create function per softmax kind");
OCL_FAMILY_CREATES(softmax, softmax_create);

static void softmax_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct softmax_kernel *k = kernel;
  struct ocl_op op;
  ocl_op_begin(&op, ctx);
  switch (k->kind) {
  case SOFTMAX:
  case LOG_SOFTMAX: softmax_compute_one(k, &op); break;
  case XENT: xent_compute_one(k, &op); break;
  case SPARSE_XENT: sparse_compute_one(k, &op); break;
  }
  ocl_op_end(&op);
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
