"""Bad arguments to the convolution and pooling ops fail on /OPENCL:0 as
TensorFlow's own CPU kernels fail on them: the same exception class (and
nothing is accepted there that TensorFlow refuses). The cases are
TensorFlow's Conv2DTest.testOpEdgeCases and testRawAvgPoolLargeKsizeRaiseError
and the same kinds of argument for every conv and pool op the plugin
registers.

TensorFlow's CPU kernels here are its own (conv_ops.cc, pooling_ops_*.cc):
oneDNN's replacements check differently (and abort on some of these), so
they are switched off before TensorFlow starts."""
import os

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from conftest import DEVICE  # noqa: E402

import tensorflow as tf  # noqa: E402  (conftest set the plugin up)
from tensorflow.python.eager import context, execute  # noqa: E402
from tensorflow.python.ops import gen_nn_ops  # noqa: E402

raw = tf.raw_ops


def F(*shape):
    return np.ones(shape, np.float32)


def I(v):  # noqa: E743
    return np.array(v, np.int32)


S1 = [1, 1, 1, 1]

def conv(strides=S1, padding="VALID", explicit=(), dilations=S1, fmt="NHWC"):
    return lambda x, f: raw.Conv2D(input=x, filter=f, strides=strides, padding=padding,
                                   explicit_paddings=list(explicit), data_format=fmt, dilations=dilations)
def conv_bi(strides=S1, padding="VALID", explicit=(), dilations=S1):
    return lambda s, f, g: raw.Conv2DBackpropInput(input_sizes=s, filter=f, out_backprop=g, strides=strides,
                                                   padding=padding, explicit_paddings=list(explicit),
                                                   dilations=dilations)
def conv_bf(strides=S1, padding="VALID", explicit=(), dilations=S1):
    return lambda x, s, g: raw.Conv2DBackpropFilter(input=x, filter_sizes=s, out_backprop=g, strides=strides,
                                                    padding=padding, explicit_paddings=list(explicit),
                                                    dilations=dilations)
def dw(strides=S1, padding="VALID", explicit=(), dilations=S1):
    return lambda x, f: raw.DepthwiseConv2dNative(input=x, filter=f, strides=strides, padding=padding,
                                                  explicit_paddings=list(explicit), dilations=dilations)
def dw_bi(strides=S1, padding="VALID", explicit=(), dilations=S1):
    return lambda s, f, g: raw.DepthwiseConv2dNativeBackpropInput(
        input_sizes=s, filter=f, out_backprop=g, strides=strides, padding=padding,
        explicit_paddings=list(explicit), dilations=dilations)
def dw_bf(strides=S1, padding="VALID", explicit=(), dilations=S1):
    return lambda x, s, g: raw.DepthwiseConv2dNativeBackpropFilter(
        input=x, filter_sizes=s, out_backprop=g, strides=strides, padding=padding,
        explicit_paddings=list(explicit), dilations=dilations)
S5 = [1, 1, 1, 1, 1]
def c3(strides=S5, padding="VALID", dilations=S5):
    return lambda x, f: raw.Conv3D(input=x, filter=f, strides=strides, padding=padding, dilations=dilations)
def c3_bi(strides=S5, padding="VALID", dilations=S5):
    return lambda s, f, g: raw.Conv3DBackpropInputV2(input_sizes=s, filter=f, out_backprop=g, strides=strides,
                                                     padding=padding, dilations=dilations)
def c3_bf(strides=S5, padding="VALID", dilations=S5):
    return lambda x, s, g: raw.Conv3DBackpropFilterV2(input=x, filter_sizes=s, out_backprop=g, strides=strides,
                                                      padding=padding, dilations=dilations)
def fused(strides=S1, padding="VALID", explicit=(), dilations=S1, num_args=1, ops=(b"BiasAdd",)):
    def f(x, w, b):
        ctx = context.context()
        attrs = ("T", tf.float32.as_datatype_enum, "TArgs", [tf.float32.as_datatype_enum], "num_host_args", 0, "num_args", num_args, "strides", strides,
                 "padding", padding, "explicit_paddings", list(explicit), "data_format", "NHWC",
                 "filter_format", "HWIO", "dilations", dilations, "use_cudnn_on_gpu", True,
                 "fused_ops", list(ops), "epsilon", 0.0001, "leakyrelu_alpha", 0.2)
        return execute.execute(b"_FusedConv2D", 1, inputs=[x, w, b], attrs=attrs, ctx=ctx)[0]
    return f

def pool(op, ksize=S1, strides=S1, padding="VALID", explicit=None):
    kw = {}
    if explicit is not None:
        kw["explicit_paddings"] = list(explicit)
    return lambda x: getattr(raw, op)(input=x, ksize=ksize, strides=strides, padding=padding, **kw) \
        if op.startswith("Max") else getattr(raw, op)(value=x, ksize=ksize, strides=strides, padding=padding)
def maxpool_v2(padding="VALID"):
    return lambda x, k, s: raw.MaxPoolV2(input=x, ksize=k, strides=s, padding=padding)
