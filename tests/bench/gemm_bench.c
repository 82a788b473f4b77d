/* MatMul f32 on the OPENCL device, own kernel and CLBlast, against OpenBLAS.
 *
 *   gemm_bench [size ...]        (default 256 512 1024 2048)
 *
 * The plugin is TFOCL_PLUGIN (default: the build's libtfocl.so), device 0.
 * The path is picked per op through TFOCL_GEMM, which the plugin reads when
 * an op's kernel is created, so one process measures both. Each repetition
 * is compute + tfocl_device_synchronize; the first call of each path is a
 * warm-up (program builds; CLBlast's first call tunes and compiles, ~12 s
 * on PoCL) and is reported apart. CLBlast is skipped above 1024 (it takes
 * minutes per call on PoCL) unless TFOCL_BENCH_CLBLAST_ALL=1;
 * TFOCL_BENCH_PATHS=own measures our kernel alone.
 * Results are checked against OpenBLAS's (max relative error).
 *
 * Set OPENBLAS_CORETYPE=SkylakeX where Debian's OpenBLAS misdetects the CPU
 * (see DESIGN.md), and OPENBLAS_NUM_THREADS to the cores PoCL uses. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cblas.h>

#include "tensorflow/c/tf_tensor.h"
#include "tfocl/host.h"

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of the whole process (PoCL's and OpenBLAS's threads too). On
 * a shared machine, flop per CPU second stays comparable where wall time
 * does not (threads that spin while idle inflate it a little). */
static double cpu_now(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         1e-6 * ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

struct stats {
  double min, median, max; /* GFLOP/s */
  double per_cpu;           /* median GFLOP per CPU second */
};

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return v[n / 2];
}

static struct stats summarise(double *gflops, double *per_cpu, int n)
{
  qsort(gflops, (size_t)n, sizeof(double), cmp_double);
  return (struct stats){gflops[0], gflops[n / 2], gflops[n - 1],
                        median(per_cpu, n)};
}

static int reps_for(long n)
{
  return n <= 256 ? 30 : n <= 512 ? 15 : n <= 1024 ? 7 : 3;
}

static bool check(TF_Status *st, const char *what)
{
  if (TF_GetCode(st) == TF_OK)
    return true;
  fprintf(stderr, "gemm_bench: %s: %s\n", what, TF_Message(st));
  return false;
}

/* Times MatMul on the device through `path`; fills `result` (n*n host
 * floats) from the first run. Returns false on failure. */
static bool bench_plugin(struct tfocl_device *dev, const char *path, long n,
                         TF_Tensor *a, TF_Tensor *b, int reps, float *result,
                         double *warmup_s, struct stats *out)
{
  TF_Status *st = TF_NewStatus();
  struct tfocl_op *op = NULL;
  bool ok = false;
  double flop = 2.0 * (double)n * (double)n * (double)n;
  double *gflops = calloc((size_t)reps, sizeof(double));
  double *per_cpu = calloc((size_t)reps, sizeof(double));

  setenv("TFOCL_GEMM", path, 1);
  const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
  const TF_DataType types[] = {TF_FLOAT, TF_FLOAT};
  op = tfocl_op_create(dev, "MatMul", attrs, 1, types, 2, st);
  if (!check(st, "tfocl_op_create"))
    goto out;
  TF_Tensor *inputs[2] = {a, b};
  for (int r = -1; r < reps; r++) {
    TF_Tensor *c = NULL;
    double t0 = now(), c0 = cpu_now();
    tfocl_op_compute(op, inputs, 2, &c, 1, st);
    if (check(st, "MatMul"))
      tfocl_device_synchronize(dev, st);
    double t = now() - t0, ct = cpu_now() - c0;
    if (!check(st, "synchronize")) {
      TF_DeleteTensor(c);
      goto out;
    }
    if (r < 0) {
      *warmup_s = t;
      TF_Tensor *host = tfocl_tensor_to_host(c, st);
      if (!check(st, "to host")) {
        TF_DeleteTensor(c);
        goto out;
      }
      memcpy(result, TF_TensorData(host), sizeof(float) * (size_t)(n * n));
      TF_DeleteTensor(host);
    } else {
      gflops[r] = flop / t * 1e-9;
      per_cpu[r] = flop / ct * 1e-9;
    }
    TF_DeleteTensor(c);
  }
  *out = summarise(gflops, per_cpu, reps);
  ok = true;
out:
  tfocl_op_destroy(op);
  free(gflops);
  free(per_cpu);
  TF_DeleteStatus(st);
  return ok;
}

static double max_rel_error(const float *got, const float *want, long count)
{
  double scale = 0, err = 0;
  for (long i = 0; i < count; i++)
    scale = fmax(scale, fabs(want[i]));
  for (long i = 0; i < count; i++)
    err = fmax(err, fabs((double)got[i] - want[i]));
  return scale > 0 ? err / scale : err;
}

