#!/usr/bin/env bash
# Instructions the plugin itself executes per tiny op (AddV2 on [4]
# floats through the host shim), counted by callgrind: the self cost of
# libtfocl.so's functions (OpenCL, the driver and the shim excluded), from
# two runs of `tfocl bench --filter tiny/AddV2_4_throughput` that differ by
# 4 repetitions of 2000 ops, so set-up cancels out. Instruction counts do
# not depend on the machine's load; they vary by ~10 % between runs because
# the shim frees outputs when the device is done with them, so the
# allocator's state (and the page-table entries an insert writes) depends on
# timing. Each op allocates its output through the plugin here; inside
# TensorFlow the BFC allocator does that instead.
#   tests/bench/plugin_instructions.sh [builddir]
set -euo pipefail
builddir=${1:-build}
command -v valgrind >/dev/null || { echo "valgrind is missing" >&2; exit 77; }
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$PWD/$builddir/pocl-cache}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
self_cost() {  # self_cost REPS -> Ir of libtfocl.so
  valgrind --tool=callgrind --callgrind-out-file="$tmp/out.$1" \
    "$builddir/host_shim/tfocl" bench --filter tiny/AddV2_4_throughput \
    --reps "$1" --plugin "$builddir/plugin/libtfocl.so" >/dev/null 2>"$tmp/err.$1"
  callgrind_annotate --inclusive=no "$tmp/out.$1" 2>/dev/null |
    awk '/libtfocl\.so\]/ { gsub(",", "", $1); s += $1 } END { print s + 0 }'
}
a=$(self_cost 2)
b=$(self_cost 6)
echo "plugin instructions per tiny op: $(( (b - a) / 8000 ))"
echo "(the top functions, 6 repetitions:)"
callgrind_annotate --inclusive=no "$tmp/out.6" 2>/dev/null | grep 'libtfocl\.so\]' | head -${TOP:-12}
