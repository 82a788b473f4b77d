"""Small tf.raw_ops calls, one builder per op the plugin may register.

BUILDERS[op](case) returns a list of (label, fn, inputs): `inputs` are numpy
arrays (or Python values), `fn(*tensors)` calls tf.raw_ops and returns a
tensor or a list of tensors. The test runs fn once under /CPU:0 and once
under /device:OPENCL:0 (soft placement off) and compares. `case.types`
holds the kernel's type constraints ({"T": np.float32, ...}); an attribute
the kernel leaves free gets the op's default.

A case may carry a fourth element, a dict of options:
  "outputs"    the indices of the outputs compared; the others are left
               unspecified by TensorFlow (the op's doc or its CPU kernel), so
               they must be on OPENCL but may hold anything;
  "reference"  (why, fn): fn of the numpy inputs returns the expected
               outputs instead of TensorFlow's CPU kernel (why says what it
               is);
  "fallback"   (why, fn): the same, used only where TensorFlow's CPU kernel
               refuses the case with one of CPU_REFUSALS (NCHW, dilations);
  "tol"        assert_allclose tolerances for this case.
Per-op tolerances are in TOLERANCES (else tolerance()'s defaults).

A kernel whose op has no builder here fails test_kernel_matches_cpu: add one
when you register a new op (the C ops suite asks the same of its host
references).
"""
# Imported in this order: a later module may wrap or replace an earlier
# one's builder (AddN, TruncateDiv).
from . import (  # noqa: F401
    _base, binary, unary, reduce, scan, matmul, linalg, movement, image,
    gather, variables, random_ops, conv, pool, batch_norm, fused, special,
    segment, select, numerics, fft, complex_ops, rnn,)
from ._base import (  # noqa: F401
    APPROX_OPS,
    BF16,
    BUILDERS,
    CPU_WRONG,
    Case,
    NP,
    NUMPY_REFS,
    TOLERANCES,
    VARIABLE_OPS,
    Variant,
    raw,
    tolerance,
)
from .conv import CONV3D_GEOMETRIES, CONV_GEOMETRIES, CPU_REFUSALS  # noqa: F401
from .pool import POOL3D_GEOMETRIES, POOL_GEOMETRIES  # noqa: F401
