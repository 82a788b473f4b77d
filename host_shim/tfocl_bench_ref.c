/* tfocl bench: the references every device figure is measured against --
 * multi-threaded host loops, OpenBLAS's cblas_sgemm and an empty kernel
 * enqueued through the OpenCL ICD loader directly. OpenBLAS and the ICD
 * loader are dlopen()ed: the tfocl command links neither. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CL/cl.h>

#include "tfocl_bench.h"

/* The host loops are the bar to meet: let the compiler vectorise them
 * (gcc's -O2 does not; clang's does, and has no such pragma), as a program
 * written for speed would. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

double bench_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int bench_host_threads(void)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > BENCH_MAX_THREADS ? BENCH_MAX_THREADS : (int)n;
}

/* ---- A parallel for: [0, n) split in contiguous chunks, one per thread --- */

struct pfor_job {
  void (*body)(void *arg, size_t begin, size_t end);
  void *arg;
  size_t begin, end;
};

static void *pfor_run(void *p)
{
  struct pfor_job *job = p;
  job->body(job->arg, job->begin, job->end);
  return NULL;
}

static void pfor(size_t n, size_t align,
                 void (*body)(void *arg, size_t begin, size_t end), void *arg)
{
  int threads = bench_host_threads();
  struct pfor_job jobs[BENCH_MAX_THREADS];
  pthread_t tids[BENCH_MAX_THREADS];
  bool started[BENCH_MAX_THREADS] = {false};
  size_t chunk = (n / (size_t)threads + align - 1) / align * align;

  for (int t = 0; t < threads; t++) {
    size_t b = (size_t)t * chunk, e = b + chunk;
    jobs[t] = (struct pfor_job){body, arg, b < n ? b : n, e < n ? e : n};
    if (t > 0)
      started[t] = pthread_create(&tids[t], NULL, pfor_run, &jobs[t]) == 0;
  }
  for (int t = 0; t < threads; t++)
    if (!started[t])
      pfor_run(&jobs[t]); /* the caller's share, or a helper that failed */
  for (int t = 1; t < threads; t++)
    if (started[t])
      pthread_join(tids[t], NULL);
}

/* ---- Element-wise ---------------------------------------------------------- */

struct ew_args {
  float *z;
  const float *x, *y;
  size_t rows, cols;
};

static void add_body(void *p, size_t b, size_t e)
{
  struct ew_args *a = p;
  float *restrict z = a->z;
  const float *restrict x = a->x, *restrict y = a->y;
  for (size_t i = b; i < e; i++)
    z[i] = x[i] + y[i];
}

static void mul_body(void *p, size_t b, size_t e)
{
  struct ew_args *a = p;
  float *restrict z = a->z;
  const float *restrict x = a->x, *restrict y = a->y;
  for (size_t i = b; i < e; i++)
    z[i] = x[i] * y[i];
}

static void relu_body(void *p, size_t b, size_t e)
{
  struct ew_args *a = p;
  float *restrict z = a->z;
  const float *restrict x = a->x;
  for (size_t i = b; i < e; i++) {
    float v = x[i];
    z[i] = v > 0.0f ? v : 0.0f; /* branch-free (maxps) once vectorised */
  }
}

void bench_host_add(float *z, const float *x, const float *y, size_t n)
{
  struct ew_args a = {z, x, y, 0, 0};
  pfor(n, 16, add_body, &a);
}

void bench_host_mul(float *z, const float *x, const float *y, size_t n)
{
  struct ew_args a = {z, x, y, 0, 0};
  pfor(n, 16, mul_body, &a);
}

void bench_host_relu(float *z, const float *x, size_t n)
{
  struct ew_args a = {z, x, NULL, 0, 0};
  pfor(n, 16, relu_body, &a);
}

/* ---- Reductions and softmax --------------------------------------------- */

/* Columns [b, e): walk the rows, each thread on its own column block. */
static void sum_rows_body(void *p, size_t b, size_t e)
{
  struct ew_args *a = p;
  float *restrict out = a->z;
  for (size_t c = b; c < e; c++)
    out[c] = 0.0f;
  for (size_t r = 0; r < a->rows; r++) {
    const float *restrict row = a->x + r * a->cols;
    for (size_t c = b; c < e; c++)
      out[c] += row[c];
  }
}

