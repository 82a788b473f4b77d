/* tfocl plugin: TF_InitGraph, the graph optimizer TensorFlow's Grappler
 * runs on every graph with OPENCL nodes (graph.h has the passes).
 *
 * TF_InitGraph never fails: a failing status, or a registration TensorFlow
 * rejects, fails `import tensorflow`, and TensorFlow rejects one without a
 * device type or optimize function, so "register nothing" is not an option
 * once TF_InitGraph is exported. It always registers the optimizer for
 * OPENCL, and the optimizer hands back its input whenever it cannot or
 * need not change anything: without TensorFlow's grappler helpers (said
 * once on stderr), with every pass off, on a graph that does not decode.
 * It never reports an error to TensorFlow either: that would only make
 * Grappler log and keep its graph, which the optimizer does anyway.
 *
 * Environment (read at every graph):
 *   TFOCL_GRAPH=0            the optimizer changes nothing
 *   TFOCL_GRAPH_VARIABLES=0  no variable-update rewrite
 *   TFOCL_GRAPH_FUSION=0     no contraction fusion
 *   TFOCL_GRAPH_ELEMENTWISE=0  no element-wise fusion
 *   TFOCL_GRAPH_TILES=0      the element-wise fusion reads no Tile's input
 *                            in its place
 *   TFOCL_GRAPH_HOST_CONDITIONS=0  loop conditions' logical ops stay on
 *                            the device */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../ocl.h"
#include "fused_program.h"
#include "graph.h"
#include "runtime.h" /* kernels/: OCL_HOST_KERNEL_LABEL */

static bool env_off(const char *name)
{
  const char *v = getenv(name);
  return v != NULL && strcmp(v, "0") == 0;
}

static bool has_kernel(void *ctx, const char *op, int dtype)
{
  (void)ctx;
  return ocl_kernel_registered(op, (TF_DataType)dtype);
}

/* Whether the fusion pass could fuse anything: a fused kernel exists. */
static bool fused_kernels_exist(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_DOUBLE};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    if (ocl_kernel_registered("_FusedMatMul", types[i]) ||
        ocl_kernel_registered("_FusedConv2D", types[i]))
      return true;
  return false;
}

/* Whether the element-wise fusion could fuse anything: the plugin
 * registered its op and kernel (kernels/fused.c). */
static bool fused_elementwise_exists(void)
{
  return ocl_kernel_registered(FUSED_OP_NAME, TF_FLOAT) ||
         ocl_kernel_registered(FUSED_OP_NAME, TF_HALF);
}

/* The label of the plugin's host-memory LogicalAnd/LogicalOr kernels, if
 * both are registered (kernels/binary.c; not without
 * TF_KernelBuilder_Label). */
static const char *host_kernel_label(void)
{
  static const char *const names[] = {"LogicalAnd_" OCL_DEVICE_TYPE
                                      "_" OCL_HOST_KERNEL_LABEL,
                                      "LogicalOr_" OCL_DEVICE_TYPE
                                      "_" OCL_HOST_KERNEL_LABEL};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!ocl_kernel_name_registered(names[i]))
      return NULL;
  return OCL_HOST_KERNEL_LABEL;
}

static void trace_line(void *ctx, const char *line)
{
  (void)ctx;
  OCL_TRACE("graph: %s", line);
}

static void free_buffer(void *data, size_t length)
{
  (void)length;
  free(data);
}

/* One node-name list of the item (fetch or preserve), appended to keep /
 * lengths; storage is the caller's to free. False if TensorFlow failed. */
typedef void (*list_size_fn)(const TF_GrapplerItem *, int *, size_t *,
                             TF_Status *);
typedef void (*list_fn)(const TF_GrapplerItem *, char **, size_t *, int,
                        void *, size_t, TF_Status *);

struct name_list {
  char **values;
  size_t *lengths;
  size_t count;
  void *storage[2];
};

