/* A graph optimizer plugin for the host shim's tests: TF_InitGraph only.
 * Its optimizer hands back its input and, with TFOCL_STUB_LOG=<file>,
 * appends one line per call: create, destroy, "fetch <name>" and
 * "preserve <name>" for the item's lists. Each build with -DBREAK_<RULE>
 * breaks one rule TensorFlow's InitGraphPlugin checks; -DFAIL_OPTIMIZE
 * makes the optimizer fail. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/experimental/grappler/grappler.h"

#define STUB_EXPORT __attribute__((visibility("default")))

static void stub_log(const char *what, const char *name, size_t len)
{
  const char *path = getenv("TFOCL_STUB_LOG");
  FILE *f;
  if (path == NULL)
    return;
  f = fopen(path, "a");
  if (f == NULL)
    return;
  if (name != NULL)
    fprintf(f, "%s %.*s\n", what, (int)len, name);
  else
    fprintf(f, "%s\n", what);
  fclose(f);
}

static int live;

static void *create(void)
{
  stub_log("create", NULL, 0);
  return &live;
}

static void destroy(void *optimizer)
{
  stub_log(optimizer == &live ? "destroy" : "destroy-bad", NULL, 0);
}

static void log_list(const char *what, const TF_GrapplerItem *item,
                     bool fetch, TF_Status *status)
{
  int num = 0;
  size_t bytes = 0;
  (fetch ? TF_GetFetchNodesListSize : TF_GetNodesToPreserveListSize)(
      item, &num, &bytes, status);
  if (TF_GetCode(status) != TF_OK || num == 0)
    return;
  char **values = calloc((size_t)num, sizeof(char *));
  size_t *lengths = calloc((size_t)num, sizeof(size_t));
  char *storage = malloc(bytes + 1);
  if (values == NULL || lengths == NULL || storage == NULL)
    goto out;
  /* One byte short first: TensorFlow refuses. */
  if (bytes > 0) {
    (fetch ? TF_GetFetchNodesList : TF_GetNodesToPreserveList)(
        item, values, lengths, num, storage, bytes - 1, status);
    stub_log(TF_GetCode(status) == TF_INVALID_ARGUMENT ? "short-refused"
                                                       : "short-accepted",
             NULL, 0);
  }
  (fetch ? TF_GetFetchNodesList : TF_GetNodesToPreserveList)(
      item, values, lengths, num, storage, bytes, status);
  for (int i = 0; i < num && TF_GetCode(status) == TF_OK; i++)
    stub_log(what, values[i], lengths[i]);
out:
  free(values);
  free(lengths);
  free(storage);
}

static void free_graph(void *data, size_t length)
{
  (void)length;
  stub_log("free", NULL, 0);
  free(data);
}

static void optimize(void *optimizer, const TF_Buffer *graph,
                     const TF_GrapplerItem *item, TF_Buffer *out,
                     TF_Status *status)
{
  (void)optimizer;
  TF_SetStatus(status, TF_OK, "");
  log_list("fetch", item, true, status);
  log_list("preserve", item, false, status);
#ifdef FAIL_OPTIMIZE
  TF_SetStatus(status, TF_INTERNAL, "stub optimizer failed");
  return;
#endif
  void *copy = malloc(graph->length + 1);
  if (copy == NULL) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  memcpy(copy, graph->data, graph->length);
  out->data = copy;
  out->length = graph->length;
  out->data_deallocator = free_graph;
}

STUB_EXPORT void TF_InitGraph(TP_OptimizerRegistrationParams *params,
                              TF_Status *status)
{
  TF_SetStatus(status, TF_OK, "");
  params->device_type = "STUB_GRAPH";
  params->optimizer->create_func = create;
  params->optimizer->optimize_func = optimize;
  params->optimizer->destroy_func = destroy;
  params->optimizer_configs->remapping = TF_TriState_Off;
#ifdef BREAK_INIT_STATUS
  TF_SetStatus(status, TF_INTERNAL, "stub TF_InitGraph failed");
#endif
#ifdef BREAK_PARAMS_STRUCT_SIZE
  params->struct_size = 0;
#endif
#ifdef BREAK_NO_DEVICE_TYPE
  params->device_type = NULL;
#endif
#ifdef BREAK_OPTIMIZER_STRUCT_SIZE
  params->optimizer->struct_size = 0;
#endif
#ifdef BREAK_NO_OPTIMIZE_FUNC
  params->optimizer->optimize_func = NULL;
#endif
#ifdef BREAK_CONFIGS_STRUCT_SIZE
  params->optimizer_configs->struct_size = 0;
#endif
}
