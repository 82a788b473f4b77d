/* Binary element-wise ops with NumPy broadcasting.
 *
 * Built once per storage type: -DT=float|half|long|uchar|double (uchar =
 * bool; double only on devices with cl_khr_fp64, computed in double).
 * half is stored as half and computed in float, rounded to nearest even on
 * store: what TensorFlow's CPU kernels do, and it needs no cl_khr_fp16.
 *
 * Each op's kernels are chosen on the host from the collapsed broadcast
 * (kernels/shape.h): _flat (same shapes), _scalar (one side a single
 * element); for up to 3 collapsed dims in 32-bit indices _bcast3d and
 * _bcast3d_one (the dims as the NDRange, where the innermost fills SIMD
 * lanes) or else _bcastf (one operand of z's shape, the other's index
 * split by multiplications); _bcast (general, up to 8 collapsed dims) in
 * 32-bit index arithmetic, or _bcast64 when an extent needs 64 bits
 * (64-bit division is emulated, and slow, on GPUs). A CPU device takes
 * _bcast3d_rows for _bcast3d and _bcast3d_one, _bcast3d_pattern for
 * short rows of a repeating operand and _bcast_span for _bcast: they loop
 * along rows, and the compiler vectorises those loops. The _bcast kernels
 * loop too; the others stay vectorisable by PoCL across work-items (the
 * special functions aside: their series and continued fractions loop per
 * element).
 *
 * Three kernels stand apart: approximate_equal (same shapes, a tolerance),
 * and the ternary betainc and clip_by_value, whose inputs have the output's
 * shape or are scalars, read at index i * step (step 0 for a scalar). */
#if defined(T_IS_DOUBLE)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#include "activations.clh"
#include "common.clh"

#if defined(T_IS_HALF)
typedef float CT; /* compute type */
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
#else
typedef T CT;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

#define STORE_BOOL(p, i, v) ((p)[i] = (uchar)((v) ? 1 : 0))

/* The collapsed broadcast as the host lays it out (struct bcast_args and
 * bcast32_args in binary.c): members of one size, so both sides agree on
 * the layout. */
typedef struct {
  long dims[8];
  long x_strides[8];
  long y_strides[8];
  long rank;
} bcast_t;

typedef struct {
  int dims[8];
  int x_strides[8];
  int y_strides[8];
  int rank;
} bcast32_t;

/* Up to three collapsed dims for the _bcast3d and _bcastf kernels (struct
 * bcast3_args in binary.c), padded on the outer side: dims [outer, mid,
 * inner] of n elements. Their operands are (p, q): x and y, or y and x
 * where `swap` is set, p being the operand that varies along the
 * innermost dim (_bcast3d_one) or has z's shape (_bcastf); the op is
 * evaluated on (a, b) in x, y order whatever the order of p and q, so one
 * kernel serves either side. _bcastf splits an index by ocl_fastdiv with
 * the magic and shift of inner and mid. */
typedef struct {
  uint n, outer, mid, inner;
  uint inner_magic, inner_shift, mid_magic, mid_shift;
  uint swap;
  int p_strides[3];
  int q_strides[3];
} bcast3_t;

/* binary.c's: the shortest row _bcast3d_rows takes; _bcast3d_pattern
 * repeats a shorter q row this many times. */
#define ROWS_MIN_INNER 16
#define BCAST_PATTERN_ROWS 16

/* A _bcast3d_rows argument: OCL_TENSOR_ARG, restrict. */
#define ROW_ARG(T, name) __global T *restrict name##_base, ulong name##_offset

/* p's and q's values as the op's a and b. */
#define BCAST3_OPERANDS(s, pv, qv)                                           \
  CT pv_ = (pv), qv_ = (qv);                                                 \
  CT a = (s).swap ? qv_ : pv_;                                               \
  CT b = (s).swap ? pv_ : qv_

