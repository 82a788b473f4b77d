/* Unary element-wise ops, their gradients (two same-shaped inputs), and
 * Cast.
 *
 * float, half, int64, bool and double run on the device (unary.cl, one
 * program per storage type, one more for Cast; double only where
 * cl_khr_fp64 is). int32 follows TensorFlow's GPU convention for
 * element-wise ops: its arguments live in host memory and the op is
 * computed on the host. Cast is the exception, as in TensorFlow: its
 * int32 tensors stay on the device, since casting is how data moves between
 * int32 and the types the device computes in. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_unary[];

/* Cast is one program for every pair of types, and one for the pairs with
 * float64 (built only where the device has cl_khr_fp64). */
OCL_PROGRAM_TABLE
static const struct ocl_program cast_program = {
    "unary_cast", ocl_cl_source_unary, "-DCAST"};
OCL_PROGRAM_TABLE
static const struct ocl_program cast_fp64_program = {
    "unary_cast_fp64", ocl_cl_source_unary, "-DCAST -DCAST_FP64"};

OCL_PROGRAM_TABLE
static const struct ocl_program programs[OCL_NUM_STORAGES] =
    OCL_TYPED_PROGRAMS("unary", ocl_cl_source_unary);

/* PopulationCount's 8- and 16-bit types (TensorFlow's kernels: these,
 * int32 and int64): no typed program stores them, so their kernels are in
 * Cast's program, population_count_<Cast's name of the type>. */
static const TF_DataType popcount_narrow_types[] = {TF_INT8, TF_UINT8,
                                                    TF_INT16, TF_UINT16};
#define NUM_POPCOUNT_NARROW_TYPES \
  (sizeof(popcount_narrow_types) / sizeof(popcount_narrow_types[0]))
static const char *cast_type_name(TF_DataType t);

/* What the host must know of an op beyond its kernel's name (unary.def's
 * KIND column). */
enum unary_kind {
  PLAIN,     /* y = f(x) */
  PREDICATE, /* y = f(x), bool */
  NEG, ABS, SIGN, SQUARE, ROUND, INVERT, /* also on int32, on the host */
  POPCOUNT,     /* integers to uint8 (int32 on the host) */
  GRAD_SHAPE,   /* two inputs of the same shape (relu family) */
  GRAD_ELEMENTS /* two inputs of the same element count (y, dy ops) */
};

/* Type sets, as bits of TF_DataType: unary.def's TYPES column. */
#define TB(t) (1u << (t))
#define TYPES_SINGLE_FLOATS (TB(TF_FLOAT) | TB(TF_HALF))
#define TYPES_FLOATS (TYPES_SINGLE_FLOATS | TB(TF_DOUBLE))
#define TYPES_FLOAT_DOUBLE (TB(TF_FLOAT) | TB(TF_DOUBLE))
#define TYPES_INTEGERS (TB(TF_INT64) | TB(TF_INT32))
#define TYPES_FLOATS_INT64 (TYPES_FLOATS | TB(TF_INT64))
#define TYPES_FLOATS_INTEGERS (TYPES_FLOATS | TYPES_INTEGERS)
#define TYPES_BOOL TB(TF_BOOL)

struct unary_op {
  const char *op;
  const char *kernel; /* name in unary.cl */
  enum unary_kind kind;
  unsigned types;
  bool has_alpha; /* LeakyRelu, LeakyReluGrad */
};

/* The kernel's name in unary.cl by the row's KIND. */
#define KERNEL_PREFIX_PLAIN "unary_"
#define KERNEL_PREFIX_PREDICATE "unary_"
#define KERNEL_PREFIX_NEG "unary_"
#define KERNEL_PREFIX_ABS "unary_"
#define KERNEL_PREFIX_SIGN "unary_"
#define KERNEL_PREFIX_SQUARE "unary_"
#define KERNEL_PREFIX_ROUND "unary_"
#define KERNEL_PREFIX_INVERT "unary_"
#define KERNEL_PREFIX_POPCOUNT "unary_"
#define KERNEL_PREFIX_GRAD_SHAPE "grad_"
#define KERNEL_PREFIX_GRAD_ELEMENTS "grad_"

/* The signatures with an alpha attribute. */
#define SIG_HAS_ALPHA_XY false
#define SIG_HAS_ALPHA_POPCOUNT false
#define SIG_HAS_ALPHA_BESSEL false
#define SIG_HAS_ALPHA_LOGICAL_NOT false
#define SIG_HAS_ALPHA_PREDICATE false
#define SIG_HAS_ALPHA_FEATURES false
#define SIG_HAS_ALPHA_FEATURES_ALPHA true
#define SIG_HAS_ALPHA_GRAD_FEATURES false
#define SIG_HAS_ALPHA_GRAD_FEATURES_ALPHA true
#define SIG_HAS_ALPHA_GRAD_OUTPUTS false
#define SIG_HAS_ALPHA_SOFTSIGN_GRAD false
#define SIG_HAS_ALPHA_Y_DY false