static void sum_cols_body(void *p, size_t b, size_t e)
{
  struct ew_args *a = p;
  for (size_t r = b; r < e; r++) {
    const float *restrict row = a->x + r * a->cols;
    float acc[8] = {0};
    size_t c = 0;
    for (; c + 8 <= a->cols; c += 8)
      for (int j = 0; j < 8; j++)
        acc[j] += row[c + (size_t)j];
    float s = 0.0f;
    for (; c < a->cols; c++)
      s += row[c];
    for (int j = 0; j < 8; j++)
      s += acc[j];
    a->z[r] = s;
  }
}

static void softmax_body(void *p, size_t b, size_t e)
{
  struct ew_args *a = p;
  for (size_t r = b; r < e; r++) {
    const float *restrict x = a->x + r * a->cols;
    float *restrict z = a->z + r * a->cols;
    float m = -INFINITY, s = 0.0f;
    for (size_t c = 0; c < a->cols; c++)
      m = x[c] > m ? x[c] : m;
    for (size_t c = 0; c < a->cols; c++) {
      z[c] = expf(x[c] - m);
      s += z[c];
    }
    float inv = 1.0f / s;
    for (size_t c = 0; c < a->cols; c++)
      z[c] *= inv;
  }
}

void bench_host_sum_rows(float *out, const float *x, size_t rows, size_t cols)
{
  struct ew_args a = {out, x, NULL, rows, cols};
  pfor(cols, 16, sum_rows_body, &a);
}

void bench_host_sum_cols(float *out, const float *x, size_t rows, size_t cols)
{
  struct ew_args a = {out, x, NULL, rows, cols};
  pfor(rows, 1, sum_cols_body, &a);
}

void bench_host_softmax(float *out, const float *x, size_t rows, size_t cols)
{
  struct ew_args a = {out, x, NULL, rows, cols};
  pfor(rows, 1, softmax_body, &a);
}

void bench_host_memcpy(void *dst, const void *src, size_t bytes)
{
  memcpy(dst, src, bytes);
}

/* ---- Data movement -------------------------------------------------------- */

struct move_args {
  float *out;
  const float *x, *y;
  size_t batches, rows, cols, y_cols;
};

/* Blocks of 32 rows [b, e) of the batches stacked: each 32x32 block read
 * and written while it sits in L1. */
static void transpose_body(void *p, size_t b, size_t e)
{
  struct move_args *a = p;
  size_t rows = a->rows, cols = a->cols;
  for (size_t rb = b; rb < e; rb += 32) {
    size_t batch = rb / rows, r0 = rb % rows;
    size_t r1 = r0 + 32 < rows ? r0 + 32 : rows;
    const float *restrict x = a->x + batch * rows * cols;
    float *restrict out = a->out + batch * rows * cols;
    for (size_t c0 = 0; c0 < cols; c0 += 32) {
      size_t c1 = c0 + 32 < cols ? c0 + 32 : cols;
      for (size_t r = r0; r < r1; r++)
        for (size_t c = c0; c < c1; c++)
          out[c * rows + r] = x[r * cols + c];
    }
  }
}

void bench_host_transpose(float *out, const float *x, size_t batches,
                          size_t rows, size_t cols)
{
  /* Row blocks never straddle two batches when rows is a multiple of 32,
   * as in every bench case. */
  struct move_args a = {out, x, NULL, batches, rows, cols, 0};
  pfor(batches * rows, 32, transpose_body, &a);
}

static void concat_body(void *p, size_t b, size_t e)
{
  struct move_args *a = p;
  size_t out_cols = a->cols + a->y_cols;
  for (size_t r = b; r < e; r++) {
    memcpy(a->out + r * out_cols, a->x + r * a->cols, sizeof(float) * a->cols);
    memcpy(a->out + r * out_cols + a->cols, a->y + r * a->y_cols,
           sizeof(float) * a->y_cols);
  }
}

void bench_host_concat_cols(float *out, const float *a, const float *b,
                            size_t rows, size_t a_cols, size_t b_cols)
{
  struct move_args m = {out, a, b, 1, rows, a_cols, b_cols};
  pfor(rows, 1, concat_body, &m);
}

