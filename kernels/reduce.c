/* Reductions: Sum, Mean, Prod, Max, Min, All, Any, ArgMax, ArgMin,
 * BiasAddGrad and L2Loss.
 *
 * float, half, int64, bool and double (where cl_khr_fp64 is) run on the
 * device (reduce.cl, one program per storage type, and one more per
 * storage type with 64-bit indices for
 * tensors of 2^31 elements or more). int32 follows TensorFlow's GPU
 * convention (see binary.c): its tensors live in host memory and the op
 * runs on the host. The axes (reduction_indices, dimension) are always host
 * memory, as in TensorFlow.
 *
 * Any rank TensorFlow takes (up to 254): ocl_reduction_init (shape.h)
 * collapses the input into alternating kept and reduced groups. One reduced
 * group is [outer, reduce, inner], which the kernels of reduce.cl take
 * directly; several are reduced one group per pass (the longest first) into
 * temps of partials, the last pass writing the output. A long reduction
 * into few outputs is cut into parts so that every core (CPU) or compute
 * unit (GPU) works, and the partials [outer, parts, inner] are folded by
 * the same kernels. Partials are ACC (float for half); every pass after the
 * first reads them, so it runs the op's fold (L2Loss: Sum of its squares;
 * Mean: Sum, divided once at the end) on the ACC program.
 *
 * Kernel shapes (reduce.cl): on CPU devices a work-item per row or per 16
 * columns on 16-wide vectors (a scalar work-item per output for short
 * rows and narrow columns); on GPUs a work-group per tile of
 * adjacent outputs, folding in local memory (a work-item per output for
 * short reductions). Float sums are compensated (Kahan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_reduce[];

/* [wide]: 32-bit index arithmetic, or 64-bit (-DIDX_64). */
OCL_PROGRAM_TABLE
static const struct ocl_program programs[2][OCL_NUM_STORAGES] = {
    OCL_TYPED_PROGRAMS("reduce", ocl_cl_source_reduce),
    {
        [OCL_STORAGE_FLOAT] = {"reduce_float_idx64", ocl_cl_source_reduce,
                               "-DT=float -DT_IS_FLOAT -DIDX_64"},
        [OCL_STORAGE_HALF] = {"reduce_half_idx64", ocl_cl_source_reduce,
                              "-DT=half -DT_IS_HALF -DIDX_64"},
        [OCL_STORAGE_LONG] = {"reduce_long_idx64", ocl_cl_source_reduce,
                              "-DT=long -DT_IS_LONG -DIDX_64"},
        [OCL_STORAGE_BOOL] = {"reduce_bool_idx64", ocl_cl_source_reduce,
                              "-DT=uchar -DT_IS_BOOL -DIDX_64"},
        [OCL_STORAGE_DOUBLE] = {"reduce_double_idx64", ocl_cl_source_reduce,
                                "-DT=double -DT_IS_DOUBLE -DIDX_64"},
    },
};

enum reduce_kind {
  SUM, MEAN, PROD, MAX, MIN, ALL, ANY, ARG_MAX, ARG_MIN, BIAS_ADD_GRAD, L2_LOSS
};

#define TB(t) (1u << (t))
#define FLOATS (TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_DOUBLE))
#define NUMBERS (FLOATS | TB(TF_INT64) | TB(TF_INT32))

struct reduce_op {
  const char *op;
  const char *kernel; /* prefix in reduce.cl */
  const char *fold;   /* the prefix that folds its partials */
  enum reduce_kind kind;
  unsigned types;
  const char *axes_arg; /* host-memory axes input, or NULL */
};

static const struct reduce_op reduce_ops[] = {
    {"Sum", "sum", "sum", SUM, NUMBERS, "reduction_indices"},
    {"Mean", "sum", "sum", MEAN, NUMBERS, "reduction_indices"},
    {"Prod", "prod", "prod", PROD, NUMBERS, "reduction_indices"},
    {"Max", "max", "max", MAX, NUMBERS, "reduction_indices"},
    {"Min", "min", "min", MIN, NUMBERS, "reduction_indices"},
    {"All", "all", "all", ALL, TB(TF_BOOL), "reduction_indices"},
    {"Any", "any", "any", ANY, TB(TF_BOOL), "reduction_indices"},
    {"ArgMax", "argmax", "argmax", ARG_MAX, NUMBERS, "dimension"},
    {"ArgMin", "argmin", "argmin", ARG_MIN, NUMBERS, "dimension"},
    {"BiasAddGrad", "sum", "sum", BIAS_ADD_GRAD, FLOATS | TB(TF_INT64), NULL},
    {"L2Loss", "sumsq", "sum", L2_LOSS, FLOATS, NULL},
};

