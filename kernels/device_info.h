/* What the kernel families may know of an OpenCL device: the facts they
 * choose kernel shapes from. Filled once when the device is enumerated
 * (discovery.c); shared by plugin/ocl.h and kernels/runtime.h so that
 * kernels never see struct ocl_device. */
#ifndef TFOCL_KERNELS_DEVICE_INFO_H_
#define TFOCL_KERNELS_DEVICE_INFO_H_

#include <stdbool.h>
#include <stddef.h>

#include <CL/cl.h>

struct ocl_device_info {
  int ordinal;
  /* The device is a CPU: its memory is host memory, a work-group runs on
   * one core and vector types are what reach SIMD. */
  bool is_cpu;
  /* Kernels take their CPU shapes (a work-item per row on 16-wide
   * vectors, ...) rather than their GPU shapes (work-groups folding in
   * local memory, ...): is_cpu unless TFOCL_KERNEL_STYLE=cpu|gpu says
   * otherwise (the test suites run both shapes on PoCL). */
  bool cpu_shape;
  /* Flat element-wise kernels run a work-item per run of elements
   * (common.clh's OCL_FOR_FLAT, ocl_launch_flat): in the CPU shape on
   * PoCL, which vectorises a run within its work-item where, across
   * work-items, their index guard kept loads and stores masked, and on
   * Oclgrind so that its CPU-shape run checks them. Not on Intel's CPU
   * runtime, which vectorises across work-items and made each run's
   * loads gathers (relu of 4M floats through TensorFlow: 0.96 ms a
   * work-item per element, 5.4 in runs). */
  bool flat_runs;
  bool has_fp16;
  bool has_fp64;
  cl_uint compute_units;
  size_t max_work_group_size;
  cl_ulong local_mem_size;
  /* Local memory is on-chip (CL_LOCAL), not emulated in global memory. */
  bool dedicated_local_mem;
};

#endif /* TFOCL_KERNELS_DEVICE_INFO_H_ */
