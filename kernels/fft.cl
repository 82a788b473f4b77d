/* The FFT family (fft.c): one pass transforms one axis of a batch. A
 * tensor is seen as [outer, len, inner] around that axis; transform t
 * reads the row at o * len * inner + i (o = t / inner, i = t % inner)
 * with stride inner, so the inner axis and the strided outer axes take
 * the same kernels, and neighbouring work-items sit on neighbouring
 * addresses wherever inner > 1.
 *
 * Every kernel reads its row through load_elem (a complex row, a real row
 * as complex, or the first n/2+1 bins of a Hermitian spectrum extended to
 * n) and writes through store_elem (complex, or the real part), so the
 * real transforms (RFFT: real in, the first n/2+1 bins out; IRFFT: half
 * spectrum in, real out) are complex transforms with another first load
 * and last store. Inverse passes scale by 1/n.
 *
 * Built with -DT_IS_DOUBLE for complex128 (float64 throughout), else in
 * float: no fp64 in complex64 kernels. */
#include "common.clh"

#ifdef T_IS_DOUBLE
typedef double fft_real;
typedef double2 fft_cplx;
#else
typedef float fft_real;
typedef float2 fft_cplx;
#endif

/* fft.c's modes. */
#define LOAD_COMPLEX 0
#define LOAD_REAL 1
#define LOAD_HERMITIAN 2
#define STORE_COMPLEX 0
#define STORE_REAL 1

