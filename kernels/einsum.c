/* Einsum (float and half): one or two operands, named labels and an
 * ellipsis, as TensorFlow's EinsumOp classifies them:
 *   batch     in both operands and the output (the ellipsis's dimensions
 *             broadcast: size 1 against n);
 *   free      in one operand and the output;
 *   contract  in both operands, not the output;
 *   reduce    in one operand only: summed before the contraction.
 * Two operands become one batched GEMM (gemm.h): each operand is used in
 * place when its layout already is [batch, free, contract] or its
 * transpose (the GEMM's transpose flags), else einsum_gather writes it so
 * (a permutation, a diagonal for a repeated label, the sums of its reduce
 * labels, a broadcast batch); the product goes straight into the output
 * when the output's label order is [batch, free, free] of either operand
 * order, else through a temp and one more gather. One operand is a single
 * gather (or the input itself). The equation is parsed once, when the
 * kernel is created; compute works on fixed-size arrays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_einsum[];

OCL_PROGRAM_TABLE
static const struct ocl_program programs[2] = {
    {"einsum_float", ocl_cl_source_einsum, "-DT=float -DT_IS_FLOAT"},
    {"einsum_half", ocl_cl_source_einsum, "-DT=half -DT_IS_HALF"},
};

#define EINSUM_MAX_DIMS 8  /* of a gather's output, and of its sums */
#define GATHER4_DIMS 4     /* einsum_gather4's */
/* The shortest contiguous innermost dim einsum_gather4_rows copies: a SIMD
 * vector of floats; shorter stay with einsum_gather4. */
#define GATHER4_ROWS_MIN_INNER 16
/* einsum_gather4_tiles' tile: 8 x 8 elements. */
#define GATHER4_TILE 8
#define MAX_SUBSCRIPT 64   /* labels in one subscript, the ellipsis's too */
#define NAMED_LABELS 52    /* a-z, A-Z */
#define MAX_LABELS (NAMED_LABELS + MAX_SUBSCRIPT)

/* einsum.cl's einsum_map, field for field. */
struct einsum_map {
  cl_int rank, reduce_rank, n, reduce_n;
  cl_int dims[EINSUM_MAX_DIMS], strides[EINSUM_MAX_DIMS];
  cl_int rdims[EINSUM_MAX_DIMS], rstrides[EINSUM_MAX_DIMS];
  cl_uint magic[EINSUM_MAX_DIMS], shift[EINSUM_MAX_DIMS];
  cl_uint rmagic[EINSUM_MAX_DIMS], rshift[EINSUM_MAX_DIMS];
};

/* One subscript: its labels (0..51), ELLIPSIS where "..." stands. */
#define ELLIPSIS (-1)
struct subscript {
  int len;
  int labels[MAX_SUBSCRIPT];
};

struct einsum_kernel {
  TF_DataType dtype;
  int num_inputs;
  struct subscript in[2], out;
  bool in_ellipsis[2], out_ellipsis;
  struct ocl_kernel gather;
  struct ocl_kernel gather4; /* at most 4 dims, no sums */
  struct ocl_kernel gather4_rows; /* CPU devices: innermost contiguous */
  struct ocl_kernel gather4_tiles; /* CPU devices: a transpose */
};

enum label_kind { L_ABSENT, L_BATCH, L_FREE0, L_FREE1, L_CONTRACT, L_REDUCE };

static int label_of(char c)
{
  if (c >= 'a' && c <= 'z')
    return c - 'a';
  if (c >= 'A' && c <= 'Z')
    return 26 + (c - 'A');
  return -2;
}

