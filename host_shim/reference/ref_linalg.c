/* References of the linalg kernel family: Qr.
 *
 * q and r of a QR decomposition are unique only up to the signs of r's
 * rows (and q's columns), so the device's are judged by what defines them
 * (check_qr): q r reconstructs the input, q^T q is the identity, r is upper
 * triangular (exact zeros below the diagonal); and, since the kernel
 * follows LAPACK's geqrf sign convention as TensorFlow's CPU kernel does,
 * r also matches this file's float64 Householder QR of the same
 * convention.
 *
 * Tolerance: Householder QR is backward stable, |q r - a| <= c n eps |a|;
 * with values in [-3, 3] and n <= 260, float32 stays well inside
 * atol + rtol * n * max|a| = 1e-4 + 1e-5 * n * 3; q^T q within
 * atol + rtol * m; r against the float64 r within the reconstruction's
 * bound (r's entries are sums like q r's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* Householder QR of one m x n matrix a (row-major, float64), LAPACK's
 * convention: q [m, qc], r [rr, n], qc = rr = m (full) or min(m, n). */
static void householder_qr(const double *a, int64_t m, int64_t n, bool full,
                           double *q, double *r, double *w, double *tau)
{
  int64_t p = m < n ? m : n, qc = full ? m : p, rr = qc;
  memcpy(w, a, sizeof(double) * (size_t)(m * n));
  for (int64_t j = 0; j < p; j++) {
    double sigma = 0, alpha = w[j * n + j];
    for (int64_t i = j + 1; i < m; i++)
      sigma += w[i * n + j] * w[i * n + j];
    double beta = alpha, t = 0, scale = 0;
    if (sigma != 0) {
      beta = -copysign(sqrt(alpha * alpha + sigma), alpha);
      t = (beta - alpha) / beta;
      scale = 1 / (alpha - beta);
    }
    for (int64_t i = j + 1; i < m; i++)
      w[i * n + j] *= scale;
    w[j * n + j] = beta;
    tau[j] = t;
    for (int64_t c = j + 1; c < n && t != 0; c++) {
      double dot = w[j * n + c];
      for (int64_t i = j + 1; i < m; i++)
        dot += w[i * n + j] * w[i * n + c];
      w[j * n + c] -= t * dot;
      for (int64_t i = j + 1; i < m; i++)
        w[i * n + c] -= t * w[i * n + j] * dot;
    }
  }
  for (int64_t i = 0; i < rr; i++)
    for (int64_t c = 0; c < n; c++)
      r[i * n + c] = c >= i ? w[i * n + c] : 0;
  for (int64_t i = 0; i < m; i++)
    for (int64_t c = 0; c < qc; c++)
      q[i * qc + c] = i == c;
  for (int64_t j = p - 1; j >= 0; j--) {
    double t = tau[j];
    for (int64_t c = j; c < qc && t != 0; c++) {
      double dot = q[j * qc + c];
      for (int64_t i = j + 1; i < m; i++)
        dot += w[i * n + j] * q[i * qc + c];
      q[j * qc + c] -= t * dot;
      for (int64_t i = j + 1; i < m; i++)
        q[i * qc + c] -= t * w[i * n + j] * dot;
    }
  }
}

static int qr_compute(const struct ref_case *c, struct ref_tensor *out,
                      char *error, int error_len)
{
  const struct ref_tensor *a = &c->inputs[0];
  bool full = ref_case_attr_bool_or(c, "full_matrices", false);
  if (a->rank < 2) {
    snprintf(error, (size_t)error_len, "rank < 2");
    return -1;
  }
  int64_t m = a->dims[a->rank - 2], n = a->dims[a->rank - 1];
  int64_t p = m < n ? m : n, qc = full ? m : p, rr = qc;
  int64_t dims[REF_MAX_DIMS];
  memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
  dims[a->rank - 1] = qc;
  ref_tensor_alloc(&out[0], a->dtype, dims, a->rank);
  dims[a->rank - 2] = rr;
  dims[a->rank - 1] = n;
  ref_tensor_alloc(&out[1], a->dtype, dims, a->rank);
  int64_t batch = 1;
  for (int d = 0; d < a->rank - 2; d++)
    batch *= a->dims[d];
  double *w = malloc(sizeof(double) * (size_t)(m * n + p + 1));
  if (w == NULL) {
    snprintf(error, (size_t)error_len, "out of memory");
    return -1;
  }
  for (int64_t b = 0; b < batch; b++)
    householder_qr(a->v + b * m * n, m, n, full, out[0].v + b * m * qc,
                   out[1].v + b * rr * n, w, w + m * n);
  free(w);
  for (int o = 0; o < 2; o++)
    for (int64_t i = 0; i < out[o].elements; i++)
      out[o].v[i] = ref_round_to(out[o].dtype, out[o].v[i]);
  return 2;
}

/* Records a mismatch (the first one's message). */
static void mismatch(int64_t *bad, char *msg, int msg_len, const char *what,
                     int64_t b, double err, double tol)
{
  if ((*bad)++ == 0)
    snprintf(msg, (size_t)msg_len,
             "matrix %lld: %s off by %.3g (tolerance %.3g)", (long long)b,
             what, err, tol);
}

static int64_t qr_check(const struct ref_case *c, const struct ref_tensor *got,
                        const struct ref_tensor *want, int num_outputs,
                        double rtol, double atol, double *max_error,
                        char *msg, int msg_len)
{
  const struct ref_tensor *a = &c->inputs[0];
  const struct ref_tensor *q = &got[0], *r = &got[1];
  int64_t m = a->dims[a->rank - 2], n = a->dims[a->rank - 1];
  int64_t qc = q->dims[q->rank - 1], rr = r->dims[r->rank - 2];
  int64_t batch = 1, bad = 0;
  (void)num_outputs;
  for (int d = 0; d < a->rank - 2; d++)
    batch *= a->dims[d];
  *max_error = 0;
  for (int64_t b = 0; b < batch; b++) {
    const double *av = a->v + b * m * n, *qv = q->v + b * m * qc;
    const double *rv = r->v + b * rr * n, *wr = want[1].v + b * rr * n;
    double amax = 0;
    for (int64_t i = 0; i < m * n; i++)
      amax = fmax(amax, fabs(av[i]));
    double big = (double)(m > n ? m : n);
    double tol = atol + rtol * big * amax;
    /* Upper triangular, exactly. */
    for (int64_t i = 0; i < rr; i++)
      for (int64_t k = 0; k < n && k < i; k++)
        if (rv[i * n + k] != 0)
          mismatch(&bad, msg, msg_len, "r below its diagonal", b,
                   fabs(rv[i * n + k]), 0);
    /* q r == a. */
    double err = 0;
    for (int64_t i = 0; i < m; i++)
      for (int64_t k = 0; k < n; k++) {
        double s = 0;
        for (int64_t j = 0; j < qc; j++)
          s += qv[i * qc + j] * rv[j * n + k];
        err = fmax(err, fabs(s - av[i * n + k]));
      }
    *max_error = fmax(*max_error, err);
    if (!(err <= tol))
      mismatch(&bad, msg, msg_len, "q r against the input", b, err, tol);
    /* q^T q == I. */
    double otol = atol + rtol * (double)m;
    err = 0;
    for (int64_t i = 0; i < qc; i++)
      for (int64_t j = 0; j < qc; j++) {
        double s = 0;
        for (int64_t k = 0; k < m; k++)
          s += qv[k * qc + i] * qv[k * qc + j];
        err = fmax(err, fabs(s - (i == j)));
      }
    *max_error = fmax(*max_error, err);
    if (!(err <= otol))
      mismatch(&bad, msg, msg_len, "q^T q against the identity", b, err,
               otol);
    /* LAPACK's signs: r as the float64 reference's. */
    err = 0;
    for (int64_t i = 0; i < rr * n; i++)
      err = fmax(err, fabs(rv[i] - wr[i]));
    if (!(err <= tol))
      mismatch(&bad, msg, msg_len, "r against the float64 r (signs?)", b,
               err, tol);
  }
  return bad;
}

static struct ref_case *qr_case(struct ref_cases *out, TF_DataType dtype,
                                const int64_t *dims, int rank, bool full,
                                TF_Code expect)
{
  char shape[96] = "";
  for (int i = 0; i < rank; i++)
    snprintf(shape + strlen(shape), sizeof(shape) - strlen(shape), "%s%lld",
             i ? "," : "", (long long)dims[i]);
  struct ref_case *c =
      ref_case_add(out, "Qr", "Qr [%s]%s", shape, full ? " full" : "");
  ref_case_input(c, dtype, dims, rank, REF_ANY);
  if (full)
    ref_case_attr_bool(c, "full_matrices", true);
  c->expect_code = expect;
  return c;
}

