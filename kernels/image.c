/* Image ops, NHWC. Resizing: ResizeBilinear, ResizeBilinearGrad,
 * ResizeNearestNeighbor, ResizeNearestNeighborGrad, ResizeBicubic and
 * ResizeBicubicGrad, with TensorFlow's align_corners and half_pixel_centers
 * attributes and checks (image_resizer_state.h). CropAndResize,
 * CropAndResizeGradImage and CropAndResizeGradBoxes (box_ind checked on the
 * host, as TensorFlow's GPU kernels do: OUT_OF_RANGE). ExtractImagePatches.
 * RGBToHSV, HSVToRGB, AdjustContrastv2, AdjustSaturation and AdjustHue.
 *
 * No gradient needs atomics (TensorFlow's GPU kernels scatter with atomic
 * adds), and all are deterministic: in the GPU shapes each element of an
 * image gradient gathers the terms that reach it, found by binary search on
 * the monotone coordinate maps; in the CPU shapes each work-item owns a row
 * of the output and adds into it alone; the box gradients reduce each box in
 * a work-group.
 *
 * float, half, bfloat16 and double, as TensorFlow's GPU kernels take them.
 * Values are interpolated in float (double only accumulates gradients, and
 * only where the device has fp64); the nearest-neighbour forward pass moves
 * elements as raw bytes, so double needs no fp64 there. The gradients
 * gather per element of the original image: deterministic, no atomics
 * (image.cl). `size` is HostMemory, as in TensorFlow's GPU registrations. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "conv_geometry.h"
#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_image[];

enum { IDX32, IDX64, NUM_WIDTHS };

/* Programs per dtype and index width (typed), and per element size for the
 * nearest-neighbour forward pass (raw). */
enum { T_FLOAT, T_HALF, T_BF16, T_DOUBLE, NUM_TYPED };
#define IMAGE_PROGRAM(name, defines, index) \
  {"image_" name "_" index, ocl_cl_source_image, defines " -DI=" index}
OCL_PROGRAM_TABLE
static const struct ocl_program typed_programs[NUM_TYPED][NUM_WIDTHS] = {
    {IMAGE_PROGRAM("float", "-DT_IS_FLOAT", "int"),
     IMAGE_PROGRAM("float", "-DT_IS_FLOAT", "long")},
    {IMAGE_PROGRAM("half", "-DT_IS_HALF", "int"),
     IMAGE_PROGRAM("half", "-DT_IS_HALF", "long")},
    {IMAGE_PROGRAM("bf16", "-DT_IS_BF16", "int"),
     IMAGE_PROGRAM("bf16", "-DT_IS_BF16", "long")},
    {IMAGE_PROGRAM("double", "-DT_IS_DOUBLE", "int"),
     IMAGE_PROGRAM("double", "-DT_IS_DOUBLE", "long")},
};
enum { RAW_2, RAW_4, RAW_8, NUM_RAW };
OCL_PROGRAM_TABLE
static const struct ocl_program raw_programs[NUM_RAW][NUM_WIDTHS] = {
    {IMAGE_PROGRAM("raw2", "-DRAW=ushort", "int"),
     IMAGE_PROGRAM("raw2", "-DRAW=ushort", "long")},
    {IMAGE_PROGRAM("raw4", "-DRAW=uint", "int"),
     IMAGE_PROGRAM("raw4", "-DRAW=uint", "long")},
    {IMAGE_PROGRAM("raw8", "-DRAW=ulong", "int"),
     IMAGE_PROGRAM("raw8", "-DRAW=ulong", "long")},
};

enum image_kind {
  BILINEAR,
  BILINEAR_GRAD,
  NEAREST,
  NEAREST_GRAD,
  BICUBIC,
  BICUBIC_GRAD,
  CROP,
  CROP_GRAD_IMAGE,
  CROP_GRAD_BOXES,
  PATCHES,
  RGB_TO_HSV,
  HSV_TO_RGB,
  CONTRAST,
  SATURATION,
  HUE
};

/* The dtypes an op is registered for. */
#define MAX_IMAGE_TYPES 4
struct image_types {
  int count;
  TF_DataType t[MAX_IMAGE_TYPES];
};
#define RESIZE_TYPES {4, {TF_FLOAT, TF_HALF, TF_BFLOAT16, TF_DOUBLE}}

struct image_op {
  const char *op;
  enum image_kind kind;
  /* Kernel names in image.cl: <kernel>_flat and <kernel>_rows, or with
   * `single`, one kernel <kernel> for both shapes (its shape set by its
   * local size or per-element by nature); `second` a second pass. */
  const char *kernel;
  bool single;
  const char *second;
  const char *const *host_args;
  struct image_types types;
};

static const char *const size_arg[] = {"size", NULL};
static const char *const crop_size_arg[] = {"crop_size", NULL};
static const char *const image_size_arg[] = {"image_size", NULL};

/* The types: TensorFlow's GPU registrations where it has them (crop and
 * resize: half, float, double; the adjustments: half, float; colour
 * spaces: float, double, which we widen to the op's half and bfloat16);
 * its CPU ones for the bicubic resize, which has no GPU kernel. */
