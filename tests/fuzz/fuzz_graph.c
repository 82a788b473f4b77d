/* libFuzzer target: the graph optimizer's GraphDef decoder and passes
 * (plugin/graph/graph.h) on arbitrary bytes. Any input is a result or a
 * rejection, never a crash, a leak or an abort; a changed graph decodes
 * again; and the codec's round trip is a fixed point: what it wrote comes
 * back byte for byte. Every kernel counts as present, so every pass runs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool all_kernels(void *ctx, const char *op, int dtype)
{
  (void)ctx;
  (void)op;
  return dtype != 3; /* not int32: a "missing kernel" path too */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *const keep[] = {"result", "ba_fetched:0", "^relu"};
  static const size_t keep_lengths[] = {6, 12, 5};
  struct ocl_graph_config config = {
      .variables = true,
      .fusion = true,
      .has_kernel = all_kernels,
      .keep = keep,
      .keep_lengths = keep_lengths,
      .num_keep = 3,
  };
  void *out = NULL, *again = NULL, *twice = NULL;
  size_t out_size = 0, again_size = 0, twice_size = 0;
  char why[256];

  enum ocl_graph_outcome outcome = ocl_graph_optimize(
      data, size, &config, &out, &out_size, NULL, why, sizeof(why), NULL,
      NULL);
  if (outcome == OCL_GRAPH_CHANGED) {
    if (!ocl_graph_round_trip(out, out_size, &again, &again_size))
      abort(); /* the optimizer wrote something that does not decode */
    free(again);
  } else if (out != NULL) {
    abort();
  }
  free(out);

  if (ocl_graph_round_trip(data, size, &again, &again_size)) {
    if (!ocl_graph_round_trip(again, again_size, &twice, &twice_size) ||
        twice_size != again_size ||
        (again_size > 0 && memcmp(again, twice, again_size) != 0))
      abort();
  }
  free(again);
  free(twice);
  return 0;
}
