/* tfocl graph optimizer: the arena, the codec and the node index, and the
 * driver that runs the passes (graph.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

/* ---- Arena --------------------------------------------------------------- */

struct ocl_arena_chunk {
  struct ocl_arena_chunk *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK (64u * 1024u)

void *ocl_arena_alloc(struct ocl_arena *arena, size_t size)
{
  struct ocl_arena_chunk *c = arena->chunks;
  size = (size + 15u) & ~(size_t)15u;
  if (size == 0)
    size = 16;
  if (c == NULL || c->size - c->used < size) {
    size_t cap = size > ARENA_CHUNK / 4 ? size : ARENA_CHUNK;
    if (cap > SIZE_MAX - sizeof(*c)) {
      arena->failed = true;
      return NULL;
    }
    struct ocl_arena_chunk *n = malloc(sizeof(*n) + cap);
    if (n == NULL) {
      arena->failed = true;
      return NULL;
    }
    n->used = 0;
    n->size = cap;
    if (c != NULL && cap != ARENA_CHUNK) {
      /* A big one-off block goes behind the current chunk, which keeps
       * serving the small requests. */
      n->next = c->next;
      c->next = n;
    } else {
      n->next = c;
      arena->chunks = n;
    }
    c = n;
  }
  void *p = c->data + c->used;
  c->used += size;
  memset(p, 0, size);
  return p;
}

void ocl_arena_finish(struct ocl_arena *arena)
{
  struct ocl_arena_chunk *c = arena->chunks;
  while (c != NULL) {
    struct ocl_arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  arena->chunks = NULL;
}

static void *pb_alloc(void *data, size_t size)
{
  return ocl_arena_alloc(data, size);
}

static void pb_free(void *data, void *pointer)
{
  /* The arena frees everything at once. */
  (void)data;
  (void)pointer;
}

/* ---- Bytes and names ----------------------------------------------------- */

bool bin_eq(const ProtobufCBinaryData *b, const char *s)
{
  size_t n = strlen(s);
  return b->len == n && (n == 0 || memcmp(b->data, s, n) == 0);
}

bool bin_eq_bin(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b)
{
  return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data,
                                                    a->len) == 0);
}

void ginput_parse(const ProtobufCBinaryData *input, struct ginput *out)
{
  /* protobuf-c decodes an empty input as {0, NULL}; the passes compare
   * names with memcmp, which must never see a null pointer. */
  static const uint8_t no_name[1];
  const uint8_t *s = input->data != NULL ? input->data : no_name;
  size_t len = input->len;

  out->port = 0;
  if (len > 0 && s[0] == '^') {
    out->name = s + 1;
    out->len = len - 1;
    out->port = -1;
    return;
  }
  /* "name:port": node names never contain ':' in TensorFlow's grammar. */
  size_t colon = len;
  while (colon > 0 && s[colon - 1] != ':')
    colon--;
  if (colon > 0 && colon < len && len - colon <= 9) {
    int port = 0;
    bool digits = true;
    for (size_t i = colon; i < len; i++) {
      if (s[i] < '0' || s[i] > '9') {
        digits = false;
        break;
      }
      port = port * 10 + (s[i] - '0');
    }
    if (digits) {
      out->name = s;
      out->len = colon - 1;
      out->port = port;
      return;
    }
  }
  out->name = s;
  out->len = len;
}

static uint32_t hash_name(const uint8_t *s, size_t len)
{
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ s[i]) * 16777619u;
  return h;
}

long graph_find(const struct graph *g, const uint8_t *name, size_t len)
{
  if (g->num_slots == 0)
    return -1;
  size_t mask = g->num_slots - 1;
  for (size_t i = hash_name(name, len) & mask;; i = (i + 1) & mask) {
    uint32_t slot = g->slots[i];
    if (slot == 0)
      return -1;
    const ProtobufCBinaryData *n = &g->nodes[slot - 1].def->name;
    if (n->len == len && (len == 0 || memcmp(n->data, name, len) == 0))
      return (long)slot - 1;
  }
}

