/* Built-in op signatures, in TensorFlow's REGISTER_OP notation (copied from
 * TensorFlow's op definitions: math_ops.cc, nn_ops.cc, array_ops.cc,
 * cudnn_rnn_ops.cc, no_op.cc). One row per op the project's kernels implement; add a row to
 * support another. Allowed-type sets are left out on purpose where they
 * would only restate what the kernel's type constraints already say. */
#include "shim_internal.h"

const struct shim_op_def_row shim_builtin_op_defs[] = {
/* One file of rows per kernel family, so families are added side by side. */
#include "op_defs/core.inc"
#include "op_defs/binary.inc"
#include "op_defs/unary.inc"
#include "op_defs/reduce.inc"
#include "op_defs/matmul.inc"
#include "op_defs/movement.inc"
#include "op_defs/gather.inc"
#include "op_defs/conv.inc"
#include "op_defs/einsum.inc"
#include "op_defs/scan.inc"
#include "op_defs/pool.inc"
#include "op_defs/random.inc"
#include "op_defs/scatter.inc"
#include "op_defs/linalg.inc"
#include "op_defs/image.inc"
#include "op_defs/select.inc"
#include "op_defs/segment.inc"
#include "op_defs/numerics.inc"
#include "op_defs/fft.inc"
#include "op_defs/complex.inc"
#include "op_defs/rnn.inc"
};

const int shim_num_builtin_op_defs =
    (int)(sizeof(shim_builtin_op_defs) / sizeof(shim_builtin_op_defs[0]));