/* Parses "abc...", sets *ellipsis. False with message for a bad one. */
static bool parse_subscript(const char *s, size_t len, struct subscript *sub,
                            bool *ellipsis, const char *equation,
                            TF_Status *status)
{
  sub->len = 0;
  *ellipsis = false;
  for (size_t i = 0; i < len; i++) {
    int label;
    if (s[i] == '.') {
      if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' ||
          *ellipsis) {
        ocl_set_status(status, TF_INVALID_ARGUMENT,
                       "Invalid Einsum equation: \"%s\" (a subscript may "
                       "hold one ellipsis, written ...)",
                       equation);
        return false;
      }
      *ellipsis = true;
      label = ELLIPSIS;
      i += 2;
    } else if ((label = label_of(s[i])) < 0) {
      ocl_set_status(status, TF_INVALID_ARGUMENT,
                     "Invalid character '%c' in Einsum equation \"%s\": "
                     "labels are letters",
                     s[i], equation);
      return false;
    }
    if (sub->len == MAX_SUBSCRIPT) {
      ocl_set_status(status, TF_UNIMPLEMENTED,
                     "Einsum equation \"%s\" has more than %d labels in a "
                     "subscript",
                     equation, MAX_SUBSCRIPT);
      return false;
    }
    sub->labels[sub->len++] = label;
  }
  return true;
}

static bool parse_equation(struct einsum_kernel *k, const char *eq,
                           TF_Status *status)
{
  char clean[512];
  size_t n = 0;
  for (const char *p = eq; *p; p++) {
    if (*p == ' ')
      continue;
    if (n + 1 == sizeof(clean)) {
      ocl_set_status(status, TF_UNIMPLEMENTED, "Einsum equation too long");
      return false;
    }
    clean[n++] = *p;
  }
  clean[n] = '\0';
  const char *arrow = strstr(clean, "->");
  if (arrow == NULL || strstr(arrow + 2, "->") != NULL) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Expecting exactly one '->' in einsum equation: %s", eq);
    return false;
  }
  const char *comma = memchr(clean, ',', (size_t)(arrow - clean));
  int inputs = comma == NULL ? 1 : 2;
  if (comma != NULL && memchr(comma + 1, ',', (size_t)(arrow - comma - 1))) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Expecting 1 or 2 input subscripts in equation '%s' but "
                   "got: 3 or more",
                   eq);
    return false;
  }
  if (inputs != k->num_inputs) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Expecting %d input subscripts in equation '%s' but got: "
                   "%d",
                   k->num_inputs, eq, inputs);
    return false;
  }
  const char *end0 = comma != NULL ? comma : arrow;
  if (!parse_subscript(clean, (size_t)(end0 - clean), &k->in[0],
                       &k->in_ellipsis[0], eq, status))
    return false;
  if (comma != NULL &&
      !parse_subscript(comma + 1, (size_t)(arrow - comma - 1), &k->in[1],
                       &k->in_ellipsis[1], eq, status))
    return false;
  return parse_subscript(arrow + 2, strlen(arrow + 2), &k->out,
                         &k->out_ellipsis, eq, status);
}

