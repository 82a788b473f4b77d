#!/usr/bin/env python3
"""PyTorch references for `tfocl bench`: its cases, at its shapes and in its
units, through PyTorch on the same machine (ci/gpu runs both).

On a CUDA GPU: MatMul is cuBLAS SGEMM with TF32 off, Conv2D and both of its
gradients are cuDNN (channels-last, i.e. NHWC, TF32 off, cudnn.benchmark on
so that it runs its fastest algorithm), the element-wise ops, reductions and
softmax are PyTorch's CUDA kernels, copies are Tensor.copy_ between pageable
host memory (as `tfocl bench`'s malloc'ed buffers) and the device. Without a
GPU (--device cpu, or auto with none) the same cases run on PyTorch's CPU
kernels, which is what a dry run of ci/gpu on PoCL compares with.

Timing is `tfocl bench`'s: each repetition is one call + synchronize on the
host clock (outputs allocated per call, from PyTorch's caching allocator as
tfocl bench's come from the memory the last call freed); one untimed warm-up call
(reported as warmup_s) and two more untimed ones before the repetitions.
`--limits` also measures the device's ceilings: a large device-to-device copy
(bytes read + written), SGEMM at n = 8192, and pinned host<->device copies.

    python3 tests/bench/torch_ref.py --json out.json            # every case
    python3 tests/bench/torch_ref.py --quick --filter matmul,copy
    python3 tests/bench/torch_ref.py --device cpu --limits --json -

The JSON has `tfocl bench --json`'s row layout (case, unit,
higher_is_better, ours = {available, min, median, max, warmup_s, reps},
note), with "ours" holding PyTorch's figures. Without PyTorch, or without the
device asked for, it says why ("available": false, "why") and exits 0: the
reference is unavailable, which is no failure of the run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MIB = 1 << 20

# Datasheet figures (dense FP32 without tensor cores; memory bandwidth), for
# context next to the measured ceilings: leads, not measurements.
DATASHEETS = [
    ("H100", {"fp32_tflops": 67.0, "memory_tbps": 3.35,
              "source": "H100 SXM datasheet: 67 TFLOP/s FP32, 3.35 TB/s HBM3 (PCIe part: 51, 2.0)"}),
    ("H200", {"fp32_tflops": 67.0, "memory_tbps": 4.8,
              "source": "H200 SXM datasheet: 67 TFLOP/s FP32, 4.8 TB/s HBM3e"}),
    ("A100", {"fp32_tflops": 19.5, "memory_tbps": 2.0,
              "source": "A100 80GB SXM datasheet: 19.5 TFLOP/s FP32, 2.0 TB/s"}),
]

METRICS = {  # unit -> (scale, is_time), as tfocl bench's struct metric
    "GFLOP/s": (1e-9, False),
    "GB/s": (1e-9, False),
    "ops/s": (1.0, False),
    "us/op": (1e6, True),
    "ms": (1e3, True),
}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"],
                    help="where PyTorch runs (auto: CUDA when there is one, else the CPU)")
    ap.add_argument("--quick", action="store_true", help="tfocl bench --quick's sizes and repetitions")
    ap.add_argument("--filter", default="", help="comma list: cases whose name contains one")
    ap.add_argument("--reps", type=int, default=0, help="repetitions per case (default per case)")
    ap.add_argument("--limits", action="store_true", help="also measure the device's ceilings")
    ap.add_argument("--json", default="-", help="write the results here ('-' = stdout)")
    return ap.parse_args()


def series(values, warmup_s):
    if not values:
        return {"available": False, "min": None, "median": None, "max": None,
                "warmup_s": warmup_s, "reps": []}
    s = sorted(values)
    return {"available": True, "min": s[0], "median": statistics.median(s), "max": s[-1],
            "warmup_s": warmup_s, "reps": values}


class Bench:
    def __init__(self, args, torch, device):
        self.args = args
        self.torch = torch
        self.device = device
        self.cuda = device.type == "cuda"
        self.filters = [f for f in args.filter.split(",") if f]
        self.rows = []
        self.failures = 0
        self.seed = 0

    def want(self, name):
        return not self.filters or any(f in name for f in self.filters)

    def reps(self, normal, quick):
        return self.args.reps or (quick if self.args.quick else normal)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def random(self, *shape):
        """Uniform in [-1, 1), as tfocl bench's inputs: never zeros."""
        self.seed += 1
        g = self.torch.Generator(device=self.device).manual_seed(self.seed)
        return self.torch.rand(*shape, device=self.device, generator=g) * 2 - 1

    def timed(self, fn):
        """One repetition: fn() + synchronize, host clock, as tfocl bench."""
        def rep():
            t0 = time.perf_counter()
            fn()
            self.sync()
            return time.perf_counter() - t0
        return rep

    def measure(self, name, unit, work, rep, reps, note):
        """rep(): one repetition, returns its seconds. work: flop, bytes or
        ops per repetition (rates), or what a time is divided by."""
        scale, is_time = METRICS[unit]
        values, warmup_s, error = [], None, None
        try:
            warmup_s = rep()
            rep()
            rep()
            for _ in range(reps):
                s = rep()
                values.append(s / work * scale if is_time else work / s * scale)
        except Exception as e:  # a failing case is reported, the others still run
            error = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            values = []
            self.failures += 1
        row = {"case": name, "unit": unit, "higher_is_better": not is_time,
               "ours": series(values, warmup_s), "note": note if error is None else f"FAILED: {error}"}
        self.rows.append(row)
        med = row["ours"]["median"]
        print(f"torch_ref: {name:34s} {med if med is not None else float('nan'):10.4g} {unit:7s} {row['note']}",
              file=sys.stderr)
        if self.cuda:
            self.torch.cuda.empty_cache()

    # ---- the cases, in tfocl bench's order --------------------------------

    def tiny(self):
        names = ["tiny/AddV2_4_throughput", "tiny/AddV2_4_enqueue"]
        if not any(self.want(n) for n in names):
            return
        torch = self.torch
        count, reps = (200 if self.args.quick else 2000), self.reps(7, 3)
        x, y = self.random(4), self.random(4)
        for i, name in enumerate(names):
            if not self.want(name):
                continue

            def rep(enqueue_only=(i == 1)):
                outs = []
                t0 = time.perf_counter()
                for _ in range(count):
                    outs.append(torch.add(x, y))
                t1 = time.perf_counter()
                self.sync()
                t2 = time.perf_counter()
                return t1 - t0 if enqueue_only else t2 - t0
            note = f"{count} torch.add on [4], " + ("one sync at the end" if i == 0 else "host time per call")
            self.measure(name, "ops/s" if i == 0 else "us/op", count, rep, reps, note)

    def copies(self):
        cases = [("copy/h2d", "h2d", True), ("copy/d2h", "d2h", True), ("copy/d2d", "d2d", True),
                 ("copy/h2d_sync", "h2d", False), ("copy/d2h_sync", "d2h", False)]
        if not any(self.want(c[0]) for c in cases):
            return
        torch = self.torch
        nbytes = (8 if self.args.quick else 64) * MIB
        n = nbytes // 4
        reps = self.reps(10, 3)
        host = torch.rand(n) * 2 - 1          # pageable, as tfocl bench's malloc
        host2 = torch.empty(n)
        da, db = self.random(n), self.random(n)
        where = "pageable host memory" if self.cuda else "CPU tensors"
        for name, kind, asynchronous in cases:
            if not self.want(name):
                continue
            if kind == "h2d":
                fn = lambda a=asynchronous: da.copy_(host, non_blocking=a)
            elif kind == "d2h":
                fn = lambda a=asynchronous: host2.copy_(db, non_blocking=a)
            else:
                fn = lambda: db.copy_(da)
            how = "copy_(non_blocking) + sync" if asynchronous else "copy_"
            how = "copy_ on the device" if kind == "d2d" else f"{how}, {where}"
            self.measure(name, "GB/s", nbytes, self.timed(fn), reps, f"{nbytes // MIB} MiB, {how}")

    def elementwise(self):
        ops = [("elementwise/AddV2", 3, lambda x, y: self.torch.add(x, y)),
               ("elementwise/Relu", 2, lambda x, y: self.torch.relu(x)),
               ("elementwise/Mul", 3, lambda x, y: self.torch.mul(x, y))]
        if not any(self.want(o[0]) for o in ops):
            return
        nbytes = (8 if self.args.quick else 64) * MIB
        x, y = self.random(nbytes // 4), self.random(nbytes // 4)
        for name, arrays, op in ops:
            if self.want(name):
                self.measure(name, "GB/s", arrays * nbytes, self.timed(lambda: op(x, y)),
                             self.reps(10, 3), f"{nbytes // MIB} MiB per array, output allocated per call (caching allocator)")

    def reduce(self):
        names = ["reduce/sum_over_rows", "reduce/sum_over_cols", "softmax/rows"]
        if not any(self.want(n) for n in names):
            return
        torch = self.torch
        rows, cols = (1024, 2048) if self.args.quick else (4096, 4096)
        nbytes = 4 * rows * cols
        x = self.random(rows, cols)
        cases = [(names[0], lambda: torch.sum(x, 0), nbytes + 4 * cols, "torch.sum(x, 0)"),
                 (names[1], lambda: torch.sum(x, 1), nbytes + 4 * rows, "torch.sum(x, 1)"),
                 (names[2], lambda: torch.softmax(x, 1), 2 * nbytes, "torch.softmax(x, 1)")]
        for name, fn, traffic, what in cases:
            if self.want(name):
                self.measure(name, "GB/s", traffic, self.timed(fn), self.reps(10, 3),
                             f"{what}, [{rows},{cols}] f32")

    def matmul(self):
        torch = self.torch
        lib = "cuBLAS SGEMM, TF32 off" if self.cuda else "CPU"
        sizes = [256] if self.args.quick else [256, 512, 1024, 2048]
        for n in sizes:
            name = f"matmul/{n}"
            if self.want(name):
                a, b = self.random(n, n), self.random(n, n)
                reps = self.reps(30 if n <= 256 else 15 if n <= 512 else 7 if n <= 1024 else 3, 3)
                self.measure(name, "GFLOP/s", 2.0 * n ** 3, self.timed(lambda: torch.mm(a, b)),
                             reps, f"torch.mm, {lib}")
        batches, n = (4, 128) if self.args.quick else (16, 256)
        name = f"batch_matmul/{batches}x{n}"
        if self.want(name):
            a, b = self.random(batches, n, n), self.random(batches, n, n)
            self.measure(name, "GFLOP/s", 2.0 * batches * n ** 3, self.timed(lambda: torch.bmm(a, b)),
                         self.reps(10, 3), f"torch.bmm, {lib}")

    def conv(self):
        names = ["conv2d/forward", "conv2d/backprop_input", "conv2d/backprop_filter"]
        if not any(self.want(n) for n in names):
            return
        torch = self.torch
        batch, size, cin, cout = (2, 16, 16, 16) if self.args.quick else (8, 32, 64, 64)
        m, k = batch * size * size, 9 * cin
        flop = 2.0 * m * k * cout
        cl = torch.channels_last  # NHWC in memory, as TensorFlow's default layout
        x = self.random(batch, cin, size, size).contiguous(memory_format=cl)
        w = self.random(cout, cin, 3, 3).contiguous(memory_format=cl)
        dy = self.random(batch, cout, size, size).contiguous(memory_format=cl)
        conv_bwd = torch.ops.aten.convolution_backward
        stride, pad, dil = [1, 1], [1, 1], [1, 1]
        fns = [lambda: torch.nn.functional.conv2d(x, w, padding=1),
               lambda: conv_bwd(dy, x, w, None, stride, pad, dil, False, [0, 0], 1, [True, False, False]),
               lambda: conv_bwd(dy, x, w, None, stride, pad, dil, False, [0, 0], 1, [False, True, False])]
        lib = "cuDNN, TF32 off, benchmark mode" if self.cuda else "CPU"
        for name, fn in zip(names, fns):
            if self.want(name):
                self.measure(name, "GFLOP/s", flop, self.timed(fn), self.reps(10, 3),
                             f"[{batch},{size},{size},{cin}]->{cout} channels_last, {lib}")

    def first_op(self):
        names = ["first_op/process_to_result", "first_op/AddV2_first_call"]
        if not any(self.want(n) for n in names):
            return
        reps = self.reps(3, 1)
        got = [[], []]
        error = None
        for _ in range(reps):
            p = subprocess.run([sys.executable, "-c", FIRST_OP_CHILD, self.device.type],
                               capture_output=True, text=True, timeout=300)
            line = [ln for ln in p.stdout.splitlines() if ln.startswith("first_op ")]
            if p.returncode != 0 or not line:
                error = (p.stderr.strip().splitlines() or ["no output"])[-1][:200]
                self.failures += 1
                break
            v = dict(kv.split("=") for kv in line[0].split()[1:])
            got[0].append(float(v["total_s"]) * 1e3)
            got[1].append(float(v["op_s"]) * 1e3)
        notes = ["fresh process: import torch + device init + uploads + first add",
                 "fresh process: the first torch.add alone"]
        for i, name in enumerate(names):
            if self.want(name):
                row = {"case": name, "unit": "ms", "higher_is_better": False,
                       "ours": series(got[i] if error is None else [], None),
                       "note": notes[i] if error is None else f"FAILED: {error}"}
                self.rows.append(row)

    # ---- ceilings ------------------------------------------------------------

    def limits(self):
        """The device's ceilings, measured as METHOD-style ceilings: a large
        device-to-device copy (bytes read + written) and a large SGEMM."""
        torch = self.torch
        out = {}
        big = (1024 if self.cuda else 256) * MIB
        src, dst = self.random(big // 4), torch.empty(big // 4, device=self.device)
        t = [self.timed(lambda: dst.copy_(src))() for _ in range(12)][2:]
        out["copy_GBps"] = {"value": 2 * big / statistics.median(t) * 1e-9, "unit": "GB/s",
                            "what": f"device-to-device copy of {big // MIB} MiB, bytes read + written (median of 10)"}
        del src, dst
        n = 8192 if self.cuda else 2048
        a, b = self.random(n, n), self.random(n, n)
        t = [self.timed(lambda: torch.mm(a, b))() for _ in range(7)][2:]
        out["sgemm_GFLOPs"] = {"value": 2.0 * n ** 3 / statistics.median(t) * 1e-9, "unit": "GFLOP/s",
                               "what": f"torch.mm n={n} f32" + (", TF32 off" if self.cuda else "")
                               + " (median of 5)"}
        del a, b
        if self.cuda:
            nbytes = 256 * MIB
            host = torch.empty(nbytes // 4, pin_memory=True)
            dev = torch.empty(nbytes // 4, device=self.device)
            for key, fn, what in [("h2d_pinned_GBps", lambda: dev.copy_(host, non_blocking=True), "host to device"),
                                  ("d2h_pinned_GBps", lambda: host.copy_(dev, non_blocking=True), "device to host")]:
                t = [self.timed(fn)() for _ in range(7)][2:]
                out[key] = {"value": nbytes / statistics.median(t) * 1e-9, "unit": "GB/s",
                            "what": f"{what}, 256 MiB pinned, bytes copied (median of 5)"}
            del host, dev
            name = torch.cuda.get_device_name(self.device)
            for key, sheet in DATASHEETS:
                if key in name:
                    out["datasheet"] = sheet
                    break
            self.torch.cuda.empty_cache()
        return out


# A fresh process's first op: the clock starts before `import torch` (as
# tfocl bench's child starts before loading the plugin) and the fields are
# those of `tfocl bench --first-op`.
FIRST_OP_CHILD = r"""
import sys, time
t0 = time.perf_counter()
import torch
dev = torch.device(sys.argv[1])
cuda = dev.type == "cuda"
sync = torch.cuda.synchronize if cuda else (lambda: None)
if cuda:
    torch.cuda.init()
    torch.empty(1, device=dev)
t2 = time.perf_counter()
x = (torch.rand(1024) * 2 - 1).to(dev)
y = (torch.rand(1024) * 2 - 1).to(dev)
sync()
t3 = time.perf_counter()
op = []
for _ in range(2):
    s0 = time.perf_counter()
    z = torch.add(x, y)
    sync()
    op.append(time.perf_counter() - s0)
print(f"first_op total_s={t3 - t0 + op[0]:.9f} open_s={t2 - t0:.9f} op_s={op[0]:.9f} second_s={op[1]:.9f}")
"""


def unavailable(args, why):
    return {"tool": "torch_ref", "available": False, "why": why, "device": None,
            "quick": args.quick, "rows": [], "limits": {}, "failures": 0}


def run(args):
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install
        return unavailable(args, f"PyTorch is not importable by {sys.executable}: {e}")
    has_cuda = torch.cuda.is_available()
    if args.device == "cuda" and not has_cuda:
        return unavailable(args, f"PyTorch {torch.__version__} sees no CUDA device")
    device = torch.device("cuda" if args.device == "cuda" or (args.device == "auto" and has_cuda) else "cpu")
    settings = {"float32_matmul_precision": "highest"}
    torch.set_float32_matmul_precision("highest")
    if device.type == "cuda":
        # Plain FP32 on both sides: tfocl computes in float, never TF32.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
        settings.update(allow_tf32_matmul=False, allow_tf32_cudnn=False, cudnn_benchmark=True)
        props = torch.cuda.get_device_properties(device)
        name = props.name
        detail = {"multiprocessors": props.multi_processor_count,
                  "memory_MiB": props.total_memory // MIB,
                  "capability": f"{props.major}.{props.minor}"}
        framework = (f"PyTorch {torch.__version__}, CUDA {torch.version.cuda}, "
                     f"cuDNN {torch.backends.cudnn.version()}")
    else:
        name = "CPU"
        try:
            with open("/proc/cpuinfo") as f:
                name = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        except (OSError, StopIteration):
            pass
        detail = {"threads": torch.get_num_threads()}
        framework = f"PyTorch {torch.__version__} (CPU)"
    bench = Bench(args, torch, device)
    print(f"torch_ref: {framework} on {name}", file=sys.stderr)
    for part in (bench.tiny, bench.copies, bench.elementwise, bench.reduce, bench.matmul, bench.conv):
        part()
    limits = {}
    if args.limits:
        try:
            limits = bench.limits()
        except Exception as e:
            limits = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:200]}
    bench.first_op()  # fresh processes last: their CPU load would skew the rest
    return {"tool": "torch_ref", "available": True, "device": name, "device_kind": device.type,
            "device_detail": detail, "framework": framework, "settings": settings,
            "host_threads": os.cpu_count(), "quick": args.quick, "rows": bench.rows,
            "limits": limits, "failures": bench.failures}


def main():
    args = parse_args()
    result = run(args)
    text = json.dumps(result, indent=1)
    if args.json == "-":
        print(text)
    else:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    if not result["available"]:
        print(f"torch_ref: reference unavailable: {result['why']}", file=sys.stderr)
    return 1 if result.get("failures") else 0


if __name__ == "__main__":
    sys.exit(main())
