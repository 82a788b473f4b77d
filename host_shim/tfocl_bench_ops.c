/* tfocl bench's op cases: MatMul against OpenBLAS, Conv2D against the GEMM
 * it runs, depthwise, memory-bound kernels against host loops and
 * device-to-device copies, pooling and batch normalisation, sparse ops,
 * transposes and concat. See tfocl_bench.c for the timing rules. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfocl_bench_internal.h"

/* ---- MatMul: own and CLBlast paths vs OpenBLAS -------------------------- */

static double max_rel_error(const float *got, const float *want_, size_t count)
{
  double scale = 0, err = 0;
  for (size_t i = 0; i < count; i++)
    scale = fmax(scale, fabs(want_[i]));
  for (size_t i = 0; i < count; i++)
    err = fmax(err, fabs((double)got[i] - want_[i]));
  return scale > 0 ? err / scale : err;
}

/* One GEMM case: [batches,] m x n (depth k), `stream` products per
 * repetition (back to back, then one synchronize; 1: each synchronized),
 * each path against OpenBLAS: auto
 * (what the plugin picks, gemm_tune.c), then each forced through the
 * node's _tfocl_gemm attribute, as TFOCL_GEMM forces every product
 * (blas: the host BLAS as a native kernel, CPU devices only; elsewhere the
 * plugin runs its own kernel under that name). */
#define GEMM_PATHS 4
static void gemm_case(struct bench *b, int batches, int64_t m, int64_t n,
                      int64_t k, int stream, int reps)
{
  static const char *const paths[GEMM_PATHS] = {"auto", "own", "blas",
                                                "clblast"};
  char names[GEMM_PATHS][64];
  bool any = false;
  for (int p = 0; p < GEMM_PATHS; p++) {
    if (batches > 1)
      snprintf(names[p], sizeof(names[p]), "batch_matmul/%dx%lld/%s", batches,
               (long long)n, paths[p]);
    else if (m == n && n == k)
      snprintf(names[p], sizeof(names[p]), "matmul/%lld/%s", (long long)n,
               paths[p]);
    else
      snprintf(names[p], sizeof(names[p]), "matmul/%lldx%lldx%lld/%s",
               (long long)m, (long long)n, (long long)k, paths[p]);
    any |= bench_want(b, names[p]);
  }
  if (!any)
    return;
  int rank = batches > 1 ? 3 : 2;
  int64_t a_dims[3] = {batches, m, k}, b_dims[3] = {batches, k, n};
  int skip = batches > 1 ? 0 : 1;
  TF_Tensor *ha = bench_host_random(a_dims + skip, rank, 1),
            *hb = bench_host_random(b_dims + skip, rank, 2);
  size_t count = (size_t)batches * (size_t)(m * n);
  float *want_c = malloc(sizeof(float) * count);
  double flop = 2.0 * batches * (double)m * (double)n * (double)k * stream;
  struct host_side blas = {.kind = HOST_SGEMM,
                           .z = want_c,
                           .x = TF_TensorData(ha),
                           .y = TF_TensorData(hb),
                           .batches = batches,
                           .m = (int)m,
                           .n = (int)n,
                           .k = (int)k,
                           .repeat = stream};
  if (b->blas_ok) {
    blas.repeat = 1;
    bench_host_rep(b, &blas, &(double){0}); /* the expected product */
    blas.repeat = stream;
  }
  TF_Tensor **outs = calloc((size_t)stream, sizeof(*outs));
  TF_Tensor *da = bench_to_device(b, ha), *db = bench_to_device(b, hb);
  void *clblast = dlopen("libclblast.so.1", RTLD_NOW | RTLD_LOCAL);
  if (clblast != NULL)
    dlclose(clblast);

  for (int p = 0; p < GEMM_PATHS && da != NULL && db != NULL; p++) {
    bool is_clblast = strcmp(paths[p], "clblast") == 0;
    if (!bench_want(b, names[p]))
      continue;
    struct op_stream_side st = {{NULL, {da, db}, 2}, stream, outs};
    struct op_side *o = &st.o;
    char note[160] = "";
    struct side ours =
        stream > 1 ? bench_op_stream_side(&st, flop) : bench_op_side(o, flop);
    if (is_clblast && clblast == NULL) {
      ours.available = false;
      ours.why = "skipped: libclblast.so.1 not found";
    } else if (is_clblast &&
               (b->quick || n > 1024 || batches > 1 || m != n || k != n) &&
               !b->clblast_all) {
      /* On PoCL CLBlast takes ~12 s to tune at its first call and minutes
       * per call on large sizes: opt in. */
      ours.available = false;
      ours.why = "skipped: --clblast-all to run";
    } else {
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT),
                                         TFOCL_ATTR_S("_tfocl_gemm", paths[p])};
      const TF_DataType types[] = {TF_FLOAT, TF_FLOAT};
      o->op = bench_make_op(b, batches > 1 ? "BatchMatMulV2" : "MatMul", attrs,
                            2, types, 2);
      ours.available = o->op != NULL;
      /* The check run: the product against OpenBLAS's. */
      TF_Tensor *out = NULL;
      if (o->op != NULL) {
        double t0 = bench_now();
        tfocl_op_compute(o->op, o->in, 2, &out, 1, b->st);
        TF_Tensor *h = TF_GetCode(b->st) == TF_OK
                           ? tfocl_tensor_to_host(out, b->st)
                           : NULL;
        double first = bench_now() - t0;
        if (h != NULL && b->blas_ok)
          snprintf(note, sizeof(note),
                   "first call %.3f s; max rel err vs "
                   "OpenBLAS %.1e",
                   first, max_rel_error(TF_TensorData(h), want_c, count));
        else if (h != NULL)
          snprintf(note, sizeof(note), "first call %.3f s", first);
        if (stream > 1)
          snprintf(note + strlen(note), sizeof(note) - strlen(note),
                   "; %d products back to back, one synchronize", stream);
        TF_DeleteTensor(h);
        TF_DeleteTensor(out);
        if (!bench_ok(b, names[p])) {
          ours.available = false;
          ours.why = "FAILED (see stderr)";
          b->failures++;
        }
      }
    }
    struct side ref = bench_blas_side(b, &blas, flop);
    bench_measure(b, names[p], GFLOPS, true, &ours, &ref, 1, reps, note);
    tfocl_op_destroy(o->op);
  }
  TF_DeleteTensor(da);
  TF_DeleteTensor(db);
  TF_DeleteTensor(ha);
  TF_DeleteTensor(hb);
  free(want_c);
  free(outs);
}

