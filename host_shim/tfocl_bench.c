/* tfocl bench: op benchmarks, each case side by side with its reference in
 * the same process, reported as a ratio with min/median/max over
 * repetitions.
 *
 *   tfocl bench                      every case, markdown table on stdout
 *   tfocl bench --quick --json       fewer sizes and repetitions, JSON
 *   tfocl bench --filter matmul,copy cases whose name contains a word
 *
 * Timing: every repetition of a device case is compute (or copy) +
 * tfocl_device_synchronize, host time; outputs are released after the
 * clock stops. Each side (ours, reference) runs once untimed first (the
 * warm-up: program builds, page faults), then the repetitions alternate
 * ours, reference, ... so that a noisy neighbour hits both alike.
 * ratio = our speed / the reference's speed (medians): above 1 we are
 * faster, for rates and times alike.
 *
 * References (tfocl_bench_ref.c): OpenBLAS cblas_sgemm (dlopen()ed, with
 * OPENBLAS_CORETYPE=SkylakeX unless set), multi-threaded host loops (one
 * thread per online CPU), host memcpy, the plugin's own device-to-device
 * copy (clEnqueueCopyBuffer) for memory-bound kernels, an empty kernel
 * enqueued through the ICD loader directly, and for first-op latency a
 * fresh process with a warm program cache against one with an empty one. */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dlfcn.h>

#include "tfocl_bench.h"
#include "tfocl_cmd.h"

#define MAX_FILTERS 16
#define MAX_REFS 2

/* How a row's per-repetition seconds become its figures. */
struct metric {
  const char *unit;
  double scale;  /* rate: work / s * scale; time: s / work * scale */
  bool is_time;
};
static const struct metric GFLOPS = {"GFLOP/s", 1e-9, false};
static const struct metric GBPS = {"GB/s", 1e-9, false};
static const struct metric OPS = {"ops/s", 1.0, false};
static const struct metric US_PER_OP = {"us/op", 1e6, true};
static const struct metric MS = {"ms", 1e3, true};

struct series {
  double *v; /* figures in the row's unit, one per repetition */
  int n;
  double warmup_s; /* the untimed first call; < 0 when none */
};

struct row {
  char name[64];
  struct metric metric;
  bool kernel; /* a device kernel (candidate for "slowest") */
  bool ours_ok;
  struct series ours;
  char ref_name[80];
  bool ref_ok;
  struct series ref;
  char note[160];
};

struct bench {
  struct tfocl_common_opts common;
  bool quick, clblast_all;
  int reps; /* --reps, 0 = per case */
  int device_ordinal;
  char filter_buf[512];
  const char *filters[MAX_FILTERS];
  int num_filters;
  char plugin_path[4096 + 32];

  struct tfocl_plugin *plugin;
  struct tfocl_device *dev;
  const SP_StreamExecutor *se;
  const SP_Device *sp;
  TF_Status *st;

  bool blas_ok;
  char blas_name[160], blas_why[160];
  struct bench_rawcl *raw;
  bool raw_tried;
  char raw_why[200];

  struct row *rows;
  int num_rows, cap_rows;
  int failures;
};

/* ---- Small helpers ----------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* min, median, max of a copy (the series keeps repetition order). */
static void summary(const struct series *s, double out[3])
{
  if (s->n == 0) {
    out[0] = out[1] = out[2] = NAN;
    return;
  }
  double *v = malloc(sizeof(double) * (size_t)s->n);
  memcpy(v, s->v, sizeof(double) * (size_t)s->n);
  qsort(v, (size_t)s->n, sizeof(double), cmp_double);
  out[0] = v[0];
  out[1] = s->n % 2 ? v[s->n / 2] : 0.5 * (v[s->n / 2 - 1] + v[s->n / 2]);
  out[2] = v[s->n - 1];
  free(v);
}

static double row_ratio(const struct row *r)
{
  double o[3], f[3];
  if (!r->ours_ok || !r->ref_ok)
    return NAN;
  summary(&r->ours, o);
  summary(&r->ref, f);
  return r->metric.is_time ? f[1] / o[1] : o[1] / f[1];
}

static bool want(const struct bench *b, const char *name)
{
  if (b->num_filters == 0)
    return true;
  for (int i = 0; i < b->num_filters; i++)
    if (strstr(name, b->filters[i]) != NULL)
      return true;
  return false;
}

static bool ok(struct bench *b, const char *what)
{
  if (TF_GetCode(b->st) == TF_OK)
    return true;
  fprintf(stderr, "tfocl bench: %s: %s\n", what, TF_Message(b->st));
  return false;
}

static void fill_random(float *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

/* A host float tensor of random values in [-1, 1). */
static TF_Tensor *host_random(const int64_t *dims, int rank, unsigned seed)
{
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims, rank,
                                   sizeof(float) * (size_t)n);
  if (t != NULL)
    fill_random(TF_TensorData(t), (size_t)n, seed);
  return t;
}

static TF_Tensor *to_device(struct bench *b, TF_Tensor *host)
{
  if (host == NULL)
    return NULL;
  TF_Tensor *d = tfocl_tensor_to_device(b->dev, host, b->st);
  if (!ok(b, "copy to device"))
    return NULL;
  tfocl_device_synchronize(b->dev, b->st);
  return d;
}

static int reps_or(const struct bench *b, int normal, int quick)
{
  return b->reps > 0 ? b->reps : b->quick ? quick : normal;
}

/* setenv that gives back the old value (a copy) for restore_env. */
static char *set_env(const char *name, const char *value)
{
  const char *old = getenv(name);
  char *saved = old != NULL ? strdup(old) : NULL;
  setenv(name, value, 1);
  return saved;
}

static void restore_env(const char *name, char *saved)
{
  if (saved != NULL)
    setenv(name, saved, 1);
  else
    unsetenv(name);
  free(saved);
}

/* ---- Rows ------------------------------------------------------------- */

static struct row *new_row(struct bench *b, const char *name,
                           struct metric metric, bool kernel)
{
  if (b->num_rows == b->cap_rows) {
    int cap = b->cap_rows ? 2 * b->cap_rows : 32;
    struct row *rows = realloc(b->rows, sizeof(*rows) * (size_t)cap);
    if (rows == NULL)
      abort();
    b->rows = rows;
    b->cap_rows = cap;
  }
  struct row *r = &b->rows[b->num_rows++];
  memset(r, 0, sizeof(*r));
  snprintf(r->name, sizeof(r->name), "%s", name);
  r->metric = metric;
  r->kernel = kernel;
  r->ours.warmup_s = r->ref.warmup_s = -1;
  return r;
}

static void series_copy(struct series *dst, const struct series *src)
{
  *dst = *src;
  dst->v = malloc(sizeof(double) * (size_t)(src->n > 0 ? src->n : 1));
  memcpy(dst->v, src->v, sizeof(double) * (size_t)src->n);
}

static void progress(const struct bench *b, const struct row *r)
{
  double o[3], f[3];
  (void)b;
  summary(&r->ours, o);
  summary(&r->ref, f);
  fprintf(stderr, "tfocl bench: %-34s %10.4g %-7s (ref %s %.4g, ratio %.3g)%s%s\n",
          r->name, o[1], r->metric.unit, r->ref_name, f[1], row_ratio(r),
          r->note[0] ? "  " : "", r->note);
}

/* One timed repetition: does the work once and returns its seconds in
 * *seconds; false on failure (reported on stderr). */
typedef bool (*rep_fn)(struct bench *b, void *ctx, double *seconds);

struct side {
  const char *name;
  rep_fn fn;
  void *ctx;
  double work; /* flop, bytes or ops per repetition */
  bool available;
  const char *why; /* when not available */
};

static double figure(struct metric m, double work, double seconds)
{
  return m.is_time ? seconds / work * m.scale : work / seconds * m.scale;
}

/* Measures `ours` against up to MAX_REFS references, interleaved, and adds
 * one row per reference (the same figures for ours). */
static void measure(struct bench *b, const char *name, struct metric metric,
                    bool kernel, const struct side *ours,
                    const struct side *refs, int num_refs, int reps,
                    const char *note)
{
  struct series o = {calloc((size_t)reps, sizeof(double)), 0, -1};
  struct series f[MAX_REFS];
  bool ours_ok = ours->available, ref_ok[MAX_REFS];
  double s;

  for (int i = 0; i < num_refs; i++) {
    f[i] = (struct series){calloc((size_t)reps, sizeof(double)), 0, -1};
    ref_ok[i] = refs[i].available;
  }
  if (ours_ok) {
    ours_ok = ours->fn(b, ours->ctx, &s);
    o.warmup_s = s;
  }
  for (int i = 0; i < num_refs; i++)
    if (ref_ok[i]) {
      ref_ok[i] = refs[i].fn(b, refs[i].ctx, &s);
      f[i].warmup_s = s;
    }
  for (int r = 0; r < reps; r++) {
    if (ours_ok) {
      ours_ok = ours->fn(b, ours->ctx, &s);
      if (ours_ok)
        o.v[o.n++] = figure(metric, ours->work, s);
    }
    for (int i = 0; i < num_refs; i++)
      if (ref_ok[i]) {
        ref_ok[i] = refs[i].fn(b, refs[i].ctx, &s);
        if (ref_ok[i])
          f[i].v[f[i].n++] = figure(metric, refs[i].work, s);
      }
  }
  if (ours->available && !ours_ok)
    b->failures++;
  for (int i = 0; i < (num_refs > 0 ? num_refs : 1); i++) {
    struct row *row = new_row(b, name, metric, kernel);
    row->ours_ok = ours_ok && o.n > 0;
    series_copy(&row->ours, &o);
    if (!ours->available)
      snprintf(row->note, sizeof(row->note), "%s", ours->why);
    else if (!ours_ok)
      snprintf(row->note, sizeof(row->note), "FAILED (see stderr)");
    else if (note != NULL)
      snprintf(row->note, sizeof(row->note), "%s", note);
    if (num_refs > 0) {
      snprintf(row->ref_name, sizeof(row->ref_name), "%s", refs[i].name);
      row->ref_ok = ref_ok[i] && f[i].n > 0;
      series_copy(&row->ref, &f[i]);
      if (!refs[i].available) {
        size_t len = strlen(row->note);
        snprintf(row->note + len, sizeof(row->note) - len, "%sreference "
                 "unavailable: %s", len ? "; " : "", refs[i].why);
      }
    } else {
      snprintf(row->ref_name, sizeof(row->ref_name), "-");
      row->ref = (struct series){malloc(sizeof(double)), 0, -1};
    }
    progress(b, row);
  }
  free(o.v);
  for (int i = 0; i < num_refs; i++)
    free(f[i].v);
}

