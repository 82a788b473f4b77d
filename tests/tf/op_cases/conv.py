"""Convolutions: Conv2D, depthwise, Conv3D (V2 and V1) and their
gradients, _FusedConv2D."""

import numpy as np

import tensorflow as tf

from ._base import BF16, BUILDERS, TOLERANCES, _CONV_TOL, raw


# --- 2-D convolutions --------------------------------------------------------
# Every geometry runs in both layouts the op takes: the NHWC tensors are
# drawn, then transposed for NCHW (attributes reordered to match).
#
# TensorFlow's CPU kernels refuse some of these cases, depending on the op
# and the dtype (oneDNN takes float32 NCHW where Eigen's kernels do not):
# NCHW for MaxPool, MaxPoolGrad, AvgPool(Grad) and half Conv2D/backprops,
# FusedBatchNormGradV3 inference in NCHW, and dilations > 1 in the
# convolution gradients. Such a case carries a "fallback" reference, used
# only when the CPU refuses it with one of CPU_REFUSALS: TensorFlow's own
# CPU kernel on the NHWC transposes of the inputs (result transposed back),
# and for dilations the same convolution with the filter dilated by zero
# taps (dilation 1; the filter gradient then keeps every dilation-th tap).
CPU_REFUSALS = (
    "only supports NHWC",
    "only supports NDHWC",
    "only supportsNDHWC",  # MaxPool3DGradGrad's CPU kernel (sic)
    "only supports the NHWC tensor format",
    "only support NHWC tensor format",
    "do not yet support dilation rates larger than 1",
    "only supported for NHWC format",
    "does not yet support dilation rates larger than 1",
    "only supports dilated rates of 1",
    # Pad and Slice of more than 8 dims: the plugin takes any rank.
    "inputs rank not in [0,8]",
    "SliceOp : Unhandled input dimensions",
)


def _nchw(a):
    return np.ascontiguousarray(np.transpose(a, (0, 3, 1, 2)))


def _nhwc(a):
    return np.ascontiguousarray(np.transpose(a, (0, 2, 3, 1)))


def _fmt(a, fmt):
    return _nchw(a) if fmt == "NCHW" else a


def _fmt4(nhwc, fmt):
    """A per-dimension attribute (strides, ksize, dilations, a shape) given
    in NHWC order, in `fmt`'s order."""
    n, h, w, c = nhwc
    return [n, c, h, w] if fmt == "NCHW" else [n, h, w, c]


def _nhwc4(v, fmt):
    """The inverse of _fmt4."""
    v = [int(a) for a in v]
    return [v[0], v[2], v[3], v[1]] if fmt == "NCHW" else v


def _explicit(pads, fmt):
    """((top, bottom), (left, right)) as explicit_paddings in `fmt`'s order."""
    (t, b), (l, r) = pads
    return [0, 0, 0, 0, t, b, l, r] if fmt == "NCHW" else [0, 0, t, b, l, r, 0, 0]


