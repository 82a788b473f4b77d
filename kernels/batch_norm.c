/* Batch normalisation: FusedBatchNormV3 and FusedBatchNormGradV3, for T
 * float, half or bfloat16 with U float, NHWC/NCHW (and their 5-D forms).
 *
 * Semantics are TensorFlow's CPU kernels' (fused_batch_norm_op.cc); where
 * the CPU kernel takes only NHWC (FusedBatchNormGradV3 with
 * is_training=false) the same arithmetic runs on NCHW, as TensorFlow's GPU
 * kernels allow. FusedBatchNormV3's reserve_space_1/2 hold the batch mean
 * and biased variance in training (the CPU kernel's choice, not cuDNN's
 * inverse variance: our gradient reads them back), the given mean and
 * variance in inference; reserve_space_3 is empty, shape [0], as on the CPU.
 *
 * The per-channel reductions are parallel over many work-groups and
 * accurate in float (batch_norm.cl explains how): statistics of x - pivot
 * within a work-item's run and Chan's merge across work-items and
 * work-groups, the mean and the gradient's sums as trees, no sequential
 * float sum over more than BN_MAX_RUN elements. Both shapes slice each
 * channel into as many work-groups as the device has compute units times
 * a few; on a GPU a group's work-items interleave (neighbouring addresses)
 * and fold by Welford's update, on a CPU each walks a contiguous run twice
 * while it is cached (channels last: a work-item per slice of rows, every
 * channel of them at once, bn_stats_rows and bn_sums_rows), and the
 * element-wise passes take a work-item per element (GPU) or per row (CPU,
 * a few thousand elements to a work-group). tfocl bench, [16,56,56,64]
 * NHWC on PoCL, GB/s before -> after the CPU's channels-last rows:
 * training 5.7 -> 19.4-19.8, gradient 3.0 -> 23.6-24.6 (a device copy
 * 31). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_batch_norm[];

enum bn_type { BT_FLOAT, BT_HALF, BT_BFLOAT16, NUM_BN_TYPES };
enum { IDX32, IDX64, NUM_WIDTHS };

OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_BN_TYPES][NUM_WIDTHS] = {
    [BT_FLOAT] = {{"batch_norm_float_32", ocl_cl_source_batch_norm,
                   "-DT=float -DT_IS_FLOAT -DIDX=int"},
                  {"batch_norm_float_64", ocl_cl_source_batch_norm,
                   "-DT=float -DT_IS_FLOAT -DIDX=long"}},
    [BT_HALF] = {{"batch_norm_half_32", ocl_cl_source_batch_norm,
                  "-DT=half -DT_IS_HALF -DIDX=int"},
                 {"batch_norm_half_64", ocl_cl_source_batch_norm,
                  "-DT=half -DT_IS_HALF -DIDX=long"}},
    [BT_BFLOAT16] = {{"batch_norm_bfloat16_32", ocl_cl_source_batch_norm,
                      "-DT=ushort -DT_IS_BFLOAT16 -DIDX=int"},
                     {"batch_norm_bfloat16_64", ocl_cl_source_batch_norm,
                      "-DT=ushort -DT_IS_BFLOAT16 -DIDX=long"}},
};

/* Elements a work-item folds in order before its result enters a tree:
 * Welford's running mean and a plain float sum both lose about
 * sqrt(run) ulps over a run, so a few hundred keep them within a few ulps
 * of exact (TensorFlow's CPU kernels sum longer runs). */
#define BN_MAX_RUN 256
/* The local size of the reduction kernels (fixed per device: PoCL compiles
 * a kernel again for each new local size), capped by the built kernel. */
#define BN_LOCAL 256
/* The CPU shape's fold kernels: their local size where no work-item
 * merges more than BN_FOLD_MERGES_CPU slices (else BN_LOCAL: 2 local
 * sizes, 2 builds). */
#define BN_FOLD_LOCAL_CPU 16
#define BN_FOLD_MERGES_CPU 16
/* Work-groups per compute unit the statistics aim for. */
#define BN_GROUPS_PER_CU_GPU 4
#define BN_GROUPS_PER_CU_CPU 2

enum bn_kind { BATCH_NORM, BATCH_NORM_GRAD };

