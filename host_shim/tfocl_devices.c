/* tfocl devices: every device the plugin counts, opened as TensorFlow
 * opens it, with its description and memory. */
#include <stdio.h>
#include <stdlib.h>

#include "tfocl_cmd.h"

static const char *or_dash(const char *s) { return s != NULL ? s : "-"; }

static int run(int argc, char **argv)
{
  struct tfocl_common_opts opts;
  struct tfocl_plugin *p;
  const SP_Platform *platform;
  TF_Status *st;
  int rc = tfocl_parse_common(&tfocl_cmd_devices, argc, argv, &opts);
  int count, failures = 0;

  if (rc >= 0)
    return rc;
  p = tfocl_load_plugin(&opts);
  if (p == NULL)
    return TFOCL_EXIT_ERROR;
  st = TF_NewStatus();
  platform = tfocl_plugin_platform(p);
  count = tfocl_plugin_device_count(p, st);
  if (TF_GetCode(st) != TF_OK) {
    fprintf(stderr, "tfocl devices: get_device_count: %s\n", TF_Message(st));
    TF_DeleteStatus(st);
    tfocl_plugin_unload(p);
    return TFOCL_EXIT_ERROR;
  }
  if (opts.json) {
    printf("{\"plugin\": ");
    tfocl_json_string(stdout, tfocl_plugin_path(p));
    printf(", \"platform\": ");
    tfocl_json_string(stdout, platform ? platform->name : NULL);
    printf(", \"device_type\": ");
    tfocl_json_string(stdout, platform ? platform->type : NULL);
    printf(", \"devices\": [");
  } else {
    printf("plugin:      %s\n", tfocl_plugin_path(p));
    if (platform == NULL) {
      printf("platform:    (none: kernels-only plugin)\n");
    } else {
      printf("platform:    %s\ndevice type: %s\n", platform->name,
             platform->type);
    }
    printf("devices:     %d\n", count);
    if (count > 0)
      printf("\n%-7s %-10s %-32s %-20s %-14s %12s %12s\n", "ordinal", "type",
             "hardware_name", "vendor", "pci_bus_id", "total_MiB",
             "free_MiB");
  }
  for (int i = 0; i < count; i++) {
    struct tfocl_device *d = tfocl_device_open(p, i, st);
    const SP_Device *sp;
    int64_t free_b = -1, total_b = -1;

    if (d == NULL) {
      failures++;
      if (opts.json) {
        printf("%s{\"ordinal\": %d, \"error\": ", i ? ", " : "", i);
        tfocl_json_string(stdout, TF_Message(st));
        printf(", \"code\": %d}", (int)TF_GetCode(st));
      } else {
        printf("%-7d error: %s\n", i, TF_Message(st));
      }
      continue;
    }
    sp = tfocl_device_sp(d);
    tfocl_plugin_stream_executor(p)->device_memory_usage(sp, &free_b,
                                                         &total_b);
    if (opts.json) {
      printf("%s{\"ordinal\": %d, \"device_type\": ", i ? ", " : "", i);
      tfocl_json_string(stdout, tfocl_device_type(d));
      printf(", \"hardware_name\": ");
      tfocl_json_string(stdout, sp->hardware_name);
      printf(", \"vendor\": ");
      tfocl_json_string(stdout, sp->device_vendor);
      printf(", \"pci_bus_id\": ");
      tfocl_json_string(stdout, sp->pci_bus_id);
      printf(", \"memory_total\": %lld, \"memory_free\": %lld}",
             (long long)total_b, (long long)free_b);
    } else {
      printf("%-7d %-10s %-32s %-20s %-14s %12.1f %12.1f\n", i,
             tfocl_device_type(d), or_dash(sp->hardware_name),
             or_dash(sp->device_vendor), or_dash(sp->pci_bus_id),
             (double)total_b / 1048576.0, (double)free_b / 1048576.0);
    }
    tfocl_device_close(d);
  }
  if (opts.json)
    printf("]}\n");
  TF_DeleteStatus(st);
  tfocl_plugin_unload(p);
  return failures ? TFOCL_EXIT_ERROR : TFOCL_EXIT_OK;
}

const struct tfocl_cmd tfocl_cmd_devices = {
    .name = "devices",
    .summary = "List the plugin's devices (opened as TensorFlow opens them).",
    .usage = "  --plugin PATH  plugin to load\n"
             "  --json         machine-readable output\n",
    .run = run,
};
