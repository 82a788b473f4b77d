"""A tiny Keras image model trained on /OPENCL:0 with soft placement off:
Resizing (bilinear and nearest), a dilated Conv2D (TensorFlow runs it as
SpaceToBatchND, Conv2D, BatchToSpaceND) and UpSampling2D(bilinear), whose
train step takes ResizeBilinear, ResizeNearestNeighbor, their gradients
and the space/batch pair. The losses of a few SGD steps equal the CPU's.

The step is functional (Keras' stateless_call, parameters as tensors, the
update p - lr * g), so it needs no variable ops and runs on every
TensorFlow the suite supports. Both runs start from the same weights and
see the same batch; they differ only in the order of the convolutions'
and matmuls' sums (~1e-7 relative per step)."""
import collections

import numpy as np
import pytest

from conftest import DEVICE

IMAGE_OPS = {"ResizeBilinear", "ResizeBilinearGrad", "ResizeNearestNeighbor",
             "ResizeNearestNeighborGrad", "SpaceToBatchND", "BatchToSpaceND"}
# What TensorFlow keeps on the host however the step is placed: the int32
# labels arrive through a host argument and a send to the device.
HOST_BY_DESIGN = {"_Arg", "_Send", "_Recv", "_Retval", "_HostSend", "_HostRecv"}
STEPS = 5


@pytest.fixture(scope="module")
def runs(tf):
    import keras
    from tensorflow.python.eager import context

    keras.utils.set_random_seed(3)
    with tf.device("/CPU:0"):
        model = keras.Sequential([
            keras.Input(shape=(8, 8, 2)),
            keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
            keras.layers.Resizing(12, 12, interpolation="bilinear"),
            keras.layers.Conv2D(4, 3, padding="same", dilation_rate=2, activation="relu"),
            keras.layers.Resizing(6, 6, interpolation="nearest"),
            keras.layers.UpSampling2D(2, interpolation="bilinear"),
            keras.layers.Flatten(),
            keras.layers.Dense(10),
        ])
    weights = [v.numpy() for v in model.trainable_variables]
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (16, 8, 8, 2)).astype(np.float32)
    y = rng.integers(0, 10, 16).astype(np.int32)

    def run(device):
        with tf.device(device):
            params = [tf.constant(w) for w in weights]
            xs, ys = tf.constant(x), tf.constant(y)

            # jit_compile=False: XLA has no OPENCL backend.
            @tf.function(jit_compile=False)
            def step(params, xs, ys):
                with tf.GradientTape() as tape:
                    tape.watch(params)
                    logits, _ = model.stateless_call(params, [], xs, training=True)
                    loss = tf.reduce_mean(
                        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ys, logits=logits))
                grads = tape.gradient(loss, params)
                return loss, [p - 0.05 * g for p, g in zip(params, grads)]

            context.export_run_metadata()  # drop what an earlier run left
            context.enable_run_metadata()
            try:
                losses = []
                for _ in range(STEPS):
                    loss, params = step(params, xs, ys)
                    losses.append(float(loss.numpy()))
                metadata = context.export_run_metadata()
            finally:
                context.disable_run_metadata()
        where = collections.defaultdict(collections.Counter)
        for fg in metadata.function_graphs:
            for g in fg.partition_graphs:
                for node in g.node:
                    dev = node.device.split("device:")[-1].split(":")[0] if node.device else "?"
                    where[dev][node.op] += 1
        return losses, where, params[0].device

    return run("/CPU:0"), run(DEVICE)


def test_train_step_runs_on_opencl(runs):
    _, (losses, where, param_device) = runs
    assert param_device.endswith("OPENCL:0"), param_device
    on_cpu = {op: n for op, n in where.get("CPU", {}).items() if op not in HOST_BY_DESIGN}
    assert not on_cpu, f"ops of the train step on the CPU: {on_cpu}"
    missing = IMAGE_OPS - set(where.get("OPENCL", {}))
    assert not missing, f"not in the train step on OPENCL: {sorted(missing)} ({dict(where)})"


def test_losses_match_cpu(runs):
    (cpu, _, _), (ocl, _, _) = runs
    assert len(cpu) == len(ocl) == STEPS
    assert cpu[-1] < cpu[0], f"the model does not learn: {cpu}"
    np.testing.assert_allclose(ocl, cpu, rtol=1e-4, atol=0)
    print(f"losses OPENCL {ocl}\n       CPU    {cpu}")
