#!/usr/bin/env python3
"""Kernel launches and milliseconds per train step, OPENCL against
TensorFlow's CPU, with the graph optimizer's fusion on and off.

    .venv/bin/python tests/bench/launches.py [--models mlp,cnn,transformer]
        [--steps 20] [--json out.json]

Each model (examples/train_digits.py's MLP and CNN, the Transformer encoder
block of tests/tf/model_zoo.py) runs its Keras train_step in a tf.function
on batches already on the device. Launches per step are counted from a
tf.profiler trace (the profiler plugin's OPENCL plane: every kernel, copy
and fill the device ran, divided by the steps profiled); ms per step is the
median of the steps timed without the profiler. "fusion" is the graph
optimizer's two fusion passes, the contraction fusion and the element-wise
one: TFOCL_GRAPH_FUSION and TFOCL_GRAPH_ELEMENTWISE (0|1) switch them for
each new graph, so both variants are traced in one process. Prints a
markdown table."""
import argparse
import glob
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import build_tree

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "tf"))
sys.path.insert(0, os.path.join(REPO, "examples"))


def build(keras, name, rng):
    if name in ("mlp", "cnn"):
        import train_digits
        args = argparse.Namespace(model=name, hidden=64)
        model = train_digits.build_model(keras, args)
        shape = (32, 64) if name == "mlp" else (32, 8, 8, 1)
        batch = (rng.normal(size=shape).astype(np.float32),
                 rng.integers(0, 10, size=(32,)).astype(np.int64))
        return model, keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy", batch
    import model_zoo
    model, optimizer, loss, batches = model_zoo.MODELS[name](keras, rng, 1)
    return model, optimizer, loss, batches[0]


def count_events(tf, logdir):
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    found = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
    space = xplane_pb2.XSpace()
    with open(found[0], "rb") as f:
        space.ParseFromString(f.read())
    total = 0
    for plane in space.planes:
        if plane.name.startswith("/device:CUSTOM:"):
            total += sum(len(line.events) for line in plane.lines)
    return total


def measure(tf, keras, name, device, steps, profile_steps):
    keras.utils.set_random_seed(1)
    rng = np.random.default_rng(1)
    with tf.device(device):
        model, optimizer, loss, (x, y) = build(keras, name, rng)
        model.compile(optimizer=optimizer, loss=loss, jit_compile=False)
        optimizer.build(model.trainable_variables)
        x = tf.identity(tf.constant(x)) if not isinstance(x, tuple) else \
            tuple(tf.identity(tf.constant(v)) for v in x)
        y = tf.identity(tf.constant(y))

        @tf.function(jit_compile=False)
        def step():
            return model.train_step((x, y))["loss"]

        for _ in range(3):  # trace, build the programs, warm the caches
            step().numpy()
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            step().numpy()
            times.append(time.perf_counter() - t0)
        launches = None
        if device.endswith("OPENCL:0"):
            with tempfile.TemporaryDirectory() as logdir:
                tf.profiler.experimental.start(logdir)
                for _ in range(profile_steps):
                    step().numpy()
                tf.profiler.experimental.stop()
                launches = count_events(tf, logdir) / profile_steps
    return 1000.0 * statistics.median(times), launches


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="mlp,cnn,transformer")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--profile-steps", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--plugin", default=os.path.join(REPO, "build", "plugin", "libtfocl.so"),
                    help="libtfocl.so (TF_PLUGGABLE_DEVICE_LIBRARY_PATH) unless tfocl is "
                         "pip-installed; default the build's")
    args = ap.parse_args()
    build_tree.use(args.plugin)
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    import keras
    rows = []
    for name in args.models.split(","):
        cpu_ms, _ = measure(tf, keras, name, "/device:CPU:0", args.steps, 0)
        row = {"model": name, "cpu_ms": cpu_ms}
        for fusion in ("0", "1"):
            os.environ["TFOCL_GRAPH_FUSION"] = fusion
            os.environ["TFOCL_GRAPH_ELEMENTWISE"] = fusion
            ms, launches = measure(tf, keras, name, "/device:OPENCL:0", args.steps,
                                   args.profile_steps)
            row[f"opencl_ms_fusion{fusion}"] = ms
            row[f"launches_fusion{fusion}"] = launches
        rows.append(row)
    print("| model | launches/step (no fusion) | launches/step (fusion) | OPENCL ms/step "
          "(no fusion) | OPENCL ms/step (fusion) | CPU ms/step | ratio CPU/OPENCL (fusion) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['model']} | {r['launches_fusion0']:.0f} | {r['launches_fusion1']:.0f} | "
              f"{r['opencl_ms_fusion0']:.2f} | {r['opencl_ms_fusion1']:.2f} | {r['cpu_ms']:.2f} | "
              f"{r['cpu_ms'] / r['opencl_ms_fusion1']:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tensorflow": tf.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
