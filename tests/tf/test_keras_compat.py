"""tfocl's Python side (plugin/python/tfocl, activated by tfocl.pth; in the
suites by conftest.py): unchanged Keras programs on OPENCL, and
tf.config.set_logical_device_configuration on OPENCL devices.

The patches act when Keras/TensorFlow is imported, so every program runs in a
fresh interpreter (run_python) and prints one `RESULT {json}` line."""
import json
import os
import shutil
import textwrap

import pytest

from conftest import PYTHON_SIDE, StartedPython, run_python

NO_XLA = "No JIT device registered for OPENCL"
# The child interpreters' noise (TensorFlow's C++ logging) stays out.
QUIET = {"TF_CPP_MIN_LOG_LEVEL": "3"}


def parse(cp):
    lines = [line for line in cp.stdout.splitlines() if line.startswith("RESULT ")]
    result = json.loads(lines[-1][len("RESULT "):]) if lines else None
    return cp, result


def child(code, *args, timeout=600, **env):
    return parse(run_python(textwrap.dedent(code), *args, timeout=timeout, **{**QUIET, **env}))


def start_child(code, *args, **env):
    return StartedPython(textwrap.dedent(code), *args, **{**QUIET, **env})


def tfocl_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("tfocl:")]


def check(cp, result):
    assert cp.returncode == 0 and result is not None, (
        f"rc {cp.returncode}\n{cp.stdout[-3000:]}\n{cp.stderr[-5000:]}")


def test_startup_hook_imports_no_tensorflow():
    cp, r = child("""
        import json, sys
        finders = [type(f).__module__ for f in sys.meta_path if getattr(f, "_tfocl_finder", False)]
        print("RESULT " + json.dumps({"finders": finders,
              "loaded": sorted(m for m in ("tensorflow", "keras", "numpy") if m in sys.modules)}))
    """)
    check(cp, r)
    assert r == {"finders": ["tfocl._hook"], "loaded": []}, r
    assert not tfocl_lines(cp.stderr), cp.stderr


# -- Keras: jit_compile="auto" and grouped convolutions --------------------

# An unchanged Keras program: default compile(), no tf.device, soft placement
# as TensorFlow leaves it. The train step's placement is read back from
# TensorFlow's partitioned graphs (as examples/train_digits.py does).
KERAS_PROGRAM = """
    import collections, json, sys
    import numpy as np
    import keras
    import tensorflow as tf
    from tensorflow.python.eager import context

    kind = sys.argv[1]
    rng = np.random.RandomState(0)
    keras.utils.set_random_seed(0)
    if kind == "mlp":
        x = rng.rand(256, 20).astype("float32")
        y = (x[:, :5].sum(axis=1) > 2.5).astype("int64") + (x[:, 5] > 0.5)
        model = keras.Sequential([
            keras.Input((20,)),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(3, activation="softmax"),
        ])
    else:
        x = rng.rand(128, 12, 12, 4).astype("float32")
        y = (x[:, :6, :, 0].mean(axis=(1, 2)) > 0.5).astype("int64") + (x[:, :, :, 1].mean(axis=(1, 2)) > 0.5)
        model = keras.Sequential([
            keras.Input((12, 12, 4)),
            keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
            keras.layers.Conv2D(8, 3, padding="same", groups=4, activation="relu"),  # grouped: Keras' XLA case
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(3, activation="softmax"),
        ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

    context.enable_run_metadata()
    history = model.fit(x, y, epochs=3, batch_size=32, verbose=0)
    metadata = context.export_run_metadata()
    context.disable_run_metadata()
    # The train step is the largest function fit() ran (Keras 3.16 reads
    # the iterator in a function of its own; the rest are one-op functions).
    graphs = [[n for g in fg.partition_graphs for n in g.node] for fg in metadata.function_graphs]
    where = collections.defaultdict(collections.Counter)
    for n in max(graphs, key=len):
        where[n.device.split("device:")[-1].split(":")[0] if n.device else "?"][n.op] += 1
    predictions = model.predict(x, verbose=0)
    loss, accuracy = model.evaluate(x, y, verbose=0)
    print("RESULT " + json.dumps({
        "jit_compile": model.jit_compile,
        "losses": history.history["loss"],
        "placement": {d: dict(c) for d, c in where.items()},
        "predictions": list(predictions.shape),
        "evaluate": [loss, accuracy],
        "weights": sorted({v.value.device.split("device:")[-1].split(":")[0] for v in model.weights}),
    }))
"""

