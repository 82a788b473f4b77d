/* A host BLAS as a GEMM implementation on CPU devices.
 *
 * A CPU device's buffers are host memory, so a host BLAS can compute the
 * product in place. It must run in stream order without blocking the
 * thread that enqueues: as an OpenCL native kernel (clEnqueueNativeKernel,
 * where the device reports CL_EXEC_NATIVE_KERNEL, as PoCL does), which the
 * in-order queue runs after the work before it and before the work after
 * it. Devices without native kernels use our own kernel instead: a host
 * callback (the plugin's callback worker) would serve too, but it belongs
 * to the stream layer and gains nothing over our kernel where native
 * kernels are missing.
 *
 * The operands reach the native kernel as mapped regions (non-blocking
 * maps before it, unmaps after: ocl_op_host_task), not through the native
 * kernel's own memory-object list: PoCL 3.1 hands that list's buffers over
 * as whatever device copy exists when the command is enqueued, without
 * the migration its kernels get, so the BLAS read stale inputs and its
 * output never became the buffer's content (wrong products in TensorFlow,
 * where copies are asynchronous). A map is the command whose pointer is
 * the buffer's current content once it has run; on a CPU device it is
 * zero-copy (~25 us), which the size classes where this path wins absorb.
 *
 * The library is Debian's OpenBLAS (libopenblas.so.0), else whatever
 * libblas.so.3 is (the reference BLAS where nothing better is installed:
 * gemm_tune.c measures it against our kernel before it is used), dlopen'ed
 * at first use and never linked or closed. OpenBLAS keeps its own threads
 * (one per core); the device's own threads are idle while the native
 * kernel runs, which occupies one of them. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_internal.h"

/* cblas_sgemm: row-major 101, no transpose 111, transpose 112. */
typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int m, int n,
                         int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c,
                         int ldc);
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

static struct {
  pthread_once_t once;
  sgemm_fn sgemm;
  char identity[96];
} blas = {.once = PTHREAD_ONCE_INIT, .identity = "none"};

static void blas_load(void)
{
  static const char *const libs[] = {"libopenblas.so.0", "libblas.so.3"};
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
    memcpy(&blas.sgemm, &f, sizeof(blas.sgemm));
    /* OpenBLAS's kernels (its core type: OPENBLAS_CORETYPE), threads and
     * whether they spin after a call (OPENBLAS_THREAD_TIMEOUT as it read
     * it when it loaded, 0 for its default: gemm_host_threads_linger)
     * decide its speed. */
    char *(*core)(void) = NULL;
    int (*threads)(void) = NULL;
    int (*timeout)(void) = NULL;
    void *c = dlsym(h, "openblas_get_corename");
    void *t = dlsym(h, "openblas_get_num_threads");
    void *w = dlsym(h, "openblas_thread_timeout");
    if (c != NULL)
      memcpy(&core, &c, sizeof(core));
    if (t != NULL)
      memcpy(&threads, &t, sizeof(threads));
    if (w != NULL)
      memcpy(&timeout, &w, sizeof(timeout));
    if (core != NULL && threads != NULL && timeout != NULL)
      snprintf(blas.identity, sizeof(blas.identity), "%s %s %d timeout %d",
               libs[i], core(), threads(), timeout());
    else
      snprintf(blas.identity, sizeof(blas.identity), "%s", libs[i]);
    for (char *p = blas.identity; *p; p++)
      if (*p == '\t' || *p == '\n')
        *p = ' ';
    return; /* loaded for the process's life */
  }
}

/* What the native kernel receives (a copy, made at enqueue). */
struct blas_job {
  /* The mapped operands (ocl_op_host_task writes them), valid once the
   * maps before the kernel have run. */
  void *a, *b, *c;
  int m, n, k, lda, ldb;
  int ta, tb;
  int64_t batches;
  struct gemm_batch_args batch; /* element strides */
  sgemm_fn sgemm;
};

