/* Sparse access to resource variables and segment reductions:
 * ResourceGather, ResourceGatherNd, ResourceScatter{Add,Sub,Mul,Div,Min,
 * Max,Update}, ResourceScatterNd{Add,Sub,Update}, ResourceStridedSliceAssign
 * (tf.Variable.scatter_*, sparse optimizer updates of embeddings,
 * `v[...].assign()`), UnsortedSegment{Sum,Max,Min,Prod} (the dense gradient
 * of an embedding, TensorList gradients), ZerosLike/AddN of DT_VARIANT
 * (TensorList gradients in Keras' LSTM/GRU while loops), and the nd forms on
 * tensors: GatherNd, ScatterNd, TensorScatter{Update,Add,Sub,Min,Max},
 * ScatterNdNonAliasingAdd (tf.gather_nd, tf.scatter_nd,
 * tf.tensor_scatter_nd_*: CTC loss updates tensors in a while loop, whose
 * body must find every kernel on the device it is placed on).
 *
 * Variables: the kernels reach them through kernels_experimental.h as
 * TensorFlow's own sparse kernels do (resource_variable_ops.cc): the
 * variable's mutex through TF_MaybeLockVariableInputMutexesInOrder (shared
 * for the gathers and for scatters without use_locking, exclusive
 * otherwise), with sparse = true, which is EnsureSparseVariableAccess: the
 * variable goes into copy-on-read mode (a buffer still shared with a reader
 * is copied first, through ocl_variable_copy), so the gathers read it and
 * the scatters write it in place while later ReadVariableOps get copies.
 * TF_GetInputTensorFromVariable(sparse = true, isVariantType = false) then
 * hands out the variable's own tensor. Without kernels_experimental.h
 * (TensorFlow 2.20/2.21 wheels) none of the resource kernels is registered.
 *
 * Scatter semantics (kernels/scatter.cl): rows naming the same destination
 * are applied in index order, as TensorFlow's CPU kernels do, so duplicates
 * accumulate deterministically (no atomics; Update: the last one wins).
 * Out-of-range indices and segment ids are dropped and out-of-range gather
 * indices give zeros, as TensorFlow's GPU kernels do: checking them would
 * make the host wait for the device (its CPU kernels fail instead). Where
 * TensorFlow's kernels would crash or corrupt memory on an inconsistent
 * shape (ResourceGather with mismatched batch dims, ResourceScatter updates
 * whose trailing dims differ from the variable's, dtype mismatches of
 * ResourceGather/ScatterNd) these fail with INVALID_ARGUMENT.
 *
 * Registration follows TensorFlow's GPU kernels (read from the 2.19.1
 * wheel's registry): dtypes, Tindices int32/int64, HostMemory resource /
 * ref / begin / end / strides / num_segments. int32 resource kernels are
 * left out as TensorFlow's GPU leaves them out (int32 variables live on the
 * host). */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gather.h"
#include "kernel_families.h"
#include "runtime.h"
#include "variables.h"

extern const char ocl_cl_source_scatter[];

/* ---- Programs --------------------------------------------------------------- */

enum storage {
  S_F32, S_F16, S_BF16, S_F64, S_I8, S_U8, S_I16, S_U16, S_I32, S_U32,
  S_I64, S_U64, S_C64, S_C128, S_M128, S_COUNT
};

OCL_PROGRAM_TABLE
static const struct ocl_program programs[S_COUNT] = {
    [S_F32] = {"scatter_float", ocl_cl_source_scatter, "-DT=float"},
    [S_F16] = {"scatter_half", ocl_cl_source_scatter, "-DT=half -DT_IS_HALF"},
    [S_BF16] = {"scatter_bfloat16", ocl_cl_source_scatter,
                "-DT=ushort -DT_IS_BFLOAT16"},
    [S_F64] = {"scatter_double", ocl_cl_source_scatter,
               "-DT=double -DT_IS_DOUBLE"},
    [S_I8] = {"scatter_i8", ocl_cl_source_scatter,
              "-DT=char -DUT=uchar -DT_IS_INT -DT_IS_SIGNED"},
    [S_U8] = {"scatter_u8", ocl_cl_source_scatter,
              "-DT=uchar -DUT=uchar -DT_IS_INT"},
    [S_I16] = {"scatter_i16", ocl_cl_source_scatter,
               "-DT=short -DUT=ushort -DT_IS_INT -DT_IS_SIGNED"},
    [S_U16] = {"scatter_u16", ocl_cl_source_scatter,
               "-DT=ushort -DUT=ushort -DT_IS_INT"},
    [S_I32] = {"scatter_i32", ocl_cl_source_scatter,
               "-DT=int -DUT=uint -DT_IS_INT -DT_IS_SIGNED"},
    [S_U32] = {"scatter_u32", ocl_cl_source_scatter,
               "-DT=uint -DUT=uint -DT_IS_INT"},
    [S_I64] = {"scatter_i64", ocl_cl_source_scatter,
               "-DT=long -DUT=ulong -DT_IS_INT -DT_IS_SIGNED"},
    [S_U64] = {"scatter_u64", ocl_cl_source_scatter,
               "-DT=ulong -DUT=ulong -DT_IS_INT"},
    [S_C64] = {"scatter_complex64", ocl_cl_source_scatter,
               "-DT=float2 -DT_IS_COMPLEX"},
    [S_C128] = {"scatter_complex128", ocl_cl_source_scatter,
                "-DT=double2 -DT_IS_COMPLEX -DT_IS_DOUBLE"},
    /* 16-byte moves (complex128 Update) without fp64. */
    [S_M128] = {"scatter_move16", ocl_cl_source_scatter,
                "-DT=ulong2 -DT_MOVE_ONLY"},
};

/* Destination rows, keys and the sort: one program for every dtype. */
OCL_PROGRAM_TABLE
static const struct ocl_program sort_program = {
    "scatter_sort", ocl_cl_source_scatter, "-DSORT_ONLY"};

/* The program that does dtype's arithmetic; false for a dtype without. */
static bool storage_of(TF_DataType dtype, enum storage *st)
{
  switch (dtype) {
  case TF_FLOAT: *st = S_F32; return true;
  case TF_HALF: *st = S_F16; return true;
  case TF_BFLOAT16: *st = S_BF16; return true;
  case TF_DOUBLE: *st = S_F64; return true;
  case TF_INT8: *st = S_I8; return true;
  case TF_UINT8: case TF_BOOL: *st = S_U8; return true;
  case TF_INT16: *st = S_I16; return true;
  case TF_UINT16: *st = S_U16; return true;
  case TF_INT32: *st = S_I32; return true;
  case TF_UINT32: *st = S_U32; return true;
  case TF_INT64: *st = S_I64; return true;
  case TF_UINT64: *st = S_U64; return true;
  case TF_COMPLEX64: *st = S_C64; return true;
  case TF_COMPLEX128: *st = S_C128; return true;
  default: return false;
  }
}

static bool needs_fp64(enum storage st)
{
  return st == S_F64 || st == S_C128;
}

/* TensorFlow's DataTypeString, for messages. */
static const char *dtype_string(TF_DataType dtype)
{
  switch (dtype) {
  case TF_FLOAT: return "float";
  case TF_HALF: return "half";
  case TF_BFLOAT16: return "bfloat16";
  case TF_DOUBLE: return "double";
  case TF_COMPLEX64: return "complex64";
  case TF_COMPLEX128: return "complex128";
  case TF_INT8: return "int8";
  case TF_UINT8: return "uint8";
  case TF_INT16: return "int16";
  case TF_UINT16: return "uint16";
  case TF_INT32: return "int32";
  case TF_UINT32: return "uint32";
  case TF_INT64: return "int64";
  case TF_UINT64: return "uint64";
  case TF_BOOL: return "bool";
  case TF_VARIANT: return "variant";
  default: return "unknown";
  }
}

/* ---- Ops ---------------------------------------------------------------------- */

enum kind {
  GATHER, GATHER_ND, SCATTER, SCATTER_ND, SLICE_ASSIGN, SEGMENT,
  TENSOR_SCATTER_ND, /* the output is a copy of input 0, then scattered */
  NEW_SCATTER_ND     /* ScatterNd: the output is zeros, then added to */
};

/* The update each row applies (scatter.cl's OP_* names). */
enum update { U_ASSIGN, U_ADD, U_SUB, U_MUL, U_DIV, U_MIN, U_MAX, U_SMIN,
              U_SMAX, NUM_UPDATES };
static const char *const update_names[NUM_UPDATES] = {
    "assign", "add", "sub", "mul", "div", "minimum", "maximum", "seg_min",
    "seg_max"};

