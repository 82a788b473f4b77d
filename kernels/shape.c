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
  /* A zero anywhere first: the dims before it may overflow together. */
  for (int i = 0; i < rank; i++)
    if (dims[i] == 0)
      return 0;
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
  ocl_set_status(status, TF_INVALID_ARGUMENT,
                 "Shapes of rank %d exceed TensorFlow's limit of %d dimensions",
                 rank, OCL_MAX_RANK);
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

struct ocl_fastdiv ocl_fastdiv_of(uint32_t d)
{
  /* shift = ceil(log2 d); magic = 2^32 (2^shift - d) / d + 1, which fits
   * 32 bits (Granlund and Montgomery's round-up method as PyTorch's
   * IntDivider uses it). */
  uint32_t shift = 0;
  while (shift < 31 && ((uint32_t)1 << shift) < d)
    shift++;
  uint64_t magic = ((UINT64_C(1) << 32) * ((UINT64_C(1) << shift) - d)) / d + 1;
  return (struct ocl_fastdiv){(uint32_t)magic, shift};
}

/* Broadcast state of one dim for one operand: 0 = size 1 (broadcast or
 * degenerate), 1 = full. Adjacent dims with equal states for both operands
 * can be merged. */
static int bcast_state(int64_t in, int64_t out) { return in == out && out != 1; }

bool ocl_bcast_init(struct ocl_bcast *b, const int64_t *x_dims, int x_rank,
                    const int64_t *y_dims, int y_rank, TF_Status *status)
{
  int rank = x_rank > y_rank ? x_rank : y_rank;
  enum { MAX_IN = OCL_MAX_RANK };
  int64_t xa[MAX_IN], ya[MAX_IN];

  /* Not a memset of the whole struct: it is large, and this runs per op. */
  b->x_scalar = b->y_scalar = b->same_shape = false;
  if (rank > MAX_IN)
    return fail_rank(rank, status);
  if (x_rank == y_rank &&
      memcmp(x_dims, y_dims, sizeof(int64_t) * (size_t)x_rank) == 0) {
    /* Equal shapes (the common case): one flat dim. */
    b->out_rank = x_rank;
    memcpy(b->out_dims, x_dims, sizeof(int64_t) * (size_t)x_rank);
    b->out_elements = ocl_shape_elements(x_dims, x_rank);
    b->rank = 1;
    b->dims[0] = b->out_elements;
    b->x_strides[0] = b->y_strides[0] = 1;
    b->x_scalar = b->y_scalar = b->out_elements == 1;
    b->same_shape = true;
    return true;
  }
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
  if (in_rank > out_rank || out_rank > OCL_MAX_RANK) {
    char is[160], os[160];
    ocl_shape_format(in_dims, in_rank, is, sizeof(is));
    ocl_shape_format(out_dims, out_rank, os, sizeof(os));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Unable to broadcast tensor of shape %s to tensor of shape %s",
                   is, os);
    return false;
  }
  int64_t ia[OCL_MAX_RANK];
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
  /* Nothing to broadcast; the other dims may be anything up to INT64_MAX
   * (TensorShape allows [0, 2^63 - 1, 5]), so their products overflow. */
  if (b->out_elements == 0)
    return true;
  int n = 0;
  int64_t dims[OCL_MAX_RANK];
  int full[OCL_MAX_RANK];
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
  bool reduce_axis[OCL_MAX_RANK] = {false};

  r->out_rank = 0;
  r->rank = 0;
  if (in_rank > OCL_MAX_RANK)
    return fail_rank(in_rank, status);
  for (int i = 0; i < num_axes; i++) {
    int64_t axis = axes[i];
    if (axis < -in_rank || axis >= in_rank) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Invalid reduction dimension (%lld for input with %d "
                     "dimension(s)",
                     (long long)axis, in_rank);
      return false;
    }
    int index = (int)(axis < 0 ? axis + in_rank : axis);
    if (reduce_axis[index]) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Invalid reduction arguments: Axes contains duplicate "
                     "dimension: %d",
                     index);
      return false;
    }
    reduce_axis[index] = true;
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
  bool seen[OCL_MAX_RANK] = {false};

  t->rank = 0;
  t->identity = false;
  if (perm_len != in_rank) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "transpose expects a vector of size %d. But input(1) is a "
                   "vector of size %d",
                   in_rank, perm_len);
    return false;
  }
  if (in_rank > OCL_MAX_RANK)
    return fail_rank(in_rank, status);
  for (int i = 0; i < in_rank; i++) {
    int64_t d = perm[i];
    if (d < 0 || d >= in_rank) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%lld is out of range [0 .. %d)", (long long)d, in_rank);
      return false;
    }
    seen[d] = true;
  }
  for (int i = 0; i < in_rank; i++) {
    if (!seen[i]) {
      /* TensorFlow lists the whole perm: "1 is missing from {0,0}." */
      char list[512];
      int used = 0;
      for (int j = 0; j < in_rank && used < (int)sizeof(list); j++)
        used += snprintf(list + used, sizeof(list) - (size_t)used, "%s%lld",
                         j ? "," : "", (long long)perm[j]);
      ocl_set_status(status, TF_INVALID_ARGUMENT, "%d is missing from {%s}.",
                     i, list);
      return false;
    }
  }

  t->out_rank = in_rank;
  for (int i = 0; i < in_rank; i++)
    t->out_dims[i] = in_dims[perm[i]];
  t->elements = ocl_shape_elements(in_dims, in_rank);

  /* Drop size-1 input dims, renumbering the perm over what is left. */
  int keep_index[OCL_MAX_RANK];
  int64_t kdims[OCL_MAX_RANK];
  int kept = 0;
  for (int d = 0; d < in_rank; d++) {
    keep_index[d] = in_dims[d] == 1 ? -1 : kept;
    if (in_dims[d] != 1)
      kdims[kept++] = in_dims[d];
  }
  int kperm[OCL_MAX_RANK];
  int kp = 0;
  for (int i = 0; i < in_rank; i++)
    if (keep_index[perm[i]] >= 0)
      kperm[kp++] = keep_index[perm[i]];

  /* Merge output dims whose input dims are consecutive and in order. */
  int group_of_in[OCL_MAX_RANK];
  int groups = 0;
  int64_t gdims[OCL_MAX_RANK];
  int gfirst_in[OCL_MAX_RANK];
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
  int64_t stride_of_group[OCL_MAX_RANK];
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