#define BINARY_KERNELS(NAME, OUT_T, STORE_OUT, EXPR)                         \
  __kernel void NAME##_flat(OCL_TENSOR_ARG(const T, x),                      \
                            OCL_TENSOR_ARG(const T, y),                      \
                            OCL_TENSOR_ARG(OUT_T, z), long n)                \
  {                                                                          \
    OCL_FOR_FLAT(long, i, n)                                                 \
    {                                                                        \
      CT a = LOAD(OCL_PTR(const T, x), i);                                   \
      CT b = LOAD(OCL_PTR(const T, y), i);                                   \
      STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                               \
    }                                                                        \
  }                                                                          \
  /* One operand a single element: p = the other, read at i; q[0]. */     \
  __kernel void NAME##_scalar(OCL_TENSOR_ARG(const T, p),                    \
                              OCL_TENSOR_ARG(const T, q),                    \
                              OCL_TENSOR_ARG(OUT_T, z), long n, uint swap)   \
  {                                                                          \
    long i = get_global_id(0);                                               \
    OCL_GUARD(i, n);                                                         \
    CT pv_ = LOAD(OCL_PTR(const T, p), i), qv_ = LOAD(OCL_PTR(const T, q), 0); \
    CT a = swap ? qv_ : pv_;                                                 \
    CT b = swap ? pv_ : qv_;                                                 \
    STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                                 \
  }                                                                          \
  __kernel void NAME##_bcast(OCL_TENSOR_ARG(const T, x),                     \
                             OCL_TENSOR_ARG(const T, y),                     \
                             OCL_TENSOR_ARG(OUT_T, z), int n, bcast32_t s)   \
  {                                                                          \
    int i = get_global_id(0);                                                \
    OCL_GUARD(i, n);                                                         \
    int rem = i, xi = 0, yi = 0;                                             \
    for (int d = s.rank - 1; d >= 0; d--) {                                  \
      int c = rem % s.dims[d];                                               \
      rem /= s.dims[d];                                                      \
      xi += c * s.x_strides[d];                                              \
      yi += c * s.y_strides[d];                                              \
    }                                                                        \
    CT a = LOAD(OCL_PTR(const T, x), xi);                                    \
    CT b = LOAD(OCL_PTR(const T, y), yi);                                    \
    STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                                 \
  }                                                                          \
  /* The CPU shape of _bcast: a work-item per `span` output elements, its  \
   * first split into coordinates once, then walked as an odometer: runs  \
   * along the innermost dim, a carry at each run's end (the divisions per \
   * dim and element of _bcast ran GroupNormalization's broadcasts at     \
   * 0.3x TensorFlow's CPU kernels). */                                    \
  __kernel void NAME##_bcast_span(OCL_TENSOR_ARG(const T, x),                \
                                  OCL_TENSOR_ARG(const T, y),                \
                                  OCL_TENSOR_ARG(OUT_T, z), int n, int span, \
                                  bcast32_t s)                               \
  {                                                                          \
    int i = get_global_id(0) * span;                                         \
    if (i >= n)                                                              \
      return;                                                                \
    int end = min(i + span, n);                                              \
    int coord[8], rem = i, xi = 0, yi = 0;                                   \
    for (int d = s.rank - 1; d >= 0; d--) {                                  \
      coord[d] = rem % s.dims[d];                                            \
      rem /= s.dims[d];                                                      \
      xi += coord[d] * s.x_strides[d];                                       \
      yi += coord[d] * s.y_strides[d];                                       \
    }                                                                        \
    int last = s.rank - 1;                                                   \
    int xs = s.x_strides[last], ys = s.y_strides[last];                      \
    __global const T *xp = OCL_PTR(const T, x);                              \
    __global const T *yp = OCL_PTR(const T, y);                              \
    __global OUT_T *zp = OCL_PTR(OUT_T, z);                                  \
    while (i < end) {                                                        \
      int run = min(s.dims[last] - coord[last], end - i);                    \
      for (int k = 0; k < run; k++) {                                        \
        CT a = LOAD(xp, xi + k * xs);                                        \
        CT b = LOAD(yp, yi + k * ys);                                        \
        STORE_OUT(zp, i + k, (EXPR));                                        \
      }                                                                      \
      i += run;                                                              \
      xi += run * xs;                                                        \
      yi += run * ys;                                                        \
      coord[last] += run;                                                    \
      for (int d = last; d > 0 && coord[d] == s.dims[d]; d--) {              \
        xi += s.x_strides[d - 1] - s.dims[d] * s.x_strides[d];               \
        yi += s.y_strides[d - 1] - s.dims[d] * s.y_strides[d];               \
        coord[d] = 0;                                                        \
        coord[d - 1]++;                                                      \
      }                                                                      \
    }                                                                        \
  }                                                                          \
  /* Up to three collapsed dims as the NDRange itself (dims[0] outermost, \
   * dims[2] innermost along dimension 0), for innermost dims that fill    \
   * work-groups' dimension 0: a multiply-add per index, neighbouring      \
   * work-items on neighbouring elements. An operand's stride along the   \
   * innermost dim is 1 (it varies there) or 0: a constant of each kernel \
   * (_bcast3d: both vary; _bcast3d_one: p varies, q is constant along    \
   * it), so that PoCL sees contiguous or uniform loads and vectorises     \
   * them as _flat's (an argument stride it speculates to be 1, and runs  \
   * unvectorised where it is 0). */                                       \
  __kernel void NAME##_bcast3d(OCL_TENSOR_ARG(const T, x),                   \
                               OCL_TENSOR_ARG(const T, y),                   \
                               OCL_TENSOR_ARG(OUT_T, z), bcast3_t s)         \
  {                                                                          \
    int i = get_global_id(0), j = get_global_id(1), k = get_global_id(2);    \
    if (i >= (int)s.inner || j >= (int)s.mid || k >= (int)s.outer)           \
      return;                                                                \
    CT a = LOAD(OCL_PTR(const T, x),                                         \
                k * s.p_strides[0] + j * s.p_strides[1] + i);                \
    CT b = LOAD(OCL_PTR(const T, y),                                         \
                k * s.q_strides[0] + j * s.q_strides[1] + i);                \
    STORE_OUT(OCL_PTR(OUT_T, z), (k * (int)s.mid + j) * (int)s.inner + i,    \
              (EXPR));                                                       \
  }                                                                          \
  __kernel void NAME##_bcast3d_one(OCL_TENSOR_ARG(const T, p),               \
                                   OCL_TENSOR_ARG(const T, q),               \
                                   OCL_TENSOR_ARG(OUT_T, z), bcast3_t s)     \
  {                                                                          \
    int i = get_global_id(0), j = get_global_id(1), k = get_global_id(2);    \
    if (i >= (int)s.inner || j >= (int)s.mid || k >= (int)s.outer)           \
      return;                                                                \
    BCAST3_OPERANDS(s,                                                       \
                    LOAD(OCL_PTR(const T, p), k * s.p_strides[0] +           \
                                                  j * s.p_strides[1] + i),   \
                    LOAD(OCL_PTR(const T, q),                                \
                         k * s.q_strides[0] + j * s.q_strides[1]));          \
    STORE_OUT(OCL_PTR(OUT_T, z), (k * (int)s.mid + j) * (int)s.inner + i,    \
              (EXPR));                                                       \
  }                                                                          \
  /* The CPU shape of _bcast3d and _bcast3d_one: a work-item per span of  \
   * a row (dimension 0: spans, 1: mid, 2: outer) loops along it, and the  \
   * compiler vectorises that loop as it does _flat's. Across work-items   \
   * PoCL masks the lanes against the row's end and gathers q's one value \
   * (measured on AVX-512: 8 lanes, a gather each, 0.15-0.55 of _flat's  \
   * speed). q's stride along the row is 1 (x, y in order: _bcast3d's      \
   * case) or 0 (one value, on the side `swap` says). The arguments are    \
   * restrict (kept on parameters only): without the overlap checks the   \
   * loop runs vectorised from 8 elements on, where the checks kept rows   \
   * of 32 scalar. z may be p itself (a forwarded input), which            \
   * index-for-index element-wise code tolerates. */                       \
  __kernel void NAME##_bcast3d_rows(ROW_ARG(const T, p), ROW_ARG(const T, q), \
                                    ROW_ARG(OUT_T, z), bcast3_t s, int span) \
  {                                                                          \
    int i0 = get_global_id(0) * span, j = get_global_id(1),                  \
        k = get_global_id(2);                                                \
    if (i0 >= (int)s.inner || j >= (int)s.mid || k >= (int)s.outer)          \
      return;                                                                \
    int len = min(span, (int)s.inner - i0), q_step = s.q_strides[2];         \
    const __global T *pr =                                                   \
        OCL_PTR(const T, p) + k * s.p_strides[0] + j * s.p_strides[1] + i0;  \
    const __global T *qr = OCL_PTR(const T, q) + k * s.q_strides[0] +        \
                           j * s.q_strides[1] + i0 * q_step;                 \
    __global OUT_T *zr =                                                     \
        OCL_PTR(OUT_T, z) + (k * (int)s.mid + j) * (int)s.inner + i0;        \
    if (q_step != 0) {                                                       \
      for (int i = 0; i < len; i++) {                                        \
        CT a = LOAD(pr, i), b = LOAD(qr, i);                                 \
        STORE_OUT(zr, i, (EXPR));                                            \
      }                                                                      \
    } else if (s.swap) {                                                     \
      CT a = LOAD(qr, 0);                                                    \
      for (int i = 0; i < len; i++) {                                        \
        CT b = LOAD(pr, i);                                                  \
        STORE_OUT(zr, i, (EXPR));                                            \
      }                                                                      \
    } else {                                                                 \
      CT b = LOAD(qr, 0);                                                    \
      for (int i = 0; i < len; i++) {                                        \
        CT a = LOAD(pr, i);                                                  \
        STORE_OUT(zr, i, (EXPR));                                            \
      }                                                                      \
    }                                                                        \
  }                                                                          \
  /* The CPU shape's rows shorter than a vector (RGB's 3 channels), p of   \
   * z's shape and q varying along the rows only: a work-item takes        \
   * rows_per_item whole rows (a multiple of 16) as one contiguous run, q's \
   * row repeated 16 times in private memory beside it, so that the loop    \
   * reads both operands contiguously and vectorises (_bcastf splits every  \
   * index: 0.2 of a flat add). */                                          \
  __kernel void NAME##_bcast3d_pattern(ROW_ARG(const T, p),                  \
                                       ROW_ARG(const T, q),                  \
                                       ROW_ARG(OUT_T, z), bcast3_t s,        \
                                       int rows_per_item)                    \
  {                                                                          \
    int r0 = get_global_id(0) * rows_per_item, k = get_global_id(1);         \
    if (r0 >= (int)s.mid || k >= (int)s.outer)                               \
      return;                                                                \
    int inner = (int)s.inner, period = BCAST_PATTERN_ROWS * inner;           \
    int len = min(rows_per_item, (int)s.mid - r0) * inner;                   \
    const __global T *qr = OCL_PTR(const T, q) + k * s.q_strides[0];         \
    CT pattern[BCAST_PATTERN_ROWS * (ROWS_MIN_INNER - 1)];                   \
    for (int e = 0; e < period; e++)                                         \
      pattern[e] = LOAD(qr, e % inner);                                      \
    const __global T *pr =                                                   \
        OCL_PTR(const T, p) + k * s.p_strides[0] + r0 * inner;               \
    __global OUT_T *zr = OCL_PTR(OUT_T, z) + (k * (int)s.mid + r0) * inner;  \
    for (int c = 0; c < len; c += period) {                                  \
      int n = min(period, len - c);                                          \
      if (s.swap) {                                                          \
        for (int i = 0; i < n; i++) {                                        \
          CT a = pattern[i], b = LOAD(pr, c + i);                            \
          STORE_OUT(zr, c + i, (EXPR));                                      \
        }                                                                    \
      } else {                                                               \
        for (int i = 0; i < n; i++) {                                        \
          CT a = LOAD(pr, c + i), b = pattern[i];                            \
          STORE_OUT(zr, c + i, (EXPR));                                      \
        }                                                                    \
      }                                                                      \
    }                                                                        \
  }                                                                          \
  /* Innermost dims too short for those lanes, where p has z's shape: one  \
   * work-item per element of z in order, p read at z's index             \
   * (contiguous), q's index split from it by multiplications (no         \
   * division instruction) and no loop, so that PoCL vectorises it. */     \
  __kernel void NAME##_bcastf(OCL_TENSOR_ARG(const T, p),                    \
                              OCL_TENSOR_ARG(const T, q),                    \
                              OCL_TENSOR_ARG(OUT_T, z), bcast3_t s)          \
  {                                                                          \
    uint i = get_global_id(0);                                               \
    OCL_GUARD(i, s.n);                                                       \
    uint r = ocl_fastdiv(i, s.inner_magic, s.inner_shift);                   \
    uint c0 = ocl_fastdiv(r, s.mid_magic, s.mid_shift);                      \
    int c1 = (int)(r - c0 * s.mid), c2 = (int)(i - r * s.inner);             \
    BCAST3_OPERANDS(s, LOAD(OCL_PTR(const T, p), i),                         \
                    LOAD(OCL_PTR(const T, q), (int)c0 * s.q_strides[0] +     \
                                                  c1 * s.q_strides[1] +      \
                                                  c2 * s.q_strides[2]));     \
    STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                                 \
  }                                                                          \
  __kernel void NAME##_bcast64(OCL_TENSOR_ARG(const T, x),                   \
                               OCL_TENSOR_ARG(const T, y),                   \
                               OCL_TENSOR_ARG(OUT_T, z), long n, bcast_t s)  \
  {                                                                          \
    long i = get_global_id(0);                                               \
    OCL_GUARD(i, n);                                                         \
    long rem = i, xi = 0, yi = 0;                                            \
    for (long d = s.rank - 1; d >= 0; d--) {                                 \
      long c = rem % s.dims[d];                                              \
      rem /= s.dims[d];                                                      \
      xi += c * s.x_strides[d];                                              \
      yi += c * s.y_strides[d];                                              \
    }                                                                        \
    CT a = LOAD(OCL_PTR(const T, x), xi);                                    \
    CT b = LOAD(OCL_PTR(const T, y), yi);                                    \
    STORE_OUT(OCL_PTR(OUT_T, z), i, (EXPR));                                 \
  }

