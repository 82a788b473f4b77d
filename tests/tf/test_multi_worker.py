"""tf.distribute beyond one device list: MultiWorkerMirroredStrategy over two
worker processes on 127.0.0.1 (TF_CONFIG), each with its PoCL device(s), and
MirroredStrategy() without devices, both through tfocl's Python side
(tfocl._distribute) or its explicit tfocl.MultiWorkerMirroredStrategy.

Every TensorFlow runs in a child interpreter (this file run as a script,
`python test_multi_worker.py MODE STEPS`) that trains a small MLP with a
custom `strategy.run` loop (Keras 3.15's fit fails under
MultiWorkerMirroredStrategy even without the plugin) and prints one JSON
line: the losses, where each replica's variables live, and where the train
step's nodes ran (the partition graphs of its run metadata). The workers'
losses must equal, within float tolerance, those of one process's
MirroredStrategy at the same global batch (the same examples per step: each
input pipeline takes every W-th example, W the number of workers).

ParameterServerStrategy: a coordinator (this file, ps_coordinator), a
parameter server and two workers (ps_server) on 127.0.0.1.

Also: a worker killed mid-training fails the other in bounded time, and a
checkpoint written by two workers restores onto two fresh ones.

MODE: mirrored (tf.distribute.MirroredStrategy()), tf
(tf.distribute.MultiWorkerMirroredStrategy()), tfocl
(tfocl.MultiWorkerMirroredStrategy() with RING communication options),
tfocl_named (tfocl.MultiWorkerMirroredStrategy(devices=["/OPENCL:1"])).
"""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

if __name__ != "__main__":  # a child needs none of conftest's set-up
    from conftest import REPO, subprocess_env

GLOBAL_BATCH = 16
STEPS = 4
LR = 0.1
TIMEOUT = 150