bool ocl_bcast3_init(struct ocl_bcast3 *b, const int64_t *const dims[3],
                     const int ranks[3], TF_Status *status)
{
  enum { MAX_IN = OCL_MAX_RANK };
  int rank = 0;
  int64_t aligned[3][MAX_IN], out[MAX_IN];

  b->same_shape = false;
  for (int k = 0; k < 3; k++)
    rank = ranks[k] > rank ? ranks[k] : rank;
  if (rank > MAX_IN)
    return fail_rank(rank, status);
  for (int k = 0; k < 3; k++)
    right_align(dims[k], ranks[k], rank, aligned[k]);
  for (int i = 0; i < rank; i++) {
    out[i] = 1;
    for (int k = 0; k < 3; k++) {
      int64_t d = aligned[k][i];
      if (d == out[i] || d == 1)
        continue;
      if (out[i] != 1) {
        char s[3][160];
        for (int j = 0; j < 3; j++)
          ocl_shape_format(dims[j], ranks[j], s[j], sizeof(s[j]));
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Incompatible shapes: %s vs. %s vs. %s", s[0], s[1],
                       s[2]);
        return false;
      }
      out[i] = d;
    }
  }
  b->out_rank = rank;
  b->out_elements = ocl_shape_elements(out, rank);
  memcpy(b->out_dims, out, sizeof(int64_t) * (size_t)rank);

  /* Merge adjacent dims whose three broadcast states agree; output dims of
   * size 1 are dropped. */
  int n = 0;
  int64_t merged[MAX_IN];
  int state[MAX_IN][3];
  for (int i = 0; i < rank; i++) {
    if (out[i] == 1)
      continue;
    int st[3];
    for (int k = 0; k < 3; k++)
      st[k] = bcast_state(aligned[k][i], out[i]);
    if (n > 0 && state[n - 1][0] == st[0] && state[n - 1][1] == st[1] &&
        state[n - 1][2] == st[2]) {
      merged[n - 1] *= out[i];
    } else {
      merged[n] = out[i];
      memcpy(state[n], st, sizeof(st));
      n++;
    }
  }
  if (n == 0) {
    merged[0] = 1;
    state[0][0] = state[0][1] = state[0][2] = 1;
    n = 1;
  }
  b->rank = n;
  int64_t stride[3] = {1, 1, 1};
  for (int i = n - 1; i >= 0; i--) {
    b->dims[i] = merged[i];
    for (int k = 0; k < 3; k++) {
      b->strides[k][i] = state[i][k] ? stride[k] : 0;
      if (state[i][k])
        stride[k] *= merged[i];
    }
  }
  b->same_shape = n == 1 && state[0][0] && state[0][1] && state[0][2];
  return true;
}

