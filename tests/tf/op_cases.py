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
import numpy as np
import pytest

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


# --- binary -----------------------------------------------------------------
def _binary(name):
    f = getattr(raw, name)

    def build(c):
        T = c.T
        return [
            ("same", lambda x, y: f(x=x, y=y), [c.rand(3, 4), c.rand(3, 4)]),
            ("broadcast", lambda x, y: f(x=x, y=y), [c.rand(2, 3, 4), c.rand(4)]),
            ("scalar", lambda x, y: f(x=x, y=y), [c.rand(5), np.array(c.rand(1)[0], dtype=T)]),
        ]
    return build


def _divide(name, zeros=False):
    f = getattr(raw, name)

    def build(c):
        y = c.nonzero(3, 4)
        if zeros:
            y[0, :2] = 0
        return [("same", lambda x, y: f(x=x, y=y), [c.rand(3, 4), y]),
                ("broadcast", lambda x, y: f(x=x, y=y), [c.rand(2, 3, 4), c.nonzero(4)])]
    return build


def _compare(name):
    f = getattr(raw, name)
    extra = {"incompatible_shape_error": True} if name in ("Equal", "NotEqual") else {}

    def build(c):
        T = c.T
        if T == np.bool_:
            x, y = c.rand(3, 4), c.rand(3, 4)
        else:  # small integers, so that equal values occur
            x = c.rng.integers(-2, 3, size=(3, 4)).astype(T)
            y = c.rng.integers(-2, 3, size=(3, 4)).astype(T)
        return [("same", lambda x, y: f(x=x, y=y, **extra), [x, y]),
                ("broadcast", lambda x, y: f(x=x, y=y, **extra), [x, y[0]])]
    return build


def _logical(name):
    f = getattr(raw, name)
    return lambda c: [("same", lambda x, y: f(x=x, y=y),
                       [c.rand(3, 4, dtype=np.bool_), c.rand(3, 4, dtype=np.bool_)]),
                      ("broadcast", lambda x, y: f(x=x, y=y),
                       [c.rand(3, 4, dtype=np.bool_), c.rand(4, dtype=np.bool_)])]


def _pow(c):
    if np.issubdtype(c.T, np.integer):
        return _one(lambda x, y: raw.Pow(x=x, y=y), c.rng.integers(-3, 4, (3, 4)).astype(c.T),
                    c.rng.integers(0, 4, (3, 4)).astype(c.T))
    return _one(lambda x, y: raw.Pow(x=x, y=y), c.pos(3, 4), c.rand(3, 4))


BUILDERS = {}
for _n in ["AddV2", "Add", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference"]:
    BUILDERS[_n] = _binary(_n)
BUILDERS["RealDiv"] = _divide("RealDiv")
BUILDERS["Div"] = _divide("Div")
BUILDERS["DivNoNan"] = _divide("DivNoNan", zeros=True)
BUILDERS["FloorDiv"] = _divide("FloorDiv")
BUILDERS["FloorMod"] = _divide("FloorMod")
BUILDERS["TruncateDiv"] = _divide("TruncateDiv")
BUILDERS["Pow"] = _pow
for _n in ["Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"]:
    BUILDERS[_n] = _compare(_n)
BUILDERS["LogicalAnd"] = _logical("LogicalAnd")
BUILDERS["LogicalOr"] = _logical("LogicalOr")
for _n in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
    BUILDERS[_n] = _binary(_n)


def _special_binary(name, positive_y=False, names=("x", "y")):
    """Random inputs (y positive for the logarithms), then zeros, NaN and
    infinities on both sides: the x == 0 rule of the xlogy family."""
    f = getattr(raw, name)

    def build(c):
        def fn(a, b):
            return f(**{names[0]: a, names[1]: b})
        y = c.pos(3, 4) if positive_y else c.rand(3, 4)
        sx = np.array([0, 0, 0, -0.0, 2, -2, np.nan, 1, np.inf, 0.5], c.T)
        sy = np.array([0, np.nan, -1, 2, 0, -0.0, 1, np.inf, 1, -1], c.T)
        return [("same", fn, [c.rand(3, 4), y]), ("broadcast", fn, [c.rand(3, 4), y[0]]),
                ("special", fn, [sx, sy])]
    return build


for _n in ["LeftShift", "RightShift"]:
    BUILDERS[_n] = (lambda f: lambda c: [
        ("random", lambda x, y: f(x=x, y=y), [c.rand(3, 4), c.rand(3, 4)]),
        ("every amount", lambda x, y: f(x=x, y=y),
         [np.array([-7, 12345, -1] * 24, c.T), np.arange(-3, 69).astype(c.T)])])(getattr(raw, _n))
BUILDERS["Atan2"] = _special_binary("Atan2", names=("y", "x"))
BUILDERS["Xlogy"] = _special_binary("Xlogy", positive_y=True)
BUILDERS["Xdivy"] = _special_binary("Xdivy")
BUILDERS["Xlog1py"] = _special_binary("Xlog1py", positive_y=True)
BUILDERS["NextAfter"] = _special_binary("NextAfter", names=("x1", "x2"))


def _bitcast(c):
    # Unconstrained kernel: the cases pick their own types (Keras' signbit
    # bitcasts float32 to int32).
    f = lambda x, to: (lambda x: raw.Bitcast(input=x, type=to))
    return [
        ("f32->i32", f(None, tf.int32), [c.rand(3, 4, dtype=np.float32)]),
        ("i64->i32", f(None, tf.int32), [c.rand(5, dtype=np.int64)]),
        ("i32->i64", f(None, tf.int64), [c.rand(3, 2, dtype=np.int32)]),
        ("f32->f16", f(None, tf.float16), [c.rand(2, 3, dtype=np.float32)]),
    ]


BUILDERS["Bitcast"] = _bitcast
BUILDERS["BiasAdd"] = lambda c: [
    ("NHWC", lambda v, b: raw.BiasAdd(value=v, bias=b), [c.rand(2, 3, 4), c.rand(4)]),
    ("2d", lambda v, b: raw.BiasAdd(value=v, bias=b), [c.rand(5, 4), c.rand(4)])]
BUILDERS["AddN"] = lambda c: [
    ("3", lambda a, b, d: raw.AddN(inputs=[a, b, d]), [c.rand(3, 4), c.rand(3, 4), c.rand(3, 4)]),
    ("1", lambda a: raw.AddN(inputs=[a]), [c.rand(7)])]
BUILDERS["NoOp"] = lambda c: [("noop", lambda: raw.NoOp(), [])]


# --- unary ------------------------------------------------------------------
def _unary(name, domain="any", arg="x"):
    f = getattr(raw, name)

    def build(c):
        if domain == "pos":
            x = c.pos(3, 5)
        elif domain == "gt-1":
            x = c.rng.uniform(-0.9, 3.0, (3, 5)).astype(c.T)
        elif domain == "nonzero":
            x = c.nonzero(3, 5)
        elif domain == "unit":
            x = c.rng.uniform(-0.95, 0.95, (3, 5)).astype(c.T)
        elif domain == "ge1":
            x = c.rng.uniform(1.0, 4.0, (3, 5)).astype(c.T)
        elif domain == "special":
            x = c.rand(3, 5)
            if np.issubdtype(x.dtype, np.floating):
                x[0, :3] = [np.nan, np.inf, -np.inf]
        else:
            x = c.rand(3, 5)
        return _one(lambda x: f(**{arg: x}), x)
    return build


for _n in ["Neg", "Abs", "Sign", "Exp", "Expm1", "Square", "Tanh", "Sigmoid", "Erf",
           "Sin", "Cos", "Floor", "Ceil", "Round", "Erfc", "Tan", "Atan", "Sinh", "Cosh",
           "Asinh", "Rint"]:
    BUILDERS[_n] = _unary(_n)
for _n in ["Asin", "Acos", "Atanh"]:
    BUILDERS[_n] = _unary(_n, "unit")
BUILDERS["Acosh"] = _unary("Acosh", "ge1")
BUILDERS["Lgamma"] = _unary("Lgamma", "pos")
for _n in ["Log", "Sqrt", "Rsqrt"]:
    BUILDERS[_n] = _unary(_n, "pos")
BUILDERS["Log1p"] = _unary("Log1p", "gt-1")
BUILDERS["Reciprocal"] = _unary("Reciprocal", "nonzero")
BUILDERS["Inv"] = _unary("Inv", "nonzero")
BUILDERS["Invert"] = _unary("Invert")
BUILDERS["Digamma"] = lambda c: [
    ("positive", lambda x: raw.Digamma(x=x), [c.pos(3, 5)]),
    ("poles and reflections", lambda x: raw.Digamma(x=x),
     [np.array([0, -1, -2.5, -0.5, 1e-3, 1.4616, 30, np.inf, -np.inf, np.nan], c.T)])]
BUILDERS["Erfinv"] = lambda c: [
    ("(-1, 1)", lambda x: raw.Erfinv(x=x), [c.rng.uniform(-0.999, 0.999, (3, 5)).astype(c.T)]),
    ("edges", lambda x: raw.Erfinv(x=x), [np.array([-1, 1, 0, -0.0, 1.5, -1 + 1e-7, np.nan], c.T)])]
BUILDERS["Ndtri"] = lambda c: [
    ("(0, 1)", lambda x: raw.Ndtri(x=x), [c.rng.uniform(0.001, 0.999, (3, 5)).astype(c.T)]),
    ("tails and edges", lambda x: raw.Ndtri(x=x),
     [np.array([1e-30, 1e-12, 1e-7, 0.5, 1 - 1e-6, 0, 1, -0.1, np.nan], c.T)])]
for _n in ["IsNan", "IsFinite", "IsInf"]:
    BUILDERS[_n] = _unary(_n, "special")
BUILDERS["LogicalNot"] = lambda c: _one(lambda x: raw.LogicalNot(x=x), c.rand(3, 5, dtype=np.bool_))
for _n in ["Relu", "Relu6", "Elu", "Selu", "Softplus", "Softsign"]:
    BUILDERS[_n] = _unary(_n, arg="features")
BUILDERS["Relu6"] = lambda c: _one(lambda x: raw.Relu6(features=x), c.rand(3, 5, lo=-8, hi=8))
BUILDERS["LeakyRelu"] = lambda c: [
    ("default", lambda x: raw.LeakyRelu(features=x), [c.rand(3, 5)]),
    ("alpha=0.3", lambda x: raw.LeakyRelu(features=x, alpha=0.3), [c.rand(3, 5)])]


def _grad(name, a1, a2, y_domain="any"):
    f = getattr(raw, name)

    def build(c):
        y = c.pos(3, 5) if y_domain == "pos" else c.rand(3, 5, lo=-8, hi=8) if y_domain == "wide" else c.rand(3, 5)
        if y_domain == "sigmoid":
            y = c.rng.uniform(0.05, 0.95, (3, 5)).astype(c.T)
        if y_domain == "tanh":
            y = c.rng.uniform(-0.95, 0.95, (3, 5)).astype(c.T)
        if y_domain == "nonzero":
            y = c.nonzero(3, 5)
        g = c.rand(3, 5)
        first, second = (y, g) if a1 in ("y",) else (g, y)
        return _one(lambda p, q: f(**{a1: p, a2: q}), first, second)
    return build


BUILDERS["ReluGrad"] = _grad("ReluGrad", "gradients", "features")
BUILDERS["Relu6Grad"] = _grad("Relu6Grad", "gradients", "features", "wide")
BUILDERS["EluGrad"] = _grad("EluGrad", "gradients", "outputs")
BUILDERS["SeluGrad"] = _grad("SeluGrad", "gradients", "outputs")
BUILDERS["SoftplusGrad"] = _grad("SoftplusGrad", "gradients", "features")
BUILDERS["LeakyReluGrad"] = lambda c: [
    ("alpha=0.3", lambda g, x: raw.LeakyReluGrad(gradients=g, features=x, alpha=0.3),
     [c.rand(3, 5), c.rand(3, 5)])]
BUILDERS["SigmoidGrad"] = _grad("SigmoidGrad", "y", "dy", "sigmoid")
BUILDERS["TanhGrad"] = _grad("TanhGrad", "y", "dy", "tanh")
BUILDERS["SqrtGrad"] = _grad("SqrtGrad", "y", "dy", "pos")
BUILDERS["RsqrtGrad"] = _grad("RsqrtGrad", "y", "dy", "pos")
BUILDERS["ReciprocalGrad"] = _grad("ReciprocalGrad", "y", "dy", "nonzero")


def _cast(c):
    src, dst = c.t("SrcT"), c.t("DstT")
    if src == np.bool_:
        x = c.rand(3, 5, dtype=np.bool_)
    elif np.issubdtype(dst, np.integer) and np.issubdtype(src, np.floating):
        x = c.rand(3, 5, dtype=src, lo=-9, hi=9)  # in range of every int type
        if np.issubdtype(dst, np.unsignedinteger):
            x = np.abs(x)
    else:
        x = c.rand(3, 5, dtype=src)
        if np.issubdtype(dst, np.unsignedinteger):
            x = np.abs(x)
    return _one(lambda x: raw.Cast(x=x, DstT=tf.as_dtype(dst)), x)


BUILDERS["Cast"] = _cast


# --- reductions, softmax ----------------------------------------------------
def _reduce(name):
    f = getattr(raw, name)

    def build(c):
        Tidx = c.t("Tidx", np.int32)
        x = c.rand(3, 4, 5, dtype=np.bool_ if name in ("All", "Any") else c.T)
        if name == "Prod" and np.issubdtype(c.T, np.floating):
            x = c.rng.uniform(0.5, 1.5, (3, 4, 5)).astype(c.T)
        return [
            ("axis1", lambda x, a: f(input=x, axis=a), [x, np.array([1], Tidx)]),
            ("axes02-keep", lambda x, a: f(input=x, axis=a, keep_dims=True), [x, np.array([0, 2], Tidx)]),
            ("last", lambda x, a: f(input=x, axis=a), [x, np.array(-1, Tidx)]),
            ("all", lambda x, a: f(input=x, axis=a), [x, np.array([0, 1, 2], Tidx)]),
        ]
    return build


for _n in ["Sum", "Mean", "Prod", "Max", "Min", "All", "Any", "EuclideanNorm"]:
    BUILDERS[_n] = _reduce(_n)


def _arg(name):
    f = getattr(raw, name)

    def build(c):
        Tidx = c.t("Tidx", np.int32)
        out = tf.as_dtype(c.t("output_type", np.int64))
        x = c.rand(3, 4, 5)
        return [("axis1", lambda x, d: f(input=x, dimension=d, output_type=out), [x, np.array(1, Tidx)]),
                ("axis2", lambda x, d: f(input=x, dimension=d, output_type=out), [x, np.array(2, Tidx)])]
    return build


BUILDERS["ArgMax"] = _arg("ArgMax")
BUILDERS["ArgMin"] = _arg("ArgMin")
BUILDERS["BiasAddGrad"] = lambda c: [
    ("3d", lambda g: raw.BiasAddGrad(out_backprop=g), [c.rand(2, 3, 4)]),
    ("2d", lambda g: raw.BiasAddGrad(out_backprop=g), [c.rand(5, 4)])]
BUILDERS["L2Loss"] = lambda c: _one(lambda t: raw.L2Loss(t=t), c.rand(3, 5))
BUILDERS["Softmax"] = lambda c: [
    ("2d", lambda x: raw.Softmax(logits=x), [c.rand(4, 10, lo=-6, hi=6)]),
    ("3d", lambda x: raw.Softmax(logits=x), [c.rand(2, 3, 7)])]
BUILDERS["LogSoftmax"] = lambda c: [
    ("2d", lambda x: raw.LogSoftmax(logits=x), [c.rand(4, 10, lo=-6, hi=6)])]


def _xent(c):
    labels = np.eye(6, dtype=c.T)[c.rng.integers(0, 6, 4)]
    return _one(lambda f, l: list(raw.SoftmaxCrossEntropyWithLogits(features=f, labels=l)),
                c.rand(4, 6), labels)


def _sparse_xent(c):
    Tl = c.t("Tlabels", np.int64)
    return _one(lambda f, l: list(raw.SparseSoftmaxCrossEntropyWithLogits(features=f, labels=l)),
                c.rand(4, 6), c.rng.integers(0, 6, 4).astype(Tl))


BUILDERS["SoftmaxCrossEntropyWithLogits"] = _xent
BUILDERS["SparseSoftmaxCrossEntropyWithLogits"] = _sparse_xent


# --- scans ------------------------------------------------------------------
def _scan(name):
    """Rows and columns, short and long (rows beyond a work-group's chunk,
    columns walked far), each exclusive/reverse pair, both axis types."""
    f = getattr(raw, name)
    accumulate = {"Cumsum": np.add, "Cumprod": np.multiply,
                  "CumulativeLogsumexp": np.logaddexp}[name]
    identity = {"Cumsum": 0.0, "Cumprod": 1.0, "CumulativeLogsumexp": -np.inf}[name]

    def numpy_scan(exclusive, reverse):
        def ref(x, a):
            y = np.moveaxis(np.asarray(x, np.float64), int(a), -1)
            if reverse:
                y = y[..., ::-1]
            y = accumulate.accumulate(y, axis=-1) if y.size else y
            if exclusive and y.size:
                y = np.concatenate([np.full(y.shape[:-1] + (1,), identity), y[..., :-1]], -1)
            if reverse:
                y = y[..., ::-1]
            return [np.moveaxis(y, -1, int(a)).astype(x.dtype)]
        return ref

    def build(c):
        T = c.T
        if name == "Cumprod" and not np.issubdtype(T, np.integer):
            x = lambda *s: c.rng.uniform(0.9, 1.1, s).astype(T)  # products stay finite
        else:
            x = c.rand
        cases = []
        for label, shape, axis, exclusive, reverse in [
                ("rows", (4, 37), np.int32(1), False, False),
                ("columns, exclusive", (37, 5), np.int64(0), True, False),
                ("axis -2, reverse", (2, 3, 7), np.int32(-2), False, True),
                ("exclusive, reverse", (3, 20, 17), np.int64(1), True, True),
                ("long rows, exclusive, reverse", (3, 1500), np.int32(-1), True, True),
                ("long columns", (1100, 20), np.int64(0), False, False),
                ("empty", (0, 3), np.int32(0), False, False)]:
            fn = (lambda e, r: lambda x, a: f(x=x, axis=a, exclusive=e, reverse=r))(exclusive, reverse)
            case = (label, fn, [x(*shape), np.array(axis)])
            if T in (np.float16, BF16):
                # TensorFlow's kernels round every partial result to T;
                # OPENCL accumulates in float and rounds each output once.
                case += ({"reference": ("float64 scan, rounded once",
                                        numpy_scan(exclusive, reverse))},)
            cases.append(case)
        if T in (np.float32, np.float64):
            # NaN and infinities. +inf never meets NaN or +inf in a line:
            # TensorFlow 2.22's logsumexp returns an infinite max as is,
            # where 2.19 and 2.21 give NaN (inf - inf).
            special = np.array([[-np.inf, 1, np.nan, 2], [3, -np.inf, 1, -np.inf],
                                [0.5, -np.inf, 2, np.inf]], T)
            for axis in (0, 1):
                for e in (False, True):
                    cases.append((f"special values, axis {axis}, exclusive {e}",
                                  (lambda e: lambda x, a: f(x=x, axis=a, exclusive=e, reverse=e))(e),
                                  [special, np.array(axis, np.int32)]))
        return cases
    return build


for _n in ["Cumsum", "Cumprod", "CumulativeLogsumexp"]:
    BUILDERS[_n] = _scan(_n)


# --- matmul -----------------------------------------------------------------
def _matmul(c):
    f = lambda ta, tb: (lambda a, b: raw.MatMul(a=a, b=b, transpose_a=ta, transpose_b=tb))
    return [
        ("NN", f(False, False), [c.rand(3, 4), c.rand(4, 5)]),
        ("TN", f(True, False), [c.rand(4, 3), c.rand(4, 5)]),
        ("NT", f(False, True), [c.rand(3, 4), c.rand(5, 4)]),
        ("TT", f(True, True), [c.rand(4, 3), c.rand(5, 4)]),
        ("64x130x33", f(False, False), [c.rand(64, 130), c.rand(130, 33)]),
    ]


def _bmm(name):
    def build(c):
        Ta, Tb = c.t("Ta", c.T), c.t("Tb", c.T)
        g = getattr(raw, name)
        f = g
        if name == "BatchMatMulV3":  # Tout follows x (a half reference runs in float32)
            f = lambda x, y, **kw: g(x=x, y=y, Tout=x.dtype, **kw)  # noqa: E731
        kw = {}
        cases = [("batch", lambda x, y: f(x=x, y=y, **kw), [c.rand(2, 3, 4, dtype=Ta), c.rand(2, 4, 5, dtype=Tb)]),
                 ("adj", lambda x, y: f(x=x, y=y, adj_x=True, adj_y=True, **kw),
                  [c.rand(2, 4, 3, dtype=Ta), c.rand(2, 5, 4, dtype=Tb)])]
        if name != "BatchMatMul":
            cases.append(("broadcast", lambda x, y: f(x=x, y=y, **kw),
                          [c.rand(2, 1, 3, 4, dtype=Ta), c.rand(3, 4, 5, dtype=Tb)]))
        return cases
    return build


BUILDERS["MatMul"] = _matmul
for _n in ["BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"]:
    BUILDERS[_n] = _bmm(_n)


def _fused_matmul_call(fused_ops, transpose_a=False, transpose_b=False, leakyrelu_alpha=0.2):
    """fn(a, b, bias) running _FusedMatMul, an internal op that tf.raw_ops
    leaves out: through the eager executor directly."""
    from tensorflow.python.eager import context, execute

    def fn(a, b, bias):
        attrs = ("transpose_a", transpose_a, "transpose_b", transpose_b,
                 "T", a.dtype.as_datatype_enum, "num_args", 1,
                 "fused_ops", fused_ops, "epsilon", 1e-4, "leakyrelu_alpha", leakyrelu_alpha)
        return execute.execute(b"_FusedMatMul", 1, inputs=[a, b, bias], attrs=attrs,
                               ctx=context.context())[0]
    return fn


_FUSED_NUMPY = {
    "Tanh": np.tanh,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "GeluApproximate": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "GeluExact": lambda x: 0.5 * x * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2))),
}


