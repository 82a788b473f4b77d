/* The convolution kernel family (not written yet: registers nothing). */
#include "kernel_families.h"

void ocl_register_conv_kernels(void) {}
