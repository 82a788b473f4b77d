/* tfocl bench's overhead cases: the enqueue cost of tiny ops against raw
 * OpenCL, copies against host memcpy, and first-op latency in fresh
 * processes with a warm and an empty program cache. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tfocl_bench_internal.h"

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
  return bench_ok(b, "AddV2");
}

struct raw_side {
  struct bench_rawcl *raw;
  enum bench_rawcl_kernel which;
  int count;
  bool enqueue_only;
};

static bool raw_rep(struct bench *b, void *p, double *seconds)
{
  struct raw_side *r = p;
  double enq = 0, total = bench_rawcl_run(r->raw, r->which, r->count, &enq);
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
  b->raw =
      bench_rawcl_open(b->sp->hardware_name, b->raw_why, sizeof(b->raw_why));
}

void bench_tiny(struct bench *b)
{
  static const char *const names[] = {"tiny/AddV2_4_throughput",
                                      "tiny/AddV2_4_enqueue"};
  if (!bench_want(b, names[0]) && !bench_want(b, names[1]))
    return;
  open_raw(b);
  int count = b->quick ? 200 : 2000, reps = bench_reps_or(b, 7, 3);
  int64_t dims[1] = {4};
  TF_Tensor *hx = bench_host_random(dims, 1, 1),
            *hy = bench_host_random(dims, 1, 2);
  struct tiny_side t = {NULL,
                        {bench_to_device(b, hx), bench_to_device(b, hy)},
                        calloc((size_t)count, sizeof(TF_Tensor *)),
                        count,
                        false};
  const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
  const TF_DataType types[] = {TF_FLOAT, TF_FLOAT};
  if (t.in[0] != NULL && t.in[1] != NULL)
    t.op = bench_make_op(b, "AddV2", attrs, 1, types, 2);
  /* Two floors: PoCL's per-command cost alone (the empty kernel), and with
   * the plugin's arguments set at every launch, as the op does: the gap
   * between the second and ours is the plugin's and the shim's. */
  struct raw_side raw[2] = {{b->raw, BENCH_RAWCL_EMPTY, count, false},
                            {b->raw, BENCH_RAWCL_ADD, count, false}};
  for (int i = 0; i < 2; i++) {
    if (!bench_want(b, names[i]))
      continue;
    t.enqueue_only = raw[0].enqueue_only = raw[1].enqueue_only = i == 1;
    struct side ours = {"",           tiny_rep,
                        &t,           (double)count,
                        t.op != NULL, "op could not be created"};
    struct side refs[2] = {{"raw OpenCL empty kernel", raw_rep, &raw[0],
                            (double)count, b->raw != NULL, b->raw_why},
                           {"raw OpenCL add, 7 arguments set per launch",
                            raw_rep, &raw[1], (double)count, b->raw != NULL,
                            b->raw_why}};
    char note[160];
    snprintf(note, sizeof(note), "%d ops on [4] floats back to back, %s", count,
             i == 0 ? "one synchronize at the end"
                    : "host time per enqueue (no sync)");
    bench_measure(b, names[i], i == 0 ? OPS : US_PER_OP, true, &ours, refs, 2,
                  reps, note);
  }
  tfocl_op_destroy(t.op);
  free(t.outs);
  TF_DeleteTensor(t.in[0]);
  TF_DeleteTensor(t.in[1]);
  TF_DeleteTensor(hx);
  TF_DeleteTensor(hy);
}

/* ---- Copies vs host memcpy --------------------------------------------- */

