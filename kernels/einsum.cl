/* Einsum's data movement (einsum.c does the contraction with the GEMM).
 *
 * einsum_gather writes y[i] = sum over r of x[offset(i) + roffset(r)]: the
 * offset of output element i through `dims` / `strides` (a permutation, a
 * diagonal when a label repeats in the operand, stride 0 where a batch
 * dimension broadcasts) and the sum over the operand's own labels that the
 * output drops. One work-item per output element, so neighbouring
 * work-items write neighbouring addresses; 32-bit index math (the host
 * refuses tensors of 2^31 elements or more), coordinates by multiply and
 * shift (ocl_fastdiv) rather than divisions, which GPUs emulate. Built
 * per storage:
 * -DT=float or -DT=half (stored as half, summed in float). */
#include "common.clh"

#define EINSUM_MAX_DIMS 8

/* The host's struct einsum_map, field for field. */
typedef struct {
  int rank, reduce_rank, n, reduce_n;
  int dims[EINSUM_MAX_DIMS], strides[EINSUM_MAX_DIMS];
  int rdims[EINSUM_MAX_DIMS], rstrides[EINSUM_MAX_DIMS];
  uint magic[EINSUM_MAX_DIMS], shift[EINSUM_MAX_DIMS];
  uint rmagic[EINSUM_MAX_DIMS], rshift[EINSUM_MAX_DIMS];
} einsum_map;

#ifdef T_IS_HALF
typedef ushort BITS_T; /* copies move half's bits: no cl_khr_fp16 needed */
typedef ushort8 BITS8_T;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#else
typedef T BITS_T;
typedef float8 BITS8_T;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

__kernel void einsum_gather(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                            einsum_map m)
{
  const int i = get_global_id(0);
  OCL_GUARD(i, m.n);
  __global const T *xp = OCL_PTR(const T, x);
  int rest = i, base = 0;
  for (int d = m.rank - 1; d >= 0; d--) {
    const int q = (int)ocl_fastdiv((uint)rest, m.magic[d], m.shift[d]);
    base += (rest - q * m.dims[d]) * m.strides[d];
    rest = q;
  }
  float acc = 0;
  for (int r = 0; r < m.reduce_n; r++) {
    int rrest = r, off = base;
    for (int d = m.reduce_rank - 1; d >= 0; d--) {
      const int q = (int)ocl_fastdiv((uint)rrest, m.rmagic[d], m.rshift[d]);
      off += (rrest - q * m.rdims[d]) * m.rstrides[d];
      rrest = q;
    }
    acc += LOAD(xp, off);
  }
  STORE(OCL_PTR(T, y), i, acc);
}

/* einsum_gather for at most 4 dimensions and nothing to sum (the host
 * pads the map on the left with size-1 dimensions): no loop in the body,
 * so PoCL vectorises its work-item loop, which the general kernel's loops
 * over the rank keep element by element (a 3072-element transpose took
 * 15-20 us). */
__kernel void einsum_gather4(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                             einsum_map m)
{
  const int i = get_global_id(0);
  OCL_GUARD(i, m.n);
  const uint q3 = ocl_fastdiv((uint)i, m.magic[3], m.shift[3]);
  const uint q2 = ocl_fastdiv(q3, m.magic[2], m.shift[2]);
  const uint q1 = ocl_fastdiv(q2, m.magic[1], m.shift[1]);
  const int off = (int)q1 * m.strides[0] +
                  (int)(q2 - q1 * (uint)m.dims[1]) * m.strides[1] +
                  (int)(q3 - q2 * (uint)m.dims[2]) * m.strides[2] +
                  (int)((uint)i - q3 * (uint)m.dims[3]) * m.strides[3];
  STORE(OCL_PTR(T, y), i, LOAD(OCL_PTR(const T, x), off));
}

/* The CPU shape of einsum_gather4 where the innermost dim is contiguous in
 * x (strides[3] == 1: a Transformer's [B, T, N, H] heads to [B, N, T, H]
 * and back): a work-item per span of an output row (ocl_launch_spans over
 * [1, n / dims[3], dims[3]]), its source row found once and copied.
 * einsum_gather4 took 0.8 ms per million floats there, a divide and a
 * gather per element. */
__kernel void einsum_gather4_rows(OCL_TENSOR_ARG(const T, x),
                                  OCL_TENSOR_ARG(T, y), einsum_map m,
                                  int rows, int span)
{
  const int inner = m.dims[3];
  const int i0 = get_global_id(0) * span, row = get_global_id(1);
  if (i0 >= inner || row >= rows)
    return;
  const uint q2 = ocl_fastdiv((uint)row, m.magic[2], m.shift[2]);
  const uint q1 = ocl_fastdiv(q2, m.magic[1], m.shift[1]);
  const int src = (int)q1 * m.strides[0] +
                  (int)(q2 - q1 * (uint)m.dims[1]) * m.strides[1] +
                  (int)((uint)row - q2 * (uint)m.dims[2]) * m.strides[2] + i0;
  const int len = min(span, inner - i0);
  __global const BITS_T *from = OCL_PTR(const BITS_T, x) + src;
  __global BITS_T *to = OCL_PTR(BITS_T, y) + row * inner + i0;
  for (int c = 0; c < len; c++)
    to[c] = from[c];
}

/* The CPU shape of einsum_gather4 where the innermost dim strides in x
 * and dim p (0, 1 or 2) is contiguous there: a transpose (attention's keys,
 * [B, S, N, H] read as [B, N, H, S]). A work-item per 8 x 8 tile of dims p
 * and 3 at one index of the other two (groups = tiles along p times their
 * extents), its 8 rows along p read as vectors and stored as 8 rows along
 * dim 3; partial tiles element by element. einsum_gather4 took a division
 * chain and a strided read per element there. */
__kernel void einsum_gather4_tiles(OCL_TENSOR_ARG(const T, x),
                                   OCL_TENSOR_ARG(T, y), einsum_map m, int p,
                                   int tiles_p, int tiles_l, int groups)
{
  const int tl = get_global_id(0), g = get_global_id(1);
  if (tl >= tiles_l || g >= groups)
    return;
  const int a = p == 0 ? 1 : 0, b = p == 2 ? 1 : 2; /* the other dims */
  int out_stride[4];
  out_stride[3] = 1;
  out_stride[2] = m.dims[3];
  out_stride[1] = out_stride[2] * m.dims[2];
  out_stride[0] = out_stride[1] * m.dims[1];
  const int rest = g / tiles_p, ib = rest % m.dims[b], ia = rest / m.dims[b];
  const int p0 = (g - rest * tiles_p) * 8, l0 = tl * 8;
  const int ls = m.strides[3], ps = out_stride[p];
  __global const BITS_T *in = OCL_PTR(const BITS_T, x) + ia * m.strides[a] +
                              ib * m.strides[b] + p0 + l0 * ls;
  __global BITS_T *out = OCL_PTR(BITS_T, y) + ia * out_stride[a] +
                         ib * out_stride[b] + p0 * ps + l0;
  const int np = min(8, m.dims[p] - p0), nl = min(8, m.dims[3] - l0);
  if (np == 8 && nl == 8) {
    OCL_TRANSPOSE_TILE8(BITS8_T, in, ls, out, ps);
    return;
  }
  for (int r = 0; r < np; r++)
    for (int c = 0; c < nl; c++)
      out[r * ps + c] = in[r + c * ls];
}
