/* A host BLAS as a GEMM implementation on CPU devices.
 *
 * A CPU device's buffers are host memory, so a host BLAS can compute the
 * product in place. It must run in stream order without blocking the
 * thread that enqueues: as an OpenCL native kernel (clEnqueueNativeKernel,
 * where the device reports CL_EXEC_NATIVE_KERNEL, as PoCL does), which the
 * in-order queue runs after the work before it and before the work after
 * it, handing it the host addresses of its buffers. Devices without native
 * kernels use our own kernel instead: a host callback (the plugin's
 * callback worker) would serve too, but it belongs to the stream layer and
 * gains nothing over our kernel where native kernels are missing.
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
} blas = {.once = PTHREAD_ONCE_INIT};

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
    return; /* loaded for the process's life */
  }
}

/* What the native kernel receives (a copy, made at enqueue). */
struct blas_job {
  /* cl_mem at enqueue; the runtime replaces them with the buffers' host
   * addresses (mem_list / args_mem_loc). */
  void *a, *b, *c;
  size_t a_off, b_off, c_off; /* bytes */
  int m, n, k, lda, ldb;
  int ta, tb;
  int64_t batches;
  struct gemm_batch_args batch; /* element strides */
  sgemm_fn sgemm;
};

static void CL_CALLBACK blas_native(void *args)
{
  const struct blas_job *j = args;
  const float *a = (const float *)((const char *)j->a + j->a_off);
  const float *b = (const float *)((const char *)j->b + j->b_off);
  float *c = (float *)((char *)j->c + j->c_off);
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

bool gemm_blas_run(struct ocl_op *op, const struct gemm *g)
{
  struct ocl_buffer a, b, c;
  if (!ocl_op_buffer(op, g->a, 0, ocl_tf.TensorByteSize(g->a), &a) ||
      !ocl_op_buffer(op, g->b, 0, ocl_tf.TensorByteSize(g->b), &b) ||
      !ocl_op_buffer(op, g->c, 0, ocl_tf.TensorByteSize(g->c), &c))
    return false;
  struct blas_job job;
  memset(&job, 0, sizeof(job));
  job.a = a.mem;
  job.b = b.mem;
  job.c = c.mem;
  job.a_off = a.offset + (size_t)g->a_off * sizeof(float);
  job.b_off = b.offset + (size_t)g->b_off * sizeof(float);
  job.c_off = c.offset + (size_t)g->c_off * sizeof(float);
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
  cl_mem mems[3] = {a.mem, b.mem, c.mem};
  const void *locs[3] = {&job.a, &job.b, &job.c};
  /* A direct enqueue: runtime.h has no native kernels; this is their one
   * user. */
  cl_int err = clEnqueueNativeKernel(op->queue, blas_native, &job,
                                     sizeof(job), 3, mems, locs, 0, NULL,
                                     NULL);
  if (err != CL_SUCCESS)
    return ocl_op_fail(op, TF_INTERNAL,
                       "clEnqueueNativeKernel (host BLAS sgemm) failed: %d",
                       (int)err);
  return true;
}
