#!/usr/bin/env python3
"""One model of model_zoo.py, trained a few steps on the CPU and on the
OPENCL device from the same weights and batches, in strict placement.

    python tests/tf/run_model.py --model lstm --steps 4 --json out.json
    python tests/tf/run_model.py --model mobilenet --grad-check
    python tests/tf/run_model.py --model mobilenet --grad-check --reference cpu.npz

Prints, and writes as JSON: per device the loss of every step, the median
time per step after the first (ms), where each op of the train step ran
(from TensorFlow's partitioned graphs) or the error; with --grad-check, the
first batch's gradients on both devices against a float64 CPU run
(relative L2 error over all trainable variables), and how far the float64
gradients move when the input moves by one float32 ulp (input_ulp: the
check means nothing where that is as large as the errors). --reference
keeps the CPU's side in a file for the next run of the same model.
"""
import argparse
import collections
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402

DEVICES = {"cpu": "/device:CPU:0", "opencl": "/device:OPENCL:0"}


def placement(tf, run_metadata):
    where = collections.defaultdict(collections.Counter)
    for fg in run_metadata.function_graphs:
        for g in fg.partition_graphs:
            for node in g.node:
                dev = node.device.split("device:")[-1].split(":")[0] if node.device else "?"
                where[dev][node.op] += 1
    return {d: dict(c) for d, c in where.items()}


def to_device(tf, value):
    if isinstance(value, tuple):
        return tuple(to_device(tf, v) for v in value)
    return tf.identity(tf.constant(value))


def build(tf, keras, name, steps, seed, weights=None):
    keras.utils.set_random_seed(seed)
    model, optimizer, loss, batches = model_zoo.MODELS[name](keras, np.random.default_rng(seed), steps)
    if weights is not None:
        model.set_weights([w.astype(model.weights[i].dtype) for i, w in enumerate(weights)])
    return model, optimizer, loss, batches


def train(tf, keras, name, device, steps, seed, weights):
    from tensorflow.python.eager import context
    tf.config.set_soft_device_placement(False)
    with tf.device(DEVICES[device]):
        model, optimizer, loss, batches = build(tf, keras, name, steps, seed, weights)
        model.compile(optimizer=optimizer, loss=loss, jit_compile=False)
        optimizer.build(model.trainable_variables)
        data = [(to_device(tf, x), to_device(tf, y)) for x, y in batches]

        @tf.function(jit_compile=False)
        def step(x, y):
            return model.train_step((x, y))["loss"]

        losses, times = [], []
        context.export_run_metadata()
        context.enable_run_metadata()
        try:
            for i, (x, y) in enumerate(data):
                t0 = time.perf_counter()
                losses.append(float(step(x, y).numpy()))
                times.append(time.perf_counter() - t0)
                if i == 0:
                    md = context.export_run_metadata()
                    context.disable_run_metadata()
        finally:
            context.disable_run_metadata()
    return {
        "losses": losses,
        "step_ms": 1000.0 * statistics.median(times[1:] or times),
        "first_step_s": times[0],
        "placement": placement(tf, md),
    }


def nudged(x, rng):
    """x with every float32 element moved one ulp up or down: an input as
    far from x as one rounding."""
    if isinstance(x, tuple):
        return tuple(nudged(v, rng) for v in x)
    if x.dtype != np.float32:
        return x
    up = rng.random(x.shape) < 0.5
    return np.where(up, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)).astype(np.float32)


def gradients(tf, keras, name, device, seed, weights, float64=False, nudge=None):
    tf.config.set_soft_device_placement(False)
    if float64:
        keras.config.set_dtype_policy("float64")
    try:
        with tf.device(DEVICES[device]):
            model, _, loss, batches = build(tf, keras, name, 1, seed, weights)
            loss_fn = keras.losses.get(loss)
            x, y = batches[0]
            if nudge is not None:
                x = nudged(x, np.random.default_rng(nudge))
            if float64:
                x = tuple(v.astype(np.float64) if v.dtype == np.float32 else v for v in x) \
                    if isinstance(x, tuple) else (x.astype(np.float64) if x.dtype == np.float32 else x)
            x, y = to_device(tf, x), to_device(tf, y)

            @tf.function(jit_compile=False)
            def grads(x, y):
                with tf.GradientTape() as tape:
                    value = loss_fn(y, model(x, training=True))
                    value = tf.reduce_mean(value)
                return tape.gradient(value, model.trainable_variables)

            return [g.numpy().astype(np.float64) for g in grads(x, y)]
    finally:
        keras.config.set_dtype_policy("float32")