void bench_matmul(struct bench *b)
{
  static const int64_t sizes[] = {256, 512, 1024, 2048};
  int num = b->quick ? 1 : 4;
  for (int i = 0; i < num; i++) {
    int64_t n = sizes[i];
    gemm_case(b, 1, n, n, n, 1,
              bench_reps_or(b,
                            n <= 256    ? 30
                            : n <= 512  ? 15
                            : n <= 1024 ? 7
                                        : 3,
                            3));
  }
  if (b->quick) {
    gemm_case(b, 4, 128, 128, 128, 1, bench_reps_or(b, 0, 3));
    return;
  }
  gemm_case(b, 16, 256, 256, 256, 1, bench_reps_or(b, 10, 3));
  /* The products of small batches, back to back as TensorFlow enqueues
   * them: a 64-row batch through a Dense layer of 256 units (the
   * performance issue's MLP) and an LSTM step of 128 units (4 gates). */
  gemm_case(b, 1, 64, 256, 256, 50, bench_reps_or(b, 15, 3));
  gemm_case(b, 1, 64, 512, 128, 50, bench_reps_or(b, 15, 3));
}

/* ---- Conv2D 3x3 vs the GEMM it runs ------------------------------------- */

#define INTS4(n, v) \
  ((struct tfocl_attr){.name = (n), \
                       .kind = TFOCL_ATTR_INT_LIST, \
                       .value.ints = {(v), 4}})

static TF_Tensor *int32_vector(const int64_t *v, int n)
{
  int64_t dims[1] = {n};
  TF_Tensor *t =
      TF_AllocateTensor(TF_INT32, dims, 1, sizeof(int32_t) * (size_t)n);
  int32_t *p = TF_TensorData(t);
  for (int i = 0; i < n; i++)
    p[i] = (int32_t)v[i];
  return t;
}

/* One NHWC 3x3 SAME stride-1 shape's forward and gradients, named
 * names[0..2], each next to the GEMM an im2col convolution would run. */
static void conv_case(struct bench *b, const char *const names[3],
                      int64_t batch, int64_t size, int64_t cin, int64_t cout)
{
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= bench_want(b, names[i]);
  if (!any)
    return;
  int reps = bench_reps_or(b, 10, 3);
  int64_t m = batch * size * size, k = 9 * cin;
  double flop = 2.0 * (double)m * (double)k * (double)cout;
  int64_t in_dims[4] = {batch, size, size, cin};
  int64_t f_dims[4] = {3, 3, cin, cout};
  int64_t out_dims[4] = {batch, size, size, cout};
  int64_t col_dims[2] = {m, k}, fm_dims[2] = {k, cout}, dy_dims[2] = {m, cout};
  TF_Tensor *host[6] = {bench_host_random(in_dims, 4, 1),
                        bench_host_random(f_dims, 4, 2),
                        bench_host_random(out_dims, 4, 3),
                        bench_host_random(col_dims, 2, 4),
                        bench_host_random(fm_dims, 2, 5),
                        bench_host_random(dy_dims, 2, 6)};
  TF_Tensor *dev[6];
  for (int i = 0; i < 6; i++)
    dev[i] = bench_to_device(b, host[i]);
  TF_Tensor *in_sizes = int32_vector(in_dims, 4);
  TF_Tensor *f_sizes = int32_vector(f_dims, 4);
  static const int64_t ones[4] = {1, 1, 1, 1};
  const struct tfocl_attr conv_attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT),
                                          INTS4("strides", ones),
                                          TFOCL_ATTR_S("padding", "SAME")};
  const TF_DataType ff[2] = {TF_FLOAT, TF_FLOAT};
  const TF_DataType iff[3] = {TF_INT32, TF_FLOAT, TF_FLOAT};
  const TF_DataType fif[3] = {TF_FLOAT, TF_INT32, TF_FLOAT};
  struct {
    const char *op;
    const TF_DataType *types;
    TF_Tensor *inputs[3];
    int n;
    const char *gemm;
    TF_Tensor *a, *bb;
    bool ta, tb;
  } rows[3] = {
      {"Conv2D",
       ff,
       {dev[0], dev[1]},
       2,
       "[m,k]x[k,n]",
       dev[3],
       dev[4],
       false,
       false},
      {"Conv2DBackpropInput",
       iff,
       {in_sizes, dev[1], dev[2]},
       3,
       "[m,n]x[k,n]^T",
       dev[5],
       dev[4],
       false,
       true},
      {"Conv2DBackpropFilter",
       fif,
       {dev[0], f_sizes, dev[2]},
       3,
       "[m,k]^T x[m,n]",
       dev[3],
       dev[5],
       true,
       false},
  };
  for (int i = 0; i < 3; i++) {
    if (!bench_want(b, names[i]) || dev[5] == NULL)
      continue;
    const struct tfocl_attr mm_attrs[] = {
        TFOCL_ATTR_T("T", TF_FLOAT), TFOCL_ATTR_B("transpose_a", rows[i].ta),
        TFOCL_ATTR_B("transpose_b", rows[i].tb)};
    struct op_side conv = {bench_make_op(b, rows[i].op, conv_attrs, 3,
                                         rows[i].types, rows[i].n),
                           {rows[i].inputs[0], rows[i].inputs[1],
                            rows[i].inputs[2]},
                           rows[i].n};
    struct op_side mm = {bench_make_op(b, "MatMul", mm_attrs, 3, ff, 2),
                         {rows[i].a, rows[i].bb},
                         2};
    char ref_name[64], note[160];
    snprintf(ref_name, sizeof(ref_name), "MatMul %s (device)", rows[i].gemm);
    snprintf(note, sizeof(note),
             "NHWC [%lld,%lld,%lld,%lld]->%lld; m=%lld "
             "k=%lld n=%lld",
             (long long)batch, (long long)size, (long long)size, (long long)cin,
             (long long)cout, (long long)m, (long long)k, (long long)cout);
    struct side ours = bench_op_side(&conv, flop),
                ref = bench_op_side(&mm, flop);
    ref.name = ref_name;
    bench_measure(b, names[i], GFLOPS, true, &ours, &ref, 1, reps, note);
    tfocl_op_destroy(conv.op);
    tfocl_op_destroy(mm.op);
  }
  for (int i = 0; i < 6; i++) {
    TF_DeleteTensor(host[i]);
    TF_DeleteTensor(dev[i]);
  }
  TF_DeleteTensor(in_sizes);
  TF_DeleteTensor(f_sizes);
}

