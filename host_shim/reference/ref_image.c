/* References of the image kernel family (kernels/image.c): ResizeBilinear,
 * ResizeBilinearGrad, ResizeNearestNeighbor, ResizeNearestNeighborGrad.
 *
 * Which pixels are read and with which weights is TensorFlow's float32
 * arithmetic (image_resizer_state.h: CalculateResizeScale, the legacy and
 * half-pixel scalers, floor/ceil/round), evaluated here in float exactly
 * as written, since a float64 coordinate could pick another pixel at a
 * boundary. The values are then interpolated and summed in float64 and the
 * gradients rounded once to their dtype.
 *
 * Tolerances (float32): the device interpolates in float (two lerps, a few
 * ulps of values in [-3, 3]): rtol 1e-5, atol 1e-6; the gradients sum a
 * few weighted terms in float (bilinear) or up to ~25 gradients
 * (nearest): rtol 1e-5, atol 1e-5; the nearest-neighbour forward pass moves
 * elements: exact. half widens these by REF_HALF_FACTOR. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})

static int fail(char *error, int error_len, const char *what)
{
  snprintf(error, (size_t)error_len, "%s", what);
  return -1;
}

/* ---- TensorFlow's coordinate maps, in float ------------------------------- */

static float resize_scale(int64_t in, int64_t out, bool align_corners)
{
  return align_corners && out > 1 ? (float)(in - 1) / (float)(out - 1)
                                  : (float)in / (float)out;
}

/* Bilinear taps of resized coordinate i (compute_interpolation_weights). */
static void taps(int64_t i, float scale, int64_t size, bool half_pixel,
                 int64_t *lower, int64_t *upper, float *lerp)
{
  volatile float in = half_pixel ? ((float)i + 0.5f) * scale - 0.5f
                                 : (float)i * scale;
  float in_f = floorf(in);
  *lower = (int64_t)in_f > 0 ? (int64_t)in_f : 0;
  *upper = (int64_t)ceilf(in) < size - 1 ? (int64_t)ceilf(in) : size - 1;
  *lerp = in - in_f;
}

/* Nearest neighbour: source coordinate of resized coordinate i. */
static int64_t nn_source(int64_t i, float scale, int64_t size, bool half_pixel,
                         bool align_corners)
{
  volatile float v = half_pixel ? ((float)i + 0.5f) * scale : (float)i * scale;
  int64_t j = align_corners ? (int64_t)roundf(v) : (int64_t)floorf(v);
  j = j < size - 1 ? j : size - 1;
  return half_pixel && j < 0 ? 0 : j;
}

struct attrs {
  bool align_corners, half_pixel;
};

static struct attrs attrs_of(const struct ref_case *c)
{
  return (struct attrs){ref_case_attr_bool_or(c, "align_corners", false),
                        ref_case_attr_bool_or(c, "half_pixel_centers", false)};
}

static int64_t nhwc(const int64_t *dims, int64_t b, int64_t y, int64_t x,
                    int64_t ch)
{
  return ((b * dims[1] + y) * dims[2] + x) * dims[3] + ch;
}

/* The forward ops' checks (ValidateAndCalculateOutputSize): false when
 * TensorFlow rejects them; else the output size. */
static bool forward_shape(const struct ref_case *c, struct attrs a,
                          int64_t *out_h, int64_t *out_w)
{
  const struct ref_tensor *x = &c->inputs[0], *size = &c->inputs[1];
  if ((a.half_pixel && a.align_corners) || x->rank != 4 || x->dims[3] <= 0 ||
      x->dims[1] <= 0 || x->dims[2] <= 0 || size->rank != 1 ||
      size->elements != 2)
    return false;
  *out_h = (int64_t)size->v[0];
  *out_w = (int64_t)size->v[1];
  return *out_h > 0 && *out_w > 0;
}

/* ---- ResizeBilinear, ResizeBilinearGrad ---------------------------------- */

