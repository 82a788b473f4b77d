"""int32 element-wise ops, whose operands TensorFlow keeps in host memory on
a device like OPENCL (the plugin computes them on the host, row by row):
the CPU's results bit for bit over the whole int32 range, as rows and as a
broadcast row, with the division edge cases (INT32_MIN / -1, divisors of
either sign, a zero divisor's error)."""
import numpy as np
import pytest

from conftest import DEVICE

OPS = {
    "floordiv": lambda tf: tf.math.floordiv,
    "floormod": lambda tf: tf.math.floormod,
    "truncatediv": lambda tf: tf.truncatediv,
    "truncatemod": lambda tf: tf.truncatemod,
    "add": lambda tf: tf.add,
    "subtract": lambda tf: tf.subtract,
    "multiply": lambda tf: tf.multiply,
    "maximum": lambda tf: tf.maximum,
    "squared_difference": lambda tf: tf.math.squared_difference,
    "left_shift": lambda tf: tf.bitwise.left_shift,
    "right_shift": lambda tf: tf.bitwise.right_shift,
    "bitwise_xor": lambda tf: tf.bitwise.bitwise_xor,
    "less": lambda tf: tf.less,
    "not_equal": lambda tf: tf.not_equal,
}


def _operands(shifts):
    rng = np.random.default_rng(7)
    n = 1 << 16
    a = rng.integers(-2**31, 2**31, n).astype(np.int32)
    b = rng.integers(-2**31, 2**31, n).astype(np.int32)
    b[::3] = rng.integers(-300, 300, (n + 2) // 3)  # small divisors: big quotients
    b[b == 0] = 7
    a[:8] = [-2**31, -2**31, 2**31 - 1, -2**31, 5, -5, 0, -2**31 + 1]
    b[:8] = [-1, 1, -1, 2**31 - 1, -2**31, -2**31, -3, -1]
    if shifts:
        b = b % 40 - 4  # below 0 and above 31: clamped
    return a, b


@pytest.mark.parametrize("name", sorted(OPS))
def test_int32_matches_cpu(tf, name):
    fn = OPS[name](tf)
    a, b = _operands("shift" in name)
    cases = [lambda: fn(tf.constant(a), tf.constant(b)),
             lambda: fn(tf.reshape(tf.constant(a), [256, 256]), tf.constant(b[:256])),
             lambda: fn(tf.reshape(tf.constant(a), [64, 4, 256]),
                        tf.reshape(tf.constant(b[:256]), [1, 1, 256])),
             lambda: fn(tf.constant(a[:4096]), tf.constant(b[5]))]
    for i, case in enumerate(cases):
        with tf.device("/CPU:0"):
            want = case().numpy()
        with tf.device(DEVICE):
            got = case()
        assert got.device.endswith("OPENCL:0"), got.device
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{name}, case {i}")


@pytest.mark.parametrize("name", ["floordiv", "floormod", "truncatediv", "truncatemod"])
def test_int32_zero_divisor_fails(tf, name):
    fn = OPS[name](tf)
    with tf.device(DEVICE):
        with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.InternalError)):
            fn(tf.constant([4, 5, 6, 7], tf.int32), tf.constant([1, 2, 0, 3], tf.int32)).numpy()
