/* Random-number ops that produce exactly TensorFlow's numbers for the same
 * Philox key and counter (Keras initialisers and Dropout draw from them).
 *
 * Stateless V2 ops take the key and counter as uint64 tensors in device
 * memory, as TensorFlow's GPU kernels do, so the device reads them itself;
 * StatelessRandomGetKeyCounter derives them from a seed on the host (its
 * outputs live in host memory there too). The stateful RandomUniform,
 * RandomStandardNormal and TruncatedNormal keep TensorFlow's
 * GuardedPhiloxRandom in the kernel object: seeded from (seed, seed2), each
 * call takes the current state and skips it by 256 blocks per output
 * element under a lock. The distributions themselves are in random.cl.
 *
 * Multinomial and StatelessMultinomial draw as TensorFlow's CPU kernel
 * does (below), so that a seed gives the CPU's samples.
 *
 * StatelessRandomUniformIntV2 and RandomUniformInt on int32 are computed
 * on the host with every argument in host memory, the plugin's int32
 * convention. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_random[];

/* Per storage type; the float and half programs again with -DRANDOM_FP64
 * (random.cl), used on CPU devices with cl_khr_fp64. */
OCL_PROGRAM_TABLE
static const struct ocl_program programs[OCL_NUM_STORAGES] =
    OCL_TYPED_PROGRAMS("random", ocl_cl_source_random);
OCL_PROGRAM_TABLE
static const struct ocl_program fp64_programs[2] = {
    {"random_float_fp64", ocl_cl_source_random,
     "-DT=float -DT_IS_FLOAT -DRANDOM_FP64"},
    {"random_half_fp64", ocl_cl_source_random,
     "-DT=half -DT_IS_HALF -DRANDOM_FP64"},
};

/* rng_alg.h */
enum { RNG_ALG_PHILOX = 1, RNG_ALG_THREEFRY = 2, RNG_ALG_AUTO_SELECT = 3 };

/* FillPhiloxRandomTask: a truncated normal reserves 256 samples per output
 * element; a stateful op reserves as many 128-bit blocks per element. */
#define RESERVED_SAMPLES_PER_OUTPUT 256

enum random_kind {
  UNIFORM,
  NORMAL,
  TRUNCATED,
  UNIFORM_INT,
  GET_KEY_COUNTER,
  GET_KEY_COUNTER_ALG,
  GET_ALG
};

struct random_op {
  const char *op;
  enum random_kind kind;
  const char *kernel; /* prefix in random.cl */
  bool stateful;
};

static const struct random_op random_ops[] = {
    {"StatelessRandomUniformV2", UNIFORM, "uniform", false},
    {"StatelessRandomNormalV2", NORMAL, "normal", false},
    {"StatelessTruncatedNormalV2", TRUNCATED, "truncated", false},
    {"StatelessRandomUniformIntV2", UNIFORM_INT, "uniform_int", false},
    {"RandomUniform", UNIFORM, "uniform", true},
    {"RandomStandardNormal", NORMAL, "normal", true},
    {"TruncatedNormal", TRUNCATED, "truncated", true},
    {"RandomUniformInt", UNIFORM_INT, "uniform_int", true},
    {"StatelessRandomGetKeyCounter", GET_KEY_COUNTER, NULL, false},
    {"StatelessRandomGetKeyCounterAlg", GET_KEY_COUNTER_ALG, NULL, false},
    {"StatelessRandomGetAlg", GET_ALG, NULL, false},
};

/* Philox4x32 state; random.cl's philox_t has the same layout. */
struct philox_state {
  cl_uint key[2];
  cl_uint counter[4];
};

struct random_kernel {
  const struct random_op *op;
  TF_DataType dtype;
  /* Stateful ops: the generator, advanced by every call. */
  pthread_mutex_t lock;
  struct philox_state state;
  /* The distribution's kernel, plain and with fp64 Box-Muller steps. */
  struct ocl_kernel kernel, kernel_fp64;
};

/* ---- Philox on the host ---------------------------------------------------- */

static void philox_block(const cl_uint counter[4], const cl_uint key[2],
                         cl_uint out[4])
{
  uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = (uint32_t)p1;
    c[2] = n2;
    c[3] = (uint32_t)p0;
  }
  memcpy(out, c, sizeof(c));
}

/* PhiloxRandom::Skip, with TensorFlow's carry propagation. */
static void philox_skip(cl_uint c[4], uint64_t count)
{
  uint32_t lo = (uint32_t)count, hi = (uint32_t)(count >> 32);
  c[0] += lo;
  if (c[0] < lo)
    hi++;
  c[1] += hi;
  if (c[1] < hi && ++c[2] == 0)
    c[3]++;
}

