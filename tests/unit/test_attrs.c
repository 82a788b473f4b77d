/* TF_OpKernelConstruction_GetAttr*: values, sizes, TensorFlow's errors. */
#include "tensorflow/c/kernels_experimental.h"
#include "test_util.h"

static void (*probe)(TF_OpKernelConstruction *ctx);
static struct tfocl_plugin *plugin;
static struct tfocl_device *device;

static void *probe_create(TF_OpKernelConstruction *ctx)
{
  probe(ctx);
  return NULL;
}

static void compute_nothing(void *k, TF_OpKernelContext *ctx)
{
  (void)k;
  (void)ctx;
}

static void setup(void)
{
  TF_Status *st = TF_NewStatus();
  TF_KernelBuilder *b;
  plugin = tfocl_plugin_load(stub_path("ok"), st);
  ck_assert_ok(st);
  device = tfocl_device_open(plugin, 0, st);
  ck_assert_ok(st);
  tfocl_op_def_add("AttrProbe", "x: T", "y: T",
                   "T: type, i: int = 7, big: int = 8589934592, "
                   "f: float = 0.5, b: bool = true, s: string = 'hello', "
                   "li: list(int) = [1, 2, 3], lf: list(float) = [2.5], "
                   "lb: list(bool) = [true, false], "
                   "lt: list(type) = [float, int32], "
                   "ls: list(string) = ['ab', 'cde'], sh: shape = [2, 3], "
                   "lbig: list(int) = [1, 8589934592]",
                   st);
  ck_assert_ok(st);
  b = TF_NewKernelBuilder("AttrProbe", "STUB", probe_create, compute_nothing,
                          NULL);
  TF_RegisterKernelBuilder("AttrProbe_STUB", b, st);
  ck_assert_ok(st);
  TF_DeleteStatus(st);
}

static void teardown(void)
{
  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
}

static void run_probe(void (*fn)(TF_OpKernelConstruction *),
                      const struct tfocl_attr *attrs, int n)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType in = TF_FLOAT;
  struct tfocl_op *op;
  probe = fn;
  op = tfocl_op_create(device, "AttrProbe", attrs, n, &in, 1, st);
  ck_assert_ok(st);
  tfocl_op_destroy(op);
  TF_DeleteStatus(st);
}

static void probe_scalars(TF_OpKernelConstruction *ctx)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType t;
  int32_t i32;
  int64_t i64;
  float f;
  TF_Bool b;
  char s[8] = {0};
  TF_OpKernelConstruction_GetAttrType(ctx, "T", &t, st);
  ck_assert_ok(st);
  ck_assert_int_eq(t, TF_FLOAT);
  TF_OpKernelConstruction_GetAttrInt32(ctx, "i", &i32, st);
  ck_assert_ok(st);
  ck_assert_int_eq(i32, 42);
  TF_OpKernelConstruction_GetAttrInt64(ctx, "big", &i64, st);
  ck_assert_ok(st);
  ck_assert(i64 == 8589934592LL);
  TF_OpKernelConstruction_GetAttrFloat(ctx, "f", &f, st);
  ck_assert_ok(st);
  ck_assert(f == 0.5f);
  TF_OpKernelConstruction_GetAttrBool(ctx, "b", &b, st);
  ck_assert_ok(st);
  ck_assert_int_eq(b, 1);
  TF_OpKernelConstruction_GetAttrString(ctx, "s", s, 3, st);
  ck_assert_ok(st);
  ck_assert_str_eq(s, "hel"); /* max_length bytes, no NUL added */
  ck_assert(TF_OpKernelConstruction_HasAttr(ctx, "sh", st));
  ck_assert(!TF_OpKernelConstruction_HasAttr(ctx, "zz", st));
  ck_assert_ok(st);
  {
    TF_StringView name = TF_OpKernelConstruction_GetName(ctx);
    ck_assert_int_eq((int)name.len, 9);
    ck_assert(strncmp(name.data, "AttrProbe", name.len) == 0);
  }
  TF_DeleteStatus(st);
}

START_TEST(scalars_given_and_defaulted)
{
  struct tfocl_attr attrs[] = {TFOCL_ATTR_I("i", 42)};
  run_probe(probe_scalars, attrs, 1);
}
END_TEST

