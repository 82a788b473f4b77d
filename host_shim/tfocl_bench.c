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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfocl_bench_internal.h"

const struct metric GFLOPS = {"GFLOP/s", 1e-9, false};
const struct metric GBPS = {"GB/s", 1e-9, false};
const struct metric OPS = {"ops/s", 1.0, false};
const struct metric US_PER_OP = {"us/op", 1e6, true};
const struct metric MS = {"ms", 1e3, true};

/* ---- Small helpers ----------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* min, median, max of a copy (the series keeps repetition order). */
void bench_summary(const struct series *s, double out[3])
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

double bench_row_ratio(const struct row *r)
{
  double o[3], f[3];
  if (!r->ours_ok || !r->ref_ok)
    return NAN;
  bench_summary(&r->ours, o);
  bench_summary(&r->ref, f);
  return r->metric.is_time ? f[1] / o[1] : o[1] / f[1];
}

bool bench_want(const struct bench *b, const char *name)
{
  if (b->num_filters == 0)
    return true;
  for (int i = 0; i < b->num_filters; i++)
    if (strstr(name, b->filters[i]) != NULL)
      return true;
  return false;
}

bool bench_ok(struct bench *b, const char *what)
{
  if (TF_GetCode(b->st) == TF_OK)
    return true;
  fprintf(stderr, "tfocl bench: %s: %s\n", what, TF_Message(b->st));
  return false;
}

void bench_fill_random(float *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

/* A host float tensor of random values in [-1, 1). */
TF_Tensor *bench_host_random(const int64_t *dims, int rank, unsigned seed)
{
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims, rank,
                                   sizeof(float) * (size_t)n);
  if (t != NULL)
    bench_fill_random(TF_TensorData(t), (size_t)n, seed);
  return t;
}

TF_Tensor *bench_to_device(struct bench *b, TF_Tensor *host)
{
  if (host == NULL)
    return NULL;
  TF_Tensor *d = tfocl_tensor_to_device(b->dev, host, b->st);
  if (!bench_ok(b, "copy to device"))
    return NULL;
  tfocl_device_synchronize(b->dev, b->st);
  return d;
}

int bench_reps_or(const struct bench *b, int normal, int quick)
{
  return b->reps > 0 ? b->reps : b->quick ? quick : normal;
}

/* ---- Rows ------------------------------------------------------------- */

struct row *bench_new_row(struct bench *b, const char *name,
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

void bench_progress(const struct bench *b, const struct row *r)
{
  double o[3], f[3];
  (void)b;
  bench_summary(&r->ours, o);
  bench_summary(&r->ref, f);
  fprintf(stderr,
          "tfocl bench: %-34s %10.4g %-7s (ref %s %.4g, ratio %.3g)%s%s\n",
          r->name, o[1], r->metric.unit, r->ref_name, f[1], bench_row_ratio(r),
          r->note[0] ? "  " : "", r->note);
}

static double figure(struct metric m, double work, double seconds)
{
  return m.is_time ? seconds / work * m.scale : work / seconds * m.scale;
}

/* Measures `ours` against up to MAX_REFS references, interleaved, and adds
 * one row per reference (the same figures for ours). */
void bench_measure(struct bench *b, const char *name, struct metric metric,
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
    struct row *row = bench_new_row(b, name, metric, kernel);
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
    bench_progress(b, row);
  }
  free(o.v);
  for (int i = 0; i < num_refs; i++)
    free(f[i].v);
}

/* ---- Device sides ------------------------------------------------------ */

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
  return bench_ok(b, "compute");
}

static bool op_stream_rep(struct bench *b, void *p, double *seconds)
{
  struct op_stream_side *s = p;
  int done = 0;
  double t0 = bench_now();
  for (; done < s->repeat; done++) {
    s->outs[done] = NULL;
    tfocl_op_compute(s->o.op, s->o.in, s->o.n, &s->outs[done], 1, b->st);
    if (TF_GetCode(b->st) != TF_OK)
      break;
  }
  if (TF_GetCode(b->st) == TF_OK)
    tfocl_device_synchronize(b->dev, b->st);
  *seconds = bench_now() - t0;
  for (int i = 0; i < done; i++)
    TF_DeleteTensor(s->outs[i]);
  return bench_ok(b, "compute");
}

struct tfocl_op *bench_make_op(struct bench *b, const char *op_name,
                               const struct tfocl_attr *attrs, int num_attrs,
                               const TF_DataType *types, int n)
{
  struct tfocl_op *op =
      tfocl_op_create(b->dev, op_name, attrs, num_attrs, types, n, b->st);
  return bench_ok(b, op_name) ? op : NULL;
}

struct side bench_op_side(struct op_side *o, double work)
{
  return (struct side){"", op_rep, o, work, o->op != NULL,
                       "op could not be created"};
}

struct side bench_op_stream_side(struct op_stream_side *s, double work)
{
  return (struct side){"",   op_stream_rep,   s,
                       work, s->o.op != NULL, "op could not be created"};
}

bool bench_copy_rep(struct bench *b, void *p, double *seconds)
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
  return bench_ok(b, "copy");
}

/* ---- Host sides -------------------------------------------------------- */

bool bench_host_rep(struct bench *b, void *p, double *seconds)
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
    for (int i = 0; i < h->batches * (h->repeat > 1 ? h->repeat : 1); i++) {
      size_t at = (size_t)(i % h->batches);
      size_t sa = (size_t)h->m * (size_t)h->k, sb = (size_t)h->k * (size_t)h->n;
      bench_blas_sgemm(h->ta, h->tb, h->m, h->n, h->k, h->x + at * sa,
                       h->y + at * sb, h->z + at * (size_t)h->m * (size_t)h->n);
    }
    break;
  }
  *seconds = bench_now() - t0;
  return true;
}

char bench_host_loop_name[64];
struct side bench_host_side(struct host_side *h, double work)
{
  return (
      struct side){bench_host_loop_name, bench_host_rep, h, work, true, NULL};
}

static char blas_side_name[64];
struct side bench_blas_side(struct bench *b, struct host_side *h, double work)
{
  return (struct side){blas_side_name, bench_host_rep, h,
                       work,           b->blas_ok,     b->blas_why};
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
    rc = bench_first_op_child(&b);
    tfocl_device_close(b.dev);
    tfocl_plugin_unload(b.plugin);
    TF_DeleteStatus(b.st);
    return rc;
  }

  snprintf(bench_host_loop_name, sizeof(bench_host_loop_name),
           "host loop (%d threads)", bench_host_threads());
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
  /* Steady state as under TensorFlow: an op's output does not cost an
   * allocate() and a deallocate() per call where TensorFlow's BFC allocator
   * would hand back the block the last call freed. */
  b.reuses_memory = tfocl_device_keep_freed_memory(b.dev, true);
  b.se = tfocl_plugin_stream_executor(b.plugin);
  b.sp = tfocl_device_sp(b.dev);
  fprintf(stderr, "tfocl bench: device %s, BLAS %s\n", bench_device_name(&b),
          b.blas_ok ? b.blas_name : b.blas_why);

  /* Cheap cases first: a filtered smoke run reaches them at once. */
  bench_tiny(&b);
  bench_copies(&b);
  bench_elementwise(&b);
  bench_broadcast(&b);
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
    bench_print_json(&b);
  else
    bench_print_markdown(&b);
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
