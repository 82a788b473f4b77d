/* Host synchronisation round trips through the plugin: the wall time and
 * the process CPU time (user + system, all threads) per iteration of
 *   callback  host_callback + block_host_until_done
 *   barrier   memset32 (4 bytes) + block_host_until_done
 *   event     memset32 + record_event + block_host_for_event
 *   htod4     sync_memcpy_htod of 4 bytes
 *   dtoh4     sync_memcpy_dtoh of 4 bytes
 *   syncall   memset32 + synchronize_all_activity
 * A host wait that spins shows as CPU time near (or above) the wall time.
 * Prints numbers; asserts nothing. meson test --benchmark, or run with
 * TFOCL_PLUGIN set (TFOCL_BENCH_ITERS: iterations per case, default 2000;
 * TFOCL_BENCH_CASE: one case only, e.g. for instruction counts under
 * callgrind).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tfocl/host.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static void noop(void *arg, TF_Status *status) {
  ++*(int *)arg;
  TF_SetStatus(status, TF_OK, "");
}

enum bench_case { CALLBACK, BARRIER, EVENT, HTOD4, DTOH4, SYNCALL, NUM_CASES };
static const char *const names[NUM_CASES] = {"callback", "barrier", "event",
                                             "htod4",    "dtoh4",   "syncall"};

int main(void) {
  const char *path = getenv("TFOCL_PLUGIN");
  const char *iters_env = getenv("TFOCL_BENCH_ITERS");
  const char *only = getenv("TFOCL_BENCH_CASE");
  int iters = iters_env ? atoi(iters_env) : 2000;
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *plugin;
  struct tfocl_device *device;
  int called = 0;
  uint32_t word = 1;

  if (iters < 1) iters = 1;
  if (!path || !(plugin = tfocl_plugin_load(path, st))) return 77;
  if (tfocl_plugin_device_count(plugin, st) < 1 ||
      !(device = tfocl_device_open(plugin, 0, st)))
    return 77;
  const SP_StreamExecutor *se = tfocl_plugin_stream_executor(plugin);
  const SP_Device *sp = tfocl_device_sp(device);
  SP_Stream s = tfocl_device_stream(device, TFOCL_STREAM_COMPUTE);
  SP_DeviceMemoryBase mem = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
  SP_Event ev = NULL;
  se->allocate(sp, 4096, 0, &mem);
  se->create_event(sp, &ev, st);
  printf("per iteration, median of 5 runs of %d (device: %s)\n", iters,
         sp->hardware_name);
  printf("  %-9s %10s %10s\n", "case", "wall_us", "cpu_us");
  for (int c = 0; c < NUM_CASES; c++) {
    double wall[5], cpu[5];
    if (only && *only && strcmp(only, names[c]) != 0) continue;
    for (int rep = 0; rep < 5; rep++) {
      double t0 = now(), c0 = cpu_now();
      for (int i = 0; i < iters && TF_GetCode(st) == TF_OK; i++) {
        switch (c) {
          case CALLBACK:
            se->host_callback(sp, s, noop, &called);
            se->block_host_until_done(sp, s, st);
            break;
          case BARRIER:
            se->memset32(sp, s, &mem, (uint32_t)i, 4, st);
            se->block_host_until_done(sp, s, st);
            break;
          case EVENT:
            se->memset32(sp, s, &mem, (uint32_t)i, 4, st);
            se->record_event(sp, s, ev, st);
            se->block_host_for_event(sp, ev, st);
            break;
          case HTOD4:
            se->sync_memcpy_htod(sp, &mem, &word, 4, st);
            break;
          case DTOH4:
            se->sync_memcpy_dtoh(sp, &word, &mem, 4, st);
            break;
          case SYNCALL:
            se->memset32(sp, s, &mem, (uint32_t)i, 4, st);
            se->synchronize_all_activity(sp, st);
            break;
        }
      }
      wall[rep] = (now() - t0) / iters * 1e6;
      cpu[rep] = (cpu_now() - c0) / iters * 1e6;
    }
    /* Median of 5: sort both (independently; each is a median of its own). */
    for (int i = 1; i < 5; i++)
      for (int j = i; j > 0 && wall[j - 1] > wall[j]; j--) {
        double t = wall[j]; wall[j] = wall[j - 1]; wall[j - 1] = t;
      }
    for (int i = 1; i < 5; i++)
      for (int j = i; j > 0 && cpu[j - 1] > cpu[j]; j--) {
        double t = cpu[j]; cpu[j] = cpu[j - 1]; cpu[j - 1] = t;
      }
    printf("  %-9s %10.2f %10.2f\n", names[c], wall[2], cpu[2]);
  }
  printf("  status: %s (callbacks run: %d)\n",
         TF_GetCode(st) == TF_OK ? "OK" : TF_Message(st), called);
  se->destroy_event(sp, ev);
  se->deallocate(sp, &mem);
  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
  TF_DeleteStatus(st);
  return 0;
}
