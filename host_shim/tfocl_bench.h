/* tfocl bench: internal interface between the driver (tfocl_bench*.c) and
 * its references (tfocl_bench_ref.c): the host loops, OpenBLAS and the raw
 * OpenCL empty kernel that every device figure is measured against.
 *
 * Nothing here is linked at build time: OpenBLAS and the OpenCL ICD loader
 * are dlopen()ed at run time, so the installed `tfocl` depends on neither;
 * a reference whose library is missing is reported as unavailable. */
#ifndef TFOCL_BENCH_H_
#define TFOCL_BENCH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

double bench_now(void);

/* ---- Host threads -------------------------------------------------------- */

/* Threads the host references use: the online CPUs (at least 1, at most
 * BENCH_MAX_THREADS). */
#define BENCH_MAX_THREADS 64
int bench_host_threads(void);

/* ---- Host references (multi-threaded loops over [0, n)) ------------------ */

void bench_host_add(float *z, const float *x, const float *y, size_t n);
void bench_host_mul(float *z, const float *x, const float *y, size_t n);
void bench_host_relu(float *z, const float *x, size_t n);
/* out[c] = sum over r of x[r, c] (Sum axis 0: over rows) */
void bench_host_sum_rows(float *out, const float *x, size_t rows, size_t cols);
/* out[r] = sum over c of x[r, c] (Sum axis 1: over columns) */
void bench_host_sum_cols(float *out, const float *x, size_t rows, size_t cols);
/* softmax of each row */
void bench_host_softmax(float *out, const float *x, size_t rows, size_t cols);
/* plain single-call memcpy (what a program would write) */
void bench_host_memcpy(void *dst, const void *src, size_t bytes);
/* out[b, c, r] = x[b, r, c] for each of `batches` [rows, cols] matrices,
 * in cache-sized blocks (Transpose [B,R,C] perm (0,2,1)) */
void bench_host_transpose(float *out, const float *x, size_t batches,
                          size_t rows, size_t cols);
/* out[r, :] = a[r, :] ++ b[r, :] (ConcatV2 of [rows, a_cols] and
 * [rows, b_cols] along axis 1) */
void bench_host_concat_cols(float *out, const float *a, const float *b,
                            size_t rows, size_t a_cols, size_t b_cols);
/* out[r] = params[idx[r]] (rows of `cols`; zeros out of [0, limit)) */
void bench_host_gather(float *out, const float *params, size_t limit,
                       const int32_t *idx, size_t rows, size_t cols);
/* out[ids[r]] += data[r] over [segments, cols], zeroed first; ids out of
 * range dropped; each thread owns a block of columns (deterministic). */
void bench_host_segment_sum(float *out, size_t segments, const float *data,
                            const int32_t *ids, size_t rows, size_t cols);
/* var[idx[r]] += updates[r], the same way */
void bench_host_scatter_add(float *var, size_t var_rows, const float *updates,
                            const int32_t *idx, size_t rows, size_t cols);

/* ---- OpenBLAS (dlopen) ---------------------------------------------------- */

/* dlopen()s libopenblas.so.0 (then libcblas.so.3, libblas.so.3) after
 * setting OPENBLAS_CORETYPE=SkylakeX if unset (DESIGN.md: Debian's OpenBLAS
 * misdetects the 2-core AVX-512 Xeon) and OPENBLAS_THREAD_TIMEOUT=4 if unset
 * (no spinning threads after a reference call). Returns false, with `why`, when no
 * cblas_sgemm can be found. `name` gets the library and its thread count. */
bool bench_blas_open(char *name, size_t name_size, char *why, size_t why_size);
/* Row-major C[m,n] = op(A) op(B); bench_blas_open must have succeeded. */
void bench_blas_sgemm(bool trans_a, bool trans_b, int m, int n, int k,
                      const float *a, const float *b, float *c);

/* ---- Raw OpenCL: tiny kernels through the ICD loader (dlopen) ------------ */

struct bench_rawcl;
/* Opens the OpenCL device whose CL_DEVICE_NAME is `device_name` (NULL or
 * no match: the first GPU, else accelerator, else CPU, the plugin's order),
 * builds `kernel void empty(global float *p) {}` and an add of the
 * plugin's argument layout, and makes an in-order queue. NULL, with `why`,
 * when impossible. */
struct bench_rawcl *bench_rawcl_open(const char *device_name, char *why,
                                     size_t why_size);
enum bench_rawcl_kernel {
  BENCH_RAWCL_EMPTY, /* one argument, set once */
  BENCH_RAWCL_ADD,   /* seven arguments, set before every enqueue */
};
/* Enqueues `count` such kernels back to back (global size 4), then
 * clFinish. *enqueue_s: host time of the enqueue loop alone; returns the
 * total time including clFinish, or a negative value on an OpenCL error. */
double bench_rawcl_run(struct bench_rawcl *raw, enum bench_rawcl_kernel which,
                       int count, double *enqueue_s);
const char *bench_rawcl_device(const struct bench_rawcl *raw);
void bench_rawcl_close(struct bench_rawcl *raw);

#endif /* TFOCL_BENCH_H_ */
