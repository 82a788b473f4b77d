/* tfocl graph optimizer: the in-memory graph the passes share (model.c).
 *
 * Ownership: one arena per optimization owns every byte of the decoded
 * GraphDef (protobuf-c allocates through it) and of what the passes add;
 * it goes in one piece when the optimization ends. Nothing is freed
 * before: a node a pass drops is only marked removed. */
#ifndef TFOCL_PLUGIN_GRAPH_GRAPH_INTERNAL_H_
#define TFOCL_PLUGIN_GRAPH_GRAPH_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "graph.pb-c.h"

/* ---- Arena --------------------------------------------------------------- */

struct ocl_arena_chunk;

struct ocl_arena {
  struct ocl_arena_chunk *chunks;
  bool failed; /* an allocation failed: the result must not be used */
};

/* 16-byte aligned, zeroed; NULL (and arena->failed) when out of memory. */
void *ocl_arena_alloc(struct ocl_arena *arena, size_t size);
void ocl_arena_finish(struct ocl_arena *arena);

/* ---- Graph --------------------------------------------------------------- */

/* A node and what the passes need to know about it. */
struct gnode {
  Tfg__NodeDef *def;
  bool opencl;       /* placed on an OPENCL device */
  bool kept;         /* named by the caller's keep list */
  bool removed;      /* dropped by a pass */
  bool touched;      /* made or changed by a pass in this run */
  int data_fanout;   /* data inputs of other nodes naming it (any port) */
  int ctrl_fanout;   /* ^control inputs of other nodes naming it */
};

struct graph {
  struct ocl_arena arena;
  const struct ocl_graph_config *config;
  struct ocl_graph_stats stats;
  void (*trace)(void *ctx, const char *line);
  void *trace_ctx;
  Tfg__GraphDef *def;
  struct gnode *nodes;
  size_t num_nodes, cap_nodes;
  size_t num_input_nodes; /* nodes of the input; later ones were added */
  /* Open-addressing index of node names: slot = node index + 1, 0 empty. */
  uint32_t *slots;
  size_t num_slots;
  bool changed;
};

/* A parsed input: "name", "name:port" or "^name". */
struct ginput {
  const uint8_t *name; /* never NULL, even for an empty input */
  size_t len;
  int port;     /* -1 for a control input */
};

void ginput_parse(const ProtobufCBinaryData *input, struct ginput *out);

/* Index of the node called name[0..len), or -1. */
long graph_find(const struct graph *g, const uint8_t *name, size_t len);
/* The producer of an input, or NULL when no node of the graph has the name
 * (the passes then treat it as something they must not touch). */
struct gnode *graph_producer(struct graph *g, const ProtobufCBinaryData *input,
                             int *port);

bool bin_eq(const ProtobufCBinaryData *b, const char *s);
bool bin_eq_bin(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b);

/* Attribute lookups; NULL / false when absent or of another kind. */
Tfg__AttrValue *node_attr(const Tfg__NodeDef *node, const char *key);
bool node_attr_type(const Tfg__NodeDef *node, const char *key, int *dtype);
bool node_attr_bool(const Tfg__NodeDef *node, const char *key, bool *value);
/* The node's data inputs come first, then its ^control inputs. False if a
 * data input follows a control input (not a GraphDef TensorFlow writes). */
bool node_split_inputs(const Tfg__NodeDef *node, size_t *num_data);

/* ---- Building ------------------------------------------------------------ */

/* A copy of s in the arena as bytes. */
ProtobufCBinaryData graph_bytes(struct graph *g, const char *s);
/* A node name not yet in the graph: "<base>/tfocl_<suffix>", then with
 * "_1", "_2", ... until free. */
ProtobufCBinaryData graph_unique_name(struct graph *g,
                                      const ProtobufCBinaryData *base,
                                      const char *suffix);
/* Appends a new node (op, name, `device` copied) and indexes it; NULL if
 * out of memory. Its inputs and attributes start empty. */
struct gnode *graph_add_node(struct graph *g, ProtobufCBinaryData name,
                             const char *op,
                             const ProtobufCBinaryData *device);
/* Sets a node's inputs; each entry is an input string as TensorFlow writes
 * it. The array is copied into the arena. */
bool node_set_inputs(struct graph *g, Tfg__NodeDef *node,
                     const ProtobufCBinaryData *inputs, size_t count);
/* An input naming `node` at `port` (0: plain name), or ^node (port -1). */
ProtobufCBinaryData graph_ref(struct graph *g, const Tfg__NodeDef *node,
                              int port);
/* Replaces or adds attribute `key`. */
bool node_set_attr(struct graph *g, Tfg__NodeDef *node, const char *key,
                   Tfg__AttrValue *value);
/* Keeps only the attributes whose names start with '_' (TensorFlow's
 * internal ones, valid on any op). */
void node_keep_internal_attrs(Tfg__NodeDef *node);

Tfg__AttrValue *attr_type(struct graph *g, int dtype);
Tfg__AttrValue *attr_bool(struct graph *g, bool value);
Tfg__AttrValue *attr_int(struct graph *g, int64_t value);
Tfg__AttrValue *attr_float(struct graph *g, float value);
Tfg__AttrValue *attr_string(struct graph *g, const char *value);
Tfg__AttrValue *attr_string_list(struct graph *g, const char *const *items,
                                 size_t count);
Tfg__AttrValue *attr_type_list(struct graph *g, const int *items,
                               size_t count);
Tfg__AttrValue *attr_int_list(struct graph *g, const int64_t *items,
                              size_t count);
Tfg__AttrValue *attr_float_list(struct graph *g, const float *items,
                                size_t count);
/* A scalar tensor of `dtype` (float, half or int64) holding 1. NULL for
 * another dtype. */
Tfg__AttrValue *attr_scalar_one(struct graph *g, int dtype);

/* One line to the caller's trace. */
void graph_trace(struct graph *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Whether the plugin has an OPENCL kernel for op/dtype. */
bool graph_has_kernel(const struct graph *g, const char *op, int dtype);

/* ---- Passes (pass_variables.c, pass_fusion.c, pass_elementwise.c,
 * pass_host_conditions.c, pass_parallel_concat.c, pass_accumulate.c) ------ */

void pass_variables(struct graph *g);
void pass_fusion(struct graph *g);
void pass_elementwise(struct graph *g);
/* Whether the element-wise fusion would take producer p, of `dtype`, into
 * the region of its one reader. */
bool elementwise_takes(const struct gnode *p, int dtype);
void pass_parallel_concat(struct graph *g);
void pass_accumulate(struct graph *g);
void pass_host_conditions(struct graph *g);

/* TensorFlow's DataType values the passes name. */
enum {
  GRAPH_DT_FLOAT = 1,
  GRAPH_DT_DOUBLE = 2,
  GRAPH_DT_INT32 = 3,
  GRAPH_DT_INT64 = 9,
  GRAPH_DT_HALF = 19,
};

#endif /* TFOCL_PLUGIN_GRAPH_GRAPH_INTERNAL_H_ */
