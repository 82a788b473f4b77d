/* The plugin's internals, linked in directly (plugin objects + the host
 * shim for the TF C API): program cache, address map, CL error path. */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cl_fixture.h"
#include "kernel_families.h"
#include "ocl.h"
#include "runtime.h"

/* kernels/gemm_internal.h, whose own includes are the kernels' */
const char *gemm_identity(void);
bool gemm_host_threads_linger(void);
void gemm_blas_park_threads_by_default(void);
const char *gemm_blas_identity(void);

static struct ocl_device *open_device(TF_Status *st) {
  const char *missing = NULL;
  ck_assert_msg(ocl_tf_resolve(&missing), "TF C API lacks %s", missing);
  struct ocl_device *dev = ocl_device_get(0);
  ck_assert_ptr_nonnull(dev);
  ck_assert_msg(ocl_device_open(dev, st), "%s", TF_Message(st));
  return dev;
}

static const char good_source[] =
    "__kernel void add_one(__global int *p) { p[get_global_id(0)] += 1; }\n";

START_TEST(program_cache_builds_once) {
  TF_Status *st = TF_NewStatus();
  struct ocl_device *dev = open_device(st);
  cl_program p1 = ocl_program_get(dev, "trivial", good_source, "", st);
  ck_assert_msg(p1 != NULL, "%s", TF_Message(st));
  cl_program p2 = ocl_program_get(dev, "trivial", good_source, "", st);
  ck_assert_ptr_eq(p1, p2);
  cl_int err;
  cl_kernel k = clCreateKernel(p1, "add_one", &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  clReleaseKernel(k);
  /* Other build options: another program. */
  cl_program p3 = ocl_program_get(dev, "trivial", good_source, "-DX=1", st);
  ck_assert_ptr_nonnull(p3);
  ck_assert_ptr_ne(p1, p3);
  ocl_devices_teardown();
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(program_cache_build_failure) {
  TF_Status *st = TF_NewStatus();
  struct ocl_device *dev = open_device(st);
  cl_program p = ocl_program_get(dev, "broken",
                                 "__kernel void f(__global int *p) { p[0] = ; }\n",
                                 NULL, st);
  ck_assert_ptr_null(p);
  ck_assert_int_eq(TF_GetCode(st), TF_INTERNAL);
  ck_assert_ptr_nonnull(strstr(TF_Message(st), "CL_BUILD_PROGRAM_FAILURE"));
  ck_assert_ptr_nonnull(strstr(TF_Message(st), "broken"));
  ck_assert_ptr_nonnull(strstr(TF_Message(st), "error")); /* the build log */
  /* Remembered: same answer, no rebuild. */
  ck_assert_ptr_null(ocl_program_get(dev, "broken", "", NULL, st));
  ck_assert_int_eq(TF_GetCode(st), TF_INTERNAL);
  ocl_devices_teardown();
  TF_DeleteStatus(st);
}
END_TEST

/* Division and square roots as TensorFlow's CPU kernels compute them
 * (IEEE, correctly rounded) wherever the device can: OpenCL C allows 2.5
 * ulp for a / b and 3 for sqrt, and NVIDIA's compiler uses that, which
 * puts FloorDiv's floor(a / b) one below an integer quotient. Quotients
 * that are integers, and squares, checked bit for bit against the host;
 * the programs carry -cl-fp32-correctly-rounded-divide-sqrt exactly
 * where every device of the context reports the capability. */
static const char division_source[] =
    "__kernel void divide(__global const float *a, __global const float *b,\n"
    "                     __global float *q, __global float *r) {\n"
    "  size_t i = get_global_id(0);\n"
    "  q[i] = floor(a[i] / b[i]);\n"
    "  r[i] = sqrt(a[i]);\n"
    "}\n";

START_TEST(program_cache_exact_division) {
  enum { N = 1 << 16 };
  TF_Status *st = TF_NewStatus();
  struct ocl_device *dev = open_device(st);
  cl_program program = ocl_program_get(dev, "division", division_source,
                                        "-DTFOCL_TEST=1", st);
  ck_assert_msg(program != NULL, "%s", TF_Message(st));

  cl_device_fp_config config = 0;
  ck_assert_int_eq(clGetDeviceInfo(dev->id, CL_DEVICE_SINGLE_FP_CONFIG,
                                   sizeof config, &config, NULL),
                   CL_SUCCESS);
  bool capable = (config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  char options[512] = "";
  ck_assert_int_eq(clGetProgramBuildInfo(program, dev->id,
                                         CL_PROGRAM_BUILD_OPTIONS,
                                         sizeof options - 1, options, NULL),
                   CL_SUCCESS);
  ck_assert_msg(capable == (strstr(options, "-cl-fp32-correctly-rounded-"
                                            "divide-sqrt") != NULL),
                "device %s correctly rounded division, built with \"%s\"",
                capable ? "has" : "lacks", options);
  ck_assert_ptr_nonnull(strstr(options, "-DTFOCL_TEST=1"));
  if (!capable) {
    printf("SKIPPED cl_internals program_cache_exact_division: the device "
           "has no correctly rounded float division (checked: built without "
           "asking for it)\n");
    goto out;
  }

  /* a = k * b with k an integer, so that a / b rounds to k exactly. */
  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  float *q = malloc(N * sizeof *q), *r = malloc(N * sizeof *r);
  ck_assert(a && b && q && r);
  srand(7);
  for (int i = 0; i < N; i++) {
    float k = (float)(1 + rand() % 4096);
    b[i] = (float)(rand() % 100000 + 1) / 997.0f;
    a[i] = k * b[i];
  }
  cl_context context = ocl_device_context(dev);
  cl_int err;
  cl_command_queue queue =
      clCreateCommandQueueWithProperties(context, dev->id, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  cl_mem buffers[4];
  for (int i = 0; i < 4; i++) {
    buffers[i] = clCreateBuffer(context,
                                i < 2 ? CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR
                                      : CL_MEM_WRITE_ONLY,
                                N * sizeof(float), i == 0 ? a : i == 1 ? b : NULL,
                                &err);
    ck_assert_int_eq(err, CL_SUCCESS);
  }
  cl_kernel kernel = clCreateKernel(program, "divide", &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  for (cl_uint i = 0; i < 4; i++)
    clSetKernelArg(kernel, i, sizeof(cl_mem), &buffers[i]);
  size_t global = N;
  ck_assert_int_eq(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global,
                                          NULL, 0, NULL, NULL),
                   CL_SUCCESS);
  clEnqueueReadBuffer(queue, buffers[2], CL_TRUE, 0, N * sizeof(float), q, 0,
                      NULL, NULL);
  clEnqueueReadBuffer(queue, buffers[3], CL_TRUE, 0, N * sizeof(float), r, 0,
                      NULL, NULL);
  int wrong_q = 0, wrong_r = 0, first = -1;
  for (int i = 0; i < N; i++) {
    volatile float exact_q = a[i] / b[i]; /* no contraction, no excess */
    if (q[i] != floorf(exact_q)) {
      wrong_q++;
      if (first < 0) first = i;
    }
    if (r[i] != sqrtf(a[i])) wrong_r++;
  }
  ck_assert_msg(wrong_q == 0 && wrong_r == 0,
                "%d of %d floor(a / b) and %d sqrt differ from IEEE; first "
                "%.9g / %.9g -> %.9g",
                wrong_q, N, wrong_r, first >= 0 ? a[first] : 0.0,
                first >= 0 ? b[first] : 0.0, first >= 0 ? q[first] : 0.0);
  clReleaseKernel(kernel);
  for (int i = 0; i < 4; i++) clReleaseMemObject(buffers[i]);
  clReleaseCommandQueue(queue);
  free(a);
  free(b);
  free(q);
  free(r);
out:
  ocl_devices_teardown();
  TF_DeleteStatus(st);
}
END_TEST

struct getter {
  struct ocl_device *dev;
  cl_program program;
};

static void *get_program(void *arg) {
  struct getter *g = arg;
  TF_Status *st = TF_NewStatus();
  g->program = ocl_program_get(g->dev, "shared", good_source, "", st);
  TF_DeleteStatus(st);
  return NULL;
}

START_TEST(program_cache_threads) {
  TF_Status *st = TF_NewStatus();
  struct getter g[4];
  pthread_t threads[4];
  struct ocl_device *dev = open_device(st);
  for (int i = 0; i < 4; i++) {
    g[i] = (struct getter){dev, NULL};
    pthread_create(&threads[i], NULL, get_program, &g[i]);
  }
  for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
  for (int i = 0; i < 4; i++) {
    ck_assert_ptr_nonnull(g[i].program);
    ck_assert_ptr_eq(g[i].program, g[0].program);
  }
  ocl_devices_teardown();
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(address_map_intervals) {
  struct ocl_address_map map;
  cl_mem mem;
  size_t offset;
  uint64_t left, bytes;
  /* The reservation is whole 2 MiB chunks of the page table. */
  ck_assert(ocl_address_map_init(&map, 1 << 20));
  ck_assert_uint_eq(map.size, 2 << 20);
  /* Fake cl_mem handles: the map never calls OpenCL on them here. */
  uintptr_t a = ocl_address_map_insert(&map, 100, (cl_mem)0x1);
  uintptr_t b = ocl_address_map_insert(&map, 5000, (cl_mem)0x2);
  uintptr_t c = ocl_address_map_insert(&map, 1, (cl_mem)0x3);
  ck_assert(a && b && c);
  ck_assert_uint_eq(a % OCL_ADDRESS_ALIGN, 0);
  ck_assert_uint_eq(b - a, OCL_ADDRESS_ALIGN);
  ck_assert(ocl_address_map_lookup(&map, b + 4999, &mem, &offset, &left));
  ck_assert_ptr_eq(mem, (cl_mem)0x2);
  ck_assert_uint_eq(offset, 4999);
  ck_assert_uint_eq(left, 1);
  ck_assert(!ocl_address_map_lookup(&map, a + 101, NULL, NULL, NULL));
  ck_assert(!ocl_address_map_lookup(&map, (uintptr_t)map.base - 1, NULL, NULL,
                                    NULL));
  ck_assert_ptr_null(ocl_address_map_remove(&map, b + 1, NULL));
  ck_assert_ptr_eq(ocl_address_map_remove(&map, b, &bytes), (cl_mem)0x2);
  ck_assert_uint_eq(bytes, 5000);
  ck_assert(!ocl_address_map_lookup(&map, b, NULL, NULL, NULL));
  /* b's range (5000 bytes + 1, in pages: 8192) is reused for anything that
   * fits it, end address included. */
  ck_assert_uint_eq(ocl_address_map_insert(&map, 8191, (cl_mem)0x4), b);
  ck_assert(ocl_address_map_lookup(&map, b + 8191, &mem, &offset, &left));
  ck_assert_ptr_eq(mem, (cl_mem)0x4);
  ck_assert_uint_eq(left, 0);
  ck_assert_uint_eq(ocl_address_map_insert(&map, 2 << 20, (cl_mem)0x5), 0);
  ck_assert(!ocl_address_map_lookup(&map, (uintptr_t)map.base + map.size,
                                    NULL, NULL, NULL));
  ck_assert_ptr_eq(ocl_address_map_remove(&map, a, NULL), (cl_mem)0x1);
  ck_assert_ptr_eq(ocl_address_map_remove(&map, b, NULL), (cl_mem)0x4);
  ck_assert_ptr_eq(ocl_address_map_remove(&map, c, NULL), (cl_mem)0x3);
  ck_assert_uint_eq(ocl_address_map_largest_free(&map), 2 << 20);
  /* A range over whole chunks resolves through the chunk table. */
  uintptr_t big = ocl_address_map_insert(&map, (2 << 20) - 1, (cl_mem)0x6);
  ck_assert_uint_eq(big, (uintptr_t)map.base);
  ck_assert(ocl_address_map_lookup(&map, big + 1234567, &mem, &offset, NULL));
  ck_assert_ptr_eq(mem, (cl_mem)0x6);
  ck_assert_ptr_eq(ocl_address_map_remove(&map, big, NULL), (cl_mem)0x6);
  ck_assert(!ocl_address_map_lookup(&map, big, NULL, NULL, NULL));
  ocl_address_map_finish(&map);
  ocl_address_map_finish(&map); /* zeroed: no-op */
}
END_TEST

/* Random inserts and removes against a plain list of what should be live:
 * every live allocation resolves (start, interior, end), freed ones do not,
 * ranges never overlap, and once all are freed the space is whole again. */
START_TEST(address_map_random) {
  enum { SLOTS = 300, STEPS = 20000 };
  static uintptr_t start[SLOTS];
  static uint64_t size[SLOTS];
  struct ocl_address_map map;
  unsigned seed = 12345;
  ck_assert(ocl_address_map_init(&map, 256u << 20));
  memset(start, 0, sizeof(start));
  for (int step = 0; step < STEPS; step++) {
    seed = seed * 1103515245u + 12345u;
    int i = (int)((seed >> 8) % SLOTS);
    if (start[i]) {
      uint64_t bytes = 0;
      ck_assert_ptr_eq(ocl_address_map_remove(&map, start[i], &bytes),
                       (cl_mem)(uintptr_t)(i + 1));
      ck_assert_uint_eq(bytes, size[i]);
      ck_assert(!ocl_address_map_lookup(&map, start[i], NULL, NULL, NULL) ||
                /* a neighbour may now start there */
                ocl_address_map_lookup(&map, start[i], NULL, NULL, NULL));
      start[i] = 0;
      continue;
    }
    seed = seed * 1103515245u + 12345u;
    /* Mostly small, sometimes up to 5 MiB (whole 2 MiB chunks), sometimes
     * exact pages. */
    uint64_t bytes = (seed >> 4) % 8 == 0 ? 1 + (seed >> 8) % (5u << 20)
                     : (seed >> 4) % 8 == 1 ? 4096u * (1 + (seed >> 12) % 4)
                                            : 1 + (seed >> 8) % 5000;
    uintptr_t at = ocl_address_map_insert(&map, bytes, (cl_mem)(uintptr_t)(i + 1));
    ck_assert_msg(at != 0, "step %d: no room for %llu bytes", step,
                  (unsigned long long)bytes);
    ck_assert_uint_eq(at % OCL_ADDRESS_ALIGN, 0);
    start[i] = at;
    size[i] = bytes;
    /* Every live allocation still resolves to itself at both ends. */
    if (step % 997 == 0) {
      for (int k = 0; k < SLOTS; k++) {
        cl_mem mem;
        size_t offset;
        uint64_t left;
        if (!start[k])
          continue;
        ck_assert(ocl_address_map_lookup(&map, start[k] + size[k], &mem,
                                         &offset, &left));
        ck_assert_ptr_eq(mem, (cl_mem)(uintptr_t)(k + 1));
        ck_assert_uint_eq(offset, size[k]);
        ck_assert_uint_eq(left, 0);
        ck_assert(ocl_address_map_lookup(&map, start[k] + size[k] / 2, &mem,
                                         &offset, NULL));
        ck_assert_ptr_eq(mem, (cl_mem)(uintptr_t)(k + 1));
        for (int j = k + 1; j < SLOTS; j++)
          ck_assert(!start[j] || start[j] + size[j] < start[k] ||
                    start[k] + size[k] < start[j]);
      }
    }
  }
  for (int i = 0; i < SLOTS; i++)
    if (start[i])
      ck_assert_ptr_eq(ocl_address_map_remove(&map, start[i], NULL),
                       (cl_mem)(uintptr_t)(i + 1));
  ck_assert_uint_eq(map.count, 0);
  ck_assert_uint_eq(ocl_address_map_largest_free(&map), 256u << 20);
  ocl_address_map_finish(&map);
}
END_TEST

START_TEST(cl_error_path) {
  TF_Status *st = TF_NewStatus();
  const char *missing;
  ck_assert(ocl_tf_resolve(&missing));
  ck_assert_str_eq(ocl_cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  ck_assert_str_eq(ocl_cl_error_name(-9999), "CL_UNKNOWN_ERROR");
  ocl_set_cl_error(st, CL_OUT_OF_RESOURCES, "clEnqueueWriteBuffer");
  ck_assert_int_eq(TF_GetCode(st), TF_RESOURCE_EXHAUSTED);
  ck_assert_str_eq(TF_Message(st), "clEnqueueWriteBuffer: CL_OUT_OF_RESOURCES (-5)");
  ocl_set_cl_error(st, CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer");
  ck_assert_int_eq(TF_GetCode(st), TF_RESOURCE_EXHAUSTED);
  ocl_set_cl_error(st, CL_INVALID_MEM_OBJECT, "clEnqueueCopyBuffer");
  ck_assert_int_eq(TF_GetCode(st), TF_INTERNAL);
  /* From a wait, CL_OUT_OF_RESOURCES is work that failed on the device
   * (NVIDIA's word for a kernel fault), not memory running out. */
  ocl_set_cl_error(st, CL_OUT_OF_RESOURCES, "clFinish");
  ck_assert_int_eq(TF_GetCode(st), TF_INTERNAL);
  ck_assert_ptr_nonnull(strstr(TF_Message(st), "clFinish: CL_OUT_OF_RESOURCES (-5)"));
  ck_assert_ptr_nonnull(strstr(TF_Message(st), "kernel's fault"));
  ocl_set_cl_error(st, CL_OUT_OF_RESOURCES, "clWaitForEvents");
  ck_assert_int_eq(TF_GetCode(st), TF_INTERNAL);
  ocl_set_cl_error(st, CL_MEM_OBJECT_ALLOCATION_FAILURE, "clWaitForEvents");
  ck_assert_int_eq(TF_GetCode(st), TF_RESOURCE_EXHAUSTED);
  ck_assert_int_eq(ocl_cl_exec_error_code(CL_OUT_OF_RESOURCES), TF_INTERNAL);
  ck_assert_int_eq(ocl_cl_exec_error_code(CL_OUT_OF_HOST_MEMORY),
                   TF_RESOURCE_EXHAUSTED);
  ck_assert_int_eq(ocl_cl_exec_error_code(CL_COMPLETE), TF_OK);
  TF_DeleteStatus(st);
}
END_TEST

/* The GEMM tuner's remembered choices are keyed by tfocl's build (the
 * matmul kernels' source, the plugin's file) and CLBlast's library. */
START_TEST(gemm_identity_names_builds) {
  const char *id = gemm_identity();
  ck_assert_ptr_nonnull(strstr(id, "matmul.cl:"));
  const char *plugin = strstr(id, "plugin:");
  ck_assert_msg(plugin != NULL && plugin[7] == '/', "%s", id);
  ck_assert_ptr_nonnull(strstr(id, " clblast:"));
  ck_assert_ptr_eq(gemm_identity(), id); /* made once */
}
END_TEST

static atomic_bool spin_on;

static void *spin(void *arg)
{
  (void)arg;
  while (atomic_load(&spin_on))
    ;
  return NULL;
}

/* The tuner leaves out a host BLAS whose threads keep spinning after its
 * call: a thread busy while the caller sleeps is seen, an idle process is
 * not. On a loaded machine the spinning thread may get under half a core
 * in one probe's 5 ms, so it has a few probes to be seen in. */
START_TEST(lingering_host_threads_are_seen)
{
  ck_assert(!gemm_host_threads_linger());
  pthread_t t;
  atomic_store(&spin_on, true);
  ck_assert_int_eq(pthread_create(&t, NULL, spin, NULL), 0);
  bool seen = false;
  for (int probe = 0; probe < 50 && !seen; probe++)
    seen = gemm_host_threads_linger();
  atomic_store(&spin_on, false);
  pthread_join(t, NULL);
  ck_assert(seen);
  ck_assert(!gemm_host_threads_linger());
}
END_TEST

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);

/* OpenBLAS's threads park once a call is done unless the user said
 * otherwise or no host BLAS can run: a spinning pool would take the
 * device's cores (and the tuner would leave the host BLAS out). What
 * OpenBLAS read is its own answer, openblas_thread_timeout() in the
 * identity. It leaves the environment and OpenBLAS changed: Check runs
 * each test in a child of its own (CK_FORK). */
START_TEST(host_blas_threads_park_by_default)
{
  void *h = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (h != NULL) {
    dlclose(h);
    ck_abort_msg("libopenblas.so.0 was loaded before the test");
  }
  unsetenv("TFOCL_GEMM_TUNE");
  setenv("OPENBLAS_THREAD_TIMEOUT", "7", 1);
  gemm_blas_park_threads_by_default();
  ck_assert_str_eq(getenv("OPENBLAS_THREAD_TIMEOUT"), "7");
  unsetenv("OPENBLAS_THREAD_TIMEOUT");
  static const char *const no_host_blas[][2] = {{"TFOCL_GEMM", "own"},
                                                {"TFOCL_GEMM", "clblast"},
                                                {"TFOCL_GEMM_TUNE", "0"}};
  for (size_t i = 0; i < sizeof no_host_blas / sizeof *no_host_blas; i++) {
    setenv(no_host_blas[i][0], no_host_blas[i][1], 1);
    ocl_config_forget();
    gemm_blas_park_threads_by_default();
    ck_assert_msg(getenv("OPENBLAS_THREAD_TIMEOUT") == NULL, "%s=%s",
                  no_host_blas[i][0], no_host_blas[i][1]);
    unsetenv(no_host_blas[i][0]);
  }
  setenv("TFOCL_GEMM", "blas", 1);
  ocl_config_forget();
  gemm_blas_park_threads_by_default();
  ck_assert_str_eq(getenv("OPENBLAS_THREAD_TIMEOUT"), "4");
  unsetenv("OPENBLAS_THREAD_TIMEOUT");
  unsetenv("TFOCL_GEMM");
  ocl_config_forget();
  gemm_blas_park_threads_by_default();
  ck_assert_str_eq(getenv("OPENBLAS_THREAD_TIMEOUT"), "4");

  const char *id = gemm_blas_identity();
  h = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL) {
    fprintf(stderr,
            "host_blas_threads_park_by_default: SKIP the threads' check, no "
            "libopenblas.so.0 (%s)\n",
            id);
    return;
  }
  ck_assert_msg(strstr(id, " timeout 4") != NULL, "%s", id);
  void *f = dlsym(h, "cblas_sgemm");
  ck_assert_ptr_nonnull(f);
  sgemm_fn sgemm;
  memcpy(&sgemm, &f, sizeof(sgemm));
  enum { N = 384 };
  float *a = calloc(3 * N * N, sizeof(float));
  ck_assert_ptr_nonnull(a);
  for (int i = 0; i < N; i++)
    a[i * N + i] = 1.0f;
  for (int i = 0; i < N * N; i++)
    a[N * N + i] = (float)(i % 7);
  /* Row-major, neither transposed: identity times B is B. */
  sgemm(101, 111, 111, N, N, N, 1.0f, a, N, a + N * N, N, 0.0f, a + 2 * N * N,
        N);
  /* Parked threads leave the process idle right after the call. (Their
   * spinning is not asserted the other way: on a loaded machine a probe
   * can miss it.) */
  bool lingered = gemm_host_threads_linger() || gemm_host_threads_linger();
  ck_assert_int_eq(memcmp(a + N * N, a + 2 * N * N, N * N * sizeof(float)), 0);
  free(a);
  dlclose(h);
  ck_assert(!lingered);
}
END_TEST

/* An unknown StreamExecutor major version: registered, OK, 0 devices. */
START_TEST(unknown_abi_gives_zero_devices) {
  TF_Status *st = TF_NewStatus();
  SP_Platform platform = {.struct_size = SP_PLATFORM_STRUCT_SIZE};
  SP_PlatformFns fns = {.struct_size = SP_PLATFORM_FNS_STRUCT_SIZE};
  SE_PlatformRegistrationParams params = {
      .struct_size = SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE,
      .major_version = SE_MAJOR + 1,
      .platform = &platform,
      .platform_fns = &fns};
  int count = -1;
  SE_InitPlugin(&params, st);
  ck_assert_int_eq(TF_GetCode(st), TF_OK);
  ck_assert_str_eq(platform.type, "OPENCL");
  ck_assert_ptr_nonnull(params.destroy_platform);
  fns.get_device_count(&platform, &count, st);
  ck_assert_int_eq(TF_GetCode(st), TF_OK);
  ck_assert_int_eq(count, 0);
  params.destroy_platform(&platform);
  params.destroy_platform_fns(&fns);
  TF_DeleteStatus(st);
}
END_TEST

/* A core whose SP_PlatformFns is smaller than ours: nothing written past
 * its struct_size. */
START_TEST(smaller_core_struct_not_overrun) {
  TF_Status *st = TF_NewStatus();
  SP_Platform platform = {.struct_size = SP_PLATFORM_STRUCT_SIZE};
  SP_PlatformFns fns;
  memset(&fns, 0xcd, sizeof fns);
  fns.struct_size = offsetof(SP_PlatformFns, create_timer_fns);
  SE_PlatformRegistrationParams params = {
      .struct_size = SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE,
      .major_version = SE_MAJOR,
      .platform = &platform,
      .platform_fns = &fns};
  SE_InitPlugin(&params, st);
  ck_assert_int_eq(TF_GetCode(st), TF_OK);
  ck_assert_ptr_nonnull(fns.destroy_stream_executor);
  ck_assert_uint_eq((uintptr_t)fns.create_timer_fns,
                    (uintptr_t)0xcdcdcdcdcdcdcdcdull);
  params.destroy_platform(&platform);
  TF_DeleteStatus(st);
}
END_TEST

/* ---- Program binaries kept between processes ---------------------------- */

/* The .bin files of dir/programs. */
static int kept_files(const char *dir, char paths[][4200], int max) {
  char sub[256];
  snprintf(sub, sizeof sub, "%s/programs", dir);
  DIR *d = opendir(sub);
  int n = 0;
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len > 4 && strcmp(e->d_name + len - 4, ".bin") == 0) {
      if (n < max) snprintf(paths[n], 4200, "%s/%s", sub, e->d_name);
      n++;
    }
  }
  closedir(d);
  return n;
}

/* Builds the add_one program in a fresh context (as a new process would)
 * and runs it; returns whether it came from kept binaries. */
static bool build_and_run(void) {
  TF_Status *st = TF_NewStatus();
  struct ocl_device *dev = open_device(st);
  unsigned loaded = ocl_program_binaries_loaded();
  cl_program p = ocl_program_get(dev, "kept", good_source, "", st);
  ck_assert_msg(p != NULL, "%s", TF_Message(st));
  bool from_disk = ocl_program_binaries_loaded() == loaded + 1;
  cl_int err;
  cl_kernel k = clCreateKernel(p, "add_one", &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  cl_mem buf = clCreateBuffer(ocl_device_context(dev), CL_MEM_READ_WRITE,
                              4 * sizeof(cl_int), NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  cl_command_queue q = clCreateCommandQueueWithProperties(
      ocl_device_context(dev), dev->id, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  cl_int v[4] = {1, 2, 3, 4};
  size_t n = 4;
  ck_assert_int_eq(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, sizeof v, v, 0,
                                        NULL, NULL),
                   CL_SUCCESS);
  ck_assert_int_eq(clSetKernelArg(k, 0, sizeof buf, &buf), CL_SUCCESS);
  ck_assert_int_eq(
      clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL),
      CL_SUCCESS);
  ck_assert_int_eq(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof v, v, 0,
                                       NULL, NULL),
                   CL_SUCCESS);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(v[i], i + 2);
  clReleaseCommandQueue(q);
  clReleaseMemObject(buf);
  clReleaseKernel(k);
  ocl_devices_teardown();
  TF_DeleteStatus(st);
  return from_disk;
}

/* On PoCL, as these tests run, only with the test hook: the plugin leaves
 * its binaries to PoCL's own cache otherwise. */
static void fresh_cache_dir(char *dir) {
  strcpy(dir, "/tmp/tfocl-binaries-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("TFOCL_CACHE_DIR", dir, 1);
  setenv("TFOCL_KEEP_POCL_BINARIES", "1", 1);
}

static void remove_cache_dir(const char *dir) {
  char paths[8][4200], sub[256];
  int n = kept_files(dir, paths, 8);
  for (int i = 0; i < n && i < 8; i++) unlink(paths[i]);
  snprintf(sub, sizeof sub, "%s/programs", dir);
  rmdir(sub);
  rmdir(dir);
}

START_TEST(program_binaries_kept_between_contexts) {
  char dir[64], paths[8][4200];
  fresh_cache_dir(dir);
  ck_assert(!build_and_run());
  int n = kept_files(dir, paths, 8);
  ck_assert_int_ge(n, 1); /* one per device of the context */
  struct stat st;
  ck_assert_int_eq(stat(paths[0], &st), 0);
  ck_assert_int_eq(st.st_mode & 077, 0); /* private, as the directory */
  ck_assert(build_and_run());
  ck_assert(build_and_run());
  ck_assert_int_eq(kept_files(dir, paths, 8), n);
  remove_cache_dir(dir);
}
END_TEST

/* A truncated file, one with a flipped byte and one of another key under
 * the right name are ignored; the build from source rewrites them. */
START_TEST(program_binaries_damaged_are_rebuilt) {
  char dir[64], paths[8][4200];
  fresh_cache_dir(dir);
  ck_assert(!build_and_run());
  ck_assert_int_ge(kept_files(dir, paths, 8), 1);
  for (int damage = 0; damage < 3; damage++) {
    FILE *f = fopen(paths[0], "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (damage == 0) {
      ck_assert_int_eq(ftruncate(fileno(f), size / 2), 0);
    } else {
      /* The middle of the binary, or a byte of the key near the start. */
      long at = damage == 1 ? size / 2 : 40;
      fseek(f, at, SEEK_SET);
      int c = fgetc(f);
      fseek(f, at, SEEK_SET);
      fputc(c ^ 0x5a, f);
    }
    fclose(f);
    ck_assert_msg(!build_and_run(), "damage %d was used", damage);
    ck_assert_msg(build_and_run(), "damage %d not rewritten", damage);
  }
  remove_cache_dir(dir);
}
END_TEST

/* Without the hook PoCL keeps nothing here (it keeps its own); another
 * driver's second build comes from the kept binary. */
START_TEST(program_binaries_left_to_pocl) {
  char dir[64], paths[8][4200];
  fresh_cache_dir(dir);
  unsetenv("TFOCL_KEEP_POCL_BINARIES");
  char name[128] = "";
  cl_platform_id platform;
  ck_assert_int_eq(clGetPlatformIDs(1, &platform, NULL), CL_SUCCESS);
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, NULL);
  bool pocl = strstr(name, "Portable Computing Language") != NULL;
  ck_assert(!build_and_run());
  ck_assert(build_and_run() == !pocl);
  if (pocl)
    ck_assert_int_eq(kept_files(dir, paths, 8), 0);
  remove_cache_dir(dir);
}
END_TEST

/* A directory others can write is neither read nor written; "off" keeps
 * nothing. */
START_TEST(program_binaries_only_in_a_private_dir) {
  char dir[64], paths[8][4200], sub[128];
  fresh_cache_dir(dir);
  ck_assert(!build_and_run());
  int n = kept_files(dir, paths, 8);
  ck_assert_int_ge(n, 1);
  snprintf(sub, sizeof sub, "%s/programs", dir);
  ck_assert_int_eq(chmod(sub, 0777), 0);
  ck_assert(!build_and_run());
  ck_assert_int_eq(unlink(paths[0]), 0);
  ck_assert(!build_and_run());
  ck_assert_int_eq(kept_files(dir, paths, 8), n - 1); /* nothing written */
  ck_assert_int_eq(chmod(sub, 0700), 0);
  setenv("TFOCL_CACHE_DIR", "off", 1);
  ck_assert(!build_and_run());
  ck_assert_int_eq(kept_files(dir, paths, 8), n - 1);
  remove_cache_dir(dir);
}
END_TEST

/* The walk over the tables' section finds programs of tables from every
 * corner of it (singletons, typed tables, tables of two and three
 * dimensions, this test's own), past the padding between tables, and
 * only with their own options. */
START_TEST(program_table_finds_the_families)
{
  extern const char ocl_cl_source_unary[], ocl_cl_source_binary[],
      ocl_cl_source_einsum[], ocl_cl_source_softmax[], ocl_cl_source_scatter[],
      ocl_cl_source_variables[], ocl_cl_source_matmul[];
  static const struct {
    const char *name, *options, *source;
  } cases[] = {
      {"unary_cast", "-DCAST", ocl_cl_source_unary},
      {"unary_cast_fp64", "-DCAST -DCAST_FP64", ocl_cl_source_unary},
      {"unary_float", "-DT=float -DT_IS_FLOAT", ocl_cl_source_unary},
      {"binary_double", "-DT=double -DT_IS_DOUBLE", ocl_cl_source_binary},
      {"binary_bool", "-DT=uchar -DT_IS_BOOL", ocl_cl_source_binary},
      {"einsum_float", "-DT=float -DT_IS_FLOAT", ocl_cl_source_einsum},
      {"softmax_float", "-DT=float -DT_IS_FLOAT", ocl_cl_source_softmax},
      {"scatter_float", "-DT=float", ocl_cl_source_scatter},
      {"variables_float", "-DT=float -DT_IS_FLOAT", ocl_cl_source_variables},
      {"matmul_cpu_float", "-DT=float -DMATMUL_CPU -DIDX_T=long",
       ocl_cl_source_matmul},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ck_assert_msg(ocl_program_table_find(cases[i].name, cases[i].options) ==
                      cases[i].source,
                  "%s (%s)", cases[i].name, cases[i].options);
  ck_assert_ptr_null(ocl_program_table_find("unary_float", "-DT=half"));
  ck_assert_ptr_null(ocl_program_table_find("unary_float", ""));
  ck_assert_ptr_null(ocl_program_table_find("no_such_family", ""));
  ck_assert_ptr_null(ocl_program_table_find(NULL, ""));
}
END_TEST

/* A program of the plugin's tables as far as the warm list goes
 * (OCL_PROGRAM_TABLE): small, so that building it ahead is quick. */
static const char warm_source[] =
    "__kernel void add_two(__global int *p) { p[get_global_id(0)] += 2; }\n";
static const struct ocl_program OCL_PROGRAM_TABLE warm_programs[] = {
    {"warm_test", warm_source, "-DWARM=1"},
    {"warm_test", warm_source, "-DWARM=3"},
};

static void warm_file(const char *dir, char *path, size_t size)
{
  char sub[256];
  snprintf(sub, sizeof sub, "%s/warm", dir);
  path[0] = '\0';
  DIR *d = opendir(sub);
  if (!d)
    return;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strstr(e->d_name, ".txt"))
      snprintf(path, size, "%s/%s", sub, e->d_name);
  closedir(d);
}

static void remove_warm_dir(const char *dir)
{
  char path[4200], sub[256];
  warm_file(dir, path, sizeof path);
  if (path[0])
    unlink(path);
  snprintf(sub, sizeof sub, "%s/warm", dir);
  rmdir(sub);
  remove_cache_dir(dir);
}

/* Reads a warm list into text without each line's runs, which must all
 * be this process's alone; returns its run's hash (the field's text). */
static void read_warm_list(const char *path, char *text, size_t size,
                           char run[17])
{
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  char line[1024];
  size_t used = 0;
  run[0] = '\0';
  while (fgets(line, sizeof line, f)) {
    char *tab = strchr(line, '\t');
    ck_assert_ptr_nonnull(tab);
    char *runs = strchr(tab + 1, '\t');
    ck_assert_msg(runs != NULL, "no runs: %s", line);
    ck_assert_uint_eq(strlen(runs), 1 + 16 + 1);
    if (!run[0])
      memcpy(run, runs + 1, 17);
    ck_assert_int_eq(strncmp(runs + 1, run, 16), 0);
    strcpy(runs, "\n");
    ck_assert_uint_lt(used + strlen(line), size);
    strcpy(text + used, line);
    used += strlen(line);
  }
  fclose(f);
  run[16] = '\0';
}

/* Opens the device (a fresh context, as a new process would) and waits
 * until its thread has built `expected` programs ahead, or a few seconds
 * went by; returns how many it built. */
static unsigned open_and_wait(unsigned expected, struct ocl_device **dev)
{
  TF_Status *st = TF_NewStatus();
  unsigned before = ocl_programs_prefetched();
  *dev = open_device(st);
  for (int i = 0; i < 3000 && ocl_programs_prefetched() - before < expected;
       i++)
    usleep(2000);
  /* No more than expected, even given time. */
  usleep(expected ? 50000 : 200000);
  TF_DeleteStatus(st);
  return ocl_programs_prefetched() - before;
}

/* The programs a context asked for are listed in the cache directory; the
 * next context builds those of the tables, and generated ones whose name
 * parses (a fused kernel's), before anyone asks; a program of neither
 * ("trivial") is listed but left to be built when asked. A program built
 * ahead whose first kernel brings another source is built again from it. */
START_TEST(warm_list_builds_ahead)
{
  static const char fused[] = "fused:f,f>f:sub(0,1);cf(3f800000);mul(2,3)";
  static const char other_source[] =
      "__kernel void add_three(__global int *p) { p[0] += 3; }\n";
  char dir[64], path[4200];
  struct ocl_device *dev;
  TF_Status *st = TF_NewStatus();
  char *fused_source = ocl_fused_program_source(fused);
  ck_assert_ptr_nonnull(fused_source);
  fresh_cache_dir(dir);
  unsetenv("TFOCL_KEEP_POCL_BINARIES");
  ck_assert_uint_eq(open_and_wait(0, &dev), 0); /* no list yet */
  ck_assert_ptr_nonnull(ocl_program_get(dev, "trivial", good_source, "", st));
  ck_assert_ptr_nonnull(
      ocl_program_get(dev, "warm_test", warm_source, "-DWARM=1", st));
  ck_assert_ptr_nonnull(ocl_program_get(dev, fused, fused_source, "", st));
  ocl_devices_teardown();
  warm_file(dir, path, sizeof path);
  ck_assert_msg(path[0] != '\0', "no warm list in %s/warm", dir);
  struct stat sb;
  ck_assert_int_eq(stat(path, &sb), 0);
  ck_assert_int_eq(sb.st_mode & 077, 0);
  char text[512] = "", run[17];
  read_warm_list(path, text, sizeof text, run);
  ck_assert_str_eq(text, "trivial\t\nwarm_test\t-DWARM=1\n"
                         "fused:f,f>f:sub(0,1);cf(3f800000);mul(2,3)\t\n");

  ck_assert_uint_eq(open_and_wait(2, &dev), 2);
  unsigned built = ocl_programs_prefetched();
  cl_int err;
  cl_program p = ocl_program_get(dev, fused, fused_source, "", st);
  ck_assert_msg(p != NULL, "%s", TF_Message(st));
  cl_kernel k = clCreateKernel(p, "fused_same", &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  clReleaseKernel(k);
  /* Not the source it was built ahead from: built again. */
  p = ocl_program_get(dev, "warm_test", other_source, "-DWARM=1", st);
  ck_assert_msg(p != NULL, "%s", TF_Message(st));
  k = clCreateKernel(p, "add_three", &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  clReleaseKernel(k);
  ck_assert_uint_eq(ocl_programs_prefetched(), built);
  ocl_devices_teardown();
  /* Asked for in this order this time: the list follows. */
  char same_run[17];
  read_warm_list(path, text, sizeof text, same_run);
  ck_assert_str_eq(same_run, run);
  ck_assert_str_eq(text, "fused:f,f>f:sub(0,1);cf(3f800000);mul(2,3)\t\n"
                         "warm_test\t-DWARM=1\ntrivial\t\n");
  remove_warm_dir(dir);
  free(fused_source);
  TF_DeleteStatus(st);
}
END_TEST

/* A fresh cache directory (dir) and the list (path) that a first context
 * asking for warm_test writes there. */
static void first_warm_list(char *dir, char *path, size_t size, TF_Status *st)
{
  struct ocl_device *dev;
  fresh_cache_dir(dir);
  unsetenv("TFOCL_KEEP_POCL_BINARIES");
  open_and_wait(0, &dev);
  ck_assert_ptr_nonnull(
      ocl_program_get(dev, "warm_test", warm_source, "-DWARM=1", st));
  ocl_devices_teardown();
  warm_file(dir, path, size);
  ck_assert(path[0] != '\0');
}

static void write_warm_list(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  ck_assert_int_eq(fclose(f), 0);
}

/* Each line names the runs (a hash of all their arguments) that asked for
 * it: a process builds ahead its own run's lines, else those of the run
 * that wrote the list last, else (lines of no run: an older list, a field
 * that does not parse) all of them. Asking adds this run to the front of
 * a line's runs. */
START_TEST(warm_list_builds_this_runs_programs)
{
  static const char fused[] = "fused:f,f>f:sub(0,1);cf(3f800000);mul(2,3)";
  static const char other[] = "00000000000000aa", older[] = "00000000000000bb";
  char dir[64], path[4200], text[1024], list[1024], run[17];
  struct ocl_device *dev;
  TF_Status *st = TF_NewStatus();
  first_warm_list(dir, path, sizeof path, st);
  read_warm_list(path, text, sizeof text, run);

  /* This run's two lines, though another run wrote the list last. */
  snprintf(list, sizeof list,
           "warm_test\t-DWARM=3\t%s\n%s\t\t%s\nwarm_test\t-DWARM=1\t%s,%s\n",
           other, fused, run, other, run);
  write_warm_list(path, list);
  ck_assert_uint_eq(open_and_wait(2, &dev), 2);
  ck_assert_ptr_nonnull(
      ocl_program_get(dev, "warm_test", warm_source, "-DWARM=1", st));
  ocl_devices_teardown();
  snprintf(list, sizeof list,
           "warm_test\t-DWARM=1\t%s,%s\nwarm_test\t-DWARM=3\t%s\n%s\t\t%s\n",
           run, other, other, fused, run);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  ck_assert_str_eq(text, list);

  /* None of this run's: the last writer's line alone. */
  snprintf(list, sizeof list,
           "warm_test\t-DWARM=3\t%s\n%s\t\t%s\nwarm_test\t-DWARM=1\t%s\n",
           other, fused, older, older);
  write_warm_list(path, list);
  ck_assert_uint_eq(open_and_wait(1, &dev), 1);
  ocl_devices_teardown();

  /* No runs (the first line's does not parse): every line. */
  snprintf(list, sizeof list,
           "warm_test\t-DWARM=3\tnot-a-hash\n%s\t\nwarm_test\t-DWARM=1\t%s\n",
           fused, older);
  write_warm_list(path, list);
  ck_assert_uint_eq(open_and_wait(3, &dev), 3);
  ocl_devices_teardown();
  remove_warm_dir(dir);
  TF_DeleteStatus(st);
}
END_TEST

/* A fused chain's program for inputs constant along the innermost dim is
 * named "fused/<mask>:<chain>", so that a warm list rebuilds it from its
 * name: the mask must name inputs the chain has, and the source holds the
 * one kernel, reading those inputs without the innermost index. */
START_TEST(fused_masked_program_names)
{
  static const char *const bad[] = {
      "fused/0:f,f>f:sub(0,1);cf(3f800000);mul(2,3)", /* no input */
      "fused/4:f,f>f:sub(0,1);cf(3f800000);mul(2,3)", /* no input 2 */
      "fused/:f,f>f:sub(0,1);cf(3f800000);mul(2,3)",  /* no mask */
      "fused/2f,f>f:sub(0,1);cf(3f800000);mul(2,3)",  /* no colon */
      "fused/2:f,f>f:sub(0,9)",                       /* bad chain */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(ocl_fused_program_source(bad[i]) == NULL, "%s", bad[i]);
  char *source =
      ocl_fused_program_source("fused/2:f,f>f:sub(0,1);cf(3f800000);mul(2,3)");
  ck_assert_ptr_nonnull(source);
  ck_assert_ptr_nonnull(strstr(source, "void fused_bcast3d_m("));
  ck_assert_ptr_null(strstr(source, "void fused_same("));
  ck_assert_ptr_nonnull(
      strstr(source, "int j0 = z * s.strides[0] + y * s.strides[1] + x;"));
  ck_assert_ptr_nonnull(
      strstr(source, "int j1 = z * s.strides[3] + y * s.strides[4];"));
  TF_Status *st = TF_NewStatus();
  struct ocl_device *dev = open_device(st);
  cl_program p =
      ocl_program_get(dev, "fused/2:f,f>f:sub(0,1);cf(3f800000);mul(2,3)",
                      source, "", st);
  ck_assert_msg(p != NULL, "%s", TF_Message(st));
  cl_int err;
  cl_kernel k = clCreateKernel(p, "fused_bcast3d_m", &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  clReleaseKernel(k);
  free(source);
  TF_DeleteStatus(st);
}
END_TEST

/* Lines that name no program of the tables, that are cut or too long, or
 * that have no tab build nothing; a list others can write is not read;
 * "off" keeps no list. A context torn down at once stops its thread. */
START_TEST(warm_list_ignores_what_is_not_ours)
{
  char dir[64], path[4200];
  struct ocl_device *dev;
  TF_Status *st = TF_NewStatus();
  first_warm_list(dir, path, sizeof path, st);

  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("warm_test\t-DWARM=2\n", f);  /* other options */
  fputs("nonexistent_family\t\n", f); /* not in the tables */
  fputs("no tab at all\n", f);
  for (int i = 0; i < 2000; i++)
    fputc('x', f); /* too long */
  fputs("\twarm_test\t-DWARM=1\n", f);
  fputs("warm_test\t-DWARM=1", f); /* cut short: no newline */
  fclose(f);
  ck_assert_uint_eq(open_and_wait(0, &dev), 0);
  ocl_devices_teardown();

  f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("warm_test\t-DWARM=1\n", f);
  fclose(f);
  ck_assert_int_eq(chmod(path, 0620), 0);
  ck_assert_uint_eq(open_and_wait(0, &dev), 0);
  ocl_devices_teardown();
  ck_assert_int_eq(chmod(path, 0600), 0);

  /* A new list (this command's was removed) keeps at most 256 lists: the
   * least recently written go. */
  char sub[128], name[256];
  snprintf(sub, sizeof sub, "%s/warm", dir);
  unlink(path);
  for (int i = 0; i < 300; i++) {
    snprintf(name, sizeof name, "%s/old-%03d.txt", sub, i);
    f = fopen(name, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    struct timespec times[2] = {{.tv_sec = 1000000 + i},
                                {.tv_sec = 1000000 + i}};
    ck_assert_int_eq(utimensat(AT_FDCWD, name, times, 0), 0);
  }
  open_and_wait(0, &dev);
  ck_assert_ptr_nonnull(
      ocl_program_get(dev, "warm_test", warm_source, "-DWARM=1", st));
  ocl_devices_teardown();
  ck_assert_int_eq(access(path, F_OK), 0);
  int lists = 0, oldest_left = 1000;
  DIR *d = opendir(sub);
  ck_assert_ptr_nonnull(d);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    int i;
    if (strstr(e->d_name, ".txt"))
      lists++;
    if (sscanf(e->d_name, "old-%d.txt", &i) == 1 && i < oldest_left)
      oldest_left = i;
  }
  closedir(d);
  ck_assert_int_eq(lists, 256);
  ck_assert_int_eq(oldest_left, 300 - 255);
  for (int i = 0; i < 300; i++) {
    snprintf(name, sizeof name, "%s/old-%03d.txt", sub, i);
    unlink(name);
  }

  /* Torn down at once: the thread stops (or finishes) and is joined. */
  open_device(st);
  ocl_devices_teardown();

  unlink(path);
  setenv("TFOCL_CACHE_DIR", "off", 1);
  open_and_wait(0, &dev);
  ck_assert_ptr_nonnull(
      ocl_program_get(dev, "warm_test", warm_source, "-DWARM=1", st));
  ocl_devices_teardown();
  warm_file(dir, path, sizeof path);
  ck_assert_str_eq(path, "");
  remove_warm_dir(dir);
  TF_DeleteStatus(st);
}
END_TEST

/* The settings are read once per load of the plugin: a change of the
 * environment after the first read is not seen until the settings are
 * dropped (ocl_devices_teardown does, as a reload would); values out of
 * range read as unset. */
START_TEST(config_read_once_per_load) {
  setenv("TFOCL_GEMM_TILE", "64", 1);
  setenv("TFOCL_GEMM", "own", 1);
  setenv("TFOCL_KERNEL_STYLE", "gpu", 1);
  setenv("TFOCL_INDEX_WIDTH", "64", 1);
  setenv("TFOCL_MAX_GROUPS_YZ", "7", 1);
  ocl_config_forget();
  const struct ocl_config *c = ocl_config();
  ck_assert_int_eq(c->gemm_tile, 64);
  ck_assert_int_eq(c->gemm, OCL_GEMM_OWN);
  ck_assert_int_eq(c->kernel_style, OCL_KERNEL_STYLE_GPU);
#if defined(TFOCL_TEST_HOOKS)
  ck_assert(c->hooks.index64);
  ck_assert_uint_eq(c->hooks.max_groups_yz, 7);
#endif

  setenv("TFOCL_GEMM_TILE", "32", 1);
  setenv("TFOCL_GEMM", "blas", 1);
  ck_assert_int_eq(ocl_config()->gemm_tile, 64);
  ck_assert_int_eq(ocl_config()->gemm, OCL_GEMM_OWN);

  setenv("TFOCL_GEMM_TILE", "48", 1);
  setenv("TFOCL_GEMM", "fastest", 1);
  setenv("TFOCL_KERNEL_STYLE", "simd", 1);
  setenv("TFOCL_MAX_GROUPS_YZ", "65535", 1);
  ocl_config_forget();
  c = ocl_config();
  ck_assert_int_eq(c->gemm_tile, 0);
  ck_assert_int_eq(c->gemm, OCL_GEMM_AUTO);
  ck_assert_int_eq(c->kernel_style, OCL_KERNEL_STYLE_BY_DEVICE);
  ck_assert_uint_eq(c->hooks.max_groups_yz, 0);

  /* A device list that does not fit is refused whole, as if unset. */
  char longer[OCL_CONFIG_LIST_MAX + 8];
  memset(longer, '0', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  setenv("TFOCL_VISIBLE_DEVICES", longer, 1);
  ocl_config_forget();
  ck_assert(!ocl_config()->has_visible_devices);
  setenv("TFOCL_VISIBLE_DEVICES", "1,0", 1);
  ocl_config_forget();
  ck_assert(ocl_config()->has_visible_devices);
  ck_assert_str_eq(ocl_config()->visible_devices, "1,0");

  const char *names[] = {"TFOCL_GEMM_TILE", "TFOCL_GEMM", "TFOCL_KERNEL_STYLE",
                         "TFOCL_INDEX_WIDTH", "TFOCL_MAX_GROUPS_YZ",
                         "TFOCL_VISIBLE_DEVICES"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    unsetenv(names[i]);
  ocl_config_forget();
}
END_TEST

/* Every host wait ends when its event does, not before, and reports the
 * status a failed event ended with: the polling wait of GPUs (spinning
 * only, sleeping only, the default), event callbacks, the driver's own.
 * The events are user events that another thread ends later. */
struct later_status {
  cl_event event;
  cl_int status;
  useconds_t after_us;
};

static void *set_status_later(void *arg)
{
  struct later_status *l = arg;

  usleep(l->after_us);
  clSetUserEventStatus(l->event, l->status);
  return NULL;
}

START_TEST(host_waits_end_with_the_event)
{
  static const struct {
    const char *wait, *spin_us;
    enum ocl_host_wait kind;
  } modes[] = {
      {"poll", "0", OCL_HOST_WAIT_POLL},
      {"poll", "1000000", OCL_HOST_WAIT_POLL},
      {"poll", "", OCL_HOST_WAIT_POLL},
      {"callback", "", OCL_HOST_WAIT_CALLBACK},
      {"driver", "", OCL_HOST_WAIT_DRIVER},
  };
  static const cl_int ends[] = {CL_COMPLETE, -9999};
  TF_Status *st = TF_NewStatus();
  struct ocl_device *dev = open_device(st);

  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    setenv("TFOCL_HOST_WAIT", modes[m].wait, 1);
    setenv("TFOCL_HOST_WAIT_SPIN_US", modes[m].spin_us, 1);
    ocl_config_forget();
    dev->host_wait = 0; /* decided again from the settings */
    ck_assert_int_eq(ocl_host_wait_kind(dev), modes[m].kind);
    for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++) {
      cl_int err, exec_status = 1;
      /* PoCL 3.1 does not call the CL_COMPLETE callback of a user event
       * set to a negative status: that wait never ended here. */
      if (ends[e] < 0 && modes[m].kind == OCL_HOST_WAIT_CALLBACK)
        continue;
      const char *call = NULL;
      struct later_status later = {NULL, ends[e], 30000};
      pthread_t setter;
      double start, waited;

      later.event = clCreateUserEvent(dev->ctx->context, &err);
      ck_assert_int_eq(err, CL_SUCCESS);
      start = clt_seconds();
      ck_assert_int_eq(pthread_create(&setter, NULL, set_status_later, &later),
                       0);
      err = ocl_wait_event(dev, NULL, later.event, &exec_status, &call);
      waited = clt_seconds() - start;
      pthread_join(setter, NULL);
      ck_assert_msg(err == CL_SUCCESS, "%s %s: %s failed: %d", modes[m].wait,
                    modes[m].spin_us, call ? call : "?", err);
      ck_assert_msg(exec_status == ends[e], "%s %s: status %d, not %d",
                    modes[m].wait, modes[m].spin_us, exec_status, ends[e]);
      ck_assert_msg(waited >= 0.025,
                    "%s %s: returned after %.3f s, before "
                    "the event ended",
                    modes[m].wait, modes[m].spin_us, waited);
      clReleaseEvent(later.event);
    }
  }
  ck_assert_int_eq(ocl_config()->host_wait_spin_us, -1);
  setenv("TFOCL_HOST_WAIT_SPIN_US", "250", 1);
  ocl_config_forget();
  ck_assert_int_eq(ocl_config()->host_wait_spin_us, 250);
  ck_assert_int_eq(ocl_config()->host_wait, OCL_HOST_WAIT_FORCE_DRIVER);
  setenv("TFOCL_HOST_WAIT", "spin", 1);
  setenv("TFOCL_HOST_WAIT_SPIN_US", "-1", 1);
  ocl_config_forget();
  ck_assert_int_eq(ocl_config()->host_wait, OCL_HOST_WAIT_BY_DRIVER);
  ck_assert_int_eq(ocl_config()->host_wait_spin_us, -1);
  unsetenv("TFOCL_HOST_WAIT");
  unsetenv("TFOCL_HOST_WAIT_SPIN_US");
  ocl_config_forget();
  dev->host_wait = 0;
  TF_DeleteStatus(st);
}
END_TEST

static Suite *internals_suite(void) {
  Suite *s = suite_create("internals");
  TCase *tc = tcase_create("internals");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, program_cache_builds_once);
  tcase_add_test(tc, program_cache_build_failure);
  tcase_add_test(tc, program_cache_exact_division);
  tcase_add_test(tc, program_cache_threads);
  tcase_add_test(tc, program_binaries_kept_between_contexts);
  tcase_add_test(tc, program_binaries_damaged_are_rebuilt);
  tcase_add_test(tc, program_binaries_only_in_a_private_dir);
  tcase_add_test(tc, program_binaries_left_to_pocl);
  tcase_add_test(tc, program_table_finds_the_families);
  tcase_add_test(tc, warm_list_builds_ahead);
  tcase_add_test(tc, warm_list_builds_this_runs_programs);
  tcase_add_test(tc, warm_list_ignores_what_is_not_ours);
  tcase_add_test(tc, fused_masked_program_names);
  tcase_add_test(tc, address_map_intervals);
  tcase_add_test(tc, address_map_random);
  tcase_add_test(tc, cl_error_path);
  tcase_add_test(tc, gemm_identity_names_builds);
  tcase_add_test(tc, lingering_host_threads_are_seen);
  tcase_add_test(tc, host_blas_threads_park_by_default);
  tcase_add_test(tc, config_read_once_per_load);
  tcase_add_test(tc, host_waits_end_with_the_event);
  tcase_add_test(tc, unknown_abi_gives_zero_devices);
  tcase_add_test(tc, smaller_core_struct_not_overrun);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return clt_main(internals_suite()); }
