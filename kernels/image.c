/* Image resizing: ResizeBilinear, ResizeBilinearGrad, ResizeNearestNeighbor
 * and ResizeNearestNeighborGrad, NHWC, with TensorFlow's align_corners and
 * half_pixel_centers attributes and checks (image_resizer_state.h).
 *
 * float, half, bfloat16 and double, as TensorFlow's GPU kernels take them.
 * Values are interpolated in float (double only accumulates gradients, and
 * only where the device has fp64); the nearest-neighbour forward pass moves
 * elements as raw bytes, so double needs no fp64 there. The gradients
 * gather per element of the original image: deterministic, no atomics
 * (image.cl). `size` is HostMemory, as in TensorFlow's GPU registrations. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_image[];

enum { IDX32, IDX64, NUM_WIDTHS };

/* Programs per dtype and index width (typed), and per element size for the
 * nearest-neighbour forward pass (raw). */
enum { T_FLOAT, T_HALF, T_BF16, T_DOUBLE, NUM_TYPED };
#define IMAGE_PROGRAM(name, defines, index) \
  {"image_" name "_" index, ocl_cl_source_image, defines " -DI=" index}
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
static const struct ocl_program raw_programs[NUM_RAW][NUM_WIDTHS] = {
    {IMAGE_PROGRAM("raw2", "-DRAW=ushort", "int"),
     IMAGE_PROGRAM("raw2", "-DRAW=ushort", "long")},
    {IMAGE_PROGRAM("raw4", "-DRAW=uint", "int"),
     IMAGE_PROGRAM("raw4", "-DRAW=uint", "long")},
    {IMAGE_PROGRAM("raw8", "-DRAW=ulong", "int"),
     IMAGE_PROGRAM("raw8", "-DRAW=ulong", "long")},
};

enum image_kind { BILINEAR, BILINEAR_GRAD, NEAREST, NEAREST_GRAD };

struct image_op {
  const char *op;
  enum image_kind kind;
  const char *kernel; /* prefix in image.cl: <kernel>_flat, <kernel>_rows */
  const char *const *host_args;
};

static const char *const size_arg[] = {"size", NULL};

static const struct image_op image_ops[] = {
    {"ResizeBilinear", BILINEAR, "bilinear", size_arg},
    {"ResizeBilinearGrad", BILINEAR_GRAD, "bilinear_grad", NULL},
    {"ResizeNearestNeighbor", NEAREST, "nn", size_arg},
    {"ResizeNearestNeighborGrad", NEAREST_GRAD, "nn_grad", size_arg},
};
#define NUM_IMAGE_OPS ((int)(sizeof(image_ops) / sizeof(image_ops[0])))

/* The kernel shapes: a work-item per element (GPU) or per row (CPU). */
enum { FLAT, ROWS, NUM_SHAPES };

struct image_kernel {
  const struct image_op *op;
  TF_DataType dtype;
  bool align_corners, half_pixel_centers;
  struct ocl_kernel k[NUM_WIDTHS][NUM_SHAPES];
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

/* Enqueues the op's kernel over r: a work-item per output element (GPU
 * shape) or per output row (CPU shape). */
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
  int64_t n = rows ? r->batch * r->out_h : out_elements;
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

static void image_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct image_kernel *k = kernel;
  struct ocl_op op;
  struct resize r;

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *arg = x ? ocl_op_input(&op, 1) : NULL;
  if (arg == NULL)
    goto out;
  bool ok;
  switch (k->op->kind) {
  case BILINEAR:
  case NEAREST: ok = forward_state(&op, k, x, arg, &r); break;
  case BILINEAR_GRAD: ok = bilinear_grad_state(&op, k, x, arg, &r); break;
  default: ok = nearest_grad_state(&op, x, arg, k, &r); break;
  }
  if (!ok || (k->op->kind != NEAREST && !check_fp64(&op, k)))
    goto out;
  const int64_t out_dims[4] = {r.batch, r.out_h, r.out_w, r.channels};
  TF_Tensor *y = ocl_op_output(&op, 0,
                               k->op->kind == BILINEAR ? TF_FLOAT : k->dtype,
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

  int t = k->dtype == TF_HALF       ? T_HALF
          : k->dtype == TF_BFLOAT16 ? T_BF16
          : k->dtype == TF_DOUBLE   ? T_DOUBLE
                                    : T_FLOAT;
  size_t size = ocl_tf.DataTypeSize(k->dtype);
  int raw = size == 2 ? RAW_2 : size == 4 ? RAW_4 : RAW_8;
  for (int w = 0; w < NUM_WIDTHS; w++) {
    const struct ocl_program *program =
        op->kind == NEAREST ? &raw_programs[raw][w] : &typed_programs[t][w];
    if (!ocl_kernel_initf(&k->k[w][FLAT], program, "%s_flat", op->kernel) ||
        !ocl_kernel_initf(&k->k[w][ROWS], program, "%s_rows", op->kernel)) {
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
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_BFLOAT16,
                                      TF_DOUBLE};
  for (int i = 0; i < NUM_IMAGE_OPS; i++)
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = image_ops[i].op,
          .create = image_creates[i],
          .compute = image_compute,
          .destroy = image_delete,
          .type_attrs = {"T"},
          .types = {types[t]},
          .host_args = image_ops[i].host_args,
      });
}
