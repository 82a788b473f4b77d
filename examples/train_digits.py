#!/usr/bin/env python3
"""Train a small MLP (or, with --model cnn, a small CNN) on scikit-learn's
digits data set with Keras, on the OpenCL device (tfocl) and, for
comparison, on the CPU.

Prints the devices TensorFlow sees, where every op of the train step ran
(OPENCL vs CPU, from TensorFlow's own placement of the partitioned graphs),
the accuracy of both runs and the time per training step.

    python examples/train_digits.py                    # the pip-installed plugin
    python examples/train_digits.py --plugin build/plugin/libtfocl.so
    python examples/train_digits.py --json out.json    # results for scripts
    python examples/train_digits.py --model cnn        # Conv2D, MaxPooling2D,
                                                       # BatchNormalization, Dropout, Dense

Needs a TensorFlow whose wheel exports kernels_experimental.h (variable
updates), e.g. tensorflow==2.19.1; see the README's TensorFlow section.
"""
import argparse
import collections
import json
import os
import statistics
import sys
import time

# Ops TensorFlow keeps on the host by design, whatever the device: the
# input pipeline (tf.data kernels are CPU-only on purpose, tensorflow PR
# #50605) and the send/recv plumbing TensorFlow inserts between them and the
# device. Any other op of the train step on CPU means a missing OPENCL kernel.
HOST_BY_DESIGN = {
    "IteratorGetNext": "tf.data iterator: input pipelines stay on the host (no DEVICE_DEFAULT kernel by design)",
    "IteratorGetNextAsOptional": "tf.data iterator (Keras' multi-step loop), host by design",
    "OptionalHasValue": "tf.data optional, host by design",
    "OptionalFromValue": "wraps the step's logs in a tf.data Optional (Keras' iterator protocol), host by design",
    "OptionalGetValue": "tf.data optional, host by design",
    "_Send": "transfer node TensorFlow adds at a host/device partition boundary",
    "_Recv": "transfer node TensorFlow adds at a host/device partition boundary",
    "_HostSend": "transfer node for host-memory tensors",
    "_HostRecv": "transfer node for host-memory tensors",
    "_Arg": "function argument: the iterator resource lives on the host",
    "_Retval": "function return value",
    "NoOp": "control-dependency anchor of a host partition",
    "Identity": "host partition's pass-through of a host tensor",
    "Const": "host-side constant feeding a host op",
    "Shape": "shape of the input batch, computed next to it on the host (metadata only, host-memory output)",
}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp",
                    help="mlp: Dense layers on the 64 pixels (default); cnn: Conv2D, "
                    "MaxPooling2D, BatchNormalization, Dropout and Dense on the 8x8 images")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--devices", default="opencl,cpu",
                    help="comma list of runs: opencl, cpu (default both)")
    ap.add_argument("--plugin", help="libtfocl.so to load (TF_PLUGGABLE_DEVICE_LIBRARY_PATH); "
                    "default: the copy pip installed into site-packages/tensorflow-plugins")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--quiet", action="store_true")
    return ap.parse_args()


def load_data(seed):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    import numpy as np
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=seed, stratify=y)


ITERATOR_OPS = {"IteratorGetNext", "IteratorGetNextAsOptional"}


def placement(run_metadata):
    """{device type: Counter(op type)} over the partition graphs of the train
    step: the functions run while run metadata was on that read the input
    iterator (Keras' train function). The single-op functions of eager code
    (variable set-up, the tf.data pipeline's construction) are left out."""
    where = collections.defaultdict(collections.Counter)
    graphs = [[n for g in fg.partition_graphs for n in g.node]
              for fg in run_metadata.function_graphs]
    steps = [nodes for nodes in graphs if any(n.op in ITERATOR_OPS for n in nodes)]
    # Keras 3.16 reads the iterator in a function of its own (_Arg,
    # IteratorGetNextAsOptional, _Retval): the train step is then the largest.
    plumbing = ITERATOR_OPS | {"_Arg", "_Retval", "Identity", "NoOp"}
    if graphs and all(all(n.op in plumbing for n in nodes) for nodes in steps):
        steps = [max(graphs, key=len)]
    for nodes in steps:
        for node in nodes:
            dev = node.device.split("device:")[-1].split(":")[0] if node.device else "?"
            where[dev][node.op] += 1
    return where