bool ocl_bcastn_init(struct ocl_bcastn *b, const int64_t *const dims[],
                     const int ranks[], int num, TF_Status *status)
{
  enum { MAX_IN = OCL_MAX_RANK, MAX_OPS = OCL_BCASTN_MAX };
  int rank = 0;
  int64_t aligned[MAX_OPS][MAX_IN], out[MAX_IN];

  b->same_shape = b->flat = false;
  b->num = num;
  if (num < 1 || num > MAX_OPS) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%d operands to broadcast (1 to %d)", num, MAX_OPS);
    return false;
  }
  for (int k = 0; k < num; k++)
    rank = ranks[k] > rank ? ranks[k] : rank;
  if (rank > MAX_IN)
    return fail_rank(rank, status);
  for (int k = 0; k < num; k++)
    right_align(dims[k], ranks[k], rank, aligned[k]);
  for (int i = 0; i < rank; i++) {
    out[i] = 1;
    for (int k = 0; k < num; k++) {
      int64_t d = aligned[k][i];
      if (d == out[i] || d == 1)
        continue;
      if (out[i] != 1) {
        /* Only the error path formats shapes. */
        char msg[1024], s[160];
        size_t len = 0;
        msg[0] = '\0';
        for (int j = 0; j < num && len < sizeof(msg); j++) {
          ocl_shape_format(dims[j], ranks[j], s, sizeof(s));
          int w = snprintf(msg + len, sizeof(msg) - len, "%s%s",
                           j ? " vs. " : "", s);
          len += w > 0 ? (size_t)w : 0;
        }
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Incompatible shapes: %s", msg);
        return false;
      }
      out[i] = d;
    }
  }
  b->out_rank = rank;
  b->out_elements = ocl_shape_elements(out, rank);
  memcpy(b->out_dims, out, sizeof(int64_t) * (size_t)rank);

  /* Merge adjacent dims whose broadcast states agree for every operand
   * (bit k of a state: operand k runs along the dim); output dims of size 1
   * are dropped. */
  int n = 0;
  int64_t merged[MAX_IN];
  unsigned state[MAX_IN];
  for (int i = 0; i < rank; i++) {
    if (out[i] == 1)
      continue;
    unsigned st = 0;
    for (int k = 0; k < num; k++)
      st |= (unsigned)bcast_state(aligned[k][i], out[i]) << k;
    if (n > 0 && state[n - 1] == st) {
      merged[n - 1] *= out[i];
    } else {
      merged[n] = out[i];
      state[n] = st;
      n++;
    }
  }
  unsigned all = (1u << num) - 1;
  if (n == 0) {
    merged[0] = 1;
    state[0] = all;
    n = 1;
  }
  b->rank = n;
  int64_t stride[MAX_OPS];
  for (int k = 0; k < num; k++)
    stride[k] = 1;
  for (int i = n - 1; i >= 0; i--) {
    b->dims[i] = merged[i];
    for (int k = 0; k < num; k++) {
      bool runs = (state[i] >> k) & 1u;
      b->strides[k][i] = runs ? stride[k] : 0;
      if (runs)
        stride[k] *= merged[i];
    }
  }
  b->same_shape = true;
  b->flat = true;
  for (int k = 0; k < num; k++) {
    int64_t elements = ocl_shape_elements(dims[k], ranks[k]);
    b->single[k] = elements == 1;
    b->same_shape = b->same_shape && elements == b->out_elements;
    b->flat = b->flat && (elements == b->out_elements || elements == 1);
  }
  return true;
}

/* ---- Data movement ------------------------------------------------------ */

void ocl_shape_strides(const int64_t *dims, int rank, int64_t *strides)
{
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; d--) {
    strides[d] = stride;
    stride *= dims[d];
  }
}

void ocl_strided_copy_init(struct ocl_strided_copy *c, const int64_t *dims,
                           int rank, const int64_t *in_strides,
                           const int64_t *out_strides, int64_t in_offset,
                           int64_t out_offset)
{
  c->rank = 0;
  c->in_offset = in_offset;
  c->out_offset = out_offset;
  c->elements = ocl_shape_elements(dims, rank);
  for (int d = 0; d < rank; d++) {
    if (dims[d] == 1)
      continue;
    int p = c->rank - 1;
    /* Dim d continues dim p on both sides: one longer dim. */
    if (p >= 0 && c->in_strides[p] == in_strides[d] * dims[d] &&
        c->out_strides[p] == out_strides[d] * dims[d]) {
      c->dims[p] *= dims[d];
      c->in_strides[p] = in_strides[d];
      c->out_strides[p] = out_strides[d];
      continue;
    }
    c->dims[c->rank] = dims[d];
    c->in_strides[c->rank] = in_strides[d];
    c->out_strides[c->rank] = out_strides[d];
    c->rank++;
  }
  if (c->rank == 0) {
    c->rank = 1;
    c->dims[0] = 1;
    c->in_strides[0] = 1;
    c->out_strides[0] = 1;
  }
  c->contiguous = c->rank == 1 && (c->dims[0] == 1 ||
                                   (c->in_strides[0] == 1 &&
                                    c->out_strides[0] == 1));
}

