"""tf.distribute's strategies on OPENCL devices.

Stock TensorFlow's strategies look only for GPUs (and TPUs) when no device
is named, and fall back to one CPU:

- `MirroredStrategy()` takes `mirrored_strategy.all_local_devices()`: the
  logical GPUs, else the CPU.
- `MultiWorkerMirroredStrategy()` takes
  `CollectiveAllReduceExtended._initialize_local_devices(cluster_resolver,
  worker_device)`: `context.num_gpus()` GPUs, else TPUs, else one CPU. It
  runs once in local mode (no TF_CONFIG; worker_device "") and once per
  process in multi-worker mode (worker_device "/job:worker/task:i", after
  the collective server has started), and it is the only place the
  strategy's local devices come from: there is no device argument in
  multi-worker mode.

`ParameterServerStrategy` (V2) runs each worker's replica under
`worker_devices`: "/device:GPU:i" for the GPUs it counted on the workers
(`_set_num_gpus`), else "/device:CPU:0". Where the workers have no GPU and
every worker has an OPENCL device, `worker_devices` is ("/device:OPENCL:0",):
one replica per worker on its first OPENCL device, as with one GPU. The
variables stay where the strategy puts them, on the parameter servers.

Where that answer is the CPU and the process has OPENCL devices (so no GPU
or TPU), both are wrapped to answer with every local OPENCL logical device
instead (device type "OPENCL"; the ring all-reduce then runs between them,
NCCL being for GPUs only). A GPU or TPU machine gets TensorFlow's answer.
Both functions are attributes looked up at call time by their
callers (`all_local_devices` as a global of mirrored_strategy, the other as
a method), so replacing them is enough. `TFOCL_DISTRIBUTE_COMPAT=0` (read
when the module is imported) patches nothing.

`tfocl.MultiWorkerMirroredStrategy(devices=None, cluster_resolver=None,
communication_options=None)` is TensorFlow's `MultiWorkerMirroredStrategy`
(a subclass: TF_CONFIG, the collective server, the ring all-reduce are
TensorFlow's) whose local devices are always OPENCL ones: all of them, or
the ones named in `devices` ("/OPENCL:1", "OPENCL:1" or 1), the same on
every worker. It needs no patch and ignores the switch. Built at first
access (`tfocl.__getattr__`), so `import tfocl` imports no TensorFlow.
"""
import functools
import sys

from tfocl._hook import MARK, disabled, say

SWITCH = "TFOCL_DISTRIBUTE_COMPAT"
DEVICE_TYPE = "OPENCL"
MIRRORED = "tensorflow.python.distribute.mirrored_strategy"
COLLECTIVE = "tensorflow.python.distribute.collective_all_reduce_strategy"


def _params(fn):
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    return code.co_varnames[:code.co_argcount]


def _wrap(original, wrapper):
    functools.update_wrapper(wrapper, original)
    setattr(wrapper, MARK, original)
    return wrapper


def _tf_version():
    """TensorFlow's version if it is (being) imported; never imports it."""
    versions = sys.modules.get("tensorflow.python.framework.versions")
    return getattr(versions, "__version__", None) or "(unknown version)"


def opencl_indices(worker_device=""):
    """The indices i of this process's /device:OPENCL:i logical devices, in
    order. worker_device "" means the local job (no cluster, or job
    localhost); "/job:J/task:T" means that task's devices only (a cluster's
    context lists the other tasks' devices too)."""
    from tensorflow.python.eager import context
    from tensorflow.python.framework import device as pydev

    want = pydev.DeviceSpec.from_string(worker_device) if worker_device else None
    found = []
    for dev in context.context().list_logical_devices(DEVICE_TYPE):
        spec = pydev.DeviceSpec.from_string(dev.name)
        if want is None:
            if spec.job not in (None, "localhost"):
                continue
        elif spec.job != want.job or (want.task is not None and spec.task != want.task):
            continue
        if spec.device_index is not None and spec.device_index not in found:
            found.append(spec.device_index)
    return sorted(found)