/* ---- Device sides ------------------------------------------------------ */

/* One op, created once, computed on fixed inputs. */
struct op_side {
  struct tfocl_op *op;
  TF_Tensor *in[3];
  int n;
};

static bool op_rep(struct bench *b, void *p, double *seconds)
{
  struct op_side *o = p;
  TF_Tensor *out = NULL;
  double t0 = bench_now();
  tfocl_op_compute(o->op, o->in, o->n, &out, 1, b->st);
  if (TF_GetCode(b->st) == TF_OK)
    tfocl_device_synchronize(b->dev, b->st);
  *seconds = bench_now() - t0;
  TF_DeleteTensor(out);
  return ok(b, "compute");
}

static struct tfocl_op *make_op(struct bench *b, const char *op_name,
                                const struct tfocl_attr *attrs, int num_attrs,
                                const TF_DataType *types, int n)
{
  struct tfocl_op *op =
      tfocl_op_create(b->dev, op_name, attrs, num_attrs, types, n, b->st);
  return ok(b, op_name) ? op : NULL;
}

static struct side op_side(struct op_side *o, double work)
{
  return (struct side){"", op_rep, o, work, o->op != NULL,
                       "op could not be created"};
}

/* Copies through the stream executor, each followed by a synchronize. */
enum copy_kind { COPY_H2D, COPY_D2H, COPY_D2D, COPY_H2D_SYNC, COPY_D2H_SYNC };
struct copy_side {
  enum copy_kind kind;
  void *host;
  void *dev_a, *dev_b; /* device addresses (TF_TensorData) */
  size_t bytes;
};

static bool copy_rep(struct bench *b, void *p, double *seconds)
{
  struct copy_side *c = p;
  SP_DeviceMemoryBase a = {SP_DEVICE_MEMORY_BASE_STRUCT_SIZE, NULL, c->dev_a,
                           c->bytes, 0};
  SP_DeviceMemoryBase d = {SP_DEVICE_MEMORY_BASE_STRUCT_SIZE, NULL, c->dev_b,
                           c->bytes, 0};
  double t0 = bench_now();
  switch (c->kind) {
  case COPY_H2D:
    b->se->memcpy_htod(b->sp, tfocl_device_stream(b->dev,
                                                  TFOCL_STREAM_HOST_TO_DEVICE),
                       &a, c->host, c->bytes, b->st);
    break;
  case COPY_D2H:
    b->se->memcpy_dtoh(b->sp, tfocl_device_stream(b->dev,
                                                  TFOCL_STREAM_DEVICE_TO_HOST),
                       c->host, &a, c->bytes, b->st);
    break;
  case COPY_D2D:
    b->se->memcpy_dtod(b->sp, tfocl_device_stream(
                                  b->dev, TFOCL_STREAM_DEVICE_TO_DEVICE),
                       &d, &a, c->bytes, b->st);
    break;
  case COPY_H2D_SYNC:
    b->se->sync_memcpy_htod(b->sp, &a, c->host, c->bytes, b->st);
    break;
  case COPY_D2H_SYNC:
    b->se->sync_memcpy_dtoh(b->sp, c->host, &a, c->bytes, b->st);
    break;
  }
  if (TF_GetCode(b->st) == TF_OK)
    tfocl_device_synchronize(b->dev, b->st);
  *seconds = bench_now() - t0;
  return ok(b, "copy");
}

/* ---- Host sides -------------------------------------------------------- */

enum host_kind {
  HOST_ADD, HOST_MUL, HOST_RELU, HOST_SUM_ROWS, HOST_SUM_COLS, HOST_SOFTMAX,
  HOST_MEMCPY, HOST_SGEMM, HOST_TRANSPOSE, HOST_CONCAT
};
struct host_side {
  enum host_kind kind;
  float *z;
  const float *x, *y;
  size_t rows, cols; /* element-wise: rows * cols elements */
  /* sgemm: batches of [m,k] x [k,n] (transposes as flagged) */
  int batches, m, n, k;
  bool ta, tb;
  /* transpose: batches of [rows, cols]; concat: y's columns */
  size_t y_cols;
};

static bool host_rep(struct bench *b, void *p, double *seconds)
{
  struct host_side *h = p;
  size_t n = h->rows * h->cols;
  (void)b;
  double t0 = bench_now();
  switch (h->kind) {
  case HOST_ADD: bench_host_add(h->z, h->x, h->y, n); break;
  case HOST_MUL: bench_host_mul(h->z, h->x, h->y, n); break;
  case HOST_RELU: bench_host_relu(h->z, h->x, n); break;
  case HOST_SUM_ROWS: bench_host_sum_rows(h->z, h->x, h->rows, h->cols); break;
  case HOST_SUM_COLS: bench_host_sum_cols(h->z, h->x, h->rows, h->cols); break;
  case HOST_SOFTMAX: bench_host_softmax(h->z, h->x, h->rows, h->cols); break;
  case HOST_MEMCPY: bench_host_memcpy(h->z, h->x, n * sizeof(float)); break;
  case HOST_TRANSPOSE:
    bench_host_transpose(h->z, h->x, (size_t)h->batches, h->rows, h->cols);
    break;
  case HOST_CONCAT:
    bench_host_concat_cols(h->z, h->x, h->y, h->rows, h->cols, h->y_cols);
    break;
  case HOST_SGEMM:
    for (int i = 0; i < h->batches; i++) {
      size_t sa = (size_t)h->m * (size_t)h->k, sb = (size_t)h->k * (size_t)h->n;
      bench_blas_sgemm(h->ta, h->tb, h->m, h->n, h->k, h->x + (size_t)i * sa,
                       h->y + (size_t)i * sb,
                       h->z + (size_t)i * (size_t)h->m * (size_t)h->n);
    }
    break;
  }
  *seconds = bench_now() - t0;
  return true;
}

static char host_loop_name[64];
static struct side host_side(struct host_side *h, double work)
{
  return (struct side){host_loop_name, host_rep, h, work, true, NULL};
}

static char blas_side_name[64];
static struct side blas_side(struct bench *b, struct host_side *h, double work)
{
  return (struct side){blas_side_name, host_rep, h, work, b->blas_ok,
                       b->blas_why};
}

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

/* One GEMM case: [batches,] n x n x n, each path against OpenBLAS: auto
 * (what the plugin picks, gemm_tune.c), then each forced with TFOCL_GEMM
 * (blas: the host BLAS as a native kernel, CPU devices only; elsewhere the
 * plugin runs its own kernel under that name). */