/* ---- Gather, segment sum, scatter-add ----------------------------------- */

struct sparse_args {
  float *out;
  const float *x;
  const int32_t *idx;
  size_t rows, cols, limit;
};

/* Output rows [b, e): one memcpy each (zeros for an index out of range). */
static void gather_body(void *p, size_t b, size_t e)
{
  struct sparse_args *a = p;
  for (size_t r = b; r < e; r++) {
    int32_t i = a->idx[r];
    float *dst = a->out + r * a->cols;
    if (i >= 0 && (size_t)i < a->limit)
      memcpy(dst, a->x + (size_t)i * a->cols, sizeof(float) * a->cols);
    else
      memset(dst, 0, sizeof(float) * a->cols);
  }
}

void bench_host_gather(float *out, const float *params, size_t limit,
                       const int32_t *idx, size_t rows, size_t cols)
{
  struct sparse_args a = {out, params, idx, rows, cols, limit};
  pfor(rows, 1, gather_body, &a);
}

/* Columns [b, e) of every row, in row order: the deterministic sum each
 * thread owns a column block of. */
static void accumulate_body(void *p, size_t b, size_t e)
{
  struct sparse_args *a = p;
  for (size_t r = 0; r < a->rows; r++) {
    int32_t t = a->idx[r];
    if (t < 0 || (size_t)t >= a->limit)
      continue;
    float *restrict dst = a->out + (size_t)t * a->cols;
    const float *restrict src = a->x + r * a->cols;
    for (size_t c = b; c < e; c++)
      dst[c] += src[c];
  }
}

void bench_host_segment_sum(float *out, size_t segments, const float *data,
                            const int32_t *ids, size_t rows, size_t cols)
{
  struct sparse_args a = {out, data, ids, rows, cols, segments};
  memset(out, 0, sizeof(float) * segments * cols);
  pfor(cols, 16, accumulate_body, &a);
}

void bench_host_scatter_add(float *var, size_t var_rows, const float *updates,
                            const int32_t *idx, size_t rows, size_t cols)
{
  struct sparse_args a = {var, updates, idx, rows, cols, var_rows};
  pfor(cols, 16, accumulate_body, &a);
}

/* ---- OpenBLAS ------------------------------------------------------------- */

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int m, int n,
                         int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c,
                         int ldc);
static sgemm_fn blas_sgemm;

bool bench_blas_open(char *name, size_t name_size, char *why, size_t why_size)
{
  static const char *const libs[] = {"libopenblas.so.0", "libcblas.so.3",
                                     "libblas.so.3"};
  /* Read by OpenBLAS when it loads: set before dlopen. */
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  /* OpenBLAS's threads spin (sched_yield) for 2^28 cycles, about 0.1 s,
   * after each call: through the device's repetition that follows, where
   * they took a third of the cores' time (64 x 256 x 256 products at 0.5x
   * OpenBLAS, 1.1x with this). 2^4 cycles: they sleep once done, and each
   * reference call pays its own wake-ups, as the device's does. */
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
    void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
      continue;
    void *f = dlsym(h, "cblas_sgemm");
    if (f == NULL) {
      dlclose(h);
      continue;
    }
    /* Object pointer to function pointer, as dlsym(3) documents. */
    memcpy(&blas_sgemm, &f, sizeof(blas_sgemm));
    int (*threads)(void) = NULL;
    char *(*core)(void) = NULL;
    void *t = dlsym(h, "openblas_get_num_threads");
    void *c = dlsym(h, "openblas_get_corename");
    if (t != NULL)
      memcpy(&threads, &t, sizeof(threads));
    if (c != NULL)
      memcpy(&core, &c, sizeof(core));
    if (threads != NULL)
      snprintf(name, name_size, "%s (%s, %d threads)", libs[i],
               core != NULL ? core() : "?", threads());
    else
      snprintf(name, name_size, "%s", libs[i]);
    return true; /* kept loaded for the process's life */
  }
  snprintf(why, why_size, "no cblas_sgemm in libopenblas.so.0, libcblas.so.3 "
                          "or libblas.so.3");
  return false;
}

