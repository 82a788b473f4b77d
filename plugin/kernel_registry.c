/* tfocl plugin: registration of every kernel family (TF_InitKernel). */
#include "ocl.h"

bool ocl_register_builder(const char *kernel_name, TF_KernelBuilder *builder) {
  TF_Status *status;
  bool ok;

  if (!builder) {
    ocl_report_unusable("kernel %s: TF_NewKernelBuilder returned NULL",
                        kernel_name);
    return false;
  }
  status = ocl_tf.NewStatus();
  ocl_tf.RegisterKernelBuilder(kernel_name, builder, status); /* takes it */
  ok = ocl_tf.GetCode(status) == TF_OK;
  if (!ok) {
    OCL_TRACE("registering %s: %s", kernel_name, ocl_tf.Message(status));
    ocl_report_unusable("registering kernel %s failed: %s", kernel_name,
                        ocl_tf.Message(status));
  }
  ocl_tf.DeleteStatus(status);
  return ok;
}

/* NoOp: TensorFlow registers it for CPU and GPU only (not DEFAULT). */
static void noop_compute(void *kernel, TF_OpKernelContext *ctx) {
  (void)kernel;
  (void)ctx;
}

static void register_noop(void) {
  ocl_register_builder(
      "NoOp_OPENCL",
      ocl_tf.NewKernelBuilder("NoOp", OCL_DEVICE_TYPE, NULL, noop_compute, NULL));
}

void ocl_register_kernels(void) {
  register_noop();
  ocl_register_kernel_families();
}
