/* Selection and sorting: TopKV2, Where, InTopKV2, Unique,
 * UniqueWithCounts and their V2 ops.
 *
 * TopKV2 (tf.math.top_k, and tf.sort / tf.argsort along the last axis,
 * which TensorFlow lowers to TopKV2 with k = n): the k largest of each row
 * of the last dim, largest first, the lower index first among equals, as
 * TensorFlow documents it (sorted = false is allowed any order; this gives
 * the sorted one). float, half and int32 values, int32 indices and k in host
 * memory, as TensorFlow's GPU kernels.
 *
 * Each row becomes 64-bit keys (select.cl) sorted by a bitonic network: a
 * work-group sorts chunks of 2 * local keys in local memory, longer strides
 * run as global steps, each followed by the local finish of the shorter
 * ones. On CPU devices rows with k <= 16 take a work-item per row instead,
 * keeping its best k in registers over one pass.
 *
 * Where (tf.where(cond), tf.boolean_mask): the coordinates of the true
 * elements, int64 [count, rank]. Its output's shape depends on the values,
 * so the host waits once for the count, as TensorFlow's GPU kernel does:
 * work-groups count chunks, one work-item sums them into offsets, the host
 * reads the total and allocates, then each work-group writes its chunk's
 * coordinates in order (select.cl).
 *
 * InTopKV2 (Keras' top-k accuracy metrics): a work-group per row counts
 * the classes more probable than the target's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_select[];

enum { P_FLOAT, P_HALF, P_INT, NUM_PROGRAMS };
OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_PROGRAMS] = {
    [P_FLOAT] = {"select_float", ocl_cl_source_select, "-DT=float"},
    [P_HALF] = {"select_half", ocl_cl_source_select, "-DT=ushort -DT_IS_HALF"},
    [P_INT] = {"select_int", ocl_cl_source_select, "-DT=int -DT_IS_INT"},
};

enum { K_KEYS, K_STEP, K_LOCAL, K_TAKE, K_SMALL, NUM_KERNELS };
static const char *const kernel_names[NUM_KERNELS] = {
    "topk_keys", "topk_step", "topk_local", "topk_take", "topk_small"};

/* select.cl's TOPK_SMALL. */
#define SMALL_K 16
/* Keys per work-group in local memory: 2 * this at most. */
#define LOCAL_ITEMS 256

struct topk_kernel {
  TF_DataType dtype;
  struct ocl_kernel k[NUM_KERNELS];
};

static void *topk_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct topk_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  int p = k->dtype == TF_HALF ? P_HALF : k->dtype == TF_INT32 ? P_INT : P_FLOAT;
  for (int i = 0; i < NUM_KERNELS; i++)
    ocl_kernel_init(&k->k[i], &programs[p], kernel_names[i]);
  ocl_tf.DeleteStatus(status);
  return k;
}

static void topk_delete(void *kernel) { free(kernel); }

/* The bitonic sort of every row of keys [rows, npad] (npad a power of two,
 * at least 2). */
static bool sort_rows(struct ocl_op *op, struct ocl_kernel *sort_k,
                      TF_Tensor *keys, uint32_t rows, uint32_t npad)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  size_t local = ocl_kernel_fit_local(op, &sort_k[K_LOCAL], LOCAL_ITEMS);
  if (info == NULL || local == 0)
    return false;
  /* A power of two, half a row at most (a chunk never crosses rows), two
   * keys per work-item in local memory. */
  size_t p2 = 1;
  while (p2 * 2 <= local)
    p2 *= 2;
  local = p2;
  while (local > 1 && (2 * local > npad ||
                       2 * local * sizeof(cl_ulong) > info->local_mem_size))
    local /= 2;
  uint32_t span = (uint32_t)(2 * local);
  uint32_t chunks = (uint32_t)((uint64_t)rows * npad / span);
  size_t global = (size_t)chunks * local;
  uint32_t pairs = (uint32_t)((uint64_t)rows * npad / 2);
  const struct ocl_arg first[] = {OCL_TENSOR(keys), OCL_INT(npad),
                                  OCL_INT(0), OCL_INT(chunks),
                                  OCL_LOCAL(span * sizeof(cl_ulong))};
  if (!ocl_launch(op, &sort_k[K_LOCAL], 1, &global, &local, first, 5))
    return false;
  for (uint32_t size = 2 * span; size <= npad; size *= 2) {
    for (uint32_t stride = size / 2; stride >= span; stride /= 2) {
      const struct ocl_arg step[] = {OCL_TENSOR(keys), OCL_INT(npad),
                                     OCL_INT(size), OCL_INT(stride),
                                     OCL_INT(pairs)};
      if (!ocl_launch_1d(op, &sort_k[K_STEP], pairs, step, 5))
        return false;
    }
    const struct ocl_arg finish[] = {OCL_TENSOR(keys), OCL_INT(npad),
                                     OCL_INT(size), OCL_INT(chunks),
                                     OCL_LOCAL(span * sizeof(cl_ulong))};
    if (!ocl_launch(op, &sort_k[K_LOCAL], 1, &global, &local, finish, 5))
      return false;
  }
  return true;
}

