"""Binary element-wise ops, bitwise ops, BiasAdd, AddN, NoOp."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, _one, raw


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
