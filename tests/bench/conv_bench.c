/* Conv2D f32 forward and both gradients on the OPENCL device, next to the
 * GEMM each one runs (MatMul at the same M, N, K and transposes).
 *
 *   conv_bench [batch size channels_in channels_out]  (default 8 32 64 64)
 *
 * A 3x3 SAME stride-1 NHWC convolution of a [batch, size, size, cin] input:
 *   forward          [B*H*W, 9*cin] x [9*cin, cout]
 *   backprop input   [B*H*W, cout] x [9*cin, cout]^T   (then col2im)
 *   backprop filter  [B*H*W, 9*cin]^T x [B*H*W, cout]
 * so the ratio conv / matmul shows what im2col, col2im and the temps cost.
 * Every rate counts 2 * B*H*W * 9*cin * cout flop. Each repetition is
 * compute + tfocl_device_synchronize; the first call (program builds) is a
 * warm-up reported apart. The plugin is TFOCL_PLUGIN (default: the build's
 * libtfocl.so), device 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorflow/c/tf_tensor.h"
#include "tfocl/host.h"

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static bool check(TF_Status *st, const char *what)
{
  if (TF_GetCode(st) == TF_OK)
    return true;
  fprintf(stderr, "conv_bench: %s: %s\n", what, TF_Message(st));
  return false;
}

/* A device tensor of random floats in [-1, 1). */
static TF_Tensor *random_tensor(struct tfocl_device *dev, const int64_t *dims,
                                int rank, unsigned seed, TF_Status *st)
{
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  TF_Tensor *h = TF_AllocateTensor(TF_FLOAT, dims, rank,
                                   sizeof(float) * (size_t)n);
  float *p = TF_TensorData(h);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
  TF_Tensor *d = tfocl_tensor_to_device(dev, h, st);
  TF_DeleteTensor(h);
  return d;
}

static TF_Tensor *int32_vector(const int64_t *v, int n)
{
  int64_t dims[1] = {n};
  TF_Tensor *t = TF_AllocateTensor(TF_INT32, dims, 1, sizeof(int32_t) * (size_t)n);
  int32_t *p = TF_TensorData(t);
  for (int i = 0; i < n; i++)
    p[i] = (int32_t)v[i];
  return t;
}

struct result {
  double warmup_s, min, median, max; /* GFLOP/s */
};

/* Times `op` on `inputs`; false on failure. */
static bool bench(struct tfocl_device *dev, const char *op_name,
                  const struct tfocl_attr *attrs, int num_attrs,
                  const TF_DataType *types, TF_Tensor **inputs, int n,
                  double flop, int reps, struct result *r)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_op *op =
      tfocl_op_create(dev, op_name, attrs, num_attrs, types, n, st);
  double *rates = calloc((size_t)reps, sizeof(double));
  bool ok = false;
  if (!check(st, op_name))
    goto out;
  for (int i = -1; i < reps; i++) {
    TF_Tensor *o = NULL;
    double t0 = now();
    tfocl_op_compute(op, inputs, n, &o, 1, st);
    if (check(st, op_name))
      tfocl_device_synchronize(dev, st);
    double t = now() - t0;
    TF_DeleteTensor(o);
    if (!check(st, "synchronize"))
      goto out;
    if (i < 0)
      r->warmup_s = t;
    else
      rates[i] = flop / t * 1e-9;
  }
  qsort(rates, (size_t)reps, sizeof(double), cmp_double);
  r->min = rates[0];
  r->median = rates[reps / 2];
  r->max = rates[reps - 1];
  ok = true;
out:
  tfocl_op_destroy(op);
  free(rates);
  TF_DeleteStatus(st);
  return ok;
}

#define INTS(n, v) \
  ((struct tfocl_attr){.name = (n), .kind = TFOCL_ATTR_INT_LIST, \
                       .value.ints = {(v), 4}})

