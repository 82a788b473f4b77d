/* The OS seam for plugins: the only file that includes <dlfcn.h>. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

void *shim_dl_open(const char *path, TF_Status *status)
{
  void *h;
  const char *err;

  /* RTLD_LOCAL: two plugins must not see each other's symbols; RTLD_NOW:
   * an unresolved symbol is a load error now, not a crash mid-kernel. */
  dlerror();
  h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    err = dlerror();
    shim_set_status(status, TF_NOT_FOUND, "%s",
                    err != NULL ? err : "dlopen failed");
    return NULL;
  }
  shim_set_ok(status);
  return h;
}

void *shim_dl_sym(void *handle, const char *name)
{
  dlerror();
  return dlsym(handle, name);
}

void shim_dl_close(void *handle)
{
  if (handle != NULL)
    dlclose(handle);
}
