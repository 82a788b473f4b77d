"""The import hook: patches a module of TensorFlow or Keras right after it has
executed, before the importer sees it.

One finder on `sys.meta_path` answers only for the modules named in TARGETS:
it asks the other finders for the real spec and hands it back with a loader
that runs the real loader's `exec_module`, then the patch. Every other import
costs one dictionary lookup. The patch modules (`tfocl._keras`,
`tfocl._tfconfig`, `tfocl._distribute`) are imported only when their target is.

Idempotent: one finder per process whatever the number of tfocl copies on
sys.path (it carries a marker attribute the next copy looks for), and every
wrapper carries MARK (the original it wraps), so a patch never wraps a
wrapper, a reload of a target is patched again, and a module imported before
tfocl is patched at install().
"""
import os
import sys

# Target module -> (patch module, function). Keras 3.16 moved the TensorFlow
# backend's nn and numpy into an `ops` package. "keras" comes last: its check runs after
# the package (and every target inside it) has executed.
TARGETS = {
    "tensorflow.python.eager.context": ("tfocl._tfconfig", "patch_context"),
    "tensorflow.python.distribute.mirrored_strategy": ("tfocl._distribute", "patch_mirrored"),
    "tensorflow.python.distribute.collective_all_reduce_strategy": (
        "tfocl._distribute", "patch_collective"),
    "tensorflow.python.distribute.parameter_server_strategy_v2": (
        "tfocl._distribute", "patch_parameter_server"),
    "keras.src.trainers.trainer": ("tfocl._keras", "patch_trainer"),
    "keras.src.backend.tensorflow.nn": ("tfocl._keras", "patch_conv"),
    "keras.src.backend.tensorflow.ops.nn": ("tfocl._keras", "patch_conv"),
    "keras.src.backend.tensorflow.numpy": ("tfocl._keras", "patch_mean"),
    "keras.src.backend.tensorflow.ops.numpy": ("tfocl._keras", "patch_mean"),
    "keras.src.backend.tensorflow.rnn": ("tfocl._keras", "patch_rnn"),
    "keras.src.layers.rnn.lstm": ("tfocl._keras", "patch_rnn_layer"),
    "keras.src.layers.rnn.gru": ("tfocl._keras", "patch_rnn_layer"),
    "keras.src.optimizers.adam": ("tfocl._keras", "patch_adam"),
    "keras.src.optimizers.sgd": ("tfocl._keras", "patch_sgd"),
    "keras": ("tfocl._keras", "check_keras"),
}

# The attribute every tfocl wrapper carries: the function it wraps.
MARK = "__tfocl_wrapped__"

_said = set()


def say(line):
    """One line on stderr, `tfocl: ` first, at most once per process."""
    if line not in _said:
        _said.add(line)
        sys.stderr.write(f"tfocl: {line}\n")


def disabled(variable):
    """True when `variable` (TFOCL_KERAS_COMPAT, TFOCL_TF_COMPAT,
    TFOCL_DISTRIBUTE_COMPAT) turns the
    patches off: 0, false, no or off."""
    return os.environ.get(variable, "").strip().lower() in ("0", "false", "no", "off")


def apply(name, module):
    """Runs the patch for target `name` on `module`; never raises into the
    import that triggered it."""
    target = TARGETS.get(name)
    if target is None:
        return
    try:
        import importlib

        patch = getattr(importlib.import_module(target[0]), target[1])
        patch(module)
    except Exception as e:  # noqa: BLE001 -- the user's import must go on
        say(f"{name} not patched ({type(e).__name__}: {e}); tfocl's TensorFlow/Keras "
            "compatibility is incomplete (see the README's \"The Python side\")")


class _Loader:
    """The real loader, with the patch run after exec_module. Stands in only
    while the module executes: the module's __loader__ and __spec__.loader
    are the real loader again afterwards."""

    def __init__(self, loader, name):
        self._loader = loader
        self._name = name

    def __getattr__(self, attr):
        return getattr(self._loader, attr)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._loader
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._loader
        apply(self._name, module)


class _Finder:
    _tfocl_finder = True

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in TARGETS:
            return None
        for finder in list(sys.meta_path):
            if getattr(finder, "_tfocl_finder", False):
                continue
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is None:
                continue
            if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            spec.loader = _Loader(spec.loader, fullname)
            return spec
        return None

    def invalidate_caches(self):
        pass


def install():
    """Puts the finder first on sys.meta_path (once per process) and patches
    the targets already imported."""
    if not any(getattr(f, "_tfocl_finder", False) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    for name in TARGETS:
        module = sys.modules.get(name)
        if module is not None:
            apply(name, module)
