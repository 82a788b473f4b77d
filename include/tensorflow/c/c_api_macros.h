/* C-clean rendition of tensorflow/c/c_api_macros.h (TensorFlow 2.18-2.21).
 *
 * Only what the plugin and the host shim use. TensorFlow's own header is C++
 * friendly but this one is also valid C11 -pedantic. */
#ifndef TENSORFLOW_C_C_API_MACROS_H_
#define TENSORFLOW_C_C_API_MACROS_H_

#include <stddef.h>

/* Exported symbols of the host shim (the TF_* API it provides). The plugin
 * never defines TF_* functions, it only calls them through its resolver. */
#ifndef TF_CAPI_EXPORT
#define TF_CAPI_EXPORT __attribute__((visibility("default")))
#endif

/* TensorFlow spells this as a #define, not a typedef; keep it so, since the
 * struct layouts below depend on it being one byte. */
#define TF_Bool unsigned char

/* Size of a struct up to and including MEMBER: the value every *_STRUCT_SIZE
 * macro is built from, so that trailing members can be appended later. */
#define TF_OFFSET_OF_END(TYPE, MEMBER) \
  (offsetof(TYPE, MEMBER) + sizeof(((TYPE *)0)->MEMBER))

/* Layout checks of this rendition against the offsets TensorFlow's headers
 * give on LP64 (x86-64, aarch64). Not part of TensorFlow's header. */
#if defined(__cplusplus)
#define TFOCL_ABI_ASSERT(cond, what) static_assert(cond, what)
#else
#define TFOCL_ABI_ASSERT(cond, what) _Static_assert(cond, what)
#endif
#if defined(__LP64__)
#define TFOCL_ABI_LP64 1
#else
#define TFOCL_ABI_LP64 0
#endif

#endif /* TENSORFLOW_C_C_API_MACROS_H_ */
