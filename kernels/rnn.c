/* CudnnRNNV3 and CudnnRNNBackpropV3 for one unidirectional LSTM or GRU
 * layer, float: the op Keras' TensorFlow backend runs for its LSTM and GRU
 * layers on a GPU (keras/src/backend/tensorflow/rnn.py, _cudnn_lstm and
 * _cudnn_gru), with cuDNN's params layout and sequence-length semantics, so
 * that tfocl._keras can send Keras' layers here instead of the generic loop
 * of many small ops per step.
 *
 * Forward: one GEMM gives x W^T for every step, one kernel R^T; each step
 * is a GEMM (h R^T) and one cell kernel (rnn.cl). Backward: per step, one cell
 * kernel and one GEMM (the gate gradients times R); then three GEMMs give
 * the input and weight gradients over all steps at once and two more (a
 * row of ones times the gate gradients) the bias gradients. 2 T + 2
 * launches forward, 2 T + 6 backward, where the generic loop ran dozens of
 * ops per step.
 *
 * params (cuDNN's canonical layout, as Keras builds it): W [gates * units,
 * input_size], R [gates * units, units], both row-major in cuDNN's gate
 * order (LSTM i, f, c, o; GRU r, z, n), then the input and recurrent
 * biases, gates * units each. The reserve space is this kernel's own
 * (rnn.cl): only its backprop reads it. sequence_lengths lives in host
 * memory as in TensorFlow's GPU kernel, so it is checked before anything
 * runs. Other modes (plain RNNs, skip_input, several layers,
 * bidirectional, projections) fail with UNIMPLEMENTED. A GRU has no cell
 * state: input_c is not read, and output_c and input_c_backprop are zero
 * scalars (TensorFlow's kernel leaves them unset scalars). */
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "kernel_families.h"
#include "runtime.h"

extern const char ocl_cl_source_rnn[];

OCL_PROGRAM_TABLE
static const struct ocl_program program = {"rnn_float", ocl_cl_source_rnn, ""};

enum rnn_mode { RNN_LSTM, RNN_GRU };

/* Per row and unit, the reserve's gate plane keeps 4 values in both modes
 * (LSTM: its gates; GRU: its gates and R_n h + b_Rn). */
#define GATE_PLANE_WIDTH 4

struct rnn_kernel {
  enum rnn_mode mode;
  bool time_major;
  /* input_mode auto_select: cuDNN skips the input projection when the input
   * is as wide as the state, a mode tfocl lacks. */
  bool auto_select;
  struct ocl_kernel forward_step, backward_step, initial_state,
      transpose_weights;
};

struct rnn_shape {
  int64_t steps, batch, input_size, units;
  int64_t gates; /* gates * units: the width of x W^T */
  /* Reserve space per row and unit: the gate plane, an LSTM's cell state,
   * h before the step; where each plane starts. */
  int64_t reserve_per_unit, cell_plane, before_plane;
  int64_t rows;         /* steps * batch */
  int64_t row_b, row_t; /* row (b, t) = b * row_b + t * row_t */
  int64_t r_offset, bias_offset, params; /* W starts at 0 */
  int64_t state_dims[3];
};

static void rnn_delete(void *kernel) { free(kernel); }

