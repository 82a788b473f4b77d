"""Linear algebra: QR, Cholesky, LU, solves, Einsum, the matrix diagonals
and band, Svd, SelfAdjointEigV2."""

import numpy as np

from ._base import BUILDERS, raw


def _qr(c):
    # q and r are compared as they are: the OPENCL kernel follows LAPACK's
    # sign convention, as TensorFlow's CPU kernel (Eigen's HouseholderQR)
    # does, and random matrices are far from rank-deficient.
    f = lambda full: (lambda x: raw.Qr(input=x, full_matrices=full))  # noqa: E731
    return [(f"{shape} full={full}", f(full), [c.rand(*shape)])
            for shape in [(4, 3), (3, 5), (2, 5, 5), (40, 33)] for full in (False, True)]


BUILDERS["Qr"] = _qr


# The factorisations and solvers (float32 and float64 on OPENCL), on
# well-conditioned matrices: SPD for Cholesky, diagonally dominant with the
# rows cycled (so partial pivoting swaps) for the LU family, near the
# identity for determinants, a dominant diagonal for triangular solves.
# Sums of up to n products in an order of their own on each side: float32
# within 1e-4 relative.
_LINALG_TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}


def _spd(c, *shape):
    n = shape[-1]
    b = c.rand(*shape).astype(np.float64)
    a = (b @ np.swapaxes(b, -1, -2) + n * np.eye(n)) / (3 * n)
    return a.astype(c.T)


def _dominant(c, *shape, near_identity=False):
    n = shape[-1]
    a = c.rand(*shape).astype(np.float64)
    eye = np.eye(n)
    a = eye + a / (2 * n) if near_identity else a + np.where(a < 0, -3.0, 3.0) * n * eye
    return np.roll(a, 1, axis=-2).astype(c.T)


def _linalg_cases(c, build):
    return [case + ({"tol": _LINALG_TOL[c.T]},) for case in build()]


def _cholesky(c):
    def not_spd(x):
        n = x.shape[-1]
        out = np.where(np.tril(np.ones((n, n), bool)), np.nan, 0.0)
        return [np.broadcast_to(out, x.shape).astype(x.dtype)]
    f = lambda x: raw.Cholesky(input=x)  # noqa: E731
    bad = np.full((2, 5, 5), 0.5) + np.diag([4.0, 4.0, -1.0, 4.0, 4.0]) - 0.5 * np.eye(5)
    return _linalg_cases(c, lambda: [
        ("1x1", f, [_spd(c, 1, 1)]), ("3x3", f, [_spd(c, 3, 3)]),
        ("17x17", f, [_spd(c, 17, 17)]), ("64x64", f, [_spd(c, 64, 64)]),
        ("batch", f, [_spd(c, 2, 3, 5, 5)]), ("empty", f, [_spd(c, 0, 3, 3)]),
        # TensorFlow's GPU kernel fills the lower triangle with NaN (its
        # CPU kernel leaves the upper one unset): checked against that.
        ("not positive definite", f, [bad.astype(c.T)],
         {"reference": ("NaN lower triangle, zero upper", not_spd)}),
    ])


def _lu_family(op, det=False, adjoint_attr=True):
    def build(c):
        def f(adjoint):
            if adjoint_attr:
                return lambda x: getattr(raw, op)(input=x, adjoint=adjoint)
            return lambda x: getattr(raw, op)(input=x)
        cases = []
        for adjoint in ((False, True) if adjoint_attr else (False,)):
            for shape in [(1, 1), (3, 3), (17, 17), (64, 64), (2, 3, 4, 4)]:
                cases.append((f"{shape} adjoint={adjoint}", f(adjoint),
                              [_dominant(c, *shape, near_identity=det)]))
        cases.append(("empty", f(False), [_dominant(c, 0, 3, 3, near_identity=det)]))
        return _linalg_cases(c, lambda: cases)
    return build


def _matrix_solve(c):
    f = lambda adj: (lambda a, b: raw.MatrixSolve(matrix=a, rhs=b, adjoint=adj))  # noqa: E731
    return _linalg_cases(c, lambda: [
        (f"{a} {b} adjoint={adj}", f(adj), [_dominant(c, *a), c.rand(*b)])
        for a, b in [((1, 1), (1, 1)), ((3, 3), (3, 2)), ((17, 17), (17, 5)),
                     ((64, 64), (64, 33)), ((2, 3, 4, 4), (2, 3, 4, 1))]
        for adj in (False, True)])


