/* Data movement: Transpose, ConcatV2, Pack, Unpack, Split, SplitV, Slice,
 * StridedSlice, StridedSliceGrad, Tile, Pad, PadV2, the
 * _ParallelConcatStart/_ParallelConcatUpdate pair of tf.parallel_stack,
 * SpaceToBatchND, BatchToSpaceND, ReverseV2, Roll, DepthToSpace,
 * SpaceToDepth, MirrorPad, MirrorPadGrad, ReverseSequence, LinSpace and
 * Bitcast.
 *
 * These ops move bytes, so one program per element size (and index width)
 * serves every dtype (movement.cl); 16-byte elements (complex128) move as
 * two 8-byte halves, an innermost dim of 2 added on the host. Every op but
 * Tile, Pad and the ops below reduces on the host to strided copies
 * (kernels/shape.h ocl_strided_copy): a contiguous one is a buffer copy,
 * the rest one kernel per at most OCL_MAX_DIMS collapsed dims (more are
 * split into launches over the leading dims). Concat/Split/Pack/Unpack
 * are one launch per 8 inputs or outputs (concat_parts, split_parts;
 * a strided copy per part from 2^30 elements);
 * StridedSliceGrad with unit strides one pad; SpaceToBatchND/BatchToSpaceND one
 * strided copy per offset in the block; ReverseV2 one with negative
 * strides; Roll one per box of the rolled dims; DepthToSpace and
 * SpaceToDepth one transpose of a 6-D view. MirrorPad (a reflection per
 * coordinate), MirrorPadGrad (sums), ReverseSequence (lengths in device
 * memory) and LinSpace (values) have kernels of their own. Any rank
 * TensorFlow allows is taken.
 *
 * int32 data stays in device memory (but ReverseV2's, host memory as in
 * TensorFlow's GPU registration); only the shape-like arguments (perm,
 * axis, begin/end/strides, sizes, multiples, paddings) are HostMemory, read
 * on the host in whatever integer width TensorFlow allows (no Tidx-style
 * constraint is registered: StridedSlice's Index may be int16, SplitV's
 * Tlen int8). Outputs equal to an input (identity slices, perms, tiles,
 * pads, one-way splits) forward the input, as TensorFlow does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_movement[];

/* One program per element size (1, 2, 4, 8 bytes) and index width: the
 * int programs whenever a launch's extents fit (see fits_int), the long
 * ones beyond. */
enum { IDX32, IDX64, NUM_WIDTHS };
#define MOVEMENT_PROGRAMS(suffix, index)                                     \
  {                                                                          \
    {"movement_1" suffix, ocl_cl_source_movement,                          \
     "-DT=uchar -DELEM=1 -DI=" index},                                       \
    {"movement_2" suffix, ocl_cl_source_movement,                          \
     "-DT=ushort -DELEM=2 -DI=" index},                                      \
    {"movement_4" suffix, ocl_cl_source_movement,                          \
     "-DT=uint -DELEM=4 -DI=" index},                                        \
    {"movement_8" suffix, ocl_cl_source_movement,                          \
     "-DT=ulong -DELEM=8 -DI=" index},                                       \
  }
OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_WIDTHS][4] = {
    MOVEMENT_PROGRAMS("_i32", "int"),
    MOVEMENT_PROGRAMS("_i64", "long"),
};

/* movement.cl's kernels. */
enum {
  COPY_FLAT,
  COPY_TILE,
  COPY_CHUNKS,
  COPY_TILES8,
  TILE_FLAT,
  TILE_CHUNKS,
  PAD_FLAT,
  PAD_CHUNKS,
  MIRROR_FLAT,
  MIRROR_CHUNKS,
  MIRROR_GRAD,
  REV_SEQ_FLAT,
  REV_SEQ_CHUNKS,
  LINSPACE_FLAT,
  CONCAT_PARTS,
  SPLIT_PARTS,
  NUM_KERNELS
};
static const char *const kernel_names[NUM_KERNELS] = {
    "copy_flat",      "copy_tile",     "copy_chunks",  "copy_tiles8",
    "tile_flat",      "tile_chunks",   "pad_flat",     "pad_chunks",
    "mirror_flat",    "mirror_chunks", "mirror_grad",  "rev_seq_flat",
    "rev_seq_chunks", "linspace_flat", "concat_parts", "split_parts"};

enum movement_kind {
  TRANSPOSE, CONCAT_V2, PACK, UNPACK, SPLIT, SPLIT_V, SLICE, STRIDED_SLICE,
  STRIDED_SLICE_GRAD, TILE, PAD, PAD_V2, PARALLEL_CONCAT_START,
  PARALLEL_CONCAT_UPDATE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, REVERSE_V2,
  ROLL, MIRROR_PAD, MIRROR_PAD_GRAD, DEPTH_TO_SPACE, SPACE_TO_DEPTH,
  REVERSE_SEQUENCE, LIN_SPACE
};

struct movement_op {
  const char *op;
  enum movement_kind kind;
  const char *host_args[5]; /* NULL-terminated */
  const char *type_attr;    /* NULL: "T" */
  /* int32's instead of host_args (NULL: the same): all in host memory,
   * computed on the host. */
  const char *const *int32_host_args;
  /* The dtypes of movement_types that TensorFlow has no kernel of the op
   * for on any device, as bits of TF_DataType. */
  uint64_t unsupported;
};

#define TB(t) ((uint64_t)1 << (t))
/* The dtypes of movement_types outside `mask`: for ops whose GPU kernels
 * TensorFlow registers for a few dtypes only. */
#define ONLY(mask) (~(uint64_t)(mask))
#define FLOATS (TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_BFLOAT16) | TB(TF_DOUBLE))

static const char *const start_int32_host[] = {"output", NULL};
static const char *const update_int32_host[] = {"value", "update", "output",
                                                NULL};
/* TensorFlow's GPU ReverseV2 of int32 runs its CPU kernel on host memory. */
static const char *const reverse_int32_host[] = {"tensor", "axis", "output",
                                                 NULL};

static const struct movement_op movement_ops[] = {
    {"Transpose", TRANSPOSE, {"perm", NULL}, NULL, NULL, 0},
    {"ConcatV2", CONCAT_V2, {"axis", NULL}, NULL, NULL, 0},
    {"Pack", PACK, {NULL}, NULL, NULL, 0},
    {"Unpack", UNPACK, {NULL}, NULL, NULL, 0},
    {"Split", SPLIT, {"split_dim", NULL}, NULL, NULL, 0},
    {"SplitV", SPLIT_V, {"size_splits", "split_dim", NULL}, NULL, NULL, 0},
    {"Slice", SLICE, {"begin", "size", NULL}, NULL, NULL, 0},
    {"StridedSlice", STRIDED_SLICE, {"begin", "end", "strides", NULL}, NULL,
     NULL, 0},
    {"StridedSliceGrad", STRIDED_SLICE_GRAD,
     {"shape", "begin", "end", "strides", NULL}, NULL, NULL, 0},
    /* TensorFlow's Tile takes no uint16 (its CPU kernel refuses it). */
    {"Tile", TILE, {"multiples", NULL}, NULL, NULL, TB(TF_UINT16)},
    {"Pad", PAD, {"paddings", NULL}, NULL, NULL, 0},
    {"PadV2", PAD_V2, {"paddings", NULL}, NULL, NULL, 0},
    /* TensorFlow's parallel_concat rewrite makes a Start, one in-place
     * Update per value, and an Identity of Start's output that waits for
     * the updates by control edges only. All three must run on one device:
     * with Start and Update on the CPU and the Identity here, the copy to
     * the device left before the updates and parallel_stack returned
     * zeros. */
    {"_ParallelConcatStart", PARALLEL_CONCAT_START, {NULL}, "dtype",
     start_int32_host, 0},
    {"_ParallelConcatUpdate", PARALLEL_CONCAT_UPDATE, {NULL}, NULL,
     update_int32_host, 0},
    /* Real numbers only, as TensorFlow registers them. */
    {"SpaceToBatchND", SPACE_TO_BATCH_ND, {"block_shape", "paddings", NULL},
     NULL, NULL, TB(TF_BOOL) | TB(TF_COMPLEX64) | TB(TF_COMPLEX128)},
    {"BatchToSpaceND", BATCH_TO_SPACE_ND, {"block_shape", "crops", NULL},
     NULL, NULL, TB(TF_BOOL) | TB(TF_COMPLEX64) | TB(TF_COMPLEX128)},
    /* The dtypes of TensorFlow's GPU kernels (2.19): the ones below. */
    {"ReverseV2", REVERSE_V2, {"axis", NULL}, NULL, reverse_int32_host,
     ONLY(FLOATS | TB(TF_UINT8) | TB(TF_INT8) | TB(TF_BOOL) | TB(TF_INT32) |
          TB(TF_COMPLEX64) | TB(TF_COMPLEX128))},
    {"Roll", ROLL, {"shift", "axis", NULL}, NULL, NULL,
     ONLY(FLOATS | TB(TF_INT32) | TB(TF_UINT32) | TB(TF_INT64) |
          TB(TF_COMPLEX64) | TB(TF_COMPLEX128))},
    {"MirrorPad", MIRROR_PAD, {"paddings", NULL}, NULL, NULL, ONLY(FLOATS)},
    {"MirrorPadGrad", MIRROR_PAD_GRAD, {"paddings", NULL}, NULL, NULL,
     ONLY(FLOATS)},
    /* qint8 (NCHW_VECT_C only) is left out: no movement dtype. */
    {"DepthToSpace", DEPTH_TO_SPACE, {NULL}, NULL, NULL,
     ONLY(TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_BFLOAT16))},
    {"SpaceToDepth", SPACE_TO_DEPTH, {NULL}, NULL, NULL,
     ONLY(TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_BFLOAT16) | TB(TF_UINT8))},
    /* seq_lengths in device memory, as TensorFlow's GPU kernel has it. */
    {"ReverseSequence", REVERSE_SEQUENCE, {NULL}, NULL, NULL,
     ONLY(FLOATS | TB(TF_BOOL))},
    /* TensorFlow's is a DEVICE_DEFAULT kernel writing host memory; here
     * the output stays on the device for the ops that read it. */
    {"LinSpace", LIN_SPACE, {"start", "stop", "num", NULL}, NULL, NULL,
     ONLY(TB(TF_FLOAT) | TB(TF_DOUBLE))},
};

#define NUM_OPS ((int)(sizeof(movement_ops) / sizeof(movement_ops[0])))

enum { BEGIN_MASK, END_MASK, ELLIPSIS_MASK, NEW_AXIS_MASK, SHRINK_AXIS_MASK };

struct movement_kernel {
  const struct movement_op *op;
  TF_DataType dtype;
  /* The device element: `unit` bytes, `halves` of them per element (2 for
   * 16-byte dtypes, else 1). */
  size_t unit;
  int halves;
  int64_t axis;     /* Pack, Unpack; _ParallelConcatUpdate's loc */
  int64_t masks[5]; /* StridedSlice(Grad) */
  int shape_rank;   /* _ParallelConcatStart's shape */
  int64_t shape[OCL_MAX_RANK];
  int64_t block_size;           /* DepthToSpace, SpaceToDepth */
  bool nchw, vect_c;            /* their data_format */
  int64_t sym;                  /* MirrorPad(Grad): 1 SYMMETRIC, 0 REFLECT */
  int64_t seq_dim, batch_dim;   /* ReverseSequence */
  bool len64;                   /* ReverseSequence's Tlen is int64 */
  struct ocl_kernel k[NUM_WIDTHS][NUM_KERNELS];
};

/* What movement.cl's move_t reads, in 64 bits; narrowed to int for the
 * int programs. Every member is an int64_t: the union views it as an
 * array. */
#define MOVE_FIELDS (5 * OCL_MAX_DIMS + 15)
union move_args {
  struct {
    int64_t dims[OCL_MAX_DIMS];
    int64_t in_strides[OCL_MAX_DIMS];
    int64_t out_strides[OCL_MAX_DIMS];
    int64_t in_dims[OCL_MAX_DIMS];
    int64_t before[OCL_MAX_DIMS];
    int64_t rank, n, in_offset, out_offset, p, tiles_l, tiles_p, chunk, vmask,
        has_value, mode, bdim, sdim, len64, bf16;
  } a;
  int64_t v[MOVE_FIELDS];
};
_Static_assert(sizeof(union move_args) == MOVE_FIELDS * sizeof(int64_t),
               "move_args is an array of int64");

/* The int programs take a launch whose elements and spans (in device
 * elements) stay below this: the CPU kernels step one stride past a dim's
 * end before they carry, so half of int's range is kept in reserve. */
#define INT_EXTENT_MAX ((int64_t)1 << 30)

/* CPU shape: a work-item copies at least this many elements, and a launch
 * has about 4 work-items per compute unit. */
#define CPU_CHUNK_MIN 8192

/* ---- Helpers --------------------------------------------------------------- */

