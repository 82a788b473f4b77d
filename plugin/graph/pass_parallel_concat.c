/* tf.parallel_stack on a TensorFlow whose plugins cannot run
 * _ParallelConcatStart (its `shape` attribute needs
 * TF_OpKernelConstruction_GetAttrTensorShape, which the 2.20/2.21 wheels
 * do not export):
 *
 * TensorFlow's ParallelConcatRemovePass turns ParallelConcat into a Start,
 * in-place _ParallelConcatUpdate nodes and an Identity of Start's output
 * that waits for the updates through control edges only. Start and the
 * updates then stay on the CPU while the Identity goes to OPENCL, and the
 * copy of Start's buffer to the device leaves before the updates have
 * written it: the stack comes back as zeros. Putting the Identity on
 * Start's device orders the copy after the updates again.
 *
 * Idempotent: an Identity already on Start's device is left alone. Only
 * where the plugin has no _ParallelConcatStart kernel for the dtype (where
 * it has one, placement keeps all three on OPENCL). */
#include "graph_internal.h"

void pass_parallel_concat(struct graph *g)
{
  for (size_t i = 0; i < g->num_input_nodes; i++) {
    struct gnode *n = &g->nodes[i];
    Tfg__NodeDef *def = n->def;
    if (!n->opencl || n->removed || !bin_eq(&def->op, "Identity") ||
        def->n_input < 1)
      continue;
    int port;
    struct gnode *start = graph_producer(g, &def->input[0], &port);
    if (start == NULL || port != 0 || start->opencl ||
        !bin_eq(&start->def->op, "_ParallelConcatStart"))
      continue;
    /* Only the rewrite reads a Start's (uninitialised) buffer through an
     * Identity; its control inputs come from the updates, directly or
     * through the NoOp TensorFlow groups cross-device control edges in. */
    int dtype;
    if (!node_attr_type(start->def, "dtype", &dtype) ||
        graph_has_kernel(g, "_ParallelConcatStart", dtype))
      continue;
    def->device = start->def->device;
    n->opencl = false;
    n->touched = true;
    g->changed = true;
    graph_trace(g, "parallel_concat: %.*s moved to its Start's device",
                (int)def->name.len, (const char *)def->name.data);
  }
}
