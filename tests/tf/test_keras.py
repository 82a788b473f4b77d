"""Keras model.fit on scikit-learn's digits (examples/train_digits.py, in a
subprocess): the whole train step on OPENCL except what TensorFlow keeps on
the host by design, and the same accuracy as on the CPU (same seed)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import PLUGIN, PLUGIN_MODE, REPO, subprocess_env

EXAMPLE = os.path.join(REPO, "examples", "train_digits.py")


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("digits") / "result.json"
    args = [sys.executable, EXAMPLE, "--epochs", "8", "--json", str(out), "--quiet"]
    env = subprocess_env()
    if PLUGIN_MODE == "env":
        env.pop("TF_PLUGGABLE_DEVICE_LIBRARY_PATH", None)
        args += ["--plugin", PLUGIN]
    cp = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    assert out.exists(), f"train_digits.py wrote nothing (rc {cp.returncode}):\n{cp.stderr[-4000:]}"
    return json.loads(out.read_text()), cp


@pytest.mark.slow
@pytest.mark.variables
def test_fit_runs_on_opencl(result):
    r, cp = result
    run = r["runs"]["opencl"]
    assert "error" not in run, run.get("error")
    on_cpu = run["placement"].get("CPU", {})
    unexpected = {op: n for op, n in on_cpu.items() if op not in r["host_by_design"]}
    assert not unexpected, (
        f"ops of the train step placed on CPU (no OPENCL kernel for them): {unexpected}")
    assert sum(run["placement"].get("OPENCL", {}).values()) > 100, run["placement"]
    print(f"OPENCL: {sum(run['placement']['OPENCL'].values())} nodes; host by design: {on_cpu}")


@pytest.mark.slow
@pytest.mark.variables
def test_fit_accuracy_matches_cpu(result):
    r, _ = result
    o, c = r["runs"]["opencl"], r["runs"]["cpu"]
    assert "error" not in o, o.get("error")
    assert "error" not in c, c.get("error")
    assert c["test_accuracy"] > 0.9, c
    assert abs(o["test_accuracy"] - c["test_accuracy"]) <= 0.01, (o["test_accuracy"], c["test_accuracy"])
    print(f"accuracy OPENCL {o['test_accuracy']:.4f} CPU {c['test_accuracy']:.4f}; "
          f"{o['step_ms']:.2f} vs {c['step_ms']:.2f} ms/step")
