/* The random-number kernel family (not written yet: registers nothing). */
#include "kernel_families.h"

void ocl_register_random_kernels(void) {}