def child(mode, steps):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.eager import context

    if mode == "tfocl_named":
        import tfocl
        strategy = tfocl.MultiWorkerMirroredStrategy(devices=["/OPENCL:1"])
    elif mode == "tfocl":
        import tfocl
        ring = tf.distribute.experimental.CommunicationImplementation.RING
        strategy = tfocl.MultiWorkerMirroredStrategy(
            communication_options=tf.distribute.experimental.CommunicationOptions(implementation=ring))
    elif mode == "tf":
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    else:
        strategy = tf.distribute.MirroredStrategy()
    start = int(os.environ.get("TEST_START_STEP", "0"))
    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {}).get("index", 0)
    die_after = int(os.environ.get("TEST_DIE_AFTER", "-1")) if task == 1 else -1
    rng = np.random.default_rng(0)
    x = rng.standard_normal((GLOBAL_BATCH * 16, 8)).astype(np.float32)  # the same data whatever the steps
    y = (x @ rng.standard_normal((8, 1)) + 0.1).astype(np.float32)
    window = slice(start * GLOBAL_BATCH, (start + steps) * GLOBAL_BATCH)
    x, y = x[window], y[window]
    w1 = (rng.standard_normal((8, 16)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((16, 1)) * 0.3).astype(np.float32)

    def dataset_fn(ctx):
        ds = tf.data.Dataset.from_tensor_slices((x, y))
        ds = ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        return ds.batch(ctx.get_per_replica_batch_size(GLOBAL_BATCH))

    with strategy.scope():
        v1 = tf.Variable(w1, name="w1")
        b1 = tf.Variable(tf.zeros([16]), name="b1")
        v2 = tf.Variable(w2, name="w2")
        variables = [v1, b1, v2]
    checkpoint = tf.train.Checkpoint(w1=v1, b1=b1, w2=v2)
    if os.environ.get("TEST_RESTORE"):
        checkpoint.read(os.environ["TEST_RESTORE"]).assert_consumed()
    dist = iter(strategy.distribute_datasets_from_function(dataset_fn))

    def step_fn(xb, yb):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(xb, v1) + b1)
            loss = tf.reduce_sum(tf.square(tf.matmul(h, v2) - yb)) / GLOBAL_BATCH
        grads = tape.gradient(loss, variables)
        ctx = tf.distribute.get_replica_context()
        grads = ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads)

        def apply(dist_strategy, pairs):
            for g, v in pairs:
                dist_strategy.extended.update(v, lambda var, gg: var.assign(var - LR * gg), args=(g,))

        ctx.merge_call(apply, args=(list(zip(grads, variables)),))
        return loss

    @tf.function
    def train_step(batch):
        per_replica = strategy.run(step_fn, args=batch)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    losses, times = [], []
    for i in range(steps):
        if i == die_after:
            print("DYING", flush=True)
            os._exit(3)
        batch = next(dist)
        if i == 0:  # the partition graphs are recorded when the function is instantiated
            context.context().enable_run_metadata()
        t0 = time.perf_counter()
        losses.append(float(train_step(batch)))
        times.append(time.perf_counter() - t0)
        if i == 0:
            meta = context.context().export_run_metadata()
            context.context().disable_run_metadata()
    if os.environ.get("TEST_SAVE"):
        # Every worker writes (the variables' values come through
        # collectives); the chief's copy is the checkpoint.
        where = os.environ["TEST_SAVE"]
        if task != 0:
            where = os.path.join(where, f"worker{task}")
        checkpoint.write(os.path.join(where, "ckpt"))
    nodes = {}
    for fg in meta.function_graphs:
        for pg in fg.partition_graphs:
            for node in pg.node:
                kind = "OPENCL" if "OPENCL" in node.device else "CPU" if "CPU" in node.device else node.device
                nodes.setdefault(kind, {}).setdefault(node.op, 0)
                nodes[kind][node.op] += 1
    out = {
        "workers": strategy.extended._num_workers if hasattr(strategy.extended, "_num_workers") else 1,
        "replicas": strategy.num_replicas_in_sync,
        "worker_devices": list(strategy.extended.worker_devices),
        "variable_devices": sorted({c.device for v in variables
                                    for c in strategy.experimental_local_results(v)}),
        "losses": losses,
        "step_s": sorted(times[1:])[len(times[1:]) // 2] if steps > 1 else times[0],
        "nodes": nodes,
        "class": f"{type(strategy).__module__}.{type(strategy).__qualname__}",
    }
    print("RESULT " + json.dumps(out), flush=True)


def ps_server():
    """A worker or parameter server of ParameterServerStrategy (TF_CONFIG):
    serves until killed."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id, protocol="grpc", start=True)
    print("SERVING", flush=True)
    server.join()


def ps_coordinator(steps):
    """ParameterServerStrategy's coordinator: one step at a time (join()
    after each), so the variables on the parameter server see the steps in
    order and the losses are those of a sequential run at the same batch."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((GLOBAL_BATCH * 16, 8)).astype(np.float32)
    y = (x @ rng.standard_normal((8, 1)) + 0.1).astype(np.float32)
    w1 = (rng.standard_normal((8, 16)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((16, 1)) * 0.3).astype(np.float32)
    with strategy.scope():
        v1 = tf.Variable(w1, name="w1")
        b1 = tf.Variable(tf.zeros([16]), name="b1")
        v2 = tf.Variable(w2, name="w2")
        variables = [v1, b1, v2]
        # How many times step functions ran: more than the steps scheduled
        # means the coordinator re-ran a closure it thought lost (a worker
        # slow to answer), and a re-run step updates the variables twice.
        runs = tf.Variable(0, name="runs")

    @tf.function
    def train_step(xb, yb):
        def step_fn(xb, yb):
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.matmul(xb, v1) + b1)
                loss = tf.reduce_sum(tf.square(tf.matmul(h, v2) - yb)) / GLOBAL_BATCH
            for g, v in zip(tape.gradient(loss, variables), variables):
                v.assign(v - LR * g)
            runs.assign_add(1)
            return loss
        return strategy.run(step_fn, args=(xb, yb))

    losses = []
    for i in range(steps):
        batch = (x[i * GLOBAL_BATCH:(i + 1) * GLOBAL_BATCH], y[i * GLOBAL_BATCH:(i + 1) * GLOBAL_BATCH])
        remote = coordinator.schedule(train_step, args=batch)
        coordinator.join()
        losses.append(float(remote.fetch()))
    print("RESULT " + json.dumps({"losses": losses, "variable_devices": [v.device for v in variables],
                                  "runs": int(runs.numpy())}),
          flush=True)


def _result(stdout, stderr, what):
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise AssertionError(f"{what} printed no result:\n{stdout[-3000:]}\n{stderr[-6000:]}")


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _env(pocl_devices, **extra):
    return subprocess_env(POCL_DEVICES=pocl_devices, TF_CPP_MIN_LOG_LEVEL="2", **extra)


def run_one(mode, pocl_devices, steps=STEPS, **extra):
    out = subprocess.run([sys.executable, __file__, mode, str(steps)], capture_output=True,
                         text=True, timeout=TIMEOUT, env=_env(pocl_devices, TF_CONFIG=None, **extra),
                         cwd=REPO)
    return _result(out.stdout, out.stderr, f"{mode} (rc {out.returncode})")


