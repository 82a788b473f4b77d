/* _TfoclFusedElementwise against the ops it replaces: each chain runs once
 * op by op (the plugin's own AddV2, Mul, Tanh, Cast, ... kernels, every
 * intermediate a device tensor) and once fused, and the two must agree bit
 * for bit, in float and in half (rounded after every op, subnormal and
 * overflowing halves included), over broadcasting shapes. Then the op's
 * shape function (unknown dims and ranks), broadcasts of more than 8
 * collapsed dims, and the op definition's life with the plugin's: gone at
 * unload, back at the next load. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/fused_program.h"
#include "reference.h"
#include "tfocl/host.h"

static const char *plugin_path;
static struct tfocl_plugin *plugin;
static struct tfocl_device *device;

#define ck_assert_ok(st) \
  ck_assert_msg(TF_GetCode(st) == TF_OK, "%s", TF_Message(st))

/* ---- Tensors ---------------------------------------------------------------- */

/* Deterministic values in [lo, hi) rounded to dtype, on the device. */
static TF_Tensor *random_tensor(TF_DataType dtype, const int64_t *dims,
                                int rank, double lo, double hi, uint64_t seed)
{
  struct ref_tensor t;
  TF_Status *st = TF_NewStatus();
  ck_assert(ref_tensor_alloc(&t, dtype, dims, rank));
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < t.elements; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(s >> 11) / 9007199254740992.0;
    t.v[i] = ref_round_to(dtype, lo + (hi - lo) * u);
  }
  TF_Tensor *host = ref_tensor_to_tf(&t, st);
  ck_assert_msg(host != NULL, "%s", TF_Message(st));
  TF_Tensor *dev = tfocl_tensor_to_device(device, host, st);
  ck_assert_msg(dev != NULL, "%s", TF_Message(st));
  TF_DeleteTensor(host);
  ref_tensor_finish(&t);
  TF_DeleteStatus(st);
  return dev;
}

static TF_Tensor *scalar(TF_DataType dtype, double v)
{
  struct ref_tensor t;
  TF_Status *st = TF_NewStatus();
  ck_assert(ref_tensor_alloc(&t, dtype, NULL, 0));
  t.v[0] = ref_round_to(dtype, v);
  TF_Tensor *r = ref_tensor_to_tf(&t, st);
  ck_assert_msg(r != NULL, "%s", TF_Message(st));
  ref_tensor_finish(&t);
  TF_DeleteStatus(st);
  return r;
}

/* One unfused op: its single output. */
static TF_Tensor *run1(const char *op, const struct tfocl_attr *attrs,
                       int num_attrs, TF_Tensor *a, TF_Tensor *b)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *in[2] = {a, b}, *out = NULL;
  int n = 0;
  tfocl_run_op(device, op, attrs, num_attrs, in, b != NULL ? 2 : 1, &out, 1,
               &n, st);
  ck_assert_msg(TF_GetCode(st) == TF_OK, "%s: %s", op, TF_Message(st));
  TF_DeleteStatus(st);
  return out;
}

static TF_Tensor *cast(TF_Tensor *x, TF_DataType to)
{
  struct tfocl_attr a[2] = {TFOCL_ATTR_T("DstT", to),
                            TFOCL_ATTR_B("Truncate", false)};
  return run1("Cast", a, 2, x, NULL);
}

/* The fused op; with tiles (num_tiles > 0), the tiled one. */
static TF_Tensor *fused_tiled(const int64_t *program, int len,
                              const float *constants, int num_constants,
                              const int64_t *tiles, int num_tiles,
                              TF_DataType out_type, TF_Tensor *const *inputs,
                              int num_inputs, TF_Status *st)
{
  struct tfocl_attr a[4] = {
      TFOCL_ATTR_T("T", out_type),
      {.name = "program",
       .kind = TFOCL_ATTR_INT_LIST,
       .value.ints = {program, len}},
      {.name = "constants",
       .kind = TFOCL_ATTR_FLOAT_LIST,
       .value.floats = {constants, num_constants}},
      {.name = "tiles",
       .kind = TFOCL_ATTR_INT_LIST,
       .value.ints = {tiles, num_tiles}},
  };
  TF_Tensor *out = NULL;
  int n = 0;
  tfocl_run_op(device, num_tiles > 0 ? FUSED_TILED_OP_NAME : FUSED_OP_NAME, a,
               num_tiles > 0 ? 4 : 3, inputs, num_inputs, &out, 1, &n, st);
  return out;
}

static TF_Tensor *fused(const int64_t *program, int len, const float *constants,
                        int num_constants, TF_DataType out_type,
                        TF_Tensor *const *inputs, int num_inputs, TF_Status *st)
{
  return fused_tiled(program, len, constants, num_constants, NULL, 0, out_type,
                     inputs, num_inputs, st);
}

/* Whether a float or half element is a NaN, from its bits. */
static bool is_nan_bits(uint32_t bits, size_t size)
{
  return size == 2 ? (bits & 0x7fffu) > 0x7c00u
                   : (bits & 0x7fffffffu) > 0x7f800000u;
}

/* The two results, bit for bit, shapes included; with any_nan, a NaN
 * matches any NaN. */