/* ---- Argument checks, in TensorFlow's order and words -------------------- */

/* A host tensor's dims (rank <= OCL_MAX_RANK, as TensorFlow's). */
static int dims_of(const TF_Tensor *t, int64_t *dims)
{
  int rank = ocl_tf.NumDims(t);
  for (int i = 0; i < rank; i++)
    dims[i] = ocl_tf.Dim(t, i);
  return rank;
}


/* tensor::MakeShape / AllocateOutputWithShape: the output shape from a
 * host int32 or int64 vector. */
static int shape_from_tensor(const TF_Tensor *shape, int64_t *dims,
                             TF_Status *status)
{
  int64_t sdims[OCL_MAX_RANK];
  int srank = dims_of(shape, sdims);
  if (srank < 0)
    return -1;
  if (srank != 1) {
    char text[160];
    ocl_shape_format(sdims, srank, text, sizeof(text));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "shape must be a vector of {int32,int64}, got shape %s",
                   text);
    return -1;
  }
  int64_t rank = ocl_tf.TensorElementCount(shape);
  if (rank > OCL_MAX_RANK) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "random outputs of more than %d dimensions", OCL_MAX_RANK);
    return -1;
  }
  for (int64_t d = 0; d < rank; d++) {
    int64_t v = ocl_host_int(shape, d);
    if (v < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Dimension %lld must be >= 0", (long long)v);
      return -1;
    }
    dims[d] = v;
  }
  return (int)rank;
}

/* GetKeyCounterAlgFromInputs: alg (a host int32 scalar) and the shapes of
 * key and counter. */
static bool key_counter_alg(TF_Tensor *const *in, int *alg, TF_Status *status)
{
  int64_t dims[OCL_MAX_RANK];
  char text[160];
  int rank = dims_of(in[3], dims);
  if (rank < 0)
    return false;
  if (rank != 0) {
    ocl_shape_format(dims, rank, text, sizeof(text));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "input 3 (0-based) must have shape [], not %s", text);
    return false;
  }
  *alg = *(const int32_t *)ocl_host_data(in[3]);
  if (*alg == RNG_ALG_AUTO_SELECT)
    *alg = RNG_ALG_PHILOX;
  rank = dims_of(in[1], dims);
  if (rank < 0)
    return false;
  if (!(rank == 1 && dims[0] == 1)) {
    ocl_shape_format(dims, rank, text, sizeof(text));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "key must have shape [1], not %s. (Note that batched keys "
                   "are not supported yet.)",
                   text);
    return false;
  }
  /* TensorFlow passes the algorithm id itself as the minimum counter
   * length (so Philox accepts a counter of 1 and reads past it); Philox
   * needs 2 here. */
  int64_t counter_size = *alg == RNG_ALG_PHILOX ? 2 : *alg;
  rank = dims_of(in[2], dims);
  if (rank < 0)
    return false;
  if (!(rank == 1 && dims[0] >= counter_size)) {
    ocl_shape_format(dims, rank, text, sizeof(text));
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "counter must be a vector with length at least %lld; got "
                   "shape: %s. (Note that batched counters are not supported "
                   "yet.)",
                   (long long)counter_size, text);
    return false;
  }
  return true;
}

static bool scalar_bound(const TF_Tensor *t, const char *name,
                         TF_Status *status)
{
  int64_t dims[OCL_MAX_RANK];
  int rank = dims_of(t, dims);
  if (rank < 0)
    return false;
  if (rank != 0) {
    char text[160];
    ocl_shape_format(dims, rank, text, sizeof(text));
    ocl_set_status(status, TF_INVALID_ARGUMENT, "%s must be 0-D, got shape %s",
                   name, text);
    return false;
  }
  return true;
}

/* ---- Launching ------------------------------------------------------------- */

/* StatelessRandomUniformIntV2 on int32, on the host: UniformDistribution
 * <int32> takes one sample per value. */
