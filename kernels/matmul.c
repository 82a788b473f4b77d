/* MatMul, BatchMatMul, BatchMatMulV2, BatchMatMulV3 and _FusedMatMul
 * (float and half), and the GEMM behind them that other families use
 * (gemm.h).
 *
 * Three implementations of a product, chosen per device and size class:
 *   own      matmul.cl in the device's kernel shape: on CPU devices its
 *            packed, register-blocked kernel (close to OpenBLAS on PoCL);
 *            on GPUs its local-memory tiled kernel, also the GPU path
 *            wherever CLBlast is absent, and for half everywhere (it
 *            accumulates in float).
 *   clblast  CLBlast, loaded with dlopen on first use (never linked: the
 *            plugin must load where it is absent), float only: its Hgemm
 *            accumulates in half (4096 products 0.5 x 1 come to 1024 on
 *            Intel's runtime, not 2048), where TensorFlow's half MatMul
 *            accumulates in float. Only on GPUs unless forced: on PoCL it
 *            reaches a fraction of our kernel's speed and spends ~12 s in
 *            its first call.
 *   blas     a host BLAS run in stream order on the buffers of a CPU device
 *            whose driver runs native kernels (gemm_blas.c), float only.
 * Where more than one applies, gemm_tune.c measures them on first use of a
 * size class and remembers the winner per device (TFOCL_GEMM_TUNE=0: no
 * measuring, CLBlast on GPUs where present, our kernel on CPUs).
 * TFOCL_GEMM=own|clblast|blas forces one (a node's _tfocl_gemm attribute
 * forces its kernel, so one process can measure each);
 * TFOCL_GEMM_TILE=128|64|32 forces the tiled kernel's tile (tests reach
 * every tile with it).
 * tfocl bench --filter matmul measures them against OpenBLAS. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <clblast_c.h>

#include "gemm_internal.h"
#include "kernel_families.h"

extern const char ocl_cl_source_matmul[];

enum storage { ST_FLOAT, ST_HALF, ST_COUNT };

/* Program variants: the CPU shape, and the GPU shape with 32-bit or
 * 64-bit indices within a product. */
enum variant { V_CPU, V_GPU32, V_GPU64, V_COUNT };

#define MATMUL_PROGRAM(st, T, opts)                                         \
  {                                                                         \
    {"matmul_cpu_" st, ocl_cl_source_matmul,                                \
     "-DT=" T " -DMATMUL_CPU -DIDX_T=long" opts},                           \
        {"matmul_gpu_" st, ocl_cl_source_matmul,                            \
         "-DT=" T " -DMATMUL_GPU -DIDX_T=int" opts},                        \
        {"matmul_gpu64_" st, ocl_cl_source_matmul,                          \
         "-DT=" T " -DMATMUL_GPU -DIDX_T=long" opts},                       \
  }

OCL_PROGRAM_TABLE
static const struct ocl_program programs[ST_COUNT][V_COUNT] = {
    [ST_FLOAT] = MATMUL_PROGRAM("float", "float", ""),
    [ST_HALF] = MATMUL_PROGRAM("half", "half", " -DT_IS_HALF"),
};

/* The tiled kernel's tiles, largest first. */
enum tile { TILE_128, TILE_64, TILE_32, NUM_TILES };
static const struct {
  int tm, tn, wm, wn;
} tiles[NUM_TILES] = {{128, 128, 8, 8}, {64, 64, 4, 4}, {32, 32, 4, 4}};

/* The GEMM's kernels. They are the module's, not an op instance's: other
 * families' instances (convolutions) run this GEMM too. Named once
 * (pthread_once) and resolved per context at first launch by runtime.c. */
static struct {
  pthread_once_t once;
  bool ok;
  struct ocl_kernel direct[ST_COUNT][V_COUNT];
  struct ocl_kernel direct32[ST_COUNT][V_COUNT];
  struct ocl_kernel direct_rows[ST_COUNT];
  struct ocl_kernel bias_act[ST_COUNT][V_COUNT];
  struct ocl_kernel pack[ST_COUNT];
  struct ocl_kernel pack_depth16[ST_COUNT];
  struct ocl_kernel pack_rows16[ST_COUNT];
  struct ocl_kernel gemm_8x2[ST_COUNT];
  struct ocl_kernel split_sum[ST_COUNT];
  /* [tile][ta * 2 + tb] */
  struct ocl_kernel tiled[ST_COUNT][2][NUM_TILES][4];
} kernels = {.once = PTHREAD_ONCE_INIT};

static void kernels_init(void)
{
  static const char *const trans[4] = {"nn", "nt", "tn", "tt"};
  bool ok = true;
  for (int st = 0; st < ST_COUNT; st++) {
    for (int v = 0; v < V_COUNT; v++) {
      ok &= ocl_kernel_init(&kernels.direct[st][v], &programs[st][v],
                            "gemm_direct");
      ok &= ocl_kernel_init(&kernels.direct32[st][v], &programs[st][v],
                            "gemm_direct32");
      ok &= ocl_kernel_init(&kernels.bias_act[st][v], &programs[st][v],
                            "bias_act");
    }
    ok &= ocl_kernel_init(&kernels.pack[st], &programs[st][V_CPU], "pack");
    ok &= ocl_kernel_init(&kernels.pack_depth16[st], &programs[st][V_CPU],
                          "pack_depth16");
    ok &= ocl_kernel_init(&kernels.pack_rows16[st], &programs[st][V_CPU],
                          "pack_rows16");
    ok &= ocl_kernel_init(&kernels.direct_rows[st], &programs[st][V_CPU],
                          "gemm_direct_rows");
    ok &= ocl_kernel_init(&kernels.gemm_8x2[st], &programs[st][V_CPU],
                          "gemm_8x2");
    ok &= ocl_kernel_init(&kernels.split_sum[st], &programs[st][V_CPU],
                          "split_sum");
    for (int w = 0; w < 2; w++)
      for (int t = 0; t < NUM_TILES; t++)
        for (int x = 0; x < 4; x++)
          ok &= ocl_kernel_initf(&kernels.tiled[st][w][t][x],
                                 &programs[st][w ? V_GPU64 : V_GPU32],
                                 "gemm_t%dx%d_%s", tiles[t].tm, tiles[t].tn,
                                 trans[x]);
  }
  kernels.ok = ok;
}

static bool kernels_ready(struct ocl_op *op)
{
  pthread_once(&kernels.once, kernels_init);
  return kernels.ok ||
         ocl_op_fail(op, TF_INTERNAL, "matmul: a kernel name did not fit");
}

static enum storage storage_of(TF_DataType dtype)
{
  return dtype == TF_HALF ? ST_HALF : ST_FLOAT;
}

static size_t elem_size(const struct gemm *g)
{
  return g->dtype == TF_HALF ? 2 : 4;
}

/* ---- Batches ---------------------------------------------------------------- */

/* Matrices of an operand a (sub)product reaches: its own batch dims, which
 * lie contiguously from its offset on (strides are row-major over the
 * dims where it is not broadcast). */
static int64_t operand_matrices(const struct gemm *g, const int64_t *stride)
{
  int64_t count = 1;
  for (int d = 0; d < g->brank; d++)
    if (stride[d] != 0)
      count *= g->bdims[d];
  return count;
}

/* The batch argument with strides in units of a_unit (b_unit) elements. */
static void batch_args(const struct gemm *g, int64_t a_unit, int64_t b_unit,
                       struct gemm_batch_args *args)
{
  memset(args, 0, sizeof(*args));
  args->rank = g->brank;
  for (int d = 0; d < g->brank; d++) {
    args->dims[d] = g->bdims[d];
    args->a_strides[d] = g->a_bstride[d] * a_unit;
    args->b_strides[d] = g->b_bstride[d] * b_unit;
  }
}

void gemm_batch_args_of(const struct gemm *g, struct gemm_batch_args *args)
{
  batch_args(g, g->m * g->k, g->k * g->n, args);
}

/* x [B, M, K] times one y: a single [B*M, K] product, since the output's
 * rows are contiguous the same way. Saves launches and gives the kernels a
 * taller matrix. */
