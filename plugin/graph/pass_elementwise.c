/* The element-wise fusion: a tree of element-wise ops on one OPENCL device
 * whose inner results nothing else sees becomes one _TfoclFusedElementwise
 * node (fused_program.h), one kernel launch instead of one per op.
 *
 *   Sub(grad, m) -> Mul(., 0.1) -> AddV2(m, .)   =>   _TfoclFusedElementwise
 *                                                     (grad, m), 3 ops
 *
 * The ops: fused_opcode_of()'s list (arithmetic, activations and their
 * gradients), Cast between float and half (Truncate false), and scalar
 * float/half Consts, whose values go into the program (a Const nothing
 * else reads then goes). float and half only.
 *
 * A tree grows from a root through the data inputs: a producer joins when
 * it is such an op on the root's device, every data use of it is by the
 * node taking it in, and nothing else can see it (no control edge in or
 * out, not on the keep list). The root is an op that cannot join its
 * consumer that way; it keeps its name, its control inputs, its internal
 * "_" attributes and so its consumers, control dependants and fetches. A
 * tree fuses when it has at least two ops and one input tensor, fits the
 * program's limits (8 inputs, 64 instructions: a tree that does not is cut
 * at a smaller depth, the cut subtrees fusing on their own), and the plugin
 * has the fused kernel for the output's dtype. The output shape is the
 * broadcast of the inputs' shapes: broadcasting composes, so a tree of
 * broadcasting ops is one broadcast; only graphs that would fail anyway
 * (the relu gradients' equal-shape check) fail differently.
 *
 * Idempotent: the fused node is no op this pass knows, so a second run
 * finds only what the first left alone, for the same reasons. */
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

static bool is_fusable_dtype(int dtype)
{
  return dtype == GRAPH_DT_FLOAT || dtype == GRAPH_DT_HALF;
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
        !node_attr_type(def, "DstT", &dst) || !is_fusable_dtype(src) ||
        !is_fusable_dtype(dst) || num_data != 1)
      return false;
    if (node_attr(def, "Truncate") != NULL &&
        (!node_attr_bool(def, "Truncate", &truncate) || truncate))
      return false;
    *e = (struct eop){FUSED_CAST, 1, dst, src};
    return true;
  }
  int opcode = fused_opcode_of(def->op.data, def->op.len);
  int dtype;
  if (opcode == 0 || !node_attr_type(def, "T", &dtype) ||
      !is_fusable_dtype(dtype) ||
      num_data != (size_t)fused_op_arity(opcode))
    return false;
  *e = (struct eop){opcode, fused_op_arity(opcode), dtype, dtype};
  return true;
}

/* A rank-0 float or half Const with no control inputs: its value (half
 * values exactly, as floats). */
static bool scalar_const(const struct gnode *n, int dtype, float *value)
{
  const Tfg__NodeDef *def = n->def;
  int t;
  if (n->removed || !bin_eq(&def->op, "Const") || def->n_input != 0 ||
      !node_attr_type(def, "dtype", &t) || t != dtype)
    return false;
  const Tfg__AttrValue *v = node_attr(def, "value");
  if (v == NULL || v->value_case != TFG__ATTR_VALUE__VALUE_TENSOR ||
      v->tensor == NULL || v->tensor->dtype != dtype)
    return false;
  const Tfg__TensorProto *tp = v->tensor;
  if (tp->tensor_shape != NULL &&
      (tp->tensor_shape->n_dim != 0 || tp->tensor_shape->unknown_rank))
    return false;
  if (dtype == GRAPH_DT_FLOAT) {
    if (tp->n_float_val == 1 && tp->tensor_content.len == 0) {
      *value = tp->float_val[0];
      return true;
    }
    if (tp->n_float_val == 0 && tp->tensor_content.len == sizeof(float)) {
      memcpy(value, tp->tensor_content.data, sizeof(float));
      return true;
    }
    return false;
  }
  uint16_t bits;
  if (tp->n_half_val == 1 && tp->tensor_content.len == 0)
    bits = (uint16_t)tp->half_val[0];
  else if (tp->n_half_val == 0 && tp->tensor_content.len == 2)
    memcpy(&bits, tp->tensor_content.data, 2); /* little-endian hosts */
  else
    return false;
  /* binary16 to float, exactly. */
  uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu, out;
  if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    out = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    out = sign;
  } else {
    /* subnormal: normalise */
    int e = -1;
    do {
      mant <<= 1;
      e++;
    } while (!(mant & 0x400u));
    out = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  memcpy(value, &out, sizeof(*value));
  return true;
}

