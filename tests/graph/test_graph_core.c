/* The graph optimizer's core (plugin/graph/graph.h) on GraphDefs written by
 * TensorFlow (tests/graph/data/, make_graphs.py) and on hand-made bytes:
 * the codec's round trip, each rewrite, idempotence, what must be kept,
 * and malformed input. The kernels the plugin has are the test's to say
 * (fake_kernels), so the fusion pass runs here although the plugin has no
 * fused kernel yet. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "graph_test_util.h"

/* ---- The kernels the "plugin" has ---------------------------------------- */

enum kernel_set { KERNELS_NONE, KERNELS_ALL, KERNELS_NO_INT32 };

static bool fake_kernels(void *ctx, const char *op, int dtype)
{
  (void)op;
  switch (*(const enum kernel_set *)ctx) {
  case KERNELS_ALL: return true;
  case KERNELS_NO_INT32: return dtype != 3; /* DT_INT32 */
  default: return false;
  }
}

static enum kernel_set kernels_all = KERNELS_ALL;
static enum kernel_set kernels_none = KERNELS_NONE;
static enum kernel_set kernels_no_int32 = KERNELS_NO_INT32;

static struct ocl_graph_config config(bool variables, bool fusion,
                                      enum kernel_set *kernels)
{
  return (struct ocl_graph_config){.variables = variables,
                                   .fusion = fusion,
                                   .has_kernel = fake_kernels,
                                   .has_kernel_ctx = kernels};
}

struct result {
  enum ocl_graph_outcome outcome;
  void *out;
  size_t size;
  struct ocl_graph_stats stats;
  char why[256];
};

static struct result optimize(const struct blob *b,
                              const struct ocl_graph_config *cfg)
{
  struct result r;
  r.outcome = ocl_graph_optimize(b->data, b->size, cfg, &r.out, &r.size,
                                 &r.stats, r.why, sizeof(r.why), NULL, NULL);
  if (r.outcome != OCL_GRAPH_CHANGED)
    ck_assert_ptr_null(r.out);
  return r;
}

/* The result of a second run over the first one's output. */
static void assert_idempotent(const struct result *first,
                              const struct ocl_graph_config *cfg)
{
  struct blob again = {first->out, first->size};
  struct result second = optimize(&again, cfg);
  ck_assert_msg(second.outcome == OCL_GRAPH_UNCHANGED,
                "a second run changed the graph again (outcome %d, "
                "%d updates, %d fusions)",
                (int)second.outcome, second.stats.variable_updates,
                second.stats.fusions);
}

/* ---- Round trip ---------------------------------------------------------- */

START_TEST(round_trip_keeps_every_byte)
{
  static const char *const files[] = {"variables.pb", "variables_cpu.pb",
                                      "apply.pb", "dense.pb"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    struct blob b = load_graph(files[i]);
    void *out;
    size_t size;
    ck_assert(ocl_graph_round_trip(b.data, b.size, &out, &size));
    ck_assert_msg(size == b.size && memcmp(out, b.data, size) == 0,
                  "%s: %zu bytes in, %zu out, or other bytes", files[i],
                  b.size, size);
    free(out);
    free(b.data);
  }
}
END_TEST

/* A GraphDef with fields graph.proto does not declare: a node's field 6
 * (experimental_debug_info) and a field 99, GraphDef's versions (4) and a
 * made-up fixed64 field 77. Known fields come first, as TensorFlow writes
 * them, so the encoder's order (known, then unknown) gives the same bytes. */
static const unsigned char unknown_fields[] = {
    0x0a, 0x11,                               /* node, 17 bytes */
    0x0a, 0x01, 'a',                          /*   name "a" */
    0x12, 0x04, 'N', 'o', 'O', 'p',           /*   op "NoOp" */
    0x32, 0x03, 0x0a, 0x01, 'z',              /*   6: debug info */
    0x98, 0x06, 0x2a,                         /*   99: varint 42 */
    0x22, 0x04, 0x08, 0xd9, 0x0d, 0x00,       /* versions {producer: 1753}
                                                 (a trailing 0x00 byte
                                                 inside: opaque) */
    0xe9, 0x04, 1, 2, 3, 4, 5, 6, 7, 8,       /* 77: fixed64 */
};

