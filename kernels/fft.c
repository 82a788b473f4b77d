/* The FFT ops: FFT, IFFT, FFT2D, IFFT2D, FFT3D, IFFT3D (Tcomplex
 * complex64 and complex128) and RFFT, IRFFT, RFFT2D, IRFFT2D, RFFT3D,
 * IRFFT3D (Treal float with complex64, double with complex128, fft_length
 * in host memory), as TensorFlow's GPU registers them, with its checks and
 * messages (fft_ops.cc).
 *
 * The innermost 1, 2 or 3 dims are transformed one axis per pass (fft.cl),
 * each pass reading its axis with a stride, so no transposes. A
 * power-of-two length takes radix-2 Stockham steps: a work-group per
 * transform in local memory where 2n elements fit (on GPUs only along the
 * inner axis, LOCAL_MAX_N), else one launch per step in global memory. Any
 * other length takes a direct DFT per output element, O(n^2), the angle
 * 2*pi*(j*k mod n)/n reduced exactly in integers: exact to float accuracy
 * for the short non-power-of-two lengths models use, slow for long ones.
 * Every pass reads its twiddles from a table made on the device (one cospi
 * and sinpi per entry, not per butterfly or term).
 *
 * RFFT crops its input to fft_length on each axis and transforms the
 * inner axis first, keeping its first n/2+1 bins; IRFFT crops to
 * fft_length (the inner axis to n/2+1), does the outer axes' inverse
 * transforms first, and the inner one last from the Hermitian extension
 * of its half spectrum (the imaginary parts of bin 0 and of the Nyquist
 * bin ignored, as in TensorFlow). Inverse passes scale by 1/n each.
 *
 * Where TensorFlow's CPU kernel leaves an output unwritten (an empty input
 * with a non-empty output: RFFT of [0] at fft_length 4) the output is
 * zeros; where it aborts inside DUCC (fft_length 0 over a non-empty
 * input) the output is empty, as its shape says. complex128 needs
 * cl_khr_fp64 (RFFT's double kernels are not registered without it,
 * runtime.c; complex-only ops fail with UNIMPLEMENTED there). Index
 * arithmetic is 32-bit: larger tensors are refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_fft[];

enum precision { P_FLOAT, P_DOUBLE, NUM_PRECISIONS };

OCL_PROGRAM_TABLE
static const struct ocl_program programs[NUM_PRECISIONS] = {
    [P_FLOAT] = {"fft_float", ocl_cl_source_fft, NULL},
    [P_DOUBLE] = {"fft_double", ocl_cl_source_fft, "-DT_IS_DOUBLE"},
};

enum fft_kind { C2C_FORWARD, C2C_INVERSE, R2C, C2R };

struct fft_op {
  const char *op;
  int rank;
  enum fft_kind kind;
};

static const struct fft_op fft_ops[] = {
    {"FFT", 1, C2C_FORWARD},     {"IFFT", 1, C2C_INVERSE},
    {"FFT2D", 2, C2C_FORWARD},   {"IFFT2D", 2, C2C_INVERSE},
    {"FFT3D", 3, C2C_FORWARD},   {"IFFT3D", 3, C2C_INVERSE},
    {"RFFT", 1, R2C},            {"IRFFT", 1, C2R},
    {"RFFT2D", 2, R2C},          {"IRFFT2D", 2, C2R},
    {"RFFT3D", 3, R2C},          {"IRFFT3D", 3, C2R},
};
#define NUM_FFT_OPS ((int)(sizeof(fft_ops) / sizeof(fft_ops[0])))

/* fft.cl's modes. */
enum { LOAD_COMPLEX, LOAD_REAL, LOAD_HERMITIAN };
enum { STORE_COMPLEX, STORE_REAL };

enum { K_TWIDDLES, K_DFT, K_RADIX2, K_LOCAL, NUM_KERNELS };
static const char *const kernel_names[NUM_KERNELS] = {
    "fft_twiddles", "fft_dft", "fft_radix2", "fft_local"};