def rel_l2(got, want):
    num = sum(float(np.sum((g - w) ** 2)) for g, w in zip(got, want))
    den = sum(float(np.sum(w ** 2)) for w in want)
    return (num / den) ** 0.5 if den > 0 else num ** 0.5


def reference_key(args):
    return {"model": args.model, "seed": args.seed, "steps": args.steps,
            "grad_check": args.grad_check, "grad_nudges": args.grad_nudges}


def load_reference(path, args):
    """(the CPU's run, the float64 gradients, the CPU's gradient errors)
    that save_reference wrote for the same arguments, or None."""
    if not path or not os.path.exists(path):
        return None
    with np.load(path) as f:
        meta = json.loads(str(f["meta"]))
        if meta["key"] != reference_key(args):
            return None
        ref = [f[f"grad{i}"] for i in range(meta["num_grads"])]
    return meta["cpu"], ref, meta["cpu_error"]


def save_reference(path, args, result, ref):
    error = result.get("grad_error", {})
    if "error" in error:
        return
    cpu_error = {k: v for k, v in error.items() if k in ("cpu", "input_ulp")}
    meta = {"key": reference_key(args), "cpu": result["runs"]["cpu"],
            "cpu_error": cpu_error, "num_grads": len(ref or [])}
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez(f, meta=json.dumps(meta), **{f"grad{i}": g for i, g in enumerate(ref or [])})
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=sorted(model_zoo.MODELS))
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--devices", default="cpu,opencl")
    ap.add_argument("--grad-check", action="store_true")
    ap.add_argument("--grad-nudges", type=int, default=4,
                    help="float64 runs from inputs one ulp away, for --grad-check's input_ulp")
    ap.add_argument("--json")
    ap.add_argument("--reference", metavar="FILE.npz",
                    help="the CPU's side (its run, with --grad-check the float64 gradients, the "
                         "CPU's distance from them and input_ulp): read from FILE when it "
                         "exists, else computed and written there, for another run of the same "
                         "model, seed and steps (the OPENCL device under other settings)")
    args = ap.parse_args()
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    import keras

    # The weights every run starts from: built once on the host.
    with tf.device("/device:CPU:0"):
        weights = [w.numpy() for w in build(tf, keras, args.model, 1, args.seed)[0].weights]
    result = {"model": args.model, "tensorflow": tf.__version__, "keras": keras.__version__,
              "host_ok": sorted(model_zoo.HOST_OK), "runs": {}}
    devices = [d for d in args.devices.split(",") if d]
    cached, ref = load_reference(args.reference, args), None
    if cached is not None:
        result["runs"]["cpu"], ref, cpu_error = cached
        print(f"{args.model}: the CPU's side read from {args.reference}")
        devices = [d for d in devices if d != "cpu"]
    for device in devices:
        try:
            result["runs"][device] = train(tf, keras, args.model, device, args.steps, args.seed, weights)
        except (tf.errors.OpError, ValueError, RuntimeError) as e:
            msg = e.message if isinstance(e, tf.errors.OpError) else str(e)
            result["runs"][device] = {"error": f"{type(e).__name__}: {msg[:4000]}"}
    if args.grad_check:
        try:
            if cached is None:
                ref = gradients(tf, keras, args.model, "cpu", args.seed, weights, float64=True)
            result["grad_error"] = {
                d: rel_l2(gradients(tf, keras, args.model, d, args.seed, weights), ref)
                for d in devices}
            if cached is not None:
                result["grad_error"].update(cpu_error)
            else:
                # How far the exact gradient itself moves when the input
                # moves by one rounding: a float32 run can be no closer to
                # float64 than that. An input on a kink (a ReLU6 at 0 or 6
                # within rounding) makes it as large as any error a device
                # could have.
                result["grad_error"]["input_ulp"] = max(
                    rel_l2(gradients(tf, keras, args.model, "cpu", args.seed, weights,
                                     float64=True, nudge=n), ref)
                    for n in range(args.grad_nudges))
        except (tf.errors.OpError, ValueError, RuntimeError) as e:
            result["grad_error"] = {"error": f"{type(e).__name__}: {str(e)[:4000]}"}
    if cached is None and args.reference and "error" not in result["runs"].get("cpu", {"error": 1}):
        save_reference(args.reference, args, result, ref)
    for device, run in result["runs"].items():
        if "error" in run:
            print(f"{args.model} on {device}: {run['error'][:800]}")
            continue
        other = {d: ops for d, ops in run["placement"].items() if d != device.upper()}
        print(f"{args.model} on {device}: losses {['%.6f' % v for v in run['losses']]}, "
              f"{run['step_ms']:.1f} ms/step; elsewhere: {other}")
    if "grad_error" in result:
        print(f"{args.model} gradient error vs float64: {result['grad_error']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