/* A tensor's dims, any rank TensorFlow allows. */
static int tensor_dims(const TF_Tensor *t, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  for (int i = 0; i < rank; i++)
    dims[i] = ocl_tf.Dim(t, i);
  return rank;
}

/* "[2,3]" into buf (error paths only). */
#define SHAPE_STR_LEN 512
static const char *shape_str(const int64_t *dims, int rank, char *buf)
{
  ocl_shape_format(dims, rank, buf, SHAPE_STR_LEN);
  return buf;
}
#define SHAPE(dims, rank) shape_str(dims, rank, (char[SHAPE_STR_LEN]){0})

static bool same_dims(const int64_t *a, int a_rank, const int64_t *b,
                      int b_rank)
{
  return a_rank == b_rank &&
         (a_rank == 0 || memcmp(a, b, sizeof(int64_t) * (size_t)a_rank) == 0);
}

static int64_t product(const int64_t *dims, int from, int to)
{
  int64_t n = 1;
  for (int d = from; d < to; d++)
    n *= dims[d];
  return n;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* The lowest and highest element a strided index space touches. */
static void span(const int64_t *dims, int rank, const int64_t *strides,
                 int64_t offset, int64_t *lo, int64_t *hi)
{
  *lo = *hi = offset;
  for (int d = 0; d < rank; d++) {
    int64_t reach = (dims[d] - 1) * strides[d];
    if (reach < 0)
      *lo += reach;
    else
      *hi += reach;
  }
}

/* Resolves device elements [lo, hi] of t. */
static bool resolve(struct ocl_op *op, const struct movement_kernel *k,
                    const TF_Tensor *t, int64_t lo, int64_t hi,
                    struct ocl_buffer *b)
{
  return ocl_op_buffer(op, t, (size_t)lo * k->unit,
                       (size_t)(hi - lo + 1) * k->unit, b);
}

/* Enqueues kernel `which` of the width `a` needs, with `buffers` and the
 * arguments struct last. */
static bool launch(struct ocl_op *op, struct movement_kernel *k, int which,
                   bool wide, const struct ocl_buffer *buffers,
                   int num_buffers, const union move_args *a,
                   cl_uint work_dim, const size_t *global, const size_t *local)
{
  struct ocl_arg args[4];
  cl_int narrow[MOVE_FIELDS];
  for (int i = 0; i < num_buffers; i++)
    args[i] = OCL_BUF(buffers[i]);
  if (wide) {
    args[num_buffers] = OCL_BYTES(a->v, sizeof(a->v));
  } else {
    for (int i = 0; i < MOVE_FIELDS; i++)
      narrow[i] = (cl_int)a->v[i];
    args[num_buffers] = OCL_BYTES(narrow, sizeof(narrow));
  }
  struct ocl_kernel *kernel = &k->k[wide][which];
  if (global == NULL) /* a work-item per element */
    return ocl_launch_1d(op, kernel, (size_t)a->a.n, args, num_buffers + 1);
  if (local == NULL) /* a work-item per chunk, one per work-group */
    return ocl_launch_rows(op, kernel, global[0], args, num_buffers + 1);
  return ocl_launch(op, kernel, work_dim, global, local, args,
                    num_buffers + 1);
}

/* CPU shape: elements per work-item for n elements. */
static int64_t cpu_chunk(const struct ocl_device_info *info, int64_t n)
{
  int64_t items = 4 * (int64_t)(info->compute_units > 0 ? info->compute_units
                                                         : 1);
  int64_t chunk = ceil_div(n, items);
  return chunk < CPU_CHUNK_MIN ? CPU_CHUNK_MIN : chunk;
}

/* ---- Strided copies ------------------------------------------------------ */

/* One launch over at most OCL_MAX_DIMS collapsed dims, at element offsets
 * in_off and out_off (device elements). */
static bool copy_launch(struct ocl_op *op, struct movement_kernel *k,
                        const TF_Tensor *x, TF_Tensor *y, const int64_t *dims,
                        int rank, const int64_t *in_strides,
                        const int64_t *out_strides, int64_t in_off,
                        int64_t out_off)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  int64_t in_lo, in_hi, out_lo, out_hi, n = product(dims, 0, rank);
  span(dims, rank, in_strides, in_off, &in_lo, &in_hi);
  span(dims, rank, out_strides, out_off, &out_lo, &out_hi);
  struct ocl_buffer b[2];
  if (!resolve(op, k, x, in_lo, in_hi, &b[0]) ||
      !resolve(op, k, y, out_lo, out_hi, &b[1]))
    return false;
  bool wide = n >= INT_EXTENT_MAX || in_hi - in_lo >= INT_EXTENT_MAX ||
              out_hi - out_lo >= INT_EXTENT_MAX;
  union move_args a;
  memset(&a, 0, sizeof(a));
  a.a.rank = rank;
  a.a.n = n;
  a.a.in_offset = in_off - in_lo;
  a.a.out_offset = out_off - out_lo;
  for (int d = 0; d < rank; d++) {
    a.a.dims[d] = dims[d];
    a.a.in_strides[d] = in_strides[d];
    a.a.out_strides[d] = out_strides[d];
  }
  /* A transpose: the last output dim strides in the input while another
   * dim (p) is contiguous there. */
  int l = rank - 1, p = -1;
  for (int d = 0; d < l && abs64(in_strides[l]) != 1; d++)
    if (abs64(in_strides[d]) == 1)
      p = d;
  int64_t batches = p >= 0 ? n / (dims[l] * dims[p]) : 0;
  if (info->cpu_shape) {
    if (p >= 0 && dims[p] >= 8 && dims[l] >= 8) {
      a.a.p = p;
      a.a.tiles_l = ceil_div(dims[l], 8);
      a.a.tiles_p = ceil_div(dims[p], 8);
      a.a.n = batches * a.a.tiles_p; /* dim 1 of the range */
      size_t max = ocl_kernel_max_local(op, &k->k[wide][COPY_TILES8]);
      size_t global[2] = {(size_t)a.a.tiles_l, (size_t)a.a.n};
      size_t local[2] = {16, 4};
      if (max == 0)
        return false;
      if (max < 64)
        local[0] = local[1] = 1;
      return launch(op, k, COPY_TILES8, wide, b, 2, &a, 2, global, local);
    }
    a.a.chunk = cpu_chunk(info, n);
    size_t items = (size_t)ceil_div(n, a.a.chunk);
    return launch(op, k, COPY_CHUNKS, wide, b, 2, &a, 1, &items, NULL);
  }
  if (p >= 0) {
    size_t max = ocl_kernel_max_local(op, &k->k[wide][COPY_TILE]);
    if (max == 0)
      return false;
    if (max >= 32 * 8) {
      a.a.p = p;
      a.a.tiles_l = ceil_div(dims[l], 32);
      a.a.tiles_p = ceil_div(dims[p], 32);
      size_t groups = (size_t)(batches * a.a.tiles_l * a.a.tiles_p);
      size_t global[2] = {groups * 32, 8}, local[2] = {32, 8};
      return launch(op, k, COPY_TILE, wide, b, 2, &a, 2, global, local);
    }
  }
  return launch(op, k, COPY_FLAT, wide, b, 2, &a, 1, NULL, NULL);
}

/* y[view] = x[view]: element c of the index space `dims` reads x[in_offset
 * + sum c_d * in_strides[d]] and writes y[out_offset + sum c_d *
 * out_strides[d]] (dtype elements; strides may be negative). A buffer copy
 * when contiguous, else kernels. */
static bool copy_view(struct ocl_op *op, struct movement_kernel *k,
                      const TF_Tensor *x, TF_Tensor *y, const int64_t *dims,
                      int rank, const int64_t *in_strides,
                      const int64_t *out_strides, int64_t in_offset,
                      int64_t out_offset)
{
  if (product(dims, 0, rank) == 0)
    return true;
  struct ocl_strided_copy c;
  if (k->halves == 2) {
    /* Two 8-byte halves per element: one more, innermost dim. */
    int64_t d2[OCL_MAX_RANK + 1], is2[OCL_MAX_RANK + 1], os2[OCL_MAX_RANK + 1];
    for (int d = 0; d < rank; d++) {
      d2[d] = dims[d];
      is2[d] = 2 * in_strides[d];
      os2[d] = 2 * out_strides[d];
    }
    d2[rank] = 2;
    is2[rank] = os2[rank] = 1;
    ocl_strided_copy_init(&c, d2, rank + 1, is2, os2, 2 * in_offset,
                          2 * out_offset);
  } else {
    ocl_strided_copy_init(&c, dims, rank, in_strides, out_strides, in_offset,
                          out_offset);
  }
  if (c.contiguous)
    return ocl_op_copy(op, x, (size_t)c.in_offset * k->unit, y,
                       (size_t)c.out_offset * k->unit,
                       (size_t)c.elements * k->unit);
  if (c.rank <= OCL_MAX_DIMS)
    return copy_launch(op, k, x, y, c.dims, c.rank, c.in_strides,
                       c.out_strides, c.in_offset, c.out_offset);
  /* More dims than a kernel takes (alternating strides in 9 or more dims):
   * a launch per index of the leading ones. */
  int lead = c.rank - OCL_MAX_DIMS;
  int64_t index[OCL_MAX_RANK];
  for (int d = 0; d < lead; d++)
    index[d] = 0;
  for (;;) {
    int64_t in_off = c.in_offset, out_off = c.out_offset;
    for (int d = 0; d < lead; d++) {
      in_off += index[d] * c.in_strides[d];
      out_off += index[d] * c.out_strides[d];
    }
    if (!copy_launch(op, k, x, y, c.dims + lead, OCL_MAX_DIMS,
                     c.in_strides + lead, c.out_strides + lead, in_off,
                     out_off))
      return false;
    int d = lead - 1;
    for (; d >= 0 && ++index[d] == c.dims[d]; d--)
      index[d] = 0;
    if (d < 0)
      return true;
  }
}

/* A [rows, cols] block between row-major matrices of in_row and out_row
 * columns, at column offsets in_col and out_col (concat, split). */
static bool copy_block(struct ocl_op *op, struct movement_kernel *k,
                       const TF_Tensor *x, TF_Tensor *y, int64_t rows,
                       int64_t cols, int64_t in_row, int64_t in_col,
                       int64_t out_row, int64_t out_col)
{
  return copy_view(op, k, x, y, (int64_t[]){rows, cols}, 2,
                   (int64_t[]){in_row, 1}, (int64_t[]){out_row, 1}, in_col,
                   out_col);
}

/* ---- Parts of a whole: Concat, Pack, Split, Unpack ---------------------- */

/* movement.cl's parts_t: the parts a launch moves. */
#define MAX_PARTS 8
struct parts_args {
  cl_int rows, cols, whole_cols, first_col, n, chunk, count, unused;
  cl_int start[MAX_PARTS + 1];
};

/* The parts of a [rows, whole_cols] whole (device elements) gathered for
 * one launch: non-empty [rows, cols[i]] tensors side by side from column
 * first_col. */
struct parts {
  TF_Tensor *t[MAX_PARTS];
  int64_t cols[MAX_PARTS];
  int count;
  int64_t first_col;
};

/* Whether the parts of a [rows, whole_cols] whole (dtype elements) move
 * in one launch per MAX_PARTS rather than a copy each: parts_t counts in
 * 32-bit ints, so a whole of 2^30 device elements or more takes
 * copy_block per part instead. Contiguous parts (one row: the outermost
 * axis) take them too, one command for the op instead of a buffer copy
 * per part. */
static bool parts_in_one_launch(const struct movement_kernel *k, int64_t rows,
                                int64_t whole_cols)
{
  return whole_cols * k->halves < INT_EXTENT_MAX &&
         rows * whole_cols * k->halves < INT_EXTENT_MAX;
}

/* Moves the gathered parts between them and `whole` (into it when
 * !to_parts), then releases them (but `keep`, which the caller still holds)
 * and makes room for the next. */
static bool parts_flush(struct ocl_op *op, struct movement_kernel *k,
                        bool to_parts, const TF_Tensor *whole, int64_t rows,
                        int64_t whole_cols, struct parts *p,
                        const TF_Tensor *keep)
{
  if (p->count == 0)
    return true;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  struct parts_args a;
  memset(&a, 0, sizeof(a));
  a.rows = (cl_int)rows;
  a.whole_cols = (cl_int)(whole_cols * k->halves);
  a.first_col = (cl_int)(p->first_col * k->halves);
  a.count = p->count;
  for (int i = 0; i < MAX_PARTS; i++)
    a.start[i + 1] =
        a.start[i] + (i < p->count ? (cl_int)(p->cols[i] * k->halves) : 0);
  a.cols = a.start[p->count];
  a.n = a.rows * a.cols;
  /* Slots past count are never touched: they repeat part 0. */
  struct ocl_arg args[MAX_PARTS + 2];
  int first_part = to_parts ? 1 : 0;
  args[to_parts ? 0 : MAX_PARTS] = OCL_TENSOR(whole);
  for (int i = 0; i < MAX_PARTS; i++)
    args[first_part + i] = OCL_TENSOR(p->t[i < p->count ? i : 0]);
  args[MAX_PARTS + 1] = OCL_BYTES(&a, sizeof(a));
  struct ocl_kernel *kernel =
      &k->k[IDX32][to_parts ? SPLIT_PARTS : CONCAT_PARTS];
  bool ok = true; /* rows == 0: the parts are empty, nothing moves */
  if (a.n > 0 && info->cpu_shape) {
    a.chunk = (cl_int)cpu_chunk(info, a.n);
    ok = ocl_launch_rows(op, kernel, (size_t)ceil_div(a.n, a.chunk), args,
                         MAX_PARTS + 2);
  } else if (a.n > 0) {
    a.chunk = 1;
    ok = ocl_launch_1d(op, kernel, (size_t)a.n, args, MAX_PARTS + 2);
  }
  for (int i = 0; i < p->count; i++) {
    p->first_col += p->cols[i];
    if (p->t[i] != keep)
      ocl_op_release(op, p->t[i]);
  }
  p->count = 0;
  return ok;
}

