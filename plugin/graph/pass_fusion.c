/* The contraction fusion, as TensorFlow's remapper does it for CPU and GPU
 * (grappler/optimizers/remapper.cc):
 *
 *   MatMul(a, b) -> BiasAdd(., bias) [-> activation]  =>  _FusedMatMul
 *   Conv2D(x, f) -> BiasAdd(., bias) [-> activation]  =>  _FusedConv2D
 *
 * activation: Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid. The fused node
 * takes the name (and so the consumers, control dependencies and fetches)
 * of the last node of the chain, and TensorFlow's attributes for the fused
 * ops (math_ops.cc, nn_ops.cc): T, transpose_a/transpose_b or the
 * convolution's strides, padding, explicit_paddings, dilations,
 * data_format, use_cudnn_on_gpu (plus TArgs = [T] and num_host_args = 0 for
 * _FusedConv2D); num_args = 1; fused_ops = ["BiasAdd"(, activation)];
 * epsilon = 0; leakyrelu_alpha = the LeakyRelu's alpha.
 *
 * A chain fuses only where nothing else can see its inner nodes: each one
 * has exactly one consumer (the next node), no control edge in or out, is
 * not on the caller's keep list, and all sit on the same OPENCL device with
 * one dtype. And only where this plugin registered an OPENCL kernel for
 * the fused op at that dtype (the caller's has_kernel): without one the
 * pass leaves every graph as it is.
 *
 * And the pooling gradient of a ReLU (fuse_relu_grad_at):
 *
 *   MaxPoolGrad(x, y, dy) -> ReluGrad(., x)  =>  MaxPoolGrad with
 *                                                POOL_RELU_GRAD_ATTR */
#include <string.h>

#include "fused_attrs.h"
#include "graph_internal.h"

static const char *const activations[] = {"Relu", "Relu6", "Elu",
                                          "LeakyRelu", "Tanh", "Sigmoid"};

static bool is_activation(const Tfg__NodeDef *node)
{
  for (size_t i = 0; i < sizeof(activations) / sizeof(activations[0]); i++)
    if (bin_eq(&node->op, activations[i]))
      return true;
  return false;
}

/* Copies attribute `key` from one node to another if it has it. */
static bool copy_attr(struct graph *g, Tfg__NodeDef *to,
                      const Tfg__NodeDef *from, const char *key)
{
  Tfg__AttrValue *v = node_attr(from, key);
  return v == NULL || node_set_attr(g, to, key, v);
}

/* The producer of node's data input 0, if it can disappear into a fusion:
 * an OPENCL node on the same device as `node`, consumed by `node` alone,
 * with no control edges, not kept, not already part of a rewrite. */
static struct gnode *inner_producer(struct graph *g, const Tfg__NodeDef *node)
{
  int port;
  if (node->n_input < 1)
    return NULL;
  struct gnode *p = graph_producer(g, &node->input[0], &port);
  if (p == NULL || port != 0 || !p->opencl || p->removed || p->touched ||
      p->kept || p->data_fanout != 1 || p->ctrl_fanout != 0 ||
      !bin_eq_bin(&p->def->device, &node->device))
    return NULL;
  size_t num_data;
  if (!node_split_inputs(p->def, &num_data) || num_data != p->def->n_input)
    return NULL; /* control inputs */
  return p;
}

static bool same_type(const Tfg__NodeDef *a, const Tfg__NodeDef *b, int *t)
{
  int ta, tb;
  if (!node_attr_type(a, "T", &ta) || !node_attr_type(b, "T", &tb) || ta != tb)
    return false;
  *t = ta;
  return true;
}

/* BiasAdd's data_format, "NHWC" when absent (its default). */
static bool format_is(const Tfg__NodeDef *node, const char *format)
{
  const Tfg__AttrValue *v = node_attr(node, "data_format");
  if (v == NULL)
    return strcmp(format, "NHWC") == 0;
  return v->value_case == TFG__ATTR_VALUE__VALUE_S && bin_eq(&v->s, format);
}

#define NAME_ARGS(def) \
  (int)((def)->name.len > 200 ? 200 : (def)->name.len), \
      (const char *)(def)->name.data