static void *einsum_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct einsum_kernel *k = calloc(1, sizeof(*k));
  /* GetAttrString copies the bytes without a terminator. */
  char equation[512] = {0};
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  int32_t n = 0;
  ocl_tf.OpKernelConstruction_GetAttrInt32(ctx, "N", &n, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  if (n < 1 || n > 2) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "Einsum takes 1 or 2 inputs, got %d", (int)n);
    goto fail;
  }
  k->num_inputs = n;
  if (ocl_tf.OpKernelConstruction_GetAttrString == NULL) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "this TensorFlow lacks "
                   "TF_OpKernelConstruction_GetAttrString");
    goto fail;
  }
  ocl_tf.OpKernelConstruction_GetAttrString(ctx, "equation", equation,
                                            sizeof(equation) - 1, status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  equation[sizeof(equation) - 1] = '\0';
  if (!parse_equation(k, equation, status))
    goto fail;
  if (!ocl_kernel_init(&k->gather, &programs[k->dtype == TF_HALF ? 1 : 0],
                       "einsum_gather") ||
      !ocl_kernel_init(&k->gather4, &programs[k->dtype == TF_HALF ? 1 : 0],
                       "einsum_gather4") ||
      !ocl_kernel_init(&k->gather4_rows, &programs[k->dtype == TF_HALF ? 1 : 0],
                       "einsum_gather4_rows") ||
      !ocl_kernel_init(&k->gather4_tiles,
                       &programs[k->dtype == TF_HALF ? 1 : 0],
                       "einsum_gather4_tiles")) {
    ocl_set_status(status, TF_INTERNAL, "Einsum: kernel name too long");
    goto fail;
  }
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

/* ---- One compute: labels to sizes and kinds ----------------------------- */

/* An operand with the ellipsis expanded: label per axis (ellipsis axes get
 * NAMED_LABELS + their position among the broadcast dims, aligned right). */
struct operand {
  const TF_Tensor *t;
  int rank;
  int64_t dims[MAX_SUBSCRIPT];
  int labels[MAX_SUBSCRIPT];
};

struct plan {
  int num_labels_used;
  int64_t size[MAX_LABELS];
  int count[3][MAX_LABELS]; /* per operand 0, 1 and the output (2) */
  enum label_kind kind[MAX_LABELS];
  int out_rank;
  int out_labels[MAX_SUBSCRIPT];
  int64_t out_dims[MAX_SUBSCRIPT];
};

static void shape_text(const struct operand *o, char *buf, size_t len)
{
  size_t n = (size_t)snprintf(buf, len, "[");
  for (int i = 0; i < o->rank && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "",
                          (long long)o->dims[i]);
  if (n < len)
    snprintf(buf + n, len - n, "]");
}

/* Expands op i's subscript against its tensor; records label sizes. */
static bool expand(struct ocl_op *op, const struct subscript *sub,
                   bool has_ellipsis, int index, struct operand *o,
                   int *bcast_dims)
{
  o->rank = ocl_tf.NumDims(o->t);
  if (o->rank > MAX_SUBSCRIPT)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "Einsum input %d has rank %d; OPENCL takes up to %d",
                       index, o->rank, MAX_SUBSCRIPT);
  for (int d = 0; d < o->rank; d++)
    o->dims[d] = ocl_tf.Dim(o->t, d);
  int named = sub->len - (has_ellipsis ? 1 : 0);
  if (!has_ellipsis && o->rank != sub->len)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Expected input %d to have rank %d but got: %d", index,
                       sub->len, o->rank);
  if (has_ellipsis && o->rank < named)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Expected input %d to have rank at least %d but got: "
                       "%d",
                       index, named, o->rank);
  *bcast_dims = o->rank - named;
  int axis = 0;
  for (int i = 0; i < sub->len; i++) {
    if (sub->labels[i] == ELLIPSIS) {
      for (int e = 0; e < *bcast_dims; e++)
        o->labels[axis++] = -100 - e; /* fixed up once all are known */
    } else {
      o->labels[axis++] = sub->labels[i];
    }
  }
  return true;
}

