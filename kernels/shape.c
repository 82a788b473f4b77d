/* Shape logic shared by all kernel families; see shape.h. */
#include "shape.h"

#include <stdio.h>
#include <string.h>

#include "status_format.h"

void ocl_shape_format(const int64_t *dims, int rank, char *buf, int buf_len)
{
  int used = snprintf(buf, (size_t)buf_len, "[");
  for (int i = 0; i < rank && used < buf_len; i++)
    used += snprintf(buf + used, (size_t)(buf_len - used), "%s%lld",
                     i ? "," : "", (long long)dims[i]);
  if (used < buf_len)
    snprintf(buf + used, (size_t)(buf_len - used), "]");
}

int64_t ocl_shape_elements(const int64_t *dims, int rank)
{
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  return n;
}

static bool fail_incompatible(const int64_t *x_dims, int x_rank,
                              const int64_t *y_dims, int y_rank,
                              TF_Status *status)
{
  char xs[160], ys[160];
  ocl_shape_format(x_dims, x_rank, xs, sizeof(xs));
  ocl_shape_format(y_dims, y_rank, ys, sizeof(ys));
  ocl_set_status(status, TF_INVALID_ARGUMENT, "Incompatible shapes: %s vs. %s",
                 xs, ys);
  return false;
}

static bool fail_rank(int rank, TF_Status *status)
{
  ocl_set_status(status, TF_UNIMPLEMENTED,
                 "Broadcast between shapes of rank %d is not supported on the "
                 "OPENCL device (at most %d dimensions after merging)",
                 rank, OCL_MAX_DIMS);
  return false;
}

/* Dims of `src` right-aligned into `rank` dims, padded with 1. */
static void right_align(const int64_t *src, int src_rank, int rank,
                        int64_t *dst)
{
  for (int i = 0; i < rank; i++) {
    int j = i - (rank - src_rank);
    dst[i] = j >= 0 ? src[j] : 1;
  }
}

/* Broadcast state of one dim for one operand: 0 = size 1 (broadcast or
 * degenerate), 1 = full. Adjacent dims with equal states for both operands
 * can be merged. */
static int bcast_state(int64_t in, int64_t out) { return in == out && out != 1; }

bool ocl_bcast_init(struct ocl_bcast *b, const int64_t *x_dims, int x_rank,
                    const int64_t *y_dims, int y_rank, TF_Status *status)
{
  int rank = x_rank > y_rank ? x_rank : y_rank;
  /* Uncollapsed ranks beyond the limit are fine as long as merging brings
   * them down; track in a generous buffer. */
  enum { MAX_IN = 64 };
  int64_t xa[MAX_IN], ya[MAX_IN];

  memset(b, 0, sizeof(*b));
  if (rank > MAX_IN)
    return fail_rank(rank, status);
  right_align(x_dims, x_rank, rank, xa);
  right_align(y_dims, y_rank, rank, ya);

  int64_t out[MAX_IN];
  for (int i = 0; i < rank; i++) {
    if (xa[i] == ya[i] || ya[i] == 1)
      out[i] = xa[i];
    else if (xa[i] == 1)
      out[i] = ya[i];
    else
      return fail_incompatible(x_dims, x_rank, y_dims, y_rank, status);
  }
  b->out_rank = rank;
  b->out_elements = ocl_shape_elements(out, rank);
  if (rank <= OCL_MAX_DIMS)
    memcpy(b->out_dims, out, sizeof(int64_t) * (size_t)rank);
  b->x_scalar = ocl_shape_elements(x_dims, x_rank) == 1;
  b->y_scalar = ocl_shape_elements(y_dims, y_rank) == 1;

  /* Merge adjacent dims with the same (x, y) broadcast state; dims of size
   * 1 in the output are dropped entirely. */
  int n = 0;
  int64_t dims[MAX_IN];
  int xs[MAX_IN], ys[MAX_IN];
  for (int i = 0; i < rank; i++) {
    if (out[i] == 1)
      continue;
    int sx = bcast_state(xa[i], out[i]), sy = bcast_state(ya[i], out[i]);
    if (n > 0 && xs[n - 1] == sx && ys[n - 1] == sy) {
      dims[n - 1] *= out[i];
    } else {
      dims[n] = out[i];
      xs[n] = sx;
      ys[n] = sy;
      n++;
    }
  }
  if (n == 0) {
    dims[0] = 1;
    xs[0] = ys[0] = 1;
    n = 1;
  }
  if (n > OCL_MAX_DIMS || rank > OCL_MAX_DIMS)
    return fail_rank(rank, status);

  b->rank = n;
  int64_t x_stride = 1, y_stride = 1;
  for (int i = n - 1; i >= 0; i--) {
    b->dims[i] = dims[i];
    b->x_strides[i] = xs[i] ? x_stride : 0;
    b->y_strides[i] = ys[i] ? y_stride : 0;
    if (xs[i])
      x_stride *= dims[i];
    if (ys[i])
      y_stride *= dims[i];
  }
  b->same_shape = n == 1 && xs[0] && ys[0];
  return true;
}

