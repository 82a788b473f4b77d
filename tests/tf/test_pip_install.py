"""`pip install .` (meson-python) puts libtfocl.so into
site-packages/tensorflow-plugins/, where `import tensorflow` finds it
without TF_PLUGGABLE_DEVICE_LIBRARY_PATH, and tfocl's Python side (the tfocl
package and tfocl.pth, plugin/python) into the site-packages root; nothing
else.

The install is `pip install --target`: a folder that is not a site directory,
so its .pth files are read only when a program makes it one; the children
that need the Python side call site.addsitedir on it first, as Python does
for a real site-packages."""
import os
import subprocess
import sys

import pytest

from conftest import REPO, run_python

INSTALLED = sorted([
    os.path.join("tensorflow-plugins", "libtfocl.so"),
    "tfocl.pth",
    os.path.join("tfocl", "__init__.py"),
    os.path.join("tfocl", "_autoload.py"),
    os.path.join("tfocl", "_distribute.py"),
    os.path.join("tfocl", "_hook.py"),
    os.path.join("tfocl", "_keras.py"),
    os.path.join("tfocl", "_tfconfig.py"),
])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    try:
        import mesonpy  # noqa: F401
    except ImportError:
        pytest.skip("meson-python is not installed in this venv (ci/install-deps installs it)")
    # TensorFlow scans every sys.path entry named site-packages for plugins.
    target = tmp_path_factory.mktemp("pip") / "site-packages"
    cp = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--target", str(target), REPO],
        capture_output=True, text=True, timeout=900)
    assert cp.returncode == 0, cp.stdout[-3000:] + cp.stderr[-3000:]
    return target


def test_installs_the_plugin_and_the_python_side(site):
    # pip byte-compiles what it installs: __pycache__ is pip's, not the wheel's.
    files = sorted(os.path.relpath(os.path.join(d, f), site)
                   for d, _, fs in os.walk(site) for f in fs
                   if ".dist-info" not in d and "__pycache__" not in d)
    assert files == INSTALLED, files
    with open(os.path.join(site, "tfocl.pth")) as f:
        assert f.read() == "import tfocl._autoload\n"


def test_tensorflow_loads_the_installed_plugin(site):
    code = """
import tensorflow as tf
print("DEVICES", [d.device_type for d in tf.config.list_physical_devices()])
with tf.device("/device:OPENCL:0"):
    print("VALUE", (tf.constant([1.0, 2.0]) * 3.0).numpy().tolist())
"""
    out = run_python(code, TF_PLUGGABLE_DEVICE_LIBRARY_PATH=None, PYTHONPATH=str(site))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "DEVICES ['CPU', 'OPENCL']" in out.stdout, out.stdout + out.stderr[-2000:]
    assert "VALUE [3.0, 6.0]" in out.stdout


@pytest.mark.slow
def test_unchanged_keras_program_trains_with_the_installed_package(site):
    """Keras' default compile() (jit_compile="auto") on OPENCL: the installed
    tfocl.pth's hook turns XLA off, from the installed package."""
    code = """
import site, sys
site.addsitedir(sys.argv[1])  # what Python does for a real site-packages
print("HOOK", sys.modules["tfocl"].__file__ if "tfocl._autoload" in sys.modules else None)
import numpy as np
import keras
import tensorflow as tf
x = np.random.RandomState(0).rand(128, 8).astype("float32")
y = (x.sum(axis=1) > 4).astype("int64")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(2, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
history = model.fit(x, y, epochs=2, batch_size=32, verbose=0)
print("JIT", model.jit_compile)
print("DEVICE", model.weights[0].value.device)
print("LOSS", history.history["loss"])
"""
    out = run_python(code, str(site), TF_PLUGGABLE_DEVICE_LIBRARY_PATH=None, PYTHONPATH=str(site),
                     TF_CPP_MIN_LOG_LEVEL="3")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    # tfocl.pth installed the hook before Keras was imported, from the install.
    assert f"HOOK {os.path.join(str(site), 'tfocl', '__init__.py')}" in out.stdout, out.stdout
    assert "JIT False" in out.stdout, out.stdout
    assert "DEVICE /job:localhost/replica:0/task:0/device:OPENCL:0" in out.stdout, out.stdout
    assert "tfocl:" not in out.stderr, out.stderr[-3000:]