static void uniform_int32_host(const uint64_t *key, const uint64_t *counter,
                               int32_t lo, uint32_t range, int32_t *out,
                               int64_t n)
{
  cl_uint k[2] = {(cl_uint)key[0], (cl_uint)(key[0] >> 32)};
  cl_uint base[4] = {(cl_uint)counter[0], (cl_uint)(counter[0] >> 32),
                     (cl_uint)counter[1], (cl_uint)(counter[1] >> 32)};
  for (int64_t g = 0; g * 4 < n; g++) {
    cl_uint c[4], s[4];
    memcpy(c, base, sizeof(c));
    philox_skip(c, (uint64_t)g);
    philox_block(c, k, s);
    for (int j = 0; j < 4 && g * 4 + j < n; j++)
      out[g * 4 + j] = (int32_t)((uint32_t)lo + s[j] % range);
  }
}

/* Fill's last check, once the output is known to be non-empty. */
static bool check_alg(int alg, TF_Status *status)
{
  if (alg == RNG_ALG_PHILOX)
    return true;
  ocl_set_status(status, TF_INVALID_ARGUMENT, "Unsupported algorithm id: %d",
                 alg);
  return false;
}

static bool run_uniform_int(struct ocl_op *op, struct random_kernel *k,
                            TF_Tensor *const *in, TF_Tensor *out, int64_t n,
                            int alg)
{
  TF_Status *status = op->status;
  if (!scalar_bound(in[4], "minval", status) ||
      !scalar_bound(in[5], "maxval", status))
    return false;
  int64_t lo, hi;
  if (k->dtype == TF_INT32) {
    lo = *(const int32_t *)ocl_host_data(in[4]);
    hi = *(const int32_t *)ocl_host_data(in[5]);
  } else {
    lo = *(const int64_t *)ocl_host_data(in[4]);
    hi = *(const int64_t *)ocl_host_data(in[5]);
  }
  if (!(lo < hi)) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Need minval < maxval, got %lld >= %lld", (long long)lo,
                   (long long)hi);
    return false;
  }
  if (!check_alg(alg, status))
    return false;
  if (k->dtype == TF_INT32) {
    uniform_int32_host(ocl_host_data(in[1]), ocl_host_data(in[2]),
                       (int32_t)lo, (uint32_t)hi - (uint32_t)lo,
                       ocl_host_data(out), n);
    return true;
  }
  cl_ulong range = (cl_ulong)hi - (cl_ulong)lo;
  const struct ocl_arg argv[] = {
      OCL_TENSOR(out),  OCL_LONG(n),
      OCL_TENSOR(in[1]), OCL_TENSOR(in[2]),
      OCL_LONG(lo),     OCL_BYTES(&range, sizeof(range)),
  };
  return ocl_launch_1d(op, &k->kernel, (size_t)((n + 1) / 2), argv, 6);
}

/* One work item per group of 4 elements (one Philox block), or a run of
 * groups on a CPU device (random.cl's fill_*). */
static bool run_real(struct ocl_op *op, struct random_kernel *k,
                     TF_Tensor *const *in, TF_Tensor *out, int64_t n,
                     const struct philox_state *state)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  struct ocl_kernel *kernel =
      info->cpu_shape && info->has_fp64 ? &k->kernel_fp64 : &k->kernel;
  size_t groups = (size_t)((n + 3) / 4);
  if (state != NULL) {
    const struct ocl_arg argv[] = {
        OCL_TENSOR(out), OCL_LONG(n), OCL_BYTES(state, sizeof(*state)),
    };
    return ocl_launch_flat(op, kernel, groups, argv, 3);
  }
  const struct ocl_arg argv[] = {
      OCL_TENSOR(out), OCL_LONG(n), OCL_TENSOR(in[1]), OCL_TENSOR(in[2]),
  };
  return ocl_launch_flat(op, kernel, groups, argv, 4);
}

/* RandomUniformInt: minval and maxval checked, the output allocated, then
 * (for a non-empty output only) minval < maxval and the generator's 256
 * blocks per element reserved, in RandomUniformIntOp's order. */