/* Adds t, [rows, cols] (dtype elements), as the next part, moving the
 * gathered ones first when full. An empty part only advances the
 * column. */
static bool parts_add(struct ocl_op *op, struct movement_kernel *k,
                      bool to_parts, const TF_Tensor *whole, int64_t rows,
                      int64_t whole_cols, struct parts *p, TF_Tensor *t,
                      int64_t cols, const TF_Tensor *keep)
{
  if (cols == 0) {
    if (t != keep)
      ocl_op_release(op, t);
    return true;
  }
  if (p->count == MAX_PARTS &&
      !parts_flush(op, k, to_parts, whole, rows, whole_cols, p, keep))
    return false;
  p->t[p->count] = t;
  p->cols[p->count++] = cols;
  return true;
}

/* ---- Tile and Pad -------------------------------------------------------- */

/* One launch over the last `rank` groups of e (at most OCL_MAX_DIMS), the
 * output block at device element out_off, its input block at in_off;
 * `outside`: the block lies in the padding (Pad). */
static bool expand_launch(struct ocl_op *op, struct movement_kernel *k,
                          bool is_pad, const struct ocl_expand *e, int first,
                          const TF_Tensor *x, TF_Tensor *y,
                          const TF_Tensor *value, int64_t in_off,
                          int64_t out_off, bool outside)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  int rank = e->rank - first;
  int64_t n = product(e->dims, first, e->rank);
  int64_t in_n = product(e->in_dims, first, e->rank);
  union move_args a;
  memset(&a, 0, sizeof(a));
  a.a.rank = rank;
  a.a.n = n;
  for (int d = 0; d < rank; d++) {
    a.a.dims[d] = e->dims[first + d];
    a.a.in_dims[d] = e->in_dims[first + d];
    a.a.before[d] = e->before[first + d];
    a.a.in_strides[d] = e->in_strides[first + d];
    a.a.out_strides[d] = e->out_strides[first + d];
  }
  struct ocl_buffer b[3] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
  if (outside)
    a.a.in_dims[0] = 0; /* nothing is inside */
  else if (in_n > 0 && !resolve(op, k, x, in_off, in_off + in_n - 1, &b[0]))
    return false;
  if (!resolve(op, k, y, out_off, out_off + n - 1, &b[1]))
    return false;
  if (is_pad && value != NULL) {
    a.a.has_value = 1;
    a.a.vmask = k->halves - 1;
    if (!resolve(op, k, value, 0, k->halves - 1, &b[2]))
      return false;
  }
  bool wide = n >= INT_EXTENT_MAX || in_n >= INT_EXTENT_MAX;
  int nb = is_pad ? 3 : 2;
  if (info->cpu_shape) {
    a.a.chunk = cpu_chunk(info, n);
    size_t items = (size_t)ceil_div(n, a.a.chunk);
    return launch(op, k, is_pad ? PAD_CHUNKS : TILE_CHUNKS, wide, b, nb, &a,
                  1, &items, NULL);
  }
  return launch(op, k, is_pad ? PAD_FLAT : TILE_FLAT, wide, b, nb, &a, 1,
                NULL, NULL);
}

/* The output of Tile or Pad over e: a launch per index of the groups
 * beyond the last OCL_MAX_DIMS. */
static bool expand_run(struct ocl_op *op, struct movement_kernel *k,
                       bool is_pad, const struct ocl_expand *e,
                       const TF_Tensor *x, TF_Tensor *y,
                       const TF_Tensor *value)
{
  if (e->elements == 0)
    return true;
  int lead = e->rank > OCL_MAX_DIMS ? e->rank - OCL_MAX_DIMS : 0;
  int64_t index[OCL_MAX_RANK];
  for (int d = 0; d < lead; d++)
    index[d] = 0;
  for (;;) {
    int64_t in_off = 0, out_off = 0;
    bool outside = false;
    for (int d = 0; d < lead; d++) {
      int64_t c = is_pad ? index[d] - e->before[d] : index[d] % e->in_dims[d];
      outside |= c < 0 || c >= e->in_dims[d];
      in_off += c * e->in_strides[d];
      out_off += index[d] * e->out_strides[d];
    }
    if (!expand_launch(op, k, is_pad, e, lead, x, y, value, in_off, out_off,
                       outside))
      return false;
    int d = lead - 1;
    for (; d >= 0 && ++index[d] == e->dims[d]; d--)
      index[d] = 0;
    if (d < 0)
      return true;
  }
}

/* ---- Transpose --------------------------------------------------------- */

static void transpose(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK], p_dims[OCL_MAX_RANK], perm[OCL_MAX_RANK];
  struct ocl_transpose t;

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *p = x ? ocl_op_input(op, 1) : NULL;
  if (p == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  int p_rank = tensor_dims(p, p_dims);
  if (p_rank != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "perm must be rank 1, got shape %s",
                SHAPE(p_dims, p_rank));
    return;
  }
  int64_t n = p_dims[0];
  bool identity = true;
  for (int64_t i = 0; i < n && i < OCL_MAX_RANK; i++) {
    perm[i] = ocl_host_int(p, i);
    identity &= perm[i] == i;
  }
  if (!ocl_transpose_init(&t, x_dims, rank, perm, (int)n, op->status))
    return;
  if (identity) {
    ocl_op_forward(op, 0, x);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, t.out_dims, t.out_rank);
  if (y == NULL)
    return;
  int64_t out_strides[OCL_MAX_RANK];
  ocl_shape_strides(t.dims, t.rank, out_strides);
  copy_view(op, k, x, y, t.dims, t.rank, t.in_strides, out_strides, 0, 0);
}

/* ---- ConcatV2, Pack ----------------------------------------------------- */

/* Inputs are taken one at a time and released (ConcatV2 of hundreds):
 * the checks in a first pass, the copies in a second. */
static void concat(struct ocl_op *op, struct movement_kernel *k)
{
  int n = ocl_tf.NumInputs(op->ctx) - 1;
  int64_t a_dims[OCL_MAX_RANK], first[OCL_MAX_RANK], dims[OCL_MAX_RANK];

  TF_Tensor *axis_t = ocl_op_input(op, n);
  TF_Tensor *x0 = axis_t ? ocl_op_input(op, 0) : NULL;
  if (x0 == NULL)
    return;
  int a_rank = tensor_dims(axis_t, a_dims);
  if (!(a_rank == 0 || (a_rank == 1 && a_dims[0] == 1))) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "axis tensor should be a scalar integer, but got shape %s",
                SHAPE(a_dims, a_rank));
    return;
  }
  int64_t concat_dim = ocl_host_int(axis_t, 0);
  int rank = tensor_dims(x0, first);
  int64_t axis = concat_dim < 0 ? concat_dim + rank : concat_dim;
  if (!((0 <= axis && axis < rank) || concat_dim == 0)) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "ConcatOp : Expected concatenating dimensions in the range "
                "[%d, %d), but got %lld",
                -rank, rank, (long long)concat_dim);
    return;
  }
  if (rank == 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "ConcatOp : Can't concatenate scalars (use tf.stack instead)");
    return;
  }
  int64_t out_concat = 0;
  for (int i = 0; i < n; i++) {
    TF_Tensor *x = i == 0 ? x0 : ocl_op_input(op, i);
    if (x == NULL)
      return;
    int x_rank = tensor_dims(x, dims);
    if (x_rank != rank) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "ConcatOp : Ranks of all input tensors should match: "
                  "shape[0] = %s vs. shape[%d] = %s",
                  SHAPE(first, rank), i, SHAPE(dims, x_rank));
      return;
    }
    for (int d = 0; d < rank; d++) {
      if (d != axis && dims[d] != first[d]) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "ConcatOp : Dimension %d in both shapes must be equal: "
                    "shape[0] = %s vs. shape[%d] = %s",
                    d, SHAPE(first, rank), i, SHAPE(dims, x_rank));
        return;
      }
    }
    out_concat += dims[axis];
    if (x != x0)
      ocl_op_release(op, x);
  }
  memcpy(dims, first, sizeof(int64_t) * (size_t)rank);
  dims[axis] = out_concat;
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, dims, rank);
  if (y == NULL)
    return;
  /* Each input is a [outer, cols] block of the [outer, out_cols] output. */
  int64_t outer = product(first, 0, (int)axis);
  int64_t inner = product(first, (int)axis + 1, rank);
  int64_t out_cols = out_concat * inner, col = 0;
  if (parts_in_one_launch(k, outer, out_cols)) {
    struct parts p = {.count = 0};
    for (int i = 0; i < n; i++) {
      TF_Tensor *x = i == 0 ? x0 : ocl_op_input(op, i);
      if (x == NULL || !parts_add(op, k, false, y, outer, out_cols, &p, x,
                                  ocl_tf.Dim(x, (int)axis) * inner, x0))
        return;
    }
    parts_flush(op, k, false, y, outer, out_cols, &p, x0);
    return;
  }
  for (int i = 0; i < n && ocl_op_ok(op); i++) {
    TF_Tensor *x = i == 0 ? x0 : ocl_op_input(op, i);
    if (x == NULL)
      return;
    int64_t cols = ocl_tf.Dim(x, (int)axis) * inner;
    copy_block(op, k, x, y, outer, cols, cols, 0, out_cols, col);
    col += cols;
    if (x != x0)
      ocl_op_release(op, x);
  }
}

static void pack(struct ocl_op *op, struct movement_kernel *k)
{
  int n = ocl_tf.NumInputs(op->ctx);
  int64_t first[OCL_MAX_RANK], dims[OCL_MAX_RANK + 1];

  TF_Tensor *x0 = ocl_op_input(op, 0);
  if (x0 == NULL)
    return;
  int rank = tensor_dims(x0, first);
  int expanded = rank + 1;
  int64_t axis = k->axis < 0 ? k->axis + expanded : k->axis;
  if (axis < 0 || axis >= expanded) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "axis = %lld not in [%d, %d)",
                (long long)k->axis, -expanded, expanded);
    return;
  }
  for (int i = 1; i < n; i++) {
    TF_Tensor *x = ocl_op_input(op, i);
    if (x == NULL)
      return;
    int x_rank = tensor_dims(x, dims);
    if (!same_dims(dims, x_rank, first, rank)) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Shapes of all inputs must match: values[0].shape = %s "
                  "!= values[%d].shape = %s",
                  SHAPE(first, rank), i, SHAPE(dims, x_rank));
      return;
    }
    ocl_op_release(op, x);
  }
  for (int d = 0, j = 0; d < expanded; d++)
    dims[d] = d == axis ? n : first[j++];
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, dims, expanded);
  if (y == NULL)
    return;
  int64_t outer = product(first, 0, (int)axis);
  int64_t inner = product(first, (int)axis, rank);
  if (parts_in_one_launch(k, outer, n * inner)) {
    struct parts p = {.count = 0};
    for (int i = 0; i < n; i++) {
      TF_Tensor *x = i == 0 ? x0 : ocl_op_input(op, i);
      if (x == NULL ||
          !parts_add(op, k, false, y, outer, n * inner, &p, x, inner, x0))
        return;
    }
    parts_flush(op, k, false, y, outer, n * inner, &p, x0);
    return;
  }
  for (int i = 0; i < n && ocl_op_ok(op); i++) {
    TF_Tensor *x = i == 0 ? x0 : ocl_op_input(op, i);
    if (x == NULL)
      return;
    copy_block(op, k, x, y, outer, inner, inner, 0, n * inner, i * inner);
    if (x != x0)
      ocl_op_release(op, x);
  }
}

/* ---- Unpack, Split, SplitV ------------------------------------------------ */

/* Output i takes size(i) of x's dim `axis` (removed from the output's
 * shape when `squeeze`, as Unpack does): sizes[i], or `each` when sizes is
 * NULL. */
