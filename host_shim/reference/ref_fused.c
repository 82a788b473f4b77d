/* Reference of _TfoclFusedElementwise (kernels/fused.c): the program
 * (kernels/fused_program.h) evaluated per output element with the
 * unfused ops' own references (ref_unary.c, ref_binary.c), each value
 * rounded to its dtype as the unfused ops round on store, over the NumPy
 * broadcast of the inputs.
 *
 * Tolerance: rtol 1e-5, atol 1e-5. The device's built-ins (exp, log, tanh,
 * rsqrt: a few ulp) differ from the float64 values, and a later op carries
 * that on; a subtraction that cancels leaves an absolute error of about an
 * ulp of its larger operand (the cases' values stay below ~20, ulp 2e-6).
 * Chains of + - * / alone match to the bit on PoCL; tests/ops/test_fused.c
 * holds the fused op to the unfused ops bit for bit, half rounding
 * included. half is widened by the harness as for every op. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../kernels/fused_program.h"
#include "reference.h"

static bool is_grad(int op) { return op >= FUSED_RELU_GRAD; }

static int fused_compute(const struct ref_case *c, struct ref_tensor *out,
                         char *error, int error_len)
{
  const struct tfocl_attr *program = ref_case_attr(c, "program");
  const struct tfocl_attr *constants = ref_case_attr(c, "constants");
  const struct tfocl_attr *t = ref_case_attr(c, "T");
  int dtypes[FUSED_MAX_INPUTS];
  struct fused_program p;
  char why[256];

  if (program == NULL || t == NULL || c->num_inputs > FUSED_MAX_INPUTS) {
    snprintf(error, (size_t)error_len, "no program, no T or too many inputs");
    return -1;
  }
  for (int k = 0; k < c->num_inputs; k++)
    dtypes[k] = (int)c->inputs[k].dtype;
  if (!fused_program_decode(
          program->value.ints.items, (size_t)program->value.ints.count,
          constants ? constants->value.floats.items : NULL,
          constants ? (size_t)constants->value.floats.count : 0, dtypes,
          (size_t)c->num_inputs, (int)t->value.type, &p, why, sizeof(why))) {
    snprintf(error, (size_t)error_len, "%s", why);
    return -1;
  }

  /* The tiled op: input k is Tile(input k, its multiples), its dims
   * repeated[k]. */
  const struct tfocl_attr *tiles = ref_case_attr(c, "tiles");
  int64_t repeated[FUSED_MAX_INPUTS][REF_MAX_DIMS];
  int64_t at_tile = 0;
  for (int k = 0; k < c->num_inputs; k++) {
    const struct ref_tensor *x = &c->inputs[k];
    int64_t len = 0;
    if (tiles != NULL && at_tile < tiles->value.ints.count)
      len = tiles->value.ints.items[at_tile++];
    if (len != 0 && len != x->rank) {
      snprintf(error, (size_t)error_len, "multiples of input %d", k);
      return -1;
    }
    for (int d = 0; d < x->rank; d++)
      repeated[k][d] =
          x->dims[d] * (len ? tiles->value.ints.items[at_tile + d] : 1);
    at_tile += len;
  }

  /* NumPy broadcast of every (tiled) input. */
  int rank = 0;
  int64_t dims[REF_MAX_DIMS];
  for (int k = 0; k < c->num_inputs; k++)
    rank = c->inputs[k].rank > rank ? c->inputs[k].rank : rank;
  for (int d = 0; d < rank; d++) {
    dims[d] = 1;
    for (int k = 0; k < c->num_inputs; k++) {
      const struct ref_tensor *x = &c->inputs[k];
      int at = d - (rank - x->rank);
      int64_t v = at >= 0 ? repeated[k][at] : 1;
      if (v == 1 || v == dims[d])
        continue;
      if (dims[d] != 1) {
        snprintf(error, (size_t)error_len, "incompatible shapes");
        return -1;
      }
      dims[d] = v;
    }
  }
  ref_tensor_alloc(&out[0], (TF_DataType)p.out_dtype, dims, rank);

  double v[FUSED_MAX_VALUES];
  int n = p.num_inputs;
  for (int64_t i = 0; i < out[0].elements; i++) {
    for (int k = 0; k < n; k++) {
      const struct ref_tensor *x = &c->inputs[k];
      int64_t rem = i, index = 0, stride = 1;
      for (int d = rank - 1; d >= 0; d--) {
        int64_t coord = rem % dims[d];
        rem /= dims[d];
        int at = d - (rank - x->rank);
        if (at < 0)
          continue;
        /* A tile's copies read the same elements again. */
        if (repeated[k][at] != 1)
          index += coord % x->dims[at] * stride;
        stride *= x->dims[at];
      }
      v[k] = x->v[index];
    }
    for (int j = 0; j < p.num_insns; j++) {
      const struct fused_insn *in = &p.insns[j];
      TF_DataType dtype = (TF_DataType)in->dtype;
      const char *name = fused_op_tf_name(in->op);
      double r;
      if (in->op == FUSED_CONST)
        r = p.constants[in->a];
      else if (in->op == FUSED_CAST)
        r = v[in->a];
      else if (fused_op_arity(in->op) == 1)
        r = ref_unary_value(name, dtype, v[in->a]);
      else if (is_grad(in->op))
        r = ref_grad_value(name, v[in->a], v[in->b]);
      else
        r = ref_binary_value(name, dtype, v[in->a], v[in->b]);
      v[n + j] = ref_round_to(dtype, r);
    }
    out[0].v[i] = v[n + p.num_insns - 1];
  }
  return 1;
}

