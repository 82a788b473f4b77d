/* The conv family's DepthwiseConv2dNative and its gradients: row kernels
 * on 16-wide vectors for channels-last with multiplier 1 on CPU-shaped
 * devices (MobileNet's), else a work-item per element; the filter
 * gradient a split reduction. See conv.c. */
#include "conv_internal.h"

/* conv.cl's DW_LANES. */
enum { DW_LANES = 64 };

/* conv.cl's DW_ROW_TAPS: the most taps the row kernels list per pixel. */
enum { DW_ROW_TAPS = 64 };

/* The row kernels (CPU shape): channels-last, multiplier 1. */
static bool dw_rows(const struct run *r, const struct conv_geo *g)
{
  return r->info->cpu_shape && !g->nchw && g->mult == 1 &&
         taps_of(g) <= DW_ROW_TAPS;
}

bool conv_dw_forward(struct run *r, const struct conv_geo *g,
                     const TF_Tensor *x, const TF_Tensor *f, const TF_Tensor *y)
{
  if (dw_rows(r, g)) {
    const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(f), OCL_TENSOR(y),
                                   GEO_ARG(r)};
    return ocl_launch_rows(r->op, kern(r, K_DW_FWD_ROWS),
                           (size_t)(g->batch * g->out[1]), args, NARGS(args));
  }
  int64_t total = g->batch * out_pixels(g) * g->cout;
  const struct ocl_arg args[] = {
      OCL_TENSOR(x), OCL_TENSOR(f),     OCL_TENSOR(y),
      GEO_ARG(r),    idx_arg(r, total), OCL_INT(g->nchw),
  };
  return ocl_launch_1d(r->op, kern(r, K_DW_FWD_ELEM), (size_t)total, args,
                       NARGS(args));
}

bool conv_dw_backprop_input(struct run *r, const struct conv_geo *g,
                            const TF_Tensor *f, const TF_Tensor *dy,
                            TF_Tensor *dx)
{
  if (dw_rows(r, g)) {
    const struct ocl_arg args[] = {OCL_TENSOR(dy), OCL_TENSOR(f),
                                   OCL_TENSOR(dx), GEO_ARG(r)};
    return ocl_launch_rows(r->op, kern(r, K_DW_BPI_ROWS),
                           (size_t)(g->batch * g->in[1]), args, NARGS(args));
  }
  int64_t total = g->batch * in_pixels(g) * g->cin;
  const struct ocl_arg args[] = {
      OCL_TENSOR(dy), OCL_TENSOR(f),     OCL_TENSOR(dx),
      GEO_ARG(r),     idx_arg(r, total), OCL_INT(g->nchw),
  };
  return ocl_launch_1d(r->op, kern(r, K_DW_BPI_ELEM), (size_t)total, args,
                       NARGS(args));
}

bool conv_dw_backprop_filter(struct run *r, const struct conv_geo *g,
                             const TF_Tensor *x, const TF_Tensor *dy,
                             TF_Tensor *dw)
{
  int64_t taps = taps_of(g), elems = taps * g->cout;
  int64_t rows = g->batch * g->out[1], pixels = rows * g->out[2];
  if (pixels == 0)
    return conv_fill_zero(r, dw);
  struct ocl_op *op = r->op;
  int64_t units = r->info->compute_units > 0 ? r->info->compute_units : 1;
  int64_t chunk, splits;
  enum conv_kern id;
  if (dw_rows(r, g)) {
    /* A work-item per chunk of rows: enough chunks to keep every core
     * busy. */
    id = K_DW_BPF_ROWS;
    splits = conv_split_reduction(rows, 1, units * 8, 1, 1, elems, &chunk);
  } else if (!g->nchw) {
    /* A work-item per (channel, tap, chunk): about 2048 per unit. */
    id = K_DW_BPF_NHWC;
    splits =
        conv_split_reduction(rows, elems, units * 2048, 1, 1, elems, &chunk);
  } else {
    /* A work-group per (channel, tap, chunk of pixels). */
    id = K_DW_BPF_NCHW;
    splits = conv_split_reduction(pixels, elems, units * 16, DW_LANES, 1, elems,
                                  &chunk);
  }
  TF_Tensor *partial = ocl_op_temp(op, acc_dtype(r), splits * elems);
  if (partial == NULL)
    return false;
  const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(dy),
                                 OCL_TENSOR(partial), GEO_ARG(r),
                                 idx_arg(r, chunk)};
  bool ok;
  if (id == K_DW_BPF_ROWS) {
    ok = ocl_launch_rows(op, kern(r, id), (size_t)splits, args, NARGS(args));
  } else if (id == K_DW_BPF_NHWC) {
    size_t l = ocl_kernel_fit_local(op, kern(r, id), 64);
    size_t global[3] = {(size_t)g->cout, (size_t)taps, (size_t)splits};
    size_t local[3] = {l, 1, 1};
    ok = l > 0 &&
         ocl_launch(op, kern(r, id), 3, global, local, args, NARGS(args));
  } else {
    size_t global[3] = {(size_t)(DW_LANES * g->cout), (size_t)taps,
                        (size_t)splits};
    size_t local[3] = {DW_LANES, 1, 1};
    ok = ocl_launch(op, kern(r, id), 3, global, local, args, NARGS(args));
  }
  ok = ok && conv_splitk_sum(r, partial, dw, elems, splits);
  ocl_op_release(op, partial);
  return ok;
}