/* Indexes node `index`; false if its name is taken. */
static bool index_insert(struct graph *g, size_t index)
{
  const ProtobufCBinaryData *n = &g->nodes[index].def->name;
  if ((g->num_nodes + 1) * 2 > g->num_slots) {
    size_t num = g->num_slots ? g->num_slots * 2 : 64;
    while (num < (g->num_nodes + 1) * 2)
      num *= 2;
    uint32_t *slots = ocl_arena_alloc(&g->arena, num * sizeof(*slots));
    if (slots == NULL)
      return false;
    for (size_t i = 0; i < g->num_slots; i++) {
      uint32_t s = g->slots[i];
      if (s == 0)
        continue;
      const ProtobufCBinaryData *m = &g->nodes[s - 1].def->name;
      size_t j = hash_name(m->data, m->len) & (num - 1);
      while (slots[j] != 0)
        j = (j + 1) & (num - 1);
      slots[j] = s;
    }
    g->slots = slots;
    g->num_slots = num;
  }
  if (graph_find(g, n->data, n->len) >= 0)
    return false;
  size_t j = hash_name(n->data, n->len) & (g->num_slots - 1);
  while (g->slots[j] != 0)
    j = (j + 1) & (g->num_slots - 1);
  g->slots[j] = (uint32_t)index + 1;
  return true;
}

struct gnode *graph_producer(struct graph *g, const ProtobufCBinaryData *input,
                             int *port)
{
  struct ginput in;
  ginput_parse(input, &in);
  if (port != NULL)
    *port = in.port;
  long i = graph_find(g, in.name, in.len);
  return i < 0 ? NULL : &g->nodes[i];
}

/* Whether a device string names an OPENCL device: ".../device:OPENCL:0" or
 * the short ".../OPENCL:0" (device types match case-insensitively, as
 * TensorFlow's DeviceNameUtils). */
static bool device_is_opencl(const ProtobufCBinaryData *device)
{
  static const char type[] = "OPENCL:";
  const size_t n = sizeof(type) - 1;
  for (size_t i = 0; i + n <= device->len; i++) {
    if (i > 0 && device->data[i - 1] != '/' && device->data[i - 1] != ':')
      continue;
    if (strncasecmp((const char *)device->data + i, type, n) == 0)
      return true;
  }
  return false;
}

/* ---- Attributes ---------------------------------------------------------- */

Tfg__AttrValue *node_attr(const Tfg__NodeDef *node, const char *key)
{
  for (size_t i = 0; i < node->n_attr; i++)
    if (node->attr[i] != NULL && bin_eq(&node->attr[i]->key, key))
      return node->attr[i]->value;
  return NULL;
}

bool node_attr_type(const Tfg__NodeDef *node, const char *key, int *dtype)
{
  const Tfg__AttrValue *v = node_attr(node, key);
  if (v == NULL || v->value_case != TFG__ATTR_VALUE__VALUE_TYPE)
    return false;
  *dtype = v->type;
  return true;
}

bool node_attr_bool(const Tfg__NodeDef *node, const char *key, bool *value)
{
  const Tfg__AttrValue *v = node_attr(node, key);
  if (v == NULL || v->value_case != TFG__ATTR_VALUE__VALUE_B)
    return false;
  *value = v->b != 0;
  return true;
}

bool node_split_inputs(const Tfg__NodeDef *node, size_t *num_data)
{
  size_t i = 0;
  while (i < node->n_input &&
         !(node->input[i].len > 0 && node->input[i].data[0] == '^'))
    i++;
  *num_data = i;
  for (size_t j = i; j < node->n_input; j++)
    if (!(node->input[j].len > 0 && node->input[j].data[0] == '^'))
      return false;
  return true;
}

/* ---- Building ------------------------------------------------------------ */

