/* Plugin loading: TensorFlow's RegisterPluggableDevicePlugin and
 * InitStreamExecutorPlugin, with a status instead of an abort, and the
 * reverse (~CPlatform) at unload. */
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

typedef void (*shim_se_init_fn)(SE_PlatformRegistrationParams *, TF_Status *);
typedef void (*shim_kernel_init_fn)(void);

/* Serialises loads and unloads: kernels registered while a plugin's init
 * runs are tagged with it, and platform names must stay unique. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tfocl_plugin *loaded_plugins;

/* dlsym gives a void *; the C standard has no direct conversion to a
 * function pointer, so go through memcpy (POSIX guarantees the sizes). */
static void *sym_as_fn(void *dl, const char *name, size_t fn_size,
                       void *fn_out)
{
  void *p = shim_dl_sym(dl, name);
  memcpy(fn_out, &p, fn_size);
  return p;
}

static bool env_flag(const char *name)
{
  const char *v = getenv(name);
  return v != NULL && strcmp(v, "1") == 0;
}

/* What has been created so far, for undoing a failed load in reverse. */
enum load_stage {
  STAGE_NONE,
  STAGE_PLATFORM,   /* SE_InitPlugin succeeded and set the destroy fns */
  STAGE_DEVICE_FNS, /* create_device_fns succeeded */
  STAGE_SE,         /* create_stream_executor succeeded */
  STAGE_DONE        /* also timer fns: the full ~CPlatform applies */
};

static void undo_platform(struct tfocl_plugin *p, enum load_stage stage)
{
  SP_PlatformFns *fns = &p->platform_fns;

  /* ~CPlatform's order, limited to what was created. */
  if (stage >= STAGE_DEVICE_FNS && fns->destroy_device_fns != NULL)
    fns->destroy_device_fns(&p->platform, &p->device_fns);
  if (stage >= STAGE_SE && fns->destroy_stream_executor != NULL)
    fns->destroy_stream_executor(&p->platform, &p->se);
  if (stage >= STAGE_DONE && fns->destroy_timer_fns != NULL)
    fns->destroy_timer_fns(&p->platform, &p->timer_fns);
  if (stage >= STAGE_PLATFORM) {
    if (p->destroy_platform != NULL)
      p->destroy_platform(&p->platform);
    if (p->destroy_platform_fns != NULL)
      p->destroy_platform_fns(&p->platform_fns);
  }
}

static void plugin_free(struct tfocl_plugin *p)
{
  if (p == NULL)
    return;
  pthread_mutex_destroy(&p->lock);
  free(p->devices);
  free(p->platform_name);
  free(p->device_type);
  free(p->graph_device_type);
  free(p->profiler_device_type);
  free(p->path);
  free(p);
}

/* SE_InitPlugin and the validation that follows (InitStreamExecutorPlugin).
 * On failure undoes its own work and leaves *stage at STAGE_NONE. */
