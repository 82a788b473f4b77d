/* tfocl graph: runs the plugin's graph optimizer (TF_InitGraph) on a
 * serialized GraphDef, as Grappler does, and writes what it returned. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tfocl_cmd.h"

#define MAX_NAMES 256

static int run_graph(int argc, char **argv);

const struct tfocl_cmd tfocl_cmd_graph = {
    .name = "graph",
    .summary = "run the plugin's graph optimizer on a GraphDef file",
    .usage = "  IN                 the serialized GraphDef (binary protobuf)\n"
             "  OUT                where to write the optimized GraphDef "
             "(optional)\n"
             "  --fetch NAME       a fetch node (repeatable)\n"
             "  --preserve NAME    a node to preserve (repeatable)\n"
             "  --plugin PATH      the plugin (default: see 'tfocl --help')\n"
             "  --json             one JSON object on stdout\n",
    .run = run_graph,
};

static void *read_file(const char *path, size_t *size)
{
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t len = 0, cap = 0;
  if (f == NULL)
    return NULL;
  for (;;) {
    if (len == cap) {
      size_t ncap = cap ? cap * 2 : 65536;
      char *n = realloc(buf, ncap);
      if (n == NULL) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = n;
      cap = ncap;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0)
      break;
  }
  bool bad = ferror(f) != 0;
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  *size = len;
  return buf != NULL ? buf : malloc(1);
}

static bool write_file(const char *path, const void *data, size_t size)
{
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    return false;
  bool ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

static int run_graph(int argc, char **argv)
{
  const struct tfocl_cmd *cmd = &tfocl_cmd_graph;
  struct tfocl_common_opts opts = {0};
  const char *fetch[MAX_NAMES], *preserve[MAX_NAMES];
  int num_fetch = 0, num_preserve = 0;
  const char *in_path = NULL, *out_path = NULL;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool takes = strcmp(a, "--fetch") == 0 || strcmp(a, "--preserve") == 0 ||
                 strcmp(a, "--plugin") == 0;
    if (takes && i + 1 >= argc) {
      fprintf(stderr, "tfocl graph: %s needs a value\n", a);
      return TFOCL_EXIT_USAGE;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      tfocl_cmd_usage(stdout, cmd);
      return TFOCL_EXIT_OK;
    } else if (strcmp(a, "--json") == 0) {
      opts.json = true;
    } else if (strcmp(a, "--plugin") == 0) {
      opts.plugin = argv[++i];
    } else if (strncmp(a, "--plugin=", 9) == 0) {
      opts.plugin = a + 9;
    } else if (strcmp(a, "--fetch") == 0 || strcmp(a, "--preserve") == 0) {
      bool is_fetch = a[2] == 'f';
      int *n = is_fetch ? &num_fetch : &num_preserve;
      if (*n == MAX_NAMES) {
        fprintf(stderr, "tfocl graph: at most %d %s names\n", MAX_NAMES,
                a + 2);
        return TFOCL_EXIT_USAGE;
      }
      (is_fetch ? fetch : preserve)[(*n)++] = argv[++i];
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "tfocl graph: unknown option '%s'\n\n", a);
      tfocl_cmd_usage(stderr, cmd);
      return TFOCL_EXIT_USAGE;
    } else if (in_path == NULL) {
      in_path = a;
    } else if (out_path == NULL) {
      out_path = a;
    } else {
      fprintf(stderr, "tfocl graph: one input and one output file\n");
      return TFOCL_EXIT_USAGE;
    }
  }
  if (in_path == NULL) {
    fprintf(stderr, "tfocl graph: no input file\n\n");
    tfocl_cmd_usage(stderr, cmd);
    return TFOCL_EXIT_USAGE;
  }

  size_t size = 0;
  void *graph = read_file(in_path, &size);
  if (graph == NULL) {
    fprintf(stderr, "tfocl graph: cannot read %s: %s\n", in_path,
            strerror(errno));
    return TFOCL_EXIT_ERROR;
  }
  struct tfocl_plugin *p = tfocl_load_plugin(&opts);
  if (p == NULL) {
    free(graph);
    return TFOCL_EXIT_ERROR;
  }
  int rc = TFOCL_EXIT_ERROR;
  const char *type = tfocl_plugin_graph_device_type(p);
  if (type == NULL) {
    fprintf(stderr, "tfocl graph: %s registers no graph optimizer\n",
            tfocl_plugin_path(p));
    goto out;
  }
  struct tfocl_graph_item item = {fetch, num_fetch, preserve, num_preserve};
  TF_Status *st = TF_NewStatus();
  void *result = NULL;
  size_t result_size = 0;
  tfocl_graph_optimize(p, graph, size, &item, &result, &result_size, st);
  if (TF_GetCode(st) != TF_OK) {
    fprintf(stderr, "tfocl graph: the optimizer failed: %s (code %d)\n",
            TF_Message(st), (int)TF_GetCode(st));
  } else if (out_path != NULL && !write_file(out_path, result, result_size)) {
    fprintf(stderr, "tfocl graph: cannot write %s: %s\n", out_path,
            strerror(errno));
  } else {
    bool changed = result_size != size ||
                   (size > 0 && memcmp(result, graph, size) != 0);
    if (opts.json) {
      printf("{\"device_type\": ");
      tfocl_json_string(stdout, type);
      printf(", \"in_bytes\": %zu, \"out_bytes\": %zu, \"changed\": %s}\n",
             size, result_size, changed ? "true" : "false");
    } else {
      printf("%s optimizer: %zu bytes in, %zu bytes out, %s\n", type, size,
             result_size, changed ? "changed" : "unchanged");
    }
    rc = TFOCL_EXIT_OK;
  }
  tfocl_graph_free(result);
  TF_DeleteStatus(st);
out:
  tfocl_plugin_unload(p);
  free(graph);
  return rc;
}
