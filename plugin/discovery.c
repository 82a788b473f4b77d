/* tfocl plugin: finding the OpenCL devices, once, lazily.
 *
 * Every device of every platform the ICD loader offers, ordered GPUs first,
 * then accelerators (and custom devices), then CPUs, each group in loader
 * order. TFOCL_VISIBLE_DEVICES="i,j,..." picks indices of that ordered list
 * (in the order given, like CUDA_VISIBLE_DEVICES; "" = none; parsing stops
 * at the first entry that is not a valid index). TFOCL_DEVICE_TYPES="gpu,cpu,
 * accelerator" then keeps only those types. One cl_context per platform
 * holds that platform's visible devices (so device-to-device copies work),
 * made when its first device opens; TFOCL_CONTEXT_PER_DEVICE=1 gives each
 * device a cl_context of its own instead, as two platforms would (what the
 * cross-context paths are tested with, on one platform). */
#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <CL/cl_ext.h>

#include "ocl.h"
#include "profiler/profiler.h"

static struct {
  pthread_mutex_t lock;
  bool enumerated;
  bool disabled;
  int count;
  struct ocl_device *devices;   /* count entries; addresses never change */
  struct ocl_context *contexts; /* num_contexts entries */
  int num_contexts;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct candidate {
  cl_platform_id platform;
  cl_device_id id;
  cl_device_type type;
  int rank;
};

static int type_rank(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return 0;
  if (type & CL_DEVICE_TYPE_CPU) return 2;
  return 1; /* accelerator, custom */
}

/* Whether TFOCL_DEVICE_TYPES admits `type` (unset or empty: all). */
static bool type_wanted(const char *types, cl_device_type type) {
  const char *p = types;

  if (!types || !*types) return true;
  while (*p) {
    size_t n = strcspn(p, ",");
    if ((n == 3 && strncasecmp(p, "gpu", 3) == 0 && (type & CL_DEVICE_TYPE_GPU)) ||
        (n == 3 && strncasecmp(p, "cpu", 3) == 0 && (type & CL_DEVICE_TYPE_CPU)) ||
        (n == 11 && strncasecmp(p, "accelerator", 11) == 0 &&
         (type & (CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM))))
      return true;
    p += n;
    if (*p == ',') p++;
  }
  return false;
}

/* Applies TFOCL_VISIBLE_DEVICES to the ordered list; returns the count kept
 * (in `order`, as indices into `all`). */
static int select_visible(int num_all, int *order) {
  const struct ocl_config *config = ocl_config();
  const char *v = config->visible_devices;
  int n = 0;

  if (!config->has_visible_devices) {
    for (int i = 0; i < num_all; i++) order[n++] = i;
    return n;
  }
  while (*v) {
    char *end;
    long idx;
    bool seen = false;

    while (isspace((unsigned char)*v)) v++;
    idx = strtol(v, &end, 10);
    if (end == v || idx < 0 || idx >= num_all) {
      OCL_TRACE("TFOCL_VISIBLE_DEVICES: stopping at \"%s\"", v);
      break;
    }
    for (int i = 0; i < n; i++) seen |= order[i] == (int)idx;
    if (!seen) order[n++] = (int)idx;
    v = end;
    while (isspace((unsigned char)*v)) v++;
    if (*v != ',') break;
    v++;
  }
  return n;
}

static void read_info(cl_device_id id, cl_device_info what, void *value,
                      size_t size) {
  if (clGetDeviceInfo(id, what, size, value, NULL) != CL_SUCCESS)
    memset(value, 0, size);
}

static bool has_extension(const char *extensions, const char *name) {
  size_t n = strlen(name);
  for (const char *p = extensions; (p = strstr(p, name)) != NULL; p += n)
    if ((p == extensions || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
      return true;
  return false;
}

/* TFOCL_MEMORY_LIMIT_MB caps the memory each device offers (as ITEX's
 * ITEX_LIMIT_MEMORY_SIZE_IN_MB does): for sharing a GPU with other
 * processes, and for tests that want large allocations to fail fast. "N"
 * caps every device, "N0,N1,..." device i at Ni (an empty entry: no cap).
 * Read when the device is opened (TensorFlow's context initialisation, not
 * `import tensorflow`), so that the tfocl Python package can set it from
 * tf.config.set_logical_device_configuration on TensorFlows whose core
 * ignores a PluggableDevice's virtual devices. Returns the cap in MiB, 0 for
 * none. */
static unsigned long long memory_limit_mib(int ordinal) {
  char v[OCL_CONFIG_LIST_MAX];
  const char *entry = v;
  unsigned long long mib;
  bool per_device;
  char *end;

  ocl_config_memory_limit(v, sizeof v);
  if (!*v) return 0;
  per_device = strchr(v, ',') != NULL;
  for (int i = 0; per_device && i < ordinal; i++) {
    entry = strchr(entry, ',');
    if (!entry) return 0; /* fewer entries than devices */
    entry++;
  }
  if (*entry == ',' || *entry == '\0') return 0;
  errno = 0;
  mib = strtoull(entry, &end, 10);
  if (errno || end == entry || (*end && !(per_device && *end == ',')) ||
      mib == 0 || mib > (UINT64_MAX >> 20)) {
    OCL_TRACE("TFOCL_MEMORY_LIMIT_MB: ignoring \"%s\" for device %d", v,
              ordinal);
    return 0;
  }
  return mib;
}

static void apply_memory_limit(struct ocl_device *dev) {
  unsigned long long mib = memory_limit_mib(dev->ordinal);

  if (mib == 0) return;
  dev->memory_limit = mib << 20;
  if (dev->memory_limit < dev->global_mem_size)
    dev->global_mem_size = dev->memory_limit;
  if (dev->max_alloc_size > dev->global_mem_size)
    dev->max_alloc_size = dev->global_mem_size;
}

static void describe_for_kernels(struct ocl_device *dev) {
  struct ocl_device_info *info = &dev->info;
  cl_device_local_mem_type local_type = CL_GLOBAL;
  enum ocl_kernel_style style = ocl_config()->kernel_style;

  info->ordinal = dev->ordinal;
  info->is_cpu = (dev->type & CL_DEVICE_TYPE_CPU) != 0;
  /* TFOCL_KERNEL_STYLE: the suites run both shapes on PoCL. */
  info->cpu_shape = style == OCL_KERNEL_STYLE_BY_DEVICE
                        ? info->is_cpu
                        : style == OCL_KERNEL_STYLE_CPU;
  info->flat_runs =
      info->cpu_shape && (dev->ctx->is_pocl || dev->ctx->is_oclgrind);
  info->has_fp16 = dev->has_fp16;
  info->has_fp64 = dev->has_fp64;
  info->compute_units = dev->compute_units ? dev->compute_units : 1;
  info->max_work_group_size =
      dev->max_work_group_size ? dev->max_work_group_size : 1;
  read_info(dev->id, CL_DEVICE_LOCAL_MEM_SIZE, &info->local_mem_size,
            sizeof info->local_mem_size);
  read_info(dev->id, CL_DEVICE_LOCAL_MEM_TYPE, &local_type, sizeof local_type);
  info->dedicated_local_mem = local_type == CL_LOCAL;
}

static void describe(struct ocl_device *dev) {
  char *extensions = NULL;
  size_t size = 0;
  cl_bool unified = CL_FALSE;
  cl_device_fp_config fp64 = 0;

  read_info(dev->id, CL_DEVICE_TYPE, &dev->type, sizeof dev->type);
  read_info(dev->id, CL_DEVICE_NAME, dev->name, sizeof dev->name - 1);
  read_info(dev->id, CL_DEVICE_VENDOR, dev->vendor, sizeof dev->vendor - 1);
  read_info(dev->id, CL_DEVICE_GLOBAL_MEM_SIZE, &dev->global_mem_size,
            sizeof dev->global_mem_size);
  read_info(dev->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &dev->max_alloc_size,
            sizeof dev->max_alloc_size);
  read_info(dev->id, CL_DEVICE_MAX_COMPUTE_UNITS, &dev->compute_units,
            sizeof dev->compute_units);
  read_info(dev->id, CL_DEVICE_MAX_CLOCK_FREQUENCY, &dev->max_clock_mhz,
            sizeof dev->max_clock_mhz);
  read_info(dev->id, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
            &dev->vector_width_float, sizeof dev->vector_width_float);
  read_info(dev->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, &dev->max_work_group_size,
            sizeof dev->max_work_group_size);
  /* Deprecated in 2.0 but still answered by every driver we know; a driver
   * that refuses reads as "no". */
  read_info(dev->id, CL_DEVICE_HOST_UNIFIED_MEMORY, &unified, sizeof unified);
  read_info(dev->id, CL_DEVICE_DOUBLE_FP_CONFIG, &fp64, sizeof fp64);
  dev->host_unified_memory = unified == CL_TRUE;

  if (clGetDeviceInfo(dev->id, CL_DEVICE_EXTENSIONS, 0, NULL, &size) ==
          CL_SUCCESS &&
      (extensions = calloc(1, size + 1)) != NULL &&
      clGetDeviceInfo(dev->id, CL_DEVICE_EXTENSIONS, size, extensions, NULL) ==
          CL_SUCCESS) {
    dev->has_fp16 = has_extension(extensions, "cl_khr_fp16");
    /* TFOCL_HIDE_FP64 (a test hook): as Intel's and many mobile GPUs. */
    dev->has_fp64 = (fp64 != 0 || has_extension(extensions, "cl_khr_fp64")) &&
                    !ocl_config()->hooks.hide_fp64;
    dev->has_priority_hints =
        has_extension(extensions, "cl_khr_priority_hints");
#ifdef CL_DEVICE_PCI_BUS_INFO_KHR
    if (has_extension(extensions, "cl_khr_pci_bus_info")) {
      cl_device_pci_bus_info_khr pci;
      if (clGetDeviceInfo(dev->id, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, &pci,
                          NULL) == CL_SUCCESS)
        snprintf(dev->pci_bus_id, sizeof dev->pci_bus_id, "%04x:%02x:%02x.%x",
                 pci.pci_domain & 0xffffu, pci.pci_bus & 0xffu,
                 pci.pci_device & 0x1fu, pci.pci_function & 0x7u);
    }
#endif
  }
  free(extensions);
  describe_for_kernels(dev);
}

/* Fills g from the ICD loader. Returns a reason when no device could be
 * listed because of the driver (not because of the filters). */
static const char *enumerate(void) {
  cl_uint num_platforms = 0, total = 0;
  cl_platform_id *platforms = NULL;
  struct candidate *all = NULL;
  int *order = NULL, num_all = 0, kept = 0;
  const struct ocl_config *config = ocl_config();
  const char *types = config->has_device_types ? config->device_types : NULL;
  bool context_per_device = config->context_per_device;
  const char *why = NULL;
  cl_int err;

  ocl_icd_preload();
  err = clGetPlatformIDs(0, NULL, &num_platforms);
  if (err != CL_SUCCESS || num_platforms == 0) {
    why = "no OpenCL platform (the ICD loader found no driver)";
    goto out;
  }
  platforms = calloc(num_platforms, sizeof *platforms);
  if (!platforms) goto out;
  if (clGetPlatformIDs(num_platforms, platforms, NULL) != CL_SUCCESS) {
    why = "clGetPlatformIDs failed";
    goto out;
  }
  for (cl_uint p = 0; p < num_platforms; p++) {
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n) == CL_SUCCESS)
      total += n;
  }
  if (total == 0) {
    why = "no OpenCL device on any platform";
    goto out;
  }
  all = calloc(total, sizeof *all);
  order = calloc(total, sizeof *order);
  if (!all || !order) goto out;
  for (cl_uint p = 0; p < num_platforms && (cl_uint)num_all < total; p++) {
    cl_uint n = 0;
    cl_device_id ids[64];
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 64, ids, &n) !=
        CL_SUCCESS)
      continue;
    if (n > 64) n = 64;
    for (cl_uint d = 0; d < n && (cl_uint)num_all < total; d++) {
      cl_bool available = CL_FALSE;
      struct candidate c = {.platform = platforms[p], .id = ids[d]};
      read_info(ids[d], CL_DEVICE_AVAILABLE, &available, sizeof available);
      read_info(ids[d], CL_DEVICE_TYPE, &c.type, sizeof c.type);
      if (!available) continue;
      c.rank = type_rank(c.type);
      all[num_all++] = c;
    }
  }
  /* Stable insertion sort by rank keeps loader order within a rank. */
  for (int i = 1; i < num_all; i++) {
    struct candidate c = all[i];
    int j = i;
    for (; j > 0 && all[j - 1].rank > c.rank; j--) all[j] = all[j - 1];
    all[j] = c;
  }
  kept = select_visible(num_all, order);
  g.devices = calloc(kept ? (size_t)kept : 1, sizeof *g.devices);
  g.contexts = calloc(kept ? (size_t)kept : 1, sizeof *g.contexts);
  if (!g.devices || !g.contexts) goto out;
  for (int k = 0; k < kept; k++) {
    const struct candidate *c = &all[order[k]];
    struct ocl_device *dev;
    struct ocl_context *ctx = NULL;

    if (!type_wanted(types, c->type)) continue;
    for (int i = 0; i < g.num_contexts && !context_per_device; i++)
      if (g.contexts[i].platform == c->platform) ctx = &g.contexts[i];
    if (!ctx) {
      ctx = &g.contexts[g.num_contexts++];
      ctx->platform = c->platform;
      char pname[64] = "";
      clGetPlatformInfo(c->platform, CL_PLATFORM_NAME, sizeof pname - 1, pname,
                        NULL);
      ctx->is_oclgrind = strstr(pname, "Oclgrind") != NULL;
      ctx->is_pocl = strstr(pname, "Portable Computing Language") != NULL;
      ctx->devices = calloc(kept, sizeof *ctx->devices);
      pthread_mutex_init(&ctx->lock, NULL);
    }
    if (!ctx->devices) continue;
    ctx->devices[ctx->num_devices++] = c->id;

    dev = &g.devices[g.count];
    dev->ordinal = g.count++;
    dev->id = c->id;
    dev->ctx = ctx;
    pthread_mutex_init(&dev->init_lock, NULL);
    pthread_mutex_init(&dev->mem_lock, NULL);
    pthread_mutex_init(&dev->streams_lock, NULL);
    describe(dev);
    OCL_TRACE("device %d: %s (%s)", dev->ordinal, dev->name, dev->vendor);
  }
