"""Every kernel the plugin registers, run by real TensorFlow on /OPENCL:0
(soft placement off) and compared with TensorFlow's own CPU kernel.

The cases come from TensorFlow's kernel registry (what TF_InitKernel
registered, as TensorFlow sees it), so a new kernel is covered the moment it
is registered; its op needs a builder in op_cases.BUILDERS or the case fails.
"""
import os
import zlib

import numpy as np
import pytest

from conftest import DEVICE, tfocl_command, tfocl_json

import tensorflow as tf  # noqa: E402  (conftest set the plugin up)
from tensorflow.python.framework import kernels as tf_kernels  # noqa: E402

import op_cases  # noqa: E402


def _dtype_name(enum):
    return tf.as_dtype(enum).name


def opencl_kernels():
    """[(op, {attr: numpy type}, host_memory, {attr: (DataType enums)})]
    for each OPENCL kernel."""
    out = []
    for k in tf_kernels.get_all_registered_kernels().kernel:
        if k.device_type != "OPENCL":
            continue
        types, enums = {}, {}
        for con in k.constraint:
            allowed = list(con.allowed_values.list.type)
            if len(allowed) == 1:
                types[con.name] = op_cases.NP.get(allowed[0], allowed[0])
            enums[con.name] = tuple(sorted(allowed))
        out.append((k.op, types, sorted(k.host_memory_arg), enums))
    return sorted(out, key=lambda x: (x[0], sorted((a, str(t)) for a, t in x[1].items())))


KERNELS = opencl_kernels()


def _kernel_id(kernel):
    op, types, _, _ = kernel
    tail = ",".join(f"{a}={np.dtype(t).name if isinstance(t, type) else t}" for a, t in sorted(types.items()))
    return f"{op}[{tail}]" if tail else op


def _params():
    params = []
    for kernel in KERNELS:
        marks = [pytest.mark.variables] if kernel[0] in op_cases.VARIABLE_OPS else []
        params.append(pytest.param(kernel, id=_kernel_id(kernel), marks=marks))
    return params


def test_registry_is_not_empty():
    assert KERNELS, "TensorFlow's registry has no OPENCL kernel: TF_InitKernel registered nothing"


