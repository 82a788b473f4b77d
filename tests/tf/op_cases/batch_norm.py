"""FusedBatchNormV3 and FusedBatchNormGradV3."""

import numpy as np

from ._base import BUILDERS
from .conv import _call, _fmt, _via_nhwc


# FusedBatchNormV3's outputs: y, batch_mean, batch_variance, reserve_space_1,
# reserve_space_2, reserve_space_3. TensorFlow's CPU kernel defines
# reserve_space_1/2 only in training (the batch mean and the biased batch
# variance, which FusedBatchNormGradV3 reads back); in inference they are
# unspecified, and reserve_space_3 always is (the CPU gives an empty tensor,
# OPENCL a scalar 0): those are not compared. batch_mean/batch_variance are
# the running statistics: in training the batch moments (variance
# Bessel-corrected) blended into the given ones by exponential_avg_factor,
# in inference the given estimates.
_BN_TRAINING_OUTPUTS = (0, 1, 2, 3, 4)
_BN_INFERENCE_OUTPUTS = (0, 1, 2)
_BN = _call("FusedBatchNormV3", "x", "scale", "offset", "mean", "variance")
_BN_GRAD = _call("FusedBatchNormGradV3", "y_backprop", "x", "scale", "reserve_space_1",
                 "reserve_space_2", "reserve_space_3")


def _batch_norm(c):
    U = c.t("U", np.float32)
    cases = []
    for fmt in ("NHWC", "NCHW"):
        for training in (True, False):
            for factor in (1.0, 0.5):
                attrs = dict(is_training=training, exponential_avg_factor=factor, epsilon=1e-3,
                             data_format=fmt)
                inputs = [_fmt(c.rand(2, 4, 5, 3), fmt), c.rand(3, dtype=U), c.rand(3, dtype=U),
                          c.rand(3, dtype=U), c.pos(3, dtype=U)]
                mode = "training" if training else "inference"
                cases.append((f"{fmt} {mode} factor={factor}", _BN(attrs), inputs,
                              {"outputs": _BN_TRAINING_OUTPUTS if training else _BN_INFERENCE_OUTPUTS,
                               "fallback": _via_nhwc(_BN, attrs, ("image", None, None, None, None))}))
    # Keras' layer in training with factor 1 passes empty running statistics.
    cases.append(("NHWC training, empty running statistics", _BN(dict(is_training=True)),
                  [c.rand(3, 2, 2, 5), c.rand(5, dtype=U), c.rand(5, dtype=U), np.zeros(0, U), np.zeros(0, U)],
                  {"outputs": _BN_TRAINING_OUTPUTS}))
    return cases


# FusedBatchNormGradV3's outputs: x_backprop, scale_backprop,
# offset_backprop, reserve_space_4, reserve_space_5; the last two are
# unused placeholders (unspecified): not compared. reserve_space_1/2 are what
# FusedBatchNormV3 gives out: in training the batch mean and biased variance
# of x, in inference the population estimates; reserve_space_3 is unused.
def _batch_norm_grad(c):
    U = c.t("U", np.float32)
    cases = []
    for fmt in ("NHWC", "NCHW"):
        for training in (True, False):
            x, dy = c.rand(2, 4, 5, 3), c.rand(2, 4, 5, 3)
            if training:
                x64 = x.astype(np.float64).reshape(-1, 3)
                mean, var = x64.mean(0).astype(U), x64.var(0).astype(U)
            else:
                mean, var = c.rand(3, dtype=U), c.pos(3, dtype=U)
            attrs = dict(is_training=training, epsilon=1e-3, data_format=fmt)
            mode = "training" if training else "inference"
            cases.append((f"{fmt} {mode}", _BN_GRAD(attrs),
                          [_fmt(dy, fmt), _fmt(x, fmt), c.rand(3, dtype=U), mean, var, np.zeros(0, U)],
                          {"outputs": (0, 1, 2),
                           "fallback": _via_nhwc(_BN_GRAD, attrs, ("image", "image", None, None, None, None))}))
    return cases


BUILDERS["FusedBatchNormV3"] = _batch_norm
BUILDERS["FusedBatchNormGradV3"] = _batch_norm_grad
