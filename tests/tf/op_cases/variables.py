"""Variables and optimizers (resource ops), scatters, unsorted segments."""

import numpy as np
import pytest

import tensorflow as tf

from ._base import BUILDERS, _one, raw
from .movement import _i


# fn creates the variable(s) under the current device scope, runs the op,
# and returns the variables' values.
def _var_update(name):
    f = getattr(raw, name)

    def build(c):
        def fn(init, delta):
            v = tf.Variable(init)
            f(resource=v.handle, value=delta)
            return v.read_value()
        dtype = c.t("dtype", c.T)
        if dtype == np.int32:
            # Eager TensorFlow keeps int32 variables on the host whatever
            # the device scope (as for GPUs): strict placement refuses
            # them, so the kernel is reached only from C
            # (tests/ops/test_variables.c).
            pytest.skip("eager TensorFlow keeps int32 variables on the host; "
                        "tests/ops/test_variables.c covers this kernel")
        return _one(fn, c.rand(3, 4, dtype=dtype), c.rand(3, 4, dtype=dtype))
    return build


BUILDERS["AssignAddVariableOp"] = _var_update("AssignAddVariableOp")
BUILDERS["AssignSubVariableOp"] = _var_update("AssignSubVariableOp")


def _assign(c):
    def fn(init, value):
        v = tf.Variable(init)
        raw.AssignVariableOp(resource=v.handle, value=value)
        return raw.ReadVariableOp(resource=v.handle, dtype=v.dtype)
    dtype = c.t("dtype", c.T)
    if dtype == np.int32:
        pytest.skip("eager TensorFlow keeps int32 variables on the host; "
                    "tests/ops/test_variables.c covers this kernel")
    return _one(fn, c.rand(3, 4, dtype=dtype), c.rand(3, 4, dtype=dtype))


BUILDERS["AssignVariableOp"] = _assign
BUILDERS["ReadVariableOp"] = _assign


def _resource_gather(c):
    def fn(init, idx):
        v = tf.Variable(init)
        return raw.ResourceGather(resource=v.handle, indices=idx, dtype=v.dtype)

    def batched(init, idx):
        v = tf.Variable(init)
        return raw.ResourceGather(resource=v.handle, indices=idx, dtype=v.dtype, batch_dims=1)
    dt = c.t("dtype")
    return [("basic", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [4, 0, 2, 2])]),
            ("batch_dims1", batched, [c.rand(2, 5, 3, dtype=dt), _i(c, "Tindices", [[1, 4, 4], [0, 3, 1]])])]


BUILDERS["ResourceGather"] = _resource_gather


def _resource_gather_nd(c):
    def fn(init, idx):
        v = tf.Variable(init)
        return raw.ResourceGatherNd(resource=v.handle, indices=idx, dtype=v.dtype)
    dt = c.t("dtype")
    return [("rows", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [[4], [0], [2]])]),
            ("elements", fn, [c.rand(4, 3, 2, dtype=dt), _i(c, "Tindices", [[[3, 1], [0, 2]], [[1, 1], [3, 0]]])])]


BUILDERS["ResourceGatherNd"] = _resource_gather_nd


# Scatters with duplicate indices: the device applies them in index order,
# as TensorFlow's CPU kernel, so even float sums must match closely.
def _scatter(name):
    f = getattr(raw, name)

    def build(c):
        def fn(init, idx, upd):
            v = tf.Variable(init)
            f(resource=v.handle, indices=idx, updates=upd)
            return v.read_value()
        dt = c.t("dtype")
        # Div: no zero divisors (TensorFlow's CPU kernel refuses them).
        upd = c.nonzero if name == "ResourceScatterDiv" else c.rand
        return [("rows", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [4, 0, 2]), upd(3, 3, dtype=dt)]),
                ("duplicates", fn, [c.rand(6, 4, dtype=dt), _i(c, "Tindices", [[1, 5, 1], [1, 0, 5]]),
                                    upd(2, 3, 4, dtype=dt)]),
                ("scalar update", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [3, 1, 3]),
                                       upd(1, dtype=dt).reshape(())])]
    return build


for _n in ["ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterUpdate", "ResourceScatterMul",
           "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax"]:
    BUILDERS[_n] = _scatter(_n)


