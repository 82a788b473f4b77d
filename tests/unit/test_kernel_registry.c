/* Kernel builders and the registry: constraints, priority, duplicates,
 * ownership. */
#include "test_util.h"

static void compute_nothing(void *k, TF_OpKernelContext *ctx)
{
  (void)k;
  (void)ctx;
}

static int find_kernel(const char *name, struct tfocl_kernel_info *out)
{
  for (int i = 0; i < tfocl_kernel_count(); i++) {
    struct tfocl_kernel_info k;
    ck_assert(tfocl_kernel_get(i, &k));
    if (strcmp(k.kernel_name, name) == 0) {
      *out = k;
      return i;
    }
  }
  return -1;
}

START_TEST(register_records_everything)
{
  TF_Status *st = TF_NewStatus();
  TF_KernelBuilder *b =
      TF_NewKernelBuilder("Mul", "TESTDEV", NULL, compute_nothing, NULL);
  struct tfocl_kernel_info k;
  ck_assert_ptr_nonnull(b);
  TF_KernelBuilder_TypeConstraint(b, "T", TF_FLOAT, st);
  ck_assert_ok(st);
  TF_KernelBuilder_TypeConstraint(b, "T", TF_HALF, st);
  TF_KernelBuilder_TypeConstraint(b, "T", TF_FLOAT, st); /* deduplicated */
  TF_KernelBuilder_HostMemory(b, "y");
  TF_KernelBuilder_Priority(b, 3);
  TF_RegisterKernelBuilder("Mul_TESTDEV", b, st);
  ck_assert_ok(st);
  ck_assert_int_eq(tfocl_kernel_count(), 1);
  ck_assert_int_eq(find_kernel("Mul_TESTDEV", &k), 0);
  ck_assert_str_eq(k.op_name, "Mul");
  ck_assert_str_eq(k.device_type, "TESTDEV");
  ck_assert_int_eq(k.priority, 3);
  ck_assert_int_eq(k.num_constraints, 1);
  ck_assert_str_eq(k.constraints[0].attr, "T");
  ck_assert_int_eq(k.constraints[0].num_types, 2);
  ck_assert_int_eq(k.num_host_memory_args, 1);
  ck_assert_str_eq(k.host_memory_args[0], "y");
  ck_assert(!tfocl_kernel_get(1, &k));
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(order_is_op_then_device_then_registration)
{
  TF_Status *st = TF_NewStatus();
  const char *regs[][3] = {{"Sub", "B", "k1"}, {"AddV2", "B", "k2"},
                           {"Sub", "A", "k3"}, {"AddV2", "B", "k4"}};
  const char *want[] = {"k2", "k4", "k3", "k1"};
  for (int i = 0; i < 4; i++) {
    TF_KernelBuilder *b =
        TF_NewKernelBuilder(regs[i][0], regs[i][1], NULL, compute_nothing, NULL);
    /* distinct priorities: same op/device must not clash */
    TF_KernelBuilder_Priority(b, i);
    TF_RegisterKernelBuilder(regs[i][2], b, st);
    ck_assert_ok(st);
  }
  for (int i = 0; i < 4; i++) {
    struct tfocl_kernel_info k;
    ck_assert(tfocl_kernel_get(i, &k));
    ck_assert_str_eq(k.kernel_name, want[i]);
  }
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(duplicate_is_already_exists)
{
  TF_Status *st = TF_NewStatus();
  TF_KernelBuilder *a =
      TF_NewKernelBuilder("Relu", "TESTDEV", NULL, compute_nothing, NULL);
  TF_KernelBuilder *b =
      TF_NewKernelBuilder("Relu", "TESTDEV", NULL, compute_nothing, NULL);
  TF_KernelBuilder *c =
      TF_NewKernelBuilder("Relu", "TESTDEV", NULL, compute_nothing, NULL);
  TF_KernelBuilder *d =
      TF_NewKernelBuilder("Relu", "TESTDEV", NULL, compute_nothing, NULL);
  TF_KernelBuilder_TypeConstraint(a, "T", TF_FLOAT, st);
  TF_KernelBuilder_TypeConstraint(b, "T", TF_HALF, st);
  TF_KernelBuilder_TypeConstraint(b, "T", TF_FLOAT, st);
  TF_KernelBuilder_TypeConstraint(c, "T", TF_DOUBLE, st);
  TF_KernelBuilder_TypeConstraint(d, "T", TF_FLOAT, st);
  TF_KernelBuilder_Priority(d, 1);
  TF_RegisterKernelBuilder("relu_f", a, st);
  ck_assert_ok(st);
  TF_RegisterKernelBuilder("relu_hf", b, st); /* overlaps on float */
  ck_assert_status(st, TF_ALREADY_EXISTS);
  ck_assert_msg_has(st, "relu_hf");
  ck_assert_msg_has(st, "relu_f");
  ck_assert_msg_has(st, "Multiple OpKernel registrations");
  TF_RegisterKernelBuilder("relu_d", c, st); /* disjoint */
  ck_assert_ok(st);
  TF_RegisterKernelBuilder("relu_f_prio", d, st); /* other priority */
  ck_assert_ok(st);
  ck_assert_int_eq(tfocl_kernel_count(), 3);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(label_separates_kernels)
{
  TF_Status *st = TF_NewStatus();
  TF_KernelBuilder *a =
      TF_NewKernelBuilder("Relu", "TESTDEV", NULL, compute_nothing, NULL);
  TF_KernelBuilder *b =
      TF_NewKernelBuilder("Relu", "TESTDEV", NULL, compute_nothing, NULL);
  TF_KernelBuilder_Label(b, "fast");
  TF_RegisterKernelBuilder("a", a, st);
  ck_assert_ok(st);
  TF_RegisterKernelBuilder("b", b, st);
  ck_assert_ok(st);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(kernel_def_variant_unimplemented_and_owned)
{
  TF_Status *st = TF_NewStatus();
  TF_KernelBuilder *b =
      TF_NewKernelBuilder("Relu", "TESTDEV", NULL, compute_nothing, NULL);
  TF_RegisterKernelBuilderWithKernelDef("", "k", b, st);
  ck_assert_status(st, TF_UNIMPLEMENTED);
  ck_assert_int_eq(tfocl_kernel_count(), 0);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(register_without_compute_fails_and_frees)
{
  TF_Status *st = TF_NewStatus();
  TF_KernelBuilder *b = TF_NewKernelBuilder("Relu", "TESTDEV", NULL, NULL, NULL);
  TF_RegisterKernelBuilder("k", b, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_RegisterKernelBuilder("k", NULL, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_DeleteKernelBuilder(NULL);
  TF_DeleteKernelBuilder(
      TF_NewKernelBuilder("Relu", "TESTDEV", NULL, compute_nothing, NULL));
  ck_assert_int_eq(tfocl_kernel_count(), 0);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(plugin_kernels_go_with_the_plugin)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_kernel_info k;
  TF_KernelBuilder *b =
      TF_NewKernelBuilder("Relu", "TESTDEV", NULL, compute_nothing, NULL);
  struct tfocl_plugin *p;

  TF_RegisterKernelBuilder("mine", b, st);
  ck_assert_ok(st);
  p = tfocl_plugin_load(stub_path("kernels_only"), st);
  ck_assert_ok(st);
  ck_assert(!tfocl_plugin_has_devices(p));
  ck_assert_int_eq(tfocl_kernel_count(), 6);
  ck_assert_int_ge(find_kernel("StubAdd_STUB_float", &k), 0);
  tfocl_plugin_unload(p);
  ck_assert_int_eq(tfocl_kernel_count(), 1);
  ck_assert_int_ge(find_kernel("mine", &k), 0);
  TF_DeleteStatus(st);
}
END_TEST

static Suite *registry_suite(void)
{
  Suite *s = suite_create("kernel_registry");
  TCase *tc = tcase_create("registry");
  tcase_add_test(tc, register_records_everything);
  tcase_add_test(tc, order_is_op_then_device_then_registration);
  tcase_add_test(tc, duplicate_is_already_exists);
  tcase_add_test(tc, label_separates_kernels);
  tcase_add_test(tc, kernel_def_variant_unimplemented_and_owned);
  tcase_add_test(tc, register_without_compute_fails_and_frees);
  tcase_add_test(tc, plugin_kernels_go_with_the_plugin);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(registry_suite()); }
