/* The conv family's im2col + GEMM (the CPU shape, float and half
 * ungrouped convolutions): the matmul family's GEMM (gemm.h) with the
 * filter as a [taps * Cin, Cout] matrix, col written straight into the
 * GEMM's A panels where it takes them. See conv.c. */
#include "conv_internal.h"
#include "gemm.h"

/* At most this many elements per im2col temp (64 MiB of float): big images
 * go through in chunks instead of one temp of rows * K. */
#define COL_MAX_ELEMENTS ((int64_t)1 << 24)
/* The GEMM's A panels (CPU devices) go in chunks of about this many
 * elements (4 MiB), what the cores' caches hold between the kernel that
 * writes them and the GEMM that reads them: conv2d/forward of tfocl bench
 * ran at 31 GFLOP/s with one 9 MiB chunk, 46-62 with 2.4-4.8 MiB ones. */
#define PANEL_CHUNK_ELEMENTS ((int64_t)1 << 20)

/* A 2-D (short dim, rows) launch with work-groups along the rows. */
static bool launch_runs(struct run *r, enum conv_kern id, int64_t dim0,
                        int64_t rows, const struct ocl_arg *args, int n)
{
  size_t max = ocl_kernel_max_local(r->op, kern(r, id));
  if (max == 0)
    return false;
  size_t local[2] = {1, max < 256 ? max : 256};
  size_t global[2] = {(size_t)dim0, (size_t)rows};
  return ocl_launch(r->op, kern(r, id), 2, global, local, args, n);
}

/* How col is laid out: [rows, K] (channels-last; rows = image * P + p) or
 * per image [K, P] (channels-first). Strides in elements for (image, p,
 * k). */
struct col_layout {
  int64_t sn, sp, sk;
};

static struct col_layout col_layout(bool per_image_kp, int64_t pixels,
                                    int64_t kcols)
{
  if (per_image_kp)
    return (struct col_layout){kcols * pixels, 1, pixels};
  return (struct col_layout){pixels * kcols, kcols, 1};
}

/* col of images [n0, n0 + images) and taps [t0, t0 + ntaps). */
static bool im2col(struct run *r, const struct conv_geo *g, const TF_Tensor *in,
                   const TF_Tensor *col, int64_t n0, int64_t images, int64_t t0,
                   int64_t ntaps, struct col_layout l)
{
  int64_t lines = images * g->out[0] * g->out[1];
  const struct ocl_arg args[] = {
      OCL_TENSOR(in),    OCL_TENSOR(col),  GEO_ARG(r),        idx_arg(r, n0),
      idx_arg(r, lines), idx_arg(r, t0),   idx_arg(r, ntaps), idx_arg(r, l.sn),
      idx_arg(r, l.sp),  idx_arg(r, l.sk),
  };
  /* conv.cl's IM2COL_PIXELS pixels of a line per work-item; small
   * work-groups, so that a few images' lines still spread over the
   * cores. */
  size_t global[2] = {(size_t)((g->out[2] + 15) / 16), (size_t)lines};
  size_t local[2] = {1, 8};
  return ocl_launch(r->op, kern(r, K_IM2COL), 2, global, local, args,
                    NARGS(args));
}

/* A 1x1 window with stride 1 and no padding: the input is its own col. */
static bool is_pointwise(const struct conv_geo *g)
{
  for (int i = 0; i < 3; i++)
    if (g->k[i] != 1 || g->s[i] != 1 || g->pad[i] != 0 || g->out[i] != g->in[i])
      return false;
  return true;
}

/* Images per chunk so that one chunk's col (per_image elements each) stays
 * under `limit` elements; at least one. */
static int64_t images_per_chunk_of(int64_t batch, int64_t per_image,
                                   int64_t limit)
{
  int64_t n = per_image > 0 ? limit / per_image : batch;
  return n < 1 ? 1 : n > batch ? batch : n;
}

static int64_t images_per_chunk(int64_t batch, int64_t per_image)
{
  return images_per_chunk_of(batch, per_image, COL_MAX_ELEMENTS);
}

/* The channels-last forward: out[rows, Cout] = col * filter, col built
 * per chunk of images straight into the GEMM's A panels where the GEMM
 * takes them (gemm.h; one pass over col instead of three), else as a plain
 * matrix. */
