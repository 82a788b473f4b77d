/* Binary element-wise ops with NumPy broadcasting, BiasAdd and AddN.
 *
 * float, half, int64, bool and double run on the device (binary.cl, one
 * program per storage type; double only where cl_khr_fp64 is). int32
 * follows TensorFlow's GPU convention: its arguments live in host memory
 * and the op is computed on the host, since int32 tensors in a graph are
 * nearly always shapes and indices that the host needs next anyway. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_binary[];

OCL_PROGRAM_TABLE
static const struct ocl_program programs[OCL_NUM_STORAGES] =
    OCL_TYPED_PROGRAMS("binary", ocl_cl_source_binary);

/* Each op's own name (binary.def's KIND column), for the int32 ops the
 * host computes and the ops' special cases. */
enum binary_kind {
#define BINARY_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN, CASES,  \
                  MATH, INT_MATH)                                            \
  KIND,
#include "binary.def"
};

/* Type sets, as bits of TF_DataType: binary.def's TYPES column. */
#define TB(t) (1u << (t))
#define TYPES_FLOATS (TB(TF_FLOAT) | TB(TF_HALF) | TB(TF_DOUBLE))
#define TYPES_FLOAT_DOUBLE (TB(TF_FLOAT) | TB(TF_DOUBLE))
#define TYPES_INTEGERS (TB(TF_INT64) | TB(TF_INT32))
#define TYPES_FLOAT_DOUBLE_INTEGERS (TYPES_FLOAT_DOUBLE | TYPES_INTEGERS)
#define TYPES_NUMBERS (TYPES_FLOATS | TYPES_INTEGERS)
#define TYPES_NUMBERS_BOOL (TYPES_NUMBERS | TB(TF_BOOL))
#define TYPES_BOOL TB(TF_BOOL)

struct binary_op {
  const char *op;
  const char *kernel; /* prefix in binary.cl */
  enum binary_kind kind;
  unsigned types;
  bool bool_out;
  bool typed; /* has a "T" attribute */
};

#define FORM_BOOL_OUT_ARITH false
#define FORM_BOOL_OUT_COMPARE true

static const struct binary_op binary_ops[] = {
#define BINARY_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN, CASES,  \
                  MATH, INT_MATH)                                            \
  {#NAME, #KERNEL, KIND, TYPES_##TYPES, FORM_BOOL_OUT_##FORM,                 \
   TYPES_##TYPES != TYPES_BOOL},
#define BINARY_ALIAS(NAME, KERNEL, KIND, TYPES, FORM, SIG, REF, DOMAIN,      \
                     CASES, ENUM)                                            \
  BINARY_OP(NAME, KERNEL, KIND, TYPES, FORM, SIG, _, _, _, _, _)
#include "binary.def"
};

/* The kernels of one op on one storage type (binary.cl's suffixes). */
enum variant {
  FLAT,
  SCALAR,
  BCAST,
  BCAST3D,
  BCAST3D_ONE,
  BCAST3D_ROWS,
  BCAST3D_PATTERN,
  BCASTF,
  BCAST64,
  BCAST_SPAN,
  NUM_VARIANTS
};
static const char *const variant_suffix[NUM_VARIANTS] = {
    "flat",         "scalar",          "bcast",  "bcast3d", "bcast3d_one",
    "bcast3d_rows", "bcast3d_pattern", "bcastf", "bcast64", "bcast_span"};

struct variants {
  struct ocl_kernel k[NUM_VARIANTS];
};

/* The kernel state: which op, on which storage, and its cl_kernels. */
struct binary_kernel {
  const struct binary_op *op;
  TF_DataType dtype;
  enum ocl_storage storage;
  /* Equal/NotEqual: false turns incompatible shapes into a scalar answer
   * instead of an error, as TensorFlow does. */
  bool incompatible_shape_error;
  struct variants kernels; /* not for int32 (host) */
};

/* The collapsed broadcast as binary.cl's bcast_t and bcast32_t read it. */
struct bcast_args {
  cl_long dims[OCL_MAX_DIMS];
  cl_long x_strides[OCL_MAX_DIMS];
  cl_long y_strides[OCL_MAX_DIMS];
  cl_long rank;
};

struct bcast32_args {
  cl_int dims[OCL_MAX_DIMS];
  cl_int x_strides[OCL_MAX_DIMS];
  cl_int y_strides[OCL_MAX_DIMS];
  cl_int rank;
};

/* binary.cl's bcast3_t: dims [outer, mid, inner], padded on the outer
 * side; operands (p, q) = (x, y), or (y, x) where swap is set. */
struct bcast3_args {
  cl_uint n, outer, mid, inner;
  cl_uint inner_magic, inner_shift, mid_magic, mid_shift;
  cl_uint swap;
  cl_int p_strides[3];
  cl_int q_strides[3];
};

/* Names the kernels of `op` on `storage` (create time). */
static bool variants_init(struct variants *v, const struct binary_op *op,
                          enum ocl_storage storage)
{
  if (storage == OCL_STORAGE_HOST_INT32)
    return true;
  for (int i = 0; i < NUM_VARIANTS; i++)
    if (!ocl_kernel_initf(&v->k[i], &programs[storage], "%s_%s", op->kernel,
                          variant_suffix[i]))
      return false;
  return true;
}

/* ---- int32 on the host ---------------------------------------------------- */

/* The quotient in double is within 2^-22 / |b| of a / b, whose fraction is
 * 0 or at least 1 / |b|: truncating it is exact, and divides 2-wide where
 * idiv would not vectorise. INT32_MIN / -1 wraps to INT32_MIN as
 * TensorFlow's does (no trap: the quotient is computed in double). */
static inline int64_t trunc_div_i32(int32_t a, int32_t b)
{
  return (int64_t)((double)a / (double)b);
}

static inline int32_t wrap_i32(int64_t v)
{
  return (int32_t)(uint32_t)(uint64_t)v;
}

/* Python's floor division and modulo, as TensorFlow's FloorDiv/FloorMod. */
static inline int32_t floor_div_i32(int32_t a, int32_t b)
{
  int64_t q = trunc_div_i32(a, b);
  return wrap_i32(q - ((q * b != a) & ((a < 0) != (b < 0))));
}