def maxpool_grad(ksize=S1, strides=S1, padding="VALID", explicit=None):
    kw = {} if explicit is None else {"explicit_paddings": list(explicit)}
    return lambda x, y, g: raw.MaxPoolGrad(orig_input=x, orig_output=y, grad=g, ksize=ksize, strides=strides,
                                           padding=padding, **kw)
def maxpool_grad_v2(padding="VALID"):
    return lambda x, y, g, k, s: raw.MaxPoolGradV2(orig_input=x, orig_output=y, grad=g, ksize=k, strides=s,
                                                   padding=padding)
def maxpool_gg(ksize=S1, strides=S1, padding="VALID"):
    return lambda x, y, g: raw.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=g, ksize=ksize,
                                               strides=strides, padding=padding)
def maxpool_gg_v2(padding="VALID"):
    return lambda x, y, g, k, s: raw.MaxPoolGradGradV2(orig_input=x, orig_output=y, grad=g, ksize=k,
                                                       strides=s, padding=padding)
def avgpool_grad(ksize=S1, strides=S1, padding="VALID"):
    return lambda s, g: raw.AvgPoolGrad(orig_input_shape=s, grad=g, ksize=ksize, strides=strides,
                                        padding=padding)
def pool3(op, ksize=S5, strides=S5, padding="VALID"):
    return lambda x: getattr(raw, op)(input=x, ksize=ksize, strides=strides, padding=padding)
def maxpool3_grad(ksize=S5, strides=S5, padding="VALID"):
    return lambda x, y, g: raw.MaxPool3DGrad(orig_input=x, orig_output=y, grad=g, ksize=ksize,
                                             strides=strides, padding=padding)
def maxpool3_gg(ksize=S5, strides=S5, padding="VALID"):
    return lambda x, y, g: raw.MaxPool3DGradGrad(orig_input=x, orig_output=y, grad=g, ksize=ksize,
                                                 strides=strides, padding=padding)
def avgpool3_grad(ksize=S5, strides=S5, padding="VALID"):
    return lambda s, g: raw.AvgPool3DGrad(orig_input_shape=s, grad=g, ksize=ksize, strides=strides,
                                          padding=padding)

X = F(1, 5, 5, 2)
W = F(2, 2, 2, 3)
G = F(1, 4, 4, 3)
X5 = F(1, 4, 4, 4, 2)
W5 = F(2, 2, 2, 2, 3)
G5 = F(1, 3, 3, 3, 3)
P = F(1, 4, 4, 2)     # pool input
PO = F(1, 3, 3, 2)    # its 2x2 VALID output
P5 = F(1, 4, 4, 4, 2)
PO5 = F(1, 3, 3, 3, 2)
K2 = [1, 2, 2, 1]
K3 = [1, 2, 2, 2, 1]