static void topk_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct topk_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK];
  char shape[160];

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *k_in = x != NULL ? ocl_op_input(&op, 1) : NULL;
  int rank = k_in != NULL ? ocl_op_dims(&op, x, dims) : -1;
  if (rank < 0)
    goto out;
  if (ocl_tf.NumDims(k_in) != 0) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "k must be scalar, got shape [%lld]",
                (long long)ocl_tf.Dim(k_in, 0));
    goto out;
  }
  int64_t want = ocl_host_int(k_in, 0);
  if (want < 0) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "Need k >= 0, got %lld",
                (long long)want);
    goto out;
  }
  if (rank < 1) {
    ocl_shape_format(dims, rank, shape, sizeof(shape));
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "input must be >= 1-D, got shape %s",
                shape);
    goto out;
  }
  int64_t n = dims[rank - 1];
  if (n < want) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "input must have at least k columns. Had %lld, needed %lld",
                (long long)n, (long long)want);
    goto out;
  }
  int64_t rows = n > 0 ? ocl_shape_elements(dims, rank) / n
                       : ocl_shape_elements(dims, rank - 1);
  dims[rank - 1] = want;
  TF_Tensor *values = ocl_op_output(&op, 0, k->dtype, dims, rank);
  TF_Tensor *indices =
      values != NULL ? ocl_op_output(&op, 1, TF_INT32, dims, rank) : NULL;
  if (indices == NULL || rows == 0 || want == 0)
    goto out;
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto out;
  uint64_t npad = 2;
  while (npad < (uint64_t)n)
    npad *= 2;
  if ((uint64_t)rows * npad > INT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "TopKV2 on OPENCL: %lld rows of %lld (padded to %llu) exceed "
                "its 32-bit indexing",
                (long long)rows, (long long)n, (unsigned long long)npad);
    goto out;
  }
  if (info->cpu_shape && want <= SMALL_K) {
    const struct ocl_arg args[] = {OCL_TENSOR(x),       OCL_TENSOR(values),
                                   OCL_TENSOR(indices), OCL_INT(n),
                                   OCL_INT(want),      OCL_INT(rows)};
    ocl_launch_1d(&op, &k->k[K_SMALL], (size_t)rows, args, 6);
    goto out;
  }
  TF_Tensor *keys = ocl_op_temp(&op, TF_UINT64, (int64_t)(rows * npad));
  if (keys == NULL)
    goto out;
  uint32_t total = (uint32_t)(rows * npad);
  const struct ocl_arg key_args[] = {OCL_TENSOR(x), OCL_TENSOR(keys),
                                     OCL_INT(n), OCL_INT(npad),
                                     OCL_INT(total)};
  if (!ocl_launch_1d(&op, &k->k[K_KEYS], total, key_args, 5) ||
      !sort_rows(&op, k->k, keys, (uint32_t)rows, (uint32_t)npad))
    goto out;
  uint32_t outputs = (uint32_t)(rows * want);
  const struct ocl_arg take[] = {OCL_TENSOR(x),       OCL_TENSOR(keys),
                                 OCL_TENSOR(values),  OCL_TENSOR(indices),
                                 OCL_INT(n),         OCL_INT(npad),
                                 OCL_INT(want),      OCL_INT(outputs)};
  ocl_launch_1d(&op, &k->k[K_TAKE], outputs, take, 8);
out:
  ocl_op_end(&op);
}

/* ---- Where ------------------------------------------------------------------ */

