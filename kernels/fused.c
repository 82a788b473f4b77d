/* _TfoclFusedElementwise: the plugin's own op, one kernel launch for a
 * chain of element-wise ops the graph optimizer fused
 * (plugin/graph/pass_elementwise.c; the program format and the op's
 * signature are in kernels/fused_program.h).
 *
 * The op is registered here, at TF_InitKernel, through TensorFlow's
 * op-definition C API (tensorflow/c/ops.h), with a shape function: the
 * output's shape is the broadcast shape of the inputs. Without that API (or
 * the attribute getters the kernel needs) neither the op nor its kernel is
 * registered, and the graph pass, which only fuses where the kernel exists,
 * stays off.
 *
 * At create time the kernel decodes and checks the program (a malformed one
 * fails the construction with INVALID_ARGUMENT), generates OpenCL C for it
 * (fused.cl's helpers, one function evaluating the chain, eight kernels)
 * and names its cl_kernels in an OpenCL program keyed by the program's
 * canonical text: equal chains, in one graph or many, share one program
 * per context; each distinct chain costs one clBuildProgram (and on PoCL a
 * compilation of each kernel at its first launch), paid once per process
 * (PoCL's disk cache keeps builds across runs). Compute is
 * allocation- and formatting-free: read the input shapes, broadcast them
 * (kernels/shape.h), launch the kernel that fits:
 *   _same     every input has the output's elements: x[i]
 *   _flat     some inputs are single elements: x[i * step], step 0 or 1
 *             (a CPU device's go as one row of _bcast3d_m_rows, below)
 *   _bcast3d  up to 3 collapsed dims as the NDRange itself, the innermost
 *             16 or more long and every input varying along it: no
 *             division per element (batch normalisation's per-channel
 *             terms)
 *   _bcast3d_mixed  the same where some input is constant along the
 *             innermost dim (layer normalisation's row statistics, NCHW
 *             channels, scalars)
 *   _bcast3d_m  _bcast3d_mixed's launches, in a program of their own per
 *             set of such inputs (its name "fused/<mask>:<chain>"), made
 *             at the first launch that needs it: those inputs read at the
 *             work-group's one index, the others at consecutive ones
 *   _bcast3d_rows, _bcast3d_m_rows  a CPU device's _bcast3d and
 *             _bcast3d_m: a work-item loops along a span of a row, which
 *             the compiler vectorises (across work-items PoCL masked the
 *             lanes and gathered the constant inputs: the 7 per-channel
 *             launches of a ResNet step's batch normalisation took 7.7 ms
 *             as _bcast3d_m, 1.7-1.9 ms now)
 *   _bcast3   up to 3 collapsed dims with a shorter innermost: the flat
 *             index split by multiplications (ocl_fastdiv), no loop
 *   _bcast    general strides over up to 8 collapsed dims, 32-bit indices
 *   _bcast_span  a CPU device's _bcast: a work-item per span of the
 *             output, walked as an odometer (binary.cl's)
 *   _bcast64  the same in 64 bits, for more than 2^31 - 1 elements
 * one work-item per output element (the _rows kernels aside). More than 8
 * collapsed dims take one launch per index of the leading ones; more than
 * 2^31 - 1 elements in the flat kernels take one launch per 2^30. */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fused_program.h"
#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_fused[];

enum variant {
  SAME,
  FLAT,
  BCAST3D,
  BCAST3D_MIXED,
  BCAST3D_ROWS,
  BCAST3,
  BCAST,
  BCAST64,
  BCAST_SPAN,
  NUM_VARIANTS
};
static const char *const variant_name[NUM_VARIANTS] = {
    "fused_same",          "fused_flat",         "fused_bcast3d",
    "fused_bcast3d_mixed", "fused_bcast3d_rows", "fused_bcast3",
    "fused_bcast",         "fused_bcast64",      "fused_bcast_span"};
/* The _bcast3d kernels' shortest innermost dim (shorter ones would leave
 * most of a work-group's dimension 0 idle), as binary.c's: below it the
 * 1-D _bcast3. */
#define BCAST3D_MIN_INNER 16

/* The most _bcast3d_m programs a chain keeps (one per set of inputs
 * constant along the innermost dim; a chain meets one or two); further
 * sets take _bcast3d_mixed. */
#define MASKED_MAX 4

/* A program of its own for names "fused/<mask>:<chain>". */
#define MASKED_PREFIX "fused/"

struct masked_kernel {
  unsigned mask;
  char *name;
  char *source;
  struct ocl_program program;
  struct ocl_kernel kernel;
  struct ocl_kernel rows; /* fused_bcast3d_m_rows, for a CPU device */
};

struct fused_kernel {
  struct fused_program prog;
  TF_DataType out_type;
  size_t in_size[FUSED_MAX_INPUTS];
  size_t out_size;
  /* The OpenCL program: its name (the program text, the program cache's
   * key) and its source, both owned here; the cache keeps its own copy of
   * the name and the built cl_program. */
  char *name;
  char *source;
  struct ocl_program program;
  struct ocl_kernel k[NUM_VARIANTS];
  /* FUSED_TILED_OP_NAME: input i stands for Tile(input i, tiles[i]) where
   * tile_rank[i] > 0. */
  bool tiled;
  int tile_rank[FUSED_MAX_INPUTS];
  int64_t tiles[FUSED_MAX_INPUTS][FUSED_TILE_RANK_MAX];
  /* masked[0, num_masked) are complete; masked_lock orders their making. */
  pthread_mutex_t masked_lock;
  atomic_int num_masked;
  struct masked_kernel masked[MASKED_MAX];
};

/* ---- Source generation (create time) ------------------------------------- */

struct text {
  char *data;
  size_t len, cap;
  bool failed;
};

static void text_put(struct text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void text_put(struct text *t, const char *fmt, ...)
{
  va_list ap;
  if (t->failed)
    return;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(t->data ? t->data + t->len : NULL,
                      t->data ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->failed = true;
      return;
    }
    if (t->data != NULL && t->len + (size_t)n < t->cap) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap ? t->cap : 4096;
    while (cap <= t->len + (size_t)n)
      cap *= 2;
    char *grown = realloc(t->data, cap);
    if (grown == NULL) {
      t->failed = true;
      return;
    }
    t->data = grown;
    t->cap = cap;
  }
}

/* f rounded to the nearest half (ties to even), as a float: fused.cl's
 * fused_round_half, for constants, on the host. */
static float round_half(float f)
{
  uint32_t u, sign, a;
  memcpy(&u, &f, sizeof(u));
  sign = u & 0x80000000u;
  a = u ^ sign;
  if (a >= 0x7f800000u)
    return f;
  if (a >= 0x477ff000u) {
    a = 0x7f800000u;
  } else if (a < 0x38800000u) {
    float m;
    memcpy(&m, &a, sizeof(m));
    m = rintf(m * 0x1p24f) * 0x1p-24f;
    memcpy(&a, &m, sizeof(a));
  } else {
    a += 0x0fffu + ((a >> 13) & 1u);
    a &= ~0x1fffu;
  }
  u = sign | a;
  memcpy(&f, &u, sizeof(f));
  return f;
}