void bench_copies(struct bench *b)
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
    any |= bench_want(b, cases[i].name);
  if (!any)
    return;
  size_t bytes = bench_big_bytes(b), n = bytes / sizeof(float);
  int reps = bench_reps_or(b, 10, 3);
  int64_t dims[1] = {(int64_t)n};
  float *host = malloc(bytes), *host2 = malloc(bytes);
  bench_fill_random(host, n, 3);
  memset(host2, 0, bytes);
  TF_Tensor *da = tfocl_tensor_alloc_device(b->dev, TF_FLOAT, dims, 1, b->st);
  TF_Tensor *db =
      bench_ok(b, "alloc")
          ? tfocl_tensor_alloc_device(b->dev, TF_FLOAT, dims, 1, b->st)
          : NULL;
  if (bench_ok(b, "alloc")) {
    /* Touch both device buffers once so no case pays first-touch faults. */
    struct copy_side init = {COPY_H2D_SYNC, host, TF_TensorData(da), NULL,
                             bytes};
    double s;
    bench_copy_rep(b, &init, &s);
    init.dev_a = TF_TensorData(db);
    bench_copy_rep(b, &init, &s);
    for (size_t i = 0; i < num; i++) {
      if (!bench_want(b, cases[i].name))
        continue;
      struct copy_side c = {cases[i].kind, host, TF_TensorData(da),
                            TF_TensorData(db), bytes};
      if (cases[i].kind == COPY_D2H || cases[i].kind == COPY_D2H_SYNC)
        c.host = host2;
      struct host_side h = {
          .kind = HOST_MEMCPY, .z = host2, .x = host, .rows = 1, .cols = n};
      struct side ours = {"", bench_copy_rep, &c, (double)bytes, true, NULL};
      struct side ref = {"host memcpy (1 thread)",
                         bench_host_rep,
                         &h,
                         (double)bytes,
                         true,
                         NULL};
      char note[160];
      snprintf(note, sizeof(note), "%zu MiB, %s; bytes copied", bytes >> 20,
               cases[i].what);
      bench_measure(b, cases[i].name, GBPS, false, &ours, &ref, 1, reps, note);
    }
  }
  TF_DeleteTensor(da);
  TF_DeleteTensor(db);
  free(host);
  free(host2);
}

/* ---- First-op latency in fresh processes -------------------------------- */

/* The child: load, open, one AddV2 of 1024 floats, again; prints one line. */
int bench_first_op_child(struct bench *b)
{
  double t0 = bench_now();
  b->plugin = tfocl_load_plugin(&b->common);
  if (b->plugin == NULL)
    return TFOCL_EXIT_ERROR;
  double t1 = bench_now();
  b->dev = tfocl_device_open(b->plugin, b->device_ordinal, b->st);
  if (!bench_ok(b, "device"))
    return TFOCL_EXIT_ERROR;
  double t2 = bench_now();
  int64_t dims[1] = {1024};
  TF_Tensor *hx = bench_host_random(dims, 1, 1),
            *hy = bench_host_random(dims, 1, 2);
  TF_Tensor *in[2] = {bench_to_device(b, hx), bench_to_device(b, hy)};
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
    if (!bench_ok(b, "AddV2"))
      return TFOCL_EXIT_ERROR;
  }
  printf("first_op total_s=%.9f load_s=%.9f open_s=%.9f op_s=%.9f "
         "second_s=%.9f\n",
         (t3 - t0) + op_s[0], t1 - t0, t2 - t1, op_s[0], op_s[1]);
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
    char *args[] = {"tfocl", "bench",    "--first-op",   "--device",
                    dev,     "--plugin", b->plugin_path, NULL};
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
      sscanf(buf,
             "first_op total_s=%lf load_s=%lf open_s=%lf op_s=%lf "
             "second_s=%lf",
             &out[0], &load, &open, &out[1], &out[2]) != 5) {
    fprintf(stderr,
            "tfocl bench: the --first-op child failed (status %d): "
            "%s\n",
            wstatus, buf);
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

void bench_first_op(struct bench *b)
{
  static const char *const names[] = {"first_op/process_to_result",
                                      "first_op/AddV2_first_call"};
  if (!bench_want(b, names[0]) && !bench_want(b, names[1]))
    return;
  int reps = bench_reps_or(b, 3, 1);
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
    if (bench_want(b, names[i])) {
      struct row *row = bench_new_row(b, names[i], MS, false);
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
      bench_progress(b, row);
    } else {
      free(cold[i].v);
      free(warm[i].v);
    }
  }
}
