"""Where to run: Brook's cost model (Buck et al., Section 6), per evaluation.

The device pays the transfer of the inputs not yet on it and of the results, plus its kernels' time; the
host pays numpy's time for the same graph, plus downloading the inputs only on the device. `predict` puts
figures on both for one evaluation: the transfer at the device's measured host-to-device rate, the
kernels by the analytic cost model of `lift explore` (`lift.explore.cost_model`, over the streaming
bandwidth and launch cost measured on the device), and numpy's time from rates measured on this machine
once per process (an element-wise operation, a reduction, a BLAS contraction). The device is chosen where
its total is the smaller. The kernels' and numpy's times depend on the program alone (`model`, computed
once per compiled program); the transfers on where the arrays are now.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lift.arrays.host import is_contraction
from lift.explore import cost_model, cost_walk
from lift.explore.bandwidth import cached, measure_bandwidth
from lift.explore.core_cache import core_cache_bytes
from lift.explore.shared_cache import shared_cache_bytes
from lift.explore.evaluation import TimingPolicy
from lift.explore.tuning_database import default_root
from lift.opencl_gen import runtime

_BANDWIDTH_BYTES = 32 << 20


@dataclass(frozen=True)
class Prediction:
    """Milliseconds on each side of one evaluation (`transfer_ms` + `kernel_ms` against `host_ms`)."""

    transfer_ms: float
    kernel_ms: float
    host_ms: float

    @property
    def device_ms(self) -> float:
        return self.transfer_ms + self.kernel_ms

    @property
    def choice(self) -> str:
        return "device" if self.device_ms < self.host_ms else "host"


@dataclass(frozen=True)
class Model:
    """What a prediction needs of a structure on a device, whatever its arrays' residency: its kernels' time
    by lift explore's cost model and numpy's time (`host_ms`), in ms."""

    kernel_ms: float
    host_ms: float


def model(st, generated, device) -> Model:
    """The `Model` of the structure `st` computed by the program `generated` on `device` (its caller keeps
    it with the compiled program: an evaluation on device arrays pays for no model)."""
    try:
        kernel_ms = cost_model.predict(cost_walk.profile(generated), _device_rates(device)["model"])
    except ValueError:
        kernel_ms = math.inf
    return Model(kernel_ms, host_ms([n for n in st.nodes if n.op != "input"]))


def predict(st, targets, m: Model, device) -> Prediction:
    """The prediction for computing `targets` from the inputs of their graph's structure `st`, modelled by `m`:
    the device uploads the inputs only on the host and downloads the results; the host downloads the inputs
    only on the device."""
    rate = _device_rates(device)["transfer_gbps"]
    to_device = sum(n.nbytes for n in st.inputs if n.on_device is None) + sum(t.nbytes for t in targets)
    to_host = sum(n.nbytes for n in st.inputs if n.value is None)
    return Prediction(to_device / rate * 1e-6, m.kernel_ms, m.host_ms + to_host / rate * 1e-6)


def host_ms(nodes) -> float:
    """numpy's predicted time for these nodes (`lift.arrays.host`): per element of each result, per element
    reduced, per multiply-add of a contraction, at the rates measured on this machine."""
    rates = _host_rates()
    total = 0.0
    for n in nodes:
        if n.op == "reduce" and is_contraction(n):
            total += n.args[0].size * 2 / rates["flops_per_ns"] * 1e-6
        elif n.op == "reduce":
            total += n.args[0].size * rates["reduce_ns"] * n.dtype.itemsize / 4 * 1e-6
        elif n.op in ("map", "shift", "gather", "pad") and not _is_contraction_operand(n, nodes):
            total += n.size * rates["map_ns"] * n.dtype.itemsize / 4 * 1e-6
    return total


def _is_contraction_operand(n, nodes) -> bool:
    return any(m.args and m.args[0] is n and is_contraction(m) for m in nodes)


@lru_cache(maxsize=None)
def _host_rates() -> dict:
    """numpy's speed here: ns per element of a binary operation and of a sum, multiply-adds per ns."""
    a, b = np.ones(1 << 22, np.float32), np.ones(1 << 22, np.float32)
    m = np.ones((384, 384), np.float32)
    return {"map_ns": _best(lambda: np.add(a, b)) / a.size * 1e9,
            "reduce_ns": _best(lambda: np.add.reduce(a)) / a.size * 1e9,
            "flops_per_ns": 2 * 384 ** 3 / _best(lambda: m @ m) * 1e-9}


def _best(f, repeat: int = 3) -> float:
    f()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


@lru_cache(maxsize=None)
def _device_rates(device) -> dict:
    """The device's cost model (bandwidth and launch cost measured once, kept beside the tuning database)
    and its host-to-device copy rate."""
    info = device
    label = f"{runtime.device_label(device)} @ {_BANDWIDTH_BYTES} bytes"
    measure_now = lambda: measure_bandwidth(device, _BANDWIDTH_BYTES, TimingPolicy(max_runs=20, max_s=0.5))
    root = default_root()
    if root is None:
        bandwidth = measure_now()
    else:
        root.mkdir(parents=True, exist_ok=True)
        bandwidth = cached(root / "arrays-bandwidth.json", label, measure_now)
    cl = runtime._cl()
    kind = "gpu" if info.type & cl.device_type.GPU else "cpu"
    model = cost_model.DeviceModel.for_device(kind, info.max_compute_units, bandwidth.gbps, bandwidth.launch_ms,
                                              info.local_mem_size, info.max_work_group_size,
                                              info.preferred_vector_width_float,
                                              shared_cache_bytes(kind, info.global_mem_cache_size,
                                                                 info.max_compute_units),
                                              near_cache_bytes=core_cache_bytes(kind, info.local_mem_size),
                                              copy_gbps=bandwidth.copy_gbps)
    return {"model": model, "transfer_gbps": _transfer_gbps(device)}


def _transfer_gbps(device) -> float:
    cl = runtime._cl()
    ctx, queue = runtime.context_and_queue(device)
    host = np.ones(1 << 22, np.float32)
    buffer = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, host.nbytes)
    seconds = _best(lambda: cl.enqueue_copy(queue, buffer, host, is_blocking=True))
    buffer.release()
    return host.nbytes / seconds * 1e-9