static const struct image_op image_ops[] = {
    {"ResizeBilinear", BILINEAR, "bilinear", false, NULL, size_arg,
     RESIZE_TYPES},
    {"ResizeBilinearGrad", BILINEAR_GRAD, "bilinear_grad", false, NULL, NULL,
     RESIZE_TYPES},
    {"ResizeNearestNeighbor", NEAREST, "nn", false, NULL, size_arg,
     RESIZE_TYPES},
    {"ResizeNearestNeighborGrad", NEAREST_GRAD, "nn_grad", false, NULL,
     size_arg, RESIZE_TYPES},
    {"ResizeBicubic", BICUBIC, "bicubic", false, NULL, size_arg,
     {4, {TF_FLOAT, TF_HALF, TF_BFLOAT16, TF_DOUBLE}}},
    {"ResizeBicubicGrad", BICUBIC_GRAD, "bicubic_grad", false, NULL, NULL,
     {2, {TF_FLOAT, TF_DOUBLE}}},
    {"CropAndResize", CROP, "crop", false, NULL, crop_size_arg,
     {3, {TF_FLOAT, TF_HALF, TF_DOUBLE}}},
    {"CropAndResizeGradImage", CROP_GRAD_IMAGE, "crop_grad_image", false,
     NULL, image_size_arg, {3, {TF_FLOAT, TF_HALF, TF_DOUBLE}}},
    {"CropAndResizeGradBoxes", CROP_GRAD_BOXES, "crop_grad_boxes", true, NULL,
     NULL, {3, {TF_FLOAT, TF_HALF, TF_DOUBLE}}},
    {"ExtractImagePatches", PATCHES, "patches", false, NULL, NULL,
     {4, {TF_FLOAT, TF_HALF, TF_BFLOAT16, TF_DOUBLE}}},
    {"RGBToHSV", RGB_TO_HSV, "rgb_to_hsv", true, NULL, NULL,
     {4, {TF_FLOAT, TF_HALF, TF_BFLOAT16, TF_DOUBLE}}},
    {"HSVToRGB", HSV_TO_RGB, "hsv_to_rgb", true, NULL, NULL,
     {4, {TF_FLOAT, TF_HALF, TF_BFLOAT16, TF_DOUBLE}}},
    {"AdjustContrastv2", CONTRAST, "contrast_mean", true, "contrast_apply",
     NULL, {2, {TF_FLOAT, TF_HALF}}},
    {"AdjustSaturation", SATURATION, "adjust_hsv", true, NULL, NULL,
     {2, {TF_FLOAT, TF_HALF}}},
    {"AdjustHue", HUE, "adjust_hsv", true, NULL, NULL,
     {2, {TF_FLOAT, TF_HALF}}},
};
#define NUM_IMAGE_OPS ((int)(sizeof(image_ops) / sizeof(image_ops[0])))

/* The kernel shapes: a work-item per element (GPU) or per row (CPU). */
enum { FLAT, ROWS, NUM_SHAPES };

struct image_kernel {
  const struct image_op *op;
  TF_DataType dtype;
  bool align_corners, half_pixel_centers;
  /* CropAndResize*: method "nearest", extrapolation_value. */
  bool nearest;
  float extrapolation;
  /* ExtractImagePatches: ksizes, strides, rates (rows, cols), padding. */
  int64_t ksizes[2], strides[2], rates[2];
  enum ocl_padding padding;
  struct ocl_kernel k[NUM_WIDTHS][NUM_SHAPES];
  struct ocl_kernel second[NUM_WIDTHS];
};

/* image.cl's resize_t at both widths. */
struct resize32 {
  cl_int batch, in_h, in_w, out_h, out_w, channels, n;
  cl_float height_scale, width_scale;
  cl_int half_pixel, align_corners;
};
struct resize64 {
  cl_long batch, in_h, in_w, out_h, out_w, channels, n;
  cl_float height_scale, width_scale;
  cl_int half_pixel, align_corners;
};

/* One resize, whichever op: the input tensor's dims (grads for the
 * gradients) and the output's. */
struct resize {
  int64_t batch, in_h, in_w, out_h, out_w, channels;
  float height_scale, width_scale;
};

/* TensorFlow's CalculateResizeScale. */
static float resize_scale(int64_t in_size, int64_t out_size,
                          bool align_corners)
{
  return align_corners && out_size > 1
             ? (float)(in_size - 1) / (float)(out_size - 1)
             : (float)in_size / (float)out_size;
}

#define SHAPE_STR_LEN 512
#define SHAPE(dims, rank) \
  shape_str(dims, rank, (char[SHAPE_STR_LEN]){0})
static const char *shape_str(const int64_t *dims, int rank, char *buf)
{
  ocl_shape_format(dims, rank, buf, SHAPE_STR_LEN);
  return buf;
}

static int tensor_dims(const TF_Tensor *t, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  for (int i = 0; i < rank; i++)
    dims[i] = ocl_tf.Dim(t, i);
  return rank;
}

/* The `size` argument: 1-D of two elements, as TensorFlow checks it. */
static bool read_size(struct ocl_op *op, const TF_Tensor *size_t_,
                      int64_t *h, int64_t *w)
{
  int64_t dims[OCL_MAX_RANK];
  int rank = tensor_dims(size_t_, dims);
  if (rank != 1)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "shape_t must be 1-dimensional%s", SHAPE(dims, rank));
  if (dims[0] != 2)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "shape_t must have two elements%s", SHAPE(dims, rank));
  *h = ocl_host_int(size_t_, 0);
  *w = ocl_host_int(size_t_, 1);
  return true;
}