def start_workers(mode, pocl_devices, workers=2, steps=STEPS, **extra):
    ports = _free_ports(workers)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for i in range(workers):
        tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})
        procs.append(subprocess.Popen([sys.executable, __file__, mode, str(steps)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      env=_env(pocl_devices, TF_CONFIG=tf_config, **extra), cwd=REPO))
    return procs


def finish(procs, timeout=TIMEOUT):
    """[(returncode, stdout, stderr)] of every process; kills what is
    still running at the deadline (then raises TimeoutExpired)."""
    outs = []
    deadline = time.monotonic() + timeout
    try:
        for p in procs:
            stdout, stderr = p.communicate(timeout=max(1, deadline - time.monotonic()))
            outs.append((p.returncode, stdout, stderr))
        return outs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)


def run_workers(mode, pocl_devices, workers=2, steps=STEPS, **extra):
    outs = finish(start_workers(mode, pocl_devices, workers, steps, **extra))
    return [_result(stdout, stderr, f"worker {i} of {mode} (rc {rc})")
            for i, (rc, stdout, stderr) in enumerate(outs)]


def check_on_opencl(result, job_prefix):
    assert result["worker_devices"], result
    for name in result["worker_devices"] + result["variable_devices"]:
        assert "/device:OPENCL:" in name and name.startswith(job_prefix), result
    compute = {"MatMul", "Relu", "ReluGrad", "BiasAdd", "Square", "Sub", "Mul", "AddV2"}
    on_cpu = set(result["nodes"].get("CPU", {})) & compute
    assert not on_cpu, f"train-step compute on the CPU: {on_cpu}; nodes {result['nodes']}"
    assert result["nodes"].get("OPENCL", {}).get("MatMul", 0) >= 2, result["nodes"]


@pytest.fixture(scope="module")
def reference():
    """One process's MirroredStrategy() over 2 OPENCL devices (the patch
    chooses them), global batch GLOBAL_BATCH."""
    result = run_one("mirrored", "pthread pthread")
    assert result["replicas"] == 2, result
    check_on_opencl(result, "/job:localhost/")
    assert result["losses"][0] == pytest.approx(numpy_first_loss(), rel=1e-5)
    return result


def numpy_first_loss():
    """The first step's loss, from the child's data in NumPy."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((GLOBAL_BATCH * 16, 8)).astype(np.float32)
    y = (x @ rng.standard_normal((8, 1)) + 0.1).astype(np.float32)
    w1 = (rng.standard_normal((8, 16)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((16, 1)) * 0.3).astype(np.float32)
    h = np.maximum(x[:GLOBAL_BATCH] @ w1, 0)
    return float(((h @ w2 - y[:GLOBAL_BATCH]) ** 2).sum() / GLOBAL_BATCH)


def test_import_tfocl_is_light():
    out = subprocess.run([sys.executable, "-c", "import sys, tfocl; print('tensorflow' in sys.modules)"],
                         capture_output=True, text=True, timeout=60, env=_env("pthread"), cwd=REPO)
    assert out.stdout.strip() == "False", out.stderr


UNKNOWN_INTERNALS = """
import sys, types
from tfocl import _distribute
ms = types.ModuleType("tensorflow.python.distribute.mirrored_strategy")
def all_local_devices(num_gpus=None, extra=None):
    return []
ms.all_local_devices = all_local_devices
_distribute.patch_mirrored(ms)
_distribute.patch_mirrored(ms)  # said once
cars = types.ModuleType("tensorflow.python.distribute.collective_all_reduce_strategy")
class CollectiveAllReduceExtended:
    def _initialize_local_devices(self, cluster_resolver):
        return (), "CPU"
cars.CollectiveAllReduceExtended = CollectiveAllReduceExtended
_distribute.patch_collective(cars)
pss = types.ModuleType("tensorflow.python.distribute.parameter_server_strategy_v2")
pss.ParameterServerStrategyV2Extended = type("ParameterServerStrategyV2Extended", (), {})
_distribute.patch_parameter_server(pss)
print("RESULT", ms.all_local_devices is all_local_devices,
      "__tfocl_wrapped__" in vars(CollectiveAllReduceExtended._initialize_local_devices),
      "tensorflow" in sys.modules)
