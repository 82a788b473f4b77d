"""tests/bench/build_tree.py: a benchmark of the build tree's plugin runs
tfocl's Python side (its Keras, tf.config and tf.distribute hook) in its own
process and in its children, as a pip install would; without it Keras' LSTM
and GRU layers were measured as their generic loops. Where pip installed a
plugin, the build's is never added to it."""
import os
import subprocess
import sys

import pytest

from conftest import PLUGIN_MODE, REPO

PROBE = r"""
import os, subprocess, sys
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "bench"))
import build_tree
mode = build_tree.use(sys.argv[2], load=sys.argv[3] == "1")
child = subprocess.run(
    [sys.executable, "-c", "import sys; print('tfocl._autoload' in sys.modules)"],
    capture_output=True, text=True, check=True)
print(mode, "|", "tfocl._autoload" in sys.modules, "|", child.stdout.strip(), "|",
      os.environ.get("TF_PLUGGABLE_DEVICE_LIBRARY_PATH"))
"""


def probe(load, plugin="/nonexistent/libtfocl.so", **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TF_PLUGGABLE_DEVICE_LIBRARY_PATH")}
    env.update(extra)
    done = subprocess.run([sys.executable, "-c", PROBE, REPO, plugin, "1" if load else "0"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [field.strip() for field in done.stdout.strip().split("|")]


@pytest.mark.parametrize("load", [True, False])
def test_build_tree_plugin_brings_the_python_side(load):
    if PLUGIN_MODE == "installed":
        pytest.skip("tfocl is pip-installed here: the benchmarks use that copy")
    mode, here, child, plugin = probe(load)
    assert mode == "build tree"
    assert here == "True", "the benchmark's own process lacks tfocl's hook"
    assert child == "True", "a benchmark's child process lacks tfocl's hook"
    assert plugin == ("/nonexistent/libtfocl.so" if load else "None")


def test_plugin_named_by_the_environment_is_kept():
    if PLUGIN_MODE == "installed":
        pytest.skip("tfocl is pip-installed here: the benchmarks use that copy")
    _, _, child, plugin = probe(True, TF_PLUGGABLE_DEVICE_LIBRARY_PATH="/chosen/libtfocl.so")
    assert plugin == "/chosen/libtfocl.so"
    assert child == "True"


def test_installed_plugin_is_never_doubled():
    if PLUGIN_MODE != "installed":
        pytest.skip("no pip-installed tfocl in this interpreter")
    mode, here, child, plugin = probe(True)
    assert mode == "installed"
    assert plugin == "None", "the build's plugin was added to the installed one"
    assert here == "True" and child == "True"
