#!/usr/bin/env python3
"""Cold start: the first epoch of examples/train_digits.py (the digits MLP)
in fresh processes, on /OPENCL:0 and on TensorFlow's CPU kernels, each run
in its own process, alternating OPENCL, CPU, OPENCL, ...

  first process   tfocl's cache directory (TFOCL_CACHE_DIR) and PoCL's
                  (POCL_CACHE_DIR) empty: every OpenCL program is compiled
  second process  both caches as the first process left them: kept
                  binaries, PoCL's cache, the GEMM choices and the list of
                  programs to build ahead (plugin/program_cache.c)

The caches are private temporary directories; the OpenCL platform is the
one the environment selects (OCL_ICD_VENDORS: ci/test-intel --env for
Intel's CPU runtime). Prints a markdown table of the first epoch in
seconds (min, median, max) and OPENCL's median over the CPU's; --json
writes every repetition.

    python tests/bench/cold_start.py --plugin build/plugin/libtfocl.so --reps 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import build_tree

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def first_epoch(plugin, device, cache, pocl_cache, model):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        env = dict(os.environ, TFOCL_CACHE_DIR=cache, POCL_CACHE_DIR=pocl_cache,
                   TF_CPP_MIN_LOG_LEVEL="2")
        subprocess.run([sys.executable, os.path.join(REPO, "examples", "train_digits.py"),
                        "--plugin", plugin, "--devices", device, "--epochs", "1",
                        "--model", model, "--quiet", "--json", out.name],
                       check=True, env=env, capture_output=True, timeout=900)
        return json.load(open(out.name))["runs"][device]["first_epoch_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", default=os.path.join(REPO, "build", "plugin", "libtfocl.so"))
    ap.add_argument("--reps", type=int, default=5, help="second-process repetitions")
    ap.add_argument("--first-reps", type=int, default=2, help="first-process repetitions")
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--json")
    args = ap.parse_args()
    plugin = os.path.abspath(args.plugin)
    build_tree.use(plugin, load=False)  # train_digits.py loads it: --plugin
    times = {(case, dev): [] for case in ("first", "second") for dev in ("opencl", "cpu")}
    with tempfile.TemporaryDirectory(prefix="tfocl-cold-") as tmp:
        def fresh(name):
            path = os.path.join(tmp, name)
            subprocess.run(["rm", "-rf", path], check=True)
            os.makedirs(path, mode=0o700)
            return path

        for i in range(args.first_reps):
            for dev in ("opencl", "cpu"):
                times["first", dev].append(first_epoch(
                    plugin, dev, fresh(f"tfocl-{i}"), fresh(f"pocl-{i}"), args.model))
        cache, pocl = fresh("tfocl"), fresh("pocl")
        first_epoch(plugin, "opencl", cache, pocl, args.model)  # the first process
        for _ in range(args.reps):
            for dev in ("opencl", "cpu"):
                times["second", dev].append(first_epoch(plugin, dev, cache, pocl, args.model))

    print(f"First epoch of the digits {args.model.upper()} (examples/train_digits.py), "
          f"seconds; each run a fresh process\n")
    print("| process | OPENCL min | OPENCL median | OPENCL max | CPU median | OPENCL / CPU |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for case in ("first", "second"):
        o, c = times[case, "opencl"], times[case, "cpu"]
        print(f"| {case} | {min(o):.2f} | {statistics.median(o):.2f} | {max(o):.2f} | "
              f"{statistics.median(c):.2f} | {statistics.median(o) / statistics.median(c):.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({f"{case}/{dev}": v for (case, dev), v in times.items()}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