void bench_blas_sgemm(bool trans_a, bool trans_b, int m, int n, int k,
                      const float *a, const float *b, float *c)
{
  blas_sgemm(CBLAS_ROW_MAJOR, trans_a ? CBLAS_TRANS : CBLAS_NO_TRANS,
             trans_b ? CBLAS_TRANS : CBLAS_NO_TRANS, m, n, k, 1.0f, a,
             trans_a ? m : k, b, trans_b ? k : n, 0.0f, c, n);
}

/* ---- Raw OpenCL ------------------------------------------------------------ */

#define CL_FNS(X)                 \
  X(clGetPlatformIDs)             \
  X(clGetDeviceIDs)               \
  X(clGetDeviceInfo)              \
  X(clCreateContext)              \
  X(clReleaseContext)             \
  X(clCreateProgramWithSource)    \
  X(clBuildProgram)               \
  X(clReleaseProgram)             \
  X(clCreateKernel)               \
  X(clReleaseKernel)              \
  X(clSetKernelArg)               \
  X(clCreateBuffer)               \
  X(clReleaseMemObject)           \
  X(clCreateCommandQueueWithProperties) \
  X(clReleaseCommandQueue)        \
  X(clEnqueueNDRangeKernel)       \
  X(clFinish)

struct bench_rawcl {
  void *lib;
#define CL_MEMBER(f) __typeof__(f) *f;
  CL_FNS(CL_MEMBER)
#undef CL_MEMBER
  cl_context ctx;
  cl_command_queue queue;
  cl_program program;
  cl_kernel kernel;
  cl_kernel add;
  cl_mem buf;
  char device[256];
};

void bench_rawcl_close(struct bench_rawcl *raw)
{
  if (raw == NULL)
    return;
  if (raw->kernel != NULL)
    raw->clReleaseKernel(raw->kernel);
  if (raw->add != NULL)
    raw->clReleaseKernel(raw->add);
  if (raw->program != NULL)
    raw->clReleaseProgram(raw->program);
  if (raw->buf != NULL)
    raw->clReleaseMemObject(raw->buf);
  if (raw->queue != NULL)
    raw->clReleaseCommandQueue(raw->queue);
  if (raw->ctx != NULL)
    raw->clReleaseContext(raw->ctx);
  /* The ICD loader and its drivers stay loaded: the plugin shares them. */
  free(raw);
}

static cl_device_id pick_device(struct bench_rawcl *raw, const char *name)
{
  cl_platform_id platforms[16];
  cl_uint np = 0;
  static const cl_device_type order[] = {
      CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_CPU};
  cl_device_id first = NULL;

  if (raw->clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS)
    return NULL;
  if (np > 16)
    np = 16;
  for (size_t t = 0; t < sizeof(order) / sizeof(order[0]); t++) {
    for (cl_uint p = 0; p < np; p++) {
      cl_device_id devs[16];
      cl_uint nd = 0;
      if (raw->clGetDeviceIDs(platforms[p], order[t], 16, devs, &nd) !=
          CL_SUCCESS)
        continue;
      for (cl_uint d = 0; d < nd && d < 16; d++) {
        char dn[256] = "";
        raw->clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof(dn) - 1, dn,
                             NULL);
        if (first == NULL) {
          first = devs[d];
          snprintf(raw->device, sizeof(raw->device), "%s", dn);
        }
        if (name != NULL && strcmp(dn, name) == 0) {
          snprintf(raw->device, sizeof(raw->device), "%s", dn);
          return devs[d];
        }
      }
    }
  }
  return first;
}

