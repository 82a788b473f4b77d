/* The fused element-wise op's building blocks (kernels/fused.c).
 *
 * Not a program on its own: fused.c appends, for each distinct program of
 * the op (kernels/fused_program.h), a function evaluating the chain on
 * floats and the eight kernels that load the inputs, call it and store the
 * result (_same, _flat, _bcast3d, _bcast3d_mixed, _bcast3d_rows, _bcast3,
 * _bcast, _bcast64). Everything is
 * computed in float; a half value is rounded to half after the op that
 * makes it, as the unfused half kernels round on store, and stored as
 * ocl_half_bits_rte's bits: no cl_khr_fp16 needed.
 *
 * Each op is the same float expression as the unfused kernel's (binary.cl,
 * unary.cl), and contraction is off, so that a * b + c stays two roundings
 * as it is when Mul and AddV2 run one by one. */
#include "activations.clh"
#include "common.clh"

#pragma OPENCL FP_CONTRACT OFF

/* The _bcast3d_rows kernels' arguments: OCL_TENSOR_ARG, restrict. */
#define FUSED_ROW_ARG(T, name) \
  __global T *restrict name##_base, ulong name##_offset

#define FUSED_LD_f(p, i) ((p)[i])
#define FUSED_LD_l(p, i) ((p)[i])
#define FUSED_LD_h(p, i) vload_half((i), (p))
#define FUSED_ST_f(p, i, v) ((p)[i] = (v))
#define FUSED_ST_h(p, i, v) OCL_STORE_HALF(p, i, v)

/* x rounded to the nearest half (ties to even), kept as a float: what
 * a half store then vload_half give, without a round trip through
 * memory. Overflow goes to infinity, NaN stays NaN, subnormal halves are
 * kept. Selects, integer operations and one float add, no branch and no
 * rint (a call per element on PoCL: a 4M-element half chain took 36 ms,
 * TensorFlow's CPU 10). */
static float fused_round_half(float x)
{
  uint u = as_uint(x);
  uint sign = u & 0x80000000u;
  uint a = u ^ sign;
  /* Below 2^-14, half's subnormal grid (2^-24) is the ulp of 0.5: the
   * add rounds to it, the subtraction is exact. */
  float subnormal = (as_float(a) + 0.5f) - 0.5f;
  /* Drop 13 mantissa bits, ties to even. */
  uint r = (a + 0x0fffu + ((a >> 13) & 1u)) & ~0x1fffu;
  r = a < 0x38800000u ? as_uint(subnormal) : r;
  r = a >= 0x477ff000u ? 0x7f800000u : r; /* >= 65520: beyond 65504 */
  r = a >= 0x7f800000u ? a : r;           /* Inf, NaN */
  return as_float(sign | r);
}

/* ---- The ops, as binary.cl and unary.cl compute them --------------------- */

/* unary.def's fused rows: f_<op> on floats (f_<op>_grad for the
 * gradients, two operands in TensorFlow's order), l_<op> on int64 where
 * the row takes it, each the very expression the unfused kernel expands. */
#define FUSED_FN_PLAIN(F, F_GRAD, MATH) \
  static float F(float a) { return MATH; }
#define FUSED_FN_NEG FUSED_FN_PLAIN
#define FUSED_FN_ABS FUSED_FN_PLAIN
#define FUSED_FN_SIGN FUSED_FN_PLAIN
#define FUSED_FN_SQUARE FUSED_FN_PLAIN
#define FUSED_FN_ROUND FUSED_FN_PLAIN
#define FUSED_FN_INVERT FUSED_FN_PLAIN
#define FUSED_FN_GRAD_SHAPE(F, F_GRAD, MATH) \
  static float F_GRAD(float a, float b) { return MATH; }
#define FUSED_FN_GRAD_ELEMENTS FUSED_FN_GRAD_SHAPE
#define FUSED_LONG_FN_FLOAT(L, INT_MATH)
#define FUSED_LONG_FN_INT64(L, INT_MATH) \
  static long L(long a) { return INT_MATH; }
#define CT float
#define UNARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,    \
                       INT_MATH, ENUM, OPCODE, FUSED_TYPES, COST)            \
  FUSED_FN_##KIND(f_##KERNEL, f_##KERNEL##_grad, MATH)                       \
  FUSED_LONG_FN_##FUSED_TYPES(l_##KERNEL, INT_MATH)
#include "unary.def"
#undef CT

/* binary.def's fused rows, likewise: f_<FUSED_TEXT>, l_<FUSED_TEXT>. */
#define FUSED_LONG_FN2_FLOAT(L, INT_MATH)
#define FUSED_LONG_FN2_INT64(L, INT_MATH) \
  static long L(long a, long b) { return INT_MATH; }
#define CT float
#define BINARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,   \
                        CASES, MATH, INT_MATH, ENUM, OPCODE, FUSED_TEXT,     \
                        FUSED_TYPES, COST)                                   \
  static float f_##FUSED_TEXT(float a, float b) { return MATH; }             \
  FUSED_LONG_FN2_##FUSED_TYPES(l_##FUSED_TEXT, INT_MATH)
#include "binary.def"
#undef CT

/* The generated part follows. */