def _scatter_nd(name):
    f = getattr(raw, name)

    def build(c):
        def fn(init, idx, upd):
            v = tf.Variable(init)
            f(ref=v.handle, indices=idx, updates=upd)
            return v.read_value()
        dt = c.t("T")
        return [("rows", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [[4], [0], [4]]), c.rand(3, 3, dtype=dt)]),
                ("elements", fn, [c.rand(4, 3, dtype=dt), _i(c, "Tindices", [[3, 1], [0, 2], [3, 1]]),
                                  c.rand(3, dtype=dt)])]
    return build


for _n in ["ResourceScatterNdAdd", "ResourceScatterNdSub", "ResourceScatterNdUpdate"]:
    BUILDERS[_n] = _scatter_nd(_n)


def _tensor_scatter(name):
    f = getattr(raw, name)

    def build(c):
        dt = c.t("T")
        if name == "ScatterNd":
            def fn(idx, upd, shape):
                return f(indices=idx, updates=upd, shape=shape)
            shape = lambda *d: _i(c, "Tindices", list(d))  # noqa: E731
            return [("rows", fn, [_i(c, "Tindices", [[4], [0], [4]]), c.rand(3, 3, dtype=dt), shape(5, 3)]),
                    ("elements", fn, [_i(c, "Tindices", [[3, 1], [0, 2], [3, 1]]), c.rand(3, dtype=dt),
                                      shape(4, 3)]),
                    ("2-D batch", fn, [_i(c, "Tindices", [[[1], [2]], [[0], [1]]]), c.rand(2, 2, 4, dtype=dt),
                                       shape(3, 4)])]

        def fn(x, idx, upd):
            return f(**{"input" if name == "ScatterNdNonAliasingAdd" else "tensor": x},
                     indices=idx, updates=upd)
        # Duplicate rows: applied in index order on both devices (the CPU's
        # order; Update keeps the last).
        return [("rows", fn, [c.rand(5, 3, dtype=dt), _i(c, "Tindices", [[4], [0], [4]]), c.rand(3, 3, dtype=dt)]),
                ("elements", fn, [c.rand(4, 3, dtype=dt), _i(c, "Tindices", [[3, 1], [0, 2], [3, 1]]),
                                  c.rand(3, dtype=dt)]),
                ("many rows", fn, [c.rand(300, 7, dtype=dt), _i(c, "Tindices", [[(i * 37) % 300] for i in range(600)]),
                                   c.rand(600, 7, dtype=dt)])]
    return build


for _n in ["TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMin",
           "TensorScatterMax", "ScatterNdNonAliasingAdd", "ScatterNd"]:
    BUILDERS[_n] = _tensor_scatter(_n)
def _top_k(c):
    def fn(x, k):
        return raw.TopKV2(input=x, k=k)
    ties = np.round(c.rand(6, 40) * 2).astype(c.T)
    return [("rows", fn, [c.rand(4, 33), np.array(5, np.int32)]),
            ("ties, k = n (tf.sort)", fn, [ties, np.array(40, np.int32)]),
            ("long row", fn, [c.rand(2, 1500), np.array(700, np.int32)]),
            ("3-D, k = 1", fn, [c.rand(2, 3, 9), np.array(1, np.int32)]),
            ("k = 0", fn, [c.rand(3, 4), np.array(0, np.int32)])]


BUILDERS["TopKV2"] = _top_k


def _where(c):
    def fn(x):
        return raw.Where(condition=x)
    mask = c.rng.random((6, 7, 5)) < 0.3
    x = mask if c.T == np.bool_ else np.where(mask, c.rand(6, 7, 5), 0).astype(c.T)
    return [("3-D", fn, [x]), ("none true", fn, [np.zeros((4, 9), c.T)]),
            ("long", fn, [(c.rng.random(20000) < 0.5).astype(c.T)]),
            ("empty", fn, [np.zeros((0, 3), c.T)])]


BUILDERS["Where"] = _where


