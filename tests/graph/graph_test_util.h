/* Helpers of the graph suites: the GraphDefs of tests/graph/data/ and
 * looking into a (decoded) GraphDef. */
#ifndef TFOCL_TESTS_GRAPH_UTIL_H_
#define TFOCL_TESTS_GRAPH_UTIL_H_

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.pb-c.h"

struct blob {
  unsigned char *data;
  size_t size;
};

/* tests/graph/data/<name> ($TFOCL_GRAPH_DATA). */
static inline struct blob load_graph(const char *name)
{
  char path[4096];
  const char *dir = getenv("TFOCL_GRAPH_DATA");
  struct blob b = {NULL, 0};
  snprintf(path, sizeof(path), "%s/%s", dir ? dir : "data", name);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  b.data = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(b.data);
  ck_assert_uint_eq(fread(b.data, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  b.size = (size_t)n;
  return b;
}

static inline bool bytes_is(const ProtobufCBinaryData *b, const char *s)
{
  return b->len == strlen(s) && memcmp(b->data, s, b->len) == 0;
}

static inline Tfg__GraphDef *decode_graph(const void *data, size_t size)
{
  Tfg__GraphDef *g = tfg__graph_def__unpack(NULL, size, data);
  ck_assert_msg(g != NULL, "the result does not decode");
  return g;
}

static inline Tfg__NodeDef *find_node(const Tfg__GraphDef *g, const char *name)
{
  for (size_t i = 0; i < g->n_node; i++)
    if (bytes_is(&g->node[i]->name, name))
      return g->node[i];
  return NULL;
}

static inline size_t count_op(const Tfg__GraphDef *g, const char *op)
{
  size_t n = 0;
  for (size_t i = 0; i < g->n_node; i++)
    n += bytes_is(&g->node[i]->op, op);
  return n;
}

static inline bool has_input(const Tfg__NodeDef *n, const char *input)
{
  for (size_t i = 0; i < n->n_input; i++)
    if (bytes_is(&n->input[i], input))
      return true;
  return false;
}

static inline const Tfg__AttrValue *get_attr(const Tfg__NodeDef *n,
                                             const char *key)
{
  for (size_t i = 0; i < n->n_attr; i++)
    if (bytes_is(&n->attr[i]->key, key))
      return n->attr[i]->value;
  return NULL;
}

/* Every input of every node names a node of the graph. */
static inline void assert_closed(const Tfg__GraphDef *g)
{
  for (size_t i = 0; i < g->n_node; i++) {
    const Tfg__NodeDef *n = g->node[i];
    for (size_t j = 0; j < n->n_input; j++) {
      const ProtobufCBinaryData *in = &n->input[j];
      size_t off = in->len > 0 && in->data[0] == '^' ? 1 : 0;
      size_t len = in->len - off;
      const unsigned char *colon = memchr(in->data + off, ':', len);
      if (colon != NULL)
        len = (size_t)(colon - (in->data + off));
      bool found = false;
      for (size_t k = 0; k < g->n_node && !found; k++)
        found = g->node[k]->name.len == len &&
                memcmp(g->node[k]->name.data, in->data + off, len) == 0;
      ck_assert_msg(found, "node %.*s: input %.*s names no node",
                    (int)n->name.len, (const char *)n->name.data,
                    (int)in->len, (const char *)in->data);
    }
  }
}

/* The node's device is the one named. */
static inline bool on_device(const Tfg__NodeDef *n, const char *device)
{
  return bytes_is(&n->device, device);
}

#define OPENCL_DEVICE "/job:localhost/replica:0/task:0/device:OPENCL:0"

#endif /* TFOCL_TESTS_GRAPH_UTIL_H_ */
