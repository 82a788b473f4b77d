/* Float64 references of the rnn family (kernels/rnn.c): CudnnRNNV3 and
 * CudnnRNNBackpropV3 for one unidirectional LSTM layer, cuDNN's params
 * layout (W [4 units, input_size], R [4 units, units], gate order i, f, c,
 * o, then input and recurrent biases) and sequence lengths (past its
 * length a sequence's output is zero and its state passes through).
 *
 * The reserve space is the plugin's own, and its backprop reads it: per row
 * (b, t) of the input's layout, the four gates after their activations,
 * the cell state and h before the step, in three planes. The reference
 * writes the same, so the forward cases check it and the backprop cases
 * hand the kernel a reserve space it can use. The backprop reference
 * computes everything again from the inputs (backpropagation through time
 * from scratch) and reads none of it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

#define GATES 4
#define RESERVE_PER_UNIT (GATES + 2)

struct lstm_geometry {
  bool time_major;
  int64_t steps, batch, input_size, units;
  int64_t row_b, row_t, rows;
  int64_t r_offset, bias_offset, params;
};

static bool lstm_geometry_of(const struct ref_case *c, struct lstm_geometry *g,
                             char *error, int error_len)
{
  const struct ref_tensor *x = &c->inputs[0], *h = &c->inputs[1];
  const struct ref_tensor *cc = &c->inputs[2], *p = &c->inputs[3];
  const struct ref_tensor *len = &c->inputs[4];
  memset(g, 0, sizeof(*g));
  g->time_major = ref_case_attr_bool_or(c, "time_major", true);
  if (strcmp(ref_case_attr_string_or(c, "rnn_mode", "lstm"), "lstm") != 0) {
    snprintf(error, (size_t)error_len, "only LSTMs");
    return false;
  }
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
  if (cc->rank != 3 || memcmp(cc->dims, h->dims, sizeof(int64_t) * 3) != 0) {
    snprintf(error, (size_t)error_len, "input_c must have input_h's shape");
    return false;
  }
  int64_t u = g->units;
  g->rows = g->steps * g->batch;
  g->row_b = g->time_major ? 1 : g->steps;
  g->row_t = g->time_major ? g->batch : 1;
  g->r_offset = GATES * u * g->input_size;
  g->bias_offset = g->r_offset + GATES * u * u;
  g->params = g->bias_offset + 2 * GATES * u;
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

/* The four gate pre-activations of unit j for input row x and state h. */
static void lstm_pre(const struct lstm_geometry *g, const double *p,
                     const double *x, const double *h, int64_t j,
                     double pre[GATES])
{
  int64_t u = g->units;
  for (int q = 0; q < GATES; q++) {
    int64_t gate_row = q * u + j;
    double sum =
        p[g->bias_offset + gate_row] + p[g->bias_offset + GATES * u + gate_row];
    for (int64_t i = 0; i < g->input_size; i++)
      sum += x[i] * p[gate_row * g->input_size + i];
    for (int64_t k = 0; k < u; k++)
      sum += h[k] * p[g->r_offset + gate_row * u + k];
    pre[q] = sum;
  }
}

/* Runs the layer; output [rows, units], h and c [batch, units] (the final
 * state), reserve as kernels/rnn.cl lays it out. */