CASES = [
    # Conv2D: TensorFlow's testOpEdgeCases and the constructor's checks.
    ("conv2d stride in batch", conv(strides=[2, 1, 1, 1], padding="SAME"), [X, W]),
    ("conv2d stride in depth", conv(strides=[1, 1, 1, 2], padding="SAME"), [X, W]),
    ("conv2d stride 0", conv(strides=[1, 0, 1, 1]), [X, W]),
    ("conv2d negative stride", conv(strides=[1, 1, -2, 1]), [X, W]),
    ("conv2d three strides", conv(strides=[1, 1, 1]), [X, W]),
    ("conv2d dilation in batch", conv(dilations=[2, 1, 1, 1]), [X, W]),
    ("conv2d dilation in depth", conv(dilations=[1, 1, 1, 2]), [X, W]),
    ("conv2d dilation 0", conv(dilations=[1, 0, 1, 1]), [X, W]),
    ("conv2d negative dilation", conv(dilations=[1, 1, -1, 1]), [X, W]),
    ("conv2d three dilations", conv(dilations=[1, 1, 1]), [X, W]),
    ("conv2d filter taller than input", conv(), [X, F(6, 2, 2, 3)]),
    ("conv2d filter wider than input", conv(), [X, F(2, 6, 2, 3)]),
    ("conv2d filter larger than padded input", conv(padding="EXPLICIT", explicit=[0, 0, 1, 1, 1, 1, 0, 0]),
     [X, F(8, 2, 2, 3)]),
    ("conv2d dilated filter larger than input", conv(dilations=[1, 5, 1, 1]), [X, W]),
    ("conv2d filter with a zero dim", conv(padding="SAME"), [F(1, 1, 1, 1), F(1, 0, 1, 1)]),
    ("conv2d filter with zero rows", conv(padding="SAME"), [X, F(0, 2, 2, 3)]),
    ("conv2d filter with zero output channels", conv(), [X, F(2, 2, 2, 0)]),
    ("conv2d filter with zero input channels", conv(), [X, F(2, 2, 0, 3)]),
    ("conv2d input depth not a multiple", conv(), [F(1, 5, 5, 3), W]),
    ("conv2d groups do not divide output", conv(), [F(1, 5, 5, 4), F(2, 2, 2, 3)]),
    ("conv2d input rank 3", conv(), [F(5, 5, 2), W]),
    ("conv2d filter rank 3", conv(), [X, F(2, 2, 2)]),
    ("conv2d explicit negative", conv(padding="EXPLICIT", explicit=[0, 0, -1, 0, 0, 0, 0, 0]), [X, W]),
    ("conv2d explicit too short", conv(padding="EXPLICIT", explicit=[0, 0, 1, 1, 1, 1]), [X, W]),
    ("conv2d explicit too long", conv(padding="EXPLICIT", explicit=[0] * 10), [X, W]),
    ("conv2d explicit in batch", conv(padding="EXPLICIT", explicit=[1, 0, 0, 0, 0, 0, 0, 0]), [X, W]),
    ("conv2d explicit in depth", conv(padding="EXPLICIT", explicit=[0, 0, 0, 0, 0, 0, 0, 1]), [X, W]),
    ("conv2d explicit paddings with SAME", conv(padding="SAME", explicit=[0] * 8), [X, W]),
    ("conv2d explicit missing", conv(padding="EXPLICIT"), [X, W]),
    # Conv2DBackpropInput
    ("conv2d bpi negative explicit", conv_bi(padding="EXPLICIT", explicit=[0, 0, -1, 0, 0, 0, 0, 0]),
     [I([1, 5, 5, 2]), W, G]),
    ("conv2d bpi explicit in batch", conv_bi(padding="EXPLICIT", explicit=[0, 1, 0, 0, 0, 0, 0, 0]),
     [I([1, 5, 5, 2]), W, G]),
    ("conv2d bpi explicit too short", conv_bi(padding="EXPLICIT", explicit=[0, 0, 0, 0]),
     [I([1, 5, 5, 2]), W, G]),
    ("conv2d bpi stride in batch", conv_bi(strides=[2, 1, 1, 1]), [I([1, 5, 5, 2]), W, G]),
    ("conv2d bpi stride in depth", conv_bi(strides=[1, 1, 1, 2]), [I([1, 5, 5, 2]), W, G]),
    ("conv2d bpi stride 0", conv_bi(strides=[1, 0, 1, 1]), [I([1, 5, 5, 2]), W, G]),
    ("conv2d bpi dilation in depth", conv_bi(dilations=[1, 1, 1, 2]), [I([1, 5, 5, 2]), W, G]),
    ("conv2d bpi dilation 0", conv_bi(dilations=[1, 1, 0, 1]), [I([1, 5, 5, 2]), W, G]),
    ("conv2d bpi out_backprop rows", conv_bi(), [I([1, 5, 5, 2]), W, F(1, 3, 4, 3)]),
    ("conv2d bpi out_backprop depth", conv_bi(), [I([1, 5, 5, 2]), W, F(1, 4, 4, 2)]),
    ("conv2d bpi batch differs", conv_bi(), [I([2, 5, 5, 2]), W, G]),
    ("conv2d bpi filter larger than input", conv_bi(), [I([1, 5, 5, 2]), F(6, 2, 2, 3), G]),
    ("conv2d bpi input_sizes of 3", conv_bi(), [I([1, 5, 5]), W, G]),
    ("conv2d bpi negative input_sizes", conv_bi(), [I([1, -5, 5, 2]), W, G]),
    ("conv2d bpi input depth not a multiple", conv_bi(), [I([1, 5, 5, 3]), W, G]),
    ("conv2d bpi out_backprop scalar", conv_bi(padding="SAME"), [I([5, 5]), W, np.float32(0)]),
    ("conv2d bpi filter zero dim", conv_bi(), [I([1, 5, 5, 2]), F(2, 0, 2, 3), F(1, 4, 6, 3)]),
    # Conv2DBackpropFilter
    ("conv2d bpf negative explicit", conv_bf(padding="EXPLICIT", explicit=[0, 0, -1, 0, 0, 0, 0, 0]),
     [X, I([2, 2, 2, 3]), G]),
    ("conv2d bpf explicit in depth", conv_bf(padding="EXPLICIT", explicit=[0, 0, 0, 0, 0, 0, 1, 0]),
     [X, I([2, 2, 2, 3]), G]),
    ("conv2d bpf stride in batch", conv_bf(strides=[2, 1, 1, 1]), [X, I([2, 2, 2, 3]), G]),
    ("conv2d bpf stride 0", conv_bf(strides=[1, 1, 0, 1]), [X, I([2, 2, 2, 3]), G]),
    ("conv2d bpf dilation in batch", conv_bf(dilations=[2, 1, 1, 1]), [X, I([2, 2, 2, 3]), G]),
    ("conv2d bpf out_backprop cols", conv_bf(), [X, I([2, 2, 2, 3]), F(1, 4, 3, 3)]),
    ("conv2d bpf out_backprop depth", conv_bf(), [X, I([2, 2, 2, 3]), F(1, 4, 4, 4)]),
    ("conv2d bpf filter larger than input", conv_bf(), [X, I([6, 2, 2, 3]), G]),
    ("conv2d bpf filter_sizes of 3", conv_bf(), [X, I([2, 2, 2]), G]),
    ("conv2d bpf negative filter_sizes", conv_bf(), [X, I([2, -2, 2, 3]), G]),
    ("conv2d bpf input depth not a multiple", conv_bf(), [F(1, 5, 5, 3), I([2, 2, 2, 3]), G]),
    # DepthwiseConv2dNative and its gradients
    ("depthwise stride in batch", dw(strides=[2, 1, 1, 1]), [X, W]),
    ("depthwise stride in depth", dw(strides=[1, 1, 1, 2]), [X, W]),
    ("depthwise unequal strides", dw(strides=[1, 1, 2, 1]), [X, W]),
    ("depthwise stride 0", dw(strides=[1, 0, 0, 1]), [X, W]),
    ("depthwise three strides", dw(strides=[1, 1, 1]), [X, W]),
    ("depthwise dilation 2", dw(dilations=[1, 2, 2, 1]), [X, W]),
    ("depthwise dilation 0", dw(dilations=[1, 0, 0, 1]), [X, W]),
    ("depthwise depth differs", dw(), [F(1, 5, 5, 3), W]),
    ("depthwise filter larger than input", dw(), [X, F(6, 6, 2, 3)]),
    ("depthwise filter zero dim", dw(padding="SAME"), [X, F(2, 0, 2, 3)]),
    ("depthwise zero multiplier", dw(), [X, F(2, 2, 2, 0)]),
    ("depthwise explicit negative", dw(padding="EXPLICIT", explicit=[0, 0, -1, 0, 0, 0, 0, 0]), [X, W]),
    ("depthwise explicit in batch", dw(padding="EXPLICIT", explicit=[1, 0, 0, 0, 0, 0, 0, 0]), [X, W]),
    ("depthwise explicit too short", dw(padding="EXPLICIT", explicit=[0, 0, 0, 0]), [X, W]),
    ("depthwise input rank 3", dw(), [F(5, 5, 2), W]),
    ("depthwise bpi stride in depth", dw_bi(strides=[1, 1, 1, 2]), [I([1, 5, 5, 2]), W, F(1, 4, 4, 6)]),
    ("depthwise bpi unequal strides", dw_bi(strides=[1, 2, 1, 1]), [I([1, 5, 5, 2]), W, F(1, 4, 4, 6)]),
    ("depthwise bpi out_backprop depth", dw_bi(), [I([1, 5, 5, 2]), W, F(1, 4, 4, 3)]),
    ("depthwise bpi out_backprop rows", dw_bi(), [I([1, 5, 5, 2]), W, F(1, 3, 4, 6)]),
    ("depthwise bpi negative explicit", dw_bi(padding="EXPLICIT", explicit=[0, 0, 0, -1, 0, 0, 0, 0]),
     [I([1, 5, 5, 2]), W, F(1, 4, 4, 6)]),
    ("depthwise bpi negative input_sizes", dw_bi(), [I([1, 5, -5, 2]), W, F(1, 4, 4, 6)]),
    ("depthwise bpi filter larger than input", dw_bi(), [I([1, 5, 5, 2]), F(6, 2, 2, 3), F(1, 4, 4, 6)]),
    ("depthwise bpf stride in batch", dw_bf(strides=[2, 1, 1, 1]), [X, I([2, 2, 2, 3]), F(1, 4, 4, 6)]),
    ("depthwise bpf out_backprop cols", dw_bf(), [X, I([2, 2, 2, 3]), F(1, 4, 3, 6)]),
    ("depthwise bpf depth differs", dw_bf(), [X, I([2, 2, 3, 3]), F(1, 4, 4, 6)]),
    ("depthwise bpf explicit in depth", dw_bf(padding="EXPLICIT", explicit=[0, 0, 0, 0, 0, 0, 0, 1]),
     [X, I([2, 2, 2, 3]), F(1, 4, 4, 6)]),
    # Conv3D and its gradients
    ("conv3d stride in batch", c3(strides=[2, 1, 1, 1, 1]), [X5, W5]),
    ("conv3d stride in depth", c3(strides=[1, 1, 1, 1, 2]), [X5, W5]),
    ("conv3d stride 0", c3(strides=[1, 1, 0, 1, 1]), [X5, W5]),
    ("conv3d four strides", c3(strides=[1, 1, 1, 1]), [X5, W5]),
    ("conv3d dilation in batch", c3(dilations=[2, 1, 1, 1, 1]), [X5, W5]),
    ("conv3d dilation 0", c3(dilations=[1, 1, 1, 0, 1]), [X5, W5]),
    ("conv3d filter larger than input", c3(), [X5, F(5, 2, 2, 2, 3)]),
    ("conv3d filter zero dim", c3(padding="SAME"), [X5, F(2, 0, 2, 2, 3)]),
    ("conv3d zero output channels", c3(), [X5, F(2, 2, 2, 2, 0)]),
    ("conv3d input depth not a multiple", c3(), [F(1, 4, 4, 4, 3), W5]),
    ("conv3d groups do not divide output", c3(), [F(1, 4, 4, 4, 4), W5]),
    ("conv3d input rank 4", c3(), [F(4, 4, 4, 2), W5]),
    ("conv3d bpi stride in batch", c3_bi(strides=[2, 1, 1, 1, 1]), [I([1, 4, 4, 4, 2]), W5, G5]),
    ("conv3d bpi stride 0", c3_bi(strides=[1, 0, 1, 1, 1]), [I([1, 4, 4, 4, 2]), W5, G5]),
    ("conv3d bpi out_backprop size", c3_bi(), [I([1, 4, 4, 4, 2]), W5, F(1, 3, 2, 3, 3)]),
    ("conv3d bpi out_backprop depth", c3_bi(), [I([1, 4, 4, 4, 2]), W5, F(1, 3, 3, 3, 2)]),
    ("conv3d bpi filter larger than input", c3_bi(), [I([1, 4, 4, 4, 2]), F(5, 2, 2, 2, 3), G5]),
    ("conv3d bpi negative input_sizes", c3_bi(), [I([1, 4, -4, 4, 2]), W5, G5]),
    ("conv3d bpf stride in depth", c3_bf(strides=[1, 1, 1, 1, 2]), [X5, I([2, 2, 2, 2, 3]), G5]),
    ("conv3d bpf dilation 0", c3_bf(dilations=[1, 0, 1, 1, 1]), [X5, I([2, 2, 2, 2, 3]), G5]),
    ("conv3d bpf out_backprop size", c3_bf(), [X5, I([2, 2, 2, 2, 3]), F(1, 3, 3, 2, 3)]),
    ("conv3d bpf filter_sizes of 4", c3_bf(), [X5, I([2, 2, 2, 3]), G5]),
    ("conv3d bpf batch differs", c3_bf(), [F(2, 4, 4, 4, 2), I([2, 2, 2, 2, 3]), G5]),
    # _FusedConv2D
    ("fused conv stride in batch", fused(strides=[2, 1, 1, 1]), [X, W, F(3)]),
    ("fused conv stride 0", fused(strides=[1, 0, 1, 1]), [X, W, F(3)]),
    ("fused conv dilation in depth", fused(dilations=[1, 1, 1, 2]), [X, W, F(3)]),
    ("fused conv filter larger than input", fused(), [X, F(6, 2, 2, 3), F(3)]),
    ("fused conv filter zero dim", fused(), [X, F(2, 0, 2, 3), F(3)]),
    ("fused conv explicit negative", fused(padding="EXPLICIT", explicit=[0, 0, -1, 0, 0, 0, 0, 0]),
     [X, W, F(3)]),
    ("fused conv explicit in batch", fused(padding="EXPLICIT", explicit=[1, 0, 0, 0, 0, 0, 0, 0]),
     [X, W, F(3)]),
    ("fused conv depth not a multiple", fused(), [F(1, 5, 5, 3), W, F(3)]),
    ("fused conv bias rank", fused(), [X, W, F(1, 3)]),
    # AvgPool: testRawAvgPoolLargeKsizeRaiseError and the constructor's checks.
    ("avgpool ksize larger than input SAME", pool("AvgPool", ksize=[1, 3, 1, 1], padding="SAME"), [F(1, 1, 1, 1)]),
    ("avgpool huge ksize SAME", pool("AvgPool", ksize=[1, 2**31 - 1, 1, 1], padding="SAME"), [F(1, 1, 1, 1)]),
    ("avgpool ksize beyond int32", pool("AvgPool", ksize=[1, 2**40, 1, 1], padding="SAME"), [F(1, 1, 1, 1)]),
    ("avgpool ksize larger than input VALID", pool("AvgPool", ksize=[1, 6, 1, 1]), [P]),
    ("avgpool ksize 0", pool("AvgPool", ksize=[1, 0, 2, 1]), [P]),
    ("avgpool negative ksize", pool("AvgPool", ksize=[1, -1, 2, 1]), [P]),
    ("avgpool ksize in batch", pool("AvgPool", ksize=[2, 2, 2, 1]), [P]),
    ("avgpool ksize in depth", pool("AvgPool", ksize=[1, 1, 1, 2], strides=[1, 1, 1, 2]), [P]),
    ("avgpool ksize in depth and space", pool("AvgPool", ksize=[1, 2, 2, 2]), [P]),
    ("avgpool stride in batch", pool("AvgPool", ksize=K2, strides=[2, 1, 1, 1]), [P]),
    ("avgpool stride in depth", pool("AvgPool", ksize=K2, strides=[1, 1, 1, 2]), [P]),
    ("avgpool stride 0", pool("AvgPool", ksize=K2, strides=[1, 0, 1, 1]), [P]),
    ("avgpool negative stride", pool("AvgPool", ksize=K2, strides=[1, 1, -1, 1]), [P]),
    ("avgpool three ksize", pool("AvgPool", ksize=[1, 2, 2]), [P]),
    ("avgpool three strides", pool("AvgPool", ksize=K2, strides=[1, 1, 1]), [P]),
    ("avgpool input rank 3", pool("AvgPool", ksize=K2), [F(4, 4, 2)]),
    # MaxPool
    ("maxpool ksize larger than input SAME", pool("MaxPool", ksize=[1, 3, 1, 1], padding="SAME"), [F(1, 1, 1, 1)]),
    ("maxpool huge ksize SAME", pool("MaxPool", ksize=[1, 2**31 - 1, 1, 1], padding="SAME"), [F(1, 1, 1, 1)]),
    ("maxpool ksize larger than input VALID", pool("MaxPool", ksize=[1, 1, 6, 1]), [P]),
    ("maxpool ksize 0", pool("MaxPool", ksize=[1, 2, 0, 1]), [P]),
    ("maxpool ksize in batch", pool("MaxPool", ksize=[2, 2, 2, 1]), [P]),
    ("maxpool ksize in depth and space", pool("MaxPool", ksize=[1, 2, 2, 2]), [P]),
    ("maxpool stride in batch", pool("MaxPool", ksize=K2, strides=[2, 1, 1, 1]), [P]),
    ("maxpool stride in depth", pool("MaxPool", ksize=K2, strides=[1, 1, 1, 2]), [P]),
    ("maxpool stride 0", pool("MaxPool", ksize=K2, strides=[1, 0, 1, 1]), [P]),
    ("maxpool input rank 3", pool("MaxPool", ksize=K2), [F(4, 4, 2)]),
    ("maxpool explicit negative", pool("MaxPool", ksize=K2, padding="EXPLICIT",
                                       explicit=[0, 0, -1, 0, 0, 0, 0, 0]), [P]),
    ("maxpool explicit in batch", pool("MaxPool", ksize=K2, padding="EXPLICIT",
                                       explicit=[1, 0, 0, 0, 0, 0, 0, 0]), [P]),
    ("maxpool explicit too short", pool("MaxPool", ksize=K2, padding="EXPLICIT", explicit=[0, 0, 0, 0]), [P]),
    ("maxpool explicit not smaller than window", pool("MaxPool", ksize=K2, padding="EXPLICIT",
                                                      explicit=[0, 0, 2, 0, 0, 0, 0, 0]), [P]),
    ("maxpoolv2 ksize 0", maxpool_v2(), [P, I([1, 0, 2, 1]), I(S1)]),
    ("maxpoolv2 ksize larger than input SAME", maxpool_v2("SAME"), [F(1, 1, 1, 1), I([1, 3, 1, 1]), I(S1)]),
    ("maxpoolv2 stride in batch", maxpool_v2(), [P, I(K2), I([2, 1, 1, 1])]),
    ("maxpoolv2 stride 0", maxpool_v2(), [P, I(K2), I([1, 1, 0, 1])]),
    ("maxpoolv2 three ksize", maxpool_v2(), [P, I([1, 2, 2]), I(S1)]),
    # MaxPoolGrad / V2, MaxPoolGradGrad / V2, AvgPoolGrad
    ("maxpoolgrad ksize 0", maxpool_grad(ksize=[1, 0, 2, 1]), [P, PO, PO]),
    ("maxpoolgrad ksize in batch", maxpool_grad(ksize=[2, 2, 2, 1]), [P, PO, PO]),
    ("maxpoolgrad stride 0", maxpool_grad(ksize=K2, strides=[1, 0, 1, 1]), [P, PO, PO]),
    ("maxpoolgrad ksize larger than input SAME", maxpool_grad(ksize=[1, 3, 1, 1], padding="SAME"),
     [F(1, 1, 1, 1), F(1, 1, 1, 1), F(1, 1, 1, 1)]),
    ("maxpoolgrad grad shape", maxpool_grad(ksize=K2), [P, PO, F(1, 2, 3, 2)]),
    ("maxpoolgrad orig_output shape", maxpool_grad(ksize=K2), [P, F(1, 2, 3, 2), PO]),
    ("maxpoolgrad input rank 3", maxpool_grad(ksize=K2), [F(4, 4, 2), PO, PO]),
    ("maxpoolgrad explicit negative", maxpool_grad(ksize=K2, padding="EXPLICIT",
                                                   explicit=[0, 0, 0, -1, 0, 0, 0, 0]), [P, PO, PO]),
    ("maxpoolgradv2 ksize 0", maxpool_grad_v2(), [P, PO, PO, I([1, 0, 2, 1]), I(S1)]),
    ("maxpoolgradv2 stride in depth", maxpool_grad_v2(), [P, PO, PO, I(K2), I([1, 1, 1, 2])]),
    ("maxpoolgradgrad ksize 0", maxpool_gg(ksize=[1, 0, 2, 1]), [P, PO, P]),
    ("maxpoolgradgrad stride in batch", maxpool_gg(ksize=K2, strides=[2, 1, 1, 1]), [P, PO, P]),
    ("maxpoolgradgrad grad shape", maxpool_gg(ksize=K2), [P, PO, PO]),
    ("maxpoolgradgrad ksize larger than input SAME", maxpool_gg(ksize=[1, 3, 1, 1], padding="SAME"),
     [F(1, 1, 1, 1), F(1, 1, 1, 1), F(1, 1, 1, 1)]),
    ("maxpoolgradgradv2 stride 0", maxpool_gg_v2(), [P, PO, P, I(K2), I([1, 0, 1, 1])]),
    ("avgpoolgrad ksize in batch", avgpool_grad(ksize=[2, 2, 2, 1]), [I([1, 4, 4, 2]), PO]),
    ("avgpoolgrad stride 0", avgpool_grad(ksize=K2, strides=[1, 1, 0, 1]), [I([1, 4, 4, 2]), PO]),
    ("avgpoolgrad ksize larger than input SAME", avgpool_grad(ksize=[1, 3, 1, 1], padding="SAME"),
     [I([1, 1, 1, 1]), F(1, 1, 1, 1)]),
    ("avgpoolgrad ksize larger than input VALID", avgpool_grad(ksize=[1, 6, 1, 1]), [I([1, 4, 4, 2]), PO]),
    ("avgpoolgrad orig_input_shape of 3", avgpool_grad(ksize=K2), [I([1, 4, 4]), PO]),
    ("avgpoolgrad grad rank 3", avgpool_grad(ksize=K2), [I([1, 4, 4, 2]), F(3, 3, 2)]),
    # 3-D pooling
    ("maxpool3d ksize 0", pool3("MaxPool3D", ksize=[1, 0, 2, 2, 1]), [P5]),
    ("maxpool3d ksize in batch", pool3("MaxPool3D", ksize=[2, 2, 2, 2, 1]), [P5]),
    ("maxpool3d ksize in depth", pool3("MaxPool3D", ksize=[1, 2, 2, 2, 2]), [P5]),
    ("maxpool3d stride in batch", pool3("MaxPool3D", ksize=K3, strides=[2, 1, 1, 1, 1]), [P5]),
    ("maxpool3d stride 0", pool3("MaxPool3D", ksize=K3, strides=[1, 1, 0, 1, 1]), [P5]),
    ("maxpool3d ksize larger than input VALID", pool3("MaxPool3D", ksize=[1, 5, 2, 2, 1]), [P5]),
    ("maxpool3d ksize larger than input SAME", pool3("MaxPool3D", ksize=[1, 3, 1, 1, 1], padding="SAME"),
     [F(1, 1, 1, 1, 1)]),
    ("maxpool3d input rank 4", pool3("MaxPool3D", ksize=K3), [F(4, 4, 4, 2)]),
    ("avgpool3d ksize 0", pool3("AvgPool3D", ksize=[1, 2, 0, 2, 1]), [P5]),
    ("avgpool3d stride in depth", pool3("AvgPool3D", ksize=K3, strides=[1, 1, 1, 1, 2]), [P5]),
    ("avgpool3d ksize larger than input SAME", pool3("AvgPool3D", ksize=[1, 1, 3, 1, 1], padding="SAME"),
     [F(1, 1, 1, 1, 1)]),
    ("avgpool3d four ksize", pool3("AvgPool3D", ksize=[1, 2, 2, 1]), [P5]),
    ("maxpool3dgrad ksize 0", maxpool3_grad(ksize=[1, 0, 2, 2, 1]), [P5, PO5, PO5]),
    ("maxpool3dgrad stride 0", maxpool3_grad(ksize=K3, strides=[1, 1, 1, 0, 1]), [P5, PO5, PO5]),
    ("maxpool3dgrad grad shape", maxpool3_grad(ksize=K3), [P5, PO5, F(1, 3, 3, 2, 2)]),
    ("maxpool3dgradgrad ksize in depth", maxpool3_gg(ksize=[1, 2, 2, 2, 2]), [P5, PO5, P5]),
    ("maxpool3dgradgrad stride 0", maxpool3_gg(ksize=K3, strides=[1, 0, 1, 1, 1]), [P5, PO5, P5]),
    ("avgpool3dgrad ksize 0", avgpool3_grad(ksize=[1, 2, 2, 0, 1]), [I([1, 4, 4, 4, 2]), PO5]),
    ("avgpool3dgrad stride in batch", avgpool3_grad(ksize=K3, strides=[2, 1, 1, 1, 1]),
     [I([1, 4, 4, 4, 2]), PO5]),
    ("avgpool3dgrad orig_input_shape of 4", avgpool3_grad(ksize=K3), [I([1, 4, 4, 4]), PO5]),
]

