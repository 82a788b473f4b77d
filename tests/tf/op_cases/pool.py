"""Pooling: 2-D and 3-D max and average pools with their gradients, LRN,
MaxPoolWithArgmax."""

import numpy as np

import tensorflow as tf

from ._base import APPROX_OPS, BUILDERS, TOLERANCES, _EXACT, _POOL_SUM_TOL, raw
from .conv import _call, _explicit, _fmt, _fmt4, _ncdhw, _ndhwc, _out_size, _via_nhwc


# (label, data_format, padding, ksize (h, w), strides (h, w), explicit, input (H, W))
POOL_GEOMETRIES = [
    ("NHWC VALID 2x2 s2", "NHWC", "VALID", (2, 2), (2, 2), None, (6, 7)),
    ("NHWC SAME 3x3 s2", "NHWC", "SAME", (3, 3), (2, 2), None, (7, 6)),
    ("NHWC SAME 3x2 s1", "NHWC", "SAME", (3, 2), (1, 1), None, (5, 5)),
    ("NHWC VALID 1x3 s1x2", "NHWC", "VALID", (1, 3), (1, 2), None, (4, 7)),
    ("NHWC EXPLICIT 2x2 s2", "NHWC", "EXPLICIT", (2, 2), (2, 2), ((1, 0), (0, 1)), (5, 6)),
    ("NCHW SAME 3x3 s2", "NCHW", "SAME", (3, 3), (2, 2), None, (7, 6)),
    ("NCHW VALID 2x3 s1x2", "NCHW", "VALID", (2, 3), (1, 2), None, (5, 8)),
    ("NCHW EXPLICIT 3x3 s1", "NCHW", "EXPLICIT", (3, 3), (1, 1), ((1, 1), (1, 0)), (4, 4)),
]