static inline int32_t floor_mod_i32(int32_t a, int32_t b)
{
  int64_t r = (int64_t)a - trunc_div_i32(a, b) * b;
  /* Arithmetic, not a branch: signs at random mispredicted it half the
   * time (4M elements: 39 ms). */
  int64_t wrong_sign = (r != 0) & ((r < 0) != (b < 0));
  return (int32_t)(r + (b & -wrong_sign));
}

static bool has_zero(const int32_t *y, int64_t ys, int64_t n)
{
  if (ys == 0)
    return n > 0 && y[0] == 0;
  bool zero = false;
  for (int64_t i = 0; i < n; i++)
    zero |= y[i] == 0;
  return zero;
}

/* z[i] = EXPR(a, v) over a row, a = x's element and v = y's, each operand
 * advancing by its stride (1, or 0 where broadcast): a loop per kind, so
 * that the same-shape rows vectorise (a switch per element took 8 ms for
 * 4M int32 adds, TensorFlow's CPU 0.9). */
#define HOST_ROW(IN_T, OUT_T, EXPR) \
  do { \
    const IN_T *xr = x, *yr = y; \
    OUT_T *zr = z; \
    if (xs == 1 && ys == 1) { \
      for (int64_t i = 0; i < n; i++) { \
        int32_t a = xr[i], v = yr[i]; \
        zr[i] = (OUT_T)(EXPR); \
      } \
    } else { \
      for (int64_t i = 0; i < n; i++) { \
        int32_t a = xr[i * xs], v = yr[i * ys]; \
        zr[i] = (OUT_T)(EXPR); \
      } \
    } \
  } while (0)
#define INT_ROW(EXPR) HOST_ROW(int32_t, int32_t, EXPR)
#define COMPARE_ROW(EXPR) HOST_ROW(int32_t, uint8_t, EXPR)

/* One row of n elements of an int32 op, or of a logical op's bool operands
 * (`bool_operands`). False with the status set on a division by zero. */
static bool host_row(enum binary_kind kind, const void *x, int64_t xs,
                     const void *y, int64_t ys, bool bool_operands, void *z,
                     int64_t n, TF_Status *status)
{
  if (bool_operands) {
    switch (kind) {
    case LOGICAL_AND: HOST_ROW(uint8_t, uint8_t, a && v); return true;
    case LOGICAL_OR: HOST_ROW(uint8_t, uint8_t, a || v); return true;
    default: break;
    }
    ocl_set_status(status, TF_INTERNAL, "no host path for this op");
    return false;
  }
  switch (kind) {
  /* Wrap-around as TensorFlow's int32 kernels do. */
  case ADD: INT_ROW((uint32_t)a + (uint32_t)v); return true;
  case SUB: INT_ROW((uint32_t)a - (uint32_t)v); return true;
  case MUL: INT_ROW((uint32_t)a * (uint32_t)v); return true;
  case MAXIMUM: INT_ROW(a > v ? a : v); return true;
  case MINIMUM: INT_ROW(a < v ? a : v); return true;
  case BITWISE_AND: INT_ROW(a & v); return true;
  case BITWISE_OR: INT_ROW(a | v); return true;
  case BITWISE_XOR: INT_ROW(a ^ v); return true;
  /* Shifts clamped to [0, 31] as TensorFlow's functors do. */
  case LEFT_SHIFT:
    INT_ROW((uint32_t)a << (v < 0 ? 0 : v > 31 ? 31 : v));
    return true;
  case RIGHT_SHIFT: INT_ROW(a >> (v < 0 ? 0 : v > 31 ? 31 : v)); return true;
  case SQUARED_DIFFERENCE:
    INT_ROW(((uint32_t)a - (uint32_t)v) * ((uint32_t)a - (uint32_t)v));
    return true;
  case EQUAL: COMPARE_ROW(a == v); return true;
  case NOT_EQUAL: COMPARE_ROW(a != v); return true;
  case LESS: COMPARE_ROW(a < v); return true;
  case LESS_EQUAL: COMPARE_ROW(a <= v); return true;
  case GREATER: COMPARE_ROW(a > v); return true;
  case GREATER_EQUAL: COMPARE_ROW(a >= v); return true;
  case FLOOR_DIV:
  case FLOOR_MOD:
  case TRUNCATE_DIV:
  case TRUNCATE_MOD: break;
  default:
    ocl_set_status(status, TF_INTERNAL, "no host path for this op");
    return false;
  }
  if (has_zero(y, ys, n)) {
    if (kind == FLOOR_DIV || kind == FLOOR_MOD)
      ocl_set_status(status, TF_INVALID_ARGUMENT, "Integer division by zero");
    else
      /* TensorFlow's CPU functors fail the same way, but its message
       * names only Div, Mod, FloorDiv and FloorMod as division ops. */
      ocl_set_status(status, TF_INTERNAL,
                     "Unexpected error in binary operator (only integer "
                     "div and mod should have errors)");
    return false;
  }
  switch (kind) {
  case FLOOR_DIV: INT_ROW(floor_div_i32(a, v)); break;
  case FLOOR_MOD: INT_ROW(floor_mod_i32(a, v)); break;
  case TRUNCATE_DIV: INT_ROW(wrap_i32(trunc_div_i32(a, v))); break;
  default: /* TRUNCATE_MOD */
    INT_ROW((int64_t)a - trunc_div_i32(a, v) * v);
    break;
  }
  return true;
}

/* int32 operands, or bool ones (the logical ops' host kernels) when
 * `bool_operands`, into bools where `bool_out`: row by row along the
 * innermost collapsed dim, the rows' offsets stepped as an odometer. */
