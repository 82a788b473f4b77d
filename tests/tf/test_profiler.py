"""The profiler plugin (TF_InitProfiler) inside real TensorFlow: a
tf.profiler.experimental trace of a few steps holds an OPENCL plane with
the device's kernel events, with plausible durations, in host time next
to TensorFlow's own events."""
import glob
import os

import numpy as np

from conftest import DEVICE


def _profile(tf, logdir, fn, steps):
    tf.profiler.experimental.start(str(logdir))
    try:
        for _ in range(steps):
            fn()
    finally:
        tf.profiler.experimental.stop()
    found = glob.glob(os.path.join(str(logdir), "plugins", "profile", "*", "*.xplane.pb"))
    assert found, f"no profile written under {logdir}"
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    space = xplane_pb2.XSpace()
    with open(found[0], "rb") as f:
        space.ParseFromString(f.read())
    return space


def _kernel_events(plane):
    names = {k: v.name for k, v in plane.event_metadata.items()}
    for line in plane.lines:
        for ev in line.events:
            yield names.get(ev.metadata_id, "?"), line.timestamp_ns * 1000 + ev.offset_ps, ev.duration_ps


def test_profile_holds_opencl_kernels(tf, tmp_path):
    rng = np.random.default_rng(0)
    with tf.device(DEVICE):
        x = tf.constant(rng.normal(size=(64, 128)).astype(np.float32))
        w = tf.constant(rng.normal(size=(128, 32)).astype(np.float32))

    @tf.function
    def step():
        with tf.device(DEVICE):
            return tf.nn.relu(tf.matmul(x, w) + 1.0)

    step().numpy()  # traced and built before the profile
    steps = 4
    space = _profile(tf, tmp_path, lambda: step().numpy(), steps)
    planes = [p for p in space.planes if p.name.startswith("/device:CUSTOM:")]
    assert planes, f"no OPENCL plane among {[p.name for p in space.planes]}"
    events = list(_kernel_events(planes[0]))
    kernels = [e for e in events if e[0] not in ("MemcpyH2D", "MemcpyD2H", "MemcpyD2D", "Memset")]
    # Each step launches its product and its add and relu (one fused kernel
    # when the graph pass fuses them) at least.
    assert len(kernels) >= 2 * steps, events[:20]
    for name, start_ps, duration_ps in events:
        assert 0 < duration_ps < 10**12, (name, duration_ps)
    # Host time: within the span of TensorFlow's own host events.
    host = [p for p in space.planes if p.name == "/host:CPU"]
    if host and any(line.events for line in host[0].lines):
        host_starts = [line.timestamp_ns for line in host[0].lines if line.events]
        first, last = min(host_starts), max(line.timestamp_ns for line in host[0].lines)
        for _, start_ps, _ in events:
            assert first - 10**9 <= start_ps / 1000 <= last + 60 * 10**9