START_TEST(round_trip_keeps_unknown_fields)
{
  void *out;
  size_t size;
  ck_assert(ocl_graph_round_trip(unknown_fields, sizeof(unknown_fields), &out,
                                 &size));
  ck_assert_uint_eq(size, sizeof(unknown_fields));
  ck_assert_mem_eq(out, unknown_fields, size);
  free(out);
}
END_TEST

/* Unknown fields before known ones come out after them, each unchanged. */
START_TEST(round_trip_moves_unknown_fields_behind)
{
  static const unsigned char in[] = {
      0x98, 0x06, 0x2a,       /* 99: varint 42 */
      0x0a, 0x05, 0x0a, 0x01, 'b', 0x98, 0x06, /* node "b" + 99: ... */
  };
  /* The node's field 99 lacks its value: not a GraphDef. */
  void *out;
  size_t size;
  ck_assert(!ocl_graph_round_trip(in, sizeof(in), &out, &size));
  ck_assert_ptr_null(out);

  static const unsigned char in2[] = {
      0x98, 0x06, 0x2a,                   /* 99: 42 */
      0x0a, 0x03, 0x0a, 0x01, 'b',        /* node "b" */
  };
  static const unsigned char want[] = {
      0x0a, 0x03, 0x0a, 0x01, 'b', 0x98, 0x06, 0x2a,
  };
  ck_assert(ocl_graph_round_trip(in2, sizeof(in2), &out, &size));
  ck_assert_uint_eq(size, sizeof(want));
  ck_assert_mem_eq(out, want, size);
  free(out);
}
END_TEST

/* ---- The variable-update rewrite ----------------------------------------- */

START_TEST(variables_rewrite_assign_updates)
{
  struct blob b = load_graph("variables.pb");
  struct ocl_graph_config cfg = config(true, false, &kernels_no_int32);
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "outcome %d: %s",
                (int)r.outcome, r.why);
  ck_assert_int_eq(r.stats.variable_updates, 3);
  ck_assert_int_eq(r.stats.skipped, 1); /* the int32 update */

  Tfg__GraphDef *in = decode_graph(b.data, b.size);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);
  /* Only the int32 update is left. */
  ck_assert_uint_eq(count_op(g, "AssignAddVariableOp"), 1);
  ck_assert(bytes_is(&find_node(g, "assign_int32")->op,
                     "AssignAddVariableOp"));
  ck_assert_uint_eq(count_op(g, "AssignSubVariableOp"), 0);

  /* The update keeps its name and becomes the assign. */
  Tfg__NodeDef *add = find_node(g, "assign_add");
  ck_assert_ptr_nonnull(add);
  ck_assert(bytes_is(&add->op, "AssignVariableOp"));
  ck_assert_uint_eq(add->n_input, 2);
  ck_assert(bytes_is(&add->input[0], "v"));
  ck_assert(bytes_is(&add->input[1], "assign_add/tfocl_add"));
  ck_assert_int_eq(get_attr(add, "dtype")->type, 1);
  ck_assert_int_eq(get_attr(add, "validate_shape")->b, 0);
  ck_assert_ptr_null(get_attr(add, "T"));

  /* Its read waits for what the update waited for. */
  Tfg__NodeDef *read = find_node(g, "assign_add/tfocl_read");
  ck_assert_ptr_nonnull(read);
  ck_assert(bytes_is(&read->op, "ReadVariableOp"));
  ck_assert(bytes_is(&read->input[0], "v"));
  ck_assert(has_input(read, "^init"));
  ck_assert(on_device(read, OPENCL_DEVICE));
  Tfg__NodeDef *sum = find_node(g, "assign_add/tfocl_add");
  ck_assert(bytes_is(&sum->op, "AddV2"));
  ck_assert(bytes_is(&sum->input[0], "assign_add/tfocl_read"));
  ck_assert(bytes_is(&sum->input[1], "x"));
  ck_assert(on_device(sum, OPENCL_DEVICE));

  Tfg__NodeDef *sub = find_node(g, "assign_sub");
  ck_assert(bytes_is(&sub->op, "AssignVariableOp"));
  ck_assert(bytes_is(&find_node(g, "assign_sub/tfocl_sub")->op, "Sub"));
  ck_assert(has_input(find_node(g, "assign_sub/tfocl_read"), "^assign_add"));
  /* The int64 counter: AddV2 at int64. */
  ck_assert_int_eq(get_attr(find_node(g, "count/tfocl_add"), "T")->type, 9);

  /* Whatever waited for the updates waits for the assigns (same names). */
  Tfg__NodeDef *result = find_node(g, "result");
  ck_assert(has_input(result, "^assign_sub"));
  ck_assert(has_input(result, "^count"));

  /* Everything else as it was: the function library, the versions. */
  ck_assert_uint_eq(g->library.len, in->library.len);
  ck_assert_mem_eq(g->library.data, in->library.data, in->library.len);
  ck_assert_uint_eq(g->base.n_unknown_fields, in->base.n_unknown_fields);
  ck_assert_uint_eq(g->n_node, in->n_node + 6);

  assert_idempotent(&r, &cfg);
  tfg__graph_def__free_unpacked(g, NULL);
  tfg__graph_def__free_unpacked(in, NULL);
  free(r.out);
  free(b.data);
}
END_TEST