static void split_outputs(struct ocl_op *op, struct movement_kernel *k,
                          const TF_Tensor *x, const int64_t *x_dims,
                          int x_rank, int axis, const TF_Tensor *sizes,
                          int64_t each, int num, bool squeeze)
{
  int64_t outer = product(x_dims, 0, axis);
  int64_t inner = product(x_dims, axis + 1, x_rank);
  int64_t in_cols = x_dims[axis] * inner, start = 0;
  int64_t dims[OCL_MAX_RANK];
  bool one_launch = parts_in_one_launch(k, outer, in_cols);
  struct parts p = {.count = 0};
  for (int i = 0; i < num && ocl_op_ok(op); i++) {
    int64_t size = sizes != NULL ? ocl_host_int(sizes, i) : each;
    if (sizes != NULL && size == -1) /* SplitV's one -1, resolved */
      size = each;
    int rank = 0;
    for (int d = 0; d < x_rank; d++) {
      if (d != axis)
        dims[rank++] = x_dims[d];
      else if (!squeeze)
        dims[rank++] = size;
    }
    TF_Tensor *y = ocl_op_output(op, i, k->dtype, dims, rank);
    if (y == NULL)
      return;
    int64_t cols = size * inner;
    start += size;
    if (one_launch) {
      if (!parts_add(op, k, true, x, outer, in_cols, &p, y, cols, NULL))
        return;
      continue;
    }
    copy_block(op, k, x, y, outer, cols, in_cols, (start - size) * inner, cols,
               0);
    ocl_op_release(op, y);
  }
  if (one_launch && ocl_op_ok(op))
    parts_flush(op, k, true, x, outer, in_cols, &p, NULL);
}

static void unpack(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK];
  int num = ocl_tf.NumOutputs(op->ctx);

  TF_Tensor *x = ocl_op_input(op, 0);
  if (x == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  int64_t axis = k->axis < 0 ? k->axis + rank : k->axis;
  if (axis < 0 || axis >= rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "axis = %lld not in [%d, %d)",
                (long long)k->axis, -rank, rank);
    return;
  }
  if (x_dims[axis] != num) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Input shape axis %d must equal %d, got shape %s", (int)axis,
                num, SHAPE(x_dims, rank));
    return;
  }
  split_outputs(op, k, x, x_dims, rank, (int)axis, NULL, 1, num, true);
}

/* The split dim, normalised and range-checked; -1 on error. */
static int split_axis(struct ocl_op *op, int64_t split_dim, int rank)
{
  int64_t axis = split_dim < 0 ? split_dim + rank : split_dim;
  if (axis < 0 || axis >= rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "-input rank(-%d) <= split_dim < input rank (%d), but got "
                "%lld",
                rank, rank, (long long)split_dim);
    return -1;
  }
  return (int)axis;
}

static void split(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t d_dims[OCL_MAX_RANK], x_dims[OCL_MAX_RANK];
  int num = ocl_tf.NumOutputs(op->ctx);

  TF_Tensor *dim_t = ocl_op_input(op, 0);
  TF_Tensor *x = dim_t ? ocl_op_input(op, 1) : NULL;
  if (x == NULL)
    return;
  int d_rank = tensor_dims(dim_t, d_dims);
  int rank = tensor_dims(x, x_dims);
  if (d_rank != 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "split_dim must be a scalar but has rank %d", d_rank);
    return;
  }
  int axis = split_axis(op, ocl_host_int(dim_t, 0), rank);
  if (axis < 0)
    return;
  if (x_dims[axis] % num != 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Number of ways to split should evenly divide the split "
                "dimension, but got split_dim %d (size = %lld) and num_split "
                "%d",
                axis, (long long)x_dims[axis], num);
    return;
  }
  if (num == 1) {
    ocl_op_forward(op, 0, x);
    return;
  }
  split_outputs(op, k, x, x_dims, rank, axis, NULL, x_dims[axis] / num, num,
                false);
}

static void split_v(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK], s_dims[OCL_MAX_RANK], d_dims[OCL_MAX_RANK];
  int num = ocl_tf.NumOutputs(op->ctx);

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *sizes = x ? ocl_op_input(op, 1) : NULL;
  TF_Tensor *dim_t = sizes ? ocl_op_input(op, 2) : NULL;
  if (dim_t == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  int s_rank = tensor_dims(sizes, s_dims);
  int d_rank = tensor_dims(dim_t, d_dims);
  if (product(d_dims, 0, d_rank) != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "split_dim_tensor must have exactly one element.");
    return;
  }
  int64_t s_elements = product(s_dims, 0, s_rank);
  if (s_rank != 1 || s_elements != num) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "size of the split_tensor must be 1-D and have the same "
                "elements as outputs got %d -D and %lld elements",
                s_rank, (long long)s_elements);
    return;
  }
  int axis = split_axis(op, ocl_host_int(dim_t, 0), rank);
  if (axis < 0)
    return;
  int64_t input_size = x_dims[axis];
  if (num == 1) {
    if (ocl_host_int(sizes, 0) != input_size) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "If there is only one output, it must have the same size "
                  "as the input. Input size: %lld output size: %lld",
                  (long long)input_size, (long long)ocl_host_int(sizes, 0));
      return;
    }
    ocl_op_forward(op, 0, x);
    return;
  }
  int neg_one = -1;
  int64_t determined = 0;
  for (int i = 0; i < num; i++) {
    int64_t size = ocl_host_int(sizes, i);
    if (size == -1) {
      if (neg_one != -1) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "There can only be one -1 in the input.");
        return;
      }
      neg_one = i;
    } else {
      determined += size;
    }
  }
  if (!((neg_one == -1 && determined == input_size) ||
        (neg_one >= 0 && determined <= input_size))) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Determined shape must either match input shape along "
                "split_dim exactly if fully specified, or be less than the "
                "size of the input along split_dim if not fully specified.  "
                "Got: %lld",
                (long long)determined);
    return;
  }
  for (int i = 0; i < num; i++) {
    int64_t size = ocl_host_int(sizes, i);
    if (i != neg_one && size < 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Split size at index %d must be >= 0. Got: %lld", i,
                  (long long)size);
      return;
    }
  }
  split_outputs(op, k, x, x_dims, rank, axis, sizes, input_size - determined,
                num, false);
}

/* ---- Slice, StridedSlice, StridedSliceGrad ------------------------------ */

static void slice(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK], b_dims[OCL_MAX_RANK], s_dims[OCL_MAX_RANK];
  int64_t begin[OCL_MAX_RANK], size[OCL_MAX_RANK];

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *bt = x ? ocl_op_input(op, 1) : NULL;
  TF_Tensor *st = bt ? ocl_op_input(op, 2) : NULL;
  if (st == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  int b_rank = tensor_dims(bt, b_dims), s_rank = tensor_dims(st, s_dims);
  if (b_rank != 1 || s_rank != 1 || b_dims[0] != rank || s_dims[0] != rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Expected begin and size arguments to be 1-D tensors of size "
                "%d, but got shapes %s and %s instead.",
                rank, SHAPE(b_dims, b_rank), SHAPE(s_dims, s_rank));
    return;
  }
  bool identity = true;
  for (int i = 0; i < rank; i++) {
    int64_t b = ocl_host_int(bt, i), s = ocl_host_int(st, i);
    int64_t dim = x_dims[i];
    if (s == -1)
      s = dim - b; /* all elements from begin[i] on */
    if (dim == 0) {
      if (b != 0 || s != 0) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "Expected begin[%d] == 0 (got %lld) and size[%d] == 0 "
                    "(got %lld) when input.dim_size(%d) == 0",
                    i, (long long)b, i, (long long)s, i);
        return;
      }
    } else {
      if (b < 0 || b > dim) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "Expected begin[%d] in [0, %lld], but got %lld", i,
                    (long long)dim, (long long)b);
        return;
      }
      if (s < 0 || b + s > dim) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "Expected size[%d] in [0, %lld], but got %lld", i,
                    (long long)(dim - b), (long long)s);
        return;
      }
    }
    begin[i] = b;
    size[i] = s;
    identity &= b == 0 && s == dim;
  }
  if (identity) {
    ocl_op_forward(op, 0, x);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, size, rank);
  if (y == NULL)
    return;
  int64_t in_strides[OCL_MAX_RANK], out_strides[OCL_MAX_RANK];
  ocl_shape_strides(x_dims, rank, in_strides);
  ocl_shape_strides(size, rank, out_strides);
  int64_t offset = 0;
  for (int i = 0; i < rank; i++)
    offset += begin[i] * in_strides[i];
  copy_view(op, k, x, y, size, rank, in_strides, out_strides, offset, 0);
}

/* begin/end/strides (inputs first..first+2) against a tensor of dims. */
static bool strided_slice_spec(struct ocl_op *op,
                               const struct movement_kernel *k, int first,
                               const int64_t *x_dims, int x_rank,
                               struct ocl_strided_slice *s)
{
  int64_t dims[3][OCL_MAX_RANK];
  int ranks[3];
  int64_t begin[OCL_SLICE_SPEC_MAX], end[OCL_SLICE_SPEC_MAX],
      strides[OCL_SLICE_SPEC_MAX];
  TF_Tensor *t[3];

  for (int i = 0; i < 3; i++) {
    t[i] = ocl_op_input(op, first + i);
    if (t[i] == NULL)
      return false;
    ranks[i] = tensor_dims(t[i], dims[i]);
  }
  int64_t n = product(dims[2], 0, ranks[2]);
  if (ranks[0] != 1 || ranks[1] != 1 || ranks[2] != 1 || dims[0][0] != n ||
      dims[1][0] != n || n >= OCL_SLICE_SPEC_MAX)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Expected begin, end, and strides to be 1D equal size "
                       "tensors, but got shapes %s, %s, and %s instead.",
                       SHAPE(dims[0], ranks[0]),
                       SHAPE(dims[1], ranks[1]),
                       SHAPE(dims[2], ranks[2]));
  for (int i = 0; i < n; i++) {
    begin[i] = ocl_host_int(t[0], i);
    end[i] = ocl_host_int(t[1], i);
    strides[i] = ocl_host_int(t[2], i);
  }
  const int64_t *m = k->masks;
  return ocl_strided_slice_init(s, x_dims, x_rank, begin, end, strides, (int)n,
                                m[BEGIN_MASK], m[END_MASK], m[ELLIPSIS_MASK],
                                m[NEW_AXIS_MASK], m[SHRINK_AXIS_MASK],
                                op->status);
}

/* The slice as a view of a tensor of `dims`: element strides and offset. */
static int64_t slice_view(const struct ocl_strided_slice *s,
                          const int64_t *dims, int64_t *view_strides)
{
  int64_t strides[OCL_MAX_RANK], offset = 0;
  ocl_shape_strides(dims, s->rank, strides);
  for (int d = 0; d < s->rank; d++) {
    view_strides[d] = s->strides[d] * strides[d];
    offset += s->begin[d] * strides[d];
  }
  return offset;
}

static void strided_slice(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK];
  struct ocl_strided_slice s;

  TF_Tensor *x = ocl_op_input(op, 0);
  if (x == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  if (!strided_slice_spec(op, k, 1, x_dims, rank, &s))
    return;
  if (s.is_identity && same_dims(s.final_dims, s.final_rank, x_dims, rank)) {
    ocl_op_forward(op, 0, x);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, s.final_dims, s.final_rank);
  if (y == NULL)
    return;
  int64_t in_strides[OCL_MAX_RANK], out_strides[OCL_MAX_RANK];
  int64_t offset = slice_view(&s, x_dims, in_strides);
  ocl_shape_strides(s.processing_dims, s.rank, out_strides);
  copy_view(op, k, x, y, s.processing_dims, s.rank, in_strides, out_strides,
            offset, 0);
}

