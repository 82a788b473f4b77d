/* Reductions: Sum, Mean, Prod, Max, Min, All, Any, ArgMax, ArgMin,
 * BiasAddGrad and L2Loss.
 *
 * float, half, int64 and bool run on the device (reduce.cl, one program per
 * storage type). int32 follows TensorFlow's GPU convention (see binary.c):
 * its tensors live in host memory and the op runs on the host. The axes
 * (reduction_indices, dimension) are always host memory, as in TensorFlow.
 *
 * Every reduction goes through ocl_reduction_init (kernels/shape.h): when
 * the collapsed input is [outer, reduce, inner] with long rows, a
 * work-group per output folds the row in local memory (_group); otherwise
 * one work-item per output loops over a strided layout (_general), which
 * also covers any mix of reduced and kept axes, identity copies (nothing
 * reduced) and empty reductions (the identity element). On CPU devices
 * (ocl_use_row_vector_kernels) long rows and wide columns take the _rows_vec
 * and _cols_vec kernels instead: a work-item per row or per 16 columns,
 * folding 16-wide vectors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_reduce[];

static const struct ocl_program programs[OCL_NUM_STORAGES] =
    OCL_TYPED_PROGRAMS("reduce", ocl_cl_source_reduce);

enum reduce_kind {
  SUM, MEAN, PROD, MAX, MIN, ALL, ANY, ARG_MAX, ARG_MIN, BIAS_ADD_GRAD, L2_LOSS
};

#define TB(t) (1u << (t))
#define NUMBERS (TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_INT64) | TB(TF_INT32))

struct reduce_op {
  const char *op;
  const char *kernel; /* prefix in reduce.cl */
  enum reduce_kind kind;
  unsigned types;
  const char *axes_arg; /* host-memory axes input, or NULL */
};

static const struct reduce_op reduce_ops[] = {
    {"Sum", "sum", SUM, NUMBERS, "reduction_indices"},
    {"Mean", "sum", MEAN, NUMBERS, "reduction_indices"},
    {"Prod", "prod", PROD, NUMBERS, "reduction_indices"},
    {"Max", "max", MAX, NUMBERS, "reduction_indices"},
    {"Min", "min", MIN, NUMBERS, "reduction_indices"},
    {"All", "all", ALL, TB(TF_BOOL), "reduction_indices"},
    {"Any", "any", ANY, TB(TF_BOOL), "reduction_indices"},
    {"ArgMax", "argmax", ARG_MAX, NUMBERS, "dimension"},
    {"ArgMin", "argmin", ARG_MIN, NUMBERS, "dimension"},
    {"BiasAddGrad", "sum", BIAS_ADD_GRAD,
     TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_INT64), NULL},
    {"L2Loss", "sumsq", L2_LOSS, TB(TF_FLOAT) | TB(TF_HALF), NULL},
};

/* The kernels of one op on one storage type (reduce.cl's suffixes). */
enum variant {
  GENERAL, GROUP, ROWS_VEC, COLS_VEC, PARTS_VEC, FOLD_PARTS, NUM_VARIANTS
};
static const char *const variant_suffix[NUM_VARIANTS] = {
    "general", "group", "rows_vec", "cols_vec", "parts_vec", "fold_parts"};

struct reduce_kernel {
  const struct reduce_op *op;
  TF_DataType dtype;
  enum ocl_storage storage;
  bool keep_dims;
  bool channels_first; /* BiasAddGrad data_format NCHW */
  TF_DataType index_type; /* ArgMax/ArgMin output_type */
  struct ocl_kernel k[NUM_VARIANTS]; /* not for int32 (host) */
};

/* The strided form as reduce.cl's red_t reads it: 8-byte members only. */
struct red_args {
  cl_long out_dims[OCL_MAX_DIMS];
  cl_long out_strides[OCL_MAX_DIMS];
  cl_long red_dims[OCL_MAX_DIMS];
  cl_long red_strides[OCL_MAX_DIMS];
  cl_long n_out;
  cl_long n_red;
  cl_long count;
};

static void red_args_init(struct red_args *s, const struct ocl_reduction *r)
{
  int64_t strides[OCL_MAX_DIMS];
  int64_t stride = 1;
  memset(s, 0, sizeof(*s));
  for (int i = r->rank - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= r->dims[i];
  }
  s->count = 1;
  for (int i = 0; i < r->rank; i++) {
    if (r->reduced[i]) {
      s->red_dims[s->n_red] = r->dims[i];
      s->red_strides[s->n_red++] = strides[i];
      s->count *= r->dims[i];
    } else {
      s->out_dims[s->n_out] = r->dims[i];
      s->out_strides[s->n_out++] = strides[i];
    }
  }
}

