"""What every family module shares: dtype maps, tolerances, Case, BUILDERS
and the tables test_ops.py reads beside it."""

import numpy as np

import tensorflow as tf

raw = tf.raw_ops

class Variant:
    """Stands for DT_VARIANT (21) in kernel type constraints: the kernels of
    ZerosLike/AddN on TensorLists, built by _variant_cases."""


# TensorFlow DataType enum -> numpy.
NP = {
    1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16,
    6: np.int8, 8: np.complex64, 9: np.int64, 10: np.bool_,
    14: tf.bfloat16.as_numpy_dtype, 17: np.uint16, 18: np.complex128,
    19: np.float16, 21: Variant, 22: np.uint32, 23: np.uint64,
}

# Ops whose kernels need kernels_experimental.h (variable updates, the
# shape attribute of _ParallelConcatStart): their cases carry the
# `variables` marker (xfail on 2.20/2.21 wheels).
VARIABLE_OPS = {
    "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "ResourceGather",
    "ResourceGatherNd", "ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterUpdate",
    "ResourceScatterMul", "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax",
    "ResourceScatterNdAdd", "ResourceScatterNdSub", "ResourceScatterNdUpdate",
    "ResourceStridedSliceAssign",
    "ResourceApplyGradientDescent", "ResourceApplyMomentum",
    "ResourceApplyKerasMomentum", "ResourceApplyAdam",
    "ResourceApplyAdamWithAmsgrad", "ResourceApplyRMSProp",
    "ResourceApplyCenteredRMSProp", "ResourceApplyAdagrad",
    "ResourceApplyAdagradV2", "ResourceApplyAdadelta", "ResourceApplyAdaMax",
    "ResourceApplyFtrl", "ResourceApplyFtrlV2", "ResourceApplyProximalGradientDescent",
    "_TfoclKerasAdam",
    "_ParallelConcatStart", "_ParallelConcatUpdate",
}

# Ops computed through transcendental functions, sums or FMAs: looser
# float tolerance than exact ones (add, compare, move).
APPROX_OPS = {
    "Exp", "Expm1", "Log", "Log1p", "Sqrt", "Rsqrt", "Tanh", "Sigmoid", "Erf", "Erfc",
    "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Lgamma",
    "Sin", "Cos", "Elu", "Selu", "Softplus", "Softsign", "Pow", "RealDiv",
    "DivNoNan", "Reciprocal", "EluGrad", "SeluGrad", "SoftplusGrad",
    "SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad",
    "Softmax", "LogSoftmax", "Sum", "Mean", "Prod", "L2Loss", "BiasAddGrad",
    "MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "_FusedMatMul", "AddN",
    "Einsum", "Atan2", "Xlogy", "Xdivy", "Xlog1py", "Digamma", "Erfinv", "Ndtri",
    "FloorMod", "FloorDiv", "SquaredDifference",
    "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits",
    "UnsortedSegmentSum", "UnsortedSegmentProd",
    "ResourceApplyAdam", "ResourceApplyRMSProp", "ResourceApplyAdagradV2",
    "ResourceApplyAdagrad", "ResourceApplyMomentum", "ResourceApplyKerasMomentum",
}


BF16 = tf.bfloat16.as_numpy_dtype

# Per-op tolerances where the defaults below do not fit, {op: {dtype: tol}}.
# Convolutions sum up to KH*KW*Cin (or N*OH*OW for the filter gradient)
# products in an order of their own (GEMM tiles vs Eigen's or oneDNN's):
# float32 within a few ulps of the sum's magnitude. Half is stored as half
# and computed in float on OPENCL, rounded once; TensorFlow's CPU half
# kernels round on their own schedule: up to one half ulp of results up to
# ~30 (0.03). Pooling: the max pools move values (exact); AvgPool divides
# a sum of at most 27 terms.
_CONV_TOL = {np.float32: dict(rtol=1e-4, atol=1e-4), np.float16: dict(rtol=1e-2, atol=3e-2),
             np.float64: dict(rtol=1e-9, atol=1e-9)}
# Pooling in bfloat16: one rounding of a float result on OPENCL, Eigen's
# bfloat16 arithmetic on the CPU (a few bfloat16 ulps, 2^-8 each).
_POOL_SUM_TOL = {np.float32: dict(rtol=1e-6, atol=1e-6), np.float16: dict(rtol=1e-3, atol=1e-3),
                 BF16: dict(rtol=2e-2, atol=2e-2)}
# Batch norm reduces over N*H*W in trees of float partial sums (OPENCL)
# vs Eigen's or oneDNN's sums (CPU).
_BN_TOL = {np.float32: dict(rtol=1e-4, atol=1e-4), np.float16: dict(rtol=1e-2, atol=1e-2),
           BF16: dict(rtol=3e-2, atol=3e-2)}
