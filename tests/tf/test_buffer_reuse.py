"""Element-wise kernels write over an input TensorFlow hands them
(TF_ForwardInputOrAllocateOutput): the unary, binary and fused element-wise
ops on OPENCL.

TensorFlow forwards only a buffer nothing else references, so a kernel must
let go of the TF_Tensor TF_GetInput gave it before asking
(ocl_op_output_over_inputs): a chain of ops over a temp then runs in one
buffer instead of two, which the allocator's peak shows. The values are
checked against numpy in every case, broadcasting and half included: an
input read at another index than the one written would show here."""
import numpy as np
import pytest

from conftest import DEVICE

MIB = 1 << 20


def _peak_over(tf, fn, *args):
    """fn's outputs and the device allocator's peak during the call, above
    what was allocated before it."""
    fn(*args)  # trace and build first: the programs' pools are not the point
    tf.config.experimental.reset_memory_stats("OPENCL:0")
    base = tf.config.experimental.get_memory_info("OPENCL:0")["current"]
    with tf.device(DEVICE):
        out = fn(*args)
        out = out.numpy()
    return out, tf.config.experimental.get_memory_info("OPENCL:0")["peak"] - base


@pytest.mark.parametrize("fusion", ["0", "1"], ids=["unfused", "fused"])
def test_a_chain_over_a_temp_runs_in_one_buffer(tf, monkeypatch, fusion):
    monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", fusion)
    n = 4 * MIB // 4  # 4 MiB of float

    @tf.function(jit_compile=False)
    def chain(x):
        t = tf.matmul(x, tf.ones([1, 1]))  # a temp only this chain reads
        t = tf.nn.relu(t)
        t = tf.tanh(t) * 3.0
        t = tf.sigmoid(t) + 1.0
        t = tf.exp(-t)
        return tf.reduce_sum(t)

    x = np.linspace(-2, 2, n, dtype=np.float32).reshape(n, 1)
    with tf.device(DEVICE):
        dx = tf.constant(x)
    out, peak = _peak_over(tf, chain, dx)
    t = np.maximum(x, 0)
    t = np.tanh(t) * 3
    t = 1 / (1 + np.exp(-t)) + 1
    np.testing.assert_allclose(out, np.exp(-t).sum(), rtol=1e-4)
    # The temp, reused by every op after the product; a fresh output per op
    # would need two at once (8 MiB), and the sum's partials are small.
    assert peak < 4 * MIB + MIB, peak / MIB


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["float32", "float16"])
def test_values_when_outputs_reuse_inputs(tf, monkeypatch, dtype):
    """Every kernel shape of the three families over inputs they may write
    over: same shapes, one operand broadcast (per row, per column, a
    scalar), the gradient ops' two inputs, and fused programs of each."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=(37, 65)).astype(dtype)
    row = rng.normal(size=(65,)).astype(dtype)
    col = rng.normal(size=(37, 1)).astype(dtype)

    def make():
        @tf.function(jit_compile=False)
        def f(a, row, col):
            # Each "+ 0" makes a temp nobody else reads, which the next op
            # may take over.
            t = a * 1.5 + 0
            u = tf.nn.relu(t + 0) - row             # unary, then broadcast rows
            v = (t + 0) * col                        # broadcast columns
            w = tf.maximum(u + 0, 0.25)              # a scalar operand
            g = tf.raw_ops.ReluGrad(gradients=v + 0, features=u + 0)
            s = tf.raw_ops.SigmoidGrad(y=tf.sigmoid(w + 0), dy=g + 0)
            return tf.stack([u, v, w, g, s])
        return f

    results = {}
    for fusion in ("0", "1"):
        monkeypatch.setenv("TFOCL_GRAPH_ELEMENTWISE", fusion)
        with tf.device(DEVICE):
            results[fusion] = make()(a, row, col).numpy().astype(np.float64)
    with tf.device("/device:CPU:0"):
        cpu = make()(a, row, col).numpy().astype(np.float64)
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-6)
    for fusion, got in results.items():
        np.testing.assert_allclose(got, cpu, err_msg=f"fusion={fusion}", **tol)