/* The kernels of one op in one program (reduce.cl's suffixes); FOLD_PARTS
 * is ArgMax/ArgMin's only. */
enum variant { ROWS_VEC, COLS_VEC, ITEMS, TILE, FOLD_PARTS, NUM_VARIANTS };
static const char *const variant_suffix[NUM_VARIANTS] = {
    "rows_vec", "cols_vec", "items", "tile", "fold_parts"};

struct kernel_set {
  enum ocl_storage storage; /* of the program */
  struct ocl_kernel k[NUM_VARIANTS];
};

struct reduce_kernel {
  const struct reduce_op *op;
  TF_DataType dtype;
  enum ocl_storage storage;
  bool keep_dims;
  bool channels_first; /* BiasAddGrad data_format NCHW */
  TF_DataType index_type; /* ArgMax/ArgMin output_type */
  /* [wide]: the op on its storage (first pass, reading the input), and
   * its fold on the partials' storage (every later pass). Not for int32
   * (host). */
  struct kernel_set first[2], fold[2];
};

/* Partials: the accumulator type, float for half. */
static enum ocl_storage acc_storage(enum ocl_storage storage)
{
  return storage == OCL_STORAGE_HALF ? OCL_STORAGE_FLOAT : storage;
}

static TF_DataType storage_dtype(enum ocl_storage storage)
{
  switch (storage) {
  case OCL_STORAGE_HALF: return TF_HALF;
  case OCL_STORAGE_LONG: return TF_INT64;
  case OCL_STORAGE_BOOL: return TF_BOOL;
  case OCL_STORAGE_DOUBLE: return TF_DOUBLE;
  default: return TF_FLOAT;
  }
}

static size_t storage_size(enum ocl_storage storage)
{
  return storage == OCL_STORAGE_LONG || storage == OCL_STORAGE_DOUBLE ? 8
         : storage == OCL_STORAGE_BOOL                                ? 1
                                                                      : 4;
}

static bool kernel_set_init(struct kernel_set *set, enum ocl_storage storage,
                            bool wide, const char *prefix)
{
  set->storage = storage;
  for (int v = 0; v < NUM_VARIANTS; v++)
    if (!ocl_kernel_initf(&set->k[v], &programs[wide][storage], "%s_%s",
                          prefix, variant_suffix[v]))
      return false;
  return true;
}

/* ---- Planning a pass -------------------------------------------------------- */

/* Index arithmetic is 32-bit while every index fits in an int, with room
 * for global sizes rounded up to a work-group and a few rows read ahead. */
#define IDX32_LIMIT ((int64_t)INT32_MAX - 65536)

/* TFOCL_INDEX_WIDTH=64 (read once, at registration) takes the 64-bit
 * programs for every size: how the tests reach them without 8 GiB
 * tensors. */
static bool force_wide;

