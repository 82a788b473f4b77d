"""Data movement: reshapes, transposes, concat, slices, pads, tiles,
space/batch, and the graph-only _ParallelConcat ops."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, _one, raw


def _i(c, name, values, default=np.int32):
    return np.array(values, dtype=c.t(name, default))


BUILDERS["Identity"] = lambda c: _one(lambda x: raw.Identity(input=x), c.rand(3, 4))
BUILDERS["Snapshot"] = lambda c: _one(lambda x: raw.Snapshot(input=x), c.rand(3, 4))
BUILDERS["Reshape"] = lambda c: _one(lambda x, s: raw.Reshape(tensor=x, shape=s),
                                     c.rand(3, 4), _i(c, "Tshape", [2, -1]))
BUILDERS["ExpandDims"] = lambda c: _one(lambda x, a: raw.ExpandDims(input=x, axis=a),
                                        c.rand(3, 4), _i(c, "Tdim", 1))
BUILDERS["Squeeze"] = lambda c: _one(lambda x: raw.Squeeze(input=x, axis=[1]), c.rand(3, 1, 4))
# Ranks 9 to 12 whose dims do not collapse: the kernels split them into
# several launches (TensorFlow's own tests Tile and Transpose rank 10).
_R10 = (2, 3, 2, 1, 3, 2, 2, 3, 1, 2)
_R12 = (2, 2, 3, 2, 2, 1, 2, 2, 3, 2, 2, 2)

BUILDERS["Transpose"] = lambda c: [
    ("2d", lambda x, p: raw.Transpose(x=x, perm=p), [c.rand(3, 4), _i(c, "Tperm", [1, 0])]),
    ("3d", lambda x, p: raw.Transpose(x=x, perm=p), [c.rand(2, 3, 4), _i(c, "Tperm", [2, 0, 1])]),
    ("4d", lambda x, p: raw.Transpose(x=x, perm=p), [c.rand(2, 3, 4, 5), _i(c, "Tperm", [0, 2, 3, 1])]),
    ("tiles", lambda x, p: raw.Transpose(x=x, perm=p), [c.rand(3, 37, 70), _i(c, "Tperm", [0, 2, 1])]),
    ("rank10", lambda x, p: raw.Transpose(x=x, perm=p),
     [c.rand(*_R10), _i(c, "Tperm", [9, 2, 7, 0, 5, 1, 8, 3, 6, 4])]),
    ("rank12", lambda x, p: raw.Transpose(x=x, perm=p),
     [c.rand(*_R12), _i(c, "Tperm", list(range(11, -1, -1)))])]
BUILDERS["ConcatV2"] = lambda c: [
    ("axis0", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x), [c.rand(2, 4), c.rand(3, 4), _i(c, "Tidx", 0)]),
    ("axis1", lambda a, b, d, x: raw.ConcatV2(values=[a, b, d], axis=x),
     [c.rand(2, 3), c.rand(2, 1), c.rand(2, 4), _i(c, "Tidx", -1)]),
    ("rank10", lambda a, b, x: raw.ConcatV2(values=[a, b], axis=x),
     [c.rand(*_R10), c.rand(*_R10[:4], 1, *_R10[5:]), _i(c, "Tidx", 4)])]
BUILDERS["Pack"] = lambda c: [
    ("axis0", lambda a, b: raw.Pack(values=[a, b]), [c.rand(3, 4), c.rand(3, 4)]),
    ("axis1", lambda a, b, d: raw.Pack(values=[a, b, d], axis=1), [c.rand(3, 4), c.rand(3, 4), c.rand(3, 4)]),
    ("rank11", lambda a, b: raw.Pack(values=[a, b], axis=6), [c.rand(*_R10), c.rand(*_R10)])]
BUILDERS["Unpack"] = lambda c: [
    ("axis0", lambda x: raw.Unpack(value=x, num=3), [c.rand(3, 4)]),
    ("axis1", lambda x: raw.Unpack(value=x, num=4, axis=1), [c.rand(3, 4)]),
    ("rank10", lambda x: raw.Unpack(value=x, num=3, axis=4), [c.rand(*_R10)])]
BUILDERS["Split"] = lambda c: [
    ("axis1", lambda d, x: raw.Split(axis=d, value=x, num_split=2), [np.array(1, np.int32), c.rand(3, 4)]),
    ("rank10", lambda d, x: raw.Split(axis=d, value=x, num_split=3), [np.array(7, np.int32), c.rand(*_R10)])]
BUILDERS["SplitV"] = lambda c: [
    ("axis1", lambda x, s, d: raw.SplitV(value=x, size_splits=s, axis=d, num_split=3),
     [c.rand(3, 6), _i(c, "Tlen", [1, 2, -1], np.int64), np.array(1, np.int32)]),
    ("rank10", lambda x, s, d: raw.SplitV(value=x, size_splits=s, axis=d, num_split=2),
     [c.rand(*_R10), _i(c, "Tlen", [1, 2], np.int64), np.array(-3, np.int32)])]
def _np_slice(x, b, s):
    return [x[tuple(slice(i, x.shape[d] if n == -1 else i + n) for d, (i, n) in enumerate(zip(b, s)))]]


def _np_pad(x, p, v=0):
    return [np.pad(x, p, constant_values=v)]


_HIGH_RANK = "numpy: TensorFlow's CPU kernel takes at most 8 dims"


def _np_strided_slice_grad(sh, b, e, s, dy):
    dx = np.zeros(sh, dy.dtype)
    dx[tuple(slice(*t) for t in zip(b, e, s))] = dy
    return [dx]

BUILDERS["Slice"] = lambda c: [
    ("basic", lambda x, b, s: raw.Slice(input=x, begin=b, size=s),
     [c.rand(4, 5), _i(c, "Index", [1, 2]), _i(c, "Index", [2, -1])]),
    ("rank12", lambda x, b, s: raw.Slice(input=x, begin=b, size=s),
     [c.rand(*_R12), _i(c, "Index", [1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1]),
      _i(c, "Index", [1, 2, 2, 1, 1, 1, 1, 2, 1, 1, 1, -1])], {"fallback": (_HIGH_RANK, _np_slice)})]
BUILDERS["StridedSlice"] = lambda c: [
    ("basic", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s),
     [c.rand(5, 6), _i(c, "Index", [1, 0]), _i(c, "Index", [4, 6]), _i(c, "Index", [1, 2])]),
    ("masks", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s,
                                                  begin_mask=1, end_mask=2, shrink_axis_mask=0),
     [c.rand(5, 6), _i(c, "Index", [3, 1]), _i(c, "Index", [0, 0]), _i(c, "Index", [-1, 1])]),
    ("shrink", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s, shrink_axis_mask=1),
     [c.rand(5, 6), _i(c, "Index", [2, 0]), _i(c, "Index", [3, 6]), _i(c, "Index", [1, 1])]),
    ("rank10", lambda x, b, e, s: raw.StridedSlice(input=x, begin=b, end=e, strides=s, end_mask=0b1010101010),
     [c.rand(3, 4, 3, 2, 4, 3, 2, 3, 4, 3), _i(c, "Index", [0, 3, 1, 1, 0, 2, 0, 2, 3, 0]),
      _i(c, "Index", [3, 0, 3, 0, 4, 0, 2, 0, 4, 0]), _i(c, "Index", [2, -1, 1, -1, 2, -2, 1, -1, -3, 2])])]
BUILDERS["StridedSliceGrad"] = lambda c: [
    ("basic", lambda sh, b, e, s, dy: raw.StridedSliceGrad(shape=sh, begin=b, end=e, strides=s, dy=dy),
     [_i(c, "Index", [5, 6]), _i(c, "Index", [1, 0]), _i(c, "Index", [4, 6]), _i(c, "Index", [1, 2]),
      c.rand(3, 3)]),
    ("rank9", lambda sh, b, e, s, dy: raw.StridedSliceGrad(shape=sh, begin=b, end=e, strides=s, dy=dy),
     [_i(c, "Index", [3, 2, 4, 3, 2, 3, 4, 2, 3]), _i(c, "Index", [0, 1, 0, 2, 0, 0, 3, 0, 1]),
      _i(c, "Index", [3, 0, 4, 0, 2, 3, 0, 2, 3]), _i(c, "Index", [2, -1, 3, -2, 1, 2, -2, 1, 1]),
      c.rand(2, 1, 2, 1, 2, 2, 2, 2, 2)],
     {"reference": ("numpy: TensorFlow's CPU StridedSliceGrad of rank 9 returns uninitialised "
                    "memory (2.19.1)", _np_strided_slice_grad)})]
BUILDERS["Tile"] = lambda c: [
    ("basic", lambda x, m: raw.Tile(input=x, multiples=m), [c.rand(2, 3), _i(c, "Tmultiples", [2, 3])]),
    ("rank10", lambda x, m: raw.Tile(input=x, multiples=m),
     [c.rand(*_R10), _i(c, "Tmultiples", [2, 1, 2, 3, 1, 2, 1, 2, 2, 1])])]
BUILDERS["Pad"] = lambda c: [
    ("basic", lambda x, p: raw.Pad(input=x, paddings=p), [c.rand(2, 3), _i(c, "Tpaddings", [[1, 0], [2, 1]])]),
    ("rank10", lambda x, p: raw.Pad(input=x, paddings=p),
     [c.rand(*_R10), _i(c, "Tpaddings", [[1, 0], [0, 1], [1, 1], [0, 2], [1, 0],
                                          [0, 1], [1, 0], [0, 1], [2, 0], [1, 1]])],
     {"fallback": (_HIGH_RANK, _np_pad)})]
BUILDERS["PadV2"] = lambda c: [
    ("basic", lambda x, p, v: raw.PadV2(input=x, paddings=p, constant_values=v),
     [c.rand(2, 3), _i(c, "Tpaddings", [[1, 0], [2, 1]]), np.array(c.rand(1)[0], c.T)]),
    ("rank10", lambda x, p, v: raw.PadV2(input=x, paddings=p, constant_values=v),
     [c.rand(*_R10), _i(c, "Tpaddings", [[0, 1], [1, 0], [0, 0], [1, 1], [0, 1],
                                          [1, 0], [0, 1], [1, 0], [0, 0], [1, 2]]),
      np.array(c.rand(1)[0], c.T)], {"fallback": (_HIGH_RANK, _np_pad)})]
BUILDERS["SpaceToBatchND"] = lambda c: [
    ("2x2 padded", lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [c.rand(2, 5, 7, 3), _i(c, "Tblock_shape", [2, 2]), _i(c, "Tpaddings", [[1, 0], [0, 1]])]),
    ("one dim", lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [c.rand(3, 7, 2), _i(c, "Tblock_shape", [3]), _i(c, "Tpaddings", [[1, 1]])]),
    ("rank9", lambda x, b, p: raw.SpaceToBatchND(input=x, block_shape=b, paddings=p),
     [c.rand(2, 4, 3, 2, 2, 3, 2, 1, 2), _i(c, "Tblock_shape", [2, 3]),
      _i(c, "Tpaddings", [[0, 0], [1, 2]])])]
BUILDERS["BatchToSpaceND"] = lambda c: [
    ("2x2 cropped", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [c.rand(8, 3, 4, 3), _i(c, "Tblock_shape", [2, 2]), _i(c, "Tcrops", [[1, 0], [0, 1]])]),
    ("one dim", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [c.rand(9, 3, 2), _i(c, "Tblock_shape", [3]), _i(c, "Tcrops", [[1, 1]])]),
    ("rank9", lambda x, b, p: raw.BatchToSpaceND(input=x, block_shape=b, crops=p),
     [c.rand(12, 2, 2, 2, 2, 3, 2, 1, 2), _i(c, "Tblock_shape", [2, 3]),
      _i(c, "Tcrops", [[0, 0], [1, 2]])])]


# _ParallelConcatStart/_ParallelConcatUpdate exist only inside graphs
# (TensorFlow's parallel_concat rewrite of tf.parallel_stack): both run
# through one tf.function, Start's output read back by the final Identity.
def _parallel_stack(c):
    dtype = c.t("dtype", c.T)
    stack = tf.function(lambda *xs: tf.parallel_stack(list(xs)))
    return [("parallel_stack 4x[2,3]", stack, [c.rand(2, 3, dtype=dtype) for _ in range(4)]),
            ("parallel_stack 3x[5]", stack, [c.rand(5, dtype=dtype) for _ in range(3)])]


BUILDERS["_ParallelConcatStart"] = _parallel_stack
BUILDERS["_ParallelConcatUpdate"] = _parallel_stack
