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

#include "fused_attrs.h"
#include "fused_program.h"
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
  static const char *const files[] = {"variables.pb",   "variables_cpu.pb",
                                      "apply.pb",       "dense.pb",
                                      "elementwise.pb", "while_loop.pb"};
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

START_TEST(fusion_takes_relu_grad_into_max_pool_grad)
{
  struct blob b = load_graph("pool_relu.pb");
  struct ocl_graph_config cfg = config(false, true, &kernels_all);
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  ck_assert_int_eq(r.stats.fusions, 1);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  /* The ReluGrad of the pool's own input becomes the MaxPoolGrad, with
   * its inputs and windows and the attribute; the MaxPoolGrad goes. */
  const Tfg__NodeDef *out = must(g, "g_out");
  ck_assert(bytes_is(&out->op, "MaxPoolGrad"));
  ck_assert_uint_eq(out->n_input, 3);
  ck_assert(bytes_is(&out->input[0], "r") && bytes_is(&out->input[1], "y") &&
            bytes_is(&out->input[2], "dy"));
  const Tfg__AttrValue *relu = get_attr(out, POOL_RELU_GRAD_ATTR);
  ck_assert(relu != NULL && relu->value_case == TFG__ATTR_VALUE__VALUE_B &&
            relu->b);
  const Tfg__AttrValue *ksize = get_attr(out, "ksize");
  ck_assert(ksize != NULL && ksize->list != NULL && ksize->list->n_i == 4 &&
            ksize->list->i[1] == 2);
  ck_assert(get_attr(out, "padding") != NULL);
  ck_assert_ptr_null(find_node(g, "g_pool"));
  /* Overlapping windows, other features, a MaxPoolGrad read twice: as
   * they were. */
  static const char *const kept[] = {"o_out", "f_out", "s_out"};
  for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
    ck_assert_msg(bytes_is(&must(g, kept[i])->op, "ReluGrad"), "%s", kept[i]);
    ck_assert_ptr_null(get_attr(must(g, kept[i]), POOL_RELU_GRAD_ATTR));
  }
  ck_assert(bytes_is(&must(g, "s_pool")->op, "MaxPoolGrad"));
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(b.data);

  /* Without an OPENCL MaxPoolGrad, nothing. */
  b = load_graph("pool_relu.pb");
  struct ocl_graph_config none = config(false, true, &kernels_none);
  r = optimize(&b, &none);
  ck_assert_int_eq(r.stats.fusions, 0);
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

/* ---- The memory optimizer's AddN rewrite, undone --------------------------- */

static void assert_inputs(const Tfg__NodeDef *n, const char *const *want,
                          size_t count)
{
  ck_assert_msg(n->n_input == count, "%.*s has %zu inputs, not %zu",
                (int)n->name.len, (const char *)n->name.data, n->n_input,
                count);
  for (size_t i = 0; i < count; i++)
    ck_assert_msg(bytes_is(&n->input[i], want[i]), "input %zu is %.*s, not %s",
                  i, (int)n->input[i].len, (const char *)n->input[i].data,
                  want[i]);
}

START_TEST(accumulate_restores_the_addn)
{
  struct blob b = load_graph("accumulate.pb");
  struct ocl_graph_config cfg = config(false, false, &kernels_all);
  struct result r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_CHANGED);
  ck_assert_int_eq(r.stats.accumulations, 1);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);
  const Tfg__NodeDef *sum = must(g, "sum");
  ck_assert(bytes_is(&sum->op, "AddN"));
  ck_assert(on_device(sum, OPENCL_DEVICE));
  ck_assert_int_eq(get_attr(sum, "N")->i, 3);
  ck_assert_int_eq(get_attr(sum, "T")->type, 1); /* DT_FLOAT */
  ck_assert_ptr_null(get_attr(sum, "var_name"));
  /* The inputs in the accums' order, then what TemporaryVariable waited
   * for (not ^a, a data input already) and what sum waited for. */
  static const char *const want[] = {"a", "b", "c", "^pre", "^post"};
  assert_inputs(sum, want, 5);
  static const char *const gone[] = {"sum/tmp_var", "sum/tmp_var_zeros",
                                     "sum/tmp_var_initializer",
                                     "sum/tmp_var_accum_0",
                                     "sum/tmp_var_accum_2"};
  for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
    ck_assert_msg(find_node(g, gone[i]) == NULL, "%s is still there", gone[i]);
  /* The CPU's copy is TensorFlow's to run. */
  ck_assert(bytes_is(&must(g, "cpu_sum")->op, "DestroyTemporaryVariable"));
  ck_assert_ptr_nonnull(find_node(g, "cpu_sum/tmp_var_accum_1"));
  ck_assert_int_eq(count_op(g, "AssignAdd"), 3);
  tfg__graph_def__free_unpacked(g, NULL);
  assert_idempotent(&r, &cfg);
  free(r.out);
  free(b.data);
}
END_TEST

/* Without an AddN kernel, or with a node of the pattern fetched, the graph
 * stays as TensorFlow wrote it. */