enum { W_BYTE, W_FLOAT, W_LONG, NUM_WHERE_PROGRAMS };
OCL_PROGRAM_TABLE
static const struct ocl_program where_programs[NUM_WHERE_PROGRAMS] = {
    [W_BYTE] = {"where_byte", ocl_cl_source_select, "-DWHERE -DW_T=uchar"},
    [W_FLOAT] = {"where_float", ocl_cl_source_select, "-DWHERE -DW_T=float"},
    [W_LONG] = {"where_long", ocl_cl_source_select, "-DWHERE -DW_T=long"},
};

enum { WK_COUNT, WK_OFFSETS, WK_WRITE, NUM_WHERE_KERNELS };

/* select.cl's where_dims_t. */
struct where_dims {
  cl_uint strides[8];
  cl_uint rank;
};

/* Elements per work-item of a chunk. */
#define WHERE_PER_ITEM 16

struct where_kernel {
  struct ocl_kernel k[NUM_WHERE_KERNELS];
};

static void *where_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct where_kernel *k = calloc(1, sizeof(*k));
  TF_DataType dtype = TF_BOOL;
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  int p = dtype == TF_FLOAT ? W_FLOAT : dtype == TF_INT64 ? W_LONG : W_BYTE;
  ocl_kernel_init(&k->k[WK_COUNT], &where_programs[p], "where_count");
  ocl_kernel_init(&k->k[WK_OFFSETS], &where_programs[p], "where_offsets");
  ocl_kernel_init(&k->k[WK_WRITE], &where_programs[p], "where_write");
  ocl_tf.DeleteStatus(status);
  return k;
}

/* The coordinates of x's nonzero elements (x of n elements, 0 < n <=
 * INT32_MAX, dims of rank 1 to 8): int64 [total, rank], output `output`
 * of the op or, for output -1, a temp. The host waits once, for the total.
 * *coords NULL where total is 0. */
static bool where_run(struct ocl_op *op, struct ocl_kernel *wk,
                      const TF_Tensor *x, int64_t n, const int64_t *dims,
                      int rank, int output, TF_Tensor **coords,
                      uint64_t *total)
{
  int64_t out_dims[2];
  *coords = NULL;
  *total = 0;
  size_t local = ocl_kernel_fit_local(op, &wk[WK_WRITE], 256);
  size_t count_local = ocl_kernel_fit_local(op, &wk[WK_COUNT], 256);
  if (local == 0 || count_local == 0)
    return false;
  if (count_local < local)
    local = count_local;
  size_t p2 = 1; /* the local reductions want a power of two */
  while (p2 * 2 <= local)
    p2 *= 2;
  local = p2;
  uint32_t chunk = (uint32_t)(local * WHERE_PER_ITEM);
  uint32_t groups = (uint32_t)((n + chunk - 1) / chunk);
  TF_Tensor *counts = ocl_op_temp(op, TF_UINT32, groups);
  TF_Tensor *offsets =
      counts != NULL ? ocl_op_temp(op, TF_UINT64, (int64_t)groups + 1) : NULL;
  if (offsets == NULL)
    return false;
  size_t global = (size_t)groups * local;
  const struct ocl_arg count_args[] = {OCL_TENSOR(x), OCL_TENSOR(counts),
                                       OCL_INT(n), OCL_INT(chunk),
                                       OCL_LOCAL(local * sizeof(cl_uint))};
  const struct ocl_arg offset_args[] = {OCL_TENSOR(counts),
                                        OCL_TENSOR(offsets), OCL_INT(groups)};
  if (!ocl_launch(op, &wk[WK_COUNT], 1, &global, &local, count_args, 5) ||
      !ocl_launch_1d(op, &wk[WK_OFFSETS], 1, offset_args, 3) ||
      !ocl_op_read(op, offsets, (size_t)groups * sizeof(uint64_t), total,
                   sizeof(*total)))
    return false;
  out_dims[0] = (int64_t)*total;
  out_dims[1] = rank;
  TF_Tensor *out = output >= 0
                       ? ocl_op_output(op, output, TF_INT64, out_dims, 2)
                       : ocl_op_temp(op, TF_INT64, out_dims[0] * rank);
  if (out == NULL)
    return false;
  if (*total == 0)
    return true;
  struct where_dims d = {.rank = (cl_uint)rank};
  uint64_t stride = 1;
  for (int i = rank - 1; i >= 0; i--) {
    d.strides[i] = (cl_uint)stride;
    stride *= (uint64_t)dims[i];
  }
  const struct ocl_arg write_args[] = {
      OCL_TENSOR(x),  OCL_TENSOR(offsets),       OCL_TENSOR(out),
      OCL_INT(n),     OCL_INT(chunk),            OCL_BYTES(&d, sizeof(d)),
      OCL_LOCAL(local * sizeof(cl_uint))};
  if (!ocl_launch(op, &wk[WK_WRITE], 1, &global, &local, write_args, 7))
    return false;
  *coords = out;
  return true;
}

