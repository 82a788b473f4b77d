"""Reductions on OPENCL against TensorFlow's CPU kernels: ranks above 8,
TensorFlow's errors (type and message), and gradients that reduce in
rank 10 (Keras' UpSampling2D)."""
import numpy as np
import pytest

from conftest import DEVICE

DEVICES = ("/CPU:0", DEVICE)


def _message(e):
    """The error message without the device-specific parts TensorFlow adds
    (the wrapped function's node name, the op name suffix)."""
    text = e.message
    if "}} " in text:
        text = text.split("}} ", 1)[1]
    return text.split(" [Op:")[0].strip()


def _errors(tf, fn):
    """fn() on each device: {device: (error type, message)}; fn must fail."""
    out = {}
    for device in DEVICES:
        with tf.device(device):
            try:
                fn()
            except tf.errors.OpError as e:
                out[device] = (type(e), _message(e))
            else:
                out[device] = (None, "no error")
    return out


REDUCTIONS = ["Sum", "Mean", "Prod", "Max", "Min", "All", "Any"]


def _input(op, shape, rng):
    if op in ("All", "Any"):
        return rng.random(shape) > 0.5
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("axes", [[0, 0], [1, -2], [2, 0, -1], [0, 3, 0]],
                         ids=["0,0", "1,-2", "2,0,-1", "0,3,0"])
def test_bad_axes_fail_as_on_cpu(tf, op, axes):
    """Repeated axes fail with TensorFlow's InvalidArgumentError and message
    ("Invalid reduction arguments: Axes contains duplicate dimension: 1"),
    and an axis out of range before any repeat with its own, eagerly and in
    a tf.function whose axes are only known at run time."""
    rng = np.random.default_rng(1)
    x = _input(op, (2, 3, 4), rng)
    fn = getattr(tf.raw_ops, op)

    got = _errors(tf, lambda: fn(input=tf.constant(x), axis=tf.constant(axes)))
    assert got[DEVICE] == got["/CPU:0"], got
    assert got[DEVICE][0] is tf.errors.InvalidArgumentError, got

    @tf.function(input_signature=[tf.TensorSpec(None, tf.int32)])
    def run(a):
        return fn(input=tf.constant(x), axis=a)

    got = _errors(tf, lambda: run(tf.constant(axes, tf.int32)))
    assert got[DEVICE] == got["/CPU:0"], got
    assert got[DEVICE][0] is tf.errors.InvalidArgumentError, got


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("shape,axes", [
    ((2, 3, 2, 3, 2, 3, 2, 3, 2), [1, 3, 5, 7]),
    ((3, 2, 2, 3, 2, 2, 3, 2, 2, 3), [0, 2, 4, 6, 8]),
    ((2, 2, 3, 2, 2, 3, 2, 2, 3, 2, 2), [1, 2, 5, 8, 9]),
    ((2, 1, 3, 2, 1, 3, 2, 2, 3, 1, 2, 3), [0, -9, 4, 6, -4, 11]),
], ids=["rank9", "rank10", "rank11", "rank12"])
def test_high_rank_matches_cpu(tf, op, shape, axes):
    """Ranks 9 to 12 whose reduced and kept axes alternate: more collapsed
    dims than a kernel takes, reduced one group per pass."""
    rng = np.random.default_rng(2)
    x = _input(op, shape, rng)
    if op == "Prod":
        x = (1.0 + 0.1 * x).astype(np.float32)  # products stay near 1
    out = {}
    for device in DEVICES:
        with tf.device(device):
            y = getattr(tf.raw_ops, op)(input=tf.constant(x), axis=tf.constant(axes),
                                        keep_dims=True)
        out[device] = y
    assert out[DEVICE].device.endswith("OPENCL:0")
    assert out[DEVICE].shape == out["/CPU:0"].shape
    np.testing.assert_allclose(out[DEVICE].numpy(), out["/CPU:0"].numpy(),
                               rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_ranks_as_on_cpu(tf, op):
    """ArgMax/ArgMin: rank 7 works; above it TensorFlow fails (unless the
    output is empty), with its error type and message."""
    rng = np.random.default_rng(3)
    fn = getattr(tf.raw_ops, op)
    x = rng.integers(-3, 4, (2, 3, 1, 2, 3, 2, 5)).astype(np.float32)
    out = {}
    for device in DEVICES:
        with tf.device(device):
            out[device] = fn(input=tf.constant(x), dimension=4)
    assert out[DEVICE].device.endswith("OPENCL:0")
    np.testing.assert_array_equal(out[DEVICE].numpy(), out["/CPU:0"].numpy())

    x = rng.standard_normal((2, 3, 1, 2, 3, 2, 1, 3, 2, 5)).astype(np.float32)
    got = _errors(tf, lambda: fn(input=tf.constant(x), dimension=4))
    assert got[DEVICE] == got["/CPU:0"], got
    assert got[DEVICE][0] is tf.errors.InvalidArgumentError, got

    x = np.zeros((2, 0, 1, 2, 3, 2, 1, 3, 2, 5), np.float32)
    for device in DEVICES:
        with tf.device(device):
            out[device] = fn(input=tf.constant(x), dimension=4)
    assert out[DEVICE].shape == out["/CPU:0"].shape == (2, 0, 1, 2, 2, 1, 3, 2, 5)


def test_upsampling2d_gradient_matches_cpu(tf):
    """Keras' UpSampling2D: its gradient reduces rank-10 tensors (Sum)."""
    import keras
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 5, 7, 3)).astype(np.float32)
    out = {}
    for device in DEVICES:
        with tf.device(device):
            xt = tf.constant(x)
            with tf.GradientTape() as tape:
                tape.watch(xt)
                y = keras.layers.UpSampling2D(size=(2, 3))(xt)
                loss = tf.reduce_sum(y * y)
            out[device] = tape.gradient(loss, xt)
    assert out[DEVICE].device.endswith("OPENCL:0")
    np.testing.assert_allclose(out[DEVICE].numpy(), out["/CPU:0"].numpy(),
                               rtol=1e-6, atol=1e-6)


