#!/usr/bin/env python3
"""Where a Keras train step's time goes on OPENCL, next to the same step on
TensorFlow's CPU, each device in its own process.

    .venv/bin/python tests/bench/step_profile.py [--models mlp,small_cnn,resnet]
        [--steps 10] [--profile-steps 3] [--repeat 1] [--top 12]
        [--json out.json] [--plugin build/plugin/libtfocl.so]

Models: the three train steps of the performance issue (mlp: Dense
64-256-256-10, batch 64; small_cnn: 2 Conv2D + pooling + Dense, batch 64,
28x28x1; resnet: 3 residual blocks with BatchNormalization, batch 32,
32x32x3), resnet50 (keras.applications.ResNet50 on 32x32x3, batch 8),
efficientnetb0 (keras.applications.EfficientNetB0 on 64x64x3, batch 8),
any keras.applications model as app:NAME[:SIZE[:BATCH]] (app:ConvNeXtTiny:32:8),
encoder (2 Transformer encoder blocks, batch 32 x 128 tokens of 256)
and any of tests/tf/model_zoo.py's (transformer, lstm, mobilenet, ...).

Each model runs its own train_step in a tf.function on batches already on
the device: warmed up, timed without the profiler (the median is ms/step),
then traced with tf.profiler for --profile-steps steps. From the trace:

  OPENCL  device busy    the union of the intervals in which any command of
                         the device's queues ran (the profiler plugin's
                         OPENCL plane), per step
          device idle    ms/step less busy: the host's share (executor,
                         launches, waits), the time the device sat unused
          gaps           idle intervals between commands, their count and
                         the longest
          kernels        device time per kernel name, launches per step
          copies/fills   MemcpyH2D/D2H/D2D and fills, count and time
          allocations    TensorFlow's MemoryAllocation events (host plane):
                         count and MiB per step
  CPU     ms/step, TensorFlow ops' summed time per op type (the host
          plane's op events; summed over threads, so it can exceed ms/step)
          and allocations.

--repeat N runs each model's pair of processes N times, OPENCL and CPU
alternating: a process's speed can settle at one of two levels for its
whole life (on this project's 2-core VM, LSTM steps took 1.42-1.54 ms in
most processes and 2.7-2.9 ms in some, its kernels 2-3x slower, on both
devices and with no other load), so one process per device can compare
the slow level of one with the fast level of the other. ms/step is then
the median of the processes' medians, the breakdown is the median
process's, and the table shows the processes' range.

Timing only: nothing here asserts a speed. Prints markdown; --json writes
every figure. Both devices run on the same cores, one after the other: run
it on a quiet machine."""
import argparse
import collections
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import build_tree

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEVICES = {"opencl": "/device:OPENCL:0", "cpu": "/device:CPU:0"}
COPIES = ("MemcpyH2D", "MemcpyD2H", "MemcpyD2D", "Memset", "Fill")


