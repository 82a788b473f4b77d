/* Sorted segment reductions: SegmentSum, SegmentMean, SegmentProd,
 * SegmentMin, SegmentMax (tf.math.segment_*), and SparseSegmentSum,
 * SparseSegmentMean, SparseSegmentSqrtN with their WithNumSegments forms
 * (tf.sparse.segment_*, the embedding lookups of
 * tf.nn.embedding_lookup_sparse), as segment_reduction_ops_impl.h; the
 * gradients SparseSegment{Sum,Mean,SqrtN}Grad and their V2 forms (the
 * rows the indices name, sorted, and those row numbers); and Bincount,
 * DenseBincount (bincount_op.cc).
 *
 * Registration follows TensorFlow's GPU kernels (read from the 2.19.1
 * wheel's registry): float, half, bfloat16 and float64; Tindices,
 * Tidx and Tsegmentids int32 or int64; num_segments in host memory.
 *
 * The output's row count comes from the last segment id (or num_segments),
 * so the host waits once, as TensorFlow's GPU kernels do: seg_check
 * (segment.cl) records the last id and the first position TensorFlow's CPU
 * kernel would reject (ids decreasing or negative, an index out of range),
 * and one read brings both back. TensorFlow's GPU kernels check less (its
 * sparse kernels take any ids); these fail as its CPU kernels do, with
 * their messages, which the host finds by replaying the CPU kernel's loop
 * over the ids, read back only then.
 *
 * Empty segments get TensorFlow's value: 0, and 1 for SegmentProd.
 * SegmentMin/Max treat NaN as the running TensorFlow's CPU kernel does
 * (2.22 changed it; segment.cl). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_segment[];

enum seg_type { ST_FLOAT, ST_HALF, ST_BF16, ST_DOUBLE, NUM_TYPES };
/* Dense (rows in order), sparse with int32 or int64 indices. */
enum seg_form { F_DENSE, F_IDX32, F_IDX64, NUM_FORMS };
enum { ID32, ID64, NUM_ID_WIDTHS };

#define SEG_FORMS(name, defines)                                            \
  {                                                                         \
    {"segment_" name, ocl_cl_source_segment, defines},                      \
        {"segment_" name "_sp32", ocl_cl_source_segment,                    \
         defines " -DSPARSE"},                                              \
        {"segment_" name "_sp64", ocl_cl_source_segment,                    \
         defines " -DSPARSE -DIDX_IS_LONG"},                                \
  }
#define SEG_TYPE(name, defines)                                             \
  {SEG_FORMS(name, defines), SEG_FORMS(name "_id64", defines " -DID_IS_LONG")}

OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_TYPES][NUM_ID_WIDTHS][NUM_FORMS] =
    {
        [ST_FLOAT] = SEG_TYPE("float", "-DT_IS_FLOAT"),
        [ST_HALF] = SEG_TYPE("half", "-DT_IS_HALF"),
        [ST_BF16] = SEG_TYPE("bf16", "-DT_IS_BF16"),
        [ST_DOUBLE] = SEG_TYPE("double", "-DT_IS_DOUBLE"),
};

enum seg_reduce { R_SUM, R_MEAN, R_SQRTN, R_PROD, R_MIN, R_MAX };
static const char *const reduce_names[] = {"seg_sum",  "seg_mean",
                                           "seg_sqrtn", "seg_prod",
                                           "seg_min",  "seg_max"};

struct seg_op {
  const char *op;
  enum seg_reduce reduce;
  bool sparse;
  bool num_segments; /* input 3 */
  bool grad;         /* SparseSegment*Grad: input 3 is output_dim0 */
  bool v2;           /* SparseSegment*GradV2: dense_output_dim0, 2 outputs */
};

static const struct seg_op seg_ops[] = {
    {"SegmentSum", R_SUM, false, false, false, false},
    {"SegmentMean", R_MEAN, false, false, false, false},
    {"SegmentProd", R_PROD, false, false, false, false},
    {"SegmentMin", R_MIN, false, false, false, false},
    {"SegmentMax", R_MAX, false, false, false, false},
    {"SparseSegmentSum", R_SUM, true, false, false, false},
    {"SparseSegmentMean", R_MEAN, true, false, false, false},
    {"SparseSegmentSqrtN", R_SQRTN, true, false, false, false},
    {"SparseSegmentSumWithNumSegments", R_SUM, true, true, false, false},
    {"SparseSegmentMeanWithNumSegments", R_MEAN, true, true, false, false},
    {"SparseSegmentSqrtNWithNumSegments", R_SQRTN, true, true, false, false},
    {"SparseSegmentSumGrad", R_SUM, true, false, true, false},
    {"SparseSegmentMeanGrad", R_MEAN, true, false, true, false},
    {"SparseSegmentSqrtNGrad", R_SQRTN, true, false, true, false},
    {"SparseSegmentSumGradV2", R_SUM, true, false, true, true},
    {"SparseSegmentMeanGradV2", R_MEAN, true, false, true, true},
    {"SparseSegmentSqrtNGradV2", R_SQRTN, true, false, true, true},
};
#define NUM_SEG_OPS ((int)(sizeof(seg_ops) / sizeof(seg_ops[0])))

