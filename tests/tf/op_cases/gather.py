"""Gather, fill, select and the ops around them."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, Variant, _one, raw
from .movement import _i


BUILDERS["Fill"] = lambda c: _one(lambda d, v: raw.Fill(dims=d, value=v),
                                  _i(c, "index_type", [2, 3]), np.array(c.rand(1)[0], c.T))
BUILDERS["ZerosLike"] = lambda c: (_variant_cases(c, "ZerosLike") if c.T is Variant else
                                   _one(lambda x: raw.ZerosLike(x=x), c.rand(3, 4)))


# ZerosLike and AddN of DT_VARIANT: TensorLists built from tensors of
# several dtypes (TensorList gradients of Keras' LSTM/GRU loops), stacked
# back for the comparison; the element work runs on the device.
def _variant_cases(c, op):
    def run(x):
        shape = tf.constant(list(x.shape[1:]), tf.int32)
        lst = raw.TensorListFromTensor(tensor=x, element_shape=shape)
        out = raw.ZerosLike(x=lst) if op == "ZerosLike" else raw.AddN(inputs=[lst, lst, lst])
        return raw.TensorListStack(input_handle=out, element_dtype=x.dtype, element_shape=shape)
    return [(f"TensorList of {np.dtype(dt).name}", run, [c.rand(4, 3, dtype=dt)])
            for dt in (np.float32, np.float16, np.float64, np.int64)]


_ADD_N = BUILDERS["AddN"]
BUILDERS["AddN"] = lambda c: _variant_cases(c, "AddN") if c.T is Variant else _ADD_N(c)
BUILDERS["OnesLike"] = lambda c: _one(lambda x: raw.OnesLike(x=x), c.rand(3, 4))
BUILDERS["GatherV2"] = lambda c: [
    ("axis0", lambda p, i, a: raw.GatherV2(params=p, indices=i, axis=a),
     [c.rand(5, 3, dtype=c.t("Tparams")), _i(c, "Tindices", [4, 0, 2, 2]), _i(c, "Taxis", 0)]),
    ("axis1", lambda p, i, a: raw.GatherV2(params=p, indices=i, axis=a),
     [c.rand(2, 5, 3, dtype=c.t("Tparams")), _i(c, "Tindices", [[1, 0], [4, 4]]), _i(c, "Taxis", 1)]),
    ("batch_dims1", lambda p, i, a: raw.GatherV2(params=p, indices=i, axis=a, batch_dims=1),
     [c.rand(2, 5, 3, dtype=c.t("Tparams")), _i(c, "Tindices", [[1, 0, 4], [4, 2, 2]]), _i(c, "Taxis", 1)]),
    ("batch_dims-1", lambda p, i, a: raw.GatherV2(params=p, indices=i, axis=a, batch_dims=-1),
     [c.rand(2, 3, 5, 4, dtype=c.t("Tparams")), _i(c, "Tindices", [[[1, 0], [4, 4], [0, 3]]] * 2),
      _i(c, "Taxis", 2)])]
BUILDERS["Select"] = lambda c: [  # raw_ops.Select names t/e x/y
    ("same", lambda k, t, e: raw.Select(condition=k, x=t, y=e),
     [c.rand(3, 4, dtype=np.bool_), c.rand(3, 4), c.rand(3, 4)]),
    ("rows", lambda k, t, e: raw.Select(condition=k, x=t, y=e),
     [c.rand(3, dtype=np.bool_), c.rand(3, 4), c.rand(3, 4)])]
BUILDERS["SelectV2"] = lambda c: [
    ("same", lambda k, t, e: raw.SelectV2(condition=k, t=t, e=e),
     [c.rand(3, 4, dtype=np.bool_), c.rand(3, 4), c.rand(3, 4)]),
    ("broadcast", lambda k, t, e: raw.SelectV2(condition=k, t=t, e=e),
     [c.rand(4, dtype=np.bool_), c.rand(3, 1), c.rand(3, 4)])]
BUILDERS["OneHot"] = lambda c: [
    ("last", lambda i, d, on, off: raw.OneHot(indices=i, depth=d, on_value=on, off_value=off),
     [_i(c, "TI", [0, 3, -1, 5, 2], np.int64), np.array(4, np.int32), np.array(1, c.T), np.array(0, c.T)]),
    ("axis0", lambda i, d, on, off: raw.OneHot(indices=i, depth=d, on_value=on, off_value=off, axis=0),
     [_i(c, "TI", [[0, 1], [2, 3]], np.int64), np.array(3, np.int32), np.array(2, c.T), np.array(-1, c.T)])]