def build_model(keras, args):
    if args.model == "mlp":
        return keras.Sequential([
            keras.Input(shape=(64,)),
            keras.layers.Dense(args.hidden, activation="relu"),
            keras.layers.Dense(args.hidden, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ])
    # The 8x8 digits as one-channel NHWC images. Keras 3's BatchNormalization
    # is built of moments and element-wise ops (not FusedBatchNormV3); its
    # Dropout draws StatelessRandomUniformV2 from a seed-generator variable.
    return keras.Sequential([
        keras.Input(shape=(8, 8, 1)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.BatchNormalization(),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dropout(0.25),
        keras.layers.Dense(args.hidden, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ])


def train(tf, keras, device, data, args):
    from tensorflow.python.eager import context
    x_train, x_test, y_train, y_test = data
    if args.model == "cnn":
        x_train, x_test = x_train.reshape(-1, 8, 8, 1), x_test.reshape(-1, 8, 8, 1)
    keras.utils.set_random_seed(args.seed)
    # Soft placement stays on, as in any TensorFlow program: the weight
    # initialisers (stateless random ops) and Keras' tf.data input pipeline
    # run on the host by design. What counts is where the ops of the train
    # step were placed, read back from TensorFlow's partitioned graphs.
    tf.config.set_soft_device_placement(True)
    with tf.device(device):
        model = build_model(keras, args)
        # jit_compile=False: Keras' "auto" turns XLA on as soon as a non-CPU
        # device exists, and XLA has no OPENCL backend.
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-3),
                      loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"], jit_compile=False)
        model.optimizer.build(model.trainable_variables)

        epoch_times = []

        class Timer(keras.callbacks.Callback):
            def on_epoch_begin(self, epoch, logs=None):
                self.t0 = time.perf_counter()

            def on_epoch_end(self, epoch, logs=None):
                epoch_times.append(time.perf_counter() - self.t0)
                if epoch == 0:  # the first epoch traced and placed the graph
                    self.model._tfocl_metadata = context.export_run_metadata()
                    context.disable_run_metadata()

        context.export_run_metadata()  # drop what an earlier run left
        context.enable_run_metadata()
        try:
            history = model.fit(x_train, y_train, epochs=args.epochs, batch_size=args.batch_size,
                                shuffle=True, verbose=0, callbacks=[Timer()])
        finally:
            context.disable_run_metadata()
        loss, acc = model.evaluate(x_test, y_test, verbose=0)
    steps = -(-len(x_train) // args.batch_size)
    later = epoch_times[1:] or epoch_times
    return {
        "device": device,
        "model": args.model,
        "test_accuracy": float(acc),
        "test_loss": float(loss),
        "train_accuracy": float(history.history["accuracy"][-1]),
        "epoch_losses": [float(v) for v in history.history["loss"]],
        "epochs": args.epochs,
        "steps_per_epoch": steps,
        "first_epoch_s": epoch_times[0],
        "step_ms": 1000.0 * statistics.median(later) / steps,
        "placement": {dev: dict(c) for dev, c in placement(model._tfocl_metadata).items()},
    }


def main():
    args = parse_args()
    if args.plugin:
        os.environ["TF_PLUGGABLE_DEVICE_LIBRARY_PATH"] = os.path.abspath(args.plugin)
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    import tensorflow as tf
    import keras

    out = print if not args.quiet else (lambda *a, **k: None)
    physical = tf.config.list_physical_devices()
    out(f"TensorFlow {tf.__version__}, Keras {keras.__version__}")
    out("devices: " + ", ".join(f"{d.name} ({d.device_type})" for d in physical))
    opencl = [d for d in physical if d.device_type == "OPENCL"]
    runs = [r.strip() for r in args.devices.split(",") if r.strip()]
    if "opencl" in runs and not opencl:
        print("no OPENCL device: is libtfocl.so installed (pip install .) or "
              "TF_PLUGGABLE_DEVICE_LIBRARY_PATH set?", file=sys.stderr)
        return 2
    data = load_data(args.seed)
    out(f"model: {args.model}")
    results = {"model": args.model, "tensorflow": tf.__version__, "keras": keras.__version__,
               "devices": [d.name for d in physical], "runs": {},
               "host_by_design": HOST_BY_DESIGN}
    for run in runs:
        device = {"opencl": "/device:OPENCL:0", "cpu": "/device:CPU:0"}[run]
        try:
            r = train(tf, keras, device, data, args)
        except tf.errors.OpError as e:
            print(f"{run}: training failed: {type(e).__name__}: {e.message[:2000]}", file=sys.stderr)
            results["runs"][run] = {"device": device, "error": f"{type(e).__name__}: {e.message[:4000]}"}
            continue
        results["runs"][run] = r
        out(f"\n== {run} ({device})")
        for dev, ops in sorted(r["placement"].items()):
            total = sum(ops.values())
            out(f"  ops on {dev}: {total} nodes, {len(ops)} op types")
            if dev != "OPENCL" and run == "opencl":
                for op, n in sorted(ops.items()):
                    why = HOST_BY_DESIGN.get(op, "NOT EXPECTED: no OPENCL kernel?")
                    out(f"    {op} x{n}: {why}")
        out(f"  test accuracy {r['test_accuracy']:.4f} (train {r['train_accuracy']:.4f}), "
            f"{r['step_ms']:.2f} ms/step ({r['steps_per_epoch']} steps/epoch, "
            f"first epoch {r['first_epoch_s']:.1f} s)")

    ok = [r for r in results["runs"].values() if "error" not in r]
    if "opencl" in results["runs"] and "cpu" in results["runs"] and len(ok) == 2:
        o, c = results["runs"]["opencl"], results["runs"]["cpu"]
        out(f"\nsummary: OPENCL {o['test_accuracy']:.4f} vs CPU {c['test_accuracy']:.4f} accuracy; "
            f"{o['step_ms']:.2f} vs {c['step_ms']:.2f} ms/step")
        unexpected = sorted(op for op in o["placement"].get("CPU", {}) if op not in HOST_BY_DESIGN)
        out("train step: " + ("every op on OPENCL except the host-by-design ones"
                              if not unexpected else f"ops on CPU without an OPENCL kernel: {unexpected}"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0 if len(ok) == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
