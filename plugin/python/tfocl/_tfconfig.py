"""`tf.config.set_logical_device_configuration` on OPENCL devices.

Stock TensorFlow's Python refuses it ("Virtual devices are not supported for
OPENCL", `Context.set_logical_device_configuration` in
tensorflow/python/eager/context.py) and builds virtual devices only for
GPUs (`Context._compute_device_options`). What tfocl does depends on what
TensorFlow's C++ can do, found once from its framework library:

- **Native** (TensorFlow 2.22 and newer): the PluggableDeviceFactory creates
  virtual devices from `pluggable_device_options.experimental.virtual_devices`
  (memory_limit_mb, priority; no device_ordinal). OPENCL configurations go
  into the context's `_virtual_device_map`, as a GPU's do, and
  `_compute_device_options("PluggableDevice")` emits them with TensorFlow's
  own GPU code. Several logical devices per OPENCL device and priorities
  work as on a GPU.
- **Through the plugin** (2.19 to 2.21): exactly one logical device per
  OPENCL physical device, with a memory limit. The limits go to libtfocl.so
  in the environment variable TFOCL_MEMORY_LIMIT_MB, set in os.environ at
  the time of the call (the plugin reads it when TensorFlow creates its
  devices, at context initialisation): `N` (MiB, every OPENCL device) or
  `N0,N1,...` (one entry per /physical_device:OPENCL:i, an empty entry for
  no limit). A value the user set before is the starting point; entries of
  configured devices replace its. Child processes inherit the variable.

Either way `tf.config.get_logical_device_configuration` returns what was
set, memory growth is refused on a configured device (as on a GPU) and a
change after context initialisation is TensorFlow's RuntimeError.
`TFOCL_TF_COMPAT=0` (read when TensorFlow is imported) patches nothing.
"""
import functools
import os

from tfocl._hook import MARK, disabled, say

SWITCH = "TFOCL_TF_COMPAT"
ENV = "TFOCL_MEMORY_LIMIT_MB"
DEVICE_TYPE = "OPENCL"
# An error message of TensorFlow's C++ virtual-device code for
# PluggableDevices (pluggable_device_factory.cc): present from 2.22 on.
NATIVE_NEEDLE = b"not yet supported for pluggable virtual devices"
NATIVE_SINCE = (2, 22)

_native = None
_UNSET = object()
_env_before = _UNSET


def tf_version():
    try:
        from tensorflow.python.framework import versions

        return versions.__version__
    except Exception:  # noqa: BLE001
        return "(unknown version)"