def build(keras, name, np):
    rng = np.random.default_rng(1)
    layers = keras.layers
    if name == "mlp":
        model = keras.Sequential([keras.Input((64,)), layers.Dense(256, activation="relu"),
                                  layers.Dense(256, activation="relu"), layers.Dense(10)])
        x = rng.normal(size=(64, 64)).astype(np.float32)
        y = rng.integers(0, 10, size=(64,))
    elif name == "small_cnn":
        model = keras.Sequential([
            keras.Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu"),
            layers.MaxPooling2D(), layers.Conv2D(64, 3, activation="relu"),
            layers.MaxPooling2D(), layers.Flatten(), layers.Dense(10)])
        x = rng.normal(size=(64, 28, 28, 1)).astype(np.float32)
        y = rng.integers(0, 10, size=(64,))
    elif name == "resnet":
        inp = keras.Input((32, 32, 3))
        h = layers.Conv2D(32, 3, padding="same", use_bias=False)(inp)
        h = layers.ReLU()(layers.BatchNormalization()(h))
        for _ in range(3):
            r = layers.Conv2D(32, 3, padding="same", use_bias=False)(h)
            r = layers.ReLU()(layers.BatchNormalization()(r))
            r = layers.Conv2D(32, 3, padding="same", use_bias=False)(r)
            r = layers.BatchNormalization()(r)
            h = layers.ReLU()(layers.Add()([h, r]))
        out = layers.Dense(10)(layers.GlobalAveragePooling2D()(h))
        model = keras.Model(inp, out)
        x = rng.normal(size=(32, 32, 32, 3)).astype(np.float32)
        y = rng.integers(0, 10, size=(32,))
    elif name in ("lstm_medium", "gru_medium"):
        # Recurrent layers where the device's work is no longer negligible:
        # 2 x 128 units over 50 steps, batch 64 (the zoo's are 16 and 8
        # units over 10 steps).
        layer = layers.LSTM if name == "lstm_medium" else layers.GRU
        model = keras.Sequential([keras.Input((50, 32)), layer(128, return_sequences=True),
                                  layer(128), layers.Dense(10)])
        x = rng.normal(size=(64, 50, 32)).astype(np.float32)
        y = rng.integers(0, 10, size=(64,))
    elif name == "encoder":
        # A Transformer encoder where the products are no longer tiny: 2
        # blocks of 8-head attention and a 1024-unit feed-forward over 128
        # tokens of 256, batch 32 (the zoo's transformer: 12 tokens of 32).
        inp = keras.Input((128, 256))
        h = inp
        for _ in range(2):
            a = layers.MultiHeadAttention(num_heads=8, key_dim=32)(h, h)
            h = layers.LayerNormalization()(h + a)
            f = layers.Dense(256)(layers.Dense(1024, activation="relu")(h))
            h = layers.LayerNormalization()(h + f)
        out = layers.Dense(10)(layers.GlobalAveragePooling1D()(h))
        model = keras.Model(inp, out)
        x = rng.normal(size=(32, 128, 256)).astype(np.float32)
        y = rng.integers(0, 10, size=(32,))
    elif name == "resnet50":
        # keras.applications.ResNet50, untrained, on 32x32 RGB, batch 8:
        # bottleneck blocks with BatchNormalization, 23.6M parameters.
        model = keras.applications.ResNet50(input_shape=(32, 32, 3), weights=None, classes=10)
        x = rng.normal(size=(8, 32, 32, 3)).astype(np.float32)
        y = rng.integers(0, 10, size=(8,))
    elif name == "efficientnetb0":
        # keras.applications.EfficientNetB0, untrained, on 64x64 RGB, batch
        # 8: depthwise convolutions, swish, squeeze-and-excitation scales.
        model = keras.applications.EfficientNetB0(input_shape=(64, 64, 3), weights=None,
                                                  classes=10)
        x = rng.normal(size=(8, 64, 64, 3)).astype(np.float32)
        y = rng.integers(0, 10, size=(8,))
    elif name.startswith("app:"):
        # Any keras.applications model, untrained: app:NAME[:SIZE[:BATCH]]
        # (SIZE x SIZE RGB, default 32; batch default 8).
        fields = name.split(":")[1:]
        size = int(fields[1]) if len(fields) > 1 else 32
        batch = int(fields[2]) if len(fields) > 2 else 8
        model = getattr(keras.applications, fields[0])(input_shape=(size, size, 3),
                                                       weights=None, classes=10)
        x = rng.normal(size=(batch, size, size, 3)).astype(np.float32)
        y = rng.integers(0, 10, size=(batch,))
    else:
        sys.path.insert(0, os.path.join(REPO, "tests", "tf"))
        import model_zoo
        model, optimizer, loss, batches = model_zoo.MODELS[name](keras, rng, 1)
        return model, optimizer, loss, batches[0]
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return model, keras.optimizers.Adam(1e-3), loss, (x, y)


def load_space(logdir):
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    found = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
    space = xplane_pb2.XSpace()
    with open(found[0], "rb") as f:
        space.ParseFromString(f.read())
    return space


def intervals(plane):
    """(start_ps, end_ps, name) of every event of the plane, on one clock."""
    out = []
    for line in plane.lines:
        base = line.timestamp_ns * 1000
        for e in line.events:
            start = base + e.offset_ps
            out.append((start, start + e.duration_ps, plane.event_metadata[e.metadata_id].name))
    return sorted(out)


