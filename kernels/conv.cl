/* Convolutions (2-D and 3-D, grouped, depthwise) in two kernel shapes.
 *
 * Built once per storage type (-DT=float, half, double, or ushort with
 * -DT_IS_BFLOAT16; half and bfloat16 are stored as such and computed in
 * float, double in double) and index width (idx_t is int unless -DIDX64:
 * the host picks the 64-bit build only when a tensor's elements exceed
 * INT_MAX). Every tensor is addressed through element strides per
 * dimension (n, d, h, w, c), so channels-last and channels-first are the
 * same kernels; a 2-D convolution is a 3-D one with one plane.
 *
 * CPU shape (PoCL): im2col/col2im around the matmul family's GEMM for
 * float and half, and depthwise kernels with a work-item per image row on
 * 16-wide vectors over the channels.
 *
 * GPU shape: implicit GEMM (igemm_*): a work-group computes a square
 * output tile, staging input patches and filter tiles in local memory,
 * with no im2col buffer; the loads of neighbouring work-items touch
 * neighbouring addresses in either layout. The filter gradient splits its
 * long reduction over many work-groups and sums the partial products in a
 * second pass (splitk_sum). Depthwise: a work-item per output element,
 * neighbouring work-items on neighbouring addresses, and the filter
 * gradient as a reduction over many work-groups. No kernel uses atomics:
 * results are deterministic. */
#include "activations.clh"
#include "common.clh"

#ifdef IDX64
typedef long idx_t;
#else
typedef int idx_t;
#endif

#if defined(T_IS_DOUBLE)
typedef double acc_t;
typedef double16 vacc_t;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define VLOAD(p) vload16(0, (p))
#define VSTORE(p, v) vstore16((v), 0, (p))
#define LOAD8F(p) convert_float8(vload8(0, (p)))
#elif defined(T_IS_HALF)
typedef float acc_t;
typedef float16 vacc_t;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#define VLOAD(p) vload_half16(0, (p))
#define VSTORE(p, v) OCL_VSTORE_HALF16((v), 0, (p))
#define LOAD8F(p) vload_half8(0, (p))
#elif defined(T_IS_BFLOAT16)
typedef float acc_t;
typedef float16 vacc_t;
#define LOAD(p, i) ocl_bf16_to_float((p)[i])
#define STORE(p, i, v) ((p)[i] = ocl_float_to_bf16(v))
#define VLOAD(p) as_float16(convert_uint16(vload16(0, (p))) << 16)
#define VSTORE(p, v) vstore16(bf16_from_float16(v), 0, (p))
#define LOAD8F(p) as_float8(convert_uint8(vload8(0, (p))) << 16)
/* ocl_float_to_bf16 on 16 lanes. */
static inline ushort16 bf16_from_float16(float16 f)
{
  uint16 u = as_uint16(f);
  uint16 r = (u + (uint16)0x7fffu + ((u >> 16) & (uint16)1u)) >> 16;
  uint16 q = (u >> 16) | (uint16)0x40u;
  return convert_ushort16(select(r, q, isnan(f) != 0));
}
#else
typedef float acc_t;
typedef float16 vacc_t;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define VLOAD(p) vload16(0, (p))
#define VSTORE(p, v) vstore16((v), 0, (p))
#define LOAD8F(p) vload8(0, (p))
#endif

/* One convolution's geometry as conv.c's struct conv_args lays it out:
 * every member idx_t, so both sides agree without padding rules. The
 * "image" side is the input (x, or dx for the input gradient), the "out"
 * side the output (y, or dy). cg/og: input/output channels per group;
 * mult: the depthwise channel multiplier (1 otherwise). */
typedef struct {
  idx_t batch, groups, cg, og, mult, cin, cout;
  idx_t in_d, in_h, in_w;
  idx_t k_d, k_h, k_w;
  idx_t out_d, out_h, out_w;
  idx_t s_d, s_h, s_w;
  idx_t dl_d, dl_h, dl_w;
  idx_t p_d, p_h, p_w;
  idx_t in_sn, in_sd, in_sh, in_sw, in_sc;
  idx_t out_sn, out_sd, out_sh, out_sw, out_sc;
} geo_t;

/* (n, od, oh, ow) steps to the next output pixel in row order, as
 * row + 1 = image * P + pixel would give it without the divisions. */
static inline void next_output_pixel(const geo_t *g, idx_t *n, idx_t *od,
                                     idx_t *oh, idx_t *ow)
{
  if (++*ow == g->out_w) {
    *ow = 0;
    if (++*oh == g->out_h) {
      *oh = 0;
      if (++*od == g->out_d) {
        *od = 0;
        ++*n;
      }
    }
  }
}

/* _FusedConv2D's activations (conv.c's enum conv_activation). */
#define ACT_NONE 0
#define ACT_RELU 1
#define ACT_RELU6 2
#define ACT_ELU 3
#define ACT_LEAKY_RELU 4
#define ACT_TANH 5
#define ACT_SIGMOID 6

static inline acc_t activate(acc_t v, int act, float alpha)
{
  switch (act) {
  case ACT_RELU: return ACT_RELU_OF(acc_t, v);
  case ACT_RELU6: return ACT_RELU6_OF(acc_t, v);
  case ACT_ELU: return ACT_ELU_OF(acc_t, v);
  case ACT_LEAKY_RELU: return ACT_LEAKY_RELU_OF(acc_t, v, alpha);
  case ACT_TANH: return TANH_OF(acc_t, v);
  case ACT_SIGMOID: return ACT_SIGMOID_OF(acc_t, v);
  default: return v;
  }
}

/* ==== CPU shape ========================================================== */

/* col[nl, p, (t0 + tt) * Cin + ci] = input[n0 + nl, window of p at tap
 * t0 + tt, ci], 0 in the padding; col addressed by strides (col_sn,
 * col_sp, col_sk) so that it is [rows, K] for channels-last and [n][K][P]
 * for channels-first. One work-item per (IM2COL_PIXELS output pixels of
 * one output line, line): its index divisions happen once, then it walks
 * pixels and taps by increments and copies a run of Cin channels per tap
 * (a per-element or per-tap division cost more than the copy itself at
 * small Cin). Copied exactly. */
#define IM2COL_PIXELS 16
__kernel void im2col(OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(T, col),
                     geo_t g, idx_t n0, idx_t lines, idx_t t0, idx_t ntaps,
                     idx_t col_sn, idx_t col_sp, idx_t col_sk)
{
  idx_t block = get_global_id(0);
  idx_t line = get_global_id(1);
  OCL_GUARD(block * IM2COL_PIXELS, g.out_w);
  OCL_GUARD(line, lines);
  idx_t oh = line % g.out_h, od = (line / g.out_h) % g.out_d;
  idx_t nl = line / (g.out_h * g.out_d);
  idx_t ow0 = block * IM2COL_PIXELS;
  idx_t ow_end = min(ow0 + IM2COL_PIXELS, g.out_w);
  idx_t kw0 = t0 % g.k_w, kh0 = (t0 / g.k_w) % g.k_h, kd0 = t0 / (g.k_w * g.k_h);
  idx_t C = g.cin;
  bool contiguous = col_sk == 1 && g.in_sc == 1;
  __global const T *img = OCL_PTR(const T, in) + (n0 + nl) * g.in_sn;
  __global T *dst_line = OCL_PTR(T, col) + nl * col_sn +
                         (od * g.out_h + oh) * g.out_w * col_sp;
  for (idx_t ow = ow0; ow < ow_end; ow++) {
    __global T *dst = dst_line + ow * col_sp;
    idx_t kw = kw0, kh = kh0, kd = kd0;
    for (idx_t tt = 0; tt < ntaps; tt++, dst += C * col_sk) {
      idx_t d = od * g.s_d - g.p_d + kd * g.dl_d;
      idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;
      idx_t w = ow * g.s_w - g.p_w + kw * g.dl_w;
      if (++kw == g.k_w) {
        kw = 0;
        if (++kh == g.k_h) {
          kh = 0;
          kd++;
        }
      }
      if (d < 0 || d >= g.in_d || h < 0 || h >= g.in_h || w < 0 || w >= g.in_w) {
        for (idx_t c = 0; c < C; c++)
          STORE(dst, c * col_sk, (acc_t)0);
        continue;
      }
      __global const T *src = img + d * g.in_sd + h * g.in_sh + w * g.in_sw;
      if (contiguous) {
        for (idx_t c = 0; c < C; c++)
          STORE(dst, c, LOAD(src, c));
      } else {
        for (idx_t c = 0; c < C; c++)
          STORE(dst, c * col_sk, LOAD(src, c * g.in_sc));
      }
    }
  }
}

/* im2col straight into the GEMM's A panels (gemm.h): panel p holds output
 * rows [p * 8, + 8) (row = image * P + pixel, channels-last) as float,
 * k-major, k = tap * Cin + c, rows past `rows` zero. A work-item per panel:
 * its 8 rows' positions are found once, then each tap's 8 source runs are
 * read along c and written 8 floats at a time. */
#define PANEL_ROWS 8
__kernel void im2col_panels(OCL_TENSOR_ARG(const T, in),
                            OCL_TENSOR_ARG(float, panels), geo_t g, idx_t n0,
                            idx_t rows)
{
  idx_t panel = get_global_id(0);
  OCL_GUARD(panel * PANEL_ROWS, rows);
  idx_t C = g.cin;
  idx_t K = g.k_d * g.k_h * g.k_w * C;
  idx_t hw = g.out_h * g.out_w, P = g.out_d * hw;
  idx_t d0[PANEL_ROWS], h0[PANEL_ROWS], w0[PANEL_ROWS];
  __global const T *image[PANEL_ROWS];
  for (int r = 0; r < PANEL_ROWS; r++) {
    idx_t row = panel * PANEL_ROWS + r;
    image[r] = 0;
    /* Rows past the end read nowhere: positions no tap reaches. */
    d0[r] = -g.in_d - g.k_d * g.dl_d;
    h0[r] = 0;
    w0[r] = 0;
    if (row < rows) {
      idx_t nl = row / P, p = row % P;
      idx_t od = p / hw, oh = (p % hw) / g.out_w, ow = p % g.out_w;
      image[r] = OCL_PTR(const T, in) + (n0 + nl) * g.in_sn;
      d0[r] = od * g.s_d - g.p_d;
      h0[r] = oh * g.s_h - g.p_h;
      w0[r] = ow * g.s_w - g.p_w;
    }
  }
  __global float *dst = OCL_PTR(float, panels) + panel * K * PANEL_ROWS;
  /* Channels in runs of 8: each row's run in one vector load, the 8 x 8
   * block turned in registers, 8 vector stores. */
  idx_t vc = g.in_sc == 1 ? C - C % 8 : 0;
  for (idx_t kd = 0; kd < g.k_d; kd++)
    for (idx_t kh = 0; kh < g.k_h; kh++)
      for (idx_t kw = 0; kw < g.k_w; kw++) {
        __global const T *src[PANEL_ROWS];
        for (int r = 0; r < PANEL_ROWS; r++) {
          idx_t d = d0[r] + kd * g.dl_d, h = h0[r] + kh * g.dl_h;
          idx_t w = w0[r] + kw * g.dl_w;
          bool inside = d >= 0 && d < g.in_d && h >= 0 && h < g.in_h &&
                        w >= 0 && w < g.in_w;
          src[r] = inside ? image[r] + d * g.in_sd + h * g.in_sh + w * g.in_sw
                          : 0;
        }
        for (idx_t c = 0; c < vc; c += 8, dst += 8 * PANEL_ROWS) {
          float block[PANEL_ROWS][8];
          for (int r = 0; r < PANEL_ROWS; r++)
            vstore8(src[r] ? LOAD8F(src[r] + c) : (float8)(0.0f), 0, block[r]);
          for (int j = 0; j < 8; j++)
            vstore8((float8)(block[0][j], block[1][j], block[2][j], block[3][j],
                             block[4][j], block[5][j], block[6][j], block[7][j]),
                    j, dst);
        }
        for (idx_t c = vc; c < C; c++, dst += PANEL_ROWS) {
          float8 v;
          v.s0 = src[0] ? (float)LOAD(src[0], c * g.in_sc) : 0.0f;
          v.s1 = src[1] ? (float)LOAD(src[1], c * g.in_sc) : 0.0f;
          v.s2 = src[2] ? (float)LOAD(src[2], c * g.in_sc) : 0.0f;
          v.s3 = src[3] ? (float)LOAD(src[3], c * g.in_sc) : 0.0f;
          v.s4 = src[4] ? (float)LOAD(src[4], c * g.in_sc) : 0.0f;
          v.s5 = src[5] ? (float)LOAD(src[5], c * g.in_sc) : 0.0f;
          v.s6 = src[6] ? (float)LOAD(src[6], c * g.in_sc) : 0.0f;
          v.s7 = src[7] ? (float)LOAD(src[7], c * g.in_sc) : 0.0f;
          vstore8(v, 0, dst);
        }
      }
}