static void init_stream_executor(struct tfocl_plugin *p, shim_se_init_fn init,
                                 TF_Status *status)
{
  /* Temporaries, as TensorFlow's stack objects: the plugin must not keep
   * these pointers; later calls get the host's copies in *p. */
  SE_PlatformRegistrationParams params = {
      .struct_size = SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE};
  SP_Platform platform = {.struct_size = SP_PLATFORM_STRUCT_SIZE};
  SP_PlatformFns platform_fns = {.struct_size = SP_PLATFORM_FNS_STRUCT_SIZE};
  SE_CreateDeviceFnsParams dfn_params = {
      .struct_size = SE_CREATE_DEVICE_FNS_PARAMS_STRUCT_SIZE};
  SE_CreateStreamExecutorParams se_params = {
      .struct_size = SE_CREATE_STREAM_EXECUTOR_PARAMS_STRUCT_SIZE};
  enum load_stage stage = STAGE_NONE;

  params.major_version = SE_MAJOR;
  params.minor_version = SE_MINOR;
  params.patch_version = SE_PATCH;
  params.platform = &platform;
  params.platform_fns = &platform_fns;

  SHIM_TRACE("%s: SE_InitPlugin", p->path);
  shim_set_ok(status);
  init(&params, status);
  /* The plugin's own error comes back as is; it cleaned up after itself. */
  if (!shim_ok(status))
    return;
  p->platform = platform;
  p->platform_fns = platform_fns;
  p->destroy_platform = params.destroy_platform;
  p->destroy_platform_fns = params.destroy_platform_fns;
  stage = STAGE_PLATFORM;

  shim_validate_registration_params(&params, status);
  if (!shim_ok(status))
    goto fail;
  shim_validate_platform(&p->platform, status);
  if (!shim_ok(status))
    goto fail;
  shim_validate_platform_fns(&p->platform_fns, status);
  if (!shim_ok(status))
    goto fail;

  for (struct tfocl_plugin *q = loaded_plugins; q != NULL; q = q->next) {
    if (q->has_se && strcmp(q->platform_name, p->platform.name) == 0) {
      /* TensorFlow's PlatformManager refuses (and TF_CHECK_OK aborts). */
      shim_set_status(status, TF_ALREADY_EXISTS,
                      "platform is already registered with name: \"%s\" "
                      "(by %s)",
                      p->platform.name, q->path);
      goto fail;
    }
  }
  p->platform_name = strdup(p->platform.name);
  p->device_type = strdup(p->platform.type);
  if (p->platform_name == NULL || p->device_type == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }

  p->device_fns = (SP_DeviceFns){.struct_size = SP_DEVICE_FNS_STRUCT_SIZE};
  dfn_params.device_fns = &p->device_fns;
  p->platform_fns.create_device_fns(&p->platform, &dfn_params, status);
  if (!shim_ok(status))
    goto fail;
  stage = STAGE_DEVICE_FNS;
  shim_validate_device_fns(&p->device_fns, status);
  if (!shim_ok(status))
    goto fail;

  p->se = (SP_StreamExecutor){.struct_size = SP_STREAMEXECUTOR_STRUCT_SIZE};
  se_params.stream_executor = &p->se;
  p->platform_fns.create_stream_executor(&p->platform, &se_params, status);
  if (!shim_ok(status))
    goto fail;
  stage = STAGE_SE;
  shim_validate_stream_executor(&p->se, &p->platform, status);
  if (!shim_ok(status))
    goto fail;

  /* TensorFlow never calls create_timer_fns but destroys a zeroed table. */
  p->timer_fns = (SP_TimerFns){.struct_size = SP_TIMER_FNS_STRUCT_SIZE};
  p->has_se = true;
  return;

fail:
  undo_platform(p, stage);
}

struct tfocl_plugin *tfocl_plugin_load(const char *path, TF_Status *status)
{
  struct tfocl_plugin *p;
  shim_se_init_fn se_init = NULL;
  shim_kernel_init_fn kernel_init = NULL;
  shim_graph_init_fn graph_init = NULL;
  shim_profiler_init_fn profiler_init = NULL;

