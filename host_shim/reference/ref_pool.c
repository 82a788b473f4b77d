/* References of the pooling ops (kernels/pool.c), in float64: MaxPool,
 * MaxPoolV2, AvgPool, MaxPool3D, AvgPool3D, their gradients and the max
 * pools' second gradients, MaxPoolWithArgmax and its gradients, LRN and
 * LRNGrad. Batch normalisation is ref_batch_norm.c.
 *
 * Semantics are TensorFlow's CPU kernels': MaxPool and MaxPool3D start
 * from the lowest finite value of the dtype and take strictly greater
 * elements (NaN never wins, a window of -inf gives the lowest finite
 * value); MaxPoolGrad routes each gradient to the first maximum of its
 * window in window order (ties to the first); MaxPool3DGrad to every
 * element within 1e-5 of orig_output (ties to all); MaxPoolGradGrad and
 * MaxPool3DGradGrad take the gradient at the first element equal to
 * orig_output; AvgPool* divide by the count of in-bounds elements of each
 * window (SAME padding).
 *
 * Tolerances (float32): the max pools and their second gradients select,
 * so they are exact; MaxPoolGrad and MaxPool3DGrad sum the same gradients
 * in the same order as the device; AvgPool and AvgPoolGrad sum at most 27
 * terms in float: rtol 1e-5, atol 1e-6. half and bfloat16 widen these
 * (reference.c); double is computed in double on the device. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/fused_attrs.h"
#include "reference.h"

/* ---- Pooling parameters ---------------------------------------------------- */

/* A pooling problem in three spatial axes (plane, row, column); a 2-D one
 * has a single plane. */
struct pool {
  bool nchw;
  int spatial, rank;
  int64_t n, depth;
  int64_t in[3], out[3], win[3], str[3], pad[3];
  int64_t out_dims[5];
};

static int64_t out_size(int64_t in, int64_t window, int64_t stride,
                        const char *padding, int64_t pad_before,
                        int64_t pad_after, int64_t *pad)
{
  if (!strcmp(padding, "SAME")) {
    int64_t out = (in + stride - 1) / stride;
    int64_t needed = (out - 1) * stride + window - in;
    *pad = needed > 0 ? needed / 2 : 0;
    return out;
  }
  if (!strcmp(padding, "EXPLICIT")) {
    *pad = pad_before;
    return (in + pad_before + pad_after - window + stride) / stride;
  }
  *pad = 0;
  return (in - window + stride) / stride;
}

static bool is_3d(const char *op) { return strstr(op, "3D") != NULL; }
static bool is_v2(const char *op) { return strstr(op, "V2") != NULL; }

/* ksize and strides: the attributes, or the V2 ops' inputs. */
static bool window_attrs(const struct ref_case *c, int64_t *k, int64_t *s,
                         int want)
{
  if (is_v2(c->op)) {
    int first = !strcmp(c->op, "MaxPoolV2") ? 1 : 3;
    if (c->num_inputs < first + 2 || c->inputs[first].elements != want ||
        c->inputs[first + 1].elements != want)
      return false;
    for (int i = 0; i < want; i++) {
      k[i] = (int64_t)c->inputs[first].v[i];
      s[i] = (int64_t)c->inputs[first + 1].v[i];
    }
    return true;
  }
  const struct tfocl_attr *ks = ref_case_attr(c, "ksize");
  const struct tfocl_attr *st = ref_case_attr(c, "strides");
  if (ks == NULL || st == NULL || ks->value.ints.count != want ||
      st->value.ints.count != want)
    return false;
  memcpy(k, ks->value.ints.items, sizeof(int64_t) * (size_t)want);
  memcpy(s, st->value.ints.items, sizeof(int64_t) * (size_t)want);
  return true;
}

/* The pooling problem of an image of dims `dims` under c's attributes;
 * false for what the op rejects. */
static bool pool_with(const struct ref_case *c, const int64_t *dims,
                      const int64_t *k, const int64_t *s, struct pool *p)
{
  const struct tfocl_attr *ep = ref_case_attr(c, "explicit_paddings");
  const char *padding = ref_case_attr_string_or(c, "padding", "VALID");
  const char *format = ref_case_attr_string_or(c, "data_format", "");
  int64_t e[10] = {0};
  memset(p, 0, sizeof(*p));
  p->spatial = is_3d(c->op) ? 3 : 2;
  p->rank = p->spatial + 2;
  p->nchw = !strcmp(format, "NCHW") || !strcmp(format, "NCDHW");
  if (!strcmp(padding, "EXPLICIT")) {
    if (ep == NULL || ep->value.ints.count != 2 * p->rank)
      return false;
    memcpy(e, ep->value.ints.items, sizeof(int64_t) * 2 * (size_t)p->rank);
  }
  int ch = p->nchw ? 1 : p->rank - 1;
  if (k[0] != 1 || s[0] != 1 || k[ch] != 1 || s[ch] != 1)
    return false;
  p->n = dims[0];
  p->depth = dims[ch];
  for (int a = 0; a < 3; a++) {
    /* Axis a of the three; 2-D has no plane axis. */
    int d = a - (3 - p->spatial);
    if (d < 0) {
      p->in[a] = p->out[a] = p->win[a] = p->str[a] = 1;
      continue;
    }
    int i = (p->nchw ? 2 : 1) + d;
    if (k[i] < 1 || s[i] < 1)
      return false;
    p->in[a] = dims[i];
    p->win[a] = k[i];
    p->str[a] = s[i];
    p->out[a] = out_size(dims[i], k[i], s[i], padding, e[2 * i],
                         e[2 * i + 1], &p->pad[a]);
    if (p->out[a] < 0)
      return false;
    p->out_dims[i] = p->out[a];
  }
  p->out_dims[0] = p->n;
  p->out_dims[ch] = p->depth;
  return true;
}

static bool pool_of(const struct ref_case *c, const int64_t *dims,
                    struct pool *p)
{
  int64_t k[5], s[5];
  int rank = is_3d(c->op) ? 5 : 4;
  return window_attrs(c, k, s, rank) && pool_with(c, dims, k, s, p);
}

/* Flat index of (n, c, pl, h, w) in an image of spatial extents e. */
static int64_t at(const struct pool *p, int64_t n, int64_t c, int64_t pl,
                  int64_t h, int64_t w, const int64_t *e)
{
  return p->nchw ? (((n * p->depth + c) * e[0] + pl) * e[1] + h) * e[2] + w
                 : (((n * e[0] + pl) * e[1] + h) * e[2] + w) * p->depth + c;
}

/* In-bounds window [lo[a], hi[a]) of output position o. */
static void window(const struct pool *p, const int64_t *o, int64_t *lo,
                   int64_t *hi)
{
  for (int a = 0; a < 3; a++) {
    int64_t first = o[a] * p->str[a] - p->pad[a];
    lo[a] = first < 0 ? 0 : first;
    hi[a] = first + p->win[a] < p->in[a] ? first + p->win[a] : p->in[a];
  }
}

static double lowest(TF_DataType dtype)
{
  switch (dtype) {
  case TF_HALF: return -65504.0;
  case TF_BFLOAT16: return -3.38953139e38;
  case TF_DOUBLE: return -DBL_MAX;
  default: return -FLT_MAX;
  }
}

/* Visits every output position (n, c, o[3]). */
#define FOR_OUTPUTS(p, n, c, o)                                   \
  for (int64_t n = 0; n < (p)->n; n++)                            \
    for (int64_t c = 0; c < (p)->depth; c++)                      \
      for (o[0] = 0; o[0] < (p)->out[0]; o[0]++)                  \
        for (o[1] = 0; o[1] < (p)->out[1]; o[1]++)                \
          for (o[2] = 0; o[2] < (p)->out[2]; o[2]++)

/* Visits every element of a window [lo, hi). */
#define FOR_WINDOW(lo, hi, i)                          \
  for (i[0] = lo[0]; i[0] < hi[0]; i[0]++)             \
    for (i[1] = lo[1]; i[1] < hi[1]; i[1]++)           \
      for (i[2] = lo[2]; i[2] < hi[2]; i[2]++)