static void run_stateful_int(struct ocl_op *op, struct random_kernel *k)
{
  TF_Tensor *in[3] = {NULL};
  int64_t dims[OCL_MAX_RANK];
  for (int i = 0; i < 3; i++)
    if ((in[i] = ocl_op_input(op, i)) == NULL)
      return;
  if (!scalar_bound(in[1], "minval", op->status) ||
      !scalar_bound(in[2], "maxval", op->status))
    return;
  int rank = shape_from_tensor(in[0], dims, op->status);
  TF_Tensor *out = rank >= 0 ? ocl_op_output(op, 0, k->dtype, dims, rank)
                             : NULL;
  if (out == NULL)
    return;
  int64_t n = ocl_tf.TensorElementCount(out);
  if (n == 0)
    return;
  int64_t lo, hi;
  if (k->dtype == TF_INT32) {
    lo = *(const int32_t *)ocl_host_data(in[1]);
    hi = *(const int32_t *)ocl_host_data(in[2]);
  } else {
    lo = *(const int64_t *)ocl_host_data(in[1]);
    hi = *(const int64_t *)ocl_host_data(in[2]);
  }
  if (!(lo < hi))
    return (void)ocl_op_fail(op, TF_INVALID_ARGUMENT,
                             "Need minval < maxval, got %lld >= %lld",
                             (long long)lo, (long long)hi);
  struct philox_state st;
  pthread_mutex_lock(&k->lock);
  st = k->state;
  philox_skip(k->state.counter, (uint64_t)n * RESERVED_SAMPLES_PER_OUTPUT);
  pthread_mutex_unlock(&k->lock);
  if (k->dtype == TF_INT32) {
    const uint64_t key = (uint64_t)st.key[0] | (uint64_t)st.key[1] << 32;
    const uint64_t counter[2] = {
        (uint64_t)st.counter[0] | (uint64_t)st.counter[1] << 32,
        (uint64_t)st.counter[2] | (uint64_t)st.counter[3] << 32};
    uniform_int32_host(&key, counter, (int32_t)lo,
                       (uint32_t)hi - (uint32_t)lo, ocl_host_data(out), n);
    return;
  }
  cl_ulong range = (cl_ulong)hi - (cl_ulong)lo;
  const struct ocl_arg argv[] = {
      OCL_TENSOR(out), OCL_LONG(n), OCL_BYTES(&st, sizeof(st)),
      OCL_LONG(lo),    OCL_BYTES(&range, sizeof(range)),
  };
  ocl_launch_1d(op, &k->kernel, (size_t)((n + 1) / 2), argv, 5);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

static void *random_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct random_op *op = &random_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct random_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  pthread_mutex_init(&k->lock, NULL);
  if (op->kind <= UNIFORM_INT) {
    /* RandomUniformInt names its type Tout. */
    ocl_tf.OpKernelConstruction_GetAttrType(
        ctx, op->stateful && op->kind == UNIFORM_INT ? "Tout" : "dtype",
        &k->dtype, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  if (op->stateful) {
    int64_t seed = 0, seed2 = 0;
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "seed", &seed, status);
    if (ocl_tf.GetCode(status) == TF_OK)
      ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "seed2", &seed2, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
    /* GuardedPhiloxRandom::Init: no seed at all means random seeds,
     * which determinism forbids. */
    if (seed == 0 && seed2 == 0 && ocl_tf_determinism_required()) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "When determinism is enabled, random ops must have a "
                     "seed specified.");
      goto fail;
    }
    if (seed == 0 && seed2 == 0 &&
        (getrandom(&seed, sizeof(seed), 0) != sizeof(seed) ||
         getrandom(&seed2, sizeof(seed2), 0) != sizeof(seed2))) {
      ocl_set_status(status, TF_INTERNAL, "getrandom failed");
      goto fail;
    }
    /* PhiloxRandom(seed_lo, seed_hi). */
    k->state.key[0] = (cl_uint)(uint64_t)seed;
    k->state.key[1] = (cl_uint)((uint64_t)seed >> 32);
    k->state.counter[2] = (cl_uint)(uint64_t)seed2;
    k->state.counter[3] = (cl_uint)((uint64_t)seed2 >> 32);
  }
  if (op->kernel != NULL) {
    enum ocl_storage st = ocl_storage_of(k->dtype);
    if (st != OCL_STORAGE_HOST_INT32) {
      ocl_kernel_initf(&k->kernel, &programs[st], "%s_%s", op->kernel,
                       op->stateful ? "st" : "kc");
      if (st == OCL_STORAGE_FLOAT || st == OCL_STORAGE_HALF)
        ocl_kernel_initf(&k->kernel_fp64, &fp64_programs[st], "%s_%s",
                         op->kernel, op->stateful ? "st" : "kc");
    }
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  if (k != NULL)
    pthread_mutex_destroy(&k->lock);
  return ocl_create_failed(ctx, status, k);
}

/* GenerateKey of stateless_random_ops.cc: the seed pair scrambled by one
 * Philox block under a fixed key. */
