/* tfocl plugin: SP_Device and SP_DeviceFns. */
#include <stdio.h>
#include <string.h>

#include "ocl.h"

void ocl_fill_struct(void *dst, const void *src, size_t ours) {
  size_t theirs;

  memcpy(&theirs, dst, sizeof theirs);
  if (theirs == 0 || theirs > ours) theirs = ours;
  /* Members past a smaller core struct are dropped, never written. */
  memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
         theirs - sizeof(size_t));
}

void ocl_create_device(const SP_Platform *platform,
                       SE_CreateDeviceParams *params, TF_Status *status) {
  struct ocl_device *dev;
  SP_Device device;

  (void)platform;
  ocl_set_ok(status);
  dev = ocl_device_get(params->ordinal);
  if (!dev) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "no OpenCL device with ordinal %d (%d visible)",
                   (int)params->ordinal, ocl_device_count());
    return;
  }
  if (!ocl_device_open(dev, status)) return;
  device = (SP_Device){
      .struct_size = SP_DEVICE_STRUCT_SIZE,
      .ext = NULL,
      .ordinal = params->ordinal,
      .device_handle = dev,
      .hardware_name = dev->name,
      .device_vendor = dev->vendor,
      .pci_bus_id = dev->pci_bus_id[0] ? dev->pci_bus_id : NULL,
  };
  ocl_fill_struct(params->device, &device, SP_DEVICE_STRUCT_SIZE);
}

void ocl_destroy_device(const SP_Platform *platform, SP_Device *device) {
  (void)platform;
  /* The strings and device_handle belong to the plugin's device table,
   * which lives until destroy_platform: nothing hangs off SP_Device. */
  if (!device) return;
  device->device_handle = NULL;
  device->hardware_name = NULL;
  device->device_vendor = NULL;
  device->pci_bus_id = NULL;
}

static int32_t get_numa_node(const SP_Device *device) {
  (void)device;
  return -1; /* OpenCL does not say */
}

/* Bytes/s, estimated: OpenCL has no query for it. CPU devices: 25 GB/s,
 * what a c=a+b kernel reached on PoCL (DESIGN.md performance model).
 * GPUs sharing host memory: 50 GB/s (dual-channel DDR4/5 class). Discrete
 * GPUs: 256 GB/s (a mid-range GDDR6 card). */
static int64_t get_memory_bandwidth(const SP_Device *device) {
  const struct ocl_device *dev = ocl_sp_device(device);
  if (!dev) return -1;
  if (dev->type & CL_DEVICE_TYPE_CPU) return 25000000000LL;
  if (dev->host_unified_memory) return 50000000000LL;
  return 256000000000LL;
}

/* The host's CPU clock in MHz from /proc/cpuinfo ("cpu MHz"), 0 if unread. */
static double host_cpu_mhz(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[256];
  double mhz = 0.0;

  if (!f) return 0.0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "cpu MHz", 7) == 0) {
      const char *colon = strchr(line, ':');
      if (colon && sscanf(colon + 1, "%lf", &mhz) == 1 && mhz > 0.0) break;
      mhz = 0.0;
    }
  fclose(f);
  return mhz;
}

/* Peak GFLOP/s, estimated as compute units x clock x FP32 lanes x 2 (FMA).
 * Lanes: CPUs report theirs as the native float vector width (16 for
 * AVX-512); GPUs are counted at 64 lanes per compute unit (an NVIDIA SM or
 * AMD CU holds 64-128). A driver may not know the clock (Intel's CPU
 * runtime in a VM says 0 MHz): a CPU device then runs at the host's clock,
 * another at 1 GHz (a low GPU clock). Never 0: TensorFlow's cost model
 * divides by it. */
static double get_gflops(const SP_Device *device) {
  const struct ocl_device *dev = ocl_sp_device(device);
  double lanes, mhz;
  if (!dev) return -1.0;
  lanes = (dev->type & CL_DEVICE_TYPE_GPU) ? 64.0
          : dev->vector_width_float       ? (double)dev->vector_width_float
                                          : 4.0;
  mhz = dev->max_clock_mhz;
  if (mhz <= 0.0 && (dev->type & CL_DEVICE_TYPE_CPU)) mhz = host_cpu_mhz();
  if (mhz <= 0.0) mhz = 1000.0;
  return (dev->compute_units ? dev->compute_units : 1) * (mhz / 1000.0) *
         lanes * 2.0;
}

void ocl_create_device_fns(const SP_Platform *platform,
                           SE_CreateDeviceFnsParams *params,
                           TF_Status *status) {
  SP_DeviceFns fns = {
      .struct_size = SP_DEVICE_FNS_STRUCT_SIZE,
      .ext = NULL,
      .get_numa_node = get_numa_node,
      .get_memory_bandwidth = get_memory_bandwidth,
      .get_gflops = get_gflops,
  };

  (void)platform;
  ocl_set_ok(status);
  ocl_fill_struct(params->device_fns, &fns, SP_DEVICE_FNS_STRUCT_SIZE);
}

void ocl_destroy_device_fns(const SP_Platform *platform,
                            SP_DeviceFns *device_fns) {
  (void)platform;
  (void)device_fns; /* nothing allocated */
}

cl_context ocl_device_context(const struct ocl_device *dev) {
  return dev->ctx->context;
}

cl_device_id ocl_device_id(const struct ocl_device *dev) { return dev->id; }

size_t ocl_device_max_work_group_size(const struct ocl_device *dev) {
  return dev->max_work_group_size;
}

cl_uint ocl_device_compute_units(const struct ocl_device *dev) {
  return dev->compute_units;
}

bool ocl_device_has_fp16(const struct ocl_device *dev) { return dev->has_fp16; }

bool ocl_device_has_fp64(const struct ocl_device *dev) { return dev->has_fp64; }

bool ocl_device_is_cpu(const struct ocl_device *dev) {
  return (dev->type & CL_DEVICE_TYPE_CPU) != 0;
}

bool ocl_device_host_unified_memory(const struct ocl_device *dev) {
  return dev->host_unified_memory;
}
