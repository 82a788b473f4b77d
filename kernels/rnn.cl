/* The LSTM and GRU steps of CudnnRNNV3 and CudnnRNNBackpropV3 (rnn.c),
 * float.
 *
 * rnn.c runs the products (x W^T for every step at once, h R^T per step,
 * and the backward pass's) through the matmul family's GEMM; these kernels
 * are what lies between them: one launch per time step, one work-item per
 * (unit j, batch row b) of a 2-D range, work-groups along j: neighbouring
 * work-items touch neighbouring addresses of every operand, and a
 * work-group's rows are one b, so PoCL's vectoriser sees plain consecutive
 * loads where a flat index divided by units gave it gathers.
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
 * are cuDNN's: their output is zero and the state passes through unchanged
 * (lengths on the device, every one T where TensorFlow's are). */
#include "activations.clh"
#include "common.clh"

/* No two arguments of a kernel here overlap where one is written. Saying
 * so (restrict) halved the LSTM steps' time on PoCL (2 x 128 units, batch
 * 64: 282 to 159 us per forward step), whose vectoriser otherwise gives up
 * on a dozen buffers that might alias. */
#define RNN_ARG(T, name) __global T *restrict name##_base, ulong name##_offset

/* 1 / (1 + exp(-x)) within 2e-7, absolute, through activations.clh's
 * tanh: a gate near 0 has that error, as Eigen's logistic (p / q + 0.5)
 * has. The built-ins were half of the LSTM's forward step on PoCL (2 x 128
 * units, batch 64: 58 -> 29 us per step), whose tanh and exp run element
 * by element. */
static inline float rnn_sigmoid(float x)
{
  return 0.5f * tanh_float(0.5f * x) + 0.5f;
}

/* The step kernels compute every work-item's values whether its sequence
 * has ended or not and choose with selects: a branch around the math can
 * keep PoCL from vectorising the work-group, and on a GPU the rows past
 * their end are idle lanes either way. */

__kernel void lstm_forward_step(
    RNN_ARG(const float, xw), RNN_ARG(const float, hr),
    RNN_ARG(const float, bias), RNN_ARG(const float, h_prev),
    RNN_ARG(const float, c_prev), RNN_ARG(const int, lengths),
    RNN_ARG(float, h_next), RNN_ARG(float, c_next),
    RNN_ARG(float, output), RNN_ARG(float, gates),
    RNN_ARG(float, cell), RNN_ARG(float, h_before), int batch,
    int units, int row_b, int t)
{
  int j = get_global_id(0);
  int b = get_global_id(1);
  if (j >= units || b >= batch)
    return;
  int i = b * units + j;
  int row = b * row_b;
  int unit_at = row * units + j;
  __global const float *x = OCL_PTR(const float, xw) + row * 4 * units + j;
  __global const float *r = OCL_PTR(const float, hr) + b * 4 * units + j;
  __global const float *bw = OCL_PTR(const float, bias) + j;
  __global const float *br = bw + 4 * units;
  __global float *g = OCL_PTR(float, gates) + row * 4 * units + j;

  bool runs = t < OCL_PTR(const int, lengths)[b];
  float hp = OCL_PTR(const float, h_prev)[i];
  float cp = OCL_PTR(const float, c_prev)[i];
  float in_gate = rnn_sigmoid(x[0] + r[0] + bw[0] + br[0]);
  float forget = rnn_sigmoid(x[units] + r[units] + bw[units] + br[units]);
  float candidate =
      tanh_float(x[2 * units] + r[2 * units] + bw[2 * units] + br[2 * units]);
  float out_gate = rnn_sigmoid(x[3 * units] + r[3 * units] + bw[3 * units] +
                               br[3 * units]);
  float c_new = forget * cp + in_gate * candidate;
  float h_new = out_gate * tanh_float(c_new);
  float c = runs ? c_new : cp;
  g[0] = runs ? in_gate : 0.0f;
  g[units] = runs ? forget : 0.0f;
  g[2 * units] = runs ? candidate : 0.0f;
  g[3 * units] = runs ? out_gate : 0.0f;
  OCL_PTR(float, output)[unit_at] = runs ? h_new : 0.0f;
  OCL_PTR(float, h_before)[unit_at] = hp;
  OCL_PTR(float, cell)[unit_at] = c;
  OCL_PTR(float, h_next)[i] = runs ? h_new : hp;
  OCL_PTR(float, c_next)[i] = c;
}