/* A transform stays in local memory up to this length (two buffers of it:
 * 32 KiB in complex64) where the device's local memory holds them. On CPU
 * devices for every axis: the work-group's buffers stay in cache while
 * global steps stream the tensor log2(n) times (PoCL, RFFT2D of
 * [16,256,256]: 29 ms against 82 ms). On GPUs for the inner axis only: a
 * work-group on a strided axis would read one element per `inner` stride,
 * while the global steps' neighbouring work-items take neighbouring
 * columns. */
#define LOCAL_MAX_N 2048
#define LOCAL_WANTED 256

struct fft_kernel {
  const struct fft_op *op;
  bool wide; /* complex128 */
  TF_DataType in_type, out_type;
  struct ocl_kernel k[NUM_KERNELS];
};

/* ---- The plan: launches over one chain of buffers ------------------------- */

/* At most 3 passes; a power-of-two pass of global steps takes at most 31. */
#define MAX_LAUNCHES 96

struct launch {
  int kernel; /* K_DFT, K_RADIX2 or K_LOCAL */
  bool first_of_pass; /* makes the pass's twiddle table */
  uint32_t n, span, src_len, dst_len, outer, inner, scale_n;
  int load_mode, store_mode, sign;
};

struct plan {
  int count;
  struct launch l[MAX_LAUNCHES];
  int64_t temp_elements; /* of each of the two temps */
  bool too_large;
};

static bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

static int log2_of(int64_t n)
{
  int l = 0;
  while (((int64_t)1 << l) < n)
    l++;
  return l;
}

/* Appends one pass over `axis` of the working dims `cur` (rank `rank`):
 * length n read from cur[axis] elements, dst_len written. */
static void plan_pass(struct plan *p, const struct ocl_device_info *info,
                      bool wide, int64_t *cur, int rank, int axis, int64_t n,
                      int64_t dst_len, int load_mode, int store_mode,
                      bool inverse)
{
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++)
    outer *= cur[d];
  for (int d = axis + 1; d < rank; d++)
    inner *= cur[d];
  /* Rows first: each factor below 2^31, no product can wrap. */
  int64_t rows = outer * inner;
  if (rows > INT32_MAX || rows * n > INT32_MAX || rows * cur[axis] > INT32_MAX)
    p->too_large = true;
  struct launch base = {
      .n = (uint32_t)n,
      .src_len = (uint32_t)cur[axis],
      .dst_len = (uint32_t)dst_len,
      .outer = (uint32_t)outer,
      .inner = (uint32_t)inner,
      .scale_n = inverse ? (uint32_t)n : 0,
      .load_mode = load_mode,
      .store_mode = store_mode,
      .sign = inverse ? 1 : -1,
      .first_of_pass = true,
  };
  size_t cplx = wide ? 16 : 8;
  bool local_fits = n <= LOCAL_MAX_N &&
                    (cl_ulong)(2 * n) * cplx <= info->local_mem_size &&
                    (info->cpu_shape || inner == 1);
  if (!is_pow2(n) || n == 1) {
    base.kernel = K_DFT;
    p->l[p->count++] = base;
  } else if (local_fits) {
    base.kernel = K_LOCAL;
    p->l[p->count++] = base;
  } else {
    /* log2(n) steps: the first loads with the pass's mode, the last
     * stores with it and scales; the ones between see [outer, n, inner]. */
    int steps = log2_of(n);
    for (int s = 0; s < steps; s++) {
      struct launch step = base;
      step.kernel = K_RADIX2;
      step.span = (uint32_t)1 << s;
      if (s > 0) {
        step.first_of_pass = false;
        step.src_len = (uint32_t)n;
        step.load_mode = LOAD_COMPLEX;
      }
      if (s < steps - 1) {
        step.dst_len = (uint32_t)n;
        step.store_mode = STORE_COMPLEX;
        step.scale_n = 0;
      }
      p->l[p->count++] = step;
    }
  }
  cur[axis] = dst_len;
}

/* The passes of op over the input dims `dims`, fft_len[] the lengths of
 * the innermost fft rank axes. */