static void assert_same_values(TF_Tensor *want_dev, TF_Tensor *got_dev,
                               const char *what, bool any_nan)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *want = tfocl_tensor_to_host(want_dev, st);
  ck_assert_ok(st);
  TF_Tensor *got = tfocl_tensor_to_host(got_dev, st);
  ck_assert_ok(st);
  ck_assert_int_eq(TF_TensorType(got), TF_TensorType(want));
  ck_assert_int_eq(TF_NumDims(got), TF_NumDims(want));
  for (int d = 0; d < TF_NumDims(got); d++)
    ck_assert_int_eq(TF_Dim(got, d), TF_Dim(want, d));
  size_t bytes = TF_TensorByteSize(got);
  ck_assert_uint_eq(bytes, TF_TensorByteSize(want));
  size_t size = TF_DataTypeSize(TF_TensorType(got));
  const unsigned char *g = TF_TensorData(got), *w = TF_TensorData(want);
  for (size_t i = 0; i < bytes; i += size) {
    if (memcmp(g + i, w + i, size) == 0)
      continue;
    uint32_t gb = 0, wb = 0;
    memcpy(&gb, g + i, size);
    memcpy(&wb, w + i, size);
    if (any_nan && size <= 4 && is_nan_bits(gb, size) &&
        is_nan_bits(wb, size))
      continue;
    ck_abort_msg("%s: element %zu is 0x%x fused, 0x%x op by op", what,
                 i / size, gb, wb);
  }
  TF_DeleteTensor(want);
  TF_DeleteTensor(got);
  TF_DeleteStatus(st);
}

static void assert_same_bits(TF_Tensor *want_dev, TF_Tensor *got_dev,
                             const char *what)
{
  assert_same_values(want_dev, got_dev, what, false);
}

static void release(TF_Tensor **t, int n)
{
  for (int i = 0; i < n; i++)
    TF_DeleteTensor(t[i]);
}

static const TF_DataType float_types[] = {TF_FLOAT, TF_HALF};

/* ---- Fused = op by op ------------------------------------------------------ */

/* Keras' Adam: m + (grad - m) * 0.1, v + (grad^2 - v) * 0.001, and
 * var - m * lr / (sqrt(v) + 1e-7) with a scalar lr. */
START_TEST(adam_equals_op_by_op)
{
  TF_DataType t = float_types[_i];
  TF_Status *st = TF_NewStatus();
  const int64_t dims[2] = {33, 17};
  TF_Tensor *grad = random_tensor(t, dims, 2, -2, 2, 1);
  TF_Tensor *m = random_tensor(t, dims, 2, -1, 1, 2);
  TF_Tensor *v = random_tensor(t, dims, 2, 0.01, 1, 3);
  TF_Tensor *var = random_tensor(t, dims, 2, -3, 3, 4);
  TF_Tensor *lr = scalar(t, 0.003);
  TF_Tensor *c01 = scalar(t, 0.1), *c0001 = scalar(t, 0.001);
  TF_Tensor *eps = scalar(t, 1e-7);

  TF_Tensor *k[16];
  k[0] = run1("Sub", NULL, 0, grad, m);
  k[1] = run1("Mul", NULL, 0, k[0], c01);
  k[2] = run1("AddV2", NULL, 0, m, k[1]);
  const int64_t pm[] = {FUSED_SUB, 1, 0, FUSED_CONST, 0, t,
                        FUSED_MUL, 2, 3, FUSED_ADD, 0, 4};
  TF_Tensor *in_m[2] = {m, grad};
  TF_Tensor *fm = fused(pm, 12, (const float[]){0.1f}, 1, t, in_m, 2, st);
  ck_assert_ok(st);
  assert_same_bits(k[2], fm, "m");

  k[3] = run1("Square", NULL, 0, grad, NULL);
  k[4] = run1("Sub", NULL, 0, k[3], v);
  k[5] = run1("Mul", NULL, 0, k[4], c0001);
  k[6] = run1("AddV2", NULL, 0, v, k[5]);
  const int64_t pv[] = {FUSED_SQUARE, 1, -1, FUSED_SUB, 2, 0,
                        FUSED_CONST, 0, t, FUSED_MUL, 3, 4,
                        FUSED_ADD, 0, 5};
  TF_Tensor *in_v[2] = {v, grad};
  TF_Tensor *fv = fused(pv, 15, (const float[]){0.001f}, 1, t, in_v, 2, st);
  ck_assert_ok(st);
  assert_same_bits(k[6], fv, "v");

  k[7] = run1("Mul", NULL, 0, m, lr);
  k[8] = run1("Sqrt", NULL, 0, v, NULL);
  k[9] = run1("AddV2", NULL, 0, k[8], eps);
  k[10] = run1("RealDiv", NULL, 0, k[7], k[9]);
  k[11] = run1("Sub", NULL, 0, var, k[10]);
  const int64_t pw[] = {FUSED_MUL, 1, 3, FUSED_SQRT, 2, -1,
                        FUSED_CONST, 0, t, FUSED_ADD, 5, 6,
                        FUSED_DIV, 4, 7, FUSED_SUB, 0, 8};
  TF_Tensor *in_w[4] = {var, m, v, lr};
  TF_Tensor *fw = fused(pw, 18, (const float[]){1e-7f}, 1, t, in_w, 4, st);
  ck_assert_ok(st);
  assert_same_bits(k[11], fw, "var");

  release(k, 12);
  TF_Tensor *rest[] = {grad, m, v, var, lr, c01, c0001, eps, fm, fv, fw};
  release(rest, (int)(sizeof(rest) / sizeof(rest[0])));
  TF_DeleteStatus(st);
}
END_TEST

/* Activations and their gradients over a broadcast: [33,17] with [17] and
 * a scalar. */