static struct ocl_arg idx_arg(bool wide, int64_t v)
{
  return wide ? OCL_LONG(v) : OCL_INT((int32_t)v);
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The vector kernels fold 16-wide vectors: rows of at least 16 elements,
 * column runs of 16 columns. */
#define VECTOR_MIN 16
/* Columns a CPU work-item of the reductions' _cols_vec takes (reduce.cl;
 * the arg reductions' take VECTOR_MIN). */
#define COLS_RUN 64
/* _tile's work-group size asked for (fixed per device: PoCL compiles a
 * kernel again for each new local size) and the most adjacent columns it
 * takes (the rest of the work-group splits the rows into lanes); GPUs
 * reduce shorter extents than TILE_LONG_ROWS a work-item per output. */
#define TILE_LOCAL 256
#define TILE_LONG_WIDTH 32
#define TILE_LONG_ROWS 64

/* Splitting a long reduction into few outputs: CPU devices aim at
 * SPLIT_ITEMS_PER_CORE work-items per core, parts of at least
 * SPLIT_MIN_ELEMENTS elements; GPUs at SPLIT_GROUPS_PER_CU work-groups per
 * compute unit, SPLIT_MIN_LOADS rows per lane. */
#define SPLIT_ITEMS_PER_CORE 4
#define SPLIT_MIN_ELEMENTS 4096
#define SPLIT_GROUPS_PER_CU 8
#define SPLIT_MIN_LOADS 16
/* The highest rank TensorFlow's ArgMax/ArgMin take. */
#define ARG_MAX_RANK 7
/* ArgMax/ArgMin fold their parts in one work-item per output. */
#define ARG_MAX_PARTS 64

/* One pass over [outer, reduce, inner]: the kernel and its work. */
struct plan {
  enum variant v;
  bool wide;
  int64_t parts, chunk;
  int64_t n;       /* work-items; work-groups for TILE */
  size_t local;    /* TILE's work-group size */
  int64_t width;   /* TILE's columns per work-group */
  bool per_group;  /* CPU: one work-item per work-group */
};

static int64_t pow2_at_least(int64_t v)
{
  int64_t p = 1;
  while (p < v)
    p *= 2;
  return p;
}

/* Plans the pass, whose _cols_vec kernel takes cols_run columns a
 * work-item; false with the status set. */
static bool plan_pass(struct ocl_op *op, struct kernel_set *sets, int64_t outer,
                      int64_t reduce, int64_t inner, int64_t max_parts,
                      int64_t cols_run, struct plan *pl)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  int64_t reads = outer * (reduce > 0 ? reduce : 1) * inner;
  pl->wide = force_wide || reads > IDX32_LIMIT;
  struct kernel_set *set = &sets[pl->wide];
  int64_t items, min_rows, target;
  pl->local = 1;
  pl->width = 1;
  if (info->cpu_shape) {
    target = SPLIT_ITEMS_PER_CORE * (int64_t)info->compute_units;
    if (inner == 1 && reduce >= VECTOR_MIN) {
      pl->v = ROWS_VEC;
      items = outer;
      min_rows = SPLIT_MIN_ELEMENTS;
    } else if (inner >= VECTOR_MIN) {
      pl->v = COLS_VEC;
      items = outer * ceil_div(inner, cols_run);
      min_rows = SPLIT_MIN_ELEMENTS / cols_run;
    } else {
      pl->v = ITEMS;
      items = outer * inner;
      min_rows = SPLIT_MIN_ELEMENTS;
    }
  } else if (reduce < TILE_LONG_ROWS) {
    /* Short reductions: a work-item per output; neighbouring work-items
     * read neighbouring columns, or short neighbouring rows. */
    pl->v = ITEMS;
    items = outer * inner;
    min_rows = 1;
    target = 0; /* never split */
  } else {
    pl->v = TILE;
    pl->local = ocl_kernel_fit_local(op, &set->k[TILE], TILE_LOCAL);
    if (pl->local == 0)
      return false;
    int64_t width = pow2_at_least(inner);
    if (width > TILE_LONG_WIDTH)
      width = TILE_LONG_WIDTH;
    if (width > (int64_t)pl->local)
      width = (int64_t)pl->local;
    pl->width = width;
    items = outer * ceil_div(inner, width);
    min_rows = ((int64_t)pl->local / width) * SPLIT_MIN_LOADS;
    target = SPLIT_GROUPS_PER_CU * (int64_t)info->compute_units;
  }
  int64_t parts = 1;
  if (items < target && reduce >= 2 * min_rows) {
    parts = ceil_div(target, items);
    if (parts > reduce / min_rows)
      parts = reduce / min_rows;
    if (parts > max_parts)
      parts = max_parts;
  }
  pl->chunk = reduce > 0 ? ceil_div(reduce, parts) : 1;
  if (pl->v == ROWS_VEC && parts > 1)
    pl->chunk = ceil_div(pl->chunk, 64) * 64; /* whole vector blocks */
  pl->parts = reduce > 0 ? ceil_div(reduce, pl->chunk) : 1;
  pl->n = items * pl->parts;
  /* A CPU work-item with a long loop is a work-group of its own, so that
   * even a few of them spread over the cores. */
  pl->per_group = info->cpu_shape && (pl->v != ITEMS || pl->chunk >= 64);
  return true;
}

/* Enqueues the planned kernel of `sets` with args[0, num_args); TILE's
 * extras (its width, then one local array per element size in
 * local_sizes) go after them. */
static bool launch_plan(struct ocl_op *op, struct kernel_set *sets,
                        const struct plan *pl, struct ocl_arg *args,
                        int num_args, const size_t *local_sizes,
                        int num_local)
{
  struct ocl_kernel *kernel = &sets[pl->wide].k[pl->v];
  if (pl->v == TILE) {
    args[num_args++] = idx_arg(pl->wide, pl->width);
    for (int a = 0; a < num_local; a++)
      args[num_args++] = OCL_LOCAL(local_sizes[a] * pl->local);
    size_t global = (size_t)pl->n * pl->local;
    return ocl_launch(op, kernel, 1, &global, &pl->local, args, num_args);
  }
  if (pl->per_group)
    return ocl_launch_rows(op, kernel, (size_t)pl->n, args, num_args);
  return ocl_launch_1d(op, kernel, (size_t)pl->n, args, num_args);
}

