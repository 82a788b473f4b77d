"""Keras LSTM and GRU layers on OPENCL as one CudnnRNNV3 op each
(tfocl._keras sends them to Keras' own cuDNN path, kernels/rnn.c runs it):
the train step holds CudnnRNNV3 and its backprop on OPENCL instead of Keras'
loop, with the losses of Keras' loop on the CPU, masked layers included
(each row's unmasked steps packed first, whatever the padding); and the
cases the cuDNN path must leave to the loop keep it (float16, a model
pinned to the CPU, the compat switch off). The ops' values are
test_ops.py's (op_cases/rnn.py)."""
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
        # Rows padded on the right, on the left, with gaps, and one with no
        # token at all: Keras' loop skips masked steps, whatever the shape.
        x = rng.randint(1, 30, size=(64, 9)).astype("int64")
        for row, keep in enumerate(rng.randint(3, 10, size=64)):
            if row % 3 == 0:
                x[row, keep:] = 0
            elif row % 3 == 1:
                x[row, :9 - keep] = 0
            else:
                x[row, rng.rand(9) < 0.3] = 0
        x[5] = 0
        inputs = keras.Input((9,), dtype="int64")
        h = layers.Embedding(30, 6, mask_zero=True)(inputs)
        # Passed to each layer: Keras 3.16's RNN layers pass no mask on.
        mask = keras.ops.not_equal(inputs, 0)
        # Bidirectional gives its layers zero_output_for_mask.
        h = layers.Bidirectional(layers.GRU(5, return_sequences=True))(h, mask=mask)
        h = layers.LSTM(6, go_backwards=True, return_sequences=True)(h, mask=mask)
        h = layers.GRU(4, return_sequences=True)(h, mask=mask)
        h = layers.LSTM(8)(h, mask=mask)
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


def _trains_as_cudnn_ops(kind, layers):
    """`kind`'s model trains with one CudnnRNNV3 and its backprop per
    layer on OPENCL, no loop, and the losses of Keras' loop on the CPU."""
    cp, r = child(PROGRAM, kind, timeout=900)
    check(cp, r)
    opencl = r["placement"].get("OPENCL", {})
    assert opencl.get("CudnnRNNV3") == layers, r["placement"]
    assert opencl.get("CudnnRNNBackpropV3") == layers, r["placement"]
    assert not (LOOP_OPS & set(opencl)), r["placement"]
    assert not tfocl_lines(cp.stderr), cp.stderr
    cpu = _cpu_losses(kind)
    for got, want in zip(r["losses"], cpu):
        assert abs(got - want) <= 1e-4 * abs(want), (r["losses"], cpu)


@pytest.mark.slow
def test_keras_lstm_and_gru_run_as_cudnn_ops_with_the_loops_losses():
    # Bidirectional's two LSTMs, the backwards one, two GRUs (one backwards)
    # and the last LSTM.
    _trains_as_cudnn_ops("plain", 6)


@pytest.mark.slow
def test_masked_layers_run_as_cudnn_ops_with_the_loops_losses():
    """Masks of every shape (cuDNN itself takes right-padded ones only)."""
    _trains_as_cudnn_ops("masked", 5)


