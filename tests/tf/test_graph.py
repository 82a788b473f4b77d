"""tf.function graphs and tf.GradientTape gradients of the dense ops on
OPENCL: same values as the CPU, and every node of the graphs on OPENCL."""
import numpy as np
import pytest

from conftest import DEVICE

# Nodes TensorFlow may put on the host inside a device function: arguments
# and results of int32/host-memory tensors, shape arithmetic.
HOST_OK = {"_Arg", "_Retval", "_Send", "_Recv", "_HostSend", "_HostRecv", "Const", "NoOp"}


def _mlp_params(rng):
    return [rng.normal(0, 0.3, s).astype(np.float32) for s in [(16, 32), (32,), (32, 10), (10,)]]


def _placed(tf, fn, *args):
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
                where.setdefault(n.device.split("device:")[-1], set()).add(n.op)
    return out, where


def _check_on_device(where):
    cpu = {op for dev, ops in where.items() if dev.startswith("CPU") for op in ops} - HOST_OK
    assert not cpu, f"graph ops placed on CPU: {sorted(cpu)}"
    assert any(dev.startswith("OPENCL") for dev in where), where


def _forward(tf):
    def f(x, w1, b1, w2, b2):
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        h = tf.nn.bias_add(tf.matmul(h, w2), b2)
        return tf.nn.softmax(h), tf.reduce_mean(tf.nn.sigmoid(h) * tf.tanh(h), axis=1)
    return f


def test_tf_function_forward(tf):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    params = _mlp_params(rng)
    f = tf.function(_forward(tf))
    with tf.device("/CPU:0"):
        expected = [t.numpy() for t in f(x, *params)]
    with tf.device(DEVICE):
        got, where = _placed(tf, f, *[tf.constant(a) for a in [x] + params])
    _check_on_device(where)
    for g, e in zip(got, expected):
        assert g.device.endswith("OPENCL:0")
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-4, atol=1e-5)


def _loss_and_grads(tf):
    def step(x, labels, w1, b1, w2, b2):
        with tf.GradientTape() as tape:
            tape.watch([w1, b1, w2, b2])
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
            logits = tf.matmul(h, w2) + b2
            logp = tf.nn.log_softmax(logits)
            loss = -tf.reduce_mean(tf.reduce_sum(labels * logp, axis=1))
        return [loss] + tape.gradient(loss, [w1, b1, w2, b2])
    return step


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
def test_gradients(tf, compiled):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]
    params = _mlp_params(rng)
    step = _loss_and_grads(tf)
    if compiled:
        step = tf.function(step)
    with tf.device("/CPU:0"):
        expected = [t.numpy() for t in step(*[tf.constant(a) for a in [x, labels] + params])]
    with tf.device(DEVICE):
        args = [tf.constant(a) for a in [x, labels] + params]
        if compiled:
            got, where = _placed(tf, step, *args)
            _check_on_device(where)
        else:
            got = step(*args)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.device.endswith("OPENCL:0"), (i, g.device)
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-4, atol=1e-5, err_msg=f"output {i}")


def test_gradient_of_elementwise_ops(tf):
    x0 = np.linspace(0.2, 2.0, 12, dtype=np.float32).reshape(3, 4)

    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.exp(-x) * tf.sqrt(x) + tf.math.log(x) * tf.square(x) - tf.nn.elu(x - 1.0))
        return tape.gradient(y, x)

    with tf.device("/CPU:0"):
        e = f(tf.constant(x0)).numpy()
    with tf.device(DEVICE):
        g = f(tf.constant(x0))
    assert g.device.endswith("OPENCL:0")
    np.testing.assert_allclose(g.numpy(), e, rtol=1e-4, atol=1e-5)


def test_parallel_stack_in_graph(tf):
    """tf.parallel_stack in a graph, default placement: TensorFlow rewrites
    it into _ParallelConcatStart, in-place _ParallelConcatUpdate nodes and
    an Identity ordered after them by control edges only. With the plugin it
    once returned zeros in 19 of 20 runs (the Identity on OPENCL copied
    Start's buffer before the CPU updates wrote it). Where the plugin cannot
    run Start (no TF_OpKernelConstruction_GetAttrTensorShape: 2.20/2.21), its
    graph optimizer puts the Identity on Start's device instead."""
    tf.config.set_soft_device_placement(True)
    try:
        for dtype in (tf.float32, tf.int32, tf.float16):
            @tf.function
            def stack():
                return tf.parallel_stack([tf.ones([2, 3], dtype) * k for k in range(4)])
            for _ in range(20):
                got = stack().numpy()
                np.testing.assert_array_equal(got[:, 0, 0], [0, 1, 2, 3])
    finally:
        tf.config.set_soft_device_placement(False)