/* reduce.cl's store kinds. */
enum store { STORE_OUT, STORE_ACC, STORE_HALF };

/* Reduces [outer, reduce, inner] of src into dst: from the input with the
 * op's kernels (from_input), else from partials with its fold. `last`:
 * dst is the output (finished with FIN and divisor), else partials. Parts
 * of a split go through temps, folded by further passes. */
static bool reduce_3d(struct ocl_op *op, struct reduce_kernel *k,
                      bool from_input, int64_t outer, int64_t reduce,
                      int64_t inner, const TF_Tensor *src, TF_Tensor *dst,
                      int64_t divisor, bool last)
{
  TF_DataType acc_dtype = storage_dtype(acc_storage(k->storage));
  TF_Tensor *owned = NULL; /* src, when it is a temp of this function */
  for (;;) {
    struct kernel_set *sets = from_input ? k->first : k->fold;
    struct plan pl;
    if (!plan_pass(op, sets, outer, reduce, inner, INT64_MAX, COLS_RUN, &pl))
      return false;
    TF_Tensor *to = dst;
    enum store store = !last ? STORE_ACC
                       : sets[0].storage == k->storage ? STORE_OUT
                                                       : STORE_HALF;
    if (pl.parts > 1) {
      to = ocl_op_temp(op, acc_dtype, outer * pl.parts * inner);
      if (to == NULL)
        return false;
      store = STORE_ACC;
    }
    struct ocl_arg args[12] = {
        OCL_TENSOR(src),
        OCL_TENSOR(to),
        OCL_LONG(divisor),
        idx_arg(pl.wide, reduce),
        idx_arg(pl.wide, inner),
        idx_arg(pl.wide, pl.chunk),
        idx_arg(pl.wide, pl.parts),
        idx_arg(pl.wide, pl.n),
        OCL_INT(store),
    };
    size_t scratch = storage_size(sets[0].storage);
    if (!launch_plan(op, sets, &pl, args, 9, &scratch, 1))
      return false;
    if (owned != NULL)
      ocl_op_release(op, owned); /* enqueued: see ocl_op_temp */
    if (to == dst)
      return true;
    owned = to;
    src = to;
    reduce = pl.parts;
    from_input = false;
  }
}

/* ---- int32 on the host ---------------------------------------------------- */

