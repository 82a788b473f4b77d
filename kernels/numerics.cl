/* CheckNumerics and CheckNumericsV2 (numerics.c): which kinds of
 * non-finite value a tensor holds, found from the bits alone, so that one
 * program per element size serves half, bfloat16, float and double, and
 * double needs no cl_khr_fp64.
 *
 * Built with -DBITS=ushort|uint|ulong, -DMAGNITUDE (every bit but the
 * sign) and -DEXPONENT (the all-ones exponent: a magnitude equal to it is
 * an infinity, above it a NaN). */
#include "common.clh"

/* The flags, as numerics.c reads them. */
#define FOUND_NAN 1u
#define FOUND_NEG_INF 2u
#define FOUND_POS_INF 4u

/* Each work-item strides over the tensor (neighbouring work-items on
 * neighbouring elements), its work-group ORs the flags in local memory
 * (local size a power of two) and one work-item per group posts them. */
__kernel void check_numerics(OCL_TENSOR_ARG(const BITS, x), uint n,
                             OCL_TENSOR_ARG(uint, found),
                             __local uint *scratch)
{
  __global const BITS *v = OCL_PTR(const BITS, x);
  uint flags = 0;
  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
    BITS bits = v[i];
    BITS magnitude = bits & (BITS)MAGNITUDE;
    if (magnitude > (BITS)EXPONENT)
      flags |= FOUND_NAN;
    else if (magnitude == (BITS)EXPONENT)
      flags |= bits == magnitude ? FOUND_POS_INF : FOUND_NEG_INF;
  }
  uint lid = get_local_id(0);
  scratch[lid] = flags;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint half_size = get_local_size(0) / 2; half_size > 0; half_size /= 2) {
    if (lid < half_size)
      scratch[lid] |= scratch[lid + half_size];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0 && scratch[0] != 0)
    atomic_or(OCL_PTR(uint, found), scratch[0]);
}