/* The kernels, by index in bn_kernel.k[width][...]. */
enum {
  K_STATS_LAST,
  K_STATS_FIRST,
  K_FOLD_STATS,
  K_APPLY,
  K_SUMS_LAST,
  K_SUMS_FIRST,
  K_FOLD_SUMS,
  K_GRAD_APPLY,
  K_APPLY_ROWS,
  K_GRAD_APPLY_ROWS,
  K_STATS_ROWS,
  K_SUMS_ROWS,
  NUM_BN_KERNELS
};
static const char *const kernel_names[NUM_BN_KERNELS] = {
    "bn_stats_last", "bn_stats_first",     "bn_fold_stats", "bn_apply",
    "bn_sums_last",  "bn_sums_first",      "bn_fold_sums",  "bn_grad_apply",
    "bn_apply_rows", "bn_grad_apply_rows", "bn_stats_rows", "bn_sums_rows"};

struct bn_kernel {
  enum bn_kind kind;
  TF_DataType dtype;
  bool channels_first;
  float epsilon, factor;
  bool training;
  /* TFOCL_INDEX_WIDTH=64 (read at create time): the 64-bit index variants
   * even where 32 bits do, so that tests reach them. */
  bool force64;
  struct ocl_kernel k[NUM_WIDTHS][NUM_BN_KERNELS];
};

/* batch_norm.cl's bn_t for each index width. */
#define BN_ARGS_FIELDS(type) \
  type depth, rest, inner;   \
  type slice, slices;        \
  type tile_c, tile_r, tiles; \
  type top, count, run;
struct bn_args32 {
  BN_ARGS_FIELDS(cl_int)
};
struct bn_args64 {
  BN_ARGS_FIELDS(cl_long)
};

/* One launch's view of the problem (bn_t in 64 bits, narrowed to 32 when
 * everything fits). */
struct bn_plan {
  int64_t depth, rest, inner, count;
  int64_t slice, slices, tile_c, tile_r, tiles, top, run;
  size_t local;
  int width;
};

/* ---- Construction --------------------------------------------------------- */

static enum bn_type bn_type_of(TF_DataType dtype)
{
  return dtype == TF_HALF       ? BT_HALF
         : dtype == TF_BFLOAT16 ? BT_BFLOAT16
                                : BT_FLOAT;
}

static void *bn_create(TF_OpKernelConstruction *ctx, enum bn_kind kind)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct bn_kernel *k = calloc(1, sizeof(*k));
  char format[16] = {0};
  TF_Bool training = 1;
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->kind = kind;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  if (ocl_tf.OpKernelConstruction_GetAttrString != NULL)
    ocl_tf.OpKernelConstruction_GetAttrString(ctx, "data_format", format,
                                              sizeof(format) - 1, status);
  if (ocl_tf.OpKernelConstruction_GetAttrString == NULL ||
      ocl_tf.GetCode(status) != TF_OK) {
    ocl_set_ok(status); /* absent: TensorFlow's default */
    snprintf(format, sizeof(format), "NHWC");
  }
  if (strcmp(format, "NCHW") == 0 || strcmp(format, "NCDHW") == 0) {
    k->channels_first = true;
  } else if (strcmp(format, "NHWC") != 0 && strcmp(format, "NDHWC") != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "Invalid data format");
    goto fail;
  }
  k->epsilon = 1e-4f;
  k->factor = 1.0f;
  ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "epsilon", &k->epsilon,
                                           status);
  ocl_set_ok(status); /* absent: TensorFlow's default */
  if (kind == BATCH_NORM) {
    ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "exponential_avg_factor",
                                             &k->factor, status);
    ocl_set_ok(status);
  }
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "is_training", &training,
                                          status);
  ocl_set_ok(status);
  k->training = training != 0;
  k->force64 = ocl_config()->hooks.index64;
  enum bn_type type = bn_type_of(k->dtype);
  for (int w = 0; w < NUM_WIDTHS; w++)
    for (int i = 0; i < NUM_BN_KERNELS; i++)
      ocl_kernel_init(&k->k[w][i], &programs[type][w], kernel_names[i]);
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void *bn_create_forward(TF_OpKernelConstruction *ctx)
{
  return bn_create(ctx, BATCH_NORM);
}

