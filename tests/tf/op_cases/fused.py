"""_TfoclFusedElementwise, the plugin's own op."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS


# _TfoclFusedElementwise, the plugin's own op (kernels/fused.c; the graph
# optimizer writes it, tf.raw_ops has no wrapper): run through eager
# execution of the registered op. TensorFlow has no CPU kernel for it: the
# reference is numpy, each op computed in float32 and rounded to the
# value's dtype, as the op's program defines (kernels/fused_program.h).
def _fused(program, constants, out_type, tiles=None):
    from tensorflow.python.eager import context, execute

    def fn(*xs):
        attrs = ("Targs", [x.dtype.as_datatype_enum for x in xs],
                 "T", tf.as_dtype(out_type).as_datatype_enum,
                 "program", program, "constants", constants)
        op = "_TfoclFusedElementwise"
        if tiles is not None:
            attrs += ("tiles", tiles)
            op += "Tiled"
        return execute.execute(op, 1, list(xs), attrs, context.context())[0]
    return fn


def _fused_elementwise(c):
    T = c.T
    enum = tf.as_dtype(T).as_datatype_enum
    r = lambda v: np.asarray(v, np.float32).astype(T).astype(np.float32)  # noqa: E731
    adam = [41, 1, 0, 1, 0, enum, 42, 2, 3, 40, 0, 4]   # m + (grad - m) * 0.1

    def adam_ref(m, grad):
        m, grad = m.astype(np.float32), grad.astype(np.float32)
        return [r(m + r(r(grad - m) * r(0.1))).astype(T)]

    act = [40, 0, 1, 20, 2, -1, 19, 0, -1, 42, 3, 4]   # relu(x + b) * sigmoid(x)

    def act_ref(x, b):
        x, b = x.astype(np.float32), b.astype(np.float32)
        sig = r(1.0 / (1.0 + np.exp(-x)))
        return [r(r(np.maximum(r(x + b), 0)) * sig).astype(T)]

    cases = [
        ("adam m", _fused(adam, [0.1], T), [c.rand(5, 7), c.rand(5, 7)],
         {"reference": ("numpy, rounded per op", adam_ref)}),
        ("broadcast activations", _fused(act, [], T), [c.rand(3, 5, 4), c.rand(4)],
         {"reference": ("numpy, rounded per op", act_ref),
          "tol": dict(rtol=1e-5, atol=1e-6) if T == np.float32 else None}),
    ]
    if T == np.float32:
        # half x, float y: float(half(float(x) * y) + x)
        mixed = [2, 0, 1, 42, 2, 1, 2, 3, 19, 40, 4, 0, 2, 5, 1]

        def mixed_ref(x, y):
            h = lambda v: np.asarray(v, np.float32).astype(np.float16).astype(np.float32)  # noqa: E731
            xf = x.astype(np.float32)
            return [h(h(xf * y) + xf)]
        cases.append(("half and float", _fused(mixed, [], np.float32),
                      [c.rand(6, dtype=np.float16), c.rand(6, dtype=np.float32)],
                      {"reference": ("numpy, rounded per op", mixed_ref)}))
    return cases


BUILDERS["_TfoclFusedElementwise"] = _fused_elementwise


def _fused_elementwise_tiled(c):
    """The tiled op: (a - b) * c + b with b standing for np.tile(b, m)."""
    T = c.T
    r = lambda v: np.asarray(v, np.float32).astype(T).astype(np.float32)  # noqa: E731
    program = [41, 0, 1, 42, 3, 2, 40, 4, 1]

    def ref(m):
        def f(a, b, w):
            a, w = a.astype(np.float32), w.astype(np.float32)
            bt = np.tile(b.astype(np.float32), m)
            return [r(r(r(a - bt) * w) + bt).astype(T)]
        return f
    cases = []
    for what, b_shape, m in (("broadcast", (1, 1, 1, 8), [4, 5, 6, 1]),
                             ("repeat", (2, 1, 3, 8), [2, 5, 2, 1])):
        tiles = [0, 4, *m, 0]
        cases.append((what, _fused(program, [], T, tiles),
                      [c.rand(4, 5, 6, 8), c.rand(*b_shape), c.rand(4, 5, 6, 8)],
                      {"reference": ("numpy np.tile, rounded per op", ref(m))}))
    return cases


BUILDERS["_TfoclFusedElementwiseTiled"] = _fused_elementwise_tiled