#define ARITH(NAME, EXPR) BINARY_KERNELS(NAME, T, STORE, EXPR)
#define COMPARE(NAME, EXPR) BINARY_KERNELS(NAME, uchar, STORE_BOOL, EXPR)

#if !defined(T_IS_BOOL)

/* The helpers of binary.def's rows, and the kernels of the ops no row
 * describes (Betainc, ApproximateEqual, ClipByValue). */
#if defined(T_IS_FLOAT) || defined(T_IS_HALF) || defined(T_IS_DOUBLE)
/* google_floor_fmod: the remainder takes the divisor's sign. */
static CT floor_mod_of(CT a, CT b)
{
  CT r = fmod(a, b);
  return (r != (CT)0 && ((b < (CT)0) != (r < (CT)0))) ? r + b : r;
}
#endif
#define IGAMMA_ITERATIONS 2000
#if defined(T_IS_DOUBLE)
/* ---- Special functions in double -----------------------------------------
 * Cephes' igam, igamc and zeta as Eigen evaluates them for TensorFlow's
 * double kernels: the float ones' methods (below) with double's epsilon,
 * rescaling bound and log of the largest double; zeta's direct sum runs
 * on until its last term is past 9 (for a negative q), here at most
 * ZETA_DOUBLE_TERMS terms, a bound on the work per element. */