static void fold_batches(struct gemm *g)
{
  if (g->batches <= 1 || g->ta ||
      operand_matrices(g, g->b_bstride) != 1 ||
      operand_matrices(g, g->a_bstride) != g->batches)
    return;
  g->m *= g->batches;
  g->batches = 1;
  g->brank = 0;
}

/* Every index within one product fits in 32 bits (the kernels' int
 * variant), with room for a tile past the edge. */
static bool fits_int(const struct gemm *g)
{
  const int64_t lim = INT32_MAX - 256;
  return g->m < lim && g->n < lim && g->k < lim && g->m * g->k < lim &&
         g->k * g->n < lim && g->batches * g->m * g->n < lim;
}

/* ---- Epilogue and zeros ------------------------------------------------------- */

static bool has_epilogue(const struct gemm *g)
{
  return g->bias != NULL || g->act != ACT_NONE;
}

/* Bias and activation over the output, for the paths that cannot fuse
 * them. */
static bool run_epilogue(struct ocl_op *op, const struct gemm *g)
{
  if (!has_epilogue(g))
    return true;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  int64_t total = g->batches * g->m * g->n;
  bool wide = !fits_int(g);
  enum variant v = info->cpu_shape ? V_CPU : wide ? V_GPU64 : V_GPU32;
  bool narrow = v == V_GPU32;
  struct ocl_buffer none = {NULL, 0};
  const struct ocl_arg args[] = {
      OCL_TENSOR(g->c),
      g->bias != NULL ? OCL_TENSOR(g->bias) : OCL_BUF(none),
      OCL_LONG(g->c_off),
      narrow ? OCL_INT(g->n) : OCL_LONG(g->n),
      narrow ? OCL_INT(total) : OCL_LONG(total),
      OCL_INT(g->bias != NULL),
      OCL_INT(g->act),
      OCL_FLOAT(g->alpha),
  };
  return ocl_launch_1d(op, &kernels.bias_act[storage_of(g->dtype)][v],
                       (size_t)total, args,
                       (int)(sizeof(args) / sizeof(args[0])));
}

/* K == 0: zeros over the output matrices. TensorFlow's _FusedMatMul too
 * leaves bias and activation out then (it fills zeros and returns). */
static bool fill_zero(struct ocl_op *op, const struct gemm *g)
{
  const cl_uchar zero = 0;
  size_t elem = elem_size(g);
  return ocl_op_fill(op, (TF_Tensor *)g->c, (size_t)g->c_off * elem, &zero, 1,
                     (size_t)(g->batches * g->m * g->n) * elem);
}

/* ---- Our own kernels: direct ------------------------------------------------ */

/* Up to this many multiply-adds per matrix, tiling or packing costs more
 * than it saves. */
#define GEMM_DIRECT_MAX_FLOPS (32.0 * 32.0 * 32.0)
/* Smaller products stay off the host BLAS (gemm_candidates). */
#define GEMM_BLAS_MIN_MNK (256.0 * 256.0 * 256.0)
/* Up to this many multiply-adds per matrix, or up to one work-group of
 * rows (run_packed_from; not a transposed A of many rows that several
 * column blocks read), a float product reads its operands in place
 * where it can (gemm_8x2's in_place): the packing launches cost as much
 * as they save (the MLP's 8 products had 16 pack launches; attention's 256
 * products of 128 x 128 x 32 took 3.3-5.0 ms with their packs, 2.2-2.9
 * without), while a big product's panels keep a K slice of B in L1 for
 * the many groups along M that reuse it, which rows N floats apart (a set
 * conflict at N = 1024) would not. */
#define GEMM_IN_PLACE_MAX_MNK (256.0 * 256.0 * 256.0)

/* matmul.cl's gemm_batch32_t, field for field. */
struct gemm_batch32_args {
  cl_int a_strides[GEMM_BATCH_DIMS];
  cl_int b_strides[GEMM_BATCH_DIMS];
  cl_uint dims[GEMM_BATCH_DIMS];
  cl_uint magic[GEMM_BATCH_DIMS];
  cl_uint shift[GEMM_BATCH_DIMS];
  cl_int rank;
  cl_uint n_magic, n_shift, m_magic, m_shift;
};

/* gemm_direct32: every index of the output and of each operand's matrices
 * (all those its batch reaches) below 2^31. */
static bool fits_direct32(const struct gemm *g)
{
  const int64_t lim = INT32_MAX - 256;
  return fits_int(g) && g->m > 0 && g->n > 0 &&
         operand_matrices(g, g->a_bstride) * g->m * g->k < lim &&
         operand_matrices(g, g->b_bstride) * g->k * g->n < lim;
}

static bool run_direct32(struct ocl_op *op, const struct gemm *g,
                         enum variant v)
{
  struct gemm_batch32_args s;
  memset(&s, 0, sizeof(s));
  s.rank = g->brank;
  for (int d = 0; d < g->brank; d++) {
    struct ocl_fastdiv div = ocl_fastdiv_of((uint32_t)g->bdims[d]);
    s.a_strides[d] = (cl_int)(g->a_bstride[d] * g->m * g->k);
    s.b_strides[d] = (cl_int)(g->b_bstride[d] * g->k * g->n);
    s.dims[d] = (cl_uint)g->bdims[d];
    s.magic[d] = div.magic;
    s.shift[d] = div.shift;
  }
  struct ocl_fastdiv by_n = ocl_fastdiv_of((uint32_t)g->n),
                     by_m = ocl_fastdiv_of((uint32_t)g->m);
  s.n_magic = by_n.magic;
  s.n_shift = by_n.shift;
  s.m_magic = by_m.magic;
  s.m_shift = by_m.shift;
  int64_t a_sm = g->ta ? 1 : g->k, a_sk = g->ta ? g->m : 1;
  int64_t b_sk = g->tb ? 1 : g->n, b_sn = g->tb ? g->k : 1;
  /* The CPU shape's kernel takes a row of C per work-item. */
  int64_t rows = g->batches * g->m;
  int64_t total = v == V_CPU ? rows : rows * g->n;
  const struct ocl_arg args[] = {
      OCL_TENSOR(g->a),   OCL_TENSOR(g->b),   OCL_TENSOR(g->c),
      OCL_LONG(g->a_off), OCL_LONG(g->b_off), OCL_LONG(g->c_off),
      OCL_INT(g->m),      OCL_INT(g->n),      OCL_INT(g->k),
      OCL_INT(a_sm),      OCL_INT(a_sk),      OCL_INT(b_sk),
      OCL_INT(b_sn),      OCL_INT(total),     OCL_BYTES(&s, sizeof(s)),
  };
  const int num_args = (int)(sizeof(args) / sizeof(args[0]));
  enum storage st = storage_of(g->dtype);
  if (!(v == V_CPU
            ? ocl_launch_row_groups(op, &kernels.direct_rows[st], (size_t)rows,
                                    g->n * g->k, args, num_args)
            : ocl_launch_1d(op, &kernels.direct32[st][v], (size_t)total, args,
                            num_args)))
    return false;
  return run_epilogue(op, g);
}

static bool run_direct(struct ocl_op *op, const struct gemm *g)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (fits_direct32(g))
    return run_direct32(op, g, info->cpu_shape ? V_CPU : V_GPU32);
  bool wide = !fits_int(g);
  enum variant v = info->cpu_shape ? V_CPU : wide ? V_GPU64 : V_GPU32;
  bool narrow = v == V_GPU32;
#define IDX(x) (narrow ? OCL_INT(x) : OCL_LONG(x))
  int64_t a_sm = g->ta ? 1 : g->k, a_sk = g->ta ? g->m : 1;
  int64_t b_sk = g->tb ? 1 : g->n, b_sn = g->tb ? g->k : 1;
  int64_t total = g->batches * g->m * g->n;
  struct gemm_batch_args batch;
  gemm_batch_args_of(g, &batch);
  const struct ocl_arg args[] = {
      OCL_TENSOR(g->a), OCL_TENSOR(g->b), OCL_TENSOR(g->c),
      OCL_LONG(g->a_off), OCL_LONG(g->b_off), OCL_LONG(g->c_off),
      IDX(g->m), IDX(g->n), IDX(g->k), IDX(a_sm), IDX(a_sk), IDX(b_sk),
      IDX(b_sn), IDX(total), OCL_BYTES(&batch, sizeof(batch)),
  };
