/* References of the matmul kernel family: MatMul, BatchMatMul,
 * BatchMatMulV2 and BatchMatMulV3 (batch broadcasting, transposes), and
 * _FusedMatMul (MatMul + BiasAdd + an activation).
 *
 * Tolerance (float32): a K-term dot product accumulated in float32 is off
 * by at most about K * eps * sum|a_k * b_k| <= K * 6e-8 * max|a| * max|b|,
 * and in practice by sqrt(K) times that. The cases draw values in [-3, 3]
 * (max|a| * max|b| = 9) with K <= 300, so the bound 1e-5 * K * 9 is never
 * below 9e-5 = atol; with rtol 1e-5 on top this is tighter than the
 * "1e-5 * K * max|a| * max|b|" bound for every case with K >= 2 and still
 * far above the errors measured (~1e-5 at K = 300). Half widens both by
 * REF_HALF_FACTOR (inputs and outputs are half; the device accumulates in
 * float and rounds once). _FusedMatMul adds the bias and activation in float
 * on the device (float64 here): within the same bounds, the activations
 * being 1-Lipschitz or flatter. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"

/* MatMul's attribute names and rank rules (_FusedMatMul shares them). */
static bool is_matmul(const struct ref_case *c)
{
  return strcmp(c->op, "MatMul") == 0 || strcmp(c->op, "_FusedMatMul") == 0;
}

static int matmul_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *y = &c->inputs[1];
  bool legacy = is_matmul(c);
  bool adj_x = ref_case_attr_bool_or(c, legacy ? "transpose_a" : "adj_x", false);
  bool adj_y = ref_case_attr_bool_or(c, legacy ? "transpose_b" : "adj_y", false);
  bool strict = legacy || strcmp(c->op, "BatchMatMul") == 0;

  if (x->rank < 2 || y->rank < 2 || (strict && x->rank != y->rank) ||
      (legacy && x->rank != 2)) {
    snprintf(error, (size_t)error_len, "bad ranks");
    return -1;
  }
  int xr = x->rank - 2, yr = y->rank - 2;
  int rank = xr > yr ? xr : yr;
  int64_t xd[REF_MAX_DIMS], yd[REF_MAX_DIMS], od[REF_MAX_DIMS];
  for (int i = 0; i < rank; i++) {
    int xi = i - (rank - xr), yi = i - (rank - yr);
    xd[i] = xi >= 0 ? x->dims[xi] : 1;
    yd[i] = yi >= 0 ? y->dims[yi] : 1;
    if (strict && xd[i] != yd[i]) {
      snprintf(error, (size_t)error_len, "batch dims differ");
      return -1;
    }
    if (xd[i] != yd[i] && xd[i] != 1 && yd[i] != 1) {
      snprintf(error, (size_t)error_len, "incompatible batch dims");
      return -1;
    }
    od[i] = xd[i] == 1 ? yd[i] : xd[i];
  }
  int64_t xrows = x->dims[xr], xcols = x->dims[xr + 1];
  int64_t yrows = y->dims[yr], ycols = y->dims[yr + 1];
  int64_t m = adj_x ? xcols : xrows, k = adj_x ? xrows : xcols;
  int64_t k2 = adj_y ? ycols : yrows, n = adj_y ? yrows : ycols;
  if (k != k2) {
    snprintf(error, (size_t)error_len, "matrix size-incompatible");
    return -1;
  }
  od[rank] = m;
  od[rank + 1] = n;
  TF_DataType dtype = x->dtype;
  ref_tensor_alloc(&out[0], dtype, od, rank + 2);

  int64_t batches = out[0].elements / (m * n > 0 ? m * n : 1);
  if (m * n == 0)
    batches = 0;
  for (int64_t b = 0; b < batches; b++) {
    /* The x and y matrices of output matrix b. */
    int64_t rem = b, xb = 0, yb = 0, xs = 1, ys = 1;
    for (int d = rank - 1; d >= 0; d--) {
      int64_t cd = rem % od[d];
      rem /= od[d];
      xb += (xd[d] == 1 ? 0 : cd) * xs;
      yb += (yd[d] == 1 ? 0 : cd) * ys;
      xs *= xd[d];
      ys *= yd[d];
    }
    const double *xv = x->v + xb * m * k, *yv = y->v + yb * k * n;
    double *ov = out[0].v + b * m * n;
    for (int64_t i = 0; i < m; i++) {
      for (int64_t j = 0; j < n; j++) {
        double sum = 0;
        for (int64_t q = 0; q < k; q++) {
          double a = adj_x ? xv[q * m + i] : xv[i * k + q];
          double v = adj_y ? yv[j * k + q] : yv[q * n + j];
          sum += a * v;
        }
        ov[i * n + j] = ref_round_to(dtype, sum);
      }
    }
  }
  return 1;
}