def _out_size(n, k, s, d, padding, pads=(0, 0)):
    ke = (k - 1) * d + 1
    if padding == "SAME":
        return -(-n // s)
    if padding == "VALID":
        return (n - ke) // s + 1
    return (n + pads[0] + pads[1] - ke) // s + 1


def _nhwc_attrs(attrs):
    """The same op's attributes for NHWC (and dilation 1, filters dilated)."""
    fmt = attrs.get("data_format", "NHWC")
    a = dict(attrs, data_format="NHWC")
    for k in ("ksize", "strides"):
        if k in a:
            a[k] = _nhwc4(a[k], fmt)
    if "dilations" in a:
        a["dilations"] = [1, 1, 1, 1]
    if "explicit_paddings" in a and fmt == "NCHW":
        e = a["explicit_paddings"]
        a["explicit_paddings"] = [0, 0, e[4], e[5], e[6], e[7], 0, 0]
    return a


def _via_nhwc(make, attrs, kinds, images_out=(0,)):
    """A fallback reference: `make(attrs)` is the case's op call; run it on
    the CPU in NHWC. kinds, per input: "image" (transposed), "shape" (a 4-D
    shape, reordered), "filter" (dilated by zero taps), "filter_sizes" (the
    dilated filter's size; the result keeps every dilation-th tap) or None."""
    fmt = attrs.get("data_format", "NHWC")
    dil = _nhwc4(attrs.get("dilations", [1, 1, 1, 1]), fmt)
    dh, dw = dil[1], dil[2]
    dilated = dh > 1 or dw > 1
    fn = make(_nhwc_attrs(attrs))
    why = ("TensorFlow's CPU kernel " + ("on the NHWC transposes, transposed back" if fmt == "NCHW" else "")
           + (" and " if fmt == "NCHW" and dilated else "")
           + ("with the filter dilated by zero taps (dilation 1)" if dilated else ""))

    def ref(*inputs):
        args, sub = [], False
        for kind, x in zip(kinds, inputs):
            if kind == "image" and fmt == "NCHW":
                x = _nhwc(x)
            elif kind == "shape":
                x = np.array(_nhwc4(x, fmt), x.dtype)
            elif kind == "filter" and dilated:
                w = np.zeros(((x.shape[0] - 1) * dh + 1, (x.shape[1] - 1) * dw + 1) + x.shape[2:], x.dtype)
                w[::dh, ::dw] = x
                x = w
            elif kind == "filter_sizes" and dilated:
                x = np.array([(x[0] - 1) * dh + 1, (x[1] - 1) * dw + 1, x[2], x[3]], x.dtype)
                sub = True
            args.append(tf.constant(x))
        with tf.device("/CPU:0"):
            out = fn(*args)
        out = [t.numpy() for t in (out if isinstance(out, (list, tuple)) else [out])]
        if sub:
            out = [o[::dh, ::dw] for o in out]
        return [_nchw(o) if i in images_out and fmt == "NCHW" else o for i, o in enumerate(out)]
    return why, ref


def _call(name, *argnames):
    """make(attrs) -> fn(*tensors) calling raw.<name> with those attrs."""
    f = getattr(raw, name)
    return lambda attrs: (lambda *t: f(**dict(zip(argnames, t)), **attrs))


# (label, data_format, padding, strides (h, w), dilations (h, w),
#  explicit paddings ((top, bottom), (left, right)), input (H, W), filter (KH, KW))
CONV_GEOMETRIES = [
    ("NHWC SAME", "NHWC", "SAME", (1, 1), (1, 1), None, (5, 6), (3, 3)),
    ("NHWC VALID s2", "NHWC", "VALID", (2, 2), (1, 1), None, (7, 6), (3, 2)),
    ("NHWC SAME s2x1 d1x2", "NHWC", "SAME", (2, 1), (1, 2), None, (6, 7), (2, 3)),
    ("NHWC VALID d2", "NHWC", "VALID", (1, 1), (2, 2), None, (7, 7), (3, 3)),
    ("NHWC SAME s2 d2", "NHWC", "SAME", (2, 2), (2, 2), None, (6, 7), (2, 3)),
    ("NHWC EXPLICIT s1x2", "NHWC", "EXPLICIT", (1, 2), (1, 1), ((1, 2), (0, 1)), (5, 6), (3, 3)),
    ("NHWC EXPLICIT s2", "NHWC", "EXPLICIT", (2, 2), (1, 1), ((2, 0), (1, 1)), (5, 6), (3, 3)),
    ("NHWC 1x1", "NHWC", "VALID", (1, 1), (1, 1), None, (4, 5), (1, 1)),
    ("NCHW SAME s2", "NCHW", "SAME", (2, 2), (1, 1), None, (6, 5), (3, 3)),
    ("NCHW VALID d2x1", "NCHW", "VALID", (1, 1), (2, 1), None, (7, 6), (2, 3)),
    ("NCHW EXPLICIT", "NCHW", "EXPLICIT", (1, 1), (1, 1), ((0, 1), (2, 1)), (4, 5), (2, 2)),
    ("NCHW 1x1", "NCHW", "VALID", (1, 1), (1, 1), None, (4, 5), (1, 1)),
]


# bfloat16 results compared in float32 (numpy has no bfloat16 arithmetic):
# computed in float and rounded once on OPENCL, by TensorFlow's CPU kernel
# in float32 from the same inputs and rounded once too; summed in another
# order, they sit within an ulp (2^-7 relative) of each other.
_BF16_TOL = dict(rtol=1.6e-2, atol=1.6e-2)


def _as_f32(fn):
    """fn with its result cast to float32 (on the device that ran it)."""
    return lambda *t: tf.cast(fn(*t), tf.float32)


def _bf16_ref(ref):
    """A reference in float32 from bfloat16 inputs, rounded to bfloat16 once
    and returned as float32 (what _as_f32 compares against)."""
    def run(*inputs):
        up = [a.astype(np.float32) if getattr(a, "dtype", None) == BF16 else a for a in inputs]
        return [np.asarray(o).astype(BF16).astype(np.float32) for o in ref(*up)]
    return run


def _split_groups(kinds, inputs, groups, fmt):
    """Per-group inputs of a grouped convolution: images split along their
    channels, filters along their output channels, a shape argument (input
    or filter sizes) with its channel count divided."""
    caxis = 1 if fmt.startswith("NC") else -1
    per = []
    for g in range(groups):
        args = []
        for kind, x in zip(kinds, inputs):
            if kind == "image":
                args.append(np.split(x, groups, axis=caxis)[g])
            elif kind == "filter":
                args.append(np.split(x, groups, axis=-1)[g])
            elif kind == "shape":
                v = np.array(x)
                v[caxis] //= groups
                args.append(v)
            elif kind == "filter_sizes":
                v = np.array(x)
                v[-1] //= groups
                args.append(v)
            else:
                args.append(x)
        per.append(args)
    return per


def _grouped_ref(ref, kinds, groups, fmt, out_kind):
    """`ref` (an ungrouped reference) run group by group, the results
    concatenated: along the channels of an image, the output channels of a
    filter gradient."""
    caxis = 1 if fmt.startswith("NC") else -1

    def run(*inputs):
        outs = [ref(*args)[0] for args in _split_groups(kinds, inputs, groups, fmt)]
        return [np.concatenate(outs, axis=-1 if out_kind == "filter" else caxis)]
    return run


def _conv2d_case(name, c, label, fmt, pad, strides, dil, ex, hw, khw, cin=3, cout=4, fdepth=None):
    """One Conv2D-family case: (label, fn, inputs, opts). fdepth < cin makes
    a grouped convolution; bfloat16 compares in float32 against TensorFlow's
    float32 CPU kernel rounded once."""
    depthwise = name.startswith("Depthwise")
    if name.endswith("BackpropInput"):
        make, kinds = _call(name, "input_sizes", "filter", "out_backprop"), ("shape", "filter", "image")
    elif name.endswith("BackpropFilter"):
        make, kinds = _call(name, "input", "filter_sizes", "out_backprop"), ("image", "filter_sizes", "image")
    else:
        make, kinds = _call(name, "input", "filter"), ("image", "filter")
    (sh, sw), (dh, dw), (H, W), (KH, KW) = strides, dil, hw, khw
    fdepth = fdepth or cin
    groups = cin // fdepth
    w = c.rand(KH, KW, fdepth, 2 if depthwise else cout)
    if depthwise:
        cout = 2 * cin
    OH = _out_size(H, KH, sh, dh, pad, ex[0] if ex else (0, 0))
    OW = _out_size(W, KW, sw, dw, pad, ex[1] if ex else (0, 0))
    x = _fmt(c.rand(2, H, W, cin), fmt)
    dy = _fmt(c.rand(2, OH, OW, cout), fmt)
    attrs = dict(strides=_fmt4([1, sh, sw, 1], fmt), padding=pad,
                 dilations=_fmt4([1, dh, dw, 1], fmt), data_format=fmt)
    if ex:
        attrs["explicit_paddings"] = _explicit(ex, fmt)
    if name.endswith("BackpropInput"):
        inputs = [np.array(x.shape, np.int32), w, dy]
    elif name.endswith("BackpropFilter"):
        inputs = [x, np.array(w.shape, np.int32), dy]
    else:
        inputs = [x, w]
    out_kind = "filter" if name.endswith("BackpropFilter") else "image"
    images_out = () if out_kind == "filter" else (0,)  # a filter is HWIO in both layouts
    why, ref = _via_nhwc(make, attrs, kinds, images_out)
    why = why.strip()
    if groups > 1:
        why, ref = f"{why or 'TensorFlow CPU kernel'} per group ({groups} groups)", \
            _grouped_ref(ref, kinds, groups, fmt, out_kind)
    fn = make(attrs)
    if c.T == BF16:
        return (label, _as_f32(fn), inputs,
                {"reference": (f"float32 {why or 'TensorFlow CPU kernel'}, rounded to bfloat16",
                               _bf16_ref(ref)), "tol": _BF16_TOL})
    if groups > 1:
        return (label, fn, inputs, {"reference": (why, ref)})
    return (label, fn, inputs, {"fallback": (why, ref)})


def _conv(name):
    """Conv2D / DepthwiseConv2dNative and their input and filter gradients
    over CONV_GEOMETRIES: 2 images, 3 input channels, 4 output channels
    (depthwise: channel multiplier 2).

    DepthwiseConv2dNative* take equal row and column strides only, and no
    dilations (TensorFlow's Eigen CPU and GPU kernels and OPENCL alike answer
    INVALID_ARGUMENT / UNIMPLEMENTED; tf.nn.depthwise_conv2d dilates through
    SpaceToBatchND instead): those geometries are left out for them. (The
    oneDNN float32 CPU kernel does take dilations, but its backprops with
    dilations kill the process, SIGILL, in TensorFlow 2.19.1.)

    Conv2D and its gradients also run grouped (2 and 3 groups, both
    layouts; TensorFlow's GPU kernels take them, its CPU kernels only
    through oneDNN): compared with its CPU kernel group by group."""
    depthwise = name.startswith("Depthwise")

    def build(c):
        cases = []
        for label, fmt, pad, st, dl, ex, hw, khw in CONV_GEOMETRIES:
            if depthwise and (st[0] != st[1] or dl[0] > 1 or dl[1] > 1):
                continue
            cases.append(_conv2d_case(name, c, label, fmt, pad, st, dl, ex, hw, khw))
        if not depthwise:
            cases.append(_conv2d_case(name, c, "NHWC 2 groups", "NHWC", "SAME", (1, 1), (1, 1), None,
                                      (5, 6), (3, 3), cin=4, cout=6, fdepth=2))
            cases.append(_conv2d_case(name, c, "NCHW 3 groups s2", "NCHW", "VALID", (2, 2), (1, 1), None,
                                      (7, 6), (3, 2), cin=6, cout=3, fdepth=2))
            cases.append(_conv2d_case(name, c, "NHWC 3 groups d2 EXPLICIT", "NHWC", "EXPLICIT", (1, 2),
                                      (2, 1), ((1, 2), (0, 1)), (6, 7), (2, 3), cin=3, cout=6, fdepth=1))
        return cases
    return build


for _n in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
           "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"):
    BUILDERS[_n] = _conv(_n)