START_TEST(accumulate_needs_kernel_and_private_nodes)
{
  struct blob b = load_graph("accumulate.pb");
  struct ocl_graph_config cfg = config(false, false, &kernels_none);
  struct result r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  ck_assert_int_eq(r.stats.skipped, 1);
  static const char *const keep[] = {"sum/tmp_var_accum_1"};
  static const size_t keep_len[] = {19};
  cfg = config(false, false, &kernels_all);
  cfg.keep = keep;
  cfg.keep_lengths = keep_len;
  cfg.num_keep = 1;
  r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  free(b.data);
}
END_TEST

/* A ZerosLike of no input (a malformed graph, as the fuzzer wrote one)
 * leaves the pattern alone instead of reading an input that is not there. */
START_TEST(accumulate_refuses_zeros_like_without_input)
{
  struct blob b = load_graph("accumulate.pb");
  Tfg__GraphDef *g = decode_graph(b.data, b.size);
  Tfg__NodeDef *zeros = find_node(g, "sum/tmp_var_zeros");
  ck_assert_ptr_nonnull(zeros);
  size_t n_input = zeros->n_input;
  zeros->n_input = 0;
  struct blob bad = {malloc(tfg__graph_def__get_packed_size(g)), 0};
  ck_assert_ptr_nonnull(bad.data);
  bad.size = tfg__graph_def__pack(g, bad.data);
  zeros->n_input = n_input;
  tfg__graph_def__free_unpacked(g, NULL);
  struct ocl_graph_config cfg = config(false, false, &kernels_all);
  struct result r = optimize(&bad, &cfg);
  ck_assert_int_eq(r.stats.accumulations, 0);
  free(r.out);
  free(bad.data);
  free(b.data);
}
END_TEST

/* ---- Element-wise fusion -------------------------------------------------- */

static struct ocl_graph_config elementwise_config(enum kernel_set *kernels)
{
  struct ocl_graph_config cfg = config(false, false, kernels);
  cfg.elementwise = true;
  return cfg;
}

/* The node's program, checked by the kernel's own decoder. */
static struct fused_program program_of(const Tfg__NodeDef *n)
{
  ck_assert_msg(bytes_is(&n->op, FUSED_OP_NAME) ||
                    bytes_is(&n->op, FUSED_TILED_OP_NAME),
                "%.*s is %.*s", (int)n->name.len, (const char *)n->name.data,
                (int)n->op.len, (const char *)n->op.data);
  const Tfg__AttrValue *targs = get_attr(n, "Targs");
  const Tfg__AttrValue *t = get_attr(n, "T");
  const Tfg__AttrValue *prog = get_attr(n, "program");
  const Tfg__AttrValue *consts = get_attr(n, "constants");
  ck_assert(targs && t && prog && consts && targs->list && prog->list &&
            consts->list);
  int types[FUSED_MAX_INPUTS];
  ck_assert_uint_le(targs->list->n_type, FUSED_MAX_INPUTS);
  for (size_t k = 0; k < targs->list->n_type; k++)
    types[k] = targs->list->type[k];
  struct fused_program p;
  char why[256];
  ck_assert_msg(fused_program_decode(prog->list->i, prog->list->n_i,
                                     consts->list->f, consts->list->n_f, types,
                                     targs->list->n_type, t->type, &p, why,
                                     sizeof(why)),
                "%s", why);
  /* Every data input is one of Targs. */
  size_t data = 0;
  while (data < n->n_input && n->input[data].data[0] != '^')
    data++;
  ck_assert_uint_eq(data, targs->list->n_type);
  return p;
}

/* The opcodes of a program, in order, as a string "sub,c,mul,add". */
static void assert_ops(const struct fused_program *p, const char *want)
{
  char got[512] = "";
  for (int j = 0; j < p->num_insns; j++) {
    strcat(got, j ? "," : "");
    strcat(got, fused_op_text(p->insns[j].op));
  }
  ck_assert_str_eq(got, want);
}

static void assert_op(const Tfg__GraphDef *g, const char *name, const char *op)
{
  const Tfg__NodeDef *n = must(g, name);
  ck_assert_msg(bytes_is(&n->op, op), "%s is %.*s, not %s", name,
                (int)n->op.len, (const char *)n->op.data, op);
}

/* The "tiles" attribute of a tiled fused node as text "0;4:4,5,6,1". */
static void assert_tiles(const Tfg__NodeDef *n, const char *want)
{
  const Tfg__AttrValue *t = get_attr(n, "tiles");
  ck_assert(t != NULL && t->list != NULL);
  char got[256] = "";
  size_t at = 0;
  while (at < t->list->n_i) {
    int64_t len = t->list->i[at++];
    snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%lld",
             got[0] ? ";" : "", (long long)len);
    for (int64_t d = 0; d < len && at < t->list->n_i; d++, at++)
      snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%lld",
               d ? "," : ":", (long long)t->list->i[at]);
  }
  ck_assert_str_eq(got, want);
}

