/* The kernel registry: TF_KernelBuilder, TF_RegisterKernelBuilder and the
 * lookup TensorFlow's FindKernelRegistration does (device type, type
 * constraints, label, highest priority, DEFAULT as a fallback). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

static pthread_rwlock_t registry_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct shim_kernel **kernels; /* sorted: op, device type, seq */
static int num_kernels;
static uint64_t next_seq;

/* Set by the loader on the loading thread only, so a kernel registered by
 * another thread meanwhile is not mistaken for the plugin's. */
static _Thread_local struct tfocl_plugin *loading_plugin;

void shim_registry_set_loading_plugin(struct tfocl_plugin *p)
{
  loading_plugin = p;
}

struct tfocl_plugin *shim_registry_loading_plugin(void)
{
  return loading_plugin;
}

/* ---- builders ----------------------------------------------------------- */

static TF_KernelBuilder *builder_new(const char *op_name,
                                     const char *device_name,
                                     void *(*create_func)(
                                         TF_OpKernelConstruction *),
                                     void (*delete_func)(void *))
{
  TF_KernelBuilder *b;

  if (op_name == NULL || device_name == NULL)
    return NULL;
  b = calloc(1, sizeof(*b));
  if (b == NULL)
    return NULL;
  b->op_name = strdup(op_name);
  b->device_type = strdup(device_name);
  if (b->op_name == NULL || b->device_type == NULL) {
    TF_DeleteKernelBuilder(b);
    return NULL;
  }
  b->create_func = create_func;
  b->delete_func = delete_func;
  return b;
}

TF_KernelBuilder *TF_NewKernelBuilder(
    const char *op_name, const char *device_name,
    void *(*create_func)(TF_OpKernelConstruction *),
    void (*compute_func)(void *, TF_OpKernelContext *),
    void (*delete_func)(void *))
{
  TF_KernelBuilder *b =
      builder_new(op_name, device_name, create_func, delete_func);
  if (b != NULL)
    b->compute_func = compute_func;
  return b;
}

TF_KernelBuilder *TF_NewAsyncKernelBuilder(
    const char *op_name, const char *device_name,
    void *(*create_func)(TF_OpKernelConstruction *),
    void (*compute_async_func)(void *, TF_OpKernelContext *,
                               TF_AsyncOpKernelDoneCallback *),
    void (*delete_func)(void *))
{
  TF_KernelBuilder *b =
      builder_new(op_name, device_name, create_func, delete_func);
  if (b != NULL)
    b->compute_async_func = compute_async_func;
  return b;
}

void TF_KernelBuilder_TypeConstraint(TF_KernelBuilder *b,
                                     const char *attr_name,
                                     const TF_DataType type,
                                     TF_Status *status)
{
  struct shim_constraint *c = NULL;
  TF_DataType *types;

  if (b == NULL || attr_name == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "TF_KernelBuilder_TypeConstraint: NULL builder or attr");
    return;
  }
  for (int i = 0; i < b->num_constraints; i++)
    if (strcmp(b->constraints[i].attr, attr_name) == 0)
      c = &b->constraints[i];
  if (c == NULL) {
    struct shim_constraint *v = realloc(
        b->constraints, sizeof(*v) * (size_t)(b->num_constraints + 1));
    char *name = strdup(attr_name);
    if (v == NULL || name == NULL) {
      if (v != NULL)
        b->constraints = v;
      free(name);
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
      return;
    }
    b->constraints = v;
    c = &v[b->num_constraints++];
    *c = (struct shim_constraint){.attr = name};
  }
  /* Several calls for one attribute accumulate allowed types. */
  for (int i = 0; i < c->num_types; i++) {
    if (c->types[i] == type) {
      shim_set_ok(status);
      return;
    }
  }
  types = realloc(c->types, sizeof(*types) * (size_t)(c->num_types + 1));
  if (types == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  c->types = types;
  c->types[c->num_types++] = type;
  shim_set_ok(status);
}

void TF_KernelBuilder_HostMemory(TF_KernelBuilder *b, const char *arg_name)
{
  char **v;
  char *name;

  if (b == NULL || arg_name == NULL)
    return;
  name = strdup(arg_name);
  v = realloc(b->host_memory, sizeof(*v) * (size_t)(b->num_host_memory + 1));
  if (v == NULL || name == NULL) {
    if (v != NULL)
      b->host_memory = v;
    free(name);
    return;
  }
  b->host_memory = v;
  v[b->num_host_memory++] = name;
}

void TF_KernelBuilder_Priority(TF_KernelBuilder *b, int32_t priority_number)
{
  if (b != NULL)
    b->priority = priority_number;
}

void TF_KernelBuilder_Label(TF_KernelBuilder *b, const char *label)
{
  if (b == NULL)
    return;
  free(b->label);
  b->label = label != NULL ? strdup(label) : NULL;
}

