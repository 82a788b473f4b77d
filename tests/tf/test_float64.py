"""float64 programs on OPENCL: the element-wise ops, the reductions and the
softmax family run there in double (not on the CPU, where TensorFlow would
place them without a float64 kernel) and agree with TensorFlow's CPU
kernels to double's precision, one op at a time and in an MLP's forward
and backward pass.

rtol 1e-12: a double kernel is a few ulp (2.2e-16) from the CPU's; float
math anywhere on the way would be ~1e-7 off.
"""
import numpy as np
import pytest

from conftest import DEVICE

RTOL = 1e-12


def _inputs(shape, low, high, seed):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


# (name, function of two float64 tensors, domain of the first, of the second)
BINARY = [
    ("AddV2", lambda tf, a, b: tf.raw_ops.AddV2(x=a, y=b), (-3, 3), (-3, 3)),
    ("Sub", lambda tf, a, b: tf.raw_ops.Sub(x=a, y=b), (-3, 3), (-3, 3)),
    ("Mul", lambda tf, a, b: tf.raw_ops.Mul(x=a, y=b), (-3, 3), (-3, 3)),
    ("RealDiv", lambda tf, a, b: tf.raw_ops.RealDiv(x=a, y=b), (-3, 3), (0.5, 3)),
    ("Maximum", lambda tf, a, b: tf.raw_ops.Maximum(x=a, y=b), (-3, 3), (-3, 3)),
    ("Pow", lambda tf, a, b: tf.raw_ops.Pow(x=a, y=b), (0.1, 3), (-2, 2)),
    ("SquaredDifference",
     lambda tf, a, b: tf.raw_ops.SquaredDifference(x=a, y=b), (-3, 3), (-3, 3)),
    ("Greater", lambda tf, a, b: tf.raw_ops.Greater(x=a, y=b), (-3, 3), (-3, 3)),
    ("Equal", lambda tf, a, b: tf.raw_ops.Equal(x=a, y=a), (-3, 3), (-3, 3)),
    ("TanhGrad", lambda tf, a, b: tf.raw_ops.TanhGrad(y=a, dy=b), (-1, 1), (-3, 3)),
    ("SigmoidGrad",
     lambda tf, a, b: tf.raw_ops.SigmoidGrad(y=a, dy=b), (0, 1), (-3, 3)),
    ("ReluGrad",
     lambda tf, a, b: tf.raw_ops.ReluGrad(gradients=b, features=a), (-3, 3), (-3, 3)),
]

UNARY = [
    ("Neg", lambda tf, a: tf.raw_ops.Neg(x=a), (-3, 3)),
    ("Exp", lambda tf, a: tf.raw_ops.Exp(x=a), (-20, 20)),
    ("Log", lambda tf, a: tf.raw_ops.Log(x=a), (0.01, 100)),
    ("Tanh", lambda tf, a: tf.raw_ops.Tanh(x=a), (-5, 5)),
    ("Sigmoid", lambda tf, a: tf.raw_ops.Sigmoid(x=a), (-20, 20)),
    ("Relu", lambda tf, a: tf.raw_ops.Relu(features=a), (-3, 3)),
    ("Square", lambda tf, a: tf.raw_ops.Square(x=a), (-3, 3)),
    ("Sqrt", lambda tf, a: tf.raw_ops.Sqrt(x=a), (0, 100)),
    ("Softplus", lambda tf, a: tf.raw_ops.Softplus(features=a), (-40, 40)),
    ("Erf", lambda tf, a: tf.raw_ops.Erf(x=a), (-3, 3)),
]


def _on(tf, device, fn, *arrays):
    with tf.device(device):
        out = fn(tf, *(tf.constant(a, tf.float64) for a in arrays))
    return out


@pytest.mark.parametrize("name,fn,a_range", UNARY, ids=[u[0] for u in UNARY])
def test_unary_in_double_on_opencl(tf, name, fn, a_range):
    a = _inputs((7, 131), *a_range, seed=1)
    got = _on(tf, DEVICE, fn, a)
    want = _on(tf, "/CPU:0", fn, a)
    assert got.device.endswith("OPENCL:0"), f"{name} ran on {got.device}"
    assert got.dtype == tf.float64
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=0)


@pytest.mark.parametrize("name,fn,a_range,b_range", BINARY,
                         ids=[b[0] for b in BINARY])
def test_binary_in_double_on_opencl(tf, name, fn, a_range, b_range):
    a = _inputs((7, 131), *a_range, seed=2)
    b = _inputs((7, 131), *b_range, seed=3)
    got = _on(tf, DEVICE, fn, a, b)
    want = _on(tf, "/CPU:0", fn, a, b)
    assert got.device.endswith("OPENCL:0"), f"{name} ran on {got.device}"
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=0)


