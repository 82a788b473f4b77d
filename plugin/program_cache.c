/* tfocl plugin: OpenCL programs, built lazily once per cl_context and
 * kernel family, kept until the context goes (destroy_platform).
 *
 * A family is built for every device of the context at once. The cache lock
 * only guards the list; each entry has its own lock held while it builds,
 * so families build in parallel and a second caller of the same family
 * waits for the first build instead of starting another. A failed build is
 * remembered with its log (the source is constant, a retry cannot help),
 * unless the driver ran out of memory or resources: that failure is
 * reported and the next call builds again.
 *
 * Every program is built with -cl-fp32-correctly-rounded-divide-sqrt where
 * every device of the context supports it: OpenCL C lets float division
 * err by 2.5 ulp and sqrt by 3 (NVIDIA's compiler takes that freedom),
 * while TensorFlow's CPU kernels divide as IEEE does, and FloorDiv's
 * floor(a / b) is off by one wherever a quotient that should be an integer
 * comes out just below it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_dir.h"
#include "ocl.h"

struct ocl_program {
  char *family;
  char *options;
  pthread_mutex_t lock;
  bool built;
  cl_program program; /* owned; NULL if the build failed */
  char *error;        /* the failure message, with the build log */
  struct ocl_program *next;
};

struct ocl_program_cache {
  pthread_mutex_t lock;
  struct ocl_program *programs;
  /* Where program binaries are kept between processes
   * (program_binaries.c), chosen when the context's first program is
   * asked for; "" when none is. */
  char binaries_dir[4096];
};

void ocl_program_cache_destroy(struct ocl_program_cache *cache) {
  if (!cache) return;
  while (cache->programs) {
    struct ocl_program *p = cache->programs;
    cache->programs = p->next;
    if (p->program) clReleaseProgram(p->program);
    pthread_mutex_destroy(&p->lock);
    free(p->family);
    free(p->options);
    free(p->error);
    free(p);
  }
  pthread_mutex_destroy(&cache->lock);
  free(cache);
}

/* Whether program binaries are worth keeping on this platform. Not on
 * PoCL: it keeps its own cache of compiled kernels (POCL_CACHE_DIR), and
 * handing out a program's binary makes it compile every kernel of the
 * program at once (the matmul family's first MatMul took 68 s instead of
 * 5 with its cache off). TFOCL_KEEP_POCL_BINARIES=1 (a test hook) keeps
 * them there too. */
static bool keeps_binaries(cl_platform_id platform) {
  char name[128] = "";
  if (ocl_config()->hooks.keep_pocl_binaries) return true;
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
  return strstr(name, "Portable Computing Language") == NULL;
}

static struct ocl_program_cache *cache_of(struct ocl_context *ctx) {
  struct ocl_program_cache *cache;

  pthread_mutex_lock(&ctx->lock);
  if (!ctx->programs) {
    ctx->programs = calloc(1, sizeof *ctx->programs);
    if (ctx->programs) {
      pthread_mutex_init(&ctx->programs->lock, NULL);
      if (keeps_binaries(ctx->platform))
        ocl_cache_subdir("programs", ctx->programs->binaries_dir,
                         sizeof ctx->programs->binaries_dir);
    }
  }
  cache = ctx->programs;
  pthread_mutex_unlock(&ctx->lock);
  return cache;
}

static struct ocl_program *entry_of(struct ocl_program_cache *cache,
                                    const char *family, const char *options) {
  struct ocl_program *p;

  pthread_mutex_lock(&cache->lock);
  for (p = cache->programs; p; p = p->next)
    if (strcmp(p->family, family) == 0 && strcmp(p->options, options) == 0)
      goto out;
  p = calloc(1, sizeof *p);
  if (!p) goto out;
  p->family = strdup(family);
  p->options = strdup(options);
  if (!p->family || !p->options) {
    free(p->family);
    free(p->options);
    free(p);
    p = NULL;
    goto out;
  }
  pthread_mutex_init(&p->lock, NULL);
  p->next = cache->programs;
  cache->programs = p;
out:
  pthread_mutex_unlock(&cache->lock);
  return p;
}

/* Out of memory or resources: the next attempt may succeed. */
static bool transient(cl_int err) {
  return ocl_cl_error_code(err) == TF_RESOURCE_EXHAUSTED;
}

#define EXACT_DIVISION " -cl-fp32-correctly-rounded-divide-sqrt"

/* Whether every device of ctx divides and takes square roots correctly
 * rounded when asked (CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT). */