static char type_char(int dtype)
{
  return dtype == FUSED_DT_HALF ? 'h' : dtype == FUSED_DT_INT64 ? 'l' : 'f';
}
static const char *storage(int dtype)
{
  return dtype == FUSED_DT_HALF    ? "half"
         : dtype == FUSED_DT_INT64 ? "long"
                                   : "float";
}
/* The type a value is computed in. */
static const char *compute_type(int dtype)
{
  return dtype == FUSED_DT_INT64 ? "long" : "float";
}

/* fused_chain(x0, ..., xn-1): the program, on floats (int64 values on
 * longs). */
static void put_chain(struct text *t, const struct fused_program *p)
{
  int n = p->num_inputs;
  int dtypes[FUSED_MAX_VALUES];
  text_put(t, "static float fused_chain(");
  for (int k = 0; k < n; k++) {
    dtypes[k] = p->input_dtypes[k];
    text_put(t, "%s%s v%d", k ? ", " : "", compute_type(dtypes[k]), k);
  }
  text_put(t, ")\n{\n");
  for (int j = 0; j < p->num_insns; j++) {
    const struct fused_insn *in = &p->insns[j];
    bool half = in->dtype == FUSED_DT_HALF;
    dtypes[n + j] = in->dtype;
    text_put(t, "  %s v%d = ", compute_type(in->dtype), n + j);
    switch (in->op) {
    case FUSED_CONST: {
      if (in->dtype == FUSED_DT_INT64) {
        /* The decoder checked it is an integer. */
        text_put(t, "%lldL;\n", (long long)p->constants[in->a]);
        continue;
      }
      /* The value by its bits: exact, NaN and infinities included; a
       * half constant rounded to half (the pass's are already). */
      float value = half ? round_half(p->constants[in->a])
                         : p->constants[in->a];
      uint32_t bits;
      memcpy(&bits, &value, sizeof(bits));
      text_put(t, "as_float(0x%08xu);\n", (unsigned)bits);
      continue;
    }
    case FUSED_CAST:
      /* To float from int64: the nearest float; to half: through float
       * and rounded (what the unfused Cast gives); half to float and
       * same-type casts are exact. */
      if (half)
        text_put(t, "fused_round_half((float)v%d);\n", in->a);
      else
        text_put(t, "(float)v%d;\n", in->a);
      continue;
    default:
      break;
    }
    /* int64 ops are l_<op>, the float ones f_<op>. */
    char prefix = dtypes[in->a] == FUSED_DT_INT64 ? 'l' : 'f';
    text_put(t, "%s", half ? "fused_round_half(" : "");
    if (fused_op_arity(in->op) == 1)
      text_put(t, "%c_%s(v%d)", prefix, fused_op_text(in->op), in->a);
    else
      text_put(t, "%c_%s(v%d, v%d)", prefix, fused_op_text(in->op), in->a,
               in->b);
    text_put(t, "%s;\n", half ? ")" : "");
  }
  text_put(t, "  return v%d;\n}\n\n", n + p->num_insns - 1);
}

/* How a kernel indexes input k: i, i * s.step[k], or the j<k> its
 * broadcast loop (or 3-D position) computed. */
enum indexing { INDEX_SAME, INDEX_STEP, INDEX_LOOP };

/* A kernel's arguments: the inputs, then the output. */
static void put_args_of(struct text *t, const struct fused_program *p,
                        const char *name, const char *arg)
{
  text_put(t, "__kernel void %s(", name);
  for (int k = 0; k < p->num_inputs; k++)
    text_put(t, "%s(const %s, in%d), ", arg, storage(p->input_dtypes[k]), k);
  text_put(t, "%s(%s, out)", arg, storage(p->out_dtype));
}

static void put_args(struct text *t, const struct fused_program *p,
                     const char *name)
{
  put_args_of(t, p, name, "OCL_TENSOR_ARG");
}

/* The call and the store of output element `at`, closing the block it is
 * in (the kernel, or put_kernel's loop). */
static void put_store(struct text *t, const struct fused_program *p,
                      const char *at, enum indexing index);

/* One kernel: the arguments, the per-input index, the call and the store. */
static void put_kernel(struct text *t, const struct fused_program *p,
                       const char *name, const char *itype,
                       const char *extra_arg, const char *prologue,
                       enum indexing index)
{
  put_args(t, p, name);
  text_put(t, ", %s n%s)\n{\n", itype, extra_arg);
  text_put(t, "  OCL_FOR_FLAT(%s, i, n) {\n%s", itype, prologue);
  put_store(t, p, "i", index);
  text_put(t, "}\n\n");
}

/* _bcast3d and _bcast3d_mixed: the NDRange is the (padded) 3 collapsed
 * dims, s.inner along dimension 0. An input's innermost stride is 1 or 0.
 * _bcast3d multiplies by it, which PoCL's vectoriser speculates to be 1
 * (contiguous loads) and runs unvectorised where it is not; _mixed, for
 * inputs constant along the innermost dim, adds min(x, limit), limit 0 or
 * INT_MAX, which it vectorises as gathers (measured on PoCL, [8192,128]
 * layer normalisation's 5-input chain 2.55 -> 1.84 ms; the per-channel
 * chains, all strides 1, stay faster in _bcast3d: 1.15 against 1.36).
 * v NUM_VARIANTS: _bcast3d_m, the inputs in `mask` constant along the
 * innermost dim (one index across dimension 0, which vectorises as one
 * load), the others contiguous along it. */
static void put_kernel_3d(struct text *t, const struct fused_program *p,
                          enum variant v, unsigned mask)
{
  put_args(t, p, v == NUM_VARIANTS ? "fused_bcast3d_m" : variant_name[v]);
  text_put(t, ", fused_bcast3_t s)\n{\n"
              "  int x = get_global_id(0), y = get_global_id(1), "
              "z = get_global_id(2);\n"
              "  if (x >= (int)s.inner || y >= (int)s.mid || "
              "z >= (int)s.outer)\n"
              "    return;\n"
              "  int o = (z * (int)s.mid + y) * (int)s.inner + x;\n");
  for (int k = 0; k < p->num_inputs; k++) {
    text_put(t, "  int j%d = z * s.strides[%d] + y * s.strides[%d]", k, 3 * k,
             3 * k + 1);
    if (v == BCAST3D)
      text_put(t, " + x * s.strides[%d];\n", 3 * k + 2);
    else if (v == BCAST3D_MIXED)
      text_put(t, " + min(x, s.strides[%d]);\n", 3 * k + 2);
    else
      text_put(t, "%s;\n", mask >> k & 1 ? "" : " + x");
  }
  put_store(t, p, "o", INDEX_LOOP);
  text_put(t, "\n");
}

/* The CPU shape of _bcast3d (mask 0) and _bcast3d_m: a work-item per
 * span of a row (binary.cl's _bcast3d_rows), looping along it, which the
 * compiler vectorises with the inputs in `mask` read once; restrict
 * arguments spare the loop the overlap checks (the output may be an
 * input itself, forwarded, which index-for-index code tolerates). */