# --- 3-D convolutions ---------------------------------------------------------
def _ncdhw(a):
    return np.ascontiguousarray(np.transpose(a, (0, 4, 1, 2, 3)))


def _ndhwc(a):
    return np.ascontiguousarray(np.transpose(a, (0, 2, 3, 4, 1)))


def _fmt5(ndhwc, fmt):
    """A per-dimension attribute or shape given in NDHWC order, in `fmt`'s."""
    n, d, h, w, ch = ndhwc
    return [n, ch, d, h, w] if fmt == "NCDHW" else [n, d, h, w, ch]


def _ndhwc5(v, fmt):
    v = [int(a) for a in v]
    return [v[0], v[2], v[3], v[4], v[1]] if fmt == "NCDHW" else v


def _via_ndhwc(make, attrs, kinds, images_out=(0,)):
    """_via_nhwc for 3-D: TensorFlow's CPU kernel in NDHWC on the
    transposes, dilations as filters dilated by zero taps (the filter
    gradient then keeps every dilation-th tap)."""
    fmt = attrs.get("data_format", "NDHWC")
    dil = _ndhwc5(attrs.get("dilations", [1] * 5), fmt)[1:4]
    dilated = any(d > 1 for d in dil)
    a = dict(attrs, data_format="NDHWC", strides=_ndhwc5(attrs["strides"], fmt),
             dilations=[1] * 5)
    fn = make(a)
    why = ("TensorFlow's CPU kernel" + (" on the NDHWC transposes, transposed back" if fmt == "NCDHW" else "")
           + (" with the filter dilated by zero taps (dilation 1)" if dilated else ""))

    def ref(*inputs):
        args, sub = [], False
        for kind, x in zip(kinds, inputs):
            if kind == "image" and fmt == "NCDHW":
                x = _ndhwc(x)
            elif kind == "shape":
                x = np.array(_ndhwc5(x, fmt), x.dtype)
            elif kind == "filter" and dilated:
                w = np.zeros(tuple((x.shape[i] - 1) * dil[i] + 1 for i in range(3)) + x.shape[3:], x.dtype)
                w[::dil[0], ::dil[1], ::dil[2]] = x
                x = w
            elif kind == "filter_sizes" and dilated:
                x = np.array([(x[i] - 1) * dil[i] + 1 for i in range(3)] + list(x[3:]), x.dtype)
                sub = True
            args.append(tf.constant(x))
        with tf.device("/CPU:0"):
            out = fn(*args)
        out = [t.numpy() for t in (out if isinstance(out, (list, tuple)) else [out])]
        if sub:
            out = [o[::dil[0], ::dil[1], ::dil[2]] for o in out]
        return [_ncdhw(o) if i in images_out and fmt == "NCDHW" else o for i, o in enumerate(out)]
    return why, ref