static int bilinear_compute(const struct ref_case *c, struct ref_tensor *out,
                            char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  struct attrs a = attrs_of(c);
  int64_t oh, ow;
  if (!forward_shape(c, a, &oh, &ow))
    return fail(error, error_len, "shapes or attributes");
  const int64_t *d = x->dims;
  float hs = resize_scale(d[1], oh, a.align_corners);
  float ws = resize_scale(d[2], ow, a.align_corners);
  ref_tensor_alloc(&out[0], TF_FLOAT, D(d[0], oh, ow, d[3]), 4);
  int64_t i = 0;
  for (int64_t b = 0; b < d[0]; b++)
    for (int64_t y = 0; y < oh; y++) {
      int64_t top, bottom, left, right;
      float yl, xl;
      taps(y, hs, d[1], a.half_pixel, &top, &bottom, &yl);
      for (int64_t xx = 0; xx < ow; xx++) {
        taps(xx, ws, d[2], a.half_pixel, &left, &right, &xl);
        for (int64_t ch = 0; ch < d[3]; ch++, i++) {
          double tl = x->v[nhwc(d, b, top, left, ch)];
          double tr = x->v[nhwc(d, b, top, right, ch)];
          double bl = x->v[nhwc(d, b, bottom, left, ch)];
          double br = x->v[nhwc(d, b, bottom, right, ch)];
          double t = tl + (tr - tl) * xl, u = bl + (br - bl) * xl;
          out[0].v[i] = t + (u - t) * yl;
        }
      }
    }
  return 1;
}

/* Scatter form, as TensorFlow's CPU kernel: each resized pixel's gradient
 * goes to its four taps. */
static int bilinear_grad_compute(const struct ref_case *c,
                                 struct ref_tensor *out, char *error,
                                 int error_len)
{
  const struct ref_tensor *g = &c->inputs[0], *orig = &c->inputs[1];
  struct attrs a = attrs_of(c);
  if ((a.half_pixel && a.align_corners) || g->rank != 4 || orig->rank != 4 ||
      g->dims[1] <= 0 || g->dims[2] <= 0 || orig->dims[1] <= 0 ||
      orig->dims[2] <= 0)
    return fail(error, error_len, "shapes or attributes");
  const int64_t *gd = g->dims;
  int64_t od[4] = {gd[0], orig->dims[1], orig->dims[2], gd[3]};
  float hs = resize_scale(od[1], gd[1], a.align_corners);
  float ws = resize_scale(od[2], gd[2], a.align_corners);
  ref_tensor_alloc(&out[0], orig->dtype, od, 4);
  for (int64_t b = 0; b < gd[0]; b++)
    for (int64_t y = 0; y < gd[1]; y++) {
      int64_t top, bottom, left, right;
      float yl, xl;
      taps(y, hs, od[1], a.half_pixel, &top, &bottom, &yl);
      float iy = 1.0f - yl;
      for (int64_t xx = 0; xx < gd[2]; xx++) {
        taps(xx, ws, od[2], a.half_pixel, &left, &right, &xl);
        float ix = 1.0f - xl;
        for (int64_t ch = 0; ch < gd[3]; ch++) {
          double v = g->v[nhwc(gd, b, y, xx, ch)];
          out[0].v[nhwc(od, b, top, left, ch)] += v * iy * ix;
          out[0].v[nhwc(od, b, top, right, ch)] += v * iy * xl;
          out[0].v[nhwc(od, b, bottom, left, ch)] += v * yl * ix;
          out[0].v[nhwc(od, b, bottom, right, ch)] += v * yl * xl;
        }
      }
    }
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = ref_round_to(orig->dtype, out[0].v[i]);
  return 1;
}

/* ---- ResizeNearestNeighbor, ResizeNearestNeighborGrad -------------------- */

