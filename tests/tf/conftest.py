"""The tfocl suites against real TensorFlow.

Which plugin TensorFlow loads, decided once, before `import tensorflow`:
  1. $TFOCL_TF_PLUGIN (a path to libtfocl.so), through
     TF_PLUGGABLE_DEVICE_LIBRARY_PATH;
  2. else the copy `pip install .` put into site-packages/tensorflow-plugins/
     (TensorFlow loads it by itself);
  3. else the build tree's plugin ($TFOCL_BUILDDIR or build/), through
     TF_PLUGGABLE_DEVICE_LIBRARY_PATH.
Never two at once: TensorFlow aborts on a second registration of the device
type, so a pip-installed copy plus the variable is refused here with a clear
message.

tfocl's Python side (plugin/python: the tfocl package and tfocl.pth, its
import hook for Keras and tf.config) is what `pip install .` puts next to
the plugin. With the build tree's plugin it is activated here as the .pth
would: plugin/python is processed as a site directory in this process, and
child processes get tests/tf/child_site/sitecustomize.py, which does the same, on
PYTHONPATH.
"""
import glob
import json
import os
import site
import subprocess
import sys
import sysconfig

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILDDIR = os.path.join(REPO, os.environ.get("TFOCL_BUILDDIR", "build"))
DEVICE = "/device:OPENCL:0"


def _installed_plugins():
    dirs = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    found = []
    for d in sorted(dirs):
        found += glob.glob(os.path.join(d, "tensorflow-plugins", "libtfocl*.so"))
    return found


def _choose_plugin():
    installed = _installed_plugins()
    explicit = os.environ.get("TFOCL_TF_PLUGIN") or os.environ.get(
        "TF_PLUGGABLE_DEVICE_LIBRARY_PATH")
    if explicit:
        if installed:
            pytest.exit(
                f"tfocl is pip-installed ({installed[0]}) and "
                f"{explicit} is asked for too: TensorFlow aborts on a second "
                "registration of OPENCL. pip uninstall tfocl, or unset "
                "TFOCL_TF_PLUGIN/TF_PLUGGABLE_DEVICE_LIBRARY_PATH.", returncode=4)
        return os.path.abspath(explicit), "env"
    if installed:
        return installed[0], "installed"
    built = os.path.join(BUILDDIR, "plugin", "libtfocl.so")
    return built, "env"


PLUGIN, PLUGIN_MODE = _choose_plugin()
PYTHON_SIDE = os.path.join(REPO, "plugin", "python")
if PLUGIN_MODE == "env":
    os.environ["TF_PLUGGABLE_DEVICE_LIBRARY_PATH"] = PLUGIN
    site.addsitedir(PYTHON_SIDE)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(REPO, "tests", "tf", "child_site")]
        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
os.environ.pop("TFOCL_TF_PLUGIN", None)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
os.environ.setdefault("POCL_CACHE_DIR", os.path.join(BUILDDIR, "pocl-cache"))
os.makedirs(os.environ["POCL_CACHE_DIR"], exist_ok=True)
# Keras 3 picks its backend from this; the suites are TensorFlow's.
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def pytest_report_header(config):
    lines = [f"tfocl plugin: {PLUGIN} ({PLUGIN_MODE})"]
    try:
        import tensorflow as tf
        lines.append(f"tensorflow {tf.__version__} from {os.path.dirname(tf.__file__)}")
    except Exception as e:  # noqa: BLE001 -- reported, the tests fail on it
        lines.append(f"tensorflow: not importable ({e!r})")
    return lines


def tf_version():
    import tensorflow as tf
    return tuple(int(x) for x in tf.__version__.split(".")[:2])


def has_variable_api():
    """True when the TensorFlow wheel exports kernels_experimental.h (the
    C API a plugin needs for AssignAdd/AssignSub/ResourceApply*). 2.20.0 and
    2.21.0 export none of it (tensorflow#126374)."""
    import ctypes
    import tensorflow as tf
    lib = os.path.join(os.path.dirname(tf.__file__), "libtensorflow_framework.so.2")
    try:
        handle = ctypes.CDLL(lib, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return False
    return hasattr(handle, "TF_AssignUpdateVariable")


NO_VARIABLE_API_REASON = (
    "this TensorFlow wheel exports none of kernels_experimental.h "
    "(tensorflow#126374: every 2.20/2.21 wheel; tensorflow-cpu 2.19.1 too): "
    "no PluggableDevice kernel can run "
    "AssignAddVariableOp/AssignSubVariableOp/ResourceApply* (tfocl's graph "
    "optimizer rewrites them in tf.function graphs; eager calls fail)")


def pytest_collection_modifyitems(config, items):
    if not items:
        return
    try:
        ok = has_variable_api()
    except Exception:  # noqa: BLE001 -- no TensorFlow: the tests say so
        return
    if ok:
        return
    for item in items:
        if item.get_closest_marker("variables"):
            item.add_marker(pytest.mark.xfail(reason=NO_VARIABLE_API_REASON, strict=True))


@pytest.fixture(scope="session")
def tf():
    import tensorflow as tf
    devices = tf.config.list_physical_devices("OPENCL")
    assert devices, (
        f"TensorFlow sees no OPENCL device (plugin {PLUGIN}); "
        f"physical devices: {tf.config.list_physical_devices()}")
    tf.config.set_soft_device_placement(False)
    return tf


def subprocess_env(**extra):
    """The environment a child Python gets: the same plugin choice."""
    env = dict(os.environ)
    env.update({k: v for k, v in extra.items() if v is not None})
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
    return env


def run_python(code, *args, timeout=300, **env):
    """Runs `code` in a fresh interpreter (the same venv) with `args` as
    sys.argv[1:] and returns the CompletedProcess; stdout/stderr are text."""
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=timeout, env=subprocess_env(**env),
                          cwd=REPO)


class StartedPython:
    """A fresh interpreter started now and read later, so that children
    that mostly wait run side by side: result() gives what run_python
    would have."""

    def __init__(self, code, *args, **env):
        self.proc = subprocess.Popen([sys.executable, "-c", code, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=subprocess_env(**env), cwd=REPO)

    def result(self, timeout=300):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, out, err)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def tfocl_command():
    exe = os.path.join(BUILDDIR, "host_shim", "tfocl")
    return exe if os.access(exe, os.X_OK) else None


def tfocl_json(*args):
    exe = tfocl_command()
    out = subprocess.run([exe, *args, "--plugin", PLUGIN, "--json"],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"tfocl {' '.join(args)}: {out.stderr}")
    return json.loads(out.stdout)
