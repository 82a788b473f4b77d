/* References of the image kernel family (kernels/image.c): ResizeBilinear,
 * ResizeBilinearGrad, ResizeNearestNeighbor, ResizeNearestNeighborGrad,
 * ResizeBicubic, ResizeBicubicGrad, CropAndResize and its two gradients,
 * ExtractImagePatches, RGBToHSV, HSVToRGB, AdjustContrastv2,
 * AdjustSaturation and AdjustHue (the last two as TensorFlow's GPU kernel
 * writes them). Coordinates are TensorFlow's float arithmetic, values and
 * sums float64; the gradients scatter, as TensorFlow's kernels do.
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

/* ---- ResizeBicubic, ResizeBicubicGrad ------------------------------------ */

/* TensorFlow's coefficient table entry i (of 1024) of the cubic kernel:
 * the polynomials in double, rounded to float as its table holds them. */
static float cubic_coeff(int i, bool far, double a)
{
  float x = (float)(i * 1.0 / 1024);
  if (!far)
    return (float)(((a + 2) * x - (a + 3)) * x * x + 1);
  x += 1.0f;
  return (float)(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
}

struct cubic {
  int64_t index[4];
  float weight[4];
};

/* GetWeightsAndIndices: the legacy scaler with A = -0.75, or the
 * half-pixel scaler with Keys' A = -0.5 and out-of-image taps weighted 0,
 * the rest renormalised. */
static struct cubic cubic_taps(int64_t i, float scale, int64_t limit,
                               bool keys)
{
  struct cubic t;
  volatile float in = keys ? ((float)i + 0.5f) * scale - 0.5f
                           : (float)i * scale;
  int64_t base = (int64_t)floorf(in);
  float delta = in - (float)base;
  int offset = (int)lrintf(delta * 1024.0f);
  double a = keys ? -0.5 : -0.75;
  t.weight[0] = cubic_coeff(offset, true, a);
  t.weight[1] = cubic_coeff(offset, false, a);
  t.weight[2] = cubic_coeff(1024 - offset, false, a);
  t.weight[3] = cubic_coeff(1024 - offset, true, a);
  for (int k = 0; k < 4; k++) {
    int64_t want = base - 1 + k;
    t.index[k] = want < 0 ? 0 : want > limit - 1 ? limit - 1 : want;
    if (keys && t.index[k] != want)
      t.weight[k] = 0.0f;
  }
  if (keys) {
    float sum = t.weight[0] + t.weight[1] + t.weight[2] + t.weight[3];
    if (fabsf(sum) >= 1000.0f * 1.17549435e-38f)
      for (int k = 0; k < 4; k++)
        t.weight[k] *= 1.0f / sum;
  }
  return t;
}

static int bicubic_compute(const struct ref_case *c, struct ref_tensor *out,
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
      struct cubic ty = cubic_taps(y, hs, d[1], a.half_pixel);
      for (int64_t xx = 0; xx < ow; xx++) {
        struct cubic tx = cubic_taps(xx, ws, d[2], a.half_pixel);
        for (int64_t ch = 0; ch < d[3]; ch++, i++) {
          double sum = 0;
          for (int k = 0; k < 4; k++)
            for (int j = 0; j < 4; j++)
              sum += (double)ty.weight[k] * tx.weight[j] *
                     x->v[nhwc(d, b, ty.index[k], tx.index[j], ch)];
          out[0].v[i] = sum;
        }
      }
    }
  return 1;
}

/* Scatter form, as TensorFlow's kernel. */
static int bicubic_grad_compute(const struct ref_case *c,
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
      struct cubic ty = cubic_taps(y, hs, od[1], a.half_pixel);
      for (int64_t xx = 0; xx < gd[2]; xx++) {
        struct cubic tx = cubic_taps(xx, ws, od[2], a.half_pixel);
        for (int64_t ch = 0; ch < gd[3]; ch++) {
          double v = g->v[nhwc(gd, b, y, xx, ch)];
          for (int k = 0; k < 4; k++)
            for (int j = 0; j < 4; j++)
              out[0].v[nhwc(od, b, ty.index[k], tx.index[j], ch)] +=
                  v * ty.weight[k] * tx.weight[j];
        }
      }
    }
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = ref_round_to(orig->dtype, out[0].v[i]);
  return 1;
}

/* ---- CropAndResize and its gradients ------------------------------------- */

/* A box's sample coordinate t along an axis of `size` pixels with `n`
 * samples, in float as TensorFlow computes it (its single-sample centre in
 * double). */
static float crop_coord(float lo, float hi, int64_t size, int64_t n, int64_t t)
{
  if (n > 1) {
    volatile float scale = (hi - lo) * (float)(size - 1) / (float)(n - 1);
    volatile float start = lo * (float)(size - 1);
    volatile float step = (float)t * scale;
    return start + step;
  }
  return (float)(0.5 * (lo + hi) * (double)(size - 1));
}

static bool crop_inside(float v, int64_t size)
{
  return v >= 0 && v <= (float)(size - 1);
}

/* The checks the three ops share: boxes [n, 4] and box_ind [n] (or both
 * empty), every index in [0, batch). */
