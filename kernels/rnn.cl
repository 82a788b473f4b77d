/* The LSTM and GRU steps of CudnnRNNV3 and CudnnRNNBackpropV3 (rnn.c),
 * float.
 *
 * rnn.c runs the products (x W^T for every step at once, h R^T per step,
 * and the backward pass's) through the matmul family's GEMM; these kernels
 * are what lies between them: one launch per time step, one work-item per
 * (batch row b, unit j), j fastest so that neighbouring work-items touch
 * neighbouring addresses of every operand.
 *
 * Rows of the per-step planes (x W^T, output, the reserve space, the
 * gradients) are in the input's layout: row (b, t) is b * row_b + t * row_t
 * (batch-major: row_b = T, row_t = 1; time-major: row_b = 1, row_t = B).
 * The host passes each plane already offset to step t, so a kernel adds
 * b * row_b rows. LSTM gates are in cuDNN's order i, f, c, o, each `units`
 * wide.
 *
 * An LSTM's reserve space holds per row the four gates after their
 * activations, the cell state and h of the step before: everything the
 * backward pass needs besides the weights. Rows past a sequence's length (t >= lengths[b])
 * are cuDNN's: their output is zero and the state passes through unchanged;
 * `uniform` says every sequence is T long and lengths is not read. */
#include "common.clh"

static inline float rnn_sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

__kernel void lstm_forward_step(
    OCL_TENSOR_ARG(const float, xw), OCL_TENSOR_ARG(const float, hr),
    OCL_TENSOR_ARG(const float, bias), OCL_TENSOR_ARG(const float, h_prev),
    OCL_TENSOR_ARG(const float, c_prev), int c_prev_stride,
    OCL_TENSOR_ARG(const int, lengths), int uniform,
    OCL_TENSOR_ARG(float, h_next), OCL_TENSOR_ARG(float, c_last), int last,
    OCL_TENSOR_ARG(float, output), OCL_TENSOR_ARG(float, gates),
    OCL_TENSOR_ARG(float, cell), OCL_TENSOR_ARG(float, h_before), int batch,
    int units, int row_b, int t)
{
  int i = get_global_id(0);
  OCL_GUARD(i, batch * units);
  int b = i / units;
  int j = i - b * units;
  int row = b * row_b;
  int gate_at = row * 4 * units + j;
  int unit_at = row * units + j;
  __global float *g = OCL_PTR(float, gates);

  float hp = OCL_PTR(const float, h_prev)[i];
  float cp = OCL_PTR(const float, c_prev)[b * c_prev_stride + j];
  OCL_PTR(float, h_before)[unit_at] = hp;
  float h, c;
  if (uniform || t < OCL_PTR(const int, lengths)[b]) {
    __global const float *x = OCL_PTR(const float, xw) + row * 4 * units + j;
    __global const float *r = OCL_PTR(const float, hr) + b * 4 * units + j;
    __global const float *bw = OCL_PTR(const float, bias) + j;
    __global const float *br = bw + 4 * units;
    float in_gate = rnn_sigmoid(x[0] + r[0] + bw[0] + br[0]);
    float forget = rnn_sigmoid(x[units] + r[units] + bw[units] + br[units]);
    float candidate = tanh(x[2 * units] + r[2 * units] + bw[2 * units] +
                           br[2 * units]);
    float out_gate = rnn_sigmoid(x[3 * units] + r[3 * units] + bw[3 * units] +
                                 br[3 * units]);
    c = forget * cp + in_gate * candidate;
    h = out_gate * tanh(c);
    g[gate_at] = in_gate;
    g[gate_at + units] = forget;
    g[gate_at + 2 * units] = candidate;
    g[gate_at + 3 * units] = out_gate;
    OCL_PTR(float, output)[unit_at] = h;
  } else {
    c = cp;
    h = hp;
    g[gate_at] = 0.0f;
    g[gate_at + units] = 0.0f;
    g[gate_at + 2 * units] = 0.0f;
    g[gate_at + 3 * units] = 0.0f;
    OCL_PTR(float, output)[unit_at] = 0.0f;
  }
  OCL_PTR(float, cell)[unit_at] = c;
  OCL_PTR(float, h_next)[i] = h;
  if (last)
    OCL_PTR(float, c_last)[i] = c;
}

