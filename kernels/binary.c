/* Binary element-wise ops with NumPy broadcasting, BiasAdd and AddN.
 *
 * float, half, int64 and bool run on the device (binary.cl, one program per
 * storage type). int32 follows TensorFlow's GPU convention: its arguments
 * live in host memory and the op is computed on the host, since int32
 * tensors in a graph are nearly always shapes and indices that the host
 * needs next anyway. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "launch.h"

extern const char ocl_cl_source_binary[];

static const struct ocl_family families[OCL_NUM_STORAGES] =
    OCL_TYPED_FAMILIES("binary", ocl_cl_source_binary);

enum binary_kind {
  ADD, SUB, MUL, REAL_DIV, DIV_NO_NAN, MAXIMUM, MINIMUM, POW,
  SQUARED_DIFFERENCE, FLOOR_DIV, FLOOR_MOD, EQUAL, NOT_EQUAL, LESS,
  LESS_EQUAL, GREATER, GREATER_EQUAL, LOGICAL_AND, LOGICAL_OR, BITWISE_AND,
  BITWISE_OR, BITWISE_XOR
};

/* Type sets, as bits of TF_DataType. */
#define TB(t) (1u << (t))
#define FLOATS (TB(TF_FLOAT) | TB(TF_HALF))
#define INTEGERS (TB(TF_INT64) | TB(TF_INT32))
#define NUMBERS (FLOATS | INTEGERS)

struct binary_op {
  const char *op;
  const char *kernel; /* prefix in binary.cl */
  enum binary_kind kind;
  unsigned types;
  bool bool_out;
  bool typed; /* has a "T" attribute */
};

static const struct binary_op binary_ops[] = {
    {"AddV2", "add", ADD, NUMBERS, false, true},
    {"Add", "add", ADD, NUMBERS, false, true},
    {"Sub", "sub", SUB, NUMBERS, false, true},
    {"Mul", "mul", MUL, NUMBERS, false, true},
    {"RealDiv", "real_div", REAL_DIV, FLOATS, false, true},
    {"DivNoNan", "div_no_nan", DIV_NO_NAN, FLOATS, false, true},
    {"Maximum", "maximum", MAXIMUM, NUMBERS, false, true},
    {"Minimum", "minimum", MINIMUM, NUMBERS, false, true},
    {"Pow", "power", POW, FLOATS, false, true},
    {"SquaredDifference", "squared_difference", SQUARED_DIFFERENCE, NUMBERS,
     false, true},
    {"FloorDiv", "floor_div", FLOOR_DIV, NUMBERS, false, true},
    {"FloorMod", "floor_mod", FLOOR_MOD, NUMBERS, false, true},
    {"Equal", "equal", EQUAL, NUMBERS | TB(TF_BOOL), true, true},
    {"NotEqual", "not_equal", NOT_EQUAL, NUMBERS | TB(TF_BOOL), true, true},
    {"Less", "less", LESS, NUMBERS, true, true},
    {"LessEqual", "less_equal", LESS_EQUAL, NUMBERS, true, true},
    {"Greater", "greater", GREATER, NUMBERS, true, true},
    {"GreaterEqual", "greater_equal", GREATER_EQUAL, NUMBERS, true, true},
    {"LogicalAnd", "logical_and", LOGICAL_AND, TB(TF_BOOL), true, false},
    {"LogicalOr", "logical_or", LOGICAL_OR, TB(TF_BOOL), true, false},
    {"BitwiseAnd", "bitwise_and", BITWISE_AND, INTEGERS, false, true},
    {"BitwiseOr", "bitwise_or", BITWISE_OR, INTEGERS, false, true},
    {"BitwiseXor", "bitwise_xor", BITWISE_XOR, INTEGERS, false, true},
};

/* The kernel state: which op, on which storage. */
struct binary_kernel {
  const struct binary_op *op;
  TF_DataType dtype;
  enum ocl_storage storage;
  /* Equal/NotEqual: false turns incompatible shapes into a scalar answer
   * instead of an error, as TensorFlow does. */
  bool incompatible_shape_error;
};