/* dx = zeros(shape); dx[slice] = dy. */
static void strided_slice_grad(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t sh_dims[OCL_MAX_RANK], dy_dims[OCL_MAX_RANK], x_dims[OCL_MAX_RANK];
  struct ocl_strided_slice s;

  TF_Tensor *shape = ocl_op_input(op, 0);
  TF_Tensor *dy = shape ? ocl_op_input(op, 4) : NULL;
  if (dy == NULL)
    return;
  int sh_rank = tensor_dims(shape, sh_dims);
  int dy_rank = tensor_dims(dy, dy_dims);
  if (sh_rank != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "shape must be 1-D, got shape.shape = %s",
                SHAPE(sh_dims, sh_rank));
    return;
  }
  if (sh_dims[0] > OCL_MAX_RANK) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Shapes of rank %lld exceed TensorFlow's limit of %d "
                "dimensions",
                (long long)sh_dims[0], OCL_MAX_RANK);
    return;
  }
  int rank = (int)sh_dims[0];
  for (int d = 0; d < rank; d++) {
    x_dims[d] = ocl_host_int(shape, d);
    if (x_dims[d] < 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "Dimension %lld must be >= 0",
                  (long long)x_dims[d]);
      return;
    }
  }
  if (!strided_slice_spec(op, k, 1, x_dims, rank, &s))
    return;
  if (!same_dims(s.final_dims, s.final_rank, dy_dims, dy_rank)) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "shape of dy was %s instead of %s",
                SHAPE(dy_dims, dy_rank),
                SHAPE(s.final_dims, s.final_rank));
    return;
  }
  TF_Tensor *dx = ocl_op_output(op, 0, k->dtype, x_dims, rank);
  if (dx == NULL)
    return;
  int64_t elements = product(x_dims, 0, rank);
  if (elements == 0)
    return;
  bool unit_strides = s.elements > 0;
  for (int d = 0; d < s.rank; d++)
    unit_strides &= s.strides[d] == 1;
  if (unit_strides) {
    /* dx is dy padded with zeros: one launch of the pad kernels rather
     * than a fill and a copy (Keras' recurrent cells slice their weights
     * every step, so their gradients take this path every step). */
    int64_t dims[OCL_MAX_RANK + 1], before[OCL_MAX_RANK + 1],
        after[OCL_MAX_RANK + 1];
    for (int d = 0; d < s.rank; d++) {
      dims[d] = s.processing_dims[d];
      before[d] = s.begin[d];
      after[d] = x_dims[d] - s.begin[d] - s.processing_dims[d];
    }
    if (k->halves == 2) {
      dims[s.rank] = 2;
      before[s.rank] = after[s.rank] = 0;
    }
    struct ocl_expand e;
    ocl_pad_collapse(&e, dims, s.rank + (k->halves == 2), before, after);
    expand_run(op, k, true, &e, dy, dx, NULL);
    return;
  }
  /* Zero bits are zero in every dtype. */
  const cl_ulong zero = 0;
  if (!ocl_op_fill(op, dx, 0, &zero, k->unit,
                   (size_t)elements * k->unit * (size_t)k->halves))
    return;
  int64_t in_strides[OCL_MAX_RANK], out_strides[OCL_MAX_RANK];
  int64_t offset = slice_view(&s, x_dims, out_strides);
  ocl_shape_strides(s.processing_dims, s.rank, in_strides);
  copy_view(op, k, dy, dx, s.processing_dims, s.rank, in_strides, out_strides,
            0, offset);
}

/* ---- Tile, Pad, PadV2 ------------------------------------------------------ */

/* The collapsed problem over device elements: dtype dims plus, for two
 * halves per element, an innermost dim of 2 that neither repeats nor
 * pads. */
static void tile(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK + 1], m_dims[OCL_MAX_RANK];
  int64_t multiples[OCL_MAX_RANK + 1], out_dims[OCL_MAX_RANK];
  struct ocl_expand e;

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *m = x ? ocl_op_input(op, 1) : NULL;
  if (m == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  int m_rank = tensor_dims(m, m_dims);
  if (m_rank != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Expected multiples to be 1-D, but got shape %s",
                SHAPE(m_dims, m_rank));
    return;
  }
  if (m_dims[0] != rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Expected multiples argument to be a vector of length %d but "
                "got length %lld",
                rank, (long long)m_dims[0]);
    return;
  }
  bool all_one = true;
  for (int d = 0; d < rank; d++) {
    multiples[d] = ocl_host_int(m, d);
    if (multiples[d] < 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Expected multiples[%d] >= 0, but got %lld", d,
                  (long long)multiples[d]);
      return;
    }
    all_one &= multiples[d] == 1;
    if (!ocl_op_dim_product(op, x_dims[d], multiples[d], &out_dims[d]))
      return;
  }
  if (all_one) {
    ocl_op_forward(op, 0, x);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, out_dims, rank);
  if (y == NULL || product(out_dims, 0, rank) == 0)
    return;
  if (k->halves == 2) {
    x_dims[rank] = 2;
    multiples[rank] = 1;
  }
  ocl_tile_collapse(&e, x_dims, rank + (k->halves == 2), multiples);
  expand_run(op, k, false, &e, x, y, NULL);
}

static void pad(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK + 1], p_dims[OCL_MAX_RANK], c_dims[OCL_MAX_RANK];
  int64_t before[OCL_MAX_RANK + 1], after[OCL_MAX_RANK + 1];
  int64_t out_dims[OCL_MAX_RANK];
  struct ocl_expand e;
  bool v2 = k->op->kind == PAD_V2;

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *p = x ? ocl_op_input(op, 1) : NULL;
  TF_Tensor *value = p && v2 ? ocl_op_input(op, 2) : NULL;
  if (p == NULL || (v2 && value == NULL))
    return;
  int rank = tensor_dims(x, x_dims);
  int p_rank = tensor_dims(p, p_dims);
  if (p_rank != 2 || p_dims[1] != 2) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "paddings must be a matrix with 2 columns: %s",
                SHAPE(p_dims, p_rank));
    return;
  }
  if (p_dims[0] != rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "The first dimension of paddings must be the rank of "
                "inputs%s %s",
                SHAPE(p_dims, p_rank), SHAPE(x_dims, rank));
    return;
  }
  if (v2) {
    int c_rank = tensor_dims(value, c_dims);
    if (c_rank != 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "constant_values must be a scalar. Found: %s",
                  SHAPE(c_dims, c_rank));
      return;
    }
  }
  bool no_padding = true;
  for (int d = 0; d < rank; d++) {
    before[d] = ocl_host_int(p, 2 * d);
    after[d] = ocl_host_int(p, 2 * d + 1);
    if (before[d] < 0 || after[d] < 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Paddings must be non-negative: %lld %lld",
                  (long long)before[d], (long long)after[d]);
      return;
    }
    if (before[d] > INT64_MAX - x_dims[d] ||
        after[d] > INT64_MAX - x_dims[d] - before[d]) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Paddings %lld %lld of dimension %d overflow int64",
                  (long long)before[d], (long long)after[d], d);
      return;
    }
    no_padding &= before[d] == 0 && after[d] == 0;
    out_dims[d] = before[d] + x_dims[d] + after[d];
  }
  if (no_padding) {
    ocl_op_forward(op, 0, x);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, out_dims, rank);
  if (y == NULL || product(out_dims, 0, rank) == 0)
    return;
  if (k->halves == 2) {
    x_dims[rank] = 2;
    before[rank] = after[rank] = 0;
  }
  ocl_pad_collapse(&e, x_dims, rank + (k->halves == 2), before, after);
  expand_run(op, k, true, &e, x, y, value);
}

/* ---- _ParallelConcatStart, _ParallelConcatUpdate ----------------------- */

/* The `shape` attribute (fully defined: TensorFlow's rewrite copies
 * ParallelConcat's). */
static bool parallel_concat_shape(TF_OpKernelConstruction *ctx,
                                  struct movement_kernel *k, TF_Status *status)
{
  int32_t list_size = 0;
  int32_t rank = 0;
  ocl_tf.OpKernelConstruction_GetAttrSize(ctx, "shape", &list_size, &rank,
                                          status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return false;
  if (rank < 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "_ParallelConcatStart needs a shape of known rank");
    return false;
  }
  if (rank > OCL_MAX_RANK) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Shapes of rank %d exceed TensorFlow's limit of %d "
                   "dimensions",
                   (int)rank, OCL_MAX_RANK);
    return false;
  }
  ocl_tf.OpKernelConstruction_GetAttrTensorShape(ctx, "shape", k->shape,
                                                 (size_t)rank, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return false;
  for (int d = 0; d < rank; d++) {
    if (k->shape[d] < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "_ParallelConcatStart needs a fully defined shape");
      return false;
    }
  }
  k->shape_rank = rank;
  return true;
}

/* Uninitialised, as TensorFlow's: every row is written by an update. */
static void parallel_concat_start(struct ocl_op *op, struct movement_kernel *k)
{
  ocl_op_output(op, 0, k->dtype, k->shape, k->shape_rank);
}

/* value[loc] = update[0], in place; the output is value itself. */
static void parallel_concat_update(struct ocl_op *op,
                                   struct movement_kernel *k)
{
  int64_t v_dims[OCL_MAX_RANK], u_dims[OCL_MAX_RANK];

  TF_Tensor *v = ocl_op_input(op, 0);
  TF_Tensor *u = v ? ocl_op_input(op, 1) : NULL;
  if (u == NULL)
    return;
  int v_rank = tensor_dims(v, v_dims), u_rank = tensor_dims(u, u_dims);
  if (v_rank < 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "value should be at least rank 1.");
    return;
  }
  if (v_dims[0] <= k->axis) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "0th dimension of value %lld is less than loc_=%lld",
                (long long)v_dims[0], (long long)k->axis);
    return;
  }
  bool same = v_rank == u_rank;
  for (int d = 1; same && d < v_rank; d++)
    same = v_dims[d] == u_dims[d];
  if (!same || u_dims[0] != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s shape doesn't match: %s vs. %s",
                v_rank == u_rank ? "update" : "value and update",
                SHAPE(v_dims, v_rank), SHAPE(u_dims, u_rank));
    return;
  }
  int64_t rows = v_dims[0];
  int64_t row = ((k->axis % rows) + rows) % rows;
  int64_t cols = product(v_dims, 1, v_rank);
  if (k->dtype == TF_INT32) {
    /* Host memory, as int32 shape-like values are (int32_host_args). */
    if (cols > 0)
      memcpy((int32_t *)ocl_host_data(v) + row * cols, ocl_host_data(u),
             sizeof(int32_t) * (size_t)cols);
  } else if (!copy_block(op, k, u, v, 1, cols, cols, 0, cols, row * cols)) {
    return;
  }
  ocl_op_forward(op, 0, v);
}

/* ---- SpaceToBatchND, BatchToSpaceND ---------------------------------------- */

/* ceil(a / b) for b > 0 and any a. */
static int64_t ceil_div_signed(int64_t a, int64_t b)
{
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* Rows of TensorFlow's spacetobatch_op.cc / batchtospace_op.cc checks:
 * block_shape [M] and the [M, 2] paddings (crops) against the input; the
 * values into block and pads. False with the status set. */
static bool space_batch_args(struct ocl_op *op, bool to_batch, int rank,
                             const TF_Tensor *bs, const TF_Tensor *pd,
                             int64_t *block, int64_t *pads, int *m)
{
  int64_t b_dims[OCL_MAX_RANK], p_dims[OCL_MAX_RANK];
  int b_rank = tensor_dims(bs, b_dims), p_rank = tensor_dims(pd, p_dims);
  if (b_rank != 1)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "block_shape rank should be 1 instead of %d", b_rank);
  int64_t block_dims = b_dims[0];
  if (rank < 1 + block_dims)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input rank should be >= %lld instead of %d",
                       (long long)(1 + block_dims), rank);
  if (!(p_rank == 2 && p_dims[0] == block_dims && p_dims[1] == 2))
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "%s should have shape [%lld, 2] instead of %s",
                       to_batch ? "paddings" : "crops", (long long)block_dims,
                       SHAPE(p_dims, p_rank));
  *m = (int)block_dims;
  for (int i = 0; i < *m; i++) {
    block[i] = ocl_host_int(bs, i);
    pads[2 * i] = ocl_host_int(pd, 2 * i);
    pads[2 * i + 1] = ocl_host_int(pd, 2 * i + 1);
  }
  return true;
}

/* SpaceToBatchND: out[k * B + b, p_i, ...] = padded input[b, p_i * block_i
 * + k_i, ...], k running over the offsets in the block (row-major);
 * BatchToSpaceND the inverse, cropped. For each k, the positions that hit
 * the (unpadded, uncropped) input form a box: one strided copy. */
