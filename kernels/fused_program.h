/* The program of a _TfoclFusedElementwise node: a chain (in general a
 * tree, with shared subexpressions) of element-wise ops that the graph
 * pass (pass_elementwise.c) takes out of a graph and one kernel
 * (kernels/fused.c) evaluates per output element. Plain C, no OpenCL and
 * no TensorFlow: the pass that writes programs, the kernel that reads them,
 * the host reference and the fuzz target share this file.
 *
 * The op (registered by the plugin at TF_InitKernel, kernels/fused.c):
 *
 *   _TfoclFusedElementwise(args: Targs) -> output: T
 *     Targs: list(type) >= 1     each float or half
 *     T: {float, half}
 *     program: list(int)         3 integers per instruction
 *     constants: list(float) = []
 *
 * Values: v[0 .. n) are the n inputs; instruction j defines v[n + j]; the
 * output is the last value, broadcast (NumPy rules) to the broadcast shape
 * of all inputs. An instruction is (opcode, a, b):
 *
 *   FUSED_CONST   v = constants[a] as dtype b (a scalar)
 *   FUSED_CAST    v = v[a] converted to dtype b
 *   unary ops     v = op(v[a]); b is -1
 *   binary ops    v = op(v[a], v[b]); both of one dtype
 *
 * Every value is float, half or int64 (TF_FLOAT 1, TF_HALF 19, TF_INT64 9).
 * float and half are computed in float; a half value is rounded to half
 * after the instruction that makes it, as the unfused ops round on store,
 * so a fused chain gives what the ops one by one give. int64 values (Keras'
 * step counter on its way to a float) take only Add, Sub, Mul, Maximum,
 * Minimum, Neg and Square, wrapping around as TensorFlow's integer
 * kernels do, and a Cast to float or half; nothing converts to int64, and
 * the output is float or half. An int64 CONST holds an integer the float
 * represents exactly. The whole chain gives what the ops one
 * by one give. Opcode numbers are part of the format: never renumber. */
#ifndef TFOCL_KERNELS_FUSED_PROGRAM_H_
#define TFOCL_KERNELS_FUSED_PROGRAM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FUSED_OP_NAME "_TfoclFusedElementwise"
/* The same with some inputs standing for a Tile of themselves (the graph
 * pass's bypassed Tiles): attribute "tiles" lists, per input, the length
 * of its multiples (0: none) and then the multiples. A separate op because
 * a shape function cannot read attributes: this one's leaves a dim that
 * every input has as 1 unknown. */
#define FUSED_TILED_OP_NAME "_TfoclFusedElementwiseTiled"
/* The longest multiples a tiled input takes: split in two where a tile
 * repeats a whole dim, the index space stays within 8 dims. */
#define FUSED_TILE_RANK_MAX 4

#define FUSED_DT_FLOAT 1
#define FUSED_DT_INT64 9
#define FUSED_DT_HALF 19

/* Limits of one program. 8 inputs keep a kernel's arguments (a buffer and
 * an offset per tensor, 8 collapsed dims of strides per input) within the
 * 1024 bytes every full-profile OpenCL device accepts. */
#define FUSED_MAX_INPUTS 8
#define FUSED_MAX_INSNS 64
#define FUSED_MAX_CONSTANTS 64
#define FUSED_MAX_VALUES (FUSED_MAX_INPUTS + FUSED_MAX_INSNS)

enum fused_opcode {
  FUSED_CONST = 1,
  FUSED_CAST = 2,
  /* unary ops (10 to 39) and their gradients (60 to 79):
   * kernels/unary.def's fused rows, FUSED_<ENUM> = OPCODE */
#define UNARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,    \
                       INT_MATH, ENUM, OPCODE, FUSED_TYPES, COST)            \
  FUSED_##ENUM = OPCODE,
#include "unary.def"
  /* binary ops (40 to 59): kernels/binary.def's fused rows */
#define BINARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,   \
                        CASES, MATH, INT_MATH, ENUM, OPCODE, FUSED_TEXT,     \
                        FUSED_TYPES, COST)                                   \
  FUSED_##ENUM = OPCODE,
#include "binary.def"
};

struct fused_insn {
  int op;    /* enum fused_opcode */
  int a, b;  /* operands (value indices), or CONST's index, -1 unused */
  int dtype; /* of the value it defines */
};

/* A decoded, checked program. */
struct fused_program {
  int num_inputs;
  int input_dtypes[FUSED_MAX_INPUTS];
  int num_insns;
  struct fused_insn insns[FUSED_MAX_INSNS];
  int num_constants;
  float constants[FUSED_MAX_CONSTANTS];
  int out_dtype;
};

/* Checks a program as it comes from a graph (anything at all) and decodes
 * it. False, with the reason in why, for: a count out of the limits, a
 * dtype other than float/half/int64 (float/half for the output and a
 * CAST's destination), an unknown opcode, an op int64 does not take, an
 * operand that is not an earlier value, a CONST index out of range or an
 * int64 CONST that is no integer, operands of two dtypes, an unused
 * operand slot other than -1, or a last value whose dtype is not
 * out_dtype. Never reads past the arrays' stated lengths. */
bool fused_program_decode(const int64_t *program, size_t program_len,
                          const float *constants, size_t num_constants,
                          const int *input_dtypes, size_t num_inputs,
                          int out_dtype, struct fused_program *out,
                          char *why, size_t why_size);

/* Number of operands of an opcode (0 for CONST, 1 for CAST and the unary
 * ops, 2 for the binary ones), -1 for an unknown opcode. */
int fused_op_arity(int op);

/* The opcode of TensorFlow op `name` (len bytes, not NUL-terminated) when
 * it is one of the element-wise ops a program can hold (Cast and Const
 * aside, which the pass handles itself), else 0. */
int fused_opcode_of(const uint8_t *name, size_t len);

/* Whether an op takes int64 operands. */
bool fused_op_takes_int64(int op);

/* Whether an op calls a libm function per element (exp, tanh, pow, ...):
 * the graph pass does not evaluate such an op once per consumer. */
bool fused_op_is_costly(int op);

/* TensorFlow's name of an op ("AddV2" for FUSED_ADD), NULL for CONST, CAST
 * and unknown opcodes. */
const char *fused_op_tf_name(int op);

/* A short name of an opcode ("sub"), for texts and messages. */
const char *fused_op_text(int op);

/* A canonical text of the program, e.g.
 *   "f,f,h>f:sub(0,1);cf(3dcccccd);mul(3,4)"
 * equal for equal programs only: the key of the kernel's OpenCL program.
 * Returns the length it needs (snprintf's contract). */
size_t fused_program_text(const struct fused_program *p, char *buf,
                          size_t size);

/* The program whose fused_program_text is `text`, checked as
 * fused_program_decode checks one from a graph; false, with the reason in
 * why, for anything else (a text that is not one a program writes).
 * Constants get one slot per CONST, in order: a program equal to the one
 * that wrote the text as far as the text goes. */
bool fused_program_parse(const char *text, struct fused_program *out, char *why,
                         size_t why_size);

#endif /* TFOCL_KERNELS_FUSED_PROGRAM_H_ */