enum { K_COLS, K_BLOCKS, K_CHECK, K_MARK, K_SCAN, K_WRITE, K_GROUP,
       K_COUNT, NUM_KERNELS };
/* The gradients': K_COLS is grad_add, K_BLOCKS grad_cast, K_CHECK
 * grad_check; V2's unique indices: uniq_mark, uniq_scan, uniq_write. */

struct seg_kernel {
  const struct seg_op *op;
  TF_DataType dtype;
  TF_DataType id_type;  /* Tindices / Tsegmentids */
  TF_DataType idx_type; /* Tidx (sparse) */
  /* Min/Max: a NaN anywhere in a segment makes it NaN (TensorFlow 2.22 on);
   * before, a later element replaces a NaN accumulator (segment.cl). */
  int nan_sticky;
  struct ocl_kernel k[NUM_KERNELS];
};

/* seg_check's state: the first bad position (int) and the last id (long at
 * byte 8). */
struct check_state {
  int32_t first_bad;
  int32_t pad;
  int64_t last_id;
};

/* segment.cl's BLOCK. */
#define BLOCK 16
/* GPUs give a segment a work-group per column (seg_<op>_group) where rows
 * are narrower than GROUP_MAX_W and segments hold GROUP_MIN_LEN ids or
 * more on average. */
#define GROUP_MAX_W 16
#define GROUP_MIN_LEN 32
/* Positions are int in seg_check (atomic_min): 2^31 - 1 ids at most. */
#define MAX_IDS ((int64_t)INT32_MAX)

static enum seg_type seg_type_of(TF_DataType dtype)
{
  switch (dtype) {
  case TF_HALF: return ST_HALF;
  case TF_BFLOAT16: return ST_BF16;
  case TF_DOUBLE: return ST_DOUBLE;
  default: return ST_FLOAT;
  }
}

/* ---- Kernel callbacks ------------------------------------------------------ */