def test_addn_past_the_memory_estimate(tf):
    """An AddN of many inputs in a graph whose estimated memory is large:
    Grappler's memory optimizer rewrites it into TemporaryVariable, Assign,
    AssignAdd and DestroyTemporaryVariable, reference ops no plugin can run
    ("No registered 'Assign' OpKernel for 'OPENCL' devices" before the
    plugin's optimizer put the AddN back). The sum and a gradient that
    adds three terms both run on OPENCL with the CPU's values."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(64, 26, 26, 32)).astype(np.float32)

    def total(t):
        s = 0.0
        for i in range(20):
            s += tf.reshape(tf.math.sin(t * float(i)), [-1])[:4]
        return s

    def grad(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = tf.reduce_sum(t * 3.0 + tf.math.sin(t) + tf.math.cos(t) * t)
        return tape.gradient(y, t)

    for fn in (total, grad):
        f = tf.function(fn)
        with tf.device("/CPU:0"):
            expected = f(tf.constant(x)).numpy()
        with tf.device(DEVICE):
            got, where = _placed(tf, f, tf.constant(x))
        ops = set().union(*where.values())
        assert not ops & {"TemporaryVariable", "Assign", "AssignAdd",
                          "DestroyTemporaryVariable"}, where
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_elementwise_reads_through_tile(tf, dtype):
    """An element-wise region reading a Tile takes the Tile's input in its
    place (_TfoclFusedElementwiseTiled): a reduction's gradient repeats a
    [1, 1, 1, C] tensor over N, H, W, and the fused kernel broadcasts it
    instead of reading the repeated copy. The Tile goes where the region
    was its only reader; a repeat of a dim larger than 1, a Tile read
    outside the region too, a tile that alone makes the output's shape and
    mean/variance gradients all give the CPU's values and shapes."""
    rng = np.random.default_rng(11)
    a = lambda *s: rng.normal(size=s).astype(dtype)
    x, v, w = a(4, 5, 6, 8), a(1, 1, 1, 8), a(2, 1, 3, 8)
    cases = [
        ("broadcast", lambda x, v: (x - tf.tile(v, [4, 5, 6, 1])) * 2.0 + 1.0, (x, v)),
        ("alone", lambda v: tf.tile(v, [4, 5, 6, 1]) * 3.0 + 1.0, (v,)),
        ("repeat", lambda x, w: x * tf.tile(w, [2, 5, 2, 1]) + 0.5, (x, w)),
        ("read outside too",
         lambda x, v: (tf.nn.relu(x * tf.tile(v, [4, 5, 6, 1]) - 1.0), tf.tile(v, [4, 5, 6, 1])),
         (x, v)),
        ("rank 2", lambda p, q: tf.sigmoid(p * tf.tile(q, [7, 1]) + 2.0) * 3.0, (a(7, 5), a(1, 5))),
    ]

    def moments_grad(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            mean, var = tf.nn.moments(t, axes=[0, 1, 2], keepdims=True)
            y = tf.reduce_sum(tf.nn.relu((t - mean) * tf.math.rsqrt(var + 1e-3)) * t)
        return tape.gradient(y, t)
    if dtype == "float32":
        cases.append(("moments gradient", moments_grad, (a(4, 6, 6, 16),)))
    tol = 1e-5 if dtype == "float32" else 2e-2
    tiled = False
    for name, fn, args in cases:
        f = tf.function(fn)
        with tf.device("/CPU:0"):
            expected = tf.nest.map_structure(lambda t: t.numpy(), f(*map(tf.constant, args)))
        with tf.device(DEVICE):
            got, where = _placed(tf, f, *map(tf.constant, args))
        ops = set().union(*where.values())
        tiled |= "_TfoclFusedElementwiseTiled" in ops
        for g, e in zip(tf.nest.flatten(got), tf.nest.flatten(expected)):
            assert g.shape == e.shape, name
            np.testing.assert_allclose(g.numpy(), e, rtol=tol, atol=tol, err_msg=name)
        if name in ("broadcast", "alone", "repeat", "rank 2"):
            assert "Tile" not in ops, (name, where)
    assert tiled


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_max_pool_gradient_takes_the_relu_gradient(tf, dtype):
    """ReLU -> MaxPool: the ReluGrad of the MaxPoolGrad's orig_input goes
    into the MaxPoolGrad (its kernel multiplies by orig_input > 0 where it
    writes a window's maximum) where windows do not overlap; overlapping
    windows and a ReLU output read twice keep their ReluGrad. Gradients as
    the CPU's, windows of zeros (ReLU of negatives) and NaN included."""
    rng = np.random.default_rng(13)
    x = rng.normal(size=(3, 8, 9, 5)).astype(dtype)
    x[0, :4, :4, :] = -1.0  # windows whose maximum is a ReLU's 0
    x[1, 2, 3, 1] = np.nan
    w = rng.normal(size=(3, 4, 4, 5)).astype(dtype)
    w3 = rng.normal(size=(3, 3, 3, 5)).astype(dtype)
    w2 = rng.normal(size=(3, 4, 5, 5)).astype(dtype)

    def grad(fn):
        def g(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = fn(x)
            return tape.gradient(y, x)
        return g

    cases = [
        ("2x2/2", True, lambda x: tf.reduce_sum(tf.nn.max_pool2d(tf.nn.relu(x), 2, 2, "VALID") * w)),
        ("2x2/3, gaps", True, lambda x: tf.reduce_sum(tf.nn.max_pool2d(tf.nn.relu(x), 2, 3, "SAME") * w3)),
        ("3x3/2, overlapping", False,
         lambda x: tf.reduce_sum(tf.nn.max_pool2d(tf.nn.relu(x), 3, 2, "SAME") * w2)),
        # The ReluGrad then reads the AddN of both gradients (which the
        # element-wise fusion may take): values only.
        ("relu read twice", None,
         lambda x: tf.reduce_sum(tf.nn.max_pool2d(tf.nn.relu(x), 2, 2, "VALID") * w) +
         tf.reduce_sum(tf.nn.relu(x))),
    ]
    finite = np.nan_to_num(x)  # overlapping windows: TensorFlow's CPU routes NaN its own way
    for name, fused, fn in cases:
        f = tf.function(grad(fn))
        arg = finite if fused is False else x
        with tf.device("/CPU:0"):
            expected = f(tf.constant(arg)).numpy()
        with tf.device(DEVICE):
            got, where = _placed(tf, f, tf.constant(arg))
        ops = set().union(*where.values())
        if fused:  # one gradient per input element, as the CPU's
            np.testing.assert_array_equal(got.numpy(), expected, err_msg=name)
        else:  # overlapping windows sum in their own order
            tol = 1e-6 if dtype == "float32" else 1e-3
            np.testing.assert_allclose(got.numpy(), expected, rtol=tol, atol=tol, err_msg=name)
        if fused is not None:
            assert ("ReluGrad" not in ops) == fused, (name, where)
        assert "MaxPoolGrad" in ops, (name, where)


def test_ctc_loss_in_tf_function(tf):
    """tf.nn.ctc_loss in a tf.function, default placement: its while loop
    lands on OPENCL and updates tensors with TensorScatterUpdate/Add, which
    soft placement cannot move out of the loop body (it once failed with
    NOT_FOUND: no TensorScatterUpdate kernel for OPENCL). Loss and gradient
    as on the CPU."""
    rng = np.random.default_rng(5)
    batch, steps, classes, length = 3, 12, 6, 4
    logits0 = rng.normal(size=(steps, batch, classes)).astype(np.float32)
    labels = rng.integers(1, classes, size=(batch, length)).astype(np.int32)

    @tf.function
    def loss_and_grad(logits):
        with tf.GradientTape() as tape:
            tape.watch(logits)
            loss = tf.nn.ctc_loss(labels, logits, label_length=tf.fill([batch], length),
                                  logit_length=tf.fill([batch], steps), blank_index=0)
            total = tf.reduce_sum(loss)
        return loss, tape.gradient(total, logits)

    with tf.device("/CPU:0"):
        expected = [t.numpy() for t in loss_and_grad(tf.constant(logits0))]
    with tf.device(DEVICE):
        got, where = _placed(tf, loss_and_grad, tf.constant(logits0))
    on_device = {op for dev, ops in where.items() if dev.startswith("OPENCL") for op in ops}
    assert {"TensorScatterUpdate", "TensorScatterAdd"} & on_device, sorted(on_device)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-4, atol=1e-5)


def test_sort_and_top_k_on_the_device(tf):
    """tf.sort, tf.argsort and tf.math.top_k lower to TopKV2 (k = n for the
    sorts): in a tf.function with default placement they run on OPENCL and
    give the CPU's values and indices, ties in index order."""
    rng = np.random.default_rng(7)
    x0 = np.round(rng.normal(size=(5, 300)) * 3).astype(np.float32)

    @tf.function
    def f(x):
        top = tf.math.top_k(x, k=7)
        return (tf.sort(x, direction="DESCENDING"), tf.sort(x), tf.argsort(x, stable=True),
                top.values, top.indices)

    with tf.device("/CPU:0"):
        expected = [t.numpy() for t in f(tf.constant(x0))]
    with tf.device(DEVICE):
        got, where = _placed(tf, f, tf.constant(x0))
    on_device = {op for dev, ops in where.items() if dev.startswith("OPENCL") for op in ops}
    assert "TopKV2" in on_device, where
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.numpy(), e)


def test_boolean_mask_and_where_on_the_device(tf):
    """tf.boolean_mask and tf.where(cond) lower to Where, whose output size
    the device computes: with default placement in a tf.function it runs on
    OPENCL, and the gathered values are the CPU's."""
    rng = np.random.default_rng(9)
    x0 = rng.normal(size=(64, 33)).astype(np.float32)

    @tf.function
    def f(x):
        mask = x > 0.5
        return tf.boolean_mask(x, mask), tf.where(mask), tf.reduce_sum(tf.boolean_mask(x, mask))

    with tf.device("/CPU:0"):
        expected = [t.numpy() for t in f(tf.constant(x0))]
    with tf.device(DEVICE):
        got, where = _placed(tf, f, tf.constant(x0))
    on_device = {op for dev, ops in where.items() if dev.startswith("OPENCL") for op in ops}
    assert "Where" in on_device, where
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-6)