static bool host_binary(enum binary_kind kind, const struct ocl_bcast *b,
                        const void *x, const void *y, bool bool_operands,
                        bool bool_out, void *z, TF_Status *status)
{
  size_t in_size = bool_operands ? 1 : sizeof(int32_t);
  size_t out_size = bool_out ? 1 : sizeof(int32_t);
  int inner = b->rank - 1;
  int64_t n = b->rank > 0 ? b->dims[inner] : 1;
  int64_t xs = b->rank > 0 ? b->x_strides[inner] : 0;
  int64_t ys = b->rank > 0 ? b->y_strides[inner] : 0;
  int64_t index[OCL_MAX_RANK] = {0}, xi = 0, yi = 0;
  for (int64_t at = 0; at < b->out_elements; at += n) {
    if (!host_row(kind, (const char *)x + xi * in_size, xs,
                  (const char *)y + yi * in_size, ys, bool_operands,
                  (char *)z + at * out_size, n, status))
      return false;
    for (int d = inner - 1; d >= 0; d--) {
      xi += b->x_strides[d];
      yi += b->y_strides[d];
      if (++index[d] < b->dims[d])
        break;
      xi -= index[d] * b->x_strides[d];
      yi -= index[d] * b->y_strides[d];
      index[d] = 0;
    }
  }
  return true;
}

/* ---- Launching ------------------------------------------------------------ */

/* Whether every index of the broadcast fits in an int. */
static bool fits_int32(const struct ocl_bcast *b)
{
  return b->out_elements <= INT32_MAX;
}

/* The work-group of the _bcast3d kernels for padded collapsed dims
 * [outer, mid, inner]: the element-wise size (PoCL's work-groups as large
 * as _flat's; one of a few local sizes, each compiled once), dimension 0
 * the largest power of two within the innermost dim, so that at most half
 * its work-items idle past the end of a row: measured on PoCL, an
 * innermost dim of 33 in 64 lanes still beats the 1-D kernels' split
 * indices (1.1 against 1.3 ms for 1M floats). False where the innermost
 * dim is too short to fill SIMD lanes, or with the status set where the
 * kernel cannot be built. */
static bool bcast3d_local(struct ocl_op *op, struct ocl_kernel *kernel,
                          const int64_t dims[3], size_t local[3])
{
  enum { MIN_INNER = 16 };
  if (dims[2] < MIN_INNER)
    return false;
  size_t total =
      ocl_kernel_fit_local(op, kernel, ocl_elementwise_local(op->info));
  if (total < MIN_INNER)
    return false;
  size_t l0 = total;
  while (l0 > (size_t)dims[2])
    l0 /= 2;
  local[0] = l0;
  local[1] = total / l0;
  local[2] = 1;
  return true;
}

/* The shortest row _bcast3d_rows takes: a SIMD vector of floats; shorter
 * rows go to _bcast3d_pattern (q varying along the rows only), _bcastf
 * (one operand of z's shape) or _bcast. binary.cl has both values. */
#define ROWS_MIN_INNER 16
#define BCAST_PATTERN_ROWS 16

/* _bcast3d_pattern over padded collapsed dims [outer, mid, inner]: runs of
 * whole rows, a multiple of BCAST_PATTERN_ROWS, about 4096 elements each
 * while every compute unit still gets a few (one work-item per group: a
 * run is a group's worth of work). */
static bool launch_pattern(struct ocl_op *op, struct ocl_kernel *kernel,
                           const int64_t dims[3], struct ocl_arg *argv)
{
  enum { RUN_ELEMENTS = 4096 };
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  int64_t units = info->compute_units ? info->compute_units : 1;
  int64_t per = RUN_ELEMENTS / dims[2];
  int64_t spread = (dims[1] + 4 * units - 1) / (4 * units);
  if (per > spread)
    per = spread;
  per =
      (per + BCAST_PATTERN_ROWS - 1) / BCAST_PATTERN_ROWS * BCAST_PATTERN_ROWS;
  size_t global[2] = {(size_t)((dims[1] + per - 1) / per), (size_t)dims[0]};
  size_t local[2] = {1, 1};
  argv[4] = OCL_INT(per);
  return ocl_launch(op, kernel, 2, global, local, argv, 5);
}

/* The _bcast3d and _bcastf kernels for collapsed dims [first, b->rank),
 * at most 3, in 32-bit indices. True once launched; false with *launched
 * set where the launch failed (status set), false with it clear where
 * neither kernel fits (both operands broadcast, innermost under 16: the
 * general _bcast). */
static bool launch_bcast3(struct ocl_op *op, struct variants *v,
                          const struct ocl_bcast *b, int first,
                          const struct ocl_buffer *xb,
                          const struct ocl_buffer *yb,
                          const struct ocl_buffer *zb, int64_t n,
                          const TF_Tensor *x, const TF_Tensor *y,
                          bool *launched)
{
  int rank = b->rank - first;
  int64_t dims[3] = {1, 1, 1};
  cl_int xs[3] = {0, 0, 0}, ys[3] = {0, 0, 0};
  for (int d = 0; d < rank; d++) {
    dims[3 - rank + d] = b->dims[first + d];
    xs[3 - rank + d] = (cl_int)b->x_strides[first + d];
    ys[3 - rank + d] = (cl_int)b->y_strides[first + d];
  }
  struct bcast3_args a = {.n = (cl_uint)n,
                          .outer = (cl_uint)dims[0],
                          .mid = (cl_uint)dims[1],
                          .inner = (cl_uint)dims[2]};
  /* The innermost collapsed dim is never broadcast in both operands: an
   * operand's stride there is 1 or 0. p is the operand that varies along
   * it (_bcast3d_one), or that has z's shape (_bcastf). */
  bool x_full = ocl_tf.TensorElementCount(x) == b->out_elements;
  bool y_full = ocl_tf.TensorElementCount(y) == b->out_elements;
  enum variant which = xs[2] == 1 && ys[2] == 1 ? BCAST3D : BCAST3D_ONE;
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL) {
    *launched = true;
    return false;
  }
  bool rows = info->cpu_shape && dims[2] >= ROWS_MIN_INNER;
  size_t local[3];
  if (!rows && !bcast3d_local(op, &v->k[which], dims, local)) {
    if (!ocl_op_ok(op)) {
      *launched = true;
      return false;
    }
    if (!x_full && !y_full)
      return false;
    which = BCASTF;
  }
  a.swap = which == BCAST3D ? 0 : which == BCAST3D_ONE ? xs[2] == 0 : !x_full;
  memcpy(a.p_strides, a.swap ? ys : xs, sizeof(a.p_strides));
  memcpy(a.q_strides, a.swap ? xs : ys, sizeof(a.q_strides));
  const struct ocl_buffer *p = a.swap ? yb : xb, *q = a.swap ? xb : yb;
  struct ocl_arg argv[5] = {OCL_BUF(*p), OCL_BUF(*q), OCL_BUF(*zb),
                            OCL_BYTES(&a, sizeof(a))};
  *launched = true;
  if (rows)
    return ocl_launch_spans(op, &v->k[BCAST3D_ROWS], dims, argv, 4);
  if (which == BCASTF && info->cpu_shape && a.q_strides[1] == 0 &&
      a.q_strides[2] == 1)
    return launch_pattern(op, &v->k[BCAST3D_PATTERN], dims, argv);
  if (which != BCASTF) {
    size_t global[3] = {(size_t)dims[2], (size_t)dims[1], (size_t)dims[0]};
    return ocl_launch(op, &v->k[which], 3, global, local, argv, 4);
  }
  struct ocl_fastdiv inner = ocl_fastdiv_of(a.inner),
                     mid = ocl_fastdiv_of(a.mid);
  a.inner_magic = inner.magic;
  a.inner_shift = inner.shift;
  a.mid_magic = mid.magic;
  a.mid_shift = mid.shift;
  return ocl_launch_1d(op, &v->k[BCASTF], (size_t)n, argv, 4);
}

