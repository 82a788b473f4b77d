"""Keras 3 on the OPENCL device: three places where Keras' TensorFlow backend
turns XLA on, and XLA has no OPENCL backend (`No JIT device registered for
OPENCL`). A real XLA for a PluggableDevice goes through NextPluggableDevice
and PJRT: out of tfocl's scope, so the fix is to stay off XLA.

1. `Trainer._resolve_auto_jit_compile` (keras/src/trainers/trainer.py; the
   class is `BaseTrainer` from Keras 3.16): `compile(jit_compile="auto")`,
   the default, means XLA as soon as TensorFlow sees a non-CPU physical
   device. Wrapped: False when those devices are all OPENCL, else Keras'
   answer. An explicit `jit_compile=True` never reaches it and still fails
   with TensorFlow's own error.
2. `conv()` of the TensorFlow backend (keras/src/backend/tensorflow/nn.py;
   .../tensorflow/ops/nn.py from 3.16) runs grouped convolutions (input
   channels != kernel.shape[-2]) through `tf.function(jit_compile=True)`,
   whatever compile() said, because TensorFlow's CPU kernels lacked them.
   tfocl has them (Conv2D with in_channels = groups * kernel_in_channels):
   where the non-CPU devices are all OPENCL the grouped case runs as Keras'
   plain `_conv` does, `tf.nn.convolution`. Kept as Keras has them: 3-D
   channels_first convolutions (Keras' other XLA case) and, in 3.16, strides
   and dilations both above 1. Every caller reaches `conv` as an attribute of
   the module at call time (`backend.nn.conv` in keras.src.ops.nn and
   keras.src.ops.image; `backend.ops.nn.conv` in 3.16), so replacing the
   attribute is enough; depthwise, separable and transposed convolutions
   have their own functions and never used XLA.

3. `mean()` of the TensorFlow backend's numpy (keras/src/backend/tensorflow/
   ops/numpy.py, Keras 3.16) reduces float16 through
   `tf.function(jit_compile=True)`, because TensorFlow's CPU reduce_mean
   lost float16 sums to overflow; mixed_float16's GlobalAveragePooling and
   every float16 `keras.ops.mean` took it, with or without compile(). Where
   the non-CPU devices are all OPENCL a float16 mean is Keras 3.15's:
   reduce_mean in float32, cast back, which is also what XLA computes (a
   float32 accumulator). IndexedSlices and the other dtypes go to Keras.

4. `lstm()` and `gru()` of the TensorFlow backend's rnn (keras/src/backend/
   tensorflow/rnn.py) run a layer as one CudnnRNNV3 op only where
   `tf.config.list_logical_devices("GPU")` is non-empty; elsewhere the
   layer falls back to its generic loop, dozens of small ops per time step.
   tfocl has CudnnRNNV3 and its backprop for float32 LSTMs and GRUs: where
   OPENCL devices are present and no GPU, a layer that Keras would give
   cuDNN (tanh, sigmoid, a bias, not unrolled; a GRU with reset_after)
   takes Keras' own `_cudnn_lstm` or `_cudnn_gru` when it has float32
   inputs, unless a tf.device scope puts it on another device (the op has
   no CPU kernel). A masked layer too, whatever the mask: cuDNN itself
   takes right-padded masks only (Keras asserts that at run time), but
   Keras' loop skips a masked step, so each row's unmasked steps go first
   in time order, run as sequences of their counts, and each step's output
   is gathered back from the last unmasked step up to it, as the loop
   carries it (zeros with the layer's zero_output_for_mask, which
   LSTM.inner_loop and GRU.inner_loop, wrapped, pass on). An Embedding with
   mask_zero over left-padded sequences into an LSTM trained at 3.4 ms a
   step instead of the loop's 31 (the CPU's 3.1). `_cudnn_gru` puts the
   GRU's gates in cuDNN's order (r, z, n) on CUDA builds of TensorFlow
   only, so on others the wrapper hands it the weights with z and r
   swapped already.
   ROCm builds keep the loop: Keras gives MIOpen's gate order there.

5. `Adam.update_step` (keras/src/optimizers/adam.py) updates a weight with
   three element-wise chains and three variable updates (m, v, then the
   weight, reading m and v back), and computes beta_1 ** t and
   beta_2 ** t again for every weight. The plugin defines
   `_TfoclKerasAdam`, the same ops in their order and rounding in one pass
   over the four tensors (kernels/variables.c; not TensorFlow's
   ResourceApplyAdam, which rounds beta rather than 1 - beta to float32: a
   1.3e-5 relative change of beta_2's rate that moved a CNN's accuracy):
   in a tf.function, a float32 weight on OPENCL with a dense gradient and
   no amsgrad takes it, with alpha, 1 - beta_1 and 1 - beta_2 computed as
   Keras computes them, once per optimizer step, device and learning rate.
   The model zoo's Transformer block ran 166 device commands per train step
   instead of 219, its step 1.55 ms instead of 1.66 on the 2-core host. Eager updates (run_eagerly, a custom loop
   without tf.function) keep Keras' ops, as does every update where the
   plugin could not define the op (TensorFlow 2.20 and 2.21, whose wheels
   let no plugin update a variable in place) and another Adam (a Keras
   whose update_step reads other attributes).

6. `SGD.update_step` (keras/src/optimizers/sgd.py) with momentum updates
   the momentum and then the weight, reading the momentum back: two
   element-wise chains and two variable updates per weight. TensorFlow's
   ResourceApplyKerasMomentum computes the same ops in their order
   (accum = accum * momentum - grad * lr; var += accum, or with Nesterov
   var += accum * momentum - grad * lr), and the plugin registers it where
   it can update in place: in a tf.function, a float32 weight on OPENCL
   with a dense gradient takes it: one launch per weight. A 64-256-256-10
   MLP's step (batch 64, momentum 0.9) took 1.13-1.18 ms against 1.17-1.21
   with Keras' ops, which the graph pass had mostly fused already, on the
   2-core host. SGD without momentum keeps Keras' one subtraction.

"The non-CPU devices are all OPENCL" is decided at call time, from
`tf.config.list_physical_devices()`, as Keras decides its own question.
`TFOCL_KERAS_COMPAT=0` (read when the module is imported) patches nothing.
"""
import functools
import math
import sys
import threading
import types