START_TEST(variables_leave_cpu_graphs_alone)
{
  struct blob b = load_graph("variables_cpu.pb");
  struct ocl_graph_config cfg = config(true, true, &kernels_all);
  struct result r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  ck_assert_int_eq(r.stats.opencl_nodes, 0);
  ck_assert_int_gt(r.stats.nodes, 10);
  free(b.data);
}
END_TEST

START_TEST(variables_off_or_without_kernels_change_nothing)
{
  struct blob b = load_graph("variables.pb");
  struct ocl_graph_config off = config(false, true, &kernels_all);
  struct result r = optimize(&b, &off);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  struct ocl_graph_config none = config(true, false, &kernels_none);
  r = optimize(&b, &none);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  ck_assert_int_eq(r.stats.skipped, 4);
  free(b.data);
}
END_TEST

static const Tfg__NodeDef *must(const Tfg__GraphDef *g, const char *name)
{
  const Tfg__NodeDef *n = find_node(g, name);
  ck_assert_msg(n != NULL, "no node %s", name);
  return n;
}

START_TEST(variables_rewrite_optimizer_updates)
{
  struct blob b = load_graph("apply.pb");
  struct ocl_graph_config cfg = config(true, false, &kernels_all);
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  ck_assert_int_eq(r.stats.variable_updates, 5);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);
  ck_assert_uint_eq(count_op(g, "ResourceApplyGradientDescent"), 0);
  ck_assert_uint_eq(count_op(g, "ResourceApplyMomentum"), 0);
  ck_assert_uint_eq(count_op(g, "ResourceApplyAdam"), 0);

  /* Gradient descent: var - alpha * delta, one assign under the name. */
  const Tfg__NodeDef *gd = must(g, "apply_gd");
  ck_assert(bytes_is(&gd->op, "AssignVariableOp"));
  ck_assert(bytes_is(&gd->input[1], "apply_gd/tfocl_new_var"));
  ck_assert_ptr_null(get_attr(gd, "use_locking"));
  const Tfg__NodeDef *step = must(g, "apply_gd/tfocl_step");
  ck_assert(bytes_is(&step->op, "Mul"));
  ck_assert(bytes_is(&step->input[0], "lr"));
  ck_assert(bytes_is(&step->input[1], "grad"));
  ck_assert(has_input(must(g, "apply_gd/tfocl_read_var"), "^gate"));

  /* Momentum: a NoOp under the name, after both assigns. */
  const Tfg__NodeDef *mom = must(g, "apply_momentum");
  ck_assert(bytes_is(&mom->op, "NoOp"));
  ck_assert_uint_eq(mom->n_attr, 0);
  ck_assert(has_input(mom, "^apply_momentum/tfocl_assign_accum"));
  ck_assert(has_input(mom, "^apply_momentum/tfocl_assign_var"));
  ck_assert(bytes_is(&must(g, "apply_momentum/tfocl_step")->op, "Mul"));
  ck_assert_ptr_null(find_node(g, "apply_momentum/tfocl_grad_lr"));
  ck_assert(bytes_is(&must(g, "apply_momentum_nesterov/tfocl_step")->op,
                     "AddV2"));
  ck_assert_ptr_nonnull(find_node(g, "apply_momentum_nesterov/tfocl_grad_lr"));

  /* Adam: three assigns, the constant 1 after a read. */
  const Tfg__NodeDef *adam = must(g, "apply_adam");
  ck_assert(bytes_is(&adam->op, "NoOp"));
  ck_assert_uint_eq(adam->n_input, 3);
  const Tfg__NodeDef *one = must(g, "apply_adam/tfocl_one");
  ck_assert(bytes_is(&one->op, "Const"));
  ck_assert(has_input(one, "^apply_adam/tfocl_read_var"));
  const Tfg__AttrValue *value = get_attr(one, "value");
  ck_assert_uint_eq(value->tensor->n_float_val, 1);
  ck_assert(value->tensor->float_val[0] == 1.0f);
  ck_assert_int_eq(value->tensor->dtype, 1);
  ck_assert_uint_eq(value->tensor->tensor_shape->n_dim, 0);
  ck_assert(bytes_is(&must(g, "apply_adam/tfocl_step")->op, "RealDiv"));
  ck_assert_ptr_null(find_node(g, "apply_adam/tfocl_nesterov_m"));
  ck_assert_ptr_nonnull(find_node(g, "apply_adam_nesterov/tfocl_nesterov_m"));
  ck_assert(has_input(must(g, "after_adam"), "^apply_adam"));
  for (size_t i = 0; i < g->n_node; i++)
    ck_assert(on_device(g->node[i], OPENCL_DEVICE));

  assert_idempotent(&r, &cfg);
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(b.data);
}
END_TEST

