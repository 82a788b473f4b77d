/* tfocl run: one op on the device, checked against its float64 host
 * reference (host_shim/reference/).
 *
 *   tfocl run AddV2 --shape 3,4 --shape 4          random float inputs
 *   tfocl run Sum --input float:3,4 --input int32:1:1 --attr keep_dims=true
 *   tfocl run Relu --dtype half                    the reference's own cases
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "tfocl_cmd.h"

#define MAX_ARGS 16

struct run_opts {
  const char *op;
  TF_DataType dtype;
  int device;
  int num_inputs;
  const char *inputs[MAX_ARGS]; /* "dtype:dims[:values]" or "dims" (--shape) */
  bool input_is_shape[MAX_ARGS];
  int num_attrs;
  const char *attrs[MAX_ARGS]; /* name=value */
};

/* "3,4" → dims; "" or "scalar" → rank 0. */
static bool parse_dims(const char *s, int64_t *dims, int *rank)
{
  *rank = 0;
  if (*s == '\0' || strcmp(s, "scalar") == 0)
    return true;
  while (*s) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno != 0 || v < 0 || *rank == REF_MAX_DIMS)
      return false;
    dims[(*rank)++] = v;
    s = end;
    if (*s == ',' || *s == 'x')
      s++;
    else if (*s != '\0' && *s != ':')
      return false;
    if (*s == ':')
      break;
  }
  return true;
}

static bool parse_values(const char *s, double *values, int64_t count)
{
  for (int64_t i = 0; i < count; i++) {
    char *end;
    values[i] = strtod(s, &end);
    if (end == s)
      return false;
    s = end;
    if (*s == ',')
      s++;
  }
  return *s == '\0';
}

static bool add_input(struct ref_case *c, const struct ref_op *ref,
                      const char *spec, bool is_shape, TF_DataType dtype)
{
  int64_t dims[REF_MAX_DIMS];
  int rank;
  const char *dims_text = spec;
  char type_name[32];

  if (!is_shape) {
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    if (colon == NULL || n >= sizeof(type_name))
      return false;
    memcpy(type_name, spec, n);
    type_name[n] = '\0';
    if (!tfocl_type_from_name(type_name, &dtype))
      return false;
    dims_text = colon + 1;
  }
  if (!parse_dims(dims_text, dims, &rank))
    return false;
  const char *values_text = is_shape ? NULL : strchr(dims_text, ':');
  if (values_text != NULL) {
    int64_t count = 1;
    for (int i = 0; i < rank; i++)
      count *= dims[i];
    double *values = calloc((size_t)(count > 0 ? count : 1), sizeof(double));
    bool ok = values != NULL && parse_values(values_text + 1, values, count);
    if (ok)
      ref_case_input_values(c, dtype, dims, rank, values);
    free(values);
    return ok;
  }
  /* A distinct generator per input. */
  c->label[0] = (char)('A' + c->num_inputs);
  ref_case_input(c, dtype, dims, rank, ref != NULL ? ref->domain : REF_ANY);
  return true;
}

/* name=value, typed by its spelling: true/false, an integer, a number, a
 * dtype name, [i,j,...] (int list), else a string. */
static bool add_attr(struct ref_case *c, const char *spec)
{
  const char *eq = strchr(spec, '=');
  if (eq == NULL || eq == spec)
    return false;
  /* The name must outlive the case: keep it in the case's own arena. */
  static char names[MAX_ARGS][64];
  static int used;
  if (used == MAX_ARGS || (size_t)(eq - spec) >= sizeof(names[0]))
    return false;
  char *name = names[used++];
  memcpy(name, spec, (size_t)(eq - spec));
  name[eq - spec] = '\0';
  const char *value = eq + 1;
  char *end;
  TF_DataType dtype;

  if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0) {
    ref_case_attr_bool(c, name, value[0] == 't');
    return true;
  }
  long long i = strtoll(value, &end, 10);
  if (end != value && *end == '\0') {
    ref_case_attr_int(c, name, i);
    return true;
  }
  double f = strtod(value, &end);
  if (end != value && *end == '\0') {
    ref_case_attr_float(c, name, (float)f);
    return true;
  }
  if (tfocl_type_from_name(value, &dtype)) {
    ref_case_attr_type(c, name, dtype);
    return true;
  }
  if (value[0] == '[') {
    int64_t items[32];
    int count = 0;
    const char *p = value + 1;
    while (*p && *p != ']' && count < 32) {
      items[count++] = strtoll(p, &end, 10);
      if (end == p)
        return false;
      p = *end == ',' ? end + 1 : end;
    }
    if (*p != ']')
      return false;
    ref_case_attr_ints(c, name, items, count);
    return true;
  }
  ref_case_attr_string(c, name, value);
  return true;
}