from tfocl._hook import MARK, disabled, say

SWITCH = "TFOCL_KERAS_COMPAT"
TRAINER = "keras.src.trainers.trainer"
CONV_MODULES = ("keras.src.backend.tensorflow.nn", "keras.src.backend.tensorflow.ops.nn")
CONV_PARAMS = ("inputs", "kernel", "strides", "padding", "data_format", "dilation_rate")
NUMPY_MODULES = ("keras.src.backend.tensorflow.numpy", "keras.src.backend.tensorflow.ops.numpy")
MEAN_PARAMS = ("x", "axis", "keepdims")
LSTM_PARAMS = ("inputs", "initial_state_h", "initial_state_c", "mask", "kernel",
               "recurrent_kernel", "bias", "activation", "recurrent_activation",
               "return_sequences", "go_backwards", "unroll", "time_major")
GRU_PARAMS = ("inputs", "initial_state", "mask", "kernel", "recurrent_kernel", "bias",
              "activation", "recurrent_activation", "return_sequences", "go_backwards",
              "unroll", "time_major", "reset_after")
RNN_HELPERS = ("_cudnn_lstm", "_cudnn_gru", "_do_lstm_arguments_support_cudnn",
               "_do_gru_arguments_support_cudnn", "_is_gpu_available")
RNN_LAYER_MODULES = {"keras.src.layers.rnn.lstm": "LSTM", "keras.src.layers.rnn.gru": "GRU"}
INNER_LOOP_PARAMS = ("self", "sequences", "initial_state", "mask", "training")
UPDATE_STEP_PARAMS = ("self", "gradient", "variable", "learning_rate")
# What Keras' Adam.update_step reads: the formula _TfoclKerasAdam computes.
ADAM_NAMES = frozenset(("_momentums", "_velocities", "beta_1", "beta_2", "epsilon", "amsgrad",
                        "iterations", "_get_variable_index"))


