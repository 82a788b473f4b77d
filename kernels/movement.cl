/* Data movement: transposes, slices, concat/split blocks, tiles and pads.
 *
 * These ops only move bytes, so the program is built once per element
 * size, not per dtype: -DT=uchar|ushort|uint|ulong (bool and int8, half,
 * float and int32, int64 and double). Bit patterns travel unchanged (NaN
 * payloads, -0.0).
 *
 * Index spaces have at most 8 dims, already collapsed on the host
 * (kernels/shape.h); strides are in elements and may be negative. */
#include "common.clh"

/* struct movement_args in movement.c: 8-byte members only, so both sides
 * agree on the layout. Unused members are zero. */
typedef struct {
  long dims[8];       /* the index space (the output's, or dy's) */
  long in_strides[8];
  long out_strides[8];
  long in_dims[8];    /* tile, pad */
  long before[8];     /* pad */
  long rank;
  long in_offset;
  long out_offset;
} movement_t;

/* y[out_offset + c.out_strides] = x[in_offset + c.in_strides]. */
__kernel void strided_copy(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                           long n, movement_t s)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  long rem = i, xi = s.in_offset, yi = s.out_offset;
  for (long d = s.rank - 1; d >= 0; d--) {
    long c = rem % s.dims[d];
    rem /= s.dims[d];
    xi += c * s.in_strides[d];
    yi += c * s.out_strides[d];
  }
  OCL_PTR(T, y)[yi] = OCL_PTR(const T, x)[xi];
}

/* The common 2-D block copy (concat, split, 2-D slices and transposes):
 * one division per element instead of a loop. */
__kernel void strided_copy_2d(OCL_TENSOR_ARG(const T, x),
                              OCL_TENSOR_ARG(T, y), long n, movement_t s)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  long r = i / s.dims[1], c = i - r * s.dims[1];
  OCL_PTR(T, y)[s.out_offset + r * s.out_strides[0] + c * s.out_strides[1]] =
      OCL_PTR(const T, x)[s.in_offset + r * s.in_strides[0] +
                          c * s.in_strides[1]];
}

/* The same over a 2-D range (columns, rows): no division at all, for
 * blocks whose rows are long enough to fill a work-group. */
__kernel void strided_copy_rows(OCL_TENSOR_ARG(const T, x),
                                OCL_TENSOR_ARG(T, y), movement_t s)
{
  long c = get_global_id(0), r = get_global_id(1);
  OCL_GUARD(c, s.dims[1]);
  OCL_PTR(T, y)[s.out_offset + r * s.out_strides[0] + c * s.out_strides[1]] =
      OCL_PTR(const T, x)[s.in_offset + r * s.in_strides[0] +
                          c * s.in_strides[1]];
}

/* 2-D copies whose reads stride along the rows being written
 * (transposes): each work item copies one 8x8 tile, so both sides touch
 * few cache lines. */
#define TILE 8
__kernel void strided_copy_tiles(OCL_TENSOR_ARG(const T, x),
                                 OCL_TENSOR_ARG(T, y), movement_t s)
{
  long c0 = get_global_id(0) * TILE, r0 = get_global_id(1) * TILE;
  if (c0 >= s.dims[1] || r0 >= s.dims[0])
    return;
  long r_end = min(r0 + TILE, s.dims[0]), c_end = min(c0 + TILE, s.dims[1]);
  __global const T *in = OCL_PTR(const T, x) + s.in_offset;
  __global T *out = OCL_PTR(T, y) + s.out_offset;
  for (long r = r0; r < r_end; r++)
    for (long c = c0; c < c_end; c++)
      out[r * s.out_strides[0] + c * s.out_strides[1]] =
          in[r * s.in_strides[0] + c * s.in_strides[1]];
}

/* Dense output; input index of each output coordinate modulo the input's
 * dim. */
__kernel void tile(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y), long n,
                   movement_t s)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  long rem = i, xi = 0;
  for (long d = s.rank - 1; d >= 0; d--) {
    long c = rem % s.dims[d];
    rem /= s.dims[d];
    xi += (c % s.in_dims[d]) * s.in_strides[d];
  }
  OCL_PTR(T, y)[i] = OCL_PTR(const T, x)[xi];
}

/* Dense output; coordinates outside [before, before + in_dim) get the
 * constant: value[0] when has_value (PadV2), else zero bits (Pad). */
__kernel void pad(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                  OCL_TENSOR_ARG(const T, value), int has_value, long n,
                  movement_t s)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  long rem = i, xi = 0;
  bool inside = true;
  for (long d = s.rank - 1; d >= 0; d--) {
    long c = rem % s.dims[d] - s.before[d];
    rem /= s.dims[d];
    inside = inside && c >= 0 && c < s.in_dims[d];
    xi += c * s.in_strides[d];
  }
  T fill = has_value ? OCL_PTR(const T, value)[0] : (T)0;
  OCL_PTR(T, y)[i] = inside ? OCL_PTR(const T, x)[xi] : fill;
}
