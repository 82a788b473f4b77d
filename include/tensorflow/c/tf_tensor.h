/* C-clean rendition of tensorflow/c/tf_tensor.h (TensorFlow 2.18-2.21). */
#ifndef TENSORFLOW_C_TF_TENSOR_H_
#define TENSORFLOW_C_TF_TENSOR_H_

#include <stdbool.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where an allocation lives. on_host = 1 asks for host memory on a device. */
typedef struct TF_AllocatorAttributes {
  size_t struct_size;
  TF_Bool on_host;
} TF_AllocatorAttributes;

#define TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE \
  TF_OFFSET_OF_END(TF_AllocatorAttributes, on_host)

/* Opaque. A tensor owns a reference to its buffer; TF_DeleteTensor drops it. */
typedef struct TF_Tensor TF_Tensor;

/* Wraps `data` (len bytes); `deallocator(data, len, arg)` runs when the last
 * reference goes. */
TF_CAPI_EXPORT extern TF_Tensor *TF_NewTensor(
    TF_DataType dtype, const int64_t *dims, int num_dims, void *data,
    size_t len, void (*deallocator)(void *data, size_t len, void *arg),
    void *deallocator_arg);
/* Host tensor with an aligned, uninitialised buffer of len bytes. */
TF_CAPI_EXPORT extern TF_Tensor *TF_AllocateTensor(TF_DataType dtype,
                                                   const int64_t *dims,
                                                   int num_dims, size_t len);
TF_CAPI_EXPORT extern TF_Tensor *TF_TensorMaybeMove(TF_Tensor *tensor);
TF_CAPI_EXPORT extern void TF_DeleteTensor(TF_Tensor *tensor);
TF_CAPI_EXPORT extern TF_DataType TF_TensorType(const TF_Tensor *tensor);
TF_CAPI_EXPORT extern void TF_SetShape(TF_Tensor *tensor, const int64_t *dims,
                                       int num_dims);
TF_CAPI_EXPORT extern int TF_NumDims(const TF_Tensor *tensor);
TF_CAPI_EXPORT extern int64_t TF_Dim(const TF_Tensor *tensor, int dim_index);
TF_CAPI_EXPORT extern size_t TF_TensorByteSize(const TF_Tensor *tensor);
/* For a device tensor this is the plugin's device address (possibly an
 * interior pointer); for a 0-element tensor it is a host dummy. */
TF_CAPI_EXPORT extern void *TF_TensorData(const TF_Tensor *tensor);
TF_CAPI_EXPORT extern int64_t TF_TensorElementCount(const TF_Tensor *tensor);
/* `to` shares `from`'s buffer, reinterpreted as type/new_dims. */
TF_CAPI_EXPORT extern void TF_TensorBitcastFrom(const TF_Tensor *from,
                                                TF_DataType type, TF_Tensor *to,
                                                const int64_t *new_dims,
                                                int num_new_dims,
                                                TF_Status *status);
TF_CAPI_EXPORT extern bool TF_TensorIsAligned(const TF_Tensor *tensor);

#ifdef __cplusplus
}
#endif

#endif /* TENSORFLOW_C_TF_TENSOR_H_ */
