/* Helpers shared by the unit tests. */
#ifndef TFOCL_TEST_UTIL_H_
#define TFOCL_TEST_UTIL_H_

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfocl/host.h"

/* Path of stub plugin variant `name` (stub_<name>.so in $TFOCL_STUB_DIR). */
static inline const char *stub_path(const char *name)
{
  static char buf[4096];
  const char *dir = getenv("TFOCL_STUB_DIR");
  snprintf(buf, sizeof(buf), "%s/stub_%s.so", dir ? dir : ".", name);
  return buf;
}

#define ck_assert_status(st, code)                                          \
  ck_assert_msg(TF_GetCode(st) == (code), "expected code %d, got %d: %s",   \
                (int)(code), (int)TF_GetCode(st), TF_Message(st))

#define ck_assert_ok(st) ck_assert_status(st, TF_OK)

#define ck_assert_msg_has(st, needle)                                       \
  ck_assert_msg(strstr(TF_Message(st), (needle)) != NULL,                   \
                "message \"%s\" lacks \"%s\"", TF_Message(st), (needle))

/* Runs a suite and turns the result into an exit status. */
static inline int run_suite(Suite *s)
{
  SRunner *sr = srunner_create(s);
  int failed;
  srunner_run_all(sr, CK_ENV);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* TFOCL_TEST_UTIL_H_ */