static bool panels_forward(struct run *r, const struct conv_geo *g,
                           const TF_Tensor *in, const TF_Tensor *filter,
                           const TF_Tensor *out, int64_t chunk)
{
  int64_t P = out_pixels(g), K = taps_of(g) * g->cin, Cout = g->cout;
  struct ocl_op *op = r->op;
  struct ocl_gemm_desc whole = {
      .m = chunk * P, .n = Cout, .k = K, .batches = 1, .b_shared = true};
  bool panels = ocl_gemm_takes_panels(op, r->dtype, &whole);
  if (!ocl_op_ok(op))
    return false;
  if (panels) {
    /* Panels the GEMM reads back while the cores' caches still hold them. */
    chunk = images_per_chunk_of(g->batch, P * K, PANEL_CHUNK_ELEMENTS);
  }
  TF_Tensor *col =
      panels ? ocl_op_temp(op, TF_FLOAT, ocl_gemm_panel_elements(chunk * P, K))
             : ocl_op_temp(op, r->dtype, chunk * P * K);
  if (col == NULL)
    return false;
  bool ok = true;
  for (int64_t n0 = 0; ok && n0 < g->batch; n0 += chunk) {
    int64_t images = g->batch - n0 < chunk ? g->batch - n0 : chunk;
    struct ocl_gemm_desc d = {.m = images * P,
                              .n = Cout,
                              .k = K,
                              .batches = 1,
                              .b_shared = true,
                              .c_offset = n0 * P * Cout};
    if (panels && ocl_gemm_takes_panels(op, r->dtype, &d)) {
      int64_t rows = images * P;
      const struct ocl_arg args[] = {
          OCL_TENSOR(in), OCL_TENSOR(col),  GEO_ARG(r),
          idx_arg(r, n0), idx_arg(r, rows),
      };
      size_t global =
          (size_t)((rows + OCL_GEMM_PANEL_ROWS - 1) / OCL_GEMM_PANEL_ROWS);
      size_t local = 16;
      ok = ocl_launch(op, kern(r, K_IM2COL_PANELS), 1, &global, &local, args,
                      NARGS(args)) &&
           ocl_op_gemm_panels(op, r->dtype, &d, col, filter, out);
    } else if (!ocl_op_ok(op)) {
      ok = false;
    } else if (panels) {
      /* A last chunk too small for the packed kernel: the plain path, its
       * col in a temp of the right type. */
      TF_Tensor *plain = ocl_op_temp(op, r->dtype, images * P * K);
      ok = plain != NULL &&
           im2col(r, g, in, plain, n0, images, 0, taps_of(g),
                  col_layout(false, P, K)) &&
           ocl_op_gemm(op, r->dtype, &d, plain, filter, out);
      if (plain != NULL)
        ocl_op_release(op, plain);
    } else {
      ok = im2col(r, g, in, col, n0, images, 0, taps_of(g),
                  col_layout(false, P, K)) &&
           ocl_op_gemm(op, r->dtype, &d, col, filter, out);
    }
  }
  ocl_op_release(op, col);
  return ok;
}

bool conv_gemm_forward(struct run *r, const struct conv_geo *g,
                       const TF_Tensor *in, const TF_Tensor *filter,
                       const TF_Tensor *out)
{
  int64_t P = out_pixels(g), K = taps_of(g) * g->cin, Cout = g->cout;
  bool nchw = g->nchw;
  struct ocl_op *op = r->op;

  if (is_pointwise(g)) {
    struct ocl_gemm_desc d = nchw ? (struct ocl_gemm_desc){.m = Cout,
                                                           .n = P,
                                                           .k = K,
                                                           .trans_a = true,
                                                           .batches = g->batch,
                                                           .a_shared = true}
                                  : (struct ocl_gemm_desc){.m = g->batch * P,
                                                           .n = Cout,
                                                           .k = K,
                                                           .batches = 1,
                                                           .b_shared = true};
    return nchw ? ocl_op_gemm(op, r->dtype, &d, filter, in, out)
                : ocl_op_gemm(op, r->dtype, &d, in, filter, out);
  }

  int64_t chunk = images_per_chunk(g->batch, P * K);
  if (!nchw)
    return panels_forward(r, g, in, filter, out, chunk);
  /* Channels-first: per image [Cout, P] = filter^T * col[K, P]. */
  TF_Tensor *col = ocl_op_temp(op, r->dtype, chunk * P * K);
  if (col == NULL)
    return false;
  bool ok = true;
  struct col_layout l = col_layout(true, P, K);
  for (int64_t n0 = 0; ok && n0 < g->batch; n0 += chunk) {
    int64_t images = g->batch - n0 < chunk ? g->batch - n0 : chunk;
    struct ocl_gemm_desc d = {.m = Cout,
                              .n = P,
                              .k = K,
                              .trans_a = true,
                              .batches = images,
                              .a_shared = true,
                              .c_offset = n0 * Cout * P};
    ok = im2col(r, g, in, col, n0, images, 0, taps_of(g), l) &&
         ocl_op_gemm(op, r->dtype, &d, filter, col, out);
  }
  ocl_op_release(op, col);
  return ok;
}

