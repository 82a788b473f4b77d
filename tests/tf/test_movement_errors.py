"""Bad inputs to the data-movement and image ops on /OPENCL:0 fail as
TensorFlow's CPU kernels fail on the same inputs: the same error type and the same message
(TensorFlow's node prefix and op suffix aside), and the process goes on."""
import re

import numpy as np
import pytest

from conftest import DEVICE

import tensorflow as tf  # noqa: E402  (conftest set the plugin up)

raw = tf.raw_ops


def _f32(*shape):
    return np.arange(int(np.prod(shape)) if shape else 1, dtype=np.float32).reshape(shape)


def _i32(v):
    return np.array(v, np.int32)


_EMPTY = np.zeros([0], np.int32)

# (label, fn, inputs): fn(*tensors) must fail on both devices.
CASES = [
    ("concat scalars", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x), [_f32(), _f32(), _i32(0)]),
    ("concat scalars axis 1", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x),
     [_f32(), _f32(), _i32(1)]),
    ("concat axis out of range", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x),
     [_f32(2, 3), _f32(2, 3), _i32(2)]),
    ("concat axis -3", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x),
     [_f32(2, 3), _f32(2, 3), _i32(-3)]),
    ("concat dims differ", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x),
     [_f32(2, 3), _f32(3, 3), _i32(1)]),
    ("concat ranks differ", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x),
     [_f32(2, 3), _f32(2, 3, 1), _i32(0)]),
    ("concat axis not scalar", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x),
     [_f32(2, 3), _f32(2, 3), _i32([0, 1])]),
    ("slice of a scalar", lambda x, b, s: raw.Slice(input=x, begin=b, size=s), [_f32(), _i32([0]), _i32([1])]),
    ("slice begin past the end", lambda x, b, s: raw.Slice(input=x, begin=b, size=s),
     [_f32(4, 6), _i32([5, 0]), _i32([1, 1])]),
    ("slice size too big", lambda x, b, s: raw.Slice(input=x, begin=b, size=s),
     [_f32(4, 6), _i32([1, 0]), _i32([4, 1])]),
    ("slice wrong length", lambda x, b, s: raw.Slice(input=x, begin=b, size=s),
     [_f32(4, 6), _i32([0]), _i32([1])]),
    ("strided slice of a scalar", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s),
     [_f32(), _i32([0]), _i32([1]), _i32([1])]),
    ("strided slice of a scalar, shrink",
     lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s, shrink_axis_mask=1),
     [_f32(), _i32([0]), _i32([1]), _i32([1])]),
    ("strided slice stride 0", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s),
     [_f32(10), _i32([1]), _i32([8]), _i32([0])]),
    ("strided slice shrink out of range",
     lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s, shrink_axis_mask=1),
     [_f32(4, 6), _i32([4]), _i32([5]), _i32([1])]),
    ("strided slice two ellipses",
     lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s, ellipsis_mask=3),
     [_f32(4, 6), _i32([0, 0]), _i32([0, 0]), _i32([1, 1])]),
    ("strided slice too many indices", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s),
     [_f32(4), _i32([0, 0]), _i32([1, 1]), _i32([1, 1])]),
    ("strided slice lengths differ", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s),
     [_f32(4, 6), _i32([0, 0]), _i32([1]), _i32([1, 1])]),
    ("strided slice grad of a scalar",
     lambda sh, b, e, s, dy: raw.StridedSliceGrad(shape=sh, begin=b, end=e, strides=s, dy=dy),
     [_EMPTY, _i32([0]), _i32([1]), _i32([1]), _f32()]),
    ("strided slice grad dy shape",
     lambda sh, b, e, s, dy: raw.StridedSliceGrad(shape=sh, begin=b, end=e, strides=s, dy=dy),
     [_i32([4, 6]), _i32([1, 0]), _i32([3, 6]), _i32([1, 1]), _f32(7)]),
    ("transpose perm too long", lambda x, p: raw.Transpose(x=x, perm=p), [_f32(4, 3), _i32([0, 1, 2])]),
    ("transpose perm repeats", lambda x, p: raw.Transpose(x=x, perm=p), [_f32(4, 3), _i32([0, 0])]),
    ("transpose perm out of range", lambda x, p: raw.Transpose(x=x, perm=p), [_f32(4, 3), _i32([0, 2])]),
    ("transpose perm not a vector", lambda x, p: raw.Transpose(x=x, perm=p), [_f32(4, 3), _i32([[0, 1]])]),
    ("pack shapes differ", lambda a, b: raw.Pack(values=[a, b]), [_f32(2, 3), _f32(3, 2)]),
    ("pack axis", lambda a, b: raw.Pack(values=[a, b], axis=3), [_f32(2, 3), _f32(2, 3)]),
    ("unpack num", lambda x: raw.Unpack(value=x, num=4), [_f32(3, 4)]),
    ("unpack scalar", lambda x: raw.Unpack(value=x, num=1), [_f32()]),
    ("split uneven", lambda d, x: raw.Split(axis=d, value=x, num_split=2), [_i32(0), _f32(5, 4)]),
    ("split dim out of range", lambda d, x: raw.Split(axis=d, value=x, num_split=2), [_i32(-3), _f32(4, 4)]),
    ("splitv two -1", lambda x, s, d: raw.SplitV(value=x, size_splits=s, axis=d, num_split=3),
     [_f32(7), _i32([-1, -1, 2]), _i32(0)]),
    ("splitv sizes", lambda x, s, d: raw.SplitV(value=x, size_splits=s, axis=d, num_split=2),
     [_f32(7), _i32([2, 3]), _i32(0)]),
    ("splitv negative size", lambda x, s, d: raw.SplitV(value=x, size_splits=s, axis=d, num_split=3),
     [_f32(7), _i32([-2, 5, 4]), _i32(0)]),
    ("tile negative", lambda x, m: raw.Tile(input=x, multiples=m), [_f32(3, 4), _i32([2, -1])]),
    ("tile length", lambda x, m: raw.Tile(input=x, multiples=m), [_f32(3, 4), _i32([2])]),
    ("pad negative", lambda x, p: raw.Pad(input=x, paddings=p), [_f32(3), _i32([[-1, 2]])]),
    ("pad rows", lambda x, p: raw.Pad(input=x, paddings=p), [_f32(3, 4), _i32([[1, 1]])]),
    ("padv2 constant not scalar", lambda x, p, v: raw.PadV2(input=x, paddings=p, constant_values=v),
     [_f32(3), _i32([[1, 1]]), _f32(2)]),
    ("space to batch not divisible", lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [_f32(1, 5, 4, 1), _i32([2, 2]), _i32([[0, 0], [0, 0]])]),
    ("space to batch negative padding",
     lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [_f32(1, 4, 4, 1), _i32([2, 2]), _i32([[-2, 0], [0, 0]])]),
    ("space to batch block 0", lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [_f32(1, 4, 4, 1), _i32([0, 2]), _i32([[0, 0], [0, 0]])]),
    ("space to batch rank", lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [_f32(4, 4), _i32([2, 2]), _i32([[0, 0], [0, 0]])]),
    ("space to batch paddings shape",
     lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [_f32(1, 4, 4, 1), _i32([2, 2]), _i32([0, 0, 0, 0])]),
    ("space to batch block not a vector",
     lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [_f32(1, 4, 4, 1), _i32([[2, 2]]), _i32([[0, 0], [0, 0]])]),
    ("space to batch five block dims",
     lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [_f32(1, 2, 2, 2, 2, 2), _i32([2] * 5), _i32([[0, 0]] * 5)]),
    ("batch to space not divisible", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [_f32(6, 2, 2, 1), _i32([2, 2]), _i32([[0, 0], [0, 0]])]),
    ("batch to space negative crop", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [_f32(8, 2, 2, 1), _i32([2, 2]), _i32([[0, -1], [0, 0]])]),
    ("batch to space cropped below zero",
     lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [_f32(4, 2, 2, 1), _i32([2, 2]), _i32([[3, 2], [0, 0]])]),
    ("batch to space block 0", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [_f32(4, 2, 2, 1), _i32([0, 2]), _i32([[0, 0], [0, 0]])]),
    ("batch to space negative block", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [_f32(4, 2, 2, 1), _i32([-2, 2]), _i32([[0, 0], [0, 0]])]),
    ("batch to space crops shape", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [_f32(4, 2, 2, 1), _i32([2, 2]), _i32([[0, 0, 0, 0]])]),
    ("resize bilinear both attrs", lambda x, s: raw.ResizeBilinear(
        images=x, size=s, align_corners=True, half_pixel_centers=True), [_f32(1, 3, 3, 1), _i32([5, 5])]),
    ("resize bilinear rank 3", lambda x, s: raw.ResizeBilinear(images=x, size=s),
     [_f32(3, 3, 1), _i32([5, 5])]),
    ("resize bilinear no channels", lambda x, s: raw.ResizeBilinear(images=x, size=s),
     [_f32(1, 3, 3, 0), _i32([5, 5])]),
    ("resize bilinear empty image", lambda x, s: raw.ResizeBilinear(images=x, size=s),
     [_f32(1, 0, 3, 1), _i32([5, 5])]),
    ("resize bilinear size 0", lambda x, s: raw.ResizeBilinear(images=x, size=s),
     [_f32(1, 3, 3, 1), _i32([0, 5])]),
    ("resize bilinear size of 3", lambda x, s: raw.ResizeBilinear(images=x, size=s),
     [_f32(1, 3, 3, 1), _i32([5, 5, 5])]),
    ("resize bilinear size 2-D", lambda x, s: raw.ResizeBilinear(images=x, size=s),
     [_f32(1, 3, 3, 1), _i32([[5, 5]])]),
    ("resize bilinear grad rank 3", lambda g, o: raw.ResizeBilinearGrad(grads=g, original_image=o),
     [_f32(3, 3, 1), _f32(1, 2, 2, 1)]),
    ("resize bilinear grad original rank 3", lambda g, o: raw.ResizeBilinearGrad(grads=g, original_image=o),
     [_f32(1, 3, 3, 1), _f32(2, 2, 1)]),
    ("resize bilinear grad original empty", lambda g, o: raw.ResizeBilinearGrad(grads=g, original_image=o),
     [_f32(1, 3, 3, 1), _f32(1, 0, 2, 1)]),
    ("resize bilinear grad resized empty", lambda g, o: raw.ResizeBilinearGrad(grads=g, original_image=o),
     [_f32(1, 3, 0, 1), _f32(1, 2, 2, 1)]),
    ("resize nearest both attrs", lambda x, s: raw.ResizeNearestNeighbor(
        images=x, size=s, align_corners=True, half_pixel_centers=True), [_f32(1, 3, 3, 1), _i32([5, 5])]),
    ("resize nearest size 0", lambda x, s: raw.ResizeNearestNeighbor(images=x, size=s),
     [_f32(1, 3, 3, 1), _i32([5, 0])]),
    ("resize nearest grad size 0", lambda g, s: raw.ResizeNearestNeighborGrad(grads=g, size=s),
     [_f32(1, 3, 3, 1), _i32([0, 2])]),
    ("resize nearest grad size of 3", lambda g, s: raw.ResizeNearestNeighborGrad(grads=g, size=s),
     [_f32(1, 3, 3, 1), _i32([2, 2, 2])]),
    ("resize nearest grad rank 3", lambda g, s: raw.ResizeNearestNeighborGrad(grads=g, size=s),
     [_f32(3, 3, 1), _i32([2, 2])]),
    ("bitcast narrower last dim", lambda x: raw.Bitcast(input=x, type=tf.int64), [np.arange(3, dtype=np.int32)]),
    ("bitcast scalar to wider", lambda x: raw.Bitcast(input=x, type=tf.int64), [np.array(1, np.int32)]),
    ("bitcast to complex128", lambda x: raw.Bitcast(input=x, type=tf.complex128), [np.arange(3, dtype=np.int64)]),
]


