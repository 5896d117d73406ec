"""Which calls of a multi-call program share a kernel: legal partitions of a call graph, their predicted
times, and the cheapest one.

The program is an abstract `FusionGraph`: `Op`s (routine calls such as axpy, dot, gemv) in a topological
order, each with its iteration space, the arrays it reads and writes, its flops, whether it is a full
reduction and its on-chip footprint. A kernel is a set of ops; it is legal (kernel-fusion paper, 3.2) when
its ops map threads to data the same way (one iteration space), no op in it consumes a full reduction
computed in it (the global barrier: a reduction fuses with its producers as per-work-group partial results
finished by a small final pass, but its result is only complete after the kernel), it is convex (no path
leaves it and comes back) and it fits the device (`DeviceLimits`). A partition is legal when every kernel
is legal and the kernels can be launched in some order (the quotient graph is acyclic).

A kernel's predicted time (`kernel_time_ms`) is non-linear, after the fusion paper's prediction (4.2):
its global traffic (each input read once however many of its ops read it, intermediates produced and
consumed inside it and not program outputs never touch global memory, each stored array written once)
over the bandwidth and its flops over the peak overlap fully, so it takes the longer of the two,
stretched when its summed on-chip footprint lowers occupancy below what hides memory latency, plus the
launch; a kernel holding reductions adds their final pass. A partition's time is the sum of its kernels'.

The search over partitions (every one, the cheapest, the baselines) is `lift.explore.partition_search`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Dict, FrozenSet, Hashable, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from lift.explore.cost_model import DeviceModel

Arrays = Tuple[Tuple[str, int], ...]


def _arrays(value: Union[Mapping[str, int], Iterable[Tuple[str, int]]]) -> Arrays:
    items = value.items() if isinstance(value, Mapping) else value
    return tuple((str(a), int(b)) for a, b in items)


@dataclass(frozen=True)
class Footprint:
    """What one work-group of a kernel holds on chip: local memory bytes, registers per work-item, and
    the work-group size. A fused kernel holds all its ops' local memory and registers at once (fusion
    paper 3.1: the fusion's on-chip use is at least the sum) and runs the largest work-group."""

    local_bytes: int = 0
    registers: int = 16
    work_group: int = 256

    def __add__(self, other: "Footprint") -> "Footprint":
        return Footprint(self.local_bytes + other.local_bytes, self.registers + other.registers,
                         max(self.work_group, other.work_group))


@dataclass(frozen=True)
class Op:
    """One call: its iteration space (a hashable key such as ("vector", N), ("rows", M) or ("tiles", M, N);
    calls may share a kernel only with the same key), the arrays it reads and writes with their bytes,
    its flops, whether its results are full reductions, its on-chip footprint, and the arrays it reads
    `whole` (gemv's vector, say: each of its iterations needs all of it, so it cannot start before the
    array is complete)."""

    name: str
    space: Hashable
    reads: Arrays
    writes: Arrays
    flops: float = 0.0
    reduction: bool = False
    footprint: Footprint = Footprint()
    whole: FrozenSet[str] = frozenset()

    def __post_init__(self):
        object.__setattr__(self, "reads", _arrays(self.reads))
        object.__setattr__(self, "writes", _arrays(self.writes))
        object.__setattr__(self, "whole", frozenset(self.whole))