static bool crop_boxes_ok(const struct ref_tensor *boxes,
                          const struct ref_tensor *box_ind, int64_t batch,
                          int64_t *num_boxes)
{
  *num_boxes = 0;
  if (boxes->elements == 0 && box_ind->elements == 0)
    return true;
  if (boxes->rank != 2 || boxes->dims[1] != 4 || box_ind->rank != 1 ||
      box_ind->dims[0] != boxes->dims[0])
    return false;
  *num_boxes = boxes->dims[0];
  for (int64_t b = 0; b < *num_boxes; b++)
    if (box_ind->v[b] < 0 || box_ind->v[b] >= (double)batch)
      return false;
  return true;
}

static bool method_nearest(const struct ref_case *c)
{
  return strcmp(ref_case_attr_string_or(c, "method", "bilinear"),
                "nearest") == 0;
}

static int crop_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *img = &c->inputs[0], *boxes = &c->inputs[1],
                          *box_ind = &c->inputs[2], *size = &c->inputs[3];
  int64_t nb;
  if (img->rank != 4 || img->dims[1] <= 0 || img->dims[2] <= 0 ||
      !crop_boxes_ok(boxes, box_ind, img->dims[0], &nb) || size->rank != 1 ||
      size->elements != 2 || size->v[0] <= 0 || size->v[1] <= 0)
    return fail(error, error_len, "shapes or box indices");
  for (int64_t i = 0; i < boxes->elements; i++)
    if (!isfinite(boxes->v[i]))
      return fail(error, error_len, "boxes not finite");
  bool nearest = method_nearest(c);
  float extrapolation =
      (float)ref_case_attr_float_or(c, "extrapolation_value", 0.0);
  const int64_t *d = img->dims;
  int64_t ch = (int64_t)size->v[0], cw = (int64_t)size->v[1];
  ref_tensor_alloc(&out[0], TF_FLOAT, D(nb, ch, cw, d[3]), 4);
  int64_t i = 0;
  for (int64_t b = 0; b < nb; b++) {
    const double *box = boxes->v + b * 4;
    int64_t bi = (int64_t)box_ind->v[b];
    for (int64_t y = 0; y < ch; y++) {
      float in_y = crop_coord((float)box[0], (float)box[2], d[1], ch, y);
      for (int64_t x = 0; x < cw; x++) {
        float in_x = crop_coord((float)box[1], (float)box[3], d[2], cw, x);
        bool inside = crop_inside(in_y, d[1]) && crop_inside(in_x, d[2]);
        for (int64_t k = 0; k < d[3]; k++, i++) {
          if (!inside) {
            out[0].v[i] = extrapolation;
          } else if (nearest) {
            out[0].v[i] = img->v[nhwc(d, bi, (int64_t)roundf(in_y),
                                      (int64_t)roundf(in_x), k)];
          } else {
            int64_t t = (int64_t)floorf(in_y), u = (int64_t)ceilf(in_y);
            int64_t l = (int64_t)floorf(in_x), r = (int64_t)ceilf(in_x);
            double yl = in_y - (float)t, xl = in_x - (float)l;
            double tl = img->v[nhwc(d, bi, t, l, k)];
            double tr = img->v[nhwc(d, bi, t, r, k)];
            double bl = img->v[nhwc(d, bi, u, l, k)];
            double br = img->v[nhwc(d, bi, u, r, k)];
            double top = tl + (tr - tl) * xl, bottom = bl + (br - bl) * xl;
            out[0].v[i] = top + (bottom - top) * yl;
          }
        }
      }
    }
  }
  return 1;
}

static int crop_grad_image_compute(const struct ref_case *c,
                                   struct ref_tensor *out, char *error,
                                   int error_len)
{
  const struct ref_tensor *g = &c->inputs[0], *boxes = &c->inputs[1],
                          *box_ind = &c->inputs[2], *size = &c->inputs[3];
  if (g->rank != 4 || g->dims[1] <= 0 || g->dims[2] <= 0 || size->rank != 1 ||
      size->elements != 4)
    return fail(error, error_len, "shapes");
  int64_t od[4] = {(int64_t)size->v[0], (int64_t)size->v[1],
                   (int64_t)size->v[2], (int64_t)size->v[3]};
  int64_t nb;
  if (!crop_boxes_ok(boxes, box_ind, od[0], &nb) || g->dims[0] != nb ||
      od[1] <= 0 || od[2] <= 0 || od[3] != g->dims[3] || od[0] < 0)
    return fail(error, error_len, "shapes or box indices");
  bool nearest = method_nearest(c);
  TF_DataType dtype = ref_case_attr(c, "T") != NULL
                          ? ref_case_attr(c, "T")->value.type
                          : TF_FLOAT;
  ref_tensor_alloc(&out[0], dtype, od, 4);
  const int64_t *gd = g->dims;
  for (int64_t b = 0; b < nb; b++) {
    const double *box = boxes->v + b * 4;
    int64_t bi = (int64_t)box_ind->v[b];
    for (int64_t y = 0; y < gd[1]; y++) {
      float in_y = crop_coord((float)box[0], (float)box[2], od[1], gd[1], y);
      if (!crop_inside(in_y, od[1]))
        continue;
      for (int64_t x = 0; x < gd[2]; x++) {
        float in_x = crop_coord((float)box[1], (float)box[3], od[2], gd[2], x);
        if (!crop_inside(in_x, od[2]))
          continue;
        for (int64_t k = 0; k < gd[3]; k++) {
          double v = g->v[nhwc(gd, b, y, x, k)];
          if (nearest) {
            out[0].v[nhwc(od, bi, (int64_t)roundf(in_y),
                          (int64_t)roundf(in_x), k)] += v;
            continue;
          }
          int64_t t = (int64_t)floorf(in_y), u = (int64_t)ceilf(in_y);
          int64_t l = (int64_t)floorf(in_x), r = (int64_t)ceilf(in_x);
          double yl = in_y - (float)t, xl = in_x - (float)l;
          out[0].v[nhwc(od, bi, t, l, k)] += (1 - yl) * (1 - xl) * v;
          out[0].v[nhwc(od, bi, t, r, k)] += (1 - yl) * xl * v;
          out[0].v[nhwc(od, bi, u, l, k)] += yl * (1 - xl) * v;
          out[0].v[nhwc(od, bi, u, r, k)] += yl * xl * v;
        }
      }
    }
  }
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = ref_round_to(dtype, out[0].v[i]);
  return 1;
}