/* Type sets, as bits of TF_DataType (all below 64). */
#define TB(t) (UINT64_C(1) << (t))
#define GPU_FLOATS \
  (TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_BFLOAT16) | TB(TF_DOUBLE))
#define INTS_NO_INT32                                                    \
  (TB(TF_INT8) | TB(TF_UINT8) | TB(TF_INT16) | TB(TF_UINT16) |           \
   TB(TF_UINT32) | TB(TF_INT64) | TB(TF_UINT64))
#define COMPLEX (TB(TF_COMPLEX64) | TB(TF_COMPLEX128))

struct scatter_op {
  const char *op;
  enum kind kind;
  enum update update;
  const char *type_attr;
  uint64_t types;
  /* Update: bool takes int32 indices only (TensorFlow's GPU registration). */
  uint64_t int32_only_types;
  const char *const *host_args;
  bool needs_variables; /* kernels_experimental.h */
};

static const char *const resource_host[] = {"resource", NULL};
static const char *const ref_host[] = {"ref", NULL};
static const char *const slice_host[] = {"ref", "begin", "end", "strides",
                                         NULL};
static const char *const segment_host[] = {"num_segments", NULL};
static const char *const shape_host[] = {"shape", NULL};
static const char *const no_host[] = {NULL};

static const struct scatter_op scatter_ops[] = {
    {"ResourceGather", GATHER, U_ASSIGN, "dtype",
     GPU_FLOATS | INTS_NO_INT32 | COMPLEX | TB(TF_BOOL), 0, resource_host,
     true},
    {"ResourceGatherNd", GATHER_ND, U_ASSIGN, "dtype",
     GPU_FLOATS | INTS_NO_INT32, 0, resource_host, true},
    {"ResourceScatterAdd", SCATTER, U_ADD, "dtype", GPU_FLOATS | INTS_NO_INT32,
     0, resource_host, true},
    {"ResourceScatterSub", SCATTER, U_SUB, "dtype", GPU_FLOATS | INTS_NO_INT32,
     0, resource_host, true},
    {"ResourceScatterMul", SCATTER, U_MUL, "dtype", GPU_FLOATS | INTS_NO_INT32,
     0, resource_host, true},
    {"ResourceScatterDiv", SCATTER, U_DIV, "dtype", GPU_FLOATS | INTS_NO_INT32,
     0, resource_host, true},
    {"ResourceScatterMin", SCATTER, U_MIN, "dtype", GPU_FLOATS | INTS_NO_INT32,
     0, resource_host, true},
    {"ResourceScatterMax", SCATTER, U_MAX, "dtype", GPU_FLOATS | INTS_NO_INT32,
     0, resource_host, true},
    {"ResourceScatterUpdate", SCATTER, U_ASSIGN, "dtype",
     GPU_FLOATS | INTS_NO_INT32, TB(TF_BOOL), resource_host, true},
    {"ResourceScatterNdAdd", SCATTER_ND, U_ADD, "T",
     GPU_FLOATS | INTS_NO_INT32 | COMPLEX, 0, ref_host, true},
    {"ResourceScatterNdSub", SCATTER_ND, U_SUB, "T",
     GPU_FLOATS | INTS_NO_INT32 | COMPLEX, 0, ref_host, true},
    {"ResourceScatterNdUpdate", SCATTER_ND, U_ASSIGN, "T",
     GPU_FLOATS | INTS_NO_INT32 | COMPLEX, 0, ref_host, true},
    {"ResourceStridedSliceAssign", SLICE_ASSIGN, U_ASSIGN, "T",
     GPU_FLOATS | INTS_NO_INT32 | COMPLEX | TB(TF_BOOL), 0, slice_host, true},
    {"UnsortedSegmentSum", SEGMENT, U_ADD, "T",
     GPU_FLOATS | COMPLEX | TB(TF_INT32), 0, segment_host, false},
    {"UnsortedSegmentMax", SEGMENT, U_SMAX, "T", GPU_FLOATS | TB(TF_INT32), 0,
     segment_host, false},
    {"UnsortedSegmentMin", SEGMENT, U_SMIN, "T", GPU_FLOATS | TB(TF_INT32), 0,
     segment_host, false},
    {"UnsortedSegmentProd", SEGMENT, U_MUL, "T", GPU_FLOATS | TB(TF_INT32), 0,
     segment_host, false},
    /* The tensor forms (tf.gather_nd, tf.scatter_nd, tf.tensor_scatter_nd_*:
     * CTC loss and beam searches update tensors in while loops). */
    {"GatherNd", GATHER_ND, U_ASSIGN, "Tparams",
     GPU_FLOATS | COMPLEX | TB(TF_INT32) | TB(TF_INT64), 0, no_host, false},
    {"ScatterNd", NEW_SCATTER_ND, U_ADD, "T",
     GPU_FLOATS | COMPLEX | INTS_NO_INT32, 0, shape_host, false},
    {"ScatterNdNonAliasingAdd", TENSOR_SCATTER_ND, U_ADD, "T",
     GPU_FLOATS | COMPLEX | INTS_NO_INT32, 0, no_host, false},
    {"TensorScatterUpdate", TENSOR_SCATTER_ND, U_ASSIGN, "T",
     TB(TF_FLOAT) | TB(TF_DOUBLE) | TB(TF_INT64) | COMPLEX, 0, no_host, false},
    {"TensorScatterAdd", TENSOR_SCATTER_ND, U_ADD, "T",
     TB(TF_FLOAT) | TB(TF_DOUBLE) | TB(TF_INT64) | COMPLEX, 0, no_host, false},
    {"TensorScatterSub", TENSOR_SCATTER_ND, U_SUB, "T",
     TB(TF_FLOAT) | TB(TF_DOUBLE) | TB(TF_INT64) | COMPLEX, 0, no_host, false},
    {"TensorScatterMin", TENSOR_SCATTER_ND, U_MIN, "T",
     TB(TF_FLOAT) | TB(TF_DOUBLE) | TB(TF_INT64), 0, no_host, false},
    {"TensorScatterMax", TENSOR_SCATTER_ND, U_MAX, "T",
     TB(TF_FLOAT) | TB(TF_DOUBLE) | TB(TF_INT64), 0, no_host, false},
};

#define NUM_OPS ((int)(sizeof(scatter_ops) / sizeof(scatter_ops[0])))

/* The kernels of the scatter machinery: destination rows, the sort, the
 * update in both shapes and both index widths. */
enum {
  K_TARGETS, K_KEYS, K_SORT_LOCAL, K_SORT_GLOBAL, K_SORT_MERGE,
  K_SERIAL32, K_SERIAL64, K_SORTED32, K_SORTED64, NUM_SCATTER_KERNELS
};

struct scatter_kernel {
  const struct scatter_op *op;
  TF_DataType dtype;
  TF_DataType itype;
  enum storage storage; /* of the arithmetic (Update: of the moves) */
  bool use_locking;
  int64_t batch_dims; /* ResourceGather */
  int64_t masks[5];   /* ResourceStridedSliceAssign */
  struct ocl_kernel k[NUM_SCATTER_KERNELS];
  struct ocl_gather_kernels gather; /* ResourceGather */
  struct ocl_kernel nd[3]; /* GatherNd: 32-, 64-bit, a CPU device's rows */
  struct ocl_kernel assign;         /* ResourceStridedSliceAssign */
};

enum { BEGIN_MASK, END_MASK, ELLIPSIS_MASK, NEW_AXIS_MASK, SHRINK_AXIS_MASK };
static const char *const mask_names[5] = {"begin_mask", "end_mask",
                                          "ellipsis_mask", "new_axis_mask",
                                          "shrink_axis_mask"};

/* ---- Helpers ------------------------------------------------------------------ */

static int read_dims(const TF_Tensor *t, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  for (int i = 0; i < rank; i++)
    dims[i] = ocl_tf.Dim(t, i);
  return rank;
}

static void shape_string(const TF_Tensor *t, char *buf, int len)
{
  int64_t dims[OCL_MAX_RANK];
  ocl_shape_format(dims, read_dims(t, dims), buf, len);
}

static bool fits_int32(int64_t n) { return n <= INT32_MAX; }

/* float64 programs need cl_khr_fp64: a clear error instead of a build
 * failure. */
static bool storage_available(struct ocl_op *op, enum storage st,
                              TF_DataType dtype)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (!needs_fp64(st) || info->has_fp64)
    return true;
  return ocl_op_fail(op, TF_UNIMPLEMENTED,
                     "%s arithmetic needs an OpenCL device with cl_khr_fp64; "
                     "OpenCL device %d has none",
                     dtype_string(dtype), info->ordinal);
}