static bool make_plan(struct ocl_op *op, const struct einsum_kernel *k,
                      struct operand *ops, struct plan *p)
{
  int bcast[2] = {0, 0}, max_bcast = 0;
  memset(p, 0, sizeof(*p));
  for (int i = 0; i < k->num_inputs; i++) {
    if (!expand(op, &k->in[i], k->in_ellipsis[i], i, &ops[i], &bcast[i]))
      return false;
    if (bcast[i] > max_bcast)
      max_bcast = bcast[i];
  }
  if (NAMED_LABELS + max_bcast > MAX_LABELS)
    return ocl_op_fail(op, TF_UNIMPLEMENTED, "Einsum: too many dimensions");
  /* Ellipsis axes, aligned right: the last broadcast dim of every operand
   * is the same label. */
  for (int i = 0; i < k->num_inputs; i++)
    for (int a = 0; a < ops[i].rank; a++)
      if (ops[i].labels[a] <= -100) {
        int e = -100 - ops[i].labels[a];
        ops[i].labels[a] = NAMED_LABELS + (max_bcast - bcast[i]) + e;
      }
  char shape[256];
  bool seen[MAX_LABELS] = {false};
  for (int i = 0; i < k->num_inputs; i++) {
    for (int a = 0; a < ops[i].rank; a++) {
      int l = ops[i].labels[a];
      int64_t d = ops[i].dims[a];
      p->count[i][l]++;
      if (l < NAMED_LABELS) {
        if (seen[l] && p->size[l] != d) {
          shape_text(&ops[i], shape, sizeof(shape));
          return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                             "Expected dimension %lld at axis %d of the "
                             "input shaped %s but got dimension %lld",
                             (long long)p->size[l], a, shape, (long long)d);
        }
        p->size[l] = d;
      } else if (!seen[l] || p->size[l] == 1) {
        p->size[l] = d;
      } else if (d != 1 && p->size[l] != d) {
        return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                           "Einsum: the inputs' broadcast (ellipsis) "
                           "dimensions %lld and %lld are incompatible",
                           (long long)p->size[l], (long long)d);
      }
      seen[l] = true;
    }
  }
  p->out_rank = 0;
  for (int i = 0; i < k->out.len; i++) {
    int l = k->out.labels[i];
    if (l == ELLIPSIS) {
      for (int e = 0; e < max_bcast; e++) {
        p->out_labels[p->out_rank++] = NAMED_LABELS + e;
        p->count[2][NAMED_LABELS + e]++;
      }
      continue;
    }
    if (p->count[0][l] == 0 && (k->num_inputs < 2 || p->count[1][l] == 0))
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "Einsum: output label '%c' appears in no input",
                         l < 26 ? 'a' + l : 'A' + (l - 26));
    if (p->count[2][l]++ > 0)
      return ocl_op_fail(op, TF_UNIMPLEMENTED,
                         "Einsum with a label repeated in the output is not "
                         "supported on OPENCL");
    p->out_labels[p->out_rank++] = l;
  }
  if (max_bcast > 0 && !k->out_ellipsis)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Output contains %d broadcasting dimension(s) but no "
                       "ellipsis (...) was found in the output subscripts.",
                       max_bcast);
  for (int l = 0; l < MAX_LABELS; l++) {
    bool in0 = p->count[0][l] > 0;
    bool in1 = k->num_inputs == 2 && p->count[1][l] > 0;
    bool out = p->count[2][l] > 0;
    if (!in0 && !in1)
      p->kind[l] = L_ABSENT;
    else if (out)
      p->kind[l] = in0 && in1 ? L_BATCH : in0 ? L_FREE0 : L_FREE1;
    else
      p->kind[l] = in0 && in1 ? L_CONTRACT : L_REDUCE;
  }
  for (int i = 0; i < p->out_rank; i++)
    p->out_dims[i] = p->size[p->out_labels[i]];
  return true;
}

/* ---- Gathers ---------------------------------------------------------------- */

/* A gather's view of an operand: the element stride of each label (summed
 * over a repeated label's axes: its diagonal), 0 where it lacks it. */
static void label_strides(const struct operand *o, int64_t *stride)
{
  int64_t s = 1;
  memset(stride, 0, sizeof(int64_t) * MAX_LABELS);
  for (int a = o->rank - 1; a >= 0; a--) {
    if (o->dims[a] != 1)
      stride[o->labels[a]] += s;
    s *= o->dims[a];
  }
}

/* Appends dimension (size, stride) to a gather's list, merging it into the
 * previous one where they are contiguous. */
static bool map_push(cl_int *dims, cl_int *strides, cl_int *rank,
                     int64_t size, int64_t stride)
{
  if (size == 1)
    return true;
  if (*rank > 0 && strides[*rank - 1] == stride * size) {
    dims[*rank - 1] = (cl_int)(dims[*rank - 1] * size);
    strides[*rank - 1] = (cl_int)stride;
    return true;
  }
  if (*rank == EINSUM_MAX_DIMS)
    return false;
  dims[*rank] = (cl_int)size;
  strides[*rank] = (cl_int)stride;
  (*rank)++;
  return true;
}

/* y (contiguous, labels `order` of sizes p->size) from operand o, summing
 * the labels in `sums`. */