/* The fused node's attributes are built in a list of their own (the
 * root's internal "_" ones, then the fused op's: node_set_attr appends),
 * swapped in by replace_root at the end: a failure half way leaves the
 * root as it was. False when memory runs out. */
static bool internal_attrs(struct graph *g, const Tfg__NodeDef *root,
                           Tfg__NodeDef *attrs)
{
  *attrs = *root;
  attrs->attr =
      ocl_arena_alloc(&g->arena, (root->n_attr + 1) * sizeof(*attrs->attr));
  if (attrs->attr == NULL)
    return false;
  attrs->n_attr = 0;
  for (size_t i = 0; i < root->n_attr; i++) {
    Tfg__AttrEntry *e = root->attr[i];
    if (e != NULL && e->key.len > 0 && e->key.data[0] == '_')
      attrs->attr[attrs->n_attr++] = e;
  }
  return true;
}

/* The root becomes op `op` with those attributes and inputs; `ok` says
 * whether the attributes were all set. False (the arena marked failed)
 * when something could not be. */
static bool replace_root(struct graph *g, Tfg__NodeDef *root, bool ok,
                         const Tfg__NodeDef *attrs, const char *op,
                         const ProtobufCBinaryData *inputs, size_t num_inputs)
{
  ProtobufCBinaryData op_name = graph_bytes(g, op);
  if (!ok || op_name.data == NULL ||
      !node_set_inputs(g, root, inputs, num_inputs)) {
    g->arena.failed = true;
    return false;
  }
  root->attr = attrs->attr;
  root->n_attr = attrs->n_attr;
  root->op = op_name;
  return true;
}