static void host_reduce_int32(enum reduce_kind kind,
                              const struct ocl_reduction *r, int64_t divisor,
                              const int32_t *x, int32_t *y)
{
  int64_t out_strides[OCL_MAX_RANK], index[OCL_MAX_RANK] = {0};
  int64_t stride = 1;
  for (int d = r->rank - 1; d >= 0; d--) {
    out_strides[d] = r->reduced[d] ? 0 : stride;
    if (!r->reduced[d])
      stride *= r->dims[d];
  }
  int32_t init = kind == PROD  ? 1
                 : kind == MAX ? INT32_MIN
                 : kind == MIN ? INT32_MAX
                               : 0;
  for (int64_t o = 0; o < r->out_elements; o++)
    y[o] = init;
  int64_t o = 0;
  for (int64_t i = 0; i < r->in_elements; i++) {
    int32_t v = x[i];
    /* Wrap-around as TensorFlow's int32 kernels: unsigned arithmetic. */
    switch (kind) {
    case PROD: y[o] = (int32_t)((uint32_t)y[o] * (uint32_t)v); break;
    case MAX: y[o] = v > y[o] ? v : y[o]; break;
    case MIN: y[o] = v < y[o] ? v : y[o]; break;
    default: y[o] = (int32_t)((uint32_t)y[o] + (uint32_t)v); break;
    }
    /* The next input element: an odometer over the collapsed dims. */
    for (int d = r->rank - 1; d >= 0; d--) {
      o += out_strides[d];
      if (++index[d] < r->dims[d])
        break;
      o -= out_strides[d] * r->dims[d];
      index[d] = 0;
    }
  }
  if (kind == MEAN)
    for (int64_t i = 0; i < r->out_elements; i++)
      y[i] = divisor == 0 ? 0 : (int32_t)(y[i] / divisor);
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

/* The longest reduced group of dims[0, rank), or -1. */
static int longest_group(const int64_t *dims, const bool *reduced, int rank)
{
  int longest = -1;
  for (int d = 0; d < rank; d++)
    if (reduced[d] && (longest < 0 || dims[d] > dims[longest]))
      longest = d;
  return longest;
}

/* y = reduction of x as `r` describes; divisor 1 except for L2Loss (2);
 * Mean divides by the reduced count. */
static bool run_reduce(struct ocl_op *op, struct reduce_kernel *k,
                       const struct ocl_reduction *r, int64_t divisor,
                       const TF_Tensor *x, TF_Tensor *y)
{
  if (r->out_elements == 0)
    return true;
  if (k->op->kind == MEAN)
    divisor = r->in_elements / r->out_elements;
  if (k->storage == OCL_STORAGE_HOST_INT32) {
    host_reduce_int32(k->op->kind, r, divisor, ocl_host_data(x),
                      ocl_host_data(y));
    return true;
  }
  int groups = 0;
  for (int d = 0; d < r->rank; d++)
    groups += r->reduced[d];
  /* Nothing reduced (size-1 axes at most): every op but L2Loss is then the
   * identity, to the bit. */
  if (groups == 0 && k->op->kind != L2_LOSS)
    return ocl_op_copy(op, x, 0, y, 0, ocl_tf.TensorByteSize(y));
  /* An empty input has no device buffer, and nothing to read: every output
   * is the identity (finished), whatever the layout. */
  if (r->in_elements == 0)
    return reduce_3d(op, k, true, 1, 0, r->out_elements, y, y, divisor,
                     true);
  if (groups <= 1)
    return reduce_3d(op, k, true, r->outer, r->reduce, r->inner, x, y,
                     divisor, true);

  /* Several reduced groups: the longest first, each pass into a temp of
   * partials; then the kept neighbours of the removed group merge. */
  int64_t dims[OCL_MAX_RANK];
  bool reduced[OCL_MAX_RANK];
  int rank = r->rank;
  memcpy(dims, r->dims, sizeof(int64_t) * (size_t)rank);
  memcpy(reduced, r->reduced, sizeof(bool) * (size_t)rank);
  const TF_Tensor *src = x;
  TF_Tensor *owned = NULL;
  TF_DataType acc_dtype = storage_dtype(acc_storage(k->storage));
  for (; groups > 0; groups--) {
    int g = longest_group(dims, reduced, rank);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < g; d++)
      outer *= dims[d];
    for (int d = g + 1; d < rank; d++)
      inner *= dims[d];
    bool last = groups == 1;
    TF_Tensor *to = last ? y : ocl_op_temp(op, acc_dtype, outer * inner);
    if (to == NULL ||
        !reduce_3d(op, k, src == x, outer, dims[g], inner, src, to,
                   last ? divisor : 1, last))
      return false;
    if (owned != NULL)
      ocl_op_release(op, owned); /* enqueued: see ocl_op_temp */
    owned = to;
    src = to;
    /* Drop group g; when it had kept groups on both sides, they merge. */
    int drop = g > 0 && g < rank - 1 ? 2 : 1;
    if (drop == 2)
      dims[g - 1] *= dims[g + 1];
    int from = g + drop;
    memmove(&dims[g], &dims[from], sizeof(int64_t) * (size_t)(rank - from));
    memmove(&reduced[g], &reduced[from], sizeof(bool) * (size_t)(rank - from));
    rank -= drop;
  }
  return true;
}