/* ImageResizerState::ValidateAndCalculateOutputSize. */
static bool forward_state(struct ocl_op *op, const struct image_kernel *k,
                          const TF_Tensor *x, const TF_Tensor *size,
                          struct resize *r)
{
  int64_t dims[OCL_MAX_RANK];
  if (k->half_pixel_centers && k->align_corners)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "If half_pixel_centers is True, align_corners must be "
                       "False.");
  int rank = tensor_dims(x, dims);
  if (rank != 4)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input must be 4-dimensional%s", SHAPE(dims, rank));
  r->batch = dims[0];
  r->channels = dims[3];
  if (r->channels <= 0)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "image must have at least one channel");
  if (dims[1] <= 0 || dims[2] <= 0)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input image must be of non-zero size");
  if (dims[1] >= INT32_MAX || dims[2] >= INT32_MAX)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input sizes must be between 0 and max int32");
  r->in_h = dims[1];
  r->in_w = dims[2];
  if (!read_size(op, size, &r->out_h, &r->out_w))
    return false;
  if (r->out_h <= 0 || r->out_w <= 0)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "output dimensions must be positive");
  r->height_scale = resize_scale(r->in_h, r->out_h, k->align_corners);
  r->width_scale = resize_scale(r->in_w, r->out_w, k->align_corners);
  if (ceilf((float)(r->out_h - 1) * r->height_scale) > (float)INT64_MAX)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input image height scale would cause an overflow");
  if (ceilf((float)(r->out_w - 1) * r->width_scale) > (float)INT32_MAX)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input image width scale would cause an overflow");
  return true;
}

/* ImageResizerGradientState: grads (resized) against the original image. */
static bool bilinear_grad_state(struct ocl_op *op,
                                const struct image_kernel *k,
                                const TF_Tensor *grads,
                                const TF_Tensor *original, struct resize *r)
{
  int64_t dims[OCL_MAX_RANK], o_dims[OCL_MAX_RANK];
  if (k->half_pixel_centers && k->align_corners)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "If half_pixel_centers is True, align_corners must be "
                       "False.");
  int rank = tensor_dims(grads, dims);
  if (rank != 4)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input_grad must be 4-dimensional%s",
                       SHAPE(dims, rank));
  r->batch = dims[0];
  r->channels = dims[3];
  r->in_h = dims[1];
  r->in_w = dims[2];
  if (r->in_h <= 0 || r->in_w <= 0)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "resized dimensions must be positive");
  int o_rank = tensor_dims(original, o_dims);
  if (o_rank != 4)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "original_image must be 4-dimensional%s",
                       SHAPE(o_dims, o_rank));
  r->out_h = o_dims[1];
  r->out_w = o_dims[2];
  if (r->out_h <= 0 || r->out_w <= 0)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "original dimensions must be positive");
  if (r->out_h >= INT32_MAX || r->out_w >= INT32_MAX)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "original sizes must be between 0 and max int32");
  r->height_scale = resize_scale(r->out_h, r->in_h, k->align_corners);
  r->width_scale = resize_scale(r->out_w, r->in_w, k->align_corners);
  return true;
}

/* ResizeNearestNeighborGradOp's checks: grads against `size`, the
 * original image's. TensorFlow's CPU kernel takes align_corners together
 * with half_pixel_centers here, and so do we. */
static bool nearest_grad_state(struct ocl_op *op, const TF_Tensor *grads,
                               const TF_Tensor *size,
                               const struct image_kernel *k, struct resize *r)
{
  int64_t dims[OCL_MAX_RANK];
  int rank = tensor_dims(grads, dims);
  if (rank != 4)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input must be 4-dimensional%s", SHAPE(dims, rank));
  if (!read_size(op, size, &r->out_h, &r->out_w))
    return false;
  if (r->out_h <= 0 || r->out_w <= 0)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "shape_t's elements must be positive");
  r->batch = dims[0];
  r->in_h = dims[1];
  r->in_w = dims[2];
  r->channels = dims[3];
  r->height_scale = resize_scale(r->out_h, r->in_h, k->align_corners);
  r->width_scale = resize_scale(r->out_w, r->in_w, k->align_corners);
  return true;
}

/* Rows of a ResizeBilinear work-item in the CPU shape: its column taps
 * serve them all (image.cl's bilinear_rows takes any count). */
#define BILINEAR_ROWS_PER_ITEM 4

/* Enqueues the op's kernel over r: a work-item per output element (GPU
 * shape) or per output row (CPU shape; a block of rows for
 * ResizeBilinear). */
static bool launch(struct ocl_op *op, struct image_kernel *k,
                   const struct resize *r, const TF_Tensor *x, TF_Tensor *y,
                   int64_t in_elements)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  int64_t out_elements = r->batch * r->out_h * r->out_w * r->channels;
  if (out_elements == 0)
    return true;
  bool rows = info->cpu_shape;
  int64_t row_items =
      k->op->kind == BILINEAR
          ? (r->out_h + BILINEAR_ROWS_PER_ITEM - 1) / BILINEAR_ROWS_PER_ITEM
          : r->out_h;
  int64_t n = rows ? r->batch * row_items : out_elements;
  bool wide = out_elements > INT32_MAX || in_elements > INT32_MAX;
  struct resize32 a32;
  struct resize64 a64 = {r->batch, r->in_h, r->in_w, r->out_h, r->out_w,
                         r->channels, n, r->height_scale, r->width_scale,
                         k->half_pixel_centers, k->align_corners};
  if (!wide)
    a32 = (struct resize32){(cl_int)r->batch, (cl_int)r->in_h, (cl_int)r->in_w,
                            (cl_int)r->out_h, (cl_int)r->out_w,
                            (cl_int)r->channels, (cl_int)n, r->height_scale,
                            r->width_scale, k->half_pixel_centers,
                            k->align_corners};
  const struct ocl_arg args[] = {
      OCL_TENSOR(x), OCL_TENSOR(y),
      wide ? OCL_BYTES(&a64, sizeof(a64)) : OCL_BYTES(&a32, sizeof(a32))};
  struct ocl_kernel *kernel = &k->k[wide][rows ? ROWS : FLAT];
  if (rows)
    return ocl_launch_rows(op, kernel, (size_t)n, args, 3);
  return ocl_launch_1d(op, kernel, (size_t)n, args, 3);
}