/* The collapsed broadcast as binary.cl's bcast_t reads it. */
struct bcast_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long x_strides[OCL_MAX_DIMS];
  cl_long y_strides[OCL_MAX_DIMS];
  cl_long rank;
};

/* ---- int32 on the host ---------------------------------------------------- */

static int32_t floor_div_i32(int32_t a, int32_t b)
{
  /* INT32_MIN / -1 traps (SIGFPE): negate with wrap-around instead. */
  if (b == -1)
    return (int32_t)(0u - (uint32_t)a);
  if ((a < 0) != (b < 0)) {
    int64_t abs_a = a < 0 ? -(int64_t)a : a, abs_b = b < 0 ? -(int64_t)b : b;
    return (int32_t)(-((abs_a + abs_b - 1) / abs_b));
  }
  return a / b;
}

static int32_t floor_mod_i32(int32_t a, int32_t b)
{
  if (b == -1)
    return 0; /* INT32_MIN % -1 traps too */
  int32_t r = a % b;
  return ((a < 0) != (b < 0) && r != 0) ? r + b : r;
}

static bool host_binary_int32(enum binary_kind kind, const struct ocl_bcast *b,
                              const int32_t *x, const int32_t *y, void *z,
                              TF_Status *status)
{
  for (int64_t i = 0; i < b->out_elements; i++) {
    int64_t rem = i, xi = 0, yi = 0;
    for (int d = b->rank - 1; d >= 0; d--) {
      int64_t c = rem % b->dims[d];
      rem /= b->dims[d];
      xi += c * b->x_strides[d];
      yi += c * b->y_strides[d];
    }
    int32_t a = x[xi], v = y[yi];
    int32_t *zi = (int32_t *)z + i;
    uint8_t *zb = (uint8_t *)z + i;
    switch (kind) {
    /* Wrap-around as TensorFlow's int32 kernels do. */
    case ADD: *zi = (int32_t)((uint32_t)a + (uint32_t)v); break;
    case SUB: *zi = (int32_t)((uint32_t)a - (uint32_t)v); break;
    case MUL: *zi = (int32_t)((uint32_t)a * (uint32_t)v); break;
    case MAXIMUM: *zi = a > v ? a : v; break;
    case MINIMUM: *zi = a < v ? a : v; break;
    case BITWISE_AND: *zi = a & v; break;
    case BITWISE_OR: *zi = a | v; break;
    case BITWISE_XOR: *zi = a ^ v; break;
    case SQUARED_DIFFERENCE: {
      uint32_t d = (uint32_t)a - (uint32_t)v;
      *zi = (int32_t)(d * d);
      break;
    }
    case FLOOR_DIV:
    case FLOOR_MOD:
      if (v == 0) {
        ocl_set_status(status, TF_INVALID_ARGUMENT, "Integer division by zero");
        return false;
      }
      *zi = kind == FLOOR_DIV ? floor_div_i32(a, v) : floor_mod_i32(a, v);
      break;
    case EQUAL: *zb = a == v; break;
    case NOT_EQUAL: *zb = a != v; break;
    case LESS: *zb = a < v; break;
    case LESS_EQUAL: *zb = a <= v; break;
    case GREATER: *zb = a > v; break;
    case GREATER_EQUAL: *zb = a >= v; break;
    default:
      ocl_set_status(status, TF_INTERNAL, "no int32 host path for this op");
      return false;
    }
  }
  return true;
}

/* ---- Launching ------------------------------------------------------------ */

