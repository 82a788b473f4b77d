"""Multinomial, StatelessMultinomial and RandomUniformInt on OPENCL, by
their distributions and invariants rather than by bits (test_ops compares
seeded draws with TensorFlow's CPU exactly): frequencies within a few
standard deviations of the probabilities, values in range, classes of
probability 0 never drawn, a stateful op's calls following one sequence
(the CPU's, for the same seeds), a stateless op a function of its seed.
"""
import numpy as np
import pytest

from conftest import DEVICE

N = 40000


def _within_sigmas(counts, probs, n, sigmas=5.0):
    expected = probs * n
    sd = np.sqrt(n * probs * (1 - probs)) + 1e-9
    assert np.all(np.abs(counts - expected) <= sigmas * sd + 1), (counts, expected)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_multinomial_frequencies(tf, dtype):
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4, 1e-30],
                              [0.7, 0.1, 0.1, 0.1, 1e-30]])).astype(dtype)
    logits[:, 4] = -np.inf
    with tf.device(DEVICE):
        out = tf.raw_ops.Multinomial(logits=tf.constant(logits), num_samples=N)
    assert out.device.endswith("OPENCL:0")
    s = out.numpy()
    assert s.shape == (2, N) and s.dtype == np.int64
    assert s.min() >= 0 and s.max() <= 3, "a class of probability 0 was drawn"
    probs = np.exp(logits.astype(np.float64))
    probs /= probs.sum(axis=1, keepdims=True)
    for b in range(2):
        _within_sigmas(np.bincount(s[b], minlength=5)[:4], probs[b, :4], N)


def test_multinomial_sequence_matches_cpu(tf):
    logits = np.array([[0.5, -1.0, 2.0]], np.float32)

    def calls(device):
        with tf.device(device):
            op = tf.function(lambda x: tf.raw_ops.Multinomial(
                logits=x, num_samples=64, seed=3, seed2=9, output_dtype=tf.int32))
            x = tf.constant(logits)
            return [op(x).numpy() for _ in range(3)]
    got, want = calls(DEVICE), calls("/CPU:0")
    assert not np.array_equal(got[0], got[1]), "the generator did not advance"
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_stateless_multinomial_is_a_function_of_the_seed(tf):
    logits = tf.constant(np.zeros((3, 10), np.float32))
    with tf.device(DEVICE):
        a = tf.raw_ops.StatelessMultinomial(logits=logits, num_samples=N, seed=[1, 2])
        b = tf.raw_ops.StatelessMultinomial(logits=logits, num_samples=N, seed=[1, 2])
        c = tf.raw_ops.StatelessMultinomial(logits=logits, num_samples=N, seed=[1, 3])
    assert a.device.endswith("OPENCL:0")
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    for b_ in range(3):
        _within_sigmas(np.bincount(a.numpy()[b_], minlength=10), np.full(10, 0.1), N)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_random_uniform_int_frequencies(tf, dtype):
    lo, hi = -3, 9
    with tf.device(DEVICE):
        op = tf.function(lambda: tf.raw_ops.RandomUniformInt(
            shape=[N], minval=tf.constant(lo, dtype), maxval=tf.constant(hi, dtype)))
        first, second = op(), op()
    assert first.device.endswith("OPENCL:0")
    v = first.numpy()
    assert v.dtype == np.dtype(dtype) and v.min() >= lo and v.max() < hi
    _within_sigmas(np.bincount(v - lo, minlength=hi - lo), np.full(hi - lo, 1 / (hi - lo)), N)
    assert not np.array_equal(v, second.numpy()), "the generator did not advance"
