/* Random numbers that equal TensorFlow's CPU kernels' for the same Philox
 * key and counter.
 *
 * TensorFlow splits an output into groups of a distribution's element count
 * (4 for float and half, 2 for int64) and gives group g the generator
 * skipped by g (fixed-size distributions) or by g * 256 (truncated normal,
 * which consumes a variable number of samples and reserves 256 per output
 * element). A group's values therefore depend only on (key, counter, g):
 * one work item per group reproduces them in any order.
 *
 * Built per storage type (-DT=float|half|long, see runtime.h); the float and
 * half programs hold the real distributions (half is computed in float and
 * rounded to nearest even on store, as Eigen::half(float) does), the long
 * program the int64 StatelessRandomUniformIntV2. -DRANDOM_FP64 (the host
 * asks for it on CPU devices with cl_khr_fp64 only: fp64 runs at 1/32 to
 * 1/64 of the float rate on consumer GPUs) computes Box-Muller's steps in
 * double, closer to TensorFlow's CPU numbers. */
#include "common.clh"

#ifdef RANDOM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define RANDOM_HAS_FP64 1
#endif

/* Philox4x32-10 state as the host lays it out (struct philox_state in
 * random.c): key then counter, low words first. */
typedef struct {
  uint key[2];
  uint counter[4];
} philox_t;

/* The block inlined and its rounds unrolled: as a call (a vector return),
 * or as a loop, it left PoCL's run of groups around it element by element
 * (4M uniform floats: 24 ms against 5.7). */
static inline __attribute__((always_inline)) uint4 philox_block(uint4 c,
                                                               uint2 k)
{
#pragma unroll
  for (int round = 0; round < 10; round++) {
    if (round > 0)
      k += (uint2)(0x9E3779B9u, 0xBB67AE85u);
    /* 32 x 32 -> 64-bit products: mul_hi is a call on PoCL. */
    ulong p0 = (ulong)0xD2511F53u * c.x, p1 = (ulong)0xCD9E8D57u * c.z;
    c = (uint4)((uint)(p1 >> 32) ^ c.y ^ k.x, (uint)p1,
                (uint)(p0 >> 32) ^ c.w ^ k.y, (uint)p0);
  }
  return c;
}

/* PhiloxRandom::Skip, carries included exactly as TensorFlow propagates
 * them (not a plain 128-bit add when the high count word wraps), as
 * selects: a branch left PoCL's run of groups element by element. */
static uint4 philox_skip(uint4 c, ulong count)
{
  uint lo = (uint)count;
  uint x = c.x + lo;
  uint hi = (uint)(count >> 32) + (x < lo);
  uint y = c.y + hi;
  uint carry = y < hi;
  uint z = c.z + carry;
  return (uint4)(x, y, z, c.w + (carry & (z == 0)));
}

static float u32_to_float(uint x)
{
  return as_float(0x3f800000u | (x & 0x7fffffu)) - 1.0f;
}

#ifdef RANDOM_HAS_FP64
/* log(x) of a float x in (0, 1], in double to ~1e-16: m 2^e with m in
 * [sqrt(1/2), sqrt(2)), then 2 atanh((m - 1) / (m + 1)) as its series to
 * the 23rd power (|f| <= 0.1716: the next term is below 2^-64 of it).
 * PoCL's log is a call, which left the run of groups element by element. */
static double log_unit(float x)
{
  ulong bits = as_ulong((double)x);
  int e = (int)(bits >> 52) - 1023; /* x > 0: no sign bit */
  double m = as_double((bits & 0x000fffffffffffffUL) | 0x3ff0000000000000UL);
  bool high = m > 1.4142135623730951;
  m = high ? 0.5 * m : m;
  e = high ? e + 1 : e;
  double f = (m - 1.0) / (m + 1.0), f2 = f * f;
  double p = 1.0 / 23.0;
  p = fma(p, f2, 1.0 / 21.0);
  p = fma(p, f2, 1.0 / 19.0);
  p = fma(p, f2, 1.0 / 17.0);
  p = fma(p, f2, 1.0 / 15.0);
  p = fma(p, f2, 1.0 / 13.0);
  p = fma(p, f2, 1.0 / 11.0);
  p = fma(p, f2, 1.0 / 9.0);
  p = fma(p, f2, 1.0 / 7.0);
  p = fma(p, f2, 1.0 / 5.0);
  p = fma(p, f2, 1.0 / 3.0);
  return fma((double)e, M_LN2, 2.0 * f * fma(p, f2, 1.0));
}