#define D(...) ((const int64_t[]){__VA_ARGS__}), \
               (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static void qr_cases(const struct ref_op *op, TF_DataType dtype,
                     struct ref_cases *out)
{
  (void)op;
  const TF_Code ok = TF_OK;
  for (int full = 0; full < 2; full++) {
    qr_case(out, dtype, D(1, 1), full, ok);
    qr_case(out, dtype, D(3, 3), full, ok);
    qr_case(out, dtype, D(5, 3), full, ok);
    qr_case(out, dtype, D(3, 5), full, ok);
    /* More columns than a pass of lanes (32), more rows than a
     * work-group (256). */
    qr_case(out, dtype, D(70, 35), full, ok);
    qr_case(out, dtype, D(35, 70), full, ok);
    qr_case(out, dtype, D(260, 5), full, ok);
    /* Batches, one launch. */
    qr_case(out, dtype, D(2, 4, 3), full, ok);
    qr_case(out, dtype, D(2, 3, 5, 4), full, ok);
    /* Empty: [3, 0]'s full q is the identity. */
    qr_case(out, dtype, D(3, 0), full, ok);
    qr_case(out, dtype, D(0, 3), full, ok);
    qr_case(out, dtype, D(0, 3, 3), full, ok);
  }
  /* A zero column and a column already triangular: no reflection there
   * (tau 0), r keeps the value as it is (negative here). */
  struct ref_case *c = qr_case(out, dtype, D(4, 3), false, ok);
  for (int i = 0; i < 4; i++)
    c->inputs[0].v[i * 3] = 0;
  c = qr_case(out, dtype, D(4, 3), true, ok);
  c->inputs[0].v[0] = -2;
  for (int i = 1; i < 4; i++)
    c->inputs[0].v[i * 3] = 0;
  qr_case(out, dtype, D(3), false, TF_INVALID_ARGUMENT);
}

/* ---- MatrixDiagPartV3 --------------------------------------------------- */

static int diag_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *a = &c->inputs[0], *kt = &c->inputs[1];
  const int lanes = ref_lanes(a->dtype);
  const char *align = ref_case_attr_string_or(c, "align", "RIGHT_LEFT");
  if (a->rank < 2 || kt->rank > 1 || kt->elements < 1 || kt->elements > 2 ||
      c->inputs[2].rank != 0) {
    snprintf(error, (size_t)error_len, "bad shapes");
    return -1;
  }
  int64_t lo = (int64_t)kt->v[0];
  int64_t hi = kt->elements == 2 ? (int64_t)kt->v[1] : lo;
  int64_t m = a->dims[a->rank - 2], n = a->dims[a->rank - 1];
  if (lo > hi || ((m || n) && (lo <= -m || lo >= n || hi <= -m || hi >= n))) {
    snprintf(error, (size_t)error_len, "diagonal out of range");
    return -1;
  }
  bool right_super = strncmp(align, "RIGHT", 5) == 0;
  bool right_sub = strcmp(align + strlen(align) - 5, "RIGHT") == 0;
  int64_t num = hi - lo + 1;
  int64_t max_len = 0;
  for (int64_t d = lo; d <= hi; d++) {
    int64_t len = (d >= 0 ? (m < n - d ? m : n - d) : (m + d < n ? m + d : n));
    if (len > max_len)
      max_len = len;
  }
  int64_t dims[REF_MAX_DIMS], batch = 1;
  int rank = 0;
  for (int i = 0; i < a->rank - 2; i++) {
    dims[rank++] = a->dims[i];
    batch *= a->dims[i];
  }
  if (num > 1)
    dims[rank++] = num;
  dims[rank++] = max_len;
  ref_tensor_alloc(&out[0], a->dtype, dims, rank);
  int64_t o = 0;
  for (int64_t b = 0; b < batch; b++)
    for (int64_t d = hi; d >= lo; d--) {
      int64_t len = (d >= 0 ? (m < n - d ? m : n - d) : (m + d < n ? m + d : n));
      bool right = d >= 0 ? right_super : right_sub;
      int64_t offset = right ? max_len - len : 0;
      for (int64_t i = 0; i < max_len; i++) {
        int64_t j = i - offset; /* index along the diagonal */
        int64_t row = j + (d < 0 ? -d : 0), col = j + (d > 0 ? d : 0);
        /* Every value of a complex element (lanes of them). */
        for (int l = 0; l < lanes; l++)
          out[0].v[o++] = j >= 0 && j < len
                              ? a->v[((b * m + row) * n + col) * lanes + l]
                              : c->inputs[2].v[l];
      }
    }
  return 1;
}

static struct ref_case *diag_case(struct ref_cases *out, TF_DataType dtype,
                                  const int64_t *dims, int rank, int64_t lo,
                                  int64_t hi, bool range, const char *align,
                                  TF_Code expect)
{
  char shape[96] = "";
  for (int i = 0; i < rank; i++)
    snprintf(shape + strlen(shape), sizeof(shape) - strlen(shape), "%s%lld",
             i ? "," : "", (long long)dims[i]);
  struct ref_case *c = ref_case_add(out, "MatrixDiagPartV3",
                                    "MatrixDiagPartV3 [%s] k=%lld..%lld %s",
                                    shape, (long long)lo, (long long)hi,
                                    align ? align : "");
  ref_case_input(c, dtype, dims, rank, REF_ANY);
  double kv[2] = {(double)lo, (double)hi};
  int64_t kn = 2;
  if (range)
    ref_case_input_values(c, TF_INT32, &kn, 1, kv);
  else
    ref_case_input_values(c, TF_INT32, NULL, 0, kv);
  double pad[2] = {7, -2};
  ref_case_input_values(c, dtype, NULL, 0, pad);
  if (align != NULL)
    ref_case_attr_string(c, "align", align);
  c->expect_code = expect;
  return c;
}

static void diag_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  (void)op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  diag_case(out, dtype, D(4, 4), 0, 0, false, NULL, ok);
  diag_case(out, dtype, D(3, 5, 7), 0, 0, false, NULL, ok);
  diag_case(out, dtype, D(2, 7, 5), 2, 2, false, NULL, ok);
  diag_case(out, dtype, D(2, 7, 5), -3, -3, false, NULL, ok);
  static const char *const aligns[] = {"RIGHT_LEFT", "LEFT_RIGHT",
                                       "LEFT_LEFT", "RIGHT_RIGHT"};
  for (int i = 0; i < 4; i++) {
    diag_case(out, dtype, D(2, 5, 7), -2, 3, true, aligns[i], ok);
    diag_case(out, dtype, D(6, 4), -4, 1, true, aligns[i], ok);
  }
  diag_case(out, dtype, D(0, 3, 3), 0, 0, false, NULL, ok);
  diag_case(out, dtype, D(3), 0, 0, false, NULL, bad);
  diag_case(out, dtype, D(3, 3), 1, 0, true, NULL, bad);
  diag_case(out, dtype, D(3, 3), 3, 3, false, NULL, bad);
}

/* ---- MatrixDiagV3, MatrixSetDiagV3, MatrixBandPart ------------------------ */

/* Where diagonal d (length len) starts within a stored diagonal of max_len:
 * TensorFlow's ComputeDiagLenAndContentOffset. */
static int64_t content_offset(int64_t d, int64_t m, int64_t n,
                              int64_t max_len, const char *align)
{
  bool left_super = strncmp(align, "LEFT", 4) == 0;
  bool left_sub = strcmp(align + strlen(align) - 4, "LEFT") == 0;
  bool left = (d >= 0 && left_super) || (d <= 0 && left_sub);
  int64_t len = m + (d < 0 ? d : 0);
  if (n - (d > 0 ? d : 0) < len)
    len = n - (d > 0 ? d : 0);
  return left ? 0 : max_len - len;
}

/* MatrixDiagV3 (set = false: input 0 the diagonals) and MatrixSetDiagV3
 * (input 0 the matrices, input 1 the diagonals): out[b, i, j] for
 * d = j - i in [lo, hi] is diag[b, hi - d, min(i, j) + offset(d)]. */