static void lstm_forward(const struct ref_case *c,
                         const struct lstm_geometry *g, double *output,
                         double *h, double *cell_state, double *reserve)
{
  const double *x = c->inputs[0].v, *p = c->inputs[3].v;
  const double *len = c->inputs[4].v;
  int64_t u = g->units;
  double *gates = reserve, *cells = reserve + g->rows * GATES * u;
  double *before = cells + g->rows * u;
  memcpy(h, c->inputs[1].v, (size_t)(g->batch * u) * sizeof(double));
  memcpy(cell_state, c->inputs[2].v, (size_t)(g->batch * u) * sizeof(double));
  double *h_new = calloc((size_t)(u > 0 ? u : 1), sizeof(double));
  for (int64_t t = 0; t < g->steps; t++) {
    for (int64_t b = 0; b < g->batch; b++) {
      int64_t row = b * g->row_b + t * g->row_t;
      double *hb = h + b * u, *cb = cell_state + b * u;
      memcpy(before + row * u, hb, (size_t)u * sizeof(double));
      bool runs = t < (int64_t)len[b];
      for (int64_t j = 0; j < u; j++) {
        double *gate = gates + row * GATES * u + j;
        if (!runs) {
          for (int q = 0; q < GATES; q++)
            gate[q * u] = 0.0;
          output[row * u + j] = 0.0;
          h_new[j] = hb[j];
          continue;
        }
        double pre[GATES];
        lstm_pre(g, p, x + row * g->input_size, hb, j, pre);
        gate[0] = sigmoid(pre[0]);
        gate[u] = sigmoid(pre[1]);
        gate[2 * u] = tanh(pre[2]);
        gate[3 * u] = sigmoid(pre[3]);
        /* c's update waits for the row: h of every unit feeds every gate. */
        h_new[j] = gate[3 * u] * tanh(gate[u] * cb[j] + gate[0] * gate[2 * u]);
        output[row * u + j] = h_new[j];
      }
      for (int64_t j = 0; j < u; j++) {
        const double *gate = gates + row * GATES * u + j;
        if (runs)
          cb[j] = gate[u] * cb[j] + gate[0] * gate[2 * u];
        cells[row * u + j] = cb[j];
      }
      memcpy(hb, h_new, (size_t)u * sizeof(double));
    }
  }
  free(h_new);
}

static int lstm_outputs_alloc(const struct ref_case *c,
                              const struct lstm_geometry *g,
                              struct ref_tensor *out)
{
  const struct ref_tensor *x = &c->inputs[0], *h = &c->inputs[1];
  int64_t out_dims[3] = {x->dims[0], x->dims[1], g->units};
  int64_t reserve_dims[1] = {g->rows * RESERVE_PER_UNIT * g->units};
  int64_t no_dims[1] = {0};
  ref_tensor_alloc(&out[0], TF_FLOAT, out_dims, 3);
  ref_tensor_alloc(&out[1], TF_FLOAT, h->dims, 3);
  ref_tensor_alloc(&out[2], TF_FLOAT, h->dims, 3);
  ref_tensor_alloc(&out[3], TF_FLOAT, reserve_dims, 1);
  ref_tensor_alloc(&out[4], TF_INT8, no_dims, 1);
  return 5;
}

static int cudnn_rnn_compute(const struct ref_case *c, struct ref_tensor *out,
                             char *error, int error_len)
{
  struct lstm_geometry g;
  if (!lstm_geometry_of(c, &g, error, error_len))
    return -1;
  int n = lstm_outputs_alloc(c, &g, out);
  lstm_forward(c, &g, out[0].v, out[1].v, out[2].v, out[3].v);
  return n;
}

