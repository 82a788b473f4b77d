/* tfocl kernels: what the plugin registered in TF_InitKernel, by op, device
 * type and type constraints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfocl_cmd.h"

static void print_constraints(FILE *f, const struct tfocl_kernel_info *k,
                              bool json)
{
  for (int c = 0; c < k->num_constraints; c++) {
    const struct tfocl_type_constraint *tc = &k->constraints[c];
    if (json) {
      fprintf(f, "%s", c ? ", " : "");
      tfocl_json_string(f, tc->attr);
      fprintf(f, ": [");
    } else {
      fprintf(f, "%s%s in [", c ? "; " : "", tc->attr);
    }
    for (int t = 0; t < tc->num_types; t++) {
      if (json) {
        fprintf(f, "%s", t ? ", " : "");
        tfocl_json_string(f, tfocl_type_name(tc->types[t]));
      } else {
        fprintf(f, "%s%s", t ? ", " : "", tfocl_type_name(tc->types[t]));
      }
    }
    fprintf(f, "]");
  }
  if (!json && k->num_constraints == 0)
    fprintf(f, "-");
}

static int run(int argc, char **argv)
{
  struct tfocl_common_opts opts;
  struct tfocl_plugin *p;
  int rc = tfocl_parse_common(&tfocl_cmd_kernels, argc, argv, &opts);
  int n, ops = 0;
  const char *last_op = NULL;

  if (rc >= 0)
    return rc;
  p = tfocl_load_plugin(&opts);
  if (p == NULL)
    return TFOCL_EXIT_ERROR;
  n = tfocl_kernel_count();
  if (opts.json) {
    printf("{\"plugin\": ");
    tfocl_json_string(stdout, tfocl_plugin_path(p));
    printf(", \"kernels\": [");
  } else {
    printf("%-28s %-8s %-8s %-40s %s\n", "op", "device", "priority",
           "type constraints", "host memory");
  }
  for (int i = 0; i < n; i++) {
    struct tfocl_kernel_info k;
    if (!tfocl_kernel_get(i, &k))
      break;
    if (last_op == NULL || strcmp(last_op, k.op_name) != 0)
      ops++;
    last_op = k.op_name;
    if (opts.json) {
      printf("%s{\"name\": ", i ? ", " : "");
      tfocl_json_string(stdout, k.kernel_name);
      printf(", \"op\": ");
      tfocl_json_string(stdout, k.op_name);
      printf(", \"device_type\": ");
      tfocl_json_string(stdout, k.device_type);
      printf(", \"priority\": %d, \"constraints\": {", (int)k.priority);
      print_constraints(stdout, &k, true);
      printf("}, \"host_memory\": [");
      for (int h = 0; h < k.num_host_memory_args; h++) {
        printf("%s", h ? ", " : "");
        tfocl_json_string(stdout, k.host_memory_args[h]);
      }
      printf("], \"label\": ");
      tfocl_json_string(stdout, tfocl_kernel_label(i));
      printf(", \"op_defined\": %s}",
             tfocl_op_def_exists(k.op_name) ? "true" : "false");
    } else {
      char *cons = NULL;
      size_t cons_len = 0;
      FILE *mem = open_memstream(&cons, &cons_len);
      /* into a string first, to pad the column */
      if (mem != NULL) {
        print_constraints(mem, &k, false);
        fclose(mem);
      }
      printf("%-28s %-8s %-8d %-40s ", k.op_name, k.device_type,
             (int)k.priority, cons != NULL ? cons : "?");
      free(cons);
      for (int h = 0; h < k.num_host_memory_args; h++)
        printf("%s%s", h ? "," : "", k.host_memory_args[h]);
      if (k.num_host_memory_args == 0)
        printf("-");
      const char *label = tfocl_kernel_label(i);
      if (label[0] != '\0')
        printf("  (label %s: only nodes whose _kernel says it)", label);
      if (!tfocl_op_def_exists(k.op_name))
        printf("  (no op signature in the shim: cannot run)");
      printf("\n");
    }
  }
  if (opts.json)
    printf("], \"count\": %d, \"ops\": %d}\n", n, ops);
  else
    printf("\n%d kernel(s) for %d op(s) registered by %s\n", n, ops,
           tfocl_plugin_path(p));
  tfocl_plugin_unload(p);
  return TFOCL_EXIT_OK;
}

const struct tfocl_cmd tfocl_cmd_kernels = {
    .name = "kernels",
    .summary = "List the kernels the plugin registers (TF_InitKernel).",
    .usage = "  --plugin PATH  plugin to load\n"
             "  --json         machine-readable output\n",
    .run = run,
};