/* Rows at least this long get a work-group each. */
#define GROUP_MIN_REDUCE 128
/* The work-group size the _group kernels ask for (fixed per device: PoCL
 * compiles a kernel again for each new local size). */
#define GROUP_SIZE 128

/* The _rows_vec/_cols_vec kernels fold 16-wide vectors: rows (or column
 * runs) of at least this many elements. */
#define VECTOR_MIN 16

/* A long reduction into fewer work-items than the device has cores times
 * SPLIT_ITEMS_PER_CORE is split along the reduced extent: each part at
 * least SPLIT_MIN_ELEMENTS elements, so the second pass stays small. */
#define SPLIT_ITEMS_PER_CORE 4
#define SPLIT_MIN_ELEMENTS 4096

/* How many parts the vector kernels split r's reduced extent into; 1 for
 * no split. */
static int64_t split_parts(const struct ocl_reduction *r,
                           const struct ocl_device_info *info)
{
  int64_t runs = (r->inner + VECTOR_MIN - 1) / VECTOR_MIN;
  int64_t items = r->outer * runs;
  int64_t target = SPLIT_ITEMS_PER_CORE * (int64_t)info->compute_units;
  if ((r->inner != 1 && r->inner < VECTOR_MIN) || items >= target)
    return 1;
  /* A part of a row is elements; of a column run, rows of 16 elements. */
  int64_t per_row = r->inner == 1 ? 1 : VECTOR_MIN;
  int64_t parts = (target + items - 1) / items;
  int64_t most = r->reduce * per_row / SPLIT_MIN_ELEMENTS;
  return parts < most ? parts : most < 1 ? 1 : most;
}

/* The two passes of a split reduction: NAME_parts_vec into a temp of
 * [outer, parts, inner] accumulators, NAME_fold_parts into y. */
static bool run_split(struct ocl_op *op, struct reduce_kernel *k,
                      const struct ocl_reduction *r, int64_t divisor,
                      int64_t parts, const TF_Tensor *x, TF_Tensor *y)
{
  TF_DataType acc_type = k->storage == OCL_STORAGE_LONG ? TF_INT64 : TF_FLOAT;
  TF_Tensor *part = ocl_op_temp(op, acc_type, r->outer * parts * r->inner);
  if (part == NULL)
    return false;
  int64_t runs = (r->inner + VECTOR_MIN - 1) / VECTOR_MIN;
  int64_t items = r->outer * parts * runs;
  const struct ocl_arg pass1[] = {
      OCL_TENSOR(x),       OCL_TENSOR(part),   OCL_LONG(r->reduce),
      OCL_LONG(r->inner),  OCL_LONG(parts),    OCL_LONG(items),
  };
  if (!ocl_launch_rows(op, &k->k[PARTS_VEC], (size_t)items, pass1, 6))
    return false;
  const struct ocl_arg pass2[] = {
      OCL_TENSOR(part),   OCL_TENSOR(y),      OCL_LONG(divisor),
      OCL_LONG(parts),    OCL_LONG(r->inner), OCL_LONG(r->out_elements),
  };
  return ocl_launch_1d(op, &k->k[FOLD_PARTS], (size_t)r->out_elements, pass2,
                       6);
}

static bool use_group(const struct ocl_reduction *r)
{
  return r->valid_3d && r->reduce >= GROUP_MIN_REDUCE &&
         (r->inner == 1 || r->outer * r->inner < 4096);
}

/* ---- int32 on the host ---------------------------------------------------- */