#define GEMM_PATHS 4
static void gemm_case(struct bench *b, int batches, int64_t n, int reps)
{
  static const char *const paths[GEMM_PATHS] = {"auto", "own", "blas",
                                                "clblast"};
  char names[GEMM_PATHS][64];
  bool any = false;
  for (int p = 0; p < GEMM_PATHS; p++) {
    if (batches > 1)
      snprintf(names[p], sizeof(names[p]), "batch_matmul/%dx%lld/%s", batches,
               (long long)n, paths[p]);
    else
      snprintf(names[p], sizeof(names[p]), "matmul/%lld/%s", (long long)n,
               paths[p]);
    any |= want(b, names[p]);
  }
  if (!any)
    return;
  int rank = batches > 1 ? 3 : 2;
  int64_t dims[3] = {batches, n, n};
  const int64_t *d = batches > 1 ? dims : dims + 1;
  TF_Tensor *ha = host_random(d, rank, 1), *hb = host_random(d, rank, 2);
  size_t count = (size_t)batches * (size_t)(n * n);
  float *want_c = malloc(sizeof(float) * count);
  double flop = 2.0 * batches * (double)n * (double)n * (double)n;
  struct host_side blas = {.kind = HOST_SGEMM, .z = want_c,
                           .x = TF_TensorData(ha), .y = TF_TensorData(hb),
                           .batches = batches, .m = (int)n, .n = (int)n,
                           .k = (int)n};
  if (b->blas_ok)
    host_rep(b, &blas, &(double){0}); /* the expected product */
  TF_Tensor *da = to_device(b, ha), *db = to_device(b, hb);
  void *clblast = dlopen("libclblast.so.1", RTLD_NOW | RTLD_LOCAL);
  if (clblast != NULL)
    dlclose(clblast);

  for (int p = 0; p < GEMM_PATHS && da != NULL && db != NULL; p++) {
    bool is_clblast = strcmp(paths[p], "clblast") == 0;
    if (!want(b, names[p]))
      continue;
    struct op_side o = {NULL, {da, db}, 2};
    char note[160] = "";
    struct side ours = op_side(&o, flop);
    if (is_clblast && clblast == NULL) {
      ours.available = false;
      ours.why = "skipped: libclblast.so.1 not found";
    } else if (is_clblast && (b->quick || n > 1024 || batches > 1) &&
               !b->clblast_all) {
      /* On PoCL CLBlast takes ~12 s to tune at its first call and minutes
       * per call on large sizes: opt in. */
      ours.available = false;
      ours.why = "skipped: --clblast-all to run";
    } else {
      char *saved = set_env("TFOCL_GEMM", paths[p]);
      if (p == 0)
        unsetenv("TFOCL_GEMM");
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
      const TF_DataType types[] = {TF_FLOAT, TF_FLOAT};
      o.op = make_op(b, batches > 1 ? "BatchMatMulV2" : "MatMul", attrs, 1,
                     types, 2);
      restore_env("TFOCL_GEMM", saved);
      ours.available = o.op != NULL;
      /* The check run: the product against OpenBLAS's. */
      TF_Tensor *out = NULL;
      if (o.op != NULL) {
        double t0 = bench_now();
        tfocl_op_compute(o.op, o.in, 2, &out, 1, b->st);
        TF_Tensor *h = TF_GetCode(b->st) == TF_OK
                           ? tfocl_tensor_to_host(out, b->st) : NULL;
        double first = bench_now() - t0;
        if (h != NULL && b->blas_ok)
          snprintf(note, sizeof(note), "first call %.3f s; max rel err vs "
                   "OpenBLAS %.1e", first,
                   max_rel_error(TF_TensorData(h), want_c, count));
        else if (h != NULL)
          snprintf(note, sizeof(note), "first call %.3f s", first);
        TF_DeleteTensor(h);
        TF_DeleteTensor(out);
        if (!ok(b, names[p])) {
          ours.available = false;
          ours.why = "FAILED (see stderr)";
          b->failures++;
        }
      }
    }
    struct side ref = blas_side(b, &blas, flop);
    measure(b, names[p], GFLOPS, true, &ours, &ref, 1, reps, note);
    tfocl_op_destroy(o.op);
  }
  TF_DeleteTensor(da);
  TF_DeleteTensor(db);
  TF_DeleteTensor(ha);
  TF_DeleteTensor(hb);
  free(want_c);
}

static void bench_matmul(struct bench *b)
{
  static const int64_t sizes[] = {256, 512, 1024, 2048};
  int num = b->quick ? 1 : 4;
  for (int i = 0; i < num; i++) {
    int64_t n = sizes[i];
    gemm_case(b, 1, n, reps_or(b, n <= 256 ? 30 : n <= 512 ? 15
                                  : n <= 1024 ? 7 : 3, 3));
  }
  if (b->quick)
    gemm_case(b, 4, 128, reps_or(b, 0, 3));
  else
    gemm_case(b, 16, 256, reps_or(b, 10, 3));
}

/* ---- Conv2D 3x3 vs the GEMM it runs ------------------------------------- */

#define INTS4(n, v) \
  ((struct tfocl_attr){.name = (n), .kind = TFOCL_ATTR_INT_LIST, \
                       .value.ints = {(v), 4}})

static TF_Tensor *int32_vector(const int64_t *v, int n)
{
  int64_t dims[1] = {n};
  TF_Tensor *t = TF_AllocateTensor(TF_INT32, dims, 1,
                                   sizeof(int32_t) * (size_t)n);
  int32_t *p = TF_TensorData(t);
  for (int i = 0; i < n; i++)
    p[i] = (int32_t)v[i];
  return t;
}

