/* The conv family's implicit GEMM (the GPU shape; double, bfloat16 and
 * grouped convolutions on any device): conv.cl's igemm_* kernels with no
 * im2col buffer, tiles staged in local memory; direct kernels where a tile
 * would be mostly padding; the filter gradient split over many
 * work-groups and summed in a second pass. See conv.c. */
#include "conv_internal.h"

/* conv.cl's igemm flags and depth of a k slice. */
enum { IG_A_FAST_K = 1, IG_B_FAST_K = 2, IG_SWAP = 4, IG_BIAS = 8 };
enum { IG_TK = 16 };

/* The GPU shape's direct kernels take products whose tile columns (output
 * channels of a group; input channels for the input gradient) are fewer
 * than this: a GEMM tile would be mostly padding. */
#define DIRECT_MAX_COLS 16
/* ... and filter gradients of at most this many multiply-adds (beyond, a
 * work-item per filter element is too few work-items). */
#define DIRECT_MAX_BPF_MACS ((int64_t)1 << 22)

/* The work-group of the TILE x TILE implicit GEMM for a rows x cols
 * product: the widest tile both extents fill and the built kernel can run
 * (kernels base, base + 1, base + 2 are tiles 64, 32, 16). */
static bool pick_tile(struct run *r, enum conv_kern base, int64_t rows,
                      int64_t cols, enum conv_kern *id, int *tile)
{
  /* Set on failure too: callers return first, but the compiler cannot
   * see that through ocl_op_fail. */
  *id = base + 2;
  *tile = 16;
  for (int i = 0; i < 3; i++) {
    int t = 64 >> i;
    if (i < 2 && (rows < t || cols < t))
      continue;
    size_t max = ocl_kernel_max_local(r->op, kern(r, base + i));
    if (max == 0)
      return false;
    if (max >= (size_t)(t / 4) * (size_t)(t / 4)) {
      *id = base + i;
      *tile = t;
      return true;
    }
  }
  return ocl_op_fail(r->op, TF_INTERNAL,
                     "OpenCL device %d runs no work-group of 16 work-items "
                     "for %s",
                     r->info->ordinal, conv_kern_names[base + 2]);
}

/* Launches an implicit-GEMM kernel of tile t over (col_tiles, row_tiles,
 * zs) work-groups. The kernels read get_group_id(1) and (2), so the launch
 * goes in blocks of at most ocl_max_groups_yz() row tiles and z entries
 * (NVIDIA's OpenCL takes no more), each with its bases in the last two
 * arguments, filled here. */
static bool igemm_launch(struct run *r, enum conv_kern id, int t,
                         int64_t col_tiles, int64_t row_tiles, int64_t zs,
                         struct ocl_arg *args, int num_args)
{
  const int64_t most = (int64_t)ocl_max_groups_yz();
  size_t local[3] = {(size_t)t / 4, (size_t)t / 4, 1};
  for (int64_t z0 = 0; z0 < zs; z0 += most)
    for (int64_t m0 = 0; m0 < row_tiles; m0 += most) {
      int64_t nz = zs - z0 < most ? zs - z0 : most;
      int64_t nm = row_tiles - m0 < most ? row_tiles - m0 : most;
      size_t global[3] = {(size_t)col_tiles * local[0], (size_t)nm * local[1],
                          (size_t)nz};
      args[num_args - 2] = idx_arg(r, m0);
      args[num_args - 1] = idx_arg(r, z0);
      if (!ocl_launch(r->op, kern(r, id), 3, global, local, args, num_args))
        return false;
    }
  return true;
}

bool conv_igemm_forward(struct run *r, const struct conv_geo *g,
                        const TF_Tensor *x, const TF_Tensor *f,
                        const TF_Tensor *y, const TF_Tensor *bias)
{
  if (g->og < DIRECT_MAX_COLS) {
    int64_t total = g->batch * out_pixels(g) * g->cout;
    const struct ocl_arg args[] = {
        OCL_TENSOR(x),      OCL_TENSOR(f),
        OCL_TENSOR(y),      OCL_TENSOR(bias != NULL ? bias : f),
        GEO_ARG(r),         idx_arg(r, total),
        OCL_INT(g->nchw),   OCL_INT(bias != NULL ? IG_BIAS : 0),
        OCL_INT(r->k->act), OCL_FLOAT(r->k->alpha),
    };
    return ocl_launch_1d(r->op, kern(r, K_DIRECT_FWD), (size_t)total, args,
                         NARGS(args));
  }
  int64_t rows = g->batch * out_pixels(g);
  enum conv_kern id;
  int t;
  if (!pick_tile(r, K_FWD_64, rows, g->og, &id, &t))
    return false;
  int flags = (g->nchw ? IG_SWAP : IG_A_FAST_K) | (bias != NULL ? IG_BIAS : 0);
  struct ocl_arg args[] = {
      OCL_TENSOR(x),      OCL_TENSOR(f),
      OCL_TENSOR(y),      OCL_TENSOR(bias != NULL ? bias : f),
      GEO_ARG(r),         OCL_INT(flags),
      OCL_INT(r->k->act), OCL_FLOAT(r->k->alpha),
      idx_arg(r, 0),      idx_arg(r, 0),
  };
  return igemm_launch(r, id, t, ceil_div(g->og, t), ceil_div(rows, t),
                      g->groups, args, NARGS(args));
}

