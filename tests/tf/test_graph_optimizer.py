"""The graph optimizer (TF_InitGraph, plugin/graph/) inside real TensorFlow.

Where the wheel exports no kernels_experimental.h (2.20, 2.21), the
variable updates of tf.function graphs on OPENCL are rewritten into
ReadVariableOp -> arithmetic -> AssignVariableOp and give the CPU's values;
eager updates still fail with the kernel's explanation. Where the wheel
exports it (2.19.1), the rewrite stays off and the plugin's update kernels
run. Graphs without OPENCL nodes are never touched."""
import numpy as np
import pytest

from conftest import DEVICE, has_variable_api

CPU = "/device:CPU:0"


def _partition_ops(tf, fn, *args):
    """Runs fn and returns {device type: set of op types} of the partition
    graphs TensorFlow executed (after Grappler, so after our optimizer)."""
    from tensorflow.python.eager import context
    context.export_run_metadata()
    context.enable_run_metadata()
    try:
        out = fn(*args)
    finally:
        md = context.export_run_metadata()
        context.disable_run_metadata()
    where = {}
    for fg in md.function_graphs:
        for g in fg.partition_graphs:
            for n in g.node:
                dev = n.device.split("device:")[-1].split(":")[0]
                where.setdefault(dev, set()).add(n.op)
    return out, where


def _updates(tf, device):
    with tf.device(device):
        v = tf.Variable(np.arange(4, dtype=np.float32))
        h = tf.Variable(np.arange(4, dtype=np.float16))
        step = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def f(x):
        v.assign_add(x)
        v.assign_sub(x * 0.25)
        h.assign_add(tf.cast(x, tf.float16))
        step.assign_add(1)
        return v.read_value()

    with tf.device(device):
        x = tf.constant(np.ones(4, np.float32))
        _, where = _partition_ops(tf, f, x)
        f(x)
    return v.numpy(), h.numpy(), step.numpy(), where


def test_variable_updates_in_tf_function(tf):
    ours = _updates(tf, DEVICE)
    cpu = _updates(tf, CPU)
    np.testing.assert_array_equal(ours[0], cpu[0])
    np.testing.assert_array_equal(ours[1], cpu[1])
    assert ours[2] == cpu[2] == 2
    on_opencl = ours[3].get("OPENCL", set())
    if has_variable_api():
        # 2.19.1, 2.22: the plugin's own in-place kernels for the updates of
        # an argument and a constant; the two whose values are element-wise
        # ops' (x * 0.25, the Cast) become Read -> one fused program with
        # the add -> Assign.
        assert "AssignAddVariableOp" in on_opencl, ours[3]
        assert "AssignSubVariableOp" not in on_opencl, ours[3]
        assert {"AssignVariableOp", "_TfoclFusedElementwise"} <= on_opencl, ours[3]
    else:
        assert not {"AssignAddVariableOp", "AssignSubVariableOp"} & on_opencl, ours[3]
        assert {"ReadVariableOp", "AssignVariableOp"} <= on_opencl, ours[3]
        # The rewrite's arithmetic, or the element-wise fusion of it.
        assert {"AddV2", "Sub", "_TfoclFusedElementwise"} & on_opencl, ours[3]
    assert "CPU" not in ours[3] or not ({"AddV2", "Sub"} & ours[3]["CPU"]), ours[3]


