/* The variable-update rewrite: on a TensorFlow that exports no
 * kernels_experimental.h (the 2.20 and 2.21 wheels, tensorflow#126374) a
 * plugin cannot update a resource variable in place, but TensorFlow's own
 * DEVICE_DEFAULT ReadVariableOp and AssignVariableOp run on any device
 * (they move buffers). So each OPENCL update node becomes
 *
 *   ReadVariableOp(resource, ^its control inputs) -> arithmetic on OPENCL
 *   -> AssignVariableOp(resource, new value)
 *
 * with the formulas of the plugin's own kernels (kernels/variables.cl):
 *   AssignAddVariableOp   var + value            AssignSubVariableOp  var - value
 *   ResourceApplyGradientDescent   var - alpha * delta
 *   ResourceApplyMomentum accum' = accum * momentum + grad
 *                         var - (nesterov ? grad * lr + accum' * momentum * lr
 *                                         : lr * accum')
 *   ResourceApplyAdam     m' = m + (1 - beta1) * (grad - m)
 *                         v' = v + (1 - beta2) * (grad * grad - v)
 *                         var - lr * sqrt(1 - beta2_power) / (1 - beta1_power)
 *                               * (nesterov ? m' * beta1 + (1 - beta1) * grad
 *                                           : m') / (epsilon + sqrt(v'))
 *
 * The update node keeps its name: a one-variable update becomes the
 * final AssignVariableOp itself, a several-variable one a NoOp depending on
 * every assign. So whatever named it (^control inputs, fetches, the
 * function's control outputs) now waits for the whole update, and its
 * reads still wait for what it waited for. The graph then holds no
 * update node, so a second run changes nothing.
 *
 * On a TensorFlow that does export it, the plugin's kernels update in
 * place, and only AssignAdd/AssignSubVariableOp whose value an element-wise
 * op computes for it alone are rewritten (config.variables_into_fusion):
 * the element-wise fusion then takes the add in with that op, one launch
 * instead of two (Keras' optimizers update every weight so).
 *
 * A node is left alone (and traced) when the plugin has no OPENCL kernel
 * for one of the arithmetic ops at its dtype, or when it is not the node
 * TensorFlow's op definition describes (input count, dtype attribute). */
#include <string.h>

#include "graph_internal.h"

enum update_kind { ASSIGN_ADD, ASSIGN_SUB, APPLY_GD, APPLY_MOMENTUM, APPLY_ADAM };

struct update_op {
  const char *op;
  enum update_kind kind;
  const char *type_attr;
  size_t num_inputs;
  const char *const *kernels; /* arithmetic ops it becomes, NULL-ended */
};

static const char *const add_kernels[] = {"AddV2", NULL};
static const char *const sub_kernels[] = {"Sub", NULL};
static const char *const gd_kernels[] = {"Mul", "Sub", NULL};
static const char *const momentum_kernels[] = {"Mul", "AddV2", "Sub", "NoOp",
                                               NULL};
static const char *const adam_kernels[] = {"Mul",     "AddV2", "Sub",
                                           "RealDiv", "Sqrt",  "NoOp",
                                           NULL};

static const struct update_op update_ops[] = {
    {"AssignAddVariableOp", ASSIGN_ADD, "dtype", 2, add_kernels},
    {"AssignSubVariableOp", ASSIGN_SUB, "dtype", 2, sub_kernels},
    {"ResourceApplyGradientDescent", APPLY_GD, "T", 3, gd_kernels},
    {"ResourceApplyMomentum", APPLY_MOMENTUM, "T", 5, momentum_kernels},
    {"ResourceApplyAdam", APPLY_ADAM, "T", 10, adam_kernels},
};

/* One rewrite in progress. */
struct rewrite {
  struct graph *g;
  size_t index;              /* the update node (g->nodes may move) */
  int dtype;
  ProtobufCBinaryData device;
  ProtobufCBinaryData name;  /* the update node's name */
  const ProtobufCBinaryData *data;  /* its data inputs */
  const ProtobufCBinaryData *ctrl;  /* its control inputs */
  size_t num_ctrl;
  bool failed;
};