ProtobufCBinaryData graph_bytes(struct graph *g, const char *s)
{
  size_t n = strlen(s);
  uint8_t *p = ocl_arena_alloc(&g->arena, n + 1);
  if (p == NULL)
    return (ProtobufCBinaryData){0, NULL};
  memcpy(p, s, n);
  return (ProtobufCBinaryData){n, p};
}

static ProtobufCBinaryData concat(struct graph *g, const uint8_t *a,
                                  size_t alen, const char *b)
{
  size_t blen = strlen(b);
  uint8_t *p = ocl_arena_alloc(&g->arena, alen + blen + 1);
  if (p == NULL)
    return (ProtobufCBinaryData){0, NULL};
  if (alen > 0)
    memcpy(p, a, alen);
  memcpy(p + alen, b, blen);
  return (ProtobufCBinaryData){alen + blen, p};
}

ProtobufCBinaryData graph_unique_name(struct graph *g,
                                      const ProtobufCBinaryData *base,
                                      const char *suffix)
{
  char tail[96];
  for (int k = 0;; k++) {
    if (k == 0)
      snprintf(tail, sizeof(tail), "/tfocl_%s", suffix);
    else
      snprintf(tail, sizeof(tail), "/tfocl_%s_%d", suffix, k);
    ProtobufCBinaryData name = concat(g, base->data, base->len, tail);
    if (name.data == NULL || graph_find(g, name.data, name.len) < 0)
      return name;
  }
}

struct gnode *graph_add_node(struct graph *g, ProtobufCBinaryData name,
                             const char *op,
                             const ProtobufCBinaryData *device)
{
  if (name.data == NULL || g->arena.failed)
    return NULL;
  if (g->num_nodes == g->cap_nodes) {
    size_t cap = g->cap_nodes * 2 + 16;
    struct gnode *nodes = ocl_arena_alloc(&g->arena, cap * sizeof(*nodes));
    if (nodes == NULL)
      return NULL;
    if (g->num_nodes > 0)
      memcpy(nodes, g->nodes, g->num_nodes * sizeof(*nodes));
    g->nodes = nodes;
    g->cap_nodes = cap;
  }
  Tfg__NodeDef *def = ocl_arena_alloc(&g->arena, sizeof(*def));
  if (def == NULL)
    return NULL;
  tfg__node_def__init(def);
  def->name = name;
  def->op = graph_bytes(g, op);
  def->device = concat(g, device->data, device->len, "");
  if (def->op.data == NULL || def->device.data == NULL)
    return NULL;
  size_t index = g->num_nodes++;
  g->nodes[index] = (struct gnode){
      .def = def, .opencl = device_is_opencl(device), .touched = true};
  if (!index_insert(g, index)) {
    g->num_nodes--;
    return NULL;
  }
  g->changed = true;
  return &g->nodes[index];
}

bool node_set_inputs(struct graph *g, Tfg__NodeDef *node,
                     const ProtobufCBinaryData *inputs, size_t count)
{
  ProtobufCBinaryData *copy =
      ocl_arena_alloc(&g->arena, (count ? count : 1) * sizeof(*copy));
  if (copy == NULL)
    return false;
  for (size_t i = 0; i < count; i++) {
    if (inputs[i].data == NULL)
      return false;
    copy[i] = inputs[i];
  }
  node->input = copy;
  node->n_input = count;
  g->changed = true;
  return true;
}

ProtobufCBinaryData graph_ref(struct graph *g, const Tfg__NodeDef *node,
                              int port)
{
  char tail[16];
  if (port < 0) {
    uint8_t *p = ocl_arena_alloc(&g->arena, node->name.len + 2);
    if (p == NULL)
      return (ProtobufCBinaryData){0, NULL};
    p[0] = '^';
    if (node->name.len > 0)
      memcpy(p + 1, node->name.data, node->name.len);
    return (ProtobufCBinaryData){node->name.len + 1, p};
  }
  if (port == 0)
    return concat(g, node->name.data, node->name.len, "");
  snprintf(tail, sizeof(tail), ":%d", port);
  return concat(g, node->name.data, node->name.len, tail);
}