/* The filter gradient's A = col^T in panels (gemm.h): panel p holds col's
 * columns [8p, 8p + 8) of taps [t0, ..), k-major over the `pixels` rows
 * (image * P + pixel, channels-last input), columns past kcols zero. A
 * work-item per (panel, PANEL_PIXELS pixels): each of its 8 columns'
 * tap and channel are found once, the pixels walked by increments. The
 * panels are dimension 0, so a work-group's work-items read adjacent
 * channels of the same pixels together (one pass over the input instead
 * of one per panel). */
#define PANEL_PIXELS 16
__kernel void im2col_panels_t(OCL_TENSOR_ARG(const T, in),
                              OCL_TENSOR_ARG(float, panels), geo_t g,
                              idx_t pixels, idx_t t0, idx_t kcols)
{
  idx_t panel = get_global_id(0);
  idx_t block = get_global_id(1);
  OCL_GUARD(block * PANEL_PIXELS, pixels);
  OCL_GUARD(panel * PANEL_ROWS, kcols);
  idx_t C = g.cin;
  /* Each column's tap offsets; a column past kcols reads nowhere. */
  idx_t td[PANEL_ROWS], th[PANEL_ROWS], tw[PANEL_ROWS], tc[PANEL_ROWS];
  for (int r = 0; r < PANEL_ROWS; r++) {
    idx_t kk = panel * PANEL_ROWS + r;
    idx_t tap = t0 + kk / C;
    tc[r] = kk % C;
    tw[r] = (tap % g.k_w) * g.dl_w;
    th[r] = ((tap / g.k_w) % g.k_h) * g.dl_h;
    td[r] = kk < kcols ? (tap / (g.k_w * g.k_h)) * g.dl_d : -g.in_d - 1 - g.out_d * g.s_d;
  }
  idx_t pix = block * PANEL_PIXELS;
  idx_t end = min(pix + PANEL_PIXELS, pixels);
  idx_t hw = g.out_h * g.out_w, P = g.out_d * hw;
  idx_t nl = pix / P, p = pix % P;
  idx_t od = p / hw, oh = (p % hw) / g.out_w, ow = p % g.out_w;
  __global float *dst = OCL_PTR(float, panels) + (panel * pixels + pix) * PANEL_ROWS;
  /* Cin a multiple of 8: the panel's columns are 8 adjacent channels of
   * one tap, one bounds check and one vector load per pixel. */
  bool one_tap = C % 8 == 0 && g.in_sc == 1 && panel * PANEL_ROWS + 8 <= kcols;
  for (; pix < end; pix++, dst += PANEL_ROWS) {
    __global const T *image = OCL_PTR(const T, in) + nl * g.in_sn;
    idx_t d0 = od * g.s_d - g.p_d, h0 = oh * g.s_h - g.p_h, w0 = ow * g.s_w - g.p_w;
    if (one_tap) {
      idx_t d = d0 + td[0], h = h0 + th[0], w = w0 + tw[0];
      bool inside = d >= 0 && d < g.in_d && h >= 0 && h < g.in_h && w >= 0 &&
                    w < g.in_w;
      vstore8(inside ? LOAD8F(image + d * g.in_sd + h * g.in_sh + w * g.in_sw +
                              tc[0])
                     : (float8)(0.0f),
              0, dst);
    } else {
      float v[PANEL_ROWS];
      for (int r = 0; r < PANEL_ROWS; r++) {
        idx_t d = d0 + td[r], h = h0 + th[r], w = w0 + tw[r];
        bool inside = d >= 0 && d < g.in_d && h >= 0 && h < g.in_h &&
                      w >= 0 && w < g.in_w;
        v[r] = inside ? (float)LOAD(image, d * g.in_sd + h * g.in_sh +
                                               w * g.in_sw + tc[r] * g.in_sc)
                      : 0.0f;
      }
      vstore8((float8)(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]), 0, dst);
    }
    next_output_pixel(&g, &nl, &od, &oh, &ow);
  }
}

/* The input gradient of a stride-1 convolution as a forward one over dy
 * (conv.c's flipped_backprop_input): its filter, taps reversed and the
 * channel axes swapped, [taps, Cout, Cin] from [taps, Cin, Cout]. */
__kernel void flip_filter(OCL_TENSOR_ARG(const T, src), OCL_TENSOR_ARG(T, dst),
                          idx_t taps, idx_t cin, idx_t cout)
{
  idx_t i = get_global_id(0);
  OCL_GUARD(i, taps * cin * cout);
  idx_t ci = i % cin, co = (i / cin) % cout, t = i / (cin * cout);
  STORE(OCL_PTR(T, dst), i,
        LOAD(OCL_PTR(const T, src), ((taps - 1 - t) * cin + ci) * cout + co));
}

/* flip_filter in the CPU shape: one work-item per 16 x 16 block of a
 * tap's (Cin, Cout) channels. Its 16 Cin rows are read as vectors along
 * Cout, transposed in registers and stored as vectors along Cin; a partial
 * block (channels past a multiple of 16) goes element by element.
 * ResNet50's 16 stride-1 3x3 input gradients (45 MB of filters) spent
 * 32 ms a step flipping with flip_filter's flat index (three divisions per
 * element), 8.6-13.8 ms with one element per work-item in 16 x 16 groups
 * (vector stores, gathered loads), and 6.7-7.3 ms with this kernel, about
 * the memory bandwidth the step leaves. */