static void generate_key(const TF_Tensor *seed, uint64_t *key,
                         uint64_t counter[2])
{
  uint64_t s0, s1;
  if (ocl_tf.TensorType(seed) == TF_INT32) {
    const int32_t *v = ocl_host_data(seed);
    s0 = (uint64_t)(int64_t)v[0];
    s1 = (uint64_t)(int64_t)v[1];
  } else {
    const int64_t *v = ocl_host_data(seed);
    s0 = (uint64_t)v[0];
    s1 = (uint64_t)v[1];
  }
  const cl_uint fixed[2] = {0x3ec8f720u, 0x02461e29u};
  const cl_uint c[4] = {(cl_uint)s0, (cl_uint)(s0 >> 32), (cl_uint)s1,
                        (cl_uint)(s1 >> 32)};
  cl_uint mix[4];
  philox_block(c, fixed, mix);
  *key = (uint64_t)mix[0] | (uint64_t)mix[1] << 32;
  counter[0] = 0;
  counter[1] = (uint64_t)mix[2] | (uint64_t)mix[3] << 32;
}

static void get_key_counter(const struct random_kernel *k, struct ocl_op *op)
{
  int64_t dims[OCL_MAX_RANK];
  if (k->op->kind != GET_ALG) {
    TF_Tensor *seed = ocl_op_input(op, 0);
    int rank = seed ? ocl_op_dims(op, seed, dims) : -1;
    if (rank < 0)
      return;
    if (!(rank == 1 && dims[0] == 2)) {
      char text[160];
      ocl_shape_format(dims, rank, text, sizeof(text));
      ocl_op_fail(op, TF_INVALID_ARGUMENT, "seed must have shape [2], not %s",
                  text);
      return;
    }
    int64_t key_dims[1] = {1}, counter_dims[1] = {2};
    TF_Tensor *key = ocl_op_output(op, 0, TF_UINT64, key_dims, 1);
    TF_Tensor *counter =
        key ? ocl_op_output(op, 1, TF_UINT64, counter_dims, 1) : NULL;
    if (counter == NULL)
      return;
    generate_key(seed, ocl_host_data(key), ocl_host_data(counter));
  }
  if (k->op->kind != GET_KEY_COUNTER) {
    int index = k->op->kind == GET_ALG ? 0 : 2;
    TF_Tensor *alg = ocl_op_output(op, index, TF_INT32, NULL, 0);
    if (alg != NULL)
      *(int32_t *)ocl_host_data(alg) = RNG_ALG_PHILOX;
  }
}

static void random_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct random_kernel *k = kernel;
  struct ocl_op op;
  TF_Tensor *in[6] = {NULL};
  int64_t dims[OCL_MAX_RANK];
  int alg = RNG_ALG_PHILOX;

  ocl_op_begin(&op, ctx);
  if (k->op->kind >= GET_KEY_COUNTER) {
    get_key_counter(k, &op);
    goto done;
  }
  if (k->op->stateful && k->op->kind == UNIFORM_INT) {
    run_stateful_int(&op, k);
    goto done;
  }
  int num_inputs = k->op->stateful ? 1 : k->op->kind == UNIFORM_INT ? 6 : 4;
  for (int i = 0; i < num_inputs; i++)
    if ((in[i] = ocl_op_input(&op, i)) == NULL)
      goto done;
  if (!k->op->stateful && !key_counter_alg(in, &alg, op.status))
    goto done;
  int rank = shape_from_tensor(in[0], dims, op.status);
  TF_Tensor *out = rank >= 0 ? ocl_op_output(&op, 0, k->dtype, dims, rank)
                             : NULL;
  if (out == NULL)
    goto done;
  int64_t n = ocl_tf.TensorElementCount(out);

  if (k->op->stateful) {
    /* ReserveRandomOutputs: this call's generator, and the state skipped
     * past every block it may use (even for an empty output). */
    struct philox_state local;
    pthread_mutex_lock(&k->lock);
    local = k->state;
    philox_skip(k->state.counter, (uint64_t)n * RESERVED_SAMPLES_PER_OUTPUT);
    pthread_mutex_unlock(&k->lock);
    if (n > 0)
      run_real(&op, k, in, out, n, &local);
    goto done;
  }
  if (n == 0)
    goto done;
  if (k->op->kind == UNIFORM_INT)
    run_uniform_int(&op, k, in, out, n, alg);
  else if (check_alg(alg, op.status))
    run_real(&op, k, in, out, n, NULL);
done:
  ocl_op_end(&op);
}

static void random_delete(void *kernel)
{
  struct random_kernel *k = kernel;
  if (k == NULL)
    return;
  pthread_mutex_destroy(&k->lock);
  free(k);
}

/* ---- Multinomial and StatelessMultinomial -------------------------------- */

