/* Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits and
 * SparseSoftmaxCrossEntropyWithLogits for float, half and double
 * (softmax.cl; double only where cl_khr_fp64 is).
 *
 * All four work row by row over the last dim: on CPU devices a work-item
 * per row on 16-wide vectors; on GPUs a work-group per long row (a
 * local-memory tree folds the row's max and sum), a work-item per short
 * one. Softmax, LogSoftmax and the sparse loss over fewer rows than the
 * device has cores (CPU) or work-group slots (GPU) split each long row into
 * parts, fold the parts' maxima and sums per row, then write the outputs
 * element-wise: a long reduction into few outputs on one core or compute
 * unit each would leave the device idle.
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

enum program_type { P_FLOAT, P_HALF, P_DOUBLE, NUM_PROGRAM_TYPES };

/* [wide][type]: 32-bit index arithmetic, or 64-bit (-DIDX_64). */
OCL_PROGRAM_TABLE
static const struct ocl_program programs[2][NUM_PROGRAM_TYPES] = {
    {{"softmax_float", ocl_cl_source_softmax, "-DT=float -DT_IS_FLOAT"},
     {"softmax_half", ocl_cl_source_softmax, "-DT=half -DT_IS_HALF"},
     {"softmax_double", ocl_cl_source_softmax, "-DT=double -DT_IS_DOUBLE"}},
    {{"softmax_float_idx64", ocl_cl_source_softmax,
      "-DT=float -DT_IS_FLOAT -DIDX_64"},
     {"softmax_half_idx64", ocl_cl_source_softmax,
      "-DT=half -DT_IS_HALF -DIDX_64"},
     {"softmax_double_idx64", ocl_cl_source_softmax,
      "-DT=double -DT_IS_DOUBLE -DIDX_64"}},
};

enum softmax_kind { SOFTMAX, LOG_SOFTMAX, XENT, SPARSE_XENT };

/* Rows at least this long get a work-group each on GPUs, of this size at
 * most (fixed per device: PoCL compiles a kernel again for each new local
 * size). */
#define GROUP_MIN_ROW 128
#define GROUP_SIZE 256
/* The _rows_vec kernels: rows at least one vector long. */
#define VECTOR_MIN_ROW 16
/* Splitting rows: CPU devices aim at SPLIT_ITEMS_PER_CORE work-items per
 * core, parts of at least SPLIT_MIN_ELEMENTS; GPUs at SPLIT_GROUPS_PER_CU
 * work-groups per compute unit, SPLIT_MIN_LOADS columns per work-item. */
#define SPLIT_ITEMS_PER_CORE 4
#define SPLIT_MIN_ELEMENTS 4096
#define SPLIT_GROUPS_PER_CU 8
#define SPLIT_MIN_LOADS 16
/* Index arithmetic is 32-bit while every index fits in an int. */
#define IDX32_LIMIT ((int64_t)INT32_MAX - 65536)

/* TFOCL_INDEX_WIDTH=64 (read once, at registration) takes the 64-bit
 * programs for every size, for tests. */
static bool force_wide;

/* The kernels of one op (softmax.cl's names). */
enum variant {
  ROWS, GROUP, ROWS_VEC, PARTS_VEC, PARTS_GROUP, FOLD, APPLY, NUM_VARIANTS
};

struct softmax_kernel {
  enum softmax_kind kind;
  TF_DataType dtype;
  /* softmax.cl's ACC: the type of its local scratch and of a split row's
   * statistics (float for float and half). */
  TF_DataType acc_dtype;
  size_t acc_size;
  struct ocl_kernel k[2][NUM_VARIANTS]; /* [wide] */
};