/* The interpolating kernels need fp64 for double. */
static bool check_fp64(struct ocl_op *op, const struct image_kernel *k)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (k->dtype == TF_DOUBLE && !info->has_fp64)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "%s of float64 needs cl_khr_fp64, which OpenCL device "
                       "%d lacks",
                       k->op->op, info->ordinal);
  return true;
}

/* ---- Attributes ---------------------------------------------------------- */

/* Reads an int list attribute into vals[max]; its length, or -1 with the
 * status set. */
static int int_list_attr(TF_OpKernelConstruction *ctx, const char *name,
                         int64_t *vals, int max, TF_Status *status)
{
  int32_t size = 0, total = 0;
  if (ocl_tf.OpKernelConstruction_GetAttrSize == NULL ||
      ocl_tf.OpKernelConstruction_GetAttrInt64List == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks list attributes in its C API");
    return -1;
  }
  ocl_tf.OpKernelConstruction_GetAttrSize(ctx, name, &size, &total, status);
  if (ocl_tf.GetCode(status) == TF_OK && size > 0 && size <= max)
    ocl_tf.OpKernelConstruction_GetAttrInt64List(ctx, name, vals, size,
                                                 status);
  return ocl_tf.GetCode(status) == TF_OK ? size : -1;
}

/* A string attribute into buf (NUL-terminated); `fallback` when absent. */
static void string_attr(TF_OpKernelConstruction *ctx, const char *name,
                        char *buf, size_t len, const char *fallback,
                        TF_Status *status)
{
  memset(buf, 0, len);
  if (ocl_tf.OpKernelConstruction_GetAttrString != NULL)
    ocl_tf.OpKernelConstruction_GetAttrString(ctx, name, buf, len - 1, status);
  if (ocl_tf.OpKernelConstruction_GetAttrString == NULL ||
      ocl_tf.GetCode(status) != TF_OK) {
    ocl_set_ok(status);
    snprintf(buf, len, "%s", fallback);
  }
}

/* ExtractImagePatchesOp's ParseAttributeVec4 and its "across space"
 * checks. */
static bool patches_vec4(TF_OpKernelConstruction *ctx, const char *name,
                         const char *what, int64_t out[2], TF_Status *status)
{
  /* TensorFlow reads the first four of a longer list. */
  enum { MAX_LIST = 16 };
  int64_t v[MAX_LIST] = {0};
  int n = int_list_attr(ctx, name, v, MAX_LIST, status);
  if (n < 0)
    return false;
  if (n < 4 || n > MAX_LIST) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Sliding window %s field must specify 4 dimensions", name);
    return false;
  }
  if (v[0] != 1 || v[3] != 1) {
    ocl_set_status(status, TF_UNIMPLEMENTED, "Only support %s across space.",
                   what);
    return false;
  }
  out[0] = v[1];
  out[1] = v[2];
  return true;
}

/* The attributes of the ops past the bilinear and nearest resizes. */
static bool read_attrs(TF_OpKernelConstruction *ctx, struct image_kernel *k,
                       TF_Status *status)
{
  char buf[16];
  switch (k->op->kind) {
  case CROP:
  case CROP_GRAD_IMAGE:
  case CROP_GRAD_BOXES:
    string_attr(ctx, "method", buf, sizeof(buf), "bilinear", status);
    if (k->op->kind == CROP_GRAD_BOXES && strcmp(buf, "bilinear") != 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "method must be 'bilinear'%s", buf);
      return false;
    }
    if (strcmp(buf, "bilinear") != 0 && strcmp(buf, "nearest") != 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "method must be 'bilinear' or 'nearest'%s", buf);
      return false;
    }
    k->nearest = strcmp(buf, "nearest") == 0;
    if (k->op->kind == CROP) {
      float v = 0.0f;
      ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "extrapolation_value", &v,
                                               status);
      /* Absent from older graphs: TensorFlow's default, 0. */
      k->extrapolation = ocl_tf.GetCode(status) == TF_OK ? v : 0.0f;
      ocl_set_ok(status);
    }
    return true;
  case PATCHES:
    if (!patches_vec4(ctx, "ksizes", "ksizes", k->ksizes, status) ||
        !patches_vec4(ctx, "strides", "strides", k->strides, status) ||
        !patches_vec4(ctx, "rates", "rates", k->rates, status))
      return false;
    string_attr(ctx, "padding", buf, sizeof(buf), "", status);
    if (!ocl_padding_parse(buf, &k->padding) ||
        k->padding == OCL_PADDING_EXPLICIT) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Invalid padding '%s': SAME or VALID", buf);
      return false;
    }
    return true;
  default: return true;
  }
}

/* ---- CropAndResize and its gradients -------------------------------------- */

/* image.cl's crop_t. */
struct crop_args {
  cl_long num_boxes, batch, image_h, image_w, depth, crop_h, crop_w, n;
  cl_float extrapolation;
  cl_int nearest;
};