struct bench_rawcl *bench_rawcl_open(const char *device_name, char *why,
                                     size_t why_size)
{
  /* `add` takes its tensors as the plugin's kernels do (common.clh: a
   * buffer and a byte offset each, then the element count). */
  const char *source =
      "kernel void empty(global float *p) {}\n"
      "kernel void add(global const float *x, ulong xo,\n"
      "                global const float *y, ulong yo,\n"
      "                global float *z, ulong zo, long n) {\n"
      "  long i = get_global_id(0);\n"
      "  if (i < n)\n"
      "    ((global float *)((global char *)z + zo))[i] =\n"
      "        ((global const float *)((global const char *)x + xo))[i] +\n"
      "        ((global const float *)((global const char *)y + yo))[i];\n"
      "}\n";
  struct bench_rawcl *raw = calloc(1, sizeof(*raw));
  cl_int err = CL_SUCCESS;
  const char *step = "";

  if (raw == NULL) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  raw->lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (raw->lib == NULL) {
    snprintf(why, why_size, "cannot load libOpenCL.so.1: %s", dlerror());
    free(raw);
    return NULL;
  }
#define CL_LOAD(f)                                                   \
  {                                                                  \
    void *sym = dlsym(raw->lib, #f);                                 \
    if (sym == NULL) {                                               \
      snprintf(why, why_size, "libOpenCL.so.1 lacks %s", #f);        \
      free(raw);                                                     \
      return NULL;                                                   \
    }                                                                \
    memcpy(&raw->f, &sym, sizeof(raw->f));                           \
  }
  CL_FNS(CL_LOAD)
#undef CL_LOAD

  cl_device_id dev = pick_device(raw, device_name);
  if (dev == NULL) {
    snprintf(why, why_size, "no OpenCL device");
    bench_rawcl_close(raw);
    return NULL;
  }
  step = "clCreateContext";
  raw->ctx = raw->clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    goto fail;
  step = "clCreateCommandQueueWithProperties";
  raw->queue = raw->clCreateCommandQueueWithProperties(raw->ctx, dev, NULL,
                                                       &err);
  if (err != CL_SUCCESS)
    goto fail;
  step = "clCreateProgramWithSource";
  raw->program =
      raw->clCreateProgramWithSource(raw->ctx, 1, &source, NULL, &err);
  if (err != CL_SUCCESS)
    goto fail;
  step = "clBuildProgram";
  err = raw->clBuildProgram(raw->program, 1, &dev, "", NULL, NULL);
  if (err != CL_SUCCESS)
    goto fail;
  step = "clCreateKernel";
  raw->kernel = raw->clCreateKernel(raw->program, "empty", &err);
  if (err != CL_SUCCESS)
    goto fail;
  raw->add = raw->clCreateKernel(raw->program, "add", &err);
  if (err != CL_SUCCESS)
    goto fail;
  step = "clCreateBuffer";
  raw->buf = raw->clCreateBuffer(raw->ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
  if (err != CL_SUCCESS)
    goto fail;
  step = "clSetKernelArg";
  err = raw->clSetKernelArg(raw->kernel, 0, sizeof(cl_mem), &raw->buf);
  if (err != CL_SUCCESS)
    goto fail;
  return raw;
fail:
  snprintf(why, why_size, "%s failed (%d)", step, (int)err);
  bench_rawcl_close(raw);
  return NULL;
}

/* What the plugin's binary kernels are given at every launch: three
 * tensors (here one 64-byte buffer at offset 0) and the count. */
static bool set_add_args(struct bench_rawcl *raw)
{
  const cl_ulong offset = 0;
  const cl_long count = 4;
  cl_int err = CL_SUCCESS;
  for (cl_uint t = 0; t < 3; t++) {
    err |= raw->clSetKernelArg(raw->add, 2 * t, sizeof(cl_mem), &raw->buf);
    err |= raw->clSetKernelArg(raw->add, 2 * t + 1, sizeof(offset), &offset);
  }
  err |= raw->clSetKernelArg(raw->add, 6, sizeof(count), &count);
  return err == CL_SUCCESS;
}

double bench_rawcl_run(struct bench_rawcl *raw, enum bench_rawcl_kernel which,
                       int count, double *enqueue_s)
{
  size_t global = 4;
  bool add = which == BENCH_RAWCL_ADD;
  double t0 = bench_now();
  for (int i = 0; i < count; i++) {
    if (add && !set_add_args(raw))
      return -1;
    if (raw->clEnqueueNDRangeKernel(raw->queue, add ? raw->add : raw->kernel, 1,
                                    NULL, &global, NULL, 0, NULL,
                                    NULL) != CL_SUCCESS)
      return -1;
  }
  double t1 = bench_now();
  if (raw->clFinish(raw->queue) != CL_SUCCESS)
    return -1;
  *enqueue_s = t1 - t0;
  return bench_now() - t0;
}

const char *bench_rawcl_device(const struct bench_rawcl *raw)
{
  return raw->device;
}