static void put_kernel_rows(struct text *t, const struct fused_program *p,
                            const char *name, unsigned mask)
{
  put_args_of(t, p, name, "FUSED_ROW_ARG");
  text_put(t, ", fused_bcast3_t s, int span)\n{\n"
              "  int i0 = get_global_id(0) * span, y = get_global_id(1), "
              "z = get_global_id(2);\n"
              "  if (i0 >= (int)s.inner || y >= (int)s.mid || "
              "z >= (int)s.outer)\n"
              "    return;\n"
              "  int len = min(span, (int)s.inner - i0);\n"
              "  int o = (z * (int)s.mid + y) * (int)s.inner + i0;\n");
  for (int k = 0; k < p->num_inputs; k++)
    text_put(t, "  int b%d = z * s.strides[%d] + y * s.strides[%d]%s;\n", k,
             3 * k, 3 * k + 1, mask >> k & 1 ? "" : " + i0");
  text_put(t, "  for (int x = 0; x < len; x++) {\n");
  for (int k = 0; k < p->num_inputs; k++)
    text_put(t, "  int j%d = b%d%s;\n", k, k, mask >> k & 1 ? "" : " + x");
  put_store(t, p, "o + x", INDEX_LOOP);
  text_put(t, "\n");
  text_put(t, "}\n\n");
}

/* The CPU shape of _bcast (binary.cl's _bcast_span): a work-item per
 * `span` output elements, the first split into coordinates once, the rest
 * walked along the innermost dim with a carry at each run's end. */
static void put_kernel_span(struct text *t, const struct fused_program *p)
{
  int n = p->num_inputs;
  put_args(t, p, variant_name[BCAST_SPAN]);
  text_put(t, ", int n, fused_bcast32_t s, int span)\n{\n"
              "  int i = get_global_id(0) * span;\n"
              "  if (i >= n)\n    return;\n"
              "  int end = min(i + span, n), coord[8], rem = i;\n");
  for (int k = 0; k < n; k++)
    text_put(t, "  int b%d = 0;\n", k);
  text_put(t, "  for (int d = s.rank - 1; d >= 0; d--) {\n"
              "    coord[d] = rem %% s.dims[d];\n    rem /= s.dims[d];\n");
  for (int k = 0; k < n; k++)
    text_put(t, "    b%d += coord[d] * s.strides[%d + d];\n", k, 8 * k);
  text_put(t, "  }\n  int last = s.rank - 1;\n");
  for (int k = 0; k < n; k++)
    text_put(t, "  int st%d = s.strides[%d + last];\n", k, 8 * k);
  text_put(t, "  while (i < end) {\n"
              "    int run = min(s.dims[last] - coord[last], end - i);\n"
              "    for (int x = 0; x < run; x++) {\n");
  for (int k = 0; k < n; k++)
    text_put(t, "    int j%d = b%d + x * st%d;\n", k, k, k);
  put_store(t, p, "i + x", INDEX_LOOP);
  text_put(t, "\n    i += run;\n    coord[last] += run;\n");
  for (int k = 0; k < n; k++)
    text_put(t, "    b%d += run * st%d;\n", k, k);
  text_put(t,
           "    for (int d = last; d > 0 && coord[d] == s.dims[d]; d--) {\n");
  for (int k = 0; k < n; k++)
    text_put(t,
             "      b%d += s.strides[%d + d - 1] - s.dims[d] * "
             "s.strides[%d + d];\n",
             k, 8 * k, 8 * k);
  text_put(t, "      coord[d] = 0;\n      coord[d - 1]++;\n    }\n  }\n}\n\n");
}

/* _bcast3: innermost dims too short for _bcast3d's lanes. One work-item
 * per output element, its index split into the 3 coordinates by
 * ocl_fastdiv (no division instruction, no loop: PoCL vectorises it). */
static void put_kernel_split(struct text *t, const struct fused_program *p)
{
  put_args(t, p, variant_name[BCAST3]);
  text_put(t, ", fused_bcast3_t s)\n{\n"
              "  uint i = get_global_id(0);\n"
              "  OCL_GUARD(i, s.n);\n"
              "  uint q = ocl_fastdiv(i, s.inner_magic, s.inner_shift);\n"
              "  uint z = ocl_fastdiv(q, s.mid_magic, s.mid_shift);\n"
              "  int y = (int)(q - z * s.mid), x = (int)(i - q * s.inner);\n");
  for (int k = 0; k < p->num_inputs; k++)
    text_put(t,
             "  int j%d = (int)z * s.strides[%d] + y * s.strides[%d] + "
             "x * s.strides[%d];\n",
             k, 3 * k, 3 * k + 1, 3 * k + 2);
  put_store(t, p, "i", INDEX_LOOP);
  text_put(t, "\n");
}

static void put_store(struct text *t, const struct fused_program *p,
                      const char *at, enum indexing index)
{
  int n = p->num_inputs;
  text_put(t, "  FUSED_ST_%c(OCL_PTR(%s, out), %s, fused_chain(",
           type_char(p->out_dtype), storage(p->out_dtype), at);
  for (int k = 0; k < n; k++) {
    text_put(t, "%s\n      FUSED_LD_%c(OCL_PTR(const %s, in%d), ",
             k ? "," : "", type_char(p->input_dtypes[k]),
             storage(p->input_dtypes[k]), k);
    if (index == INDEX_SAME)
      text_put(t, "i)");
    else if (index == INDEX_STEP)
      text_put(t, "i * s.step[%d])", k);
    else
      text_put(t, "j%d)", k);
  }
  text_put(t, "));\n}\n");
}

/* The broadcast kernels' index loop over the collapsed dims. */
static void put_bcast_prologue(struct text *t, const struct fused_program *p,
                               const char *itype)
{
  int n = p->num_inputs;
  text_put(t, "  %s rem = i", itype);
  for (int k = 0; k < n; k++)
    text_put(t, ", j%d = 0", k);
  text_put(t, ";\n  for (%s d = s.rank - 1; d >= 0; d--) {\n"
              "    %s c = rem %% s.dims[d];\n    rem /= s.dims[d];\n",
           itype, itype);
  for (int k = 0; k < n; k++)
    text_put(t, "    j%d += c * s.strides[%d + d];\n", k, 8 * k);
  text_put(t, "  }\n");
}

/* The whole program's source: fused.cl, the argument structs (their
 * layout is the host's int32/int64 arrays below), the chain, then every
 * variant, or (mask nonzero) _bcast3d_m for that mask alone. */
static char *generate(const struct fused_program *p, unsigned mask)
{
  struct text t = {0};
  int n = p->num_inputs;
  text_put(&t, "%s\n", ocl_cl_source_fused);
  text_put(&t,
           "typedef struct { int step[%d]; } fused_steps_t;\n"
           "typedef struct { int dims[8]; int strides[%d]; int rank; } "
           "fused_bcast32_t;\n"
           "typedef struct { long dims[8]; long strides[%d]; long rank; } "
           "fused_bcast64_t;\n"
           "typedef struct { uint n, outer, mid, inner, inner_magic, "
           "inner_shift, mid_magic, mid_shift; int strides[%d]; } "
           "fused_bcast3_t;\n\n",
           n, 8 * n, 8 * n, 3 * n);
  put_chain(&t, p);
  if (mask != 0) {
    put_kernel_3d(&t, p, NUM_VARIANTS, mask);
    put_kernel_rows(&t, p, "fused_bcast3d_m_rows", mask);
    if (t.failed) {
      free(t.data);
      return NULL;
    }
    return t.data;
  }
  put_kernel(&t, p, variant_name[SAME], "int", "", "", INDEX_SAME);
  put_kernel(&t, p, variant_name[FLAT], "int", ", fused_steps_t s", "",
             INDEX_STEP);
  put_kernel_3d(&t, p, BCAST3D, 0);
  put_kernel_3d(&t, p, BCAST3D_MIXED, 0);
  put_kernel_rows(&t, p, variant_name[BCAST3D_ROWS], 0);
  put_kernel_split(&t, p);
  put_kernel_span(&t, p);
  struct text pro = {0};
  put_bcast_prologue(&pro, p, "int");
  put_kernel(&t, p, variant_name[BCAST], "int", ", fused_bcast32_t s",
             pro.data ? pro.data : "", INDEX_LOOP);
  t.failed = t.failed || pro.failed || pro.data == NULL;
  free(pro.data);
  pro = (struct text){0};
  put_bcast_prologue(&pro, p, "long");
  put_kernel(&t, p, variant_name[BCAST64], "long", ", fused_bcast64_t s",
             pro.data ? pro.data : "", INDEX_LOOP);
  t.failed = t.failed || pro.failed || pro.data == NULL;
  free(pro.data);
  if (t.failed) {
    free(t.data);
    return NULL;
  }
  return t.data;
}