/* ---- References ------------------------------------------------------------- */

/* MaxPool* / AvgPool* of x into out (allocated). */
static void pool_forward(const struct pool *p, const struct ref_tensor *x,
                         bool is_max, struct ref_tensor *out)
{
  int64_t o[3], lo[3], hi[3], i[3];
  ref_tensor_alloc(out, x->dtype, p->out_dims, p->rank);
  FOR_OUTPUTS(p, n, ch, o) {
    window(p, o, lo, hi);
    double acc = is_max ? lowest(x->dtype) : 0.0;
    FOR_WINDOW(lo, hi, i) {
      double v = x->v[at(p, n, ch, i[0], i[1], i[2], p->in)];
      if (!is_max)
        acc += v;
      else if (acc < v)
        acc = v;
    }
    if (!is_max)
      acc /= (double)((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
    out->v[at(p, n, ch, o[0], o[1], o[2], p->out)] =
        ref_round_to(x->dtype, acc);
  }
}

static int pool_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  struct pool p;
  if (x->rank != (is_3d(c->op) ? 5 : 4) || !pool_of(c, x->dims, &p)) {
    snprintf(error, (size_t)error_len, "bad pooling");
    return -1;
  }
  pool_forward(&p, x, !strncmp(c->op, "Max", 3), &out[0]);
  return 1;
}

static bool same_shape(const struct ref_tensor *t, const int64_t *dims,
                       int rank)
{
  if (t->rank != rank)
    return false;
  for (int i = 0; i < rank; i++)
    if (t->dims[i] != dims[i])
      return false;
  return true;
}

static int pool_grad_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  bool is_max = !strncmp(c->op, "Max", 3), near = is_max && is_3d(c->op);
  int rank = is_3d(c->op) ? 5 : 4;
  const struct ref_tensor *x = is_max ? &c->inputs[0] : NULL;
  const struct ref_tensor *y = is_max ? &c->inputs[1] : NULL;
  const struct ref_tensor *dy = &c->inputs[is_max ? 2 : 1];
  int64_t dims[5], o[3], lo[3], hi[3], i[3];
  struct pool p;
  TF_DataType dtype = dy->dtype;
  if (is_max) {
    if (x->rank != rank) {
      snprintf(error, (size_t)error_len, "bad rank");
      return -1;
    }
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)rank);
  } else {
    if (c->inputs[0].elements != rank) {
      snprintf(error, (size_t)error_len, "bad shape vector");
      return -1;
    }
    for (int d = 0; d < rank; d++)
      dims[d] = (int64_t)c->inputs[0].v[d];
  }
  ref_tensor_alloc(&out[0], dtype, dims, rank);
  if (out[0].elements == 0)
    return 1;
  if (!pool_of(c, dims, &p) || !same_shape(dy, p.out_dims, rank) ||
      (is_max && !same_shape(y, p.out_dims, rank))) {
    snprintf(error, (size_t)error_len, "bad pooling");
    return -1;
  }
  FOR_OUTPUTS(&p, n, ch, o) {
    int64_t arg = -1;
    double best = lowest(dtype);
    int64_t oi = at(&p, n, ch, o[0], o[1], o[2], p.out);
    double g = dy->v[oi];
    window(&p, o, lo, hi);
    double count = (double)((hi[0] - lo[0]) * (hi[1] - lo[1]) *
                            (hi[2] - lo[2]));
    FOR_WINDOW(lo, hi, i) {
      int64_t ii = at(&p, n, ch, i[0], i[1], i[2], p.in);
      if (!is_max) {
        out[0].v[ii] += g / count;
      } else if (near) {
        /* TensorFlow's CPU MaxPool3DGrad compares in the dtype. */
        if (fabs(ref_round_to(dtype, x->v[ii] - y->v[oi])) < 1e-5)
          out[0].v[ii] += g;
      } else if (arg < 0 || best < x->v[ii]) {
        best = x->v[ii];
        arg = ii;
      }
    }
    if (is_max && !near)
      out[0].v[arg] += g;
  }
  /* The fused ReluGrad of orig_input: TensorFlow's product by the mask. */
  bool relu_grad =
      is_max && !near && ref_case_attr_bool_or(c, POOL_RELU_GRAD_ATTR, false);
  for (int64_t e = 0; e < out[0].elements; e++) {
    if (relu_grad)
      out[0].v[e] =
          ref_round_to(dtype, out[0].v[e]) * (x->v[e] > 0 ? 1.0 : 0.0);
    out[0].v[e] = ref_round_to(dtype, out[0].v[e]);
  }
  return 1;
}

static int pool_grad_grad_compute(const struct ref_case *c,
                                  struct ref_tensor *out, char *error,
                                  int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *y = &c->inputs[1];
  const struct ref_tensor *g = &c->inputs[2];
  int rank = is_3d(c->op) ? 5 : 4;
  int64_t o[3], lo[3], hi[3], i[3];
  struct pool p;
  if (x->rank != rank || !pool_of(c, x->dims, &p) ||
      !same_shape(y, p.out_dims, rank) || !same_shape(g, x->dims, rank) ||
      (rank == 5 && (x->elements == 0 || y->elements == 0))) {
    snprintf(error, (size_t)error_len, "bad pooling");
    return -1;
  }
  ref_tensor_alloc(&out[0], x->dtype, p.out_dims, rank);
  FOR_OUTPUTS(&p, n, ch, o) {
    int64_t oi = at(&p, n, ch, o[0], o[1], o[2], p.out);
    bool found = false;
    window(&p, o, lo, hi);
    FOR_WINDOW(lo, hi, i) {
      int64_t ii = at(&p, n, ch, i[0], i[1], i[2], p.in);
      if (!found && x->v[ii] == y->v[oi]) {
        out[0].v[oi] = g->v[ii];
        found = true;
      }
    }
  }
  return 1;
}

/* ---- Cases --------------------------------------------------------------- */

enum pool_family { FWD, GRAD, GRAD_GRAD };

static enum pool_family family_of(const char *op)
{
  if (strstr(op, "GradGrad") != NULL)
    return GRAD_GRAD;
  return strstr(op, "Grad") != NULL ? GRAD : FWD;
}

/* ksize and strides in the data format's order from spatial windows
 * (plane, row, column; 2-D uses the last two), as attributes or, for the
 * V2 ops, remembered for pool_inputs. */
struct window_spec {
  int64_t k[5], s[5];
  int rank;
};

static void pool_attrs(struct ref_case *c, struct window_spec *w,
                       const int64_t *win, const int64_t *str,
                       const char *padding, bool nchw)
{
  bool three = is_3d(c->op);
  w->rank = three ? 5 : 4;
  for (int i = 0; i < 5; i++)
    w->k[i] = w->s[i] = 1;
  for (int a = three ? 0 : 1; a < 3; a++) {
    int i = (nchw ? 2 : 1) + a - (three ? 0 : 1);
    w->k[i] = win[a];
    w->s[i] = str[a];
  }
  if (nchw)
    ref_case_attr_string(c, "data_format", three ? "NCDHW" : "NCHW");
  else if (three)
    ref_case_attr_string(c, "data_format", "NDHWC");
  if (!is_v2(c->op)) {
    ref_case_attr_ints(c, "ksize", w->k, w->rank);
    ref_case_attr_ints(c, "strides", w->s, w->rank);
  }
  ref_case_attr_string(c, "padding", padding);
}

/* dims of an image of batch n, spatial extents sp (plane, row, column),
 * depth channels. */
static int image_dims(int64_t *dims, bool three, bool nchw, int64_t n,
                      const int64_t *sp, int64_t depth)
{
  int rank = three ? 5 : 4, first = nchw ? 2 : 1;
  dims[0] = n;
  dims[nchw ? 1 : rank - 1] = depth;
  for (int a = three ? 0 : 1, i = first; a < 3; a++, i++)
    dims[i] = sp[a];
  return rank;
}

static void int_vector(struct ref_case *c, const int64_t *v, int n)
{
  double d[5];
  for (int i = 0; i < n; i++)
    d[i] = (double)v[i];
  ref_case_input_values(c, TF_INT32, (int64_t[]){n}, 1, d);
}