#define FLIP_COLUMN(lane)                                                    \
  (vacc_t)(v[0].s##lane, v[1].s##lane, v[2].s##lane, v[3].s##lane,          \
           v[4].s##lane, v[5].s##lane, v[6].s##lane, v[7].s##lane,          \
           v[8].s##lane, v[9].s##lane, v[10].s##lane, v[11].s##lane,        \
           v[12].s##lane, v[13].s##lane, v[14].s##lane, v[15].s##lane)
#define FLIP_STORE(lane, o) VSTORE(out + (o) * cin, FLIP_COLUMN(lane));
__kernel void flip_filter_tiles(OCL_TENSOR_ARG(const T, src),
                                OCL_TENSOR_ARG(T, dst), idx_t taps,
                                idx_t cin, idx_t cout)
{
  const idx_t ci0 = get_global_id(0) * 16, co0 = get_global_id(1) * 16;
  const idx_t t = get_global_id(2);
  if (ci0 >= cin || co0 >= cout)
    return;
  __global const T *s =
      OCL_PTR(const T, src) + ((taps - 1 - t) * cin + ci0) * cout + co0;
  __global T *out = OCL_PTR(T, dst) + (t * cout + co0) * cin + ci0;
  if (ci0 + 16 > cin || co0 + 16 > cout) {
    const idx_t ni = min((idx_t)16, cin - ci0);
    const idx_t no = min((idx_t)16, cout - co0);
    for (idx_t o = 0; o < no; o++)
      for (idx_t i = 0; i < ni; i++)
        STORE(out, o * cin + i, LOAD(s, i * cout + o));
    return;
  }
  vacc_t v[16];
  for (int i = 0; i < 16; i++)
    v[i] = VLOAD(s + i * cout);
  OCL_EACH_LANE16(FLIP_STORE)
}

/* The sum over the taps that read input pixel (d, h, w) of col[.., k0 + c]
 * for channels c < n; the caller adds each tap's k offset. */
#define COL2IM_TAPS(BODY)                                                  \
  for (idx_t kd = 0; kd < g.k_d; kd++) {                                   \
    idx_t s = d + g.p_d - kd * g.dl_d;                                      \
    if (s < 0 || (g.s_d != 1 && s % g.s_d != 0))                            \
      continue;                                                             \
    idx_t od = g.s_d == 1 ? s : s / g.s_d;                                  \
    if (od >= g.out_d)                                                      \
      continue;                                                             \
    for (idx_t kh = 0; kh < g.k_h; kh++) {                                  \
      idx_t t = h + g.p_h - kh * g.dl_h;                                    \
      if (t < 0 || (g.s_h != 1 && t % g.s_h != 0))                          \
        continue;                                                           \
      idx_t oh = g.s_h == 1 ? t : t / g.s_h;                                \
      if (oh >= g.out_h)                                                    \
        continue;                                                           \
      for (idx_t kw = 0; kw < g.k_w; kw++) {                                \
        idx_t u = w + g.p_w - kw * g.dl_w;                                  \
        if (u < 0 || (g.s_w != 1 && u % g.s_w != 0))                        \
          continue;                                                         \
        idx_t ow = g.s_w == 1 ? u : u / g.s_w;                              \
        if (ow >= g.out_w)                                                  \
          continue;                                                         \
        idx_t base = ((od * g.out_h + oh) * g.out_w + ow) * col_sp +        \
                     ((kd * g.k_h + kh) * g.k_w + kw) * g.cin * col_sk;     \
        BODY                                                                \
      }                                                                     \
    }                                                                       \
  }

/* dx[n0 + nl, d, h, w, c0 .. c0 + 16) = the sum of the col entries whose
 * window tap reads (d, h, w). One work-item per (16 channels, pixel): with
 * contiguous channels the sums are float16 vectors. col is float (the
 * GEMM's output), so taps are summed unrounded. */
__kernel void col2im(OCL_TENSOR_ARG(const float, col), OCL_TENSOR_ARG(T, dx),
                     geo_t g, idx_t n0, idx_t rows, idx_t col_sn,
                     idx_t col_sp, idx_t col_sk)
{
  idx_t cb = get_global_id(0);
  idx_t r = get_global_id(1);
  OCL_GUARD(cb * 16, g.cin);
  OCL_GUARD(r, rows);
  idx_t w = r % g.in_w;
  idx_t h = (r / g.in_w) % g.in_h;
  idx_t d = (r / (g.in_w * g.in_h)) % g.in_d;
  idx_t nl = r / (g.in_w * g.in_h * g.in_d);
  idx_t c0 = cb * 16;
  __global const float *src =
      OCL_PTR(const float, col) + nl * col_sn + c0 * col_sk;
  __global T *out = OCL_PTR(T, dx) + (n0 + nl) * g.in_sn + d * g.in_sd +
                    h * g.in_sh + w * g.in_sw + c0 * g.in_sc;
#if defined(T_IS_HALF) || defined(T_IS_FLOAT)
  if (col_sk == 1 && g.in_sc == 1 && c0 + 16 <= g.cin) {
    float16 acc = 0.0f;
    COL2IM_TAPS(acc += vload16(0, src + base);)
    VSTORE(out, acc);
    return;
  }
#endif
  idx_t n = min((idx_t)16, g.cin - c0);
#if defined(T_IS_HALF) || defined(T_IS_FLOAT)
  if (col_sk == 1 && g.in_sc == 1 && n == 8) {
    float8 acc = 0.0f;
    COL2IM_TAPS(acc += vload8(0, src + base);)
#if defined(T_IS_HALF)
    OCL_VSTORE_HALF8(acc, 0, out);
#else
    vstore8(acc, 0, out);
#endif
    return;
  }
#endif
  /* The taps found once for all n channels (found per channel, with their
   * divisions, they cost more than the sums: fewer than 16 channels ran
   * at 0.3x TensorFlow's CPU kernel). */
  float acc[16];
  for (idx_t c = 0; c < n; c++)
    acc[c] = 0.0f;
  COL2IM_TAPS(for (idx_t c = 0; c < n; c++) acc[c] += src[base + c * col_sk];)
  for (idx_t c = 0; c < n; c++)
    STORE(out, c * g.in_sc, acc[c]);
}

/* dst[i] = (float)src[i]: half operands of a float GEMM whose output must
 * not round to half before col2im sums it. */
__kernel void to_float(OCL_TENSOR_ARG(const T, src), OCL_TENSOR_ARG(float, dst),
                       idx_t n)
{
  idx_t i = get_global_id(0);
  OCL_GUARD(i, n);
  OCL_PTR(float, dst)[i] = LOAD(OCL_PTR(const T, src), i);
}

/* [N, C, P] -> [N, P, C] (out_backprop of a channels-first filter
 * gradient). */
__kernel void nchw_to_nhwc(OCL_TENSOR_ARG(const T, src), OCL_TENSOR_ARG(T, dst),
                           idx_t channels, idx_t pixels, idx_t rows)
{
  idx_t c = get_global_id(0);
  idx_t r = get_global_id(1);
  OCL_GUARD(c, channels);
  OCL_GUARD(r, rows);
  idx_t n = r / pixels, p = r % pixels;
  STORE(OCL_PTR(T, dst), r * channels + c,
        LOAD(OCL_PTR(const T, src), (n * channels + c) * pixels + p));
}

/* y = act(y + bias[channel]) in place: _FusedConv2D's epilogue after a
 * GEMM the bias cannot ride on. y is `runs` runs of run_len contiguous
 * elements: channels-last, a pixel's channels (bias[j]); channels-first, a
 * plane (bias[run % channels]). The channel comes from the work-item's
 * coordinates, not from a division per element. */
__kernel void bias_act(OCL_TENSOR_ARG(T, y), OCL_TENSOR_ARG(const T, bias),
                       idx_t run_len, idx_t runs, idx_t channels,
                       int channel_per_element, int act, float alpha)
{
  idx_t j = get_global_id(0);
  idx_t run = get_global_id(1);
  OCL_GUARD(j, run_len);
  OCL_GUARD(run, runs);
  __global T *p = OCL_PTR(T, y) + run * run_len;
  idx_t c = channel_per_element ? j : run % channels;
  acc_t v = LOAD(p, j) + LOAD(OCL_PTR(const T, bias), c);
  STORE(p, j, activate(v, act, alpha));
}

/* ---- Direct convolution, channels-last (CPU shape) -----------------------
 * The forward and the filter gradient without an im2col pass: the GEMM's
 * 8 x 32 register block (the matmul family's gemm_8x2) with its A operand
 * read from the image itself. im2col wrote (taps * Cin) floats per output
 * pixel that the GEMM read back; at 3x3 and 32 channels that traffic cost
 * as much as the products. */

#if defined(T_IS_DOUBLE)
#define VLOADF(p) convert_float16(vload16(0, (p)))
#else
#define VLOADF(p) VLOAD(p)
#endif

/* float16 stores of a row block's results in the storage type. */
static inline void store16f(__global T *p, float16 v)
{
#if defined(T_IS_FLOAT)
  vstore16(v, 0, p);
#elif defined(T_IS_HALF)
  OCL_VSTORE_HALF16(v, 0, p);
#else
  float tmp[16];
  vstore16(v, 0, tmp);
  for (int i = 0; i < 16; i++)
    STORE(p, i, tmp[i]);
#endif
}

/* The filter [K, Cout] as B panels [Cout / 32 blocks][K][32] of float, 0
 * past Cout (the direct kernels read a block's 32 columns as 2 vectors). A
 * work-item per row of K and block, whole blocks as 4 vectors: a
 * work-item per element, with two divisions for its index, took 0.15-0.18
 * ms for a 1x1 filter of 672 -> 112 channels (EfficientNetB0's), 0.01
 * this way. */
__kernel void filter_panels(OCL_TENSOR_ARG(const T, f),
                            OCL_TENSOR_ARG(float, panels), idx_t K,
                            idx_t cout)
{
  idx_t k = get_global_id(0), block = get_global_id(1);
  OCL_GUARD(k, K);
  __global const T *src = OCL_PTR(const T, f) + k * cout + block * 32;
  __global float *dst = OCL_PTR(float, panels) + (block * K + k) * 32;
  idx_t valid = cout - block * 32;
  if (valid >= 32) {
    for (int v = 0; v < 4; v++)
      vstore8(LOAD8F(src + 8 * v), v, dst);
  } else {
    for (idx_t c = 0; c < 32; c++)
      dst[c] = c < valid ? (float)LOAD(src, c) : 0.0f;
  }
}

#define DIRECT_ROWS 8
/* The filter gradient's products per partial sum (see direct_bpf). */
#define DIRECT_CHAIN 256

/* acc[8 rows][32 channels] += the n adjacent floats at each row's src
 * times n rows of the filter panel B (rows ldb apart). */
#define DIRECT_FWD_PLAIN(src, n, B, ldb)                                     \
  for (idx_t c = 0; c < (n); c++) {                                          \
    float16 b0 = vload16(0, (B) + c * (ldb));                                \
    float16 b1 = vload16(1, (B) + c * (ldb));                                \
    _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {                \
      float a = (float)LOAD((src)[r], c);                                    \
      acc[r][0] = fma((float16)a, b0, acc[r][0]);                            \
      acc[r][1] = fma((float16)a, b1, acc[r][1]);                            \
    }                                                                        \
  }

/* The positions of a direct forward's 8 consecutive rows from row0 (rows
 * = image * P + pixel as in the GEMM): where each reads its image and
 * writes its 32 channels, and its first tap's (d, h, w). Rows past `rows`
 * read nowhere (a d no tap reaches) and are not stored. */
static inline void direct_rows(const geo_t *g, __global const T *in,
                               __global T *out, idx_t row0, idx_t rows,
                               idx_t jb, __global const T **image,
                               __global T **dst, idx_t *d0, idx_t *h0,
                               idx_t *w0)
{
  /* The first row's position takes the divisions, the others step from
   * it (when K is small, as in a first layer, 8 rows' divisions would cost
   * more than the products). */
  idx_t hw = g->out_h * g->out_w, P = g->out_d * hw;
  idx_t n = row0 / P, p = row0 % P;
  idx_t od = p / hw, oh = (p % hw) / g->out_w, ow = p % g->out_w;
  _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {
    bool real = row0 + r < rows;
    image[r] = in + (real ? n : 0) * g->in_sn;
    dst[r] = out +
             (real ? n * g->out_sn + od * g->out_sd + oh * g->out_sh +
                         ow * g->out_sw
                   : 0) +
             jb * 32 * g->out_sc;
    d0[r] = real ? od * g->s_d - g->p_d : -g->in_d - g->k_d * g->dl_d;
    h0[r] = oh * g->s_h - g->p_h;
    w0[r] = ow * g->s_w - g->p_w;
    next_output_pixel(g, &n, &od, &oh, &ow);
  }
}

/* Stores a direct forward's 8 rows x 32 channels: + bias (flags & 1) and
 * the activation. */
static inline void direct_store(const geo_t *g, float16 (*acc)[2],
                                __global T **dst, __global const T *bias,
                                idx_t nrows_left, idx_t jb, int flags,
                                int act, float alpha)
{
  int nrows = (int)min((idx_t)DIRECT_ROWS, nrows_left);
  int cols = (int)min((idx_t)32, g->cout - jb * 32);
  __global const T *bp = bias + jb * 32;
  if (cols == 32 && g->out_sc == 1 && (act == ACT_NONE || act == ACT_RELU)) {
    float16 b0 = 0.0f, b1 = 0.0f;
    if (flags & 1) {
      float tmp[32];
      for (int i = 0; i < 32; i++)
        tmp[i] = (float)LOAD(bp, i);
      b0 = vload16(0, tmp);
      b1 = vload16(1, tmp);
    }
    for (int r = 0; r < nrows; r++) {
      float16 v0 = acc[r][0] + b0, v1 = acc[r][1] + b1;
      if (act == ACT_RELU) {
        /* A select, not fmax, which would turn NaN into 0 (Relu keeps
         * it). */
        v0 = select(v0, (float16)0.0f, v0 < 0.0f);
        v1 = select(v1, (float16)0.0f, v1 < 0.0f);
      }
      store16f(dst[r], v0);
      store16f(dst[r] + 16, v1);
    }
    return;
  }
  for (int r = 0; r < nrows; r++) {
    float tmp[32];
    vstore16(acc[r][0], 0, tmp);
    vstore16(acc[r][1], 1, tmp);
    for (int q = 0; q < cols; q++) {
      acc_t v = tmp[q];
      if (flags & 1)
        v += LOAD(bp, q);
      STORE(dst[r], q * g->out_sc, activate(v, act, alpha));
    }
  }
}

/* out[8 rows, 32 channels] = the sum over taps and input channels of
 * image * filter panel, then + bias and the activation (flags & 1: bias).
 * A work-item per (column block, row block), rows = image * P + pixel as
 * in the GEMM (rows past `rows` are computed from nothing and not stored).
 * Each row's position is found once; per tap, a tap whose 8 pixels all lie
 * inside runs the plain loop, one with some outside reads 0 for those
 * (from `zeros` where flags & 2), one with none inside is skipped. With
 * packed channels and no dilation along w, a filter row whose taps all lie
 * inside for the 8 rows is one run of k_w * C floats instead of k_w taps.
 * The filter comes as panels (filter_panels, ldb 32) or, float with Cout a
 * multiple of 32, as itself (ldb = Cout). */
__kernel void direct_fwd_8x2(OCL_TENSOR_ARG(const T, in),
                             OCL_TENSOR_ARG(const float, panels),
                             OCL_TENSOR_ARG(T, out),
                             OCL_TENSOR_ARG(const T, bias),
                             OCL_TENSOR_ARG(const T, zeros), geo_t g,
                             idx_t rows, idx_t ldb, int flags, int act,
                             float alpha)
{
  idx_t jb = get_global_id(0);
  idx_t rb = get_global_id(1);
  OCL_GUARD(rb * DIRECT_ROWS, rows);
  OCL_GUARD(jb * 32, g.cout);
  idx_t C = g.cin, sc = g.in_sc;
  idx_t K = g.k_d * g.k_h * g.k_w * C;
  __global const T *image[DIRECT_ROWS];
  __global T *dst[DIRECT_ROWS];
  idx_t d0[DIRECT_ROWS], h0[DIRECT_ROWS], w0[DIRECT_ROWS];
  direct_rows(&g, OCL_PTR(const T, in), OCL_PTR(T, out), rb * DIRECT_ROWS,
              rows, jb, image, dst, d0, h0, w0);
  /* ldb 32: panels, a block's K rows of 32 after the previous block's;
   * else the float filter itself, rows ldb apart. */
  __global const float *B =
      OCL_PTR(const float, panels) + jb * 32 * (ldb == 32 ? K : 1);
  /* flags & 2: `zeros` holds C zeros (the host passes them where a tap
   * can leave the image), so a tap with some rows outside runs the plain
   * loop: a select per row and channel there cost the border ~11 % of a
   * 32 x 32 image's SAME convolution (32 channels). */
  bool has_zeros = (flags & 2) != 0 && sc == 1;
  __global const T *zeros = OCL_PTR(const T, zeros);

  float16 acc[DIRECT_ROWS][2];
  _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++)
    acc[r][0] = acc[r][1] = 0.0f;
  /* With packed channels and no dilation along w, a filter row's taps read
   * k_w * C adjacent floats, as the filter's K does: one run instead of
   * k_w, which is most of the loop when C is small (a first layer's 1 or 3
   * channels). */
  bool runs = sc == 1 && g.dl_w == 1 && g.in_sw == C;
  idx_t run = g.k_w * C;
  for (idx_t kd = 0; kd < g.k_d; kd++)
    for (idx_t kh = 0; kh < g.k_h; kh++) {
      if (runs) {
        __global const T *src[DIRECT_ROWS];
        bool whole = true;
        _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {
          idx_t d = d0[r] + kd * g.dl_d, h = h0[r] + kh * g.dl_h;
          whole = whole && d >= 0 && d < g.in_d && h >= 0 && h < g.in_h &&
                  w0[r] >= 0 && w0[r] + g.k_w <= g.in_w;
          src[r] = image[r] + d * g.in_sd + h * g.in_sh + w0[r] * g.in_sw;
        }
        if (whole) {
          DIRECT_FWD_PLAIN(src, run, B, ldb);
          B += run * ldb;
          continue;
        }
      }
      for (idx_t kw = 0; kw < g.k_w; kw++, B += C * ldb) {
        __global const T *src[DIRECT_ROWS];
        bool keep[DIRECT_ROWS];
        int inside_rows = 0;
        _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {
          idx_t d = d0[r] + kd * g.dl_d, h = h0[r] + kh * g.dl_h;
          idx_t w = w0[r] + kw * g.dl_w;
          bool inside = d >= 0 && d < g.in_d && h >= 0 && h < g.in_h &&
                        w >= 0 && w < g.in_w;
          src[r] = inside ? image[r] + d * g.in_sd + h * g.in_sh + w * g.in_sw
                          : has_zeros ? zeros : image[0];
          keep[r] = inside;
          inside_rows += inside;
        }
        if (inside_rows > 0 && sc == 1 &&
            (inside_rows == DIRECT_ROWS || has_zeros)) {
          /* The common case, with the channel stride a constant; rows
           * outside the image read C zeros. */
          DIRECT_FWD_PLAIN(src, C, B, ldb);
        } else if (inside_rows == DIRECT_ROWS) {
          for (idx_t c = 0; c < C; c++) {
            float16 b0 = vload16(0, B + c * ldb), b1 = vload16(1, B + c * ldb);
            _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {
              float a = (float)LOAD(src[r], c * sc);
              acc[r][0] = fma((float16)a, b0, acc[r][0]);
              acc[r][1] = fma((float16)a, b1, acc[r][1]);
            }
          }
        } else if (inside_rows > 0) {
          for (idx_t c = 0; c < C; c++) {
            float16 b0 = vload16(0, B + c * ldb), b1 = vload16(1, B + c * ldb);
            _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {
              /* A select, not a product: 0 * inf is not 0. */
              float a = keep[r] ? (float)LOAD(src[r], c * sc) : 0.0f;
              acc[r][0] = fma((float16)a, b0, acc[r][0]);
              acc[r][1] = fma((float16)a, b1, acc[r][1]);
            }
          }
        }
      }
    }

  direct_store(&g, acc, dst, OCL_PTR(const T, bias), rows - rb * DIRECT_ROWS,
               jb, flags, act, alpha);
}