static int64_t red_offset(const struct red_args *s, int64_t i, bool out)
{
  const cl_long *dims = out ? s->out_dims : s->red_dims;
  const cl_long *strides = out ? s->out_strides : s->red_strides;
  int64_t offset = 0;
  for (int64_t d = (out ? s->n_out : s->n_red) - 1; d >= 0; d--) {
    offset += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return offset;
}

static void host_reduce_int32(enum reduce_kind kind, const struct red_args *s,
                              int64_t n_out, int64_t divisor, const int32_t *x,
                              int32_t *y)
{
  for (int64_t o = 0; o < n_out; o++) {
    int64_t base = red_offset(s, o, true);
    /* Wrap-around as TensorFlow's int32 kernels: unsigned arithmetic. */
    uint32_t acc = kind == PROD ? 1u : 0u;
    int32_t best = kind == MAX ? INT32_MIN : INT32_MAX;
    for (int64_t r = 0; r < s->count; r++) {
      int32_t v = x[base + red_offset(s, r, false)];
      switch (kind) {
      case PROD: acc *= (uint32_t)v; break;
      case MAX: best = v > best ? v : best; break;
      case MIN: best = v < best ? v : best; break;
      default: acc += (uint32_t)v; break;
      }
    }
    if (kind == MAX || kind == MIN)
      y[o] = best;
    else if (kind == MEAN)
      y[o] = divisor == 0 ? 0 : (int32_t)acc / (int32_t)divisor;
    else
      y[o] = (int32_t)acc;
  }
}

static void host_arg_int32(bool is_max, const struct ocl_reduction *r,
                           const int32_t *x, void *y, bool out64)
{
  int64_t n = r->outer * r->inner;
  for (int64_t o = 0; o < n; o++) {
    int64_t base = (o / r->inner) * r->reduce * r->inner + o % r->inner;
    int32_t best = is_max ? INT32_MIN : INT32_MAX;
    int64_t index = 0;
    for (int64_t i = 0; i < r->reduce; i++) {
      int32_t v = x[base + i * r->inner];
      if (is_max ? v > best : v < best) {
        best = v;
        index = i;
      }
    }
    if (out64)
      ((int64_t *)y)[o] = index;
    else
      ((int32_t *)y)[o] = (int32_t)index;
  }
}

/* ---- Launching ------------------------------------------------------------ */

/* y = reduction of x as `r` describes; divisor 1 except for Mean (the
 * reduced count) and L2Loss (2). */
static bool run_reduce(struct ocl_op *op, struct reduce_kernel *k,
                       const struct ocl_reduction *r, int64_t divisor,
                       const TF_Tensor *x, TF_Tensor *y)
{
  struct red_args s;
  red_args_init(&s, r);
  if (r->out_elements == 0)
    return true;
  if (k->op->kind == MEAN)
    divisor = s.count;
  if (k->storage == OCL_STORAGE_HOST_INT32) {
    host_reduce_int32(k->op->kind, &s, r->out_elements, divisor,
                      ocl_host_data(x), ocl_host_data(y));
    return true;
  }
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  /* An empty input has no device buffer: the kernel reads nothing then, so
   * any buffer stands in for it. */
  const TF_Tensor *in = r->in_elements == 0 ? y : x;
  if (k->storage != OCL_STORAGE_BOOL && r->valid_3d && info->cpu_shape) {
    int64_t runs = (r->inner + VECTOR_MIN - 1) / VECTOR_MIN;
    int64_t parts = split_parts(r, info);
    if (parts > 1)
      return run_split(op, k, r, divisor, parts, in, y);
    if (r->inner == 1 && r->reduce >= VECTOR_MIN) {
      const struct ocl_arg argv[] = {
          OCL_TENSOR(in),      OCL_TENSOR(y),      OCL_LONG(divisor),
          OCL_LONG(r->reduce), OCL_LONG(r->outer),
      };
      return ocl_launch_rows(op, &k->k[ROWS_VEC], (size_t)r->outer, argv, 5);
    }
    if (r->inner >= VECTOR_MIN && r->reduce >= 1) {
      int64_t chunks = r->outer * runs;
      const struct ocl_arg argv[] = {
          OCL_TENSOR(in),      OCL_TENSOR(y),      OCL_LONG(divisor),
          OCL_LONG(r->reduce), OCL_LONG(r->inner), OCL_LONG(chunks),
      };
      return ocl_launch_rows(op, &k->k[COLS_VEC], (size_t)chunks, argv, 6);
    }
  }
  if (use_group(r)) {
    size_t local = ocl_kernel_fit_local(op, &k->k[GROUP], GROUP_SIZE);
    if (local == 0)
      return false;
    size_t global = (size_t)r->out_elements * local;
    size_t acc_size = k->storage == OCL_STORAGE_LONG   ? 8
                      : k->storage == OCL_STORAGE_BOOL ? 1
                                                       : 4;
    const struct ocl_arg argv[] = {
        OCL_TENSOR(in),        OCL_TENSOR(y),      OCL_LONG(divisor),
        OCL_LONG(r->reduce),   OCL_LONG(r->inner), OCL_LOCAL(acc_size * local),
    };
    return ocl_launch(op, &k->k[GROUP], 1, &global, &local, argv, 6);
  }
  const struct ocl_arg argv[] = {
      OCL_TENSOR(in),       OCL_TENSOR(y), OCL_LONG(r->out_elements),
      OCL_LONG(divisor),    OCL_BYTES(&s, sizeof(s)),
  };
  return ocl_launch_1d(op, &k->k[GENERAL], (size_t)r->out_elements, argv, 5);
}

static bool run_arg(struct ocl_op *op, struct reduce_kernel *k,
                    const struct ocl_reduction *r, const TF_Tensor *x,
                    TF_Tensor *y)
{
  bool out64 = k->index_type == TF_INT64;
  if (r->out_elements == 0)
    return true;
  if (k->storage == OCL_STORAGE_HOST_INT32) {
    host_arg_int32(k->op->kind == ARG_MAX, r, ocl_host_data(x),
                   ocl_host_data(y), out64);
    return true;
  }
  if (use_group(r)) {
    size_t local = ocl_kernel_fit_local(op, &k->k[GROUP], GROUP_SIZE);
    if (local == 0)
      return false;
    size_t global = (size_t)r->out_elements * local;
    size_t value_size = k->storage == OCL_STORAGE_LONG ? 8 : 4;
    const struct ocl_arg argv[] = {
        OCL_TENSOR(x),       OCL_TENSOR(y),
        OCL_LONG(r->reduce), OCL_LONG(r->inner),
        OCL_INT(out64),      OCL_LOCAL(value_size * local),
        OCL_LOCAL(8 * local),
    };
    return ocl_launch(op, &k->k[GROUP], 1, &global, &local, argv, 7);
  }
  const struct ocl_arg argv[] = {
      OCL_TENSOR(x),       OCL_TENSOR(y),      OCL_LONG(r->out_elements),
      OCL_LONG(r->reduce), OCL_LONG(r->inner), OCL_INT(out64),
  };
  return ocl_launch_1d(op, &k->k[GENERAL], (size_t)r->out_elements, argv, 6);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

static void *reduce_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct reduce_op *op = &reduce_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct reduce_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  k->dtype = TF_BOOL;
  if (op->kind != ALL && op->kind != ANY) {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  k->storage = ocl_storage_of(k->dtype);
  if (op->kind <= ANY) {
    TF_Bool keep = 0;
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "keep_dims", &keep, status);
    ocl_set_ok(status); /* absent: TensorFlow's default, false */
    k->keep_dims = keep != 0;
  }
  if (op->kind == ARG_MAX || op->kind == ARG_MIN) {
    k->index_type = TF_INT64;
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "output_type",
                                            &k->index_type, status);
    ocl_set_ok(status);
    if (k->index_type != TF_INT32 && k->index_type != TF_INT64) {
      ocl_set_status(status, TF_UNIMPLEMENTED,
                     "%s: output_type must be int32 or int64 on OPENCL",
                     op->op);
      goto fail;
    }
  }
  if (k->storage != OCL_STORAGE_HOST_INT32)
    for (int v = 0; v < NUM_VARIANTS; v++)
      if (!ocl_kernel_initf(&k->k[v], &programs[k->storage], "%s_%s",
                            op->kernel, variant_suffix[v])) {
        ocl_set_status(status, TF_INTERNAL, "%s: kernel name too long",
                       op->op);
        goto fail;
      }
  if (op->kind == BIAS_ADD_GRAD) {
    char format[8] = "NHWC";
    if (ocl_tf.OpKernelConstruction_GetAttrString != NULL)
      ocl_tf.OpKernelConstruction_GetAttrString(ctx, "data_format", format,
                                                sizeof(format) - 1, status);
    ocl_set_ok(status); /* absent: the default, NHWC */
    k->channels_first = strncmp(format, "NCHW", 4) == 0 ||
                        strncmp(format, "NCDHW", 5) == 0;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

/* The axes of a host-memory int32 or int64 tensor, at most OCL_MAX_DIMS * 4
 * of them (TensorFlow allows repeats). */
static int read_axes(const TF_Tensor *t, int64_t *axes, int max_axes,
                     TF_Status *status)
{
  int64_t n = ocl_tf.TensorElementCount(t);
  if (n > max_axes) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Too many reduction indices: %lld", (long long)n);
    return -1;
  }
  TF_DataType type = ocl_tf.TensorType(t);
  if (type != TF_INT32 && type != TF_INT64) {
    /* The op's Tidx is {int32, int64}; never read another type's bytes. */
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "reduction indices must be int32 or int64, not type %d",
                   (int)type);
    return -1;
  }
  const void *data = ocl_host_data(t);
  bool wide = type == TF_INT64;
  for (int64_t i = 0; i < n; i++)
    axes[i] = wide ? ((const int64_t *)data)[i] : ((const int32_t *)data)[i];
  return (int)n;
}