def _fused_numpy(act, ta, tb):
    """A float64 numpy _FusedMatMul (BiasAdd + act), rounded to the inputs'
    type."""
    def ref(a, b, bias):
        x = a.astype(np.float64).T if ta else a.astype(np.float64)
        y = b.astype(np.float64).T if tb else b.astype(np.float64)
        return [_FUSED_NUMPY[act](x @ y + bias.astype(np.float64)).astype(a.dtype)]
    return ref


def _fused_matmul(c):
    # TensorFlow's CPU kernel takes BiasAdd with Relu, Relu6, Elu and
    # LeakyRelu (Eigen's) and, depending on the case, more through oneDNN:
    # the other activations are checked against numpy. It aborts the
    # process on num_args 0 and on K == 0, so the failing and empty cases
    # live in the C ops suite only. Half has no CPU kernel: the test
    # computes it in float32.
    cases = [("BiasAdd", _fused_matmul_call(["BiasAdd"]), [c.rand(3, 4), c.rand(4, 5), c.rand(5)]),
             ("BiasAdd 70x37x45", _fused_matmul_call(["BiasAdd"]),
              [c.rand(70, 37), c.rand(37, 45), c.rand(45)])]
    for i, act in enumerate(["Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid",
                             "GeluApproximate", "GeluExact"]):
        ta, tb = bool(i & 1), bool(i & 2)
        a = c.rand(37, 33) if ta else c.rand(33, 37)
        b = c.rand(20, 37) if tb else c.rand(37, 20)
        case = (f"BiasAdd+{act} ta={ta} tb={tb}", _fused_matmul_call(["BiasAdd", act], ta, tb),
                [a, b, c.rand(20)])
        if act in _FUSED_NUMPY:
            case += ({"reference": (f"numpy BiasAdd + {act}", _fused_numpy(act, ta, tb))},)
        cases.append(case)
    cases.append(("BiasAdd+LeakyRelu alpha=0.3",
                  _fused_matmul_call(["BiasAdd", "LeakyRelu"], leakyrelu_alpha=0.3),
                  [c.rand(9, 12), c.rand(12, 7), c.rand(7)]))
    return cases


BUILDERS["_FusedMatMul"] = _fused_matmul


# --- linalg -----------------------------------------------------------------
def _qr(c):
    # q and r are compared as they are: the OPENCL kernel follows LAPACK's
    # sign convention, as TensorFlow's CPU kernel (Eigen's HouseholderQR)
    # does, and random matrices are far from rank-deficient.
    f = lambda full: (lambda x: raw.Qr(input=x, full_matrices=full))  # noqa: E731
    return [(f"{shape} full={full}", f(full), [c.rand(*shape)])
            for shape in [(4, 3), (3, 5), (2, 5, 5), (40, 33)] for full in (False, True)]


BUILDERS["Qr"] = _qr


# The factorisations and solvers (float32 and float64 on OPENCL), on
# well-conditioned matrices: SPD for Cholesky, diagonally dominant with the
# rows cycled (so partial pivoting swaps) for the LU family, near the
# identity for determinants, a dominant diagonal for triangular solves.
# Sums of up to n products in an order of their own on each side: float32
# within 1e-4 relative.
_LINALG_TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}


def _spd(c, *shape):
    n = shape[-1]
    b = c.rand(*shape).astype(np.float64)
    a = (b @ np.swapaxes(b, -1, -2) + n * np.eye(n)) / (3 * n)
    return a.astype(c.T)


def _dominant(c, *shape, near_identity=False):
    n = shape[-1]
    a = c.rand(*shape).astype(np.float64)
    eye = np.eye(n)
    a = eye + a / (2 * n) if near_identity else a + np.where(a < 0, -3.0, 3.0) * n * eye
    return np.roll(a, 1, axis=-2).astype(c.T)


def _linalg_cases(c, build):
    return [case + ({"tol": _LINALG_TOL[c.T]},) for case in build()]


def _cholesky(c):
    def not_spd(x):
        n = x.shape[-1]
        out = np.where(np.tril(np.ones((n, n), bool)), np.nan, 0.0)
        return [np.broadcast_to(out, x.shape).astype(x.dtype)]
    f = lambda x: raw.Cholesky(input=x)  # noqa: E731
    bad = np.full((2, 5, 5), 0.5) + np.diag([4.0, 4.0, -1.0, 4.0, 4.0]) - 0.5 * np.eye(5)
    return _linalg_cases(c, lambda: [
        ("1x1", f, [_spd(c, 1, 1)]), ("3x3", f, [_spd(c, 3, 3)]),
        ("17x17", f, [_spd(c, 17, 17)]), ("64x64", f, [_spd(c, 64, 64)]),
        ("batch", f, [_spd(c, 2, 3, 5, 5)]), ("empty", f, [_spd(c, 0, 3, 3)]),
        # TensorFlow's GPU kernel fills the lower triangle with NaN (its
        # CPU kernel leaves the upper one unset): checked against that.
        ("not positive definite", f, [bad.astype(c.T)],
         {"reference": ("NaN lower triangle, zero upper", not_spd)}),
    ])


def _lu_family(op, det=False, adjoint_attr=True):
    def build(c):
        def f(adjoint):
            if adjoint_attr:
                return lambda x: getattr(raw, op)(input=x, adjoint=adjoint)
            return lambda x: getattr(raw, op)(input=x)
        cases = []
        for adjoint in ((False, True) if adjoint_attr else (False,)):
            for shape in [(1, 1), (3, 3), (17, 17), (64, 64), (2, 3, 4, 4)]:
                cases.append((f"{shape} adjoint={adjoint}", f(adjoint),
                              [_dominant(c, *shape, near_identity=det)]))
        cases.append(("empty", f(False), [_dominant(c, 0, 3, 3, near_identity=det)]))
        return _linalg_cases(c, lambda: cases)
    return build


def _matrix_solve(c):
    f = lambda adj: (lambda a, b: raw.MatrixSolve(matrix=a, rhs=b, adjoint=adj))  # noqa: E731
    return _linalg_cases(c, lambda: [
        (f"{a} {b} adjoint={adj}", f(adj), [_dominant(c, *a), c.rand(*b)])
        for a, b in [((1, 1), (1, 1)), ((3, 3), (3, 2)), ((17, 17), (17, 5)),
                     ((64, 64), (64, 33)), ((2, 3, 4, 4), (2, 3, 4, 1))]
        for adj in (False, True)])


def _triangular_solve(c):
    def tri(*shape):
        n = shape[-1]
        a = c.rand(*shape).astype(np.float64)
        a = np.where(np.eye(n, dtype=bool), np.where(a < 0, -1.0, 1.0) * (n + 2), a)
        return a.astype(c.T)
    f = lambda lo, adj: (lambda a, b: raw.MatrixTriangularSolve(  # noqa: E731
        matrix=a, rhs=b, lower=lo, adjoint=adj))
    cases = [(f"{a} {b} lower={lo} adjoint={adj}", f(lo, adj), [tri(*a), c.rand(*b)])
             for a, b in [((3, 3), (3, 4)), ((17, 17), (17, 3)), ((64, 64), (64, 40)),
                          ((2, 3, 5, 5), (2, 3, 5, 2))]
             for lo in (True, False) for adj in (False, True)]
    cases += [("broadcast", f(True, False), [tri(1, 4, 4), c.rand(3, 4, 2)]),
              ("broadcast 2", f(False, True), [tri(2, 1, 4, 4), c.rand(3, 4, 2)])]
    return _linalg_cases(c, lambda: cases)


BUILDERS["Cholesky"] = _cholesky
BUILDERS["MatrixInverse"] = _lu_family("MatrixInverse")
BUILDERS["MatrixDeterminant"] = _lu_family("MatrixDeterminant", det=True, adjoint_attr=False)
BUILDERS["LogMatrixDeterminant"] = _lu_family("LogMatrixDeterminant", det=True,
                                              adjoint_attr=False)
BUILDERS["MatrixSolve"] = _matrix_solve
BUILDERS["MatrixTriangularSolve"] = _triangular_solve


def _einsum(c):
    """Keras' MultiHeadAttention and EinsumDense equations and their
    gradients', transposed and swapped outputs, broadcast ellipses, reduce
    labels, diagonals and one-operand forms; errors match the CPU's."""
    cases = [
        ("aecd,abcd->acbe", (2, 7, 3, 5), (2, 6, 3, 5)),
        ("acbe,aecd->abcd", (2, 3, 6, 7), (2, 7, 3, 5)),
        ("abc,cde->abde", (2, 6, 9), (9, 3, 5)),
        ("abcd,cde->abe", (2, 6, 3, 5), (3, 5, 9)),
        ("abde,abc->cde", (2, 6, 3, 5), (2, 6, 9)),
        ("ij,jk->ki", (33, 17), (17, 29)),
        ("ji,kj->ik", (17, 33), (29, 17)),
        ("bij,jk->bik", (3, 9, 7), (7, 5)),
        ("...ij,...jk->...ik", (2, 1, 4, 5), (3, 5, 6)),
        ("ijk,jl->il", (4, 5, 6), (5, 3)),
        ("ii,ij->ij", (4, 4), (4, 5)),
        ("i,i->", (19,), (19,)),
        ("bij,bjk->bik", (0, 3, 4), (0, 4, 5)),
        ("ij,jk->ik", (3, 0), (0, 4)),
        ("ijk->kij", (3, 4, 5), None),
        ("ijk->j", (3, 4, 5), None),
        ("ii->i", (6, 6), None),
    ]
    out = []
    for eq, a, b in cases:
        if b is None:
            out.append((eq, lambda x, eq=eq: raw.Einsum(inputs=[x], equation=eq), [c.rand(*a)]))
        else:
            out.append((eq, lambda x, y, eq=eq: raw.Einsum(inputs=[x, y], equation=eq),
                        [c.rand(*a), c.rand(*b)]))
    return out


BUILDERS["Einsum"] = _einsum


def _matrix_diag_part(c):
    """The main diagonal (Keras' Orthogonal initializer), one off it, and
    ranges of diagonals in each alignment, padded."""
    def f(align, k):
        return lambda x: raw.MatrixDiagPartV3(input=x, k=np.array(k, np.int32),
                                              padding_value=np.array(7, c.T), align=align)
    cases = [("main", f("RIGHT_LEFT", 0), [c.rand(4, 4)]),
             ("batch k=2", f("RIGHT_LEFT", 2), [c.rand(2, 7, 5)]),
             ("k=-3", f("RIGHT_LEFT", -3), [c.rand(2, 7, 5)])]
    for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
        cases.append((f"range {align}", f(align, [-2, 3]), [c.rand(2, 5, 7)]))
    return cases


BUILDERS["MatrixDiagPartV3"] = _matrix_diag_part


def _matrix_diag(c):
    """tf.linalg.diag: one diagonal, a range in each alignment, explicit
    num_rows/num_cols, padding."""
    def f(k, rows=-1, cols=-1, align="RIGHT_LEFT"):
        return lambda d: raw.MatrixDiagV3(diagonal=d, k=np.array(k, np.int32),
                                          num_rows=np.array(rows, np.int32),
                                          num_cols=np.array(cols, np.int32),
                                          padding_value=np.array(5, c.T), align=align)
    cases = [("main", f(0), [c.rand(3, 4)]), ("k=2", f(2), [c.rand(2, 3)]),
             ("k=-1 rows=5", f(-1, 5), [c.rand(2, 3)])]
    for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
        cases.append((f"range {align}", f([-1, 2], align=align), [c.rand(2, 4, 3)]))
    return cases


def _matrix_set_diag(c):
    """tf.linalg.set_diag: the main diagonal, one off it, ranges in each
    alignment."""
    def f(k, align="RIGHT_LEFT"):
        return lambda x, d: raw.MatrixSetDiagV3(input=x, diagonal=d,
                                                k=np.array(k, np.int32), align=align)
    cases = [("main", f(0), [c.rand(4, 4), c.rand(4)]),
             ("k=1 batch", f(1), [c.rand(2, 3, 5), c.rand(2, 3)])]
    for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
        cases.append((f"range {align}", f([-2, 3], align),
                      [c.rand(2, 5, 7), c.rand(2, 6, 5)]))
    return cases


def _matrix_band_part(c):
    """tf.linalg.band_part: triangles (a negative bound keeps all), bands,
    int32 and int64 bounds."""
    def f(lo, hi, t):
        return lambda x: raw.MatrixBandPart(input=x, num_lower=np.array(lo, t),
                                            num_upper=np.array(hi, t))
    return [(f"{lo},{hi} {t.__name__}", f(lo, hi, t), [c.rand(*shape)])
            for lo, hi, t, shape in [(0, -1, np.int64, (5, 5)), (-1, 0, np.int32, (5, 5)),
                                     (1, 2, np.int64, (2, 4, 7)), (3, 0, np.int32, (3, 2, 17, 9)),
                                     (0, 0, np.int64, (6, 4))]]


BUILDERS["MatrixDiagV3"] = _matrix_diag
BUILDERS["MatrixSetDiagV3"] = _matrix_set_diag
BUILDERS["MatrixBandPart"] = _matrix_band_part


# --- data movement ----------------------------------------------------------
def _i(c, name, values, default=np.int32):
    return np.array(values, dtype=c.t(name, default))


BUILDERS["Identity"] = lambda c: _one(lambda x: raw.Identity(input=x), c.rand(3, 4))
BUILDERS["Snapshot"] = lambda c: _one(lambda x: raw.Snapshot(input=x), c.rand(3, 4))
BUILDERS["Reshape"] = lambda c: _one(lambda x, s: raw.Reshape(tensor=x, shape=s),
                                     c.rand(3, 4), _i(c, "Tshape", [2, -1]))
BUILDERS["ExpandDims"] = lambda c: _one(lambda x, a: raw.ExpandDims(input=x, axis=a),
                                        c.rand(3, 4), _i(c, "Tdim", 1))
BUILDERS["Squeeze"] = lambda c: _one(lambda x: raw.Squeeze(input=x, axis=[1]), c.rand(3, 1, 4))
# Ranks 9 to 12 whose dims do not collapse: the kernels split them into
# several launches (TensorFlow's own tests Tile and Transpose rank 10).
_R10 = (2, 3, 2, 1, 3, 2, 2, 3, 1, 2)
_R12 = (2, 2, 3, 2, 2, 1, 2, 2, 3, 2, 2, 2)

BUILDERS["Transpose"] = lambda c: [
    ("2d", lambda x, p: raw.Transpose(x=x, perm=p), [c.rand(3, 4), _i(c, "Tperm", [1, 0])]),
    ("3d", lambda x, p: raw.Transpose(x=x, perm=p), [c.rand(2, 3, 4), _i(c, "Tperm", [2, 0, 1])]),
    ("4d", lambda x, p: raw.Transpose(x=x, perm=p), [c.rand(2, 3, 4, 5), _i(c, "Tperm", [0, 2, 3, 1])]),
    ("tiles", lambda x, p: raw.Transpose(x=x, perm=p), [c.rand(3, 37, 70), _i(c, "Tperm", [0, 2, 1])]),
    ("rank10", lambda x, p: raw.Transpose(x=x, perm=p),
     [c.rand(*_R10), _i(c, "Tperm", [9, 2, 7, 0, 5, 1, 8, 3, 6, 4])]),
    ("rank12", lambda x, p: raw.Transpose(x=x, perm=p),
     [c.rand(*_R12), _i(c, "Tperm", list(range(11, -1, -1)))])]
BUILDERS["ConcatV2"] = lambda c: [
    ("axis0", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x), [c.rand(2, 4), c.rand(3, 4), _i(c, "Tidx", 0)]),
    ("axis1", lambda a, b, d, x: raw.ConcatV2(values=[a, b, d], axis=x),
     [c.rand(2, 3), c.rand(2, 1), c.rand(2, 4), _i(c, "Tidx", -1)]),
    ("rank10", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x),
     [c.rand(*_R10), c.rand(*_R10[:4], 1, *_R10[5:]), _i(c, "Tidx", 4)])]
BUILDERS["Pack"] = lambda c: [
    ("axis0", lambda a, b: raw.Pack(values=[a, b]), [c.rand(3, 4), c.rand(3, 4)]),
    ("axis1", lambda a, b, d: raw.Pack(values=[a, b, d], axis=1), [c.rand(3, 4), c.rand(3, 4), c.rand(3, 4)]),
    ("rank11", lambda a, b: raw.Pack(values=[a, b], axis=6), [c.rand(*_R10), c.rand(*_R10)])]
BUILDERS["Unpack"] = lambda c: [
    ("axis0", lambda x: raw.Unpack(value=x, num=3), [c.rand(3, 4)]),
    ("axis1", lambda x: raw.Unpack(value=x, num=4, axis=1), [c.rand(3, 4)]),
    ("rank10", lambda x: raw.Unpack(value=x, num=3, axis=4), [c.rand(*_R10)])]
BUILDERS["Split"] = lambda c: [
    ("axis1", lambda d, x: raw.Split(axis=d, value=x, num_split=2), [np.array(1, np.int32), c.rand(3, 4)]),
    ("rank10", lambda d, x: raw.Split(axis=d, value=x, num_split=3), [np.array(7, np.int32), c.rand(*_R10)])]
BUILDERS["SplitV"] = lambda c: [
    ("axis1", lambda x, s, d: raw.SplitV(value=x, size_splits=s, axis=d, num_split=3),
     [c.rand(3, 6), _i(c, "Tlen", [1, 2, -1], np.int64), np.array(1, np.int32)]),
    ("rank10", lambda x, s, d: raw.SplitV(value=x, size_splits=s, axis=d, num_split=2),
     [c.rand(*_R10), _i(c, "Tlen", [1, 2], np.int64), np.array(-3, np.int32)])]
def _np_slice(x, b, s):
    return [x[tuple(slice(i, x.shape[d] if n == -1 else i + n) for d, (i, n) in enumerate(zip(b, s)))]]


def _np_pad(x, p, v=0):
    return [np.pad(x, p, constant_values=v)]


_HIGH_RANK = "numpy: TensorFlow's CPU kernel takes at most 8 dims"


def _np_strided_slice_grad(sh, b, e, s, dy):
    dx = np.zeros(sh, dy.dtype)
    dx[tuple(slice(*t) for t in zip(b, e, s))] = dy
    return [dx]

BUILDERS["Slice"] = lambda c: [
    ("basic", lambda x, b, s: raw.Slice(input=x, begin=b, size=s),
     [c.rand(4, 5), _i(c, "Index", [1, 2]), _i(c, "Index", [2, -1])]),
    ("rank12", lambda x, b, s: raw.Slice(input=x, begin=b, size=s),
     [c.rand(*_R12), _i(c, "Index", [1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1]),
      _i(c, "Index", [1, 2, 2, 1, 1, 1, 1, 2, 1, 1, 1, -1])], {"fallback": (_HIGH_RANK, _np_slice)})]
