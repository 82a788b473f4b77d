"""tf.linalg.svd and tf.linalg.eigh (Svd, SelfAdjointEigV2) on OPENCL.

Singular vectors and eigenvectors are unique only up to signs (and to
rotations within repeated values), so the factors are judged by what
defines them: u diag(s) v^T reconstructs the input, a v = v diag(e), the
columns are orthonormal; the values, and the gradients of functions of the
values only (unique where the values are distinct), against TensorFlow's
CPU kernels. test_ops.py compares s and e alone with the CPU's.
"""
import numpy as np
import pytest

from conftest import DEVICE

# float32 sums of up to n products in another order than the CPU's.
TOL = {np.float32: dict(rtol=2e-4, atol=2e-4), np.float64: dict(rtol=1e-9, atol=1e-10)}
SHAPES = [(1, 1), (4, 4), (7, 3), (3, 7), (2, 5, 4), (3, 2, 6, 6), (40, 33), (33, 40), (96, 96)]


def _rand(shape, dtype, seed=0):
    return np.random.default_rng(seed).uniform(-3, 3, shape).astype(dtype)


def _on_device(*tensors):
    for t in tensors:
        assert t.device.endswith("OPENCL:0"), t.device


def _eye_error(x):
    return np.abs(np.swapaxes(x, -1, -2) @ x - np.eye(x.shape[-1])).max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("full", [False, True])
def test_svd_reconstructs(tf, dtype, shape, full):
    a = _rand(shape, dtype)
    with tf.device("/device:CPU:0"):
        s_cpu = tf.linalg.svd(a, compute_uv=False).numpy()
    with tf.device(DEVICE):
        s, u, v = tf.linalg.svd(a, full_matrices=full)
        s_only = tf.linalg.svd(a, compute_uv=False)
    _on_device(s, u, v, s_only)
    s, u, v = s.numpy(), u.numpy(), v.numpy()
    m, n = shape[-2:]
    p = min(m, n)
    assert u.shape == shape[:-2] + (m, m if full else p)
    assert v.shape == shape[:-2] + (n, n if full else p)
    tol = TOL[dtype]
    scale = np.abs(a).max() * max(m, n)
    np.testing.assert_allclose(s, s_cpu, rtol=tol["rtol"], atol=tol["atol"] * scale)
    np.testing.assert_allclose(s_only.numpy(), s_cpu, rtol=tol["rtol"], atol=tol["atol"] * scale)
    assert np.all(np.diff(s, axis=-1) <= 0)
    recon = (u[..., :p] * s[..., None, :]) @ np.swapaxes(v[..., :p], -1, -2)
    np.testing.assert_allclose(recon, a, atol=tol["atol"] * scale)
    assert _eye_error(u) <= tol["atol"] * max(m, n)
    assert _eye_error(v) <= tol["atol"] * max(m, n)


def _sym(a):
    """The matrix TensorFlow's kernels see: a's lower triangle, mirrored."""
    low = np.tril(a)
    return low + np.swapaxes(np.tril(a, -1), -1, -2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [s for s in SHAPES if s[-1] == s[-2]], ids=str)
def test_eigh_decomposes(tf, dtype, shape):
    # Not symmetric: only the lower triangle may be read.
    a = _rand(shape, dtype, seed=1)
    with tf.device("/device:CPU:0"):
        e_cpu = tf.linalg.eigvalsh(a).numpy()
    with tf.device(DEVICE):
        e, v = tf.linalg.eigh(a)
        e_only = tf.linalg.eigvalsh(a)
    _on_device(e, v, e_only)
    e, v = e.numpy(), v.numpy()
    tol = TOL[dtype]
    n = shape[-1]
    scale = np.abs(a).max() * n
    np.testing.assert_allclose(e, e_cpu, rtol=tol["rtol"], atol=tol["atol"] * scale)
    np.testing.assert_allclose(e_only.numpy(), e_cpu, rtol=tol["rtol"], atol=tol["atol"] * scale)
    assert np.all(np.diff(e, axis=-1) >= 0)
    np.testing.assert_allclose(_sym(a) @ v, v * e[..., None, :], atol=tol["atol"] * scale)
    assert _eye_error(v) <= tol["atol"] * n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_repeated_and_zero_values(tf, dtype):
    ones = np.ones((5, 5), dtype)
    eye2 = 2 * np.eye(6, dtype=dtype)
    deficient = _rand((6, 4), dtype)
    deficient[:, 1] = deficient[:, 0]
    deficient[:, 3] = 0
    for a in (ones, eye2, deficient, deficient.T.copy()):
        for full in (False, True):
            with tf.device(DEVICE):
                s, u, v = tf.linalg.svd(a, full_matrices=full)
            _on_device(s, u, v)
            s, u, v = s.numpy(), u.numpy(), v.numpy()
            p = min(a.shape)
            np.testing.assert_allclose((u[:, :p] * s) @ v[:, :p].T, a, atol=1e-4)
            assert _eye_error(u) <= 1e-4 and _eye_error(v) <= 1e-4
    for a in (ones, eye2):
        with tf.device(DEVICE):
            e, v = tf.linalg.eigh(a)
        _on_device(e, v)
        np.testing.assert_allclose(a @ v.numpy(), v.numpy() * e.numpy(), atol=1e-4)
        assert _eye_error(v.numpy()) <= 1e-4