static void *rnn_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *status = ocl_tf.NewStatus();
  struct rnn_kernel *k = calloc(1, sizeof(*k));
  if (k == NULL) {
    ocl_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return ocl_create_failed(ctx, status, k);
  }
  char mode[32], input_mode[32], direction[32];
  int64_t num_proj = 0;
  TF_Bool time_major = 1;
  if (!ocl_string_attr(ctx, "rnn_mode", mode, sizeof(mode), status) ||
      !ocl_string_attr(ctx, "input_mode", input_mode, sizeof(input_mode),
                       status) ||
      !ocl_string_attr(ctx, "direction", direction, sizeof(direction), status))
    return ocl_create_failed(ctx, status, k);
  ocl_tf.OpKernelConstruction_GetAttrInt64(ctx, "num_proj", &num_proj, status);
  if (ocl_tf.GetCode(status) == TF_OK)
    ocl_tf.OpKernelConstruction_GetAttrBool(ctx, "time_major", &time_major,
                                            status);
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  if (strcmp(mode, "lstm") != 0 && strcmp(mode, "gru") != 0) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "the OPENCL CudnnRNN kernels run rnn_mode 'lstm' and "
                   "'gru', not '%s'",
                   mode);
  } else if (strcmp(input_mode, "skip_input") == 0) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "the OPENCL CudnnRNN kernels run input_mode "
                   "'linear_input' only, not 'skip_input'");
  } else if (strcmp(direction, "unidirectional") != 0) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "the OPENCL CudnnRNN kernels run one direction only, not "
                   "'%s'",
                   direction);
  } else if (num_proj != 0) {
    ocl_set_status(status, TF_UNIMPLEMENTED,
                   "the OPENCL CudnnRNN kernels have no projection "
                   "(num_proj %lld)",
                   (long long)num_proj);
  }
  if (ocl_tf.GetCode(status) != TF_OK)
    return ocl_create_failed(ctx, status, k);
  k->mode = strcmp(mode, "gru") == 0 ? RNN_GRU : RNN_LSTM;
  k->time_major = time_major != 0;
  k->auto_select = strcmp(input_mode, "auto_select") == 0;
  bool gru = k->mode == RNN_GRU;
  ocl_kernel_init(&k->forward_step, &program,
                  gru ? "gru_forward_step" : "lstm_forward_step");
  ocl_kernel_init(&k->backward_step, &program,
                  gru ? "gru_backward_step" : "lstm_backward_step");
  ocl_kernel_init(&k->initial_state, &program, "rnn_backward_initial_state");
  ocl_kernel_init(&k->transpose_weights, &program, "rnn_transpose_weights");
  ocl_tf.DeleteStatus(status);
  return k;
}

static bool same_dims(const TF_Tensor *t, const int64_t *dims, int rank)
{
  if (ocl_tf.NumDims(t) != rank)
    return false;
  for (int i = 0; i < rank; i++) {
    if (ocl_tf.Dim(t, i) != dims[i])
      return false;
  }
  return true;
}

/* The shapes of input, input_h, input_c and params, checked as
 * TensorFlow's CudnnRNN kernels check them (with their messages). */
static bool rnn_shape_of(struct ocl_op *op, const struct rnn_kernel *k,
                         const TF_Tensor *input, const TF_Tensor *input_h,
                         const TF_Tensor *input_c, const TF_Tensor *params,
                         struct rnn_shape *s)
{
  if (ocl_tf.NumDims(input) != 3)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "RNN input must be a 3-D vector.");
  if (ocl_tf.NumDims(input_h) != 3)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "RNN input_h must be a 3-D vector.");
  memset(s, 0, sizeof(*s));
  s->steps = ocl_tf.Dim(input, k->time_major ? 0 : 1);
  s->batch = ocl_tf.Dim(input, k->time_major ? 1 : 0);
  s->input_size = ocl_tf.Dim(input, 2);
  int64_t layers = ocl_tf.Dim(input_h, k->time_major ? 0 : 1);
  int64_t h_batch = ocl_tf.Dim(input_h, k->time_major ? 1 : 0);
  s->units = ocl_tf.Dim(input_h, 2);
  if (h_batch != s->batch)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input_h and input must have the same batch size: "
                       "%lld vs %lld",
                       (long long)h_batch, (long long)s->batch);
  if (layers != 1)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "the OPENCL CudnnRNN kernels run one layer, not %lld",
                       (long long)layers);
  for (int i = 0; i < 3; i++)
    s->state_dims[i] = ocl_tf.Dim(input_h, i);
  if (k->mode == RNN_LSTM && !same_dims(input_c, s->state_dims, 3))
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "input_h and input_c must have the same shape");
  if (k->auto_select && s->input_size == s->units)
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "input_mode 'auto_select' with input_size == num_units "
                       "(%lld) is cuDNN's skip_input, which the OPENCL "
                       "CudnnRNN kernels lack",
                       (long long)s->units);
  int64_t u = s->units, gates = (k->mode == RNN_GRU ? 3 : 4) * u;
  s->gates = gates;
  s->reserve_per_unit = GATE_PLANE_WIDTH + (k->mode == RNN_LSTM ? 2 : 1);
  s->rows = s->steps * s->batch;
  s->row_b = k->time_major ? 1 : s->steps;
  s->row_t = k->time_major ? s->batch : 1;
  s->r_offset = gates * s->input_size;
  s->bias_offset = s->r_offset + gates * u;
  s->params = s->bias_offset + 2 * gates;
  s->cell_plane = s->rows * GATE_PLANE_WIDTH * u;
  s->before_plane = s->cell_plane + (k->mode == RNN_LSTM ? s->rows * u : 0);
  if (ocl_tf.TensorElementCount(params) != s->params)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "Invalid params size: %lld elements, %s of "
                       "input_size %lld and num_units %lld has %lld",
                       (long long)ocl_tf.TensorElementCount(params),
                       k->mode == RNN_GRU ? "a GRU" : "an LSTM",
                       (long long)s->input_size, (long long)u,
                       (long long)s->params);
  /* rnn.cl indexes every plane with ints. */
  int64_t widest = s->input_size > gates ? s->input_size : gates;
  if (s->rows > 0 && (s->rows > INT32_MAX / s->reserve_per_unit / (u ? u : 1) ||
                      s->rows > INT32_MAX / widest))
    return ocl_op_fail(op, TF_UNIMPLEMENTED,
                       "an RNN of %lld steps, batch %lld, input_size %lld "
                       "and num_units %lld is too large for the OPENCL "
                       "CudnnRNN kernels' 32-bit indices",
                       (long long)s->steps, (long long)s->batch,
                       (long long)s->input_size, (long long)u);
  return true;
}