BUILDERS["StridedSlice"] = lambda c: [
    ("basic", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s),
     [c.rand(5, 6), _i(c, "Index", [1, 0]), _i(c, "Index", [4, 6]), _i(c, "Index", [1, 2])]),
    ("masks", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s,
                                                  begin_mask=1, end_mask=2, shrink_axis_mask=0),
     [c.rand(5, 6), _i(c, "Index", [3, 1]), _i(c, "Index", [0, 0]), _i(c, "Index", [-1, 1])]),
    ("shrink", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s, shrink_axis_mask=1),
     [c.rand(5, 6), _i(c, "Index", [2, 0]), _i(c, "Index", [3, 6]), _i(c, "Index", [1, 1])]),
    ("rank10", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s, end_mask=0b1010101010),
     [c.rand(3, 4, 3, 2, 4, 3, 2, 3, 4, 3), _i(c, "Index", [0, 3, 1, 1, 0, 2, 0, 2, 3, 0]),
      _i(c, "Index", [3, 0, 3, 0, 4, 0, 2, 0, 4, 0]), _i(c, "Index", [2, -1, 1, -1, 2, -2, 1, -1, -3, 2])])]
BUILDERS["StridedSliceGrad"] = lambda c: [
    ("basic", lambda sh, b, e, s, dy: raw.StridedSliceGrad(shape=sh, begin=b, end=e, strides=s, dy=dy),
     [_i(c, "Index", [5, 6]), _i(c, "Index", [1, 0]), _i(c, "Index", [4, 6]), _i(c, "Index", [1, 2]),
      c.rand(3, 3)]),
    ("rank9", lambda sh, b, e, s, dy: raw.StridedSliceGrad(shape=sh, begin=b, end=e, strides=s, dy=dy),
     [_i(c, "Index", [3, 2, 4, 3, 2, 3, 4, 2, 3]), _i(c, "Index", [0, 1, 0, 2, 0, 0, 3, 0, 1]),
      _i(c, "Index", [3, 0, 4, 0, 2, 3, 0, 2, 3]), _i(c, "Index", [2, -1, 3, -2, 1, 2, -2, 1, 1]),
      c.rand(2, 1, 2, 1, 2, 2, 2, 2, 2)],
     {"reference": ("numpy: TensorFlow's CPU StridedSliceGrad of rank 9 returns uninitialised "
                    "memory (2.19.1)", _np_strided_slice_grad)})]
BUILDERS["Tile"] = lambda c: [
    ("basic", lambda x, m: raw.Tile(input=x, multiples=m), [c.rand(2, 3), _i(c, "Tmultiples", [2, 3])]),
    ("rank10", lambda x, m: raw.Tile(input=x, multiples=m),
     [c.rand(*_R10), _i(c, "Tmultiples", [2, 1, 2, 3, 1, 2, 1, 2, 2, 1])])]
BUILDERS["Pad"] = lambda c: [
    ("basic", lambda x, p: raw.Pad(input=x, paddings=p), [c.rand(2, 3), _i(c, "Tpaddings", [[1, 0], [2, 1]])]),
    ("rank10", lambda x, p: raw.Pad(input=x, paddings=p),
     [c.rand(*_R10), _i(c, "Tpaddings", [[1, 0], [0, 1], [1, 1], [0, 2], [1, 0],
                                          [0, 1], [1, 0], [0, 1], [2, 0], [1, 1]])],
     {"fallback": (_HIGH_RANK, _np_pad)})]
BUILDERS["PadV2"] = lambda c: [
    ("basic", lambda x, p, v: raw.PadV2(input=x, paddings=p, constant_values=v),
     [c.rand(2, 3), _i(c, "Tpaddings", [[1, 0], [2, 1]]), np.array(c.rand(1)[0], c.T)]),
    ("rank10", lambda x, p, v: raw.PadV2(input=x, paddings=p, constant_values=v),
     [c.rand(*_R10), _i(c, "Tpaddings", [[0, 1], [1, 0], [0, 0], [1, 1], [0, 1],
                                          [1, 0], [0, 1], [1, 0], [0, 0], [1, 2]]),
      np.array(c.rand(1)[0], c.T)], {"fallback": (_HIGH_RANK, _np_pad)})]
BUILDERS["SpaceToBatchND"] = lambda c: [
    ("2x2 padded", lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [c.rand(2, 5, 7, 3), _i(c, "Tblock_shape", [2, 2]), _i(c, "Tpaddings", [[1, 0], [0, 1]])]),
    ("one dim", lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [c.rand(3, 7, 2), _i(c, "Tblock_shape", [3]), _i(c, "Tpaddings", [[1, 1]])]),
    ("rank9", lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [c.rand(2, 4, 3, 2, 2, 3, 2, 1, 2), _i(c, "Tblock_shape", [2, 3]),
      _i(c, "Tpaddings", [[0, 0], [1, 2]])])]
BUILDERS["BatchToSpaceND"] = lambda c: [
    ("2x2 cropped", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [c.rand(8, 3, 4, 3), _i(c, "Tblock_shape", [2, 2]), _i(c, "Tcrops", [[1, 0], [0, 1]])]),
    ("one dim", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [c.rand(9, 3, 2), _i(c, "Tblock_shape", [3]), _i(c, "Tcrops", [[1, 1]])]),
    ("rank9", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [c.rand(12, 2, 2, 2, 2, 3, 2, 1, 2), _i(c, "Tblock_shape", [2, 3]),
      _i(c, "Tcrops", [[0, 0], [1, 2]])])]
# --- image ------------------------------------------------------------------
def _resize(name):
    f = getattr(raw, name)
    grad = name.endswith("Grad")

    def build(c):
        def case(label, x_shape, hw, **attrs):
            if name == "ResizeBilinearGrad":
                orig = c.rand(x_shape[0], hw[0], hw[1], x_shape[3])
                return (label, lambda g, o: f(grads=g, original_image=o, **attrs),
                        [c.rand(*x_shape, dtype=np.float32), orig])
            key = "grads" if grad else "images"
            return (label, lambda x, s: f(**{key: x, "size": s}, **attrs),
                    [c.rand(*x_shape), np.array(hw, np.int32)])
        return [
            case("up", (2, 5, 7, 3), (9, 11)),
            case("half pixel down", (2, 17, 13, 4), (7, 5), half_pixel_centers=True),
            case("half pixel x2", (2, 6, 6, 3), (12, 12), half_pixel_centers=True),
            case("align corners", (1, 4, 5, 2), (7, 3), align_corners=True),
            case("odd", (1, 31, 23, 3), (17, 13)),
        ]
    return build


for _n in ("ResizeBilinear", "ResizeBilinearGrad", "ResizeNearestNeighbor",
           "ResizeNearestNeighborGrad"):
    BUILDERS[_n] = _resize(_n)

BUILDERS["MirrorPad"] = lambda c: _one(lambda x, p: raw.MirrorPad(input=x, paddings=p, mode="REFLECT"),
                                       c.rand(3, 4), _i(c, "Tpaddings", [[1, 1], [2, 1]]))
# Replaces the one-case builder above: both modes, rank 5.
BUILDERS["MirrorPad"] = lambda c: [
    ("reflect", lambda x, p: raw.MirrorPad(input=x, paddings=p, mode="REFLECT"),
     [c.rand(3, 4), _i(c, "Tpaddings", [[1, 1], [2, 1]])]),
    ("symmetric rank5", lambda x, p: raw.MirrorPad(input=x, paddings=p, mode="SYMMETRIC"),
     [c.rand(2, 3, 2, 3, 2), _i(c, "Tpaddings", [[1, 2], [3, 0], [0, 1], [2, 2], [1, 0]])])]
BUILDERS["MirrorPadGrad"] = lambda c: [
    ("reflect", lambda x, p: raw.MirrorPadGrad(input=x, paddings=p, mode="REFLECT"),
     [c.rand(5, 9), _i(c, "Tpaddings", [[1, 1], [2, 3]])]),
    ("symmetric", lambda x, p: raw.MirrorPadGrad(input=x, paddings=p, mode="SYMMETRIC"),
     [c.rand(4, 5, 6), _i(c, "Tpaddings", [[1, 1], [0, 2], [2, 1]])])]
BUILDERS["ReverseV2"] = lambda c: [
    ("axes", lambda x, a: raw.ReverseV2(tensor=x, axis=a), [c.rand(2, 3, 4), _i(c, "Tidx", [0, -1])]),
    ("rank8", lambda x, a: raw.ReverseV2(tensor=x, axis=a),
     [c.rand(2, 1, 2, 3, 2, 1, 2, 3), _i(c, "Tidx", [0, 2, 4, 7])])]
BUILDERS["Roll"] = lambda c: [
    ("two axes", lambda x, s, a: raw.Roll(input=x, shift=s, axis=a),
     [c.rand(3, 4, 5), _i(c, "Tshift", [2, -7]), _i(c, "Taxis", [2, 0])]),
    ("rank6", lambda x, s, a: raw.Roll(input=x, shift=s, axis=a),
     [c.rand(2, 3, 2, 3, 2, 3), _i(c, "Tshift", [1, 1, 1, 2, 1, 100]),
      _i(c, "Taxis", [0, 1, 2, 3, 4, 5])])]
BUILDERS["DepthToSpace"] = lambda c: [
    ("nhwc", lambda x: raw.DepthToSpace(input=x, block_size=2), [c.rand(2, 3, 5, 12)]),
    ("nchw", lambda x: raw.DepthToSpace(input=x, block_size=3, data_format="NCHW"),
     [c.rand(2, 18, 3, 5)],
     {"reference": ("numpy: TensorFlow's CPU kernel takes NHWC only",
                    lambda x: [x.reshape(2, 3, 3, 2, 3, 5).transpose(0, 3, 4, 1, 5, 2).reshape(2, 2, 9, 15)])})]
BUILDERS["SpaceToDepth"] = lambda c: [
    ("nhwc", lambda x: raw.SpaceToDepth(input=x, block_size=2), [c.rand(2, 6, 4, 3)]),
    ("nchw", lambda x: raw.SpaceToDepth(input=x, block_size=3, data_format="NCHW"),
     [c.rand(2, 2, 9, 6)],
     {"reference": ("numpy: TensorFlow's CPU kernel takes NHWC only",
                    lambda x: [x.reshape(2, 2, 3, 3, 2, 3).transpose(0, 3, 5, 1, 2, 4).reshape(2, 18, 3, 2)])})]
BUILDERS["ReverseSequence"] = lambda c: [
    ("seq1", lambda x, l: raw.ReverseSequence(input=x, seq_lengths=l, seq_dim=1, batch_dim=0),
     [c.rand(3, 5, 2), _i(c, "Tlen", [1, 5, 3], np.int64)]),
    ("batch after seq", lambda x, l: raw.ReverseSequence(input=x, seq_lengths=l, seq_dim=0, batch_dim=2),
     [c.rand(4, 3, 3), _i(c, "Tlen", [0, 4, 2], np.int64)])]
BUILDERS["LinSpace"] = lambda c: [
    ("basic", lambda a, b, n: raw.LinSpace(start=a, stop=b, num=n),
     [np.array(0.1, c.T), np.array(0.7, c.T), np.array(7, c.t("Tidx", np.int32))]),
    ("long", lambda a, b, n: raw.LinSpace(start=a, stop=b, num=n),
     [np.array(10, c.T), np.array(-10, c.T), np.array(1031, c.t("Tidx", np.int32))])]
BUILDERS["BroadcastTo"] = lambda c: _one(lambda x, s: raw.BroadcastTo(input=x, shape=s),
                                         c.rand(3, 1), _i(c, "Tidx", [2, 3, 4]))
BUILDERS["Range"] = lambda c: [
    ("up", lambda a, b, d: raw.Range(start=a, limit=b, delta=d),
     [np.array(1, c.t("Tidx")), np.array(11, c.t("Tidx")), np.array(3, c.t("Tidx"))]),
    ("down", lambda a, b, d: raw.Range(start=a, limit=b, delta=d),
     [np.array(5, c.t("Tidx")), np.array(-4, c.t("Tidx")), np.array(-2, c.t("Tidx"))])]


# --- gather, fill, select ---------------------------------------------------
BUILDERS["Fill"] = lambda c: _one(lambda d, v: raw.Fill(dims=d, value=v),
                                  _i(c, "index_type", [2, 3]), np.array(c.rand(1)[0], c.T))
BUILDERS["ZerosLike"] = lambda c: (_variant_cases(c, "ZerosLike") if c.T is Variant else
                                   _one(lambda x: raw.ZerosLike(x=x), c.rand(3, 4)))


# ZerosLike and AddN of DT_VARIANT: TensorLists built from tensors of
# several dtypes (TensorList gradients of Keras' LSTM/GRU loops), stacked
# back for the comparison; the element work runs on the device.
def _variant_cases(c, op):
    def run(x):
        shape = tf.constant(list(x.shape[1:]), tf.int32)
        lst = raw.TensorListFromTensor(tensor=x, element_shape=shape)
        out = raw.ZerosLike(x=lst) if op == "ZerosLike" else raw.AddN(inputs=[lst, lst, lst])
        return raw.TensorListStack(input_handle=out, element_dtype=x.dtype, element_shape=shape)
    return [(f"TensorList of {np.dtype(dt).name}", run, [c.rand(4, 3, dtype=dt)])
            for dt in (np.float32, np.float16, np.float64, np.int64)]


_ADD_N = BUILDERS["AddN"]
BUILDERS["AddN"] = lambda c: _variant_cases(c, "AddN") if c.T is Variant else _ADD_N(c)
BUILDERS["OnesLike"] = lambda c: _one(lambda x: raw.OnesLike(x=x), c.rand(3, 4))
BUILDERS["GatherV2"] = lambda c: [
    ("axis0", lambda p, i, a: raw.GatherV2(params=p, indices=i, axis=a),
     [c.rand(5, 3, dtype=c.t("Tparams")), _i(c, "Tindices", [4, 0, 2, 2]), _i(c, "Taxis", 0)]),
    ("axis1", lambda p, i, a: raw.GatherV2(params=p, indices=i, axis=a),
     [c.rand(2, 5, 3, dtype=c.t("Tparams")), _i(c, "Tindices", [[1, 0], [4, 4]]), _i(c, "Taxis", 1)]),
    ("batch_dims1", lambda p, i, a: raw.GatherV2(params=p, indices=i, axis=a, batch_dims=1),
     [c.rand(2, 5, 3, dtype=c.t("Tparams")), _i(c, "Tindices", [[1, 0, 4], [4, 2, 2]]), _i(c, "Taxis", 1)]),
    ("batch_dims-1", lambda p, i, a: raw.GatherV2(params=p, indices=i, axis=a, batch_dims=-1),
     [c.rand(2, 3, 5, 4, dtype=c.t("Tparams")), _i(c, "Tindices", [[[1, 0], [4, 4], [0, 3]]] * 2),
      _i(c, "Taxis", 2)])]
BUILDERS["Select"] = lambda c: [  # raw_ops.Select names t/e x/y
    ("same", lambda k, t, e: raw.Select(condition=k, x=t, y=e),
     [c.rand(3, 4, dtype=np.bool_), c.rand(3, 4), c.rand(3, 4)]),
    ("rows", lambda k, t, e: raw.Select(condition=k, x=t, y=e),
     [c.rand(3, dtype=np.bool_), c.rand(3, 4), c.rand(3, 4)])]
BUILDERS["SelectV2"] = lambda c: [
    ("same", lambda k, t, e: raw.SelectV2(condition=k, t=t, e=e),
     [c.rand(3, 4, dtype=np.bool_), c.rand(3, 4), c.rand(3, 4)]),
    ("broadcast", lambda k, t, e: raw.SelectV2(condition=k, t=t, e=e),
     [c.rand(4, dtype=np.bool_), c.rand(3, 1), c.rand(3, 4)])]
BUILDERS["OneHot"] = lambda c: [
    ("last", lambda i, d, on, off: raw.OneHot(indices=i, depth=d, on_value=on, off_value=off),
     [_i(c, "TI", [0, 3, -1, 5, 2], np.int64), np.array(4, np.int32), np.array(1, c.T), np.array(0, c.T)]),
    ("axis0", lambda i, d, on, off: raw.OneHot(indices=i, depth=d, on_value=on, off_value=off, axis=0),
     [_i(c, "TI", [[0, 1], [2, 3]], np.int64), np.array(3, np.int32), np.array(2, c.T), np.array(-1, c.T)])]


# --- variables and optimizers (resource ops) ---------------------------------
# fn creates the variable(s) under the current device scope, runs the op,
# and returns the variables' values.
def _var_update(name):
    f = getattr(raw, name)

    def build(c):
        def fn(init, delta):
            v = tf.Variable(init)
            f(resource=v.handle, value=delta)
            return v.read_value()
        dtype = c.t("dtype", c.T)
        if dtype == np.int32:
            # Eager TensorFlow keeps int32 variables on the host whatever
            # the device scope (as for GPUs): strict placement refuses
            # them, so the kernel is reached only from C
            # (tests/ops/test_variables.c).
            pytest.skip("eager TensorFlow keeps int32 variables on the host; "
                        "tests/ops/test_variables.c covers this kernel")
        return _one(fn, c.rand(3, 4, dtype=dtype), c.rand(3, 4, dtype=dtype))
    return build


BUILDERS["AssignAddVariableOp"] = _var_update("AssignAddVariableOp")
BUILDERS["AssignSubVariableOp"] = _var_update("AssignSubVariableOp")


def _assign(c):
    def fn(init, value):
        v = tf.Variable(init)
        raw.AssignVariableOp(resource=v.handle, value=value)
        return raw.ReadVariableOp(resource=v.handle, dtype=v.dtype)
    dtype = c.t("dtype", c.T)
    if dtype == np.int32:
        pytest.skip("eager TensorFlow keeps int32 variables on the host; "
                    "tests/ops/test_variables.c covers this kernel")
    return _one(fn, c.rand(3, 4, dtype=dtype), c.rand(3, 4, dtype=dtype))


BUILDERS["AssignVariableOp"] = _assign
BUILDERS["ReadVariableOp"] = _assign


def _resource_gather(c):
    def fn(init, idx):
        v = tf.Variable(init)
        return raw.ResourceGather(resource=v.handle, indices=idx, dtype=v.dtype)

    def batched(init, idx):
        v = tf.Variable(init)
        return raw.ResourceGather(resource=v.handle, indices=idx, dtype=v.dtype, batch_dims=1)
    dt = c.t("dtype")
    return [("basic", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [4, 0, 2, 2])]),
            ("batch_dims1", batched, [c.rand(2, 5, 3, dtype=dt), _i(c, "Tindices", [[1, 4, 4], [0, 3, 1]])])]


BUILDERS["ResourceGather"] = _resource_gather


def _resource_gather_nd(c):
    def fn(init, idx):
        v = tf.Variable(init)
        return raw.ResourceGatherNd(resource=v.handle, indices=idx, dtype=v.dtype)
    dt = c.t("dtype")
    return [("rows", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [[4], [0], [2]])]),
            ("elements", fn, [c.rand(4, 3, 2, dtype=dt), _i(c, "Tindices", [[[3, 1], [0, 2]], [[1, 1], [3, 0]]])])]


BUILDERS["ResourceGatherNd"] = _resource_gather_nd


# Scatters with duplicate indices: the device applies them in index order,
# as TensorFlow's CPU kernel, so even float sums must match closely.
def _scatter(name):
    f = getattr(raw, name)

    def build(c):
        def fn(init, idx, upd):
            v = tf.Variable(init)
            f(resource=v.handle, indices=idx, updates=upd)
            return v.read_value()
        dt = c.t("dtype")
        # Div: no zero divisors (TensorFlow's CPU kernel refuses them).
        upd = c.nonzero if name == "ResourceScatterDiv" else c.rand
        return [("rows", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [4, 0, 2]), upd(3, 3, dtype=dt)]),
                ("duplicates", fn, [c.rand(6, 4, dtype=dt), _i(c, "Tindices", [[1, 5, 1], [1, 0, 5]]),
                                    upd(2, 3, 4, dtype=dt)]),
                ("scalar update", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [3, 1, 3]),
                                       upd(1, dtype=dt).reshape(())])]
    return build


for _n in ["ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterUpdate", "ResourceScatterMul",
           "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax"]:
    BUILDERS[_n] = _scatter(_n)