static void print_result(const struct tfocl_common_opts *common,
                         const struct ref_case *c, const struct ref_op *ref,
                         const struct ref_result *r, bool first)
{
  if (common->json) {
    printf("%s\n  {\"case\": ", first ? "" : ",");
    tfocl_json_string(stdout, c->label);
    printf(", \"passed\": %s, \"code\": %d, \"max_error\": %.9g, "
           "\"mismatches\": %lld, \"message\": ",
           r->passed ? "true" : "false", (int)r->code, r->max_error,
           (long long)r->mismatches);
    tfocl_json_string(stdout, r->message);
    printf("}");
    return;
  }
  printf("%-44s %-6s max error %-10.3g", c->label, r->passed ? "ok" : "FAIL",
         r->max_error);
  if (ref != NULL && c->expect_code == TF_OK)
    printf(" (tolerance rtol %g atol %g)", ref->rtol, ref->atol);
  if (c->expect_code != TF_OK)
    printf(" (expected error %d)", (int)c->expect_code);
  printf("\n");
  if (!r->passed || (r->code != TF_OK && c->expect_code == TF_OK))
    printf("    %s\n", r->message);
}

static int run(int argc, char **argv)
{
  struct run_opts o = {.dtype = TF_FLOAT};
  struct tfocl_common_opts common = {0};
  char *common_argv[8];
  int common_argc = 0;

  common_argv[common_argc++] = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if ((!strcmp(a, "--shape") || !strcmp(a, "--input")) && next != NULL &&
        o.num_inputs < MAX_ARGS) {
      o.input_is_shape[o.num_inputs] = a[2] == 's';
      o.inputs[o.num_inputs++] = argv[++i];
    } else if (!strcmp(a, "--attr") && next != NULL && o.num_attrs < MAX_ARGS) {
      o.attrs[o.num_attrs++] = argv[++i];
    } else if (!strcmp(a, "--dtype") && next != NULL) {
      if (!tfocl_type_from_name(argv[++i], &o.dtype)) {
        fprintf(stderr, "tfocl run: unknown dtype '%s'\n", argv[i]);
        return TFOCL_EXIT_USAGE;
      }
    } else if (!strcmp(a, "--device") && next != NULL) {
      o.device = atoi(argv[++i]);
    } else if (a[0] != '-' && o.op == NULL) {
      o.op = a;
    } else if (common_argc < 6) {
      common_argv[common_argc++] = argv[i];
      if (!strcmp(a, "--plugin") && next != NULL)
        common_argv[common_argc++] = argv[++i];
    }
  }
  int rc = tfocl_parse_common(&tfocl_cmd_run, common_argc, common_argv, &common);
  if (rc >= 0)
    return rc;
  if (o.op == NULL) {
    fprintf(stderr, "tfocl run: which op? (e.g. tfocl run AddV2 --shape 3,4 "
                    "--shape 4)\n\n");
    tfocl_cmd_usage(stderr, &tfocl_cmd_run);
    return TFOCL_EXIT_USAGE;
  }

  const struct ref_op *ref = ref_op_find_typed(o.op, o.dtype);
  struct ref_cases cases = {0};
  if (o.num_inputs > 0 || o.num_attrs > 0 || ref == NULL) {
    struct ref_case *c = ref_case_add(&cases, o.op, "%s", o.op);
    for (int i = 0; i < o.num_inputs; i++) {
      if (!add_input(c, ref, o.inputs[i], o.input_is_shape[i], o.dtype)) {
        fprintf(stderr, "tfocl run: bad input '%s' (--shape 3,4 or --input "
                        "dtype:3,4[:v1,v2,...])\n",
                o.inputs[i]);
        ref_cases_finish(&cases);
        return TFOCL_EXIT_USAGE;
      }
    }
    snprintf(c->label, sizeof(c->label), "%s [%s]", o.op,
             tfocl_type_name(c->num_inputs > 0 ? c->inputs[0].dtype : o.dtype));
    for (int i = 0; i < o.num_attrs; i++) {
      if (!add_attr(c, o.attrs[i])) {
        fprintf(stderr, "tfocl run: bad attribute '%s' (name=value)\n",
                o.attrs[i]);
        ref_cases_finish(&cases);
        return TFOCL_EXIT_USAGE;
      }
    }
  } else {
    ref->cases(ref, o.dtype, &cases);
  }

  struct tfocl_plugin *plugin = tfocl_load_plugin(&common);
  if (plugin == NULL) {
    ref_cases_finish(&cases);
    return TFOCL_EXIT_ERROR;
  }
  TF_Status *status = TF_NewStatus();
  struct tfocl_device *device = tfocl_device_open(plugin, o.device, status);
  if (device == NULL) {
    fprintf(stderr, "tfocl run: device %d: %s\n", o.device, TF_Message(status));
    TF_DeleteStatus(status);
    tfocl_plugin_unload(plugin);
    ref_cases_finish(&cases);
    return TFOCL_EXIT_ERROR;
  }

  /* An output element the kernel never writes reads as NaN (or -1), not
   * as the zero of fresh memory. */
  tfocl_device_poison_outputs(device, true);

  if (ref == NULL && !common.json)
    printf("%s has no host reference: outputs are not checked\n", o.op);
  if (common.json) {
    printf("{\"op\": ");
    tfocl_json_string(stdout, o.op);
    printf(", \"dtype\": \"%s\", \"results\": [", tfocl_type_name(o.dtype));
  }
  int failed = 0;
  for (int i = 0; i < cases.count; i++) {
    struct ref_result r;
    if (ref != NULL) {
      ref_run_case(device, ref, &cases.items[i], &r);
    } else {
      /* No reference: run it and report only the outcome. */
      memset(&r, 0, sizeof(r));
      TF_Tensor *in[REF_MAX_TENSORS] = {NULL}, *out[REF_MAX_TENSORS] = {NULL};
      int n_out = 0;
      for (int k = 0; k < cases.items[i].num_inputs; k++)
        in[k] = ref_tensor_to_tf(&cases.items[i].inputs[k], status);
      tfocl_run_op(device, o.op, cases.items[i].attrs,
                   cases.items[i].num_attrs, in, cases.items[i].num_inputs,
                   out, REF_MAX_TENSORS, &n_out, status);
      r.code = TF_GetCode(status);
      r.passed = r.code == TF_OK;
      snprintf(r.message, sizeof(r.message), "%s",
               r.passed ? "ran (unchecked)" : TF_Message(status));
      for (int k = 0; k < REF_MAX_TENSORS; k++) {
        TF_DeleteTensor(in[k]);
        TF_DeleteTensor(out[k]);
      }
    }
    failed += !r.passed;
    print_result(&common, &cases.items[i], ref, &r, i == 0);
  }
  if (common.json)
    printf("\n], \"failed\": %d}\n", failed);
  else
    printf("%d passed, %d failed\n", cases.count - failed, failed);

  ref_cases_finish(&cases);
  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
  TF_DeleteStatus(status);
  return failed ? TFOCL_EXIT_ERROR : TFOCL_EXIT_OK;
}

const struct tfocl_cmd tfocl_cmd_run = {
    .name = "run",
    .summary = "run one op on the device and check it against the host "
               "reference",
    .usage = "OP                     the op, e.g. AddV2\n"
             "--dtype T              input type (default float): float, "
             "half, int32, int64, bool\n"
             "--shape 3,4            a random input of --dtype with this shape "
             "(repeat per input)\n"
             "--input T:3,4[:v,...]  an input of type T, random or with the "
             "given values\n"
             "--attr name=value      an attribute (true/false, 1, 0.5, float, "
             "[1,2], text)\n"
             "--device N             device ordinal (default 0)\n"
             "--json                 machine-readable output\n"
             "--plugin PATH          the plugin to load\n"
             "Without --shape/--input, runs the reference's own cases for "
             "--dtype.",
    .run = run,
};