CASES += [
    ("maxpoolgrad stride in depth", maxpool_grad(ksize=K2, strides=[1, 1, 1, 2]), [P, F(1, 3, 3, 1), F(1, 3, 3, 1)]),
    ("maxpoolgrad ksize in depth", maxpool_grad(ksize=[1, 1, 1, 2], strides=[1, 1, 1, 2]), [P, F(1, 4, 4, 1), F(1, 4, 4, 1)]),
    ("maxpoolgradv2 ksize in depth", maxpool_grad_v2(), [P, F(1, 4, 4, 1), F(1, 4, 4, 1), I([1, 1, 1, 2]), I([1, 1, 1, 2])]),
    ("maxpoolgradgrad stride in depth", maxpool_gg(ksize=K2, strides=[1, 1, 1, 2]), [P, F(1, 3, 3, 1), P]),
    ("maxpoolgradgrad ksize in depth", maxpool_gg(ksize=[1, 1, 1, 2], strides=[1, 1, 1, 2]), [P, F(1, 4, 4, 1), P]),
    ("maxpoolgradgradv2 ksize in depth", maxpool_gg_v2(), [P, F(1, 4, 4, 1), P, I([1, 1, 1, 2]), I([1, 1, 1, 2])]),
    ("avgpoolgrad ksize in depth", avgpool_grad(ksize=[1, 1, 1, 2], strides=[1, 1, 1, 2]), [I([1, 4, 4, 2]), F(1, 4, 4, 1)]),
    ("maxpool ksize beyond int32", pool("MaxPool", ksize=[1, 2**40, 1, 1], padding="SAME"), [F(1, 1, 1, 1)]),
    ("maxpool stride beyond int32", pool("MaxPool", ksize=K2, strides=[1, 2**33, 1, 1], padding="SAME"), [P]),
    ("conv2d stride beyond int32", conv(strides=[1, 2**33, 1, 1]), [X, W]),
    ("conv2d dilation beyond int32", conv(dilations=[1, 2**33, 1, 1]), [X, W]),
    ("conv3d stride beyond int32", c3(strides=[1, 2**33, 1, 1, 1]), [X5, W5]),
    ("maxpool3d ksize beyond int32", pool3("MaxPool3D", ksize=[1, 2**33, 1, 1, 1], padding="SAME"), [P5]),
    ("conv2d bpi out_backprop rank 3", conv_bi(), [I([1, 5, 5, 2]), W, F(4, 4, 3)]),
    ("conv3d zero input channels", c3(), [X5, F(2, 2, 2, 0, 3)]),
    ("conv3d empty batch zero filter", c3(), [F(0, 4, 4, 4, 2), F(2, 0, 2, 2, 3)]),
    ("conv2d empty batch zero filter", conv(), [F(0, 5, 5, 2), F(2, 0, 2, 3)]),
    ("conv2d empty input zero filter rows", conv(padding="SAME"), [F(1, 0, 5, 2), F(0, 2, 2, 3)]),
]

