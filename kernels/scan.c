/* Scans: Cumsum, Cumprod and CumulativeLogsumexp, with TensorFlow's
 * exclusive and reverse attributes and its checks (scan_ops.cc). The axis
 * is host memory, as in TensorFlow's GPU registrations.
 *
 * The types of TensorFlow's GPU kernels: float, half, bfloat16 and double
 * for all three; int64 and int32 for Cumsum and Cumprod. float64 needs
 * cl_khr_fp64 (without it no float64 kernel is registered, runtime.c).
 * int32 follows the plugin's convention for it (see unary.c): its tensors
 * live in host memory and the host scans. The others run on the device
 * (scan.cl, one program per storage type and index width), half and
 * bfloat16 accumulating in float.
 *
 * The input is seen as [outer, len, inner], scanned along len. Kernel
 * shapes (scan.cl): on CPU devices a work-item per row (inner == 1) or per
 * 16 adjacent columns, walking the axis serially; on GPUs a work-item per
 * column (inner > 1: neighbouring work-items on neighbouring addresses) or
 * a work-group per row, scanning chunks in local memory with a carry
 * between them (a work-item per row for short rows). */
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_scan[];

enum scan_type { ST_FLOAT, ST_HALF, ST_BF16, ST_DOUBLE, ST_LONG, NUM_TYPES };
enum { IDX32, IDX64, NUM_WIDTHS };

#define SCAN_PROGRAM(name, defines)                                      \
  {{"scan_" name, ocl_cl_source_scan, defines},                          \
   {"scan_" name "_idx64", ocl_cl_source_scan, defines " -DIDX_64"}}
OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_TYPES][NUM_WIDTHS] = {
    [ST_FLOAT] = SCAN_PROGRAM("float", "-DT_IS_FLOAT"),
    [ST_HALF] = SCAN_PROGRAM("half", "-DT_IS_HALF"),
    [ST_BF16] = SCAN_PROGRAM("bf16", "-DT_IS_BF16"),
    [ST_DOUBLE] = SCAN_PROGRAM("double", "-DT_IS_DOUBLE"),
    [ST_LONG] = SCAN_PROGRAM("long", "-DT_IS_LONG"),
};

enum scan_kind { SCAN_SUM, SCAN_PROD, SCAN_LSE };

#define TB(t) (1u << (t))
#define FLOATS \
  (TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_BFLOAT16) | TB(TF_DOUBLE))

struct scan_op {
  const char *op;
  const char *kernel; /* prefix in scan.cl */
  enum scan_kind kind;
  unsigned types;
};

static const struct scan_op scan_ops[] = {
    {"Cumsum", "sum", SCAN_SUM, FLOATS | TB(TF_INT64) | TB(TF_INT32)},
    {"Cumprod", "prod", SCAN_PROD, FLOATS | TB(TF_INT64) | TB(TF_INT32)},
    {"CumulativeLogsumexp", "lse", SCAN_LSE, FLOATS},
};
#define NUM_SCAN_OPS ((int)(sizeof(scan_ops) / sizeof(scan_ops[0])))

enum variant { ROWS, COLS, BLOCKS, GROUP, NUM_VARIANTS };
static const char *const variant_suffix[NUM_VARIANTS] = {"rows", "cols",
                                                         "blocks", "group"};

struct scan_kernel {
  const struct scan_op *op;
  TF_DataType dtype;
  bool host_int32;
  bool exclusive, reverse;
  struct ocl_kernel k[NUM_WIDTHS][NUM_VARIANTS];
};

/* Index arithmetic is 32-bit while every index fits in an int, with room
 * for global sizes rounded up to a work-group and a chunk read ahead. */
#define IDX32_LIMIT ((int64_t)INT32_MAX - 65536)
/* TFOCL_INDEX_WIDTH=64 (read once, at registration) takes the 64-bit
 * programs for every size: how the tests reach them. */
static bool force_wide;

/* GPUs scan rows of at least GROUP_MIN_ROW elements a work-group each, of
 * GROUP_SIZE work-items at most, each folding SCAN_ITEMS (scan.cl) of each
 * chunk; SCAN_ITEMS and BLOCK must equal scan.cl's. CPU devices give a row or block a work-group of its own
 * (ocl_launch_rows) from ROWS_MIN_LEN steps on, so that even a few of them
 * spread over the cores. */
#define GROUP_MIN_ROW 64
#define GROUP_SIZE 256
#define SCAN_ITEMS 4
#define ROWS_MIN_LEN 64
#define BLOCK 16