static bool gather(struct ocl_op *op, struct einsum_kernel *k,
                   const struct plan *p, const struct operand *o,
                   const TF_Tensor *x, const int *order, int order_len,
                   const int *sums, int sums_len, const TF_Tensor *y,
                   int64_t elements)
{
  int64_t stride[MAX_LABELS];
  struct einsum_map m;
  memset(&m, 0, sizeof(m));
  label_strides(o, stride);
  bool ok = true;
  for (int i = 0; i < order_len; i++)
    ok = ok && map_push(m.dims, m.strides, &m.rank, p->size[order[i]],
                        stride[order[i]]);
  int64_t reduce_n = 1;
  for (int i = 0; i < sums_len; i++) {
    ok = ok && map_push(m.rdims, m.rstrides, &m.reduce_rank,
                        p->size[sums[i]], stride[sums[i]]);
    reduce_n *= p->size[sums[i]];
  }
  if (!ok)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "Einsum: an operand needs more than %d strided "
                       "dimensions on OPENCL",
                       EINSUM_MAX_DIMS);
  if (elements == 0)
    return true;
  m.n = (cl_int)elements;
  m.reduce_n = (cl_int)reduce_n;
  struct ocl_kernel *kernel = &k->gather;
  if (m.rank <= GATHER4_DIMS && m.reduce_rank == 0) {
    /* einsum_gather4's layout: the dims right-aligned in 4, 1s before. */
    int pad = GATHER4_DIMS - m.rank;
    memmove(m.dims + pad, m.dims, sizeof(cl_int) * (size_t)m.rank);
    memmove(m.strides + pad, m.strides, sizeof(cl_int) * (size_t)m.rank);
    for (int d = 0; d < pad; d++) {
      m.dims[d] = 1;
      m.strides[d] = 0;
    }
    m.rank = GATHER4_DIMS;
    kernel = &k->gather4;
  }
  for (int d = 0; d < m.rank; d++) {
    struct ocl_fastdiv div = ocl_fastdiv_of((uint32_t)m.dims[d]);
    m.magic[d] = div.magic;
    m.shift[d] = div.shift;
  }
  for (int d = 0; d < m.reduce_rank; d++) {
    struct ocl_fastdiv div = ocl_fastdiv_of((uint32_t)m.rdims[d]);
    m.rmagic[d] = div.magic;
    m.rshift[d] = div.shift;
  }
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (kernel == &k->gather4 && info->cpu_shape && m.strides[3] == 1 &&
      m.dims[3] >= GATHER4_ROWS_MIN_INNER) {
    int64_t dims[3] = {1, elements / m.dims[3], m.dims[3]};
    struct ocl_arg args[] = {OCL_TENSOR(x),
                             OCL_TENSOR(y),
                             OCL_BYTES(&m, sizeof(m)),
                             OCL_INT(dims[1]),
                             {0}};
    return ocl_launch_spans(op, &k->gather4_rows, dims, args, 4);
  }
  if (kernel == &k->gather4 && info->cpu_shape && m.strides[3] != 1 &&
      m.dims[3] >= GATHER4_TILE) {
    int contiguous = -1;
    for (int d = 0; d < 3; d++)
      if (m.strides[d] == 1 && m.dims[d] >= GATHER4_TILE)
        contiguous = d;
    if (contiguous >= 0) {
      cl_int tiles_p = (m.dims[contiguous] + GATHER4_TILE - 1) / GATHER4_TILE;
      cl_int tiles_l = (m.dims[3] + GATHER4_TILE - 1) / GATHER4_TILE;
      cl_int groups =
          (cl_int)(elements / ((int64_t)m.dims[contiguous] * m.dims[3])) *
          tiles_p;
      const struct ocl_arg args[] = {
          OCL_TENSOR(x),       OCL_TENSOR(y),    OCL_BYTES(&m, sizeof(m)),
          OCL_INT(contiguous), OCL_INT(tiles_p), OCL_INT(tiles_l),
          OCL_INT(groups),
      };
      size_t global[2] = {(size_t)tiles_l, (size_t)groups};
      return ocl_launch(op, &k->gather4_tiles, 2, global, NULL, args, 7);
    }
  }
  const struct ocl_arg args[] = {OCL_TENSOR(x), OCL_TENSOR(y),
                                 OCL_BYTES(&m, sizeof(m))};
  return ocl_launch_1d(op, kernel, (size_t)elements, args, 3);
}

