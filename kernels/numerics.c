/* CheckNumerics and CheckNumericsV2: the input passes through unchanged
 * (the output is the input's buffer), and the op fails with TensorFlow's
 * InvalidArgumentError, "<message> : Tensor had NaN values" and its
 * kinds, when the tensor holds NaN or an infinity.
 *
 * One kernel (numerics.cl) ORs flags for the kinds it finds into a device
 * word; the host reads that word back and waits for it, as TensorFlow's
 * GPU kernel does (it copies its two flags to the host and checks them in
 * a callback). The check reads bits only: half, bfloat16, float and double
 * share one program per element size, and double needs no fp64. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_numerics[];

enum { BITS16_HALF, BITS16_BF16, BITS32, BITS64, NUM_LAYOUTS };

OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_LAYOUTS] = {
    [BITS16_HALF] = {"numerics_half", ocl_cl_source_numerics,
                     "-DBITS=ushort -DMAGNITUDE=0x7fff -DEXPONENT=0x7c00"},
    [BITS16_BF16] = {"numerics_bf16", ocl_cl_source_numerics,
                     "-DBITS=ushort -DMAGNITUDE=0x7fff -DEXPONENT=0x7f80"},
    [BITS32] = {"numerics_32", ocl_cl_source_numerics,
                "-DBITS=uint -DMAGNITUDE=0x7fffffffu -DEXPONENT=0x7f800000u"},
    [BITS64] = {"numerics_64", ocl_cl_source_numerics,
                "-DBITS=ulong -DMAGNITUDE=0x7fffffffffffffffUL "
                "-DEXPONENT=0x7ff0000000000000UL"},
};

/* numerics.cl's flags. */
#define FOUND_NAN 1u
#define FOUND_NEG_INF 2u
#define FOUND_POS_INF 4u

/* Launches cover at most this many elements, so that the kernel's 32-bit
 * strides never wrap. */
#define CHUNK_ELEMENTS ((int64_t)1 << 30)

struct numerics_kernel {
  bool v2; /* CheckNumericsV2: -Inf and +Inf told apart */
  char *message;
  struct ocl_kernel k;
};

static void numerics_delete(void *kernel)
{
  struct numerics_kernel *k = kernel;
  if (k == NULL)
    return;
  free(k->message);
  free(k);
}