/* CropAndResizeGradBoxes samples at lo * (size - 1) + t * ((hi - lo) *
 * ratio), ratio = (size - 1) / (n - 1) in float: rounded otherwise than the
 * forward op's coordinate. */
static float grad_boxes_coord(float lo, float hi, int64_t size, int64_t n,
                              float ratio, int64_t t)
{
  if (n > 1) {
    volatile float scale = (hi - lo) * ratio;
    volatile float start = lo * (float)(size - 1);
    volatile float step = (float)t * scale;
    return start + step;
  }
  return crop_coord(lo, hi, size, n, t);
}

static int crop_grad_boxes_compute(const struct ref_case *c,
                                   struct ref_tensor *out, char *error,
                                   int error_len)
{
  const struct ref_tensor *g = &c->inputs[0], *img = &c->inputs[1],
                          *boxes = &c->inputs[2], *box_ind = &c->inputs[3];
  int64_t nb;
  if (g->rank != 4 || g->dims[1] <= 0 || g->dims[2] <= 0 || img->rank != 4 ||
      img->dims[1] <= 0 || img->dims[2] <= 0 || img->dims[3] != g->dims[3] ||
      !crop_boxes_ok(boxes, box_ind, img->dims[0], &nb) || g->dims[0] != nb)
    return fail(error, error_len, "shapes or box indices");
  const int64_t *d = img->dims, *gd = g->dims;
  int64_t ch = gd[1], cw = gd[2];
  ref_tensor_alloc(&out[0], TF_FLOAT, D(nb, 4), 2);
  double hr = ch > 1 ? (float)(d[1] - 1) / (float)(ch - 1) : 0;
  double wr = cw > 1 ? (float)(d[2] - 1) / (float)(cw - 1) : 0;
  for (int64_t b = 0; b < nb; b++) {
    const double *box = boxes->v + b * 4;
    int64_t bi = (int64_t)box_ind->v[b];
    double *o = out[0].v + b * 4;
    for (int64_t y = 0; y < ch; y++) {
      float in_y = grad_boxes_coord((float)box[0], (float)box[2], d[1], ch,
                                    (float)hr, y);
      if (!crop_inside(in_y, d[1]))
        continue;
      int64_t t = (int64_t)floorf(in_y), u = (int64_t)ceilf(in_y);
      double yl = in_y - (float)t;
      for (int64_t x = 0; x < cw; x++) {
        float in_x = grad_boxes_coord((float)box[1], (float)box[3], d[2], cw,
                                      (float)wr, x);
        if (!crop_inside(in_x, d[2]))
          continue;
        int64_t l = (int64_t)floorf(in_x), r = (int64_t)ceilf(in_x);
        double xl = in_x - (float)l;
        for (int64_t k = 0; k < d[3]; k++) {
          double tl = img->v[nhwc(d, bi, t, l, k)];
          double tr = img->v[nhwc(d, bi, t, r, k)];
          double bl = img->v[nhwc(d, bi, u, l, k)];
          double br = img->v[nhwc(d, bi, u, r, k)];
          double top_grad = g->v[nhwc(gd, b, y, x, k)];
          double gy = ((1 - xl) * (bl - tl) + xl * (br - tr)) * top_grad;
          double gx = ((1 - yl) * (tr - tl) + yl * (br - bl)) * top_grad;
          if (ch > 1) {
            o[0] += gy * ((double)(d[1] - 1) - (double)y * hr);
            o[2] += gy * ((double)y * hr);
          } else {
            o[0] += gy * 0.5 * (double)(d[1] - 1);
            o[2] += gy * 0.5 * (double)(d[1] - 1);
          }
          if (cw > 1) {
            o[1] += gx * ((double)(d[2] - 1) - (double)x * wr);
            o[3] += gx * ((double)x * wr);
          } else {
            o[1] += gx * 0.5 * (double)(d[2] - 1);
            o[3] += gx * 0.5 * (double)(d[2] - 1);
          }
        }
      }
    }
  }
  return 1;
}

/* ---- ExtractImagePatches ------------------------------------------------- */

/* GetWindowedOutputSize for SAME and VALID: false for a negative size. */
static bool windowed(int64_t in, int64_t k_eff, int64_t stride, bool same,
                     int64_t *out, int64_t *pad)
{
  if (stride <= 0)
    return false;
  if (same) {
    *out = (in + stride - 1) / stride;
    int64_t need = (*out - 1) * stride + k_eff - in;
    *pad = need > 0 ? need / 2 : 0;
  } else {
    *out = (in - k_eff + stride) / stride;
    *pad = 0;
  }
  return *out >= 0;
}