static void *bn_create_grad(TF_OpKernelConstruction *ctx)
{
  return bn_create(ctx, BATCH_NORM_GRAD);
}

static void bn_delete(void *kernel) { free(kernel); }

/* ---- Shapes ---------------------------------------------------------------- */

/* INVALID_ARGUMENT "<what> must be <n>-dimensional[2,3]" (TensorFlow glues
 * the shape on) unless t's rank is allowed. */
static bool check_bn_rank(struct ocl_op *op, const TF_Tensor *t,
                          const char *what, bool image)
{
  int64_t dims[OCL_MAX_DIMS];
  char shape[160];
  int rank = ocl_op_dims(op, t, dims);
  if (rank < 0)
    return false;
  if (image ? (rank == 4 || rank == 5) : rank == 1)
    return true;
  ocl_shape_format(dims, rank, shape, sizeof(shape));
  return ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s must be %s-dimensional%s",
                     what, image ? "4 or 5" : "1", shape);
}

static bool check_channels(struct ocl_op *op, const TF_Tensor *t,
                           const char *prefix, const char *what,
                           int64_t channels)
{
  int64_t n = ocl_tf.TensorElementCount(t);
  if (n == channels)
    return true;
  return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                     "%s%s must have the same number of elements as the "
                     "channels of x, got %lld and %lld",
                     prefix, what, (long long)n, (long long)channels);
}