/* (sin v, cos v) for a float v in [0, 2 pi], in double to ~1e-16: v less
 * k pi / 2 in two parts (the first difference is exact: v has 24 bits),
 * then Taylor's series to r^17 and r^18 on |r| <= pi / 4, placed by k's
 * quadrant. PoCL's sin and cos are calls. */
static double2 sincos_unit_turn(float v)
{
  double d = (double)v;
  /* rint by the 1.5 * 2^52 shift: rint is a call too. */
  double k = (d * 0.63661977236758134 + 6755399441055744.0) -
             6755399441055744.0;
  double r = fma(-k, 1.5707963267948966, d);
  r = fma(-k, 6.123233995736766e-17, r);
  double r2 = r * r;
  double sp = -1.0 / 355687428096000.0; /* -1/17!: sin's from r^17 down */
  sp = fma(sp, r2, 1.0 / 1307674368000.0);
  sp = fma(sp, r2, -1.0 / 6227020800.0);
  sp = fma(sp, r2, 1.0 / 39916800.0);
  sp = fma(sp, r2, -1.0 / 362880.0);
  sp = fma(sp, r2, 1.0 / 5040.0);
  sp = fma(sp, r2, -1.0 / 120.0);
  sp = fma(sp, r2, 1.0 / 6.0);
  double sin_r = fma(-r * r2, sp, r);
  double cp = 1.0 / 6402373705728000.0; /* 1/18!: cos's from r^18 down */
  cp = fma(cp, r2, -1.0 / 20922789888000.0);
  cp = fma(cp, r2, 1.0 / 87178291200.0);
  cp = fma(cp, r2, -1.0 / 479001600.0);
  cp = fma(cp, r2, 1.0 / 3628800.0);
  cp = fma(cp, r2, -1.0 / 40320.0);
  cp = fma(cp, r2, 1.0 / 720.0);
  cp = fma(cp, r2, -1.0 / 24.0);
  cp = fma(cp, r2, 0.5);
  double cos_r = fma(-r2, cp, 1.0);
  int q = (int)k & 3;
  double s = (q & 1) ? cos_r : sin_r, c = (q & 1) ? sin_r : cos_r;
  s = (q & 2) ? -s : s;
  c = ((q + 1) & 2) ? -c : c;
  return (double2)(s, c);
}
#endif

/* BoxMullerFloat of random_distributions_utils.h. TensorFlow's CPU build
 * calls glibc's logf, sqrtf and sincosf and forms 2*pi*u in double. In
 * double each step here rounds as a correctly rounded float function would;
 * glibc's logf and sincosf are not correctly rounded for about 1% of
 * inputs, so about 1.5% of the values differ from the CPU's, by at most 3
 * ulp (measured over 10^6). Without fp64 the float built-ins differ a
 * little more (2 ulp max on PoCL against the reference). */
static float2 box_muller(uint x0, uint x1)
{
  float u1 = u32_to_float(x0);
  if (u1 < 1.0e-7f)
    u1 = 1.0e-7f;
#ifdef RANDOM_HAS_FP64
  float v1 = (float)(2.0 * M_PI * (double)u32_to_float(x1));
  float u2 = (float)sqrt((double)(-2.0f * (float)log_unit(u1)));
  double2 sc = sincos_unit_turn(v1);
  float s = (float)sc.x, c = (float)sc.y;
#else
  /* 2*pi split into float head and tail: the product rounds once. */
  float u = u32_to_float(x1);
  float v1 = fma(6.28318548f, u, -1.7484555e-7f * u);
  float u2 = sqrt(-2.0f * log(u1));
  float c;
  float s = sincos(v1, &c);
#endif
  return (float2)(s * u2, c * u2);
}

