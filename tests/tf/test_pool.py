"""Pooling and batch normalisation in real TensorFlow on /OPENCL:0.

- Failing inputs: the OPENCL kernels fail with TensorFlow's error class and
  message, checked against TensorFlow's own CPU kernel on the same inputs
  (NHWC/NDHWC, which the CPU kernels take): its Eigen kernels, in a
  subprocess with TF_ENABLE_ONEDNN_OPTS=0 (the oneDNN kernels that replace
  them by default word their errors differently, and abort the process on
  some of these inputs).
- Accuracy: FusedBatchNormV3 and its gradient (tf.compat.v1's
  fused_batch_norm, as TF1-style models and tf.keras 2 layers call it) on
  images of a million elements per channel, against float64, for ordinary
  data and for a large mean with a small spread, where float statistics are
  hardest. OPENCL must be at least as accurate as TensorFlow's CPU kernel
  and within documented bounds.
"""
import json
import re

import numpy as np
import pytest

from conftest import DEVICE, run_python

import tensorflow as tf  # noqa: E402  (conftest set the plugin up)

raw = tf.raw_ops


def _message(e):
    """An error's message without TensorFlow's wrapping: the
    {{function_node ...}} prefix and the [Op:...] suffix."""
    m = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", e.message)
    return m.split(" [Op:")[0].strip()


def _error(device, fn, inputs):
    with tf.device(device):
        tensors = [tf.constant(a) for a in inputs]
        try:
            fn(*tensors)
        except tf.errors.OpError as e:
            return type(e).__name__, _message(e)
    return None, None


f32 = np.float32


def _img(*shape):
    return np.random.default_rng(3).uniform(-1, 1, shape).astype(f32)


def _p3(**attrs):
    return dict(dict(ksize=[1, 2, 2, 2, 1], strides=[1, 1, 1, 1, 1], padding="VALID"), **attrs)