# Float32 sums of values with a large mean and a small spread: the rounding
# error is then relative to the sum itself. A sequential float32 sum of n
# such terms drifts by about sqrt(n) ulps; TensorFlow's CPU (Eigen's tree
# reductions, four accumulators down columns) stays within a few. The device
# must be at least as accurate: its max relative error against float64 at
# most TensorFlow's CPU's, or one ulp (2**-23), whichever is larger.
ACCURACY_CASES = [
    ("Mean", (32, 300), 0),       # the column mean of 32 rows
    ("Mean", (32, 4096), 0),
    ("Mean", (2048, 2048), 0),
    ("Sum", (1000, 37), 0),
    ("Sum", (100000, 20), 0),
    ("Sum", (100000, 3), 0),
    ("Sum", (20, 100000), 1),
    ("Sum", (300000,), 0),
    ("BiasAddGrad", (50000, 32), None),
]


@pytest.mark.parametrize("op,shape,axis", ACCURACY_CASES,
                         ids=[f"{o}{list(s)}" for o, s, _ in ACCURACY_CASES])
def test_float_sums_as_accurate_as_cpu(tf, op, shape, axis):
    def run(x):
        t = tf.constant(x)
        if op == "BiasAddGrad":
            return tf.raw_ops.BiasAddGrad(out_backprop=t)
        return getattr(tf.raw_ops, op)(input=t, axis=tf.constant([axis]))

    worst = {}
    for seed in range(2):
        rng = np.random.default_rng(seed)
        x = (1000.0 + rng.random(shape) - 0.5).astype(np.float32)
        exact = x.astype(np.float64).sum(axis=0 if axis is None else axis)
        if op == "Mean":
            exact /= shape[axis]
        for device in DEVICES:
            with tf.device(device):
                y = run(x)
            err = float(np.max(np.abs(y.numpy().astype(np.float64) - exact) / np.abs(exact)))
            worst[device] = max(worst.get(device, 0.0), err)
    print(f"{op}{list(shape)}: max relative error OPENCL {worst[DEVICE]:.3g}, "
          f"CPU {worst['/CPU:0']:.3g}")
    assert worst[DEVICE] <= max(worst["/CPU:0"], 2.0 ** -23), worst