static Tfg__NodeDef *update_node(struct rewrite *r)
{
  return r->g->nodes[r->index].def;
}

/* "<update>/tfocl_<suffix>" = op(inputs), T (or dtype) = the update's
 * dtype, on the update's device. */
static Tfg__NodeDef *emit(struct rewrite *r, const char *suffix,
                          const char *op, const char *type_attr,
                          const ProtobufCBinaryData *inputs, size_t count)
{
  if (r->failed)
    return NULL;
  struct gnode *n = graph_add_node(
      r->g, graph_unique_name(r->g, &r->name, suffix), op, &r->device);
  if (n == NULL || !node_set_inputs(r->g, n->def, inputs, count) ||
      (type_attr != NULL &&
       !node_set_attr(r->g, n->def, type_attr, attr_type(r->g, r->dtype)))) {
    r->failed = true;
    return NULL;
  }
  return n->def;
}

static ProtobufCBinaryData ref(struct rewrite *r, const Tfg__NodeDef *node)
{
  if (node == NULL) {
    r->failed = true;
    return (ProtobufCBinaryData){0, NULL};
  }
  return graph_ref(r->g, node, 0);
}

/* ReadVariableOp(resource, ^every control input of the update). */
static Tfg__NodeDef *read_var(struct rewrite *r, const char *suffix,
                              ProtobufCBinaryData resource)
{
  ProtobufCBinaryData inputs[1 + 64];
  size_t n = 0;
  inputs[n++] = resource;
  for (size_t i = 0; i < r->num_ctrl; i++)
    inputs[n++] = r->ctrl[i];
  return emit(r, suffix, "ReadVariableOp", "dtype", inputs, n);
}

static Tfg__NodeDef *binary(struct rewrite *r, const char *suffix,
                            const char *op, ProtobufCBinaryData a,
                            ProtobufCBinaryData b)
{
  const ProtobufCBinaryData inputs[2] = {a, b};
  return emit(r, suffix, op, "T", inputs, 2);
}

static Tfg__NodeDef *unary(struct rewrite *r, const char *suffix,
                           const char *op, ProtobufCBinaryData x)
{
  return emit(r, suffix, op, "T", &x, 1);
}

static bool set_assign_attrs(struct rewrite *r, Tfg__NodeDef *node)
{
  return node_set_attr(r->g, node, "dtype", attr_type(r->g, r->dtype)) &&
         node_set_attr(r->g, node, "validate_shape", attr_bool(r->g, false));
}

static Tfg__NodeDef *assign(struct rewrite *r, const char *suffix,
                            ProtobufCBinaryData resource,
                            const Tfg__NodeDef *value)
{
  const ProtobufCBinaryData inputs[2] = {resource, ref(r, value)};
  Tfg__NodeDef *node = emit(r, suffix, "AssignVariableOp", NULL, inputs, 2);
  if (node != NULL && !set_assign_attrs(r, node))
    r->failed = true;
  return node;
}

/* The update node becomes AssignVariableOp(resource, value). */
static void become_assign(struct rewrite *r, ProtobufCBinaryData resource,
                          const Tfg__NodeDef *value)
{
  const ProtobufCBinaryData inputs[2] = {resource, ref(r, value)};
  Tfg__NodeDef *node = update_node(r);
  if (r->failed)
    return;
  node->op = graph_bytes(r->g, "AssignVariableOp");
  node_keep_internal_attrs(node);
  if (node->op.data == NULL || !node_set_inputs(r->g, node, inputs, 2) ||
      !set_assign_attrs(r, node))
    r->failed = true;
}