/* Tries the chain that ends at node `index`; true if it fused. */
static bool fuse_at(struct graph *g, size_t index)
{
  struct gnode *root = &g->nodes[index];
  Tfg__NodeDef *act = NULL, *bias_add, *contraction;
  struct gnode *bias_node, *contraction_node;
  int dtype, t2;

  size_t num_data;
  if (is_activation(root->def)) {
    act = root->def;
    if (!node_split_inputs(act, &num_data) || num_data != 1)
      return false;
    bias_node = inner_producer(g, act);
    if (bias_node == NULL || !bin_eq(&bias_node->def->op, "BiasAdd"))
      return false;
  } else if (bin_eq(&root->def->op, "BiasAdd")) {
    bias_node = root;
  } else {
    return false;
  }
  bias_add = bias_node->def;
  if (!node_split_inputs(bias_add, &num_data) || num_data != 2)
    return false;
  contraction_node = inner_producer(g, bias_add);
  if (contraction_node == NULL)
    return false;
  contraction = contraction_node->def;
  bool matmul = bin_eq(&contraction->op, "MatMul");
  if ((!matmul && !bin_eq(&contraction->op, "Conv2D")) ||
      contraction->n_input != 2 || !same_type(contraction, bias_add, &dtype) ||
      (act != NULL && (!same_type(act, bias_add, &t2) || t2 != dtype)))
    return false;
  /* The bias runs along the channels: MatMul's last dimension (BiasAdd's
   * NHWC), the convolution's channel dimension (the same data_format). */
  if (matmul) {
    if (!format_is(bias_add, "NHWC"))
      return false;
  } else {
    bool nhwc = format_is(contraction, "NHWC");
    if ((nhwc ? !format_is(bias_add, "NHWC")
              : !(format_is(contraction, "NCHW") &&
                  format_is(bias_add, "NCHW"))) ||
        node_attr(contraction, "strides") == NULL ||
        node_attr(contraction, "padding") == NULL)
      return false;
  }
  const char *fused_op = matmul ? "_FusedMatMul" : "_FusedConv2D";
  if (!graph_has_kernel(g, fused_op, dtype)) {
    graph_trace(g, "fusion: '%.*s' left alone: no OPENCL %s kernel for "
                "dtype %d",
                NAME_ARGS(root->def), fused_op, dtype);
    g->stats.skipped++;
    return false;
  }

  /* The root keeps its name, its consumers and its own control inputs. */
  Tfg__NodeDef *fused = root->def;
  size_t root_data;
  if (!node_split_inputs(fused, &root_data))
    return false;
  size_t num_ctrl = fused->n_input - root_data;
  ProtobufCBinaryData *inputs =
      ocl_arena_alloc(&g->arena, (3 + num_ctrl) * sizeof(*inputs));
  if (inputs == NULL)
    return false;
  inputs[0] = contraction->input[0];
  inputs[1] = contraction->input[1];
  inputs[2] = bias_add->input[1];
  for (size_t i = 0; i < num_ctrl; i++)
    inputs[3 + i] = fused->input[root_data + i];

  const Tfg__NodeDef *activation = act;
  Tfg__AttrValue *alpha = NULL;
  if (activation != NULL && bin_eq(&activation->op, "LeakyRelu")) {
    alpha = node_attr(activation, "alpha");
    if (alpha == NULL)
      alpha = attr_float(g, 0.2f); /* LeakyRelu's default */
  }
  const char *ops[2] = {"BiasAdd", NULL};
  size_t num_ops = 1;
  if (activation != NULL) {
    char *copy = ocl_arena_alloc(&g->arena, activation->op.len + 1);
    if (copy == NULL)
      return false;
    memcpy(copy, activation->op.data, activation->op.len);
    ops[num_ops++] = copy;
  }
  Tfg__NodeDef attrs;
  if (!internal_attrs(g, fused, &attrs))
    return false;
  bool ok;
  ok = node_set_attr(g, &attrs, "T", attr_type(g, dtype));
  if (matmul) {
    ok = ok && copy_attr(g, &attrs, contraction, "transpose_a") &&
         copy_attr(g, &attrs, contraction, "transpose_b");
  } else {
    const int targs[1] = {dtype};
    ok = ok && node_set_attr(g, &attrs, "TArgs", attr_type_list(g, targs, 1)) &&
         node_set_attr(g, &attrs, "num_host_args", attr_int(g, 0)) &&
         copy_attr(g, &attrs, contraction, "strides") &&
         copy_attr(g, &attrs, contraction, "padding") &&
         copy_attr(g, &attrs, contraction, "explicit_paddings") &&
         copy_attr(g, &attrs, contraction, "dilations") &&
         copy_attr(g, &attrs, contraction, "data_format") &&
         copy_attr(g, &attrs, contraction, "use_cudnn_on_gpu");
  }
  ok = ok && node_set_attr(g, &attrs, "num_args", attr_int(g, 1)) &&
       node_set_attr(g, &attrs, "fused_ops",
                     attr_string_list(g, ops, num_ops)) &&
       node_set_attr(g, &attrs, "epsilon", attr_float(g, 0.0f)) &&
       (alpha == NULL || node_set_attr(g, &attrs, "leakyrelu_alpha", alpha));
  if (!replace_root(g, fused, ok, &attrs, fused_op, inputs, 3 + num_ctrl))
    return false;
  contraction_node->removed = true;
  if (bias_node != root)
    bias_node->removed = true;
  root->touched = contraction_node->touched = bias_node->touched = true;
  g->changed = true;
  g->stats.fusions++;
  graph_trace(g, "fusion: '%.*s' is now %s (BiasAdd%s%s)",
              NAME_ARGS(fused), fused_op, num_ops > 1 ? ", " : "",
              num_ops > 1 ? ops[1] : "");
  return true;
}

/* Element `axis` of a 4-long int list attribute, or -1. */
static int64_t list4(const Tfg__NodeDef *node, const char *key, int axis)
{
  const Tfg__AttrValue *v = node_attr(node, key);
  if (v == NULL || v->value_case != TFG__ATTR_VALUE__VALUE_LIST ||
      v->list == NULL || v->list->n_i != 4)
    return -1;
  return v->list->i[axis];
}

/* The pooling gradient of a ReLU's output: ReluGrad(MaxPoolGrad(x, y, dy),
 * x) becomes MaxPoolGrad(x, y, dy) with POOL_RELU_GRAD_ATTR, whose kernel
 * multiplies by (x > 0) where it writes the window's maximum, x there
 * (the ReLU -> MaxPool of a CNN: one pass over the input-sized gradient
 * instead of two). Where windows do not overlap along rows and columns,
 * the one-pass kernel's case (pool.c); the MaxPoolGrad as inner_producer
 * takes it; the ReluGrad's features x's own tensor. */
