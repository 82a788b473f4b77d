/* The graph optimizer through the host shim, as TensorFlow drives it:
 * TF_InitGraph's registration and its validation (stub plugins breaking one
 * rule each), the item's node lists, and libtfocl.so's optimizer on the
 * GraphDefs of tests/graph/data/.
 *
 * libtfocl.so decides once per process whether the variable rewrite is
 * needed (TFOCL_HIDE_TF_EXPERIMENTAL=1 stands in for TensorFlow 2.21):
 * meson runs this suite once with the hook and once without, and the
 * expectations follow the variable. */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph_test_util.h"
#include "tfocl/host.h"

#define ck_assert_code(st, code)                                            \
  ck_assert_msg(TF_GetCode(st) == (code), "expected code %d, got %d: %s",   \
                (int)(code), (int)TF_GetCode(st), TF_Message(st))

static const char *stub(const char *variant)
{
  static char buf[4096];
  snprintf(buf, sizeof(buf), "%s/stub_graph_%s.so",
           getenv("TFOCL_GRAPH_STUB_DIR"), variant);
  return buf;
}

static bool hidden(void)
{
  const char *v = getenv("TFOCL_HIDE_TF_EXPERIMENTAL");
  return v != NULL && strcmp(v, "1") == 0;
}

/* ---- Registration and validation (stub plugins) -------------------------- */

START_TEST(registration_is_recorded)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub("ok"), st);
  ck_assert_code(st, TF_OK);
  ck_assert_str_eq(tfocl_plugin_graph_device_type(p), "STUB_GRAPH");
  TP_OptimizerConfigs configs;
  ck_assert(tfocl_plugin_graph_configs(p, &configs));
  ck_assert_uint_eq(configs.struct_size, TP_OPTIMIZER_CONFIGS_STRUCT_SIZE);
  ck_assert_int_eq(configs.remapping, TF_TriState_Off);
  ck_assert_int_eq(configs.constant_folding, TF_TriState_Default);
  /* A kernels-and-devices plugin has no optimizer. */
  ck_assert_ptr_null(tfocl_plugin_graph_device_type(NULL));
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

static const struct {
  const char *variant;
  TF_Code code;
  const char *message;
} broken[] = {
    {"init_status", TF_INTERNAL, "stub TF_InitGraph failed"},
    {"params_struct_size", TF_FAILED_PRECONDITION,
     "struct_size field in TP_OptimizerRegistrationParams must be set to "
     "TP_OPTIMIZER_REGISTRATION_PARAMS_STRUCT_SIZE."},
    {"no_device_type", TF_FAILED_PRECONDITION,
     "'device_type' field in TP_OptimizerRegistrationParams must be set."},
    {"optimizer_struct_size", TF_FAILED_PRECONDITION,
     "struct_size field in TP_Optimizer must be set to "
     "TP_OPTIMIZER_STRUCT_SIZE."},
    {"no_optimize_func", TF_FAILED_PRECONDITION,
     "'optimize_func' field in TP_Optimizer must be set."},
    {"configs_struct_size", TF_FAILED_PRECONDITION,
     "struct_size field in TP_OptimizerConfigs must be set to "
     "TP_OPTIMIZER_CONFIGS_STRUCT_SIZE."},
};

START_TEST(broken_registration_fails_the_load)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub(broken[_i].variant), st);
  ck_assert_ptr_null(p);
  ck_assert_code(st, broken[_i].code);
  ck_assert_str_eq(TF_Message(st), broken[_i].message);
  /* Nothing stays registered: a good plugin loads next. */
  p = tfocl_plugin_load(stub("ok"), st);
  ck_assert_code(st, TF_OK);
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(one_optimizer_per_device_type)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub("ok"), st);
  ck_assert_code(st, TF_OK);
  struct tfocl_plugin *q = tfocl_plugin_load(stub("ok_copy"), st);
  ck_assert_ptr_null(q);
  ck_assert_code(st, TF_ALREADY_EXISTS);
  ck_assert_str_eq(TF_Message(st), "PluginGraphOptimizer with device_type "
                                   "STUB_GRAPH is registered twice.");
  tfocl_plugin_unload(p);
  q = tfocl_plugin_load(stub("ok_copy"), st);
  ck_assert_code(st, TF_OK);
  tfocl_plugin_unload(q);
  TF_DeleteStatus(st);
}
END_TEST

static char *read_log(const char *path)
{
  static char buf[8192];
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
  if (f)
    fclose(f);
  buf[n] = '\0';
  return buf;
}

