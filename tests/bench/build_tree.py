"""The benchmarks' plugin: the pip-installed one, else the build tree's
libtfocl.so together with the source tree's Python side.

A pip install puts tfocl's Python side (plugin/python: the tfocl package and
tfocl.pth, whose import hook patches Keras, tf.config and tf.distribute)
next to the plugin, and every Python process of the environment runs it. A
benchmark of the build tree's plugin without it measures something no user
runs: Keras' LSTM and GRU layers as their generic loops (3860 device commands
per train step of the two-layer LSTM of step_profile.py instead of 713), and
compile()'s defaults as on a TensorFlow without the plugin. So the
benchmarks activate it as the installed .pth would, here and, through
tests/tf/child_site on PYTHONPATH, in their child processes."""
import os
import site
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_SIDE = os.path.join(REPO, "plugin", "python")
CHILD_SITE = os.path.join(REPO, "tests", "tf", "child_site")


def installed():
    """Whether pip installed a plugin into this interpreter's site-packages."""
    return any(os.path.exists(os.path.join(p, "tensorflow-plugins", "libtfocl.so"))
               for p in sys.path if p)


def use(plugin, load=True):
    """Selects the plugin for this process and its children: the installed
    one where there is one (TensorFlow aborts on a second registration of
    the device type, so the build's is never added to it), else `plugin`
    (unless TF_PLUGGABLE_DEVICE_LIBRARY_PATH already names one; not at all
    where `load` is false) with the source tree's Python side. Returns
    "installed" or "build tree"."""
    if installed():
        return "installed"
    if load and "TF_PLUGGABLE_DEVICE_LIBRARY_PATH" not in os.environ:
        os.environ["TF_PLUGGABLE_DEVICE_LIBRARY_PATH"] = os.path.abspath(plugin)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if CHILD_SITE not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([CHILD_SITE] + paths)
    if PYTHON_SIDE not in sys.path:
        site.addsitedir(PYTHON_SIDE)  # runs tfocl.pth, as an install would
    return "build tree"