def _scatter_nd(name):
    f = getattr(raw, name)

    def build(c):
        def fn(init, idx, upd):
            v = tf.Variable(init)
            f(ref=v.handle, indices=idx, updates=upd)
            return v.read_value()
        dt = c.t("T")
        return [("rows", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [[4], [0], [4]]), c.rand(3, 3, dtype=dt)]),
                ("elements", fn, [c.rand(4, 3, dtype=dt), _i(c, "Tindices", [[3, 1], [0, 2], [3, 1]]),
                                  c.rand(3, dtype=dt)])]
    return build


for _n in ["ResourceScatterNdAdd", "ResourceScatterNdSub", "ResourceScatterNdUpdate"]:
    BUILDERS[_n] = _scatter_nd(_n)


def _tensor_scatter(name):
    f = getattr(raw, name)

    def build(c):
        dt = c.t("T")
        if name == "ScatterNd":
            def fn(idx, upd, shape):
                return f(indices=idx, updates=upd, shape=shape)
            shape = lambda *d: _i(c, "Tindices", list(d))  # noqa: E731
            return [("rows", fn, [_i(c, "Tindices", [[4], [0], [4]]), c.rand(3, 3, dtype=dt), shape(5, 3)]),
                    ("elements", fn, [_i(c, "Tindices", [[3, 1], [0, 2], [3, 1]]), c.rand(3, dtype=dt),
                                      shape(4, 3)]),
                    ("2-D batch", fn, [_i(c, "Tindices", [[[1], [2]], [[0], [1]]]), c.rand(2, 2, 4, dtype=dt),
                                       shape(3, 4)])]

        def fn(x, idx, upd):
            return f(**{"input" if name == "ScatterNdNonAliasingAdd" else "tensor": x},
                     indices=idx, updates=upd)
        # Duplicate rows: applied in index order on both devices (the CPU's
        # order; Update keeps the last).
        return [("rows", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [[4], [0], [4]]), c.rand(3, 3, dtype=dt)]),
                ("elements", fn, [c.rand(4, 3, dtype=dt), _i(c, "Tindices", [[3, 1], [0, 2], [3, 1]]),
                                  c.rand(3, dtype=dt)]),
                ("many rows", fn, [c.rand(300, 7, dtype=dt), _i(c, "Tindices", [[(i * 37) % 300] for i in range(600)]),
                                   c.rand(600, 7, dtype=dt)])]
    return build


for _n in ["TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMin",
           "TensorScatterMax", "ScatterNdNonAliasingAdd", "ScatterNd"]:
    BUILDERS[_n] = _tensor_scatter(_n)
def _top_k(c):
    def fn(x, k):
        return raw.TopKV2(input=x, k=k)
    ties = np.round(c.rand(6, 40) * 2).astype(c.T)
    return [("rows", fn, [c.rand(4, 33), np.array(5, np.int32)]),
            ("ties, k = n (tf.sort)", fn, [ties, np.array(40, np.int32)]),
            ("long row", fn, [c.rand(2, 1500), np.array(700, np.int32)]),
            ("3-D, k = 1", fn, [c.rand(2, 3, 9), np.array(1, np.int32)]),
            ("k = 0", fn, [c.rand(3, 4), np.array(0, np.int32)])]


BUILDERS["TopKV2"] = _top_k


def _where(c):
    def fn(x):
        return raw.Where(condition=x)
    mask = c.rng.random((6, 7, 5)) < 0.3
    x = mask if c.T == np.bool_ else np.where(mask, c.rand(6, 7, 5), 0).astype(c.T)
    return [("3-D", fn, [x]), ("none true", fn, [np.zeros((4, 9), c.T)]),
            ("long", fn, [(c.rng.random(20000) < 0.5).astype(c.T)]),
            ("empty", fn, [np.zeros((0, 3), c.T)])]


BUILDERS["Where"] = _where


def _in_top_k(c):
    def fn(p, t, k):
        return raw.InTopKV2(predictions=p, targets=t, k=k)
    it = c.t("T")
    ties = np.round(c.rand(40, 12, dtype=np.float32))
    targets = np.arange(40, dtype=it) % 12
    return [("k=5 of 100", fn, [c.rand(16, 100, dtype=np.float32), np.arange(16, dtype=it) * 5, np.array(5, it)]),
            ("ties at the boundary", fn, [ties, targets, np.array(3, it)]),
            ("edges", fn, [np.array([[0.1, 0.9, 0.5], [np.nan, 0.2, 0.3], [0.4, 0.3, np.inf], [1.0, 2.0, 3.0]],
                                    np.float32), np.array([1, 0, 2, 5], it), np.array(2, it)])]


BUILDERS["InTopKV2"] = _in_top_k
BUILDERS["GatherNd"] = lambda c: [
    ("rows", lambda p, i: raw.GatherNd(params=p, indices=i),
     [c.rand(5, 3, dtype=c.t("Tparams")), _i(c, "Tindices", [[4], [0], [2]])]),
    ("elements", lambda p, i: raw.GatherNd(params=p, indices=i),
     [c.rand(4, 3, 2, dtype=c.t("Tparams")), _i(c, "Tindices", [[[3, 1], [0, 2]], [[1, 1], [3, 0]]])])]


def _strided_slice_assign(c):
    def assign(**attrs):
        def fn(init, b, e, s, value):
            v = tf.Variable(init)
            raw.ResourceStridedSliceAssign(ref=v.handle, begin=b, end=e, strides=s, value=value, **attrs)
            return v.read_value()
        return fn
    dt = c.T
    return [("strided", assign(), [c.rand(5, 6, dtype=dt), _i(c, "Index", [1, 0]), _i(c, "Index", [4, 6]),
                                   _i(c, "Index", [1, 2]), c.rand(3, 3, dtype=dt)]),
            ("negative stride", assign(), [c.rand(5, 6, dtype=dt), _i(c, "Index", [4, 5]), _i(c, "Index", [0, 0]),
                                           _i(c, "Index", [-2, -3]), c.rand(2, 2, dtype=dt)]),
            ("broadcast", assign(), [c.rand(4, 5, dtype=dt), _i(c, "Index", [1, 1]), _i(c, "Index", [3, 5]),
                                     _i(c, "Index", [1, 1]), c.rand(4, dtype=dt)]),
            ("shrink", assign(shrink_axis_mask=1), [c.rand(4, 5, dtype=dt), _i(c, "Index", [2, 0]),
                                                     _i(c, "Index", [3, 5]), _i(c, "Index", [1, 1]),
                                                     c.rand(5, dtype=dt)])]


BUILDERS["ResourceStridedSliceAssign"] = _strided_slice_assign


def _segment(name):
    f = getattr(raw, name)

    def build(c):
        def fn(data, ids, n):
            return f(data=data, segment_ids=ids, num_segments=n)
        data = c.pos if name == "UnsortedSegmentProd" else c.rand
        # Negative ids are dropped on both devices (the CPU refuses ids past
        # num_segments, the OPENCL kernel drops them as TensorFlow's GPU).
        return [("rows", fn, [data(7, 3), _i(c, "Tindices", [0, 3, 3, -1, 0, 1, 3]),
                              np.array(5, c.t("Tnumsegments", np.int32))]),
                ("many", fn, [data(300), _i(c, "Tindices", list(np.arange(300) % 7)),
                              np.array(7, c.t("Tnumsegments", np.int32))]),
                ("2-D ids", fn, [data(3, 4, 2), _i(c, "Tindices", [[0, 1, 1, 2], [2, 2, 0, 0], [1, 1, 1, 0]]),
                                 np.array(3, c.t("Tnumsegments", np.int32))])]
    return build


for _n in ["UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"]:
    BUILDERS[_n] = _segment(_n)


def _apply(name, slots, scalars, grad="grad", **attrs):
    """ResourceApply<name>: `slots` variables besides var (accumulators,
    initialised positive), `scalars` hyper-parameters, then `grad`."""
    f = getattr(raw, name)

    def build(c):
        def fn(var0, *rest):
            n = len(slots)
            vs = [tf.Variable(var0)] + [tf.Variable(r) for r in rest[:n]]
            kw = {"var": vs[0].handle}
            kw.update({s: v.handle for s, v in zip(slots, vs[1:])})
            kw.update(dict(zip(scalars, rest[n:n + len(scalars)])))
            kw[grad] = rest[-1]
            f(**kw, **attrs)
            return [v.read_value() for v in vs]
        scalar_values = {"lr": 0.1, "alpha": 0.1, "momentum": 0.9, "beta1_power": 0.9 ** 3,
                         "beta2_power": 0.999 ** 3, "beta1": 0.9, "beta2": 0.999,
                         "epsilon": 1e-7, "rho": 0.9, "delta": 0.5, "l1": 0.0, "l2": 0.0,
                         "lr_power": -0.5, "l2_shrinkage": 0.0}
        inputs = [c.rand(3, 4)] + [c.pos(3, 4) for _ in slots]
        inputs += [np.array(scalar_values[s], c.T) for s in scalars]
        inputs.append(c.rand(3, 4))
        return _one(fn, *inputs)
    return build


