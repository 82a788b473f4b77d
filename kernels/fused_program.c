/* The _TfoclFusedElementwise program format (fused_program.h). */
#include "fused_program.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct op_entry {
  int op;
  const char *text;
  int arity;
  bool takes_int64;
  bool costly;
};

/* unary.def's and binary.def's columns, as the tables below need them. */
#define UNARY_TEXT_PLAIN(KERNEL) #KERNEL
#define UNARY_TEXT_GRAD(KERNEL) #KERNEL "_grad"
#define UNARY_ARITY_PLAIN 1
#define UNARY_ARITY_GRAD 2
#define TAKES_INT64_FLOAT false
#define TAKES_INT64_INT64 true
#define COSTLY_CHEAP false
#define COSTLY_COSTLY true
/* Every KIND a fused row may have: one operand, or two (the gradients). */
#define UNARY_FORM_OF_PLAIN PLAIN
#define UNARY_FORM_OF_NEG PLAIN
#define UNARY_FORM_OF_ABS PLAIN
#define UNARY_FORM_OF_SIGN PLAIN
#define UNARY_FORM_OF_SQUARE PLAIN
#define UNARY_FORM_OF_ROUND PLAIN
#define UNARY_FORM_OF_INVERT PLAIN
#define UNARY_FORM_OF_GRAD_SHAPE GRAD
#define UNARY_FORM_OF_GRAD_ELEMENTS GRAD
#define UNARY_CAT_(a, b) a##b
#define UNARY_CAT(a, b) UNARY_CAT_(a, b)
#define UNARY_FORM(KIND) UNARY_FORM_OF_##KIND

/* Not Abs in int64 (unary.def): clang makes llvm.abs.i64 of it, which
 * Oclgrind (the project's second OpenCL implementation) cannot run, and no
 * counter needs it. */
static const struct op_entry ops[] = {
    {FUSED_CONST, "c", 0, true, false},
    {FUSED_CAST, "cast", 1, true, false},
#define UNARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,    \
                       INT_MATH, ENUM, OPCODE, FUSED_TYPES, COST)            \
  {FUSED_##ENUM, UNARY_CAT(UNARY_TEXT_, UNARY_FORM(KIND))(KERNEL),           \
   UNARY_CAT(UNARY_ARITY_, UNARY_FORM(KIND)),                                \
   TAKES_INT64_##FUSED_TYPES, COSTLY_##COST},
#include "unary.def"
#define BINARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,   \
                        CASES, MATH, INT_MATH, ENUM, OPCODE, FUSED_TEXT,     \
                        FUSED_TYPES, COST)                                   \
  {FUSED_##ENUM, #FUSED_TEXT, 2, TAKES_INT64_##FUSED_TYPES, COSTLY_##COST},
#include "binary.def"
};

#define NUM_OPS (sizeof(ops) / sizeof(ops[0]))

/* TensorFlow's op names, the first of an opcode's its name
 * (fused_op_tf_name). */
