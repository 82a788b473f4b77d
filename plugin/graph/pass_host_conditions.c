/* Loop conditions on the host: a LogicalAnd or LogicalOr on OPENCL whose
 * operands all live in host memory gets the plugin's host kernel (the
 * "_kernel" label of ocl_graph_config.host_kernel_label).
 *
 *   Less(i, n) --\
 *                 LogicalAnd -> LoopCond -> Switch
 *   Less(t, m) --/
 *
 * Keras' recurrent layers and tf.while_loop with maximum_iterations test
 * their loop this way. The int32 comparisons run on the host (int32 lives
 * in host memory, as on TensorFlow's GPUs), and LoopCond and Switch read
 * the answer there; a LogicalAnd on the device costs two copies to it, a
 * launch, and a copy back that waits for every command queued before it,
 * so each iteration waited for the one before to finish on the device.
 *
 * Operands on the host: an int32 comparison on OPENCL, or a logical op this
 * pass labelled (conditions of more than two terms). The node's readers
 * may be anywhere: a device reader costs one copy instead of the two the
 * operands cost. Idempotent: a labelled node is left alone. */
#include "graph_internal.h"

static bool is_logical(const Tfg__NodeDef *def)
{
  return bin_eq(&def->op, "LogicalAnd") || bin_eq(&def->op, "LogicalOr");
}

static bool has_host_label(const struct graph *g, const Tfg__NodeDef *def)
{
  const Tfg__AttrValue *label = node_attr(def, "_kernel");
  return label != NULL && label->value_case == TFG__ATTR_VALUE__VALUE_S &&
         bin_eq(&label->s, g->config->host_kernel_label);
}

/* Whether output `port` of p is in host memory on OPENCL. */
static bool answers_on_host(const struct graph *g, const struct gnode *p,
                            int port)
{
  static const char *const comparisons[] = {"Less",    "LessEqual",
                                            "Greater", "GreaterEqual",
                                            "Equal",   "NotEqual"};
  const Tfg__NodeDef *def = p->def;
  int dtype;
  if (!p->opencl || p->removed || port != 0)
    return false;
  if (is_logical(def))
    return has_host_label(g, def);
  for (size_t i = 0; i < sizeof(comparisons) / sizeof(comparisons[0]); i++)
    if (bin_eq(&def->op, comparisons[i]))
      return node_attr_type(def, "T", &dtype) && dtype == GRAPH_DT_INT32;
  return false;
}

/* Labels node n if its operands are on the host; true if it did. */
static bool label_if_on_host(struct graph *g, struct gnode *n)
{
  Tfg__NodeDef *def = n->def;
  size_t num_data;
  if (!n->opencl || n->removed || !is_logical(def) ||
      node_attr(def, "_kernel") != NULL || !node_split_inputs(def, &num_data) ||
      num_data != 2)
    return false;
  for (size_t j = 0; j < num_data; j++) {
    int port;
    struct gnode *p = graph_producer(g, &def->input[j], &port);
    if (p == NULL || !answers_on_host(g, p, port))
      return false;
  }
  Tfg__AttrValue *label = attr_string(g, g->config->host_kernel_label);
  if (label == NULL || !node_set_attr(g, def, "_kernel", label))
    return false;
  n->touched = true;
  g->changed = true;
  g->stats.host_conditions++;
  graph_trace(g, "host_conditions: '%.*s' runs on the host", (int)def->name.len,
              (const char *)def->name.data);
  return true;
}

void pass_host_conditions(struct graph *g)
{
  /* Again while a label enabled another: conditions are a few terms deep. */
  bool labelled = true;
  for (int round = 0; labelled && round < 8 && !g->arena.failed; round++) {
    labelled = false;
    for (size_t i = 0; i < g->num_nodes && !g->arena.failed; i++)
      labelled |= label_if_on_host(g, &g->nodes[i]);
  }
}