/* x and y from different generators (the seed is the label). */
static struct ref_case *add_case(struct ref_cases *out, const char *op,
                                 TF_DataType dtype, const int64_t *xd, int xr,
                                 const int64_t *yd, int yr, bool adj_x,
                                 bool adj_y, TF_Code expect)
{
  bool legacy = strcmp(op, "MatMul") == 0 || strcmp(op, "_FusedMatMul") == 0;
  char xs[96] = "", ys[96] = "";
  for (int i = 0; i < xr; i++)
    snprintf(xs + strlen(xs), sizeof(xs) - strlen(xs), "%s%lld", i ? "," : "",
             (long long)xd[i]);
  for (int i = 0; i < yr; i++)
    snprintf(ys + strlen(ys), sizeof(ys) - strlen(ys), "%s%lld", i ? "," : "",
             (long long)yd[i]);
  struct ref_case *c = ref_case_add(out, op, "%s [%s]%s x [%s]%s", op, xs,
                                    adj_x ? "^T" : "", ys, adj_y ? "^T" : "");
  ref_case_input(c, dtype, xd, xr, REF_ANY);
  c->label[0] ^= 1;
  ref_case_input(c, dtype, yd, yr, REF_ANY);
  c->label[0] ^= 1;
  if (adj_x)
    ref_case_attr_bool(c, legacy ? "transpose_a" : "adj_x", true);
  if (adj_y)
    ref_case_attr_bool(c, legacy ? "transpose_b" : "adj_y", true);
  if (strcmp(op, "BatchMatMulV3") == 0)
    ref_case_attr_type(c, "Tout", dtype);
  c->expect_code = expect;
  return c;
}

/* Integer values: a long product's sums exact in float, within any
 * tolerance. */
static void round_inputs(struct ref_case *c)
{
  for (int i = 0; i < 2; i++)
    for (int64_t e = 0; e < c->inputs[i].elements; e++)
      c->inputs[i].v[e] = round(c->inputs[i].v[e]);
}