/* The update node becomes NoOp(^each assign). */
static void become_noop(struct rewrite *r, Tfg__NodeDef *const *assigns,
                        size_t count)
{
  ProtobufCBinaryData inputs[3];
  Tfg__NodeDef *node = update_node(r);
  if (r->failed)
    return;
  for (size_t i = 0; i < count; i++)
    inputs[i] = graph_ref(r->g, assigns[i], -1);
  node->op = graph_bytes(r->g, "NoOp");
  node_keep_internal_attrs(node);
  if (node->op.data == NULL || !node_set_inputs(r->g, node, inputs, count))
    r->failed = true;
}

static void rewrite_assign_update(struct rewrite *r, bool add)
{
  Tfg__NodeDef *read = read_var(r, "read", r->data[0]);
  Tfg__NodeDef *sum = binary(r, add ? "add" : "sub", add ? "AddV2" : "Sub",
                             ref(r, read), r->data[1]);
  become_assign(r, r->data[0], sum);
}

/* var - alpha * delta */
static void rewrite_gradient_descent(struct rewrite *r)
{
  const ProtobufCBinaryData *in = r->data;
  Tfg__NodeDef *var = read_var(r, "read_var", in[0]);
  Tfg__NodeDef *step = binary(r, "step", "Mul", in[1], in[2]);
  Tfg__NodeDef *new_var = binary(r, "new_var", "Sub", ref(r, var),
                                 ref(r, step));
  become_assign(r, in[0], new_var);
}

static void rewrite_momentum(struct rewrite *r, bool nesterov)
{
  /* var, accum, lr, grad, momentum */
  const ProtobufCBinaryData *in = r->data;
  Tfg__NodeDef *var = read_var(r, "read_var", in[0]);
  Tfg__NodeDef *accum = read_var(r, "read_accum", in[1]);
  Tfg__NodeDef *decayed = binary(r, "decayed", "Mul", ref(r, accum), in[4]);
  Tfg__NodeDef *new_accum = binary(r, "new_accum", "AddV2", ref(r, decayed),
                                   in[3]);
  Tfg__NodeDef *step;
  if (nesterov) {
    Tfg__NodeDef *g_lr = binary(r, "grad_lr", "Mul", in[3], in[2]);
    Tfg__NodeDef *a_m = binary(r, "accum_momentum", "Mul", ref(r, new_accum),
                               in[4]);
    Tfg__NodeDef *a_m_lr = binary(r, "accum_momentum_lr", "Mul", ref(r, a_m),
                                  in[2]);
    step = binary(r, "step", "AddV2", ref(r, g_lr), ref(r, a_m_lr));
  } else {
    step = binary(r, "step", "Mul", in[2], ref(r, new_accum));
  }
  Tfg__NodeDef *new_var = binary(r, "new_var", "Sub", ref(r, var),
                                 ref(r, step));
  Tfg__NodeDef *assigns[2] = {
      assign(r, "assign_accum", in[1], new_accum),
      assign(r, "assign_var", in[0], new_var),
  };
  become_noop(r, assigns, 2);
}

