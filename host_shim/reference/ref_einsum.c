/* Reference of Einsum: the sum over every label the output drops of the
 * operands' products, element by element in float64, from the equation
 * alone (no GEMM, no transposes): an implementation unlike the plugin's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

#define MAX_AXES 16
#define NUM_LABELS 128 /* a char per label; '0' + k for the k-th ellipsis dim */

struct parsed {
  int n;
  char in[2][MAX_AXES + 1];
  char out[MAX_AXES + 1];
};

/* Expands "..." of `s` for a tensor of `rank` into the labels '0'.. of the
 * last `bcast` broadcast dims (aligned right against `max_bcast`). */
static bool expand(const char *s, int rank, int max_bcast, char *dst,
                   int *bcast_out)
{
  const char *dots = strstr(s, "...");
  int named = (int)strlen(s) - (dots ? 3 : 0);
  int bcast = dots ? rank - named : 0;
  if (bcast < 0 || (!dots && named != rank) || named + bcast > MAX_AXES)
    return false;
  if (bcast_out)
    *bcast_out = bcast;
  int n = 0;
  for (const char *p = s; *p;) {
    if (p == dots) {
      for (int e = 0; e < bcast; e++)
        dst[n++] = (char)('0' + (max_bcast - bcast) + e);
      p += 3;
    } else {
      dst[n++] = *p++;
    }
  }
  dst[n] = '\0';
  return true;
}

static int einsum_compute(const struct ref_case *c, struct ref_tensor *out,
                          char *error, int error_len)
{
  const char *eq = ref_case_attr_string_or(c, "equation", "");
  const char *arrow = strstr(eq, "->");
  char lhs[64], rhs[64], sub[2][64];
  if (arrow == NULL || (size_t)(arrow - eq) >= sizeof(lhs)) {
    snprintf(error, (size_t)error_len, "no ->");
    return -1;
  }
  memcpy(lhs, eq, (size_t)(arrow - eq));
  lhs[arrow - eq] = '\0';
  snprintf(rhs, sizeof(rhs), "%s", arrow + 2);
  char *comma = strchr(lhs, ',');
  int n = comma ? 2 : 1;
  if (n != c->num_inputs) {
    snprintf(error, (size_t)error_len, "inputs");
    return -1;
  }
  if (comma)
    *comma = '\0';
  snprintf(sub[0], sizeof(sub[0]), "%s", lhs);
  if (comma)
    snprintf(sub[1], sizeof(sub[1]), "%s", comma + 1);

  int max_bcast = 0;
  for (int i = 0; i < n; i++) {
    const char *dots = strstr(sub[i], "...");
    int named = (int)strlen(sub[i]) - (dots ? 3 : 0);
    int b = c->inputs[i].rank - named;
    if (dots && b > max_bcast)
      max_bcast = b;
  }
  char in[2][MAX_AXES + 1], outl[MAX_AXES + 1];
  for (int i = 0; i < n; i++)
    if (!expand(sub[i], c->inputs[i].rank, max_bcast, in[i], NULL)) {
      snprintf(error, (size_t)error_len, "rank of input %d", i);
      return -1;
    }
  if (strstr(rhs, "...") &&
      !expand(rhs, (int)strlen(rhs) - 3 + max_bcast, max_bcast, outl, NULL)) {
    snprintf(error, (size_t)error_len, "output");
    return -1;
  }
  if (!strstr(rhs, "...")) {
    if (max_bcast > 0) {
      snprintf(error, (size_t)error_len, "no ellipsis in the output");
      return -1;
    }
    snprintf(outl, sizeof(outl), "%s", rhs);
  }

  /* Label sizes; broadcast (digit) labels take the larger of 1 and n. */
  int64_t size[NUM_LABELS];
  bool seen[NUM_LABELS] = {false};
  for (int i = 0; i < n; i++)
    for (int a = 0; in[i][a]; a++) {
      int l = (unsigned char)in[i][a];
      int64_t d = c->inputs[i].dims[a];
      if (!seen[l] || (l < 'A' && size[l] == 1))
        size[l] = d;
      else if (size[l] != d && !(l < 'A' && d == 1)) {
        snprintf(error, (size_t)error_len, "dimension of '%c'", l);
        return -1;
      }
      seen[l] = true;
    }
  int64_t out_dims[MAX_AXES];
  int out_rank = (int)strlen(outl);
  for (int a = 0; a < out_rank; a++) {
    int l = (unsigned char)outl[a];
    if (!seen[l]) {
      snprintf(error, (size_t)error_len, "output label '%c'", l);
      return -1;
    }
    out_dims[a] = size[l];
  }
  /* The labels the output drops: summed. */
  char summed[NUM_LABELS];
  int nsum = 0;
  for (int l = 0; l < NUM_LABELS; l++)
    if (seen[l] && !strchr(outl, l))
      summed[nsum++] = (char)l;
  if (!ref_tensor_alloc(&out[0], c->inputs[0].dtype, out_dims, out_rank)) {
    snprintf(error, (size_t)error_len, "out of memory");
    return -1;
  }
  int64_t sum_count = 1;
  for (int s = 0; s < nsum; s++)
    sum_count *= size[(unsigned char)summed[s]];

  int64_t value[NUM_LABELS];
  for (int64_t o = 0; o < out[0].elements; o++) {
    int64_t rest = o;
    for (int a = out_rank - 1; a >= 0; a--) {
      value[(unsigned char)outl[a]] = rest % out_dims[a];
      rest /= out_dims[a];
    }
    double acc = 0;
    for (int64_t r = 0; r < sum_count; r++) {
      int64_t rr = r;
      for (int s = nsum - 1; s >= 0; s--) {
        int l = (unsigned char)summed[s];
        value[l] = rr % size[l];
        rr /= size[l];
      }
      double prod = 1;
      for (int i = 0; i < n; i++) {
        const struct ref_tensor *t = &c->inputs[i];
        int64_t off = 0;
        for (int a = 0; a < t->rank; a++) {
          int64_t v = t->dims[a] == 1 ? 0 : value[(unsigned char)in[i][a]];
          off = off * t->dims[a] + v;
        }
        prod *= t->v[off];
      }
      acc += prod;
    }
    out[0].v[o] = ref_round_to(out[0].dtype, acc);
  }
  return 1;
}