static struct ocl_arg idx_arg(bool wide, int64_t v)
{
  return wide ? OCL_LONG(v) : OCL_INT((int32_t)v);
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Enqueues the op's row kernel over [rows, n]: _rows_vec on CPU devices
 * (vector: its columns are contiguous), _group for long rows on GPUs,
 * else _rows. args has room for one more entry (rows, or the group's local
 * scratch). */
static bool run_rows(struct ocl_op *op, struct softmax_kernel *k, bool wide,
                     int64_t rows, int64_t n, bool vector,
                     struct ocl_arg *args, int num_args)
{
  if (rows == 0)
    return true;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  struct ocl_kernel *kernels = k->k[wide];
  args[num_args] = idx_arg(wide, rows);
  if (info->cpu_shape && n >= VECTOR_MIN_ROW)
    return ocl_launch_rows(op, &kernels[vector ? ROWS_VEC : ROWS],
                           (size_t)rows, args, num_args + 1);
  if (!info->cpu_shape && n >= GROUP_MIN_ROW) {
    size_t local = ocl_kernel_fit_local(op, &kernels[GROUP], GROUP_SIZE);
    if (local == 0)
      return false;
    size_t global = (size_t)rows * local;
    args[num_args] = OCL_LOCAL(local * k->acc_size);
    return ocl_launch(op, &kernels[GROUP], 1, &global, &local, args,
                      num_args + 1);
  }
  return ocl_launch_1d(op, &kernels[ROWS], (size_t)rows, args, num_args + 1);
}

/* How a split of [rows, n] runs: parts of `chunk` columns; `local` is the
 * work-group of softmax_parts_group (GPUs). parts 1: no split. */
struct split {
  int64_t parts, chunk;
  size_t local;
};

static bool plan_split(struct ocl_op *op, struct softmax_kernel *k, bool wide,
                       int64_t rows, int64_t n, struct split *sp)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  int64_t target, min_chunk;
  sp->parts = 1;
  sp->local = 1;
  if (info->cpu_shape) {
    target = SPLIT_ITEMS_PER_CORE * (int64_t)info->compute_units;
    min_chunk = SPLIT_MIN_ELEMENTS;
  } else {
    if (n < GROUP_MIN_ROW)
      return true;
    sp->local = ocl_kernel_fit_local(op, &k->k[wide][PARTS_GROUP], GROUP_SIZE);
    if (sp->local == 0)
      return false;
    target = SPLIT_GROUPS_PER_CU * (int64_t)info->compute_units;
    min_chunk = (int64_t)sp->local * SPLIT_MIN_LOADS;
  }
  if (rows >= target || n < 2 * min_chunk)
    return true;
  int64_t parts = ceil_div(target, rows);
  if (parts > n / min_chunk)
    parts = n / min_chunk;
  sp->chunk = ceil_div(ceil_div(n, parts), 64) * 64; /* whole vector blocks */
  sp->parts = ceil_div(n, sp->chunk);
  return true;
}

/* The first two passes of a split: each part's max and sum, then per row
 * M, 1 / S and log S into a temp of [rows, 4], returned (NULL with the
 * status set). */
static TF_Tensor *split_row_stats(struct ocl_op *op, struct softmax_kernel *k,
                                  bool wide, int64_t rows, int64_t n,
                                  const struct split *sp, const TF_Tensor *x)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  TF_Tensor *stats = ocl_op_temp(op, k->acc_dtype, rows * sp->parts * 2);
  TF_Tensor *row_stats = stats ? ocl_op_temp(op, k->acc_dtype, rows * 4) : NULL;
  if (row_stats == NULL)
    return NULL;
  struct ocl_kernel *kernels = k->k[wide];
  int64_t items = rows * sp->parts;
  struct ocl_arg args[7] = {
      OCL_TENSOR(x),
      OCL_TENSOR(stats),
      idx_arg(wide, n),
      idx_arg(wide, sp->chunk),
      idx_arg(wide, sp->parts),
  };
  bool ok;
  if (info->cpu_shape) {
    args[5] = idx_arg(wide, items);
    ok = ocl_launch_rows(op, &kernels[PARTS_VEC], (size_t)items, args, 6);
  } else {
    size_t global = (size_t)items * sp->local;
    args[5] = OCL_LOCAL(sp->local * k->acc_size);
    ok = ocl_launch(op, &kernels[PARTS_GROUP], 1, &global, &sp->local, args,
                    6);
  }
  const struct ocl_arg fold[] = {
      OCL_TENSOR(stats),
      OCL_TENSOR(row_stats),
      idx_arg(wide, sp->parts),
      idx_arg(wide, rows),
  };
  if (!ok || !ocl_launch_1d(op, &kernels[FOLD], (size_t)rows, fold, 4))
    return NULL;
  ocl_op_release(op, stats); /* enqueued: see ocl_op_temp */
  return row_stats;
}

