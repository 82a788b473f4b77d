"""The element-wise fusion (plugin/graph/pass_elementwise.c, the
_TfoclFusedElementwise op of kernels/fused.c) inside real TensorFlow.

A tf.function with chains of element-wise ops gives the same values with
the pass on and off (TFOCL_GRAPH_ELEMENTWISE, read at every new graph), and
the CPU's; the partition graphs show the fused op on OPENCL only when the
pass is on; gradients (ReluGrad, SigmoidGrad, TanhGrad chains) and
float/half casts included."""
import numpy as np
import pytest

from conftest import DEVICE

CPU = "/device:CPU:0"
FUSED = "_TfoclFusedElementwise"


def _run(tf, fn, device, *args):
    """fn's outputs on `device` and {device type: op types} of the partition
    graphs TensorFlow ran (after Grappler and so after the plugin's
    optimizer)."""
    from tensorflow.python.eager import context
    context.enable_run_metadata()
    try:
        with tf.device(device):
            out = fn(*args)
            out = tf.nest.map_structure(lambda t: t.numpy(), out)
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


def _chains(tf):
    """A fresh tf.function (a new graph, so the pass's switch is read
    again) with the chains the pass looks for."""

    @tf.function(jit_compile=False)
    def f(x, y, b, s):
        shared = x - y                      # two readers: stays
        a = tf.nn.relu(shared * 2.0 + b)    # broadcast [17] over [33,17]
        c = tf.tanh(shared + 1.0) * tf.sigmoid(x)
        with tf.control_dependencies([a]):
            d = tf.exp(-tf.abs(c)) / (tf.square(y) + 1.0)
        half = tf.cast(tf.cast(d, tf.float16) * tf.constant(0.5, tf.float16), tf.float32)
        e = tf.nn.relu6(half * 8.0 - s) + tf.nn.elu(x * 0.5)   # s: a scalar
        g = tf.maximum(tf.minimum(e, 3.0), -1.0) * tf.math.rsqrt(tf.square(b) + 1.0)
        return a, g, tf.math.squared_difference(d, y)

    return f


def _inputs(tf):
    rng = np.random.default_rng(7)
    return (tf.constant(rng.normal(size=(33, 17)).astype(np.float32)),
            tf.constant(rng.normal(size=(33, 17)).astype(np.float32)),
            tf.constant(rng.normal(size=(17,)).astype(np.float32)),
            tf.constant(np.float32(0.25)))


def test_chains_same_with_pass_on_and_off(tf, monkeypatch):
    args = _inputs(tf)
    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "0")
    off, where_off = _run(tf, _chains(tf), DEVICE, *args)
    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "1")
    on, where_on = _run(tf, _chains(tf), DEVICE, *args)
    cpu, _ = _run(tf, _chains(tf), CPU, *args)
    assert FUSED not in where_off.get("OPENCL", set()), where_off
    assert FUSED in where_on.get("OPENCL", set()), where_on
    # Fewer element-wise ops left on the device.
    for op in ("Tanh", "Sigmoid", "Relu6", "Elu", "Rsqrt", "Cast"):
        assert op not in where_on["OPENCL"], (op, where_on)
    assert "Sub" in where_on["OPENCL"]  # the shared x - y
    for a, b, c in zip(on, off, cpu):
        # The same float expressions with the same roundings: equal up to
        # the built-ins' vectorised and scalar forms.
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)
        np.testing.assert_allclose(a, c, rtol=2e-5, atol=1e-6)


def test_ops_fusable_by_their_def_row(tf, monkeypatch):
    """Expm1, Softsign and Sinh, made fusable by their rows in
    kernels/unary.def alone: fused, and the values of the unfused ops."""

    def make():
        @tf.function(jit_compile=False)
        def f(x, y, b):
            return tf.math.expm1(x * 0.5) + tf.nn.softsign(y) * tf.math.sinh(b)
        return f

    args = _inputs(tf)[:3]
    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "0")
    off, _ = _run(tf, make(), DEVICE, *args)
    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "1")
    on, where = _run(tf, make(), DEVICE, *args)
    cpu, _ = _run(tf, make(), CPU, *args)
    assert FUSED in where.get("OPENCL", set()), where
    assert not {"Expm1", "Softsign", "Sinh"} & where["OPENCL"], where
    np.testing.assert_array_equal(on, off)
    np.testing.assert_allclose(on, cpu, rtol=2e-5, atol=1e-6)


