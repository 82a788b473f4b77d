/* Float64 references of the rnn family (kernels/rnn.c): CudnnRNNV3 and
 * CudnnRNNBackpropV3 for one unidirectional LSTM or GRU layer, cuDNN's
 * params layout (W [gates * units, input_size], R [gates * units, units],
 * gate order LSTM i, f, c, o and GRU r, z, n, then input and recurrent
 * biases) and sequence lengths (past its length a sequence's output is zero
 * and its state passes through).
 *
 * The reserve space is the plugin's own, and its backprop reads it: per row
 * (b, t) of the input's layout, a plane of 4 values per unit (the LSTM's
 * gates after their activations; the GRU's r, z, n and R_n h + b_Rn), the
 * LSTM's cell state, and h before the step. The reference writes the same,
 * so the forward cases check it and the backprop cases hand the kernel a
 * reserve space it can use. The backprop reference computes everything
 * again from the inputs (backpropagation through time from scratch) and
 * reads none of it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

#define PLANE 4 /* values per unit in the reserve's gate plane */
#define MAX_GATES 4

struct rnn_geometry {
  bool time_major;
  bool gru;
  int gates; /* 4 or 3 */
  int64_t reserve_per_unit, before_plane;
  int64_t steps, batch, input_size, units;
  int64_t row_b, row_t, rows;
  int64_t r_offset, bias_offset, params;
};

