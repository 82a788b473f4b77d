/* The element-wise fusion: a region of element-wise ops on one OPENCL
 * device whose inner results nothing outside it reads becomes one
 * _TfoclFusedElementwise node (fused_program.h), one kernel launch instead
 * of one per op.
 *
 *   Sub(grad, m) -> Mul(., 0.1) -> AddV2(m, .)   =>   _TfoclFusedElementwise
 *                                                     (m, grad), 3 ops
 *
 * The ops: fused_opcode_of()'s list (arithmetic, Pow, activations and
 * their gradients) on float and half, the integer ones on int64, AddN of
 * 2 to 8 inputs (its adds in input order, as the plugin's AddN), Cast from
 * float, half or int64 to float or half (Truncate false), and scalar
 * float/half/int64 Consts, whose values go into the program (a Const
 * nothing else reads then goes). A scalar Const with control inputs only
 * (gradient code's tf.control_dependencies: _SquareGrad's 2 waits for
 * the incoming gradient) folds too where every node it waits for is in
 * the region, and it and its waits go with them.
 *
 * A region grows from a float or half root through the data inputs: a
 * producer joins when it is such an op on the root's device, every node
 * reading it is already in the region, and nothing else can see it (no
 * control edge in or out, not on the keep list; waiting Consts aside,
 * which must then fold: where one does not, the region is built again
 * without the producer it waits for). So a value the region
 * reads twice (Keras' step counter, cast once, raised to two powers) is
 * computed once inside it. Roots are taken consumers first (the graph in
 * reverse topological order): an op that joined no region of its readers
 * is one. The root keeps its name, its control inputs, its internal "_"
 * attributes and so its consumers, control dependants and fetches. A
 * region fuses when it has at least two ops and one input tensor, fits the
 * program's limits (8 inputs, 64 instructions: a region that does not is
 * cut at a smaller depth, the cut parts becoming roots later), and the
 * plugin has the fused kernel for the output's dtype. The output shape is
 * the broadcast of the inputs' shapes: broadcasting composes, so a region
 * of broadcasting ops is one broadcast; only graphs that would fail anyway
 * (the relu gradients' equal-shape check) fail differently.
 *
 * A value of one element (a scalar Const, a scalar variable's read, what
 * is computed from those only) is the same for every output element, but
 * a program computes it again for each. Where it involves a libm function
 * (Pow, Exp, Log, the activations' tanh, exp, erf) and the region's output
 * is not known to be one element too, it stays out of the region: it
 * becomes a (one-element) region of its own, one short launch, instead of
 * a pow per element (Keras' Adam: beta_1^t per weight). Shapes come from
 * what the GraphDef says (Const values, the _handle_shapes of variable
 * handles, Placeholder shapes, _output_shapes); unknown counts as more.
 *
 * A region input that a Tile makes (a reduction's gradient repeats a
 * [1, 1, 1, C] tensor over N, H, W) is read before the Tile, the
 * multiples in the node's "tiles" attribute (_TfoclFusedElementwiseTiled):
 * the kernel broadcasts where the repeated dim is 1 and indexes the copies
 * where it is not, so nothing writes or reads the repeated tensor. The
 * Tile has to be on the root's device with Const multiples of at most
 * FUSED_TILE_RANK_MAX; it goes when the region was its only reader.
 *
 * Idempotent: the fused node is no op this pass knows, so a second run
 * finds only what the first left alone, for the same reasons. A while
 * loop's frame is a cycle only through its NextIteration -> Merge back
 * edges, which the order leaves out, so loop bodies fuse too (a region's
 * ops meet through element-wise data edges, never through Enter, Exit or
 * NextIteration, so it stays within one frame and one iteration); nodes on
 * any other cycle (no graph TensorFlow runs has one) are left alone. */
#include <string.h>

#include "fused_program.h"
#include "graph_internal.h"

/* What the pass knows of a node it can put in a program. */
struct eop {
  int opcode;        /* enum fused_opcode */
  int arity;         /* data inputs */
  int dtype;         /* of its output */
  int operand_dtype; /* of its inputs */
};

static bool is_float_dtype(int dtype)
{
  return dtype == GRAPH_DT_FLOAT || dtype == GRAPH_DT_HALF;
}

static bool is_value_dtype(int dtype)
{
  return is_float_dtype(dtype) || dtype == GRAPH_DT_INT64;
}

/* Whether node n is an element-wise op a program can hold. */
static bool classify(const struct gnode *n, struct eop *e)
{
  const Tfg__NodeDef *def = n->def;
  size_t num_data;
  if (!n->opencl || n->removed || !node_split_inputs(def, &num_data))
    return false;
  if (bin_eq(&def->op, "Cast")) {
    int src, dst;
    bool truncate = false;
    if (!node_attr_type(def, "SrcT", &src) ||
        !node_attr_type(def, "DstT", &dst) || !is_value_dtype(src) ||
        !is_float_dtype(dst) || num_data != 1)
      return false;
    if (node_attr(def, "Truncate") != NULL &&
        (!node_attr_bool(def, "Truncate", &truncate) || truncate))
      return false;
    *e = (struct eop){FUSED_CAST, 1, dst, src};
    return true;
  }
  int dtype;
  if (bin_eq(&def->op, "AddN")) {
    /* A chain of adds, left to right as the plugin's AddN sums. */
    const Tfg__AttrValue *count = node_attr(def, "N");
    if (count == NULL || count->value_case != TFG__ATTR_VALUE__VALUE_I ||
        count->i != (int64_t)num_data || num_data < 2 ||
        num_data > FUSED_MAX_INPUTS || !node_attr_type(def, "T", &dtype) ||
        !is_value_dtype(dtype))
      return false;
    *e = (struct eop){FUSED_ADD, (int)num_data, dtype, dtype};
    return true;
  }
  int opcode = fused_opcode_of(def->op.data, def->op.len);
  if (opcode == 0 || !node_attr_type(def, "T", &dtype) ||
      !is_value_dtype(dtype) ||
      (dtype == GRAPH_DT_INT64 && !fused_op_takes_int64(opcode)) ||
      num_data != (size_t)fused_op_arity(opcode))
    return false;
  *e = (struct eop){opcode, fused_op_arity(opcode), dtype, dtype};
  return true;
}

