/* References of the convolution kernel family: Conv2D, Conv3D,
 * DepthwiseConv2dNative and their input and filter gradients (grouped
 * convolutions included), and _FusedConv2D, as direct loops in float64 over
 * every (image, output position, output channel, tap, input channel).
 *
 * Tolerance (float32), as for MatMul: each output is a dot product of K
 * terms accumulated in float32, off by at most about K * eps * max|x| *
 * max|w|. K is taps * Cin/groups for the forward pass, taps * Cout/groups
 * (times the depth multiplier) for the input gradient and batch * output
 * pixels for the filter gradient; the cases keep K <= 300 and draw values
 * in [-3, 3], so atol 1e-4 with rtol 1e-5 sits between the errors measured
 * (~1e-5) and the bound 1e-5 * K * 9 for every case with K >= 2. Half
 * and bfloat16 widen both as reference.c does for them (the device
 * computes in float and rounds the output once: one ulp of the result
 * apart at most). _FusedConv2D rounds once after the bias and activation,
 * as the device does.
 *
 * The cases sweep kernel 1x1/3x3/5x5, strides 1/2, dilations 1/2 (Conv2D
 * ops; TensorFlow's depthwise kernels require 1), SAME/VALID/EXPLICIT, and
 * rotate NHWC/NCHW, batch 1/2 and channels 1/3/8 (depth multiplier 1/2)
 * through that sweep over odd spatial sizes; grouped convolutions; 3-D
 * ones in both layouts with odd strides and dilations per dim; then empty
 * outputs, an odd 1031-element image, NaN, and attributes and shapes
 * TensorFlow rejects. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

enum conv_mode { FORWARD, BACKPROP_INPUT, BACKPROP_FILTER };

/* One convolution; spatial dims in (d, h, w) order, a 2-D one with d = 1. */
struct geo {
  bool nchw, depthwise;
  int sp; /* 2 or 3 */
  int64_t n, cin, fdepth, cout, groups;
  int64_t in[3], k[3], out[3], s[3], dl[3], pad[3];
};

/* Index in a (2 + sp)-D shape of the layout: 'N', 'C' or spatial 0..sp-1
 * (counted over (d, h, w) for 3-D, (h, w) for 2-D). */
static int dim_index(bool nchw, int sp, int which)
{
  if (which == 'N')
    return 0;
  if (which == 'C')
    return nchw ? 1 : sp + 1;
  return nchw ? 2 + which : 1 + which;
}

/* The element index of (n, d, h, w, c) in a tensor of spatial dims sp3
 * (d, h, w) and C channels. */
