/* Which GEMM implementation runs a product: measured once per device and
 * size class, remembered in the process and in a small cache file.
 *
 * A size class buckets m, n and k (<= 16, 64, 256, 1024, more) and the
 * batch (1, <= 16, more), per dtype. On its first product the candidates
 * run on that product itself: each once untimed (program builds,
 * CLBlast's kernel compilation), then timed in alternating rounds, 3, or
 * up to 5 while a round takes under 5 ms; the product's output is simply
 * overwritten by the winner's run that follows. That blocks the calling
 * thread for the measurement (ocl_op_finish, which sleeps where clFinish
 * would spin a core on NVIDIA): once per class and device, a few
 * milliseconds at the sizes tests use, four runs of each candidate at
 * large ones (0.7 s for a 2048^3 product on the 2-core PoCL host).
 *
 * The cache file (gemm/choices in tfocl's cache directory: plugin/
 * cache_dir.h, a directory of the user's own that only it can write, as
 * the program binaries') holds one line per decision, keyed by the
 * device's name and driver version, tfocl's build and CLBlast's library
 * (gemm_identity), the host libraries a candidate brings (a host BLAS's
 * speed follows the process's environment: OPENBLAS_CORETYPE,
 * OPENBLAS_NUM_THREADS) and the class, so a new driver, tfocl, CLBlast or
 * library setting measures again. It is read once per device and appended to; anything unreadable
 * in it is ignored, and a cache that cannot be written costs only a
 * measurement per process. TFOCL_GEMM_TUNE=0 turns all of it off: no
 * measurement, no file, the caller's fallback (deterministic runs).
 *
 * The OpenCL calls here (the queue's device, its facts) are not enqueues
 * and have no runtime.h counterpart. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_dir.h"
#include "gemm_internal.h"

#define TUNE_MAX_DEVICES 64
#define SIZE_BUCKETS 5
#define BATCH_BUCKETS 3
#define NUM_CLASSES \
  (2 * SIZE_BUCKETS * SIZE_BUCKETS * SIZE_BUCKETS * BATCH_BUCKETS)

static const char *const impl_names[GEMM_NUM_IMPLS] = {"own", "clblast",
                                                       "blas"};

struct tune_device {
  bool probed; /* id, native, name and driver read */
  bool loaded; /* the cache file's lines for it read */
  char identity[GEMM_IDENTITY_MAX]; /* the build it was loaded for */
  char host_libs[96]; /* and the host libraries */
  cl_device_id id;
  bool native_kernels;
  char name[128];
  char driver[64];
  /* 0: not decided; else 1 + enum gemm_impl. */
  _Atomic unsigned char choice[NUM_CLASSES];
};

static struct {
  /* lock: measuring and the cache; probe_lock: a device's facts (asked for
   * by the implementations being measured, under lock). */
  pthread_mutex_t lock;
  pthread_mutex_t probe_lock;
  pthread_once_t env_once;
  bool enabled;
  char path[4096];
  struct tune_device devices[TUNE_MAX_DEVICES];
} tune = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .probe_lock = PTHREAD_MUTEX_INITIALIZER,
          .env_once = PTHREAD_ONCE_INIT};

static void read_env(void)
{
  tune.enabled = ocl_config()->gemm_tune;
  char dir[sizeof(tune.path) - 16];
  tune.path[0] = '\0';
  if (tune.enabled && ocl_cache_subdir("gemm", dir, sizeof(dir)))
    snprintf(tune.path, sizeof(tune.path), "%s/choices", dir);
}

/* A device string fit for a tab-separated line. */
static void clean(char *s)
{
  for (; *s; s++)
    if (*s == '\t' || *s == '\n' || *s == '\r')
      *s = ' ';
}

/* Caller holds tune.probe_lock. */
static void probe(struct tune_device *d, cl_device_id id)
{
  d->probed = true;
  d->id = id;
  if (id == NULL)
    return;
  cl_device_exec_capabilities caps = 0;
  if (clGetDeviceInfo(d->id, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof(caps),
                      &caps, NULL) == CL_SUCCESS)
    d->native_kernels = (caps & CL_EXEC_NATIVE_KERNEL) != 0;
  if (clGetDeviceInfo(d->id, CL_DEVICE_NAME, sizeof(d->name) - 1, d->name,
                      NULL) != CL_SUCCESS)
    snprintf(d->name, sizeof(d->name), "?");
  if (clGetDeviceInfo(d->id, CL_DRIVER_VERSION, sizeof(d->driver) - 1,
                      d->driver, NULL) != CL_SUCCESS)
    snprintf(d->driver, sizeof(d->driver), "?");
  clean(d->name);
  clean(d->driver);
}

static struct tune_device *device_of(struct ocl_op *op)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL || info->ordinal < 0 || info->ordinal >= TUNE_MAX_DEVICES)
    return NULL;
  struct tune_device *d = &tune.devices[info->ordinal];
  pthread_mutex_lock(&tune.probe_lock);
  if (!d->probed)
    probe(d, ocl_op_device_id(op));
  pthread_mutex_unlock(&tune.probe_lock);
  return d->id != NULL ? d : NULL;
}

