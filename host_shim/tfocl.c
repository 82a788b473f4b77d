/* tfocl: what a PluggableDevice plugin offers, seen through the host shim.
 * Subcommands live in their own files, listed in `commands`. */
#include <stdio.h>
#include <string.h>

#include "tfocl_cmd.h"

static const struct tfocl_cmd *const commands[] = {
    &tfocl_cmd_devices,
    &tfocl_cmd_graph,
    &tfocl_cmd_kernels,
    &tfocl_cmd_run,
    &tfocl_cmd_bench,
};
#define NUM_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
  fprintf(f,
          "usage: tfocl <command> [options]\n"
          "\n"
          "Loads a TensorFlow PluggableDevice plugin (libtfocl.so by default) "
          "with the\n"
          "tfocl host shim, which reproduces TensorFlow %s's loading and "
          "validation.\n"
          "\n"
          "commands:\n",
          TFOCL_HOST_TF_VERSION);
  for (size_t i = 0; i < NUM_COMMANDS; i++)
    fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
  fprintf(f,
          "\n"
          "The plugin is --plugin PATH, else $TFOCL_PLUGIN, else the build "
          "tree's\n"
          "plugin/libtfocl.so, else %s.\n"
          "Run 'tfocl <command> --help' for a command's options.\n"
          "Exit status: 0 success, 1 error, 2 usage error.\n",
          TFOCL_PLUGIN_INSTALL_PATH);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    usage(stderr);
    return TFOCL_EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return TFOCL_EXIT_OK;
  }
  for (size_t i = 0; i < NUM_COMMANDS; i++)
    if (strcmp(argv[1], commands[i]->name) == 0)
      return commands[i]->run(argc - 1, argv + 1);
  fprintf(stderr, "tfocl: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return TFOCL_EXIT_USAGE;
}
