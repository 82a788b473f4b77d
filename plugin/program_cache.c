/* tfocl plugin: OpenCL programs, built lazily once per cl_context and
 * kernel family, kept until the context goes (destroy_platform).
 *
 * A family is built for every device of the context at once. The cache lock
 * only guards the list; each entry has its own lock held while it builds,
 * so families build in parallel and a second caller of the same family
 * waits for the first build instead of starting another. A failed build is
 * remembered with its log (the source is constant, a retry cannot help),
 * unless the driver ran out of memory or resources: that failure is
 * reported and the next call builds again.
 *
 * Every program is built with -cl-fp32-correctly-rounded-divide-sqrt where
 * every device of the context supports it: OpenCL C lets float division
 * err by 2.5 ulp and sqrt by 3 (NVIDIA's compiler takes that freedom),
 * while TensorFlow's CPU kernels divide as IEEE does, and FloorDiv's
 * floor(a / b) is off by one wherever a quotient that should be an integer
 * comes out just below it.
 *
 * Builds ahead. A second process would otherwise build each program at
 * the first launch that needs it, one after another inside the first train
 * step (PoCL takes 20-50 ms per program even from its own cache, mostly
 * preprocessing its kernel header again; Intel's CPU runtime 7-200 ms per
 * kept binary, reading its configuration file once per kernel). So each
 * context keeps a list of the programs its processes asked for, most
 * recent first, in the cache directory ($TFOCL_CACHE_DIR/warm/, one file
 * per platform and device set and command line, at most WARM_MAX lines
 * "family<TAB>options<TAB>runs", WARM_FILES files), and the next process
 * of the same command's first device open starts a thread that builds
 * them while TensorFlow is still tracing the model. A command is one
 * script whatever its arguments, but a script run with other arguments
 * (a benchmark's model, a test's case) may ask for other programs, and
 * building those ahead took the cores from the first steps (a small CNN's
 * first 40 steps took 13.7 ms each instead of 9.3 behind the builds of
 * seven other models' programs). So each line also names, by a hash of all
 * their arguments, the last WARM_RUNS runs that asked for it: a process
 * builds the lines of its own run where it finds any, else those of the
 * run that wrote the list last (the script's latest run: `python train.py
 * --json <a new name>`), else, for lines of no run, all of them. A line
 * names a program of the plugin's own tables (program_table.c), or a
 * generated one whose name parses and checks as its kernel's would (the
 * fused element-wise kernels: "fused:" and the program's text), or is
 * skipped: the list selects what to build and never brings code. A
 * program built ahead is checked against the source its first kernel
 * brings, by hash, and built again from that one where they differ. The
 * list is read under the binaries' rules (a regular file of the user's,
 * in a directory only the user can write, not through a link) and
 * replaced atomically. Only the programs a process asked for go in, so
 * programs it never used fall off the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_dir.h"
#include "ocl.h"

struct ocl_program {
  char *family;
  char *options;
  pthread_mutex_t lock;
  bool built;
  cl_program program; /* owned; NULL if the build failed */
  char *error;        /* the failure message, with the build log */
  bool asked;         /* a kernel asked for it: it goes on the warm list */
  /* Built ahead: the hash of the source it was built from, which the
   * first kernel to ask checks against its own (0 otherwise). */
  uint64_t ahead_source;
  struct ocl_program *next;
};

/* At most this many programs on a warm list: more than any one model uses
 * (the digits MLP asks for 17, of which 12 in the tables). */
#define WARM_MAX 64
#define WARM_LINE 512
#define WARM_FILES 256
#define WARM_RUNS 8

/* A line of the list read: its program, and the runs that asked for it,
 * the most recent first. */
struct warm_line {
  char text[WARM_LINE]; /* family<TAB>options */
  uint64_t runs[WARM_RUNS];
  int num_runs;
};