/* Step t backwards. dh_carry and dc_carry ([B, units]) hold the gradients
 * of the state leaving step t: output_h's and output_c's at first, passed
 * through the steps past a sequence's end; dh_from_next (h R of step t + 1's
 * gate gradients, by the GEMM after that step) replaces dh_carry once
 * step t + 1 ran. Gate gradients go to the plane (for the weight
 * gradients) and to dgates_step ([B, 4 * units], the next GEMM's rows). */
__kernel void lstm_backward_step(
    RNN_ARG(const float, gates), RNN_ARG(const float, cell),
    RNN_ARG(const float, c_prev), int c_prev_stride,
    RNN_ARG(const float, doutput),
    RNN_ARG(const float, dh_from_next),
    RNN_ARG(const float, dh_carry), RNN_ARG(float, dc_carry),
    RNN_ARG(const int, lengths), RNN_ARG(float, dgates),
    RNN_ARG(float, dgates_step), int batch, int units, int row_b,
    int t)
{
  int j = get_global_id(0);
  int b = get_global_id(1);
  if (j >= units || b >= batch)
    return;
  int i = b * units + j;
  int row = b * row_b;
  __global const float *g = OCL_PTR(const float, gates) + row * 4 * units + j;
  __global float *dg = OCL_PTR(float, dgates) + row * 4 * units + j;
  __global float *dg_step = OCL_PTR(float, dgates_step) + b * 4 * units + j;

  int length = OCL_PTR(const int, lengths)[b];
  bool runs = t < length;
  float in_gate = g[0], forget = g[units], candidate = g[2 * units],
        out_gate = g[3 * units];
  float tanh_c = tanh_float(OCL_PTR(const float, cell)[row * units + j]);
  float cp = OCL_PTR(const float, c_prev)[b * c_prev_stride + j];
  float dh_later = t + 1 < length ? OCL_PTR(const float, dh_from_next)[i]
                                  : OCL_PTR(const float, dh_carry)[i];
  float dh = OCL_PTR(const float, doutput)[row * units + j] + dh_later;
  __global float *dc_state = OCL_PTR(float, dc_carry) + i;
  float dc_in = *dc_state;
  float dc = dc_in + dh * out_gate * (1.0f - tanh_c * tanh_c);
  float d_in = runs ? dc * candidate * in_gate * (1.0f - in_gate) : 0.0f;
  float d_forget = runs ? dc * cp * forget * (1.0f - forget) : 0.0f;
  float d_candidate = runs ? dc * in_gate * (1.0f - candidate * candidate)
                           : 0.0f;
  float d_out = runs ? dh * tanh_c * out_gate * (1.0f - out_gate) : 0.0f;
  *dc_state = runs ? dc * forget : dc_in;
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
    RNN_ARG(const float, dh_from_next),
    RNN_ARG(const float, dh_direct), int has_direct,
    RNN_ARG(const float, dh_carry),
    RNN_ARG(const float, dc_carry), int has_c,
    RNN_ARG(const int, lengths), RNN_ARG(float, dinput_h),
    RNN_ARG(float, dinput_c),
    int batch, int units)
{
  int j = get_global_id(0);
  int b = get_global_id(1);
  if (j >= units || b >= batch)
    return;
  int i = b * units + j;
  bool ran = OCL_PTR(const int, lengths)[b] > 0;
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
    RNN_ARG(const float, xw), RNN_ARG(const float, hr),
    RNN_ARG(const float, bias), RNN_ARG(const float, h_prev),
    RNN_ARG(const int, lengths), RNN_ARG(float, h_next),
    RNN_ARG(float, output), RNN_ARG(float, gates),
    RNN_ARG(float, h_before), int batch, int units, int row_b, int t)
{
  int j = get_global_id(0);
  int b = get_global_id(1);
  if (j >= units || b >= batch)
    return;
  int i = b * units + j;
  int row = b * row_b;
  __global const float *x = OCL_PTR(const float, xw) + row * 3 * units + j;
  __global const float *r = OCL_PTR(const float, hr) + b * 3 * units + j;
  __global const float *bw = OCL_PTR(const float, bias) + j;
  __global const float *br = bw + 3 * units;
  __global float *g = OCL_PTR(float, gates) + row * 4 * units + j;

  bool runs = t < OCL_PTR(const int, lengths)[b];
  float hp = OCL_PTR(const float, h_prev)[i];
  float reset = rnn_sigmoid(x[0] + bw[0] + r[0] + br[0]);
  float update = rnn_sigmoid(x[units] + bw[units] + r[units] + br[units]);
  float recurrent = r[2 * units] + br[2 * units];
  float fresh = tanh_float(x[2 * units] + bw[2 * units] + reset * recurrent);
  float h_new = (1.0f - update) * fresh + update * hp;
  g[0] = runs ? reset : 0.0f;
  g[units] = runs ? update : 0.0f;
  g[2 * units] = runs ? fresh : 0.0f;
  g[3 * units] = runs ? recurrent : 0.0f;
  OCL_PTR(float, output)[row * units + j] = runs ? h_new : 0.0f;
  OCL_PTR(float, h_before)[row * units + j] = hp;
  OCL_PTR(float, h_next)[i] = runs ? h_new : hp;
}