out:
  free(order);
  free(all);
  free(platforms);
  return why;
}

static void ensure_enumerated(void) {
  const char *why = NULL;

  pthread_mutex_lock(&g.lock);
  if (!g.enumerated) {
    g.enumerated = true;
    if (!g.disabled) why = enumerate();
  }
  pthread_mutex_unlock(&g.lock);
  if (why) ocl_report_unusable("0 OpenCL devices: %s", why);
}

int ocl_device_count(void) {
  ensure_enumerated();
  return g.disabled ? 0 : g.count;
}

struct ocl_device *ocl_device_get(int ordinal) {
  ensure_enumerated();
  if (g.disabled || ordinal < 0 || ordinal >= g.count) return NULL;
  return &g.devices[ordinal];
}

void ocl_devices_disable(void) {
  pthread_mutex_lock(&g.lock);
  g.disabled = true;
  pthread_mutex_unlock(&g.lock);
}

bool ocl_device_open(struct ocl_device *dev, TF_Status *status) {
  struct ocl_context *ctx = dev->ctx;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   (cl_context_properties)ctx->platform, 0};
  cl_int err = CL_SUCCESS;
  bool ok = false;

  pthread_mutex_lock(&dev->init_lock);
  if (atomic_load_explicit(&dev->ready, memory_order_acquire)) {
    pthread_mutex_unlock(&dev->init_lock);
    return true;
  }
  pthread_mutex_lock(&ctx->lock);
  if (!ctx->context)
    ctx->context = clCreateContext(props, ctx->num_devices, ctx->devices, NULL,
                                   NULL, &err);
  pthread_mutex_unlock(&ctx->lock);
  OCL_CHECK(err, status, "clCreateContext");
  /* Profiling on (every queue of the plugin): a profile can start at any
   * time (plugin/profiler). */
  const cl_queue_properties profiled[] = {CL_QUEUE_PROPERTIES,
                                          CL_QUEUE_PROFILING_ENABLE, 0};
  dev->service_queue = clCreateCommandQueueWithProperties(ctx->context, dev->id,
                                                          profiled, &err);
  OCL_CHECK(err, status, "clCreateCommandQueueWithProperties");
  apply_memory_limit(dev);
  /* Twice the device memory, rounded up to 1 GiB: room for fragmentation;
   * MAP_NORESERVE costs nothing until touched, and nothing is touched. */
  if (!ocl_address_map_init(&dev->map, (dev->global_mem_size * 2 + (1ull << 30) - 1) &
                                           ~((1ull << 30) - 1))) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                   "cannot reserve %llu bytes of address space for device %d",
                   (unsigned long long)dev->global_mem_size * 2, dev->ordinal);
    goto fail_queue;
  }
  atomic_store_explicit(&dev->ready, true, memory_order_release);
  ok = true;
  goto out;
