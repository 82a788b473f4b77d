"""A second copy of the plugin in one process (tfocl pip-installed into
tensorflow-plugins/ and TF_PLUGGABLE_DEVICE_LIBRARY_PATH naming another or
the same file): TensorFlow aborts on a second registration of a platform, so
the second copy registers under a type of its own with 0 devices and says so
once; the first keeps serving OPENCL."""
import os
import shutil

import pytest

from conftest import PLUGIN, run_python

CODE = """
import tensorflow as tf
print("DEVICES", sorted(d.device_type for d in tf.config.list_physical_devices()))
tf.config.set_soft_device_placement(False)
with tf.device("/device:OPENCL:0"):
    x = tf.constant([1.0, 2.0]) * 3.0
print("VALUE", x.numpy().tolist(), x.device)
"""


@pytest.mark.parametrize("how", ["copy", "symlink"])
def test_second_copy_is_refused_not_fatal(tmp_path, how):
    plugins = tmp_path / "site-packages" / "tensorflow-plugins"
    plugins.mkdir(parents=True)
    installed = plugins / "libtfocl.so"
    if how == "copy":
        shutil.copy(PLUGIN, installed)
    else:  # the same file through two paths: one library, two registrations
        os.symlink(PLUGIN, installed)
    out = run_python(CODE, PYTHONPATH=str(tmp_path / "site-packages"),
                     TF_PLUGGABLE_DEVICE_LIBRARY_PATH=PLUGIN)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "DEVICES ['CPU', 'OPENCL']" in out.stdout, out.stdout + out.stderr[-2000:]
    assert "VALUE [3.0, 6.0]" in out.stdout and "OPENCL:0" in out.stdout, out.stdout
    lines = [l for l in out.stderr.splitlines() if "a second copy of tfocl" in l]
    assert len(lines) == 1, out.stderr[-3000:]
    assert "OPENCL_COPY_B with 0 devices" in lines[0]