def test_non_finite_and_empty_as_cpu(tf):
    a = _rand((3, 4, 3), np.float32)
    a[1, 2, 0] = np.nan
    a[2, 0, 1] = np.inf
    outs = {}
    for dev in ("/device:CPU:0", DEVICE):
        with tf.device(dev):
            outs[dev] = [t.numpy() for t in tf.raw_ops.Svd(input=a, full_matrices=True)]
    for got, want in zip(outs[DEVICE], outs["/device:CPU:0"]):
        assert got.shape == want.shape
        assert np.array_equal(np.isnan(got), np.isnan(want))
    # A non-finite value in the lower triangle fails as on the CPU; above
    # the diagonal it is never read.
    b = _rand((4, 4), np.float32)
    b[0, 3] = np.nan
    with tf.device(DEVICE):
        e = tf.linalg.eigvalsh(b)
    assert np.all(np.isfinite(e.numpy()))
    b[3, 0] = np.nan
    messages = []
    for dev in ("/device:CPU:0", DEVICE):
        with pytest.raises(tf.errors.InvalidArgumentError) as err:
            with tf.device(dev):
                tf.linalg.eigvalsh(b).numpy()
        messages.append(err.value.message.split(" [Op:")[0].split("}} ")[-1])
    assert messages[0] == messages[1]
    # The factors not asked for: the CPU's shapes.
    for dev in ("/device:CPU:0", DEVICE):
        with tf.device(dev):
            svd = tf.raw_ops.Svd(input=a[:1], compute_uv=False)
            eig = tf.raw_ops.SelfAdjointEigV2(input=b[None, :2, :2], compute_v=False)
        outs[dev] = [t.shape for t in list(svd) + list(eig)]
    assert outs[DEVICE] == outs["/device:CPU:0"]
    for shape in [(0, 3), (3, 0), (0, 2, 2)]:
        z = np.zeros(shape, np.float32)
        for full in (False, True):
            res = {}
            for dev in ("/device:CPU:0", DEVICE):
                with tf.device(dev):
                    res[dev] = [t.numpy() for t in tf.raw_ops.Svd(input=z, full_matrices=full)]
            for got, want in zip(res[DEVICE], res["/device:CPU:0"]):
                np.testing.assert_array_equal(got, want)


def _grad(tf, dev, fn, a):
    with tf.device(dev):
        x = tf.constant(a)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        g = tape.gradient(y, x)
    return y, g


# float32 only: the gradients' element-wise float64 ops (Mul) have no
# OPENCL kernel, and soft placement is off.
@pytest.mark.parametrize("dtype", [np.float32])
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 5)], ids=str)
def test_gradients_of_values(tf, dtype, shape):
    a = _rand(shape, dtype, seed=2)
    w = np.linspace(1.0, 2.0, min(shape[-2:])).astype(dtype)

    def svd_loss(x):
        s, _, _ = tf.linalg.svd(x)
        return tf.reduce_sum(s * w)

    def eigh_loss(x):
        e, _ = tf.linalg.eigh(x)
        return tf.reduce_sum(e * w)

    tol = TOL[dtype]
    cases = [svd_loss] + ([eigh_loss] if shape[-1] == shape[-2] else [])
    for fn in cases:
        y_cpu, g_cpu = _grad(tf, "/device:CPU:0", fn, a)
        y, g = _grad(tf, DEVICE, fn, a)
        _on_device(y, g)
        np.testing.assert_allclose(y.numpy(), y_cpu.numpy(), **tol)
        np.testing.assert_allclose(g.numpy(), g_cpu.numpy(), rtol=tol["rtol"] * 10,
                                   atol=tol["atol"] * 10)
