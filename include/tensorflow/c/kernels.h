/* C-clean rendition of tensorflow/c/kernels.h (TensorFlow 2.18-2.21): the
 * kernel registration and op-kernel context API a device plugin calls.
 *
 * Differences from TensorFlow's header, all ABI-neutral:
 *  - TF_InputRange_Args_STRUCT_SIZE is a macro; TensorFlow defines it as a
 *    file-scope `const size_t`, which in C is an external definition and
 *    breaks linking two translation units that include the header.
 *  - TF_StringView comes from c_api.h in TensorFlow; it is defined here.
 *  - Declarations that need TF_Buffer (node defs, function attributes) and
 *    the rendezvous API are left out: no device plugin of ours uses them. */
#ifndef TENSORFLOW_C_KERNELS_H_
#define TENSORFLOW_C_KERNELS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TF_STRING_VIEW_DEFINED
#define TF_STRING_VIEW_DEFINED
/* Not NUL-terminated. */
typedef struct TF_StringView {
  const char *data;
  size_t len;
} TF_StringView;
#endif

typedef struct TF_KernelBuilder TF_KernelBuilder;
typedef struct TF_OpKernelConstruction TF_OpKernelConstruction;
typedef struct TF_OpKernelContext TF_OpKernelContext;
typedef struct TF_AsyncOpKernelDoneCallback TF_AsyncOpKernelDoneCallback;

/* ---- Registration ------------------------------------------------------ */

/* A builder for a kernel of `op_name` on devices of type `device_name`.
 * create_func runs once per node (its result is the kernel's state, passed to
 * compute_func and delete_func); any of the three may be NULL. */
TF_CAPI_EXPORT extern TF_KernelBuilder *TF_NewKernelBuilder(
    const char *op_name, const char *device_name,
    void *(*create_func)(TF_OpKernelConstruction *),
    void (*compute_func)(void *, TF_OpKernelContext *),
    void (*delete_func)(void *));
TF_CAPI_EXPORT extern TF_KernelBuilder *TF_NewAsyncKernelBuilder(
    const char *op_name, const char *device_name,
    void *(*create_func)(TF_OpKernelConstruction *),
    void (*compute_async_func)(void *, TF_OpKernelContext *,
                               TF_AsyncOpKernelDoneCallback *done),
    void (*delete_func)(void *));
TF_CAPI_EXPORT extern void TF_RunAsyncOpKernelDoneCallback(
    TF_AsyncOpKernelDoneCallback *done);
/* The kernel only matches nodes whose type attribute `attr_name` is `type`.
 * Several calls for one attribute accumulate allowed types. */
TF_CAPI_EXPORT extern void TF_KernelBuilder_TypeConstraint(
    TF_KernelBuilder *kernel_builder, const char *attr_name,
    const TF_DataType type, TF_Status *status);
/* The input or output argument `arg_name` (op-def name) lives in host memory. */
TF_CAPI_EXPORT extern void TF_KernelBuilder_HostMemory(
    TF_KernelBuilder *kernel_builder, const char *arg_name);
TF_CAPI_EXPORT extern void TF_KernelBuilder_Priority(
    TF_KernelBuilder *kernel_builder, int32_t priority_number);
TF_CAPI_EXPORT extern void TF_KernelBuilder_Label(
    TF_KernelBuilder *kernel_builder, const char *label);
/* Takes ownership of `builder`, also on failure. */
TF_CAPI_EXPORT extern void TF_RegisterKernelBuilder(const char *kernel_name,
                                                    TF_KernelBuilder *builder,
                                                    TF_Status *status);
TF_CAPI_EXPORT extern void TF_RegisterKernelBuilderWithKernelDef(
    const char *serialized_kernel_def, const char *name,
    TF_KernelBuilder *builder, TF_Status *status);
/* Only for a builder that was never registered. */
TF_CAPI_EXPORT extern void TF_DeleteKernelBuilder(TF_KernelBuilder *builder);

/* ---- Compute-time context ---------------------------------------------- */

/* The device's compute stream (SP_Stream of the plugin). Fails on CPU. */
TF_CAPI_EXPORT extern SP_Stream TF_GetStream(TF_OpKernelContext *ctx,
                                             TF_Status *status);
