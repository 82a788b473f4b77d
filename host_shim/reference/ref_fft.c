/* Float64 references of the fft family (kernels/fft.c): plain O(n^2) DFTs
 * along each transformed axis, with TensorFlow's semantics (fft_ops.cc):
 * RFFT crops its input to fft_length and keeps the first n/2+1 bins of
 * the inner axis; IRFFT crops to fft_length (n/2+1 on the inner axis),
 * inverts the outer axes, then the inner one from the Hermitian extension
 * of its half spectrum (imaginary parts of bin 0 and of the Nyquist bin
 * ignored); inverse transforms scale by 1/n. An empty input with a
 * non-empty output gives zeros (TensorFlow's CPU leaves that output
 * unwritten). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

enum kind { C2C_FORWARD, C2C_INVERSE, R2C, C2R };

static void op_kind(const char *op, int *rank, enum kind *kind)
{
  size_t len = strlen(op);
  *rank = op[len - 1] == 'D' ? op[len - 2] - '0' : 1;
  bool inverse = op[0] == 'I';
  bool real = op[inverse ? 1 : 0] == 'R';
  *kind = real ? (inverse ? C2R : R2C) : (inverse ? C2C_INVERSE : C2C_FORWARD);
}

/* In place over interleaved complex v of dims [outer, n, inner]:
 * v[k] = sum_j v[j] exp(sign * 2 pi i j k / n). */
static void dft_axis(double *v, int64_t outer, int64_t n, int64_t inner,
                     int sign)
{
  double *row = malloc((size_t)(2 * n) * sizeof(double));
  if (row == NULL)
    abort();
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double *base = v + 2 * (o * n * inner + i);
      for (int64_t j = 0; j < n; j++) {
        row[2 * j] = base[2 * j * inner];
        row[2 * j + 1] = base[2 * j * inner + 1];
      }
      for (int64_t k = 0; k < n; k++) {
        double re = 0, im = 0;
        for (int64_t j = 0; j < n; j++) {
          double angle = sign * 2.0 * M_PI * (double)((j * k) % n) / (double)n;
          double c = cos(angle), s = sin(angle);
          re += row[2 * j] * c - row[2 * j + 1] * s;
          im += row[2 * j] * s + row[2 * j + 1] * c;
        }
        base[2 * k * inner] = re;
        base[2 * k * inner + 1] = im;
      }
    }
  free(row);
}

static void axis_split(const int64_t *dims, int rank, int axis,
                       int64_t *outer, int64_t *inner)
{
  *outer = 1;
  *inner = 1;
  for (int d = 0; d < axis; d++)
    *outer *= dims[d];
  for (int d = axis + 1; d < rank; d++)
    *inner *= dims[d];
}

/* A complex array of dims `dims` holding x's leading elements on every
 * axis (x cropped; zeros where x is empty). */
static double *cropped(const struct ref_tensor *x, const int64_t *dims,
                       int rank)
{
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= dims[d];
  double *v = calloc((size_t)(2 * (n > 0 ? n : 1)), sizeof(double));
  if (v == NULL)
    abort();
  if (x->elements == 0)
    return v;
  int lanes = ref_lanes(x->dtype);
  for (int64_t e = 0; e < n; e++) {
    int64_t rest = e, at = 0, stride = 1;
    for (int d = rank - 1; d >= 0; d--) {
      at += (rest % dims[d]) * stride;
      rest /= dims[d];
      stride *= x->dims[d];
    }
    v[2 * e] = x->v[lanes * at];
    v[2 * e + 1] = lanes == 2 ? x->v[lanes * at + 1] : 0.0;
  }
  return v;
}

