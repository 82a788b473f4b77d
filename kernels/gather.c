/* The gather kernel family (not written yet: registers nothing). */
#include "kernel_families.h"

void ocl_register_gather_kernels(void) {}
