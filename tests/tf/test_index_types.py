"""Shape, axis and index arguments in every integer width TensorFlow's op
definitions allow: the same values as the CPU, never an index misread at
another width (StridedSlice with int16 begin/end/strides once gave [2.]
for [2., 4., 6.] with no error)."""
import numpy as np
import pytest

from conftest import DEVICE


def _both(tf, fn):
    with tf.device("/CPU:0"):
        want = fn()
    with tf.device(DEVICE):
        got = fn()
    if not isinstance(want, (list, tuple)):
        want, got = [want], [got]
    for g, w in zip(got, want):
        assert g.device.endswith("OPENCL:0"), g.device
        np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("itype", ["int16", "int32", "int64"])
def test_strided_slice_index_types(tf, itype):
    x = np.arange(10, dtype=np.float32)
    i = lambda *v: tf.constant(v, dtype=itype)  # noqa: E731
    _both(tf, lambda: tf.strided_slice(tf.constant(x), i(2), i(7), i(2)))
    _both(tf, lambda: tf.strided_slice(tf.constant(x), i(8), i(1), i(-3)))
    m = np.arange(24, dtype=np.float32).reshape(4, 6)
    _both(tf, lambda: tf.strided_slice(tf.constant(m), i(1, 5), i(4, 0), i(2, -2)))


@pytest.mark.parametrize("itype", ["int8", "int32", "int64"])
def test_split_v_size_types(tf, itype):
    x = tf.constant(np.arange(20, dtype=np.float32).reshape(5, 4))
    _both(tf, lambda: tf.raw_ops.SplitV(value=x, size_splits=tf.constant([1, -1, 2], itype),
                                          axis=tf.constant(0), num_split=3))


@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_shape_arguments_int64(tf, itype):
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    c = lambda *v: tf.constant(v, dtype=itype)  # noqa: E731
    _both(tf, lambda: tf.slice(x, c(0, 1, 1), c(2, 2, -1)))
    _both(tf, lambda: tf.tile(x, c(1, 2, 1)))
    _both(tf, lambda: tf.pad(x, tf.constant([[0, 1], [1, 0], [2, 2]], itype)))
    _both(tf, lambda: tf.transpose(x, c(2, 0, 1)))
    _both(tf, lambda: tf.raw_ops.ConcatV2(values=[x, x], axis=tf.constant(-1, itype)))
    _both(tf, lambda: tf.reduce_sum(x, axis=c(0, 2)))
