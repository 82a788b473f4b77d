"""The complex family on OPENCL: Complex, Real, Imag, Conj, ComplexAbs,
Angle and the complex64/complex128 kernels of AddV2, Sub, Mul, RealDiv,
Neg, Square and Exp give TensorFlow's CPU results (random values, broadcasts,
signed zeros, infinities, NaN, huge and tiny parts), and the arithmetic
between FFTs stays on OPENCL: a spectral filter's graph has no node on the
CPU, and tf.abs / tf.math.angle of an FFT run there too.

Soft placement is off (conftest), so an op without an OPENCL kernel fails
rather than running on the CPU unseen."""
import numpy as np
import pytest

from conftest import DEVICE, tf_version
from test_graph import _placed  # {device: ops} of a function's partitions

COMPLEX = [np.complex64, np.complex128]
REAL_OF = {np.complex64: np.float32, np.complex128: np.float64}
# Nodes a device function may leave on the host: arguments, results,
# transfers and constants (fft_length lives in host memory).
HOST_OK = {"_Arg", "_Retval", "_Send", "_Recv", "_HostSend", "_HostRecv",
           "Const", "NoOp"}


def _tol(dtype):
    if dtype in (np.complex128, np.float64):
        return dict(rtol=1e-12, atol=1e-12)
    return dict(rtol=2e-6, atol=1e-6)


def _rand(rng, shape, dtype):
    return (rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)).astype(dtype)


def _specials(dtype):
    """Every (real, imaginary) pair of signed zeros, infinities, NaN and
    magnitudes far from 1 (products of two stay within float's range)."""
    parts = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e18, -1e-18]
    return np.array([complex(r, i) for r in parts for i in parts], dtype=dtype)


def _run(tf, device, fn, *args):
    with tf.device(device):
        out = fn(*[tf.constant(a) for a in args])
    return out


def _both(tf, fn, *args):
    got = _run(tf, DEVICE, fn, *args)
    assert got.device.endswith("OPENCL:0"), got.device
    want = _run(tf, "/CPU:0", fn, *args)
    assert got.dtype == want.dtype
    return got.numpy(), want.numpy()


def _assert_same(got, want, dtype):
    """Equal within rounding; NaN where the CPU has NaN, equal infinities."""
    np.testing.assert_allclose(got, want, equal_nan=True, **_tol(dtype))


BINARY = {
    "AddV2": lambda tf: tf.math.add,
    "Sub": lambda tf: tf.math.subtract,
    "Mul": lambda tf: tf.math.multiply,
    "RealDiv": lambda tf: tf.math.truediv,
}
UNARY = {
    "Neg": lambda tf: tf.math.negative,
    "Conj": lambda tf: tf.math.conj,
    "Square": lambda tf: tf.math.square,
    "Exp": lambda tf: tf.math.exp,
    "Real": lambda tf: tf.math.real,
    "Imag": lambda tf: tf.math.imag,
    "ComplexAbs": lambda tf: tf.math.abs,
    "Angle": lambda tf: tf.math.angle,
}

SHAPES = [((3, 5), (3, 5)), ((), (4, 7)), ((4, 7), ()), ((5, 1), (1, 6)),
          ((2, 3, 4), (3, 1)), ((2, 1, 4, 5), (3, 1, 1)), ((0, 3), (3,)),
          ((257, 33), (33,))]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_random_and_broadcast(tf, op, dtype, shapes):
    rng = np.random.default_rng(len(op) * 31 + sum(map(len, shapes)))
    x, y = _rand(rng, shapes[0], dtype), _rand(rng, shapes[1], dtype)
    got, want = _both(tf, BINARY[op](tf), x, y)
    assert got.shape == want.shape == np.broadcast_shapes(*shapes)
    _assert_same(got, want, dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_special_values(tf, op, dtype):
    s = _specials(dtype)
    x, y = np.repeat(s, s.size), np.tile(s, s.size)
    got, want = _both(tf, BINARY[op](tf), x, y)
    if op == "RealDiv" and tf_version() >= (2, 22):
        # The device divides as 2.19-2.21's CPU does (NaN for a zero,
        # infinite or NaN divisor); 2.22's CPU gives 0 for a finite
        # numerator over an infinite divisor, and other NaN patterns there.
        # By finite non-zero divisors they agree.
        finite = np.isfinite(y) & (y != 0)
        got, want = got[finite], want[finite]
    _assert_same(got, want, dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_division_scales_the_divisor(tf, dtype):
    """Quotients of order 1 whose divisor's |b|^2 leaves float's range:
    Eigen scales the divisor first, and so does the device. (Parts whose
    products are subnormal are left out: TensorFlow's CPU flushes them to
    zero, and its scalar tail divides by Smith's method, so its own answer
    there depends on where an element falls.)"""
    x = np.array([1e30 + 1e30j, 1e-30 + 2e-30j, -2e30 + 5e30j, 1 + 1j,
                  3e38 + 3e38j], dtype)
    y = np.array([1e30 + 2e30j, 3e-30 - 1e-30j, 3e30 + 4e30j, 1e30 + 1e30j,
                  1e-10 + 1e-10j], dtype)
    got, want = _both(tf, tf.math.truediv, x, y)
    _assert_same(got, want, dtype)
    assert np.all(np.isfinite(got[:4]))
    assert np.isinf(got[4].real) == (dtype == np.complex64)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(tf, op, dtype):
    rng = np.random.default_rng(len(op))
    for x in [_rand(rng, (3, 1031), dtype), _rand(rng, (), dtype),
              np.zeros((0, 4), dtype), _specials(dtype),
              np.array([3e38 + 3e38j, 1e-37 + 1e-37j, -1e38 + 1e30j], dtype)]:
        if op == "Square" and x.size == 3:
            continue  # float overflows there, where the CPU's order decides NaN or inf
        got, want = _both(tf, UNARY[op](tf), x)
        assert got.shape == want.shape
        _assert_same(got, want, dtype)


@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((), (3, 6)), ((3, 1), (1, 4))],
                         ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_complex_from_parts(tf, dtype, shapes):
    rng = np.random.default_rng(7)
    re = rng.uniform(-3, 3, shapes[0]).astype(dtype)
    im = rng.uniform(-3, 3, shapes[1]).astype(dtype)
    got, want = _both(tf, tf.complex, re, im)
    assert got.dtype == (np.complex64 if dtype == np.float32 else np.complex128)
    np.testing.assert_array_equal(got, want)
    parts = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38], dtype)
    got, want = _both(tf, tf.complex, np.repeat(parts, 6), np.tile(parts, 6))
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got.imag), np.signbit(want.imag))


