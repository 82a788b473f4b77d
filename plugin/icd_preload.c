/* Opening the OpenCL drivers inside TensorFlow.
 *
 * The TensorFlow wheels import their core with RTLD_GLOBAL, and the
 * tensorflow-cpu wheels export their own copy of LLVM from it. PoCL links
 * libclang-cpp and libLLVM: when the ICD loader dlopen()s PoCL after
 * TensorFlow, the constructors of PoCL's LLVM bind to TensorFlow's global
 * LLVM symbols and crash (llvm::cl::Option::addArgument), killing
 * `import tensorflow`. Opening each driver first with RTLD_DEEPBIND makes
 * it and its dependencies prefer their own symbols; the ICD loader's later
 * dlopen() of the same file then finds it already loaded.
 *
 * Only inside TensorFlow: elsewhere there is nothing to collide with, and
 * the sanitizer runtimes refuse RTLD_DEEPBIND. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

static void open_driver(const char *library)
{
  /* The handle is never closed: the driver stays for the process's life,
   * as the ICD loader keeps it too. */
  if (dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) == NULL)
    OCL_TRACE("ICD preload of %s failed: %s", library, dlerror());
  else
    OCL_TRACE("ICD preload: %s", library);
}

/* One .icd file names one driver library. */
static void open_icd_file(const char *path)
{
  char library[4096];
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return;
  if (fgets(library, sizeof(library), f) != NULL) {
    library[strcspn(library, "\r\n")] = '\0';
    if (library[0] != '\0')
      open_driver(library);
  }
  fclose(f);
}

/* ocl-icd's rules: OCL_ICD_FILENAMES (libraries, ':'-separated) wins;
 * else the .icd files of OCL_ICD_VENDORS (a directory, or one .icd file),
 * else /etc/OpenCL/vendors. */
void ocl_icd_preload(void)
{
  if (!ocl_tf_in_tensorflow())
    return;
  const char *filenames = getenv("OCL_ICD_FILENAMES");
  if (filenames != NULL && filenames[0] != '\0') {
    char *copy = strdup(filenames), *save = NULL;
    for (char *lib = copy ? strtok_r(copy, ":", &save) : NULL; lib != NULL;
         lib = strtok_r(NULL, ":", &save))
      open_driver(lib);
    free(copy);
    return;
  }
  const char *vendors = getenv("OCL_ICD_VENDORS");
  if (vendors == NULL || vendors[0] == '\0')
    vendors = "/etc/OpenCL/vendors";
  size_t len = strlen(vendors);
  if (len > 4 && strcmp(vendors + len - 4, ".icd") == 0) {
    open_icd_file(vendors);
    return;
  }
  DIR *dir = opendir(vendors);
  if (dir == NULL)
    return;
  for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
    size_t n = strlen(e->d_name);
    if (n > 4 && strcmp(e->d_name + n - 4, ".icd") == 0) {
      char path[4096];
      snprintf(path, sizeof(path), "%s/%s", vendors, e->d_name);
      open_icd_file(path);
    }
  }
  closedir(dir);
}
