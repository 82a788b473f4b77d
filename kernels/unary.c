/* Unary element-wise ops, their gradients (two same-shaped inputs), and
 * Cast.
 *
 * float, half, int64 and bool run on the device (unary.cl, one program per
 * storage type, one more for Cast). int32 follows TensorFlow's GPU
 * convention for element-wise ops: its arguments live in host memory and the
 * op is computed on the host. Cast is the exception, as in TensorFlow: its
 * int32 tensors stay on the device, since casting is how data moves between
 * int32 and the types the device computes in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "launch.h"

extern const char ocl_cl_source_unary[];

/* Cast is one program for every pair of types. */
static const struct ocl_family cast_family = {"unary_cast", ocl_cl_source_unary,
                                              "-DCAST"};

static const struct ocl_family families[OCL_NUM_STORAGES] =
    OCL_TYPED_FAMILIES("unary", ocl_cl_source_unary);

/* What the host must know of an op beyond its kernel's name. */
enum unary_kind {
  PLAIN,     /* y = f(x) */
  NEG, ABS, SIGN, SQUARE, ROUND, /* also on int32, computed on the host */
  GRAD_SHAPE,   /* two inputs of the same shape (relu family) */
  GRAD_ELEMENTS /* two inputs of the same element count (y, dy ops) */
};

/* Type sets, as bits of TF_DataType. */
#define TB(t) (1u << (t))
#define FLOATS (TB(TF_FLOAT) | TB(TF_HALF))
#define INTEGERS (TB(TF_INT64) | TB(TF_INT32))

struct unary_op {
  const char *op;
  const char *kernel; /* name in unary.cl */
  enum unary_kind kind;
  unsigned types;
  bool bool_out;
  bool has_alpha; /* LeakyRelu, LeakyReluGrad */
};

static const struct unary_op unary_ops[] = {
    {"Neg", "unary_neg", NEG, FLOATS | INTEGERS, false, false},
    {"Abs", "unary_abs", ABS, FLOATS | INTEGERS, false, false},
    {"Sign", "unary_sign", SIGN, FLOATS | INTEGERS, false, false},
    {"Exp", "unary_exp", PLAIN, FLOATS, false, false},
    {"Expm1", "unary_expm1", PLAIN, FLOATS, false, false},
    {"Log", "unary_log", PLAIN, FLOATS, false, false},
    {"Log1p", "unary_log1p", PLAIN, FLOATS, false, false},
    {"Sqrt", "unary_sqrt", PLAIN, FLOATS, false, false},
    {"Rsqrt", "unary_rsqrt", PLAIN, FLOATS, false, false},
    {"Square", "unary_square", SQUARE, FLOATS | INTEGERS, false, false},
    /* TensorFlow's GPU kernels have int64 Reciprocal but no int32. */
    {"Reciprocal", "unary_reciprocal", PLAIN, FLOATS | TB(TF_INT64), false,
     false},
    {"Tanh", "unary_tanh", PLAIN, FLOATS, false, false},
    {"Sigmoid", "unary_sigmoid", PLAIN, FLOATS, false, false},
    {"Relu", "unary_relu", PLAIN, FLOATS, false, false},
    {"Relu6", "unary_relu6", PLAIN, FLOATS, false, false},
    {"Elu", "unary_elu", PLAIN, FLOATS, false, false},
    {"Selu", "unary_selu", PLAIN, FLOATS, false, false},
    {"LeakyRelu", "unary_leaky_relu", PLAIN, FLOATS, false, true},
    {"Softplus", "unary_softplus", PLAIN, FLOATS, false, false},
    {"Softsign", "unary_softsign", PLAIN, FLOATS, false, false},
    {"Erf", "unary_erf", PLAIN, FLOATS, false, false},
    {"Sin", "unary_sin", PLAIN, FLOATS, false, false},
    {"Cos", "unary_cos", PLAIN, FLOATS, false, false},
    {"Floor", "unary_floor", PLAIN, FLOATS, false, false},
    {"Ceil", "unary_ceil", PLAIN, FLOATS, false, false},
    {"Round", "unary_round", ROUND, FLOATS | INTEGERS, false, false},
    {"LogicalNot", "unary_logical_not", PLAIN, TB(TF_BOOL), true, false},
    {"IsNan", "unary_is_nan", PLAIN, FLOATS, true, false},
    {"IsFinite", "unary_is_finite", PLAIN, FLOATS, true, false},
    {"IsInf", "unary_is_inf", PLAIN, FLOATS, true, false},
    {"ReluGrad", "grad_relu", GRAD_SHAPE, FLOATS, false, false},
    {"Relu6Grad", "grad_relu6", GRAD_SHAPE, FLOATS, false, false},
    {"EluGrad", "grad_elu", GRAD_SHAPE, FLOATS, false, false},
    {"SeluGrad", "grad_selu", GRAD_SHAPE, FLOATS, false, false},
    {"LeakyReluGrad", "grad_leaky_relu", GRAD_SHAPE, FLOATS, false, true},
    {"SoftplusGrad", "grad_softplus", GRAD_SHAPE, FLOATS, false, false},
    {"SigmoidGrad", "grad_sigmoid", GRAD_ELEMENTS, FLOATS, false, false},
    {"TanhGrad", "grad_tanh", GRAD_ELEMENTS, FLOATS, false, false},
    {"SqrtGrad", "grad_sqrt", GRAD_ELEMENTS, FLOATS, false, false},
    {"RsqrtGrad", "grad_rsqrt", GRAD_ELEMENTS, FLOATS, false, false},
    {"ReciprocalGrad", "grad_reciprocal", GRAD_ELEMENTS, FLOATS, false, false},
};