/* binary16 bits to float, exactly. */
static float half_to_float(uint16_t bits)
{
  uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu, out;
  if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    out = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    out = sign;
  } else {
    int e = -1; /* subnormal: normalise */
    do {
      mant <<= 1;
      e++;
    } while (!(mant & 0x400u));
    out = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &out, sizeof(f));
  return f;
}

/* A rank-0 Const of `dtype` with no control inputs: its value as a float
 * (half exactly; int64 only when the float holds it exactly). Values from
 * tensor_content assume a little-endian host, as TensorFlow's do. */
static bool const_value(const struct gnode *n, int dtype, float *value)
{
  const Tfg__NodeDef *def = n->def;
  int t;
  if (n->removed || !bin_eq(&def->op, "Const") ||
      !node_attr_type(def, "dtype", &t) || t != dtype)
    return false;
  const Tfg__AttrValue *v = node_attr(def, "value");
  if (v == NULL || v->value_case != TFG__ATTR_VALUE__VALUE_TENSOR ||
      v->tensor == NULL || v->tensor->dtype != dtype)
    return false;
  const Tfg__TensorProto *tp = v->tensor;
  size_t content = tp->tensor_content.len;
  if (tp->tensor_shape != NULL &&
      (tp->tensor_shape->n_dim != 0 || tp->tensor_shape->unknown_rank))
    return false;
  switch (dtype) {
  case GRAPH_DT_FLOAT:
    if (tp->n_float_val == 1 && content == 0)
      *value = tp->float_val[0];
    else if (tp->n_float_val == 0 && content == sizeof(float))
      memcpy(value, tp->tensor_content.data, sizeof(float));
    else
      return false;
    return true;
  case GRAPH_DT_HALF: {
    uint16_t bits;
    if (tp->n_half_val == 1 && content == 0)
      bits = (uint16_t)tp->half_val[0];
    else if (tp->n_half_val == 0 && content == 2)
      memcpy(&bits, tp->tensor_content.data, 2);
    else
      return false;
    *value = half_to_float(bits);
    return true;
  }
  case GRAPH_DT_INT64: {
    int64_t i;
    if (tp->n_int64_val == 1 && content == 0)
      i = tp->int64_val[0];
    else if (tp->n_int64_val == 0 && content == sizeof(i))
      memcpy(&i, tp->tensor_content.data, sizeof(i));
    else
      return false;
    /* What the program's decoder takes: |i| < 2^24 is always exact. */
    if (i <= -(1 << 24) || i >= (1 << 24))
      return false;
    *value = (float)i;
    return true;
  }
  default:
    return false;
  }
}

/* A scalar Const of `dtype` with no inputs: its value. */
static bool scalar_const(const struct gnode *n, int dtype, float *value)
{
  return n->def->n_input == 0 && const_value(n, dtype, value);
}

/* A scalar Const whose inputs are all control inputs (gradient code's
 * tf.control_dependencies: _SquareGrad's 2 waits for the gradient), that
 * nothing waits for or fetches: a region may take its value where every
 * node it waits for is in the region too, and then it goes. */
static bool controlled_const(const struct gnode *n)
{
  const Tfg__NodeDef *def = n->def;
  size_t num_data;
  int t;
  float value;
  return !n->removed && !n->kept && n->ctrl_fanout == 0 && def->n_input > 0 &&
         node_split_inputs(def, &num_data) && num_data == 0 &&
         node_attr_type(def, "dtype", &t) && is_value_dtype(t) &&
         const_value(n, t, &value);
}

/* ---- The graph's order --------------------------------------------------- */

/* Whether the edge from p into n is a loop's back edge: a while loop's
 * frame (Keras' recurrent layers, tf.while_loop once lowered) closes its
 * cycle through NextIteration into Merge, and Grappler's own order leaves
 * that edge out so the body sorts like any other graph. */
static bool back_edge(const struct gnode *p, const struct gnode *n)
{
  return (bin_eq(&p->def->op, "NextIteration") ||
          bin_eq(&p->def->op, "RefNextIteration")) &&
         (bin_eq(&n->def->op, "Merge") || bin_eq(&n->def->op, "RefMerge"));
}

/* Every node, producers before consumers (data and control edges, less
 * loops' back edges); nodes on any other cycle, and what they feed, are
 * missing. Returns the count, -1 out of memory. */