/* direct_fwd_8x2 for a small K (taps * Cin <= DIRECT_SMALL_K: a first
 * layer's 1 or 3 channels), where the flat kernel's bounds tests per tap
 * for 8 rows that may span two output lines cost several times the tap's
 * 16 products (`zeros`, direct_fwd_8x2's, is not read: the segments here
 * test w). Here a work-item takes output line get_global_id(1) of
 * `lines`, 8 consecutive pixels at a time: a filter row's d and h tests
 * hold for all 8, and w is tested only in segments that touch the padding
 * or run past the line. */
__kernel void direct_fwd_line_8x2(OCL_TENSOR_ARG(const T, in),
                                  OCL_TENSOR_ARG(const float, panels),
                                  OCL_TENSOR_ARG(T, out),
                                  OCL_TENSOR_ARG(const T, bias),
                                  OCL_TENSOR_ARG(const T, zeros), geo_t g,
                                  idx_t lines, idx_t ldb, int flags, int act,
                                  float alpha)
{
  idx_t jb = get_global_id(0);
  idx_t line = get_global_id(1);
  OCL_GUARD(line, lines);
  OCL_GUARD(jb * 32, g.cout);
  idx_t oh = line % g.out_h, od = (line / g.out_h) % g.out_d;
  idx_t n = line / (g.out_h * g.out_d);
  idx_t C = g.cin, sc = g.in_sc;
  idx_t K = g.k_d * g.k_h * g.k_w * C;
  __global const T *image = OCL_PTR(const T, in) + n * g.in_sn;
  __global T *line_dst = OCL_PTR(T, out) + n * g.out_sn + od * g.out_sd +
                         oh * g.out_sh + jb * 32 * g.out_sc;
  idx_t d_first = od * g.s_d - g.p_d, h_first = oh * g.s_h - g.p_h;
  /* Elements between neighbouring rows' reads. */
  idx_t row_step = g.s_w * g.in_sw;
  __global const float *B_line =
      OCL_PTR(const float, panels) + jb * 32 * (ldb == 32 ? K : 1);
  for (idx_t ow0 = 0; ow0 < g.out_w; ow0 += DIRECT_ROWS) {
  __global T *dst[DIRECT_ROWS];
  _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++)
    dst[r] = line_dst + min(ow0 + r, g.out_w - 1) * g.out_sw;
  idx_t w_first = ow0 * g.s_w - g.p_w;
  bool interior = w_first >= 0 && w_first + (DIRECT_ROWS - 1) * g.s_w +
                                          (g.k_w - 1) * g.dl_w <
                                      g.in_w;
  __global const float *B = B_line;
  float16 acc[DIRECT_ROWS][2];
  _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++)
    acc[r][0] = acc[r][1] = 0.0f;
  for (idx_t kd = 0; kd < g.k_d; kd++)
    for (idx_t kh = 0; kh < g.k_h; kh++) {
      idx_t d = d_first + kd * g.dl_d, h = h_first + kh * g.dl_h;
      if (d < 0 || d >= g.in_d || h < 0 || h >= g.in_h) {
        B += g.k_w * C * ldb;
        continue;
      }
      __global const T *src = image + d * g.in_sd + h * g.in_sh;
      for (idx_t kw = 0; kw < g.k_w; kw++, B += C * ldb) {
        idx_t w = w_first + kw * g.dl_w;
        if (interior) {
          __global const T *p = src + w * g.in_sw;
          for (idx_t c = 0; c < C; c++) {
            float16 b0 = vload16(0, B + c * ldb), b1 = vload16(1, B + c * ldb);
            _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {
              float a = (float)LOAD(p, r * row_step + c * sc);
              acc[r][0] = fma((float16)a, b0, acc[r][0]);
              acc[r][1] = fma((float16)a, b1, acc[r][1]);
            }
          }
        } else {
          idx_t at[DIRECT_ROWS];
          bool keep[DIRECT_ROWS];
          _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {
            idx_t wr = w + r * g.s_w;
            keep[r] = wr >= 0 && wr < g.in_w;
            at[r] = keep[r] ? wr * g.in_sw : 0;
          }
          for (idx_t c = 0; c < C; c++) {
            float16 b0 = vload16(0, B + c * ldb), b1 = vload16(1, B + c * ldb);
            _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {
              /* A select, not a product: 0 * inf is not 0. */
              float a = keep[r] ? (float)LOAD(src, at[r] + c * sc) : 0.0f;
              acc[r][0] = fma((float16)a, b0, acc[r][0]);
              acc[r][1] = fma((float16)a, b1, acc[r][1]);
            }
          }
        }
      }
    }
  direct_store(&g, acc, dst, OCL_PTR(const T, bias), g.out_w - ow0, jb, flags,
               act, alpha);
  }
}

/* The filter-gradient direct kernels' arguments and work-item: row block
 * kb (rows from k0) of the filter's K, column block jb of 16 * NV output
 * channels, split get_global_id(2) of the lines. */
#define BPF_KERNEL(name, NV)                                                 \
  __kernel void name(                                                        \
      OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(const T, dy),              \
      OCL_TENSOR_ARG(T, dw), OCL_TENSOR_ARG(acc_t, partial), geo_t g,        \
      idx_t lines_per_split, int split_out)                                  \
  {                                                                          \
    idx_t kb = get_global_id(0);                                             \
    idx_t jb = get_global_id(1);                                             \
    idx_t split = get_global_id(2);                                          \
    idx_t C = g.cin, Cout = g.cout;                                          \
    idx_t K = g.k_d * g.k_h * g.k_w * C;                                     \
    OCL_GUARD(kb * DIRECT_ROWS, K);                                          \
    OCL_GUARD(jb * 16 * NV, Cout);                                           \
    idx_t k0 = kb * DIRECT_ROWS;

/* direct_bpf's end of a line of `products` per row: the chain's sums
 * into total once about DIRECT_CHAIN products are in (the rounding of a
 * GEMM that slices K, not of one long chain), then the next line's
 * (n, od, oh). */
#define BPF_NEXT_LINE(NV, products)                                          \
  chained += (int)(products);                                                \
  if (chained >= DIRECT_CHAIN || l + 1 == l1) {                              \
    _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++)                  \
      _Pragma("unroll") for (int v = 0; v < NV; v++) {                       \
        total[r][v] += acc[r][v];                                            \
        acc[r][v] = 0.0f;                                                    \
      }                                                                      \
    chained = 0;                                                             \
  }                                                                          \
  if (++oh == g.out_h) {                                                     \
    oh = 0;                                                                  \
    if (++od == g.out_d) {                                                   \
      od = 0;                                                                \
      n++;                                                                   \
    }                                                                        \
  }

/* direct_bpf's rows [0, rows) of total into the partial sums
 * [split][K][Cout] (split_out) or the filter gradient. */
#define BPF_STORE(NV, rows)                                                  \
  idx_t at = k0 * Cout + jb * 16 * NV;                                       \
  for (int r = 0; r < (rows); r++)                                           \
    _Pragma("unroll") for (int v = 0; v < NV; v++) {                         \
      if (split_out) {                                                       \
        float tmp[16];                                                       \
        vstore16(total[r][v], 0, tmp);                                       \
        __global acc_t *p = OCL_PTR(acc_t, partial) + split * K * Cout + at; \
        for (int i = 0; i < 16; i++)                                         \
          p[r * Cout + 16 * v + i] = tmp[i];                                 \
      } else {                                                               \
        store16f(OCL_PTR(T, dw) + at + r * Cout + 16 * v, total[r][v]);      \
      }                                                                      \
    }

/* dfilter[k, co] for 8 rows k (8 adjacent input channels of one tap) and
 * 16 * NV output channels, summed over the output lines [l0, l0 + lines)
 * (line = (image, d, h)) of split get_global_id(2): the image's 8
 * channels (one vector) times out_backprop's row of channels (NV vectors)
 * per pixel. Needs Cin % 8 == 0, channels-last input and out_backprop
 * (in_sc = out_sc = 1) and Cout % (16 * NV) == 0. Writes dst (partial
 * sums [split][K][Cout] when split, else the filter gradient itself). */
#define DIRECT_BPF(NV)                                                       \
  BPF_KERNEL(direct_bpf_8x##NV, NV)                                          \
    idx_t tap = k0 / C, ci = k0 - tap * C;                                   \
    idx_t kw = tap % g.k_w, kh = (tap / g.k_w) % g.k_h;                      \
    idx_t kd = tap / (g.k_w * g.k_h);                                        \
    idx_t all_lines = g.batch * g.out_d * g.out_h;                           \
    idx_t l0 = split * lines_per_split;                                      \
    idx_t l1 = min(l0 + lines_per_split, all_lines);                         \
    /* The output columns whose input column lies inside: */                 \
    idx_t lo_num = g.p_w - kw * g.dl_w;                                      \
    idx_t hi_num = g.in_w + g.p_w - kw * g.dl_w;                             \
    idx_t ow_lo = lo_num > 0 ? (lo_num + g.s_w - 1) / g.s_w : 0;             \
    idx_t ow_hi = hi_num > 0 ? min(g.out_w, (hi_num + g.s_w - 1) / g.s_w) : 0; \
    float16 acc[DIRECT_ROWS][NV], total[DIRECT_ROWS][NV];                    \
    _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++)                  \
      _Pragma("unroll") for (int v = 0; v < NV; v++)                         \
        acc[r][v] = total[r][v] = 0.0f;                                      \
    int chained = 0;                                                         \
    idx_t oh = l0 % g.out_h, t = l0 / g.out_h;                               \
    idx_t od = t % g.out_d, n = t / g.out_d;                                 \
    for (idx_t l = l0; l < l1; l++) {                                        \
      idx_t d = od * g.s_d - g.p_d + kd * g.dl_d;                            \
      idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;                            \
      if (d >= 0 && d < g.in_d && h >= 0 && h < g.in_h) {                    \
        __global const T *x = OCL_PTR(const T, in) + n * g.in_sn +           \
                              d * g.in_sd + h * g.in_sh +                    \
                              (ow_lo * g.s_w - g.p_w + kw * g.dl_w) * g.in_sw + \
                              ci;                                            \
        __global const T *e = OCL_PTR(const T, dy) + n * g.out_sn +          \
                              od * g.out_sd + oh * g.out_sh +                \
                              ow_lo * g.out_sw + jb * 16 * NV;               \
        idx_t xs = g.s_w * g.in_sw;                                          \
        for (idx_t ow = ow_lo; ow < ow_hi; ow++, x += xs, e += g.out_sw) {   \
          float16 b[NV];                                                     \
          _Pragma("unroll") for (int v = 0; v < NV; v++)                                       \
            b[v] = VLOADF(e + 16 * v);                                       \
          _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {                            \
            float a = (float)LOAD(x, r);                                     \
            _Pragma("unroll") for (int v = 0; v < NV; v++)                                     \
              acc[r][v] = fma((float16)a, b[v], acc[r][v]);                  \
          }                                                                  \
        }                                                                    \
      }                                                                      \
      BPF_NEXT_LINE(NV, ow_hi - ow_lo)                                       \
    }                                                                        \
    BPF_STORE(NV, DIRECT_ROWS)                                               \
  }

DIRECT_BPF(1)
DIRECT_BPF(2)

/* direct_bpf_8xNV for fewer than 8 input channels (a first layer's 1 or
 * 3), which im2col would serve with taps * Cin floats written and read
 * back per pixel: the 8 rows are 8 consecutive k = (tap, channel) of the
 * filter, rows past K none, each read at its own offset from the pixel.
 * A line where every row's d and h lie inside, at columns where every
 * row's w does, reads without tests; the rest select 0 for what lies
 * outside. Same partial sums and chains as direct_bpf_8xNV. */