static const struct unary_op unary_ops[] = {
#define UNARY_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,          \
                 INT_MATH)                                                   \
  {#NAME, KERNEL_PREFIX_##KIND #KERNEL, KIND, TYPES_##TYPES,                 \
   SIG_HAS_ALPHA_##SIG},
#define UNARY_ALIAS(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, ENUM)       \
  UNARY_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, _, _)
#include "unary.def"
};

#define NUM_UNARY_OPS ((int)(sizeof(unary_ops) / sizeof(unary_ops[0])))

/* The kernel state: which op, on which storage, and its cl_kernel. */
struct unary_kernel {
  const struct unary_op *op;
  TF_DataType dtype;
  /* None for PopulationCount's 8- and 16-bit types (ocl_storage_of calls
   * them host int32): their kernel is Cast's program's. */
  enum ocl_storage storage;
  float alpha;
  struct ocl_kernel kernel; /* not for int32 (host) */
};

/* ---- int32 on the host ---------------------------------------------------- */

static void host_unary_int32(enum unary_kind kind, const int32_t *x,
                             int32_t *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++) {
    /* Wrap-around as TensorFlow's int32 kernels do (-INT32_MIN). */
    uint32_t u = (uint32_t)x[i];
    switch (kind) {
    case NEG: y[i] = (int32_t)(0u - u); break;
    case ABS: y[i] = x[i] < 0 ? (int32_t)(0u - u) : x[i]; break;
    case SIGN: y[i] = (x[i] > 0) - (x[i] < 0); break;
    case SQUARE: y[i] = (int32_t)(u * u); break;
    case INVERT: y[i] = (int32_t)~u; break;
    default: y[i] = x[i]; break; /* ROUND */
    }
  }
}

/* PopulationCount's int32: the number of set bits, as uint8. */
static void host_popcount_int32(const int32_t *x, uint8_t *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = (uint8_t)__builtin_popcount((uint32_t)x[i]);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

static void *unary_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct unary_op *op = &unary_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct unary_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  k->dtype = TF_BOOL;
  if (op->types != TYPES_BOOL) {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  k->storage = ocl_storage_of(k->dtype);
  /* Digamma(+-0): NaN up to TensorFlow 2.21, -inf from 2.22 (its Eigen);
   * the kernel takes it in alpha. */
  if (strcmp(op->op, "Digamma") == 0)
    k->alpha = ocl_tf_minor_version() >= 22 ? -INFINITY : NAN;
  if (op->has_alpha) {
    ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "alpha", &k->alpha, status);
    if (ocl_tf.GetCode(status) != TF_OK) {
      /* Absent from a hand-built node: TensorFlow's default. */
      ocl_set_ok(status);
      k->alpha = 0.2f;
    }
  }
  if (op->kind == POPCOUNT && ocl_tf.DataTypeSize(k->dtype) < 4)
    ocl_kernel_initf(&k->kernel, &cast_program, "population_count_%s",
                     cast_type_name(k->dtype));
  else if (k->dtype != TF_INT32)
    ocl_kernel_init(&k->kernel, &programs[k->storage], op->kernel);
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

/* The gradient ops' input checks, with TensorFlow's messages: the relu
 * family wants equal shapes, the (y, dy) ops only equal element counts. */
static bool check_grad_inputs(const struct unary_op *op, const int64_t *a_dims,
                              int a_rank, const int64_t *b_dims, int b_rank,
                              TF_Status *status)
{
  int64_t a_n = ocl_shape_elements(a_dims, a_rank);
  int64_t b_n = ocl_shape_elements(b_dims, b_rank);
  if (op->kind == GRAD_ELEMENTS) {
    if (a_n != b_n) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "The two arguments to a cwise op must have same number "
                     "of elements, got %lld and %lld",
                     (long long)a_n, (long long)b_n);
      return false;
    }
    return true;
  }
  if (a_rank != b_rank ||
      memcmp(a_dims, b_dims, sizeof(int64_t) * (size_t)a_rank) != 0) {
    char a[160], b[160];
    ocl_shape_format(a_dims, a_rank, a, sizeof(a));
    ocl_shape_format(b_dims, b_rank, b, sizeof(b));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Inputs to operation %s of type %s must have the same size "
                   "and shape.  Input 0: %s != input 1: %s",
                   op->op, op->op, a, b);
    return false;
  }
  return true;
}