static void *seg_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct seg_op *op = &seg_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct seg_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  k->nan_sticky = ocl_tf_minor_version() >= 22;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  ocl_tf.OpKernelConstruction_GetAttrType(
      ctx, op->sparse ? "Tsegmentids" : "Tindices", &k->id_type, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->idx_type = TF_INT32;
  if (op->sparse) {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "Tidx", &k->idx_type,
                                            status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  enum seg_form form = !op->sparse               ? F_DENSE
                       : k->idx_type == TF_INT64 ? F_IDX64
                                                 : F_IDX32;
  const struct ocl_program *p =
      &programs[seg_type_of(k->dtype)][k->id_type == TF_INT64][form];
  const char *r = reduce_names[op->reduce];
  bool named = op->grad ? ocl_kernel_init(&k->k[K_COLS], p, "grad_add") &&
                              ocl_kernel_init(&k->k[K_BLOCKS], p,
                                              "grad_cast") &&
                              ocl_kernel_init(&k->k[K_CHECK], p,
                                              "grad_check") &&
                              ocl_kernel_init(&k->k[K_MARK], p, "uniq_mark") &&
                              ocl_kernel_init(&k->k[K_SCAN], p, "uniq_scan") &&
                              ocl_kernel_init(&k->k[K_WRITE], p,
                                              "uniq_write") &&
                              ocl_kernel_init(&k->k[K_COUNT], p, "grad_count")
                        : ocl_kernel_initf(&k->k[K_COLS], p, "%s_cols", r) &&
                              ocl_kernel_initf(&k->k[K_BLOCKS], p,
                                               "%s_blocks", r) &&
                              ocl_kernel_init(&k->k[K_CHECK], p,
                                              "seg_check") &&
                              ocl_kernel_initf(&k->k[K_GROUP], p, "%s_group",
                                               r);
  if (!named) {
    ocl_set_status(status, TF_INTERNAL, "%s: kernel name too long", op->op);
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void shape_string(const TF_Tensor *t, char *buf, int len)
{
  int64_t dims[OCL_MAX_RANK];
  int rank = ocl_tf.NumDims(t);
  for (int i = 0; i < rank && i < OCL_MAX_RANK; i++)
    dims[i] = ocl_tf.Dim(t, i);
  ocl_shape_format(dims, rank < OCL_MAX_RANK ? rank : OCL_MAX_RANK, buf, len);
}

/* Element i of a device vector of int32 or int64, from a host copy. */
static int64_t host_id(const void *data, TF_DataType type, int64_t i)
{
  return type == TF_INT64 ? ((const int64_t *)data)[i]
                          : ((const int32_t *)data)[i];
}

/* seg_check found a position TensorFlow rejects: its CPU kernel's loop,
 * replayed over host copies of the ids (and indices), gives the message. */
static void report_bad_input(struct seg_kernel *k, struct ocl_op *op,
                             const TF_Tensor *ids_t, const TF_Tensor *idx_t,
                             int64_t m, int64_t rows, int64_t output_rows)
{
  size_t id_size = ocl_tf.DataTypeSize(k->id_type);
  size_t idx_size = ocl_tf.DataTypeSize(k->idx_type);
  void *ids = malloc((size_t)m * id_size);
  void *idx = idx_t != NULL ? malloc((size_t)m * idx_size) : NULL;
  if (ids == NULL || (idx_t != NULL && idx == NULL)) {
    ocl_op_fail(op, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto out;
  }
  if (!ocl_op_read(op, ids_t, 0, ids, (size_t)m * id_size) ||
      (idx_t != NULL &&
       !ocl_op_read(op, idx_t, 0, idx, (size_t)m * idx_size)))
    goto out;
  int64_t start = 0, end = 1, out_index = host_id(ids, k->id_type, 0);
  for (;;) {
    int64_t next = 0;
    if (end < m) {
      next = host_id(ids, k->id_type, end);
      if (out_index == next) {
        end++;
        continue;
      }
      if (!(out_index < next)) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT, "segment ids are not increasing");
        goto out;
      }
    }
    if (out_index < 0 || out_index >= output_rows) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Segment id %lld out of range [0, %lld), possibly because "
                  "'segment_ids' input is not sorted.",
                  (long long)out_index, (long long)output_rows);
      goto out;
    }
    for (int64_t i = start; idx != NULL && i < end; i++) {
      int64_t row = host_id(idx, k->idx_type, i);
      if (row < 0 || row >= rows) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "Bad: indices[%lld] == %lld out of range [0, %lld)",
                    (long long)i, (long long)row, (long long)rows);
        goto out;
      }
    }
    start = end;
    end++;
    out_index = next;
    if (end > m)
      break;
  }
  ocl_op_fail(op, TF_INTERNAL, "%s: the device saw bad segment ids the host "
              "does not", k->op->op);
out:
  free(ids);
  free(idx);
}


/* SparseSegment{Sum,Mean,SqrtN}Grad: TensorFlow's checks in its order
 * (SparseSegmentGradOpBase, then the CPU functor's: the last id against
 * grad's rows, every segment id, then every index), from one read of
 * grad_check's findings. */