#define DIRECT_BPF_GATHER(NV)                                                \
  BPF_KERNEL(direct_bpf_gather_8x##NV, NV)                                   \
    int rows = (int)min((idx_t)DIRECT_ROWS, K - k0);                         \
    /* Each row's tap as offsets from the pixel's first tap. */              \
    idx_t tap_d[DIRECT_ROWS], tap_h[DIRECT_ROWS], tap_w[DIRECT_ROWS];        \
    idx_t x_off[DIRECT_ROWS];                                                \
    idx_t w_min = g.k_w * g.dl_w, w_max = 0;                                 \
    _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {                \
      idx_t k = min(k0 + r, K - 1), tap = k / C, c = k - tap * C;            \
      tap_w[r] = (tap % g.k_w) * g.dl_w;                                     \
      tap_h[r] = ((tap / g.k_w) % g.k_h) * g.dl_h;                           \
      tap_d[r] = (tap / (g.k_w * g.k_h)) * g.dl_d;                           \
      x_off[r] = tap_d[r] * g.in_sd + tap_h[r] * g.in_sh +                   \
                 tap_w[r] * g.in_sw + c * g.in_sc;                           \
      w_min = min(w_min, tap_w[r]);                                          \
      w_max = max(w_max, tap_w[r]);                                          \
    }                                                                        \
    /* The output columns at which every row's input column lies inside: */ \
    idx_t lo_num = g.p_w - w_min, hi_num = g.in_w + g.p_w - w_max;           \
    idx_t ow_lo = lo_num > 0 ? (lo_num + g.s_w - 1) / g.s_w : 0;             \
    idx_t ow_hi = hi_num > 0 ? min(g.out_w, (hi_num + g.s_w - 1) / g.s_w) : 0; \
    ow_hi = max(ow_hi, ow_lo);                                               \
    idx_t all_lines = g.batch * g.out_d * g.out_h;                           \
    idx_t l0 = split * lines_per_split;                                      \
    idx_t l1 = min(l0 + lines_per_split, all_lines);                         \
    float16 acc[DIRECT_ROWS][NV], total[DIRECT_ROWS][NV];                    \
    _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++)                  \
      _Pragma("unroll") for (int v = 0; v < NV; v++)                         \
        acc[r][v] = total[r][v] = 0.0f;                                      \
    __global const T *x = OCL_PTR(const T, in);                              \
    int chained = 0;                                                         \
    idx_t oh = l0 % g.out_h, t = l0 / g.out_h;                               \
    idx_t od = t % g.out_d, n = t / g.out_d;                                 \
    for (idx_t l = l0; l < l1; l++) {                                        \
      idx_t d0 = od * g.s_d - g.p_d, h0 = oh * g.s_h - g.p_h;                \
      bool line_in[DIRECT_ROWS];                                             \
      bool whole = true;                                                     \
      _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {              \
        idx_t d = d0 + tap_d[r], h = h0 + tap_h[r];                          \
        line_in[r] = r < rows && d >= 0 && d < g.in_d && h >= 0 &&           \
                     h < g.in_h;                                             \
        whole = whole && (line_in[r] || r >= rows);                          \
      }                                                                      \
      /* The line's first pixel's first tap (outside when padded). */        \
      idx_t base = n * g.in_sn + d0 * g.in_sd + h0 * g.in_sh -               \
                   g.p_w * g.in_sw;                                          \
      idx_t xs = g.s_w * g.in_sw;                                            \
      __global const T *e = OCL_PTR(const T, dy) + n * g.out_sn +            \
                            od * g.out_sd + oh * g.out_sh + jb * 16 * NV;    \
      idx_t fast_lo = whole ? ow_lo : g.out_w;                               \
      idx_t fast_hi = whole ? ow_hi : g.out_w;                               \
      for (idx_t ow = 0; ow < g.out_w; ow++) {                               \
        if (ow == fast_lo) {                                                 \
          for (; ow < fast_hi; ow++) {                                       \
            float16 b[NV];                                                   \
            _Pragma("unroll") for (int v = 0; v < NV; v++)                   \
              b[v] = VLOADF(e + ow * g.out_sw + 16 * v);                     \
            idx_t at = base + ow * xs;                                       \
            _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {        \
              if (r < rows) {                                                \
                float a = (float)LOAD(x, at + x_off[r]);                     \
                _Pragma("unroll") for (int v = 0; v < NV; v++)               \
                  acc[r][v] = fma((float16)a, b[v], acc[r][v]);              \
              }                                                              \
            }                                                                \
          }                                                                  \
          if (ow == g.out_w)                                                 \
            break;                                                           \
        }                                                                    \
        float16 b[NV];                                                       \
        _Pragma("unroll") for (int v = 0; v < NV; v++)                       \
          b[v] = VLOADF(e + ow * g.out_sw + 16 * v);                         \
        idx_t at = base + ow * xs, w0 = ow * g.s_w - g.p_w;                  \
        _Pragma("unroll") for (int r = 0; r < DIRECT_ROWS; r++) {            \
          idx_t w = w0 + tap_w[r];                                           \
          bool inside = line_in[r] && w >= 0 && w < g.in_w;                  \
          /* A select, not a product: 0 * inf is not 0. */                   \
          float a = inside ? (float)LOAD(x, at + x_off[r]) : 0.0f;           \
          _Pragma("unroll") for (int v = 0; v < NV; v++)                     \
            acc[r][v] = fma((float16)a, b[v], acc[r][v]);                    \
        }                                                                    \
      }                                                                      \
      BPF_NEXT_LINE(NV, g.out_w)                                             \
    }                                                                        \
    BPF_STORE(NV, rows)                                                      \
  }

DIRECT_BPF_GATHER(1)
DIRECT_BPF_GATHER(2)

/* ---- Depthwise, channels-last, multiplier 1 ------------------------------
 * A work-item per image row, 16 channels at a time in vector registers
 * (what reaches SIMD on a CPU device). Each pixel lists the taps that
 * reach it once (their offsets in the two tensors read), and every block
 * of channels then sums over that list: no bounds check or division per
 * channel block. filter [KH, KW, C]; the host sends filters of more than
 * DW_ROW_TAPS taps to the element kernels. */
#define DW_ROW_TAPS 64

/* The sum over a pixel's tap list of a[ao[t] + c] * f[fo[t] + c] for
 * every channel c < C: 16 at a time, then one at a time. */
#define DW_ROW_SUMS(a, ao, f, fo, count, dst)                              \
  do {                                                                     \
    for (idx_t c0 = 0; c0 < vc; c0 += 16) {                                \
      vacc_t acc = 0;                                                      \
      for (int t_ = 0; t_ < (count); t_++)                                 \
        acc += VLOAD((a) + (ao)[t_] + c0) * VLOAD((f) + (fo)[t_] + c0);    \
      VSTORE((dst) + c0, acc);                                             \
    }                                                                      \
    for (idx_t c = vc; c < C; c++) {                                       \
      acc_t acc = 0;                                                       \
      for (int t_ = 0; t_ < (count); t_++)                                 \
        acc += LOAD(a, (ao)[t_] + c) * LOAD(f, (fo)[t_] + c);              \
      STORE(dst, c, acc);                                                  \
    }                                                                      \
  } while (0)

/* out[n, oh, :, :] for row r = n * OH + oh. */
__kernel void dw_fwd_rows(OCL_TENSOR_ARG(const T, in),
                          OCL_TENSOR_ARG(const T, filter),
                          OCL_TENSOR_ARG(T, out), geo_t g)
{
  idx_t r = get_global_id(0);
  OCL_GUARD(r, g.batch * g.out_h);
  idx_t n = r / g.out_h, oh = r % g.out_h;
  idx_t C = g.cout, vc = C / 16 * 16;
  __global const T *x = OCL_PTR(const T, in) + n * g.in_sn;
  __global const T *f = OCL_PTR(const T, filter);
  __global T *y = OCL_PTR(T, out) + n * g.out_sn + oh * g.out_sh;
  idx_t xo[DW_ROW_TAPS], fo[DW_ROW_TAPS];
  for (idx_t ow = 0; ow < g.out_w; ow++) {
    int count = 0;
    for (idx_t kh = 0; kh < g.k_h; kh++) {
      idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;
      if (h < 0 || h >= g.in_h)
        continue;
      for (idx_t kw = 0; kw < g.k_w; kw++) {
        idx_t w = ow * g.s_w - g.p_w + kw * g.dl_w;
        if (w < 0 || w >= g.in_w)
          continue;
        xo[count] = h * g.in_sh + w * g.in_sw;
        fo[count++] = (kh * g.k_w + kw) * C;
      }
    }
    DW_ROW_SUMS(x, xo, f, fo, count, y + ow * g.out_sw);
  }
}

/* dx[n, h, :, :] for row r = n * H + h: the taps whose window reads
 * (h, w). */
__kernel void dw_bpi_rows(OCL_TENSOR_ARG(const T, dout),
                          OCL_TENSOR_ARG(const T, filter),
                          OCL_TENSOR_ARG(T, dx), geo_t g)
{
  idx_t r = get_global_id(0);
  OCL_GUARD(r, g.batch * g.in_h);
  idx_t n = r / g.in_h, h = r % g.in_h;
  idx_t C = g.cin, vc = C / 16 * 16;
  __global const T *dy = OCL_PTR(const T, dout) + n * g.out_sn;
  __global const T *f = OCL_PTR(const T, filter);
  __global T *o = OCL_PTR(T, dx) + n * g.in_sn + h * g.in_sh;
  idx_t yo[DW_ROW_TAPS], fo[DW_ROW_TAPS];
  for (idx_t w = 0; w < g.in_w; w++) {
    int count = 0;
    for (idx_t kh = 0; kh < g.k_h; kh++) {
      idx_t t = h + g.p_h - kh * g.dl_h;
      if (t < 0 || t % g.s_h != 0 || t / g.s_h >= g.out_h)
        continue;
      idx_t oh = t / g.s_h;
      for (idx_t kw = 0; kw < g.k_w; kw++) {
        idx_t u = w + g.p_w - kw * g.dl_w;
        if (u < 0 || u % g.s_w != 0 || u / g.s_w >= g.out_w)
          continue;
        yo[count] = oh * g.out_sh + u / g.s_w * g.out_sw;
        fo[count++] = (kh * g.k_w + kw) * C;
      }
    }
    DW_ROW_SUMS(dy, yo, f, fo, count, o + w * g.in_sw);
  }
}

/* partial[s, tap, c] = the filter gradient's sum over output rows
 * [s * chunk, (s + 1) * chunk) (row = n * OH + oh); splitk_sum adds the
 * chunks. */
__kernel void dw_bpf_rows(OCL_TENSOR_ARG(const T, in),
                          OCL_TENSOR_ARG(const T, dout),
                          OCL_TENSOR_ARG(acc_t, partial), geo_t g,
                          idx_t chunk)
{
  idx_t s = get_global_id(0);
  idx_t rows = g.batch * g.out_h;
  OCL_GUARD(s * chunk, rows);
  idx_t r0 = s * chunk, r1 = min(rows, r0 + chunk);
  idx_t C = g.cout, vc = C / 16 * 16, taps = g.k_h * g.k_w;
  __global const T *x = OCL_PTR(const T, in);
  __global const T *dy = OCL_PTR(const T, dout);
  __global acc_t *part = OCL_PTR(acc_t, partial) + s * taps * C;
  for (idx_t tap = 0; tap < taps; tap++) {
    idx_t kh = tap / g.k_w, kw = tap % g.k_w;
    for (idx_t c0 = 0; c0 < vc; c0 += 16) {
      vacc_t acc = 0;
      for (idx_t r = r0; r < r1; r++) {
        idx_t n = r / g.out_h, oh = r % g.out_h;
        idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;
        if (h < 0 || h >= g.in_h)
          continue;
        __global const T *xr = x + n * g.in_sn + h * g.in_sh + c0;
        __global const T *dr = dy + n * g.out_sn + oh * g.out_sh + c0;
        for (idx_t ow = 0; ow < g.out_w; ow++) {
          idx_t w = ow * g.s_w - g.p_w + kw * g.dl_w;
          if (w < 0 || w >= g.in_w)
            continue;
          acc += VLOAD(xr + w * g.in_sw) * VLOAD(dr + ow * g.out_sw);
        }
      }
      vstore16(acc, 0, part + tap * C + c0);
    }
    for (idx_t c = vc; c < C; c++) {
      acc_t acc = 0;
      for (idx_t r = r0; r < r1; r++) {
        idx_t n = r / g.out_h, oh = r % g.out_h;
        idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;
        if (h < 0 || h >= g.in_h)
          continue;
        for (idx_t ow = 0; ow < g.out_w; ow++) {
          idx_t w = ow * g.s_w - g.p_w + kw * g.dl_w;
          if (w < 0 || w >= g.in_w)
            continue;
          acc += LOAD(x, n * g.in_sn + h * g.in_sh + w * g.in_sw + c) *
                 LOAD(dy, n * g.out_sn + oh * g.out_sh + ow * g.out_sw + c);
        }
      }
      part[tap * C + c] = acc;
    }
  }
}