#define CEPHES_MACHEP_DOUBLE 1.11022302462515654042e-16 /* DBL_EPSILON / 2 */
#define CEPHES_BIG_DOUBLE 4.503599627370496e15          /* 2^52 */
#define CEPHES_BIGINV_DOUBLE 2.22044604925031308085e-16 /* 2^-52 */
#define CEPHES_MAXLOG_DOUBLE 7.09782712893383996843e2   /* log(DBL_MAX) */
#define ZETA_DOUBLE_TERMS 100000

/* x^a e^-x / Gamma(a), 0 where it underflows double (or is NaN). */
static double igamma_prefactor(double a, double x)
{
  double log_ax = a * log(x) - x - lgamma(a);
  if (log_ax < -CEPHES_MAXLOG_DOUBLE || isnan(log_ax))
    return 0;
  return exp(log_ax);
}

/* P(a, x) by its power series; for x <= 1 or x <= a. */
static double igamma_series(double a, double x)
{
  double ax = igamma_prefactor(a, x);
  if (ax == 0)
    return 0;
  double r = a, c = 1, sum = 1;
  for (int i = 0; i < IGAMMA_ITERATIONS; i++) {
    r += 1;
    c *= x / r;
    sum += c;
    if (c <= CEPHES_MACHEP_DOUBLE * sum)
      break;
  }
  return sum * (ax / a);
}

/* Q(a, x) by its continued fraction; for x >= 1 and x >= a. */
static double igammac_fraction(double a, double x)
{
  if (isinf(x))
    return 0;
  double ax = igamma_prefactor(a, x);
  if (ax == 0)
    return 0;
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
  double ans = pkm1 / qkm1;
  for (int i = 0; i < IGAMMA_ITERATIONS; i++) {
    c += 1;
    y += 1;
    z += 2;
    double yc = y * c;
    double pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    if (qk != 0) {
      double previous = ans;
      ans = pk / qk;
      if (fabs(previous - ans) <= CEPHES_MACHEP_DOUBLE * fabs(ans))
        break;
    }
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    if (fabs(pk) > CEPHES_BIG_DOUBLE) { /* rescale before it overflows */
      pkm2 *= CEPHES_BIGINV_DOUBLE;
      pkm1 *= CEPHES_BIGINV_DOUBLE;
      qkm2 *= CEPHES_BIGINV_DOUBLE;
      qkm1 *= CEPHES_BIGINV_DOUBLE;
    }
  }
  return ans * ax;
}

/* The float ones' domain: 0 at x == 0 (whatever a), NaN for x < 0,
 * a <= 0 or NaN. */
static double igamma_of(double a, double x)
{
  if (x == 0)
    return 0;
  if (x < 0 || a <= 0 || isnan(a) || isnan(x))
    return NAN;
  if (x > 1 && x > a)
    return 1 - igammac_fraction(a, x);
  return igamma_series(a, x);
}

static double igammac_of(double a, double x)
{
  if (x < 0 || a <= 0 || isnan(a) || isnan(x))
    return NAN;
  if (x < 1 || x < a)
    return 1 - igamma_series(a, x);
  return igammac_fraction(a, x);
}

__constant double ZETA_A_DOUBLE[] = {12.0,
                                     -720.0,
                                     30240.0,
                                     -1209600.0,
                                     47900160.0,
                                     -1.8924375803183791606e9,
                                     7.47242496e10,
                                     -2.950130727918164224e12,
                                     1.1646782814350067249e14,
                                     -4.5979787224074726105e15,
                                     1.8152105401943546773e17,
                                     -7.1661652561756670113e18};