"""


def test_unknown_internals_get_one_line_each():
    """Strategy modules whose internals differ are left alone, with one
    `tfocl: ...` line each saying what to do instead (no TensorFlow
    needed)."""
    out = subprocess.run([sys.executable, "-c", UNKNOWN_INTERNALS], capture_output=True, text=True,
                         timeout=60, env=_env("pthread"), cwd=REPO)
    assert "RESULT True False False" in out.stdout, out.stdout + out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("tfocl:")]
    assert len(lines) == 3, out.stderr
    assert "MirroredStrategy() without devices is not patched" in lines[0], lines
    assert "tfocl.MultiWorkerMirroredStrategy()" in lines[1], lines
    assert "ParameterServerStrategy's workers are not patched" in lines[2], lines


def test_patches_are_idempotent():
    """A second install and a reload of a strategy module: each function
    wrapped once."""
    code = """
import importlib, sys, tfocl._hook
from tensorflow.python.distribute import mirrored_strategy as ms
from tensorflow.python.distribute import collective_all_reduce_strategy as cars
from tensorflow.python.distribute import parameter_server_strategy_v2 as pss
tfocl._hook.install()
importlib.reload(ms)
def depth(fn):
    n = 0
    while hasattr(fn, "__tfocl_wrapped__"):
        fn, n = fn.__tfocl_wrapped__, n + 1
    return n
print("RESULT", depth(ms.all_local_devices),
      depth(vars(cars.CollectiveAllReduceExtended)["_initialize_local_devices"]),
      depth(vars(pss.ParameterServerStrategyV2Extended)["_set_num_gpus"]),
      depth(vars(pss.ParameterServerStrategyV2Extended)["worker_devices"].fget))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=TIMEOUT, env=_env("pthread"), cwd=REPO)
    assert "RESULT 1 1 1 1" in out.stdout, out.stdout + out.stderr[-3000:]
    assert not [line for line in out.stderr.splitlines() if line.startswith("tfocl:")], out.stderr


def test_switch_off_leaves_mirrored_on_cpu():
    result = run_one("mirrored", "pthread", steps=1, TFOCL_DISTRIBUTE_COMPAT="0")
    assert result["worker_devices"] == ["/job:localhost/replica:0/task:0/device:CPU:0"], result


@pytest.mark.parametrize("mode", ["tf", "tfocl"])
def test_two_workers_one_device_each(reference, mode):
    results = run_workers(mode, "pthread")
    for i, r in enumerate(results):
        assert r["workers"] == 2 and r["replicas"] == 2, r
        check_on_opencl(r, f"/job:worker/replica:0/task:{i}/")
        assert r["losses"] == pytest.approx(reference["losses"], rel=1e-5, abs=1e-6), (r, reference)
    assert results[0]["losses"] == results[1]["losses"]
    if mode == "tfocl":
        assert results[0]["class"] == "tfocl.MultiWorkerMirroredStrategy"
    print(f"{mode}: step {results[0]['step_s'] * 1e3:.1f} ms with 2 workers; "
          f"{reference['step_s'] * 1e3:.1f} ms in one process over 2 devices")


@pytest.fixture(scope="module")
def reference4():
    """MirroredStrategy() over 4 OPENCL devices of one process."""
    result = run_one("mirrored", "pthread pthread pthread pthread")
    assert result["replicas"] == 4, result
    return result


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["tf", "tfocl"])
def test_two_workers_two_devices_each(reference4, mode):
    reference = reference4
    results = run_workers(mode, "pthread pthread")
    for i, r in enumerate(results):
        assert r["workers"] == 2 and r["replicas"] == 4, r
        assert len(r["worker_devices"]) == 2, r
        check_on_opencl(r, f"/job:worker/replica:0/task:{i}/")
        assert r["losses"] == pytest.approx(reference["losses"], rel=1e-5, abs=1e-6), (r, reference)


def _ps_cluster():
    """Runs a coordinator, a parameter server and two workers; returns the
    coordinator's result and the servers' logs."""
    ports = _free_ports(4)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports[:2]], "ps": [f"127.0.0.1:{ports[2]}"],
               "chief": [f"127.0.0.1:{ports[3]}"]}
    servers = []
    try:
        for job, index in (("ps", 0), ("worker", 0), ("worker", 1)):
            tf_config = json.dumps({"cluster": cluster, "task": {"type": job, "index": index}})
            servers.append(subprocess.Popen([sys.executable, __file__, "ps_server", "0"],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                            env=_env("pthread", TF_CONFIG=tf_config, TFOCL_TRACE="1"),
                                            cwd=REPO))
        tf_config = json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}})
        out = subprocess.run([sys.executable, __file__, "ps_coordinator", str(STEPS)], capture_output=True,
                             text=True, timeout=TIMEOUT, env=_env("pthread", TF_CONFIG=tf_config), cwd=REPO)
        result = _result(out.stdout, out.stderr, f"coordinator (rc {out.returncode})")
    finally:
        logs = []
        for p in servers:
            p.kill()
            logs.append(p.communicate(timeout=30)[1])
    return result, logs


