/* The matmul family's GEMM, shared by its files only: matmul.c (the ops,
 * our kernels, CLBlast), gemm_blas.c (a host BLAS on CPU devices),
 * gemm_tune.c (which implementation, per device and size class). */
#ifndef TFOCL_KERNELS_GEMM_INTERNAL_H_
#define TFOCL_KERNELS_GEMM_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "gemm.h"
#include "runtime.h"

/* _FusedMatMul's activations (matmul.cl's ACT_*). */
enum gemm_activation {
  ACT_NONE,
  ACT_RELU,
  ACT_RELU6,
  ACT_ELU,
  ACT_LEAKY_RELU,
  ACT_TANH,
  ACT_SIGMOID,
  ACT_GELU_APPROXIMATE,
  ACT_GELU_EXACT
};

/* What the kernels' batch argument holds (matmul.cl's gemm_batch_t):
 * output matrix b decomposes row-major over dims; each operand's matrix
 * starts sum c_d * strides[d] elements in (0 where broadcast). A product
 * whose collapsed batch has more dims is split on the host. */
#define GEMM_BATCH_DIMS 4
struct gemm_batch_args {
  cl_long a_strides[GEMM_BATCH_DIMS];
  cl_long b_strides[GEMM_BATCH_DIMS];
  cl_long dims[GEMM_BATCH_DIMS];
  cl_int rank;
  cl_int pad;
};

/* One validated product: c[b] = act(op(a[ab]) * op(b[bb]) + bias) for each
 * output matrix b (contiguous, m * n apart), op a transpose where ta/tb.
 * The batch is the collapsed broadcast of the operands' batch dims: output
 * matrix b decomposes row-major over bdims[0..brank) and each operand's
 * matrix index is sum c_d * a_bstride[d] (b_bstride[d]), 0 where the
 * operand is broadcast: strides in whole matrices of that operand. */
struct gemm {
  TF_DataType dtype; /* float or half */
  int64_t m, n, k;
  bool ta, tb;
  const TF_Tensor *a, *b, *c;
  /* Element offsets of the operands in their tensors. */
  int64_t a_off, b_off, c_off;
  /* _FusedMatMul: bias (n values, or NULL) then the activation. */
  const TF_Tensor *bias;
  enum gemm_activation act;
  float alpha; /* LeakyRelu */
  int64_t batches;
  int brank;
  /* Everything above bdims is zeroed to start a product; the arrays are
   * filled up to brank. */
  int64_t bdims[OCL_MAX_RANK];
  int64_t a_bstride[OCL_MAX_RANK];
  int64_t b_bstride[OCL_MAX_RANK];
};

/* The kernels' batch argument of g (brank <= GEMM_BATCH_DIMS), strides in
 * elements. */
void gemm_batch_args_of(const struct gemm *g, struct gemm_batch_args *args);

/* The implementations a product can take. */
enum gemm_impl {
  GEMM_IMPL_OWN,     /* matmul.cl in the device's kernel shape */
  GEMM_IMPL_CLBLAST, /* libclblast.so.1 */
  GEMM_IMPL_BLAS,    /* a host BLAS in stream order (CPU devices) */
  GEMM_NUM_IMPLS
};
#define GEMM_IMPL_BIT(i) (1u << (i))

/* Runs g with implementation `impl` (the epilogue included). */
typedef bool (*gemm_impl_fn)(struct ocl_op *op, const struct gemm *g);

/* ---- gemm_tune.c ------------------------------------------------------------ */

/* What remembered choices depend on besides the device and the host
 * libraries: "matmul.cl:<hash> plugin:<file> clblast:<file>" (matmul.c),
 * so that another tfocl build or another CLBlast measures again. */
#define GEMM_IDENTITY_MAX 320
const char *gemm_identity(void);

/* Which of `candidates` (GEMM_IMPL_BIT set, more than one) runs g: the
 * choice remembered for g's size class on op's device, else measured now on
 * g itself (each candidate run once to warm up, then timed; g's output is
 * overwritten, so the caller runs the winner afterwards), remembered, and
 * appended to the cache file. `identity` (gemm_identity()) names tfocl's
 * build and CLBlast's library; `host_libs` the host libraries the
 * candidates bring along (the host BLAS and how it runs: its speed is the
 * process's, not the device's), "-" for none: both part of the cache key.
 * TFOCL_GEMM_TUNE=0 skips measuring and the cache: `fallback` then, which a
 * measured candidate must also beat by 10 %. Never fails: a candidate that
 * fails while measured is left out (its error cleared). */
enum gemm_impl gemm_tune_pick(struct ocl_op *op, const struct gemm *g,
                              unsigned candidates, enum gemm_impl fallback,
                              const char *identity, const char *host_libs,
                              const gemm_impl_fn impls[GEMM_NUM_IMPLS]);

/* Whether the process kept over half a core busy while the calling thread
 * slept 5 ms: right after a host BLAS's run, its threads still spinning
 * for work (OpenBLAS's default; OPENBLAS_THREAD_TIMEOUT=4 parks them at
 * once), which then take the device's cores from the kernels that follow.
 * The tuner leaves such a BLAS out. */
bool gemm_host_threads_linger(void);

/* The device behind op's queue, and whether it runs native kernels
 * (CL_EXEC_NATIVE_KERNEL); NULL where it cannot be asked. */
cl_device_id gemm_device_id(struct ocl_op *op, bool *native_kernels);

/* ---- gemm_blas.c ------------------------------------------------------------ */

/* A host BLAS can run g on op's device: a CPU device with native kernels,
 * float, sizes within int, and libopenblas.so.0 / libblas.so.3 loaded. */
bool gemm_blas_usable(struct ocl_op *op, const struct gemm *g);
/* Enqueues g's product (without its epilogue) as a native kernel. */
bool gemm_blas_run(struct ocl_op *op, const struct gemm *g);
/* The loaded BLAS as the tuning cache knows it: library, core type,
 * threads and the thread timeout it read where it is OpenBLAS
 * ("libopenblas.so.0 Haswell 2 timeout 4"). */
const char *gemm_blas_identity(void);
/* Sets OPENBLAS_THREAD_TIMEOUT=4 for a process that may run the host BLAS
 * (TFOCL_GEMM blas, or auto with the tuner on), unless the user set it or
 * libopenblas.so.0 is already loaded. OpenBLAS reads it once, when it
 * loads, and spins its threads for 2^N clock ticks after each call (2^28
 * by default, ~0.1 s, taking the device's cores from the kernels that
 * follow, so the tuner had to leave it out: gemm_host_threads_linger);
 * 4 is the least it accepts. Parked at once, each call pays its threads'
 * wake-up instead, which the tuner measures. The whole process and its
 * children see the variable, as does any other OpenBLAS loaded later.
 * Called at kernel registration, in TensorFlow's import on the thread
 * that loads the plugin: setenv beside a thread reading the environment
 * is undefined, and this must stay before the plugin starts threads of
 * its own (streams' callback workers, the program cache's prefetch),
 * which TensorFlow's device creation does. */
void gemm_blas_park_threads_by_default(void);

#endif /* TFOCL_KERNELS_GEMM_INTERNAL_H_ */