static void grad_compute(struct seg_kernel *k, struct ocl_op *op)
{
  int64_t dims[OCL_MAX_RANK];
  TF_Tensor *in[4];
  bool v2 = k->op->v2;
  for (int i = 0; i < 4; i++)
    if ((in[i] = ocl_op_input(op, i)) == NULL)
      return;
  TF_Tensor *grad = in[0], *idx = in[1], *ids = in[2];
  if (ocl_tf.NumDims(idx) != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "indices should be a vector.");
    return;
  }
  if (ocl_tf.NumDims(ids) != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "segment_ids should be a vector.");
    return;
  }
  if (ocl_tf.NumDims(in[3]) != 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s should be a scalar.",
                v2 ? "dense_output_dim0" : "output_dim0");
    return;
  }
  int64_t n = ocl_tf.TensorElementCount(idx);
  if (n != ocl_tf.TensorElementCount(ids)) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "segment_ids and indices should have same size.");
    return;
  }
  int rank = ocl_op_dims(op, grad, dims);
  if (rank < 0)
    return;
  if (rank < 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "Shape must be at least rank 1");
    return;
  }
  int64_t rows = ocl_host_int(in[3], 0);
  if (rows < 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Expected a non-negative size, got %lld", (long long)rows);
    return;
  }
  if (n > MAX_IDS) {
    ocl_op_fail(op, TF_UNIMPLEMENTED,
                "%s on OPENCL: %lld segment ids exceed its 32-bit positions",
                k->op->op, (long long)n);
    return;
  }
  int64_t segments = dims[0];
  int64_t w = ocl_shape_elements(dims + 1, rank - 1);
  int64_t elements = 0;
  if (!ocl_op_dim_product(op, rows, w, &elements))
    return;
  /* V2 with nothing to do: empty outputs, as TensorFlow's. */
  if (v2 && (rows == 0 || n == 0)) {
    dims[0] = 0;
    int64_t zero_dim = 0;
    if (ocl_op_output(op, 0, k->dtype, dims, rank) != NULL)
      ocl_op_output(op, 1, k->idx_type, &zero_dim, 1);
    return;
  }
  TF_Tensor *y = NULL;
  if (!v2) {
    dims[0] = rows;
    y = ocl_op_output(op, 0, k->dtype, dims, rank);
    if (y == NULL || elements == 0)
      return;
  }
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  if (k->dtype == TF_DOUBLE && !info->has_fp64) {
    ocl_op_fail(op, TF_UNIMPLEMENTED,
                "%s of float64 needs cl_khr_fp64, which OpenCL device %d "
                "lacks",
                k->op->op, info->ordinal);
    return;
  }
  uint64_t zero = 0;
  TF_Tensor *acc = NULL;
  if (!v2) {
    acc = k->dtype == TF_HALF || k->dtype == TF_BFLOAT16
              ? ocl_op_temp(op, TF_FLOAT, elements)
              : y;
    if (acc == NULL ||
        !ocl_op_fill(op, acc, 0, &zero, 1, ocl_tf.TensorByteSize(acc)))
      return;
    if (n == 0)
      goto cast;
  }
  struct {
    int32_t bad_id, bad_idx;
    int64_t last_id, unique;
  } st = {INT32_MAX, INT32_MAX, 0, 0};
  TF_Tensor *state = ocl_op_temp(op, TF_INT64, 3);
  const struct ocl_arg check_args[] = {OCL_TENSOR(ids), OCL_TENSOR(idx),
                                       OCL_TENSOR(state), OCL_INT(n),
                                       OCL_LONG(segments), OCL_LONG(rows)};
  if (state == NULL || !ocl_op_fill(op, state, 0, &st, 8, 8) ||
      !ocl_launch_1d(op, &k->k[K_CHECK], (size_t)n, check_args, 6))
    return;
  /* V2: the rows indices name, their output positions and count, found
   * before the one read. */
  TF_Tensor *mark = NULL, *pos = NULL;
  size_t scan_local = 0;
  if (v2) {
    mark = ocl_op_temp(op, TF_INT32, rows);
    pos = mark != NULL ? ocl_op_temp(op, TF_INT32, rows) : NULL;
    scan_local = pos != NULL ? ocl_kernel_fit_local(op, &k->k[K_SCAN], 256)
                             : 0;
    if (scan_local == 0 ||
        !ocl_op_fill(op, mark, 0, &zero, 1, ocl_tf.TensorByteSize(mark)))
      return;
    const struct ocl_arg mark_args[] = {OCL_TENSOR(idx), OCL_TENSOR(mark),
                                        OCL_INT(n), OCL_INT(rows)};
    const struct ocl_arg scan_args[] = {
        OCL_TENSOR(mark), OCL_TENSOR(pos), OCL_TENSOR(state), OCL_INT(rows),
        OCL_LOCAL(scan_local * sizeof(cl_int))};
    if (!ocl_launch_1d(op, &k->k[K_MARK], (size_t)n, mark_args, 4) ||
        !ocl_launch(op, &k->k[K_SCAN], 1, &scan_local, &scan_local,
                    scan_args, 5))
      return;
  }
  if (!ocl_op_read(op, state, 0, &st, sizeof(st)))
    return;
  if (st.last_id + 1 > segments) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "Invalid number of segments");
    return;
  }
  /* V1 checks every segment id first (its scaling factors), V2 each
   * position's index, then its id. */
  bool id_first = !v2 || st.bad_id < st.bad_idx;
  if (st.bad_id != INT32_MAX && id_first) {
    size_t size = ocl_tf.DataTypeSize(k->id_type);
    uint8_t raw[8] = {0};
    if (ocl_op_read(op, ids, (size_t)st.bad_id * size, raw, size))
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Segment id %lld out of range [0, %lld).",
                  (long long)host_id(raw, k->id_type, 0),
                  (long long)segments);
    return;
  }
  if (st.bad_idx != INT32_MAX) {
    size_t size = ocl_tf.DataTypeSize(k->idx_type);
    uint8_t raw[8] = {0};
    if (ocl_op_read(op, idx, (size_t)st.bad_idx * size, raw, size))
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "Index %lld out of range [0, %lld).",
                  (long long)host_id(raw, k->idx_type, 0), (long long)rows);
    return;
  }
  if (v2) {
    int64_t unique = st.unique;
    dims[0] = unique;
    if (!ocl_op_dim_product(op, unique, w, &elements))
      return;
    y = ocl_op_output(op, 0, k->dtype, dims, rank);
    TF_Tensor *uniq =
        y != NULL ? ocl_op_output(op, 1, k->idx_type, &unique, 1) : NULL;
    if (uniq == NULL)
      return;
    const struct ocl_arg write_args[] = {OCL_TENSOR(mark), OCL_TENSOR(pos),
                                         OCL_TENSOR(uniq), OCL_INT(rows)};
    if (!ocl_launch_1d(op, &k->k[K_WRITE], (size_t)rows, write_args, 4))
      return;
    if (elements == 0)
      return;
    acc = k->dtype == TF_HALF || k->dtype == TF_BFLOAT16
              ? ocl_op_temp(op, TF_FLOAT, elements)
              : y;
    if (acc == NULL ||
        !ocl_op_fill(op, acc, 0, &zero, 1, ocl_tf.TensorByteSize(acc)))
      return;
  }
  size_t local_max = ocl_kernel_fit_local(op, &k->k[K_COLS], 256);
  if (local_max == 0)
    return;
  size_t local[2] = {1, 1};
  while (local[0] < local_max && (int64_t)local[0] < w)
    local[0] *= 2;
  size_t global[2] = {((size_t)w + local[0] - 1) / local[0] * local[0],
                      (size_t)n};
  int mode = k->op->reduce == R_MEAN ? 1 : k->op->reduce == R_SQRTN ? 2 : 0;
  /* Mean and SqrtN scale by the size of each segment. */
  TF_Tensor *counts = idx;
  if (mode != 0) {
    counts = ocl_op_temp(op, TF_INT32, segments);
    const struct ocl_arg count_args[] = {OCL_TENSOR(ids), OCL_TENSOR(counts),
                                         OCL_INT(n), OCL_LONG(segments)};
    if (counts == NULL ||
        !ocl_op_fill(op, counts, 0, &zero, 1,
                     ocl_tf.TensorByteSize(counts)) ||
        !ocl_launch_1d(op, &k->k[K_COUNT], (size_t)n, count_args, 4))
      return;
  }
  const struct ocl_arg add_args[] = {
      OCL_TENSOR(grad),   OCL_TENSOR(idx), OCL_TENSOR(ids),
      OCL_TENSOR(acc),    OCL_LONG(n),     OCL_LONG(w),
      OCL_INT(mode),      OCL_TENSOR(counts),
      OCL_TENSOR(v2 ? pos : idx),          OCL_INT(v2)};
  if (!ocl_launch(op, &k->k[K_COLS], 2, global, local, add_args, 10))
    return;