/* ---- The scatter machinery ------------------------------------------------------ */

/* Names the targets, sort and update kernels (create time). */
static bool scatter_kernels_init(struct scatter_kernel *k, bool nd)
{
  const struct ocl_program *p = &programs[k->storage];
  const char *it = k->itype == TF_INT64 ? "i64" : "i32";
  const char *u = update_names[k->op->update];
  return ocl_kernel_initf(&k->k[K_TARGETS], &sort_program,
                          nd ? "targets_nd_%s" : "targets_%s", it) &&
         ocl_kernel_init(&k->k[K_KEYS], &sort_program, "sort_keys") &&
         ocl_kernel_init(&k->k[K_SORT_LOCAL], &sort_program, "sort_local") &&
         ocl_kernel_init(&k->k[K_SORT_GLOBAL], &sort_program, "sort_global") &&
         ocl_kernel_init(&k->k[K_SORT_MERGE], &sort_program, "sort_merge") &&
         ocl_kernel_initf(&k->k[K_SERIAL32], p, "scatter_serial32_%s", u) &&
         ocl_kernel_initf(&k->k[K_SERIAL64], p, "scatter_serial64_%s", u) &&
         ocl_kernel_initf(&k->k[K_SORTED32], p, "scatter_sorted32_%s", u) &&
         ocl_kernel_initf(&k->k[K_SORTED64], p, "scatter_sorted64_%s", u);
}

/* The first k dims of a ScatterNd destination, as scatter.cl's nd_t. */
struct nd_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long strides[OCL_MAX_DIMS];
  cl_long k;
};

/* Sorts the (row, j) pairs of tgt[0..m) into keys (a temp of n slots, a
 * power of two): the GPU shape's bitonic sort. */
static TF_Tensor *sort_rows(struct ocl_op *op, struct scatter_kernel *k,
                            const TF_Tensor *tgt, int64_t m)
{
  size_t local = ocl_kernel_fit_local(op, &k->k[K_SORT_LOCAL], 256);
  size_t merge = ocl_kernel_fit_local(op, &k->k[K_SORT_MERGE], 256);
  if (local == 0 || merge == 0)
    return NULL;
  if (merge < local)
    local = merge;
  /* Two keys per work-item in local memory. */
  while (local > 1 && 2 * local * sizeof(cl_ulong) > op->info->local_mem_size)
    local /= 2;
  uint64_t chunk = 2 * (uint64_t)local, n = chunk;
  while (n < (uint64_t)m)
    n *= 2;
  TF_Tensor *keys = ocl_op_temp(op, TF_UINT64, (int64_t)n);
  if (keys == NULL)
    return NULL;
  const struct ocl_arg key_args[] = {OCL_TENSOR(tgt), OCL_TENSOR(keys),
                                     OCL_INT(m), OCL_INT(n)};
  if (!ocl_launch_1d(op, &k->k[K_KEYS], (size_t)n, key_args, 4))
    return NULL;
  size_t half = (size_t)(n / 2);
  const struct ocl_arg local_args[] = {
      OCL_TENSOR(keys), OCL_LOCAL(chunk * sizeof(cl_ulong))};
  if (!ocl_launch(op, &k->k[K_SORT_LOCAL], 1, &half, &local, local_args, 2))
    return NULL;
  for (uint64_t stage = 2 * chunk; stage <= n; stage *= 2) {
    for (uint64_t j = stage / 2; j >= chunk; j /= 2) {
      const struct ocl_arg step_args[] = {OCL_TENSOR(keys), OCL_INT(stage),
                                          OCL_INT(j), OCL_INT(half)};
      if (!ocl_launch(op, &k->k[K_SORT_GLOBAL], 1, &half, &local, step_args,
                      4))
        return NULL;
    }
    const struct ocl_arg merge_args[] = {
        OCL_TENSOR(keys), OCL_INT(stage), OCL_LOCAL(chunk * sizeof(cl_ulong))};
    if (!ocl_launch(op, &k->k[K_SORT_MERGE], 1, &half, &local, merge_args, 3))
      return NULL;
  }
  return keys;
}

/* dst rows (rows of w elements) op= the m update rows of upd, row j to row
 * tgt[j]; us/cs: updates' row and column strides (0, 0 for one scalar).
 * `indices` hold one index (nd == NULL) or nd->k per update row. */
static bool scatter_rows(struct ocl_op *op, struct scatter_kernel *k,
                         TF_Tensor *dst, const TF_Tensor *upd,
                         const TF_Tensor *indices, const struct nd_args *nd,
                         int64_t rows, int64_t m, int64_t w, int64_t us,
                         int64_t cs)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL || !storage_available(op, k->storage, k->dtype))
    return false;
  if (m == 0 || w == 0 || rows == 0)
    return true;
  if (!fits_int32(rows) || !fits_int32(m))
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "%s: %lld update rows into %lld rows: the OPENCL "
                       "kernels take at most %d of each",
                       k->op->op, (long long)m, (long long)rows, INT32_MAX);
  TF_Tensor *tgt = ocl_op_temp(op, TF_INT32, m);
  if (tgt == NULL)
    return false;
  if (nd != NULL) {
    const struct ocl_arg args[] = {OCL_TENSOR(indices), OCL_TENSOR(tgt),
                                   OCL_INT(m), OCL_BYTES(nd, sizeof(*nd))};
    if (!ocl_launch_1d(op, &k->k[K_TARGETS], (size_t)m, args, 4))
      return false;
  } else {
    const struct ocl_arg args[] = {OCL_TENSOR(indices), OCL_TENSOR(tgt),
                                   OCL_INT(m), OCL_LONG(rows)};
    if (!ocl_launch_1d(op, &k->k[K_TARGETS], (size_t)m, args, 4))
      return false;
  }
  bool narrow = fits_int32(rows * w) && fits_int32(m * w) &&
                fits_int32(ocl_tf.TensorElementCount(upd));
  if (info->cpu_shape) {
    /* Blocks of SERIAL_COLUMNS columns (a page of floats is 1024), then
     * the rows cut so that every core gets a few blocks; each work-item a
     * work-group of its own. Every block reads all m targets, so narrow
     * rows are cut less (at most cw / SERIAL_COLUMNS_PER_ROW_BLOCK
     * blocks): 4M single elements took 14 ms in one block, 62 in 8. */
    enum {
      SERIAL_COLUMNS = 512,
      SERIAL_ITEMS_PER_CORE = 4,
      SERIAL_COLUMNS_PER_ROW_BLOCK = 8
    };
    int64_t cw = w < SERIAL_COLUMNS ? w : SERIAL_COLUMNS;
    int64_t col_blocks = (w + cw - 1) / cw;
    int64_t want = SERIAL_ITEMS_PER_CORE * (int64_t)info->compute_units;
    int64_t row_blocks = (want + col_blocks - 1) / col_blocks;
    if (row_blocks > cw / SERIAL_COLUMNS_PER_ROW_BLOCK)
      row_blocks = cw / SERIAL_COLUMNS_PER_ROW_BLOCK;
    if (row_blocks > rows)
      row_blocks = rows;
    if (row_blocks < 1)
      row_blocks = 1;
    if (col_blocks * row_blocks < want && w > 16) {
      /* Few destination rows (a sum into one): narrower column blocks,
       * 16 at least, keep the cores busy. */
      int64_t split = (want + row_blocks - 1) / row_blocks;
      cw = ((w + split - 1) / split + 15) / 16 * 16;
      col_blocks = (w + cw - 1) / cw;
    }
    int64_t rh = (rows + row_blocks - 1) / row_blocks;
    row_blocks = (rows + rh - 1) / rh;
    size_t global[2] = {(size_t)col_blocks, (size_t)row_blocks};
    size_t local[2] = {1, 1};
    if (narrow) {
      const struct ocl_arg args[] = {OCL_TENSOR(dst), OCL_TENSOR(upd),
                                     OCL_TENSOR(tgt), OCL_INT(m),
                                     OCL_INT(w),      OCL_INT(us),
                                     OCL_INT(cs),     OCL_INT(rows),
                                     OCL_INT(rh),     OCL_INT(cw)};
      return ocl_launch(op, &k->k[K_SERIAL32], 2, global, local, args, 10);
    }
    const struct ocl_arg args[] = {OCL_TENSOR(dst), OCL_TENSOR(upd),
                                   OCL_TENSOR(tgt), OCL_LONG(m),
                                   OCL_LONG(w),     OCL_LONG(us),
                                   OCL_LONG(cs),    OCL_INT(rows),
                                   OCL_INT(rh),     OCL_LONG(cw)};
    return ocl_launch(op, &k->k[K_SERIAL64], 2, global, local, args, 10);
  }
  TF_Tensor *keys = sort_rows(op, k, tgt, m);
  if (keys == NULL)
    return false;
  ocl_op_release(op, tgt);
  if (narrow) {
    const struct ocl_arg args[] = {OCL_TENSOR(dst), OCL_TENSOR(upd),
                                   OCL_TENSOR(keys), OCL_INT(m), OCL_INT(w),
                                   OCL_INT(us),      OCL_INT(cs)};
    return ocl_launch_1d(op, &k->k[K_SORTED32], (size_t)(m * w), args, 7);
  }
  const struct ocl_arg args[] = {OCL_TENSOR(dst), OCL_TENSOR(upd),
                                 OCL_TENSOR(keys), OCL_LONG(m), OCL_LONG(w),
                                 OCL_LONG(us),     OCL_LONG(cs)};
  return ocl_launch_1d(op, &k->k[K_SORTED64], (size_t)(m * w), args, 7);
}