fail_queue:
  clReleaseCommandQueue(dev->service_queue);
  dev->service_queue = NULL;
fail:
out:
  pthread_mutex_unlock(&dev->init_lock);
  if (ok)
    ocl_program_prefetch(dev);
  return ok;
}

void ocl_devices_teardown(void) {
  /* Recorded profiling events reference the queues. */
  ocl_profiler_teardown();
  /* cl_kernels of the families reference the programs: they go first. */
  ocl_kernel_cache_clear();
  pthread_mutex_lock(&g.lock);
  for (int i = 0; i < g.count; i++) {
    struct ocl_device *dev = &g.devices[i];
    if (atomic_load_explicit(&dev->ready, memory_order_acquire)) {
      ocl_memory_teardown(dev);
      ocl_address_map_finish(&dev->map);
      clReleaseCommandQueue(dev->service_queue);
    }
    pthread_mutex_destroy(&dev->init_lock);
    pthread_mutex_destroy(&dev->mem_lock);
    pthread_mutex_destroy(&dev->streams_lock);
  }
  for (int i = 0; i < g.num_contexts; i++) {
    struct ocl_context *ctx = &g.contexts[i];
    ocl_program_cache_destroy(ctx->programs);
    if (ctx->context) clReleaseContext(ctx->context);
    free(ctx->devices);
    pthread_mutex_destroy(&ctx->lock);
  }
  free(g.devices);
  free(g.contexts);
  g.devices = NULL;
  g.contexts = NULL;
  g.count = 0;
  g.num_contexts = 0;
  g.enumerated = false;
  g.disabled = false;
  pthread_mutex_unlock(&g.lock);
  /* The next discovery (a reloaded plugin) reads the settings again. */
  ocl_config_forget();
}