BUILDERS["ResourceApplyGradientDescent"] = _apply("ResourceApplyGradientDescent", [], ["alpha"], grad="delta")
BUILDERS["ResourceApplyMomentum"] = _apply("ResourceApplyMomentum", ["accum"], ["lr", "momentum"])
BUILDERS["ResourceApplyKerasMomentum"] = _apply("ResourceApplyKerasMomentum", ["accum"], ["lr", "momentum"])
BUILDERS["ResourceApplyAdam"] = _apply(
    "ResourceApplyAdam", ["m", "v"], ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"])
BUILDERS["ResourceApplyAdamWithAmsgrad"] = _apply(
    "ResourceApplyAdamWithAmsgrad", ["m", "v", "vhat"],
    ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"])
BUILDERS["ResourceApplyRMSProp"] = _apply("ResourceApplyRMSProp", ["ms", "mom"], ["lr", "rho", "momentum", "epsilon"])
BUILDERS["ResourceApplyCenteredRMSProp"] = _apply(
    "ResourceApplyCenteredRMSProp", ["mg", "ms", "mom"], ["lr", "rho", "momentum", "epsilon"])
BUILDERS["ResourceApplyAdagrad"] = _apply("ResourceApplyAdagrad", ["accum"], ["lr"])
BUILDERS["ResourceApplyAdagradV2"] = _apply("ResourceApplyAdagradV2", ["accum"], ["lr", "epsilon"])
BUILDERS["ResourceApplyAdadelta"] = _apply(
    "ResourceApplyAdadelta", ["accum", "accum_update"], ["lr", "rho", "epsilon"])
BUILDERS["ResourceApplyAdaMax"] = _apply(
    "ResourceApplyAdaMax", ["m", "v"], ["beta1_power", "lr", "beta1", "beta2", "epsilon"])


# Where TensorFlow's CPU kernel is not the reference.
# (op, numpy type) -> (reason, numpy function of the inputs)
# --- random -----------------------------------------------------------------
# Fixed key/counter/seeds: the stateless ops are functions of them, and a
# seeded stateful op starts the same sequence on each device.
_KEY = np.array([0x123456789A], np.uint64)
_COUNTER = np.array([5, 0x4123456789AB], np.uint64)
_ALG = np.array(1, np.int32)


def _stateless(name):
    f = getattr(raw, name)

    def build(c):
        dt = tf.as_dtype(c.t("dtype"))
        return [(f"shape {s}", lambda shape, k, n, a: f(shape=shape, key=k, counter=n, alg=a, dtype=dt),
                 [np.array(s, np.int32), _KEY, _COUNTER, _ALG]) for s in ([3, 7], [1031], [0])]
    return build


def _uniform_int(c):
    T = c.t("dtype")
    return [("ints", lambda shape, k, n, a, lo, hi: raw.StatelessRandomUniformIntV2(
        shape=shape, key=k, counter=n, alg=a, minval=lo, maxval=hi),
        [np.array([5, 7], np.int32), _KEY, _COUNTER, _ALG, np.array(-5, T), np.array(17, T)])]


def _stateful(name):
    f = getattr(raw, name)

    def build(c):
        dt = tf.as_dtype(c.t("dtype"))
        return [("seeded", lambda shape: f(shape=shape, seed=7, seed2=17, dtype=dt),
                 [np.array([3, 7], np.int32)])]
    return build


def _key_counter(name):
    f = getattr(raw, name)
    return lambda c: [(f"seed {t.__name__}", lambda seed: f(seed=seed), [np.array([3, -4], t)])
                      for t in (np.int32, np.int64)]


for _n in ("StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"):
    BUILDERS[_n] = _stateless(_n)
BUILDERS["StatelessRandomUniformIntV2"] = _uniform_int
for _n in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
    BUILDERS[_n] = _stateful(_n)
for _n in ("StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg"):
    BUILDERS[_n] = _key_counter(_n)
BUILDERS["StatelessRandomGetAlg"] = lambda c: [("alg", lambda: raw.StatelessRandomGetAlg(), [])]


# --- convolution, pooling, batch normalisation -------------------------------
# Every geometry runs in both layouts the op takes: the NHWC tensors are
# drawn, then transposed for NCHW (attributes reordered to match).
#
# TensorFlow's CPU kernels refuse some of these cases, depending on the op
# and the dtype (oneDNN takes float32 NCHW where Eigen's kernels do not):
# NCHW for MaxPool, MaxPoolGrad, AvgPool(Grad) and half Conv2D/backprops,
# FusedBatchNormGradV3 inference in NCHW, and dilations > 1 in the
# convolution gradients. Such a case carries a "fallback" reference, used
# only when the CPU refuses it with one of CPU_REFUSALS: TensorFlow's own
# CPU kernel on the NHWC transposes of the inputs (result transposed back),
# and for dilations the same convolution with the filter dilated by zero
# taps (dilation 1; the filter gradient then keeps every dilation-th tap).
CPU_REFUSALS = (
    "only supports NHWC",
    "only supports NDHWC",
    "only supportsNDHWC",  # MaxPool3DGradGrad's CPU kernel (sic)
    "only supports the NHWC tensor format",
    "only support NHWC tensor format",
    "do not yet support dilation rates larger than 1",
    "only supported for NHWC format",
    "does not yet support dilation rates larger than 1",
    "only supports dilated rates of 1",
    # Pad and Slice of more than 8 dims: the plugin takes any rank.
    "inputs rank not in [0,8]",
    "SliceOp : Unhandled input dimensions",
)


def _nchw(a):
    return np.ascontiguousarray(np.transpose(a, (0, 3, 1, 2)))


def _nhwc(a):
    return np.ascontiguousarray(np.transpose(a, (0, 2, 3, 1)))


def _fmt(a, fmt):
    return _nchw(a) if fmt == "NCHW" else a


def _fmt4(nhwc, fmt):
    """A per-dimension attribute (strides, ksize, dilations, a shape) given
    in NHWC order, in `fmt`'s order."""
    n, h, w, c = nhwc
    return [n, c, h, w] if fmt == "NCHW" else [n, h, w, c]


def _nhwc4(v, fmt):
    """The inverse of _fmt4."""
    v = [int(a) for a in v]
    return [v[0], v[2], v[3], v[1]] if fmt == "NCHW" else v


def _explicit(pads, fmt):
    """((top, bottom), (left, right)) as explicit_paddings in `fmt`'s order."""
    (t, b), (l, r) = pads
    return [0, 0, 0, 0, t, b, l, r] if fmt == "NCHW" else [0, 0, t, b, l, r, 0, 0]


def _out_size(n, k, s, d, padding, pads=(0, 0)):
    ke = (k - 1) * d + 1
    if padding == "SAME":
        return -(-n // s)
    if padding == "VALID":
        return (n - ke) // s + 1
    return (n + pads[0] + pads[1] - ke) // s + 1


def _nhwc_attrs(attrs):
    """The same op's attributes for NHWC (and dilation 1, filters dilated)."""
    fmt = attrs.get("data_format", "NHWC")
    a = dict(attrs, data_format="NHWC")
    for k in ("ksize", "strides"):
        if k in a:
            a[k] = _nhwc4(a[k], fmt)
    if "dilations" in a:
        a["dilations"] = [1, 1, 1, 1]
    if "explicit_paddings" in a and fmt == "NCHW":
        e = a["explicit_paddings"]
        a["explicit_paddings"] = [0, 0, e[4], e[5], e[6], e[7], 0, 0]
    return a


def _via_nhwc(make, attrs, kinds, images_out=(0,)):
    """A fallback reference: `make(attrs)` is the case's op call; run it on
    the CPU in NHWC. kinds, per input: "image" (transposed), "shape" (a 4-D
    shape, reordered), "filter" (dilated by zero taps), "filter_sizes" (the
    dilated filter's size; the result keeps every dilation-th tap) or None."""
    fmt = attrs.get("data_format", "NHWC")
    dil = _nhwc4(attrs.get("dilations", [1, 1, 1, 1]), fmt)
    dh, dw = dil[1], dil[2]
    dilated = dh > 1 or dw > 1
    fn = make(_nhwc_attrs(attrs))
    why = ("TensorFlow's CPU kernel " + ("on the NHWC transposes, transposed back" if fmt == "NCHW" else "")
           + (" and " if fmt == "NCHW" and dilated else "")
           + ("with the filter dilated by zero taps (dilation 1)" if dilated else ""))

    def ref(*inputs):
        args, sub = [], False
        for kind, x in zip(kinds, inputs):
            if kind == "image" and fmt == "NCHW":
                x = _nhwc(x)
            elif kind == "shape":
                x = np.array(_nhwc4(x, fmt), x.dtype)
            elif kind == "filter" and dilated:
                w = np.zeros(((x.shape[0] - 1) * dh + 1, (x.shape[1] - 1) * dw + 1) + x.shape[2:], x.dtype)
                w[::dh, ::dw] = x
                x = w
            elif kind == "filter_sizes" and dilated:
                x = np.array([(x[0] - 1) * dh + 1, (x[1] - 1) * dw + 1, x[2], x[3]], x.dtype)
                sub = True
            args.append(tf.constant(x))
        with tf.device("/CPU:0"):
            out = fn(*args)
        out = [t.numpy() for t in (out if isinstance(out, (list, tuple)) else [out])]
        if sub:
            out = [o[::dh, ::dw] for o in out]
        return [_nchw(o) if i in images_out and fmt == "NCHW" else o for i, o in enumerate(out)]
    return why, ref


def _call(name, *argnames):
    """make(attrs) -> fn(*tensors) calling raw.<name> with those attrs."""
    f = getattr(raw, name)
    return lambda attrs: (lambda *t: f(**dict(zip(argnames, t)), **attrs))


# (label, data_format, padding, strides (h, w), dilations (h, w),
#  explicit paddings ((top, bottom), (left, right)), input (H, W), filter (KH, KW))
CONV_GEOMETRIES = [
    ("NHWC SAME", "NHWC", "SAME", (1, 1), (1, 1), None, (5, 6), (3, 3)),
    ("NHWC VALID s2", "NHWC", "VALID", (2, 2), (1, 1), None, (7, 6), (3, 2)),
    ("NHWC SAME s2x1 d1x2", "NHWC", "SAME", (2, 1), (1, 2), None, (6, 7), (2, 3)),
    ("NHWC VALID d2", "NHWC", "VALID", (1, 1), (2, 2), None, (7, 7), (3, 3)),
    ("NHWC SAME s2 d2", "NHWC", "SAME", (2, 2), (2, 2), None, (6, 7), (2, 3)),
    ("NHWC EXPLICIT s1x2", "NHWC", "EXPLICIT", (1, 2), (1, 1), ((1, 2), (0, 1)), (5, 6), (3, 3)),
    ("NHWC EXPLICIT s2", "NHWC", "EXPLICIT", (2, 2), (1, 1), ((2, 0), (1, 1)), (5, 6), (3, 3)),
    ("NHWC 1x1", "NHWC", "VALID", (1, 1), (1, 1), None, (4, 5), (1, 1)),
    ("NCHW SAME s2", "NCHW", "SAME", (2, 2), (1, 1), None, (6, 5), (3, 3)),
    ("NCHW VALID d2x1", "NCHW", "VALID", (1, 1), (2, 1), None, (7, 6), (2, 3)),
    ("NCHW EXPLICIT", "NCHW", "EXPLICIT", (1, 1), (1, 1), ((0, 1), (2, 1)), (4, 5), (2, 2)),
    ("NCHW 1x1", "NCHW", "VALID", (1, 1), (1, 1), None, (4, 5), (1, 1)),
]


# bfloat16 results compared in float32 (numpy has no bfloat16 arithmetic):
# computed in float and rounded once on OPENCL, by TensorFlow's CPU kernel
# in float32 from the same inputs and rounded once too; summed in another
# order, they sit within an ulp (2^-7 relative) of each other.
_BF16_TOL = dict(rtol=1.6e-2, atol=1.6e-2)


def _as_f32(fn):
    """fn with its result cast to float32 (on the device that ran it)."""
    return lambda *t: tf.cast(fn(*t), tf.float32)


def _bf16_ref(ref):
    """A reference in float32 from bfloat16 inputs, rounded to bfloat16 once
    and returned as float32 (what _as_f32 compares against)."""
    def run(*inputs):
        up = [a.astype(np.float32) if getattr(a, "dtype", None) == BF16 else a for a in inputs]
        return [np.asarray(o).astype(BF16).astype(np.float32) for o in ref(*up)]
    return run


def _split_groups(kinds, inputs, groups, fmt):
    """Per-group inputs of a grouped convolution: images split along their
    channels, filters along their output channels, a shape argument (input
    or filter sizes) with its channel count divided."""
    caxis = 1 if fmt.startswith("NC") else -1
    per = []
    for g in range(groups):
        args = []
        for kind, x in zip(kinds, inputs):
            if kind == "image":
                args.append(np.split(x, groups, axis=caxis)[g])
            elif kind == "filter":
                args.append(np.split(x, groups, axis=-1)[g])
            elif kind == "shape":
                v = np.array(x)
                v[caxis] //= groups
                args.append(v)
            elif kind == "filter_sizes":
                v = np.array(x)
                v[-1] //= groups
                args.append(v)
            else:
                args.append(x)
        per.append(args)
    return per


def _grouped_ref(ref, kinds, groups, fmt, out_kind):
    """`ref` (an ungrouped reference) run group by group, the results
    concatenated: along the channels of an image, the output channels of a
    filter gradient."""
    caxis = 1 if fmt.startswith("NC") else -1

    def run(*inputs):
        outs = [ref(*args)[0] for args in _split_groups(kinds, inputs, groups, fmt)]
        return [np.concatenate(outs, axis=-1 if out_kind == "filter" else caxis)]
    return run


def _conv2d_case(name, c, label, fmt, pad, strides, dil, ex, hw, khw, cin=3, cout=4, fdepth=None):
    """One Conv2D-family case: (label, fn, inputs, opts). fdepth < cin makes
    a grouped convolution; bfloat16 compares in float32 against TensorFlow's
    float32 CPU kernel rounded once."""
    depthwise = name.startswith("Depthwise")
    if name.endswith("BackpropInput"):
        make, kinds = _call(name, "input_sizes", "filter", "out_backprop"), ("shape", "filter", "image")
    elif name.endswith("BackpropFilter"):
        make, kinds = _call(name, "input", "filter_sizes", "out_backprop"), ("image", "filter_sizes", "image")
    else:
        make, kinds = _call(name, "input", "filter"), ("image", "filter")
    (sh, sw), (dh, dw), (H, W), (KH, KW) = strides, dil, hw, khw
    fdepth = fdepth or cin
    groups = cin // fdepth
    w = c.rand(KH, KW, fdepth, 2 if depthwise else cout)
    if depthwise:
        cout = 2 * cin
    OH = _out_size(H, KH, sh, dh, pad, ex[0] if ex else (0, 0))
    OW = _out_size(W, KW, sw, dw, pad, ex[1] if ex else (0, 0))
    x = _fmt(c.rand(2, H, W, cin), fmt)
    dy = _fmt(c.rand(2, OH, OW, cout), fmt)
    attrs = dict(strides=_fmt4([1, sh, sw, 1], fmt), padding=pad,
                 dilations=_fmt4([1, dh, dw, 1], fmt), data_format=fmt)
    if ex:
        attrs["explicit_paddings"] = _explicit(ex, fmt)
    if name.endswith("BackpropInput"):
        inputs = [np.array(x.shape, np.int32), w, dy]
    elif name.endswith("BackpropFilter"):
        inputs = [x, np.array(w.shape, np.int32), dy]
    else:
        inputs = [x, w]
    out_kind = "filter" if name.endswith("BackpropFilter") else "image"
    images_out = () if out_kind == "filter" else (0,)  # a filter is HWIO in both layouts
    why, ref = _via_nhwc(make, attrs, kinds, images_out)
    why = why.strip()
    if groups > 1:
        why, ref = f"{why or 'TensorFlow CPU kernel'} per group ({groups} groups)", \
            _grouped_ref(ref, kinds, groups, fmt, out_kind)
    fn = make(attrs)
    if c.T == BF16:
        return (label, _as_f32(fn), inputs,
                {"reference": (f"float32 {why or 'TensorFlow CPU kernel'}, rounded to bfloat16",
                               _bf16_ref(ref)), "tol": _BF16_TOL})
    if groups > 1:
        return (label, fn, inputs, {"reference": (why, ref)})
    return (label, fn, inputs, {"fallback": (why, ref)})


def _conv(name):
    """Conv2D / DepthwiseConv2dNative and their input and filter gradients
    over CONV_GEOMETRIES: 2 images, 3 input channels, 4 output channels
    (depthwise: channel multiplier 2).

    DepthwiseConv2dNative* take equal row and column strides only, and no
    dilations (TensorFlow's Eigen CPU and GPU kernels and OPENCL alike answer
    INVALID_ARGUMENT / UNIMPLEMENTED; tf.nn.depthwise_conv2d dilates through
    SpaceToBatchND instead): those geometries are left out for them. (The
    oneDNN float32 CPU kernel does take dilations, but its backprops with
    dilations kill the process, SIGILL, in TensorFlow 2.19.1.)

    Conv2D and its gradients also run grouped (2 and 3 groups, both
    layouts; TensorFlow's GPU kernels take them, its CPU kernels only
    through oneDNN): compared with its CPU kernel group by group."""
    depthwise = name.startswith("Depthwise")

    def build(c):
        cases = []
        for label, fmt, pad, st, dl, ex, hw, khw in CONV_GEOMETRIES:
            if depthwise and (st[0] != st[1] or dl[0] > 1 or dl[1] > 1):
                continue
            cases.append(_conv2d_case(name, c, label, fmt, pad, st, dl, ex, hw, khw))
        if not depthwise:
            cases.append(_conv2d_case(name, c, "NHWC 2 groups", "NHWC", "SAME", (1, 1), (1, 1), None,
                                      (5, 6), (3, 3), cin=4, cout=6, fdepth=2))
            cases.append(_conv2d_case(name, c, "NCHW 3 groups s2", "NCHW", "VALID", (2, 2), (1, 1), None,
                                      (7, 6), (3, 2), cin=6, cout=3, fdepth=2))
            cases.append(_conv2d_case(name, c, "NHWC 3 groups d2 EXPLICIT", "NHWC", "EXPLICIT", (1, 2),
                                      (2, 1), ((1, 2), (0, 1)), (6, 7), (2, 3), cin=3, cout=6, fdepth=1))
        return cases
    return build


for _n in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
           "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"):
    BUILDERS[_n] = _conv(_n)


# --- 3-D convolutions ---------------------------------------------------------
def _ncdhw(a):
    return np.ascontiguousarray(np.transpose(a, (0, 4, 1, 2, 3)))


def _ndhwc(a):
    return np.ascontiguousarray(np.transpose(a, (0, 2, 3, 4, 1)))


def _fmt5(ndhwc, fmt):
    """A per-dimension attribute or shape given in NDHWC order, in `fmt`'s."""
    n, d, h, w, ch = ndhwc
    return [n, ch, d, h, w] if fmt == "NCDHW" else [n, d, h, w, ch]


def _ndhwc5(v, fmt):
    v = [int(a) for a in v]
    return [v[0], v[2], v[3], v[4], v[1]] if fmt == "NCDHW" else v


def _via_ndhwc(make, attrs, kinds, images_out=(0,)):
    """_via_nhwc for 3-D: TensorFlow's CPU kernel in NDHWC on the
    transposes, dilations as filters dilated by zero taps (the filter
    gradient then keeps every dilation-th tap)."""
    fmt = attrs.get("data_format", "NDHWC")
    dil = _ndhwc5(attrs.get("dilations", [1] * 5), fmt)[1:4]
    dilated = any(d > 1 for d in dil)
    a = dict(attrs, data_format="NDHWC", strides=_ndhwc5(attrs["strides"], fmt),
             dilations=[1] * 5)
    fn = make(a)
    why = ("TensorFlow's CPU kernel" + (" on the NDHWC transposes, transposed back" if fmt == "NCDHW" else "")
           + (" with the filter dilated by zero taps (dilation 1)" if dilated else ""))

    def ref(*inputs):
        args, sub = [], False
        for kind, x in zip(kinds, inputs):
            if kind == "image" and fmt == "NCDHW":
                x = _ndhwc(x)
            elif kind == "shape":
                x = np.array(_ndhwc5(x, fmt), x.dtype)
            elif kind == "filter" and dilated:
                w = np.zeros(tuple((x.shape[i] - 1) * dil[i] + 1 for i in range(3)) + x.shape[3:], x.dtype)
                w[::dil[0], ::dil[1], ::dil[2]] = x
                x = w
            elif kind == "filter_sizes" and dilated:
                x = np.array([(x[i] - 1) * dil[i] + 1 for i in range(3)] + list(x[3:]), x.dtype)
                sub = True
            args.append(tf.constant(x))
        with tf.device("/CPU:0"):
            out = fn(*args)
        out = [t.numpy() for t in (out if isinstance(out, (list, tuple)) else [out])]
        if sub:
            out = [o[::dil[0], ::dil[1], ::dil[2]] for o in out]
        return [_ncdhw(o) if i in images_out and fmt == "NCDHW" else o for i, o in enumerate(out)]
    return why, ref


# (label, data_format, padding, strides (d, h, w), dilations (d, h, w),
#  input (D, H, W), filter (KD, KH, KW), cin, cout, filter depth)
CONV3D_GEOMETRIES = [
    ("NDHWC SAME", "NDHWC", "SAME", (1, 1, 1), (1, 1, 1), (4, 5, 6), (3, 3, 2), 3, 4, 3),
    ("NDHWC VALID s2x1x2", "NDHWC", "VALID", (2, 1, 2), (1, 1, 1), (5, 6, 5), (2, 3, 3), 2, 5, 2),
    ("NDHWC SAME d1x2x1", "NDHWC", "SAME", (1, 1, 2), (1, 2, 1), (4, 6, 5), (2, 2, 3), 3, 4, 3),
    ("NDHWC 1x1x1", "NDHWC", "VALID", (1, 1, 1), (1, 1, 1), (3, 4, 5), (1, 1, 1), 4, 3, 4),
    ("NCDHW SAME s2", "NCDHW", "SAME", (2, 2, 2), (1, 1, 1), (5, 4, 6), (3, 2, 3), 3, 4, 3),
    ("NCDHW VALID d2", "NCDHW", "VALID", (1, 1, 1), (2, 2, 2), (5, 6, 6), (2, 2, 3), 2, 3, 2),
    ("NDHWC 2 groups", "NDHWC", "SAME", (1, 2, 1), (1, 1, 1), (4, 5, 5), (2, 3, 2), 4, 6, 2),
    ("NCDHW 3 groups", "NCDHW", "VALID", (1, 1, 2), (1, 1, 1), (4, 5, 6), (2, 2, 2), 3, 6, 1),
]


def _conv3d(name):
    """Conv3D and its V2 gradients over CONV3D_GEOMETRIES, 2 images.
    TensorFlow's CPU kernels take NDHWC without dilations and no groups:
    the others are compared with them on transposes, zero-dilated filters
    and group by group."""
    if name.endswith("InputV2"):
        kinds = ("shape", "filter", "image")
        argnames = ("input_sizes", "filter", "out_backprop")
    elif name.endswith("FilterV2"):
        kinds = ("image", "filter_sizes", "image")
        argnames = ("input", "filter_sizes", "out_backprop")
    else:
        kinds = ("image", "filter")
        argnames = ("input", "filter")
    make = _call(name, *argnames)
    out_kind = "filter" if name.endswith("FilterV2") else "image"

    def build(c):
        cases = []
        for label, fmt, pad, st, dl, dhw, k, cin, cout, fd in CONV3D_GEOMETRIES:
            groups = cin // fd
            w = c.rand(*k, fd, cout)
            outs = [_out_size(dhw[i], k[i], st[i], dl[i], pad) for i in range(3)]
            x = c.rand(2, *dhw, cin)
            dy = c.rand(2, *outs, cout)
            if fmt == "NCDHW":
                x, dy = _ncdhw(x), _ncdhw(dy)
            attrs = dict(strides=_fmt5([1, *st, 1], fmt), padding=pad,
                         dilations=_fmt5([1, *dl, 1], fmt), data_format=fmt)
            if name.endswith("InputV2"):
                # Tshape: int32, and int64 for one geometry.
                inputs = [np.array(x.shape, np.int64 if label == "NDHWC SAME" else np.int32), w, dy]
            elif name.endswith("FilterV2"):
                inputs = [x, np.array(w.shape, np.int32), dy]
            else:
                inputs = [x, w]
            why, ref = _via_ndhwc(make, attrs, kinds, () if out_kind == "filter" else (0,))
            if groups > 1:
                why, ref = f"{why} per group ({groups} groups)", _grouped_ref(ref, kinds, groups, fmt, out_kind)
            fn = make(attrs)
            if c.T == BF16:
                cases.append((label, _as_f32(fn), inputs,
                              {"reference": (f"float32 {why}, rounded to bfloat16", _bf16_ref(ref)),
                               "tol": _BF16_TOL}))
            elif groups > 1 or fmt == "NCDHW" or max(dl) > 1 or c.T == np.float16:
                # Half: computed in float32 on the CPU too (its half
                # kernel rounds on its own schedule), rounded once.
                if c.T == np.float16:
                    up = ref
                    ref = lambda *a, up=up: [o.astype(np.float16) for o in up(
                        *[v.astype(np.float32) if getattr(v, "dtype", None) == np.float16 else v for v in a])]
                cases.append((label, fn, inputs, {"reference": (why, ref)}))
            else:
                cases.append((label, fn, inputs))
        return cases
    return build


for _n in ("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"):
    BUILDERS[_n] = _conv3d(_n)


# --- _FusedConv2D ---------------------------------------------------------------
def _fused_conv_call(fused_ops, attrs, leakyrelu_alpha=0.2):
    """fn(x, w, bias) running _FusedConv2D, an internal op that tf.raw_ops
    leaves out: through the eager executor directly."""
    from tensorflow.python.eager import context, execute

    def fn(x, w, bias):
        a = ("T", x.dtype.as_datatype_enum, "TArgs", [bias.dtype.as_datatype_enum],
             "num_args", 1, "num_host_args", 0, "strides", attrs["strides"],
             "padding", attrs["padding"], "explicit_paddings", attrs.get("explicit_paddings", []),
             "data_format", attrs["data_format"], "filter_format", "HWIO",
             "dilations", attrs["dilations"], "use_cudnn_on_gpu", True,
             "fused_ops", fused_ops, "epsilon", 1e-4, "leakyrelu_alpha", leakyrelu_alpha)
        return execute.execute(b"_FusedConv2D", 1, inputs=[x, w, bias], attrs=a,
                               ctx=context.context())[0]
    return fn


_FUSED_ACT = {
    None: lambda v, a: v,
    "Relu": lambda v, a: np.maximum(v, 0),
    "Relu6": lambda v, a: np.clip(v, 0, 6),
    "Elu": lambda v, a: np.where(v > 0, v, np.expm1(np.minimum(v, 0))),
    "LeakyRelu": lambda v, a: np.where(v > 0, v, v * a),
    "Tanh": lambda v, a: np.tanh(v),
    "Sigmoid": lambda v, a: 1 / (1 + np.exp(-v)),
}


def _fused_conv_numpy(attrs, act, alpha):
    """TensorFlow's CPU Conv2D (float32, NHWC, zero-dilated filters, see
    _via_nhwc) + bias + activation in float64, rounded once to the inputs'
    type."""
    why, conv = _via_nhwc(_call("Conv2D", "input", "filter"), attrs, ("image", "filter"))
    why = why.strip()
    caxis = 1 if attrs["data_format"] == "NCHW" else -1

    def ref(x, w, bias):
        y = conv(x.astype(np.float32), w.astype(np.float32))[0].astype(np.float64)
        shape = [1] * y.ndim
        shape[caxis] = -1
        return [_FUSED_ACT[act](y + bias.astype(np.float64).reshape(shape), alpha).astype(x.dtype)]
    return f"{why or 'TensorFlow CPU Conv2D'}, then bias and {act or 'no activation'} in float64", ref


def _fused_conv(c):
    """_FusedConv2D over some of CONV_GEOMETRIES with each fused_ops list
    TensorFlow's remapper emits. Float32 NHWC BiasAdd (+ Relu, Relu6, Elu,
    LeakyRelu) runs against TensorFlow's CPU _FusedConv2D; its CPU kernel
    has no Tanh/Sigmoid fusion, no half and no NCHW: those (and groups)
    against TensorFlow's CPU Conv2D with the epilogue in numpy."""
    cases = []
    acts = [None, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"]
    geos = [g for g in CONV_GEOMETRIES]
    for i, act in enumerate(acts * 2):
        label, fmt, pad, (sh, sw), (dh, dw), ex, (H, W), (KH, KW) = geos[i % len(geos)]
        cin, cout = 3, 5
        alpha = 0.3 if i == 4 else 0.2
        x = _fmt(c.rand(2, H, W, cin), fmt)
        w = c.rand(KH, KW, cin, cout)
        bias = c.rand(cout)
        attrs = dict(strides=_fmt4([1, sh, sw, 1], fmt), padding=pad,
                     dilations=_fmt4([1, dh, dw, 1], fmt), data_format=fmt)
        if ex:
            attrs["explicit_paddings"] = _explicit(ex, fmt)
        ops = ["BiasAdd"] + ([act] if act else [])
        fn = _fused_conv_call(ops, attrs, alpha)
        case = (f"{label} {'+'.join(ops)}", fn, [x, w, bias])
        if c.T != np.float32 or fmt != "NHWC" or act in ("Tanh", "Sigmoid"):
            case += ({"reference": _fused_conv_numpy(attrs, act, alpha)},)
        cases.append(case)
    return cases


BUILDERS["_FusedConv2D"] = _fused_conv

# (label, data_format, padding, ksize (h, w), strides (h, w), explicit, input (H, W))
POOL_GEOMETRIES = [
    ("NHWC VALID 2x2 s2", "NHWC", "VALID", (2, 2), (2, 2), None, (6, 7)),
    ("NHWC SAME 3x3 s2", "NHWC", "SAME", (3, 3), (2, 2), None, (7, 6)),
    ("NHWC SAME 3x2 s1", "NHWC", "SAME", (3, 2), (1, 1), None, (5, 5)),
    ("NHWC VALID 1x3 s1x2", "NHWC", "VALID", (1, 3), (1, 2), None, (4, 7)),
    ("NHWC EXPLICIT 2x2 s2", "NHWC", "EXPLICIT", (2, 2), (2, 2), ((1, 0), (0, 1)), (5, 6)),
    ("NCHW SAME 3x3 s2", "NCHW", "SAME", (3, 3), (2, 2), None, (7, 6)),
    ("NCHW VALID 2x3 s1x2", "NCHW", "VALID", (2, 3), (1, 2), None, (5, 8)),
    ("NCHW EXPLICIT 3x3 s1", "NCHW", "EXPLICIT", (3, 3), (1, 1), ((1, 1), (1, 0)), (4, 4)),
]


def _distinct(c, shape, dtype):
    """Distinct values, exact in half too: no ties in a max-pool window, so
    the gradient's route is the same whichever maximum a kernel keeps."""
    n = int(np.prod(shape))
    return ((c.rng.permutation(n) - n // 2) / 64.0).astype(dtype).reshape(shape)


def _pool_geometries(explicit):
    # AvgPool's padding takes no EXPLICIT; MaxPool's does.
    return [g for g in POOL_GEOMETRIES if explicit or g[2] != "EXPLICIT"]


def _pool_attrs(fmt, pad, k, s, ex):
    attrs = dict(ksize=_fmt4([1, k[0], k[1], 1], fmt), strides=_fmt4([1, s[0], s[1], 1], fmt),
                 padding=pad, data_format=fmt)
    if ex:
        attrs["explicit_paddings"] = _explicit(ex, fmt)
    return attrs


def _pool_out(H, W, pad, k, s, ex):
    return (_out_size(H, k[0], s[0], 1, pad, ex[0] if ex else (0, 0)),
            _out_size(W, k[1], s[1], 1, pad, ex[1] if ex else (0, 0)))


# The pooling ops: 2-D (MaxPool[V2], AvgPool, MaxPoolGrad[V2], AvgPoolGrad,
# MaxPoolGradGrad[V2]) and 3-D (MaxPool3D, AvgPool3D, MaxPool3DGrad,
# AvgPool3DGrad, MaxPool3DGradGrad). The V2 ops take ksize and strides as
# int32 inputs (host memory) instead of attributes. orig_output, where an op
# reads it, is TensorFlow's CPU MaxPool of orig_input (in float32; the
# distinct values are exact in every dtype).
_POOL_ARGS = {
    "MaxPool": (("input",), ("image",)),
    "MaxPoolV2": (("input", "ksize", "strides"), ("image", "shape", "shape")),
    "AvgPool": (("value",), ("image",)),
    "MaxPoolGrad": (("orig_input", "orig_output", "grad"), ("image",) * 3),
    "MaxPoolGradV2": (("orig_input", "orig_output", "grad", "ksize", "strides"),
                      ("image",) * 3 + ("shape", "shape")),
    "AvgPoolGrad": (("orig_input_shape", "grad"), ("shape", "image")),
    "MaxPoolGradGrad": (("orig_input", "orig_output", "grad"), ("image",) * 3),
    "MaxPoolGradGradV2": (("orig_input", "orig_output", "grad", "ksize", "strides"),
                          ("image",) * 3 + ("shape", "shape")),
    "MaxPool3D": (("input",), ("image",)),
    "AvgPool3D": (("input",), ("image",)),
    "MaxPool3DGrad": (("orig_input", "orig_output", "grad"), ("image",) * 3),
    "AvgPool3DGrad": (("orig_input_shape", "grad"), ("shape", "image")),
    "MaxPool3DGradGrad": (("orig_input", "orig_output", "grad"), ("image",) * 3),
}


def _call_v2(name, argnames):
    """Like _call, with the V2 ops' ksize and strides moved from the
    attributes to the trailing inputs (the case supplies them)."""
    f = getattr(raw, name)
    if "V2" not in name:
        return _call(name, *argnames)

    def make(attrs):
        a = {k: v for k, v in attrs.items() if k not in ("ksize", "strides")}
        return lambda *t: f(**dict(zip(argnames, t)), **a)
    return make


def _pool(name):
    maxpool = name.startswith("Max")
    argnames, kinds = _POOL_ARGS[name]
    make = _call_v2(name, argnames)

    def build(c):
        cases = []
        for label, fmt, pad, k, s, ex, (H, W) in _pool_geometries(maxpool and "V2" not in name
                                                                 and "GradGrad" not in name):
            attrs = _pool_attrs(fmt, pad, k, s, ex)
            OH, OW = _pool_out(H, W, pad, k, s, ex)
            x = _distinct(c, (2, H, W, 3), c.T) if maxpool else c.rand(2, H, W, 3)
            if maxpool and name not in ("MaxPool", "MaxPoolV2"):
                with tf.device("/CPU:0"):
                    y = raw.MaxPool(input=tf.constant(x.astype(np.float32)),
                                    **_pool_attrs("NHWC", pad, k, s, ex)).numpy().astype(c.T)
                g = c.rand(2, H, W, 3) if "GradGrad" in name else c.rand(2, OH, OW, 3)
                inputs = [x, y, g]
            elif name == "AvgPoolGrad":
                inputs = [np.array(_fmt4([2, H, W, 3], fmt), np.int32), c.rand(2, OH, OW, 3)]
            else:
                inputs = [x]
            if "V2" in name:
                inputs += [np.array(attrs["ksize"], np.int32), np.array(attrs["strides"], np.int32)]
            inputs = [_fmt(a, fmt) if kind == "image" else a for kind, a in zip(kinds, inputs)]
            cases.append((label, make(attrs), inputs, {"fallback": _via_nhwc(make, attrs, kinds)}))
        if maxpool and name not in ("MaxPool", "MaxPoolV2"):
            # Ties: the CPU kernels' tie rules (the first maximum; within
            # 1e-5 in MaxPool3DGrad, every one) on many equal values.
            cases += _pool_ties(c, name, make, kinds)
        return cases
    return build


def _pool_ties(c, name, make, kinds):
    three = "3D" in name
    shape = (2, 3, 5, 4, 2) if three else (2, 5, 4, 2)
    x = (np.arange(int(np.prod(shape))) % 3).astype(c.T).reshape(shape)
    k = [1, 2, 2, 2, 1] if three else [1, 2, 2, 1]
    attrs = dict(ksize=k, strides=[1] * len(k), padding="SAME",
                 data_format="NDHWC" if three else "NHWC")
    pool = raw.MaxPool3D if three else raw.MaxPool
    with tf.device("/CPU:0"):
        y = pool(input=tf.constant(x.astype(np.float32)), **attrs).numpy().astype(c.T)
    g = c.rand(*shape) if "GradGrad" in name else c.rand(*y.shape)
    inputs = [x, y, g]
    if "V2" in name:
        inputs += [np.array(k, np.int32), np.array([1] * len(k), np.int32)]
    return [("NHWC ties 2x2 SAME", make(attrs), inputs)]


def _5d(v, fmt):
    """A per-dimension attribute or shape given in NDHWC order, in fmt's."""
    v = [int(a) for a in v]
    return [v[0], v[4], v[1], v[2], v[3]] if fmt == "NCDHW" else v


def _pool_via_ndhwc(make, attrs, kinds):
    """_via_nhwc for the 3-D ops: TensorFlow's CPU kernel on the NDHWC
    transposes (half computed in float32: the CPU has no half kernel)."""
    fmt = attrs["data_format"]
    a = dict(attrs, data_format="NDHWC")
    if fmt == "NCDHW":
        for key in ("ksize", "strides"):
            v = attrs[key]
            a[key] = [v[0], v[2], v[3], v[4], v[1]]
    fn = make(a)

    def ref(*inputs):
        args, half = [], False
        for kind, x in zip(kinds, inputs):
            if kind == "image":
                half |= x.dtype == np.float16
                x = x.astype(np.float32) if x.dtype == np.float16 else x
                if fmt == "NCDHW":
                    x = _ndhwc(x)
            elif kind == "shape" and fmt == "NCDHW":
                x = np.array([x[0], x[2], x[3], x[4], x[1]], x.dtype)
            args.append(tf.constant(x))
        with tf.device("/CPU:0"):
            out = fn(*args).numpy()
        if half:
            out = out.astype(np.float16)
        return [_ncdhw(out) if fmt == "NCDHW" else out]
    return ("TensorFlow's CPU kernel" + (" on the NDHWC transposes, transposed back"
                                         if fmt == "NCDHW" else "")), ref


# (label, data_format, padding, ksize (d, h, w), strides (d, h, w), input (D, H, W))
POOL3D_GEOMETRIES = [
    ("NDHWC VALID 2x2x2 s2", "NDHWC", "VALID", (2, 2, 2), (2, 2, 2), (4, 5, 6)),
    ("NDHWC SAME 3x3x2 s2x1x2", "NDHWC", "SAME", (3, 3, 2), (2, 1, 2), (3, 5, 5)),
    ("NDHWC SAME 1x3x3 s1", "NDHWC", "SAME", (1, 3, 3), (1, 1, 1), (2, 4, 5)),
    ("NCDHW SAME 2x3x3 s2", "NCDHW", "SAME", (2, 3, 3), (2, 2, 2), (3, 6, 5)),
    ("NCDHW VALID 3x2x2 s1x2x1", "NCDHW", "VALID", (3, 2, 2), (1, 2, 1), (4, 4, 5)),
]


def _pool3d(name):
    maxpool = name.startswith("Max")
    argnames, kinds = _POOL_ARGS[name]
    make = _call(name, *argnames)

    def build(c):
        cases = []
        for label, fmt, pad, k, s, (D, H, W) in POOL3D_GEOMETRIES:
            attrs = dict(ksize=_5d([1, *k, 1], fmt), strides=_5d([1, *s, 1], fmt), padding=pad,
                         data_format=fmt)
            out = [_out_size(n, kk, ss, 1, pad) for n, kk, ss in zip((D, H, W), k, s)]
            shape, oshape = (2, D, H, W, 2), (2, *out, 2)
            x = _distinct(c, shape, c.T) if maxpool else c.rand(*shape)
            if maxpool and name != "MaxPool3D":
                with tf.device("/CPU:0"):
                    y = raw.MaxPool3D(input=tf.constant(x.astype(np.float32)),
                                      ksize=[1, *k, 1], strides=[1, *s, 1],
                                      padding=pad).numpy().astype(c.T)
                g = c.rand(*shape) if "GradGrad" in name else c.rand(*oshape)
                inputs = [x, y, g]
            elif name == "AvgPool3DGrad":
                inputs = [np.array(_5d(shape, fmt), np.int32), c.rand(*oshape)]
            else:
                inputs = [x]
            if fmt == "NCDHW":
                inputs = [_ncdhw(a) if kind == "image" else a for kind, a in zip(kinds, inputs)]
            cases.append((label, make(attrs), inputs, {"fallback": _pool_via_ndhwc(make, attrs, kinds)}))
        if name in ("MaxPool3DGrad", "MaxPool3DGradGrad"):
            cases += _pool_ties(c, name, make, kinds)
        return cases
    return build


for _n in ("MaxPool", "MaxPoolV2", "AvgPool", "MaxPoolGrad", "MaxPoolGradV2", "AvgPoolGrad",
           "MaxPoolGradGrad", "MaxPoolGradGradV2"):
    BUILDERS[_n] = _pool(_n)
for _n in ("MaxPool3D", "AvgPool3D", "MaxPool3DGrad", "AvgPool3DGrad", "MaxPool3DGradGrad"):
    BUILDERS[_n] = _pool3d(_n)

# FusedBatchNormV3's outputs: y, batch_mean, batch_variance, reserve_space_1,
# reserve_space_2, reserve_space_3. TensorFlow's CPU kernel defines
# reserve_space_1/2 only in training (the batch mean and the biased batch
# variance, which FusedBatchNormGradV3 reads back); in inference they are
# unspecified, and reserve_space_3 always is (the CPU gives an empty tensor,
# OPENCL a scalar 0): those are not compared. batch_mean/batch_variance are
# the running statistics: in training the batch moments (variance
# Bessel-corrected) blended into the given ones by exponential_avg_factor,
# in inference the given estimates.
_BN_TRAINING_OUTPUTS = (0, 1, 2, 3, 4)
_BN_INFERENCE_OUTPUTS = (0, 1, 2)
_BN = _call("FusedBatchNormV3", "x", "scale", "offset", "mean", "variance")
_BN_GRAD = _call("FusedBatchNormGradV3", "y_backprop", "x", "scale", "reserve_space_1",
                 "reserve_space_2", "reserve_space_3")


def _batch_norm(c):
    U = c.t("U", np.float32)
    cases = []
    for fmt in ("NHWC", "NCHW"):
        for training in (True, False):
            for factor in (1.0, 0.5):
                attrs = dict(is_training=training, exponential_avg_factor=factor, epsilon=1e-3,
                             data_format=fmt)
                inputs = [_fmt(c.rand(2, 4, 5, 3), fmt), c.rand(3, dtype=U), c.rand(3, dtype=U),
                          c.rand(3, dtype=U), c.pos(3, dtype=U)]
                mode = "training" if training else "inference"
                cases.append((f"{fmt} {mode} factor={factor}", _BN(attrs), inputs,
                              {"outputs": _BN_TRAINING_OUTPUTS if training else _BN_INFERENCE_OUTPUTS,
                               "fallback": _via_nhwc(_BN, attrs, ("image", None, None, None, None))}))
    # Keras' layer in training with factor 1 passes empty running statistics.
    cases.append(("NHWC training, empty running statistics", _BN(dict(is_training=True)),
                  [c.rand(3, 2, 2, 5), c.rand(5, dtype=U), c.rand(5, dtype=U), np.zeros(0, U), np.zeros(0, U)],
                  {"outputs": _BN_TRAINING_OUTPUTS}))
    return cases


# FusedBatchNormGradV3's outputs: x_backprop, scale_backprop,
# offset_backprop, reserve_space_4, reserve_space_5; the last two are
# unused placeholders (unspecified): not compared. reserve_space_1/2 are what
# FusedBatchNormV3 gives out: in training the batch mean and biased variance
# of x, in inference the population estimates; reserve_space_3 is unused.
def _batch_norm_grad(c):
    U = c.t("U", np.float32)
    cases = []
    for fmt in ("NHWC", "NCHW"):
        for training in (True, False):
            x, dy = c.rand(2, 4, 5, 3), c.rand(2, 4, 5, 3)
            if training:
                x64 = x.astype(np.float64).reshape(-1, 3)
                mean, var = x64.mean(0).astype(U), x64.var(0).astype(U)
            else:
                mean, var = c.rand(3, dtype=U), c.pos(3, dtype=U)
            attrs = dict(is_training=training, epsilon=1e-3, data_format=fmt)
            mode = "training" if training else "inference"
            cases.append((f"{fmt} {mode}", _BN_GRAD(attrs),
                          [_fmt(dy, fmt), _fmt(x, fmt), c.rand(3, dtype=U), mean, var, np.zeros(0, U)],
                          {"outputs": (0, 1, 2),
                           "fallback": _via_nhwc(_BN_GRAD, attrs, ("image", "image", None, None, None, None))}))
    return cases


BUILDERS["FusedBatchNormV3"] = _batch_norm
BUILDERS["FusedBatchNormGradV3"] = _batch_norm_grad


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


# _ParallelConcatStart/_ParallelConcatUpdate exist only inside graphs
# (TensorFlow's parallel_concat rewrite of tf.parallel_stack): both run
# through one tf.function, Start's output read back by the final Identity.
def _parallel_stack(c):
    dtype = c.t("dtype", c.T)
    stack = tf.function(lambda *xs: tf.parallel_stack(list(xs)))
    return [("parallel_stack 4x[2,3]", stack, [c.rand(2, 3, dtype=dtype) for _ in range(4)]),
            ("parallel_stack 3x[5]", stack, [c.rand(5, dtype=dtype) for _ in range(3)])]


BUILDERS["_ParallelConcatStart"] = _parallel_stack
BUILDERS["_ParallelConcatUpdate"] = _parallel_stack


# _TfoclFusedElementwise, the plugin's own op (kernels/fused.c; the graph
# optimizer writes it, tf.raw_ops has no wrapper): run through eager
# execution of the registered op. TensorFlow has no CPU kernel for it: the
# reference is numpy, each op computed in float32 and rounded to the
# value's dtype, as the op's program defines (kernels/fused_program.h).
def _fused(program, constants, out_type):
    from tensorflow.python.eager import context, execute

    def fn(*xs):
        attrs = ("Targs", [x.dtype.as_datatype_enum for x in xs],
                 "T", tf.as_dtype(out_type).as_datatype_enum,
                 "program", program, "constants", constants)
        return execute.execute("_TfoclFusedElementwise", 1, list(xs), attrs,
                               context.context())[0]
    return fn


def _fused_elementwise(c):
    T = c.T
    enum = tf.as_dtype(T).as_datatype_enum
    r = lambda v: np.asarray(v, np.float32).astype(T).astype(np.float32)  # noqa: E731
    adam = [41, 1, 0, 1, 0, enum, 42, 2, 3, 40, 0, 4]   # m + (grad - m) * 0.1

    def adam_ref(m, grad):
        m, grad = m.astype(np.float32), grad.astype(np.float32)
        return [r(m + r(r(grad - m) * r(0.1))).astype(T)]

    act = [40, 0, 1, 20, 2, -1, 19, 0, -1, 42, 3, 4]   # relu(x + b) * sigmoid(x)

    def act_ref(x, b):
        x, b = x.astype(np.float32), b.astype(np.float32)
        sig = r(1.0 / (1.0 + np.exp(-x)))
        return [r(r(np.maximum(r(x + b), 0)) * sig).astype(T)]

    cases = [
        ("adam m", _fused(adam, [0.1], T), [c.rand(5, 7), c.rand(5, 7)],
         {"reference": ("numpy, rounded per op", adam_ref)}),
        ("broadcast activations", _fused(act, [], T), [c.rand(3, 5, 4), c.rand(4)],
         {"reference": ("numpy, rounded per op", act_ref),
          "tol": dict(rtol=1e-5, atol=1e-6) if T == np.float32 else None}),
    ]
    if T == np.float32:
        # half x, float y: float(half(float(x) * y) + x)
        mixed = [2, 0, 1, 42, 2, 1, 2, 3, 19, 40, 4, 0, 2, 5, 1]

        def mixed_ref(x, y):
            h = lambda v: np.asarray(v, np.float32).astype(np.float16).astype(np.float32)  # noqa: E731
            xf = x.astype(np.float32)
            return [h(h(xf * y) + xf)]
        cases.append(("half and float", _fused(mixed, [], np.float32),
                      [c.rand(6, dtype=np.float16), c.rand(6, dtype=np.float32)],
                      {"reference": ("numpy, rounded per op", mixed_ref)}))
    return cases


BUILDERS["_TfoclFusedElementwise"] = _fused_elementwise


# ---- special functions (unary and binary) ops ----
# Bessel functions: Cephes' float fits on both sides, evaluated with each
# side's exp, log, cos (a few ulp); J and Y for large x carry the float
# rounding of their phase (ulp(x) / 2 radians times a modulus ~0.1 at 60).
_BESSEL = ["BesselI0e", "BesselI1e", "BesselI0", "BesselI1", "BesselJ0", "BesselJ1",
           "BesselY0", "BesselY1", "BesselK0", "BesselK0e", "BesselK1", "BesselK1e"]
APPROX_OPS |= set(_BESSEL) | {"SoftsignGrad"}
TOLERANCES.update({op: {np.float32: dict(rtol=1e-5, atol=2e-6)}
                   for op in _BESSEL})


def _bessel(name):
    f = getattr(raw, name)
    edges = [np.nan, -np.inf, -30, -2, -1e-3, -0.0, 0.0, 1e-30, 1e-3, 1, 2, 2.5, 8, 9, 30,
             60, np.inf]
    return lambda c: [
        ("wide", lambda x: f(x=x), [c.rng.uniform(-12, 12, (4, 6)).astype(c.T)]),
        ("edges", lambda x: f(x=x), [np.array(edges, c.T)])]


for _n in _BESSEL:
    BUILDERS[_n] = _bessel(_n)
def _popcount_edges(T):
    """0, 1, -1, 255, 256, the type's extremes and -7, those the type holds
    (int8 holds neither 255 nor 256, uint8 no negative)."""
    info = np.iinfo(T)
    return np.array([v for v in (0, 1, -1, 255, 256, int(info.min), int(info.max), -7)
                     if info.min <= v <= info.max], T)


BUILDERS["PopulationCount"] = lambda c: [
    ("random", lambda x: raw.PopulationCount(x=x), [c.rand(3, 5)]),
    ("edges", lambda x: raw.PopulationCount(x=x), [_popcount_edges(c.T)])]
BUILDERS["SoftsignGrad"] = lambda c: [
    ("random", lambda g, x: raw.SoftsignGrad(gradients=g, features=x),
     [c.rand(3, 5), c.rand(3, 5)]),
    ("special", lambda g, x: raw.SoftsignGrad(gradients=g, features=x),
     [np.array([1, np.nan, np.inf, 2, 0, -1, 3e4], c.T),
      np.array([np.inf, 1, 2, np.nan, -np.inf, 0, 5e3], c.T)])]
# Igamma, Igammac, Zeta, Polygamma: Cephes' float algorithms on both sides
# (pow, exp, lgamma of each side's own accuracy).
APPROX_OPS |= {"Igamma", "Igammac", "Zeta", "Polygamma", "TruncateMod"}
TOLERANCES.update({op: {np.float32: dict(rtol=2e-5, atol=2e-6)}
                   for op in ("Igamma", "Igammac", "Zeta", "Polygamma")})


def _special_function(name, args, first, edges):
    f = getattr(raw, name)

    def build(c):
        def fn(a, b):
            return f(**{args[0]: a, args[1]: b})
        return [("random", fn, [first(c), c.pos(3, 4)]),
                ("broadcast", fn, [first(c), c.pos(4)]),
                ("edges", fn, [np.array(edges[0], c.T), np.array(edges[1], c.T)])]
    return build


_IGAMMA_EDGES = ([np.nan, 1, -1, 0, 0, 0, 1, 2, np.inf, 1, 1e-3, 5, 0.5, 1, 3, 1, 20],
                 [1, np.nan, 1, 1, 0, -1, 0, -1, 1, np.inf, 1, 5, 0.5, 1e-3, 100, -0.0, 25])
BUILDERS["Igamma"] = _special_function("Igamma", ("a", "x"), lambda c: c.pos(3, 4), _IGAMMA_EDGES)
BUILDERS["Igammac"] = _special_function("Igammac", ("a", "x"), lambda c: c.pos(3, 4), _IGAMMA_EDGES)
BUILDERS["Zeta"] = _special_function(
    "Zeta", ("x", "q"), lambda c: (c.pos(3, 4) + 1).astype(c.T),
    ([1, 2, 3, 0.5, np.nan, np.inf, -1, 2, 2, 2, 2, 1.5, 2, 3, 2, 4],
     [1, 1, 1, 1, 1, 1, 1, 0, -1, -1.5, np.inf, np.nan, 1e-3, 0, -2, -2.5]))
BUILDERS["Polygamma"] = _special_function(
    "Polygamma", ("a", "x"), lambda c: c.rng.integers(0, 5, (3, 4)).astype(c.T),
    ([0, 1, 2, 3, 1.5, -1, np.nan, np.inf, 1, 0, 2, 0, 4, 1],
     [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, -2.5, -2.5, 0.25, 1e-3]))


def _truncate(name):
    f = getattr(raw, name)

    def build(c):
        if np.issubdtype(c.T, np.integer):
            lo = np.iinfo(c.T).min
            x = np.array([7, -7, 7, -7, 6, -6, 0, 100, lo, lo], c.T)
            y = np.array([2, 2, -2, -2, 3, 3, 5, -7, -1, 3], c.T)
        else:
            x = np.array([7, -7, 7, -7, -0.0, np.inf, 1, 5.5, np.nan, 3], c.T)
            y = np.array([2, 2, -2, 0, 1, 1, np.inf, -2.5, 1, np.nan], c.T)
        return [("random", lambda a, b: f(x=a, y=b), [c.rand(3, 4), c.nonzero(3, 4)]),
                ("broadcast", lambda a, b: f(x=a, y=b), [c.rand(2, 3, 4), c.nonzero(4)]),
                ("signs", lambda a, b: f(x=a, y=b), [x, y])]
    return build


BUILDERS["TruncateDiv"] = _truncate("TruncateDiv")
BUILDERS["TruncateMod"] = _truncate("TruncateMod")
BUILDERS["ApproximateEqual"] = lambda c: [
    ("tolerance 0.5", lambda x, y: raw.ApproximateEqual(x=x, y=y, tolerance=0.5),
     [c.rand(3, 5), c.rand(3, 5)]),
    ("edges", lambda x, y: raw.ApproximateEqual(x=x, y=y),
     [np.array([1, np.nan, np.inf, 1, 0, -0.0, 3], c.T),
      np.array([1.000001, np.nan, np.inf, 1.1, 1e-6, 0, 2.99999], c.T)])]
# Betainc: Cephes' float incbet on both sides (3.7e-5 peak relative error
# for a, b up to 30); its inputs have one shape or are scalars.
APPROX_OPS |= {"Betainc"}
TOLERANCES["Betainc"] = {np.float32: dict(rtol=1e-4, atol=3e-5)}


def _betainc(c):
    def fn(a, b, x):
        return raw.Betainc(a=a, b=b, x=x)
    a = c.rng.uniform(0.2, 8, (3, 4)).astype(c.T)
    b = c.rng.uniform(0.2, 8, (3, 4)).astype(c.T)
    x = c.rng.uniform(0.01, 0.99, (3, 4)).astype(c.T)
    edges = [np.array(v, c.T) for v in (
        [np.nan, 1, -1, 0, 1, 1, 1, 1, 2, 0.5, 5, 30, 1e-3, np.inf, 1, 0.5, 20, 0.3, 0, 0],
        [1, np.nan, 1, 1, 0, 1, 1, 1, 3, 0.5, 2, 25, 1e-3, 1, np.inf, 0.5, 14, 15, 1, 0],
        [0.5, 0.5, 0.5, 0.5, 0.5, np.nan, 0, 1, 0.3, 0.9, 0.99, 0.6, 0.5, 0.5, 0.5, -0.1,
         0.4, 0.01, np.nan, 0.5])]
    return [("same", fn, [a, b, x]), ("scalar a, b", fn, [np.array(2.5, c.T), np.array(1.5, c.T), x]),
            ("scalar x", fn, [a, b, np.array(0.3, c.T)]), ("edges", fn, edges)]


def _clip(c):
    def fn(t, lo, hi):
        return raw.ClipByValue(t=t, clip_value_min=lo, clip_value_max=hi)
    cases = [("scalar bounds", fn, [c.rand(3, 4), np.array(-1, c.T), np.array(1, c.T)]),
             ("tensor bounds", fn, [c.rand(3, 4), c.rand(3, 4), c.rand(3, 4)]),
             ("mixed", fn, [c.rand(2, 5), c.rand(2, 5), np.array(1, c.T)])]
    if np.issubdtype(c.T, np.floating):
        cases.append(("NaN and crossed bounds", fn, [
            np.array([np.nan, 1, -5, 5, 0, -0.0, 1, 2, 3], c.T),
            np.array([0, 0, 0, 0, 0, 0, np.nan, 2.5, 0], c.T),
            np.array([1, 1, 1, 1, 1, 1, 0.5, np.nan, -1], c.T)]))
    return cases


BUILDERS["Betainc"] = _betainc
BUILDERS["ClipByValue"] = _clip

# ---- pool misc ops ----
# LRN and LRNGrad: TensorFlow's CPU kernels' arithmetic (OPENCL computes
# half in float, the CPU in half: a few half ulps apart).
APPROX_OPS |= {"LRN", "LRNGrad"}
TOLERANCES["LRN"] = {np.float16: dict(rtol=1e-2, atol=1e-2)}
TOLERANCES["LRNGrad"] = {np.float32: dict(rtol=1e-4, atol=1e-4),
                         np.float16: dict(rtol=2e-2, atol=2e-2)}
_LRN_ATTRS = [("defaults", {}),
              ("AlexNet", dict(depth_radius=2, bias=2.0, alpha=1e-4, beta=0.75)),
              ("beta 1", dict(depth_radius=1, bias=1.0, alpha=0.5, beta=1.0)),
              ("radius beyond depth", dict(depth_radius=9, bias=1.5, alpha=0.1, beta=0.6))]


def _lrn(c):
    return [(label, lambda x, a=a: raw.LRN(input=x, **a), [c.rand(2, 3, 4, 7)])
            for label, a in _LRN_ATTRS]


def _lrn_grad(c):
    cases = []
    for label, a in _LRN_ATTRS:
        x = c.rand(2, 3, 4, 7)
        with tf.device("/CPU:0"):
            y = raw.LRN(input=tf.constant(x), **a).numpy()
        cases.append((label, lambda g, x, y, a=a: raw.LRNGrad(
            input_grads=g, input_image=x, output_image=y, **a), [c.rand(2, 3, 4, 7), x, y]))
    return cases


BUILDERS["LRN"] = _lrn
BUILDERS["LRNGrad"] = _lrn_grad


# MaxPoolWithArgmax and its gradients (NHWC; an int64 argmax, with and
# without the batch in the index). The gradients take the argmax
# TensorFlow's CPU MaxPoolWithArgmax gives; MaxPoolGradGradWithArgmax has
# no CPU kernel: numpy gathers the gradient at each argmax.
TOLERANCES["MaxPoolWithArgmax"] = _EXACT
TOLERANCES["MaxPoolGradGradWithArgmax"] = _EXACT
TOLERANCES["MaxPoolGradWithArgmax"] = {**_POOL_SUM_TOL, np.float16: dict(rtol=2e-3, atol=2e-3)}
_ARGMAX_GEOMETRIES = [("2x2/2 VALID", [1, 2, 2, 1], [1, 2, 2, 1], "VALID", (5, 7)),
                      ("3x3/2 SAME", [1, 3, 3, 1], [1, 2, 2, 1], "SAME", (7, 6)),
                      ("3x2/1 SAME", [1, 3, 2, 1], [1, 1, 1, 1], "SAME", (4, 5))]


def _argmax_cases(c, name):
    cases = []
    for label, k, s, pad, (H, W) in _ARGMAX_GEOMETRIES:
        for batch_in_index in (False, True):
            attrs = dict(ksize=k, strides=s, padding=pad, include_batch_in_index=batch_in_index)
            x = _distinct(c, (2, H, W, 3), c.T)
            lbl = label + (" batch in index" if batch_in_index else "")
            if name == "MaxPoolWithArgmax":
                cases.append((lbl, lambda x, a=attrs: raw.MaxPoolWithArgmax(
                    input=x, Targmax=tf.int64, **a), [x]))
                continue
            with tf.device("/CPU:0"):
                y, arg = raw.MaxPoolWithArgmax(input=tf.constant(x.astype(np.float32)),
                                               Targmax=tf.int64, **attrs)
            arg = arg.numpy()
            if name == "MaxPoolGradWithArgmax":
                g = c.rand(*y.shape)
                cases.append((lbl, lambda x, g, a_, a=attrs: raw.MaxPoolGradWithArgmax(
                    input=x, grad=g, argmax=a_, **a), [x, g, arg]))
                continue
            g = c.rand(2, H, W, 3)

            def ref(x, g, a_, batch_in_index=batch_in_index):
                base = 0 if batch_in_index else (np.arange(a_.shape[0]) * int(np.prod(x.shape[1:])))
                idx = a_ + np.reshape(base, (-1, 1, 1, 1))
                return [g.reshape(-1)[idx]]
            cases.append((lbl, lambda x, g, a_, a=attrs: raw.MaxPoolGradGradWithArgmax(
                input=x, grad=g, argmax=a_, **a), [x, g, arg],
                {"reference": ("numpy: grad at each argmax (no CPU kernel)", ref)}))
    return cases


for _name in ("MaxPoolWithArgmax", "MaxPoolGradWithArgmax", "MaxPoolGradGradWithArgmax"):
    BUILDERS[_name] = lambda c, _name=_name: _argmax_cases(c, _name)


# Conv3DBackpropInput and Conv3DBackpropFilter (V1: the input, or filter,
# tensor instead of its shape). TensorFlow refuses them past GraphDef
# version 10 on every device, and eager runs at the current version: they
# run in a GraphDef of producer 9 (what an old graph holds), written as the
# V2 op and renamed, in a session on the inputs' device; TensorFlow's CPU
# V2 kernel is the reference (in float32 for half).
def _conv3d_v1(name):
    v2 = name + "V2"

    def call(attrs):
        def fn(x, w, dy):
            g = tf.Graph()
            with g.as_default(), tf.device(x.device):
                ph = [tf.compat.v1.placeholder(t.dtype, t.shape, name=n)
                      for t, n in zip((x, w, dy), ("x", "w", "dy"))]
                if name.endswith("Input"):
                    getattr(raw, v2)(input_sizes=list(x.shape), filter=ph[1], out_backprop=ph[2],
                                     name="op", **attrs)
                else:
                    getattr(raw, v2)(input=ph[0], filter_sizes=list(w.shape), out_backprop=ph[2],
                                     name="op", **attrs)
            gd = g.as_graph_def()
            for n in gd.node:
                if n.name == "op":
                    n.op = name
                    n.input[0 if name.endswith("Input") else 1] = "x" if name.endswith("Input") else "w"
                    for a in ("data_format", "Tshape"):
                        if a in n.attr:
                            del n.attr[a]
            gd.versions.producer = 9
            gd.versions.min_consumer = 0
            g2 = tf.Graph()
            with g2.as_default():
                tf.graph_util.import_graph_def(gd, name="")
            with tf.compat.v1.Session(graph=g2) as s:
                out = s.run("op:0", {"x:0": x.numpy(), "w:0": w.numpy(), "dy:0": dy.numpy()})
            return tf.constant(out)
        return fn

    def build(c):
        cases = []
        for label, fmt, pad, st, dl, dhw, k, cin, cout, fd in CONV3D_GEOMETRIES:
            if fmt != "NDHWC" or cin != fd or max(dl) > 1:
                continue
            w = c.rand(*k, cin, cout)
            outs = [_out_size(dhw[i], k[i], st[i], 1, pad) for i in range(3)]
            x, dy = c.rand(2, *dhw, cin), c.rand(2, *outs, cout)
            attrs = dict(strides=[1, *st, 1], padding=pad)

            def ref(x, w, dy, attrs=attrs):
                f32 = [a.astype(np.float32) if a.dtype == np.float16 else a for a in (x, w, dy)]
                with tf.device("/CPU:0"):
                    if name.endswith("Input"):
                        out = getattr(raw, v2)(input_sizes=list(x.shape), filter=f32[1],
                                               out_backprop=f32[2], **attrs)
                    else:
                        out = getattr(raw, v2)(input=f32[0], filter_sizes=list(w.shape),
                                               out_backprop=f32[2], **attrs)
                return [out.numpy().astype(x.dtype)]
            cases.append((label, call(attrs), [x, w, dy],
                          {"reference": ("TensorFlow's CPU V2 kernel (V1 runs only in old graphs)", ref)}))
        return cases
    return build


# ---- segment ops ----
# Sorted segment reductions: ids with gaps (empty segments), long runs,
# NaN where Min/Max propagate it; sparse forms gather rows in a scrambled
# order, some twice, with num_segments past the last id. Sums add in float
# on OPENCL (half and bfloat16 rounded once), in the dtype on the CPU.
_SEGMENT_SUMS = ("SegmentSum", "SegmentMean", "SparseSegmentSum", "SparseSegmentMean",
                 "SparseSegmentSqrtN", "SparseSegmentSumWithNumSegments",
                 "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtNWithNumSegments")
APPROX_OPS |= set(_SEGMENT_SUMS) | {"SegmentProd"}
_SEGMENT_TOL = {np.float16: dict(rtol=1e-2, atol=3e-2), BF16: dict(rtol=3e-2, atol=1e-1)}
TOLERANCES.update({op: _SEGMENT_TOL for op in _SEGMENT_SUMS + ("SegmentProd",)})


def _sorted_segment(name):
    f = getattr(raw, name)

    def build(c):
        fn = lambda d, s: f(data=d, segment_ids=s)  # noqa: E731
        data = c.pos if name == "SegmentProd" else c.rand
        ids = lambda v: _i(c, "Tindices", v)  # noqa: E731
        cases = [("gaps", fn, [data(7, 3), ids([0, 0, 2, 2, 2, 5, 5])]),
                 ("vector", fn, [data(6), ids([1, 1, 1, 2, 3, 3])]),
                 ("rank 3", fn, [data(5, 2, 3), ids([0, 1, 1, 1, 4])]),
                 ("one segment", fn, [data(9, 33), ids([0] * 9)]),
                 ("many", fn, [data(200, 5), ids(np.arange(200) // 7)]),
                 ("wide", fn, [data(4, 300), ids([0, 0, 1, 3])]),
                 ("empty", fn, [data(0, 4), ids([])])]
        if name != "SegmentProd":
            # Long runs of narrow rows (a work-group per segment on GPUs).
            # TensorFlow's CPU adds half and bfloat16 in their own precision
            # (bfloat16 sums of 250 terms drift by ~10 ulps): against float64
            # sums rounded once there.
            red = {"SegmentSum": np.sum, "SegmentMean": np.mean,
                   "SegmentMin": np.min, "SegmentMax": np.max}[name]

            def long_ref(d, s):
                d64 = d.astype(np.float64)
                return [np.array([red(d64[s == k]) for k in range(int(s[-1]) + 1)]).astype(d.dtype)]
            opts = ({"reference": ("float64, rounded once", long_ref)}
                    if c.T in (np.float16, BF16) else {})
            cases.append(("long runs", fn, [data(600), ids(np.arange(600) // 250)], opts))
        if c.T in (np.float32, np.float64):
            special = np.array([np.nan, 1, np.inf, -2, -np.inf, np.nan, 3.5, -0.0], c.T)
            cases.append(("special values", fn, [special, ids([0, 0, 1, 1, 2, 2, 4, 4])]))
            long = data(300)
            long[[17, 160, 299]] = np.nan
            cases.append(("long runs with NaN", fn, [long, ids(np.arange(300) // 100)]))
        return cases
    return build


def _sparse_segment(name):
    f = getattr(raw, name)
    with_num = name.endswith("WithNumSegments")

    def build(c):
        def fn(num=None):
            if with_num:
                return lambda d, i, s: f(data=d, indices=i, segment_ids=s,
                                         num_segments=np.array(num, np.int32))
            return lambda d, i, s: f(data=d, indices=i, segment_ids=s)
        idx = lambda v: _i(c, "Tidx", v)  # noqa: E731
        ids = lambda v: _i(c, "Tsegmentids", v)  # noqa: E731
        return [("gaps", fn(6), [c.rand(5, 3), idx([0, 4, 4, 1, 2, 3, 0]),
                                 ids([0, 0, 0, 2, 2, 3, 3])]),
                ("vector", fn(3), [c.rand(6), idx([5, 4, 3, 0]), ids([0, 0, 2, 2])]),
                ("rank 3", fn(4), [c.rand(4, 2, 3), idx([3, 1, 1]), ids([1, 1, 3])]),
                ("many", fn(40), [c.rand(50, 7), idx((np.arange(300) * 7) % 50),
                                  ids(np.arange(300) // 9)]),
                ("wide", fn(2), [c.rand(3, 260), idx([2, 0, 1, 2]), ids([0, 1, 1, 1])]),
                ("empty", fn(2), [c.rand(3, 2), idx([]), ids([])])]
    return build


for _n in ["SegmentSum", "SegmentMean", "SegmentProd", "SegmentMin", "SegmentMax"]:
    BUILDERS[_n] = _sorted_segment(_n)
for _n in ["SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN",
           "SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments",
           "SparseSegmentSqrtNWithNumSegments"]:
    BUILDERS[_n] = _sparse_segment(_n)


def _sparse_segment_grad(name):
    f = getattr(raw, name)

    def build(c):
        fn = lambda rows: (lambda g, i, s: f(grad=g, indices=i, segment_ids=s,  # noqa: E731
                                             output_dim0=np.array(rows, np.int32)))
        idx = lambda v: _i(c, "Tidx", v)  # noqa: E731
        ids = lambda v: _i(c, "Tsegmentids", v)  # noqa: E731
        # Indices repeat (rows add up), ids leave a segment empty.
        return [("repeats", fn(6), [c.rand(4, 3), idx([0, 4, 4, 1, 2, 4, 0]),
                                    ids([0, 0, 0, 2, 2, 3, 3])]),
                ("vector", fn(5), [c.rand(3), idx([4, 3, 4, 0]), ids([0, 0, 2, 2])]),
                ("rank 3", fn(4), [c.rand(4, 2, 3), idx([3, 1, 1]), ids([1, 1, 3])]),
                ("many", fn(50), [c.rand(40, 7), idx((np.arange(300) * 7) % 50),
                                  ids(np.arange(300) // 8)]),
                ("wide", fn(3), [c.rand(2, 260), idx([2, 0, 1, 2]), ids([0, 1, 1, 1])]),
                # TensorFlow counts each segment's ids, sorted or not.
                ("unsorted", fn(5), [c.rand(3, 4), idx([0, 3, 1, 3, 4, 2]),
                                     ids([2, 0, 2, 1, 2, 0])])]
    return build


APPROX_OPS |= {"SparseSegmentSumGrad", "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad"}
for _n in ["SparseSegmentSumGrad", "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad"]:
    TOLERANCES[_n] = _SEGMENT_TOL
    BUILDERS[_n] = _sparse_segment_grad(_n)


# Bincounts add with atomics on OPENCL, in no fixed order: float sums
# within a few ulps. Values stay non-negative (TensorFlow's CPU kernels
# refuse negative ones, its GPU kernels and OPENCL drop them); values past
# size are dropped on both.
APPROX_OPS |= {"Bincount", "DenseBincount"}


def _bincount(c):
    T = c.T
    vals = lambda *shape: c.rng.integers(0, 9, size=shape).astype(np.int32)  # noqa: E731
    fn = lambda a, s, w: raw.Bincount(arr=a, size=s, weights=w)  # noqa: E731
    size = lambda v: np.array(v, np.int32)  # noqa: E731
    return [("counts", fn, [vals(20), size(7), np.zeros(0, T)]),
            ("weights", fn, [vals(30), size(9), c.rand(30)]),
            ("rank 2", fn, [vals(4, 5), size(6), c.rand(4, 5)]),
            ("many", fn, [vals(3000), size(5), c.rand(3000)]),
            ("size 0", fn, [vals(5), size(0), np.zeros(0, T)]),
            ("empty", fn, [vals(0), size(4), np.zeros(0, T)])]


def _dense_bincount(c):
    T, I = c.T, c.t("Tidx", np.int32)
    vals = lambda *shape: c.rng.integers(0, 9, size=shape).astype(I)  # noqa: E731

    def fn(binary=False):
        return lambda a, s, w: raw.DenseBincount(input=a, size=s, weights=w,
                                                 binary_output=binary)
    size = lambda v: np.array(v, I)  # noqa: E731
    return [("counts", fn(), [vals(20), size(7), np.zeros(0, T)]),
            ("weights", fn(), [vals(30), size(9), c.rand(30)]),
            ("binary", fn(True), [vals(30), size(6), c.rand(30)]),
            ("rank 2", fn(), [vals(4, 25), size(6), c.rand(4, 25)]),
            ("rank 2 binary", fn(True), [vals(3, 40), size(8), np.zeros(0, T)]),
            ("many", fn(), [vals(3000), size(5), c.rand(3000)]),
            ("empty", fn(), [vals(0), size(4), np.zeros(0, T)])]


BUILDERS["Bincount"] = _bincount
BUILDERS["DenseBincount"] = _dense_bincount


def _sparse_segment_grad_v2(name):
    v1 = _sparse_segment_grad(name[:-2])
    f = getattr(raw, name)

    def build(c):
        cases = []
        for label, _, inputs in v1(c):
            rows = {"repeats": 6, "vector": 5, "rank 3": 4, "many": 50, "wide": 3,
                    "unsorted": 5}[label]
            cases.append((label, lambda g, i, s, rows=rows: f(
                grad=g, indices=i, segment_ids=s, dense_output_dim0=np.array(rows, np.int32)),
                inputs))
        return cases
    return build


for _n in ("Conv3DBackpropInput", "Conv3DBackpropFilter"):
    BUILDERS[_n] = _conv3d_v1(_n)
TOLERANCES["Conv3DBackpropInput"] = _CONV_TOL
TOLERANCES["Conv3DBackpropFilter"] = {**_CONV_TOL, np.float16: dict(rtol=1e-2, atol=8e-2)}


# ---- select ops: Unique ----
# Unique and UniqueWithCounts (1-D; out_idx int32 or int64): distinct
# values in first-occurrence order, exact.
def _unique(name):
    def build(c):
        f = getattr(raw, name)
        out_idx = tf.as_dtype(c.t("out_idx", np.int32))
        cases = []
        for label, n, distinct in (("few values", 50, 4), ("all distinct", 37, 1000),
                                   ("long", 3001, 200), ("empty", 0, 1)):
            v = c.rng.integers(0, distinct, size=n)
            x = (v - 7).astype(c.T) if c.T == np.int32 else (v / 4 - 3).astype(c.T)
            cases.append((label, lambda x: f(x=x, out_idx=out_idx), [x]))
        if c.T != np.int32:
            x = np.array([0.0, -0.0, np.nan, 1.5, np.nan, -0.0, 1.5, np.inf, -np.inf, 0.0], c.T)
            cases.append(("zeros and NaN", lambda x: f(x=x, out_idx=out_idx), [x]))
        return cases
    return build


BUILDERS["Unique"] = _unique("Unique")
BUILDERS["UniqueWithCounts"] = _unique("UniqueWithCounts")


# ---- random ops: RandomUniformInt ----
# Seeded: a freshly built kernel starts PhiloxRandom(seed, seed2) on each
# device, and OPENCL draws TensorFlow's numbers from it (exact).
def _random_uniform_int(c):
    T = c.t("Tout", np.int32)
    big = np.iinfo(T)
    return [(label, lambda shape, lo, hi, s=s: raw.RandomUniformInt(
        shape=shape, minval=lo, maxval=hi, seed=s[0], seed2=s[1]),
        [np.array(shape, np.int32), np.array(lo, T), np.array(hi, T)])
        for label, shape, lo, hi, s in (
            ("small range", [3, 7], -5, 17, (7, 17)),
            ("odd length", [1031], 0, 1, (-3, 1 << 40)),
            ("full range", [5, 5], big.min, big.max, (1, 0)),
            ("empty", [0, 3], 3, 3, (7, 17)))]


BUILDERS["RandomUniformInt"] = _random_uniform_int


# Multinomial and StatelessMultinomial: TensorFlow's CPU algorithm for the
# same seed (a CPU kernel that runs as one shard: small batches), so the
# samples equal the CPU's; the statistical test in test_multinomial below
# checks the distribution itself.
def _multinomial(name):
    def build(c):
        T, out = c.T, tf.as_dtype(c.t("output_dtype", np.int64))
        cases = []
        for label, shape, n in (("one row", (1, 5), 200), ("rows", (3, 7), 9), ("no samples", (2, 3), 0)):
            logits = c.rand(*shape)
            if name == "Multinomial":
                cases.append((label, lambda x, k: raw.Multinomial(
                    logits=x, num_samples=k, seed=7, seed2=17, output_dtype=out),
                    [logits, np.array(n, np.int32)]))
            else:
                cases.append((label, lambda x, k, s: raw.StatelessMultinomial(
                    logits=x, num_samples=k, seed=s, output_dtype=out),
                    [logits, np.array(n, np.int32), np.array([3, -4], np.int64)]))
        logits = np.array([[-np.inf, 0.5, np.nan, 2, np.inf]], T)
        if name == "StatelessMultinomial":
            cases.append(("non-finite logits", lambda x, k, s: raw.StatelessMultinomial(
                logits=x, num_samples=k, seed=s, output_dtype=out),
                [logits, np.array(50, np.int32), np.array([1, 2], np.int32)]))
        return cases
    return build


BUILDERS["Multinomial"] = _multinomial("Multinomial")
BUILDERS["StatelessMultinomial"] = _multinomial("StatelessMultinomial")


# UniqueV2 and UniqueWithCountsV2: no axis (1-D), an axis over single
# values, and slices along rows, columns and a middle axis (repeated ones,
# one holding NaN).
def _unique_v2(name):
    def build(c):
        f = getattr(raw, name)
        out_idx = tf.as_dtype(c.t("out_idx", np.int32))
        call = lambda x, a: f(x=x, axis=a, out_idx=out_idx)  # noqa: E731

        def pattern(*shape):
            e = np.arange(int(np.prod(shape)))
            return np.where((e * 7 + e // 5) % 3 == 0, 1, (e * e) % 2).astype(c.T).reshape(shape)
        v = c.rng.integers(0, 6, size=40)
        x1 = (v - 2).astype(c.T) if c.T == np.int32 else (v / 4).astype(c.T)
        cases = [("no axis", call, [x1, np.array([], np.int64)]),
                 ("axis 0 of a vector", call, [x1, np.array([0], np.int32)]),
                 ("rows", call, [pattern(40, 3), np.array([0], np.int64)]),
                 ("columns", call, [pattern(3, 40), np.array([-1], np.int32)]),
                 ("middle axis", call, [pattern(2, 30, 2), np.array([1], np.int64)])]
        if c.T != np.int32:
            x = pattern(2, 30, 2)
            x[0, 4, 1] = np.nan
            cases.append(("slice with NaN", call, [x, np.array([1], np.int64)]))
        return cases
    return build


BUILDERS["UniqueV2"] = _unique_v2("UniqueV2")
BUILDERS["UniqueWithCountsV2"] = _unique_v2("UniqueWithCountsV2")

for _n in ["SparseSegmentSumGradV2", "SparseSegmentMeanGradV2", "SparseSegmentSqrtNGradV2"]:
    APPROX_OPS.add(_n)
    TOLERANCES[_n] = _SEGMENT_TOL
    BUILDERS[_n] = _sparse_segment_grad_v2(_n)

# ---- image ops: bicubic resize, crop and resize, patches, colour ----
# Values are interpolated in float on both sides; OPENCL evaluates the
# bicubic weights in float (TensorFlow's table rounds double ones), sums the
# gradients per pixel in float and rounds once (the CPU rounds each addition
# in the dtype), and converts colours in float (the CPU's half kernels round
# every step): a few float ulps, a few half ulps.
_IMAGE_TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-5, atol=1e-5),
              np.float16: dict(rtol=1e-2, atol=1e-2), BF16: dict(rtol=2e-2, atol=2e-2)}
for _n in ("ResizeBicubic", "ResizeBicubicGrad", "CropAndResize", "CropAndResizeGradImage",
           "RGBToHSV", "HSVToRGB", "AdjustContrastv2", "AdjustSaturation", "AdjustHue"):
    TOLERANCES[_n] = _IMAGE_TOL
# The box gradients sum a whole crop per coordinate, in a tree on OPENCL.
TOLERANCES["CropAndResizeGradBoxes"] = {
    np.float32: dict(rtol=1e-4, atol=1e-4), np.float64: dict(rtol=1e-4, atol=1e-4),
    np.float16: dict(rtol=1e-2, atol=1e-2)}
TOLERANCES["ExtractImagePatches"] = {**_EXACT, np.float64: dict(rtol=0, atol=0)}


def _bicubic(grad):
    def build(c):
        def case(label, x_shape, hw, **attrs):
            if grad:
                orig = c.rand(x_shape[0], hw[0], hw[1], x_shape[3])
                return (label, lambda g, o: raw.ResizeBicubicGrad(grads=g, original_image=o, **attrs),
                        [c.rand(*x_shape, dtype=np.float32), orig])
            return (label, lambda x, s: raw.ResizeBicubic(images=x, size=s, **attrs),
                    [c.rand(*x_shape), np.array(hw, np.int32)])
        return [
            case("up", (2, 5, 7, 3), (9, 11)),
            case("half pixel down", (2, 17, 13, 4), (7, 5), half_pixel_centers=True),
            case("half pixel x2", (2, 6, 6, 3), (12, 12), half_pixel_centers=True),
            case("align corners", (1, 4, 5, 2), (7, 3), align_corners=True),
            case("odd", (1, 31, 23, 3), (17, 13)),
        ]
    return build


BUILDERS["ResizeBicubic"] = _bicubic(False)
BUILDERS["ResizeBicubicGrad"] = _bicubic(True)

_CROP_BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [0.9, 0.7, 0.2, 0.1], [-0.2, -0.1, 1.3, 1.2],
                        [0.3, 0.3, 0.3, 0.6], [0.0, 0.0, 1.0, 1.0], [0.45, 0.55, 0.5, 0.6]],
                       np.float32)
_CROP_IND = np.array([0, 1, 1, 0, 1, 0], np.int32)


def _crop(name):
    def build(c):
        def case(label, img, crop, **attrs):
            n = len(_CROP_BOXES)
            if name == "CropAndResize":
                return (label, lambda x, b, i, s: raw.CropAndResize(
                            image=x, boxes=b, box_ind=i, crop_size=s, **attrs),
                        [c.rand(*img), _CROP_BOXES, _CROP_IND, np.array(crop, np.int32)])
            g = c.rand(n, crop[0], crop[1], img[3], dtype=np.float32)
            if name == "CropAndResizeGradImage":
                return (label, lambda g, b, i, s: raw.CropAndResizeGradImage(
                            grads=g, boxes=b, box_ind=i, image_size=s, T=c.T, **attrs),
                        [g, _CROP_BOXES, _CROP_IND, np.array(img, np.int32)])
            return (label, lambda g, x, b, i: raw.CropAndResizeGradBoxes(
                        grads=g, image=x, boxes=b, box_ind=i, **attrs),
                    [g, c.rand(*img), _CROP_BOXES, _CROP_IND])
        cases = [case("bilinear", (2, 7, 9, 3), (5, 4)),
                 case("1x1 crops", (2, 6, 5, 2), (1, 1)),
                 case("upsampled", (2, 5, 6, 2), (11, 13))]
        if name != "CropAndResizeGradBoxes":
            cases.append(case("nearest", (2, 7, 9, 3), (5, 4), method="nearest"))
        if name == "CropAndResize":
            cases.append(case("extrapolation", (2, 7, 9, 3), (5, 4), extrapolation_value=0.5))
        return cases
    return build


for _n in ("CropAndResize", "CropAndResizeGradImage", "CropAndResizeGradBoxes"):
    BUILDERS[_n] = _crop(_n)


def _patches(c):
    def case(label, shape, k, s, r, padding):
        return (label, lambda x: raw.ExtractImagePatches(
                    images=x, ksizes=[1, *k, 1], strides=[1, *s, 1], rates=[1, *r, 1],
                    padding=padding), [c.rand(*shape)])
    return [case("3x2 valid", (2, 7, 9, 3), (3, 2), (1, 1), (1, 1), "VALID"),
            case("strided same", (2, 7, 9, 3), (3, 2), (2, 3), (1, 1), "SAME"),
            case("rates same", (1, 8, 7, 2), (2, 3), (1, 2), (2, 2), "SAME"),
            case("rates valid", (1, 8, 7, 2), (2, 3), (3, 1), (3, 2), "VALID")]


BUILDERS["ExtractImagePatches"] = _patches


def _colour(name):
    f = getattr(raw, name)
    return lambda c: [
        ("images", lambda x: f(images=x), [np.abs(c.rand(2, 5, 7, 3)) / 2]),
        ("pixels", lambda x: f(images=x), [np.abs(c.rand(11, 3)) / 2]),
        ("edge colours", lambda x: f(images=x),
         [np.array([[0.5, 0.5, 0.5], [0.25, 0.75, 0.75], [0.75, 0.75, 0.25], [0, 0, 0],
                    [1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1]], c.T)])]


BUILDERS["RGBToHSV"] = _colour("RGBToHSV")
BUILDERS["HSVToRGB"] = _colour("HSVToRGB")

BUILDERS["AdjustContrastv2"] = lambda c: [
    ("images", lambda x, f: raw.AdjustContrastv2(images=x, contrast_factor=f),
     [c.rand(2, 5, 7, 3), np.float32(1.7)]),
    ("rank 3, negative", lambda x, f: raw.AdjustContrastv2(images=x, contrast_factor=f),
     [c.rand(9, 13, 5), np.float32(-0.5)])]
BUILDERS["AdjustSaturation"] = lambda c: [
    ("images", lambda x, s: raw.AdjustSaturation(images=x, scale=s),
     [np.abs(c.rand(2, 5, 7, 3)) / 2, np.float32(0.4)]),
    ("saturating", lambda x, s: raw.AdjustSaturation(images=x, scale=s),
     [np.abs(c.rand(9, 13, 3)) / 2, np.float32(2.5)])]
BUILDERS["AdjustHue"] = lambda c: [
    ("images", lambda x, d: raw.AdjustHue(images=x, delta=d),
     [np.abs(c.rand(2, 5, 7, 3)) / 2, np.float32(0.3)]),
    ("negative", lambda x, d: raw.AdjustHue(images=x, delta=d),
     [np.abs(c.rand(9, 13, 3)) / 2, np.float32(-0.7)])]


def _check_numerics(c):
    """Finite inputs pass through (test_numerics.py compares the messages
    of the failing ones with the CPU's)."""
    op = raw.CheckNumericsV2 if c.op == "CheckNumericsV2" else raw.CheckNumerics
    def fn(x):
        return op(tensor=x, message="finite")
    return [("finite", fn, [c.rand(7, 33, dtype=c.T)]),
            ("scalar", fn, [np.array(-0.0, c.T)])]


BUILDERS["CheckNumerics"] = _check_numerics
BUILDERS["CheckNumericsV2"] = _check_numerics


def _svd(c):
    # Singular vectors are unique only up to signs: s alone is compared
    # (the factors are on OPENCL; test_linalg_decompositions.py checks
    # them by reconstruction).
    def f(uv, full):
        return lambda x: raw.Svd(input=x, compute_uv=uv, full_matrices=full)
    return [(f"{shape} compute_uv={uv} full={full}", f(uv, full), [c.rand(*shape)],
             {"outputs": (0,), "tol": _LINALG_TOL[c.T]})
            for shape in [(4, 3), (3, 5), (2, 5, 5), (40, 33)]
            for uv, full in [(True, False), (True, True), (False, False)]]


def _self_adjoint_eig(c):
    # Eigenvectors are unique only up to signs: e alone is compared. The
    # inputs are not symmetric: only the lower triangle is read.
    def f(v):
        return lambda x: raw.SelfAdjointEigV2(input=x, compute_v=v)
    return [(f"{shape} compute_v={v}", f(v), [c.rand(*shape)],
             {"outputs": (0,), "tol": _LINALG_TOL[c.T]})
            for shape in [(1, 1), (4, 4), (2, 5, 5), (33, 33)] for v in (True, False)]


BUILDERS["Svd"] = _svd
BUILDERS["SelfAdjointEigV2"] = _self_adjoint_eig


# --- fft --------------------------------------------------------------------
# Sums of n products per output, in a different order on each side (DUCC on
# the CPU; Stockham steps or a direct DFT on OPENCL): a few ulps of the
# outputs' magnitude, which grows as sqrt(n) (test_fft.py scales by it).
_FFT_TOL = {np.complex64: dict(rtol=1e-4, atol=1e-4), np.float32: dict(rtol=1e-4, atol=1e-4),
            np.complex128: dict(rtol=1e-9, atol=1e-9), np.float64: dict(rtol=1e-9, atol=1e-9)}


def _fft_builder(name):
    """Complex transforms: a length of each kind (powers of two, others)
    over a batch; test_fft.py takes the long ones and round trips."""
    rank = int(name[-2]) if name.endswith("D") else 1
    f = getattr(raw, name)
    shapes = {1: [(3, 8), (2, 12), (5,)], 2: [(2, 4, 8), (3, 5), (6, 1)],
              3: [(2, 4, 2, 8), (3, 5, 2), (1, 1, 1)]}[rank]
    return lambda c: [(f"{shape}", lambda x: f(input=x),
                       [c.rand(*shape, dtype=c.t("Tcomplex"))]) for shape in shapes]


def _rfft_builder(name):
    """Real transforms with fft_length (host memory): exact, cropped and
    odd lengths; IRFFT from half spectra, the DC and Nyquist bins' imaginary
    parts included (TensorFlow ignores them)."""
    inverse = name.startswith("I")
    rank = int(name[-2]) if name.endswith("D") else 1
    f = getattr(raw, name)
    # (input shape, fft_length)
    cases = {
        ("RFFT", 1): [((3, 8), [8]), ((2, 10), [7]), ((1,), [1])],
        ("IRFFT", 1): [((3, 5), [8]), ((2, 6), [9]), ((4, 3), [4])],
        ("RFFT", 2): [((2, 4, 8), [4, 8]), ((5, 7), [3, 6])],
        ("IRFFT", 2): [((2, 4, 5), [4, 8]), ((5, 7), [3, 11])],
        ("RFFT", 3): [((2, 3, 4, 8), [3, 4, 8]), ((3, 4, 6), [2, 3, 5])],
        ("IRFFT", 3): [((2, 3, 4, 5), [3, 4, 8]), ((3, 4, 6), [2, 3, 9])],
    }[("IRFFT" if inverse else "RFFT", rank)]

    def build(c):
        real, cplx = c.t("Treal"), c.t("Tcomplex", np.complex64)
        extra = {"Treal": tf.as_dtype(real)} if inverse else {"Tcomplex": tf.as_dtype(cplx)}
        out = []
        for shape, n in cases:
            x = c.rand(*shape, dtype=cplx if inverse else real)
            out.append((f"{shape} fft_length {n}",
                        lambda x, n: f(input=x, fft_length=n, **extra),
                        [x, np.array(n, np.int32)]))
        return out
    return build


for _name in ("FFT", "IFFT", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D"):
    BUILDERS[_name] = _fft_builder(_name)
    TOLERANCES[_name] = _FFT_TOL
for _name in ("RFFT", "IRFFT", "RFFT2D", "IRFFT2D", "RFFT3D", "IRFFT3D"):
    BUILDERS[_name] = _rfft_builder(_name)
    TOLERANCES[_name] = _FFT_TOL