START_TEST(activations_equal_op_by_op)
{
  TF_DataType t = float_types[_i];
  TF_Status *st = TF_NewStatus();
  TF_Tensor *x = random_tensor(t, (const int64_t[]){33, 17}, 2, -8, 8, 5);
  TF_Tensor *b = random_tensor(t, (const int64_t[]){17}, 1, -2, 2, 6);
  TF_Tensor *s = scalar(t, 0.75);

  TF_Tensor *k[16];
  k[0] = run1("AddV2", NULL, 0, x, b);
  k[1] = run1("Relu6", NULL, 0, k[0], NULL);
  k[2] = run1("Tanh", NULL, 0, x, NULL);
  k[3] = run1("Sigmoid", NULL, 0, k[2], NULL);
  k[4] = run1("Mul", NULL, 0, k[1], k[3]);
  k[5] = run1("ReluGrad", NULL, 0, k[4], k[0]);
  k[6] = run1("SigmoidGrad", NULL, 0, k[3], k[5]);
  k[7] = run1("TanhGrad", NULL, 0, k[2], k[6]);
  k[8] = run1("Maximum", NULL, 0, k[7], s);
  k[9] = run1("Minimum", NULL, 0, k[8], k[4]);
  k[10] = run1("Neg", NULL, 0, k[9], NULL);
  k[11] = run1("Relu", NULL, 0, k[10], NULL);
  k[12] = run1("SquaredDifference", NULL, 0, k[11], b);
  const int64_t p[] = {
      FUSED_ADD, 0, 1,          /* 3 */
      FUSED_RELU6, 3, -1,       /* 4 */
      FUSED_TANH, 0, -1,        /* 5 */
      FUSED_SIGMOID, 5, -1,     /* 6 */
      FUSED_MUL, 4, 6,          /* 7 */
      FUSED_RELU_GRAD, 7, 3,    /* 8 */
      FUSED_SIGMOID_GRAD, 6, 8, /* 9 */
      FUSED_TANH_GRAD, 5, 9,    /* 10 */
      FUSED_MAXIMUM, 10, 2,     /* 11 */
      FUSED_MINIMUM, 11, 7,     /* 12 */
      FUSED_NEG, 12, -1,        /* 13 */
      FUSED_RELU, 13, -1,       /* 14 */
      FUSED_SQUARED_DIFFERENCE, 14, 1,
  };
  TF_Tensor *in[3] = {x, b, s};
  TF_Tensor *f = fused(p, (int)(sizeof(p) / sizeof(p[0])), NULL, 0, t, in, 3,
                       st);
  ck_assert_ok(st);
  assert_same_bits(k[12], f, "activations");
  release(k, 13);
  TF_Tensor *rest[] = {x, b, s, f};
  release(rest, 4);
  TF_DeleteStatus(st);
}
END_TEST

/* Inputs constant along the innermost dim (rows' statistics [9,4,1],
 * scalars) next to ones that vary along it ([40], [9,4,40]): layer
 * normalisation's (x - mean) * rstd * gamma + beta * s. One kernel
 * instance meets more such sets than it keeps a program for (the rest
 * take the general kernel); every run must equal the ops one by one. */
START_TEST(inner_constant_inputs_equal_op_by_op)
{
  TF_DataType t = float_types[_i];
  TF_Status *st = TF_NewStatus();
  const int64_t row[3] = {9, 4, 1}, channel[1] = {40}, full[3] = {9, 4, 40};
  /* The last set's rows are longer than a CPU device's span of a row
   * (4096 elements): each is cut in two. */
  const int64_t long_row[3] = {2, 1, 1}, long_channel[1] = {4100},
                long_full[3] = {2, 1, 4100};
  const int64_t p[] = {FUSED_SUB, 0, 1, FUSED_MUL, 6, 2, FUSED_MUL, 7, 3,
                       FUSED_MUL, 4, 5, FUSED_ADD, 8, 9};
  const TF_DataType types[6] = {t, t, t, t, t, t};
  struct tfocl_attr a[4] = {
      TFOCL_ATTR_T("T", t),
      {.name = "program",
       .kind = TFOCL_ATTR_INT_LIST,
       .value.ints = {p, (int)(sizeof(p) / sizeof(p[0]))}},
      {.name = "constants",
       .kind = TFOCL_ATTR_FLOAT_LIST,
       .value.floats = {NULL, 0}},
      {.name = "Targs",
       .kind = TFOCL_ATTR_TYPE_LIST,
       .value.types = {types, 6}},
  };
  struct tfocl_op *op =
      tfocl_op_create(device, FUSED_OP_NAME, a, 4, types, 6, st);
  ck_assert_ok(st);
  /* Per input 1..5: 'r' a row statistic, 'c' a channel vector, 's' a
   * scalar, 'f' the full shape. */
  static const char *const sets[] = {"rrccs", "ccccs", "rcccc",
                                     "crccc", "rcccr", "ccrsc",
                                     "sssss", "fffrf", "rcsfc"};
  enum { NUM_SETS = sizeof(sets) / sizeof(sets[0]) };
  for (size_t v = 0; v < NUM_SETS; v++) {
    bool long_rows = v + 1 == NUM_SETS;
    const int64_t *f = long_rows ? long_full : full,
                  *r = long_rows ? long_row : row,
                  *c = long_rows ? long_channel : channel;
    TF_Tensor *in[6];
    in[0] = random_tensor(t, f, 3, -3, 3, 10 * v + 1);
    for (int k = 1; k < 6; k++) {
      char kind = sets[v][k - 1];
      uint64_t seed = 10 * v + (uint64_t)k + 1;
      in[k] = kind == 's'   ? scalar(t, 0.5 + 0.25 * k)
              : kind == 'r' ? random_tensor(t, r, 3, -2, 2, seed)
              : kind == 'c' ? random_tensor(t, c, 1, -2, 2, seed)
                            : random_tensor(t, f, 3, -2, 2, seed);
    }
    TF_Tensor *k[5];
    k[0] = run1("Sub", NULL, 0, in[0], in[1]);
    k[1] = run1("Mul", NULL, 0, k[0], in[2]);
    k[2] = run1("Mul", NULL, 0, k[1], in[3]);
    k[3] = run1("Mul", NULL, 0, in[4], in[5]);
    k[4] = run1("AddV2", NULL, 0, k[2], k[3]);
    TF_Tensor *got = NULL;
    tfocl_op_compute(op, in, 6, &got, 1, st);
    ck_assert_msg(TF_GetCode(st) == TF_OK, "%s: %s", sets[v], TF_Message(st));
    assert_same_bits(k[4], got, sets[v]);
    TF_DeleteTensor(got);
    release(k, 5);
    release(in, 6);
  }
  tfocl_op_destroy(op);
  TF_DeleteStatus(st);
}
END_TEST