void bench_conv(struct bench *b)
{
  static const char *const middle[] = {"conv2d/forward",
                                       "conv2d/backprop_input",
                                       "conv2d/backprop_filter"};
  /* A first layer: 1 input channel (grayscale digits), K = 9. */
  static const char *const first[] = {"conv2d/first_forward",
                                      "conv2d/first_backprop_input",
                                      "conv2d/first_backprop_filter"};
  /* An RGB first layer, K = 27. */
  static const char *const rgb[] = {"conv2d/rgb_forward",
                                    "conv2d/rgb_backprop_input",
                                    "conv2d/rgb_backprop_filter"};
  if (b->quick) {
    conv_case(b, middle, 2, 16, 16, 16);
    conv_case(b, first, 4, 16, 1, 32);
    return;
  }
  conv_case(b, middle, 8, 32, 64, 64);
  conv_case(b, first, 64, 28, 1, 32);
  conv_case(b, rgb, 32, 32, 3, 32);
}

/* ---- Depthwise 3x3 (MobileNet's) ---------------------------------------- */

void bench_depthwise(struct bench *b)
{
  static const char *const names[] = {"conv2d/depthwise_forward",
                                      "conv2d/depthwise_backprop_input",
                                      "conv2d/depthwise_backprop_filter"};
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= bench_want(b, names[i]);
  if (!any)
    return;
  /* A MobileNetV2 block at 96x96 input, batch 16. */
  int64_t batch = b->quick ? 2 : 16, size = b->quick ? 16 : 48,
          ch = b->quick ? 16 : 48;
  int reps = bench_reps_or(b, 10, 3);
  double flop = 2.0 * (double)(batch * size * size * ch) * 9.0;
  int64_t in_dims[4] = {batch, size, size, ch};
  int64_t f_dims[4] = {3, 3, ch, 1};
  TF_Tensor *host[3] = {bench_host_random(in_dims, 4, 1),
                        bench_host_random(f_dims, 4, 2),
                        bench_host_random(in_dims, 4, 3)};
  TF_Tensor *dev[3];
  for (int i = 0; i < 3; i++)
    dev[i] = bench_to_device(b, host[i]);
  TF_Tensor *in_sizes = int32_vector(in_dims, 4);
  TF_Tensor *f_sizes = int32_vector(f_dims, 4);
  static const int64_t ones[4] = {1, 1, 1, 1};
  const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT),
                                     INTS4("strides", ones),
                                     TFOCL_ATTR_S("padding", "SAME")};
  const TF_DataType ff[2] = {TF_FLOAT, TF_FLOAT};
  const TF_DataType iff[3] = {TF_INT32, TF_FLOAT, TF_FLOAT};
  const TF_DataType fif[3] = {TF_FLOAT, TF_INT32, TF_FLOAT};
  struct {
    const char *op;
    const TF_DataType *types;
    TF_Tensor *inputs[3];
    int n;
  } rows[3] = {
      {"DepthwiseConv2dNative", ff, {dev[0], dev[1]}, 2},
      {"DepthwiseConv2dNativeBackpropInput",
       iff,
       {in_sizes, dev[1], dev[2]},
       3},
      {"DepthwiseConv2dNativeBackpropFilter",
       fif,
       {dev[0], f_sizes, dev[2]},
       3},
  };
  char note[96];
  snprintf(note, sizeof(note), "NHWC [%lld,%lld,%lld,%lld], 3x3 SAME",
           (long long)batch, (long long)size, (long long)size, (long long)ch);
  for (int i = 0; i < 3; i++) {
    if (!bench_want(b, names[i]) || dev[2] == NULL)
      continue;
    struct op_side o = {bench_make_op(b, rows[i].op, attrs, 3, rows[i].types,
                                      rows[i].n),
                        {rows[i].inputs[0], rows[i].inputs[1],
                         rows[i].inputs[2]},
                        rows[i].n};
    struct side ours = bench_op_side(&o, flop);
    bench_measure(b, names[i], GFLOPS, true, &ours, NULL, 0, reps, note);
    tfocl_op_destroy(o.op);
  }
  for (int i = 0; i < 3; i++) {
    TF_DeleteTensor(host[i]);
    TF_DeleteTensor(dev[i]);
  }
  TF_DeleteTensor(in_sizes);
  TF_DeleteTensor(f_sizes);
}

/* ---- Memory-bound: element-wise, reductions, softmax -------------------- */

size_t bench_big_bytes(const struct bench *b)
{
  return b->quick ? (size_t)8 << 20 : (size_t)64 << 20;
}

