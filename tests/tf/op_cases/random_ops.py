"""Random ops: stateless and stateful draws, RandomUniformInt,
Multinomial."""

import numpy as np

import tensorflow as tf

from ._base import BUILDERS, raw


# Fixed key/counter/seeds: the stateless ops are functions of them, and a
# seeded stateful op starts the same sequence on each device.
_KEY = np.array([0x123456789A], np.uint64)
_COUNTER = np.array([5, 0x4123456789AB], np.uint64)
_ALG = np.array(1, np.int32)


def _stateless(name):
    f = getattr(raw, name)

    def build(c):
        dt = tf.as_dtype(c.t("dtype"))
        return [(f"shape {s}", lambda shape, k, n, a: f(shape=shape, key=k, counter=n, alg=a, dtype=dt),
                 [np.array(s, np.int32), _KEY, _COUNTER, _ALG]) for s in ([3, 7], [1031], [0])]
    return build


def _uniform_int(c):
    T = c.t("dtype")
    return [("ints", lambda shape, k, n, a, lo, hi: raw.StatelessRandomUniformIntV2(
        shape=shape, key=k, counter=n, alg=a, minval=lo, maxval=hi),
        [np.array([5, 7], np.int32), _KEY, _COUNTER, _ALG, np.array(-5, T), np.array(17, T)])]


def _stateful(name):
    f = getattr(raw, name)

    def build(c):
        dt = tf.as_dtype(c.t("dtype"))
        return [("seeded", lambda shape: f(shape=shape, seed=7, seed2=17, dtype=dt),
                 [np.array([3, 7], np.int32)])]
    return build


def _key_counter(name):
    f = getattr(raw, name)
    return lambda c: [(f"seed {t.__name__}", lambda seed: f(seed=seed), [np.array([3, -4], t)])
                      for t in (np.int32, np.int64)]


for _n in ("StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"):
    BUILDERS[_n] = _stateless(_n)
BUILDERS["StatelessRandomUniformIntV2"] = _uniform_int
for _n in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
    BUILDERS[_n] = _stateful(_n)
for _n in ("StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg"):
    BUILDERS[_n] = _key_counter(_n)
BUILDERS["StatelessRandomGetAlg"] = lambda c: [("alg", lambda: raw.StatelessRandomGetAlg(), [])]


# ---- random ops: RandomUniformInt ----
# Seeded: a freshly built kernel starts PhiloxRandom(seed, seed2) on each
# device, and OPENCL draws TensorFlow's numbers from it (exact).
def _random_uniform_int(c):
    T = c.t("Tout", np.int32)
    big = np.iinfo(T)
    return [(label, lambda shape, lo, hi, s=s: raw.RandomUniformInt(
        shape=shape, minval=lo, maxval=hi, seed=s[0], seed2=s[1]),
        [np.array(shape, np.int32), np.array(lo, T), np.array(hi, T)])
        for label, shape, lo, hi, s in (
            ("small range", [3, 7], -5, 17, (7, 17)),
            ("odd length", [1031], 0, 1, (-3, 1 << 40)),
            ("full range", [5, 5], big.min, big.max, (1, 0)),
            ("empty", [0, 3], 3, 3, (7, 17)))]


BUILDERS["RandomUniformInt"] = _random_uniform_int


# Multinomial and StatelessMultinomial: TensorFlow's CPU algorithm for the
# same seed (a CPU kernel that runs as one shard: small batches), so the
# samples equal the CPU's; the statistical test in test_multinomial below
# checks the distribution itself.
def _multinomial(name):
    def build(c):
        T, out = c.T, tf.as_dtype(c.t("output_dtype", np.int64))
        cases = []
        for label, shape, n in (("one row", (1, 5), 200), ("rows", (3, 7), 9), ("no samples", (2, 3), 0)):
            logits = c.rand(*shape)
            if name == "Multinomial":
                cases.append((label, lambda x, k: raw.Multinomial(
                    logits=x, num_samples=k, seed=7, seed2=17, output_dtype=out),
                    [logits, np.array(n, np.int32)]))
            else:
                cases.append((label, lambda x, k, s: raw.StatelessMultinomial(
                    logits=x, num_samples=k, seed=s, output_dtype=out),
                    [logits, np.array(n, np.int32), np.array([3, -4], np.int64)]))
        logits = np.array([[-np.inf, 0.5, np.nan, 2, np.inf]], T)
        if name == "StatelessMultinomial":
            cases.append(("non-finite logits", lambda x, k, s: raw.StatelessMultinomial(
                logits=x, num_samples=k, seed=s, output_dtype=out),
                [logits, np.array(50, np.int32), np.array([1, 2], np.int32)]))
        return cases
    return build


BUILDERS["Multinomial"] = _multinomial("Multinomial")
BUILDERS["StatelessMultinomial"] = _multinomial("StatelessMultinomial")
