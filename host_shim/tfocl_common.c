/* Helpers shared by the tfocl subcommands. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfocl_cmd.h"

void tfocl_cmd_usage(FILE *f, const struct tfocl_cmd *cmd)
{
  fprintf(f, "usage: tfocl %s [options]\n\n%s\n\noptions:\n%s", cmd->name,
          cmd->summary, cmd->usage);
}

int tfocl_parse_common(const struct tfocl_cmd *cmd, int argc, char **argv,
                       struct tfocl_common_opts *opts)
{
  *opts = (struct tfocl_common_opts){0};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      opts->json = true;
    } else if (strcmp(argv[i], "--plugin") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "tfocl %s: --plugin needs a path\n", cmd->name);
        return TFOCL_EXIT_USAGE;
      }
      opts->plugin = argv[++i];
    } else if (strncmp(argv[i], "--plugin=", 9) == 0) {
      opts->plugin = argv[i] + 9;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      tfocl_cmd_usage(stdout, cmd);
      return TFOCL_EXIT_OK;
    } else {
      fprintf(stderr, "tfocl %s: unknown option '%s'\n\n", cmd->name,
              argv[i]);
      tfocl_cmd_usage(stderr, cmd);
      return TFOCL_EXIT_USAGE;
    }
  }
  return -1;
}

const char *tfocl_resolve_plugin(const char *option, char *buf, size_t size)
{
  const char *env = getenv("TFOCL_PLUGIN");
  char exe[PATH_MAX];
  ssize_t n;

  if (option != NULL)
    return option;
  if (env != NULL && env[0] != '\0')
    return env;
  /* In the build tree the command sits in host_shim/, the plugin in
   * plugin/. */
  n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    char *slash;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash != NULL) {
      *slash = '\0';
      snprintf(buf, size, "%s/../plugin/libtfocl.so", exe);
      if (access(buf, R_OK) == 0)
        return buf;
    }
  }
  return TFOCL_PLUGIN_INSTALL_PATH;
}

struct tfocl_plugin *tfocl_load_plugin(const struct tfocl_common_opts *opts)
{
  char buf[PATH_MAX + 32];
  const char *path = tfocl_resolve_plugin(opts->plugin, buf, sizeof(buf));
  TF_Status *st = TF_NewStatus();
  struct tfocl_plugin *p;

  if (st == NULL) {
    fprintf(stderr, "tfocl: out of memory\n");
    return NULL;
  }
  p = tfocl_plugin_load(path, st);
  if (p == NULL)
    fprintf(stderr, "tfocl: cannot load plugin %s: %s (code %d)\n", path,
            TF_Message(st), (int)TF_GetCode(st));
  TF_DeleteStatus(st);
  return p;
}

void tfocl_json_string(FILE *f, const char *s)
{
  if (s == NULL) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\')
      fprintf(f, "\\%c", *c);
    else if (*c < 0x20)
      fprintf(f, "\\u%04x", *c);
    else
      fputc(*c, f);
  }
  fputc('"', f);
}