static int patches_compute(const struct ref_case *c, struct ref_tensor *out,
                           char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  const struct tfocl_attr *ks = ref_case_attr(c, "ksizes"),
                          *st = ref_case_attr(c, "strides"),
                          *ra = ref_case_attr(c, "rates");
  bool same = strcmp(ref_case_attr_string_or(c, "padding", "VALID"), "SAME") ==
              0;
  if (x->rank != 4 || ks == NULL || st == NULL || ra == NULL)
    return fail(error, error_len, "shapes or attributes");
  if (ks->value.ints.count != 4 || st->value.ints.count != 4 ||
      ra->value.ints.count != 4)
    return fail(error, error_len, "attributes of 4");
  const int64_t *k = ks->value.ints.items, *s = st->value.ints.items,
                *r = ra->value.ints.items;
  if (k[0] != 1 || k[3] != 1 || s[0] != 1 || s[3] != 1 || r[0] != 1 ||
      r[3] != 1)
    return fail(error, error_len, "attributes across batch or depth");
  for (int i = 1; i < 3; i++)
    if (k[i] <= 0 || s[i] <= 0 || r[i] <= 0)
      return fail(error, error_len, "sizes out of range");
  const int64_t *d = x->dims;
  int64_t er = k[1] + (k[1] - 1) * (r[1] - 1);
  int64_t ec = k[2] + (k[2] - 1) * (r[2] - 1);
  int64_t oh, ow, pt, pl;
  if (!windowed(d[1], er, s[1], same, &oh, &pt) ||
      !windowed(d[2], ec, s[2], same, &ow, &pl))
    return fail(error, error_len, "output size");
  ref_tensor_alloc(&out[0], x->dtype, D(d[0], oh, ow, k[1] * k[2] * d[3]), 4);
  int64_t i = 0;
  for (int64_t b = 0; b < d[0]; b++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t xx = 0; xx < ow; xx++)
        for (int64_t kr = 0; kr < k[1]; kr++)
          for (int64_t kc = 0; kc < k[2]; kc++) {
            int64_t iy = y * s[1] - pt + kr * r[1];
            int64_t ix = xx * s[2] - pl + kc * r[2];
            bool inside = iy >= 0 && iy < d[1] && ix >= 0 && ix < d[2];
            for (int64_t ch = 0; ch < d[3]; ch++, i++)
              out[0].v[i] = inside ? x->v[nhwc(d, b, iy, ix, ch)] : 0.0;
          }
  return 1;
}

/* ---- Colour spaces and adjustments ---------------------------------------- */

static void rgb_to_hsv(double r, double g, double b, double *h, double *s,
                       double *v)
{
  double mx = fmax(r, fmax(g, b)), range = mx - fmin(r, fmin(g, b));
  *v = mx;
  *s = mx > 0 ? range / mx : 0;
  if (range > 0) {
    double norm = 1.0 / (6.0 * range);
    *h = r == mx   ? norm * (g - b)
         : g == mx ? norm * (b - r) + 2.0 / 6
                   : norm * (r - g) + 4.0 / 6;
  } else {
    *h = 0;
  }
  if (*h < 0)
    *h += 1;
}

static double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

static void hsv_to_rgb(double h, double s, double v, double *rgb)
{
  double dh = h * 6;
  double d[3] = {clamp01(fabs(dh - 3) - 1), clamp01(2 - fabs(dh - 2)),
                 clamp01(2 - fabs(dh - 4))};
  for (int k = 0; k < 3; k++)
    rgb[k] = (1 - s + s * d[k]) * v;
}

static int colour_check(const struct ref_case *c, bool adjust, char *error,
                        int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  if (x->rank < (adjust ? 3 : 1) ||
      (strcmp(c->op, "AdjustContrastv2") != 0 && x->dims[x->rank - 1] != 3) ||
      (adjust && c->inputs[1].rank != 0))
    return fail(error, error_len, "shapes");
  return 0;
}

static int colour_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  if (colour_check(c, false, error, error_len) < 0)
    return -1;
  bool to_hsv = strcmp(c->op, "RGBToHSV") == 0;
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  for (int64_t p = 0; p < x->elements; p += 3) {
    const double *in = x->v + p;
    double *o = out[0].v + p;
    if (to_hsv)
      rgb_to_hsv(in[0], in[1], in[2], &o[0], &o[1], &o[2]);
    else
      hsv_to_rgb(in[0], in[1], in[2], o);
  }
  return 1;
}

static int contrast_compute(const struct ref_case *c, struct ref_tensor *out,
                            char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  if (colour_check(c, true, error, error_len) < 0)
    return -1;
  double f = c->inputs[1].v[0];
  int64_t ch = x->dims[x->rank - 1];
  int64_t pixels = x->dims[x->rank - 2] * x->dims[x->rank - 3];
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  int64_t images = pixels * ch > 0 ? x->elements / (pixels * ch) : 0;
  for (int64_t im = 0; im < images; im++)
    for (int64_t k = 0; k < ch; k++) {
      const double *in = x->v + im * pixels * ch + k;
      double *o = out[0].v + im * pixels * ch + k;
      double mean = 0;
      for (int64_t p = 0; p < pixels; p++)
        mean += in[p * ch];
      mean /= (double)pixels;
      for (int64_t p = 0; p < pixels; p++)
        o[p * ch] = (in[p * ch] - mean) * f + mean;
    }
  return 1;
}