static bool rnn_geometry_of(const struct ref_case *c, struct rnn_geometry *g,
                            char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *h = &c->inputs[1];
  const struct ref_tensor *cc = &c->inputs[2], *p = &c->inputs[3];
  const struct ref_tensor *len = &c->inputs[4];
  memset(g, 0, sizeof(*g));
  g->time_major = ref_case_attr_bool_or(c, "time_major", true);
  const char *mode = ref_case_attr_string_or(c, "rnn_mode", "lstm");
  g->gru = strcmp(mode, "gru") == 0;
  if (!g->gru && strcmp(mode, "lstm") != 0) {
    snprintf(error, (size_t)error_len, "only LSTMs and GRUs");
    return false;
  }
  g->gates = g->gru ? 3 : 4;
  if (x->rank != 3 || h->rank != 3) {
    snprintf(error, (size_t)error_len, "input and input_h must be 3-D");
    return false;
  }
  g->steps = x->dims[g->time_major ? 0 : 1];
  g->batch = x->dims[g->time_major ? 1 : 0];
  g->input_size = x->dims[2];
  g->units = h->dims[2];
  if (h->dims[g->time_major ? 0 : 1] != 1 ||
      h->dims[g->time_major ? 1 : 0] != g->batch) {
    snprintf(error, (size_t)error_len, "one layer of the input's batch");
    return false;
  }
  if (!g->gru &&
      (cc->rank != 3 || memcmp(cc->dims, h->dims, sizeof(int64_t) * 3) != 0)) {
    snprintf(error, (size_t)error_len, "input_c must have input_h's shape");
    return false;
  }
  int64_t u = g->units, gu = g->gates * u;
  g->rows = g->steps * g->batch;
  g->row_b = g->time_major ? 1 : g->steps;
  g->row_t = g->time_major ? g->batch : 1;
  g->r_offset = gu * g->input_size;
  g->bias_offset = g->r_offset + gu * u;
  g->params = g->bias_offset + 2 * gu;
  g->reserve_per_unit = PLANE + (g->gru ? 1 : 2);
  g->before_plane = g->rows * u * (PLANE + (g->gru ? 0 : 1));
  if (p->elements != g->params) {
    snprintf(error, (size_t)error_len, "params has %lld elements, not %lld",
             (long long)p->elements, (long long)g->params);
    return false;
  }
  if (len->rank != 1 || len->dims[0] != g->batch) {
    snprintf(error, (size_t)error_len, "sequence_lengths of the batch size");
    return false;
  }
  for (int64_t b = 0; b < g->batch; b++) {
    if (len->v[b] < 0 || len->v[b] > (double)g->steps) {
      snprintf(error, (size_t)error_len, "sequence_lengths[%lld] = %g",
               (long long)b, len->v[b]);
      return false;
    }
  }
  return true;
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Unit j's gate sums for input row x and state h, apart: x W + b_W (input)
 * and h R + b_R (recurrent); the GRU's n needs them apart. */
static void rnn_sums(const struct rnn_geometry *g, const double *p,
                     const double *x, const double *h, int64_t j,
                     double input[MAX_GATES], double recurrent[MAX_GATES])
{
  int64_t u = g->units;
  for (int q = 0; q < g->gates; q++) {
    int64_t gate_row = q * u + j;
    double in = p[g->bias_offset + gate_row];
    double rec = p[g->bias_offset + g->gates * u + gate_row];
    for (int64_t i = 0; i < g->input_size; i++)
      in += x[i] * p[gate_row * g->input_size + i];
    for (int64_t k = 0; k < u; k++)
      rec += h[k] * p[g->r_offset + gate_row * u + k];
    input[q] = in;
    recurrent[q] = rec;
  }
}

/* Runs the layer; output [rows, units], h and c [batch, units] (the final
 * state; c unused by a GRU), reserve as kernels/rnn.cl lays it out. */
static void rnn_forward(const struct ref_case *c, const struct rnn_geometry *g,
                        double *output, double *h, double *cell_state,
                        double *reserve)
{
  const double *x = c->inputs[0].v, *p = c->inputs[3].v;
  const double *len = c->inputs[4].v;
  int64_t u = g->units;
  double *plane = reserve, *cells = reserve + g->rows * PLANE * u;
  double *before = reserve + g->before_plane;
  memcpy(h, c->inputs[1].v, (size_t)(g->batch * u) * sizeof(double));
  if (!g->gru)
    memcpy(cell_state, c->inputs[2].v, (size_t)(g->batch * u) * sizeof(double));
  double *h_new = calloc((size_t)(u > 0 ? u : 1), sizeof(double));
  double *c_new = calloc((size_t)(u > 0 ? u : 1), sizeof(double));
  for (int64_t t = 0; t < g->steps; t++) {
    for (int64_t b = 0; b < g->batch; b++) {
      int64_t row = b * g->row_b + t * g->row_t;
      double *hb = h + b * u, *cb = cell_state + b * u;
      memcpy(before + row * u, hb, (size_t)u * sizeof(double));
      bool runs = t < (int64_t)len[b];
      for (int64_t j = 0; j < u; j++) {
        double *v = plane + row * PLANE * u + j;
        h_new[j] = hb[j];
        c_new[j] = g->gru ? 0.0 : cb[j];
        for (int q = 0; q < PLANE; q++)
          v[q * u] = 0.0;
        output[row * u + j] = 0.0;
        if (!runs)
          continue;
        double in[MAX_GATES], rec[MAX_GATES];
        rnn_sums(g, p, x + row * g->input_size, hb, j, in, rec);
        if (g->gru) {
          v[0] = sigmoid(in[0] + rec[0]);
          v[u] = sigmoid(in[1] + rec[1]);
          v[2 * u] = tanh(in[2] + v[0] * rec[2]);
          v[3 * u] = rec[2];
          h_new[j] = (1.0 - v[u]) * v[2 * u] + v[u] * hb[j];
        } else {
          v[0] = sigmoid(in[0] + rec[0]);
          v[u] = sigmoid(in[1] + rec[1]);
          v[2 * u] = tanh(in[2] + rec[2]);
          v[3 * u] = sigmoid(in[3] + rec[3]);
          c_new[j] = v[u] * cb[j] + v[0] * v[2 * u];
          h_new[j] = v[3 * u] * tanh(c_new[j]);
        }
        output[row * u + j] = h_new[j];
      }
      /* The state changes once the row is done: h of every unit feeds
       * every gate. */
      memcpy(hb, h_new, (size_t)u * sizeof(double));
      if (!g->gru) {
        memcpy(cb, c_new, (size_t)u * sizeof(double));
        memcpy(cells + row * u, c_new, (size_t)u * sizeof(double));
      }
    }
  }
  free(h_new);
  free(c_new);
}

static int rnn_outputs_alloc(const struct ref_case *c,
                             const struct rnn_geometry *g,
                             struct ref_tensor *out)
{
  const struct ref_tensor *x = &c->inputs[0], *h = &c->inputs[1];
  int64_t out_dims[3] = {x->dims[0], x->dims[1], g->units};
  int64_t reserve_dims[1] = {g->rows * g->reserve_per_unit * g->units};
  int64_t no_dims[1] = {0};
  ref_tensor_alloc(&out[0], TF_FLOAT, out_dims, 3);
  ref_tensor_alloc(&out[1], TF_FLOAT, h->dims, 3);
  if (g->gru)
    ref_tensor_alloc(&out[2], TF_FLOAT, no_dims, 0);
  else
    ref_tensor_alloc(&out[2], TF_FLOAT, h->dims, 3);
  ref_tensor_alloc(&out[3], TF_FLOAT, reserve_dims, 1);
  ref_tensor_alloc(&out[4], TF_INT8, no_dims, 0);
  for (int i = 0; i < 5; i++)
    memset(out[i].v, 0, (size_t)out[i].elements * sizeof(double));
  return 5;
}

static int cudnn_rnn_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  struct rnn_geometry g;
  if (!rnn_geometry_of(c, &g, error, error_len))
    return -1;
  int n = rnn_outputs_alloc(c, &g, out);
  /* A GRU's c: a scratch row, its output_c stays the zero scalar. */
  double *cell_state = out[2].v;
  double *scratch = NULL;
  if (g.gru)
    cell_state = scratch =
        calloc((size_t)(g.batch * g.units > 0 ? g.batch * g.units : 1),
               sizeof(double));
  rnn_forward(c, &g, out[0].v, out[1].v, cell_state, out[3].v);
  free(scratch);
  return n;
}

