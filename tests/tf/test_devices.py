"""The OPENCL device as TensorFlow sees it, and the plugin's 'never abort'
promise when there is no OpenCL platform."""
import json
import tempfile

from conftest import run_python


def test_physical_devices_show_opencl(tf):
    devices = tf.config.list_physical_devices()
    names = [d.name for d in devices]
    assert "/physical_device:OPENCL:0" in names, names
    assert all(d.device_type in ("CPU", "OPENCL") for d in devices), devices


def test_logical_device_and_a_first_op(tf):
    logical = [d.name for d in tf.config.list_logical_devices("OPENCL")]
    assert logical and logical[0].endswith("device:OPENCL:0"), logical
    with tf.device("/device:OPENCL:0"):
        c = tf.add(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
    assert c.device.endswith("device:OPENCL:0"), c.device
    assert c.numpy().tolist() == [4.0, 6.0]


def test_device_details(tf):
    dev = tf.config.list_physical_devices("OPENCL")[0]
    details = tf.config.experimental.get_device_details(dev)
    # device_name is SP_Device.hardware_name (the OpenCL device name).
    assert isinstance(details, dict)


_LIST = """
import json, tensorflow as tf
print("DEVICES=" + json.dumps([d.device_type for d in tf.config.list_physical_devices()]))
x = tf.constant([1.0, 2.0]) + 1.0
print("CPU_OK=" + str(x.numpy().tolist()))
"""


def _devices(out):
    for line in out.stdout.splitlines():
        if line.startswith("DEVICES="):
            return json.loads(line[len("DEVICES="):])
    raise AssertionError(f"no device list; rc={out.returncode}\nstderr:\n{out.stderr[-4000:]}")


def test_no_opencl_platform_imports_and_shows_none():
    """An empty ICD vendor dir: no OpenCL platform at all. `import
    tensorflow` must work, offer no OPENCL device and run CPU ops."""
    with tempfile.TemporaryDirectory() as empty:
        out = run_python(_LIST, OCL_ICD_VENDORS=empty, OCL_ICD_FILENAMES="")
    assert out.returncode == 0, out.stderr[-4000:]
    assert _devices(out) == ["CPU"]
    assert "CPU_OK=[2.0, 3.0]" in out.stdout


def test_no_visible_devices_imports_and_shows_none():
    out = run_python(_LIST, TFOCL_VISIBLE_DEVICES="")
    assert out.returncode == 0, out.stderr[-4000:]
    assert _devices(out) == ["CPU"]


def test_subprocess_sees_device():
    out = run_python(_LIST)
    assert out.returncode == 0, out.stderr[-4000:]
    assert "OPENCL" in _devices(out)


def test_plugin_exports_its_entry_points_and_imports_no_tf_symbol():
    """The plugin exports the device, kernel and graph entry points and
    resolves TensorFlow's C API at run time: no TF_* import (one missing
    from a wheel would abort `import tensorflow`)."""
    import subprocess
    from conftest import PLUGIN
    defined = subprocess.run(["nm", "-D", "--defined-only", PLUGIN],
                             capture_output=True, text=True, check=True).stdout
    funcs = sorted(line.split()[-1] for line in defined.splitlines() if " T " in line)
    assert funcs == ["SE_InitPlugin", "TF_InitGraph", "TF_InitKernel", "TF_InitProfiler"], funcs
    undefined = subprocess.run(["nm", "-D", "--undefined-only", PLUGIN],
                               capture_output=True, text=True, check=True).stdout
    tf_imports = [line.split()[-1] for line in undefined.splitlines()
                  if line.split()[-1].startswith(("TF_", "TSL_"))]
    assert tf_imports == [], tf_imports


def test_import_with_driver_llvm():
    """`import tensorflow` with the plugin and nothing else: the OpenCL
    driver (PoCL links LLVM 15) is opened inside a process where TensorFlow
    already exports its own LLVM symbols globally (RTLD_GLOBAL). The plugin
    keeps the driver's LLVM apart (plugin/icd_preload.c); a segfault here is
    that bug."""
    out = run_python(_LIST)
    assert out.returncode == 0, (
        f"import tensorflow with the plugin died (rc {out.returncode}, "
        f"-11 = SIGSEGV in llvm::cl::Option::addArgument from PoCL's "
        f"libclang-cpp constructor):\n{out.stderr[-2500:]}")
    assert "OPENCL" in _devices(out)
