#include "cl_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CL/cl.h>

void clt_load(struct clt *t) {
  const char *path = getenv("TFOCL_PLUGIN");

  ck_assert_msg(path != NULL, "TFOCL_PLUGIN is not set");
  t->st = TF_NewStatus();
  t->plugin = tfocl_plugin_load(path, t->st);
  ck_assert_msg(t->plugin != NULL, "load %s: %s", path, TF_Message(t->st));
  t->se = tfocl_plugin_stream_executor(t->plugin);
  t->platform = tfocl_plugin_platform(t->plugin);
  t->platform_fns = tfocl_plugin_platform_fns(t->plugin);
  ck_assert_ptr_nonnull(t->se);
}

void clt_open(struct clt *t, int ordinal) {
  clt_load(t);
  t->device = tfocl_device_open(t->plugin, ordinal, t->st);
  ck_assert_msg(t->device != NULL, "open %d: %s", ordinal, TF_Message(t->st));
  t->sp = tfocl_device_sp(t->device);
}

void clt_close(struct clt *t) {
  tfocl_device_close(t->device);
  tfocl_plugin_unload(t->plugin);
  TF_DeleteStatus(t->st);
  *t = (struct clt){0};
}

SP_Stream clt_stream(const struct clt *t, enum tfocl_stream_role role) {
  return tfocl_device_stream(t->device, role);
}

SP_DeviceMemoryBase clt_mem(void *opaque) {
  return (SP_DeviceMemoryBase){.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                               .opaque = opaque};
}

double clt_seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void *clt_alloc(const struct clt *t, uint64_t bytes) {
  SP_DeviceMemoryBase mem = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
  t->se->allocate(t->sp, bytes, 0, &mem);
  ck_assert_msg(mem.opaque != NULL, "allocate(%llu) failed",
                (unsigned long long)bytes);
  return mem.opaque;
}

void clt_free(const struct clt *t, void *opaque) {
  /* As TensorFlow frees: opaque only, size = payload = 0. */
  SP_DeviceMemoryBase mem = clt_mem(opaque);
  t->se->deallocate(t->sp, &mem);
}

/* In a child, so the parent (which forks the tests) never loads a driver:
 * whether OpenCL offers at least `min` devices over all platforms. */
static bool have_devices(int min) {
  pid_t pid = fork();
  int wstatus = 0;

  if (pid == 0) {
    cl_uint n = 0, total = 0;
    cl_platform_id platforms[16];
    if (clGetPlatformIDs(16, platforms, &n) != CL_SUCCESS) _exit(1);
    for (cl_uint i = 0; i < n && i < 16; i++) {
      cl_uint d = 0;
      if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 0, NULL, &d) ==
          CL_SUCCESS)
        total += d;
    }
    _exit(total >= (cl_uint)min ? 0 : 1);
  }
  if (pid < 0 || waitpid(pid, &wstatus, 0) != pid) return false;
  return WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
}

int clt_main_devices(Suite *suite, int min_devices) {
  SRunner *runner;
  int failed;

  if (!have_devices(min_devices)) {
    fprintf(stderr, "fewer than %d OpenCL device(s): skipping\n", min_devices);
    srunner_free(srunner_create(suite));
    return 77;
  }
  runner = srunner_create(suite);
  srunner_run_all(runner, CK_ENV);
  failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int clt_main(Suite *suite) { return clt_main_devices(suite, 1); }