bool ocl_broadcast_to_init(struct ocl_broadcast_to *b, const int64_t *in_dims,
                           int in_rank, const int64_t *out_dims, int out_rank,
                           TF_Status *status)
{
  memset(b, 0, sizeof(*b));
  if (in_rank > out_rank || out_rank > OCL_MAX_DIMS) {
    char is[160], os[160];
    ocl_shape_format(in_dims, in_rank, is, sizeof(is));
    ocl_shape_format(out_dims, out_rank, os, sizeof(os));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Unable to broadcast tensor of shape %s to tensor of shape %s",
                   is, os);
    return false;
  }
  int64_t ia[OCL_MAX_DIMS];
  right_align(in_dims, in_rank, out_rank, ia);
  for (int i = 0; i < out_rank; i++) {
    if (ia[i] != out_dims[i] && ia[i] != 1) {
      char is[160], os[160];
      ocl_shape_format(in_dims, in_rank, is, sizeof(is));
      ocl_shape_format(out_dims, out_rank, os, sizeof(os));
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Unable to broadcast tensor of shape %s to tensor of "
                     "shape %s",
                     is, os);
      return false;
    }
  }
  b->out_elements = ocl_shape_elements(out_dims, out_rank);
  int n = 0;
  int64_t dims[OCL_MAX_DIMS];
  int full[OCL_MAX_DIMS];
  for (int i = 0; i < out_rank; i++) {
    if (out_dims[i] == 1)
      continue;
    int f = ia[i] == out_dims[i];
    if (n > 0 && full[n - 1] == f) {
      dims[n - 1] *= out_dims[i];
    } else {
      dims[n] = out_dims[i];
      full[n] = f;
      n++;
    }
  }
  if (n == 0) {
    dims[0] = 1;
    full[0] = 1;
    n = 1;
  }
  b->rank = n;
  int64_t stride = 1;
  for (int i = n - 1; i >= 0; i--) {
    b->dims[i] = dims[i];
    b->in_strides[i] = full[i] ? stride : 0;
    if (full[i])
      stride *= dims[i];
  }
  return true;
}

bool ocl_reduction_init(struct ocl_reduction *r, const int64_t *in_dims,
                        int in_rank, const int64_t *axes, int num_axes,
                        bool keep_dims, TF_Status *status)
{
  bool reduce_axis[OCL_MAX_DIMS] = {false};

  memset(r, 0, sizeof(*r));
  if (in_rank > OCL_MAX_DIMS) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "Reductions of rank %d tensors are not supported on the "
                   "OPENCL device (at most %d)",
                   in_rank, OCL_MAX_DIMS);
    return false;
  }
  for (int i = 0; i < num_axes; i++) {
    int64_t axis = axes[i];
    if (axis < -in_rank || axis >= in_rank) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Invalid reduction dimension (%lld for input with %d "
                     "dimension(s)",
                     (long long)axis, in_rank);
      return false;
    }
    reduce_axis[axis < 0 ? axis + in_rank : axis] = true;
  }

  r->in_elements = ocl_shape_elements(in_dims, in_rank);
  for (int i = 0; i < in_rank; i++) {
    if (!reduce_axis[i])
      r->out_dims[r->out_rank++] = in_dims[i];
    else if (keep_dims)
      r->out_dims[r->out_rank++] = 1;
  }
  r->out_elements = ocl_shape_elements(r->out_dims, r->out_rank);

  /* Size-1 dims carry no work whichever group they join: drop them, then
   * merge runs of equally-reduced dims. */
  for (int i = 0; i < in_rank; i++) {
    if (in_dims[i] == 1)
      continue;
    if (r->rank > 0 && r->reduced[r->rank - 1] == reduce_axis[i]) {
      r->dims[r->rank - 1] *= in_dims[i];
    } else {
      r->dims[r->rank] = in_dims[i];
      r->reduced[r->rank] = reduce_axis[i];
      r->rank++;
    }
  }

  /* [outer?, reduce?, inner?]: at most one reduced group. */
  int reduced_groups = 0;
  for (int i = 0; i < r->rank; i++)
    reduced_groups += r->reduced[i];
  r->valid_3d = reduced_groups <= 1;
  r->outer = r->reduce = r->inner = 1;
  if (r->valid_3d) {
    bool seen_reduce = false;
    for (int i = 0; i < r->rank; i++) {
      if (r->reduced[i]) {
        r->reduce = r->dims[i];
        seen_reduce = true;
      } else if (seen_reduce) {
        r->inner *= r->dims[i];
      } else {
        r->outer *= r->dims[i];
      }
    }
    if (!seen_reduce) {
      /* Nothing reduced: every element is its own output. */
      r->outer = r->in_elements;
    }
  }
  return true;
}

