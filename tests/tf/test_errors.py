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
        # The complex family has AddV2 and Mul of complex64; Sqrt of it runs
        # on TensorFlow's CPU only.
        x = tf.constant([1 + 2j], dtype=tf.complex64)
        with pytest.raises((tf.errors.NotFoundError, tf.errors.InvalidArgumentError)):
            tf.raw_ops.Sqrt(x=x)
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


# TensorFlow's DEVICE_DEFAULT kernels of these ops run CPU code on the
# variable's buffer: on OPENCL that is a device address, so every dtype they
# take needs an OPENCL kernel of its own.
_HOST_CODE_DEFAULT_OPS = ("AssignAddVariableOp", "AssignSubVariableOp")


def _default_dtypes(tf, op):
    from tensorflow.python.framework import kernels
    found = set()
    for k in kernels.get_registered_kernels_for_op(op).kernel:
        if k.device_type == "DEFAULT":
            for c in k.constraint:
                found.update(tf.dtypes.as_dtype(t).name for t in c.allowed_values.list.type)
    return sorted(found)


def test_default_host_code_kernels_overridden(tf):
    """Every (op, dtype) whose DEVICE_DEFAULT kernel runs host code on the
    data has an OPENCL kernel, with or without TensorFlow's variable API."""
    from tensorflow.python.framework import kernels
    missing = []
    for op in _HOST_CODE_DEFAULT_OPS:
        ours = set()
        for k in kernels.get_registered_kernels_for_op(op).kernel:
            if k.device_type == "OPENCL":
                for c in k.constraint:
                    ours.update(tf.dtypes.as_dtype(t).name for t in c.allowed_values.list.type)
        default = _default_dtypes(tf, op)
        assert default, f"TensorFlow registers no DEFAULT {op}: the test is stale"
        missing += [f"{op}[{d}]" for d in default if d not in ours]
    assert not missing, f"DEFAULT kernels would run host code on device memory: {missing}"


_UPDATE_EVERY_DTYPE = """
import sys
import numpy as np
import tensorflow as tf
for name in sys.argv[1:]:
    dtype = tf.dtypes.as_dtype(name)
    for op in ("assign_add", "assign_sub"):
        try:
            # Soft placement (the default) puts what has no OPENCL kernel on
            # the CPU; the variable itself is on OPENCL (VarHandleOp is a
            # DEVICE_DEFAULT kernel for every dtype), except int32, which
            # eager TensorFlow keeps on the host as it does for GPUs.
            with tf.device("/device:OPENCL:0"):
                v = tf.Variable(tf.zeros([3], dtype))
                getattr(v, op)(tf.ones([3], dtype) * tf.constant(3, dtype))
            where = "OPENCL" if "OPENCL" in v.device else "HOST"
            print("RESULT", name, op, where, np.asarray(v.numpy()).tolist(), flush=True)
        except tf.errors.OpError as e:
            print("ERROR", name, op, type(e).__name__, e.message.replace("\\n", " ")[:300], flush=True)
print("AFTER", (tf.constant([1.0]) + 1.0).numpy().tolist())
"""