/* x as [outer, depth, inner]. */
static void bn_layout(const struct bn_kernel *k, const int64_t *dims,
                      int rank, struct bn_plan *p)
{
  int c = k->channels_first ? 1 : rank - 1;
  int64_t outer = 1;
  memset(p, 0, sizeof(*p));
  p->depth = dims[c];
  p->inner = 1;
  for (int i = 0; i < rank; i++) {
    if (i < c)
      outer *= dims[i];
    else if (i > c)
      p->inner *= dims[i];
  }
  p->rest = outer * p->inner;
  p->count = p->rest * p->depth;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t pow2_at_least(int64_t n)
{
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

/* Slices the rest of each channel for the reduction kernels: `local`
 * work-items per group, enough groups to fill the device, no work-item
 * folding more than BN_MAX_RUN elements in a row. */
static void bn_slice(struct bn_plan *p, const struct ocl_device_info *info,
                     size_t local)
{
  int64_t target = (int64_t)(info->compute_units ? info->compute_units : 1) *
                   (info->cpu_shape ? BN_GROUPS_PER_CU_CPU
                                    : BN_GROUPS_PER_CU_GPU);
  int64_t per_group; /* work-items on one channel in a group */
  p->local = local;
  if (p->inner == 1) {
    p->tile_c = p->depth < (int64_t)local ? p->depth : (int64_t)local;
    if (p->tile_c < 1)
      p->tile_c = 1;
    p->tile_r = (int64_t)local / p->tile_c;
    p->tiles = ceil_div(p->depth, p->tile_c);
    p->top = pow2_at_least(p->tile_r);
    per_group = p->tile_r;
  } else {
    p->tile_c = 1;
    p->tile_r = (int64_t)local;
    p->tiles = p->depth;
    p->top = (int64_t)local;
    per_group = (int64_t)local;
  }
  int64_t slices = ceil_div(target, p->tiles);
  int64_t by_run = ceil_div(p->rest, per_group * BN_MAX_RUN);
  if (slices < by_run)
    slices = by_run;
  int64_t most = ceil_div(p->rest, per_group);
  if (slices > most)
    slices = most;
  if (slices < 1)
    slices = 1;
  p->slice = ceil_div(ceil_div(p->rest, slices), per_group) * per_group;
  if (p->slice < 1)
    p->slice = 1;
  p->slices = p->rest == 0 ? 0 : ceil_div(p->rest, p->slice);
  /* A CPU core walks each work-item's elements as one contiguous run. */
  p->run = info->cpu_shape ? p->slice / per_group : 0;
}

/* 32-bit indices when every index (and batch_norm.cl's intermediates) fits. */
static void bn_width(struct bn_plan *p, const struct bn_kernel *k)
{
  int64_t limit = INT32_MAX / 2;
  p->width = p->count <= limit && 3 * (p->slices + 1) * p->depth <= limit &&
                     !k->force64
                 ? IDX32
                 : IDX64;
}

/* The bn_t argument of a launch whose tree spans `top` work-items. */
struct bn_args {
  struct bn_args32 a32;
  struct bn_args64 a64;
};

static struct ocl_arg bn_arg_count(const struct bn_plan *p, int64_t top,
                                   int64_t count, struct bn_args *a)
{
  a->a64 = (struct bn_args64){p->depth,  p->rest,   p->inner, p->slice,
                              p->slices, p->tile_c, p->tile_r, p->tiles,
                              top,       count,     p->run};
  if (p->width == IDX64)
    return OCL_BYTES(&a->a64, sizeof(a->a64));
  a->a32 = (struct bn_args32){
      (cl_int)p->depth,  (cl_int)p->rest,   (cl_int)p->inner,
      (cl_int)p->slice,  (cl_int)p->slices, (cl_int)p->tile_c,
      (cl_int)p->tile_r, (cl_int)p->tiles,  (cl_int)top,
      (cl_int)count,     (cl_int)p->run};
  return OCL_BYTES(&a->a32, sizeof(a->a32));
}

static struct ocl_arg bn_arg(const struct bn_plan *p, int64_t top,
                             struct bn_args *a)
{
  return bn_arg_count(p, top, p->count, a);
}

/* Launches an element-wise pass (bn_apply, bn_grad_apply: `kernel`, its
 * _rows form at kernel_rows) with args[0..n) then bn_t and `tail` more:
 * a work-item per element on a GPU, per row on a CPU. */
static bool bn_elementwise(struct ocl_op *op, struct bn_kernel *k,
                           const struct bn_plan *p, int kernel,
                           int kernel_rows, struct ocl_arg *args, int n,
                           int total)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  struct bn_args a;
  if (info == NULL)
    return false;
  if (!info->cpu_shape) {
    args[n] = bn_arg(p, 1, &a);
    return ocl_launch_1d(op, &k->k[p->width][kernel], (size_t)p->count, args,
                         total);
  }
  int64_t len = p->inner == 1 ? p->depth : p->inner, rows = p->count / len;
  args[n] = bn_arg_count(p, 1, rows, &a);
  return ocl_launch_row_groups(op, &k->k[p->width][kernel_rows], (size_t)rows,
                               len, args, total);
}

/* The reduction kernels' local size on this device: BN_LOCAL or the most
 * the kernel takes, a power of two. 0 with the status set. */
static size_t bn_local(struct ocl_op *op, struct bn_kernel *k, int width,
                       int first, int count)
{
  size_t local = BN_LOCAL;
  for (int i = 0; i < count && local > 0; i++)
    local = ocl_kernel_fit_local(op, &k->k[width][first + i], local);
  return local;
}

/* Slices the problem for the reduction kernels first_kernel .. +2 (the
 * _last, _first and fold kernels): their local size depends on the index
 * width, which depends on the slicing. False with the status set. */
static bool bn_plan_reduce(struct ocl_op *op, struct bn_kernel *k,
                           struct bn_plan *p,
                           const struct ocl_device_info *info,
                           int first_kernel)
{
  size_t local = BN_LOCAL;
  for (int i = 0; i < 3; i++) {
    bn_slice(p, info, local);
    bn_width(p, k);
    size_t fit = bn_local(op, k, p->width, first_kernel, 3);
    if (fit == 0)
      return false;
    if (fit == local)
      return true;
    local = fit;
  }
  return ocl_op_fail(op, TF_INTERNAL,
                     "batch normalisation: no stable work-group size");
}

/* The CPU shape, channels last (bn_stats_rows, bn_sums_rows): slices of
 * at most BN_MAX_RUN rows, a work-item each, four per compute unit where
 * the rows allow; the width and the fold kernel's local size follow the
 * new slicing. False with the status set. */
static bool bn_plan_rows(struct ocl_op *op, struct bn_kernel *k,
                         struct bn_plan *p, const struct ocl_device_info *info,
                         int fold_kernel)
{
  int64_t units = info->compute_units ? info->compute_units : 1;
  int64_t slice = ceil_div(p->rest, 4 * units);
  p->slice = slice < 1 ? 1 : slice > BN_MAX_RUN ? BN_MAX_RUN : slice;
  p->slices = p->rest == 0 ? 0 : ceil_div(p->rest, p->slice);
  p->run = p->slice;
  bn_width(p, k);
  /* A narrow fold group where its work-items merge at most
   * BN_FOLD_MERGES_CPU slices each in order before their tree, as each of
   * a group's barriers costs PoCL a pass over its work-items (64 channels
   * of 196 slices: 0.35 ms at 256 work-items a group, 0.04 at 16). Longer
   * runs of merged partial sums lose the ulps that the tree keeps. */
  size_t wanted = p->slices <= BN_FOLD_LOCAL_CPU * BN_FOLD_MERGES_CPU
                      ? BN_FOLD_LOCAL_CPU
                      : p->local;
  size_t fit = ocl_kernel_fit_local(op, &k->k[p->width][fold_kernel], wanted);
  if (fit == 0)
    return false;
  p->local = fit;
  return true;
}

/* ---- FusedBatchNormV3 ---------------------------------------------------- */

static void run_batch_norm(struct ocl_op *op, struct bn_kernel *k,
                           TF_Tensor *const *in)
{
  int64_t dims[OCL_MAX_DIMS];
  struct bn_plan p;
  if (!check_bn_rank(op, in[0], "input", true) ||
      !check_bn_rank(op, in[1], "scale", false) ||
      !check_bn_rank(op, in[2], "offset", false) ||
      !check_bn_rank(op, in[3], "estimated_mean", false) ||
      !check_bn_rank(op, in[4], "estimated_variance", false))
    return;
  int rank = ocl_op_dims(op, in[0], dims);
  if (rank < 0)
    return;
  bn_layout(k, dims, rank, &p);
  if (!check_channels(op, in[1], "", "scale", p.depth) ||
      !check_channels(op, in[2], "", "offset", p.depth))
    return;
  if (!k->training || k->factor != 1.0f) {
    const char *prefix = k->training ? "When exponential_avg_factor != 1, "
                                     : "When is_training=false, ";
    if (!check_channels(op, in[3], prefix, "mean", p.depth) ||
        !check_channels(op, in[4], prefix, "variance", p.depth))
      return;
  }
  TF_Tensor *out[6];
  const int64_t none = 0;
  for (int i = 0; i < 6; i++) {
    bool image = i == 0;
    out[i] = ocl_op_output(op, i, image ? k->dtype : TF_FLOAT,
                           image ? dims : i == 5 ? &none : &p.depth,
                           image ? rank : 1);
    if (out[i] == NULL)
      return;
  }
  if (p.depth == 0)
    return;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  TF_Tensor *var = out[4], *part = NULL;
  if (!k->training) {
    /* The given statistics normalise and pass through (NaN for an empty
     * x, as in training). */
    size_t bytes = sizeof(float) * (size_t)p.depth;
    if (p.rest == 0) {
      const float nan = NAN;
      for (int i = 1; i <= 4; i++)
        if (!ocl_op_fill(op, out[i], 0, &nan, sizeof(nan), bytes))
          return;
      return;
    }
    for (int i = 1; i <= 4; i++)
      if (!ocl_op_copy(op, in[i % 2 ? 3 : 4], 0, out[i], 0, bytes))
        return;
    var = in[4];
  } else {
    bool rows = info->cpu_shape && p.inner == 1;
    if (!bn_plan_reduce(op, k, &p, info, K_STATS_LAST) ||
        (rows && !bn_plan_rows(op, k, &p, info, K_FOLD_STATS)))
      return;
    size_t local = p.local;
    /* The partials, then the mean of x - pivot per channel. */
    part = ocl_op_temp(op, TF_FLOAT, (3 * p.slices + 1) * p.depth);
    if (part == NULL)
      return;
    struct ocl_arg partial[7] = {OCL_TENSOR(in[0]), OCL_TENSOR(part)};
    struct bn_args a1, a2;
    size_t groups = (size_t)(p.tiles * p.slices);
    size_t global = groups * local;
    if (rows && p.slices > 0) {
      partial[2] = bn_arg(&p, 1, &a1);
      if (!ocl_launch_rows(op, &k->k[p.width][K_STATS_ROWS], (size_t)p.slices,
                           partial, 3))
        return;
    } else if (groups > 0) {
      partial[2] = bn_arg(&p, p.top, &a1);
      for (int i = 0; i < 4; i++)
        partial[3 + i] = OCL_LOCAL(sizeof(float) * local);
      if (!ocl_launch(op,
                      &k->k[p.width][p.inner == 1 ? K_STATS_LAST
                                                  : K_STATS_FIRST],
                      1, &global, &local, partial, 7))
        return;
    }
    struct ocl_arg fold[14] = {
        OCL_TENSOR(in[0]),  OCL_TENSOR(part),   OCL_TENSOR(in[3]),
        OCL_TENSOR(in[4]),  OCL_TENSOR(out[1]), OCL_TENSOR(out[2]),
        OCL_TENSOR(out[3]), OCL_TENSOR(out[4]), bn_arg(&p, (int64_t)local, &a2),
        OCL_FLOAT(k->factor),
    };
    for (int i = 0; i < 4; i++)
      fold[10 + i] = OCL_LOCAL(sizeof(float) * local);
    global = (size_t)p.depth * local;
    if (!ocl_launch(op, &k->k[p.width][K_FOLD_STATS], 1, &global, &local,
                    fold, 14))
      return;
  }
  if (p.count == 0)
    return;
  /* Training: the mean of x - pivot, at the end of the partials. */
  struct ocl_buffer mean;
  if (k->training
          ? !ocl_op_buffer(op, part, sizeof(float) * 3 * p.slices * p.depth,
                           sizeof(float) * p.depth, &mean)
          : !ocl_op_buffer(op, in[3], 0, sizeof(float) * p.depth, &mean))
    return;
  bn_width(&p, k);
  struct ocl_arg apply[9] = {
      OCL_TENSOR(in[0]), OCL_TENSOR(out[0]), OCL_BUF(mean),
      OCL_TENSOR(var),   OCL_TENSOR(in[1]),  OCL_TENSOR(in[2]),
      {0},               OCL_FLOAT(k->epsilon), OCL_INT(k->training),
  };
  bn_elementwise(op, k, &p, K_APPLY, K_APPLY_ROWS, apply, 6, 9);
}

/* ---- FusedBatchNormGradV3 -------------------------------------------------- */

static void run_batch_norm_grad(struct ocl_op *op, struct bn_kernel *k,
                                TF_Tensor *const *in)
{
  int64_t dims[OCL_MAX_DIMS], dy_dims[OCL_MAX_DIMS];
  struct bn_plan p;
  if (!check_bn_rank(op, in[0], "input", true) ||
      !check_bn_rank(op, in[1], "input", true) ||
      !check_bn_rank(op, in[2], "scale", false) ||
      !check_bn_rank(op, in[3], "saved mean", false) ||
      !check_bn_rank(op, in[4], "saved variance", false))
    return;
  int dy_rank = ocl_op_dims(op, in[0], dy_dims);
  int rank = ocl_op_dims(op, in[1], dims);
  if (rank < 0 || dy_rank < 0)
    return;
  bool same = rank == dy_rank;
  for (int i = 0; same && i < rank; i++)
    same = dims[i] == dy_dims[i];
  if (!same) {
    char x_shape[160], dy_shape[160];
    ocl_shape_format(dims, rank, x_shape, sizeof(x_shape));
    ocl_shape_format(dy_dims, dy_rank, dy_shape, sizeof(dy_shape));
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "x and y_backprop must have same shape, but x has shape %s "
                "and y_backprop has shape %s",
                x_shape, dy_shape);
    return;
  }
  bn_layout(k, dims, rank, &p);
  if (!check_channels(op, in[2], "", "scale", p.depth) ||
      !check_channels(op, in[3], "", "reserve_space_1", p.depth) ||
      !check_channels(op, in[4], "", "reserve_space_2", p.depth))
    return;
  TF_Tensor *out[5];
  const int64_t zero = 0;
  for (int i = 0; i < 5; i++) {
    bool image = i == 0;
    out[i] = ocl_op_output(op, i, image ? k->dtype : TF_FLOAT,
                           image ? dims : i < 3 ? &p.depth : &zero,
                           image ? rank : 1);
    if (out[i] == NULL)
      return;
  }
  if (p.depth == 0)
    return;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  bool rows = info->cpu_shape && p.inner == 1;
  if (!bn_plan_reduce(op, k, &p, info, K_SUMS_LAST) ||
      (rows && !bn_plan_rows(op, k, &p, info, K_FOLD_SUMS)))
    return;
  size_t local = p.local;
  TF_Tensor *part = ocl_op_temp(op, TF_FLOAT, 2 * p.slices * p.depth + 1);
  if (part == NULL)
    return;
  struct ocl_arg partial[7] = {OCL_TENSOR(in[0]), OCL_TENSOR(in[1]),
                               OCL_TENSOR(in[3]), OCL_TENSOR(part)};
  struct ocl_arg fold[8] = {OCL_TENSOR(part), OCL_TENSOR(in[4]),
                            OCL_TENSOR(out[1]), OCL_TENSOR(out[2])};
  struct bn_args a1, a2;
  size_t groups = (size_t)(p.tiles * p.slices);
  size_t global = groups * local;
  if (rows && p.slices > 0) {
    partial[4] = bn_arg(&p, 1, &a1);
    if (!ocl_launch_rows(op, &k->k[p.width][K_SUMS_ROWS], (size_t)p.slices,
                         partial, 5))
      return;
  } else if (groups > 0) {
    partial[4] = bn_arg(&p, p.top, &a1);
    partial[5] = OCL_LOCAL(sizeof(float) * local);
    partial[6] = OCL_LOCAL(sizeof(float) * local);
    if (!ocl_launch(op,
                    &k->k[p.width][p.inner == 1 ? K_SUMS_LAST : K_SUMS_FIRST],
                    1, &global, &local, partial, 7))
      return;
  }
  fold[4] = bn_arg(&p, (int64_t)local, &a2);
  fold[5] = OCL_FLOAT(k->epsilon);
  fold[6] = OCL_LOCAL(sizeof(float) * local);
  fold[7] = OCL_LOCAL(sizeof(float) * local);
  global = (size_t)p.depth * local;
  if (!ocl_launch(op, &k->k[p.width][K_FOLD_SUMS], 1, &global, &local, fold,
                  8) ||
      p.count == 0)
    return;
  struct ocl_arg apply[11] = {
      OCL_TENSOR(in[0]),  OCL_TENSOR(in[1]),  OCL_TENSOR(in[3]),
      OCL_TENSOR(in[4]),  OCL_TENSOR(in[2]),  OCL_TENSOR(out[1]),
      OCL_TENSOR(out[2]), OCL_TENSOR(out[0]), {0},
      OCL_FLOAT(k->epsilon), OCL_INT(k->training),
  };
  bn_elementwise(op, k, &p, K_GRAD_APPLY, K_GRAD_APPLY_ROWS, apply, 8, 11);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

static void bn_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct bn_kernel *k = kernel;
  struct ocl_op op;
  TF_Tensor *in[6] = {NULL};
  int n = k->kind == BATCH_NORM ? 5 : 6;

  ocl_op_begin(&op, ctx);
  for (int i = 0; i < n; i++)
    if ((in[i] = ocl_op_input(&op, i)) == NULL)
      goto out;
  if (k->kind == BATCH_NORM)
    run_batch_norm(&op, k, in);
  else
    run_batch_norm_grad(&op, k, in);
out:
  ocl_op_end(&op);
}

void ocl_register_batch_norm_kernels(void)
{
  /* TensorFlow's GPU kernels: T half, bfloat16 or float, U float. */
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_BFLOAT16};
  for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "FusedBatchNormV3",
        .create = bn_create_forward,
        .compute = bn_compute,
        .destroy = bn_delete,
        .type_attrs = {"T", "U"},
        .types = {types[t], TF_FLOAT},
    });
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "FusedBatchNormGradV3",
        .create = bn_create_grad,
        .compute = bn_compute,
        .destroy = bn_delete,
        .type_attrs = {"T", "U"},
        .types = {types[t], TF_FLOAT},
    });
  }
}