def _message(e):
    """The kernel's message: TensorFlow's node prefix and op suffix off."""
    m = re.sub(r"^\{\{function_node [^}]*\}\} ", "", e.message)
    return re.sub(r" \[Op:\w+\]( name: .*)?$", "", m).strip()


def _failure(fn, inputs, device):
    with tf.device(device):
        tensors = [tf.constant(a) for a in inputs]
        try:
            fn(*tensors)
        except tf.errors.OpError as e:
            return type(e), _message(e)
    return None, None


@pytest.mark.parametrize("label,fn,inputs", CASES, ids=[c[0] for c in CASES])
def test_error_matches_cpu(tf, label, fn, inputs):
    cpu_type, cpu_message = _failure(fn, inputs, "/CPU:0")
    assert cpu_type is not None, f"{label}: TensorFlow's CPU kernel accepts it: the case is stale"
    ours_type, ours_message = _failure(fn, inputs, DEVICE)
    assert ours_type is cpu_type, f"{label}: {ours_type} ({ours_message}), CPU: {cpu_type} ({cpu_message})"
    assert ours_message == cpu_message, f"{label}"
    with tf.device(DEVICE):
        c = tf.constant([1.0, 2.0]) * 2.0
    assert c.device.endswith("OPENCL:0") and c.numpy().tolist() == [2.0, 4.0]


def test_errors_ran_on_opencl(tf):
    """The failures above came from the OPENCL kernels, not a fallback: with
    soft placement off a placement error would read differently, and a good
    input of each op runs there."""
    with tf.device(DEVICE):
        y = raw.ConcatV2(values=[tf.constant(_f32(2, 3)), tf.constant(_f32(2, 3))], axis=tf.constant(_i32(1)))
        z = raw.StridedSlice(input=tf.constant(_f32(4, 6)), begin=tf.constant(_i32([1, 0])),
                             end=tf.constant(_i32([3, 6])), strides=tf.constant(_i32([1, 2])))
    assert y.device.endswith("OPENCL:0") and y.shape == (2, 6)
    assert z.device.endswith("OPENCL:0") and z.shape == (2, 3)