# (label, data_format, padding, strides (d, h, w), dilations (d, h, w),
#  input (D, H, W), filter (KD, KH, KW), cin, cout, filter depth)
CONV3D_GEOMETRIES = [
    ("NDHWC SAME", "NDHWC", "SAME", (1, 1, 1), (1, 1, 1), (4, 5, 6), (3, 3, 2), 3, 4, 3),
    ("NDHWC VALID s2x1x2", "NDHWC", "VALID", (2, 1, 2), (1, 1, 1), (5, 6, 5), (2, 3, 3), 2, 5, 2),
    ("NDHWC SAME d1x2x1", "NDHWC", "SAME", (1, 1, 2), (1, 2, 1), (4, 6, 5), (2, 2, 3), 3, 4, 3),
    ("NDHWC 1x1x1", "NDHWC", "VALID", (1, 1, 1), (1, 1, 1), (3, 4, 5), (1, 1, 1), 4, 3, 4),
    ("NCDHW SAME s2", "NCDHW", "SAME", (2, 2, 2), (1, 1, 1), (5, 4, 6), (3, 2, 3), 3, 4, 3),
    ("NCDHW VALID d2", "NCDHW", "VALID", (1, 1, 1), (2, 2, 2), (5, 6, 6), (2, 2, 3), 2, 3, 2),
    ("NDHWC 2 groups", "NDHWC", "SAME", (1, 2, 1), (1, 1, 1), (4, 5, 5), (2, 3, 2), 4, 6, 2),
    ("NCDHW 3 groups", "NCDHW", "VALID", (1, 1, 2), (1, 1, 1), (4, 5, 6), (2, 2, 2), 3, 6, 1),
]


