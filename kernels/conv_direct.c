/* The conv family's direct kernels for channels-last float and half
 * convolutions on CPU-shaped devices: the forward (and the stride-1 input
 * gradient, which is a forward) and the filter gradient run the GEMM's
 * register block with its A operand read from the image itself, so no
 * im2col pass writes and reads back taps * Cin floats per pixel. First
 * layers (K = taps * Cin small, Cin < 8) take their own forms: the
 * forward by 8 pixels of one line, the filter gradient by rows of (tap,
 * channel) pairs. See conv.cl's direct_* kernels. */
#include "config.h"
#include "conv_internal.h"

enum { ROWS = 8, COLS = 32 };

/* The filter gradient's pixels per split: what the running work-items
 * share in the cores' caches (out_backprop's and the image's channels of
 * that many pixels: 2048 * 64 floats = 512 KiB at 32 channels each). */
#define BPF_SPLIT_PIXELS 2048
/* At most this many elements of the filter gradient's partial sums. */
#define BPF_PARTIAL_MAX ((int64_t)1 << 24)
/* K (taps * Cin) up to which the forward's work-items take 8 pixels of
 * one output line (conv.cl's direct_fwd_line_8x2). */
#define DIRECT_SMALL_K 32

bool conv_direct_enabled(void) { return !ocl_config()->conv_im2col; }

static bool channels_last_ungrouped(const struct conv_geo *g)
{
  return !g->nchw && g->groups == 1;
}

/* Whether some tap of some output pixel lies outside the image (padding,
 * or a window past the far edge). */
static bool taps_leave_image(const struct conv_geo *g)
{
  for (int i = 0; i < 3; i++)
    if (g->pad[i] > 0 ||
        (g->out[i] - 1) * g->s[i] - g->pad[i] + (g->k[i] - 1) * g->dl[i] >=
            g->in[i])
      return true;
  return false;
}

bool conv_direct_forward(struct run *r, const struct conv_geo *g,
                         const TF_Tensor *in, const TF_Tensor *filter,
                         const TF_Tensor *out, const TF_Tensor *bias,
                         bool *done)
{
  *done = false;
  if (!channels_last_ungrouped(g))
    return true;
  int64_t K = taps_of(g) * g->cin, blocks = ceil_div(g->cout, COLS);
  /* Small K: a work-item per output line. */
  bool by_line = K <= DIRECT_SMALL_K;
  int64_t rows = by_line ? g->batch * g->out[0] * g->out[1]
                         : ceil_div(g->batch * out_pixels(g), ROWS);
  int64_t total = blocks * K * COLS;
  /* A float filter of whole 32-column blocks is read in place. */
  bool in_place = r->dtype == TF_FLOAT && g->cout % COLS == 0;
  TF_Tensor *panels = in_place ? NULL : ocl_op_temp(r->op, TF_FLOAT, total);
  if (!in_place && panels == NULL)
    return false;
  /* C zeros for the rows a border tap leaves outside the image. */
  bool want_zeros = !by_line && taps_leave_image(g);
  TF_Tensor *zeros = want_zeros ? ocl_op_temp(r->op, r->dtype, g->cin) : NULL;
  bool ok = !want_zeros || (zeros != NULL && conv_fill_zero(r, zeros));
  if (!ok) {
    if (panels != NULL)
      ocl_op_release(r->op, panels);
    if (zeros != NULL)
      ocl_op_release(r->op, zeros);
    return false;
  }
  const struct ocl_arg pack_args[] = {
      OCL_TENSOR(filter),
      OCL_TENSOR(panels),
      idx_arg(r, K),
      idx_arg(r, g->cout),
  };
  const struct ocl_arg args[] = {
      OCL_TENSOR(in),
      OCL_TENSOR(in_place ? filter : panels),
      OCL_TENSOR(out),
      OCL_TENSOR(bias != NULL ? bias : filter),
      OCL_TENSOR(zeros != NULL ? zeros : in),
      GEO_ARG(r),
      idx_arg(r, by_line ? rows : g->batch * out_pixels(g)),
      idx_arg(r, in_place ? g->cout : COLS),
      OCL_INT((bias != NULL) | (zeros != NULL) << 1),
      OCL_INT(bias != NULL ? r->k->act : ACT_NONE),
      OCL_FLOAT(r->k->alpha),
  };
  enum conv_kern id = by_line ? K_DIRECT_FWD_LINE_8X2 : K_DIRECT_FWD_8X2;
  size_t max = ocl_kernel_max_local(r->op, kern(r, id));
  ok = max > 0;
  if (ok && !in_place) {
    size_t pack_max = ocl_kernel_max_local(r->op, kern(r, K_FILTER_PANELS));
    size_t pack_local[2] = {pack_max < 16 ? pack_max : 16, 1};
    size_t pack_global[2] = {(size_t)K, (size_t)blocks};
    ok = pack_max > 0 &&
         ocl_launch(r->op, kern(r, K_FILTER_PANELS), 2, pack_global, pack_local,
                    pack_args, NARGS(pack_args));
  }
  if (ok) {
    /* A work-group's row blocks share one filter panel, which stays in
     * the core's cache while they walk down the rows; groups of 8 beat 16
     * where K is small (a first layer's 9 or 27) and tie elsewhere. */
    size_t local[2] = {1, max < 8 ? max : 8};
    size_t global[2] = {(size_t)blocks, (size_t)rows};
    ok = ocl_launch(r->op, kern(r, id), 2, global, local, args, NARGS(args));
  }
  if (panels != NULL)
    ocl_op_release(r->op, panels);
  if (zeros != NULL)
    ocl_op_release(r->op, zeros);
  *done = ok;
  return ok;
}