static int fft_compute(const struct ref_case *c, struct ref_tensor *out,
                       char *error, int error_len)
{
  int fft_rank;
  enum kind kind;
  op_kind(c->op, &fft_rank, &kind);
  const struct ref_tensor *x = &c->inputs[0];
  int rank = x->rank;
  if (rank < fft_rank) {
    snprintf(error, (size_t)error_len, "Input must have rank of at least %d",
             fft_rank);
    return -1;
  }
  int first = rank - fft_rank;
  int64_t n[3], work_dims[REF_MAX_DIMS], out_dims[REF_MAX_DIMS];
  memcpy(work_dims, x->dims, sizeof(work_dims));
  memcpy(out_dims, x->dims, sizeof(out_dims));
  bool real = kind == R2C || kind == C2R;
  if (real) {
    const struct ref_tensor *len = &c->inputs[1];
    if (len->rank != 1 || len->dims[0] != fft_rank) {
      snprintf(error, (size_t)error_len, "fft_length must have shape [%d]",
               fft_rank);
      return -1;
    }
    for (int i = 0; i < fft_rank; i++) {
      n[i] = (int64_t)len->v[i];
      if (n[i] < 0) {
        snprintf(error, (size_t)error_len, "fft_length[%d] must >= 0", i);
        return -1;
      }
      bool inner_most = i == fft_rank - 1;
      int64_t need = kind == C2R && inner_most ? n[i] / 2 + 1 : n[i];
      int64_t have = x->dims[first + i];
      if (have != 0 && have < need) {
        snprintf(error, (size_t)error_len,
                 "Input dimension %d must have length of at least %lld",
                 first + i, (long long)need);
        return -1;
      }
      work_dims[first + i] = need;
      out_dims[first + i] = kind == R2C && inner_most && n[i] != 0
                                ? n[i] / 2 + 1
                                : n[i];
    }
    if (kind == R2C)
      work_dims[rank - 1] = n[fft_rank - 1];
  } else {
    for (int i = 0; i < fft_rank; i++)
      n[i] = x->dims[first + i];
  }
  TF_DataType out_type = x->dtype;
  if (kind == R2C)
    out_type = x->dtype == TF_DOUBLE ? TF_COMPLEX128 : TF_COMPLEX64;
  if (kind == C2R)
    out_type = x->dtype == TF_COMPLEX128 ? TF_DOUBLE : TF_FLOAT;
  ref_tensor_alloc(&out[0], out_type, out_dims, rank);
  if (out[0].elements == 0)
    return 1;

  double *v = cropped(x, work_dims, rank);
  int sign = kind == C2C_FORWARD || kind == R2C ? -1 : 1;
  int complex_axes_end = kind == C2R ? rank - 1 : rank;
  for (int axis = first; axis < complex_axes_end; axis++) {
    int64_t outer, inner;
    axis_split(work_dims, rank, axis, &outer, &inner);
    dft_axis(v, outer, work_dims[axis], inner, sign);
  }
  double scale = 1.0;
  if (kind == C2C_INVERSE || kind == C2R)
    for (int i = 0; i < fft_rank; i++)
      scale /= (double)n[i];
  int64_t rows = 1;
  for (int d = 0; d < rank - 1; d++)
    rows *= work_dims[d];
  if (kind == C2R) {
    /* The inner axis from its half spectrum, extended. */
    int64_t len = n[fft_rank - 1], half = work_dims[rank - 1];
    double *full = malloc((size_t)(2 * len) * sizeof(double));
    if (full == NULL)
      abort();
    for (int64_t r = 0; r < rows; r++) {
      const double *h = v + 2 * r * half;
      for (int64_t k = 0; k < len; k++) {
        bool mirrored = k > len / 2;
        int64_t from = mirrored ? len - k : k;
        full[2 * k] = h[2 * from];
        full[2 * k + 1] = mirrored ? -h[2 * from + 1] : h[2 * from + 1];
        if (k == 0 || 2 * k == len)
          full[2 * k + 1] = 0.0;
      }
      dft_axis(full, 1, len, 1, 1);
      for (int64_t j = 0; j < len; j++)
        out[0].v[r * len + j] = full[2 * j] * scale;
    }
    free(full);
  } else {
    int64_t width = out_dims[rank - 1], wide = work_dims[rank - 1];
    for (int64_t r = 0; r < rows; r++)
      for (int64_t k = 0; k < width; k++) {
        out[0].v[2 * (r * width + k)] = v[2 * (r * wide + k)] * scale;
        out[0].v[2 * (r * width + k) + 1] = v[2 * (r * wide + k) + 1] * scale;
      }
  }
  free(v);
  return 1;
}

/* ---- Cases --------------------------------------------------------------- */

/* Each table ends at its first all-zero entry. */
#define MAX_SHAPES 14

struct shape {
  int rank;
  int64_t dims[5];
  int64_t fft_length[3]; /* real ops: one per transformed axis */
  bool large;            /* left out on Oclgrind */
  TF_Code expect;
  int entries; /* of fft_length where not the op's rank (a bad shape) */
};

/* Complex transforms: rank 1, 2, 3 by the op; every length class (1,
 * powers of two in local memory, 4096 in global steps, other lengths by
 * the direct DFT), batches, strided axes, empties. */