/* ---- Cases ------------------------------------------------------------------ */

/* A program written against the case's dtype: T in a dtype slot (an
 * input's, CONST's or CAST's b, the output) is the case's. */
#define T (-2)
#define F FUSED_DT_FLOAT
#define H FUSED_DT_HALF
#define I FUSED_DT_INT64

struct program_case {
  const char *name;
  int num_inputs;
  int input_dtypes[FUSED_MAX_INPUTS];
  enum ref_domain domains[FUSED_MAX_INPUTS];
  int out_dtype;
  int num_insns;
  int64_t insns[3 * 18];
  int num_constants;
  float constants[4];
  /* Only for this case dtype (0: both). */
  TF_DataType only;
};

static const struct program_case programs[] = {
    /* Keras' Adam: m + (grad - m) * (1 - beta_1). */
    {"adam_m", 2, {T, T}, {REF_ANY, REF_ANY}, T, 4,
     {FUSED_SUB, 0, 1, FUSED_CONST, 0, T, FUSED_MUL, 2, 3, FUSED_ADD, 1, 4},
     1, {0.1f}, 0},
    /* var - m * lr / (sqrt(v) + epsilon): a scalar lr. */
    {"adam_var", 4, {T, T, T, T}, {REF_ANY, REF_ANY, REF_POSITIVE, REF_POSITIVE},
     T, 6,
     {FUSED_SQRT, 2, -1, FUSED_CONST, 0, T, FUSED_ADD, 4, 5, FUSED_MUL, 1, 3,
      FUSED_DIV, 7, 6, FUSED_SUB, 0, 8},
     1, {1e-7f}, 0},
    /* Activations: relu6(8 tanh(x) sigmoid(y)) + elu(x), relu'd, then
     * clamped by y and x. */
    {"activations", 2, {T, T}, {REF_ANY, REF_ANY}, T, 11,
     {FUSED_TANH, 0, -1, FUSED_SIGMOID, 1, -1, FUSED_MUL, 2, 3, FUSED_CONST,
      0, T, FUSED_MUL, 4, 5, FUSED_RELU6, 6, -1, FUSED_ELU, 0, -1, FUSED_ADD,
      7, 8, FUSED_RELU, 9, -1, FUSED_MAXIMUM, 10, 1, FUSED_MINIMUM, 11, 0},
     1, {8.0f}, 0},
    /* The gradients chained: relu6'(tanh'(y, sigmoid'(y, relu'(g, f))), f). */
    {"gradients", 3, {T, T, T}, {REF_ANY, REF_ANY, REF_UNIT}, T, 4,
     {FUSED_RELU_GRAD, 0, 1, FUSED_SIGMOID_GRAD, 2, 3, FUSED_TANH_GRAD, 2, 4,
      FUSED_RELU6_GRAD, 5, 1},
     0, {0}, 0},
    /* Keras' exact gelu, x * 0.5 * erfc(-x / sqrt(2)), plus erf(y), and
     * the square-root gradients of y = sqrt(|x| + 1). */
    {"gelu_sqrt", 2, {T, T}, {REF_ANY, REF_ANY}, T, 14,
     {FUSED_CONST, 0, T, FUSED_MUL, 0, 2, FUSED_CONST, 1, T, FUSED_MUL, 0, 4,
      FUSED_ERFC, 5, -1, FUSED_MUL, 6, 3, FUSED_ERF, 1, -1, FUSED_ADD, 7, 8,
      FUSED_ABS, 0, -1, FUSED_CONST, 2, T, FUSED_ADD, 10, 11, FUSED_SQRT, 12,
      -1, FUSED_SQRT_GRAD, 13, 9, FUSED_RSQRT_GRAD, 13, 14},
     3, {0.5f, -0.70710678f, 1.0f}, 0},
    /* The rest of the unary ops and SquaredDifference. */
    {"misc", 2, {T, T}, {REF_ANY, REF_ANY}, T, 12,
     {FUSED_NEG, 0, -1, FUSED_ABS, 2, -1, FUSED_SQUARE, 1, -1, FUSED_CONST,
      0, T, FUSED_ADD, 3, 5, FUSED_RSQRT, 6, -1, FUSED_LOG, 6, -1, FUSED_EXP,
      7, -1, FUSED_RECIPROCAL, 6, -1, FUSED_SQUARED_DIFFERENCE, 8, 10,
      FUSED_MUL, 11, 9, FUSED_ADD, 12, 4},
     1, {1.0f}, 0},
    /* A value read twice: ((x - y)^2 + (x - y)) * 0.5 with the same
     * x - y. */
    {"shared", 2, {T, T}, {REF_ANY, REF_ANY}, T, 5,
     {FUSED_SUB, 0, 1, FUSED_MUL, 2, 2, FUSED_ADD, 3, 2, FUSED_CONST, 0, T,
      FUSED_MUL, 4, 5},
     1, {0.5f}, 0},
    /* Keras' Adam step size, t a tensor: lr * sqrt(1 - 0.25^t) /
     * (1 - 0.5^t) (Adam's 0.999 and 0.9 would leave the float pow's last
     * ulp to the cancellation), times x / (t - 1) with DivNoNan's 0 at
     * t = 1. */
    {"adam_alpha", 3, {T, T, T}, {REF_POSITIVE, REF_POSITIVE, REF_ANY}, T, 13,
     {FUSED_CONST, 0, T, FUSED_POW, 3, 0, FUSED_CONST, 1, T, FUSED_POW, 5, 0,
      FUSED_CONST, 2, T, FUSED_SUB, 7, 4, FUSED_SQRT, 8, -1, FUSED_SUB, 7, 6,
      FUSED_DIV, 9, 10, FUSED_MUL, 1, 11, FUSED_SUB, 0, 7,
      FUSED_DIV_NO_NAN, 2, 13, FUSED_MUL, 12, 14},
     3, {0.25f, 0.5f, 1.0f}, 0},
    /* Keras' step counter: int64 it + 1, 0.5^(it + 1) * x, and the int64
     * ops: max(min(-((it + 1)^2 - it), -it), it) * 3 - it, added. */
    {"int64_step", 2, {I, T}, {REF_ANY, REF_ANY}, T, 17,
     {FUSED_CONST, 0, I, FUSED_ADD, 0, 2, FUSED_CAST, 3, T, FUSED_CONST, 1, T,
      FUSED_POW, 5, 4, FUSED_MUL, 6, 1, FUSED_SQUARE, 3, -1, FUSED_SUB, 8, 0,
      FUSED_NEG, 9, -1, FUSED_NEG, 0, -1, FUSED_MINIMUM, 10, 11, FUSED_MAXIMUM,
      12, 0, FUSED_CONST, 2, I, FUSED_MUL, 13, 14, FUSED_SUB, 15, 0,
      FUSED_CAST, 16, T, FUSED_ADD, 7, 17},
     3, {1.0f, 0.5f, 3.0f}, 0},
    /* Mixed precision: half x, float y; float(half(float(x) * y) + x). */
    {"cast_to_float", 2, {H, F}, {REF_ANY, REF_ANY}, F, 5,
     {FUSED_CAST, 0, F, FUSED_MUL, 2, 1, FUSED_CAST, 3, H, FUSED_ADD, 4, 0,
      FUSED_CAST, 5, F},
     0, {0}, TF_FLOAT},
    /* ... and ending in half: half(float(x) * y) + x. */
    {"cast_to_half", 2, {H, F}, {REF_ANY, REF_ANY}, H, 4,
     {FUSED_CAST, 0, F, FUSED_MUL, 2, 1, FUSED_CAST, 3, H, FUSED_ADD, 4, 0},
     0, {0}, TF_HALF},
};