TF_CAPI_EXPORT extern int TF_NumInputs(TF_OpKernelContext *ctx);
TF_CAPI_EXPORT extern int TF_NumOutputs(TF_OpKernelContext *ctx);
/* *tensor shares the input's buffer; the caller TF_DeleteTensor()s it. */
TF_CAPI_EXPORT extern void TF_GetInput(TF_OpKernelContext *ctx, int i,
                                       TF_Tensor **tensor, TF_Status *status);

typedef struct TF_InputRange_Args {
  size_t struct_size;
  void *priv;
  int start;
  int stop;
  TF_Status *status;
} TF_InputRange_Args;
#define TF_InputRange_Args_STRUCT_SIZE \
  TF_OFFSET_OF_END(TF_InputRange_Args, status)

/* [start, stop) input indices of the (list) argument `name`. */
TF_CAPI_EXPORT extern void TF_InputRange(TF_OpKernelContext *ctx,
                                         const char *name,
                                         TF_InputRange_Args *args);
TF_CAPI_EXPORT extern TF_DataType TF_InputDatatype(TF_OpKernelContext *ctx,
                                                   int index);
/* Sets output i to share `tensor`'s buffer. */
TF_CAPI_EXPORT extern void TF_SetOutput(TF_OpKernelContext *ctx, int i,
                                        const TF_Tensor *tensor,
                                        TF_Status *status);
TF_CAPI_EXPORT extern TF_Tensor *TF_GetMutableOutput(TF_OpKernelContext *ctx,
                                                     int i, TF_Status *status);