/* ---- Variables ------------------------------------------------------------------ */

/* The variable of input 0, locked (exclusive or shared) and in copy-on-read
 * mode; NULL with the status set. *locks is released by variable_end. */
static TF_Tensor *variable_begin(struct ocl_op *op, bool exclusive,
                                 TF_VariableInputLockHolder **locks)
{
  static const int inputs[] = {0};
  TF_Tensor *var = NULL;
  *locks = NULL;
  ocl_tf.MaybeLockVariableInputMutexesInOrder(op->ctx, exclusive, true,
                                              inputs, 1, ocl_variable_copy,
                                              locks, op->status);
  if (!ocl_op_ok(op))
    return NULL;
  ocl_tf.GetInputTensorFromVariable(op->ctx, 0, exclusive, false, true,
                                    ocl_variable_copy, &var, op->status);
  if (!ocl_op_ok(op)) {
    if (var != NULL)
      ocl_tf.DeleteTensor(var);
    return NULL;
  }
  return var;
}

/* After the enqueues: later users of the variable are ordered by the
 * stream. */
static void variable_end(TF_Tensor *var, TF_VariableInputLockHolder *locks)
{
  if (var != NULL)
    ocl_tf.DeleteTensor(var);
  if (locks != NULL)
    ocl_tf.ReleaseVariableInputLockHolder(locks);
}

/* ---- ResourceGather --------------------------------------------------------------- */

static void gather_compute(struct scatter_kernel *k, struct ocl_op *op,
                           const TF_Tensor *params)
{
  int64_t p_dims[OCL_MAX_RANK], i_dims[OCL_MAX_RANK], o_dims[2 * OCL_MAX_RANK];
  char s[160];

  TF_Tensor *indices = ocl_op_input(op, 1);
  if (indices == NULL)
    return;
  int p_rank = read_dims(params, p_dims);
  int i_rank = read_dims(indices, i_dims);
  int64_t bd = k->batch_dims;
  if (ocl_tf.TensorType(params) != k->dtype) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Trying to read variable with wrong dtype. Expected %s got %s",
                dtype_string(k->dtype),
                dtype_string(ocl_tf.TensorType(params)));
    return;
  }
  if (p_rank < 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "params must be at least 1 dimensional");
    return;
  }
  if (p_rank < bd) {
    shape_string(params, s, sizeof(s));
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "params must have at least %lld (batch_dims) dimensions but "
                "it has shape %s",
                (long long)bd, s);
    return;
  }
  /* TensorFlow's kernel trusts these (and crashes or reads other batches
   * when they do not hold): GatherV2's checks and words. */
  if (bd >= p_rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "batch_dims (%lld) must be less than rank(params) (%d).",
                (long long)bd, p_rank);
    return;
  }
  if (bd > i_rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Expected batch_dims in the range [%d, %d], but got %lld",
                -i_rank, i_rank, (long long)bd);
    return;
  }
  for (int d = 0; d < bd; d++) {
    if (p_dims[d] != i_dims[d]) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "params.shape[%d]: %lld should be equal to "
                  "indices.shape[%d]: %lld",
                  d, (long long)p_dims[d], d, (long long)i_dims[d]);
      return;
    }
  }
  if (k->itype == TF_INT32 && p_dims[0] > INT32_MAX) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "params.shape[0] too large for int32 indexing: %lld > %d",
                (long long)p_dims[0], INT32_MAX);
    return;
  }
  /* params[:bd] + indices[bd:] + params[bd+1:] */
  int o_rank = 0;
  int64_t batch = 1, inner = 1;
  for (int d = 0; d < bd; d++)
    batch *= o_dims[o_rank++] = p_dims[d];
  for (int d = (int)bd; d < i_rank; d++)
    o_dims[o_rank++] = i_dims[d];
  for (int d = (int)bd + 1; d < p_rank; d++)
    inner *= o_dims[o_rank++] = p_dims[d];
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, o_dims, o_rank);
  int64_t n = ocl_tf.TensorElementCount(indices);
  if (out == NULL || n == 0)
    return;
  ocl_gather_launch(op, &k->gather, params, indices, out, batch, 1, p_dims[bd],
                    inner, n / batch);
}

/* ---- ResourceGatherNd --------------------------------------------------------------- */

/* The shortest slice a CPU device copies as rows (gather_nd_rows): a SIMD
 * vector of floats; shorter ones stay with gather_nd32. */
#define GATHER_ND_ROWS_MIN_SLICE 16

static void gather_nd_compute(struct scatter_kernel *k, struct ocl_op *op,
                              const TF_Tensor *params)
{
  int64_t p_dims[OCL_MAX_RANK], i_dims[OCL_MAX_RANK], o_dims[2 * OCL_MAX_RANK];
  char s[160];

  TF_Tensor *indices = ocl_op_input(op, 1);
  if (indices == NULL)
    return;
  int p_rank = read_dims(params, p_dims);
  int i_rank = read_dims(indices, i_dims);
  if (ocl_tf.TensorType(params) != k->dtype) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Trying to read variable with wrong dtype. Expected %s got %s",
                dtype_string(k->dtype),
                dtype_string(ocl_tf.TensorType(params)));
    return;
  }
  if (p_rank < 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "params must be at least a vector");
    return;
  }
  if (i_rank < 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "indices must be at least a vector");
    return;
  }
  int64_t nd = i_dims[i_rank - 1];
  if (nd > p_rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "index innermost dimension length must be <= params rank; "
                "saw: %lld vs. %d",
                (long long)nd, p_rank);
    return;
  }
  int64_t rows = ocl_shape_elements(i_dims, i_rank - 1);
  if (rows > INT32_MAX) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "indices has too many elements for int indexing: %lld > %d",
                (long long)rows, INT32_MAX);
    return;
  }
  int64_t p_elements = ocl_tf.TensorElementCount(params);
  if (k->itype == TF_INT32 && p_elements > INT32_MAX) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "params.NumElements() too large for int32 indexing: %lld > %d",
                (long long)p_elements, INT32_MAX);
    return;
  }
  /* indices[:-1] + params[nd:] */
  int o_rank = 0;
  int64_t slice = 1;
  for (int d = 0; d < i_rank - 1; d++)
    o_dims[o_rank++] = i_dims[d];
  for (int d = (int)nd; d < p_rank; d++)
    slice *= o_dims[o_rank++] = p_dims[d];
  if (k->itype == TF_INT32 && slice > INT32_MAX) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "slice size is too large for indexing: %lld > %d",
                (long long)slice, INT32_MAX);
    return;
  }
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, o_dims, o_rank);
  if (out == NULL || rows == 0)
    return;
  if (p_elements == 0) {
    shape_string(params, s, sizeof(s));
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Requested more than 0 entries, but params is empty.  Params "
                "shape: %s",
                s);
    return;
  }
  if (nd > 7) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Only indices.shape[-1] values between 1 and 7 are currently "
                "supported.  Requested rank: %lld",
                (long long)nd);
    return;
  }
  struct nd_args a = {.k = nd};
  int64_t stride = 1;
  for (int d = (int)nd - 1; d >= 0; d--) {
    a.dims[d] = p_dims[d];
    a.strides[d] = stride;
    stride *= p_dims[d];
  }
  int64_t n = rows * slice;
  if (n == 0)
    return;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  if (fits_int32(n) && fits_int32(p_elements) && info->cpu_shape &&
      slice >= GATHER_ND_ROWS_MIN_SLICE) {
    int64_t dims[3] = {1, rows, slice};
    struct ocl_arg args[] = {OCL_TENSOR(params),
                             OCL_TENSOR(indices),
                             OCL_TENSOR(out),
                             OCL_INT(rows),
                             OCL_INT(slice),
                             OCL_BYTES(&a, sizeof(a)),
                             {0}};
    ocl_launch_spans(op, &k->nd[2], dims, args, 6);
  } else if (fits_int32(n) && fits_int32(p_elements)) {
    const struct ocl_arg args[] = {OCL_TENSOR(params), OCL_TENSOR(indices),
                                   OCL_TENSOR(out),    OCL_INT(n),
                                   OCL_INT(slice),     OCL_BYTES(&a, sizeof(a))};
    ocl_launch_1d(op, &k->nd[0], (size_t)n, args, 6);
  } else {
    const struct ocl_arg args[] = {OCL_TENSOR(params), OCL_TENSOR(indices),
                                   OCL_TENSOR(out),    OCL_LONG(n),
                                   OCL_LONG(slice),    OCL_BYTES(&a, sizeof(a))};
    ocl_launch_1d(op, &k->nd[1], (size_t)n, args, 6);
  }
}