/* TensorFlow's ParseAndCheckBoxSizes. */
static bool box_sizes(struct ocl_op *op, const TF_Tensor *boxes,
                      const TF_Tensor *box_index, int64_t *num_boxes)
{
  int64_t bd[OCL_MAX_RANK], id[OCL_MAX_RANK];
  int b_rank = tensor_dims(boxes, bd), i_rank = tensor_dims(box_index, id);
  *num_boxes = 0;
  if (ocl_tf.TensorElementCount(boxes) == 0 &&
      ocl_tf.TensorElementCount(box_index) == 0)
    return true;
  if (b_rank != 2)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT, "boxes must be 2-D%s",
                       SHAPE(bd, b_rank));
  *num_boxes = bd[0];
  if (bd[1] != 4)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT, "boxes must have 4 columns");
  if (i_rank != 1)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT, "box_index must be 1-D%s",
                       SHAPE(id, i_rank));
  if (id[0] != *num_boxes)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "box_index has incompatible shape");
  return true;
}

/* RunIfBoxIndexIsValid: every box_index in [0, batch), read from the device
 * (TensorFlow's GPU kernels wait for the same answer), and, for the forward
 * op as TensorFlow's CPU kernel checks, every box coordinate finite. Read in
 * blocks so that no host buffer is allocated. */
static bool check_boxes(struct ocl_op *op, const TF_Tensor *boxes,
                        const TF_Tensor *box_index, int64_t num_boxes,
                        int64_t batch, bool check_finite)
{
  enum { BLOCK = 256 };
  int32_t index[BLOCK];
  float coords[BLOCK * 4];
  for (int64_t b0 = 0; b0 < num_boxes; b0 += BLOCK) {
    int64_t n = num_boxes - b0 < BLOCK ? num_boxes - b0 : BLOCK;
    if (!ocl_op_read(op, box_index, (size_t)b0 * sizeof(int32_t), index,
                     (size_t)n * sizeof(int32_t)))
      return false;
    for (int64_t i = 0; i < n; i++)
      if (index[i] < 0 || index[i] >= batch)
        return ocl_op_fail(op, TF_OUT_OF_RANGE,
                           "box_index has values outside [0, batch_size)");
    if (!check_finite)
      continue;
    if (!ocl_op_read(op, boxes, (size_t)b0 * 4 * sizeof(float), coords,
                     (size_t)n * 4 * sizeof(float)))
      return false;
    for (int64_t i = 0; i < n * 4; i++)
      if (!isfinite(coords[i]))
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "Boxes contains at least one element that is not "
                           "finite");
  }
  return true;
}

/* The validation of CropAndResizeOp, CropAndResizeGradImageOp and
 * CropAndResizeGradBoxesOp, in their order; fills a. */
static bool crop_state(struct ocl_op *op, const struct image_kernel *k,
                       TF_Tensor *const *in, struct crop_args *a)
{
  int64_t d[OCL_MAX_RANK], g[OCL_MAX_RANK];
  int rank;
  const TF_Tensor *boxes, *box_index;
  int64_t num_boxes;
  *a = (struct crop_args){.nearest = k->nearest,
                          .extrapolation = k->extrapolation};
  if (k->op->kind == CROP) {
    boxes = in[1];
    box_index = in[2];
    rank = tensor_dims(in[0], d);
    if (rank != 4)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT, "input image must be 4-D%s",
                         SHAPE(d, rank));
    a->batch = d[0];
    a->image_h = d[1];
    a->image_w = d[2];
    a->depth = d[3];
    if (d[1] <= 0 || d[2] <= 0)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "image dimensions must be positive");
    int b_rank = tensor_dims(boxes, g);
    if (b_rank != 2)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT, "boxes must be 2-D, got: %s",
                         SHAPE(g, b_rank));
    int i_rank = tensor_dims(box_index, g);
    if (i_rank != 1)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "box_indices must be rank 1 but is shape %s",
                         SHAPE(g, i_rank));
    if (!box_sizes(op, boxes, box_index, &num_boxes))
      return false;
    int s_rank = tensor_dims(in[3], g);
    if (s_rank != 1)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT, "crop_size must be 1-D%s",
                         SHAPE(g, s_rank));
    if (g[0] != 2)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "crop_size must have two elements%s",
                         SHAPE(g, s_rank));
    a->crop_h = ocl_host_int(in[3], 0);
    a->crop_w = ocl_host_int(in[3], 1);
    if (a->crop_h <= 0 || a->crop_w <= 0)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "crop dimensions must be positive");
  } else {
    bool grad_image = k->op->kind == CROP_GRAD_IMAGE;
    boxes = in[grad_image ? 1 : 2];
    box_index = in[grad_image ? 2 : 3];
    rank = tensor_dims(in[0], g);
    if (rank != 4)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT, "grads image must be 4-D%s",
                         SHAPE(g, rank));
    a->crop_h = g[1];
    a->crop_w = g[2];
    a->depth = g[3];
    if (g[1] <= 0 || g[2] <= 0)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "grads dimensions must be positive");
    if (grad_image) {
      if (!box_sizes(op, boxes, box_index, &num_boxes))
        return false;
      if (g[0] != num_boxes)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "boxes and grads have incompatible shape");
      int s_rank = tensor_dims(in[3], d);
      if (s_rank != 1)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT, "image_size must be 1-D%s",
                           SHAPE(d, s_rank));
      if (d[0] != 4)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "image_size must have 4 elements%s",
                           SHAPE(d, s_rank));
      a->batch = ocl_host_int(in[3], 0);
      a->image_h = ocl_host_int(in[3], 1);
      a->image_w = ocl_host_int(in[3], 2);
      int64_t depth = ocl_host_int(in[3], 3);
      if (a->image_h <= 0 || a->image_w <= 0)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "image dimensions must be positive");
      if (g[3] != depth)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "image_size and grads are incompatible");
      if (a->batch < 0)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "Expected a non-negative size, got %lld",
                           (long long)a->batch);
    } else {
      int i_rank = tensor_dims(in[1], d);
      if (i_rank != 4)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "input image must be 4-D%s", SHAPE(d, i_rank));
      a->batch = d[0];
      a->image_h = d[1];
      a->image_w = d[2];
      if (d[1] <= 0 || d[2] <= 0)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "image dimensions must be positive");
      if (d[3] != a->depth)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "image, grads depth differ");
      if (!box_sizes(op, boxes, box_index, &num_boxes))
        return false;
      if (g[0] != num_boxes)
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "boxes and grads have incompatible shape");
    }
  }
  a->num_boxes = num_boxes;
  return true;
}

