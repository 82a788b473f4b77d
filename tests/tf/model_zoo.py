"""Small Keras models of the common families, and one train step of each
run in strict placement on a device.

run_model.py imports this in a fresh process per (model, device): it
builds the model from a fixed seed, makes the batches on the host, copies
them to the device, and runs the model's own Keras train_step inside one
tf.function under `tf.device(device)` with soft placement OFF, so any op
of the step without a kernel for the device fails placement instead of
running elsewhere. No tf.data is involved (its kernels are host-only by
design). Each builder returns (model, optimizer, loss, batches).
"""
import numpy as np

# Ops TensorFlow adds around a function's partitions or keeps on the host
# by design even in strict placement: arguments, results, transfers,
# control anchors, and host-memory int32 shape arithmetic.
HOST_OK = {"_Arg", "_Retval", "_Send", "_Recv", "_HostSend", "_HostRecv", "NoOp",
           "Const", "Identity", "_DeviceArg", "_DeviceRetval"}

BATCH = 8


def _data(rng, *shape, classes=None, dtype=np.float32):
    if classes is not None:
        return rng.integers(0, classes, size=shape).astype(np.int64)
    return rng.normal(0.0, 1.0, size=shape).astype(dtype)


def transformer(keras, rng, steps):
    """Embedding, MultiHeadAttention, LayerNormalization, Dense with exact
    gelu (Erfc), pooling: a Transformer encoder block."""
    layers = keras.layers
    inp = keras.Input(shape=(12,), dtype="int64")
    x = layers.Embedding(200, 32)(inp)
    a = layers.MultiHeadAttention(num_heads=4, key_dim=8)(x, x)
    x = layers.LayerNormalization()(x + a)
    f = layers.Dense(64, activation=lambda t: keras.activations.gelu(t, approximate=False))(x)
    f = layers.Dense(32)(f)
    x = layers.LayerNormalization()(x + f)
    x = layers.GlobalAveragePooling1D()(x)
    out = layers.Dense(5, activation="softmax")(x)
    model = keras.Model(inp, out)
    batches = [(_data(rng, BATCH, 12, classes=200), _data(rng, BATCH, classes=5))
               for _ in range(steps)]
    return model, keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", batches


def _recurrent(keras, rng, steps, cell):
    layers = keras.layers
    model = keras.Sequential([
        keras.Input(shape=(10, 6)),
        cell(16, return_sequences=True),
        cell(8),
        layers.Dense(4, activation="softmax"),
    ])
    batches = [(_data(rng, BATCH, 10, 6), _data(rng, BATCH, classes=4)) for _ in range(steps)]
    return model, keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", batches


def lstm(keras, rng, steps):
    """Keras' generic LSTM: a while loop over TensorLists, Orthogonal
    recurrent initializer (Qr)."""
    return _recurrent(keras, rng, steps, keras.layers.LSTM)


def gru(keras, rng, steps):
    return _recurrent(keras, rng, steps, keras.layers.GRU)


def conv_autoencoder(keras, rng, steps):
    """SeparableConv2D, Conv2DTranspose, UpSampling2D (nearest and
    bilinear), Conv1D."""
    layers = keras.layers
    inp = keras.Input(shape=(16, 16, 3))
    x = layers.SeparableConv2D(8, 3, padding="same", activation="relu")(inp)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    x = layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.UpSampling2D(2)(x)
    x = layers.UpSampling2D(2, interpolation="bilinear")(x)
    x = layers.Conv2D(3, 3, strides=4, padding="same")(x)
    r = layers.Reshape((16 * 16, 3))(x)
    r = layers.Conv1D(3, 5, padding="same")(r)
    out = layers.Reshape((16, 16, 3))(r)
    model = keras.Model(inp, out)
    batches = []
    for _ in range(steps):
        x = _data(rng, BATCH, 16, 16, 3)
        batches.append((x, x))
    return model, keras.optimizers.Adam(1e-3), "mse", batches


def image(keras, rng, steps):
    """Resizing (bilinear, nearest), dilated Conv2D, GroupNormalization,
    AdamW."""
    layers = keras.layers
    inp = keras.Input(shape=(20, 20, 3))
    x = layers.Resizing(16, 16, interpolation="bilinear")(inp)
    y = layers.Resizing(16, 16, interpolation="nearest")(inp)
    x = layers.Concatenate()([x, y])
    x = layers.Conv2D(16, 3, dilation_rate=2, padding="same", activation="relu")(x)
    x = layers.GroupNormalization(groups=4)(x)
    x = layers.Conv2D(16, 3, strides=2, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    out = layers.Dense(6, activation="softmax")(x)
    model = keras.Model(inp, out)
    batches = [(_data(rng, BATCH, 20, 20, 3), _data(rng, BATCH, classes=6)) for _ in range(steps)]
    return model, keras.optimizers.AdamW(1e-3), "sparse_categorical_crossentropy", batches


def conv3d(keras, rng, steps):
    layers = keras.layers
    model = keras.Sequential([
        keras.Input(shape=(8, 8, 8, 2)),
        layers.Conv3D(8, 3, padding="same", activation="relu"),
        layers.MaxPooling3D(2),
        layers.Conv3D(8, 3, activation="relu"),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])
    batches = [(_data(rng, BATCH, 8, 8, 8, 2), _data(rng, BATCH, classes=3)) for _ in range(steps)]
    return model, keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", batches


def text(keras, rng, steps):
    """A 50,000-word Embedding (its gradient is an UnsortedSegmentSum) and
    keras.layers.Attention."""
    layers = keras.layers
    q_in = keras.Input(shape=(9,), dtype="int64")
    v_in = keras.Input(shape=(11,), dtype="int64")
    emb = layers.Embedding(50000, 16)
    att = layers.Attention()([emb(q_in), emb(v_in)])
    x = layers.GlobalAveragePooling1D()(att)
    out = layers.Dense(2, activation="softmax")(x)
    model = keras.Model([q_in, v_in], out)
    batches = [((_data(rng, BATCH, 9, classes=50000), _data(rng, BATCH, 11, classes=50000)),
                _data(rng, BATCH, classes=2)) for _ in range(steps)]
    return model, keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", batches


def mobilenet(keras, rng, steps, size=None, batch=None):
    """keras.applications.MobileNetV2 (alpha 0.35): depthwise
    convolutions, batch normalisation, ReLU6. TFOCL_MOBILENET_SIZE and
    TFOCL_MOBILENET_BATCH make it larger than CI's default."""
    import os
    size = size or int(os.environ.get("TFOCL_MOBILENET_SIZE", "32"))
    batch = batch or int(os.environ.get("TFOCL_MOBILENET_BATCH", str(BATCH)))
    model = keras.applications.MobileNetV2(input_shape=(size, size, 3), alpha=0.35, weights=None,
                                           classes=10)
    batches = [(_data(rng, batch, size, size, 3), _data(rng, batch, classes=10))
               for _ in range(steps)]
    return model, keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy", batches


MODELS = {
    "transformer": transformer,
    "lstm": lstm,
    "gru": gru,
    "conv_autoencoder": conv_autoencoder,
    "image": image,
    "conv3d": conv3d,
    "text": text,
    "mobilenet": mobilenet,
}