# One layer of each kind and configuration, eagerly: Keras' loop on the
# CPU (tf.device keeps the layer there) against OPENCL, which must have run
# Keras' cuDNN path (counted), for outputs, states and every gradient.
LAYER_PROGRAM = """
    import itertools, json, sys
    import numpy as np
    import keras
    import tensorflow as tf

    rnn = sys.modules["keras.src.backend.tensorflow.rnn"]
    cudnn_calls = [0]
    for name in ("_cudnn_lstm", "_cudnn_gru"):
        def counted(*args, _original=getattr(rnn, name), **kwargs):
            cudnn_calls[0] += 1
            return _original(*args, **kwargs)
        setattr(rnn, name, counted)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 7, 5)).astype("float32")
    lengths = [7, 5, 3, 6, 1, 4]
    def rows(first):  # each row's steps from first(n) on, n of them
        return np.array([[first(n) <= t < first(n) + n for t in range(7)] for n in lengths])
    masks = {"right": rows(lambda n: 0), "left": rows(lambda n: 7 - n),
             "middle": rows(lambda n: (7 - n) // 2),
             "gaps": np.array([[(t + r) % 3 != 1 for t in range(7)] for r in range(6)]),
             "empty_row": rows(lambda n: 0) * (np.arange(6) != 1)[:, None]}
    masks["broadcast"] = masks["gaps"][:1]  # [1, time]: Keras' loop broadcasts it

    def compare(name, kind, mask, initial=False, graph=False, **options):
        keras.utils.set_random_seed(1)
        layer = getattr(keras.layers, kind)(4, return_state=True, **options)
        states = [rng.standard_normal((6, 4)).astype("float32")
                  for _ in range(2 if kind == "LSTM" else 1)] if initial else None
        results = []
        for device in ("/CPU:0", "/device:OPENCL:0"):
            with tf.device(device):
                inputs = tf.identity(tf.constant(x))
                initial_state = [tf.identity(tf.constant(v)) for v in states] if states else None

                def run(inputs, *initial_state):
                    with tf.GradientTape() as tape:
                        tape.watch([inputs] + list(initial_state))
                        outputs = layer(inputs, mask=tf.constant(mask),
                                        initial_state=list(initial_state) or None)
                        loss = sum(tf.reduce_sum(o * (i + 1.5)) for i, o in enumerate(outputs))
                    watched = [inputs] + list(initial_state) + layer.trainable_weights
                    return list(outputs) + tape.gradient(loss, watched)
                if graph:  # unknown batch and time: every shape taken at run time
                    signature = [tf.TensorSpec([None, None, 5])] + [
                        tf.TensorSpec([None, 4]) for _ in initial_state or ()]
                    run = tf.function(run, input_signature=signature)
                cudnn_calls[0] = 0
                values = run(inputs, *(initial_state or ()))
                results.append(([v.numpy() for v in values], cudnn_calls[0]))
        (want, loop_calls), (got, calls) = results
        error = max(float((np.abs(a - b) / (1e-4 * np.abs(a) + 1e-5)).max())
                    for a, b in zip(want, got))
        # A tf.function traces Keras' cuDNN path once.
        if error > 1 or loop_calls != 0 or calls != 1:
            failures.append([name, kind, options, initial, graph, error, calls])
        return error

    failures, worst = [], 0.0
    for kind, sequences, backwards, zero, mask_name in itertools.product(
            ["LSTM", "GRU"], [True, False], [False, True], [False, True], masks):
        worst = max(worst, compare(mask_name, kind, masks[mask_name], initial=not zero,
                                   return_sequences=sequences, go_backwards=backwards,
                                   zero_output_for_mask=zero))
    for kind, mask_name in itertools.product(["LSTM", "GRU"], ["left", "gaps", "broadcast"]):
        worst = max(worst, compare(mask_name, kind, masks[mask_name], initial=True, graph=True,
                                   return_sequences=True))
    print("RESULT " + json.dumps({"failures": failures, "worst": worst}))
"""


def test_masked_layers_match_keras_loop_in_every_configuration():
    """LSTM and GRU, return_sequences, go_backwards and zero_output_for_mask
    each way, masks padded right, left or on both sides, with gaps, with an
    empty row and broadcast over the batch, initial states given or not,
    eagerly and in a tf.function of unknown shapes: outputs, states and
    gradients within 1e-4 (relative, 1e-5 absolute) of Keras' loop."""
    cp, r = child(LAYER_PROGRAM, timeout=600)
    check(cp, r)
    assert not r["failures"], r


@pytest.mark.slow
def test_float16_layers_keep_keras_loop():
    """float16 inputs (the kernels are float32's) stay on Keras' loop, on
    OPENCL."""
    cp, r = child(PROGRAM, "float16", timeout=900)
    check(cp, r)
    ops = set().union(*(set(o) for o in r["placement"].values()))
    assert not (CUDNN_OPS & ops), r["placement"]
    assert LOOP_OPS & _ops(r, "OPENCL"), r["placement"]


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


def test_unknown_inner_loop_gets_one_line():
    """A layer whose inner_loop tfocl does not know keeps it, and one line
    says what that costs."""
    cp, r = child("""
        import json, types
        from tfocl import _keras
        module = types.ModuleType("keras.src.layers.rnn.gru")
        class GRU:
            def inner_loop(self, sequences, initial_state, mask):
                return None
        module.GRU = GRU
        original = GRU.inner_loop
        _keras.patch_rnn_layer(module)
        _keras.patch_rnn_layer(module)  # said once
        print("RESULT " + json.dumps({"kept": GRU.inner_loop is original}))
    """)
    check(cp, r)
    assert r == {"kept": True}, r
    lines = tfocl_lines(cp.stderr)
    assert len(lines) == 1 and "GRU.inner_loop" in lines[0] and "generic loop" in lines[0], lines


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