#define D2(a, b) ((const int64_t[]){(a), (b)})
#define D(...) ((const int64_t[]){__VA_ARGS__}), \
               (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static void matmul_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  const char *o = op->op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;

  /* Plain products: odd sizes around every block edge (the direct kernel
   * below 32^3 multiply-adds, the packed one above; K = 300 spans two K
   * slices of the packed kernel). */
  add_case(out, o, dtype, D(1, 1), D(1, 1), false, false, ok);
  /* Whole and partial tiles of the GPU kernels (64 and 32; K tiles of 16;
   * the 128 tile runs the same code on a partial tile), in each transpose
   * combination. */
  for (int t = 0; t < 4; t++) {
    bool ta = t & 1, tb = t & 2;
    int64_t xd[2] = {67, 37}, yd[2] = {37, 66};
    if (ta)
      xd[0] = 37, xd[1] = 67;
    if (tb)
      yd[0] = 66, yd[1] = 37;
    add_case(out, o, dtype, xd, 2, yd, 2, ta, tb, ok);
  }
  add_case(out, o, dtype, D(7, 5), D(5, 3), false, false, ok);
  add_case(out, o, dtype, D(33, 65), D(65, 17), false, false, ok);
  add_case(out, o, dtype, D(65, 33), D(33, 130), false, false, ok);
  add_case(out, o, dtype, D(9, 300), D(300, 47), false, false, ok);
  /* Few blocks and a long K (a filter gradient's shape): the packed
   * kernel's K splits side by side, then summed. */
  add_case(out, o, dtype, D(1100, 9), D(1100, 20), true, false, ok);
  add_case(out, o, dtype, D(1, 130), D(130, 1), false, false, ok);
  /* Whole 32-column blocks: a small float product reads B, and A in
   * either layout, in place; also split along K. */
  add_case(out, o, dtype, D(19, 70), D(70, 64), false, false, ok);
  add_case(out, o, dtype, D(70, 19), D(70, 64), true, false, ok);
  add_case(out, o, dtype, D(1100, 9), D(1100, 32), true, false, ok);
  /* Beyond the small products (32^3 ... 256^3 multiply-adds), up to 512
   * rows (one work-group along M) still read A and B in place: K over
   * three slices, A in either layout, B whole 32-column blocks; 520 rows
   * pack both, and B transposed is packed (A read in place). Integer
   * values: sums of up to 3000 terms exact in float. Millions of multiply-adds each: float only (the
   * others always pack), not on the simulator. */
  if (dtype == TF_FLOAT && !ref_on_oclgrind()) {
    /* The last three: A transposed, 204 rows (a partial block) over
     * three column blocks, packed (rows apart in memory), and over one,
     * read in place; five rows, one block of them, K whole in one launch
     * where the device's compute units leave it unsplit (up to 10). */
    static const struct {
      int64_t x[2], y[2];
      bool adj_x, adj_y;
    } exact[] = {
        {{40, 700}, {700, 640}, false, false},
        {{700, 40}, {700, 640}, true, false},
        {{520, 64}, {64, 512}, false, false},
        {{36, 704}, {700, 704}, false, true},
        {{1100, 204}, {1100, 96}, true, false},
        {{3000, 204}, {3000, 32}, true, false},
        {{5, 3000}, {3000, 1280}, false, false},
    };
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
      round_inputs(add_case(out, o, dtype, exact[i].x, 2, exact[i].y, 2,
                            exact[i].adj_x, exact[i].adj_y, ok));
  }
  /* Every transpose combination, small (direct) and packed. */
  for (int t = 1; t < 4; t++) {
    bool ta = t & 1, tb = t & 2;
    int64_t xs[2] = {7, 5}, ys[2] = {5, 3}, xl[2] = {33, 40}, yl[2] = {40, 65};
    if (ta) {
      xs[0] = 5, xs[1] = 7;
      xl[0] = 40, xl[1] = 33;
    }
    if (tb) {
      ys[0] = 3, ys[1] = 5;
      yl[0] = 65, yl[1] = 40;
    }
    add_case(out, o, dtype, xs, 2, ys, 2, ta, tb, ok);
    add_case(out, o, dtype, xl, 2, yl, 2, ta, tb, ok);
  }
  /* The direct kernel's CPU shape takes 16 columns at a time: a whole
   * run of them (loaded as a vector where B's columns are contiguous) and
   * a partial one. */
  add_case(out, o, dtype, D(6, 9), D(9, 16), false, false, ok);
  add_case(out, o, dtype, D(6, 9), D(9, 20), false, false, ok);
  /* NaN and Inf propagate to their row / column only. */
  struct ref_case *c =
      add_case(out, o, dtype, D(17, 40), D(40, 33), false, false, ok);
  c->inputs[0].v[3] = NAN;
  c->inputs[1].v[40 * 33 - 2] = INFINITY;
  /* Empty dims: K == 0 gives zeros, M or N == 0 an empty output. */
  add_case(out, o, dtype, D(3, 0), D(0, 4), false, false, ok);
  add_case(out, o, dtype, D(0, 5), D(5, 3), false, false, ok);
  add_case(out, o, dtype, D(4, 5), D(5, 0), false, false, ok);
  add_case(out, o, dtype, D(2, 3), D(4, 5), false, false, bad);
  add_case(out, o, dtype, D(2, 3), D(2, 3), true, true, bad);

  if (strcmp(o, "MatMul") == 0) {
    add_case(out, o, dtype, D(2, 3, 4), D(2, 4, 5), false, false, bad);
    add_case(out, o, dtype, D(3), D(3, 4), false, false, bad);
    return;
  }
  /* Batches of equal shape. */
  add_case(out, o, dtype, D(2, 3, 5, 7), D(2, 3, 7, 4), false, false, ok);
  add_case(out, o, dtype, D(3, 40, 33), D(3, 65, 40), true, true, ok);
  /* The packing of an operand whose depth (K) is contiguous, 16 depths at
   * a time: whole tiles only (K = 32), then a last partial one (K = 20),
   * with whole and partial blocks of rows (M = 17, N = 48). */
  add_case(out, o, dtype, D(2, 17, 32), D(2, 48, 32), false, true, ok);
  add_case(out, o, dtype, D(2, 17, 20), D(2, 20, 48), false, false, ok);
  /* Batches of small float products read their operands in place, each
   * matrix from its own offset: A in either layout, B as it is (whole
   * 32-column blocks), one with K split over the work-groups (integer
   * values: its sums of 1100 terms are exact in float, within any
   * tolerance). */
  add_case(out, o, dtype, D(3, 17, 40), D(3, 40, 64), false, false, ok);
  add_case(out, o, dtype, D(2, 40, 17), D(2, 40, 32), true, false, ok);
  round_inputs(
      add_case(out, o, dtype, D(2, 9, 1100), D(2, 1100, 32), false, false, ok));
  /* Small batched products (the direct kernel: attention's shapes) with
   * a whole and a partial run of 16 columns, in every transpose. */
  for (int t = 0; t < 4; t++) {
    bool ta = t & 1, tb = t & 2;
    int64_t xd[3] = {4, 6, 9}, yd[3] = {4, 9, 20};
    if (ta)
      xd[1] = 9, xd[2] = 6;
    if (tb)
      yd[1] = 20, yd[2] = 9;
    add_case(out, o, dtype, xd, 3, yd, 3, ta, tb, ok);
  }
  add_case(out, o, dtype, D(2, 3, 0), D(2, 0, 4), false, false, ok);
  add_case(out, o, dtype, D(0, 3, 4), D(0, 4, 5), false, false, ok);
  add_case(out, o, dtype, D(2, 3, 4), D(2, 5, 6), false, false, bad);
  add_case(out, o, dtype, D(3), D(3), false, false, bad);
  if (strcmp(o, "BatchMatMul") == 0) {
    add_case(out, o, dtype, D(2, 3, 4), D(3, 4, 5), false, false, bad);
    add_case(out, o, dtype, D(2, 3, 4), D(4, 5), false, false, bad);
    return;
  }
  /* Broadcast batches (V2, V3). */
  add_case(out, o, dtype, D(2, 1, 5, 7), D(3, 7, 4), false, false, ok);
  add_case(out, o, dtype, D(4, 33, 20), D(20, 40), false, false, ok);
  add_case(out, o, dtype, D(3, 20, 33), D(20, 40), true, false, ok);
  add_case(out, o, dtype, D(20, 33), D(3, 1, 40, 33), false, true, ok);
  add_case(out, o, dtype, D(1, 20, 33), D(3, 33, 40), false, false, ok);
  add_case(out, o, dtype, D(3, 1, 17, 40), D(2, 40, 64), false, false, ok);
  add_case(out, o, dtype, D(0, 4, 5), D(5, 3), false, false, ok);
  add_case(out, o, dtype, D(2, 3, 4), D(3, 4, 5), false, false, bad);
  /* x shared by a batch of y (a stride of 0 on x's side), transposed. */
  add_case(out, o, dtype, D(40, 33), D(5, 40, 20), true, false, ok);
  /* Broadcasts alternating between the operands: 6 collapsed batch dims,
   * more than a kernel takes (the host splits them). */
  add_case(out, o, dtype, D(2, 1, 2, 1, 3, 1, 3, 4),
           D(1, 2, 1, 3, 1, 2, 4, 5), false, false, ok);
}

