/* References of the pooling and batch-normalisation kernel family:
 * MaxPool, MaxPoolGrad, AvgPool, AvgPoolGrad, FusedBatchNormV3,
 * FusedBatchNormGradV3 (kernels/pool.c), in float64.
 *
 * Semantics are TensorFlow's CPU kernels': MaxPool starts from the lowest
 * finite value and takes strictly greater elements (NaN never wins, a
 * window of -inf gives the lowest finite value); MaxPoolGrad routes each
 * gradient to the first maximum of its window in row-major order (ties to
 * the first); AvgPool and AvgPoolGrad divide by the count of in-bounds
 * elements of each window (SAME padding). FusedBatchNormV3 training
 * normalises with the batch mean and biased variance, returns the
 * Bessel-corrected variance as batch_variance, blended with the incoming
 * statistics when exponential_avg_factor != 1, keeps the batch mean and
 * biased variance in reserve_space_1/2 and an empty reserve_space_3;
 * inference passes the given mean and variance through (also into
 * reserve_space_1/2, where TensorFlow's CPU kernel leaves them
 * uninitialised). An empty x gives NaN statistics.
 *
 * Tolerances (float32): MaxPool selects, so it is exact; MaxPoolGrad sums
 * the same gradients in the same order as the device, AvgPool and
 * AvgPoolGrad sum at most 9 terms in float: rtol 1e-5, atol 1e-6. Batch
 * norm reduces up to ~1000 elements per channel in float (work-group tree)
 * and cancels (x - mean, dy - mean(dy)): rtol 1e-4, atol 1e-4 on values of
 * the order of the per-channel scale (inputs in [-3, 3]); the gradient's
 * sums (scale_backprop, offset_backprop) grow with the channel's element
 * count: atol 5e-4. half widens these by REF_HALF_FACTOR. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

/* ---- Pooling parameters ---------------------------------------------------- */

struct pool {
  bool nchw;
  int64_t n, rows, cols, depth;
  int64_t wr, wc, sr, sc;
  int64_t out_rows, out_cols;
  int64_t pad_top, pad_left;
  int64_t out_dims[4];
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

/* The pooling problem of an image of dims `dims` under c's attributes;
 * false for what the op rejects. */
static bool pool_of(const struct ref_case *c, const int64_t *dims,
                    struct pool *p)
{
  const struct tfocl_attr *ks = ref_case_attr(c, "ksize");
  const struct tfocl_attr *st = ref_case_attr(c, "strides");
  const struct tfocl_attr *ep = ref_case_attr(c, "explicit_paddings");
  const char *padding = ref_case_attr_string_or(c, "padding", "VALID");
  if (ks == NULL || st == NULL || ks->value.ints.count != 4 ||
      st->value.ints.count != 4)
    return false;
  p->nchw = !strcmp(ref_case_attr_string_or(c, "data_format", "NHWC"), "NCHW");
  int h = p->nchw ? 2 : 1, w = h + 1, ch = p->nchw ? 1 : 3;
  const int64_t *k = ks->value.ints.items, *s = st->value.ints.items;
  int64_t e[8] = {0};
  if (!strcmp(padding, "EXPLICIT")) {
    if (ep == NULL || ep->value.ints.count != 8)
      return false;
    memcpy(e, ep->value.ints.items, sizeof(e));
  }
  if (k[0] != 1 || s[0] != 1 || k[ch] != 1 || s[h] < 1 || s[w] < 1)
    return false;
  p->n = dims[0];
  p->rows = dims[h];
  p->cols = dims[w];
  p->depth = dims[ch];
  p->wr = k[h];
  p->wc = k[w];
  p->sr = s[h];
  p->sc = s[w];
  p->out_rows = out_size(p->rows, p->wr, p->sr, padding, e[2 * h],
                         e[2 * h + 1], &p->pad_top);
  p->out_cols = out_size(p->cols, p->wc, p->sc, padding, e[2 * w],
                         e[2 * w + 1], &p->pad_left);
  if (p->out_rows < 0 || p->out_cols < 0)
    return false;
  p->out_dims[0] = p->n;
  p->out_dims[h] = p->out_rows;
  p->out_dims[w] = p->out_cols;
  p->out_dims[ch] = p->depth;
  return true;
}

static int64_t at(const struct pool *p, int64_t n, int64_t c, int64_t h,
                  int64_t w, int64_t rows, int64_t cols)
{
  return p->nchw ? ((n * p->depth + c) * rows + h) * cols + w
                 : ((n * rows + h) * cols + w) * p->depth + c;
}

/* In-bounds window [h0, h1) x [w0, w1) of output (oh, ow). */
static void window(const struct pool *p, int64_t oh, int64_t ow, int64_t *h0,
                   int64_t *h1, int64_t *w0, int64_t *w1)
{
  int64_t hs = oh * p->sr - p->pad_top, ws = ow * p->sc - p->pad_left;
  *h0 = hs < 0 ? 0 : hs;
  *h1 = hs + p->wr < p->rows ? hs + p->wr : p->rows;
  *w0 = ws < 0 ? 0 : ws;
  *w1 = ws + p->wc < p->cols ? ws + p->wc : p->cols;
}

static double lowest(TF_DataType dtype)
{
  return dtype == TF_HALF ? -65504.0 : -FLT_MAX;
}

/* Visits every output position. */
#define FOR_OUTPUTS(p, n, c, oh, ow)              \
  for (int64_t n = 0; n < (p)->n; n++)            \
    for (int64_t c = 0; c < (p)->depth; c++)      \
      for (int64_t oh = 0; oh < (p)->out_rows; oh++) \
        for (int64_t ow = 0; ow < (p)->out_cols; ow++)

static int pool_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  struct pool p;
  bool is_max = !strcmp(c->op, "MaxPool");
  if (x->rank != 4 || !pool_of(c, x->dims, &p)) {
    snprintf(error, (size_t)error_len, "bad pooling");
    return -1;
  }
  ref_tensor_alloc(&out[0], x->dtype, p.out_dims, 4);
  FOR_OUTPUTS(&p, n, ch, oh, ow) {
    int64_t h0, h1, w0, w1;
    window(&p, oh, ow, &h0, &h1, &w0, &w1);
    double acc = is_max ? lowest(x->dtype) : 0.0;
    for (int64_t h = h0; h < h1; h++)
      for (int64_t w = w0; w < w1; w++) {
        double v = x->v[at(&p, n, ch, h, w, p.rows, p.cols)];
        if (!is_max)
          acc += v;
        else if (acc < v)
          acc = v;
      }
    if (!is_max)
      acc /= (double)((h1 - h0) * (w1 - w0));
    out[0].v[at(&p, n, ch, oh, ow, p.out_rows, p.out_cols)] =
        ref_round_to(x->dtype, acc);
  }
  return 1;
}