static int set_diag_any(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len, bool set)
{
  const struct ref_tensor *in = set ? &c->inputs[0] : NULL;
  const struct ref_tensor *dg = &c->inputs[set ? 1 : 0];
  const struct ref_tensor *kt = &c->inputs[set ? 2 : 1];
  const char *align = ref_case_attr_string_or(c, "align", "RIGHT_LEFT");
  const int lanes = ref_lanes(dg->dtype);
  int64_t lo = (int64_t)kt->v[0];
  int64_t hi = kt->elements == 2 ? (int64_t)kt->v[1] : lo;
  int64_t num = hi - lo + 1, m, n, dims[REF_MAX_DIMS];
  int rank;
  if (kt->rank > 1 || kt->elements < 1 || kt->elements > 2 || lo > hi ||
      dg->rank < 1 || (num > 1 && dg->rank < 2)) {
    snprintf(error, (size_t)error_len, "bad k or diagonal");
    return -1;
  }
  int64_t max_len = dg->dims[dg->rank - 1];
  if (set) {
    rank = in->rank;
    if (rank < 2) {
      snprintf(error, (size_t)error_len, "rank < 2");
      return -1;
    }
    memcpy(dims, in->dims, sizeof(int64_t) * (size_t)rank);
    m = dims[rank - 2];
    n = dims[rank - 1];
    if ((m || n) && (lo <= -m || lo >= n || hi <= -m || hi >= n)) {
      snprintf(error, (size_t)error_len, "k out of range");
      return -1;
    }
    int64_t want = m + (hi < 0 ? hi : 0);
    if (n - (lo > 0 ? lo : 0) < want)
      want = n - (lo > 0 ? lo : 0);
    if (max_len != want || dg->rank != rank - (num > 1 ? 0 : 1) ||
        (num > 1 && dg->dims[rank - 2] != num)) {
      snprintf(error, (size_t)error_len, "diagonal shape");
      return -1;
    }
    for (int i = 0; i < rank - 2; i++)
      if (dg->dims[i] != dims[i]) {
        snprintf(error, (size_t)error_len, "diagonal batch");
        return -1;
      }
  } else {
    m = (int64_t)c->inputs[2].v[0];
    n = (int64_t)c->inputs[3].v[0];
    if (num > 1 && dg->dims[dg->rank - 2] != num) {
      snprintf(error, (size_t)error_len, "diagonal count");
      return -1;
    }
    int64_t min_rows = max_len - (hi < 0 ? hi : 0);
    int64_t min_cols = max_len + (lo > 0 ? lo : 0);
    if ((m != -1 && m < min_rows) || (n != -1 && n < min_cols)) {
      snprintf(error, (size_t)error_len, "too small");
      return -1;
    }
    if (m == -1 && n == -1)
      m = n = min_rows > min_cols ? min_rows : min_cols;
    else if (m == -1)
      m = min_rows;
    else if (n == -1)
      n = min_cols;
    if (m != min_rows && n != min_cols) {
      snprintf(error, (size_t)error_len, "inconsistent");
      return -1;
    }
    rank = dg->rank + (num > 1 ? 0 : 1);
    memcpy(dims, dg->dims, sizeof(int64_t) * (size_t)dg->rank);
    dims[rank - 2] = m;
    dims[rank - 1] = n;
  }
  ref_tensor_alloc(&out[0], dg->dtype, dims, rank);
  int64_t batch = 1;
  for (int i = 0; i < rank - 2; i++)
    batch *= dims[i];
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        int64_t d = j - i, e = (b * m + i) * n + j;
        for (int l = 0; l < lanes; l++) {
          double v;
          if (d >= lo && d <= hi) {
            int64_t at = (b * num + hi - d) * max_len + (i < j ? i : j) +
                         content_offset(d, m, n, max_len, align);
            v = dg->v[at * lanes + l];
          } else {
            v = set ? in->v[e * lanes + l] : c->inputs[4].v[l];
          }
          out[0].v[e * lanes + l] = v;
        }
      }
  return 1;
}

static int matrix_diag_compute(const struct ref_case *c,
                               struct ref_tensor *out, char *error,
                               int error_len)
{
  return set_diag_any(c, out, error, error_len, false);
}

static int set_diag_compute(const struct ref_case *c, struct ref_tensor *out,
                            char *error, int error_len)
{
  return set_diag_any(c, out, error, error_len, true);
}

static struct ref_case *mdiag_case(struct ref_cases *out, TF_DataType dtype,
                                   const int64_t *dims, int rank, int64_t lo,
                                   int64_t hi, int64_t rows, int64_t cols,
                                   const char *align, TF_Code expect)
{
  struct ref_case *c = ref_case_add(
      out, "MatrixDiagV3", "MatrixDiagV3 rank %d [..%lld] k=%lld..%lld %lldx%lld %s",
      rank, (long long)dims[rank - 1], (long long)lo, (long long)hi,
      (long long)rows, (long long)cols, align ? align : "");
  ref_case_input(c, dtype, dims, rank, REF_ANY);
  double kv[2] = {(double)lo, (double)hi}, r = (double)rows,
         cl = (double)cols, pad[2] = {5, 1};
  int64_t kn = 2;
  if (lo != hi)
    ref_case_input_values(c, TF_INT32, &kn, 1, kv);
  else
    ref_case_input_values(c, TF_INT32, NULL, 0, kv);
  ref_case_input_values(c, TF_INT32, NULL, 0, &r);
  ref_case_input_values(c, TF_INT32, NULL, 0, &cl);
  ref_case_input_values(c, dtype, NULL, 0, pad);
  if (align != NULL)
    ref_case_attr_string(c, "align", align);
  c->expect_code = expect;
  return c;
}

static void mdiag_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  (void)op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  static const char *const aligns[] = {"RIGHT_LEFT", "LEFT_RIGHT",
                                       "LEFT_LEFT", "RIGHT_RIGHT"};
  mdiag_case(out, dtype, D(5), 0, 0, -1, -1, NULL, ok);
  mdiag_case(out, dtype, D(3, 4), 0, 0, -1, -1, NULL, ok);
  mdiag_case(out, dtype, D(2, 3), 2, 2, -1, -1, NULL, ok);
  mdiag_case(out, dtype, D(2, 3), -1, -1, 5, -1, NULL, ok);
  mdiag_case(out, dtype, D(4), 0, 0, 4, 7, NULL, ok);
  for (int i = 0; i < 4; i++) {
    mdiag_case(out, dtype, D(2, 4, 3), -1, 2, -1, -1, aligns[i], ok);
    mdiag_case(out, dtype, D(4, 3), -3, 0, 6, -1, aligns[i], ok);
  }
  mdiag_case(out, dtype, D(0, 3), 0, 0, -1, -1, NULL, ok);
  mdiag_case(out, dtype, D(2, 4), -1, 1, -1, -1, NULL, bad);
  mdiag_case(out, dtype, D(4), 0, 0, 3, -1, NULL, bad);
  mdiag_case(out, dtype, D(4), 1, 0, -1, -1, NULL, bad);
}

static struct ref_case *sdiag_case(struct ref_cases *out, TF_DataType dtype,
                                   const int64_t *dims, int rank, int64_t lo,
                                   int64_t hi, const char *align,
                                   int64_t extra, TF_Code expect)
{
  struct ref_case *c = ref_case_add(
      out, "MatrixSetDiagV3", "MatrixSetDiagV3 rank %d [%lld,%lld] k=%lld..%lld %s%s",
      rank, (long long)dims[rank - 2], (long long)dims[rank - 1],
      (long long)lo, (long long)hi, align ? align : "",
      extra ? " (bad diagonal)" : "");
  ref_case_input(c, dtype, dims, rank, REF_ANY);
  int64_t m = dims[rank - 2], n = dims[rank - 1];
  int64_t ddims[REF_MAX_DIMS];
  int drank = rank - 2;
  memcpy(ddims, dims, sizeof(int64_t) * (size_t)drank);
  int64_t max_len = m + (hi < 0 ? hi : 0);
  if (n - (lo > 0 ? lo : 0) < max_len)
    max_len = n - (lo > 0 ? lo : 0);
  if (max_len < 0)
    max_len = 0;
  if (hi > lo)
    ddims[drank++] = hi - lo + 1;
  ddims[drank++] = max_len + extra;
  ref_case_input(c, dtype, ddims, drank, REF_ANY);
  double kv[2] = {(double)lo, (double)hi};
  int64_t kn = 2;
  if (lo != hi)
    ref_case_input_values(c, TF_INT32, &kn, 1, kv);
  else
    ref_case_input_values(c, TF_INT32, NULL, 0, kv);
  if (align != NULL)
    ref_case_attr_string(c, "align", align);
  c->expect_code = expect;
  return c;
}

static void sdiag_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  (void)op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  static const char *const aligns[] = {"RIGHT_LEFT", "LEFT_RIGHT",
                                       "LEFT_LEFT", "RIGHT_RIGHT"};
  sdiag_case(out, dtype, D(4, 4), 0, 0, NULL, 0, ok);
  sdiag_case(out, dtype, D(2, 3, 5), 1, 1, NULL, 0, ok);
  sdiag_case(out, dtype, D(17, 17), -3, -3, NULL, 0, ok);
  for (int i = 0; i < 4; i++) {
    sdiag_case(out, dtype, D(2, 5, 7), -2, 3, aligns[i], 0, ok);
    sdiag_case(out, dtype, D(6, 4), -4, 1, aligns[i], 0, ok);
  }
  sdiag_case(out, dtype, D(0, 3, 3), 0, 0, NULL, 0, ok);
  sdiag_case(out, dtype, D(3, 3), 0, 0, NULL, 1, bad);
  sdiag_case(out, dtype, D(3, 3), 3, 3, NULL, 0, bad);
}

