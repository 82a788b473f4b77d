/* C-clean rendition of tensorflow/c/tf_buffer.h (TensorFlow 2.18-2.21): the
 * byte buffer that carries serialized protocol buffers across the C API
 * (the graph optimizer plugin API hands GraphDefs over in one). */
#ifndef TENSORFLOW_C_TF_BUFFER_H_
#define TENSORFLOW_C_TF_BUFFER_H_

#include <stddef.h>

#include "tensorflow/c/c_api_macros.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `data` is `length` bytes; whoever fills the buffer may set
 * `data_deallocator`, which TF_DeleteBuffer calls with data and length. A
 * NULL deallocator leaves the bytes to whoever owns them. */
typedef struct TF_Buffer {
  const void *data;
  size_t length;
  void (*data_deallocator)(void *data, size_t length);
} TF_Buffer;

/* The host shim exports these; the plugin never needs them (it fills the
 * buffers TensorFlow hands it). */
TF_CAPI_EXPORT extern TF_Buffer *TF_NewBufferFromString(const void *proto,
                                                        size_t proto_len);
TF_CAPI_EXPORT extern TF_Buffer *TF_NewBuffer(void);
TF_CAPI_EXPORT extern void TF_DeleteBuffer(TF_Buffer *buffer);

#if TFOCL_ABI_LP64
TFOCL_ABI_ASSERT(sizeof(TF_Buffer) == 24, "TF_Buffer sizeof");
TFOCL_ABI_ASSERT(offsetof(TF_Buffer, data) == 0, "TF_Buffer.data");
TFOCL_ABI_ASSERT(offsetof(TF_Buffer, length) == 8, "TF_Buffer.length");
TFOCL_ABI_ASSERT(offsetof(TF_Buffer, data_deallocator) == 16,
                 "TF_Buffer.data_deallocator");
#endif

#ifdef __cplusplus
}
#endif

#endif /* TENSORFLOW_C_TF_BUFFER_H_ */