static void crop_compute(struct image_kernel *k, TF_OpKernelContext *ctx)
{
  struct ocl_op op;
  TF_Tensor *in[4] = {NULL};
  struct crop_args a;
  enum image_kind kind = k->op->kind;

  ocl_op_begin(&op, ctx);
  for (int i = 0; i < 4; i++)
    if ((in[i] = ocl_op_input(&op, i)) == NULL)
      goto out;
  if (!crop_state(&op, k, in, &a) || !check_fp64(&op, k))
    goto out;
  int64_t out_dims[4];
  int out_rank = 4;
  if (kind == CROP) {
    out_dims[0] = a.num_boxes;
    out_dims[1] = a.crop_h;
    out_dims[2] = a.crop_w;
    out_dims[3] = a.depth;
  } else if (kind == CROP_GRAD_IMAGE) {
    out_dims[0] = a.batch;
    out_dims[1] = a.image_h;
    out_dims[2] = a.image_w;
    out_dims[3] = a.depth;
  } else {
    out_dims[0] = a.num_boxes;
    out_dims[1] = 4;
    out_rank = 2;
  }
  TF_Tensor *y = ocl_op_output(&op, 0, kind == CROP_GRAD_IMAGE ? k->dtype
                                                               : TF_FLOAT,
                               out_dims, out_rank);
  if (y == NULL)
    goto out;
  const TF_Tensor *boxes = in[kind == CROP_GRAD_BOXES ? 2 : 1];
  const TF_Tensor *box_index = in[kind == CROP_GRAD_BOXES ? 3 : 2];
  if (!check_boxes(&op, boxes, box_index, a.num_boxes, a.batch, kind == CROP))
    goto out;
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto out;
  int64_t out_elements = ocl_tf.TensorElementCount(y);
  if (out_elements == 0)
    goto out;
  if (kind == CROP_GRAD_BOXES && a.num_boxes > 0 &&
      a.crop_h * a.crop_w * a.depth == 0) {
    /* Nothing to sum: zeros. */
    static const float zero = 0.0f;
    ocl_op_fill(&op, y, 0, &zero, sizeof(zero),
                (size_t)out_elements * sizeof(float));
    goto out;
  }
  int64_t image_elements = a.batch * a.image_h * a.image_w * a.depth;
  int64_t crop_elements = a.num_boxes * a.crop_h * a.crop_w * a.depth;
  bool wide = image_elements > INT32_MAX || crop_elements > INT32_MAX;
  bool rows = info->cpu_shape;
  if (kind == CROP_GRAD_BOXES) {
    struct ocl_kernel *kernel = &k->k[wide][FLAT];
    size_t local = rows ? 1 : ocl_kernel_fit_local(&op, kernel, 256);
    if (local == 0)
      goto out;
    a.n = a.num_boxes;
    const struct ocl_arg args[] = {
        OCL_TENSOR(in[0]), OCL_TENSOR(in[1]), OCL_TENSOR(in[2]),
        OCL_TENSOR(in[3]), OCL_TENSOR(y),     OCL_BYTES(&a, sizeof(a)),
        OCL_LOCAL(local * 4 * sizeof(float))};
    size_t global = (size_t)a.num_boxes * local;
    ocl_launch(&op, kernel, 1, &global, &local, args, 7);
    goto out;
  }
  /* CropAndResize: rows of the crops; the image gradient: rows of the
   * image. */
  int64_t row_count = kind == CROP ? a.num_boxes * a.crop_h
                                   : a.batch * a.image_h;
  /* The image gradient's row kernel adds into its row of the output, in
   * the dtype: exact enough for float and double, not for half, whose
   * gradients gather in float per element in either shape. */
  if (kind == CROP_GRAD_IMAGE && k->dtype == TF_HALF)
    rows = false;
  a.n = rows ? row_count : out_elements;
  struct ocl_kernel *kernel = &k->k[wide][rows ? ROWS : FLAT];
  const struct ocl_arg args[] = {OCL_TENSOR(in[0]), OCL_TENSOR(in[1]),
                                 OCL_TENSOR(in[2]), OCL_TENSOR(y),
                                 OCL_BYTES(&a, sizeof(a))};
  if (rows)
    ocl_launch_rows(&op, kernel, (size_t)a.n, args, 5);
  else
    ocl_launch_1d(&op, kernel, (size_t)a.n, args, 5);
out:
  ocl_op_end(&op);
}

/* ---- ExtractImagePatches -------------------------------------------------- */

/* image.cl's patches_t. */
struct patches_args {
  cl_long batch, in_h, in_w, depth, out_h, out_w;
  cl_long k_rows, k_cols, stride_rows, stride_cols, rate_rows, rate_cols;
  cl_long pad_top, pad_left, n;
};