#undef IDX
  if (!ocl_launch_1d(op, &kernels.direct[storage_of(g->dtype)][v],
                     (size_t)total, args,
                     (int)(sizeof(args) / sizeof(args[0]))))
    return false;
  return run_epilogue(op, g);
}

/* ---- Our own kernels: the CPU shape ----------------------------------------- */

/* gemm_8x2 of matmul.cl: 8 x 32 blocks of C, 16 float16 accumulators (half
 * of AVX-512's registers), 2 vector loads of B and 8 broadcasts of A per 16
 * FMAs. Against 8x1, 4x2 and 12x1, 64 work-items per group against 16, 32
 * and 128, and K slices of 128, 256 and all of K, it measured best or tied
 * at 1024^3 on PoCL (interleaved runs on a loaded 2-core host: the
 * differences among the ties stayed within the noise). */
enum { GEMM_MR = 8, GEMM_NR = 32 };
_Static_assert(GEMM_MR == OCL_GEMM_PANEL_ROWS,
               "gemm.h's panels are the packed kernel's A panels");
/* Work-items per group, all along M: they share one B micro-panel. */
enum { GEMM_LOCAL = 64 };
/* K slice per launch: a KC x NR float micro-panel of B (32 KiB) stays in a
 * core's L1/L2 while the group's work-items stream A past it. */
enum { GEMM_KC = 256 };
/* Split K: a product of few blocks and a long K (a convolution's filter
 * gradient: [taps * Cin, Cout] summed over every output pixel) ran as one
 * or two work-groups through hundreds of slice launches. Its slices run
 * side by side instead, enough of them for GEMM_SPLIT_GROUPS work-groups
 * per compute unit, into partial products of at most
 * GEMM_SPLIT_MAX_ELEMENTS floats, then one pass sums them. */
enum { GEMM_SPLIT_GROUPS = 4, GEMM_MAX_SPLITS = 64 };
#define GEMM_SPLIT_MAX_ELEMENTS ((int64_t)1 << 24)

/* The number of K splits for a float product whose launch has `groups`
 * work-groups: 1 where the groups already fill the device. */
static int64_t k_splits(const struct gemm *g, int64_t groups,
                        cl_uint compute_units)
{
  int64_t slices = (g->k + GEMM_KC - 1) / GEMM_KC;
  int64_t want = (int64_t)GEMM_SPLIT_GROUPS * (compute_units ? compute_units : 1);
  /* A short K (a forward convolution's taps * Cin) gains less from a
   * second launch and a partial pass than it pays. */
  if (slices < 4 || groups >= want)
    return 1;
  int64_t splits = (want + groups - 1) / groups;
  int64_t outputs = g->batches * g->m * g->n;
  if (splits > slices)
    splits = slices;
  if (splits > GEMM_MAX_SPLITS)
    splits = GEMM_MAX_SPLITS;
  while (splits > 1 && splits * outputs > GEMM_SPLIT_MAX_ELEMENTS)
    splits /= 2;
  return splits;
}

/* Packs `count` matrices of src (rows x depth with the given element
 * strides) into a new float temp of micro-panels `width` wide. */
static TF_Tensor *pack(struct ocl_op *op, enum storage st,
                       const TF_Tensor *src, int64_t src_off, int64_t count,
                       int64_t rows, int64_t depth, int64_t s_row,
                       int64_t s_depth, int width)
{
  int64_t blocks = (rows + width - 1) / width;
  int64_t per_batch = blocks * depth * width;
  TF_Tensor *dst = ocl_op_temp(op, TF_FLOAT, count * per_batch);
  if (dst == NULL)
    return NULL;
  /* Depth contiguous (A as it is, B transposed): 16 depths of a block per
   * work-item, transposed in registers (pack_depth16). */
  if (s_depth == 1 && width % 8 == 0 && depth >= 16) {
    const struct ocl_arg args[] = {
        OCL_TENSOR(src),        OCL_TENSOR(dst),     OCL_LONG(src_off),
        OCL_LONG(rows),         OCL_LONG(depth),     OCL_LONG(s_row),
        OCL_LONG(rows * depth), OCL_LONG(per_batch), OCL_INT(width),
    };
    size_t global[3] = {(size_t)((depth + 15) / 16), (size_t)blocks,
                        (size_t)count};
    size_t local[3] = {1, 1, 1};
    if (!ocl_launch(op, &kernels.pack_depth16[st], 3, global, local, args,
                    (int)(sizeof(args) / sizeof(args[0]))))
      return NULL;
    return dst;
  }
  /* Rows contiguous (A transposed, B as it is): 16 rows of a depth per
   * work-item (pack_rows16). */
  bool rows16 = s_row == 1 && width >= 8 && (width & (width - 1)) == 0;
  struct ocl_kernel *kernel =
      rows16 ? &kernels.pack_rows16[st] : &kernels.pack[st];
  size_t max = ocl_kernel_max_local(op, kernel);
  if (max == 0)
    return NULL;
  size_t local[3] = {ocl_elementwise_local(op->info), 1, 1};
  while (local[0] > max)
    local[0] /= 2;
  if (rows16) {
    const struct ocl_arg args[] = {
        OCL_TENSOR(src),        OCL_TENSOR(dst),     OCL_LONG(src_off),
        OCL_LONG(rows),         OCL_LONG(depth),     OCL_LONG(s_depth),
        OCL_LONG(rows * depth), OCL_LONG(per_batch), OCL_INT(width),
    };
    size_t global[3] = {(size_t)depth, (size_t)((blocks * width + 15) / 16),
                        (size_t)count};
    if (!ocl_launch(op, kernel, 3, global, local, args,
                    (int)(sizeof(args) / sizeof(args[0]))))
      return NULL;
    return dst;
  }
  const struct ocl_arg args[] = {
      OCL_TENSOR(src),         OCL_TENSOR(dst),       OCL_LONG(src_off),
      OCL_LONG(rows),          OCL_LONG(depth),       OCL_LONG(s_row),
      OCL_LONG(s_depth),       OCL_LONG(rows * depth), OCL_LONG(per_batch),
      OCL_INT(width),
  };
  size_t global[3] = {(size_t)depth, (size_t)blocks, (size_t)count};
  if (!ocl_launch(op, kernel, 3, global, local, args,
                  (int)(sizeof(args) / sizeof(args[0]))))
    return NULL;
  return dst;
}

/* gemm_8x2's in_place arguments: which operands it reads as they are. */
struct in_place {
  int bits; /* 1: A, 2: B */
  int64_t a_sr, a_sk, ldb;
};
/* gemm_8x2's epilogue arguments: none (finish 0), or _FusedMatMul's. */
#define NO_FINISH_ARGS(g) \
  OCL_TENSOR((g)->c), OCL_INT(0), OCL_INT(ACT_NONE), OCL_FLOAT(0.0f)
#define FINISH_ARGS(g, finish) \
  (g)->bias != NULL ? OCL_TENSOR((g)->bias) : OCL_TENSOR((g)->c), \
      OCL_INT(finish), OCL_INT((g)->act), OCL_FLOAT((g)->alpha)
#define IN_PLACE_ARGS(ip, g) \
  OCL_INT((ip)->bits), OCL_LONG((g)->a_off), OCL_LONG((ip)->a_sr), \
      OCL_LONG((ip)->a_sk), OCL_LONG((g)->b_off), OCL_LONG((ip)->ldb)

/* The float product in `splits` parts along K, side by side in one
 * launch, then summed into C. */