/* ---- ResourceScatter* ---------------------------------------------------------------- */

/* A scatter's indices and updates (inputs 1 and 2) with the dims of all
 * three; the shapes as text only for an error message (scatter_shapes). */
struct scatter_in {
  TF_Tensor *indices, *updates;
  int p_rank, i_rank, u_rank;
  int64_t p_dims[OCL_MAX_RANK], i_dims[OCL_MAX_RANK], u_dims[OCL_MAX_RANK];
  char ps[160], is[160], us[160];
};

/* indices are input `first`, updates the next one: ScatterNd reads
 * (indices, updates, shape), the others (x, indices, updates). */
static bool scatter_inputs(struct ocl_op *op, TF_Tensor *params, int first,
                           struct scatter_in *in)
{
  in->indices = ocl_op_input(op, first);
  in->updates = in->indices ? ocl_op_input(op, first + 1) : NULL;
  if (in->updates == NULL)
    return false;
  if (ocl_tf.TensorType(params) != ocl_tf.TensorType(in->updates))
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "DType of scatter resource and updates does not "
                       "match.");
  in->p_rank = read_dims(params, in->p_dims);
  in->i_rank = read_dims(in->indices, in->i_dims);
  in->u_rank = read_dims(in->updates, in->u_dims);
  return true;
}

static void scatter_shapes(struct scatter_in *in)
{
  ocl_shape_format(in->p_dims, in->p_rank, in->ps, sizeof(in->ps));
  ocl_shape_format(in->i_dims, in->i_rank, in->is, sizeof(in->is));
  ocl_shape_format(in->u_dims, in->u_rank, in->us, sizeof(in->us));
}

static void scatter_compute(struct scatter_kernel *k, struct ocl_op *op,
                            TF_Tensor *params)
{
  struct scatter_in in;
  if (!scatter_inputs(op, params, 1, &in))
    return;
  TF_Tensor *indices = in.indices, *updates = in.updates;
  const int64_t *p_dims = in.p_dims, *i_dims = in.i_dims, *u_dims = in.u_dims;
  const int p_rank = in.p_rank, i_rank = in.i_rank, u_rank = in.u_rank;
  if (!(u_rank == 0 || u_rank == i_rank + p_rank - 1)) {
    scatter_shapes(&in);
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Must have updates.shape = indices.shape + params.shape[1:] "
                "or updates.shape = [], got updates.shape %s, indices.shape "
                "%s, params.shape %s",
                in.us, in.is, in.ps);
    return;
  }
  int64_t m = ocl_tf.TensorElementCount(indices);
  if (k->itype == TF_INT32 && m > INT32_MAX) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "indices has too many elements for int32 indexing: %lld > %d",
                (long long)m, INT32_MAX);
    return;
  }
  if (p_rank < 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "params must be at least 1 dimensional");
    return;
  }
  if (k->itype == TF_INT32 && p_dims[0] > INT32_MAX) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "params.shape[0] too large for int32 indexing: %lld > %d",
                (long long)p_dims[0], INT32_MAX);
    return;
  }
  if (m == 0)
    return;
  int64_t w = ocl_shape_elements(p_dims + 1, p_rank - 1);
  bool scalar = u_rank == 0;
  if (!scalar) {
    for (int d = 0; d < i_rank; d++) {
      if (u_dims[d] != i_dims[d]) {
        scatter_shapes(&in);
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "The shape of indices (%s) must be a prefix of the shape "
                    "of updates (%s)",
                    in.is, in.us);
        return;
      }
    }
    /* TensorFlow does not check the rest and writes out of bounds when it
     * differs. */
    for (int d = 1; d < p_rank; d++) {
      if (u_dims[i_rank + d - 1] != p_dims[d]) {
        scatter_shapes(&in);
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "Must have updates.shape = indices.shape + "
                    "params.shape[1:] or updates.shape = [], got "
                    "updates.shape %s, indices.shape %s, params.shape %s",
                    in.us, in.is, in.ps);
        return;
      }
    }
  }
  scatter_rows(op, k, params, updates, indices, NULL, p_dims[0], m, w,
               scalar ? 0 : w, scalar ? 0 : 1);
}

/* ---- ResourceScatterNd* ------------------------------------------------------------- */

static void scatter_nd_compute(struct scatter_kernel *k, struct ocl_op *op,
                               TF_Tensor *params, int first)
{
  struct scatter_in in;
  if (!scatter_inputs(op, params, first, &in))
    return;
  TF_Tensor *indices = in.indices, *updates = in.updates;
  const int64_t *p_dims = in.p_dims, *i_dims = in.i_dims, *u_dims = in.u_dims;
  const int p_rank = in.p_rank, i_rank = in.i_rank, u_rank = in.u_rank;
  int64_t p_elements = ocl_tf.TensorElementCount(params);
  int64_t i_elements = ocl_tf.TensorElementCount(indices);
  int64_t u_elements = ocl_tf.TensorElementCount(updates);
  if (p_rank < 1) {
    scatter_shapes(&in);
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Output must be at least 1-D, got shape: %s", in.ps);
    return;
  }
  if (p_elements == 0 && !(i_elements == 0 && u_elements == 0)) {
    scatter_shapes(&in);
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Indices and updates specified for empty output.  indices "
                "shape: %s",
                in.is);
    return;
  }
  /* A scalar's dim 0 reads as 1 (TensorFlow reads past its dims). */
  int64_t i0 = i_rank > 0 ? i_dims[0] : 1, u0 = u_rank > 0 ? u_dims[0] : 1;
  if (i0 != u0) {
    scatter_shapes(&in);
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Dimensions [0,1) of indices[shape=%s] = %lld must match "
                "dimensions [0,1) of updates[shape=%s] = %lld",
                in.is, (long long)i0, in.us, (long long)u0);
    return;
  }
  int64_t slice_dim = i_rank > 1 ? i_dims[i_rank - 1] : 1;
  int64_t batch_dim = i_rank > 1 ? i_rank - 1 : 1;
  bool prefix_ok = u_rank >= batch_dim;
  bool suffix_ok = prefix_ok && p_rank >= slice_dim + (u_rank - batch_dim) &&
                   u_rank == batch_dim + p_rank - slice_dim;
  for (int d = 0; prefix_ok && suffix_ok && d < batch_dim; d++)
    prefix_ok = u_dims[d] == (d < i_rank ? i_dims[d] : 1);
  for (int d = 0; prefix_ok && suffix_ok && d < u_rank - batch_dim; d++)
    suffix_ok = u_dims[d + batch_dim] == p_dims[d + slice_dim];
  if (!prefix_ok) {
    scatter_shapes(&in);
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Dimensions [0,%lld) of indices[shape=%s] must match "
                "dimensions [0,%lld) of updates[shape=%s]",
                (long long)batch_dim, in.is, (long long)batch_dim, in.us);
    return;
  }
  if (!suffix_ok) {
    scatter_shapes(&in);
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Dimensions [%lld,%d) of input[shape=%s] must match "
                "dimensions [%lld,%d) of updates[shape=%s]",
                (long long)slice_dim, p_rank, in.ps, (long long)slice_dim, u_rank,
                in.us);
    return;
  }
  if (k->itype == TF_INT32 && i_elements > INT32_MAX) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "indices has too many elements for int32 indexing: %lld > %d",
                (long long)i_elements, INT32_MAX);
    return;
  }
  if (k->itype == TF_INT32 && p_dims[0] > INT32_MAX) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "params_shape[0] too large for int32 indexing: %lld > %d",
                (long long)p_dims[0], INT32_MAX);
    return;
  }
  if (p_elements == 0)
    return;
  /* TensorFlow handles 1 to 7 and says 5. */
  if (slice_dim < 1 || slice_dim > 7) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Only indices.shape[-1] values between 1 and 5 are currently "
                "supported.  Requested rank: %lld",
                (long long)slice_dim);
    return;
  }
  int64_t w = ocl_shape_elements(p_dims + slice_dim, p_rank - (int)slice_dim);
  int64_t m = i_elements / slice_dim;
  struct nd_args a = {.k = slice_dim};
  int64_t rows = 1;
  for (int d = (int)slice_dim - 1; d >= 0; d--) {
    a.dims[d] = p_dims[d];
    a.strides[d] = rows;
    rows *= p_dims[d];
  }
  scatter_rows(op, k, params, updates, indices, &a, rows, m, w, w, 1);
}

