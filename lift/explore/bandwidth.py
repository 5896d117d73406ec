"""A device's streaming bandwidth, the yardstick of "% of streaming bandwidth" and of the cost model.

`lift explore` measures it over as many bytes as the problem's inputs and output, so that a problem
that fits in the caches is compared with streaming from the caches, and a large one with memory.

Hand-written kernels stream a large buffer: a `float4` copy (bytes read plus bytes written per second)
and a read-reduce (bytes read per second) in two layouts: each work-item sums a strided slice, so
that neighbouring work-items read neighbouring elements (what GPUs coalesce), or a contiguous chunk
(what CPU caches prefetch). The streaming bandwidth is the best of them.
An empty kernel's time gives the fixed cost of a launch. The measurement runs once per device, in the
device worker; `cached` keeps it in the output folder, keyed by the device's label.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from lift.explore.evaluation import TimingPolicy, measure
from lift.files import write_text
from lift.opencl_gen import runtime

SOURCE = """
kernel void copy4(const global float4* restrict in, global float4* restrict out) {
    size_t i = get_global_id(0);
    out[i] = in[i];
}

kernel void read_strided(const global float4* restrict in, global float* restrict out, const int n) {
    float4 acc = (float4)(0.0f);
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        acc += in[i];
    }
    out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}

kernel void read_chunked(const global float4* restrict in, global float* restrict out, const int n) {
    int chunk = n / get_global_size(0);
    float4 acc = (float4)(0.0f);
    for (int i = get_global_id(0) * chunk; i < (get_global_id(0) + 1) * chunk; i += 1) {
        acc += in[i];
    }
    out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}

kernel void empty(global float* out) {
}
"""

MAX_BYTES = 256 << 20


@dataclass(frozen=True)
class StreamingBandwidth:
    """Measured streaming rates in GB/s over a buffer of `nbytes`, and an empty kernel's time in ms."""

    copy_gbps: float
    read_gbps: float
    launch_ms: float
    nbytes: int

    @property
    def gbps(self) -> float:
        return max(self.copy_gbps, self.read_gbps)


def measure_bandwidth(device, nbytes: int = MAX_BYTES, policy: TimingPolicy = TimingPolicy()) -> StreamingBandwidth:
    """Measure `device` (runs in the worker process); the buffer is at most an eighth of global memory."""
    import pyopencl as cl

    items = device.max_compute_units * 1024
    n = max(min(nbytes, device.global_mem_size // 8, device.max_mem_alloc_size // 2) // (16 * items), 1) * items
    nbytes = 16 * n
    ctx, queue = runtime.context_and_queue(device)
    program = runtime.build(SOURCE, device)
    src = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    dst = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(queue, src, np.float32(1), 0, nbytes).wait()
    copy, strided, chunked, empty = (cl.Kernel(program, name)
                                     for name in ("copy4", "read_strided", "read_chunked", "empty"))
    copy.set_args(src, dst)
    strided.set_args(src, dst, np.int32(n))
    chunked.set_args(src, dst, np.int32(n))
    empty.set_args(dst)

    def timed(kernel, size: int) -> Callable[[], tuple]:
        def run() -> tuple:
            event = cl.enqueue_nd_range_kernel(queue, kernel, (size,), None)
            event.wait()
            return ((event.profile.end - event.profile.start) * 1e-6,)
        return run

    copy_ms = measure(timed(copy, n), policy).median_ms
    read_ms = min(measure(timed(strided, items), policy).median_ms, measure(timed(chunked, items), policy).median_ms)
    launch_ms = measure(timed(empty, 1), policy).median_ms
    src.release()
    dst.release()
    return StreamingBandwidth(2 * nbytes / copy_ms * 1e-6, nbytes / read_ms * 1e-6, launch_ms, nbytes)


def cached(path: Path, device_label: str, measure_now: Callable[[], StreamingBandwidth]) -> StreamingBandwidth:
    """The bandwidth of the device labelled `device_label` stored in the JSON file `path`, or measured now and stored."""
    stored = _stored(path)
    if device_label in stored:
        return stored[device_label]
    result = measure_now()
    stored[device_label] = result
    write_text(path, json.dumps({k: asdict(v) for k, v in stored.items()}, indent=2) + "\n")
    return result


def _stored(path: Path) -> dict:
    """The valid measurements of the file `path` by device label; one warning for a file or entry that is not
    one (its rates positive and finite), which is measured again."""
    try:
        data = json.loads(path.read_text()) if path.is_file() else {}
    except (ValueError, UnicodeDecodeError) as e:
        print(f"warning: {path} is not JSON ({e}); measuring again", file=sys.stderr)
        return {}
    stored = {}
    for label, entry in (data.items() if isinstance(data, dict) else [("(the whole file)", data)]):
        try:
            value = StreamingBandwidth(**entry)
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= sys.float_info.max
                       for v in asdict(value).values()):
                raise ValueError("its rates must be finite and positive")
            stored[label] = value
        except (TypeError, ValueError) as e:
            print(f"warning: {path}: the entry of {label} is not a measurement ({e}); skipped", file=sys.stderr)
    return stored