static bool run_split(struct ocl_op *op, const struct gemm *g, TF_Tensor *ap,
                      const TF_Tensor *a_pack, TF_Tensor *bp,
                      const TF_Tensor *b_pack, int64_t mblocks, int64_t nblocks,
                      int64_t splits, const size_t *local,
                      const struct gemm_batch_args *batch,
                      const struct in_place *ip)
{
  int64_t outputs = g->batches * g->m * g->n;
  int64_t slice = (g->k + splits - 1) / splits;
  splits = (g->k + slice - 1) / slice; /* no empty split */
  TF_Tensor *parts = ocl_op_temp(op, TF_FLOAT, splits * outputs);
  if (parts == NULL)
    return false;
  size_t global[3] = {(size_t)nblocks, (size_t)mblocks,
                      (size_t)(g->batches * splits)};
  const struct ocl_arg args[] = {
      OCL_TENSOR(a_pack),
      OCL_TENSOR(b_pack),
      OCL_TENSOR(parts),
      OCL_LONG(0),
      OCL_LONG(g->m),
      OCL_LONG(g->n),
      OCL_LONG(g->k),
      OCL_LONG(0),
      OCL_LONG(slice),
      OCL_INT(0),
      OCL_LONG(mblocks),
      OCL_LONG(nblocks),
      OCL_LONG(splits),
      OCL_LONG(outputs),
      OCL_BYTES(batch, sizeof(*batch)),
      IN_PLACE_ARGS(ip, g),
      NO_FINISH_ARGS(g),
  };
  if (!ocl_launch(op, &kernels.gemm_8x2[ST_FLOAT], 3, global, local, args,
                  (int)(sizeof(args) / sizeof(args[0]))))
    return false;
  if (ap != NULL)
    ocl_op_release(op, ap);
  if (bp != NULL)
    ocl_op_release(op, bp);
  const struct ocl_arg sum_args[] = {
      OCL_TENSOR(parts), OCL_TENSOR(g->c), OCL_LONG(g->c_off),
      OCL_LONG(outputs), OCL_LONG(splits),
  };
  if (!ocl_launch_1d(op, &kernels.split_sum[ST_FLOAT], (size_t)outputs,
                     sum_args, (int)(sizeof(sum_args) / sizeof(sum_args[0]))))
    return false;
  ocl_op_release(op, parts);
  return run_epilogue(op, g);
}

/* The packed product; a_panels: A already in panels (ocl_op_gemm_panels),
 * else NULL and A is packed here. */
static bool run_packed_from(struct ocl_op *op, const struct gemm *g,
                            const TF_Tensor *a_panels)
{
  enum storage st = storage_of(g->dtype);
  const int mr = GEMM_MR, nr = GEMM_NR;
  int64_t kc = GEMM_KC;
  TF_Tensor *ap = NULL, *bp = NULL;
  bool small =
      g->dtype == TF_FLOAT &&
      (double)g->m * (double)g->n * (double)g->k <= GEMM_IN_PLACE_MAX_MNK;
  struct in_place ip = {.bits = 0,
                        .a_sr = g->ta ? 1 : g->k,
                        .a_sk = g->ta ? g->m : 1,
                        .ldb = g->n};
  /* Up to 512 rows (one work-group along M, at GEMM_LOCAL work-items a
   * group) B's micro-panels are read once packed or not, and A's few rows stay in the cache: packing adds only
   * traffic and launches (a Dense layer of 768 -> 3072 on 8 rows, its
   * product and both gradients: 3.4-5.0 ms packed, 2.4-2.7 in place). */
  bool one_group = g->dtype == TF_FLOAT && g->m <= (int64_t)mr * GEMM_LOCAL;
  int64_t mblocks = (g->m + mr - 1) / mr, nblocks = (g->n + nr - 1) / nr;
  /* Except a transposed A of many rows read by several column blocks: a
   * work-item's 8 rows at a depth are then 32 bytes of a row m floats
   * long, a new cache line at every step of K and a new page every 4096 /
   * (4 m) steps, for every block. Packed once, each block streams its
   * panel (a recurrent layer's weight gradient, m = 512, k = 3200, n =
   * 128, A transposed: 2.9-3.6 ms in place, 2.0-2.1 packed; n = 32, one
   * block: 1.0-1.1 in place, 1.2-1.3 packed). */
  bool strided_a = g->ta && g->m > 64 && nblocks > 1;
  if ((small || (one_group && !strided_a)) && a_panels == NULL)
    ip.bits |= 1;
  if ((small || one_group) && !g->tb && g->n % nr == 0)
    ip.bits |= 2;

  if (a_panels == NULL && !(ip.bits & 1)) {
    ap = pack(op, st, g->a, g->a_off, operand_matrices(g, g->a_bstride), g->m,
              g->k, g->ta ? 1 : g->k, g->ta ? g->m : 1, mr);
    if (ap == NULL)
      return false;
  }
  if (!(ip.bits & 2)) {
    bp = pack(op, st, g->b, g->b_off, operand_matrices(g, g->b_bstride), g->n,
              g->k, g->tb ? g->k : 1, g->tb ? 1 : g->n, nr);
    if (bp == NULL)
      return false;
  }

  const TF_Tensor *a_pack = a_panels != NULL ? a_panels
                            : (ip.bits & 1)  ? g->a
                                             : ap;
  const TF_Tensor *b_pack = (ip.bits & 2) ? g->b : bp;
  /* Half output would round at every slice: one slice, as deep as K. */
  if (st == ST_HALF)
    kc = g->k;
  size_t local[3] = {1, GEMM_LOCAL, 1};
  size_t max = ocl_kernel_max_local(op, &kernels.gemm_8x2[st]);
  if (max == 0)
    return false;
  while (local[1] > max)
    local[1] /= 2;
  /* Packed matrices are indexed whole: strides in matrices. */
  struct gemm_batch_args batch;
  batch_args(g, 1, 1, &batch);
  int64_t groups = (mblocks + (int64_t)local[1] - 1) / (int64_t)local[1] *
                   nblocks * g->batches;
  int64_t splits = st == ST_FLOAT ? k_splits(g, groups, op->info->compute_units) : 1;
  if (splits > 1)
    return run_split(op, g, ap, a_pack, bp, b_pack, mblocks, nblocks, splits,
                     local, &batch, &ip);
  /* One block of rows reuses no slice of B from the cache: K in one
   * launch where k_splits left it unsplit (a recurrent layer's bias
   * gradient, m = 1, k = 3200, n = 512, on 2 compute units: 13 launches,
   * 370 us; one, 230-350 us). */
  if (mblocks == 1)
    kc = g->k;
  size_t global[3] = {(size_t)nblocks, (size_t)mblocks, (size_t)g->batches};
  /* The last slice of a float product applies the epilogue as it stores
   * (bit 1: apply, bit 0: with bias); half goes through bias_act, which
   * adds the bias to the product already rounded to half. */
  int finish =
      g->dtype == TF_FLOAT && has_epilogue(g) ? 2 | (g->bias != NULL) : 0;
  for (int64_t k0 = 0; k0 < g->k; k0 += kc) {
    const struct ocl_arg args[] = {
        OCL_TENSOR(a_pack),
        OCL_TENSOR(b_pack),
        OCL_TENSOR(g->c),
        OCL_LONG(g->c_off),
        OCL_LONG(g->m),
        OCL_LONG(g->n),
        OCL_LONG(g->k),
        OCL_LONG(k0),
        OCL_LONG(kc),
        OCL_INT(k0 > 0),
        OCL_LONG(mblocks),
        OCL_LONG(nblocks),
        OCL_LONG(1),
        OCL_LONG(0),
        OCL_BYTES(&batch, sizeof(batch)),
        IN_PLACE_ARGS(&ip, g),
        FINISH_ARGS(g, k0 + kc >= g->k ? finish : 0),
    };
    if (!ocl_launch(op, &kernels.gemm_8x2[st], 3, global, local, args,
                    (int)(sizeof(args) / sizeof(args[0]))))
      return false;
  }
  /* The panels go back to TensorFlow now, reused only by work enqueued
   * later on this in-order stream (stream-ordered allocation). */
  if (ap != NULL)
    ocl_op_release(op, ap);
  if (bp != NULL)
    ocl_op_release(op, bp);
  return finish != 0 || run_epilogue(op, g);
}

