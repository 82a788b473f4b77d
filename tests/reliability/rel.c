/* Shared helpers of the reliability suites; see rel.h. */
#include "rel.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct tfocl_plugin *rel_plugin;
struct tfocl_device *rel_device;

bool rel_setup(void)
{
  const char *path = getenv("TFOCL_PLUGIN");
  TF_Status *st = TF_NewStatus();
  if (path == NULL) {
    fprintf(stderr, "TFOCL_PLUGIN is not set\n");
    exit(EXIT_FAILURE);
  }
  rel_plugin = tfocl_plugin_load(path, st);
  if (rel_plugin == NULL) {
    fprintf(stderr, "loading %s: %s\n", path, TF_Message(st));
    exit(EXIT_FAILURE);
  }
  if (tfocl_plugin_device_count(rel_plugin, st) < 1) {
    fprintf(stderr, "no OpenCL device: skipped\n");
    tfocl_plugin_unload(rel_plugin);
    TF_DeleteStatus(st);
    return false;
  }
  rel_device = tfocl_device_open(rel_plugin, 0, st);
  if (rel_device == NULL) {
    fprintf(stderr, "opening device 0: %s\n", TF_Message(st));
    exit(EXIT_FAILURE);
  }
  TF_DeleteStatus(st);
  return true;
}

void rel_teardown(void)
{
  tfocl_device_close(rel_device);
  tfocl_plugin_unload(rel_plugin);
  rel_device = NULL;
  rel_plugin = NULL;
}

int rel_run(Suite *suite)
{
  SRunner *sr = srunner_create(suite);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int64_t elements(const int64_t *dims, int rank)
{
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  return n;
}

TF_Tensor *rel_host_f32(const int64_t *dims, int rank, const float *values,
                        int num_values)
{
  int64_t n = elements(dims, rank);
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims, rank,
                                   (size_t)n * sizeof(float));
  ck_assert_ptr_nonnull(t);
  float *p = TF_TensorData(t);
  for (int64_t i = 0; i < n; i++)
    p[i] = values[i % num_values];
  return t;
}

TF_Tensor *rel_host_i32(const int64_t *dims, int rank, const int32_t *values)
{
  int64_t n = elements(dims, rank);
  TF_Tensor *t = TF_AllocateTensor(TF_INT32, dims, rank,
                                   (size_t)n * sizeof(int32_t));
  ck_assert_ptr_nonnull(t);
  if (n > 0)
    memcpy(TF_TensorData(t), values, (size_t)n * sizeof(int32_t));
  return t;
}

TF_Code rel_run_op(const char *op, const struct tfocl_attr *attrs,
                   int num_attrs, TF_Tensor *const *inputs, int num_inputs,
                   TF_Tensor **out, TF_Status *st)
{
  TF_Tensor *outputs[8] = {0};
  int num_outputs = 0;
  tfocl_run_op(rel_device, op, attrs, num_attrs, inputs, num_inputs, outputs,
               8, &num_outputs, st);
  for (int i = 0; i < num_outputs; i++) {
    if (i == 0 && out != NULL && TF_GetCode(st) == TF_OK)
      *out = outputs[0];
    else
      TF_DeleteTensor(outputs[i]);
  }
  if (out != NULL && TF_GetCode(st) != TF_OK)
    *out = NULL;
  return TF_GetCode(st);
}

void rel_allocator_stats(SP_AllocatorStats *stats)
{
  const SP_StreamExecutor *se = tfocl_plugin_stream_executor(rel_plugin);
  memset(stats, 0, sizeof(*stats));
  stats->struct_size = SP_ALLOCATORSTATS_STRUCT_SIZE;
  ck_assert(se->get_allocator_stats(tfocl_device_sp(rel_device), stats));
}

int64_t rel_rss_bytes(void)
{
  long pages_total = 0, pages_resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL)
    return -1;
  if (fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2)
    pages_resident = -1;
  fclose(f);
  return (int64_t)pages_resident * sysconf(_SC_PAGESIZE);
}

long rel_env_long(const char *name, long fallback)
{
  const char *v = getenv(name);
  return v != NULL && *v ? strtol(v, NULL, 10) : fallback;
}
