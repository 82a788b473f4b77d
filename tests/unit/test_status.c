/* TF_Status: codes, messages, their lifetime. */
#include "test_util.h"

START_TEST(new_status_is_ok_with_empty_message)
{
  TF_Status *s = TF_NewStatus();
  ck_assert_int_eq(TF_GetCode(s), TF_OK);
  ck_assert_ptr_nonnull(TF_Message(s));
  ck_assert_str_eq(TF_Message(s), "");
  TF_DeleteStatus(s);
}
END_TEST

START_TEST(set_status_copies_message)
{
  TF_Status *s = TF_NewStatus();
  char msg[] = "boom";
  TF_SetStatus(s, TF_INTERNAL, msg);
  msg[0] = 'x';
  ck_assert_int_eq(TF_GetCode(s), TF_INTERNAL);
  ck_assert_str_eq(TF_Message(s), "boom");
  TF_DeleteStatus(s);
}
END_TEST

START_TEST(ok_clears_message)
{
  TF_Status *s = TF_NewStatus();
  TF_SetStatus(s, TF_NOT_FOUND, "gone");
  TF_SetStatus(s, TF_OK, "ignored");
  ck_assert_int_eq(TF_GetCode(s), TF_OK);
  ck_assert_str_eq(TF_Message(s), "");
  TF_DeleteStatus(s);
}
END_TEST

START_TEST(null_message_is_empty)
{
  TF_Status *s = TF_NewStatus();
  TF_SetStatus(s, TF_UNKNOWN, NULL);
  ck_assert_int_eq(TF_GetCode(s), TF_UNKNOWN);
  ck_assert_str_eq(TF_Message(s), "");
  TF_DeleteStatus(s);
}
END_TEST

START_TEST(set_from_own_message)
{
  /* TF_SetStatus(s, code, TF_Message(s)) must not read freed memory. */
  TF_Status *s = TF_NewStatus();
  TF_SetStatus(s, TF_ABORTED, "self");
  TF_SetStatus(s, TF_CANCELLED, TF_Message(s));
  ck_assert_int_eq(TF_GetCode(s), TF_CANCELLED);
  ck_assert_str_eq(TF_Message(s), "self");
  TF_DeleteStatus(s);
}
END_TEST

START_TEST(delete_null_is_fine)
{
  TF_DeleteStatus(NULL);
}
END_TEST

START_TEST(codes_have_tensorflow_values)
{
  ck_assert_int_eq(TF_INVALID_ARGUMENT, 3);
  ck_assert_int_eq(TF_NOT_FOUND, 5);
  ck_assert_int_eq(TF_FAILED_PRECONDITION, 9);
  ck_assert_int_eq(TF_UNAUTHENTICATED, 16);
}
END_TEST

static Suite *status_suite(void)
{
  Suite *s = suite_create("status");
  TCase *tc = tcase_create("status");
  tcase_add_test(tc, new_status_is_ok_with_empty_message);
  tcase_add_test(tc, set_status_copies_message);
  tcase_add_test(tc, ok_clears_message);
  tcase_add_test(tc, null_message_is_empty);
  tcase_add_test(tc, set_from_own_message);
  tcase_add_test(tc, delete_null_is_fine);
  tcase_add_test(tc, codes_have_tensorflow_values);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(status_suite()); }