static bool run_packed(struct ocl_op *op, const struct gemm *g)
{
  return run_packed_from(op, g, NULL);
}

/* ---- Our own kernels: the GPU shape ----------------------------------------- */

/* The tiled kernel reads get_group_id(1) and (2): blocks of at most
 * ocl_max_groups_yz() work-groups there, each with its base (n_tile0,
 * batch0). */
#define MAX_GROUPS_YZ ((int64_t)ocl_max_groups_yz())

/* The largest tile that still gives every compute unit a work-group, and
 * whose kernel the device runs with its work-group size. */
static enum tile pick_tile(const struct gemm *g,
                           const struct ocl_device_info *info)
{
  int forced = ocl_config()->gemm_tile; /* TFOCL_GEMM_TILE */
  for (int t = 0; forced != 0 && t < NUM_TILES; t++)
    if (tiles[t].tm == forced)
      return (enum tile)t;
  for (int t = 0; t < NUM_TILES - 1; t++) {
    int64_t groups = (g->m + tiles[t].tm - 1) / tiles[t].tm *
                     ((g->n + tiles[t].tn - 1) / tiles[t].tn) * g->batches;
    if (g->m >= tiles[t].tm / 2 && g->n >= tiles[t].tn / 2 &&
        groups >= (int64_t)info->compute_units)
      return (enum tile)t;
  }
  return TILE_32;
}

/* Bit 0: rows of a are 16-byte aligned (offset and leading dimension), bit
 * 1 of b, bit 2 of c: the kernel's whole-vector loads and stores. */
static int aligned_bits(const struct gemm *g, const struct ocl_buffer *a,
                        const struct ocl_buffer *b, const struct ocl_buffer *c)
{
  if (g->dtype != TF_FLOAT)
    return 0;
  int64_t lda = g->ta ? g->m : g->k, ldb = g->tb ? g->k : g->n;
  int bits = 0;
  if ((a->offset + (size_t)g->a_off * 4) % 16 == 0 && lda % 4 == 0)
    bits |= 1;
  if ((b->offset + (size_t)g->b_off * 4) % 16 == 0 && ldb % 4 == 0)
    bits |= 2;
  if ((c->offset + (size_t)g->c_off * 4) % 16 == 0 && g->n % 4 == 0)
    bits |= 4;
  return bits;
}

static bool run_tiled(struct ocl_op *op, const struct gemm *g)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  enum storage st = storage_of(g->dtype);
  bool wide = !fits_int(g);
  int trans = (g->ta ? 2 : 0) + (g->tb ? 1 : 0);
  enum tile t = pick_tile(g, info);
  struct ocl_kernel *kernel = NULL;
  size_t threads = 0;
  /* A device (or a kernel, for its registers) below the tile's work-group
   * takes the next smaller tile; below the smallest, the direct kernel. */
  for (; t < NUM_TILES; t++) {
    kernel = &kernels.tiled[st][wide][t][trans];
    size_t max = ocl_kernel_max_local(op, kernel);
    if (max == 0)
      return false;
    threads = (size_t)(tiles[t].tm / tiles[t].wm * (tiles[t].tn / tiles[t].wn));
    if (threads <= max)
      break;
  }
  if (t == NUM_TILES)
    return run_direct(op, g);

  struct ocl_buffer a, b, c, bias = {NULL, 0};
  size_t elem = elem_size(g);
  if (!ocl_op_buffer(op, g->a, 0, ocl_tf.TensorByteSize(g->a), &a) ||
      !ocl_op_buffer(op, g->b, 0, ocl_tf.TensorByteSize(g->b), &b) ||
      !ocl_op_buffer(op, g->c, 0, ocl_tf.TensorByteSize(g->c), &c) ||
      (g->bias != NULL &&
       !ocl_op_buffer(op, g->bias, 0, (size_t)g->n * elem, &bias)))
    return false;
  struct gemm_batch_args batch;
  gemm_batch_args_of(g, &batch);
  int aligned = aligned_bits(g, &a, &b, &c);

  const int tm = tiles[t].tm, tn = tiles[t].tn;
  const size_t ntx = (size_t)(tn / tiles[t].wn), nty = (size_t)(tm / tiles[t].wm);
  int64_t mt = (g->m + tm - 1) / tm, nt = (g->n + tn - 1) / tn;
  size_t local[3] = {ntx, nty, 1};
  for (int64_t b0 = 0; b0 < g->batches; b0 += MAX_GROUPS_YZ) {
    int64_t nb = g->batches - b0 < MAX_GROUPS_YZ ? g->batches - b0
                                                 : MAX_GROUPS_YZ;
    for (int64_t n0 = 0; n0 < nt; n0 += MAX_GROUPS_YZ) {
      int64_t nn = nt - n0 < MAX_GROUPS_YZ ? nt - n0 : MAX_GROUPS_YZ;
      size_t global[3] = {(size_t)mt * ntx, (size_t)nn * nty, (size_t)nb};
#define IDX(x) (wide ? OCL_LONG(x) : OCL_INT(x))
      const struct ocl_arg args[] = {
          OCL_BUF(a),           OCL_BUF(b),         OCL_BUF(c),
          OCL_BUF(bias),        OCL_LONG(g->a_off), OCL_LONG(g->b_off),
          OCL_LONG(g->c_off),   IDX(g->m),          IDX(g->n),
          IDX(g->k),            OCL_INT(n0),        OCL_LONG(b0),
          OCL_BYTES(&batch, sizeof(batch)),
          OCL_INT(aligned),     OCL_INT(g->bias != NULL),
          OCL_INT(g->act),      OCL_FLOAT(g->alpha),
      };
#undef IDX
      if (!ocl_launch(op, kernel, 3, global, local, args,
                      (int)(sizeof(args) / sizeof(args[0]))))
        return false;
    }
  }
  return true;
}

/* Our kernels in the device's shape. */
static bool impl_own(struct ocl_op *op, const struct gemm *g)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  double flops = (double)g->m * (double)g->n * (double)g->k;
  if (flops <= GEMM_DIRECT_MAX_FLOPS)
    return run_direct(op, g);
  if (!info->cpu_shape)
    return run_tiled(op, g);
  /* Packing needs temps: a TensorFlow without TF_AllocateTemp gets the
   * direct kernel. */
  if (ocl_tf.AllocateTemp == NULL)
    return run_direct(op, g);
  return run_packed(op, g);
}

/* ---- CLBlast (dlopen'ed) ---------------------------------------------------- */

static struct {
  pthread_once_t once;
  void *handle;
  __typeof__(&CLBlastSgemm) sgemm;
  __typeof__(&CLBlastSgemmStridedBatched) sgemm_batched;
  /* What the tuner's remembered choices depend on (gemm_tune_pick's
   * `identity`): our kernels' source and build, and CLBlast's library. */
  char identity[GEMM_IDENTITY_MAX];
} clblast = {.once = PTHREAD_ONCE_INIT};

/* "<path>:<bytes>:<mtime>" of the file holding `symbol`, "?" if unknown. */
static void file_identity(const void *symbol, char *out, size_t size)
{
  Dl_info info;
  struct stat st;
  char *path = NULL;
  snprintf(out, size, "?");
  if (symbol == NULL || dladdr(symbol, &info) == 0 || info.dli_fname == NULL)
    return;
  path = realpath(info.dli_fname, NULL);
  if (path != NULL && stat(path, &st) == 0)
    snprintf(out, size, "%s:%lld:%lld", path, (long long)st.st_size,
             (long long)st.st_mtime);
  free(path);
}