char *ocl_fused_program_source(const char *name)
{
  struct fused_program prog;
  unsigned long mask = 0;
  const char *chain = NULL;
  if (strncmp(name, "fused:", 6) == 0) {
    chain = name + 6;
  } else if (strncmp(name, MASKED_PREFIX, strlen(MASKED_PREFIX)) == 0) {
    char *end;
    const char *digits = name + strlen(MASKED_PREFIX);
    mask = isxdigit((unsigned char)digits[0]) ? strtoul(digits, &end, 16) : 0;
    if (mask != 0 && *end == ':')
      chain = end + 1;
  }
  if (chain == NULL || !fused_program_parse(chain, &prog, NULL, 0) ||
      mask >> prog.num_inputs != 0)
    return NULL;
  return generate(&prog, (unsigned)mask);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

static void fused_delete(void *kernel)
{
  struct fused_kernel *k = kernel;
  if (k == NULL)
    return;
  for (int i = 0; i < atomic_load(&k->num_masked); i++) {
    free(k->masked[i].name);
    free(k->masked[i].source);
  }
  pthread_mutex_destroy(&k->masked_lock);
  free(k->name);
  free(k->source);
  free(k);
}

/* The attribute's list length, or -1 with the status set. */
static int64_t attr_size(TF_OpKernelConstruction *ctx, const char *name,
                         TF_Status *status)
{
  int32_t list_size = -1, total_size = -1;
  ocl_tf.OpKernelConstruction_GetAttrSize(ctx, name, &list_size, &total_size,
                                          status);
  return ocl_tf.GetCode(status) == TF_OK ? list_size : -1;
}

/* FUSED_TILED_OP_NAME's "tiles" (absent in FUSED_OP_NAME): per input the
 * length of its multiples, then the multiples. */
static bool read_tiles(TF_OpKernelConstruction *ctx, struct fused_kernel *k,
                       TF_Status *status)
{
  enum { MAX_LEN = FUSED_MAX_INPUTS * (1 + FUSED_TILE_RANK_MAX) };
  int64_t list[MAX_LEN];
  int64_t len = attr_size(ctx, "tiles", status);
  if (len < 0) {
    ocl_set_ok(status); /* the untiled op */
    return true;
  }
  if (len > MAX_LEN) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: %lld tiles integers (at most %d)", FUSED_TILED_OP_NAME,
                   (long long)len, MAX_LEN);
    return false;
  }
  if (len > 0)
    ocl_tf.OpKernelConstruction_GetAttrInt64List(ctx, "tiles", list, (int)len,
                                                 status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return false;
  int64_t at = 0;
  for (int i = 0; i < k->prog.num_inputs; i++) {
    int64_t n = at < len ? list[at++] : -1;
    if (n < 0 || n > FUSED_TILE_RANK_MAX || at + n > len) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "%s: tiles of input %d malformed", FUSED_TILED_OP_NAME, i);
      return false;
    }
    k->tile_rank[i] = (int)n;
    for (int64_t d = 0; d < n; d++, at++) {
      if (list[at] < 0) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "%s: negative multiple for input %d",
                       FUSED_TILED_OP_NAME, i);
        return false;
      }
      k->tiles[i][d] = list[at];
    }
  }
  if (at != len) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: %lld tiles integers, %lld used", FUSED_TILED_OP_NAME,
                   (long long)len, (long long)at);
    return false;
  }
  k->tiled = true;
  return true;
}

static void *fused_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct fused_kernel *k = calloc(1, sizeof(*k));
  int64_t program[3 * FUSED_MAX_INSNS];
  float constants[FUSED_MAX_CONSTANTS];
  TF_DataType targs[FUSED_MAX_INPUTS];
  int in_types[FUSED_MAX_INPUTS];
  char why[256];

  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->out_type, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  int64_t num_inputs = attr_size(ctx, "Targs", status);
  int64_t program_len = num_inputs >= 0 ? attr_size(ctx, "program", status)
                                        : -1;
  int64_t num_constants =
      program_len >= 0 ? attr_size(ctx, "constants", status) : -1;
  if (num_constants < 0)
    goto fail;
  /* Only what fits is read; the decoder rejects counts beyond the limits. */
  if (num_inputs > FUSED_MAX_INPUTS || num_inputs < 1 ||
      program_len > 3 * FUSED_MAX_INSNS || program_len < 1 ||
      num_constants > FUSED_MAX_CONSTANTS) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "%s: %lld inputs, %lld program integers and %lld "
                   "constants (at most %d, %d and %d)",
                   FUSED_OP_NAME, (long long)num_inputs,
                   (long long)program_len, (long long)num_constants,
                   FUSED_MAX_INPUTS, 3 * FUSED_MAX_INSNS, FUSED_MAX_CONSTANTS);
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrTypeList(ctx, "Targs", targs,
                                              (int)num_inputs, status);
  if (ocl_tf.GetCode(status) == TF_OK)
    ocl_tf.OpKernelConstruction_GetAttrInt64List(ctx, "program", program,
                                                 (int)program_len, status);
  if (ocl_tf.GetCode(status) == TF_OK && num_constants > 0)
    ocl_tf.OpKernelConstruction_GetAttrFloatList(ctx, "constants", constants,
                                                 (int)num_constants, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  for (int64_t i = 0; i < num_inputs; i++)
    in_types[i] = (int)targs[i];
  if (!fused_program_decode(program, (size_t)program_len, constants,
                            (size_t)num_constants, in_types,
                            (size_t)num_inputs, (int)k->out_type, &k->prog,
                            why, sizeof(why))) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "%s: malformed program: %s",
                   FUSED_OP_NAME, why);
    goto fail;
  }
  if (!read_tiles(ctx, k, status))
    goto fail;
  for (int i = 0; i < k->prog.num_inputs; i++)
    k->in_size[i] = ocl_tf.DataTypeSize(targs[i]);
  k->out_size = ocl_tf.DataTypeSize(k->out_type);

  size_t text_len = fused_program_text(&k->prog, NULL, 0);
  k->name = malloc(text_len + 8);
  k->source = generate(&k->prog, 0);
  if (k->name == NULL || k->source == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  memcpy(k->name, "fused:", 6);
  fused_program_text(&k->prog, k->name + 6, text_len + 2);
  k->program = (struct ocl_program){k->name, k->source, NULL};
  for (int v = 0; v < NUM_VARIANTS; v++)
    ocl_kernel_init(&k->k[v], &k->program, variant_name[v]);
  pthread_mutex_init(&k->masked_lock, NULL);
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  if (k != NULL) {
    free(k->name);
    free(k->source);
  }
  return ocl_create_failed(ctx, status, k);
}