static void plan_fft(struct plan *p, const struct fft_kernel *k,
                     const struct ocl_device_info *info, const int64_t *dims,
                     int rank, const int64_t *fft_len)
{
  int64_t cur[OCL_MAX_RANK];
  memcpy(cur, dims, (size_t)rank * sizeof(cur[0]));
  int fft_rank = k->op->rank, first = rank - fft_rank;
  enum fft_kind kind = k->op->kind;
  bool inverse = kind == C2C_INVERSE || kind == C2R;
  p->count = 0;
  p->too_large = false;
  if (kind == R2C) {
    int64_t n = fft_len[fft_rank - 1];
    plan_pass(p, info, k->wide, cur, rank, rank - 1, n, n / 2 + 1, LOAD_REAL,
              STORE_COMPLEX, false);
  }
  /* The complex axes: inner to outer (IRFFT: all but the inner one). */
  int last = kind == C2C_FORWARD || kind == C2C_INVERSE ? rank - 1 : rank - 2;
  for (int axis = last; axis >= first; axis--)
    plan_pass(p, info, k->wide, cur, rank, axis, fft_len[axis - first],
              fft_len[axis - first], LOAD_COMPLEX, STORE_COMPLEX, inverse);
  if (kind == C2R) {
    int64_t n = fft_len[fft_rank - 1];
    plan_pass(p, info, k->wide, cur, rank, rank - 1, n, n, LOAD_HERMITIAN,
              STORE_REAL, true);
  }
  /* Every launch but the last writes a temp; two of them alternate. */
  p->temp_elements = 0;
  for (int i = 0; i + 1 < p->count; i++) {
    const struct launch *l = &p->l[i];
    int64_t e = (int64_t)l->outer * l->dst_len * l->inner;
    if (e > p->temp_elements)
      p->temp_elements = e;
  }
}

/* Launch l from src to dst, with the twiddle table w of its pass. */
static bool run_launch(struct ocl_op *op, struct fft_kernel *k,
                       const struct launch *l, const TF_Tensor *src,
                       TF_Tensor *dst, const TF_Tensor *w)
{
  if (l->kernel == K_DFT) {
    uint32_t total = l->outer * l->dst_len * l->inner;
    const struct ocl_arg args[] = {
        OCL_TENSOR(src),        OCL_INT(l->src_len),   OCL_INT(l->load_mode),
        OCL_TENSOR(dst),        OCL_INT(l->dst_len),   OCL_INT(l->store_mode),
        OCL_TENSOR(w),          OCL_INT(l->n),         OCL_INT(l->inner),
        OCL_INT(total),         OCL_INT(l->scale_n),
    };
    return ocl_launch_1d(op, &k->k[K_DFT], total, args, 11);
  }
  if (l->kernel == K_RADIX2) {
    uint32_t total = l->outer * (l->n / 2) * l->inner;
    const struct ocl_arg args[] = {
        OCL_TENSOR(src),       OCL_INT(l->src_len), OCL_INT(l->load_mode),
        OCL_TENSOR(dst),       OCL_INT(l->dst_len), OCL_INT(l->store_mode),
        OCL_TENSOR(w),         OCL_INT(l->n),       OCL_INT(l->span),
        OCL_INT(l->inner),     OCL_INT(total),      OCL_INT(l->scale_n),
    };
    return ocl_launch_1d(op, &k->k[K_RADIX2], total, args, 12);
  }
  size_t local = ocl_kernel_fit_local(op, &k->k[K_LOCAL], LOCAL_WANTED);
  if (local == 0)
    return false;
  if (local > l->n / 2)
    local = l->n / 2;
  size_t global = (size_t)l->outer * l->inner * local;
  const struct ocl_arg args[] = {
      OCL_TENSOR(src),     OCL_INT(l->src_len), OCL_INT(l->load_mode),
      OCL_TENSOR(dst),     OCL_INT(l->dst_len), OCL_INT(l->store_mode),
      OCL_TENSOR(w),       OCL_INT(l->n),       OCL_INT(l->inner),
      OCL_INT(l->scale_n),
      OCL_LOCAL((size_t)2 * l->n * (k->wide ? 16 : 8)),
  };
  return ocl_launch(op, &k->k[K_LOCAL], 1, &global, &local, args, 11);
}