void bench_elementwise(struct bench *b)
{
  static const char *const ops[] = {"AddV2", "Relu", "Mul"};
  char names[3][64];
  bool any = false;
  for (int i = 0; i < 3; i++) {
    snprintf(names[i], sizeof(names[i]), "elementwise/%s", ops[i]);
    any |= bench_want(b, names[i]);
  }
  if (!any)
    return;
  size_t bytes = bench_big_bytes(b), n = bytes / sizeof(float);
  int reps = bench_reps_or(b, 10, 3);
  int64_t dims[1] = {(int64_t)n};
  TF_Tensor *hx = bench_host_random(dims, 1, 1),
            *hy = bench_host_random(dims, 1, 2);
  TF_Tensor *dx = bench_to_device(b, hx), *dy = bench_to_device(b, hy);
  TF_Tensor *dz = tfocl_tensor_alloc_device(b->dev, TF_FLOAT, dims, 1, b->st);
  float *hz = malloc(bytes);
  memset(hz, 0, bytes);
  if (dx == NULL || dy == NULL || !bench_ok(b, "alloc"))
    goto out;
  for (int i = 0; i < 3; i++) {
    if (!bench_want(b, names[i]))
      continue;
    int arrays = i == 1 ? 2 : 3; /* inputs read + output written */
    double traffic = (double)arrays * (double)bytes;
    const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
    const TF_DataType types[] = {TF_FLOAT, TF_FLOAT};
    struct op_side o = {bench_make_op(b, ops[i], attrs, 1, types, arrays - 1),
                        {dx, dy},
                        arrays - 1};
    struct host_side h = {.kind = i == 0   ? HOST_ADD
                                  : i == 1 ? HOST_RELU
                                           : HOST_MUL,
                          .z = hz,
                          .x = TF_TensorData(hx),
                          .y = TF_TensorData(hy),
                          .rows = 1,
                          .cols = n};
    /* The device's own copy of the same bytes: read + write = 2 arrays. */
    struct copy_side c = {COPY_D2D, NULL, TF_TensorData(dx), TF_TensorData(dz),
                          bytes};
    struct side refs[2] = {bench_host_side(&h, traffic),
                           {"memcpy_dtod (clEnqueueCopyBuffer)", bench_copy_rep,
                            &c, 2.0 * (double)bytes, true, NULL}};
    struct side ours = bench_op_side(&o, traffic);
    char note[160];
    snprintf(note, sizeof(note), "%zu MiB per array, %d arrays; output %s",
             bytes >> 20, arrays, bench_output_memory(b));
    bench_measure(b, names[i], GBPS, true, &ours, refs, 2, reps, note);
    tfocl_op_destroy(o.op);
  }
out:
  TF_DeleteTensor(dx);
  TF_DeleteTensor(dy);
  TF_DeleteTensor(dz);
  TF_DeleteTensor(hx);
  TF_DeleteTensor(hy);
  free(hz);
}

/* Broadcasts of normalisation, bias and scale (issue 21): each against
 * the flat AddV2 of x's shape on the same device, whose GB/s they should
 * reach (the work is the bytes each must move: x, y and z once). */
void bench_broadcast(struct bench *b)
{
  static const struct {
    const char *name, *op;
    int64_t x[4], y[4];
    int x_rank, y_rank;
  } cases[] = {
      {"broadcast/sub_channel", "Sub", {32, 32, 32, 32}, {32}, 4, 1},
      {"broadcast/sqdiff_channel",
       "SquaredDifference",
       {32, 32, 32, 32},
       {1, 1, 1, 32},
       4,
       4},
      {"broadcast/add_channel3", "AddV2", {32, 128, 86, 3}, {3}, 4, 1},
      {"broadcast/add_channel33", "AddV2", {32, 32, 31, 33}, {33}, 4, 1},
      {"broadcast/sub_rows", "Sub", {8192, 128}, {8192, 1}, 2, 2},
      {"broadcast/mul_nchw", "Mul", {32, 32, 32, 32}, {1, 32, 1, 1}, 4, 4},
      {"broadcast/add_outer", "AddV2", {1024, 1}, {1, 1024}, 2, 2},
  };
  enum { NUM = sizeof(cases) / sizeof(cases[0]) };
  int reps = bench_reps_or(b, 20, 3);
  for (int i = 0; i < NUM; i++) {
    if (!bench_want(b, cases[i].name))
      continue;
    int64_t out[4];
    int rank = cases[i].x_rank;
    for (int d = 0; d < rank; d++) {
      int64_t yd = d - (rank - cases[i].y_rank) >= 0
                       ? cases[i].y[d - (rank - cases[i].y_rank)]
                       : 1;
      out[d] = cases[i].x[d] > yd ? cases[i].x[d] : yd;
    }
    int64_t nx = 1, ny = 1, nz = 1;
    for (int d = 0; d < rank; d++) {
      nx *= cases[i].x[d];
      nz *= out[d];
    }
    for (int d = 0; d < cases[i].y_rank; d++)
      ny *= cases[i].y[d];
    TF_Tensor *hx = bench_host_random(cases[i].x, rank, 1);
    TF_Tensor *hy = bench_host_random(cases[i].y, cases[i].y_rank, 2);
    TF_Tensor *hf = bench_host_random(out, rank, 3),
              *hg = bench_host_random(out, rank, 4);
    TF_Tensor *dx = bench_to_device(b, hx), *dy = bench_to_device(b, hy);
    /* Two arrays: one read twice would move a third less. */
    TF_Tensor *df = bench_to_device(b, hf), *dg = bench_to_device(b, hg);
    const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
    const TF_DataType types[] = {TF_FLOAT, TF_FLOAT};
    struct op_side o = {NULL, {dx, dy}, 2}, flat = {NULL, {df, dg}, 2};
    if (dx != NULL && dy != NULL && df != NULL && dg != NULL &&
        bench_ok(b, "alloc")) {
      o.op = bench_make_op(b, cases[i].op, attrs, 1, types, 2);
      flat.op = bench_make_op(b, "AddV2", attrs, 1, types, 2);
      struct side ours = bench_op_side(&o, 4.0 * (double)(nx + ny + nz));
      struct side ref = bench_op_side(&flat, 4.0 * 3.0 * (double)nz);
      ref.name = "flat AddV2 of the output's shape (device)";
      char note[160];
      snprintf(note, sizeof(note), "%s; x %lld, y %lld elements; output %s",
               cases[i].op, (long long)nx, (long long)ny,
               bench_output_memory(b));
      bench_measure(b, cases[i].name, GBPS, true, &ours, &ref, 1, reps, note);
      tfocl_op_destroy(o.op);
      tfocl_op_destroy(flat.op);
    }
    TF_DeleteTensor(dx);
    TF_DeleteTensor(dy);
    TF_DeleteTensor(df);
    TF_DeleteTensor(dg);
    TF_DeleteTensor(hx);
    TF_DeleteTensor(hy);
    TF_DeleteTensor(hf);
    TF_DeleteTensor(hg);
  }
}