def device_summary(plane, steps, top):
    events = intervals(plane)
    busy = 0
    gaps = []
    end = None
    for s, e, _ in events:
        if end is None or s > end:
            if end is not None:
                gaps.append(s - end)
            busy += e - s
            end = e
        elif e > end:
            busy += e - end
            end = e
    per_name = collections.defaultdict(lambda: [0, 0])
    for s, e, name in events:
        per_name[name][0] += 1
        per_name[name][1] += e - s
    ms = 1e-9 / steps  # ps -> ms per step
    kernels = sorted(((n, c / steps, t * ms) for n, (c, t) in per_name.items()
                      if not n.startswith(COPIES)), key=lambda r: -r[2])
    copies = sorted(((n, c / steps, t * ms) for n, (c, t) in per_name.items()
                     if n.startswith(COPIES)), key=lambda r: -r[2])
    return {
        "busy_ms": busy * ms,
        "commands": len(events) / steps,
        "gaps": len(gaps) / steps,
        "longest_gap_ms": max(gaps) * 1e-9 if gaps else 0.0,
        "kernels": [{"name": n, "per_step": c, "ms": t} for n, c, t in kernels[:top]],
        "other_kernels_ms": sum(t for _, _, t in kernels[top:]),
        "copies": [{"name": n, "per_step": c, "ms": t} for n, c, t in copies],
    }


def host_summary(plane, steps, top):
    """Allocations and TensorFlow op time per op type, from the host plane."""
    allocs = 0
    alloc_bytes = 0
    stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
    per_op = collections.defaultdict(lambda: [0, 0])
    for line in plane.lines:
        for e in line.events:
            name = plane.event_metadata[e.metadata_id].name
            if name == "MemoryAllocation":
                allocs += 1
                for s in e.stats:
                    if stat_names.get(s.metadata_id) == "requested_bytes":
                        alloc_bytes += s.int64_value
            elif ":" in name and "::" not in name and " " not in name:
                # "scope/name:OpType": one op's kernel on a thread (not the
                # executor's and thread pools' own "Class::method" events).
                op_type = name.rsplit(":", 1)[1]
                per_op[op_type][0] += 1
                per_op[op_type][1] += e.duration_ps
    ops = sorted(per_op.items(), key=lambda kv: -kv[1][1])
    return {
        "allocations": allocs / steps,
        "allocated_mib": alloc_bytes / steps / 2**20,
        "ops": [{"op": op, "per_step": c / steps, "ms": t * 1e-9 / steps}
                for op, (c, t) in ops[:top]],
    }


def child(args):
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    import keras
    device = DEVICES[args.child]
    keras.utils.set_random_seed(1)
    with tf.device(device):
        model, optimizer, loss, (x, y) = build(keras, args.models, np)
        model.compile(optimizer=optimizer, loss=loss, jit_compile=False)
        # A model of several inputs (the zoo's text model) takes a tuple.
        x, y = tf.nest.map_structure(lambda a: tf.identity(tf.constant(a)), (x, y))

        @tf.function(jit_compile=False)
        def step():
            return model.train_step((x, y))["loss"]

        for _ in range(3):  # trace, build the programs, warm the caches
            step().numpy()
        times = []
        for _ in range(args.steps):
            t0 = time.perf_counter()
            step().numpy()
            times.append(time.perf_counter() - t0)
        with tempfile.TemporaryDirectory() as logdir:
            tf.profiler.experimental.start(logdir)
            for _ in range(args.profile_steps):
                step().numpy()
            tf.profiler.experimental.stop()
            space = load_space(logdir)
    result = {"device": args.child, "model": args.models, "tensorflow": tf.__version__,
              "ms_per_step": 1e3 * statistics.median(times),
              "ms_min": 1e3 * min(times), "ms_max": 1e3 * max(times)}
    for plane in space.planes:
        if plane.name.startswith("/device:CUSTOM:") and args.child == "opencl":
            result["device_plane"] = device_summary(plane, args.profile_steps, args.top)
        elif plane.name == "/host:CPU":
            result["host_plane"] = host_summary(plane, args.profile_steps, args.top)
    print(json.dumps(result))
    return 0