static int band_compute(const struct ref_case *c, struct ref_tensor *out,
                        char *error, int error_len)
{
  const struct ref_tensor *a = &c->inputs[0];
  const int lanes = ref_lanes(a->dtype);
  if (a->rank < 2 || c->inputs[1].rank != 0 || c->inputs[2].rank != 0) {
    snprintf(error, (size_t)error_len, "bad shapes");
    return -1;
  }
  int64_t m = a->dims[a->rank - 2], n = a->dims[a->rank - 1];
  int64_t lower = (int64_t)c->inputs[1].v[0];
  int64_t upper = (int64_t)c->inputs[2].v[0];
  if (lower > m || upper > n) {
    snprintf(error, (size_t)error_len, "bound out of range");
    return -1;
  }
  ref_tensor_alloc(&out[0], a->dtype, a->dims, a->rank);
  for (int64_t e = 0; e < a->elements; e++) {
    int64_t j = e % n, i = (e / n) % m;
    bool keep = (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
    for (int l = 0; l < lanes; l++)
      out[0].v[e * lanes + l] = keep ? a->v[e * lanes + l] : 0;
  }
  return 1;
}

static void band_case(struct ref_cases *out, TF_DataType dtype,
                      const int64_t *dims, int rank, int64_t lower,
                      int64_t upper, TF_DataType itype, TF_Code expect)
{
  /* The last two dims name the case (a rank-1 case has only one). */
  int64_t rows = rank >= 2 ? dims[rank - 2] : 1;
  struct ref_case *c = ref_case_add(
      out, "MatrixBandPart", "MatrixBandPart rank %d [%lld,%lld] %lld %lld %s",
      rank, (long long)rows, (long long)dims[rank - 1], (long long)lower,
      (long long)upper, itype == TF_INT32 ? "int32" : "int64");
  ref_case_input(c, dtype, dims, rank, REF_ANY);
  double lo = (double)lower, hi = (double)upper;
  ref_case_input_values(c, itype, NULL, 0, &lo);
  ref_case_input_values(c, itype, NULL, 0, &hi);
  c->expect_code = expect;
}

static void band_cases(const struct ref_op *op, TF_DataType dtype,
                       struct ref_cases *out)
{
  (void)op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  band_case(out, dtype, D(5, 5), 0, -1, TF_INT64, ok);
  band_case(out, dtype, D(5, 5), -1, 0, TF_INT32, ok);
  band_case(out, dtype, D(2, 4, 7), 1, 2, TF_INT64, ok);
  band_case(out, dtype, D(3, 2, 17, 9), 3, 0, TF_INT32, ok);
  band_case(out, dtype, D(6, 4), 0, 0, TF_INT64, ok);
  band_case(out, dtype, D(6, 4), -1, -1, TF_INT64, ok);
  band_case(out, dtype, D(6, 4), 6, 4, TF_INT32, ok);
  band_case(out, dtype, D(0, 4), 0, 1, TF_INT64, ok);
  /* A CPU device's rows in two spans (4096 elements each at most), the
   * band crossing the span's edge. */
  band_case(out, dtype, D(3, 5000), 2, 4098, TF_INT64, ok);
  band_case(out, dtype, D(6, 4), 7, 0, TF_INT64, bad);
  band_case(out, dtype, D(6, 4), 0, 5, TF_INT32, bad);
  band_case(out, dtype, D(4), 0, 0, TF_INT64, bad);
}

/* ---- Cholesky and the LU family (float64, their own algorithms) ----------- */

/* The batch and n of a [..., n, n] input; false if not square. */
static bool square(const struct ref_tensor *a, int64_t *batch, int64_t *n,
                   char *error, int error_len)
{
  if (a->rank < 2 || a->dims[a->rank - 1] != a->dims[a->rank - 2]) {
    snprintf(error, (size_t)error_len, "not a batch of square matrices");
    return false;
  }
  *n = a->dims[a->rank - 1];
  *batch = 1;
  for (int i = 0; i < a->rank - 2; i++)
    *batch *= a->dims[i];
  return true;
}

static void round_outputs(struct ref_tensor *out, int count)
{
  for (int o = 0; o < count; o++)
    for (int64_t i = 0; i < out[o].elements; i++)
      out[o].v[i] = ref_round_to(out[o].dtype, out[o].v[i]);
}

/* Cholesky-Banachiewicz, row by row, from the lower triangle; a pivot that
 * is not positive makes the whole lower triangle NaN (TensorFlow's GPU
 * kernel), the upper one zero. */
static int cholesky_compute(const struct ref_case *c, struct ref_tensor *out,
                            char *error, int error_len)
{
  const struct ref_tensor *a = &c->inputs[0];
  int64_t batch, n;
  if (!square(a, &batch, &n, error, error_len))
    return -1;
  ref_tensor_alloc(&out[0], a->dtype, a->dims, a->rank);
  for (int64_t b = 0; b < batch; b++) {
    const double *A = a->v + b * n * n;
    double *L = out[0].v + b * n * n;
    bool failed = false;
    for (int64_t i = 0; i < n * n; i++)
      L[i] = 0;
    for (int64_t i = 0; i < n && !failed; i++)
      for (int64_t j = 0; j <= i; j++) {
        double s = A[i * n + j];
        for (int64_t k = 0; k < j; k++)
          s -= L[i * n + k] * L[j * n + k];
        if (i == j) {
          if (!(s > 0)) {
            failed = true;
            break;
          }
          L[i * n + i] = sqrt(s);
        } else {
          L[i * n + j] = s / L[j * n + j];
        }
      }
    if (failed)
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++)
          L[i * n + j] = NAN;
  }
  round_outputs(out, 1);
  return 1;
}

/* Gauss-Jordan elimination with partial pivoting of [A | B] (n x n, n x r,
 * float64): B becomes A^-1 B. Returns the determinant of A (0 for an
 * exactly singular A, B then unspecified). w: n * n doubles. */
static double gauss_jordan(const double *A, bool transpose, int64_t n,
                           double *B, int64_t r, double *w)
{
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++)
      w[i * n + j] = transpose ? A[j * n + i] : A[i * n + j];
  double det = 1;
  for (int64_t j = 0; j < n; j++) {
    int64_t p = j;
    for (int64_t i = j + 1; i < n; i++)
      if (fabs(w[i * n + j]) > fabs(w[p * n + j]))
        p = i;
    if (w[p * n + j] == 0)
      return 0;
    if (p != j) {
      det = -det;
      for (int64_t k = 0; k < n; k++) {
        double t = w[j * n + k];
        w[j * n + k] = w[p * n + k];
        w[p * n + k] = t;
      }
      for (int64_t k = 0; k < r; k++) {
        double t = B[j * r + k];
        B[j * r + k] = B[p * r + k];
        B[p * r + k] = t;
      }
    }
    double d = w[j * n + j];
    det *= d;
    for (int64_t k = 0; k < n; k++)
      w[j * n + k] /= d;
    for (int64_t k = 0; k < r; k++)
      B[j * r + k] /= d;
    for (int64_t i = 0; i < n; i++) {
      double f = w[i * n + j];
      if (i == j || f == 0)
        continue;
      for (int64_t k = 0; k < n; k++)
        w[i * n + k] -= f * w[j * n + k];
      for (int64_t k = 0; k < r; k++)
        B[i * r + k] -= f * B[j * r + k];
    }
  }
  return det;
}

/* MatrixInverse, MatrixSolve, MatrixDeterminant, LogMatrixDeterminant. */
static int lu_family_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  const struct ref_tensor *a = &c->inputs[0];
  bool adjoint = ref_case_attr_bool_or(c, "adjoint", false);
  bool inverse = strcmp(c->op, "MatrixInverse") == 0;
  bool solve = strcmp(c->op, "MatrixSolve") == 0;
  bool logdet = strcmp(c->op, "LogMatrixDeterminant") == 0;
  int64_t batch, n, r = 0;
  if (!square(a, &batch, &n, error, error_len))
    return -1;
  if (solve) {
    const struct ref_tensor *rhs = &c->inputs[1];
    if (rhs->rank != a->rank || rhs->dims[rhs->rank - 2] != n) {
      snprintf(error, (size_t)error_len, "rhs shape");
      return -1;
    }
    for (int i = 0; i < a->rank - 2; i++)
      if (rhs->dims[i] != a->dims[i]) {
        snprintf(error, (size_t)error_len, "rhs batch");
        return -1;
      }
    r = rhs->dims[rhs->rank - 1];
    ref_tensor_alloc(&out[0], a->dtype, rhs->dims, rhs->rank);
  } else if (inverse) {
    r = n;
    ref_tensor_alloc(&out[0], a->dtype, a->dims, a->rank);
  } else {
    ref_tensor_alloc(&out[0], a->dtype, a->dims, a->rank - 2);
    if (logdet)
      ref_tensor_alloc(&out[1], a->dtype, a->dims, a->rank - 2);
  }
  double *w = malloc(sizeof(double) * (size_t)(n * n + 1));
  if (w == NULL) {
    snprintf(error, (size_t)error_len, "out of memory");
    return -1;
  }
  int result = logdet ? 2 : 1;
  for (int64_t b = 0; b < batch; b++) {
    double *B = out[0].v + b * n * r;
    if (inverse)
      for (int64_t i = 0; i < n * n; i++)
        B[i] = i / n == i % n;
    else if (solve)
      memcpy(B, c->inputs[1].v + b * n * r, sizeof(double) * (size_t)(n * r));
    double det = gauss_jordan(a->v + b * n * n, adjoint, n,
                              inverse || solve ? B : NULL, r, w);
    if ((inverse || solve) && det == 0 && n > 0 && r > 0) {
      snprintf(error, (size_t)error_len, "not invertible");
      result = -1;
      break;
    }
    if (logdet) {
      out[0].v[b] = det > 0 ? 1 : det < 0 ? -1 : 0;
      out[1].v[b] = log(fabs(det));
    } else if (!inverse && !solve) {
      out[0].v[b] = det;
    }
  }
  free(w);
  if (result > 0)
    round_outputs(out, result);
  return result;
}

/* MatrixTriangularSolve: batch dims broadcast as NumPy's; forward or back
 * substitution, row by row, from the triangle op(a) reads. */