struct ocl_program_cache {
  pthread_mutex_t lock;
  struct ocl_program *programs;
  /* Where program binaries are kept between processes
   * (program_binaries.c), chosen when the context's first program is
   * asked for; "" when none is. */
  char binaries_dir[4096];
  /* The warm list's file ("" for none), the lines read from it when the
   * cache was made, and the ones this process asked for, in order; this
   * run's hash, and the run whose lines are built ahead (0: all). Guarded
   * by warm_lock; the prefetch thread reads `warm_read` and `ahead_run`
   * only. */
  pthread_mutex_t warm_lock;
  char warm_path[4200];
  struct warm_line *warm_read;
  int num_read;
  uint64_t run;
  uint64_t ahead_run;
  char (*warm_asked)[WARM_LINE];
  int num_asked;
  /* The thread building ahead (prefetch_started once it runs). */
  pthread_t prefetch;
  bool prefetch_started;
  atomic_bool prefetch_stop;
  struct ocl_device *prefetch_dev;
};

static atomic_uint programs_prefetched;

unsigned ocl_programs_prefetched(void)
{
  return atomic_load(&programs_prefetched);
}

static void prefetch_join(struct ocl_program_cache *cache);

void ocl_program_cache_destroy(struct ocl_program_cache *cache) {
  if (!cache) return;
  prefetch_join(cache);
  free(cache->warm_read);
  free(cache->warm_asked);
  pthread_mutex_destroy(&cache->warm_lock);
  while (cache->programs) {
    struct ocl_program *p = cache->programs;
    cache->programs = p->next;
    if (p->program) clReleaseProgram(p->program);
    pthread_mutex_destroy(&p->lock);
    free(p->family);
    free(p->options);
    free(p->error);
    free(p);
  }
  pthread_mutex_destroy(&cache->lock);
  free(cache);
}

/* Whether program binaries are worth keeping on this platform. Not on
 * PoCL: it keeps its own cache of compiled kernels (POCL_CACHE_DIR), and
 * handing out a program's binary makes it compile every kernel of the
 * program at once (the matmul family's first MatMul took 68 s instead of
 * 5 with its cache off). TFOCL_KEEP_POCL_BINARIES=1 (a test hook) keeps
 * them there too. */
static bool keeps_binaries(const struct ocl_context *ctx)
{
  return ocl_config()->hooks.keep_pocl_binaries || !ctx->is_pocl;
}

#define FNV_START 14695981039346656037ull