static const struct {
  const char *name;
  int op;
} tf_ops[] = {
#define UNARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, MATH,    \
                       INT_MATH, ENUM, OPCODE, FUSED_TYPES, COST)            \
  {#NAME, FUSED_##ENUM},
#define UNARY_ALIAS(NAME, KERNEL, KIND, TYPES, SIG, REF, DOMAIN, ENUM)       \
  {#NAME, FUSED_##ENUM},
#include "unary.def"
#define BINARY_FUSED_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,   \
                        CASES, MATH, INT_MATH, ENUM, OPCODE, FUSED_TEXT,     \
                        FUSED_TYPES, COST)                                   \
  {#NAME, FUSED_##ENUM},
#define BINARY_ALIAS(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,      \
                     CASES, ENUM)                                            \
  {#NAME, FUSED_##ENUM},
#include "binary.def"
};

static const struct op_entry *entry_of(int op)
{
  for (size_t i = 0; i < NUM_OPS; i++)
    if (ops[i].op == op)
      return &ops[i];
  return NULL;
}

int fused_op_arity(int op)
{
  const struct op_entry *e = entry_of(op);
  return e != NULL ? e->arity : -1;
}

const char *fused_op_text(int op)
{
  const struct op_entry *e = entry_of(op);
  return e != NULL ? e->text : "?";
}

int fused_opcode_of(const uint8_t *name, size_t len)
{
  for (size_t i = 0; i < sizeof(tf_ops) / sizeof(tf_ops[0]); i++)
    if (strlen(tf_ops[i].name) == len &&
        memcmp(tf_ops[i].name, name, len) == 0)
      return tf_ops[i].op;
  return 0;
}

/* A float value's dtype (an output's, a CAST's destination). */
static bool valid_dtype(int64_t t)
{
  return t == FUSED_DT_FLOAT || t == FUSED_DT_HALF;
}

/* Any value's dtype. */
static bool valid_value_dtype(int64_t t)
{
  return valid_dtype(t) || t == FUSED_DT_INT64;
}

bool fused_op_takes_int64(int op)
{
  const struct op_entry *e = entry_of(op);
  return e != NULL && e->takes_int64;
}

bool fused_op_is_costly(int op)
{
  const struct op_entry *e = entry_of(op);
  return e != NULL && e->costly;
}

const char *fused_op_tf_name(int op)
{
  for (size_t i = 0; i < sizeof(tf_ops) / sizeof(tf_ops[0]); i++)
    if (tf_ops[i].op == op)
      return tf_ops[i].name;
  return NULL;
}

static bool fail(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(char *why, size_t why_size, const char *fmt, ...)
{
  va_list ap;
  if (why != NULL && why_size > 0) {
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
  }
  return false;
}

bool fused_program_decode(const int64_t *program, size_t program_len,
                          const float *constants, size_t num_constants,
                          const int *input_dtypes, size_t num_inputs,
                          int out_dtype, struct fused_program *out,
                          char *why, size_t why_size)
{
  memset(out, 0, sizeof(*out));
  if (num_inputs < 1 || num_inputs > FUSED_MAX_INPUTS)
    return fail(why, why_size, "%zu inputs (1 to %d)", num_inputs,
                FUSED_MAX_INPUTS);
  if (program_len == 0 || program_len % 3 != 0 ||
      program_len / 3 > FUSED_MAX_INSNS)
    return fail(why, why_size,
                "a program of %zu integers (3 per instruction, 1 to %d "
                "instructions)",
                program_len, FUSED_MAX_INSNS);
  if (num_constants > FUSED_MAX_CONSTANTS)
    return fail(why, why_size, "%zu constants (at most %d)", num_constants,
                FUSED_MAX_CONSTANTS);
  if (!valid_dtype(out_dtype))
    return fail(why, why_size, "output dtype %d (float or half)", out_dtype);

  int dtypes[FUSED_MAX_VALUES];
  out->num_inputs = (int)num_inputs;
  for (size_t k = 0; k < num_inputs; k++) {
    if (!valid_value_dtype(input_dtypes[k]))
      return fail(why, why_size,
                  "input %zu has dtype %d (float, half or int64)", k,
                  input_dtypes[k]);
    out->input_dtypes[k] = dtypes[k] = input_dtypes[k];
  }
  out->num_constants = (int)num_constants;
  for (size_t c = 0; c < num_constants; c++)
    out->constants[c] = constants[c];

  int num_values = (int)num_inputs;
  for (size_t j = 0; j < program_len / 3; j++) {
    int64_t op = program[3 * j], a = program[3 * j + 1],
            b = program[3 * j + 2];
    int arity = op >= 0 && op <= 1000 ? fused_op_arity((int)op) : -1;
    if (arity < 0)
      return fail(why, why_size, "instruction %zu: unknown opcode %lld", j,
                  (long long)op);
    struct fused_insn *insn = &out->insns[j];
    insn->op = (int)op;
    if (op == FUSED_CONST) {
      if (a < 0 || a >= (int64_t)num_constants || !valid_value_dtype(b))
        return fail(why, why_size,
                    "instruction %zu: constant %lld of dtype %lld (%zu "
                    "constants, float, half or int64)",
                    j, (long long)a, (long long)b, num_constants);
      float c = constants[a];
      /* |c| < 2^62: an integer the conversion to long keeps. */
      if (b == FUSED_DT_INT64 &&
          !(c > -0x1p62f && c < 0x1p62f && c == (float)(int64_t)c))
        return fail(why, why_size,
                    "instruction %zu: int64 constant %g is no integer", j,
                    (double)c);
      insn->a = (int)a;
      insn->b = -1;
      insn->dtype = (int)b;
    } else {
      if (a < 0 || a >= num_values || (arity == 2 && (b < 0 || b >= num_values)))
        return fail(why, why_size,
                    "instruction %zu (%s): operands %lld, %lld are not "
                    "earlier values (0 to %d)",
                    j, fused_op_text((int)op), (long long)a, (long long)b,
                    num_values - 1);
      insn->a = (int)a;
      if (op == FUSED_CAST) {
        if (!valid_dtype(b))
          return fail(why, why_size,
                      "instruction %zu: cast to dtype %lld (float or half)",
                      j, (long long)b);
        insn->b = -1;
        insn->dtype = (int)b;
      } else if (dtypes[a] == FUSED_DT_INT64 &&
                 !fused_op_takes_int64((int)op)) {
        return fail(why, why_size, "instruction %zu (%s): int64 operands",
                    j, fused_op_text((int)op));
      } else if (arity == 1) {
        if (b != -1)
          return fail(why, why_size,
                      "instruction %zu (%s): unused operand %lld, not -1", j,
                      fused_op_text((int)op), (long long)b);
        insn->b = -1;
        insn->dtype = dtypes[a];
      } else {
        if (dtypes[a] != dtypes[b])
          return fail(why, why_size,
                      "instruction %zu (%s): operands of dtypes %d and %d", j,
                      fused_op_text((int)op), dtypes[a], dtypes[b]);
        insn->b = (int)b;
        insn->dtype = dtypes[a];
      }
    }
    dtypes[num_values++] = insn->dtype;
    out->num_insns = (int)j + 1;
  }
  if (dtypes[num_values - 1] != out_dtype)
    return fail(why, why_size,
                "the last value has dtype %d, the output dtype is %d",
                dtypes[num_values - 1], out_dtype);
  out->out_dtype = out_dtype;
  return true;
}

static char dtype_char(int dtype)
{
  return dtype == FUSED_DT_HALF ? 'h' : dtype == FUSED_DT_INT64 ? 'l' : 'f';
}

/* Appends to buf like snprintf, tracking the length it would need. */
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(*len < size ? buf + *len : NULL,
                    *len < size ? size - *len : 0, fmt, ap);
  va_end(ap);
  if (n > 0)
    *len += (size_t)n;
}

size_t fused_program_text(const struct fused_program *p, char *buf,
                          size_t size)
{
  size_t len = 0;
  if (size > 0)
    buf[0] = '\0';
  for (int k = 0; k < p->num_inputs; k++)
    put(buf, size, &len, "%s%c", k ? "," : "", dtype_char(p->input_dtypes[k]));
  put(buf, size, &len, ">%c:", dtype_char(p->out_dtype));
  for (int j = 0; j < p->num_insns; j++) {
    const struct fused_insn *in = &p->insns[j];
    const char *sep = j ? ";" : "";
    switch (fused_op_arity(in->op)) {
    case 0: {
      /* The bits: exact, NaN payloads included. */
      uint32_t bits;
      memcpy(&bits, &p->constants[in->a], sizeof(bits));
      put(buf, size, &len, "%sc%c(%08x)", sep, dtype_char(in->dtype),
          (unsigned)bits);
      break;
    }
    case 1:
      if (in->op == FUSED_CAST)
        put(buf, size, &len, "%scast%c(%d)", sep, dtype_char(in->dtype),
            in->a);
      else
        put(buf, size, &len, "%s%s(%d)", sep, fused_op_text(in->op), in->a);
      break;
    default:
      put(buf, size, &len, "%s%s(%d,%d)", sep, fused_op_text(in->op), in->a,
          in->b);
      break;
    }
  }
  return len;
}

static int dtype_of_char(char c)
{
  return c == 'f'   ? FUSED_DT_FLOAT
         : c == 'h' ? FUSED_DT_HALF
         : c == 'l' ? FUSED_DT_INT64
                    : 0;
}

/* A decimal value index at *at, advancing past it; -1 for none. */
static int parse_index(const char **at)
{
  const char *p = *at;
  int v = 0;
  if (*p < '0' || *p > '9')
    return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > FUSED_MAX_VALUES)
      return -1;
    v = v * 10 + (*p - '0');
  }
  *at = p;
  return v;
}

