/* libFuzzer target: the op runner over the real plugin (TFOCL_PLUGIN, on
 * PoCL). The input picks a registered OPENCL kernel (op name and type
 * constraints), up to 4 inputs (dtype, rank <= 3, dims <= 6: small, so it
 * runs on a CPU device), up to 3 attributes from the names kernels read
 * (values from the input) and the input bytes. Any outcome but a crash, a
 * sanitizer report, a leak or a hang is fine; the device must keep working
 * (checked every 256 runs). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfocl/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tfocl_plugin *plugin;
static struct tfocl_device *device;

struct kernel {
  char op[64];
  char attr[32];
  TF_DataType types[16];
  int num_types;
};
static struct kernel kernels[1024];
static int num_kernels;

static void teardown(void)
{
  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
}

static void setup(void)
{
  const char *path = getenv("TFOCL_PLUGIN");
#ifdef TFOCL_FUZZ_PLUGIN_PATH
  if (path == NULL)
    path = TFOCL_FUZZ_PLUGIN_PATH;
#endif
  TF_Status *st = TF_NewStatus();
  plugin = path ? tfocl_plugin_load(path, st) : NULL;
  if (plugin == NULL || tfocl_plugin_device_count(plugin, st) < 1 ||
      (device = tfocl_device_open(plugin, 0, st)) == NULL) {
    fprintf(stderr, "fuzz_op_runner: no device (%s): %s\n",
            path ? path : "TFOCL_PLUGIN unset", TF_Message(st));
    exit(77);
  }
  TF_DeleteStatus(st);
  int n = tfocl_kernel_count();
  for (int i = 0; i < n && num_kernels < 1024; i++) {
    struct tfocl_kernel_info info;
    if (!tfocl_kernel_get(i, &info) || strcmp(info.device_type, "OPENCL") != 0)
      continue;
    struct kernel *k = &kernels[num_kernels++];
    snprintf(k->op, sizeof(k->op), "%s", info.op_name);
    if (info.num_constraints > 0) {
      snprintf(k->attr, sizeof(k->attr), "%s", info.constraints[0].attr);
      for (int t = 0; t < info.constraints[0].num_types && t < 16; t++)
        k->types[k->num_types++] = info.constraints[0].types[t];
    }
  }
  atexit(teardown);
}

struct reader {
  const uint8_t *p;
  size_t left;
};

static uint8_t byte(struct reader *r)
{
  if (r->left == 0)
    return 0;
  r->left--;
  return *r->p++;
}

static int64_t i64(struct reader *r)
{
  /* Mostly small values, sometimes huge or negative. */
  uint8_t b = byte(r);
  switch (b % 8) {
  case 0: return -1 - (int64_t)(byte(r) % 4);
  case 1: return (int64_t)1 << (byte(r) % 63);
  case 2: return INT64_MAX - byte(r);
  default: return b % 7;
  }
}

static const char *const attr_names[] = {
    "keep_dims", "transpose_a", "transpose_b", "adj_x", "adj_y", "axis",
    "N", "num_split", "Tidx", "Tshape", "DstT", "SrcT", "Truncate", "begin_mask",
    "end_mask", "shrink_axis_mask", "new_axis_mask", "ellipsis_mask", "depth",
    "T", "Tpaddings", "Tmultiples", "Tindices", "Taxis", "batch_dims",
    "strides", "ksize", "padding", "data_format", "dilations", "epsilon",
    "is_training", "alpha", "seed", "seed2", "dtype", "exclusive", "reverse",
    "Tperm", "out_type", "use_locking", "use_nesterov",
};
#define NUM_ATTR_NAMES (int)(sizeof(attr_names) / sizeof(attr_names[0]))

static const TF_DataType input_types[] = {TF_FLOAT, TF_HALF, TF_INT32,
                                          TF_INT64, TF_BOOL, TF_DOUBLE};