static bool exact_division(const struct ocl_context *ctx) {
  for (cl_uint i = 0; i < ctx->num_devices; i++) {
    cl_device_fp_config config = 0;
    if (clGetDeviceInfo(ctx->devices[i], CL_DEVICE_SINGLE_FP_CONFIG,
                        sizeof config, &config, NULL) != CL_SUCCESS ||
        !(config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT))
      return false;
  }
  return ctx->num_devices > 0;
}

/* Builds p; on failure p->error holds the message. Returns false when the
 * failure is transient (not to be remembered). */
static bool build(struct ocl_device *dev, struct ocl_program *p,
                  const char *source, const char *binaries_dir) {
  cl_context context = ocl_device_context(dev);
  struct ocl_context *ctx = dev->ctx;
  char *log = NULL, header[256], *options;
  size_t log_size = 0, length;
  cl_int err;

  length = strlen(p->options) + sizeof EXACT_DIVISION;
  options = malloc(length);
  if (!options) {
    snprintf(header, sizeof header, "clBuildProgram(%s): out of memory",
             p->family);
    p->error = strdup(header);
    return false;
  }
  snprintf(options, length, "%s%s", p->options,
           exact_division(ctx) ? EXACT_DIVISION : "");
  if (binaries_dir[0] != '\0') {
    p->program = ocl_program_binaries_load(
        binaries_dir, context, ctx->platform, ctx->devices, ctx->num_devices,
        p->family, options, source);
    if (p->program) {
      OCL_TRACE("built kernel family %s (%s) from kept binaries", p->family,
                options);
      free(options);
      return true;
    }
  }
  p->program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  if (err != CL_SUCCESS) {
    snprintf(header, sizeof header, "clCreateProgramWithSource(%s): %s (%d)",
             p->family, ocl_cl_error_name(err), (int)err);
    p->error = strdup(header);
    p->program = NULL;
    free(options);
    return !transient(err);
  }
  err = clBuildProgram(p->program, 0, NULL, options, NULL, NULL);
  if (err == CL_SUCCESS) {
    OCL_TRACE("built kernel family %s (%s)", p->family, options);
    if (binaries_dir[0] != '\0')
      ocl_program_binaries_save(binaries_dir, p->program, ctx->platform,
                                p->family, options, source);
    free(options);
    return true;
  }
  free(options);
  snprintf(header, sizeof header, "clBuildProgram(%s): %s (%d); build log:\n",
           p->family, ocl_cl_error_name(err), (int)err);
  if (clGetProgramBuildInfo(p->program, dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL,
                            &log_size) == CL_SUCCESS &&
      (log = calloc(1, log_size + 1)) != NULL)
    clGetProgramBuildInfo(p->program, dev->id, CL_PROGRAM_BUILD_LOG, log_size,
                          log, NULL);
  length = strlen(header) + (log ? strlen(log) : 0) + 1;
  p->error = malloc(length);
  if (p->error) snprintf(p->error, length, "%s%s", header, log ? log : "");
  free(log);
  clReleaseProgram(p->program);
  p->program = NULL;
  return !transient(err);
}

cl_program ocl_program_get(struct ocl_device *dev, const char *family_name,
                           const char *source, const char *build_options,
                           TF_Status *status) {
  struct ocl_program_cache *cache;
  struct ocl_program *p;
  cl_program program;

  ocl_set_ok(status);
  if (!dev || !atomic_load_explicit(&dev->ready, memory_order_acquire) ||
      !family_name || !source) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "ocl_program_get: no device, family or source");
    return NULL;
  }
  cache = cache_of(dev->ctx);
  p = cache ? entry_of(cache, family_name, build_options ? build_options : "")
            : NULL;
  if (!p) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                   "ocl_program_get(%s): out of memory", family_name);
    return NULL;
  }
  pthread_mutex_lock(&p->lock);
  bool retry_later = false;
  if (!p->built) {
    retry_later = !build(dev, p, source, cache->binaries_dir);
    p->built = !retry_later;
  }
  program = p->program;
  /* Not through ocl_set_status: the whole build log goes in. */
  if (!program && status)
    ocl_tf.SetStatus(status,
                     retry_later ? TF_RESOURCE_EXHAUSTED : TF_INTERNAL,
                     p->error ? p->error : "program build failed");
  if (retry_later) {
    free(p->error);
    p->error = NULL;
  }
  pthread_mutex_unlock(&p->lock);
  return program;
}