/* float -> half -> float with values that become half subnormals and
 * overflow half: the rounding after every half op. */
START_TEST(half_rounding_equals_op_by_op)
{
  TF_Status *st = TF_NewStatus();
  const int64_t dims[1] = {1031};
  TF_Tensor *x = random_tensor(TF_FLOAT, dims, 1, -3, 3, 7);
  TF_Tensor *tiny = scalar(TF_HALF, 3e-5);  /* x * tiny: half subnormals */
  TF_Tensor *big = scalar(TF_HALF, 30000.0); /* x * big: overflow */

  TF_Tensor *k[8];
  k[0] = cast(x, TF_HALF);
  k[1] = run1("Mul", NULL, 0, k[0], tiny);
  k[2] = run1("Mul", NULL, 0, k[0], big);
  k[3] = run1("AddV2", NULL, 0, k[1], k[2]);
  k[4] = run1("Exp", NULL, 0, k[1], NULL);
  k[5] = run1("Mul", NULL, 0, k[3], k[4]);
  k[6] = cast(k[5], TF_FLOAT);
  k[7] = cast(k[1], TF_FLOAT);
  const int64_t p[] = {
      FUSED_CAST, 0, TF_HALF,  /* 3 */
      FUSED_MUL, 3, 1,         /* 4 */
      FUSED_MUL, 3, 2,         /* 5 */
      FUSED_ADD, 4, 5,         /* 6 */
      FUSED_EXP, 4, -1,        /* 7 */
      FUSED_MUL, 6, 7,         /* 8 */
      FUSED_CAST, 8, TF_FLOAT,
  };
  TF_Tensor *in[3] = {x, tiny, big};
  TF_Tensor *f = fused(p, 21, NULL, 0, TF_FLOAT, in, 3, st);
  ck_assert_ok(st);
  assert_same_bits(k[6], f, "half chain");
  /* The subnormal products alone, as float. */
  const int64_t q[] = {FUSED_CAST, 0, TF_HALF, FUSED_MUL, 3, 1,
                       FUSED_CAST, 4, TF_FLOAT};
  TF_Tensor *g = fused(q, 9, NULL, 0, TF_FLOAT, in, 3, st);
  ck_assert_ok(st);
  assert_same_bits(k[7], g, "half subnormals");
  release(k, 8);
  TF_Tensor *rest[] = {x, tiny, big, f, g};
  release(rest, 5);
  TF_DeleteStatus(st);
}
END_TEST

/* Keras' Adam step size from its int64 step counter: lr * sqrt(1 -
 * 0.999^t) / (1 - 0.9^t), t = float(it + 1), the Cast read twice. */
START_TEST(step_counter_equals_op_by_op)
{
  TF_DataType t = float_types[_i];
  TF_Status *st = TF_NewStatus();
  const int64_t dims[1] = {7};
  struct ref_tensor its;
  ck_assert(ref_tensor_alloc(&its, TF_INT64, dims, 1));
  for (int k = 0; k < 7; k++)
    its.v[k] = k * 37 - 1; /* -1, 36, ..., 221 */
  TF_Tensor *host = ref_tensor_to_tf(&its, st);
  TF_Tensor *it = tfocl_tensor_to_device(device, host, st);
  ck_assert_ok(st);
  TF_Tensor *lr = scalar(t, 0.001), *one64 = scalar(TF_INT64, 1);
  TF_Tensor *one = scalar(t, 1.0), *b1 = scalar(t, 0.9), *b2 = scalar(t, 0.999);

  TF_Tensor *k[10];
  k[0] = run1("AddV2", NULL, 0, it, one64);
  k[1] = cast(k[0], t);
  k[2] = run1("Pow", NULL, 0, b1, k[1]);
  k[3] = run1("Pow", NULL, 0, b2, k[1]);
  k[4] = run1("Sub", NULL, 0, one, k[3]);
  k[5] = run1("Sqrt", NULL, 0, k[4], NULL);
  k[6] = run1("Mul", NULL, 0, lr, k[5]);
  k[7] = run1("Sub", NULL, 0, one, k[2]);
  k[8] = run1("RealDiv", NULL, 0, k[6], k[7]);
  const int64_t p[] = {
      FUSED_CONST, 0, TF_INT64, /* 2 */
      FUSED_ADD, 0, 2,          /* 3 */
      FUSED_CAST, 3, t,         /* 4 */
      FUSED_CONST, 1, t,        /* 5: 0.9 */
      FUSED_POW, 5, 4,          /* 6 */
      FUSED_CONST, 2, t,        /* 7: 0.999 */
      FUSED_POW, 7, 4,          /* 8 */
      FUSED_CONST, 0, t,        /* 9: 1 */
      FUSED_SUB, 9, 8,          /* 10 */
      FUSED_SQRT, 10, -1,       /* 11 */
      FUSED_MUL, 1, 11,         /* 12 */
      FUSED_SUB, 9, 6,          /* 13 */
      FUSED_DIV, 12, 13,
  };
  TF_Tensor *in[2] = {it, lr};
  TF_Tensor *f = fused(p, (int)(sizeof(p) / sizeof(p[0])),
                       (const float[]){1.0f, 0.9f, 0.999f}, 3, t, in, 2, st);
  ck_assert_ok(st);
  assert_same_bits(k[8], f, "step size");
  release(k, 9);
  TF_Tensor *rest[] = {host, it, lr, one64, one, b1, b2, f};
  release(rest, 8);
  ref_tensor_finish(&its);
  TF_DeleteStatus(st);
}
END_TEST

