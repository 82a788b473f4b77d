/* References of batch normalisation (kernels/batch_norm.c), in float64:
 * FusedBatchNormV3 and FusedBatchNormGradV3.
 *
 * Semantics are TensorFlow's CPU kernels': training normalises with the
 * batch mean and biased variance, returns the Bessel-corrected variance as
 * batch_variance, blended with the incoming statistics when
 * exponential_avg_factor != 1, keeps the batch mean and biased variance in
 * reserve_space_1/2 and an empty reserve_space_3; inference passes the
 * given mean and variance through (also into reserve_space_1/2, where
 * TensorFlow's CPU kernel leaves them uninitialised). An empty x gives NaN
 * statistics (zero gradients).
 *
 * Tolerances (float32), on values of the order of the per-channel scale
 * (inputs in [-3, 3]): the device reduces in float (runs of at most 256
 * elements in order, then trees; statistics of x minus a pivot) and
 * cancels (x - mean, dy - mean(dy)): rtol 1e-5, atol 1e-5; the gradient's
 * sums (scale_backprop, offset_backprop) grow with the channel's element
 * count: atol 1e-4. The accuracy cases ("large mean", 2^20 elements per
 * channel, a spread of +-0.03 around 1000 and -300) are where a long
 * sequential float accumulation fails these: a per-thread run of 8192
 * elements (the one-work-group-per-channel kernel this replaced) is off by
 * several ulps of the mean, 1e-3 of the normalised output (x - mean) /
 * sigma; statistics of x - pivot keep it at float rounding.
 * half and bfloat16 widen these (reference.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* dims of an image of batch n, rows x cols, depth channels. */
static void image_dims(int64_t *dims, bool nchw, int64_t n, int64_t rows,
                       int64_t cols, int64_t depth)
{
  dims[0] = n;
  dims[nchw ? 2 : 1] = rows;
  dims[nchw ? 3 : 2] = cols;
  dims[nchw ? 1 : 3] = depth;
}

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

/* x (in [-3, 3]) scaled by 1/100 and shifted by `shift[c]` in channel c,
 * rounded to its dtype. */
static void shift_channels(const struct ref_case *c, struct ref_tensor *x,
                           const double *shift)
{
  struct bn b;
  bn_of(c, x, &b);
  for (int64_t ch = 0; ch < b.depth; ch++)
    for (int64_t r = 0; r < b.rest; r++) {
      int64_t i = bn_at(&b, r, ch);
      x->v[i] = ref_round_to(x->dtype, x->v[i] / 100.0 + shift[ch]);
    }
}

/* 2^20 elements per channel, channel means of 1000 and -300 and a spread
 * of +-0.03 (a standard deviation of 0.017, 280 float ulps of 1000); and
 * 2^16 channels last (a CPU device's fold merges 16 partials a work-item
 * in order there, one at 2^20). */
static void accuracy_cases(const struct ref_op *op, TF_DataType dtype,
                           bool grad, struct ref_cases *out)
{
  static const double shift[2] = {1000.0, -300.0};
  for (int f = 0; f < 3; f++) {
    bool nchw = f == 1;
    int64_t dims[4], channels = 2;
    image_dims(dims, nchw, f == 2 ? 1 : 16, 256, 256, channels);
    struct ref_case *c =
        ref_case_add(out, op->op, "%s large mean, 2^%d per channel %s", op->op,
                     f == 2 ? 16 : 20, nchw ? "NCHW" : "NHWC");
    bn_attrs(c, nchw ? "NCHW" : NULL, true, 1.0);
    if (grad) {
      /* dy = 1 + u: its sum is large, its product with (x - mean) sums to
       * almost nothing. */
      struct ref_tensor *dy = ref_case_input(c, dtype, dims, 4, REF_ANY);
      for (int64_t i = 0; i < dy->elements; i++)
        dy->v[i] = ref_round_to(dtype, 1.0 + dy->v[i] / 3.0);
    }
    struct ref_tensor *x = ref_case_input(c, dtype, dims, 4, REF_ANY);
    shift_channels(c, x, shift);
    ref_case_input(c, TF_FLOAT, &channels, 1, REF_POSITIVE); /* scale */
    if (!grad) {
      ref_case_input(c, TF_FLOAT, &channels, 1, REF_ANY); /* offset */
      /* Training with factor 1: no running statistics. */
      ref_case_input(c, TF_FLOAT, (int64_t[]){0}, 1, REF_ANY);
      ref_case_input(c, TF_FLOAT, (int64_t[]){0}, 1, REF_ANY);
      continue;
    }
    /* reserve_space_1/2: x's statistics, as the forward op leaves them. */
    struct ref_tensor *mean = ref_case_input(c, TF_FLOAT, &channels, 1,
                                             REF_ANY);
    struct ref_tensor *var = ref_case_input(c, TF_FLOAT, &channels, 1,
                                            REF_POSITIVE);
    ref_case_input(c, TF_FLOAT, (int64_t[]){0}, 1, REF_ANY);
    struct bn b;
    bn_of(c, x, &b);
    for (int64_t ch = 0; ch < channels; ch++) {
      double m, v;
      bn_stats(&b, x->v, ch, &m, &v);
      mean->v[ch] = ref_round_to(TF_FLOAT, m);
      var->v[ch] = ref_round_to(TF_FLOAT, v);
    }
  }
}

static void bn_cases(const struct ref_op *op, TF_DataType dtype,
                     struct ref_cases *out)
{
  static const int64_t shapes[][4] = {
      /* n, rows, cols, channels */
      {1, 5, 7, 1}, {3, 5, 3, 3}, {3, 7, 5, 8}, {1, 9, 7, 3},
  };
  bool grad = strstr(op->op, "Grad") != NULL;
  /* On the Oclgrind simulator (accesses and races, at a few million
   * instructions a second) the other dtypes run a sample of the cases. */
  bool some = ref_on_oclgrind() && dtype != TF_FLOAT;
  int64_t dims[5];
  char label[96];
  struct ref_case *c;
  int k = 0;

  for (int f = 0; f < 2; f++)
    for (int mode = 0; mode < (grad ? 2 : 3); mode++)
      for (int s = 0; s < 2; s++, k++) {
        const int64_t *sh = shapes[k % 4];
        if (some && (mode != 0 || s != 0))
          continue;
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
  if (some) {
    /* The sample: the grid's first case per layout and the failures. */
  } else if (grad) {
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

  /* Accuracy: large per-channel counts, means far from zero (and, for the
   * gradient, dy of non-zero mean, so sum(dy * (x - mean)) cancels). Left
   * out on the Oclgrind simulator, which checks accesses, not accuracy, at
   * a few million instructions a second. */
  if (!ref_on_oclgrind())
    accuracy_cases(op, dtype, grad, out);

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

const struct ref_op ref_ops_batch_norm[] = {
    {"FusedBatchNormV3", 1e-5, 1e-5, REF_ANY, bn_cases, bn_compute},
    {"FusedBatchNormGradV3", 1e-5, 1e-4, REF_ANY, bn_cases, bn_grad_compute},
    {.op = NULL},
};