bool node_set_attr(struct graph *g, Tfg__NodeDef *node, const char *key,
                   Tfg__AttrValue *value)
{
  if (value == NULL)
    return false;
  for (size_t i = 0; i < node->n_attr; i++) {
    if (node->attr[i] != NULL && bin_eq(&node->attr[i]->key, key)) {
      node->attr[i]->value = value;
      g->changed = true;
      return true;
    }
  }
  Tfg__AttrEntry **attrs =
      ocl_arena_alloc(&g->arena, (node->n_attr + 1) * sizeof(*attrs));
  Tfg__AttrEntry *entry = ocl_arena_alloc(&g->arena, sizeof(*entry));
  if (attrs == NULL || entry == NULL)
    return false;
  tfg__attr_entry__init(entry);
  entry->key = graph_bytes(g, key);
  entry->value = value;
  if (entry->key.data == NULL)
    return false;
  if (node->n_attr > 0)
    memcpy(attrs, node->attr, node->n_attr * sizeof(*attrs));
  attrs[node->n_attr++] = entry;
  node->attr = attrs;
  g->changed = true;
  return true;
}

void node_keep_internal_attrs(Tfg__NodeDef *node)
{
  size_t kept = 0;
  for (size_t i = 0; i < node->n_attr; i++) {
    Tfg__AttrEntry *e = node->attr[i];
    if (e != NULL && e->key.len > 0 && e->key.data[0] == '_')
      node->attr[kept++] = e;
  }
  node->n_attr = kept;
}

static Tfg__AttrValue *attr_new(struct graph *g)
{
  Tfg__AttrValue *v = ocl_arena_alloc(&g->arena, sizeof(*v));
  if (v != NULL)
    tfg__attr_value__init(v);
  return v;
}

Tfg__AttrValue *attr_type(struct graph *g, int dtype)
{
  Tfg__AttrValue *v = attr_new(g);
  if (v != NULL) {
    v->value_case = TFG__ATTR_VALUE__VALUE_TYPE;
    v->type = dtype;
  }
  return v;
}

Tfg__AttrValue *attr_bool(struct graph *g, bool value)
{
  Tfg__AttrValue *v = attr_new(g);
  if (v != NULL) {
    v->value_case = TFG__ATTR_VALUE__VALUE_B;
    v->b = value;
  }
  return v;
}

Tfg__AttrValue *attr_int(struct graph *g, int64_t value)
{
  Tfg__AttrValue *v = attr_new(g);
  if (v != NULL) {
    v->value_case = TFG__ATTR_VALUE__VALUE_I;
    v->i = value;
  }
  return v;
}

Tfg__AttrValue *attr_float(struct graph *g, float value)
{
  Tfg__AttrValue *v = attr_new(g);
  if (v != NULL) {
    v->value_case = TFG__ATTR_VALUE__VALUE_F;
    v->f = value;
  }
  return v;
}

static Tfg__AttrValue *attr_list(struct graph *g)
{
  Tfg__AttrValue *v = attr_new(g);
  Tfg__AttrValue__ListValue *list = ocl_arena_alloc(&g->arena, sizeof(*list));
  if (v == NULL || list == NULL)
    return NULL;
  tfg__attr_value__list_value__init(list);
  v->value_case = TFG__ATTR_VALUE__VALUE_LIST;
  v->list = list;
  return v;
}

Tfg__AttrValue *attr_string(struct graph *g, const char *value)
{
  Tfg__AttrValue *v = attr_new(g);
  if (v == NULL)
    return NULL;
  v->value_case = TFG__ATTR_VALUE__VALUE_S;
  v->s = graph_bytes(g, value);
  return v->s.data != NULL ? v : NULL;
}

