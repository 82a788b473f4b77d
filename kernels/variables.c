/* Resource variable updates and the optimizers that train them:
 * AssignVariableOp, AssignAddVariableOp, AssignSubVariableOp,
 * ResourceApplyGradientDescent, ResourceApplyMomentum, ResourceApplyAdam,
 * and the plugin's own _TfoclKerasAdam (below).
 *
 * The variables themselves belong to TensorFlow core: a kernel reaches them
 * only through kernels_experimental.h (TF_AssignUpdateVariable,
 * TF_MaybeLockVariableInputMutexesInOrder, TF_GetInputTensorFromVariable),
 * handing it two callbacks: ocl_variable_copy (copy on write, a device-to-device
 * copy on the compute stream) and update_tensor (var += / -= value).
 *
 * The 2.20 and 2.21 wheels export none of kernels_experimental.h
 * (tensorflow#126374). Then AssignAdd/AssignSub are registered anyway with a
 * kernel that fails with UNIMPLEMENTED and says why: without our
 * registration TensorFlow would pick its DEVICE_DEFAULT kernel, which runs
 * CPU Eigen code on our device addresses (they fault by design). The
 * ResourceApply* kernels are registered only when the API is there;
 * without it plugin/graph/init.c registers stand-ins that explain the
 * failure. In tf.function graphs the graph optimizer (plugin/graph/)
 * rewrites all of these updates into ReadVariableOp, arithmetic and
 * AssignVariableOp, so only eager updates reach the failing kernels.
 *
 * Registration follows TensorFlow's GPU kernels: resource inputs in host
 * memory; AssignAdd/Sub for every number type TensorFlow's DEVICE_DEFAULT
 * kernels take (each of them would otherwise run CPU code on device
 * addresses), AssignVariableOp for those and bool, the optimizers for float
 * and half; the scalar hyper-parameters stay device tensors read by the
 * kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"
#include "variables.h"

extern const char ocl_cl_source_variables[];

enum storage {
  ST_FLOAT, ST_HALF, ST_BFLOAT16, ST_DOUBLE, ST_U8, ST_U16, ST_U32, ST_U64,
  ST_COUNT
};

OCL_PROGRAM_TABLE
static const struct ocl_program programs[ST_COUNT] = {
    [ST_FLOAT] = {"variables_float", ocl_cl_source_variables,
                  "-DT=float -DT_IS_FLOAT"},
    [ST_HALF] = {"variables_half", ocl_cl_source_variables,
                 "-DT=half -DT_IS_HALF"},
    [ST_BFLOAT16] = {"variables_bfloat16", ocl_cl_source_variables,
                     "-DT=ushort -DT_IS_BFLOAT16"},
    [ST_DOUBLE] = {"variables_double", ocl_cl_source_variables,
                   "-DT=double -DT_IS_DOUBLE"},
    [ST_U8] = {"variables_u8", ocl_cl_source_variables,
               "-DT=uchar -DT_IS_INT"},
    [ST_U16] = {"variables_u16", ocl_cl_source_variables,
                "-DT=ushort -DT_IS_INT"},
    [ST_U32] = {"variables_u32", ocl_cl_source_variables,
                "-DT=uint -DT_IS_INT"},
    [ST_U64] = {"variables_u64", ocl_cl_source_variables,
                "-DT=ulong -DT_IS_INT"},
};

/* TensorFlow's DenseUpdateType values, the `Op` of TF_AssignUpdateVariable. */
enum { UPDATE_ADD = 0, UPDATE_SUB = 1 };

/* The update callback's kernels, per storage and DenseUpdateType. TensorFlow
 * calls update_tensor back with no kernel instance (the callback takes no
 * user data), so these live here, named once at registration. */
static struct ocl_kernel update_kernels[ST_COUNT][2];

/* Every dtype TensorFlow registers AssignAdd/SubVariableOp for on
 * DEVICE_DEFAULT (resource_variable_ops.cc, TF_CALL_NUMBER_TYPES): each one
 * needs an OPENCL kernel, or TensorFlow would run that CPU code on device
 * addresses. */