/* The twiddle table of a pass: exp(sign * 2 * pi * i * m / n), m < n. */
static TF_Tensor *twiddle_table(struct ocl_op *op, struct fft_kernel *k,
                                const struct launch *l)
{
  TF_Tensor *w = ocl_op_temp(op, k->wide ? TF_COMPLEX128 : TF_COMPLEX64, l->n);
  if (w == NULL)
    return NULL;
  const struct ocl_arg args[] = {OCL_TENSOR(w), OCL_INT(l->n),
                                 OCL_INT(l->sign)};
  if (!ocl_launch_1d(op, &k->k[K_TWIDDLES], l->n, args, 3))
    return NULL;
  return w;
}

static bool run_fft(struct ocl_op *op, struct fft_kernel *k,
                    const TF_Tensor *in, TF_Tensor *out, const int64_t *dims,
                    int rank, const int64_t *fft_len)
{
  const struct ocl_device_info *info = ocl_op_info(op);
  if (info == NULL)
    return false;
  if (k->wide && !info->has_fp64)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "%s of complex128 needs cl_khr_fp64, which OpenCL "
                       "device %d lacks",
                       k->op->op, info->ordinal);
  struct plan plan; /* a few KiB: on the stack, no allocation */
  const struct plan *p = &plan;
  plan_fft(&plan, k, info, dims, rank, fft_len);
  if (p->too_large)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "%s: transforms over more than 2^31 elements are not "
                       "implemented on OPENCL",
                       k->op->op);
  TF_DataType cplx = k->wide ? TF_COMPLEX128 : TF_COMPLEX64;
  TF_Tensor *temps[2] = {NULL, NULL};
  for (int t = 0; t < 2 && t + 1 < p->count; t++) {
    temps[t] = ocl_op_temp(op, cplx, p->temp_elements);
    if (temps[t] == NULL)
      return false;
  }
  const TF_Tensor *src = in;
  TF_Tensor *w = NULL;
  for (int i = 0; i < p->count; i++) {
    if (p->l[i].first_of_pass) {
      /* The stream runs the launches before any later use of the old
       * table's memory. */
      if (w != NULL)
        ocl_op_release(op, w);
      w = twiddle_table(op, k, &p->l[i]);
      if (w == NULL)
        return false;
    }
    TF_Tensor *dst = i + 1 == p->count ? out : temps[i % 2];
    if (!run_launch(op, k, &p->l[i], src, dst, w))
      return false;
    src = dst;
  }
  return true;
}

/* ---- Kernel callbacks ---------------------------------------------------- */

static void *fft_create(TF_OpKernelConstruction *ctx, int index)
{
  const struct fft_op *op = &fft_ops[index];
  TF_Status *status = ocl_tf.NewStatus();
  struct fft_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail;
  }
  k->op = op;
  TF_DataType complex_type = TF_COMPLEX64;
  ocl_tf.OpKernelConstruction_GetAttrType(ctx, "Tcomplex", &complex_type,
                                          status);
  if (ocl_tf.GetCode(status) != TF_OK)
    goto fail;
  k->wide = complex_type == TF_COMPLEX128;
  TF_DataType real_type = k->wide ? TF_DOUBLE : TF_FLOAT;
  k->in_type = op->kind == R2C ? real_type : complex_type;
  k->out_type = op->kind == C2R ? real_type : complex_type;
  for (int i = 0; i < NUM_KERNELS; i++)
    ocl_kernel_init(&k->k[i], &programs[k->wide ? P_DOUBLE : P_FLOAT],
                    kernel_names[i]);
  ocl_tf.DeleteStatus(status);
  return k;
fail:
  return ocl_create_failed(ctx, status, k);
}

/* TensorFlow's checks of fft_length (fft_ops.cc), setting the output's
 * dims and the transform lengths. */