/* AdjustHue and AdjustSaturation as TensorFlow's GPU kernel writes them
 * (adjust_hsv_gpu.cu.h), in float64. */
static int adjust_hsv_compute(const struct ref_case *c, struct ref_tensor *out,
                              char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0];
  if (colour_check(c, true, error, error_len) < 0)
    return -1;
  bool hue = strcmp(c->op, "AdjustHue") == 0;
  double amount = c->inputs[1].v[0];
  ref_tensor_alloc(&out[0], x->dtype, x->dims, x->rank);
  for (int64_t p = 0; p < x->elements; p += 3) {
    double r = x->v[p], g = x->v[p + 1], b = x->v[p + 2];
    double M = fmax(r, fmax(g, b)), m = fmin(r, fmin(g, b)), chroma = M - m;
    double h = 0, s = M > 0 ? chroma / M : 0;
    if (chroma > 0) {
      if (M == r) {
        double num = (g - b) / chroma, sign = copysign(1.0, num);
        h = ((sign < 0) * 6.0 + sign * fmod(sign * num, 6.0)) / 6.0;
      } else if (M == g) {
        h = ((b - r) / chroma + 2.0) / 6.0;
      } else {
        h = ((r - g) / chroma + 4.0) / 6.0;
      }
    }
    if (hue) {
      h = fmod(h + amount, 1.0);
      if (h < 0)
        h = fmod(1.0 + h, 1.0);
    } else {
      s = fmin(1.0, fmax(0.0, s * amount));
    }
    double nh = h * 6, cc = M * s, xx = cc * (1 - fabs(fmod(nh, 2.0) - 1));
    double nm = M - cc;
    int sector = nh >= 0 && nh < 6 ? (int)nh : -1;
    double rgb[3] = {nm, nm, nm};
    static const int chroma_at[6] = {0, 1, 1, 2, 2, 0};
    static const int x_at[6] = {1, 0, 2, 1, 0, 2};
    if (sector >= 0) {
      rgb[chroma_at[sector]] += cc;
      rgb[x_at[sector]] += xx;
    }
    for (int k = 0; k < 3; k++)
      out[0].v[p + k] = rgb[k];
  }
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
  /* The interpolating gradients take float grads and the original image. */
  bool bilinear_grad = strcmp(op, "ResizeBilinearGrad") == 0 ||
                       strcmp(op, "ResizeBicubicGrad") == 0;
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
  /* Pixels of 8 and 16 channels (the CPU shapes' 8-wide vectors), rows
   * not a whole number of the forward pass's blocks of rows. */
  resize_case(out, o, dtype, "channels 8", D(2, 5, 6, 8), 4, 10, 13, false,
              true);
  resize_case(out, o, dtype, "channels 16 legacy", D(1, 9, 7, 16), 4, 5, 3,
              false, false);
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
  if (!strcmp(o, "ResizeBilinearGrad") || !strcmp(o, "ResizeBicubicGrad")) {
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


/* ---- Cases of the second half -------------------------------------------- */

/* Maps an input's values into [0, 1] (colour images), rounded to its
 * dtype. */
static void unit_values(struct ref_tensor *t)
{
  for (int64_t i = 0; i < t->elements; i++)
    t->v[i] = ref_round_to(t->dtype, fabs(t->v[i]) / 3.0);
}

static void bicubic_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  resize_cases(op, dtype, out);
  const char *o = op->op;
  /* Keys' kernel at borders (renormalised weights), big downscales. */
  resize_case(out, o, dtype, "half pixel down x4", D(1, 17, 21, 2), 4, 4, 5,
              false, true);
  resize_case(out, o, dtype, "legacy down x4", D(1, 17, 21, 2), 4, 4, 5,
              false, false);
  resize_case(out, o, dtype, "align corners up", D(2, 3, 4, 3), 4, 10, 9,
              true, false);
}

static const double crop_boxes[] = {
    0.1, 0.2, 0.8, 0.9,   /* inside */
    0.9, 0.7, 0.2, 0.1,   /* flipped */
    -0.2, -0.1, 1.3, 1.2, /* partly outside: extrapolated */
    0.3, 0.3, 0.3, 0.6,   /* zero height */
    0.0, 0.0, 1.0, 1.0,   /* the whole image */
    0.45, 0.55, 0.5, 0.6, /* small: upsampled */
};
static const double crop_box_ind[] = {0, 1, 1, 0, 1, 0};
#define CROP_BOXES 6

/* A case of one of the three crop ops over image `img` (b, h, w, d),
 * `nb` of the boxes above, crops of ch x cw. */