static const struct shape c2c_shapes[3][MAX_SHAPES] = {
    {{.rank = 1, .dims = {1}},
     {.rank = 1, .dims = {2}},
     {.rank = 1, .dims = {3}},
     {.rank = 2, .dims = {4, 5}},
     {.rank = 2, .dims = {3, 8}},
     {.rank = 2, .dims = {2, 12}},
     {.rank = 3, .dims = {2, 3, 64}},
     {.rank = 2, .dims = {2, 100}, .large = true},
     {.rank = 1, .dims = {4096}},
     {.rank = 2, .dims = {3, 0}},
     {.rank = 2, .dims = {0, 4}},
     {.rank = 0, .dims = {0}, .expect = TF_INVALID_ARGUMENT}},
    {{.rank = 2, .dims = {4, 8}},
     {.rank = 3, .dims = {3, 5, 6}},
     {.rank = 2, .dims = {7, 3}},
     {.rank = 2, .dims = {4, 1}},
     {.rank = 3, .dims = {2, 16, 32}},
     {.rank = 2, .dims = {0, 3}},
     {.rank = 1, .dims = {4}, .expect = TF_INVALID_ARGUMENT}},
    {{.rank = 3, .dims = {2, 4, 8}},
     {.rank = 4, .dims = {2, 3, 5, 2}},
     {.rank = 3, .dims = {2, 2, 2}},
     {.rank = 4, .dims = {1, 4, 3, 16}},
     {.rank = 3, .dims = {0, 2, 2}},
     {.rank = 2, .dims = {3, 3}, .expect = TF_INVALID_ARGUMENT}},
};

/* RFFT's input dims and fft_length: exact, cropped, odd, 1, empty input
 * (zeros out), fft_length 0 (empty out), and TensorFlow's errors. */
static const struct shape r2c_shapes[3][MAX_SHAPES] = {
    {{.rank = 1, .dims = {8}, .fft_length = {8}},
     {.rank = 2, .dims = {3, 12}, .fft_length = {12}},
     {.rank = 2, .dims = {2, 10}, .fft_length = {8}},
     {.rank = 1, .dims = {5}, .fft_length = {5}},
     {.rank = 2, .dims = {4, 64}, .fft_length = {64}},
     {.rank = 2, .dims = {3, 100}, .fft_length = {99}, .large = true},
     {.rank = 2, .dims = {2, 4096}, .fft_length = {4096}, .large = true},
     {.rank = 1, .dims = {1}, .fft_length = {1}},
     {.rank = 1, .dims = {0}, .fft_length = {4}},
     {.rank = 2, .dims = {3, 5}, .fft_length = {0}},
     {.rank = 2, .dims = {2, 3}, .fft_length = {4}, .expect = TF_INVALID_ARGUMENT},
     {.rank = 1, .dims = {4}, .fft_length = {-1}, .expect = TF_INVALID_ARGUMENT},
     {.rank = 1, .dims = {5}, .fft_length = {1, 5}, .expect = TF_INVALID_ARGUMENT, .entries = 2},
     {.rank = 0, .dims = {0}, .fft_length = {1}, .expect = TF_INVALID_ARGUMENT}},
    {{.rank = 3, .dims = {3, 4, 8}, .fft_length = {4, 8}},
     {.rank = 3, .dims = {2, 5, 6}, .fft_length = {5, 6}},
     {.rank = 2, .dims = {6, 10}, .fft_length = {4, 8}},
     {.rank = 2, .dims = {3, 5}, .fft_length = {3, 5}},
     {.rank = 2, .dims = {0, 5}, .fft_length = {2, 4}},
     {.rank = 2, .dims = {3, 5}, .fft_length = {3, 0}},
     {.rank = 2, .dims = {2, 5}, .fft_length = {3, 4}, .expect = TF_INVALID_ARGUMENT},
     {.rank = 2, .dims = {3, 5}, .fft_length = {3}, .expect = TF_INVALID_ARGUMENT, .entries = 1},
     {.rank = 1, .dims = {5}, .fft_length = {1, 5}, .expect = TF_INVALID_ARGUMENT}},
    {{.rank = 4, .dims = {2, 3, 4, 8}, .fft_length = {3, 4, 8}},
     {.rank = 3, .dims = {3, 5, 6}, .fft_length = {2, 4, 6}},
     {.rank = 3, .dims = {2, 3, 7}, .fft_length = {2, 3, 7}},
     {.rank = 3, .dims = {2, 2, 0}, .fft_length = {2, 2, 4}},
     {.rank = 3, .dims = {2, 3, 4}, .fft_length = {2, 3, 5}, .expect = TF_INVALID_ARGUMENT}},
};