/* The inputs of one case over image `dims` (x's values: `values`, NULL for
 * random). orig_output, where an op reads it, is MaxPool of x. */
static void pool_inputs(struct ref_case *c, TF_DataType dtype,
                        const int64_t *dims, int rank,
                        const struct window_spec *w, const double *values)
{
  enum pool_family f = family_of(c->op);
  bool is_max = !strncmp(c->op, "Max", 3);
  bool v2 = is_v2(c->op);
  struct pool p;
  const struct ref_tensor *x = NULL;
  if (f == GRAD && !is_max) {
    double shape[5];
    for (int i = 0; i < rank; i++)
      shape[i] = (double)dims[i];
    ref_case_input_values(c, TF_INT32, (int64_t[]){rank}, 1, shape);
  } else if (values != NULL) {
    x = ref_case_input_values(c, dtype, dims, rank, values);
  } else {
    x = ref_case_input(c, dtype, dims, rank, REF_ANY);
  }
  if (v2 && f == FWD) {
    int_vector(c, w->k, w->rank);
    int_vector(c, w->s, w->rank);
  }
  if (f == FWD)
    return;
  int64_t out_dims[5] = {0, 0, 0, 0, 0};
  bool ok = pool_with(c, dims, w->k, w->s, &p);
  if (ok)
    memcpy(out_dims, p.out_dims, sizeof(out_dims));
  if (is_max) {
    /* orig_output: x's max pool where the geometry is valid. */
    struct ref_tensor *y = ref_case_input(c, dtype, out_dims, rank, REF_ANY);
    if (ok && x != NULL) {
      struct ref_tensor pooled;
      pool_forward(&p, x, true, &pooled);
      if (pooled.elements == y->elements)
        memcpy(y->v, pooled.v, sizeof(double) * (size_t)y->elements);
      ref_tensor_finish(&pooled);
    }
  }
  ref_case_input(c, dtype, f == GRAD_GRAD ? dims : out_dims, rank, REF_ANY);
  if (v2) {
    int_vector(c, w->k, w->rank);
    int_vector(c, w->s, w->rank);
  }
}

/* A case over an image of batch n, spatial sp, depth channels. */
static struct ref_case *pool_case(struct ref_cases *out, const struct ref_op *op,
                                  TF_DataType dtype, bool nchw, int64_t n,
                                  const int64_t *sp, int64_t depth,
                                  const int64_t *win, const int64_t *str,
                                  const char *padding, const double *values,
                                  const char *what)
{
  bool three = is_3d(op->op);
  int64_t dims[5];
  struct window_spec w;
  int rank = image_dims(dims, three, nchw, n, sp, depth);
  char shape[96];
  int len = snprintf(shape, sizeof(shape), "[");
  for (int i = 0; i < rank; i++)
    len += snprintf(shape + len, sizeof(shape) - (size_t)len, "%s%lld",
                    i ? "," : "", (long long)dims[i]);
  snprintf(shape + len, sizeof(shape) - (size_t)len, "]");
  struct ref_case *c = ref_case_add(
      out, op->op, "%s %s %s %lldx%lldx%lld/%lldx%lldx%lld %s %s", op->op,
      what, nchw ? (three ? "NCDHW" : "NCHW") : (three ? "NDHWC" : "NHWC"),
      (long long)win[0], (long long)win[1], (long long)win[2],
      (long long)str[0], (long long)str[1], (long long)str[2], padding, shape);
  pool_attrs(c, &w, win, str, padding, nchw);
  pool_inputs(c, dtype, dims, rank, &w, values);
  return c;
}

/* A failing case: attributes as given (ksize/strides of any length), x of
 * `dims`; the other inputs of plausible shapes. */
static void fail_case(struct ref_cases *out, const struct ref_op *op,
                      TF_DataType dtype, const char *what,
                      const int64_t *k, int nk, const int64_t *s, int ns,
                      const char *padding, const char *format,
                      const int64_t *dims, int rank, TF_Code code)
{
  struct ref_case *c = ref_case_add(out, op->op, "%s %s", op->op, what);
  enum pool_family f = family_of(op->op);
  bool is_max = !strncmp(op->op, "Max", 3);
  if (!is_v2(op->op)) {
    ref_case_attr_ints(c, "ksize", k, nk);
    ref_case_attr_ints(c, "strides", s, ns);
  }
  ref_case_attr_string(c, "padding", padding);
  if (format != NULL)
    ref_case_attr_string(c, "data_format", format);
  if (f == GRAD && !is_max) {
    double shape[5];
    for (int i = 0; i < rank; i++)
      shape[i] = (double)dims[i];
    ref_case_input_values(c, TF_INT32, (int64_t[]){rank}, 1, shape);
  } else {
    ref_case_input(c, dtype, dims, rank, REF_ANY);
  }
  if (is_v2(op->op) && f == FWD) {
    int_vector(c, k, nk);
    int_vector(c, s, ns);
  }
  if (f != FWD) {
    if (is_max)
      ref_case_input(c, dtype, dims, rank, REF_ANY);
    ref_case_input(c, dtype, dims, rank, REF_ANY);
    if (is_v2(op->op)) {
      int_vector(c, k, nk);
      int_vector(c, s, ns);
    }
  }
  c->expect_code = code;
}

/* MaxPoolGrad with the graph pass's fused ReluGrad (POOL_RELU_GRAD_ATTR,
 * windows that do not overlap): maxima below, at and above 0, NaN and
 * inf, both formats, more channels than a register block; and the
 * attribute where it does not apply (overlapping windows, another op). */
static void relu_grad_cases(struct ref_cases *out, const struct ref_op *op,
                            TF_DataType dtype, const double *special)
{
  struct ref_case *c;
  if (strcmp(op->op, "MaxPoolGrad") != 0) {
    c = pool_case(out, op, dtype, false, 1, (int64_t[]){1, 4, 4}, 2,
                  (int64_t[]){1, 2, 2}, (int64_t[]){1, 2, 2}, "VALID", NULL,
                  "relu grad elsewhere");
    ref_case_attr_bool(c, POOL_RELU_GRAD_ATTR, true);
    c->expect_code = TF_INVALID_ARGUMENT;
    return;
  }
  static double signed_ties[3 * 7 * 5 * 2];
  for (size_t i = 0; i < sizeof(signed_ties) / sizeof(signed_ties[0]); i++)
    signed_ties[i] = (double)((i * 7 + i / 5) % 3) - 1.0;
  for (int fmt = 0; fmt < 2; fmt++) {
    c = pool_case(out, op, dtype, fmt == 1, 3, (int64_t[]){1, 7, 5}, 2,
                  (int64_t[]){1, 2, 2}, (int64_t[]){1, 2, 2}, "SAME",
                  signed_ties, "relu grad, signed ties");
    ref_case_attr_bool(c, POOL_RELU_GRAD_ATTR, true);
    c = pool_case(out, op, dtype, fmt == 1, 2, (int64_t[]){1, 8, 9}, 17,
                  (int64_t[]){1, 3, 2}, (int64_t[]){1, 4, 2}, "SAME", NULL,
                  "relu grad, 17 channels, gaps");
    ref_case_attr_bool(c, POOL_RELU_GRAD_ATTR, true);
  }
  c = pool_case(out, op, dtype, false, 1, (int64_t[]){1, 4, 4}, 2,
                (int64_t[]){1, 2, 2}, (int64_t[]){1, 2, 2}, "VALID", special,
                "relu grad, NaN and inf");
  ref_case_attr_bool(c, POOL_RELU_GRAD_ATTR, true);
  c = pool_case(out, op, dtype, false, 1, (int64_t[]){1, 5, 5}, 2,
                (int64_t[]){1, 3, 3}, (int64_t[]){1, 2, 2}, "VALID", NULL,
                "relu grad, overlapping");
  ref_case_attr_bool(c, POOL_RELU_GRAD_ATTR, true);
  c->expect_code = TF_UNIMPLEMENTED;
}

