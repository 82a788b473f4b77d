/* printf-style status setting for kernel code. Declared here as well as in
 * plugin/ocl.h so that the pure shape logic compiles (and is unit-tested)
 * without OpenCL. */
#ifndef TFOCL_KERNELS_STATUS_FORMAT_H_
#define TFOCL_KERNELS_STATUS_FORMAT_H_

#include "tensorflow/c/tf_status.h"

/* Sets `status` to code + formatted message (through the resolved TensorFlow
 * C API inside the plugin). */
void ocl_set_status(TF_Status *status, TF_Code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* status = TF_OK. */
void ocl_set_ok(TF_Status *status);

#endif /* TFOCL_KERNELS_STATUS_FORMAT_H_ */
