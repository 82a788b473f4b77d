/* The movement kernel family (not written yet: registers nothing). */
#include "kernel_families.h"

void ocl_register_movement_kernels(void) {}