static uint64_t fnv1a(uint64_t h, const char *s)
{
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* A hash of the process's command (/proc/self/cmdline): the programs a
 * process asks for depend on what it runs, and building ahead the
 * programs of another command (a test suite's previous test, another
 * model) would only take the cores from this one. The command is the
 * arguments up to the first one after the program's own name that names
 * a regular file (an interpreter's script: `python train.py`), else all of
 * them: what follows a script (epochs, an output file of a new name each
 * run) seldom changes the programs it asks for, and a list keyed on it
 * would never be found again. */
static void command_hashes(uint64_t *command, uint64_t *run)
{
  char buf[16384];
  uint64_t h = FNV_START;
  *command = *run = h;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  size_t len = 0;
  for (;;) {
    ssize_t got = read(fd, buf + len, sizeof buf - 1 - len);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    len += (size_t)got;
  }
  close(fd);
  buf[len] = '\0'; /* a command line cut at the buffer's end still hashes */
  bool script_seen = false;
  for (size_t at = 0; at < len;) {
    const char *arg = buf + at;
    struct stat st;
    h = fnv1a(h, arg) * 1099511628211ull; /* the '\0' between arguments */
    if (!script_seen) {
      *command = h;
      script_seen = at > 0 && stat(arg, &st) == 0 && S_ISREG(st.st_mode);
    }
    at += strlen(arg) + 1;
  }
  *run = h;
}

/* The warm list's file: one per platform and device set (name, version,
 * driver version), since a program is built for all of a context's
 * devices, and per command line; and this run's hash. False when nothing
 * is kept. */
static bool warm_path_of(const struct ocl_context *ctx, char *path, size_t size,
                         uint64_t *run)
{
  char dir[4096], text[256];
  uint64_t h = FNV_START;
  static const cl_platform_info pinfo[] = {CL_PLATFORM_NAME,
                                           CL_PLATFORM_VERSION};
  static const cl_device_info dinfo[] = {CL_DEVICE_NAME, CL_DEVICE_VERSION,
                                         CL_DRIVER_VERSION};

  if (!ocl_cache_subdir("warm", dir, sizeof dir))
    return false;
  for (size_t i = 0; i < sizeof pinfo / sizeof *pinfo; i++) {
    text[0] = '\0';
    clGetPlatformInfo(ctx->platform, pinfo[i], sizeof text - 1, text, NULL);
    h = fnv1a(fnv1a(h, text), "\n");
  }
  for (cl_uint d = 0; d < ctx->num_devices; d++)
    for (size_t i = 0; i < sizeof dinfo / sizeof *dinfo; i++) {
      text[0] = '\0';
      clGetDeviceInfo(ctx->devices[d], dinfo[i], sizeof text - 1, text, NULL);
      h = fnv1a(fnv1a(h, text), "\n");
    }
  uint64_t command;
  command_hashes(&command, run);
  int n = snprintf(path, size, "%s/%016llx-%016llx.txt", dir,
                   (unsigned long long)h, (unsigned long long)command);
  return n > 0 && (size_t)n < size;
}

/* At most WARM_FILES lists are kept: before a command writes its first
 * list, the least recently written others go, down to WARM_FILES - 1. */
static void warm_prune(const char *path)
{
  char dir[4200], victim[4400];
  const char *slash = strrchr(path, '/');
  if (!slash || (size_t)(slash - path) >= sizeof dir)
    return;
  memcpy(dir, path, (size_t)(slash - path));
  dir[slash - path] = '\0';
  for (;;) {
    DIR *d = opendir(dir);
    if (!d)
      return;
    int count = 0;
    time_t oldest_time = 0;
    char oldest[256] = "";
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      struct stat st;
      size_t len = strlen(e->d_name);
      if (len < 5 || strcmp(e->d_name + len - 4, ".txt") != 0 ||
          len >= sizeof oldest ||
          fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue;
      count++;
      if (oldest[0] == '\0' || st.st_mtime < oldest_time) {
        oldest_time = st.st_mtime;
        memcpy(oldest, e->d_name, len + 1);
      }
    }
    closedir(d);
    if (count < WARM_FILES || oldest[0] == '\0')
      return;
    snprintf(victim, sizeof victim, "%s/%s", dir, oldest);
    if (unlink(victim) != 0)
      return;
  }
}

/* Splits a line's third field, runs as hex hashes separated by commas,
 * into l->runs; a field that does not parse gives the line no runs. */
static void warm_parse_runs(struct warm_line *l, const char *field)
{
  l->num_runs = 0;
  while (*field && l->num_runs < WARM_RUNS) {
    char *end;
    errno = 0;
    unsigned long long run = strtoull(field, &end, 16);
    if (errno != 0 || end - field != 16 || (*end != ',' && *end != '\0')) {
      l->num_runs = 0;
      return;
    }
    l->runs[l->num_runs++] = run;
    field = *end ? end + 1 : end;
  }
}

static bool warm_line_has_run(const struct warm_line *l, uint64_t run)
{
  for (int i = 0; i < l->num_runs; i++)
    if (l->runs[i] == run)
      return true;
  return false;
}

/* The run whose lines this process builds ahead (0: every line): its
 * own, else the list's last writer's (the first run of its first line). */
static uint64_t warm_ahead_run(const struct ocl_program_cache *cache)
{
  for (int i = 0; i < cache->num_read; i++)
    if (warm_line_has_run(&cache->warm_read[i], cache->run))
      return cache->run;
  return cache->num_read > 0 && cache->warm_read[0].num_runs > 0
             ? cache->warm_read[0].runs[0]
             : 0;
}

/* Reads the warm list into cache->warm_read. Lines that do not fit, or
 * with no tab, are dropped; a file that is not the user's own regular
 * file, or that others can write, is not read. */
static void warm_read(struct ocl_program_cache *cache)
{
  struct stat st;
  int fd = open(cache->warm_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  FILE *f = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
      (f = fdopen(fd, "r")) == NULL) {
    close(fd);
    return;
  }
  cache->warm_read = calloc(WARM_MAX, sizeof *cache->warm_read);
  char line[WARM_LINE + 17 * WARM_RUNS + 1];
  while (cache->warm_read && cache->num_read < WARM_MAX &&
         fgets(line, sizeof line, f)) {
    size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n') {
      /* Too long (or the last line cut short): skip to the next one. */
      int c;
      while (len == sizeof line - 1 && (c = fgetc(f)) != EOF && c != '\n') {
      }
      continue;
    }
    line[len - 1] = '\0';
    char *tab = strchr(line, '\t');
    if (tab == NULL)
      continue;
    struct warm_line *l = &cache->warm_read[cache->num_read];
    char *runs = strchr(tab + 1, '\t');
    if (runs)
      *runs++ = '\0';
    if (strlen(line) >= sizeof l->text)
      continue;
    strcpy(l->text, line);
    warm_parse_runs(l, runs ? runs : "");
    cache->num_read++;
  }
  fclose(f);
  cache->ahead_run = warm_ahead_run(cache);
}

/* Writes a line: its program, this run if it asked for it, then the runs
 * read for it, up to WARM_RUNS. */
static void warm_write_line(FILE *f, const char *text, uint64_t asked_by,
                            const struct warm_line *read)
{
  int num = 0;
  fputs(text, f);
  if (asked_by) {
    fprintf(f, "\t%016llx", (unsigned long long)asked_by);
    num++;
  }
  for (int i = 0; read && i < read->num_runs && num < WARM_RUNS; i++)
    if (read->runs[i] != asked_by)
      fprintf(f, "%c%016llx", num++ ? ',' : '\t',
              (unsigned long long)read->runs[i]);
  fputc('\n', f);
}

static const struct warm_line *warm_line_read(
    const struct ocl_program_cache *cache, const char *text)
{
  for (int i = 0; i < cache->num_read; i++)
    if (strcmp(cache->warm_read[i].text, text) == 0)
      return &cache->warm_read[i];
  return NULL;
}

/* Notes that a kernel asked for p and rewrites the list: this process's
 * programs in the order asked, then the earlier list's others, WARM_MAX in
 * all. Written to a temporary name and renamed: a reader sees a whole
 * list. Any failure only loses the hint. */
static void warm_note(struct ocl_program_cache *cache,
                      const struct ocl_program *p)
{
  char line[WARM_LINE], tmp[4300];
  int n = snprintf(line, sizeof line, "%s\t%s", p->family, p->options);
  if (n < 0 || (size_t)n >= sizeof line || strchr(p->family, '\n') ||
      strchr(p->family, '\t') || strchr(p->options, '\n') ||
      strchr(p->options, '\t'))
    return;
  pthread_mutex_lock(&cache->warm_lock);
  if (cache->warm_path[0] == '\0' || cache->num_asked >= WARM_MAX)
    goto out;
  if (!cache->warm_asked &&
      !(cache->warm_asked = calloc(WARM_MAX, sizeof *cache->warm_asked)))
    goto out;
  memcpy(cache->warm_asked[cache->num_asked++], line, (size_t)n + 1);
  if (cache->num_asked == 1 && cache->num_read == 0)
    warm_prune(cache->warm_path);
  n = snprintf(tmp, sizeof tmp, "%s.XXXXXX", cache->warm_path);
  if (n < 0 || (size_t)n >= sizeof tmp)
    goto out;
  int fd = mkstemp(tmp); /* 0600, O_EXCL */
  if (fd < 0)
    goto out;
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    unlink(tmp);
    goto out;
  }
  int written = 0;
  for (int i = 0; i < cache->num_asked; i++, written++)
    warm_write_line(f, cache->warm_asked[i], cache->run,
                    warm_line_read(cache, cache->warm_asked[i]));
  for (int i = 0; i < cache->num_read && written < WARM_MAX; i++) {
    bool again = false;
    for (int j = 0; j < cache->num_asked && !again; j++)
      again = strcmp(cache->warm_read[i].text, cache->warm_asked[j]) == 0;
    if (!again) {
      warm_write_line(f, cache->warm_read[i].text, 0, &cache->warm_read[i]);
      written++;
    }
  }
  bool ok = fflush(f) == 0 && !ferror(f);
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, cache->warm_path) != 0) {
    OCL_TRACE("warm list: cannot write %s (%s)", cache->warm_path,
              strerror(errno));
    unlink(tmp);
  }
