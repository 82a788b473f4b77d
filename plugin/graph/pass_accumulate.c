/* Grappler's memory optimizer rewrites an AddN of three or more inputs
 * whose inputs are live at a device's estimated memory peak (its
 * scheduling pass, on by default) into reference-variable ops named after
 * it:
 *   X/tmp_var              TemporaryVariable, ^ the first input's node
 *   X/tmp_var_zeros        ZerosLike(first input)
 *   X/tmp_var_initializer  Assign(X/tmp_var, X/tmp_var_zeros)
 *   X/tmp_var_accum_<i>    AssignAdd(X/tmp_var_initializer, input i)
 *   X                      DestroyTemporaryVariable(X/tmp_var_initializer,
 *                          ^every accum, ^the AddN's later control inputs)
 * A plugin cannot run these: the kernel C API aborts on reference inputs,
 * and the kernels_experimental.h helpers that would serve them are missing
 * from the 2.20 and 2.21 wheels. On OPENCL the graph then fails to run
 * ("No registered 'Assign' OpKernel for 'OPENCL' devices"), and a gradient
 * of a tensor read three times is such an AddN. TensorFlow runs the
 * plugin's optimizer after its own, so this pass puts the AddN back: X
 * becomes AddN(input 0, ..., input N-1) with the control inputs of
 * X/tmp_var and X (the accums' aside), and the others go.
 *
 * Only the exact pattern, all of it on OPENCL, where the plugin has an AddN
 * kernel for the dtype and nothing else reads or keeps the nodes that go.
 * Idempotent: what it writes is an AddN. */
#include <string.h>

#include "graph_internal.h"

#define NAME_ARGS(def) \
  (int)((def)->name.len > 200 ? 200 : (def)->name.len), \
      (const char *)(def)->name.data

/* The producer of `input` (a data input of port 0, or a control input)
 * when it is an OPENCL node running `op` that no pass touched, nothing
 * keeps, and only `data` data inputs and `ctrl` control inputs of other
 * nodes read; else NULL. */
static struct gnode *private_producer(struct graph *g,
                                      const ProtobufCBinaryData *input,
                                      const char *op, int data, int ctrl)
{
  int port;
  struct gnode *p = graph_producer(g, input, &port);
  if (p == NULL || port > 0 || !p->opencl || p->removed || p->touched ||
      p->kept || !bin_eq(&p->def->op, op) || p->data_fanout != data ||
      p->ctrl_fanout != ctrl)
    return NULL;
  return p;
}

/* Whether `input` (a control input) names the node of one of `data`. */
static bool names_a_data_input(const ProtobufCBinaryData *input,
                               const ProtobufCBinaryData *data, size_t count)
{
  struct ginput c;
  ginput_parse(input, &c);
  for (size_t i = 0; i < count; i++) {
    struct ginput d;
    ginput_parse(&data[i], &d);
    if (d.len == c.len && memcmp(d.name, c.name, c.len) == 0)
      return true;
  }
  return false;
}

/* Puts the AddN back at DestroyTemporaryVariable node `destroy`; true if
 * it did. */