def test_cube_runs_as_multiplies_with_the_cpus_values(tf, monkeypatch):
    """tf.nn.gelu's approximate form computes pow(x, 3): on OPENCL a Pow by
    a scalar 3 runs as x * (x * x) inside the chain, as Grappler rewrites
    it on the CPU, with the CPU's values to the bit; with the pass off it
    is a Pow, which TensorFlow's CPU does not run for this exponent. Other
    exponents stay Pows."""

    def make():
        @tf.function(jit_compile=False)
        def f(x, y):
            return (tf.nn.gelu(x, approximate=True), tf.pow(y, 3.0) - 1.0,
                    tf.pow(tf.abs(y) + 0.5, 2.5) * 2.0)
        return f

    args = _inputs(tf)[:2]
    cpu, _ = _run(tf, make(), CPU, *args)
    on, where = _run(tf, make(), DEVICE, *args)
    assert FUSED in where.get("OPENCL", set()), where
    np.testing.assert_array_equal(on[1], cpu[1])
    # gelu's 1 + tanh cancels where tanh nears -1: its few ulps there
    # come out relative to a small value (1.4e-5 at x = -2.6 seen).
    np.testing.assert_allclose(on[0], cpu[0], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(on[2], cpu[2], rtol=2e-6)
    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "0")
    off, where_off = _run(tf, make(), DEVICE, *args)
    assert "Pow" in where_off["OPENCL"], where_off
    np.testing.assert_allclose(off[1], cpu[1], rtol=2e-6, atol=1e-6)


def test_gradient_chains(tf, monkeypatch):
    """The backward pass's ReluGrad/SigmoidGrad/TanhGrad chains, fused,
    against the unfused run and the CPU."""
    rng = np.random.default_rng(11)
    w = rng.normal(size=(17, 9)).astype(np.float32)
    x = tf.constant(rng.normal(size=(33, 17)).astype(np.float32))

    def make():
        @tf.function(jit_compile=False)
        def grads(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                h = tf.matmul(x, w)
                y = tf.sigmoid(tf.tanh(tf.nn.relu(h) * 0.5 + 0.1))
                loss = tf.reduce_sum(tf.square(y - 0.3))
            return tape.gradient(loss, x)
        return grads

    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "0")
    off, _ = _run(tf, make(), DEVICE, x)
    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "1")
    on, where = _run(tf, make(), DEVICE, x)
    cpu, _ = _run(tf, make(), CPU, x)
    assert FUSED in where.get("OPENCL", set()), where
    assert not {"SigmoidGrad", "TanhGrad"} & where["OPENCL"], where
    np.testing.assert_allclose(on, off, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(on, cpu, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["float32", "float16"])
def test_add_n_fuses_with_its_producers(tf, monkeypatch, dtype):
    """AddN (the gradient sums of every backward pass) as its adds in input
    order: with its producers, and alone; the unfused values, half rounded
    after each add as the plugin's AddN rounds on store."""

    def make():
        @tf.function(jit_compile=False)
        def f(x, y, b):
            two = tf.constant(2.0, x.dtype)
            # No broadcasting Add among the terms: Grappler's AddOpsRewrite
            # would move it out of the AddN, reordering the sum.
            summed = tf.add_n([x * two, tf.nn.relu(y), x * b, y])
            alone = tf.add_n([x, y, summed])
            return summed, alone
        return f

    x, y, b = (tf.cast(t, dtype) for t in _inputs(tf)[:3])
    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "0")
    off, where_off = _run(tf, make(), DEVICE, x, y, b)
    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "1")
    on, where = _run(tf, make(), DEVICE, x, y, b)
    cpu, _ = _run(tf, make(), CPU, x, y, b)
    assert "AddN" in where_off.get("OPENCL", set()), where_off
    assert FUSED in where.get("OPENCL", set()), where
    assert not {"AddN", "Relu", "Mul"} & where["OPENCL"], where
    for a, b_, c in zip(on, off, cpu):
        np.testing.assert_array_equal(a, b_)
        tol = 2e-3 if dtype == np.float16 else 2e-6
        np.testing.assert_allclose(a.astype(np.float32), c.astype(np.float32),
                                   rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["float32", "float16"])