static bool real_lengths(struct ocl_op *op, const struct fft_kernel *k,
                         const int64_t *dims, int rank, int64_t *out_dims,
                         int64_t *fft_len)
{
  int fft_rank = k->op->rank;
  TF_Tensor *length_t = ocl_op_input(op, 1);
  if (length_t == NULL)
    return false;
  if (ocl_tf.NumDims(length_t) != 1 || ocl_tf.Dim(length_t, 0) != fft_rank)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "fft_length must have shape [%d]", fft_rank);
  const int32_t *lengths = ocl_host_data(length_t);
  bool forward = k->op->kind == R2C;
  for (int i = 0; i < fft_rank; i++) {
    int64_t n = lengths[i];
    if (n < 0)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "fft_length[%d] must >= 0, but got: %d", i,
                         (int)lengths[i]);
    bool inner_most = i == fft_rank - 1;
    int64_t min_len = !forward && inner_most ? n / 2 + 1 : n;
    int axis = rank - fft_rank + i;
    if (dims[axis] != 0 && dims[axis] < min_len)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "Input dimension %d must have length of at least "
                         "%lld but got: %lld",
                         axis, (long long)min_len, (long long)dims[axis]);
    fft_len[i] = n;
    out_dims[axis] = forward && inner_most && n != 0 ? n / 2 + 1 : n;
  }
  return true;
}

static void fft_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct fft_kernel *k = kernel;
  struct ocl_op op;
  int64_t dims[OCL_MAX_RANK], out_dims[OCL_MAX_RANK], fft_len[3];

  ocl_op_begin(&op, ctx);
  TF_Tensor *x = ocl_op_input(&op, 0);
  if (x == NULL)
    goto out;
  int rank = ocl_tf.NumDims(x);
  int fft_rank = k->op->rank;
  if (rank > OCL_MAX_RANK) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "Shapes of rank %d exceed TensorFlow's limit of %d "
                "dimensions",
                rank, OCL_MAX_RANK);
    goto out;
  }
  for (int d = 0; d < rank; d++)
    out_dims[d] = dims[d] = ocl_tf.Dim(x, d);
  if (rank < fft_rank) {
    char shape[256];
    ocl_shape_format(dims, rank, shape, sizeof(shape));
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "Input must have rank of at least %d but got: %s", fft_rank,
                shape);
    goto out;
  }
  bool real = k->op->kind == R2C || k->op->kind == C2R;
  if (real) {
    if (!real_lengths(&op, k, dims, rank, out_dims, fft_len))
      goto out;
  } else {
    for (int i = 0; i < fft_rank; i++)
      fft_len[i] = dims[rank - fft_rank + i];
  }
  TF_Tensor *y = ocl_op_output(&op, 0, k->out_type, out_dims, rank);
  if (y == NULL || ocl_tf.TensorElementCount(y) == 0)
    goto out;
  if (ocl_tf.TensorElementCount(x) == 0) {
    /* TensorFlow leaves this output unwritten; the transform of the zero
     * padding it stands for is zeros. */
    static const uint8_t zeros[16];
    size_t size = ocl_tf.DataTypeSize(k->out_type);
    ocl_op_fill(&op, y, 0, zeros, size,
                (size_t)ocl_tf.TensorElementCount(y) * size);
    goto out;
  }
  run_fft(&op, k, x, y, dims, rank, fft_len);
out:
  ocl_op_end(&op);
}

static void fft_delete(void *kernel) { free(kernel); }

_Static_assert(NUM_FFT_OPS <= OCL_MAX_FAMILY_OPS, "one create function per op");
OCL_FAMILY_CREATES(fft, fft_create);

/* ---- Registration -------------------------------------------------------- */

void ocl_register_fft_kernels(void)
{
  static const char *const host_args[] = {"fft_length", NULL};
  static const TF_DataType complex_types[] = {TF_COMPLEX64, TF_COMPLEX128};
  static const TF_DataType real_types[] = {TF_FLOAT, TF_DOUBLE};
  for (int i = 0; i < NUM_FFT_OPS; i++)
    for (int t = 0; t < 2; t++) {
      bool real = fft_ops[i].kind == R2C || fft_ops[i].kind == C2R;
      /* The real ops pair float with complex64 and double with
       * complex128 only, as TensorFlow's GPU kernels do; Treal first, so
       * that double's kernels stay off devices without fp64. */
      ocl_register_kernel(&(const struct ocl_kernel_spec){
          .op = fft_ops[i].op,
          .create = fft_creates[i],
          .compute = fft_compute,
          .destroy = fft_delete,
          .type_attrs = {real ? "Treal" : "Tcomplex",
                         real ? "Tcomplex" : NULL},
          .types = {real ? real_types[t] : complex_types[t],
                    real ? complex_types[t] : 0},
          .host_args = real ? host_args : NULL,
      });
    }
}
