"""The FFT ops."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, TOLERANCES, raw


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
