/* The plugin's settings: every TFOCL_* variable it obeys, read from the
 * environment in one place (plugin/config.c) and at one moment, when the
 * plugin discovers its devices (SE_InitPlugin, or the first use by a host
 * that skipped it). A host that unloads and loads the plugin again (the
 * host shim, its tests) gets them read again; between two loads nothing
 * the plugin does depends on the environment.
 *
 * Two exceptions, each read at the moment it applies to: the graph pass's
 * switches (TFOCL_GRAPH*), read when a graph is optimized, as TensorFlow's
 * own grappler options (tf.config.optimizer.set_experimental_options)
 * apply per graph, so that a program may compare its functions with a
 * pass on and off in one process (the tests do); and the memory limit
 * (ocl_config_memory_limit below).
 *
 * Test hooks, the settings that exist only to reach paths a test could not
 * otherwise reach, are compiled in with -Dtest-hooks=true (the default of a
 * source build, off in the wheel); without them `hooks` stays zero. */
#ifndef TFOCL_KERNELS_CONFIG_H_
#define TFOCL_KERNELS_CONFIG_H_

#include <stdbool.h>
#include <stddef.h>

/* TFOCL_GEMM */
enum ocl_gemm_choice {
  OCL_GEMM_AUTO, /* measured or chosen per device and size class */
  OCL_GEMM_OWN,
  OCL_GEMM_CLBLAST,
  OCL_GEMM_BLAS,
};

/* TFOCL_HOST_WAIT */
enum ocl_host_wait_choice {
  OCL_HOST_WAIT_BY_DRIVER, /* the driver decides (event.c) */
  OCL_HOST_WAIT_FORCE_CALLBACK,
  OCL_HOST_WAIT_FORCE_DRIVER,
  OCL_HOST_WAIT_FORCE_POLL,
};

/* TFOCL_KERNEL_STYLE */
enum ocl_kernel_style {
  OCL_KERNEL_STYLE_BY_DEVICE,
  OCL_KERNEL_STYLE_CPU,
  OCL_KERNEL_STYLE_GPU,
};

#define OCL_CONFIG_LIST_MAX 256

struct ocl_config {
  /* TFOCL_VISIBLE_DEVICES, TFOCL_DEVICE_TYPES as given (discovery.c
   * parses them); has_* false where unset. A value longer than the buffer
   * is refused whole (traced), as if unset: a cut list would offer other
   * devices than asked. */
  bool has_visible_devices;
  char visible_devices[OCL_CONFIG_LIST_MAX];
  bool has_device_types;
  char device_types[OCL_CONFIG_LIST_MAX];
  bool context_per_device; /* TFOCL_CONTEXT_PER_DEVICE=1 */
  enum ocl_kernel_style kernel_style;
  enum ocl_host_wait_choice host_wait;
  /* TFOCL_HOST_WAIT_SPIN_US: how long a polling wait yields between polls
   * before it sleeps between them, in microseconds; -1: the default. */
  int host_wait_spin_us;
  bool trace; /* TFOCL_TRACE set, not "0" */
  /* TFOCL_CACHE_DIR, else $XDG_CACHE_HOME/tfocl, else ~/.cache/tfocl; ""
   * when nothing is to be kept (TFOCL_CACHE_DIR=off or empty, no home). */
  char cache_base[4096];
  bool cache_base_in_home; /* ~/.cache may have to be made first */
  enum ocl_gemm_choice gemm;
  bool gemm_tune; /* TFOCL_GEMM_TUNE unset or not "0" */
  int gemm_tile;  /* TFOCL_GEMM_TILE: 128, 64, 32; 0 = by size */
  bool conv_im2col; /* TFOCL_CONV=im2col: no direct conv kernels */

  struct {
    bool index64;              /* TFOCL_INDEX_WIDTH=64 */
    size_t max_groups_yz;      /* TFOCL_MAX_GROUPS_YZ; 0 = the device's */
    bool hide_tf_experimental; /* TFOCL_HIDE_TF_EXPERIMENTAL=1 */
    bool keep_pocl_binaries;   /* TFOCL_KEEP_POCL_BINARIES=1 */
    bool hide_fp64;            /* TFOCL_HIDE_FP64=1: devices without fp64 */
  } hooks;
};

/* The settings of this load of the plugin; never NULL. */
const struct ocl_config *ocl_config(void);

/* TFOCL_MEMORY_LIMIT_MB as given, "" where unset or too long: read when a
 * device is opened (TensorFlow's context initialisation, after `import
 * tensorflow`), because the tfocl Python package sets it there from
 * tf.config.set_logical_device_configuration. */
void ocl_config_memory_limit(char *dst, size_t size);

#endif /* TFOCL_KERNELS_CONFIG_H_ */
