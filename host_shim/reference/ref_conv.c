/* References of the convolution kernel family: Conv2D,
 * DepthwiseConv2dNative and their input and filter gradients, as direct
 * loops in float64 over every (image, output position, tap, channel).
 *
 * Tolerance (float32), as for MatMul: each output is a dot product of K
 * terms accumulated in float32, off by at most about K * eps * max|x| *
 * max|w|. K is kh * kw * Cin for the forward pass, kh * kw * Cout (times
 * the depth multiplier) for the input gradient and batch * out_rows *
 * out_cols for the filter gradient; the cases keep K <= 300 and draw values
 * in [-3, 3], so atol 1e-4 with rtol 1e-5 sits between the errors measured
 * (~1e-5) and the bound 1e-5 * K * 9 for every case with K >= 2. Half
 * widens both by REF_HALF_FACTOR (the device computes in float and rounds
 * the output once).
 *
 * The cases sweep kernel 1x1/3x3/5x5, strides 1/2, dilations 1/2 (Conv2D
 * ops; TensorFlow's depthwise kernels require 1), SAME/VALID/EXPLICIT, and
 * rotate NHWC/NCHW, batch 1/3 and channels 1/3/8 (depth multiplier 1/2)
 * through that sweep over odd spatial sizes; then empty outputs, an odd
 * 1031-element image, NaN, and attributes and shapes TensorFlow rejects. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

enum conv_mode { FORWARD, BACKPROP_INPUT, BACKPROP_FILTER };

struct geo {
  bool nchw, depthwise;
  int64_t n, h, w, cin, kh, kw, fdepth, cout, oh, ow;
  int64_t sh, sw, dh, dw, pt, pl;
};

static int64_t dim_of(bool nchw, const int64_t *d, char which)
{
  switch (which) {
  case 'N': return d[0];
  case 'C': return d[nchw ? 1 : 3];
  case 'H': return d[nchw ? 2 : 1];
  default: return d[nchw ? 3 : 2];
  }
}

static int64_t idx4(bool nchw, int64_t n, int64_t h, int64_t w, int64_t c,
                    int64_t H, int64_t W, int64_t C)
{
  return nchw ? ((n * C + c) * H + h) * W + w : ((n * H + h) * W + w) * C + c;
}

/* TensorFlow's windowed output size; false where it rejects. */
static bool window(int64_t in, int64_t k, int64_t d, int64_t s,
                   const char *padding, int64_t *out, int64_t *before,
                   int64_t *after)
{
  if (s <= 0 || d < 1)
    return false;
  int64_t eff = (k - 1) * d + 1;
  if (strcmp(padding, "VALID") == 0) {
    *out = (in - eff + s) / s;
    *before = 0;
  } else if (strcmp(padding, "EXPLICIT") == 0) {
    *out = (in + *before + *after - eff + s) / s;
  } else if (strcmp(padding, "SAME") == 0) {
    *out = (in + s - 1) / s;
    int64_t need = (*out - 1) * s + eff - in;
    *before = (need > 0 ? need : 0) / 2;
  } else {
    return false;
  }
  return *out >= 0;
}

/* The geometry from the attributes and the input and filter shapes; false
 * (with a message) for anything TensorFlow rejects. */
