"""Keras LSTM and GRU layers on OPENCL as one CudnnRNNV3 op each
(tfocl._keras sends them to Keras' own cuDNN path, kernels/rnn.c runs it):
the train step holds CudnnRNNV3 and its backprop on OPENCL instead of Keras'
loop, with the losses of Keras' loop on the CPU; and the cases the cuDNN
path must leave to the loop keep it (masks, float16, a model pinned to the
CPU, the compat switch off). The ops' values are test_ops.py's
(op_cases/rnn.py)."""
import pytest

from test_keras_compat import check, child, tfocl_lines

# One model per kind, trained 3 epochs; the train step's ops per device are
# read back from TensorFlow's partitioned graphs.
PROGRAM = """
    import collections, json, os, sys
    import numpy as np
    import keras
    import tensorflow as tf
    from tensorflow.python.eager import context

    kind = sys.argv[1]
    rng = np.random.RandomState(0)
    keras.utils.set_random_seed(0)
    layers = keras.layers
    if kind == "float16":
        keras.mixed_precision.set_global_policy("mixed_float16")
    if kind == "masked":
        x = rng.randint(1, 30, size=(64, 9)).astype("int64")
        for row, keep in enumerate(rng.randint(3, 10, size=64)):
            x[row, keep:] = 0  # right-padded
        inputs = keras.Input((9,), dtype="int64")
        h = layers.Embedding(30, 6, mask_zero=True)(inputs)
        h = layers.LSTM(8)(h)
    else:
        x = rng.rand(64, 9, 5).astype("float32")
        inputs = keras.Input((9, 5))
        h = layers.Bidirectional(layers.LSTM(8, return_sequences=True))(inputs)
        h = layers.LSTM(6, go_backwards=True, return_sequences=True)(h)
        h = layers.GRU(5, return_sequences=True)(h)
        h = layers.GRU(5, go_backwards=True, return_sequences=True)(h)
        h = layers.LSTM(4)(h)
    out = layers.Dense(3, activation="softmax", dtype="float32")(h)
    y = (x.reshape(64, -1)[:, :5].sum(axis=1) * 7 % 3).astype("int64")
    model = keras.Model(inputs, out)
    # With the compat switch off, jit_compile="auto" would mean XLA.
    jit = False if os.environ.get("TFOCL_KERAS_COMPAT") == "0" else "auto"
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", jit_compile=jit)

    def step_ops(run):
        context.enable_run_metadata()
        result = run()
        metadata = context.export_run_metadata()
        context.disable_run_metadata()
        graphs = [[n for g in fg.partition_graphs for n in g.node] for fg in metadata.function_graphs]
        where = collections.defaultdict(collections.Counter)
        for n in max(graphs, key=len):
            where[n.device.split("device:")[-1].split(":")[0] if n.device else "?"][n.op] += 1
        return result, {d: dict(c) for d, c in where.items()}

    if kind == "pinned":
        tf.config.set_soft_device_placement(False)
        with tf.device("/CPU:0"):
            step = tf.function(lambda v: model(v, training=False))
            _, placement = step_ops(lambda: step(tf.constant(x)))
        print("RESULT " + json.dumps({"placement": placement}))
        sys.exit(0)
    history, placement = step_ops(lambda: model.fit(x, y, epochs=3, batch_size=16, verbose=0))
    print("RESULT " + json.dumps({"losses": history.history["loss"], "placement": placement}))
"""

CUDNN_OPS = {"CudnnRNNV3", "CudnnRNNBackpropV3"}
# Keras' loop: a While, lowered to Enter/Merge/Switch/LoopCond in the
# partitioned graphs.
LOOP_OPS = {"While", "StatelessWhile", "LoopCond"}


def _ops(result, device):
    return set(result["placement"].get(device, {}))


def _cpu_losses(kind):
    """The same program in a process without OPENCL devices: Keras' loop on
    TensorFlow's CPU."""
    cp, cpu = child(PROGRAM, kind, timeout=900, TFOCL_VISIBLE_DEVICES="")
    check(cp, cpu)
    assert not (CUDNN_OPS & _ops(cpu, "CPU")), cpu["placement"]
    return cpu["losses"]