#if defined(T_IS_FLOAT) || defined(T_IS_HALF)

#if defined(T_IS_HALF)
#define STORE(p, i, v) OCL_STORE_HALF(p, i, v)
/* Uint16ToHalf: 10 random mantissa bits, exactly representable. */
#define UNIFORM(x) ((float)((x) & 0x3ffu) * (1.0f / 1024.0f))
#else
#define STORE(p, i, v) ((p)[i] = (v))
#define UNIFORM(x) u32_to_float(x)
#endif

/* Writes group g's 4 values, the tail group only up to n. */
static void store4(__global T *out, long n, long g, float4 v)
{
  long i = g * 4;
  STORE(out, i, v.x);
  if (i + 1 < n)
    STORE(out, i + 1, v.y);
  if (i + 2 < n)
    STORE(out, i + 2, v.z);
  if (i + 3 < n)
    STORE(out, i + 3, v.w);
}

/* A whole group's 4 values, stored without conditions: PoCL vectorises a
 * run of such groups, which store4's tail tests kept element by element. */
static void store_group(__global T *out, long g, float4 v)
{
#if defined(T_IS_HALF)
  STORE(out, g * 4, v.x);
  STORE(out, g * 4 + 1, v.y);
  STORE(out, g * 4 + 2, v.z);
  STORE(out, g * 4 + 3, v.w);
#else
  vstore4(v, g, out);
#endif
}

static float4 uniform_group(long g, uint2 k, uint4 c)
{
  uint4 s = philox_block(philox_skip(c, (ulong)g), k);
  return (float4)(UNIFORM(s.x), UNIFORM(s.y), UNIFORM(s.z), UNIFORM(s.w));
}

static float4 normal_group(long g, uint2 k, uint4 c)
{
  uint4 s = philox_block(philox_skip(c, (ulong)g), k);
  return (float4)(box_muller(s.x, s.y), box_muller(s.z, s.w));
}

/* TruncatedNormalDistribution over a SingleSampleAdapter: pairs of samples
 * through Box-Muller, each value kept when |v| < 2, until 4 are kept. The
 * adapter draws a fresh 4-sample block each 4 samples. TensorFlow loops
 * without bound; the cap only stops a pathological key from hanging the
 * device (2^20 pairs rejected in a row has probability 0.045^(2^21)). */
static float4 truncated_group(long g, uint2 k, uint4 c)
{
  uint4 ctr = philox_skip(c, (ulong)g * 256u);
  float kept[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  int count = 0;
  uint4 s = (uint4)(0u);
  for (int pair = 0; pair < (1 << 20) && count < 4; pair++) {
    /* Two samples per pair, two pairs per block: even pairs draw a new
     * block. */
    if ((pair & 1) == 0) {
      s = philox_block(ctr, k);
      ctr = philox_skip(ctr, 1);
    }
    uint x0 = (pair & 1) ? s.z : s.x, x1 = (pair & 1) ? s.w : s.y;
    float2 f = box_muller(x0, x1);
    if (fabs(f.x) < 2.0f)
      kept[count++] = f.x;
    if (count < 4 && fabs(f.y) < 2.0f)
      kept[count++] = f.y;
  }
  return (float4)(kept[0], kept[1], kept[2], kept[3]);
}

/* The whole groups of this work-item (OCL_FOR_FLAT over groups: the host
 * launches through ocl_launch_flat), then a partial last group from the
 * launch's last work-item, which every launch has. */
#define RANDOM_FILL(NAME)                                                    \
  static void fill_##NAME(__global T *out, long n, uint2 k, uint4 c)         \
  {                                                                          \
    long whole = n / 4;                                                      \
    OCL_FOR_FLAT(long, g, whole)                                             \
    store_group(out, g, NAME##_group(g, k, c));                              \
    if (whole * 4 < n && get_global_id(0) == get_global_size(0) - 1)         \
      store4(out, n, whole, NAME##_group(whole, k, c));                      \
  }

/* Each distribution twice: _kc reads the key and counter tensors
 * (stateless ops: uint64 [1] and [2], low word first), _st takes the
 * generator state by value (stateful ops, whose state the host keeps). */
#define RANDOM_KERNELS(NAME)                                                 \
  RANDOM_FILL(NAME)                                                          \
  __kernel void NAME##_kc(OCL_TENSOR_ARG(T, out), long n,                    \
                          OCL_TENSOR_ARG(const ulong, key),                  \
                          OCL_TENSOR_ARG(const ulong, counter))              \
  {                                                                          \
    ulong k64 = OCL_PTR(const ulong, key)[0];                                \
    __global const ulong *c64 = OCL_PTR(const ulong, counter);               \
    ulong c0 = c64[0], c1 = c64[1];                                          \
    fill_##NAME(OCL_PTR(T, out), n, (uint2)((uint)k64, (uint)(k64 >> 32)),   \
                (uint4)((uint)c0, (uint)(c0 >> 32), (uint)c1,                \
                        (uint)(c1 >> 32)));                                  \
  }                                                                          \
  __kernel void NAME##_st(OCL_TENSOR_ARG(T, out), long n, philox_t st)       \
  {                                                                          \
    fill_##NAME(OCL_PTR(T, out), n, (uint2)(st.key[0], st.key[1]),           \
                (uint4)(st.counter[0], st.counter[1], st.counter[2],         \
                        st.counter[3]));                                     \
  }

