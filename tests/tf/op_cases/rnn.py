"""CudnnRNNV3 and CudnnRNNBackpropV3 (one unidirectional LSTM or GRU
layer). TensorFlow's CPU has no kernel for either: the reference is the same
layer written with TensorFlow's float64 CPU ops (cuDNN's params layout, gate
order and sequence lengths), its gradients by autodiff."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, raw


def rnn_reference(x, h0, c0, params, lengths, time_major, mode="lstm"):
    """cuDNN's LSTM or GRU from TensorFlow ops: (output, output_h,
    output_c), in the dtype of x (a GRU's output_c is a zero scalar). Past
    a sequence's length the output is zero and the state stays."""
    if time_major:
        x, h0 = (tf.transpose(a, [1, 0, 2]) for a in (x, h0))
        if mode == "lstm":
            c0 = tf.transpose(c0, [1, 0, 2])
    units, inputs = h0.shape[2], x.shape[2]
    steps = x.shape[1]
    gates = (4 if mode == "lstm" else 3) * units
    w = tf.reshape(params[:gates * inputs], [gates, inputs])
    r = tf.reshape(params[gates * inputs:gates * (inputs + units)], [gates, units])
    b_in = params[gates * (inputs + units):gates * (inputs + units + 1)]
    b_rec = params[gates * (inputs + units + 1):]
    h = h0[:, 0]
    c = c0[:, 0] if mode == "lstm" else None
    outputs = []
    for t in range(steps):
        runs = (t < lengths)[:, None]
        x_part = tf.matmul(x[:, t], w, transpose_b=True) + b_in
        h_part = tf.matmul(h, r, transpose_b=True) + b_rec
        if mode == "lstm":
            i, f, g, o = tf.split(x_part + h_part, 4, axis=1)
            c_new = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
            h_new = tf.sigmoid(o) * tf.tanh(c_new)
            c = tf.where(runs, c_new, c)
        else:
            xr, xz, xn = tf.split(x_part, 3, axis=1)
            hr, hz, hn = tf.split(h_part, 3, axis=1)
            reset, update = tf.sigmoid(xr + hr), tf.sigmoid(xz + hz)
            fresh = tf.tanh(xn + reset * hn)
            h_new = (1 - update) * fresh + update * h
        h = tf.where(runs, h_new, h)
        outputs.append(tf.where(runs, h_new, tf.zeros_like(h_new)))
    out = tf.stack(outputs, 1) if steps else tf.zeros([x.shape[0], 0, units], x.dtype)
    h = h[:, None]
    c = c[:, None] if mode == "lstm" else tf.zeros([], x.dtype)
    if time_major:
        out, h = (tf.transpose(a, [1, 0, 2]) for a in (out, h))
        if mode == "lstm":
            c = tf.transpose(c, [1, 0, 2])
    return out, h, c


def rnn_inputs(rng, batch, steps, input_size, units, time_major, lengths=None, mode="lstm"):
    x_shape = (steps, batch, input_size) if time_major else (batch, steps, input_size)
    state = (1, batch, units) if time_major else (batch, 1, units)
    params = (4 if mode == "lstm" else 3) * units * (input_size + units + 2)
    f = np.float32
    c0 = rng.uniform(-1, 1, state).astype(f) if mode == "lstm" else np.zeros((), f)
    return [rng.uniform(-2, 2, x_shape).astype(f), rng.uniform(-1, 1, state).astype(f), c0,
            rng.uniform(-0.4, 0.4, params).astype(f),
            np.array(lengths if lengths is not None else [steps] * batch, np.int32)]


def rnn_forward(time_major, mode):
    def fn(x, h0, c0, params, lengths):
        out = raw.CudnnRNNV3(input=x, input_h=h0, input_c=c0, params=params, rnn_mode=mode,
                             sequence_lengths=lengths, time_major=time_major)
        return list(out[:3])

    def ref(x, h0, c0, params, lengths):
        with tf.device("/CPU:0"):
            got = rnn_reference(*(tf.constant(a, tf.float64) for a in (x, h0, c0, params)),
                                lengths, time_major, mode)
        return [g.numpy().astype(np.float32) for g in got]
    return fn, ref


def rnn_gradients(time_major, mode):
    """Forward, then backprop with the three outputs' gradients as inputs:
    the reserve space is the kernel's own, so the case runs the pair."""
    def fn(x, h0, c0, params, lengths, dout, dh, dc):
        out = raw.CudnnRNNV3(input=x, input_h=h0, input_c=c0, params=params, rnn_mode=mode,
                             sequence_lengths=lengths, time_major=time_major)
        grads = raw.CudnnRNNBackpropV3(
            input=x, input_h=h0, input_c=c0, params=params, sequence_lengths=lengths,
            output=out[0], output_h=out[1], output_c=out[2], output_backprop=dout,
            output_h_backprop=dh, output_c_backprop=dc, reserve_space=out[3],
            host_reserved=out[4], time_major=time_major, rnn_mode=mode)
        return list(grads)

    def ref(x, h0, c0, params, lengths, dout, dh, dc):
        with tf.device("/CPU:0"):
            values = [tf.constant(a, tf.float64) for a in (x, h0, c0, params)]
            with tf.GradientTape() as tape:
                tape.watch(values)
                out, h, c = rnn_reference(*values, lengths, time_major, mode)
                loss = (tf.reduce_sum(out * dout.astype(np.float64)) + tf.reduce_sum(h * dh.astype(np.float64))
                        + tf.reduce_sum(c * dc.astype(np.float64)))
            grads = tape.gradient(loss, values)
        return [np.zeros(v.shape, np.float32) if g is None or mode == "gru" and k == 2
                else g.numpy().astype(np.float32) for k, (g, v) in enumerate(zip(grads, values))]
    return fn, ref


SHAPES = [  # batch, steps, input_size, units, time_major, lengths
    (3, 5, 4, 6, False, None),
    (3, 5, 4, 6, True, None),
    (5, 7, 3, 5, False, [7, 2, 0, 5, 1]),
    (17, 9, 33, 20, False, None),
]


def _label(mode, batch, steps, time_major, lengths):
    return f"{mode} b{batch} t{steps} {'time' if time_major else 'batch'}-major{' ragged' if lengths else ''}"


def _cudnn_rnn(c):
    cases = []
    for mode in ("lstm", "gru"):
        for batch, steps, size, units, time_major, lengths in SHAPES:
            fn, ref = rnn_forward(time_major, mode)
            inputs = rnn_inputs(c.rng, batch, steps, size, units, time_major, lengths, mode)
            cases.append((_label(mode, batch, steps, time_major, lengths), fn, inputs,
                          {"reference": ("float64 TensorFlow ops on the CPU", ref),
                           "tol": dict(rtol=1e-4, atol=1e-5)}))
    return cases


def _cudnn_rnn_backprop(c):
    cases = []
    for mode in ("lstm", "gru"):
        for batch, steps, size, units, time_major, lengths in SHAPES:
            fn, ref = rnn_gradients(time_major, mode)
            inputs = rnn_inputs(c.rng, batch, steps, size, units, time_major, lengths, mode)
            out_shape = (steps, batch, units) if time_major else (batch, steps, units)
            inputs += [c.rng.uniform(-1, 1, out_shape).astype(np.float32),
                       c.rng.uniform(-1, 1, inputs[1].shape).astype(np.float32),
                       c.rng.uniform(-1, 1, inputs[2].shape).astype(np.float32)]
            cases.append((_label(mode, batch, steps, time_major, lengths), fn, inputs,
                          {"reference": ("autodiff of float64 TensorFlow ops on the CPU", ref),
                           "tol": dict(rtol=1e-4, atol=1e-4)}))
    return cases


BUILDERS["CudnnRNNV3"] = _cudnn_rnn
BUILDERS["CudnnRNNBackpropV3"] = _cudnn_rnn_backprop