static long topo_order(struct graph *g, size_t *order)
{
  size_t n = g->num_nodes;
  uint32_t *pending = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(*pending));
  /* Consumers of each node, as a compressed list. */
  size_t *start = ocl_arena_alloc(&g->arena, (n + 2) * sizeof(*start));
  if (pending == NULL || start == NULL)
    return -1;
  size_t edges = 0;
  for (size_t i = 0; i < n; i++) {
    const Tfg__NodeDef *def = g->nodes[i].def;
    if (g->nodes[i].removed)
      continue;
    for (size_t j = 0; j < def->n_input; j++) {
      struct gnode *p = graph_producer(g, &def->input[j], NULL);
      if (p != NULL && !p->removed && !back_edge(p, &g->nodes[i])) {
        start[(size_t)(p - g->nodes) + 1]++;
        pending[i]++;
        edges++;
      }
    }
  }
  for (size_t i = 0; i < n; i++)
    start[i + 1] += start[i];
  size_t *fill = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(*fill));
  size_t *consumers =
      ocl_arena_alloc(&g->arena, (edges + 1) * sizeof(*consumers));
  if (fill == NULL || consumers == NULL)
    return -1;
  memcpy(fill, start, n * sizeof(*fill));
  for (size_t i = 0; i < n; i++) {
    const Tfg__NodeDef *def = g->nodes[i].def;
    if (g->nodes[i].removed)
      continue;
    for (size_t j = 0; j < def->n_input; j++) {
      struct gnode *p = graph_producer(g, &def->input[j], NULL);
      if (p != NULL && !p->removed && !back_edge(p, &g->nodes[i]))
        consumers[fill[p - g->nodes]++] = i;
    }
  }
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    if (!g->nodes[i].removed && pending[i] == 0)
      order[count++] = i;
  for (size_t k = 0; k < count; k++) {
    size_t p = order[k];
    for (size_t c = start[p]; c < start[p + 1]; c++)
      if (--pending[consumers[c]] == 0)
        order[count++] = consumers[c];
  }
  return (long)count;
}

/* Data uses of every node by the others, counted again (earlier passes
 * added and dropped nodes). */
