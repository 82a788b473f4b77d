"""Bad inputs from Python raise InvalidArgumentError and the process goes
on; variable updates without TensorFlow's variable API fail cleanly."""
import numpy as np
import pytest

from conftest import DEVICE, NO_VARIABLE_API_REASON, has_variable_api, run_python


def _still_works(tf):
    with tf.device(DEVICE):
        c = tf.constant([1.0, 2.0]) * 2.0
    assert c.device.endswith("OPENCL:0") and c.numpy().tolist() == [2.0, 4.0]


def test_matmul_shape_mismatch(tf):
    with tf.device(DEVICE):
        a = tf.constant(np.ones((2, 3), np.float32))
        b = tf.constant(np.ones((4, 5), np.float32))
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.raw_ops.MatMul(a=a, b=b)
    _still_works(tf)


def test_matmul_rank_mismatch(tf):
    with tf.device(DEVICE):
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.raw_ops.MatMul(a=tf.ones([2, 3, 4]), b=tf.ones([4, 5]))
    _still_works(tf)


def test_incompatible_broadcast(tf):
    with tf.device(DEVICE):
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.raw_ops.AddV2(x=tf.ones([2, 3]), y=tf.ones([4]))
    _still_works(tf)


def test_wrong_dtype(tf):
    with tf.device(DEVICE):
        x = tf.constant([1.0, 2.0])
        y = tf.constant([1, 2], dtype=tf.int64)
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.raw_ops.AddV2(x=x, y=y)
    _still_works(tf)


def test_unregistered_dtype_no_soft_placement(tf):
    """A dtype the plugin has no kernel for fails placement loudly (soft
    placement is off), it does not silently run elsewhere."""
    with tf.device(DEVICE):
        x = tf.constant([1 + 2j], dtype=tf.complex64)
        with pytest.raises((tf.errors.NotFoundError, tf.errors.InvalidArgumentError)):
            tf.raw_ops.AddV2(x=x, y=x)
    _still_works(tf)


def test_errors_in_tf_function(tf):
    # Unknown shapes: the mismatch reaches the kernel at run time.
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)] * 2)
    def f(a, b):
        return tf.matmul(a, b)

    with tf.device(DEVICE):
        with pytest.raises(tf.errors.InvalidArgumentError):
            f(tf.ones([2, 3]), tf.ones([4, 2]))
    _still_works(tf)


_VARIABLE_UPDATE = """
import tensorflow as tf
tf.config.set_soft_device_placement(False)
with tf.device("/device:OPENCL:0"):
    v = tf.Variable([1.0, 2.0])
    try:
        v.assign_add([1.0, 1.0])
        print("RESULT", v.numpy().tolist())
    except tf.errors.OpError as e:
        print("ERROR", type(e).__name__, e.message.replace("\\n", " ")[:600])
    print("AFTER", (tf.constant([1.0]) + 1.0).numpy().tolist())
"""


def test_variable_update_never_crashes():
    """AssignAddVariableOp on the device: the right value where TensorFlow
    exports the variable API (2.19), else a clear error (never TensorFlow's
    DEFAULT kernel running host code on device addresses, never a crash)."""
    out = run_python(_VARIABLE_UPDATE)
    assert out.returncode == 0, f"crashed (rc {out.returncode}):\n{out.stderr[-3000:]}"
    assert "AFTER [2.0]" in out.stdout, out.stdout + out.stderr[-2000:]
    import tensorflow  # noqa: F401  (has_variable_api needs it loaded)
    if has_variable_api():
        assert "RESULT [2.0, 3.0]" in out.stdout, out.stdout + out.stderr[-2000:]
    else:
        line = next((x for x in out.stdout.splitlines() if x.startswith(("ERROR", "RESULT"))), "")
        assert line.startswith("ERROR"), f"expected a clear error ({NO_VARIABLE_API_REASON}): {line}"
        print(line)


@pytest.mark.variables
def test_variable_updates_on_device(tf):
    with tf.device(DEVICE):
        v = tf.Variable(np.arange(4, dtype=np.float32))
        v.assign_add(np.ones(4, np.float32))
        v.assign_sub(np.full(4, 0.5, np.float32))
        step = tf.Variable(0, dtype=tf.int64)
        step.assign_add(1)
    np.testing.assert_allclose(v.numpy(), np.arange(4) + 0.5)
    assert step.numpy() == 1