/* One launch of the _bcast kernels over collapsed dims [first, b->rank)
 * (at most OCL_MAX_DIMS), at element offsets of x, y and z. */
static bool launch_bcast(struct ocl_op *op, struct variants *v,
                         const struct ocl_bcast *b, int first,
                         const TF_Tensor *x, int64_t x_at, const TF_Tensor *y,
                         int64_t y_at, TF_Tensor *z, int64_t z_at, size_t xsize,
                         size_t zsize, int64_t n)
{
  struct ocl_buffer xb, yb, zb;
  bool launched = false;
  if (!ocl_op_buffer(op, x, (size_t)x_at * xsize,
                     ocl_tf.TensorByteSize(x) - (size_t)x_at * xsize, &xb) ||
      !ocl_op_buffer(op, y, (size_t)y_at * xsize,
                     ocl_tf.TensorByteSize(y) - (size_t)y_at * xsize, &yb) ||
      !ocl_op_buffer(op, z, (size_t)z_at * zsize, (size_t)n * zsize, &zb))
    return false;
  int rank = b->rank - first;
  if (fits_int32(b) && rank <= 3 &&
      launch_bcast3(op, v, b, first, &xb, &yb, &zb, n, x, y, &launched))
    return true;
  if (launched || !ocl_op_ok(op))
    return false;
  if (fits_int32(b)) {
    struct bcast32_args a = {.rank = rank};
    for (int d = 0; d < rank; d++) {
      a.dims[d] = (cl_int)b->dims[first + d];
      a.x_strides[d] = (cl_int)b->x_strides[first + d];
      a.y_strides[d] = (cl_int)b->y_strides[first + d];
    }
    const struct ocl_device_info *info = ocl_op_info(op);
    if (info == NULL)
      return false;
    if (info->cpu_shape) {
      const struct ocl_arg argv[] = {OCL_BUF(xb),
                                     OCL_BUF(yb),
                                     OCL_BUF(zb),
                                     OCL_INT(n),
                                     OCL_INT(OCL_BCAST_SPAN_ELEMENTS),
                                     OCL_BYTES(&a, sizeof(a))};
      return ocl_launch_rows(op, &v->k[BCAST_SPAN],
                             (size_t)((n + OCL_BCAST_SPAN_ELEMENTS - 1) /
                                      OCL_BCAST_SPAN_ELEMENTS),
                             argv, 6);
    }
    const struct ocl_arg argv[] = {OCL_BUF(xb), OCL_BUF(yb), OCL_BUF(zb),
                                   OCL_INT(n), OCL_BYTES(&a, sizeof(a))};
    return ocl_launch_1d(op, &v->k[BCAST], (size_t)n, argv, 5);
  }
  struct bcast_args a = {.rank = rank};
  for (int d = 0; d < rank; d++) {
    a.dims[d] = b->dims[first + d];
    a.x_strides[d] = b->x_strides[first + d];
    a.y_strides[d] = b->y_strides[first + d];
  }
  const struct ocl_arg argv[] = {OCL_BUF(xb), OCL_BUF(yb), OCL_BUF(zb),
                                 OCL_LONG(n), OCL_BYTES(&a, sizeof(a))};
  return ocl_launch_1d(op, &v->k[BCAST64], (size_t)n, argv, 5);
}

/* A broadcast of more collapsed dims than a kernel takes: one launch per
 * index of the leading dims, the last `kept` in the kernel. */
static bool launch_bcast_split(struct ocl_op *op, struct variants *v,
                               const struct ocl_bcast *b, int kept,
                               const TF_Tensor *x, const TF_Tensor *y,
                               TF_Tensor *z, size_t xsize, size_t zsize)
{
  int outer = b->rank - kept;
  int64_t inner = 1, index[OCL_MAX_RANK] = {0};
  for (int d = outer; d < b->rank; d++)
    inner *= b->dims[d];
  for (int64_t z_at = 0; z_at < b->out_elements; z_at += inner) {
    int64_t x_at = 0, y_at = 0;
    for (int d = 0; d < outer; d++) {
      x_at += index[d] * b->x_strides[d];
      y_at += index[d] * b->y_strides[d];
    }
    if (!launch_bcast(op, v, b, outer, x, x_at, y, y_at, z, z_at, xsize, zsize,
                      inner))
      return false;
    for (int d = outer - 1; d >= 0 && ++index[d] == b->dims[d]; d--)
      index[d] = 0;
  }
  return true;
}

