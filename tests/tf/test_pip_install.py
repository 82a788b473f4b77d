"""`pip install .` (meson-python) puts libtfocl.so, and only it, into
site-packages/tensorflow-plugins/, where `import tensorflow` finds it
without TF_PLUGGABLE_DEVICE_LIBRARY_PATH."""
import os
import subprocess
import sys

import pytest

from conftest import REPO, run_python


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


def test_installs_only_the_plugin(site):
    files = sorted(os.path.relpath(os.path.join(d, f), site)
                   for d, _, fs in os.walk(site) for f in fs if ".dist-info" not in d)
    assert files == [os.path.join("tensorflow-plugins", "libtfocl.so")], files


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