static void rewrite_adam(struct rewrite *r, bool nesterov)
{
  /* var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad */
  const ProtobufCBinaryData *in = r->data;
  const ProtobufCBinaryData grad = in[9];
  Tfg__NodeDef *var = read_var(r, "read_var", in[0]);
  Tfg__NodeDef *m = read_var(r, "read_m", in[1]);
  Tfg__NodeDef *v = read_var(r, "read_v", in[2]);
  /* The constant 1 waits for a read: a node without inputs would sit in
   * the root frame even when the update is inside a loop body. */
  Tfg__NodeDef *one = NULL;
  if (var != NULL) {
    const ProtobufCBinaryData after_read = graph_ref(r->g, var, -1);
    one = emit(r, "one", "Const", "dtype", &after_read, 1);
  }
  if (one != NULL &&
      !node_set_attr(r->g, one, "value", attr_scalar_one(r->g, r->dtype)))
    r->failed = true;

  Tfg__NodeDef *omb1 = binary(r, "one_minus_beta1", "Sub", ref(r, one), in[6]);
  Tfg__NodeDef *omb2 = binary(r, "one_minus_beta2", "Sub", ref(r, one), in[7]);
  /* m' = m + (1 - beta1) * (grad - m) */
  Tfg__NodeDef *gm = binary(r, "grad_minus_m", "Sub", grad, ref(r, m));
  Tfg__NodeDef *dm = binary(r, "delta_m", "Mul", ref(r, omb1), ref(r, gm));
  Tfg__NodeDef *new_m = binary(r, "new_m", "AddV2", ref(r, m), ref(r, dm));
  /* v' = v + (1 - beta2) * (grad * grad - v) */
  Tfg__NodeDef *gg = binary(r, "grad_squared", "Mul", grad, grad);
  Tfg__NodeDef *ggv = binary(r, "grad_squared_minus_v", "Sub", ref(r, gg),
                             ref(r, v));
  Tfg__NodeDef *dv = binary(r, "delta_v", "Mul", ref(r, omb2), ref(r, ggv));
  Tfg__NodeDef *new_v = binary(r, "new_v", "AddV2", ref(r, v), ref(r, dv));
  /* mul_factor = lr * sqrt(1 - beta2_power) / (1 - beta1_power) */
  Tfg__NodeDef *omb2p = binary(r, "one_minus_beta2_power", "Sub", ref(r, one),
                               in[4]);
  Tfg__NodeDef *omb1p = binary(r, "one_minus_beta1_power", "Sub", ref(r, one),
                               in[3]);
  Tfg__NodeDef *sq = unary(r, "sqrt_one_minus_beta2_power", "Sqrt",
                           ref(r, omb2p));
  Tfg__NodeDef *lr_sq = binary(r, "lr_sqrt", "Mul", in[5], ref(r, sq));
  Tfg__NodeDef *factor = binary(r, "mul_factor", "RealDiv", ref(r, lr_sq),
                                ref(r, omb1p));
  /* num = nesterov ? m' * beta1 + (1 - beta1) * grad : m' */
  Tfg__NodeDef *num = new_m;
  if (nesterov) {
    Tfg__NodeDef *mb1 = binary(r, "m_beta1", "Mul", ref(r, new_m), in[6]);
    Tfg__NodeDef *gb1 = binary(r, "grad_one_minus_beta1", "Mul", ref(r, omb1),
                               grad);
    num = binary(r, "nesterov_m", "AddV2", ref(r, mb1), ref(r, gb1));
  }
  /* var - mul_factor * num / (epsilon + sqrt(v')) */
  Tfg__NodeDef *scaled = binary(r, "scaled", "Mul", ref(r, factor),
                                ref(r, num));
  Tfg__NodeDef *sqv = unary(r, "sqrt_v", "Sqrt", ref(r, new_v));
  Tfg__NodeDef *den = binary(r, "denominator", "AddV2", in[8], ref(r, sqv));
  Tfg__NodeDef *step = binary(r, "step", "RealDiv", ref(r, scaled),
                              ref(r, den));
  Tfg__NodeDef *new_var = binary(r, "new_var", "Sub", ref(r, var),
                                 ref(r, step));
  Tfg__NodeDef *assigns[3] = {
      assign(r, "assign_m", in[1], new_m),
      assign(r, "assign_v", in[2], new_v),
      assign(r, "assign_var", in[0], new_var),
  };
  become_noop(r, assigns, 3);
}

static const struct update_op *find_update_op(const Tfg__NodeDef *node)
{
  for (size_t i = 0; i < sizeof(update_ops) / sizeof(update_ops[0]); i++)
    if (bin_eq(&node->op, update_ops[i].op))
      return &update_ops[i];
  return NULL;
}

#define NAME_ARGS(def) \
  (int)((def)->name.len > 200 ? 200 : (def)->name.len), \
      (const char *)(def)->name.data