/* ==== Shared by both shapes ============================================== */

/* out[i] = sum over s < splits of partial[s * n + i], rounded once to T.
 * Neighbouring work-items on neighbouring elements. */
__kernel void splitk_sum(OCL_TENSOR_ARG(const acc_t, partial),
                         OCL_TENSOR_ARG(T, out), idx_t n, idx_t splits)
{
  idx_t i = get_global_id(0);
  OCL_GUARD(i, n);
  __global const acc_t *p = OCL_PTR(const acc_t, partial) + i;
  acc_t acc = 0;
  for (idx_t s = 0; s < splits; s++)
    acc += p[s * n];
  STORE(OCL_PTR(T, out), i, acc);
}

/* ==== GPU shape: depthwise =============================================== */

/* The (n, h, w, c) of element i of a 4-D tensor in memory order (NHWC or
 * NCHW): neighbouring work-items take neighbouring elements. */
#define DECODE4(i, nchw, H, W, C, n, h, w, c) \
  do {                                        \
    idx_t q_ = (i);                           \
    if (nchw) {                               \
      w = q_ % (W);                           \
      q_ /= (W);                              \
      h = q_ % (H);                           \
      q_ /= (H);                              \
      c = q_ % (C);                           \
      n = q_ / (C);                           \
    } else {                                  \
      c = q_ % (C);                           \
      q_ /= (C);                              \
      w = q_ % (W);                           \
      q_ /= (W);                              \
      h = q_ % (H);                           \
      n = q_ / (H);                           \
    }                                         \
  } while (0)

/* out[i] for every output element i: channel co reads input channel
 * co / mult; filter [KH, KW, C * mult]. */
__kernel void dw_fwd_elem(OCL_TENSOR_ARG(const T, in),
                          OCL_TENSOR_ARG(const T, filter),
                          OCL_TENSOR_ARG(T, out), geo_t g, idx_t total,
                          int nchw)
{
  idx_t i = get_global_id(0);
  OCL_GUARD(i, total);
  idx_t n, oh, ow, co;
  DECODE4(i, nchw, g.out_h, g.out_w, g.cout, n, oh, ow, co);
  __global const T *x =
      OCL_PTR(const T, in) + n * g.in_sn + (co / g.mult) * g.in_sc;
  __global const T *f = OCL_PTR(const T, filter) + co;
  acc_t acc = 0;
  for (idx_t kh = 0; kh < g.k_h; kh++) {
    idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;
    if (h < 0 || h >= g.in_h)
      continue;
    for (idx_t kw = 0; kw < g.k_w; kw++) {
      idx_t w = ow * g.s_w - g.p_w + kw * g.dl_w;
      if (w < 0 || w >= g.in_w)
        continue;
      acc += LOAD(x, h * g.in_sh + w * g.in_sw) *
             LOAD(f, (kh * g.k_w + kw) * g.cout);
    }
  }
  STORE(OCL_PTR(T, out), i, acc);
}

/* dx[i] for every input element i: the taps that reach it, times every
 * multiplier. */
__kernel void dw_bpi_elem(OCL_TENSOR_ARG(const T, dout),
                          OCL_TENSOR_ARG(const T, filter),
                          OCL_TENSOR_ARG(T, dx), geo_t g, idx_t total,
                          int nchw)
{
  idx_t i = get_global_id(0);
  OCL_GUARD(i, total);
  idx_t n, h, w, c;
  DECODE4(i, nchw, g.in_h, g.in_w, g.cin, n, h, w, c);
  idx_t m = g.mult;
  __global const T *dy =
      OCL_PTR(const T, dout) + n * g.out_sn + c * m * g.out_sc;
  __global const T *f = OCL_PTR(const T, filter) + c * m;
  acc_t acc = 0;
  for (idx_t kh = 0; kh < g.k_h; kh++) {
    idx_t t = h + g.p_h - kh * g.dl_h;
    if (t < 0 || t % g.s_h != 0 || t / g.s_h >= g.out_h)
      continue;
    idx_t oh = t / g.s_h;
    for (idx_t kw = 0; kw < g.k_w; kw++) {
      idx_t u = w + g.p_w - kw * g.dl_w;
      if (u < 0 || u % g.s_w != 0 || u / g.s_w >= g.out_w)
        continue;
      idx_t ow = u / g.s_w;
      idx_t o = oh * g.out_sh + ow * g.out_sw;
      idx_t fo = (kh * g.k_w + kw) * g.cout;
      for (idx_t q = 0; q < m; q++)
        acc += LOAD(dy, o + q * g.out_sc) * LOAD(f, fo + q);
    }
  }
  STORE(OCL_PTR(T, dx), i, acc);
}

/* partial[s, tap, co] for channels-last: the sum over output rows
 * [s * chunk, (s + 1) * chunk) (row = n * OH + oh) of x * dy. Global
 * (cout, taps, splits): neighbouring work-items on neighbouring channels,
 * so every load is coalesced; many splits fill the device. */
__kernel void dw_bpf_nhwc(OCL_TENSOR_ARG(const T, in),
                          OCL_TENSOR_ARG(const T, dout),
                          OCL_TENSOR_ARG(acc_t, partial), geo_t g,
                          idx_t chunk)
{
  idx_t co = get_global_id(0), tap = get_global_id(1), s = get_global_id(2);
  idx_t taps = g.k_h * g.k_w;
  OCL_GUARD(co, g.cout);
  OCL_GUARD(tap, taps);
  idx_t rows = g.batch * g.out_h;
  idx_t r0 = s * chunk, r1 = min(rows, r0 + chunk);
  idx_t kh = tap / g.k_w, kw = tap % g.k_w;
  __global const T *x = OCL_PTR(const T, in) + (co / g.mult) * g.in_sc;
  __global const T *dy = OCL_PTR(const T, dout) + co * g.out_sc;
  acc_t acc = 0;
  for (idx_t r = r0; r < r1; r++) {
    idx_t n = r / g.out_h, oh = r % g.out_h;
    idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;
    if (h < 0 || h >= g.in_h)
      continue;
    idx_t xo = n * g.in_sn + h * g.in_sh, yo = n * g.out_sn + oh * g.out_sh;
    for (idx_t ow = 0; ow < g.out_w; ow++) {
      idx_t w = ow * g.s_w - g.p_w + kw * g.dl_w;
      if (w < 0 || w >= g.in_w)
        continue;
      acc += LOAD(x, xo + w * g.in_sw) * LOAD(dy, yo + ow * g.out_sw);
    }
  }
  OCL_PTR(acc_t, partial)[(s * taps + tap) * g.cout + co] = acc;
}

/* The same for channels-first, where a channel's pixels are contiguous: a
 * work-group of DW_LANES work-items per (co, tap, split) walks the split's
 * output pixels side by side and folds in local memory. */
#define DW_LANES 64
__kernel __attribute__((reqd_work_group_size(DW_LANES, 1, 1))) void
dw_bpf_nchw(OCL_TENSOR_ARG(const T, in), OCL_TENSOR_ARG(const T, dout),
            OCL_TENSOR_ARG(acc_t, partial), geo_t g, idx_t chunk)
{
  __local acc_t fold[DW_LANES];
  int lane = get_local_id(0);
  idx_t co = get_group_id(0), tap = get_global_id(1), s = get_global_id(2);
  idx_t taps = g.k_h * g.k_w;
  idx_t kh = tap / g.k_w, kw = tap % g.k_w;
  idx_t pixels = g.batch * g.out_h * g.out_w;
  idx_t p0 = s * chunk, p1 = min(pixels, p0 + chunk);
  __global const T *x = OCL_PTR(const T, in) + (co / g.mult) * g.in_sc;
  __global const T *dy = OCL_PTR(const T, dout) + co * g.out_sc;
  acc_t acc = 0;
  for (idx_t p = p0 + lane; p < p1; p += DW_LANES) {
    idx_t ow = p % g.out_w, q = p / g.out_w;
    idx_t oh = q % g.out_h, n = q / g.out_h;
    idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;
    idx_t w = ow * g.s_w - g.p_w + kw * g.dl_w;
    if (h < 0 || h >= g.in_h || w < 0 || w >= g.in_w)
      continue;
    acc += LOAD(x, n * g.in_sn + h * g.in_sh + w * g.in_sw) *
           LOAD(dy, n * g.out_sn + oh * g.out_sh + ow * g.out_sw);
  }
  fold[lane] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int half_ = DW_LANES / 2; half_ > 0; half_ /= 2) {
    if (lane < half_)
      fold[lane] += fold[lane + half_];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0)
    OCL_PTR(acc_t, partial)[(s * taps + tap) * g.cout + co] = fold[0];
}

/* igemm flags (conv.c's IG_*). */
#define IG_A_FAST_K 1 /* A is contiguous along k */
#define IG_B_FAST_K 2 /* B is contiguous along k */
#define IG_SWAP 4     /* the output is contiguous along rows */
#define IG_BIAS 8     /* add bias[channel] before the activation */

/* ==== GPU shape: direct convolutions ======================================
 * A work-item per result element, neighbouring work-items on neighbouring
 * addresses of the result, each summing its taps and channels: for
 * products too narrow for a GEMM tile (fewer than 16 channels on the tile's
 * column side, where a tile would be mostly padding) and small filter
 * gradients. */

/* (n, d, h, w, c) of element i of a 5-D tensor in memory order. */
#define DECODE5(i, nchw, D, H, W, C, n, d, h, w, c) \
  do {                                              \
    idx_t q_ = (i);                                 \
    if (nchw) {                                     \
      w = q_ % (W);                                 \
      q_ /= (W);                                    \
      h = q_ % (H);                                 \
      q_ /= (H);                                    \
      d = q_ % (D);                                 \
      q_ /= (D);                                    \
      c = q_ % (C);                                 \
      n = q_ / (C);                                 \
    } else {                                        \
      c = q_ % (C);                                 \
      q_ /= (C);                                    \
      w = q_ % (W);                                 \
      q_ /= (W);                                    \
      h = q_ % (H);                                 \
      q_ /= (H);                                    \
      d = q_ % (D);                                 \
      n = q_ / (D);                                 \
    }                                               \
  } while (0)

/* y[i] (+ bias, activation) for every output element i. */
__kernel void direct_fwd(OCL_TENSOR_ARG(const T, in),
                         OCL_TENSOR_ARG(const T, filter),
                         OCL_TENSOR_ARG(T, out), OCL_TENSOR_ARG(const T, bias),
                         geo_t g, idx_t total, int nchw, int flags, int act,
                         float alpha)
{
  idx_t i = get_global_id(0);
  OCL_GUARD(i, total);
  idx_t n, od, oh, ow, co;
  DECODE5(i, nchw, g.out_d, g.out_h, g.out_w, g.cout, n, od, oh, ow, co);
  idx_t grp = co / g.og;
  __global const T *x =
      OCL_PTR(const T, in) + n * g.in_sn + grp * g.cg * g.in_sc;
  __global const T *f = OCL_PTR(const T, filter) + co;
  acc_t acc = 0;
  for (idx_t kd = 0; kd < g.k_d; kd++) {
    idx_t d = od * g.s_d - g.p_d + kd * g.dl_d;
    if (d < 0 || d >= g.in_d)
      continue;
    for (idx_t kh = 0; kh < g.k_h; kh++) {
      idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;
      if (h < 0 || h >= g.in_h)
        continue;
      for (idx_t kw = 0; kw < g.k_w; kw++) {
        idx_t w = ow * g.s_w - g.p_w + kw * g.dl_w;
        if (w < 0 || w >= g.in_w)
          continue;
        idx_t tap = (kd * g.k_h + kh) * g.k_w + kw;
        idx_t xo = d * g.in_sd + h * g.in_sh + w * g.in_sw;
        for (idx_t ci = 0; ci < g.cg; ci++)
          acc += LOAD(x, xo + ci * g.in_sc) *
                 LOAD(f, (tap * g.cg + ci) * g.cout);
      }
    }
  }
  if (flags & IG_BIAS)
    acc += LOAD(OCL_PTR(const T, bias), co);
  STORE(OCL_PTR(T, out), i, activate(acc, act, alpha));
}

/* dx[i] for every input element i: the output positions whose windows
 * read it, over the output channels of its group. */