/* ---- _FusedMatMul --------------------------------------------------------- */

/* Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid, GeluApproximate, GeluExact:
 * the activations _FusedMatMul's cases run through. */
#define NUM_FUSED_ACTIVATIONS 8

/* The fused_ops attribute: `ops` must outlive the case (static). */
static void attr_fused_ops(struct ref_case *c, const char *const *ops,
                           int count)
{
  c->attrs[c->num_attrs++] = (struct tfocl_attr){
      .name = "fused_ops",
      .kind = TFOCL_ATTR_STRING_LIST,
      .value.strings = {ops, count},
  };
}

static double activate(const char *act, double x, double alpha)
{
  if (act == NULL)
    return x;
  if (strcmp(act, "Relu") == 0)
    return x < 0 ? 0 : x; /* std::max(x, 0): NaN stays NaN */
  if (strcmp(act, "Relu6") == 0)
    return x < 0 ? 0 : x > 6 ? 6 : x;
  if (strcmp(act, "Elu") == 0)
    return x < 0 ? expm1(x) : x;
  if (strcmp(act, "LeakyRelu") == 0)
    return x < 0 ? x * alpha : x;
  if (strcmp(act, "Tanh") == 0)
    return tanh(x);
  if (strcmp(act, "Sigmoid") == 0)
    return 1 / (1 + exp(-x));
  if (strcmp(act, "GeluApproximate") == 0)
    return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  if (strcmp(act, "GeluExact") == 0)
    return 0.5 * x * (1 + erf(x / sqrt(2)));
  return NAN;
}