/* Backpropagation through time, from the inputs alone. */
static int cudnn_rnn_backprop_compute(const struct ref_case *c,
                                      struct ref_tensor *out, char *error,
                                      int error_len)
{
  struct lstm_geometry g;
  if (!lstm_geometry_of(c, &g, error, error_len))
    return -1;
  int64_t u = g.units, in = g.input_size;
  struct ref_tensor fwd[5];
  lstm_outputs_alloc(c, &g, fwd);
  lstm_forward(c, &g, fwd[0].v, fwd[1].v, fwd[2].v, fwd[3].v);
  const double *gates = fwd[3].v, *cells = gates + g.rows * GATES * u;
  const double *before = cells + g.rows * u;
  const double *x = c->inputs[0].v, *p = c->inputs[3].v;
  const double *len = c->inputs[4].v, *dout = c->inputs[8].v;

  ref_tensor_alloc(&out[0], TF_FLOAT, c->inputs[0].dims, 3);
  ref_tensor_alloc(&out[1], TF_FLOAT, c->inputs[1].dims, 3);
  ref_tensor_alloc(&out[2], TF_FLOAT, c->inputs[2].dims, 3);
  ref_tensor_alloc(&out[3], TF_FLOAT, c->inputs[3].dims, 1);
  double *dx = out[0].v, *dh = out[1].v, *dc = out[2].v, *dp = out[3].v;
  memset(dx, 0, (size_t)c->inputs[0].elements * sizeof(double));
  memset(dp, 0, (size_t)g.params * sizeof(double));
  memcpy(dh, c->inputs[9].v, (size_t)(g.batch * u) * sizeof(double));
  memcpy(dc, c->inputs[10].v, (size_t)(g.batch * u) * sizeof(double));
  double *dpre =
      calloc((size_t)(GATES * u > 0 ? GATES * u : 1), sizeof(double));
  for (int64_t t = g.steps - 1; t >= 0; t--) {
    for (int64_t b = 0; b < g.batch; b++) {
      if (t >= (int64_t)len[b])
        continue; /* the gradients pass through */
      int64_t row = b * g.row_b + t * g.row_t;
      for (int64_t j = 0; j < u; j++) {
        const double *gate = gates + row * GATES * u + j;
        double cp =
            t == 0 ? c->inputs[2].v[b * u + j] : cells[(row - g.row_t) * u + j];
        double tc = tanh(cells[row * u + j]);
        double dh_total = dout[row * u + j] + dh[b * u + j];
        double dc_total =
            dc[b * u + j] + dh_total * gate[3 * u] * (1.0 - tc * tc);
        dpre[j] = dc_total * gate[2 * u] * gate[0] * (1.0 - gate[0]);
        dpre[u + j] = dc_total * cp * gate[u] * (1.0 - gate[u]);
        dpre[2 * u + j] =
            dc_total * gate[0] * (1.0 - gate[2 * u] * gate[2 * u]);
        dpre[3 * u + j] = dh_total * tc * gate[3 * u] * (1.0 - gate[3 * u]);
        dc[b * u + j] = dc_total * gate[u];
      }
      for (int64_t k = 0; k < u; k++) {
        double sum = 0.0;
        for (int64_t q = 0; q < GATES * u; q++)
          sum += dpre[q] * p[g.r_offset + q * u + k];
        dh[b * u + k] = sum;
      }
      for (int64_t q = 0; q < GATES * u; q++) {
        for (int64_t i = 0; i < in; i++) {
          dx[row * in + i] += dpre[q] * p[q * in + i];
          dp[q * in + i] += dpre[q] * x[row * in + i];
        }
        for (int64_t k = 0; k < u; k++)
          dp[g.r_offset + q * u + k] += dpre[q] * before[row * u + k];
        dp[g.bias_offset + q] += dpre[q];
        dp[g.bias_offset + GATES * u + q] += dpre[q];
      }
    }
  }
  free(dpre);
  for (int i = 0; i < 5; i++)
    ref_tensor_finish(&fwd[i]);
  return 4;
}

/* ---- Cases ------------------------------------------------------------- */

struct lstm_case_shape {
  int64_t batch, steps, input_size, units;
  bool time_major;
  /* Lengths per batch row, or none: every sequence `steps` long. */
  const int64_t *lengths;
};

/* Adds the forward op's inputs; weights small enough that the gates are
 * not all saturated (their gradients would be zero). */