/* z = x (op) y over the broadcast `b`, on the device or (int32) host. */
static bool run_binary(TF_OpKernelContext *ctx, const struct binary_op *op,
                       enum ocl_storage storage, const struct ocl_bcast *b,
                       const TF_Tensor *x, const TF_Tensor *y, TF_Tensor *z,
                       TF_Status *status)
{
  if (b->out_elements == 0)
    return true;
  if (storage == OCL_STORAGE_HOST_INT32)
    return host_binary_int32(op->kind, b, ocl_host_data(x), ocl_host_data(y),
                             ocl_host_data(z), status);

  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    return false;
  const char *variant = b->same_shape ? "flat"
                        : b->x_scalar ? "xscalar"
                        : b->y_scalar ? "yscalar"
                                      : "bcast";
  char name[64];
  snprintf(name, sizeof(name), "%s_%s", op->kernel, variant);
  struct bcast_args args = {.rank = b->rank};
  for (int d = 0; d < b->rank; d++) {
    args.dims[d] = b->dims[d];
    args.x_strides[d] = b->x_strides[d];
    args.y_strides[d] = b->y_strides[d];
  }
  const struct ocl_arg argv[] = {
      OCL_TENSOR(x), OCL_TENSOR(y), OCL_TENSOR(z), OCL_LONG(b->out_elements),
      OCL_BYTES(&args, sizeof(args)),
  };
  bool general = variant[0] == 'b';
  return ocl_enqueue_1d(&launch, &families[storage], name,
                        (size_t)b->out_elements, argv, general ? 5 : 4,
                        status);
}