def _triangular_solve(c):
    def tri(*shape):
        n = shape[-1]
        a = c.rand(*shape).astype(np.float64)
        a = np.where(np.eye(n, dtype=bool), np.where(a < 0, -1.0, 1.0) * (n + 2), a)
        return a.astype(c.T)
    f = lambda lo, adj: (lambda a, b: raw.MatrixTriangularSolve(  # noqa: E731
        matrix=a, rhs=b, lower=lo, adjoint=adj))
    cases = [(f"{a} {b} lower={lo} adjoint={adj}", f(lo, adj), [tri(*a), c.rand(*b)])
             for a, b in [((3, 3), (3, 4)), ((17, 17), (17, 3)), ((64, 64), (64, 40)),
                          ((2, 3, 5, 5), (2, 3, 5, 2))]
             for lo in (True, False) for adj in (False, True)]
    cases += [("broadcast", f(True, False), [tri(1, 4, 4), c.rand(3, 4, 2)]),
              ("broadcast 2", f(False, True), [tri(2, 1, 4, 4), c.rand(3, 4, 2)])]
    return _linalg_cases(c, lambda: cases)


BUILDERS["Cholesky"] = _cholesky
BUILDERS["MatrixInverse"] = _lu_family("MatrixInverse")
BUILDERS["MatrixDeterminant"] = _lu_family("MatrixDeterminant", det=True, adjoint_attr=False)
BUILDERS["LogMatrixDeterminant"] = _lu_family("LogMatrixDeterminant", det=True,
                                              adjoint_attr=False)
BUILDERS["MatrixSolve"] = _matrix_solve
BUILDERS["MatrixTriangularSolve"] = _triangular_solve


def _einsum(c):
    """Keras' MultiHeadAttention and EinsumDense equations and their
    gradients', transposed and swapped outputs, broadcast ellipses, reduce
    labels, diagonals and one-operand forms; errors match the CPU's."""
    cases = [
        ("aecd,abcd->acbe", (2, 7, 3, 5), (2, 6, 3, 5)),
        ("acbe,aecd->abcd", (2, 3, 6, 7), (2, 7, 3, 5)),
        ("abc,cde->abde", (2, 6, 9), (9, 3, 5)),
        ("abcd,cde->abe", (2, 6, 3, 5), (3, 5, 9)),
        ("abde,abc->cde", (2, 6, 3, 5), (2, 6, 9)),
        ("ij,jk->ki", (33, 17), (17, 29)),
        ("ji,kj->ik", (17, 33), (29, 17)),
        ("bij,jk->bik", (3, 9, 7), (7, 5)),
        ("...ij,...jk->...ik", (2, 1, 4, 5), (3, 5, 6)),
        ("ijk,jl->il", (4, 5, 6), (5, 3)),
        ("ii,ij->ij", (4, 4), (4, 5)),
        ("i,i->", (19,), (19,)),
        ("bij,bjk->bik", (0, 3, 4), (0, 4, 5)),
        ("ij,jk->ik", (3, 0), (0, 4)),
        ("ijk->kij", (3, 4, 5), None),
        ("ijk->j", (3, 4, 5), None),
        ("ii->i", (6, 6), None),
    ]
    out = []
    for eq, a, b in cases:
        if b is None:
            out.append((eq, lambda x, eq=eq: raw.Einsum(inputs=[x], equation=eq), [c.rand(*a)]))
        else:
            out.append((eq, lambda x, y, eq=eq: raw.Einsum(inputs=[x, y], equation=eq),
                        [c.rand(*a), c.rand(*b)]))
    return out


BUILDERS["Einsum"] = _einsum


def _matrix_diag_part(c):
    """The main diagonal (Keras' Orthogonal initializer), one off it, and
    ranges of diagonals in each alignment, padded."""
    def f(align, k):
        return lambda x: raw.MatrixDiagPartV3(input=x, k=np.array(k, np.int32),
                                              padding_value=np.array(7, c.T), align=align)
    cases = [("main", f("RIGHT_LEFT", 0), [c.rand(4, 4)]),
             ("batch k=2", f("RIGHT_LEFT", 2), [c.rand(2, 7, 5)]),
             ("k=-3", f("RIGHT_LEFT", -3), [c.rand(2, 7, 5)])]
    for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
        cases.append((f"range {align}", f(align, [-2, 3]), [c.rand(2, 5, 7)]))
    return cases