static void where_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct where_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK], out_dims[2];

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  int rank = x != NULL ? ocl_op_dims(&op, x, dims) : -1;
  if (rank < 0)
    goto out;
  /* TensorFlow's kernels take ranks 1 to 8, and say so. */
  if (rank < 1 || rank > 8) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "WhereOp : Unhandled input dimensions: %d", rank);
    goto out;
  }
  int64_t n = ocl_shape_elements(dims, rank);
  out_dims[1] = rank;
  if (n == 0) {
    out_dims[0] = 0;
    ocl_op_output(&op, 0, TF_INT64, out_dims, 2);
    goto out;
  }
  if (n > INT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "Where on OPENCL: %lld elements exceed its 32-bit indexing",
                (long long)n);
    goto out;
  }
  TF_Tensor *coords;
  uint64_t total;
  where_run(&op, k->k, x, n, dims, rank, 0, &coords, &total);
out:
  ocl_op_end(&op);
}

/* ---- Unique, UniqueWithCounts and their V2 ops -------------------------------- */

/* y: x's distinct values (V2 with an axis: slices along it) in the order
 * of their first occurrence (the order TensorFlow's kernels give), idx:
 * each element's (slice's) position in y, count (the WithCounts ops): each
 * value's occurrences. float, half and int32 values, out_idx int32 or
 * int64.
 *
 * Single values (Unique, and the V2 ops where every slice is one element)
 * are sorted with their indices by TopKV2's bitonic sort; segments of
 * equal values start where a value differs from the one before (NaN from
 * everything); Where's compaction lists the first occurrences in input
 * order and the segments in sorted order, and a binary search over the
 * segments gives every element its unique number. Slices of several
 * elements (the V2 ops along an axis; TensorFlow's GPU has no kernel for
 * them) each find the first slice equal to them, a quadratic walk that
 * stops at each pair's first difference. The host waits once for the
 * number of distinct values, as TensorFlow's GPU kernel waits. */
enum { UK_KEYS, UK_FLAGS, UK_VALUES, UK_INDEX, UK_COUNTS, UK_REP, UK_UID,
       UK_GATHER, UK_SLICE_INDEX, UK_SLICE_COUNTS, NUM_UNIQUE_KERNELS };

struct unique_kernel {
  bool with_counts, v2;
  TF_DataType idx_type;
  struct ocl_kernel sort[NUM_KERNELS];
  struct ocl_kernel uk[NUM_UNIQUE_KERNELS];
  struct ocl_kernel where[NUM_WHERE_KERNELS];
};

static void *unique_create_common(TF_OpKernelConstruction *ctx,
                                  bool with_counts, bool v2)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct unique_kernel *k = calloc(1, sizeof(*k));
  TF_DataType dtype = TF_FLOAT;
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  k->with_counts = with_counts;
  k->v2 = v2;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &dtype, status);
  if (ocl_tf.GetCode(status) == TF_OK)
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "out_idx", &k->idx_type,
                                            status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  const struct ocl_program *p =
      &programs[dtype == TF_HALF ? P_HALF : dtype == TF_INT32 ? P_INT : P_FLOAT];
  bool wide = k->idx_type == TF_INT64;
  static const char *const names[2][NUM_UNIQUE_KERNELS] = {
      {"unique_keys", "unique_flags", "unique_values", "unique_index_int",
       "unique_counts_int", "unique_slice_rep", "unique_slice_uid",
       "unique_slice_gather", "unique_slice_index_int",
       "unique_slice_counts_int"},
      {"unique_keys", "unique_flags", "unique_values", "unique_index_long",
       "unique_counts_long", "unique_slice_rep", "unique_slice_uid",
       "unique_slice_gather", "unique_slice_index_long",
       "unique_slice_counts_long"}};
  for (int i = 0; i < NUM_KERNELS; i++)
    ocl_kernel_init(&k->sort[i], p, kernel_names[i]);
  for (int i = 0; i < NUM_UNIQUE_KERNELS; i++)
    ocl_kernel_init(&k->uk[i], p, names[wide][i]);
  ocl_kernel_init(&k->where[WK_COUNT], &where_programs[W_BYTE], "where_count");
  ocl_kernel_init(&k->where[WK_OFFSETS], &where_programs[W_BYTE],
                  "where_offsets");
  ocl_kernel_init(&k->where[WK_WRITE], &where_programs[W_BYTE], "where_write");
  ocl_tf.DeleteStatus(status);
  return k;
}

