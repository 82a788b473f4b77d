/* MatMul, BatchMatMul, BatchMatMulV2 and BatchMatMulV3 (float and half).
 *
 * Two GEMM paths, chosen per device and overridable per op with the
 * environment variable TFOCL_GEMM=own|clblast (read when the op's kernel is
 * created, so one process can measure both):
 *   own      matmul.cl's packed, register-blocked GEMM. The default on CPU
 *            devices: on PoCL it comes close to OpenBLAS, while CLBlast
 *            reaches a fraction of that and spends ~12 s in its first call
 *            (tuning and compiling).
 *   clblast  CLBlast, loaded with dlopen on first use (never linked: the
 *            plugin must load where CLBlast is absent). The default on GPUs
 *            when present; where it is absent, or for half on a device
 *            without cl_khr_fp16, our own kernel runs instead.
 * tests/bench/gemm_bench.c measures both against OpenBLAS. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clblast_c.h>

#include "gemm.h"
#include "kernel_families.h"
#include "launch.h"

extern const char ocl_cl_source_matmul[];

enum storage { ST_FLOAT, ST_HALF, ST_COUNT };

static const struct ocl_family families[ST_COUNT] = {
    [ST_FLOAT] = {"matmul_float", ocl_cl_source_matmul, "-DT=float"},
    [ST_HALF] = {"matmul_half", ocl_cl_source_matmul, "-DT=half -DT_IS_HALF"},
};

enum matmul_kind { MATMUL, BATCH_MATMUL, BATCH_MATMUL_V2 };

enum gemm_path { PATH_AUTO, PATH_OWN, PATH_CLBLAST };

struct matmul_kernel {
  enum matmul_kind kind;
  TF_DataType dtype;
  bool adj_x, adj_y;
  enum gemm_path path;
};

/* The batch broadcast as matmul.cl's batch_t reads it: strides count whole
 * matrices. */
struct batch_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long x_strides[OCL_MAX_DIMS];
  cl_long y_strides[OCL_MAX_DIMS];
  cl_long rank;
};

/* One product, validated: out[b] = op(x[xb]) * op(y[yb]) for each output
 * matrix b, with op a transpose where adj is set. */
struct gemm {
  int64_t m, n, k;
  bool adj_x, adj_y;
  int64_t x_batches, y_batches, batches; /* matrices in x, y and out */
  struct batch_args batch;
  /* Element offsets of the operands in their tensors (0 for MatMul). */
  int64_t x_off, y_off, out_off;
};

static void batch_index(const struct batch_args *s, int64_t b, int64_t *xb,
                        int64_t *yb)
{
  int64_t x = 0, y = 0;
  for (int d = (int)s->rank - 1; d >= 0; d--) {
    int64_t c = b % s->dims[d];
    b /= s->dims[d];
    x += c * s->x_strides[d];
    y += c * s->y_strides[d];
  }
  *xb = x;
  *yb = y;
}

/* ---- Shapes ------------------------------------------------------------- */

/* Validates x and y as TensorFlow's BatchMatMulOp / BatchMatMulV2Op (and
 * MatMul, its legacy form) do, with their messages, and fills `g` and the
 * output shape. */