  if (path == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT, "plugin path is NULL");
    return NULL;
  }
  p = calloc(1, sizeof(*p));
  if (p == NULL || (p->path = strdup(path)) == NULL) {
    free(p);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  pthread_mutex_init(&p->lock, NULL);

  pthread_mutex_lock(&load_lock);
  p->dl = shim_dl_open(path, status);
  if (p->dl == NULL)
    goto fail;

  /* Every entry point is optional, as in RegisterPluggableDevicePlugin. */
  sym_as_fn(p->dl, "SE_InitPlugin", sizeof(se_init), &se_init);
  sym_as_fn(p->dl, "TF_InitKernel", sizeof(kernel_init), &kernel_init);
  sym_as_fn(p->dl, "TF_InitGraph", sizeof(graph_init), &graph_init);
  sym_as_fn(p->dl, "TF_InitProfiler", sizeof(profiler_init), &profiler_init);

  shim_registry_set_loading_plugin(p);
  if (se_init != NULL) {
    init_stream_executor(p, se_init, status);
    if (!shim_ok(status))
      goto fail_registered;
  }
  if (kernel_init != NULL) {
    SHIM_TRACE("%s: TF_InitKernel", path);
    kernel_init();
  }
  /* TensorFlow's order: device, kernels, graph (then the profiler). A
   * failing graph module fails the whole load. */
  if (graph_init != NULL) {
    shim_graph_init(p, graph_init, status);
    if (!shim_ok(status)) {
      if (p->has_se)
        undo_platform(p, STAGE_DONE);
      goto fail_registered;
    }
  }
  if (profiler_init != NULL) {
    shim_profiler_init(p, profiler_init, status);
    if (!shim_ok(status)) {
      if (p->has_se)
        undo_platform(p, STAGE_DONE);
      goto fail_registered;
    }
  }
  shim_registry_set_loading_plugin(NULL);

  p->next = loaded_plugins;
  loaded_plugins = p;
  pthread_mutex_unlock(&load_lock);
  shim_set_ok(status);
  return p;

fail_registered:
  /* SE_InitPlugin may have registered kernels: they must not outlive the
   * code they point into. */
  shim_registry_set_loading_plugin(NULL);
  shim_registry_remove_plugin(p);
  if (!env_flag("TFOCL_NO_DLCLOSE"))
    shim_dl_close(p->dl);
fail:
  pthread_mutex_unlock(&load_lock);
  plugin_free(p);
  return NULL;
}

void tfocl_plugin_unload(struct tfocl_plugin *p)
{
  if (p == NULL)
    return;
  /* Devices left open are closed here rather than left pointing into an
   * unloaded library. */
  while (p->num_devices > 0)
    tfocl_device_close(p->devices[p->num_devices - 1]);

  pthread_mutex_lock(&load_lock);
  for (struct tfocl_plugin **q = &loaded_plugins; *q != NULL;
       q = &(*q)->next) {
    if (*q == p) {
      *q = p->next;
      break;
    }
  }
  shim_registry_remove_plugin(p);
  shim_profiler_finish(p);
  if (p->has_se)
    undo_platform(p, STAGE_DONE);
  if (!env_flag("TFOCL_NO_DLCLOSE"))
    shim_dl_close(p->dl);
  pthread_mutex_unlock(&load_lock);
  plugin_free(p);
}

struct tfocl_plugin *shim_loaded_plugins(void) { return loaded_plugins; }

const char *tfocl_plugin_path(const struct tfocl_plugin *p)
{
  return p != NULL ? p->path : NULL;
}

bool tfocl_plugin_has_devices(const struct tfocl_plugin *p)
{
  return p != NULL && p->has_se;
}

const SP_Platform *tfocl_plugin_platform(const struct tfocl_plugin *p)
{
  return tfocl_plugin_has_devices(p) ? &p->platform : NULL;
}

const SP_PlatformFns *tfocl_plugin_platform_fns(const struct tfocl_plugin *p)
{
  return tfocl_plugin_has_devices(p) ? &p->platform_fns : NULL;
}

const SP_DeviceFns *tfocl_plugin_device_fns(const struct tfocl_plugin *p)
{
  return tfocl_plugin_has_devices(p) ? &p->device_fns : NULL;
}

const SP_StreamExecutor *tfocl_plugin_stream_executor(
    const struct tfocl_plugin *p)
{
  return tfocl_plugin_has_devices(p) ? &p->se : NULL;
}

int tfocl_plugin_device_count(struct tfocl_plugin *p, TF_Status *status)
{
  int count = 0;

  if (!tfocl_plugin_has_devices(p)) {
    shim_set_ok(status);
    return 0;
  }
  shim_set_ok(status);
  p->platform_fns.get_device_count(&p->platform, &count, status);
  if (!shim_ok(status))
    return 0;
  return count < 0 ? 0 : count;
}

void shim_plugin_forget_device(struct tfocl_plugin *p, struct tfocl_device *d)
{
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < p->num_devices; i++) {
    if (p->devices[i] == d) {
      p->devices[i] = p->devices[--p->num_devices];
      break;
    }
  }
  pthread_mutex_unlock(&p->lock);
}