void bench_reduce(struct bench *b)
{
  static const char *const names[] = {"reduce/sum_over_rows",
                                      "reduce/sum_over_cols", "softmax/rows"};
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= bench_want(b, names[i]);
  if (!any)
    return;
  int64_t rows = b->quick ? 1024 : 4096, cols = b->quick ? 2048 : 4096;
  size_t bytes = sizeof(float) * (size_t)(rows * cols);
  int reps = bench_reps_or(b, 10, 3);
  int64_t dims[2] = {rows, cols};
  TF_Tensor *hx = bench_host_random(dims, 2, 1), *dx = bench_to_device(b, hx);
  float *hz = calloc((size_t)(rows * cols), sizeof(float));
  int64_t axis_dims[1] = {1};
  TF_Tensor *axis[2];
  for (int a = 0; a < 2; a++) {
    axis[a] = TF_AllocateTensor(TF_INT32, axis_dims, 1, sizeof(int32_t));
    *(int32_t *)TF_TensorData(axis[a]) = a;
  }
  for (int i = 0; i < 3 && dx != NULL; i++) {
    if (!bench_want(b, names[i]))
      continue;
    struct op_side o = {NULL, {dx, i < 2 ? axis[i] : NULL}, i < 2 ? 2 : 1};
    double traffic;
    struct host_side h = {.kind = HOST_SUM_ROWS,
                          .z = hz,
                          .x = TF_TensorData(hx),
                          .rows = (size_t)rows,
                          .cols = (size_t)cols};
    if (i < 2) {
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT),
                                         TFOCL_ATTR_T("Tidx", TF_INT32)};
      const TF_DataType types[] = {TF_FLOAT, TF_INT32};
      o.op = bench_make_op(b, "Sum", attrs, 2, types, 2);
      traffic = (double)bytes + sizeof(float) * (double)(i == 0 ? cols : rows);
      h.kind = i == 0 ? HOST_SUM_ROWS : HOST_SUM_COLS;
    } else {
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
      const TF_DataType types[] = {TF_FLOAT};
      o.op = bench_make_op(b, "Softmax", attrs, 1, types, 1);
      traffic = 2.0 * (double)bytes;
      h.kind = HOST_SOFTMAX;
    }
    struct side ours = bench_op_side(&o, traffic),
                ref = bench_host_side(&h, traffic);
    char note[160];
    snprintf(note, sizeof(note), "[%lld,%lld] f32, bytes read + written",
             (long long)rows, (long long)cols);
    bench_measure(b, names[i], GBPS, true, &ours, &ref, 1, reps, note);
    tfocl_op_destroy(o.op);
  }
  TF_DeleteTensor(axis[0]);
  TF_DeleteTensor(axis[1]);
  TF_DeleteTensor(dx);
  TF_DeleteTensor(hx);
  free(hz);
}

/* ---- Pooling and batch normalisation ------------------------------------ */

/* An op of up to 6 inputs and outputs (batch normalisation). */
#define MULTI_MAX 6
struct multi_side {
  struct tfocl_op *op;
  TF_Tensor *in[MULTI_MAX];
  int n, num_out;
};

static bool multi_rep(struct bench *b, void *p, double *seconds)
{
  struct multi_side *o = p;
  TF_Tensor *out[MULTI_MAX] = {NULL};
  double t0 = bench_now();
  tfocl_op_compute(o->op, o->in, o->n, out, o->num_out, b->st);
  if (TF_GetCode(b->st) == TF_OK)
    tfocl_device_synchronize(b->dev, b->st);
  *seconds = bench_now() - t0;
  for (int i = 0; i < o->num_out; i++)
    TF_DeleteTensor(out[i]);
  return bench_ok(b, "compute");
}

/* The device's own copy of `bytes`: the bandwidth a memory-bound kernel is
 * held against (read + write = 2 * bytes of traffic). */
struct pool_copy {
  struct copy_side copy;
  TF_Tensor *a, *b;
};

static struct side copy_ref(struct bench *b, struct pool_copy *c, size_t bytes)
{
  int64_t dims[1] = {(int64_t)(bytes / sizeof(float))};
  c->a = tfocl_tensor_alloc_device(b->dev, TF_FLOAT, dims, 1, b->st);
  c->b = bench_ok(b, "alloc")
             ? tfocl_tensor_alloc_device(b->dev, TF_FLOAT, dims, 1, b->st)
             : NULL;
  bool good = bench_ok(b, "alloc") && c->a != NULL && c->b != NULL;
  c->copy =
      (struct copy_side){COPY_D2D, NULL, good ? TF_TensorData(c->a) : NULL,
                         good ? TF_TensorData(c->b) : NULL, bytes};
  return (struct side){"memcpy_dtod (clEnqueueCopyBuffer)",
                       bench_copy_rep,
                       &c->copy,
                       2.0 * (double)bytes,
                       good,
                       "no device buffers"};
}

/* Pooling 3x3/2 SAME and FusedBatchNormV3 (+ gradients) on an NHWC image,
 * in effective bandwidth: the bytes each op must read and write once. */