static void unary_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct unary_kernel *k = kernel;
  const struct unary_op *op = k->op;
  struct ocl_op o;
  int64_t dims[OCL_MAX_RANK], b_dims[OCL_MAX_RANK];
  bool grad = op->kind == GRAD_SHAPE || op->kind == GRAD_ELEMENTS;

  ocl_op_begin(&o, ctx);
  TF_Tensor *x = ocl_op_input(&o, 0);
  TF_Tensor *b = grad && x ? ocl_op_input(&o, 1) : NULL;
  int rank = x && (!grad || b) ? ocl_op_dims(&o, x, dims) : -1;
  if (rank < 0)
    goto out;
  if (grad) {
    int b_rank = ocl_op_dims(&o, b, b_dims);
    if (b_rank < 0 ||
        !check_grad_inputs(op, dims, rank, b_dims, b_rank, o.status))
      goto out;
  }
  TF_DataType y_type = op->kind == PREDICATE ? TF_BOOL
                       : op->kind == POPCOUNT ? TF_UINT8
                                              : k->dtype;
  /* The output may be an input TensorFlow hands over (one of its type and
   * size that nothing else reads): each work-item reads its own index
   * before it writes it, and a chain of ops over a temp then needs one
   * buffer instead of two. */
  static const int candidates[] = {0, 1};
  int forwarded;
  TF_Tensor *held[2] = {x, b};
  TF_Tensor *y =
      y_type == k->dtype
          ? ocl_op_output_over_inputs(&o, 0, held, candidates, grad ? 2 : 1,
                                      dims, rank, &forwarded)
          : ocl_op_output(&o, 0, y_type, dims, rank);
  x = held[0];
  b = held[1];
  int64_t n = ocl_shape_elements(dims, rank);
  if (y == NULL || n == 0)
    goto out;
  if (k->dtype == TF_INT32) {
    if (op->kind == POPCOUNT)
      host_popcount_int32(ocl_host_data(x), ocl_host_data(y), n);
    else
      host_unary_int32(op->kind, ocl_host_data(x), ocl_host_data(y), n);
    goto out;
  }
  struct ocl_arg argv[5];
  int argc = 0;
  argv[argc++] = OCL_TENSOR(x);
  if (grad)
    argv[argc++] = OCL_TENSOR(b);
  argv[argc++] = OCL_TENSOR(y);
  argv[argc++] = OCL_LONG(n);
  argv[argc++] = OCL_FLOAT(k->alpha);
  ocl_launch_flat(&o, &k->kernel, (size_t)n, argv, argc);
out:
  ocl_op_end(&o);
}

static void unary_delete(void *kernel) { free(kernel); }

/* The table is longer than one family's thunks: a second set serves
 * entries OCL_MAX_FAMILY_OPS and up. */
_Static_assert(NUM_UNARY_OPS <= 2 * OCL_MAX_FAMILY_OPS,
               "one create function per unary op");
OCL_FAMILY_CREATES(unary, unary_create);
static void *unary_create_upper(TF_OpKernelConstruction *ctx, int index)
{
  return unary_create(ctx, OCL_MAX_FAMILY_OPS + index);
}
OCL_FAMILY_CREATES(unary_upper, unary_create_upper);

/* ---- Cast ------------------------------------------------------------------ */

struct cast_kernel {
  TF_DataType src, dst;
  bool truncate;
  bool fp64; /* its kernel is in cast_fp64_program */
  struct ocl_kernel kernel;
};

/* The type's name in unary.cl's cast kernels; NULL if Cast lacks it. */
static const char *cast_type_name(TF_DataType t)
{
  switch (t) {
  case TF_FLOAT: return "f32";
  case TF_HALF: return "f16";
  case TF_BFLOAT16: return "bf16";
  case TF_DOUBLE: return "f64";
  case TF_INT8: return "i8";
  case TF_UINT8: return "u8";
  case TF_INT16: return "i16";
  case TF_UINT16: return "u16";
  case TF_INT32: return "i32";
  case TF_UINT32: return "u32";
  case TF_INT64: return "i64";
  case TF_UINT64: return "u64";
  case TF_BOOL: return "b";
  default: return NULL;
  }
}