static void *unique_create(TF_OpKernelConstruction *ctx)
{
  return unique_create_common(ctx, false, false);
}
static void *unique_with_counts_create(TF_OpKernelConstruction *ctx)
{
  return unique_create_common(ctx, true, false);
}
static void *unique_v2_create(TF_OpKernelConstruction *ctx)
{
  return unique_create_common(ctx, false, true);
}
static void *unique_with_counts_v2_create(TF_OpKernelConstruction *ctx)
{
  return unique_create_common(ctx, true, true);
}

/* The outputs once the number of distinct values (slices) is known: y of
 * x's dims with dims[axis] = uniques, idx of `slices`, count. */
static bool unique_outputs(struct ocl_op *op, const struct unique_kernel *k,
                           TF_DataType dtype, const int64_t *x_dims,
                           int rank, int axis, int64_t slices,
                           int64_t uniques, TF_Tensor **y, TF_Tensor **idx,
                           TF_Tensor **count)
{
  int64_t y_dims[OCL_MAX_RANK], u_dims[1] = {uniques};
  memcpy(y_dims, x_dims, sizeof(int64_t) * (size_t)rank);
  y_dims[axis] = uniques;
  *count = NULL;
  *y = ocl_op_output(op, 0, dtype, y_dims, rank);
  *idx = *y != NULL ? ocl_op_output(op, 1, k->idx_type, &slices, 1) : NULL;
  if (*idx == NULL)
    return false;
  if (k->with_counts &&
      (*count = ocl_op_output(op, 2, k->idx_type, u_dims, 1)) == NULL)
    return false;
  return true;
}

/* Single values: x's `n` elements (n > 0). */
static void unique_values_run(struct ocl_op *op, struct unique_kernel *k,
                              const TF_Tensor *x, const int64_t *x_dims,
                              int rank, int axis, int64_t n)
{
  uint32_t npad = 2;
  while (npad < n)
    npad *= 2;
  int64_t flat[1] = {n};
  TF_Tensor *keys = ocl_op_temp(op, TF_UINT64, npad);
  TF_Tensor *heads = keys != NULL ? ocl_op_temp(op, TF_UINT8, n) : NULL;
  TF_Tensor *firsts = heads != NULL ? ocl_op_temp(op, TF_UINT8, n) : NULL;
  TF_Tensor *uid = firsts != NULL ? ocl_op_temp(op, TF_UINT32, n) : NULL;
  if (uid == NULL)
    return;
  const struct ocl_arg key_args[] = {OCL_TENSOR(x), OCL_TENSOR(keys),
                                     OCL_INT(n), OCL_INT(npad)};
  const struct ocl_arg flag_args[] = {OCL_TENSOR(x), OCL_TENSOR(keys),
                                      OCL_TENSOR(heads), OCL_TENSOR(firsts),
                                      OCL_INT(n)};
  TF_Tensor *first_at, *starts, *y, *idx, *count;
  uint64_t uniques, segments;
  if (!ocl_launch_1d(op, &k->uk[UK_KEYS], npad, key_args, 4) ||
      !sort_rows(op, k->sort, keys, 1, npad) ||
      !ocl_launch_1d(op, &k->uk[UK_FLAGS], (size_t)n, flag_args, 5) ||
      !where_run(op, k->where, firsts, n, flat, 1, -1, &first_at,
                 &uniques) ||
      !where_run(op, k->where, heads, n, flat, 1, -1, &starts, &segments) ||
      !unique_outputs(op, k, ocl_tf.TensorType(x), x_dims, rank, axis, n,
                      (int64_t)uniques, &y, &idx, &count))
    return;
  /* Every element opens or joins a segment: there is one per distinct
   * value, whichever list counts them. */
  if (uniques != segments || uniques == 0)
    return (void)ocl_op_fail(op, TF_INTERNAL,
                             "Unique on OPENCL: %llu first occurrences but "
                             "%llu segments",
                             (unsigned long long)uniques,
                             (unsigned long long)segments);
  const struct ocl_arg value_args[] = {OCL_TENSOR(x), OCL_TENSOR(first_at),
                                       OCL_TENSOR(y), OCL_TENSOR(uid),
                                       OCL_INT(uniques)};
  const struct ocl_arg index_args[] = {OCL_TENSOR(keys), OCL_TENSOR(starts),
                                       OCL_TENSOR(uid), OCL_TENSOR(idx),
                                       OCL_INT(n), OCL_INT(uniques)};
  if (!ocl_launch_1d(op, &k->uk[UK_VALUES], uniques, value_args, 5) ||
      !ocl_launch_1d(op, &k->uk[UK_INDEX], (size_t)n, index_args, 6) ||
      count == NULL)
    return;
  const struct ocl_arg count_args[] = {OCL_TENSOR(keys), OCL_TENSOR(starts),
                                       OCL_TENSOR(uid), OCL_TENSOR(count),
                                       OCL_INT(n), OCL_INT(uniques)};
  ocl_launch_1d(op, &k->uk[UK_COUNTS], uniques, count_args, 6);
}