/* Step t backwards. dh_carry and dc_carry ([B, units]) hold the gradients
 * of the state leaving step t: output_h's and output_c's at first, passed
 * through the steps past a sequence's end; dh_from_next (h R of step t + 1's
 * gate gradients, by the GEMM after that step) replaces dh_carry once
 * step t + 1 ran. Gate gradients go to the plane (for the weight
 * gradients) and to dgates_step ([B, 4 * units], the next GEMM's rows). */
__kernel void lstm_backward_step(
    OCL_TENSOR_ARG(const float, gates), OCL_TENSOR_ARG(const float, cell),
    OCL_TENSOR_ARG(const float, c_prev), int c_prev_stride,
    OCL_TENSOR_ARG(const float, doutput),
    OCL_TENSOR_ARG(const float, dh_from_next),
    OCL_TENSOR_ARG(const float, dh_carry), OCL_TENSOR_ARG(float, dc_carry),
    OCL_TENSOR_ARG(const int, lengths), int uniform,
    OCL_TENSOR_ARG(float, dgates), OCL_TENSOR_ARG(float, dgates_step),
    int batch, int units, int row_b, int t, int steps)
{
  int i = get_global_id(0);
  OCL_GUARD(i, batch * units);
  int b = i / units;
  int j = i - b * units;
  int row = b * row_b;
  int gate_at = row * 4 * units + j;
  __global float *dg = OCL_PTR(float, dgates) + gate_at;
  __global float *dg_step = OCL_PTR(float, dgates_step) + b * 4 * units + j;

  int length = uniform ? steps : OCL_PTR(const int, lengths)[b];
  if (t >= length) {
    dg[0] = dg[units] = dg[2 * units] = dg[3 * units] = 0.0f;
    dg_step[0] = dg_step[units] = dg_step[2 * units] = dg_step[3 * units] =
        0.0f;
    return;
  }
  __global const float *g = OCL_PTR(const float, gates) + gate_at;
  float in_gate = g[0], forget = g[units], candidate = g[2 * units],
        out_gate = g[3 * units];
  float c = OCL_PTR(const float, cell)[row * units + j];
  float cp = OCL_PTR(const float, c_prev)[b * c_prev_stride + j];
  float tanh_c = tanh(c);
  float dh_later = t + 1 < length ? OCL_PTR(const float, dh_from_next)[i]
                                  : OCL_PTR(const float, dh_carry)[i];
  float dh = OCL_PTR(const float, doutput)[row * units + j] + dh_later;
  __global float *dc_state = OCL_PTR(float, dc_carry) + i;
  float dc = *dc_state + dh * out_gate * (1.0f - tanh_c * tanh_c);
  float d_in = dc * candidate * in_gate * (1.0f - in_gate);
  float d_forget = dc * cp * forget * (1.0f - forget);
  float d_candidate = dc * in_gate * (1.0f - candidate * candidate);
  float d_out = dh * tanh_c * out_gate * (1.0f - out_gate);
  *dc_state = dc * forget;
  dg[0] = dg_step[0] = d_in;
  dg[units] = dg_step[units] = d_forget;
  dg[2 * units] = dg_step[2 * units] = d_candidate;
  dg[3 * units] = dg_step[3 * units] = d_out;
}

/* The gradients of the initial state: h's is h R of step 0's gate
 * gradients (plus the GRU's direct term, h_prev's own share) where step 0
 * ran, the carried one where the sequence is empty; an LSTM's c's is the
 * carried one. */