/* ---- GatherNd, ScatterNd, TensorScatter*, ScatterNdNonAliasingAdd -------------------- */

/* TensorFlow's ValidEmptyOutputShape: indices and updates both empty, or
 * nothing empty. */
static bool valid_empty_output(int64_t outputs, int64_t indices,
                               int64_t updates)
{
  if (indices == 0 && updates == 0)
    return true;
  return outputs != 0 && indices != 0 && updates != 0;
}

/* The checks TensorFlow's TensorScatterOp and ScatterNdOp make before
 * DoScatterNd (scatter_nd_op.cc); scatter_nd_compute makes DoScatterNd's. */
static bool tensor_scatter_shapes_ok(struct ocl_op *op, const int64_t *o_dims,
                                     int o_rank, int64_t empty_basis,
                                     const TF_Tensor *indices,
                                     const TF_Tensor *updates)
{
  int64_t i_dims[OCL_MAX_RANK], u_dims[OCL_MAX_RANK];
  char os[160], is[160], us[160];
  int i_rank = read_dims(indices, i_dims);
  int u_rank = read_dims(updates, u_dims);
  ocl_shape_format(o_dims, o_rank, os, sizeof(os));
  shape_string(indices, is, sizeof(is));
  shape_string(updates, us, sizeof(us));
  if (i_rank < 1)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Indices shape must have rank at least one. Found:%s",
                       is);
  if (u_rank < 1)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Updates shape must have rank at least one. Found:%s",
                       us);
  if (!valid_empty_output(empty_basis, ocl_tf.TensorElementCount(indices),
                          ocl_tf.TensorElementCount(updates)))
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Indices and updates specified for empty output shape");
  int outer = i_rank - 1;
  for (int d = 0; d < outer; d++)
    if (d >= u_rank || i_dims[d] != u_dims[d])
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "Outer dimensions of indices and update must match. "
                         "Indices shape: %s, updates shape:%s",
                         is, us);
  int64_t ix = i_dims[outer];
  if (u_rank - outer != o_rank - ix)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Inner dimensions of output shape must match inner "
                       "dimensions of updates shape. Output: %s updates: %s",
                       os, us);
  for (int d = 0; d + outer < u_rank; d++)
    if (u_dims[d + outer] != o_dims[ix + d])
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "The inner %lld dimensions of output.shape=%s must "
                         "match the inner %d dimensions of updates.shape=%s",
                         (long long)(o_rank - ix), os, u_rank - outer, us);
  return true;
}

/* TensorScatter{Update,Add,Sub,Min,Max}, ScatterNdNonAliasingAdd: a copy of
 * x (its buffer where TensorFlow hands it over) with the updates applied. */
static void tensor_scatter_compute(struct scatter_kernel *k, struct ocl_op *op)
{
  int64_t dims[OCL_MAX_RANK];
  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *indices = x ? ocl_op_input(op, 1) : NULL;
  TF_Tensor *updates = indices ? ocl_op_input(op, 2) : NULL;
  if (updates == NULL)
    return;
  int rank = read_dims(x, dims);
  if (!tensor_scatter_shapes_ok(op, dims, rank,
                                ocl_tf.TensorElementCount(x), indices,
                                updates))
    return;
  static const int candidates[] = {0};
  int forwarded = -1;
  TF_Tensor *out = ocl_op_output_forward(op, 0, candidates, 1, dims, rank,
                                         &forwarded);
  if (out == NULL)
    return;
  size_t bytes = ocl_tf.TensorByteSize(x);
  if (forwarded != 0 && bytes > 0 && !ocl_op_copy(op, x, 0, out, 0, bytes))
    return;
  scatter_nd_compute(k, op, out, 1);
}

/* ScatterNd: zeros of `shape` (input 2, host memory) plus the updates. */
static void new_scatter_nd_compute(struct scatter_kernel *k, struct ocl_op *op)
{
  int64_t dims[OCL_MAX_RANK];
  TF_Tensor *indices = ocl_op_input(op, 0);
  TF_Tensor *updates = indices ? ocl_op_input(op, 1) : NULL;
  TF_Tensor *shape = updates ? ocl_op_input(op, 2) : NULL;
  if (shape == NULL)
    return;
  if (ocl_tf.NumDims(shape) != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "Shape must be a vector");
    return;
  }
  int64_t rank = ocl_tf.TensorElementCount(shape), elements = 1;
  if (rank > OCL_MAX_RANK) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Too many dimensions in tensor: %lld (at most %d)",
                (long long)rank, OCL_MAX_RANK);
    return;
  }
  for (int d = 0; d < rank; d++) {
    dims[d] = ocl_host_int(shape, d);
    if (dims[d] < 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Dimension %lld must be >= 0", (long long)dims[d]);
      return;
    }
    if (!ocl_op_dim_product(op, elements, dims[d], &elements))
      return;
  }
  /* ScatterNdOp weighs the shape input's element count (the rank) where
   * TensorScatterOp weighs the output's. */
  if (!tensor_scatter_shapes_ok(op, dims, (int)rank, rank, indices, updates))
    return;
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, dims, (int)rank);
  if (out == NULL)
    return;
  static const uint8_t zero = 0;
  size_t bytes = ocl_tf.TensorByteSize(out);
  if (bytes > 0 && !ocl_op_fill(op, out, 0, &zero, 1, bytes))
    return;
  scatter_nd_compute(k, op, out, 0);
}

/* ---- ResourceStridedSliceAssign ------------------------------------------------------ */

/* The collapsed strided assignment as gather.cl's assign_t reads it. */
struct assign_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long in_strides[OCL_MAX_DIMS];
  cl_long out_strides[OCL_MAX_DIMS];
  cl_long rank;
  cl_long out_offset;
};