static bool restore_addn(struct graph *g, struct gnode *destroy)
{
  Tfg__NodeDef *def = destroy->def;
  size_t num_data;
  int dtype;
  if (!node_split_inputs(def, &num_data) || num_data != 1 ||
      !node_attr_type(def, "T", &dtype))
    return false;
  size_t num_ctrl = def->n_input - num_data;
  /* The initializer is read by X and by every accum; the accums are
   * counted below. */
  int port;
  size_t init_data;
  struct gnode *init = graph_producer(g, &def->input[0], &port);
  if (init == NULL || port != 0 || !init->opencl || init->removed ||
      init->touched || init->kept || init->ctrl_fanout != 0 ||
      !bin_eq(&init->def->op, "Assign") ||
      !node_split_inputs(init->def, &init_data) || init_data != 2 ||
      init->def->n_input != 2)
    return false;
  struct gnode *tmp_var =
      private_producer(g, &init->def->input[0], "TemporaryVariable", 1, 0);
  struct gnode *zeros =
      private_producer(g, &init->def->input[1], "ZerosLike", 1, 0);
  /* ZerosLike reads one tensor; the rewrite gives that read back below. */
  size_t zeros_data;
  if (tmp_var == NULL || zeros == NULL ||
      !node_split_inputs(zeros->def, &zeros_data) || zeros_data != 1)
    return false;

  /* X's control inputs: the accums (AssignAdds of the initializer that
   * only X waits for), then whatever else X waited for. */
  struct gnode **accums =
      ocl_arena_alloc(&g->arena, (num_ctrl + 1) * sizeof(*accums));
  ProtobufCBinaryData *inputs =
      ocl_arena_alloc(&g->arena,
                      (num_ctrl + tmp_var->def->n_input + 1) * sizeof(*inputs));
  if (accums == NULL || inputs == NULL)
    return false;
  size_t num_accums = 0;
  for (size_t i = num_data; i < def->n_input; i++) {
    struct gnode *a = private_producer(g, &def->input[i], "AssignAdd", 0, 1);
    size_t a_data;
    if (a == NULL)
      continue;
    if (!node_split_inputs(a->def, &a_data) || a_data != 2 ||
        graph_producer(g, &a->def->input[0], &port) != init || port != 0)
      return false;
    accums[num_accums] = a;
    inputs[num_accums++] = a->def->input[1];
  }
  if (num_accums == 0 || init->data_fanout != (int)num_accums + 1)
    return false;
  if (!graph_has_kernel(g, "AddN", dtype)) {
    graph_trace(g,
                "accumulate: '%.*s' left alone: no OPENCL AddN kernel "
                "for dtype %d",
                NAME_ARGS(def), dtype);
    g->stats.skipped++;
    return false;
  }
  /* Control inputs: TemporaryVariable's (those before the AddN), then X's
   * own; none that repeats a data input's node. */
  size_t count = num_accums;
  size_t tmp_data;
  if (!node_split_inputs(tmp_var->def, &tmp_data))
    return false;
  for (size_t i = tmp_data; i < tmp_var->def->n_input; i++)
    if (!names_a_data_input(&tmp_var->def->input[i], inputs, num_accums))
      inputs[count++] = tmp_var->def->input[i];
  for (size_t i = num_data; i < def->n_input; i++) {
    int p;
    struct gnode *from = graph_producer(g, &def->input[i], &p);
    bool is_accum = false;
    for (size_t k = 0; k < num_accums && !is_accum; k++)
      is_accum = from == accums[k];
    if (!is_accum)
      inputs[count++] = def->input[i];
  }

  Tfg__NodeDef attrs = *def;
  attrs.attr =
      ocl_arena_alloc(&g->arena, (def->n_attr + 2) * sizeof(*attrs.attr));
  if (attrs.attr == NULL)
    return false;
  attrs.n_attr = 0;
  for (size_t i = 0; i < def->n_attr; i++) {
    Tfg__AttrEntry *e = def->attr[i];
    if (e != NULL && e->key.len > 0 && e->key.data[0] == '_')
      attrs.attr[attrs.n_attr++] = e;
  }
  ProtobufCBinaryData op_name = graph_bytes(g, "AddN");
  if (op_name.data == NULL ||
      !node_set_attr(g, &attrs, "T", attr_type(g, dtype)) ||
      !node_set_attr(g, &attrs, "N", attr_int(g, (int64_t)num_accums)) ||
      !node_set_inputs(g, def, inputs, count)) {
    g->arena.failed = true;
    return false;
  }
  def->attr = attrs.attr;
  def->n_attr = attrs.n_attr;
  def->op = op_name;
  /* The first input is read once less (ZerosLike went). */
  struct gnode *first = graph_producer(g, &zeros->def->input[0], &port);
  if (first != NULL)
    first->data_fanout--;
  tmp_var->removed = zeros->removed = init->removed = true;
  for (size_t k = 0; k < num_accums; k++)
    accums[k]->removed = true;
  destroy->touched = true;
  g->changed = true;
  g->stats.accumulations++;
  graph_trace(g, "accumulate: '%.*s' is an AddN of %zu again", NAME_ARGS(def),
              num_accums);
  return true;
}

void pass_accumulate(struct graph *g)
{
  for (size_t i = 0; i < g->num_input_nodes && !g->arena.failed; i++) {
    struct gnode *n = &g->nodes[i];
    if (n->opencl && !n->removed && !n->touched &&
        bin_eq(&n->def->op, "DestroyTemporaryVariable"))
      restore_addn(g, n);
  }
}