/* Whether operand o, as it is, is the contiguous tensor of labels `order`
 * (size-1 axes aside): no copy needed. */
static bool in_place(const struct plan *p, const struct operand *o,
                     const int *order, int order_len)
{
  int a = 0;
  for (int i = 0; i < order_len; i++) {
    int l = order[i];
    if (p->size[l] == 1)
      continue;
    while (a < o->rank && o->dims[a] == 1)
      a++;
    if (a == o->rank || o->labels[a] != l || o->dims[a] != p->size[l])
      return false;
    a++;
  }
  while (a < o->rank && o->dims[a] == 1)
    a++;
  return a == o->rank;
}

static int64_t product(const struct plan *p, const int *labels, int n)
{
  int64_t v = 1;
  for (int i = 0; i < n; i++)
    v *= p->size[labels[i]];
  return v;
}

/* ---- Compute -------------------------------------------------------------- */

/* One operand of the product: its free labels (in the output's order) and
 * the labels it alone sums. */
struct side {
  int free[MAX_SUBSCRIPT], nfree;
  int reduce[MAX_SUBSCRIPT], nreduce;
};

/* How an operand enters the GEMM. */
enum operand_use { USE_COPY, USE_PLAIN, USE_TRANS, USE_SHARED, USE_SHARED_TRANS };

/* dst = a, b, c (label lists); returns the count. */
static int concat(int *dst, const int *a, int na, const int *b, int nb,
                  const int *c, int nc)
{
  memcpy(dst, a, sizeof(int) * (size_t)na);
  memcpy(dst + na, b, sizeof(int) * (size_t)nb);
  memcpy(dst + na + nb, c, sizeof(int) * (size_t)nc);
  return na + nb + nc;
}

static void add_unique(int *list, int *n, int label)
{
  for (int i = 0; i < *n; i++)
    if (list[i] == label)
      return;
  list[(*n)++] = label;
}

/* Whether operand o can enter as it is: laid out [batch, first, second]
 * (plain) or [batch, second, first] (transposed), or so without the batch
 * labels (one matrix shared by every batch). An operand with labels of its
 * own to sum is always gathered. */
static enum operand_use operand_use(const struct plan *p,
                                    const struct operand *o, bool sums,
                                    const int *batch, int nbatch,
                                    const int *first, int nfirst,
                                    const int *second, int nsecond)
{
  int plain[3 * MAX_SUBSCRIPT], trans[3 * MAX_SUBSCRIPT];
  int n = concat(plain, batch, nbatch, first, nfirst, second, nsecond);
  concat(trans, batch, nbatch, second, nsecond, first, nfirst);
  if (sums)
    return USE_COPY;
  if (in_place(p, o, plain, n))
    return USE_PLAIN;
  if (in_place(p, o, trans, n))
    return USE_TRANS;
  if (in_place(p, o, plain + nbatch, n - nbatch))
    return USE_SHARED;
  if (in_place(p, o, trans + nbatch, n - nbatch))
    return USE_SHARED_TRANS;
  return USE_COPY;
}