/* TensorFlow's CPU algorithm (random.cl), not its GPU one (Gumbel-max
 * noise): for the same seed the CPU's numbers, as the stateless ops here
 * give, where the CPU kernel runs as one shard (its answer then depends on
 * nothing else; a larger batch split over threads reads the stream from
 * per-shard offsets). The running sums are double on CPU devices with
 * cl_khr_fp64 (TensorFlow's arithmetic) and float elsewhere. */
enum { ML_FLOAT, ML_HALF, ML_DOUBLE, NUM_ML };
OCL_PROGRAM_TABLE
static const struct ocl_program multinomial_programs[NUM_ML][2] = {
    [ML_FLOAT] = {{"multinomial_float", ocl_cl_source_random,
                   "-DMULTINOMIAL -DL_T=float"},
                  {"multinomial_float_fp64", ocl_cl_source_random,
                   "-DMULTINOMIAL -DL_T=float -DRANDOM_FP64"}},
    [ML_HALF] = {{"multinomial_half", ocl_cl_source_random,
                  "-DMULTINOMIAL -DL_T=half -DL_IS_HALF"},
                 {"multinomial_half_fp64", ocl_cl_source_random,
                  "-DMULTINOMIAL -DL_T=half -DL_IS_HALF -DRANDOM_FP64"}},
    /* float64 logits take double throughout (the device needs fp64). */
    [ML_DOUBLE] = {{"multinomial_double", ocl_cl_source_random,
                    "-DMULTINOMIAL -DL_T=double -DL_IS_DOUBLE -DRANDOM_FP64"},
                   {"multinomial_double_fp64", ocl_cl_source_random,
                    "-DMULTINOMIAL -DL_T=double -DL_IS_DOUBLE -DRANDOM_FP64"}},
};

struct multinomial_kernel {
  bool stateless;
  TF_DataType dtype, out_type;
  pthread_mutex_t lock;
  struct philox_state state; /* Multinomial's generator */
  /* [float sums, double sums] */
  struct ocl_kernel cdf[2], sample[2];
};

static void *multinomial_create_common(TF_OpKernelConstruction *ctx,
                                       bool stateless)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct multinomial_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  pthread_mutex_init(&k->lock, NULL);
  k->stateless = stateless;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) == TF_OK)
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "output_dtype", &k->out_type,
                                            status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  if (!stateless) {
    int64_t seed = 0, seed2 = 0;
    ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "seed", &seed, status);
    if (ocl_tf.GetCode(status) == TF_OK)
      ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "seed2", &seed2, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
    if (seed == 0 && seed2 == 0 && ocl_tf_determinism_required()) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "When determinism is enabled, random ops must have a "
                     "seed specified.");
      goto fail;
    }
    if (seed == 0 && seed2 == 0 &&
        (getrandom(&seed, sizeof(seed), 0) != sizeof(seed) ||
         getrandom(&seed2, sizeof(seed2), 0) != sizeof(seed2))) {
      ocl_set_status(status, TF_INTERNAL, "getrandom failed");
      goto fail;
    }
    k->state.key[0] = (cl_uint)(uint64_t)seed;
    k->state.key[1] = (cl_uint)((uint64_t)seed >> 32);
    k->state.counter[2] = (cl_uint)(uint64_t)seed2;
    k->state.counter[3] = (cl_uint)((uint64_t)seed2 >> 32);
  }
  int p = k->dtype == TF_HALF ? ML_HALF : k->dtype == TF_DOUBLE ? ML_DOUBLE
                                                                : ML_FLOAT;
  for (int w = 0; w < 2; w++) {
    ocl_kernel_init(&k->cdf[w], &multinomial_programs[p][w],
                    "multinomial_cdf");
    ocl_kernel_init(&k->sample[w], &multinomial_programs[p][w],
                    k->out_type == TF_INT64 ? "multinomial_sample_long"
                                            : "multinomial_sample_int");
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  pthread_mutex_destroy(&k->lock);
  return ocl_create_failed(ctx, status, k);
}

static void *multinomial_create(TF_OpKernelConstruction *ctx)
{
  return multinomial_create_common(ctx, false);
}
static void *stateless_multinomial_create(TF_OpKernelConstruction *ctx)
{
  return multinomial_create_common(ctx, true);
}

static void multinomial_delete(void *kernel)
{
  struct multinomial_kernel *k = kernel;
  if (k == NULL)
    return;
  pthread_mutex_destroy(&k->lock);
  free(k);
}

