/* tfocl plugin: run-time resolution of the TensorFlow C API (see tf_api.h).
 * The only file of the plugin that includes <dlfcn.h>. */
#include "tf_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ocl.h"

struct ocl_tf_api ocl_tf;

/* Where the functions may live, in lookup order. Inside TensorFlow every
 * TF_* kernel function is in libtensorflow_framework.so.2 (verified on the
 * 2.21 wheel); inside the host shim they are in libtfocl_host.so; anything
 * else (a static host, LD_PRELOAD) is found in the global scope. */
static const char *const tf_libraries[] = {
    "libtensorflow_framework.so.2",
    "libtfocl_host.so",
};

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;
static bool resolve_ok;
static bool in_tensorflow; /* TensorFlow's framework library is loaded */
static const char *resolve_missing;
static const char *grappler_missing;

static void *lookup(void *const *handles, size_t num_handles,
                    const char *symbol) {
  for (size_t i = 0; i < num_handles; i++) {
    void *fn = dlsym(handles[i], symbol);
    if (fn) return fn;
  }
  return dlsym(RTLD_DEFAULT, symbol);
}

/* dlsym returns a void *; POSIX guarantees it converts to a function
 * pointer, memcpy says so without type punning. */
static void set_fn(void *member, size_t size, void *fn) {
  memcpy(member, &fn, size);
}

static void resolve(void) {
  void *handles[sizeof tf_libraries / sizeof tf_libraries[0]];
  size_t num_handles = 0;

  /* NOLOAD: only libraries the process already has. The references taken
   * here are kept for the life of the process: the function pointers must
   * stay valid as long as the plugin may call them. */
  for (size_t i = 0; i < sizeof tf_libraries / sizeof tf_libraries[0]; i++) {
    void *handle = dlopen(tf_libraries[i], RTLD_NOW | RTLD_NOLOAD);
    if (handle) {
      OCL_TRACE("TF C API: using %s", tf_libraries[i]);
      in_tensorflow = in_tensorflow || i == 0;
      handles[num_handles++] = handle;
    }
  }

  resolve_ok = true;
#define RESOLVE_ONE(name, required)                                        \
  set_fn(&ocl_tf.name, sizeof ocl_tf.name,                                 \
         lookup(handles, num_handles, "TF_" #name));                       \
  if ((required) && !ocl_tf.name && resolve_ok) {                          \
    resolve_ok = false;                                                    \
    resolve_missing = "TF_" #name;                                         \
  }
  OCL_TF_API_FUNCTIONS(RESOLVE_ONE)
#undef RESOLVE_ONE

  /* Test hook: TFOCL_HIDE_TF_EXPERIMENTAL=1 forgets kernels_experimental.h,
   * so the host shim (which exports it) stands in for the TensorFlow 2.20
   * and 2.21 wheels (which do not, tensorflow#126374). */
  if (ocl_config()->hooks.hide_tf_experimental) {
    ocl_tf.AssignVariable = NULL;
    ocl_tf.AssignUpdateVariable = NULL;
    ocl_tf.MaybeLockVariableInputMutexesInOrder = NULL;
    ocl_tf.GetInputTensorFromVariable = NULL;
    ocl_tf.ReleaseVariableInputLockHolder = NULL;
    ocl_tf.OpKernelConstruction_GetAttrTensorShape = NULL;
    ocl_tf.AddNVariant = NULL;
    ocl_tf.ZerosLikeVariant = NULL;
    OCL_TRACE("TF C API: kernels_experimental.h hidden (test hook)");
  }

  /* TF_Version and the grappler helpers are in libtensorflow_cc.so.2
   * inside TensorFlow. */
  void *cc = dlopen("libtensorflow_cc.so.2", RTLD_NOW | RTLD_NOLOAD);
  void *version = cc ? dlsym(cc, "TF_Version") : NULL;
  if (!version) version = lookup(handles, num_handles, "TF_Version");
  set_fn(&ocl_tf.Version, sizeof ocl_tf.Version, version);
  set_fn(&ocl_tf.OpDeterminismRequired, sizeof ocl_tf.OpDeterminismRequired,
         in_tensorflow ? lookup(handles, num_handles,
                                "_ZN3tsl21OpDeterminismRequiredEv")
                       : NULL);
#define RESOLVE_GRAPPLER(name)                                             \
  {                                                                        \
    void *fn = cc ? dlsym(cc, "TF_" #name) : NULL;                         \
    if (!fn) fn = lookup(handles, num_handles, "TF_" #name);               \
    set_fn(&ocl_tf.name, sizeof ocl_tf.name, fn);                          \
    if (!fn && !grappler_missing) grappler_missing = "TF_" #name;          \
  }
  OCL_TF_GRAPPLER_FUNCTIONS(RESOLVE_GRAPPLER)
#undef RESOLVE_GRAPPLER
  OCL_TRACE("TF C API resolved: %s%s", resolve_ok ? "complete" : "missing ",
            resolve_ok ? "" : resolve_missing);
}

bool ocl_tf_in_tensorflow(void) {
  pthread_once(&resolve_once, resolve);
  return in_tensorflow;
}

bool ocl_tf_determinism_required(void) {
  pthread_once(&resolve_once, resolve);
  if (ocl_tf.OpDeterminismRequired) return ocl_tf.OpDeterminismRequired();
  const char *v = getenv("TF_DETERMINISTIC_OPS");
  return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0);
}

int ocl_tf_minor_version(void) {
  int major, minor;
  pthread_once(&resolve_once, resolve);
  const char *version = ocl_tf.Version ? ocl_tf.Version() : NULL;
  if (!version || sscanf(version, "%d.%d", &major, &minor) != 2) return -1;
  return minor;
}

bool ocl_tf_variant_callbacks_own_tensors(void) {
  int minor = ocl_tf_minor_version();
  return minor < 0 || minor < 22;
}

bool ocl_tf_has_variable_api(void) {
  pthread_once(&resolve_once, resolve);
  return ocl_tf.AssignUpdateVariable != NULL &&
         ocl_tf.MaybeLockVariableInputMutexesInOrder != NULL &&
         ocl_tf.GetInputTensorFromVariable != NULL &&
         ocl_tf.ReleaseVariableInputLockHolder != NULL;
}

const char *ocl_tf_grappler_missing(void) {
  pthread_once(&resolve_once, resolve);
  return grappler_missing;
}

bool ocl_tf_resolve(const char **missing) {
  pthread_once(&resolve_once, resolve);
  if (!resolve_ok && missing) *missing = resolve_missing;
  return resolve_ok;
}
