/* The TensorFlow version check at SE_InitPlugin: this executable exports
 * TF_Version (as libtensorflow_cc.so.2 does inside TensorFlow), answering
 * $FAKE_TF_VERSION, and the plugin, loaded through the host shim, must
 * never abort: an older TensorFlow gets 0 devices and one line saying why,
 * a newer one than tfocl was checked against its devices and one warning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cl_fixture.h"

__attribute__((visibility("default"))) const char *TF_Version(void);
const char *TF_Version(void) { return getenv("FAKE_TF_VERSION"); }

/* Loads the plugin with fd 2 going to a file; returns the device count and
 * what the plugin printed. */
static int load_with_version(const char *version, char *printed,
                             size_t size) {
  struct clt t = {0};
  char path[] = "/tmp/tfocl-version-XXXXXX";
  int fd = mkstemp(path), saved = dup(2), count;
  ck_assert_int_ge(fd, 0);
  setenv("FAKE_TF_VERSION", version, 1);
  fflush(stderr);
  dup2(fd, 2);
  clt_load(&t);
  count = tfocl_plugin_device_count(t.plugin, t.st);
  clt_ok(&t);
  clt_close(&t);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  ssize_t n = pread(fd, printed, size - 1, 0);
  printed[n > 0 ? n : 0] = '\0';
  close(fd);
  unlink(path);
  return count;
}

START_TEST(newer_tensorflow_warns_and_works) {
  char printed[2048];
  ck_assert_int_ge(load_with_version("2.99.0", printed, sizeof printed), 1);
  ck_assert_msg(strstr(printed, "tfocl: warning: TensorFlow 2.99.0 is newer "
                                "than any tfocl was checked against") != NULL,
                "printed: %s", printed);
}
END_TEST

START_TEST(known_tensorflow_is_quiet) {
  char printed[2048];
  ck_assert_int_ge(load_with_version("2.22.0", printed, sizeof printed), 1);
  ck_assert_msg(strstr(printed, "tfocl") == NULL, "printed: %s", printed);
}
END_TEST

START_TEST(older_tensorflow_gets_no_devices) {
  char printed[2048];
  ck_assert_int_eq(load_with_version("2.17.1", printed, sizeof printed), 0);
  ck_assert_msg(strstr(printed, "0 OpenCL devices: TensorFlow 2.17.1: tfocl "
                                "needs 2.18 or later") != NULL,
                "printed: %s", printed);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tf_version");
  TCase *tc = tcase_create("tf_version");
  tcase_add_test(tc, newer_tensorflow_warns_and_works);
  tcase_add_test(tc, known_tensorflow_is_quiet);
  tcase_add_test(tc, older_tensorflow_gets_no_devices);
  suite_add_tcase(s, tc);
  return clt_main(s);
}