bool conv_direct_backprop_filter(struct run *r, const struct conv_geo *g,
                                 const TF_Tensor *in, const TF_Tensor *dy,
                                 const TF_Tensor *dw, bool *done)
{
  *done = false;
  /* Fewer than 8 input channels: rows of (tap, channel) pairs. */
  bool gather = g->cin < ROWS;
  if (!channels_last_ungrouped(g) || (!gather && g->cin % ROWS != 0) ||
      g->cout % 16 != 0)
    return true;
  bool two = g->cout % COLS == 0;
  int64_t K = taps_of(g) * g->cin, elems = K * g->cout;
  int64_t lines = g->batch * g->out[0] * g->out[1];
  int64_t per_line = g->out[2] > 0 ? g->out[2] : 1;
  int64_t lines_per_split = BPF_SPLIT_PIXELS / per_line;
  if (lines_per_split < 1)
    lines_per_split = 1;
  int64_t splits = ceil_div(lines, lines_per_split);
  if (splits * elems > BPF_PARTIAL_MAX) {
    splits = BPF_PARTIAL_MAX / elems > 1 ? BPF_PARTIAL_MAX / elems : 1;
    lines_per_split = ceil_div(lines, splits);
    splits = ceil_div(lines, lines_per_split);
  }
  TF_Tensor *partial =
      splits > 1 ? ocl_op_temp(r->op, acc_dtype(r), splits * elems) : NULL;
  if (splits > 1 && partial == NULL)
    return false;
  enum conv_kern id =
      gather ? (two ? K_DIRECT_BPF_GATHER_8X2 : K_DIRECT_BPF_GATHER_8X1)
             : (two ? K_DIRECT_BPF_8X2 : K_DIRECT_BPF_8X1);
  const struct ocl_arg args[] = {
      OCL_TENSOR(in),      OCL_TENSOR(dy),
      OCL_TENSOR(dw),      OCL_TENSOR(partial != NULL ? partial : dw),
      GEO_ARG(r),          idx_arg(r, lines_per_split),
      OCL_INT(splits > 1),
  };
  /* One work-item per group: PoCL hands groups out in order, so the
   * cores work on the same split's pixels at once. */
  size_t local[3] = {1, 1, 1};
  size_t global[3] = {(size_t)ceil_div(K, ROWS),
                      (size_t)(g->cout / (two ? COLS : 16)), (size_t)splits};
  bool ok =
      ocl_launch(r->op, kern(r, id), 3, global, local, args, NARGS(args)) &&
      (splits == 1 || conv_splitk_sum(r, partial, dw, elems, splits));
  if (partial != NULL)
    ocl_op_release(r->op, partial);
  *done = ok;
  return ok;
}