bool fused_program_parse(const char *text, struct fused_program *out, char *why,
                         size_t why_size)
{
  int64_t program[3 * FUSED_MAX_INSNS];
  float constants[FUSED_MAX_CONSTANTS];
  int inputs[FUSED_MAX_INPUTS];
  size_t num_inputs = 0, num_insns = 0, num_constants = 0;
  const char *p = text;

  memset(out, 0, sizeof(*out));
  for (;;) {
    int dtype = dtype_of_char(*p);
    if (dtype == 0 || num_inputs == FUSED_MAX_INPUTS)
      return fail(why, why_size, "input %zu: not f, h or l", num_inputs);
    inputs[num_inputs++] = dtype;
    p++;
    if (*p == '>')
      break;
    if (*p++ != ',')
      return fail(why, why_size, "after input %zu: no , or >", num_inputs);
  }
  int out_dtype = dtype_of_char(p[1]);
  if (out_dtype == 0 || p[2] != ':')
    return fail(why, why_size, "no output dtype and : after >");
  p += 3;
  for (;;) {
    char name[32];
    size_t len = 0;
    while (*p && *p != '(' && len < sizeof(name) - 1)
      name[len++] = *p++;
    name[len] = '\0';
    if (*p++ != '(' || num_insns == FUSED_MAX_INSNS)
      return fail(why, why_size, "instruction %zu: no ( or too many",
                  num_insns);
    int64_t *insn = &program[3 * num_insns];
    if (len == 2 && name[0] == 'c' && dtype_of_char(name[1])) {
      unsigned bits = 0;
      int digits = 0;
      for (; digits < 8; digits++, p++) {
        int c = *p;
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                       : -1;
        if (v < 0)
          break;
        bits = bits << 4 | (unsigned)v;
      }
      if (digits != 8 || num_constants == FUSED_MAX_CONSTANTS)
        return fail(why, why_size, "instruction %zu: not 8 hex digits",
                    num_insns);
      uint32_t word = bits;
      memcpy(&constants[num_constants], &word, sizeof(word));
      insn[0] = FUSED_CONST;
      insn[1] = (int64_t)num_constants++;
      insn[2] = dtype_of_char(name[1]);
    } else {
      int op = 0;
      if (len == 5 && strncmp(name, "cast", 4) == 0 && dtype_of_char(name[4])) {
        op = FUSED_CAST;
      } else {
        for (int o = FUSED_CAST + 1; o < 256 && op == 0; o++)
          if (fused_op_arity(o) > 0 && strcmp(fused_op_text(o), name) == 0)
            op = o;
      }
      if (op == 0)
        return fail(why, why_size, "instruction %zu: unknown op", num_insns);
      int a = parse_index(&p), b = -1;
      if (a < 0)
        return fail(why, why_size, "instruction %zu: no operand", num_insns);
      if (fused_op_arity(op) == 2) {
        if (*p++ != ',' || (b = parse_index(&p)) < 0)
          return fail(why, why_size, "instruction %zu: no second operand",
                      num_insns);
      }
      insn[0] = op;
      insn[1] = a;
      insn[2] = op == FUSED_CAST ? dtype_of_char(name[4]) : b;
    }
    num_insns++;
    if (*p++ != ')')
      return fail(why, why_size, "instruction %zu: no )", num_insns - 1);
    if (*p == '\0')
      break;
    if (*p++ != ';')
      return fail(why, why_size, "after instruction %zu: no ;", num_insns);
  }
  if (!fused_program_decode(program, 3 * num_insns, constants, num_constants,
                            inputs, num_inputs, out_dtype, out, why, why_size))
    return false;
  /* Only the program's own text: anything else (leading zeros, another
   * spelling) is not a name the kernel would have given. */
  char again[4096];
  size_t n = fused_program_text(out, again, sizeof(again));
  if (n >= sizeof(again) || strcmp(again, text) != 0)
    return fail(why, why_size, "not the program's own text");
  return true;
}