/* Slices: x as [outer, slices, inner] (slices > 0). */
static void unique_slices_run(struct ocl_op *op, struct unique_kernel *k,
                              const TF_Tensor *x, const int64_t *x_dims,
                              int rank, int axis, const int64_t *sizes)
{
  int64_t slices = sizes[1], flat[1] = {slices};
  TF_Tensor *rep = ocl_op_temp(op, TF_UINT32, slices);
  TF_Tensor *firsts = rep != NULL ? ocl_op_temp(op, TF_UINT8, slices) : NULL;
  TF_Tensor *uid = firsts != NULL ? ocl_op_temp(op, TF_UINT32, slices) : NULL;
  TF_Tensor *tally = uid != NULL ? ocl_op_temp(op, TF_UINT32, slices) : NULL;
  if (tally == NULL)
    return;
  const struct ocl_arg rep_args[] = {OCL_TENSOR(x), OCL_TENSOR(rep),
                                     OCL_TENSOR(firsts), OCL_INT(sizes[0]),
                                     OCL_INT(slices), OCL_INT(sizes[2])};
  TF_Tensor *first_at, *y, *idx, *count;
  uint64_t uniques;
  static const uint32_t zero = 0;
  if (!ocl_launch_1d(op, &k->uk[UK_REP], (size_t)slices, rep_args, 6) ||
      !where_run(op, k->where, firsts, slices, flat, 1, -1, &first_at,
                 &uniques) ||
      !unique_outputs(op, k, ocl_tf.TensorType(x), x_dims, rank, axis,
                      slices, (int64_t)uniques, &y, &idx, &count))
    return;
  if (uniques == 0)
    return (void)ocl_op_fail(op, TF_INTERNAL,
                             "Unique on OPENCL: no first occurrence among "
                             "%lld slices",
                             (long long)slices);
  uint64_t total = (uint64_t)sizes[0] * uniques * (uint64_t)sizes[2];
  const struct ocl_arg uid_args[] = {OCL_TENSOR(first_at), OCL_TENSOR(uid),
                                     OCL_INT(uniques)};
  const struct ocl_arg gather_args[] = {
      OCL_TENSOR(x),     OCL_TENSOR(first_at), OCL_TENSOR(y),
      OCL_INT(slices),   OCL_INT(uniques),     OCL_INT(sizes[2]),
      OCL_LONG(total)};
  const struct ocl_arg index_args[] = {OCL_TENSOR(rep), OCL_TENSOR(uid),
                                       OCL_TENSOR(idx), OCL_TENSOR(tally),
                                       OCL_INT(slices)};
  if (!ocl_launch_1d(op, &k->uk[UK_UID], uniques, uid_args, 3) ||
      !ocl_launch_1d(op, &k->uk[UK_GATHER], (size_t)total, gather_args, 7) ||
      !ocl_op_fill(op, tally, 0, &zero, sizeof(zero),
                   (size_t)slices * sizeof(uint32_t)) ||
      !ocl_launch_1d(op, &k->uk[UK_SLICE_INDEX], (size_t)slices, index_args,
                     5) ||
      count == NULL)
    return;
  const struct ocl_arg count_args[] = {OCL_TENSOR(tally), OCL_TENSOR(count),
                                       OCL_INT(uniques)};
  ocl_launch_1d(op, &k->uk[UK_SLICE_COUNTS], uniques, count_args, 3);
}