int main(int argc, char **argv)
{
  int64_t batch = 8, size = 32, cin = 64, cout = 64;
  if (argc == 5) {
    batch = atol(argv[1]);
    size = atol(argv[2]);
    cin = atol(argv[3]);
    cout = atol(argv[4]);
  }
  int reps = 10;
  const char *plugin_path = getenv("TFOCL_PLUGIN");
  if (plugin_path == NULL)
    plugin_path = TFOCL_BENCH_PLUGIN;
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *plugin = tfocl_plugin_load(plugin_path, st);
  if (!check(st, plugin_path))
    return 1;
  struct tfocl_device *dev = tfocl_device_open(plugin, 0, st);
  if (!check(st, "device 0"))
    return 1;

  int64_t m = batch * size * size, k = 9 * cin;
  double flop = 2.0 * (double)m * (double)k * (double)cout;
  int64_t in_dims[4] = {batch, size, size, cin};
  int64_t f_dims[4] = {3, 3, cin, cout};
  int64_t out_dims[4] = {batch, size, size, cout};
  TF_Tensor *x = random_tensor(dev, in_dims, 4, 1, st);
  TF_Tensor *f = random_tensor(dev, f_dims, 4, 2, st);
  TF_Tensor *dy = random_tensor(dev, out_dims, 4, 3, st);
  /* The GEMMs' operands: col-shaped [m, k] and the filter as [k, cout]. */
  int64_t col_dims[2] = {m, k}, fm_dims[2] = {k, cout}, dy_dims[2] = {m, cout};
  TF_Tensor *col = random_tensor(dev, col_dims, 2, 4, st);
  TF_Tensor *fm = random_tensor(dev, fm_dims, 2, 5, st);
  TF_Tensor *dym = random_tensor(dev, dy_dims, 2, 6, st);
  TF_Tensor *in_sizes = int32_vector(in_dims, 4);
  TF_Tensor *f_sizes = int32_vector(f_dims, 4);
  if (!check(st, "inputs"))
    return 1;

  static const int64_t ones[4] = {1, 1, 1, 1};
  const struct tfocl_attr conv_attrs[] = {
      TFOCL_ATTR_T("T", TF_FLOAT), INTS("strides", ones),
      TFOCL_ATTR_S("padding", "SAME")};
  const TF_DataType ff[2] = {TF_FLOAT, TF_FLOAT};
  const TF_DataType iff[3] = {TF_INT32, TF_FLOAT, TF_FLOAT};
  const TF_DataType fif[3] = {TF_FLOAT, TF_INT32, TF_FLOAT};
  struct {
    const char *what, *op;
    const struct tfocl_attr *attrs;
    int num_attrs;
    const TF_DataType *types;
    TF_Tensor *inputs[3];
    int n;
    const char *matmul; /* the GEMM's shape */
    TF_Tensor *a, *b;
    bool ta, tb;
  } rows[] = {
      {"forward", "Conv2D", conv_attrs, 3, ff, {x, f}, 2, "[m,k]x[k,n]", col,
       fm, false, false},
      {"backprop input", "Conv2DBackpropInput", conv_attrs, 3, iff,
       {in_sizes, f, dy}, 3, "[m,n]x[k,n]^T", dym, fm, false, true},
      {"backprop filter", "Conv2DBackpropFilter", conv_attrs, 3, fif,
       {x, f_sizes, dy}, 3, "[m,k]^T x[m,n]", col, dym, true, false},
  };

  printf("Conv2D f32 3x3 SAME stride 1, NHWC [%lld,%lld,%lld,%lld] -> %lld "
         "channels: m = %lld, k = %lld, n = %lld, %.2f GFLOP per call\n",
         (long long)batch, (long long)size, (long long)size, (long long)cin,
         (long long)cout, (long long)m, (long long)k, (long long)cout,
         flop * 1e-9);
  printf("%-16s %-16s %8s %8s %8s %9s | %8s %8s %8s %9s | %6s\n", "op",
         "gemm", "min", "median", "max", "warmup_s", "min", "median", "max",
         "warmup_s", "ratio");
  int status = 0;
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    struct result rc, rm;
    const struct tfocl_attr mm_attrs[] = {
        TFOCL_ATTR_T("T", TF_FLOAT), TFOCL_ATTR_B("transpose_a", rows[i].ta),
        TFOCL_ATTR_B("transpose_b", rows[i].tb)};
    TF_Tensor *mm_in[2] = {rows[i].a, rows[i].b};
    if (!bench(dev, rows[i].op, rows[i].attrs, rows[i].num_attrs,
               rows[i].types, rows[i].inputs, rows[i].n, flop, reps, &rc) ||
        !bench(dev, "MatMul", mm_attrs, 3, ff, mm_in, 2, flop, reps, &rm)) {
      status = 1;
      continue;
    }
    printf("%-16s %-16s %8.1f %8.1f %8.1f %9.3f | %8.1f %8.1f %8.1f %9.3f | "
           "%6.2f\n",
           rows[i].what, rows[i].matmul, rc.min, rc.median, rc.max,
           rc.warmup_s, rm.min, rm.median, rm.max, rm.warmup_s,
           rc.median / rm.median);
    fflush(stdout);
  }
  TF_Tensor *all[] = {x, f, dy, col, fm, dym, in_sizes, f_sizes};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    TF_DeleteTensor(all[i]);
  tfocl_device_close(dev);
  tfocl_plugin_unload(plugin);
  TF_DeleteStatus(st);
  return status;
}