static void probe_lists(TF_OpKernelConstruction *ctx)
{
  TF_Status *st = TF_NewStatus();
  int32_t list_size, total;
  int64_t li[3];
  int32_t li32[3];
  float lf[1];
  TF_Bool lb[2];
  TF_DataType lt[2];
  char *ls[2];
  size_t lens[2];
  char storage[5];
  int64_t dims[2];

  TF_OpKernelConstruction_GetAttrSize(ctx, "li", &list_size, &total, st);
  ck_assert_ok(st);
  ck_assert_int_eq(list_size, 3);
  ck_assert_int_eq(total, -1);
  TF_OpKernelConstruction_GetAttrSize(ctx, "ls", &list_size, &total, st);
  ck_assert_int_eq(list_size, 2);
  ck_assert_int_eq(total, 5);
  TF_OpKernelConstruction_GetAttrSize(ctx, "s", &list_size, &total, st);
  ck_assert_int_eq(list_size, -1);
  ck_assert_int_eq(total, 5);
  TF_OpKernelConstruction_GetAttrSize(ctx, "sh", &list_size, &total, st);
  ck_assert_int_eq(total, 2);
  TF_OpKernelConstruction_GetAttrInt64List(ctx, "li", li, 3, st);
  ck_assert_ok(st);
  ck_assert(li[2] == 3);
  TF_OpKernelConstruction_GetAttrInt32List(ctx, "li", li32, 3, st);
  ck_assert_ok(st);
  ck_assert_int_eq(li32[1], 2);
  TF_OpKernelConstruction_GetAttrFloatList(ctx, "lf", lf, 1, st);
  ck_assert(lf[0] == 2.5f);
  TF_OpKernelConstruction_GetAttrBoolList(ctx, "lb", lb, 2, st);
  ck_assert(lb[0] == 1 && lb[1] == 0);
  TF_OpKernelConstruction_GetAttrTypeList(ctx, "lt", lt, 2, st);
  ck_assert(lt[0] == TF_FLOAT && lt[1] == TF_INT32);
  TF_OpKernelConstruction_GetAttrStringList(ctx, "ls", ls, lens, 2, storage,
                                            sizeof(storage), st);
  ck_assert_ok(st);
  ck_assert_uint_eq(lens[1], 3);
  ck_assert(strncmp(ls[1], "cde", 3) == 0);
  TF_OpKernelConstruction_GetAttrStringList(ctx, "ls", ls, lens, 2, storage,
                                            4, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_OpKernelConstruction_GetAttrTensorShape(ctx, "sh", dims, 2, st);
  ck_assert_ok(st);
  ck_assert(dims[0] == 2 && dims[1] == 3);
  TF_OpKernelConstruction_GetAttrTensorShape(ctx, "sh", dims, 1, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_DeleteStatus(st);
}

START_TEST(lists_and_shapes)
{
  run_probe(probe_lists, NULL, 0);
}
END_TEST

static void probe_errors(TF_OpKernelConstruction *ctx)
{
  TF_Status *st = TF_NewStatus();
  int32_t i32 = 99;
  int32_t l32[2] = {99, 99};
  float f;
  TF_Tensor *t = NULL;

  TF_OpKernelConstruction_GetAttrFloat(ctx, "missing", &f, st);
  ck_assert_status(st, TF_NOT_FOUND);
  ck_assert_msg_has(st, "No attr named 'missing' in NodeDef:");
  TF_OpKernelConstruction_GetAttrFloat(ctx, "i", &f, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "AttrValue had value with type 'int' when 'float' "
                        "expected");
  ck_assert_msg_has(st, "for attr 'i'");
  TF_OpKernelConstruction_GetAttrInt32(ctx, "big", &i32, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "Attr big has value 8589934592 out of range for an "
                        "int32");
  ck_assert_int_eq(i32, 99); /* untouched */
  TF_OpKernelConstruction_GetAttrInt32List(ctx, "lbig", l32, 2, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_int_eq(l32[0], 99);
  TF_OpKernelConstruction_GetAttrTensor(ctx, "i", &t, st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_DeleteStatus(st);
}

START_TEST(missing_and_mistyped)
{
  run_probe(probe_errors, NULL, 0);
}
END_TEST

static void probe_fail(TF_OpKernelConstruction *ctx)
{
  TF_Status *st = TF_NewStatus();
  TF_SetStatus(st, TF_FAILED_PRECONDITION, "probe says no");
  TF_OpKernelConstruction_Failure(ctx, st);
  TF_DeleteStatus(st);
}

START_TEST(construction_failure_is_returned)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType in = TF_FLOAT;
  probe = probe_fail;
  ck_assert_ptr_null(tfocl_op_create(device, "AttrProbe", NULL, 0, &in, 1, st));
  ck_assert_status(st, TF_FAILED_PRECONDITION);
  ck_assert_str_eq(TF_Message(st), "probe says no");
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(given_attr_of_wrong_kind_or_unknown)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType in = TF_FLOAT;
  struct tfocl_attr wrong[] = {TFOCL_ATTR_F("i", 1.0f)};
  struct tfocl_attr unknown[] = {TFOCL_ATTR_I("nope", 1)};
  probe = probe_scalars;
  ck_assert_ptr_null(
      tfocl_op_create(device, "AttrProbe", wrong, 1, &in, 1, st));
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "for attr 'i'");
  ck_assert_ptr_null(
      tfocl_op_create(device, "AttrProbe", unknown, 1, &in, 1, st));
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  ck_assert_msg_has(st, "'nope'");
  TF_DeleteStatus(st);
}
END_TEST

static Suite *attrs_suite(void)
{
  Suite *s = suite_create("attrs");
  TCase *tc = tcase_create("attrs");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, scalars_given_and_defaulted);
  tcase_add_test(tc, lists_and_shapes);
  tcase_add_test(tc, missing_and_mistyped);
  tcase_add_test(tc, construction_failure_is_returned);
  tcase_add_test(tc, given_attr_of_wrong_kind_or_unknown);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(attrs_suite()); }