/* reduce.cl's ARG_OUT32, ARG_OUT64, ARG_PARTIAL. */
enum arg_store { ARG_OUT32, ARG_OUT64, ARG_PARTIAL };

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
  struct plan pl;
  if (!plan_pass(op, k->first, r->outer, r->reduce, r->inner, ARG_MAX_PARTS,
                 VECTOR_MIN, &pl))
    return false;
  enum arg_store store = out64 ? ARG_OUT64 : ARG_OUT32;
  TF_Tensor *values = y, *indices = y; /* y stands in for unused values */
  enum ocl_storage value_storage = acc_storage(k->storage);
  if (pl.parts > 1) {
    int64_t n = r->outer * pl.parts * r->inner;
    values = ocl_op_temp(op, storage_dtype(value_storage), n);
    indices = values ? ocl_op_temp(op, pl.wide ? TF_INT64 : TF_INT32, n)
                     : NULL;
    if (indices == NULL)
      return false;
    store = ARG_PARTIAL;
  }
  struct ocl_arg args[12] = {
      OCL_TENSOR(x),
      OCL_TENSOR(values),
      OCL_TENSOR(indices),
      idx_arg(pl.wide, r->reduce),
      idx_arg(pl.wide, r->inner),
      idx_arg(pl.wide, pl.chunk),
      idx_arg(pl.wide, pl.parts),
      idx_arg(pl.wide, pl.n),
      OCL_INT(store),
  };
  const size_t scratch[2] = {storage_size(value_storage),
                             pl.wide ? sizeof(cl_long) : sizeof(cl_int)};
  if (!launch_plan(op, k->first, &pl, args, 9, scratch, 2))
    return false;
  if (pl.parts == 1)
    return true;
  const struct ocl_arg fold[] = {
      OCL_TENSOR(values),
      OCL_TENSOR(indices),
      OCL_TENSOR(y),
      idx_arg(pl.wide, pl.parts),
      idx_arg(pl.wide, r->inner),
      idx_arg(pl.wide, r->out_elements),
      OCL_INT(out64 ? ARG_OUT64 : ARG_OUT32),
  };
  return ocl_launch_1d(op, &k->first[pl.wide].k[FOLD_PARTS],
                       (size_t)r->out_elements, fold, 7);
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
    for (int wide = 0; wide < 2; wide++)
      if (!kernel_set_init(&k->first[wide], k->storage, wide, op->kernel) ||
          !kernel_set_init(&k->fold[wide], acc_storage(k->storage), wide,
                           op->fold)) {
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

/* t's dims into dims[OCL_MAX_RANK]: the reductions take every rank
 * TensorFlow does. -1 (INVALID_ARGUMENT) beyond it. */
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

/* The first max_axes axes (at most) of a host-memory integer tensor. */
static int read_axes(struct ocl_op *op, const TF_Tensor *t, int64_t *axes,
                     int max_axes)
{
  int64_t n = ocl_tf.TensorElementCount(t);
  if (!ocl_is_integer_type(ocl_tf.TensorType(t))) {
    /* The op's Tidx is an integer type; never read another type's bytes. */
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "reduction indices must be integers, not type %d",
                (int)ocl_tf.TensorType(t));
    return -1;
  }
  if (n > max_axes)
    n = max_axes;
  for (int64_t i = 0; i < n; i++)
    axes[i] = ocl_host_int(t, i);
  return (int)n;
}

static void reduce_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct reduce_kernel *k = kernel;
  enum reduce_kind kind = k->op->kind;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK], axes[OCL_MAX_RANK + 1];
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
  int rank = tensor_dims(&op, x, dims);
  if (rank < 0)
    goto out;

  switch (kind) {
  case ARG_MAX:
  case ARG_MIN: {
    if (ocl_tf.NumDims(axes_t) != 0) {
      int64_t adims[OCL_MAX_RANK];
      char ashape[160];
      int arank = tensor_dims(&op, axes_t, adims);
      if (arank < 0)
        goto out;
      ocl_shape_format(adims, arank, ashape, sizeof(ashape));
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "dim must be a scalar, but received tensor of shape: %s",
                  ashape);
      goto out;
    }
    num_axes = read_axes(&op, axes_t, axes, 1);
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
      ocl_shape_format(dims, rank, shape, sizeof(shape));
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Reduction axis %lld is empty in shape %s",
                  (long long)axes[0], shape);
      goto out;
    }
    break;
  }
  case BIAS_ADD_GRAD: {
    if (rank < 2) {
      ocl_shape_format(dims, rank, shape, sizeof(shape));
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
    /* Axes are checked in order, and more than rank of them hold a
     * repeat or one out of range: the first rank + 1 name the error. */
    num_axes = read_axes(&op, axes_t, axes, rank + 1);
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
  if (is_arg && r.out_elements > 0 && rank > ARG_MAX_RANK) {
    /* TensorFlow's ArgMax/ArgMin (CPU and GPU) stop at rank 7, after
     * allocating the output: an empty one succeeds. */
    ocl_shape_format(dims, rank, shape, sizeof(shape));
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "Argmax and Argmin only support up to %d input dimensions, "
                "but got %d. Inputs shape: %s",
                ARG_MAX_RANK, rank, shape);
    goto out;
  }
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
                                             TF_INT32, TF_BOOL, TF_DOUBLE};

void ocl_register_reduce_kernels(void)
{
  force_wide = ocl_config()->hooks.index64;
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
