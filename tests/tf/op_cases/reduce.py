"""Reductions, ArgMax/ArgMin, softmax and the cross-entropies."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, _one, raw


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