static void builder_finish(TF_KernelBuilder *b)
{
  free(b->op_name);
  free(b->device_type);
  for (int i = 0; i < b->num_constraints; i++) {
    free(b->constraints[i].attr);
    free(b->constraints[i].types);
  }
  free(b->constraints);
  for (int i = 0; i < b->num_host_memory; i++)
    free(b->host_memory[i]);
  free(b->host_memory);
  free(b->label);
}

void TF_DeleteKernelBuilder(TF_KernelBuilder *b)
{
  if (b == NULL)
    return;
  builder_finish(b);
  free(b);
}

/* ---- registration ------------------------------------------------------- */

static void kernel_free(struct shim_kernel *k)
{
  builder_finish(&k->b);
  free(k->kernel_name);
  free(k->pub_constraints);
  free(k);
}

void shim_kernel_unref(struct shim_kernel *k)
{
  if (k == NULL)
    return;
  if (atomic_fetch_sub_explicit((_Atomic int *)&k->refcount, 1,
                                memory_order_acq_rel) == 1)
    kernel_free(k);
}

static bool same_label(const char *a, const char *b)
{
  return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static const struct shim_constraint *find_constraint(const TF_KernelBuilder *b,
                                                     const char *attr)
{
  for (int i = 0; i < b->num_constraints; i++)
    if (strcmp(b->constraints[i].attr, attr) == 0)
      return &b->constraints[i];
  return NULL;
}

/* True if some node could match both kernels: every attribute both
 * constrain has a type both allow. */
static bool constraints_overlap(const TF_KernelBuilder *a,
                                const TF_KernelBuilder *b)
{
  for (int i = 0; i < a->num_constraints; i++) {
    const struct shim_constraint *ca = &a->constraints[i];
    const struct shim_constraint *cb = find_constraint(b, ca->attr);
    bool common = false;
    if (cb == NULL)
      continue;
    for (int x = 0; x < ca->num_types && !common; x++)
      for (int y = 0; y < cb->num_types && !common; y++)
        common = ca->types[x] == cb->types[y];
    if (!common)
      return false;
  }
  return true;
}

static void format_kernel_def(struct shim_strbuf *s, const TF_KernelBuilder *b)
{
  shim_strbuf_printf(s, "  device='%s'", b->device_type);
  if (b->label != NULL && b->label[0] != '\0')
    shim_strbuf_printf(s, "; label='%s'", b->label);
  for (int i = 0; i < b->num_constraints; i++) {
    const struct shim_constraint *c = &b->constraints[i];
    shim_strbuf_printf(s, "; %s in [", c->attr);
    for (int j = 0; j < c->num_types; j++)
      shim_strbuf_printf(s, "%s%s", j ? ", " : "",
                         tfocl_type_name(c->types[j]));
    shim_strbuf_printf(s, "]");
  }
  if (b->priority != 0)
    shim_strbuf_printf(s, "; priority=%d", (int)b->priority);
  shim_strbuf_printf(s, "\n");
}

static int kernel_order(const struct shim_kernel *a,
                        const struct shim_kernel *b)
{
  int c = strcmp(a->b.op_name, b->b.op_name);
  if (c == 0)
    c = strcmp(a->b.device_type, b->b.device_type);
  if (c == 0)
    c = a->seq < b->seq ? -1 : a->seq > b->seq;
  return c;
}

void TF_RegisterKernelBuilder(const char *kernel_name, TF_KernelBuilder *b,
                              TF_Status *status)
{
  struct shim_kernel *k;
  struct shim_strbuf msg = {0};
  int pos;

  if (b == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "TF_RegisterKernelBuilder: builder is NULL");
    return;
  }
  /* The builder is ours from here on, also on failure. */
  k = calloc(1, sizeof(*k));
  if (k == NULL) {
    TF_DeleteKernelBuilder(b);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  k->b = *b;
  free(b);
  k->refcount = 1;
  k->owner = loading_plugin;
  k->kernel_name = strdup(kernel_name != NULL ? kernel_name : "");
  k->pub_constraints =
      calloc((size_t)(k->b.num_constraints > 0 ? k->b.num_constraints : 1),
             sizeof(*k->pub_constraints));
  if (k->kernel_name == NULL || k->pub_constraints == NULL) {
    kernel_free(k);
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return;
  }
  for (int i = 0; i < k->b.num_constraints; i++)
    k->pub_constraints[i] = (struct tfocl_type_constraint){
        .attr = k->b.constraints[i].attr,
        .types = k->b.constraints[i].types,
        .num_types = k->b.constraints[i].num_types};
  if (k->b.compute_func == NULL && k->b.compute_async_func == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Kernel '%s' for op '%s' has no compute function",
                    k->kernel_name, k->b.op_name);
    kernel_free(k);
    return;
  }

  pthread_rwlock_wrlock(&registry_lock);
  for (int i = 0; i < num_kernels; i++) {
    const struct shim_kernel *o = kernels[i];
    if (strcmp(o->b.op_name, k->b.op_name) != 0 ||
        strcmp(o->b.device_type, k->b.device_type) != 0 ||
        o->b.priority != k->b.priority || !same_label(o->b.label, k->b.label) ||
        !constraints_overlap(&o->b, &k->b))
      continue;
    /* TensorFlow accepts this and LOG(FATAL)s at the first lookup that
     * matches both; refusing it here names both kernels instead. */
    pthread_rwlock_unlock(&registry_lock);
    format_kernel_def(&msg, &o->b);
    shim_set_status(status, TF_ALREADY_EXISTS,
                    "Kernel '%s' for op '%s' on '%s' duplicates kernel '%s' "
                    "(same priority %d, label and overlapping type "
                    "constraints:%s); TensorFlow would fail the lookup with "
                    "\"Multiple OpKernel registrations match NodeDef at the "
                    "same priority\"",
                    k->kernel_name, k->b.op_name, k->b.device_type,
                    o->kernel_name, (int)k->b.priority, shim_strbuf_str(&msg));
    shim_strbuf_finish(&msg);
    kernel_free(k);
    return;
  }
  {
    struct shim_kernel **v =
        realloc(kernels, sizeof(*v) * (size_t)(num_kernels + 1));
    if (v == NULL) {
      pthread_rwlock_unlock(&registry_lock);
      kernel_free(k);
      shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
      return;
    }
    kernels = v;
  }
  k->seq = next_seq++;
  for (pos = num_kernels; pos > 0 && kernel_order(kernels[pos - 1], k) > 0;
       pos--)
    kernels[pos] = kernels[pos - 1];
  kernels[pos] = k;
  num_kernels++;
  pthread_rwlock_unlock(&registry_lock);
  SHIM_TRACE("registered kernel %s (%s on %s)", k->kernel_name, k->b.op_name,
             k->b.device_type);
  shim_set_ok(status);
}