/* z = x (op) y over the broadcast `b`, on the device or (int32) host. */
static bool run_binary(struct ocl_op *op, const struct binary_op *bop,
                       struct variants *v, enum ocl_storage storage,
                       const struct ocl_bcast *b, const TF_Tensor *x,
                       const TF_Tensor *y, TF_Tensor *z)
{
  if (b->out_elements == 0)
    return true;
  if (storage == OCL_STORAGE_HOST_INT32)
    return host_binary(bop->kind, b, ocl_host_data(x), ocl_host_data(y),
                       !bop->typed, bop->bool_out || !bop->typed,
                       ocl_host_data(z), op->status);
  if (b->same_shape) {
    const struct ocl_arg argv[] = {OCL_TENSOR(x), OCL_TENSOR(y), OCL_TENSOR(z),
                                   OCL_LONG(b->out_elements)};
    return ocl_launch_flat(op, &v->k[FLAT], (size_t)b->out_elements, argv, 4);
  }
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  /* A CPU device's go as one row of _bcast3d_rows below, which reads the
   * single element once per span: PoCL cannot hoist _scalar's load of it
   * out of its work-item loop past the stores to z, which may alias it,
   * and did not vectorise the loop (4M floats: 1.2-1.7 ms against a flat
   * product's 0.9-1.0). */
  bool rows =
      info->cpu_shape && b->out_elements >= ROWS_MIN_INNER && fits_int32(b);
  if ((b->x_scalar || b->y_scalar) && !rows) {
    /* (p, q) = (y, x) where x is the single element. */
    const TF_Tensor *p = b->x_scalar ? y : x, *q = b->x_scalar ? x : y;
    const struct ocl_arg argv[] = {OCL_TENSOR(p), OCL_TENSOR(q), OCL_TENSOR(z),
                                   OCL_LONG(b->out_elements),
                                   OCL_INT(b->x_scalar)};
    return ocl_launch_1d(op, &v->k[SCALAR], (size_t)b->out_elements, argv, 5);
  }
  size_t xsize = ocl_tf.DataTypeSize(ocl_tf.TensorType(x));
  size_t zsize = ocl_tf.DataTypeSize(ocl_tf.TensorType(z));
  /* More than OCL_MAX_DIMS: alternating broadcasts in 9 or more dims. */
  if (b->rank > OCL_MAX_DIMS)
    return launch_bcast_split(op, v, b, OCL_MAX_DIMS, x, y, z, xsize, zsize);
  /* A CPU device's rows take 3 collapsed dims: more go as a rows launch
   * per index of the leading dims where each launch is large. The general
   * kernel divides per dim and element: an outer sum of [64, 1, 256, 256]
   * and [64, 16, 1, 256] took 181 ms against TensorFlow CPU's 11. */
  if (rows && b->rank > 3 && b->dims[b->rank - 1] >= ROWS_MIN_INNER) {
    int64_t per_launch =
        b->dims[b->rank - 3] * b->dims[b->rank - 2] * b->dims[b->rank - 1];
    if (per_launch >= OCL_SPLIT_ROWS_MIN_ELEMENTS &&
        b->out_elements / per_launch <= OCL_SPLIT_ROWS_MAX_LAUNCHES)
      return launch_bcast_split(op, v, b, 3, x, y, z, xsize, zsize);
  }
  return launch_bcast(op, v, b, 0, x, 0, y, 0, z, 0, xsize, zsize,
                      b->out_elements);
}

/* Equal/NotEqual with incompatible_shape_error=false: a scalar answer. */
static void incompatible_scalar(struct ocl_op *op,
                                const struct binary_kernel *k)
{
  TF_Tensor *z = ocl_op_output(op, 0, TF_BOOL, NULL, 0);
  if (z == NULL)
    return;
  cl_uchar value = k->op->kind == NOT_EQUAL;
  if (k->storage == OCL_STORAGE_HOST_INT32)
    *(cl_uchar *)ocl_host_data(z) = value;
  else
    ocl_op_fill(op, z, 0, &value, 1, 1);
}

/* ---- Kernel callbacks ---------------------------------------------------- */

/* `on_host`: the logical ops' kernels under OCL_HOST_KERNEL_LABEL, whose
 * operands live in host memory like int32's. */
static void *binary_create_on(TF_OpKernelConstruction *ctx, int index,
                              bool on_host)
{
  const struct binary_op *op = &binary_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct binary_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  k->dtype = TF_BOOL;
  if (op->typed) {
    ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
    if (ocl_tf.GetCode(status) != TF_OK)
      goto fail;
  }
  k->storage = on_host ? OCL_STORAGE_HOST_INT32 : ocl_storage_of(k->dtype);
  k->incompatible_shape_error = true;
  if (op->kind == EQUAL || op->kind == NOT_EQUAL) {
    TF_Bool value = 1;
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "incompatible_shape_error",
                                            &value, status);
    /* Absent from older graphs: TensorFlow's default is true. */
    ocl_set_ok(status);
    k->incompatible_shape_error = value != 0;
  }
  if (!variants_init(&k->kernels, op, k->storage)) {
    ocl_set_status(status, TF_INTERNAL, "%s: kernel name too long", op->op);
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void binary_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct binary_kernel *k = kernel;
  struct ocl_op op;
  int64_t x_dims[OCL_MAX_RANK], y_dims[OCL_MAX_RANK];
  struct ocl_bcast b;

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *y = x ? ocl_op_input(&op, 1) : NULL;
  int x_rank = y ? ocl_op_dims(&op, x, x_dims) : -1;
  int y_rank = x_rank >= 0 ? ocl_op_dims(&op, y, y_dims) : -1;
  if (y_rank < 0)
    goto out;
  if (!ocl_bcast_init(&b, x_dims, x_rank, y_dims, y_rank, op.status)) {
    if (!k->incompatible_shape_error &&
        ocl_tf.GetCode(op.status) == TF_INVALID_ARGUMENT) {
      ocl_set_ok(op.status);
      incompatible_scalar(&op, k);
    }
    goto out;
  }
  /* An element-wise kernel may write over an input of the output's shape
   * (each work-item reads its own index before writing it). */
  static const int candidates[] = {0, 1};
  int forwarded;
  TF_Tensor *held[2] = {x, y};
  TF_Tensor *z =
      k->op->bool_out
          ? ocl_op_output(&op, 0, TF_BOOL, b.out_dims, b.out_rank)
          : ocl_op_output_over_inputs(&op, 0, held, candidates, 2, b.out_dims,
                                      b.out_rank, &forwarded);
  x = held[0];
  y = held[1];
  if (z != NULL)
    run_binary(&op, k->op, &k->kernels, k->storage, &b, x, y, z);
out:
  ocl_op_end(&op);
}