def keras_version():
    for name in ("keras.src.version", "keras"):
        version = getattr(sys.modules.get(name), "__version__", None)
        if version:
            return version
    return "(unknown version)"


def opencl_only():
    """True when TensorFlow has non-CPU physical devices and all of them are
    OPENCL (Keras' own test, `_resolve_auto_jit_compile`, counts any non-CPU
    device as an XLA device)."""
    import tensorflow as tf

    others = {d.device_type for d in tf.config.list_physical_devices()} - {"CPU"}
    return others == {"OPENCL"}


def _params(fn):
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def _wrap(original, wrapper):
    functools.update_wrapper(wrapper, original)
    setattr(wrapper, MARK, original)
    return wrapper


def patch_trainer(module):
    if disabled(SWITCH):
        return
    owner = None
    for name in ("Trainer", "BaseTrainer"):
        cls = getattr(module, name, None)
        if isinstance(cls, type) and "_resolve_auto_jit_compile" in vars(cls):
            owner = cls
            break
    original = vars(owner)["_resolve_auto_jit_compile"] if owner else None
    if hasattr(original, MARK):
        return  # patched already (by another copy of tfocl)
    backend = getattr(module, "backend", None)
    if owner is None or _params(original) != ("self",) or not callable(getattr(backend, "backend", None)):
        say(f"Keras {keras_version()} has no Trainer._resolve_auto_jit_compile(self) as tfocl knows it: "
            "jit_compile=\"auto\" is not patched and turns XLA on, which has no OPENCL backend; "
            "pass jit_compile=False to compile()")
        return

    def _resolve_auto_jit_compile(self):
        if backend.backend() == "tensorflow" and opencl_only():
            return False
        return original(self)

    owner._resolve_auto_jit_compile = _wrap(original, _resolve_auto_jit_compile)


def _compiles_with_xla(code, nested="_conv_xla"):
    """True when a function's code holds Keras' nested XLA function (conv's
    `_conv_xla`, mean's `xla_reduce_mean`)."""
    return any(isinstance(c, types.CodeType) and c.co_name == nested for c in code.co_consts)


def _as_tuple(value, n):
    if value is None:
        return (1,) * n
    if isinstance(value, int):
        return (value,) * n
    return tuple(value)


def _skipped(module, name):
    """True when the Keras patches are off, or module's function `name` is
    wrapped already (by another copy of tfocl)."""
    return disabled(SWITCH) or hasattr(getattr(module, name, None), MARK)


def patch_conv(module):
    if _skipped(module, "conv"):
        return
    original = getattr(module, "conv", None)
    tf = getattr(module, "tf", None)
    backend = getattr(module, "backend", None)
    to_tf_format = getattr(module, "_convert_data_format", None)
    if (_params(original) != CONV_PARAMS or not callable(getattr(getattr(tf, "nn", None), "convolution", None))
            or not callable(getattr(backend, "standardize_data_format", None))
            or not callable(to_tf_format)):
        say(f"Keras {keras_version()}'s TensorFlow conv() is not the one tfocl knows: grouped "
            "convolutions (groups > 1) are not patched and run through XLA, which has no OPENCL "
            "backend; place them on the CPU (tf.device) or use groups=1")
        return
    if not _compiles_with_xla(original.__code__):
        return  # this Keras has no XLA path in conv: nothing to undo

    def grouped_without_xla(inputs, kernel, strides, data_format, dilation_rate):
        """(True, data_format) for the case Keras sends to XLA only because
        the convolution is grouped."""
        data_format = backend.standardize_data_format(data_format)
        ndim = len(inputs.shape)
        channels = inputs.shape[-1] if data_format == "channels_last" else inputs.shape[1]
        if channels == kernel.shape[-2]:
            return False, data_format
        if data_format == "channels_first" and ndim == 5:
            return False, data_format
        n = ndim - 2
        if any(s > 1 for s in _as_tuple(strides, n)) and any(d > 1 for d in _as_tuple(dilation_rate, n)):
            return False, data_format
        return True, data_format

    def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
        try:
            grouped, tf_format = grouped_without_xla(inputs, kernel, strides, data_format, dilation_rate)
        except Exception:  # noqa: BLE001 -- anything unusual: Keras' own path decides
            grouped = False
        if not grouped or not opencl_only():
            return original(inputs, kernel, strides, padding, data_format, dilation_rate)
        # Keras' `_conv`, without the tf.function(jit_compile=True) around it.
        result = tf.nn.convolution(inputs, kernel, strides, padding.upper(),
                                   data_format=to_tf_format(tf_format, len(inputs.shape)),
                                   dilations=dilation_rate)
        shape = result.shape
        dims = list(inputs.shape)
        if (shape.is_fully_defined() and math.prod(shape.as_list()) == 0
                and None not in dims and math.prod(dims) != 0):
            raise ValueError(
                "The convolution operation resulted in an empty output. Output shape:"
                f" {shape}. This can happen if the input is too small for the given kernel "
                "size, strides, dilation rate, and padding mode. Please check the input shape "
                "and convolution parameters.")
        return result

    module.conv = _wrap(original, conv)