#define NUM_UNARY_OPS ((int)(sizeof(unary_ops) / sizeof(unary_ops[0])))

/* The kernel state: which op, on which storage. */
struct unary_kernel {
  const struct unary_op *op;
  TF_DataType dtype;
  enum ocl_storage storage;
  float alpha;
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
    default: y[i] = x[i]; break; /* ROUND */
    }
  }
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
  if (op->types != TB(TF_BOOL)) {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  k->storage = ocl_storage_of(k->dtype);
  if (op->has_alpha) {
    ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "alpha", &k->alpha, status);
    if (ocl_tf.GetCode(status) != TF_OK) {
      /* Absent from a hand-built node: TensorFlow's default. */
      ocl_set_ok(status);
      k->alpha = 0.2f;
    }
  }
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
  const struct unary_kernel *k = kernel;
  const struct unary_op *op = k->op;
  TF_Status *status = ocl_tf.NewStatus();
  TF_Tensor *in[2] = {NULL, NULL};
  TF_Tensor *out = NULL;
  int64_t dims[OCL_MAX_DIMS], b_dims[OCL_MAX_DIMS];
  bool grad = op->kind == GRAD_SHAPE || op->kind == GRAD_ELEMENTS;
  int num_inputs = grad ? 2 : 1;

  if (!ocl_get_inputs(ctx, in, num_inputs, status))
    goto out;
  int rank = ocl_tensor_dims(in[0], dims, status);
  if (rank < 0)
    goto out;
  if (grad) {
    int b_rank = ocl_tensor_dims(in[1], b_dims, status);
    if (b_rank < 0 ||
        !check_grad_inputs(op, dims, rank, b_dims, b_rank, status))
      goto out;
  }
  out = ocl_tf.AllocateOutput(ctx, 0, op->bool_out ? TF_BOOL : k->dtype, dims,
                              rank, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  int64_t n = ocl_shape_elements(dims, rank);
  if (n == 0)
    goto out;
  if (k->storage == OCL_STORAGE_HOST_INT32) {
    host_unary_int32(op->kind, ocl_host_data(in[0]), ocl_host_data(out), n);
    goto out;
  }

  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    goto out;
  struct ocl_arg argv[5];
  int argc = 0;
  argv[argc++] = OCL_TENSOR(in[0]);
  if (grad)
    argv[argc++] = OCL_TENSOR(in[1]);
  argv[argc++] = OCL_TENSOR(out);
  argv[argc++] = OCL_LONG(n);
  argv[argc++] = OCL_FLOAT(k->alpha);
  ocl_enqueue_1d(&launch, &families[k->storage], op->kernel, (size_t)n, argv,
                 argc, status);
out:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(in, 2);
  ocl_compute_done(ctx, status);
}