def test_parameter_server_strategy(reference):
    """ParameterServerStrategy: a coordinator, a parameter server and two
    workers on 127.0.0.1, each with a PoCL device; the workers' train-step
    MatMuls on their OPENCL device, the variables on the server, and the
    losses of the same steps taken in order in one process. A run in which
    the coordinator re-ran a step (a worker slow to answer on a loaded
    machine) takes that step's update twice, so it is run again once."""
    result, logs = _ps_cluster()
    if result["runs"] != STEPS:
        print(f"the coordinator re-ran steps ({result['runs']} runs of {STEPS}): once more")
        result, logs = _ps_cluster()
    assert result["runs"] == STEPS, f"steps re-run by the coordinator in two runs: {result}"
    for device in result["variable_devices"]:
        assert device.startswith("/job:ps/replica:0/task:0/"), result
    assert result["losses"] == pytest.approx(reference["losses"], rel=1e-5, abs=1e-6), result
    # Where the step ran: the workers' plugin (TFOCL_TRACE=1) says when it
    # builds the OpenCL program of a MatMul, which only the train step's
    # MatMuls placed on a worker's OPENCL device make it do. The server's
    # placement log does not reach a remote eager function's placer.
    built = [line for log in logs[1:] for line in log.splitlines()
             if "built kernel family matmul" in line]
    assert built, "no worker built a MatMul kernel on OPENCL:\n" + logs[1][-3000:]


def test_named_device_of_each_worker(reference):
    """tfocl.MultiWorkerMirroredStrategy(devices=["/OPENCL:1"]) on workers
    with two PoCL devices: one replica each, on its OPENCL:1."""
    results = run_workers("tfocl_named", "pthread pthread")
    for i, r in enumerate(results):
        assert r["worker_devices"] == [f"/job:worker/replica:0/task:{i}/device:OPENCL:1"], r
        check_on_opencl(r, f"/job:worker/replica:0/task:{i}/")
        assert all(d.endswith("OPENCL:1") for d in r["variable_devices"]), r
        assert r["losses"] == pytest.approx(reference["losses"], rel=1e-5, abs=1e-6), (r, reference)


def test_killed_worker_fails_the_other(tmp_path):
    """Worker 1 exits before its third step: worker 0, blocked in the
    all-reduce of that step, fails with TensorFlow's error (the coordination
    service's missed heartbeats abort the collective) in bounded time."""
    start = time.monotonic()
    (rc0, out0, err0), (rc1, out1, _) = finish(
        start_workers("tf", "pthread", steps=6, TEST_DIE_AFTER="2"), timeout=TIMEOUT)
    elapsed = time.monotonic() - start
    assert rc1 == 3 and "DYING" in out1
    assert rc0 != 0 and "RESULT" not in out0, out0
    assert "tensorflow.python.framework.errors_impl." in err0, err0[-4000:]
    assert any(e in err0 for e in ("UnavailableError", "DeadlineExceededError", "AbortedError",
                                    "CancelledError", "InternalError")), err0[-4000:]
    assert elapsed < 120, f"worker 0 took {elapsed:.0f} s to fail"


def test_checkpoint_restores_onto_opencl(reference, tmp_path):
    """Two workers train 2 steps and write a tf.train.Checkpoint (the
    chief's copy in tmp_path); two fresh workers read it onto their OPENCL
    devices and train steps 3 and 4 with the losses of an uninterrupted
    run."""
    first = run_workers("tf", "pthread", steps=2, TEST_SAVE=str(tmp_path))
    for r in first:
        assert r["losses"] == pytest.approx(reference["losses"][:2], rel=1e-5, abs=1e-6)
    assert os.path.exists(str(tmp_path / "ckpt.index"))
    second = run_workers("tf", "pthread", steps=STEPS - 2, TEST_RESTORE=str(tmp_path / "ckpt"),
                         TEST_START_STEP="2")
    for i, r in enumerate(second):
        check_on_opencl(r, f"/job:worker/replica:0/task:{i}/")
        assert r["losses"] == pytest.approx(reference["losses"][2:], rel=1e-5, abs=1e-6), (r, reference)


if __name__ == "__main__":
    if sys.argv[1] == "ps_server":
        ps_server()
    elif sys.argv[1] == "ps_coordinator":
        ps_coordinator(int(sys.argv[2]))
    else:
        child(sys.argv[1], int(sys.argv[2]))
