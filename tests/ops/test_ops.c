/* The ops suite: every (op, dtype) the plugin registers for OPENCL runs its
 * reference cases (random and edge inputs, failing shapes) on the device
 * and is compared with the float64 host reference within the op's
 * tolerance. A registered op without a reference fails, so a new kernel is
 * covered or the suite says so.
 *
 * TFOCL_OPS_FILTER=Name[,Name...] restricts the run to those ops.
 * TFOCL_OPS_SHARD=K/N runs the K-th of N contiguous parts of the (op,
 * dtype) list, in the plugin's registration order and cut at op
 * boundaries: the kernels' first builds are most of a run's time on a
 * cold program cache (PoCL: 860 of 900 s), so N parts on N cores build
 * each program once where N whole runs would each build all of them, and
 * a family's ops stay together, in one part's programs.
 * TFOCL_OPS_DEVICE=Name runs on the first device whose hardware name starts
 * with Name, and skips (77) when there is none.
 *
 * TFOCL_OPS_TIMES=1 prints each case's wall time ("TIME ms op dtype
 * input-elements case"): what a run's budget goes to, per case, for sizing
 * the slow runs (Oclgrind).
 *
 * On Oclgrind (tests/ops/oclgrind) three more rules hold: what the
 * simulator logs (invalid accesses, data races, barrier divergence) fails
 * the (op, dtype) that ran it; the pairs it cannot run (device_limits) are
 * reported SKIPPED with the reason; and a case with more than
 * TFOCL_OPS_SIM_LARGE input elements (default SIM_LARGE_DEFAULT; 0: no
 * limit) runs in its kernel's first dtype only (the first complex one for
 * complex dtypes). The simulator checks addresses and races, which a
 * case's shape decides, and the real dtypes of a kernel share its source
 * (complex ones theirs); every dtype still runs the small cases, and
 * the large ones run in every dtype on PoCL and Intel's runtime. In the
 * later dtypes, 880 such cases of about 25,000 took about 40 % of the
 * simulator's time. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "reference.h"
#include "tfocl/host.h"

#define MAX_PAIRS 4096
/* Past this many input elements a simulated case costs seconds: ArgMax's
 * split rows (90,000-333,000 elements), a convolution's 40x32 image, a
 * batched product of [1100,9] and [1100,32]. Of the simulator's time on
 * the ops up to Conv2D, those cases in the later dtypes of their kernel
 * took 310 of 483 s. */
#define SIM_LARGE_DEFAULT 4096

struct kernel_case {
  char op[64];
  const char *label; /* the kernel's, "" for none: set as "_kernel" */
  TF_DataType dtype; /* of the first type constraint */
  int num_constraints;
  char constraint_attr[4][32];
  TF_DataType constraint_type[4];
  /* The first dtype of its (op, label), complex or not: runs the
   * simulator's large cases. */
  bool runs_large;
};

static struct tfocl_plugin *plugin;
static struct tfocl_device *device;
static char device_name[256];
static struct kernel_case pairs[MAX_PAIRS];
static int num_pairs;
static int num_skipped;
static int64_t sim_large; /* input elements; 0: no limit */
static int num_large_left;

