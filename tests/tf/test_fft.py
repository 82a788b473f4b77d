"""The FFT ops on OPENCL beyond op_cases' small cases: every length class
(1, powers of two in local memory and in global steps, other lengths by
the direct DFT) against TensorFlow's CPU (DUCC) and as round trips, 2-D and
3-D transforms, tf.signal.stft of a batch of signals, complex128, the
empty and fft_length-0 shapes, and TensorFlow's errors.

float32 tolerances scale with sqrt(n): an output sums n products whose
rounding errors add up as a random walk, in an order of each side's own.
"""
import numpy as np
import pytest

from conftest import DEVICE

LENGTHS = [1, 2, 3, 5, 8, 12, 64, 100, 128, 1000, 1024, 4096]


def _tol(dtype, n):
    scale = np.sqrt(max(n, 1))
    if dtype in (np.complex128, np.float64):
        return dict(rtol=1e-9, atol=1e-9 * scale)
    return dict(rtol=1e-4, atol=1e-4 * scale)


def _rand(rng, shape, dtype):
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def _on(tf, device, fn, *args):
    with tf.device(device):
        out = fn(*[tf.constant(a) for a in args])
    return out


def _both(tf, fn, *args):
    """fn on OPENCL (checked to have run there) and on the CPU."""
    got = _on(tf, DEVICE, fn, *args)
    assert got.device.endswith("OPENCL:0"), got.device
    want = _on(tf, "/CPU:0", fn, *args)
    return got.numpy(), want.numpy()


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_fft_ifft_lengths(tf, n, dtype):
    rng = np.random.default_rng(n)
    x = _rand(rng, (3, n), dtype)
    got, want = _both(tf, tf.signal.fft, x)
    np.testing.assert_allclose(got, want, **_tol(dtype, n))
    np.testing.assert_allclose(got, np.fft.fft(x.astype(np.complex128)), **_tol(dtype, n))
    back, want_back = _both(tf, tf.signal.ifft, got)
    np.testing.assert_allclose(back, want_back, **_tol(dtype, n))
    np.testing.assert_allclose(back, x, **_tol(dtype, n))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rfft_irfft_lengths(tf, n, dtype):
    rng = np.random.default_rng(n + 1)
    x = _rand(rng, (2, n), dtype)
    spectrum, want = _both(tf, tf.signal.rfft, x)
    assert spectrum.shape == (2, n // 2 + 1)
    np.testing.assert_allclose(spectrum, want, **_tol(dtype, n))
    back, want_back = _both(tf, lambda s: tf.signal.irfft(s, fft_length=[n]), spectrum)
    assert back.shape == (2, n)
    np.testing.assert_allclose(back, want_back, **_tol(dtype, n))
    np.testing.assert_allclose(back, x, **_tol(dtype, n))


@pytest.mark.parametrize("shape", [(2, 12, 16), (3, 8, 5), (1, 64, 64), (4, 7, 9)])
def test_fft2d_and_rfft2d(tf, shape):
    rng = np.random.default_rng(sum(shape))
    n = shape[-1] * shape[-2]
    x = _rand(rng, shape, np.complex64)
    got, want = _both(tf, tf.signal.fft2d, x)
    np.testing.assert_allclose(got, want, **_tol(np.complex64, n))
    back, _ = _both(tf, tf.signal.ifft2d, got)
    np.testing.assert_allclose(back, x, **_tol(np.complex64, n))
    r = _rand(rng, shape, np.float32)
    spectrum, want = _both(tf, tf.signal.rfft2d, r)
    np.testing.assert_allclose(spectrum, want, **_tol(np.float32, n))
    fft_length = list(shape[-2:])
    back, want_back = _both(tf, lambda s: tf.signal.irfft2d(s, fft_length=fft_length), spectrum)
    np.testing.assert_allclose(back, want_back, **_tol(np.float32, n))
    np.testing.assert_allclose(back, r, **_tol(np.float32, n))


@pytest.mark.parametrize("shape", [(2, 4, 8, 16), (3, 5, 6), (2, 3, 1, 12)])
def test_fft3d_and_rfft3d(tf, shape):
    rng = np.random.default_rng(len(shape) + sum(shape))
    n = int(np.prod(shape[-3:]))
    x = _rand(rng, shape, np.complex64)
    got, want = _both(tf, tf.signal.fft3d, x)
    np.testing.assert_allclose(got, want, **_tol(np.complex64, n))
    back, _ = _both(tf, tf.signal.ifft3d, got)
    np.testing.assert_allclose(back, x, **_tol(np.complex64, n))
    r = _rand(rng, shape, np.float32)
    spectrum, want = _both(tf, tf.signal.rfft3d, r)
    np.testing.assert_allclose(spectrum, want, **_tol(np.float32, n))
    fft_length = list(shape[-3:])
    back, _ = _both(tf, lambda s: tf.signal.irfft3d(s, fft_length=fft_length), spectrum)
    np.testing.assert_allclose(back, r, **_tol(np.float32, n))


def test_real_transforms_crop_and_pad(tf):
    """tf.signal pads (zeros) or crops the input to fft_length; the ops
    crop themselves."""
    rng = np.random.default_rng(5)
    x = _rand(rng, (3, 20), np.float32)
    for n in (16, 20, 25, 32, 7):
        got, want = _both(tf, lambda t: tf.signal.rfft(t, fft_length=[n]), x)
        np.testing.assert_allclose(got, want, **_tol(np.float32, n))
    s = _rand(rng, (3, 11), np.complex64)
    for n in (8, 12, 20, 21, 5):
        got, want = _both(tf, lambda t: tf.signal.irfft(t, fft_length=[n]), s)
        np.testing.assert_allclose(got, want, **_tol(np.float32, n))
    got, want = _both(tf, lambda t: tf.raw_ops.RFFT2D(input=t, fft_length=[4, 6]),
                      _rand(rng, (2, 6, 9), np.float32))
    np.testing.assert_allclose(got, want, **_tol(np.float32, 24))


def test_irfft_ignores_imaginary_dc_and_nyquist(tf):
    s = np.array([[1 + 5j, 2 + 1j, 3 + 7j], [0.5 - 2j, 1j, -1 + 3j]], np.complex64)
    for n in (4, 5):
        got, want = _both(tf, lambda t: tf.signal.irfft(t, fft_length=[n]), s)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_stft_batch_matches_cpu(tf):
    rng = np.random.default_rng(11)
    signals = rng.standard_normal((4, 8000)).astype(np.float32)
    for frame_length, frame_step, fft_length in ((256, 128, None), (400, 160, 400), (400, 160, None)):
        fn = lambda s: tf.signal.stft(s, frame_length=frame_length, frame_step=frame_step,
                                      fft_length=fft_length)
        got, want = _both(tf, fn, signals)
        # tf.signal's default: the next power of two of the frame length.
        n = fft_length or 1 << (frame_length - 1).bit_length()
        assert got.shape == want.shape and got.shape[-1] == n // 2 + 1
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(n))