/* IRFFT's input dims (the half spectrum) and fft_length. */
static const struct shape c2r_shapes[3][MAX_SHAPES] = {
    {{.rank = 1, .dims = {5}, .fft_length = {8}},
     {.rank = 2, .dims = {3, 7}, .fft_length = {12}},
     {.rank = 2, .dims = {2, 3}, .fft_length = {5}},
     {.rank = 2, .dims = {2, 6}, .fft_length = {8}},
     {.rank = 1, .dims = {1}, .fft_length = {1}},
     {.rank = 1, .dims = {2}, .fft_length = {2}},
     {.rank = 2, .dims = {2, 33}, .fft_length = {64}},
     {.rank = 2, .dims = {2, 51}, .fft_length = {100}, .large = true},
     {.rank = 1, .dims = {2049}, .fft_length = {4096}, .large = true},
     {.rank = 1, .dims = {0}, .fft_length = {4}},
     {.rank = 2, .dims = {3, 5}, .fft_length = {0}},
     {.rank = 2, .dims = {2, 2}, .fft_length = {8}, .expect = TF_INVALID_ARGUMENT},
     {.rank = 1, .dims = {4}, .fft_length = {-2}, .expect = TF_INVALID_ARGUMENT}},
    {{.rank = 3, .dims = {3, 4, 5}, .fft_length = {4, 8}},
     {.rank = 2, .dims = {5, 4}, .fft_length = {5, 6}},
     {.rank = 2, .dims = {6, 7}, .fft_length = {4, 9}},
     {.rank = 2, .dims = {2, 9}, .fft_length = {2, 16}},
     {.rank = 2, .dims = {0, 3}, .fft_length = {2, 4}},
     {.rank = 2, .dims = {3, 4}, .fft_length = {4, 8}, .expect = TF_INVALID_ARGUMENT},
     {.rank = 2, .dims = {3, 5}, .fft_length = {3}, .expect = TF_INVALID_ARGUMENT, .entries = 1}},
    {{.rank = 4, .dims = {2, 3, 4, 5}, .fft_length = {3, 4, 8}},
     {.rank = 3, .dims = {3, 5, 6}, .fft_length = {2, 4, 9}},
     {.rank = 3, .dims = {2, 2, 2}, .fft_length = {2, 2, 2}},
     {.rank = 3, .dims = {2, 2, 2}, .fft_length = {2, 2, 5}, .expect = TF_INVALID_ARGUMENT}},
};

static void fft_cases(const struct ref_op *op, TF_DataType dtype,
                      struct ref_cases *out)
{
  int fft_rank;
  enum kind kind;
  op_kind(op->op, &fft_rank, &kind);
  /* On the Oclgrind simulator only the short transforms run. */
  bool sim = ref_on_oclgrind();
  /* The real ops are registered with Treal first: dtype is float or
   * double, the complex side follows it. */
  bool wide = dtype == TF_DOUBLE || dtype == TF_COMPLEX128;
  TF_DataType real_type = wide ? TF_DOUBLE : TF_FLOAT;
  TF_DataType complex_type = wide ? TF_COMPLEX128 : TF_COMPLEX64;
  const struct shape *shapes = kind == R2C   ? r2c_shapes[fft_rank - 1]
                               : kind == C2R ? c2r_shapes[fft_rank - 1]
                                             : c2c_shapes[fft_rank - 1];
  for (int s = 0; s < MAX_SHAPES; s++) {
    const struct shape *sh = &shapes[s];
    if (sh->rank == 0 && sh->expect == TF_OK)
      break; /* the table's end */
    if (sim && sh->large)
      continue;
    struct ref_case *c = ref_case_add(out, op->op, "%s #%d", op->op, s);
    c->expect_code = sh->expect;
    if (kind == R2C || kind == C2R) {
      ref_case_input(c, kind == R2C ? real_type : complex_type, sh->dims,
                     sh->rank, REF_ANY);
      int entries = sh->entries != 0 ? sh->entries : fft_rank;
      double lengths[3];
      for (int i = 0; i < entries; i++)
        lengths[i] = (double)sh->fft_length[i];
      int64_t length_dims[1] = {entries};
      ref_case_input_values(c, TF_INT32, length_dims, 1, lengths);
      if (kind == R2C)
        ref_case_attr_type(c, "Tcomplex", complex_type);
      else
        ref_case_attr_type(c, "Treal", real_type);
    } else {
      ref_case_input(c, complex_type, sh->dims, sh->rank, REF_ANY);
    }
  }
}

#define FFT_REF(name) {name, 1e-4, 1e-3, REF_ANY, fft_cases, fft_compute}

const struct ref_op ref_ops_fft[] = {
    FFT_REF("FFT"),     FFT_REF("IFFT"),    FFT_REF("FFT2D"),
    FFT_REF("IFFT2D"),  FFT_REF("FFT3D"),   FFT_REF("IFFT3D"),
    FFT_REF("RFFT"),    FFT_REF("IRFFT"),   FFT_REF("RFFT2D"),
    FFT_REF("IRFFT2D"), FFT_REF("RFFT3D"),  FFT_REF("IRFFT3D"),
    {.op = NULL},
};
