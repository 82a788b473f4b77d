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
  double pad = c->inputs[2].v[0];
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
        out[0].v[o++] = j >= 0 && j < len ? a->v[(b * m + row) * n + col]
                                          : pad;
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
  double pad = 7;
  ref_case_input_values(c, dtype, NULL, 0, &pad);
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

const struct ref_op ref_ops_linalg[] = {
    {"Qr", 1e-5, 1e-4, REF_ANY, qr_cases, qr_compute},
    {"MatrixDiagPartV3", 0, 0, REF_ANY, diag_cases, diag_compute},
    {.op = NULL},
};

const struct ref_check ref_checks_linalg[] = {
    {"Qr", qr_check},
    {.op = NULL},
};