__kernel void rnn_backward_initial_state(
    OCL_TENSOR_ARG(const float, dh_from_next),
    OCL_TENSOR_ARG(const float, dh_direct), int has_direct,
    OCL_TENSOR_ARG(const float, dh_carry),
    OCL_TENSOR_ARG(const float, dc_carry), int has_c,
    OCL_TENSOR_ARG(const int, lengths), int uniform,
    OCL_TENSOR_ARG(float, dinput_h), OCL_TENSOR_ARG(float, dinput_c),
    int batch, int units)
{
  int i = get_global_id(0);
  OCL_GUARD(i, batch * units);
  bool ran = uniform || OCL_PTR(const int, lengths)[i / units] > 0;
  float dh = OCL_PTR(const float, dh_carry)[i];
  if (ran) {
    dh = OCL_PTR(const float, dh_from_next)[i];
    if (has_direct)
      dh += OCL_PTR(const float, dh_direct)[i];
  }
  OCL_PTR(float, dinput_h)[i] = dh;
  if (has_c)
    OCL_PTR(float, dinput_c)[i] = OCL_PTR(const float, dc_carry)[i];
}

/* cuDNN's GRU, gates r, z, n (reset, update, new):
 *   r = sigmoid(W_r x + b_Wr + R_r h + b_Rr), z likewise,
 *   n = tanh(W_n x + b_Wn + r * (R_n h + b_Rn)),
 *   h' = (1 - z) * n + z * h.
 * x W^T and h R^T arrive as for the LSTM (3 units wide). The reserve's gate
 * plane keeps r, z, n and R_n h + b_Rn (4 units per row, as the LSTM's),
 * then h before the step; there is no cell state. */
__kernel void gru_forward_step(
    OCL_TENSOR_ARG(const float, xw), OCL_TENSOR_ARG(const float, hr),
    OCL_TENSOR_ARG(const float, bias), OCL_TENSOR_ARG(const float, h_prev),
    OCL_TENSOR_ARG(const int, lengths), int uniform,
    OCL_TENSOR_ARG(float, h_next), OCL_TENSOR_ARG(float, output),
    OCL_TENSOR_ARG(float, gates), OCL_TENSOR_ARG(float, h_before),
    int batch, int units, int row_b, int t)
{
  int i = get_global_id(0);
  OCL_GUARD(i, batch * units);
  int b = i / units;
  int j = i - b * units;
  int row = b * row_b;
  __global float *g = OCL_PTR(float, gates) + row * 4 * units + j;

  float hp = OCL_PTR(const float, h_prev)[i];
  OCL_PTR(float, h_before)[row * units + j] = hp;
  float h = hp;
  if (uniform || t < OCL_PTR(const int, lengths)[b]) {
    __global const float *x = OCL_PTR(const float, xw) + row * 3 * units + j;
    __global const float *r = OCL_PTR(const float, hr) + b * 3 * units + j;
    __global const float *bw = OCL_PTR(const float, bias) + j;
    __global const float *br = bw + 3 * units;
    float reset = rnn_sigmoid(x[0] + bw[0] + r[0] + br[0]);
    float update = rnn_sigmoid(x[units] + bw[units] + r[units] + br[units]);
    float recurrent = r[2 * units] + br[2 * units];
    float fresh = tanh(x[2 * units] + bw[2 * units] + reset * recurrent);
    h = (1.0f - update) * fresh + update * hp;
    g[0] = reset;
    g[units] = update;
    g[2 * units] = fresh;
    g[3 * units] = recurrent;
    OCL_PTR(float, output)[row * units + j] = h;
  } else {
    g[0] = g[units] = g[2 * units] = g[3 * units] = 0.0f;
    OCL_PTR(float, output)[row * units + j] = 0.0f;
  }
  OCL_PTR(float, h_next)[i] = h;
}

/* Step t of the GRU backwards. The gate gradients differ on the two sides
 * of n: the input side's is d(pre-activation of n), the recurrent side's
 * that times r. dh_direct carries z * dh, h_prev's share that skips R, to
 * the step before (read here from step t + 1 first, as the LSTM's
 * dh_from_next). */