cl_device_id gemm_device_id(struct ocl_op *op, bool *native_kernels)
{
  struct tune_device *d = device_of(op);
  *native_kernels = d != NULL && d->native_kernels;
  return d != NULL ? d->id : NULL;
}

/* ---- Size classes ------------------------------------------------------------ */

static int size_bucket(int64_t x)
{
  return x <= 16 ? 0 : x <= 64 ? 1 : x <= 256 ? 2 : x <= 1024 ? 3 : 4;
}

static int class_of(const struct gemm *g)
{
  int dt = g->dtype == TF_HALF ? 1 : 0;
  int bb = g->batches <= 1 ? 0 : g->batches <= 16 ? 1 : 2;
  return (((dt * SIZE_BUCKETS + size_bucket(g->m)) * SIZE_BUCKETS +
           size_bucket(g->n)) *
              SIZE_BUCKETS +
          size_bucket(g->k)) *
             BATCH_BUCKETS +
         bb;
}

static void class_name(int cls, char *buf, size_t len)
{
  int bb = cls % BATCH_BUCKETS;
  cls /= BATCH_BUCKETS;
  int kb = cls % SIZE_BUCKETS;
  cls /= SIZE_BUCKETS;
  int nb = cls % SIZE_BUCKETS;
  cls /= SIZE_BUCKETS;
  int mb = cls % SIZE_BUCKETS;
  int dt = cls / SIZE_BUCKETS;
  snprintf(buf, len, "%s:m%d:n%d:k%d:b%d", dt ? "half" : "float", mb, nb, kb,
           bb);
}

/* ---- The cache file ----------------------------------------------------------- */

#define CACHE_MAGIC "tfocl-gemm-3"
#define CACHE_FIELDS 7
#define CACHE_LINE_MAX 1024

/* Caller holds tune.lock. */
/* The cache file, only as a regular file of this user's that others
 * cannot write, never through a link. */
static FILE *open_private(const char *path, int flags, const char *mode)
{
  struct stat st;
  int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    close(fd);
    return NULL;
  }
  FILE *f = fdopen(fd, mode);
  if (f == NULL)
    close(fd);
  return f;
}

static void cache_load(struct tune_device *d, const char *identity,
                       const char *host_libs)
{
  d->loaded = true;
  snprintf(d->identity, sizeof(d->identity), "%s", identity);
  clean(d->identity);
  snprintf(d->host_libs, sizeof(d->host_libs), "%s", host_libs);
  if (tune.path[0] == '\0')
    return;
  FILE *f = open_private(tune.path, O_RDONLY, "r");
  if (f == NULL)
    return;
  char line[CACHE_LINE_MAX];
  while (fgets(line, sizeof(line), f) != NULL) {
    char *fields[CACHE_FIELDS];
    char *save = NULL, *p = line;
    int n = 0;
    line[strcspn(line, "\n")] = '\0';
    while (n < CACHE_FIELDS &&
           (fields[n] = strtok_r(p, "\t", &save)) != NULL) {
      p = NULL;
      n++;
    }
    if (n != CACHE_FIELDS || strcmp(fields[0], CACHE_MAGIC) != 0 ||
        strcmp(fields[1], d->name) != 0 || strcmp(fields[2], d->driver) != 0 ||
        strcmp(fields[3], d->identity) != 0 ||
        strcmp(fields[4], d->host_libs) != 0)
      continue;
    for (int cls = 0; cls < NUM_CLASSES; cls++) {
      char name[48];
      class_name(cls, name, sizeof(name));
      if (strcmp(name, fields[5]) != 0)
        continue;
      for (int i = 0; i < GEMM_NUM_IMPLS; i++)
        if (strcmp(impl_names[i], fields[6]) == 0)
          atomic_store(&d->choice[cls], (unsigned char)(1 + i));
    }
  }
  fclose(f);
}


/* Caller holds tune.lock. */
static void cache_append(const struct tune_device *d, int cls,
                         enum gemm_impl impl)
{
  if (tune.path[0] == '\0')
    return;
  FILE *f = open_private(tune.path, O_WRONLY | O_APPEND | O_CREAT, "a");
  if (f == NULL)
    return;
  char name[48];
  class_name(cls, name, sizeof(name));
  /* One line per write: appends from several processes stay whole. */
  char line[CACHE_LINE_MAX];
  int n = snprintf(line, sizeof(line), "%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
                   CACHE_MAGIC, d->name, d->driver, d->identity, d->host_libs,
                   name, impl_names[impl]);
  if (n > 0 && (size_t)n < sizeof(line))
    fwrite(line, 1, (size_t)n, f);
  fclose(f);
}