/* Backpropagation through time, from the inputs alone. */
static int cudnn_rnn_backprop_compute(const struct ref_case *c,
                                      struct ref_tensor *out, char *error,
                                      int error_len)
{
  struct rnn_geometry g;
  if (!rnn_geometry_of(c, &g, error, error_len))
    return -1;
  int64_t u = g.units, in = g.input_size, gu = g.gates * u;
  struct ref_tensor fwd[5];
  rnn_outputs_alloc(c, &g, fwd);
  double *cell_state =
      calloc((size_t)(g.batch * u > 0 ? g.batch * u : 1), sizeof(double));
  rnn_forward(c, &g, fwd[0].v, fwd[1].v, cell_state, fwd[3].v);
  free(cell_state);
  const double *plane = fwd[3].v, *cells = plane + g.rows * PLANE * u;
  const double *before = fwd[3].v + g.before_plane;
  const double *x = c->inputs[0].v, *p = c->inputs[3].v;
  const double *len = c->inputs[4].v, *dout = c->inputs[8].v;

  int64_t no_dims[1] = {0};
  ref_tensor_alloc(&out[0], TF_FLOAT, c->inputs[0].dims, 3);
  ref_tensor_alloc(&out[1], TF_FLOAT, c->inputs[1].dims, 3);
  if (g.gru)
    ref_tensor_alloc(&out[2], TF_FLOAT, no_dims, 0);
  else
    ref_tensor_alloc(&out[2], TF_FLOAT, c->inputs[2].dims, 3);
  ref_tensor_alloc(&out[3], TF_FLOAT, c->inputs[3].dims, 1);
  double *dx = out[0].v, *dh = out[1].v, *dc = out[2].v, *dp = out[3].v;
  memset(dx, 0, (size_t)c->inputs[0].elements * sizeof(double));
  memset(dp, 0, (size_t)g.params * sizeof(double));
  memcpy(dh, c->inputs[9].v, (size_t)(g.batch * u) * sizeof(double));
  if (g.gru)
    dc[0] = 0.0;
  else
    memcpy(dc, c->inputs[10].v, (size_t)(g.batch * u) * sizeof(double));
  size_t scratch = (size_t)(gu > 0 ? gu : 1);
  double *d_in = calloc(scratch, sizeof(double));
  double *d_rec = calloc(scratch, sizeof(double));
  double *direct = calloc(scratch, sizeof(double));
  for (int64_t t = g.steps - 1; t >= 0; t--) {
    for (int64_t b = 0; b < g.batch; b++) {
      if (t >= (int64_t)len[b])
        continue; /* the gradients pass through */
      int64_t row = b * g.row_b + t * g.row_t;
      for (int64_t j = 0; j < u; j++) {
        const double *v = plane + row * PLANE * u + j;
        double dh_total = dout[row * u + j] + dh[b * u + j];
        if (g.gru) {
          double hp = before[row * u + j];
          double d_fresh =
              dh_total * (1.0 - v[u]) * (1.0 - v[2 * u] * v[2 * u]);
          d_in[j] = d_rec[j] = d_fresh * v[3 * u] * v[0] * (1.0 - v[0]);
          d_in[u + j] = d_rec[u + j] =
              dh_total * (hp - v[2 * u]) * v[u] * (1.0 - v[u]);
          d_in[2 * u + j] = d_fresh;
          d_rec[2 * u + j] = d_fresh * v[0];
          direct[j] = dh_total * v[u];
          continue;
        }
        double cp =
            t == 0 ? c->inputs[2].v[b * u + j] : cells[(row - g.row_t) * u + j];
        double tc = tanh(cells[row * u + j]);
        double dc_total = dc[b * u + j] + dh_total * v[3 * u] * (1.0 - tc * tc);
        d_in[j] = dc_total * v[2 * u] * v[0] * (1.0 - v[0]);
        d_in[u + j] = dc_total * cp * v[u] * (1.0 - v[u]);
        d_in[2 * u + j] = dc_total * v[0] * (1.0 - v[2 * u] * v[2 * u]);
        d_in[3 * u + j] = dh_total * tc * v[3 * u] * (1.0 - v[3 * u]);
        for (int q = 0; q < 4; q++)
          d_rec[q * u + j] = d_in[q * u + j];
        direct[j] = 0.0;
        dc[b * u + j] = dc_total * v[u];
      }
      for (int64_t k = 0; k < u; k++) {
        double sum = direct[k];
        for (int64_t q = 0; q < gu; q++)
          sum += d_rec[q] * p[g.r_offset + q * u + k];
        dh[b * u + k] = sum;
      }
      for (int64_t q = 0; q < gu; q++) {
        for (int64_t i = 0; i < in; i++) {
          dx[row * in + i] += d_in[q] * p[q * in + i];
          dp[q * in + i] += d_in[q] * x[row * in + i];
        }
        for (int64_t k = 0; k < u; k++)
          dp[g.r_offset + q * u + k] += d_rec[q] * before[row * u + k];
        dp[g.bias_offset + q] += d_in[q];
        dp[g.bias_offset + gu + q] += d_rec[q];
      }
    }
  }
  free(d_in);
  free(d_rec);
  free(direct);
  for (int i = 0; i < 5; i++)
    ref_tensor_finish(&fwd[i]);
  return 4;
}