static int nn_compute(const struct ref_case *c, struct ref_tensor *out,
                      char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  struct attrs a = attrs_of(c);
  int64_t oh, ow;
  if (!forward_shape(c, a, &oh, &ow))
    return fail(error, error_len, "shapes or attributes");
  const int64_t *d = x->dims;
  float hs = resize_scale(d[1], oh, a.align_corners);
  float ws = resize_scale(d[2], ow, a.align_corners);
  ref_tensor_alloc(&out[0], x->dtype, D(d[0], oh, ow, d[3]), 4);
  int64_t i = 0;
  for (int64_t b = 0; b < d[0]; b++)
    for (int64_t y = 0; y < oh; y++) {
      int64_t sy = nn_source(y, hs, d[1], a.half_pixel, a.align_corners);
      for (int64_t xx = 0; xx < ow; xx++) {
        int64_t sx = nn_source(xx, ws, d[2], a.half_pixel, a.align_corners);
        for (int64_t ch = 0; ch < d[3]; ch++, i++)
          out[0].v[i] = x->v[nhwc(d, b, sy, sx, ch)];
      }
    }
  return 1;
}

/* Scatter form, as TensorFlow's CPU kernel (which takes align_corners
 * together with half_pixel_centers). */
static int nn_grad_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct ref_tensor *g = &c->inputs[0], *size = &c->inputs[1];
  struct attrs a = attrs_of(c);
  if (g->rank != 4 || size->rank != 1 || size->elements != 2 ||
      size->v[0] <= 0 || size->v[1] <= 0)
    return fail(error, error_len, "shapes");
  const int64_t *gd = g->dims;
  int64_t od[4] = {gd[0], (int64_t)size->v[0], (int64_t)size->v[1], gd[3]};
  float hs = resize_scale(od[1], gd[1], a.align_corners);
  float ws = resize_scale(od[2], gd[2], a.align_corners);
  ref_tensor_alloc(&out[0], g->dtype, od, 4);
  for (int64_t b = 0; b < gd[0]; b++)
    for (int64_t y = 0; y < gd[1]; y++) {
      int64_t ty = nn_source(y, hs, od[1], a.half_pixel, a.align_corners);
      for (int64_t xx = 0; xx < gd[2]; xx++) {
        int64_t tx = nn_source(xx, ws, od[2], a.half_pixel, a.align_corners);
        for (int64_t ch = 0; ch < gd[3]; ch++)
          out[0].v[nhwc(od, b, ty, tx, ch)] += g->v[nhwc(gd, b, y, xx, ch)];
      }
    }
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = ref_round_to(g->dtype, out[0].v[i]);
  return 1;
}

/* ---- Cases ------------------------------------------------------------- */

/* A case of `op`: input of `dims` (dtype `dtype`, grads: float for
 * ResizeBilinearGrad) and the size (forward, nearest gradient) or the
 * original image's shape (bilinear gradient). */
static struct ref_case *resize_case(struct ref_cases *out, const char *op,
                                    TF_DataType dtype, const char *label,
                                    const int64_t *dims, int rank, int64_t h,
                                    int64_t w, bool align_corners,
                                    bool half_pixel)
{
  struct ref_case *c = ref_case_add(out, op, "%s %s", op, label);
  bool bilinear_grad = strcmp(op, "ResizeBilinearGrad") == 0;
  ref_case_input(c, bilinear_grad ? TF_FLOAT : dtype, dims, rank, REF_ANY);
  if (bilinear_grad) {
    int64_t orig[4] = {rank > 0 ? dims[0] : 1, h, w, rank > 3 ? dims[3] : 1};
    ref_case_input(c, dtype, orig, 4, REF_ANY);
  } else {
    double size[2] = {(double)h, (double)w};
    ref_case_input_values(c, TF_INT32, D(2), 1, size);
  }
  if (align_corners)
    ref_case_attr_bool(c, "align_corners", true);
  if (half_pixel)
    ref_case_attr_bool(c, "half_pixel_centers", true);
  return c;
}