def test_empty_shapes(tf):
    raw = tf.raw_ops
    with tf.device(DEVICE):
        out = raw.FFT(input=tf.zeros([3, 0], tf.complex64))
        assert out.shape == (3, 0) and out.device.endswith("OPENCL:0")
        # fft_length 0 over a non-empty input: an empty output (TensorFlow's
        # CPU aborts inside DUCC here, so it is not asked).
        out = raw.RFFT(input=tf.ones([3, 5]), fft_length=[0])
        assert out.shape == (3, 0)
        out = raw.IRFFT(input=tf.ones([3, 5], tf.complex64), fft_length=[0])
        assert out.shape == (3, 0)
        out = raw.RFFT2D(input=tf.ones([3, 4]), fft_length=[0, 2])
        assert out.shape == (0, 2)
        # An empty input under a non-empty output: zeros (the CPU leaves
        # that output unwritten).
        out = raw.RFFT(input=tf.zeros([2, 0]), fft_length=[4])
        assert out.shape == (2, 3) and not np.any(out.numpy())
        out = raw.IRFFT(input=tf.zeros([2, 0], tf.complex64), fft_length=[4])
        assert out.shape == (2, 4) and not np.any(out.numpy())


def _message(tf, device, fn):
    with tf.device(device):
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            fn()
    return e.value.message.split("}}")[-1].split(" [Op:")[0].strip()


@pytest.mark.parametrize("case", [
    "rank", "short", "negative", "length_shape", "irfft_short", "irfft2d_outer"])
def test_errors_as_cpu(tf, case):
    raw = tf.raw_ops
    calls = {
        "rank": lambda: raw.FFT2D(input=tf.ones([4], tf.complex64)),
        "short": lambda: raw.RFFT(input=tf.ones([2, 3]), fft_length=[4]),
        "negative": lambda: raw.RFFT(input=tf.ones([2, 3]), fft_length=[-1]),
        "length_shape": lambda: raw.RFFT(input=tf.ones([2, 3]), fft_length=[1, 2]),
        "irfft_short": lambda: raw.IRFFT(input=tf.ones([2, 2], tf.complex64), fft_length=[8]),
        "irfft2d_outer": lambda: raw.IRFFT2D(input=tf.ones([3, 4], tf.complex64),
                                             fft_length=[4, 6]),
    }
    assert _message(tf, DEVICE, calls[case]) == _message(tf, "/CPU:0", calls[case])
