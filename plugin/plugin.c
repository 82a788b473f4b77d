/* tfocl plugin: the entry points SE_InitPlugin (platform) and TF_InitKernel
 * (kernels); the third, TF_InitGraph (the graph optimizer), is in
 * graph/init.c.
 *
 * SE_InitPlugin never returns a failing status: TensorFlow aborts the
 * process on one (contract 4). Anything that makes the plugin unusable
 * (unknown ABI, no TF C API, no OpenCL) registers the platform normally
 * with 0 devices and prints one line on stderr saying why. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

/* TensorFlow releases whose layouts we know: 2.18 and later keep the same
 * StreamExecutor layout and only ever append members (struct_size tells
 * us how much of ours the core has room for). */
#define OCL_TF_MIN_MAJOR 2
#define OCL_TF_MIN_MINOR 18
/* The newest release whose ABI was checked (test_abi.py against the 2.22
 * wheel; 2.23 is tf-nightly's): a newer one loads with a warning. */
#define OCL_TF_NEWEST_KNOWN_MINOR 23

/* ---- A second copy of tfocl in one process ------------------------------
 * TensorFlow aborts on a second registration of a platform name or device
 * type, and it registers a library again when it reaches it through another
 * path (tensorflow-plugins/ and TF_PLUGGABLE_DEVICE_LIBRARY_PATH): the same
 * file gives this instance a second SE_InitPlugin, another file a second
 * instance. A copy that is not the first registers under names of its own
 * (TFOCL_COPY_B / OPENCL_COPY_B, ...) with 0 devices, no kernels, and a graph
 * optimizer and profiler for that type that never see a node, and says so
 * once; the first copy keeps serving OPENCL. */
#define OCL_MAX_COPIES 8
static const char *const copy_platform_names[OCL_MAX_COPIES] = {
    OCL_PLATFORM_NAME, "TFOCL_COPY_B", "TFOCL_COPY_C", "TFOCL_COPY_D",
    "TFOCL_COPY_E",    "TFOCL_COPY_F", "TFOCL_COPY_G", "TFOCL_COPY_H"};
static const char *const copy_device_types[OCL_MAX_COPIES] = {
    OCL_DEVICE_TYPE, "OPENCL_COPY_B", "OPENCL_COPY_C", "OPENCL_COPY_D",
    "OPENCL_COPY_E", "OPENCL_COPY_F", "OPENCL_COPY_G", "OPENCL_COPY_H"};

/* SE_InitPlugin calls of this instance not yet undone by destroy_platform
 * (the host shim loads, unloads and loads again). */
static atomic_int live_registrations;
/* The copy the last SE_InitPlugin of this instance registered as (0: the
 * one serving OPENCL); TF_InitKernel/Graph/Profiler follow it. */
static atomic_int registered_copy;

bool ocl_copy_refused(void) { return atomic_load(&registered_copy) != 0; }

const char *ocl_registered_device_type(void) {
  return copy_device_types[atomic_load(&registered_copy)];
}

struct loaded_copies {
  uintptr_t self;     /* an address inside this instance */
  bool self_seen;
  int earlier;        /* tfocl objects loaded before this one */
  char first[512];    /* the path of the first of them */
  char names[OCL_MAX_COPIES][512];
  int num_names;
};

static bool contains(const struct dl_phdr_info *info, uintptr_t address) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && address >= start &&
        address < start + ph->p_memsz)
      return true;
  }
  return false;
}

/* Collects, in load order, the objects before this one named libtfocl.so
 * (what meson builds and pip installs); dlopen is not called in here (the
 * loader's lock is held). */
static int collect_earlier(struct dl_phdr_info *info, size_t size, void *arg) {
  struct loaded_copies *c = arg;
  const char *name = info->dlpi_name, *base;

  (void)size;
  if (contains(info, c->self)) {
    c->self_seen = true;
    return 1; /* stop: only earlier objects count */
  }
  if (!name || !*name) return 0;
  base = strrchr(name, '/');
  base = base ? base + 1 : name;
  if (strcmp(base, "libtfocl.so") == 0 && c->num_names < OCL_MAX_COPIES)
    snprintf(c->names[c->num_names++], sizeof c->names[0], "%s", name);
  return 0;
}

