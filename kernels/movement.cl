/* Data movement: strided copies (transposes, slices, concat/split blocks,
 * reverses, rolls, depth/space), tiles, pads and mirror pads; and the few
 * kernels of the family that compute: MirrorPadGrad's sums and LinSpace.
 *
 * These ops only move bytes, so a program is built per element size, not
 * per dtype: -DT=uchar|ushort|uint|ulong, -DELEM its size (16-byte
 * elements travel as two ulongs, the host doubling the innermost extent). Bit patterns travel
 * unchanged (NaN payloads, -0.0). -DI=int|long is the index type: the host
 * takes the int programs whenever the launch's elements and the spans of
 * memory it touches fit in 2^30, so that no index arithmetic is 64-bit on a
 * GPU; the long programs serve the rest.
 *
 * Index spaces have at most 8 dims, collapsed on the host (kernels/shape.h),
 * which splits bigger problems into several launches. Strides are in
 * elements and may be negative; the host rebases each tensor's buffer so
 * that every address a launch touches is at or after its origin.
 *
 * Two shapes of each kernel: the CPU shape (a work-item copies a chunk of
 * the output, walking coordinates incrementally, runs along contiguous
 * memory as 16-wide vectors) and the GPU shape (a work-item per element,
 * neighbouring work-items on neighbouring output addresses; transposes
 * through 32x32 local-memory tiles). */
#include "common.clh"

/* The kernels that compute (mirror_grad, linspace) read elements of 8
 * bytes as double: only where the device has it. */
#if ELEM == 8 && defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define MOVE_HAS_DOUBLE 1
#else
#define MOVE_HAS_DOUBLE 0
#endif

typedef I idx_t;

/* struct move_args of movement.c, at the width of I: every member the same
 * type, so both sides agree on the layout. Unused members are zero. */
typedef struct {
  idx_t dims[8];        /* the index space (the output's) */
  idx_t in_strides[8];
  idx_t out_strides[8];
  idx_t in_dims[8];     /* tile, pad */
  idx_t before[8];      /* pad */
  idx_t rank;
  idx_t n;              /* elements of the index space */
  idx_t in_offset;      /* element offsets into the rebased buffers */
  idx_t out_offset;
  idx_t p;              /* transposes: the dim read contiguously */
  idx_t tiles_l;        /* transposes: tiles along the last dim, along p */
  idx_t tiles_p;
  idx_t chunk;          /* CPU shape: elements per work-item */
  idx_t vmask;          /* pad: 1 when the constant is two halves, else 0 */
  idx_t has_value;      /* pad: the constant is value[], else zero bits */
  idx_t mode;           /* mirror: 1 SYMMETRIC (edge repeated), 0 REFLECT */
  idx_t bdim;           /* reverse_sequence: the batch dim, the seq dim */
  idx_t sdim;
  idx_t len64;          /* reverse_sequence: the lengths are 64-bit */
  idx_t bf16;           /* mirror_grad of 2-byte elements: bfloat16, not half */
} move_t;

/* ---- Strided copies: y[out_offset + c.out_strides] = x[in_offset + c.in_strides] */

/* GPU shape: work-item i writes output element i (in index-space order). */
__kernel void copy_flat(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                        move_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t rem = (idx_t)gid, xi = s.in_offset, yi = s.out_offset;
  for (idx_t d = s.rank - 1; d > 0; d--) {
    idx_t c = rem % s.dims[d];
    rem /= s.dims[d];
    xi += c * s.in_strides[d];
    yi += c * s.out_strides[d];
  }
  xi += rem * s.in_strides[0];
  yi += rem * s.out_strides[0];
  OCL_PTR(T, y)[yi] = OCL_PTR(const T, x)[xi];
}