static int fused_compute(const struct ref_case *c, struct ref_tensor *out,
                         char *error, int error_len)
{
  const struct tfocl_attr *ops = ref_case_attr(c, "fused_ops");
  if (ops == NULL || ops->value.strings.count < 1 ||
      ops->value.strings.count > 2 ||
      strcmp(ops->value.strings.items[0], "BiasAdd") != 0 ||
      c->num_inputs != 3) {
    snprintf(error, (size_t)error_len, "unsupported fusion");
    return -1;
  }
  const char *act =
      ops->value.strings.count == 2 ? ops->value.strings.items[1] : NULL;
  double alpha = ref_case_attr_float_or(c, "leakyrelu_alpha", 0.2);
  int n = matmul_compute(c, out, error, error_len);
  if (n < 0)
    return n;
  const struct ref_tensor *x = &c->inputs[0], *bias = &c->inputs[2];
  int64_t cols = out[0].rank == 2 ? out[0].dims[1] : 0;
  bool ta = ref_case_attr_bool_or(c, "transpose_a", false);
  /* K == 0: TensorFlow fills zeros and leaves bias and activation out. */
  if (x->dims[ta ? 0 : 1] == 0)
    return 1;
  if (bias->rank != 1 || bias->dims[0] != cols) {
    snprintf(error, (size_t)error_len, "bad bias");
    return -1;
  }
  /* The device rounds the product to the output type only after bias and
   * activation: so does this (matmul_compute rounded; redo from float64
   * would need the sums, and rounding twice stays within the tolerance). */
  for (int64_t i = 0; i < out[0].elements; i++)
    out[0].v[i] = ref_round_to(
        out[0].dtype, activate(act, out[0].v[i] + bias->v[i % cols], alpha));
  return 1;
}

/* One _FusedMatMul case: x [m, k] (transposed if ta), y, bias [bias_n]. */
static struct ref_case *fused_case(struct ref_cases *out, TF_DataType dtype,
                                   const int64_t *xd, const int64_t *yd,
                                   bool ta, bool tb, int64_t bias_n,
                                   const char *const *ops, int num_ops,
                                   TF_Code expect)
{
  char fused[64] = "";
  for (int i = 0; i < num_ops; i++)
    snprintf(fused + strlen(fused), sizeof(fused) - strlen(fused), "%s%s",
             i ? "+" : "", ops[i]);
  struct ref_case *c = ref_case_add(
      out, "_FusedMatMul", "_FusedMatMul [%lld,%lld]%s x [%lld,%lld]%s %s",
      (long long)xd[0], (long long)xd[1], ta ? "^T" : "", (long long)yd[0],
      (long long)yd[1], tb ? "^T" : "", fused);
  ref_case_input(c, dtype, xd, 2, REF_ANY);
  c->label[0] ^= 1;
  ref_case_input(c, dtype, yd, 2, REF_ANY);
  c->label[0] ^= 2;
  if (bias_n >= 0)
    ref_case_input(c, dtype, &bias_n, 1, REF_ANY);
  c->label[0] ^= 3;
  if (ta)
    ref_case_attr_bool(c, "transpose_a", true);
  if (tb)
    ref_case_attr_bool(c, "transpose_b", true);
  attr_fused_ops(c, ops, num_ops);
  c->expect_code = expect;
  return c;
}

