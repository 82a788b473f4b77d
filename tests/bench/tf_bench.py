#!/usr/bin/env python3
"""TensorFlow on /OPENCL:0 side by side with TensorFlow's own CPU kernels.

The op cases of `tfocl bench` (MatMul, Conv2D, element-wise, reductions,
softmax, pooling, batch normalisation, copies), eager small-op overhead
(tf.add on [4] tensors) and the train-step time of Keras models on
scikit-learn's digits (examples/train_digits.py's MLP, and its CNN when it
has --model cnn). Each device runs in processes of its own (PoCL's worker
threads and TensorFlow's CPU pools must not share the cores in one
timing): `--repeat N` runs N processes per device, OPENCL and CPU
alternating; a case's median is the median of its processes' medians, its
min and max over every repetition. `--same-process` measures both devices
in one process, repetitions alternating OPENCL, CPU, ... Either way each
side makes one untimed warm-up call first (tracing, program builds).

ratio = OPENCL speed / CPU speed (medians): above 1 the device is faster.

Op cases run as tf.function on inputs already on the device; each call
returns a 1-element slice of the result whose .numpy() is the sync point
(the full output is never copied to the host, so a large result costs the
device no D2H copy the CPU would not pay).

    .venv/bin/python tests/bench/tf_bench.py                 # markdown table
    .venv/bin/python tests/bench/tf_bench.py --quick --json out.json
    .venv/bin/python tests/bench/tf_bench.py --chart build/bench/ratios.png \
        --tfocl-json build/bench/tfocl_bench.json            # + tfocl bench's ratios
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

import build_tree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPENCL, CPU = "/device:OPENCL:0", "/device:CPU:0"
SIDES = {"ours": OPENCL, "ref": CPU}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", default=os.path.join(ROOT, "build", "plugin", "libtfocl.so"),
                    help="libtfocl.so (TF_PLUGGABLE_DEVICE_LIBRARY_PATH); default the build's")
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    ap.add_argument("--filter", default="", help="comma list: cases whose name contains one")
    ap.add_argument("--reps", type=int, default=0, help="repetitions per case (default per case)")
    ap.add_argument("--json", help="write the results to this file ('-' = stdout, no table)")
    ap.add_argument("--chart", help="write a PNG chart of the ratios (needs matplotlib)")
    ap.add_argument("--tfocl-json", help="a `tfocl bench --json` result to chart next to these")
    ap.add_argument("--repeat", type=int, default=1, help="processes per device (default 1)")
    ap.add_argument("--same-process", action="store_true",
                    help="both devices in this process, repetitions alternating")
    ap.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    return ap.parse_args()


def summary(v):
    if not v:
        return None
    s = sorted(v)
    return {"min": s[0], "median": statistics.median(s), "max": s[-1], "reps": v}


class Bench:
    def __init__(self, args):
        self.args = args
        self.filters = [f for f in args.filter.split(",") if f]
        self.rows = []
        self.series = {}  # case -> {"ours": [...], "ref": [...]}, the figures of each rep

    def pair(self, build):
        """(ours, ref) callables from build(device); in a child process
        measuring one side, the other is None (its device is not there)."""
        return tuple(build(device) if self.args.side in (None, key) else None
                     for key, device in SIDES.items())

    def want(self, name):
        return not self.filters or any(f in name for f in self.filters)

    def reps(self, normal, quick):
        return self.args.reps or (quick if self.args.quick else normal)

    def measure(self, name, unit, work, ours, ref, reps, note="", is_time=False, kernel=True):
        """ours/ref: callables doing one repetition (synchronised). work: flop,
        bytes or ops per call (rates), or the count a time is divided by."""
        scale = {"GFLOP/s": 1e-9, "GB/s": 1e-9, "ops/s": 1.0, "us/op": 1e6, "ms/step": 1e3}[unit]

        def fig(s):
            return s / work * scale if is_time else work / s * scale

        sides = {k: fn for k, fn in (("ours", ours), ("ref", ref)) if fn is not None}
        series = {"ours": [], "ref": []}
        warmup = {}
        errors = {}
        for key, fn in sides.items():
            try:
                t0 = time.perf_counter()
                fn()
                warmup[key] = time.perf_counter() - t0
            except Exception as e:  # noqa: BLE001 -- reported in the table
                errors[key] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        for _ in range(reps):
            for key, fn in sides.items():
                if key in errors:
                    continue
                t0 = time.perf_counter()
                fn()
                series[key].append(fig(time.perf_counter() - t0))
        self.series[name] = series
        o, r = summary(series["ours"]), summary(series["ref"])
        ratio = None
        if o and r:
            ratio = r["median"] / o["median"] if is_time else o["median"] / r["median"]
        if errors:
            note = "; ".join([note] + [f"{k} failed: {v}" for k, v in errors.items()]).strip("; ")
        row = {"case": name, "unit": unit, "higher_is_better": not is_time, "kernel": kernel,
               "ours": o, "reference": "TensorFlow CPU", "ref": r, "ratio": ratio, "note": note,
               "warmup_s": warmup}
        self.rows.append(row)
        fmt = (lambda x: f"{x:.4g}" if x is not None else "n/a")
        print(f"tf_bench: {name:32s} {fmt(o and o['median'])} {unit} "
              f"(CPU {fmt(r and r['median'])}, ratio {fmt(ratio)}) {note}", file=sys.stderr)
        return row


def op_cases(b, tf, np):
    """(name, unit, work, builder(device) -> callable, reps, note)."""
    cases = []
    rng = np.random.default_rng(1)

    def rand(*shape):
        return rng.uniform(-1, 1, size=shape).astype(np.float32)

    def on(device, *arrays):
        with tf.device(device):
            return [tf.identity(tf.constant(a)) for a in arrays]

    def sliced(fn):
        @tf.function(jit_compile=False)
        def f(*xs):
            return tf.reshape(fn(*xs), [-1])[:1]
        return f

    def op_case(name, unit, work, fn, arrays, reps, note=""):
        if not b.want(name):
            return

        def build(device):
            xs = on(device, *arrays)
            f = sliced(fn)

            def call():
                with tf.device(device):
                    f(*xs).numpy()
            return call
        cases.append((name, unit, work, build, reps, note))

    sizes = [256] if b.args.quick else [256, 512, 1024, 2048]
    for n in sizes:
        reps = b.reps(30 if n <= 256 else 15 if n <= 512 else 7 if n <= 1024 else 3, 3)
        op_case(f"matmul/{n}", "GFLOP/s", 2.0 * n ** 3, tf.linalg.matmul,
                [rand(n, n), rand(n, n)], reps)
    bn, nb = (128, 4) if b.args.quick else (256, 16)
    op_case(f"batch_matmul/{nb}x{bn}", "GFLOP/s", 2.0 * nb * bn ** 3, tf.linalg.matmul,
            [rand(nb, bn, bn), rand(nb, bn, bn)], b.reps(10, 3))

    # The ops of `tfocl bench`'s Conv2D ([8,32,32,64] -> 64), and the
    # performance issue's ResNet block ([32,32,32,32] -> 32).
    conv_shapes = [("conv2d", 2, 16, 16, 16)] if b.args.quick else [
        ("conv2d", 8, 32, 64, 64), ("conv2d_32ch", 32, 32, 32, 32)]
    for prefix, batch, size, cin, cout in conv_shapes:
        m, k = batch * size * size, 9 * cin
        flop = 2.0 * m * k * cout
        x, w, dy = rand(batch, size, size, cin), rand(3, 3, cin, cout), rand(batch, size, size, cout)
        conv_note = f"NHWC [{batch},{size},{size},{cin}]->{cout}, 3x3 SAME"
        op_case(f"{prefix}/forward", "GFLOP/s", flop,
                lambda x_, w_: tf.nn.conv2d(x_, w_, 1, "SAME"), [x, w], b.reps(10, 3), conv_note)
        op_case(f"{prefix}/backprop_input", "GFLOP/s", flop,
                lambda w_, dy_, s_=[batch, size, size, cin]: tf.raw_ops.Conv2DBackpropInput(
                    input_sizes=tf.constant(s_), filter=w_, out_backprop=dy_,
                    strides=[1, 1, 1, 1], padding="SAME"), [w, dy], b.reps(10, 3), conv_note)
        op_case(f"{prefix}/backprop_filter", "GFLOP/s", flop,
                lambda x_, dy_, s_=[3, 3, cin, cout]: tf.raw_ops.Conv2DBackpropFilter(
                    input=x_, filter_sizes=tf.constant(s_), out_backprop=dy_,
                    strides=[1, 1, 1, 1], padding="SAME"), [x, dy], b.reps(10, 3), conv_note)

    mib = 8 if b.args.quick else 64
    n = mib * (1 << 20) // 4
    xa, ya = rand(n), rand(n)
    for name, fn, arrays in (("AddV2", tf.math.add, 3), ("Relu", tf.nn.relu, 2),
                             ("Mul", tf.math.multiply, 3)):
        op_case(f"elementwise/{name}", "GB/s", arrays * n * 4.0, fn,
                [xa, ya] if arrays == 3 else [xa], b.reps(10, 3),
                f"{mib} MiB per array, {arrays} arrays")
    # Element functions whose drivers' built-ins may run element by
    # element (the plugin's float fits in kernels/activations.clh): inputs
    # over [-8, 8] (Log: (0, 8]), output and input bytes.
    xf = 8 * xa
    for name, fn in (("Tanh", tf.math.tanh), ("Sigmoid", tf.math.sigmoid),
                     ("Exp", tf.math.exp), ("Expm1", tf.math.expm1),
                     ("Log", tf.math.log), ("Log1p", tf.math.log1p),
                     ("Softplus", tf.math.softplus)):
        op_case(f"elementwise/{name}", "GB/s", 2 * n * 4.0, fn,
                [np.abs(xf) + 1e-3 if name == "Log" else xf], b.reps(10, 3),
                f"{mib} MiB per array, 2 arrays, x in [-8, 8]")
    op_case("elementwise/Pow", "GB/s", 3 * n * 4.0, tf.math.pow,
            [np.abs(xf) + 1e-3, 4 * ya], b.reps(10, 3),
            f"{mib} MiB per array, 3 arrays, x in (0, 8], y in [-4, 4]")
    # Batch normalisation's per-channel terms in Keras' own ops (the
    # performance issue's [32,32,32,32] with a [32] vector): bytes read +
    # written once; moments reads its input once per pass it needs.
    xc, cv = rand(32, 32, 32, 32), rand(32)
    ch_note = "[32,32,32,32] f32 and a [32] channel vector"
    op_case("broadcast/sub_channel", "GB/s", 4.0 * (2 * xc.size + cv.size), tf.math.subtract,
            [xc, cv], b.reps(10, 3), ch_note)
    op_case("broadcast/sqdiff_channel", "GB/s", 4.0 * (2 * xc.size + cv.size),
            tf.math.squared_difference, [xc, cv], b.reps(10, 3), ch_note)
    op_case("reduce/moments_nhw", "GB/s", 4.0 * xc.size,
            lambda t: tf.nn.moments(t, axes=[0, 1, 2])[1], [xc], b.reps(10, 3),
            "[32,32,32,32] f32 over N, H, W; the variance")
    rows, cols = (1024, 2048) if b.args.quick else (4096, 4096)
    xm = rand(rows, cols)
    red_note = f"[{rows},{cols}] f32, bytes read + written"
    op_case("reduce/sum_over_rows", "GB/s", 4.0 * (rows * cols + cols),
            lambda t: tf.reduce_sum(t, axis=0), [xm], b.reps(10, 3), red_note)
    op_case("reduce/sum_over_cols", "GB/s", 4.0 * (rows * cols + rows),
            lambda t: tf.reduce_sum(t, axis=1), [xm], b.reps(10, 3), red_note)
    op_case("softmax/rows", "GB/s", 8.0 * rows * cols, tf.nn.softmax, [xm], b.reps(10, 3), red_note)

    # Pooling 3x3/2 SAME and fused batch normalisation on an NHWC image, in
    # effective bandwidth (the bytes each op must read and write once).
    n, hw, ch = (4, 28, 32) if b.args.quick else (16, 56, 64)
    ohw = (hw + 1) // 2
    xi, gi = rand(n, hw, hw, ch), rand(n, ohw, ohw, ch)
    xb, yb = 4.0 * xi.size, 4.0 * gi.size
    pool_note = f"NHWC [{n},{hw},{hw},{ch}] f32, 3x3/2 SAME"
    pool = dict(ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
    op_case("pool/max_forward", "GB/s", xb + yb,
            lambda t: tf.raw_ops.MaxPool(input=t, **pool), [xi], b.reps(10, 3), pool_note)
    op_case("pool/max_grad", "GB/s", 2 * xb + 2 * yb,
            lambda t, g: tf.raw_ops.MaxPoolGrad(
                orig_input=t, orig_output=tf.raw_ops.MaxPool(input=t, **pool), grad=g, **pool),
            [xi, gi], b.reps(10, 3), pool_note + "; forward MaxPool included")
    op_case("pool/avg_forward", "GB/s", xb + yb,
            lambda t: tf.raw_ops.AvgPool(value=t, **pool), [xi], b.reps(10, 3), pool_note)
    op_case("pool/avg_grad", "GB/s", xb + yb,
            lambda g: tf.raw_ops.AvgPoolGrad(orig_input_shape=tf.constant([n, hw, hw, ch]), grad=g,
                                             **pool), [gi], b.reps(10, 3), pool_note)
    scale, offset = rand(ch) + 1.5, rand(ch)
    var = rand(ch) ** 2 + 0.5
    bn_note = f"[{n},{hw},{hw},{ch}] f32"
    for name, training, fmt in (("batch_norm/training", True, "NHWC"),
                                ("batch_norm/training_nchw", True, "NCHW"),
                                ("batch_norm/inference", False, "NHWC")):
        xs = xi if fmt == "NHWC" else np.ascontiguousarray(np.transpose(xi, (0, 3, 1, 2)))
        op_case(name, "GB/s", 2 * xb,
                lambda t, s_, o_, m_, v_, tr=training, f=fmt: tf.raw_ops.FusedBatchNormV3(
                    x=t, scale=s_, offset=o_, mean=m_, variance=v_, epsilon=1e-3,
                    is_training=tr, data_format=f)[0],
                [xs, scale, offset, offset if not training else np.zeros(0, np.float32),
                 var if not training else np.zeros(0, np.float32)],
                b.reps(10, 3), f"{fmt} {bn_note}")
    dyb = rand(n, hw, hw, ch)
    op_case("batch_norm/grad", "GB/s", 3 * xb,
            lambda d, t, s_, m_, v_: tf.raw_ops.FusedBatchNormGradV3(
                y_backprop=d, x=t, scale=s_, reserve_space_1=m_, reserve_space_2=v_,
                reserve_space_3=tf.zeros([0]), epsilon=1e-3, is_training=True)[0],
            [dyb, xi, scale, offset, var], b.reps(10, 3), f"NHWC {bn_note}, training")
    # Sparse: an embedding lookup and its dense gradient (bytes read +
    # written), the same sizes as `tfocl bench`.
    srows, scols, segs = (8192 if b.args.quick else 65536), 128, 1024
    table = rand(srows, scols)
    idx = rng.integers(0, srows, size=srows).astype(np.int32)
    ids = rng.integers(0, segs, size=srows).astype(np.int32)
    op_case("gather/GatherV2_rows", "GB/s", 8.0 * srows * scols + 4.0 * srows,
            lambda t, i: tf.gather(t, i), [table, idx], b.reps(10, 3),
            f"{srows} rows of {scols} f32 from [{srows},{scols}]")
    op_case("segment_sum/UnsortedSegmentSum", "GB/s", 4.0 * (srows * scols + srows + segs * scols),
            lambda d, s: tf.math.unsorted_segment_sum(d, s, segs), [table, ids], b.reps(10, 3),
            f"[{srows},{scols}] f32 into {segs} segments")
    return cases, xa


def bench_scatter(b, tf, np):
    """ResourceScatterAdd into a variable (a sparse optimizer step): the
    variable lives on each device; a call returns a 1-element read."""
    name = "scatter_add/ResourceScatterAdd"
    if not b.want(name):
        return
    rows, cols = (8192 if b.args.quick else 65536), 128
    upd_rows = rows // 4
    rng = np.random.default_rng(2)
    table = rng.uniform(-1, 1, size=(rows, cols)).astype(np.float32)
    idx = rng.integers(0, rows, size=upd_rows).astype(np.int32)
    upd = rng.uniform(-1, 1, size=(upd_rows, cols)).astype(np.float32)

    def build(device):
        with tf.device(device):
            v = tf.Variable(table)
            i = tf.identity(tf.constant(idx))
            u = tf.identity(tf.constant(upd))

        @tf.function(jit_compile=False)
        def step():
            tf.raw_ops.ResourceScatterAdd(resource=v.handle, indices=i, updates=u)
            return tf.raw_ops.ResourceGather(resource=v.handle, indices=i[:1], dtype=tf.float32)[0, :1]

        def call():
            with tf.device(device):
                step().numpy()
        return call
    b.measure(name, "GB/s", 12.0 * upd_rows * cols + 4.0 * upd_rows, *b.pair(build),
              b.reps(10, 3),
              f"{upd_rows} rows of {cols} f32 into a [{rows},{cols}] variable, duplicates included")


def bench_ops(b, tf, np):
    cases, big = op_cases(b, tf, np)
    for name, unit, work, build, reps, note in cases:
        try:
            ours, ref = b.pair(build)
        except Exception as e:  # noqa: BLE001
            print(f"tf_bench: {name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        b.measure(name, unit, work, ours, ref, reps, note)

    # Copies: numpy -> device tensor, device tensor -> numpy (64 MiB).
    nbytes = big.nbytes
    for device_name, label in (("h2d", "numpy -> tensor (tf.identity(tf.constant))"),
                               ("d2h", "tensor -> numpy (.numpy())")):
        name = f"copy/{device_name}"
        if not b.want(name):
            continue

        def build(device, kind=device_name):
            if kind == "h2d":
                def call():
                    with tf.device(device):
                        t = tf.identity(big)
                    t[:1].numpy()
                return call
            with tf.device(device):
                t = tf.identity(big)

            def call2():
                t.numpy()
            return call2
        b.measure(name, "GB/s", float(nbytes), *b.pair(build), b.reps(10, 3),
                  f"{nbytes >> 20} MiB, {label}; CPU: the same call on /CPU:0", kernel=False)


def bench_eager(b, tf, np):
    name = "eager/tf.add_4"
    if not b.want(name):
        return
    count = 200 if b.args.quick else 2000

    def build(device):
        with tf.device(device):
            x = tf.identity(tf.constant(np.ones(4, np.float32)))
            y = tf.identity(tf.constant(np.ones(4, np.float32)))

        def call():
            with tf.device(device):
                r = None
                for _ in range(count):
                    r = tf.add(x, y)
                r.numpy()
        return call
    b.measure(name, "ops/s", float(count), *b.pair(build), b.reps(7, 3),
              f"{count} eager tf.add on [4] floats, one .numpy() at the end")


def load_train_digits():
    path = os.path.join(ROOT, "examples", "train_digits.py")
    spec = importlib.util.spec_from_file_location("train_digits", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with open(path) as f:
        has_cnn = "--model" in f.read()
    return mod, has_cnn


def bench_keras(b, tf, np):
    import keras
    td, has_cnn = load_train_digits()
    models = ["mlp"] + (["cnn"] if has_cnn else [])
    data = td.load_data(7)
    x_train, _, y_train, _ = data
    batch_size = 32
    steps = -(-len(x_train) // batch_size)
    for model_name in models:
        name = f"keras/digits_{model_name}_train_step"
        if not b.want(name):
            continue
        xt = x_train.reshape(-1, 8, 8, 1) if model_name == "cnn" else x_train
        tf.config.set_soft_device_placement(True)

        def build(device):
            keras.utils.set_random_seed(7)
            with tf.device(device):
                model = td.build_model(keras, argparse.Namespace(model=model_name, hidden=64))
                model.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-3),
                              loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                              jit_compile=False)
            times = []

            class Timer(keras.callbacks.Callback):
                def on_epoch_begin(self, epoch, logs=None):
                    self.t0 = time.perf_counter()

                def on_epoch_end(self, epoch, logs=None):
                    times.append(time.perf_counter() - self.t0)

            def call():
                with tf.device(device):
                    model.fit(xt, y_train, epochs=1, batch_size=batch_size, shuffle=True,
                              verbose=0, callbacks=[Timer()])
                # One epoch of `steps` steps, timed from epoch begin to end
                # (fit's own set-up left out): spin so the harness's clock
                # sees the epoch alone.
                return times[-1]
            return call

        ours_fn, ref_fn = b.pair(build)
        epochs = {"ours": [], "ref": []}

        # The harness times whole calls; the epoch time is what counts, so
        # record it and feed the harness the epoch seconds.
        def wrap(fn, key):
            if fn is None:
                return None

            def call():
                epochs[key].append(fn())
            return call
        row = b.measure(name, "ms/step", float(steps), wrap(ours_fn, "ours"),
                        wrap(ref_fn, "ref"), b.reps(6, 2),
                        f"{steps} steps/epoch of batch {batch_size}; one epoch per repetition",
                        is_time=True, kernel=False)
        # Replace fit()-call times by the epochs' own times (warm-up dropped).
        for key in ("ours", "ref"):
            v = [1e3 * s / steps for s in epochs[key][1:]]
            if v:
                row[key] = summary(v)
                b.series[name][key] = v
        if row["ours"] and row["ref"]:
            row["ratio"] = row["ref"]["median"] / row["ours"]["median"]


def fmt(v):
    if v is None:
        return "n/a"
    if abs(v) >= 1e5:
        return f"{v:.3g}"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def markdown(rows, header):
    out = [header, "",
           "ratio = OPENCL speed / CPU speed (medians; > 1: the device is faster).", "",
           "| case | metric | OPENCL min | OPENCL median | OPENCL max | reference | ref median | ratio | note |",
           "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |"]
    for r in rows:
        o, f = r["ours"] or {}, r["ref"] or {}
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}"
        out.append(f"| {r['case']} | {r['unit']} | {fmt(o.get('min'))} | {fmt(o.get('median'))} | "
                   f"{fmt(o.get('max'))} | {r['reference']} | {fmt(f.get('median'))} | {ratio} | {r['note']} |")
    kernels = [r for r in rows if r["kernel"] and r["ratio"] is not None]
    if kernels:
        w = min(kernels, key=lambda r: r["ratio"])
        out += ["", f"Slowest kernel relative to TensorFlow's CPU kernel: {w['case']} ({w['ratio']:.2f} x)."]
    return "\n".join(out)


def chart(path, panels):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [(t, [r for r in rows if r.get("ratio")]) for t, rows in panels]
    panels = [(t, rows) for t, rows in panels if rows]
    if not panels:
        return
    height = sum(0.28 * len(rows) + 1.2 for _, rows in panels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, max(3, height)), squeeze=False,
                             gridspec_kw={"height_ratios": [len(r) + 3 for _, r in panels]})
    for ax, (title, rows) in zip(axes[:, 0], panels):
        labels = [f"{r['case']} vs {r['reference']}" for r in rows]
        ratios = [r["ratio"] for r in rows]
        colors = ["tab:green" if q >= 1 else "tab:red" for q in ratios]
        ax.barh(range(len(rows)), ratios, color=colors)
        ax.set_yticks(range(len(rows)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("ratio (our speed / reference speed, log scale; > 1 faster)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_side(args):
    """This process's benches: both sides, or args.side alone. Returns
    (TensorFlow's version, rows, series) or None without an OPENCL device."""
    import numpy as np
    import tensorflow as tf

    if args.side != "ref" and not tf.config.list_physical_devices("OPENCL"):
        print("tf_bench: no OPENCL device (plugin "
              f"{os.environ.get('TF_PLUGGABLE_DEVICE_LIBRARY_PATH', 'pip-installed')})",
              file=sys.stderr)
        return None
    tf.get_logger().setLevel("ERROR")  # one tf.function per case: no retracing notes
    b = Bench(args)
    tf.config.set_soft_device_placement(False)
    bench_eager(b, tf, np)
    bench_ops(b, tf, np)
    bench_scatter(b, tf, np)
    bench_keras(b, tf, np)
    return tf.__version__, b.rows, b.series


def run_child(args, side):
    cmd = [sys.executable, os.path.abspath(__file__), "--side", side, "--plugin", args.plugin,
           "--filter", args.filter,
           "--reps", str(args.reps)] + (["--quick"] if args.quick else [])
    env = dict(os.environ)
    if side == "ref":
        # No OPENCL device in the CPU's process: PoCL's threads stay out of
        # its timing (a pip-installed plugin then offers no device).
        env.pop("TF_PLUGGABLE_DEVICE_LIBRARY_PATH", None)
        env["TFOCL_VISIBLE_DEVICES"] = ""
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, timeout=7200)
    if done.returncode != 0:
        raise SystemExit(f"tf_bench: the {SIDES[side]} process failed ({done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def merge_processes(runs):
    """Rows from args.repeat processes per side: a case's median is the
    median of its processes' medians, min and max over every repetition."""
    rows, order = {}, []
    for side, results in runs.items():
        for result in results:
            for row in result["rows"]:
                name = row["case"]
                if name not in rows:
                    rows[name] = dict(row, ours=None, ref=None, medians={})
                    order.append(name)
                merged = rows[name]
                if row["note"] != merged["note"] and row["note"] not in merged["note"]:
                    merged["note"] = "; ".join(n for n in (merged["note"], row["note"]) if n)
                reps = result["series"].get(name, {}).get(side, [])
                if not reps:
                    continue
                merged["medians"].setdefault(side, []).append(statistics.median(reps))
                prev = merged[side]["reps"] if merged[side] else []
                merged[side] = summary(prev + reps)
    out = []
    for name in order:
        row = rows[name]
        medians = row.pop("medians")
        for side in SIDES:
            if row[side]:
                row[side]["median"] = statistics.median(medians[side])
                row[side]["process_medians"] = medians[side]
        row["ratio"] = None
        if row["ours"] and row["ref"]:
            o, r = row["ours"]["median"], row["ref"]["median"]
            row["ratio"] = o / r if row["higher_is_better"] else r / o
        out.append(row)
    return out


def main():
    args = parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    build_tree.use(args.plugin, load=args.side != "ref")
    if args.repeat < 1:
        print("tf_bench: --repeat must be at least 1", file=sys.stderr)
        return 2
    if args.side or args.same_process:
        ran = run_side(args)
        if ran is None:
            return 1
        version, rows, series = ran
        if args.side:
            print(json.dumps({"tensorflow": version, "rows": rows, "series": series}))
            return 0
        how = "one process"
    else:
        runs = {side: [] for side in SIDES}
        for _ in range(args.repeat):
            for side in SIDES:
                runs[side].append(run_child(args, side))
        version = runs["ours"][0]["tensorflow"]
        rows = merge_processes(runs)
        how = f"{args.repeat} process{'es' if args.repeat > 1 else ''} per device"

    header = (f"tf_bench: TensorFlow {version}, /OPENCL:0 vs /CPU:0 "
              f"({os.cpu_count()} CPUs, {how}){' --quick' if args.quick else ''}")
    result = {"tensorflow": version, "quick": args.quick, "rows": rows}
    if args.json == "-":
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        print(markdown(rows, header))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
    if args.chart:
        panels = [("TensorFlow: OPENCL vs TensorFlow CPU kernels", rows)]
        if args.tfocl_json and os.path.exists(args.tfocl_json):
            with open(args.tfocl_json) as f:
                tfocl_rows = json.load(f)["rows"]
            panels.insert(0, ("tfocl bench: ours vs reference", tfocl_rows))
        try:
            chart(args.chart, panels)
        except ImportError:
            print("tf_bench: matplotlib missing: no chart (ci/bench installs it)", file=sys.stderr)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