def _in_top_k(c):
    def fn(p, t, k):
        return raw.InTopKV2(predictions=p, targets=t, k=k)
    it = c.t("T")
    ties = np.round(c.rand(40, 12, dtype=np.float32))
    targets = np.arange(40, dtype=it) % 12
    return [("k=5 of 100", fn, [c.rand(16, 100, dtype=np.float32), np.arange(16, dtype=it) * 5, np.array(5, it)]),
            ("ties at the boundary", fn, [ties, targets, np.array(3, it)]),
            ("edges", fn, [np.array([[0.1, 0.9, 0.5], [np.nan, 0.2, 0.3], [0.4, 0.3, np.inf], [1.0, 2.0, 3.0]],
                                    np.float32), np.array([1, 0, 2, 5], it), np.array(2, it)])]


BUILDERS["InTopKV2"] = _in_top_k
BUILDERS["GatherNd"] = lambda c: [
    ("rows", lambda p, i: raw.GatherNd(params=p, indices=i),
     [c.rand(5, 3, dtype=c.t("Tparams")), _i(c, "Tindices", [[4], [0], [2]])]),
    ("elements", lambda p, i: raw.GatherNd(params=p, indices=i),
     [c.rand(4, 3, 2, dtype=c.t("Tparams")), _i(c, "Tindices", [[[3, 1], [0, 2]], [[1, 1], [3, 0]]])])]


def _strided_slice_assign(c):
    def assign(**attrs):
        def fn(init, b, e, s, value):
            v = tf.Variable(init)
            raw.ResourceStridedSliceAssign(ref=v.handle, begin=b, end=e, strides=s, value=value, **attrs)
            return v.read_value()
        return fn
    dt = c.T
    return [("strided", assign(), [c.rand(5, 6, dtype=dt), _i(c, "Index", [1, 0]), _i(c, "Index", [4, 6]),
                                   _i(c, "Index", [1, 2]), c.rand(3, 3, dtype=dt)]),
            ("negative stride", assign(), [c.rand(5, 6, dtype=dt), _i(c, "Index", [4, 5]), _i(c, "Index", [0, 0]),
                                           _i(c, "Index", [-2, -3]), c.rand(2, 2, dtype=dt)]),
            ("broadcast", assign(), [c.rand(4, 5, dtype=dt), _i(c, "Index", [1, 1]), _i(c, "Index", [3, 5]),
                                     _i(c, "Index", [1, 1]), c.rand(4, dtype=dt)]),
            ("shrink", assign(shrink_axis_mask=1), [c.rand(4, 5, dtype=dt), _i(c, "Index", [2, 0]),
                                                     _i(c, "Index", [3, 5]), _i(c, "Index", [1, 1]),
                                                     c.rand(5, dtype=dt)])]


BUILDERS["ResourceStridedSliceAssign"] = _strided_slice_assign


def _segment(name):
    f = getattr(raw, name)

    def build(c):
        def fn(data, ids, n):
            return f(data=data, segment_ids=ids, num_segments=n)
        data = c.pos if name == "UnsortedSegmentProd" else c.rand
        # Negative ids are dropped on both devices (the CPU refuses ids past
        # num_segments, the OPENCL kernel drops them as TensorFlow's GPU).
        return [("rows", fn, [data(7, 3), _i(c, "Tindices", [0, 3, 3, -1, 0, 1, 3]),
                              np.array(5, c.t("Tnumsegments", np.int32))]),
                ("many", fn, [data(300), _i(c, "Tindices", list(np.arange(300) % 7)),
                              np.array(7, c.t("Tnumsegments", np.int32))]),
                ("2-D ids", fn, [data(3, 4, 2), _i(c, "Tindices", [[0, 1, 1, 2], [2, 2, 0, 0], [1, 1, 1, 0]]),
                                 np.array(3, c.t("Tnumsegments", np.int32))])]
    return build


for _n in ["UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"]:
    BUILDERS[_n] = _segment(_n)