static bool matmul_shapes(const struct matmul_kernel *k, const int64_t *x,
                          int x_rank, const int64_t *y, int y_rank,
                          struct gemm *g, int64_t *out_dims, int *out_rank,
                          TF_Status *status)
{
  char xs[160], ys[160];
  ocl_shape_format(x, x_rank, xs, sizeof(xs));
  ocl_shape_format(y, y_rank, ys, sizeof(ys));

  if (k->kind == MATMUL || k->kind == BATCH_MATMUL) {
    if (x_rank != y_rank) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "In[0] and In[1] has different ndims: %s vs. %s", xs, ys);
      return false;
    }
    if (k->kind == MATMUL && x_rank != 2) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "In[0] and In[1] ndims must be == 2: %d", x_rank);
      return false;
    }
    if (x_rank < 2) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "In[0] and In[1] ndims must be >= 2: %d", x_rank);
      return false;
    }
    for (int i = 0; i < x_rank - 2; i++) {
      if (x[i] != y[i]) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "In[0].dim(%d) and In[1].dim(%d) must be the same: "
                       "%s vs %s",
                       i, i, xs, ys);
        return false;
      }
    }
  } else {
    if (x_rank < 2) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "In[0] ndims must be >= 2: %d", x_rank);
      return false;
    }
    if (y_rank < 2) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "In[1] ndims must be >= 2: %d", y_rank);
      return false;
    }
  }

  struct ocl_bcast b;
  if (!ocl_bcast_init(&b, x, x_rank - 2, y, y_rank - 2, status) ||
      b.out_rank + 2 > OCL_MAX_DIMS) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "In[0] and In[1] must have compatible batch dimensions: "
                   "%s vs. %s",
                   xs, ys);
    return false;
  }

  int64_t d0 = x[x_rank - 2], d1 = x[x_rank - 1];
  int64_t d2 = y[y_rank - 2], d3 = y[y_rank - 1];
  if (k->adj_x) {
    int64_t t = d0;
    d0 = d1;
    d1 = t;
  }
  if (k->adj_y) {
    int64_t t = d2;
    d2 = d3;
    d3 = t;
  }
  if (d1 != d2) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Matrix size-incompatible: In[0]: %s, In[1]: %s", xs, ys);
    return false;
  }

  memset(g, 0, sizeof(*g));
  g->m = d0;
  g->k = d1;
  g->n = d3;
  g->adj_x = k->adj_x;
  g->adj_y = k->adj_y;
  g->x_batches = ocl_shape_elements(x, x_rank - 2);
  g->y_batches = ocl_shape_elements(y, y_rank - 2);
  g->batches = b.out_elements;
  g->batch.rank = b.rank;
  for (int d = 0; d < b.rank; d++) {
    g->batch.dims[d] = b.dims[d];
    g->batch.x_strides[d] = b.x_strides[d];
    g->batch.y_strides[d] = b.y_strides[d];
  }
  memcpy(out_dims, b.out_dims, sizeof(int64_t) * (size_t)b.out_rank);
  out_dims[b.out_rank] = d0;
  out_dims[b.out_rank + 1] = d3;
  *out_rank = b.out_rank + 2;
  return true;
}

/* x [B, M, K] times one y: a single [B*M, K] product, since the output's
 * rows are contiguous the same way. Saves a pass per batch and gives the
 * kernels a taller matrix. */
static void fold_batches(struct gemm *g)
{
  if (g->y_batches != 1 || g->adj_x || g->batches <= 1 ||
      g->x_batches != g->batches)
    return;
  g->m *= g->batches;
  g->x_batches = g->batches = 1;
  memset(&g->batch, 0, sizeof(g->batch));
  g->batch.rank = 1;
  g->batch.dims[0] = 1;
}

/* ---- CLBlast (dlopen'ed) ------------------------------------------------ */

static struct {
  pthread_once_t once;
  void *handle;
  __typeof__(&CLBlastSgemm) sgemm;
  __typeof__(&CLBlastHgemm) hgemm;
  __typeof__(&CLBlastSgemmStridedBatched) sgemm_batched;
  __typeof__(&CLBlastHgemmStridedBatched) hgemm_batched;
} clblast = {.once = PTHREAD_ONCE_INIT};