TF_CAPI_EXPORT extern void TF_GetSerializedFunctionDefLibrary(
    TF_OpKernelContext *ctx, void *serialized_function_def_library,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_GetSerializedConfigProto(
    TF_OpKernelContext *ctx, void *serialized_config_proto, TF_Status *status);
TF_CAPI_EXPORT extern void TF_GetSerializedResourceHandleProto(
    TF_OpKernelContext *ctx, int i, void *serialized_resource_handle_proto,
    TF_Status *status);
/* Fails the kernel: the op returns `status`. */
TF_CAPI_EXPORT extern void TF_OpKernelContext_Failure(TF_OpKernelContext *ctx,
                                                      TF_Status *status);
TF_CAPI_EXPORT extern TF_DataType TF_ExpectedOutputDataType(
    TF_OpKernelContext *ctx, int i);
TF_CAPI_EXPORT extern bool TF_IsHostMemoryInput(TF_OpKernelContext *ctx, int i,
                                                TF_Status *status);
TF_CAPI_EXPORT extern bool TF_IsHostMemoryOutput(TF_OpKernelContext *ctx,
                                                 int i, TF_Status *status);
TF_CAPI_EXPORT extern int64_t TF_StepId(TF_OpKernelContext *ctx);
TF_CAPI_EXPORT extern int TF_GetDeviceId(TF_OpKernelContext *ctx);
TF_CAPI_EXPORT extern TF_StringView TF_GetDeviceName(TF_OpKernelContext *ctx);
TF_CAPI_EXPORT extern TF_StringView TF_GetOpKernelName(
    TF_OpKernelContext *ctx);
TF_CAPI_EXPORT extern TF_StringView TF_GetOpKernelRequestedInput(
    TF_OpKernelContext *ctx, size_t index);
TF_CAPI_EXPORT extern TF_StringView TF_GetResourceMgrDefaultContainerName(
    TF_OpKernelContext *ctx);

/* Allocates output `index` with shape `dims` on the kernel's memory type
 * (device unless declared host memory). `dtype` and `len` are ignored by
 * TensorFlow: the op definition decides. The caller deletes the result. */
TF_CAPI_EXPORT extern TF_Tensor *TF_AllocateOutput(TF_OpKernelContext *context,
                                                   int index,
                                                   TF_DataType dtype,
                                                   const int64_t *dims,
                                                   int num_dims, size_t len,
                                                   TF_Status *status);
/* Reuses one of the candidate inputs' buffers for output `output_index` when
 * it is not shared; *forwarded_input says which (-1: allocated). */
TF_CAPI_EXPORT extern TF_Tensor *TF_ForwardInputOrAllocateOutput(
    TF_OpKernelContext *context, const int *candidate_input_indices,
    int num_candidate_input_indices, int output_index,
    const int64_t *output_dims, int output_num_dims, int *forwarded_input,
    TF_Status *status);
/* Scratch memory for this compute call. alloc_attrs may be NULL. */
TF_CAPI_EXPORT extern TF_Tensor *TF_AllocateTemp(
    TF_OpKernelContext *context, TF_DataType dtype, const int64_t *dims,
    int num_dims, TF_AllocatorAttributes *alloc_attrs, TF_Status *status);
TF_CAPI_EXPORT extern void TF_IncNumDeferredOps(TF_OpKernelContext *context);
TF_CAPI_EXPORT extern void TF_DecNumDeferredOps(TF_OpKernelContext *context);

/* ---- Construction-time attributes --------------------------------------- */

/* For a list attribute: list_size = number of items, total_size = summed
 * length (strings: bytes; shapes: dims). For a scalar: list_size = -1,
 * total_size = byte length (string), rank (shape; -1 unknown) or -1. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrSize(
    TF_OpKernelConstruction *ctx, const char *attr_name, int32_t *list_size,
    int32_t *total_size, TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrType(
    TF_OpKernelConstruction *ctx, const char *attr_name, TF_DataType *val,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt32(
    TF_OpKernelConstruction *ctx, const char *attr_name, int32_t *val,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt64(
    TF_OpKernelConstruction *ctx, const char *attr_name, int64_t *val,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrFloat(
    TF_OpKernelConstruction *ctx, const char *attr_name, float *val,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrBool(
    TF_OpKernelConstruction *ctx, const char *attr_name, TF_Bool *val,
    TF_Status *status);
/* Copies at most max_length bytes, not NUL-terminated. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrString(
    TF_OpKernelConstruction *ctx, const char *attr_name, char *val,
    size_t max_length, TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTensor(
    TF_OpKernelConstruction *ctx, const char *attr_name, TF_Tensor **val,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTypeList(
    TF_OpKernelConstruction *ctx, const char *attr_name, TF_DataType *vals,
    int max_vals, TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt32List(
    TF_OpKernelConstruction *ctx, const char *attr_name, int32_t *vals,
    int max_vals, TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt64List(
    TF_OpKernelConstruction *ctx, const char *attr_name, int64_t *vals,
    int max_vals, TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrFloatList(
    TF_OpKernelConstruction *ctx, const char *attr_name, float *vals,
    int max_vals, TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrBoolList(
    TF_OpKernelConstruction *ctx, const char *attr_name, TF_Bool *vals,
    int max_vals, TF_Status *status);
/* values[i] points into `storage` (storage_size bytes), lengths[i] bytes. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrStringList(
    TF_OpKernelConstruction *ctx, const char *attr_name, char **vals,
    size_t *lengths, int max_values, void *storage, size_t storage_size,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTensorList(
    TF_OpKernelConstruction *ctx, const char *attr_name, TF_Tensor **vals,
    int max_values, TF_Status *status);
TF_CAPI_EXPORT extern bool TF_OpKernelConstruction_HasAttr(
    TF_OpKernelConstruction *ctx, const char *attr_name, TF_Status *status);
TF_CAPI_EXPORT extern TF_StringView TF_OpKernelConstruction_GetName(
    TF_OpKernelConstruction *ctx);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_Failure(
    TF_OpKernelConstruction *ctx, TF_Status *status);

/* The plugin's kernel entry point (exported by the plugin). */
void TF_InitKernel(void);

#if TFOCL_ABI_LP64
TFOCL_ABI_ASSERT(sizeof(TF_StringView) == 16, "TF_StringView sizeof");
TFOCL_ABI_ASSERT(sizeof(TF_InputRange_Args) == 32, "TF_InputRange_Args sizeof");
TFOCL_ABI_ASSERT(offsetof(TF_InputRange_Args, start) == 16,
                 "TF_InputRange_Args.start");
TFOCL_ABI_ASSERT(offsetof(TF_InputRange_Args, status) == 24,
                 "TF_InputRange_Args.status");
TFOCL_ABI_ASSERT(sizeof(TF_AllocatorAttributes) == 16,
                 "TF_AllocatorAttributes sizeof");
TFOCL_ABI_ASSERT(TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE == 9,
                 "TF_AllocatorAttributes size");
TFOCL_ABI_ASSERT(sizeof(TF_DataType) == 4, "TF_DataType");
TFOCL_ABI_ASSERT(sizeof(TF_Code) == 4, "TF_Code");
#endif

#ifdef __cplusplus
}
#endif

#endif /* TENSORFLOW_C_KERNELS_H_ */