static int64_t idx5(bool nchw, int64_t n, const int64_t *p, int64_t c,
                    const int64_t *sp3, int64_t C)
{
  if (nchw)
    return (((n * C + c) * sp3[0] + p[0]) * sp3[1] + p[1]) * sp3[2] + p[2];
  return (((n * sp3[0] + p[0]) * sp3[1] + p[1]) * sp3[2] + p[2]) * C + c;
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

static bool is_depthwise(const char *op)
{
  return strncmp(op, "Depthwise", 9) == 0;
}

static int spatial_of(const char *op)
{
  return strncmp(op, "Conv3D", 6) == 0 ? 3 : 2;
}

static enum conv_mode mode_of(const char *op)
{
  return strstr(op, "BackpropInput") ? BACKPROP_INPUT
         : strstr(op, "BackpropFilter") ? BACKPROP_FILTER
                                        : FORWARD;
}

/* The geometry from the attributes and the input and filter shapes; false
 * (with a message) for anything TensorFlow rejects. */
static bool geometry(const struct ref_case *c, const int64_t *in, int in_rank,
                     const int64_t *f, int f_rank, struct geo *g, char *error,
                     int error_len)
{
  const struct tfocl_attr *st = ref_case_attr(c, "strides");
  const struct tfocl_attr *dl = ref_case_attr(c, "dilations");
  const struct tfocl_attr *ep = ref_case_attr(c, "explicit_paddings");
  const char *padding = ref_case_attr_string_or(c, "padding", "");
  int sp = spatial_of(c->op);
  int rank = sp + 2;
  const char *format = ref_case_attr_string_or(c, "data_format",
                                               sp == 3 ? "NDHWC" : "NHWC");
  memset(g, 0, sizeof(*g));
  g->sp = sp;
  g->nchw = strcmp(format, sp == 3 ? "NCDHW" : "NCHW") == 0;
  g->depthwise = is_depthwise(c->op);
  if ((!g->nchw && strcmp(format, sp == 3 ? "NDHWC" : "NHWC") != 0) ||
      in_rank != rank || f_rank != rank || st == NULL ||
      st->value.ints.count != rank) {
    snprintf(error, (size_t)error_len, "bad format, rank or strides");
    return false;
  }
  if (sp == 3 && strcmp(padding, "EXPLICIT") == 0) {
    snprintf(error, (size_t)error_len, "Conv3D has no EXPLICIT padding");
    return false;
  }
  const int64_t *s = st->value.ints.items;
  int64_t ones[5] = {1, 1, 1, 1, 1};
  const int64_t *d = dl != NULL ? dl->value.ints.items : ones;
  if (dl != NULL && dl->value.ints.count != rank) {
    snprintf(error, (size_t)error_len, "bad dilations");
    return false;
  }
  int ni = dim_index(g->nchw, sp, 'N'), ci = dim_index(g->nchw, sp, 'C');
  if (s[ni] != 1 || s[ci] != 1 || d[ni] != 1 || d[ci] != 1) {
    snprintf(error, (size_t)error_len, "unsupported strides or dilations");
    return false;
  }
  int64_t pads[10] = {0};
  bool explicit_padding = strcmp(padding, "EXPLICIT") == 0;
  int num_pads = ep != NULL ? ep->value.ints.count : 0;
  if (explicit_padding != (num_pads > 0) ||
      (explicit_padding && num_pads != 2 * rank)) {
    snprintf(error, (size_t)error_len, "bad explicit_paddings");
    return false;
  }
  for (int i = 0; i < num_pads; i++) {
    pads[i] = ep->value.ints.items[i];
    if (pads[i] < 0 || ((i / 2 == ni || i / 2 == ci) && pads[i] != 0)) {
      snprintf(error, (size_t)error_len, "bad explicit_paddings");
      return false;
    }
  }
  g->n = in[ni];
  g->cin = in[ci];
  g->fdepth = f[sp];
  if (g->depthwise ? f[sp] != g->cin
                   : g->fdepth <= 0 || g->cin % g->fdepth != 0) {
    snprintf(error, (size_t)error_len, "depth mismatch");
    return false;
  }
  g->groups = g->depthwise ? 1 : g->cin / g->fdepth;
  g->cout = g->depthwise ? g->cin * f[sp + 1] : f[sp + 1];
  if (g->cout % g->groups != 0) {
    snprintf(error, (size_t)error_len, "output depth not divisible by groups");
    return false;
  }
  for (int i = 0; i < 3; i++) {
    g->in[i] = g->k[i] = g->out[i] = g->s[i] = g->dl[i] = 1;
    g->pad[i] = 0;
  }
  for (int i = 0; i < sp; i++) {
    int j = 3 - sp + i; /* (h, w) of a 2-D one are spatial 1 and 2 */
    int di = dim_index(g->nchw, sp, i);
    g->in[j] = in[di];
    g->k[j] = f[i];
    g->s[j] = s[di];
    g->dl[j] = d[di];
    if (g->depthwise && (s[dim_index(g->nchw, sp, 0)] !=
                             s[dim_index(g->nchw, sp, 1)] ||
                         d[di] != 1)) {
      snprintf(error, (size_t)error_len, "unsupported depthwise strides");
      return false;
    }
    int64_t pb = pads[2 * di], pa = pads[2 * di + 1];
    if (!window(g->in[j], g->k[j], g->dl[j], g->s[j], padding, &g->out[j],
                &pb, &pa)) {
      snprintf(error, (size_t)error_len, "bad spatial dim %d", i);
      return false;
    }
    g->pad[j] = pb;
  }
  return true;
}

static void format_dims(bool nchw, int sp, int64_t n, const int64_t *p3,
                        int64_t ch, int64_t *d)
{
  d[0] = n;
  d[dim_index(nchw, sp, 'C')] = ch;
  for (int i = 0; i < sp; i++)
    d[dim_index(nchw, sp, i)] = p3[3 - sp + i];
}

/* The one loop of every mode: for each (image, output position, output
 * channel, tap, input channel of its group) that reads a real input
 * element. Filters are [taps, fdepth, cout] (depthwise: [taps, cin *
 * mult]). */
static void conv_loop(const struct geo *g, enum conv_mode mode, double *x,
                      double *f, double *y)
{
  int64_t mult = g->depthwise ? g->cout / (g->cin > 0 ? g->cin : 1) : 1;
  int64_t og = g->cout / g->groups;
  int64_t o[3], p[3], t[3];
  for (int64_t n = 0; n < g->n; n++)
    for (o[0] = 0; o[0] < g->out[0]; o[0]++)
      for (o[1] = 0; o[1] < g->out[1]; o[1]++)
        for (o[2] = 0; o[2] < g->out[2]; o[2]++)
          for (int64_t co = 0; co < g->cout; co++) {
            int64_t yi = idx5(g->nchw, n, o, co, g->out, g->cout);
            for (t[0] = 0; t[0] < g->k[0]; t[0]++)
              for (t[1] = 0; t[1] < g->k[1]; t[1]++)
                for (t[2] = 0; t[2] < g->k[2]; t[2]++) {
                  bool inside = true;
                  for (int i = 0; i < 3; i++) {
                    p[i] = o[i] * g->s[i] - g->pad[i] + t[i] * g->dl[i];
                    inside = inside && p[i] >= 0 && p[i] < g->in[i];
                  }
                  if (!inside)
                    continue;
                  int64_t tap = (t[0] * g->k[1] + t[1]) * g->k[2] + t[2];
                  int64_t c0 = g->depthwise ? co / mult : co / og * g->fdepth;
                  int64_t c1 = g->depthwise ? c0 + 1 : c0 + g->fdepth;
                  for (int64_t ci = c0; ci < c1; ci++) {
                    int64_t xi = idx5(g->nchw, n, p, ci, g->in, g->cin);
                    int64_t fi =
                        g->depthwise
                            ? tap * g->cout + co
                            : (tap * g->fdepth + (ci - c0)) * g->cout + co;
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

/* The shape argument (input_sizes, filter_sizes) as dims; false unless a
 * valid shape of `rank` dims. */
static bool shape_arg(const struct ref_tensor *t, int rank, int64_t *d)
{
  if (t->rank != 1 || t->elements != rank)
    return false;
  for (int i = 0; i < rank; i++) {
    d[i] = (int64_t)t->v[i];
    if (d[i] < 0)
      return false;
  }
  return true;
}

static double activate(const char *act, double x, double alpha)
{
  if (act == NULL)
    return x;
  if (strcmp(act, "Relu") == 0)
    return x < 0 ? 0 : x; /* std::max(x, 0): NaN stays NaN */
  if (strcmp(act, "Relu6") == 0)
    return x < 0 ? 0 : x > 6 ? 6 : x;
  if (strcmp(act, "Elu") == 0)
    return x < 0 ? expm1(x) : x;
  if (strcmp(act, "LeakyRelu") == 0)
    return x < 0 ? x * alpha : x;
  if (strcmp(act, "Tanh") == 0)
    return tanh(x);
  if (strcmp(act, "Sigmoid") == 0)
    return 1 / (1 + exp(-x));
  return NAN;
}

/* _FusedConv2D's fused_ops: BiasAdd, optionally one activation; false for
 * anything else. */
static bool fusion(const struct ref_case *c, const char **act)
{
  static const char *const acts[] = {"Relu", "Relu6",     "Elu",
                                     "LeakyRelu", "Tanh", "Sigmoid"};
  const struct tfocl_attr *ops = ref_case_attr(c, "fused_ops");
  *act = NULL;
  if (ops == NULL || ops->value.strings.count < 1 ||
      ops->value.strings.count > 2 ||
      strcmp(ops->value.strings.items[0], "BiasAdd") != 0)
    return false;
  if (ops->value.strings.count == 1)
    return true;
  for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
    if (strcmp(ops->value.strings.items[1], acts[i]) == 0)
      *act = acts[i];
  return *act != NULL;
}

static int conv_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  enum conv_mode mode = mode_of(c->op);
  bool fused = strcmp(c->op, "_FusedConv2D") == 0;
  int sp = spatial_of(c->op), rank = sp + 2;
  const struct ref_tensor *t0 = &c->inputs[0], *t1 = &c->inputs[1];
  const struct ref_tensor *t2 = &c->inputs[2];
  int64_t in[5], fd[5], od[5];
  const int64_t *ip = t0->dims, *fp = t1->dims;
  int in_rank = t0->rank, f_rank = t1->rank;
  TF_DataType dtype = mode == BACKPROP_INPUT ? t1->dtype : t0->dtype;
  const char *act = NULL;

  if (fused) {
    if (!fusion(c, &act) || c->num_inputs != 3 ||
        ref_case_attr_int_or(c, "num_args", 0) != 1) {
      snprintf(error, (size_t)error_len, "unsupported fusion");
      return -1;
    }
  }
  if (mode == BACKPROP_INPUT) {
    bool nchw = strcmp(ref_case_attr_string_or(c, "data_format", ""),
                       "NCHW") == 0;
    if (sp == 2 && !is_depthwise(c->op) && t0->rank == 1 &&
        t0->elements == 2) {
      /* (rows, cols) completed from out_backprop and filter. */
      in[0] = t2->dims[0];
      in[nchw ? 1 : 3] = t1->dims[2];
      in[nchw ? 2 : 1] = (int64_t)t0->v[0];
      in[nchw ? 3 : 2] = (int64_t)t0->v[1];
    } else if (!shape_arg(t0, rank, in)) {
      snprintf(error, (size_t)error_len, "bad input_sizes");
      return -1;
    }
    ip = in;
    in_rank = rank;
  } else if (mode == BACKPROP_FILTER) {
    if (!shape_arg(t1, rank, fd)) {
      snprintf(error, (size_t)error_len, "bad filter_sizes");
      return -1;
    }
    fp = fd;
    f_rank = rank;
  }
  struct geo g;
  if (!geometry(c, ip, in_rank, fp, f_rank, &g, error, error_len))
    return -1;
  format_dims(g.nchw, sp, g.n, g.out, g.cout, od);
  if (mode != FORWARD) {
    if (t2->rank != rank || memcmp(t2->dims, od, sizeof(int64_t) * rank) != 0) {
      snprintf(error, (size_t)error_len, "out_backprop has the wrong shape");
      return -1;
    }
  }
  if (fused && (t2->rank != 1 || t2->dims[0] != g.cout)) {
    snprintf(error, (size_t)error_len, "bad bias");
    return -1;
  }
  const int64_t *rd = mode == FORWARD ? od : mode == BACKPROP_INPUT ? ip : fp;
  ref_tensor_alloc(&out[0], dtype, rd, rank);
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
  if (fused) {
    double alpha = ref_case_attr_float_or(c, "leakyrelu_alpha", 0.2);
    int64_t inner = g.nchw ? g.out[0] * g.out[1] * g.out[2] : 1;
    for (int64_t i = 0; i < out[0].elements; i++)
      out[0].v[i] =
          activate(act, out[0].v[i] + t2->v[(i / inner) % g.cout], alpha);
  }
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = ref_round_to(dtype, out[0].v[i]);
  return 1;
}

/* ---- Cases -------------------------------------------------------------- */

/* A case's geometry: spatial extents in (d, h, w) order (d ignored in
 * 2-D); `cout` is the multiplier if depthwise; `cg` the filter depth when
 * grouped (0: cin). */
struct spec {
  bool nchw;
  int64_t n, d, h, w, cin, kd, kh, kw, cout;
  int64_t stride, dilation;
  const char *padding;
  int64_t pads[4]; /* EXPLICIT: top, bottom, left, right */
  int64_t cg;
  int64_t sd, dd; /* 3-D: the plane stride and dilation (0: as the others) */
};

static void set_attrs(struct ref_case *c, const struct spec *s, int sp)
{
  int rank = sp + 2;
  int64_t st[5] = {1, 1, 1, 1, 1}, dl[5] = {1, 1, 1, 1, 1};
  for (int i = 0; i < sp; i++) {
    int di = dim_index(s->nchw, sp, i);
    bool plane = sp == 3 && i == 0;
    st[di] = plane && s->sd ? s->sd : s->stride;
    dl[di] = plane && s->dd ? s->dd : s->dilation;
  }
  ref_case_attr_ints(c, "strides", st, rank);
  bool dilated = false;
  for (int i = 0; i < rank; i++)
    dilated = dilated || dl[i] != 1;
  if (dilated || sp == 3)
    ref_case_attr_ints(c, "dilations", dl, rank);
  ref_case_attr_string(c, "padding", s->padding);
  if (s->nchw)
    ref_case_attr_string(c, "data_format", sp == 3 ? "NCDHW" : "NCHW");
  if (strcmp(s->padding, "EXPLICIT") == 0 && sp == 2) {
    int hi = s->nchw ? 2 : 1, wi = s->nchw ? 3 : 2;
    int64_t p[8] = {0};
    p[2 * hi] = s->pads[0];
    p[2 * hi + 1] = s->pads[1];
    p[2 * wi] = s->pads[2];
    p[2 * wi + 1] = s->pads[3];
    ref_case_attr_ints(c, "explicit_paddings", p, 8);
  }
}

/* The forward output shape of s (false if TensorFlow rejects it). */
static bool spec_out(const struct spec *s, int sp, bool dw, int64_t *od)
{
  int64_t sp3[3] = {1, 1, 1};
  const int64_t in3[3] = {s->d, s->h, s->w}, k3[3] = {s->kd, s->kh, s->kw};
  for (int i = 3 - sp; i < 3; i++) {
    int64_t b = i == 1 ? s->pads[0] : s->pads[2];
    int64_t a = i == 1 ? s->pads[1] : s->pads[3];
    bool plane = sp == 3 && i == 0;
    int64_t stride = plane && s->sd ? s->sd : s->stride;
    int64_t dil = plane && s->dd ? s->dd : s->dilation;
    if (!window(in3[i], k3[i], dil, stride, s->padding, &sp3[i], &b, &a))
      return false;
  }
  format_dims(s->nchw, sp, s->n, sp3, dw ? s->cin * s->cout : s->cout, od);
  return true;
}

static const char *const fused_bias[] = {"BiasAdd"};

/* A one-element type list that outlives the case. */
static const TF_DataType *static_type(TF_DataType dtype)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_DOUBLE,
                                      TF_BFLOAT16};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    if (types[i] == dtype)
      return &types[i];
  return &types[0];
}

/* One case of `op` for spec s. Returns the case for tweaks. */
static struct ref_case *add(struct ref_cases *out, const char *op,
                            TF_DataType dtype, const struct spec *s,
                            TF_Code expect, const char *note)
{
  bool dw = is_depthwise(op);
  bool fused = strcmp(op, "_FusedConv2D") == 0;
  int sp = spatial_of(op), rank = sp + 2;
  enum conv_mode mode = mode_of(op);
  int64_t cg = s->cg > 0 ? s->cg : s->cin;
  struct ref_case *c = ref_case_add(
      out, op,
      "%s %s n%lld %lldx%lldx%lld c%lld/%lld k%lldx%lldx%lld o%lld s%lld d%lld "
      "%s %s",
      op, s->nchw ? "NCHW" : "NHWC", (long long)s->n, (long long)s->d,
      (long long)s->h, (long long)s->w, (long long)s->cin, (long long)cg,
      (long long)s->kd, (long long)s->kh, (long long)s->kw,
      (long long)s->cout, (long long)s->stride, (long long)s->dilation,
      s->padding, note);
  int64_t in[5], f[5], od[5];
  const int64_t in3[3] = {s->d, s->h, s->w}, k3[3] = {s->kd, s->kh, s->kw};
  format_dims(s->nchw, sp, s->n, in3, s->cin, in);
  for (int i = 0; i < sp; i++)
    f[i] = k3[3 - sp + i];
  f[sp] = cg;
  f[sp + 1] = s->cout;
  if (!spec_out(s, sp, dw, od)) { /* rejected: any out_backprop will do */
    const int64_t ones[3] = {1, 1, 1};
    format_dims(s->nchw, sp, s->n, ones, dw ? s->cin * s->cout : s->cout, od);
  }
  double in_v[5], f_v[5];
  for (int i = 0; i < rank; i++) {
    in_v[i] = (double)in[i];
    f_v[i] = (double)f[i];
  }
  int64_t r = rank;
  switch (mode) {
  case FORWARD:
    ref_case_input(c, dtype, in, rank, REF_ANY);
    c->label[0] ^= 1;
    ref_case_input(c, dtype, f, rank, REF_ANY);
    if (fused) {
      c->label[0] ^= 2;
      ref_case_input(c, dtype, &s->cout, 1, REF_ANY);
      c->label[0] ^= 2;
      ref_case_attr_int(c, "num_args", 1);
      ref_case_attr_int(c, "num_host_args", 0);
      c->attrs[c->num_attrs++] = (struct tfocl_attr){
          .name = "TArgs",
          .kind = TFOCL_ATTR_TYPE_LIST,
          .value.types = {static_type(dtype), 1},
      };
      c->attrs[c->num_attrs++] = (struct tfocl_attr){
          .name = "fused_ops",
          .kind = TFOCL_ATTR_STRING_LIST,
          .value.strings = {fused_bias, 1},
      };
    }
    break;
  case BACKPROP_INPUT:
    ref_case_input_values(c, TF_INT32, &r, 1, in_v);
    ref_case_input(c, dtype, f, rank, REF_ANY);
    c->label[0] ^= 1;
    ref_case_input(c, dtype, od, rank, REF_ANY);
    break;
  case BACKPROP_FILTER:
    ref_case_input(c, dtype, in, rank, REF_ANY);
    ref_case_input_values(c, TF_INT32, &r, 1, f_v);
    c->label[0] ^= 1;
    ref_case_input(c, dtype, od, rank, REF_ANY);
    break;
  }
  c->label[0] ^= 1;
  set_attrs(c, s, sp);
  c->expect_code = expect;
  return c;
}

/* The index of attribute `name` in c (it must be there). */
static int attr_at(const struct ref_case *c, const char *name)
{
  for (int i = 0; i < c->num_attrs; i++)
    if (strcmp(c->attrs[i].name, name) == 0)
      return i;
  return 0;
}

/* t->elements from its (edited) dims; values added by a larger shape are
 * zeros (the buffer grows with it). */
static void set_elements(struct ref_tensor *t)
{
  int64_t old = t->elements, lanes = ref_lanes(t->dtype);
  t->elements = 1;
  for (int i = 0; i < t->rank; i++)
    t->elements *= t->dims[i];
  if (t->elements > old) {
    double *v = realloc(t->v, sizeof(double) * (size_t)(t->elements * lanes));
    if (v == NULL) {
      t->elements = old; /* the case then fails on its shape, not memory */
      return;
    }
    memset(v + old * lanes, 0,
           sizeof(double) * (size_t)((t->elements - old) * lanes));
    t->v = v;
  }
}

/* Shapes every op family rejects, per mode. */
static void rejected_shapes(struct ref_cases *out, const char *o,
                            TF_DataType dtype, const struct spec *base)
{
  const TF_Code bad = TF_INVALID_ARGUMENT;
  enum conv_mode mode = mode_of(o);
  bool dw = is_depthwise(o);
  int sp = spatial_of(o), ci = dim_index(base->nchw, sp, 'C');
  struct ref_case *c;
  struct spec s;
  switch (mode) {
  case FORWARD:
    c = add(out, o, dtype, base, bad, "input of rank - 1");
    c->inputs[0].rank -= 1;
    c->inputs[0].dims[c->inputs[0].rank - 1] *= c->inputs[0].dims[c->inputs[0].rank];
    c = add(out, o, dtype, base, bad, "filter of rank - 1");
    c->inputs[1].rank -= 1;
    c->inputs[1].dims[c->inputs[1].rank - 1] *= c->inputs[1].dims[c->inputs[1].rank];
    /* A filter depth that does not divide the input depth. */
    c = add(out, o, dtype, base, bad, "depth mismatch");
    c->inputs[1].dims[sp] = 2;
    set_elements(&c->inputs[1]);
    if (!dw) {
      /* Two groups of 2 channels and an odd output depth. */
      s = *base, s.cin = 4, s.cg = 2, s.cout = 3;
      add(out, o, dtype, &s, bad, "groups vs output depth");
    }
    break;
  case BACKPROP_INPUT:
  case BACKPROP_FILTER: {
    int sizes = mode == BACKPROP_INPUT ? 0 : 1;
    c = add(out, o, dtype, base, bad, "wrong out_backprop size");
    c->inputs[2].dims[dim_index(base->nchw, sp, sp - 1)] -= 1;
    set_elements(&c->inputs[2]);
    c = add(out, o, dtype, base, bad, "wrong out_backprop depth");
    c->inputs[2].dims[ci] -= 1;
    set_elements(&c->inputs[2]);
    c = add(out, o, dtype, base, bad, "wrong out_backprop batch");
    c->inputs[2].dims[0] += 1;
    set_elements(&c->inputs[2]);
    c = add(out, o, dtype, base, bad, "sizes of rank - 1");
    c->inputs[sizes].dims[0] = c->inputs[sizes].elements = sp + 1;
    c = add(out, o, dtype, base, bad, "negative size");
    c->inputs[sizes].v[1] = -1;
    if (!dw && mode == BACKPROP_FILTER) {
      c = add(out, o, dtype, base, bad, "filter depth 0");
      c->inputs[1].v[sp] = 0;
    }
    break;
  }
  }
}

static void conv2d_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  const char *o = op->op;
  bool dw = is_depthwise(o);
  enum conv_mode mode = mode_of(o);
  static const int64_t ksizes[] = {1, 3, 5};
  static const char *const paddings[] = {"SAME", "VALID", "EXPLICIT"};
  static const int64_t channels[] = {1, 3, 8};
  int i = 0;
  /* bfloat16 and double run the same kernels as float and half with other
   * loads and stores: a third of the sweep covers them (and keeps the
   * simulated GPU of the Oclgrind suite within its time). */
  int every = dtype == TF_BFLOAT16 || dtype == TF_DOUBLE ? 3 : 1;

  /* The sweep: 11x9 images take a 5x5 window dilated by 2 under VALID. */
  for (int k = 0; k < 3; k++)
    for (int64_t stride = 1; stride <= 2; stride++)
      for (int64_t dil = 1; dil <= (dw ? 1 : 2); dil++)
        for (int p = 0; p < 3; p++, i++) {
          if (i % every != 0)
            continue;
          struct spec s = {
              .nchw = i % 2 == 1,
              .n = (i / 2) % 2 ? 2 : 1,
              .d = 1,
              .h = 11,
              .w = 9,
              .cin = channels[i % 3],
              .kd = 1,
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
  const struct spec base = {.nchw = false, .n = 2, .d = 1, .h = 7, .w = 5,
                            .cin = 3, .kd = 1, .kh = 3, .kw = 2, .cout = 2,
                            .stride = 1, .dilation = 1, .padding = "SAME"};
  struct spec s;

  /* Non-square windows and strides that do not divide the image. */
  s = base, s.kh = 1, s.kw = 3, s.stride = 2, s.padding = "VALID";
  add(out, o, dtype, &s, ok, "1x3");
  s = base, s.nchw = true, s.kh = 3, s.kw = 1, s.h = 8, s.stride = 3;
  add(out, o, dtype, &s, ok, "3x1");
  /* One odd image of 1031 rows. */
  s = base, s.n = 1, s.h = 1031, s.w = 1, s.cin = 1, s.kw = 1, s.cout = 1;
  add(out, o, dtype, &s, ok, "1031");
  /* A bigger product (the packed GEMM, K = 72; depthwise: 17 channels,
   * one 16-wide vector and a tail). */
  s = base, s.n = 3, s.h = 13, s.w = 11, s.cin = dw ? 17 : 8,
  s.cout = dw ? 1 : 16;
  add(out, o, dtype, &s, ok, "packed");
  /* 18 channels (rows of half that are not 16-byte aligned) where outputs
   * take no tap: a 1x1 window at stride 2 over explicit padding (the
   * forward's border, the input gradient's odd rows and columns), their
   * empty sums stored (PoCL's half vector store of a constant assumed
   * alignment and faulted). */
  s = base, s.h = 9, s.w = 8, s.cin = 18, s.cout = dw ? 1 : 18, s.kh = 1,
  s.kw = 1, s.stride = 2, s.padding = "EXPLICIT", s.pads[0] = 1, s.pads[1] = 1,
  s.pads[2] = 1, s.pads[3] = 1;
  add(out, o, dtype, &s, ok, "18 channels, empty windows");
  /* Wider than one 64-wide tile both ways (the GPU shape's big tile). */
  if (!dw && every == 1) {
    s = base, s.n = 2, s.h = 9, s.w = 8, s.cin = 5, s.cout = 67;
    add(out, o, dtype, &s, ok, "big tile");
  }
  /* The CPU shape's direct kernels (channels-last): full 32-wide column
   * blocks of the filter gradient and of the forward's vector epilogue;
   * 16-wide ones, three of them, strided and dilated with explicit
   * padding; and a filter gradient long enough to split over lines. */
  if (!dw) {
    s = base, s.h = 9, s.w = 7, s.cin = 16, s.cout = 32, s.kw = 3;
    add(out, o, dtype, &s, ok, "direct 16->32");
    s = base, s.h = 11, s.w = 10, s.cin = 8, s.cout = 48, s.kw = 3,
    s.stride = 2, s.dilation = 2, s.padding = "EXPLICIT", s.pads[0] = 2,
    s.pads[1] = 1, s.pads[2] = 0, s.pads[3] = 3;
    add(out, o, dtype, &s, ok, "direct strided 8->48");
    /* First layers (fewer than 8 input channels): the forward's work-items
     * of 8 pixels of a line, interior and border ones, and the filter
     * gradient's rows of (tap, channel) pairs: K = 9 (a full block and
     * one row), and K = 75 strided and dilated past explicit padding. */
    s = base, s.h = 11, s.w = 20, s.cin = 1, s.cout = 32, s.kw = 3;
    add(out, o, dtype, &s, ok, "direct 1->32");
    s = base, s.h = 12, s.w = 19, s.cin = 3, s.cout = 16, s.kh = 5, s.kw = 5,
    s.stride = 2, s.dilation = 2, s.padding = "EXPLICIT", s.pads[0] = 3,
    s.pads[1] = 0, s.pads[2] = 2, s.pads[3] = 1;
    add(out, o, dtype, &s, ok, "direct strided 3->16");
    if (every == 1) {
      /* 2560 products per filter gradient element: at values in [-3, 3]
       * a float sum of that many is 1e-4 off where it cancels to near 0,
       * beyond the op's tolerance on any path; an eighth of them keeps
       * the check on the indexing (a power of two: values stay exact). */
      static const int64_t split_cin[] = {8, 3};
      for (int q = 0; q < 2; q++) {
        s = base, s.h = 40, s.w = 32, s.cin = split_cin[q], s.cout = 16,
        s.kw = 3;
        struct ref_case *c = add(out, o, dtype, &s, ok,
                                 q == 0 ? "direct split" : "direct split 3");
        for (int t = 0; t < c->num_inputs; t++)
          if (c->inputs[t].rank == 4)
            for (int64_t e = 0; e < c->inputs[t].elements; e++)
              c->inputs[t].v[e] *= 0.125;
      }
    }
  }
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
  /* A stride-1 input gradient runs forward over the filter flipped in
   * work-groups of 16 x 16 channels (CPU shape): whole and partial ones
   * on both channel axes. */
  if (mode == BACKPROP_INPUT && !dw) {
    s = base, s.h = 9, s.w = 7, s.cin = 20, s.cout = 36, s.kw = 3;
    add(out, o, dtype, &s, ok, "flipped 20->36");
  }
  /* A strided input gradient folds its column matrix (col2im, CPU shape)
   * 16 channels at a time: a whole block, then a tail of 8 (a vector) or
   * of 4 (channel by channel). */
  if (mode == BACKPROP_INPUT && !dw) {
    s = base, s.h = 9, s.w = 7, s.cin = 24, s.cout = 5, s.kw = 3, s.stride = 2;
    add(out, o, dtype, &s, ok, "strided 24->5");
    s.cin = 20, s.padding = "VALID";
    add(out, o, dtype, &s, ok, "strided 20->5");
  }
  /* Conv2DBackpropInput's input_sizes may be (rows, cols) only. */
  if (mode == BACKPROP_INPUT && !dw) {
    s = base;
    struct ref_case *c = add(out, o, dtype, &s, ok, "2 input_sizes");
    c->inputs[0].dims[0] = c->inputs[0].elements = 2;
    c->inputs[0].v[0] = (double)s.h;
    c->inputs[0].v[1] = (double)s.w;
  }
  /* Grouped convolutions: 3 groups of 2 input channels, 2 outputs each;
   * 2 groups of 4 channels in channels-first, strided and dilated. */
  if (!dw) {
    s = base, s.cin = 6, s.cg = 2, s.cout = 6;
    add(out, o, dtype, &s, ok, "3 groups");
    s = base, s.nchw = true, s.h = 9, s.w = 8, s.cin = 8, s.cg = 4,
    s.cout = 10, s.stride = 2, s.dilation = 2, s.padding = "VALID",
    s.kw = 3;
    add(out, o, dtype, &s, ok, "2 groups");
    /* Groups wide enough for the GPU shape's GEMM tiles (17 channels a
     * group on both sides). */
    s = base, s.cin = 34, s.cg = 17, s.cout = 34, s.h = 5, s.w = 4;
    if (every == 1)
      add(out, o, dtype, &s, ok, "2 groups of 17");
    /* Depthwise as a grouped convolution: groups = channels (the
     * depthwise kernels run it), with a multiplier of 2, then of 1: 20
     * channels (a whole vector of 16 and a partial one in the CPU shape's
     * rows), strided and dilated, and channels-first. */
    s = base, s.cin = 5, s.cg = 1, s.cout = 10, s.padding = "EXPLICIT",
    s.pads[0] = 1, s.pads[3] = 2;
    add(out, o, dtype, &s, ok, "5 groups of 1");
    s = base, s.cin = 20, s.cg = 1, s.cout = 20, s.kw = 3, s.stride = 2,
    s.dilation = 2, s.h = 9, s.w = 8;
    add(out, o, dtype, &s, ok, "20 groups of 1");
    s = base, s.nchw = true, s.cin = 6, s.cg = 1, s.cout = 6, s.kw = 3;
    add(out, o, dtype, &s, ok, "6 groups of 1 NCHW");
  }

  /* Rejected attributes. */
  s = base, s.padding = "FULL";
  add(out, o, dtype, &s, bad, "bad padding");
  s = base, s.padding = "VALID", s.h = 1;
  add(out, o, dtype, &s, bad, "window > image");
  {
    struct ref_case *c = add(out, o, dtype, &base, bad, "strides of 3");
    c->attrs[attr_at(c, "strides")].value.ints.count = 3;
  }
  {
    /* Conv2D and Conv2DCustomBackpropInput say UNIMPLEMENTED. */
    struct ref_case *c = add(out, o, dtype, &base,
                             dw || mode == BACKPROP_FILTER ? bad : unimpl,
                             "batch stride");
    ((int64_t *)c->attrs[attr_at(c, "strides")].value.ints.items)[0] = 2;
  }
  {
    s = base, s.padding = "EXPLICIT";
    struct ref_case *c = add(out, o, dtype, &s, bad, "pads of 6");
    c->attrs[attr_at(c, "explicit_paddings")].value.ints.count = 6;
  }
  {
    s = base, s.padding = "EXPLICIT";
    struct ref_case *c = add(out, o, dtype, &s, bad, "batch padding");
    ((int64_t *)c->attrs[attr_at(c, "explicit_paddings")].value.ints.items)[0] =
        1;
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
  {
    s = base, s.padding = "EXPLICIT";
    struct ref_case *c = add(out, o, dtype, &s, bad, "negative padding");
    ((int64_t *)c->attrs[attr_at(c, "explicit_paddings")].value.ints.items)[2] =
        -1;
  }
  {
    /* TensorFlow reads strides as an int32 list. */
    struct ref_case *c = add(out, o, dtype, &base, bad, "stride beyond int32");
    ((int64_t *)c->attrs[attr_at(c, "strides")].value.ints.items)[1] =
        (int64_t)1 << 33;
  }
  if (!dw && mode == FORWARD) {
    /* An empty filter with an output and an input to compute from. */
    struct ref_case *c = add(out, o, dtype, &base, bad, "filter of no columns");
    c->inputs[1].dims[1] = 0;
    set_elements(&c->inputs[1]);
  }
  if (dw) {
    s = base, s.dilation = 2;
    add(out, o, dtype, &s, unimpl, "dilated depthwise");
    struct ref_case *c = add(out, o, dtype, &base, bad, "unequal strides");
    ((int64_t *)c->attrs[attr_at(c, "strides")].value.ints.items)[1] = 2;
  } else {
    s = base, s.dilation = 0;
    add(out, o, dtype, &s, bad, "dilation 0");
    struct ref_case *c = add(out, o, dtype, &base,
                             mode == BACKPROP_FILTER ? bad : unimpl,
                             "depth dilation");
    ((int64_t *)c->attrs[attr_at(c, "dilations")].value.ints.items)[3] = 2;
  }
  rejected_shapes(out, o, dtype, &base);
}

static void conv3d_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  const char *o = op->op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  static const char *const paddings[] = {"SAME", "VALID"};
  const struct spec base = {.nchw = false, .n = 2, .d = 5, .h = 6, .w = 4,
                            .cin = 3, .kd = 2, .kh = 3, .kw = 2, .cout = 4,
                            .stride = 1, .dilation = 1, .padding = "SAME"};
  struct spec s;
  int i = 0;
  int every = dtype == TF_BFLOAT16 || dtype == TF_DOUBLE ? 2 : 1;
  /* Both layouts and paddings, 1x1x1 to 3x3x3 windows, a plane stride or
   * dilation of its own. */
  for (int k = 1; k <= 3; k++)
    for (int p = 0; p < 2; p++)
      for (int nchw = 0; nchw < 2; nchw++, i++) {
        if (i % every != 0)
          continue;
        s = base;
        s.nchw = nchw;
        s.padding = paddings[p];
        s.d = 5 + i % 2, s.h = 5, s.w = 6;
        s.kd = k, s.kh = k, s.kw = k > 1 ? k - 1 : 1;
        s.n = i % 3 == 0 ? 1 : 2;
        s.cin = 1 + i % 4, s.cout = 1 + (i + 1) % 5;
        s.stride = 1 + i % 2;
        s.dilation = k > 1 ? 1 + (i / 2) % 2 : 1;
        s.sd = 1 + (i + 1) % 3;
        s.dd = k > 1 ? 1 + i % 2 : 1;
        add(out, o, dtype, &s, ok, "");
      }
  /* Grouped: 2 groups of 2 channels. */
  s = base, s.cin = 4, s.cg = 2, s.cout = 6;
  add(out, o, dtype, &s, ok, "2 groups");
  s = base, s.nchw = true, s.cin = 6, s.cg = 3, s.cout = 4, s.stride = 2;
  add(out, o, dtype, &s, ok, "2 groups strided");
  /* Groups and outputs wide enough for the GPU shape's 16- and 64-wide
   * tiles (float and half: the other types run the same kernels). */
  if (every == 1) {
    s = base, s.cin = 34, s.cg = 17, s.cout = 34, s.d = 2, s.h = 4, s.w = 3;
    add(out, o, dtype, &s, ok, "2 groups of 17");
    s = base, s.d = 3, s.h = 7, s.w = 5, s.cin = 5, s.cout = 65, s.kd = 1;
    add(out, o, dtype, &s, ok, "big tile");
  }
  /* input_sizes in int64 (Tshape). */
  if (mode_of(o) == BACKPROP_INPUT) {
    struct ref_case *c = add(out, o, dtype, &base, ok, "int64 input_sizes");
    c->inputs[0].dtype = TF_INT64;
  }
  /* Empty batch; a window deeper than the volume. */
  s = base, s.n = 0;
  add(out, o, dtype, &s, ok, "empty batch");
  s = base, s.d = 1, s.kd = 3, s.padding = "VALID", s.h = 4;
  add(out, o, dtype, &s, bad, "window > volume");

  /* Rejected attributes. */
  s = base, s.padding = "EXPLICIT";
  add(out, o, dtype, &s, bad, "EXPLICIT");
  {
    struct ref_case *c = add(out, o, dtype, &base, bad, "strides of 4");
    c->attrs[attr_at(c, "strides")].value.ints.count = 4;
  }
  {
    struct ref_case *c = add(out, o, dtype, &base, bad, "depth stride");
    ((int64_t *)c->attrs[attr_at(c, "strides")].value.ints.items)[4] = 2;
  }
  {
    struct ref_case *c = add(out, o, dtype, &base, bad, "dilations of 4");
    c->attrs[attr_at(c, "dilations")].value.ints.count = 4;
  }
  {
    struct ref_case *c = add(out, o, dtype, &base, bad, "batch dilation");
    ((int64_t *)c->attrs[attr_at(c, "dilations")].value.ints.items)[0] = 2;
  }
  s = base, s.dilation = 0;
  add(out, o, dtype, &s, bad, "dilation 0");
  {
    struct ref_case *c = add(out, o, dtype, &base, bad, "bad data_format");
    ref_case_attr_string(c, "data_format", "NHWC");
  }
  {
    struct ref_case *c = add(out, o, dtype, &base, bad, "stride beyond int32");
    ((int64_t *)c->attrs[attr_at(c, "strides")].value.ints.items)[2] =
        (int64_t)1 << 33;
  }
  if (mode_of(o) == FORWARD) {
    /* Conv3D refuses an empty filter even for an empty output. */
    struct ref_case *c = add(out, o, dtype, &base, bad, "no output channels");
    c->inputs[1].dims[4] = 0;
    set_elements(&c->inputs[1]);
  }
  rejected_shapes(out, o, dtype, &base);
}

static const char *const fused_with[6][2] = {
    {"BiasAdd", "Relu"},      {"BiasAdd", "Relu6"}, {"BiasAdd", "Elu"},
    {"BiasAdd", "LeakyRelu"}, {"BiasAdd", "Tanh"},  {"BiasAdd", "Sigmoid"}};
static const char *const fused_softplus[] = {"BiasAdd", "Softplus"};
static const char *const fused_relu_only[] = {"Relu"};

/* Replaces the fused_ops attribute of c. */
static void set_fused_ops(struct ref_case *c, const char *const *ops, int n)
{
  struct tfocl_attr *a = &c->attrs[attr_at(c, "fused_ops")];
  a->value.strings.items = ops;
  a->value.strings.count = n;
}

static void fused_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  const char *o = op->op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  const struct spec base = {.nchw = false, .n = 2, .d = 1, .h = 7, .w = 5,
                            .cin = 3, .kd = 1, .kh = 3, .kw = 2, .cout = 5,
                            .stride = 1, .dilation = 1, .padding = "SAME"};
  struct spec s;
  struct ref_case *c;
  /* BiasAdd alone and with each activation, across layouts, paddings,
   * strides and dilations; a pointwise one (the GEMM on the input
   * itself); one wider than a 64-wide tile. */
  s = base;
  add(out, o, dtype, &s, ok, "BiasAdd");
  for (int a = 0; a < 6; a++) {
    s = base;
    s.nchw = a % 2 == 1;
    s.padding = a % 3 == 0 ? "SAME" : a % 3 == 1 ? "VALID" : "EXPLICIT";
    s.pads[0] = 1, s.pads[3] = 2;
    s.stride = 1 + a % 2;
    s.dilation = 1 + (a / 2) % 2;
    s.h = 9;
    c = add(out, o, dtype, &s, ok, fused_with[a][1]);
    set_fused_ops(c, fused_with[a], 2);
  }
  s = base, s.kh = 1, s.kw = 1, s.cin = 6, s.cout = 7;
  c = add(out, o, dtype, &s, ok, "pointwise Relu");
  set_fused_ops(c, fused_with[0], 2);
  s = base, s.h = 9, s.w = 8, s.cin = 4, s.cout = 70;
  c = add(out, o, dtype, &s, ok, "big tile Relu6");
  set_fused_ops(c, fused_with[1], 2);
  /* The direct forward's epilogues: bias and Relu on whole 32-channel
   * blocks (vectors), where a NaN stays NaN as Relu keeps it; bias alone
   * on a block of 32 and one of 16. */
  s = base, s.h = 6, s.w = 9, s.cin = 8, s.cout = 32, s.kw = 3;
  c = add(out, o, dtype, &s, ok, "32 channels Relu NaN");
  set_fused_ops(c, fused_with[0], 2);
  c->inputs[0].v[17] = NAN;
  s = base, s.h = 6, s.w = 9, s.cin = 5, s.cout = 48;
  add(out, o, dtype, &s, ok, "48 channels BiasAdd");
  s = base;
  c = add(out, o, dtype, &s, ok, "LeakyRelu alpha 0.3");
  set_fused_ops(c, fused_with[3], 2);
  ref_case_attr_float(c, "leakyrelu_alpha", 0.3f);
  /* Grouped (TensorFlow's CPU says UNIMPLEMENTED; its GPU kernels and this
   * device take it). */
  s = base, s.cin = 4, s.cg = 2, s.cout = 6;
  c = add(out, o, dtype, &s, ok, "2 groups Elu");
  set_fused_ops(c, fused_with[2], 2);
  s = base, s.cin = 20, s.cg = 1, s.cout = 20, s.kw = 3;
  c = add(out, o, dtype, &s, ok, "20 groups of 1 Relu");
  set_fused_ops(c, fused_with[0], 2);
  s = base, s.nchw = true, s.cin = 3, s.cg = 1, s.cout = 6;
  c = add(out, o, dtype, &s, ok, "3 groups of 1, multiplier 2, NCHW Relu6");
  set_fused_ops(c, fused_with[1], 2);
  /* Empty batch. */
  s = base, s.n = 0;
  add(out, o, dtype, &s, ok, "empty batch");

  /* What TensorFlow rejects. */
  c = add(out, o, dtype, &base, TF_UNIMPLEMENTED, "Softplus");
  set_fused_ops(c, fused_softplus, 2);
  c = add(out, o, dtype, &base, TF_UNIMPLEMENTED, "Relu alone");
  set_fused_ops(c, fused_relu_only, 1);
  c = add(out, o, dtype, &base, bad, "no fused ops");
  set_fused_ops(c, fused_bias, 0);
  c = add(out, o, dtype, &base, bad, "num_args 2");
  c->attrs[attr_at(c, "num_args")].value.i = 2;
  c = add(out, o, dtype, &base, bad, "bias of 4");
  c->inputs[2].dims[0] = c->inputs[2].elements = 4;
  c = add(out, o, dtype, &base, bad, "2-D bias");
  c->inputs[2].rank = 2;
  c->inputs[2].dims[1] = 1;
  c = add(out, o, dtype, &base, bad, "bad data_format");
  ref_case_attr_string(c, "data_format", "NWHC");
  s = base, s.padding = "VALID", s.h = 1;
  add(out, o, dtype, &s, bad, "window > image");
  s = base, s.cin = 0;
  add(out, o, dtype, &s, bad, "filter depth 0");
  rejected_shapes(out, o, dtype, &base);
}

/* ---- The V1 3-D gradients -------------------------------------------------- */

/* Conv3DBackpropInput and Conv3DBackpropFilter take the input (filter)
 * itself where the V2 ops take its shape, and have no data_format: their
 * cases are the V2 ops' NDHWC cases with that shape vector made a random
 * tensor of the shape it holds, their reference the V2 ops' on it. */
static const char *conv3d_v2_of(const char *op)
{
  return strcmp(op, "Conv3DBackpropInput") == 0 ? "Conv3DBackpropInputV2"
                                                : "Conv3DBackpropFilterV2";
}

static int conv3d_v1_shape_input(const char *op)
{
  return strcmp(op, "Conv3DBackpropInput") == 0 ? 0 : 1;
}

static void conv3d_v1_cases(const struct ref_op *op, TF_DataType dtype,
                            struct ref_cases *out)
{
  const struct ref_op v2 = {.op = conv3d_v2_of(op->op)};
  struct ref_cases all = {0};
  int k = conv3d_v1_shape_input(op->op);
  conv3d_cases(&v2, dtype, &all);
  for (int i = 0; i < all.count; i++) {
    const struct ref_case *src = &all.items[i];
    const struct ref_tensor *sizes = &src->inputs[k];
    int64_t dims[5];
    bool valid = src->num_inputs == 3 && sizes->rank == 1 &&
                 sizes->elements == 5 &&
                 !strcmp(ref_case_attr_string_or(src, "data_format", "NDHWC"),
                         "NDHWC");
    for (int j = 0; valid && j < 5; j++) {
      dims[j] = (int64_t)sizes->v[j];
      valid = dims[j] >= 0;
    }
    if (!valid)
      continue;
    struct ref_case *c = ref_case_add(out, op->op, "%s%s", op->op,
                                      src->label + strlen(v2.op));
    for (int a = 0; a < src->num_attrs; a++) {
      const struct tfocl_attr *attr = &src->attrs[a];
      if (!strcmp(attr->name, "data_format"))
        continue;
      switch (attr->kind) {
      case TFOCL_ATTR_INT_LIST:
        ref_case_attr_ints(c, attr->name, attr->value.ints.items,
                           attr->value.ints.count);
        break;
      case TFOCL_ATTR_STRING:
        ref_case_attr_string(c, attr->name, attr->value.s);
        break;
      case TFOCL_ATTR_INT:
        ref_case_attr_int(c, attr->name, attr->value.i);
        break;
      case TFOCL_ATTR_TYPE:
        ref_case_attr_type(c, attr->name, attr->value.type);
        break;
      default:
        break;
      }
    }
    for (int j = 0; j < src->num_inputs; j++) {
      const struct ref_tensor *t = &src->inputs[j];
      if (j == k)
        ref_case_input(c, dtype, dims, 5, REF_ANY);
      else
        ref_case_input_values(c, t->dtype, t->dims, t->rank, t->v);
    }
    c->expect_code = src->expect_code;
  }
  ref_cases_finish(&all);
}

static int conv3d_v1_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  int k = conv3d_v1_shape_input(c->op);
  const struct ref_tensor *t = &c->inputs[k];
  struct ref_case *v2 = malloc(sizeof(*v2));
  struct ref_tensor sizes;
  if (v2 == NULL ||
      !ref_tensor_alloc(&sizes, TF_INT32, (int64_t[]){t->rank}, 1)) {
    free(v2);
    snprintf(error, (size_t)error_len, "out of host memory");
    return -1;
  }
  /* A shallow copy: its attributes still point into c's arena. */
  *v2 = *c;
  snprintf(v2->op, sizeof(v2->op), "%s", conv3d_v2_of(c->op));
  for (int j = 0; j < t->rank; j++)
    sizes.v[j] = (double)t->dims[j];
  v2->inputs[k] = sizes;
  int n = conv_compute(v2, out, error, error_len);
  ref_tensor_finish(&sizes);
  free(v2);
  return n;
}

#define TOL 1e-5, 1e-4

const struct ref_op ref_ops_conv[] = {
    {"Conv2D", TOL, REF_ANY, conv2d_cases, conv_compute},
    {"Conv2DBackpropInput", TOL, REF_ANY, conv2d_cases, conv_compute},
    {"Conv2DBackpropFilter", TOL, REF_ANY, conv2d_cases, conv_compute},
    {"DepthwiseConv2dNative", TOL, REF_ANY, conv2d_cases, conv_compute},
    {"DepthwiseConv2dNativeBackpropInput", TOL, REF_ANY, conv2d_cases,
     conv_compute},
    {"DepthwiseConv2dNativeBackpropFilter", TOL, REF_ANY, conv2d_cases,
     conv_compute},
    {"Conv3D", TOL, REF_ANY, conv3d_cases, conv_compute},
    {"Conv3DBackpropInputV2", TOL, REF_ANY, conv3d_cases, conv_compute},
    {"Conv3DBackpropFilterV2", TOL, REF_ANY, conv3d_cases, conv_compute},
    {"_FusedConv2D", TOL, REF_ANY, fused_cases, conv_compute},
    {"Conv3DBackpropInput", TOL, REF_ANY, conv3d_v1_cases, conv3d_v1_compute},
    {"Conv3DBackpropFilter", TOL, REF_ANY, conv3d_v1_cases,
     conv3d_v1_compute},
    {.op = NULL},
};
