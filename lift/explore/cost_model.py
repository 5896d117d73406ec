"""An analytic cost model: a candidate's predicted time on a device, to order candidates before they run.

After Brook's cost model (a kernel's time is its memory traffic over the bandwidth, plus a fixed cost
per pass) and the kernel-fusion paper's prediction (Section 4.2: transfers and computation are
timed separately and overlap fully, so a kernel takes the longer of the two). What each kernel does, independent
of the device, is its profile (`lift.explore.cost_walk`: memory traffic, operations, parallelism, local memory);
`predict` turns a profile into milliseconds for a `DeviceModel`: per kernel, the launch cost plus the longer of the
memory time (traffic over the streaming bandwidth) and the compute time (operations, local traffic, work-item
scheduling and the start of each work-group over the compute units), the compute time stretched when the kernel
occupies only part of the device, and on a GPU the memory time too; a CPU core's loads run ahead of its arithmetic,
as far as its prefetcher follows each stream through memory: its memory time is over the bandwidth or what the
streams of its busy cores draw, if less (`lift.explore.cache_levels.memory_gbps`: dot's 8M-element sum of products
on one work-item, vectorised, two streams, reads its 64 MB at 11 GB/s of two cores' 16.5; gemv's work-items of one
row each, one stream, 12 GB/s on both cores), and a walk down more rows of a matrix than the prefetcher follows reads
each line at memory's latency (`ROW_LINE_NS`). The compute units are those of an idle device: on a host busy with
other work a kernel finds about one free core whatever its groups (MD's neighbour list in chunks of 256 or 512
atoms, 48 or 24 work-items that PoCL runs as one group on one of two cores, measures 1.5-2.2x its versions of a
group per work-item at loads 1.3-1.9, N-body's 16 and 32 work-items 1.7-1.9x, but about the same at loads 3 to 8); a
search's winner is kept for the idle device. Kernels that cannot run (too much local memory, too large a work-group)
are predicted to take forever. `lift.explore.rank_correlation.spearman` measures how well predictions rank
measurements; `python -m benchmarks.bench_cost_model` measures it per program.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

from lift.explore.cache_levels import (gathered_lines, memory_gbps, near_reads, overlaps, rereads, spills,
                                       stride_bytes)
from lift.explore.cost_walk import KernelProfile
from lift.explore.driver_group_size import driver_group_size

AUTO_VECTOR_LANES = 8
"""The most lanes of the vectors a CPU's OpenCL compiler packs scalar code into (`DeviceModel.auto_width`): LLVM
prefers 256-bit vectors on an AVX-512 core and keeps 512-bit ones for the explicit vector types, so that on this
Xeon, whose PoCL reports 16 native float lanes, the loop over a group's work-items, a rolled loop and the copies of an
unrolled one (SLP) compile to 8-lane `ymm` operations and only `float16` to `zmm` ones (the kernels' objects in
PoCL's cache, disassembled)."""


NEAR_GBPS = 80.0
"""What a CPU core draws from its own cache (L2) while it issues other operations (`DeviceModel.near_gbps`,
`lift.explore.cache_levels.near_reads`): on the 2-core Xeon, `float16` loads from a 256 KB-1.5 MB array, eight
independent sums, took 0.36-0.49 ns each aligned and 0.63-0.78 ns unaligned (82-180 GB/s), against 0.24-0.33 ns from a
16 KB one; a stencil's window loads are unaligned. A 512² 5-point Jacobi's 25 candidates, whose loads from its 1 MB grid
decide among them (column strips load each row once, rows of windows three times), ranked +0.42 without it, +0.71 with
it; a load issues alongside arithmetic, so a matrix product's loads of `B` from L2 hide behind its multiply-adds."""


@dataclass(frozen=True)
class DeviceModel:
    """A device as the model sees it: measured or queried facts, and per-kind constants.

    `lanes` is how many work-items a compute unit runs at once (one on a CPU core); `op_ns` the time
    of one operation (an arithmetic operation of a user function, a load or a store) on a compute unit with all
    its lanes busy, issued among independent ones (`lift.explore.userfun_cost`; 0.17 ns on a core of this
    machine's EPYC: two a cycle); `latency_ns` the time of one on a chain of dependent ones (an add or a
    multiply-add waiting for the previous one: 1.0-1.4 ns measured there), which a GPU hides behind other
    work-items; `work_item_ns` the cost of scheduling one work-item between two barriers (a loop iteration
    on a CPU, free on a GPU); `group_ns` the cost of starting one work-group (a CPU driver takes it from a queue
    and calls the group's function; a GPU's hardware does); `local_gbps` a compute unit's local-memory
    bandwidth; `cache_bytes` the size of the cache in front of global memory (`CL_DEVICE_GLOBAL_MEM_CACHE_SIZE`, a
    virtual machine's share of it: `lift.explore.shared_cache`; 0: none known), `cache_line_bytes` the size of its
    lines (`CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE`); `near_cache_bytes` the size of a compute unit's own cache, nearer
    than that one (0: none known; a CPU core's L2, 512 KB on this machine's EPYC, whose L3 is the 32 MB global cache:
    `lift.explore.core_cache`); `stream_gbps` what one sequential stream through memory brings a compute unit (0: no
    limit known; a CPU core's prefetcher follows each stream a bounded distance ahead: 5.5-7 GB/s measured on this
    EPYC, 14-15 GB/s on the 2-core Xeon guest, `lift.explore.cache_levels.memory_gbps`); `near_gbps` what a compute
    unit draws from its own cache while it issues other operations (0: not known; `NEAR_GBPS` on a CPU core);
    `copy_gbps` the streaming copy's rate (bytes read and written; 0: not known), by which a written byte costs more
    than a read one (`write_ns`).
    """

    compute_units: int
    bandwidth_gbps: float
    launch_ms: float
    local_mem_bytes: int
    max_work_group_size: int
    vector_width: int
    lanes: int
    op_ns: float
    work_item_ns: float
    group_ns: float
    local_gbps: float
    latency_ns: float = 0.0
    cache_bytes: int = 0
    cache_line_bytes: int = 64
    near_cache_bytes: int = 0
    stream_gbps: float = 0.0
    copy_gbps: float = 0.0
    near_gbps: float = 0.0

    @property
    def auto_width(self) -> int:
        """The lanes of the vectors a compiler packs scalar code into (vectorised loops, a group's work-items, the
        copies of an unrolled loop): the native vector's, at most `AUTO_VECTOR_LANES`."""
        return min(self.vector_width, AUTO_VECTOR_LANES)

    @classmethod
    def for_device(cls, kind: str, compute_units: int, bandwidth_gbps: float, launch_ms: float,
                   local_mem_bytes: int, max_work_group_size: int, vector_width: int,
                   cache_bytes: int = 0, cache_line_bytes: int = 64,
                   near_cache_bytes: Optional[int] = None, copy_gbps: float = 0.0) -> "DeviceModel":
        """The model of a `kind` ("cpu" or "gpu") device with these facts and that kind's constants; where
        `near_cache_bytes` is not given (facts saved before it was gathered), a CPU's is its local memory (PoCL's is
        its core's L2), a GPU's none."""
        constants = dict(lanes=1, op_ns=0.17, latency_ns=1.2, work_item_ns=2.0, group_ns=50.0,
                         local_gbps=50.0, stream_gbps=6.0, near_gbps=NEAR_GBPS) if kind == "cpu" else \
            dict(lanes=64, op_ns=0.01, work_item_ns=0.0, group_ns=0.0, local_gbps=200.0)
        return cls(compute_units, bandwidth_gbps, launch_ms, local_mem_bytes, max_work_group_size,
                   max(vector_width, 1), **constants, cache_bytes=cache_bytes, cache_line_bytes=cache_line_bytes,
                   near_cache_bytes=near_cache_bytes if near_cache_bytes is not None else
                   local_mem_bytes if kind == "cpu" else 0, copy_gbps=copy_gbps)

    @property
    def write_ns(self) -> float:
        """What a byte written to global memory costs beyond a byte read (ns): a copy of `n` bytes reads and writes
        them in `2n / copy_gbps`, of which reading takes `n / bandwidth_gbps` (the read rate, the faster), so a
        written byte takes `2 / copy_gbps - 1 / bandwidth_gbps`, `2 / copy_gbps - 2 / bandwidth_gbps` more than a
        read one. On the 2-core Xeon over a 2 MB problem the copy runs at 26-35 GB/s and the read at 42-57: a 2-D
        stencil, which writes as much as it reads, takes 1.6-2x what its bytes at the read rate would."""
        if not self.copy_gbps:
            return 0.0
        return max(0.0, 2 / self.copy_gbps - 2 / self.bandwidth_gbps)


def predict(profiles: Sequence[KernelProfile], model: DeviceModel) -> float:
    """The predicted time in milliseconds of kernels with these profiles on `model`'s device."""
    return sum(_kernel_ms(k, model) for k in profiles)


def _kernel_ms(k: KernelProfile, m: DeviceModel) -> float:
    if k.local_mem_bytes > m.local_mem_bytes or (k.group_size or 1) > m.max_work_group_size:
        return math.inf
    group_size = k.group_size or driver_group_size(k.global_sizes or (k.work_items,), m)
    groups = math.ceil(k.work_items / group_size)
    waves = math.ceil(groups / m.compute_units)
    occupancy = groups / (waves * m.compute_units) * min(1.0, group_size / m.lanes)
    unshared = 0.0 if spills(k, m) else 1 - 1 / max(min(k.items_in_row, m.max_work_group_size), 1)
    windows = overlaps(k)
    through_cache, cached = rereads(k, m, unshared, windows)
    gathered, gathered_through_cache = gathered_lines(k, m)
    through_cache += stride_bytes(k, m) + gathered_through_cache
    cpu = m.lanes == 1
    walked_memory, walked_cache = _row_walk_ns(k, m, occupancy * m.compute_units) if cpu else (0.0, 0.0)
    memory_ns = (k.global_bytes + gathered - k.shared_bytes * unshared - cached - sum(windows.values())) \
        / memory_gbps(k, m, occupancy * m.compute_units) + k.written_bytes * m.write_ns + walked_memory
    across = cpu and k.straight_items and group_size >= m.auto_width
    ops = _ops(k.calls + k.accesses, m.vector_width) + _ops(k.slp, m.auto_width) + _ops(k.packed, m.auto_width, cpu) \
        + _ops(k.item_packed, m.auto_width, across)
    scheduled = k.work_items / (m.auto_width if across else 1) + k.barriers * group_size
    issued = max(ops * m.op_ns, near_reads(k, m) / m.near_gbps if m.near_gbps else 0.0)
    compute_ns = (issued + _stalls(k, m) + (k.local_bytes + through_cache) / m.local_gbps + walked_cache
                  + scheduled * m.work_item_ns + groups * m.group_ns) / m.compute_units / occupancy
    return m.launch_ms + max(memory_ns if cpu else memory_ns / occupancy, compute_ns) * 1e-6


ROW_LINE_NS = 5.5
"""What a CPU core takes to read a cache line of a walk over more rows than its prefetcher follows
(`lift.explore.cost_walk.PREFETCH_STREAMS`): 5.1-5.8 ns measured on the 2-core Xeon for walks of 256-1024 rows, against
2.2 for a line streamed at the bandwidth; a walk of all 2048 rows of a 16 MB grid, 2.4-2.9 ms for a 2-D stencil
(0.67 in strips of 8 rows), also misses the TLB, which this leaves out."""


ROW_CACHE_LINE_NS = 2.9
"""`ROW_LINE_NS` for a line the shared cache holds (an array of more than a core's cache, `near_cache_bytes`, and at
most `cache_bytes`): 2.4-2.9 ns a line on a core of the Xeon for walks of 128-512 rows of a 4 MB grid, against 1.8
streamed; a 1 MB grid, in the core's cache, 1.0-2.3."""


def _row_walk_ns(k: KernelProfile, m: DeviceModel, cores: float) -> tuple:
    """The time (ns) the row walks of `k` (`KernelProfile.row_walks`) take beyond their bytes at the bandwidth, and
    beyond them at the cache's: each line of the array they walk brought once from memory at `ROW_LINE_NS` on one of
    `cores` busy cores, and each walk again (a register-blocked product's blocks of rows, each walking the columns of
    `B`) from the shared cache at `ROW_CACHE_LINE_NS` where the array fits in it but not in a core's own (the cores'
    time, as the reads through the cache count, `lift.explore.cache_levels.rereads`), else from memory."""
    line = m.cache_line_bytes
    memory = cache = 0.0
    for array, nbytes in k.row_walks.items():
        size = k.array_bytes.get(array, nbytes)
        first, again = min(nbytes, size), max(nbytes - size, 0.0)
        memory += first
        if not m.near_cache_bytes or size > m.near_cache_bytes:
            if m.cache_bytes and size <= m.cache_bytes:
                cache += again
            else:
                memory += again
    return (memory * max(0.0, ROW_LINE_NS / cores - line / m.bandwidth_gbps) / line,
            cache * max(0.0, ROW_CACHE_LINE_NS - line / m.local_gbps) / line)


def _stalls(k: KernelProfile, m: DeviceModel) -> float:
    """The time (ns) the sequential reductions of `k` (`KernelProfile.chains`) wait on their accumulators beyond
    what their operations take to issue: each step takes at least its chain from the accumulator to the next one
    at `latency_ns` an operation (`lift.explore.userfun_cost`)."""
    return sum(max(0.0, steps * carried * m.latency_ns
                   - (_ops(ops, m.vector_width) + _ops(slp, m.auto_width) + _ops(packed, m.auto_width, True)) * m.op_ns)
               for steps, carried, ops, packed, slp in k.chains)


def _ops(counts: Counter, width: int, packed: bool = False) -> float:
    """Instructions on vectors of `width` lanes for `counts` (operations by lanes): one per vector of each, or,
    `packed` (a vectorised loop, its iterations side by side in the lanes), one per vector of lanes in all."""
    if packed:
        return sum(count * lanes for lanes, count in counts.items()) / width
    return sum(count * math.ceil(lanes / width) for lanes, count in counts.items())