def patch_mean(module):
    if _skipped(module, "mean"):
        return
    original = getattr(module, "mean", None)
    tf = getattr(module, "tf", None)
    to_tensor = getattr(module, "convert_to_tensor", None)
    if (_params(original) != MEAN_PARAMS or not callable(getattr(tf, "reduce_mean", None))
            or not callable(to_tensor)):
        say(f"Keras {keras_version()}'s TensorFlow mean() is not the one tfocl knows: float16 "
            "means are not patched and may run through XLA, which has no OPENCL backend; "
            "compute them in float32")
        return
    if not _compiles_with_xla(original.__code__, "xla_reduce_mean"):
        return  # this Keras has no XLA path in mean: nothing to undo

    def mean(x, axis=None, keepdims=False):
        if isinstance(x, tf.IndexedSlices):
            return original(x, axis, keepdims)
        x = to_tensor(x)
        if x.dtype != tf.float16 or not opencl_only():
            return original(x, axis, keepdims)
        return tf.cast(tf.reduce_mean(tf.cast(x, tf.float32), axis=axis, keepdims=keepdims),
                       tf.float16)

    module.mean = _wrap(original, mean)


def patch_rnn(module):
    if _skipped(module, "lstm") or _skipped(module, "gru"):
        return
    lstm_original = getattr(module, "lstm", None)
    gru_original = getattr(module, "gru", None)
    tf = getattr(module, "tf", None)
    if (_params(lstm_original) != LSTM_PARAMS or _params(gru_original) != GRU_PARAMS
            or any(not callable(getattr(module, name, None)) for name in RNN_HELPERS)
            or not hasattr(getattr(tf, "errors", None), "NotFoundError")):
        say(f"Keras {keras_version()}'s TensorFlow lstm() and gru() are not the ones tfocl knows: "
            "LSTM and GRU layers run Keras' generic loop on OPENCL, which is slower than its "
            "CudnnRNNV3 kernel")
        return

    def requested_device_type():
        """The device type of the tf.device scope the layer runs in (a
        function's own, else the eager one it is traced in), None for none:
        a model pinned to the CPU keeps Keras' loop there, as the op has no
        CPU kernel and would leave for OPENCL."""
        from tensorflow.python.eager import context

        name = "" if tf.executing_eagerly() else tf.no_op().device
        name = name or context.context().device_name or ""
        return tf.DeviceSpec.from_string(name).device_type if name else None

    def takes_cudnn_op(inputs, arguments_supported):
        if module._is_gpu_available() or not arguments_supported:
            return False
        if getattr(inputs, "dtype", None) != tf.float32:
            return False
        if tf.sysconfig.get_build_info().get("is_rocm_build"):
            return False
        if requested_device_type() not in (None, "OPENCL"):
            return False
        return bool(tf.config.list_logical_devices("OPENCL"))

    def tensors(*values):
        """Keras Variables as tensors, as Keras' lstm() and gru() unwrap them."""
        return tuple(getattr(v, "value", v) for v in values)

    def masked(cudnn, initial_states, inputs, mask, go_backwards, return_sequences):
        """A masked layer as Keras' loop computes it, through the cuDNN op:
        the loop skips a masked step (its state carries over), so it runs
        each row's unmasked steps in order. They go first (a stable sort
        of the time axis), the op runs them as sequences of their counts
        (at least 1: a row with none gets its initial state and zeros
        back), and every step's output is gathered from the last unmasked
        step up to it: zeros before the first, and at masked steps where
        the layer has zero_output_for_mask. Backwards is forwards over the
        reversed time axis, outputs in the order the loop visits the steps
        (as Keras' loop and _cudnn_* return them). None where the layer did
        not say how it treats masked outputs (Keras' layers outside
        tfocl's patch) or the mask is not [batch, time] (or [1, time],
        as Keras' loop broadcasts it): Keras' loop then."""
        zero_output_for_mask = getattr(_inner_loop, "zero_output_for_mask", None)
        if zero_output_for_mask is None:
            return None
        mask = tf.convert_to_tensor(mask)
        if mask.shape.rank != 2:
            return None
        mask = tf.broadcast_to(tf.cast(mask, tf.bool), tf.shape(inputs)[:2])
        if go_backwards:
            inputs, mask = tf.reverse(inputs, [1]), tf.reverse(mask, [1])
        steps = tf.shape(mask)[1]
        time = tf.range(steps)[None, :]
        counted = tf.cast(mask, tf.int32)
        count = tf.reduce_sum(counted, axis=1)
        order = tf.argsort(tf.where(mask, time, time + steps), axis=1, stable=True)
        packed = tf.gather(inputs, order, axis=1, batch_dims=1)
        # Keras' _cudnn_* take the lengths as a mask (and assert on it, a
        # few small ops): they are what lays the weights out as cuDNN's.
        lengths = tf.sequence_mask(tf.maximum(count, 1), steps)
        _, outputs, states = cudnn(packed, lengths, False)
        ran = count > 0
        states = [tf.where(ran[:, None], h, h0) for h, h0 in zip(states, initial_states)]
        shown_last = mask[:, -1:] if zero_output_for_mask else ran[:, None]
        last_output = tf.where(shown_last, states[0], tf.zeros_like(states[0]))
        if not return_sequences:
            return last_output, last_output[:, None, :], states
        # The output of step t is the packed one of the last unmasked step
        # up to t.
        latest = tf.cumsum(counted, axis=1) - 1
        outputs = tf.gather(outputs, tf.maximum(latest, 0), axis=1, batch_dims=1)
        shown = mask if zero_output_for_mask else latest >= 0
        outputs = tf.where(shown[:, :, None], outputs, tf.zeros_like(outputs))
        return last_output, outputs, states

    def through_cudnn(cudnn, initial_states, inputs, mask, go_backwards, return_sequences,
                      time_major):
        """cudnn(inputs, mask, go_backwards)'s result for the layer, None
        where Keras' loop must run."""
        try:
            if mask is None:
                return cudnn(inputs, None, go_backwards)
            if time_major:
                return None
            return masked(cudnn, initial_states, inputs, mask, go_backwards, return_sequences)
        except (tf.errors.InvalidArgumentError, tf.errors.NotFoundError):
            raise NotImplementedError from None  # as Keras' lstm(): the layer takes its loop

    def lstm(inputs, initial_state_h, initial_state_c, mask, kernel, recurrent_kernel, bias,
             activation, recurrent_activation, return_sequences=False, go_backwards=False,
             unroll=False, time_major=False):
        supported = module._do_lstm_arguments_support_cudnn(
            activation=activation, recurrent_activation=recurrent_activation, unroll=unroll,
            use_bias=bias is not None)
        original_args = (inputs, initial_state_h, initial_state_c, mask, kernel,
                         recurrent_kernel, bias, activation, recurrent_activation,
                         return_sequences, go_backwards, unroll, time_major)
        if not takes_cudnn_op(inputs, supported):
            return lstm_original(*original_args)
        kernel, recurrent_kernel, bias = tensors(kernel, recurrent_kernel, bias)

        def cudnn(x, m, backwards):
            return module._cudnn_lstm(x, initial_state_h, initial_state_c, kernel,
                                      recurrent_kernel, bias, m, time_major, backwards,
                                      return_sequences)
        result = through_cudnn(cudnn, (initial_state_h, initial_state_c), inputs, mask,
                               go_backwards, return_sequences, time_major)
        return lstm_original(*original_args) if result is None else result

    def cudnn_gate_order(kernel, recurrent_kernel, bias):
        """Keras' z, r, n columns as r, z, n, where _cudnn_gru leaves them."""
        if tf.sysconfig.get_build_info().get("is_cuda_build"):
            return kernel, recurrent_kernel, bias
        units = recurrent_kernel.shape[0]

        def swap(w):
            return tf.concat([w[..., units:2 * units], w[..., :units], w[..., 2 * units:]], -1)
        return swap(kernel), swap(recurrent_kernel), swap(bias)

    def gru(inputs, initial_state, mask, kernel, recurrent_kernel, bias, activation,
            recurrent_activation, return_sequences=False, go_backwards=False, unroll=False,
            time_major=False, reset_after=True):
        supported = module._do_gru_arguments_support_cudnn(
            activation=activation, recurrent_activation=recurrent_activation, unroll=unroll,
            use_bias=bias is not None, reset_after=reset_after)
        original_args = (inputs, initial_state, mask, kernel, recurrent_kernel, bias, activation,
                         recurrent_activation, return_sequences, go_backwards, unroll,
                         time_major, reset_after)
        if not takes_cudnn_op(inputs, supported):
            return gru_original(*original_args)
        kernel, recurrent_kernel, bias = cudnn_gate_order(*tensors(kernel, recurrent_kernel, bias))

        def cudnn(x, m, backwards):
            return module._cudnn_gru(x, initial_state, kernel, recurrent_kernel, bias, m,
                                     time_major, backwards, return_sequences)
        result = through_cudnn(cudnn, (initial_state,), inputs, mask, go_backwards,
                               return_sequences, time_major)
        return gru_original(*original_args) if result is None else result

    module.lstm = _wrap(lstm_original, lstm)
    module.gru = _wrap(gru_original, gru)