static void CL_CALLBACK blas_native(void *args)
{
  const struct blas_job *j = args;
  const float *a = j->a, *b = j->b;
  float *c = j->c;
  size_t mn = (size_t)j->m * (size_t)j->n;
  for (int64_t i = 0; i < j->batches; i++) {
    int64_t rem = i, ao = 0, bo = 0;
    for (int d = j->batch.rank - 1; d >= 0; d--) {
      int64_t x = rem % j->batch.dims[d];
      rem /= j->batch.dims[d];
      ao += x * j->batch.a_strides[d];
      bo += x * j->batch.b_strides[d];
    }
    j->sgemm(CBLAS_ROW_MAJOR, j->ta ? CBLAS_TRANS : CBLAS_NO_TRANS,
             j->tb ? CBLAS_TRANS : CBLAS_NO_TRANS, j->m, j->n, j->k, 1.0f,
             a + ao, j->lda, b + bo, j->ldb, 0.0f, c + (size_t)i * mn, j->n);
  }
}

void gemm_blas_park_threads_by_default(void)
{
  const struct ocl_config *config = ocl_config();
  bool may_run = config->gemm == OCL_GEMM_BLAS ||
                 (config->gemm == OCL_GEMM_AUTO && config->gemm_tune);
  if (!may_run || getenv("OPENBLAS_THREAD_TIMEOUT") != NULL)
    return; /* no host BLAS to run, or the user's choice */
  /* Loaded already (by another library): it has read its settings. */
  void *h = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (h != NULL) {
    dlclose(h);
    return;
  }
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
}

const char *gemm_blas_identity(void)
{
  pthread_once(&blas.once, blas_load);
  return blas.identity;
}

bool gemm_blas_usable(struct ocl_op *op, const struct gemm *g)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL || !info->is_cpu || g->dtype != TF_FLOAT ||
      g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX)
    return false;
  bool native = false;
  if (gemm_device_id(op, &native) == NULL || !native)
    return false;
  pthread_once(&blas.once, blas_load);
  return blas.sgemm != NULL;
}

/* The elements an operand's matrices span from its first: the furthest
 * matrix (largest index in each batch dim) plus one matrix. */
static size_t span(const struct gemm *g, const int64_t *bstride,
                   int64_t matrix)
{
  int64_t last = 0;
  for (int d = 0; d < g->brank; d++)
    last += (g->bdims[d] - 1) * bstride[d];
  return (size_t)((last + 1) * matrix);
}

bool gemm_blas_run(struct ocl_op *op, const struct gemm *g)
{
  size_t bytes[3] = {span(g, g->a_bstride, g->m * g->k) * sizeof(float),
                     span(g, g->b_bstride, g->k * g->n) * sizeof(float),
                     (size_t)(g->batches * g->m * g->n) * sizeof(float)};
  const TF_Tensor *t[3] = {g->a, g->b, g->c};
  const int64_t off[3] = {g->a_off, g->b_off, g->c_off};
  const cl_map_flags flags[3] = {CL_MAP_READ, CL_MAP_READ,
                                 CL_MAP_WRITE_INVALIDATE_REGION};
  struct blas_job job;
  memset(&job, 0, sizeof(job));
  void **host_ptr[3] = {&job.a, &job.b, &job.c};
  struct ocl_host_range ranges[3];

  for (int i = 0; i < 3; i++) {
    if (!ocl_op_buffer(op, t[i], (size_t)off[i] * sizeof(float), bytes[i],
                       &ranges[i].buffer))
      return false;
    ranges[i].bytes = bytes[i];
    ranges[i].flags = flags[i];
    ranges[i].host_ptr = host_ptr[i];
  }
  job.m = (int)g->m;
  job.n = (int)g->n;
  job.k = (int)g->k;
  job.lda = (int)(g->ta ? g->m : g->k);
  job.ldb = (int)(g->tb ? g->k : g->n);
  job.ta = g->ta;
  job.tb = g->tb;
  job.batches = g->batches;
  gemm_batch_args_of(g, &job.batch);
  job.sgemm = blas.sgemm;
  return ocl_op_host_task(op, "host_blas_sgemm", blas_native, &job,
                          sizeof(job), ranges, 3);
}
