/* C-clean rendition of tensorflow/c/tf_status.h and the TSL_Code values of
 * xla/tsl/c/tsl_status.h (TensorFlow 2.18-2.21). */
#ifndef TENSORFLOW_C_TF_STATUS_H_
#define TENSORFLOW_C_TF_STATUS_H_

#include "tensorflow/c/c_api_macros.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque; TensorFlow defines struct TSL_Status in C++, the host shim in C. */
typedef struct TSL_Status TF_Status;

/* Values are those of absl::StatusCode and never change. */
typedef enum TF_Code {
  TF_OK = 0,
  TF_CANCELLED = 1,
  TF_UNKNOWN = 2,
  TF_INVALID_ARGUMENT = 3,
  TF_DEADLINE_EXCEEDED = 4,
  TF_NOT_FOUND = 5,
  TF_ALREADY_EXISTS = 6,
  TF_PERMISSION_DENIED = 7,
  TF_UNAUTHENTICATED = 16,
  TF_RESOURCE_EXHAUSTED = 8,
  TF_FAILED_PRECONDITION = 9,
  TF_ABORTED = 10,
  TF_OUT_OF_RANGE = 11,
  TF_UNIMPLEMENTED = 12,
  TF_INTERNAL = 13,
  TF_UNAVAILABLE = 14,
  TF_DATA_LOSS = 15
} TF_Code;

/* A new status is TF_OK with an empty message. */
TF_CAPI_EXPORT extern TF_Status *TF_NewStatus(void);
TF_CAPI_EXPORT extern void TF_DeleteStatus(TF_Status *s);
/* Copies msg; TF_OK clears the message. */
TF_CAPI_EXPORT extern void TF_SetStatus(TF_Status *s, TF_Code code,
                                        const char *msg);
TF_CAPI_EXPORT extern TF_Code TF_GetCode(const TF_Status *s);
/* Valid until the next change of s; never NULL. */
TF_CAPI_EXPORT extern const char *TF_Message(const TF_Status *s);

#ifdef __cplusplus
}
#endif

#endif /* TENSORFLOW_C_TF_STATUS_H_ */