# zero_output_for_mask of the LSTM or GRU layer whose inner_loop runs in
# this thread (None outside one): the backend's lstm() and gru() need it
# for a masked layer, and Keras does not pass it to them.
_inner_loop = threading.local()


def patch_rnn_layer(module):
    """LSTM.inner_loop and GRU.inner_loop (keras/src/layers/rnn): tell the
    backend's lstm() and gru() the layer's zero_output_for_mask (item 4)."""
    cls = getattr(module, RNN_LAYER_MODULES.get(module.__name__, ""), None)
    original = vars(cls).get("inner_loop") if isinstance(cls, type) else None
    if disabled(SWITCH) or original is None or hasattr(original, MARK):
        return
    if _params(original) != INNER_LOOP_PARAMS:
        say(f"Keras {keras_version()}'s {cls.__name__}.inner_loop is not the one tfocl knows: "
            f"masked {cls.__name__} layers run Keras' generic loop on OPENCL")
        return

    def inner_loop(self, sequences, initial_state, mask, training=False):
        outer = getattr(_inner_loop, "zero_output_for_mask", None)
        _inner_loop.zero_output_for_mask = bool(getattr(self, "zero_output_for_mask", False))
        try:
            return original(self, sequences, initial_state, mask, training)
        finally:
            _inner_loop.zero_output_for_mask = outer

    cls.inner_loop = _wrap(original, inner_loop)


