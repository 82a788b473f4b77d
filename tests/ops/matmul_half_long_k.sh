#!/bin/sh
# MatMul in half over a long reduction: 4096 products 0.5 x 1, whose sum
# 2048 is exact in half. An accumulator in half stalls at 1024 (its spacing
# there is 1, and 1024 + 0.5 rounds to even); in float it reaches 2048, as
# TensorFlow's half MatMul does (Eigen and cuBLAS accumulate in float).
#   matmul_half_long_k.sh TFOCL    with TFOCL_PLUGIN set (and TFOCL_GEMM to
#                                  pick the GEMM path)
set -eu
a=$(awk 'BEGIN { for (i = 0; i < 4096; i++) printf "%s0.5", i ? "," : "" }')
b=$(awk 'BEGIN { for (i = 0; i < 4096; i++) printf "%s1", i ? "," : "" }')
exec "$1" run MatMul --input "half:1,4096:$a" --input "half:4096,1:$b"