static void compute_two(struct ocl_op *op, struct einsum_kernel *k,
                        struct plan *p, struct operand *ops, TF_Tensor *out,
                        int64_t out_elements)
{
  int batch[MAX_SUBSCRIPT], nbatch = 0;
  int contract_in[2][MAX_SUBSCRIPT], ncontract = 0;
  struct side s[2];
  memset(s, 0, sizeof(s));
  for (int i = 0; i < p->out_rank; i++) {
    int l = p->out_labels[i];
    if (p->kind[l] == L_BATCH)
      batch[nbatch++] = l;
    else if (p->kind[l] == L_FREE0)
      s[0].free[s[0].nfree++] = l;
    else
      s[1].free[s[1].nfree++] = l;
  }
  /* Contract labels in each operand's own order; reduce labels once. */
  for (int i = 0; i < 2; i++) {
    ncontract = 0;
    for (int a = 0; a < ops[i].rank; a++) {
      int l = ops[i].labels[a];
      if (p->kind[l] == L_CONTRACT)
        add_unique(contract_in[i], &ncontract, l);
      else if (p->kind[l] == L_REDUCE)
        add_unique(s[i].reduce, &s[i].nreduce, l);
    }
  }

  /* The GEMM's left operand: 0 unless the output reads [batch, free of 1,
   * free of 0], the product with the operands swapped. Where neither
   * product is the output, the one whose innermost label is the output's:
   * the gather after it then copies rows, not a transpose. */
  int c_order[3 * MAX_SUBSCRIPT];
  size_t out_bytes = sizeof(int) * (size_t)p->out_rank;
  concat(c_order, batch, nbatch, s[0].free, s[0].nfree, s[1].free,
         s[1].nfree);
  bool direct0 = memcmp(c_order, p->out_labels, out_bytes) == 0;
  concat(c_order, batch, nbatch, s[1].free, s[1].nfree, s[0].free, s[0].nfree);
  bool direct1 = memcmp(c_order, p->out_labels, out_bytes) == 0;
  int left = 0;
  if (!direct0)
    left = direct1 || (p->out_rank > 0 &&
                       p->kind[p->out_labels[p->out_rank - 1]] == L_FREE0);
  const int right = 1 - left;

  /* The contraction order: the one that leaves more operands in place.
   * Left enters as [batch, free, contract], right as [batch, contract,
   * free]. */
  enum operand_use use[2] = {USE_COPY, USE_COPY};
  const int *contract = contract_in[left];
  int best = -1;
  for (int c = 0; c < 2; c++) {
    enum operand_use u[2];
    int placed = 0;
    for (int i = 0; i < 2; i++) {
      const int *fr = s[i].free, *ct = contract_in[c];
      int nfr = s[i].nfree;
      u[i] = i == left ? operand_use(p, &ops[i], s[i].nreduce > 0, batch,
                                     nbatch, fr, nfr, ct, ncontract)
                       : operand_use(p, &ops[i], s[i].nreduce > 0, batch,
                                     nbatch, ct, ncontract, fr, nfr);
      placed += u[i] != USE_COPY;
    }
    if (placed > best) {
      best = placed;
      contract = contract_in[c];
      use[0] = u[0];
      use[1] = u[1];
    }
  }

  struct ocl_gemm_desc desc = {
      .m = product(p, s[left].free, s[left].nfree),
      .n = product(p, s[right].free, s[right].nfree),
      .k = product(p, contract, ncontract),
      .batches = product(p, batch, nbatch),
      .trans_a = use[left] == USE_TRANS || use[left] == USE_SHARED_TRANS,
      .trans_b = use[right] == USE_TRANS || use[right] == USE_SHARED_TRANS,
      .a_shared = use[left] == USE_SHARED || use[left] == USE_SHARED_TRANS,
      .b_shared = use[right] == USE_SHARED || use[right] == USE_SHARED_TRANS,
  };
  const TF_Tensor *operand[2] = {ops[0].t, ops[1].t};
  for (int i = 0; i < 2; i++) {
    if (use[i] != USE_COPY)
      continue;
    int order[3 * MAX_SUBSCRIPT];
    int n = i == left ? concat(order, batch, nbatch, s[i].free, s[i].nfree,
                               contract, ncontract)
                      : concat(order, batch, nbatch, contract, ncontract,
                               s[i].free, s[i].nfree);
    int64_t elements = product(p, order, n);
    TF_Tensor *t = ocl_op_temp(op, k->dtype, elements);
    if (t == NULL || !gather(op, k, p, &ops[i], ops[i].t, order, n,
                             s[i].reduce, s[i].nreduce, t, elements))
      return;
    operand[i] = t;
  }
  if (desc.batches == 0 || desc.m == 0 || desc.n == 0)
    return;

  /* The product's labels: [batch, free of left, free of right]. */
  int nc = concat(c_order, batch, nbatch, s[left].free, s[left].nfree,
                  s[right].free, s[right].nfree);
  bool direct = memcmp(c_order, p->out_labels, out_bytes) == 0;
  TF_Tensor *c = out;
  if (!direct) {
    c = ocl_op_temp(op, k->dtype, out_elements);
    if (c == NULL)
      return;
  }
  if (!ocl_op_gemm(op, k->dtype, &desc, operand[left], operand[right], c) ||
      direct)
    return;
  /* The output from the product: c viewed as an operand. */
  struct operand view = {.t = c, .rank = nc};
  for (int i = 0; i < nc; i++) {
    view.labels[i] = c_order[i];
    view.dims[i] = p->size[c_order[i]];
  }
  gather(op, k, p, &view, c, p->out_labels, p->out_rank, NULL, 0, out,
         out_elements);
}