/* The element-wise pass over [rows, n]: a work-item per element, the
 * column in dim 0. */
static bool launch_apply(struct ocl_op *op, struct softmax_kernel *k,
                         bool wide, int64_t rows, int64_t n,
                         const struct ocl_arg *args, int num_args)
{
  struct ocl_kernel *apply = &k->k[wide][APPLY];
  size_t local[2] = {ocl_kernel_fit_local(op, apply,
                                          ocl_elementwise_local(op->info)),
                     1};
  if (local[0] == 0)
    return false;
  size_t global[2] = {(size_t)n, (size_t)rows};
  return ocl_launch(op, apply, 2, global, local, args, num_args);
}

/* t's dims into dims[OCL_MAX_RANK] (any rank TensorFlow takes); -1
 * (INVALID_ARGUMENT) beyond it. */
static int tensor_dims(struct ocl_op *op, const TF_Tensor *t, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  if (rank > OCL_MAX_RANK) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Shapes of rank %d exceed TensorFlow's limit of %d "
                "dimensions",
                rank, OCL_MAX_RANK);
    return -1;
  }
  for (int i = 0; i < rank; i++)
    dims[i] = ocl_tf.Dim(t, i);
  return rank;
}

static bool is_wide(int64_t elements)
{
  return force_wide || elements > IDX32_LIMIT;
}

/* ---- Softmax, LogSoftmax ------------------------------------------------ */

static void softmax_compute_one(struct softmax_kernel *k, struct ocl_op *op)
{
  int64_t dims[OCL_MAX_RANK];
  char shape[160];

  TF_Tensor *x = ocl_op_input(op, 0);
  int rank = x != NULL ? tensor_dims(op, x, dims) : -1;
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
  int64_t rows = elements / n;
  bool wide = is_wide(elements);
  struct split sp;
  if (!plan_split(op, k, wide, rows, n, &sp))
    return;
  struct ocl_arg args[6] = {
      OCL_TENSOR(x),
      OCL_TENSOR(y),
      idx_arg(wide, n),
      OCL_INT(k->kind == LOG_SOFTMAX),
  };
  if (sp.parts == 1) {
    run_rows(op, k, wide, rows, n, true, args, 4);
    return;
  }
  TF_Tensor *row_stats = split_row_stats(op, k, wide, rows, n, &sp, x);
  if (row_stats == NULL)
    return;
  const struct ocl_arg apply[] = {
      OCL_TENSOR(x),    OCL_TENSOR(row_stats),
      OCL_TENSOR(y),    idx_arg(wide, n),
      OCL_INT(k->kind == LOG_SOFTMAX), idx_arg(wide, rows),
  };
  launch_apply(op, k, wide, rows, n, apply, 6);
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
  int64_t f_dims[OCL_MAX_RANK], l_dims[OCL_MAX_RANK];
  char f_shape[160], l_shape[160];

  TF_Tensor *features = ocl_op_input(op, 0);
  TF_Tensor *labels = features != NULL ? ocl_op_input(op, 1) : NULL;
  int f_rank = labels != NULL ? tensor_dims(op, features, f_dims) : -1;
  int l_rank = f_rank >= 0 ? tensor_dims(op, labels, l_dims) : -1;
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
  bool wide = is_wide(out[0] * out[1]);
  int64_t f_cs = f[1] == 1 ? 0 : 1, l_cs = l[1] == 1 ? 0 : 1;
  struct ocl_arg args[10] = {
      OCL_TENSOR(empty ? loss : features),
      OCL_TENSOR(empty ? loss : labels),
      OCL_TENSOR(loss),
      OCL_TENSOR(empty ? loss : backprop),
      idx_arg(wide, out[1]),
      idx_arg(wide, f[0] == 1 ? 0 : f[1]),
      idx_arg(wide, f_cs),
      idx_arg(wide, l[0] == 1 ? 0 : l[1]),
      idx_arg(wide, l_cs),
  };
  /* The vector kernel reads whole rows: no column broadcast. */
  run_rows(op, k, wide, out[0], out[1], f_cs == 1 && l_cs == 1, args, 9);
}