static void check_device_alive(void)
{
  TF_Status *st = TF_NewStatus();
  const int64_t dims[] = {3};
  TF_Tensor *x = TF_AllocateTensor(TF_FLOAT, dims, 1, 12);
  float *v = TF_TensorData(x);
  v[0] = -1, v[1] = 2, v[2] = -3;
  TF_Tensor *y = NULL;
  int n = 0;
  tfocl_run_op(device, "Relu", NULL, 0, &x, 1, &y, 1, &n, st);
  if (TF_GetCode(st) != TF_OK) {
    fprintf(stderr, "the device stopped working: %s\n", TF_Message(st));
    abort();
  }
  TF_Tensor *h = tfocl_tensor_to_host(y, st);
  if (h == NULL || ((float *)TF_TensorData(h))[1] != 2.0f) {
    fprintf(stderr, "the device computes wrong results\n");
    abort();
  }
  TF_DeleteTensor(h);
  TF_DeleteTensor(y);
  TF_DeleteTensor(x);
  TF_DeleteStatus(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static unsigned long runs;
  if (plugin == NULL)
    setup();
  if (num_kernels == 0)
    return 0;
  struct reader r = {data, size};
  const struct kernel *k = &kernels[byte(&r) % num_kernels];
  TF_DataType t = k->num_types ? k->types[byte(&r) % k->num_types] : TF_FLOAT;

  /* Attributes: the kernel's type constraint, then fuzzed ones. */
  struct tfocl_attr attrs[4];
  int64_t ints[3][4];
  int num_attrs = 0;
  if (k->attr[0] != '\0')
    attrs[num_attrs++] = TFOCL_ATTR_T(k->attr, t);
  int extra = byte(&r) % 4;
  for (int a = 0; a < extra; a++) {
    const char *name = attr_names[byte(&r) % NUM_ATTR_NAMES];
    struct tfocl_attr *at = &attrs[num_attrs];
    uint8_t kind = byte(&r) % 6;
    at->name = name;
    switch (kind) {
    case 0: *at = TFOCL_ATTR_B(name, byte(&r) & 1); break;
    case 1: *at = TFOCL_ATTR_I(name, i64(&r)); break;
    case 2: *at = TFOCL_ATTR_T(name, input_types[byte(&r) % 6]); break;
    case 3: *at = TFOCL_ATTR_F(name, (float)(int8_t)byte(&r) / 16.0f); break;
    case 4: *at = TFOCL_ATTR_S(name, byte(&r) & 1 ? "SAME" : "NHWC"); break;
    default: {
      int n = byte(&r) % 5;
      for (int i = 0; i < n; i++)
        ints[a][i] = i64(&r);
      at->kind = TFOCL_ATTR_INT_LIST;
      at->value.ints.items = ints[a];
      at->value.ints.count = n;
    }
    }
    num_attrs++;
  }

  /* Inputs. */
  TF_Tensor *inputs[4] = {0};
  int num_inputs = byte(&r) % 5;
  for (int i = 0; i < num_inputs; i++) {
    uint8_t choice = byte(&r);
    TF_DataType dt = choice % 4 == 0 ? input_types[(choice >> 2) % 6] : t;
    int rank = byte(&r) % 4;
    int64_t dims[3], n = 1;
    for (int d = 0; d < rank; d++) {
      dims[d] = byte(&r) % 7;
      n *= dims[d];
    }
    size_t bytes = (size_t)n * TF_DataTypeSize(dt);
    inputs[i] = TF_AllocateTensor(dt, dims, rank, bytes);
    if (inputs[i] == NULL)
      continue;
    uint8_t *p = TF_TensorData(inputs[i]);
    for (size_t b = 0; b < bytes; b++)
      p[b] = r.left ? data[size - r.left + (b % r.left)] : (uint8_t)b;
    if (dt == TF_BOOL)
      for (size_t b = 0; b < bytes; b++)
        p[b] &= 1;
    /* Integers are shapes, axes, indices, multiples: small values, or an
     * extreme one (overflow, negative). Moderately large raw values would
     * only make valid multi-GiB outputs, slow under the sanitizers. */
    if (dt == TF_INT32 || dt == TF_INT64) {
      static const int64_t extremes[] = {INT64_MAX, INT64_MIN, INT32_MAX,
                                         INT32_MIN, (int64_t)1 << 40, -1};
      for (int64_t e = 0; e < n; e++) {
        uint8_t b = p[(size_t)e * TF_DataTypeSize(dt)];
        int64_t v = b % 16 == 15 ? extremes[(b >> 4) % 6] : (int64_t)(b % 9) - 1;
        if (dt == TF_INT32)
          ((int32_t *)p)[e] = (int32_t)v;
        else
          ((int64_t *)p)[e] = v;
      }
    }
  }

  if (getenv("TFOCL_FUZZ_VERBOSE") != NULL) {
    fprintf(stderr, "fuzz: %s, %d attrs:", k->op, num_attrs);
    for (int a = 0; a < num_attrs; a++)
      fprintf(stderr, " %s(kind %d)", attrs[a].name, (int)attrs[a].kind);
    fprintf(stderr, "; %d inputs:", num_inputs);
    for (int i = 0; i < num_inputs; i++) {
      if (inputs[i] == NULL) {
        fprintf(stderr, " NULL");
        continue;
      }
      fprintf(stderr, " %s[", tfocl_type_name(TF_TensorType(inputs[i])));
      for (int d = 0; d < TF_NumDims(inputs[i]); d++)
        fprintf(stderr, "%s%lld", d ? "," : "", (long long)TF_Dim(inputs[i], d));
      fprintf(stderr, "]");
    }
    fprintf(stderr, "\n");
  }
  TF_Status *st = TF_NewStatus();
  TF_Tensor *outputs[8] = {0};
  int num_outputs = 0;
  tfocl_run_op(device, k->op, attrs, num_attrs, inputs, num_inputs, outputs,
               8, &num_outputs, st);
  for (int i = 0; i < num_outputs; i++) {
    if (TF_GetCode(st) == TF_OK) {
      TF_Status *s2 = TF_NewStatus();
      TF_DeleteTensor(tfocl_tensor_to_host(outputs[i], s2));
      TF_DeleteStatus(s2);
    }
    TF_DeleteTensor(outputs[i]);
  }
  for (int i = 0; i < num_inputs; i++)
    TF_DeleteTensor(inputs[i]);
  TF_DeleteStatus(st);
  if (++runs % 256 == 0)
    check_device_alive();
  return 0;
}