/* Launch arguments: the inputs, the output, n, the struct. */
struct launch {
  struct ocl_arg args[FUSED_MAX_INPUTS + 4]; /* inputs, out, n, s, span */
  int num_args;
};

/* Resolves input k from element `at` on and the output's n elements from
 * `out_at`. */
static bool bind(struct ocl_op *op, const struct fused_kernel *k,
                 TF_Tensor *const *in, const int64_t *at, TF_Tensor *out,
                 int64_t out_at, int64_t n, struct launch *l)
{
  int num = k->prog.num_inputs;
  for (int i = 0; i < num; i++) {
    struct ocl_buffer b;
    size_t offset = (size_t)at[i] * k->in_size[i];
    if (!ocl_op_buffer(op, in[i], offset,
                       ocl_tf.TensorByteSize(in[i]) - offset, &b))
      return false;
    l->args[i] = OCL_BUF(b);
  }
  struct ocl_buffer ob;
  if (!ocl_op_buffer(op, out, (size_t)out_at * k->out_size,
                     (size_t)n * k->out_size, &ob))
    return false;
  l->args[num] = OCL_BUF(ob);
  l->num_args = num + 1;
  return true;
}

/* The flat kernels (same, flat): one launch per 2^30 elements, so that
 * the index fits an int. */
static bool launch_flat(struct ocl_op *op, struct fused_kernel *k,
                        const struct ocl_bcastn *b, TF_Tensor *const *in,
                        TF_Tensor *out)
{
  const int64_t chunk = (int64_t)1 << 30;
  int num = k->prog.num_inputs;
  enum variant v = b->same_shape ? SAME : FLAT;
  int32_t steps[FUSED_MAX_INPUTS];
  for (int i = 0; i < num; i++)
    steps[i] = b->single[i] ? 0 : 1;
  for (int64_t at = 0; at < b->out_elements; at += chunk) {
    int64_t n = b->out_elements - at < chunk ? b->out_elements - at : chunk;
    int64_t in_at[FUSED_MAX_INPUTS];
    for (int i = 0; i < num; i++)
      in_at[i] = at * steps[i];
    struct launch l;
    if (!bind(op, k, in, in_at, out, at, n, &l))
      return false;
    l.args[l.num_args++] = OCL_INT(n);
    if (v == FLAT)
      l.args[l.num_args++] =
          OCL_BYTES(steps, sizeof(int32_t) * (size_t)num);
    if (!ocl_launch_flat(op, &k->k[v], (size_t)n, l.args, l.num_args))
      return false;
  }
  return true;
}

/* One launch of the _bcast kernels over collapsed dims [first, b->rank)
 * (at most 8), inputs from element offsets in_at, the output from out_at. */
static bool launch_bcast(struct ocl_op *op, struct fused_kernel *k,
                         const struct ocl_bcastn *b, int first,
                         TF_Tensor *const *in, const int64_t *in_at,
                         TF_Tensor *out, int64_t out_at, int64_t n)
{
  int num = k->prog.num_inputs;
  int rank = b->rank - first;
  struct launch l;
  if (!bind(op, k, in, in_at, out, out_at, n, &l))
    return false;
  /* dims[8], strides[8 * num], rank: the generated structs' layout. */
  if (n <= INT32_MAX) {
    int32_t s[8 + 8 * FUSED_MAX_INPUTS + 1] = {0};
    for (int d = 0; d < rank; d++) {
      s[d] = (int32_t)b->dims[first + d];
      for (int i = 0; i < num; i++)
        s[8 + 8 * i + d] = (int32_t)b->strides[i][first + d];
    }
    s[8 + 8 * num] = rank;
    l.args[l.num_args++] = OCL_INT(n);
    l.args[l.num_args++] = OCL_BYTES(s, sizeof(int32_t) * (size_t)(9 + 8 * num));
    const struct ocl_device_info *info = ocl_op_info(op);
    if (info == NULL)
      return false;
    if (info->cpu_shape) {
      l.args[l.num_args++] = OCL_INT(OCL_BCAST_SPAN_ELEMENTS);
      return ocl_launch_rows(op, &k->k[BCAST_SPAN],
                             (size_t)((n + OCL_BCAST_SPAN_ELEMENTS - 1) /
                                      OCL_BCAST_SPAN_ELEMENTS),
                             l.args, l.num_args);
    }
    return ocl_launch_1d(op, &k->k[BCAST], (size_t)n, l.args, l.num_args);
  }
  int64_t s[8 + 8 * FUSED_MAX_INPUTS + 1] = {0};
  for (int d = 0; d < rank; d++) {
    s[d] = b->dims[first + d];
    for (int i = 0; i < num; i++)
      s[8 + 8 * i + d] = b->strides[i][first + d];
  }
  s[8 + 8 * num] = rank;
  l.args[l.num_args++] = OCL_LONG(n);
  l.args[l.num_args++] = OCL_BYTES(s, sizeof(int64_t) * (size_t)(9 + 8 * num));
  return ocl_launch_1d(op, &k->k[BCAST64], (size_t)n, l.args, l.num_args);
}

/* The _bcast3d_m kernel for `mask`, made (source and names; the build
 * comes at its first launch) the first time a launch needs it; NULL where
 * the chain keeps MASKED_MAX already or host memory ran out (the caller
 * takes _bcast3d_mixed). */