void TF_RegisterKernelBuilderWithKernelDef(const char *serialized_kernel_def,
                                           const char *name,
                                           TF_KernelBuilder *builder,
                                           TF_Status *status)
{
  (void)serialized_kernel_def;
  TF_DeleteKernelBuilder(builder);
  shim_set_status(status, TF_UNIMPLEMENTED,
                  "TF_RegisterKernelBuilderWithKernelDef ('%s'): serialized "
                  "KernelDef protos are not supported by the host shim; use "
                  "TF_RegisterKernelBuilder",
                  name != NULL ? name : "");
}

void shim_registry_remove_plugin(const struct tfocl_plugin *p)
{
  int out = 0;

  if (p == NULL)
    return;
  pthread_rwlock_wrlock(&registry_lock);
  for (int i = 0; i < num_kernels; i++) {
    if (kernels[i]->owner == p)
      shim_kernel_unref(kernels[i]);
    else
      kernels[out++] = kernels[i];
  }
  num_kernels = out;
  pthread_rwlock_unlock(&registry_lock);
}

int tfocl_kernel_count(void)
{
  int n;
  pthread_rwlock_rdlock(&registry_lock);
  n = num_kernels;
  pthread_rwlock_unlock(&registry_lock);
  return n;
}

bool tfocl_kernel_get(int index, struct tfocl_kernel_info *info)
{
  const struct shim_kernel *k;
  bool ok = false;

  if (info == NULL)
    return false;
  pthread_rwlock_rdlock(&registry_lock);
  if (index >= 0 && index < num_kernels) {
    k = kernels[index];
    *info = (struct tfocl_kernel_info){
        .kernel_name = k->kernel_name,
        .op_name = k->b.op_name,
        .device_type = k->b.device_type,
        .priority = k->b.priority,
        .constraints = k->pub_constraints,
        .num_constraints = k->b.num_constraints,
        .host_memory_args = (const char *const *)k->b.host_memory,
        .num_host_memory_args = k->b.num_host_memory};
    ok = true;
  }
  pthread_rwlock_unlock(&registry_lock);
  return ok;
}

const char *tfocl_kernel_label(int index)
{
  const char *label = "";
  pthread_rwlock_rdlock(&registry_lock);
  if (index >= 0 && index < num_kernels && kernels[index]->b.label != NULL)
    label = kernels[index]->b.label;
  pthread_rwlock_unlock(&registry_lock);
  return label;
}

bool shim_kernel_is_host_memory(const struct shim_kernel *k,
                                const char *arg_name)
{
  for (int i = 0; i < k->b.num_host_memory; i++)
    if (strcmp(k->b.host_memory[i], arg_name) == 0)
      return true;
  return false;
}