static void bench_conv(struct bench *b)
{
  static const char *const names[] = {"conv2d/forward",
                                      "conv2d/backprop_input",
                                      "conv2d/backprop_filter"};
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= want(b, names[i]);
  if (!any)
    return;
  int64_t batch = b->quick ? 2 : 8, size = b->quick ? 16 : 32,
          cin = b->quick ? 16 : 64, cout = b->quick ? 16 : 64;
  int reps = reps_or(b, 10, 3);
  int64_t m = batch * size * size, k = 9 * cin;
  double flop = 2.0 * (double)m * (double)k * (double)cout;
  int64_t in_dims[4] = {batch, size, size, cin};
  int64_t f_dims[4] = {3, 3, cin, cout};
  int64_t out_dims[4] = {batch, size, size, cout};
  int64_t col_dims[2] = {m, k}, fm_dims[2] = {k, cout}, dy_dims[2] = {m, cout};
  TF_Tensor *host[6] = {host_random(in_dims, 4, 1), host_random(f_dims, 4, 2),
                        host_random(out_dims, 4, 3),
                        host_random(col_dims, 2, 4),
                        host_random(fm_dims, 2, 5),
                        host_random(dy_dims, 2, 6)};
  TF_Tensor *dev[6];
  for (int i = 0; i < 6; i++)
    dev[i] = to_device(b, host[i]);
  TF_Tensor *in_sizes = int32_vector(in_dims, 4);
  TF_Tensor *f_sizes = int32_vector(f_dims, 4);
  static const int64_t ones[4] = {1, 1, 1, 1};
  const struct tfocl_attr conv_attrs[] = {
      TFOCL_ATTR_T("T", TF_FLOAT), INTS4("strides", ones),
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
      {"Conv2D", ff, {dev[0], dev[1]}, 2, "[m,k]x[k,n]", dev[3], dev[4], false,
       false},
      {"Conv2DBackpropInput", iff, {in_sizes, dev[1], dev[2]}, 3,
       "[m,n]x[k,n]^T", dev[5], dev[4], false, true},
      {"Conv2DBackpropFilter", fif, {dev[0], f_sizes, dev[2]}, 3,
       "[m,k]^T x[m,n]", dev[3], dev[5], true, false},
  };
  for (int i = 0; i < 3; i++) {
    if (!want(b, names[i]) || dev[5] == NULL)
      continue;
    const struct tfocl_attr mm_attrs[] = {
        TFOCL_ATTR_T("T", TF_FLOAT), TFOCL_ATTR_B("transpose_a", rows[i].ta),
        TFOCL_ATTR_B("transpose_b", rows[i].tb)};
    struct op_side conv = {make_op(b, rows[i].op, conv_attrs, 3, rows[i].types,
                                   rows[i].n),
                           {rows[i].inputs[0], rows[i].inputs[1],
                            rows[i].inputs[2]},
                           rows[i].n};
    struct op_side mm = {make_op(b, "MatMul", mm_attrs, 3, ff, 2),
                         {rows[i].a, rows[i].bb}, 2};
    char ref_name[64], note[160];
    snprintf(ref_name, sizeof(ref_name), "MatMul %s (device)", rows[i].gemm);
    snprintf(note, sizeof(note), "NHWC [%lld,%lld,%lld,%lld]->%lld; m=%lld "
             "k=%lld n=%lld", (long long)batch, (long long)size,
             (long long)size, (long long)cin, (long long)cout, (long long)m,
             (long long)k, (long long)cout);
    struct side ours = op_side(&conv, flop), ref = op_side(&mm, flop);
    ref.name = ref_name;
    measure(b, names[i], GFLOPS, true, &ours, &ref, 1, reps, note);
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

/* ---- Depthwise 3x3 (MobileNet's) ---------------------------------------- */

static void bench_depthwise(struct bench *b)
{
  static const char *const names[] = {"conv2d/depthwise_forward",
                                      "conv2d/depthwise_backprop_input",
                                      "conv2d/depthwise_backprop_filter"};
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= want(b, names[i]);
  if (!any)
    return;
  /* A MobileNetV2 block at 96x96 input, batch 16. */
  int64_t batch = b->quick ? 2 : 16, size = b->quick ? 16 : 48,
          ch = b->quick ? 16 : 48;
  int reps = reps_or(b, 10, 3);
  double flop = 2.0 * (double)(batch * size * size * ch) * 9.0;
  int64_t in_dims[4] = {batch, size, size, ch};
  int64_t f_dims[4] = {3, 3, ch, 1};
  TF_Tensor *host[3] = {host_random(in_dims, 4, 1), host_random(f_dims, 4, 2),
                        host_random(in_dims, 4, 3)};
  TF_Tensor *dev[3];
  for (int i = 0; i < 3; i++)
    dev[i] = to_device(b, host[i]);
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
      {"DepthwiseConv2dNativeBackpropInput", iff, {in_sizes, dev[1], dev[2]},
       3},
      {"DepthwiseConv2dNativeBackpropFilter", fif, {dev[0], f_sizes, dev[2]},
       3},
  };
  char note[96];
  snprintf(note, sizeof(note), "NHWC [%lld,%lld,%lld,%lld], 3x3 SAME",
           (long long)batch, (long long)size, (long long)size, (long long)ch);
  for (int i = 0; i < 3; i++) {
    if (!want(b, names[i]) || dev[2] == NULL)
      continue;
    struct op_side o = {make_op(b, rows[i].op, attrs, 3, rows[i].types,
                                rows[i].n),
                        {rows[i].inputs[0], rows[i].inputs[1],
                         rows[i].inputs[2]},
                        rows[i].n};
    struct side ours = op_side(&o, flop);
    measure(b, names[i], GFLOPS, true, &ours, NULL, 0, reps, note);
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

static size_t big_bytes(const struct bench *b)
{
  return b->quick ? (size_t)8 << 20 : (size_t)64 << 20;
}

static void bench_elementwise(struct bench *b)
{
  static const char *const ops[] = {"AddV2", "Relu", "Mul"};
  char names[3][64];
  bool any = false;
  for (int i = 0; i < 3; i++) {
    snprintf(names[i], sizeof(names[i]), "elementwise/%s", ops[i]);
    any |= want(b, names[i]);
  }
  if (!any)
    return;
  size_t bytes = big_bytes(b), n = bytes / sizeof(float);
  int reps = reps_or(b, 10, 3);
  int64_t dims[1] = {(int64_t)n};
  TF_Tensor *hx = host_random(dims, 1, 1), *hy = host_random(dims, 1, 2);
  TF_Tensor *dx = to_device(b, hx), *dy = to_device(b, hy);
  TF_Tensor *dz = tfocl_tensor_alloc_device(b->dev, TF_FLOAT, dims, 1, b->st);
  float *hz = malloc(bytes);
  memset(hz, 0, bytes);
  if (dx == NULL || dy == NULL || !ok(b, "alloc"))
    goto out;
  for (int i = 0; i < 3; i++) {
    if (!want(b, names[i]))
      continue;
    int arrays = i == 1 ? 2 : 3; /* inputs read + output written */
    double traffic = (double)arrays * (double)bytes;
    const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
    const TF_DataType types[] = {TF_FLOAT, TF_FLOAT};
    struct op_side o = {make_op(b, ops[i], attrs, 1, types, arrays - 1),
                        {dx, dy}, arrays - 1};
    struct host_side h = {.kind = i == 0 ? HOST_ADD : i == 1 ? HOST_RELU
                                                             : HOST_MUL,
                          .z = hz, .x = TF_TensorData(hx),
                          .y = TF_TensorData(hy), .rows = 1, .cols = n};
    /* The device's own copy of the same bytes: read + write = 2 arrays. */
    struct copy_side c = {COPY_D2D, NULL, TF_TensorData(dx), TF_TensorData(dz),
                          bytes};
    struct side refs[2] = {host_side(&h, traffic),
                           {"memcpy_dtod (clEnqueueCopyBuffer)", copy_rep, &c,
                            2.0 * (double)bytes, true, NULL}};
    struct side ours = op_side(&o, traffic);
    char note[160];
    snprintf(note, sizeof(note), "%zu MiB per array, %d arrays; output "
             "allocated per call", bytes >> 20, arrays);
    measure(b, names[i], GBPS, true, &ours, refs, 2, reps, note);
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

static void bench_reduce(struct bench *b)
{
  static const char *const names[] = {"reduce/sum_over_rows",
                                      "reduce/sum_over_cols", "softmax/rows"};
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= want(b, names[i]);
  if (!any)
    return;
  int64_t rows = b->quick ? 1024 : 4096, cols = b->quick ? 2048 : 4096;
  size_t bytes = sizeof(float) * (size_t)(rows * cols);
  int reps = reps_or(b, 10, 3);
  int64_t dims[2] = {rows, cols};
  TF_Tensor *hx = host_random(dims, 2, 1), *dx = to_device(b, hx);
  float *hz = calloc((size_t)(rows * cols), sizeof(float));
  int64_t axis_dims[1] = {1};
  TF_Tensor *axis[2];
  for (int a = 0; a < 2; a++) {
    axis[a] = TF_AllocateTensor(TF_INT32, axis_dims, 1, sizeof(int32_t));
    *(int32_t *)TF_TensorData(axis[a]) = a;
  }
  for (int i = 0; i < 3 && dx != NULL; i++) {
    if (!want(b, names[i]))
      continue;
    struct op_side o = {NULL, {dx, i < 2 ? axis[i] : NULL}, i < 2 ? 2 : 1};
    double traffic;
    struct host_side h = {.kind = HOST_SUM_ROWS, .z = hz,
                          .x = TF_TensorData(hx), .rows = (size_t)rows,
                          .cols = (size_t)cols};
    if (i < 2) {
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT),
                                         TFOCL_ATTR_T("Tidx", TF_INT32)};
      const TF_DataType types[] = {TF_FLOAT, TF_INT32};
      o.op = make_op(b, "Sum", attrs, 2, types, 2);
      traffic = (double)bytes + sizeof(float) * (double)(i == 0 ? cols : rows);
      h.kind = i == 0 ? HOST_SUM_ROWS : HOST_SUM_COLS;
    } else {
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
      const TF_DataType types[] = {TF_FLOAT};
      o.op = make_op(b, "Softmax", attrs, 1, types, 1);
      traffic = 2.0 * (double)bytes;
      h.kind = HOST_SOFTMAX;
    }
    struct side ours = op_side(&o, traffic), ref = host_side(&h, traffic);
    char note[160];
    snprintf(note, sizeof(note), "[%lld,%lld] f32, bytes read + written",
             (long long)rows, (long long)cols);
    measure(b, names[i], GBPS, true, &ours, &ref, 1, reps, note);
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
  return ok(b, "compute");
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
  c->b = ok(b, "alloc") ? tfocl_tensor_alloc_device(b->dev, TF_FLOAT, dims, 1,
                                                    b->st)
                        : NULL;
  bool good = ok(b, "alloc") && c->a != NULL && c->b != NULL;
  c->copy = (struct copy_side){COPY_D2D, NULL,
                               good ? TF_TensorData(c->a) : NULL,
                               good ? TF_TensorData(c->b) : NULL, bytes};
  return (struct side){"memcpy_dtod (clEnqueueCopyBuffer)", copy_rep, &c->copy,
                       2.0 * (double)bytes, good, "no device buffers"};
}

/* Pooling 3x3/2 SAME and FusedBatchNormV3 (+ gradients) on an NHWC image,
 * in effective bandwidth: the bytes each op must read and write once. */
static void bench_pool(struct bench *b)
{
  enum { MAX_FWD, MAX_GRAD, AVG_FWD, AVG_GRAD, BN_TRAIN, BN_TRAIN_NCHW,
         BN_INFER, BN_GRAD, NUM_CASES };
  static const char *const names[NUM_CASES] = {
      "pool/max_forward", "pool/max_grad", "pool/avg_forward",
      "pool/avg_grad", "batch_norm/training", "batch_norm/training_nchw",
      "batch_norm/inference", "batch_norm/grad"};
  bool any = false;
  for (int i = 0; i < NUM_CASES; i++)
    any |= want(b, names[i]);
  if (!any)
    return;
  int64_t n = b->quick ? 4 : 16, hw = b->quick ? 28 : 56,
          c = b->quick ? 32 : 64, ohw = (hw + 1) / 2;
  int reps = reps_or(b, 10, 3);
  int64_t x_dims[4] = {n, hw, hw, c}, y_dims[4] = {n, ohw, ohw, c};
  int64_t nchw_dims[4] = {n, c, hw, hw}, c_dims[1] = {c};
  double x_bytes = 4.0 * (double)(n * hw * hw * c);
  double y_bytes = 4.0 * (double)(n * ohw * ohw * c);
  TF_Tensor *host[6] = {host_random(x_dims, 4, 1), host_random(y_dims, 4, 2),
                        host_random(c_dims, 1, 3), host_random(c_dims, 1, 4),
                        host_random(nchw_dims, 4, 5),
                        host_random(x_dims, 4, 6)};
  /* A positive variance. */
  float *var = TF_TensorData(host[3]);
  for (int64_t i = 0; i < c; i++)
    var[i] = var[i] * var[i] + 0.5f;
  TF_Tensor *dev[6];
  for (int i = 0; i < 6; i++)
    dev[i] = to_device(b, host[i]);
  TF_Tensor *x = dev[0], *dy = dev[1], *scale = dev[2], *pvar = dev[3];
  TF_Tensor *shape = int32_vector(x_dims, 4);
  static const int64_t ksize[4] = {1, 3, 3, 1}, strides[4] = {1, 2, 2, 1};
  const struct tfocl_attr pool_attrs[] = {
      TFOCL_ATTR_T("T", TF_FLOAT), INTS4("ksize", ksize),
      INTS4("strides", strides), TFOCL_ATTR_S("padding", "SAME")};
  const TF_DataType f1[1] = {TF_FLOAT}, f3[3] = {TF_FLOAT, TF_FLOAT, TF_FLOAT};
  const TF_DataType if2[2] = {TF_INT32, TF_FLOAT};
  const TF_DataType f5[5] = {TF_FLOAT, TF_FLOAT, TF_FLOAT, TF_FLOAT,
                             TF_FLOAT};
  const TF_DataType f6[6] = {TF_FLOAT, TF_FLOAT, TF_FLOAT,
                             TF_FLOAT, TF_FLOAT, TF_FLOAT};
  /* MaxPoolGrad's orig_output: MaxPool of x, computed once. */
  TF_Tensor *y = NULL;
  struct tfocl_op *maxpool = make_op(b, "MaxPool", pool_attrs, 4, f1, 1);
  if (maxpool != NULL && x != NULL) {
    tfocl_op_compute(maxpool, &x, 1, &y, 1, b->st);
    if (!ok(b, "MaxPool"))
      y = NULL;
  }
  int64_t empty_dims[1] = {0};
  TF_Tensor *empty = TF_AllocateTensor(TF_FLOAT, empty_dims, 1, 0);

  for (int i = 0; i < NUM_CASES; i++) {
    if (!want(b, names[i]) || x == NULL || dy == NULL || scale == NULL ||
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
      o = (struct multi_side){make_op(b, i == MAX_FWD ? "MaxPool" : "AvgPool",
                                   pool_attrs, 4, f1, 1),
                           {x}, 1, 1};
      traffic = x_bytes + y_bytes;
      break;
    case MAX_GRAD:
      o = (struct multi_side){y != NULL ? make_op(b, "MaxPoolGrad", pool_attrs, 4,
                                               f3, 3)
                                     : NULL,
                           {x, y, dy}, 3, 1};
      traffic = 2.0 * x_bytes + 2.0 * y_bytes;
      break;
    case AVG_GRAD:
      o = (struct multi_side){make_op(b, "AvgPoolGrad", pool_attrs, 4, if2, 2),
                           {shape, dy}, 2, 1};
      traffic = x_bytes + y_bytes;
      break;
    case BN_TRAIN:
    case BN_TRAIN_NCHW:
    case BN_INFER:
      o = (struct multi_side){make_op(b, "FusedBatchNormV3", bn_attrs, 5, f5, 5),
                           {nchw ? dev[4] : x, scale, scale,
                            i == BN_INFER ? scale : empty,
                            i == BN_INFER ? pvar : empty},
                           5, 6};
      traffic = 2.0 * x_bytes;
      shape_note = nchw ? "NCHW" : "NHWC";
      break;
    case BN_GRAD:
      o = (struct multi_side){make_op(b, "FusedBatchNormGradV3", bn_attrs, 5, f6,
                                   6),
                           {dev[5], x, scale, scale, pvar, empty}, 6, 5};
      traffic = 3.0 * x_bytes;
      shape_note = "NHWC";
      break;
    }
    struct pool_copy pc = {0};
    struct side ours = {"", multi_rep, &o, traffic, o.op != NULL,
                        "op could not be created"};
    struct side ref = copy_ref(b, &pc, (size_t)(traffic / 2) / 4 * 4);
    char note[160];
    snprintf(note, sizeof(note), "[%lld,%lld,%lld,%lld] f32 %s; bytes read "
             "+ written once", (long long)n, (long long)hw, (long long)hw,
             (long long)c, shape_note);
    measure(b, names[i], GBPS, true, &ours, &ref, 1, reps, note);
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
  TF_Tensor *t = TF_AllocateTensor(TF_INT32, dims, 1,
                                   sizeof(int32_t) * (size_t)n);
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

static void bench_sparse(struct bench *b)
{
  static const char *const names[] = {"gather/GatherV2_rows",
                                      "segment_sum/UnsortedSegmentSum",
                                      "scatter_add/ResourceScatterAdd"};
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= want(b, names[i]);
  if (!any)
    return;
  int64_t rows = b->quick ? 8192 : 65536, cols = 128, segments = 1024;
  int64_t updates = rows / 4;
  int reps = reps_or(b, 10, 3);
  int64_t table_dims[2] = {rows, cols}, upd_dims[2] = {updates, cols};
  TF_Tensor *h_table = host_random(table_dims, 2, 1);
  TF_Tensor *h_upd = host_random(upd_dims, 2, 2);
  TF_Tensor *h_idx = random_indices(rows, rows, 3);
  TF_Tensor *h_ids = random_indices(rows, segments, 4);
  TF_Tensor *h_uidx = random_indices(updates, rows, 5);
  TF_Tensor *axis = int32_scalar(0), *num = int32_scalar((int32_t)segments);
  TF_Tensor *d_table = to_device(b, h_table), *d_upd = to_device(b, h_upd);
  TF_Tensor *d_idx = to_device(b, h_idx), *d_ids = to_device(b, h_ids);
  TF_Tensor *d_uidx = to_device(b, h_uidx);
  size_t table_bytes = sizeof(float) * (size_t)(rows * cols);
  float *h_out = malloc(table_bytes), *h_var = malloc(table_bytes);
  memcpy(h_var, TF_TensorData(h_table), table_bytes);
  TF_Tensor *var = NULL;
  if (d_table != NULL && d_upd != NULL && d_idx != NULL && d_ids != NULL &&
      d_uidx != NULL && want(b, names[2])) {
    var = tfocl_variable_create(b->dev, h_table, b->st);
    if (!ok(b, "variable"))
      var = NULL;
  }
  for (int i = 0; i < 3 && d_uidx != NULL; i++) {
    if (!want(b, names[i]))
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
      o.op = make_op(b, "GatherV2", attrs, 3, types, 3);
      o.in[0] = d_table, o.in[1] = d_idx, o.in[2] = axis;
      h = (struct sparse_host){SPARSE_GATHER, h_out, TF_TensorData(h_table),
                               TF_TensorData(h_idx), (size_t)rows,
                               (size_t)cols, (size_t)rows};
      work = 2.0 * (double)table_bytes + 4.0 * (double)rows;
      snprintf(note, sizeof(note), "%lld rows of %lld f32 from [%lld,%lld], "
               "bytes read + written", (long long)rows, (long long)cols,
               (long long)rows, (long long)cols);
    } else if (i == 1) {
      const struct tfocl_attr attrs[] = {
          TFOCL_ATTR_T("T", TF_FLOAT), TFOCL_ATTR_T("Tindices", TF_INT32),
          TFOCL_ATTR_T("Tnumsegments", TF_INT32)};
      const TF_DataType types[] = {TF_FLOAT, TF_INT32, TF_INT32};
      o.op = make_op(b, "UnsortedSegmentSum", attrs, 3, types, 3);
      o.in[0] = d_table, o.in[1] = d_ids, o.in[2] = num;
      h = (struct sparse_host){SPARSE_SEGMENT_SUM, h_out,
                               TF_TensorData(h_table), TF_TensorData(h_ids),
                               (size_t)rows, (size_t)cols, (size_t)segments};
      work = (double)table_bytes + 4.0 * (double)rows +
             4.0 * (double)(segments * cols);
      snprintf(note, sizeof(note), "[%lld,%lld] f32 into %lld segments, "
               "deterministic (index order) on both sides", (long long)rows,
               (long long)cols, (long long)segments);
    } else {
      const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("dtype", TF_FLOAT),
                                         TFOCL_ATTR_T("Tindices", TF_INT32)};
      const TF_DataType types[] = {TF_RESOURCE, TF_INT32, TF_FLOAT};
      if (var != NULL)
        o.op = make_op(b, "ResourceScatterAdd", attrs, 2, types, 3);
      o.in[0] = var, o.in[1] = d_uidx, o.in[2] = d_upd;
      h = (struct sparse_host){SPARSE_SCATTER_ADD, h_var,
                               TF_TensorData(h_upd), TF_TensorData(h_uidx),
                               (size_t)updates, (size_t)cols, (size_t)rows};
      work = 3.0 * 4.0 * (double)(updates * cols) + 4.0 * (double)updates;
      snprintf(note, sizeof(note), "%lld rows of %lld f32 into a [%lld,%lld] "
               "variable, duplicates included", (long long)updates,
               (long long)cols, (long long)rows, (long long)cols);
    }
    struct side ours = op_side(&o, work);
    struct side ref = {host_loop_name, sparse_host_rep, &h, work, true, NULL};
    measure(b, names[i], GBPS, true, &ours, &ref, 1, reps, note);
    tfocl_op_destroy(o.op);
  }
  TF_DeleteTensor(var);
  TF_Tensor *all[] = {h_table, h_upd, h_idx, h_ids, h_uidx, axis, num,
                      d_table, d_upd, d_idx, d_ids, d_uidx};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    TF_DeleteTensor(all[i]);
  free(h_out);
  free(h_var);
}

/* ---- Data movement: transposes and concat -------------------------------- */

/* A host int32 vector (perm, axis: host-memory arguments). */
static TF_Tensor *host_ints(const int32_t *v, int64_t n, int rank)
{
  TF_Tensor *t = TF_AllocateTensor(TF_INT32, &n, rank,
                                   sizeof(int32_t) * (size_t)n);
  if (t != NULL)
    memcpy(TF_TensorData(t), v, sizeof(int32_t) * (size_t)n);
  return t;
}

static void bench_movement(struct bench *b)
{
  static const char *const names[] = {"transpose/2d",
                                      "transpose/nhwc_to_nchw",
                                      "concat/axis1"};
  bool any = false;
  for (int i = 0; i < 3; i++)
    any |= want(b, names[i]);
  if (!any)
    return;
  int reps = reps_or(b, 10, 3);
  int64_t side = b->quick ? 1024 : 4096;
  /* NHWC [n, h, w, c] -> NCHW: per image a [h*w, c] transpose. */
  int64_t nhwc[4] = {b->quick ? 4 : 16, 64, 64, 64};
  for (int i = 0; i < 3; i++) {
    if (!want(b, names[i]))
      continue;
    int64_t dims[4] = {side, side}, half[2] = {side, side / 2};
    int rank = i == 1 ? 4 : 2;
    if (i == 1)
      memcpy(dims, nhwc, sizeof(nhwc));
    TF_Tensor *hx = i == 2 ? host_random(half, 2, 1) : host_random(dims, rank, 1);
    TF_Tensor *hy = i == 2 ? host_random(half, 2, 2) : NULL;
    TF_Tensor *dx = to_device(b, hx), *dy = hy ? to_device(b, hy) : NULL;
    size_t bytes = sizeof(float) * (size_t)(side * side);
    if (i == 1)
      bytes = sizeof(float) * (size_t)(nhwc[0] * nhwc[1] * nhwc[2] * nhwc[3]);
    float *hz = calloc(bytes / sizeof(float), sizeof(float));
    TF_Tensor *arg = NULL;
    struct op_side o = {NULL, {dx, NULL, NULL}, 2};
    struct host_side h = {.z = hz, .x = hx ? TF_TensorData(hx) : NULL,
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
      o.op = dx != NULL ? make_op(b, "Transpose", attrs, 2,
                                  (const TF_DataType[]){TF_FLOAT, TF_INT32}, 2)
                        : NULL;
      h.kind = HOST_TRANSPOSE;
      h.batches = i == 0 ? 1 : (int)nhwc[0];
      h.rows = i == 0 ? (size_t)side : (size_t)(nhwc[1] * nhwc[2]);
      h.cols = i == 0 ? (size_t)side : (size_t)nhwc[3];
      if (i == 0)
        snprintf(note, sizeof(note), "[%lld,%lld] f32 perm (1,0); bytes read "
                 "+ written", (long long)side, (long long)side);
      else
        snprintf(note, sizeof(note), "[%lld,64,64,64] f32 perm (0,3,1,2); "
                 "bytes read + written", (long long)nhwc[0]);
    } else {
      static const int32_t axis = 1;
      arg = host_ints(&axis, 1, 0);
      o.in[1] = dy;
      o.in[2] = arg;
      o.n = 3;
      o.op = dx != NULL && dy != NULL
                 ? make_op(b, "ConcatV2",
                           (const struct tfocl_attr[]){attrs[0], attrs[2],
                                                       attrs[3]},
                           3, (const TF_DataType[]){TF_FLOAT, TF_FLOAT,
                                                    TF_INT32},
                           3)
                 : NULL;
      h.kind = HOST_CONCAT;
      h.y = hy ? TF_TensorData(hy) : NULL;
      h.rows = (size_t)side;
      h.cols = h.y_cols = (size_t)side / 2;
      snprintf(note, sizeof(note), "2 x [%lld,%lld] f32 -> [%lld,%lld]; "
               "bytes read + written", (long long)side, (long long)side / 2,
               (long long)side, (long long)side);
    }
    struct side ours = op_side(&o, 2.0 * (double)bytes);
    struct side ref = host_side(&h, 2.0 * (double)bytes);
    measure(b, names[i], GBPS, true, &ours, &ref, 1, reps, note);
    tfocl_op_destroy(o.op);
    TF_DeleteTensor(arg);
    TF_DeleteTensor(dx);
    TF_DeleteTensor(dy);
    TF_DeleteTensor(hx);
    TF_DeleteTensor(hy);
    free(hz);
  }
}

/* ---- Tiny ops: enqueue cost and throughput ------------------------------ */

struct tiny_side {
  struct tfocl_op *op;
  TF_Tensor *in[2];
  TF_Tensor **outs;
  int count;
  bool enqueue_only; /* report the enqueue loop's time, not the total */
};

static bool tiny_rep(struct bench *b, void *p, double *seconds)
{
  struct tiny_side *t = p;
  bool good = true;
  int done = 0;
  double t0 = bench_now();
  for (; done < t->count; done++) {
    t->outs[done] = NULL;
    tfocl_op_compute(t->op, t->in, 2, &t->outs[done], 1, b->st);
    if (TF_GetCode(b->st) != TF_OK) {
      good = false;
      break;
    }
  }
  double t1 = bench_now();
  TF_Status *st = TF_NewStatus();
  tfocl_device_synchronize(b->dev, good ? b->st : st);
  double t2 = bench_now();
  TF_DeleteStatus(st);
  for (int i = 0; i < done; i++)
    TF_DeleteTensor(t->outs[i]);
  *seconds = t->enqueue_only ? t1 - t0 : t2 - t0;
  return ok(b, "AddV2");
}

struct raw_side {
  struct bench_rawcl *raw;
  int count;
  bool enqueue_only;
};

static bool raw_rep(struct bench *b, void *p, double *seconds)
{
  struct raw_side *r = p;
  double enq = 0, total = bench_rawcl_run(r->raw, r->count, &enq);
  (void)b;
  if (total < 0) {
    fprintf(stderr, "tfocl bench: raw OpenCL enqueue failed\n");
    return false;
  }
  *seconds = r->enqueue_only ? enq : total;
  return true;
}

static void open_raw(struct bench *b)
{
  if (b->raw_tried)
    return;
  b->raw_tried = true;
  b->raw = bench_rawcl_open(b->sp->hardware_name, b->raw_why,
                            sizeof(b->raw_why));
}

static void bench_tiny(struct bench *b)
{
  static const char *const names[] = {"tiny/AddV2_4_throughput",
                                      "tiny/AddV2_4_enqueue"};
  if (!want(b, names[0]) && !want(b, names[1]))
    return;
  open_raw(b);
  int count = b->quick ? 200 : 2000, reps = reps_or(b, 7, 3);
  int64_t dims[1] = {4};
  TF_Tensor *hx = host_random(dims, 1, 1), *hy = host_random(dims, 1, 2);
  struct tiny_side t = {NULL, {to_device(b, hx), to_device(b, hy)},
                        calloc((size_t)count, sizeof(TF_Tensor *)), count,
                        false};
  const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
  const TF_DataType types[] = {TF_FLOAT, TF_FLOAT};
  if (t.in[0] != NULL && t.in[1] != NULL)
    t.op = make_op(b, "AddV2", attrs, 1, types, 2);
  struct raw_side r = {b->raw, count, false};
  char ref_name[80];
  snprintf(ref_name, sizeof(ref_name), "raw OpenCL empty kernel");
  for (int i = 0; i < 2; i++) {
    if (!want(b, names[i]))
      continue;
    t.enqueue_only = r.enqueue_only = i == 1;
    struct side ours = {"", tiny_rep, &t, (double)count, t.op != NULL,
                        "op could not be created"};
    struct side ref = {ref_name, raw_rep, &r, (double)count, b->raw != NULL,
                       b->raw_why};
    char note[160];
    snprintf(note, sizeof(note), "%d ops on [4] floats back to back, %s",
             count, i == 0 ? "one synchronize at the end"
                           : "host time per enqueue (no sync)");
    measure(b, names[i], i == 0 ? OPS : US_PER_OP, true, &ours, &ref, 1, reps,
            note);
  }
  tfocl_op_destroy(t.op);
  free(t.outs);
  TF_DeleteTensor(t.in[0]);
  TF_DeleteTensor(t.in[1]);
  TF_DeleteTensor(hx);
  TF_DeleteTensor(hy);
}

/* ---- Copies vs host memcpy --------------------------------------------- */

static void bench_copies(struct bench *b)
{
  static const struct {
    const char *name;
    enum copy_kind kind;
    const char *what;
  } cases[] = {
      {"copy/h2d", COPY_H2D, "memcpy_htod on the host-to-device stream"},
      {"copy/d2h", COPY_D2H, "memcpy_dtoh on the device-to-host stream"},
      {"copy/d2d", COPY_D2D, "memcpy_dtod (clEnqueueCopyBuffer)"},
      {"copy/h2d_sync", COPY_H2D_SYNC, "sync_memcpy_htod"},
      {"copy/d2h_sync", COPY_D2H_SYNC, "sync_memcpy_dtoh"},
  };
  size_t num = sizeof(cases) / sizeof(cases[0]);
  bool any = false;
  for (size_t i = 0; i < num; i++)
    any |= want(b, cases[i].name);
  if (!any)
    return;
  size_t bytes = big_bytes(b), n = bytes / sizeof(float);
  int reps = reps_or(b, 10, 3);
  int64_t dims[1] = {(int64_t)n};
  float *host = malloc(bytes), *host2 = malloc(bytes);
  fill_random(host, n, 3);
  memset(host2, 0, bytes);
  TF_Tensor *da = tfocl_tensor_alloc_device(b->dev, TF_FLOAT, dims, 1, b->st);
  TF_Tensor *db = ok(b, "alloc") ? tfocl_tensor_alloc_device(
                                       b->dev, TF_FLOAT, dims, 1, b->st)
                                 : NULL;
  if (ok(b, "alloc")) {
    /* Touch both device buffers once so no case pays first-touch faults. */
    struct copy_side init = {COPY_H2D_SYNC, host, TF_TensorData(da), NULL,
                             bytes};
    double s;
    copy_rep(b, &init, &s);
    init.dev_a = TF_TensorData(db);
    copy_rep(b, &init, &s);
    for (size_t i = 0; i < num; i++) {
      if (!want(b, cases[i].name))
        continue;
      struct copy_side c = {cases[i].kind, host, TF_TensorData(da),
                            TF_TensorData(db), bytes};
      if (cases[i].kind == COPY_D2H || cases[i].kind == COPY_D2H_SYNC)
        c.host = host2;
      struct host_side h = {.kind = HOST_MEMCPY, .z = host2, .x = host,
                            .rows = 1, .cols = n};
      struct side ours = {"", copy_rep, &c, (double)bytes, true, NULL};
      struct side ref = {"host memcpy (1 thread)", host_rep, &h,
                         (double)bytes, true, NULL};
      char note[160];
      snprintf(note, sizeof(note), "%zu MiB, %s; bytes copied", bytes >> 20,
               cases[i].what);
      measure(b, cases[i].name, GBPS, false, &ours, &ref, 1, reps, note);
    }
  }
  TF_DeleteTensor(da);
  TF_DeleteTensor(db);
  free(host);
  free(host2);
}

/* ---- First-op latency in fresh processes -------------------------------- */

/* The child: load, open, one AddV2 of 1024 floats, again; prints one line. */
static int first_op_child(struct bench *b)
{
  double t0 = bench_now();
  b->plugin = tfocl_load_plugin(&b->common);
  if (b->plugin == NULL)
    return TFOCL_EXIT_ERROR;
  double t1 = bench_now();
  b->dev = tfocl_device_open(b->plugin, b->device_ordinal, b->st);
  if (!ok(b, "device"))
    return TFOCL_EXIT_ERROR;
  double t2 = bench_now();
  int64_t dims[1] = {1024};
  TF_Tensor *hx = host_random(dims, 1, 1), *hy = host_random(dims, 1, 2);
  TF_Tensor *in[2] = {to_device(b, hx), to_device(b, hy)};
  double t3 = bench_now(), op_s[2] = {0, 0};
  for (int i = 0; i < 2 && in[0] != NULL && in[1] != NULL; i++) {
    double s0 = bench_now();
    TF_Tensor *out = NULL;
    int n_out = 0;
    const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
    tfocl_run_op(b->dev, "AddV2", attrs, 1, in, 2, &out, 1, &n_out, b->st);
    if (TF_GetCode(b->st) == TF_OK)
      tfocl_device_synchronize(b->dev, b->st);
    op_s[i] = bench_now() - s0;
    TF_DeleteTensor(out);
    if (!ok(b, "AddV2"))
      return TFOCL_EXIT_ERROR;
  }
  printf("first_op total_s=%.9f load_s=%.9f open_s=%.9f op_s=%.9f "
         "second_s=%.9f\n", (t3 - t0) + op_s[0], t1 - t0, t2 - t1, op_s[0],
         op_s[1]);
  TF_DeleteTensor(in[0]);
  TF_DeleteTensor(in[1]);
  TF_DeleteTensor(hx);
  TF_DeleteTensor(hy);
  return TFOCL_EXIT_OK;
}

/* Runs `tfocl bench --first-op` with its driver's program cache in
 * cache_dir (POCL_CACHE_DIR for PoCL, CUDA_CACHE_PATH for NVIDIA's OpenCL,
 * which otherwise keeps ~/.nv/ComputeCache warm across the children); fills
 * out[0] = total, out[1] = first op, out[2] = second op (seconds). */
static bool spawn_first_op(struct bench *b, const char *cache_dir,
                           double out[3])
{
  int fds[2];
  if (pipe(fds) != 0)
    return false;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    setenv("POCL_CACHE_DIR", cache_dir, 1);
    setenv("CUDA_CACHE_PATH", cache_dir, 1);
    char dev[16];
    snprintf(dev, sizeof(dev), "%d", b->device_ordinal);
    char *args[] = {"tfocl", "bench", "--first-op", "--device", dev,
                    "--plugin", b->plugin_path, NULL};
    execv("/proc/self/exe", args);
    _exit(127);
  }
  close(fds[1]);
  char buf[512] = "";
  size_t len = 0;
  ssize_t got;
  while (len < sizeof(buf) - 1 &&
         (got = read(fds[0], buf + len, sizeof(buf) - 1 - len)) != 0) {
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      break;
    len += (size_t)got;
  }
  buf[len] = '\0';
  close(fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
    ;
  double load, open;
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 ||
      sscanf(buf, "first_op total_s=%lf load_s=%lf open_s=%lf op_s=%lf "
                  "second_s=%lf", &out[0], &load, &open, &out[1],
             &out[2]) != 5) {
    fprintf(stderr, "tfocl bench: the --first-op child failed (status %d): "
                    "%s\n", wstatus, buf);
    return false;
  }
  return true;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void remove_tree(const char *dir)
{
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool make_temp_dir(char *buf, size_t size)
{
  const char *tmp = getenv("TMPDIR");
  snprintf(buf, size, "%s/tfocl-bench-XXXXXX",
           tmp != NULL && tmp[0] ? tmp : "/tmp");
  return mkdtemp(buf) != NULL;
}

static void bench_first_op(struct bench *b)
{
  static const char *const names[] = {"first_op/process_to_result",
                                      "first_op/AddV2_first_call"};
  if (!want(b, names[0]) && !want(b, names[1]))
    return;
  int reps = reps_or(b, 3, 1);
  struct series cold[2], warm[2];
  for (int i = 0; i < 2; i++) {
    cold[i] = (struct series){calloc((size_t)reps, sizeof(double)), 0, -1};
    warm[i] = (struct series){calloc((size_t)reps, sizeof(double)), 0, -1};
  }
  char warm_dir[4096];
  bool warm_ok = make_temp_dir(warm_dir, sizeof(warm_dir));
  double v[3];
  if (warm_ok)
    warm_ok = spawn_first_op(b, warm_dir, v); /* fills the cache */
  bool cold_ok = true;
  for (int r = 0; r < reps; r++) {
    char cold_dir[4096];
    if (cold_ok && make_temp_dir(cold_dir, sizeof(cold_dir))) {
      cold_ok = spawn_first_op(b, cold_dir, v);
      remove_tree(cold_dir);
      if (cold_ok) {
        cold[0].v[cold[0].n++] = v[0] * 1e3;
        cold[1].v[cold[1].n++] = v[1] * 1e3;
      }
    }
    if (warm_ok) {
      warm_ok = spawn_first_op(b, warm_dir, v);
      if (warm_ok) {
        warm[0].v[warm[0].n++] = v[0] * 1e3;
        warm[1].v[warm[1].n++] = v[1] * 1e3;
      }
    }
  }
  if (warm_dir[0])
    remove_tree(warm_dir);
  for (int i = 0; i < 2; i++) {
    if (want(b, names[i])) {
      struct row *row = new_row(b, names[i], MS, false);
      row->ours = cold[i];
      row->ours_ok = cold[i].n > 0;
      row->ref = warm[i];
      row->ref_ok = warm[i].n > 0;
      snprintf(row->ref_name, sizeof(row->ref_name), "warm program cache");
      snprintf(row->note, sizeof(row->note), "%s",
               i == 0 ? "fresh process, empty program cache: plugin load + "
                        "device open + uploads + first AddV2 synced"
                      : "fresh process, empty program cache: the first "
                        "AddV2 alone (create + compute + sync)");
      if (!row->ours_ok)
        b->failures++;
      progress(b, row);
    } else {
      free(cold[i].v);
      free(warm[i].v);
    }
  }
}

/* ---- Output --------------------------------------------------------------- */

static void fmt_value(char *buf, size_t size, double v)
{
  if (isnan(v))
    snprintf(buf, size, "n/a");
  else if (fabs(v) >= 1e5)
    snprintf(buf, size, "%.3g", v);
  else if (fabs(v) >= 100)
    snprintf(buf, size, "%.0f", v);
  else if (fabs(v) >= 10)
    snprintf(buf, size, "%.1f", v);
  else
    snprintf(buf, size, "%.3g", v);
}

static void json_number(double v)
{
  if (isnan(v) || isinf(v))
    printf("null");
  else
    printf("%.6g", v);
}

static void json_series(const struct series *s, bool available)
{
  double m[3];
  summary(s, m);
  printf("{\"available\": %s, \"min\": ", available ? "true" : "false");
  json_number(m[0]);
  printf(", \"median\": ");
  json_number(m[1]);
  printf(", \"max\": ");
  json_number(m[2]);
  printf(", \"warmup_s\": ");
  json_number(s->warmup_s < 0 ? NAN : s->warmup_s);
  printf(", \"reps\": [");
  for (int i = 0; i < s->n; i++) {
    printf("%s", i ? ", " : "");
    json_number(s->v[i]);
  }
  printf("]}");
}

static const struct row *slowest(const struct bench *b)
{
  const struct row *worst = NULL;
  double worst_ratio = INFINITY;
  for (int i = 0; i < b->num_rows; i++) {
    double r = row_ratio(&b->rows[i]);
    if (b->rows[i].kernel && !isnan(r) && r < worst_ratio) {
      worst_ratio = r;
      worst = &b->rows[i];
    }
  }
  return worst;
}

static const char *device_name(const struct bench *b)
{
  return b->sp != NULL && b->sp->hardware_name != NULL ? b->sp->hardware_name
                                                      : "?";
}

static void print_json(const struct bench *b)
{
  printf("{\"device\": ");
  tfocl_json_string(stdout, device_name(b));
  printf(", \"plugin\": ");
  tfocl_json_string(stdout, b->plugin_path);
  printf(", \"host_threads\": %d, \"quick\": %s, \"blas\": ",
         bench_host_threads(), b->quick ? "true" : "false");
  tfocl_json_string(stdout, b->blas_ok ? b->blas_name : NULL);
  printf(",\n \"rows\": [");
  for (int i = 0; i < b->num_rows; i++) {
    const struct row *r = &b->rows[i];
    printf("%s\n  {\"case\": ", i ? "," : "");
    tfocl_json_string(stdout, r->name);
    printf(", \"unit\": ");
    tfocl_json_string(stdout, r->metric.unit);
    printf(", \"higher_is_better\": %s, \"kernel\": %s,\n   \"ours\": ",
           r->metric.is_time ? "false" : "true", r->kernel ? "true" : "false");
    json_series(&r->ours, r->ours_ok);
    printf(",\n   \"reference\": ");
    tfocl_json_string(stdout, r->ref_name);
    printf(", \"ref\": ");
    json_series(&r->ref, r->ref_ok);
    printf(",\n   \"ratio\": ");
    json_number(row_ratio(r));
    printf(", \"note\": ");
    tfocl_json_string(stdout, r->note);
    printf("}");
  }
  const struct row *w = slowest(b);
  printf("\n ],\n \"slowest\": ");
  if (w != NULL) {
    printf("{\"case\": ");
    tfocl_json_string(stdout, w->name);
    printf(", \"reference\": ");
    tfocl_json_string(stdout, w->ref_name);
    printf(", \"ratio\": ");
    json_number(row_ratio(w));
    printf("}");
  } else {
    printf("null");
  }
  printf(", \"failures\": %d}\n", b->failures);
}

static void print_markdown(const struct bench *b)
{
  printf("tfocl bench on %s (%s); host references use %d threads; BLAS: "
         "%s%s\n\n",
         device_name(b), b->plugin_path, bench_host_threads(),
         b->blas_ok ? b->blas_name : "unavailable: ",
         b->blas_ok ? "" : b->blas_why);
  printf("ratio = our speed / the reference's speed (medians; > 1: ours is "
         "faster).\n\n");
  printf("| case | metric | ours min | ours median | ours max | reference | "
         "ref median | ratio | note |\n");
  printf("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |\n");
  for (int i = 0; i < b->num_rows; i++) {
    const struct row *r = &b->rows[i];
    double o[3], f[3];
    char s[4][32], ratio[32];
    summary(&r->ours, o);
    summary(&r->ref, f);
    for (int k = 0; k < 3; k++)
      fmt_value(s[k], sizeof(s[k]), r->ours_ok ? o[k] : NAN);
    fmt_value(s[3], sizeof(s[3]), r->ref_ok ? f[1] : NAN);
    double q = row_ratio(r);
    if (isnan(q))
      snprintf(ratio, sizeof(ratio), "n/a");
    else
      snprintf(ratio, sizeof(ratio), "%.2f", q);
    printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->name,
           r->metric.unit, s[0], s[1], s[2], r->ref_name, s[3], ratio,
           r->note);
  }
  const struct row *w = slowest(b);
  if (w != NULL)
    printf("\nSlowest kernel relative to its reference: %s (%.2f x %s).\n",
           w->name, row_ratio(w), w->ref_name);
  if (b->failures)
    printf("\n%d case(s) FAILED (see stderr).\n", b->failures);
}

/* ---- The command ------------------------------------------------------- */

static void free_rows(struct bench *b)
{
  for (int i = 0; i < b->num_rows; i++) {
    free(b->rows[i].ours.v);
    free(b->rows[i].ref.v);
  }
  free(b->rows);
}

static int run(int argc, char **argv)
{
  struct bench b = {0};
  bool first_op = false;
  char *common_argv[8];
  int common_argc = 0;

  common_argv[common_argc++] = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick")) {
      b.quick = true;
    } else if (!strcmp(a, "--clblast-all")) {
      b.clblast_all = true;
    } else if (!strcmp(a, "--first-op")) {
      first_op = true;
    } else if (!strcmp(a, "--filter") && next != NULL) {
      snprintf(b.filter_buf, sizeof(b.filter_buf), "%s", argv[++i]);
      for (char *save = NULL, *tok = strtok_r(b.filter_buf, ",", &save);
           tok != NULL && b.num_filters < MAX_FILTERS;
           tok = strtok_r(NULL, ",", &save))
        b.filters[b.num_filters++] = tok;
    } else if (!strcmp(a, "--reps") && next != NULL) {
      b.reps = atoi(argv[++i]);
      if (b.reps < 1) {
        fprintf(stderr, "tfocl bench: --reps needs a positive count\n");
        return TFOCL_EXIT_USAGE;
      }
    } else if (!strcmp(a, "--device") && next != NULL) {
      b.device_ordinal = atoi(argv[++i]);
    } else if (common_argc < 6) {
      common_argv[common_argc++] = argv[i];
      if (!strcmp(a, "--plugin") && next != NULL)
        common_argv[common_argc++] = argv[++i];
    } else {
      fprintf(stderr, "tfocl bench: too many options\n");
      return TFOCL_EXIT_USAGE;
    }
  }
  int rc = tfocl_parse_common(&tfocl_cmd_bench, common_argc, common_argv,
                              &b.common);
  if (rc >= 0)
    return rc;
  char resolved[sizeof(b.plugin_path)];
  snprintf(b.plugin_path, sizeof(b.plugin_path), "%s",
           tfocl_resolve_plugin(b.common.plugin, resolved, sizeof(resolved)));
  b.common.plugin = b.plugin_path;
  b.st = TF_NewStatus();
  if (first_op) {
    rc = first_op_child(&b);
    tfocl_device_close(b.dev);
    tfocl_plugin_unload(b.plugin);
    TF_DeleteStatus(b.st);
    return rc;
  }

  snprintf(host_loop_name, sizeof(host_loop_name), "host loop (%d threads)",
           bench_host_threads());
  b.blas_ok = bench_blas_open(b.blas_name, sizeof(b.blas_name), b.blas_why,
                              sizeof(b.blas_why));
  snprintf(blas_side_name, sizeof(blas_side_name), "OpenBLAS sgemm");

  b.plugin = tfocl_load_plugin(&b.common);
  if (b.plugin == NULL) {
    TF_DeleteStatus(b.st);
    return TFOCL_EXIT_ERROR;
  }
  b.dev = tfocl_device_open(b.plugin, b.device_ordinal, b.st);
  if (b.dev == NULL) {
    fprintf(stderr, "tfocl bench: device %d: %s\n", b.device_ordinal,
            TF_Message(b.st));
    tfocl_plugin_unload(b.plugin);
    TF_DeleteStatus(b.st);
    return TFOCL_EXIT_ERROR;
  }
  b.se = tfocl_plugin_stream_executor(b.plugin);
  b.sp = tfocl_device_sp(b.dev);
  fprintf(stderr, "tfocl bench: device %s, BLAS %s\n", device_name(&b),
          b.blas_ok ? b.blas_name : b.blas_why);

  /* Cheap cases first: a filtered smoke run reaches them at once. */
  bench_tiny(&b);
  bench_copies(&b);
  bench_elementwise(&b);
  bench_reduce(&b);
  bench_sparse(&b);
  bench_movement(&b);
  bench_matmul(&b);
  bench_conv(&b);
  bench_depthwise(&b);
  bench_pool(&b);
  /* Children after the device work: their CPU load would skew it. */
  bench_first_op(&b);

  if (b.num_rows == 0)
    fprintf(stderr, "tfocl bench: no case matches the filter\n");
  if (b.common.json)
    print_json(&b);
  else
    print_markdown(&b);
  fflush(stdout);

  int failures = b.failures;
  bool none = b.num_rows == 0;
  free_rows(&b);
  bench_rawcl_close(b.raw);
  tfocl_device_close(b.dev);
  tfocl_plugin_unload(b.plugin);
  TF_DeleteStatus(b.st);
  return failures || none ? TFOCL_EXIT_ERROR : TFOCL_EXIT_OK;
}

const struct tfocl_cmd tfocl_cmd_bench = {
    .name = "bench",
    .summary = "op benchmarks, each side by side with its reference "
               "(OpenBLAS, host loops, memcpy, raw OpenCL)",
    .usage = "--quick                fewer sizes and repetitions (smoke "
             "tests)\n"
             "--filter a,b           only cases whose name contains a or b "
             "(matmul, conv2d,\n"
             "                       elementwise, reduce, softmax, pool, "
             "batch_norm, tiny,\n"
             "                       copy, first_op, ...)\n"
             "--reps N               repetitions per case (default: per "
             "case)\n"
             "--clblast-all          also CLBlast above n=1024, batched and "
             "in --quick\n"
             "--device N             device ordinal (default 0)\n"
             "--json                 machine-readable output\n"
             "--plugin PATH          the plugin to load\n"
             "--first-op             (internal) one fresh-process first-op "
             "measurement\n"
             "Prints a markdown table: case, metric, ours min/median/max, "
             "reference median,\n"
             "ratio (our speed / the reference's, > 1 = faster). Set "
             "OPENBLAS_NUM_THREADS to\n"
             "the cores the device uses for a like-for-like GEMM reference.",
    .run = run,
};
