"""Special functions (Bessel, incomplete gamma and beta, zeta, polygamma) and
the unary and binary ops added beside them: PopulationCount, SoftsignGrad,
ClipByValue, ApproximateEqual, TruncateMod, and TruncateDiv again
(replacing binary's)."""

import numpy as np

from ._base import APPROX_OPS, BUILDERS, TOLERANCES, raw


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