START_TEST(elementwise_reads_through_tiles)
{
  struct blob b = load_graph("tiles.pb");
  struct ocl_graph_config cfg = elementwise_config(&kernels_all);
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);

  /* The chain reads v for the Tile only it read, which goes; the
   * multiples stay for the other Tiles. */
  const Tfg__NodeDef *out = must(g, "t_out");
  assert_op(g, "t_out", FUSED_TILED_OP_NAME);
  struct fused_program p = program_of(out);
  assert_ops(&p, "sub,c,mul,c,add");
  ck_assert(bytes_is(&out->input[0], "x"));
  ck_assert(bytes_is(&out->input[1], "v"));
  assert_tiles(out, "0;4:4,5,6,1");
  ck_assert_ptr_null(find_node(g, "tile"));
  assert_op(g, "reps", "Const");

  /* A Tile read outside the chain too stays for that reader. */
  out = must(g, "s_out");
  assert_op(g, "s_out", FUSED_TILED_OP_NAME);
  ck_assert(has_input(out, "v") && !has_input(out, "shared_tile"));
  assert_op(g, "shared_tile", "Tile");
  ck_assert(has_input(must(g, "outside"), "shared_tile"));

  /* The CPU's Tile and one of multiples computed at run time stay. */
  assert_op(g, "c_out", FUSED_OP_NAME);
  ck_assert(has_input(must(g, "c_out"), "cpu_tile"));
  assert_op(g, "d_out", FUSED_OP_NAME);
  ck_assert(has_input(must(g, "d_out"), "dyn_tile"));
  tfg__graph_def__free_unpacked(g, NULL);
  assert_idempotent(&r, &cfg);
  free(r.out);

  /* keep_tiles (TFOCL_GRAPH_TILES=0): the chains read the Tiles. */
  cfg.keep_tiles = true;
  r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  g = decode_graph(r.out, r.size);
  assert_op(g, "t_out", FUSED_OP_NAME);
  ck_assert(has_input(must(g, "t_out"), "tile"));
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(b.data);
}
END_TEST

/* A scalar Const that waits for a node folds with that node where the
 * chain takes both in; read outside too, it stays and so does the node it
 * waits for (the chain rebuilt without it); waiting for a node outside
 * the chain, it is an input. */
START_TEST(elementwise_folds_consts_waiting_inside)
{
  struct blob b = load_graph("controlled.pb");
  struct ocl_graph_config cfg = elementwise_config(&kernels_all);
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);

  struct fused_program p = program_of(must(g, "cc_out"));
  assert_ops(&p, "c,mul,c,mul,mul");
  ck_assert_uint_eq(must(g, "cc_out")->n_input, 2);
  ck_assert_ptr_null(find_node(g, "cc_two"));
  ck_assert_ptr_null(find_node(g, "cc_grad"));
  ck_assert_ptr_null(find_node(g, "cc_inner"));

  assert_op(g, "co_grad", "Mul");
  assert_op(g, "co_two", "Const");
  ck_assert(has_input(must(g, "co_two"), "^co_grad"));
  p = program_of(must(g, "co_out"));
  assert_ops(&p, "mul,mul");
  ck_assert(has_input(must(g, "co_out"), "co_grad"));
  ck_assert(has_input(must(g, "co_out"), "co_two"));

  p = program_of(must(g, "cg_out"));
  assert_ops(&p, "mul,add");
  ck_assert(has_input(must(g, "cg_out"), "cg_three"));
  ck_assert(has_input(must(g, "cg_three"), "^gate"));
  tfg__graph_def__free_unpacked(g, NULL);
  assert_idempotent(&r, &cfg);
  free(r.out);
  free(b.data);
}
END_TEST

/* A Pow by a scalar 3 on OPENCL becomes Mul(x, Square(x)) and fuses with
 * its reader; other exponents, a
 * vector of 3s and the CPU's cube stay Pows; without Mul and Square
 * kernels nothing changes. */
START_TEST(elementwise_cubes_pow_by_three)
{
  struct blob b = load_graph("powers.pb");
  struct ocl_graph_config cfg = elementwise_config(&kernels_all);
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);

  struct fused_program p = program_of(must(g, "cube_add"));
  assert_ops(&p, "square,mul,c,add");
  ck_assert(has_input(must(g, "cube_add"), "x"));
  ck_assert_ptr_null(find_node(g, "cube"));
  p = program_of(must(g, "cube_half_add"));
  assert_ops(&p, "square,mul,c,add");

  assert_op(g, "other", "Pow");
  assert_op(g, "vector", "Pow");
  assert_op(g, "cpu_cube", "Pow");
  tfg__graph_def__free_unpacked(g, NULL);
  assert_idempotent(&r, &cfg);
  free(r.out);

  /* Without the kernels, nothing changes. */
  cfg = elementwise_config(&kernels_none);
  r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  free(r.out);
  free(b.data);
}
END_TEST