static struct ocl_arg idx_arg(bool wide, int64_t v)
{
  return wide ? OCL_LONG(v) : OCL_INT((int32_t)v);
}

static size_t acc_size(enum scan_type t)
{
  return t == ST_DOUBLE || t == ST_LONG ? 8 : 4;
}

static enum scan_type scan_type_of(TF_DataType dtype)
{
  switch (dtype) {
  case TF_HALF: return ST_HALF;
  case TF_BFLOAT16: return ST_BF16;
  case TF_DOUBLE: return ST_DOUBLE;
  case TF_INT64: return ST_LONG;
  default: return ST_FLOAT;
  }
}

/* ---- int32 on the host ------------------------------------------------- */

static void host_scan_int32(enum scan_kind kind, bool exclusive, bool reverse,
                            int64_t outer, int64_t len, int64_t inner,
                            const int32_t *x, int32_t *y)
{
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * len * inner + i;
      /* Wrap-around as TensorFlow's int32 kernels: unsigned arithmetic. */
      uint32_t acc = kind == SCAN_PROD ? 1 : 0;
      for (int64_t p = 0; p < len; p++) {
        int64_t at = base + (reverse ? len - 1 - p : p) * inner;
        uint32_t v = (uint32_t)x[at];
        if (exclusive)
          y[at] = (int32_t)acc;
        acc = kind == SCAN_PROD ? acc * v : acc + v;
        if (!exclusive)
          y[at] = (int32_t)acc;
      }
    }
}

/* ---- Launching ------------------------------------------------------------ */

static bool run_scan(struct ocl_op *op, struct scan_kernel *k, int64_t outer,
                     int64_t len, int64_t inner, const TF_Tensor *x,
                     TF_Tensor *y)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (k->dtype == TF_DOUBLE && !info->has_fp64)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "%s of float64 needs cl_khr_fp64, which OpenCL device "
                       "%d lacks",
                       k->op->op, info->ordinal);
  bool wide = force_wide || outer * len * inner > IDX32_LIMIT;
  struct ocl_kernel *kernels = k->k[wide];
  int flags[2] = {k->exclusive, k->reverse};

  if (inner == 1 && !info->cpu_shape && len >= GROUP_MIN_ROW) {
    enum scan_type t = scan_type_of(k->dtype);
    /* Rows shorter than a full chunk take a smaller work-group (powers of
     * two, so few local sizes ever occur). */
    size_t wanted = GROUP_MIN_ROW / SCAN_ITEMS;
    while (wanted < GROUP_SIZE && (int64_t)wanted * SCAN_ITEMS < len)
      wanted *= 2;
    size_t local = ocl_kernel_fit_local(op, &kernels[GROUP], wanted);
    if (local == 0)
      return false;
    /* Local arguments are not in CL_KERNEL_WORK_GROUP_SIZE: the chunk and
     * the work-items' totals must fit the device's local memory too. */
    size_t per_item = (SCAN_ITEMS + 1) * acc_size(t);
    while (local > 1 && local * per_item > info->local_mem_size)
      local /= 2;
    const struct ocl_arg args[] = {
        OCL_TENSOR(x),
        OCL_TENSOR(y),
        idx_arg(wide, len),
        OCL_INT(flags[0]),
        OCL_INT(flags[1]),
        OCL_LOCAL(SCAN_ITEMS * local * acc_size(t)),
        OCL_LOCAL(local * acc_size(t)),
    };
    size_t global = (size_t)outer * local;
    return ocl_launch(op, &kernels[GROUP], 1, &global, &local, args, 7);
  }
  if (inner == 1) {
    const struct ocl_arg args[] = {
        OCL_TENSOR(x),        OCL_TENSOR(y),        idx_arg(wide, outer),
        idx_arg(wide, len),   OCL_INT(flags[0]),    OCL_INT(flags[1]),
    };
    if (info->cpu_shape && len >= ROWS_MIN_LEN)
      return ocl_launch_rows(op, &kernels[ROWS], (size_t)outer, args, 6);
    return ocl_launch_1d(op, &kernels[ROWS], (size_t)outer, args, 6);
  }
  enum variant v = info->cpu_shape ? BLOCKS : COLS;
  int64_t n = outer * (v == BLOCKS ? (inner + BLOCK - 1) / BLOCK : inner);
  const struct ocl_arg args[] = {
      OCL_TENSOR(x),      OCL_TENSOR(y),       idx_arg(wide, n),
      idx_arg(wide, len), idx_arg(wide, inner), OCL_INT(flags[0]),
      OCL_INT(flags[1]),
  };
  if (v == BLOCKS && len >= ROWS_MIN_LEN)
    return ocl_launch_rows(op, &kernels[BLOCKS], (size_t)n, args, 7);
  return ocl_launch_1d(op, &kernels[v], (size_t)n, args, 7);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

