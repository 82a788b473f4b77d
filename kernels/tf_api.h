/* The TensorFlow C API, resolved at run time (contract 5) by the plugin
 * (plugin/tf_api.c) and called through by every kernel family: declared on
 * this side of the kernels/plugin boundary, which kernels/ never crosses.
 *
 * The plugin never references a TF_* symbol, so loading it can never fail
 * on a missing one (2.20/2.21 wheels lack kernels_experimental.h, and a
 * plugin with an unresolved symbol aborts `import tensorflow`). Instead it
 * calls through one table whose members are named like the functions
 * without their TF_ prefix:
 *
 *     ocl_tf.SetStatus(status, TF_INTERNAL, "message");
 *     ocl_tf.NewKernelBuilder("NoOp", "OPENCL", NULL, compute, NULL);
 *
 * Lookup order: libtensorflow_framework.so.2 (already loaded inside
 * TensorFlow), libtfocl_host.so (the host shim), then the process's global
 * scope. Only libraries already loaded are used (RTLD_NOLOAD). Required
 * members are non-NULL once ocl_tf_resolve() returned true; optional ones
 * (marked below, and all of kernels_experimental.h) may be NULL. */
#ifndef TFOCL_KERNELS_TF_API_H_
#define TFOCL_KERNELS_TF_API_H_

#include <stdbool.h>

#include "tensorflow/c/experimental/grappler/grappler.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/kernels_experimental.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

/* X(name, required): every TF function of our headers the plugin may call. */
#define OCL_TF_API_FUNCTIONS(X)                       \
  /* tf_status.h */                                   \
  X(NewStatus, 1)                                     \
  X(DeleteStatus, 1)                                  \
  X(SetStatus, 1)                                     \
  X(GetCode, 1)                                       \
  X(Message, 1)                                       \
  /* tf_datatype.h */                                 \
  X(DataTypeSize, 1)                                  \
  /* tf_tensor.h */                                   \
  X(NewTensor, 1)                                     \
  X(AllocateTensor, 1)                                \
  X(TensorMaybeMove, 0)                               \
  X(DeleteTensor, 1)                                  \
  X(TensorType, 1)                                    \
  X(SetShape, 0)                                      \
  X(NumDims, 1)                                       \
  X(Dim, 1)                                           \
  X(TensorByteSize, 1)                                \
  X(TensorData, 1)                                    \
  X(TensorElementCount, 1)                            \
  X(TensorBitcastFrom, 0)                             \
  X(TensorIsAligned, 0)                               \
  /* kernels.h: registration */                       \
  X(NewKernelBuilder, 1)                              \
  X(NewAsyncKernelBuilder, 0)                         \
  X(RunAsyncOpKernelDoneCallback, 0)                  \
  X(KernelBuilder_TypeConstraint, 1)                  \
  X(KernelBuilder_HostMemory, 1)                      \
  X(KernelBuilder_Priority, 0)                        \
  X(KernelBuilder_Label, 0)                           \
  X(RegisterKernelBuilder, 1)                         \
  X(RegisterKernelBuilderWithKernelDef, 0)            \
  X(DeleteKernelBuilder, 1)                           \
  /* kernels.h: compute time */                       \
  X(GetStream, 1)                                     \
  X(NumInputs, 1)                                     \
  X(NumOutputs, 1)                                    \
  X(GetInput, 1)                                      \
  X(InputRange, 0)                                    \
  X(InputDatatype, 1)                                 \
  X(SetOutput, 1)                                     \
  X(GetMutableOutput, 0)                              \
  X(GetSerializedFunctionDefLibrary, 0)               \
  X(GetSerializedConfigProto, 0)                      \
  X(GetSerializedResourceHandleProto, 0)              \
  X(OpKernelContext_Failure, 1)                       \
  X(ExpectedOutputDataType, 1)                        \
  X(IsHostMemoryInput, 0)                             \
  X(IsHostMemoryOutput, 0)                            \
  X(StepId, 0)                                        \
  X(GetDeviceId, 0)                                   \
  X(GetDeviceName, 0)                                 \
  X(GetOpKernelName, 0)                               \
  X(GetOpKernelRequestedInput, 0)                     \
  X(GetResourceMgrDefaultContainerName, 0)            \
  X(AllocateOutput, 1)                                \
  X(ForwardInputOrAllocateOutput, 0)                  \
  X(AllocateTemp, 0)                                  \
  X(IncNumDeferredOps, 0)                             \
  X(DecNumDeferredOps, 0)                             \
  /* kernels.h: construction time */                  \
  X(OpKernelConstruction_GetAttrSize, 0)              \
  X(OpKernelConstruction_GetAttrType, 1)              \
  X(OpKernelConstruction_GetAttrInt32, 1)             \
  X(OpKernelConstruction_GetAttrInt64, 1)             \
  X(OpKernelConstruction_GetAttrFloat, 1)             \
  X(OpKernelConstruction_GetAttrBool, 1)              \
  X(OpKernelConstruction_GetAttrString, 0)            \
  X(OpKernelConstruction_GetAttrTensor, 0)            \
  X(OpKernelConstruction_GetAttrTypeList, 0)          \
  X(OpKernelConstruction_GetAttrInt32List, 0)         \
  X(OpKernelConstruction_GetAttrInt64List, 0)         \
  X(OpKernelConstruction_GetAttrFloatList, 0)         \
  X(OpKernelConstruction_GetAttrBoolList, 0)          \
  X(OpKernelConstruction_GetAttrStringList, 0)        \
  X(OpKernelConstruction_GetAttrTensorList, 0)        \
  X(OpKernelConstruction_HasAttr, 0)                  \
  X(OpKernelConstruction_GetName, 0)                  \
  X(OpKernelConstruction_Failure, 1)                  \
  /* kernels_experimental.h (absent from 2.20/2.21 wheels) */ \
  X(AssignVariable, 0)                                \
  X(AssignUpdateVariable, 0)                          \
  X(MaybeLockVariableInputMutexesInOrder, 0)          \
  X(GetInputTensorFromVariable, 0)                    \
  X(ReleaseVariableInputLockHolder, 0)                \
  X(OpKernelConstruction_GetAttrTensorShape, 0)      \
  X(AddNVariant, 0)                                   \
  X(ZerosLikeVariant, 0)                              \
  /* ops.h: the plugin's own op (kernels/fused.c) */  \
  X(NewOpDefinitionBuilder, 0)                        \
  X(RegisterOpDefinition, 0)                          \
  X(DeleteOpDefinitionBuilder, 0)                     \
  X(OpDefinitionBuilderAddAttr, 0)                    \
  X(OpDefinitionBuilderAddInput, 0)                   \
  X(OpDefinitionBuilderAddOutput, 0)                  \
  X(OpDefinitionBuilderSetShapeInferenceFunction, 0)  \
  X(ShapeInferenceContextNumInputs, 0)                \
  X(ShapeInferenceContextGetInput, 0)                 \
  X(ShapeInferenceContextSetOutput, 0)                \
  X(ShapeInferenceContextScalar, 0)                   \
  X(ShapeInferenceContextRank, 0)                     \
  X(ShapeInferenceContextRankKnown, 0)                \
  X(ShapeInferenceContextDim, 0)                      \
  X(ShapeInferenceContextSubshape, 0)                 \
  X(ShapeInferenceContextSetUnknownShape, 0)          \
  X(ShapeInferenceContextConcatenateShapes, 0)        \
  X(NewShapeHandle, 0)                                \
  X(DeleteShapeHandle, 0)                             \
  X(NewDimensionHandle, 0)                            \
  X(DeleteDimensionHandle, 0)                         \
  X(DimensionHandleValueKnown, 0)                     \
  X(DimensionHandleValue, 0)