static void pool_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  static const int64_t shapes[][5] = {
      /* n, planes, rows, cols, depth */
      {1, 3, 5, 7, 3}, {3, 2, 7, 5, 1}, {1, 4, 9, 9, 8},
      {3, 3, 5, 5, 3}, {2, 1, 6, 7, 8},
  };
  static const int64_t windows[] = {1, 2, 3};
  static const int64_t strides[] = {1, 2};
  static const char *const paddings[] = {"VALID", "SAME"};
  bool three = is_3d(op->op), is_max = !strncmp(op->op, "Max", 3);
  enum pool_family f = family_of(op->op);
  /* On the Oclgrind simulator (accesses and races, at a few million
   * instructions a second): a sample of each kind of case, all of them in
   * float only. */
  bool sim = ref_on_oclgrind(), some = sim && dtype != TF_FLOAT;
  int shape = 0;

  for (int fmt = 0; fmt < 2; fmt++)
    for (size_t wi = 0; wi < 3; wi++)
      for (size_t si = 0; si < 2; si++)
        for (size_t pi = 0; pi < 2; pi++, shape++) {
          const int64_t *s = shapes[shape % 5];
          /* shape = fmt * 12 + window * 4 + stride * 2 + padding. */
          if (sim && !((some ? 0x400400u : 0x420480u) >> shape & 1u))
            continue;
          /* 3-D: the plane window smaller than the others, so that a
           * one-plane image still has windows. */
          int64_t w = windows[wi], st = strides[si];
          int64_t win[3] = {three ? (w > 1 ? w - 1 : 1) : 1, w, w};
          int64_t str[3] = {three ? st : 1, st, st};
          int64_t sp[3] = {three ? s[1] : 1, s[2], s[3]};
          pool_case(out, op, dtype, fmt == 1, s[0], sp, s[4], win, str,
                    paddings[pi], NULL, "");
        }

  /* Non-square windows and strides; a long odd-sized image (no multiple
   * of any work-group). */
  pool_case(out, op, dtype, false, 2, (int64_t[]){three ? 3 : 1, 7, 6}, 3,
            (int64_t[]){three ? 2 : 1, 3, 2}, (int64_t[]){1, 2, 1}, "SAME",
            NULL, "non-square");
  if (!some)
    pool_case(out, op, dtype, true, 2, (int64_t[]){three ? 5 : 1, 6, 7}, 5,
              (int64_t[]){three ? 3 : 1, 2, 3},
              (int64_t[]){three ? 2 : 1, 3, 1}, "VALID", NULL, "non-square");
  if (!sim) {
    pool_case(out, op, dtype, false, 1, (int64_t[]){1, 1031, 1}, 1,
              (int64_t[]){1, 3, 1}, (int64_t[]){1, 2, 1}, "SAME", NULL, "odd");
    /* Big enough for many work-groups: [3,33,35,17] (2-D), [2,9,17,19,5]. */
    pool_case(out, op, dtype, false, three ? 2 : 3,
              (int64_t[]){three ? 9 : 1, three ? 17 : 33, three ? 19 : 35},
              three ? 5 : 17, (int64_t[]){three ? 3 : 1, 3, 3},
              (int64_t[]){three ? 2 : 1, 2, 2}, "SAME", NULL, "large");
    pool_case(out, op, dtype, true, three ? 2 : 3,
              (int64_t[]){three ? 9 : 1, three ? 17 : 33, three ? 19 : 35},
              three ? 5 : 17, (int64_t[]){three ? 2 : 1, 2, 2},
              (int64_t[]){three ? 2 : 1, 2, 2}, "VALID", NULL, "large");
  }
  /* Channels in vectors of 16 and a tail under overlapping windows (the
   * CPU shapes' vector rows): 40 channels, 20 on the simulator. */
  if (!some)
    pool_case(out, op, dtype, false, sim ? 1 : 2,
              (int64_t[]){three ? 3 : 1, sim ? 5 : 9, sim ? 6 : 11},
              sim ? 20 : 40, (int64_t[]){three ? 2 : 1, 3, 3},
              (int64_t[]){three ? 2 : 1, 2, 2}, "SAME", NULL,
              "vector channels");
  /* 18 channels: rows of half that are not 16-byte aligned, with a column
   * and a row no window holds (their gradient a stored zero; PoCL's half
   * vector store of a constant assumed alignment and faulted). */
  pool_case(out, op, dtype, false, 1, (int64_t[]){three ? 3 : 1, 7, 7}, 18,
            (int64_t[]){1, 2, 2}, (int64_t[]){1, 2, 2}, "VALID", NULL,
            "18 channels, uncovered edge");
  /* An empty batch, and windows wider than the image (an empty output:
   * the gradients are zero). */
  pool_case(out, op, dtype, false, 0, (int64_t[]){three ? 2 : 1, 4, 4}, 3,
            (int64_t[]){1, 2, 2}, (int64_t[]){1, 2, 2}, "VALID", NULL,
            "empty batch");
  if (f != GRAD_GRAD || !three)
    pool_case(out, op, dtype, true, 1, (int64_t[]){three ? 2 : 1, 2, 2}, 2,
              (int64_t[]){three ? 3 : 1, 3, 3}, (int64_t[]){1, 1, 1}, "VALID",
              NULL, "window wider than the image");

  if (is_max) {
    /* Ties: few distinct values, so most windows hold several maxima. */
    static double tied[3 * 2 * 7 * 5 * 2];
    for (size_t i = 0; i < sizeof(tied) / sizeof(tied[0]); i++)
      tied[i] = (double)((i * 7 + i / 5) % 3);
    for (int fmt = some ? 1 : 0; fmt < 2; fmt++)
      for (int64_t w = sim ? 3 : 2; w <= 3; w++)
        pool_case(out, op, dtype, fmt == 1, 3,
                  (int64_t[]){three ? 2 : 1, 7, 5}, 2,
                  (int64_t[]){three ? 2 : 1, w, w}, (int64_t[]){1, 1, 1},
                  "SAME", tied, "ties");
    /* Ties across 17 channels in windows that do not overlap: the
     * gradients' CPU kernels take 16 channels at a time there. */
    static double tied_wide[2 * 4 * 6 * 17];
    for (size_t i = 0; i < sizeof(tied_wide) / sizeof(tied_wide[0]); i++)
      tied_wide[i] = (double)((i * 5 + i / 17) % 2);
    pool_case(out, op, dtype, false, 2, (int64_t[]){1, 4, 6}, 17,
              (int64_t[]){1, 2, 2}, (int64_t[]){1, 2, 2}, "VALID", tied_wide,
              "ties, 17 channels");
    /* Ties across 28 channels in windows that overlap along every axis:
     * MaxPool3DGrad's CPU kernel sums each input's windows for 16 channels,
     * then 8, then the last 4 one by one. */
    static double tied_overlap[2 * 3 * 5 * 4 * 28];
    for (size_t i = 0; i < sizeof(tied_overlap) / sizeof(tied_overlap[0]); i++)
      tied_overlap[i] = (double)((i * 7 + i / 28) % 3);
    if (three && !some)
      pool_case(out, op, dtype, false, 2, (int64_t[]){3, 5, 4}, 28,
                (int64_t[]){2, 3, 3}, (int64_t[]){1, 2, 2}, "SAME",
                tied_overlap, "ties, 28 channels, overlapping");
    static const double constant[2 * 2 * 4 * 4] = {0};
    pool_case(out, op, dtype, false, 2, (int64_t[]){three ? 2 : 1, 4, 4}, 1,
              (int64_t[]){1, 3, 3}, (int64_t[]){1, 1, 1}, "SAME", constant,
              "all equal");
    /* NaN never wins; a window of -inf gives the lowest finite value. */
    static const double special[32] = {
        NAN, 1, -INFINITY, -INFINITY, 2, NAN, -INFINITY, -INFINITY,
        3,   4, INFINITY,  0,         NAN, NAN, 5,        -1,
        -INFINITY, -INFINITY, 7, NAN, -INFINITY, -INFINITY, 1, 2,
        NAN, NAN, NAN, NAN, 0, -0.0, 3, 3};
    if (f != GRAD && !some)
      pool_case(out, op, dtype, false, 1, (int64_t[]){three ? 2 : 1, 4, 4}, 1,
                (int64_t[]){1, 2, 2}, (int64_t[]){1, 2, 2}, "VALID", special,
                "NaN and inf");
    if (f == GRAD && !three && !some) {
      /* Windows that do not overlap (MaxPoolGrad's one-pass kernel): ties,
       * a stride wider than the window (inputs no window holds), SAME
       * windows clipped at the edges, more channels than a register
       * block, and NaN and inf. */
      for (int fmt = 0; fmt < 2; fmt++) {
        pool_case(out, op, dtype, fmt == 1, 3, (int64_t[]){1, 7, 5}, 2,
                  (int64_t[]){1, 2, 2}, (int64_t[]){1, 2, 2}, "SAME", tied,
                  "tiles ties");
        pool_case(out, op, dtype, fmt == 1, 3, (int64_t[]){1, 7, 5}, 2,
                  (int64_t[]){1, 2, 2}, (int64_t[]){1, 3, 3}, "VALID", tied,
                  "tiles ties, gaps");
        pool_case(out, op, dtype, fmt == 1, 2, (int64_t[]){1, 8, 9}, 17,
                  (int64_t[]){1, 3, 2}, (int64_t[]){1, 4, 2}, "SAME", NULL,
                  "tiles 17 channels, gaps");
      }
      pool_case(out, op, dtype, false, 1, (int64_t[]){1, 4, 4}, 2,
                (int64_t[]){1, 2, 2}, (int64_t[]){1, 2, 2}, "VALID", special,
                "tiles NaN and inf");
      relu_grad_cases(out, op, dtype, special);
    }
  }

  /* EXPLICIT padding: MaxPool and MaxPoolGrad only. */
  if (!strcmp(op->op, "MaxPool") || !strcmp(op->op, "MaxPoolGrad")) {
    for (int fmt = 0; fmt < 2; fmt++) {
      int64_t dims[4], e[8] = {0};
      struct window_spec w;
      struct ref_case *c = ref_case_add(out, op->op, "%s explicit %s", op->op,
                                        fmt ? "NCHW" : "NHWC");
      pool_attrs(c, &w, (int64_t[]){1, 3, 3}, (int64_t[]){1, 2, 1},
                 "EXPLICIT", fmt == 1);
      int h = fmt ? 2 : 1, wd = h + 1;
      e[2 * h] = 1;
      e[2 * h + 1] = 2;
      e[2 * wd] = 2;
      e[2 * wd + 1] = 0;
      ref_case_attr_ints(c, "explicit_paddings", e, 8);
      image_dims(dims, false, fmt == 1, 2, (int64_t[]){1, 5, 6}, 3);
      pool_inputs(c, dtype, dims, 4, &w, NULL);
    }
    struct ref_case *c =
        ref_case_add(out, op->op, "%s explicit padding wider than window",
                     op->op);
    ref_case_attr_ints(c, "ksize", (int64_t[]){1, 2, 2, 1}, 4);
    ref_case_attr_ints(c, "strides", (int64_t[]){1, 1, 1, 1}, 4);
    ref_case_attr_string(c, "padding", "EXPLICIT");
    ref_case_attr_ints(c, "explicit_paddings",
                       (int64_t[]){0, 0, 2, 0, 0, 0, 0, 0}, 8);
    for (int i = 0; i < (f == GRAD ? 3 : 1); i++)
      ref_case_input(c, dtype, (int64_t[]){1, 4, 4, 1}, 4, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s explicit padding on depth", op->op);
    ref_case_attr_ints(c, "ksize", (int64_t[]){1, 2, 2, 1}, 4);
    ref_case_attr_ints(c, "strides", (int64_t[]){1, 1, 1, 1}, 4);
    ref_case_attr_string(c, "padding", "EXPLICIT");
    ref_case_attr_ints(c, "explicit_paddings",
                       (int64_t[]){0, 0, 0, 0, 0, 0, 1, 0}, 8);
    for (int i = 0; i < (f == GRAD ? 3 : 1); i++)
      ref_case_input(c, dtype, (int64_t[]){1, 4, 4, 1}, 4, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
  }

  /* Failing cases: TensorFlow's codes (the messages are checked against
   * TensorFlow's own in tests/tf/test_pool.py). */
  int rank = three ? 5 : 4;
  int64_t img[5], ones[5] = {1, 1, 1, 1, 1}, k2[5] = {1, 2, 2, 2, 1};
  if (!three)
    k2[3] = 1;
  image_dims(img, three, false, 1, (int64_t[]){2, 4, 4}, 1);
  fail_case(out, op, dtype, "ksize too short", k2, rank - 1, ones, rank,
            "VALID", NULL, img, rank, TF_INVALID_ARGUMENT);
  fail_case(out, op, dtype, "strides too short", k2, rank, ones, rank - 1,
            "VALID", NULL, img, rank, TF_INVALID_ARGUMENT);
  fail_case(out, op, dtype, "pooling over the batch",
            (int64_t[]){2, 1, 1, 1, 1}, rank, ones, rank, "VALID", NULL, img,
            rank, TF_UNIMPLEMENTED);
  int64_t kd[5] = {1, 1, 1, 1, 2};
  if (!three)
    kd[3] = 2;
  fail_case(out, op, dtype, "pooling over the depth", kd, rank, ones, rank,
            "VALID", NULL, img, rank, TF_UNIMPLEMENTED);
  int64_t s0[5] = {1, 1, 0, 1, 1};
  fail_case(out, op, dtype, "zero stride", k2, rank, s0, rank, "VALID", NULL,
            img, rank, TF_INVALID_ARGUMENT);
  int64_t k5[5] = {1, 1, 5, 5, 1};
  if (!three)
    k5[3] = 1;
  int64_t small[5];
  image_dims(small, three, false, 1, (int64_t[]){2, 2, 2}, 1);
  if (f == FWD)
    fail_case(out, op, dtype, "negative output size", k5, rank, ones, rank,
              "VALID", NULL, small, rank, TF_INVALID_ARGUMENT);
  fail_case(out, op, dtype, "bad data_format", k2, rank, ones, rank, "VALID",
            "NWHC", img, rank, TF_INVALID_ARGUMENT);
  int64_t r3[3] = {4, 4, 1};
  if (f != GRAD || is_max)
    fail_case(out, op, dtype, "rank too low", k2, rank, ones, rank, "VALID",
              NULL, r3, 3, TF_INVALID_ARGUMENT);
  if (three && f == FWD) {
    int64_t k0[5] = {1, 0, 2, 2, 1};
    fail_case(out, op, dtype, "zero ksize", k0, 5, ones, 5, "VALID", NULL,
              img, 5, TF_INVALID_ARGUMENT);
  }
  if (!three && !is_v2(op->op)) {
    int64_t k0[4] = {1, 0, 2, 1};
    fail_case(out, op, dtype, "zero ksize", k0, 4, ones, 4, "VALID", NULL,
              img, 4, TF_INVALID_ARGUMENT);
  }
  if (!is_v2(op->op)) {
    /* TensorFlow reads ksize and strides as int32 lists. */
    int64_t kbig[5] = {1, (int64_t)1 << 40, 1, 1, 1};
    fail_case(out, op, dtype, "ksize beyond int32", kbig, rank, ones, rank,
              "SAME", NULL, img, rank, TF_INVALID_ARGUMENT);
    int64_t sbig[5] = {1, 1, (int64_t)1 << 33, 1, 1};
    fail_case(out, op, dtype, "stride beyond int32", k2, rank, sbig, rank,
              "SAME", NULL, img, rank, TF_INVALID_ARGUMENT);
  }
  if (!three && is_max && f != FWD) {
    int64_t sdepth[4] = {1, 1, 1, 2};
    fail_case(out, op, dtype, "stride across the depth", k2, 4, sdepth, 4,
              "VALID", NULL, img, 4, TF_UNIMPLEMENTED);
  }

  /* Mismatched companion shapes. */
  struct ref_case *c;
  int64_t x_dims[5], y_dims[5], bad[5];
  image_dims(x_dims, three, false, 1, (int64_t[]){2, 4, 4}, 2);
  image_dims(y_dims, three, false, 1, (int64_t[]){1, 2, 2}, 2);
  image_dims(bad, three, false, 1, (int64_t[]){1, 2, 2}, 3);
  int64_t kk[5], ss[5];
  int64_t win3[3] = {three ? 2 : 1, 2, 2};
  struct window_spec w;
  (void)kk;
  (void)ss;
  if (f == GRAD && is_max) {
    c = ref_case_add(out, op->op, "%s wrong orig_output shape", op->op);
    pool_attrs(c, &w, win3, win3, "VALID", false);
    ref_case_input(c, dtype, x_dims, rank, REF_ANY);
    ref_case_input(c, dtype, bad, rank, REF_ANY);
    ref_case_input(c, dtype, y_dims, rank, REF_ANY);
    if (is_v2(op->op)) {
      int_vector(c, w.k, rank);
      int_vector(c, w.s, rank);
    }
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s wrong grad shape", op->op);
    pool_attrs(c, &w, win3, win3, "VALID", false);
    ref_case_input(c, dtype, x_dims, rank, REF_ANY);
    ref_case_input(c, dtype, y_dims, rank, REF_ANY);
    ref_case_input(c, dtype, bad, rank, REF_ANY);
    if (is_v2(op->op)) {
      int_vector(c, w.k, rank);
      int_vector(c, w.s, rank);
    }
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s grad of rank %d", op->op, rank - 1);
    pool_attrs(c, &w, win3, win3, "VALID", false);
    ref_case_input(c, dtype, x_dims, rank, REF_ANY);
    ref_case_input(c, dtype, y_dims, rank, REF_ANY);
    ref_case_input(c, dtype, y_dims + 1, rank - 1, REF_ANY);
    if (is_v2(op->op)) {
      int_vector(c, w.k, rank);
      int_vector(c, w.s, rank);
    }
    c->expect_code = TF_INVALID_ARGUMENT;
  } else if (f == GRAD) {
    double sv[5];
    c = ref_case_add(out, op->op, "%s shape of %d", op->op, rank - 1);
    pool_attrs(c, &w, win3, win3, "VALID", false);
    for (int i = 0; i < rank; i++)
      sv[i] = (double)x_dims[i];
    ref_case_input_values(c, TF_INT32, (int64_t[]){rank - 1}, 1, sv);
    ref_case_input(c, dtype, y_dims, rank, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s wrong grad shape", op->op);
    pool_attrs(c, &w, win3, win3, "VALID", false);
    ref_case_input_values(c, TF_INT32, (int64_t[]){rank}, 1, sv);
    ref_case_input(c, dtype, bad, rank, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s wrong grad batch", op->op);
    pool_attrs(c, &w, win3, win3, "VALID", false);
    ref_case_input_values(c, TF_INT32, (int64_t[]){rank}, 1, sv);
    int64_t b2[5];
    memcpy(b2, y_dims, sizeof(b2));
    b2[0] = 2;
    ref_case_input(c, dtype, b2, rank, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s negative dim", op->op);
    pool_attrs(c, &w, win3, win3, "VALID", false);
    sv[1] = -4;
    ref_case_input_values(c, TF_INT32, (int64_t[]){rank}, 1, sv);
    ref_case_input(c, dtype, y_dims, rank, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
  } else if (f == GRAD_GRAD) {
    c = ref_case_add(out, op->op, "%s wrong orig_output shape", op->op);
    pool_attrs(c, &w, win3, win3, "VALID", false);
    ref_case_input(c, dtype, x_dims, rank, REF_ANY);
    ref_case_input(c, dtype, bad, rank, REF_ANY);
    ref_case_input(c, dtype, x_dims, rank, REF_ANY);
    if (is_v2(op->op)) {
      int_vector(c, w.k, rank);
      int_vector(c, w.s, rank);
    }
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s grad not of orig_input's shape", op->op);
    pool_attrs(c, &w, win3, win3, "VALID", false);
    ref_case_input(c, dtype, x_dims, rank, REF_ANY);
    ref_case_input(c, dtype, y_dims, rank, REF_ANY);
    ref_case_input(c, dtype, y_dims, rank, REF_ANY);
    if (is_v2(op->op)) {
      int_vector(c, w.k, rank);
      int_vector(c, w.s, rank);
    }
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

/* The empty batch of MaxPool3DGradGrad fails in TensorFlow ("received empty
 * tensor"): its case above expects success only where the op allows it. */
static void pool3d_grad_grad_cases(const struct ref_op *op, TF_DataType dtype,
                                   struct ref_cases *out)
{
  int first = out->count;
  pool_cases(op, dtype, out);
  for (int i = first; i < out->count; i++)
    if (strstr(out->items[i].label, "empty batch") != NULL)
      out->items[i].expect_code = TF_INVALID_ARGUMENT;
}

/* ---- MaxPoolWithArgmax and its gradients --------------------------------- */

/* The argmax of a flat input index i of batch n: ((n * H + h) * W + w) * C
 * + c with include_batch_in_index, else less the n term. */
static int64_t argmax_base(const struct pool *p, int64_t n, bool with_batch)
{
  return with_batch ? 0 : n * p->in[1] * p->in[2] * p->depth;
}

/* MaxPoolWithArgmax: the first strictly greater element of each window
 * (from the lowest finite value; -1 where none is). MaxPoolGradWithArgmax:
 * each gradient added at its argmax, in output order.
 * MaxPoolGradGradWithArgmax: the input-shaped gradient at each argmax. */
static int argmax_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  bool with_batch = ref_case_attr_bool_or(c, "include_batch_in_index", false);
  struct pool p;
  int64_t o[3], lo[3], hi[3], i[3];
  if (x->rank != 4 || !pool_of(c, x->dims, &p)) {
    snprintf(error, (size_t)error_len, "bad pooling");
    return -1;
  }
  if (!strcmp(c->op, "MaxPoolWithArgmax")) {
    ref_tensor_alloc(&out[0], x->dtype, p.out_dims, 4);
    ref_tensor_alloc(&out[1], TF_INT64, p.out_dims, 4);
    FOR_OUTPUTS(&p, n, ch, o) {
      window(&p, o, lo, hi);
      double best = lowest(x->dtype);
      int64_t best_at = -1;
      FOR_WINDOW(lo, hi, i) {
        int64_t at_in = at(&p, n, ch, 0, i[1], i[2], p.in);
        if (x->v[at_in] > best) {
          best = x->v[at_in];
          best_at = at_in - argmax_base(&p, n, with_batch);
        }
      }
      int64_t at_out = at(&p, n, ch, 0, o[1], o[2], p.out);
      out[0].v[at_out] = best;
      out[1].v[at_out] = (double)best_at;
    }
    return 2;
  }
  const struct ref_tensor *g = &c->inputs[1], *arg = &c->inputs[2];
  bool grad = !strcmp(c->op, "MaxPoolGradWithArgmax");
  if (!same_shape(g, grad ? p.out_dims : x->dims, 4) ||
      !same_shape(arg, p.out_dims, 4)) {
    snprintf(error, (size_t)error_len, "shapes differ");
    return -1;
  }
  int64_t per_out = p.out[1] * p.out[2] * p.depth;
  ref_tensor_alloc(&out[0], x->dtype, grad ? x->dims : p.out_dims, 4);
  for (int64_t j = 0; j < arg->elements; j++) {
    int64_t n = j / per_out;
    int64_t at_in = (int64_t)arg->v[j] + argmax_base(&p, n, with_batch);
    if (at_in < 0 || at_in >= x->elements)
      continue;
    if (grad)
      out[0].v[at_in] += g->v[j];
    else
      out[0].v[j] = g->v[at_in];
  }
  for (int64_t j = 0; j < out[0].elements; j++)
    out[0].v[j] = ref_round_to(x->dtype, out[0].v[j]);
  return 1;
}

/* One case: x of [n, h, w, depth] (values, or random distinct-ish), the
 * window and stride square; the gradients' argmax from MaxPoolWithArgmax
 * of x. */
static void argmax_case(struct ref_cases *out, const struct ref_op *op,
                        TF_DataType dtype, const int64_t *dims, int64_t win,
                        int64_t str, const char *padding, bool with_batch,
                        const double *values, const char *what)
{
  struct ref_case *c = ref_case_add(
      out, op->op, "%s %s [%lld,%lld,%lld,%lld] %lldx%lld/%lld %s%s", op->op,
      what, (long long)dims[0], (long long)dims[1], (long long)dims[2],
      (long long)dims[3], (long long)win, (long long)win, (long long)str,
      padding, with_batch ? " batch in index" : "");
  int64_t k[4] = {1, win, win, 1}, s[4] = {1, str, str, 1};
  ref_case_attr_ints(c, "ksize", k, 4);
  ref_case_attr_ints(c, "strides", s, 4);
  ref_case_attr_string(c, "padding", padding);
  ref_case_attr_bool(c, "include_batch_in_index", with_batch);
  if (strcmp(op->op, "MaxPoolGradWithArgmax") &&
      strcmp(op->op, "MaxPoolGradGradWithArgmax")) {
    if (values != NULL)
      ref_case_input_values(c, dtype, dims, 4, values);
    else
      ref_case_input(c, dtype, dims, 4, REF_ANY);
    return;
  }
  ref_case_attr_type(c, "Targmax", TF_INT64);
  const struct ref_tensor *x =
      values != NULL ? ref_case_input_values(c, dtype, dims, 4, values)
                     : ref_case_input(c, dtype, dims, 4, REF_ANY);
  struct pool p;
  int64_t out_dims[4] = {0, 0, 0, 0};
  bool ok = pool_of(c, dims, &p);
  if (ok)
    memcpy(out_dims, p.out_dims, sizeof(out_dims));
  bool grad = !strcmp(op->op, "MaxPoolGradWithArgmax");
  ref_case_input(c, dtype, grad ? out_dims : dims, 4, REF_ANY);
  struct ref_tensor *arg = ref_case_input(c, TF_INT64, out_dims, 4, REF_ANY);
  struct ref_case fwd = *c;
  struct ref_tensor pooled[2];
  char error[64];
  snprintf(fwd.op, sizeof(fwd.op), "MaxPoolWithArgmax");
  fwd.num_inputs = 1;
  if (ok && x != NULL &&
      argmax_compute(&fwd, pooled, error, sizeof(error)) == 2) {
    memcpy(arg->v, pooled[1].v, sizeof(double) * (size_t)arg->elements);
    ref_tensor_finish(&pooled[0]);
    ref_tensor_finish(&pooled[1]);
  }
}

static void argmax_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  bool sim = ref_on_oclgrind();
  for (int b = 0; b < 2; b++) {
    argmax_case(out, op, dtype, (int64_t[]){2, 5, 7, 3}, 2, 2, "VALID", b,
                NULL, "");
    argmax_case(out, op, dtype, (int64_t[]){3, 7, 5, 4}, 3, 2, "SAME", b,
                NULL, "overlapping");
    if (!sim)
      argmax_case(out, op, dtype, (int64_t[]){2, 17, 19, 9}, 3, 1, "SAME",
                  b, NULL, "large");
  }
  /* Ties (few distinct values) and a window with nothing above the lowest
   * finite value (argmax -1: its gradient goes nowhere). */
  static double tied[2 * 6 * 5 * 2];
  for (size_t i = 0; i < sizeof(tied) / sizeof(tied[0]); i++)
    tied[i] = (double)((i * 7 + i / 5) % 3);
  argmax_case(out, op, dtype, (int64_t[]){2, 6, 5, 2}, 3, 1, "SAME", true,
              tied, "ties");
  static double lows[1 * 2 * 2 * 2] = {-INFINITY, 1, NAN, 2, -INFINITY, 3,
                                       NAN, 4};
  if (strcmp(op->op, "MaxPoolGradWithArgmax") != 0)
    argmax_case(out, op, dtype, (int64_t[]){1, 2, 2, 2}, 2, 2, "VALID",
                false, lows, "-inf and NaN");
  argmax_case(out, op, dtype, (int64_t[]){0, 4, 4, 3}, 2, 2, "VALID", false,
              NULL, "empty batch");
  argmax_case(out, op, dtype, (int64_t[]){1, 2, 2, 2}, 3, 1, "VALID", false,
              NULL, "window wider than the image");

  struct ref_case *c;
  bool fwd = !strcmp(op->op, "MaxPoolWithArgmax");
  c = ref_case_add(out, op->op, "%s ksize of 3", op->op);
  ref_case_attr_ints(c, "ksize", (int64_t[]){1, 2, 2}, 3);
  ref_case_attr_ints(c, "strides", (int64_t[]){1, 1, 1, 1}, 4);
  ref_case_attr_string(c, "padding", "VALID");
  for (int i = 0; i < (fwd ? 1 : 2); i++)
    ref_case_input(c, dtype, (int64_t[]){1, 3, 3, 1}, 4, REF_ANY);
  if (!fwd)
    ref_case_input(c, TF_INT64, (int64_t[]){1, 2, 2, 1}, 4, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
  if (!fwd) {
    /* grad's shape, then argmax's. */
    for (int which = 1; which <= 2; which++) {
      bool grad = !strcmp(op->op, "MaxPoolGradWithArgmax");
      c = ref_case_add(out, op->op, "%s wrong %s shape", op->op,
                       which == 1 ? "grad" : "argmax");
      ref_case_attr_ints(c, "ksize", (int64_t[]){1, 2, 2, 1}, 4);
      ref_case_attr_ints(c, "strides", (int64_t[]){1, 1, 1, 1}, 4);
      ref_case_attr_string(c, "padding", "VALID");
      ref_case_input(c, dtype, (int64_t[]){1, 3, 3, 1}, 4, REF_ANY);
      int64_t good[4] = {1, grad ? 2 : 3, grad ? 2 : 3, 1};
      ref_case_input(c, dtype, which == 1 ? (int64_t[]){1, 2, 2, 2} : good, 4,
                     REF_ANY);
      ref_case_input(c, TF_INT64,
                     which == 2 ? (int64_t[]){1, 2, 2, 2}
                                : (int64_t[]){1, 2, 2, 1},
                     4, REF_ANY);
      c->expect_code = TF_INVALID_ARGUMENT;
    }
  }
}

/* ---- LRN and LRNGrad ---------------------------------------------------- */

/* The channels [*lo, *hi) of channel d's window. */
static void lrn_window(int64_t d, int64_t depth, int64_t radius, int64_t *lo,
                       int64_t *hi)
{
  *lo = d > radius ? d - radius : 0;
  *hi = d + radius + 1 < depth ? d + radius + 1 : depth;
}

/* N = bias + alpha * (sum of squares over channel d's window) of row x. */
static double lrn_norm(const double *x, int64_t d, int64_t depth,
                       int64_t radius, double bias, double alpha)
{
  int64_t lo, hi;
  double sum = 0.0;
  lrn_window(d, depth, radius, &lo, &hi);
  for (int64_t k = lo; k < hi; k++)
    sum += x[k] * x[k];
  return bias + alpha * sum;
}

/* LRN: y = x * N^-beta; LRNGrad: TensorFlow's CPU loop, in float64. */
static int lrn_compute(const struct ref_case *c, struct ref_tensor *out,
                       char *error, int error_len)
{
  bool grad = !strcmp(c->op, "LRNGrad");
  const struct ref_tensor *x = &c->inputs[grad ? 1 : 0];
  int64_t radius = ref_case_attr_int_or(c, "depth_radius", 5);
  double bias = ref_case_attr_float_or(c, "bias", 1.0);
  double alpha = ref_case_attr_float_or(c, "alpha", 1.0);
  double beta = ref_case_attr_float_or(c, "beta", 0.5);
  if (x->rank != 4 || radius < 0) {
    snprintf(error, (size_t)error_len, "bad LRN");
    return -1;
  }
  if (grad) {
    for (int i = 0; i < 3; i++)
      if (!same_shape(&c->inputs[i], x->dims, 4)) {
        snprintf(error, (size_t)error_len, "shapes differ");
        return -1;
      }
  }
  int64_t depth = x->dims[3];
  int64_t rows = depth == 0 ? 0 : x->elements / depth;
  ref_tensor_alloc(&out[0], x->dtype, x->dims, 4);
  for (int64_t r = 0; r < rows; r++) {
    const double *xr = x->v + r * depth;
    double *o = out[0].v + r * depth;
    if (!grad) {
      for (int64_t d = 0; d < depth; d++)
        o[d] = xr[d] * pow(lrn_norm(xr, d, depth, radius, bias, alpha), -beta);
      continue;
    }
    const double *g = c->inputs[0].v + r * depth;
    const double *y = c->inputs[2].v + r * depth;
    for (int64_t d = 0; d < depth; d++)
      o[d] = 0.0;
    for (int64_t j = 0; j < depth; j++) {
      int64_t lo, hi;
      if (g[j] == 0.0)
        continue;
      double norm = lrn_norm(xr, j, depth, radius, bias, alpha);
      double p = pow(norm, -beta);
      lrn_window(j, depth, radius, &lo, &hi);
      for (int64_t k = lo; k < hi; k++) {
        double dyi = -2.0 * alpha * beta * xr[k] * y[j] / norm;
        if (k == j)
          dyi += p;
        o[k] += dyi * g[j];
      }
    }
  }
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = ref_round_to(x->dtype, out[0].v[i]);
  return 1;
}

static void lrn_attrs(struct ref_case *c, int64_t radius, float bias,
                      float alpha, float beta)
{
  ref_case_attr_int(c, "depth_radius", radius);
  ref_case_attr_float(c, "bias", bias);
  ref_case_attr_float(c, "alpha", alpha);
  ref_case_attr_float(c, "beta", beta);
}

/* One case over x of dims; LRNGrad's output_image is LRN of x. */
static struct ref_case *lrn_case(struct ref_cases *out, const struct ref_op *op,
                                 TF_DataType dtype, const int64_t *dims,
                                 int64_t radius, float bias, float alpha,
                                 float beta, const char *what)
{
  bool grad = !strcmp(op->op, "LRNGrad");
  struct ref_case *c = ref_case_add(
      out, op->op, "%s %s [%lld,%lld,%lld,%lld] r=%lld b=%g a=%g beta=%g",
      op->op, what, (long long)dims[0], (long long)dims[1],
      (long long)dims[2], (long long)dims[3], (long long)radius, bias, alpha,
      beta);
  lrn_attrs(c, radius, bias, alpha, beta);
  if (!grad) {
    ref_case_input(c, dtype, dims, 4, REF_ANY);
    return c;
  }
  ref_case_input(c, dtype, dims, 4, REF_ANY);
  ref_case_input(c, dtype, dims, 4, REF_ANY);
  struct ref_tensor *y = ref_case_input(c, dtype, dims, 4, REF_ANY);
  struct ref_case fwd = *c;
  struct ref_tensor pooled;
  snprintf(fwd.op, sizeof(fwd.op), "LRN");
  fwd.inputs[0] = c->inputs[1];
  fwd.num_inputs = 1;
  char error[64];
  if (lrn_compute(&fwd, &pooled, error, sizeof(error)) == 1) {
    memcpy(y->v, pooled.v, sizeof(double) * (size_t)y->elements);
    ref_tensor_finish(&pooled);
  }
  return c;
}

static void lrn_cases(const struct ref_op *op, TF_DataType dtype,
                      struct ref_cases *out)
{
  bool grad = !strcmp(op->op, "LRNGrad");
  lrn_case(out, op, dtype, (int64_t[]){2, 3, 5, 7}, 5, 1.0f, 1.0f, 0.5f,
           "defaults");
  lrn_case(out, op, dtype, (int64_t[]){1, 2, 3, 37}, 2, 2.0f, 1e-2f, 0.75f,
           "AlexNet");
  lrn_case(out, op, dtype, (int64_t[]){3, 1, 4, 16}, 1, 1.0f, 0.5f, 1.0f,
           "beta 1");
  lrn_case(out, op, dtype, (int64_t[]){1, 3, 3, 5}, 0, 0.5f, 2.0f, 0.3f,
           "radius 0");
  lrn_case(out, op, dtype, (int64_t[]){2, 1, 1, 9}, 100, 1.5f, 0.1f, 0.6f,
           "radius beyond depth");
  /* Long rows: the CPU shape's carried window sum. */
  if (!ref_on_oclgrind())
    lrn_case(out, op, dtype, (int64_t[]){1, 1, 3, 300}, 4, 1.0f, 1e-3f,
             0.75f, "long rows");
  lrn_case(out, op, dtype, (int64_t[]){0, 3, 5, 7}, 5, 1.0f, 1.0f, 0.5f,
           "empty batch");
  lrn_case(out, op, dtype, (int64_t[]){2, 3, 5, 0}, 5, 1.0f, 1.0f, 0.5f,
           "no channels");
  struct ref_case *c;
  c = ref_case_add(out, op->op, "%s 3-D input", op->op);
  lrn_attrs(c, 2, 1.0f, 1.0f, 0.5f);
  for (int i = 0; i < (grad ? 3 : 1); i++)
    ref_case_input(c, dtype, (int64_t[]){3, 5, 7}, 3, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s negative radius", op->op);
  lrn_attrs(c, -1, 1.0f, 1.0f, 0.5f);
  for (int i = 0; i < (grad ? 3 : 1); i++)
    ref_case_input(c, dtype, (int64_t[]){1, 2, 2, 3}, 4, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
  if (grad) {
    c = ref_case_add(out, op->op, "%s shapes differ", op->op);
    lrn_attrs(c, 2, 1.0f, 1.0f, 0.5f);
    ref_case_input(c, dtype, (int64_t[]){1, 2, 2, 3}, 4, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){1, 2, 2, 3}, 4, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){1, 2, 3, 3}, 4, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

const struct ref_op ref_ops_pool[] = {
    {"MaxPool", 0, 0, REF_ANY, pool_cases, pool_compute},
    {"MaxPoolV2", 0, 0, REF_ANY, pool_cases, pool_compute},
    {"AvgPool", 1e-5, 1e-6, REF_ANY, pool_cases, pool_compute},
    {"MaxPool3D", 0, 0, REF_ANY, pool_cases, pool_compute},
    {"AvgPool3D", 1e-5, 1e-6, REF_ANY, pool_cases, pool_compute},
    {"MaxPoolGrad", 1e-5, 1e-6, REF_ANY, pool_cases, pool_grad_compute},
    {"MaxPoolGradV2", 1e-5, 1e-6, REF_ANY, pool_cases, pool_grad_compute},
    {"AvgPoolGrad", 1e-5, 1e-6, REF_ANY, pool_cases, pool_grad_compute},
    {"MaxPool3DGrad", 1e-5, 1e-6, REF_ANY, pool_cases, pool_grad_compute},
    {"AvgPool3DGrad", 1e-5, 1e-6, REF_ANY, pool_cases, pool_grad_compute},
    {"MaxPoolGradGrad", 0, 0, REF_ANY, pool_cases, pool_grad_grad_compute},
    {"MaxPoolGradGradV2", 0, 0, REF_ANY, pool_cases, pool_grad_grad_compute},
    {"MaxPool3DGradGrad", 0, 0, REF_ANY, pool3d_grad_grad_cases,
     pool_grad_grad_compute},
    /* LRN sums 2r + 1 squares in float and takes a power of it; the
     * gradient adds 2r + 1 products of those. */
    {"MaxPoolWithArgmax", 0, 0, REF_ANY, argmax_cases, argmax_compute},
    /* Sums in output order, as the device adds them. */
    {"MaxPoolGradWithArgmax", 1e-5, 1e-6, REF_ANY, argmax_cases,
     argmax_compute},
    {"MaxPoolGradGradWithArgmax", 0, 0, REF_ANY, argmax_cases,
     argmax_compute},
    {"LRN", 1e-5, 1e-6, REF_ANY, lrn_cases, lrn_compute},
    {"LRNGrad", 1e-4, 1e-5, REF_ANY, lrn_cases, lrn_compute},
    {.op = NULL},
};