/* Which copy this SE_InitPlugin registers: earlier tfocl libraries that
 * export SE_InitPlugin, plus live registrations of this very instance. */
static int choose_copy(char *first, size_t size) {
  static struct loaded_copies c; /* 4 KiB: not on the caller's stack */
  int copy = atomic_fetch_add(&live_registrations, 1);

  memset(&c, 0, sizeof c);
  c.self = (uintptr_t)&choose_copy;
  dl_iterate_phdr(collect_earlier, &c);
  for (int i = 0; i < c.num_names && c.self_seen; i++) {
    void *handle = dlopen(c.names[i], RTLD_NOLOAD | RTLD_LAZY);
    if (!handle) continue;
    if (dlsym(handle, "SE_InitPlugin") && dlsym(handle, "TF_InitKernel")) {
      if (c.earlier++ == 0) snprintf(c.first, sizeof c.first, "%s", c.names[i]);
    }
    dlclose(handle);
  }
  copy += c.earlier;
  if (copy >= OCL_MAX_COPIES) copy = OCL_MAX_COPIES - 1;
  if (c.earlier)
    snprintf(first, size, "%s", c.first);
  else
    snprintf(first, size, "this same library, registered earlier");
  return copy;
}

static const char *own_path(void) {
  Dl_info info;
  return dladdr((void *)&choose_copy, &info) && info.dli_fname
             ? info.dli_fname
             : "libtfocl.so";
}

static void get_no_device_count(const SP_Platform *platform,
                                int *device_count, TF_Status *status) {
  (void)platform;
  ocl_set_ok(status);
  *device_count = 0;
}

static void destroy_refused_platform(SP_Platform *platform) {
  (void)platform;
  atomic_fetch_sub(&live_registrations, 1);
}

static void get_device_count(const SP_Platform *platform, int *device_count,
                             TF_Status *status) {
  (void)platform;
  ocl_set_ok(status);
  *device_count = ocl_device_count();
}

static void destroy_platform(SP_Platform *platform) {
  (void)platform;
  ocl_devices_teardown();
  atomic_fetch_sub(&live_registrations, 1);
}

static void destroy_platform_fns(SP_PlatformFns *platform_fns) {
  (void)platform_fns; /* nothing allocated */
}

/* Why the core's TensorFlow is unusable, or NULL. */
static const char *check_tf_version(char *buf, size_t size) {
  int major = 0, minor = 0;
  const char *version = ocl_tf.Version ? ocl_tf.Version() : NULL;

  if (!version) return NULL; /* the host shim: no TF_Version */
  if (sscanf(version, "%d.%d", &major, &minor) != 2 ||
      major != OCL_TF_MIN_MAJOR || minor < OCL_TF_MIN_MINOR) {
    snprintf(buf, size, "TensorFlow %s: tfocl needs %d.%d or later", version,
             OCL_TF_MIN_MAJOR, OCL_TF_MIN_MINOR);
    return buf;
  }
  /* Layouts only ever grow at the end and struct_size guards every read,
   * so a newer release is tried, not refused: said once, not fatal. */
  if (minor > OCL_TF_NEWEST_KNOWN_MINOR)
    fprintf(stderr,
            "tfocl: warning: TensorFlow %s is newer than any tfocl was "
            "checked against (%d.%d); the OPENCL device is offered as for "
            "%d.%d\n",
            version, OCL_TF_MIN_MAJOR, OCL_TF_NEWEST_KNOWN_MINOR,
            OCL_TF_MIN_MAJOR, OCL_TF_NEWEST_KNOWN_MINOR);
  return NULL;
}

/* Whether the core's struct (struct_size first) has room for all of ours. */
static bool big_enough(const void *p, size_t ours) {
  size_t theirs;
  if (!p) return false;
  memcpy(&theirs, p, sizeof theirs);
  return theirs == 0 || theirs >= ours;
}

