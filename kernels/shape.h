/* Shape logic shared by all kernel families: NumPy broadcasting, reduction
 * axes and transposes, in plain C with no OpenCL.
 *
 * Each helper validates its input the way TensorFlow does and fails with
 * INVALID_ARGUMENT and TensorFlow's wording, then reduces the problem to the
 * fewest dimensions that describe it ("collapsing"), which is what kernels
 * index with. */
#ifndef TFOCL_KERNELS_SHAPE_H_
#define TFOCL_KERNELS_SHAPE_H_

#include <stdbool.h>
#include <stdint.h>

#include "tensorflow/c/tf_status.h"

/* The highest rank of a tensor: TensorFlow's (TensorShape::MaxDimensions).
 * Shapes on the host hold this many dims. */
#define OCL_MAX_RANK 254

/* The dims a kernel's argument struct holds after collapsing. The shape
 * helpers below collapse any rank up to OCL_MAX_RANK; a family whose
 * collapsed problem still has more dims than this splits it on the host
 * (a launch per outer index, or one pass per reduced group). */
#define OCL_MAX_DIMS 8

/* A CPU device's row kernels take 3 collapsed dims: a broadcast of more
 * goes as a rows launch per index of the leading dims where each covers
 * OCL_SPLIT_ROWS_MIN_ELEMENTS or more and there are at most
 * OCL_SPLIT_ROWS_MAX_LAUNCHES; else the span kernels, whose work-item splits
 * its first of OCL_BCAST_SPAN_ELEMENTS outputs into coordinates once and
 * walks the rest (the general kernel divides per dim and element). */
#define OCL_SPLIT_ROWS_MIN_ELEMENTS 16384
#define OCL_SPLIT_ROWS_MAX_LAUNCHES 1024
#define OCL_BCAST_SPAN_ELEMENTS 512

/* Formats dims as TensorFlow prints shapes: "[2,3]". */
void ocl_shape_format(const int64_t *dims, int rank, char *buf, int buf_len);

int64_t ocl_shape_elements(const int64_t *dims, int rank);

/* Binary broadcasting of x and y. out_dims/out_rank is the TensorFlow output
 * shape. The collapsed form has `rank` dims (>= 1) where adjacent dims that
 * broadcast alike are merged; x_strides/y_strides are element strides per
 * collapsed dim, 0 where that operand is broadcast. */
struct ocl_bcast {
  int out_rank;
  int64_t out_dims[OCL_MAX_RANK];
  int64_t out_elements;

  int rank;
  int64_t dims[OCL_MAX_RANK];
  int64_t x_strides[OCL_MAX_RANK];
  int64_t y_strides[OCL_MAX_RANK];
  /* x and y have the same shape (or the same element count after
   * collapsing): a flat element-wise kernel does. */
  bool same_shape;
  /* One side is a single element. */
  bool x_scalar;
  bool y_scalar;
};

/* INVALID_ARGUMENT "Incompatible shapes: [2,3] vs. [4]" when they do not
 * broadcast. The collapsed rank may exceed OCL_MAX_DIMS. */
bool ocl_bcast_init(struct ocl_bcast *bcast, const int64_t *x_dims,
                    int x_rank, const int64_t *y_dims, int y_rank,
                    TF_Status *status);

/* n / d as a multiply-high, an add and a shift, for kernels that split a
 * flat 32-bit index into coordinates: an integer division per element is
 * emulated on GPUs and keeps PoCL from vectorising. Exact for n < 2^31 and
 * 1 <= d < 2^31 (the 32-bit kernels' limits):
 *   n / d == (mul_hi(n, magic) + n) >> shift
 * where the sum cannot wrap because n < 2^31 (common.clh's ocl_fastdiv). */
struct ocl_fastdiv {
  uint32_t magic;
  uint32_t shift;
};

struct ocl_fastdiv ocl_fastdiv_of(uint32_t d);

/* Broadcast of one input to a target shape (BroadcastTo, gradients):
 * in_strides per collapsed dim, 0 where broadcast. */
struct ocl_broadcast_to {
  int rank;
  int64_t dims[OCL_MAX_RANK];
  int64_t in_strides[OCL_MAX_RANK];
  int64_t out_elements;
};