static bool geometry(const struct ref_case *c, bool depthwise,
                     const int64_t *in, int in_rank, const int64_t *f,
                     int f_rank, struct geo *g, char *error, int error_len)
{
  const struct tfocl_attr *st = ref_case_attr(c, "strides");
  const struct tfocl_attr *dl = ref_case_attr(c, "dilations");
  const struct tfocl_attr *ep = ref_case_attr(c, "explicit_paddings");
  const char *padding = ref_case_attr_string_or(c, "padding", "");
  const char *format = ref_case_attr_string_or(c, "data_format", "NHWC");
  memset(g, 0, sizeof(*g));
  g->nchw = strcmp(format, "NCHW") == 0;
  g->depthwise = depthwise;
  if ((!g->nchw && strcmp(format, "NHWC") != 0) || in_rank != 4 ||
      f_rank != 4 || st == NULL || st->value.ints.count != 4) {
    snprintf(error, (size_t)error_len, "bad format, rank or strides");
    return false;
  }
  const int64_t *s = st->value.ints.items;
  int64_t ones[4] = {1, 1, 1, 1};
  const int64_t *d = dl != NULL ? dl->value.ints.items : ones;
  if (dl != NULL && dl->value.ints.count != 4) {
    snprintf(error, (size_t)error_len, "bad dilations");
    return false;
  }
  int ci = g->nchw ? 1 : 3, hi = g->nchw ? 2 : 1, wi = g->nchw ? 3 : 2;
  if (s[0] != 1 || s[ci] != 1 || d[0] != 1 || d[ci] != 1 ||
      (depthwise && (s[hi] != s[wi] || d[hi] != 1 || d[wi] != 1))) {
    snprintf(error, (size_t)error_len, "unsupported strides or dilations");
    return false;
  }
  int64_t pads[8] = {0};
  bool explicit_padding = strcmp(padding, "EXPLICIT") == 0;
  int num_pads = ep != NULL ? ep->value.ints.count : 0;
  if (explicit_padding != (num_pads > 0) || (explicit_padding && num_pads != 8)) {
    snprintf(error, (size_t)error_len, "bad explicit_paddings");
    return false;
  }
  for (int i = 0; i < num_pads; i++) {
    pads[i] = ep->value.ints.items[i];
    if (pads[i] < 0 || ((i / 2 == 0 || i / 2 == ci) && pads[i] != 0)) {
      snprintf(error, (size_t)error_len, "bad explicit_paddings");
      return false;
    }
  }
  g->n = in[0];
  g->h = dim_of(g->nchw, in, 'H');
  g->w = dim_of(g->nchw, in, 'W');
  g->cin = dim_of(g->nchw, in, 'C');
  g->kh = f[0];
  g->kw = f[1];
  g->fdepth = f[2];
  if (f[2] != g->cin) {
    /* Grouped convolutions are not supported on the device either. */
    snprintf(error, (size_t)error_len, "depth mismatch");
    return false;
  }
  g->cout = depthwise ? g->cin * f[3] : f[3];
  g->sh = s[hi];
  g->sw = s[wi];
  g->dh = d[hi];
  g->dw = d[wi];
  int64_t pb = pads[2 * hi], pa = pads[2 * hi + 1];
  if (!window(g->h, g->kh, g->dh, g->sh, padding, &g->oh, &pb, &pa)) {
    snprintf(error, (size_t)error_len, "bad rows");
    return false;
  }
  g->pt = pb;
  pb = pads[2 * wi], pa = pads[2 * wi + 1];
  if (!window(g->w, g->kw, g->dw, g->sw, padding, &g->ow, &pb, &pa)) {
    snprintf(error, (size_t)error_len, "bad cols");
    return false;
  }
  g->pl = pb;
  return true;
}

static void out_dims(const struct geo *g, int64_t *d)
{
  d[0] = g->n;
  d[g->nchw ? 1 : 3] = g->cout;
  d[g->nchw ? 2 : 1] = g->oh;
  d[g->nchw ? 3 : 2] = g->ow;
}

/* The one loop of every mode: for each (image, output position, output
 * channel, tap, input channel) that reads a real input element. */
static void conv_loop(const struct geo *g, enum conv_mode mode, double *x,
                      double *f, double *y)
{
  int64_t mult = g->depthwise ? g->cout / (g->cin > 0 ? g->cin : 1) : 1;
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t oh = 0; oh < g->oh; oh++)
      for (int64_t ow = 0; ow < g->ow; ow++)
        for (int64_t co = 0; co < g->cout; co++) {
          int64_t yi = idx4(g->nchw, n, oh, ow, co, g->oh, g->ow, g->cout);
          for (int64_t kh = 0; kh < g->kh; kh++) {
            int64_t h = oh * g->sh - g->pt + kh * g->dh;
            if (h < 0 || h >= g->h)
              continue;
            for (int64_t kw = 0; kw < g->kw; kw++) {
              int64_t w = ow * g->sw - g->pl + kw * g->dw;
              if (w < 0 || w >= g->w)
                continue;
              int64_t c0 = g->depthwise ? co / mult : 0;
              int64_t c1 = g->depthwise ? c0 + 1 : g->cin;
              for (int64_t ci = c0; ci < c1; ci++) {
                int64_t xi = idx4(g->nchw, n, h, w, ci, g->h, g->w, g->cin);
                int64_t fi = g->depthwise
                                 ? (kh * g->kw + kw) * g->cout + co
                                 : ((kh * g->kw + kw) * g->cin + ci) * g->cout +
                                       co;
                if (mode == FORWARD)
                  y[yi] += x[xi] * f[fi];
                else if (mode == BACKPROP_INPUT)
                  x[xi] += y[yi] * f[fi];
                else
                  f[fi] += x[xi] * y[yi];
              }
            }
          }
        }
}