RANDOM_KERNELS(uniform)
RANDOM_KERNELS(normal)
RANDOM_KERNELS(truncated)

#elif defined(T_IS_LONG)

/* UniformDistribution<int64>: two samples per value, two values per
 * block; lo + bits % range in two's complement (SignedAdd). */
static void fill_int(__global long *o, long n, long g, uint2 k, uint4 c,
                     long lo, ulong range)
{
  uint4 s = philox_block(philox_skip(c, (ulong)g), k);
  ulong b0 = (ulong)s.x | ((ulong)s.y << 32);
  ulong b1 = (ulong)s.z | ((ulong)s.w << 32);
  o[g * 2] = (long)((ulong)lo + b0 % range);
  if (g * 2 + 1 < n)
    o[g * 2 + 1] = (long)((ulong)lo + b1 % range);
}

__kernel void uniform_int_kc(OCL_TENSOR_ARG(long, out), long n,
                             OCL_TENSOR_ARG(const ulong, key),
                             OCL_TENSOR_ARG(const ulong, counter), long lo,
                             ulong range)
{
  long g = get_global_id(0);
  OCL_GUARD(g * 2, n);
  ulong k64 = OCL_PTR(const ulong, key)[0];
  __global const ulong *c64 = OCL_PTR(const ulong, counter);
  ulong c0 = c64[0], c1 = c64[1];
  fill_int(OCL_PTR(long, out), n, g, (uint2)((uint)k64, (uint)(k64 >> 32)),
           (uint4)((uint)c0, (uint)(c0 >> 32), (uint)c1, (uint)(c1 >> 32)),
           lo, range);
}

/* RandomUniformInt (stateful): the generator state by value. */
__kernel void uniform_int_st(OCL_TENSOR_ARG(long, out), long n, philox_t st,
                             long lo, ulong range)
{
  long g = get_global_id(0);
  OCL_GUARD(g * 2, n);
  fill_int(OCL_PTR(long, out), n, g, (uint2)(st.key[0], st.key[1]),
           (uint4)(st.counter[0], st.counter[1], st.counter[2],
                   st.counter[3]),
           lo, range);
}

#endif

#if defined(MULTINOMIAL)
/* Multinomial and StatelessMultinomial (random.c) as TensorFlow's CPU
 * kernel draws them: per row, the running sum of exp(logit - max) over the
 * finite logits (max over the finite ones, from T's lowest value), then
 * each sample a double from the next two 32-bit words of one Philox stream
 * (Uint64ToDouble: 20 bits of the first, all of the second) times the
 * row's total, and the first class whose running sum exceeds it (an
 * upper bound: num_classes where none does). Sample j of row b takes the
 * stream's double b * num_samples + j, as the CPU kernel's single shard
 * reads them. ACC is double with -DRANDOM_FP64, else float (a sample can
 * then fall on the other side of a class boundary within float
 * rounding). L_T is the logits' storage. */
