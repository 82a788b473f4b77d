/* Element-wise ops on complex64 and complex128 tensors, so that the
 * arithmetic between FFTs stays on the device: Complex (real and
 * imaginary parts to complex64 from float, complex128 from double, with
 * broadcasting, as TensorFlow's Complex op), Real, Imag, Conj, ComplexAbs
 * and Angle (Tout float or double), and complex kernels of AddV2, Sub, Mul,
 * RealDiv, Neg, Square and Exp.
 *
 * The formulas are those TensorFlow's CPU kernels run through Eigen
 * (complex.cl): the schoolbook product, Eigen's scaled division and
 * complex exp, hypot and atan2. complex128 computes in double and needs
 * cl_khr_fp64 (ocl_register_kernel leaves its kernels off devices without
 * it).
 * Broadcasts collapse through ocl_bcast_init (shape.c), as the binary
 * family's do. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_complex[];

enum precision { P_FLOAT, P_DOUBLE, NUM_PRECISIONS };
enum index_width { INDEX_32, INDEX_64, NUM_INDEX_WIDTHS };

OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_PRECISIONS][NUM_INDEX_WIDTHS] = {
    [P_FLOAT] = {{"complex_float_32", ocl_cl_source_complex, "-DINDEX=uint"},
                 {"complex_float_64", ocl_cl_source_complex, "-DINDEX=ulong"}},
    [P_DOUBLE] = {{"complex_double_32", ocl_cl_source_complex,
                   "-DINDEX=uint -DT_IS_DOUBLE"},
                  {"complex_double_64", ocl_cl_source_complex,
                   "-DINDEX=ulong -DT_IS_DOUBLE"}},
};

/* complex.cl's MAX_DIMS and struct bcast_args, per index width. */
#define BCAST_MAX_DIMS 8
_Static_assert(BCAST_MAX_DIMS == OCL_MAX_DIMS,
               "a collapsed broadcast of OCL_MAX_DIMS dims fits one launch");
struct bcast_args_32 {
  uint32_t dims[BCAST_MAX_DIMS];
  uint32_t x_strides[BCAST_MAX_DIMS];
  uint32_t y_strides[BCAST_MAX_DIMS];
  int32_t rank;
};
struct bcast_args_64 {
  uint64_t dims[BCAST_MAX_DIMS];
  uint64_t x_strides[BCAST_MAX_DIMS];
  uint64_t y_strides[BCAST_MAX_DIMS];
  int32_t rank;
};

/* What an op reads and writes. */
enum complex_shape {
  CPLX_BINARY,  /* complex, complex -> complex */
  MAKE_COMPLEX, /* real, real -> complex */
  CPLX_UNARY,   /* complex -> complex */
  CPLX_TO_REAL  /* complex -> real (Tout) */
};

struct complex_op {
  const char *op;
  const char *kernel; /* complex.cl's name; binary ops add _flat/_bcast */
  enum complex_shape shape;
};

static const struct complex_op complex_ops[] = {
    {"AddV2", "complex_add", CPLX_BINARY},
    {"Sub", "complex_sub", CPLX_BINARY},
    {"Mul", "complex_mul", CPLX_BINARY},
    {"RealDiv", "complex_div", CPLX_BINARY},
    {"Complex", "complex_make", MAKE_COMPLEX},
    {"Neg", "complex_neg", CPLX_UNARY},
    {"Conj", "complex_conj", CPLX_UNARY},
    {"Square", "complex_square", CPLX_UNARY},
    {"Exp", "complex_exp", CPLX_UNARY},
    {"Real", "complex_real", CPLX_TO_REAL},
    {"Imag", "complex_imag", CPLX_TO_REAL},
    {"ComplexAbs", "complex_abs", CPLX_TO_REAL},
    {"Angle", "complex_angle", CPLX_TO_REAL},
};
#define NUM_COMPLEX_OPS ((int)(sizeof(complex_ops) / sizeof(complex_ops[0])))
_Static_assert(sizeof(complex_ops) / sizeof(complex_ops[0]) <=
                   OCL_MAX_FAMILY_OPS,
               "one create thunk per op");

/* A unary op uses K_FLAT alone. */
enum { K_FLAT, K_BCAST, NUM_KERNELS };

struct complex_kernel {
  const struct complex_op *op;
  bool wide; /* complex128 / double: needs cl_khr_fp64 */
  TF_DataType out_type;
  struct ocl_kernel k[NUM_INDEX_WIDTHS][NUM_KERNELS];
};

static void complex_delete(void *kernel) { free(kernel); }