static bool shape_fails(struct ocl_op *op, const TF_Tensor *t,
                        const char *what)
{
  int64_t dims[OCL_MAX_RANK];
  char text[160];
  int rank = ocl_op_dims(op, t, dims);
  if (rank < 0)
    return true;
  ocl_shape_format(dims, rank, text, sizeof(text));
  ocl_op_fail(op, TF_INVALID_ARGUMENT, "%s, got shape %s", what, text);
  return true;
}

static void multinomial_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct multinomial_kernel *k = kernel;
  struct ocl_op op;
  TF_Tensor *in[3] = {NULL};
  int64_t dims[OCL_MAX_RANK];
  struct philox_state st = {{0, 0}, {0, 0, 0, 0}};

  ocl_op_begin(&op, ctx);
  for (int i = 0; i < (k->stateless ? 3 : 2); i++)
    if ((in[i] = ocl_op_input(&op, i)) == NULL)
      goto out;
  if (k->stateless) {
    int rank = ocl_op_dims(&op, in[2], dims);
    if (rank < 0)
      goto out;
    if (!(rank == 1 && dims[0] == 2)) {
      char text[160];
      ocl_shape_format(dims, rank, text, sizeof(text));
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "seed must have shape [2], not %s",
                  text);
      goto out;
    }
    /* GenerateKey, and a fresh generator at (counter, key). */
    uint64_t key, counter[2];
    generate_key(in[2], &key, counter);
    st.key[0] = (cl_uint)key;
    st.key[1] = (cl_uint)(key >> 32);
    st.counter[0] = (cl_uint)counter[0];
    st.counter[1] = (cl_uint)(counter[0] >> 32);
    st.counter[2] = (cl_uint)counter[1];
    st.counter[3] = (cl_uint)(counter[1] >> 32);
  }
  if (ocl_tf.NumDims(in[0]) != 2) {
    shape_fails(&op, in[0], "logits should be a matrix");
    goto out;
  }
  if (ocl_tf.NumDims(in[1]) != 0) {
    shape_fails(&op, in[1], "num_samples should be a scalar");
    goto out;
  }
  int32_t samples = *(const int32_t *)ocl_host_data(in[1]);
  if (samples < 0) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "num_samples should be non-negative, got %d", samples);
    goto out;
  }
  if (ocl_op_dims(&op, in[0], dims) < 0)
    goto out;
  if (dims[0] > INT32_MAX) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "batch_size cannot exceed max int");
    goto out;
  }
  if (dims[1] > INT32_MAX) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "num_classes cannot exceed max int");
    goto out;
  }
  if (dims[1] <= 0) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "num_classes should be positive, got %d", (int)dims[1]);
    goto out;
  }
  int64_t out_dims[2] = {dims[0], samples};
  TF_Tensor *y = ocl_op_output(&op, 0, k->out_type, out_dims, 2);
  int64_t n = dims[0] * (int64_t)samples;
  if (y == NULL || n == 0)
    goto out;
  if (!k->stateless) {
    /* ReserveRandomOutputs with the CPU kernel's count: two words per
     * sample, rounded up to 4 samples. */
    uint64_t ceil4 = ((uint64_t)samples + 3) / 4 * 4 * 2;
    pthread_mutex_lock(&k->lock);
    st = k->state;
    philox_skip(k->state.counter, (uint64_t)dims[0] * ceil4 *
                                      RESERVED_SAMPLES_PER_OUTPUT);
    pthread_mutex_unlock(&k->lock);
  }
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto out;
  if (k->dtype == TF_DOUBLE && !info->has_fp64) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "Multinomial of float64 logits needs an OpenCL device with "
                "cl_khr_fp64; OpenCL device %d has none",
                info->ordinal);
    goto out;
  }
  int wide = k->dtype == TF_DOUBLE || (info->cpu_shape && info->has_fp64);
  TF_Tensor *cdf = ocl_op_temp(&op, wide ? TF_DOUBLE : TF_FLOAT,
                               dims[0] * dims[1]);
  TF_Tensor *totals =
      cdf != NULL ? ocl_op_temp(&op, wide ? TF_DOUBLE : TF_FLOAT, dims[0])
                  : NULL;
  if (totals == NULL)
    goto out;
  const struct ocl_arg cdf_args[] = {OCL_TENSOR(in[0]), OCL_TENSOR(cdf),
                                     OCL_TENSOR(totals), OCL_INT(dims[0]),
                                     OCL_INT(dims[1])};
  const struct ocl_arg sample_args[] = {
      OCL_TENSOR(cdf), OCL_TENSOR(totals),  OCL_TENSOR(y),
      OCL_LONG(n),     OCL_INT(samples),    OCL_INT(dims[1]),
      OCL_BYTES(&st, sizeof(st))};
  if (ocl_launch_rows(&op, &k->cdf[wide], (size_t)dims[0], cdf_args, 5))
    ocl_launch_1d(&op, &k->sample[wide], (size_t)n, sample_args, 7);
