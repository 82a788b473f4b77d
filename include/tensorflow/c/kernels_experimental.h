/* C-clean rendition of the parts of tensorflow/c/kernels_experimental.h that
 * a device plugin uses for variables (TensorFlow 2.18-2.21 signatures).
 *
 * The 2.20.0 and 2.21.0 wheels export none of these (tensorflow#126374), so a
 * plugin must never reference them directly: it resolves them at run time and
 * registers the kernels that need them only when they are there. */
#ifndef TENSORFLOW_C_KERNELS_EXPERIMENTAL_H_
#define TENSORFLOW_C_KERNELS_EXPERIMENTAL_H_

#include "tensorflow/c/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TF_VariableInputLockHolder TF_VariableInputLockHolder;

/* The copy/update callbacks the core calls back into the plugin with. */
typedef void (*TF_VariableCopyFn)(TF_OpKernelContext *ctx, TF_Tensor *source,
                                  TF_Tensor *dest);
typedef void (*TF_VariableUpdateFn)(TF_OpKernelContext *ctx, TF_Tensor *tensor,
                                    TF_Tensor *value, int Op);

TF_CAPI_EXPORT extern void TF_AssignVariable(TF_OpKernelContext *ctx,
                                             int input_index, int value_index,
                                             bool validate_shape,
                                             TF_VariableCopyFn copyFunc,
                                             TF_Status *status);
TF_CAPI_EXPORT extern void TF_AssignUpdateVariable(
    TF_OpKernelContext *ctx, int input_index, int value_index, int Op,
    int isVariantType, TF_VariableCopyFn copyFunc,
    TF_VariableUpdateFn updateFunc, TF_Status *status);
TF_CAPI_EXPORT extern void TF_MaybeLockVariableInputMutexesInOrder(
    TF_OpKernelContext *ctx, bool do_lock, bool sparse, const int *const inputs,
    size_t len, TF_VariableCopyFn copyFunc,
    TF_VariableInputLockHolder **lockHolder, TF_Status *status);
TF_CAPI_EXPORT extern void TF_GetInputTensorFromVariable(
    TF_OpKernelContext *ctx, int input, bool lock_held, bool isVariantType,
    bool sparse, TF_VariableCopyFn copyFunc, TF_Tensor **out,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_ReleaseVariableInputLockHolder(
    TF_VariableInputLockHolder *lockHolder);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTensorShape(
    TF_OpKernelConstruction *ctx, const char *attr_name, int64_t *dims,
    size_t num_dims, TF_Status *status);

/* AddN and ZerosLike of DT_VARIANT (TensorList, Optional): TensorFlow
 * unwraps the variants and calls back for each pair of tensors inside
 * (out = a + b, out = zeros like input); the callback owns and deletes its
 * tensor arguments. Exported by the 2.19 wheels, not by 2.20/2.21. */
TF_CAPI_EXPORT extern void TF_AddNVariant(
    TF_OpKernelContext *ctx,
    void (*binary_add_func)(TF_OpKernelContext *ctx, TF_Tensor *a,
                            TF_Tensor *b, TF_Tensor *out),
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_ZerosLikeVariant(
    TF_OpKernelContext *ctx,
    void (*zeros_like_func)(TF_OpKernelContext *ctx, TF_Tensor *input,
                            TF_Tensor *out),
    TF_Status *status);

#ifdef __cplusplus
}
#endif

#endif /* TENSORFLOW_C_KERNELS_EXPERIMENTAL_H_ */