void bench_pool(struct bench *b)
{
  enum {
    MAX_FWD,
    MAX_GRAD,
    AVG_FWD,
    AVG_GRAD,
    BN_TRAIN,
    BN_TRAIN_NCHW,
    BN_INFER,
    BN_GRAD,
    NUM_CASES
  };
  static const char *const names[NUM_CASES] = {
      "pool/max_forward",     "pool/max_grad",       "pool/avg_forward",
      "pool/avg_grad",        "batch_norm/training", "batch_norm/training_nchw",
      "batch_norm/inference", "batch_norm/grad"};
  bool any = false;
  for (int i = 0; i < NUM_CASES; i++)
    any |= bench_want(b, names[i]);
  if (!any)
    return;
  int64_t n = b->quick ? 4 : 16, hw = b->quick ? 28 : 56,
          c = b->quick ? 32 : 64, ohw = (hw + 1) / 2;
  int reps = bench_reps_or(b, 10, 3);
  int64_t x_dims[4] = {n, hw, hw, c}, y_dims[4] = {n, ohw, ohw, c};
  int64_t nchw_dims[4] = {n, c, hw, hw}, c_dims[1] = {c};
  double x_bytes = 4.0 * (double)(n * hw * hw * c);
  double y_bytes = 4.0 * (double)(n * ohw * ohw * c);
  TF_Tensor *host[6] = {bench_host_random(x_dims, 4, 1),
                        bench_host_random(y_dims, 4, 2),
                        bench_host_random(c_dims, 1, 3),
                        bench_host_random(c_dims, 1, 4),
                        bench_host_random(nchw_dims, 4, 5),
                        bench_host_random(x_dims, 4, 6)};
  /* A positive variance. */
  float *var = TF_TensorData(host[3]);
  for (int64_t i = 0; i < c; i++)
    var[i] = var[i] * var[i] + 0.5f;
  TF_Tensor *dev[6];
  for (int i = 0; i < 6; i++)
    dev[i] = bench_to_device(b, host[i]);
  TF_Tensor *x = dev[0], *dy = dev[1], *scale = dev[2], *pvar = dev[3];
  TF_Tensor *shape = int32_vector(x_dims, 4);
  static const int64_t ksize[4] = {1, 3, 3, 1}, strides[4] = {1, 2, 2, 1};
  const struct tfocl_attr pool_attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT),
                                          INTS4("ksize", ksize),
                                          INTS4("strides", strides),
                                          TFOCL_ATTR_S("padding", "SAME")};
  const TF_DataType f1[1] = {TF_FLOAT}, f3[3] = {TF_FLOAT, TF_FLOAT, TF_FLOAT};
  const TF_DataType if2[2] = {TF_INT32, TF_FLOAT};
  const TF_DataType f5[5] = {TF_FLOAT, TF_FLOAT, TF_FLOAT, TF_FLOAT, TF_FLOAT};
  const TF_DataType f6[6] = {TF_FLOAT, TF_FLOAT, TF_FLOAT,
                             TF_FLOAT, TF_FLOAT, TF_FLOAT};
  /* MaxPoolGrad's orig_output: MaxPool of x, computed once. */
  TF_Tensor *y = NULL;
  struct tfocl_op *maxpool = bench_make_op(b, "MaxPool", pool_attrs, 4, f1, 1);
  if (maxpool != NULL && x != NULL) {
    tfocl_op_compute(maxpool, &x, 1, &y, 1, b->st);
    if (!bench_ok(b, "MaxPool"))
      y = NULL;
  }
  int64_t empty_dims[1] = {0};
  TF_Tensor *empty = TF_AllocateTensor(TF_FLOAT, empty_dims, 1, 0);

  for (int i = 0; i < NUM_CASES; i++) {
    if (!bench_want(b, names[i]) || x == NULL || dy == NULL || scale == NULL ||
        pvar == NULL)
      continue;
    bool nchw = i == BN_TRAIN_NCHW;
    const struct tfocl_attr bn_attrs[] = {
        TFOCL_ATTR_T("T", TF_FLOAT), TFOCL_ATTR_T("U", TF_FLOAT),
        TFOCL_ATTR_F("epsilon", 1e-3f),
        TFOCL_ATTR_B("is_training", i != BN_INFER),
        TFOCL_ATTR_S("data_format", nchw ? "NCHW" : "NHWC")};
    struct multi_side o = {0};
    double traffic = 0;
    const char *shape_note = "3x3/2 SAME";
    switch (i) {
    case MAX_FWD:
    case AVG_FWD:
      o = (struct multi_side){bench_make_op(b,
                                            i == MAX_FWD ? "MaxPool"
                                                         : "AvgPool",
                                            pool_attrs, 4, f1, 1),
                              {x},
                              1,
                              1};
      traffic = x_bytes + y_bytes;
      break;
    case MAX_GRAD:
      o = (struct multi_side){y != NULL ? bench_make_op(b, "MaxPoolGrad",
                                                        pool_attrs, 4, f3, 3)
                                        : NULL,
                              {x, y, dy},
                              3,
                              1};
      traffic = 2.0 * x_bytes + 2.0 * y_bytes;
      break;
    case AVG_GRAD:
      o = (struct multi_side){bench_make_op(b, "AvgPoolGrad", pool_attrs, 4,
                                            if2, 2),
                              {shape, dy},
                              2,
                              1};
      traffic = x_bytes + y_bytes;
      break;
    case BN_TRAIN:
    case BN_TRAIN_NCHW:
    case BN_INFER:
      o = (struct multi_side){bench_make_op(b, "FusedBatchNormV3", bn_attrs, 5,
                                            f5, 5),
                              {nchw ? dev[4] : x, scale, scale,
                               i == BN_INFER ? scale : empty,
                               i == BN_INFER ? pvar : empty},
                              5,
                              6};
      traffic = 2.0 * x_bytes;
      shape_note = nchw ? "NCHW" : "NHWC";
      break;
    case BN_GRAD:
      o = (struct multi_side){bench_make_op(b, "FusedBatchNormGradV3", bn_attrs,
                                            5, f6, 6),
                              {dev[5], x, scale, scale, pvar, empty},
                              6,
                              5};
      traffic = 3.0 * x_bytes;
      shape_note = "NHWC";
      break;
    }
    struct pool_copy pc = {0};
    struct side ours = {"",      multi_rep,    &o,
                        traffic, o.op != NULL, "op could not be created"};
    struct side ref = copy_ref(b, &pc, (size_t)(traffic / 2) / 4 * 4);
    char note[160];
    snprintf(note, sizeof(note),
             "[%lld,%lld,%lld,%lld] f32 %s; bytes read "
             "+ written once",
             (long long)n, (long long)hw, (long long)hw, (long long)c,
             shape_note);
    bench_measure(b, names[i], GBPS, true, &ours, &ref, 1, reps, note);
    tfocl_op_destroy(o.op);
    TF_DeleteTensor(pc.a);
    TF_DeleteTensor(pc.b);
  }
  tfocl_op_destroy(maxpool);
  TF_DeleteTensor(y);
  TF_DeleteTensor(empty);
  TF_DeleteTensor(shape);
  for (int i = 0; i < 6; i++) {
    TF_DeleteTensor(host[i]);
    TF_DeleteTensor(dev[i]);
  }
}

/* ---- Sparse: gather, segment sum, scatter-add ---------------------------- */

enum sparse_kind { SPARSE_GATHER, SPARSE_SEGMENT_SUM, SPARSE_SCATTER_ADD };

struct sparse_host {
  enum sparse_kind kind;
  float *out;
  const float *x;
  const int32_t *idx;
  size_t rows, cols, limit;
};