static void fused_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  (void)op;
  static const char *const bias_only[] = {"BiasAdd"};
  static const char *const with[NUM_FUSED_ACTIVATIONS][2] = {
      {"BiasAdd", "Relu"},    {"BiasAdd", "Relu6"},
      {"BiasAdd", "Elu"},     {"BiasAdd", "LeakyRelu"},
      {"BiasAdd", "Tanh"},    {"BiasAdd", "Sigmoid"},
      {"BiasAdd", "GeluApproximate"}, {"BiasAdd", "GeluExact"}};
  static const char *const softplus[] = {"BiasAdd", "Softplus"};
  static const char *const relu_only[] = {"Relu"};
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;

  /* Tiny (direct kernel), tiled / packed sizes with edges, transposes. */
  fused_case(out, dtype, D2(7, 5), D2(5, 3), false, false, 3, bias_only, 1,
             ok);
  fused_case(out, dtype, D2(65, 33), D2(33, 130), false, false, 130,
             bias_only, 1, ok);
  for (int a = 0; a < NUM_FUSED_ACTIVATIONS; a++) {
    bool ta = a & 1, tb = a & 2;
    int64_t xd[2] = {70, 37}, yd[2] = {37, 45};
    if (ta)
      xd[0] = 37, xd[1] = 70;
    if (tb)
      yd[0] = 45, yd[1] = 37;
    fused_case(out, dtype, xd, yd, ta, tb, 45, with[a], 2, ok);
    fused_case(out, dtype, D2(3, 4), D2(4, 5), false, false, 5, with[a], 2,
               ok);
  }
  /* NaN and infinities through the bias into each activation: what
   * TensorFlow's CPU kernels give (Relu and Relu6 keep NaN, as the Relu
   * op does; kernels/activations.clh). */
  static const double specials[6] = {NAN, INFINITY, -INFINITY, -0.0, 0.5,
                                     -0.5};
  for (int a = 0; a < NUM_FUSED_ACTIVATIONS; a++) {
    struct ref_case *sc = fused_case(out, dtype, D2(3, 4), D2(4, 6), false,
                                     false, -1, with[a], 2, ok);
    ref_case_input_values(sc, dtype, (int64_t[]){6}, 1, specials);
  }
  /* The packed kernel's own epilogue on its last K slice (K = 300: two
   * slices), whole 32-column blocks: a NaN in the bias stays NaN. */
  struct ref_case *c = fused_case(out, dtype, D2(40, 300), D2(300, 64), false,
                                  false, 64, with[0], 2, ok);
  c->inputs[2].v[3] = NAN;
  fused_case(out, dtype, D2(40, 300), D2(300, 64), false, false, 64, with[5], 2,
             ok);
  c = fused_case(out, dtype, D2(33, 20), D2(20, 17), false, false, 17, with[3],
                 2, ok);
  ref_case_attr_float(c, "leakyrelu_alpha", 0.3f);
  /* Empty: K == 0 gives zeros (no bias), M == 0 nothing. */
  fused_case(out, dtype, D2(3, 0), D2(0, 4), false, false, 4, with[0], 2, ok);
  fused_case(out, dtype, D2(0, 5), D2(5, 4), false, false, 4, with[0], 2, ok);
  /* What TensorFlow rejects. */
  fused_case(out, dtype, D2(3, 4), D2(4, 5), false, false, 5, softplus, 2,
             TF_UNIMPLEMENTED);
  fused_case(out, dtype, D2(3, 4), D2(4, 5), false, false, 5, relu_only, 1,
             TF_UNIMPLEMENTED);
  fused_case(out, dtype, D2(3, 4), D2(4, 5), false, false, 5, bias_only, 0,
             bad);
  fused_case(out, dtype, D2(3, 4), D2(4, 5), false, false, -1, bias_only, 1,
             bad);
  fused_case(out, dtype, D2(3, 4), D2(4, 5), false, false, 4, bias_only, 1,
             bad);
  fused_case(out, dtype, D2(3, 4), D2(5, 5), false, false, 5, bias_only, 1,
             bad);
  /* A 2-D bias. */
  c = fused_case(out, dtype, D2(3, 4), D2(4, 5), false, false, -1, bias_only,
                 1, bad);
  ref_case_input(c, dtype, D2(1, 5), 2, REF_ANY);
}

#define TOL 1e-5, 9e-5

const struct ref_op ref_ops_matmul[] = {
    {"MatMul", TOL, REF_ANY, matmul_cases, matmul_compute},
    {"BatchMatMul", TOL, REF_ANY, matmul_cases, matmul_compute},
    {"BatchMatMulV2", TOL, REF_ANY, matmul_cases, matmul_compute},
    {"BatchMatMulV3", TOL, REF_ANY, matmul_cases, matmul_compute},
    {"_FusedMatMul", TOL, REF_ANY, fused_cases, fused_compute},
    {.op = NULL},
};