out:
  pthread_mutex_unlock(&cache->warm_lock);
}

static struct ocl_program_cache *cache_of(struct ocl_context *ctx) {
  struct ocl_program_cache *cache;

  pthread_mutex_lock(&ctx->lock);
  if (!ctx->programs) {
    ctx->programs = calloc(1, sizeof *ctx->programs);
    if (ctx->programs) {
      pthread_mutex_init(&ctx->programs->lock, NULL);
      pthread_mutex_init(&ctx->programs->warm_lock, NULL);
      atomic_init(&ctx->programs->prefetch_stop, false);
      if (keeps_binaries(ctx))
        ocl_cache_subdir("programs", ctx->programs->binaries_dir,
                         sizeof ctx->programs->binaries_dir);
      if (warm_path_of(ctx, ctx->programs->warm_path,
                       sizeof ctx->programs->warm_path, &ctx->programs->run))
        warm_read(ctx->programs);
      else
        ctx->programs->warm_path[0] = '\0';
    }
  }
  cache = ctx->programs;
  pthread_mutex_unlock(&ctx->lock);
  return cache;
}

static struct ocl_program *entry_of(struct ocl_program_cache *cache,
                                    const char *family, const char *options) {
  struct ocl_program *p;

  pthread_mutex_lock(&cache->lock);
  for (p = cache->programs; p; p = p->next)
    if (strcmp(p->family, family) == 0 && strcmp(p->options, options) == 0)
      goto out;
  p = calloc(1, sizeof *p);
  if (!p) goto out;
  p->family = strdup(family);
  p->options = strdup(options);
  if (!p->family || !p->options) {
    free(p->family);
    free(p->options);
    free(p);
    p = NULL;
    goto out;
  }
  pthread_mutex_init(&p->lock, NULL);
  p->next = cache->programs;
  cache->programs = p;
out:
  pthread_mutex_unlock(&cache->lock);
  return p;
}