/* Per-run bookkeeping: who consumes each node. */
struct uses {
  long *consumer; /* the one node reading it, -1 none */
  bool *multi;    /* read by more than one node */
};

static bool count_uses(struct graph *g, struct uses *u)
{
  u->consumer = ocl_arena_alloc(&g->arena, g->num_nodes * sizeof(long) + 1);
  u->multi = ocl_arena_alloc(&g->arena, g->num_nodes * sizeof(bool) + 1);
  if (u->consumer == NULL || u->multi == NULL)
    return false;
  for (size_t i = 0; i < g->num_nodes; i++) {
    u->consumer[i] = -1;
    g->nodes[i].data_fanout = g->nodes[i].ctrl_fanout = 0;
  }
  for (size_t i = 0; i < g->num_nodes; i++) {
    const Tfg__NodeDef *def = g->nodes[i].def;
    if (g->nodes[i].removed)
      continue;
    for (size_t j = 0; j < def->n_input; j++) {
      int port;
      struct gnode *p = graph_producer(g, &def->input[j], &port);
      if (p == NULL)
        continue;
      size_t pi = (size_t)(p - g->nodes);
      if (port < 0) {
        p->ctrl_fanout++;
        continue;
      }
      p->data_fanout++;
      if (u->consumer[pi] < 0)
        u->consumer[pi] = (long)i;
      else if (u->consumer[pi] != (long)i)
        u->multi[pi] = true;
    }
  }
  return true;
}

/* Whether producer p (read at `port`) can join the tree of `consumer`,
 * which reads it as `dtype`. */
static bool joins(struct graph *g, const struct uses *u, size_t p, int port,
                  size_t consumer, int dtype)
{
  const struct gnode *n = &g->nodes[p];
  struct eop e;
  size_t num_data;
  return port == 0 && classify(n, &e) && e.dtype == dtype && !n->kept &&
         n->ctrl_fanout == 0 && u->consumer[p] == (long)consumer &&
         !u->multi[p] && node_split_inputs(n->def, &num_data) &&
         num_data == n->def->n_input &&
         bin_eq_bin(&n->def->device, &g->nodes[consumer].def->device);
}

/* Whether node i joins its consumer's tree (and so is no root). */
static bool joins_consumer(struct graph *g, const struct uses *u, size_t i,
                           int dtype)
{
  long c = u->consumer[i];
  struct eop ce;
  if (c < 0 || u->multi[i] || !classify(&g->nodes[c], &ce) ||
      ce.operand_dtype != dtype)
    return false;
  return joins(g, u, i, 0, (size_t)c, dtype);
}

/* One tree being built. Operands refer to inputs as -(k + 1) and to
 * instructions by index until the program is written. */
struct tree {
  struct graph *g;
  const struct uses *u;
  size_t root;
  int depth_limit;
  bool overflow;
  int deepest;
  int num_inputs;
  struct ginput inputs[FUSED_MAX_INPUTS];
  ProtobufCBinaryData input_refs[FUSED_MAX_INPUTS];
  int input_dtypes[FUSED_MAX_INPUTS];
  int num_insns, real_ops;
  int ops[FUSED_MAX_INSNS], a[FUSED_MAX_INSNS], b[FUSED_MAX_INSNS];
  int num_constants;
  float constants[FUSED_MAX_CONSTANTS];
  /* Nodes taken in (the root's producers, not the root), and the value
   * each node of the tree defines. */
  int num_members;
  size_t members[FUSED_MAX_INSNS];
  size_t memo_node[FUSED_MAX_INSNS + 1];
  int memo_value[FUSED_MAX_INSNS + 1];
  int num_memo;
  /* Consts read (one entry per read) and producers left out by the depth
   * limit. */
  int num_const_reads;
  size_t const_reads[2 * FUSED_MAX_INSNS];
  int num_cut;
  size_t cut[2 * FUSED_MAX_INSNS];
};

static int add_insn(struct tree *t, int op, int a, int b)
{
  if (t->num_insns == FUSED_MAX_INSNS) {
    t->overflow = true;
    return 0;
  }
  t->ops[t->num_insns] = op;
  t->a[t->num_insns] = a;
  t->b[t->num_insns] = b;
  return t->num_insns++;
}