/* Hurwitz zeta(x, q), with the float one's edges. */
static double zeta_of(double x, double q)
{
  if (x == 1)
    return INFINITY;
  if (x < 1)
    return NAN;
  if (q <= 0) {
    if (q == floor(q))
      return x == floor(x) && (isinf(x) || fmod(x, 2.0) == 0) ? INFINITY
                                                               : NAN;
    if (x != floor(x))
      return NAN;
  }
  double s = pow(q, -x), a = q, b = 0;
  for (int i = 0; i < ZETA_DOUBLE_TERMS && (i < 9 || a <= 9); i++) {
    a += 1;
    b = pow(a, -x);
    s += b;
    if (fabs(b / s) < CEPHES_MACHEP_DOUBLE)
      return s;
  }
  if (b == 0) /* the tail is 0 too; a may have overflowed */
    return s;
  double w = a, k = 0;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  a = 1;
  for (int i = 0; i < 12; i++) {
    a *= x + k;
    b /= w;
    double t = a * b / ZETA_A_DOUBLE[i];
    s += t;
    if (fabs(t / s) < CEPHES_MACHEP_DOUBLE)
      break;
    k += 1;
    a *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

/* As the float one: psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x). */
static double polygamma_of(double n, double x)
{
  if (floor(n) != n || n < 0)
    return NAN;
  if (n == 0)
    return special_digamma(x, NAN);
  double order = n + 1;
  return pow(-1.0, order) * exp(lgamma(order)) * zeta_of(order, x);
}
#endif
#if defined(T_IS_FLOAT) || defined(T_IS_HALF)
/* ---- Special functions (float; TensorFlow registers no half) ------------
 * S. L. Moshier's Cephes algorithms as Eigen evaluates them for
 * TensorFlow's float kernels, so that the edges and the iteration limits
 * agree: igam's power series and igamc's continued fraction (2000 terms at
 * most), zeta's Euler-Maclaurin summation. */
#define CEPHES_MACHEP 5.9604644775390625e-8f /* FLT_EPSILON / 2 */
#define CEPHES_BIG (1.0f / CEPHES_MACHEP)

/* x^a e^-x / Gamma(a), 0 where it underflows float (or is NaN). */
static float igamma_prefactor(float a, float x)
{
  float log_ax = a * log(x) - x - lgamma(a);
  if (log_ax < -88.72283905206835f || isnan(log_ax))
    return 0.0f;
  return exp(log_ax);
}

/* P(a, x) by its power series; for x <= 1 or x <= a. */
static float igamma_series(float a, float x)
{
  float ax = igamma_prefactor(a, x);
  if (ax == 0.0f)
    return 0.0f;
  float r = a, c = 1.0f, sum = 1.0f;
  for (int i = 0; i < IGAMMA_ITERATIONS; i++) {
    r += 1.0f;
    c *= x / r;
    sum += c;
    if (c <= CEPHES_MACHEP * sum)
      break;
  }
  return sum * (ax / a);
}

/* Q(a, x) by its continued fraction; for x >= 1 and x >= a. */
static float igammac_fraction(float a, float x)
{
  if (isinf(x))
    return 0.0f;
  float ax = igamma_prefactor(a, x);
  if (ax == 0.0f)
    return 0.0f;
  float y = 1.0f - a, z = x + y + 1.0f, c = 0.0f;
  float pkm2 = 1.0f, qkm2 = x, pkm1 = x + 1.0f, qkm1 = z * x;
  float ans = pkm1 / qkm1;
  for (int i = 0; i < IGAMMA_ITERATIONS; i++) {
    c += 1.0f;
    y += 1.0f;
    z += 2.0f;
    float yc = y * c;
    float pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    if (qk != 0.0f) {
      float previous = ans;
      ans = pk / qk;
      if (fabs(previous - ans) <= CEPHES_MACHEP * fabs(ans))
        break;
    }
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    if (fabs(pk) > CEPHES_BIG) { /* rescale before it overflows */
      pkm2 *= CEPHES_MACHEP;
      pkm1 *= CEPHES_MACHEP;
      qkm2 *= CEPHES_MACHEP;
      qkm1 *= CEPHES_MACHEP;
    }
  }
  return ans * ax;
}

/* TensorFlow's domain: 0 at x == 0 (whatever a), NaN for x < 0, a <= 0 or
 * NaN. */
static float igamma_of(float a, float x)
{
  if (x == 0.0f)
    return 0.0f;
  if (x < 0.0f || a <= 0.0f || isnan(a) || isnan(x))
    return NAN;
  if (x > 1.0f && x > a)
    return 1.0f - igammac_fraction(a, x);
  return igamma_series(a, x);
}

static float igammac_of(float a, float x)
{
  if (x < 0.0f || a <= 0.0f || isnan(a) || isnan(x))
    return NAN;
  if (x < 1.0f || x < a)
    return 1.0f - igamma_series(a, x);
  return igammac_fraction(a, x);
}

/* (2k)! / B_2k: the Euler-Maclaurin tail's coefficients. */
__constant float ZETA_A[] = {12.0f,
                             -720.0f,
                             30240.0f,
                             -1209600.0f,
                             47900160.0f,
                             -1.8924375803183791606e9f,
                             7.47242496e10f,
                             -2.950130727918164224e12f,
                             1.1646782814350067249e14f,
                             -4.5979787224074726105e15f,
                             1.8152105401943546773e17f,
                             -7.1661652561756670113e18f};

/* Hurwitz zeta(x, q) = sum_k (k + q)^-x: inf at x == 1, NaN below; at the
 * poles q = 0, -1, ... inf for an even integer x and NaN otherwise; a
 * negative q otherwise only with an integer x. Nine terms, then the
 * Euler-Maclaurin tail. */
static float zeta_of(float x, float q)
{
  if (x == 1.0f)
    return INFINITY;
  if (x < 1.0f)
    return NAN;
  if (q <= 0.0f) {
    if (q == floor(q))
      return x == floor(x) && (isinf(x) || fmod(x, 2.0f) == 0.0f) ? INFINITY
                                                                    : NAN;
    if (x != floor(x))
      return NAN;
  }
  float s = pow(q, -x), a = q, b = 0.0f;
  for (int i = 0; i < 9; i++) {
    a += 1.0f;
    b = pow(a, -x);
    s += b;
    if (fabs(b / s) < CEPHES_MACHEP)
      return s;
  }
  if (b == 0.0f) /* the tail is 0 too; a may have overflowed */
    return s;
  float w = a, k = 0.0f;
  s += b * w / (x - 1.0f);
  s -= 0.5f * b;
  a = 1.0f;
  for (int i = 0; i < 12; i++) {
    a *= x + k;
    b /= w;
    float t = a * b / ZETA_A[i];
    s += t;
    if (fabs(t / s) < CEPHES_MACHEP)
      break;
    k += 1.0f;
    a *= x + k;
    b /= w;
    k += 1.0f;
  }
  return s;
}

/* psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x); NaN unless n is a
 * non-negative integer; digamma at n == 0 (NaN at every pole, 0
 * included, in every TensorFlow version). */
static float polygamma_of(float n, float x)
{
  if (floor(n) != n || n < 0.0f)
    return NAN;
  if (n == 0.0f)
    return special_digamma(x, NAN);
  float order = n + 1.0f;
  return pow(-1.0f, order) * exp(lgamma(order)) * zeta_of(order, x);
}


/* Betainc(a, b, x), the regularised incomplete beta function: Cephes'
 * incbet in float as Eigen evaluates it for TensorFlow (its continued
 * fractions stop at 100 terms, its power series where b > 10 and b x / a
 * is small). */
static float incbeta_fraction(float a, float b, float x, bool small_branch)
{
  float k1 = a, k3 = a, k4 = a + 1.0f, k5 = 1.0f, k7 = a + 1.0f,
        k8 = a + 2.0f;
  float k2, k6, k26_step;
  if (small_branch) {
    k2 = a + b;
    k6 = b - 1.0f;
    k26_step = 1.0f;
  } else {
    k2 = b - 1.0f;
    k6 = a + b;
    k26_step = -1.0f;
    x = x / (1.0f - x);
  }
  float pkm2 = 0.0f, qkm2 = 1.0f, pkm1 = 1.0f, qkm1 = 1.0f, ans = 1.0f;
  for (int n = 0; n < 100; n++) {
    float xk = -(x * k1 * k2) / (k3 * k4);
    float pk = pkm1 + pkm2 * xk, qk = qkm1 + qkm2 * xk;
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    xk = (x * k5 * k6) / (k7 * k8);
    pk = pkm1 + pkm2 * xk;
    qk = qkm1 + qkm2 * xk;
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    if (qk != 0.0f) {
      float r = pk / qk;
      if (fabs(ans - r) < fabs(r) * CEPHES_MACHEP)
        return r;
      ans = r;
    }
    k1 += 1.0f;
    k2 += k26_step;
    k3 += 2.0f;
    k4 += 2.0f;
    k5 += 1.0f;
    k6 -= k26_step;
    k7 += 2.0f;
    k8 += 2.0f;
    if (fabs(qk) + fabs(pk) > CEPHES_BIG) {
      pkm2 *= CEPHES_MACHEP;
      pkm1 *= CEPHES_MACHEP;
      qkm2 *= CEPHES_MACHEP;
      qkm1 *= CEPHES_MACHEP;
    }
    if (fabs(qk) < CEPHES_MACHEP || fabs(pk) < CEPHES_MACHEP) {
      pkm2 *= CEPHES_BIG;
      pkm1 *= CEPHES_BIG;
      qkm2 *= CEPHES_BIG;
      qkm1 *= CEPHES_BIG;
    }
  }
  return ans;
}

/* The power series, for b > 10 and b x / a < 0.3 (it converges fast
 * there; the cap only guards the loop). */
static float incbeta_series(float a, float b, float x)
{
  float y = a * log(x) + (b - 1.0f) * log1p(-x) - log(a);
  y -= lgamma(a) + lgamma(b);
  y += lgamma(a + b);
  float t = x / (1.0f - x), s = 0.0f, u = 1.0f;
  for (int i = 0; i < 10000; i++) {
    b -= 1.0f;
    if (b == 0.0f)
      break;
    a += 1.0f;
    u *= t * b / a;
    s += u;
    if (!(fabs(u) > CEPHES_MACHEP))
      break;
  }
  return exp(y) * (1.0f + s);
}

/* For a > 1: from whichever tail converges, 1 - I_{1-x}(b, a) past the
 * mean. */
static float incbeta_large_a(float aa, float bb, float xx)
{
  bool reversed = xx > aa / (aa + bb);
  float a = reversed ? bb : aa, b = reversed ? aa : bb;
  float x = reversed ? 1.0f - xx : xx, t = reversed ? xx : 1.0f - xx;
  if (b > 10.0f && fabs(b * x / a) < 0.3f) {
    t = incbeta_series(a, b, x);
    return reversed ? 1.0f - t : t;
  }
  float ans;
  if (x * (a + b - 2.0f) / (a - 1.0f) < 1.0f) {
    ans = incbeta_fraction(a, b, x, true);
    t = b * log(t);
  } else {
    ans = incbeta_fraction(a, b, x, false);
    t = (b - 1.0f) * log(t);
  }
  t += a * log(x) + lgamma(a + b) - lgamma(a) - lgamma(b);
  t += log(ans / a);
  t = exp(t);
  return reversed ? 1.0f - t : t;
}

/* TensorFlow's edges: NaN for a or b negative (or both 0) and for x
 * outside [0, 1]; 0 at x == 0 and 1 at x == 1. `zero_limits`: TensorFlow
 * 2.22 takes the limits I_x(0, b) = 1 and I_x(a, 0) = 0 (whatever x);
 * earlier versions give NaN for a or b <= 0. */
static float betainc_of(float a, float b, float x, int zero_limits)
{
  if (zero_limits) {
    if (a < 0.0f || b < 0.0f || (a == 0.0f && b == 0.0f))
      return NAN;
    if (a == 0.0f)
      return 1.0f;
    if (b == 0.0f)
      return 0.0f;
  }
  if (a <= 0.0f || b <= 0.0f)
    return NAN;
  if (x <= 0.0f || x >= 1.0f)
    return x == 0.0f ? 0.0f : x == 1.0f ? 1.0f : NAN;
  if (a <= 1.0f) {
    /* I_x(a, b) = I_x(a + 1, b) + x^a (1 - x)^b / (a B(a, b)). */
    float t = a * log(x) + b * log1p(-x) + lgamma(a + b) - lgamma(a + 1.0f) -
              lgamma(b);
    return incbeta_large_a(a + 1.0f, b, x) + exp(t);
  }
  return incbeta_large_a(a, b, x);
}
#elif defined(T_IS_DOUBLE)
/* Betainc in double: Cephes' incbet as Eigen evaluates it for double (its
 * power series where b x <= 1 and x <= 0.95, else one of two continued
 * fractions, 300 terms at most, from whichever tail converges), with the
 * float one's edges. */
#define CEPHES_MAXGAM_DOUBLE 171.624376956302725
#define INCBETA_DOUBLE_TERMS 300
/* The series converges fast where it is taken; the cap only guards the
 * loop, as the float one's. */
#define INCBETA_DOUBLE_SERIES_TERMS 10000

static double log_beta(double a, double b)
{
  return lgamma(a) + lgamma(b) - lgamma(a + b);
}

/* Continued fraction #1 (second: its other form, x / (1 - x) in place of
 * x, for y = x (a + b - 2) - (a - 1) >= 0). */
static double incbeta_fraction(double a, double b, double x, bool second)
{
  double k1 = a, k3 = a, k4 = a + 1, k5 = 1, k7 = a + 1, k8 = a + 2;
  double k2, k6, k26_step;
  if (second) {
    k2 = b - 1;
    k6 = a + b;
    k26_step = -1;
    x = x / (1 - x);
  } else {
    k2 = a + b;
    k6 = b - 1;
    k26_step = 1;
  }
  double pkm2 = 0, qkm2 = 1, pkm1 = 1, qkm1 = 1, ans = 1, r = 1;
  const double thresh = 3 * CEPHES_MACHEP_DOUBLE;
  for (int n = 0; n < INCBETA_DOUBLE_TERMS; n++) {
    double xk = -(x * k1 * k2) / (k3 * k4);
    double pk = pkm1 + pkm2 * xk, qk = qkm1 + qkm2 * xk;
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    xk = (x * k5 * k6) / (k7 * k8);
    pk = pkm1 + pkm2 * xk;
    qk = qkm1 + qkm2 * xk;
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    if (qk != 0)
      r = pk / qk;
    double t = 1;
    if (r != 0) {
      t = fabs((ans - r) / r);
      ans = r;
    }
    if (t < thresh)
      break;
    k1 += 1;
    k2 += k26_step;
    k3 += 2;
    k4 += 2;
    k5 += 1;
    k6 -= k26_step;
    k7 += 2;
    k8 += 2;
    if (fabs(qk) + fabs(pk) > CEPHES_BIG_DOUBLE) {
      pkm2 *= CEPHES_BIGINV_DOUBLE;
      pkm1 *= CEPHES_BIGINV_DOUBLE;
      qkm2 *= CEPHES_BIGINV_DOUBLE;
      qkm1 *= CEPHES_BIGINV_DOUBLE;
    }
    if (fabs(qk) < CEPHES_BIGINV_DOUBLE || fabs(pk) < CEPHES_BIGINV_DOUBLE) {
      pkm2 *= CEPHES_BIG_DOUBLE;
      pkm1 *= CEPHES_BIG_DOUBLE;
      qkm2 *= CEPHES_BIG_DOUBLE;
      qkm1 *= CEPHES_BIG_DOUBLE;
    }
  }
  return ans;
}

/* The power series, for b x <= 1 and x <= 0.95. */
static double incbeta_series(double a, double b, double x)
{
  double ai = 1 / a, u = (1 - b) * x, v = u / (a + 1), t1 = v, t = u;
  double n = 2, s = 0, z = CEPHES_MACHEP_DOUBLE * ai;
  for (int i = 0; i < INCBETA_DOUBLE_SERIES_TERMS && fabs(v) > z; i++) {
    u = (n - b) * x / n;
    t *= u;
    v = t / (a + n);
    s += v;
    n += 1;
  }
  s += t1 + ai;
  u = a * log(x);
  if (a + b < CEPHES_MAXGAM_DOUBLE && fabs(u) < CEPHES_MAXLOG_DOUBLE)
    return exp(-log_beta(a, b)) * pow(x, a) * s;
  t = -log_beta(a, b) + u + log(s);
  return t < -CEPHES_MAXLOG_DOUBLE ? 0 : exp(t);
}

static double betainc_of(double aa, double bb, double xx, int zero_limits)
{
  if (zero_limits) {
    if (aa < 0 || bb < 0 || (aa == 0 && bb == 0))
      return NAN;
    if (aa == 0)
      return 1;
    if (bb == 0)
      return 0;
  }
  if (aa <= 0 || bb <= 0)
    return NAN;
  if (xx <= 0 || xx >= 1)
    return xx == 0 ? 0 : xx == 1 ? 1 : NAN;
  if (bb * xx <= 1 && xx <= 0.95)
    return incbeta_series(aa, bb, xx);
  /* From the other tail past the mean: 1 - I_{1-x}(b, a). */
  bool reversed = xx > aa / (aa + bb);
  double a = reversed ? bb : aa, b = reversed ? aa : bb;
  double x = reversed ? 1 - xx : xx, xc = reversed ? xx : 1 - xx, t;
  if (reversed && b * x <= 1 && x <= 0.95) {
    t = incbeta_series(a, b, x);
  } else {
    double y = x * (a + b - 2) - (a - 1);
    double w = y < 0 ? incbeta_fraction(a, b, x, false)
                     : incbeta_fraction(a, b, x, true) / xc;
    y = a * log(x);
    t = b * log(xc);
    if (a + b < CEPHES_MAXGAM_DOUBLE && fabs(y) < CEPHES_MAXLOG_DOUBLE &&
        fabs(t) < CEPHES_MAXLOG_DOUBLE) {
      t = pow(xc, b) * pow(x, a) / a * w * exp(-log_beta(a, b));
    } else {
      y += t - log_beta(a, b) + log(w / a);
      t = y < -CEPHES_MAXLOG_DOUBLE ? 0 : exp(y);
    }
  }
  if (reversed)
    t = t <= CEPHES_MACHEP_DOUBLE ? 1 - CEPHES_MACHEP_DOUBLE : 1 - t;
  return t;
}
#endif
#if defined(T_IS_FLOAT) || defined(T_IS_HALF) || defined(T_IS_DOUBLE)

/* Each input either has the output's shape or is a scalar (step 0). */
__kernel void betainc(OCL_TENSOR_ARG(const T, a), OCL_TENSOR_ARG(const T, b),
                      OCL_TENSOR_ARG(const T, x), OCL_TENSOR_ARG(T, z), long n,
                      int a_step, int b_step, int x_step, int zero_limits)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  CT va = LOAD(OCL_PTR(const T, a), i * a_step);
  CT vb = LOAD(OCL_PTR(const T, b), i * b_step);
  CT vx = LOAD(OCL_PTR(const T, x), i * x_step);
  STORE(OCL_PTR(T, z), i, betainc_of(va, vb, vx, zero_limits));
}
#endif
#if defined(T_IS_FLOAT) || defined(T_IS_HALF)

/* ApproximateEqual: |x - y| < tolerance, same shapes only. */
__kernel void approximate_equal(OCL_TENSOR_ARG(const T, x),
                                OCL_TENSOR_ARG(const T, y),
                                OCL_TENSOR_ARG(uchar, z), long n,
                                float tolerance)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  CT a = LOAD(OCL_PTR(const T, x), i);
  CT b = LOAD(OCL_PTR(const T, y), i);
  STORE_BOOL(OCL_PTR(uchar, z), i, fabs(a - b) < tolerance);
}
#elif defined(T_IS_LONG)
/* google_floor_div / google_floor_mod for integers. Division by zero is
 * undefined on devices; TensorFlow's CPU kernel fails the op instead, which
 * the host checks for before launching (see binary.c). */