static void lstm_case_inputs(struct ref_case *c,
                             const struct lstm_case_shape *s)
{
  int64_t u = s->units;
  int64_t x_dims[3] = {s->time_major ? s->steps : s->batch,
                       s->time_major ? s->batch : s->steps, s->input_size};
  int64_t state_dims[3] = {s->time_major ? 1 : s->batch,
                           s->time_major ? s->batch : 1, u};
  int64_t params = GATES * u * (s->input_size + u + 2);
  ref_case_attr_bool(c, "time_major", s->time_major);
  ref_case_input(c, TF_FLOAT, x_dims, 3, REF_ANY);
  ref_case_input(c, TF_FLOAT, state_dims, 3, REF_ANY);
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

static const struct lstm_case_shape lstm_shapes[] = {
    {3, 5, 4, 6, false, NULL},           {3, 5, 4, 6, true, NULL},
    {6, 7, 3, 5, false, ragged_lengths}, {6, 7, 3, 5, true, ragged_lengths},
    {2, 1, 3, 3, false, NULL},           {17, 9, 33, 20, false, NULL},
    {2, 0, 3, 4, false, NULL},           {0, 4, 3, 4, true, NULL},
};

static void cudnn_rnn_cases(const struct ref_op *op, TF_DataType dtype,
                            struct ref_cases *out)
{
  (void)dtype;
  for (size_t i = 0; i < sizeof(lstm_shapes) / sizeof(lstm_shapes[0]); i++) {
    const struct lstm_case_shape *s = &lstm_shapes[i];
    struct ref_case *c =
        ref_case_add(out, op->op, "%s b%lld t%lld i%lld u%lld %s%s", op->op,
                     (long long)s->batch, (long long)s->steps,
                     (long long)s->input_size, (long long)s->units,
                     s->time_major ? "time-major" : "batch-major",
                     s->lengths ? " ragged" : "");
    lstm_case_inputs(c, s);
  }
  /* A length past the steps, a params buffer of the wrong size, two
   * layers, and a mode tfocl lacks. */
  static const int64_t too_long[] = {2, 6};
  struct ref_case *c = ref_case_add(out, op->op, "%s length > steps", op->op);
  lstm_case_inputs(c, &(struct lstm_case_shape){2, 5, 3, 4, false, too_long});
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
  ref_case_input(c, TF_FLOAT, (int64_t[]){GATES * 5 * (4 + 5 + 2)}, 1, REF_ANY);
  ref_case_input_values(c, TF_INT32, (int64_t[]){2}, 1, (double[]){3, 3});
  c->expect_code = TF_UNIMPLEMENTED;
  c = ref_case_add(out, op->op, "%s gru", op->op);
  ref_case_attr_string(c, "rnn_mode", "gru");
  lstm_case_inputs(c, &lstm_shapes[0]);
  c->expect_code = TF_UNIMPLEMENTED;
}

static void cudnn_rnn_backprop_cases(const struct ref_op *op, TF_DataType dtype,
                                     struct ref_cases *out)
{
  (void)dtype;
  for (size_t i = 0; i < sizeof(lstm_shapes) / sizeof(lstm_shapes[0]); i++) {
    const struct lstm_case_shape *s = &lstm_shapes[i];
    struct ref_case *c =
        ref_case_add(out, op->op, "%s b%lld t%lld i%lld u%lld %s%s", op->op,
                     (long long)s->batch, (long long)s->steps,
                     (long long)s->input_size, (long long)s->units,
                     s->time_major ? "time-major" : "batch-major",
                     s->lengths ? " ragged" : "");
    lstm_case_inputs(c, s);
    /* output, output_h, output_c and the reserve space from the forward
     * reference; random gradients of the three outputs. */
    struct lstm_geometry g;
    char error[128];
    struct ref_tensor fwd[5];
    if (!lstm_geometry_of(c, &g, error, (int)sizeof(error)))
      continue;
    lstm_outputs_alloc(c, &g, fwd);
    lstm_forward(c, &g, fwd[0].v, fwd[1].v, fwd[2].v, fwd[3].v);
    for (int t = 0; t < 3; t++) {
      for (int64_t e = 0; e < fwd[t].elements; e++)
        fwd[t].v[e] = ref_round_to(TF_FLOAT, fwd[t].v[e]);
      ref_case_input_values(c, TF_FLOAT, fwd[t].dims, fwd[t].rank, fwd[t].v);
    }
    for (int t = 0; t < 3; t++)
      ref_case_input(c, TF_FLOAT, fwd[t].dims, fwd[t].rank, REF_ANY);
    for (int64_t e = 0; e < fwd[3].elements; e++)
      fwd[3].v[e] = ref_round_to(TF_FLOAT, fwd[3].v[e]);
    ref_case_input_values(c, TF_FLOAT, fwd[3].dims, 1, fwd[3].v);
    ref_case_input_values(c, TF_INT8, fwd[4].dims, 1, NULL);
    for (int t = 0; t < 5; t++)
      ref_tensor_finish(&fwd[t]);
  }
}

const struct ref_op ref_ops_rnn[] = {
    {"CudnnRNNV3", 1e-4, 1e-5, REF_ANY, cudnn_rnn_cases, cudnn_rnn_compute},
    {"CudnnRNNBackpropV3", 1e-4, 1e-4, REF_ANY, cudnn_rnn_backprop_cases,
     cudnn_rnn_backprop_compute},
    {.op = NULL},
};