START_TEST(optimizer_sees_the_item_and_its_lifecycle)
{
  char log[] = "/tmp/tfocl_graph_stub_XXXXXX";
  int fd = mkstemp(log);
  ck_assert_int_ge(fd, 0);
  close(fd);
  setenv("TFOCL_STUB_LOG", log, 1);
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub("ok"), st);
  ck_assert_code(st, TF_OK);
  static const char *const fetch[] = {"out:1", "loss"};
  static const char *const keep[] = {"init", "loss"};
  struct tfocl_graph_item item = {fetch, 2, keep, 2};
  static const unsigned char graph[] = {0x0a, 0x03, 0x0a, 0x01, 'a'};
  void *out;
  size_t size;
  tfocl_graph_optimize(p, graph, sizeof(graph), &item, &out, &size, st);
  ck_assert_code(st, TF_OK);
  ck_assert_uint_eq(size, sizeof(graph));
  ck_assert_mem_eq(out, graph, size);
  tfocl_graph_free(out);
  tfocl_plugin_unload(p);
  unsetenv("TFOCL_STUB_LOG");
  /* Fetches as given; NodesToPreserve: node names, each once. */
  ck_assert_str_eq(read_log(log), "create\n"
                                  "short-refused\n"
                                  "fetch out:1\n"
                                  "fetch loss\n"
                                  "short-refused\n"
                                  "preserve out\n"
                                  "preserve loss\n"
                                  "preserve init\n"
                                  "free\n"
                                  "destroy\n");
  unlink(log);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(failing_optimizer_reports_its_status)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = tfocl_plugin_load(stub("fail_optimize"), st);
  ck_assert_code(st, TF_OK);
  void *out = (void *)1;
  size_t size = 7;
  tfocl_graph_optimize(p, "", 0, NULL, &out, &size, st);
  ck_assert_code(st, TF_INTERNAL);
  ck_assert_str_eq(TF_Message(st), "stub optimizer failed");
  ck_assert_ptr_null(out);
  ck_assert_uint_eq(size, 0);
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

/* ---- libtfocl.so's optimizer ---------------------------------------------- */

static struct tfocl_plugin *load_tfocl(TF_Status *st)
{
  struct tfocl_plugin *p =
      tfocl_plugin_load(getenv("TFOCL_GRAPH_PLUGIN"), st);
  ck_assert_code(st, TF_OK);
  return p;
}

struct run {
  void *out;
  size_t size;
  bool changed;
};

static struct run run_tfocl(struct tfocl_plugin *p, const struct blob *in,
                            const struct tfocl_graph_item *item)
{
  struct run r = {0};
  TF_Status *st = TF_NewStatus();
  tfocl_graph_optimize(p, in->data, in->size, item, &r.out, &r.size, st);
  /* Never an error: whatever happens, the graph goes on. */
  ck_assert_code(st, TF_OK);
  r.changed = r.size != in->size || memcmp(r.out, in->data, in->size) != 0;
  TF_DeleteStatus(st);
  return r;
}

