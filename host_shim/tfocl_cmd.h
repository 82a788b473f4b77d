/* The tfocl command: shared helpers and the subcommand table entry. A new
 * subcommand (run, bench) is one tfocl_<name>.c defining a
 * struct tfocl_cmd, plus one line in tfocl.c's table. */
#ifndef TFOCL_CMD_H_
#define TFOCL_CMD_H_

#include <stdbool.h>
#include <stdio.h>

#include "tfocl/host.h"

enum { TFOCL_EXIT_OK = 0, TFOCL_EXIT_ERROR = 1, TFOCL_EXIT_USAGE = 2 };

struct tfocl_cmd {
  const char *name;
  const char *summary;
  const char *usage; /* options, one per line */
  /* argv[0] is the subcommand name. Returns a TFOCL_EXIT_* code. */
  int (*run)(int argc, char **argv);
};

extern const struct tfocl_cmd tfocl_cmd_devices;
extern const struct tfocl_cmd tfocl_cmd_graph;
extern const struct tfocl_cmd tfocl_cmd_kernels;
extern const struct tfocl_cmd tfocl_cmd_run;
extern const struct tfocl_cmd tfocl_cmd_bench;

/* Options every plugin-using subcommand takes. */
struct tfocl_common_opts {
  bool json;
  const char *plugin; /* --plugin */
};

/* Parses --json, --plugin PATH, --help. Returns -1 to go on, else an exit
 * code (help printed, or a usage error reported). */
int tfocl_parse_common(const struct tfocl_cmd *cmd, int argc, char **argv,
                       struct tfocl_common_opts *opts);
/* --plugin, else $TFOCL_PLUGIN, else the build tree's plugin next to this
 * executable, else the installed one. */
const char *tfocl_resolve_plugin(const char *option, char *buf, size_t size);
/* Loads it, or prints why on stderr and returns NULL. */
struct tfocl_plugin *tfocl_load_plugin(const struct tfocl_common_opts *opts);
void tfocl_json_string(FILE *f, const char *s);
void tfocl_cmd_usage(FILE *f, const struct tfocl_cmd *cmd);

#endif /* TFOCL_CMD_H_ */