__kernel void direct_bpi(OCL_TENSOR_ARG(const T, dout),
                         OCL_TENSOR_ARG(const T, filter),
                         OCL_TENSOR_ARG(T, dx), geo_t g, idx_t total, int nchw)
{
  idx_t i = get_global_id(0);
  OCL_GUARD(i, total);
  idx_t n, d, h, w, c;
  DECODE5(i, nchw, g.in_d, g.in_h, g.in_w, g.cin, n, d, h, w, c);
  idx_t grp = c / g.cg, cl = c % g.cg;
  __global const T *dy =
      OCL_PTR(const T, dout) + n * g.out_sn + grp * g.og * g.out_sc;
  __global const T *f = OCL_PTR(const T, filter) + cl * g.cout + grp * g.og;
  acc_t acc = 0;
  for (idx_t kd = 0; kd < g.k_d; kd++) {
    idx_t sd = d + g.p_d - kd * g.dl_d;
    if (sd < 0 || sd % g.s_d != 0 || sd / g.s_d >= g.out_d)
      continue;
    for (idx_t kh = 0; kh < g.k_h; kh++) {
      idx_t sh = h + g.p_h - kh * g.dl_h;
      if (sh < 0 || sh % g.s_h != 0 || sh / g.s_h >= g.out_h)
        continue;
      for (idx_t kw = 0; kw < g.k_w; kw++) {
        idx_t sw = w + g.p_w - kw * g.dl_w;
        if (sw < 0 || sw % g.s_w != 0 || sw / g.s_w >= g.out_w)
          continue;
        idx_t tap = (kd * g.k_h + kh) * g.k_w + kw;
        idx_t yo = sd / g.s_d * g.out_sd + sh / g.s_h * g.out_sh +
                   sw / g.s_w * g.out_sw;
        idx_t fo = tap * g.cg * g.cout;
        for (idx_t co = 0; co < g.og; co++)
          acc += LOAD(dy, yo + co * g.out_sc) * LOAD(f, fo + co);
      }
    }
  }
  STORE(OCL_PTR(T, dx), i, acc);
}

/* dw[i] for every filter element i ([taps, cg, cout]): a sum over every
 * image and output position. */
__kernel void direct_bpf(OCL_TENSOR_ARG(const T, in),
                         OCL_TENSOR_ARG(const T, dout),
                         OCL_TENSOR_ARG(T, dw), geo_t g, idx_t total)
{
  idx_t i = get_global_id(0);
  OCL_GUARD(i, total);
  idx_t co = i % g.cout, t = i / g.cout;
  idx_t cl = t % g.cg, tap = t / g.cg;
  idx_t kw = tap % g.k_w, kh = (tap / g.k_w) % g.k_h,
        kd = tap / (g.k_w * g.k_h);
  idx_t grp = co / g.og;
  __global const T *x =
      OCL_PTR(const T, in) + (grp * g.cg + cl) * g.in_sc;
  __global const T *dy = OCL_PTR(const T, dout) + co * g.out_sc;
  acc_t acc = 0;
  for (idx_t n = 0; n < g.batch; n++)
    for (idx_t od = 0; od < g.out_d; od++) {
      idx_t d = od * g.s_d - g.p_d + kd * g.dl_d;
      if (d < 0 || d >= g.in_d)
        continue;
      for (idx_t oh = 0; oh < g.out_h; oh++) {
        idx_t h = oh * g.s_h - g.p_h + kh * g.dl_h;
        if (h < 0 || h >= g.in_h)
          continue;
        for (idx_t ow = 0; ow < g.out_w; ow++) {
          idx_t w = ow * g.s_w - g.p_w + kw * g.dl_w;
          if (w < 0 || w >= g.in_w)
            continue;
          acc += LOAD(x, n * g.in_sn + d * g.in_sd + h * g.in_sh +
                             w * g.in_sw) *
                 LOAD(dy, n * g.out_sn + od * g.out_sd + oh * g.out_sh +
                              ow * g.out_sw);
        }
      }
    }
  STORE(OCL_PTR(T, dw), i, acc);
}

/* ==== GPU shape: implicit GEMM ===========================================
 * C[row, col] = sum over k of A[row, k] * B[k, col] with A and B gathered
 * from the tensors tile by tile:
 *   forward          rows (n, output position), cols output channels of
 *                    the group, k (tap, input channel of the group);
 *   backprop input   rows (n, input position), cols input channels of
 *                    the group, k (tap, output channel of the group):
 *                    dy at the output position that tap maps to (zero
 *                    where a stride skips it);
 *   backprop filter  rows (tap, input channel), cols output channels,
 *                    k (n, output position), split over work-groups.
 * A work-group of (TILE/4)^2 work-items computes a TILE x TILE tile of C,
 * 4 x 4 per work-item, over TK-deep slices staged in local memory. k runs
 * over (tap, channel) pairs regardless of taps, so that a few channels
 * still fill a slice; TK work-items decode a slice's k values once into
 * local memory, so no index is divided per element. Loads: work-item e of a slice takes element (e % TK, e / TK)
 * where the tensor is contiguous along k, else (e / TILE, e % TILE), so
 * neighbouring work-items read neighbouring addresses in either layout;
 * stores likewise (`swap` maps the micro-tile's rows onto the fast local
 * dimension when the output's rows are its contiguous dimension). Local
 * rows are padded by one element against bank conflicts. */
#define TK 16

/* Per work-item load slots of a slice: TK * TILE elements over
 * (TILE / 4)^2 work-items. */
#define SLOTS(TILE) (256 / (TILE))


/* Where work-item `lid` loads element `slot` of a TILE x TK slice:
 * its k (0..TK) and its row or column (0..TILE). */
static inline void slice_slot(int lid, int slot, int nt, int tile,
                              bool fast_k, int *kk, int *x)
{
  int e = lid + slot * nt;
  if (fast_k) {
    *kk = e % TK;
    *x = e / TK;
  } else {
    *kk = e / tile;
    *x = e % tile;
  }
}

/* The accumulation of one staged slice into the work-item's 4 x 4. */
#define IGEMM_FMA(TILE)                                                    \
  for (int kk = 0; kk < TK; kk++) {                                        \
    acc_t a[4], b[4];                                                      \
    for (int i = 0; i < 4; i++)                                            \
      a[i] = As[kk * ((TILE) + 1) + rl + i * ((TILE) / 4)];                \
    for (int j = 0; j < 4; j++)                                            \
      b[j] = Bs[kk * ((TILE) + 1) + cl + j * ((TILE) / 4)];                \
    for (int i = 0; i < 4; i++)                                            \
      for (int j = 0; j < 4; j++)                                          \
        acc[i][j] = fma(a[i], b[j], acc[i][j]);                            \
  }

