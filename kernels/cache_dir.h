/* The directory of what tfocl keeps between processes (program binaries,
 * GEMM choices). plugin/program_binaries.c implements it; it is declared on
 * this side of the boundary because kernels/ (gemm_tune.c) keeps its
 * choices there and never includes plugin/. */
#ifndef TFOCL_KERNELS_CACHE_DIR_H_
#define TFOCL_KERNELS_CACHE_DIR_H_

#include <stdbool.h>
#include <stddef.h>

/* dir = <base>/<sub>, created 0700 where missing, with <base>
 * $TFOCL_CACHE_DIR, else $XDG_CACHE_HOME/tfocl, else ~/.cache/tfocl. False
 * (dir "") when nothing is to be kept: TFOCL_CACHE_DIR=off or empty, no
 * usable path, or a directory that is not this user's own or that group or
 * others can write (what is kept there decides what runs). The base is
 * the plugin's settings' (config.h); the directories are checked on each
 * call: callers ask once per context or per process. */
bool ocl_cache_subdir(const char *sub, char *dir, size_t size);

#endif /* TFOCL_KERNELS_CACHE_DIR_H_ */