static bool same_shape(const struct ref_tensor *t, const int64_t *dims)
{
  if (t->rank != 4)
    return false;
  for (int i = 0; i < 4; i++)
    if (t->dims[i] != dims[i])
      return false;
  return true;
}

static int pool_grad_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  bool is_max = !strcmp(c->op, "MaxPoolGrad");
  const struct ref_tensor *x = is_max ? &c->inputs[0] : NULL;
  const struct ref_tensor *dy = &c->inputs[is_max ? 2 : 1];
  int64_t dims[4];
  struct pool p;
  TF_DataType dtype = dy->dtype;
  if (is_max) {
    if (x->rank != 4) {
      snprintf(error, (size_t)error_len, "bad rank");
      return -1;
    }
    memcpy(dims, x->dims, sizeof(dims));
  } else {
    if (c->inputs[0].elements != 4) {
      snprintf(error, (size_t)error_len, "bad shape vector");
      return -1;
    }
    for (int i = 0; i < 4; i++)
      dims[i] = (int64_t)c->inputs[0].v[i];
  }
  ref_tensor_alloc(&out[0], dtype, dims, 4);
  if (out[0].elements == 0)
    return 1;
  if (!pool_of(c, dims, &p) || !same_shape(dy, p.out_dims) ||
      (is_max && !same_shape(&c->inputs[1], p.out_dims))) {
    snprintf(error, (size_t)error_len, "bad pooling");
    return -1;
  }
  FOR_OUTPUTS(&p, n, ch, oh, ow) {
    int64_t h0, h1, w0, w1, arg = -1;
    double best = lowest(dtype);
    window(&p, oh, ow, &h0, &h1, &w0, &w1);
    double g = dy->v[at(&p, n, ch, oh, ow, p.out_rows, p.out_cols)];
    for (int64_t h = h0; h < h1; h++)
      for (int64_t w = w0; w < w1; w++) {
        int64_t i = at(&p, n, ch, h, w, p.rows, p.cols);
        if (!is_max)
          out[0].v[i] += g / (double)((h1 - h0) * (w1 - w0));
        else if (arg < 0 || best < x->v[i]) {
          best = x->v[i];
          arg = i;
        }
      }
    if (is_max)
      out[0].v[arg] += g;
  }
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = ref_round_to(dtype, out[0].v[i]);
  return 1;
}

/* ---- Pooling cases ------------------------------------------------------ */