START_TEST(tfocl_registers_for_opencl)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = load_tfocl(st);
  ck_assert_str_eq(tfocl_plugin_graph_device_type(p), "OPENCL");
  TP_OptimizerConfigs configs;
  ck_assert(tfocl_plugin_graph_configs(p, &configs));
  /* TensorFlow's own optimizers keep the user's configuration. */
  ck_assert_int_eq(configs.remapping, TF_TriState_Default);
  ck_assert_int_eq(configs.disable_model_pruning, TF_TriState_Default);
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(tfocl_rewrites_variable_updates_all_or_into_fusion)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = load_tfocl(st);
  static const char *const fetch[] = {"result"};
  struct tfocl_graph_item item = {fetch, 1, NULL, 0};
  struct blob b = load_graph("variables.pb");
  struct run r = run_tfocl(p, &b, &item);
  if (!hidden()) {
    /* TensorFlow 2.19: the plugin's own kernels update the variables in
     * place, but for the update whose value (x * 0.5) is an element-wise
     * op's: its Sub joins that op's fused program. */
    ck_assert(r.changed);
    Tfg__GraphDef *g = decode_graph(r.out, r.size);
    assert_closed(g);
    ck_assert(bytes_is(&find_node(g, "assign_add")->op, "AssignAddVariableOp"));
    ck_assert(bytes_is(&find_node(g, "count")->op, "AssignAddVariableOp"));
    ck_assert(bytes_is(&find_node(g, "assign_sub")->op, "AssignVariableOp"));
    ck_assert(bytes_is(&find_node(g, "assign_sub/tfocl_sub")->op,
                       "_TfoclFusedElementwise"));
    tfg__graph_def__free_unpacked(g, NULL);
  } else {
    ck_assert(r.changed);
    Tfg__GraphDef *g = decode_graph(r.out, r.size);
    assert_closed(g);
    ck_assert_uint_eq(count_op(g, "AssignSubVariableOp"), 0);
    ck_assert(bytes_is(&find_node(g, "assign_add")->op, "AssignVariableOp"));
    ck_assert(bytes_is(&find_node(g, "count")->op, "AssignVariableOp"));
    ck_assert(bytes_is(&find_node(g, "assign_add/tfocl_add")->op, "AddV2"));
    ck_assert(on_device(find_node(g, "assign_add/tfocl_add"), OPENCL_DEVICE));
    ck_assert(has_input(find_node(g, "result"), "^assign_sub"));
    tfg__graph_def__free_unpacked(g, NULL);
    /* Idempotent: the second run hands its input back. */
    struct blob again = {r.out, r.size};
    struct run r2 = run_tfocl(p, &again, &item);
    ck_assert(!r2.changed);
    tfocl_graph_free(r2.out);
  }
  tfocl_graph_free(r.out);

  struct blob apply = load_graph("apply.pb");
  r = run_tfocl(p, &apply, NULL);
  ck_assert(r.changed == hidden());
  if (hidden()) {
    Tfg__GraphDef *g = decode_graph(r.out, r.size);
    ck_assert_uint_eq(count_op(g, "ResourceApplyAdam"), 0);
    ck_assert(bytes_is(&find_node(g, "apply_adam")->op, "NoOp"));
    tfg__graph_def__free_unpacked(g, NULL);
  }
  tfocl_graph_free(r.out);
  free(apply.data);
  free(b.data);
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(tfocl_switches_off_by_environment)
{
  static const char *const vars[] = {"TFOCL_GRAPH", "TFOCL_GRAPH_VARIABLES"};
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = load_tfocl(st);
  struct blob b = load_graph("variables.pb");
  for (size_t i = 0; i < 2; i++) {
    setenv(vars[i], "0", 1);
    struct run r = run_tfocl(p, &b, NULL);
    ck_assert_msg(!r.changed, "%s=0 changed the graph", vars[i]);
    tfocl_graph_free(r.out);
    unsetenv(vars[i]);
  }
  free(b.data);
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(tfocl_fuses_where_it_has_kernels)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = load_tfocl(st);
  struct blob b = load_graph("dense.pb");
  struct run r = run_tfocl(p, &b, NULL);
  /* libtfocl.so registers _FusedConv2D for float (kernels/conv.c): the
   * Conv2D chains fuse. */
  ck_assert(r.changed);
  Tfg__GraphDef *g = decode_graph(r.out, r.size);
  ck_assert(bytes_is(&find_node(g, "relu6")->op, "_FusedConv2D"));
  tfg__graph_def__free_unpacked(g, NULL);
  tfocl_graph_free(r.out);
  free(b.data);
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(tfocl_leaves_cpu_graphs_alone)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = load_tfocl(st);
  struct blob b = load_graph("variables_cpu.pb");
  struct run r = run_tfocl(p, &b, NULL);
  ck_assert(!r.changed);
  tfocl_graph_free(r.out);
  free(b.data);
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(tfocl_returns_malformed_graphs_unchanged)
{
  static const unsigned char garbage[] = {0x0a, 0xff, 0xff, 0xff, 0x7f, 0x01};
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p = load_tfocl(st);
  struct blob b = {(unsigned char *)garbage, sizeof(garbage)};
  struct run r = run_tfocl(p, &b, NULL);
  ck_assert(!r.changed);
  tfocl_graph_free(r.out);
  /* An empty GraphDef: an empty buffer back, not a failure. */
  b.size = 0;
  r = run_tfocl(p, &b, NULL);
  ck_assert_uint_eq(r.size, 0);
  tfocl_graph_free(r.out);
  tfocl_plugin_unload(p);
  TF_DeleteStatus(st);
}
END_TEST

static Suite *graph_shim_suite(void)
{
  Suite *s = suite_create("graph_shim");
  TCase *tc = tcase_create("registration");
  tcase_add_test(tc, registration_is_recorded);
  tcase_add_loop_test(tc, broken_registration_fails_the_load, 0,
                      (int)(sizeof(broken) / sizeof(broken[0])));
  tcase_add_test(tc, one_optimizer_per_device_type);
  tcase_add_test(tc, optimizer_sees_the_item_and_its_lifecycle);
  tcase_add_test(tc, failing_optimizer_reports_its_status);
  suite_add_tcase(s, tc);
  tc = tcase_create("tfocl");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, tfocl_registers_for_opencl);
  tcase_add_test(tc, tfocl_rewrites_variable_updates_all_or_into_fusion);
  tcase_add_test(tc, tfocl_switches_off_by_environment);
  tcase_add_test(tc, tfocl_fuses_where_it_has_kernels);
  tcase_add_test(tc, tfocl_leaves_cpu_graphs_alone);
  tcase_add_test(tc, tfocl_returns_malformed_graphs_unchanged);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(graph_shim_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