static void clblast_load(void)
{
  /* Our side: the matmul kernels' source (FNV-1a) and the plugin's file,
   * which a rebuild or reinstall changes. */
  uint64_t h = 1469598103934665603ull;
  for (const char *c = ocl_cl_source_matmul; *c; c++)
    h = (h ^ (unsigned char)*c) * 1099511628211ull;
  char plugin[128], library[128] = "none";
  file_identity((const void *)clblast_load, plugin, sizeof(plugin));

  void *lib = dlopen("libclblast.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib != NULL) {
    clblast.sgemm = (__typeof__(clblast.sgemm))dlsym(lib, "CLBlastSgemm");
    clblast.sgemm_batched = (__typeof__(clblast.sgemm_batched))dlsym(
        lib, "CLBlastSgemmStridedBatched");
    if (clblast.sgemm == NULL || clblast.sgemm_batched == NULL) {
      dlclose(lib); /* handle stays NULL: not available */
    } else {
      clblast.handle = lib;
      file_identity((const void *)clblast.sgemm, library, sizeof(library));
    }
  }
  snprintf(clblast.identity, sizeof(clblast.identity),
           "matmul.cl:%016llx plugin:%s clblast:%s", (unsigned long long)h,
           plugin, library);
}

/* CLBlast is present and can run g here: float only (see the top). */
static bool clblast_usable(struct ocl_op *op, const struct gemm *g)
{
  if (g->dtype != TF_FLOAT || ocl_op_info(op) == NULL)
    return false;
  pthread_once(&clblast.once, clblast_load);
  return clblast.handle != NULL;
}

const char *gemm_identity(void)
{
  pthread_once(&clblast.once, clblast_load);
  return clblast.identity;
}

/* `count` products of one stride pattern (a_stride, b_stride in elements,
 * 0 for a shared operand); offsets in elements. */
static bool clblast_gemm(struct ocl_op *op, const struct gemm *g, cl_mem a,
                         size_t a_off, size_t a_stride, cl_mem b,
                         size_t b_off, size_t b_stride, cl_mem c, size_t c_off,
                         size_t count)
{
  CLBlastTranspose ta = g->ta ? CLBlastTransposeYes : CLBlastTransposeNo;
  CLBlastTranspose tb = g->tb ? CLBlastTransposeYes : CLBlastTransposeNo;
  size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
  size_t lda = g->ta ? m : k, ldb = g->tb ? k : n;
  size_t c_stride = m * n;
  CLBlastStatusCode err;
  cl_command_queue queue = ocl_op_library_queue(
      op, count == 1 ? "CLBlastSgemm" : "CLBlastSgemmStridedBatched");
  cl_event event = NULL, *eventp = ocl_op_profiling() ? &event : NULL;

  if (queue == NULL)
    return false;

  if (count == 1)
    err = clblast.sgemm(CLBlastLayoutRowMajor, ta, tb, m, n, k, 1.0f, a, a_off,
                        lda, b, b_off, ldb, 0.0f, c, c_off, n, &queue, eventp);
  else
    err = clblast.sgemm_batched(CLBlastLayoutRowMajor, ta, tb, m, n, k, 1.0f,
                                a, a_off, lda, a_stride, b, b_off, ldb,
                                b_stride, 0.0f, c, c_off, n, c_stride, count,
                                &queue, eventp);
  if (event != NULL)
    ocl_op_record(op, event, "clblast_sgemm");
  if (err != CLBlastSuccess)
    return ocl_op_fail(op, TF_INTERNAL,
                       "CLBlast Sgemm%s failed with status %d (m=%zu, "
                       "n=%zu, k=%zu, batch=%zu)",
                       count > 1 ? "StridedBatched" : "", (int)err, m, n, k,
                       count);
  return true;
}

/* One strided-batched call per index of the batch dims but the last (all
 * of them when the batch collapses to one dim: equal batches, or one
 * operand broadcast over all). */
static bool impl_clblast(struct ocl_op *op, const struct gemm *g)
{
  struct ocl_buffer buf[3];
  const TF_Tensor *t[3] = {g->a, g->b, g->c};
  size_t elem = elem_size(g);
  for (int i = 0; i < 3; i++)
    if (!ocl_op_buffer(op, t[i], 0, ocl_tf.TensorByteSize(t[i]), &buf[i]))
      return false;
  size_t a_off = buf[0].offset / elem + (size_t)g->a_off;
  size_t b_off = buf[1].offset / elem + (size_t)g->b_off;
  size_t c_off = buf[2].offset / elem + (size_t)g->c_off;
  size_t as = (size_t)(g->m * g->k), bs = (size_t)(g->k * g->n);
  size_t cs = (size_t)(g->m * g->n);
  if (g->brank == 0)
    return clblast_gemm(op, g, buf[0].mem, a_off, 0, buf[1].mem, b_off, 0,
                        buf[2].mem, c_off, 1) &&
           run_epilogue(op, g);
  int last = g->brank - 1;
  int64_t inner = g->bdims[last], outer = g->batches / inner;
  for (int64_t o = 0; o < outer; o++) {
    int64_t rem = o, ai = 0, bi = 0;
    for (int d = last - 1; d >= 0; d--) {
      int64_t c = rem % g->bdims[d];
      rem /= g->bdims[d];
      ai += c * g->a_bstride[d];
      bi += c * g->b_bstride[d];
    }
    if (!clblast_gemm(op, g, buf[0].mem, a_off + (size_t)ai * as,
                      (size_t)g->a_bstride[last] * as, buf[1].mem,
                      b_off + (size_t)bi * bs, (size_t)g->b_bstride[last] * bs,
                      buf[2].mem, c_off + (size_t)(o * inner) * cs,
                      (size_t)inner))
      return false;
  }
  return run_epilogue(op, g);
}

/* ---- A host BLAS (gemm_blas.c) ------------------------------------------------ */

static bool impl_blas(struct ocl_op *op, const struct gemm *g)
{
  return gemm_blas_run(op, g) && run_epilogue(op, g);
}

/* ---- Choosing ------------------------------------------------------------------ */

static const gemm_impl_fn impls[GEMM_NUM_IMPLS] = {
    [GEMM_IMPL_OWN] = impl_own,
    [GEMM_IMPL_CLBLAST] = impl_clblast,
    [GEMM_IMPL_BLAS] = impl_blas,
};

/* The implementations the tuner chooses among for g on op's device, and
 * the one it falls back to. */
static unsigned gemm_candidates(struct ocl_op *op,
                                const struct ocl_device_info *info,
                                const struct gemm *g, enum gemm_impl *fallback)
{
  unsigned candidates = GEMM_IMPL_BIT(GEMM_IMPL_OWN);
  *fallback = GEMM_IMPL_OWN;
  /* CLBlast on CPU devices only when forced (see the top of this file). */
  if (!info->is_cpu && clblast_usable(op, g)) {
    candidates |= GEMM_IMPL_BIT(GEMM_IMPL_CLBLAST);
    *fallback = GEMM_IMPL_CLBLAST;
  }
  /* On CPU devices the host BLAS computes in place on the buffers, in
   * stream order (gemm_blas.c), on products big enough that waking its
   * threads is paid back: in a train step, after the device's own kernels,
   * a [64,1600]x[1600,10] product took 1.2 ms there against 0.1 ms in
   * ours, though the tuner, calling it back to back, timed it faster. */
  double mnk = (double)g->m * (double)g->n * (double)g->k;
  if (info->is_cpu && mnk >= GEMM_BLAS_MIN_MNK && gemm_blas_usable(op, g))
    candidates |= GEMM_IMPL_BIT(GEMM_IMPL_BLAS);
  return candidates;
}

static const char *host_libs_of(unsigned candidates)
{
  return (candidates & GEMM_IMPL_BIT(GEMM_IMPL_BLAS)) ? gemm_blas_identity()
                                                      : "-";
}

/* One product whose batch fits the kernels' argument. */
static bool gemm_run_one(struct ocl_op *op, const struct gemm *g,
                         enum ocl_gemm_choice path)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  /* Forced, where it can run g. */
  if (path == OCL_GEMM_CLBLAST && clblast_usable(op, g))
    return impl_clblast(op, g);
  if (path == OCL_GEMM_BLAS && gemm_blas_usable(op, g))
    return impl_blas(op, g);
  double flops = (double)g->m * (double)g->n * (double)g->k;
  if (path != OCL_GEMM_AUTO || flops <= GEMM_DIRECT_MAX_FLOPS)
    return impl_own(op, g);

  enum gemm_impl fallback;
  unsigned candidates = gemm_candidates(op, info, g, &fallback);
  if (candidates == GEMM_IMPL_BIT(GEMM_IMPL_OWN))
    return impl_own(op, g);
  enum gemm_impl pick =
      gemm_tune_pick(op, g, candidates, fallback, gemm_identity(),
                     host_libs_of(candidates), impls);
  return ocl_op_ok(op) && impls[pick](op, g);
}