/* The sequence lengths (host memory), checked, on the device in
 * *device: one fill per run of equal lengths (Keras' are all T). */
static bool rnn_lengths(struct ocl_op *op, const struct rnn_shape *s,
                        const TF_Tensor *lengths, TF_Tensor **device)
{
  if (ocl_tf.NumDims(lengths) != 1 || ocl_tf.Dim(lengths, 0) != s->batch)
    return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                       "sequence_lengths must be a vector of the batch size "
                       "(%lld)",
                       (long long)s->batch);
  const int32_t *len = ocl_host_data(lengths);
  for (int64_t b = 0; b < s->batch; b++) {
    if (len[b] < 0 || len[b] > s->steps)
      return ocl_op_fail(op, TF_INVALID_ARGUMENT,
                         "sequence_lengths[%lld] = %d is outside [0, %lld]",
                         (long long)b, len[b], (long long)s->steps);
  }
  *device = ocl_op_temp(op, TF_INT32, s->batch > 0 ? s->batch : 1);
  if (*device == NULL)
    return false;
  for (int64_t b = 0; b < s->batch;) {
    int64_t end = b + 1;
    while (end < s->batch && len[end] == len[b])
      end++;
    if (!ocl_op_fill(op, *device, (size_t)b * sizeof(int32_t), &len[b],
                     sizeof(int32_t), (size_t)(end - b) * sizeof(int32_t)))
      return false;
    b = end;
  }
  return true;
}

/* Elements [offset, offset + count) of a float tensor as a kernel argument. */
static bool span(struct ocl_op *op, const TF_Tensor *t, int64_t offset,
                 int64_t count, struct ocl_buffer *buffer)
{
  return ocl_op_buffer(op, t, (size_t)offset * sizeof(float),
                       (size_t)count * sizeof(float), buffer);
}

/* A step kernel over (units, batch): work-groups of up to 64 units of one
 * batch row (rnn.cl). */
static bool step_launch(struct ocl_op *op, struct ocl_kernel *kernel,
                        const struct rnn_shape *s, const struct ocl_arg *args,
                        int num_args)
{
  size_t local = ocl_kernel_fit_local(op, kernel, 64);
  if (local == 0)
    return false;
  size_t units = (size_t)s->units;
  size_t global[2] = {(units + local - 1) / local * local, (size_t)s->batch};
  size_t locals[2] = {local, 1};
  return ocl_launch(op, kernel, 2, global, locals, args, num_args);
}

/* r_t = R^T (rnn.cl). */
static bool transpose_weights(struct ocl_op *op, struct rnn_kernel *k,
                              const struct rnn_shape *s,
                              const TF_Tensor *params, TF_Tensor *r_t)
{
  size_t local = ocl_kernel_fit_local(op, &k->transpose_weights, 64);
  struct ocl_buffer r, out;
  if (local == 0 || !span(op, params, s->r_offset, s->gates * s->units, &r) ||
      !span(op, r_t, 0, s->gates * s->units, &out))
    return false;
  size_t rows = (size_t)s->gates;
  size_t global[2] = {(rows + local - 1) / local * local, (size_t)s->units};
  size_t locals[2] = {local, 1};
  const struct ocl_arg args[] = {OCL_BUF(r), OCL_BUF(out), OCL_INT(s->gates),
                                 OCL_INT(s->units)};
  return ocl_launch(op, &k->transpose_weights, 2, global, locals, args, 4);
}