static int trisolve_compute(const struct ref_case *c, struct ref_tensor *out,
                            char *error, int error_len)
{
  const struct ref_tensor *a = &c->inputs[0], *y = &c->inputs[1];
  bool lower = ref_case_attr_bool_or(c, "lower", true);
  bool adjoint = ref_case_attr_bool_or(c, "adjoint", false);
  int64_t abatch, n;
  if (!square(a, &abatch, &n, error, error_len))
    return -1;
  if (y->rank < 2 || y->dims[y->rank - 2] != n) {
    snprintf(error, (size_t)error_len, "rhs shape");
    return -1;
  }
  int64_t r = y->dims[y->rank - 1];
  int ar = a->rank - 2, yr = y->rank - 2;
  int orank = ar > yr ? ar : yr;
  int64_t dims[REF_MAX_DIMS], ad[REF_MAX_DIMS], yd[REF_MAX_DIMS];
  for (int i = 0; i < orank; i++) {
    ad[i] = i - (orank - ar) >= 0 ? a->dims[i - (orank - ar)] : 1;
    yd[i] = i - (orank - yr) >= 0 ? y->dims[i - (orank - yr)] : 1;
    if (ad[i] != yd[i] && ad[i] != 1 && yd[i] != 1) {
      snprintf(error, (size_t)error_len, "batch dims");
      return -1;
    }
    dims[i] = ad[i] > yd[i] ? ad[i] : yd[i];
    if (ad[i] == 0 || yd[i] == 0)
      dims[i] = 0;
  }
  dims[orank] = n;
  dims[orank + 1] = r;
  ref_tensor_alloc(&out[0], a->dtype, dims, orank + 2);
  int64_t batch = 1;
  for (int i = 0; i < orank; i++)
    batch *= dims[i];
  bool forward = lower != adjoint;
  for (int64_t ob = 0; ob < batch; ob++) {
    int64_t rest = ob, ai = 0, yi = 0, as = 1, ys = 1;
    for (int d = orank - 1; d >= 0; d--) {
      int64_t i = rest % dims[d];
      rest /= dims[d];
      ai += (ad[d] == 1 ? 0 : i) * as;
      yi += (yd[d] == 1 ? 0 : i) * ys;
      as *= ad[d];
      ys *= yd[d];
    }
    const double *A = a->v + ai * n * n, *Y = y->v + yi * n * r;
    double *X = out[0].v + ob * n * r;
    for (int64_t s = 0; s < n; s++) {
      int64_t i = forward ? s : n - 1 - s;
      for (int64_t k = 0; k < r; k++) {
        double v = Y[i * r + k];
        for (int64_t t = 0; t < s; t++) {
          int64_t j = forward ? t : n - 1 - t;
          double aij = adjoint ? A[j * n + i] : A[i * n + j];
          v -= aij * X[j * r + k];
        }
        X[i * r + k] = v / A[i * n + i];
      }
    }
  }
  round_outputs(out, 1);
  return 1;
}

/* Cases: the random [-3, 3] inputs reshaped into the matrices each op is
 * well defined on, as float64 values rounded to the dtype. */
enum shape_kind {
  SPD,          /* B B^T + n I (Cholesky) */
  DOMINANT,     /* diagonally dominant, rows cycled: pivoting needed */
  NEAR_IDENTITY, /* I + R / (2 n), rows cycled: determinants near +-1 */
  TRIANGULAR,   /* dominant diagonal, both triangles filled */
  NOT_SPD,      /* symmetric, a negative pivot on the way */
  SINGULAR      /* a zero column: an exactly zero pivot */
};

static void shape_matrices(struct ref_tensor *t, enum shape_kind kind)
{
  int64_t n = t->dims[t->rank - 1], batch = t->elements / (n ? n * n : 1);
  if (n == 0)
    return;
  double *tmp = malloc(sizeof(double) * (size_t)(n * n));
  if (tmp == NULL)
    abort();
  for (int64_t b = 0; b < batch; b++) {
    double *A = t->v + b * n * n;
    memcpy(tmp, A, sizeof(double) * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double v = tmp[i * n + j];
        switch (kind) {
        case SPD: {
          double s = i == j ? (double)n : 0;
          for (int64_t k = 0; k < n; k++)
            s += tmp[i * n + k] * tmp[j * n + k];
          /* Scaled to keep entries near 1. */
          v = s / (3.0 * (double)n);
          break;
        }
        case DOMINANT:
          v = v + (i == j ? (v < 0 ? -3.0 : 3.0) * (double)n : 0);
          break;
        case NEAR_IDENTITY:
          v = (i == j ? 1.0 : 0.0) + v / (2.0 * (double)n);
          break;
        case TRIANGULAR:
          v = i == j ? (v < 0 ? -1.0 : 1.0) * (2.0 + (double)n) : v;
          break;
        case NOT_SPD:
          v = i == j ? (i == n / 2 ? -1.0 : 4.0) : 0.5;
          break;
        case SINGULAR:
          v = j == n / 2 ? 0 : v + (i == j ? 3.0 * (double)n : 0);
          break;
        }
        A[i * n + j] = v;
      }
    /* Cycle the rows: the largest entry of column j sits in row j + 1. */
    if (kind == DOMINANT || kind == NEAR_IDENTITY) {
      memcpy(tmp, A, sizeof(double) * (size_t)(n * n));
      for (int64_t i = 0; i < n; i++)
        memcpy(A + ((i + 1) % n) * n, tmp + i * n,
               sizeof(double) * (size_t)n);
    }
  }
  free(tmp);
  for (int64_t i = 0; i < t->elements; i++)
    t->v[i] = ref_round_to(t->dtype, t->v[i]);
}

static struct ref_case *matrix_case(struct ref_cases *out, const char *op,
                                    TF_DataType dtype, const int64_t *dims,
                                    int rank, enum shape_kind kind,
                                    bool adjoint, TF_Code expect)
{
  static const char *const kinds[] = {"spd", "dominant", "near-identity",
                                      "triangular", "not-spd", "singular"};
  char shape[96] = "";
  for (int i = 0; i < rank; i++)
    snprintf(shape + strlen(shape), sizeof(shape) - strlen(shape), "%s%lld",
             i ? "," : "", (long long)dims[i]);
  struct ref_case *c = ref_case_add(out, op, "%s [%s] %s%s", op, shape,
                                    kinds[kind], adjoint ? " adjoint" : "");
  ref_case_input(c, dtype, dims, rank, REF_ANY);
  if (rank >= 2 && dims[rank - 1] == dims[rank - 2])
    shape_matrices(&c->inputs[0], kind);
  if (adjoint)
    ref_case_attr_bool(c, "adjoint", true);
  c->expect_code = expect;
  return c;
}

/* On the Oclgrind simulator (ref_on_oclgrind) the factorisations of 64 x 64
 * and larger matrices (barriers per column, every access checked) would
 * take minutes; 17 x 17 and the batches keep several passes of a
 * work-group's columns. */
static void cholesky_cases(const struct ref_op *op, TF_DataType dtype,
                           struct ref_cases *out)
{
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  matrix_case(out, op->op, dtype, D(1, 1), SPD, false, ok);
  matrix_case(out, op->op, dtype, D(3, 3), SPD, false, ok);
  matrix_case(out, op->op, dtype, D(17, 17), SPD, false, ok);
  if (!ref_on_oclgrind())
    matrix_case(out, op->op, dtype, D(64, 64), SPD, false, ok);
  matrix_case(out, op->op, dtype, D(2, 3, 5, 5), SPD, false, ok);
  matrix_case(out, op->op, dtype, D(0, 3, 3), SPD, false, ok);
  matrix_case(out, op->op, dtype, D(2, 0, 0), SPD, false, ok);
  /* The upper triangle is never read. */
  struct ref_case *c = matrix_case(out, op->op, dtype, D(4, 4), SPD, false, ok);
  c->inputs[0].v[1] = c->inputs[0].v[3] = 100;
  /* Not positive definite: NaN, no error (TensorFlow's GPU kernel). */
  matrix_case(out, op->op, dtype, D(2, 5, 5), NOT_SPD, false, ok);
  matrix_case(out, op->op, dtype, D(3, 4), SPD, false, bad);
  matrix_case(out, op->op, dtype, D(3), SPD, false, bad);
}

static void lu_cases(const struct ref_op *op, TF_DataType dtype,
                     struct ref_cases *out)
{
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  const bool det = strstr(op->op, "Determinant") != NULL;
  const enum shape_kind kind = det ? NEAR_IDENTITY : DOMINANT;
  for (int adj = 0; adj < (det ? 1 : 2); adj++) {
    matrix_case(out, op->op, dtype, D(1, 1), kind, adj, ok);
    matrix_case(out, op->op, dtype, D(3, 3), kind, adj, ok);
    matrix_case(out, op->op, dtype, D(17, 17), kind, adj, ok);
    if (!ref_on_oclgrind())
      matrix_case(out, op->op, dtype, D(64, 64), kind, adj, ok);
    matrix_case(out, op->op, dtype, D(2, 3, 4, 4), kind, adj, ok);
  }
  /* More rows than a work-group. */
  if (!ref_on_oclgrind())
    matrix_case(out, op->op, dtype, D(130, 130), kind, false, ok);
  matrix_case(out, op->op, dtype, D(0, 3, 3), kind, false, ok);
  matrix_case(out, op->op, dtype, D(2, 0, 0), kind, false, ok);
  /* Singular: an error for the inverse, 0 and -inf for determinants. */
  matrix_case(out, op->op, dtype, D(2, 5, 5), SINGULAR, false,
              det ? ok : bad);
  matrix_case(out, op->op, dtype, D(3, 4), kind, false, bad);
  matrix_case(out, op->op, dtype, D(3), kind, false, bad);
}