static const TF_DataType update_types[] = {
    TF_FLOAT,  TF_HALF,   TF_BFLOAT16, TF_DOUBLE, TF_COMPLEX64, TF_COMPLEX128,
    TF_INT8,   TF_UINT8,  TF_INT16,    TF_UINT16, TF_INT32,     TF_UINT32,
    TF_INT64,  TF_UINT64,
};

/* The storage program a dtype's updates run in, and how many of its
 * elements one value holds (complex: two). */
static bool storage_of(TF_DataType dtype, enum storage *st, int *lanes,
                       TF_Status *status)
{
  *lanes = 1;
  switch (dtype) {
  case TF_FLOAT: *st = ST_FLOAT; return true;
  case TF_HALF: *st = ST_HALF; return true;
  case TF_BFLOAT16: *st = ST_BFLOAT16; return true;
  case TF_DOUBLE: *st = ST_DOUBLE; return true;
  case TF_COMPLEX64: *st = ST_FLOAT; *lanes = 2; return true;
  case TF_COMPLEX128: *st = ST_DOUBLE; *lanes = 2; return true;
  case TF_INT8: case TF_UINT8: *st = ST_U8; return true;
  case TF_INT16: case TF_UINT16: *st = ST_U16; return true;
  case TF_INT32: case TF_UINT32: *st = ST_U32; return true;
  case TF_INT64: case TF_UINT64: *st = ST_U64; return true;
  default:
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "OPENCL variable kernels have no dtype %d", (int)dtype);
    return false;
  }
}

static const char *dtype_name(TF_DataType dtype)
{
  switch (dtype) {
  case TF_FLOAT: return "float";
  case TF_HALF: return "half";
  case TF_BFLOAT16: return "bfloat16";
  case TF_DOUBLE: return "double";
  case TF_COMPLEX64: return "complex64";
  case TF_COMPLEX128: return "complex128";
  case TF_INT8: return "int8";
  case TF_UINT8: return "uint8";
  case TF_INT16: return "int16";
  case TF_UINT16: return "uint16";
  case TF_INT32: return "int32";
  case TF_UINT32: return "uint32";
  case TF_INT64: return "int64";
  case TF_UINT64: return "uint64";
  default: return "unsupported";
  }
}

/* float64 programs need cl_khr_fp64: without it, a clear error instead of a
 * build failure. */
static bool storage_available(struct ocl_op *op, enum storage st,
                              TF_DataType dtype)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (st != ST_DOUBLE || info->has_fp64)
    return true;
  return ocl_op_fail(op, TF_UNIMPLEMENTED,
                     "%s variables need an OpenCL device with cl_khr_fp64; "
                     "OpenCL device %d has none",
                     dtype_name(dtype), info->ordinal);
}

static bool ok(const TF_Status *status)
{
  return ocl_tf.GetCode(status) == TF_OK;
}

/* ---- The callbacks TensorFlow calls back with ---------------------------- */

/* Both callbacks own their tensor arguments: TensorFlow creates them with
 * TF_TensorFromTensor and never deletes them (kernels_experimental.cc), and
 * an undeleted one would keep the variable's old buffer alive. */

/* dest := source, both device tensors of one shape, in compute-stream order.
 * A callback runs inside the calling kernel's compute, on its context: its
 * own struct ocl_op fails the kernel on error. */
void ocl_variable_copy(TF_OpKernelContext *ctx, TF_Tensor *source,
                       TF_Tensor *dest)
{
  struct ocl_op op;
  size_t bytes = ocl_tf.TensorByteSize(source);

  ocl_op_begin(&op, ctx);
  if (ocl_tf.TensorByteSize(dest) != bytes)
    ocl_op_fail(&op, TF_INTERNAL, "variable copy: %zu bytes into %zu bytes",
                bytes, ocl_tf.TensorByteSize(dest));
  /* 0 elements: host dummy pointers, nothing to copy (contract 7). */
  else if (bytes != 0 && ocl_tf.TensorElementCount(source) != 0)
    ocl_op_copy(&op, source, 0, dest, 0, bytes);
  ocl_tf.DeleteTensor(source);
  ocl_tf.DeleteTensor(dest);
  ocl_op_end(&op);
}