static struct ocl_gemm_desc product(int64_t m, int64_t n, int64_t k,
                                    bool trans_a, bool trans_b)
{
  return (struct ocl_gemm_desc){.m = m,
                                .n = n,
                                .k = k,
                                .trans_a = trans_a,
                                .trans_b = trans_b,
                                .batches = 1};
}

/* A GRU's output_c or input_c_backprop: a scalar, zero. */
static bool zero_scalar(struct ocl_op *op, int index)
{
  const float zero = 0.0f;
  int64_t no_dims[1] = {0};
  TF_Tensor *t = ocl_op_output(op, index, TF_FLOAT, no_dims, 0);
  return t != NULL && ocl_op_fill(op, t, 0, &zero, sizeof(zero), sizeof(zero));
}

static void rnn_forward_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct rnn_kernel *k = kernel;
  bool lstm = k->mode == RNN_LSTM;
  struct ocl_op op;
  struct rnn_shape s;
  ocl_op_begin(&op, ctx);
  TF_Tensor *in[5];
  for (int i = 0; i < 5; i++) {
    if ((in[i] = ocl_op_input(&op, i)) == NULL)
      goto out;
  }
  TF_Tensor *x = in[0], *h0 = in[1], *c0 = in[2], *params = in[3];
  if (!rnn_shape_of(&op, k, x, h0, c0, params, &s))
    goto out;
  int64_t u = s.units, gates = s.gates;
  int64_t out_dims[3] = {ocl_tf.Dim(x, 0), ocl_tf.Dim(x, 1), u};
  int64_t reserve_dims[1] = {s.rows * s.reserve_per_unit * u};
  TF_Tensor *output = ocl_op_output(&op, 0, TF_FLOAT, out_dims, 3);
  TF_Tensor *h_last =
      output ? ocl_op_output(&op, 1, TF_FLOAT, s.state_dims, 3) : NULL;
  TF_Tensor *c_last = NULL;
  if (h_last == NULL ||
      (lstm
           ? (c_last = ocl_op_output(&op, 2, TF_FLOAT, s.state_dims, 3)) == NULL
           : !zero_scalar(&op, 2)))
    goto out;
  TF_Tensor *reserve = ocl_op_output(&op, 3, TF_FLOAT, reserve_dims, 1);
  /* Nothing for the backprop to read there (TensorFlow's V3 kernel gives
   * an unset int8 scalar). */
  int64_t no_dims[1] = {0};
  TF_Tensor *host_reserved =
      reserve ? ocl_op_output(&op, 4, TF_INT8, no_dims, 0) : NULL;
  if (host_reserved == NULL)
    goto out;
  *(int8_t *)ocl_host_data(host_reserved) = 0;
  size_t state_bytes = (size_t)(s.batch * u) * sizeof(float);
  TF_Tensor *lengths;
  if (!rnn_lengths(&op, &s, in[4], &lengths))
    goto out;
  if (s.rows == 0) {
    if (ocl_op_copy(&op, h0, 0, h_last, 0, state_bytes) && lstm)
      ocl_op_copy(&op, c0, 0, c_last, 0, state_bytes);
    goto out;
  }
  TF_Tensor *xw = ocl_op_temp(&op, TF_FLOAT, s.rows * gates);
  TF_Tensor *hr = xw ? ocl_op_temp(&op, TF_FLOAT, s.batch * gates) : NULL;
  /* The state between steps, two [batch, units] halves in turn (h, then
   * an LSTM's c). */
  TF_Tensor *states =
      hr ? ocl_op_temp(&op, TF_FLOAT, (lstm ? 4 : 2) * s.batch * u) : NULL;
  TF_Tensor *r_t = states ? ocl_op_temp(&op, TF_FLOAT, gates * u) : NULL;
  if (r_t == NULL || !transpose_weights(&op, k, &s, params, r_t))
    goto out;
  struct ocl_gemm_desc xw_desc =
      product(s.rows, gates, s.input_size, false, true);
  struct ocl_buffer bias, lengths_buf, hr_buf;
  if (!ocl_op_gemm(&op, TF_FLOAT, &xw_desc, x, params, xw) ||
      !span(&op, params, s.bias_offset, 2 * gates, &bias) ||
      !span(&op, hr, 0, s.batch * gates, &hr_buf) ||
      !ocl_op_buffer(&op, lengths, 0, (size_t)s.batch * sizeof(int32_t),
                     &lengths_buf))
    goto out;
  int64_t state = s.batch * u, c_states = 2 * state;
  for (int64_t t = 0; t < s.steps; t++) {
    bool last = t == s.steps - 1;
    const TF_Tensor *h_prev = t == 0 ? h0 : states;
    int64_t prev_at = t == 0 ? 0 : ((t - 1) & 1) * state;
    int64_t next_at = (t & 1) * state;
    struct ocl_gemm_desc hr_desc = product(s.batch, gates, u, false, false);
    hr_desc.a_offset = prev_at;
    if (!ocl_op_gemm(&op, TF_FLOAT, &hr_desc, h_prev, r_t, hr))
      goto out;
    int64_t step_row = t * s.row_t, rows_left = s.rows - step_row;
    struct ocl_buffer xw_t, h_prev_buf, h_next_buf, output_t, gates_t, before_t;
    if (!span(&op, xw, step_row * gates, rows_left * gates, &xw_t) ||
        !span(&op, h_prev, prev_at, state, &h_prev_buf) ||
        !(last ? span(&op, h_last, 0, state, &h_next_buf)
               : span(&op, states, next_at, state, &h_next_buf)) ||
        !span(&op, output, step_row * u, rows_left * u, &output_t) ||
        !span(&op, reserve, step_row * GATE_PLANE_WIDTH * u,
              rows_left * GATE_PLANE_WIDTH * u, &gates_t) ||
        !span(&op, reserve, s.before_plane + step_row * u, rows_left * u,
              &before_t))
      goto out;
    bool launched;
    if (lstm) {
      struct ocl_buffer c_prev_buf, c_next_buf, cell_t;
      if (!(t == 0
                ? span(&op, c0, 0, state, &c_prev_buf)
                : span(&op, states, c_states + prev_at, state, &c_prev_buf)) ||
          !(last ? span(&op, c_last, 0, state, &c_next_buf)
                 : span(&op, states, c_states + next_at, state, &c_next_buf)) ||
          !span(&op, reserve, s.cell_plane + step_row * u, rows_left * u,
                &cell_t))
        goto out;
      const struct ocl_arg args[] = {
          OCL_BUF(xw_t),       OCL_BUF(hr_buf),     OCL_BUF(bias),
          OCL_BUF(h_prev_buf), OCL_BUF(c_prev_buf), OCL_BUF(lengths_buf),
          OCL_BUF(h_next_buf), OCL_BUF(c_next_buf), OCL_BUF(output_t),
          OCL_BUF(gates_t),    OCL_BUF(cell_t),     OCL_BUF(before_t),
          OCL_INT(s.batch),    OCL_INT(u),          OCL_INT(s.row_b),
          OCL_INT(t),
      };
      launched = step_launch(&op, &k->forward_step, &s, args,
                             (int)(sizeof(args) / sizeof(args[0])));
    } else {
      const struct ocl_arg args[] = {
          OCL_BUF(xw_t),       OCL_BUF(hr_buf),      OCL_BUF(bias),
          OCL_BUF(h_prev_buf), OCL_BUF(lengths_buf), OCL_BUF(h_next_buf),
          OCL_BUF(output_t),   OCL_BUF(gates_t),     OCL_BUF(before_t),
          OCL_INT(s.batch),    OCL_INT(u),           OCL_INT(s.row_b),
          OCL_INT(t),
      };
      launched = step_launch(&op, &k->forward_step, &s, args,
                             (int)(sizeof(args) / sizeof(args[0])));
    }
    if (!launched)
      goto out;
  }