static void slice_assign_compute(struct scatter_kernel *k, struct ocl_op *op,
                                 TF_Tensor *var)
{
  int64_t v_dims[OCL_MAX_RANK], x_dims[OCL_MAX_RANK];
  int64_t begin[OCL_SLICE_SPEC_MAX], end[OCL_SLICE_SPEC_MAX],
      strides[OCL_SLICE_SPEC_MAX];
  char a[160], b[160], c[160];
  struct ocl_strided_slice s;
  TF_Tensor *in[5] = {NULL, NULL, NULL, NULL, NULL};

  for (int j = 1; j < 5; j++)
    if ((in[j] = ocl_op_input(op, j)) == NULL)
      return;
  if (ocl_tf.TensorType(var) != k->dtype) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "l-value dtype %s does not match r-value dtype %s",
                dtype_string(ocl_tf.TensorType(var)), dtype_string(k->dtype));
    return;
  }
  int64_t n = ocl_tf.TensorElementCount(in[3]);
  if (ocl_tf.NumDims(in[1]) != 1 || ocl_tf.NumDims(in[2]) != 1 ||
      ocl_tf.NumDims(in[3]) != 1 || ocl_tf.TensorElementCount(in[1]) != n ||
      ocl_tf.TensorElementCount(in[2]) != n || n >= OCL_SLICE_SPEC_MAX) {
    shape_string(in[1], a, sizeof(a));
    shape_string(in[2], b, sizeof(b));
    shape_string(in[3], c, sizeof(c));
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Expected begin, end, and strides to be 1D equal size "
                "tensors, but got shapes %s, %s, and %s instead.",
                a, b, c);
    return;
  }
  for (int i = 0; i < n; i++) {
    begin[i] = ocl_host_int(in[1], i);
    end[i] = ocl_host_int(in[2], i);
    strides[i] = ocl_host_int(in[3], i);
  }
  int v_rank = read_dims(var, v_dims);
  if (!ocl_strided_slice_init(&s, v_dims, v_rank, begin, end, strides, (int)n,
                              k->masks[BEGIN_MASK], k->masks[END_MASK],
                              k->masks[ELLIPSIS_MASK], k->masks[NEW_AXIS_MASK],
                              k->masks[SHRINK_AXIS_MASK], op->status))
    return;
  if (s.elements == 0)
    return;
  if (s.rank > 8) {
    ocl_op_fail(op, TF_UNIMPLEMENTED, "Unhandled input dimensions %d", s.rank);
    return;
  }
  /* StridedSliceAssignBCast: the value broadcasts to the final shape, with
   * extra leading dims of 1 allowed. */
  int x_rank = read_dims(in[4], x_dims);
  int64_t f_strides[OCL_MAX_RANK + OCL_SLICE_SPEC_MAX];
  bool ok = true;
  int lead = x_rank - s.final_rank;
  for (int d = 0; d < lead; d++)
    ok = ok && x_dims[d] == 1;
  int64_t stride = 1;
  for (int f = s.final_rank - 1; f >= 0; f--) {
    int x = f + lead; /* the value's dim aligned with final dim f */
    int64_t xd = x >= 0 ? x_dims[x] : 1;
    if (xd == s.final_dims[f])
      f_strides[f] = xd == 1 ? 0 : stride;
    else if (xd == 1)
      f_strides[f] = 0;
    else
      ok = false;
    if (x >= 0)
      stride *= xd;
  }
  if (!ok) {
    ocl_shape_format(x_dims, x_rank, a, sizeof(a));
    ocl_shape_format(s.final_dims, s.final_rank, b, sizeof(b));
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Cannot broadcast input shape %s into final shape %s", a, b);
    return;
  }
  /* Processing dims of more than one element map in order onto final dims
   * of more than one element (shrunk dims and new axes have one). */
  int64_t in_strides[OCL_MAX_DIMS], out_strides[OCL_MAX_DIMS], v_strides[64];
  int64_t offset = 0;
  ocl_shape_strides(v_dims, v_rank, v_strides);
  for (int d = 0, f = 0; d < s.rank; d++) {
    out_strides[d] = s.strides[d] * v_strides[d];
    offset += s.begin[d] * v_strides[d];
    in_strides[d] = 0;
    if (s.processing_dims[d] == 1)
      continue;
    while (f < s.final_rank && s.final_dims[f] == 1)
      f++;
    in_strides[d] = f_strides[f++];
  }
  struct ocl_strided_copy cp;
  ocl_strided_copy_init(&cp, s.processing_dims, s.rank, in_strides,
                        out_strides, 0, offset);
  struct assign_args args = {.rank = cp.rank, .out_offset = cp.out_offset};
  for (int d = 0; d < cp.rank; d++) {
    args.dims[d] = cp.dims[d];
    args.in_strides[d] = cp.in_strides[d];
    args.out_strides[d] = cp.out_strides[d];
  }
  const struct ocl_arg argv[] = {OCL_TENSOR(in[4]), OCL_TENSOR(var),
                                 OCL_LONG(cp.elements),
                                 OCL_BYTES(&args, sizeof(args))};
  ocl_launch_1d(op, &k->assign, (size_t)cp.elements, argv, 4);
}

/* ---- UnsortedSegment* --------------------------------------------------------------- */

/* The output's initial value: TensorFlow's Zero, One, Lowest, Highest. */
static size_t identity_pattern(TF_DataType dtype, enum update u, void *p)
{
  size_t size = ocl_tf.DataTypeSize(dtype);
  memset(p, 0, 16);
  if (u == U_ADD)
    return size;
  bool one = u == U_MUL, low = u == U_SMAX;
  switch (dtype) {
  case TF_FLOAT:
    *(float *)p = one ? 1.0f : low ? -FLT_MAX : FLT_MAX;
    break;
  case TF_DOUBLE:
    *(double *)p = one ? 1.0 : low ? -DBL_MAX : DBL_MAX;
    break;
  case TF_HALF:
    *(uint16_t *)p = one ? 0x3c00 : low ? 0xfbff : 0x7bff;
    break;
  case TF_BFLOAT16:
    *(uint16_t *)p = one ? 0x3f80 : low ? 0xff7f : 0x7f7f;
    break;
  case TF_INT32:
    *(int32_t *)p = one ? 1 : low ? INT32_MIN : INT32_MAX;
    break;
  default:
    break;
  }
  return size;
}

static void segment_compute(struct scatter_kernel *k, struct ocl_op *op)
{
  int64_t d_dims[OCL_MAX_RANK], s_dims[OCL_MAX_RANK], o_dims[OCL_MAX_RANK];
  char a[160], b[160];
  uint64_t pattern[2];

  TF_Tensor *data = ocl_op_input(op, 0);
  TF_Tensor *ids = data ? ocl_op_input(op, 1) : NULL;
  TF_Tensor *num = ids ? ocl_op_input(op, 2) : NULL;
  if (num == NULL)
    return;
  int d_rank = read_dims(data, d_dims);
  int s_rank = read_dims(ids, s_dims);
  if (ocl_tf.NumDims(num) != 0) {
    shape_string(num, a, sizeof(a));
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "num_segments should be a scalar, not shape %s", a);
    return;
  }
  bool starts = s_rank <= d_rank;
  for (int d = 0; starts && d < s_rank; d++)
    starts = d_dims[d] == s_dims[d];
  if (!starts) {
    ocl_shape_format(d_dims, d_rank, a, sizeof(a));
    ocl_shape_format(s_dims, s_rank, b, sizeof(b));
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "data.shape = %s does not start with segment_ids.shape = %s",
                a, b);
    return;
  }
  int64_t segments = ocl_host_int(num, 0);
  if (segments < 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Input num_segments == %lld must not be negative.",
                (long long)segments);
    return;
  }
  int o_rank = 0;
  o_dims[o_rank++] = segments;
  for (int d = s_rank; d < d_rank; d++)
    o_dims[o_rank++] = d_dims[d];
  TF_Tensor *out = ocl_op_output(op, 0, k->dtype, o_dims, o_rank);
  if (out == NULL)
    return;
  size_t size = identity_pattern(k->dtype, k->op->update, pattern);
  if (!ocl_op_fill(op, out, 0, pattern, size, ocl_tf.TensorByteSize(out)))
    return;
  int64_t m = ocl_tf.TensorElementCount(ids);
  if (ocl_tf.TensorElementCount(data) == 0 || m == 0)
    return;
  int64_t w = ocl_shape_elements(d_dims + s_rank, d_rank - s_rank);
  scatter_rows(op, k, out, data, ids, NULL, segments, m, w, w, 1);
}

/* ---- Kernel callbacks ----------------------------------------------------------------- */

