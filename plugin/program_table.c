/* tfocl plugin: the kernel families' static program tables, found by name
 * (OCL_PROGRAM_TABLE, kernels/runtime.h). The linker gathers every table
 * into the section "ocl_programs" and names its bounds; a build without
 * any table (a test linking the plugin's objects alone) has neither, hence
 * the weak references. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "ocl.h"
#include "runtime.h"

extern const char __start_ocl_programs[] __attribute__((weak));
extern const char __stop_ocl_programs[] __attribute__((weak));

/* A table is an array of struct ocl_program, but the compiler may align a
 * table beyond its elements' alignment (x86-64 aligns arrays of 16 bytes or
 * more to 16 or 32), so zeros can sit between two tables; a hole in a table
 * (an element a designated initializer left out) is zeros too. Neither
 * starts with a name: the walk steps over them a pointer at a time. */
const char *ocl_program_table_find(const char *name, const char *options)
{
  const char *at = __start_ocl_programs, *end = __stop_ocl_programs;

  if (!at || !end || !name || !options)
    return NULL;
  while (at + sizeof(struct ocl_program) <= end) {
    const struct ocl_program *p = (const struct ocl_program *)(const void *)at;
    if (p->name == NULL) {
      at += sizeof(const char *);
      continue;
    }
    if (p->source && strcmp(p->name, name) == 0 &&
        strcmp(p->build_options ? p->build_options : "", options) == 0)
      return p->source;
    at += sizeof *p;
  }
  return NULL;
}

char *ocl_program_generated_source(const char *name, const char *options)
{
  if (!name || !options || options[0] != '\0')
    return NULL;
  return ocl_fused_program_source(name);
}
