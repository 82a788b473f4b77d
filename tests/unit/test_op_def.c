/* Op signatures in REGISTER_OP notation. */
#include "test_util.h"

START_TEST(builtins_exist)
{
  ck_assert(tfocl_op_def_exists("NoOp"));
  ck_assert(tfocl_op_def_exists("AddV2"));
  ck_assert(tfocl_op_def_exists("Relu"));
  ck_assert(!tfocl_op_def_exists("NoSuchOp"));
}
END_TEST

START_TEST(add_rich_signatures)
{
  TF_Status *st = TF_NewStatus();
  tfocl_op_def_add("TConcat", "values: N * T, axis: Tidx", "output: T",
                   "N: int >= 2, T: type, Tidx: {int32, int64} = int32", st);
  ck_assert_ok(st);
  tfocl_op_def_add("TSum", "input: T, axis: Tidx", "output: T",
                   "keep_dims: bool = false, T: {float, half}, "
                   "Tidx: type = int32",
                   st);
  ck_assert_ok(st);
  tfocl_op_def_add("TSplit", "split_dim: int32, value: T", "output: num_split * T",
                   "num_split: int >= 1, T: type", st);
  ck_assert_ok(st);
  tfocl_op_def_add("TAlign", "input: T", "output: T",
                   "T: type, align: {'LEFT_RIGHT', 'RIGHT_LEFT'} = "
                   "'RIGHT_LEFT'",
                   st);
  ck_assert_ok(st);
  ck_assert(tfocl_op_def_exists("MatrixDiagPartV3"));
  tfocl_op_def_add("TDefaults", "", "",
                   "a: int = -3, f: float = 1.5, s: string = 'x y', "
                   "l: list(int) = [1, 2], t: list(type) = [], "
                   "sh: shape = [2, 3]",
                   st);
  ck_assert_ok(st);
  tfocl_op_def_add("TList", "components: Tcomponents", "",
                   "Tcomponents: list(type) >= 1", st);
  ck_assert_ok(st);
  ck_assert(tfocl_op_def_exists("TConcat"));
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(clash_is_already_exists)
{
  TF_Status *st = TF_NewStatus();
  tfocl_op_def_add("AddV2", "x: T", "z: T", "T: type", st);
  ck_assert_status(st, TF_ALREADY_EXISTS);
  ck_assert_msg_has(st, "AddV2");
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(malformed_signatures)
{
  static const char *const bad[][3] = {
      {"x: T", "z: T", ""},                  /* T undeclared */
      {"x T", "z: T", "T: type"},            /* no colon */
      {"x: N * T", "z: T", "T: type"},       /* N undeclared */
      {"x: T", "z: T", "T: typo"},           /* unknown kind */
      {"x: T", "z: T", "T: {float, nope}"},  /* unknown type */
      {"x: T", "z: T", "T: type, T: type"},  /* duplicate attr */
      {"x: T,", "z: T", "T: type"},          /* trailing comma */
      {"", "", "k: bool = maybe"},           /* bad default */
      {"", "", "n: int >= x"},               /* bad minimum */
  };
  TF_Status *st = TF_NewStatus();
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char name[32];
    snprintf(name, sizeof(name), "Bad%zu", i);
    tfocl_op_def_add(name, bad[i][0], bad[i][1], bad[i][2], st);
    ck_assert_msg(TF_GetCode(st) == TF_INVALID_ARGUMENT,
                  "case %zu accepted (%d)", i, (int)TF_GetCode(st));
    ck_assert_msg_has(st, name);
    ck_assert(!tfocl_op_def_exists(name));
  }
  tfocl_op_def_add("bad name", "", "", "", st);
  ck_assert_status(st, TF_INVALID_ARGUMENT);
  TF_DeleteStatus(st);
}
END_TEST

static Suite *op_def_suite(void)
{
  Suite *s = suite_create("op_def");
  TCase *tc = tcase_create("op_def");
  tcase_add_test(tc, builtins_exist);
  tcase_add_test(tc, add_rich_signatures);
  tcase_add_test(tc, clash_is_already_exists);
  tcase_add_test(tc, malformed_signatures);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(op_def_suite()); }