BUILDERS["MatrixDiagPartV3"] = _matrix_diag_part


def _matrix_diag(c):
    """tf.linalg.diag: one diagonal, a range in each alignment, explicit
    num_rows/num_cols, padding."""
    def f(k, rows=-1, cols=-1, align="RIGHT_LEFT"):
        return lambda d: raw.MatrixDiagV3(diagonal=d, k=np.array(k, np.int32),
                                          num_rows=np.array(rows, np.int32),
                                          num_cols=np.array(cols, np.int32),
                                          padding_value=np.array(5, c.T), align=align)
    cases = [("main", f(0), [c.rand(3, 4)]), ("k=2", f(2), [c.rand(2, 3)]),
             ("k=-1 rows=5", f(-1, 5), [c.rand(2, 3)])]
    for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
        cases.append((f"range {align}", f([-1, 2], align=align), [c.rand(2, 4, 3)]))
    return cases


def _matrix_set_diag(c):
    """tf.linalg.set_diag: the main diagonal, one off it, ranges in each
    alignment."""
    def f(k, align="RIGHT_LEFT"):
        return lambda x, d: raw.MatrixSetDiagV3(input=x, diagonal=d,
                                                k=np.array(k, np.int32), align=align)
    cases = [("main", f(0), [c.rand(4, 4), c.rand(4)]),
             ("k=1 batch", f(1), [c.rand(2, 3, 5), c.rand(2, 3)])]
    for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
        cases.append((f"range {align}", f([-2, 3], align),
                      [c.rand(2, 5, 7), c.rand(2, 6, 5)]))
    return cases


def _matrix_band_part(c):
    """tf.linalg.band_part: triangles (a negative bound keeps all), bands,
    int32 and int64 bounds."""
    def f(lo, hi, t):
        return lambda x: raw.MatrixBandPart(input=x, num_lower=np.array(lo, t),
                                            num_upper=np.array(hi, t))
    return [(f"{lo},{hi} {t.__name__}", f(lo, hi, t), [c.rand(*shape)])
            for lo, hi, t, shape in [(0, -1, np.int64, (5, 5)), (-1, 0, np.int32, (5, 5)),
                                     (1, 2, np.int64, (2, 4, 7)), (3, 0, np.int32, (3, 2, 17, 9)),
                                     (0, 0, np.int64, (6, 4))]]


BUILDERS["MatrixDiagV3"] = _matrix_diag
BUILDERS["MatrixSetDiagV3"] = _matrix_set_diag
BUILDERS["MatrixBandPart"] = _matrix_band_part


def _svd(c):
    # Singular vectors are unique only up to signs: s alone is compared
    # (the factors are on OPENCL; test_linalg_decompositions.py checks
    # them by reconstruction).
    def f(uv, full):
        return lambda x: raw.Svd(input=x, compute_uv=uv, full_matrices=full)
    return [(f"{shape} compute_uv={uv} full={full}", f(uv, full), [c.rand(*shape)],
             {"outputs": (0,), "tol": _LINALG_TOL[c.T]})
            for shape in [(4, 3), (3, 5), (2, 5, 5), (40, 33)]
            for uv, full in [(True, False), (True, True), (False, False)]]


def _self_adjoint_eig(c):
    # Eigenvectors are unique only up to signs: e alone is compared. The
    # inputs are not symmetric: only the lower triangle is read.
    def f(v):
        return lambda x: raw.SelfAdjointEigV2(input=x, compute_v=v)
    return [(f"{shape} compute_v={v}", f(v), [c.rand(*shape)],
             {"outputs": (0,), "tol": _LINALG_TOL[c.T]})
            for shape in [(1, 1), (4, 4), (2, 5, 5), (33, 33)] for v in (True, False)]


BUILDERS["Svd"] = _svd
BUILDERS["SelfAdjointEigV2"] = _self_adjoint_eig