def _apply(name, slots, scalars, grad="grad", **attrs):
    """ResourceApply<name>: `slots` variables besides var (accumulators,
    initialised positive), `scalars` hyper-parameters, then `grad`."""
    f = getattr(raw, name)

    def build(c):
        def fn(var0, *rest):
            n = len(slots)
            vs = [tf.Variable(var0)] + [tf.Variable(r) for r in rest[:n]]
            kw = {"var": vs[0].handle}
            kw.update({s: v.handle for s, v in zip(slots, vs[1:])})
            kw.update(dict(zip(scalars, rest[n:n + len(scalars)])))
            kw[grad] = rest[-1]
            f(**kw, **attrs)
            return [v.read_value() for v in vs]
        scalar_values = {"lr": 0.1, "alpha": 0.1, "momentum": 0.9, "beta1_power": 0.9 ** 3,
                         "beta2_power": 0.999 ** 3, "beta1": 0.9, "beta2": 0.999,
                         "epsilon": 1e-7, "rho": 0.9, "delta": 0.5, "l1": 0.0, "l2": 0.0,
                         "lr_power": -0.5, "l2_shrinkage": 0.0}
        inputs = [c.rand(3, 4)] + [c.pos(3, 4) for _ in slots]
        inputs += [np.array(scalar_values[s], c.T) for s in scalars]
        inputs.append(c.rand(3, 4))
        return _one(fn, *inputs)
    return build


BUILDERS["ResourceApplyGradientDescent"] = _apply("ResourceApplyGradientDescent", [], ["alpha"], grad="delta")
BUILDERS["ResourceApplyMomentum"] = _apply("ResourceApplyMomentum", ["accum"], ["lr", "momentum"])
BUILDERS["ResourceApplyKerasMomentum"] = _apply("ResourceApplyKerasMomentum", ["accum"], ["lr", "momentum"])
BUILDERS["ResourceApplyAdam"] = _apply(
    "ResourceApplyAdam", ["m", "v"], ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"])
BUILDERS["ResourceApplyAdamWithAmsgrad"] = _apply(
    "ResourceApplyAdamWithAmsgrad", ["m", "v", "vhat"],
    ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"])
BUILDERS["ResourceApplyRMSProp"] = _apply("ResourceApplyRMSProp", ["ms", "mom"], ["lr", "rho", "momentum", "epsilon"])
BUILDERS["ResourceApplyCenteredRMSProp"] = _apply(
    "ResourceApplyCenteredRMSProp", ["mg", "ms", "mom"], ["lr", "rho", "momentum", "epsilon"])
BUILDERS["ResourceApplyAdagrad"] = _apply("ResourceApplyAdagrad", ["accum"], ["lr"])
BUILDERS["ResourceApplyAdagradV2"] = _apply("ResourceApplyAdagradV2", ["accum"], ["lr", "epsilon"])
BUILDERS["ResourceApplyAdadelta"] = _apply(
    "ResourceApplyAdadelta", ["accum", "accum_update"], ["lr", "rho", "epsilon"])
BUILDERS["ResourceApplyAdaMax"] = _apply(
    "ResourceApplyAdaMax", ["m", "v"], ["beta1_power", "lr", "beta1", "beta2", "epsilon"])


def _keras_adam(c):
    """_TfoclKerasAdam, the plugin's Keras Adam (kernels/variables.c; the
    Python side calls it, tf.raw_ops has no wrapper). TensorFlow has no CPU
    kernel for it: the reference is numpy in float32, Keras' ops in their
    order, each rounded."""
    from tensorflow.python.eager import context, execute

    def fn(var0, m0, v0, alpha, c1, c2, eps, grad):
        vs = [tf.Variable(x) for x in (var0, m0, v0)]
        attrs = ("T", tf.as_dtype(c.T).as_datatype_enum, "use_locking", False)
        execute.execute("_TfoclKerasAdam", 0, [v.handle for v in vs] + [
            tf.constant(x) for x in (alpha, c1, c2, eps, grad)], attrs, context.context())
        return [v.read_value() for v in vs]

    def ref(var0, m0, v0, alpha, c1, c2, eps, grad):
        m = m0 + (grad - m0) * c1
        v = v0 + (grad * grad - v0) * c2
        return [var0 - m * alpha / (np.sqrt(v) + eps), m, v]

    f32 = np.float32
    scalars = [f32(0.01 * np.sqrt(1 - 0.999 ** 3) / (1 - 0.9 ** 3)), f32(1 - 0.9), f32(1 - 0.999),
               f32(1e-7)]
    return [("keras adam", fn, [c.rand(3, 4), c.pos(3, 4), c.pos(3, 4), *scalars, c.rand(3, 4)],
             {"reference": ("numpy, Keras' ops rounded each", ref)})]


BUILDERS["_TfoclKerasAdam"] = _keras_adam


# Where TensorFlow's CPU kernel is not the reference.
# (op, numpy type) -> (reason, numpy function of the inputs)