def test_dtype_chain_matches_cpu(tf, dtype):
    """A chain computed in one dtype throughout (half is rounded after
    every op, as the unfused kernels round on store)."""
    rng = np.random.default_rng(5)
    x = tf.constant(rng.uniform(-3, 3, size=(7, 1031)).astype(dtype))
    y = tf.constant(rng.uniform(0.5, 3, size=(1031,)).astype(dtype))

    @tf.function(jit_compile=False)
    def f(x, y):
        return tf.nn.relu(x * y - 1.0) / (y + 2.0) + tf.abs(x) * 0.25

    ours, where = _run(tf, f, DEVICE, x, y)
    cpu, _ = _run(tf, f, CPU, x, y)
    assert FUSED in where.get("OPENCL", set()), where
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == np.float32 else dict(rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(ours.astype(np.float32), cpu.astype(np.float32), **tol)


def _loop(tf):
    """A fresh tf.function with a while loop as Keras' recurrent layers
    make it: a LogicalAnd of int32 comparisons tests it, its body updates
    a cell element-wise."""

    @tf.function(jit_compile=False)
    def f(c0, w, steps):
        def cond(i, t, c):
            return tf.logical_and(i < steps, t < 50)

        def body(i, t, c):
            c = tf.sigmoid(tf.matmul(c, w)) * c + tf.tanh(c) * 0.5
            return i + 1, t + 1, c

        return tf.while_loop(cond, body, (0, 0, c0))[2]

    return f


def _loop_partitions(tf, device, *args):
    """The loop's result on `device` and the partition graphs' nodes."""
    from tensorflow.python.eager import context
    context.enable_run_metadata()
    try:
        with tf.device(device):
            out = _loop(tf)(*args).numpy()
    finally:
        md = context.export_run_metadata()
        context.disable_run_metadata()
    return out, [n for fg in md.function_graphs for g in fg.partition_graphs for n in g.node]


@pytest.mark.parametrize("passes", ["on", "off"])
def test_while_loop_body_fuses_and_condition_stays_on_host(tf, monkeypatch, passes):
    """The body's element-wise update fuses although it sits on the loop's
    cycle (NextIteration -> Merge), and the condition's LogicalAnd runs on
    the host (the "TfoclHost" kernel label), with the values of the
    CPU's loop; with both passes off, neither happens and the values are
    the same."""
    if passes == "off":
        monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", "0")
        monkeypatch.setenv("TFOCL_GRAPH_HOST_CONDITIONS", "0")
    rng = np.random.default_rng(3)
    args = (tf.constant(rng.normal(size=(8, 16)).astype(np.float32)),
            tf.constant((rng.normal(size=(16, 16)) * 0.3).astype(np.float32)),
            tf.constant(7))
    ours, nodes = _loop_partitions(tf, DEVICE, *args)
    cpu, _ = _loop_partitions(tf, CPU, *args)
    np.testing.assert_allclose(ours, cpu, rtol=2e-5, atol=2e-6)
    on_device = [n for n in nodes if "OPENCL" in n.device]
    ands = [n for n in on_device if n.op == "LogicalAnd"]
    assert ands, "the loop's LogicalAnd is not on OPENCL"
    labels = {n.attr["_kernel"].s.decode() if "_kernel" in n.attr else "" for n in ands}
    fused = [n for n in on_device if n.op == FUSED]
    if passes == "on":
        assert labels == {"TfoclHost"}
        assert fused, "the loop body's element-wise update did not fuse"
    else:
        assert labels == {""}
        assert not fused