def _p2(**attrs):
    return dict(dict(ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID"), **attrs)


# (label, fn, inputs): each fails on TensorFlow's CPU kernel.
ERROR_CASES = [
    ("MaxPool3D rank 4", lambda x: raw.MaxPool3D(input=x, **_p3()), [_img(1, 4, 4, 1)]),
    ("MaxPool3D zero ksize", lambda x: raw.MaxPool3D(input=x, **_p3(ksize=[1, 0, 2, 2, 1])),
     [_img(1, 3, 4, 4, 1)]),
    ("MaxPool3D batch window", lambda x: raw.MaxPool3D(input=x, **_p3(ksize=[2, 1, 1, 1, 1])),
     [_img(2, 3, 4, 4, 1)]),
    ("MaxPool3D depth window", lambda x: raw.MaxPool3D(input=x, **_p3(ksize=[1, 1, 1, 1, 2])),
     [_img(1, 3, 4, 4, 2)]),
    ("MaxPool3D negative output", lambda x: raw.MaxPool3D(input=x, **_p3(ksize=[1, 1, 5, 5, 1])),
     [_img(1, 2, 2, 2, 1)]),
    ("MaxPool3D zero stride", lambda x: raw.MaxPool3D(input=x, **_p3(strides=[1, 1, 0, 1, 1])),
     [_img(1, 3, 4, 4, 1)]),
    ("AvgPool3D rank 4", lambda x: raw.AvgPool3D(input=x, **_p3()), [_img(1, 4, 4, 1)]),
    ("AvgPool3D zero ksize", lambda x: raw.AvgPool3D(input=x, **_p3(ksize=[1, 2, 0, 2, 1])),
     [_img(1, 3, 4, 4, 1)]),
    ("MaxPool3DGrad orig_output shape",
     lambda x, y, g: raw.MaxPool3DGrad(orig_input=x, orig_output=y, grad=g, **_p3()),
     [_img(1, 3, 4, 4, 2), _img(1, 2, 3, 3, 3), _img(1, 2, 3, 3, 2)]),
    ("MaxPool3DGrad grad shape",
     lambda x, y, g: raw.MaxPool3DGrad(orig_input=x, orig_output=y, grad=g, **_p3()),
     [_img(1, 3, 4, 4, 2), _img(1, 2, 3, 3, 2), _img(1, 2, 2, 3, 2)]),
    ("MaxPool3DGrad grad rank",
     lambda x, y, g: raw.MaxPool3DGrad(orig_input=x, orig_output=y, grad=g, **_p3()),
     [_img(1, 3, 4, 4, 2), _img(1, 2, 3, 3, 2), _img(2, 3, 3, 2)]),
    ("AvgPool3DGrad shape of 4",
     lambda s, g: raw.AvgPool3DGrad(orig_input_shape=s, grad=g, **_p3()),
     [np.array([1, 3, 4, 4], np.int32), _img(1, 2, 3, 3, 1)]),
    ("AvgPool3DGrad negative dim",
     lambda s, g: raw.AvgPool3DGrad(orig_input_shape=s, grad=g, **_p3()),
     [np.array([1, -3, 4, 4, 1], np.int32), _img(1, 2, 3, 3, 1)]),
    ("AvgPool3DGrad batch mismatch",
     lambda s, g: raw.AvgPool3DGrad(orig_input_shape=s, grad=g, **_p3()),
     [np.array([2, 3, 4, 4, 1], np.int32), _img(1, 2, 3, 3, 1)]),
    ("AvgPool3DGrad channel mismatch",
     lambda s, g: raw.AvgPool3DGrad(orig_input_shape=s, grad=g, **_p3()),
     [np.array([1, 3, 4, 4, 2], np.int32), _img(1, 2, 3, 3, 1)]),
    ("MaxPool3DGradGrad orig_output shape",
     lambda x, y, g: raw.MaxPool3DGradGrad(orig_input=x, orig_output=y, grad=g, **_p3()),
     [_img(1, 3, 4, 4, 2), _img(1, 2, 3, 2, 2), _img(1, 3, 4, 4, 2)]),
    ("MaxPool3DGradGrad grad shape",
     lambda x, y, g: raw.MaxPool3DGradGrad(orig_input=x, orig_output=y, grad=g, **_p3()),
     [_img(1, 3, 4, 4, 2), _img(1, 2, 3, 3, 2), _img(1, 2, 3, 3, 2)]),
    ("MaxPool3DGradGrad empty",
     lambda x, y, g: raw.MaxPool3DGradGrad(orig_input=x, orig_output=y, grad=g, **_p3()),
     [_img(0, 3, 4, 4, 2), _img(0, 2, 3, 3, 2), _img(0, 3, 4, 4, 2)]),
    ("MaxPoolV2 ksize of 3", lambda x, k, s: raw.MaxPoolV2(input=x, ksize=k, strides=s, padding="VALID"),
     [_img(1, 4, 4, 1), np.array([1, 2, 2], np.int32), np.array([1, 1, 1, 1], np.int32)]),
    ("MaxPoolV2 batch window", lambda x, k, s: raw.MaxPoolV2(input=x, ksize=k, strides=s, padding="VALID"),
     [_img(2, 4, 4, 1), np.array([2, 1, 1, 1], np.int32), np.array([1, 1, 1, 1], np.int32)]),
    ("MaxPoolGradGrad grad shape",
     lambda x, y, g: raw.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=g, **_p2()),
     [_img(1, 4, 4, 2), _img(1, 3, 3, 2), _img(1, 3, 3, 2)]),
    ("MaxPoolGradGrad orig_output shape",
     lambda x, y, g: raw.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=g, **_p2()),
     [_img(1, 4, 4, 2), _img(1, 2, 3, 2), _img(1, 4, 4, 2)]),
    ("MaxPoolGradGrad rank 3",
     lambda x, y, g: raw.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=g, **_p2()),
     [_img(4, 4, 2), _img(1, 3, 3, 2), _img(1, 4, 4, 2)]),
    ("MaxPoolGrad grad shape",
     lambda x, y, g: raw.MaxPoolGrad(orig_input=x, orig_output=y, grad=g, **_p2()),
     [_img(1, 4, 4, 2), _img(1, 3, 3, 2), _img(1, 3, 2, 2)]),
    ("AvgPoolGrad negative dim", lambda s, g: raw.AvgPoolGrad(orig_input_shape=s, grad=g, **_p2()),
     [np.array([1, -4, 4, 2], np.int32), _img(1, 3, 3, 2)]),
    ("AvgPoolGrad shape of 3", lambda s, g: raw.AvgPoolGrad(orig_input_shape=s, grad=g, **_p2()),
     [np.array([1, 4, 4], np.int32), _img(1, 3, 3, 2)]),
    ("FusedBatchNormV3 rank 3",
     lambda x, s, o: raw.FusedBatchNormV3(x=x, scale=s, offset=o, mean=tf.zeros([0]),
                                          variance=tf.zeros([0]), is_training=True),
     [_img(3, 5, 2), _img(2), _img(2)]),
    ("FusedBatchNormV3 scale size",
     lambda x, s, o: raw.FusedBatchNormV3(x=x, scale=s, offset=o, mean=tf.zeros([0]),
                                          variance=tf.zeros([0]), is_training=True),
     [_img(1, 3, 5, 2), _img(3), _img(2)]),
    ("FusedBatchNormV3 inference mean size",
     lambda x, s, o: raw.FusedBatchNormV3(x=x, scale=s, offset=o, mean=tf.zeros([1]),
                                          variance=tf.ones([2]), is_training=False),
     [_img(1, 3, 5, 2), _img(2), _img(2)]),
    ("FusedBatchNormGradV3 shapes differ",
     lambda d, x, s: raw.FusedBatchNormGradV3(y_backprop=d, x=x, scale=s, reserve_space_1=s,
                                              reserve_space_2=s, reserve_space_3=tf.zeros([0])),
     [_img(1, 3, 4, 2), _img(1, 3, 5, 2), _img(2)]),
]


