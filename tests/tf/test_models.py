"""Keras models of the common families (model_zoo.py) trained on OPENCL in
strict placement against the CPU (run_model.py, one subprocess per model):
every op of the train step on OPENCL but the host-by-design ones, the same
losses as the CPU from the same weights and batches, and, for MobileNetV2,
first-batch gradients as close to a float64 reference as the CPU's.

Each model's ms/step on both devices is printed (pytest -s, or the JSON
under the build directory's meson-logs)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import BUILDDIR, REPO, has_variable_api, subprocess_env

RUN = os.path.join(REPO, "tests", "tf", "run_model.py")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402

# Loss agreement: the first step's loss is computed from equal weights and
# batches (float32 sums in another order: ~1e-6 relative); later steps
# compound Adam's updates of those differences.
FIRST_RTOL = {"mobilenet": 1e-4}
# MobileNetV2: Adam's first updates divide by the root of near-zero second
# moments, so gradients 1e-5 apart (both devices' distance from float64)
# move the third loss by ~1e-2; the gradient check below is its accuracy
# test.
LATER_RTOL = {"mobilenet": 3e-2}
# Where the wheel lacks kernels_experimental.h (2.20/2.21), ZerosLike and
# AddN of the while loop's TensorList gradients have no OPENCL kernel (they
# need TF_ZerosLikeVariant/TF_AddNVariant), and the loop's control-flow ops
# carrying that value follow them to the CPU; the losses still match.
TENSORLIST_ON_CPU = {"ZerosLike", "AddN", "Enter", "Merge", "Switch", "NextIteration"}
TENSORLIST_REASON = ("this TensorFlow wheel exports no TF_ZerosLikeVariant/TF_AddNVariant "
                     "(kernels_experimental.h, tensorflow#126374): the TensorList gradient "
                     "accumulators of Keras' RNN loop run on the CPU")
# The OPENCL gradients may be this much further from float64 than the CPU's.
GRAD_FACTOR = 3.0


def _run(model, *extra, timeout=900, env=None):
    out = os.path.join(BUILDDIR, "meson-logs", f"model-{model}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if os.path.exists(out):
        os.remove(out)
    cp = subprocess.run([sys.executable, RUN, "--model", model, "--json", out, *extra],
                        capture_output=True, text=True, timeout=timeout,
                        env=subprocess_env(**(env or {})), cwd=REPO)
    assert os.path.exists(out), f"run_model.py wrote nothing (rc {cp.returncode}):\n{cp.stderr[-4000:]}"
    with open(out) as f:
        result = json.load(f)
    print(cp.stdout)
    return result


def _check(result):
    model = result["model"]
    cpu, ocl = result["runs"]["cpu"], result["runs"]["opencl"]
    assert "error" not in cpu, cpu["error"]
    assert "error" not in ocl, f"{model} on OPENCL: {ocl['error']}"
    elsewhere = {d: {op: n for op, n in ops.items() if op not in model_zoo.HOST_OK}
                 for d, ops in ocl["placement"].items() if d != "OPENCL"}
    elsewhere = {d: ops for d, ops in elsewhere.items() if ops}
    first = FIRST_RTOL.get(model, 2e-5)
    later = LATER_RTOL.get(model, 1e-3)
    for i, (o, c) in enumerate(zip(ocl["losses"], cpu["losses"])):
        tol = first if i == 0 else later
        assert abs(o - c) <= tol * max(abs(c), 1e-3), \
            f"{model} step {i}: OPENCL loss {o:.7f}, CPU {c:.7f}"
    print(f"{model}: {ocl['step_ms']:.1f} ms/step on OPENCL, {cpu['step_ms']:.1f} on the CPU")
    if (elsewhere and model in ("lstm", "gru") and not has_variable_api()
            and set(elsewhere) == {"CPU"} and set(elsewhere["CPU"]) == TENSORLIST_ON_CPU):
        pytest.xfail(TENSORLIST_REASON)
    assert not elsewhere, f"{model}: train-step ops not on OPENCL: {elsewhere}"


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(set(model_zoo.MODELS) - {"mobilenet"}))
def test_model_trains_on_opencl(model):
    _check(_run(model, "--steps", "3"))


# The gradient check's batch. With the zoo's default seed (3) the exact
# float64 gradient of the first batch moves 3.7e-2 when the input moves by
# one float32 ulp (a ReLU6 input within rounding of its kink, in the 1x1
# blocks), so a float32 run lands 4e-5 or 3.7e-2 from float64 by the luck of
# its roundings: TensorFlow's CPU and our GEMM kernel landed near, the host
# BLAS's (one 512x48 * 48x8 product one ulp apart) far. run_model.py
# measures that distance (input_ulp); seed 5 keeps it at 2e-5.
GRAD_SEED = "5"


@pytest.fixture(scope="module")
def mobilenet_cpu_side(tmp_path_factory):
    """Where the first of the runs below leaves the CPU's side (its losses,
    the float64 gradients, input_ulp: seven MobileNetV2 builds on the host)
    for the next: only the OPENCL device's settings differ between them."""
    return str(tmp_path_factory.mktemp("mobilenet") / "cpu_side.npz")


@pytest.mark.slow
@pytest.mark.parametrize("gemm", ["tuned", "blas"])
def test_mobilenet_gradients_as_accurate_as_cpu(gemm, mobilenet_cpu_side):
    """TFOCL_GEMM=blas: every product through the host BLAS where the device
    runs native kernels (PoCL); tuned: the measured choice per size class,
    which mixes the host BLAS and our kernel in one graph on such devices."""
    env = {"TFOCL_GEMM": gemm} if gemm != "tuned" else None
    result = _run("mobilenet", "--steps", "3", "--grad-check", "--seed", GRAD_SEED,
                  "--reference", mobilenet_cpu_side, timeout=1500, env=env)
    _check(result)
    err = result["grad_error"]
    assert "error" not in err, err["error"]
    print(f"MobileNetV2 first-batch gradients, relative L2 vs float64: {err}")
    assert err["input_ulp"] < 1e-3, \
        (f"the check's batch is ill-conditioned: its float64 gradient moves {err['input_ulp']:.2e} "
         "for a one-ulp change of the input; choose another GRAD_SEED")
    assert err["opencl"] <= GRAD_FACTOR * max(err["cpu"], err["input_ulp"]) + 1e-6, \
        f"OPENCL gradients {err['opencl']:.2e} vs the CPU's {err['cpu']:.2e} from float64"