static void reduce_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct reduce_kernel *k = kernel;
  enum reduce_kind kind = k->op->kind;
  struct ocl_op op;
  int64_t dims[OCL_MAX_DIMS], axes[OCL_MAX_DIMS * 4];
  char shape[160];
  struct ocl_reduction r;
  int num_axes = 0;
  bool keep_dims = k->keep_dims;
  int64_t divisor = 1;

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *axes_t = x != NULL && k->op->axes_arg != NULL
                          ? ocl_op_input(&op, 1)
                          : NULL;
  if (x == NULL || (k->op->axes_arg != NULL && axes_t == NULL))
    goto out;
  int rank = ocl_op_dims(&op, x, dims);
  if (rank < 0)
    goto out;
  ocl_shape_format(dims, rank, shape, sizeof(shape));

  switch (kind) {
  case ARG_MAX:
  case ARG_MIN: {
    if (ocl_tf.NumDims(axes_t) != 0) {
      int64_t adims[OCL_MAX_DIMS];
      char ashape[160];
      int arank = ocl_op_dims(&op, axes_t, adims);
      if (arank < 0)
        goto out;
      ocl_shape_format(adims, arank, ashape, sizeof(ashape));
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "dim must be a scalar, but received tensor of shape: %s",
                  ashape);
      goto out;
    }
    num_axes = read_axes(axes_t, axes, 1, op.status);
    if (num_axes < 0)
      goto out;
    int64_t axis = axes[0] < 0 ? axes[0] + rank : axes[0];
    if (axis < 0 || axis >= rank) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Expected dimension in the range [%d, %d), but got %lld",
                  -rank, rank, (long long)axes[0]);
      goto out;
    }
    if (dims[axis] == 0) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Reduction axis %lld is empty in shape %s",
                  (long long)axes[0], shape);
      goto out;
    }
    break;
  }
  case BIAS_ADD_GRAD: {
    if (rank < 2) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Input tensor must be at least 2D: %s", shape);
      goto out;
    }
    int channel = k->channels_first ? 1 : rank - 1;
    for (int i = 0; i < rank; i++)
      if (i != channel)
        axes[num_axes++] = i;
    break;
  }
  case L2_LOSS:
    for (int i = 0; i < rank; i++)
      axes[num_axes++] = i;
    keep_dims = false;
    divisor = 2;
    break;
  default:
    num_axes = read_axes(axes_t, axes, OCL_MAX_DIMS * 4, op.status);
    if (num_axes < 0)
      goto out;
    break;
  }

  if (!ocl_reduction_init(&r, dims, rank, axes, num_axes, keep_dims,
                          op.status))
    goto out;
  bool is_arg = kind == ARG_MAX || kind == ARG_MIN;
  TF_Tensor *y = ocl_op_output(&op, 0, is_arg ? k->index_type : k->dtype,
                               r.out_dims, r.out_rank);
  if (y == NULL)
    goto out;
  if (is_arg)
    run_arg(&op, k, &r, x, y);
  else
    run_reduce(&op, k, &r, divisor, x, y);