/* A float copy of a half tensor (or the tensor itself when float). */
static const TF_Tensor *as_float(struct run *r, const TF_Tensor *t)
{
  if (r->dtype == TF_FLOAT)
    return t;
  int64_t n = ocl_tf.TensorElementCount(t);
  TF_Tensor *f = ocl_op_temp(r->op, TF_FLOAT, n);
  if (f == NULL)
    return NULL;
  const struct ocl_arg args[] = {OCL_TENSOR(t), OCL_TENSOR(f), idx_arg(r, n)};
  if (!ocl_launch_1d(r->op, kern(r, K_TO_FLOAT), (size_t)n, args, 3))
    return NULL;
  return f;
}

/* flip_filter_tiles' blocks: FLIP_TILE x FLIP_TILE channels each. */
#define FLIP_TILE 16

/* A stride-1 channels-last input gradient as the forward convolution it
 * is: dx = dy (padded by (k - 1) * dilation - pad before each axis)
 * convolved with the filter, taps reversed and channels swapped. It goes
 * through panels_forward (im2col into the GEMM's panels) instead of a
 * [pixels, taps * Cin] dcol that col2im then folds: two passes over the
 * largest temp of the step fewer. False, with nothing enqueued and the
 * status OK, where the geometry does not allow it. */
static bool flipped_backprop_input(struct run *r, const struct conv_geo *g,
                                   const TF_Tensor *filter,
                                   const TF_Tensor *dout, const TF_Tensor *dx,
                                   bool *done)
{
  *done = false;
  struct conv_geo t = *g;
  for (int i = 0; i < 3; i++) {
    if (g->s[i] != 1 || g->pad[i] > (g->k[i] - 1) * g->dl[i])
      return true;
    t.in[i] = g->out[i];
    t.out[i] = g->in[i];
    t.pad[i] = (g->k[i] - 1) * g->dl[i] - g->pad[i];
  }
  /* Its products run over the input's pixels, dcol's over the output's:
   * through im2col + GEMM a valid convolution of a small image (13x13 to
   * 11x11) costs more flipped than the dcol pass saves; the direct kernel
   * writes no col, and saves dcol and col2im up to twice the pixels (in
   * the small CNN's step: 1.7 ms against 2.7 for 13x13 from 11x11). */
  bool direct = conv_direct_enabled();
  if (g->nchw || g->groups != 1 ||
      in_pixels(g) * (direct ? 1 : 8) > out_pixels(g) * (direct ? 2 : 9))
    return true;
  t.cin = t.cg = g->cout;
  t.cout = t.og = g->cin;
  int64_t taps = taps_of(g);
  TF_Tensor *flipped = ocl_op_temp(r->op, r->dtype, taps * g->cin * g->cout);
  if (flipped == NULL)
    return false;
  const struct ocl_arg args[] = {
      OCL_TENSOR(filter), OCL_TENSOR(flipped), idx_arg(r, taps),
      idx_arg(r, g->cin), idx_arg(r, g->cout),
  };
  const struct ocl_device_info *info = ocl_op_info(r->op);
  if (info == NULL)
    return false;
  bool launched;
  if (info->cpu_shape) {
    size_t global[3] = {(size_t)((g->cin + FLIP_TILE - 1) / FLIP_TILE),
                        (size_t)((g->cout + FLIP_TILE - 1) / FLIP_TILE),
                        (size_t)taps};
    size_t local[3] = {1, 1, 1};
    launched = ocl_launch(r->op, kern(r, K_FLIP_FILTER_TILES), 3, global, local,
                          args, NARGS(args));
  } else {
    launched =
        ocl_launch_1d(r->op, kern(r, K_FLIP_FILTER),
                      (size_t)(taps * g->cin * g->cout), args, NARGS(args));
  }
  if (!launched)
    return false;
  conv_run_set_geo(r, &t);
  int64_t P = out_pixels(&t), K = taps * t.cin;
  bool took = false;
  bool ok =
      !direct || conv_direct_forward(r, &t, dout, flipped, dx, NULL, &took);
  if (ok && !took)
    ok = panels_forward(r, &t, dout, flipped, dx,
                        images_per_chunk(t.batch, P * K));
  conv_run_set_geo(r, g);
  ocl_op_release(r->op, flipped);
  *done = ok;
  return ok;
}