_EXACT = {np.float32: dict(rtol=0, atol=0), np.float16: dict(rtol=0, atol=0), BF16: dict(rtol=0, atol=0)}
TOLERANCES = {
    **{op: _CONV_TOL for op in (
        "Conv2D", "Conv2DBackpropInput", "DepthwiseConv2dNative",
        "DepthwiseConv2dNativeBackpropInput", "Conv3D", "Conv3DBackpropInputV2", "_FusedConv2D")},
    # The filter gradients sum N*OH*OW products whose partial sums reach ~20:
    # the CPU's half rounds each on the way (seen: 0.033 off, two half ulps
    # at 16), OPENCL rounds the float sum once.
    **{op: {**_CONV_TOL, np.float16: dict(rtol=1e-2, atol=8e-2)} for op in (
        "Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropFilter", "Conv3DBackpropFilterV2")},
    # The max pools and their second gradients select: exact.
    **{op: _EXACT for op in ("MaxPool", "MaxPoolV2", "MaxPool3D", "MaxPoolGradGrad",
                             "MaxPoolGradGradV2", "MaxPool3DGradGrad")},
    # Overlapping windows sum gradients: in float on OPENCL, rounded once;
    # in half, per addition, by the CPU (one half ulp apart).
    **{op: {**_POOL_SUM_TOL, np.float16: dict(rtol=2e-3, atol=2e-3)}
       for op in ("MaxPoolGrad", "MaxPoolGradV2", "MaxPool3DGrad")},
    **{op: _POOL_SUM_TOL for op in ("AvgPool", "AvgPool3D")},
    # The average-pool gradients add up to 9 (27) shares per element: the
    # CPU rounds each addition in half, OPENCL once (seen: 6 half ulps).
    **{op: {**_POOL_SUM_TOL, np.float16: dict(rtol=5e-3, atol=5e-3)}
       for op in ("AvgPoolGrad", "AvgPool3DGrad")},
    "FusedBatchNormV3": _BN_TOL,
    # Householder QR: sums of up to max(m, n) products per entry, in an
    # order of its own on each side.
    "Qr": {np.float32: dict(rtol=1e-4, atol=1e-4), np.float64: dict(rtol=1e-9, atol=1e-11)},
    "FusedBatchNormGradV3": _BN_TOL,
    # The resize gradients add up to (in/out)^2 gradients per pixel: in
    # float on OPENCL, rounded once; in bfloat16, per addition, by the CPU
    # (a few bfloat16 ulps apart: 2^-5 at values near 4).
    "ResizeNearestNeighborGrad": {BF16: dict(rtol=2e-2, atol=6e-2)},
    "ResizeBilinearGrad": {BF16: dict(rtol=2e-2, atol=6e-2)},
    # Half: sums of up to 45 products rounded once on OPENCL, on the CPU's
    # own schedule there (a few half ulps of sums near 10).
    "Einsum": {np.float16: dict(rtol=1e-2, atol=2e-2)},
    # Scans: the CPU shapes add in TensorFlow's order, the GPU shapes in a
    # work-group tree (partials up to ~60 on 1500-long rows, a few ulps of
    # them); CumulativeLogsumexp goes through exp and log1p.
    **{op: {np.float32: dict(rtol=1e-5, atol=1e-4)}
       for op in ("Cumsum", "Cumprod", "CumulativeLogsumexp")},
}


def tolerance(op, dtype):
    if op in TOLERANCES and dtype in TOLERANCES[op]:
        return TOLERANCES[op][dtype]
    if dtype == BF16:  # 8 significant bits
        return dict(rtol=1e-2, atol=1e-2)
    if dtype == np.float16:
        return dict(rtol=5e-3, atol=5e-3)
    if dtype in (np.float32,):
        return dict(rtol=1e-4, atol=1e-5) if op in APPROX_OPS else dict(rtol=1e-6, atol=1e-7)
    if dtype == np.float64:
        return dict(rtol=1e-10, atol=1e-12)
    return dict(rtol=0, atol=0)


class Case:
    def __init__(self, op, types, seed):
        self.op = op
        self.types = types
        self.rng = np.random.default_rng(seed)

    @property
    def T(self):
        return self.types.get("T", np.float32)

    def t(self, name, default=np.float32):
        return self.types.get(name, default)

    def rand(self, *shape, dtype=None, lo=-2.0, hi=2.0):
        dtype = dtype or self.T
        if dtype == np.bool_:
            return self.rng.random(shape) < 0.5
        if np.issubdtype(dtype, np.integer):
            lo_i = 0 if np.issubdtype(dtype, np.unsignedinteger) else int(np.floor(lo)) * 3
            return self.rng.integers(lo_i, int(np.ceil(hi)) * 3 + 1, size=shape).astype(dtype)
        if np.issubdtype(dtype, np.complexfloating):
            return (self.rng.uniform(lo, hi, size=shape)
                    + 1j * self.rng.uniform(lo, hi, size=shape)).astype(dtype)
        return self.rng.uniform(lo, hi, size=shape).astype(dtype)

    def pos(self, *shape, dtype=None):
        dtype = dtype or self.T
        if np.issubdtype(dtype, np.integer):
            return self.rng.integers(1, 7, size=shape).astype(dtype)
        return self.rng.uniform(0.25, 3.0, size=shape).astype(dtype)

    def nonzero(self, *shape, dtype=None):
        a = self.pos(*shape, dtype=dtype)
        if np.issubdtype(a.dtype, np.unsignedinteger):
            return a
        sign = np.where(self.rng.random(shape) < 0.5, -1, 1).astype(a.dtype)
        return a * sign


def _one(fn, *inputs, label="basic"):
    return [(label, fn, list(inputs))]


# op name -> builder (see the package docstring); every module adds its ops.
BUILDERS = {}


CPU_WRONG = {
    ("Round", np.int32): ("TensorFlow's CPU Round returns 0 for integers (2.19.1, 2.21.0)",
                          lambda x: x),
    ("Round", np.int64): ("TensorFlow's CPU Round returns 0 for integers (2.19.1, 2.21.0)",
                          lambda x: x),
}

# References for kernels TensorFlow's CPU does not have (a dtype the
# plugin offers beyond it). Half inputs are otherwise computed in float32.
NUMPY_REFS = {
    "Reciprocal": lambda x: (np.trunc(1.0 / x).astype(x.dtype) if np.issubdtype(x.dtype, np.integer)
                             else (1.0 / x).astype(x.dtype)),
}
NUMPY_REFS["Inv"] = NUMPY_REFS["Reciprocal"]