static CT floor_div_of(CT a, CT b)
{
  /* MIN / -1 traps on x86 (PoCL runs this on the CPU): negate with
   * wrap-around instead, as TensorFlow's int kernels wrap. */
  if ((CT)-1 < (CT)0 && b == (CT)-1)
    return (CT)((ulong)0 - (ulong)a);
  if ((a < 0) != (b < 0)) {
    CT abs_a = a < 0 ? -a : a;
    CT abs_b = b < 0 ? -b : b;
    return -((abs_a + abs_b - 1) / abs_b);
  }
  return a / b;
}
static CT floor_mod_of(CT a, CT b)
{
  if ((CT)-1 < (CT)0 && b == (CT)-1)
    return 0; /* and MIN % -1 would trap */
  CT r = a % b;
  return ((a < 0) != (b < 0) && r != 0) ? r + b : r;
}
/* The shifts' count, clamped to [0, bits - 1] as TensorFlow does. */
#define SHIFT_OF(b) clamp(b, (CT)0, (CT)(sizeof(CT) * 8 - 1))
#endif
/* ClipByValue: min(max(t, lo), hi) in Eigen's order, t.cwiseMin(hi)
 * .cwiseMax(lo) with std::min/std::max, so a NaN t stays NaN and a NaN
 * bound is ignored. lo and hi have t's shape or are scalars (step 0). */