/* The "message" attribute, whatever its length. */
static char *message_attr(TF_OpKernelConstruction *ctx, TF_Status *status)
{
  int32_t list_size = 0, length = 0;
  if (ocl_tf.OpKernelConstruction_GetAttrSize == NULL ||
      ocl_tf.OpKernelConstruction_GetAttrString == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks string attributes in its C API");
    return NULL;
  }
  ocl_tf.OpKernelConstruction_GetAttrSize(ctx, "message", &list_size, &length,
                                          status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return NULL;
  char *message = calloc((size_t)(length > 0 ? length : 0) + 1, 1);
  if (message == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  if (length > 0)
    ocl_tf.OpKernelConstruction_GetAttrString(ctx, "message", message,
                                              (size_t)length, status);
  if (ocl_tf.GetCode(status) != TF_OK) {
    free(message);
    return NULL;
  }
  return message;
}

static void *numerics_create_common(TF_OpKernelConstruction *ctx, bool v2)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct numerics_kernel *k = calloc(1, sizeof(*k));
  TF_DataType dtype = TF_FLOAT;
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  k->v2 = v2;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->message = message_attr(ctx, status);
  if (k->message == NULL)
    goto fail;
  int layout = dtype == TF_HALF       ? BITS16_HALF
               : dtype == TF_BFLOAT16 ? BITS16_BF16
               : dtype == TF_DOUBLE   ? BITS64
                                      : BITS32;
  ocl_kernel_init(&k->k, &programs[layout], "check_numerics");
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  ocl_tf.OpKernelConstruction_Failure(ctx, status);
  ocl_tf.DeleteStatus(status);
  numerics_delete(k);
  return NULL;
}

static void *check_numerics_create(TF_OpKernelConstruction *ctx)
{
  return numerics_create_common(ctx, false);
}

static void *check_numerics_v2_create(TF_OpKernelConstruction *ctx)
{
  return numerics_create_common(ctx, true);
}

/* TensorFlow's words for the kinds found (check_numerics_op.cc). */
static const char *found_words(unsigned found, bool v2)
{
  bool nan = found & FOUND_NAN;
  if (!v2) {
    bool inf = found & (FOUND_NEG_INF | FOUND_POS_INF);
    return nan && inf ? "Inf and NaN" : nan ? "NaN" : "Inf";
  }
  static const char *const v2_words[8] = {
      "",
      "NaN",
      "-Inf",
      "-Inf and NaN",
      "+Inf",
      "+Inf and NaN",
      "-Inf and +Inf",
      "-Inf, +Inf, and NaN",
  };
  return v2_words[found & 7u];
}

static void check_numerics_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct numerics_kernel *k = kernel;
  struct ocl_op op;

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  if (x == NULL || !ocl_op_forward(&op, 0, x))
    goto out;
  int64_t n = ocl_tf.TensorElementCount(x);
  if (n == 0)
    goto out;
  const struct ocl_device_info *info = ocl_op_info(&op);
  TF_Tensor *found_t = info != NULL ? ocl_op_temp(&op, TF_INT32, 1) : NULL;
  if (found_t == NULL)
    goto out;
  const uint32_t zero = 0;
  if (!ocl_op_fill(&op, found_t, 0, &zero, sizeof(zero), sizeof(zero)))
    goto out;
  size_t local = ocl_kernel_fit_local(&op, &k->k, 256);
  if (local == 0)
    goto out;
  size_t element_size = ocl_tf.DataTypeSize(ocl_tf.TensorType(x));
  /* Enough work-groups to fill the device; each work-item strides. */
  size_t max_groups = (size_t)(info->compute_units > 0 ? info->compute_units : 1) * 8;
  for (int64_t start = 0; start < n; start += CHUNK_ELEMENTS) {
    int64_t count = n - start < CHUNK_ELEMENTS ? n - start : CHUNK_ELEMENTS;
    struct ocl_buffer chunk;
    if (!ocl_op_buffer(&op, x, (size_t)start * element_size,
                       (size_t)count * element_size, &chunk))
      goto out;
    size_t groups = ((size_t)count + local - 1) / local;
    if (groups > max_groups)
      groups = max_groups;
    size_t global = groups * local;
    const struct ocl_arg args[] = {OCL_BUF(chunk), OCL_INT(count),
                                   OCL_TENSOR(found_t),
                                   OCL_LOCAL(local * sizeof(cl_uint))};
    if (!ocl_launch(&op, &k->k, 1, &global, &local, args, 4))
      goto out;
  }
  uint32_t found = 0;
  if (!ocl_op_read(&op, found_t, 0, &found, sizeof(found)))
    goto out;
  if (found != 0)
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "%s : Tensor had %s values",
                k->message, found_words(found, k->v2));
out:
  ocl_op_end(&op);
}

void ocl_register_numerics_kernels(void)
{
  /* TensorFlow's GPU types, and bfloat16 as its CPU has it. */
  static const TF_DataType types[] = {TF_HALF, TF_BFLOAT16, TF_FLOAT,
                                      TF_DOUBLE};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "CheckNumerics",
        .create = check_numerics_create,
        .compute = check_numerics_compute,
        .destroy = numerics_delete,
        .type_attrs = {"T"},
        .types = {types[i]},
    });
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "CheckNumericsV2",
        .create = check_numerics_v2_create,
        .compute = check_numerics_compute,
        .destroy = numerics_delete,
        .type_attrs = {"T"},
        .types = {types[i]},
    });
  }
}