/* ---- Measuring ----------------------------------------------------------------- */

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One run of impl on g, waited for: its seconds, or -1 if it failed (the
 * op's status cleared again). */
static double timed_run(struct ocl_op *op, const struct gemm *g,
                        gemm_impl_fn impl)
{
  double t0 = now();
  bool ok = impl(op, g) && ocl_op_finish(op);
  double t = now() - t0;
  if (!ok || !ocl_op_ok(op)) {
    ocl_set_ok(op->status);
    return -1;
  }
  return t;
}

bool gemm_host_threads_linger(void)
{
  enum { NAP_NS = 5000000 };
  struct timespec c0, c1, nap = {0, NAP_NS};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0) != 0)
    return false;
  while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
    ;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1) != 0)
    return false;
  double busy = (double)(c1.tv_sec - c0.tv_sec) +
                1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
  return busy > 0.5e-9 * NAP_NS;
}

/* The fastest candidate on g itself: each warmed up, then timed in
 * alternating rounds (a busy neighbour then slows every candidate alike),
 * at least 3, up to 5 while a round stays under ~5 ms; the fastest run of
 * each counts. A candidate displaces the fallback only when >= 10 %
 * faster: noise must not trade a known-good default for an equal one, and
 * runs back to back miss what a host BLAS pays in a train step to wake
 * its threads after the device's kernels. Where the fallback's run takes
 * over 5 ms, that cost is a few percent of it, and 5 % is margin enough:
 * 10 % kept the plugin's kernel at 2048^3 against a host BLAS 9 % faster
 * (180 and 197 GFLOP/s, in two processes each); the fastest of 3 rounds
 * repeated within 1 %. */
static enum gemm_impl measure(struct ocl_op *op, const struct gemm *g,
                              unsigned candidates, enum gemm_impl fallback,
                              const gemm_impl_fn impls[GEMM_NUM_IMPLS])
{
  double best[GEMM_NUM_IMPLS];
  /* Whatever the stream holds before this product is not its time. */
  if (!ocl_op_finish(op))
    return fallback;
  for (int i = 0; i < GEMM_NUM_IMPLS; i++) {
    best[i] = -1;
    if ((candidates & GEMM_IMPL_BIT(i)) && timed_run(op, g, impls[i]) >= 0)
      best[i] = 1e30; /* warmed up: in the race */
  }
  for (int round = 0; round < 5; round++) {
    double round_time = 0;
    for (int i = 0; i < GEMM_NUM_IMPLS; i++) {
      if (best[i] < 0)
        continue;
      double t = timed_run(op, g, impls[i]);
      if (t < 0) {
        best[i] = -1; /* failed after all: out */
        continue;
      }
      if (t < best[i])
        best[i] = t;
      round_time += t;
    }
    if (round >= 2 && round_time > 5e-3)
      break;
  }
  /* Each round ends with the host BLAS (the last impl). OpenBLAS's threads
   * by default spin for ~0.1 s after a call, each taking a core from the
   * device's own kernels that follow: beside them our kernel measured 9.6
   * against 5.4 ms (1024^3) and 71 against 40 (2048^3) on 2-core PoCL, so
   * the BLAS at 8.2 and 66 won and then slowed every step it was in. */
  _Static_assert(GEMM_IMPL_BLAS == GEMM_NUM_IMPLS - 1, "BLAS runs last");
  if (best[GEMM_IMPL_BLAS] >= 0 && gemm_host_threads_linger())
    best[GEMM_IMPL_BLAS] = -1;
  enum gemm_impl pick = fallback;
  double margin = best[fallback] > 5e-3 ? 0.95 : 0.9;
  double pick_time = best[fallback] >= 0 ? best[fallback] * margin : 1e30;
  for (int i = 0; i < GEMM_NUM_IMPLS; i++)
    if (best[i] >= 0 && i != (int)fallback && best[i] < pick_time) {
      pick = (enum gemm_impl)i;
      pick_time = best[i];
    }
  return pick;
}

enum gemm_impl gemm_tune_pick(struct ocl_op *op, const struct gemm *g,
                              unsigned candidates, enum gemm_impl fallback,
                              const char *identity, const char *host_libs,
                              const gemm_impl_fn impls[GEMM_NUM_IMPLS])
{
  pthread_once(&tune.env_once, read_env);
  if (!tune.enabled)
    return fallback;
  struct tune_device *d = device_of(op);
  if (d == NULL)
    return fallback;
  int cls = class_of(g);
  unsigned char c = atomic_load_explicit(&d->choice[cls],
                                         memory_order_relaxed);
  if (c != 0 && (candidates & GEMM_IMPL_BIT(c - 1)))
    return (enum gemm_impl)(c - 1);

  /* One measurement at a time: a second thread on the same class finds
   * the first one's answer. */
  pthread_mutex_lock(&tune.lock);
  if (!d->loaded)
    cache_load(d, identity, host_libs);
  c = atomic_load(&d->choice[cls]);
  enum gemm_impl pick;
  if (c != 0 && (candidates & GEMM_IMPL_BIT(c - 1))) {
    pick = (enum gemm_impl)(c - 1);
  } else {
    pick = measure(op, g, candidates, fallback, impls);
    atomic_store(&d->choice[cls], (unsigned char)(1 + pick));
    cache_append(d, cls, pick);
  }
  pthread_mutex_unlock(&tune.lock);
  return pick;
}