static void *complex_create(TF_OpKernelConstruction *ctx, int index)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct complex_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  k->op = &complex_ops[index];
  TF_DataType dtype = TF_COMPLEX64;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  bool wide = dtype == TF_DOUBLE || dtype == TF_COMPLEX128;
  k->wide = wide;
  switch (k->op->shape) {
  case MAKE_COMPLEX: k->out_type = wide ? TF_COMPLEX128 : TF_COMPLEX64; break;
  case CPLX_TO_REAL: k->out_type = wide ? TF_DOUBLE : TF_FLOAT; break;
  default: k->out_type = dtype;
  }
  enum precision precision = wide ? P_DOUBLE : P_FLOAT;
  bool binary = k->op->shape == CPLX_BINARY || k->op->shape == MAKE_COMPLEX;
  for (int w = 0; w < NUM_INDEX_WIDTHS; w++) {
    const struct ocl_program *program = &programs[precision][w];
    bool named =
        binary ? ocl_kernel_initf(&k->k[w][K_FLAT], program, "%s_flat",
                                  k->op->kernel) &&
                     ocl_kernel_initf(&k->k[w][K_BCAST], program, "%s_bcast",
                                      k->op->kernel)
               : ocl_kernel_init(&k->k[w][K_FLAT], program, k->op->kernel);
    if (!named) {
      ocl_set_status(status, TF_INTERNAL, "kernel name too long");
      return ocl_create_failed(ctx, status, k);
    }
  }
  ocl_tf.DeleteStatus(status);
  return k;
}

OCL_FAMILY_CREATES(complex, complex_create);

/* ---- Launching ----------------------------------------------------------- */

/* TFOCL_INDEX_WIDTH=64 (a test hook) takes the 64-bit kernels at any
 * size: no test holds 2^31 elements. */
static enum index_width width_for(int64_t elements)
{
  return elements <= INT32_MAX && !ocl_config()->hooks.index64 ? INDEX_32
                                                               : INDEX_64;
}

static struct ocl_arg index_arg(enum index_width w, int64_t v)
{
  return w == INDEX_32 ? OCL_INT(v) : OCL_LONG(v);
}

/* The _bcast kernel over b's collapsed dims: at most the inputs' rank,
 * which ocl_op_dims holds to OCL_MAX_DIMS. */
static bool launch_bcast(struct ocl_op *op, struct complex_kernel *k,
                         const struct ocl_bcast *b, const TF_Tensor *x,
                         const TF_Tensor *y, TF_Tensor *z)
{
  int64_t n = b->out_elements;
  enum index_width w = width_for(n);
  if (w == INDEX_32) {
    struct bcast_args_32 a = {.rank = b->rank};
    for (int d = 0; d < b->rank; d++) {
      a.dims[d] = (uint32_t)b->dims[d];
      a.x_strides[d] = (uint32_t)b->x_strides[d];
      a.y_strides[d] = (uint32_t)b->y_strides[d];
    }
    const struct ocl_arg argv[] = {OCL_TENSOR(x), OCL_TENSOR(y), OCL_TENSOR(z),
                                   OCL_INT(n), OCL_BYTES(&a, sizeof(a))};
    return ocl_launch_1d(op, &k->k[w][K_BCAST], (size_t)n, argv, 5);
  }
  struct bcast_args_64 a = {.rank = b->rank};
  for (int d = 0; d < b->rank; d++) {
    a.dims[d] = (uint64_t)b->dims[d];
    a.x_strides[d] = (uint64_t)b->x_strides[d];
    a.y_strides[d] = (uint64_t)b->y_strides[d];
  }
  const struct ocl_arg argv[] = {OCL_TENSOR(x), OCL_TENSOR(y), OCL_TENSOR(z),
                                 OCL_LONG(n), OCL_BYTES(&a, sizeof(a))};
  return ocl_launch_1d(op, &k->k[w][K_BCAST], (size_t)n, argv, 5);
}