/* ---- Cases ------------------------------------------------------------- */

struct rnn_case_shape {
  int64_t batch, steps, input_size, units;
  bool time_major;
  /* Lengths per batch row, or none: every sequence `steps` long. */
  const int64_t *lengths;
};

/* Adds the forward op's inputs (a GRU's input_c a scalar, as Keras passes
 * it); weights small enough that the gates are not all saturated (their
 * gradients would be zero). */
static void rnn_case_inputs(struct ref_case *c, bool gru,
                            const struct rnn_case_shape *s)
{
  int64_t u = s->units, gates = gru ? 3 : 4;
  int64_t x_dims[3] = {s->time_major ? s->steps : s->batch,
                       s->time_major ? s->batch : s->steps, s->input_size};
  int64_t state_dims[3] = {s->time_major ? 1 : s->batch,
                           s->time_major ? s->batch : 1, u};
  int64_t params = gates * u * (s->input_size + u + 2);
  ref_case_attr_bool(c, "time_major", s->time_major);
  if (gru)
    ref_case_attr_string(c, "rnn_mode", "gru");
  ref_case_input(c, TF_FLOAT, x_dims, 3, REF_ANY);
  ref_case_input(c, TF_FLOAT, state_dims, 3, REF_ANY);
  if (gru)
    ref_case_input_values(c, TF_FLOAT, state_dims, 0, (double[]){0.0});
  else
    ref_case_input(c, TF_FLOAT, state_dims, 3, REF_ANY);
  struct ref_tensor *p = ref_case_input(c, TF_FLOAT, &params, 1, REF_ANY);
  for (int64_t i = 0; i < p->elements; i++)
    p->v[i] = ref_round_to(TF_FLOAT, p->v[i] / 8.0);
  double lengths[64];
  for (int64_t b = 0; b < s->batch && b < 64; b++)
    lengths[b] = (double)(s->lengths ? s->lengths[b] : s->steps);
  ref_case_input_values(c, TF_INT32, &s->batch, 1, lengths);
}

static const int64_t ragged_lengths[] = {7, 2, 0, 5, 7, 1};

static const struct rnn_case_shape rnn_shapes[] = {
    {3, 5, 4, 6, false, NULL},           {3, 5, 4, 6, true, NULL},
    {6, 7, 3, 5, false, ragged_lengths}, {6, 7, 3, 5, true, ragged_lengths},
    {2, 1, 3, 3, false, NULL},           {17, 9, 33, 20, false, NULL},
    {2, 0, 3, 4, false, NULL},           {0, 4, 3, 4, true, NULL},
};
#define NUM_SHAPES (sizeof(rnn_shapes) / sizeof(rnn_shapes[0]))

static struct ref_case *shape_case(struct ref_cases *out, const char *op,
                                   bool gru, const struct rnn_case_shape *s)
{
  struct ref_case *c =
      ref_case_add(out, op, "%s %s b%lld t%lld i%lld u%lld %s%s", op,
                   gru ? "gru" : "lstm", (long long)s->batch,
                   (long long)s->steps, (long long)s->input_size,
                   (long long)s->units,
                   s->time_major ? "time-major" : "batch-major",
                   s->lengths ? " ragged" : "");
  rnn_case_inputs(c, gru, s);
  return c;
}