int main(int argc, char **argv)
{
  long sizes[16] = {256, 512, 1024, 2048};
  int num_sizes = 4;
  if (argc > 1) {
    num_sizes = 0;
    for (int i = 1; i < argc && num_sizes < 16; i++)
      sizes[num_sizes++] = atol(argv[i]);
  }
  const char *plugin_path = getenv("TFOCL_PLUGIN");
  if (plugin_path == NULL)
    plugin_path = TFOCL_BENCH_PLUGIN;
  bool all = getenv("TFOCL_BENCH_CLBLAST_ALL") != NULL;
  const char *only = getenv("TFOCL_BENCH_PATHS");
  void *clblast = dlopen("libclblast.so.1", RTLD_NOW | RTLD_LOCAL);
  if (clblast != NULL)
    dlclose(clblast);

  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *plugin = tfocl_plugin_load(plugin_path, st);
  if (!check(st, plugin_path))
    return 1;
  struct tfocl_device *dev = tfocl_device_open(plugin, 0, st);
  if (!check(st, "device 0"))
    return 1;

  printf("MatMul f32 (n x n x n), GFLOP/s min / median / max; ratio = median "
         "/ OpenBLAS median (%d threads);\nper_cpu = median GFLOP per CPU "
         "second of the process, cpu_ratio its ratio to OpenBLAS's\n",
         openblas_get_num_threads());
  printf("%6s %-9s %8s %8s %8s %7s %8s %9s %9s %9s\n", "n", "path", "min",
         "median", "max", "ratio", "per_cpu", "cpu_ratio", "warmup_s",
         "rel_err");
  int status = 0;
  for (int s = 0; s < num_sizes; s++) {
    long n = sizes[s];
    int reps = reps_for(n);
    double flop = 2.0 * (double)n * (double)n * (double)n;
    int64_t dims[2] = {n, n};
    size_t bytes = sizeof(float) * (size_t)(n * n);
    TF_Tensor *ha = TF_AllocateTensor(TF_FLOAT, dims, 2, bytes);
    TF_Tensor *hb = TF_AllocateTensor(TF_FLOAT, dims, 2, bytes);
    float *pa = TF_TensorData(ha), *pb = TF_TensorData(hb);
    unsigned seed = 1;
    for (long i = 0; i < n * n; i++) {
      seed = seed * 1103515245u + 12345u;
      pa[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
      seed = seed * 1103515245u + 12345u;
      pb[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    float *want = malloc(bytes), *got = malloc(bytes);

    double *gflops = calloc((size_t)reps, sizeof(double));
    double *per_cpu = calloc((size_t)reps, sizeof(double));
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n,
                (int)n, 1.0f, pa, (int)n, pb, (int)n, 0.0f, want, (int)n);
    double blas_warm = now() - t0;
    for (int r = 0; r < reps; r++) {
      t0 = now();
      double c0 = cpu_now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n,
                  (int)n, 1.0f, pa, (int)n, pb, (int)n, 0.0f, want, (int)n);
      gflops[r] = flop / (now() - t0) * 1e-9;
      per_cpu[r] = flop / (cpu_now() - c0) * 1e-9;
    }
    struct stats blas = summarise(gflops, per_cpu, reps);
    free(gflops);
    free(per_cpu);
    printf("%6ld %-9s %8.1f %8.1f %8.1f %7.2f %8.1f %9.2f %9.3f %9s\n", n,
           "openblas", blas.min, blas.median, blas.max, 1.0, blas.per_cpu, 1.0,
           blas_warm, "-");

    TF_Tensor *da = tfocl_tensor_to_device(dev, ha, st);
    TF_Tensor *db = check(st, "to device") ? tfocl_tensor_to_device(dev, hb, st)
                                           : NULL;
    if (!check(st, "to device"))
      return 1;
    static const char *const paths[] = {"own", "clblast"};
    for (int p = 0; p < 2; p++) {
      if (only != NULL && strstr(only, paths[p]) == NULL)
        continue;
      if (p == 1 && clblast == NULL) {
        printf("%6ld %-9s (libclblast.so.1 not found)\n", n, paths[p]);
        continue;
      }
      if (p == 1 && n > 1024 && !all) {
        printf("%6ld %-9s (skipped: TFOCL_BENCH_CLBLAST_ALL=1 to run)\n", n,
               paths[p]);
        continue;
      }
      struct stats r;
      double warm = 0;
      if (!bench_plugin(dev, paths[p], n, da, db, reps, got, &warm, &r)) {
        status = 1;
        continue;
      }
      printf("%6ld %-9s %8.1f %8.1f %8.1f %7.2f %8.1f %9.2f %9.3f %9.1e\n", n,
             paths[p], r.min, r.median, r.max, r.median / blas.median,
             r.per_cpu, r.per_cpu / blas.per_cpu, warm,
             max_rel_error(got, want, n * n));
      fflush(stdout);
    }
    TF_DeleteTensor(da);
    TF_DeleteTensor(db);
    TF_DeleteTensor(ha);
    TF_DeleteTensor(hb);
    free(want);
    free(got);
  }
  tfocl_device_close(dev);
  tfocl_plugin_unload(plugin);
  TF_DeleteStatus(st);
  return status;
}