static void pool_attrs(struct ref_case *c, int64_t wr, int64_t wc, int64_t sr,
                       int64_t sc, const char *padding, bool nchw)
{
  int64_t k[4] = {1, wr, wc, 1}, s[4] = {1, sr, sc, 1};
  if (nchw) {
    k[1] = k[3] = s[1] = s[3] = 1;
    k[2] = wr;
    k[3] = wc;
    s[2] = sr;
    s[3] = sc;
    ref_case_attr_string(c, "data_format", "NCHW");
  }
  ref_case_attr_ints(c, "ksize", k, 4);
  ref_case_attr_ints(c, "strides", s, 4);
  ref_case_attr_string(c, "padding", padding);
}

/* dims of an image of batch n, rows x cols, depth channels. */
static void image_dims(int64_t *dims, bool nchw, int64_t n, int64_t rows,
                       int64_t cols, int64_t depth)
{
  dims[0] = n;
  dims[nchw ? 2 : 1] = rows;
  dims[nchw ? 3 : 2] = cols;
  dims[nchw ? 1 : 3] = depth;
}

/* The inputs of one pooling case over image `dims` (values: x's, NULL for
 * random). */
static void pool_inputs(struct ref_case *c, TF_DataType dtype,
                        const int64_t *dims, const double *values)
{
  bool grad = strstr(c->op, "Grad") != NULL;
  bool is_max = !strncmp(c->op, "Max", 3);
  struct pool p;
  if (!grad || is_max) {
    if (values != NULL)
      ref_case_input_values(c, dtype, dims, 4, values);
    else
      ref_case_input(c, dtype, dims, 4, REF_ANY);
  } else {
    double shape[4] = {(double)dims[0], (double)dims[1], (double)dims[2],
                       (double)dims[3]};
    ref_case_input_values(c, TF_INT32, (int64_t[]){4}, 1, shape);
  }
  if (!grad)
    return;
  int64_t out_dims[4] = {0, 0, 0, 0};
  if (pool_of(c, dims, &p))
    memcpy(out_dims, p.out_dims, sizeof(out_dims));
  if (is_max)
    ref_case_input(c, dtype, out_dims, 4, REF_ANY);
  ref_case_input(c, dtype, out_dims, 4, REF_ANY);
}