static inline __attribute__((always_inline)) void
igemm_fwd_body(__global const T *x, __global const T *f,
                                  __global T *y, __global const T *bias,
                                  const geo_t g, int flags, int act,
                                  float alpha, __local acc_t *As,
                                  __local acc_t *Bs, __local idx_t *kt,
                                  idx_t m_tile, idx_t grp, const int TILE)
{
  const int nt = (TILE / 4) * (TILE / 4);
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int lid = ly * (TILE / 4) + lx;
  const bool swap = (flags & IG_SWAP) != 0;
  const int rl = swap ? lx : ly, cl = swap ? ly : lx;
  const idx_t hw = g.out_h * g.out_w, P = g.out_d * hw;
  const idx_t M = g.batch * P;
  const idx_t K = g.k_d * g.k_h * g.k_w * g.cg;
  const idx_t m0 = m_tile * TILE;
  const idx_t c0 = (idx_t)get_group_id(0) * TILE;
  const bool a_fast_k = (flags & IG_A_FAST_K) != 0;
  x += grp * g.cg * g.in_sc;
  f += grp * g.og;

  /* This work-item's A slots: each reads one fixed row of the tile. */
  idx_t a_base[SLOTS(16)];
  idx_t a_d[SLOTS(16)], a_h[SLOTS(16)], a_w[SLOTS(16)];
#pragma unroll
  for (int j = 0; j < SLOTS(TILE); j++) {
    int kk, r;
    slice_slot(lid, j, nt, TILE, a_fast_k, &kk, &r);
    idx_t m = m0 + r;
    if (m < M) {
      idx_t n = m / P, p = m % P;
      idx_t od = p / hw, oh = (p % hw) / g.out_w, ow = p % g.out_w;
      a_base[j] = n * g.in_sn;
      a_d[j] = od * g.s_d - g.p_d;
      a_h[j] = oh * g.s_h - g.p_h;
      a_w[j] = ow * g.s_w - g.p_w;
    } else {
      a_base[j] = 0;
      a_d[j] = -g.in_d - g.k_d * g.dl_d; /* out of the image at every tap */
      a_h[j] = 0;
      a_w[j] = 0;
    }
  }

  acc_t acc[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      acc[i][j] = 0;

  /* k = tap * cg + ci runs on without regard to taps, so that a few input
   * channels fill a slice; TK work-items decode a slice's k into kt
   * (channel offset or -1 past the end, then the tap's window offset). */
  for (idx_t k0 = 0; k0 < K; k0 += TK) {
    if (lid < TK) {
      idx_t k = k0 + lid;
      idx_t tap = k / g.cg, ci = k % g.cg;
      kt[4 * lid] = k < K ? ci * g.in_sc : -1;
      kt[4 * lid + 1] = tap / (g.k_w * g.k_h) * g.dl_d;
      kt[4 * lid + 2] = (tap / g.k_w) % g.k_h * g.dl_h;
      kt[4 * lid + 3] = tap % g.k_w * g.dl_w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int j = 0; j < SLOTS(TILE); j++) {
      int kk, r;
      slice_slot(lid, j, nt, TILE, a_fast_k, &kk, &r);
      idx_t d = a_d[j] + kt[4 * kk + 1], h = a_h[j] + kt[4 * kk + 2],
            w = a_w[j] + kt[4 * kk + 3];
      acc_t v = 0;
      if (kt[4 * kk] >= 0 && d >= 0 && d < g.in_d && h >= 0 && h < g.in_h &&
          w >= 0 && w < g.in_w)
        v = LOAD(x, a_base[j] + d * g.in_sd + h * g.in_sh + w * g.in_sw +
                        kt[4 * kk]);
      As[kk * (TILE + 1) + r] = v;
    }
#pragma unroll
    for (int j = 0; j < SLOTS(TILE); j++) {
      int kk, c;
      slice_slot(lid, j, nt, TILE, false, &kk, &c);
      idx_t k = k0 + kk, col = c0 + c;
      acc_t v = 0;
      if (k < K && col < g.og)
        v = LOAD(f, k * g.cout + col);
      Bs[kk * (TILE + 1) + c] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    IGEMM_FMA(TILE)
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int i = 0; i < 4; i++) {
    idx_t m = m0 + rl + i * (TILE / 4);
    if (m >= M)
      continue;
    idx_t n = m / P, p = m % P;
    idx_t od = p / hw, oh = (p % hw) / g.out_w, ow = p % g.out_w;
    idx_t base = n * g.out_sn + od * g.out_sd + oh * g.out_sh + ow * g.out_sw;
    for (int j = 0; j < 4; j++) {
      idx_t col = c0 + cl + j * (TILE / 4);
      if (col >= g.og)
        continue;
      idx_t co = grp * g.og + col;
      acc_t v = acc[i][j];
      if (flags & IG_BIAS)
        v += LOAD(bias, co);
      STORE(y, base + co * g.out_sc, activate(v, act, alpha));
    }
  }
}

static inline __attribute__((always_inline)) void
igemm_bpi_body(__global const T *dy, __global const T *f,
                                  __global T *dx, const geo_t g, int flags,
                                  __local acc_t *As, __local acc_t *Bs,
                                  __local idx_t *kt, idx_t m_tile, idx_t grp,
                                  const int TILE)
{
  const int nt = (TILE / 4) * (TILE / 4);
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int lid = ly * (TILE / 4) + lx;
  const bool swap = (flags & IG_SWAP) != 0;
  const int rl = swap ? lx : ly, cl = swap ? ly : lx;
  const idx_t hw = g.in_h * g.in_w, P = g.in_d * hw;
  const idx_t M = g.batch * P;
  const idx_t K = g.k_d * g.k_h * g.k_w * g.og;
  const idx_t m0 = m_tile * TILE;
  const idx_t c0 = (idx_t)get_group_id(0) * TILE;
  const bool a_fast_k = (flags & IG_A_FAST_K) != 0;
  const bool unit = g.s_d == 1 && g.s_h == 1 && g.s_w == 1;
  dy += grp * g.og * g.out_sc;
  f += grp * g.og;

  /* Each A slot's row: an input position, plus the padding. */
  idx_t a_base[SLOTS(16)];
  idx_t a_d[SLOTS(16)], a_h[SLOTS(16)], a_w[SLOTS(16)];
#pragma unroll
  for (int j = 0; j < SLOTS(TILE); j++) {
    int kk, r;
    slice_slot(lid, j, nt, TILE, a_fast_k, &kk, &r);
    idx_t m = m0 + r;
    if (m < M) {
      idx_t n = m / P, p = m % P;
      a_base[j] = n * g.out_sn;
      a_d[j] = p / hw + g.p_d;
      a_h[j] = (p % hw) / g.in_w + g.p_h;
      a_w[j] = p % g.in_w + g.p_w;
    } else {
      a_base[j] = 0;
      a_d[j] = -1; /* before every output position */
      a_h[j] = 0;
      a_w[j] = 0;
    }
  }

  acc_t acc[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      acc[i][j] = 0;

  /* k = tap * og + co; kt holds per slice entry the output channel's
   * offset in dy (-1 past the end), the tap's window offset, and the
   * filter offset of (tap, co). */
  for (idx_t k0 = 0; k0 < K; k0 += TK) {
    if (lid < TK) {
      idx_t k = k0 + lid;
      idx_t tap = k / g.og, co = k % g.og;
      kt[5 * lid] = k < K ? co * g.out_sc : -1;
      kt[5 * lid + 1] = tap / (g.k_w * g.k_h) * g.dl_d;
      kt[5 * lid + 2] = (tap / g.k_w) % g.k_h * g.dl_h;
      kt[5 * lid + 3] = tap % g.k_w * g.dl_w;
      kt[5 * lid + 4] = tap * g.cg * g.cout + co;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int j = 0; j < SLOTS(TILE); j++) {
      int kk, r;
      slice_slot(lid, j, nt, TILE, a_fast_k, &kk, &r);
      idx_t sd = a_d[j] - kt[5 * kk + 1], sh = a_h[j] - kt[5 * kk + 2],
            sw = a_w[j] - kt[5 * kk + 3];
      acc_t v = 0;
      bool ok = kt[5 * kk] >= 0 && sd >= 0 && sh >= 0 && sw >= 0;
      if (ok && !unit)
        ok = sd % g.s_d == 0 && sh % g.s_h == 0 && sw % g.s_w == 0;
      if (ok) {
        idx_t od = unit ? sd : sd / g.s_d, oh = unit ? sh : sh / g.s_h,
              ow = unit ? sw : sw / g.s_w;
        if (od < g.out_d && oh < g.out_h && ow < g.out_w)
          v = LOAD(dy, a_base[j] + od * g.out_sd + oh * g.out_sh +
                           ow * g.out_sw + kt[5 * kk]);
      }
      As[kk * (TILE + 1) + r] = v;
    }
#pragma unroll
    for (int j = 0; j < SLOTS(TILE); j++) {
      int kk, c;
      slice_slot(lid, j, nt, TILE, true, &kk, &c);
      idx_t ci = c0 + c;
      acc_t v = 0;
      if (kt[5 * kk] >= 0 && ci < g.cg)
        v = LOAD(f, kt[5 * kk + 4] + ci * g.cout);
      Bs[kk * (TILE + 1) + c] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    IGEMM_FMA(TILE)
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int i = 0; i < 4; i++) {
    idx_t m = m0 + rl + i * (TILE / 4);
    if (m >= M)
      continue;
    idx_t n = m / P, p = m % P;
    idx_t d = p / hw, h = (p % hw) / g.in_w, w = p % g.in_w;
    idx_t base = n * g.in_sn + d * g.in_sd + h * g.in_sh + w * g.in_sw;
    for (int j = 0; j < 4; j++) {
      idx_t ci = c0 + cl + j * (TILE / 4);
      if (ci < g.cg)
        STORE(dx, base + (grp * g.cg + ci) * g.in_sc, acc[i][j]);
    }
  }
}

/* The filter gradient of group grp over k in [k_begin, k_end): into
 * partial (acc_t, laid out as the filter [taps, cg, cout]). Each slice's
 * TK values of k are decoded once, by TK work-items, into local memory. */
static inline __attribute__((always_inline)) void
igemm_bpf_body(__global const T *x, __global const T *dy,
                                  __global acc_t *part, const geo_t g,
                                  int flags, idx_t k_begin, idx_t k_end,
                                  __local acc_t *As, __local acc_t *Bs,
                                  __local idx_t *kx, __local idx_t *ky,
                                  __local idx_t *kpos, idx_t m_tile,
                                  idx_t grp, const int TILE)
{
  const int nt = (TILE / 4) * (TILE / 4);
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int lid = ly * (TILE / 4) + lx;
  const idx_t hw = g.out_h * g.out_w, P = g.out_d * hw;
  const idx_t taps = g.k_d * g.k_h * g.k_w;
  const idx_t R = taps * g.cg;
  const idx_t m0 = m_tile * TILE;
  const idx_t c0 = (idx_t)get_group_id(0) * TILE;
  const bool a_fast_k = (flags & IG_A_FAST_K) != 0;
  const bool b_fast_k = (flags & IG_B_FAST_K) != 0;
  x += grp * g.cg * g.in_sc;
  dy += grp * g.og * g.out_sc;

  /* Each A slot's row: a (tap, input channel) pair. */
  idx_t a_off[SLOTS(16)], a_d[SLOTS(16)], a_h[SLOTS(16)], a_w[SLOTS(16)];
#pragma unroll
  for (int j = 0; j < SLOTS(TILE); j++) {
    int kk, r;
    slice_slot(lid, j, nt, TILE, a_fast_k, &kk, &r);
    idx_t row = m0 + r;
    idx_t tap = row / g.cg, ci = row % g.cg;
    idx_t kw = tap % g.k_w, kh = (tap / g.k_w) % g.k_h,
          kd = tap / (g.k_w * g.k_h);
    a_off[j] = ci * g.in_sc;
    a_d[j] = row < R ? kd * g.dl_d - g.p_d : -g.in_d - 1 - g.out_d * g.s_d;
    a_h[j] = kh * g.dl_h - g.p_h;
    a_w[j] = kw * g.dl_w - g.p_w;
  }

  acc_t acc[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      acc[i][j] = 0;

  for (idx_t k0 = k_begin; k0 < k_end; k0 += TK) {
    if (lid < TK) {
      /* kx: x's image offset; ky: dy's element offset; kpos: (od, oh,
       * ow) scaled by the strides, or -1 past the end. */
      idx_t k = k0 + lid;
      if (k < k_end) {
        idx_t n = k / P, p = k % P;
        idx_t od = p / hw, oh = (p % hw) / g.out_w, ow = p % g.out_w;
        kx[lid] = n * g.in_sn;
        ky[lid] = n * g.out_sn + od * g.out_sd + oh * g.out_sh + ow * g.out_sw;
        kpos[3 * lid] = od * g.s_d;
        kpos[3 * lid + 1] = oh * g.s_h;
        kpos[3 * lid + 2] = ow * g.s_w;
      } else {
        kx[lid] = -1;
        ky[lid] = 0;
        kpos[3 * lid] = kpos[3 * lid + 1] = kpos[3 * lid + 2] = 0;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int j = 0; j < SLOTS(TILE); j++) {
      int kk, r;
      slice_slot(lid, j, nt, TILE, a_fast_k, &kk, &r);
      idx_t d = a_d[j] + kpos[3 * kk], h = a_h[j] + kpos[3 * kk + 1],
            w = a_w[j] + kpos[3 * kk + 2];
      acc_t v = 0;
      if (kx[kk] >= 0 && d >= 0 && d < g.in_d && h >= 0 && h < g.in_h &&
          w >= 0 && w < g.in_w)
        v = LOAD(x, kx[kk] + d * g.in_sd + h * g.in_sh + w * g.in_sw +
                        a_off[j]);
      As[kk * (TILE + 1) + r] = v;
    }
#pragma unroll
    for (int j = 0; j < SLOTS(TILE); j++) {
      int kk, c;
      slice_slot(lid, j, nt, TILE, b_fast_k, &kk, &c);
      idx_t col = c0 + c;
      acc_t v = 0;
      if (kx[kk] >= 0 && col < g.og)
        v = LOAD(dy, ky[kk] + col * g.out_sc);
      Bs[kk * (TILE + 1) + c] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int rl = ly, cl = lx;
    IGEMM_FMA(TILE)
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int i = 0; i < 4; i++) {
    idx_t row = m0 + ly + i * (TILE / 4);
    if (row >= R)
      continue;
    for (int j = 0; j < 4; j++) {
      idx_t col = c0 + lx + j * (TILE / 4);
      if (col < g.og)
        part[row * g.cout + grp * g.og + col] = acc[i][j];
    }
  }
}

/* The kernels of one tile size: TILE x TILE outputs per work-group of
 * (TILE / 4)^2 work-items. The host picks the size per problem (a
 * 64-wide tile over 8 output channels would waste most of its work) and
 * falls back to smaller ones where the built kernel allows fewer
 * work-items. Work-group (x, y, z) computes column tile x, row tile
 * m_tile0 + y and z entry z0 + z (group, or split x group for the filter
 * gradient): the host launches blocks of at most ocl_max_groups_yz() in y
 * and z, NVIDIA's limit. TILE is a constant in each body (always inlined):
 * its loops unroll and the slot arrays stay in registers. */
#define IGEMM_KERNELS(TILE)                                                   \
  __kernel __attribute__((reqd_work_group_size(TILE / 4, TILE / 4, 1))) void  \
      igemm_fwd_##TILE(OCL_TENSOR_ARG(const T, in),                           \
                       OCL_TENSOR_ARG(const T, filter),                       \
                       OCL_TENSOR_ARG(T, out), OCL_TENSOR_ARG(const T, bias), \
                       geo_t g, int flags, int act, float alpha,              \
                       idx_t m_tile0, idx_t z0)                               \
  {                                                                           \
    __local acc_t As[TK * (TILE + 1)], Bs[TK * (TILE + 1)];                   \
    __local idx_t kt[4 * TK];                                                 \
    igemm_fwd_body(OCL_PTR(const T, in), OCL_PTR(const T, filter),            \
                   OCL_PTR(T, out), OCL_PTR(const T, bias), g, flags, act,    \
                   alpha, As, Bs, kt, m_tile0 + (idx_t)get_group_id(1),       \
                   z0 + (idx_t)get_group_id(2), TILE);                        \
  }                                                                           \
  __kernel __attribute__((reqd_work_group_size(TILE / 4, TILE / 4, 1))) void  \
      igemm_bpi_##TILE(OCL_TENSOR_ARG(const T, dout),                         \
                       OCL_TENSOR_ARG(const T, filter),                       \
                       OCL_TENSOR_ARG(T, dx), geo_t g, int flags,             \
                       idx_t m_tile0, idx_t z0)                               \
  {                                                                           \
    __local acc_t As[TK * (TILE + 1)], Bs[TK * (TILE + 1)];                   \
    __local idx_t kt[5 * TK];                                                 \
    igemm_bpi_body(OCL_PTR(const T, dout), OCL_PTR(const T, filter),          \
                   OCL_PTR(T, dx), g, flags, As, Bs, kt,                      \
                   m_tile0 + (idx_t)get_group_id(1),                          \
                   z0 + (idx_t)get_group_id(2), TILE);                        \
  }                                                                           \
  __kernel __attribute__((reqd_work_group_size(TILE / 4, TILE / 4, 1))) void  \
      igemm_bpf_##TILE(OCL_TENSOR_ARG(const T, in),                           \
                       OCL_TENSOR_ARG(const T, dout),                         \
                       OCL_TENSOR_ARG(acc_t, partial), geo_t g, int flags,    \
                       idx_t splits, idx_t k_chunk, idx_t m_tile0, idx_t z0)  \
  {                                                                           \
    __local acc_t As[TK * (TILE + 1)], Bs[TK * (TILE + 1)];                   \
    __local idx_t kx[TK], ky[TK], kpos[3 * TK];                               \
    idx_t z = z0 + (idx_t)get_group_id(2);                                    \
    idx_t s = z / g.groups;                                                   \
    idx_t K = g.batch * g.out_d * g.out_h * g.out_w;                          \
    idx_t k_begin = s * k_chunk, k_end = min(K, k_begin + k_chunk);           \
    igemm_bpf_body(OCL_PTR(const T, in), OCL_PTR(const T, dout),              \
                   OCL_PTR(acc_t, partial) +                                  \
                       s * g.k_d * g.k_h * g.k_w * g.cg * g.cout,             \
                   g, flags, k_begin, k_end, As, Bs, kx, ky, kpos,            \
                   m_tile0 + (idx_t)get_group_id(1), z % g.groups, TILE);     \
  }

IGEMM_KERNELS(64)
IGEMM_KERNELS(32)
IGEMM_KERNELS(16)
