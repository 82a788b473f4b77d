/* References of the random-number kernel family: TensorFlow's Philox4x32-10
 * generator and its distributions (random_distributions.h), written again
 * in C.
 *
 * The reference follows TensorFlow's CPU kernels exactly: uniform floats
 * from 23 (half: 10) mantissa bits, Box-Muller through glibc's logf, sqrtf
 * and sincosf with 2*pi*u formed in double, as TensorFlow's CPU build does,
 * so on the same glibc the reference and TensorFlow's CPU agree bit for bit
 * (tests/tf/test_random_bits.py checks it).
 *
 * Tolerances: uniform, uniform int, key/counter derivation: exact (0).
 * Normal and truncated normal: the device forms log, sqrt, sin and cos in
 * double when it has fp64 (PoCL does) and rounds each step once, as a
 * correctly rounded float function would; glibc's logf and sincosf are
 * not correctly rounded for about 1% of inputs, so about 1.5% of float32
 * values differ by 1 to 3 ulp (measured over 10^6); without fp64 the OpenCL
 * float built-ins give at most 2 ulp here. atol = rtol = 1e-6 covers a few
 * ulps (values lie within +-6). A truncated normal could in principle keep
 * or reject a value differently when it lies within an ulp of +-2,
 * shifting its group of 4; no tested key does. Half: the float result
 * rounded to nearest even, at most one half ulp apart and nearly always
 * equal (REF_HALF_FACTOR widens the tolerance). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* ---- Philox and the distributions --------------------------------------- */

struct philox {
  uint32_t key[2];
  uint32_t counter[4];
};

