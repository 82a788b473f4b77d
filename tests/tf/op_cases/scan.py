"""Cumsum, Cumprod, CumulativeLogsumexp."""

import numpy as np

from ._base import BF16, BUILDERS, raw


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