def patch_mirrored(module):
    if disabled(SWITCH):
        return
    original = getattr(module, "all_local_devices", None)
    if hasattr(original, MARK):
        return  # patched already (by another copy of tfocl)
    config = getattr(module, "config", None)
    if (_params(original) != ("num_gpus",) or original.__defaults__ != (None,)
            or "list_logical_devices" not in original.__code__.co_names
            or not callable(getattr(config, "list_logical_devices", None))):
        say(f"TensorFlow {_tf_version()}'s mirrored_strategy.all_local_devices is not the one "
            "tfocl knows: MirroredStrategy() without devices is not patched and takes the CPU; "
            "name the devices: MirroredStrategy(devices=[\"/OPENCL:0\", ...])")
        return

    def all_local_devices(num_gpus=None):
        devices = original(num_gpus)
        if num_gpus == 0 or any(d.device_type != "CPU" for d in devices):
            return devices
        opencl = config.list_logical_devices(DEVICE_TYPE)
        if num_gpus is not None:
            opencl = opencl[:num_gpus]
        return opencl or devices

    module.all_local_devices = _wrap(original, all_local_devices)


def _local_devices_known(cls):
    method = vars(cls).get("_initialize_local_devices") if isinstance(cls, type) else None
    if _params(method) != ("self", "cluster_resolver", "worker_device"):
        return None
    consts = method.__code__.co_consts
    if "CPU" not in consts or not {"num_gpus", "num_accelerators"} <= set(method.__code__.co_names):
        return None
    return method


def patch_collective(module):
    if disabled(SWITCH):
        return
    cls = getattr(module, "CollectiveAllReduceExtended", None)
    current = vars(cls).get("_initialize_local_devices") if isinstance(cls, type) else None
    if hasattr(current, MARK):
        return  # patched already (by another copy of tfocl)
    original = _local_devices_known(cls)
    if original is None:
        say(f"TensorFlow {_tf_version()}'s CollectiveAllReduceExtended._initialize_local_devices "
            "is not the one tfocl knows: MultiWorkerMirroredStrategy() is not patched and takes "
            "one CPU per worker; use tfocl.MultiWorkerMirroredStrategy()")
        return

    def _initialize_local_devices(self, cluster_resolver, worker_device):
        devices, device_type = original(self, cluster_resolver, worker_device)
        if device_type != "CPU":
            return devices, device_type
        indices = opencl_indices(worker_device)
        if not indices:
            return devices, device_type
        return tuple(f"{worker_device}/device:{DEVICE_TYPE}:{i}" for i in indices), DEVICE_TYPE

    cls._initialize_local_devices = _wrap(original, _initialize_local_devices)


def _worker_opencl_counts(config, pydev):
    """{worker task: number of OPENCL logical devices} over the cluster
    (what ParameterServerStrategy's _set_num_gpus counts for GPUs)."""
    counts = {}
    for dev in config.list_logical_devices(DEVICE_TYPE):
        spec = pydev.DeviceSpec.from_string(dev.name)
        if spec.job == "worker":
            counts[spec.task] = counts.get(spec.task, 0) + 1
    return counts


def patch_parameter_server(module):
    if disabled(SWITCH):
        return
    cls = getattr(module, "ParameterServerStrategyV2Extended", None)
    members = vars(cls) if isinstance(cls, type) else {}
    set_num_gpus = members.get("_set_num_gpus")
    devices_prop = members.get("worker_devices")
    if hasattr(set_num_gpus, MARK):
        return  # patched already (by another copy of tfocl)
    config = getattr(module, "config", None)
    pydev = getattr(module, "tf_device", None)
    getter = getattr(devices_prop, "fget", None)
    if (_params(set_num_gpus) != ("self",) or _params(getter) != ("self",)
            or "_num_gpus_per_worker" not in set_num_gpus.__code__.co_names
            or "_num_gpus_per_worker" not in getter.__code__.co_names
            or not callable(getattr(config, "list_logical_devices", None))
            or not callable(getattr(getattr(pydev, "DeviceSpec", None), "from_string", None))):
        say(f"TensorFlow {_tf_version()}'s ParameterServerStrategyV2Extended is not the one tfocl "
            "knows: ParameterServerStrategy's workers are not patched and compute on their CPU")
        return

    def _set_num_gpus(self):
        set_num_gpus(self)
        self._tfocl_opencl = False
        if self._num_gpus_per_worker:
            return
        counts = _worker_opencl_counts(config, pydev)
        # Every worker needs one: a replica's device is one name for all.
        self._tfocl_opencl = bool(counts) and all(counts.values())

    def worker_devices(self):
        if getattr(self, "_tfocl_opencl", False) and not self._num_gpus_per_worker:
            # One replica per worker, as with one GPU: its first OPENCL device.
            return (f"/device:{DEVICE_TYPE}:0",)
        return getter(self)

    cls._set_num_gpus = _wrap(set_num_gpus, _set_num_gpus)
    cls.worker_devices = property(_wrap(getter, worker_devices))


