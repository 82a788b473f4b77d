#!/usr/bin/env python3
"""On devices without cl_khr_fp64 no kernel that computes in double is
registered: float64 and complex128 ops stay on the CPU (TensorFlow places
them there) instead of landing on OPENCL kernels that can only fail.

Usage: check_fp64_registrations.py TFOCL PLUGIN. Runs `tfocl kernels --json`
with and without the test hook TFOCL_HIDE_FP64=1 (the device then reads as
lacking fp64) and compares."""
import json
import os
import subprocess
import sys

WIDE = {"DT_DOUBLE", "DT_COMPLEX128"}


def wide_kernels(tfocl, plugin, hide):
    env = dict(os.environ, TFOCL_PLUGIN=plugin)
    if hide:
        env["TFOCL_HIDE_FP64"] = "1"
    out = subprocess.run([tfocl, "kernels", "--json"], env=env, check=True,
                         capture_output=True, text=True).stdout
    kernels = json.loads(out)["kernels"]
    wide = sorted(k["name"] for k in kernels
                  if any(WIDE & set(types)
                         for types in k["constraints"].values()))
    return len(kernels), wide


def main():
    tfocl, plugin = sys.argv[1], sys.argv[2]
    total, wide = wide_kernels(tfocl, plugin, hide=False)
    if not wide:
        print("skipped: the device has no fp64 kernels to hide")
        return 77
    total_hidden, left = wide_kernels(tfocl, plugin, hide=True)
    print(f"{total} kernels, {len(wide)} of them float64/complex128; "
          f"{total_hidden} without fp64")
    if left:
        print("registered without fp64:", ", ".join(left[:20]))
        return 1
    if total_hidden != total - len(wide):
        print(f"expected {total - len(wide)} kernels without fp64")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