static void patches_compute(struct image_kernel *k, TF_OpKernelContext *ctx)
{
  struct ocl_op op;
  int64_t d[OCL_MAX_RANK];

  ocl_op_begin(&op, ctx);
  /* ExtractImagePatchesOp's first checks, before the input's. */
  static const char *const names[3] = {"ksizes", "strides", "rates"};
  const int64_t *sizes[3] = {k->ksizes, k->strides, k->rates};
  for (int i = 0; i < 3; i++)
    if (sizes[i][0] <= 0 || sizes[i][1] <= 0) {
      ocl_op_fail(&op, TF_OUT_OF_RANGE, "%s is out of range.", names[i]);
      goto out;
    }
  TF_Tensor *x = ocl_op_input(&op, 0);
  if (x == NULL)
    goto out;
  int rank = tensor_dims(x, d);
  if (rank != 4) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "input must be 4-dimensional%s",
                SHAPE(d, rank));
    goto out;
  }
  struct patches_args a = {
      .batch = d[0], .in_h = d[1], .in_w = d[2], .depth = d[3],
      .k_rows = k->ksizes[0], .k_cols = k->ksizes[1],
      .stride_rows = k->strides[0], .stride_cols = k->strides[1],
      .rate_rows = k->rates[0], .rate_cols = k->rates[1]};
  int64_t pad_after;
  /* The effective window: ksize + (ksize - 1) * (rate - 1). */
  int64_t eff_rows = a.k_rows + (a.k_rows - 1) * (a.rate_rows - 1);
  int64_t eff_cols = a.k_cols + (a.k_cols - 1) * (a.rate_cols - 1);
  int64_t out_h, out_w, pad_top, pad_left;
  if (!ocl_windowed_output_size(a.in_h, eff_rows, 1, a.stride_rows,
                                k->padding, &out_h, &pad_top, &pad_after,
                                op.status) ||
      !ocl_windowed_output_size(a.in_w, eff_cols, 1, a.stride_cols,
                                k->padding, &out_w, &pad_left, &pad_after,
                                op.status))
    goto out;
  a.out_h = out_h;
  a.out_w = out_w;
  a.pad_top = pad_top;
  a.pad_left = pad_left;
  int64_t patch;
  if (!ocl_op_dim_product(&op, a.k_rows * a.k_cols, a.depth, &patch))
    goto out;
  const int64_t out_dims[4] = {a.batch, out_h, out_w, patch};
  TF_Tensor *y = ocl_op_output(&op, 0, k->dtype, out_dims, 4);
  if (y == NULL)
    goto out;
  int64_t out_elements = ocl_tf.TensorElementCount(y);
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (out_elements == 0 || info == NULL)
    goto out;
  bool wide = out_elements > INT32_MAX ||
              ocl_tf.TensorElementCount(x) > INT32_MAX;
  bool rows = info->cpu_shape;
  a.n = rows ? a.batch * out_h * out_w : out_elements;
  const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(y),
                                 OCL_BYTES(&a, sizeof(a))};
  struct ocl_kernel *kernel = &k->k[wide][rows ? ROWS : FLAT];
  if (rows)
    ocl_launch_rows(&op, kernel, (size_t)a.n, args, 3);
  else
    ocl_launch_1d(&op, kernel, (size_t)a.n, args, 3);
out:
  ocl_op_end(&op);
}

/* ---- Colour spaces and adjustments ------------------------------------------ */

static void colour_compute(struct image_kernel *k, TF_OpKernelContext *ctx)
{
  struct ocl_op op;
  int64_t d[OCL_MAX_RANK], s[OCL_MAX_RANK];
  enum image_kind kind = k->op->kind;
  bool adjust = kind == CONTRAST || kind == SATURATION || kind == HUE;

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *amount = x != NULL && adjust ? ocl_op_input(&op, 1) : NULL;
  if (x == NULL || (adjust && amount == NULL))
    goto out;
  int rank = tensor_dims(x, d);
  if (!adjust) {
    if (rank < 1) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "input must be at least 1D%s",
                  SHAPE(d, rank));
      goto out;
    }
    if (d[rank - 1] != 3) {
      ocl_op_fail(&op, TF_FAILED_PRECONDITION,
                  "input must have 3 channels but input only has %lld "
                  "channels.",
                  (long long)d[rank - 1]);
      goto out;
    }
  } else {
    int s_rank = tensor_dims(amount, s);
    if (rank < 3) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "input must be at least 3-D, got shape%s", SHAPE(d, rank));
      goto out;
    }
    if (s_rank != 0) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "%s must be scalar: %s",
                  kind == CONTRAST     ? "contrast_factor"
                  : kind == SATURATION ? "scale"
                                       : "delta",
                  SHAPE(s, s_rank));
      goto out;
    }
    if (kind != CONTRAST && d[rank - 1] != 3) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "input must have 3 channels but instead has %lld "
                  "channels.",
                  (long long)d[rank - 1]);
      goto out;
    }
  }
  if (!check_fp64(&op, k))
    goto out;
  TF_Tensor *y = ocl_op_output(&op, 0, k->dtype, d, rank);
  if (y == NULL)
    goto out;
  int64_t n = ocl_tf.TensorElementCount(x);
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (n == 0 || info == NULL)
    goto out;
  bool wide = n > INT32_MAX;
  if (kind == CONTRAST) {
    /* Means per (image, channel) over height x width, then the blend. */
    int64_t channels = d[rank - 1], pixels = d[rank - 2] * d[rank - 3];
    int64_t groups = n / pixels;
    TF_Tensor *means = ocl_op_temp(&op, TF_FLOAT, groups);
    if (means == NULL)
      goto out;
    struct ocl_kernel *mean_kernel = &k->k[wide][FLAT];
    size_t local =
        info->cpu_shape ? 1 : ocl_kernel_fit_local(&op, mean_kernel, 256);
    if (local == 0)
      goto out;
    size_t global = (size_t)groups * local;
    const struct ocl_arg mean_args[] = {
        OCL_TENSOR(x), OCL_TENSOR(means), OCL_LONG(pixels),
        OCL_LONG(channels), OCL_LOCAL(local * sizeof(float))};
    if (!ocl_launch(&op, mean_kernel, 1, &global, &local, mean_args, 5))
      goto out;
    const struct ocl_arg args[] = {OCL_TENSOR(x),     OCL_TENSOR(means),
                                   OCL_TENSOR(amount), OCL_TENSOR(y),
                                   OCL_LONG(n),       OCL_LONG(pixels),
                                   OCL_LONG(channels)};
    ocl_launch_1d(&op, &k->second[wide], (size_t)n, args, 7);
    goto out;
  }
  int64_t pixels = n / 3;
  if (adjust) {
    const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(amount),
                                   OCL_TENSOR(y), OCL_LONG(pixels),
                                   OCL_INT(kind == HUE)};
    ocl_launch_1d(&op, &k->k[wide][FLAT], (size_t)pixels, args, 5);
  } else {
    const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(y),
                                   OCL_LONG(pixels)};
    ocl_launch_1d(&op, &k->k[wide][FLAT], (size_t)pixels, args, 3);
  }