START_TEST(elementwise_fuses_private_chains)
{
  struct blob b = load_graph("elementwise.pb");
  static const char *const keep[] = {"ft_add"};
  static const size_t keep_len[] = {6};
  struct ocl_graph_config cfg = elementwise_config(&kernels_all);
  cfg.keep = keep;
  cfg.keep_lengths = keep_len;
  cfg.num_keep = 1;
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);

  /* Adam's m: m + (grad - m) * 0.1 under the AddV2's name, the 0.1 in the
   * program and its Const gone. */
  const Tfg__NodeDef *am = must(g, "am_add");
  struct fused_program p = program_of(am);
  assert_ops(&p, "sub,c,mul,add");
  ck_assert_uint_eq(am->n_input, 2);
  ck_assert(bytes_is(&am->input[0], "m"));
  ck_assert(bytes_is(&am->input[1], "grad"));
  ck_assert(p.constants[0] == 0.1f);
  ck_assert_int_eq(p.out_dtype, 1);
  ck_assert(on_device(am, OPENCL_DEVICE));
  ck_assert_ptr_null(find_node(g, "am_sub"));
  ck_assert_ptr_null(find_node(g, "am_mul"));
  ck_assert_ptr_null(find_node(g, "am_beta"));

  /* A shared Sub stays; each reader's chain fuses. */
  assert_op(g, "sh_sub", "Sub");
  p = program_of(must(g, "sh_relu"));
  assert_ops(&p, "c,mul,relu");
  ck_assert(has_input(must(g, "sh_relu"), "sh_sub"));
  p = program_of(must(g, "sh_tanh"));
  assert_ops(&p, "c,add,tanh");
  ck_assert_ptr_null(find_node(g, "two"));
  ck_assert_ptr_null(find_node(g, "sh_add/y"));

  /* Control edges: a controlled producer stays outside, a root keeps its
   * control input. */
  assert_op(g, "cd_mul", "Mul");
  ck_assert(has_input(must(g, "after_cd"), "^cd_mul"));
  p = program_of(must(g, "cd_add"));
  assert_ops(&p, "exp,c,add");
  assert_op(g, "ci_sub", "Sub");
  p = program_of(must(g, "ci_sqrt"));
  assert_ops(&p, "abs,sqrt");
  p = program_of(must(g, "cr_sigmoid"));
  assert_ops(&p, "mul,sigmoid");
  ck_assert(has_input(must(g, "cr_sigmoid"), "^gate"));
  ck_assert_ptr_null(find_node(g, "cr_mul"));

  /* The kept AddV2 takes its Mul in under its name; its Relu stays. */
  p = program_of(must(g, "ft_add"));
  assert_ops(&p, "mul,add");
  assert_op(g, "ft_relu", "Relu");
  ck_assert(has_input(must(g, "ft_relu"), "ft_add"));

  /* float -> half -> float: one float program with a half constant. */
  const Tfg__NodeDef *mx = must(g, "mx_back");
  p = program_of(mx);
  assert_ops(&p, "cast,c,mul,cast");
  ck_assert_int_eq(p.input_dtypes[0], 1);
  ck_assert_int_eq(p.insns[0].dtype, 19);
  ck_assert_int_eq(p.insns[1].dtype, 19);
  ck_assert(p.constants[0] == 0.5f);
  ck_assert_ptr_null(find_node(g, "mx_half"));

  /* Not the op's dtypes, or on the CPU: untouched. */
  assert_op(g, "int_add", "AddV2");
  assert_op(g, "int_mul", "Mul");
  assert_op(g, "dbl_add", "AddV2");
  assert_op(g, "cpu_relu", "Relu");
  assert_op(g, "cpu_add", "AddV2");

  /* Broadcasting inputs fuse; the output's shape is theirs. */
  const Tfg__NodeDef *bc = must(g, "bc_relu");
  p = program_of(bc);
  assert_ops(&p, "add,relu");
  ck_assert(has_input(bc, "bx") && has_input(bc, "by"));

  /* Ten inputs: the tree is cut to 8 inputs, the rest fuses apart. */
  p = program_of(must(g, "wide_9"));
  ck_assert_int_eq(p.num_inputs, 8);
  ck_assert(has_input(must(g, "wide_9"), "wide_2"));
  p = program_of(must(g, "wide_2"));
  ck_assert_int_eq(p.num_inputs, 3);
  for (int k = 3; k <= 8; k++) {
    char name[16];
    snprintf(name, sizeof(name), "wide_%d", k);
    ck_assert_ptr_null(find_node(g, name));
  }
  ck_assert_ptr_null(find_node(g, "wide_1"));

  /* The step counter: int64 add and the Cast both Pows read, in the
   * region of the step size, computed once. */
  const Tfg__NodeDef *alpha = must(g, "st_alpha");
  p = program_of(alpha);
  assert_ops(&p, "c,c,c,add,cast,pow,sub,sqrt,mul,c,pow,sub,div");
  ck_assert_int_eq(p.num_inputs, 2);
  ck_assert(has_input(alpha, "lr") && has_input(alpha, "it"));
  ck_assert_int_eq(p.input_dtypes[1], 9);
  ck_assert_int_eq(p.insns[2].dtype, 9);
  ck_assert_int_eq(p.insns[3].dtype, 9);
  static const char *const gone[] = {"st_add", "st_cast", "st_pow1",
                                     "st_pow2", "st_sqrt", "one64", "beta1",
                                     "beta2", "sub_1"};
  for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
    ck_assert_msg(find_node(g, gone[i]) == NULL, "%s stayed", gone[i]);
  /* A value one op reads twice joins it. */
  p = program_of(must(g, "dd_mul"));
  assert_ops(&p, "sub,mul");
  ck_assert_ptr_null(find_node(g, "dd_sub"));

  /* A one-element pow stays out of the [4,3] region and fuses apart; a
   * one-element add without one joins. */
  p = program_of(must(g, "sc_add"));
  assert_ops(&p, "mul,add");
  ck_assert(has_input(must(g, "sc_add"), "sc_sub"));
  p = program_of(must(g, "sc_sub"));
  assert_ops(&p, "c,c,pow,sub");
  p = program_of(must(g, "ch_out"));
  assert_ops(&p, "c,add,mul,add");
  ck_assert_ptr_null(find_node(g, "ch_add"));
  assert_op(g, "vr_exp", "Exp");
  assert_op(g, "vr_add", "AddV2");

  /* An op the program cannot hold ends a chain: one op alone stays. */
  assert_op(g, "sm_mul", "Mul");
  assert_op(g, "sm", "Softmax");
  p = program_of(must(g, "sm_neg"));
  assert_ops(&p, "square,neg");

  /* AddN: its adds in input order, its producers in; alone, n - 1 adds in
   * one launch; more inputs than a program takes: left alone. */
  const Tfg__NodeDef *an = must(g, "an_sum");
  p = program_of(an);
  assert_ops(&p, "mul,exp,add,add");
  ck_assert_uint_eq(an->n_input, 3);
  ck_assert(bytes_is(&an->input[2], "grad"));
  ck_assert_ptr_null(find_node(g, "an_mul"));
  ck_assert_ptr_null(find_node(g, "an_exp"));
  p = program_of(must(g, "an_alone"));
  assert_ops(&p, "add,add");
  ck_assert_int_eq(p.insns[0].a, 0);
  ck_assert_int_eq(p.insns[0].b, 1);
  ck_assert_int_eq(p.insns[1].a, 3);
  ck_assert_int_eq(p.insns[1].b, 2);
  assert_op(g, "an_nine", "AddN");

  ck_assert_int_eq(r.stats.elementwise, 19);
  assert_idempotent(&r, &cfg);
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(b.data);
}
END_TEST