/* Out of memory or resources: the next attempt may succeed. */
static bool transient(cl_int err) {
  return ocl_cl_error_code(err) == TF_RESOURCE_EXHAUSTED;
}

#define EXACT_DIVISION " -cl-fp32-correctly-rounded-divide-sqrt"
/* common.clh's OCL_FOR_FLAT as a loop over a run of elements
 * (ocl_device_info.flat_runs): on PoCL and Oclgrind only. Intel's CPU
 * runtime vectorises across work-items and ran the loop form 5-6 times
 * slower even one element a work-item. */
#define FLAT_RUNS " -DOCL_FLAT_RUNS"
/* common.clh's OCL_VSTORE_HALF*: PoCL's vstore_halfN_rte of a constant
 * assumed the vector's alignment. */
#define HALF_STORES " -DOCL_HALF_STORES_AS_BITS"

/* Whether every device of ctx divides and takes square roots correctly
 * rounded when asked (CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT). */
static bool exact_division(const struct ocl_context *ctx) {
  for (cl_uint i = 0; i < ctx->num_devices; i++) {
    cl_device_fp_config config = 0;
    if (clGetDeviceInfo(ctx->devices[i], CL_DEVICE_SINGLE_FP_CONFIG,
                        sizeof config, &config, NULL) != CL_SUCCESS ||
        !(config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT))
      return false;
  }
  return ctx->num_devices > 0;
}

/* Builds p; on failure p->error holds the message. Returns false when the
 * failure is transient (not to be remembered). */