static struct ref_case *crop_case(struct ref_cases *out, const char *op,
                                  TF_DataType dtype, const char *label,
                                  const int64_t *img, int64_t nb, int64_t ch,
                                  int64_t cw, const char *method)
{
  struct ref_case *c = ref_case_add(out, op, "%s %s", op, label);
  double ind[CROP_BOXES];
  for (int64_t i = 0; i < nb; i++)
    ind[i] = crop_box_ind[i] < (double)img[0] ? crop_box_ind[i] : 0;
  if (!strcmp(op, "CropAndResize")) {
    ref_case_input(c, dtype, img, 4, REF_ANY);
    ref_case_input_values(c, TF_FLOAT, D(nb, 4), 2, crop_boxes);
    ref_case_input_values(c, TF_INT32, D(nb), 1, ind);
    ref_case_input_values(c, TF_INT32, D(2), 1,
                          (const double[]){(double)ch, (double)cw});
  } else if (!strcmp(op, "CropAndResizeGradImage")) {
    ref_case_input(c, TF_FLOAT, D(nb, ch, cw, img[3]), 4, REF_ANY);
    ref_case_input_values(c, TF_FLOAT, D(nb, 4), 2, crop_boxes);
    ref_case_input_values(c, TF_INT32, D(nb), 1, ind);
    ref_case_input_values(c, TF_INT32, D(4), 1,
                          (const double[]){(double)img[0], (double)img[1],
                                           (double)img[2], (double)img[3]});
    ref_case_attr_type(c, "T", dtype);
  } else {
    ref_case_input(c, TF_FLOAT, D(nb, ch, cw, img[3]), 4, REF_ANY);
    ref_case_input(c, dtype, img, 4, REF_ANY);
    ref_case_input_values(c, TF_FLOAT, D(nb, 4), 2, crop_boxes);
    ref_case_input_values(c, TF_INT32, D(nb), 1, ind);
  }
  if (method != NULL)
    ref_case_attr_string(c, "method", method);
  return c;
}

static void crop_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  const char *o = op->op;
  bool boxes_grad = !strcmp(o, "CropAndResizeGradBoxes");
  bool forward = !strcmp(o, "CropAndResize");
  crop_case(out, o, dtype, "bilinear", D(2, 7, 9, 3), CROP_BOXES, 5, 4, NULL);
  crop_case(out, o, dtype, "1x1 crops", D(2, 6, 5, 2), CROP_BOXES, 1, 1,
            "bilinear");
  crop_case(out, o, dtype, "one row", D(2, 6, 5, 2), CROP_BOXES, 1, 7, NULL);
  crop_case(out, o, dtype, "channels 37", D(2, 4, 5, 37), 3, 3, 2, NULL);
  crop_case(out, o, dtype, "upsampled", D(2, 5, 6, 2), CROP_BOXES, 11, 13,
            NULL);
  crop_case(out, o, dtype, "one image", D(1, 8, 8, 1), 1, 4, 4, NULL);
  crop_case(out, o, dtype, "empty batch of boxes", D(2, 5, 5, 2), 0, 3, 3,
            NULL);
  if (!boxes_grad) {
    crop_case(out, o, dtype, "nearest", D(2, 7, 9, 3), CROP_BOXES, 5, 4,
              "nearest");
    crop_case(out, o, dtype, "nearest upsampled", D(2, 5, 6, 2), CROP_BOXES,
              11, 13, "nearest");
  }
  if (forward) {
    struct ref_case *c = crop_case(out, o, dtype, "extrapolation 0.5",
                                   D(2, 7, 9, 3), CROP_BOXES, 5, 4, NULL);
    ref_case_attr_float(c, "extrapolation_value", 0.5f);
    c = crop_case(out, o, dtype, "NaN image", D(2, 4, 4, 1), 2, 3, 3, NULL);
    c->inputs[0].v[5] = NAN;
    c = crop_case(out, o, dtype, "NaN box", D(2, 4, 4, 1), 2, 3, 3, NULL);
    c->inputs[1].v[2] = NAN;
    c->expect_code = TF_INVALID_ARGUMENT;
    c = crop_case(out, o, dtype, "crop size 0", D(2, 4, 4, 1), 2, 0, 3, NULL);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = crop_case(out, o, dtype, "empty image", D(2, 0, 4, 1), 2, 3, 3, NULL);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
  struct ref_case *c =
      crop_case(out, o, dtype, "box_ind out of range", D(2, 5, 5, 1), 3, 3,
                3, NULL);
  c->inputs[boxes_grad ? 3 : 2].v[1] = 2;
  c->expect_code = TF_OUT_OF_RANGE;
  c = crop_case(out, o, dtype, "negative box_ind", D(2, 5, 5, 1), 3, 3, 3,
                NULL);
  c->inputs[boxes_grad ? 3 : 2].v[2] = -1;
  c->expect_code = TF_OUT_OF_RANGE;
  c = crop_case(out, o, dtype, "bad method", D(2, 5, 5, 1), 2, 3, 3,
                boxes_grad ? "nearest" : "bicubic");
  c->expect_code = TF_INVALID_ARGUMENT;
  /* box_ind of a length other than the boxes'. */
  c = ref_case_add(out, o, "%s box_ind of 2 for 3 boxes", o);
  if (forward) {
    ref_case_input(c, dtype, D(2, 5, 5, 1), 4, REF_ANY);
    ref_case_input_values(c, TF_FLOAT, D(3, 4), 2, crop_boxes);
    ref_case_input_values(c, TF_INT32, D(2), 1, crop_box_ind);
    ref_case_input_values(c, TF_INT32, D(2), 1, (const double[]){3, 3});
  } else if (!boxes_grad) {
    ref_case_input(c, TF_FLOAT, D(3, 3, 3, 1), 4, REF_ANY);
    ref_case_input_values(c, TF_FLOAT, D(3, 4), 2, crop_boxes);
    ref_case_input_values(c, TF_INT32, D(2), 1, crop_box_ind);
    ref_case_input_values(c, TF_INT32, D(4), 1, (const double[]){2, 5, 5, 1});
    ref_case_attr_type(c, "T", dtype);
  } else {
    ref_case_input(c, TF_FLOAT, D(3, 3, 3, 1), 4, REF_ANY);
    ref_case_input(c, dtype, D(2, 5, 5, 1), 4, REF_ANY);
    ref_case_input_values(c, TF_FLOAT, D(3, 4), 2, crop_boxes);
    ref_case_input_values(c, TF_INT32, D(2), 1, crop_box_ind);
  }
  c->expect_code = TF_INVALID_ARGUMENT;
}