def _distinct(c, shape, dtype):
    """Distinct values, exact in half too: no ties in a max-pool window, so
    the gradient's route is the same whichever maximum a kernel keeps."""
    n = int(np.prod(shape))
    return ((c.rng.permutation(n) - n // 2) / 64.0).astype(dtype).reshape(shape)


def _pool_geometries(explicit):
    # AvgPool's padding takes no EXPLICIT; MaxPool's does.
    return [g for g in POOL_GEOMETRIES if explicit or g[2] != "EXPLICIT"]


def _pool_attrs(fmt, pad, k, s, ex):
    attrs = dict(ksize=_fmt4([1, k[0], k[1], 1], fmt), strides=_fmt4([1, s[0], s[1], 1], fmt),
                 padding=pad, data_format=fmt)
    if ex:
        attrs["explicit_paddings"] = _explicit(ex, fmt)
    return attrs


def _pool_out(H, W, pad, k, s, ex):
    return (_out_size(H, k[0], s[0], 1, pad, ex[0] if ex else (0, 0)),
            _out_size(W, k[1], s[1], 1, pad, ex[1] if ex else (0, 0)))


# The pooling ops: 2-D (MaxPool[V2], AvgPool, MaxPoolGrad[V2], AvgPoolGrad,
# MaxPoolGradGrad[V2]) and 3-D (MaxPool3D, AvgPool3D, MaxPool3DGrad,
# AvgPool3DGrad, MaxPool3DGradGrad). The V2 ops take ksize and strides as
# int32 inputs (host memory) instead of attributes. orig_output, where an op
# reads it, is TensorFlow's CPU MaxPool of orig_input (in float32; the
# distinct values are exact in every dtype).
_POOL_ARGS = {
    "MaxPool": (("input",), ("image",)),
    "MaxPoolV2": (("input", "ksize", "strides"), ("image", "shape", "shape")),
    "AvgPool": (("value",), ("image",)),
    "MaxPoolGrad": (("orig_input", "orig_output", "grad"), ("image",) * 3),
    "MaxPoolGradV2": (("orig_input", "orig_output", "grad", "ksize", "strides"),
                      ("image",) * 3 + ("shape", "shape")),
    "AvgPoolGrad": (("orig_input_shape", "grad"), ("shape", "image")),
    "MaxPoolGradGrad": (("orig_input", "orig_output", "grad"), ("image",) * 3),
    "MaxPoolGradGradV2": (("orig_input", "orig_output", "grad", "ksize", "strides"),
                          ("image",) * 3 + ("shape", "shape")),
    "MaxPool3D": (("input",), ("image",)),
    "AvgPool3D": (("input",), ("image",)),
    "MaxPool3DGrad": (("orig_input", "orig_output", "grad"), ("image",) * 3),
    "AvgPool3DGrad": (("orig_input_shape", "grad"), ("shape", "image")),
    "MaxPool3DGradGrad": (("orig_input", "orig_output", "grad"), ("image",) * 3),
}


def _call_v2(name, argnames):
    """Like _call, with the V2 ops' ksize and strides moved from the
    attributes to the trailing inputs (the case supplies them)."""
    f = getattr(raw, name)
    if "V2" not in name:
        return _call(name, *argnames)

    def make(attrs):
        a = {k: v for k, v in attrs.items() if k not in ("ksize", "strides")}
        return lambda *t: f(**dict(zip(argnames, t)), **a)
    return make


def _pool(name):
    maxpool = name.startswith("Max")
    argnames, kinds = _POOL_ARGS[name]
    make = _call_v2(name, argnames)

    def build(c):
        cases = []
        for label, fmt, pad, k, s, ex, (H, W) in _pool_geometries(maxpool and "V2" not in name
                                                                 and "GradGrad" not in name):
            attrs = _pool_attrs(fmt, pad, k, s, ex)
            OH, OW = _pool_out(H, W, pad, k, s, ex)
            x = _distinct(c, (2, H, W, 3), c.T) if maxpool else c.rand(2, H, W, 3)
            if maxpool and name not in ("MaxPool", "MaxPoolV2"):
                with tf.device("/CPU:0"):
                    y = raw.MaxPool(input=tf.constant(x.astype(np.float32)),
                                    **_pool_attrs("NHWC", pad, k, s, ex)).numpy().astype(c.T)
                g = c.rand(2, H, W, 3) if "GradGrad" in name else c.rand(2, OH, OW, 3)
                inputs = [x, y, g]
            elif name == "AvgPoolGrad":
                inputs = [np.array(_fmt4([2, H, W, 3], fmt), np.int32), c.rand(2, OH, OW, 3)]
            else:
                inputs = [x]
            if "V2" in name:
                inputs += [np.array(attrs["ksize"], np.int32), np.array(attrs["strides"], np.int32)]
            inputs = [_fmt(a, fmt) if kind == "image" else a for kind, a in zip(kinds, inputs)]
            cases.append((label, make(attrs), inputs, {"fallback": _via_nhwc(make, attrs, kinds)}))
        if maxpool and name not in ("MaxPool", "MaxPoolV2"):
            # Ties: the CPU kernels' tie rules (the first maximum; within
            # 1e-5 in MaxPool3DGrad, every one) on many equal values.
            cases += _pool_ties(c, name, make, kinds)
        return cases
    return build


def _pool_ties(c, name, make, kinds):
    three = "3D" in name
    shape = (2, 3, 5, 4, 2) if three else (2, 5, 4, 2)
    x = (np.arange(int(np.prod(shape))) % 3).astype(c.T).reshape(shape)
    k = [1, 2, 2, 2, 1] if three else [1, 2, 2, 1]
    attrs = dict(ksize=k, strides=[1] * len(k), padding="SAME",
                 data_format="NDHWC" if three else "NHWC")
    pool = raw.MaxPool3D if three else raw.MaxPool
    with tf.device("/CPU:0"):
        y = pool(input=tf.constant(x.astype(np.float32)), **attrs).numpy().astype(c.T)
    g = c.rand(*shape) if "GradGrad" in name else c.rand(*y.shape)
    inputs = [x, y, g]
    if "V2" in name:
        inputs += [np.array(k, np.int32), np.array([1] * len(k), np.int32)]
    return [("NHWC ties 2x2 SAME", make(attrs), inputs)]


def _5d(v, fmt):
    """A per-dimension attribute or shape given in NDHWC order, in fmt's."""
    v = [int(a) for a in v]
    return [v[0], v[4], v[1], v[2], v[3]] if fmt == "NCDHW" else v


def _pool_via_ndhwc(make, attrs, kinds):
    """_via_nhwc for the 3-D ops: TensorFlow's CPU kernel on the NDHWC
    transposes (half computed in float32: the CPU has no half kernel)."""
    fmt = attrs["data_format"]
    a = dict(attrs, data_format="NDHWC")
    if fmt == "NCDHW":
        for key in ("ksize", "strides"):
            v = attrs[key]
            a[key] = [v[0], v[2], v[3], v[4], v[1]]
    fn = make(a)

    def ref(*inputs):
        args, half = [], False
        for kind, x in zip(kinds, inputs):
            if kind == "image":
                half |= x.dtype == np.float16
                x = x.astype(np.float32) if x.dtype == np.float16 else x
                if fmt == "NCDHW":
                    x = _ndhwc(x)
            elif kind == "shape" and fmt == "NCDHW":
                x = np.array([x[0], x[2], x[3], x[4], x[1]], x.dtype)
            args.append(tf.constant(x))
        with tf.device("/CPU:0"):
            out = fn(*args).numpy()
        if half:
            out = out.astype(np.float16)
        return [_ncdhw(out) if fmt == "NCDHW" else out]
    return ("TensorFlow's CPU kernel" + (" on the NDHWC transposes, transposed back"
                                         if fmt == "NCDHW" else "")), ref


# (label, data_format, padding, ksize (d, h, w), strides (d, h, w), input (D, H, W))
POOL3D_GEOMETRIES = [
    ("NDHWC VALID 2x2x2 s2", "NDHWC", "VALID", (2, 2, 2), (2, 2, 2), (4, 5, 6)),
    ("NDHWC SAME 3x3x2 s2x1x2", "NDHWC", "SAME", (3, 3, 2), (2, 1, 2), (3, 5, 5)),
    ("NDHWC SAME 1x3x3 s1", "NDHWC", "SAME", (1, 3, 3), (1, 1, 1), (2, 4, 5)),
    ("NCDHW SAME 2x3x3 s2", "NCDHW", "SAME", (2, 3, 3), (2, 2, 2), (3, 6, 5)),
    ("NCDHW VALID 3x2x2 s1x2x1", "NCDHW", "VALID", (3, 2, 2), (1, 2, 1), (4, 4, 5)),
]


def _pool3d(name):
    maxpool = name.startswith("Max")
    argnames, kinds = _POOL_ARGS[name]
    make = _call(name, *argnames)

    def build(c):
        cases = []
        for label, fmt, pad, k, s, (D, H, W) in POOL3D_GEOMETRIES:
            attrs = dict(ksize=_5d([1, *k, 1], fmt), strides=_5d([1, *s, 1], fmt), padding=pad,
                         data_format=fmt)
            out = [_out_size(n, kk, ss, 1, pad) for n, kk, ss in zip((D, H, W), k, s)]
            shape, oshape = (2, D, H, W, 2), (2, *out, 2)
            x = _distinct(c, shape, c.T) if maxpool else c.rand(*shape)
            if maxpool and name != "MaxPool3D":
                with tf.device("/CPU:0"):
                    y = raw.MaxPool3D(input=tf.constant(x.astype(np.float32)),
                                      ksize=[1, *k, 1], strides=[1, *s, 1],
                                      padding=pad).numpy().astype(c.T)
                g = c.rand(*shape) if "GradGrad" in name else c.rand(*oshape)
                inputs = [x, y, g]
            elif name == "AvgPool3DGrad":
                inputs = [np.array(_5d(shape, fmt), np.int32), c.rand(*oshape)]
            else:
                inputs = [x]
            if fmt == "NCDHW":
                inputs = [_ncdhw(a) if kind == "image" else a for kind, a in zip(kinds, inputs)]
            cases.append((label, make(attrs), inputs, {"fallback": _pool_via_ndhwc(make, attrs, kinds)}))
        if name in ("MaxPool3DGrad", "MaxPool3DGradGrad"):
            cases += _pool_ties(c, name, make, kinds)
        return cases
    return build


for _n in ("MaxPool", "MaxPoolV2", "AvgPool", "MaxPoolGrad", "MaxPoolGradV2", "AvgPoolGrad",
           "MaxPoolGradGrad", "MaxPoolGradGradV2"):
    BUILDERS[_n] = _pool(_n)
for _n in ("MaxPool3D", "AvgPool3D", "MaxPool3DGrad", "AvgPool3DGrad", "MaxPool3DGradGrad"):
    BUILDERS[_n] = _pool3d(_n)


# ---- pool misc ops ----
# LRN and LRNGrad: TensorFlow's CPU kernels' arithmetic (OPENCL computes
# half in float, the CPU in half: a few half ulps apart).
APPROX_OPS |= {"LRN", "LRNGrad"}
TOLERANCES["LRN"] = {np.float16: dict(rtol=1e-2, atol=1e-2)}
TOLERANCES["LRNGrad"] = {np.float32: dict(rtol=1e-4, atol=1e-4),
                         np.float16: dict(rtol=2e-2, atol=2e-2)}
_LRN_ATTRS = [("defaults", {}),
              ("AlexNet", dict(depth_radius=2, bias=2.0, alpha=1e-4, beta=0.75)),
              ("beta 1", dict(depth_radius=1, bias=1.0, alpha=0.5, beta=1.0)),
              ("radius beyond depth", dict(depth_radius=9, bias=1.5, alpha=0.1, beta=0.6))]


def _lrn(c):
    return [(label, lambda x, a=a: raw.LRN(input=x, **a), [c.rand(2, 3, 4, 7)])
            for label, a in _LRN_ATTRS]


def _lrn_grad(c):
    cases = []
    for label, a in _LRN_ATTRS:
        x = c.rand(2, 3, 4, 7)
        with tf.device("/CPU:0"):
            y = raw.LRN(input=tf.constant(x), **a).numpy()
        cases.append((label, lambda g, x, y, a=a: raw.LRNGrad(
            input_grads=g, input_image=x, output_image=y, **a), [c.rand(2, 3, 4, 7), x, y]))
    return cases


BUILDERS["LRN"] = _lrn
BUILDERS["LRNGrad"] = _lrn_grad


# MaxPoolWithArgmax and its gradients (NHWC; an int64 argmax, with and
# without the batch in the index). The gradients take the argmax
# TensorFlow's CPU MaxPoolWithArgmax gives; MaxPoolGradGradWithArgmax has
# no CPU kernel: numpy gathers the gradient at each argmax.
TOLERANCES["MaxPoolWithArgmax"] = _EXACT
TOLERANCES["MaxPoolGradGradWithArgmax"] = _EXACT
TOLERANCES["MaxPoolGradWithArgmax"] = {**_POOL_SUM_TOL, np.float16: dict(rtol=2e-3, atol=2e-3)}
_ARGMAX_GEOMETRIES = [("2x2/2 VALID", [1, 2, 2, 1], [1, 2, 2, 1], "VALID", (5, 7)),
                      ("3x3/2 SAME", [1, 3, 3, 1], [1, 2, 2, 1], "SAME", (7, 6)),
                      ("3x2/1 SAME", [1, 3, 2, 1], [1, 1, 1, 1], "SAME", (4, 5))]


def _argmax_cases(c, name):
    cases = []
    for label, k, s, pad, (H, W) in _ARGMAX_GEOMETRIES:
        for batch_in_index in (False, True):
            attrs = dict(ksize=k, strides=s, padding=pad, include_batch_in_index=batch_in_index)
            x = _distinct(c, (2, H, W, 3), c.T)
            lbl = label + (" batch in index" if batch_in_index else "")
            if name == "MaxPoolWithArgmax":
                cases.append((lbl, lambda x, a=attrs: raw.MaxPoolWithArgmax(
                    input=x, Targmax=tf.int64, **a), [x]))
                continue
            with tf.device("/CPU:0"):
                y, arg = raw.MaxPoolWithArgmax(input=tf.constant(x.astype(np.float32)),
                                               Targmax=tf.int64, **attrs)
            arg = arg.numpy()
            if name == "MaxPoolGradWithArgmax":
                g = c.rand(*y.shape)
                cases.append((lbl, lambda x, g, a_, a=attrs: raw.MaxPoolGradWithArgmax(
                    input=x, grad=g, argmax=a_, **a), [x, g, arg]))
                continue
            g = c.rand(2, H, W, 3)

            def ref(x, g, a_, batch_in_index=batch_in_index):
                base = 0 if batch_in_index else (np.arange(a_.shape[0]) * int(np.prod(x.shape[1:])))
                idx = a_ + np.reshape(base, (-1, 1, 1, 1))
                return [g.reshape(-1)[idx]]
            cases.append((lbl, lambda x, g, a_, a=attrs: raw.MaxPoolGradGradWithArgmax(
                input=x, grad=g, argmax=a_, **a), [x, g, arg],
                {"reference": ("numpy: grad at each argmax (no CPU kernel)", ref)}))
    return cases


for _name in ("MaxPoolWithArgmax", "MaxPoolGradWithArgmax", "MaxPoolGradGradWithArgmax"):
    BUILDERS[_name] = lambda c, _name=_name: _argmax_cases(c, _name)