cast:
  if (acc != y) {
    const struct ocl_arg cast_args[] = {OCL_TENSOR(acc), OCL_TENSOR(y),
                                        OCL_LONG(elements)};
    ocl_launch_1d(op, &k->k[K_BLOCKS], (size_t)elements, cast_args, 3);
  }
}

static void seg_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct seg_kernel *k = kernel;
  const struct seg_op *sop = k->op;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK];
  char shape[160];

  ocl_op_begin(&op, ctx);
  if (sop->grad) {
    grad_compute(k, &op);
    goto out;
  }
  int n_in = sop->sparse ? (sop->num_segments ? 4 : 3) : 2;
  TF_Tensor *in[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < n_in; i++)
    if ((in[i] = ocl_op_input(&op, i)) == NULL)
      goto out;
  TF_Tensor *data = in[0];
  TF_Tensor *idx = sop->sparse ? in[1] : NULL;
  TF_Tensor *ids = sop->sparse ? in[2] : in[1];
  int rank = ocl_op_dims(&op, data, dims);
  if (rank < 0)
    goto out;
  int64_t m = ocl_tf.TensorElementCount(ids);
  int64_t num_segments = -1;
  /* TensorFlow's checks, in its order (ValidateSegmentReduction,
   * ValidateSparseSegmentReduction). */
  if (!sop->sparse) {
    if (rank < 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "input must be at least rank 1");
      goto out;
    }
    if (ocl_tf.NumDims(ids) != 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "segment_ids should be a vector.");
      goto out;
    }
    if (m != dims[0]) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "segment_ids should be the same size as dimension 0 of "
                  "input.");
      goto out;
    }
  } else {
    if (sop->num_segments) {
      if (ocl_tf.NumDims(in[3]) != 0) {
        shape_string(in[3], shape, sizeof(shape));
        ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                    "num_segments should be a scalar, not shape %s", shape);
        goto out;
      }
      num_segments = ocl_host_int(in[3], 0);
      if (num_segments < 0) {
        ocl_op_fail(&op, TF_INVALID_ARGUMENT, "segment ids must be >= 0");
        goto out;
      }
    }
    if (ocl_tf.NumDims(idx) != 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "indices should be a vector.");
      goto out;
    }
    if (ocl_tf.NumDims(ids) != 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "segment_ids should be a vector.");
      goto out;
    }
    if (ocl_tf.TensorElementCount(idx) != m) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "segment_ids and indices should have same size.");
      goto out;
    }
    if (rank < 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "Shape must be at least rank 1");
      goto out;
    }
  }
  if (m > MAX_IDS) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "%s on OPENCL: %lld segment ids exceed its 32-bit positions",
                sop->op, (long long)m);
    goto out;
  }
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto out;
  if (k->dtype == TF_DOUBLE && !info->has_fp64) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "%s of float64 needs cl_khr_fp64, which OpenCL device %d "
                "lacks",
                sop->op, info->ordinal);
    goto out;
  }
  int64_t rows = dims[0];
  int64_t w = ocl_shape_elements(dims + 1, rank - 1);
  int64_t output_rows = sop->sparse && sop->num_segments ? num_segments : 0;
  struct check_state st = {.first_bad = INT32_MAX};
  if (m > 0) {
    TF_Tensor *state = ocl_op_temp(&op, TF_INT64, 2);
    if (state == NULL ||
        !ocl_op_fill(&op, state, 0, &st, 8, 8))
      goto out;
    const struct ocl_arg check_args[] = {
        OCL_TENSOR(ids), OCL_TENSOR(idx), OCL_TENSOR(state),
        OCL_INT(m),      OCL_LONG(rows),  OCL_LONG(-1)};
    const struct ocl_arg dense_args[] = {OCL_TENSOR(ids), OCL_TENSOR(state),
                                         OCL_INT(m), OCL_LONG(rows),
                                         OCL_LONG(-1)};
    if (!(sop->sparse
              ? ocl_launch_1d(&op, &k->k[K_CHECK], (size_t)m, check_args, 6)
              : ocl_launch_1d(&op, &k->k[K_CHECK], (size_t)m, dense_args,
                              5)) ||
        !ocl_op_read(&op, state, 0, &st, sizeof(st)))
      goto out;
    int64_t last = st.last_id;
    if (sop->sparse) {
      int64_t limit = k->idx_type == TF_INT32 ? INT32_MAX : INT64_MAX;
      if (last >= limit) {
        ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                    "Last segment id must be < kintmax, got %lld limit %lld",
                    (long long)last, (long long)limit);
        goto out;
      }
      if (sop->num_segments && output_rows < last + 1) {
        ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                    "segment ids must be < num_segments");
        goto out;
      }
    }
    if (!sop->num_segments)
      output_rows = last + 1;
    if (output_rows <= 0) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "segment ids must be >= 0");
      goto out;
    }
  }
  int64_t out_dims[OCL_MAX_RANK];
  memcpy(out_dims, dims, sizeof(int64_t) * (size_t)rank);
  out_dims[0] = output_rows;
  int64_t out_elements = 0;
  if (!ocl_op_dim_product(&op, output_rows, w, &out_elements))
    goto out;
  if (st.first_bad != INT32_MAX) {
    report_bad_input(k, &op, ids, idx, m, rows, output_rows);
    goto out;
  }
  TF_Tensor *y = ocl_op_output(&op, 0, k->dtype, out_dims, rank);
  if (y == NULL || out_elements == 0)
    goto out;
  float empty = sop->reduce == R_PROD ? 1.0f : 0.0f;
  if (m == 0) {
    /* Only the sparse forms with num_segments get here: every segment is
     * empty. */
    uint64_t zero = 0;
    ocl_op_fill(&op, y, 0, &zero, 1, ocl_tf.TensorByteSize(y));
    goto out;
  }
  struct ocl_arg args[12];
  int na = 0;
  args[na++] = OCL_TENSOR(data);
  if (sop->sparse)
    args[na++] = OCL_TENSOR(idx);
  args[na++] = OCL_TENSOR(ids);
  args[na++] = OCL_TENSOR(y);
  args[na++] = OCL_LONG(m);
  args[na++] = OCL_LONG(output_rows);
  args[na++] = OCL_LONG(w);
  args[na++] = OCL_FLOAT(empty);
  args[na++] = OCL_INT(k->nan_sticky);
  if (info->cpu_shape) {
    int64_t blocks = (w + BLOCK - 1) / BLOCK;
    ocl_launch_1d(&op, &k->k[K_BLOCKS], (size_t)(output_rows * blocks), args,
                  na);
    goto out;
  }
  /* Narrow rows in long segments: a work-group per (segment, column),
   * combining in a tree. Min and Max only where NaN sticks (TensorFlow
   * 2.22 on): before, their NaN handling depends on the order. */
  bool ordered = (sop->reduce == R_MIN || sop->reduce == R_MAX) &&
                 !k->nan_sticky;
  if (!ordered && w < GROUP_MAX_W && m >= GROUP_MIN_LEN * output_rows) {
    size_t local = ocl_kernel_fit_local(&op, &k->k[K_GROUP], 256);
    if (local == 0)
      goto out;
    while (local > GROUP_MIN_LEN && (int64_t)local / 2 >= m / output_rows)
      local /= 2;
    size_t acc_bytes = k->dtype == TF_DOUBLE ? 8 : 4;
    args[na++] = OCL_LOCAL(local * acc_bytes);
    args[na++] = OCL_LOCAL(local * sizeof(cl_int));
    size_t global[2] = {local, (size_t)(output_rows * w)};
    size_t group_local[2] = {local, 1};
    ocl_launch(&op, &k->k[K_GROUP], 2, global, group_local, args, na);
    goto out;
  }
  /* A row block of one segment per work-group: columns across its
   * work-items, the segments along dimension 1. */
  size_t local_max = ocl_kernel_fit_local(&op, &k->k[K_COLS], 256);
  if (local_max == 0)
    goto out;
  size_t local[2] = {1, 1};
  while (local[0] < local_max && (int64_t)local[0] < w)
    local[0] *= 2;
  size_t global[2] = {((size_t)w + local[0] - 1) / local[0] * local[0],
                      (size_t)output_rows};
  ocl_launch(&op, &k->k[K_COLS], 2, global, local, args, na);