bool ocl_transpose_init(struct ocl_transpose *t, const int64_t *in_dims,
                        int in_rank, const int64_t *perm, int perm_len,
                        TF_Status *status)
{
  bool seen[OCL_MAX_DIMS] = {false};

  memset(t, 0, sizeof(*t));
  if (perm_len != in_rank) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "transpose expects a vector of size %d. But input(1) is a "
                   "vector of size %d",
                   in_rank, perm_len);
    return false;
  }
  if (in_rank > OCL_MAX_DIMS) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "Transpose of rank %d tensors is not supported on the "
                   "OPENCL device (at most %d)",
                   in_rank, OCL_MAX_DIMS);
    return false;
  }
  for (int i = 0; i < in_rank; i++) {
    int64_t d = perm[i];
    if (d < 0 || d >= in_rank) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%lld is out of range [0 .. %d)", (long long)d, in_rank);
      return false;
    }
    if (seen[d]) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%lld is duplicated in perm", (long long)d);
      return false;
    }
    seen[d] = true;
  }

  t->out_rank = in_rank;
  for (int i = 0; i < in_rank; i++)
    t->out_dims[i] = in_dims[perm[i]];
  t->elements = ocl_shape_elements(in_dims, in_rank);

  /* Drop size-1 input dims, renumbering the perm over what is left. */
  int keep_index[OCL_MAX_DIMS];
  int64_t kdims[OCL_MAX_DIMS];
  int kept = 0;
  for (int d = 0; d < in_rank; d++) {
    keep_index[d] = in_dims[d] == 1 ? -1 : kept;
    if (in_dims[d] != 1)
      kdims[kept++] = in_dims[d];
  }
  int kperm[OCL_MAX_DIMS];
  int kp = 0;
  for (int i = 0; i < in_rank; i++)
    if (keep_index[perm[i]] >= 0)
      kperm[kp++] = keep_index[perm[i]];

  /* Merge output dims whose input dims are consecutive and in order. */
  int group_of_in[OCL_MAX_DIMS];
  int groups = 0;
  int64_t gdims[OCL_MAX_DIMS];
  int gfirst_in[OCL_MAX_DIMS];
  for (int i = 0; i < kp; i++) {
    if (i > 0 && kperm[i] == kperm[i - 1] + 1) {
      gdims[groups - 1] *= kdims[kperm[i]];
    } else {
      gdims[groups] = kdims[kperm[i]];
      gfirst_in[groups] = kperm[i];
      groups++;
    }
    group_of_in[kperm[i]] = groups - 1;
  }
  if (groups == 0) {
    t->rank = 1;
    t->dims[0] = 1;
    t->perm[0] = 0;
    t->in_strides[0] = 1;
    t->identity = true;
    return true;
  }

  /* The groups in input order give the collapsed input's strides. */
  int64_t stride_of_group[OCL_MAX_DIMS];
  int64_t stride = 1;
  for (int d = kept - 1; d >= 0; d--) {
    int g = group_of_in[d];
    if (gfirst_in[g] == d) {
      stride_of_group[g] = stride;
      stride *= gdims[g];
    }
  }
  t->rank = groups;
  t->identity = groups == 1;
  for (int g = 0; g < groups; g++) {
    t->dims[g] = gdims[g];
    t->in_strides[g] = stride_of_group[g];
    t->perm[g] = g;
  }
  /* perm[] in collapsed terms: the rank of each group's first input dim. */
  for (int g = 0; g < groups; g++) {
    int rank_in = 0;
    for (int h = 0; h < groups; h++)
      rank_in += gfirst_in[h] < gfirst_in[g];
    t->perm[g] = rank_in;
  }
  return true;
}