static void space_batch(struct ocl_op *op, struct movement_kernel *k)
{
  bool to_batch = k->op->kind == SPACE_TO_BATCH_ND;
  int64_t x_dims[OCL_MAX_RANK], out_dims[OCL_MAX_RANK];
  int64_t block[OCL_MAX_RANK], pads[2 * OCL_MAX_RANK];
  int m = 0;

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *bs = x ? ocl_op_input(op, 1) : NULL;
  TF_Tensor *pd = bs ? ocl_op_input(op, 2) : NULL;
  if (pd == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  if (!space_batch_args(op, to_batch, rank, bs, pd, block, pads, &m))
    return;
  /* Leading and trailing block dims of size 1 without padding combine into
   * the batch and depth; TensorFlow counts the others. */
  int prefix = 0, suffix = 0;
  while (prefix < m && pads[2 * prefix] == 0 && pads[2 * prefix + 1] == 0 &&
         block[prefix] == 1)
    prefix++;
  while (suffix < m - prefix && pads[2 * (m - 1 - suffix)] == 0 &&
         pads[2 * (m - 1 - suffix) + 1] == 0 && block[m - 1 - suffix] == 1)
    suffix++;
  int64_t block_product = 1;
  for (int i = 0; i < m; i++) {
    if (to_batch && block[i] < 1) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "All values in block_shape must be positive, got value, "
                  "%lld at index %d.",
                  (long long)block[i], i);
      return;
    }
    /* TensorFlow 2.22's BatchToSpaceND checks each value too (earlier
     * releases only their product), in words of its own. */
    if (!to_batch && block[i] < 1 && ocl_tf_minor_version() >= 22) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "All values in block_shape must be positive, got %lld at "
                  "index %d",
                  (long long)block[i], i);
      return;
    }
    if (!to_batch) {
      /* BatchToSpaceND multiplies plainly (wrapping, as int64 does). */
      block_product = (int64_t)((uint64_t)block_product * (uint64_t)block[i]);
    } else if (block_product > INT64_MAX / block[i]) {
      /* SpaceToBatchND's MultiplyWithoutOverflow: -1 once it overflows. */
      block_product = -1;
    } else if (block_product >= 0) {
      block_product *= block[i];
    }
  }
  if (block_product <= 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Product of block sizes must be positive, got %lld",
                (long long)block_product);
    return;
  }
  if (!to_batch && x_dims[0] % block_product != 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Input batch dimension (%lld) is not divisible by product of "
                "block sizes (%lld)",
                (long long)x_dims[0], (long long)block_product);
    return;
  }
  int internal = m - prefix - suffix;
  if (internal > 4) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Maximum number of non-combined block dimensions is %d but "
                "must not exceed 4",
                internal);
    return;
  }
  if (internal == 0) {
    ocl_op_forward(op, 0, x);
    return;
  }
  int64_t batch = x_dims[0];
  if (to_batch) {
    if (batch != 0 && block_product > INT64_MAX / batch) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Negative output dimension size caused by overflow when "
                  "multiplying %lld and %lld",
                  (long long)batch, (long long)block_product);
      return;
    }
    out_dims[0] = batch * block_product;
  } else {
    out_dims[0] = batch / block_product;
  }
  bool padded = false;
  for (int i = 0; i < m; i++) {
    int64_t before = pads[2 * i], after = pads[2 * i + 1], size = x_dims[i + 1];
    out_dims[i + 1] = size;
    if (i < prefix || i >= m - suffix)
      continue;
    if (before < 0 || after < 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s must be non-negative",
                  to_batch ? "Paddings" : "Crops");
      return;
    }
    if (to_batch) {
      int64_t padded_size = size + before + after;
      if (padded_size % block[i] != 0) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "padded_shape[%d]=%lld is not divisible by "
                    "block_shape[%d]=%lld",
                    i, (long long)padded_size, i, (long long)block[i]);
        return;
      }
      out_dims[i + 1] = padded_size / block[i];
      padded |= before != 0 || after != 0;
    } else {
      int64_t cropped = size * block[i] - before - after;
      if (cropped < 0) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "cropped_shape[%d]=%lld must be non-negative", i,
                    (long long)cropped);
        return;
      }
      out_dims[i + 1] = cropped;
    }
  }
  for (int d = m + 1; d < rank; d++)
    out_dims[d] = x_dims[d];
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, out_dims, rank);
  if (y == NULL)
    return;
  int64_t out_elements = product(out_dims, 0, rank);
  if (out_elements == 0)
    return;
  if (padded) {
    const cl_ulong zero = 0;
    if (!ocl_op_fill(op, y, 0, &zero, k->unit,
                     (size_t)out_elements * k->unit * (size_t)k->halves))
      return;
  }
  /* Batch side (the one with B * block_product images) and space side. */
  const int64_t *space_dims = to_batch ? x_dims : out_dims;
  const int64_t *batch_side_dims = to_batch ? out_dims : x_dims;
  int64_t space_strides[OCL_MAX_RANK], batch_strides[OCL_MAX_RANK];
  ocl_shape_strides(space_dims, rank, space_strides);
  ocl_shape_strides(batch_side_dims, rank, batch_strides);
  int64_t small_batch = to_batch ? batch : out_dims[0];
  int64_t dims[OCL_MAX_RANK], sp_view[OCL_MAX_RANK], off[OCL_MAX_RANK];
  dims[0] = small_batch;
  sp_view[0] = space_strides[0];
  for (int d = m + 1; d < rank; d++) {
    dims[d] = space_dims[d];
    sp_view[d] = space_strides[d];
  }
  for (int i = 0; i < m; i++) {
    off[i] = 0;
    sp_view[i + 1] = space_strides[i + 1] * block[i];
  }
  /* off[] walks the offsets in the block; `flat` is their row-major index,
   * the batch-side image group. */
  for (int64_t flat = 0; flat < block_product && ocl_op_ok(op); flat++) {
    int64_t sp_offset = 0, bt_offset = flat * small_batch * batch_strides[0];
    bool empty = false;
    for (int i = 0; i < m; i++) {
      /* Space coordinate of batch-side position p: p * block + off - pad;
       * keep the p whose coordinate lies in [0, space extent). */
      int64_t lead = pads[2 * i] - off[i];
      int64_t lo = ceil_div_signed(lead, block[i]);
      int64_t hi = ceil_div_signed(space_dims[i + 1] + lead, block[i]);
      lo = lo < 0 ? 0 : lo;
      hi = hi > batch_side_dims[i + 1] ? batch_side_dims[i + 1] : hi;
      dims[i + 1] = hi > lo ? hi - lo : 0;
      empty |= hi <= lo;
      sp_offset += (lo * block[i] - lead) * space_strides[i + 1];
      bt_offset += lo * batch_strides[i + 1];
    }
    if (!empty) {
      if (to_batch)
        copy_view(op, k, x, y, dims, rank, sp_view, batch_strides, sp_offset,
                  bt_offset);
      else
        copy_view(op, k, x, y, dims, rank, batch_strides, sp_view, bt_offset,
                  sp_offset);
    }
    for (int i = m - 1; i >= 0 && ++off[i] == block[i]; i--)
      off[i] = 0;
  }
}

/* ---- ReverseV2, Roll ------------------------------------------------------- */

/* y = x viewed through (dims, in_strides, in_offset), on the host: int32
 * tensors that live in host memory (reverse_int32_host). */
static void host_view_copy(const TF_Tensor *x, TF_Tensor *y,
                           const int64_t *dims, int rank,
                           const int64_t *in_strides, int64_t in_offset)
{
  const int32_t *in = ocl_host_data(x);
  int32_t *out = ocl_host_data(y);
  int64_t n = product(dims, 0, rank);
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, xi = in_offset;
    for (int d = rank - 1; d >= 0; d--) {
      xi += rem % dims[d] * in_strides[d];
      rem /= dims[d];
    }
    out[i] = in[xi];
  }
}

static void reverse_v2(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK], a_dims[OCL_MAX_RANK];
  int64_t strides[OCL_MAX_RANK], in_strides[OCL_MAX_RANK];
  bool rev[OCL_MAX_RANK];

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *a = x ? ocl_op_input(op, 1) : NULL;
  if (a == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  if (rank == 0) {
    ocl_op_forward(op, 0, x);
    return;
  }
  int a_rank = tensor_dims(a, a_dims);
  if (a_rank != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "'dims' must be 1-dimension, not %d",
                a_rank);
    return;
  }
  for (int d = 0; d < rank; d++)
    rev[d] = false;
  for (int64_t i = 0; i < a_dims[0]; i++) {
    int64_t axis = ocl_host_int(a, i);
    int64_t canonical = axis < 0 ? axis + rank : axis;
    /* TensorFlow's message has no closing bracket. */
    if (canonical < 0 || canonical >= rank) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "'axis'[%lld] = %lld is out of valid range [0, %d",
                  (long long)i, (long long)axis, rank - 1);
      return;
    }
    if (rev[canonical]) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "axis %lld specified more than once.",
                  (long long)canonical);
      return;
    }
    rev[canonical] = true;
  }
  if (rank > 8) {
    ocl_op_fail(op, TF_UNIMPLEMENTED,
                "reverse is not implemented for tensors of rank > 8.");
    return;
  }
  bool any = false;
  for (int d = 0; d < rank; d++)
    any |= rev[d] && x_dims[d] > 1;
  if (!any) {
    ocl_op_forward(op, 0, x);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, x_dims, rank);
  if (y == NULL)
    return;
  ocl_shape_strides(x_dims, rank, strides);
  int64_t offset = 0;
  for (int d = 0; d < rank; d++) {
    in_strides[d] = rev[d] ? -strides[d] : strides[d];
    if (rev[d] && x_dims[d] > 0)
      offset += (x_dims[d] - 1) * strides[d];
  }
  if (k->dtype == TF_INT32)
    host_view_copy(x, y, x_dims, rank, in_strides, offset);
  else
    copy_view(op, k, x, y, x_dims, rank, in_strides, strides, offset, 0);
}

/* Rolled dims per pass: a pass is 2^ROLL_GROUP box copies. */
#define ROLL_GROUP 4

/* dst = src rolled along dims r[0..m) by shift[]: each rolled dim splits
 * into the part that moves right and the part that wraps around, so the
 * boxes of all combinations are strided copies. */
static bool roll_pass(struct ocl_op *op, struct movement_kernel *k,
                      const TF_Tensor *src, TF_Tensor *dst,
                      const int64_t *dims, int rank, const int64_t *strides,
                      const int *r, int m, const int64_t *shift)
{
  int64_t box[OCL_MAX_RANK];
  for (int mask = 0; mask < (1 << m); mask++) {
    int64_t in_off = 0, out_off = 0;
    memcpy(box, dims, sizeof(int64_t) * (size_t)rank);
    for (int j = 0; j < m; j++) {
      int d = r[j];
      int64_t s = shift[d], n = dims[d];
      if (mask & (1 << j)) {
        box[d] = s; /* input [n - s, n) -> output [0, s) */
        in_off += (n - s) * strides[d];
      } else {
        box[d] = n - s; /* input [0, n - s) -> output [s, n) */
        out_off += s * strides[d];
      }
    }
    if (!copy_view(op, k, src, dst, box, rank, strides, strides, in_off,
                   out_off))
      return false;
  }
  return true;
}

static void roll(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK], s_dims[OCL_MAX_RANK], a_dims[OCL_MAX_RANK];
  int64_t shift[OCL_MAX_RANK], strides[OCL_MAX_RANK];
  int rolled[OCL_MAX_RANK];

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *sh = x ? ocl_op_input(op, 1) : NULL;
  TF_Tensor *ax = sh ? ocl_op_input(op, 2) : NULL;
  if (ax == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  int s_rank = tensor_dims(sh, s_dims), a_rank = tensor_dims(ax, a_dims);
  if (rank == 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "input must be 1-D or higher");
    return;
  }
  if (s_rank > 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "shift must be a scalar or a 1-D vector. Found: %s",
                SHAPE(s_dims, s_rank));
    return;
  }
  if (a_rank > 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "axis must be a scalar or a 1-D vector. Found: %s",
                SHAPE(a_dims, a_rank));
    return;
  }
  if (!same_dims(s_dims, s_rank, a_dims, a_rank)) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "shift and axis must have the same size");
    return;
  }
  for (int d = 0; d < rank; d++)
    shift[d] = 0;
  int64_t num = product(s_dims, 0, s_rank);
  for (int64_t i = 0; i < num; i++) {
    /* TensorFlow reads axis and shift as int and sums them in int. */
    int32_t axis = (int32_t)ocl_host_int(ax, i);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "axis %d is out of range",
                  (int)axis);
      return;
    }
    int64_t ds = x_dims[axis] > 1 ? x_dims[axis] : 1;
    int32_t sum = (int32_t)((uint32_t)shift[axis] +
                            (uint32_t)(int32_t)ocl_host_int(sh, i));
    shift[axis] = ((int64_t)sum % ds + ds) % ds;
  }
  int m = 0;
  for (int d = 0; d < rank; d++)
    if (shift[d] != 0)
      rolled[m++] = d;
  if (m == 0) {
    ocl_op_forward(op, 0, x);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, x_dims, rank);
  int64_t elements = product(x_dims, 0, rank);
  if (y == NULL || elements == 0)
    return;
  ocl_shape_strides(x_dims, rank, strides);
  /* More rolled dims than one pass takes: passes through a temp, ending
   * in y. */
  int passes = (m + ROLL_GROUP - 1) / ROLL_GROUP;
  TF_Tensor *t = NULL;
  if (passes > 1 && (t = ocl_op_temp(op, k->dtype, elements)) == NULL)
    return;
  const TF_Tensor *src = x;
  for (int p = 0; p < passes; p++) {
    TF_Tensor *dst = (passes - 1 - p) % 2 == 0 ? y : t;
    int g = m - p * ROLL_GROUP < ROLL_GROUP ? m - p * ROLL_GROUP : ROLL_GROUP;
    if (!roll_pass(op, k, src, dst, x_dims, rank, strides,
                   rolled + p * ROLL_GROUP, g, shift))
      return;
    src = dst;
  }
}

/* ---- DepthToSpace, SpaceToDepth ------------------------------------------ */

/* Both are transposes of a 6-D view: (dh, dw) the offsets in the block,
 * od the output depth of DepthToSpace (the input depth of SpaceToDepth).
 * The index space is the output's, dense; in_strides walk the input. */