static inline fft_cplx cmul(fft_cplx a, fft_cplx b)
{
  return (fft_cplx)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* Element j (< n) of the sequence a transform reads from the row at `row`.
 * Hermitian: bins above n/2 mirror the ones below, and the imaginary parts
 * of bin 0 and of the Nyquist bin are ignored, as TensorFlow's IRFFT does. */
static inline fft_cplx load_elem(__global const uchar *src, uint row,
                                 uint inner, uint j, uint n, int mode)
{
  if (mode == LOAD_REAL)
    return (fft_cplx)(((__global const fft_real *)src)[row + j * inner], 0);
  __global const fft_cplx *x = (__global const fft_cplx *)src;
  if (mode == LOAD_COMPLEX)
    return x[row + j * inner];
  if (j > n / 2) {
    fft_cplx v = x[row + (n - j) * inner];
    return (fft_cplx)(v.x, -v.y);
  }
  fft_cplx v = x[row + j * inner];
  if (j == 0 || 2 * j == n)
    v.y = 0;
  return v;
}

static inline void store_elem(__global uchar *dst, uint at, fft_cplx v,
                              int mode)
{
  if (mode == STORE_REAL)
    ((__global fft_real *)dst)[at] = v.x;
  else
    ((__global fft_cplx *)dst)[at] = v;
}

/* w[m] = exp(sign * 2 * pi * i * m / n), each pass's twiddle table (one
 * cospi and sinpi per entry, not per butterfly). The angle is folded into
 * [-pi, pi] before the one rounding of 2m/n (exact for powers of two). */
__kernel void fft_twiddles(OCL_TENSOR_ARG(fft_cplx, w), uint n, int sign)
{
  uint m = get_global_id(0);
  if (m >= n)
    return;
  int folded = 2 * m > n ? (int)m - (int)n : (int)m;
  fft_real x = (fft_real)(2 * folded) / (fft_real)n;
  OCL_PTR(fft_cplx, w)[m] = (fft_cplx)(cospi(x), (fft_real)sign * sinpi(x));
}

/* Any length: a work-item per output element, summing n terms (the
 * twiddle index j * k mod n kept exact in integers). */
__kernel void fft_dft(OCL_TENSOR_ARG(const uchar, x), uint src_len,
                      int load_mode, OCL_TENSOR_ARG(uchar, y), uint dst_len,
                      int store_mode, OCL_TENSOR_ARG(const fft_cplx, w),
                      uint n, uint inner, uint total, uint scale_n)
{
  uint gid = get_global_id(0);
  if (gid >= total)
    return;
  uint i = gid % inner;
  uint rest = gid / inner;
  uint k = rest % dst_len;
  uint o = rest / dst_len;
  __global const uchar *src = OCL_PTR(const uchar, x);
  __global const fft_cplx *tw = OCL_PTR(const fft_cplx, w);
  uint row = o * src_len * inner + i;
  fft_cplx acc = (fft_cplx)(0, 0);
  uint m = 0;
  for (uint j = 0; j < n; j++) {
    acc += cmul(load_elem(src, row, inner, j, n, load_mode), tw[m]);
    m += k;
    if (m >= n)
      m -= n;
  }
  if (scale_n != 0)
    acc *= (fft_real)1 / (fft_real)scale_n;
  store_elem(OCL_PTR(uchar, y), (o * dst_len + k) * inner + i, acc,
             store_mode);
}

/* One radix-2 Stockham step of a power-of-two transform in global memory
 * (span = 1, 2, ..., n/2: log2(n) launches, each in natural order): a
 * work-item per butterfly. The first step loads with the pass's mode and
 * the last one stores with it; the steps between use [outer, n, inner]
 * temps. */
__kernel void fft_radix2(OCL_TENSOR_ARG(const uchar, x), uint src_len,
                         int load_mode, OCL_TENSOR_ARG(uchar, y),
                         uint dst_len, int store_mode,
                         OCL_TENSOR_ARG(const fft_cplx, w), uint n, uint span,
                         uint inner, uint total, uint scale_n)
{
  uint gid = get_global_id(0);
  if (gid >= total)
    return;
  uint half_n = n / 2;
  uint i = gid % inner;
  uint rest = gid / inner;
  uint j = rest % half_n;
  uint o = rest / half_n;
  __global const uchar *src = OCL_PTR(const uchar, x);
  uint row = o * src_len * inner + i;
  fft_cplx a = load_elem(src, row, inner, j, n, load_mode);
  fft_cplx b = load_elem(src, row, inner, j + half_n, n, load_mode);
  uint k = j & (span - 1);
  /* exp(sign * i * pi * k / span) */
  b = cmul(b, OCL_PTR(const fft_cplx, w)[k * (half_n / span)]);
  fft_cplx sum = a + b, diff = a - b;
  if (scale_n != 0) {
    fft_real s = (fft_real)1 / (fft_real)scale_n;
    sum *= s;
    diff *= s;
  }
  uint out = 2 * j - k;
  uint drow = o * dst_len * inner + i;
  __global uchar *dst = OCL_PTR(uchar, y);
  if (out < dst_len)
    store_elem(dst, drow + out * inner, sum, store_mode);
  if (out + span < dst_len)
    store_elem(dst, drow + (out + span) * inner, diff, store_mode);
}

/* A whole power-of-two transform in local memory: a work-group per
 * transform (the global size is exactly transforms * local size), the
 * same Stockham steps between two local buffers of n elements. */
__kernel void fft_local(OCL_TENSOR_ARG(const uchar, x), uint src_len,
                        int load_mode, OCL_TENSOR_ARG(uchar, y), uint dst_len,
                        int store_mode, OCL_TENSOR_ARG(const fft_cplx, w),
                        uint n, uint inner, uint scale_n,
                        __local fft_cplx *buf)
{
  uint t = get_group_id(0);
  uint lid = get_local_id(0), lsize = get_local_size(0);
  uint i = t % inner, o = t / inner;
  __global const uchar *src = OCL_PTR(const uchar, x);
  uint row = o * src_len * inner + i;
  __global const fft_cplx *tw = OCL_PTR(const fft_cplx, w);
  __local fft_cplx *a = buf, *b = buf + n;
  for (uint j = lid; j < n; j += lsize)
    a[j] = load_elem(src, row, inner, j, n, load_mode);
  barrier(CLK_LOCAL_MEM_FENCE);
  uint half_n = n / 2;
  for (uint span = 1; span < n; span *= 2) {
    for (uint j = lid; j < half_n; j += lsize) {
      uint k = j & (span - 1);
      fft_cplx u = a[j];
      fft_cplx v = cmul(a[j + half_n], tw[k * (half_n / span)]);
      uint out = 2 * j - k;
      b[out] = u + v;
      b[out + span] = u - v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __local fft_cplx *swap = a;
    a = b;
    b = swap;
  }
  fft_real s = scale_n != 0 ? (fft_real)1 / (fft_real)scale_n : (fft_real)1;
  __global uchar *dst = OCL_PTR(uchar, y);
  uint drow = o * dst_len * inner + i;
  for (uint j = lid; j < dst_len; j += lsize)
    store_elem(dst, drow + j * inner, a[j] * s, store_mode);
}