Tfg__AttrValue *attr_string_list(struct graph *g, const char *const *items,
                                 size_t count)
{
  Tfg__AttrValue *v = attr_list(g);
  ProtobufCBinaryData *s =
      ocl_arena_alloc(&g->arena, (count ? count : 1) * sizeof(*s));
  if (v == NULL || s == NULL)
    return NULL;
  for (size_t i = 0; i < count; i++) {
    s[i] = graph_bytes(g, items[i]);
    if (s[i].data == NULL)
      return NULL;
  }
  v->list->s = s;
  v->list->n_s = count;
  return v;
}

Tfg__AttrValue *attr_type_list(struct graph *g, const int *items, size_t count)
{
  Tfg__AttrValue *v = attr_list(g);
  int32_t *t = ocl_arena_alloc(&g->arena, (count ? count : 1) * sizeof(*t));
  if (v == NULL || t == NULL)
    return NULL;
  for (size_t i = 0; i < count; i++)
    t[i] = items[i];
  v->list->type = t;
  v->list->n_type = count;
  return v;
}

Tfg__AttrValue *attr_int_list(struct graph *g, const int64_t *items,
                              size_t count)
{
  Tfg__AttrValue *v = attr_list(g);
  int64_t *i = ocl_arena_alloc(&g->arena, (count ? count : 1) * sizeof(*i));
  if (v == NULL || i == NULL)
    return NULL;
  if (count > 0)
    memcpy(i, items, count * sizeof(*i));
  v->list->i = i;
  v->list->n_i = count;
  return v;
}

Tfg__AttrValue *attr_float_list(struct graph *g, const float *items,
                                size_t count)
{
  Tfg__AttrValue *v = attr_list(g);
  float *f = ocl_arena_alloc(&g->arena, (count ? count : 1) * sizeof(*f));
  if (v == NULL || f == NULL)
    return NULL;
  if (count > 0)
    memcpy(f, items, count * sizeof(*f));
  v->list->f = f;
  v->list->n_f = count;
  return v;
}

Tfg__AttrValue *attr_scalar_one(struct graph *g, int dtype)
{
  Tfg__AttrValue *v = attr_new(g);
  Tfg__TensorProto *t = ocl_arena_alloc(&g->arena, sizeof(*t));
  Tfg__TensorShapeProto *shape = ocl_arena_alloc(&g->arena, sizeof(*shape));
  if (v == NULL || t == NULL || shape == NULL)
    return NULL;
  tfg__tensor_proto__init(t);
  tfg__tensor_shape_proto__init(shape);
  t->dtype = dtype;
  t->tensor_shape = shape; /* rank 0 */
  switch (dtype) {
  case GRAPH_DT_FLOAT: {
    float *f = ocl_arena_alloc(&g->arena, sizeof(*f));
    if (f == NULL)
      return NULL;
    *f = 1.0f;
    t->float_val = f;
    t->n_float_val = 1;
    break;
  }
  case GRAPH_DT_HALF: {
    int32_t *h = ocl_arena_alloc(&g->arena, sizeof(*h));
    if (h == NULL)
      return NULL;
    *h = 0x3c00; /* 1.0 as IEEE binary16 */
    t->half_val = h;
    t->n_half_val = 1;
    break;
  }
  case GRAPH_DT_INT64: {
    int64_t *i = ocl_arena_alloc(&g->arena, sizeof(*i));
    if (i == NULL)
      return NULL;
    *i = 1;
    t->int64_val = i;
    t->n_int64_val = 1;
    break;
  }
  default:
    return NULL;
  }
  v->value_case = TFG__ATTR_VALUE__VALUE_TENSOR;
  v->tensor = t;
  return v;
}

void graph_trace(struct graph *g, const char *fmt, ...)
{
  char line[512];
  va_list ap;
  if (g->trace == NULL)
    return;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  g->trace(g->trace_ctx, line);
}

bool graph_has_kernel(const struct graph *g, const char *op, int dtype)
{
  return g->config->has_kernel != NULL &&
         g->config->has_kernel(g->config->has_kernel_ctx, op, dtype);
}

/* ---- Decode, analyse, encode --------------------------------------------- */