/* tensor (op)= value: the variable's (unshared) tensor and the op's value,
 * same shape and dtype (checked by TensorFlow). */
static void update_tensor(TF_OpKernelContext *ctx, TF_Tensor *tensor,
                          TF_Tensor *value, int update)
{
  struct ocl_op op;
  enum storage st;
  int lanes;
  TF_DataType dtype = ocl_tf.TensorType(tensor);
  int64_t n = ocl_tf.TensorElementCount(tensor);

  ocl_op_begin(&op, ctx);
  if (n != 0 && storage_of(dtype, &st, &lanes, op.status) &&
      storage_available(&op, st, dtype)) {
    n *= lanes;
    const struct ocl_arg args[] = {OCL_TENSOR(tensor), OCL_TENSOR(value),
                                   OCL_LONG(n)};
    ocl_launch_flat(&op, &update_kernels[st][update == UPDATE_SUB], (size_t)n,
                    args, 3);
  }
  ocl_tf.DeleteTensor(tensor);
  ocl_tf.DeleteTensor(value);
  ocl_op_end(&op);
}

/* ---- AssignVariableOp, AssignAddVariableOp, AssignSubVariableOp ---------- */

struct assign_kernel {
  int op; /* UPDATE_ADD, UPDATE_SUB; -1 for AssignVariableOp */
  bool validate_shape;
};

static void *assign_create(TF_OpKernelConstruction *ctx, int op)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct assign_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    ocl_tf.OpKernelConstruction_Failure(ctx, status);
  } else {
    k->op = op;
    if (op < 0) {
      TF_Bool validate = 0;
      ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "validate_shape",
                                              &validate, status);
      /* Absent from older graphs: TensorFlow's default is false. */
      k->validate_shape = ok(status) && validate;
    }
  }
  ocl_tf.DeleteStatus(status);
  return k;
}

static void *assign_add_create(TF_OpKernelConstruction *ctx)
{
  return assign_create(ctx, UPDATE_ADD);
}

static void *assign_sub_create(TF_OpKernelConstruction *ctx)
{
  return assign_create(ctx, UPDATE_SUB);
}

static void *assign_variable_create(TF_OpKernelConstruction *ctx)
{
  return assign_create(ctx, -1);
}

static void assign_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct assign_kernel *k = kernel;
  struct ocl_op op;
  ocl_op_begin(&op, ctx);
  if (k->op < 0)
    ocl_tf.AssignVariable(ctx, 0, 1, k->validate_shape, ocl_variable_copy,
                          op.status);
  else
    ocl_tf.AssignUpdateVariable(ctx, 0, 1, k->op, 0, ocl_variable_copy,
                                update_tensor, op.status);
  ocl_op_end(&op);
}

/* This TensorFlow cannot update a variable from a plugin: say so instead of
 * letting its DEFAULT kernel touch device memory from the CPU. */
static void assign_unavailable_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct assign_kernel *k = kernel;
  struct ocl_op op;
  ocl_op_begin(&op, ctx);
  ocl_op_fail(
      &op, TF_UNIMPLEMENTED,
      "%s cannot run on %s: this TensorFlow does not export "
      "TF_AssignUpdateVariable (none of tensorflow/c/kernels_experimental.h "
      "is exported by the TensorFlow 2.20 and 2.21 wheels, "
      "tensorflow#126374, fixed after 2.21), so no PluggableDevice can "
      "update a variable. Use TensorFlow 2.19, or a release with the fix.",
      k->op == UPDATE_SUB ? "AssignSubVariableOp" : "AssignAddVariableOp",
      OCL_RUNTIME_DEVICE_TYPE);
  ocl_op_end(&op);
}