START_TEST(elementwise_fetched_intermediates_stay)
{
  /* Fetching the inner Mul and the Sub keeps them: ft_relu takes ft_add
   * only, am_add nothing but its Mul. */
  struct blob b = load_graph("elementwise.pb");
  static const char *const keep[] = {"ft_mul:0", "^am_sub"};
  static const size_t keep_len[] = {8, 7};
  struct ocl_graph_config cfg = elementwise_config(&kernels_all);
  cfg.keep = keep;
  cfg.keep_lengths = keep_len;
  cfg.num_keep = 2;
  struct result r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_CHANGED);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_op(g, "ft_mul", "Mul");
  struct fused_program p = program_of(must(g, "ft_relu"));
  assert_ops(&p, "add,relu");
  ck_assert(has_input(must(g, "ft_relu"), "ft_mul"));
  assert_op(g, "am_sub", "Sub");
  p = program_of(must(g, "am_add"));
  assert_ops(&p, "c,mul,add");
  ck_assert(has_input(must(g, "am_add"), "am_sub"));
  assert_idempotent(&r, &cfg);
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(b.data);
}
END_TEST

START_TEST(elementwise_needs_kernel_and_switch)
{
  struct blob b = load_graph("elementwise.pb");
  /* No fused kernel: nothing changes, and the pass says why. */
  struct ocl_graph_config cfg = elementwise_config(&kernels_none);
  struct result r = optimize(&b, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  ck_assert_int_eq(r.stats.elementwise, 0);
  ck_assert_int_gt(r.stats.skipped, 0);
  /* Switched off. */
  cfg = config(true, true, &kernels_all);
  r = optimize(&b, &cfg);
  ck_assert_int_eq(r.stats.elementwise, 0);
  free(r.out);
  /* The other graphs: dense.pb's Tanh/Sigmoid roots with a BiasAdd under
   * them are no element-wise chains (BiasAdd is not the program's). */
  struct blob d = load_graph("dense.pb");
  cfg = elementwise_config(&kernels_all);
  r = optimize(&d, &cfg);
  ck_assert_int_eq(r.outcome, OCL_GRAPH_UNCHANGED);
  free(d.data);
  free(b.data);
}
END_TEST

/* The variable-update rewrite's arithmetic (as on TensorFlow 2.21) fuses
 * further, and the result still decodes, stays closed and idempotent. */
START_TEST(elementwise_after_variable_rewrite)
{
  struct blob b = load_graph("apply.pb");
  struct ocl_graph_config cfg = config(true, true, &kernels_all);
  cfg.elementwise = true;
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  ck_assert_int_gt(r.stats.variable_updates, 0);
  ck_assert_int_gt(r.stats.elementwise, 0);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);
  size_t fused = 0;
  for (size_t i = 0; i < g->n_node; i++)
    if (bytes_is(&g->node[i]->op, FUSED_OP_NAME)) {
      program_of(g->node[i]);
      fused++;
    }
  ck_assert_uint_eq(fused, (size_t)r.stats.elementwise);
  assert_idempotent(&r, &cfg);
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(b.data);
}
END_TEST