@dataclass(frozen=True)
class FusionGraph:
    """Ops in a topological order (every array is written by at most one op, before any op reads it);
    arrays no op writes are the program's inputs; `outputs` are the arrays the program returns."""

    ops: Tuple[Op, ...]
    outputs: FrozenSet[str] = frozenset()

    def __post_init__(self):
        object.__setattr__(self, "ops", tuple(self.ops))
        object.__setattr__(self, "outputs", frozenset(self.outputs))
        names = [op.name for op in self.ops]
        if len(set(names)) != len(names):
            raise ValueError("op names must be unique")
        writer: Dict[str, int] = {}
        for i, op in enumerate(self.ops):
            for a, _ in op.reads:
                if a in writer and writer[a] == i:
                    raise ValueError(f"{op.name} reads {a}, which it writes")
            for a, _ in op.writes:
                if a in writer:
                    raise ValueError(f"{a} is written by both {self.ops[writer[a]].name} and {op.name}")
                writer[a] = i
        for i, op in enumerate(self.ops):
            for a, _ in op.reads:
                if writer.get(a, -1) > i:
                    raise ValueError(f"{op.name} reads {a} before {self.ops[writer[a]].name} writes it: "
                                     "ops must be in a topological order")
        missing = self.outputs - set(writer)
        if missing:
            raise ValueError(f"outputs {sorted(missing)} are written by no op")

    def barrier(self, p: int, i: int) -> bool:
        """Whether op `i` needs all of producer `p`'s results before it starts (a global barrier between
        them, fusion paper 3.2.2): `p` is a full reduction, or `i` reads an array of `p`'s whole."""
        return self.ops[p].reduction or any(a in self.ops[i].whole for a, _ in self.ops[p].writes)

    @cached_property
    def index(self) -> Dict[str, int]:
        """Each op's position in the order, by name."""
        return {op.name: i for i, op in enumerate(self.ops)}

    @cached_property
    def writer(self) -> Dict[str, int]:
        """The op writing each written array."""
        return {a: i for i, op in enumerate(self.ops) for a, _ in op.writes}

    @cached_property
    def readers(self) -> Dict[str, Tuple[int, ...]]:
        """The ops reading each array, in order."""
        found: Dict[str, List[int]] = {}
        for i, op in enumerate(self.ops):
            for a in dict(op.reads):
                found.setdefault(a, []).append(i)
        return {a: tuple(r) for a, r in found.items()}

    @cached_property
    def nbytes(self) -> Dict[str, int]:
        """Each array's size: the largest byte count any op gives it."""
        size: Dict[str, int] = {}
        for op in self.ops:
            for a, b in op.reads + op.writes:
                size[a] = max(size.get(a, 0), b)
        return size

    @cached_property
    def inputs(self) -> FrozenSet[str]:
        """Arrays read and written by no op."""
        return frozenset(self.readers) - frozenset(self.writer)

    @cached_property
    def preds(self) -> Tuple[Tuple[int, ...], ...]:
        """Each op's direct producers."""
        return tuple(tuple(sorted({self.writer[a] for a, _ in op.reads if a in self.writer})) for op in self.ops)

    @cached_property
    def succs(self) -> Tuple[Tuple[int, ...], ...]:
        """Each op's direct consumers."""
        out: List[set] = [set() for _ in self.ops]
        for i, ps in enumerate(self.preds):
            for p in ps:
                out[p].add(i)
        return tuple(tuple(sorted(s)) for s in out)

    @cached_property
    def descendants(self) -> Tuple[int, ...]:
        """Each op's descendants (itself included) as a bit set of positions."""
        desc = [0] * len(self.ops)
        for i in reversed(range(len(self.ops))):
            bits = 1 << i
            for s in self.succs[i]:
                bits |= desc[s]
            desc[i] = bits
        return tuple(desc)


# --- the device -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceLimits:
    """What one work-group may hold (local memory, work-items, registers per work-item) and what one
    compute unit holds at once (for occupancy). The defaults are a recent NVIDIA GPU's."""

    local_mem_bytes: int = 48 * 1024
    max_work_group_size: int = 1024
    max_registers: int = 255
    local_mem_per_unit: int = 100 * 1024
    registers_per_unit: int = 65536
    max_threads_per_unit: int = 2048

    @classmethod
    def from_device_model(cls, m: DeviceModel, **others) -> "DeviceLimits":
        """The limits of `m`'s device: its local memory and work-group size; the rest from `others`."""
        others.setdefault("local_mem_per_unit", max(m.local_mem_bytes, cls.local_mem_per_unit))
        return cls(local_mem_bytes=m.local_mem_bytes, max_work_group_size=m.max_work_group_size, **others)


@dataclass(frozen=True)
class FusionCostModel:
    """Device figures for predicting a kernel's time: streaming bandwidth (GB/s), peak arithmetic (Gflop/s,
    reached by kernels computing on vectors of the device's native `vector_width` lanes), launch cost (ms),
    the occupancy that hides memory latency (below it memory and compute stretch), and how many partial
    results per reduced value a fused reduction leaves for its final pass."""

    bandwidth_gbps: float = 500.0
    peak_gflops: float = 10000.0
    launch_ms: float = 0.005
    hiding_occupancy: float = 0.5
    partials: int = 64
    vector_width: int = 1

    @classmethod
    def from_device_model(cls, m: DeviceModel, **others) -> "FusionCostModel":
        """The figures of the analytic cost model's device: bandwidth, launch, its native vector width and
        the peak its `op_ns` implies (one operation on every lane of a native vector per `op_ns` per
        compute unit)."""
        return cls(bandwidth_gbps=m.bandwidth_gbps, peak_gflops=m.compute_units * m.vector_width / m.op_ns,
                   launch_ms=m.launch_ms, vector_width=m.vector_width, **others)

    def at_width(self, width: int) -> "FusionCostModel":
        """The model of kernels computing on `width`-lane vectors: a narrower one than the device's native
        vector leaves lanes idle, so its peak is `min(width, vector_width) / vector_width` of the device's."""
        lanes = min(max(width, 1), self.vector_width)
        return replace(self, peak_gflops=self.peak_gflops * lanes / self.vector_width)


