/* The host shim's side of the profiler plugin API
 * (c/experimental/pluggable_profiler/pluggable_profiler.cc): TF_InitProfiler
 * and its validation at load, and a profile taken as TensorFlow takes one
 * (start, stop, then collect_data_xspace for the size and for the bytes). */
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

static void validate(const TF_ProfilerRegistrationParams *params,
                     const TP_Profiler *profiler, const TP_ProfilerFns *fns,
                     TF_Status *status)
{
  SHIM_VALIDATE_STRUCT_SIZE(TF_ProfilerRegistrationParams, params,
                            TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE);
  SHIM_VALIDATE_MEMBER(TF_ProfilerRegistrationParams, params,
                       destroy_profiler);
  SHIM_VALIDATE_MEMBER(TF_ProfilerRegistrationParams, params,
                       destroy_profiler_fns);
  SHIM_VALIDATE_STRUCT_SIZE(TP_Profiler, profiler, TP_PROFILER_STRUCT_SIZE);
  SHIM_VALIDATE_MEMBER(TP_Profiler, profiler, type);
  shim_validate_device_type(profiler->type, status);
  if (!shim_ok(status))
    return;
  SHIM_VALIDATE_STRUCT_SIZE(TP_ProfilerFns, fns, TP_PROFILER_FNS_STRUCT_SIZE);
  SHIM_VALIDATE_MEMBER(TP_ProfilerFns, fns, start);
  SHIM_VALIDATE_MEMBER(TP_ProfilerFns, fns, stop);
  SHIM_VALIDATE_MEMBER(TP_ProfilerFns, fns, collect_data_xspace);
  shim_set_ok(status);
}

void shim_profiler_init(struct tfocl_plugin *p, shim_profiler_init_fn init,
                        TF_Status *status)
{
  /* Stack objects, as in TensorFlow: the plugin must not keep them. */
  TF_ProfilerRegistrationParams params = {
      .struct_size = TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE};
  TP_Profiler profiler = {.struct_size = TP_PROFILER_STRUCT_SIZE};
  TP_ProfilerFns fns = {.struct_size = TP_PROFILER_FNS_STRUCT_SIZE};
  params.major_version = TP_MAJOR;
  params.minor_version = TP_MINOR;
  params.patch_version = TP_PATCH;
  params.profiler = &profiler;
  params.profiler_fns = &fns;

  SHIM_TRACE("%s: TF_InitProfiler", p->path);
  shim_set_ok(status);
  init(&params, status);
  if (!shim_ok(status))
    return;
  validate(&params, &profiler, &fns, status);
  if (!shim_ok(status))
    return;
  p->profiler_device_type = strdup(profiler.type);
  if (p->profiler_device_type == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  p->profiler = profiler;
  p->profiler_fns = fns;
  p->destroy_profiler = params.destroy_profiler;
  p->destroy_profiler_fns = params.destroy_profiler_fns;
}

void shim_profiler_finish(struct tfocl_plugin *p)
{
  if (p == NULL || p->profiler_device_type == NULL)
    return;
  p->destroy_profiler_fns(&p->profiler_fns);
  p->destroy_profiler(&p->profiler);
  free(p->profiler_device_type);
  p->profiler_device_type = NULL;
}

const char *tfocl_plugin_profiler_device_type(const struct tfocl_plugin *p)
{
  return p != NULL ? p->profiler_device_type : NULL;
}

static bool has_profiler(const struct tfocl_plugin *p, TF_Status *status)
{
  if (p != NULL && p->profiler_device_type != NULL)
    return true;
  shim_set_status(status, TF_FAILED_PRECONDITION,
                  "the plugin registered no profiler (TF_InitProfiler)");
  return false;
}

void tfocl_profiler_start(struct tfocl_plugin *p, TF_Status *status)
{
  if (has_profiler(p, status))
    p->profiler_fns.start(&p->profiler, status);
}

void tfocl_profiler_stop(struct tfocl_plugin *p, TF_Status *status)
{
  if (has_profiler(p, status))
    p->profiler_fns.stop(&p->profiler, status);
}

void tfocl_profiler_collect(struct tfocl_plugin *p, void **out, size_t *size,
                            TF_Status *status)
{
  *out = NULL;
  *size = 0;
  if (!has_profiler(p, status))
    return;
  size_t needed = 0;
  p->profiler_fns.collect_data_xspace(&p->profiler, NULL, &needed, status);
  if (!shim_ok(status))
    return;
  uint8_t *buffer = malloc(needed ? needed : 1);
  if (buffer == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  size_t got = needed;
  p->profiler_fns.collect_data_xspace(&p->profiler, buffer, &got, status);
  if (!shim_ok(status)) {
    free(buffer);
    return;
  }
  if (got > needed) {
    free(buffer);
    shim_set_status(status, TF_INTERNAL,
                    "collect_data_xspace wrote %zu bytes into %zu", got,
                    needed);
    return;
  }
  *out = buffer;
  *size = got;
}