/* The decoder on programs no pass writes. */
/* With in-place variable kernels: only the update whose value an
 * element-wise op computes for it alone (assign_sub, x * 0.5) becomes
 * Read -> Sub -> Assign, and its Sub joins the Mul in one program. */
START_TEST(variables_into_fusion_rewrites_only_fusable_updates)
{
  struct blob b = load_graph("variables.pb");
  struct ocl_graph_config cfg = elementwise_config(&kernels_all);
  cfg.variables_into_fusion = true;
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  ck_assert_int_eq(r.stats.variable_updates, 1);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);
  assert_op(g, "assign_add", "AssignAddVariableOp"); /* a Const's value */
  assert_op(g, "count", "AssignAddVariableOp");
  assert_op(g, "assign_int32", "AssignAddVariableOp");
  const Tfg__NodeDef *sub = must(g, "assign_sub");
  ck_assert(bytes_is(&sub->op, "AssignVariableOp"));
  ck_assert(bytes_is(&sub->input[1], "assign_sub/tfocl_sub"));
  const Tfg__NodeDef *value = must(g, "assign_sub/tfocl_sub");
  struct fused_program p = program_of(value);
  assert_ops(&p, "c,mul,sub");
  ck_assert(has_input(value, "assign_sub/tfocl_read"));
  ck_assert_ptr_null(find_node(g, "mul"));
  /* Without the element-wise fusion, nothing is rewritten. */
  struct ocl_graph_config off = cfg;
  off.elementwise = false;
  struct result r_off = optimize(&b, &off);
  ck_assert_int_eq(r_off.outcome, OCL_GRAPH_UNCHANGED);
  assert_idempotent(&r, &cfg);
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(r_off.out);
  free(b.data);
}
END_TEST

/* Whether node `name` carries the host kernel's label. */
static bool host_labelled(const Tfg__GraphDef *g, const char *name)
{
  const Tfg__AttrValue *v = get_attr(must(g, name), "_kernel");
  return v != NULL && v->value_case == TFG__ATTR_VALUE__VALUE_S &&
         bytes_is(&v->s, "TfoclHost");
}

START_TEST(while_loop_body_fuses_and_condition_runs_on_host)
{
  struct blob b = load_graph("while_loop.pb");
  struct ocl_graph_config cfg = elementwise_config(&kernels_all);
  cfg.host_kernel_label = "TfoclHost";
  struct result r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  assert_closed(g);

  /* The cell update on the loop's cycle (through NextIteration) is one
   * program under its root's name, still what NextIteration reads. */
  const Tfg__NodeDef *cell = must(g, "lp/lp_add");
  struct fused_program p = program_of(cell);
  assert_ops(&p, "mul,tanh,add");
  ck_assert_ptr_null(find_node(g, "lp/lp_mul"));
  ck_assert_ptr_null(find_node(g, "lp/lp_tanh"));
  /* The loop-invariant Sigmoid waits for the iteration (a control input
   * tf.while_loop gives it): it stays. */
  assert_op(g, "lp/lp_sig", "Sigmoid");
  ck_assert(has_input(must(g, "lp/NextIteration_2"), "lp/lp_add"));
  /* The loop's counters are int32: not the program's. */
  assert_op(g, "lp/add", "AddV2");

  /* Conditions of int32 comparisons, three terms deep too. */
  ck_assert(host_labelled(g, "lp/lp_and"));
  ck_assert(host_labelled(g, "k_and"));
  ck_assert(host_labelled(g, "k_or"));
  ck_assert_int_eq(r.stats.host_conditions, 3);
  /* A bool placeholder or an int64 comparison is on the device. */
  ck_assert_ptr_null(get_attr(must(g, "f_and"), "_kernel"));
  ck_assert_ptr_null(get_attr(must(g, "b_and"), "_kernel"));
  /* The comparisons themselves are unchanged. */
  ck_assert_ptr_null(get_attr(must(g, "lp/lp_less"), "_kernel"));
  assert_idempotent(&r, &cfg);
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);

  /* Without the plugin's host kernels, no label. */
  cfg.host_kernel_label = NULL;
  r = optimize(&b, &cfg);
  ck_assert_msg(r.outcome == OCL_GRAPH_CHANGED, "%s", r.why);
  g = decode_graph(r.out, r.size);
  ck_assert_ptr_null(get_attr(must(g, "lp/lp_and"), "_kernel"));
  ck_assert_int_eq(r.stats.host_conditions, 0);
  tfg__graph_def__free_unpacked(g, NULL);
  free(r.out);
  free(b.data);
}
END_TEST