/* Equal/NotEqual with incompatible_shape_error=false: a scalar answer. */
static void incompatible_scalar(TF_OpKernelContext *ctx,
                                const struct binary_kernel *k,
                                TF_Status *status)
{
  TF_Tensor *z = ocl_tf.AllocateOutput(ctx, 0, TF_BOOL, NULL, 0, 1, status);
  if (z == NULL || ocl_tf.GetCode(status) != TF_OK)
    return;
  cl_uchar value = k->op->kind == NOT_EQUAL;
  if (k->storage == OCL_STORAGE_HOST_INT32) {
    *(cl_uchar *)ocl_host_data(z) = value;
  } else {
    struct ocl_launch launch;
    cl_mem buffer;
    size_t offset;
    if (ocl_launch_init(&launch, ctx, status) &&
        ocl_resolve(launch.device, ocl_tf.TensorData(z), 1, &buffer, &offset,
                    status)) {
      cl_int err = clEnqueueFillBuffer(launch.queue, buffer, &value, 1, offset,
                                       1, 0, NULL, NULL);
      if (err != CL_SUCCESS)
        ocl_set_cl_error(status, err, "clEnqueueFillBuffer");
    }
  }
  ocl_tf.DeleteTensor(z);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

static void *binary_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct binary_op *op = &binary_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct binary_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  k->dtype = TF_BOOL;
  if (op->typed) {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  k->storage = ocl_storage_of(k->dtype);
  k->incompatible_shape_error = true;
  if (op->kind == EQUAL || op->kind == NOT_EQUAL) {
    TF_Bool value = 1;
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "incompatible_shape_error",
                                            &value, status);
    /* Absent from older graphs: TensorFlow's default is true. */
    ocl_set_ok(status);
    k->incompatible_shape_error = value != 0;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void binary_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct binary_kernel *k = kernel;
  TF_Status *status = ocl_tf.NewStatus();
  TF_Tensor *in[2] = {NULL, NULL};
  TF_Tensor *z = NULL;
  int64_t x_dims[OCL_MAX_DIMS], y_dims[OCL_MAX_DIMS];
  struct ocl_bcast b;

  if (!ocl_get_inputs(ctx, in, 2, status))
    goto out;
  int x_rank = ocl_tensor_dims(in[0], x_dims, status);
  int y_rank = x_rank < 0 ? -1 : ocl_tensor_dims(in[1], y_dims, status);
  if (y_rank < 0)
    goto out;
  if (!ocl_bcast_init(&b, x_dims, x_rank, y_dims, y_rank, status)) {
    if (!k->incompatible_shape_error && ocl_tf.GetCode(status) ==
                                            TF_INVALID_ARGUMENT) {
      ocl_set_ok(status);
      incompatible_scalar(ctx, k, status);
    }
    goto out;
  }
  z = ocl_tf.AllocateOutput(ctx, 0, k->op->bool_out ? TF_BOOL : k->dtype,
                            b.out_dims, b.out_rank, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  run_binary(ctx, k->op, k->storage, &b, in[0], in[1], z, status);
out:
  if (z != NULL)
    ocl_tf.DeleteTensor(z);
  ocl_delete_tensors(in, 2);
  ocl_compute_done(ctx, status);
}

static void binary_delete(void *kernel) { free(kernel); }

#define NUM_BINARY_OPS ((int)(sizeof(binary_ops) / sizeof(binary_ops[0])))
_Static_assert(NUM_BINARY_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per binary op");
OCL_FAMILY_CREATES(binary, binary_create);

/* ---- BiasAdd ---------------------------------------------------------------- */

struct bias_kernel {
  TF_DataType dtype;
  bool channels_first; /* data_format NCHW */
};

static void *bias_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct bias_kernel *k = calloc(1, sizeof(*k));
  char format[8] = "NHWC";
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  ocl_tf.OpKernelConstruction_GetAttrString(ctx, "data_format", format,
                                            sizeof(format) - 1, status);
  /* An absent attribute means the default, NHWC. */
  ocl_set_ok(status);
  k->channels_first = strncmp(format, "NCHW", 4) == 0 ||
                      strncmp(format, "NCDHW", 5) == 0;
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void bias_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct bias_kernel *k = kernel;
  TF_Status *status = ocl_tf.NewStatus();
  TF_Tensor *in[2] = {NULL, NULL};
  TF_Tensor *z = NULL;
  int64_t dims[OCL_MAX_DIMS], bias_dims[OCL_MAX_DIMS];
  struct ocl_bcast b;

  if (!ocl_get_inputs(ctx, in, 2, status))
    goto out;
  int rank = ocl_tensor_dims(in[0], dims, status);
  int bias_rank = rank < 0 ? -1 : ocl_tensor_dims(in[1], bias_dims, status);
  if (bias_rank < 0)
    goto out;
  char shape[160], bias_shape[160];
  ocl_shape_format(dims, rank, shape, sizeof(shape));
  ocl_shape_format(bias_dims, bias_rank, bias_shape, sizeof(bias_shape));
  if (rank < 2) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Input tensor must be at least 2D: %s", shape);
    goto out;
  }
  if (bias_rank != 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Biases must be 1D: %s", bias_shape);
    goto out;
  }
  int channel_dim = k->channels_first ? 1 : rank - 1;
  if (bias_dims[0] != dims[channel_dim]) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Must provide as many biases as the last dimension of the "
                   "input tensor: %s vs. %s",
                   bias_shape, shape);
    goto out;
  }
  /* The bias as [C, 1, ..., 1] aligned with the channel dim. */
  int64_t aligned[OCL_MAX_DIMS];
  int aligned_rank = rank - channel_dim;
  aligned[0] = bias_dims[0];
  for (int i = 1; i < aligned_rank; i++)
    aligned[i] = 1;
  if (!ocl_bcast_init(&b, dims, rank, aligned, aligned_rank, status))
    goto out;
  z = ocl_tf.AllocateOutput(ctx, 0, k->dtype, dims, rank, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  run_binary(ctx, &binary_ops[0], ocl_storage_of(k->dtype), &b, in[0], in[1], z,
             status);
out:
  if (z != NULL)
    ocl_tf.DeleteTensor(z);
  ocl_delete_tensors(in, 2);
  ocl_compute_done(ctx, status);
}

/* ---- AddN ------------------------------------------------------------------- */

static void *addn_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  TF_DataType *dtype = malloc(sizeof(*dtype));
  if (dtype == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
  } else {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", dtype, status);
  }
  if (ocl_tf.GetCode(status) != TF_OK) {
    ocl_tf.OpKernelConstruction_Failure(ctx, status);
    free(dtype);
    dtype = NULL;
  }
  ocl_tf.DeleteStatus(status);
  return dtype;
}

/* sum = inputs[0] + inputs[1] + ...: the first add writes the output, each
 * later one accumulates into it in place (element-wise, so aliasing x and z
 * is safe). */