/* Where the update runs in place anyway: whether its value is an
 * element-wise op's that only it reads, so that Read -> Add -> Assign puts
 * the add in that op's fused region. */
static bool into_fusion(struct graph *g, const struct update_op *op,
                        const Tfg__NodeDef *def)
{
  size_t num_data;
  int dtype;
  if ((op->kind != ASSIGN_ADD && op->kind != ASSIGN_SUB) ||
      !node_split_inputs(def, &num_data) || num_data != 2 ||
      !node_attr_type(def, op->type_attr, &dtype))
    return false;
  int port;
  struct gnode *value = graph_producer(g, &def->input[1], &port);
  return value != NULL && port == 0 && value->opencl &&
         bin_eq_bin(&value->def->device, &def->device) &&
         elementwise_takes(value, dtype);
}

void pass_variables(struct graph *g)
{
  /* Only the nodes of the input: what this pass adds is no update. */
  for (size_t i = 0; i < g->num_input_nodes && !g->arena.failed; i++) {
    struct gnode *n = &g->nodes[i];
    const Tfg__NodeDef *def = n->def;
    const struct update_op *op;
    size_t num_data;
    int dtype;
    bool nesterov = false;

    if (!n->opencl || n->removed || (op = find_update_op(def)) == NULL)
      continue;
    if (!g->config->variables && !into_fusion(g, op, def))
      continue;
    if (!node_split_inputs(def, &num_data) || num_data != op->num_inputs ||
        !node_attr_type(def, op->type_attr, &dtype)) {
      graph_trace(g, "variables: %s '%.*s' left alone: not the node "
                  "TensorFlow's op definition describes",
                  op->op, NAME_ARGS(def));
      g->stats.skipped++;
      continue;
    }
    if (def->n_input - num_data > 64) {
      graph_trace(g, "variables: %s '%.*s' left alone: %zu control inputs",
                  op->op, NAME_ARGS(def), def->n_input - num_data);
      g->stats.skipped++;
      continue;
    }
    const char *missing = NULL;
    for (const char *const *k = op->kernels; *k != NULL && !missing; k++)
      if (!graph_has_kernel(g, *k, dtype))
        missing = *k;
    if (op->kind == APPLY_ADAM && !missing &&
        dtype != GRAPH_DT_FLOAT && dtype != GRAPH_DT_HALF)
      missing = "Const"; /* the 1 of the formulas: float and half only */
    if (missing) {
      graph_trace(g, "variables: %s '%.*s' left alone: no OPENCL %s kernel "
                  "for dtype %d",
                  op->op, NAME_ARGS(def), missing, dtype);
      g->stats.skipped++;
      continue;
    }
    if (op->kind == APPLY_MOMENTUM || op->kind == APPLY_ADAM)
      node_attr_bool(def, "use_nesterov", &nesterov);

    struct rewrite r = {
        .g = g,
        .index = i,
        .dtype = dtype,
        .device = def->device,
        .name = def->name,
        .data = def->input,
        .ctrl = def->input + num_data,
        .num_ctrl = def->n_input - num_data,
    };
    switch (op->kind) {
    case ASSIGN_ADD: rewrite_assign_update(&r, true); break;
    case ASSIGN_SUB: rewrite_assign_update(&r, false); break;
    case APPLY_GD: rewrite_gradient_descent(&r); break;
    case APPLY_MOMENTUM: rewrite_momentum(&r, nesterov); break;
    case APPLY_ADAM: rewrite_adam(&r, nesterov); break;
    }
    if (r.failed) {
      /* Out of memory half way: the whole result is dropped. */
      g->arena.failed = true;
      return;
    }
    g->nodes[i].touched = true;
    g->stats.variable_updates++;
    graph_trace(g, "variables: %s '%.*s' rewritten (dtype %d%s)", op->op,
                NAME_ARGS(update_node(&r)), dtype,
                nesterov ? ", nesterov" : "");
  }
}