/* ---- ResourceApply* ----------------------------------------------------- */

/* Keras 3's Adam in one op per weight, for tfocl's Python side
 * (plugin/python/tfocl/_keras.py): ResourceApplyAdam computes 1 - beta in
 * the weight's dtype where Keras rounds Python's 1 - beta to it, a
 * different second-moment rate (1.3e-5 relative at beta_2 = 0.999) that
 * moved the digits CNN's accuracy after 8 epochs by 1.1 %. This op takes
 * Keras' own scalars and computes its ops in their order
 * (variables.cl's keras_adam):
 *
 *   _TfoclKerasAdam(var: resource, m: resource, v: resource, alpha: T,
 *                   one_minus_beta_1: T, one_minus_beta_2: T, epsilon: T,
 *                   grad: T)   T: {float}, use_locking: bool = false
 *
 * Defined only where TensorFlow lets a plugin define ops and update
 * variables in place: the Python side takes it where it is defined. */
#define KERAS_ADAM_OP "_TfoclKerasAdam"

enum apply_kind {
  GRADIENT_DESCENT,
  MOMENTUM,
  KERAS_MOMENTUM,
  ADAM,
  KERAS_ADAM
};

struct apply_op {
  const char *op;
  const char *kernel;
  enum apply_kind kind;
  int num_vars;                /* resource inputs 0 .. num_vars-1 */
  const char *const *names;    /* every input's name, for messages */
  unsigned scalars;            /* bit i: input i must be a scalar */
  unsigned same_shape;         /* bit i: input i must have var's shape */
  bool has_nesterov;
};

static const char *const gd_names[] = {"var", "alpha", "delta"};
static const char *const momentum_names[] = {"var", "accum", "lr", "grad",
                                             "momentum"};
static const char *const adam_names[] = {
    "var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2",
    "epsilon", "grad"};

static const char *const keras_adam_names[] = {
    "var",     "m",   "v", "alpha", "one_minus_beta_1", "one_minus_beta_2",
    "epsilon", "grad"};

#define BIT(i) (1u << (i))

/* Inputs in TensorFlow's order of checks within each class. */
static const struct apply_op apply_ops[] = {
    {"ResourceApplyGradientDescent", "apply_gradient_descent", GRADIENT_DESCENT,
     1, gd_names, BIT(1), BIT(2), false},
    {"ResourceApplyMomentum", "apply_momentum", MOMENTUM, 2, momentum_names,
     BIT(2) | BIT(4), BIT(1) | BIT(3), true},
    /* Keras' SGD with momentum, op for op (tfocl's Python side takes it
     * for Keras 3's SGD; Keras 2's optimizers call it themselves). */
    {"ResourceApplyKerasMomentum", "apply_keras_momentum", KERAS_MOMENTUM, 2,
     momentum_names, BIT(2) | BIT(4), BIT(1) | BIT(3), true},
    {"ResourceApplyAdam", "apply_adam", ADAM, 3, adam_names,
     BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(8),
     BIT(1) | BIT(2) | BIT(9), true},
    {KERAS_ADAM_OP, "keras_adam", KERAS_ADAM, 3, keras_adam_names,
     BIT(3) | BIT(4) | BIT(5) | BIT(6), BIT(1) | BIT(2) | BIT(7), false},
};

#define MAX_APPLY_INPUTS 10

struct apply_kernel {
  const struct apply_op *op;
  TF_DataType dtype;
  enum storage storage;
  bool use_locking;
  bool use_nesterov;
  struct ocl_kernel kernel;
};