KERAS_ADAM_OP = "_TfoclKerasAdam"
# The step's scalars per optimizer, graph, device, dtype and learning rate:
# one dict per `_backend_update_step` call running in this thread (the
# steps of an optimizer applied twice in one graph must not share them).
_adam_steps = threading.local()


def _keras_adam_defined():
    """Whether the plugin defined _TfoclKerasAdam (it does where TensorFlow
    lets a plugin define ops and update variables in place)."""
    from tensorflow.python.framework import op_def_registry

    return op_def_registry.get(KERAS_ADAM_OP) is not None


def _opencl_float32_update(optimizer, gradient, variable, slots):
    """(tf, weight, *slot variables) as float32 tf.Variables with the weight
    on OPENCL, where this update runs in a graph with a dense gradient under
    Keras' TensorFlow backend, else None. slots(optimizer, index): the
    update's slot variables for the weight's index."""
    tf = sys.modules.get("tensorflow")
    backend = sys.modules.get("keras.src.backend")
    if tf is None or backend is None or backend.backend() != "tensorflow":
        return None
    if tf.executing_eagerly() or isinstance(gradient, tf.IndexedSlices):
        return None

    def unwrapped(v):
        return v.value if isinstance(v, backend.Variable) else v

    index = optimizer._get_variable_index(variable)
    tensors = [unwrapped(variable)] + [unwrapped(x) for x in slots(optimizer, index)]
    for x in tensors:
        if not isinstance(x, tf.Variable) or x.dtype != tf.float32:
            return None
    weight = tensors[0]
    if not weight.device or tf.DeviceSpec.from_string(weight.device).device_type != "OPENCL":
        return None
    return (tf, *tensors)