static int add_input(struct tree *t, const ProtobufCBinaryData *ref,
                     int dtype)
{
  struct ginput in;
  ginput_parse(ref, &in);
  for (int k = 0; k < t->num_inputs; k++)
    if (t->inputs[k].len == in.len && t->inputs[k].port == in.port &&
        memcmp(t->inputs[k].name, in.name, in.len) == 0)
      return -(k + 1);
  if (t->num_inputs == FUSED_MAX_INPUTS) {
    t->overflow = true;
    return -1;
  }
  t->inputs[t->num_inputs] = in;
  t->input_refs[t->num_inputs] = *ref;
  t->input_dtypes[t->num_inputs] = dtype;
  t->num_inputs++;
  return -t->num_inputs;
}

static int add_const(struct tree *t, float value, int dtype)
{
  for (int j = 0; j < t->num_insns; j++)
    if (t->ops[j] == FUSED_CONST && t->b[j] == dtype &&
        memcmp(&t->constants[t->a[j]], &value, sizeof(value)) == 0)
      return j;
  if (t->num_constants == FUSED_MAX_CONSTANTS) {
    t->overflow = true;
    return 0;
  }
  t->constants[t->num_constants] = value;
  return add_insn(t, FUSED_CONST, t->num_constants++, dtype);
}

/* The value node i defines, its producers taken in first. */
static int grow(struct tree *t, size_t i, int depth)
{
  for (int m = 0; m < t->num_memo; m++)
    if (t->memo_node[m] == i)
      return t->memo_value[m];
  struct eop e;
  if (t->overflow || depth > FUSED_MAX_INSNS || !classify(&t->g->nodes[i], &e)) {
    t->overflow = true;
    return 0;
  }
  if (depth > t->deepest)
    t->deepest = depth;
  int operand[2] = {-1, -1};
  const Tfg__NodeDef *def = t->g->nodes[i].def;
  for (int j = 0; j < e.arity && !t->overflow; j++) {
    int port;
    struct gnode *p = graph_producer(t->g, &def->input[j], &port);
    size_t pi = p != NULL ? (size_t)(p - t->g->nodes) : 0;
    float value;
    if (p != NULL && pi != t->root &&
        joins(t->g, t->u, pi, port, i, e.operand_dtype)) {
      if (depth + 1 <= t->depth_limit) {
        operand[j] = grow(t, pi, depth + 1);
        continue;
      }
      if (t->num_cut < (int)(sizeof(t->cut) / sizeof(t->cut[0])))
        t->cut[t->num_cut++] = pi;
    } else if (p != NULL && port == 0 &&
               scalar_const(p, e.operand_dtype, &value)) {
      if (t->num_const_reads <
          (int)(sizeof(t->const_reads) / sizeof(t->const_reads[0])))
        t->const_reads[t->num_const_reads++] = pi;
      else
        t->overflow = true;
      operand[j] = add_const(t, value, e.operand_dtype);
      continue;
    }
    operand[j] = add_input(t, &def->input[j], e.operand_dtype);
  }
  if (t->overflow)
    return 0;
  int v = add_insn(t, e.opcode, operand[0],
                   e.opcode == FUSED_CAST ? e.dtype : operand[1]);
  t->real_ops++;
  if (i != t->root) {
    if (t->num_members == FUSED_MAX_INSNS) {
      t->overflow = true;
      return 0;
    }
    t->members[t->num_members++] = i;
  }
  if (t->num_memo < FUSED_MAX_INSNS + 1) {
    t->memo_node[t->num_memo] = i;
    t->memo_value[t->num_memo++] = v;
  }
  return v;
}

/* The tree of `root` with producers at most depth_limit away. */
static void build(struct tree *t, struct graph *g, const struct uses *u,
                  size_t root, int depth_limit)
{
  memset(t, 0, sizeof(*t));
  t->g = g;
  t->u = u;
  t->root = root;
  t->depth_limit = depth_limit;
  grow(t, root, 0);
}

#define NAME_ARGS(def) \
  (int)((def)->name.len > 200 ? 200 : (def)->name.len), \
      (const char *)(def)->name.data

/* The root becomes the fused node. False (graph unchanged) when the
 * program does not check out or memory runs out. */