def _version_tuple(version):
    parts = []
    for piece in version.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def native_virtual_devices(context_module):
    """True when TensorFlow's C++ builds virtual PluggableDevices: its
    framework library holds that code's error message (a read of the
    mapped file, once per process); else, where the library is not found,
    from the version."""
    global _native
    if _native is None:
        import glob
        import mmap

        tf_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(context_module.__file__))))
        found = None
        for lib in sorted(glob.glob(os.path.join(tf_dir, "libtensorflow_framework.so*"))):
            try:
                with open(lib, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                    found = bool(found) or m.find(NATIVE_NEEDLE) >= 0
            except (OSError, ValueError):
                continue
        if found is None:
            found = _version_tuple(tf_version()) >= NATIVE_SINCE
        _native = found
    return _native


def _code(fn):
    return getattr(fn, "__code__", None)


def _params(fn):
    code = _code(fn)
    return code.co_varnames[:code.co_argcount] if code else None


def _knows(context_cls):
    """The internals the patch relies on, checked on the functions' code."""
    set_config = vars(context_cls).get("set_logical_device_configuration")
    compute = vars(context_cls).get("_compute_device_options")
    if _params(set_config) != ("self", "dev", "virtual_devices"):
        return False
    if _params(compute) != ("self", "device_type") or compute.__defaults__ != ("GPU",):
        return False
    if not {"_initialize_physical_devices", "_physical_devices", "_virtual_device_map",
            "_context_handle"} <= set(_code(set_config).co_names):
        return False
    if "Virtual devices are not supported for %s" not in _code(set_config).co_consts:
        return False
    names = set(_code(compute).co_names)
    return ({"_virtual_device_map", "_pluggable_devices", "list_physical_devices",
             "VirtualDevices"} <= names
            and "support_virtual_devices" in _code(compute).co_varnames)


def patch_context(module):
    if disabled(SWITCH):
        return
    context_cls = getattr(module, "Context", None)
    if isinstance(context_cls, type) and hasattr(
            vars(context_cls).get("set_logical_device_configuration"), MARK):
        return  # patched already (by another copy of tfocl)
    if not isinstance(context_cls, type) or not _knows(context_cls):
        say(f"TensorFlow {tf_version()}'s tf.config internals are not the ones tfocl knows: "
            "set_logical_device_configuration is not patched and refuses OPENCL devices; "
            f"set {ENV}=N (MiB) in the environment before TensorFlow starts instead")
        return
    set_config = vars(context_cls)["set_logical_device_configuration"]
    compute = vars(context_cls)["_compute_device_options"]

    def set_logical_device_configuration(self, dev, virtual_devices):
        if getattr(dev, "device_type", None) != DEVICE_TYPE:
            return set_config(self, dev, virtual_devices)
        self._initialize_physical_devices()
        if dev not in self._physical_devices:
            raise ValueError("Unrecognized device: %s" % repr(dev))
        virtual_devices = list(virtual_devices)
        native = native_virtual_devices(module)
        _check(virtual_devices, native)
        if self._virtual_device_map.get(dev) == virtual_devices:
            return
        if self._context_handle is not None:
            raise RuntimeError("Virtual devices cannot be modified after being initialized")
        self._virtual_device_map[dev] = virtual_devices
        if not native:
            _export_limits(self)

    def _compute_device_options(self, device_type="GPU"):
        opencl = {d: v for d, v in self._virtual_device_map.items() if d.device_type == DEVICE_TYPE}
        if not opencl:
            return compute(self, device_type)
        if device_type != "PluggableDevice":
            # A GPU's options see only GPU configurations, as without tfocl.
            return compute(_View(self, {d: v for d, v in self._virtual_device_map.items()
                                        if d.device_type != DEVICE_TYPE}), device_type)
        options = compute(self, device_type)
        if not native_virtual_devices(module):
            return options
        # TensorFlow's GPU code over the PluggableDevices, in the order of
        # the visible_device_list it just wrote: one VirtualDevices per
        # visible device (an empty one keeps a device whole).
        pluggable = list(self._pluggable_devices)
        as_gpu = compute(_View(self, opencl, gpus=pluggable), "GPU")
        options.experimental.virtual_devices.extend(as_gpu.experimental.virtual_devices)
        if as_gpu.experimental.virtual_devices:
            options.ClearField("allow_growth")
        return options

    context_cls.set_logical_device_configuration = _wrap(set_config, set_logical_device_configuration)
    context_cls._compute_device_options = _wrap(compute, _compute_device_options)


def _wrap(original, wrapper):
    functools.update_wrapper(wrapper, original)
    setattr(wrapper, MARK, original)
    return wrapper


class _View:
    """The context as `_compute_device_options` reads it, with another
    virtual-device map and, for the PluggableDevices computed as GPUs,
    another device list."""

    def __init__(self, context, virtual_device_map, gpus=None):
        self.__dict__["_context"] = context
        self.__dict__["_virtual_device_map"] = virtual_device_map
        self.__dict__["_gpus"] = gpus

    def __getattr__(self, name):
        return getattr(self.__dict__["_context"], name)

    def list_physical_devices(self, device_type=None):
        if self._gpus is not None and device_type == "GPU":
            return list(self._gpus)
        return self._context.list_physical_devices(device_type)


def _check(virtual_devices, native):
    version = tf_version()
    if not virtual_devices:
        raise ValueError("An OPENCL device needs at least one LogicalDeviceConfiguration "
                         "(tf.config.set_visible_devices hides a device)")
    for vdev in virtual_devices:
        if vdev.memory_limit is None:
            raise ValueError("Setting memory limit is required for OPENCL virtual devices")
        if vdev.experimental_device_ordinal is not None:
            raise ValueError("Setting experimental_device_ordinal on OPENCL virtual devices is "
                             "not supported (TensorFlow's PluggableDevices have no device ordinals)")
    if native:
        return
    if len(virtual_devices) != 1 or virtual_devices[0].experimental_priority is not None:
        raise ValueError(
            f"TensorFlow {version} gives each OPENCL device exactly one logical device: pass "
            "[tf.config.LogicalDeviceConfiguration(memory_limit=N)]; several logical devices "
            "per OPENCL device and experimental_priority need TensorFlow 2.22 or newer")
    limit = virtual_devices[0].memory_limit
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit < 1 or limit != int(limit):
        raise ValueError(f"memory_limit of an OPENCL device on TensorFlow {version} is a whole "
                         f"number of MiB (at least 1), not {limit!r}")


def _index(dev):
    return int(dev.name.rsplit(":", 1)[1])


def _export_limits(context):
    """TFOCL_MEMORY_LIMIT_MB for the plugin: one entry per OPENCL physical
    device (index i of /physical_device:OPENCL:i), or one value when there
    is one device."""
    global _env_before
    if _env_before is _UNSET:
        _env_before = os.environ.get(ENV)
    devices = [d for d in context._physical_devices if d.device_type == DEVICE_TYPE]
    n = max((_index(d) for d in devices), default=-1) + 1
    before = (_env_before or "").strip()
    if "," in before:
        entries = [e.strip() for e in before.split(",")][:n]
        entries += [""] * (n - len(entries))
    else:
        entries = [before] * n
    for dev, vdevs in context._virtual_device_map.items():
        if dev.device_type == DEVICE_TYPE:
            entries[_index(dev)] = str(int(vdevs[0].memory_limit))
    os.environ[ENV] = entries[0] if n == 1 else ",".join(entries)