/* ---- Fusion -------------------------------------------------------------- */

static void assert_fused_ops(const Tfg__NodeDef *n, const char *first,
                             const char *second)
{
  const Tfg__AttrValue *ops = get_attr(n, "fused_ops");
  ck_assert_ptr_nonnull(ops);
  ck_assert_uint_eq(ops->list->n_s, second ? 2 : 1);
  ck_assert(bytes_is(&ops->list->s[0], first));
  if (second)
    ck_assert(bytes_is(&ops->list->s[1], second));
  ck_assert_int_eq(get_attr(n, "num_args")->i, 1);
  ck_assert(get_attr(n, "epsilon")->f == 0.0f);
  ck_assert_int_eq(get_attr(n, "T")->type, 1);
}

START_TEST(fusion_fuses_what_nothing_else_sees)
{
  struct blob b = load_graph("dense.pb");
  static const char *const keep[] = {"ba_fetched"};
  static const size_t keep_len[] = {10};
  struct ocl_graph_config cfg = config(false, true, &kernels_all);
  cfg.keep = keep;
  cfg.keep_lengths = keep_len;
  cfg.num_keep = 1;
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);

  const Tfg__NodeDef *relu = must(g, "relu");
  ck_assert(bytes_is(&relu->op, "_FusedMatMul"));
  ck_assert_uint_eq(relu->n_input, 3);
  ck_assert(bytes_is(&relu->input[0], "x"));
  ck_assert(bytes_is(&relu->input[1], "w"));
  ck_assert(bytes_is(&relu->input[2], "b"));
  assert_fused_ops(relu, "BiasAdd", "Relu");
  ck_assert_int_eq(get_attr(relu, "transpose_a")->b, 0);
  ck_assert_ptr_nonnull(get_attr(relu, "transpose_b"));
  ck_assert_ptr_null(get_attr(relu, "leakyrelu_alpha"));
  ck_assert_ptr_null(find_node(g, "mm_relu"));
  ck_assert_ptr_null(find_node(g, "ba_relu"));

  const Tfg__NodeDef *leaky = must(g, "leaky");
  assert_fused_ops(leaky, "BiasAdd", "LeakyRelu");
  ck_assert(get_attr(leaky, "leakyrelu_alpha")->f > 0.299f &&
            get_attr(leaky, "leakyrelu_alpha")->f < 0.301f);

  const Tfg__NodeDef *plain = must(g, "ba_plain");
  ck_assert(bytes_is(&plain->op, "_FusedMatMul"));
  assert_fused_ops(plain, "BiasAdd", NULL);
  ck_assert_ptr_null(get_attr(plain, "data_format"));

  /* A MatMul read twice stays. */
  ck_assert(bytes_is(&must(g, "mm_shared")->op, "MatMul"));
  ck_assert(bytes_is(&must(g, "ba_shared")->op, "BiasAdd"));
  /* A kept BiasAdd is not swallowed by its Tanh, but takes its MatMul. */
  ck_assert(bytes_is(&must(g, "tanh_fetched")->op, "Tanh"));
  ck_assert(bytes_is(&must(g, "tanh_fetched")->input[0], "ba_fetched"));
  ck_assert(bytes_is(&must(g, "ba_fetched")->op, "_FusedMatMul"));
  /* A MatMul with a control consumer stays, and so its chain. */
  ck_assert(bytes_is(&must(g, "mm_ctrl")->op, "MatMul"));
  ck_assert(bytes_is(&must(g, "sigmoid_ctrl")->op, "Sigmoid"));

  const Tfg__NodeDef *relu6 = must(g, "relu6");
  ck_assert(bytes_is(&relu6->op, "_FusedConv2D"));
  assert_fused_ops(relu6, "BiasAdd", "Relu6");
  ck_assert_uint_eq(get_attr(relu6, "TArgs")->list->n_type, 1);
  ck_assert_int_eq(get_attr(relu6, "TArgs")->list->type[0], 1);
  ck_assert_int_eq(get_attr(relu6, "num_host_args")->i, 0);
  ck_assert(bytes_is(&get_attr(relu6, "padding")->s, "SAME"));
  ck_assert_uint_eq(get_attr(relu6, "strides")->list->n_i, 4);
  ck_assert(bytes_is(&get_attr(relu6, "data_format")->s, "NHWC"));
  ck_assert_ptr_nonnull(get_attr(relu6, "dilations"));
  ck_assert_ptr_nonnull(get_attr(relu6, "explicit_paddings"));
  ck_assert_ptr_nonnull(get_attr(relu6, "use_cudnn_on_gpu"));
  const Tfg__NodeDef *elu = must(g, "elu");
  ck_assert(bytes_is(&elu->op, "_FusedConv2D"));
  ck_assert(has_input(elu, "^relu6"));
  ck_assert_ptr_null(find_node(g, "conv_elu"));

  /* The CPU's chain is the CPU's business. */
  ck_assert(bytes_is(&must(g, "relu_cpu")->op, "Relu"));
  ck_assert(bytes_is(&must(g, "mm_cpu")->op, "MatMul"));
  ck_assert_int_eq(r.stats.fusions, 6);

  assert_idempotent(&r, &cfg);
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(b.data);
}
END_TEST