/* Step t of the GRU backwards. The gate gradients differ on the two sides
 * of n: the input side's is d(pre-activation of n), the recurrent side's
 * that times r. dh_direct carries z * dh, h_prev's share that skips R, to
 * the step before (read here from step t + 1 first, as the LSTM's
 * dh_from_next). */
__kernel void gru_backward_step(
    RNN_ARG(const float, gates), RNN_ARG(const float, h_before),
    RNN_ARG(const float, doutput),
    RNN_ARG(const float, dh_from_next), RNN_ARG(float, dh_direct),
    RNN_ARG(const float, dh_carry), RNN_ARG(const int, lengths),
    RNN_ARG(float, dgates_input),
    RNN_ARG(float, dgates_recurrent), RNN_ARG(float, dgates_step),
    int batch, int units, int row_b, int t)
{
  int j = get_global_id(0);
  int b = get_global_id(1);
  if (j >= units || b >= batch)
    return;
  int i = b * units + j;
  int row = b * row_b;
  int gate_at = row * 3 * units + j;
  __global const float *g = OCL_PTR(const float, gates) + row * 4 * units + j;
  __global float *dgi = OCL_PTR(float, dgates_input) + gate_at;
  __global float *dgr = OCL_PTR(float, dgates_recurrent) + gate_at;
  __global float *dg_step = OCL_PTR(float, dgates_step) + b * 3 * units + j;

  int length = OCL_PTR(const int, lengths)[b];
  bool runs = t < length;
  float reset = g[0], update = g[units], fresh = g[2 * units],
        recurrent = g[3 * units];
  float hp = OCL_PTR(const float, h_before)[row * units + j];
  __global float *direct = OCL_PTR(float, dh_direct) + i;
  float dh_later = t + 1 < length
                       ? OCL_PTR(const float, dh_from_next)[i] + *direct
                       : OCL_PTR(const float, dh_carry)[i];
  float dh = OCL_PTR(const float, doutput)[row * units + j] + dh_later;
  float d_fresh = runs ? dh * (1.0f - update) * (1.0f - fresh * fresh) : 0.0f;
  float d_update = runs ? dh * (hp - fresh) * update * (1.0f - update) : 0.0f;
  float d_reset = d_fresh * recurrent * reset * (1.0f - reset);
  float d_recurrent = d_fresh * reset;
  /* Read by step t - 1 only where step t ran. */
  *direct = dh * update;
  dgi[0] = dgr[0] = dg_step[0] = d_reset;
  dgi[units] = dgr[units] = dg_step[units] = d_update;
  dgi[2 * units] = d_fresh;
  dgr[2 * units] = dg_step[2 * units] = d_recurrent;
}

/* R^T ([gates * units, units] to [units, gates * units]), once per forward
 * op: the per-step product h R^T then reads it in place, where R itself
 * was packed again at every step (the GEMM's B operand transposed). One
 * work-item per element, neighbours along a row of R^T. */
__kernel void rnn_transpose_weights(RNN_ARG(const float, r),
                                    RNN_ARG(float, r_t), int rows, int units)
{
  int row = get_global_id(0);
  int unit = get_global_id(1);
  if (row >= rows || unit >= units)
    return;
  OCL_PTR(float, r_t)[unit * rows + row] = OCL_PTR(const float, r)[row * units + unit];
}
