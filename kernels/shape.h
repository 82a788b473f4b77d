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

/* Highest rank any kernel supports after collapsing (TensorFlow's GPU
 * kernels stop at 8 too). */
#define OCL_MAX_DIMS 8

/* Formats dims as TensorFlow prints shapes: "[2,3]". */
void ocl_shape_format(const int64_t *dims, int rank, char *buf, int buf_len);

int64_t ocl_shape_elements(const int64_t *dims, int rank);

/* Binary broadcasting of x and y. out_dims/out_rank is the TensorFlow output
 * shape. The collapsed form has `rank` dims (>= 1) where adjacent dims that
 * broadcast alike are merged; x_strides/y_strides are element strides per
 * collapsed dim, 0 where that operand is broadcast. */
struct ocl_bcast {
  int out_rank;
  int64_t out_dims[OCL_MAX_DIMS];
  int64_t out_elements;

  int rank;
  int64_t dims[OCL_MAX_DIMS];
  int64_t x_strides[OCL_MAX_DIMS];
  int64_t y_strides[OCL_MAX_DIMS];
  /* x and y have the same shape (or the same element count after
   * collapsing): a flat element-wise kernel does. */
  bool same_shape;
  /* One side is a single element. */
  bool x_scalar;
  bool y_scalar;
};

/* INVALID_ARGUMENT "Incompatible shapes: [2,3] vs. [4]" when they do not
 * broadcast, or when the rank exceeds OCL_MAX_DIMS after collapsing. */
bool ocl_bcast_init(struct ocl_bcast *bcast, const int64_t *x_dims,
                    int x_rank, const int64_t *y_dims, int y_rank,
                    TF_Status *status);

/* Broadcast of one input to a target shape (BroadcastTo, gradients):
 * in_strides per collapsed dim, 0 where broadcast. */
struct ocl_broadcast_to {
  int rank;
  int64_t dims[OCL_MAX_DIMS];
  int64_t in_strides[OCL_MAX_DIMS];
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
  int64_t out_dims[OCL_MAX_DIMS];
  int64_t out_elements;
  int64_t in_elements;
  /* Collapsed input: dims[i] is reduced if reduced[i]. */
  int rank;
  int64_t dims[OCL_MAX_DIMS];
  bool reduced[OCL_MAX_DIMS];
  /* When the collapsed input is [outer, reduce, inner] (any of which may be
   * 1): the three extents. valid_3d false means use the general form. */
  bool valid_3d;
  int64_t outer, reduce, inner;
};

/* `axes` may be negative (counted from the end) and repeat, as in
 * TensorFlow. INVALID_ARGUMENT "Invalid reduction dimension (3 for input
 * with 2 dimension(s)" for an axis out of range. */
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
  int64_t out_dims[OCL_MAX_DIMS];
  int64_t elements;
  int rank;
  int64_t dims[OCL_MAX_DIMS]; /* collapsed output dims */
  int perm[OCL_MAX_DIMS];
  int64_t in_strides[OCL_MAX_DIMS]; /* stride in the input of out dim i */
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
  int64_t out_dims[OCL_MAX_DIMS];
  int64_t out_elements;

  int rank;
  int64_t dims[OCL_MAX_DIMS];
  int64_t strides[3][OCL_MAX_DIMS];
  /* All three operands have the output's element count: flat indexing. */
  bool same_shape;
};

bool ocl_bcast3_init(struct ocl_bcast3 *b, const int64_t *const dims[3],
                     const int ranks[3], TF_Status *status);

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
  int64_t dims[OCL_MAX_DIMS];
  int64_t in_strides[OCL_MAX_DIMS];
  int64_t out_strides[OCL_MAX_DIMS];
  int64_t in_offset, out_offset;
  int64_t elements;
  /* One run of consecutive elements on both sides: a buffer copy does. */
  bool contiguous;
};

void ocl_strided_copy_init(struct ocl_strided_copy *c, const int64_t *dims,
                           int rank, const int64_t *in_strides,
                           const int64_t *out_strides, int64_t in_offset,
                           int64_t out_offset);

/* TensorFlow's ValidateStridedSliceOp (util/strided_slice_op.cc) with begin
 * and end given: the sparse spec (begin/end/strides of spec_len < 32
 * entries and the five masks) made dense over the input's dims, canonical
 * and bounds-checked, with TensorFlow's messages. Element p of the
 * processing shape reads input index begin[d] + p_d * strides[d]. */
#define OCL_SLICE_SPEC_MAX 32
struct ocl_strided_slice {
  int rank; /* the input's (= processing) rank */
  int64_t begin[OCL_MAX_DIMS];
  int64_t strides[OCL_MAX_DIMS];
  int64_t processing_dims[OCL_MAX_DIMS];
  int final_rank;
  int64_t final_dims[OCL_MAX_DIMS + OCL_SLICE_SPEC_MAX];
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
