"""CudnnRNNV3 and CudnnRNNBackpropV3 (one unidirectional LSTM layer).
TensorFlow's CPU has no kernel for either: the reference is the same LSTM
written with TensorFlow's float64 CPU ops (cuDNN's params layout and
sequence lengths), its gradients by autodiff."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, raw


def lstm_reference(x, h0, c0, params, lengths, time_major):
    """cuDNN's LSTM from TensorFlow ops: (output, output_h, output_c), in
    the dtype of x. Past a sequence's length the output is zero and the
    state stays."""
    if time_major:
        x, h0, c0 = (tf.transpose(a, [1, 0, 2]) for a in (x, h0, c0))
    units, inputs = h0.shape[2], x.shape[2]
    steps = x.shape[1]
    gates = 4 * units
    w = tf.reshape(params[:gates * inputs], [gates, inputs])
    r = tf.reshape(params[gates * inputs:gates * (inputs + units)], [gates, units])
    bias = params[gates * (inputs + units):gates * (inputs + units + 1)] + params[gates * (inputs + units + 1):]
    h, c = h0[:, 0], c0[:, 0]
    outputs = []
    for t in range(steps):
        z = tf.matmul(x[:, t], w, transpose_b=True) + tf.matmul(h, r, transpose_b=True) + bias
        i, f, g, o = tf.split(z, 4, axis=1)
        c_new = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        h_new = tf.sigmoid(o) * tf.tanh(c_new)
        runs = (t < lengths)[:, None]
        c, h = tf.where(runs, c_new, c), tf.where(runs, h_new, h)
        outputs.append(tf.where(runs, h_new, tf.zeros_like(h_new)))
    out = tf.stack(outputs, 1) if steps else tf.zeros([x.shape[0], 0, units], x.dtype)
    h, c = h[:, None], c[:, None]
    if time_major:
        out, h, c = (tf.transpose(a, [1, 0, 2]) for a in (out, h, c))
    return out, h, c


def lstm_inputs(rng, batch, steps, input_size, units, time_major, lengths=None):
    x_shape = (steps, batch, input_size) if time_major else (batch, steps, input_size)
    state = (1, batch, units) if time_major else (batch, 1, units)
    params = 4 * units * (input_size + units + 2)
    f = np.float32
    return [rng.uniform(-2, 2, x_shape).astype(f), rng.uniform(-1, 1, state).astype(f),
            rng.uniform(-1, 1, state).astype(f), rng.uniform(-0.4, 0.4, params).astype(f),
            np.array(lengths if lengths is not None else [steps] * batch, np.int32)]


def lstm_forward(time_major):
    def fn(x, h0, c0, params, lengths):
        out = raw.CudnnRNNV3(input=x, input_h=h0, input_c=c0, params=params,
                             sequence_lengths=lengths, time_major=time_major)
        return list(out[:3])

    def ref(x, h0, c0, params, lengths):
        with tf.device("/CPU:0"):
            got = lstm_reference(*(tf.constant(a, tf.float64) for a in (x, h0, c0, params)),
                                 lengths, time_major)
        return [g.numpy().astype(np.float32) for g in got]
    return fn, ref


def lstm_gradients(time_major):
    """Forward, then backprop with the three outputs' gradients as inputs:
    the reserve space is the kernel's own, so the case runs the pair."""
    def fn(x, h0, c0, params, lengths, dout, dh, dc):
        out = raw.CudnnRNNV3(input=x, input_h=h0, input_c=c0, params=params,
                             sequence_lengths=lengths, time_major=time_major)
        grads = raw.CudnnRNNBackpropV3(
            input=x, input_h=h0, input_c=c0, params=params, sequence_lengths=lengths,
            output=out[0], output_h=out[1], output_c=out[2], output_backprop=dout,
            output_h_backprop=dh, output_c_backprop=dc, reserve_space=out[3],
            host_reserved=out[4], time_major=time_major)
        return list(grads)

    def ref(x, h0, c0, params, lengths, dout, dh, dc):
        with tf.device("/CPU:0"):
            values = [tf.constant(a, tf.float64) for a in (x, h0, c0, params)]
            with tf.GradientTape() as tape:
                tape.watch(values)
                out, h, c = lstm_reference(*values, lengths, time_major)
                loss = (tf.reduce_sum(out * dout.astype(np.float64)) + tf.reduce_sum(h * dh.astype(np.float64))
                        + tf.reduce_sum(c * dc.astype(np.float64)))
            grads = tape.gradient(loss, values)
        return [np.zeros(v.shape, np.float32) if g is None else g.numpy().astype(np.float32)
                for g, v in zip(grads, values)]
    return fn, ref


SHAPES = [  # batch, steps, input_size, units, time_major, lengths
    (3, 5, 4, 6, False, None),
    (3, 5, 4, 6, True, None),
    (5, 7, 3, 5, False, [7, 2, 0, 5, 1]),
    (17, 9, 33, 20, False, None),
]


def _cudnn_rnn(c):
    cases = []
    for batch, steps, size, units, time_major, lengths in SHAPES:
        fn, ref = lstm_forward(time_major)
        inputs = lstm_inputs(c.rng, batch, steps, size, units, time_major, lengths)
        label = f"b{batch} t{steps} {'time' if time_major else 'batch'}-major{' ragged' if lengths else ''}"
        cases.append((label, fn, inputs, {"reference": ("float64 TensorFlow ops on the CPU", ref),
                                          "tol": dict(rtol=1e-4, atol=1e-5)}))
    return cases


def _cudnn_rnn_backprop(c):
    cases = []
    for batch, steps, size, units, time_major, lengths in SHAPES:
        fn, ref = lstm_gradients(time_major)
        inputs = lstm_inputs(c.rng, batch, steps, size, units, time_major, lengths)
        out_shape = (steps, batch, units) if time_major else (batch, steps, units)
        inputs += [c.rng.uniform(-1, 1, out_shape).astype(np.float32),
                   c.rng.uniform(-1, 1, inputs[1].shape).astype(np.float32),
                   c.rng.uniform(-1, 1, inputs[1].shape).astype(np.float32)]
        label = f"b{batch} t{steps} {'time' if time_major else 'batch'}-major{' ragged' if lengths else ''}"
        cases.append((label, fn, inputs, {"reference": ("autodiff of float64 TensorFlow ops on the CPU", ref),
                                          "tol": dict(rtol=1e-4, atol=1e-4)}))
    return cases


BUILDERS["CudnnRNNV3"] = _cudnn_rnn
BUILDERS["CudnnRNNBackpropV3"] = _cudnn_rnn_backprop