static void *scatter_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct scatter_op *op = &scatter_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct scatter_kernel *k = calloc(1, sizeof(*k));
  bool ok = true;
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, op->type_attr, &k->dtype,
                                          status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->itype = TF_INT32;
  if (op->kind != SLICE_ASSIGN) {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "Tindices", &k->itype,
                                            status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  /* Update only moves elements: the program of the element size, which
   * needs no fp64. */
  bool have_storage = storage_of(k->dtype, &k->storage);
  if (op->update == U_ASSIGN) {
    switch (ocl_tf.DataTypeSize(k->dtype)) {
    case 1: k->storage = S_U8; break;
    case 2: k->storage = S_U16; break;
    case 4: k->storage = S_U32; break;
    case 8: k->storage = S_U64; break;
    case 16: k->storage = S_M128; break;
    default: have_storage = false; break;
    }
  }
  if (!have_storage) {
    ocl_set_status(status, TF_UNIMPLEMENTED, "%s: no OPENCL kernel for %s",
                   op->op, dtype_string(k->dtype));
    goto fail;
  }
  TF_Bool flag = op->kind == SCATTER_ND; /* TensorFlow's defaults */
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "use_locking", &flag, status);
  k->use_locking = flag != 0;
  ocl_set_ok(status);
  const char *it = k->itype == TF_INT64 ? "i64" : "i32";
  switch (op->kind) {
  case GATHER:
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "batch_dims", &k->batch_dims,
                                             status);
    ocl_set_ok(status); /* absent: 0 */
    if (k->batch_dims < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "batch_dims is negative (%lld)",
                     (long long)k->batch_dims);
      goto fail;
    }
    ok = ocl_gather_kernels_init(&k->gather, k->dtype, k->itype);
    break;
  case GATHER_ND:
    ok = ocl_gather_program(k->dtype) != NULL &&
         ocl_kernel_initf(&k->nd[0], ocl_gather_program(k->dtype),
                          "gather_nd32_%s", it) &&
         ocl_kernel_initf(&k->nd[1], ocl_gather_program(k->dtype),
                          "gather_nd_%s", it) &&
         ocl_kernel_initf(&k->nd[2], ocl_gather_program(k->dtype),
                          "gather_nd_rows_%s", it);
    break;
  case SLICE_ASSIGN:
    for (int i = 0; i < 5; i++) {
      ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, mask_names[i],
                                               &k->masks[i], status);
      ocl_set_ok(status); /* absent: 0 */
    }
    ok = ocl_gather_program(k->dtype) != NULL &&
         ocl_kernel_init(&k->assign, ocl_gather_program(k->dtype),
                         "strided_assign");
    break;
  case SCATTER:
  case SEGMENT:
    ok = scatter_kernels_init(k, false);
    break;
  case SCATTER_ND:
  case TENSOR_SCATTER_ND:
  case NEW_SCATTER_ND:
    ok = scatter_kernels_init(k, true);
    break;
  }
  if (!ok) {
    ocl_set_status(status, TF_INTERNAL, "%s: cannot name its kernels",
                   op->op);
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void scatter_compute_any(void *kernel, TF_OpKernelContext *ctx)
{
  struct scatter_kernel *k = kernel;
  struct ocl_op op;
  TF_VariableInputLockHolder *locks = NULL;
  TF_Tensor *var = NULL;

  ocl_op_begin(&op, ctx);
  if (!k->op->needs_variables) {
    switch (k->op->kind) {
    case SEGMENT: segment_compute(k, &op); break;
    case TENSOR_SCATTER_ND: tensor_scatter_compute(k, &op); break;
    case NEW_SCATTER_ND: new_scatter_nd_compute(k, &op); break;
    case GATHER_ND: {
      TF_Tensor *params = ocl_op_input(&op, 0);
      if (params != NULL)
        gather_nd_compute(k, &op, params);
      break;
    }
    default: break;
    }
    ocl_op_end(&op);
    return;
  }
  /* As TensorFlow: the gathers read under a shared lock, the scatters
   * write under one unless use_locking (TensorFlow's own scatter kernels
   * do not serialise either); ScatterNd and the slice assignment always
   * lock exclusively. */
  bool exclusive = k->op->kind == SCATTER_ND ||
                   k->op->kind == SLICE_ASSIGN ||
                   (k->op->kind == SCATTER && k->use_locking);
  var = variable_begin(&op, exclusive, &locks);
  if (var != NULL) {
    switch (k->op->kind) {
    case GATHER: gather_compute(k, &op, var); break;
    case GATHER_ND: gather_nd_compute(k, &op, var); break;
    case SCATTER: scatter_compute(k, &op, var); break;
    case SCATTER_ND: scatter_nd_compute(k, &op, var, 1); break;
    case SLICE_ASSIGN: slice_assign_compute(k, &op, var); break;
    default: break;
    }
  }
  /* The op's temps and inputs go before the variable's lock. */
  ocl_op_end(&op);
  variable_end(var, locks);
}

static void scatter_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_OPS <= OCL_MAX_FAMILY_OPS, "one create function per op");
OCL_FAMILY_CREATES(scatter, scatter_create);

/* ---- ZerosLike and AddN of DT_VARIANT ------------------------------------------------- */

/* TensorFlow calls these back for each tensor inside the TensorLists, with
 * no kernel instance: the add kernels are static, named at registration. */
static struct ocl_kernel variant_add_kernels[S_COUNT];
/* Set at registration: whether the callbacks must delete their tensors
 * (TensorFlow before 2.22) or TensorFlow does (2.22 on). */
static bool variant_tensors_are_ours;

static void release_variant_tensors(TF_Tensor *a, TF_Tensor *b,
                                    TF_Tensor *out)
{
  if (!variant_tensors_are_ours)
    return;
  ocl_tf.DeleteTensor(a);
  if (b != NULL)
    ocl_tf.DeleteTensor(b);
  ocl_tf.DeleteTensor(out);
}

static void variant_zeros(TF_OpKernelContext *ctx, TF_Tensor *input,
                          TF_Tensor *out)
{
  struct ocl_op op;
  static const uint8_t zero = 0;
  ocl_op_begin(&op, ctx);
  ocl_op_fill(&op, out, 0, &zero, 1, ocl_tf.TensorByteSize(out));
  release_variant_tensors(input, NULL, out);
  ocl_op_end(&op);
}

static void variant_add(TF_OpKernelContext *ctx, TF_Tensor *a, TF_Tensor *b,
                        TF_Tensor *out)
{
  struct ocl_op op;
  enum storage st;
  TF_DataType dtype = ocl_tf.TensorType(a);
  int64_t n = ocl_tf.TensorElementCount(a);
  ocl_op_begin(&op, ctx);
  if (dtype == TF_BOOL || !storage_of(dtype, &st))
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "AddN of TensorLists of %s on the OPENCL device",
                dtype_string(dtype));
  else if (ocl_tf.TensorType(b) != dtype ||
           ocl_tf.TensorElementCount(b) != n)
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "AddN of TensorLists: elements of %s [%lld] and %s [%lld]",
                dtype_string(dtype), (long long)n,
                dtype_string(ocl_tf.TensorType(b)),
                (long long)ocl_tf.TensorElementCount(b));
  else if (n > 0 && storage_available(&op, st, dtype)) {
    const struct ocl_arg args[] = {OCL_TENSOR(a), OCL_TENSOR(b),
                                   OCL_TENSOR(out), OCL_LONG(n)};
    ocl_launch_1d(&op, &variant_add_kernels[st], (size_t)n, args, 4);
  }
  release_variant_tensors(a, b, out);
  ocl_op_end(&op);
}

static void *variant_create(TF_OpKernelConstruction *ctx)
{
  (void)ctx;
  /* Stateless; a non-NULL pointer all the same. */
  static int instance;
  return &instance;
}

static void zeros_like_variant_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct ocl_op op;
  (void)kernel;
  ocl_op_begin(&op, ctx);
  ocl_tf.ZerosLikeVariant(ctx, variant_zeros, op.status);
  ocl_op_end(&op);
}

static void addn_variant_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct ocl_op op;
  (void)kernel;
  ocl_op_begin(&op, ctx);
  ocl_tf.AddNVariant(ctx, variant_add, op.status);
  ocl_op_end(&op);
}

static void variant_delete(void *kernel) { (void)kernel; }

/* ---- Registration ---------------------------------------------------------------------- */

void ocl_register_scatter_kernels(void)
{
  static const TF_DataType index_types[] = {TF_INT32, TF_INT64};
  bool can_access = ocl_tf.MaybeLockVariableInputMutexesInOrder != NULL &&
                    ocl_tf.GetInputTensorFromVariable != NULL &&
                    ocl_tf.ReleaseVariableInputLockHolder != NULL;

  for (int i = 0; i < NUM_OPS; i++) {
    const struct scatter_op *op = &scatter_ops[i];
    if (op->needs_variables && !can_access)
      continue;
    for (int t = 0; t < 64; t++) {
      TF_DataType dtype = (TF_DataType)t;
      bool any_index = (op->types & TB(dtype)) != 0;
      if (!any_index && !(op->int32_only_types & TB(dtype)))
        continue;
      int num_index_types = any_index && op->kind != SLICE_ASSIGN ? 2 : 1;
      for (int x = 0; x < num_index_types; x++)
        ocl_register_kernel(&(const struct ocl_kernel_spec){
            .op = op->op,
            .create = scatter_creates[i],
            .compute = scatter_compute_any,
            .destroy = scatter_delete,
            .type_attrs = {op->type_attr,
                           op->kind == SLICE_ASSIGN ? NULL : "Tindices"},
            .types = {dtype, index_types[x]},
            .host_args = op->host_args,
        });
    }
  }

  /* TensorFlow's GPU registrations of both keep no argument in host memory
   * (a DT_VARIANT tensor lives on the host whatever its memory type). */
  for (int st = 0; st < S_M128; st++)
    ocl_kernel_init(&variant_add_kernels[st], &programs[st], "add");
  variant_tensors_are_ours = ocl_tf_variant_callbacks_own_tensors();
  if (ocl_tf.ZerosLikeVariant != NULL)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "ZerosLike",
        .create = variant_create,
        .compute = zeros_like_variant_compute,
        .destroy = variant_delete,
        .type_attrs = {"T"},
        .types = {TF_VARIANT},
    });
  if (ocl_tf.AddNVariant != NULL)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "AddN",
        .create = variant_create,
        .compute = addn_variant_compute,
        .destroy = variant_delete,
        .type_attrs = {"T"},
        .types = {TF_VARIANT},
    });
}