static void resize_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  const char *o = op->op;
  bool grad = strstr(o, "Grad") != NULL;
  bool nearest = strstr(o, "Nearest") != NULL;
  /* For the gradients the input is the resized image and h, w the
   * original's: the same list reads both ways. */
  resize_case(out, o, dtype, "up", D(1, 3, 4, 2), 4, 5, 7, false, false);
  resize_case(out, o, dtype, "down, half pixel", D(2, 7, 9, 3), 4, 3, 4, false,
              true);
  resize_case(out, o, dtype, "align corners", D(1, 4, 5, 1), 4, 7, 3, true,
              false);
  resize_case(out, o, dtype, "half pixel up", D(2, 5, 3, 4), 4, 11, 8, false,
              true);
  resize_case(out, o, dtype, "same size", D(1, 3, 3, 2), 4, 3, 3, false,
              false);
  resize_case(out, o, dtype, "odd sizes", D(2, 17, 13, 5), 4, 31, 23, false,
              true);
  resize_case(out, o, dtype, "odd sizes legacy", D(1, 31, 23, 3), 4, 17, 13,
              false, false);
  resize_case(out, o, dtype, "from 1x1", D(1, 1, 1, 3), 4, 3, 5, false, true);
  resize_case(out, o, dtype, "to 1x1, align corners", D(1, 4, 3, 2), 4, 1, 1,
              true, false);
  resize_case(out, o, dtype, "x2 (UpSampling2D)", D(2, 6, 6, 3), 4, 12, 12,
              false, true);
  resize_case(out, o, dtype, "channels 67", D(1, 3, 2, 67), 4, 4, 5, false,
              true);
  resize_case(out, o, dtype, "empty batch", D(0, 3, 3, 1), 4, 5, 5, false,
              false);
  if (!grad) {
    struct ref_case *c = resize_case(out, o, dtype, "NaN and Inf",
                                     D(1, 2, 3, 1), 4, 3, 5, false, true);
    c->inputs[0].v[1] = NAN;
    c->inputs[0].v[4] = INFINITY;
  }
  if (nearest && grad)
    resize_case(out, o, dtype, "align corners and half pixel", D(1, 5, 7, 2),
                4, 3, 4, true, true);
  else
    resize_case(out, o, dtype, "align corners and half pixel", D(1, 3, 3, 1),
                4, 5, 5, true, true)
        ->expect_code = TF_INVALID_ARGUMENT;
  resize_case(out, o, dtype, "rank 3", D(3, 3, 1), 3, 5, 5, false, false)
      ->expect_code = TF_INVALID_ARGUMENT;
  if (!grad) {
    resize_case(out, o, dtype, "no channels", D(1, 2, 2, 0), 4, 3, 3, false,
                false)
        ->expect_code = TF_INVALID_ARGUMENT;
    resize_case(out, o, dtype, "empty image", D(1, 0, 3, 1), 4, 3, 3, false,
                false)
        ->expect_code = TF_INVALID_ARGUMENT;
  }
  resize_case(out, o, dtype, "size zero", D(1, 3, 3, 1), 4, 0, 3, false,
              false)
      ->expect_code = TF_INVALID_ARGUMENT;
  if (!strcmp(o, "ResizeBilinearGrad")) {
    resize_case(out, o, dtype, "resized empty", D(1, 0, 3, 1), 4, 3, 3, false,
                false)
        ->expect_code = TF_INVALID_ARGUMENT;
  } else {
    struct ref_case *c = ref_case_add(out, o, "%s size of 3", o);
    ref_case_input(c, dtype, D(1, 3, 3, 1), 4, REF_ANY);
    ref_case_input_values(c, TF_INT32, D(3), 1, (const double[]){2, 2, 2});
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

#define TOL(rtol, atol) rtol, atol

const struct ref_op ref_ops_image[] = {
    {"ResizeBilinear", TOL(1e-5, 1e-6), REF_ANY, resize_cases,
     bilinear_compute},
    {"ResizeBilinearGrad", TOL(1e-5, 1e-5), REF_ANY, resize_cases,
     bilinear_grad_compute},
    {"ResizeNearestNeighbor", TOL(0.0, 0.0), REF_ANY, resize_cases,
     nn_compute},
    {"ResizeNearestNeighborGrad", TOL(1e-5, 1e-5), REF_ANY, resize_cases,
     nn_grad_compute},
    {.op = NULL},
};