__kernel void clip_by_value(OCL_TENSOR_ARG(const T, t),
                            OCL_TENSOR_ARG(const T, lo),
                            OCL_TENSOR_ARG(const T, hi), OCL_TENSOR_ARG(T, z),
                            long n, int t_step, int lo_step, int hi_step,
                            int flag)
{
  long i = get_global_id(0);
  OCL_GUARD(i, n);
  (void)flag; /* Betainc's; the ternary kernels share one signature */
  CT v = LOAD(OCL_PTR(const T, t), i * t_step);
  CT l = LOAD(OCL_PTR(const T, lo), i * lo_step);
  CT h = LOAD(OCL_PTR(const T, hi), i * hi_step);
  CT m = h < v ? h : v;
  STORE(OCL_PTR(T, z), i, m < l ? l : m);
}

/* clip_by_value with both bounds single elements and t of the output's
 * shape (tf.clip_by_value's usual call): read at i and at 0, which PoCL
 * vectorises; it ran the loads at i * step element by element (a [4M]
 * clip: 1.8-3.5 ms of device time before, 1.56-1.61 ms so). The bounds
 * are read once per work-item's run (OCL_FOR_FLAT). */
__kernel void clip_by_value_scalars(OCL_TENSOR_ARG(const T, t),
                                    OCL_TENSOR_ARG(const T, lo),
                                    OCL_TENSOR_ARG(const T, hi),
                                    OCL_TENSOR_ARG(T, z), long n)
{
  CT l = LOAD(OCL_PTR(const T, lo), 0);
  CT h = LOAD(OCL_PTR(const T, hi), 0);
  OCL_FOR_FLAT(long, i, n)
  {
    CT v = LOAD(OCL_PTR(const T, t), i);
    CT m = h < v ? h : v;
    STORE(OCL_PTR(T, z), i, m < l ? l : m);
  }
}