static bool read_list(const TF_GrapplerItem *item, list_size_fn size_fn,
                      list_fn list, struct name_list *out, int slot,
                      TF_Status *status)
{
  int num = 0;
  size_t bytes = 0;
  size_fn(item, &num, &bytes, status);
  if (ocl_tf.GetCode(status) != TF_OK || num < 0)
    return false;
  if (num == 0)
    return true;
  char **values = realloc(out->values, (out->count + (size_t)num) *
                                           sizeof(*values));
  if (values != NULL)
    out->values = values;
  size_t *lengths = realloc(out->lengths, (out->count + (size_t)num) *
                                              sizeof(*lengths));
  if (lengths != NULL)
    out->lengths = lengths;
  out->storage[slot] = malloc(bytes ? bytes : 1);
  if (values == NULL || lengths == NULL || out->storage[slot] == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return false;
  }
  list(item, out->values + out->count, out->lengths + out->count, num,
       out->storage[slot], bytes, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return false;
  out->count += (size_t)num;
  return true;
}

static void name_list_finish(struct name_list *l)
{
  free(l->values);
  free(l->lengths);
  free(l->storage[0]);
  free(l->storage[1]);
}

/* The first graph left unchanged is said on stderr once per process (the
 * step then runs the graph as it was, which for a variable update means
 * the kernel's own error); every one is traced. */
static void report_rejection(const char *why)
{
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static bool said;
  OCL_TRACE("graph: left unchanged: %s", why);
  pthread_mutex_lock(&lock);
  if (!said)
    fprintf(stderr, "tfocl: the graph optimizer left a graph unchanged: %s "
            "(TFOCL_TRACE=1 traces every case)\n", why);
  said = true;
  pthread_mutex_unlock(&lock);
}

static void optimize(void *optimizer, const TF_Buffer *graph,
                     const TF_GrapplerItem *item, TF_Buffer *optimized,
                     TF_Status *status)
{
  (void)optimizer;
  struct ocl_graph_config config = {
      .variables =
          !env_off("TFOCL_GRAPH_VARIABLES") && !ocl_tf_has_variable_api(),
      .variables_into_fusion = !env_off("TFOCL_GRAPH_VARIABLES"),
      .fusion = !env_off("TFOCL_GRAPH_FUSION") && fused_kernels_exist(),
      .elementwise =
          !env_off("TFOCL_GRAPH_ELEMENTWISE") && fused_elementwise_exists(),
      .keep_tiles = env_off("TFOCL_GRAPH_TILES"),
      .host_kernel_label =
          env_off("TFOCL_GRAPH_HOST_CONDITIONS") ? NULL : host_kernel_label(),
      .has_kernel = has_kernel,
  };
  struct name_list keep = {0};
  struct ocl_graph_stats stats;
  void *out = NULL;
  size_t out_size = 0;
  char why[256] = "";
  enum ocl_graph_outcome outcome = OCL_GRAPH_UNCHANGED;

  ocl_set_ok(status);
  if (env_off("TFOCL_GRAPH") || ocl_tf_grappler_missing() != NULL ||
      (!config.variables && !config.fusion && !config.elementwise &&
       config.host_kernel_label == NULL))
    goto pass_through;

  TF_Status *list_status = ocl_tf.NewStatus();
  bool listed =
      read_list(item, ocl_tf.GetFetchNodesListSize, ocl_tf.GetFetchNodesList,
                &keep, 0, list_status) &&
      read_list(item, ocl_tf.GetNodesToPreserveListSize,
                ocl_tf.GetNodesToPreserveList, &keep, 1, list_status);
  if (!listed)
    snprintf(why, sizeof(why), "the item's node lists: %s",
             ocl_tf.Message(list_status));
  ocl_tf.DeleteStatus(list_status);
  if (!listed) {
    report_rejection(why);
    goto pass_through;
  }
  config.keep = (const char *const *)keep.values;
  config.keep_lengths = keep.lengths;
  config.num_keep = keep.count;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  outcome = ocl_graph_optimize(graph->data, graph->length, &config, &out,
                               &out_size, &stats, why, sizeof(why),
                               ocl_trace_enabled() ? trace_line : NULL, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (outcome == OCL_GRAPH_REJECTED)
    report_rejection(why);
  else
    OCL_TRACE("graph: %d nodes (%d on OPENCL), %zu bytes: %d variable "
              "updates rewritten, %d fusions, %d element-wise fusions of %d "
              "ops, %d conditions on the host, %d AddNs restored, %d left "
              "alone, in %ld us",
              stats.nodes, stats.opencl_nodes, graph->length,
              stats.variable_updates, stats.fusions, stats.elementwise,
              stats.elementwise_ops, stats.host_conditions, stats.accumulations,
              stats.skipped,
              (long)((t1.tv_sec - t0.tv_sec) * 1000000L +
                     (t1.tv_nsec - t0.tv_nsec) / 1000));
  if (outcome == OCL_GRAPH_CHANGED) {
    optimized->data = out;
    optimized->length = out_size;
    optimized->data_deallocator = free_buffer;
    name_list_finish(&keep);
    return;
  }

pass_through:
  name_list_finish(&keep);
  /* Grappler reads the output buffer whatever happened: an empty one
   * would be an empty graph. */
  out = malloc(graph->length ? graph->length : 1);
  if (out == NULL) {
    /* Grappler then logs this and keeps its graph. */
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                   "tfocl graph optimizer: out of host memory");
    return;
  }
  if (graph->length > 0)
    memcpy(out, graph->data, graph->length);
  optimized->data = out;
  optimized->length = graph->length;
  optimized->data_deallocator = free_buffer;
}

OCL_EXPORT void TF_InitGraph(TP_OptimizerRegistrationParams *params,
                             TF_Status *status)
{
  const char *missing = NULL;
  /* Every TensorFlow optimizer keeps the user's setting (Default). */
  TP_OptimizerConfigs configs = {.struct_size =
                                     TP_OPTIMIZER_CONFIGS_STRUCT_SIZE};
  TP_Optimizer optimizer = {
      .struct_size = TP_OPTIMIZER_STRUCT_SIZE,
      .create_func = NULL,
      .optimize_func = optimize,
      .destroy_func = NULL,
  };

  ocl_tf_resolve(&missing);
  ocl_set_ok(status);
  if (params == NULL)
    return;
  if (params->optimizer_configs != NULL)
    ocl_fill_struct(params->optimizer_configs, &configs,
                    TP_OPTIMIZER_CONFIGS_STRUCT_SIZE);
  if (params->optimizer != NULL)
    ocl_fill_struct(params->optimizer, &optimizer, TP_OPTIMIZER_STRUCT_SIZE);
  /* A second copy of tfocl registers for its own device type, which no
   * node is ever placed on (plugin.c). */
  params->device_type = ocl_registered_device_type();
  if (ocl_copy_refused())
    return;
  if (params->major_version != GO_MAJOR)
    OCL_TRACE("graph optimizer API %d.%d.%d, tfocl speaks %d.x",
              (int)params->major_version, (int)params->minor_version,
              (int)params->patch_version, GO_MAJOR);
  const char *absent = ocl_tf_grappler_missing();
  if (absent != NULL)
    ocl_report_unusable("graph optimizer off: this TensorFlow lacks %s, "
                        "graphs run as TensorFlow wrote them",
                        absent);
  OCL_TRACE("graph optimizer registered for %s (variable rewrite %s)",
            OCL_DEVICE_TYPE,
            ocl_tf_has_variable_api() ? "not needed" : "on");
}

/* ---- Kernels the optimizer relies on ------------------------------------ */

/* Without kernels_experimental.h, kernels/variables.c registers no
 * ResourceApply* kernel, and TensorFlow has no DEVICE_DEFAULT one: the ops
 * would be placed on the CPU, away from their OPENCL variables, before the
 * rewrite could see them. These kernels put them on OPENCL, where the
 * rewrite replaces them in every graph; only an op that still runs (eager
 * execution, a graph the rewrite left alone) reaches them, and fails with
 * the reason. The same condition as variables.c's decides, so exactly one
 * of the two registers. */
static const char *const placeholder_ops[] = {
    "ResourceApplyGradientDescent", "ResourceApplyMomentum",
    "ResourceApplyAdam"};
static const char *const *const placeholder_host_args[] = {
    (const char *const[]){"var", NULL},
    (const char *const[]){"var", "accum", NULL},
    (const char *const[]){"var", "m", "v", NULL},
};

static void *placeholder_create0(TF_OpKernelConstruction *ctx)
{
  (void)ctx;
  return (void *)placeholder_ops[0];
}

static void *placeholder_create1(TF_OpKernelConstruction *ctx)
{
  (void)ctx;
  return (void *)placeholder_ops[1];
}

static void *placeholder_create2(TF_OpKernelConstruction *ctx)
{
  (void)ctx;
  return (void *)placeholder_ops[2];
}

static void placeholder_compute(void *kernel, TF_OpKernelContext *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  ocl_set_status(
      status, TF_UNIMPLEMENTED,
      "%s cannot run on %s: this TensorFlow does not export "
      "tensorflow/c/kernels_experimental.h (the 2.20 and 2.21 wheels, "
      "tensorflow#126374), so no PluggableDevice can update a variable in "
      "place. tfocl rewrites these updates inside tf.function graphs "
      "(TFOCL_GRAPH_VARIABLES); run this one in a tf.function, or use "
      "TensorFlow 2.19 or a release with the fix. TFOCL_TRACE=1 says why a "
      "graph was left alone.",
      (const char *)kernel, OCL_DEVICE_TYPE);
  ocl_tf.OpKernelContext_Failure(ctx, status);
  ocl_tf.DeleteStatus(status);
}

static void placeholder_delete(void *kernel)
{
  (void)kernel; /* static strings */
}

void ocl_graph_register_kernels(void)
{
  static void *(*const creates[])(TF_OpKernelConstruction *) = {
      placeholder_create0, placeholder_create1, placeholder_create2};
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF};
  bool can_apply = ocl_tf.MaybeLockVariableInputMutexesInOrder != NULL &&
                   ocl_tf.ReleaseVariableInputLockHolder != NULL &&
                   ocl_tf.GetInputTensorFromVariable != NULL;
  char name[96];

  if (can_apply)
    return;
  for (size_t i = 0; i < sizeof(placeholder_ops) / sizeof(placeholder_ops[0]);
       i++) {
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
      TF_Status *status = ocl_tf.NewStatus();
      TF_KernelBuilder *b = ocl_tf.NewKernelBuilder(
          placeholder_ops[i], OCL_DEVICE_TYPE, creates[i],
          placeholder_compute, placeholder_delete);
      snprintf(name, sizeof(name), "%s_%s_%d", placeholder_ops[i],
               OCL_DEVICE_TYPE, (int)types[t]);
      if (b != NULL)
        ocl_tf.KernelBuilder_TypeConstraint(b, "T", types[t], status);
      if (b != NULL && ocl_tf.GetCode(status) != TF_OK) {
        ocl_report_unusable("kernel %s: type constraint failed: %s", name,
                            ocl_tf.Message(status));
        ocl_tf.DeleteKernelBuilder(b);
        b = NULL;
      } else if (b != NULL) {
        for (const char *const *arg = placeholder_host_args[i]; *arg; arg++)
          ocl_tf.KernelBuilder_HostMemory(b, *arg);
        ocl_register_builder(name, b);
      }
      ocl_tf.DeleteStatus(status);
    }
  }
}