def _optimizer_steps(tf, device, dtype):
    rng = np.random.default_rng(3)
    shape = (3, 5)
    init = {k: rng.normal(size=shape).astype(dtype) for k in
            ("gd", "mv", "ma", "nv", "na", "av", "am", "aw", "bv", "bm", "bw")}
    init["av"] = np.abs(init["av"])  # Adam's v is a running mean of squares
    init["bv"] = np.abs(init["bv"])
    with tf.device(device):
        var = {k: tf.Variable(a) for k, a in init.items()}
    raw = tf.raw_ops
    c = lambda x: tf.constant(x, dtype)  # noqa: E731

    @tf.function
    def step(grad):
        raw.ResourceApplyGradientDescent(var=var["gd"].handle, alpha=c(0.1), delta=grad)
        raw.ResourceApplyMomentum(var=var["mv"].handle, accum=var["ma"].handle, lr=c(0.1),
                                  grad=grad, momentum=c(0.9))
        raw.ResourceApplyMomentum(var=var["nv"].handle, accum=var["na"].handle, lr=c(0.1),
                                  grad=grad, momentum=c(0.9), use_nesterov=True)
        raw.ResourceApplyAdam(var=var["aw"].handle, m=var["am"].handle, v=var["av"].handle,
                              beta1_power=c(0.81), beta2_power=c(0.998), lr=c(0.01),
                              beta1=c(0.9), beta2=c(0.999), epsilon=c(1e-7), grad=grad)
        raw.ResourceApplyAdam(var=var["bw"].handle, m=var["bm"].handle, v=var["bv"].handle,
                              beta1_power=c(0.81), beta2_power=c(0.998), lr=c(0.01),
                              beta1=c(0.9), beta2=c(0.999), epsilon=c(1e-7), grad=grad,
                              use_nesterov=True)

    with tf.device(device):
        for i in range(3):
            step(tf.constant(rng.normal(size=shape).astype(dtype)))
    return {k: v.numpy() for k, v in var.items()}


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["float32", "float16"])
def test_optimizer_updates_in_tf_function(tf, dtype):
    """ResourceApplyGradientDescent/Momentum/Adam (nesterov too) in a
    tf.function on OPENCL: the CPU's values (float32 to rounding; half is
    computed in float by the kernels on 2.19, in half by the rewritten
    graph on 2.21)."""
    ours = _optimizer_steps(tf, DEVICE, dtype)
    cpu = _optimizer_steps(tf, CPU, dtype)
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-2, atol=2e-3)
    for k in ours:
        np.testing.assert_allclose(ours[k].astype(np.float32), cpu[k].astype(np.float32),
                                   err_msg=k, **tol)


def test_cpu_graphs_are_left_alone(tf):
    """A function placed on the CPU keeps its AssignAddVariableOp: the
    optimizer only rewrites OPENCL nodes (and is only run for graphs that
    have some)."""
    with tf.device(CPU):
        v = tf.Variable([1.0, 2.0])

    @tf.function
    def f():
        v.assign_add([1.0, 1.0])
        return v.read_value()

    with tf.device(CPU):
        out, where = _partition_ops(tf, f)
    np.testing.assert_array_equal(out.numpy(), [2.0, 3.0])
    assert "AssignAddVariableOp" in where.get("CPU", set()), where
    assert "OPENCL" not in where, where


@pytest.mark.skipif("has_variable_api()", reason="the rewrite is only on without kernels_experimental.h")
def test_rewrite_switched_off(tf, monkeypatch):
    """TFOCL_GRAPH_VARIABLES=0 (read at every graph): the update reaches the
    plugin's kernel, which explains why it cannot run."""
    monkeypatch.setenv("TFOCL_GRAPH_VARIABLES", "0")
    with tf.device(DEVICE):
        v = tf.Variable([1.0, 2.0])

    @tf.function
    def f():
        v.assign_add([1.0, 1.0])
        return v.read_value()

    with tf.device(DEVICE):
        with pytest.raises(tf.errors.UnimplementedError, match="kernels_experimental"):
            f()


@pytest.mark.skipif("has_variable_api()", reason="eager updates work with kernels_experimental.h")
def test_eager_update_explains(tf):
    """No graph, no rewrite: an eager update on OPENCL fails with the
    kernel's explanation (the README says so)."""
    with tf.device(DEVICE):
        v = tf.Variable([1.0, 2.0])
        with pytest.raises(tf.errors.UnimplementedError, match="AssignAddVariableOp cannot run on OPENCL"):
            v.assign_add([1.0, 1.0])