static struct ref_case *patches_case(struct ref_cases *out, TF_DataType dtype,
                                     const char *label, const int64_t *dims,
                                     int rank, const int64_t *k,
                                     const int64_t *s, const int64_t *r,
                                     const char *padding)
{
  struct ref_case *c =
      ref_case_add(out, "ExtractImagePatches", "ExtractImagePatches %s", label);
  ref_case_input(c, dtype, dims, rank, REF_ANY);
  ref_case_attr_ints(c, "ksizes", k, 4);
  ref_case_attr_ints(c, "strides", s, 4);
  ref_case_attr_ints(c, "rates", r, 4);
  ref_case_attr_string(c, "padding", padding);
  return c;
}

static void patches_cases(const struct ref_op *op, TF_DataType dtype,
                          struct ref_cases *out)
{
  (void)op;
  patches_case(out, dtype, "3x2 valid", D(2, 7, 9, 3), 4, D(1, 3, 2, 1),
               D(1, 1, 1, 1), D(1, 1, 1, 1), "VALID");
  patches_case(out, dtype, "strided same", D(2, 7, 9, 3), 4, D(1, 3, 2, 1),
               D(1, 2, 3, 1), D(1, 1, 1, 1), "SAME");
  patches_case(out, dtype, "rates same", D(1, 8, 7, 2), 4, D(1, 2, 3, 1),
               D(1, 1, 2, 1), D(1, 2, 2, 1), "SAME");
  patches_case(out, dtype, "rates valid", D(1, 8, 7, 2), 4, D(1, 2, 3, 1),
               D(1, 3, 1, 1), D(1, 3, 2, 1), "VALID");
  patches_case(out, dtype, "1x1", D(2, 3, 4, 5), 4, D(1, 1, 1, 1),
               D(1, 1, 1, 1), D(1, 1, 1, 1), "VALID");
  patches_case(out, dtype, "window larger, same", D(1, 2, 3, 1), 4,
               D(1, 4, 5, 1), D(1, 1, 1, 1), D(1, 1, 1, 1), "SAME");
  patches_case(out, dtype, "channels 67", D(1, 4, 3, 67), 4, D(1, 2, 2, 1),
               D(1, 1, 1, 1), D(1, 1, 1, 1), "SAME");
  patches_case(out, dtype, "empty batch", D(0, 4, 4, 2), 4, D(1, 2, 2, 1),
               D(1, 1, 1, 1), D(1, 1, 1, 1), "VALID");
  patches_case(out, dtype, "no output rows", D(1, 4, 5, 1), 4, D(1, 3, 2, 1),
               D(1, 1, 1, 1), D(1, 2, 1, 1), "VALID");
  patches_case(out, dtype, "negative output", D(1, 2, 5, 1), 4, D(1, 5, 2, 1),
               D(1, 1, 1, 1), D(1, 1, 1, 1), "VALID")
      ->expect_code = TF_INVALID_ARGUMENT;
  patches_case(out, dtype, "rank 3", D(4, 4, 2), 3, D(1, 2, 2, 1),
               D(1, 1, 1, 1), D(1, 1, 1, 1), "VALID")
      ->expect_code = TF_INVALID_ARGUMENT;
  patches_case(out, dtype, "ksize across depth", D(1, 4, 4, 2), 4,
               D(1, 2, 2, 2), D(1, 1, 1, 1), D(1, 1, 1, 1), "VALID")
      ->expect_code = TF_UNIMPLEMENTED;
  patches_case(out, dtype, "ksize 0", D(1, 4, 4, 2), 4, D(1, 0, 2, 1),
               D(1, 1, 1, 1), D(1, 1, 1, 1), "VALID")
      ->expect_code = TF_OUT_OF_RANGE;
  patches_case(out, dtype, "stride 0", D(1, 4, 4, 2), 4, D(1, 2, 2, 1),
               D(1, 1, 0, 1), D(1, 1, 1, 1), "SAME")
      ->expect_code = TF_OUT_OF_RANGE;
  patches_case(out, dtype, "negative rate", D(1, 4, 4, 2), 4, D(1, 2, 2, 1),
               D(1, 1, 1, 1), D(1, -1, 1, 1), "SAME")
      ->expect_code = TF_OUT_OF_RANGE;
}