static void unary_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_UNARY_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per unary op");
OCL_FAMILY_CREATES(unary, unary_create);

/* ---- Cast ------------------------------------------------------------------ */

struct cast_kernel {
  TF_DataType src, dst;
  bool truncate;
};

/* The type's name in unary.cl's cast kernels. */
static const char *cast_type_name(TF_DataType t)
{
  switch (t) {
  case TF_FLOAT: return "float";
  case TF_HALF: return "half";
  case TF_INT32: return "int";
  case TF_INT64: return "long";
  default: return "bool";
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
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void cast_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct cast_kernel *k = kernel;
  TF_Status *status = ocl_tf.NewStatus();
  TF_Tensor *x = NULL, *y = NULL;
  int64_t dims[OCL_MAX_DIMS];

  ocl_tf.GetInput(ctx, 0, &x, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  if (k->src == k->dst) {
    /* TensorFlow forwards the input: no copy. */
    ocl_tf.SetOutput(ctx, 0, x, status);
    goto out;
  }
  int rank = ocl_tensor_dims(x, dims, status);
  if (rank < 0)
    goto out;
  y = ocl_tf.AllocateOutput(ctx, 0, k->dst, dims, rank, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  int64_t n = ocl_shape_elements(dims, rank);
  if (n == 0)
    goto out;
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    goto out;
  char name[32];
  snprintf(name, sizeof(name), "cast_%s_%s", cast_type_name(k->src),
           cast_type_name(k->dst));
  const struct ocl_arg argv[] = {
      OCL_TENSOR(x), OCL_TENSOR(y), OCL_LONG(n), OCL_INT(k->truncate),
  };
  ocl_enqueue_1d(&launch, &cast_family, name, (size_t)n, argv, 4,
                 status);
out:
  if (y != NULL)
    ocl_tf.DeleteTensor(y);
  if (x != NULL)
    ocl_tf.DeleteTensor(x);
  ocl_compute_done(ctx, status);
}

/* ---- Registration ------------------------------------------------------ */

static const TF_DataType register_types[] = {TF_FLOAT, TF_HALF, TF_INT64,
                                             TF_INT32, TF_BOOL};
#define NUM_REGISTER_TYPES \
  (sizeof(register_types) / sizeof(register_types[0]))

void ocl_register_unary_kernels(void)
{
  /* Only the element-wise ops with int32 kernels; all are x -> y. */
  static const char *const xy[] = {"x", "y", NULL};

  for (int i = 0; i < NUM_UNARY_OPS; i++) {
    const struct unary_op *op = &unary_ops[i];
    bool typed = op->types != TB(TF_BOOL);
    for (size_t t = 0; t < NUM_REGISTER_TYPES; t++) {
      TF_DataType dtype = register_types[t];
      if (!(op->types & TB(dtype)))
        continue;
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = unary_creates[i],
          .compute = unary_compute,
          .destroy = unary_delete,
          .type_attrs = {typed ? "T" : NULL},
          .types = {dtype},
          .host_args = dtype == TF_INT32 ? xy : NULL,
      });
    }
  }

  for (size_t s = 0; s < NUM_REGISTER_TYPES; s++)
    for (size_t d = 0; d < NUM_REGISTER_TYPES; d++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = "Cast",
          .create = cast_create,
          .compute = cast_compute,
          .destroy = unary_delete,
          .type_attrs = {"SrcT", "DstT"},
          .types = {register_types[s], register_types[d]},
      });
}
