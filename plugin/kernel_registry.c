/* tfocl plugin: registration of every kernel family (TF_InitKernel), and
 * the record of what was registered, which the graph optimizer asks before
 * it puts an op into a graph (ocl_kernel_registered). */
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

/* Kernel names registered successfully ("<op>_OPENCL[_<dtype>...]", see
 * ocl_register_kernel), in registration order. Written during
 * TF_InitKernel, read by graph optimizations on TensorFlow's threads. */
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
static char **records;
static size_t num_records, cap_records;

static void record(const char *kernel_name)
{
  pthread_mutex_lock(&records_lock);
  if (num_records == cap_records) {
    size_t cap = cap_records ? cap_records * 2 : 256;
    char **grown = realloc(records, cap * sizeof(*grown));
    if (grown == NULL)
      goto out; /* the optimizer then only misses a chance */
    records = grown;
    cap_records = cap;
  }
  char *copy = strdup(kernel_name);
  if (copy != NULL)
    records[num_records++] = copy;
out:
  pthread_mutex_unlock(&records_lock);
}

/* Whether `name` is "<op>_OPENCL" followed by nothing (no type
 * constraint) or by "_<n>" groups of which one is dtype. */
static bool record_matches(const char *name, const char *op, TF_DataType dtype)
{
  static const char device[] = "_" OCL_DEVICE_TYPE;
  size_t op_len = strlen(op);
  if (strncmp(name, op, op_len) != 0 ||
      strncmp(name + op_len, device, sizeof(device) - 1) != 0)
    return false;
  const char *p = name + op_len + sizeof(device) - 1;
  if (*p == '\0')
    return true;
  while (*p == '_') {
    char *end;
    long v = strtol(p + 1, &end, 10);
    if (end == p + 1)
      return false;
    if (v == (long)dtype)
      return true;
    p = end;
  }
  return false;
}

bool ocl_kernel_registered(const char *op, TF_DataType dtype)
{
  bool found = false;
  pthread_mutex_lock(&records_lock);
  for (size_t i = 0; i < num_records && !found; i++)
    found = record_matches(records[i], op, dtype);
  pthread_mutex_unlock(&records_lock);
  return found;
}

bool ocl_kernel_name_registered(const char *kernel_name)
{
  bool found = false;
  pthread_mutex_lock(&records_lock);
  for (size_t i = 0; i < num_records && !found; i++)
    found = strcmp(records[i], kernel_name) == 0;
  pthread_mutex_unlock(&records_lock);
  return found;
}

bool ocl_register_builder(const char *kernel_name, TF_KernelBuilder *builder) {
  TF_Status *status;
  bool ok;

  if (!builder) {
    ocl_report_unusable("kernel %s: TF_NewKernelBuilder returned NULL",
                        kernel_name);
    return false;
  }
  status = ocl_tf.NewStatus();
  ocl_tf.RegisterKernelBuilder(kernel_name, builder, status); /* takes it */
  ok = ocl_tf.GetCode(status) == TF_OK;
  if (ok)
    record(kernel_name);
  if (!ok) {
    OCL_TRACE("registering %s: %s", kernel_name, ocl_tf.Message(status));
    ocl_report_unusable("registering kernel %s failed: %s", kernel_name,
                        ocl_tf.Message(status));
  }
  ocl_tf.DeleteStatus(status);
  return ok;
}

/* NoOp: TensorFlow registers it for CPU and GPU only (not DEFAULT). */
static void noop_compute(void *kernel, TF_OpKernelContext *ctx) {
  (void)kernel;
  (void)ctx;
}

static void register_noop(void) {
  ocl_register_builder(
      "NoOp_OPENCL",
      ocl_tf.NewKernelBuilder("NoOp", OCL_DEVICE_TYPE, NULL, noop_compute, NULL));
}

void ocl_register_kernels(void) {
  register_noop();
  ocl_register_kernel_families();
  ocl_graph_register_kernels();
}