def test_variable_update_every_default_dtype(tf):
    """tf.Variable(...).assign_add/assign_sub with default placement, for
    every dtype TensorFlow's DEFAULT kernels take: the CPU's values (or,
    without the variable API, a clean error), never a crash."""
    dtypes = sorted(set(_default_dtypes(tf, "AssignAddVariableOp")) |
                    set(_default_dtypes(tf, "AssignSubVariableOp")))
    out = run_python(_UPDATE_EVERY_DTYPE, *dtypes)
    assert out.returncode == 0, f"crashed (rc {out.returncode}):\n{out.stdout}\n{out.stderr[-3000:]}"
    assert "AFTER [2.0]" in out.stdout, out.stdout + out.stderr[-2000:]
    lines = [x.split(" ", 3) for x in out.stdout.splitlines() if x.startswith(("RESULT", "ERROR"))]
    assert len(lines) == 2 * len(dtypes), out.stdout
    on_device = 0
    for kind, name, op, rest in lines:
        if kind == "RESULT":
            where, rest = rest.split(" ", 1)
            on_device += where == "OPENCL"
        if has_variable_api():
            assert kind == "RESULT", f"{name} {op}: {rest}"
            want = [3, 3, 3] if op == "assign_add" else [-3, -3, -3]
            if name.startswith("uint"):
                want = [3, 3, 3] if op == "assign_add" else [(1 << (8 * np.dtype(name).itemsize)) - 3] * 3
            got = eval(rest)  # noqa: S307 -- our own subprocess's list of numbers
            assert np.allclose(np.asarray(got, dtype=np.complex128 if name.startswith("complex") else np.float64),
                               want), f"{name} {op}: {got}, want {want}"
        elif kind == "ERROR":
            assert "Unimplemented" in rest, f"{name} {op}: {rest}"
        else:
            assert where == "HOST", f"{name} {op} ran on OPENCL without the variable API"
    if has_variable_api():
        assert on_device >= 2 * (len(dtypes) - 1), out.stdout


def test_unseeded_random_ops_refused_under_determinism(tf):
    """With op determinism on, TensorFlow's random kernels refuse to run
    without a seed; the OPENCL ones must too, with the same message."""
    from tensorflow.python.framework import config
    from tensorflow.python.ops import gen_random_ops
    config.enable_op_determinism()
    try:
        with tf.device(DEVICE):
            for op in (gen_random_ops.truncated_normal, gen_random_ops.random_standard_normal,
                       gen_random_ops.random_uniform):
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match="When determinism is enabled, random ops must have a seed specified"):
                    op((1,), tf.float32)
            # Seeded ones still run.
            v = gen_random_ops.truncated_normal((3,), tf.float32, seed=1, seed2=2)
            assert v.device.endswith("OPENCL:0") and v.shape == (3,)
    finally:
        config.disable_op_determinism()
    _still_works(tf)


SHAPE_OVERFLOW = """
import numpy as np
import tensorflow as tf
tf.config.set_soft_device_placement(False)
cases = {
    "tile": lambda: tf.tile(np.ones((1, 1, 1), np.float32), [100000000] * 3),
    "tile_wraps": lambda: tf.tile(tf.ones([2]), tf.constant([2 ** 62], tf.int64)),
    "fill": lambda: tf.fill(tf.constant([2 ** 62, 4], tf.int64), 1.0),
    "broadcast_to": lambda: tf.broadcast_to(tf.ones([1]), tf.constant([2 ** 62, 2 ** 62, 2], tf.int64)),
}
for name, make in cases.items():
    with tf.device("/device:OPENCL:0"):
        try:
            make()
            print(name, "NO ERROR")
        except tf.errors.InvalidArgumentError:
            print(name, "InvalidArgumentError")
        except tf.errors.ResourceExhaustedError:
            print(name, "ResourceExhaustedError")
with tf.device("/device:OPENCL:0"):
    print("STILL", (tf.constant([1.0]) * 2.0).numpy().tolist())
"""


def test_shapes_from_values_that_overflow_raise():
    """tf.tile(np.ones((1, 1, 1)), [100000000] * 3) aborted the process in
    TensorFlow's TensorShape (the plugin handed it an overflowing shape);
    TensorFlow's CPU kernel raises InvalidArgumentError, and so must OPENCL.
    In a child process: an abort must fail this test, not the suite."""
    out = run_python(SHAPE_OVERFLOW)
    assert out.returncode == 0, out.stderr[-3000:]
    for name in ("tile", "tile_wraps", "fill", "broadcast_to"):
        assert f"{name} InvalidArgumentError" in out.stdout, out.stdout + out.stderr[-2000:]
    assert "STILL [2.0]" in out.stdout
