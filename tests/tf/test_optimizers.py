"""Every Keras optimizer, and the losses and activations a small model
reaches for, through Keras' own train step in strict placement: the step
runs on OPENCL (nothing but what TensorFlow keeps on the host by design
placed elsewhere) and its losses follow the CPU's from the same weights.

One child process runs the cases one after another through run_model.py's
train(), which the model zoo's tests use: a fresh model per case and
device, the same seed and weights, four steps, soft placement off. The
optimizers' updates (slots, momentum, factored second moments, the sign
of Lion, Ftrl's accumulators) reach the losses of steps 2-4; the plugin's
Python side gives Adam and SGD with momentum one op per weight, and the
graph pass fuses the element-wise ops of the rest."""
import json

import pytest

from conftest import REPO, has_variable_api, run_python

CHILD = """
import json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "tf"))
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
import numpy as np
import tensorflow as tf
import keras
import model_zoo, run_model

L = keras.layers
BATCH = model_zoo.BATCH


def mlp(head, one_d):
    # Activations with their own kernels or fused forms: ELU, SELU, PReLU,
    # LeakyReLU, softsign, mish, hard_sigmoid, gelu's tanh form. one_d:
    # with the 1-D weights (biases, PReLU's slopes).
    return keras.Sequential([
        keras.Input((12,)),
        L.Dense(32, activation="elu", use_bias=one_d)] + ([L.PReLU()] if one_d else []) + [
        L.Dense(16, activation="selu", use_bias=one_d), L.LeakyReLU(negative_slope=0.1),
        L.Dense(16, activation="softsign", use_bias=one_d),
        L.Dense(16, activation="mish", use_bias=one_d),
        L.Dense(16, activation=lambda t: keras.activations.gelu(t, approximate=True),
                use_bias=one_d),
        L.Dense(16, activation="hard_sigmoid", use_bias=one_d),
        L.Dense(4, activation=head, use_bias=one_d)])


def targets(rng, kind):
    if kind == "real":
        return model_zoo._data(rng, BATCH, 4)
    if kind == "positive":
        return np.abs(model_zoo._data(rng, BATCH, 4))
    return (rng.random((BATCH, 4)) < 0.5).astype(np.float32)  # multi-hot


# name: (optimizer, loss, output activation, targets[, 1-D weights])
CASES = {
    "sgd_nesterov": (lambda: keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True),
                     "mean_squared_error", None, "real"),
    "sgd_momentum": (lambda: keras.optimizers.SGD(0.01, momentum=0.5),
                     "mean_absolute_error", None, "real"),
    "rmsprop_centered": (lambda: keras.optimizers.RMSprop(1e-3, momentum=0.5, centered=True),
                         "poisson", "softplus", "positive"),
    "adagrad": (lambda: keras.optimizers.Adagrad(0.05), "log_cosh", None, "real"),
    "adadelta": (lambda: keras.optimizers.Adadelta(1.0), "categorical_hinge", None, "hot"),
    "adamax": (lambda: keras.optimizers.Adamax(1e-2), "binary_crossentropy", "sigmoid", "hot"),
    "nadam": (lambda: keras.optimizers.Nadam(1e-2), "huber", None, "real"),
    "ftrl": (lambda: keras.optimizers.Ftrl(0.05, l1_regularization_strength=0.01,
                                           l2_regularization_strength=0.01),
             "categorical_crossentropy", "softmax", "hot"),
    "lion": (lambda: keras.optimizers.Lion(1e-3), "kl_divergence", "softmax", "hot"),
    # Without 1-D weights: Adafactor keeps an int32 placeholder variable
    # for each, and TensorFlow's VarHandleOp has no int32 kernel but the
    # CPU's (a GPU's too), so strict placement refuses them anywhere else.
    "adafactor": (lambda: keras.optimizers.Adafactor(1e-2), "cosine_similarity", None, "real",
                  False),
    "adamw_focal": (lambda: keras.optimizers.AdamW(1e-2, weight_decay=0.05),
                    keras.losses.BinaryFocalCrossentropy(from_logits=True), None, "hot"),
    "sgd_msle": (lambda: keras.optimizers.SGD(0.05),
                 "mean_squared_logarithmic_error", "relu", "positive"),
}


def builder(make_optimizer, loss, head, kind, one_d=True):
    def build(keras, rng, steps):
        batches = [(model_zoo._data(rng, BATCH, 12), targets(rng, kind)) for _ in range(steps)]
        return mlp(head, one_d), make_optimizer(), loss, batches
    return build


out = {}
for name, case in CASES.items():
    model_zoo.MODELS[name] = builder(*case)
    with tf.device("/device:CPU:0"):
        weights = [w.numpy() for w in run_model.build(tf, keras, name, 1, 3)[0].weights]
    out[name] = {}
    for device in ("cpu", "opencl"):
        try:
            run = run_model.train(tf, keras, name, device, 4, 3, weights)
            out[name][device] = {"losses": run["losses"], "placement": run["placement"],
                                 "weights": len(weights)}
        except Exception as e:  # the case's failure, not the child's
            out[name][device] = {"error": f"{type(e).__name__}: {str(e)[:2000]}"}
print("RESULT " + json.dumps({"cases": out, "host_ok": sorted(model_zoo.HOST_OK)}))
"""