static void addn_compute(void *kernel, TF_OpKernelContext *ctx)
{
  TF_DataType dtype = *(const TF_DataType *)kernel;
  TF_Status *status = ocl_tf.NewStatus();
  int n = ocl_tf.NumInputs(ctx);
  TF_Tensor *first = NULL, *other = NULL, *sum = NULL;
  int64_t dims[OCL_MAX_DIMS], other_dims[OCL_MAX_DIMS];

  ocl_tf.GetInput(ctx, 0, &first, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  int rank = ocl_tensor_dims(first, dims, status);
  if (rank < 0)
    goto out;
  sum = ocl_tf.AllocateOutput(ctx, 0, dtype, dims, rank, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto out;
  int64_t elements = ocl_shape_elements(dims, rank);
  struct ocl_bcast flat = {.rank = 1, .dims = {elements}, .x_strides = {1},
                           .y_strides = {1}, .same_shape = true,
                           .out_elements = elements};
  if (n == 1) {
    /* A copy: x + 0 would turn -0 into +0, so use Maximum(x, x). */
    run_binary(ctx, &binary_ops[6], ocl_storage_of(dtype), &flat, first, first,
               sum, status);
    goto out;
  }
  for (int i = 1; i < n && ocl_tf.GetCode(status) == TF_OK; i++) {
    ocl_tf.GetInput(ctx, i, &other, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto out;
    int other_rank = ocl_tensor_dims(other, other_dims, status);
    if (other_rank < 0)
      goto out;
    if (other_rank != rank ||
        memcmp(other_dims, dims, sizeof(int64_t) * (size_t)rank) != 0) {
      char a[160], c[160];
      ocl_shape_format(dims, rank, a, sizeof(a));
      ocl_shape_format(other_dims, other_rank, c, sizeof(c));
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Inputs to operation AddN must have the same size and "
                     "shape.  Input 0: %s != input %d: %s",
                     a, i, c);
      goto out;
    }
    run_binary(ctx, &binary_ops[0], ocl_storage_of(dtype), &flat,
               i == 1 ? first : sum, other, sum, status);
    ocl_tf.DeleteTensor(other);
    other = NULL;
  }
out:
  if (other != NULL)
    ocl_tf.DeleteTensor(other);
  if (sum != NULL)
    ocl_tf.DeleteTensor(sum);
  if (first != NULL)
    ocl_tf.DeleteTensor(first);
  ocl_compute_done(ctx, status);
}

/* ---- Registration ------------------------------------------------------ */

static const TF_DataType register_types[] = {TF_FLOAT, TF_HALF, TF_INT64,
                                             TF_INT32, TF_BOOL};

void ocl_register_binary_kernels(void)
{
  static const char *const xyz[] = {"x", "y", "z", NULL};

  for (int i = 0; i < NUM_BINARY_OPS; i++) {
    const struct binary_op *op = &binary_ops[i];
    for (size_t t = 0; t < sizeof(register_types) / sizeof(register_types[0]);
         t++) {
      TF_DataType dtype = register_types[t];
      if (!(op->types & TB(dtype)))
        continue;
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = binary_creates[i],
          .compute = binary_compute,
          .destroy = binary_delete,
          .type_attrs = {op->typed ? "T" : NULL},
          .types = {dtype},
          .host_args = dtype == TF_INT32 ? xyz : NULL,
      });
    }
  }

  static const char *const bias_args[] = {"value", "bias", "output", NULL};
  static const char *const addn_args[] = {"inputs", "sum", NULL};
  static const TF_DataType bias_types[] = {TF_FLOAT, TF_HALF, TF_INT64};
  for (size_t t = 0; t < sizeof(bias_types) / sizeof(bias_types[0]); t++) {
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "BiasAdd",
        .create = bias_create,
        .compute = bias_compute,
        .destroy = binary_delete,
        .type_attrs = {"T"},
        .types = {bias_types[t]},
        .host_args = bias_types[t] == TF_INT32 ? bias_args : NULL,
    });
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "AddN",
        .create = addn_create,
        .compute = addn_compute,
        .destroy = binary_delete,
        .type_attrs = {"T"},
        .types = {bias_types[t]},
        .host_args = bias_types[t] == TF_INT32 ? addn_args : NULL,
    });
  }
}