/* X(name): the graph optimizer helpers of grappler.h. Inside TensorFlow
 * they live in libtensorflow_cc.so.2, not in the framework library (both
 * the 2.19 and the 2.21 wheels); all optional: without them the graph
 * optimizer passes every graph through unchanged. */
#define OCL_TF_GRAPPLER_FUNCTIONS(X) \
  X(GetNodesToPreserveListSize)      \
  X(GetNodesToPreserveList)          \
  X(GetFetchNodesListSize)           \
  X(GetFetchNodesList)

/* __typeof__ of a declaration references no symbol. */
#define OCL_TF_API_MEMBER(name, required) __typeof__(&TF_##name) name;
#define OCL_TF_GRAPPLER_MEMBER(name) __typeof__(&TF_##name) name;
struct ocl_tf_api {
  OCL_TF_API_FUNCTIONS(OCL_TF_API_MEMBER)
  OCL_TF_GRAPPLER_FUNCTIONS(OCL_TF_GRAPPLER_MEMBER)
  /* const char *TF_Version(void), from libtensorflow_cc.so.2; NULL outside
   * TensorFlow (the host shim has none). */
  const char *(*Version)(void);
  /* bool tsl::OpDeterminismRequired(), what tf.config.experimental.
   * enable_op_determinism() turns on. A C++ function with no arguments and
   * a bool result, called through a C pointer: both wheels export it, and
   * there is no C API for it. NULL outside TensorFlow. */
  bool (*OpDeterminismRequired)(void);
};
#undef OCL_TF_API_MEMBER
#undef OCL_TF_GRAPPLER_MEMBER

extern struct ocl_tf_api ocl_tf;

/* Resolves the table once (thread-safe; later calls return the first
 * answer). False if a required function is missing; then `missing` names the
 * first one missing (static storage). */
bool ocl_tf_resolve(const char **missing);
/* True when this TensorFlow lets a plugin update variables in place
 * (kernels_experimental.h: TF_AssignUpdateVariable and the ResourceApply*
 * helpers); false on the 2.20/2.21 wheels and under
 * TFOCL_HIDE_TF_EXPERIMENTAL=1. Resolves first. */
bool ocl_tf_has_variable_api(void);
/* The first grappler helper missing (static storage), NULL when all are
 * there. Resolves first. */
const char *ocl_tf_grappler_missing(void);
/* True when running inside TensorFlow (its framework library is loaded),
 * false under the host shim. */
bool ocl_tf_in_tensorflow(void);
/* Whether ops must be deterministic: TensorFlow's flag where it is known,
 * else TF_DETERMINISTIC_OPS=1|true in the environment (how TensorFlow reads
 * it too). */
bool ocl_tf_determinism_required(void);
/* TensorFlow's minor version (2.x), or -1 outside TensorFlow. */
int ocl_tf_minor_version(void);
/* Whether the plugin's callbacks of TF_AddNVariant and TF_ZerosLikeVariant
 * own the tensors they are handed, as kernels_experimental.h says. From
 * 2.22 TensorFlow deletes them itself after the callback returns (its
 * disassembly shows the TF_DeleteTensor calls), so a callback that followed
 * the header would free them twice. */
bool ocl_tf_variant_callbacks_own_tensors(void);

#endif /* TFOCL_KERNELS_TF_API_H_ */