static void einsum_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct einsum_kernel *k = kernel;
  struct ocl_op op;
  struct operand ops[2];
  struct plan plan;
  ocl_op_begin(&op, ctx);
  for (int i = 0; i < k->num_inputs; i++) {
    ops[i].t = ocl_op_input(&op, i);
    if (ops[i].t == NULL)
      goto done;
  }
  if (!make_plan(&op, k, ops, &plan))
    goto done;
  int64_t out_elements = 1;
  for (int i = 0; i < plan.out_rank; i++)
    out_elements *= plan.out_dims[i];
  for (int i = 0; i < k->num_inputs; i++)
    if (ocl_tf.TensorElementCount(ops[i].t) >= INT32_MAX) {
      ocl_op_fail(&op, TF_UNIMPLEMENTED,
                  "Einsum on OPENCL takes tensors of fewer than 2^31 "
                  "elements");
      goto done;
    }
  if (out_elements >= INT32_MAX) {
    ocl_op_fail(&op, TF_UNIMPLEMENTED,
                "Einsum on OPENCL takes tensors of fewer than 2^31 elements");
    goto done;
  }
  if (k->num_inputs == 1) {
    int sums[MAX_SUBSCRIPT], nsums = 0;
    for (int a = 0; a < ops[0].rank; a++)
      if (plan.kind[ops[0].labels[a]] == L_REDUCE)
        add_unique(sums, &nsums, ops[0].labels[a]);
    if (nsums == 0 && ops[0].rank == plan.out_rank &&
        in_place(&plan, &ops[0], plan.out_labels, plan.out_rank)) {
      bool same = true;
      for (int i = 0; i < plan.out_rank; i++)
        same = same && ops[0].dims[i] == plan.out_dims[i];
      if (same) {
        ocl_op_forward(&op, 0, ops[0].t);
        goto done;
      }
    }
    TF_Tensor *out = ocl_op_output(&op, 0, k->dtype, plan.out_dims,
                                   plan.out_rank);
    if (out != NULL)
      gather(&op, k, &plan, &ops[0], ops[0].t, plan.out_labels,
             plan.out_rank, sums, nsums, out, out_elements);
    goto done;
  }
  TF_Tensor *out =
      ocl_op_output(&op, 0, k->dtype, plan.out_dims, plan.out_rank);
  if (out == NULL || out_elements == 0)
    goto done;
  compute_two(&op, k, &plan, ops, out, out_elements);
done:
  ocl_op_end(&op);
}

static void einsum_delete(void *kernel) { free(kernel); }

void ocl_register_einsum_kernels(void)
{
  static const TF_DataType types[] = {TF_FLOAT, TF_HALF};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    ocl_register_kernel(&(const struct ocl_kernel_spec){
        .op = "Einsum",
        .create = einsum_create,
        .compute = einsum_compute,
        .destroy = einsum_delete,
        .type_attrs = {"T"},
        .types = {types[i]},
    });
}