bool ocl_broadcast_to_init(struct ocl_broadcast_to *b, const int64_t *in_dims,
                           int in_rank, const int64_t *out_dims, int out_rank,
                           TF_Status *status);

/* A reduction over any set of axes. Collapsed, the input is an alternation
 * of kept and reduced groups; the common cases are
 *   [outer, reduce, inner] (inner may be 1)  and
 * a general strided form for the rest. */
struct ocl_reduction {
  /* Output shape as TensorFlow gives it, with or without keep_dims. */
  int out_rank;
  int64_t out_dims[OCL_MAX_RANK];
  int64_t out_elements;
  int64_t in_elements;
  /* Collapsed input: dims[i] is reduced if reduced[i]. */
  int rank;
  int64_t dims[OCL_MAX_RANK];
  bool reduced[OCL_MAX_RANK];
  /* When the collapsed input is [outer, reduce, inner] (any of which may be
   * 1): the three extents. valid_3d false means use the general form. */
  bool valid_3d;
  int64_t outer, reduce, inner;
};

/* `axes` may be negative (counted from the end), as in TensorFlow's
 * ReductionHelper; checked in order, INVALID_ARGUMENT "Invalid reduction
 * dimension (3 for input with 2 dimension(s)" for an axis out of range and
 * "Invalid reduction arguments: Axes contains duplicate dimension: 1" for
 * one already given (1 or -1 of 2 dims). */
bool ocl_reduction_init(struct ocl_reduction *r, const int64_t *in_dims,
                        int in_rank, const int64_t *axes, int num_axes,
                        bool keep_dims, TF_Status *status);

/* A permutation of the input's dims, collapsed: runs of dims that stay
 * adjacent and in order are merged. out_dims is TensorFlow's output shape.
 * perm_collapsed[i] is the collapsed input dim that output dim i reads;
 * in_strides are the element strides of the collapsed input. `identity`
 * means a plain copy does. */
struct ocl_transpose {
  int out_rank;
  int64_t out_dims[OCL_MAX_RANK];
  int64_t elements;
  int rank;
  int64_t dims[OCL_MAX_RANK]; /* collapsed output dims */
  int perm[OCL_MAX_RANK];
  int64_t in_strides[OCL_MAX_RANK]; /* stride in the input of out dim i */
  bool identity;
};

/* INVALID_ARGUMENT with TensorFlow's wording for a perm of the wrong size
 * or one that is not a permutation. */
bool ocl_transpose_init(struct ocl_transpose *t, const int64_t *in_dims,
                        int in_rank, const int64_t *perm, int perm_len,
                        TF_Status *status);

/* Three-way broadcasting (SelectV2's condition, then and else): like
 * ocl_bcast, with one stride set per operand (strides[k][d], 0 where
 * operand k is broadcast along collapsed dim d). INVALID_ARGUMENT
 * "Incompatible shapes: [2] vs. [3] vs. [1]" when they do not broadcast. */
struct ocl_bcast3 {
  int out_rank;
  int64_t out_dims[OCL_MAX_RANK];
  int64_t out_elements;

  int rank;
  int64_t dims[OCL_MAX_RANK];
  int64_t strides[3][OCL_MAX_RANK];
  /* All three operands have the output's element count: flat indexing. */
  bool same_shape;
};

bool ocl_bcast3_init(struct ocl_bcast3 *b, const int64_t *const dims[3],
                     const int ranks[3], TF_Status *status);

/* Broadcasting of up to OCL_BCASTN_MAX operands (the fused element-wise
 * op, kernels/fused.c): like ocl_bcast3 for `num` operands. `flat` means
 * every operand holds the output's element count or a single element, so a
 * flat index (times 0 for the single ones) addresses it; `same_shape` that
 * every operand holds the output's element count. INVALID_ARGUMENT
 * "Incompatible shapes: [2] vs. [3] vs. [1]" when they do not broadcast.
 * 9: the fused op's 8 inputs and, for a tiled one, the output's shape. */
#define OCL_BCASTN_MAX 9
struct ocl_bcastn {
  int num;
  int out_rank;
  int64_t out_dims[OCL_MAX_RANK];
  int64_t out_elements;