def _chosen_indices(devices):
    """`devices` of tfocl.MultiWorkerMirroredStrategy as OPENCL indices."""
    from tensorflow.python.framework import device as pydev

    if devices is None:
        return None
    if isinstance(devices, (str, int)):
        devices = [devices]
    chosen = []
    for dev in devices:
        if isinstance(dev, int) and not isinstance(dev, bool):
            index = dev
        else:
            name = getattr(dev, "name", dev)
            if not isinstance(name, str):
                raise ValueError(f"not an OPENCL device: {dev!r}")
            spec = pydev.DeviceSpec.from_string(name if name.startswith("/") else "/" + name)
            if spec.device_type != DEVICE_TYPE or spec.device_index is None or spec.job is not None:
                raise ValueError(f"not an OPENCL device of this worker: {dev!r} (give \"/OPENCL:i\" "
                                 "or i; every worker takes the same local devices)")
            index = spec.device_index
        if index < 0 or index in chosen:
            raise ValueError(f"OPENCL device {dev!r} is negative or named twice")
        chosen.append(index)
    if not chosen:
        raise ValueError("devices names no OPENCL device")
    return chosen


_strategy = None


def strategy_class():
    """tfocl.MultiWorkerMirroredStrategy, built once (imports TensorFlow)."""
    global _strategy
    if _strategy is not None:
        return _strategy
    from tensorflow.python.distribute import collective_all_reduce_strategy as cars
    from tensorflow.python.distribute import collective_util, distribute_lib

    base_extended = cars.CollectiveAllReduceExtended
    # TensorFlow's own method, whether tfocl patched it or not: its answer
    # is never used, only its signature is relied on.
    if _local_devices_known(base_extended) is None and not hasattr(
            vars(base_extended).get("_initialize_local_devices"), MARK):
        raise ImportError(
            f"TensorFlow {_tf_version()}'s CollectiveAllReduceExtended has no "
            "_initialize_local_devices(self, cluster_resolver, worker_device) as tfocl knows it: "
            "tfocl.MultiWorkerMirroredStrategy cannot choose the local devices")

    class _Extended(base_extended):
        def __init__(self, container_strategy, cluster_resolver, communication_options, indices):
            self._tfocl_indices = indices
            super().__init__(container_strategy, cluster_resolver=cluster_resolver,
                             communication_options=communication_options)

        def _initialize_local_devices(self, cluster_resolver, worker_device):
            present = opencl_indices(worker_device)
            chosen = present if self._tfocl_indices is None else self._tfocl_indices
            missing = [i for i in chosen if i not in present]
            if not chosen or missing:
                where = worker_device or "this process"
                raise ValueError(
                    f"tfocl.MultiWorkerMirroredStrategy: {where} has OPENCL devices {present}, "
                    f"not {missing or 'any'} (is libtfocl.so loaded and an OpenCL device present?)")
            return tuple(f"{worker_device}/device:{DEVICE_TYPE}:{i}" for i in chosen), DEVICE_TYPE

    class MultiWorkerMirroredStrategy(cars.CollectiveAllReduceStrategy):
        """TensorFlow's `tf.distribute.MultiWorkerMirroredStrategy` (same
        TF_CONFIG, cluster resolver and communication options) with each
        worker's replicas on its OPENCL devices: all of them, or `devices`
        ("/OPENCL:i" or i), the same list on every worker."""

        def __init__(self, devices=None, cluster_resolver=None, communication_options=None):
            if communication_options is None:
                communication_options = collective_util.Options()
            indices = _chosen_indices(devices)
            # CollectiveAllReduceStrategy.__init__ builds its own extended
            # object: skip it for Strategy's, as Habana's HPUStrategy does.
            distribute_lib.Strategy.__init__(
                self, _Extended(self, cluster_resolver, communication_options, indices))

    MultiWorkerMirroredStrategy.__module__ = "tfocl"
    MultiWorkerMirroredStrategy.__qualname__ = "MultiWorkerMirroredStrategy"
    _strategy = MultiWorkerMirroredStrategy
    return _strategy