static void unique_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct unique_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK];

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *axis_t = x != NULL && k->v2 ? ocl_op_input(&op, 1) : NULL;
  int rank = x != NULL && (!k->v2 || axis_t != NULL)
                 ? ocl_op_dims(&op, x, dims)
                 : -1;
  if (rank < 0)
    goto out;
  int64_t elements = ocl_shape_elements(dims, rank);
  if (elements > INT32_MAX) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "unique does not support input tensors larger than %d "
                "elements",
                INT32_MAX);
    goto out;
  }
  /* [outer, slices, inner] around the axis (0 for single values). */
  int64_t sizes[3] = {1, elements, 1};
  int axis = 0;
  bool single = true;
  if (k->v2 && ocl_tf.NumDims(axis_t) != 1) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "axis expects a 1D vector.");
    goto out;
  }
  int64_t axis_count = k->v2 ? ocl_tf.TensorElementCount(axis_t) : 0;
  if (axis_count > 1) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "axis does not support input tensors larger than 1 elements");
    goto out;
  }
  if (axis_count == 0) {
    if (rank != 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "unique expects a 1D vector.");
      goto out;
    }
  } else {
    int64_t a = ocl_host_int(axis_t, 0);
    a = a < 0 ? a + rank : a;
    if (a < 0 || a >= rank) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "axis has to be between [0, %d)",
                  rank);
      goto out;
    }
    axis = (int)a;
    sizes[0] = ocl_shape_elements(dims, axis);
    sizes[1] = dims[axis];
    sizes[2] = ocl_shape_elements(dims + axis + 1, rank - axis - 1);
    single = sizes[0] == 1 && sizes[2] == 1;
  }
  /* The sort pads to a power of two of 32-bit positions. */
  if (single && sizes[1] > ((int64_t)1 << 30)) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "Unique on OPENCL: %lld elements exceed its 32-bit sort",
                (long long)sizes[1]);
    goto out;
  }
  if (sizes[1] == 0) {
    TF_Tensor *y, *idx, *count;
    unique_outputs(&op, k, ocl_tf.TensorType(x), dims, rank, axis, 0, 0, &y,
                   &idx, &count);
    goto out;
  }
  if (single)
    unique_values_run(&op, k, x, dims, rank, axis, sizes[1]);
  else
    unique_slices_run(&op, k, x, dims, rank, axis, sizes);
out:
  ocl_op_end(&op);
}

static void unique_delete(void *kernel) { free(kernel); }

/* ---- InTopKV2 ------------------------------------------------------------- */

OCL_PROGRAM_TABLE
static const struct ocl_program in_top_k_programs[2] = {
    {"in_top_k_int", ocl_cl_source_select, "-DIN_TOP_K -DTARGET_T=int"},
    {"in_top_k_long", ocl_cl_source_select, "-DIN_TOP_K -DTARGET_T=long"},
};

struct in_top_k_kernel {
  struct ocl_kernel k;
};

static void *in_top_k_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct in_top_k_kernel *k = calloc(1, sizeof(*k));
  TF_DataType dtype = TF_INT32;
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  ocl_kernel_init(&k->k, &in_top_k_programs[dtype == TF_INT64], "in_top_k");
  ocl_tf.DeleteStatus(status);
  return k;
}