static int resolve(int dtype, TF_DataType case_dtype)
{
  return dtype == T ? (int)case_dtype : dtype;
}

/* A case of program `p` (attributes only; the caller adds the inputs). */
static struct ref_case *program_case_add(struct ref_cases *out,
                                         const struct ref_op *op,
                                         const struct program_case *p,
                                         TF_DataType dtype, const char *what)
{
  int64_t insns[3 * 18];
  struct ref_case *c = ref_case_add(out, op->op, "%s %s", p->name, what);
  for (int j = 0; j < 3 * p->num_insns; j++) {
    insns[j] = p->insns[j];
    int64_t opcode = p->insns[j - j % 3];
    if (j % 3 == 2 && (opcode == FUSED_CONST || opcode == FUSED_CAST))
      insns[j] = resolve((int)p->insns[j], dtype);
  }
  ref_case_attr_ints(c, "program", insns, 3 * p->num_insns);
  if (p->num_constants > 0) {
    /* The values are static: the attribute may point at them. */
    struct tfocl_attr *a = &c->attrs[c->num_attrs++];
    *a = (struct tfocl_attr){.name = "constants",
                             .kind = TFOCL_ATTR_FLOAT_LIST,
                             .value.floats = {p->constants, p->num_constants}};
  }
  ref_case_attr_type(c, "T", (TF_DataType)resolve(p->out_dtype, dtype));
  return c;
}