static bool print_times;

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static bool starts_with(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- Device limits -------------------------------------------------------
 * Cases a device cannot run for a reason outside the plugin. The failing
 * cases of a listed (op, dtype) whose message holds `signature` are
 * reported SKIPPED with the reason, never passed in silence; a listed pair
 * that fails otherwise, or whose cases all pass (the limit is gone), fails,
 * so the list can neither hide a bug nor go stale. */
struct device_limit {
  const char *device; /* prefix of the hardware name */
  const char *op;
  TF_DataType dtype;
  const char *signature;
  const char *reason;
};

static const struct device_limit device_limits[] = {
    /* clang turns abs() on long (Abs, and FloorDiv's sign test) into
     * llvm.abs.i64; Oclgrind's interpreter has no such function, so the
     * program builds but clCreateKernel fails ("OCLGRIND FATAL ERROR ...
     * Undefined external function: llvm.abs.i64" on stderr). */
    {"Oclgrind", "Abs", TF_INT64, "CL_INVALID_KERNEL_NAME",
     "Oclgrind 21.10 does not implement llvm.abs.i64"},
    {"Oclgrind", "FloorDiv", TF_INT64, "CL_INVALID_KERNEL_NAME",
     "Oclgrind 21.10 does not implement llvm.abs.i64"},
};

static const struct device_limit *device_limit_find(const struct kernel_case *k)
{
  for (size_t i = 0; i < sizeof(device_limits) / sizeof(device_limits[0]); i++) {
    const struct device_limit *l = &device_limits[i];
    if (starts_with(device_name, l->device) && strcmp(k->op, l->op) == 0 &&
        k->dtype == l->dtype)
      return l;
  }
  return NULL;
}

/* ---- Simulator reports ---------------------------------------------------
 * Oclgrind writes its reports to OCLGRIND_LOG (else stderr, out of this
 * test's sight) and never says in an exit status that there were any. Each
 * report is a line at column 0 ("Invalid read of size 4 at global memory
 * address ...", "Read-write data race at local memory address ...") and its
 * details indented below; reports are separated by blank lines. */
static struct {
  const char *path; /* NULL: not on Oclgrind */
  long seen;        /* bytes already attributed to a case */
  bool suppressed;  /* Oclgrind stopped reporting (OCLGRIND_MAX_ERRORS) */
} sim_log;

#define SIM_LOG_SHOWN 4096

/* What the simulator logged since the last call: the number of reports,
 * the first one's opening line and kernel in `first`; the text itself goes
 * to stderr (its first SIM_LOG_SHOWN bytes) under `what`. */
static int sim_log_take(const char *what, char *first, size_t first_size)
{
  first[0] = '\0';
  struct stat st;
  if (sim_log.path == NULL || stat(sim_log.path, &st) != 0)
    return 0;
  if (st.st_size < sim_log.seen) /* a new context truncated it */
    sim_log.seen = 0;
  long size = (long)st.st_size - sim_log.seen;
  if (size <= 0)
    return 0;
  char *text = malloc((size_t)size + 1);
  FILE *f = fopen(sim_log.path, "r");
  size_t got = 0;
  if (text != NULL && f != NULL && fseek(f, sim_log.seen, SEEK_SET) == 0)
    got = fread(text, 1, (size_t)size, f);
  if (f != NULL)
    fclose(f);
  if (text == NULL || got == 0) {
    free(text);
    snprintf(first, first_size, "%s grew but could not be read", sim_log.path);
    return 1;
  }
  text[got] = '\0';
  sim_log.seen += (long)got;

  int reports = 0;
  const char *kernel = NULL;
  for (char *line = text; *line != '\0';) {
    char *end = strchr(line, '\n');
    size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
    if (len > 0 && line[0] != '\t' && line[0] != ' ') {
      if (strstr(line, "suppressing further errors") != NULL)
        sim_log.suppressed = true;
      if (reports++ == 0)
        snprintf(first, first_size, "%.*s", (int)len, line);
    } else if (reports == 1 && kernel == NULL) {
      const char *k = strstr(line, "Kernel: ");
      if (k != NULL && k < line + len)
        kernel = k;
    }
    line += end != NULL ? len + 1 : len;
  }
  if (kernel != NULL) {
    size_t used = strlen(first);
    snprintf(first + used, first_size - used, " (%.*s)",
             (int)strcspn(kernel, "\r\n"), kernel);
  }
  if (reports == 0) /* whitespace only */
    snprintf(first, first_size, "%s", "text without a report line");
  fprintf(stderr, "Oclgrind reported (%s):%.*s%s\n", what, SIM_LOG_SHOWN, text,
          got > SIM_LOG_SHOWN ? "\n[... the rest is in OCLGRIND_LOG]" : "");
  free(text);
  return reports > 0 ? reports : 1;
}

/* Ops on resource variables: their inputs are variable handles, which the
 * reference cases cannot express; tests/ops/test_variables.c covers them. */
static bool covered_elsewhere(const char *op)
{
  static const char *const ops[] = {"AssignVariableOp",
                                    "AssignAddVariableOp",
                                    "AssignSubVariableOp",
                                    "ResourceApplyGradientDescent",
                                    "ResourceApplyMomentum",
                                    "ResourceApplyKerasMomentum",
                                    "ResourceApplyAdam",
                                    "_TfoclKerasAdam",
                                    "ResourceGather",
                                    "ResourceGatherNd",
                                    "ResourceScatterAdd",
                                    "ResourceScatterSub",
                                    "ResourceScatterMul",
                                    "ResourceScatterDiv",
                                    "ResourceScatterMin",
                                    "ResourceScatterMax",
                                    "ResourceScatterUpdate",
                                    "ResourceScatterNdAdd",
                                    "ResourceScatterNdSub",
                                    "ResourceScatterNdUpdate",
                                    "ResourceStridedSliceAssign"};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
    if (strcmp(op, ops[i]) == 0)
      return true;
  return false;
}

/* TFOCL_OPS_SKIP_DTYPES: TF_DataType numbers (comma-separated) whose
 * pairs a run leaves to the others, where a dtype adds nothing that run
 * checks (valgrind: the host side of a float64 kernel is its float one's,
 * only the element size differs). */
static bool dtype_skipped(TF_DataType dtype)
{
  const char *skip = getenv("TFOCL_OPS_SKIP_DTYPES");
  for (const char *p = skip; p != NULL && *p;) {
    char *end;
    long value = strtol(p, &end, 10);
    if (end == p)
      break;
    if (value == (long)dtype)
      return true;
    p = *end == ',' ? end + 1 : end;
  }
  return false;
}

/* Complex kernels have sources of their own (complex.cl, fft.cl). */
static bool is_complex(TF_DataType dtype)
{
  return dtype == TF_COMPLEX64 || dtype == TF_COMPLEX128;
}

/* One (op, dtype combination) per registered kernel and allowed type. */
static void collect_pairs(void)
{
  int n = tfocl_kernel_count();
  for (int i = 0; i < n; i++) {
    struct tfocl_kernel_info info;
    if (!tfocl_kernel_get(i, &info) || strcmp(info.device_type, "OPENCL") != 0 ||
        !ref_op_selected(info.op_name) || covered_elsewhere(info.op_name))
      continue;
    int expand = info.num_constraints > 0 ? info.constraints[0].num_types : 1;
    for (int t = 0; t < expand && num_pairs < MAX_PAIRS; t++) {
      struct kernel_case *k = &pairs[num_pairs++];
      memset(k, 0, sizeof(*k));
      snprintf(k->op, sizeof(k->op), "%s", info.op_name);
      k->label = tfocl_kernel_label(i);
      /* An op without a type attribute (LogicalAnd) has fixed types: the
       * reference's domain says which. */
      const struct ref_op *op = ref_op_find(info.op_name);
      TF_DataType fixed = op != NULL && op->domain == REF_BOOL ? TF_BOOL : TF_FLOAT;
      k->dtype = info.num_constraints > 0 ? info.constraints[0].types[t] : fixed;
      for (int c = 0; c < info.num_constraints && c < 4; c++) {
        snprintf(k->constraint_attr[c], sizeof(k->constraint_attr[c]), "%s",
                 info.constraints[c].attr);
        k->constraint_type[c] = c == 0 ? k->dtype : info.constraints[c].types[0];
      }
      k->num_constraints = info.num_constraints < 4 ? info.num_constraints : 4;
      if (dtype_skipped(k->dtype)) {
        num_pairs--;
        continue;
      }
      k->runs_large = true;
      for (int p = 0; p < num_pairs - 1 && k->runs_large; p++)
        k->runs_large = strcmp(pairs[p].op, k->op) != 0 ||
                        strcmp(pairs[p].label, k->label) != 0 ||
                        is_complex(pairs[p].dtype) != is_complex(k->dtype);
    }
  }
}

/* TFOCL_OPS_SHARD=K/N: keeps the K-th of N parts of pairs[]. An op's
 * pairs go to the part where its first pair falls, so a part boundary never
 * splits an op. Returns false (with the reason printed) on a malformed
 * value or an empty part. */
static bool select_shard(void)
{
  const char *shard = getenv("TFOCL_OPS_SHARD");
  if (shard == NULL || *shard == '\0')
    return true;
  char *end;
  long part = strtol(shard, &end, 10), parts = 0;
  if (*end == '/')
    parts = strtol(end + 1, &end, 10);
  if (*end != '\0' || parts < 1 || part < 1 || part > parts) {
    fprintf(stderr, "TFOCL_OPS_SHARD=%s: expected K/N with 1 <= K <= N\n",
            shard);
    return false;
  }
  int total = num_pairs, kept = 0, op_start = 0;
  for (int p = 0; p < total; p++) {
    if (p > 0 && strcmp(pairs[p].op, pairs[p - 1].op) != 0)
      op_start = p;
    if ((long)op_start * parts / total != part - 1)
      continue;
    if (kept != p) /* a struct copy onto itself is memcpy's overlap */
      pairs[kept] = pairs[p];
    kept++;
  }
  num_pairs = kept;
  printf("part %ld of %ld (TFOCL_OPS_SHARD): %d of %d (op, dtype) pairs\n",
         part, parts, kept, total);
  if (kept == 0)
    fprintf(stderr, "TFOCL_OPS_SHARD=%s: the part has no pair\n", shard);
  return kept > 0;
}

static int64_t case_elements(const struct ref_case *c)
{
  int64_t n = 0;
  for (int t = 0; t < c->num_inputs; t++)
    n += c->inputs[t].elements;
  return n;
}

START_TEST(op_matches_reference)
{
  const struct kernel_case *k = &pairs[_i];
  const struct ref_op *op = ref_op_find_typed(k->op, k->dtype);
  ck_assert_msg(op != NULL, "%s is registered for OPENCL but has no reference",
                k->op);

  struct ref_cases cases = {0};
  op->cases(op, k->dtype, &cases);
  ck_assert_msg(cases.count > 0, "%s has no cases for %s", k->op,
                tfocl_type_name(k->dtype));

  const struct device_limit *limit = device_limit_find(k);
  int failed = 0, skipped = 0;
  char first_failure[768] = "";
  for (int i = 0; i < cases.count; i++) {
    struct ref_case *c = &cases.items[i];
    if (sim_large > 0 && !k->runs_large && case_elements(c) > sim_large) {
      num_large_left++;
      continue;
    }
    /* A labelled kernel runs where TensorFlow would run it: on nodes that
     * ask for it. */
    if (k->label[0] != '\0')
      ref_case_attr_string(c, "_kernel", k->label);
    /* Pin the kernel's other type constraints (Cast's DstT, ...). */
    for (int a = 1; a < k->num_constraints; a++)
      if (ref_case_attr(c, k->constraint_attr[a]) == NULL)
        ref_case_attr_type(c, k->constraint_attr[a], k->constraint_type[a]);
    struct ref_result r;
    double start = print_times ? now_ms() : 0;
    ref_run_case(device, op, c, &r);
    if (print_times)
      printf("TIME %.1f %s %s %lld %s\n", now_ms() - start, k->op,
             tfocl_type_name(k->dtype), (long long)case_elements(c), c->label);
    if (!r.passed && limit != NULL && strstr(r.message, limit->signature)) {
      skipped++;
    } else if (!r.passed) {
      if (failed++ == 0)
        snprintf(first_failure, sizeof(first_failure), "%s [%s]: %s", c->label,
                 tfocl_type_name(k->dtype), r.message);
      fprintf(stderr, "FAIL %s [%s]: %s\n", c->label, tfocl_type_name(k->dtype),
              r.message);
    }
  }
  int total = cases.count;
  ref_cases_finish(&cases);
  char what[128], report[512];
  snprintf(what, sizeof(what), "%s %s%s%s", k->op, tfocl_type_name(k->dtype),
           k->label[0] != '\0' ? " label " : "", k->label);
  int reports = sim_log_take(what, report, sizeof(report));
  ck_assert_msg(reports == 0, "%s %s: %d Oclgrind report(s); first: %s", k->op,
                tfocl_type_name(k->dtype), reports, report);
  ck_assert_msg(failed == 0, "%s: %d of %d cases failed; first: %s%s", what,
                failed, total, first_failure,
                strstr(first_failure, "CL_INVALID_KERNEL_NAME") != NULL &&
                        starts_with(device_name, "Oclgrind")
                    ? " (Oclgrind could not build the kernel: its stderr "
                      "says why; a simulator limit goes into device_limits)"
                    : "");
  if (limit != NULL) {
    ck_assert_msg(skipped > 0,
                  "%s %s: listed in device_limits for %s (%s), but all %d "
                  "cases pass: remove the entry",
                  k->op, tfocl_type_name(k->dtype), limit->device,
                  limit->reason, total);
    num_skipped++;
    printf("SKIPPED %s %s on %s: %d of %d cases: %s\n", k->op,
           tfocl_type_name(k->dtype), device_name, skipped, total,
           limit->reason);
  }
}
END_TEST

START_TEST(plugin_registers_kernels)
{
  ck_assert_msg(num_pairs > 0, "the plugin registered no OPENCL kernels");
}
END_TEST

/* The device the suite runs on: TFOCL_OPS_DEVICE's, else the first. */
static int open_device(TF_Status *status)
{
  int count = tfocl_plugin_device_count(plugin, status);
  const char *want = getenv("TFOCL_OPS_DEVICE");
  if (want != NULL && *want == '\0')
    want = NULL;
  for (int i = 0; i < count; i++) {
    device = tfocl_device_open(plugin, i, status);
    if (device == NULL) {
      fprintf(stderr, "opening device %d: %s\n", i, TF_Message(status));
      return EXIT_FAILURE;
    }
    const char *name = tfocl_device_sp(device)->hardware_name;
    snprintf(device_name, sizeof(device_name), "%s", name != NULL ? name : "");
    if (want == NULL || starts_with(device_name, want))
      return EXIT_SUCCESS;
    tfocl_device_close(device);
    device = NULL;
  }
  if (want != NULL)
    fprintf(stderr, "no OpenCL device named %s* (TFOCL_OPS_DEVICE) among %d: "
                    "skipped\n", want, count);
  else
    fprintf(stderr, "no OpenCL device: skipped\n");
  return 77;
}

int main(void)
{
  const char *path = getenv("TFOCL_PLUGIN");
  TF_Status *status = TF_NewStatus();
  if (path == NULL) {
    fprintf(stderr, "TFOCL_PLUGIN is not set\n");
    return EXIT_FAILURE;
  }
  plugin = tfocl_plugin_load(path, status);
  if (plugin == NULL) {
    fprintf(stderr, "loading %s: %s\n", path, TF_Message(status));
    return EXIT_FAILURE;
  }
  int rc = open_device(status);
  if (rc != EXIT_SUCCESS) {
    tfocl_plugin_unload(plugin);
    TF_DeleteStatus(status);
    return rc;
  }
  printf("ops on %s\n", device_name);
  tfocl_device_poison_outputs(device, true);
  if (starts_with(device_name, "Oclgrind")) {
    const char *large = getenv("TFOCL_OPS_SIM_LARGE");
    sim_large = large != NULL && *large != '\0' ? strtoll(large, NULL, 10)
                                                : SIM_LARGE_DEFAULT;
    sim_log.path = getenv("OCLGRIND_LOG");
    if (sim_log.path == NULL || *sim_log.path == '\0') {
      fprintf(stderr, "on Oclgrind, set OCLGRIND_LOG=FILE: its reports go "
                      "there and fail the cases (on stderr this test cannot "
                      "see them)\n");
      tfocl_device_close(device);
      tfocl_plugin_unload(plugin);
      TF_DeleteStatus(status);
      return EXIT_FAILURE;
    }
  }
  collect_pairs();
  if (!select_shard()) {
    tfocl_device_close(device);
    tfocl_plugin_unload(plugin);
    TF_DeleteStatus(status);
    return EXIT_FAILURE;
  }
  const char *times = getenv("TFOCL_OPS_TIMES");
  print_times = times != NULL && *times != '\0' && strcmp(times, "0") != 0;

  Suite *s = suite_create("ops");
  TCase *tc = tcase_create("ops");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, plugin_registers_kernels);
  tcase_add_loop_test(tc, op_matches_reference, 0, num_pairs);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  /* The device lives in this process: OpenCL state does not survive fork. */
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);

  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
  TF_DeleteStatus(status);
  /* Whatever the simulator logged after the last case (at teardown). */
  char report[512];
  if (sim_log_take("at teardown", report, sizeof(report)) > 0) {
    fprintf(stderr, "Oclgrind reported after the last case: %s\n", report);
    failed++;
  }
  if (sim_log.suppressed)
    fprintf(stderr, "Oclgrind stopped reporting after OCLGRIND_MAX_ERRORS "
                    "reports: the cases after that were not checked for "
                    "memory errors\n");
  if (num_large_left > 0)
    printf("%d cases of over %lld input elements ran in their kernel's first "
           "dtype only on %s (TFOCL_OPS_SIM_LARGE=0 runs them in every "
           "dtype)\n",
           num_large_left, (long long)sim_large, device_name);
  if (num_skipped > 0)
    printf("%d (op, dtype) skipped on %s (SKIPPED lines above)\n", num_skipped,
           device_name);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