def run_child(args, model, device):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", device, "--models", model,
           "--steps", str(args.steps), "--profile-steps", str(args.profile_steps),
           "--top", str(args.top)]
    env = dict(os.environ)
    if device == "cpu":
        # No OPENCL device in the CPU's process: PoCL's threads stay out of
        # its timing (a pip-installed plugin then offers no device).
        env.pop("TF_PLUGGABLE_DEVICE_LIBRARY_PATH", None)
        env["TFOCL_VISIBLE_DEVICES"] = ""
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"step_profile: the {device} run of {model} failed ({done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_pair(args, model):
    """args.repeat processes per device, alternating; each device's result is
    its median process's, with every process's ms/step in "runs_ms"."""
    runs = {"opencl": [], "cpu": []}
    for _ in range(args.repeat):
        for device in ("opencl", "cpu"):
            runs[device].append(run_child(args, model, device))
    row = {"model": model}
    for device, results in runs.items():
        ordered = sorted(results, key=lambda r: r["ms_per_step"])
        median = dict(ordered[(len(ordered) - 1) // 2])
        median["ms_per_step"] = statistics.median(r["ms_per_step"] for r in results)
        median["runs_ms"] = [r["ms_per_step"] for r in results]
        row[device] = median
    return row


def spread(result):
    runs = result.get("runs_ms", [])
    if len(runs) < 2:
        return f"{result['ms_per_step']:.2f}"
    return f"{result['ms_per_step']:.2f} ({min(runs):.2f}-{max(runs):.2f})"


def markdown(rows):
    out = ["| model | OPENCL ms/step | CPU ms/step | speed ratio | device busy ms | device idle ms "
           "| commands/step | gaps/step | longest gap ms | copies ms | allocations/step (OPENCL, CPU) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        o, c = r["opencl"], r["cpu"]
        d = o.get("device_plane", {})
        copies = sum(x["ms"] for x in d.get("copies", []))
        out.append(
            f"| {r['model']} | {spread(o)} | {spread(c)} | "
            f"{c['ms_per_step'] / o['ms_per_step']:.2f} | {d.get('busy_ms', 0):.2f} | "
            f"{max(0.0, o['ms_per_step'] - d.get('busy_ms', 0)):.2f} | {d.get('commands', 0):.0f} | "
            f"{d.get('gaps', 0):.0f} | {d.get('longest_gap_ms', 0):.2f} | {copies:.2f} | "
            f"{o.get('host_plane', {}).get('allocations', 0):.0f}, "
            f"{c.get('host_plane', {}).get('allocations', 0):.0f} |")
    for r in rows:
        o, c = r["opencl"], r["cpu"]
        d = o.get("device_plane", {})
        out += ["", f"### {r['model']}", "",
                "| OPENCL kernel | launches/step | ms/step | | CPU op | runs/step | ms/step |",
                "| --- | ---: | ---: | --- | --- | ---: | ---: |"]
        kernels = d.get("kernels", []) + d.get("copies", [])
        ops = c.get("host_plane", {}).get("ops", [])
        for i in range(max(len(kernels), len(ops))):
            k = kernels[i] if i < len(kernels) else None
            p = ops[i] if i < len(ops) else None
            left = f"{k['name']} | {k['per_step']:.1f} | {k['ms']:.3f}" if k else " | | "
            right = f"{p['op']} | {p['per_step']:.1f} | {p['ms']:.3f}" if p else " | | "
            out.append(f"| {left} | | {right} |")
        if d.get("other_kernels_ms"):
            out.append(f"| (other kernels) | | {d['other_kernels_ms']:.3f} | | | | |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="mlp,small_cnn,resnet")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--profile-steps", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1,
                    help="processes per device and model, alternating; medians")
    ap.add_argument("--top", type=int, default=12, help="kernels and ops listed per model")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--plugin", default=os.path.join(REPO, "build", "plugin", "libtfocl.so"),
                    help="libtfocl.so (TF_PLUGGABLE_DEVICE_LIBRARY_PATH) unless tfocl is "
                         "pip-installed; default the build's")
    ap.add_argument("--child", choices=sorted(DEVICES), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    build_tree.use(args.plugin)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    rows = [run_pair(args, model) for model in args.models.split(",")]
    print(markdown(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