START_TEST(fused_program_decoder_rejects_malformed)
{
  struct fused_program p;
  char why[256];
  const int ff[2] = {1, 1};
  const float one = 1.0f;
  /* A good one first. */
  const int64_t good[] = {FUSED_SUB, 0, 1, FUSED_CONST, 0, 1,
                          FUSED_MUL, 2, 3};
  ck_assert(fused_program_decode(good, 9, &one, 1, ff, 2, 1, &p, why,
                                 sizeof(why)));
  ck_assert_int_eq(p.num_insns, 3);
  char text[128];
  fused_program_text(&p, text, sizeof(text));
  ck_assert_str_eq(text, "f,f>f:sub(0,1);cf(3f800000);mul(2,3)");
  ck_assert_uint_eq(fused_program_text(&p, NULL, 0), strlen(text));

  static const struct {
    int64_t prog[6];
    size_t len;
    int out;
    const char *says;
  } bad[] = {
      {{FUSED_SUB, 0, 2}, 3, 1, "earlier values"},
      {{FUSED_SUB, 0, 1, FUSED_NEG, 3, -1}, 6, 1, "earlier values"},
      {{7, 0, 1}, 3, 1, "unknown opcode"},
      {{-5, 0, 1}, 3, 1, "unknown opcode"},
      {{INT64_MAX, 0, 1}, 3, 1, "unknown opcode"},
      {{FUSED_NEG, 0, 0}, 3, 1, "not -1"},
      {{FUSED_CONST, 1, 1}, 3, 1, "constant"},
      {{FUSED_CONST, 0, 3}, 3, 1, "constant"},
      {{FUSED_CAST, 0, 2}, 3, 1, "cast to dtype"},
      {{FUSED_ADD, 0, 1}, 3, 19, "output dtype"},
      {{FUSED_ADD, 0, 1}, 3, 7, "output dtype"},
      {{FUSED_ADD, 0}, 2, 1, "3 per instruction"},
      {{0}, 0, 1, "3 per instruction"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ck_assert_msg(!fused_program_decode(bad[i].prog, bad[i].len, &one, 1, ff,
                                        2, bad[i].out, &p, why, sizeof(why)),
                  "case %zu decoded", i);
    ck_assert_msg(strstr(why, bad[i].says) != NULL, "case %zu: %s", i, why);
  }
  /* Operands of two dtypes; inputs of other dtypes; too many inputs. */
  const int fh[2] = {1, 19}, fi[2] = {1, 3};
  ck_assert(!fused_program_decode(good, 9, &one, 1, fh, 2, 1, &p, why,
                                  sizeof(why)));
  ck_assert(strstr(why, "dtypes") != NULL);
  ck_assert(!fused_program_decode(good, 9, &one, 1, fi, 2, 1, &p, why,
                                  sizeof(why)));
  int many[FUSED_MAX_INPUTS + 1];
  for (int k = 0; k <= FUSED_MAX_INPUTS; k++)
    many[k] = 1;
  ck_assert(!fused_program_decode(good, 9, &one, 1, many, FUSED_MAX_INPUTS + 1,
                                  1, &p, why, sizeof(why)));
  /* int64: the integer ops and Cast only; integral constants only; never
   * the output. */
  const int li[2] = {9, 1};
  const int64_t l_ok[] = {FUSED_CONST, 0, 9, FUSED_ADD, 0, 2, FUSED_CAST, 3, 1,
                          FUSED_MUL, 4, 1};
  ck_assert_msg(fused_program_decode(l_ok, 12, &one, 1, li, 2, 1, &p, why,
                                     sizeof(why)),
                "%s", why);
  fused_program_text(&p, text, sizeof(text));
  ck_assert_str_eq(text, "l,f>f:cl(3f800000);add(0,2);castf(3);mul(4,1)");
  const int64_t l_exp[] = {FUSED_ABS, 0, -1};
  ck_assert(!fused_program_decode(l_exp, 3, &one, 1, li, 2, 1, &p, why,
                                  sizeof(why)));
  ck_assert(strstr(why, "int64 operands") != NULL);
  const float half_one = 0.5f;
  const int64_t l_const[] = {FUSED_CONST, 0, 9, FUSED_CAST, 2, 1};
  ck_assert(!fused_program_decode(l_const, 6, &half_one, 1, li, 2, 1, &p, why,
                                  sizeof(why)));
  ck_assert(strstr(why, "no integer") != NULL);
  const int64_t l_out[] = {FUSED_ADD, 0, 0};
  ck_assert(!fused_program_decode(l_out, 3, &one, 1, li, 2, 9, &p, why,
                                  sizeof(why)));
  const int64_t to_l[] = {FUSED_CAST, 1, 9};
  ck_assert(!fused_program_decode(to_l, 3, &one, 1, li, 2, 1, &p, why,
                                  sizeof(why)));

  /* The largest program decodes; one more instruction does not. */
  int64_t big[3 * (FUSED_MAX_INSNS + 1)];
  for (int j = 0; j <= FUSED_MAX_INSNS; j++) {
    big[3 * j] = FUSED_ADD;
    big[3 * j + 1] = j + 1;
    big[3 * j + 2] = 0;
  }
  ck_assert(fused_program_decode(big, 3 * FUSED_MAX_INSNS, NULL, 0, ff, 2, 1,
                                 &p, why, sizeof(why)));
  ck_assert(!fused_program_decode(big, 3 * (FUSED_MAX_INSNS + 1), NULL, 0,
                                  ff, 2, 1, &p, why, sizeof(why)));
}
END_TEST

/* A program's text parses back to a program of the same text (how a
 * second process builds a fused kernel's OpenCL program ahead, from the
 * name alone); every other text is refused, and a parsed program passed
 * the decoder's checks. */
START_TEST(fused_program_text_parses_back)
{
  static const char *const good[] = {
      "f,f>f:sub(0,1);cf(3f800000);mul(2,3)",
      "f,l>f:cf(3f800000);cf(3f7fbe77);cl(3f800000);add(4,1);castf(5);"
      "pow(3,6);sub(2,7);sqrt(8);mul(0,9);cf(3f666666);pow(11,6);"
      "sub(2,12);div(10,13)",
      "f,f,f,f>f:div_no_nan(2,3);mul(1,4);add(0,5)",
      "h,h>h:mul(0,1);ch(3c000000);add(2,3)",
      "f>h:casth(0)",
      "f,f>f:cf(7fc00001);square(0);sub(3,1);mul(2,4)",
  };
  static const char *const bad[] = {
      "",
      "f",
      "f>f",
      "f>f:",
      "x,f>f:add(0,1)",
      "f,f>f:add(0,1",
      "f,f>f:add(0,1);",
      "f,f>f:add(0)",
      "f,f>f:add(0,2)", /* no value 2 yet */
      "f,f>f:nosuchop(0,1)",
      "f,f>f:add(00,1)",    /* not the program's own text */
      "f,f>f:cf(3f80000)",  /* 7 hex digits */
      "f,f>f:cf(3F800000)", /* upper case */
      "f,f>h:add(0,1)",     /* the last value is float */
      "l,l>f:exp(0)",       /* int64 exp */
      "f,f>f:add(0,1)x",
      "f,f>f:add(0,99999999999)",
  };
  struct fused_program p;
  char why[256], text[1024];
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    ck_assert_msg(fused_program_parse(good[i], &p, why, sizeof(why)), "%s: %s",
                  good[i], why);
    fused_program_text(&p, text, sizeof(text));
    ck_assert_str_eq(text, good[i]);
  }
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    ck_assert_msg(!fused_program_parse(bad[i], &p, why, sizeof(why)),
                  "accepted: %s", bad[i]);
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
  struct blob b = load_graph(_i == 0 ? "apply.pb" : "elementwise.pb");
  struct ocl_graph_config cfg = config(true, true, &kernels_all);
  cfg.elementwise = true;
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
  /* Check's default 4 s per case is a limit on the machine, not on the
   * code: damaged_graphs_never_crash decodes thousands of mutated graphs,
   * 3.7 s under ASan on a quiet 2-core machine and past 4 s beside
   * ci/sanitize's valgrind part. */
  tcase_set_timeout(tc, 60);
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
  tcase_add_test(tc, fusion_takes_relu_grad_into_max_pool_grad);
  tcase_add_test(tc, parallel_concat_identity_follows_start);
  tcase_add_test(tc, accumulate_restores_the_addn);
  tcase_add_test(tc, accumulate_needs_kernel_and_private_nodes);
  tcase_add_test(tc, accumulate_refuses_zeros_like_without_input);
  tcase_add_test(tc, elementwise_reads_through_tiles);
  tcase_add_test(tc, elementwise_folds_consts_waiting_inside);
  tcase_add_test(tc, elementwise_cubes_pow_by_three);
  tcase_add_test(tc, elementwise_fuses_private_chains);
  tcase_add_test(tc, elementwise_fetched_intermediates_stay);
  tcase_add_test(tc, elementwise_needs_kernel_and_switch);
  tcase_add_test(tc, elementwise_after_variable_rewrite);
  tcase_add_test(tc, variables_into_fusion_rewrites_only_fusable_updates);
  tcase_add_test(tc, while_loop_body_fuses_and_condition_runs_on_host);
  tcase_add_test(tc, fused_program_decoder_rejects_malformed);
  tcase_add_test(tc, fused_program_text_parses_back);
  tcase_add_test(tc, malformed_bytes_are_rejected);
  tcase_add_loop_test(tc, damaged_graphs_never_crash, 0, 2);
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