/* g with its batch dims [0, split) fixed at outer index o. */
static void sub_product(const struct gemm *g, int split, int64_t o,
                        struct gemm *sub)
{
  int64_t ai = 0, bi = 0, inner = 1;
  for (int d = split; d < g->brank; d++)
    inner *= g->bdims[d];
  int64_t rem = o;
  for (int d = split - 1; d >= 0; d--) {
    int64_t c = rem % g->bdims[d];
    rem /= g->bdims[d];
    ai += c * g->a_bstride[d];
    bi += c * g->b_bstride[d];
  }
  *sub = *g;
  sub->a_off += ai * g->m * g->k;
  sub->b_off += bi * g->k * g->n;
  sub->c_off += o * inner * g->m * g->n;
  sub->batches = inner;
  sub->brank = g->brank - split;
  for (int d = 0; d < sub->brank; d++) {
    sub->bdims[d] = g->bdims[split + d];
    sub->a_bstride[d] = g->a_bstride[split + d];
    sub->b_bstride[d] = g->b_bstride[split + d];
  }
}

static bool gemm_run(struct ocl_op *op, struct gemm *g,
                     enum ocl_gemm_choice path)
{
  if (g->batches * g->m * g->n == 0)
    return true;
  if (!kernels_ready(op))
    return false;
  if (g->k == 0)
    return fill_zero(op, g);
  fold_batches(g);
  if (g->brank <= GEMM_BATCH_DIMS)
    return gemm_run_one(op, g, path);
  /* More collapsed batch dims than the kernels take (alternating
   * broadcasts): a product per index of the leading ones. */
  int split = g->brank - GEMM_BATCH_DIMS;
  int64_t outer = 1;
  for (int d = 0; d < split; d++)
    outer *= g->bdims[d];
  struct gemm sub;
  bool ok = true;
  for (int64_t o = 0; o < outer && ok; o++) {
    sub_product(g, split, o, &sub);
    ok = gemm_run_one(op, &sub, path);
  }
  return ok;
}

/* g for another family's product `d`. */
static void gemm_of_desc(TF_DataType dtype, const struct ocl_gemm_desc *d,
                         const TF_Tensor *a, const TF_Tensor *b,
                         const TF_Tensor *c, struct gemm *g)
{
  memset(g, 0, offsetof(struct gemm, bdims));
  g->dtype = dtype;
  g->m = d->m;
  g->n = d->n;
  g->k = d->k;
  g->ta = d->trans_a;
  g->tb = d->trans_b;
  g->a = a;
  g->b = b;
  g->c = c;
  g->a_off = d->a_offset;
  g->b_off = d->b_offset;
  g->c_off = d->c_offset;
  g->batches = d->batches;
  g->brank = d->batches > 1 ? 1 : 0;
  g->bdims[0] = d->batches;
  g->a_bstride[0] = d->a_shared ? 0 : 1;
  g->b_bstride[0] = d->b_shared ? 0 : 1;
  g->bias = NULL;
  g->act = ACT_NONE;
}

bool ocl_op_gemm(struct ocl_op *op, TF_DataType dtype,
                 const struct ocl_gemm_desc *d, const TF_Tensor *a,
                 const TF_Tensor *b, const TF_Tensor *c)
{
  if (d->batches * d->m * d->n == 0)
    return true;
  struct gemm g;
  gemm_of_desc(dtype, d, a, b, c, &g);
  return gemm_run(op, &g, ocl_config()->gemm);
}

/* Whether gemm_run_one would take run_packed for g (g as ocl_op_gemm makes
 * it, one batch, A not transposed). */
bool ocl_gemm_takes_panels(struct ocl_op *op, TF_DataType dtype,
                           const struct ocl_gemm_desc *d)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL || !info->cpu_shape || ocl_tf.AllocateTemp == NULL ||
      d->batches != 1 || d->m * d->n * d->k == 0 ||
      (double)d->m * (double)d->n * (double)d->k <= GEMM_DIRECT_MAX_FLOPS)
    return false;
  enum ocl_gemm_choice path = ocl_config()->gemm;
  if (path != OCL_GEMM_AUTO && path != OCL_GEMM_OWN)
    return false;
  struct gemm g;
  gemm_of_desc(dtype, d, NULL, NULL, NULL, &g);
  /* Where the tuner could pick CLBlast instead. The host BLAS, which the
   * tuner also weighs on CPU devices, needs a plain col: with it the
   * ResNet step of tests/bench/step_profile.py took 390 ms against 165
   * with panels and our kernel (PoCL 3.1, OpenBLAS 0.3.21; the plain
   * im2col alone 97 ms), so convolutions keep the panels. */
  if (path == OCL_GEMM_AUTO && !info->is_cpu && clblast_usable(op, &g))
    return false;
  return kernels_ready(op);
}

int64_t ocl_gemm_panel_elements(int64_t m, int64_t k)
{
  return (m + GEMM_MR - 1) / GEMM_MR * k * GEMM_MR;
}

bool ocl_op_gemm_panels(struct ocl_op *op, TF_DataType dtype,
                        const struct ocl_gemm_desc *d,
                        const TF_Tensor *a_panels, const TF_Tensor *b,
                        const TF_Tensor *c)
{
  struct gemm g;
  gemm_of_desc(dtype, d, NULL, b, c, &g);
  return run_packed_from(op, &g, a_panels);
}

/* ---- Shapes ------------------------------------------------------------------- */

enum matmul_kind { MATMUL, BATCH_MATMUL, BATCH_MATMUL_V2, FUSED_MATMUL };

struct matmul_kernel {
  enum matmul_kind kind;
  TF_DataType dtype;
  bool adj_x, adj_y;
  enum ocl_gemm_choice path;
  /* _FusedMatMul */
  enum gemm_activation act;
  float alpha;
};

/* A tensor's full shape (any rank TensorFlow allows). */
static int full_dims(const TF_Tensor *t, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  for (int i = 0; i < rank && i < OCL_MAX_RANK; i++)
    dims[i] = ocl_tf.Dim(t, i);
  return rank < OCL_MAX_RANK ? rank : OCL_MAX_RANK;
}

/* Validates x and y as TensorFlow's BatchMatMulOp / BatchMatMulV2Op,
 * MatMulOp and FusedMatMulOp do, with their messages, and fills `g` (but
 * its tensors) and the output shape. */