#ifdef RANDOM_HAS_FP64
#define ACC double
#else
#define ACC float
#endif
#if defined(L_IS_HALF)
#define LOGIT(p, i) ((ACC)vload_half((i), (p)))
#define L_LOWEST (-65504.0f)
#elif defined(L_IS_DOUBLE)
#define LOGIT(p, i) ((ACC)(p)[i])
#define L_LOWEST (-DBL_MAX)
#else
#define LOGIT(p, i) ((ACC)(p)[i])
#define L_LOWEST (-FLT_MAX)
#endif

/* One work-item per row: cdf[b, :] and totals[b]. */
__kernel void multinomial_cdf(OCL_TENSOR_ARG(const L_T, logits),
                              OCL_TENSOR_ARG(ACC, cdf),
                              OCL_TENSOR_ARG(ACC, totals), int rows,
                              int classes)
{
  int b = get_global_id(0);
  OCL_GUARD(b, rows);
  const __global L_T *row = OCL_PTR(const L_T, logits) + (long)b * classes;
  __global ACC *c = OCL_PTR(ACC, cdf) + (long)b * classes;
  ACC max = (ACC)L_LOWEST;
  for (int j = 0; j < classes; j++) {
    ACC v = LOGIT(row, j);
    if (isfinite(v) && v > max)
      max = v;
  }
  ACC total = 0;
  for (int j = 0; j < classes; j++) {
    ACC v = LOGIT(row, j);
    if (isfinite(v))
      total += exp(v - max);
    c[j] = total;
  }
  OCL_PTR(ACC, totals)[b] = total;
}

/* One work-item per sample. */
#define MULTINOMIAL_SAMPLE(OUT_T)                                            \
  __kernel void multinomial_sample_##OUT_T(                                 \
      OCL_TENSOR_ARG(const ACC, cdf), OCL_TENSOR_ARG(const ACC, totals),    \
      OCL_TENSOR_ARG(OUT_T, out), long count, int samples, int classes,     \
      philox_t st)                                                          \
  {                                                                         \
    long i = get_global_id(0);                                              \
    OCL_GUARD(i, count);                                                    \
    long b = i / samples;                                                   \
    uint4 s = philox_block(                                                 \
        philox_skip((uint4)(st.counter[0], st.counter[1], st.counter[2],    \
                            st.counter[3]),                                 \
                    (ulong)i / 2),                                          \
        (uint2)(st.key[0], st.key[1]));                                     \
    uint x0 = (i & 1) ? s.z : s.x, x1 = (i & 1) ? s.w : s.y;                \
    ACC u = uniform_double(x0, x1);                                         \
    ACC to_find = u * OCL_PTR(const ACC, totals)[b];                        \
    const __global ACC *c = OCL_PTR(const ACC, cdf) + b * classes;          \
    int lo = 0, hi = classes;                                               \
    while (lo < hi) {                                                       \
      int mid = lo + (hi - lo) / 2;                                         \
      if (c[mid] > to_find)                                                 \
        hi = mid;                                                           \
      else                                                                  \
        lo = mid + 1;                                                       \
    }                                                                       \
    OCL_PTR(OUT_T, out)[i] = (OUT_T)lo;                                     \
  }

/* Uint64ToDouble: [0, 1) from 52 mantissa bits. */
static ACC uniform_double(uint x0, uint x1)
{
#ifdef RANDOM_HAS_FP64
  ulong bits = ((ulong)1023 << 52) | ((ulong)(x0 & 0xfffffu) << 32) | x1;
  return as_double(bits) - 1.0;
#else
  return (float)(x0 & 0xfffffu) * (1.0f / 1048576.0f) +
         (float)x1 * (1.0f / 4503599627370496.0f);
#endif
}

MULTINOMIAL_SAMPLE(int)
MULTINOMIAL_SAMPLE(long)
#endif /* MULTINOMIAL */
