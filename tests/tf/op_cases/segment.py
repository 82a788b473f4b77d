"""Sorted and sparse segment reductions with their gradients, Bincount."""

import numpy as np

from ._base import APPROX_OPS, BF16, BUILDERS, TOLERANCES, raw
from .movement import _i


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


for _n in ["SparseSegmentSumGradV2", "SparseSegmentMeanGradV2", "SparseSegmentSqrtNGradV2"]:
    APPROX_OPS.add(_n)
    TOLERANCES[_n] = _SEGMENT_TOL
    BUILDERS[_n] = _sparse_segment_grad_v2(_n)
