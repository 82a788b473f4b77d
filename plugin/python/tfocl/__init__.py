"""tfocl's Python side: what makes unchanged Keras and tf.config programs work
on the OPENCL PluggableDevice (libtfocl.so, in site-packages/tensorflow-plugins).

Almost nothing here is for a user to call (the one exception is below). `tfocl.pth`, installed next to this
package, imports `tfocl._autoload` at interpreter start-up; that installs an
import hook (`sys.meta_path`) and imports neither TensorFlow nor Keras. When a
program imports them, the hook patches these right after the module
concerned has executed:

- Keras 3's `jit_compile="auto"` (`Trainer._resolve_auto_jit_compile`) turns
  XLA off when TensorFlow's non-CPU devices are all OPENCL: XLA has no OPENCL
  backend (`tfocl._keras`).
- Keras' TensorFlow `conv()` runs grouped convolutions (`groups > 1`) without
  XLA on such a machine, as it runs every other convolution (`tfocl._keras`).
- Keras' TensorFlow `mean()` reduces float16 (mixed_float16's pooling) in
  float32 on such a machine, not through XLA (`tfocl._keras`).
- Keras' TensorFlow `lstm()` and `gru()` run float32 LSTM and GRU layers
  without a mask as one CudnnRNNV3 op where OPENCL devices are present and
  no GPU, as they do on a GPU, not as their generic loop of small ops per
  step (`tfocl._keras`).
- `tf.config.set_logical_device_configuration` accepts OPENCL devices, with a
  memory limit (`tfocl._tfconfig`).
- `tf.distribute.MirroredStrategy()` and `MultiWorkerMirroredStrategy()`
  without devices put their replicas on the OPENCL devices where the machine
  has no GPU, and `ParameterServerStrategy`'s workers compute on their first
  OPENCL device where they have no GPU (`tfocl._distribute`).

Each patch checks that the TensorFlow/Keras internals are the ones it knows;
where they are not it patches nothing and says so in one `tfocl: ...` line on
stderr. `TFOCL_KERAS_COMPAT=0` leaves Keras alone, `TFOCL_TF_COMPAT=0`
leaves tf.config alone, `TFOCL_DISTRIBUTE_COMPAT=0` leaves tf.distribute alone
(read when the module is imported).

The one thing to call: `tfocl.MultiWorkerMirroredStrategy(devices=None,
cluster_resolver=None, communication_options=None)`, TensorFlow's
MultiWorkerMirroredStrategy (TF_CONFIG and all) with each worker's replicas
on its OPENCL devices, all or those named. It imports TensorFlow when first
looked up, not before.

Importing `tfocl` yourself does the same as the .pth file (for an install
whose .pth files are not processed, e.g. `pip install --target` on plain
PYTHONPATH): import it before Keras.
"""
from tfocl import _autoload  # noqa: F401  -- installs the import hook

__all__ = ["MultiWorkerMirroredStrategy"]


def __getattr__(name):
    if name == "MultiWorkerMirroredStrategy":
        from tfocl._distribute import strategy_class

        cls = strategy_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module 'tfocl' has no attribute {name!r}")