static struct masked_kernel *masked_kernel(struct fused_kernel *k,
                                           unsigned mask)
{
  int n = atomic_load_explicit(&k->num_masked, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (k->masked[i].mask == mask)
      return &k->masked[i];
  struct masked_kernel *found = NULL;
  pthread_mutex_lock(&k->masked_lock);
  n = atomic_load_explicit(&k->num_masked, memory_order_relaxed);
  for (int i = 0; i < n && found == NULL; i++)
    if (k->masked[i].mask == mask)
      found = &k->masked[i];
  if (found == NULL && n < MASKED_MAX) {
    struct masked_kernel *m = &k->masked[n];
    size_t len = strlen(k->name) + 16;
    m->mask = mask;
    m->name = malloc(len);
    m->source = generate(&k->prog, mask);
    if (m->name != NULL && m->source != NULL) {
      snprintf(m->name, len, MASKED_PREFIX "%x:%s", mask,
               k->name + strlen("fused:"));
      m->program = (struct ocl_program){m->name, m->source, NULL};
      ocl_kernel_init(&m->kernel, &m->program, "fused_bcast3d_m");
      ocl_kernel_init(&m->rows, &m->program, "fused_bcast3d_m_rows");
      found = m;
      atomic_store_explicit(&k->num_masked, n + 1, memory_order_release);
    } else {
      free(m->name);
      free(m->source);
      *m = (struct masked_kernel){0};
    }
  }
  pthread_mutex_unlock(&k->masked_lock);
  return found;
}

/* The 3-dim kernels (_bcast3d, _bcast3d_mixed, _bcast3) where they fit:
 * collapsed dims [first, b->rank), up to 3, n elements, in 32-bit
 * indices, inputs from element offsets in_at, the output from out_at;
 * false with the status OK where they do not fit, for launch_bcast. */
static bool launch_bcast3(struct ocl_op *op, struct fused_kernel *k,
                          const struct ocl_bcastn *b, int first,
                          TF_Tensor *const *in, const int64_t *in_at,
                          TF_Tensor *out, int64_t out_at, int64_t n,
                          bool *launched)
{
  *launched = false;
  int rank = b->rank - first;
  if (rank > 3 || n > INT32_MAX)
    return true;
  int num = k->prog.num_inputs;
  struct launch l;
  if (!bind(op, k, in, in_at, out, out_at, n, &l))
    return false;
  /* Padded to 3 dims on the outer side, in the generated fused_bcast3_t's
   * layout: 8 uints, then 3 strides per input. */
  uint32_t dims[3] = {1, 1, 1};
  int32_t s[8 + 3 * FUSED_MAX_INPUTS] = {0};
  bool all_inner = true;
  for (int d = 0; d < rank; d++) {
    int at = 3 - rank + d;
    dims[at] = (uint32_t)b->dims[first + d];
    for (int i = 0; i < num; i++)
      s[8 + 3 * i + at] = (int32_t)b->strides[i][first + d];
  }
  for (int i = 0; i < num; i++)
    all_inner = all_inner && s[8 + 3 * i + 2] == 1;
  uint32_t head[8] = {(uint32_t)n, dims[0], dims[1], dims[2]};
  size_t args_size = sizeof(int32_t) * (size_t)(8 + 3 * num);
  enum variant v = all_inner ? BCAST3D : BCAST3D_MIXED;
  if (dims[2] >= BCAST3D_MIN_INNER) {
    struct ocl_kernel *kernel = &k->k[v], *rows = &k->k[BCAST3D_ROWS];
    if (v == BCAST3D_MIXED) {
      unsigned mask = 0;
      for (int i = 0; i < num; i++)
        mask |= (s[8 + 3 * i + 2] == 0 ? 1U : 0U) << i;
      struct masked_kernel *masked = masked_kernel(k, mask);
      kernel = masked != NULL ? &masked->kernel : kernel;
      rows = masked != NULL ? &masked->rows : NULL;
    }
    if (rows != NULL && op->info->cpu_shape) {
      memcpy(s, head, sizeof(head));
      l.args[l.num_args++] = OCL_BYTES(s, args_size);
      *launched = true;
      return ocl_launch_spans(op, rows,
                              (const int64_t[3]){dims[0], dims[1], dims[2]},
                              l.args, l.num_args);
    }
    /* Work-groups of the element-wise size, dimension 0 the largest power
     * of two within the innermost dim (binary.c's bcast3d_local). */
    size_t total =
        ocl_kernel_fit_local(op, kernel, ocl_elementwise_local(op->info));
    if (total == 0)
      return false;
    if (total >= BCAST3D_MIN_INNER) {
      if (v == BCAST3D_MIXED)
        for (int i = 0; i < num; i++)
          s[8 + 3 * i + 2] = s[8 + 3 * i + 2] ? INT32_MAX : 0;
      memcpy(s, head, sizeof(head));
      l.args[l.num_args++] = OCL_BYTES(s, args_size);
      size_t local[3] = {total, 1, 1};
      while (local[0] > dims[2])
        local[0] /= 2;
      local[1] = total / local[0];
      size_t global[3] = {dims[2], dims[1], dims[0]};
      *launched = true;
      return ocl_launch(op, kernel, 3, global, local, l.args, l.num_args);
    }
  }
  struct ocl_fastdiv inner = ocl_fastdiv_of(dims[2]),
                     mid = ocl_fastdiv_of(dims[1]);
  head[4] = inner.magic;
  head[5] = inner.shift;
  head[6] = mid.magic;
  head[7] = mid.shift;
  memcpy(s, head, sizeof(head));
  l.args[l.num_args++] = OCL_BYTES(s, args_size);
  *launched = true;
  return ocl_launch_1d(op, &k->k[BCAST3], (size_t)n, l.args, l.num_args);
}

/* More collapsed dims than a kernel takes: one launch per index of the
 * leading dims, the last `kept` in the kernel: the 3-dim kernels where
 * they fit, else the general one. */
static bool launch_bcast_split(struct ocl_op *op, struct fused_kernel *k,
                               const struct ocl_bcastn *b, int kept,
                               TF_Tensor *const *in, TF_Tensor *out)
{
  int num = k->prog.num_inputs;
  int outer = b->rank - kept;
  int64_t inner = 1, index[OCL_MAX_RANK] = {0};
  for (int d = outer; d < b->rank; d++)
    inner *= b->dims[d];
  for (int64_t out_at = 0; out_at < b->out_elements; out_at += inner) {
    int64_t in_at[FUSED_MAX_INPUTS] = {0};
    for (int d = 0; d < outer; d++)
      for (int i = 0; i < num; i++)
        in_at[i] += index[d] * b->strides[i][d];
    bool launched = false;
    if (!launch_bcast3(op, k, b, outer, in, in_at, out, out_at, inner,
                       &launched))
      return false;
    if (!launched &&
        !launch_bcast(op, k, b, outer, in, in_at, out, out_at, inner))
      return false;
    for (int d = outer - 1; d >= 0 && ++index[d] == b->dims[d]; d--)
      index[d] = 0;
  }
  return true;
}

/* A tiled op's shapes. Input i with tile_rank[i] > 0 stands for
 * Tile(x, m): x repeated m[d] times along d. Where x's dim is 1 that is a
 * broadcast; where x's dim and m[d] both exceed 1 the output dim is split
 * in two, (m, x): the tiled input is [1, x] there (a broadcast over the
 * copies), a full input [m, x], a broadcast one [1, 1], the contiguous
 * tensors' own layout. dims[num] becomes the output's shape in that space
 * (so the broadcast reaches the tiled sizes where every real input is 1),
 * out_dims the output's own. */
static bool split_tiles(struct ocl_op *op, const struct fused_kernel *k,
                        int num, int64_t dims[][OCL_MAX_RANK], int ranks[],
                        int64_t *out_dims, int *out_rank)
{
  int rank = 0;
  for (int i = 0; i < num; i++) {
    if (k->tile_rank[i] > 0 && ranks[i] != k->tile_rank[i]) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Expected multiples argument to be a vector of length %d "
                  "but got length %d (input %d)",
                  ranks[i], k->tile_rank[i], i);
      return false;
    }
    rank = ranks[i] > rank ? ranks[i] : rank;
  }
  /* The output: the broadcast of the inputs' tiled shapes; per dim, the
   * copies m (> 1) of the input that repeats it whole, 0 if none. */
  int64_t copies[OCL_MAX_RANK];
  for (int e = 0; e < rank; e++) {
    out_dims[e] = 1;
    copies[e] = 0;
    for (int i = 0; i < num; i++) {
      int at = e - (rank - ranks[i]);
      if (at < 0)
        continue;
      int64_t x = dims[i][at], m = k->tile_rank[i] > 0 ? k->tiles[i][at] : 1;
      int64_t size = x * m;
      if (size != 1 && out_dims[e] != 1 && size != out_dims[e]) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "Incompatible shapes: dimension %d is %lld in input %d "
                    "(tiled) and %lld in another",
                    e, (long long)size, i, (long long)out_dims[e]);
        return false;
      }
      if (size != 1)
        out_dims[e] = size;
      if (x > 1 && m > 1) {
        if (copies[e] != 0 && copies[e] != m) {
          ocl_op_fail(op, TF_UNIMPLEMENTED,
                      "%s: two inputs tile dimension %d differently",
                      FUSED_TILED_OP_NAME, e);
          return false;
        }
        copies[e] = m;
      }
    }
  }
  int split_rank = rank;
  for (int e = 0; e < rank; e++)
    split_rank += copies[e] != 0;
  if (split_rank > OCL_MAX_RANK) {
    ocl_op_fail(op, TF_UNIMPLEMENTED,
                "%s: %d dims once the tiles are split (at most %d)",
                FUSED_TILED_OP_NAME, split_rank, OCL_MAX_RANK);
    return false;
  }
  for (int i = 0; i <= num; i++) {
    int64_t split[OCL_MAX_RANK];
    int n = 0;
    for (int e = 0; e < rank; e++) {
      int at = i < num ? e - (rank - ranks[i]) : e;
      int64_t x = i == num ? out_dims[e] : at >= 0 ? dims[i][at] : 1;
      bool repeats = i < num && at >= 0 && k->tile_rank[i] > 0 &&
                     k->tiles[i][at] > 1 && x > 1;
      if (copies[e] == 0) {
        split[n++] = x;
      } else if (repeats) {
        split[n++] = 1;
        split[n++] = x;
      } else if (x == out_dims[e]) {
        split[n++] = copies[e];
        split[n++] = x / copies[e];
      } else {
        split[n++] = 1;
        split[n++] = 1;
      }
    }
    memcpy(dims[i], split, sizeof(int64_t) * (size_t)n);
    ranks[i] = n;
  }
  *out_rank = rank;
  return true;
}

