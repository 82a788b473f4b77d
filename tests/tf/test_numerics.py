"""CheckNumerics and CheckNumericsV2 on OPENCL as on TensorFlow's CPU: the
same InvalidArgumentError message for every mix of NaN, -Inf and +Inf in
every type, the input passed through when it is finite, and
tf.debugging.enable_check_numerics stopping an OPENCL program at the op
that made the first NaN.
"""
import numpy as np
import pytest

from conftest import DEVICE

DTYPES = ["float16", "bfloat16", "float32", "float64"]
# Where each kind sits: the first element, one in the middle, the last.
MIXES = [(), (np.nan,), (np.inf,), (-np.inf,), (np.nan, np.inf), (np.nan, -np.inf),
         (np.inf, -np.inf), (np.nan, np.inf, -np.inf)]


def _run(tf, op, x, device):
    """The op's message, or its output as numpy, and the output's device."""
    with tf.device(device):
        try:
            out = op(tensor=tf.constant(x), message="layer_3/kernel")
        except tf.errors.InvalidArgumentError as e:
            # The message without the function and op names around it.
            return e.message.split("}} ")[-1].split(" [Op:")[0], None
    return out.numpy(), out.device


@pytest.mark.parametrize("v2", [False, True], ids=["CheckNumerics", "CheckNumericsV2"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_messages_match_cpu(tf, dtype, v2):
    op = tf.raw_ops.CheckNumericsV2 if v2 else tf.raw_ops.CheckNumerics
    np_dtype = tf.as_dtype(dtype).as_numpy_dtype
    rng = np.random.default_rng(7)
    for mix in MIXES:
        x = rng.uniform(-3, 3, size=(5, 1031)).astype(np_dtype)
        for value, at in zip(mix, (0, x.size // 2, x.size - 1)):
            x.flat[at] = value
        want, _ = _run(tf, op, x, "/CPU:0")
        got, device = _run(tf, op, x, DEVICE)
        if isinstance(want, str):
            assert got == want, f"{mix}: OPENCL said {got!r}, the CPU {want!r}"
        else:
            assert device.endswith("OPENCL:0"), device
            np.testing.assert_array_equal(got, x)


def test_empty_and_scalar_pass_through(tf):
    for x in (np.zeros((0, 3), np.float32), np.array(2.5, np.float32)):
        got, device = _run(tf, tf.raw_ops.CheckNumerics, x, DEVICE)
        assert device.endswith("OPENCL:0")
        np.testing.assert_array_equal(got, x)


def test_enable_check_numerics_names_the_op(tf):
    """tf.debugging.enable_check_numerics checks every op's output with
    CheckNumericsV2: on OPENCL it must stop at the Log of a negative."""
    tf.debugging.enable_check_numerics()
    try:
        @tf.function
        def step(x):
            y = tf.math.log(x)
            return tf.reduce_sum(y * 2.0)

        with tf.device(DEVICE):
            ok = step(tf.constant([1.0, 2.0]))
            assert ok.device.endswith("OPENCL:0")
            with pytest.raises(tf.errors.InvalidArgumentError, match="NaN"):
                step(tf.constant([1.0, -2.0]))
    finally:
        tf.debugging.disable_check_numerics()