/* MatrixSolve: the matrix of lu_cases' kind with a right-hand side. */
static void solve_case(struct ref_cases *out, TF_DataType dtype,
                       const int64_t *adims, int arank, const int64_t *bdims,
                       int brank, enum shape_kind kind, bool adjoint,
                       TF_Code expect)
{
  struct ref_case *c =
      matrix_case(out, "MatrixSolve", dtype, adims, arank, kind, adjoint,
                  expect);
  snprintf(c->label + strlen(c->label), sizeof(c->label) - strlen(c->label),
           " rhs rank %d [..%lld]", brank, (long long)bdims[brank - 1]);
  ref_case_input(c, dtype, bdims, brank, REF_ANY);
}

static void solve_cases(const struct ref_op *op, TF_DataType dtype,
                        struct ref_cases *out)
{
  (void)op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  for (int adj = 0; adj < 2; adj++) {
    solve_case(out, dtype, D(1, 1), D(1, 1), DOMINANT, adj, ok);
    solve_case(out, dtype, D(3, 3), D(3, 2), DOMINANT, adj, ok);
    solve_case(out, dtype, D(17, 17), D(17, 5), DOMINANT, adj, ok);
    if (!ref_on_oclgrind())
      solve_case(out, dtype, D(64, 64), D(64, 33), DOMINANT, adj, ok);
    solve_case(out, dtype, D(2, 3, 4, 4), D(2, 3, 4, 1), DOMINANT, adj, ok);
  }
  if (!ref_on_oclgrind())
    solve_case(out, dtype, D(130, 130), D(130, 3), DOMINANT, false, ok);
  solve_case(out, dtype, D(0, 3, 3), D(0, 3, 2), DOMINANT, false, ok);
  solve_case(out, dtype, D(3, 3), D(3, 0), DOMINANT, false, ok);
  solve_case(out, dtype, D(2, 5, 5), D(2, 5, 2), SINGULAR, false, bad);
  solve_case(out, dtype, D(3, 3), D(4, 2), DOMINANT, false, bad);
  solve_case(out, dtype, D(2, 3, 3), D(3, 3, 2), DOMINANT, false, bad);
  solve_case(out, dtype, D(3, 3), D(2, 3, 2), DOMINANT, false, bad);
  solve_case(out, dtype, D(3, 4), D(3, 2), DOMINANT, false, bad);
}

static void trisolve_case(struct ref_cases *out, TF_DataType dtype,
                          const int64_t *adims, int arank,
                          const int64_t *bdims, int brank, bool lower,
                          bool adjoint, TF_Code expect)
{
  struct ref_case *c =
      matrix_case(out, "MatrixTriangularSolve", dtype, adims, arank,
                  TRIANGULAR, adjoint, expect);
  snprintf(c->label + strlen(c->label), sizeof(c->label) - strlen(c->label),
           " %s rhs rank %d [..%lld]", lower ? "lower" : "upper", brank,
           (long long)bdims[brank - 1]);
  if (!lower)
    ref_case_attr_bool(c, "lower", false);
  ref_case_input(c, dtype, bdims, brank, REF_ANY);
}

static void trisolve_cases(const struct ref_op *op, TF_DataType dtype,
                           struct ref_cases *out)
{
  (void)op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  for (int lower = 0; lower < 2; lower++)
    for (int adj = 0; adj < 2; adj++) {
      trisolve_case(out, dtype, D(1, 1), D(1, 2), lower, adj, ok);
      trisolve_case(out, dtype, D(3, 3), D(3, 4), lower, adj, ok);
      trisolve_case(out, dtype, D(17, 17), D(17, 3), lower, adj, ok);
      if (!ref_on_oclgrind())
        trisolve_case(out, dtype, D(64, 64), D(64, 40), lower, adj, ok);
      trisolve_case(out, dtype, D(2, 3, 5, 5), D(2, 3, 5, 2), lower, adj,
                    ok);
    }
  /* Batch broadcasting (MatMulBCast). */
  trisolve_case(out, dtype, D(1, 4, 4), D(3, 4, 2), true, false, ok);
  trisolve_case(out, dtype, D(2, 1, 4, 4), D(3, 4, 2), false, true, ok);
  trisolve_case(out, dtype, D(4, 4), D(2, 2, 4, 1), true, true, ok);
  trisolve_case(out, dtype, D(0, 3, 3), D(0, 3, 2), true, false, ok);
  trisolve_case(out, dtype, D(3, 3), D(3, 0), true, false, ok);
  trisolve_case(out, dtype, D(3, 3), D(4, 2), true, false, bad);
  trisolve_case(out, dtype, D(2, 3, 3), D(3, 3, 2), true, false, bad);
  trisolve_case(out, dtype, D(3, 4), D(3, 2), true, false, bad);
  trisolve_case(out, dtype, D(3), D(3, 2), true, false, bad);
}

/* ---- Svd, SelfAdjointEigV2 ------------------------------------------------ */

/* Singular vectors and eigenvectors are unique only up to signs (and to
 * rotations within repeated values), so the device's are judged by what
 * defines them (svd_check, eig_check): u diag(s) v^T reconstructs the
 * input, a v = v diag(e), the factors' columns are orthonormal, s is
 * descending and e ascending; the values themselves against this file's
 * float64 ones, which come from other algorithms than the kernels' Jacobi
 * sweeps: Householder tridiagonalisation and bisection on Sturm counts for
 * the eigenvalues, and for s the square roots of those of A^T A (or A A^T)
 * (absolute error sqrt(eps64) |a|, far inside float32's tolerance). */

/* The eigenvalues, ascending, of the symmetric n x n matrix a (row-major,
 * overwritten). d and e: n doubles each. */
static void sym_eigenvalues(double *a, int64_t n, double *eig, double *d,
                            double *e)
{
  /* A = H A H per column: the tridiagonal form, its values on d and e. */
  for (int64_t k = 0; k + 2 < n; k++) {
    double norm = 0;
    for (int64_t i = k + 1; i < n; i++)
      norm += a[i * n + k] * a[i * n + k];
    norm = sqrt(norm);
    if (norm == 0)
      continue;
    double x0 = a[(k + 1) * n + k];
    double alpha = x0 > 0 ? -norm : norm;
    /* v = x - alpha e_1 in eig (free until the end), |v|^2. */
    double *v = eig;
    double vv = 0;
    for (int64_t i = k + 1; i < n; i++) {
      v[i] = a[i * n + k] - (i == k + 1 ? alpha : 0);
      vv += v[i] * v[i];
    }
    if (vv == 0)
      continue;
    /* p = A v 2 / vv, w = p - (v.p / vv) v, A -= v w^T + w v^T. */
    double vp = 0;
    for (int64_t i = k + 1; i < n; i++) {
      double s = 0;
      for (int64_t j = k + 1; j < n; j++)
        s += a[i * n + j] * v[j];
      d[i] = 2 * s / vv;
      vp += v[i] * d[i];
    }
    for (int64_t i = k + 1; i < n; i++)
      d[i] -= vp / vv * v[i];
    for (int64_t i = k + 1; i < n; i++)
      for (int64_t j = k + 1; j < n; j++)
        a[i * n + j] -= v[i] * d[j] + d[i] * v[j];
    a[(k + 1) * n + k] = alpha;
    a[k * n + k + 1] = alpha;
  }
  double bound = 0;
  for (int64_t i = 0; i < n; i++) {
    d[i] = a[i * n + i];
    e[i] = i + 1 < n ? a[(i + 1) * n + i] : 0;
  }
  for (int64_t i = 0; i < n; i++)
    bound = fmax(bound, fabs(d[i]) + fabs(e[i]) + (i ? fabs(e[i - 1]) : 0));
  bound = bound * (1 + 1e-12) + 1e-300;
  /* Eigenvalue j: the least x with more than j eigenvalues below it. */
  for (int64_t j = 0; j < n; j++) {
    double lo = -bound, hi = bound;
    for (int it = 0; it < 2100 && hi - lo > 1e-16 * fmax(fabs(lo), fabs(hi));
         it++) {
      double mid = 0.5 * (lo + hi);
      if (mid == lo || mid == hi)
        break;
      int64_t below = 0;
      double q = 1;
      for (int64_t i = 0; i < n; i++) {
        q = d[i] - mid - (i ? e[i - 1] * e[i - 1] / q : 0);
        if (q == 0)
          q = -1e-300;
        below += q < 0;
      }
      if (below > j)
        hi = mid;
      else
        lo = mid;
    }
    eig[j] = 0.5 * (lo + hi);
  }
}

static bool all_finite(const double *x, int64_t count)
{
  for (int64_t i = 0; i < count; i++)
    if (!isfinite(x[i]))
      return false;
  return true;
}