bool conv_gemm_backprop_input(struct run *r, const struct conv_geo *g,
                              const TF_Tensor *filter, const TF_Tensor *dout,
                              const TF_Tensor *dx)
{
  int64_t P = out_pixels(g), K = taps_of(g) * g->cin, Cout = g->cout;
  bool nchw = g->nchw;
  struct ocl_op *op = r->op;

  if (is_pointwise(g)) {
    /* dx = dout * filter^T straight into dx: one rounding for half. */
    struct ocl_gemm_desc d = nchw ? (struct ocl_gemm_desc){.m = K,
                                                           .n = P,
                                                           .k = Cout,
                                                           .batches = g->batch,
                                                           .a_shared = true}
                                  : (struct ocl_gemm_desc){.m = g->batch * P,
                                                           .n = K,
                                                           .k = Cout,
                                                           .trans_b = true,
                                                           .batches = 1,
                                                           .b_shared = true};
    return nchw ? ocl_op_gemm(op, r->dtype, &d, filter, dout, dx)
                : ocl_op_gemm(op, r->dtype, &d, dout, filter, dx);
  }

  bool flipped = false;
  if (!flipped_backprop_input(r, g, filter, dout, dx, &flipped))
    return false;
  if (flipped)
    return true;

  /* dcol is float for every dtype, so that col2im sums unrounded taps: the
   * GEMM runs in float on float copies of half operands. */
  const TF_Tensor *ff = as_float(r, filter);
  const TF_Tensor *fdy = ff != NULL ? as_float(r, dout) : NULL;
  if (fdy == NULL)
    return false;
  int64_t chunk = images_per_chunk(g->batch, P * K);
  TF_Tensor *dcol = ocl_op_temp(op, TF_FLOAT, chunk * P * K);
  if (dcol == NULL)
    return false;
  struct col_layout l = col_layout(nchw, P, K);
  bool ok = true;
  for (int64_t n0 = 0; ok && n0 < g->batch; n0 += chunk) {
    int64_t images = g->batch - n0 < chunk ? g->batch - n0 : chunk;
    struct ocl_gemm_desc d =
        nchw ? (struct ocl_gemm_desc){.m = K,
                                      .n = P,
                                      .k = Cout,
                                      .batches = images,
                                      .a_shared = true,
                                      .b_offset = n0 * Cout * P}
             : (struct ocl_gemm_desc){.m = images * P,
                                      .n = K,
                                      .k = Cout,
                                      .trans_b = true,
                                      .batches = 1,
                                      .b_shared = true,
                                      .a_offset = n0 * P * Cout};
    ok = nchw ? ocl_op_gemm(op, TF_FLOAT, &d, ff, fdy, dcol)
              : ocl_op_gemm(op, TF_FLOAT, &d, fdy, ff, dcol);
    if (!ok)
      break;
    int64_t rows = images * in_pixels(g);
    const struct ocl_arg args[] = {
        OCL_TENSOR(dcol), OCL_TENSOR(dx),   GEO_ARG(r),       idx_arg(r, n0),
        idx_arg(r, rows), idx_arg(r, l.sn), idx_arg(r, l.sp), idx_arg(r, l.sk),
    };
    ok =
        launch_runs(r, K_COL2IM, ceil_div(g->cin, 16), rows, args, NARGS(args));
  }
  ocl_op_release(op, dcol);
  return ok;
}