out:
  ocl_op_end(&op);
}

/* CudnnRNNBackpropV3's inputs this kernel reads (output, output_h, output_c
 * and host_reserved are not needed: the reserve space has it all). */
enum {
  IN_INPUT = 0,
  IN_INPUT_H = 1,
  IN_INPUT_C = 2,
  IN_PARAMS = 3,
  IN_LENGTHS = 4,
  IN_OUTPUT_BACKPROP = 8,
  IN_OUTPUT_H_BACKPROP = 9,
  IN_OUTPUT_C_BACKPROP = 10,
  IN_RESERVE = 11,
};

/* The bias gradients: column sums of the gate gradients, as a product with
 * a row of ones (the GEMM's fastest path for it on every device). */
static bool bias_gradients(struct ocl_op *op, const struct rnn_shape *s,
                           const TF_Tensor *dgates_in,
                           const TF_Tensor *dgates_rec, TF_Tensor *dparams)
{
  const float one = 1.0f;
  TF_Tensor *ones = ocl_op_temp(op, TF_FLOAT, s->rows);
  if (ones == NULL || !ocl_op_fill(op, ones, 0, &one, sizeof(one),
                                   (size_t)s->rows * sizeof(float)))
    return false;
  struct ocl_gemm_desc d = product(1, s->gates, s->rows, false, false);
  d.c_offset = s->bias_offset;
  if (!ocl_op_gemm(op, TF_FLOAT, &d, ones, dgates_in, dparams))
    return false;
  /* An LSTM's two bias gradients are one sum (dgates_rec is dgates_in). */
  if (dgates_rec == dgates_in)
    return ocl_op_copy(op, dparams, (size_t)s->bias_offset * sizeof(float),
                       dparams,
                       (size_t)(s->bias_offset + s->gates) * sizeof(float),
                       (size_t)s->gates * sizeof(float));
  d.c_offset = s->bias_offset + s->gates;
  return ocl_op_gemm(op, TF_FLOAT, &d, ones, dgates_rec, dparams);
}