out:
  ocl_op_end(&op);
}

static void seg_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_SEG_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per segment op");
OCL_FAMILY_CREATES(seg, seg_create);


/* ---- Bincount, DenseBincount -------------------------------------------------- */

/* Output int32 or float (TensorFlow's GPU types), input int32 or int64. */
OCL_PROGRAM_TABLE
static const struct ocl_program bincount_programs[2][2] = {
    {{"bincount_int_i32", ocl_cl_source_segment,
      "-DBINCOUNT -DBC_T=int -DBC_IDX=int"},
     {"bincount_int_i64", ocl_cl_source_segment,
      "-DBINCOUNT -DBC_T=int -DBC_IDX=long"}},
    {{"bincount_float_i32", ocl_cl_source_segment,
      "-DBINCOUNT -DBC_T=float -DBC_T_IS_FLOAT -DBC_IDX=int"},
     {"bincount_float_i64", ocl_cl_source_segment,
      "-DBINCOUNT -DBC_T=float -DBC_T_IS_FLOAT -DBC_IDX=long"}},
};

struct bincount_kernel {
  bool dense; /* DenseBincount */
  bool binary_output;
  TF_DataType dtype;
  struct ocl_kernel k;
};

static void *bincount_create_any(TF_OpKernelConstruction *ctx, bool dense)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct bincount_kernel *k = calloc(1, sizeof(*k));
  TF_DataType idx_type = TF_INT32;
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  k->dense = dense;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) == TF_OK && dense)
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "Tidx", &idx_type, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  TF_Bool binary = 0;
  if (dense) {
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "binary_output", &binary,
                                            status);
    ocl_set_ok(status); /* absent: TensorFlow's default, false */
  }
  k->binary_output = binary != 0;
  ocl_kernel_init(&k->k,
                  &bincount_programs[k->dtype == TF_FLOAT]
                                    [idx_type == TF_INT64],
                  "bincount");
  ocl_tf.DeleteStatus(status);
  return k;
}