static void fused_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct fused_kernel *k = kernel;
  struct ocl_op op;
  int num = k->prog.num_inputs;
  TF_Tensor *in[FUSED_MAX_INPUTS];
  int64_t dims[FUSED_MAX_INPUTS + 1][OCL_MAX_RANK];
  const int64_t *dim_ptrs[FUSED_MAX_INPUTS + 1];
  int ranks[FUSED_MAX_INPUTS + 1];
  struct ocl_bcastn b;

  ocl_op_begin(&op, ctx);
  if (ocl_tf.NumInputs(ctx) != num) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT, "%s: %d inputs, the program has %d",
                FUSED_OP_NAME, ocl_tf.NumInputs(ctx), num);
    goto out;
  }
  for (int i = 0; i < num; i++) {
    in[i] = ocl_op_input(&op, i);
    if (in[i] == NULL)
      goto out;
    ranks[i] = ocl_tf.NumDims(in[i]);
    if (ranks[i] > OCL_MAX_RANK) {
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "input %d has rank %d", i,
                  ranks[i]);
      goto out;
    }
    for (int d = 0; d < ranks[i]; d++)
      dims[i][d] = ocl_tf.Dim(in[i], d);
    dim_ptrs[i] = dims[i];
  }
  /* Tiled: every input and the output's shape (operand num) in the split
   * index space; the output is allocated at its own shape. */
  int64_t out_dims[OCL_MAX_RANK];
  int out_rank = 0;
  if (k->tiled) {
    if (!split_tiles(&op, k, num, dims, ranks, out_dims, &out_rank))
      goto out;
    dim_ptrs[num] = dims[num];
  }
  if (!ocl_bcastn_init(&b, dim_ptrs, ranks, num + k->tiled, op.status))
    goto out;
  if (!k->tiled) {
    out_rank = b.out_rank;
    memcpy(out_dims, b.out_dims, sizeof(int64_t) * (size_t)out_rank);
  }
  /* Any input of the output's type and size may become the output (each
   * kernel reads every input of that size at the index it stores). */
  _Static_assert(FUSED_MAX_INPUTS == 8, "a candidate per input");
  static const int candidates[FUSED_MAX_INPUTS] = {0, 1, 2, 3, 4, 5, 6, 7};
  int forwarded;
  TF_Tensor *z = ocl_op_output_over_inputs(&op, 0, in, candidates, num,
                                           out_dims, out_rank, &forwarded);
  if (z == NULL || b.out_elements == 0)
    goto out;
  bool launched = false;
  /* A CPU device's _flat with single-element inputs ran element by
   * element: PoCL does not vectorise the loads at i * step. As one row of
   * _bcast3d_m_rows those inputs are read once (the MLP's six Adam weight
   * updates, a scalar learning rate each: 0.12 ms a step, 0.025 now). */
  const struct ocl_device_info *info = ocl_op_info(&op);
  if (info == NULL)
    goto out;
  bool singles_as_row = b.flat && !b.same_shape && info->cpu_shape &&
                        b.out_elements >= BCAST3D_MIN_INNER;
  if ((!b.flat || singles_as_row) &&
      (!launch_bcast3(&op, k, &b, 0, in, (const int64_t[FUSED_MAX_INPUTS]){0},
                      z, 0, b.out_elements, &launched) ||
       launched))
    goto out;
  /* A CPU device's rows take 3 collapsed dims (shape.h's
   * OCL_SPLIT_ROWS_*): the general kernel ran relu(a + b) over a
   * [64, 16, 256, 256] outer sum at 0.1x TensorFlow's CPU. */
  int64_t per_launch =
      b.rank > 3 ? b.dims[b.rank - 3] * b.dims[b.rank - 2] * b.dims[b.rank - 1]
                 : 0;
  if (b.flat)
    launch_flat(&op, k, &b, in, z);
  else if (b.rank > OCL_MAX_DIMS)
    launch_bcast_split(&op, k, &b, OCL_MAX_DIMS, in, z);
  else if (info->cpu_shape && b.rank > 3 &&
           b.dims[b.rank - 1] >= BCAST3D_MIN_INNER &&
           b.out_elements <= INT32_MAX &&
           per_launch >= OCL_SPLIT_ROWS_MIN_ELEMENTS &&
           b.out_elements / per_launch <= OCL_SPLIT_ROWS_MAX_LAUNCHES)
    launch_bcast_split(&op, k, &b, 3, in, z);
  else
    launch_bcast(&op, k, &b, 0, in, (const int64_t[FUSED_MAX_INPUTS]){0}, z,
                 0, b.out_elements);
out:
  ocl_op_end(&op);
}

/* ---- The op definition ---------------------------------------------------- */

/* The output: the broadcast of the inputs' shapes. Dim by dim from the
 * right: a known dim other than 1 wins (two different ones are an error),
 * else an unknown one, else 1; an input of unknown rank makes it all
 * unknown. Built from the inputs' own dims (Subshape + Concatenate), the
 * only way the C API has to make a shape of given dims. */