def occupancy(fp: Footprint, limits: DeviceLimits) -> float:
    """The share of a compute unit's work-item slots a kernel with this footprint fills; 0 when not even
    one work-group fits."""
    if (fp.local_bytes > limits.local_mem_bytes or fp.work_group > limits.max_work_group_size
            or fp.registers > limits.max_registers):
        return 0.0
    groups = limits.max_threads_per_unit // fp.work_group
    if fp.local_bytes:
        groups = min(groups, limits.local_mem_per_unit // fp.local_bytes)
    if fp.registers:
        groups = min(groups, limits.registers_per_unit // (fp.registers * fp.work_group))
    return groups * fp.work_group / limits.max_threads_per_unit


def fits(fp: Footprint, limits: DeviceLimits) -> bool:
    """Whether a kernel with this footprint can run at all."""
    return occupancy(fp, limits) > 0.0


def kernel_time_ms(global_bytes: float, flops: float, fp: Footprint, reduction_bytes: float,
                   limits: DeviceLimits, model: FusionCostModel) -> float:
    """A kernel's predicted time: the launch plus the longer of its memory and compute times (they overlap,
    fusion paper 4.2), stretched by `hiding_occupancy / occupancy` when its footprint leaves too few
    work-items to hide latency. Its reductions (fusion paper 3.2.2) write `partials` partial results per
    reduced value, and one more launch, shared by all of them since they run on the kernel's grid, reads
    those and writes the reduced values. Infinite when it does not fit."""
    occ = occupancy(fp, limits)
    if occ == 0.0:
        return math.inf
    memory = (global_bytes + model.partials * reduction_bytes) / model.bandwidth_gbps
    compute = flops / model.peak_gflops
    t = model.launch_ms + max(memory, compute) * max(1.0, model.hiding_occupancy / occ) * 1e-6
    if reduction_bytes:
        t += model.launch_ms + (model.partials + 1) * reduction_bytes / model.bandwidth_gbps * 1e-6
    return t


# --- kernels and partitions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FusedKernel:
    """One kernel of a partition: its ops (in graph order), its global traffic (reduced values and their
    partials excluded: `reduction_bytes` counts those), flops, footprint and predicted time."""

    ops: Tuple[str, ...]
    space: Hashable
    global_bytes: int
    flops: float
    footprint: Footprint
    reduction_bytes: int
    time_ms: float


@dataclass(frozen=True)
class Partition:
    """Kernels in a launch order, and their total predicted time."""

    kernels: Tuple[FusedKernel, ...]
    time_ms: float = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "time_ms", sum(k.time_ms for k in self.kernels))

    @property
    def blocks(self) -> FrozenSet[FrozenSet[str]]:
        """The kernels as sets of op names, whatever their order."""
        return frozenset(frozenset(k.ops) for k in self.kernels)

    @property
    def global_bytes(self) -> int:
        """Global traffic of all kernels, final reduction passes excluded."""
        return sum(k.global_bytes for k in self.kernels)


def kernel(graph: FusionGraph, members: Iterable[int], limits: DeviceLimits = DeviceLimits(),
           model: FusionCostModel = FusionCostModel()) -> FusedKernel:
    """The kernel running the ops at these positions, and its predicted time (legality not checked)."""
    idx = sorted(set(members))
    inside = set(idx)
    ops = [graph.ops[i] for i in idx]
    written = {a for op in ops for a, _ in op.writes}
    read = {a for op in ops for a, _ in op.reads if a not in written}
    nbytes = 0
    red_bytes = 0
    for op in ops:
        for a, _ in op.writes:
            if op.reduction:
                red_bytes += graph.nbytes[a]
            elif a in graph.outputs or any(r not in inside for r in graph.readers.get(a, ())):
                nbytes += graph.nbytes[a]
    nbytes += sum(graph.nbytes[a] for a in read)
    fp = ops_footprint(ops)
    return FusedKernel(tuple(op.name for op in ops), ops[0].space, nbytes, sum(op.flops for op in ops), fp,
                  red_bytes, kernel_time_ms(nbytes, sum(op.flops for op in ops), fp, red_bytes, limits, model))


def ops_footprint(ops: Sequence[Op]) -> Footprint:
    fp = ops[0].footprint
    for op in ops[1:]:
        fp = fp + op.footprint
    return fp


def why_illegal(graph: FusionGraph, members: Iterable[int], limits: DeviceLimits = DeviceLimits()) -> Optional[str]:
    """Why the ops at these positions cannot share a kernel ("space", "barrier", "convexity", "limits"),
    or None when they can (fusion paper 3.2)."""
    idx = sorted(set(members))
    if not idx:
        return "empty"
    ops = [graph.ops[i] for i in idx]
    if len({op.space for op in ops}) > 1:
        return "space"
    inside = set(idx)
    for i in idx:
        if any(s in inside and graph.barrier(i, s) for s in graph.succs[i]):
            return "barrier"
    bits = sum(1 << i for i in idx)
    below = 0
    for i in idx:
        below |= graph.descendants[i]
    for u in range(idx[0], idx[-1]):
        if u not in inside and below >> u & 1 and graph.descendants[u] & bits:
            return "convexity"
    if not fits(ops_footprint(ops), limits):
        return "limits"
    return None


def legal_kernel(graph: FusionGraph, members: Iterable[int], limits: DeviceLimits = DeviceLimits()) -> bool:
    """Whether the ops at these positions may share a kernel."""
    return why_illegal(graph, members, limits) is None


def launch_order(graph: FusionGraph, blocks: Sequence[Sequence[int]]) -> Optional[List[int]]:
    """An order of the blocks in which each runs after the blocks it reads from, or None when the
    quotient graph has a cycle."""
    of = {i: b for b, members in enumerate(blocks) for i in members}
    after: List[set] = [set() for _ in blocks]
    needs = [0] * len(blocks)
    for b, members in enumerate(blocks):
        for i in members:
            for s in graph.succs[i]:
                c = of[s]
                if c != b and c not in after[b]:
                    after[b].add(c)
                    needs[c] += 1
    ready = [b for b in range(len(blocks)) if needs[b] == 0]
    order = []
    while ready:
        b = min(ready, key=lambda x: min(blocks[x]))
        ready.remove(b)
        order.append(b)
        for c in after[b]:
            needs[c] -= 1
            if needs[c] == 0:
                ready.append(c)
    return order if len(order) == len(blocks) else None


def legal_partition(graph: FusionGraph, blocks: Sequence[Iterable[str]], limits: DeviceLimits = DeviceLimits()) -> bool:
    """Whether these blocks of op names partition the graph's ops into legal, orderable kernels."""
    try:
        idx = _positions(graph, blocks)
    except ValueError:
        return False
    return all(legal_kernel(graph, b, limits) for b in idx) and launch_order(graph, idx) is not None


def _positions(graph: FusionGraph, blocks: Sequence[Iterable[str]]) -> List[List[int]]:
    idx = [sorted(graph.index[name] for name in b) for b in blocks]
    flat = [i for b in idx for i in b]
    if sorted(flat) != list(range(len(graph.ops))):
        raise ValueError("the blocks must hold every op exactly once")
    return idx


def predict(graph: FusionGraph, blocks: Sequence[Iterable[str]], limits: DeviceLimits = DeviceLimits(),
            model: FusionCostModel = FusionCostModel()) -> Partition:
    """The partition with these blocks of op names, its kernels in launch order and their predicted times;
    ValueError when it is not legal."""
    idx = _positions(graph, blocks)
    for b in idx:
        reason = why_illegal(graph, b, limits)
        if reason:
            raise ValueError(f"kernel {[graph.ops[i].name for i in b]} is illegal: {reason}")
    order = launch_order(graph, idx)
    if order is None:
        raise ValueError("the kernels cannot be ordered: their quotient graph has a cycle")
    return Partition(tuple(kernel(graph, idx[b], limits, model) for b in order))


def check_singletons(graph: FusionGraph, limits: DeviceLimits) -> None:
    for op in graph.ops:
        if not fits(op.footprint, limits):
            raise ValueError(f"{op.name} alone does not fit the device: {op.footprint}")