static void *apply_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct apply_op *op = &apply_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct apply_kernel *k = calloc(1, sizeof(*k));
  TF_Bool flag = 0;

  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  int lanes;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (!ok(status) || !storage_of(k->dtype, &k->storage, &lanes, status))
    goto fail;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "use_locking", &flag, status);
  k->use_locking = ok(status) && flag; /* default false */
  flag = 0;
  if (op->has_nesterov) {
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "use_nesterov", &flag,
                                            status);
    k->use_nesterov = ok(status) && flag;
  }
  ocl_set_ok(status);
  if (!ocl_kernel_init(&k->kernel, &programs[k->storage], op->kernel)) {
    ocl_set_status(status, TF_INTERNAL, "%s: kernel name too long", op->op);
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

/* TensorFlow's IsLegacyScalar: [] or [1]. */
static bool legacy_scalar(const TF_Tensor *t)
{
  int nd = ocl_tf.NumDims(t);
  return nd == 0 || (nd == 1 && ocl_tf.Dim(t, 0) == 1);
}

static bool same_dims(const TF_Tensor *a, const TF_Tensor *b)
{
  int nd = ocl_tf.NumDims(a);
  if (nd != ocl_tf.NumDims(b))
    return false;
  for (int d = 0; d < nd; d++)
    if (ocl_tf.Dim(a, d) != ocl_tf.Dim(b, d))
      return false;
  return true;
}

static void format_shape(const TF_Tensor *t, char *buf, int len)
{
  int64_t dims[OCL_MAX_DIMS];
  int nd = ocl_tf.NumDims(t);
  if (nd > OCL_MAX_DIMS) {
    snprintf(buf, (size_t)len, "[rank %d]", nd);
    return;
  }
  for (int d = 0; d < nd; d++)
    dims[d] = ocl_tf.Dim(t, d);
  ocl_shape_format(dims, nd, buf, len);
}

/* TensorFlow's checks, in its order and words (training_ops.cc). */
static bool apply_validate(const struct apply_kernel *k,
                           TF_OpKernelContext *ctx, TF_Tensor *const *in,
                           TF_Status *status)
{
  const struct apply_op *op = k->op;
  int num_inputs = ocl_tf.NumInputs(ctx);
  char a[160], b[160];

  for (int i = 0; i < op->num_vars; i++) {
    if (ocl_tf.TensorType(in[i]) != k->dtype) {
      /* The variable holds another dtype than the op's T. */
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Trying to update variable '%s' of dtype %s with %s "
                     "of dtype %s",
                     op->names[i], dtype_name(ocl_tf.TensorType(in[i])),
                     op->op, dtype_name(k->dtype));
      return false;
    }
  }
  for (int i = op->num_vars; i < num_inputs; i++) {
    if ((op->scalars & BIT(i)) && !legacy_scalar(in[i])) {
      format_shape(in[i], a, sizeof(a));
      ocl_set_status(status, TF_INVALID_ARGUMENT, "%s is not a scalar: %s",
                     op->names[i], a);
      return false;
    }
  }
  for (int i = 1; i < num_inputs; i++) {
    if ((op->same_shape & BIT(i)) && !same_dims(in[0], in[i])) {
      format_shape(in[0], a, sizeof(a));
      format_shape(in[i], b, sizeof(b));
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "var and %s do not have the same shape%s %s",
                     op->names[i], a, b);
      return false;
    }
  }
  return true;
}