static void binary_delete(void *kernel) { free(kernel); }

#define NUM_BINARY_OPS ((int)(sizeof(binary_ops) / sizeof(binary_ops[0])))
_Static_assert(NUM_BINARY_OPS <= OCL_MAX_FAMILY_OPS,
               "one create function per binary op");
static void *binary_create(TF_OpKernelConstruction *ctx, int index)
{
  return binary_create_on(ctx, index, false);
}

static void *binary_create_host(TF_OpKernelConstruction *ctx, int index)
{
  return binary_create_on(ctx, index, true);
}

OCL_FAMILY_CREATES(binary, binary_create);
OCL_FAMILY_CREATES(binary_host, binary_create_host);

/* ---- BiasAdd ---------------------------------------------------------------- */

struct bias_kernel {
  TF_DataType dtype;
  bool channels_first; /* data_format NCHW */
  struct variants add;
};

static void *bias_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct bias_kernel *k = calloc(1, sizeof(*k));
  char format[8] = "NHWC";
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  ocl_tf.OpKernelConstruction_GetAttrString(ctx, "data_format", format,
                                            sizeof(format) - 1, status);
  /* An absent attribute means the default, NHWC. */
  ocl_set_ok(status);
  k->channels_first = strncmp(format, "NCHW", 4) == 0 ||
                      strncmp(format, "NCDHW", 5) == 0;
  variants_init(&k->add, &binary_ops[0], ocl_storage_of(k->dtype));
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

static void bias_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct bias_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK], bias_dims[OCL_MAX_RANK];
  struct ocl_bcast b;

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *bias = x ? ocl_op_input(&op, 1) : NULL;
  int rank = bias ? ocl_op_dims(&op, x, dims) : -1;
  int bias_rank = rank >= 0 ? ocl_op_dims(&op, bias, bias_dims) : -1;
  if (bias_rank < 0)
    goto out;
  if (rank < 2 || bias_rank != 1 ||
      bias_dims[0] != dims[k->channels_first ? 1 : rank - 1]) {
    char shape[160], bias_shape[160];
    ocl_shape_format(dims, rank, shape, sizeof(shape));
    ocl_shape_format(bias_dims, bias_rank, bias_shape, sizeof(bias_shape));
    if (rank < 2)
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Input tensor must be at least 2D: %s", shape);
    else if (bias_rank != 1)
      ocl_op_fail(&op, TF_INVALID_ARGUMENT, "Biases must be 1D: %s",
                  bias_shape);
    else
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Must provide as many biases as the last dimension of the "
                  "input tensor: %s vs. %s",
                  bias_shape, shape);
    goto out;
  }
  int channel_dim = k->channels_first ? 1 : rank - 1;
  /* The bias as [C, 1, ..., 1] aligned with the channel dim. */
  int64_t aligned[OCL_MAX_RANK];
  int aligned_rank = rank - channel_dim;
  aligned[0] = bias_dims[0];
  for (int i = 1; i < aligned_rank; i++)
    aligned[i] = 1;
  if (!ocl_bcast_init(&b, dims, rank, aligned, aligned_rank, op.status))
    goto out;
  TF_Tensor *z = ocl_op_output(&op, 0, k->dtype, dims, rank);
  if (z != NULL)
    run_binary(&op, &binary_ops[0], &k->add, ocl_storage_of(k->dtype), &b, x,
               bias, z);
out:
  ocl_op_end(&op);
}

/* ---- AddN ------------------------------------------------------------------- */

struct addn_kernel {
  TF_DataType dtype;
  struct variants add, maximum;
};

static void *addn_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct addn_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  variants_init(&k->add, &binary_ops[0], ocl_storage_of(k->dtype));
  variants_init(&k->maximum, &binary_ops[6], ocl_storage_of(k->dtype));
  ocl_tf.DeleteStatus(status);
  return k;
}

/* sum = inputs[0] + inputs[1] + ...: the first add writes the output, each
 * later one accumulates into it in place (element-wise, so aliasing x and z
 * is safe). */
static void addn_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct addn_kernel *k = kernel;
  struct ocl_op op;
  int n = ocl_tf.NumInputs(ctx);
  int64_t dims[OCL_MAX_RANK], other_dims[OCL_MAX_RANK];
  enum ocl_storage storage = ocl_storage_of(k->dtype);

  ocl_op_begin(&op, ctx);
  TF_Tensor *first = ocl_op_input(&op, 0);
  int rank = first ? ocl_op_dims(&op, first, dims) : -1;
  TF_Tensor *sum =
      rank >= 0 ? ocl_op_output(&op, 0, k->dtype, dims, rank) : NULL;
  if (sum == NULL)
    goto out;
  int64_t elements = ocl_shape_elements(dims, rank);
  struct ocl_bcast flat = {.rank = 1, .dims = {elements}, .x_strides = {1},
                           .y_strides = {1}, .same_shape = true,
                           .out_elements = elements};
  if (n == 1) {
    /* A copy: x + 0 would turn -0 into +0, so use Maximum(x, x). */
    run_binary(&op, &binary_ops[6], &k->maximum, storage, &flat, first, first,
               sum);
    goto out;
  }
  for (int i = 1; i < n && ocl_op_ok(&op); i++) {
    TF_Tensor *other = ocl_op_input(&op, i);
    int other_rank = other ? ocl_op_dims(&op, other, other_dims) : -1;
    if (other_rank < 0)
      goto out;
    if (other_rank != rank ||
        memcmp(other_dims, dims, sizeof(int64_t) * (size_t)rank) != 0) {
      char a[160], c[160];
      ocl_shape_format(dims, rank, a, sizeof(a));
      ocl_shape_format(other_dims, other_rank, c, sizeof(c));
      ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                  "Inputs to operation AddN must have the same size and "
                  "shape.  Input 0: %s != input %d: %s",
                  a, i, c);
      goto out;
    }
    run_binary(&op, &binary_ops[0], &k->add, storage, &flat,
               i == 1 ? first : sum, other, sum);
    ocl_op_release(&op, other);
  }
out:
  ocl_op_end(&op);
}

/* ---- ApproximateEqual ------------------------------------------------------ */

