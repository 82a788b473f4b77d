/* The plugin's settings (kernels/config.h): the only file of the plugin and
 * its kernels that reads a TFOCL_* variable, apart from the graph pass's
 * per-graph switches (graph/init.c, see config.h) and the fault
 * injector's TFOCL_FAULT (a -Dfault-injection=true build only). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

static struct {
  pthread_mutex_t lock;
  atomic_bool loaded;
  struct ocl_config config;
} settings = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* What a load refused, traced once the settings (TFOCL_TRACE among them)
 * are in place. */
#define MAX_REFUSED 8
struct refused {
  int count;
  const char *name[MAX_REFUSED];
  char value[MAX_REFUSED][64];
  const char *why[MAX_REFUSED];
};

static void refuse(struct refused *r, const char *name, const char *value,
                   const char *why)
{
  if (r->count == MAX_REFUSED)
    return;
  r->name[r->count] = name;
  snprintf(r->value[r->count], sizeof r->value[0], "%s", value);
  r->why[r->count] = why;
  r->count++;
}

static bool is(const char *value, const char *want)
{
  return value != NULL && strcmp(value, want) == 0;
}

/* A list setting copied whole, or refused (as if unset) when it does not
 * fit. */
static bool copy_list(struct refused *r, const char *name, char *dst,
                      size_t size)
{
  const char *v = getenv(name);
  dst[0] = '\0';
  if (v == NULL)
    return false;
  if (strlen(v) >= size) {
    if (r != NULL)
      refuse(r, name, v, "too long");
    else
      OCL_TRACE("%s: ignoring a value of %zu characters", name, strlen(v));
    return false;
  }
  memcpy(dst, v, strlen(v) + 1);
  return true;
}

static void read_cache_base(struct ocl_config *c)
{
  const char *env = getenv("TFOCL_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int n = -1;

  c->cache_base[0] = '\0';
  c->cache_base_in_home = false;
  if (env != NULL) {
    if (env[0] != '\0' && strcmp(env, "off") != 0)
      n = snprintf(c->cache_base, sizeof c->cache_base, "%s", env);
  } else if (xdg != NULL && xdg[0] == '/') {
    n = snprintf(c->cache_base, sizeof c->cache_base, "%s/tfocl", xdg);
  } else if (home != NULL && home[0] != '\0') {
    n = snprintf(c->cache_base, sizeof c->cache_base, "%s/.cache/tfocl", home);
    c->cache_base_in_home = true;
  }
  if (n < 0 || (size_t)n >= sizeof c->cache_base)
    c->cache_base[0] = '\0';
}

static void read_settings(struct ocl_config *c, struct refused *r)
{
  const char *v;

  memset(c, 0, sizeof *c);
  c->has_visible_devices = copy_list(r, "TFOCL_VISIBLE_DEVICES",
                                     c->visible_devices,
                                     sizeof c->visible_devices);
  c->has_device_types = copy_list(r, "TFOCL_DEVICE_TYPES", c->device_types,
                                  sizeof c->device_types);
  c->context_per_device = is(getenv("TFOCL_CONTEXT_PER_DEVICE"), "1");

  v = getenv("TFOCL_KERNEL_STYLE");
  if (is(v, "cpu"))
    c->kernel_style = OCL_KERNEL_STYLE_CPU;
  else if (is(v, "gpu"))
    c->kernel_style = OCL_KERNEL_STYLE_GPU;
  else if (v != NULL && *v)
    refuse(r, "TFOCL_KERNEL_STYLE", v, "cpu or gpu");

  v = getenv("TFOCL_HOST_WAIT");
  if (is(v, "callback"))
    c->host_wait = OCL_HOST_WAIT_FORCE_CALLBACK;
  else if (is(v, "driver"))
    c->host_wait = OCL_HOST_WAIT_FORCE_DRIVER;
  else if (is(v, "poll"))
    c->host_wait = OCL_HOST_WAIT_FORCE_POLL;
  else if (v != NULL && *v)
    refuse(r, "TFOCL_HOST_WAIT", v, "callback, driver or poll");
  c->host_wait_spin_us = -1;
  v = getenv("TFOCL_HOST_WAIT_SPIN_US");
  if (v != NULL && *v) {
    char *end;
    unsigned long us = strtoul(v, &end, 10);
    if (*end == '\0' && us <= 1000000)
      c->host_wait_spin_us = (int)us;
    else
      refuse(r, "TFOCL_HOST_WAIT_SPIN_US", v, "0 to 1000000");
  }

  v = getenv("TFOCL_TRACE");
  c->trace = v != NULL && *v && strcmp(v, "0") != 0;

  read_cache_base(c);

  v = getenv("TFOCL_GEMM");
  if (is(v, "own"))
    c->gemm = OCL_GEMM_OWN;
  else if (is(v, "clblast"))
    c->gemm = OCL_GEMM_CLBLAST;
  else if (is(v, "blas"))
    c->gemm = OCL_GEMM_BLAS;
  else if (v != NULL && *v)
    refuse(r, "TFOCL_GEMM", v, "own, clblast or blas");
  c->gemm_tune = !is(getenv("TFOCL_GEMM_TUNE"), "0");
  v = getenv("TFOCL_GEMM_TILE");
  if (is(v, "128") || is(v, "64") || is(v, "32"))
    c->gemm_tile = atoi(v);
  else if (v != NULL && *v)
    refuse(r, "TFOCL_GEMM_TILE", v, "128, 64 or 32");
  v = getenv("TFOCL_CONV");
  c->conv_im2col = is(v, "im2col");
  if (v != NULL && *v && !c->conv_im2col && !is(v, "direct"))
    refuse(r, "TFOCL_CONV", v, "direct or im2col");

#if defined(TFOCL_TEST_HOOKS)
  c->hooks.index64 = is(getenv("TFOCL_INDEX_WIDTH"), "64");
  v = getenv("TFOCL_MAX_GROUPS_YZ");
  if (v != NULL && *v) {
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (*end == '\0' && n >= 1 && n < 65535)
      c->hooks.max_groups_yz = (size_t)n;
    else
      refuse(r, "TFOCL_MAX_GROUPS_YZ", v, "1 to 65534");
  }
  c->hooks.hide_tf_experimental = is(getenv("TFOCL_HIDE_TF_EXPERIMENTAL"),
                                     "1");
  c->hooks.keep_pocl_binaries = is(getenv("TFOCL_KEEP_POCL_BINARIES"), "1");
  c->hooks.hide_fp64 = is(getenv("TFOCL_HIDE_FP64"), "1");
#endif
}

const struct ocl_config *ocl_config(void)
{
  struct refused refused = {0};

  if (atomic_load_explicit(&settings.loaded, memory_order_acquire))
    return &settings.config;
  pthread_mutex_lock(&settings.lock);
  if (!atomic_load_explicit(&settings.loaded, memory_order_relaxed)) {
    read_settings(&settings.config, &refused);
    atomic_store_explicit(&settings.loaded, true, memory_order_release);
  }
  pthread_mutex_unlock(&settings.lock);
  for (int i = 0; i < refused.count; i++)
    OCL_TRACE("%s: ignoring \"%s\" (%s)", refused.name[i], refused.value[i],
              refused.why[i]);
  return &settings.config;
}

void ocl_config_forget(void)
{
  pthread_mutex_lock(&settings.lock);
  atomic_store_explicit(&settings.loaded, false, memory_order_release);
  pthread_mutex_unlock(&settings.lock);
}

void ocl_config_memory_limit(char *dst, size_t size)
{
  copy_list(NULL, "TFOCL_MEMORY_LIMIT_MB", dst, size);
}