static void inputs_of_shapes(struct ref_case *c, const struct program_case *p,
                             TF_DataType dtype, const int64_t (*shapes)[8],
                             const int *ranks, int num_shapes)
{
  for (int k = 0; k < p->num_inputs; k++) {
    c->label[0] = (char)('a' + k); /* a different generator per input */
    ref_case_input(c, (TF_DataType)resolve(p->input_dtypes[k], dtype),
                   shapes[k % num_shapes], ranks[k % num_shapes],
                   p->domains[k]);
  }
  c->label[0] = p->name[0];
}

static void fused_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  static const double special[] = {NAN,  INFINITY, -INFINITY, 0.0,  -0.0,
                                   1e30, -1e30,    3.5,       -2.25, 0.5,
                                   1.0,  -1.0,     6.0,       -0.75};
  enum { NS = sizeof(special) / sizeof(special[0]) };

  for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
    const struct program_case *p = &programs[i];
    if (p->only != 0 && p->only != dtype)
      continue;
    /* Equal shapes, odd sizes: the _same kernel. */
    static const int64_t flat[][8] = {{1031}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "[1031]"), p, dtype,
                     flat, (const int[]){1}, 1);
    static const int64_t cube[][8] = {{3, 5, 7}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "[3,5,7]"), p,
                     dtype, cube, (const int[]){3}, 1);
    /* Scalars beside a tensor: the _flat kernel. */
    static const int64_t with_scalars[][8] = {{2, 3, 7}, {0}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "scalars"), p,
                     dtype, with_scalars, (const int[]){3, 0}, 2);
    /* General broadcasting, and the scalar case of them all. */
    static const int64_t bcast[][8] = {{5, 1, 7}, {3, 1}, {7}, {1, 3, 7}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "broadcast"), p,
                     dtype, bcast, (const int[]){3, 2, 1, 3}, 4);
    /* Per-channel terms (batch normalisation's) over rows of 24: the
     * _bcast3d kernel; a 3-dim broadcast with an innermost dim of 20, one
     * input constant along it: _bcast3d_mixed. */
    static const int64_t channels[][8] = {{11, 5, 24}, {24}, {1, 24}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "per channel"), p,
                     dtype, channels, (const int[]){3, 1, 2}, 3);
    static const int64_t three[][8] = {{3, 7, 20}, {3, 1, 20}, {1, 7, 1}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "3 dims"), p, dtype,
                     three, (const int[]){3, 3, 3}, 3);
    /* Row statistics beside per-column terms (layer normalisation's), with
     * rows longer than a work-group: _bcast3d_mixed, tails in both
     * NDRange dims. */
    static const int64_t rows[][8] = {{6, 300}, {6, 1}, {300}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "rows"), p, dtype,
                     rows, (const int[]){2, 2, 1}, 3);
    /* 3 dims with an innermost too short for lanes: _bcast3's split. */
    static const int64_t short3[][8] = {{2, 5, 3}, {2, 1, 3}, {1, 5, 1}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "short rows"), p,
                     dtype, short3, (const int[]){3, 3, 3}, 3);
    static const int64_t scalar[][8] = {{0}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "all scalars"), p,
                     dtype, scalar, (const int[]){0}, 1);
    /* Eight alternating dims: the most one broadcast launch takes. */
    static const int64_t wide[][8] = {{2, 1, 2, 1, 2, 1, 2, 3},
                                      {1, 2, 1, 2, 1, 2, 1, 3}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "8 dims"), p, dtype,
                     wide, (const int[]){8, 8}, 2);
    /* Four collapsed dims, each input broadcast in one: on a CPU device a
     * rows launch per index of the first. */
    static const int64_t four[][8] = {{3, 1, 32, 32}, {3, 16, 1, 32}, {32}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "4 dims"), p, dtype,
                     four, (const int[]){4, 4, 1}, 3);
    /* Four with short rows: on a CPU device spans of 512 walked as an
     * odometer (_bcast_span), the second starting inside a row. */
    static const int64_t spans[][8] = {{3, 5, 7, 11}, {3, 1, 7, 1}, {11}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "4 short dims"), p,
                     dtype, spans, (const int[]){4, 4, 1}, 3);
    static const int64_t empty[][8] = {{4, 0}, {1}};
    inputs_of_shapes(program_case_add(out, op, p, dtype, "empty"), p, dtype,
                     empty, (const int[]){2, 1}, 2);
    /* Every special value against every other in the first two inputs. */
    struct ref_case *c = program_case_add(out, op, p, dtype, "specials");
    double x[NS * NS], y[NS * NS];
    for (int a = 0; a < NS; a++)
      for (int b = 0; b < NS; b++) {
        x[a * NS + b] = special[a];
        y[a * NS + b] = special[b];
      }
    for (int k = 0; k < p->num_inputs; k++) {
      TF_DataType t = (TF_DataType)resolve(p->input_dtypes[k], dtype);
      if (t == TF_INT64) {
        /* No NaN or infinity to an integer: small ones. */
        double ints[NS * NS];
        for (int e = 0; e < NS * NS; e++)
          ints[e] = (double)(e % 11) - 5.0;
        ref_case_input_values(c, t, (int64_t[]){NS, NS}, 2, ints);
      } else if (k < 2)
        ref_case_input_values(c, t, (int64_t[]){NS, NS}, 2, k ? y : x);
      else
        ref_case_input_values(c, t, (int64_t[]){1}, 0, (double[]){0.5});
    }
    /* Shapes that do not broadcast. */
    static const int64_t bad[][8] = {{2, 3}, {4}};
    c = program_case_add(out, op, p, dtype, "incompatible");
    inputs_of_shapes(c, p, dtype, bad, (const int[]){2, 1}, 2);
    c->expect_code = TF_INVALID_ARGUMENT;
  }

  /* Malformed programs fail the construction: the graph, not the
   * plugin, may be wrong. */
  static const struct {
    const char *what;
    int num_insns;
    int64_t insns[9];
    int out; /* the T attribute, T for the case's */
  } broken[] = {
      {"forward operand", 2, {FUSED_SUB, 0, 3, FUSED_NEG, 2, -1}, T},
      {"unknown opcode", 1, {99, 0, 1}, T},
      {"constant out of range", 2, {FUSED_CONST, 3, T, FUSED_ADD, 0, 2}, T},
      {"unary with a second operand", 1, {FUSED_NEG, 0, 1}, T},
      {"negative operand", 1, {FUSED_ADD, -1, 0}, T},
      {"cast to int32", 1, {FUSED_CAST, 0, 3}, T},
      {"output dtype", 1, {FUSED_ADD, 0, 1}, 0},
      {"empty program", 0, {0}, T},
  };
  for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
    int64_t insns[9];
    struct ref_case *c =
        ref_case_add(out, op->op, "malformed: %s", broken[i].what);
    for (int j = 0; j < 3 * broken[i].num_insns; j++)
      insns[j] = broken[i].insns[j] == T ? (int64_t)dtype : broken[i].insns[j];
    ref_case_attr_ints(c, "program", insns, 3 * broken[i].num_insns);
    /* The wrong output dtype: the other one of float and half. */
    TF_DataType out_type = broken[i].out == T ? dtype
                           : dtype == TF_FLOAT ? TF_HALF
                                               : TF_FLOAT;
    ref_case_attr_type(c, "T", out_type);
    ref_case_input(c, dtype, (int64_t[]){5}, 1, REF_ANY);
    ref_case_input(c, dtype, (int64_t[]){5}, 1, REF_ANY);
    c->expect_code = TF_INVALID_ARGUMENT;
  }
  /* More inputs than a program takes. */
  struct ref_case *c = ref_case_add(out, op->op, "malformed: 9 inputs");
  ref_case_attr_ints(c, "program", (int64_t[]){FUSED_ADD, 0, 1}, 3);
  ref_case_attr_type(c, "T", dtype);
  for (int k = 0; k < FUSED_MAX_INPUTS + 1; k++)
    ref_case_input(c, dtype, (int64_t[]){3}, 1, REF_ANY);
  c->expect_code = TF_INVALID_ARGUMENT;
}