def _adam_operands(optimizer, gradient, variable):
    """(tf, weight, m, v) as tf.Variables where _TfoclKerasAdam on OPENCL
    computes this update, else None (Keras' own ops then)."""
    if optimizer.amsgrad:
        return None
    operands = _opencl_float32_update(
        optimizer, gradient, variable,
        lambda o, index: (o._momentums[index], o._velocities[index]))
    return operands if operands is not None and _keras_adam_defined() else None


def _adam_scalars(optimizer, tf, weight, learning_rate):
    """alpha, 1 - beta_1, 1 - beta_2 and epsilon as Keras' update_step
    computes them (alpha = lr * sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t),
    t = iterations + 1), made once per step where the step's dict is
    there."""
    steps = getattr(_adam_steps, "stack", None)
    cache = steps[-1] if steps else {}
    key = (id(optimizer), tf.compat.v1.get_default_graph(), weight.device, id(learning_rate))
    if key not in cache:
        dtype = weight.dtype
        lr = tf.cast(learning_rate, dtype)
        t = tf.cast(optimizer.iterations + 1, dtype)
        beta_1_power = tf.pow(tf.cast(optimizer.beta_1, dtype), t)
        beta_2_power = tf.pow(tf.cast(optimizer.beta_2, dtype), t)
        cache[key] = (lr * tf.sqrt(1 - beta_2_power) / (1 - beta_1_power),
                      tf.cast(1 - optimizer.beta_1, dtype), tf.cast(1 - optimizer.beta_2, dtype),
                      tf.cast(optimizer.epsilon, dtype))
    return cache[key]


def _known_update_step(module, name, names):
    """(the optimizer class `name` of `module`, its update_step) where that
    update_step is unpatched, takes UPDATE_STEP_PARAMS and reads `names`
    (the formula tfocl's op computes), else None: Keras' own update then,
    right but slower."""
    cls = getattr(module, name, None)
    update = vars(cls).get("update_step") if isinstance(cls, type) else None
    if disabled(SWITCH) or update is None or hasattr(update, MARK):
        return None
    code = getattr(update, "__code__", None)
    if _params(update) != UPDATE_STEP_PARAMS or code is None or not names <= set(code.co_names):
        return None
    return cls, update