def _to_list(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _run(fn, inputs, device):
    with tf.device(device):
        tensors = [tf.constant(a) for a in inputs]
        out = fn(*tensors)
    if out is None:  # NoOp (eager returns None)
        return []
    return _to_list(out)


def _reference(op, fn, inputs):
    """TensorFlow's CPU result, as numpy arrays. Where the CPU has no kernel
    for the dtype: half inputs in float32 (result cast back), else a numpy
    reference (op_cases.NUMPY_REFS)."""
    try:
        return [t.numpy() for t in _run(fn, inputs, "/CPU:0")]
    except (tf.errors.InvalidArgumentError, tf.errors.NotFoundError) as e:
        if "Could not satisfy device specification" not in str(e) and "No registered" not in str(e):
            raise
        if any(getattr(a, "dtype", None) == np.float16 for a in inputs):
            up = [a.astype(np.float32) if getattr(a, "dtype", None) == np.float16 else a for a in inputs]
            out = [t.numpy() for t in _run(fn, up, "/CPU:0")]
            return [o.astype(np.float16) if o.dtype == np.float32 else o for o in out]
        if op in op_cases.NUMPY_REFS:
            return [op_cases.NUMPY_REFS[op](*inputs)]
        raise AssertionError(f"{op}: TensorFlow's CPU has no kernel for these inputs and "
                             f"op_cases.NUMPY_REFS has no reference: {e}") from e


@pytest.mark.parametrize("kernel", _params())
def test_kernel_matches_cpu(tf, kernel):
    op, types, host_memory, _enums = kernel
    builder = op_cases.BUILDERS.get(op)
    assert builder is not None, (
        f"the plugin registers {op} but tests/tf/op_cases/ has no builder for it: add one to its family's module")
    unsupported = [a for a, t in types.items() if not isinstance(t, type)]
    assert not unsupported, f"{op}: type constraint {types} has no numpy equivalent"
    # A seed per kernel that every run repeats (hash() of a str changes with
    # PYTHONHASHSEED), so a failure reproduces.
    cases = builder(op_cases.Case(op, types, seed=zlib.crc32(_kernel_id(kernel).encode())))
    for case in cases:
        label, fn, inputs = case[:3]
        opts = case[3] if len(case) > 3 else {}
        if "reference" in opts:
            why, ref = opts["reference"]
            print(f"{op}/{label}: reference: {why}")
            expected = [np.asarray(r) for r in ref(*inputs)]
        else:
            try:
                expected = _reference(op, fn, inputs)
            except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError) as e:
                # TensorFlow's CPU kernel refuses this layout or dilation:
                # the case's fallback reference (op_cases.CPU_REFUSALS).
                if "fallback" not in opts or not any(r in e.message for r in op_cases.CPU_REFUSALS):
                    raise
                why, ref = opts["fallback"]
                print(f"{op}/{label}: TensorFlow's CPU refuses it ({e.message.split(' [Op:')[0][-120:]}); "
                      f"reference: {why}")
                expected = [np.asarray(r) for r in ref(*inputs)]
        wrong = op_cases.CPU_WRONG.get((op, types.get("T")))
        if wrong:
            print(f"{op}/{label}: numpy reference, {wrong[0]}")
            expected = [np.asarray(wrong[1](*inputs))]
        got = _run(fn, inputs, DEVICE)
        assert len(got) == len(expected), f"{op}/{label}: {len(got)} outputs, CPU gave {len(expected)}"
        # Outputs TensorFlow leaves unspecified (op_cases says which) are
        # still produced on OPENCL, but not compared.
        compared = opts.get("outputs", range(len(got)))
        for i, (g, e) in enumerate(zip(got, expected)):
            if i not in compared:
                assert g.device.endswith("device:OPENCL:0"), (
                    f"{op}/{label}: output {i} is on {g.device}, not OPENCL:0")
                continue
            assert g.device.endswith("device:OPENCL:0"), (
                f"{op}/{label}: output {i} is on {g.device}, not OPENCL:0")
            g_np, e_np = g.numpy(), np.asarray(e)
            assert g_np.dtype == e_np.dtype and g_np.shape == e_np.shape, (
                f"{op}/{label}: output {i} is {g_np.dtype}{g_np.shape}, CPU gave {e_np.dtype}{e_np.shape}")
            tol = opts.get("tol") or op_cases.tolerance(op, e_np.dtype.type)
            if e_np.dtype.kind in "fc" or e_np.dtype == op_cases.BF16:
                wide = np.complex128 if e_np.dtype.kind == "c" else np.float64
                np.testing.assert_allclose(
                    g_np.astype(wide), e_np.astype(wide), equal_nan=True,
                    err_msg=f"{op}/{label} output {i} ({_kernel_id(kernel)})", **tol)
            else:
                np.testing.assert_array_equal(g_np, e_np, err_msg=f"{op}/{label} output {i}")


@pytest.mark.skipif(tfocl_command() is None, reason="build/host_shim/tfocl not built")
def test_host_shim_registry_equals_tensorflows():
    """The host shim registers the plugin's kernels as TensorFlow does: the
    same (op, type constraints, host-memory args) set."""
    from tensorflow.core.framework import types_pb2

    def key(op, enums, host_memory):
        return (op, tuple(sorted(enums.items())), tuple(sorted(host_memory)))

    from conftest import has_variable_api
    # Without kernels_experimental.h in TensorFlow the plugin leaves out the
    # kernels that need it; the host shim always offers that API.
    skip = set() if has_variable_api() else op_cases.VARIABLE_OPS
    # The host shim has no DT_VARIANT values, hence no TF_ZerosLikeVariant /
    # TF_AddNVariant, and the plugin registers no variant kernels there.
    variant = types_pb2.DT_VARIANT
    ours = {key(op, enums, hm) for op, _, hm, enums in KERNELS
            if op not in skip and not any(variant in t for t in enums.values())}
    shim = set()
    for k in tfocl_json("kernels")["kernels"]:
        if k["op"] in skip:
            continue
        enums = {a: tuple(sorted(types_pb2.DataType.Value(t) for t in v))
                 for a, v in k["constraints"].items()}
        shim.add(key(k["op"], enums, k["host_memory"]))
    assert ours == shim, {"only in TensorFlow": sorted(ours - shim)[:20],
                          "only in the host shim": sorted(shim - ours)[:20]}


def test_kernel_count_report(tf):
    ops = sorted({k[0] for k in KERNELS})
    print(f"{len(KERNELS)} OPENCL kernels, {len(ops)} ops: {' '.join(ops)}")
    if os.environ.get("TFOCL_MIN_OPS"):
        assert len(ops) >= int(os.environ["TFOCL_MIN_OPS"])
