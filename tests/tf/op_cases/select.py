"""Unique and its variants."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, raw


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
