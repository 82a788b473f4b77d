"""Two OPENCL devices in one TensorFlow process: PoCL with
POCL_DEVICES="pthread pthread" gives two devices of one OpenCL platform (one
cl_context). TensorFlow fixes its device list at import, so the work runs in
a child interpreter (this file run as a script) that prints one JSON line:

  identity   tf.identity of a tensor of one device under the other, both ways
  function   a tf.function whose ops alternate between the two devices
  mirrored   MirroredStrategy(devices=["/OPENCL:0", "/OPENCL:1"]) training the
             digits MLP of examples/train_digits.py for two epochs, and the
             same model trained on the CPU alone (same seed, same batches)

MirroredStrategy() without a device list only looks for GPUs: the devices
must be named. Its all-reduce between OPENCL devices is the ring
implementation (NCCL is for GPUs), whose kernels are DEVICE_DEFAULT: what it
needs from the plugin is copies between devices and streams of one device
waiting on events of the other."""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EPOCHS = 2
BATCH = 32


def child():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import numpy as np
    import tensorflow as tf
    import keras
    sys.path.insert(0, os.path.join(REPO, "examples"))
    import train_digits

    out = {"devices": [d.name for d in tf.config.list_physical_devices("OPENCL")]}
    if len(out["devices"]) < 2:
        print(json.dumps(out))
        return
    tf.config.set_soft_device_placement(False)

    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0
    ident = {}
    for src, dst in ((0, 1), (1, 0)):
        with tf.device(f"/OPENCL:{src}"):
            a = tf.constant(x) * 2.0
        with tf.device(f"/OPENCL:{dst}"):
            b = tf.identity(a)
            c = b + 1.0
        ident[f"{src}->{dst}"] = {
            "src_device": a.device, "dst_device": b.device, "sum_device": c.device,
            "ok": bool(np.array_equal(b.numpy(), x * 2.0))
            and bool(np.array_equal(c.numpy(), x * 2.0 + 1.0))}
    out["identity"] = ident

    @tf.function
    def across(m):
        with tf.device("/OPENCL:0"):
            p = tf.matmul(m, m, transpose_b=True) + 1.0
        with tf.device("/OPENCL:1"):
            q = tf.nn.relu(p - 20.0) * 2.0
        with tf.device("/OPENCL:0"):
            r = tf.reduce_sum(q, axis=0)
        with tf.device("/OPENCL:1"):
            s = r * tf.reduce_max(q)
        return p, q, s

    from tensorflow.python.eager import context
    context.export_run_metadata()  # drop what came before
    context.enable_run_metadata()
    p, q, s = across(tf.constant(x))
    metadata = context.export_run_metadata()
    context.disable_run_metadata()
    placed = {}
    for fg in metadata.function_graphs:
        for g in fg.partition_graphs:
            for node in g.node:
                placed.setdefault(node.device.split("device:")[-1], set()).add(node.op)
    pw = x @ x.T + 1.0
    qw = np.maximum(pw - 20.0, 0.0) * 2.0
    sw = qw.sum(axis=0) * qw.max()
    out["function"] = {"placed": {d: sorted(ops) for d, ops in placed.items()},
                       "ok": bool(np.allclose(p.numpy(), pw) and np.allclose(q.numpy(), qw)
                                  and np.allclose(s.numpy(), sw))}

    # As in any Keras program: the input pipeline and the initialisers stay
    # on the host.
    tf.config.set_soft_device_placement(True)
    x_train, _, y_train, _ = train_digits.load_data(7)
    args = type("Args", (), {"model": "mlp", "hidden": 64})()

    def fit(strategy, device):
        keras.utils.set_random_seed(7)
        with strategy.scope(), tf.device(device):
            model = train_digits.build_model(keras, args)
            model.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-3),
                          loss="sparse_categorical_crossentropy", jit_compile=False)
            hist = model.fit(x_train, y_train, epochs=EPOCHS, batch_size=BATCH,
                             shuffle=False, verbose=0)
        return [float(v) for v in hist.history["loss"]]

    mirrored = tf.distribute.MirroredStrategy(devices=["/OPENCL:0", "/OPENCL:1"])
    out["mirrored"] = {"replicas": mirrored.num_replicas_in_sync}
    try:
        out["mirrored"]["loss"] = fit(mirrored, None)
    except tf.errors.OpError as e:
        out["mirrored"]["error"] = f"{type(e).__name__}: {e.message[:2000]}"
    out["mirrored"]["cpu_loss"] = fit(tf.distribute.get_strategy(), "/CPU:0")
    print(json.dumps(out))


@pytest.fixture(scope="module")
def result():
    from conftest import run_python
    code = f"import runpy; runpy.run_path({__file__!r}, run_name='__main__')"
    cp = run_python(code, timeout=600, POCL_DEVICES="pthread pthread",
                    TFOCL_VISIBLE_DEVICES=None, TFOCL_DEVICE_TYPES=None)
    lines = [ln for ln in cp.stdout.splitlines() if ln.startswith("{")]
    assert cp.returncode == 0 and lines, (
        f"child failed (rc {cp.returncode}):\n{cp.stdout[-2000:]}\n{cp.stderr[-6000:]}")
    r = json.loads(lines[-1])
    if len(r["devices"]) < 2:
        pytest.skip(f"fewer than two OPENCL devices with POCL_DEVICES='pthread pthread': "
                    f"{r['devices']}")
    return r


def test_identity_across_devices(result):
    for way, r in result["identity"].items():
        src, dst = way.split("->")
        assert r["src_device"].endswith(f"OPENCL:{src}"), (way, r)
        assert r["dst_device"].endswith(f"OPENCL:{dst}"), (way, r)
        assert r["sum_device"].endswith(f"OPENCL:{dst}"), (way, r)
        assert r["ok"], (way, r)


def test_function_on_both_devices(result):
    r = result["function"]
    placed = r["placed"]
    assert {"MatMul", "Sum"} <= set(placed.get("OPENCL:0", [])), placed
    on_1 = set(placed.get("OPENCL:1", []))
    # Relu alone or inside the graph pass's fused element-wise op.
    assert "Max" in on_1 and {"Relu", "_TfoclFusedElementwise"} & on_1, placed
    assert r["ok"], r


def test_mirrored_strategy_trains_like_cpu(result):
    r = result["mirrored"]
    assert r["replicas"] == 2, r
    # The ring all-reduce runs its merge op (Add) in a sub-context that
    # requires output 0 to be forwarded from input 0 (kernels/binary.c's
    # TF_ForwardInputOrAllocateOutput).
    assert "error" not in r, r["error"]
    assert len(r["loss"]) == EPOCHS and len(r["cpu_loss"]) == EPOCHS, r
    # Same weights, same batches (each split over the two replicas, the
    # gradients summed by the all-reduce): the losses differ only by the
    # order of float sums, compounded by Adam over the steps.
    for got, want in zip(r["loss"], r["cpu_loss"]):
        assert abs(got - want) <= 0.02 * max(1.0, abs(want)), r
    assert r["loss"][-1] < r["loss"][0], r
    print(f"MirroredStrategy on two OPENCL devices: loss {r['loss']} vs CPU {r['cpu_loss']}")


if __name__ == "__main__":
    child()