START_TEST(fusion_needs_the_fused_kernel)
{
  struct blob b = load_graph("dense.pb");
  struct ocl_graph_config cfg = config(true, true, &kernels_none);
  struct result r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  ck_assert_int_eq(r.stats.fusions, 0);
  ck_assert_int_gt(r.stats.skipped, 0);
  free(b.data);
}
END_TEST

START_TEST(fusion_keeps_fetched_outputs)
{
  /* "mm_plain:0" fetched: the MatMul must stay, and so its BiasAdd. */
  struct blob b = load_graph("dense.pb");
  static const char *const keep[] = {"mm_plain:0", "^ba_leaky"};
  static const size_t keep_len[] = {10, 9};
  struct ocl_graph_config cfg = config(false, true, &kernels_all);
  cfg.keep = keep;
  cfg.keep_lengths = keep_len;
  cfg.num_keep = 2;
  struct result r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_CHANGED);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  ck_assert(bytes_is(&must(g, "mm_plain")->op, "MatMul"));
  ck_assert(bytes_is(&must(g, "ba_plain")->op, "BiasAdd"));
  /* The kept BiasAdd takes its MatMul in; the LeakyRelu stays apart. */
  ck_assert(bytes_is(&must(g, "leaky")->op, "LeakyRelu"));
  ck_assert(bytes_is(&must(g, "ba_leaky")->op, "_FusedMatMul"));
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(b.data);
}
END_TEST

/* ---- tf.parallel_stack without an OPENCL _ParallelConcatStart ------------ */