static void *scan_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct scan_op *op = &scan_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct scan_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  TF_Bool value = 0;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "exclusive", &value, status);
  /* Absent: TensorFlow's default, false. */
  k->exclusive = ocl_tf.GetCode(status) == TF_OK && value;
  ocl_set_ok(status);
  value = 0;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "reverse", &value, status);
  k->reverse = ocl_tf.GetCode(status) == TF_OK && value;
  ocl_set_ok(status);
  k->host_int32 = k->dtype == TF_INT32;
  if (!k->host_int32) {
    enum scan_type t = scan_type_of(k->dtype);
    for (int w = 0; w < NUM_WIDTHS; w++)
      for (int v = 0; v < NUM_VARIANTS; v++)
        if (!ocl_kernel_initf(&k->k[w][v], &programs[t][w], "%s_%s",
                              op->kernel, variant_suffix[v])) {
          ocl_set_status(status, TF_INTERNAL, "%s: kernel name too long",
                         op->op);
          goto fail;
        }
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void scan_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct scan_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK];

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *axis_t = x != NULL ? ocl_op_input(&op, 1) : NULL;
  if (axis_t == NULL)
    goto out;
  int axis_rank = ocl_tf.NumDims(axis_t);
  if (axis_rank != 0) {
    char shape[160];
    for (int d = 0; d < axis_rank && d < OCL_MAX_RANK; d++)
      dims[d] = ocl_tf.Dim(axis_t, d);
    ocl_shape_format(dims, axis_rank < OCL_MAX_RANK ? axis_rank : OCL_MAX_RANK,
                     shape, sizeof(shape));
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "ScanOp: axis must be a scalar, not %s", shape);
    goto out;
  }
  int rank = ocl_tf.NumDims(x);
  if (rank > OCL_MAX_RANK) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "Shapes of rank %d exceed TensorFlow's limit of %d "
                "dimensions",
                rank, OCL_MAX_RANK);
    goto out;
  }
  int64_t axis_arg = ocl_host_int(axis_t, 0);
  int64_t axis = axis_arg < 0 ? rank + axis_arg : axis_arg;
  if (axis < 0 || axis >= rank) {
    /* TensorFlow names the axis after adding the rank. */
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "ScanOp: Expected scan axis in the range [%d, %d), but got "
                "%lld",
                -rank, rank, (long long)axis);
    goto out;
  }
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < rank; d++) {
    dims[d] = ocl_tf.Dim(x, d);
    if (d < axis)
      outer *= dims[d];
    else if (d > axis)
      inner *= dims[d];
  }
  int64_t len = dims[axis];
  TF_Tensor *y = ocl_op_output(&op, 0, k->dtype, dims, rank);
  if (y == NULL || outer * len * inner == 0)
    goto out;
  if (k->host_int32)
    host_scan_int32(k->op->kind, k->exclusive, k->reverse, outer, len, inner,
                    ocl_host_data(x), ocl_host_data(y));
  else
    run_scan(&op, k, outer, len, inner, x, y);
out:
  ocl_op_end(&op);
}

static void scan_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_SCAN_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per scan op");
OCL_FAMILY_CREATES(scan, scan_create);

/* ---- Registration -------------------------------------------------------- */

void ocl_register_scan_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT,  TF_HALF,  TF_BFLOAT16,
                                      TF_DOUBLE, TF_INT64, TF_INT32};
  static const char *const device_args[] = {"axis", NULL};
  static const char *const host_args[] = {"axis", "x", "out", NULL};
  force_wide = ocl_config()->hooks.index64;
  for (int i = 0; i < NUM_SCAN_OPS; i++)
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
      if (!(scan_ops[i].types & TB(types[t])))
        continue;
      /* Tidx is left free: the op allows int32 and int64 only, and the
       * axis is read at either width. */
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = scan_ops[i].op,
          .create = scan_creates[i],
          .compute = scan_compute,
          .destroy = scan_delete,
          .type_attrs = {"T"},
          .types = {types[t]},
          .host_args = types[t] == TF_INT32 ? host_args : device_args,
      });
    }
}