static void set_why(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_why(char *why, size_t size, const char *fmt, ...)
{
  va_list ap;
  if (why == NULL || size == 0)
    return;
  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
}

/* protobuf-c 1.4 takes a field number of 0 written as a tag longer than
 * it needs (0x81 0x00) and keeps it as an unknown field, but refuses the
 * one-byte tag it packs it back as: such a graph would encode to bytes
 * that nothing decodes. Field 0 is not valid protobuf; a message holding
 * it, at any depth, does not decode. */
static bool holds_field_zero(const ProtobufCMessage *m)
{
  if (m == NULL)
    return false;
  for (unsigned i = 0; i < m->n_unknown_fields; i++)
    if (m->unknown_fields[i].tag == 0)
      return true;
  const char *base = (const char *)m;
  const ProtobufCMessageDescriptor *d = m->descriptor;
  for (unsigned f = 0; f < d->n_fields; f++) {
    const ProtobufCFieldDescriptor *fd = &d->fields[f];
    if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
      continue;
    if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(const size_t *)(base + fd->quantifier_offset);
      ProtobufCMessage *const *items =
          *(ProtobufCMessage *const *const *)(base + fd->offset);
      for (size_t k = 0; k < n; k++)
        if (holds_field_zero(items[k]))
          return true;
      continue;
    }
    /* A oneof's members share one slot: only the set one is there. */
    if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
        *(const uint32_t *)(base + fd->quantifier_offset) != fd->id)
      continue;
    if (holds_field_zero(*(ProtobufCMessage *const *)(base + fd->offset)))
      return true;
  }
  return false;
}

static Tfg__GraphDef *decode(struct ocl_arena *arena, const void *bytes,
                             size_t size)
{
  ProtobufCAllocator allocator = {
      .alloc = pb_alloc, .free = pb_free, .allocator_data = arena};
  Tfg__GraphDef *def = tfg__graph_def__unpack(&allocator, size, bytes);
  /* The arena owns what unpack allocated: dropping def frees nothing. */
  return def != NULL && holds_field_zero(&def->base) ? NULL : def;
}

static bool encode(const Tfg__GraphDef *def, void **out, size_t *out_size)
{
  size_t size = tfg__graph_def__get_packed_size(def);
  uint8_t *buf = malloc(size ? size : 1);
  if (buf == NULL)
    return false;
  size_t packed = tfg__graph_def__pack(def, buf);
  if (packed != size) {
    free(buf);
    return false;
  }
  *out = buf;
  *out_size = size;
  return true;
}

bool ocl_graph_round_trip(const void *graph, size_t size, void **out,
                          size_t *out_size)
{
  struct ocl_arena arena = {0};
  bool ok = false;
  *out = NULL;
  *out_size = 0;
  Tfg__GraphDef *def = decode(&arena, graph, size);
  if (def != NULL && !arena.failed)
    ok = encode(def, out, out_size);
  ocl_arena_finish(&arena);
  return ok;
}

/* Indexes the decoded nodes, marks where they run, what the caller keeps
 * and who consumes them. False (why set) for a graph the passes cannot
 * reason about. */