struct approx_kernel {
  float tolerance;
  struct ocl_kernel kernel;
};

static void *approx_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct approx_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  ocl_tf.OpKernelConstruction_GetAttrFloat(ctx, "tolerance", &k->tolerance,
                                           status);
  if (ocl_tf.GetCode(status) != TF_OK) {
    /* Absent from a hand-built node: TensorFlow's default. */
    ocl_set_ok(status);
    k->tolerance = 1e-5f;
  }
  ocl_kernel_init(&k->kernel, &programs[OCL_STORAGE_FLOAT],
                  "approximate_equal");
  ocl_tf.DeleteStatus(status);
  return k;
}

/* z = |x - y| < tolerance. Unlike the other comparisons it does not
 * broadcast: TensorFlow requires equal shapes. */
static void approx_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct approx_kernel *k = kernel;
  struct ocl_op op;
  int64_t x_dims[OCL_MAX_RANK], y_dims[OCL_MAX_RANK];

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  TF_Tensor *y = x ? ocl_op_input(&op, 1) : NULL;
  int x_rank = y ? ocl_op_dims(&op, x, x_dims) : -1;
  int y_rank = x_rank >= 0 ? ocl_op_dims(&op, y, y_dims) : -1;
  if (y_rank < 0)
    goto out;
  if (x_rank != y_rank ||
      memcmp(x_dims, y_dims, sizeof(int64_t) * (size_t)x_rank) != 0) {
    char a[160], b[160];
    ocl_shape_format(x_dims, x_rank, a, sizeof(a));
    ocl_shape_format(y_dims, y_rank, b, sizeof(b));
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "x and y must be of the same shape. x shape: %s. y shape: %s",
                a, b);
    goto out;
  }
  TF_Tensor *z = ocl_op_output(&op, 0, TF_BOOL, x_dims, x_rank);
  int64_t n = ocl_shape_elements(x_dims, x_rank);
  if (z == NULL || n == 0)
    goto out;
  const struct ocl_arg argv[] = {OCL_TENSOR(x), OCL_TENSOR(y), OCL_TENSOR(z),
                                 OCL_LONG(n), OCL_FLOAT(k->tolerance)};
  ocl_launch_1d(&op, &k->kernel, (size_t)n, argv, 5);
out:
  ocl_op_end(&op);
}

/* ---- Ternary ops: Betainc and ClipByValue ----------------------------------
 * Not the binary ops' broadcasting: each input has the output's shape or is
 * a scalar (ClipByValue's t always has it), so a kernel reads input k at
 * i * step_k, step 0 for a scalar. */

enum ternary_kind { BETAINC, CLIP_BY_VALUE };

struct ternary_kernel {
  enum ternary_kind kind;
  TF_DataType dtype;
  enum ocl_storage storage;
  int zero_limits; /* Betainc: TensorFlow 2.22's limits at a or b = 0 */
  struct ocl_kernel kernel; /* not for int32 (host) */
  struct ocl_kernel scalars; /* ClipByValue's bounds both scalars */
};

static void *ternary_create(TF_OpKernelConstruction *ctx,
                            enum ternary_kind kind)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct ternary_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  k->kind = kind;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  k->storage = ocl_storage_of(k->dtype);
  k->zero_limits = kind == BETAINC && ocl_tf_minor_version() >= 22;
  if (k->storage != OCL_STORAGE_HOST_INT32) {
    ocl_kernel_init(&k->kernel, &programs[k->storage],
                    kind == BETAINC ? "betainc" : "clip_by_value");
    if (kind == CLIP_BY_VALUE)
      ocl_kernel_init(&k->scalars, &programs[k->storage],
                      "clip_by_value_scalars");
  }
  ocl_tf.DeleteStatus(status);
  return k;
}

static void *betainc_create(TF_OpKernelConstruction *ctx)
{
  return ternary_create(ctx, BETAINC);
}

static void *clip_create(TF_OpKernelConstruction *ctx)
{
  return ternary_create(ctx, CLIP_BY_VALUE);
}

static bool same_dims(const int64_t *a, int a_rank, const int64_t *b,
                      int b_rank)
{
  return a_rank == b_rank &&
         memcmp(a, b, sizeof(int64_t) * (size_t)a_rank) == 0;
}

/* TensorFlow's checks: Betainc's inputs pairwise equal where neither is a
 * scalar; ClipByValue's bounds of t's shape or scalars. On success the
 * output's shape is in *out. */
static bool ternary_shapes(struct ocl_op *op, enum ternary_kind kind,
                           int64_t dims[3][OCL_MAX_RANK], const int rank[3],
                           int *out)
{
  char s[3][160];
  for (int i = 0; i < 3; i++)
    ocl_shape_format(dims[i], rank[i], s[i], sizeof(s[i]));
  if (kind == CLIP_BY_VALUE) {
    *out = 0;
    for (int i = 1; i < 3; i++)
      if (rank[i] != 0 && !same_dims(dims[0], rank[0], dims[i], rank[i])) {
        ocl_op_fail(op, TF_INVALID_ARGUMENT,
                    "clip_value_min and clip_value_max must be either of "
                    "the same shape as input, or a scalar. input shape: "
                    "%sclip_value_min shape: %sclip_value_max shape: %s",
                    s[0], s[1], s[2]);
        return false;
      }
    return true;
  }
  static const char names[] = "abx";
  static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int p = 0; p < 3; p++) {
    int i = pairs[p][0], j = pairs[p][1];
    if (rank[i] > 0 && rank[j] > 0 &&
        !same_dims(dims[i], rank[i], dims[j], rank[j])) {
      ocl_op_fail(op, TF_INVALID_ARGUMENT,
                  "Shapes of %c and %c are inconsistent: %s vs. %s",
                  names[i], names[j], s[i], s[j]);
      return false;
    }
  }
  /* The last input that is not a scalar (all scalars: a scalar). */
  *out = rank[2] > 0 ? 2 : rank[1] > 0 ? 1 : 0;
  return true;
}