static bool build(struct ocl_device *dev, struct ocl_program *p,
                  const char *source, const char *binaries_dir) {
  cl_context context = ocl_device_context(dev);
  struct ocl_context *ctx = dev->ctx;
  char *log = NULL, header[256], *options;
  size_t log_size = 0, length;
  cl_int err;

  length = strlen(p->options) + sizeof EXACT_DIVISION + sizeof FLAT_RUNS +
           sizeof HALF_STORES;
  options = malloc(length);
  if (!options) {
    snprintf(header, sizeof header, "clBuildProgram(%s): out of memory",
             p->family);
    p->error = strdup(header);
    return false;
  }
  snprintf(options, length, "%s%s%s%s", p->options,
           exact_division(ctx) ? EXACT_DIVISION : "",
           ctx->is_pocl || ctx->is_oclgrind ? FLAT_RUNS : "",
           ctx->is_pocl ? HALF_STORES : "");
  if (binaries_dir[0] != '\0') {
    p->program = ocl_program_binaries_load(
        binaries_dir, context, ctx->platform, ctx->devices, ctx->num_devices,
        p->family, options, source);
    if (p->program) {
      OCL_TRACE("built kernel family %s (%s) from kept binaries", p->family,
                options);
      free(options);
      return true;
    }
  }
  p->program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  if (err != CL_SUCCESS) {
    snprintf(header, sizeof header, "clCreateProgramWithSource(%s): %s (%d)",
             p->family, ocl_cl_error_name(err), (int)err);
    p->error = strdup(header);
    p->program = NULL;
    free(options);
    return !transient(err);
  }
  err = clBuildProgram(p->program, 0, NULL, options, NULL, NULL);
  if (err == CL_SUCCESS) {
    OCL_TRACE("built kernel family %s (%s)", p->family, options);
    if (binaries_dir[0] != '\0')
      ocl_program_binaries_save(binaries_dir, p->program, ctx->platform,
                                p->family, options, source);
    free(options);
    return true;
  }
  free(options);
  snprintf(header, sizeof header, "clBuildProgram(%s): %s (%d); build log:\n",
           p->family, ocl_cl_error_name(err), (int)err);
  if (clGetProgramBuildInfo(p->program, dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL,
                            &log_size) == CL_SUCCESS &&
      (log = calloc(1, log_size + 1)) != NULL)
    clGetProgramBuildInfo(p->program, dev->id, CL_PROGRAM_BUILD_LOG, log_size,
                          log, NULL);
  length = strlen(header) + (log ? strlen(log) : 0) + 1;
  p->error = malloc(length);
  if (p->error) snprintf(p->error, length, "%s%s", header, log ? log : "");
  free(log);
  clReleaseProgram(p->program);
  p->program = NULL;
  return !transient(err);
}

cl_program ocl_program_get(struct ocl_device *dev, const char *family_name,
                           const char *source, const char *build_options,
                           TF_Status *status) {
  struct ocl_program_cache *cache;
  struct ocl_program *p;
  cl_program program;

  ocl_set_ok(status);
  if (!dev || !atomic_load_explicit(&dev->ready, memory_order_acquire) ||
      !family_name || !source) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "ocl_program_get: no device, family or source");
    return NULL;
  }
  cache = cache_of(dev->ctx);
  p = cache ? entry_of(cache, family_name, build_options ? build_options : "")
            : NULL;
  if (!p) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                   "ocl_program_get(%s): out of memory", family_name);
    return NULL;
  }
  pthread_mutex_lock(&p->lock);
  bool retry_later = false;
  if (p->built && p->ahead_source != 0) {
    /* Built ahead from a source of the plugin's own, found by name: if it
     * is not the one the kernel brings after all, build that one. */
    if (p->ahead_source != fnv1a(FNV_START, source)) {
      OCL_TRACE("program %s built ahead from another source; building again",
                p->family);
      if (p->program)
        clReleaseProgram(p->program);
      p->program = NULL;
      free(p->error);
      p->error = NULL;
      p->built = false;
    }
    p->ahead_source = 0;
  }
  if (!p->built) {
    retry_later = !build(dev, p, source, cache->binaries_dir);
    p->built = !retry_later;
  }
  program = p->program;
  bool first_ask = program && !p->asked;
  if (first_ask)
    p->asked = true;
  /* Not through ocl_set_status: the whole build log goes in. */
  if (!program && status)
    ocl_tf.SetStatus(status,
                     retry_later ? TF_RESOURCE_EXHAUSTED : TF_INTERNAL,
                     p->error ? p->error : "program build failed");
  if (retry_later) {
    free(p->error);
    p->error = NULL;
  }
  pthread_mutex_unlock(&p->lock);
  if (first_ask)
    warm_note(cache, p);
  return program;
}

/* ---- Building ahead ------------------------------------------------------ */

/* The caches whose thread may still run: an exit handler stops and joins
 * them, since TensorFlow never destroys the platform and a driver's
 * compiler must not be torn down under a build (a short process exits
 * while the list is still being built). */
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ocl_program_cache *running[16];
static pthread_once_t exit_handler_once = PTHREAD_ONCE_INIT;

static void prefetch_join(struct ocl_program_cache *cache)
{
  bool join = false;
  pthread_mutex_lock(&running_lock);
  for (size_t i = 0; i < sizeof running / sizeof *running; i++)
    if (running[i] == cache) {
      running[i] = NULL;
      join = true;
    }
  pthread_mutex_unlock(&running_lock);
  if (!join)
    return;
  atomic_store(&cache->prefetch_stop, true);
  pthread_join(cache->prefetch, NULL);
}

