/* H2D / D2H bandwidth of 64 MiB copies through the plugin, next to a host
 * memcpy of the same size, in one run. Prints numbers; asserts nothing.
 * meson test --benchmark (or run with TFOCL_PLUGIN set). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfocl/host.h"

#define BYTES (64u << 20)
#define REPS 5

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double best(double *t) {
  double b = t[0];
  for (int i = 1; i < REPS; i++) b = t[i] < b ? t[i] : b;
  return BYTES / b / 1e9;
}

int main(void) {
  const char *path = getenv("TFOCL_PLUGIN");
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *plugin;
  struct tfocl_device *device;
  double t_memcpy[REPS], t_htod[REPS], t_dtoh[REPS], t_shtod[REPS],
      t_sdtoh[REPS];

  if (!path || !(plugin = tfocl_plugin_load(path, st))) return 77;
  if (tfocl_plugin_device_count(plugin, st) < 1 ||
      !(device = tfocl_device_open(plugin, 0, st)))
    return 77;
  const SP_StreamExecutor *se = tfocl_plugin_stream_executor(plugin);
  const SP_Device *sp = tfocl_device_sp(device);
  SP_Stream h2d = tfocl_device_stream(device, TFOCL_STREAM_HOST_TO_DEVICE);
  SP_Stream d2h = tfocl_device_stream(device, TFOCL_STREAM_DEVICE_TO_HOST);
  char *a = malloc(BYTES), *b = malloc(BYTES);
  SP_DeviceMemoryBase mem = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
  se->allocate(sp, BYTES, 0, &mem);
  memset(a, 1, BYTES);
  memset(b, 2, BYTES);
  se->sync_memcpy_htod(sp, &mem, a, BYTES, st); /* first touch */
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    memcpy(b, a, BYTES);
    double t1 = now();
    se->memcpy_htod(sp, h2d, &mem, a, BYTES, st);
    se->block_host_until_done(sp, h2d, st);
    double t2 = now();
    se->memcpy_dtoh(sp, d2h, b, &mem, BYTES, st);
    se->block_host_until_done(sp, d2h, st);
    double t3 = now();
    se->sync_memcpy_htod(sp, &mem, a, BYTES, st);
    double t4 = now();
    se->sync_memcpy_dtoh(sp, b, &mem, BYTES, st);
    double t5 = now();
    t_memcpy[r] = t1 - t0;
    t_htod[r] = t2 - t1;
    t_dtoh[r] = t3 - t2;
    t_shtod[r] = t4 - t3;
    t_sdtoh[r] = t5 - t4;
  }
  printf("64 MiB, best of %d, GB/s (device: %s)\n", REPS, sp->hardware_name);
  printf("  host memcpy        %6.2f\n", best(t_memcpy));
  printf("  memcpy_htod        %6.2f  (stream + block_host_until_done)\n", best(t_htod));
  printf("  memcpy_dtoh        %6.2f\n", best(t_dtoh));
  printf("  sync_memcpy_htod   %6.2f\n", best(t_shtod));
  printf("  sync_memcpy_dtoh   %6.2f\n", best(t_sdtoh));
  printf("  status: %s\n", TF_GetCode(st) == TF_OK ? "OK" : TF_Message(st));
  se->deallocate(sp, &mem);
  free(a);
  free(b);
  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
  TF_DeleteStatus(st);
  return 0;
}