/* ---- lookup ------------------------------------------------------------- */

/* 1 match, 0 attribute mismatch, -1 error (status set). */
static int kernel_matches(const struct shim_kernel *k,
                          const struct shim_node *node, TF_Status *status)
{
  for (int i = 0; i < k->b.num_constraints; i++) {
    const struct shim_constraint *c = &k->b.constraints[i];
    const struct shim_attr_value *v = shim_node_attr(node, c->attr);
    const TF_DataType *vals;
    int n;

    if (v == NULL || (v->kind != TFOCL_ATTR_TYPE &&
                      v->kind != TFOCL_ATTR_TYPE_LIST)) {
      shim_set_status(status, TF_INVALID_ARGUMENT,
                      "OpKernel '%s' has constraint on attr '%s' not in "
                      "NodeDef '{{node %s}}'",
                      k->b.op_name, c->attr, node->name);
      return -1;
    }
    vals = v->kind == TFOCL_ATTR_TYPE ? &v->v.type : v->v.list.items;
    n = v->kind == TFOCL_ATTR_TYPE ? 1 : v->v.list.count;
    for (int j = 0; j < n; j++) {
      bool allowed = false;
      for (int t = 0; t < c->num_types && !allowed; t++)
        allowed = c->types[t] == vals[j];
      if (!allowed)
        return 0;
    }
  }
  return 1;
}

static struct shim_kernel *find_for_type(const struct shim_node *node,
                                         const char *device_type,
                                         bool *was_attr_mismatch,
                                         TF_Status *status)
{
  const struct shim_attr_value *label_attr = shim_node_attr(node, "_kernel");
  const char *label = label_attr != NULL &&
                              label_attr->kind == TFOCL_ATTR_STRING
                          ? label_attr->v.s
                          : "";
  struct shim_kernel *best = NULL;

  for (int i = 0; i < num_kernels; i++) {
    struct shim_kernel *k = kernels[i];
    int m;
    if (strcmp(k->b.op_name, node->def->name) != 0 ||
        strcmp(k->b.device_type, device_type) != 0 ||
        !same_label(k->b.label, label))
      continue;
    m = kernel_matches(k, node, status);
    if (m < 0)
      return NULL;
    if (m == 0) {
      *was_attr_mismatch = true;
      continue;
    }
    if (best != NULL && best->b.priority == k->b.priority) {
      shim_set_status(status, TF_INVALID_ARGUMENT,
                      "Multiple OpKernel registrations match NodeDef at the "
                      "same priority '%d': '%s' and '%s'",
                      (int)k->b.priority, best->kernel_name, k->kernel_name);
      return NULL;
    }
    if (best == NULL || k->b.priority > best->b.priority)
      best = k;
  }
  shim_set_ok(status);
  return best;
}

struct shim_kernel *shim_registry_find(const struct shim_node *node,
                                       const char *device_type,
                                       TF_Status *status)
{
  struct shim_kernel *k;
  bool mismatch = false;
  struct shim_strbuf msg = {0};
  int listed = 0;

  pthread_rwlock_rdlock(&registry_lock);
  k = find_for_type(node, device_type, &mismatch, status);
  /* DEFAULT registrations serve any device that has none of its own. */
  if (k == NULL && shim_ok(status))
    k = find_for_type(node, "DEFAULT", &mismatch, status);
  if (k != NULL) {
    atomic_fetch_add_explicit((_Atomic int *)&k->refcount, 1,
                              memory_order_relaxed);
    pthread_rwlock_unlock(&registry_lock);
    return k;
  }
  if (!shim_ok(status)) {
    pthread_rwlock_unlock(&registry_lock);
    return NULL;
  }
  shim_strbuf_printf(&msg,
                     "No registered '%s' OpKernel for '%s' devices "
                     "compatible with node {{node %s}}",
                     node->def->name, device_type, node->name);
  if (mismatch) {
    shim_strbuf_printf(&msg, "\n\t (OpKernel was found, but attributes "
                             "didn't match) Requested Attributes: ");
    shim_node_format_attrs(&msg, node);
  }
  shim_strbuf_printf(&msg, "\n\t.  Registered:");
  for (int i = 0; i < num_kernels; i++) {
    if (strcmp(kernels[i]->b.op_name, node->def->name) == 0) {
      format_kernel_def(&msg, &kernels[i]->b);
      listed++;
    }
  }
  if (listed == 0)
    shim_strbuf_printf(&msg, "  <no registered kernels>\n");
  pthread_rwlock_unlock(&registry_lock);
  shim_set_status(status, TF_NOT_FOUND, "%s", shim_strbuf_str(&msg));
  shim_strbuf_finish(&msg);
  return NULL;
}