out:
  ocl_op_end(&op);
}

static void reduce_delete(void *kernel) { free(kernel); }

#define NUM_REDUCE_OPS ((int)(sizeof(reduce_ops) / sizeof(reduce_ops[0])))
_Static_assert(NUM_REDUCE_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per reduce op");
OCL_FAMILY_CREATES(reduce, reduce_create);

/* ---- Registration ------------------------------------------------------ */

static const TF_DataType register_types[] = {TF_FLOAT, TF_HALF, TF_INT64,
                                             TF_INT32, TF_BOOL};

void ocl_register_reduce_kernels(void)
{
  for (int i = 0; i < NUM_REDUCE_OPS; i++) {
    const struct reduce_op *op = &reduce_ops[i];
    bool typed = op->kind != ALL && op->kind != ANY;
    for (size_t t = 0; t < sizeof(register_types) / sizeof(register_types[0]);
         t++) {
      TF_DataType dtype = register_types[t];
      if (!(op->types & TB(dtype)))
        continue;
      /* The axes, then for int32 (computed on the host) the data. */
      const char *host_args[4] = {NULL};
      int h = 0;
      if (op->axes_arg != NULL)
        host_args[h++] = op->axes_arg;
      if (dtype == TF_INT32) {
        host_args[h++] = "input";
        host_args[h++] = "output";
      }
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = reduce_creates[i],
          .compute = reduce_compute,
          .destroy = reduce_delete,
          .type_attrs = {typed ? "T" : NULL},
          .types = {dtype},
          .host_args = host_args,
      });
    }
  }
}