bool conv_igemm_backprop_input(struct run *r, const struct conv_geo *g,
                               const TF_Tensor *f, const TF_Tensor *dy,
                               const TF_Tensor *dx)
{
  if (g->cg < DIRECT_MAX_COLS) {
    int64_t total = g->batch * in_pixels(g) * g->cin;
    const struct ocl_arg args[] = {
        OCL_TENSOR(dy), OCL_TENSOR(f),     OCL_TENSOR(dx),
        GEO_ARG(r),     idx_arg(r, total), OCL_INT(g->nchw),
    };
    return ocl_launch_1d(r->op, kern(r, K_DIRECT_BPI), (size_t)total, args,
                         NARGS(args));
  }
  int64_t rows = g->batch * in_pixels(g);
  enum conv_kern id;
  int t;
  if (!pick_tile(r, K_BPI_64, rows, g->cg, &id, &t))
    return false;
  int flags = g->nchw ? IG_SWAP : IG_A_FAST_K;
  struct ocl_arg args[] = {
      OCL_TENSOR(dy), OCL_TENSOR(f), OCL_TENSOR(dx), GEO_ARG(r),
      OCL_INT(flags), idx_arg(r, 0), idx_arg(r, 0),
  };
  return igemm_launch(r, id, t, ceil_div(g->cg, t), ceil_div(rows, t),
                      g->groups, args, NARGS(args));
}

bool conv_igemm_backprop_filter(struct run *r, const struct conv_geo *g,
                                const TF_Tensor *x, const TF_Tensor *dy,
                                const TF_Tensor *dw)
{
  int64_t rows = taps_of(g) * g->cg, K = g->batch * out_pixels(g);
  int64_t elems = rows * g->cout;
  if (g->og < DIRECT_MAX_COLS && elems * K <= DIRECT_MAX_BPF_MACS) {
    const struct ocl_arg args[] = {
        OCL_TENSOR(x), OCL_TENSOR(dy),    OCL_TENSOR(dw),
        GEO_ARG(r),    idx_arg(r, elems),
    };
    return ocl_launch_1d(r->op, kern(r, K_DIRECT_BPF), (size_t)elems, args,
                         NARGS(args));
  }
  enum conv_kern id;
  int t;
  if (!pick_tile(r, K_BPF_64, rows, g->og, &id, &t))
    return false;
  int64_t tiles = ceil_div(rows, t) * ceil_div(g->og, t) * g->groups;
  int64_t target =
      (int64_t)r->info->compute_units * (r->info->cpu_shape ? 4 : 8);
  int64_t chunk;
  int64_t splits =
      conv_split_reduction(K, tiles, target, 4 * IG_TK, IG_TK, elems, &chunk);
  TF_Tensor *partial = ocl_op_temp(r->op, acc_dtype(r), splits * elems);
  if (partial == NULL)
    return false;
  int flags = g->nchw ? IG_A_FAST_K | IG_B_FAST_K : 0;
  struct ocl_arg args[] = {
      OCL_TENSOR(x),     OCL_TENSOR(dy), OCL_TENSOR(partial),
      GEO_ARG(r),        OCL_INT(flags), idx_arg(r, splits),
      idx_arg(r, chunk), idx_arg(r, 0),  idx_arg(r, 0),
  };
  bool ok = igemm_launch(r, id, t, ceil_div(g->og, t), ceil_div(rows, t),
                         g->groups * splits, args, NARGS(args)) &&
            conv_splitk_sum(r, partial, dw, elems, splits);
  ocl_op_release(r->op, partial);
  return ok;
}