static void depth_space(struct ocl_op *op, struct movement_kernel *k)
{
  bool to_space = k->op->kind == DEPTH_TO_SPACE;
  int64_t x_dims[OCL_MAX_RANK], out_dims[4], dims[6], in_strides[6],
      out_strides[6];

  TF_Tensor *x = ocl_op_input(op, 0);
  if (x == NULL)
    return;
  if (k->vect_c) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "qint8 should be used with data_format NCHW_VECT_C.");
    return;
  }
  int rank = tensor_dims(x, x_dims);
  if (rank != 4) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                to_space ? "Input rank should be: 4 instead of: %d"
                         : "Input rank should be 4 instead of %d",
                rank);
    return;
  }
  int64_t bs = k->block_size, bs_sq;
  int64_t n = x_dims[0];
  int64_t c = x_dims[k->nchw ? 1 : 3], h = x_dims[k->nchw ? 2 : 1],
          w = x_dims[k->nchw ? 3 : 2];
  int64_t oh, ow, oc;
  if (!ocl_op_dim_product(op, bs, bs, &bs_sq))
    return;
  if (to_space) {
    if (c % bs_sq != 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Input depth dimension %lld should be divisible by: %lld",
                  (long long)c, (long long)bs_sq);
      return;
    }
    oc = c / bs_sq;
    if (!ocl_op_dim_product(op, h, bs, &oh) ||
        !ocl_op_dim_product(op, w, bs, &ow))
      return;
  } else {
    if (w % bs != 0 || h % bs != 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Image width %lld and height %lld should be divisible by "
                  "block_size: %lld",
                  (long long)w, (long long)h, (long long)bs);
      return;
    }
    oh = h / bs;
    ow = w / bs;
    if (!ocl_op_dim_product(op, c, bs_sq, &oc))
      return;
  }
  out_dims[0] = n;
  out_dims[k->nchw ? 1 : 3] = oc;
  out_dims[k->nchw ? 2 : 1] = oh;
  out_dims[k->nchw ? 3 : 2] = ow;
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, out_dims, 4);
  if (y == NULL)
    return;
  /* Six logical axes N, SH, DH, SW, DW, D: the small spatial extents, the
   * offsets in the block and the depth that stays whole (DepthToSpace's
   * output depth, SpaceToDepth's input depth). The deep tensor has depth
   * bs * bs * d over sh x sw, the wide one depth d over sh * bs x sw * bs;
   * their strides per axis, and each one's axis order. The index space
   * walks the output's order, so that neighbouring work-items write
   * neighbouring addresses. */
  int64_t d = to_space ? oc : c, sh = to_space ? h : oh, sw = to_space ? w : ow;
  int64_t ext[6] = {n, sh, bs, sw, bs, d};
  int64_t dc = bs_sq * d, hw = sh * sw, wide_hw = sh * bs * sw * bs;
  static const int nhwc_deep[6] = {0, 1, 3, 2, 4, 5};
  static const int nhwc_wide[6] = {0, 1, 2, 3, 4, 5};
  static const int nchw_deep[6] = {0, 2, 4, 5, 1, 3};
  static const int nchw_wide[6] = {0, 5, 1, 2, 3, 4};
  int64_t deep[6], wide[6];
  if (!k->nchw) {
    int64_t ds[6] = {hw * dc, sw * dc, bs * d, dc, d, 1};
    int64_t ws[6] = {wide_hw * d, bs * sw * bs * d, sw * bs * d, bs * d, d, 1};
    memcpy(deep, ds, sizeof(deep));
    memcpy(wide, ws, sizeof(wide));
  } else {
    int64_t ds[6] = {dc * hw, sw, bs * d * hw, 1, d * hw, hw};
    int64_t ws[6] = {d * wide_hw, bs * sw * bs, sw * bs, bs, 1, wide_hw};
    memcpy(deep, ds, sizeof(deep));
    memcpy(wide, ws, sizeof(wide));
  }
  const int *order = to_space ? (k->nchw ? nchw_wide : nhwc_wide)
                              : (k->nchw ? nchw_deep : nhwc_deep);
  for (int i = 0; i < 6; i++) {
    int ax = order[i];
    dims[i] = ext[ax];
    in_strides[i] = to_space ? deep[ax] : wide[ax];
    out_strides[i] = to_space ? wide[ax] : deep[ax];
  }
  copy_view(op, k, x, y, dims, 6, in_strides, out_strides, 0, 0);
}

/* ---- MirrorPad, MirrorPadGrad ------------------------------------------------- */

/* TensorFlow's checks of the paddings against x; out_dims the output's
 * shape (padded for MirrorPad, unpadded for the gradient). */
static bool mirror_args(struct ocl_op *op, const struct movement_kernel *k,
                        bool grad, const int64_t *x_dims, int rank,
                        const TF_Tensor *p, int64_t *before, int64_t *after,
                        int64_t *out_dims)
{
  int64_t p_dims[OCL_MAX_RANK];
  int p_rank = tensor_dims(p, p_dims);
  if (rank > 5)
    return ocl_op_fail(op, TF_UNIMPLEMENTED, "inputs rank not in [0,5]: %d",
                       rank);
  if (p_rank != 2 || p_dims[1] != 2)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "paddings must be a matrix with 2 columns: %s",
                       SHAPE(p_dims, p_rank));
  if (p_dims[0] != rank)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "The first dimension of paddings must be the rank of "
                       "inputs%s%s%s",
                       SHAPE(p_dims, p_rank), grad ? " " : ", ",
                       SHAPE(x_dims, rank));
  for (int d = 0; d < rank; d++) {
    long long b = ocl_host_int(p, 2 * d), a = ocl_host_int(p, 2 * d + 1);
    long long dim = x_dims[d];
    before[d] = b;
    after[d] = a;
    if (!grad) {
      if (b < 0 || a < 0)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "paddings must be non-negative: %lld %lld", b, a);
      if (k->sym && (b > dim || a > dim))
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "paddings must be no greater than the dimension "
                           "size: %lld, %lld greater than %lld",
                           b, a, dim);
      if (!k->sym && (b >= dim || a >= dim))
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "paddings must be less than the dimension size: "
                           "%lld, %lld not less than %lld",
                           b, a, dim);
      out_dims[d] = b + dim + a; /* at most 3 * dim */
      continue;
    }
    if (b < 0 || a < 0)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "Paddings must be non-negative: %lld, %lld", b, a);
    long long total;
    if (__builtin_add_overflow(b, a, &total) || total >= dim)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "Total paddings must be less than the input "
                         "dimension size: %lld was not less than %lld",
                         (long long)((unsigned long long)b +
                                     (unsigned long long)a),
                         dim);
    long long out = dim - total;
    if (k->sym && (b > out || a > out))
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "paddings must be no greater than the output "
                         "dimension size: %lld, %lld greater than %lld",
                         b, a, out);
    if (!k->sym && (b >= out || a >= out))
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "paddings must be less than the output dimension "
                         "size: %lld, %lld not less than %lld",
                         b, a, out);
    out_dims[d] = out;
  }
  return true;
}

static void mirror_pad(struct ocl_op *op, struct movement_kernel *k)
{
  bool grad = k->op->kind == MIRROR_PAD_GRAD;
  int64_t x_dims[OCL_MAX_RANK], out_dims[OCL_MAX_RANK];
  int64_t before[OCL_MAX_RANK], after[OCL_MAX_RANK];

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *p = x ? ocl_op_input(op, 1) : NULL;
  if (p == NULL)
    return;
  int rank = tensor_dims(x, x_dims);
  if (!mirror_args(op, k, grad, x_dims, rank, p, before, after, out_dims))
    return;
  if (same_dims(out_dims, rank, x_dims, rank)) {
    ocl_op_forward(op, 0, x);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, out_dims, rank);
  int64_t n = product(out_dims, 0, rank), in_n = product(x_dims, 0, rank);
  if (y == NULL || n == 0)
    return;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  if (grad && k->dtype == TF_DOUBLE && !info->has_fp64) {
    ocl_op_fail(op, TF_UNIMPLEMENTED,
                "MirrorPadGrad of float64 needs an OpenCL device with "
                "cl_khr_fp64");
    return;
  }
  union move_args a;
  memset(&a, 0, sizeof(a));
  a.a.rank = rank;
  a.a.n = n;
  a.a.mode = k->sym;
  a.a.bf16 = k->dtype == TF_BFLOAT16;
  /* The kernels index the output by dims and read the input by in_dims
   * and in_strides (the padded shape is the input's for the gradient). */
  ocl_shape_strides(x_dims, rank, a.a.in_strides);
  for (int d = 0; d < rank; d++) {
    a.a.dims[d] = out_dims[d];
    a.a.in_dims[d] = x_dims[d];
    a.a.before[d] = before[d];
  }
  struct ocl_buffer b[2];
  if (!resolve(op, k, x, 0, in_n - 1, &b[0]) ||
      !resolve(op, k, y, 0, n - 1, &b[1]))
    return;
  bool wide = n >= INT_EXTENT_MAX || in_n >= INT_EXTENT_MAX;
  if (grad) {
    launch(op, k, MIRROR_GRAD, wide, b, 2, &a, 1, NULL, NULL);
  } else if (info->cpu_shape) {
    a.a.chunk = cpu_chunk(info, n);
    size_t items = (size_t)ceil_div(n, a.a.chunk);
    launch(op, k, MIRROR_CHUNKS, wide, b, 2, &a, 1, &items, NULL);
  } else {
    launch(op, k, MIRROR_FLAT, wide, b, 2, &a, 1, NULL, NULL);
  }
}

/* ---- ReverseSequence --------------------------------------------------------- */

static void reverse_sequence(struct ocl_op *op, struct movement_kernel *k)
{
  int64_t x_dims[OCL_MAX_RANK], l_dims[OCL_MAX_RANK];

  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *lens = x ? ocl_op_input(op, 1) : NULL;
  if (lens == NULL)
    return;
  int rank = tensor_dims(x, x_dims), l_rank = tensor_dims(lens, l_dims);
  int64_t bd = k->batch_dim, sd = k->seq_dim;
  if (l_rank != 1) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "seq_lengths must be 1-dim, not %d",
                l_rank);
    return;
  }
  if (bd == sd) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "batch_dim == seq_dim == %lld",
                (long long)sd);
    return;
  }
  if (sd >= rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "seq_dim must be < input rank ( %lld vs. %d)", (long long)sd,
                rank);
    return;
  }
  if (bd >= rank) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "batch_dim must be < input rank ( %lld vs. %d)",
                (long long)bd, rank);
    return;
  }
  if (l_dims[0] != x_dims[bd]) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "Length of seq_lengths != input.dims(%lld), (%lld vs. %lld)",
                (long long)bd, (long long)l_dims[0], (long long)x_dims[bd]);
    return;
  }
  if (rank < 2 || rank > 5) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT,
                "ReverseSequenceOp : Unhandled input dimensions: %d", rank);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, x_dims, rank);
  int64_t n = product(x_dims, 0, rank);
  if (y == NULL || n == 0)
    return;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  /* [A, X, B, Y, C]: X and Y the batch and seq dims in their order. */
  int lo = (int)(bd < sd ? bd : sd), hi = (int)(bd < sd ? sd : bd);
  union move_args a;
  memset(&a, 0, sizeof(a));
  a.a.rank = 5;
  a.a.n = n;
  a.a.dims[0] = product(x_dims, 0, lo);
  a.a.dims[1] = x_dims[lo];
  a.a.dims[2] = product(x_dims, lo + 1, hi);
  a.a.dims[3] = x_dims[hi];
  a.a.dims[4] = product(x_dims, hi + 1, rank);
  ocl_shape_strides(a.a.dims, 5, a.a.in_strides);
  a.a.bdim = bd < sd ? 1 : 3;
  a.a.sdim = bd < sd ? 3 : 1;
  a.a.len64 = k->len64;
  struct ocl_buffer b[3];
  if (!resolve(op, k, x, 0, n - 1, &b[0]) ||
      !resolve(op, k, y, 0, n - 1, &b[1]) ||
      !ocl_op_buffer(op, lens, 0, (size_t)l_dims[0] * (k->len64 ? 8 : 4),
                     &b[2]))
    return;
  bool wide = n >= INT_EXTENT_MAX;
  if (info->cpu_shape) {
    int64_t cols = a.a.dims[4], rows = n / cols;
    a.a.chunk = cpu_chunk(info, n) / cols;
    if (a.a.chunk < 1)
      a.a.chunk = 1;
    size_t items = (size_t)ceil_div(rows, a.a.chunk);
    launch(op, k, REV_SEQ_CHUNKS, wide, b, 3, &a, 1, &items, NULL);
  } else {
    launch(op, k, REV_SEQ_FLAT, wide, b, 3, &a, 1, NULL, NULL);
  }
}

/* ---- LinSpace ------------------------------------------------------------------- */