static void rnn_backward_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct rnn_kernel *k = kernel;
  bool lstm = k->mode == RNN_LSTM;
  struct ocl_op op;
  struct rnn_shape s;
  ocl_op_begin(&op, ctx);
  static const int used[] = {IN_INPUT,
                             IN_INPUT_H,
                             IN_INPUT_C,
                             IN_PARAMS,
                             IN_LENGTHS,
                             IN_OUTPUT_BACKPROP,
                             IN_OUTPUT_H_BACKPROP,
                             IN_OUTPUT_C_BACKPROP,
                             IN_RESERVE};
  TF_Tensor *in[IN_RESERVE + 1] = {0};
  for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++) {
    if ((used[i] == IN_INPUT_C || used[i] == IN_OUTPUT_C_BACKPROP) && !lstm)
      continue;
    if ((in[used[i]] = ocl_op_input(&op, used[i])) == NULL)
      goto out;
  }
  TF_Tensor *x = in[IN_INPUT], *params = in[IN_PARAMS];
  TF_Tensor *dout = in[IN_OUTPUT_BACKPROP], *dh_last = in[IN_OUTPUT_H_BACKPROP];
  TF_Tensor *dc_last = in[IN_OUTPUT_C_BACKPROP], *reserve = in[IN_RESERVE];
  if (!rnn_shape_of(&op, k, x, in[IN_INPUT_H], in[IN_INPUT_C], params, &s))
    goto out;
  int64_t u = s.units, gates = s.gates, state = s.batch * u;
  int64_t out_dims[3] = {ocl_tf.Dim(x, 0), ocl_tf.Dim(x, 1), u};
  if (!same_dims(dout, out_dims, 3)) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "output_backprop must have the output's shape");
    goto out;
  }
  if (!same_dims(dh_last, s.state_dims, 3) ||
      (lstm && !same_dims(dc_last, s.state_dims, 3))) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "output_h_backprop and output_c_backprop must have input_h's "
                "shape");
    goto out;
  }
  int64_t reserve_elements = s.rows * s.reserve_per_unit * u;
  if (ocl_tf.TensorElementCount(reserve) != reserve_elements) {
    ocl_op_fail(&op, TF_INVALID_ARGUMENT,
                "reserve_space holds %lld elements, not the %lld that the "
                "OPENCL CudnnRNNV3 writes for these shapes",
                (long long)ocl_tf.TensorElementCount(reserve),
                (long long)reserve_elements);
    goto out;
  }
  int64_t x_dims[3], params_dims[1] = {s.params};
  for (int i = 0; i < 3; i++)
    x_dims[i] = ocl_tf.Dim(x, i);
  TF_Tensor *dx = ocl_op_output(&op, 0, TF_FLOAT, x_dims, 3);
  TF_Tensor *dh0 = dx ? ocl_op_output(&op, 1, TF_FLOAT, s.state_dims, 3) : NULL;
  TF_Tensor *dc0 = NULL;
  if (dh0 == NULL ||
      (lstm ? (dc0 = ocl_op_output(&op, 2, TF_FLOAT, s.state_dims, 3)) == NULL
            : !zero_scalar(&op, 2)))
    goto out;
  TF_Tensor *dparams = ocl_op_output(&op, 3, TF_FLOAT, params_dims, 1);
  TF_Tensor *lengths;
  if (dparams == NULL || !rnn_lengths(&op, &s, in[IN_LENGTHS], &lengths))
    goto out;
  size_t state_bytes = (size_t)state * sizeof(float);
  if (s.rows == 0) {
    const float zero = 0.0f;
    if (ocl_op_copy(&op, dh_last, 0, dh0, 0, state_bytes) &&
        (!lstm || ocl_op_copy(&op, dc_last, 0, dc0, 0, state_bytes)))
      ocl_op_fill(&op, dparams, 0, &zero, sizeof(zero),
                  (size_t)s.params * sizeof(float));
    goto out;
  }
  /* An LSTM's gate gradients are the same on both sides of the product;
   * a GRU's differ in n (rnn.cl), so it keeps a plane for each. */
  TF_Tensor *dgates_in = ocl_op_temp(&op, TF_FLOAT, s.rows * gates);
  TF_Tensor *dgates_rec = dgates_in && !lstm
                              ? ocl_op_temp(&op, TF_FLOAT, s.rows * gates)
                              : dgates_in;
  TF_Tensor *dgates_step =
      dgates_rec ? ocl_op_temp(&op, TF_FLOAT, s.batch * gates) : NULL;
  TF_Tensor *dh_next = dgates_step ? ocl_op_temp(&op, TF_FLOAT, state) : NULL;
  /* The LSTM's carried dc, the GRU's direct share of dh. */
  TF_Tensor *carry = dh_next ? ocl_op_temp(&op, TF_FLOAT, state) : NULL;
  if (carry == NULL ||
      (lstm && !ocl_op_copy(&op, dc_last, 0, carry, 0, state_bytes)))
    goto out;
  struct ocl_buffer lengths_buf, dh_next_buf, dh_last_buf, carry_buf,
      dgates_step_buf;
  if (!ocl_op_buffer(&op, lengths, 0, (size_t)s.batch * sizeof(int32_t),
                     &lengths_buf) ||
      !span(&op, dh_next, 0, state, &dh_next_buf) ||
      !span(&op, dh_last, 0, state, &dh_last_buf) ||
      !span(&op, carry, 0, state, &carry_buf) ||
      !span(&op, dgates_step, 0, s.batch * gates, &dgates_step_buf))
    goto out;
  for (int64_t t = s.steps - 1; t >= 0; t--) {
    int64_t step_row = t * s.row_t, rows_left = s.rows - step_row;
    struct ocl_buffer gates_t, dout_t, dgates_in_t;
    if (!span(&op, reserve, step_row * GATE_PLANE_WIDTH * u,
              rows_left * GATE_PLANE_WIDTH * u, &gates_t) ||
        !span(&op, dout, step_row * u, rows_left * u, &dout_t) ||
        !span(&op, dgates_in, step_row * gates, rows_left * gates,
              &dgates_in_t))
      goto out;
    bool launched;
    if (lstm) {
      /* Step t - 1's cell state: rows row_b apart in the plane. */
      int64_t c_prev_stride = t == 0 ? u : s.row_b * u;
      struct ocl_buffer cell_t, c_prev_buf;
      if (!span(&op, reserve, s.cell_plane + step_row * u, rows_left * u,
                &cell_t) ||
          !(t == 0 ? span(&op, in[IN_INPUT_C], 0, state, &c_prev_buf)
                   : span(&op, reserve, s.cell_plane + (step_row - s.row_t) * u,
                          (rows_left + s.row_t) * u, &c_prev_buf)))
        goto out;
      const struct ocl_arg args[] = {
          OCL_BUF(gates_t),
          OCL_BUF(cell_t),
          OCL_BUF(c_prev_buf),
          OCL_INT(c_prev_stride),
          OCL_BUF(dout_t),
          OCL_BUF(dh_next_buf),
          OCL_BUF(dh_last_buf),
          OCL_BUF(carry_buf),
          OCL_BUF(lengths_buf),
          OCL_BUF(dgates_in_t),
          OCL_BUF(dgates_step_buf),
          OCL_INT(s.batch),
          OCL_INT(u),
          OCL_INT(s.row_b),
          OCL_INT(t),
      };
      launched = step_launch(&op, &k->backward_step, &s, args,
                             (int)(sizeof(args) / sizeof(args[0])));
    } else {
      struct ocl_buffer before_t, dgates_rec_t;
      if (!span(&op, reserve, s.before_plane + step_row * u, rows_left * u,
                &before_t) ||
          !span(&op, dgates_rec, step_row * gates, rows_left * gates,
                &dgates_rec_t))
        goto out;
      const struct ocl_arg args[] = {
          OCL_BUF(gates_t),         OCL_BUF(before_t),    OCL_BUF(dout_t),
          OCL_BUF(dh_next_buf),     OCL_BUF(carry_buf),   OCL_BUF(dh_last_buf),
          OCL_BUF(lengths_buf),     OCL_BUF(dgates_in_t), OCL_BUF(dgates_rec_t),
          OCL_BUF(dgates_step_buf), OCL_INT(s.batch),     OCL_INT(u),
          OCL_INT(s.row_b),         OCL_INT(t),
      };
      launched = step_launch(&op, &k->backward_step, &s, args,
                             (int)(sizeof(args) / sizeof(args[0])));
    }
    /* h's gradient from step t: its gate gradients times R. */
    struct ocl_gemm_desc dh_desc = product(s.batch, u, gates, false, false);
    dh_desc.b_offset = s.r_offset;
    if (!launched ||
        !ocl_op_gemm(&op, TF_FLOAT, &dh_desc, dgates_step, params, dh_next))
      goto out;
  }
  struct ocl_buffer dh0_buf, dc0_buf;
  if (!span(&op, dh0, 0, state, &dh0_buf) ||
      !span(&op, lstm ? dc0 : dh0, 0, state, &dc0_buf))
    goto out;
  const struct ocl_arg initial_args[] = {
      OCL_BUF(dh_next_buf), OCL_BUF(carry_buf), OCL_INT(!lstm),
      OCL_BUF(dh_last_buf), OCL_BUF(carry_buf), OCL_INT(lstm),
      OCL_BUF(lengths_buf), OCL_BUF(dh0_buf),   OCL_BUF(dc0_buf),
      OCL_INT(s.batch),     OCL_INT(u),
  };
  struct ocl_gemm_desc dx_desc =
      product(s.rows, s.input_size, gates, false, false);
  struct ocl_gemm_desc dw_desc =
      product(gates, s.input_size, s.rows, true, false);
  struct ocl_gemm_desc dr_desc = product(gates, u, s.rows, true, false);
  dr_desc.b_offset = s.before_plane;
  dr_desc.c_offset = s.r_offset;
  if (step_launch(&op, &k->initial_state, &s, initial_args,
                  (int)(sizeof(initial_args) / sizeof(initial_args[0]))) &&
      ocl_op_gemm(&op, TF_FLOAT, &dx_desc, dgates_in, params, dx) &&
      ocl_op_gemm(&op, TF_FLOAT, &dw_desc, dgates_in, x, dparams) &&
      ocl_op_gemm(&op, TF_FLOAT, &dr_desc, dgates_rec, reserve, dparams))
    bias_gradients(&op, &s, dgates_in, dgates_rec, dparams);
out:
  ocl_op_end(&op);
}

void ocl_register_rnn_kernels(void)
{
  static const char *const host_args[] = {"sequence_lengths", "host_reserved",
                                          NULL};
  ocl_register_kernel(&(const struct ocl_kernel_spec){
      .op = "CudnnRNNV3",
      .create = rnn_create,
      .compute = rnn_forward_compute,
      .destroy = rnn_delete,
      .type_attrs = {"T"},
      .types = {TF_FLOAT},
      .host_args = host_args,
  });
  ocl_register_kernel(&(const struct ocl_kernel_spec){
      .op = "CudnnRNNBackpropV3",
      .create = rnn_create,
      .compute = rnn_backward_compute,
      .destroy = rnn_delete,
      .type_attrs = {"T"},
      .types = {TF_FLOAT},
      .host_args = host_args,
  });
}