static void count_uses(struct graph *g)
{
  for (size_t i = 0; i < g->num_nodes; i++)
    g->nodes[i].data_fanout = g->nodes[i].ctrl_fanout = 0;
  for (size_t i = 0; i < g->num_nodes; i++) {
    const Tfg__NodeDef *def = g->nodes[i].def;
    if (g->nodes[i].removed)
      continue;
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
}

/* ---- Values of one element ------------------------------------------------ */

/* A shape of known dims holding one element. */
static bool shape_single(const Tfg__TensorShapeProto *shape)
{
  if (shape == NULL)
    return true; /* a TensorProto without a shape is a scalar */
  if (shape->unknown_rank)
    return false;
  for (size_t d = 0; d < shape->n_dim; d++)
    if (shape->dim[d] == NULL || shape->dim[d]->size != 1)
      return false;
  return true;
}

/* A list(shape) attribute of one shape holding one element. */
static bool shape_list_single(const Tfg__AttrValue *v)
{
  return v != NULL && v->value_case == TFG__ATTR_VALUE__VALUE_LIST &&
         v->list != NULL && v->list->n_shape == 1 &&
         shape_single(v->list->shape[0]);
}

/* Whether a resource input names a variable of one element. */
static bool handle_single(const struct gnode *h)
{
  if (h == NULL)
    return false;
  const Tfg__AttrValue *shape = node_attr(h->def, "shape");
  if (bin_eq(&h->def->op, "VarHandleOp"))
    return shape != NULL &&
           shape->value_case == TFG__ATTR_VALUE__VALUE_SHAPE &&
           shape_single(shape->shape);
  return shape_list_single(node_attr(h->def, "_handle_shapes"));
}

/* Whether node i's output 0 is known to hold one element; `single` holds
 * the answer for its producers already (topological order). */
static bool known_single(struct graph *g, size_t i, const bool *single)
{
  const struct gnode *n = &g->nodes[i];
  const Tfg__NodeDef *def = n->def;
  if (shape_list_single(node_attr(def, "_output_shapes")))
    return true;
  if (bin_eq(&def->op, "Const")) {
    const Tfg__AttrValue *v = node_attr(def, "value");
    return v != NULL && v->value_case == TFG__ATTR_VALUE__VALUE_TENSOR &&
           v->tensor != NULL && shape_single(v->tensor->tensor_shape);
  }
  if (bin_eq(&def->op, "Placeholder")) {
    const Tfg__AttrValue *v = node_attr(def, "shape");
    return v != NULL && v->value_case == TFG__ATTR_VALUE__VALUE_SHAPE &&
           v->shape != NULL && shape_single(v->shape);
  }
  if (bin_eq(&def->op, "ReadVariableOp"))
    return def->n_input > 0 &&
           handle_single(graph_producer(g, &def->input[0], NULL));
  /* Element-wise ops, fused ones included: one element from one element. */
  struct eop e;
  if (!classify(n, &e) && !bin_eq(&def->op, FUSED_OP_NAME))
    return false;
  size_t num_data;
  if (!node_split_inputs(def, &num_data) || num_data == 0)
    return false;
  for (size_t j = 0; j < num_data; j++) {
    struct gnode *p = graph_producer(g, &def->input[j], NULL);
    if (p == NULL || !single[p - g->nodes])
      return false;
  }
  return true;
}

/* single[i]: node i holds one element; costly[i]: it is, or is computed
 * from, a costly op of one-element values (what a region of many
 * elements must not take in). Producers first. */
static void find_singles(struct graph *g, const size_t *order, long count,
                         bool *single, bool *costly)
{
  for (long k = 0; k < count; k++) {
    size_t i = order[k];
    single[i] = known_single(g, i, single);
    struct eop e;
    if (!single[i] || !classify(&g->nodes[i], &e))
      continue;
    costly[i] = fused_op_is_costly(e.opcode);
    const Tfg__NodeDef *def = g->nodes[i].def;
    for (int j = 0; j < e.arity && !costly[i]; j++) {
      struct gnode *p = graph_producer(g, &def->input[j], NULL);
      costly[i] = p != NULL && costly[p - g->nodes];
    }
  }
}

/* ---- One region ------------------------------------------------------------ */

/* Per-node state of the region being grown, reset after each. */
struct marks {
  const bool *single; /* find_singles' answers */
  const bool *costly;
  /* Per node: how many controlled_const()s wait for it. */
  const int *const_waiters;
  int *level;   /* distance from the root; -1 outside the region */
  int *reads;   /* data reads of the node by region members */
  int *want;    /* the deepest level a reader asks for it at */
  size_t *touched;
  size_t num_touched;
};

/* A region and the program written from it. Operands refer to inputs as
 * -(k + 1) and to instructions by index until the program is written. */
struct region {
  struct graph *g;
  struct marks *m;
  size_t root;
  int level_limit;
  int deepest; /* level of the deepest member */
  bool overflow;
  size_t members[FUSED_MAX_INSNS + 1]; /* the root first */
  int num_members;
  int num_inputs;
  struct ginput inputs[FUSED_MAX_INPUTS];
  ProtobufCBinaryData input_refs[FUSED_MAX_INPUTS];
  int input_dtypes[FUSED_MAX_INPUTS];
  int num_insns, real_ops;
  int ops[FUSED_MAX_INSNS], a[FUSED_MAX_INSNS], b[FUSED_MAX_INSNS];
  int value_of[FUSED_MAX_INSNS + 1]; /* per member, -1 not yet written */
  int num_constants;
  float constants[FUSED_MAX_CONSTANTS];
  /* Consts read (one entry per read). */
  int num_const_reads;
  size_t const_reads[2 * FUSED_MAX_INSNS];
  /* Inputs standing for a Tile of themselves (tile_rank[k] > 0), and the
   * Tiles so bypassed (one entry per read). */
  int tile_rank[FUSED_MAX_INPUTS];
  int64_t tiles[FUSED_MAX_INPUTS][FUSED_TILE_RANK_MAX];
  int num_tile_reads;
  size_t tile_reads[2 * FUSED_MAX_INSNS];
  /* Producers kept out: a Const waiting for them did not fold. */
  const size_t *blocked;
  int num_blocked;
};

static void touch(struct marks *m, size_t i)
{
  if (m->reads[i] == 0 && m->level[i] < 0 && m->want[i] < 0)
    m->touched[m->num_touched++] = i;
}

static void marks_reset(struct marks *m)
{
  for (size_t k = 0; k < m->num_touched; k++) {
    size_t i = m->touched[k];
    m->level[i] = m->want[i] = -1;
    m->reads[i] = 0;
  }
  m->num_touched = 0;
}

/* Whether producer p, read at `port` as `dtype` by a member, may join a
 * region rooted on `device` (its readers aside). */
static bool joinable(const struct region *r, const struct gnode *p, int port,
                     int dtype, const ProtobufCBinaryData *device)
{
  struct eop e;
  size_t num_data;
  size_t pi = (size_t)(p - r->g->nodes);
  /* What waits for p must be Consts the region may fold (checked once
   * the region is complete, fuse_root). */
  if (p->ctrl_fanout != r->m->const_waiters[pi])
    return false;
  for (int b = 0; b < r->num_blocked; b++)
    if (r->blocked[b] == pi)
      return false;
  return port == 0 && classify(p, &e) && e.dtype == dtype && !p->kept &&
         node_split_inputs(p->def, &num_data) && num_data == p->def->n_input &&
         bin_eq_bin(&p->def->device, device);
}

bool elementwise_takes(const struct gnode *p, int dtype)
{
  struct eop e;
  size_t num_data;
  return classify(p, &e) && e.dtype == dtype && is_float_dtype(dtype) &&
         !p->kept && p->ctrl_fanout == 0 && p->data_fanout == 1 &&
         node_split_inputs(p->def, &num_data) && num_data == p->def->n_input;
}

/* Grows the region of r->root: members breadth first; a producer joins
 * once every read of it is by a member, at one level below its deepest
 * reader, if that is within the limit. */
static void grow(struct region *r)
{
  struct graph *g = r->g;
  struct marks *m = r->m;
  const ProtobufCBinaryData *device = &g->nodes[r->root].def->device;
  bool root_single = m->single[r->root];
  touch(m, r->root);
  m->level[r->root] = 0;
  r->members[0] = r->root;
  r->num_members = 1;
  for (int k = 0; k < r->num_members; k++) {
    size_t i = r->members[k];
    struct eop e;
    if (!classify(&g->nodes[i], &e))
      continue;
    const Tfg__NodeDef *def = g->nodes[i].def;
    for (int j = 0; j < e.arity; j++) {
      int port;
      struct gnode *p = graph_producer(g, &def->input[j], &port);
      if (p == NULL)
        continue;
      size_t pi = (size_t)(p - g->nodes);
      /* A read at another dtype (no graph TensorFlow builds has one)
       * is not counted, so the producer never joins. */
      if (pi == r->root || m->level[pi] >= 0 ||
          !joinable(r, p, port, e.operand_dtype, device) ||
          (!root_single && m->single[pi] && m->costly[pi]))
        continue;
      touch(m, pi);
      m->reads[pi]++;
      if (m->want[pi] < m->level[i] + 1)
        m->want[pi] = m->level[i] + 1;
      if (m->reads[pi] < p->data_fanout || m->want[pi] > r->level_limit)
        continue;
      if (r->num_members == FUSED_MAX_INSNS + 1) {
        r->overflow = true;
        return;
      }
      m->level[pi] = m->want[pi];
      if (m->level[pi] > r->deepest)
        r->deepest = m->level[pi];
      r->members[r->num_members++] = pi;
    }
  }
}

static int add_insn(struct region *r, int op, int a, int b)
{
  if (r->num_insns == FUSED_MAX_INSNS) {
    r->overflow = true;
    return 0;
  }
  r->ops[r->num_insns] = op;
  r->a[r->num_insns] = a;
  r->b[r->num_insns] = b;
  return r->num_insns++;
}

/* Input `ref`, tiled by multiples[0, tile_rank) when tile_rank > 0. */
static int add_input(struct region *r, const ProtobufCBinaryData *ref,
                     int dtype, const int64_t *multiples, int tile_rank)
{
  struct ginput in;
  ginput_parse(ref, &in);
  size_t tile_bytes = sizeof(int64_t) * (size_t)tile_rank;
  for (int k = 0; k < r->num_inputs; k++)
    if (r->inputs[k].len == in.len && r->inputs[k].port == in.port &&
        memcmp(r->inputs[k].name, in.name, in.len) == 0 &&
        r->tile_rank[k] == tile_rank &&
        (tile_rank == 0 || memcmp(r->tiles[k], multiples, tile_bytes) == 0))
      return -(k + 1);
  if (r->num_inputs == FUSED_MAX_INPUTS) {
    r->overflow = true;
    return -1;
  }
  r->inputs[r->num_inputs] = in;
  r->input_refs[r->num_inputs] = *ref;
  r->input_dtypes[r->num_inputs] = dtype;
  r->tile_rank[r->num_inputs] = tile_rank;
  if (tile_rank > 0)
    memcpy(r->tiles[r->num_inputs], multiples, tile_bytes);
  r->num_inputs++;
  return -r->num_inputs;
}

/* A Const's values as a vector of int32 or int64 of at most max entries
 * (tensor_content assumed little-endian, as TensorFlow's). */
static bool const_int_vector(const struct gnode *n, int64_t *values, int max,
                             int *len)
{
  const Tfg__NodeDef *def = n->def;
  int t;
  if (n->removed || !bin_eq(&def->op, "Const") || def->n_input != 0 ||
      !node_attr_type(def, "dtype", &t) ||
      (t != GRAPH_DT_INT32 && t != GRAPH_DT_INT64))
    return false;
  const Tfg__AttrValue *v = node_attr(def, "value");
  if (v == NULL || v->value_case != TFG__ATTR_VALUE__VALUE_TENSOR ||
      v->tensor == NULL || v->tensor->dtype != t)
    return false;
  const Tfg__TensorProto *tp = v->tensor;
  const Tfg__TensorShapeProto *shape = tp->tensor_shape;
  if (shape == NULL || shape->unknown_rank || shape->n_dim != 1 ||
      shape->dim[0]->size < 0 || shape->dim[0]->size > max)
    return false;
  int n_values = (int)shape->dim[0]->size;
  size_t width = t == GRAPH_DT_INT32 ? 4 : 8;
  size_t content = tp->tensor_content.len;
  size_t listed = t == GRAPH_DT_INT32 ? tp->n_int_val : tp->n_int64_val;
  if (content == width * (size_t)n_values && listed == 0) {
    for (int i = 0; i < n_values; i++) {
      int32_t v32;
      int64_t v64;
      if (width == 4) {
        memcpy(&v32, tp->tensor_content.data + 4 * (size_t)i, 4);
        values[i] = v32;
      } else {
        memcpy(&v64, tp->tensor_content.data + 8 * (size_t)i, 8);
        values[i] = v64;
      }
    }
  } else if (content == 0 && listed == (size_t)n_values) {
    for (int i = 0; i < n_values; i++)
      values[i] = t == GRAPH_DT_INT32 ? tp->int_val[i] : tp->int64_val[i];
  } else {
    return false;
  }
  *len = n_values;
  return true;
}

/* Whether p is a Tile the region may read through: on the root's device,
 * of `dtype`, no control inputs, multiples a Const of at most
 * FUSED_TILE_RANK_MAX entries; its multiples then. The tiled op does the repeating itself, as a broadcast where
 * the tiled dim is 1 (a reduction's gradient: [1, 1, 1, C] over an
 * image's N, H, W). */
static bool tile_to_bypass(struct region *r, const struct gnode *p, int dtype,
                           int64_t *multiples, int *rank)
{
  struct graph *g = r->g;
  const Tfg__NodeDef *def = p->def;
  int t, port;
  size_t num_data;
  if (g->config->keep_tiles || !bin_eq(&def->op, "Tile") || !p->opencl ||
      p->removed || p->kept ||
      !bin_eq_bin(&def->device, &g->nodes[r->root].def->device) ||
      !node_attr_type(def, "T", &t) || t != dtype ||
      !node_split_inputs(def, &num_data) || num_data != 2 || def->n_input != 2)
    return false;
  struct gnode *m = graph_producer(g, &def->input[1], &port);
  if (m == NULL || port != 0 ||
      !const_int_vector(m, multiples, FUSED_TILE_RANK_MAX, rank) || *rank == 0)
    return false;
  for (int d = 0; d < *rank; d++)
    if (multiples[d] < 0)
      return false;
  return true;
}

static int add_const(struct region *r, float value, int dtype)
{
  for (int j = 0; j < r->num_insns; j++)
    if (r->ops[j] == FUSED_CONST && r->b[j] == dtype &&
        memcmp(&r->constants[r->a[j]], &value, sizeof(value)) == 0)
      return j;
  if (r->num_constants == FUSED_MAX_CONSTANTS) {
    r->overflow = true;
    return 0;
  }
  r->constants[r->num_constants] = value;
  return add_insn(r, FUSED_CONST, r->num_constants++, dtype);
}

static int member_index(const struct region *r, size_t node)
{
  for (int k = 0; k < r->num_members; k++)
    if (r->members[k] == node)
      return k;
  return -1;
}

/* Whether every node Const c waits for is a member of r. */
static bool waits_within(const struct region *r, const struct gnode *c)
{
  size_t num_data;
  node_split_inputs(c->def, &num_data);
  for (size_t j = num_data; j < c->def->n_input; j++) {
    int port;
    struct gnode *q = graph_producer(r->g, &c->def->input[j], &port);
    if (q == NULL || r->m->level[q - r->g->nodes] < 0)
      return false;
  }
  return true;
}

/* The value member k defines, its operands written first (so the program
 * is in dependency order, and equal regions give equal programs). The
 * recursion is bounded by the region's depth. */
static int emit(struct region *r, int k)
{
  if (r->value_of[k] >= 0)
    return r->value_of[k];
  size_t i = r->members[k];
  struct eop e;
  if (r->overflow || !classify(&r->g->nodes[i], &e)) {
    r->overflow = true;
    return 0;
  }
  int operand[FUSED_MAX_INPUTS] = {0};
  int64_t multiples[FUSED_TILE_RANK_MAX];
  int tile_rank;
  const Tfg__NodeDef *def = r->g->nodes[i].def;
  for (int j = 0; j < e.arity && !r->overflow; j++) {
    int port;
    struct gnode *p = graph_producer(r->g, &def->input[j], &port);
    size_t pi = p != NULL ? (size_t)(p - r->g->nodes) : 0;
    int pk = p != NULL && r->m->level[pi] >= 0 ? member_index(r, pi) : -1;
    float value;
    if (pk >= 0) {
      operand[j] = emit(r, pk);
    } else if (p != NULL && port == 0 &&
               (scalar_const(p, e.operand_dtype, &value) ||
                (controlled_const(p) && waits_within(r, p) &&
                 const_value(p, e.operand_dtype, &value)))) {
      if (r->num_const_reads ==
          (int)(sizeof(r->const_reads) / sizeof(r->const_reads[0]))) {
        r->overflow = true;
        return 0;
      }
      r->const_reads[r->num_const_reads++] = pi;
      operand[j] = add_const(r, value, e.operand_dtype);
    } else if (p != NULL && port == 0 &&
               tile_to_bypass(r, p, e.operand_dtype, multiples, &tile_rank)) {
      if (r->num_tile_reads ==
          (int)(sizeof(r->tile_reads) / sizeof(r->tile_reads[0]))) {
        r->overflow = true;
        return 0;
      }
      r->tile_reads[r->num_tile_reads++] = pi;
      operand[j] = add_input(r, &p->def->input[0], e.operand_dtype, multiples,
                             tile_rank);
    } else {
      operand[j] = add_input(r, &def->input[j], e.operand_dtype, NULL, 0);
    }
  }
  if (r->overflow)
    return 0;
  int v = add_insn(r, e.opcode, operand[0],
                   e.opcode == FUSED_CAST ? e.dtype
                   : e.arity > 1          ? operand[1]
                                          : -1);
  for (int j = 2; j < e.arity; j++) /* AddN */
    v = add_insn(r, e.opcode, v, operand[j]);
  /* An AddN of n counts as its n - 1 adds: alone it is a region too. */
  r->real_ops += e.arity > 2 ? e.arity - 1 : 1;
  r->value_of[k] = v;
  return v;
}

/* The region of `root` with members at most level_limit away, and its
 * program. */
static void build(struct region *r, struct graph *g, struct marks *m,
                  size_t root, int level_limit, const size_t *blocked,
                  int num_blocked)
{
  marks_reset(m);
  memset(r, 0, sizeof(*r));
  r->g = g;
  r->m = m;
  r->root = root;
  r->level_limit = level_limit;
  r->blocked = blocked;
  r->num_blocked = num_blocked;
  grow(r);
  for (int k = 0; k <= FUSED_MAX_INSNS; k++)
    r->value_of[k] = -1;
  if (!r->overflow)
    emit(r, 0);
}

#define NAME_ARGS(def) \
  (int)((def)->name.len > 200 ? 200 : (def)->name.len), \
      (const char *)(def)->name.data

/* The root becomes the fused node. False (graph unchanged) when the
 * program does not check out or memory runs out. */
static bool rewrite(struct region *r, int out_dtype)
{
  struct graph *g = r->g;
  Tfg__NodeDef *root = g->nodes[r->root].def;
  int n = r->num_inputs;

  /* The program: inputs first, so instruction j is value n + j. */
  int64_t program[3 * FUSED_MAX_INSNS];
  for (int j = 0; j < r->num_insns; j++) {
    int op = r->ops[j];
    int arity = fused_op_arity(op);
    int64_t a = r->a[j], b = r->b[j];
    if (op != FUSED_CONST)
      a = a < 0 ? -a - 1 : n + a;
    if (arity == 2)
      b = b < 0 ? -b - 1 : n + b;
    else if (op != FUSED_CONST && op != FUSED_CAST)
      b = -1;
    program[3 * j] = op;
    program[3 * j + 1] = a;
    program[3 * j + 2] = b;
  }
  struct fused_program check;
  char why[160];
  if (!fused_program_decode(program, 3 * (size_t)r->num_insns, r->constants,
                            (size_t)r->num_constants, r->input_dtypes,
                            (size_t)n, out_dtype, &check, why, sizeof(why))) {
    graph_trace(g, "elementwise: '%.*s' left alone: %s", NAME_ARGS(root),
                why);
    g->stats.skipped++;
    return false;
  }

  size_t root_data;
  if (!node_split_inputs(root, &root_data))
    return false;
  size_t num_ctrl = root->n_input - root_data;
  ProtobufCBinaryData *inputs =
      ocl_arena_alloc(&g->arena, ((size_t)n + num_ctrl) * sizeof(*inputs));
  Tfg__AttrEntry **attrs =
      ocl_arena_alloc(&g->arena, (root->n_attr + 1) * sizeof(*attrs));
  if (inputs == NULL || attrs == NULL)
    return false;
  for (int k = 0; k < n; k++)
    inputs[k] = r->input_refs[k];
  for (size_t c = 0; c < num_ctrl; c++)
    inputs[n + c] = root->input[root_data + c];

  /* The new attributes in a list of their own (the root's internal ones,
   * then the op's), swapped in at the end: a failure half way leaves the
   * root as it was. */
  Tfg__NodeDef fused = *root;
  fused.attr = attrs;
  fused.n_attr = 0;
  for (size_t i = 0; i < root->n_attr; i++) {
    Tfg__AttrEntry *e = root->attr[i];
    if (e != NULL && e->key.len > 0 && e->key.data[0] == '_')
      attrs[fused.n_attr++] = e;
  }
  bool ok =
      node_set_attr(g, &fused, "Targs",
                    attr_type_list(g, r->input_dtypes, (size_t)n)) &&
      node_set_attr(g, &fused, "T", attr_type(g, out_dtype)) &&
      node_set_attr(g, &fused, "program",
                    attr_int_list(g, program, 3 * (size_t)r->num_insns)) &&
      node_set_attr(g, &fused, "constants",
                    attr_float_list(g, r->constants,
                                    (size_t)r->num_constants));
  bool tiled = r->num_tile_reads > 0;
  if (tiled) {
    /* Per input: the multiples' length, then the multiples. */
    int64_t tiles[FUSED_MAX_INPUTS * (1 + FUSED_TILE_RANK_MAX)];
    size_t len = 0;
    for (int k = 0; k < n; k++) {
      tiles[len++] = r->tile_rank[k];
      for (int d = 0; d < r->tile_rank[k]; d++)
        tiles[len++] = r->tiles[k][d];
    }
    ok = ok && node_set_attr(g, &fused, "tiles", attr_int_list(g, tiles, len));
  }
  ProtobufCBinaryData op_name =
      graph_bytes(g, tiled ? FUSED_TILED_OP_NAME : FUSED_OP_NAME);
  if (!ok || op_name.data == NULL ||
      !node_set_inputs(g, root, inputs, (size_t)n + num_ctrl)) {
    g->arena.failed = true;
    return false;
  }
  root->attr = fused.attr;
  root->n_attr = fused.n_attr;
  root->op = op_name;
  g->nodes[r->root].touched = true;
  for (int k = 1; k < r->num_members; k++) {
    g->nodes[r->members[k]].removed = true;
    g->nodes[r->members[k]].touched = true;
  }
  /* A Const read only by the region goes, and no longer waits. */
  for (int c = 0; c < r->num_const_reads; c++) {
    struct gnode *k = &g->nodes[r->const_reads[c]];
    if (--k->data_fanout == 0 && k->ctrl_fanout == 0 && !k->kept) {
      k->removed = true;
      size_t num_data = k->def->n_input;
      node_split_inputs(k->def, &num_data);
      for (size_t j = num_data; j < k->def->n_input; j++) {
        int port;
        struct gnode *q = graph_producer(g, &k->def->input[j], &port);
        if (q != NULL)
          q->ctrl_fanout--;
      }
    }
  }
  /* So does a Tile read only by it, with its multiples if nothing else
   * reads them; a Tile that stays leaves its input one more reader. */
  for (int c = 0; c < r->num_tile_reads; c++) {
    struct gnode *t = &g->nodes[r->tile_reads[c]];
    int port;
    struct gnode *x = graph_producer(g, &t->def->input[0], &port);
    struct gnode *m = graph_producer(g, &t->def->input[1], &port);
    if (--t->data_fanout == 0 && t->ctrl_fanout == 0 && !t->kept) {
      t->removed = true;
      t->touched = true;
      if (m != NULL && --m->data_fanout == 0 && m->ctrl_fanout == 0 && !m->kept)
        m->removed = true;
    } else if (x != NULL) {
      x->data_fanout++;
    }
  }
  g->changed = true;
  g->stats.elementwise++;
  g->stats.elementwise_ops += r->real_ops;
  char text[200];
  fused_program_text(&check, text, sizeof(text));
  graph_trace(g, "elementwise: '%.*s' is now %s of %d ops, %d inputs: %s%s",
              NAME_ARGS(root), tiled ? FUSED_TILED_OP_NAME : FUSED_OP_NAME,
              r->real_ops, n, text,
              fused_program_text(&check, NULL, 0) >= sizeof(text) ? "..." : "");
  return true;
}

/* A member (not the root) that a Const waits for which the region did not
 * fold (all its reads taken in), or -1: that Const would still wait for a
 * node the fusion removes. */
static long unfolded_waiter(const struct region *r)
{
  struct graph *g = r->g;
  for (int k = 1; k < r->num_members; k++) {
    const struct gnode *p = &g->nodes[r->members[k]];
    int folded = 0;
    for (int c = 0; c < r->num_const_reads; c++) {
      const struct gnode *q = &g->nodes[r->const_reads[c]];
      size_t num_data;
      int reads = 0;
      if (q->def->n_input == 0 || !node_split_inputs(q->def, &num_data))
        continue;
      /* Once per Const: at its first read, all its reads counted. */
      bool first = true;
      for (int d = 0; d < r->num_const_reads; d++) {
        if (r->const_reads[d] != r->const_reads[c])
          continue;
        first = first && d >= c;
        reads++;
      }
      if (!first || reads != q->data_fanout)
        continue;
      for (size_t j = num_data; j < q->def->n_input; j++) {
        int port;
        if (graph_producer(g, &q->def->input[j], &port) == p)
          folded++;
      }
    }
    if (folded != p->ctrl_fanout)
      return (long)r->members[k];
  }
  return -1;
}

/* Fuses the region rooted at i if it is worth it. */
static void fuse_root(struct graph *g, struct marks *m, struct region *r,
                      size_t i)
{
  struct eop e;
  if (!classify(&g->nodes[i], &e) || !is_float_dtype(e.dtype))
    return;
  size_t blocked[FUSED_MAX_INSNS];
  int num_blocked = 0;
  for (;;) {
    build(r, g, m, i, FUSED_MAX_INSNS, blocked, num_blocked);
    while (r->overflow && r->deepest > 0)
      build(r, g, m, i, r->deepest - 1, blocked, num_blocked);
    long unfolded = r->overflow ? -1 : unfolded_waiter(r);
    if (unfolded < 0 || num_blocked == FUSED_MAX_INSNS)
      break;
    /* Rebuilt without it: what joined through it leaves too. */
    blocked[num_blocked++] = (size_t)unfolded;
  }
  if (r->overflow || r->real_ops < 2 || r->num_inputs < 1)
    return;
  if (!graph_has_kernel(g,
                        r->num_tile_reads > 0 ? FUSED_TILED_OP_NAME
                                              : FUSED_OP_NAME,
                        e.dtype)) {
    graph_trace(g, "elementwise: '%.*s' left alone: no OPENCL %s kernel "
                "for dtype %d",
                NAME_ARGS(g->nodes[i].def), FUSED_OP_NAME, e.dtype);
    g->stats.skipped++;
    return;
  }
  rewrite(r, e.dtype);
}

/* Pow by a scalar Const 3 as Mul(x, Square(x)), which the fusion then
 * takes in: Grappler's ConvertPowStage rewrites it so on CPU devices only
 * (by 2, 0.5, -0.5 and -1 on every device), and the two multiplies cost a
 * fraction of pow's ~150 operations per element. tf.nn.gelu's approximate
 * form computes x^3. Grappler keeps the Const as a control input; a Const
 * has no effect to wait for, and a control input would keep the Mul out
 * of a chain. */
static void cube_powers(struct graph *g)
{
  size_t count = g->num_nodes;
  for (size_t i = 0; i < count && !g->arena.failed; i++) {
    const struct gnode *n = &g->nodes[i];
    Tfg__NodeDef *def = n->def;
    int dtype, port;
    size_t num_data;
    float exponent;
    if (!n->opencl || n->removed || !bin_eq(&def->op, "Pow") ||
        !node_split_inputs(def, &num_data) || num_data != 2 ||
        !node_attr_type(def, "T", &dtype) ||
        !graph_has_kernel(g, "Mul", dtype) ||
        !graph_has_kernel(g, "Square", dtype))
      continue;
    struct gnode *y = graph_producer(g, &def->input[1], &port);
    if (y == NULL || port != 0 || !scalar_const(y, dtype, &exponent) ||
        exponent != 3.0f)
      continue;
    ProtobufCBinaryData *inputs =
        ocl_arena_alloc(&g->arena, def->n_input * sizeof(*inputs));
    struct gnode *square =
        graph_add_node(g, graph_unique_name(g, &def->name, "square"), "Square",
                       &def->device);
    if (inputs == NULL || square == NULL ||
        !node_set_inputs(g, square->def, &def->input[0], 1) ||
        !node_set_attr(g, square->def, "T", attr_type(g, dtype)))
      return;
    inputs[0] = def->input[0];
    inputs[1] = graph_ref(g, square->def, 0);
    for (size_t j = 2; j < def->n_input; j++)
      inputs[j] = def->input[j];
    if (!node_set_inputs(g, def, inputs, def->n_input))
      return;
    def->op = graph_bytes(g, "Mul");
    g->nodes[i].touched = true;
    g->changed = true;
    graph_trace(g, "elementwise: %.*s, a Pow by 3, as Mul(x, Square(x))",
                (int)def->name.len, (const char *)def->name.data);
  }
}

void pass_elementwise(struct graph *g)
{
  cube_powers(g);
  size_t n = g->num_nodes;
  count_uses(g);
  size_t *order = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(*order));
  struct marks m = {
      .level = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(int)),
      .reads = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(int)),
      .want = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(int)),
      .touched = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(size_t)),
  };
  bool *single = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(bool));
  bool *costly = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(bool));
  struct region *r = ocl_arena_alloc(&g->arena, sizeof(*r));
  if (order == NULL || m.level == NULL || m.reads == NULL ||
      m.want == NULL || m.touched == NULL || r == NULL || single == NULL ||
      costly == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    m.level[i] = m.want[i] = -1;
  long count = topo_order(g, order);
  if (count < 0)
    return;
  find_singles(g, order, count, single, costly);
  int *waiters = ocl_arena_alloc(&g->arena, (n + 1) * sizeof(int));
  if (waiters == NULL)
    return;
  memset(waiters, 0, (n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++) {
    const Tfg__NodeDef *def = g->nodes[i].def;
    size_t num_data;
    if (!controlled_const(&g->nodes[i]) || !node_split_inputs(def, &num_data))
      continue;
    for (size_t j = num_data; j < def->n_input; j++) {
      int port;
      struct gnode *q = graph_producer(g, &def->input[j], &port);
      if (q != NULL)
        waiters[q - g->nodes]++;
    }
  }
  m.const_waiters = waiters;
  m.single = single;
  m.costly = costly;
  /* Consumers first: a node still there when its turn comes joined no
   * region of its readers, and roots one. */
  for (long k = count - 1; k >= 0 && !g->arena.failed; k--)
    if (!g->nodes[order[k]].removed)
      fuse_root(g, &m, r, order[k]);
}