/* ---- Every opcode at the edges ----------------------------------------------- */

/* NaN of both signs, infinities, zeros of both signs, the largest values
 * (that overflow half, or float when squared), subnormals, and the points
 * where the activations change branch. */
static const double edge_values[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 0.5, -2.0,
    6.0, -6.5, 7.0, 88.75, -104.0, 65504.0, 70000.0, 1e20, 3.4e38,
    -3.4e38, 1e-40, -1e-40, 3e-8, 1e-3};
/* int64 values where wrap-around matters. */
static const double edge_int64s[] = {
    0.0, 1.0, -1.0, 7.0, -9.0, 3037000500.0, -3037000500.0,
    4611686018427387904.0, -4611686018427387904.0, -9223372036854775808.0};

/* A device tensor of the values, each repeated `repeat` times in turn, the
 * whole cycled `cycle` times: [v0 v0 v1 v1 ...] or [v0 v1 ... v0 v1 ...],
 * so that two of them pair every value with every other. */
static TF_Tensor *edge_tensor(TF_DataType dtype, const double *values, int n,
                              int repeat, int cycle)
{
  struct ref_tensor t;
  TF_Status *st = TF_NewStatus();
  const int64_t dims[1] = {(int64_t)n * repeat * cycle};
  ck_assert(ref_tensor_alloc(&t, dtype, dims, 1));
  for (int64_t i = 0; i < t.elements; i++)
    t.v[i] = ref_round_to(dtype, values[(i / repeat) % n]);
  TF_Tensor *host = ref_tensor_to_tf(&t, st);
  ck_assert_msg(host != NULL, "%s", TF_Message(st));
  TF_Tensor *dev = tfocl_tensor_to_device(device, host, st);
  ck_assert_msg(dev != NULL, "%s", TF_Message(st));
  TF_DeleteTensor(host);
  ref_tensor_finish(&t);
  TF_DeleteStatus(st);
  return dev;
}

/* Each opcode alone (int64 ones then cast to float) against its op, over
 * the edge values, every pair of them for two operands. The opcodes come
 * from the format itself, so a newly fusable op is covered. Bit for bit,
 * but a NaN matches any NaN: which NaN operand an operation passes on (and
 * so the sign of the result) is the compiler's choice, and two builds of
 * one expression may differ (Oclgrind's TanhGrad of two NaNs: b * fma(-a,
 * a, 1) gives -NaN unfused, +NaN fused). NaN against a number, or -0
 * against +0, fails. */
START_TEST(every_opcode_at_the_edges)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF, TF_INT64};
  TF_DataType t = types[_i];
  const double *values = t == TF_INT64 ? edge_int64s : edge_values;
  int n = t == TF_INT64
              ? (int)(sizeof(edge_int64s) / sizeof(edge_int64s[0]))
              : (int)(sizeof(edge_values) / sizeof(edge_values[0]));
  TF_Status *st = TF_NewStatus();
  TF_Tensor *x = edge_tensor(t, values, n, 1, 1);
  TF_Tensor *a = edge_tensor(t, values, n, n, 1);
  TF_Tensor *b = edge_tensor(t, values, n, 1, n);
  int tested = 0;
  for (int op = FUSED_CAST + 1; op < 1000; op++) {
    int arity = fused_op_arity(op);
    if (arity < 1 || (t == TF_INT64 && !fused_op_takes_int64(op)))
      continue;
    const char *name = fused_op_tf_name(op);
    ck_assert_msg(name != NULL, "opcode %d has no TensorFlow name", op);
    TF_Tensor *in[2] = {arity == 1 ? x : a, b};
    TF_Tensor *want = run1(name, NULL, 0, in[0], arity == 2 ? b : NULL);
    /* The fused op's output is float or half: int64 through a Cast. */
    TF_DataType out = t == TF_INT64 ? TF_FLOAT : t;
    const int64_t p[] = {op, 0, arity == 2 ? 1 : -1, FUSED_CAST, arity,
                         TF_FLOAT};
    TF_Tensor *got = fused(p, t == TF_INT64 ? 6 : 3, NULL, 0, out, in, arity,
                           st);
    ck_assert_msg(TF_GetCode(st) == TF_OK, "%s: %s", name, TF_Message(st));
    if (t == TF_INT64) {
      TF_Tensor *w = cast(want, TF_FLOAT);
      TF_DeleteTensor(want);
      want = w;
    }
    char what[64];
    snprintf(what, sizeof(what), "%s (opcode %d, dtype %d)", name, op,
             (int)t);
    assert_same_values(want, got, what, true);
    TF_DeleteTensor(want);
    TF_DeleteTensor(got);
    tested++;
  }
  ck_assert_int_ge(tested, t == TF_INT64 ? 7 : 30);
  TF_Tensor *rest[] = {x, a, b};
  release(rest, 3);
  TF_DeleteStatus(st);
}
END_TEST