/* ClipByValue's int32, in host memory as TensorFlow's GPU registration. */
static void host_clip_int32(const int32_t *t, const int32_t *lo,
                            const int32_t *hi, const int step[3], int32_t *z,
                            int64_t n)
{
  for (int64_t i = 0; i < n; i++) {
    int32_t v = t[i * step[0]], l = lo[i * step[1]], h = hi[i * step[2]];
    int32_t m = h < v ? h : v;
    z[i] = m < l ? l : m;
  }
}

static void ternary_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct ternary_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[3][OCL_MAX_RANK];
  int rank[3], out;
  TF_Tensor *in[3] = {NULL, NULL, NULL};

  ocl_op_begin(&op, ctx);
  for (int i = 0; i < 3; i++) {
    in[i] = ocl_op_input(&op, i);
    rank[i] = in[i] ? ocl_op_dims(&op, in[i], dims[i]) : -1;
    if (rank[i] < 0)
      goto out;
  }
  if (!ternary_shapes(&op, k->kind, dims, rank, &out))
    goto out;
  TF_Tensor *z = ocl_op_output(&op, 0, k->dtype, dims[out], rank[out]);
  int64_t n = ocl_shape_elements(dims[out], rank[out]);
  if (z == NULL || n == 0)
    goto out;
  int step[3];
  for (int i = 0; i < 3; i++)
    step[i] = rank[i] > 0 || rank[out] == 0;
  if (k->storage == OCL_STORAGE_HOST_INT32) {
    host_clip_int32(ocl_host_data(in[0]), ocl_host_data(in[1]),
                    ocl_host_data(in[2]), step, ocl_host_data(z), n);
    goto out;
  }
  const struct ocl_arg argv[] = {
      OCL_TENSOR(in[0]), OCL_TENSOR(in[1]), OCL_TENSOR(in[2]),
      OCL_TENSOR(z),     OCL_LONG(n),       OCL_INT(step[0]),
      OCL_INT(step[1]),  OCL_INT(step[2]),  OCL_INT(k->zero_limits),
  };
  if (k->kind == CLIP_BY_VALUE && step[0] && !step[1] && !step[2])
    ocl_launch_flat(&op, &k->scalars, (size_t)n, argv, 5);
  else
    ocl_launch_1d(&op, &k->kernel, (size_t)n, argv, 9);
out:
  ocl_op_end(&op);
}

/* ---- Registration ------------------------------------------------------ */

static const TF_DataType register_types[] = {TF_FLOAT, TF_HALF, TF_INT64,
                                             TF_INT32, TF_BOOL, TF_DOUBLE};

void ocl_register_binary_kernels(void)
{
  static const char *const xyz[] = {"x", "y", "z", NULL};

  for (int i = 0; i < NUM_BINARY_OPS; i++) {
    const struct binary_op *op = &binary_ops[i];
    for (size_t t = 0; t < sizeof(register_types) / sizeof(register_types[0]);
         t++) {
      TF_DataType dtype = register_types[t];
      if (!(op->types & TB(dtype)))
        continue;
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = binary_creates[i],
          .compute = binary_compute,
          .destroy = binary_delete,
          .type_attrs = {op->typed ? "T" : NULL},
          .types = {dtype},
          .host_args = dtype == TF_INT32 ? xyz : NULL,
      });
    }
    /* A while loop's condition: LogicalAnd of int32 comparisons (Keras'
     * recurrent layers, tf.while_loop with maximum_iterations). The
     * comparisons answer in host memory, and the Switch and LoopCond
     * reading the answer want it there, so the device kernel costs two
     * copies in, a launch and a copy out that waits for the whole queue,
     * every iteration. The graph optimizer gives such nodes this label
     * (pass_host_conditions.c): their operands stay on the host. */
    if (op->kind == LOGICAL_AND || op->kind == LOGICAL_OR)
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = op->op,
          .create = binary_host_creates[i],
          .compute = binary_compute,
          .destroy = binary_delete,
          .host_args = xyz,
          .label = OCL_HOST_KERNEL_LABEL,
      });
  }

  /* TensorFlow's kernels: float and double only. */
  ocl_register_kernel(&(const struct ocl_kernel_spec){
      .op = "ApproximateEqual",
      .create = approx_create,
      .compute = approx_compute,
      .destroy = binary_delete,
      .type_attrs = {"T"},
      .types = {TF_FLOAT},
  });

  /* Betainc: float and double only in TensorFlow. */
  static const TF_DataType betainc_types[] = {TF_FLOAT, TF_DOUBLE};
  for (size_t t = 0; t < sizeof(betainc_types) / sizeof(betainc_types[0]); t++)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "Betainc",
        .create = betainc_create,
        .compute = ternary_compute,
        .destroy = binary_delete,
        .type_attrs = {"T"},
        .types = {betainc_types[t]},
    });
  static const char *const clip_args[] = {"t", "clip_value_min",
                                          "clip_value_max", "output", NULL};
  static const TF_DataType clip_types[] = {TF_FLOAT, TF_HALF, TF_INT64,
                                           TF_INT32, TF_DOUBLE};
  for (size_t t = 0; t < sizeof(clip_types) / sizeof(clip_types[0]); t++)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "ClipByValue",
        .create = clip_create,
        .compute = ternary_compute,
        .destroy = binary_delete,
        .type_attrs = {"T"},
        .types = {clip_types[t]},
        .host_args = clip_types[t] == TF_INT32 ? clip_args : NULL,
    });

  static const char *const bias_args[] = {"value", "bias", "output", NULL};
  static const char *const addn_args[] = {"inputs", "sum", NULL};
  static const TF_DataType bias_types[] = {TF_FLOAT, TF_HALF, TF_INT64,
                                           TF_DOUBLE};
  for (size_t t = 0; t < sizeof(bias_types) / sizeof(bias_types[0]); t++) {
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "BiasAdd",
        .create = bias_create,
        .compute = bias_compute,
        .destroy = binary_delete,
        .type_attrs = {"T"},
        .types = {bias_types[t]},
        .host_args = bias_types[t] == TF_INT32 ? bias_args : NULL,
    });
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "AddN",
        .create = addn_create,
        .compute = addn_compute,
        .destroy = binary_delete,
        .type_attrs = {"T"},
        .types = {bias_types[t]},
        .host_args = bias_types[t] == TF_INT32 ? addn_args : NULL,
    });
  }
}
