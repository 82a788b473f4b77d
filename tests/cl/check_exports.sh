#!/bin/sh
# The plugin exports exactly SE_InitPlugin, TF_InitGraph, TF_InitKernel and
# TF_InitProfiler,
# imports no TF_* symbol (the TensorFlow C API is resolved at run time) and
# loads without libprotobuf-c.
# $2: the expected exports, space-separated (a -Dfault-injection=true build
# adds tfocl_fault_control).
set -eu
lib="$1"
expected="${2:-SE_InitPlugin TF_InitGraph TF_InitKernel TF_InitProfiler} "
defined=$(nm -D --defined-only "$lib" | awk 'NF >= 3 && $2 != "A" { print $3 }' | sort | tr '\n' ' ')
if [ "$defined" != "$expected" ]; then
  echo "unexpected exports: $defined" >&2
  exit 1
fi
undefined_tf=$(nm -D --undefined-only "$lib" | awk '{ print $NF }' | grep '^TF_' || true)
if [ -n "$undefined_tf" ]; then
  echo "imports TF_ symbols: $undefined_tf" >&2
  exit 1
fi
# protobuf-c's runtime is linked in (plugin/graph/meson.build): the
# installed plugin must not need libprotobuf-c, nor carry text relocations
# (its archive is position-independent executable code).
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case "$needed" in
  *protobuf*) echo "needs $needed at run time" >&2; exit 1 ;;
esac
if readelf -d "$lib" | grep -q TEXTREL; then
  echo "has text relocations" >&2
  exit 1
fi
echo "exports OK: $defined; needs: $needed"