# Where TensorFlow's CPU kernel accepts what the plugin refuses (these stay
# refused: an unchecked window, grad or bias shape reads out of bounds, and
# depthwise max pooling and dilated depthwise gradients are not
# implemented), the cases above leave them out; see the report.


def _failure(fn, inputs, device):
    with tf.device(device):
        tensors = [tf.constant(a) for a in inputs]
        try:
            out = fn(*tensors)
        except (tf.errors.OpError, ValueError, TypeError, OverflowError) as e:
            return type(e), str(e)
    return None, out


@pytest.mark.parametrize("label,fn,inputs", CASES, ids=[c[0] for c in CASES])
def test_same_error_as_cpu(tf, label, fn, inputs):
    cpu_type, cpu_what = _failure(fn, inputs, "/CPU:0")
    ours_type, ours_what = _failure(fn, inputs, DEVICE)
    assert ours_type is cpu_type, f"{label}: OPENCL {ours_type} ({ours_what}), CPU {cpu_type} ({cpu_what})"
    if cpu_type is None:
        # Both accept it (an empty output): same shape, and it ran on OPENCL.
        assert ours_what.shape == cpu_what.shape, label
        assert ours_what.device.endswith("OPENCL:0"), ours_what.device


def test_raw_avg_pool_large_ksize_raises(tf):
    """TensorFlow's testRawAvgPoolLargeKsizeRaiseError, on both devices."""
    for device in ("/CPU:0", DEVICE):
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError, OverflowError)):
            with tf.device(device):
                gen_nn_ops.avg_pool(value=np.ones([1, 1, 1, 1]), ksize=[1, 1e20, 1, 1],
                                    strides=[1, 1, 1, 1], padding="SAME", data_format="NHWC")


def test_good_arguments_run_on_opencl(tf):
    """The errors above came from the OPENCL kernels: soft placement is off
    (the tf fixture), and good arguments of each family run there."""
    with tf.device(DEVICE):
        y = raw.Conv2D(input=tf.constant(X), filter=tf.constant(W), strides=S1, padding="VALID")
        z = raw.AvgPool(value=tf.constant(P), ksize=K2, strides=S1, padding="VALID")
        v = raw.Conv3D(input=tf.constant(X5), filter=tf.constant(W5), strides=S5, padding="VALID")
    assert y.device.endswith("OPENCL:0") and y.shape == (1, 4, 4, 3)
    assert z.device.endswith("OPENCL:0") and z.shape == (1, 3, 3, 2)
    assert v.device.endswith("OPENCL:0") and v.shape == (1, 3, 3, 3, 3)
    assert not tf.config.get_soft_device_placement()