def _conv3d(name):
    """Conv3D and its V2 gradients over CONV3D_GEOMETRIES, 2 images.
    TensorFlow's CPU kernels take NDHWC without dilations and no groups:
    the others are compared with them on transposes, zero-dilated filters
    and group by group."""
    if name.endswith("InputV2"):
        kinds = ("shape", "filter", "image")
        argnames = ("input_sizes", "filter", "out_backprop")
    elif name.endswith("FilterV2"):
        kinds = ("image", "filter_sizes", "image")
        argnames = ("input", "filter_sizes", "out_backprop")
    else:
        kinds = ("image", "filter")
        argnames = ("input", "filter")
    make = _call(name, *argnames)
    out_kind = "filter" if name.endswith("FilterV2") else "image"

    def build(c):
        cases = []
        for label, fmt, pad, st, dl, dhw, k, cin, cout, fd in CONV3D_GEOMETRIES:
            groups = cin // fd
            w = c.rand(*k, fd, cout)
            outs = [_out_size(dhw[i], k[i], st[i], dl[i], pad) for i in range(3)]
            x = c.rand(2, *dhw, cin)
            dy = c.rand(2, *outs, cout)
            if fmt == "NCDHW":
                x, dy = _ncdhw(x), _ncdhw(dy)
            attrs = dict(strides=_fmt5([1, *st, 1], fmt), padding=pad,
                         dilations=_fmt5([1, *dl, 1], fmt), data_format=fmt)
            if name.endswith("InputV2"):
                # Tshape: int32, and int64 for one geometry.
                inputs = [np.array(x.shape, np.int64 if label == "NDHWC SAME" else np.int32), w, dy]
            elif name.endswith("FilterV2"):
                inputs = [x, np.array(w.shape, np.int32), dy]
            else:
                inputs = [x, w]
            why, ref = _via_ndhwc(make, attrs, kinds, () if out_kind == "filter" else (0,))
            if groups > 1:
                why, ref = f"{why} per group ({groups} groups)", _grouped_ref(ref, kinds, groups, fmt, out_kind)
            fn = make(attrs)
            if c.T == BF16:
                cases.append((label, _as_f32(fn), inputs,
                              {"reference": (f"float32 {why}, rounded to bfloat16", _bf16_ref(ref)),
                               "tol": _BF16_TOL}))
            elif groups > 1 or fmt == "NCDHW" or max(dl) > 1 or c.T == np.float16:
                # Half: computed in float32 on the CPU too (its half
                # kernel rounds on its own schedule), rounded once.
                if c.T == np.float16:
                    up = ref
                    ref = lambda *a, up=up: [o.astype(np.float16) for o in up(
                        *[v.astype(np.float32) if getattr(v, "dtype", None) == np.float16 else v for v in a])]
                cases.append((label, fn, inputs, {"reference": (why, ref)}))
            else:
                cases.append((label, fn, inputs))
        return cases
    return build