static bool matmul_shapes(struct ocl_op *op, const struct matmul_kernel *k,
                          const int64_t *x, int x_rank, const int64_t *y,
                          int y_rank, struct gemm *g, int64_t *out_dims,
                          int *out_rank)
{
  char xs[160], ys[160];
  /* Fails op; the shapes are formatted for the message only then. */
#define FAIL_SHAPES(...)                          \
  (ocl_shape_format(x, x_rank, xs, sizeof(xs)),   \
   ocl_shape_format(y, y_rank, ys, sizeof(ys)),   \
   ocl_op_fail(op, TF_INVALID_ARGUMENT, __VA_ARGS__))

  if (k->kind == FUSED_MATMUL) {
    if (x_rank != y_rank)
      return FAIL_SHAPES("In[0] and In[1] has different ndims: %s vs. %s", xs,
                         ys);
    if (x_rank != 2)
      return FAIL_SHAPES("In[0] is not a matrix. Instead it has shape %s", xs);
    if (y_rank != 2)
      return FAIL_SHAPES("In[1] is not a matrix. Instead it has shape %s", ys);
  } else if (k->kind == MATMUL || k->kind == BATCH_MATMUL) {
    if (x_rank != y_rank)
      return FAIL_SHAPES("In[0] and In[1] has different ndims: %s vs. %s", xs,
                         ys);
    if (k->kind == MATMUL && x_rank != 2)
      return FAIL_SHAPES("In[0] and In[1] ndims must be == 2: %d", x_rank);
    if (x_rank < 2)
      return FAIL_SHAPES("In[0] and In[1] ndims must be >= 2: %d", x_rank);
    for (int i = 0; i < x_rank - 2; i++)
      if (x[i] != y[i])
        return FAIL_SHAPES("In[0].dim(%d) and In[1].dim(%d) must be the "
                           "same: %s vs %s",
                           i, i, xs, ys);
  } else {
    if (x_rank < 2)
      return FAIL_SHAPES("In[0] ndims must be >= 2: %d", x_rank);
    if (y_rank < 2)
      return FAIL_SHAPES("In[1] ndims must be >= 2: %d", y_rank);
  }

  struct ocl_bcast bcast, *b = &bcast;
  if (!ocl_bcast_init(b, x, x_rank - 2, y, y_rank - 2, op->status)) {
    ocl_set_ok(op->status);
    return FAIL_SHAPES("In[0] and In[1] must have compatible batch "
                       "dimensions: %s vs. %s",
                       xs, ys);
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
  if (d1 != d2)
    return FAIL_SHAPES("Matrix size-incompatible: In[0]: %s, In[1]: %s", xs,
                       ys);
#undef FAIL_SHAPES

  g->dtype = k->dtype;
  g->m = d0;
  g->k = d1;
  g->n = d3;
  g->ta = k->adj_x;
  g->tb = k->adj_y;
  g->batches = b->out_elements;
  /* A batch of one matrix (or none) needs no batch dims. */
  g->brank = b->out_elements > 1 ? b->rank : 0;
  for (int d = 0; d < g->brank; d++) {
    g->bdims[d] = b->dims[d];
    g->a_bstride[d] = b->x_strides[d];
    g->b_bstride[d] = b->y_strides[d];
  }
  memcpy(out_dims, b->out_dims, sizeof(int64_t) * (size_t)b->out_rank);
  out_dims[b->out_rank] = d0;
  out_dims[b->out_rank + 1] = d3;
  *out_rank = b->out_rank + 2;
  return true;
}

/* ---- Kernel callbacks ---------------------------------------------------------- */

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
    {"_FusedMatMul", FUSED_MATMUL, "T", "transpose_a", "transpose_b", {"T"}},
};
#define NUM_MATMUL_OPS ((int)(sizeof(matmul_ops) / sizeof(matmul_ops[0])))

/* The activations _FusedMatMul takes after BiasAdd: TensorFlow's CPU
 * patterns (Relu, Relu6, Elu, LeakyRelu) and GPU ones (Tanh, Sigmoid,
 * GeluApproximate, GeluExact), in enum gemm_activation's order
 * (ocl_fused_activation_attr). */
static const char *const fused_activations[] = {
    "Relu", "Relu6", "Elu", "LeakyRelu",
    "Tanh", "Sigmoid", "GeluApproximate", "GeluExact",
};
#define NUM_FUSED_ACTIVATIONS \
  ((int)(sizeof(fused_activations) / sizeof(fused_activations[0])))

/* fused_ops, num_args and leakyrelu_alpha as TensorFlow's
 * InitializeFusedComputation reads them, with its messages. */
static bool fused_attrs(TF_OpKernelConstruction *ctx, struct matmul_kernel *k,
                        TF_Status *status)
{
  int act = ocl_fused_activation_attr(ctx, "Fused MatMul", fused_activations,
                                      NUM_FUSED_ACTIVATIONS, status);
  if (act < 0)
    return false;
  k->act = (enum gemm_activation)act;
  int64_t num_args = 0;
  ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "num_args", &num_args,
                                           status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return false;
  if (num_args != 1) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Fused MatMul with BiasAdd must have one extra argument: "
                   "bias.");
    return false;
  }
  k->alpha = 0.2f;
  if (k->act == ACT_LEAKY_RELU) {
    ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "leakyrelu_alpha",
                                             &k->alpha, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      return false;
  }
  return true;
}

/* TFOCL_GEMM, or this node's private attribute _tfocl_gemm ("auto", "own",
 * "clblast" or "blas"; "_" attributes need no place in the op's
 * definition, as TensorFlow's own _class): one kernel forced onto a path,
 * so that `tfocl bench` measures every path in one process. */
static enum ocl_gemm_choice forced_path(TF_OpKernelConstruction *ctx,
                                        TF_Status *status)
{
  static const char *const names[] = {
      [OCL_GEMM_AUTO] = "auto", [OCL_GEMM_OWN] = "own",
      [OCL_GEMM_CLBLAST] = "clblast", [OCL_GEMM_BLAS] = "blas"};
  char attr[8] = "";
  if (ocl_tf.OpKernelConstruction_GetAttrString != NULL) {
    ocl_tf.OpKernelConstruction_GetAttrString(ctx, "_tfocl_gemm", attr,
                                              sizeof(attr) - 1, status);
    ocl_set_ok(status); /* absent: the setting's */
  }
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(attr, names[i]) == 0)
      return (enum ocl_gemm_choice)i;
  return ocl_config()->gemm;
}

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
  if (op->kind == FUSED_MATMUL && !fused_attrs(ctx, k, status))
    goto fail;
  k->path = forced_path(ctx, status);
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

_Static_assert(NUM_MATMUL_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per matmul op");
OCL_FAMILY_CREATES(matmul, matmul_create);

/* _FusedMatMul's bias: 1-D (TensorFlow's InitBiasAddArgs) with one value
 * per output column (TensorFlow's CPU kernel assumes it; BiasAdd's check
 * and message). */
static bool check_bias(struct ocl_op *op, const TF_Tensor *bias,
                       const int64_t *out_dims)
{
  int64_t dims[OCL_MAX_RANK];
  int rank = full_dims(bias, dims);
  char bs[160], os[64];
  if (rank != 1) {
    ocl_shape_format(dims, rank, bs, sizeof(bs));
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "bias must be 1-dimensional%s", bs);
  }
  if (dims[0] != out_dims[1]) {
    ocl_shape_format(dims, rank, bs, sizeof(bs));
    ocl_shape_format(out_dims, 2, os, sizeof(os));
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Must provide as many biases as the last dimension of "
                       "the input tensor: %s vs. %s",
                       bs, os);
  }
  return true;
}

static void matmul_compute(void *kernel, TF_OpKernelContext *ctx)
{
  const struct matmul_kernel *k = kernel;
  struct ocl_op op;
  ocl_op_begin(&op, ctx);
  /* Shapes of up to 254 dims. */
  struct {
    struct gemm g;
    int64_t x[OCL_MAX_RANK], y[OCL_MAX_RANK], out[OCL_MAX_RANK];
  } shapes, *s = &shapes;
  memset(&s->g, 0, offsetof(struct gemm, bdims));
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *y = x != NULL ? ocl_op_input(&op, 1) : NULL;
  if (y == NULL)
    goto done;
  int x_rank = full_dims(x, s->x), y_rank = full_dims(y, s->y), out_rank = 0;
  struct gemm *g = &s->g;
  if (!matmul_shapes(&op, k, s->x, x_rank, s->y, y_rank, g, s->out,
                     &out_rank))
    goto done;
  TF_Tensor *out = ocl_op_output(&op, 0, k->dtype, s->out, out_rank);
  if (out == NULL || g->batches * g->m * g->n == 0)
    goto done;
  g->a = x;
  g->b = y;
  g->c = out;
  g->act = ACT_NONE;
  if (k->kind == FUSED_MATMUL && g->k > 0) {
    TF_Tensor *bias = ocl_op_input(&op, 2);
    if (bias == NULL || !check_bias(&op, bias, s->out))
      goto done;
    g->bias = bias;
    g->act = k->act;
    g->alpha = k->alpha;
  }
  gemm_run(&op, g, k->path);
done:
  ocl_op_end(&op);
}

static void matmul_delete(void *kernel) { free(kernel); }

/* ---- Registration ------------------------------------------------------------ */

void ocl_register_matmul_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF};

  gemm_blas_park_threads_by_default();
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