TRAIN_STEP_OPS = {
    "mlp": {"MatMul", "BiasAddGrad", "Softmax"},
    "cnn": {"Conv2DBackpropFilter", "Conv2DBackpropInput", "MaxPool", "MaxPoolGrad", "MatMul"},
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_unchanged_keras_program_trains_on_opencl(kind):
    cp, r = child(KERAS_PROGRAM, kind)
    check(cp, r)
    assert r["jit_compile"] is False
    assert r["weights"] == ["OPENCL"], r["weights"]
    on_opencl = r["placement"].get("OPENCL", {})
    assert sum(on_opencl.values()) > 50, r["placement"]
    missing = TRAIN_STEP_OPS[kind] - set(on_opencl)
    assert not missing, f"not in the train step on OPENCL: {sorted(missing)}; {r['placement']}"
    everywhere = {op for ops in r["placement"].values() for op in ops}
    assert not {op for op in everywhere if "Xla" in op}, everywhere
    assert r["losses"][-1] < r["losses"][0], r["losses"]
    assert r["predictions"] == [256 if kind == "mlp" else 128, 3]
    assert all(v == v for v in r["evaluate"]), r["evaluate"]
    assert not tfocl_lines(cp.stderr), cp.stderr


@pytest.mark.slow
def test_keras_compat_off_brings_the_xla_failure_back():
    cp, r = child(KERAS_PROGRAM, "mlp", TFOCL_KERAS_COMPAT="0")
    assert cp.returncode != 0 and r is None, cp.stdout[-2000:]
    assert NO_XLA in cp.stderr, cp.stderr[-3000:]


@pytest.mark.slow
def test_explicit_jit_compile_still_fails_with_tensorflows_error():
    program = KERAS_PROGRAM.replace(
        'loss="sparse_categorical_crossentropy", metrics=["accuracy"])',
        'loss="sparse_categorical_crossentropy", metrics=["accuracy"], jit_compile=True)')
    assert program != KERAS_PROGRAM
    cp, r = child(program, "mlp")
    assert cp.returncode != 0 and r is None, cp.stdout[-2000:]
    assert NO_XLA in cp.stderr, cp.stderr[-3000:]


GROUPED_CONV = """
    import json, sys
    import numpy as np
    import keras
    import tensorflow as tf

    rng = np.random.RandomState(1)
    out = {}
    x = rng.rand(2, 9, 9, 6).astype("float32")
    k = rng.rand(3, 3, 2, 9).astype("float32")  # 3 groups of 2 input channels
    # The groups one by one, as plain convolutions on the CPU.
    with tf.device("/CPU:0"):
        want = tf.concat([tf.nn.conv2d(x[..., 2 * g:2 * g + 2], k[..., 3 * g:3 * g + 3], 1, "SAME")
                          for g in range(3)], axis=-1).numpy()
    try:
        got = keras.ops.conv(x, k, padding="same")
        out["grouped"] = {"device": got.device, "err": float(np.abs(got.numpy() - want).max())}
    except Exception as e:
        out["grouped"] = {"error": f"{type(e).__name__}: {e}"}
    # The other convolutions never went through XLA: they are as they were.
    xt = rng.rand(2, 9, 9, 3).astype("float32")
    out["plain"] = keras.ops.conv(xt, rng.rand(3, 3, 3, 4).astype("float32")).device
    out["depthwise"] = keras.ops.depthwise_conv(xt, rng.rand(3, 3, 3, 2).astype("float32")).device
    out["transpose"] = keras.ops.conv_transpose(xt, rng.rand(3, 3, 5, 3).astype("float32"), strides=2).device
    nn = sys.modules.get("keras.src.backend.tensorflow.nn") or sys.modules["keras.src.backend.tensorflow.ops.nn"]
    out["patched"] = hasattr(nn.conv, "__tfocl_wrapped__")
    print("RESULT " + json.dumps(out))
"""


def test_grouped_conv_runs_on_opencl_without_xla():
    cp, r = child(GROUPED_CONV)
    check(cp, r)
    assert r["patched"] is True
    assert "error" not in r["grouped"], r["grouped"]
    assert r["grouped"]["device"].endswith("OPENCL:0"), r
    assert r["grouped"]["err"] < 1e-4, r
    for op in ("plain", "depthwise", "transpose"):
        assert r[op].endswith("OPENCL:0"), r


def test_grouped_conv_with_keras_compat_off_is_keras_xla():
    cp, r = child(GROUPED_CONV, TFOCL_KERAS_COMPAT="0")
    check(cp, r)
    assert r["patched"] is False
    assert NO_XLA in r["grouped"].get("error", ""), r


# Keras 3.16's TensorFlow mean() reduces float16 through XLA; mixed_float16's
# GlobalAveragePooling takes it. The program says whether this Keras has that
# path ("xla_path": its mean holds the nested xla_reduce_mean), so the
# assertions hold on every Keras the suites run.
FLOAT16_MEAN = """
    import json, sys, types
    import numpy as np
    import keras
    import tensorflow as tf

    np_mod = (sys.modules.get("keras.src.backend.tensorflow.ops.numpy")
              or sys.modules["keras.src.backend.tensorflow.numpy"])
    original = getattr(np_mod.mean, "__tfocl_wrapped__", np_mod.mean)
    out = {"patched": hasattr(np_mod.mean, "__tfocl_wrapped__"),
           "xla_path": any(isinstance(c, types.CodeType) and c.co_name == "xla_reduce_mean"
                           for c in original.__code__.co_consts)}
    rng = np.random.RandomState(2)
    x = (rng.rand(3, 5, 7, 4) * 8 - 4).astype("float16")
    try:
        with tf.device("/OPENCL:0"):
            got = keras.ops.mean(tf.constant(x), axis=(1, 2), keepdims=True)
            # 40000 twos: a float16 running sum overflows at 65504, a float32
            # one (XLA's, and the patch's) gives exactly 2.
            big = keras.ops.mean(tf.fill([200, 200], tf.constant(2.0, tf.float16)))
        want = x.astype("float32").mean(axis=(1, 2), keepdims=True).astype("float16")
        out["mean"] = {"device": got.device, "dtype": got.dtype.name, "shape": list(got.shape),
                       "err": float(np.abs(got.numpy().astype("float32") - want.astype("float32")).max()),
                       "big": float(big.numpy())}
    except Exception as e:
        out["mean"] = {"error": f"{type(e).__name__}: {e}"}
    # An unchanged mixed-precision program: default compile(), a fit.
    try:
        keras.mixed_precision.set_global_policy("mixed_float16")
        keras.utils.set_random_seed(1)
        model = keras.Sequential([
            keras.Input((8, 8, 3)),
            keras.layers.Conv2D(4, 3, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(3, dtype="float32"),
        ])
        model.compile(optimizer="adam",
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        hist = model.fit(rng.rand(16, 8, 8, 3).astype("float32"), rng.randint(0, 3, 16),
                         batch_size=8, epochs=2, verbose=0)
        out["fit"] = {"losses": hist.history["loss"]}
    except Exception as e:
        out["fit"] = {"error": f"{type(e).__name__}: {e}"}
    print("RESULT " + json.dumps(out))
"""


# Keras' Adam as the plugin's _TfoclKerasAdam (one op per weight; alpha,
# 1 - beta_1 and 1 - beta_2 once per step) in tf.functions on OPENCL, where
# the TensorFlow wheel lets a plugin update variables in place; run against
# the same training on the CPU, where Keras keeps its own ops. "twice"
# applies the optimizer twice in one tf.function: the second apply's
# scalars must see the incremented step. Eager applies keep Keras' ops.
ADAM_PROGRAM = """
    import collections, json, sys
    import numpy as np
    import keras
    import tensorflow as tf
    from tensorflow.python.eager import context

    eager_too = sys.argv[1] == "1"
    rng = np.random.RandomState(3)
    x = rng.rand(96, 10).astype("float32")
    y = (x[:, :4].sum(axis=1) > 2).astype("int64") + (x[:, 4] > 0.5)

    def traced_ops(run):
        context.enable_run_metadata()
        run()
        metadata = context.export_run_metadata()
        context.disable_run_metadata()
        # The traced ops, before TensorFlow's and tfocl's passes, with
        # the functions they call (Keras' step nests one).
        counts = []
        for fg in metadata.function_graphs:
            g = fg.pre_optimization_graph
            nodes = list(g.node) + [n for f in g.library.function for n in f.node_def]
            counts.append(collections.Counter(n.op for n in nodes))
        return dict(max(counts, key=lambda c: sum(c.values())))

    def fit(device, make_optimizer):
        with tf.device(device):
            keras.utils.set_random_seed(0)
            model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(16, activation="relu"),
                                      keras.layers.Dense(3)])
            model.compile(optimizer=make_optimizer(),
                          loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            losses = []
            ops = traced_ops(lambda: losses.extend(
                model.fit(x, y, batch_size=32, epochs=3, verbose=0, shuffle=False).history["loss"]))
            return {"losses": losses, "ops": ops,
                    "weights": [float(np.abs(w).sum()) for w in model.get_weights()]}

    grads = [rng.rand(4, 3).astype("float32") - 0.5 for _ in range(2)]

    def twice(device):
        with tf.device(device):
            w = keras.Variable(np.linspace(-1, 1, 12).reshape(4, 3).astype("float32"))
            optimizer = keras.optimizers.Adam(0.1)
            optimizer.build([w])
            g1, g2 = (tf.constant(g) for g in grads)

            @tf.function
            def step():
                optimizer.apply([g1], [w])
                optimizer.apply([g2], [w])
            ops = traced_ops(step)
            step()
            return {"w": w.numpy().ravel().tolist(), "ops": ops}

    def eager(device):
        with tf.device(device):
            w = keras.Variable(np.ones((2, 3), "float32"))
            optimizer = keras.optimizers.Adam(0.1)
            optimizer.build([w])
            for _ in range(3):
                optimizer.apply([tf.constant(np.full((2, 3), 0.5, "float32"))], [w])
            return w.numpy().ravel().tolist()

    out = {}
    for name, make in (("adam", lambda: keras.optimizers.Adam(1e-2)),
                       ("adamw", lambda: keras.optimizers.AdamW(1e-2, weight_decay=0.05)),
                       ("amsgrad", lambda: keras.optimizers.Adam(1e-2, amsgrad=True))):
        out[name] = {"opencl": fit("/OPENCL:0", make), "cpu": fit("/CPU:0", make)}
    out["twice"] = {"opencl": twice("/OPENCL:0"), "cpu": twice("/CPU:0")}
    if eager_too:
        out["eager"] = {"opencl": eager("/OPENCL:0"), "cpu": eager("/CPU:0")}
    print("RESULT " + json.dumps(out))
"""


def _close(got, want, rtol):
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert abs(g - w) <= rtol * max(abs(w), 1e-3), (got, want)


def test_adam_runs_as_one_op_per_weight_with_the_cpus_results():
    from conftest import has_variable_api
    fused = has_variable_api()
    cp, r = child(ADAM_PROGRAM, "1" if fused else "0")
    check(cp, r)
    for name in ("adam", "adamw"):
        opencl, cpu = r[name]["opencl"], r[name]["cpu"]
        assert "_TfoclKerasAdam" not in cpu["ops"], cpu["ops"]
        assert cpu["ops"].get("AssignAddVariableOp", 0) >= 8, cpu["ops"]
        if fused:
            # 4 weights: one op each, beta_1 ** t and beta_2 ** t once.
            assert opencl["ops"].get("_TfoclKerasAdam") == 4, opencl["ops"]
            assert opencl["ops"].get("Pow") == 2, opencl["ops"]
            assert "AssignAddVariableOp" not in opencl["ops"], opencl["ops"]
        else:
            # No op where TensorFlow lets no plugin update in place.
            assert "_TfoclKerasAdam" not in opencl["ops"], opencl["ops"]
            assert opencl["ops"].get("AssignAddVariableOp", 0) >= 8, opencl["ops"]
        _close(opencl["losses"], cpu["losses"], 1e-4)
        _close(opencl["weights"], cpu["weights"], 1e-4)
        assert opencl["losses"][-1] < opencl["losses"][0], opencl["losses"]
    # amsgrad keeps Keras' update (the op has no v_hat).
    amsgrad = r["amsgrad"]["opencl"]
    assert "_TfoclKerasAdam" not in amsgrad["ops"], amsgrad["ops"]
    _close(amsgrad["losses"], r["amsgrad"]["cpu"]["losses"], 1e-4)
    twice = r["twice"]
    if fused:
        assert twice["opencl"]["ops"].get("_TfoclKerasAdam") == 2, twice["opencl"]["ops"]
        assert twice["opencl"]["ops"].get("Pow") == 4, twice["opencl"]["ops"]
    # A second apply reading the first's scalars was 4e-2 off.
    _close(twice["opencl"]["w"], twice["cpu"]["w"], 1e-4)
    if "eager" in r:
        _close(r["eager"]["opencl"], r["eager"]["cpu"], 1e-4)
    assert not tfocl_lines(cp.stderr), cp.stderr


def test_float16_mean_runs_on_opencl_without_xla():
    cp, r = child(FLOAT16_MEAN)
    check(cp, r)
    assert r["patched"] is r["xla_path"], r
    assert "error" not in r["mean"], r["mean"]
    assert r["mean"]["device"].endswith("OPENCL:0"), r
    assert r["mean"]["dtype"] == "float16" and r["mean"]["shape"] == [3, 1, 1, 4], r
    assert r["mean"]["err"] < 4e-3, r  # float16 rounding of values within [-4, 4]
    assert r["mean"]["big"] == 2.0, r
    assert "error" not in r["fit"], r["fit"]
    losses = r["fit"]["losses"]
    assert len(losses) == 2 and all(0.0 < v < 10.0 for v in losses), r


def test_float16_mean_with_keras_compat_off_is_keras_xla():
    cp, r = child(FLOAT16_MEAN, TFOCL_KERAS_COMPAT="0")
    check(cp, r)
    if not r["xla_path"]:
        pytest.skip("this Keras reduces float16 means without XLA: nothing to undo")
    assert r["patched"] is False
    assert NO_XLA in r["mean"].get("error", ""), r
    assert NO_XLA in r["fit"].get("error", ""), r


def test_unknown_mean_gets_one_line():
    cp, r = child("""
        import json, types
        from tfocl import _keras
        numpy_mod = types.ModuleType("keras.src.backend.tensorflow.ops.numpy")
        def mean(x, axis=None):
            return "keras"
        numpy_mod.mean = mean
        _keras.patch_mean(numpy_mod)
        _keras.patch_mean(numpy_mod)  # said once
        print("RESULT " + json.dumps({"mean": numpy_mod.mean is mean}))
    """)
    check(cp, r)
    assert r == {"mean": True}, r
    lines = tfocl_lines(cp.stderr)
    assert len(lines) == 1, cp.stderr
    assert "float16 means" in lines[0] and "not patched" in lines[0], lines


# ConvNeXtTiny: Conv2D with groups == channels (its depthwise convolutions),
# LayerNormalization, gelu, layer scale. One train step with every op on
# OPENCL (soft placement off inside tf.device), against the same step of a
# CPU-only process (TFOCL_VISIBLE_DEVICES="": no OPENCL device, so Keras runs
# its grouped convolutions through XLA on the CPU as designed) from the same
# weights and batch.
CONVNEXT = """
    import json, sys
    import numpy as np
    import keras
    import tensorflow as tf

    where, path = sys.argv[1], sys.argv[2]
    if where == "cpu":
        assert not tf.config.list_physical_devices("OPENCL")
        keras.utils.set_random_seed(0)
        model = keras.applications.ConvNeXtTiny(input_shape=(32, 32, 3), weights=None, classes=10)
        rng = np.random.RandomState(0)
        x = (rng.rand(4, 32, 32, 3) * 255).astype("float32")
        y = rng.randint(0, 10, 4).astype("int64")
        np.savez(path, x=x, y=y, *model.get_weights())
        device = "/CPU:0"
    else:
        data = np.load(path)
        x, y = data["x"], data["y"]
        model = keras.applications.ConvNeXtTiny(input_shape=(32, 32, 3), weights=None, classes=10)
        model.set_weights([data[f"arr_{i}"] for i in range(len(model.weights))])
        # The step, not the weights' initialisers, is what must run on OPENCL.
        tf.config.set_soft_device_placement(False)
        device = "/device:OPENCL:0"
    with tf.device(device):
        # Small enough that the loss after the update says something (at
        # 1e-2 both devices' predictions saturate to a loss of 0).
        optimizer = keras.optimizers.SGD(learning_rate=1e-4)
        loss_fn = keras.losses.SparseCategoricalCrossentropy()

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss, tf.linalg.global_norm(grads)

        first, norm = step(x, y)
        after = float(loss_fn(y, model(x, training=False)))
    print("RESULT " + json.dumps({"step": float(first), "grad_norm": float(norm), "after": after,
                                  "device": model.weights[0].value.device}))
"""


@pytest.mark.slow
def test_convnext_train_step_matches_cpu(tmp_path):
    path = str(tmp_path / "convnext.npz")
    cp, cpu = child(CONVNEXT, "cpu", path, timeout=900, TFOCL_VISIBLE_DEVICES="")
    check(cp, cpu)
    cp, ocl = child(CONVNEXT, "opencl", path, timeout=900)
    check(cp, ocl)
    assert ocl["device"].endswith("OPENCL:0"), ocl
    print(f"ConvNeXtTiny step loss: OPENCL {ocl['step']:.6f} CPU {cpu['step']:.6f}; "
          f"gradient norm {ocl['grad_norm']:.6f} vs {cpu['grad_norm']:.6f}; "
          f"after the update {ocl['after']:.6f} vs {cpu['after']:.6f}")
    assert abs(ocl["step"] - cpu["step"]) <= 1e-3, (ocl, cpu)
    assert abs(ocl["grad_norm"] - cpu["grad_norm"]) <= 1e-3 * cpu["grad_norm"], (ocl, cpu)
    assert abs(ocl["after"] - cpu["after"]) <= 1e-3, (ocl, cpu)


# -- The hook itself -------------------------------------------------------

def _fake_keras(root, trainer_source):
    for d in ("keras", "keras/src", "keras/src/trainers"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    files = {
        "keras/__init__.py": "from keras.src.trainers import trainer\n",
        "keras/src/__init__.py": "",
        "keras/src/trainers/__init__.py": "",
        "keras/src/trainers/trainer.py": textwrap.dedent(trainer_source),
    }
    for name, text in files.items():
        with open(os.path.join(root, name), "w") as f:
            f.write(text)


def _pythonpath(*first):
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join([*first, *rest])


@pytest.mark.parametrize("trainer", [
    # A Keras whose Trainer has no such method at all.
    "class Trainer:\n    pass\n",
    # One where it takes other arguments.
    "class Trainer:\n    def _resolve_auto_jit_compile(self, strategy):\n        return True\n",
])
def test_unknown_keras_gets_one_line_and_no_patch(tmp_path, trainer):
    _fake_keras(str(tmp_path), trainer)
    cp, r = child("""
        import json
        import keras
        from keras.src.trainers.trainer import Trainer
        method = vars(Trainer).get("_resolve_auto_jit_compile")
        print("RESULT " + json.dumps({"keras": keras.__file__,
                                      "patched": hasattr(method, "__tfocl_wrapped__")}))
    """, PYTHONPATH=_pythonpath(str(tmp_path)))
    check(cp, r)
    assert r["keras"].startswith(str(tmp_path)), r
    assert r["patched"] is False
    lines = tfocl_lines(cp.stderr)
    assert len(lines) == 1, cp.stderr
    assert "jit_compile=False" in lines[0] and "not patched" in lines[0], lines


def test_unknown_conv_and_context_get_one_line_each():
    cp, r = child("""
        import json, types
        from tfocl import _keras, _tfconfig
        nn = types.ModuleType("keras.src.backend.tensorflow.nn")
        def conv(inputs, kernel, strides=1, padding="valid", data_format=None):
            return "keras"
        nn.conv = conv
        _keras.patch_conv(nn)
        _keras.patch_conv(nn)  # said once
        ctx = types.ModuleType("tensorflow.python.eager.context")
        class Context:
            def set_logical_device_configuration(self, dev, virtual_devices):
                pass
        ctx.Context = Context
        _tfconfig.patch_context(ctx)
        print("RESULT " + json.dumps({"conv": nn.conv is conv,
              "context": not hasattr(Context.set_logical_device_configuration, "__tfocl_wrapped__")}))
    """)
    check(cp, r)
    assert r == {"conv": True, "context": True}, r
    lines = tfocl_lines(cp.stderr)
    assert len(lines) == 2, cp.stderr
    assert "grouped convolutions" in lines[0] and "not patched" in lines[0], lines
    assert "set_logical_device_configuration is not patched" in lines[1], lines
    assert "TFOCL_MEMORY_LIMIT_MB" in lines[1], lines


def test_hook_is_idempotent(tmp_path):
    """Two copies of tfocl on sys.path, a second install, a re-imported copy
    and a reloaded Keras module: one finder, each function wrapped once."""
    copy = str(tmp_path / "copy")
    shutil.copytree(PYTHON_SIDE, copy)
    cp, r = child("""
        import importlib, json, site, sys
        site.addsitedir(sys.argv[1])        # a second tfocl.pth: its import is a no-op
        import tfocl._hook
        tfocl._hook.install()
        import keras
        from keras.src.trainers import trainer
        # A second, distinct copy of the package, imported after Keras.
        for name in [m for m in sys.modules if m == "tfocl" or m.startswith("tfocl.")]:
            del sys.modules[name]
        sys.path.insert(0, sys.argv[1])
        import tfocl
        second = tfocl.__file__
        importlib.reload(trainer)
        from keras.src.optimizers import adam
        adam = importlib.reload(adam)
        nn = sys.modules.get("keras.src.backend.tensorflow.nn") or sys.modules["keras.src.backend.tensorflow.ops.nn"]
        cls = getattr(trainer, "Trainer", None) or trainer.BaseTrainer
        from tensorflow.python.eager import context
        def depth(fn):
            n = 0
            while hasattr(fn, "__tfocl_wrapped__"):
                fn, n = fn.__tfocl_wrapped__, n + 1
            return n
        print("RESULT " + json.dumps({
            "finders": sum(getattr(f, "_tfocl_finder", False) for f in sys.meta_path),
            "second": second,
            "trainer": depth(vars(cls)["_resolve_auto_jit_compile"]),
            "conv": depth(nn.conv),
            "context": depth(context.Context.set_logical_device_configuration),
            "adam": [depth(vars(adam.Adam)[name]) for name in ("update_step", "_backend_update_step")],
        }))
    """, copy)
    check(cp, r)
    assert r["second"].startswith(copy), r
    assert r == {"finders": 1, "second": r["second"], "trainer": 1, "conv": 1, "context": 1,
                 "adam": [1, 1]}, r
    assert not tfocl_lines(cp.stderr), cp.stderr


# -- tf.config.set_logical_device_configuration on OPENCL -----------------

# 128 MiB fits under a 256 MiB limit, 512 MiB does not (tf.zeros: one
# allocation of that size on the device).
MEMORY = """
    import json, os, sys
    import tensorflow as tf

    mode = sys.argv[1]
    out = {}
    dev = tf.config.list_physical_devices("OPENCL")[0]
    if mode == "config":
        config = [tf.config.LogicalDeviceConfiguration(memory_limit=256)]
        tf.config.set_logical_device_configuration(dev, config)
        out["get"] = tf.config.get_logical_device_configuration(dev) == config
        try:
            tf.config.experimental.set_memory_growth(dev, True)
            out["growth"] = "accepted"
        except ValueError as e:
            out["growth"] = str(e)
    out["env"] = os.environ.get("TFOCL_MEMORY_LIMIT_MB")
    for mib in (128, 512):
        try:
            with tf.device("/device:OPENCL:0"):
                t = tf.zeros([mib << 18], tf.float32)
            out[str(mib)] = t.device
            del t
        except tf.errors.ResourceExhaustedError:
            out[str(mib)] = "ResourceExhaustedError"
    out["logical"] = len(tf.config.list_logical_devices("OPENCL"))
    if mode == "config":
        try:
            tf.config.set_logical_device_configuration(
                dev, [tf.config.LogicalDeviceConfiguration(memory_limit=128)])
            out["after_init"] = "accepted"
        except RuntimeError as e:
            out["after_init"] = str(e)
    print("RESULT " + json.dumps(out))
"""


def _check_limit(r):
    assert r["128"].endswith("OPENCL:0"), r
    assert r["512"] == "ResourceExhaustedError", r
    assert r["logical"] == 1, r


CONTRACT_CASES = [(None, ",256"), ("512", "512,256"), ("64,", "64,256")]


@pytest.fixture(scope="module")
def memory_children():
    """The memory-limit children, all started at the first test that reads
    one: each allocation over a limit waits 10 s in TensorFlow's allocator
    (BFCAllocator retries that long before ResourceExhaustedError), so one
    after another they took about 80 s of a run, side by side about 30."""
    started = {}

    def get(name):
        if not started:
            started["config"] = start_child(MEMORY, "config")
            started["env"] = start_child(MEMORY, "env", TFOCL_MEMORY_LIMIT_MB="256")
            for before, _ in CONTRACT_CASES:
                started[before] = start_child(ENV_CONTRACT, POCL_DEVICES="pthread pthread",
                                              TFOCL_MEMORY_LIMIT_MB=before)
        return parse(started[name].result(timeout=600))

    yield get
    for c in started.values():
        c.stop()


def test_logical_device_memory_limit(memory_children):
    cp, r = memory_children("config")
    check(cp, r)
    assert r["get"] is True
    assert "virtual devices configured" in r["growth"], r
    assert "cannot be modified after being initialized" in r["after_init"], r
    _check_limit(r)


def test_memory_limit_from_the_environment_alone(memory_children):
    cp, r = memory_children("env")
    check(cp, r)
    assert r["env"] == "256"
    _check_limit(r)


VALIDATION = """
    import json, sys
    import tensorflow as tf
    from tfocl import _tfconfig
    from tensorflow.python.eager import context

    if sys.argv[1] == "plugin":
        _tfconfig._native = False  # the 2.19-2.21 path on any TensorFlow
    dev = tf.config.list_physical_devices("OPENCL")[0]
    LDC = tf.config.LogicalDeviceConfiguration
    out = {"native": _tfconfig.native_virtual_devices(context), "version": tf.__version__}
    for name, config in [("none", [LDC()]), ("empty", []), ("ordinal", [LDC(256, experimental_device_ordinal=0)]),
                         ("two", [LDC(256), LDC(256)]), ("priority", [LDC(256, experimental_priority=0)]),
                         ("fraction", [LDC(100.5)])]:
        try:
            tf.config.set_logical_device_configuration(dev, config)
            out[name] = "accepted"
            tf.config.set_logical_device_configuration(dev, [LDC(256)])
        except ValueError as e:
            out[name] = str(e)
    print("RESULT " + json.dumps(out))
"""


@pytest.mark.parametrize("path", ["as-installed", "plugin"])
def test_logical_device_configuration_checks(path):
    cp, r = child(VALIDATION, path)
    check(cp, r)
    assert "memory limit is required" in r["none"], r
    assert "at least one" in r["empty"], r
    assert "experimental_device_ordinal" in r["ordinal"], r
    if r["native"]:
        assert r["two"] == r["priority"] == r["fraction"] == "accepted", r
    else:
        for name in ("two", "priority"):
            assert f"TensorFlow {r['version']}" in r[name] and "2.22" in r[name], r
        assert "whole number of MiB" in r["fraction"], r


def test_native_virtual_devices_follow_the_tensorflow_library():
    """The C++ support is read from TensorFlow's framework library: 2.22 has
    it, 2.19-2.21 do not."""
    cp, r = child("""
        import json
        import tensorflow as tf
        from tensorflow.python.eager import context
        from tfocl import _tfconfig
        print("RESULT " + json.dumps({"native": _tfconfig.native_virtual_devices(context),
                                      "version": tf.__version__}))
    """)
    check(cp, r)
    major_minor = tuple(int(x) for x in r["version"].split(".")[:2])
    assert r["native"] == (major_minor >= (2, 22)), r


TWO_LOGICAL = """
    import json
    import tensorflow as tf
    from tensorflow.python.eager import context
    from tfocl import _tfconfig

    if not _tfconfig.native_virtual_devices(context):
        print("RESULT " + json.dumps({"native": False}))
        raise SystemExit
    dev = tf.config.list_physical_devices("OPENCL")[0]
    LDC = tf.config.LogicalDeviceConfiguration
    tf.config.set_logical_device_configuration(dev, [LDC(256, experimental_priority=0),
                                                     LDC(300, experimental_priority=-1)])
    out = {"native": True, "logical": [d.name for d in tf.config.list_logical_devices("OPENCL")]}
    for i in (0, 1):
        for mib in (128, 512):
            try:
                with tf.device(f"/device:OPENCL:{i}"):
                    t = tf.zeros([mib << 18], tf.float32)
                out[f"{i}:{mib}"] = t.device
                del t
            except tf.errors.ResourceExhaustedError:
                out[f"{i}:{mib}"] = "ResourceExhaustedError"
    print("RESULT " + json.dumps(out))
"""


def test_several_logical_devices_where_tensorflow_builds_them():
    cp, r = child(TWO_LOGICAL)
    check(cp, r)
    if not r["native"]:
        pytest.skip("this TensorFlow's C++ has no virtual PluggableDevices (before 2.22)")
    assert r["logical"] == ["/device:OPENCL:0", "/device:OPENCL:1"], r
    for i in (0, 1):
        assert r[f"{i}:128"].endswith(f"OPENCL:{i}"), r
        assert r[f"{i}:512"] == "ResourceExhaustedError", r


ENV_CONTRACT = """
    import json, os, sys
    import tensorflow as tf
    from tfocl import _tfconfig

    _tfconfig._native = False  # the plugin's path, whatever the TensorFlow
    devs = tf.config.list_physical_devices("OPENCL")
    out = {"devices": len(devs), "before": os.environ.get("TFOCL_MEMORY_LIMIT_MB")}
    tf.config.set_logical_device_configuration(devs[1], [tf.config.LogicalDeviceConfiguration(256)])
    out["env"] = os.environ.get("TFOCL_MEMORY_LIMIT_MB")
    for i, mib in ((0, 384), (1, 128), (1, 512)):
        try:
            with tf.device(f"/device:OPENCL:{i}"):
                t = tf.zeros([mib << 18], tf.float32)
            out[f"{i}:{mib}"] = t.device
            del t
        except tf.errors.ResourceExhaustedError:
            out[f"{i}:{mib}"] = "ResourceExhaustedError"
    print("RESULT " + json.dumps(out))
"""


@pytest.mark.parametrize("before,want", CONTRACT_CASES)
def test_memory_limit_environment_contract(memory_children, before, want):
    """TFOCL_MEMORY_LIMIT_MB as the 2.19-2.21 path writes it for the plugin:
    one entry per OPENCL device, an empty one for no limit, a value set
    before as the starting point."""
    cp, r = memory_children(before)
    check(cp, r)
    assert r["devices"] == 2, r
    assert r["env"] == want, r
    assert r["1:128"].endswith("OPENCL:1"), r
    assert r["1:512"] == "ResourceExhaustedError", r
    # Device 0: no limit, 512 MiB or 64 MiB.
    assert r["0:384"] == ("ResourceExhaustedError" if before == "64," else "/job:localhost/replica:0/task:0/device:OPENCL:0"), r