for _n in ("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"):
    BUILDERS[_n] = _conv3d(_n)


# --- _FusedConv2D ---------------------------------------------------------------
def _fused_conv_call(fused_ops, attrs, leakyrelu_alpha=0.2):
    """fn(x, w, bias) running _FusedConv2D, an internal op that tf.raw_ops
    leaves out: through the eager executor directly."""
    from tensorflow.python.eager import context, execute

    def fn(x, w, bias):
        a = ("T", x.dtype.as_datatype_enum, "TArgs", [bias.dtype.as_datatype_enum],
             "num_args", 1, "num_host_args", 0, "strides", attrs["strides"],
             "padding", attrs["padding"], "explicit_paddings", attrs.get("explicit_paddings", []),
             "data_format", attrs["data_format"], "filter_format", "HWIO",
             "dilations", attrs["dilations"], "use_cudnn_on_gpu", True,
             "fused_ops", fused_ops, "epsilon", 1e-4, "leakyrelu_alpha", leakyrelu_alpha)
        return execute.execute(b"_FusedConv2D", 1, inputs=[x, w, bias], attrs=a,
                               ctx=context.context())[0]
    return fn


_FUSED_ACT = {
    None: lambda v, a: v,
    "Relu": lambda v, a: np.maximum(v, 0),
    "Relu6": lambda v, a: np.clip(v, 0, 6),
    "Elu": lambda v, a: np.where(v > 0, v, np.expm1(np.minimum(v, 0))),
    "LeakyRelu": lambda v, a: np.where(v > 0, v, v * a),
    "Tanh": lambda v, a: np.tanh(v),
    "Sigmoid": lambda v, a: 1 / (1 + np.exp(-v)),
}


def _fused_conv_numpy(attrs, act, alpha):
    """TensorFlow's CPU Conv2D (float32, NHWC, zero-dilated filters, see
    _via_nhwc) + bias + activation in float64, rounded once to the inputs'
    type."""
    why, conv = _via_nhwc(_call("Conv2D", "input", "filter"), attrs, ("image", "filter"))
    why = why.strip()
    caxis = 1 if attrs["data_format"] == "NCHW" else -1

    def ref(x, w, bias):
        y = conv(x.astype(np.float32), w.astype(np.float32))[0].astype(np.float64)
        shape = [1] * y.ndim
        shape[caxis] = -1
        return [_FUSED_ACT[act](y + bias.astype(np.float64).reshape(shape), alpha).astype(x.dtype)]
    return f"{why or 'TensorFlow CPU Conv2D'}, then bias and {act or 'no activation'} in float64", ref