static bool sparse_host_rep(struct bench *b, void *p, double *seconds)
{
  struct sparse_host *h = p;
  (void)b;
  double t0 = bench_now();
  switch (h->kind) {
  case SPARSE_GATHER:
    bench_host_gather(h->out, h->x, h->limit, h->idx, h->rows, h->cols);
    break;
  case SPARSE_SEGMENT_SUM:
    bench_host_segment_sum(h->out, h->limit, h->x, h->idx, h->rows, h->cols);
    break;
  case SPARSE_SCATTER_ADD:
    bench_host_scatter_add(h->out, h->limit, h->x, h->idx, h->rows, h->cols);
    break;
  }
  *seconds = bench_now() - t0;
  return true;
}

/* n random int32 indices in [0, limit), a host tensor. */
static TF_Tensor *random_indices(int64_t n, int64_t limit, unsigned seed)
{
  int64_t dims[1] = {n};
  TF_Tensor *t =
      TF_AllocateTensor(TF_INT32, dims, 1, sizeof(int32_t) * (size_t)n);
  int32_t *p = TF_TensorData(t);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (int32_t)((((uint64_t)seed << 8) ^ (uint64_t)i * 2654435761u) %
                     (uint64_t)limit);
  }
  return t;
}

static TF_Tensor *int32_scalar(int32_t v)
{
  TF_Tensor *t = TF_AllocateTensor(TF_INT32, NULL, 0, sizeof(int32_t));
  *(int32_t *)TF_TensorData(t) = v;
  return t;
}

void bench_sparse(struct bench *b)
{
  static const char *const names[] = {"gather/GatherV2_rows",
                                      "segment_sum/UnsortedSegmentSum",
                                      "scatter_add/ResourceScatterAdd"};
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= bench_want(b, names[i]);
  if (!any)
    return;
  int64_t rows = b->quick ? 8192 : 65536, cols = 128, segments = 1024;
  int64_t updates = rows / 4;
  int reps = bench_reps_or(b, 10, 3);
  int64_t table_dims[2] = {rows, cols}, upd_dims[2] = {updates, cols};
  TF_Tensor *h_table = bench_host_random(table_dims, 2, 1);
  TF_Tensor *h_upd = bench_host_random(upd_dims, 2, 2);
  TF_Tensor *h_idx = random_indices(rows, rows, 3);
  TF_Tensor *h_ids = random_indices(rows, segments, 4);
  TF_Tensor *h_uidx = random_indices(updates, rows, 5);
  TF_Tensor *axis = int32_scalar(0), *num = int32_scalar((int32_t)segments);
  TF_Tensor *d_table = bench_to_device(b, h_table),
            *d_upd = bench_to_device(b, h_upd);
  TF_Tensor *d_idx = bench_to_device(b, h_idx),
            *d_ids = bench_to_device(b, h_ids);
  TF_Tensor *d_uidx = bench_to_device(b, h_uidx);
  size_t table_bytes = sizeof(float) * (size_t)(rows * cols);
  float *h_out = malloc(table_bytes), *h_var = malloc(table_bytes);
  memcpy(h_var, TF_TensorData(h_table), table_bytes);
  TF_Tensor *var = NULL;
  if (d_table != NULL && d_upd != NULL && d_idx != NULL && d_ids != NULL &&
      d_uidx != NULL && bench_want(b, names[2])) {
    var = tfocl_variable_create(b->dev, h_table, b->st);
    if (!bench_ok(b, "variable"))
      var = NULL;
  }
  for (int i = 0; i < 3 && d_uidx != NULL; i++) {
    if (!bench_want(b, names[i]))
      continue;
    struct op_side o = {NULL, {NULL, NULL, NULL}, 3};
    struct sparse_host h = {.out = h_out, .cols = (size_t)cols};
    double work;
    char note[160];
    if (i == 0) {
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("Tparams", TF_FLOAT),
                                         TFOCL_ATTR_T("Tindices", TF_INT32),
                                         TFOCL_ATTR_T("Taxis", TF_INT32)};
      const TF_DataType types[] = {TF_FLOAT, TF_INT32, TF_INT32};
      o.op = bench_make_op(b, "GatherV2", attrs, 3, types, 3);
      o.in[0] = d_table, o.in[1] = d_idx, o.in[2] = axis;
      h = (struct sparse_host){
          SPARSE_GATHER,        h_out,        TF_TensorData(h_table),
          TF_TensorData(h_idx), (size_t)rows, (size_t)cols,
          (size_t)rows};
      work = 2.0 * (double)table_bytes + 4.0 * (double)rows;
      snprintf(note, sizeof(note),
               "%lld rows of %lld f32 from [%lld,%lld], "
               "bytes read + written",
               (long long)rows, (long long)cols, (long long)rows,
               (long long)cols);
    } else if (i == 1) {
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT),
                                         TFOCL_ATTR_T("Tindices", TF_INT32),
                                         TFOCL_ATTR_T("Tnumsegments",
                                                      TF_INT32)};
      const TF_DataType types[] = {TF_FLOAT, TF_INT32, TF_INT32};
      o.op = bench_make_op(b, "UnsortedSegmentSum", attrs, 3, types, 3);
      o.in[0] = d_table, o.in[1] = d_ids, o.in[2] = num;
      h = (struct sparse_host){SPARSE_SEGMENT_SUM,     h_out,
                               TF_TensorData(h_table), TF_TensorData(h_ids),
                               (size_t)rows,           (size_t)cols,
                               (size_t)segments};
      work = (double)table_bytes + 4.0 * (double)rows +
             4.0 * (double)(segments * cols);
      snprintf(note, sizeof(note),
               "[%lld,%lld] f32 into %lld segments, "
               "deterministic (index order) on both sides",
               (long long)rows, (long long)cols, (long long)segments);
    } else {
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("dtype", TF_FLOAT),
                                         TFOCL_ATTR_T("Tindices", TF_INT32)};
      const TF_DataType types[] = {TF_RESOURCE, TF_INT32, TF_FLOAT};
      if (var != NULL)
        o.op = bench_make_op(b, "ResourceScatterAdd", attrs, 2, types, 3);
      o.in[0] = var, o.in[1] = d_uidx, o.in[2] = d_upd;
      h = (struct sparse_host){SPARSE_SCATTER_ADD,   h_var,
                               TF_TensorData(h_upd), TF_TensorData(h_uidx),
                               (size_t)updates,      (size_t)cols,
                               (size_t)rows};
      work = 3.0 * 4.0 * (double)(updates * cols) + 4.0 * (double)updates;
      snprintf(note, sizeof(note),
               "%lld rows of %lld f32 into a [%lld,%lld] "
               "variable, duplicates included",
               (long long)updates, (long long)cols, (long long)rows,
               (long long)cols);
    }
    struct side ours = bench_op_side(&o, work);
    struct side ref = {
        bench_host_loop_name, sparse_host_rep, &h, work, true, NULL};
    bench_measure(b, names[i], GBPS, true, &ours, &ref, 1, reps, note);
    tfocl_op_destroy(o.op);
  }
  TF_DeleteTensor(var);
  TF_Tensor *all[] = {h_table, h_upd,   h_idx, h_ids, h_uidx, axis,
                      num,     d_table, d_upd, d_idx, d_ids,  d_uidx};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    TF_DeleteTensor(all[i]);
  free(h_out);
  free(h_var);
}