static void philox_block(const struct philox *p, uint32_t out[4])
{
  uint32_t c0 = p->counter[0], c1 = p->counter[1], c2 = p->counter[2],
           c3 = p->counter[3];
  uint32_t k0 = p->key[0], k1 = p->key[1];
  for (int round = 0; round < 10; round++) {
    uint64_t a = (uint64_t)0xD2511F53u * c0, b = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(b >> 32) ^ c1 ^ k0;
    uint32_t n2 = (uint32_t)(a >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = (uint32_t)b;
    c2 = n2;
    c3 = (uint32_t)a;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/* PhiloxRandom::Skip: 128-bit blocks, TensorFlow's carries. */
static void philox_skip(struct philox *p, uint64_t count)
{
  uint32_t lo = (uint32_t)count, hi = (uint32_t)(count >> 32);
  p->counter[0] += lo;
  if (p->counter[0] < lo)
    hi++;
  p->counter[1] += hi;
  if (p->counter[1] < hi && ++p->counter[2] == 0)
    p->counter[3]++;
}

/* The next block, and the generator one block on (operator()). */
static void philox_next(struct philox *p, uint32_t out[4])
{
  philox_block(p, out);
  philox_skip(p, 1);
}

static float u32_to_float(uint32_t x)
{
  uint32_t bits = 0x3f800000u | (x & 0x7fffffu);
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

static void box_muller(uint32_t x0, uint32_t x1, float *f0, float *f1)
{
  float u1 = u32_to_float(x0);
  if (u1 < 1.0e-7f)
    u1 = 1.0e-7f;
  float v1 = (float)(2.0 * M_PI * (double)u32_to_float(x1));
  float u2 = sqrtf(-2.0f * logf(u1));
  float s, c;
  sincosf(v1, &s, &c);
  *f0 = s * u2;
  *f1 = c * u2;
}

enum dist { UNIFORM, NORMAL, TRUNCATED };

/* FillPhiloxRandom on CPU: group g (4 values) from the generator skipped by
 * g, or by 256 * g for the truncated normal's variable consumption. */
static void fill_real(enum dist dist, TF_DataType dtype, struct philox base,
                      double *out, int64_t n)
{
  for (int64_t g = 0; g * 4 < n; g++) {
    struct philox p = base;
    float v[4];
    uint32_t s[4];
    if (dist == TRUNCATED) {
      philox_skip(&p, (uint64_t)g * 256u);
      int kept = 0, used = 4;
      while (kept < 4) {
        uint32_t x[2];
        for (int j = 0; j < 2; j++) {
          if (used == 4) {
            philox_next(&p, s);
            used = 0;
          }
          x[j] = s[used++];
        }
        float f[2];
        box_muller(x[0], x[1], &f[0], &f[1]);
        for (int j = 0; j < 2 && kept < 4; j++)
          if (fabsf(f[j]) < 2.0f)
            v[kept++] = f[j];
      }
    } else {
      philox_skip(&p, (uint64_t)g);
      philox_block(&p, s);
      for (int j = 0; j < 4; j += 2) {
        if (dist == NORMAL)
          box_muller(s[j], s[j + 1], &v[j], &v[j + 1]);
        else if (dtype == TF_HALF)
          for (int h = j; h < j + 2; h++)
            v[h] = (float)(s[h] & 0x3ffu) / 1024.0f;
        else
          for (int h = j; h < j + 2; h++)
            v[h] = u32_to_float(s[h]);
      }
    }
    for (int j = 0; j < 4 && g * 4 + j < n; j++)
      out[g * 4 + j] = ref_round_to(dtype, v[j]);
  }
}

/* UniformDistribution<int32> (one sample per value) and <int64> (two). */
static void fill_int(TF_DataType dtype, struct philox base, int64_t lo,
                     int64_t hi, double *out, int64_t n)
{
  int per_block = dtype == TF_INT64 ? 2 : 4;
  for (int64_t g = 0; g * per_block < n; g++) {
    struct philox p = base;
    uint32_t s[4];
    philox_skip(&p, (uint64_t)g);
    philox_block(&p, s);
    for (int j = 0; j < per_block && g * per_block + j < n; j++) {
      double v;
      if (dtype == TF_INT64) {
        uint64_t bits = s[2 * j] | (uint64_t)s[2 * j + 1] << 32;
        v = (double)(int64_t)((uint64_t)lo + bits % ((uint64_t)hi - (uint64_t)lo));
      } else {
        uint32_t range = (uint32_t)hi - (uint32_t)lo;
        v = (int32_t)((uint32_t)lo + s[j] % range);
      }
      out[g * per_block + j] = v;
    }
  }
}

/* ---- Computes -------------------------------------------------------------- */

static enum dist dist_of(const char *op)
{
  if (strstr(op, "Normal") == NULL)
    return UNIFORM;
  return strstr(op, "Truncated") != NULL ? TRUNCATED : NORMAL;
}

static TF_DataType dtype_attr(const struct ref_case *c)
{
  const struct tfocl_attr *a = ref_case_attr(c, "dtype");
  return a != NULL ? a->value.type : TF_FLOAT;
}

/* The output shape from the shape input; false for a non-vector or a
 * negative dimension. */
static bool output_shape(const struct ref_tensor *shape, int64_t *dims,
                         int *rank)
{
  if (shape->rank != 1 ||
      shape->elements > REF_MAX_DIMS)
    return false;
  *rank = (int)shape->elements;
  for (int d = 0; d < *rank; d++) {
    if (shape->v[d] < 0)
      return false;
    dims[d] = (int64_t)shape->v[d];
  }
  return true;
}

static struct philox from_key_counter(uint64_t key, uint64_t c0, uint64_t c1)
{
  return (struct philox){
      .key = {(uint32_t)key, (uint32_t)(key >> 32)},
      .counter = {(uint32_t)c0, (uint32_t)(c0 >> 32), (uint32_t)c1,
                  (uint32_t)(c1 >> 32)},
  };
}

static int stateless_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  const struct ref_tensor *key = &c->inputs[1], *counter = &c->inputs[2],
                          *alg_t = &c->inputs[3];
  if (alg_t->rank != 0) {
    snprintf(error, (size_t)error_len, "alg must be a scalar");
    return -1;
  }
  int alg = (int)alg_t->v[0];
  if (alg == 3) /* RNG_ALG_AUTO_SELECT */
    alg = 1;
  if (key->rank != 1 || key->dims[0] != 1 || counter->rank != 1 ||
      counter->dims[0] < (alg == 1 ? 2 : alg)) {
    snprintf(error, (size_t)error_len, "bad key or counter shape");
    return -1;
  }
  int64_t dims[REF_MAX_DIMS];
  int rank;
  if (!output_shape(&c->inputs[0], dims, &rank)) {
    snprintf(error, (size_t)error_len, "bad shape");
    return -1;
  }
  bool is_int = strcmp(c->op, "StatelessRandomUniformIntV2") == 0;
  TF_DataType dtype = is_int ? c->inputs[4].dtype : dtype_attr(c);
  ref_tensor_alloc(&out[0], dtype, dims, rank);
  if (out[0].elements == 0)
    return 1;
  int64_t lo = 0, hi = 0;
  if (is_int) {
    if (c->inputs[4].rank != 0 || c->inputs[5].rank != 0 ||
        !(c->inputs[4].v[0] < c->inputs[5].v[0])) {
      ref_tensor_finish(&out[0]);
      snprintf(error, (size_t)error_len, "bad minval/maxval");
      return -1;
    }
    lo = (int64_t)c->inputs[4].v[0];
    hi = (int64_t)c->inputs[5].v[0];
  }
  if (alg != 1) {
    ref_tensor_finish(&out[0]);
    snprintf(error, (size_t)error_len, "Unsupported algorithm id: %d", alg);
    return -1;
  }
  struct philox base = from_key_counter(
      (uint64_t)key->v[0], (uint64_t)counter->v[0], (uint64_t)counter->v[1]);
  if (is_int)
    fill_int(dtype, base, lo, hi, out[0].v, out[0].elements);
  else
    fill_real(dist_of(c->op), dtype, base, out[0].v, out[0].elements);
  return 1;
}

/* The first call of a freshly built stateful kernel: PhiloxRandom(seed,
 * seed2) itself (later calls start 256 blocks per output further on). */
static int stateful_compute(const struct ref_case *c, struct ref_tensor *out,
                            char *error, int error_len)
{
  int64_t dims[REF_MAX_DIMS];
  int rank;
  if (!output_shape(&c->inputs[0], dims, &rank)) {
    snprintf(error, (size_t)error_len, "bad shape");
    return -1;
  }
  uint64_t seed = (uint64_t)ref_case_attr_int_or(c, "seed", 0);
  uint64_t seed2 = (uint64_t)ref_case_attr_int_or(c, "seed2", 0);
  struct philox base = {
      .key = {(uint32_t)seed, (uint32_t)(seed >> 32)},
      .counter = {0, 0, (uint32_t)seed2, (uint32_t)(seed2 >> 32)},
  };
  if (strcmp(c->op, "RandomUniformInt") == 0) {
    /* Its bounds are checked before the output, their order only for a
     * non-empty one. */
    const struct ref_tensor *lo = &c->inputs[1], *hi = &c->inputs[2];
    if (lo->rank != 0 || hi->rank != 0) {
      snprintf(error, (size_t)error_len, "minval and maxval must be 0-D");
      return -1;
    }
    ref_tensor_alloc(&out[0], lo->dtype, dims, rank);
    if (out[0].elements == 0)
      return 1;
    if (!(lo->v[0] < hi->v[0])) {
      ref_tensor_finish(&out[0]);
      snprintf(error, (size_t)error_len, "Need minval < maxval");
      return -1;
    }
    fill_int(lo->dtype, base, (int64_t)lo->v[0], (int64_t)hi->v[0],
             out[0].v, out[0].elements);
    return 1;
  }
  TF_DataType dtype = dtype_attr(c);
  ref_tensor_alloc(&out[0], dtype, dims, rank);
  fill_real(dist_of(c->op), dtype, base, out[0].v, out[0].elements);
  return 1;
}

/* Multinomial and StatelessMultinomial: TensorFlow's CPU kernel run as one
 * shard. Each row's running sums of exp(logit - max) over the finite
 * logits, in double; sample j of row b the double b * num_samples + j of
 * one Philox stream (two 32-bit words each, Uint64ToDouble) times the
 * row's total; the first class whose sum exceeds it. */
static int multinomial_compute(const struct ref_case *c, struct ref_tensor *out,
                               char *error, int error_len)
{
  const struct ref_tensor *logits = &c->inputs[0], *ns = &c->inputs[1];
  bool stateless = strcmp(c->op, "StatelessMultinomial") == 0;
  struct philox base;
  if (stateless) {
    const struct ref_tensor *seed = &c->inputs[2];
    if (seed->rank != 1 || seed->dims[0] != 2) {
      snprintf(error, (size_t)error_len, "seed must have shape [2]");
      return -1;
    }
    uint64_t s0 = (uint64_t)(int64_t)seed->v[0];
    uint64_t s1 = (uint64_t)(int64_t)seed->v[1];
    struct philox p = {
        .key = {0x3ec8f720u, 0x02461e29u},
        .counter = {(uint32_t)s0, (uint32_t)(s0 >> 32), (uint32_t)s1,
                    (uint32_t)(s1 >> 32)},
    };
    uint32_t mix[4];
    philox_block(&p, mix);
    base = (struct philox){.key = {mix[0], mix[1]},
                           .counter = {0, 0, mix[2], mix[3]}};
  } else {
    uint64_t seed = (uint64_t)ref_case_attr_int_or(c, "seed", 0);
    uint64_t seed2 = (uint64_t)ref_case_attr_int_or(c, "seed2", 0);
    base = (struct philox){
        .key = {(uint32_t)seed, (uint32_t)(seed >> 32)},
        .counter = {0, 0, (uint32_t)seed2, (uint32_t)(seed2 >> 32)},
    };
  }
  if (logits->rank != 2 || ns->rank != 0 || ns->v[0] < 0 ||
      logits->dims[1] <= 0) {
    snprintf(error, (size_t)error_len, "bad logits or num_samples");
    return -1;
  }
  const struct tfocl_attr *a = ref_case_attr(c, "output_dtype");
  TF_DataType out_type = a != NULL ? a->value.type : TF_INT64;
  int64_t rows = logits->dims[0], classes = logits->dims[1];
  int64_t samples = (int64_t)ns->v[0];
  ref_tensor_alloc(&out[0], out_type, (int64_t[]){rows, samples}, 2);
  double *cdf = malloc(sizeof(double) * (size_t)classes);
  if (cdf == NULL) {
    ref_tensor_finish(&out[0]);
    snprintf(error, (size_t)error_len, "out of host memory");
    return -1;
  }
  double lowest = logits->dtype == TF_HALF     ? -65504.0
                  : logits->dtype == TF_DOUBLE ? -DBL_MAX
                                               : -FLT_MAX;
  for (int64_t b = 0; b < rows; b++) {
    const double *row = logits->v + b * classes;
    double max = lowest, total = 0;
    for (int64_t j = 0; j < classes; j++)
      if (isfinite(row[j]) && row[j] > max)
        max = row[j];
    for (int64_t j = 0; j < classes; j++) {
      if (isfinite(row[j]))
        total += exp(row[j] - max);
      cdf[j] = total;
    }
    for (int64_t j = 0; j < samples; j++) {
      uint64_t d = (uint64_t)(b * samples + j);
      struct philox p = base;
      uint32_t w[4];
      philox_skip(&p, d / 2);
      philox_block(&p, w);
      uint32_t x0 = w[(d & 1) * 2], x1 = w[(d & 1) * 2 + 1];
      uint64_t bits = (uint64_t)1023 << 52 | (uint64_t)(x0 & 0xfffffu) << 32 |
                      x1;
      double u;
      memcpy(&u, &bits, sizeof(u));
      double to_find = (u - 1.0) * total;
      int64_t lo = 0, hi = classes;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > to_find)
          hi = mid;
        else
          lo = mid + 1;
      }
      out[0].v[b * samples + j] = (double)lo;
    }
  }
  free(cdf);
  return 1;
}

static void multinomial_cases(const struct ref_op *op, TF_DataType dtype,
                              struct ref_cases *out)
{
  bool stateless = strcmp(op->op, "StatelessMultinomial") == 0;
  static const struct {
    int64_t rows, classes, samples;
  } shapes[] = {{1, 5, 1000}, {3, 7, 33}, {4, 1, 5}, {2, 300, 257},
                {0, 4, 6},    {3, 4, 0}};
  struct ref_case *c;
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    c = ref_case_add(out, op->op, "%s [%lld,%lld] x%lld", op->op,
                     (long long)shapes[i].rows, (long long)shapes[i].classes,
                     (long long)shapes[i].samples);
    ref_case_input(c, dtype, (int64_t[]){shapes[i].rows, shapes[i].classes},
                   2, REF_ANY);
    ref_case_input_values(c, TF_INT32, NULL, 0,
                          (double[]){(double)shapes[i].samples});
    if (stateless)
      ref_case_input_values(c, i % 2 ? TF_INT32 : TF_INT64, (int64_t[]){2}, 1,
                            (double[]){(double)i + 1, -7});
    if (!stateless) {
      ref_case_attr_int(c, "seed", 7 + (int64_t)i);
      ref_case_attr_int(c, "seed2", 17);
    }
  }
  /* Non-finite logits count for nothing; a row of nothing finite. */
  static const double special[] = {-INFINITY, 0.5, NAN, 2, INFINITY, -1,
                                   -INFINITY, -INFINITY, NAN, -INFINITY};
  c = ref_case_add(out, op->op, "%s non-finite logits", op->op);
  ref_case_input_values(c, dtype, (int64_t[]){2, 5}, 2, special);
  ref_case_input_values(c, TF_INT32, NULL, 0, (double[]){50});
  if (stateless)
    ref_case_input_values(c, TF_INT64, (int64_t[]){2}, 1, (double[]){3, 4});
  else
    ref_case_attr_int(c, "seed", 5);

  /* Refusals, in TensorFlow's order. */
  static const char *const what[] = {"vector logits", "vector num_samples",
                                     "negative num_samples", "no classes",
                                     "seed of 3"};
  for (int e = 0; e < (stateless ? 5 : 4); e++) {
    c = ref_case_add(out, op->op, "%s %s", op->op, what[e]);
    if (e == 0)
      ref_case_input(c, dtype, (int64_t[]){4}, 1, REF_ANY);
    else
      ref_case_input(c, dtype, (int64_t[]){2, e == 3 ? 0 : 3}, 2, REF_ANY);
    if (e == 1)
      ref_case_input_values(c, TF_INT32, (int64_t[]){1}, 1, (double[]){2});
    else
      ref_case_input_values(c, TF_INT32, NULL, 0,
                            (double[]){e == 2 ? -1 : 2});
    if (stateless)
      ref_case_input_values(c, TF_INT64, (int64_t[]){e == 4 ? 3 : 2}, 1,
                            (double[]){1, 2, 3});
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

static int key_counter_compute(const struct ref_case *c,
                               struct ref_tensor *out, char *error,
                               int error_len)
{
  int n = 0;
  if (strcmp(c->op, "StatelessRandomGetAlg") != 0) {
    const struct ref_tensor *seed = &c->inputs[0];
    if (seed->rank != 1 || seed->dims[0] != 2) {
      snprintf(error, (size_t)error_len, "seed must have shape [2]");
      return -1;
    }
    /* GenerateKey: the seeds scrambled by one block under a fixed key. */
    uint64_t s0 = (uint64_t)(int64_t)seed->v[0];
    uint64_t s1 = (uint64_t)(int64_t)seed->v[1];
    struct philox p = {
        .key = {0x3ec8f720u, 0x02461e29u},
        .counter = {(uint32_t)s0, (uint32_t)(s0 >> 32), (uint32_t)s1,
                    (uint32_t)(s1 >> 32)},
    };
    uint32_t mix[4];
    philox_block(&p, mix);
    ref_tensor_alloc(&out[0], TF_UINT64, (int64_t[]){1}, 1);
    ref_tensor_alloc(&out[1], TF_UINT64, (int64_t[]){2}, 1);
    out[0].v[0] = (double)(mix[0] | (uint64_t)mix[1] << 32);
    out[1].v[0] = 0;
    out[1].v[1] = (double)(mix[2] | (uint64_t)mix[3] << 32);
    n = 2;
  }
  if (strcmp(c->op, "StatelessRandomGetKeyCounter") != 0) {
    ref_tensor_alloc(&out[n], TF_INT32, NULL, 0);
    out[n].v[0] = 1; /* RNG_ALG_PHILOX */
    n++;
  }
  return n;
}

/* ---- Cases ----------------------------------------------------------------- */

/* Keys and counters below 2^53 or with zero low bits, so that their float64
 * travel is exact; the third crosses the 2^32 and 2^64 carries of the
 * counter's low words as groups skip ahead. */
static const double keys[][3] = {
    /* key, counter[0], counter[1]: tests/tf/test_random_bits.py has the
     * same table. */
    {(double)0x123456789Au, 5.0, (double)0x4123456789ABu},
    {0.0, 0.0, 0.0},
    {9007199254740991.0 /* 2^53 - 1 */, 18446744073709549568.0 /* 2^64 - 2048 */,
     18446744073709549568.0},
};
#define NUM_KEYS ((int)(sizeof(keys) / sizeof(keys[0])))

static const int64_t shapes[][4] = {
    /* rank, dims... */
    {0}, {1, 0}, {1, 1}, {1, 7}, {2, 3, 5}, {3, 2, 3, 7}, {1, 1031}, {2, 4, 0},
};
#define NUM_SHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

static void shape_input(struct ref_case *c, const int64_t *shape,
                        TF_DataType type)
{
  int64_t rank = shape[0];
  double v[3];
  for (int d = 0; d < rank; d++)
    v[d] = (double)shape[d + 1];
  ref_case_input_values(c, type, &rank, 1, v);
}

/* Key, counter and alg of a stateless case. */
static void key_inputs(struct ref_case *c, int key, int64_t key_len,
                       int64_t counter_len, double alg)
{
  double counter[3] = {keys[key][1], keys[key][2], 0.0};
  ref_case_input_values(c, TF_UINT64, &key_len, 1, keys[key]);
  ref_case_input_values(c, TF_UINT64, &counter_len, 1, counter);
  ref_case_input_values(c, TF_INT32, NULL, 0, &alg);
}

static void stateless_cases(const struct ref_op *op, TF_DataType dtype,
                            struct ref_cases *out)
{
  bool is_int = strcmp(op->op, "StatelessRandomUniformIntV2") == 0;
  /* minval, maxval pairs: small, a range of one, the widest int32, and
   * for int64 a range past 2^32. */
  static const double bounds[][2] = {
      {-5, 17}, {3, 4}, {-2147483648.0, 2147483647.0}, {-4503599627370496.0,
                                                        4503599627370496.0}};
  int num_bounds = dtype == TF_INT64 ? 4 : 3;
  struct ref_case *c;
  for (int s = 0; s < NUM_SHAPES; s++) {
    for (int k = 0; k < NUM_KEYS; k++) {
      /* Every key on the odd size, the first key on the other shapes. */
      if (k > 0 && shapes[s][0] != 1)
        continue;
      for (int b = 0; b < (is_int ? num_bounds : 1); b++) {
        if (b > 0 && k > 0)
          continue;
        c = ref_case_add(out, op->op, "%s shape#%d key#%d bounds#%d", op->op,
                         s, k, b);
        shape_input(c, shapes[s], s == 4 ? TF_INT64 : TF_INT32);
        key_inputs(c, k, 1, 2, k == 2 ? 3 : 1); /* alg 3: auto select */
        if (is_int) {
          ref_case_input_values(c, dtype, NULL, 0, &bounds[b][0]);
          ref_case_input_values(c, dtype, NULL, 0, &bounds[b][1]);
        } else {
          ref_case_attr_type(c, "dtype", dtype);
        }
      }
    }
  }
  /* Failing: what GetKeyCounterAlgFromInputs, MakeShape and Fill reject. */
  static const struct {
    const char *label;
    int64_t key_len, counter_len;
    double alg;
    int64_t shape[4];
  } bad[] = {
      {"ThreeFry", 1, 2, 2, {1, 5}},
      {"unknown alg", 1, 2, 7, {1, 5}},
      {"key of 2", 2, 2, 1, {1, 5}},
      {"counter of 1", 1, 1, 1, {1, 5}},
      {"negative dim", 1, 2, 1, {2, 3, -1}},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    c = ref_case_add(out, op->op, "%s %s", op->op, bad[i].label);
    shape_input(c, bad[i].shape, TF_INT32);
    key_inputs(c, 0, bad[i].key_len, bad[i].counter_len, bad[i].alg);
    if (is_int) {
      ref_case_input_values(c, dtype, NULL, 0, &bounds[0][0]);
      ref_case_input_values(c, dtype, NULL, 0, &bounds[0][1]);
    } else {
      ref_case_attr_type(c, "dtype", dtype);
    }
    c->expect_code = TF_INVALID_ARGUMENT;
  }
  c = ref_case_add(out, op->op, "%s matrix shape", op->op);
  ref_case_input_values(c, TF_INT32, (int64_t[]){2, 2}, 2,
                        (double[]){1, 2, 3, 4});
  key_inputs(c, 0, 1, 2, 1);
  if (is_int) {
    ref_case_input_values(c, dtype, NULL, 0, &bounds[0][0]);
    ref_case_input_values(c, dtype, NULL, 0, &bounds[0][1]);
  } else {
    ref_case_attr_type(c, "dtype", dtype);
  }
  c->expect_code = TF_INVALID_ARGUMENT;
  if (is_int) {
    c = ref_case_add(out, op->op, "%s minval == maxval", op->op);
    shape_input(c, shapes[3], TF_INT32);
    key_inputs(c, 0, 1, 2, 1);
    ref_case_input_values(c, dtype, NULL, 0, &bounds[1][0]);
    ref_case_input_values(c, dtype, NULL, 0, &bounds[1][0]);
    c->expect_code = TF_INVALID_ARGUMENT;
    c = ref_case_add(out, op->op, "%s minval of [2]", op->op);
    shape_input(c, shapes[3], TF_INT32);
    key_inputs(c, 0, 1, 2, 1);
    ref_case_input_values(c, dtype, (int64_t[]){2}, 1, bounds[0]);
    ref_case_input_values(c, dtype, NULL, 0, &bounds[0][1]);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
}

static void stateful_cases(const struct ref_op *op, TF_DataType dtype,
                           struct ref_cases *out)
{
  static const int64_t seeds[][2] = {
      {7, 17}, {1, 0}, {0, 5}, {-3, 1099511627776}};
  struct ref_case *c;
  for (int s = 0; s < NUM_SHAPES; s++) {
    for (int k = 0; k < 4; k++) {
      if (k > 0 && shapes[s][0] != 1)
        continue;
      c = ref_case_add(out, op->op, "%s shape#%d seeds#%d", op->op, s, k);
      shape_input(c, shapes[s], s == 4 ? TF_INT64 : TF_INT32);
      ref_case_attr_int(c, "seed", seeds[k][0]);
      ref_case_attr_int(c, "seed2", seeds[k][1]);
      ref_case_attr_type(c, "dtype", dtype);
    }
  }
  c = ref_case_add(out, op->op, "%s scalar shape", op->op);
  ref_case_input_values(c, TF_INT32, NULL, 0, (double[]){6});
  ref_case_attr_int(c, "seed", 7);
  ref_case_attr_int(c, "seed2", 17);
  ref_case_attr_type(c, "dtype", dtype);
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s matrix shape", op->op);
  ref_case_input_values(c, TF_INT32, (int64_t[]){2, 2}, 2,
                        (double[]){1, 2, 3, 4});
  ref_case_attr_int(c, "seed", 7);
  ref_case_attr_int(c, "seed2", 17);
  ref_case_attr_type(c, "dtype", dtype);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* RandomUniformInt: stateful_cases' shapes and seeds with bounds of each
 * sign and width, and its refusals. */
static void uniform_int_cases(const struct ref_op *op, TF_DataType dtype,
                              struct ref_cases *out)
{
  static const double bounds[][2] = {
      {-5, 17}, {0, 1}, {-2147483648.0, 2147483647.0}, {1e12, 1e12 + 3}};
  struct ref_case *c;
  for (int s = 0; s < NUM_SHAPES; s++) {
    for (int b = 0; b < 4; b++) {
      if ((b == 3 && dtype == TF_INT32) || (b > 0 && shapes[s][0] != 1))
        continue;
      c = ref_case_add(out, op->op, "%s shape#%d bounds#%d", op->op, s, b);
      shape_input(c, shapes[s], s == 4 ? TF_INT64 : TF_INT32);
      ref_case_input_values(c, dtype, NULL, 0, &bounds[b][0]);
      ref_case_input_values(c, dtype, NULL, 0, &bounds[b][1]);
      ref_case_attr_int(c, "seed", b == 1 ? -3 : 7);
      ref_case_attr_int(c, "seed2", b == 1 ? 1099511627776 : 17);
    }
  }
  /* minval >= maxval (refused only for a non-empty output), and a vector
   * bound. */
  for (int e = 0; e < 2; e++) {
    c = ref_case_add(out, op->op, "%s minval = maxval%s", op->op,
                     e ? ", empty" : "");
    ref_case_input_values(c, TF_INT32, (int64_t[]){1}, 1,
                          (double[]){e ? 0 : 4});
    ref_case_input_values(c, dtype, NULL, 0, (double[]){3});
    ref_case_input_values(c, dtype, NULL, 0, (double[]){3});
    ref_case_attr_int(c, "seed", 7);
    c->expect_code = e ? TF_OK : TF_INVALID_ARGUMENT;
  }
  c = ref_case_add(out, op->op, "%s vector minval", op->op);
  ref_case_input_values(c, TF_INT32, (int64_t[]){1}, 1, (double[]){4});
  ref_case_input_values(c, dtype, (int64_t[]){1}, 1, (double[]){0});
  ref_case_input_values(c, dtype, NULL, 0, (double[]){3});
  ref_case_attr_int(c, "seed", 7);
  c->expect_code = TF_INVALID_ARGUMENT;
}

static void key_counter_cases(const struct ref_op *op, TF_DataType dtype,
                              struct ref_cases *out)
{
  (void)dtype;
  struct ref_case *c;
  if (strcmp(op->op, "StatelessRandomGetAlg") == 0) {
    ref_case_add(out, op->op, "%s", op->op);
    return;
  }
  static const double seeds[][2] = {
      {1, 2}, {0, 0}, {-1, 123456}, {1099511627779.0, -7}};
  for (int s = 0; s < 4; s++) {
    for (int t = 0; t < 2; t++) {
      if (t == 1 && s == 3) /* beyond int32 */
        continue;
      c = ref_case_add(out, op->op, "%s seed#%d %s", op->op, s,
                       t ? "int32" : "int64");
      ref_case_input_values(c, t ? TF_INT32 : TF_INT64, (int64_t[]){2}, 1,
                            seeds[s]);
    }
  }
  c = ref_case_add(out, op->op, "%s seed of 3", op->op);
  ref_case_input_values(c, TF_INT64, (int64_t[]){3}, 1, (double[]){1, 2, 3});
  c->expect_code = TF_INVALID_ARGUMENT;
}

const struct ref_op ref_ops_random[] = {
    {"StatelessRandomUniformV2", 0, 0, REF_ANY, stateless_cases,
     stateless_compute},
    {"StatelessRandomNormalV2", 1e-6, 1e-6, REF_ANY, stateless_cases,
     stateless_compute},
    {"StatelessTruncatedNormalV2", 1e-6, 1e-6, REF_ANY, stateless_cases,
     stateless_compute},
    {"StatelessRandomUniformIntV2", 0, 0, REF_ANY, stateless_cases,
     stateless_compute},
    {"RandomUniform", 0, 0, REF_ANY, stateful_cases, stateful_compute},
    {"RandomStandardNormal", 1e-6, 1e-6, REF_ANY, stateful_cases,
     stateful_compute},
    {"TruncatedNormal", 1e-6, 1e-6, REF_ANY, stateful_cases,
     stateful_compute},
    {"RandomUniformInt", 0, 0, REF_ANY, uniform_int_cases, stateful_compute},
    /* Class indices: exact where the device sums in double as the CPU
     * does; a float device may move a sample within float rounding of a
     * class boundary (none of these cases). */
    {"Multinomial", 0, 0, REF_ANY, multinomial_cases, multinomial_compute},
    {"StatelessMultinomial", 0, 0, REF_ANY, multinomial_cases,
     multinomial_compute},
    {"StatelessRandomGetKeyCounter", 0, 0, REF_ANY, key_counter_cases,
     key_counter_compute},
    {"StatelessRandomGetKeyCounterAlg", 0, 0, REF_ANY, key_counter_cases,
     key_counter_compute},
    {"StatelessRandomGetAlg", 0, 0, REF_ANY, key_counter_cases,
     key_counter_compute},
    {.op = NULL},
};
