/* The ops suite: every (op, dtype) the plugin registers for OPENCL runs its
 * reference cases (random and edge inputs, failing shapes) on the device
 * and is compared with the float64 host reference within the op's
 * tolerance. A registered op without a reference fails, so a new kernel is
 * covered or the suite says so.
 *
 * TFOCL_OPS_FILTER=Name[,Name...] restricts the run to those ops. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "tfocl/host.h"

#define MAX_PAIRS 4096

struct kernel_case {
  char op[64];
  TF_DataType dtype; /* of the first type constraint */
  int num_constraints;
  char constraint_attr[4][32];
  TF_DataType constraint_type[4];
};

static struct tfocl_plugin *plugin;
static struct tfocl_device *device;
static struct kernel_case pairs[MAX_PAIRS];
static int num_pairs;

/* Ops on resource variables: their inputs are variable handles, which the
 * reference cases cannot express; tests/ops/test_variables.c covers them. */
static bool covered_elsewhere(const char *op)
{
  static const char *const ops[] = {
      "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
      "ResourceApplyGradientDescent", "ResourceApplyMomentum",
      "ResourceApplyAdam", "ResourceGather", "ResourceGatherNd",
      "ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterMul",
      "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax",
      "ResourceScatterUpdate", "ResourceScatterNdAdd", "ResourceScatterNdSub",
      "ResourceScatterNdUpdate", "ResourceStridedSliceAssign"};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
    if (strcmp(op, ops[i]) == 0)
      return true;
  return false;
}

/* One (op, dtype combination) per registered kernel and allowed type. */
static void collect_pairs(void)
{
  int n = tfocl_kernel_count();
  for (int i = 0; i < n; i++) {
    struct tfocl_kernel_info info;
    if (!tfocl_kernel_get(i, &info) || strcmp(info.device_type, "OPENCL") != 0 ||
        !ref_op_selected(info.op_name) || covered_elsewhere(info.op_name))
      continue;
    int expand = info.num_constraints > 0 ? info.constraints[0].num_types : 1;
    for (int t = 0; t < expand && num_pairs < MAX_PAIRS; t++) {
      struct kernel_case *k = &pairs[num_pairs++];
      memset(k, 0, sizeof(*k));
      snprintf(k->op, sizeof(k->op), "%s", info.op_name);
      /* An op without a type attribute (LogicalAnd) has fixed types: the
       * reference's domain says which. */
      const struct ref_op *op = ref_op_find(info.op_name);
      TF_DataType fixed = op != NULL && op->domain == REF_BOOL ? TF_BOOL : TF_FLOAT;
      k->dtype = info.num_constraints > 0 ? info.constraints[0].types[t] : fixed;
      for (int c = 0; c < info.num_constraints && c < 4; c++) {
        snprintf(k->constraint_attr[c], sizeof(k->constraint_attr[c]), "%s",
                 info.constraints[c].attr);
        k->constraint_type[c] = c == 0 ? k->dtype : info.constraints[c].types[0];
      }
      k->num_constraints = info.num_constraints < 4 ? info.num_constraints : 4;
    }
  }
}

START_TEST(op_matches_reference)
{
  const struct kernel_case *k = &pairs[_i];
  const struct ref_op *op = ref_op_find(k->op);
  ck_assert_msg(op != NULL, "%s is registered for OPENCL but has no reference",
                k->op);

  struct ref_cases cases = {0};
  op->cases(op, k->dtype, &cases);
  ck_assert_msg(cases.count > 0, "%s has no cases for %s", k->op,
                tfocl_type_name(k->dtype));

  int failed = 0;
  char first_failure[768] = "";
  for (int i = 0; i < cases.count; i++) {
    struct ref_case *c = &cases.items[i];
    /* Pin the kernel's other type constraints (Cast's DstT, ...). */
    for (int a = 1; a < k->num_constraints; a++)
      if (ref_case_attr(c, k->constraint_attr[a]) == NULL)
        ref_case_attr_type(c, k->constraint_attr[a], k->constraint_type[a]);
    struct ref_result r;
    ref_run_case(device, op, c, &r);
    if (!r.passed) {
      if (failed++ == 0)
        snprintf(first_failure, sizeof(first_failure), "%s [%s]: %s", c->label,
                 tfocl_type_name(k->dtype), r.message);
      fprintf(stderr, "FAIL %s [%s]: %s\n", c->label, tfocl_type_name(k->dtype),
              r.message);
    }
  }
  int total = cases.count;
  ref_cases_finish(&cases);
  ck_assert_msg(failed == 0, "%s %s: %d of %d cases failed; first: %s", k->op,
                tfocl_type_name(k->dtype), failed, total, first_failure);
}
END_TEST

START_TEST(plugin_registers_kernels)
{
  ck_assert_msg(num_pairs > 0, "the plugin registered no OPENCL kernels");
}
END_TEST

int main(void)
{
  const char *path = getenv("TFOCL_PLUGIN");
  TF_Status *status = TF_NewStatus();
  if (path == NULL) {
    fprintf(stderr, "TFOCL_PLUGIN is not set\n");
    return EXIT_FAILURE;
  }
  plugin = tfocl_plugin_load(path, status);
  if (plugin == NULL) {
    fprintf(stderr, "loading %s: %s\n", path, TF_Message(status));
    return EXIT_FAILURE;
  }
  if (tfocl_plugin_device_count(plugin, status) < 1) {
    fprintf(stderr, "no OpenCL device: skipped\n");
    tfocl_plugin_unload(plugin);
    TF_DeleteStatus(status);
    return 77;
  }
  device = tfocl_device_open(plugin, 0, status);
  if (device == NULL) {
    fprintf(stderr, "opening device 0: %s\n", TF_Message(status));
    return EXIT_FAILURE;
  }
  collect_pairs();

  Suite *s = suite_create("ops");
  TCase *tc = tcase_create("ops");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, plugin_registers_kernels);
  tcase_add_loop_test(tc, op_matches_reference, 0, num_pairs);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  /* The device lives in this process: OpenCL state does not survive fork. */
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);

  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
  TF_DeleteStatus(status);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