static void in_top_k_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct in_top_k_kernel *k = kernel;
  struct ocl_op op;
  char shape[160];
  int64_t dims[OCL_MAX_RANK];

  ocl_op_begin(&op, ctx);
  TF_Tensor *predictions = ocl_op_input(&op, 0);
  TF_Tensor *targets = predictions != NULL ? ocl_op_input(&op, 1) : NULL;
  TF_Tensor *k_in = targets != NULL ? ocl_op_input(&op, 2) : NULL;
  if (k_in == NULL)
    goto out;
  /* TensorFlow's checks, in its order. */
  if (ocl_tf.NumDims(k_in) != 0) {
    int rank = ocl_op_dims(&op, k_in, dims);
    ocl_shape_format(dims, rank < 0 ? 0 : rank, shape, sizeof(shape));
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "k must be 0-D, got shape %s",
                shape);
    goto out;
  }
  if (ocl_tf.NumDims(predictions) != 2) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "predictions must be 2-dimensional");
    goto out;
  }
  if (ocl_tf.NumDims(targets) != 1) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "targets must be 1-dimensional");
    goto out;
  }
  int64_t rows = ocl_tf.Dim(predictions, 0);
  int64_t classes = ocl_tf.Dim(predictions, 1);
  if (rows != ocl_tf.Dim(targets, 0)) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "First dimension of predictions %lld must match length of "
                "targets %lld",
                (long long)rows, (long long)ocl_tf.Dim(targets, 0));
    goto out;
  }
  TF_Tensor *out = ocl_op_output(&op, 0, TF_BOOL, &rows, 1);
  if (out == NULL || rows == 0)
    goto out;
  if (classes > UINT32_MAX || rows > UINT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "InTopKV2 on OPENCL: [%lld, %lld] exceeds its 32-bit indexing",
                (long long)rows, (long long)classes);
    goto out;
  }
  size_t local = ocl_kernel_fit_local(&op, &k->k, 256);
  if (local == 0)
    goto out;
  size_t p2 = 1; /* a power of two for the reduction, no larger than needed */
  while (p2 * 2 <= local && p2 < (size_t)classes)
    p2 *= 2;
  local = p2;
  size_t global = (size_t)rows * local;
  const struct ocl_arg args[] = {
      OCL_TENSOR(predictions), OCL_TENSOR(targets),
      OCL_TENSOR(k_in),        OCL_TENSOR(out),
      OCL_INT(classes),        OCL_LOCAL(local * sizeof(cl_uint)),
      OCL_LOCAL(local * sizeof(cl_uint))};
  ocl_launch(&op, &k->k, 1, &global, &local, args, 7);
out:
  ocl_op_end(&op);
}

void ocl_register_select_kernels(void)
{
  for (int t = 0; t < 2; t++)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "InTopKV2",
        .create = in_top_k_create,
        .compute = in_top_k_compute,
        .destroy = topk_delete,
        .type_attrs = {"T"},
        .types = {t ? TF_INT64 : TF_INT32},
    });
  /* TensorFlow's GPU Where: bool, int8, uint8, int64, float (float64 and
   * complex are left to the CPU here). */
  static const TF_DataType where_types[] = {TF_BOOL, TF_INT8, TF_UINT8,
                                            TF_INT64, TF_FLOAT};
  for (size_t i = 0; i < sizeof(where_types) / sizeof(where_types[0]); i++)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "Where",
        .create = where_create,
        .compute = where_compute,
        .destroy = topk_delete,
        .type_attrs = {"T"},
        .types = {where_types[i]},
    });

  static const char *const host_args[] = {"k", NULL};
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_INT32};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "TopKV2",
        .create = topk_create,
        .compute = topk_compute,
        .destroy = topk_delete,
        .type_attrs = {"T", "index_type"},
        .types = {types[i], TF_INT32},
        .host_args = host_args,
    });
  /* TensorFlow's GPU Unique and UniqueWithCounts, for the values whose
   * keys fit the sort, and the V2 ops with them. */
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    for (int w = 0; w < 2; w++) {
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = "Unique",
          .create = unique_create,
          .compute = unique_compute,
          .destroy = unique_delete,
          .type_attrs = {"T", "out_idx"},
          .types = {types[i], w ? TF_INT64 : TF_INT32},
      });
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = "UniqueWithCounts",
          .create = unique_with_counts_create,
          .compute = unique_compute,
          .destroy = unique_delete,
          .type_attrs = {"T", "out_idx"},
          .types = {types[i], w ? TF_INT64 : TF_INT32},
      });
      /* TensorFlow's CPU alone has the V2 ops; the axis lives in host
       * memory. */
      static const char *const axis_arg[] = {"axis", NULL};
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = "UniqueV2",
          .create = unique_v2_create,
          .compute = unique_compute,
          .destroy = unique_delete,
          .type_attrs = {"T", "out_idx"},
          .types = {types[i], w ? TF_INT64 : TF_INT32},
          .host_args = axis_arg,
      });
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = "UniqueWithCountsV2",
          .create = unique_with_counts_v2_create,
          .compute = unique_compute,
          .destroy = unique_delete,
          .type_attrs = {"T", "out_idx"},
          .types = {types[i], w ? TF_INT64 : TF_INT32},
          .host_args = axis_arg,
      });
    }
}