static bool analyse(struct graph *g, char *why, size_t why_size)
{
  const struct ocl_graph_config *cfg = g->config;
  size_t n = g->def->n_node;

  g->nodes = ocl_arena_alloc(&g->arena, (n + 16) * sizeof(*g->nodes));
  if (g->nodes == NULL) {
    set_why(why, why_size, "out of host memory");
    return false;
  }
  g->cap_nodes = n + 16;
  for (size_t i = 0; i < n; i++) {
    Tfg__NodeDef *def = g->def->node[i];
    if (def == NULL || def->name.len == 0) {
      set_why(why, why_size, "node %zu has no name", i);
      return false;
    }
    g->nodes[i] = (struct gnode){.def = def,
                                 .opencl = device_is_opencl(&def->device)};
    g->num_nodes = i + 1;
    if (!index_insert(g, i)) {
      if (g->arena.failed)
        set_why(why, why_size, "out of host memory");
      else
        set_why(why, why_size, "two nodes are named '%.*s'",
                (int)(def->name.len > 200 ? 200 : def->name.len),
                (const char *)def->name.data);
      return false;
    }
    g->stats.opencl_nodes += g->nodes[i].opencl;
  }
  g->num_input_nodes = n;
  g->stats.nodes = (int)n;

  for (size_t i = 0; i < n; i++) {
    const Tfg__NodeDef *def = g->nodes[i].def;
    for (size_t j = 0; j < def->n_input; j++) {
      int port;
      struct gnode *p = graph_producer(g, &def->input[j], &port);
      if (p == NULL)
        continue;
      if (port < 0)
        p->ctrl_fanout++;
      else
        p->data_fanout++;
    }
  }
  for (size_t k = 0; k < cfg->num_keep; k++) {
    ProtobufCBinaryData name = {cfg->keep_lengths[k],
                                (uint8_t *)cfg->keep[k]};
    struct ginput in;
    ginput_parse(&name, &in);
    long i = graph_find(g, in.name, in.len);
    if (i >= 0)
      g->nodes[i].kept = true;
  }
  return true;
}

static bool write_graph(struct graph *g, void **out, size_t *out_size)
{
  size_t live = 0;
  Tfg__NodeDef **nodes =
      ocl_arena_alloc(&g->arena, (g->num_nodes + 1) * sizeof(*nodes));
  if (nodes == NULL)
    return false;
  for (size_t i = 0; i < g->num_nodes; i++)
    if (!g->nodes[i].removed)
      nodes[live++] = g->nodes[i].def;
  g->def->node = nodes;
  g->def->n_node = live;
  return encode(g->def, out, out_size);
}

enum ocl_graph_outcome ocl_graph_optimize(
    const void *graph, size_t size, const struct ocl_graph_config *config,
    void **out, size_t *out_size, struct ocl_graph_stats *stats, char *why,
    size_t why_size, void (*trace)(void *ctx, const char *line),
    void *trace_ctx)
{
  struct graph g = {.config = config, .trace = trace, .trace_ctx = trace_ctx};
  enum ocl_graph_outcome outcome = OCL_GRAPH_UNCHANGED;

  *out = NULL;
  *out_size = 0;
  if (why != NULL && why_size > 0)
    why[0] = '\0';
  g.def = decode(&g.arena, graph, size);
  if (g.def == NULL || g.arena.failed) {
    set_why(why, why_size, "the %zu bytes do not decode as a GraphDef", size);
    outcome = OCL_GRAPH_REJECTED;
    goto out;
  }
  if (!analyse(&g, why, why_size)) {
    outcome = OCL_GRAPH_REJECTED;
    goto out;
  }
  if (g.stats.opencl_nodes == 0)
    goto out;
  pass_accumulate(&g);
  if ((config->variables ||
       (config->variables_into_fusion && config->elementwise)) &&
      !g.arena.failed)
    pass_variables(&g);
  if (config->fusion && !g.arena.failed)
    pass_fusion(&g);
  if (config->elementwise && !g.arena.failed)
    pass_elementwise(&g);
  if (!g.arena.failed)
    pass_parallel_concat(&g);
  if (config->host_kernel_label != NULL && !g.arena.failed)
    pass_host_conditions(&g);
  if (g.arena.failed) {
    set_why(why, why_size, "out of host memory while rewriting");
    outcome = OCL_GRAPH_REJECTED;
    goto out;
  }
  if (!g.changed)
    goto out;
  if (!write_graph(&g, out, out_size)) {
    set_why(why, why_size, "out of host memory while encoding");
    outcome = OCL_GRAPH_REJECTED;
    goto out;
  }
  outcome = OCL_GRAPH_CHANGED;
out:
  if (stats != NULL)
    *stats = g.stats;
  ocl_arena_finish(&g.arena);
  return outcome;
}