  int rank;
  int64_t dims[OCL_MAX_RANK];
  int64_t strides[OCL_BCASTN_MAX][OCL_MAX_RANK];
  bool same_shape;
  bool flat;
  bool single[OCL_BCASTN_MAX]; /* operand k holds one element */
};

bool ocl_bcastn_init(struct ocl_bcastn *b, const int64_t *const dims[],
                     const int ranks[], int num, TF_Status *status);

/* ---- Data movement (kernels/movement.c) -------------------------------- */

/* Row-major element strides of a shape. */
void ocl_shape_strides(const int64_t *dims, int rank, int64_t *strides);

/* A strided copy over `dims`: element c of the index space reads
 * in[in_offset + sum c_d * in_strides[d]] and writes
 * out[out_offset + sum c_d * out_strides[d]] (strides may be negative).
 * Transposes, slices, concat/split blocks and gradient scatters all are
 * one. ocl_strided_copy_init collapses it: size-1 dims go, and adjacent
 * dims that are contiguous on both sides merge. */
struct ocl_strided_copy {
  int rank; /* >= 1 after collapsing */
  int64_t dims[OCL_MAX_RANK];
  int64_t in_strides[OCL_MAX_RANK];
  int64_t out_strides[OCL_MAX_RANK];
  int64_t in_offset, out_offset;
  int64_t elements;
  /* One run of consecutive elements on both sides: a buffer copy does. */
  bool contiguous;
};

void ocl_strided_copy_init(struct ocl_strided_copy *c, const int64_t *dims,
                           int rank, const int64_t *in_strides,
                           const int64_t *out_strides, int64_t in_offset,
                           int64_t out_offset);

/* Tile and Pad, collapsed: the output and the input are dense, and group d
 * of the output (extent dims[d]) reads input coordinate (c % in_dims[d])
 * (Tile) or c - before[d] when that lies in [0, in_dims[d]) (Pad; else the
 * constant). A dim that neither repeats nor pads joins the group before it,
 * and size-1 dims that do neither go, so Tile [2,3,4] by [2,1,1] is one
 * group [48] of input [24]. Strides are those of the dense dims. */
struct ocl_expand {
  int rank; /* >= 1 */
  int64_t dims[OCL_MAX_RANK];
  int64_t in_dims[OCL_MAX_RANK];
  int64_t before[OCL_MAX_RANK]; /* Pad; 0 for Tile */
  int64_t out_strides[OCL_MAX_RANK];
  int64_t in_strides[OCL_MAX_RANK];
  int64_t elements, in_elements;
};

/* multiples already checked (>= 0), as Tile's kernel checks them. */
void ocl_tile_collapse(struct ocl_expand *e, const int64_t *in_dims, int rank,
                       const int64_t *multiples);
/* Paddings already checked (>= 0, no overflow), as Pad's kernel checks. */
void ocl_pad_collapse(struct ocl_expand *e, const int64_t *in_dims, int rank,
                      const int64_t *before, const int64_t *after);

/* TensorFlow's ValidateStridedSliceOp (util/strided_slice_op.cc) with begin
 * and end given: the sparse spec (begin/end/strides of spec_len < 32
 * entries and the five masks) made dense over the input's dims, canonical
 * and bounds-checked, with TensorFlow's messages. Element p of the
 * processing shape reads input index begin[d] + p_d * strides[d]. */
#define OCL_SLICE_SPEC_MAX 32
struct ocl_strided_slice {
  int rank; /* the input's (= processing) rank */
  int64_t begin[OCL_MAX_RANK];
  int64_t strides[OCL_MAX_RANK];
  int64_t processing_dims[OCL_MAX_RANK];
  int final_rank;
  int64_t final_dims[OCL_MAX_RANK + OCL_SLICE_SPEC_MAX];
  int64_t elements;
  /* Every dim taken whole with stride 1. */
  bool is_identity;
};

bool ocl_strided_slice_init(struct ocl_strided_slice *s,
                            const int64_t *in_dims, int in_rank,
                            const int64_t *begin, const int64_t *end,
                            const int64_t *strides, int spec_len,
                            int64_t begin_mask, int64_t end_mask,
                            int64_t ellipsis_mask, int64_t new_axis_mask,
                            int64_t shrink_axis_mask, TF_Status *status);

#endif /* TFOCL_KERNELS_SHAPE_H_ */