static void *bincount_create(TF_OpKernelConstruction *ctx)
{
  return bincount_create_any(ctx, false);
}

static void *dense_bincount_create(TF_OpKernelConstruction *ctx)
{
  return bincount_create_any(ctx, true);
}

/* TensorFlow's checks in its order (BincountOp, DenseBincountOp); negative
 * values and values past size are dropped as on its GPU, where its CPU
 * kernels fail ("Input arr must be non-negative!"): checking would make
 * the host wait for the device. */
static void bincount_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct bincount_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK], wdims[OCL_MAX_RANK];
  char shape[160];

  ocl_op_begin(&op, ctx);
  TF_Tensor *arr = ocl_op_input(&op, 0);
  TF_Tensor *size_t_ = arr != NULL ? ocl_op_input(&op, 1) : NULL;
  TF_Tensor *weights = size_t_ != NULL ? ocl_op_input(&op, 2) : NULL;
  if (weights == NULL)
    goto out;
  int rank = ocl_op_dims(&op, arr, dims);
  if (rank < 0)
    goto out;
  if (k->dense && rank > 2) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "Shape must be at most rank 2 but is rank %d", rank);
    goto out;
  }
  if (ocl_tf.NumDims(size_t_) != 0) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "Shape must be rank 0 but is rank %d",
                ocl_tf.NumDims(size_t_));
    goto out;
  }
  int64_t size = ocl_host_int(size_t_, 0);
  if (size < 0) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "size (%lld) must be non-negative",
                (long long)size);
    goto out;
  }
  int64_t n = ocl_tf.TensorElementCount(arr);
  int64_t nw = ocl_tf.TensorElementCount(weights);
  if (k->dense && nw != 0) {
    int wrank = ocl_op_dims(&op, weights, wdims);
    if (wrank < 0)
      goto out;
    bool same = wrank == rank;
    for (int d = 0; same && d < rank; d++)
      same = wdims[d] == dims[d];
    if (!same) {
      ocl_shape_format(wdims, wrank, shape, sizeof(shape));
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "`weights` must be the same shape as `arr` or a length-0 "
                  "`Tensor`, in which case it acts as all weights equal to "
                  "1. Received %s",
                  shape);
      goto out;
    }
  }
  if (!k->dense && nw != 0 && nw != n) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "Input indices and weights must have the same size.");
    goto out;
  }
  /* Rank 2 (DenseBincount): a row of bins per input row. */
  bool rows2 = k->dense && rank == 2;
  int64_t out_dims[2] = {rows2 ? dims[0] : size, size};
  int64_t elements = 0;
  if (!ocl_op_dim_product(&op, rows2 ? dims[0] : 1, size, &elements))
    goto out;
  TF_Tensor *bins = ocl_op_output(&op, 0, k->dtype, out_dims, rows2 ? 2 : 1);
  uint64_t zero = 0;
  if (bins == NULL || elements == 0 ||
      !ocl_op_fill(&op, bins, 0, &zero, 1, ocl_tf.TensorByteSize(bins)) ||
      n == 0)
    goto out;
  int64_t cols = rows2 ? dims[1] : n;
  const struct ocl_arg args[] = {
      OCL_TENSOR(arr),   OCL_TENSOR(nw != 0 ? weights : arr),
      OCL_TENSOR(bins),  OCL_LONG(n),
      OCL_LONG(cols),    OCL_LONG(size),
      OCL_INT(nw != 0),  OCL_INT(k->binary_output)};
  ocl_launch_1d(&op, &k->k, (size_t)n, args, 8);