__kernel void gru_backward_step(
    OCL_TENSOR_ARG(const float, gates), OCL_TENSOR_ARG(const float, h_before),
    OCL_TENSOR_ARG(const float, doutput),
    OCL_TENSOR_ARG(const float, dh_from_next), OCL_TENSOR_ARG(float, dh_direct),
    OCL_TENSOR_ARG(const float, dh_carry), OCL_TENSOR_ARG(const int, lengths),
    int uniform, OCL_TENSOR_ARG(float, dgates_input),
    OCL_TENSOR_ARG(float, dgates_recurrent), OCL_TENSOR_ARG(float, dgates_step),
    int batch, int units, int row_b, int t, int steps)
{
  int i = get_global_id(0);
  OCL_GUARD(i, batch * units);
  int b = i / units;
  int j = i - b * units;
  int row = b * row_b;
  int gate_at = row * 3 * units + j;
  __global float *dgi = OCL_PTR(float, dgates_input) + gate_at;
  __global float *dgr = OCL_PTR(float, dgates_recurrent) + gate_at;
  __global float *dg_step = OCL_PTR(float, dgates_step) + b * 3 * units + j;

  int length = uniform ? steps : OCL_PTR(const int, lengths)[b];
  if (t >= length) {
    dgi[0] = dgi[units] = dgi[2 * units] = 0.0f;
    dgr[0] = dgr[units] = dgr[2 * units] = 0.0f;
    dg_step[0] = dg_step[units] = dg_step[2 * units] = 0.0f;
    return;
  }
  __global const float *g = OCL_PTR(const float, gates) + row * 4 * units + j;
  float reset = g[0], update = g[units], fresh = g[2 * units],
        recurrent = g[3 * units];
  float hp = OCL_PTR(const float, h_before)[row * units + j];
  __global float *direct = OCL_PTR(float, dh_direct) + i;
  float dh_later = t + 1 < length
                       ? OCL_PTR(const float, dh_from_next)[i] + *direct
                       : OCL_PTR(const float, dh_carry)[i];
  float dh = OCL_PTR(const float, doutput)[row * units + j] + dh_later;
  float d_fresh = dh * (1.0f - update) * (1.0f - fresh * fresh);
  float d_update = dh * (hp - fresh) * update * (1.0f - update);
  float d_reset = d_fresh * recurrent * reset * (1.0f - reset);
  float d_recurrent = d_fresh * reset;
  *direct = dh * update;
  dgi[0] = dgr[0] = dg_step[0] = d_reset;
  dgi[units] = dgr[units] = dg_step[units] = d_update;
  dgi[2 * units] = d_fresh;
  dgr[2 * units] = dg_step[2 * units] = d_recurrent;
}

/* Column sums of the input side's and the recurrent side's gate gradients
 * ([rows, columns] each; the same plane twice for an LSTM): the gradients of
 * the input and recurrent biases, written to `sums` and `sums + columns`.
 * One work-item per column walks the rows: neighbouring work-items read
 * neighbouring columns of each row. */
__kernel void rnn_bias_gradients(OCL_TENSOR_ARG(const float, dgates_input),
                                 OCL_TENSOR_ARG(const float, dgates_recurrent),
                                 int rows, int columns,
                                 OCL_TENSOR_ARG(float, sums))
{
  int column = get_global_id(0);
  OCL_GUARD(column, columns);
  __global const float *di = OCL_PTR(const float, dgates_input) + column;
  __global const float *dr = OCL_PTR(const float, dgates_recurrent) + column;
  float sum_input = 0.0f, sum_recurrent = 0.0f;
  for (int r = 0; r < rows; r++) {
    sum_input += di[r * columns];
    sum_recurrent += dr[r * columns];
  }
  __global float *out = OCL_PTR(float, sums);
  out[column] = sum_input;
  out[columns + column] = sum_recurrent;
}