static void cudnn_rnn_cases(const struct ref_op *op, TF_DataType dtype,
                            struct ref_cases *out)
{
  (void)dtype;
  for (int gru = 0; gru < 2; gru++)
    for (size_t i = 0; i < NUM_SHAPES; i++)
      shape_case(out, op->op, gru, &rnn_shapes[i]);
  /* A length past the steps, a params buffer of the wrong size, two
   * layers, and a mode tfocl lacks. */
  static const int64_t too_long[] = {2, 6};
  struct ref_case *c = ref_case_add(out, op->op, "%s length > steps", op->op);
  rnn_case_inputs(c, false,
                  &(struct rnn_case_shape){2, 5, 3, 4, false, too_long});
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s params size", op->op);
  ref_case_attr_bool(c, "time_major", false);
  ref_case_input(c, TF_FLOAT, (int64_t[]){2, 3, 4}, 3, REF_ANY);
  ref_case_input(c, TF_FLOAT, (int64_t[]){2, 1, 5}, 3, REF_ANY);
  ref_case_input(c, TF_FLOAT, (int64_t[]){2, 1, 5}, 3, REF_ANY);
  ref_case_input(c, TF_FLOAT, (int64_t[]){100}, 1, REF_ANY);
  ref_case_input_values(c, TF_INT32, (int64_t[]){2}, 1, (double[]){3, 3});
  c->expect_code = TF_INVALID_ARGUMENT;
  c = ref_case_add(out, op->op, "%s two layers", op->op);
  ref_case_attr_bool(c, "time_major", false);
  ref_case_input(c, TF_FLOAT, (int64_t[]){2, 3, 4}, 3, REF_ANY);
  ref_case_input(c, TF_FLOAT, (int64_t[]){2, 2, 5}, 3, REF_ANY);
  ref_case_input(c, TF_FLOAT, (int64_t[]){2, 2, 5}, 3, REF_ANY);
  ref_case_input(c, TF_FLOAT, (int64_t[]){4 * 5 * (4 + 5 + 2)}, 1, REF_ANY);
  ref_case_input_values(c, TF_INT32, (int64_t[]){2}, 1, (double[]){3, 3});
  c->expect_code = TF_UNIMPLEMENTED;
  c = ref_case_add(out, op->op, "%s rnn_tanh", op->op);
  rnn_case_inputs(c, false, &rnn_shapes[0]);
  ref_case_attr_string(c, "rnn_mode", "rnn_tanh");
  c->expect_code = TF_UNIMPLEMENTED;
}

static void cudnn_rnn_backprop_cases(const struct ref_op *op, TF_DataType dtype,
                                     struct ref_cases *out)
{
  (void)dtype;
  for (int gru = 0; gru < 2; gru++) {
    for (size_t i = 0; i < NUM_SHAPES; i++) {
      struct ref_case *c = shape_case(out, op->op, gru, &rnn_shapes[i]);
      /* output, output_h, output_c and the reserve space from the forward
       * reference; random gradients of the three outputs. */
      struct rnn_geometry g;
      char error[128];
      struct ref_tensor fwd[5];
      if (!rnn_geometry_of(c, &g, error, (int)sizeof(error)))
        continue;
      cudnn_rnn_compute(c, fwd, error, (int)sizeof(error));
      for (int t = 0; t < 3; t++)
        ref_case_input_values(c, TF_FLOAT, fwd[t].dims, fwd[t].rank, fwd[t].v);
      for (int t = 0; t < 3; t++)
        ref_case_input(c, TF_FLOAT, fwd[t].dims, fwd[t].rank, REF_ANY);
      ref_case_input_values(c, TF_FLOAT, fwd[3].dims, 1, fwd[3].v);
      ref_case_input_values(c, TF_INT8, fwd[4].dims, 0, fwd[4].v);
      for (int t = 0; t < 5; t++)
        ref_tensor_finish(&fwd[t]);
    }
  }
}

const struct ref_op ref_ops_rnn[] = {
    {"CudnnRNNV3", 1e-4, 1e-5, REF_ANY, cudnn_rnn_cases, cudnn_rnn_compute},
    {"CudnnRNNBackpropV3", 1e-4, 1e-4, REF_ANY, cudnn_rnn_backprop_cases,
     cudnn_rnn_backprop_compute},
    {.op = NULL},
};