#define D(...) ((const int64_t[]){__VA_ARGS__}), \
               (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static struct ref_case *einsum_case(struct ref_cases *out, TF_DataType dtype,
                                    const char *eq, const int64_t *a,
                                    int a_rank, const int64_t *b, int b_rank,
                                    TF_Code expect)
{
  struct ref_case *c = ref_case_add(out, "Einsum", "Einsum %s", eq);
  ref_case_input(c, dtype, a, a_rank, REF_ANY);
  if (b != NULL)
    ref_case_input(c, dtype, b, b_rank, REF_ANY);
  ref_case_attr_string(c, "equation", eq);
  ref_case_attr_int(c, "N", b != NULL ? 2 : 1);
  c->expect_code = expect;
  return c;
}

static void einsum_cases(const struct ref_op *op, TF_DataType dtype,
                         struct ref_cases *out)
{
  (void)op;
  const TF_Code ok = TF_OK, bad = TF_INVALID_ARGUMENT;
  /* Keras' MultiHeadAttention and EinsumDense. */
  einsum_case(out, dtype, "aecd,abcd->acbe", D(2, 7, 3, 5), D(2, 6, 3, 5), ok);
  einsum_case(out, dtype, "acbe,aecd->abcd", D(2, 3, 6, 7), D(2, 7, 3, 5), ok);
  einsum_case(out, dtype, "abc,cde->abde", D(2, 6, 9), D(9, 3, 5), ok);
  einsum_case(out, dtype, "abcd,cde->abe", D(2, 6, 3, 5), D(3, 5, 9), ok);
  /* Their gradients' equations. */
  einsum_case(out, dtype, "abde,cde->abc", D(2, 6, 3, 5), D(9, 3, 5), ok);
  einsum_case(out, dtype, "abde,abc->cde", D(2, 6, 3, 5), D(2, 6, 9), ok);
  einsum_case(out, dtype, "acbe,abcd->aecd", D(2, 3, 6, 7), D(2, 6, 3, 5), ok);
  /* Its operands swapped (TensorFlow's gradients write both): neither
   * product's labels are the output's, so the product goes through a temp
   * and a gather; heads of 5 and of 20 (a CPU device's rows). */
  einsum_case(out, dtype, "abcd,acbe->aecd", D(2, 6, 3, 5), D(2, 3, 6, 7), ok);
  einsum_case(out, dtype, "abcd,acbe->aecd", D(2, 6, 3, 20), D(2, 3, 6, 7), ok);
  /* Plain products, each transpose, a product written to a swapped
   * output, batches and a shared operand. */
  /* Operands of 5 strided dims after merging (the general gather, past
   * the 4 of einsum_gather4), and a gather that also sums a label. */
  einsum_case(out, dtype, "abcde,aecdb->ab", D(2, 3, 2, 3, 2), D(2, 2, 2, 3, 3),
              ok);
  einsum_case(out, dtype, "abcdef,afcb->ad", D(2, 3, 2, 2, 2, 3), D(2, 3, 2, 3),
              ok);
  einsum_case(out, dtype, "ij,jk->ik", D(33, 17), D(17, 29), ok);
  einsum_case(out, dtype, "ji,jk->ik", D(17, 33), D(17, 29), ok);
  einsum_case(out, dtype, "ij,kj->ik", D(33, 17), D(29, 17), ok);
  einsum_case(out, dtype, "ij,jk->ki", D(33, 17), D(17, 29), ok);
  einsum_case(out, dtype, "bij,bjk->bik", D(3, 9, 7), D(3, 7, 5), ok);
  einsum_case(out, dtype, "bij,jk->bik", D(3, 9, 7), D(7, 5), ok);
  einsum_case(out, dtype, "ij,bjk->bki", D(9, 7), D(3, 7, 5), ok);
  /* Outer product, dot product, reduce labels, a diagonal. */
  einsum_case(out, dtype, "i,j->ij", D(7), D(5), ok);
  einsum_case(out, dtype, "i,i->", D(19), D(19), ok);
  einsum_case(out, dtype, "ijk,jl->il", D(4, 5, 6), D(5, 3), ok);
  einsum_case(out, dtype, "ii,ij->ij", D(4, 4), D(4, 5), ok);
  /* The ellipsis, broadcast batch dims. */
  einsum_case(out, dtype, "...ij,...jk->...ik", D(2, 3, 4, 5), D(3, 5, 6), ok);
  einsum_case(out, dtype, "...ij,...jk->...ik", D(2, 1, 4, 5), D(3, 5, 6), ok);
  einsum_case(out, dtype, "...j,jk->...k", D(2, 3, 5), D(5, 4), ok);
  /* One operand: a transpose, a sum, a trace, the input itself. */
  einsum_case(out, dtype, "ijk->kij", D(3, 4, 5), NULL, 0, ok);
  /* A CPU device copies rows of a contiguous innermost dim (16 or more),
   * in spans of 4096 elements at most: heads of 20, rows of two spans. */
  einsum_case(out, dtype, "aecd,abcd->acbe", D(2, 7, 3, 20), D(2, 6, 3, 20),
              ok);
  einsum_case(out, dtype, "ijk->jik", D(2, 3, 4100), NULL, 0, ok);
  /* ... and transposes in 8 x 8 tiles where the innermost dim strides:
   * keys of 12 (a whole tile and part of one) by heads of 20 (two and a
   * part), and a one-operand transpose whose contiguous dim is not the
   * one before the innermost. */
  einsum_case(out, dtype, "aecd,abcd->acbe", D(2, 12, 3, 20), D(2, 9, 3, 20),
              ok);
  einsum_case(out, dtype, "ijk->kji", D(10, 3, 12), NULL, 0, ok);
  einsum_case(out, dtype, "ijk->j", D(3, 4, 5), NULL, 0, ok);
  einsum_case(out, dtype, "ii->", D(6, 6), NULL, 0, ok);
  einsum_case(out, dtype, "ij->ij", D(3, 4), NULL, 0, ok);
  einsum_case(out, dtype, "...->...", D(2, 3), NULL, 0, ok);
  /* Empty: zero batch, zero contraction (zeros). */
  einsum_case(out, dtype, "bij,bjk->bik", D(0, 3, 4), D(0, 4, 5), ok);
  einsum_case(out, dtype, "ij,jk->ik", D(3, 0), D(0, 4), ok);
  /* Rejected: a rank that does not fit, a size mismatch, broadcast dims
   * without an ellipsis in the output. */
  einsum_case(out, dtype, "ij,jk->ik", D(3, 4, 5), D(4, 5), bad);
  einsum_case(out, dtype, "ij,jk->ik", D(3, 4), D(5, 6), bad);
  einsum_case(out, dtype, "...ij,jk->ik", D(2, 3, 4), D(4, 5), bad);
}

const struct ref_op ref_ops_einsum[] = {
    {"Einsum", 1e-5, 1e-5, REF_ANY, einsum_cases, einsum_compute},
    {.op = NULL},
};