static void apply_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct apply_kernel *k = kernel;
  const struct apply_op *op = k->op;
  struct ocl_op o;
  TF_VariableInputLockHolder *locks = NULL;
  TF_Tensor *in[MAX_APPLY_INPUTS] = {NULL};
  int num_inputs = ocl_tf.NumInputs(ctx);
  static const int var_inputs[] = {0, 1, 2};

  ocl_op_begin(&o, ctx);
  if (num_inputs > MAX_APPLY_INPUTS) {
    ocl_op_fail(&o, TF_INTERNAL, "%s: %d inputs", op->op, num_inputs);
    goto out;
  }
  /* As TensorFlow: the variables' locks (exclusive with use_locking) are
   * taken in one global order, then their tensors are fetched, copied
   * first if a reader still shares them. */
  ocl_tf.MaybeLockVariableInputMutexesInOrder(
      ctx, k->use_locking, false, var_inputs, (size_t)op->num_vars,
      ocl_variable_copy, &locks, o.status);
  if (!ocl_op_ok(&o))
    goto out;
  for (int i = 0; i < op->num_vars; i++) {
    ocl_tf.GetInputTensorFromVariable(ctx, i, k->use_locking, false, false,
                                      ocl_variable_copy, &in[i], o.status);
    if (!ocl_op_ok(&o))
      goto out;
  }
  for (int i = op->num_vars; i < num_inputs; i++) {
    ocl_tf.GetInput(ctx, i, &in[i], o.status);
    if (!ocl_op_ok(&o))
      goto out;
  }
  if (!apply_validate(k, ctx, in, o.status))
    goto out;

  int64_t n = ocl_tf.TensorElementCount(in[0]);
  struct ocl_arg args[MAX_APPLY_INPUTS + 2];
  int num_args = 0;
  if (n == 0 || !storage_available(&o, k->storage, k->dtype))
    goto out;
  for (int i = 0; i < num_inputs; i++)
    args[num_args++] = OCL_TENSOR(in[i]);
  args[num_args++] = OCL_LONG(n);
  if (op->has_nesterov)
    args[num_args++] = OCL_INT(k->use_nesterov ? 1 : 0);
  ocl_launch_flat(&o, &k->kernel, (size_t)n, args, num_args);
out:
  for (int i = 0; i < MAX_APPLY_INPUTS; i++)
    if (in[i] != NULL)
      ocl_tf.DeleteTensor(in[i]);
  /* After the enqueue: later updates are ordered by the stream. */
  if (locks != NULL)
    ocl_tf.ReleaseVariableInputLockHolder(locks);
  ocl_op_end(&o);
}