def _assert_all_on_device(where, ops):
    cpu = {op for dev, got in where.items() if dev.startswith("CPU") for op in got}
    assert not cpu - HOST_OK, f"graph ops placed on CPU: {sorted(cpu - HOST_OK)}"
    on_device = set().union(*[got for dev, got in where.items() if dev.startswith("OPENCL")])
    assert ops <= on_device, (ops, where)


@pytest.mark.parametrize("real", [np.float32, np.float64])
def test_spectral_filter_stays_on_device(tf, real):
    rng = np.random.default_rng(3)
    n = 256
    x = rng.normal(size=(4, n)).astype(real)
    cplx = np.complex64 if real == np.float32 else np.complex128
    h = np.exp(-np.arange(n // 2 + 1) / 20.0).astype(cplx) * (1 - 0.5j)
    f = tf.function(lambda x, h: tf.signal.irfft(tf.signal.rfft(x) * h))
    with tf.device("/CPU:0"):
        want = f(x, h).numpy()
    with tf.device(DEVICE):
        got, where = _placed(tf, f, tf.constant(x), tf.constant(h))
    _assert_all_on_device(where, {"RFFT", "Mul", "IRFFT"})
    assert got.device.endswith("OPENCL:0")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4 if real == np.float32 else 1e-10)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_abs_and_angle_of_an_fft(tf, dtype):
    rng = np.random.default_rng(5)
    z = _rand(rng, (3, 128), dtype)

    def spectrum(z):
        s = tf.signal.fft(z)
        return tf.abs(s), tf.math.angle(s), tf.math.real(s), tf.math.imag(s)

    f = tf.function(spectrum)
    with tf.device("/CPU:0"):
        want = [t.numpy() for t in f(z)]
    with tf.device(DEVICE):
        got, where = _placed(tf, f, tf.constant(z))
    _assert_all_on_device(where, {"FFT", "ComplexAbs", "Angle", "Real", "Imag"})
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == np.complex64 else dict(rtol=1e-9, atol=1e-9)
    for g, w in zip(got, want):
        assert g.device.endswith("OPENCL:0")
        np.testing.assert_allclose(g.numpy(), w, **tol)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_chain_in_a_function(tf, dtype):
    """A chain of complex element-wise ops in a tf.function: the graph
    pass's element-wise fusion takes float and half chains only, so each op
    runs as its own complex kernel, on OPENCL."""
    rng = np.random.default_rng(11)
    a, b = _rand(rng, (5, 64), dtype), _rand(rng, (64,), dtype)
    # Only complex arithmetic: float64 AddV2 and its kin have no OPENCL
    # kernel today, and soft placement is off.
    re = rng.uniform(-1, 1, (5, 1)).astype(REAL_OF[dtype])
    im = rng.uniform(2, 3, (5, 1)).astype(REAL_OF[dtype])
    f = tf.function(lambda a, b, re, im: tf.math.conj(
        -tf.square(a * b + a) / (b - tf.complex(re, im))))
    with tf.device("/CPU:0"):
        want = f(a, b, re, im).numpy()
    with tf.device(DEVICE):
        got, where = _placed(tf, f, *[tf.constant(v) for v in (a, b, re, im)])
    _assert_all_on_device(where, {"Mul", "AddV2", "Square", "Neg", "Sub", "RealDiv",
                                  "Complex", "Conj"})
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5 if dtype == np.complex64 else 1e-12)