bool conv_gemm_backprop_filter(struct run *r, const struct conv_geo *g,
                               const TF_Tensor *in, const TF_Tensor *dout,
                               const TF_Tensor *dw)
{
  int64_t P = out_pixels(g), M = g->batch * P;
  int64_t taps = taps_of(g), Cin = g->cin, Cout = g->cout;
  struct ocl_op *op = r->op;

  /* The GEMM's inner dimension runs over (image, p): channels-first
   * out_backprop is transposed to [N, P, Cout] so that it is one matrix. */
  const TF_Tensor *dyt = dout;
  if (g->nchw) {
    TF_Tensor *dy = ocl_op_temp(op, r->dtype, M * Cout);
    if (dy == NULL)
      return false;
    const struct ocl_arg args[] = {
        OCL_TENSOR(dout), OCL_TENSOR(dy), idx_arg(r, Cout),
        idx_arg(r, P),    idx_arg(r, M),
    };
    size_t max = ocl_kernel_max_local(op, kern(r, K_NCHW_TO_NHWC));
    if (max == 0)
      return false;
    size_t local[2] = {16, max >= 256 ? 16 : max >= 16 ? max / 16 : 1};
    if (max < 16)
      local[0] = max;
    size_t global[2] = {(size_t)Cout, (size_t)M};
    if (!ocl_launch(op, kern(r, K_NCHW_TO_NHWC), 2, global, local, args,
                    NARGS(args)))
      return false;
    dyt = dy;
  }
  if (is_pointwise(g) && !g->nchw) {
    struct ocl_gemm_desc d = {
        .m = Cin, .n = Cout, .k = M, .trans_a = true, .batches = 1};
    return ocl_op_gemm(op, r->dtype, &d, in, dyt, dw);
  }
  /* Chunks of taps: each writes its own rows of dfilter, so no chunk
   * accumulates (half rounds once). */
  int64_t per_tap = M * Cin;
  int64_t tchunk = per_tap > 0 ? COL_MAX_ELEMENTS / per_tap : taps;
  if (tchunk < 1)
    tchunk = 1;
  if (tchunk > taps)
    tchunk = taps;
  /* col^T goes straight into the GEMM's A panels where it takes them
   * (channels-last input: the panels read channels along c). */
  struct ocl_gemm_desc whole = {
      .m = tchunk * Cin, .n = Cout, .k = M, .trans_a = true, .batches = 1};
  bool panels = !g->nchw && ocl_gemm_takes_panels(op, r->dtype, &whole);
  if (!ocl_op_ok(op))
    return false;
  TF_Tensor *col =
      panels
          ? ocl_op_temp(op, TF_FLOAT, ocl_gemm_panel_elements(tchunk * Cin, M))
          : ocl_op_temp(op, r->dtype, M * tchunk * Cin);
  if (col == NULL)
    return false;
  bool ok = true;
  for (int64_t t0 = 0; ok && t0 < taps; t0 += tchunk) {
    int64_t nt = taps - t0 < tchunk ? taps - t0 : tchunk;
    int64_t kcols = nt * Cin;
    struct ocl_gemm_desc d = {.m = kcols,
                              .n = Cout,
                              .k = M,
                              .trans_a = true,
                              .batches = 1,
                              .c_offset = t0 * Cin * Cout};
    if (panels && ocl_gemm_takes_panels(op, r->dtype, &d)) {
      const struct ocl_arg args[] = {
          OCL_TENSOR(in), OCL_TENSOR(col), GEO_ARG(r),
          idx_arg(r, M),  idx_arg(r, t0),  idx_arg(r, kcols),
      };
      size_t global[2] = {(size_t)((kcols + OCL_GEMM_PANEL_ROWS - 1) /
                                   OCL_GEMM_PANEL_ROWS),
                          (size_t)((M + 15) / 16)};
      size_t local[2] = {8, 1};
      ok = ocl_launch(op, kern(r, K_IM2COL_PANELS_T), 2, global, local, args,
                      NARGS(args)) &&
           ocl_op_gemm_panels(op, r->dtype, &d, col, dyt, dw);
      continue;
    }
    if (!ocl_op_ok(op))
      break;
    TF_Tensor *plain = col;
    if (panels) /* a last chunk the packed kernel does not take */
      plain = ocl_op_temp(op, r->dtype, M * kcols);
    ok = plain != NULL &&
         im2col(r, g, in, plain, 0, g->batch, t0, nt,
                col_layout(false, P, kcols)) &&
         ocl_op_gemm(op, r->dtype, &d, plain, dyt, dw);
    if (plain != NULL && plain != col)
      ocl_op_release(op, plain);
  }
  ocl_op_release(op, col);
  return ok;
}

bool conv_bias_act(struct run *r, const struct conv_geo *g, const TF_Tensor *y,
                   const TF_Tensor *bias)
{
  int64_t n = ocl_tf.TensorElementCount(y);
  int64_t run_len = g->nchw ? out_pixels(g) : g->cout;
  if (n == 0 || run_len == 0)
    return true;
  int64_t runs = n / run_len;
  const struct ocl_arg args[] = {
      OCL_TENSOR(y),      OCL_TENSOR(bias),       idx_arg(r, run_len),
      idx_arg(r, runs),   idx_arg(r, g->cout),    OCL_INT(!g->nchw),
      OCL_INT(r->k->act), OCL_FLOAT(r->k->alpha),
  };
  size_t max = ocl_kernel_max_local(r->op, kern(r, K_BIAS_ACT));
  if (max == 0)
    return false;
  /* A run's elements side by side in a work-group (a power of two that
   * covers a run, up to the group size), whole runs filling the rest. */
  size_t wanted = max < 256 ? max : 256, x = 1;
  while (x < (size_t)run_len && x * 2 <= wanted)
    x *= 2;
  size_t local[2] = {x, wanted / x};
  size_t global[2] = {(size_t)run_len, (size_t)runs};
  return ocl_launch(r->op, kern(r, K_BIAS_ACT), 2, global, local, args,
                    NARGS(args));
}