/* Broadcasts that collapse to more than 8 dims: the kernel splits the
 * leading ones on the host. x + 10 y over [2,1,2,1,2,1,2,1,2,3] and
 * [1,2,1,2,1,2,1,2,1,3]: exact in float, so against the host. */
/* A float tensor of `rank` dims (any rank) on the device, values i * 0.5 -
 * seed. */
static TF_Tensor *ramp(const int64_t *dims, int rank, float seed)
{
  TF_Status *st = TF_NewStatus();
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= dims[d];
  TF_Tensor *host = TF_AllocateTensor(TF_FLOAT, dims, rank,
                                      (size_t)n * sizeof(float));
  ck_assert_ptr_nonnull(host);
  float *v = TF_TensorData(host);
  for (int64_t i = 0; i < n; i++)
    v[i] = (float)i * 0.5f - seed;
  TF_Tensor *dev = tfocl_tensor_to_device(device, host, st);
  ck_assert_msg(dev != NULL, "%s", TF_Message(st));
  TF_DeleteTensor(host);
  TF_DeleteStatus(st);
  return dev;
}

START_TEST(more_than_eight_collapsed_dims)
{
  TF_Status *st = TF_NewStatus();
  const int64_t xd[10] = {2, 1, 2, 1, 2, 1, 2, 1, 2, 3};
  const int64_t yd[10] = {1, 2, 1, 2, 1, 2, 1, 2, 1, 3};
  TF_Tensor *x = ramp(xd, 10, 7.0f);
  TF_Tensor *y = ramp(yd, 10, 3.0f);
  const int64_t p[] = {FUSED_CONST, 0, TF_FLOAT, FUSED_MUL, 1, 2,
                       FUSED_ADD, 0, 3};
  TF_Tensor *in[2] = {x, y};
  TF_Tensor *f = fused(p, 9, (const float[]){10.0f}, 1, TF_FLOAT, in, 2, st);
  ck_assert_ok(st);
  TF_Tensor *hx = tfocl_tensor_to_host(x, st), *hy = tfocl_tensor_to_host(y, st);
  TF_Tensor *hf = tfocl_tensor_to_host(f, st);
  ck_assert_ok(st);
  ck_assert_int_eq(TF_NumDims(hf), 10);
  const float *xv = TF_TensorData(hx), *yv = TF_TensorData(hy);
  const float *fv = TF_TensorData(hf);
  int64_t elements = 1;
  for (int d = 0; d < 10; d++) {
    ck_assert_int_eq(TF_Dim(hf, d), d == 9 ? 3 : 2);
    elements *= TF_Dim(hf, d);
  }
  for (int64_t i = 0; i < elements; i++) {
    int64_t rem = i, xi = 0, yi = 0, xs = 1, ys = 1;
    for (int d = 9; d >= 0; d--) {
      int64_t c = rem % (d == 9 ? 3 : 2);
      rem /= d == 9 ? 3 : 2;
      if (xd[d] != 1)
        xi += c * xs;
      if (yd[d] != 1)
        yi += c * ys;
      xs *= xd[d];
      ys *= yd[d];
    }
    float want = xv[xi] + yv[yi] * 10.0f;
    ck_assert_msg(fv[i] == want, "element %lld: %g, want %g", (long long)i,
                  (double)fv[i], (double)want);
  }
  TF_Tensor *rest[] = {x, y, f, hx, hy, hf};
  release(rest, 6);
  TF_DeleteStatus(st);
}
END_TEST

/* ---- Tiled inputs ------------------------------------------------------------ */

/* TensorFlow's Tile of x by multiples m[0, rank). */
static TF_Tensor *tile(TF_Tensor *x, const int64_t *m, int rank)
{
  struct ref_tensor t;
  TF_Status *st = TF_NewStatus();
  int64_t len = rank;
  ck_assert(ref_tensor_alloc(&t, TF_INT32, &len, 1));
  for (int d = 0; d < rank; d++)
    t.v[d] = (double)m[d];
  TF_Tensor *multiples = ref_tensor_to_tf(&t, st);
  ck_assert_ok(st);
  ref_tensor_finish(&t);
  struct tfocl_attr a[2] = {TFOCL_ATTR_T("T", TF_TensorType(x)),
                            TFOCL_ATTR_T("Tmultiples", TF_INT32)};
  TF_Tensor *r = run1("Tile", a, 2, x, multiples);
  TF_DeleteTensor(multiples);
  TF_DeleteStatus(st);
  return r;
}

/* The tiled op = Tile, then the plain op on the tiled copies: a broadcast
 * repeat ([1, 1, 1, C] over N, H, W) beside a full input and alone, a
 * repeat of dims larger than 1 (the index space split in two), two tiled
 * inputs at once, and a rank-2 one beside a rank-4 input. */
