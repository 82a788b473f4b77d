/* C-clean rendition of tensorflow/c/ops.h (TensorFlow 2.18-2.21
 * signatures): registering an op definition and writing its shape
 * function.
 *
 * Both the tensorflow 2.19 and the tensorflow-cpu 2.21 wheels export every
 * function below from libtensorflow_framework.so.2. Inside TensorFlow,
 * TF_RegisterOpDefinition always leaves the status OK: the registration is
 * processed at once (or deferred), and a definition TensorFlow rejects, or
 * a second op of the same name, aborts the process. The host shim reports
 * both through the status instead. */
#ifndef TENSORFLOW_C_OPS_H_
#define TENSORFLOW_C_OPS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TF_DimensionHandle TF_DimensionHandle;
typedef struct TF_OpDefinitionBuilder TF_OpDefinitionBuilder;
typedef struct TF_ShapeHandle TF_ShapeHandle;
typedef struct TF_ShapeInferenceContext TF_ShapeInferenceContext;

/* ---- Registration --------------------------------------------------------- */

/* Freed by TF_RegisterOpDefinition (whatever it says) or by
 * TF_DeleteOpDefinitionBuilder, never both. */
TF_CAPI_EXPORT extern TF_OpDefinitionBuilder *TF_NewOpDefinitionBuilder(
    const char *op_name);
TF_CAPI_EXPORT extern void TF_RegisterOpDefinition(
    TF_OpDefinitionBuilder *builder, TF_Status *status);
TF_CAPI_EXPORT extern void TF_DeleteOpDefinitionBuilder(
    TF_OpDefinitionBuilder *builder);

/* "<name>: <type>[ >= n][ = default]", as REGISTER_OP's Attr(). */
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderAddAttr(
    TF_OpDefinitionBuilder *builder, const char *attr_spec);
/* "<name>: <type-expr>": a type or type attr, "N * T", or a list(type)
 * attr. */
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderAddInput(
    TF_OpDefinitionBuilder *builder, const char *input_spec);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderAddOutput(
    TF_OpDefinitionBuilder *builder, const char *output_spec);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetIsCommutative(
    TF_OpDefinitionBuilder *builder, bool is_commutative);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetIsAggregate(
    TF_OpDefinitionBuilder *builder, bool is_aggregate);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetIsStateful(
    TF_OpDefinitionBuilder *builder, bool is_stateful);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetAllowsUninitializedInput(
    TF_OpDefinitionBuilder *builder, bool allows_uninitialized_input);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderDeprecated(
    TF_OpDefinitionBuilder *builder, int version, const char *explanation);
TF_CAPI_EXPORT extern void TF_OpDefinitionBuilderSetShapeInferenceFunction(
    TF_OpDefinitionBuilder *builder,
    void (*shape_inference_func)(TF_ShapeInferenceContext *ctx,
                                 TF_Status *status));

/* ---- Shape inference ------------------------------------------------------ */

TF_CAPI_EXPORT extern int64_t TF_ShapeInferenceContextNumInputs(
    TF_ShapeInferenceContext *ctx);
TF_CAPI_EXPORT extern TF_ShapeHandle *TF_NewShapeHandle(void);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextGetInput(
    TF_ShapeInferenceContext *ctx, int i, TF_ShapeHandle *handle,
    TF_Status *status);
/* Copies the handle: the caller may delete it afterwards. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextSetOutput(
    TF_ShapeInferenceContext *ctx, int i, TF_ShapeHandle *handle,
    TF_Status *status);
TF_CAPI_EXPORT extern TF_ShapeHandle *TF_ShapeInferenceContextScalar(
    TF_ShapeInferenceContext *ctx);
TF_CAPI_EXPORT extern TF_ShapeHandle *TF_ShapeInferenceContextVectorFromSize(
    TF_ShapeInferenceContext *ctx, size_t size);
TF_CAPI_EXPORT extern TF_DimensionHandle *TF_NewDimensionHandle(void);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContext_GetAttrType(
    TF_ShapeInferenceContext *ctx, const char *attr_name, TF_DataType *val,
    TF_Status *status);
TF_CAPI_EXPORT extern int64_t TF_ShapeInferenceContextRank(
    TF_ShapeInferenceContext *ctx, TF_ShapeHandle *handle);
TF_CAPI_EXPORT extern int TF_ShapeInferenceContextRankKnown(
    TF_ShapeInferenceContext *ctx, TF_ShapeHandle *handle);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextWithRank(
    TF_ShapeInferenceContext *ctx, TF_ShapeHandle *handle, int64_t rank,
    TF_ShapeHandle *result, TF_Status *status);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextWithRankAtLeast(
    TF_ShapeInferenceContext *ctx, TF_ShapeHandle *handle, int64_t rank,
    TF_ShapeHandle *result, TF_Status *status);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextWithRankAtMost(
    TF_ShapeInferenceContext *ctx, TF_ShapeHandle *handle, int64_t rank,
    TF_ShapeHandle *result, TF_Status *status);
/* Dim i (negative: from the end); an unknown dim when i is out of range. */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextDim(
    TF_ShapeInferenceContext *ctx, TF_ShapeHandle *shape_handle, int64_t i,
    TF_DimensionHandle *result);
/* Dims [start, end) (negative: from the end; clamped to the rank). */
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextSubshape(
    TF_ShapeInferenceContext *ctx, TF_ShapeHandle *shape_handle, int64_t start,
    int64_t end, TF_ShapeHandle *result, TF_Status *status);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextSetUnknownShape(
    TF_ShapeInferenceContext *ctx, TF_Status *status);
TF_CAPI_EXPORT extern int TF_DimensionHandleValueKnown(
    TF_DimensionHandle *dim_handle);
TF_CAPI_EXPORT extern int64_t TF_DimensionHandleValue(
    TF_DimensionHandle *dim_handle);
TF_CAPI_EXPORT extern void TF_ShapeInferenceContextConcatenateShapes(
    TF_ShapeInferenceContext *ctx, TF_ShapeHandle *first,
    TF_ShapeHandle *second, TF_ShapeHandle *result, TF_Status *status);
TF_CAPI_EXPORT extern void TF_DeleteShapeHandle(TF_ShapeHandle *handle);
TF_CAPI_EXPORT extern void TF_DeleteDimensionHandle(TF_DimensionHandle *handle);

#ifdef __cplusplus
}
#endif

#endif /* TENSORFLOW_C_OPS_H_ */