/* ---- Data movement: transposes and concat -------------------------------- */

/* A host int32 vector (perm, axis: host-memory arguments). */
static TF_Tensor *host_ints(const int32_t *v, int64_t n, int rank)
{
  TF_Tensor *t =
      TF_AllocateTensor(TF_INT32, &n, rank, sizeof(int32_t) * (size_t)n);
  if (t != NULL)
    memcpy(TF_TensorData(t), v, sizeof(int32_t) * (size_t)n);
  return t;
}

void bench_movement(struct bench *b)
{
  static const char *const names[] = {"transpose/2d", "transpose/nhwc_to_nchw",
                                      "concat/axis1"};
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= bench_want(b, names[i]);
  if (!any)
    return;
  int reps = bench_reps_or(b, 10, 3);
  int64_t side = b->quick ? 1024 : 4096;
  /* NHWC [n, h, w, c] -> NCHW: per image a [h*w, c] transpose. */
  int64_t nhwc[4] = {b->quick ? 4 : 16, 64, 64, 64};
  for (int i = 0; i < 3; i++) {
    if (!bench_want(b, names[i]))
      continue;
    int64_t dims[4] = {side, side}, half[2] = {side, side / 2};
    int rank = i == 1 ? 4 : 2;
    if (i == 1)
      memcpy(dims, nhwc, sizeof(nhwc));
    TF_Tensor *hx = i == 2 ? bench_host_random(half, 2, 1)
                           : bench_host_random(dims, rank, 1);
    TF_Tensor *hy = i == 2 ? bench_host_random(half, 2, 2) : NULL;
    TF_Tensor *dx = bench_to_device(b, hx),
              *dy = hy ? bench_to_device(b, hy) : NULL;
    size_t bytes = sizeof(float) * (size_t)(side * side);
    if (i == 1)
      bytes = sizeof(float) * (size_t)(nhwc[0] * nhwc[1] * nhwc[2] * nhwc[3]);
    float *hz = calloc(bytes / sizeof(float), sizeof(float));
    TF_Tensor *arg = NULL;
    struct op_side o = {NULL, {dx, NULL, NULL}, 2};
    struct host_side h = {.z = hz,
                          .x = hx ? TF_TensorData(hx) : NULL,
                          .batches = 1};
    const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT),
                                       TFOCL_ATTR_T("Tperm", TF_INT32),
                                       TFOCL_ATTR_T("Tidx", TF_INT32),
                                       TFOCL_ATTR_I("N", 2)};
    char note[160];
    if (i < 2) {
      static const int32_t perm2[2] = {1, 0}, perm4[4] = {0, 3, 1, 2};
      arg = host_ints(i == 0 ? perm2 : perm4, rank, 1);
      o.in[1] = arg;
      o.op = dx != NULL
                 ? bench_make_op(b, "Transpose", attrs, 2,
                                 (const TF_DataType[]){TF_FLOAT, TF_INT32}, 2)
                 : NULL;
      h.kind = HOST_TRANSPOSE;
      h.batches = i == 0 ? 1 : (int)nhwc[0];
      h.rows = i == 0 ? (size_t)side : (size_t)(nhwc[1] * nhwc[2]);
      h.cols = i == 0 ? (size_t)side : (size_t)nhwc[3];
      if (i == 0)
        snprintf(note, sizeof(note),
                 "[%lld,%lld] f32 perm (1,0); bytes read "
                 "+ written",
                 (long long)side, (long long)side);
      else
        snprintf(note, sizeof(note),
                 "[%lld,64,64,64] f32 perm (0,3,1,2); "
                 "bytes read + written",
                 (long long)nhwc[0]);
    } else {
      static const int32_t axis = 1;
      arg = host_ints(&axis, 1, 0);
      o.in[1] = dy;
      o.in[2] = arg;
      o.n = 3;
      o.op =
          dx != NULL && dy != NULL
              ? bench_make_op(
                    b, "ConcatV2",
                    (const struct tfocl_attr[]){attrs[0], attrs[2], attrs[3]},
                    3, (const TF_DataType[]){TF_FLOAT, TF_FLOAT, TF_INT32}, 3)
              : NULL;
      h.kind = HOST_CONCAT;
      h.y = hy ? TF_TensorData(hy) : NULL;
      h.rows = (size_t)side;
      h.cols = h.y_cols = (size_t)side / 2;
      snprintf(note, sizeof(note),
               "2 x [%lld,%lld] f32 -> [%lld,%lld]; "
               "bytes read + written",
               (long long)side, (long long)side / 2, (long long)side,
               (long long)side);
    }
    struct side ours = bench_op_side(&o, 2.0 * (double)bytes);
    struct side ref = bench_host_side(&h, 2.0 * (double)bytes);
    bench_measure(b, names[i], GBPS, true, &ours, &ref, 1, reps, note);
    tfocl_op_destroy(o.op);
    TF_DeleteTensor(arg);
    TF_DeleteTensor(dx);
    TF_DeleteTensor(dy);
    TF_DeleteTensor(hx);
    TF_DeleteTensor(hy);
    free(hz);
  }
}