START_TEST(tiled_inputs_equal_tile_then_op)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType dt = float_types[_i];
  static const int64_t full[4] = {4, 5, 6, 16}, vec[4] = {1, 1, 1, 16};
  static const int64_t rep[4] = {2, 1, 3, 16}, row[2] = {1, 16};
  static const int64_t over_vec[4] = {4, 5, 6, 1}, over_rep[4] = {2, 5, 2, 1};
  static const int64_t over_row[2] = {6, 1};
  TF_Tensor *x = random_tensor(dt, full, 4, -2, 2, 1);
  TF_Tensor *v = random_tensor(dt, vec, 4, -2, 2, 2);
  TF_Tensor *w = random_tensor(dt, rep, 4, -2, 2, 3);
  TF_Tensor *r2 = random_tensor(dt, row, 2, -2, 2, 4);
  TF_Tensor *tv = tile(v, over_vec, 4), *tw = tile(w, over_rep, 4);
  TF_Tensor *tr = tile(r2, over_row, 2);
  /* (v0 - v1) * 2 + v2 */
  const int64_t sub_mul_add[] = {FUSED_SUB, 0, 1, FUSED_CONST, 0, (int64_t)dt,
                                 FUSED_MUL, 3, 4, FUSED_ADD,   5, 2};
  /* v0 * 2 + 1 */
  const int64_t scale[] = {FUSED_CONST, 0, (int64_t)dt, FUSED_MUL, 0, 1,
                           FUSED_CONST, 1, (int64_t)dt, FUSED_ADD, 2, 3};
  const float consts[] = {2.0f, 1.0f};
  struct {
    const char *what;
    const int64_t *program;
    int len;
    TF_Tensor *in[3], *tiled_in[3];
    int64_t tiles[16];
    int num_tiles;
  } cases[] = {
      {"broadcast beside a full input",
       sub_mul_add,
       12,
       {x, v, x},
       {x, tv, x},
       {0, 4, 4, 5, 6, 1, 0},
       7},
      {"broadcast alone", scale, 12, {v}, {tv}, {4, 4, 5, 6, 1}, 5},
      {"repeat",
       sub_mul_add,
       12,
       {x, w, v},
       {x, tw, v},
       {0, 4, 2, 5, 2, 1, 0},
       7},
      {"two tiled",
       sub_mul_add,
       12,
       {v, w, x},
       {tv, tw, x},
       {4, 4, 5, 6, 1, 4, 2, 5, 2, 1, 0},
       11},
      {"rank 2 beside rank 4",
       sub_mul_add,
       12,
       {x, r2, x},
       {x, tr, x},
       {0, 2, 6, 1, 0},
       5},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    int n = cases[c].program == scale ? 1 : 3;
    TF_Tensor *want = fused(cases[c].program, cases[c].len, consts, 2, dt,
                            cases[c].tiled_in, n, st);
    ck_assert_msg(TF_GetCode(st) == TF_OK, "%s: %s", cases[c].what,
                  TF_Message(st));
    TF_Tensor *got =
        fused_tiled(cases[c].program, cases[c].len, consts, 2, cases[c].tiles,
                    cases[c].num_tiles, dt, cases[c].in, n, st);
    ck_assert_msg(TF_GetCode(st) == TF_OK, "%s: %s", cases[c].what,
                  TF_Message(st));
    assert_same_bits(want, got, cases[c].what);
    TF_DeleteTensor(want);
    TF_DeleteTensor(got);
  }

  /* Multiples of another length than the input's rank; two inputs that
   * repeat one dim differently (6 as 3 x 2 and 2 x 3): errors. */
  const int64_t short_tiles[] = {3, 4, 5, 6, 0, 0};
  TF_Tensor *bad_in[3] = {v, x, x};
  TF_Tensor *out = fused_tiled(sub_mul_add, 12, consts, 2, short_tiles, 6, dt,
                               bad_in, 3, st);
  ck_assert_int_eq(TF_GetCode(st), TF_INVALID_ARGUMENT);
  ck_assert_ptr_null(out);
  static const int64_t two[2] = {2, 16}, three[2] = {3, 16};
  TF_Tensor *a2 = random_tensor(dt, two, 2, -2, 2, 5);
  TF_Tensor *a3 = random_tensor(dt, three, 2, -2, 2, 6);
  const int64_t clash[] = {2, 3, 1, 2, 2, 1, 0};
  TF_Tensor *clash_in[3] = {a2, a3, r2};
  out = fused_tiled(sub_mul_add, 12, consts, 2, clash, 7, dt, clash_in, 3, st);
  ck_assert_int_eq(TF_GetCode(st), TF_UNIMPLEMENTED);
  ck_assert_ptr_null(out);

  TF_Tensor *rest[] = {x, v, w, r2, tv, tw, tr, a2, a3};
  release(rest, 9);
  TF_DeleteStatus(st);
}
END_TEST

/* ---- The shape function ------------------------------------------------------ */

static void infer(const struct tfocl_shape *shapes, int n, int want_rank,
                  const int64_t *want, TF_Code want_code)
{
  TF_Status *st = TF_NewStatus();
  TF_DataType types[FUSED_MAX_INPUTS];
  int64_t program[3 * FUSED_MAX_INPUTS];
  for (int k = 0; k < n; k++)
    types[k] = TF_FLOAT;
  /* v0 + v1 + ...: every input used. */
  int len = 0;
  for (int k = 1; k < n; k++) {
    program[len++] = FUSED_ADD;
    program[len++] = k == 1 ? 0 : n + k - 2;
    program[len++] = k;
  }
  if (n == 1) {
    program[len++] = FUSED_NEG;
    program[len++] = 0;
    program[len++] = -1;
  }
  struct tfocl_attr a[2] = {
      TFOCL_ATTR_T("T", TF_FLOAT),
      {.name = "program",
       .kind = TFOCL_ATTR_INT_LIST,
       .value.ints = {program, len}},
  };
  int64_t dims[8];
  int rank = -2;
  bool ok = tfocl_infer_shape(FUSED_OP_NAME, a, 2, types, shapes, n, 0, dims,
                              8, &rank, st);
  ck_assert_msg(TF_GetCode(st) == want_code, "code %d: %s", TF_GetCode(st),
                TF_Message(st));
  if (want_code != TF_OK) {
    ck_assert(!ok);
    TF_DeleteStatus(st);
    return;
  }
  ck_assert(ok);
  ck_assert_int_eq(rank, want_rank);
  for (int d = 0; d < want_rank; d++)
    ck_assert_msg(dims[d] == want[d], "dim %d: %lld, want %lld", d,
                  (long long)dims[d], (long long)want[d]);
  TF_DeleteStatus(st);
}