/* Starts a new group of e: output extent out, input extent in, padding
 * before. */
static void expand_push(struct ocl_expand *e, int64_t out, int64_t in,
                        int64_t before)
{
  e->dims[e->rank] = out;
  e->in_dims[e->rank] = in;
  e->before[e->rank] = before;
  e->rank++;
}

/* A dim that neither pads nor repeats joins the group before it: with k its
 * extent, group coordinate c and this one's j become c * k + j on both
 * sides, and "inside" (pad) or "modulo the input" (tile) holds for c * k + j
 * exactly when it holds for c. */
static void expand_join(struct ocl_expand *e, int64_t k)
{
  int g = e->rank - 1;
  e->dims[g] *= k;
  e->in_dims[g] *= k;
  e->before[g] *= k;
}

static void expand_finish(struct ocl_expand *e)
{
  if (e->rank == 0)
    expand_push(e, 1, 1, 0);
  ocl_shape_strides(e->dims, e->rank, e->out_strides);
  ocl_shape_strides(e->in_dims, e->rank, e->in_strides);
  e->elements = ocl_shape_elements(e->dims, e->rank);
  e->in_elements = ocl_shape_elements(e->in_dims, e->rank);
}

void ocl_tile_collapse(struct ocl_expand *e, const int64_t *in_dims, int rank,
                       const int64_t *multiples)
{
  e->rank = 0;
  for (int d = 0; d < rank; d++) {
    if (in_dims[d] == 1 && multiples[d] == 1)
      continue;
    if (multiples[d] == 1 && e->rank > 0)
      expand_join(e, in_dims[d]);
    else
      expand_push(e, in_dims[d] * multiples[d], in_dims[d], 0);
  }
  expand_finish(e);
}

void ocl_pad_collapse(struct ocl_expand *e, const int64_t *in_dims, int rank,
                      const int64_t *before, const int64_t *after)
{
  e->rank = 0;
  for (int d = 0; d < rank; d++) {
    bool padded = before[d] != 0 || after[d] != 0;
    if (in_dims[d] == 1 && !padded)
      continue;
    if (!padded && e->rank > 0)
      expand_join(e, in_dims[d]);
    else
      expand_push(e, before[d] + in_dims[d] + after[d], in_dims[d],
                  before[d]);
  }
  expand_finish(e);
}

/* Where a final (output) dim comes from in the dense spec. */
enum { SLICE_SHRINK = -1, SLICE_NEW_AXIS = -2 };

