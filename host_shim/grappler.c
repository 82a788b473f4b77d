/* TensorFlow's core side of the graph optimizer plugin API
 * (c/experimental/grappler/grappler.cc): TF_InitGraph and its validation,
 * the registry of one optimizer per device type, running an optimizer on a
 * serialized GraphDef, and the item helpers a plugin calls back. */
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

/* ---- TF_Buffer (tf_buffer.h) --------------------------------------------- */

static void free_copy(void *data, size_t length)
{
  (void)length;
  free(data);
}

TF_Buffer *TF_NewBuffer(void) { return calloc(1, sizeof(TF_Buffer)); }

TF_Buffer *TF_NewBufferFromString(const void *proto, size_t proto_len)
{
  TF_Buffer *b = TF_NewBuffer();
  void *copy = malloc(proto_len ? proto_len : 1);
  if (b == NULL || copy == NULL) {
    free(b);
    free(copy);
    return NULL;
  }
  if (proto_len > 0)
    memcpy(copy, proto, proto_len);
  b->data = copy;
  b->length = proto_len;
  b->data_deallocator = free_copy;
  return b;
}

void TF_DeleteBuffer(TF_Buffer *buffer)
{
  if (buffer == NULL)
    return;
  if (buffer->data_deallocator != NULL)
    buffer->data_deallocator((void *)buffer->data, buffer->length);
  free(buffer);
}

/* ---- The item ------------------------------------------------------------ */

/* GrapplerItem's fetch list and NodesToPreserve (the fetch nodes' names,
 * without port, plus the nodes the caller names). */
struct TF_GrapplerItem {
  char **fetch;
  int num_fetch;
  char **preserve;
  int num_preserve;
};

static void list_size(char *const *names, int count, int *num_values,
                      size_t *storage_size, TF_Status *status)
{
  shim_set_ok(status);
  *num_values = count;
  *storage_size = 0;
  for (int i = 0; i < count; i++)
    *storage_size += strlen(names[i]);
}

/* TensorFlow's copy loop: stops at num_values, fails when the next name
 * would not fit (after pointing values[i] at where it would go). */
static void list_copy(char *const *names, int count, char **values,
                      size_t *lengths, int num_values, void *storage,
                      size_t storage_size, TF_Status *status)
{
  char *p = storage;
  shim_set_ok(status);
  for (int i = 0; i < count && i < num_values; i++) {
    size_t len = strlen(names[i]);
    values[i] = p;
    lengths[i] = len;
    if ((size_t)(p - (char *)storage) + len > storage_size) {
      shim_set_status(status, TF_INVALID_ARGUMENT,
                      "Not enough storage to hold the requested list of "
                      "nodes");
      return;
    }
    memcpy(p, names[i], len);
    p += len;
  }
}

void TF_GetNodesToPreserveListSize(const TF_GrapplerItem *item,
                                   int *num_values, size_t *storage_size,
                                   TF_Status *status)
{
  list_size(item->preserve, item->num_preserve, num_values, storage_size,
            status);
}

void TF_GetNodesToPreserveList(const TF_GrapplerItem *item, char **values,
                               size_t *lengths, int num_values, void *storage,
                               size_t storage_size, TF_Status *status)
{
  list_copy(item->preserve, item->num_preserve, values, lengths, num_values,
            storage, storage_size, status);
}

void TF_GetFetchNodesListSize(const TF_GrapplerItem *item, int *num_values,
                              size_t *storage_size, TF_Status *status)
{
  list_size(item->fetch, item->num_fetch, num_values, storage_size, status);
}

void TF_GetFetchNodesList(const TF_GrapplerItem *item, char **values,
                          size_t *lengths, int num_values, void *storage,
                          size_t storage_size, TF_Status *status)
{
  list_copy(item->fetch, item->num_fetch, values, lengths, num_values,
            storage, storage_size, status);
}

static void item_finish(struct TF_GrapplerItem *item)
{
  for (int i = 0; i < item->num_fetch; i++)
    free(item->fetch[i]);
  for (int i = 0; i < item->num_preserve; i++)
    free(item->preserve[i]);
  free(item->fetch);
  free(item->preserve);
}

/* NodeName(): "^x" and "x:3" name node x. */
static char *node_name(const char *s)
{
  if (s[0] == '^')
    s++;
  size_t len = strlen(s);
  const char *colon = strrchr(s, ':');
  if (colon != NULL && colon[1] != '\0' &&
      strspn(colon + 1, "0123456789") == strlen(colon + 1))
    len = (size_t)(colon - s);
  char *out = malloc(len + 1);
  if (out != NULL) {
    memcpy(out, s, len);
    out[len] = '\0';
  }
  return out;
}

static bool item_init(struct TF_GrapplerItem *item,
                      const struct tfocl_graph_item *desc)
{
  *item = (struct TF_GrapplerItem){0};
  int num_fetch = desc ? desc->num_fetch : 0;
  int num_keep = desc ? desc->num_preserve : 0;
  item->fetch = calloc((size_t)num_fetch + 1, sizeof(char *));
  item->preserve = calloc((size_t)(num_fetch + num_keep) + 1, sizeof(char *));
  if (item->fetch == NULL || item->preserve == NULL)
    return false;
  for (int i = 0; i < num_fetch; i++) {
    if ((item->fetch[i] = strdup(desc->fetch[i])) == NULL)
      return false;
    item->num_fetch++;
  }
  /* NodesToPreserve is a set: each name once. */
  for (int i = 0; i < num_fetch + num_keep; i++) {
    const char *src = i < num_fetch ? desc->fetch[i]
                                    : desc->preserve[i - num_fetch];
    char *name = node_name(src);
    if (name == NULL)
      return false;
    bool dup = false;
    for (int j = 0; j < item->num_preserve && !dup; j++)
      dup = strcmp(item->preserve[j], name) == 0;
    if (dup)
      free(name);
    else
      item->preserve[item->num_preserve++] = name;
  }
  return true;
}

