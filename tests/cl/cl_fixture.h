/* Shared helpers of the cl suite: load the plugin (TFOCL_PLUGIN) through
 * the host shim and open a device, inside each test. Check forks every
 * test and OpenCL state does not survive fork(), so nothing OpenCL is
 * touched in the parent: the device probe runs in a child of its own. */
#ifndef TFOCL_TESTS_CL_FIXTURE_H_
#define TFOCL_TESTS_CL_FIXTURE_H_

#include <check.h>
#include <stdbool.h>

#include "tfocl/host.h"

struct clt {
  struct tfocl_plugin *plugin;
  struct tfocl_device *device;
  const SP_StreamExecutor *se;
  const SP_Platform *platform;
  const SP_PlatformFns *platform_fns;
  const SP_Device *sp;
  TF_Status *st;
};

/* Loads the plugin; ck_asserts it loaded OK. */
void clt_load(struct clt *t);
/* clt_load + open device `ordinal`. */
void clt_open(struct clt *t, int ordinal);
/* Closes the device (if open) and unloads the plugin. */
void clt_close(struct clt *t);
SP_Stream clt_stream(const struct clt *t, enum tfocl_stream_role role);
SP_DeviceMemoryBase clt_mem(void *opaque);
/* allocate() that must succeed. */
void *clt_alloc(const struct clt *t, uint64_t bytes);
void clt_free(const struct clt *t, void *opaque);
/* Seconds on the monotonic clock. */
double clt_seconds(void);
#define clt_ok(t) \
  ck_assert_msg(TF_GetCode((t)->st) == TF_OK, "%s", TF_Message((t)->st))

/* Runs the suite; 77 (skip) when no OpenCL device is present. */
int clt_main(Suite *suite);
/* Runs the suite; 77 (skip) when fewer than `min_devices` OpenCL devices
 * (over all platforms) are present. */
int clt_main_devices(Suite *suite, int min_devices);

#endif /* TFOCL_TESTS_CL_FIXTURE_H_ */
