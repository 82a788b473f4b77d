"""CheckNumerics."""

import numpy as np

from ._base import BUILDERS, raw


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