static bool fuse_relu_grad_at(struct graph *g, size_t index)
{
  struct gnode *root = &g->nodes[index];
  Tfg__NodeDef *fused = root->def;
  size_t root_data;
  if (!node_split_inputs(fused, &root_data) || root_data != 2)
    return false;
  struct gnode *pool_node = inner_producer(g, fused);
  if (pool_node == NULL || !bin_eq(&pool_node->def->op, "MaxPoolGrad") ||
      pool_node->def->n_input != 3)
    return false;
  const Tfg__NodeDef *pool = pool_node->def;
  int dtype, features_port, x_port;
  const struct gnode *features =
      graph_producer(g, &fused->input[1], &features_port);
  const struct gnode *x = graph_producer(g, &pool->input[0], &x_port);
  if (!same_type(pool, fused, &dtype) || features == NULL || features != x ||
      features_port != x_port)
    return false;
  int h = format_is(pool, "NHWC") ? 1 : format_is(pool, "NCHW") ? 2 : -1;
  if (h < 0 || list4(pool, "ksize", h) < 0 || list4(pool, "ksize", h + 1) < 0 ||
      list4(pool, "strides", h) < list4(pool, "ksize", h) ||
      list4(pool, "strides", h + 1) < list4(pool, "ksize", h + 1))
    return false;
  if (!graph_has_kernel(g, "MaxPoolGrad", dtype))
    return false;

  size_t num_ctrl = fused->n_input - root_data;
  ProtobufCBinaryData *inputs =
      ocl_arena_alloc(&g->arena, (3 + num_ctrl) * sizeof(*inputs));
  Tfg__NodeDef attrs;
  if (inputs == NULL || !internal_attrs(g, fused, &attrs))
    return false;
  for (int i = 0; i < 3; i++)
    inputs[i] = pool->input[i];
  for (size_t i = 0; i < num_ctrl; i++)
    inputs[3 + i] = fused->input[root_data + i];
  bool ok = node_set_attr(g, &attrs, "T", attr_type(g, dtype)) &&
            copy_attr(g, &attrs, pool, "ksize") &&
            copy_attr(g, &attrs, pool, "strides") &&
            copy_attr(g, &attrs, pool, "padding") &&
            copy_attr(g, &attrs, pool, "explicit_paddings") &&
            copy_attr(g, &attrs, pool, "data_format") &&
            node_set_attr(g, &attrs, POOL_RELU_GRAD_ATTR, attr_bool(g, true));
  if (!replace_root(g, fused, ok, &attrs, "MaxPoolGrad", inputs, 3 + num_ctrl))
    return false;
  pool_node->removed = true;
  root->touched = pool_node->touched = true;
  g->changed = true;
  g->stats.fusions++;
  graph_trace(g, "fusion: '%.*s' is now MaxPoolGrad (ReluGrad)",
              NAME_ARGS(fused));
  return true;
}

void pass_fusion(struct graph *g)
{
  /* Longest chains first: an activation takes its BiasAdd before the
   * BiasAdd is fused on its own. */
  for (size_t i = 0; i < g->num_input_nodes && !g->arena.failed; i++) {
    struct gnode *n = &g->nodes[i];
    if (n->opencl && !n->removed && !n->touched && is_activation(n->def))
      fuse_at(g, i);
  }
  for (size_t i = 0; i < g->num_input_nodes && !g->arena.failed; i++) {
    struct gnode *n = &g->nodes[i];
    if (n->opencl && !n->removed && !n->touched &&
        bin_eq(&n->def->op, "BiasAdd"))
      fuse_at(g, i);
  }
  for (size_t i = 0; i < g->num_input_nodes && !g->arena.failed; i++) {
    struct gnode *n = &g->nodes[i];
    if (n->opencl && !n->removed && !n->touched &&
        bin_eq(&n->def->op, "ReluGrad"))
      fuse_relu_grad_at(g, i);
  }
}