def _fused_conv(c):
    """_FusedConv2D over some of CONV_GEOMETRIES with each fused_ops list
    TensorFlow's remapper emits. Float32 NHWC BiasAdd (+ Relu, Relu6, Elu,
    LeakyRelu) runs against TensorFlow's CPU _FusedConv2D; its CPU kernel
    has no Tanh/Sigmoid fusion, no half and no NCHW: those (and groups)
    against TensorFlow's CPU Conv2D with the epilogue in numpy."""
    cases = []
    acts = [None, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"]
    geos = [g for g in CONV_GEOMETRIES]
    for i, act in enumerate(acts * 2):
        label, fmt, pad, (sh, sw), (dh, dw), ex, (H, W), (KH, KW) = geos[i % len(geos)]
        cin, cout = 3, 5
        alpha = 0.3 if i == 4 else 0.2
        x = _fmt(c.rand(2, H, W, cin), fmt)
        w = c.rand(KH, KW, cin, cout)
        bias = c.rand(cout)
        attrs = dict(strides=_fmt4([1, sh, sw, 1], fmt), padding=pad,
                     dilations=_fmt4([1, dh, dw, 1], fmt), data_format=fmt)
        if ex:
            attrs["explicit_paddings"] = _explicit(ex, fmt)
        ops = ["BiasAdd"] + ([act] if act else [])
        fn = _fused_conv_call(ops, attrs, alpha)
        case = (f"{label} {'+'.join(ops)}", fn, [x, w, bias])
        if c.T != np.float32 or fmt != "NHWC" or act in ("Tanh", "Sigmoid"):
            case += ({"reference": _fused_conv_numpy(attrs, act, alpha)},)
        cases.append(case)
    return cases


BUILDERS["_FusedConv2D"] = _fused_conv


# Conv3DBackpropInput and Conv3DBackpropFilter (V1: the input, or filter,
# tensor instead of its shape). TensorFlow refuses them past GraphDef
# version 10 on every device, and eager runs at the current version: they
# run in a GraphDef of producer 9 (what an old graph holds), written as the
# V2 op and renamed, in a session on the inputs' device; TensorFlow's CPU
# V2 kernel is the reference (in float32 for half).
def _conv3d_v1(name):
    v2 = name + "V2"

    def call(attrs):
        def fn(x, w, dy):
            g = tf.Graph()
            with g.as_default(), tf.device(x.device):
                ph = [tf.compat.v1.placeholder(t.dtype, t.shape, name=n)
                      for t, n in zip((x, w, dy), ("x", "w", "dy"))]
                if name.endswith("Input"):
                    getattr(raw, v2)(input_sizes=list(x.shape), filter=ph[1], out_backprop=ph[2],
                                     name="op", **attrs)
                else:
                    getattr(raw, v2)(input=ph[0], filter_sizes=list(w.shape), out_backprop=ph[2],
                                     name="op", **attrs)
            gd = g.as_graph_def()
            for n in gd.node:
                if n.name == "op":
                    n.op = name
                    n.input[0 if name.endswith("Input") else 1] = "x" if name.endswith("Input") else "w"
                    for a in ("data_format", "Tshape"):
                        if a in n.attr:
                            del n.attr[a]
            gd.versions.producer = 9
            gd.versions.min_consumer = 0
            g2 = tf.Graph()
            with g2.as_default():
                tf.graph_util.import_graph_def(gd, name="")
            with tf.compat.v1.Session(graph=g2) as s:
                out = s.run("op:0", {"x:0": x.numpy(), "w:0": w.numpy(), "dy:0": dy.numpy()})
            return tf.constant(out)
        return fn

    def build(c):
        cases = []
        for label, fmt, pad, st, dl, dhw, k, cin, cout, fd in CONV3D_GEOMETRIES:
            if fmt != "NDHWC" or cin != fd or max(dl) > 1:
                continue
            w = c.rand(*k, cin, cout)
            outs = [_out_size(dhw[i], k[i], st[i], 1, pad) for i in range(3)]
            x, dy = c.rand(2, *dhw, cin), c.rand(2, *outs, cout)
            attrs = dict(strides=[1, *st, 1], padding=pad)

            def ref(x, w, dy, attrs=attrs):
                f32 = [a.astype(np.float32) if a.dtype == np.float16 else a for a in (x, w, dy)]
                with tf.device("/CPU:0"):
                    if name.endswith("Input"):
                        out = getattr(raw, v2)(input_sizes=list(x.shape), filter=f32[1],
                                               out_backprop=f32[2], **attrs)
                    else:
                        out = getattr(raw, v2)(input=f32[0], filter_sizes=list(w.shape),
                                               out_backprop=f32[2], **attrs)
                return [out.numpy().astype(x.dtype)]
            cases.append((label, call(attrs), [x, w, dy],
                          {"reference": ("TensorFlow's CPU V2 kernel (V1 runs only in old graphs)", ref)}))
        return cases
    return build


for _n in ("Conv3DBackpropInput", "Conv3DBackpropFilter"):
    BUILDERS[_n] = _conv3d_v1(_n)
TOLERANCES["Conv3DBackpropInput"] = _CONV_TOL
TOLERANCES["Conv3DBackpropFilter"] = {**_CONV_TOL, np.float16: dict(rtol=1e-2, atol=8e-2)}