static bool rewrite(struct tree *t, int out_dtype)
{
  struct graph *g = t->g;
  Tfg__NodeDef *root = g->nodes[t->root].def;
  int n = t->num_inputs;

  /* The program: inputs first, so instruction j is value n + j. */
  int64_t program[3 * FUSED_MAX_INSNS];
  for (int j = 0; j < t->num_insns; j++) {
    int op = t->ops[j];
    int arity = fused_op_arity(op);
    int64_t a = t->a[j], b = t->b[j];
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
  if (!fused_program_decode(program, 3 * (size_t)t->num_insns, t->constants,
                            (size_t)t->num_constants, t->input_dtypes,
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
    inputs[k] = t->input_refs[k];
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
                    attr_type_list(g, t->input_dtypes, (size_t)n)) &&
      node_set_attr(g, &fused, "T", attr_type(g, out_dtype)) &&
      node_set_attr(g, &fused, "program",
                    attr_int_list(g, program, 3 * (size_t)t->num_insns)) &&
      node_set_attr(g, &fused, "constants",
                    attr_float_list(g, t->constants,
                                    (size_t)t->num_constants));
  ProtobufCBinaryData op_name = graph_bytes(g, FUSED_OP_NAME);
  if (!ok || op_name.data == NULL ||
      !node_set_inputs(g, root, inputs, (size_t)n + num_ctrl)) {
    g->arena.failed = true;
    return false;
  }
  root->attr = fused.attr;
  root->n_attr = fused.n_attr;
  root->op = op_name;
  g->nodes[t->root].touched = true;
  for (int m = 0; m < t->num_members; m++) {
    g->nodes[t->members[m]].removed = true;
    g->nodes[t->members[m]].touched = true;
  }
  /* A Const read only by the tree goes. */
  for (int c = 0; c < t->num_const_reads; c++) {
    struct gnode *k = &g->nodes[t->const_reads[c]];
    if (--k->data_fanout == 0 && k->ctrl_fanout == 0 && !k->kept)
      k->removed = true;
  }
  g->changed = true;
  g->stats.elementwise++;
  g->stats.elementwise_ops += t->real_ops;
  char text[200];
  fused_program_text(&check, text, sizeof(text));
  graph_trace(g, "elementwise: '%.*s' is now %s of %d ops, %d inputs: %s%s",
              NAME_ARGS(root), FUSED_OP_NAME, t->real_ops, n, text,
              fused_program_text(&check, NULL, 0) >= sizeof(text) ? "..."
                                                                  : "");
  return true;
}

/* Fuses the tree of root i if it is worth it; producers the depth limit
 * left out go on the worklist. */
static void fuse_root(struct graph *g, const struct uses *u, struct tree *t,
                      size_t i, size_t *worklist, size_t *num_work,
                      size_t cap_work)
{
  struct eop e;
  if (!classify(&g->nodes[i], &e))
    return;
  int limit = FUSED_MAX_INSNS;
  build(t, g, u, i, limit);
  while (t->overflow && t->deepest > 0) {
    limit = t->deepest - 1;
    build(t, g, u, i, limit);
  }
  for (int c = 0; c < t->num_cut && *num_work < cap_work; c++)
    worklist[(*num_work)++] = t->cut[c];
  if (t->overflow || t->real_ops < 2 || t->num_inputs < 1)
    return;
  if (!graph_has_kernel(g, FUSED_OP_NAME, e.dtype)) {
    graph_trace(g, "elementwise: '%.*s' left alone: no OPENCL %s kernel "
                "for dtype %d",
                NAME_ARGS(g->nodes[i].def), FUSED_OP_NAME, e.dtype);
    g->stats.skipped++;
    return;
  }
  rewrite(t, e.dtype);
}

void pass_elementwise(struct graph *g)
{
  struct uses u;
  size_t num = g->num_nodes;
  if (!count_uses(g, &u))
    return;
  /* Roots found in order, then the subtrees depth limits cut off. Each
   * node is in at most one tree, so the worklist cannot grow past the node
   * count. */
  size_t *work = ocl_arena_alloc(&g->arena, (num + 1) * sizeof(*work));
  struct tree *t = ocl_arena_alloc(&g->arena, sizeof(*t));
  if (work == NULL || t == NULL)
    return;
  size_t num_work = 0;
  for (size_t i = 0; i < num && !g->arena.failed; i++) {
    struct eop e;
    if (classify(&g->nodes[i], &e) && !joins_consumer(g, &u, i, e.dtype))
      fuse_root(g, &u, t, i, work, &num_work, num);
  }
  for (size_t w = 0; w < num_work && !g->arena.failed; w++)
    if (!g->nodes[work[w]].removed)
      fuse_root(g, &u, t, work[w], work, &num_work, num);
}