@pytest.mark.parametrize("name", ["Sum", "Mean", "Max", "Min", "Prod", "ArgMax"])
def test_reduction_in_double_on_opencl(tf, name):
    a = _inputs((37, 129), 0.9, 1.1, seed=12)
    op = getattr(tf.raw_ops, name)

    def reduce(tf, x):
        axis = tf.constant(1, tf.int32)
        if name == "ArgMax":
            return op(input=x, dimension=axis)
        return op(input=x, axis=axis)

    got = _on(tf, DEVICE, reduce, a)
    want = _on(tf, "/CPU:0", reduce, a)
    assert got.device.endswith("OPENCL:0"), f"{name} ran on {got.device}"
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=0)


SOFTMAX = [
    ("Softmax", lambda tf, a, b: tf.raw_ops.Softmax(logits=a)),
    ("LogSoftmax", lambda tf, a, b: tf.raw_ops.LogSoftmax(logits=a)),
    ("SoftmaxCrossEntropyWithLogits",
     lambda tf, a, b: tf.raw_ops.SoftmaxCrossEntropyWithLogits(
         features=a, labels=tf.nn.softmax(b))),
]


@pytest.mark.parametrize("name,fn", SOFTMAX, ids=[s[0] for s in SOFTMAX])
def test_softmax_in_double_on_opencl(tf, name, fn):
    a = _inputs((9, 301), -5, 5, seed=13)
    b = _inputs((9, 301), -5, 5, seed=14)
    got = _on(tf, DEVICE, fn, a, b)
    want = _on(tf, "/CPU:0", fn, a, b)
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, (list, tuple)) else [want]
    for g, w in zip(got, want):
        assert g.device.endswith("OPENCL:0"), f"{name} ran on {g.device}"
        assert g.dtype == tf.float64
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=RTOL, atol=1e-15)


def test_broadcast_in_double_on_opencl(tf):
    """A row vector against a matrix: the broadcasting kernels in double."""
    a = _inputs((33, 17), -3, 3, seed=4)
    b = _inputs((1, 17), -3, 3, seed=5)
    mul = lambda tf, x, y: tf.raw_ops.Mul(x=x, y=y)  # noqa: E731
    got = _on(tf, DEVICE, mul, a, b)
    assert got.device.endswith("OPENCL:0")
    np.testing.assert_allclose(got.numpy(), a * b, rtol=RTOL, atol=0)


def _mlp_step(tf, device, x, y, weights, seen):
    """Loss and gradients of a two-layer tanh MLP; `seen` collects the
    devices of the forward pass's element-wise ops and reduction."""
    with tf.device(device):
        params = [tf.Variable(w, dtype=tf.float64) for w in weights]
        w1, b1, w2, b2 = params
        x = tf.constant(x, tf.float64)
        y = tf.constant(y, tf.float64)
        with tf.GradientTape() as tape:
            pre = tf.matmul(x, w1) + b1
            hidden = tf.tanh(pre)
            out = tf.sigmoid(tf.matmul(hidden, w2) + b2)
            err = tf.square(out - y)
            loss = tf.reduce_mean(err)
        seen.update({"AddV2": pre.device, "Tanh": hidden.device,
                     "Sigmoid": out.device, "Square": err.device,
                     "Mean": loss.device})
        grads = tape.gradient(loss, params)
    return loss.numpy(), [g.numpy() for g in grads]


def test_mlp_forward_backward_in_double(tf):
    """The MLP's loss and every gradient as the CPU computes them, with the
    element-wise ops and the reductions on OPENCL. MatMul, which has no
    float64 OPENCL kernel yet, is left to TensorFlow's placement."""
    x = _inputs((64, 12), -2, 2, seed=6)
    y = _inputs((64, 3), 0, 1, seed=7)
    weights = [_inputs((12, 16), -0.5, 0.5, seed=8), _inputs((16,), -0.1, 0.1, seed=9),
               _inputs((16, 3), -0.5, 0.5, seed=10), _inputs((3,), -0.1, 0.1, seed=11)]
    tf.config.set_soft_device_placement(True)
    try:
        seen = {}
        loss, grads = _mlp_step(tf, DEVICE, x, y, weights, seen)
        want_loss, want_grads = _mlp_step(tf, "/CPU:0", x, y, weights, {})
    finally:
        tf.config.set_soft_device_placement(False)
    for op, device in seen.items():
        assert device.endswith("OPENCL:0"), f"{op} ran on {device}"
    np.testing.assert_allclose(loss, want_loss, rtol=RTOL, atol=0)
    for got, want in zip(grads, want_grads):
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-300)
