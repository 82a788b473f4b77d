"""The complex family's own ops (kernels/complex.c): Complex, Real, Imag,
Conj, ComplexAbs, Angle. Its complex kernels of AddV2, Mul, ... use the
binary and unary modules' builders of those ops (Exp with a tolerance of its
own for complex dtypes). test_complex.py has the special values and
broadcasts."""
import numpy as np

from ._base import BUILDERS, TOLERANCES, raw

_REAL = {np.complex64: np.float32, np.complex128: np.float64}
# hypot and atan2: a few ulps apart between OpenCL's libm and the CPU's.
_ROUNDED = {t: dict(rtol=2e-6, atol=1e-7) for t in (np.complex64, np.float32)}
_ROUNDED.update({t: dict(rtol=1e-12, atol=1e-14) for t in (np.complex128, np.float64)})


def _parts(name):
    f = getattr(raw, name)

    def build(c):
        tout = c.t("Tout", _REAL[c.T])
        x = c.rand(3, 67)
        edges = np.array([0j, complex(-0.0, 0.0), complex(-1, -0.0), 3e38 + 3e38j,
                          complex(np.inf, np.nan), 1e-30 - 2e-30j], c.T)
        return [("[3,67]", lambda x: f(input=x, Tout=tout), [x]),
                ("edges", lambda x: f(input=x, Tout=tout), [edges]),
                ("scalar", lambda x: f(input=x, Tout=tout), [c.rand()])]
    return build


def _complex_abs(c):
    tout = c.t("Tout", _REAL[c.T])
    edges = np.array([3e38 + 3e38j, complex(np.inf, np.nan), -1e-30 + 0j], c.T)
    return [("[3,67]", lambda x: raw.ComplexAbs(x=x, Tout=tout), [c.rand(3, 67)]),
            ("edges", lambda x: raw.ComplexAbs(x=x, Tout=tout), [edges])]


def _conj(c):
    return [("[3,67]", lambda x: raw.Conj(input=x), [c.rand(3, 67)]),
            ("scalar", lambda x: raw.Conj(input=x), [c.rand()])]


def _complex(c):
    tout = c.t("Tout", np.complex64 if c.T == np.float32 else np.complex128)
    f = lambda re, im: raw.Complex(real=re, imag=im, Tout=tout)  # noqa: E731
    return [("[3,5]", f, [c.rand(3, 5), c.rand(3, 5)]),
            ("scalar real", f, [c.rand(), c.rand(4, 6)]),
            ("[5,1] by [1,6]", f, [c.rand(5, 1), c.rand(1, 6)])]


BUILDERS.update({
    "Real": _parts("Real"),
    "Imag": _parts("Imag"),
    "Angle": _parts("Angle"),
    "ComplexAbs": _complex_abs,
    "Conj": _conj,
    "Complex": _complex,
})
TOLERANCES.update({"Angle": _ROUNDED, "ComplexAbs": _ROUNDED})
# Complex exp: exp, sin and cos of OpenCL's libm against Eigen's, a few ulps
# each (complex dtypes are otherwise compared exactly).
TOLERANCES.setdefault("Exp", {}).update({
    np.complex64: dict(rtol=2e-6, atol=1e-7),
    np.complex128: dict(rtol=1e-12, atol=1e-14)})