static void fused_shape_fn(TF_ShapeInferenceContext *ctx, TF_Status *status)
{
  int64_t num = ocl_tf.ShapeInferenceContextNumInputs(ctx);
  TF_ShapeHandle *in[FUSED_MAX_INPUTS] = {NULL};
  int64_t ranks[FUSED_MAX_INPUTS];
  TF_ShapeHandle *result = NULL, *piece = NULL;
  TF_DimensionHandle *dim = ocl_tf.NewDimensionHandle();
  int64_t rank = 0;

  ocl_set_ok(status);
  if (num < 1 || num > FUSED_MAX_INPUTS) {
    ocl_set_status(status, TF_INVALID_ARGUMENT, "%s takes 1 to %d inputs",
                   FUSED_OP_NAME, FUSED_MAX_INPUTS);
    goto out;
  }
  for (int64_t i = 0; i < num; i++) {
    in[i] = ocl_tf.NewShapeHandle();
    ocl_tf.ShapeInferenceContextGetInput(ctx, (int)i, in[i], status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto out;
    if (!ocl_tf.ShapeInferenceContextRankKnown(ctx, in[i])) {
      ocl_tf.ShapeInferenceContextSetUnknownShape(ctx, status);
      goto out;
    }
    ranks[i] = ocl_tf.ShapeInferenceContextRank(ctx, in[i]);
    rank = ranks[i] > rank ? ranks[i] : rank;
  }
  result = ocl_tf.ShapeInferenceContextScalar(ctx);
  piece = ocl_tf.NewShapeHandle();
  for (int64_t d = 0; d < rank; d++) {
    /* The first input with a known dim other than 1, else the first
     * unknown one, else the first 1. */
    int64_t known = -1, known_at = 0, known_value = 0;
    int64_t unknown = -1, unknown_at = 0, one = -1, one_at = 0;
    for (int64_t i = 0; i < num; i++) {
      int64_t at = ranks[i] - rank + d;
      if (at < 0)
        continue;
      ocl_tf.ShapeInferenceContextDim(ctx, in[i], at, dim);
      if (!ocl_tf.DimensionHandleValueKnown(dim)) {
        if (unknown < 0) {
          unknown = i;
          unknown_at = at;
        }
        continue;
      }
      int64_t v = ocl_tf.DimensionHandleValue(dim);
      if (v == 1) {
        if (one < 0) {
          one = i;
          one_at = at;
        }
      } else if (known < 0) {
        known = i;
        known_at = at;
        known_value = v;
      } else if (v != known_value) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Incompatible shapes: dimension %lld is %lld in input "
                       "%lld and %lld in input %lld",
                       (long long)(d - rank), (long long)known_value,
                       (long long)known, (long long)v, (long long)i);
        goto out;
      }
    }
    int64_t pick = known >= 0 ? known : unknown >= 0 ? unknown : one;
    int64_t pick_at = known >= 0 ? known_at : unknown >= 0 ? unknown_at
                                                            : one_at;
    ocl_tf.ShapeInferenceContextSubshape(ctx, in[pick], pick_at, pick_at + 1,
                                         piece, status);
    if (ocl_tf.GetCode(status) == TF_OK)
      ocl_tf.ShapeInferenceContextConcatenateShapes(ctx, result, piece,
                                                    result, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto out;
  }
  ocl_tf.ShapeInferenceContextSetOutput(ctx, 0, result, status);
out:
  for (int64_t i = 0; i < FUSED_MAX_INPUTS; i++)
    ocl_tf.DeleteShapeHandle(in[i]);
  ocl_tf.DeleteShapeHandle(result);
  ocl_tf.DeleteShapeHandle(piece);
  ocl_tf.DeleteDimensionHandle(dim);
}

/* The first function of the op-definition API or of the attribute getters
 * the kernel needs that this TensorFlow lacks, or NULL. */
static const char *missing_api(void)
{
#define NEED(name)            \
  if (ocl_tf.name == NULL)    \
    return "TF_" #name;
  NEED(NewOpDefinitionBuilder)
  NEED(RegisterOpDefinition)
  NEED(DeleteOpDefinitionBuilder)
  NEED(OpDefinitionBuilderAddAttr)
  NEED(OpDefinitionBuilderAddInput)
  NEED(OpDefinitionBuilderAddOutput)
  NEED(OpDefinitionBuilderSetShapeInferenceFunction)
  NEED(ShapeInferenceContextNumInputs)
  NEED(ShapeInferenceContextGetInput)
  NEED(ShapeInferenceContextSetOutput)
  NEED(ShapeInferenceContextScalar)
  NEED(ShapeInferenceContextRank)
  NEED(ShapeInferenceContextRankKnown)
  NEED(ShapeInferenceContextDim)
  NEED(ShapeInferenceContextSubshape)
  NEED(ShapeInferenceContextSetUnknownShape)
  NEED(ShapeInferenceContextConcatenateShapes)
  NEED(NewShapeHandle)
  NEED(DeleteShapeHandle)
  NEED(NewDimensionHandle)
  NEED(DeleteDimensionHandle)
  NEED(DimensionHandleValueKnown)
  NEED(DimensionHandleValue)
  NEED(OpKernelConstruction_GetAttrSize)
  NEED(OpKernelConstruction_GetAttrTypeList)
  NEED(OpKernelConstruction_GetAttrInt64List)
  NEED(OpKernelConstruction_GetAttrFloatList)
#undef NEED
  return NULL;
}

static void say_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say_once(const char *fmt, ...)
{
  static atomic_flag said = ATOMIC_FLAG_INIT;
  va_list ap;
  if (atomic_flag_test_and_set(&said))
    return;
  va_start(ap, fmt);
  fprintf(stderr, "tfocl: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
}

/* Registers the op. Inside TensorFlow a definition it rejects aborts the
 * process, so this one is fixed text that TensorFlow's OpDefBuilder
 * accepts; the host shim reports problems through the status. */
/* The tiled op's output: its dims depend on the "tiles" attribute, which
 * a shape function cannot read, so nothing is claimed about them. */
static void fused_tiled_shape_fn(TF_ShapeInferenceContext *ctx,
                                 TF_Status *status)
{
  ocl_set_ok(status);
  ocl_tf.ShapeInferenceContextSetUnknownShape(ctx, status);
}

static bool register_op(const char *name, bool tiled)
{
  TF_OpDefinitionBuilder *b = ocl_tf.NewOpDefinitionBuilder(name);
  if (b == NULL)
    return false;
  ocl_tf.OpDefinitionBuilderAddInput(b, "args: Targs");
  ocl_tf.OpDefinitionBuilderAddOutput(b, "output: T");
  ocl_tf.OpDefinitionBuilderAddAttr(b, "Targs: list(type) >= 1");
  ocl_tf.OpDefinitionBuilderAddAttr(b, "T: {float, half}");
  ocl_tf.OpDefinitionBuilderAddAttr(b, "program: list(int)");
  ocl_tf.OpDefinitionBuilderAddAttr(b, "constants: list(float) = []");
  if (tiled)
    ocl_tf.OpDefinitionBuilderAddAttr(b, "tiles: list(int)");
  ocl_tf.OpDefinitionBuilderSetShapeInferenceFunction(
      b, tiled ? fused_tiled_shape_fn : fused_shape_fn);
  TF_Status *status = ocl_tf.NewStatus();
  ocl_tf.RegisterOpDefinition(b, status); /* takes b */
  bool ok = ocl_tf.GetCode(status) == TF_OK;
  if (!ok)
    say_once("element-wise fusion off: registering %s failed: %s", name,
             ocl_tf.Message(status));
  ocl_tf.DeleteStatus(status);
  return ok;
}

void ocl_register_fused_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF};
  const char *missing = missing_api();
  if (missing != NULL) {
    say_once("element-wise fusion off: this TensorFlow lacks %s", missing);
    return;
  }
  static const char *const ops[] = {FUSED_OP_NAME, FUSED_TILED_OP_NAME};
  for (int o = 0; o < 2; o++) {
    if (!register_op(ops[o], o == 1))
      return;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = ops[o],
          .create = fused_create,
          .compute = fused_compute,
          .destroy = fused_delete,
          .type_attrs = {"T"},
          .types = {types[t]},
      });
  }
}