static bool is_depthwise(const struct ref_case *c)
{
  return strncmp(c->op, "Depthwise", 9) == 0;
}

static enum conv_mode mode_of(const struct ref_case *c)
{
  return strstr(c->op, "BackpropInput") ? BACKPROP_INPUT
         : strstr(c->op, "BackpropFilter") ? BACKPROP_FILTER
                                           : FORWARD;
}

/* The int32 shape argument as dims; false unless a valid 4-D shape. */
static bool shape_arg(const struct ref_tensor *t, int64_t *d)
{
  if (t->rank != 1 || t->elements != 4)
    return false;
  for (int i = 0; i < 4; i++) {
    d[i] = (int64_t)t->v[i];
    if (d[i] < 0)
      return false;
  }
  return true;
}

static int conv_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  enum conv_mode mode = mode_of(c);
  bool dw = is_depthwise(c);
  const struct ref_tensor *t0 = &c->inputs[0], *t1 = &c->inputs[1];
  const struct ref_tensor *t2 = &c->inputs[2];
  int64_t in[4], fd[4], od[4];
  const int64_t *ip = t0->dims, *fp = t1->dims;
  int in_rank = t0->rank, f_rank = t1->rank;
  TF_DataType dtype = mode == BACKPROP_INPUT ? t1->dtype : t0->dtype;

  if (mode == BACKPROP_INPUT) {
    if (t0->rank == 1 && t0->elements == 2 && !dw) {
      /* (rows, cols) completed from out_backprop and filter. */
      bool nchw = strcmp(ref_case_attr_string_or(c, "data_format", ""),
                         "NCHW") == 0;
      in[0] = t2->dims[0];
      in[nchw ? 1 : 3] = t1->dims[2];
      in[nchw ? 2 : 1] = (int64_t)t0->v[0];
      in[nchw ? 3 : 2] = (int64_t)t0->v[1];
    } else if (!shape_arg(t0, in)) {
      snprintf(error, (size_t)error_len, "bad input_sizes");
      return -1;
    }
    ip = in;
    in_rank = 4;
  } else if (mode == BACKPROP_FILTER) {
    if (!shape_arg(t1, fd)) {
      snprintf(error, (size_t)error_len, "bad filter_sizes");
      return -1;
    }
    fp = fd;
    f_rank = 4;
  }
  struct geo g;
  if (!geometry(c, dw, ip, in_rank, fp, f_rank, &g, error, error_len))
    return -1;
  out_dims(&g, od);
  if (mode != FORWARD) {
    if (t2->rank != 4 || memcmp(t2->dims, od, sizeof(od)) != 0) {
      snprintf(error, (size_t)error_len, "out_backprop has the wrong shape");
      return -1;
    }
  }
  const int64_t *rd = mode == FORWARD ? od : mode == BACKPROP_INPUT ? ip : fp;
  ref_tensor_alloc(&out[0], dtype, rd, 4);
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = 0;
  switch (mode) {
  case FORWARD:
    conv_loop(&g, mode, t0->v, t1->v, out[0].v);
    break;
  case BACKPROP_INPUT:
    conv_loop(&g, mode, out[0].v, t1->v, t2->v);
    break;
  case BACKPROP_FILTER:
    conv_loop(&g, mode, t0->v, out[0].v, t2->v);
    break;
  }
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = ref_round_to(dtype, out[0].v[i]);
  return 1;
}

/* ---- Cases -------------------------------------------------------------- */

struct spec {
  bool nchw;
  int64_t n, h, w, cin, kh, kw, cout; /* cout: the multiplier if depthwise */
  int64_t stride, dilation;
  const char *padding;
  int64_t pads[4]; /* EXPLICIT: top, bottom, left, right */
};

