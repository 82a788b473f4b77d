/* libFuzzer target: the host shim's plugin loader against a stub plugin
 * whose ABI tables come from the input (fuzz_stub_plugin.c). Load,
 * validate, count devices, open and close device 0, unload: a bad table is
 * a TF_Status, never a crash, a leak or an abort. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tfocl/host.h"

/* Read by the stub plugin (exported: -rdynamic). */
__attribute__((visibility("default"))) const uint8_t *tfocl_fuzz_input;
__attribute__((visibility("default"))) size_t tfocl_fuzz_input_size;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = getenv("TFOCL_FUZZ_STUB");
#ifdef TFOCL_FUZZ_STUB_PATH
  if (path == NULL)
    path = TFOCL_FUZZ_STUB_PATH;
#endif
  if (path == NULL)
    abort();
  tfocl_fuzz_input = data;
  tfocl_fuzz_input_size = size;
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(path, st);
  if (p != NULL) {
    int n = tfocl_plugin_device_count(p, st);
    if (TF_GetCode(st) == TF_OK && n > 0) {
      struct tfocl_device *d = tfocl_device_open(p, 0, st);
      if (d != NULL) {
        TF_Status *s2 = TF_NewStatus();
        tfocl_device_synchronize(d, s2);
        TF_DeleteStatus(s2);
        tfocl_device_close(d);
      }
    }
    tfocl_plugin_unload(p);
  }
  TF_DeleteStatus(st);
  tfocl_fuzz_input = NULL;
  tfocl_fuzz_input_size = 0;
  return 0;
}
