/* C-clean rendition of
 * tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h, the
 * profiler plugin API of TensorFlow 2.18-2.21 (TP 0.0.1).
 *
 * TensorFlow looks TF_InitProfiler up in a PluggableDevice library and, when
 * a profile is taken (tf.profiler.experimental.start/stop, TensorBoard's
 * capture), calls start, stop, then collect_data_xspace twice: first with
 * buffer NULL for the size of the serialized XSpace, then with a buffer of
 * that size. TP_ structs are filled by the plugin, TF_ ones by the core;
 * `struct_size` is set by both; `ext` is reserved. Every offset below is
 * checked at compile time. */
#ifndef TENSORFLOW_C_EXPERIMENTAL_PLUGGABLE_PROFILER_PLUGGABLE_PROFILER_H_
#define TENSORFLOW_C_EXPERIMENTAL_PLUGGABLE_PROFILER_PLUGGABLE_PROFILER_H_

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TP_MAJOR 0
#define TP_MINOR 0
#define TP_PATCH 1

typedef struct TP_Profiler {
  size_t struct_size;
  void *ext;
  const char *type; /* the device type profiled (the plugin's) */
} TP_Profiler;

#define TP_PROFILER_STRUCT_SIZE TF_OFFSET_OF_END(TP_Profiler, type)

typedef struct TP_ProfilerFns {
  size_t struct_size;
  void *ext;
  void (*start)(const TP_Profiler *profiler, TF_Status *status);
  void (*stop)(const TP_Profiler *profiler, TF_Status *status);
  /* Serializes what was collected as an XSpace into buffer: with buffer
   * NULL, *size_in_bytes receives the size needed; later calls may return
   * nothing. */
  void (*collect_data_xspace)(const TP_Profiler *profiler, uint8_t *buffer,
                              size_t *size_in_bytes, TF_Status *status);
} TP_ProfilerFns;

#define TP_PROFILER_FNS_STRUCT_SIZE \
  TF_OFFSET_OF_END(TP_ProfilerFns, collect_data_xspace)

typedef struct TF_ProfilerRegistrationParams {
  size_t struct_size;
  void *ext;
  int32_t major_version;
  int32_t minor_version;
  int32_t patch_version;
  /* Owned by the core, filled by the plugin. */
  TP_Profiler *profiler;
  TP_ProfilerFns *profiler_fns;
  /* Clean up what the plugin allocated inside them (not the structs). */
  void (*destroy_profiler)(TP_Profiler *profiler);
  void (*destroy_profiler_fns)(TP_ProfilerFns *profiler_fns);
} TF_ProfilerRegistrationParams;

#define TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE \
  TF_OFFSET_OF_END(TF_ProfilerRegistrationParams, destroy_profiler_fns)

void TF_InitProfiler(TF_ProfilerRegistrationParams *params, TF_Status *status);

#if UINTPTR_MAX == 0xffffffffffffffffu
TFOCL_ABI_ASSERT(offsetof(TP_Profiler, type) == 16, "TP_Profiler.type");
TFOCL_ABI_ASSERT(TP_PROFILER_STRUCT_SIZE == 24, "TP_Profiler size");
TFOCL_ABI_ASSERT(offsetof(TP_ProfilerFns, start) == 16, "TP_ProfilerFns.start");
TFOCL_ABI_ASSERT(offsetof(TP_ProfilerFns, stop) == 24, "TP_ProfilerFns.stop");
TFOCL_ABI_ASSERT(offsetof(TP_ProfilerFns, collect_data_xspace) == 32,
                 "TP_ProfilerFns.collect_data_xspace");
TFOCL_ABI_ASSERT(TP_PROFILER_FNS_STRUCT_SIZE == 40, "TP_ProfilerFns size");
TFOCL_ABI_ASSERT(offsetof(TF_ProfilerRegistrationParams, major_version) == 16,
                 "TF_ProfilerRegistrationParams.major_version");
TFOCL_ABI_ASSERT(offsetof(TF_ProfilerRegistrationParams, minor_version) == 20,
                 "TF_ProfilerRegistrationParams.minor_version");
TFOCL_ABI_ASSERT(offsetof(TF_ProfilerRegistrationParams, patch_version) == 24,
                 "TF_ProfilerRegistrationParams.patch_version");
TFOCL_ABI_ASSERT(offsetof(TF_ProfilerRegistrationParams, profiler) == 32,
                 "TF_ProfilerRegistrationParams.profiler");
TFOCL_ABI_ASSERT(offsetof(TF_ProfilerRegistrationParams, profiler_fns) == 40,
                 "TF_ProfilerRegistrationParams.profiler_fns");
TFOCL_ABI_ASSERT(offsetof(TF_ProfilerRegistrationParams, destroy_profiler) ==
                     48,
                 "TF_ProfilerRegistrationParams.destroy_profiler");
TFOCL_ABI_ASSERT(offsetof(TF_ProfilerRegistrationParams,
                          destroy_profiler_fns) == 56,
                 "TF_ProfilerRegistrationParams.destroy_profiler_fns");
TFOCL_ABI_ASSERT(TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE == 64,
                 "TF_ProfilerRegistrationParams size");
#endif

#ifdef __cplusplus
}
#endif

#endif /* TENSORFLOW_C_EXPERIMENTAL_PLUGGABLE_PROFILER_PLUGGABLE_PROFILER_H_ */