static void set_attrs(struct ref_case *c, const struct spec *s)
{
  int64_t st[4] = {1, 1, 1, 1}, dl[4] = {1, 1, 1, 1};
  int hi = s->nchw ? 2 : 1, wi = s->nchw ? 3 : 2;
  st[hi] = st[wi] = s->stride;
  dl[hi] = dl[wi] = s->dilation;
  ref_case_attr_ints(c, "strides", st, 4);
  if (s->dilation != 1)
    ref_case_attr_ints(c, "dilations", dl, 4);
  ref_case_attr_string(c, "padding", s->padding);
  if (s->nchw)
    ref_case_attr_string(c, "data_format", "NCHW");
  if (strcmp(s->padding, "EXPLICIT") == 0) {
    int64_t p[8] = {0};
    p[2 * hi] = s->pads[0];
    p[2 * hi + 1] = s->pads[1];
    p[2 * wi] = s->pads[2];
    p[2 * wi + 1] = s->pads[3];
    ref_case_attr_ints(c, "explicit_paddings", p, 8);
  }
}

static void format_dims(bool nchw, int64_t n, int64_t h, int64_t w, int64_t ch,
                        int64_t *d)
{
  d[0] = n;
  d[nchw ? 1 : 3] = ch;
  d[nchw ? 2 : 1] = h;
  d[nchw ? 3 : 2] = w;
}

/* The forward output shape of s (false if TensorFlow rejects it). */
static bool spec_out(const struct spec *s, bool dw, int64_t *od)
{
  int64_t oh, ow, b = s->pads[0], a = s->pads[1];
  if (!window(s->h, s->kh, s->dilation, s->stride, s->padding, &oh, &b, &a))
    return false;
  b = s->pads[2], a = s->pads[3];
  if (!window(s->w, s->kw, s->dilation, s->stride, s->padding, &ow, &b, &a))
    return false;
  format_dims(s->nchw, s->n, oh, ow, dw ? s->cin * s->cout : s->cout, od);
  return true;
}

/* One case of `op` for spec s; `bad_out` gives out_backprop a wrong row
 * count. Returns the case for tweaks. */
static struct ref_case *add(struct ref_cases *out, const char *op,
                            TF_DataType dtype, const struct spec *s,
                            TF_Code expect, const char *note)
{
  bool dw = strncmp(op, "Depthwise", 9) == 0;
  enum conv_mode mode = strstr(op, "BackpropInput") ? BACKPROP_INPUT
                        : strstr(op, "BackpropFilter") ? BACKPROP_FILTER
                                                       : FORWARD;
  struct ref_case *c = ref_case_add(
      out, op, "%s %s n%lld %lldx%lld c%lld k%lldx%lld o%lld s%lld d%lld %s %s",
      op, s->nchw ? "NCHW" : "NHWC", (long long)s->n, (long long)s->h,
      (long long)s->w, (long long)s->cin, (long long)s->kh, (long long)s->kw,
      (long long)s->cout, (long long)s->stride, (long long)s->dilation,
      s->padding, note);
  int64_t in[4], f[4] = {s->kh, s->kw, s->cin, s->cout}, od[4];
  format_dims(s->nchw, s->n, s->h, s->w, s->cin, in);
  if (!spec_out(s, dw, od)) /* rejected: any out_backprop will do */
    format_dims(s->nchw, s->n, 1, 1, dw ? s->cin * s->cout : s->cout, od);
  double in_v[4], f_v[4];
  for (int i = 0; i < 4; i++) {
    in_v[i] = (double)in[i];
    f_v[i] = (double)f[i];
  }
  int64_t four = 4;
  switch (mode) {
  case FORWARD:
    ref_case_input(c, dtype, in, 4, REF_ANY);
    c->label[0] ^= 1;
    ref_case_input(c, dtype, f, 4, REF_ANY);
    break;
  case BACKPROP_INPUT:
    ref_case_input_values(c, TF_INT32, &four, 1, in_v);
    ref_case_input(c, dtype, f, 4, REF_ANY);
    c->label[0] ^= 1;
    ref_case_input(c, dtype, od, 4, REF_ANY);
    break;
  case BACKPROP_FILTER:
    ref_case_input(c, dtype, in, 4, REF_ANY);
    ref_case_input_values(c, TF_INT32, &four, 1, f_v);
    c->label[0] ^= 1;
    ref_case_input(c, dtype, od, 4, REF_ANY);
    break;
  }
  c->label[0] ^= 1;
  set_attrs(c, s);
  c->expect_code = expect;
  return c;
}