static void clblast_load(void)
{
  void *h = dlopen("libclblast.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    return;
  clblast.sgemm = (__typeof__(clblast.sgemm))dlsym(h, "CLBlastSgemm");
  clblast.hgemm = (__typeof__(clblast.hgemm))dlsym(h, "CLBlastHgemm");
  clblast.sgemm_batched = (__typeof__(clblast.sgemm_batched))dlsym(
      h, "CLBlastSgemmStridedBatched");
  clblast.hgemm_batched = (__typeof__(clblast.hgemm_batched))dlsym(
      h, "CLBlastHgemmStridedBatched");
  if (clblast.sgemm == NULL || clblast.hgemm == NULL ||
      clblast.sgemm_batched == NULL || clblast.hgemm_batched == NULL) {
    dlclose(h);
    return; /* handle stays NULL: not available */
  }
  clblast.handle = h;
}

static bool clblast_available(void)
{
  pthread_once(&clblast.once, clblast_load);
  return clblast.handle != NULL;
}

/* One CLBlast call: the product of g for output matrices [first, first +
 * count) of one stride pattern. Offsets are in elements. */
static bool clblast_gemm(cl_command_queue queue, bool half, const struct gemm *g,
                         cl_mem a, size_t a_off, size_t a_stride, cl_mem b,
                         size_t b_off, size_t b_stride, cl_mem c, size_t c_off,
                         size_t count, TF_Status *status)
{
  CLBlastTranspose ta = g->adj_x ? CLBlastTransposeYes : CLBlastTransposeNo;
  CLBlastTranspose tb = g->adj_y ? CLBlastTransposeYes : CLBlastTransposeNo;
  size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
  size_t lda = g->adj_x ? m : k, ldb = g->adj_y ? k : n;
  size_t c_stride = m * n;
  CLBlastStatusCode err;
  const cl_half one = 0x3C00, zero = 0;

  if (count == 1 && !half)
    err = clblast.sgemm(CLBlastLayoutRowMajor, ta, tb, m, n, k, 1.0f, a, a_off,
                        lda, b, b_off, ldb, 0.0f, c, c_off, n, &queue, NULL);
  else if (count == 1)
    err = clblast.hgemm(CLBlastLayoutRowMajor, ta, tb, m, n, k, one, a, a_off,
                        lda, b, b_off, ldb, zero, c, c_off, n, &queue, NULL);
  else if (!half)
    err = clblast.sgemm_batched(CLBlastLayoutRowMajor, ta, tb, m, n, k, 1.0f,
                                a, a_off, lda, a_stride, b, b_off, ldb,
                                b_stride, 0.0f, c, c_off, n, c_stride, count,
                                &queue, NULL);
  else
    err = clblast.hgemm_batched(CLBlastLayoutRowMajor, ta, tb, m, n, k, one, a,
                                a_off, lda, a_stride, b, b_off, ldb, b_stride,
                                zero, c, c_off, n, c_stride, count, &queue,
                                NULL);
  if (err != CLBlastSuccess) {
    ocl_set_status(status, TF_INTERNAL,
                   "CLBlast %sgemm failed with status %d (m=%zu, n=%zu, k=%zu)",
                   half ? "H" : "S", (int)err, m, n, k);
    return false;
  }
  return true;
}

static bool run_clblast(const struct ocl_launch *launch, const struct gemm *g,
                        bool half, const TF_Tensor *x, const TF_Tensor *y,
                        const TF_Tensor *out, TF_Status *status)
{
  cl_mem mem[3];
  size_t off[3];
  const TF_Tensor *t[3] = {x, y, out};
  size_t elem = half ? 2 : 4;
  for (int i = 0; i < 3; i++) {
    if (!ocl_resolve(launch->device, ocl_tf.TensorData(t[i]),
                     ocl_tf.TensorByteSize(t[i]), &mem[i], &off[i], status))
      return false;
    off[i] /= elem;
  }
  off[0] += (size_t)g->x_off;
  off[1] += (size_t)g->y_off;
  off[2] += (size_t)g->out_off;
  size_t xs = (size_t)(g->m * g->k), ys = (size_t)(g->k * g->n);
  size_t os = (size_t)(g->m * g->n);
  if (g->x_batches == g->batches && g->y_batches == g->batches)
    return clblast_gemm(launch->queue, half, g, mem[0], off[0], xs, mem[1],
                        off[1], ys, mem[2], off[2], (size_t)g->batches,
                        status);
  /* Broadcast batches: one call per output matrix. */
  for (int64_t b = 0; b < g->batches; b++) {
    int64_t xb, yb;
    batch_index(&g->batch, b, &xb, &yb);
    if (!clblast_gemm(launch->queue, half, g, mem[0], off[0] + (size_t)xb * xs,
                      0, mem[1], off[1] + (size_t)yb * ys, 0, mem[2],
                      off[2] + (size_t)b * os, 1, status))
      return false;
  }
  return true;
}

/* ---- Our own kernels ---------------------------------------------------- */

/* gemm_8x2 of matmul.cl: 8 x 32 blocks of C, 16 float16 accumulators (half
 * of AVX-512's registers), 2 vector loads of B and 8 broadcasts of A per 16
 * FMAs. Against 8x1, 4x2 and 12x1, 64 work-items per group against 16, 32
 * and 128, and K slices of 128, 256 and all of K, it measured best or tied
 * at 1024^3 on PoCL (interleaved runs on a loaded 2-core host: the
 * differences among the ties stayed within the noise). */
enum { GEMM_MR = 8, GEMM_NR = 32 };
/* Work-items per group, all along M: they share one B micro-panel. */
enum { GEMM_LOCAL = 64 };
/* K slice per launch: a KC x NR float micro-panel of B (32 KiB) stays in a
 * core's L1/L2 while the group's work-items stream A past it. */
enum { GEMM_KC = 256 };
/* Up to this many multiply-adds, packing costs more than it saves. */
#define GEMM_DIRECT_MAX_FLOPS (32.0 * 32.0 * 32.0)

static bool run_direct(const struct ocl_launch *launch, enum storage st,
                       const struct gemm *g, const TF_Tensor *x,
                       const TF_Tensor *y, const TF_Tensor *out,
                       TF_Status *status)
{
  int64_t a_sm = g->adj_x ? 1 : g->k, a_sk = g->adj_x ? g->m : 1;
  int64_t b_sk = g->adj_y ? 1 : g->n, b_sn = g->adj_y ? g->k : 1;
  int64_t total = g->batches * g->m * g->n;
  const struct ocl_arg args[] = {
      OCL_TENSOR(x),          OCL_TENSOR(y),         OCL_TENSOR(out),
      OCL_LONG(g->x_off),     OCL_LONG(g->y_off),    OCL_LONG(g->out_off),
      OCL_LONG(g->m),         OCL_LONG(g->n),        OCL_LONG(g->k),
      OCL_LONG(a_sm),         OCL_LONG(a_sk),        OCL_LONG(b_sk),
      OCL_LONG(b_sn),         OCL_LONG(g->m * g->k), OCL_LONG(g->k * g->n),
      OCL_LONG(total),        OCL_BYTES(&g->batch, sizeof(g->batch)),
  };
  return ocl_enqueue_1d(launch, &families[st], "gemm_direct", (size_t)total,
                        args, (int)(sizeof(args) / sizeof(args[0])), status);
}

/* Packs `count` matrices of src (rows x depth with the given element
 * strides) into a new float temp of micro-panels `width` wide. */
static TF_Tensor *pack(const struct ocl_launch *launch, enum storage st,
                       const TF_Tensor *src, int64_t src_off, int64_t count,
                       int64_t rows,
                       int64_t depth, int64_t s_row, int64_t s_depth,
                       int width, TF_Status *status)
{
  int64_t blocks = (rows + width - 1) / width;
  int64_t per_batch = blocks * depth * width;
  int64_t elements = count * per_batch;
  TF_Tensor *dst =
      ocl_tf.AllocateTemp(launch->ctx, TF_FLOAT, &elements, 1, NULL, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return NULL;
  const struct ocl_arg args[] = {
      OCL_TENSOR(src),      OCL_TENSOR(dst),         OCL_LONG(src_off),
      OCL_LONG(rows),
      OCL_LONG(depth),      OCL_LONG(s_row),         OCL_LONG(s_depth),
      OCL_LONG(rows * depth), OCL_LONG(per_batch),   OCL_INT(width),
  };
  size_t global[3] = {(size_t)depth, (size_t)blocks, (size_t)count};
  size_t local[3] = {ocl_elementwise_local_size(launch->device), 1, 1};
  if (!ocl_enqueue(launch, &families[st], "pack", 3, global, local, args,
                   (int)(sizeof(args) / sizeof(args[0])), status)) {
    ocl_tf.DeleteTensor(dst);
    return NULL;
  }
  return dst;
}

static bool run_packed(const struct ocl_launch *launch, enum storage st,
                       const struct gemm *g, const TF_Tensor *x,
                       const TF_Tensor *y, const TF_Tensor *out,
                       TF_Status *status)
{
  const int mr = GEMM_MR, nr = GEMM_NR;
  int64_t kc = GEMM_KC;
  bool ok = false;
  TF_Tensor *ap = NULL, *bp = NULL;

  ap = pack(launch, st, x, g->x_off, g->x_batches, g->m, g->k, g->adj_x ? 1 : g->k,
            g->adj_x ? g->m : 1, mr, status);
  if (ap == NULL)
    goto out;
  bp = pack(launch, st, y, g->y_off, g->y_batches, g->n, g->k, g->adj_y ? g->k : 1,
            g->adj_y ? 1 : g->n, nr, status);
  if (bp == NULL)
    goto out;

  int64_t mblocks = (g->m + mr - 1) / mr, nblocks = (g->n + nr - 1) / nr;
  /* Half output would round at every slice: one slice, as deep as K. */
  if (st == ST_HALF)
    kc = g->k;
  size_t local[3] = {1, GEMM_LOCAL, 1};
  if (local[1] > ocl_device_max_work_group_size(launch->device))
    local[1] = ocl_device_max_work_group_size(launch->device);
  size_t global[3] = {(size_t)nblocks, (size_t)mblocks, (size_t)g->batches};
  for (int64_t k0 = 0; k0 < g->k; k0 += kc) {
    int64_t depth = g->k - k0 < kc ? g->k - k0 : kc;
    const struct ocl_arg args[] = {
        OCL_TENSOR(ap),     OCL_TENSOR(bp),      OCL_TENSOR(out),
        OCL_LONG(g->out_off), OCL_LONG(g->m),     OCL_LONG(g->n),      OCL_LONG(g->k),
        OCL_LONG(k0),       OCL_LONG(depth),     OCL_INT(k0 > 0),
        OCL_LONG(mblocks),  OCL_LONG(nblocks),
        OCL_BYTES(&g->batch, sizeof(g->batch)),
    };
    if (!ocl_enqueue(launch, &families[st], "gemm_8x2", 3, global, local, args,
                     (int)(sizeof(args) / sizeof(args[0])), status))
      goto out;
  }
  ok = true;
out:
  /* Freed now, reused only by work enqueued later on this in-order stream:
   * TensorFlow's stream-ordered allocation contract. */
  if (ap != NULL)
    ocl_tf.DeleteTensor(ap);
  if (bp != NULL)
    ocl_tf.DeleteTensor(bp);
  return ok;
}

/* K == 0 (or an empty operand with a non-empty output): zeros over the
 * output matrices. */
static bool fill_zero(const struct ocl_launch *launch, const struct gemm *g,
                      size_t elem, const TF_Tensor *out, TF_Status *status)
{
  cl_mem mem;
  size_t off;
  size_t bytes = (size_t)(g->batches * g->m * g->n) * elem;
  if (!ocl_resolve(launch->device, ocl_tf.TensorData(out),
                   ocl_tf.TensorByteSize(out), &mem, &off, status))
    return false;
  off += (size_t)g->out_off * elem;
  const cl_uchar zero = 0;
  cl_int err = clEnqueueFillBuffer(launch->queue, mem, &zero, 1, off, bytes, 0,
                                   NULL, NULL);
  if (err != CL_SUCCESS) {
    ocl_set_cl_error(status, err, "clEnqueueFillBuffer");
    return false;
  }
  return true;
}

static bool use_clblast(enum gemm_path path, TF_DataType dtype,
                        const struct ocl_device *dev)
{
  if (path == PATH_OWN)
    return false;
  if (path == PATH_AUTO && ocl_device_is_cpu(dev))
    return false;
  if (dtype == TF_HALF && !ocl_device_has_fp16(dev))
    return false;
  return clblast_available();
}

static bool gemm_run(const struct ocl_launch *launch, TF_DataType dtype,
                     enum gemm_path path, struct gemm *g, const TF_Tensor *x,
                     const TF_Tensor *y, const TF_Tensor *out,
                     TF_Status *status)
{
  enum storage st = dtype == TF_HALF ? ST_HALF : ST_FLOAT;
  if (g->k == 0)
    return fill_zero(launch, g, st == ST_HALF ? 2 : 4, out, status);
  fold_batches(g);
  if (use_clblast(path, dtype, launch->device))
    return run_clblast(launch, g, st == ST_HALF, x, y, out, status);
  double flops = (double)g->m * (double)g->n * (double)g->k;
  if (flops <= GEMM_DIRECT_MAX_FLOPS || ocl_tf.AllocateTemp == NULL)
    return run_direct(launch, st, g, x, y, out, status);
  return run_packed(launch, st, g, x, y, out, status);
}

static bool run_gemm(TF_OpKernelContext *ctx, const struct matmul_kernel *k,
                     struct gemm *g, const TF_Tensor *x, const TF_Tensor *y,
                     const TF_Tensor *out, TF_Status *status)
{
  struct ocl_launch launch;
  if (!ocl_launch_init(&launch, ctx, status))
    return false;
  return gemm_run(&launch, k->dtype, k->path, g, x, y, out, status);
}

bool ocl_gemm(const struct ocl_launch *launch, TF_DataType dtype,
              const struct ocl_gemm_desc *d, const TF_Tensor *a,
              const TF_Tensor *b, const TF_Tensor *c, TF_Status *status)
{
  if (d->batches * d->m * d->n == 0)
    return true;
  struct gemm g;
  memset(&g, 0, sizeof(g));
  g.m = d->m;
  g.n = d->n;
  g.k = d->k;
  g.adj_x = d->trans_a;
  g.adj_y = d->trans_b;
  g.batches = d->batches;
  g.x_batches = d->a_shared ? 1 : d->batches;
  g.y_batches = d->b_shared ? 1 : d->batches;
  g.batch.rank = 1;
  g.batch.dims[0] = d->batches;
  g.batch.x_strides[0] = d->a_shared ? 0 : 1;
  g.batch.y_strides[0] = d->b_shared ? 0 : 1;
  g.x_off = d->a_offset;
  g.y_off = d->b_offset;
  g.out_off = d->c_offset;
  return gemm_run(launch, dtype, PATH_AUTO, &g, a, b, c, status);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

struct matmul_op {
  const char *op;
  enum matmul_kind kind;
  const char *type_attr; /* read at construction */
  const char *adj_x_attr, *adj_y_attr;
  /* Constrained, all to the same type. */
  const char *type_attrs[OCL_MAX_TYPE_ATTRS];
};

static const struct matmul_op matmul_ops[] = {
    {"MatMul", MATMUL, "T", "transpose_a", "transpose_b", {"T"}},
    {"BatchMatMul", BATCH_MATMUL, "T", "adj_x", "adj_y", {"T"}},
    {"BatchMatMulV2", BATCH_MATMUL_V2, "T", "adj_x", "adj_y", {"T"}},
    /* Registered only for Ta == Tb == Tout. */
    {"BatchMatMulV3", BATCH_MATMUL_V2, "Tout", "adj_x", "adj_y",
     {"Ta", "Tb", "Tout"}},
};
#define NUM_MATMUL_OPS ((int)(sizeof(matmul_ops) / sizeof(matmul_ops[0])))

static void *matmul_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct matmul_op *op = &matmul_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct matmul_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->kind = op->kind;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, op->type_attr, &k->dtype,
                                          status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  TF_Bool adj_x = 0, adj_y = 0;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, op->adj_x_attr, &adj_x, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  ocl_tf.OpKernelConstruction_GetAttrBool(ctx, op->adj_y_attr, &adj_y, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->adj_x = adj_x != 0;
  k->adj_y = adj_y != 0;
  const char *path = getenv("TFOCL_GEMM");
  k->path = path == NULL                 ? PATH_AUTO
            : strcmp(path, "own") == 0     ? PATH_OWN
            : strcmp(path, "clblast") == 0 ? PATH_CLBLAST
                                           : PATH_AUTO;
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

_Static_assert(NUM_MATMUL_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per matmul op");
OCL_FAMILY_CREATES(matmul, matmul_create);

static void matmul_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct matmul_kernel *k = kernel;
  TF_Status *status = ocl_tf.NewStatus();
  TF_Tensor *in[2] = {NULL, NULL};
  TF_Tensor *out = NULL;
  int64_t x_dims[OCL_MAX_DIMS], y_dims[OCL_MAX_DIMS], out_dims[OCL_MAX_DIMS];
  int out_rank;
  struct gemm g;

  if (!ocl_get_inputs(ctx, in, 2, status))
    goto done;
  int x_rank = ocl_tensor_dims(in[0], x_dims, status);
  int y_rank = x_rank < 0 ? -1 : ocl_tensor_dims(in[1], y_dims, status);
  if (y_rank < 0)
    goto done;
  if (!matmul_shapes(k, x_dims, x_rank, y_dims, y_rank, &g, out_dims,
                     &out_rank, status))
    goto done;
  out = ocl_tf.AllocateOutput(ctx, 0, k->dtype, out_dims, out_rank, 0, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto done;
  if (g.batches * g.m * g.n == 0)
    goto done;
  run_gemm(ctx, k, &g, in[0], in[1], out, status);
done:
  if (out != NULL)
    ocl_tf.DeleteTensor(out);
  ocl_delete_tensors(in, 2);
  ocl_compute_done(ctx, status);
}

static void matmul_delete(void *kernel) { free(kernel); }

/* ---- Registration ------------------------------------------------------ */

void ocl_register_matmul_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF};

  for (int i = 0; i < NUM_MATMUL_OPS; i++) {
    const struct matmul_op *op = &matmul_ops[i];
    for (size_t d = 0; d < sizeof(types) / sizeof(types[0]); d++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = matmul_creates[i],
          .compute = matmul_compute,
          .destroy = matmul_delete,
          .type_attrs = {op->type_attrs[0], op->type_attrs[1],
                         op->type_attrs[2]},
          .types = {types[d], types[d], types[d]},
      });
  }
}