bool ocl_strided_slice_init(struct ocl_strided_slice *s,
                            const int64_t *in_dims, int in_rank,
                            const int64_t *begin, const int64_t *end,
                            const int64_t *strides, int spec_len,
                            int64_t begin_mask, int64_t end_mask,
                            int64_t ellipsis_mask, int64_t new_axis_mask,
                            int64_t shrink_axis_mask, TF_Status *status)
{
  int64_t dense_end[OCL_MAX_RANK];
  uint64_t dense_begin_mask = 0, dense_end_mask = 0, dense_shrink = 0;
  int gather[OCL_MAX_RANK + OCL_SLICE_SPEC_MAX + 1];
  int num_gather = 0;

  s->rank = 0;
  s->final_rank = 0;
  s->elements = 0;
  s->is_identity = false;
  if (in_rank > OCL_MAX_RANK)
    return fail_rank(in_rank, status);
  if (in_rank > 64) {
    /* The dense masks are 64-bit, as TensorFlow's are int32. */
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "StridedSlice of rank %d tensors is not supported (at most "
                   "64 dims)",
                   in_rank);
    return false;
  }
  if (ellipsis_mask != 0 && (ellipsis_mask & (ellipsis_mask - 1)) != 0) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Multiple ellipses in slice spec not allowed");
    return false;
  }
  /* Step 1: new axes after the ellipsis; no ellipsis means one at the end. */
  int sparse_dims = spec_len;
  int add_after_ellipsis = 0;
  bool ellipsis_seen = false;
  uint64_t ellipsis = (uint64_t)ellipsis_mask;
  for (int i = 0; i < sparse_dims; i++) {
    if (ellipsis_seen && ((1ull << i) & (uint64_t)new_axis_mask) != 0)
      add_after_ellipsis++;
    if ((1ull << i) & ellipsis)
      ellipsis_seen = true;
  }
  if (!ellipsis_seen) {
    ellipsis |= 1ull << sparse_dims;
    sparse_dims++;
  }

  /* Step 2: the dense spec, one entry per input dim. */
  int full_index = 0;
  for (int i = 0; i < sparse_dims; i++) {
    uint64_t bit = 1ull << i;
    if (bit & ellipsis) {
      int next = in_rank - (sparse_dims - i) + 1 + add_after_ellipsis;
      if (next > in_rank)
        next = in_rank;
      for (; full_index < next; full_index++) {
        s->begin[full_index] = dense_end[full_index] = 0;
        s->strides[full_index] = 1;
        dense_begin_mask |= 1ull << full_index;
        dense_end_mask |= 1ull << full_index;
        gather[num_gather++] = full_index;
      }
    } else if (bit & (uint64_t)new_axis_mask) {
      gather[num_gather++] = SLICE_NEW_AXIS;
    } else {
      if (full_index == in_rank) {
        if (in_rank == 0)
          ocl_set_status(status, TF_INVALID_ARGUMENT,
                         "Attempting to slice scalar input.");
        else
          ocl_set_status(status, TF_INVALID_ARGUMENT,
                         "Index out of range using input dim %d; input has "
                         "only %d dims",
                         full_index, in_rank);
        return false;
      }
      s->begin[full_index] = begin[i];
      dense_end[full_index] = end[i];
      s->strides[full_index] = strides[i];
      if (bit & (uint64_t)begin_mask)
        dense_begin_mask |= 1ull << full_index;
      if (bit & (uint64_t)end_mask)
        dense_end_mask |= 1ull << full_index;
      if (bit & (uint64_t)shrink_axis_mask) {
        gather[num_gather++] = SLICE_SHRINK;
        dense_shrink |= 1ull << full_index;
      } else {
        gather[num_gather++] = full_index;
      }
      full_index++;
    }
  }

  /* Step 3: canonical begin/end, bounds, processing shape. */
  s->rank = in_rank;
  s->is_identity = true;
  for (int i = 0; i < in_rank; i++) {
    int64_t *b = &s->begin[i], *e = &dense_end[i];
    int64_t stride = s->strides[i], dim = in_dims[i];
    if (stride == 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "strides[%d] must be non-zero", i);
      return false;
    }
    bool shrink = (dense_shrink >> i) & 1;
    bool masks[2] = {(dense_begin_mask >> i) & 1, (dense_end_mask >> i) & 1};
    int64_t valid[2] = {stride > 0 ? 0 : -1, stride > 0 ? dim : dim - 1};
    if (shrink && stride <= 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "only stride 1 allowed on non-range indexing.");
      return false;
    }
    if (shrink) {
      /* foo[-1]: begin -1, end 0; recreate end as begin + 1. */
      int64_t fwd = *b < 0 ? dim + *b : *b;
      *b = fwd;
      *e = fwd + 1;
      if (fwd < 0 || fwd >= dim) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "slice index %lld of dimension %d out of bounds.",
                       (long long)fwd, i);
        return false;
      }
    } else {
      int64_t *x[2] = {b, e};
      for (int c = 0; c < 2; c++) {
        if (masks[c]) {
          *x[c] = stride > 0 ? valid[c] : valid[(c + 1) & 1];
        } else {
          int64_t fwd = *x[c] < 0 ? dim + *x[c] : *x[c];
          *x[c] = fwd < valid[0] ? valid[0] : fwd > valid[1] ? valid[1] : fwd;
        }
      }
    }
    s->is_identity &= stride == 1 && *b == 0 && *e == dim;
    int64_t interval = *e - *b, size;
    if (interval == 0 || ((interval < 0) != (stride < 0)))
      size = 0;
    else
      size = interval / stride + (interval % stride != 0 ? 1 : 0);
    s->processing_dims[i] = size;
  }

  /* Step 4: the final shape drops shrunk dims and adds new axes. */
  for (int g = 0; g < num_gather; g++) {
    if (gather[g] >= 0)
      s->final_dims[s->final_rank++] = s->processing_dims[gather[g]];
    else if (gather[g] == SLICE_NEW_AXIS)
      s->final_dims[s->final_rank++] = 1;
  }
  s->elements = ocl_shape_elements(s->processing_dims, in_rank);
  return true;
}