out:
  ocl_op_end(&op);
}

static void image_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct image_kernel *k = kernel;
  struct ocl_op op;
  struct resize r;

  switch (k->op->kind) {
  case CROP:
  case CROP_GRAD_IMAGE:
  case CROP_GRAD_BOXES: crop_compute(k, ctx); return;
  case PATCHES: patches_compute(k, ctx); return;
  case RGB_TO_HSV:
  case HSV_TO_RGB:
  case CONTRAST:
  case SATURATION:
  case HUE: colour_compute(k, ctx); return;
  default: break;
  }
  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *arg = x ? ocl_op_input(&op, 1) : NULL;
  if (arg == NULL)
    goto out;
  bool ok;
  switch (k->op->kind) {
  case BILINEAR:
  case BICUBIC:
  case NEAREST: ok = forward_state(&op, k, x, arg, &r); break;
  case BICUBIC_GRAD:
  case BILINEAR_GRAD: ok = bilinear_grad_state(&op, k, x, arg, &r); break;
  default: ok = nearest_grad_state(&op, x, arg, k, &r); break;
  }
  if (!ok || (k->op->kind != NEAREST && !check_fp64(&op, k)))
    goto out;
  const int64_t out_dims[4] = {r.batch, r.out_h, r.out_w, r.channels};
  bool float_out = k->op->kind == BILINEAR || k->op->kind == BICUBIC;
  TF_Tensor *y = ocl_op_output(&op, 0, float_out ? TF_FLOAT : k->dtype,
                               out_dims, 4);
  if (y != NULL)
    launch(&op, k, &r, x, y, r.batch * r.in_h * r.in_w * r.channels);
out:
  ocl_op_end(&op);
}

static void *image_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct image_op *op = &image_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct image_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  TF_Bool value = 0;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "align_corners", &value,
                                          status);
  /* Absent from older graphs: TensorFlow's defaults, false. */
  k->align_corners = ocl_tf.GetCode(status) == TF_OK && value;
  ocl_set_ok(status);
  value = 0;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "half_pixel_centers", &value,
                                          status);
  k->half_pixel_centers = ocl_tf.GetCode(status) == TF_OK && value;
  ocl_set_ok(status);

  if (!read_attrs(ctx, k, status))
    goto fail;

  int t = k->dtype == TF_HALF       ? T_HALF
          : k->dtype == TF_BFLOAT16 ? T_BF16
          : k->dtype == TF_DOUBLE   ? T_DOUBLE
                                    : T_FLOAT;
  size_t size = ocl_tf.DataTypeSize(k->dtype);
  int raw = size == 2 ? RAW_2 : size == 4 ? RAW_4 : RAW_8;
  for (int w = 0; w < NUM_WIDTHS; w++) {
    const struct ocl_program *program =
        op->kind == NEAREST || op->kind == PATCHES ? &raw_programs[raw][w]
                                                   : &typed_programs[t][w];
    bool named =
        op->single
            ? ocl_kernel_initf(&k->k[w][FLAT], program, "%s", op->kernel) &&
                  ocl_kernel_initf(&k->k[w][ROWS], program, "%s", op->kernel)
            : ocl_kernel_initf(&k->k[w][FLAT], program, "%s_flat",
                               op->kernel) &&
                  ocl_kernel_initf(&k->k[w][ROWS], program, "%s_rows",
                                   op->kernel);
    if (named && op->second != NULL)
      named = ocl_kernel_initf(&k->second[w], program, "%s", op->second);
    if (!named) {
      ocl_set_status(status, TF_INTERNAL, "%s: kernel name too long", op->op);
      goto fail;
    }
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void image_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_IMAGE_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per image op");
OCL_FAMILY_CREATES(image, image_create);

void ocl_register_image_kernels(void)
{
  for (int i = 0; i < NUM_IMAGE_OPS; i++)
    for (int t = 0; t < image_ops[i].types.count; t++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = image_ops[i].op,
          .create = image_creates[i],
          .compute = image_compute,
          .destroy = image_delete,
          .type_attrs = {"T"},
          .types = {image_ops[i].types.t[t]},
          .host_args = image_ops[i].host_args,
      });
}