#define NUM_APPLY_OPS ((int)(sizeof(apply_ops) / sizeof(apply_ops[0])))
_Static_assert(NUM_APPLY_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per optimizer op");
OCL_FAMILY_CREATES(apply, apply_create);

static void kernel_delete(void *kernel) { free(kernel); }

/* ---- Registration ------------------------------------------------------- */

static void register_one(const char *op, const char *type_attr,
                         TF_DataType dtype,
                         void *(*create)(TF_OpKernelConstruction *),
                         void (*compute)(void *, TF_OpKernelContext *),
                         const char *const *host_args)
{
  ocl_register_kernel(&(const struct ocl_kernel_spec){
      .op = op,
      .create = create,
      .compute = compute,
      .destroy = kernel_delete,
      .type_attrs = {type_attr},
      .types = {dtype},
      .host_args = host_args,
  });
}

/* No outputs: nothing to infer. */
static void no_outputs_shape_fn(TF_ShapeInferenceContext *ctx,
                                TF_Status *status)
{
  (void)ctx;
  ocl_set_ok(status);
}

/* Defines _TfoclKerasAdam where TensorFlow has the op-definition API.
 * Inside TensorFlow a definition it rejects aborts the process: fixed text
 * that its OpDefBuilder accepts. Its resource inputs make it stateful
 * there (TensorFlow marks such ops so itself): no pass merges two of them
 * or drops one. */
static bool register_keras_adam_op(void)
{
  if (ocl_tf.NewOpDefinitionBuilder == NULL ||
      ocl_tf.RegisterOpDefinition == NULL ||
      ocl_tf.OpDefinitionBuilderAddInput == NULL ||
      ocl_tf.OpDefinitionBuilderAddAttr == NULL ||
      ocl_tf.OpDefinitionBuilderSetShapeInferenceFunction == NULL)
    return false;
  TF_OpDefinitionBuilder *b = ocl_tf.NewOpDefinitionBuilder(KERAS_ADAM_OP);
  if (b == NULL)
    return false;
  static const char *const inputs[] = {
      "var: resource",       "m: resource",         "v: resource", "alpha: T",
      "one_minus_beta_1: T", "one_minus_beta_2: T", "epsilon: T",  "grad: T"};
  for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
    ocl_tf.OpDefinitionBuilderAddInput(b, inputs[i]);
  ocl_tf.OpDefinitionBuilderAddAttr(b, "T: {float}");
  ocl_tf.OpDefinitionBuilderAddAttr(b, "use_locking: bool = false");
  ocl_tf.OpDefinitionBuilderSetShapeInferenceFunction(b, no_outputs_shape_fn);
  TF_Status *status = ocl_tf.NewStatus();
  ocl_tf.RegisterOpDefinition(b, status); /* takes b */
  bool ok = ocl_tf.GetCode(status) == TF_OK;
  ocl_tf.DeleteStatus(status);
  return ok;
}

void ocl_register_variables_kernels(void)
{
  static const char *const resource_arg[] = {"resource", NULL};
  static const char *const gd_host[] = {"var", NULL};
  static const char *const momentum_host[] = {"var", "accum", NULL};
  static const char *const adam_host[] = {"var", "m", "v", NULL};
  static const char *const *const apply_host_args[] = {gd_host, momentum_host,
                                                       momentum_host, adam_host,
                                                       adam_host};
  _Static_assert(sizeof(apply_host_args) / sizeof(apply_host_args[0]) ==
                     NUM_APPLY_OPS,
                 "host arguments for every optimizer op");
  /* AssignVariableOp only copies (copy on write): any fixed-size dtype. */
  static const TF_DataType assign_types[] = {TF_BOOL};
  static const TF_DataType float_types[] = {TF_FLOAT, TF_HALF};
  /* Decided here, once the TensorFlow C API is resolved. */
  bool can_update = ocl_tf.AssignUpdateVariable != NULL;
  bool can_assign = ocl_tf.AssignVariable != NULL;
  bool can_apply = ocl_tf.MaybeLockVariableInputMutexesInOrder != NULL &&
                   ocl_tf.ReleaseVariableInputLockHolder != NULL &&
                   ocl_tf.GetInputTensorFromVariable != NULL;

  for (int st = 0; st < ST_COUNT; st++) {
    ocl_kernel_init(&update_kernels[st][UPDATE_ADD], &programs[st],
                    "assign_add");
    ocl_kernel_init(&update_kernels[st][UPDATE_SUB], &programs[st],
                    "assign_sub");
  }
  /* Without TF_AssignUpdateVariable, AssignAdd/SubVariableOp fail with
   * UNIMPLEMENTED (assign_unavailable_compute). */
  for (size_t t = 0; t < sizeof(update_types) / sizeof(update_types[0]);
       t++) {
    TF_DataType dtype = update_types[t];
    void (*compute)(void *, TF_OpKernelContext *) =
        can_update ? assign_compute : assign_unavailable_compute;
    register_one("AssignAddVariableOp", "dtype", dtype, assign_add_create,
                 compute, resource_arg);
    register_one("AssignSubVariableOp", "dtype", dtype, assign_sub_create,
                 compute, resource_arg);
    /* Without TF_AssignVariable TensorFlow's DEFAULT AssignVariableOp is
     * kept: it only moves buffers (outside copy-on-read mode, which only
     * sparse kernels turn on, and we register none). */
    if (can_assign)
      register_one("AssignVariableOp", "dtype", dtype,
                   assign_variable_create, assign_compute, resource_arg);
  }
  for (size_t t = 0; can_assign && t < sizeof(assign_types) /
                                           sizeof(assign_types[0]);
       t++)
    register_one("AssignVariableOp", "dtype", assign_types[t],
                 assign_variable_create, assign_compute, resource_arg);
  if (!can_apply)
    return;
  for (int i = 0; i < NUM_APPLY_OPS; i++) {
    if (apply_ops[i].kind == KERAS_ADAM) {
      if (register_keras_adam_op())
        register_one(apply_ops[i].op, "T", TF_FLOAT, apply_creates[i],
                     apply_compute, apply_host_args[i]);
      continue;
    }
    for (size_t t = 0; t < sizeof(float_types) / sizeof(float_types[0]);
         t++)
      register_one(apply_ops[i].op, "T", float_types[t], apply_creates[i],
                   apply_compute, apply_host_args[i]);
  }
}