/* ---- Registration (InitGraphPlugin) -------------------------------------- */

/* Device types with a registered optimizer, as TensorFlow's
 * PluginGraphOptimizerRegistry (one per type). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static void validate(const TP_OptimizerRegistrationParams *params,
                     const TP_Optimizer *optimizer,
                     const TP_OptimizerConfigs *configs, TF_Status *status)
{
  SHIM_VALIDATE_STRUCT_SIZE(TP_OptimizerRegistrationParams, params,
                       TP_OPTIMIZER_REGISTRATION_PARAMS_STRUCT_SIZE);
  SHIM_VALIDATE_MEMBER(TP_OptimizerRegistrationParams, params, device_type);
  SHIM_VALIDATE_STRUCT_SIZE(TP_Optimizer, optimizer, TP_OPTIMIZER_STRUCT_SIZE);
  SHIM_VALIDATE_MEMBER(TP_Optimizer, optimizer, optimize_func);
  SHIM_VALIDATE_STRUCT_SIZE(TP_OptimizerConfigs, configs,
                       TP_OPTIMIZER_CONFIGS_STRUCT_SIZE);
  shim_set_ok(status);
}

void shim_graph_init(struct tfocl_plugin *p, shim_graph_init_fn init,
                     TF_Status *status)
{
  /* Stack objects, as in TensorFlow: the plugin must not keep them. */
  TP_OptimizerRegistrationParams params = {
      .struct_size = TP_OPTIMIZER_REGISTRATION_PARAMS_STRUCT_SIZE};
  TP_Optimizer optimizer = {.struct_size = TP_OPTIMIZER_STRUCT_SIZE};
  TP_OptimizerConfigs configs = {.struct_size =
                                     TP_OPTIMIZER_CONFIGS_STRUCT_SIZE};
  params.major_version = GO_MAJOR;
  params.minor_version = GO_MINOR;
  params.patch_version = GO_PATCH;
  params.optimizer = &optimizer;
  params.optimizer_configs = &configs;

  SHIM_TRACE("%s: TF_InitGraph", p->path);
  shim_set_ok(status);
  init(&params, status);
  if (!shim_ok(status))
    return;
  validate(&params, &optimizer, &configs, status);
  if (!shim_ok(status))
    return;
  /* An optimize function with a create function but no destroy function
   * would leak every optimizer; TensorFlow documents destroy as required
   * then but does not check it. Neither do we: it calls what is there. */
  pthread_mutex_lock(&registry_lock);
  for (struct tfocl_plugin *q = shim_loaded_plugins(); q != NULL;
       q = q->next) {
    if (q->graph_device_type != NULL &&
        strcmp(q->graph_device_type, params.device_type) == 0) {
      /* TensorFlow: LOG(FATAL), the process ends. */
      shim_set_status(status, TF_ALREADY_EXISTS,
                      "PluginGraphOptimizer with device_type %s is "
                      "registered twice.",
                      params.device_type);
      pthread_mutex_unlock(&registry_lock);
      return;
    }
  }
  p->graph_device_type = strdup(params.device_type);
  if (p->graph_device_type == NULL) {
    pthread_mutex_unlock(&registry_lock);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  p->graph_optimizer = optimizer;
  p->graph_configs = configs;
  pthread_mutex_unlock(&registry_lock);
}

/* ---- Running (CGraphOptimizer) ------------------------------------------- */

const char *tfocl_plugin_graph_device_type(const struct tfocl_plugin *p)
{
  return p != NULL ? p->graph_device_type : NULL;
}

bool tfocl_plugin_graph_configs(const struct tfocl_plugin *p,
                                TP_OptimizerConfigs *configs)
{
  if (p == NULL || p->graph_device_type == NULL)
    return false;
  *configs = p->graph_configs;
  return true;
}

void tfocl_graph_optimize(struct tfocl_plugin *p, const void *graph,
                          size_t size, const struct tfocl_graph_item *item,
                          void **out, size_t *out_size, TF_Status *status)
{
  struct TF_GrapplerItem c_item;
  TF_Buffer in = {.data = graph, .length = size};
  TF_Buffer result = {0};
  void *optimizer = NULL;

  *out = NULL;
  *out_size = 0;
  if (p == NULL || p->graph_device_type == NULL) {
    shim_set_status(status, TF_FAILED_PRECONDITION,
                    "the plugin registered no graph optimizer (TF_InitGraph)");
    return;
  }
  if (!item_init(&c_item, item)) {
    item_finish(&c_item);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  /* TensorFlow makes an optimizer per graph, destroys it after. */
  if (p->graph_optimizer.create_func != NULL)
    optimizer = p->graph_optimizer.create_func();
  shim_set_ok(status);
  p->graph_optimizer.optimize_func(optimizer, &in, &c_item, &result, status);
  if (shim_ok(status)) {
    /* BufferToMessage: the bytes, whatever their length (an empty buffer
     * is an empty GraphDef). */
    *out = malloc(result.length ? result.length : 1);
    if (*out == NULL) {
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    } else {
      if (result.length > 0)
        memcpy(*out, result.data, result.length);
      *out_size = result.length;
    }
  }
  if (result.data_deallocator != NULL)
    result.data_deallocator((void *)result.data, result.length);
  if (p->graph_optimizer.create_func != NULL &&
      p->graph_optimizer.destroy_func != NULL)
    p->graph_optimizer.destroy_func(optimizer);
  item_finish(&c_item);
}

void tfocl_graph_free(void *graph) { free(graph); }