/* ---- SparseSoftmaxCrossEntropyWithLogits ---------------------------------- */

static void sparse_compute_one(struct softmax_kernel *k, struct ocl_op *op)
{
  int64_t f_dims[OCL_MAX_RANK], l_dims[OCL_MAX_RANK];
  char f_shape[160], l_shape[160];

  TF_Tensor *features = ocl_op_input(op, 0);
  TF_Tensor *labels = features != NULL ? ocl_op_input(op, 1) : NULL;
  int f_rank = labels != NULL ? tensor_dims(op, features, f_dims) : -1;
  int l_rank = f_rank >= 0 ? tensor_dims(op, labels, l_dims) : -1;
  if (l_rank < 0)
    return;
  bool bad = f_rank != 2 || l_rank != 1 || f_dims[0] != l_dims[0] ||
             f_dims[1] <= 0;
  if (bad) {
    /* Shapes formatted for the message only. */
    ocl_shape_format(f_dims, f_rank, f_shape, sizeof(f_shape));
    ocl_shape_format(l_dims, l_rank, l_shape, sizeof(l_shape));
  }
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
  int64_t rows = f_dims[0], n = f_dims[1];
  if (rows == 0)
    return;
  bool wide = is_wide(rows * n);
  struct split sp;
  if (!plan_split(op, k, wide, rows, n, &sp))
    return;
  struct ocl_arg args[8] = {
      OCL_TENSOR(features), OCL_TENSOR(labels),
      OCL_TENSOR(loss),     OCL_TENSOR(backprop),
      idx_arg(wide, n),     OCL_INT(ocl_tf.TensorType(labels) == TF_INT64),
  };
  if (sp.parts == 1) {
    run_rows(op, k, wide, rows, n, true, args, 6);
    return;
  }
  TF_Tensor *row_stats = split_row_stats(op, k, wide, rows, n, &sp, features);
  if (row_stats == NULL)
    return;
  args[6] = OCL_TENSOR(row_stats);
  args[7] = idx_arg(wide, rows);
  launch_apply(op, k, wide, rows, n, args, 8);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

/* kind: an enum softmax_kind. */
static void *softmax_create(TF_OpKernelConstruction *ctx, int kind)
{
  static const char *const prefixes[] = {
      [SOFTMAX] = "softmax", [LOG_SOFTMAX] = "softmax", [XENT] = "xent",
      [SPARSE_XENT] = "sparse_xent"};
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
  const char *prefix = prefixes[kind];
  enum program_type type = k->dtype == TF_HALF     ? P_HALF
                           : k->dtype == TF_DOUBLE ? P_DOUBLE
                                                   : P_FLOAT;
  k->acc_dtype = type == P_DOUBLE ? TF_DOUBLE : TF_FLOAT;
  k->acc_size = type == P_DOUBLE ? sizeof(cl_double) : sizeof(cl_float);
  for (int wide = 0; wide < 2; wide++) {
    const struct ocl_program *program = &programs[wide][type];
    struct ocl_kernel *kernels = k->k[wide];
    ocl_kernel_initf(&kernels[ROWS], program, "%s_rows", prefix);
    ocl_kernel_initf(&kernels[GROUP], program, "%s_group", prefix);
    ocl_kernel_initf(&kernels[ROWS_VEC], program, "%s_rows_vec", prefix);
    ocl_kernel_init(&kernels[PARTS_VEC], program, "softmax_parts_vec");
    ocl_kernel_init(&kernels[PARTS_GROUP], program, "softmax_parts_group");
    ocl_kernel_init(&kernels[FOLD], program, "softmax_fold");
    ocl_kernel_init(&kernels[APPLY], program,
                    kind == SPARSE_XENT ? "sparse_xent_apply"
                                        : "softmax_apply");
  }
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
  force_wide = ocl_config()->hooks.index64;
  static const struct {
    const char *op;
    enum softmax_kind kind;
  } ops[] = {
      {"Softmax", SOFTMAX},
      {"LogSoftmax", LOG_SOFTMAX},
      {"SoftmaxCrossEntropyWithLogits", XENT},
      {"SparseSoftmaxCrossEntropyWithLogits", SPARSE_XENT},
  };
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_DOUBLE};

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