OCL_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams *params,
                              TF_Status *status) {
  const char *missing = NULL, *why = NULL;
  char reason[256];
  SP_Platform platform = {
      .struct_size = SP_PLATFORM_STRUCT_SIZE,
      .ext = NULL,
      .name = OCL_PLATFORM_NAME,
      .type = OCL_DEVICE_TYPE,
      .supports_unified_memory = 0,
      /* BFC with growth: regions start at ~2 MiB and double, each within
       * CL_DEVICE_MAX_MEM_ALLOC_SIZE, and tensors are sub-allocated
       * without an OpenCL call each. */
      .use_bfc_allocator = 1,
      .force_memory_growth = 1,
  };
  SP_PlatformFns fns = {
      .struct_size = SP_PLATFORM_FNS_STRUCT_SIZE,
      .ext = NULL,
      .get_device_count = get_device_count,
      .create_device = ocl_create_device,
      .destroy_device = ocl_destroy_device,
      .create_device_fns = ocl_create_device_fns,
      .destroy_device_fns = ocl_destroy_device_fns,
      .create_stream_executor = ocl_create_stream_executor,
      .destroy_stream_executor = ocl_destroy_stream_executor,
      .create_timer_fns = ocl_create_timer_fns,
      .destroy_timer_fns = ocl_destroy_timer_fns,
  };

  char first[512];
  int copy;

  if (!ocl_tf_resolve(&missing)) {
    snprintf(reason, sizeof reason,
             "the TensorFlow C API lacks %s (neither libtensorflow_framework."
             "so.2 nor libtfocl_host.so is loaded?)",
             missing);
    why = reason;
  }
  ocl_set_ok(status);
  if (!params) return;
  copy = choose_copy(first, sizeof first);
  atomic_store(&registered_copy, copy);
  if (copy > 0) {
    platform.name = copy_platform_names[copy];
    platform.type = copy_device_types[copy];
    fns.get_device_count = get_no_device_count;
    fprintf(stderr,
            "tfocl: a second copy of tfocl is loaded (%s); the first (%s) "
            "serves OPENCL, this one registers as %s with 0 devices. Load "
            "one: pip uninstall tfocl, or unset "
            "TF_PLUGGABLE_DEVICE_LIBRARY_PATH\n",
            own_path(), first, platform.type);
  }
  if (!big_enough(params, SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE)) {
    /* Nothing can be written safely; the core will reject the plugin. */
    ocl_report_unusable("0 OpenCL devices: unknown StreamExecutor ABI "
                        "(registration params too small)");
    return;
  }
  params->destroy_platform =
      copy > 0 ? destroy_refused_platform : destroy_platform;
  params->destroy_platform_fns = destroy_platform_fns;
  if (params->platform) ocl_fill_struct(params->platform, &platform,
                                        SP_PLATFORM_STRUCT_SIZE);
  if (params->platform_fns)
    ocl_fill_struct(params->platform_fns, &fns, SP_PLATFORM_FNS_STRUCT_SIZE);

  if (!why && params->major_version != SE_MAJOR) {
    snprintf(reason, sizeof reason,
             "StreamExecutor C API %d.%d.%d, tfocl speaks %d.x",
             (int)params->major_version, (int)params->minor_version,
             (int)params->patch_version, SE_MAJOR);
    why = reason;
  }
  if (!why && (!big_enough(params->platform, SP_PLATFORM_STRUCT_SIZE) ||
               !big_enough(params->platform_fns, SP_PLATFORM_FNS_STRUCT_SIZE)))
    why = "unknown StreamExecutor ABI (platform tables smaller than ours)";
  if (copy > 0) return;
  if (!why) why = check_tf_version(reason, sizeof reason);
  if (why) {
    ocl_devices_disable();
    ocl_report_unusable("0 OpenCL devices: %s", why);
  }
}

OCL_EXPORT void TF_InitKernel(void) {
  const char *missing = NULL;

  if (ocl_copy_refused()) return; /* the first copy has them */
  if (!ocl_tf_resolve(&missing)) {
    ocl_report_unusable("no OpenCL kernels registered: the TensorFlow C API "
                        "lacks %s",
                        missing);
    return;
  }
  ocl_register_kernels();
}