/* GPU shape for copies whose last output dim (l) strides in the input while
 * dim p is contiguous there (transposes): a work-group of 32x8 items moves
 * a 32x32 tile, reading it along p and writing it along l, each item 4
 * elements; the tile's +1 column keeps the transposed reads of local
 * memory free of bank conflicts. The other dims are batches: group g is
 * tile (g % tiles_l, g / tiles_l % tiles_p) of batch g / (tiles_l *
 * tiles_p), so that the grid is 1-D and never meets a device's limit on
 * its second or third dimension. */
#define TILE_DIM 32
#define TILE_ROWS 8
__kernel void copy_tile(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                        move_t s)
{
  __local T tile[TILE_DIM][TILE_DIM + 1];
  idx_t tx = (idx_t)get_local_id(0), ty = (idx_t)get_local_id(1);
  idx_t g = (idx_t)get_group_id(0);
  idx_t l = s.rank - 1;
  idx_t tl = g % s.tiles_l;
  g /= s.tiles_l;
  idx_t tp = g % s.tiles_p;
  g /= s.tiles_p;
  idx_t xi = s.in_offset, yi = s.out_offset;
  for (idx_t d = l - 1; d >= 0; d--) {
    if (d == s.p)
      continue;
    idx_t c = g % s.dims[d];
    g /= s.dims[d];
    xi += c * s.in_strides[d];
    yi += c * s.out_strides[d];
  }
  idx_t n_l = s.dims[l], n_p = s.dims[s.p];
  idx_t l0 = tl * TILE_DIM, p0 = tp * TILE_DIM;
  __global const T *in = OCL_PTR(const T, x);
  __global T *out = OCL_PTR(T, y);
  /* Reads: neighbouring items along p, contiguous in the input. */
  idx_t pr = p0 + tx;
  for (idx_t j = 0; j < TILE_DIM; j += TILE_ROWS) {
    idx_t lr = l0 + ty + j;
    if (pr < n_p && lr < n_l)
      tile[ty + j][tx] =
          in[xi + pr * s.in_strides[s.p] + lr * s.in_strides[l]];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  /* Writes: neighbouring items along l, contiguous in the output. */
  idx_t lw = l0 + tx;
  for (idx_t j = 0; j < TILE_DIM; j += TILE_ROWS) {
    idx_t pw = p0 + ty + j;
    if (pw < n_p && lw < n_l)
      out[yi + lw * s.out_strides[l] + pw * s.out_strides[s.p]] =
          tile[tx][ty + j];
  }
}

/* n elements from xp to yp, 16 at a time. */
static inline void copy_run(__global const T *xp, __global T *yp, idx_t n)
{
  idx_t k = 0;
  for (; k + 16 <= n; k += 16)
    vstore16(vload16(0, xp + k), 0, yp + k);
  for (; k < n; k++)
    yp[k] = xp[k];
}

/* CPU shape: work-item w copies output elements [w * chunk, (w + 1) *
 * chunk) in index-space order: one division per dim to find its first
 * coordinate, then runs along the last dim, the coordinates carried like
 * an odometer. */
__kernel void copy_chunks(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                          move_t s)
{
  idx_t i = (idx_t)get_global_id(0) * s.chunk;
  if (i >= s.n)
    return;
  idx_t end = min(i + s.chunk, s.n);
  idx_t c[8];
  idx_t rem = i, xi = s.in_offset, yi = s.out_offset;
  for (idx_t d = s.rank - 1; d >= 0; d--) {
    c[d] = rem % s.dims[d];
    rem /= s.dims[d];
    xi += c[d] * s.in_strides[d];
    yi += c[d] * s.out_strides[d];
  }
  __global const T *in = OCL_PTR(const T, x);
  __global T *out = OCL_PTR(T, y);
  idx_t l = s.rank - 1;
  idx_t n_l = s.dims[l], is = s.in_strides[l], os = s.out_strides[l];
  while (i < end) {
    idx_t run = min(n_l - c[l], end - i);
    if (is == 1 && os == 1) {
      copy_run(in + xi, out + yi, run);
    } else {
      for (idx_t k = 0; k < run; k++)
        out[yi + k * os] = in[xi + k * is];
    }
    i += run;
    if (i == end)
      break;
    /* The run ended at the end of dim l: back to its start, and carry. */
    xi -= c[l] * is;
    yi -= c[l] * os;
    c[l] = 0;
    for (idx_t d = l - 1; d >= 0; d--) {
      xi += s.in_strides[d];
      yi += s.out_strides[d];
      if (++c[d] < s.dims[d])
        break;
      xi -= s.dims[d] * s.in_strides[d];
      yi -= s.dims[d] * s.out_strides[d];
      c[d] = 0;
    }
  }
}

/* CPU shape for transposes: each work-item copies an 8x8 tile over (p,
 * l), so that both sides touch few cache lines. A 2-D range: dim 0 the
 * tiles along l, dim 1 the tiles along p of every batch (batch-major);
 * work-groups of 16x4 tiles read whole cache lines of the input. */
#define CPU_TILE 8
#define VEC8_OF(t) t##8
#define VEC8(t) VEC8_OF(t)
typedef VEC8(T) T8;

/* A whole tile where p is contiguous in the input and l in the output:
 * eight vector loads along p, the 8x8 transpose in registers, eight
 * vector stores along l. The scalar loops below ran a 2048^2 float
 * transpose in 2.1-2.9 ms on PoCL, this in 0.84-0.93. */
static void transpose_tile8(__global const T *in, idx_t in_stride,
                            __global T *out, idx_t out_stride)
{
  OCL_TRANSPOSE_TILE8(T8, in, in_stride, out, out_stride);
}

#define COPY_TILE8(xi, yi, p, l)                                             \
  do {                                                                       \
    idx_t l0 = tl * CPU_TILE, p0 = tp * CPU_TILE;                            \
    idx_t l1 = min(l0 + CPU_TILE, s.dims[l]);                                \
    idx_t p1 = min(p0 + CPU_TILE, s.dims[p]);                                \
    __global const T *in = OCL_PTR(const T, x) + (xi);                       \
    __global T *out = OCL_PTR(T, y) + (yi);                                  \
    if (l1 - l0 == CPU_TILE && p1 - p0 == CPU_TILE &&                        \
        s.in_strides[p] == 1 && s.out_strides[l] == 1) {                     \
      transpose_tile8(in + p0 + l0 * s.in_strides[l], s.in_strides[l],       \
                      out + p0 * s.out_strides[p] + l0, s.out_strides[p]);   \
      break;                                                                 \
    }                                                                        \
    for (idx_t r = p0; r < p1; r++)                                          \
      for (idx_t q = l0; q < l1; q++)                                        \
        out[r * s.out_strides[p] + q * s.out_strides[l]] =                   \
            in[r * s.in_strides[p] + q * s.in_strides[l]];                   \
  } while (0)

__kernel void copy_tiles8(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                          move_t s)
{
  size_t g0 = get_global_id(0), g1 = get_global_id(1);
  if (g0 >= (size_t)s.tiles_l || g1 >= (size_t)s.n)
    return;
  idx_t tl = (idx_t)g0, tp = (idx_t)g1;
  if (s.rank == 2 && s.p == 0) {
    /* The plain 2-D transpose: constant dims, which the compiler keeps in
     * registers (10% faster on PoCL than the general walk). */
    COPY_TILE8(s.in_offset, s.out_offset, 0, 1);
    return;
  }
  idx_t l = s.rank - 1, g = tp / s.tiles_p;
  tp -= g * s.tiles_p;
  idx_t xi = s.in_offset, yi = s.out_offset;
  for (idx_t d = l - 1; d >= 0; d--) {
    if (d == s.p)
      continue;
    idx_t c = g % s.dims[d];
    g /= s.dims[d];
    xi += c * s.in_strides[d];
    yi += c * s.out_strides[d];
  }
  COPY_TILE8(xi, yi, s.p, l);
}

/* ---- Concat and split of [rows, cols] blocks in one launch -------------
 *
 * Up to 8 parts side by side in a whole [rows, whole_cols] matrix, at its
 * columns [first_col, first_col + cols): part b is columns [start[b],
 * start[b + 1]) of that range, a dense [rows, start[b + 1] - start[b]]
 * tensor of its own. Concat, Pack, Split and Unpack along an inner axis
 * are this copy: one launch for the op rather than one per part, which in
 * a recurrent cell's gates is most of the step's commands. The host takes
 * these kernels only in the int programs, with every extent below 2^30;
 * parts are never empty, so start[] rises strictly. A work-item moves
 * `chunk` elements of the range in row-major order (1 in the GPU shape:
 * neighbouring work-items on neighbouring addresses of the whole and of
 * each part), the CPU shape runs along a row's part as vectors. */
#define MAX_PARTS 8
typedef struct {
  int rows, cols, whole_cols, first_col, n, chunk, count, unused;
  int start[MAX_PARTS + 1];
} parts_t;

#define PART_ARGS(T, p)                                                      \
  OCL_TENSOR_ARG(T, p##0), OCL_TENSOR_ARG(T, p##1), OCL_TENSOR_ARG(T, p##2), \
      OCL_TENSOR_ARG(T, p##3), OCL_TENSOR_ARG(T, p##4),                      \
      OCL_TENSOR_ARG(T, p##5), OCL_TENSOR_ARG(T, p##6),                      \
      OCL_TENSOR_ARG(T, p##7)
/* Part b's pointer by selects, not an indexed private array, which a GPU
 * compiler may place in scratch memory. */
#define PART_PTR(T, p, b)                                                    \
  ((b) < 4 ? ((b) < 2 ? ((b) == 0 ? OCL_PTR(T, p##0) : OCL_PTR(T, p##1))     \
                      : ((b) == 2 ? OCL_PTR(T, p##2) : OCL_PTR(T, p##3)))    \
           : ((b) < 6 ? ((b) == 4 ? OCL_PTR(T, p##4) : OCL_PTR(T, p##5))     \
                      : ((b) == 6 ? OCL_PTR(T, p##6) : OCL_PTR(T, p##7))))

/* Walks the runs of work-item gid's elements: each run lies in one row of
 * one part, at `in_part` elements into the part and `in_whole` into the
 * whole. */
#define FOR_EACH_RUN(s, BODY)                                                \
  do {                                                                       \
    int i = (int)get_global_id(0) * (s).chunk;                               \
    if (i >= (s).n)                                                          \
      return;                                                                \
    int end = min(i + (s).chunk, (s).n);                                     \
    int r = i / (s).cols, c = i % (s).cols, b = 0;                           \
    while (c >= (s).start[b + 1])                                            \
      b++;                                                                   \
    while (i < end) {                                                        \
      int lo = (s).start[b], hi = (s).start[b + 1];                          \
      int run = min(hi - c, end - i);                                        \
      int in_part = r * (hi - lo) + (c - lo);                                \
      int in_whole = r * (s).whole_cols + (s).first_col + c;                 \
      BODY;                                                                  \
      i += run;                                                              \
      c += run;                                                              \
      if (c == (s).cols) {                                                   \
        c = 0;                                                               \
        b = 0;                                                               \
        r++;                                                                 \
      } else {                                                               \
        b++;                                                                 \
      }                                                                      \
    }                                                                        \
  } while (0)

__kernel void concat_parts(PART_ARGS(const T, x), OCL_TENSOR_ARG(T, y),
                           parts_t s)
{
  __global T *whole = OCL_PTR(T, y);
  FOR_EACH_RUN(s,
               copy_run(PART_PTR(const T, x, b) + in_part, whole + in_whole,
                        run));
}

__kernel void split_parts(OCL_TENSOR_ARG(const T, x), PART_ARGS(T, y),
                          parts_t s)
{
  __global const T *whole = OCL_PTR(const T, x);
  FOR_EACH_RUN(s,
               copy_run(whole + in_whole, PART_PTR(T, y, b) + in_part, run));
}

/* ---- Tile: dense output, input index of each coordinate modulo in_dims */

/* GPU shape: a work-item per output element. The host rebased both
 * buffers to the launch's block: no offsets. */
__kernel void tile_flat(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                        move_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t rem = (idx_t)gid, xi = 0;
  for (idx_t d = s.rank - 1; d >= 0; d--) {
    idx_t c = rem % s.dims[d];
    rem /= s.dims[d];
    xi += (c % s.in_dims[d]) * s.in_strides[d];
  }
  OCL_PTR(T, y)[gid] = OCL_PTR(const T, x)[xi];
}

/* CPU shape: chunks of the output, as copy_chunks; each run along the last
 * dim copies the input's row piece by piece, wrapping at its end. */
__kernel void tile_chunks(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                          move_t s)
{
  idx_t i = (idx_t)get_global_id(0) * s.chunk;
  if (i >= s.n)
    return;
  idx_t end = min(i + s.chunk, s.n);
  idx_t c[8], ic[8];
  idx_t rem = i, xi = 0;
  for (idx_t d = s.rank - 1; d >= 0; d--) {
    c[d] = rem % s.dims[d];
    rem /= s.dims[d];
    ic[d] = c[d] % s.in_dims[d];
    xi += ic[d] * s.in_strides[d];
  }
  __global const T *in = OCL_PTR(const T, x);
  __global T *out = OCL_PTR(T, y);
  idx_t l = s.rank - 1, n_l = s.dims[l], in_l = s.in_dims[l];
  /* The last dim's input stride is 1 (the input is dense): xi - ic[l] is
   * the start of the input row. */
  while (i < end) {
    idx_t run = min(n_l - c[l], end - i);
    idx_t row = xi - ic[l], at = ic[l];
    for (idx_t left = run; left > 0;) {
      idx_t piece = min(in_l - at, left);
      copy_run(in + row + at, out + i + (run - left), piece);
      left -= piece;
      at = 0;
    }
    i += run;
    if (i == end)
      break;
    xi = row;
    c[l] = ic[l] = 0;
    for (idx_t d = l - 1; d >= 0; d--) {
      c[d]++;
      if (++ic[d] == s.in_dims[d]) {
        ic[d] = 0;
        xi -= (s.in_dims[d] - 1) * s.in_strides[d];
      } else {
        xi += s.in_strides[d];
      }
      if (c[d] < s.dims[d])
        break;
      c[d] = ic[d] = 0;
      /* dims[d] is a multiple of in_dims[d]: ic wrapped with c. */
    }
  }
}

/* ---- Pad: dense output; coordinates outside [before, before + in_dims)
 * get the constant: value[c_last & vmask] when has_value (PadV2), else zero
 * bits (Pad). The host rebased both buffers to the launch's block. */

static inline T pad_value(__global const T *value, idx_t has_value,
                          idx_t which)
{
  return has_value ? value[which] : (T)0;
}

/* GPU shape: a work-item per output element. */
__kernel void pad_flat(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                       OCL_TENSOR_ARG(const T, value), move_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t rem = (idx_t)gid, xi = 0, last = 0;
  bool inside = true;
  for (idx_t d = s.rank - 1; d >= 0; d--) {
    idx_t c = rem % s.dims[d];
    rem /= s.dims[d];
    if (d == s.rank - 1)
      last = c;
    c -= s.before[d];
    inside = inside && c >= 0 && c < s.in_dims[d];
    xi += c * s.in_strides[d];
  }
  OCL_PTR(T, y)[gid] =
      inside ? OCL_PTR(const T, x)[xi]
             : pad_value(OCL_PTR(const T, value), s.has_value, last & s.vmask);
}

/* CPU shape: chunks of the output; each run along the last dim is constant,
 * then a copy of the input's row, then constant again. */
__kernel void pad_chunks(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                         OCL_TENSOR_ARG(const T, value), move_t s)
{
  idx_t i = (idx_t)get_global_id(0) * s.chunk;
  if (i >= s.n)
    return;
  idx_t end = min(i + s.chunk, s.n);
  idx_t c[8];
  idx_t rem = i;
  for (idx_t d = s.rank - 1; d >= 0; d--) {
    c[d] = rem % s.dims[d];
    rem /= s.dims[d];
  }
  __global const T *in = OCL_PTR(const T, x);
  __global T *out = OCL_PTR(T, y);
  __global const T *value = OCL_PTR(const T, value);
  idx_t l = s.rank - 1, n_l = s.dims[l];
  idx_t b_l = s.before[l], in_l = s.in_dims[l];
  while (i < end) {
    idx_t run = min(n_l - c[l], end - i);
    /* The input row of this run, if the other coordinates are inside. */
    bool inside = true;
    idx_t row = 0;
    for (idx_t d = 0; d < l; d++) {
      idx_t k = c[d] - s.before[d];
      inside = inside && k >= 0 && k < s.in_dims[d];
      row += k * s.in_strides[d];
    }
    idx_t from = c[l], to = c[l] + run;
    /* [from, to) meets the input's [b_l, b_l + in_l) in [lo, hi). */
    idx_t lo = inside ? clamp(b_l, from, to) : to;
    idx_t hi = inside ? clamp(b_l + in_l, lo, to) : to;
    __global T *o = out + i - from;
    for (idx_t q = from; q < lo; q++)
      o[q] = pad_value(value, s.has_value, q & s.vmask);
    if (hi > lo)
      copy_run(in + row + (lo - b_l), o + lo, hi - lo);
    for (idx_t q = hi; q < to; q++)
      o[q] = pad_value(value, s.has_value, q & s.vmask);
    i += run;
    c[l] += run;
    for (idx_t d = l; d > 0 && c[d] == s.dims[d]; d--) {
      c[d] = 0;
      c[d - 1]++;
    }
  }
}

/* ---- MirrorPad: dense output; coordinate c of dim d reads the input at
 * c - before[d] reflected into [0, in_dims[d]): about the edge element
 * (REFLECT, mode 0) or about the edge itself (SYMMETRIC, mode 1). TensorFlow
 * keeps every padding below (REFLECT) or at most (SYMMETRIC) the dim, so one
 * reflection always lands inside. */
static inline idx_t mirror_coord(idx_t c, idx_t n, idx_t sym)
{
  return c < 0 ? -c - sym : c >= n ? 2 * n - 2 + sym - c : c;
}

/* GPU shape: a work-item per output element. */
__kernel void mirror_flat(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                          move_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t rem = (idx_t)gid, xi = 0;
  for (idx_t d = s.rank - 1; d >= 0; d--) {
    idx_t c = rem % s.dims[d];
    rem /= s.dims[d];
    xi += mirror_coord(c - s.before[d], s.in_dims[d], s.mode) * s.in_strides[d];
  }
  OCL_PTR(T, y)[gid] = OCL_PTR(const T, x)[xi];
}

/* CPU shape: chunks of the output; each run along the last dim is a
 * reversed piece, a copy of the input's row, a reversed piece. */
__kernel void mirror_chunks(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                            move_t s)
{
  idx_t i = (idx_t)get_global_id(0) * s.chunk;
  if (i >= s.n)
    return;
  idx_t end = min(i + s.chunk, s.n);
  idx_t c[8];
  idx_t rem = i;
  for (idx_t d = s.rank - 1; d >= 0; d--) {
    c[d] = rem % s.dims[d];
    rem /= s.dims[d];
  }
  __global const T *in = OCL_PTR(const T, x);
  __global T *out = OCL_PTR(T, y);
  idx_t l = s.rank - 1, n_l = s.dims[l];
  idx_t b_l = s.before[l], in_l = s.in_dims[l];
  while (i < end) {
    idx_t run = min(n_l - c[l], end - i);
    idx_t row = 0;
    for (idx_t d = 0; d < l; d++)
      row += mirror_coord(c[d] - s.before[d], s.in_dims[d], s.mode) *
             s.in_strides[d];
    idx_t from = c[l], to = c[l] + run;
    idx_t lo = clamp(b_l, from, to);
    idx_t hi = clamp(b_l + in_l, lo, to);
    __global T *o = out + i - from;
    __global const T *r = in + row;
    for (idx_t q = from; q < lo; q++)
      o[q] = r[mirror_coord(q - b_l, in_l, s.mode)];
    if (hi > lo)
      copy_run(r + (lo - b_l), o + lo, hi - lo);
    for (idx_t q = hi; q < to; q++)
      o[q] = r[mirror_coord(q - b_l, in_l, s.mode)];
    i += run;
    c[l] += run;
    for (idx_t d = l; d > 0 && c[d] == s.dims[d]; d--) {
      c[d] = 0;
      c[d - 1]++;
    }
  }
}

/* MirrorPadGrad: output element o (dims, the unpadded shape) sums the
 * gradient x (in_dims, the padded shape) at every position that MirrorPad
 * copied it to: per dim the middle one and at most one reflection on each
 * side, so at most 3^rank terms. They are gathered (no atomics) and summed
 * in float (double for double), rounded once. A work-item per output
 * element in both shapes: only the border elements loop. */
#if ELEM == 2
typedef float acc_t;
static inline acc_t mg_load(__global const T *p, idx_t i, idx_t bf16)
{
  return bf16 ? ocl_bf16_to_float(p[i])
              : vload_half((size_t)i, (__global const half *)p);
}
static inline void mg_store(__global T *p, idx_t i, acc_t v, idx_t bf16)
{
  if (bf16)
    p[i] = ocl_float_to_bf16(v);
  else
    p[i] = ocl_half_bits_rte(v);
}
#elif ELEM == 4
typedef float acc_t;
#define mg_load(p, i, bf16) as_float((p)[i])
#define mg_store(p, i, v, bf16) ((p)[i] = as_uint(v))
#elif MOVE_HAS_DOUBLE
typedef double acc_t;
#define mg_load(p, i, bf16) as_double((p)[i])
#define mg_store(p, i, v, bf16) ((p)[i] = as_ulong(v))
#endif

__kernel void mirror_grad(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                          move_t s)
{
#if ELEM == 2 || ELEM == 4 || MOVE_HAS_DOUBLE
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t src[8][3];
  int cnt[8], k[8];
  idx_t rem = (idx_t)gid;
  for (idx_t d = s.rank - 1; d >= 0; d--) {
    idx_t o = rem % s.dims[d];
    rem /= s.dims[d];
    idx_t b = s.before[d], n = s.dims[d];
    int m = 0;
    src[d][m++] = o + b;
    idx_t pl = b - s.mode - o;
    if (pl >= 0 && pl < b)
      src[d][m++] = pl;
    idx_t pr = b + 2 * n - 2 + s.mode - o;
    if (pr >= b + n && pr < s.in_dims[d])
      src[d][m++] = pr;
    cnt[d] = m;
    k[d] = 0;
  }
  __global const T *in = OCL_PTR(const T, x);
  acc_t sum = 0;
  for (;;) {
    idx_t xi = 0;
    for (idx_t d = 0; d < s.rank; d++)
      xi += src[d][k[d]] * s.in_strides[d];
    sum += mg_load(in, xi, s.bf16);
    idx_t d = s.rank - 1;
    for (; d >= 0 && ++k[d] == cnt[d]; d--)
      k[d] = 0;
    if (d < 0)
      break;
  }
  mg_store(OCL_PTR(T, y), (idx_t)gid, sum, s.bf16);
#endif
}

/* ---- ReverseSequence over [A, X, B, Y, C] (X and Y the batch and seq
 * dims, in either order; the host merges the dims between them): element
 * at seq position q < len[batch] reads position len - 1 - q. The lengths
 * stay in device memory, as TensorFlow's GPU kernel keeps them, so they
 * are not checked on the host: a negative length reverses nothing and one
 * beyond the dim is clamped to it, which keeps every read inside x. */
static inline idx_t seq_len(__global const uint *lens, idx_t b, idx_t len64,
                            idx_t dim)
{
  long len = len64 ? (long)((ulong)lens[2 * b] | ((ulong)lens[2 * b + 1] << 32))
                   : (long)(int)lens[b];
  return (idx_t)clamp(len, 0L, (long)dim);
}

/* GPU shape: a work-item per element (neighbours along C). */
__kernel void rev_seq_flat(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                           OCL_TENSOR_ARG(const uint, lens), move_t s)
{
  size_t gid = get_global_id(0);
  if (gid >= (size_t)s.n)
    return;
  idx_t rem = (idx_t)gid, c[5];
  for (idx_t d = 4; d >= 0; d--) {
    c[d] = rem % s.dims[d];
    rem /= s.dims[d];
  }
  idx_t q = c[s.sdim];
  idx_t len = seq_len(OCL_PTR(const uint, lens), c[s.bdim], s.len64,
                      s.dims[s.sdim]);
  idx_t xi = (idx_t)gid;
  if (q < len)
    xi += (len - 1 - 2 * q) * s.in_strides[s.sdim];
  OCL_PTR(T, y)[gid] = OCL_PTR(const T, x)[xi];
}

/* CPU shape: work-item w copies rows [w * chunk, (w + 1) * chunk) of C
 * elements, 16 at a time. */
__kernel void rev_seq_chunks(OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, y),
                             OCL_TENSOR_ARG(const uint, lens), move_t s)
{
  idx_t rows = s.n / s.dims[4];
  idx_t r = (idx_t)get_global_id(0) * s.chunk;
  if (r >= rows)
    return;
  idx_t end = min(r + s.chunk, rows);
  __global const T *in = OCL_PTR(const T, x);
  __global T *out = OCL_PTR(T, y);
  __global const uint *lp = OCL_PTR(const uint, lens);
  idx_t cols = s.dims[4];
  for (; r < end; r++) {
    idx_t rem = r, c[4];
    for (idx_t d = 3; d >= 0; d--) {
      c[d] = rem % s.dims[d];
      rem /= s.dims[d];
    }
    idx_t q = c[s.sdim];
    idx_t len = seq_len(lp, c[s.bdim], s.len64, s.dims[s.sdim]);
    idx_t yi = r * cols, xi = yi;
    if (q < len)
      xi += (len - 1 - 2 * q) * s.in_strides[s.sdim];
    copy_run(in + xi, out + yi, cols);
  }
}

/* ---- LinSpace: y[0] = start, y[n - 1] = stop, y[i] = start + step * i in
 * between, in T's arithmetic as TensorFlow's kernel computes it (step from
 * the host, where it is computed the same way); start, step and stop
 * arrive as their bits. A work-item per element in both shapes. */
__kernel void linspace_flat(OCL_TENSOR_ARG(T, y), ulong start, ulong step,
                            ulong stop, idx_t n)
{
#pragma OPENCL FP_CONTRACT OFF
  size_t gid = get_global_id(0);
  if (gid >= (size_t)n)
    return;
  T v = (T)stop;
  if (gid == 0)
    v = (T)start;
#if ELEM == 4
  else if (gid < (size_t)n - 1)
    v = as_uint(as_float((uint)start) + as_float((uint)step) * (float)(idx_t)gid);
#elif MOVE_HAS_DOUBLE
  else if (gid < (size_t)n - 1)
    v = as_ulong(as_double(start) + as_double(step) * (double)(idx_t)gid);
#endif
  OCL_PTR(T, y)[gid] = v;
}