_CPU_ERRORS = """
import json, sys
sys.path.insert(0, "tests/tf")
import test_pool
for label, fn, inputs in test_pool.ERROR_CASES:
    print(json.dumps([label, test_pool._error("/CPU:0", fn, inputs)]), flush=True)
"""


@pytest.fixture(scope="module")
def cpu_errors():
    out = run_python(_CPU_ERRORS, TF_ENABLE_ONEDNN_OPTS="0", TF_CPP_MIN_LOG_LEVEL="3")
    found = {}
    for line in out.stdout.splitlines():
        if line.startswith("["):
            label, result = json.loads(line)
            found[label] = tuple(result)
    assert found, f"the CPU run failed: {out.stderr[-2000:]}"
    return found


@pytest.mark.parametrize("label,fn,inputs", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_error_matches_cpu(tf, cpu_errors, label, fn, inputs):
    assert label in cpu_errors, f"{label}: the CPU run stopped before it"
    cpu = cpu_errors[label]
    assert cpu[0] is not None, f"{label}: TensorFlow's CPU kernel accepts this case"
    ours = _error(DEVICE, fn, inputs)
    assert ours == cpu, f"{label}: OPENCL {ours}, CPU {cpu}"


# ---- Batch-normalisation accuracy ------------------------------------------

N, HW, C = 16, 256, 4  # 2^20 elements per channel
EPS = 1e-3


def _bn_reference(x, scale, offset, w):
    """float64 y, batch mean, biased variance and the gradients of
    sum(y * w) with respect to x, scale and offset."""
    x = x.astype(np.float64)
    n = x.size // x.shape[-1]
    m = x.mean((0, 1, 2))
    v = x.var((0, 1, 2))
    inv = 1.0 / np.sqrt(v + EPS)
    xhat = (x - m) * inv
    y = xhat * scale + offset
    d_offset = w.sum((0, 1, 2))
    d_scale = (w * xhat).sum((0, 1, 2))
    dx = scale * inv * (w - d_offset / n - xhat * d_scale / n)
    return y, m, v, dx, d_scale, d_offset


def _bn_run(device, x, scale, offset, w):
    """tf.compat.v1.nn.fused_batch_norm (FusedBatchNormV3) in training and
    its gradient (FusedBatchNormGradV3) through a tape."""
    with tf.device(device):
        xt, st, ot, wt = (tf.constant(a) for a in (x, scale, offset, w))
        with tf.GradientTape() as tape:
            tape.watch([xt, st, ot])
            y, m, v = tf.compat.v1.nn.fused_batch_norm(xt, st, ot, epsilon=EPS, is_training=True)
            loss = tf.reduce_sum(y * wt)
        dx, ds, do = tape.gradient(loss, [xt, st, ot])
    # fused_batch_norm returns the Bessel-corrected variance: undo it.
    n = x.size // x.shape[-1]
    return [t.numpy().astype(np.float64) for t in (y, m)] + \
        [v.numpy().astype(np.float64) * (n - 1) / n] + \
        [t.numpy().astype(np.float64) for t in (dx, ds, do)]


def _rel(got, want):
    return float(np.linalg.norm((got - want).ravel()) / max(np.linalg.norm(want.ravel()), 1e-300))


NAMES = ("y", "mean", "variance", "dx", "d_scale", "d_offset")

# Relative L2 bounds for OPENCL: float rounding of the outputs themselves
# (~6e-8) plus the reductions' error (runs of <= 256 in order, then trees:
# a few ulps). The mean comes from a plain pairwise sum; the variance and
# the normalised output from statistics of x - pivot, so they stay accurate
# however far the mean is from zero. The gradient gets the batch mean as a
# float (reserve_space_1): with a mean of 1000 and a spread of 0.01 that
# float is 3e-5 (3e-3 standard deviations) off, and sum(dy * (x - mean))
# (d_scale) inherits it; TensorFlow's CPU kernel is far worse there.
BOUNDS = {
    "centred": {"y": 1e-6, "mean": 1e-6, "variance": 1e-6, "dx": 1e-6, "d_scale": 1e-6,
                "d_offset": 1e-6},
    "large mean, small spread": {"y": 1e-6, "mean": 1e-7, "variance": 1e-6, "dx": 1e-6,
                                 "d_scale": 3e-3, "d_offset": 1e-6},
}


@pytest.mark.parametrize("data", sorted(BOUNDS))
def test_fused_batch_norm_accuracy(tf, data):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((N, HW, HW, C))
    if data != "centred":
        x = 1000.0 + 0.01 * x + np.array([0.0, -1300.0, 200.0, 7.0])
    x = x.astype(np.float32)
    scale = rng.uniform(0.5, 2.0, C).astype(np.float32)
    offset = rng.uniform(-1, 1, C).astype(np.float32)
    w = rng.standard_normal((N, HW, HW, C)).astype(np.float32)
    want = _bn_reference(x, scale.astype(np.float64), offset.astype(np.float64), w.astype(np.float64))
    errors = {}
    for device in ("/CPU:0", DEVICE):
        got = _bn_run(device, x, scale, offset, w)
        errors[device] = {name: _rel(g, r) for name, g, r in zip(NAMES, got, want)}
    print(f"{data}: relative L2 errors vs float64")
    for name in NAMES:
        print(f"  {name:9s} CPU {errors['/CPU:0'][name]:.3g}  OPENCL {errors[DEVICE][name]:.3g}")
    for name in NAMES:
        ours, cpu = errors[DEVICE][name], errors["/CPU:0"][name]
        # Within the bound, and at least as accurate as TensorFlow's CPU
        # kernel (down to float rounding, where both are noise).
        assert ours <= BOUNDS[data][name] and ours <= max(cpu, 1e-6), (
            f"{data}: {name} relative error {ours:.3g} on OPENCL, {cpu:.3g} on the CPU, "
            f"bound {BOUNDS[data][name]:.3g}")