/* The tiled op: (a - b) * c + b with inputs standing for Tiles of
 * themselves: a [1, 1, 1, C] repeated over N, H, W beside full inputs and
 * alone, a repeat of dims larger than 1, two tiled inputs, rank 2 beside
 * rank 4, and the errors (multiples of another length; one dim repeated
 * two ways). */
static void tiled_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  static const int64_t program[] = {FUSED_SUB, 0,         1, FUSED_MUL, 3,
                                    2,         FUSED_ADD, 4, 1};
  enum { L = 4 + 4 + 4 };
  static const struct {
    const char *what;
    int64_t shapes[3][4];
    int ranks[3];
    int num_tiles;
    int64_t tiles[L];
    TF_Code code;
  } cases[] = {
      {"broadcast",
       {{4, 5, 6, 20}, {1, 1, 1, 20}, {4, 5, 6, 20}},
       {4, 4, 4},
       7,
       {0, 4, 4, 5, 6, 1, 0},
       TF_OK},
      {"broadcast alone",
       {{1, 1, 1, 20}, {1, 1, 1, 20}, {1, 1, 1, 20}},
       {4, 4, 4},
       7,
       {4, 3, 5, 6, 1, 0, 0},
       TF_OK},
      {"repeat",
       {{4, 5, 6, 20}, {2, 1, 3, 20}, {4, 5, 6, 20}},
       {4, 4, 4},
       7,
       {0, 4, 2, 5, 2, 1, 0},
       TF_OK},
      {"two tiled",
       {{1, 1, 1, 20}, {2, 1, 3, 20}, {4, 5, 6, 20}},
       {4, 4, 4},
       11,
       {4, 4, 5, 6, 1, 4, 2, 5, 2, 1, 0},
       TF_OK},
      {"rank 2 beside rank 4",
       {{4, 5, 6, 20}, {1, 20}, {4, 5, 6, 20}},
       {4, 2, 4},
       5,
       {0, 2, 6, 1, 0},
       TF_OK},
      {"multiples of another length",
       {{1, 1, 1, 20}, {4, 5, 6, 20}, {4, 5, 6, 20}},
       {4, 4, 4},
       6,
       {3, 4, 5, 6, 0, 0},
       TF_INVALID_ARGUMENT},
      {"one dim repeated two ways",
       {{2, 20}, {3, 20}, {1, 20}},
       {2, 2, 2},
       7,
       {2, 3, 1, 2, 2, 1, 0},
       TF_UNIMPLEMENTED},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct ref_case *c = ref_case_add(out, op->op, "%s", cases[i].what);
    ref_case_attr_ints(c, "program", program, 9);
    ref_case_attr_ints(c, "tiles", cases[i].tiles, cases[i].num_tiles);
    ref_case_attr_type(c, "T", dtype);
    for (int k = 0; k < 3; k++) {
      c->label[0] = (char)('a' + k);
      ref_case_input(c, dtype, cases[i].shapes[k], cases[i].ranks[k], REF_ANY);
    }
    c->label[0] = cases[i].what[0];
    c->expect_code = cases[i].code;
  }
}

const struct ref_op ref_ops_fused[] = {
    {FUSED_OP_NAME, 1e-5, 1e-5, REF_ANY, fused_cases, fused_compute},
    {FUSED_TILED_OP_NAME, 1e-5, 1e-5, REF_ANY, tiled_cases, fused_compute},
    {NULL, 0, 0, REF_ANY, NULL, NULL},
};
