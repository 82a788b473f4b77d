/* Shared helpers of the reliability suites (soak, concurrency, bad input,
 * faults): the real plugin (TFOCL_PLUGIN) through the host shim, in the
 * test process itself (CK_NOFORK: OpenCL state does not survive fork). */
#ifndef TFOCL_TESTS_RELIABILITY_REL_H_
#define TFOCL_TESTS_RELIABILITY_REL_H_

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tfocl/host.h"

extern struct tfocl_plugin *rel_plugin;
extern struct tfocl_device *rel_device;

#define rel_assert_ok(st) \
  ck_assert_msg(TF_GetCode(st) == TF_OK, "%s", TF_Message(st))
#define rel_assert_code(st, code)                                         \
  ck_assert_msg(TF_GetCode(st) == (code), "expected code %d, got %d: %s", \
                (int)(code), (int)TF_GetCode(st), TF_Message(st))
#define rel_assert_has(st, needle)                                      \
  ck_assert_msg(strstr(TF_Message(st), (needle)) != NULL,               \
                "message \"%s\" lacks \"%s\"", TF_Message(st), (needle))

/* Loads TFOCL_PLUGIN and opens device 0; false (message printed) when
 * there is no device (the caller exits 77). Exits on a load failure. */
bool rel_setup(void);
void rel_teardown(void);
/* Runs `suite` without forking; the process exit status. */
int rel_run(Suite *suite);

/* A host float tensor of `dims` filled with values[i % num_values]. */
TF_Tensor *rel_host_f32(const int64_t *dims, int rank, const float *values,
                        int num_values);
TF_Tensor *rel_host_i32(const int64_t *dims, int rank, const int32_t *values);
/* One op through the op runner; returns the status code, outputs[0] in
 * *out (NULL when it failed; may be NULL to drop it). */
TF_Code rel_run_op(const char *op, const struct tfocl_attr *attrs,
                   int num_attrs, TF_Tensor *const *inputs, int num_inputs,
                   TF_Tensor **out, TF_Status *st);

/* The device allocator's counters (get_allocator_stats). */
void rel_allocator_stats(SP_AllocatorStats *stats);
/* Resident set size of the process in bytes (/proc/self/statm). */
int64_t rel_rss_bytes(void);
/* An environment integer, or `fallback`. */
long rel_env_long(const char *name, long fallback);

#endif /* TFOCL_TESTS_RELIABILITY_REL_H_ */