static void colour_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  const char *o = op->op;
  static const struct {
    const char *label;
    int64_t dims[4];
    int rank;
  } shapes[] = {{"one pixel", {3}, 1},
                {"7 pixels", {7, 3}, 2},
                {"images", {2, 5, 7, 3}, 4},
                {"odd", {1, 31, 17, 3}, 4},
                {"empty", {0, 3}, 2}};
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, o, "%s %s", o, shapes[i].label);
    unit_values(ref_case_input(c, dtype, shapes[i].dims, shapes[i].rank,
                               REF_ANY));
  }
  /* Grey, ties between the largest channels, black, white, primaries. */
  static const double edges[] = {0.5, 0.5, 0.5, 0.25, 0.75, 0.75,
                                 0.75, 0.75, 0.25, 0.75, 0.25, 0.75,
                                 0,   0,    0,    1,    1,    1,
                                 1,   0,    0,    0,    1,    0,
                                 0,   0,    1,    1,    0,    0.5};
  struct ref_case *c = ref_case_add(out, o, "%s edge colours", o);
  ref_case_input_values(c, dtype, D(10, 3), 2, edges);
  c = ref_case_add(out, o, "%s scalar", o);
  ref_case_input(c, dtype, NULL, 0, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, o, "%s 4 channels", o);
  ref_case_input(c, dtype, D(2, 4), 2, REF_ANY);
  c->expect_code = TF_FAILED_PRECONDITION;
}

static void adjust_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  const char *o = op->op;
  bool contrast = !strcmp(o, "AdjustContrastv2");
  bool hue = !strcmp(o, "AdjustHue");
  static const struct {
    const char *label;
    int64_t dims[5];
    int rank;
    double amount;
  } shapes[] = {{"images", {2, 5, 7, 3}, 4, 0.4},
                {"one image", {9, 13, 3}, 3, 1.7},
                {"negative", {1, 6, 5, 3}, 4, -0.7},
                {"rank 5", {2, 2, 3, 4, 3}, 5, 2.5},
                {"one pixel", {3, 1, 1, 3}, 4, 0.9},
                {"empty", {0, 3, 3, 3}, 4, 0.5}};
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    struct ref_case *c = ref_case_add(out, o, "%s %s", o, shapes[i].label);
    struct ref_tensor *x =
        ref_case_input(c, dtype, shapes[i].dims, shapes[i].rank, REF_ANY);
    if (!contrast)
      unit_values(x);
    ref_case_input_values(c, TF_FLOAT, NULL, 0, &shapes[i].amount);
  }
  if (contrast) {
    struct ref_case *c = ref_case_add(out, o, "%s channels 5", o);
    ref_case_input(c, dtype, D(2, 4, 3, 5), 4, REF_ANY);
    ref_case_input_values(c, TF_FLOAT, NULL, 0, (const double[]){-1.5});
  } else {
    struct ref_case *c = ref_case_add(out, o, "%s edge colours", o);
    static const double edges[] = {0.5, 0.5, 0.5, 0.25, 0.75, 0.75,
                                   0.75, 0.75, 0.25, 0, 0, 0,
                                   1, 0, 0, 0, 1, 0};
    ref_case_input_values(c, dtype, D(1, 2, 3, 3), 4, edges);
    ref_case_input_values(c, TF_FLOAT, NULL, 0,
                          (const double[]){hue ? 0.3 : 1.5});
    c = ref_case_add(out, o, "%s 4 channels", o);
    ref_case_input(c, dtype, D(1, 2, 2, 4), 4, REF_ANY);
    ref_case_input_values(c, TF_FLOAT, NULL, 0, (const double[]){0.5});
    c->expect_code = TF_INVALID_ARGUMENT;
  }
  struct ref_case *c = ref_case_add(out, o, "%s rank 2", o);
  ref_case_input(c, dtype, D(4, 3), 2, REF_ANY);
  ref_case_input_values(c, TF_FLOAT, NULL, 0, (const double[]){0.5});
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, o, "%s amount of shape [1]", o);
  ref_case_input(c, dtype, D(1, 2, 2, 3), 4, REF_ANY);
  ref_case_input_values(c, TF_FLOAT, D(1), 1, (const double[]){0.5});
  c->expect_code = TF_INVALID_ARGUMENT;
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
    /* Sixteen weighted taps in float, the weights a few ulps from
     * TensorFlow's table (evaluated in float on the device). */
    {"ResizeBicubic", TOL(1e-5, 1e-5), REF_ANY, bicubic_cases,
     bicubic_compute},
    {"ResizeBicubicGrad", TOL(1e-5, 1e-5), REF_ANY, bicubic_cases,
     bicubic_grad_compute},
    {"CropAndResize", TOL(1e-5, 1e-5), REF_ANY, crop_cases, crop_compute},
    {"CropAndResizeGradImage", TOL(1e-5, 1e-5), REF_ANY, crop_cases,
     crop_grad_image_compute},
    /* Sums over a whole crop in float, in another order than the CPU's. */
    {"CropAndResizeGradBoxes", TOL(1e-4, 1e-4), REF_ANY, crop_cases,
     crop_grad_boxes_compute},
    {"ExtractImagePatches", TOL(0.0, 0.0), REF_ANY, patches_cases,
     patches_compute},
    {"RGBToHSV", TOL(1e-5, 1e-5), REF_ANY, colour_cases, colour_compute},
    {"HSVToRGB", TOL(1e-5, 1e-5), REF_ANY, colour_cases, colour_compute},
    /* A mean over the image in float. */
    {"AdjustContrastv2", TOL(1e-5, 1e-5), REF_ANY, adjust_cases,
     contrast_compute},
    {"AdjustSaturation", TOL(1e-5, 1e-5), REF_ANY, adjust_cases,
     adjust_hsv_compute},
    {"AdjustHue", TOL(1e-5, 1e-5), REF_ANY, adjust_cases, adjust_hsv_compute},
    {.op = NULL},
};