#define SHAPE(...) \
  ((struct tfocl_shape){(const int64_t[]){__VA_ARGS__}, \
                        (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))})
#define SCALAR ((struct tfocl_shape){NULL, 0})
#define UNKNOWN_RANK ((struct tfocl_shape){NULL, -1})

START_TEST(shape_function_broadcasts)
{
  /* Known dims. */
  infer((struct tfocl_shape[]){SHAPE(4, 1, 3), SHAPE(5, 1), SCALAR}, 3, 3,
        (const int64_t[]){4, 5, 3}, TF_OK);
  /* An unknown dim against 1 stays unknown; against 5 is 5. */
  infer((struct tfocl_shape[]){SHAPE(-1, 3), SHAPE(1, 3)}, 2, 2,
        (const int64_t[]){-1, 3}, TF_OK);
  infer((struct tfocl_shape[]){SHAPE(-1, 3), SHAPE(5, 1)}, 2, 2,
        (const int64_t[]){5, 3}, TF_OK);
  /* 0 against 1 is 0; one input alone is itself. */
  infer((struct tfocl_shape[]){SHAPE(0, 2), SHAPE(1, 1)}, 2, 2,
        (const int64_t[]){0, 2}, TF_OK);
  infer((struct tfocl_shape[]){SHAPE(7, -1)}, 1, 2, (const int64_t[]){7, -1},
        TF_OK);
  /* Scalars only. */
  infer((struct tfocl_shape[]){SCALAR, SCALAR}, 2, 0, NULL, TF_OK);
  /* An unknown rank makes the output unknown. */
  infer((struct tfocl_shape[]){SHAPE(2, 3), UNKNOWN_RANK}, 2, -1, NULL,
        TF_OK);
  /* Shapes that cannot broadcast. */
  infer((struct tfocl_shape[]){SHAPE(2, 3), SHAPE(4, 3), SHAPE(1)}, 3, 0,
        NULL, TF_INVALID_ARGUMENT);
}
END_TEST

/* The shim checks every run of an op with a shape function against it:
 * runs of every kernel variant went through that check above; here the op
 * is known before and gone after the plugin's unload, and comes back with
 * the next load. */
static bool reload_keeps_op_def(char *why, size_t why_size)
{
  TF_Status *st = TF_NewStatus();
  bool ok = tfocl_op_def_exists(FUSED_OP_NAME);
  if (!ok)
    snprintf(why, why_size, "not registered while the plugin is loaded");
  tfocl_device_close(device);
  tfocl_plugin_unload(plugin);
  device = NULL;
  if (ok && tfocl_op_def_exists(FUSED_OP_NAME)) {
    snprintf(why, why_size, "still registered after the unload");
    ok = false;
  }
  plugin = tfocl_plugin_load(plugin_path, st);
  if (ok && (plugin == NULL || !tfocl_op_def_exists(FUSED_OP_NAME))) {
    snprintf(why, why_size, "not registered again by the next load: %s",
             TF_Message(st));
    ok = false;
  }
  tfocl_plugin_unload(plugin);
  TF_DeleteStatus(st);
  return ok;
}

int main(void)
{
  TF_Status *status = TF_NewStatus();
  plugin_path = getenv("TFOCL_PLUGIN");
  if (plugin_path == NULL) {
    fprintf(stderr, "TFOCL_PLUGIN is not set\n");
    return EXIT_FAILURE;
  }
  plugin = tfocl_plugin_load(plugin_path, status);
  if (plugin == NULL) {
    fprintf(stderr, "loading %s: %s\n", plugin_path, TF_Message(status));
    return EXIT_FAILURE;
  }
  if (tfocl_plugin_device_count(plugin, status) < 1) {
    fprintf(stderr, "no OpenCL device: skipped\n");
    tfocl_plugin_unload(plugin);
    TF_DeleteStatus(status);
    return 77;
  }
  device = tfocl_device_open(plugin, 0, status);
  if (device == NULL) {
    fprintf(stderr, "opening device 0: %s\n", TF_Message(status));
    return EXIT_FAILURE;
  }
  tfocl_device_poison_outputs(device, true);
  Suite *s = suite_create("fused");
  TCase *tc = tcase_create("fused");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, adam_equals_op_by_op, 0, 2);
  tcase_add_loop_test(tc, activations_equal_op_by_op, 0, 2);
  tcase_add_loop_test(tc, inner_constant_inputs_equal_op_by_op, 0, 2);
  tcase_add_test(tc, half_rounding_equals_op_by_op);
  tcase_add_loop_test(tc, step_counter_equals_op_by_op, 0, 2);
  tcase_add_loop_test(tc, every_opcode_at_the_edges, 0, 3);
  tcase_add_test(tc, more_than_eight_collapsed_dims);
  tcase_add_loop_test(tc, tiled_inputs_equal_tile_then_op, 0, 2);
  tcase_add_test(tc, shape_function_broadcasts);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  /* OpenCL state does not survive fork(): one process. */
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);

  char why[256] = "";
  if (!reload_keeps_op_def(why, sizeof(why))) {
    fprintf(stderr, "op definition across unload/load: %s\n", why);
    failed++;
  }
  TF_DeleteStatus(status);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