@pytest.mark.slow
def test_keras_lstm_and_gru_run_as_cudnn_ops_with_the_loops_losses():
    cp, r = child(PROGRAM, "plain", timeout=900)
    check(cp, r)
    opencl = r["placement"].get("OPENCL", {})
    # Bidirectional's two LSTMs, the backwards one, two GRUs (one backwards)
    # and the last LSTM: six of each.
    assert opencl.get("CudnnRNNV3") == 6 and opencl.get("CudnnRNNBackpropV3") == 6, r["placement"]
    assert not (LOOP_OPS & set(opencl)), r["placement"]
    assert not tfocl_lines(cp.stderr), cp.stderr
    cpu = _cpu_losses("plain")
    for got, want in zip(r["losses"], cpu):
        assert abs(got - want) <= 1e-4 * abs(want), (r["losses"], cpu)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["masked", "float16"])
def test_layers_the_cudnn_op_cannot_take_keep_keras_loop(kind):
    """A mask (cuDNN takes right-padded ones only, and Keras asserts that at
    run time) and float16 inputs (the kernels are float32's) stay on Keras'
    loop, on OPENCL."""
    cp, r = child(PROGRAM, kind, timeout=900)
    check(cp, r)
    ops = set().union(*(set(o) for o in r["placement"].values()))
    assert not (CUDNN_OPS & ops), r["placement"]
    assert LOOP_OPS & _ops(r, "OPENCL"), r["placement"]
    if kind == "masked":
        cpu = _cpu_losses("masked")
        for got, want in zip(r["losses"], cpu):
            assert abs(got - want) <= 1e-4 * abs(want), (r["losses"], cpu)


def test_layers_pinned_to_the_cpu_stay_there():
    """tf.device("/CPU:0") around the model: Keras' loop on the CPU, not a
    CudnnRNNV3 that only OPENCL can run (strict placement would refuse it,
    soft placement would move it)."""
    cp, r = child(PROGRAM, "pinned", timeout=600)
    check(cp, r)
    ops = set().union(*(set(o) for o in r["placement"].values()))
    assert not (CUDNN_OPS & ops), r["placement"]
    # The weights live on OPENCL (built outside the scope): their reads stay
    # with them, the loop runs on the CPU.
    assert LOOP_OPS & _ops(r, "CPU"), r["placement"]


def test_keras_compat_off_keeps_keras_loop():
    cp, r = child(PROGRAM.replace("epochs=3", "epochs=1"), "plain", timeout=600, TFOCL_KERAS_COMPAT="0")
    check(cp, r)
    ops = set().union(*(set(o) for o in r["placement"].values()))
    assert not (CUDNN_OPS & ops), r["placement"]


def test_unknown_lstm_gets_one_line():
    cp, r = child("""
        import json, types
        from tfocl import _keras
        rnn_mod = types.ModuleType("keras.src.backend.tensorflow.rnn")
        def lstm(inputs, initial_state_h, initial_state_c, mask, kernel):
            return None
        rnn_mod.lstm = lstm
        _keras.patch_rnn(rnn_mod)
        _keras.patch_rnn(rnn_mod)  # said once
        print("RESULT " + json.dumps({"lstm": rnn_mod.lstm is lstm}))
    """)
    check(cp, r)
    assert r == {"lstm": True}, r
    lines = tfocl_lines(cp.stderr)
    assert len(lines) == 1 and "lstm() and gru()" in lines[0] and "generic loop" in lines[0], lines


def test_cudnn_op_refuses_what_it_lacks(tf):
    """A plain RNN, two layers and bad lengths: TensorFlow errors, no
    crash."""
    import numpy as np

    x = np.zeros((2, 3, 4), np.float32)
    h = np.zeros((2, 1, 5), np.float32)
    params = np.zeros(4 * 5 * (4 + 5 + 2), np.float32)
    with tf.device("/device:OPENCL:0"):
        with pytest.raises(tf.errors.UnimplementedError, match="rnn_tanh"):
            tf.raw_ops.CudnnRNNV3(input=x, input_h=h, input_c=h, params=params, rnn_mode="rnn_tanh",
                                  sequence_lengths=[3, 3], time_major=False)
        with pytest.raises(tf.errors.UnimplementedError, match="one layer"):
            h2 = np.zeros((2, 2, 5), np.float32)
            tf.raw_ops.CudnnRNNV3(input=x, input_h=h2, input_c=h2, params=params,
                                  sequence_lengths=[3, 3], time_major=False)
        with pytest.raises(tf.errors.InvalidArgumentError, match="sequence_lengths"):
            tf.raw_ops.CudnnRNNV3(input=x, input_h=h, input_c=h, params=params,
                                  sequence_lengths=[3, 4], time_major=False)
        with pytest.raises(tf.errors.InvalidArgumentError, match="params size"):
            tf.raw_ops.CudnnRNNV3(input=x, input_h=h, input_c=h, params=params[:-1],
                                  sequence_lengths=[3, 3], time_major=False)