static int svd_compute(const struct ref_case *c, struct ref_tensor *out,
                       char *error, int error_len)
{
  const struct ref_tensor *a = &c->inputs[0];
  bool uv = ref_case_attr_bool_or(c, "compute_uv", true);
  bool full = ref_case_attr_bool_or(c, "full_matrices", false);
  if (a->rank < 2) {
    snprintf(error, (size_t)error_len, "rank < 2");
    return -1;
  }
  int r = a->rank;
  int64_t m = a->dims[r - 2], n = a->dims[r - 1], p = m < n ? m : n;
  int64_t dims[REF_MAX_DIMS], batch = 1;
  memcpy(dims, a->dims, sizeof(int64_t) * (size_t)r);
  for (int i = 0; i < r - 2; i++)
    batch *= a->dims[i];
  dims[r - 2] = p;
  ref_tensor_alloc(&out[0], a->dtype, dims, r - 1);
  /* The factors' values are judged by svd_check: only their shapes. */
  dims[r - 2] = m;
  dims[r - 1] = full ? m : p;
  ref_tensor_alloc(&out[1], a->dtype, dims, uv ? r : 0);
  dims[r - 2] = n;
  dims[r - 1] = full ? n : p;
  ref_tensor_alloc(&out[2], a->dtype, dims, uv ? r : 0);
  double *w = malloc(sizeof(double) * (size_t)(p * p + 3 * p + 1));
  if (w == NULL) {
    snprintf(error, (size_t)error_len, "out of memory");
    return -1;
  }
  double *g = w, *ev = w + p * p, *d = ev + p, *e = d + p;
  for (int64_t b = 0; b < batch; b++) {
    const double *x = a->v + b * m * n;
    double *s = out[0].v + b * p;
    if (!all_finite(x, m * n)) {
      for (int64_t j = 0; j < p; j++)
        s[j] = NAN;
      continue;
    }
    /* The Gram matrix of the shorter side. */
    for (int64_t i = 0; i < p; i++)
      for (int64_t j = 0; j < p; j++) {
        double sum = 0;
        if (m >= n)
          for (int64_t k = 0; k < m; k++)
            sum += x[k * n + i] * x[k * n + j];
        else
          for (int64_t k = 0; k < n; k++)
            sum += x[i * n + k] * x[j * n + k];
        g[i * p + j] = sum;
      }
    sym_eigenvalues(g, p, ev, d, e);
    for (int64_t j = 0; j < p; j++)
      s[j] = ref_round_to(a->dtype, sqrt(fmax(ev[p - 1 - j], 0)));
  }
  free(w);
  return 3;
}

static int eig_compute(const struct ref_case *c, struct ref_tensor *out,
                       char *error, int error_len)
{
  const struct ref_tensor *a = &c->inputs[0];
  bool vectors = ref_case_attr_bool_or(c, "compute_v", true);
  int r = a->rank;
  if (r < 2 || a->dims[r - 1] != a->dims[r - 2]) {
    snprintf(error, (size_t)error_len, "not a batch of square matrices");
    return -1;
  }
  int64_t n = a->dims[r - 1], batch = 1;
  for (int i = 0; i < r - 2; i++)
    batch *= a->dims[i];
  ref_tensor_alloc(&out[0], a->dtype, a->dims, r - 1);
  ref_tensor_alloc(&out[1], a->dtype, a->dims, vectors ? r : 0);
  double *w = malloc(sizeof(double) * (size_t)(n * n + 3 * n + 1));
  if (w == NULL) {
    snprintf(error, (size_t)error_len, "out of memory");
    return -1;
  }
  double *d = w + n * n, *e = d + n;
  for (int64_t b = 0; b < batch; b++) {
    const double *x = a->v + b * n * n;
    /* The lower triangle, as TensorFlow reads it. */
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++)
        w[i * n + j] = i >= j ? x[i * n + j] : x[j * n + i];
    if (!all_finite(w, n * n)) {
      free(w);
      snprintf(error, (size_t)error_len, "not finite");
      return -1;
    }
    sym_eigenvalues(w, n, out[0].v + b * n, d, e);
    for (int64_t j = 0; j < n; j++)
      out[0].v[b * n + j] = ref_round_to(a->dtype, out[0].v[b * n + j]);
  }
  free(w);
  return 2;
}

/* The largest |x^T x - I| over the columns of x (rows x cols, row-major). */
static double orthonormality(const double *x, int64_t rows, int64_t cols)
{
  double err = 0;
  for (int64_t i = 0; i < cols; i++)
    for (int64_t j = i; j < cols; j++) {
      double s = 0;
      for (int64_t k = 0; k < rows; k++)
        s += x[k * cols + i] * x[k * cols + j];
      err = fmax(err, fabs(s - (i == j)));
    }
  return err;
}

/* s (or e) of one matrix: against the reference, ordered, all NaN where
 * the reference is. */
static void check_values(const double *got, const double *want, int64_t p,
                         bool descending, int64_t b, double tol,
                         double *max_error, int64_t *bad, char *msg,
                         int msg_len)
{
  double err = 0;
  for (int64_t j = 0; j < p; j++) {
    if (isnan(want[j]) || isnan(got[j])) {
      if (!(isnan(want[j]) && isnan(got[j])))
        mismatch(bad, msg, msg_len, "a value against NaN", b, INFINITY, tol);
      continue;
    }
    err = fmax(err, fabs(got[j] - want[j]));
    if (j > 0 && (descending ? got[j] > got[j - 1] : got[j] < got[j - 1]))
      mismatch(bad, msg, msg_len, "the order of the values", b,
               fabs(got[j] - got[j - 1]), 0);
  }
  *max_error = fmax(*max_error, err);
  if (!(err <= tol))
    mismatch(bad, msg, msg_len, "the values against float64's", b, err, tol);
}

static double max_abs(const double *x, int64_t count)
{
  double m = 0;
  for (int64_t i = 0; i < count; i++)
    m = fmax(m, fabs(x[i]));
  return m;
}

static int64_t svd_check(const struct ref_case *c,
                         const struct ref_tensor *got,
                         const struct ref_tensor *want, int num_outputs,
                         double rtol, double atol, double *max_error,
                         char *msg, int msg_len)
{
  const struct ref_tensor *a = &c->inputs[0];
  bool uv = ref_case_attr_bool_or(c, "compute_uv", true);
  int r = a->rank;
  int64_t m = a->dims[r - 2], n = a->dims[r - 1], p = m < n ? m : n;
  int64_t uc = uv ? got[1].dims[r - 1] : 0, vc = uv ? got[2].dims[r - 1] : 0;
  int64_t batch = 1, bad = 0;
  (void)num_outputs;
  for (int d = 0; d < r - 2; d++)
    batch *= a->dims[d];
  *max_error = 0;
  for (int64_t b = 0; b < batch; b++) {
    const double *x = a->v + b * m * n, *s = got[0].v + b * p;
    const double *u = uv ? got[1].v + b * m * uc : NULL;
    const double *v = uv ? got[2].v + b * n * vc : NULL;
    double big = (double)(m > n ? m : n);
    double tol = atol + rtol * big * max_abs(x, m * n);
    check_values(s, want[0].v + b * p, p, true, b, tol, max_error, &bad, msg,
                 msg_len);
    if (!uv)
      continue;
    if (!all_finite(x, m * n)) {
      for (int64_t i = 0; i < m * uc; i++)
        if (!isnan(u[i]))
          mismatch(&bad, msg, msg_len, "u of a non-finite input", b, u[i], 0);
      for (int64_t i = 0; i < n * vc; i++)
        if (!isnan(v[i]))
          mismatch(&bad, msg, msg_len, "v of a non-finite input", b, v[i], 0);
      continue;
    }
    double err = 0;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double sum = 0;
        for (int64_t k = 0; k < p; k++)
          sum += u[i * uc + k] * s[k] * v[j * vc + k];
        err = fmax(err, fabs(sum - x[i * n + j]));
      }
    *max_error = fmax(*max_error, err);
    if (!(err <= tol))
      mismatch(&bad, msg, msg_len, "u diag(s) v^T against the input", b, err,
               tol);
    double otol = atol + rtol * big;
    err = orthonormality(u, m, uc);
    *max_error = fmax(*max_error, err);
    if (!(err <= otol))
      mismatch(&bad, msg, msg_len, "u^T u against the identity", b, err,
               otol);
    err = orthonormality(v, n, vc);
    *max_error = fmax(*max_error, err);
    if (!(err <= otol))
      mismatch(&bad, msg, msg_len, "v^T v against the identity", b, err,
               otol);
  }
  return bad;
}

static int64_t eig_check(const struct ref_case *c,
                         const struct ref_tensor *got,
                         const struct ref_tensor *want, int num_outputs,
                         double rtol, double atol, double *max_error,
                         char *msg, int msg_len)
{
  const struct ref_tensor *a = &c->inputs[0];
  bool vectors = ref_case_attr_bool_or(c, "compute_v", true);
  int r = a->rank;
  int64_t n = a->dims[r - 1], batch = 1, bad = 0;
  (void)num_outputs;
  for (int d = 0; d < r - 2; d++)
    batch *= a->dims[d];
  *max_error = 0;
  for (int64_t b = 0; b < batch; b++) {
    const double *x = a->v + b * n * n, *e = got[0].v + b * n;
    const double *v = vectors ? got[1].v + b * n * n : NULL;
    double amax = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j <= i; j++)
        amax = fmax(amax, fabs(x[i * n + j]));
    double tol = atol + rtol * (double)n * amax;
    check_values(e, want[0].v + b * n, n, false, b, tol, max_error, &bad,
                 msg, msg_len);
    if (!vectors)
      continue;
    /* a v_k == e_k v_k, a from the lower triangle. */
    double err = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < n; k++) {
        double sum = 0;
        for (int64_t j = 0; j < n; j++)
          sum += (i >= j ? x[i * n + j] : x[j * n + i]) * v[j * n + k];
        err = fmax(err, fabs(sum - e[k] * v[i * n + k]));
      }
    *max_error = fmax(*max_error, err);
    if (!(err <= tol))
      mismatch(&bad, msg, msg_len, "a v against v diag(e)", b, err, tol);
    double otol = atol + rtol * (double)n;
    err = orthonormality(v, n, n);
    *max_error = fmax(*max_error, err);
    if (!(err <= otol))
      mismatch(&bad, msg, msg_len, "v^T v against the identity", b, err,
               otol);
  }
  return bad;
}