static void binary_compute(struct complex_kernel *k, struct ocl_op *op)
{
  TF_Tensor *x = ocl_op_input(op, 0);
  TF_Tensor *y = x != NULL ? ocl_op_input(op, 1) : NULL;
  if (y == NULL)
    return;
  int64_t x_dims[OCL_MAX_RANK], y_dims[OCL_MAX_RANK];
  int x_rank = ocl_op_dims(op, x, x_dims);
  int y_rank = x_rank >= 0 ? ocl_op_dims(op, y, y_dims) : -1;
  if (y_rank < 0)
    return;
  /* On the stack, as the binary family's (about 8 KiB): no allocation per
   * launch. */
  struct ocl_bcast bcast;
  const struct ocl_bcast *b = &bcast;
  if (!ocl_bcast_init(&bcast, x_dims, x_rank, y_dims, y_rank, op->status))
    return;
  /* An input may become the output where it has the output's type and
   * shape: each work-item reads it at the index it writes. */
  static const int candidates[] = {0, 1};
  int forwarded = -1;
  TF_Tensor *z =
      k->op->shape == CPLX_BINARY
          ? ocl_op_output_forward(op, 0, candidates, 2, b->out_dims,
                                  b->out_rank, &forwarded)
          : ocl_op_output(op, 0, k->out_type, b->out_dims, b->out_rank);
  if (z == NULL || b->out_elements == 0 || ocl_op_info(op) == NULL)
    return;
  if (b->same_shape || b->x_scalar || b->y_scalar) {
    enum index_width w = width_for(b->out_elements);
    const struct ocl_arg argv[] = {
        OCL_TENSOR(x),
        OCL_TENSOR(y),
        OCL_TENSOR(z),
        index_arg(w, b->out_elements),
        index_arg(w, b->same_shape || !b->x_scalar ? 1 : 0),
        index_arg(w, b->same_shape || !b->y_scalar ? 1 : 0)};
    ocl_launch_1d(op, &k->k[w][K_FLAT], (size_t)b->out_elements, argv, 6);
  } else if (b->rank > OCL_MAX_DIMS) {
    ocl_op_fail(op, TF_INTERNAL, "%d collapsed dims from inputs of rank <= %d",
                b->rank, OCL_MAX_DIMS);
  } else {
    launch_bcast(op, k, b, x, y, z);
  }
}

static void unary_compute(struct complex_kernel *k, struct ocl_op *op)
{
  TF_Tensor *x = ocl_op_input(op, 0);
  if (x == NULL)
    return;
  int64_t dims[OCL_MAX_RANK];
  int rank = ocl_op_dims(op, x, dims);
  if (rank < 0)
    return;
  static const int candidates[] = {0};
  int forwarded = -1;
  TF_Tensor *y =
      k->op->shape == CPLX_UNARY
          ? ocl_op_output_forward(op, 0, candidates, 1, dims, rank, &forwarded)
          : ocl_op_output(op, 0, k->out_type, dims, rank);
  int64_t n = ocl_tf.TensorElementCount(x);
  if (y == NULL || n == 0 || ocl_op_info(op) == NULL)
    return;
  enum index_width w = width_for(n);
  const struct ocl_arg argv[] = {OCL_TENSOR(x), OCL_TENSOR(y), index_arg(w, n)};
  ocl_launch_1d(op, &k->k[w][K_FLAT], (size_t)n, argv, 3);
}

static void complex_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct complex_kernel *k = kernel;
  struct ocl_op op;
  ocl_op_begin(&op, ctx);
  /* Registration leaves complex128 off where no device has fp64; with
   * several devices, one of them may still lack it. */
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto out;
  if (k->wide && !info->has_fp64) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "%s of complex128 needs cl_khr_fp64, which OpenCL device %d "
                "lacks",
                k->op->op, info->ordinal);
    goto out;
  }
  if (k->op->shape == CPLX_BINARY || k->op->shape == MAKE_COMPLEX)
    binary_compute(k, &op);
  else
    unary_compute(k, &op);
out:
  ocl_op_end(&op);
}

void ocl_register_complex_kernels(void)
{
  static const TF_DataType complex_types[] = {TF_COMPLEX64, TF_COMPLEX128};
  static const TF_DataType real_types[] = {TF_FLOAT, TF_DOUBLE};
  for (int i = 0; i < NUM_COMPLEX_OPS; i++) {
    for (int t = 0; t < 2; t++) {
      struct ocl_kernel_spec spec = {
          .op = complex_ops[i].op,
          .create = complex_creates[i],
          .compute = complex_compute,
          .destroy = complex_delete,
          .type_attrs = {"T"},
          .types = {complex_types[t]},
      };
      /* Tout is constrained where the op has it, so that each kernel
       * serves the one pairing TensorFlow defines. */
      if (complex_ops[i].shape == MAKE_COMPLEX) {
        spec.type_attrs[1] = "Tout";
        spec.types[0] = real_types[t];
        spec.types[1] = complex_types[t];
      } else if (complex_ops[i].shape == CPLX_TO_REAL) {
        spec.type_attrs[1] = "Tout";
        spec.types[1] = real_types[t];
      }
      ocl_register_kernel(&spec);
    }
  }
}