static void *cast_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct cast_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "SrcT", &k->src, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "DstT", &k->dst, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  TF_Bool truncate = 0;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "Truncate", &truncate, status);
  /* Absent from older graphs: TensorFlow's default is false. */
  ocl_set_ok(status);
  k->truncate = truncate != 0;
  const char *src = cast_type_name(k->src), *dst = cast_type_name(k->dst);
  if (src == NULL || dst == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "Cast from type %d to type %d is not supported on the "
                   "OPENCL device",
                   (int)k->src, (int)k->dst);
    goto fail;
  }
  k->fp64 = k->src == TF_DOUBLE || k->dst == TF_DOUBLE;
  ocl_kernel_initf(&k->kernel, k->fp64 ? &cast_fp64_program : &cast_program,
                   "cast_%s_%s", src, dst);
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void cast_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct cast_kernel *k = kernel;
  struct ocl_op o;
  int64_t dims[OCL_MAX_RANK];

  ocl_op_begin(&o, ctx);
  TF_Tensor *x = ocl_op_input(&o, 0);
  if (x == NULL)
    goto out;
  if (k->src == k->dst) {
    /* TensorFlow forwards the input: no copy. */
    ocl_op_forward(&o, 0, x);
    goto out;
  }
  int rank = ocl_op_dims(&o, x, dims);
  TF_Tensor *y = rank >= 0 ? ocl_op_output(&o, 0, k->dst, dims, rank) : NULL;
  int64_t n = ocl_shape_elements(dims, rank);
  if (y == NULL || n == 0)
    goto out;
  const struct ocl_device_info *info = ocl_op_info(&o);
  if (info == NULL)
    goto out;
  if (k->fp64 && !info->has_fp64) {
    ocl_op_fail(&o, TF_UNIMPLEMENTED,
                "Cast to or from float64 needs an OpenCL device with "
                "cl_khr_fp64; OpenCL device %d has none",
                info->ordinal);
    goto out;
  }
  const struct ocl_arg argv[] = {
      OCL_TENSOR(x), OCL_TENSOR(y), OCL_LONG(n), OCL_INT(k->truncate),
  };
  ocl_launch_flat(&o, &k->kernel, (size_t)n, argv, 4);
out:
  ocl_op_end(&o);
}

/* ---- Registration ------------------------------------------------------ */

static const TF_DataType register_types[] = {TF_FLOAT, TF_HALF, TF_INT64,
                                             TF_INT32, TF_BOOL, TF_DOUBLE};
#define NUM_REGISTER_TYPES \
  (sizeof(register_types) / sizeof(register_types[0]))

void ocl_register_unary_kernels(void)
{
  /* Only the element-wise ops with int32 kernels; all are x -> y. */
  static const char *const xy[] = {"x", "y", NULL};

  for (int i = 0; i < NUM_UNARY_OPS; i++) {
    const struct unary_op *op = &unary_ops[i];
    bool typed = op->types != TYPES_BOOL;
    for (size_t t = 0; t < NUM_REGISTER_TYPES; t++) {
      TF_DataType dtype = register_types[t];
      if (!(op->types & TB(dtype)))
        continue;
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = i < OCL_MAX_FAMILY_OPS
                        ? unary_creates[i]
                        : unary_upper_creates[i - OCL_MAX_FAMILY_OPS],
          .compute = unary_compute,
          .destroy = unary_delete,
          .type_attrs = {typed ? "T" : NULL},
          .types = {dtype},
          .host_args = dtype == TF_INT32 ? xy : NULL,
      });
    }
    for (size_t t = 0; op->kind == POPCOUNT && t < NUM_POPCOUNT_NARROW_TYPES;
         t++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = i < OCL_MAX_FAMILY_OPS
                        ? unary_creates[i]
                        : unary_upper_creates[i - OCL_MAX_FAMILY_OPS],
          .compute = unary_compute,
          .destroy = unary_delete,
          .type_attrs = {"T"},
          .types = {popcount_narrow_types[t]},
      });
  }

  /* Cast between every pair of these, as TensorFlow's GPU kernels (their
   * complex types aside). int32 stays on the device: casting is how data
   * moves between int32 and the types the device computes in. */
  static const TF_DataType cast_types[] = {
      TF_FLOAT, TF_HALF,  TF_BFLOAT16, TF_DOUBLE, TF_INT8,   TF_UINT8, TF_INT16,
      TF_UINT16, TF_INT32, TF_UINT32,  TF_INT64,  TF_UINT64, TF_BOOL};
  enum { NUM_CAST_TYPES = sizeof(cast_types) / sizeof(cast_types[0]) };
  for (size_t s = 0; s < NUM_CAST_TYPES; s++)
    for (size_t d = 0; d < NUM_CAST_TYPES; d++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = "Cast",
          .create = cast_create,
          .compute = cast_compute,
          .destroy = unary_delete,
          .type_attrs = {"SrcT", "DstT"},
          .types = {cast_types[s], cast_types[d]},
      });
}