START_TEST(parallel_concat_identity_follows_start)
{
  struct blob b = load_graph("parallel_concat.pb");
  struct ocl_graph_config cfg = config(false, false, &kernels_none);
  struct result r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_CHANGED);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  ck_assert(bytes_is(&must(g, "stacked")->device,
                     "/job:localhost/replica:0/task:0/device:CPU:0"));
  ck_assert(bytes_is(&must(g, "other")->device,
                     "/job:localhost/replica:0/task:0/device:OPENCL:0"));
  tfg__graph_def__free_unpacked(g, NULL);
  assert_idempotent(&r, &cfg);
  free(r.out);
  /* With an OPENCL kernel for Start, placement keeps the three together:
   * nothing to move. */
  cfg = config(false, false, &kernels_all);
  r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  free(b.data);
}
END_TEST

/* ---- Malformed input ------------------------------------------------------ */

START_TEST(malformed_bytes_are_rejected)
{
  static const unsigned char garbage[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f,
                                          0x00};
  struct ocl_graph_config cfg = config(true, true, &kernels_all);
  struct blob b = {(unsigned char *)garbage, sizeof(garbage)};
  struct result r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_REJECTED);
  ck_assert_msg(strstr(r.why, "do not decode") != NULL, "%s", r.why);

  /* Two nodes of one name. */
  static const unsigned char twins[] = {
      0x0a, 0x03, 0x0a, 0x01, 'a', 0x0a, 0x03, 0x0a, 0x01, 'a',
  };
  b = (struct blob){(unsigned char *)twins, sizeof(twins)};
  r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_REJECTED);
  ck_assert_msg(strstr(r.why, "two nodes") != NULL, "%s", r.why);

  /* A nameless node. */
  static const unsigned char nameless[] = {0x0a, 0x02, 0x12, 0x00};
  b = (struct blob){(unsigned char *)nameless, sizeof(nameless)};
  r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_REJECTED);

  /* No bytes: the empty GraphDef, nothing to do. */
  b = (struct blob){(unsigned char *)garbage, 0};
  r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
}
END_TEST

/* Every prefix and every single-byte change of a real graph: never a crash,
 * and whatever comes out decodes. */
START_TEST(damaged_graphs_never_crash)
{
  struct blob b = load_graph("apply.pb");
  struct ocl_graph_config cfg = config(true, true, &kernels_all);
  int changed = 0, rejected = 0;
  for (size_t n = 0; n < b.size; n += 7) {
    struct blob prefix = {b.data, n};
    struct result r = optimize(&prefix, &cfg);
    rejected += r.outcome == OCL_GRAPH_REJECTED;
    free(r.out);
  }
  for (size_t i = 0; i < b.size; i += 3) {
    unsigned char saved = b.data[i];
    b.data[i] ^= (unsigned char)(0x5a + i);
    struct result r = optimize(&b, &cfg);
    if (r.outcome == OCL_GRAPH_CHANGED) {
      changed++;
      Tfg__GraphDef *g = decode_graph(r.out, r.size);
      tfg__graph_def__free_unpacked(g, NULL);
    }
    free(r.out);
    b.data[i] = saved;
  }
  ck_assert_int_gt(rejected, 0);
  ck_assert_int_gt(changed, 0);
  free(b.data);
}
END_TEST

static Suite *graph_core_suite(void)
{
  Suite *s = suite_create("graph_core");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, round_trip_keeps_every_byte);
  tcase_add_test(tc, round_trip_keeps_unknown_fields);
  tcase_add_test(tc, round_trip_moves_unknown_fields_behind);
  tcase_add_test(tc, variables_rewrite_assign_updates);
  tcase_add_test(tc, variables_leave_cpu_graphs_alone);
  tcase_add_test(tc, variables_off_or_without_kernels_change_nothing);
  tcase_add_test(tc, variables_rewrite_optimizer_updates);
  tcase_add_test(tc, fusion_fuses_what_nothing_else_sees);
  tcase_add_test(tc, fusion_needs_the_fused_kernel);
  tcase_add_test(tc, fusion_keeps_fetched_outputs);
  tcase_add_test(tc, parallel_concat_identity_follows_start);
  tcase_add_test(tc, malformed_bytes_are_rejected);
  tcase_add_test(tc, damaged_graphs_never_crash);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(graph_core_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