/* Matrices with repeated and zero singular values or eigenvalues. */
enum jacobi_kind { J_RANDOM, J_RANK_DEFICIENT, J_ONES, J_SCALED_IDENTITY,
                   J_HUGE, J_TINY, J_NAN, J_INF, J_NAN_UPPER };

static struct ref_case *jacobi_case(struct ref_cases *out, const char *op,
                                    TF_DataType dtype, const int64_t *dims,
                                    int rank, enum jacobi_kind kind,
                                    int vectors, bool full, TF_Code expect)
{
  static const char *const kinds[] = {
      "random", "rank-deficient", "ones", "2 I", "1e30 scale", "1e-30 scale",
      "NaN", "Inf", "NaN above the diagonal"};
  char shape[96] = "";
  for (int i = 0; i < rank; i++)
    snprintf(shape + strlen(shape), sizeof(shape) - strlen(shape), "%s%lld",
             i ? "," : "", (long long)dims[i]);
  bool svd = strcmp(op, "Svd") == 0;
  struct ref_case *c =
      ref_case_add(out, op, "%s [%s] %s%s%s", op, shape, kinds[kind],
                   vectors ? "" : " values only", full ? " full" : "");
  struct ref_tensor *t = ref_case_input(c, dtype, dims, rank, REF_ANY);
  int64_t m = rank >= 2 ? dims[rank - 2] : 1, n = dims[rank - 1];
  for (int64_t e = 0; e < t->elements; e++) {
    int64_t i = (e / n) % m, j = e % n, b = e / (m * n);
    double *x = &t->v[e];
    switch (kind) {
    case J_RANK_DEFICIENT:
      /* Column 1 repeats column 0 and the last is zero. */
      if (n >= 3 && j == 1)
        *x = t->v[e - 1];
      if (n >= 3 && j == n - 1)
        *x = 0;
      break;
    case J_ONES: *x = 1; break;
    case J_SCALED_IDENTITY: *x = i == j ? 2 : 0; break;
    case J_HUGE: *x = ref_round_to(dtype, *x * 1e30); break;
    case J_TINY: *x = ref_round_to(dtype, *x * 1e-30); break;
    case J_NAN: if (b == 1 && i == m - 1 && j == 0) *x = NAN; break;
    case J_INF: if (b == 0 && i == m - 1 && j == 0) *x = INFINITY; break;
    case J_NAN_UPPER: if (i == 0 && j == n - 1) *x = NAN; break;
    default: break;
    }
  }
  if (!vectors)
    ref_case_attr_bool(c, svd ? "compute_uv" : "compute_v", false);
  if (full)
    ref_case_attr_bool(c, "full_matrices", true);
  c->expect_code = expect;
  return c;
}

static void svd_cases(const struct ref_op *op, TF_DataType dtype,
                      struct ref_cases *out)
{
  (void)op;
  const TF_Code ok = TF_OK;
  const bool small = ref_on_oclgrind();
  for (int uv = 0; uv < 2; uv++)
    for (int full = 0; full < 2; full++) {
      if (!uv && full)
        continue;
      jacobi_case(out, "Svd", dtype, D(1, 1), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(3, 3), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(5, 3), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(3, 5), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(2, 3, 5, 4), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(7, 2), J_RANK_DEFICIENT, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(6, 4), J_RANK_DEFICIENT, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(4, 6), J_RANK_DEFICIENT, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(3, 0), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(2, 0, 3), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(0, 3, 3), J_RANDOM, uv, full, ok);
      if (small)
        continue;
      jacobi_case(out, "Svd", dtype, D(17, 17), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(40, 33), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(33, 40), J_RANDOM, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(5, 5), J_ONES, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(6, 6), J_SCALED_IDENTITY, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(3, 6, 4), J_HUGE, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(6, 4), J_TINY, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(3, 3, 3), J_NAN, uv, full, ok);
      jacobi_case(out, "Svd", dtype, D(2, 4, 3), J_INF, uv, full, ok);
    }
  /* Beyond 64 KiB of local memory: the global build. */
  if (!small)
    jacobi_case(out, "Svd", dtype, D(130, 70), J_RANDOM, true, true, ok);
  jacobi_case(out, "Svd", dtype, D(3), J_RANDOM, true, false,
              TF_INVALID_ARGUMENT);
}

static void eig_cases(const struct ref_op *op, TF_DataType dtype,
                      struct ref_cases *out)
{
  (void)op;
  const char *e = "SelfAdjointEigV2";
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  const bool small = ref_on_oclgrind();
  for (int v = 0; v < 2; v++) {
    jacobi_case(out, e, dtype, D(1, 1), J_RANDOM, v, false, ok);
    jacobi_case(out, e, dtype, D(3, 3), J_RANDOM, v, false, ok);
    jacobi_case(out, e, dtype, D(2, 3, 5, 5), J_RANDOM, v, false, ok);
    jacobi_case(out, e, dtype, D(4, 4), J_RANK_DEFICIENT, v, false, ok);
    jacobi_case(out, e, dtype, D(5, 5), J_ONES, v, false, ok);
    jacobi_case(out, e, dtype, D(4, 4), J_NAN_UPPER, v, false, ok);
    jacobi_case(out, e, dtype, D(0, 0), J_RANDOM, v, false, ok);
    jacobi_case(out, e, dtype, D(0, 3, 3), J_RANDOM, v, false, ok);
    if (small)
      continue;
    jacobi_case(out, e, dtype, D(6, 6), J_SCALED_IDENTITY, v, false, ok);
    jacobi_case(out, e, dtype, D(17, 17), J_RANDOM, v, false, ok);
    jacobi_case(out, e, dtype, D(2, 40, 40), J_RANDOM, v, false, ok);
    jacobi_case(out, e, dtype, D(3, 5, 5), J_HUGE, v, false, ok);
    jacobi_case(out, e, dtype, D(5, 5), J_TINY, v, false, ok);
    jacobi_case(out, e, dtype, D(3, 3, 3), J_NAN, v, false, bad);
    jacobi_case(out, e, dtype, D(2, 4, 4), J_INF, v, false, bad);
  }
  /* Beyond 64 KiB of local memory: the global build. */
  if (!small)
    jacobi_case(out, e, dtype, D(97, 97), J_RANDOM, true, false, ok);
  jacobi_case(out, e, dtype, D(3), J_RANDOM, true, false, bad);
  jacobi_case(out, e, dtype, D(3, 4), J_RANDOM, true, false, bad);
}

/* Tolerances: float32 factorisations of these well-conditioned matrices
 * (condition numbers of a few units) lose a few ulps per step of n; the
 * largest cases (n = 130) stay within 1e-4 relative plus a small absolute
 * term for entries near zero. */
const struct ref_op ref_ops_linalg[] = {
    {"Qr", 1e-5, 1e-4, REF_ANY, qr_cases, qr_compute},
    {"MatrixDiagPartV3", 0, 0, REF_ANY, diag_cases, diag_compute},
    {"MatrixDiagV3", 0, 0, REF_ANY, mdiag_cases, matrix_diag_compute},
    {"MatrixSetDiagV3", 0, 0, REF_ANY, sdiag_cases, set_diag_compute},
    {"MatrixBandPart", 0, 0, REF_ANY, band_cases, band_compute},
    {"Cholesky", 1e-4, 1e-5, REF_ANY, cholesky_cases, cholesky_compute},
    {"MatrixInverse", 1e-4, 1e-5, REF_ANY, lu_cases, lu_family_compute},
    {"MatrixDeterminant", 1e-4, 1e-5, REF_ANY, lu_cases, lu_family_compute},
    {"LogMatrixDeterminant", 1e-4, 1e-5, REF_ANY, lu_cases,
     lu_family_compute},
    {"MatrixSolve", 1e-4, 1e-5, REF_ANY, solve_cases, lu_family_compute},
    {"MatrixTriangularSolve", 1e-4, 1e-5, REF_ANY, trisolve_cases,
     trisolve_compute},
    /* Values and reconstructions: Jacobi is backward stable to a few
     * ulps per sweep, as Qr is per reflection. */
    {"Svd", 1e-5, 1e-4, REF_ANY, svd_cases, svd_compute},
    {"SelfAdjointEigV2", 1e-5, 1e-4, REF_ANY, eig_cases, eig_compute},
    {.op = NULL},
};

const struct ref_check ref_checks_linalg[] = {
    {"Qr", qr_check},
    {"Svd", svd_check},
    {"SelfAdjointEigV2", eig_check},
    {.op = NULL},
};