static void lin_space(struct ocl_op *op, struct movement_kernel *k)
{
  static const char *const names[3] = {"start", "stop", "num"};
  int64_t dims[OCL_MAX_RANK];
  TF_Tensor *in[3];

  for (int i = 0; i < 3; i++) {
    if ((in[i] = ocl_op_input(op, i)) == NULL)
      return;
    int rank = tensor_dims(in[i], dims);
    if (rank != 0) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s must be a scalar, not shape %s",
                  names[i], SHAPE(dims, rank));
      return;
    }
  }
  int64_t num = ocl_host_int(in[2], 0);
  if (num <= 0) {
    ocl_op_fail(op, TF_INVALID_ARGUMENT, "Requires num > 0: %lld",
                (long long)num);
    return;
  }
  TF_Tensor *y = ocl_op_output(op, 0, k->dtype, &num, 1);
  if (y == NULL)
    return;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return;
  /* step as TensorFlow computes it, in T; the bits travel as ulong. */
  uint64_t start = 0, step = 0, stop = 0;
  if (k->dtype == TF_FLOAT) {
    float s = *(const float *)ocl_host_data(in[0]);
    float e = *(const float *)ocl_host_data(in[1]);
    float st = num > 1 ? (e - s) / (float)(num - 1) : 0.0f;
    uint32_t bits;
    memcpy(&bits, &s, 4);
    start = bits;
    memcpy(&bits, &e, 4);
    stop = bits;
    memcpy(&bits, &st, 4);
    step = bits;
  } else {
    if (!info->has_fp64) {
      ocl_op_fail(op, TF_UNIMPLEMENTED,
                  "LinSpace of float64 needs an OpenCL device with "
                  "cl_khr_fp64");
      return;
    }
    double s = *(const double *)ocl_host_data(in[0]);
    double e = *(const double *)ocl_host_data(in[1]);
    double st = num > 1 ? (e - s) / (double)(num - 1) : 0.0;
    memcpy(&start, &s, 8);
    memcpy(&stop, &e, 8);
    memcpy(&step, &st, 8);
  }
  struct ocl_buffer b;
  if (!resolve(op, k, y, 0, num - 1, &b))
    return;
  bool wide = num >= INT_EXTENT_MAX;
  struct ocl_arg args[5] = {OCL_BUF(b), OCL_LONG(start), OCL_LONG(step),
                            OCL_LONG(stop),
                            wide ? OCL_LONG(num) : OCL_INT(num)};
  ocl_launch_1d(op, &k->k[wide][LINSPACE_FLAT], (size_t)num, args, 5);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

/* The attributes of the ops added with ReverseV2 (mode, block_size,
 * data_format, seq_dim, batch_dim, Tlen), checked as TensorFlow's
 * constructors check them. */
static bool more_attrs(TF_OpKernelConstruction *ctx, struct movement_kernel *k,
                       TF_Status *status)
{
  char buf[16];
  switch (k->op->kind) {
  case MIRROR_PAD:
  case MIRROR_PAD_GRAD:
    if (!ocl_string_attr(ctx, "mode", buf, sizeof(buf), status))
      return false;
    if (strcmp(buf, "REFLECT") != 0 && strcmp(buf, "SYMMETRIC") != 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "mode must be either REFLECT or SYMMETRIC.");
      return false;
    }
    k->sym = strcmp(buf, "SYMMETRIC") == 0;
    return true;
  case DEPTH_TO_SPACE:
  case SPACE_TO_DEPTH:
    if (!ocl_string_attr(ctx, "data_format", buf, sizeof(buf), status)) {
      /* Absent: TensorFlow's default, NHWC. */
      ocl_set_ok(status);
      snprintf(buf, sizeof(buf), "NHWC");
    }
    if (strcmp(buf, "NHWC") != 0 && strcmp(buf, "NCHW") != 0 &&
        strcmp(buf, "NCHW_VECT_C") != 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT, "Invalid data format");
      return false;
    }
    k->nchw = strcmp(buf, "NCHW") == 0;
    k->vect_c = strcmp(buf, "NCHW_VECT_C") == 0;
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "block_size",
                                             &k->block_size, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      return false;
    if (k->block_size <= 1) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Block size should be > 1, but was: %lld",
                     (long long)k->block_size);
      return false;
    }
    return true;
  case REVERSE_SEQUENCE: {
    TF_DataType tlen = TF_INT64;
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "batch_dim", &k->batch_dim,
                                             status);
    if (ocl_tf.GetCode(status) != TF_OK) {
      k->batch_dim = 0; /* TensorFlow's default */
      ocl_set_ok(status);
    }
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "seq_dim", &k->seq_dim,
                                             status);
    if (ocl_tf.GetCode(status) != TF_OK)
      return false;
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "Tlen", &tlen, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      ocl_set_ok(status);
    k->len64 = tlen == TF_INT64;
    if (k->batch_dim < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT, "Invalid batch_dim %lld",
                     (long long)k->batch_dim);
      return false;
    }
    if (k->seq_dim < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT, "Invalid seq_dim %lld",
                     (long long)k->seq_dim);
      return false;
    }
    return true;
  }
  default:
    return true;
  }
}

static void *movement_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct movement_op *op = &movement_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct movement_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  ocl_tf.OpKernelConstruction_GetAttrType(
      ctx, op->type_attr != NULL ? op->type_attr : "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  size_t size = ocl_tf.DataTypeSize(k->dtype);
  k->halves = size == 16 ? 2 : 1;
  k->unit = size / (size_t)k->halves;
  int program = k->unit == 1 ? 0 : k->unit == 2 ? 1 : k->unit == 4 ? 2
              : k->unit == 8 ? 3 : -1;
  if (program < 0) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "%s of %zu-byte elements is not supported on the OPENCL "
                   "device",
                   op->op, size);
    goto fail;
  }
  for (int w = 0; w < NUM_WIDTHS; w++)
    for (int i = 0; i < NUM_KERNELS; i++)
      ocl_kernel_init(&k->k[w][i], &programs[w][program], kernel_names[i]);
  if (op->kind == PACK || op->kind == UNPACK) {
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "axis", &k->axis, status);
    /* Absent: TensorFlow's default, 0. */
    if (ocl_tf.GetCode(status) != TF_OK)
      k->axis = 0;
    ocl_set_ok(status);
  }
  if (op->kind == PARALLEL_CONCAT_UPDATE) {
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "loc", &k->axis, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  if (op->kind == PARALLEL_CONCAT_START &&
      !parallel_concat_shape(ctx, k, status))
    goto fail;
  if (!more_attrs(ctx, k, status))
    goto fail;
  if (op->kind == STRIDED_SLICE || op->kind == STRIDED_SLICE_GRAD) {
    static const char *const names[5] = {"begin_mask", "end_mask",
                                         "ellipsis_mask", "new_axis_mask",
                                         "shrink_axis_mask"};
    for (int i = 0; i < 5; i++) {
      ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, names[i], &k->masks[i],
                                               status);
      if (ocl_tf.GetCode(status) != TF_OK)
        k->masks[i] = 0;
      ocl_set_ok(status);
    }
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void movement_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct movement_kernel *k = kernel;
  struct ocl_op op;

  ocl_op_begin(&op, ctx);
  switch (k->op->kind) {
  case TRANSPOSE: transpose(&op, k); break;
  case CONCAT_V2: concat(&op, k); break;
  case PACK: pack(&op, k); break;
  case UNPACK: unpack(&op, k); break;
  case SPLIT: split(&op, k); break;
  case SPLIT_V: split_v(&op, k); break;
  case SLICE: slice(&op, k); break;
  case STRIDED_SLICE: strided_slice(&op, k); break;
  case STRIDED_SLICE_GRAD: strided_slice_grad(&op, k); break;
  case TILE: tile(&op, k); break;
  case PAD:
  case PAD_V2: pad(&op, k); break;
  case PARALLEL_CONCAT_START: parallel_concat_start(&op, k); break;
  case PARALLEL_CONCAT_UPDATE: parallel_concat_update(&op, k); break;
  case SPACE_TO_BATCH_ND:
  case BATCH_TO_SPACE_ND: space_batch(&op, k); break;
  case REVERSE_V2: reverse_v2(&op, k); break;
  case ROLL: roll(&op, k); break;
  case MIRROR_PAD:
  case MIRROR_PAD_GRAD: mirror_pad(&op, k); break;
  case DEPTH_TO_SPACE:
  case SPACE_TO_DEPTH: depth_space(&op, k); break;
  case REVERSE_SEQUENCE: reverse_sequence(&op, k); break;
  case LIN_SPACE: lin_space(&op, k); break;
  }
  ocl_op_end(&op);
}

static void movement_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per movement op");
OCL_FAMILY_CREATES(movement, movement_create);

/* ---- Bitcast ------------------------------------------------------------ */

/* Bitcast reinterprets the input's bytes as `type`. Like TensorFlow's
 * BitcastOp, the output shares the input's buffer (no copy, any dtype): a
 * wider input gains a last dim, a narrower one loses it. */
struct bitcast_kernel {
  TF_DataType in_type, out_type;
};

static void *bitcast_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct bitcast_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->in_type, status);
  if (ocl_tf.GetCode(status) == TF_OK)
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "type", &k->out_type, status);
  if (ocl_tf.GetCode(status) == TF_OK &&
      (ocl_tf.DataTypeSize(k->in_type) == 0 ||
       ocl_tf.DataTypeSize(k->out_type) == 0))
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "Bitcast of types without a fixed size (%d, %d) is not "
                   "supported",
                   (int)k->in_type, (int)k->out_type);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  ocl_tf.DeleteStatus(status);
  return k;
}

static void bitcast_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct bitcast_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK + 1];

  ocl_op_begin(&op, ctx);
  TF_Tensor *in = ocl_op_input(&op, 0);
  if (in == NULL)
    goto out;
  int rank = tensor_dims(in, dims);
  size_t in_size = ocl_tf.DataTypeSize(k->in_type);
  size_t out_size = ocl_tf.DataTypeSize(k->out_type);
  if (in_size > out_size) {
    dims[rank++] = (int64_t)(in_size / out_size);
  } else if (in_size < out_size) {
    /* TensorFlow names the dtypes by their enum values. */
    if (rank == 0 || dims[rank - 1] != (int64_t)(out_size / in_size)) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "Cannot bitcast from %d to %d",
                  (int)k->in_type, (int)k->out_type);
      goto out;
    }
    rank--;
  }
  /* An empty tensor of the output type takes over the input's buffer. */
  int64_t empty = 0;
  TF_Tensor *y = ocl_tf.AllocateTensor(k->out_type, &empty, 1, 0);
  if (y == NULL) {
    ocl_op_fail(&op, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto out;
  }
  ocl_tf.TensorBitcastFrom(in, k->out_type, y, dims, rank, op.status);
  if (ocl_op_ok(&op))
    ocl_op_forward(&op, 0, y);
  ocl_tf.DeleteTensor(y);
out:
  ocl_op_end(&op);
}

/* ---- Registration ------------------------------------------------------ */

/* Every fixed-size dtype TensorFlow's GPU kernels of these ops take: they
 * move bytes, so the dtype only picks the element size. */
static const TF_DataType movement_types[] = {
    TF_FLOAT,  TF_HALF,   TF_BFLOAT16, TF_DOUBLE, TF_INT8,
    TF_UINT8,  TF_INT16,  TF_UINT16,   TF_INT32,  TF_UINT32,
    TF_INT64,  TF_UINT64, TF_BOOL,     TF_COMPLEX64, TF_COMPLEX128};

void ocl_register_movement_kernels(void)
{
  for (int i = 0; i < NUM_OPS; i++) {
    const struct movement_op *op = &movement_ops[i];
    /* The pair must run together (see the table); Start's shape attribute
     * needs TF_OpKernelConstruction_GetAttrTensorShape, which only
     * TensorFlow's with kernels_experimental.h export. */
    if ((op->kind == PARALLEL_CONCAT_START ||
         op->kind == PARALLEL_CONCAT_UPDATE) &&
        (ocl_tf.OpKernelConstruction_GetAttrTensorShape == NULL ||
         ocl_tf.OpKernelConstruction_GetAttrSize == NULL))
      continue;
    for (size_t t = 0; t < sizeof(movement_types) / sizeof(movement_types[0]);
         t++) {
      if (op->unsupported & TB(movement_types[t]))
        continue;
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = movement_creates[i],
          .compute = movement_compute,
          .destroy = movement_delete,
          .type_attrs = {op->type_attr != NULL ? op->type_attr : "T"},
          .types = {movement_types[t]},
          .host_args = movement_types[t] == TF_INT32 &&
                               op->int32_host_args != NULL
                           ? op->int32_host_args
                           : op->host_args,
      });
    }
  }

  /* Unconstrained, as TensorFlow's GPU registration: every dtype, in
   * device memory. It needs TF_TensorBitcastFrom to share the buffer. */
  if (ocl_tf.TensorBitcastFrom != NULL)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "Bitcast",
        .create = bitcast_create,
        .compute = bitcast_compute,
        .destroy = movement_delete,
    });
}