static void join_all_at_exit(void)
{
  for (size_t i = 0; i < sizeof running / sizeof *running; i++) {
    pthread_mutex_lock(&running_lock);
    struct ocl_program_cache *cache = running[i];
    pthread_mutex_unlock(&running_lock);
    if (cache)
      prefetch_join(cache);
  }
}

/* A forked child has none of the parent's threads: its exit handler must
 * join none of them, and the lock must not stay held by a thread that
 * does not exist there. */
static void fork_prepare(void) { pthread_mutex_lock(&running_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&running_lock); }
static void fork_child(void)
{
  memset(running, 0, sizeof running);
  pthread_mutex_unlock(&running_lock);
}

static void register_exit_handler(void)
{
  atexit(join_all_at_exit);
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void *prefetch_main(void *arg)
{
  struct ocl_program_cache *cache = arg;
  struct ocl_device *dev = cache->prefetch_dev;

  for (int i = 0; i < cache->num_read; i++) {
    char line[WARM_LINE];
    if (atomic_load(&cache->prefetch_stop))
      break;
    if (cache->ahead_run &&
        !warm_line_has_run(&cache->warm_read[i], cache->ahead_run))
      continue; /* another run's */
    memcpy(line, cache->warm_read[i].text, sizeof line);
    char *tab = strchr(line, '\t');
    *tab = '\0';
    const char *family = line, *options = tab + 1;
    const char *source = ocl_program_table_find(family, options);
    char *generated = NULL;
    if (!source)
      source = generated = ocl_program_generated_source(family, options);
    if (!source)
      continue; /* gone from this plugin, or not a name of ours */
    struct ocl_program *p = entry_of(cache, family, options);
    if (!p) {
      free(generated);
      break;
    }
    pthread_mutex_lock(&p->lock);
    if (!p->built) {
      bool retry_later = !build(dev, p, source, cache->binaries_dir);
      p->built = !retry_later;
      if (retry_later) {
        free(p->error);
        p->error = NULL;
      } else if (p->program) {
        p->ahead_source = fnv1a(FNV_START, source);
        atomic_fetch_add(&programs_prefetched, 1);
        OCL_TRACE("ahead: built %s", family);
      }
    } else {
      OCL_TRACE("ahead: %s was asked for first", family);
    }
    pthread_mutex_unlock(&p->lock);
    free(generated);
  }
  return NULL;
}

/* Oclgrind's compiler is not safe to run from two threads at once: a
 * second process of the ops suite on it, building a warm list's programs
 * beside its first kernel's build, died in LLVM ("Broken module found")
 * or with a segfault. Nothing is built ahead there. */
static bool builds_one_at_a_time(const struct ocl_device *dev)
{
  return dev->ctx->is_oclgrind;
}

void ocl_program_prefetch(struct ocl_device *dev)
{
  if (!dev || !atomic_load_explicit(&dev->ready, memory_order_acquire) ||
      builds_one_at_a_time(dev))
    return;
  struct ocl_program_cache *cache = cache_of(dev->ctx);
  if (!cache)
    return;
  pthread_mutex_lock(&cache->warm_lock);
  bool start = !cache->prefetch_started && cache->num_read > 0;
  cache->prefetch_started = true;
  pthread_mutex_unlock(&cache->warm_lock);
  if (!start)
    return;
  pthread_once(&exit_handler_once, register_exit_handler);
  pthread_mutex_lock(&running_lock);
  size_t slot = sizeof running / sizeof *running;
  for (size_t i = 0; i < sizeof running / sizeof *running; i++)
    if (!running[i]) {
      slot = i;
      break;
    }
  cache->prefetch_dev = dev;
  if (slot < sizeof running / sizeof *running &&
      pthread_create(&cache->prefetch, NULL, prefetch_main, cache) == 0) {
    running[slot] = cache;
    OCL_TRACE("building ahead the programs of earlier processes of %s "
              "(%d lines, run %016llx)",
              cache->warm_path, cache->num_read,
              (unsigned long long)cache->ahead_run);
  }
  pthread_mutex_unlock(&running_lock);
}