def patch_adam(module):
    known = _known_update_step(module, "Adam", ADAM_NAMES)
    apply_all = getattr(known[0], "_backend_update_step", None) if known else None
    if not callable(apply_all):
        return
    cls, update = known

    def update_step(self, gradient, variable, learning_rate):
        operands = _adam_operands(self, gradient, variable)
        if operands is None:
            return update(self, gradient, variable, learning_rate)
        tf, weight, m, v = operands
        from tensorflow.python.framework import op_def_library

        alpha, one_minus_beta_1, one_minus_beta_2, epsilon = _adam_scalars(
            self, tf, weight, learning_rate)
        op_def_library._apply_op_helper(
            KERAS_ADAM_OP, var=weight.handle, m=m.handle, v=v.handle, alpha=alpha,
            one_minus_beta_1=one_minus_beta_1, one_minus_beta_2=one_minus_beta_2,
            epsilon=epsilon, grad=tf.cast(gradient, weight.dtype), use_locking=False)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        steps = _adam_steps.__dict__.setdefault("stack", [])
        steps.append({})
        try:
            return apply_all(self, grads, trainable_variables, learning_rate)
        finally:
            steps.pop()

    cls.update_step = _wrap(update, update_step)
    cls._backend_update_step = _wrap(apply_all, _backend_update_step)


KERAS_MOMENTUM_OP = "ResourceApplyKerasMomentum"
# What Keras' SGD.update_step reads: the formula ResourceApplyKerasMomentum
# computes where momentum is not 0.
SGD_NAMES = frozenset(("momentums", "momentum", "nesterov", "_get_variable_index"))


@functools.lru_cache(maxsize=None)
def _opencl_has_kernel(op):
    """Whether TensorFlow's registry holds an OPENCL kernel for `op` (the
    plugin registers ResourceApplyKerasMomentum where TensorFlow lets it
    update variables in place)."""
    from tensorflow.python.framework import kernels

    return any(k.device_type == "OPENCL" for k in kernels.get_registered_kernels_for_op(op).kernel)


def _sgd_operands(optimizer, gradient, variable):
    """(tf, weight, momentum variable) as tf.Variables where
    ResourceApplyKerasMomentum on OPENCL computes this update, else None
    (Keras' own ops then)."""
    if optimizer.momentum == 0:
        return None
    operands = _opencl_float32_update(optimizer, gradient, variable,
                                      lambda o, index: (o.momentums[index],))
    return operands if operands is not None and _opencl_has_kernel(KERAS_MOMENTUM_OP) else None


def patch_sgd(module):
    known = _known_update_step(module, "SGD", SGD_NAMES)
    if known is None:
        return
    cls, update = known

    def update_step(self, gradient, variable, learning_rate):
        operands = _sgd_operands(self, gradient, variable)
        if operands is None:
            return update(self, gradient, variable, learning_rate)
        tf, weight, m = operands
        dtype = weight.dtype
        tf.raw_ops.ResourceApplyKerasMomentum(
            var=weight.handle, accum=m.handle, lr=tf.cast(learning_rate, dtype),
            grad=tf.cast(gradient, dtype), momentum=tf.cast(self.momentum, dtype),
            use_locking=False, use_nesterov=bool(self.nesterov))

    cls.update_step = _wrap(update, update_step)


def check_keras(module):
    """After `import keras`: says which patch found no module to act on (a
    Keras that moved them)."""
    if disabled(SWITCH):
        return
    if TRAINER not in sys.modules:
        say(f"Keras {keras_version()} has no {TRAINER}: jit_compile=\"auto\" is not patched and "
            "turns XLA on, which has no OPENCL backend; pass jit_compile=False to compile()")
    try:
        backend = sys.modules["keras.src.backend"].backend()
    except Exception:  # noqa: BLE001 -- no way to tell: say nothing
        return
    if backend == "tensorflow" and not any(name in sys.modules for name in CONV_MODULES):
        say(f"Keras {keras_version()} has neither {' nor '.join(CONV_MODULES)}: grouped "
            "convolutions (groups > 1) are not patched and run through XLA, which has no OPENCL "
            "backend; place them on the CPU (tf.device) or use groups=1")
    if backend == "tensorflow" and not any(name in sys.modules for name in NUMPY_MODULES):
        say(f"Keras {keras_version()} has neither {' nor '.join(NUMPY_MODULES)}: float16 "
            "means are not patched and may run through XLA, which has no OPENCL backend; "
            "compute them in float32")