static void pool_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  static const int64_t shapes[][4] = {
      /* n, rows, cols, depth */
      {1, 5, 7, 3}, {3, 7, 5, 1}, {1, 9, 9, 8}, {3, 5, 5, 3}, {2, 6, 7, 8},
  };
  static const int64_t windows[] = {1, 2, 3};
  static const int64_t strides[] = {1, 2};
  static const char *const paddings[] = {"VALID", "SAME"};
  bool is_max = !strncmp(op->op, "Max", 3);
  int64_t dims[4];
  struct ref_case *c;
  int shape = 0;

  for (int f = 0; f < 2; f++)
    for (size_t wi = 0; wi < 3; wi++)
      for (size_t si = 0; si < 2; si++)
        for (size_t pi = 0; pi < 2; pi++, shape++) {
          const int64_t *s = shapes[shape % 5];
          bool nchw = f == 1;
          image_dims(dims, nchw, s[0], s[1], s[2], s[3]);
          c = ref_case_add(out, op->op, "%s %s %lldx%lld/%lld %s [%lld,%lld,%lld,%lld]",
                           op->op, nchw ? "NCHW" : "NHWC",
                           (long long)windows[wi], (long long)windows[wi],
                           (long long)strides[si], paddings[pi],
                           (long long)dims[0], (long long)dims[1],
                           (long long)dims[2], (long long)dims[3]);
          pool_attrs(c, windows[wi], windows[wi], strides[si], strides[si],
                     paddings[pi], nchw);
          pool_inputs(c, dtype, dims, NULL);
        }

  /* Non-square windows and strides, and a long odd-sized image. */
  c = ref_case_add(out, op->op, "%s 3x2/2x1 SAME", op->op);
  pool_attrs(c, 3, 2, 2, 1, "SAME", false);
  image_dims(dims, false, 2, 7, 6, 3);
  pool_inputs(c, dtype, dims, NULL);
  c = ref_case_add(out, op->op, "%s odd [1,1031,1,1]", op->op);
  pool_attrs(c, 3, 1, 2, 1, "SAME", false);
  image_dims(dims, false, 1, 1031, 1, 1);
  pool_inputs(c, dtype, dims, NULL);
  c = ref_case_add(out, op->op, "%s empty batch", op->op);
  pool_attrs(c, 2, 2, 2, 2, "VALID", false);
  image_dims(dims, false, 0, 4, 4, 3);
  pool_inputs(c, dtype, dims, NULL);
  c = ref_case_add(out, op->op, "%s window wider than the image", op->op);
  pool_attrs(c, 3, 3, 1, 1, "VALID", true);
  image_dims(dims, true, 1, 2, 2, 2);
  pool_inputs(c, dtype, dims, NULL);

  if (is_max) {
    /* Ties: few distinct values, so most windows hold several maxima. */
    static double tied[3 * 7 * 5 * 2];
    for (size_t i = 0; i < sizeof(tied) / sizeof(tied[0]); i++)
      tied[i] = (double)((i * 7 + i / 5) % 3);
    for (int f = 0; f < 2; f++)
      for (int64_t w = 2; w <= 3; w++) {
        c = ref_case_add(out, op->op, "%s ties %s %lldx%lld/1 SAME", op->op,
                         f ? "NCHW" : "NHWC", (long long)w, (long long)w);
        pool_attrs(c, w, w, 1, 1, "SAME", f == 1);
        image_dims(dims, f == 1, 3, 7, 5, 2);
        pool_inputs(c, dtype, dims, tied);
      }
    static const double constant[2 * 4 * 4] = {0};
    c = ref_case_add(out, op->op, "%s all equal", op->op);
    pool_attrs(c, 3, 3, 1, 1, "SAME", false);
    image_dims(dims, false, 2, 4, 4, 1);
    pool_inputs(c, dtype, dims, constant);
    /* NaN never wins; a window of -inf gives the lowest finite value. */
    static const double special[16] = {
        NAN, 1, -INFINITY, -INFINITY, 2, NAN, -INFINITY, -INFINITY,
        3, 4, INFINITY, 0, NAN, NAN, 5, -1};
    c = ref_case_add(out, op->op, "%s NaN and inf", op->op);
    pool_attrs(c, 2, 2, 2, 2, "VALID", false);
    image_dims(dims, false, 1, 4, 4, 1);
    pool_inputs(c, dtype, dims, special);
    /* EXPLICIT padding. */
    for (int f = 0; f < 2; f++) {
      c = ref_case_add(out, op->op, "%s explicit %s", op->op,
                       f ? "NCHW" : "NHWC");
      pool_attrs(c, 3, 3, 2, 1, "EXPLICIT", f == 1);
      int64_t e[8] = {0};
      int h = f ? 2 : 1, w = h + 1;
      e[2 * h] = 1;
      e[2 * h + 1] = 2;
      e[2 * w] = 2;
      e[2 * w + 1] = 0;
      ref_case_attr_ints(c, "explicit_paddings", e, 8);
      image_dims(dims, f == 1, 2, 5, 6, 3);
      pool_inputs(c, dtype, dims, NULL);
    }
    c = ref_case_add(out, op->op, "%s explicit padding wider than window",
                     op->op);
    pool_attrs(c, 2, 2, 1, 1, "EXPLICIT", false);
    ref_case_attr_ints(c, "explicit_paddings",
                       (int64_t[]){0, 0, 2, 0, 0, 0, 0, 0}, 8);
    image_dims(dims, false, 1, 4, 4, 1);
    pool_inputs(c, dtype, dims, NULL);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s explicit padding on depth", op->op);
    pool_attrs(c, 2, 2, 1, 1, "EXPLICIT", false);
    ref_case_attr_ints(c, "explicit_paddings",
                       (int64_t[]){0, 0, 0, 0, 0, 0, 1, 0}, 8);
    image_dims(dims, false, 1, 4, 4, 1);
    pool_inputs(c, dtype, dims, NULL);
    c->expect_code = TF_INVALID_ARGUMENT;
  }

  /* Failing cases. */
  c = ref_case_add(out, op->op, "%s ksize of 3", op->op);
  ref_case_attr_ints(c, "ksize", (int64_t[]){1, 2, 2}, 3);
  ref_case_attr_ints(c, "strides", (int64_t[]){1, 1, 1, 1}, 4);
  ref_case_attr_string(c, "padding", "VALID");
  image_dims(dims, false, 1, 4, 4, 1);
  pool_inputs(c, dtype, dims, NULL);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s zero ksize", op->op);
  ref_case_attr_ints(c, "ksize", (int64_t[]){1, 0, 2, 1}, 4);
  ref_case_attr_ints(c, "strides", (int64_t[]){1, 1, 1, 1}, 4);
  ref_case_attr_string(c, "padding", "VALID");
  pool_inputs(c, dtype, dims, NULL);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s pooling over the batch", op->op);
  ref_case_attr_ints(c, "ksize", (int64_t[]){2, 1, 1, 1}, 4);
  ref_case_attr_ints(c, "strides", (int64_t[]){1, 1, 1, 1}, 4);
  ref_case_attr_string(c, "padding", "VALID");
  pool_inputs(c, dtype, dims, NULL);
  c->expect_code = TF_UNIMPLEMENTED;
  c = ref_case_add(out, op->op, "%s zero stride", op->op);
  pool_attrs(c, 2, 2, 0, 1, "VALID", false);
  pool_inputs(c, dtype, dims, NULL);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s negative output size", op->op);
  pool_attrs(c, 5, 5, 1, 1, "VALID", false);
  image_dims(dims, false, 1, 2, 2, 1);
  pool_inputs(c, dtype, dims, NULL);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s bad data_format", op->op);
  pool_attrs(c, 2, 2, 1, 1, "VALID", false);
  ref_case_attr_string(c, "data_format", "NWHC");
  image_dims(dims, false, 1, 4, 4, 1);
  pool_inputs(c, dtype, dims, NULL);
  c->expect_code = TF_INVALID_ARGUMENT;

  if (!strcmp(op->op, "MaxPool") || !strcmp(op->op, "AvgPool")) {
    c = ref_case_add(out, op->op, "%s rank 3", op->op);
    pool_attrs(c, 2, 2, 1, 1, "VALID", false);
    ref_case_input(c, dtype, (int64_t[]){4, 4, 1}, 3, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
  } else if (!strcmp(op->op, "MaxPoolGrad")) {
    c = ref_case_add(out, op->op, "MaxPoolGrad wrong orig_output shape");
    pool_attrs(c, 2, 2, 2, 2, "VALID", false);
    ref_case_input(c, dtype, (int64_t[]){1, 4, 4, 2}, 4, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){1, 2, 2, 3}, 4, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){1, 2, 2, 2}, 4, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "MaxPoolGrad wrong grad shape");
    pool_attrs(c, 2, 2, 2, 2, "VALID", false);
    ref_case_input(c, dtype, (int64_t[]){1, 4, 4, 2}, 4, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){1, 2, 2, 2}, 4, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){1, 3, 2, 2}, 4, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "MaxPoolGrad rank 3 grad");
    pool_attrs(c, 2, 2, 2, 2, "VALID", false);
    ref_case_input(c, dtype, (int64_t[]){1, 4, 4, 2}, 4, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){1, 2, 2, 2}, 4, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){2, 2, 2}, 3, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
  } else {
    c = ref_case_add(out, op->op, "AvgPoolGrad shape of 3");
    pool_attrs(c, 2, 2, 2, 2, "VALID", false);
    ref_case_input_values(c, TF_INT32, (int64_t[]){3}, 1,
                          (double[]){1, 4, 4});
    ref_case_input(c, dtype, (int64_t[]){1, 2, 2, 2}, 4, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "AvgPoolGrad wrong grad shape");
    pool_attrs(c, 2, 2, 2, 2, "VALID", false);
    ref_case_input_values(c, TF_INT32, (int64_t[]){4}, 1,
                          (double[]){1, 4, 4, 2});
    ref_case_input(c, dtype, (int64_t[]){1, 3, 2, 2}, 4, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "AvgPoolGrad negative dim");
    pool_attrs(c, 2, 2, 2, 2, "VALID", false);
    ref_case_input_values(c, TF_INT32, (int64_t[]){4}, 1,
                          (double[]){1, -4, 4, 2});
    ref_case_input(c, dtype, (int64_t[]){1, 2, 2, 2}, 4, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

/* ---- Batch normalisation ---------------------------------------------------- */

/* x as [outer, depth, inner] (channels last: inner 1). */
struct bn {
  int64_t depth, rest, inner;
};

static void bn_of(const struct ref_case *c, const struct ref_tensor *x,
                  struct bn *b)
{
  const char *format = ref_case_attr_string_or(c, "data_format", "NHWC");
  int ch = (!strcmp(format, "NCHW") || !strcmp(format, "NCDHW")) ? 1
                                                                  : x->rank - 1;
  int64_t outer = 1;
  b->depth = x->dims[ch];
  b->inner = 1;
  for (int i = 0; i < x->rank; i++) {
    if (i < ch)
      outer *= x->dims[i];
    else if (i > ch)
      b->inner *= x->dims[i];
  }
  b->rest = outer * b->inner;
}

static int64_t bn_at(const struct bn *b, int64_t r, int64_t c)
{
  return ((r / b->inner) * b->depth + c) * b->inner + r % b->inner;
}

/* Channel c's mean and biased variance (two passes). */
static void bn_stats(const struct bn *b, const double *x, int64_t c,
                     double *mean, double *var)
{
  double s = 0, q = 0;
  for (int64_t r = 0; r < b->rest; r++)
    s += x[bn_at(b, r, c)];
  *mean = s / (double)b->rest;
  for (int64_t r = 0; r < b->rest; r++) {
    double d = x[bn_at(b, r, c)] - *mean;
    q += d * d;
  }
  *var = q / (double)b->rest;
}

static int bn_compute(const struct ref_case *c, struct ref_tensor *out,
                      char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  const double *scale = c->inputs[1].v, *offset = c->inputs[2].v;
  const double *mean_in = c->inputs[3].v, *var_in = c->inputs[4].v;
  bool training = ref_case_attr_bool_or(c, "is_training", true);
  double eps = (float)ref_case_attr_float_or(c, "epsilon", 1e-4);
  double factor = (float)ref_case_attr_float_or(c, "exponential_avg_factor", 1);
  struct bn b;
  if (x->rank != 4 && x->rank != 5) {
    snprintf(error, (size_t)error_len, "bad rank");
    return -1;
  }
  bn_of(c, x, &b);
  if (c->inputs[1].elements != b.depth) {
    snprintf(error, (size_t)error_len, "bad scale");
    return -1;
  }
  const int64_t none = 0;
  for (int i = 0; i < 6; i++)
    ref_tensor_alloc(&out[i], i == 0 ? x->dtype : TF_FLOAT,
                     i == 0 ? x->dims : i == 5 ? &none : &b.depth,
                     i == 0 ? x->rank : 1);
  for (int64_t ch = 0; ch < b.depth; ch++) {
    double m = training ? 0 : mean_in[ch], v = training ? 0 : var_in[ch];
    double new_m, new_v;
    if (training)
      bn_stats(&b, x->v, ch, &m, &v);
    double k = scale[ch] / sqrt(v + eps);
    for (int64_t r = 0; r < b.rest; r++) {
      int64_t i = bn_at(&b, r, ch);
      out[0].v[i] = ref_round_to(x->dtype, (x->v[i] - m) * k + offset[ch]);
    }
    new_m = m;
    new_v = v;
    if (training) {
      double adjust = (double)b.rest / (double)(b.rest > 1 ? b.rest - 1 : 1);
      new_m = (1 - factor) * (factor == 1 ? 0 : mean_in[ch]) + factor * m;
      new_v = (1 - factor) * (factor == 1 ? 0 : var_in[ch]) + factor * adjust * v;
    }
    if (b.rest == 0)
      new_m = new_v = m = v = NAN;
    out[1].v[ch] = ref_round_to(TF_FLOAT, new_m);
    out[2].v[ch] = ref_round_to(TF_FLOAT, new_v);
    out[3].v[ch] = ref_round_to(TF_FLOAT, m);
    out[4].v[ch] = ref_round_to(TF_FLOAT, v);
  }
  return 6;
}

static int bn_grad_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct ref_tensor *dy = &c->inputs[0], *x = &c->inputs[1];
  const double *scale = c->inputs[2].v, *mean = c->inputs[3].v;
  const double *var = c->inputs[4].v;
  bool training = ref_case_attr_bool_or(c, "is_training", true);
  double eps = (float)ref_case_attr_float_or(c, "epsilon", 1e-4);
  struct bn b;
  if ((x->rank != 4 && x->rank != 5) || dy->elements != x->elements) {
    snprintf(error, (size_t)error_len, "bad shapes");
    return -1;
  }
  bn_of(c, x, &b);
  int64_t zero = 0;
  for (int i = 0; i < 5; i++)
    ref_tensor_alloc(&out[i], i == 0 ? x->dtype : TF_FLOAT,
                     i == 0 ? x->dims : i < 3 ? &b.depth : &zero,
                     i == 0 ? x->rank : 1);
  for (int64_t ch = 0; ch < b.depth; ch++) {
    double inv = 1 / sqrt(var[ch] + eps), s = 0, sc = 0;
    for (int64_t r = 0; r < b.rest; r++) {
      int64_t i = bn_at(&b, r, ch);
      s += dy->v[i];
      sc += dy->v[i] * (x->v[i] - mean[ch]);
    }
    out[1].v[ch] = ref_round_to(TF_FLOAT, sc * inv);
    out[2].v[ch] = ref_round_to(TF_FLOAT, s);
    double n = (double)b.rest;
    for (int64_t r = 0; r < b.rest; r++) {
      int64_t i = bn_at(&b, r, ch);
      double g = training ? scale[ch] * inv *
                                (dy->v[i] - s / n -
                                 (x->v[i] - mean[ch]) * inv * inv * sc / n)
                          : dy->v[i] * scale[ch] * inv;
      out[0].v[i] = ref_round_to(x->dtype, g);
    }
  }
  return 5;
}

/* ---- Batch-norm cases ------------------------------------------------------ */

/* format: the data_format attribute, NULL for the default (NHWC). */
static void bn_attrs(struct ref_case *c, const char *format, bool training,
                     double factor)
{
  ref_case_attr_float(c, "epsilon", 1e-3f);
  ref_case_attr_bool(c, "is_training", training);
  if (!strcmp(c->op, "FusedBatchNormV3"))
    ref_case_attr_float(c, "exponential_avg_factor", (float)factor);
  if (format != NULL)
    ref_case_attr_string(c, "data_format", format);
}

/* A forward case: x of dims, per-channel inputs of `channels`. */
static struct ref_case *bn_case(struct ref_cases *out, const char *op,
                                TF_DataType dtype, const int64_t *dims,
                                int rank, int64_t channels, const char *format,
                                bool training, double factor, const char *label)
{
  struct ref_case *c = ref_case_add(out, op, "%s %s", op, label);
  bn_attrs(c, format, training, factor);
  ref_case_input(c, dtype, dims, rank, REF_ANY);
  ref_case_input(c, TF_FLOAT, &channels, 1, REF_ANY);
  ref_case_input(c, TF_FLOAT, &channels, 1, REF_ANY);
  ref_case_input(c, TF_FLOAT, &channels, 1, REF_ANY);
  ref_case_input(c, TF_FLOAT, &channels, 1, REF_POSITIVE);
  return c;
}

/* A gradient case; in training, reserve_space_1/2 are x's own statistics
 * (float), as the forward op leaves them. */
static struct ref_case *bn_grad_case(struct ref_cases *out, const char *op,
                                     TF_DataType dtype, const int64_t *dims,
                                     int rank, int64_t channels,
                                     const char *format, bool training,
                                     const char *label)
{
  struct ref_case *c = ref_case_add(out, op, "%s %s", op, label);
  bn_attrs(c, format, training, 1);
  ref_case_input(c, dtype, dims, rank, REF_ANY);
  const struct ref_tensor *x = ref_case_input(c, dtype, dims, rank, REF_ANY);
  ref_case_input(c, TF_FLOAT, &channels, 1, REF_ANY);
  struct ref_tensor *mean = ref_case_input(c, TF_FLOAT, &channels, 1, REF_ANY);
  struct ref_tensor *var =
      ref_case_input(c, TF_FLOAT, &channels, 1, REF_POSITIVE);
  ref_case_input(c, TF_FLOAT, (int64_t[]){0}, 1, REF_ANY);
  struct bn b;
  bn_of(c, x, &b);
  if (training && b.depth == channels && b.rest > 0) {
    for (int64_t ch = 0; ch < channels; ch++) {
      double m, v;
      bn_stats(&b, x->v, ch, &m, &v);
      mean->v[ch] = ref_round_to(TF_FLOAT, m);
      var->v[ch] = ref_round_to(TF_FLOAT, v);
    }
  }
  return c;
}

static void bn_cases(const struct ref_op *op, TF_DataType dtype,
                     struct ref_cases *out)
{
  static const int64_t shapes[][4] = {
      /* n, rows, cols, channels */
      {1, 5, 7, 1}, {3, 5, 3, 3}, {3, 7, 5, 8}, {1, 9, 7, 3},
  };
  bool grad = strstr(op->op, "Grad") != NULL;
  int64_t dims[5];
  char label[96];
  struct ref_case *c;
  int k = 0;

  for (int f = 0; f < 2; f++)
    for (int mode = 0; mode < (grad ? 2 : 3); mode++)
      for (int s = 0; s < 2; s++, k++) {
        const int64_t *sh = shapes[k % 4];
        bool nchw = f == 1, training = mode != 2 && !(grad && mode == 1);
        double factor = mode == 1 ? 0.3 : 1.0;
        image_dims(dims, nchw, sh[0], sh[1], sh[2], sh[3]);
        snprintf(label, sizeof(label), "%s %s%s [%lld,%lld,%lld,%lld]",
                 nchw ? "NCHW" : "NHWC",
                 training ? "training" : "inference",
                 training && factor != 1 ? " factor 0.3" : "",
                 (long long)dims[0], (long long)dims[1], (long long)dims[2],
                 (long long)dims[3]);
        const char *format = nchw ? "NCHW" : NULL;
        if (grad)
          bn_grad_case(out, op->op, dtype, dims, 4, sh[3], format, training,
                       label);
        else
          bn_case(out, op->op, dtype, dims, 4, sh[3], format, training, factor,
                  label);
      }

  /* 5-D, an odd-sized channel of 1031 elements, a single element per
   * channel (no Bessel correction), an empty batch. */
  int64_t d5[5] = {2, 3, 4, 5, 3};
  int64_t odd[4] = {1, 1031, 1, 1};
  int64_t one[4] = {1, 1, 1, 3};
  int64_t empty[4] = {0, 3, 3, 2};
  if (grad) {
    bn_grad_case(out, op->op, dtype, d5, 5, 3, "NDHWC", true, "5-D NDHWC");
    bn_grad_case(out, op->op, dtype, d5, 5, 3, "NCDHW", true, "5-D NCDHW");
    bn_grad_case(out, op->op, dtype, odd, 4, 1, NULL, true, "odd [1,1031,1,1]");
    bn_grad_case(out, op->op, dtype, empty, 4, 2, NULL, true, "empty batch");
  } else {
    bn_case(out, op->op, dtype, d5, 5, 3, "NDHWC", true, 1.0, "5-D NDHWC");
    bn_case(out, op->op, dtype, d5, 5, 3, "NCDHW", true, 0.3, "5-D NCDHW");
    bn_case(out, op->op, dtype, odd, 4, 1, NULL, true, 1.0,
            "odd [1,1031,1,1]");
    bn_case(out, op->op, dtype, one, 4, 3, NULL, true, 1.0,
            "one element per channel");
    bn_case(out, op->op, dtype, empty, 4, 2, NULL, true, 1.0, "empty batch");
    /* Training with factor 1 ignores the incoming statistics: empty ones
     * (what Keras may pass) are fine. */
    c = ref_case_add(out, op->op, "%s training, empty mean", op->op);
    bn_attrs(c, NULL, true, 1.0);
    ref_case_input(c, dtype, (int64_t[]){2, 3, 3, 2}, 4, REF_ANY);
    ref_case_input(c, TF_FLOAT, (int64_t[]){2}, 1, REF_ANY);
    ref_case_input(c, TF_FLOAT, (int64_t[]){2}, 1, REF_ANY);
    ref_case_input(c, TF_FLOAT, (int64_t[]){0}, 1, REF_ANY);
    ref_case_input(c, TF_FLOAT, (int64_t[]){0}, 1, REF_ANY);
  }

  /* Failing cases. */
  int64_t bad[3] = {3, 5, 2};
  int64_t ok[4] = {1, 3, 3, 2};
  if (grad) {
    c = bn_grad_case(out, op->op, dtype, bad, 3, 2, NULL, true, "rank 3");
    c->expect_code = TF_INVALID_ARGUMENT;
    c = bn_grad_case(out, op->op, dtype, ok, 4, 3, NULL, true,
                     "scale of 3 for 2 channels");
    c->expect_code = TF_INVALID_ARGUMENT;
    c = bn_grad_case(out, op->op, dtype, ok, 4, 2, NULL, true,
                     "x and y_backprop differ");
    int64_t other[4] = {1, 3, 2, 2};
    ref_tensor_finish(&c->inputs[0]);
    ref_tensor_alloc(&c->inputs[0], dtype, other, 4);
    c->expect_code = TF_INVALID_ARGUMENT;
  } else {
    c = bn_case(out, op->op, dtype, bad, 3, 2, NULL, true, 1.0, "rank 3");
    c->expect_code = TF_INVALID_ARGUMENT;
    c = bn_case(out, op->op, dtype, ok, 4, 3, NULL, true, 1.0,
                "scale of 3 for 2 channels");
    c->expect_code = TF_INVALID_ARGUMENT;
    c = bn_case(out, op->op, dtype, ok, 4, 2, NULL, false, 1.0,
                "inference, empty mean");
    ref_tensor_finish(&c->inputs[3]);
    ref_tensor_alloc(&c->inputs[3], TF_FLOAT, (int64_t[]){0}, 1);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = bn_case(out, op->op, dtype, ok, 4, 2, NULL, true, 0.3,
                "factor 0.3, variance of 3");
    ref_tensor_finish(&c->inputs[4]);
    ref_tensor_alloc(&c->inputs[4], TF_FLOAT, (int64_t[]){3}, 1);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = bn_case(out, op->op, dtype, ok, 4, 2, "NWHC", true, 1.0,
                "bad data_format");
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

const struct ref_op ref_ops_pool[] = {
    {"MaxPool", 1e-5, 1e-6, REF_ANY, pool_cases, pool_compute},
    {"MaxPoolGrad", 1e-5, 1e-6, REF_ANY, pool_cases, pool_grad_compute},
    {"AvgPool", 1e-5, 1e-6, REF_ANY, pool_cases, pool_compute},
    {"AvgPoolGrad", 1e-5, 1e-6, REF_ANY, pool_cases, pool_grad_compute},
    {"FusedBatchNormV3", 1e-4, 1e-4, REF_ANY, bn_cases, bn_compute},
    {"FusedBatchNormGradV3", 1e-4, 5e-4, REF_ANY, bn_cases, bn_grad_compute},
    {.op = NULL},
};