out:
  ocl_op_end(&op);
}

static void bincount_delete(void *kernel) { free(kernel); }

/* ---- Registration ------------------------------------------------------------ */

void ocl_register_segment_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_BFLOAT16,
                                      TF_DOUBLE};
  static const TF_DataType index_types[] = {TF_INT32, TF_INT64};
  static const char *const num_segments_host[] = {"num_segments", NULL};
  static const char *const output_dim0_host[] = {"output_dim0", NULL};
  static const char *const dense_output_dim0_host[] = {"dense_output_dim0",
                                                       NULL};
  for (int i = 0; i < NUM_SEG_OPS; i++) {
    const struct seg_op *op = &seg_ops[i];
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
      for (int a = 0; a < 2; a++)
        for (int b = 0; b < (op->sparse ? 2 : 1); b++)
          ocl_register_kernel(&(const struct ocl_kernel_spec){
              .op = op->op,
              .create = seg_creates[i],
              .compute = seg_compute,
              .destroy = seg_delete,
              .type_attrs = {"T", op->sparse ? "Tidx" : "Tindices",
                             op->sparse ? "Tsegmentids" : NULL},
              .types = {types[t], index_types[a], index_types[b]},
              .host_args = op->num_segments ? num_segments_host
                           : op->v2         ? dense_output_dim0_host
                           : op->grad       ? output_dim0_host
                                            : NULL,
          });
  }
  /* TensorFlow's GPU bincounts: int32 and float, size in host memory. */
  static const TF_DataType bin_types[] = {TF_INT32, TF_FLOAT};
  static const char *const size_host[] = {"size", NULL};
  for (int t = 0; t < 2; t++) {
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "Bincount",
        .create = bincount_create,
        .compute = bincount_compute,
        .destroy = bincount_delete,
        .type_attrs = {"T"},
        .types = {bin_types[t]},
        .host_args = size_host,
    });
    for (int a = 0; a < 2; a++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = "DenseBincount",
          .create = dense_bincount_create,
          .compute = bincount_compute,
          .destroy = bincount_delete,
          .type_attrs = {"T", "Tidx"},
          .types = {bin_types[t], index_types[a]},
          .host_args = size_host,
      });
  }
}