#endif /* !T_IS_BOOL */

/* ---- The kernels: six per row of binary.def with this storage type ---- */

/* Whether this program has a row's TYPES, and which of its expressions it
 * computes: MATH on float, half, double and bool, INT_MATH on int64 (int32
 * runs on the host). */
#if defined(T_IS_BOOL)
#define ON_BOOL(FORM, K, MATH, INT_MATH) FORM(K, MATH)
#define ON_NUMBERS_BOOL ON_BOOL
#elif defined(T_IS_FLOAT) || defined(T_IS_HALF)
/* ops without half (FLOAT_DOUBLE, FLOAT_DOUBLE_INTEGERS) are built for
 * half too, unregistered. */
#define ON_FLOATS(FORM, K, MATH, INT_MATH) FORM(K, MATH)
#define ON_FLOAT_DOUBLE ON_FLOATS
#define ON_FLOAT_DOUBLE_INTEGERS ON_FLOATS
#define ON_NUMBERS ON_FLOATS
#define ON_NUMBERS_BOOL ON_FLOATS
#elif defined(T_IS_DOUBLE)
#define ON_FLOATS(FORM, K, MATH, INT_MATH) FORM(K, MATH)
#define ON_FLOAT_DOUBLE ON_FLOATS
#define ON_FLOAT_DOUBLE_INTEGERS ON_FLOATS
#define ON_NUMBERS ON_FLOATS
#define ON_NUMBERS_BOOL ON_FLOATS
#else /* long */
#define ON_INTEGERS(FORM, K, MATH, INT_MATH) FORM(K, INT_MATH)
#define ON_FLOAT_DOUBLE_INTEGERS ON_INTEGERS
#define ON_NUMBERS ON_INTEGERS
#define ON_NUMBERS_BOOL ON_INTEGERS
#endif
#define NOT_HERE(FORM, K, MATH, INT_MATH)
#ifndef ON_BOOL
#define ON_BOOL NOT_HERE
#endif
#ifndef ON_FLOATS
#define ON_FLOATS NOT_HERE
#define ON_FLOAT_DOUBLE NOT_HERE
#endif
#ifndef ON_INTEGERS
#define ON_INTEGERS NOT_HERE
#endif
#ifndef ON_NUMBERS
#define ON_NUMBERS NOT_HERE
#define ON_FLOAT_DOUBLE_INTEGERS NOT_HERE
#endif

/* KERNEL is expanded on its way to BINARY_KERNELS' paste: binary.def
 * names no kernel after a built-in PoCL defines as a macro (pow, atan2). */
#define BINARY_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN, CASES,  \
                  MATH, INT_MATH)                                            \
  ON_##TYPES(FORM, KERNEL, MATH, INT_MATH)
#include "binary.def"