out:
  ocl_op_end(&op);
}

#define NUM_RANDOM_OPS ((int)(sizeof(random_ops) / sizeof(random_ops[0])))
_Static_assert(NUM_RANDOM_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per random op");
OCL_FAMILY_CREATES(random, random_create);

void ocl_register_random_kernels(void)
{
  static const char *const stateless_args[] = {"shape", "alg", NULL};
  static const char *const int_args[] = {"shape", "alg", "minval", "maxval",
                                         NULL};
  static const char *const int32_args[] = {
      "shape", "key", "counter", "alg", "minval", "maxval", "output", NULL};
  static const char *const stateful_args[] = {"shape", NULL};
  static const char *const stateful_int_args[] = {"shape", "minval", "maxval",
                                                  NULL};
  static const char *const stateful_int32_args[] = {"shape", "minval",
                                                    "maxval", "output", NULL};
  static const char *const seed_args[] = {"seed", "key", "counter", NULL};
  static const char *const seed_alg_args[] = {"seed", "key", "counter", "alg",
                                              NULL};
  static const char *const alg_args[] = {"alg", NULL};
  static const TF_DataType real_types[] = {TF_FLOAT, TF_HALF};
  /* Multinomial as TensorFlow's GPU registers it: half, float and double
   * logits, num_samples (and the seed) in host memory. */
  static const char *const multinomial_args[] = {"num_samples", NULL};
  static const char *const stateless_multinomial_args[] = {"num_samples",
                                                           "seed", NULL};
  static const TF_DataType logit_types[] = {TF_FLOAT, TF_HALF, TF_DOUBLE};
  for (size_t t = 0; t < sizeof(logit_types) / sizeof(logit_types[0]); t++)
    for (int w = 0; w < 2; w++) {
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = "Multinomial",
          .create = multinomial_create,
          .compute = multinomial_compute,
          .destroy = multinomial_delete,
          .type_attrs = {"T", "output_dtype"},
          .types = {logit_types[t], w ? TF_INT64 : TF_INT32},
          .host_args = multinomial_args,
      });
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = "StatelessMultinomial",
          .create = stateless_multinomial_create,
          .compute = multinomial_compute,
          .destroy = multinomial_delete,
          .type_attrs = {"T", "output_dtype"},
          .types = {logit_types[t], w ? TF_INT64 : TF_INT32},
          .host_args = stateless_multinomial_args,
      });
    }
  static const TF_DataType int_types[] = {TF_INT32, TF_INT64};

  for (int i = 0; i < NUM_RANDOM_OPS; i++) {
    const struct random_op *op = &random_ops[i];
    struct ocl_kernel_spec spec = {
        .op = op->op,
        .create = random_creates[i],
        .compute = random_compute,
        .destroy = random_delete,
    };
    switch (op->kind) {
    case GET_KEY_COUNTER:
    case GET_KEY_COUNTER_ALG:
    case GET_ALG:
      spec.host_args = op->kind == GET_ALG               ? alg_args
                       : op->kind == GET_KEY_COUNTER_ALG ? seed_alg_args
                                                         : seed_args;
      ocl_register_kernel(&spec);
      break;
    case UNIFORM_INT:
      for (size_t t = 0; t < sizeof(int_types) / sizeof(int_types[0]); t++) {
        bool int32 = int_types[t] == TF_INT32;
        spec.type_attrs[0] = op->stateful ? "Tout" : "dtype";
        spec.types[0] = int_types[t];
        if (op->stateful)
          spec.host_args = int32 ? stateful_int32_args : stateful_int_args;
        else
          spec.host_args = int32 ? int32_args : int_args;
        ocl_register_kernel(&spec);
      }
      break;
    default:
      for (size_t t = 0; t < sizeof(real_types) / sizeof(real_types[0]); t++) {
        spec.type_attrs[0] = "dtype";
        spec.types[0] = real_types[t];
        spec.host_args = op->stateful ? stateful_args : stateless_args;
        ocl_register_kernel(&spec);
      }
      break;
    }
  }
}
