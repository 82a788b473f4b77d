"""Unary element-wise ops, the activations and their gradients, Cast."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, _one, raw


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