static void conv_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  const char *o = op->op;
  bool dw = strncmp(o, "Depthwise", 9) == 0;
  enum conv_mode mode = strstr(o, "BackpropInput") ? BACKPROP_INPUT
                        : strstr(o, "BackpropFilter") ? BACKPROP_FILTER
                                                      : FORWARD;
  static const int64_t ksizes[] = {1, 3, 5};
  static const char *const paddings[] = {"SAME", "VALID", "EXPLICIT"};
  static const int64_t channels[] = {1, 3, 8};
  int i = 0;

  /* The sweep: 11x9 images take a 5x5 window dilated by 2 under VALID. */
  for (int k = 0; k < 3; k++)
    for (int64_t stride = 1; stride <= 2; stride++)
      for (int64_t dil = 1; dil <= (dw ? 1 : 2); dil++)
        for (int p = 0; p < 3; p++, i++) {
          struct spec s = {
              .nchw = i % 2 == 1,
              .n = (i / 2) % 2 ? 3 : 1,
              .h = 11,
              .w = 9,
              .cin = channels[i % 3],
              .kh = ksizes[k],
              .kw = ksizes[k],
              .cout = dw ? 1 + (i / 3) % 2 : channels[(i / 3 + 1) % 3],
              .stride = stride,
              .dilation = dil,
              .padding = paddings[p],
              .pads = {(i % 3), 1, 2, (i / 2) % 3},
          };
          add(out, o, dtype, &s, TF_OK, "");
        }

  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  const TF_Code unimpl = TF_UNIMPLEMENTED;
  struct spec base = {false, 2, 7, 5, 3, 3, 2, 2, 1, 1, "SAME", {0}};
  struct spec s;

  /* Non-square windows and strides that do not divide the image. */
  s = base, s.kh = 1, s.kw = 3, s.stride = 2, s.padding = "VALID";
  add(out, o, dtype, &s, ok, "1x3");
  s = base, s.nchw = true, s.kh = 3, s.kw = 1, s.h = 8, s.stride = 3;
  add(out, o, dtype, &s, ok, "3x1");
  /* One odd image of 1031 rows. */
  s = base, s.n = 1, s.h = 1031, s.w = 1, s.cin = 1, s.kw = 1, s.cout = 1;
  add(out, o, dtype, &s, ok, "1031");
  /* A bigger product (the packed GEMM, K = 72). */
  s = base, s.n = 3, s.h = 13, s.w = 11, s.cin = 8, s.cout = dw ? 2 : 16;
  add(out, o, dtype, &s, ok, "packed");
  /* Empty batch; a window bigger than the image leaving no output rows. */
  s = base, s.n = 0;
  add(out, o, dtype, &s, ok, "empty batch");
  s = base, s.h = 4, s.kh = 5, s.stride = 2, s.padding = "VALID";
  add(out, o, dtype, &s, ok, "no output rows");
  /* NaN propagates to the windows that read it. */
  if (mode == FORWARD && (dtype == TF_FLOAT || dtype == TF_HALF)) {
    s = base;
    struct ref_case *c = add(out, o, dtype, &s, ok, "NaN");
    c->inputs[0].v[17] = NAN;
  }
  /* Conv2DBackpropInput's input_sizes may be (rows, cols) only. */
  if (mode == BACKPROP_INPUT && !dw) {
    s = base;
    struct ref_case *c = add(out, o, dtype, &s, ok, "2 input_sizes");
    c->inputs[0].dims[0] = c->inputs[0].elements = 2;
    c->inputs[0].v[0] = (double)s.h;
    c->inputs[0].v[1] = (double)s.w;
  }

  /* Rejected attributes. */
  s = base, s.padding = "FULL";
  add(out, o, dtype, &s, bad, "bad padding");
  s = base, s.padding = "VALID", s.h = 1;
  add(out, o, dtype, &s, bad, "window > image");
  {
    struct ref_case *c = add(out, o, dtype, &base, bad, "strides of 3");
    c->attrs[0].value.ints.count = 3;
  }
  {
    struct ref_case *c = add(out, o, dtype, &base, dw || mode != FORWARD
                                                       ? bad
                                                       : unimpl,
                             "batch stride");
    ((int64_t *)c->attrs[0].value.ints.items)[0] = 2;
  }
  {
    s = base, s.padding = "EXPLICIT";
    struct ref_case *c = add(out, o, dtype, &s, bad, "pads of 6");
    c->attrs[c->num_attrs - 1].value.ints.count = 6;
  }
  {
    s = base, s.padding = "EXPLICIT";
    struct ref_case *c = add(out, o, dtype, &s, bad, "batch padding");
    ((int64_t *)c->attrs[c->num_attrs - 1].value.ints.items)[0] = 1;
  }
  {
    s = base, s.padding = "VALID";
    struct ref_case *c = add(out, o, dtype, &s, bad, "pads without EXPLICIT");
    int64_t p[8] = {0};
    ref_case_attr_ints(c, "explicit_paddings", p, 8);
  }
  {
    struct ref_case *c = add(out, o, dtype, &base, bad, "bad data_format");
    ref_case_attr_string(c, "data_format", "NWHC");
  }
  if (dw) {
    s = base, s.dilation = 2;
    add(out, o, dtype, &s, unimpl, "dilated depthwise");
    struct ref_case *c = add(out, o, dtype, &base, bad, "unequal strides");
    ((int64_t *)c->attrs[0].value.ints.items)[1] = 2;
  } else {
    s = base, s.dilation = 0;
    add(out, o, dtype, &s, bad, "dilation 0");
  }

  /* Rejected shapes. */
  struct ref_case *c;
  switch (mode) {
  case FORWARD:
    c = add(out, o, dtype, &base, bad, "rank 3 input");
    c->inputs[0].rank = 3, c->inputs[0].dims[2] *= c->inputs[0].dims[3];
    c = add(out, o, dtype, &base, bad, "depth mismatch");
    c->inputs[1].dims[2] = 2;
    c->inputs[1].elements = c->inputs[1].dims[0] * c->inputs[1].dims[1] * 2 *
                            c->inputs[1].dims[3];
    if (!dw) {
      /* Grouped: TensorFlow's GPU kernels take it; the device does not. */
      s = base, s.cin = 4;
      c = add(out, o, dtype, &s, unimpl, "grouped");
      c->inputs[1].dims[2] = 2;
      c->inputs[1].elements /= 2;
    }
    break;
  case BACKPROP_INPUT:
  case BACKPROP_FILTER: {
    int sizes = mode == BACKPROP_INPUT ? 0 : 1;
    c = add(out, o, dtype, &base, bad, "wrong out_backprop rows");
    c->inputs[2].dims[1] -= 1;
    c->inputs[2].elements = c->inputs[2].dims[0] * c->inputs[2].dims[1] *
                            c->inputs[2].dims[2] * c->inputs[2].dims[3];
    c = add(out, o, dtype, &base, bad, "wrong out_backprop depth");
    c->inputs[2].dims[3] -= 1;
    c->inputs[2].elements = c->inputs[2].dims[0] * c->inputs[2].dims[1] *
                            c->inputs[2].dims[2] * c->inputs[2].dims[3];
    c = add(out, o, dtype, &base, bad, "3 sizes");
    c->inputs[sizes].dims[0] = c->inputs[sizes].elements = 3;
    c = add(out, o, dtype, &base, bad, "negative size");
    c->inputs[sizes].v[1] = -1;
    break;
  }
  }
}

#define TOL 1e-5, 1e-4

const struct ref_op ref_ops_conv[] = {
    {"Conv2D", TOL, REF_ANY, conv_cases, conv_compute},
    {"Conv2DBackpropInput", TOL, REF_ANY, conv_cases, conv_compute},
    {"Conv2DBackpropFilter", TOL, REF_ANY, conv_cases, conv_compute},
    {"DepthwiseConv2dNative", TOL, REF_ANY, conv_cases, conv_compute},
    {"DepthwiseConv2dNativeBackpropInput", TOL, REF_ANY, conv_cases,
     conv_compute},
    {"DepthwiseConv2dNativeBackpropFilter", TOL, REF_ANY, conv_cases,
     conv_compute},
    {.op = NULL},
};
