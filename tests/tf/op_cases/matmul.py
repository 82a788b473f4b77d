"""MatMul, the batched matmuls and _FusedMatMul."""

import numpy as np

from ._base import BUILDERS, raw


def _matmul(c):
    f = lambda ta, tb: (lambda a, b: raw.MatMul(a=a, b=b, transpose_a=ta, transpose_b=tb))
    return [
        ("NN", f(False, False), [c.rand(3, 4), c.rand(4, 5)]),
        ("TN", f(True, False), [c.rand(4, 3), c.rand(4, 5)]),
        ("NT", f(False, True), [c.rand(3, 4), c.rand(5, 4)]),
        ("TT", f(True, True), [c.rand(4, 3), c.rand(5, 4)]),
        ("64x130x33", f(False, False), [c.rand(64, 130), c.rand(130, 33)]),
    ]


def _bmm(name):
    def build(c):
        Ta, Tb = c.t("Ta", c.T), c.t("Tb", c.T)
        g = getattr(raw, name)
        f = g
        if name == "BatchMatMulV3":  # Tout follows x (a half reference runs in float32)
            f = lambda x, y, **kw: g(x=x, y=y, Tout=x.dtype, **kw)  # noqa: E731
        kw = {}
        cases = [("batch", lambda x, y: f(x=x, y=y, **kw), [c.rand(2, 3, 4, dtype=Ta), c.rand(2, 4, 5, dtype=Tb)]),
                 ("adj", lambda x, y: f(x=x, y=y, adj_x=True, adj_y=True, **kw),
                  [c.rand(2, 4, 3, dtype=Ta), c.rand(2, 5, 4, dtype=Tb)])]
        if name != "BatchMatMul":
            cases.append(("broadcast", lambda x, y: f(x=x, y=y, **kw),
                          [c.rand(2, 1, 3, 4, dtype=Ta), c.rand(3, 4, 5, dtype=Tb)]))
        return cases
    return build


BUILDERS["MatMul"] = _matmul
for _n in ["BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"]:
    BUILDERS[_n] = _bmm(_n)


def _fused_matmul_call(fused_ops, transpose_a=False, transpose_b=False, leakyrelu_alpha=0.2):
    """fn(a, b, bias) running _FusedMatMul, an internal op that tf.raw_ops
    leaves out: through the eager executor directly."""
    from tensorflow.python.eager import context, execute

    def fn(a, b, bias):
        attrs = ("transpose_a", transpose_a, "transpose_b", transpose_b,
                 "T", a.dtype.as_datatype_enum, "num_args", 1,
                 "fused_ops", fused_ops, "epsilon", 1e-4, "leakyrelu_alpha", leakyrelu_alpha)
        return execute.execute(b"_FusedMatMul", 1, inputs=[a, b, bias], attrs=attrs,
                               ctx=context.context())[0]
    return fn


_FUSED_NUMPY = {
    "Tanh": np.tanh,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "GeluApproximate": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "GeluExact": lambda x: 0.5 * x * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2))),
}


def _fused_numpy(act, ta, tb):
    """A float64 numpy _FusedMatMul (BiasAdd + act), rounded to the inputs'
    type."""
    def ref(a, b, bias):
        x = a.astype(np.float64).T if ta else a.astype(np.float64)
        y = b.astype(np.float64).T if tb else b.astype(np.float64)
        return [_FUSED_NUMPY[act](x @ y + bias.astype(np.float64)).astype(a.dtype)]
    return ref


def _fused_matmul(c):
    # TensorFlow's CPU kernel takes BiasAdd with Relu, Relu6, Elu and
    # LeakyRelu (Eigen's) and, depending on the case, more through oneDNN:
    # the other activations are checked against numpy. It aborts the
    # process on num_args 0 and on K == 0, so the failing and empty cases
    # live in the C ops suite only. Half has no CPU kernel: the test
    # computes it in float32.
    cases = [("BiasAdd", _fused_matmul_call(["BiasAdd"]), [c.rand(3, 4), c.rand(4, 5), c.rand(5)]),
             ("BiasAdd 70x37x45", _fused_matmul_call(["BiasAdd"]),
              [c.rand(70, 37), c.rand(37, 45), c.rand(45)])]
    for i, act in enumerate(["Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid",
                             "GeluApproximate", "GeluExact"]):
        ta, tb = bool(i & 1), bool(i & 2)
        a = c.rand(37, 33) if ta else c.rand(33, 37)
        b = c.rand(20, 37) if tb else c.rand(37, 20)
        case = (f"BiasAdd+{act} ta={ta} tb={tb}", _fused_matmul_call(["BiasAdd", act], ta, tb),
                [a, b, c.rand(20)])
        if act in _FUSED_NUMPY:
            case += ({"reference": (f"numpy BiasAdd + {act}", _fused_numpy(act, ta, tb))},)
        cases.append(case)
    cases.append(("BiasAdd+LeakyRelu alpha=0.3",
                  _fused_matmul_call(["BiasAdd", "LeakyRelu"], leakyrelu_alpha=0.3),
                  [c.rand(9, 12), c.rand(12, 7), c.rand(7)]))
    return cases


BUILDERS["_FusedMatMul"] = _fused_matmul