@pytest.fixture(scope="module")
def cases():
    cp = run_python(CHILD, REPO, timeout=900)
    lines = [l for l in cp.stdout.splitlines() if l.startswith("RESULT ")]
    assert cp.returncode == 0 and lines, f"rc {cp.returncode}:\n{cp.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def per_step(means):
    """Each step's loss from Keras' loss tracker, which reports the running
    mean over the steps so far (an update's error would show divided by
    the step's number)."""
    return [means[0]] + [(k + 1) * means[k] - k * means[k - 1] for k in range(1, len(means))]


NAMES = ["sgd_nesterov", "sgd_momentum", "rmsprop_centered", "adagrad", "adadelta", "adamax", "nadam", "ftrl",
         "lion", "adafactor", "adamw_focal", "sgd_msle"]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_optimizer_and_loss_train_on_opencl_as_on_the_cpu(cases, name):
    runs = cases["cases"][name]
    assert "error" not in runs["cpu"], runs["cpu"]["error"]
    assert "error" not in runs["opencl"], runs["opencl"]["error"]
    host_ok = set(cases["host_ok"])
    elsewhere = {d: {op: n for op, n in ops.items() if op not in host_ok}
                 for d, ops in runs["opencl"]["placement"].items() if d != "OPENCL"}
    assert not {d: ops for d, ops in elsewhere.items() if ops}, elsewhere
    assert runs["opencl"]["placement"].get("OPENCL"), runs["opencl"]["placement"]
    ocl, cpu = (per_step(runs[d]["losses"]) for d in ("opencl", "cpu"))
    assert len(ocl) == len(cpu) == 4, (ocl, cpu)
    # Relative, with a floor for losses near 0 (cosine similarity's).
    for step, (o, c) in enumerate(zip(ocl, cpu)):
        assert o == o and abs(o - c) <= 1e-4 * max(abs(c), 0.1), \
            f"{name} step {step}: OPENCL loss {o:.7f}, CPU {c:.7f} ({ocl} against {cpu})"
    if name.startswith("sgd_") and name != "sgd_msle":
        # tfocl's Python side gives Keras' SGD with momentum TensorFlow's
        # ResourceApplyKerasMomentum where the plugin registers it (it
        # updates in place: not on 2.20 and 2.21, which keep Keras' ops).
        on_opencl = runs["opencl"]["placement"]["OPENCL"]
        taken = on_opencl.get("ResourceApplyKerasMomentum", 0)
        assert taken == (runs["opencl"]["weights"] if has_variable_api() else 0), on_opencl
