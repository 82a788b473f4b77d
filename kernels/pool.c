/* The pooling and batch-normalisation kernel family (not written yet: registers nothing). */
#include "kernel_families.h"

void ocl_register_pool_kernels(void) {}
