"""The implementations of a program of calls and the search over them (the kernel-fusion paper's steps (2)
and (3)).

`implementations` lists the legal partitions (`lift.explore.partition_search`) times the chunk sizes and
vector widths, fastest predicted first (`partition.predict`, the DP of `optimal_partition` marked);
`SequenceSearch` offers them to `lift explore` as `Candidate`s. The fusion paper's Table 4, which measures
them, is `benchmarks/bench_kernel_fusion.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping, Optional, Sequence

from lift.errors import LiftError
from lift.explore import partition as part
from lift.explore import partition_search as search
from lift.explore.candidate import Candidate
from lift.explore.fusion_graph import KernelFusionError, fusion_graph, op_name
from lift.explore.fusion_lowering import Lowered, lower
from lift.explore.cost_model import DeviceModel
from lift.ir.call_graph import CallGraph
from lift.ir.nodes import Lambda



@dataclass(frozen=True)
class Implementation:
    """A partition of the calls (blocks of call ids in launch order), a chunk size and a vector width, with
    the partition model's predicted time and whether it is the DP's choice, fuse-all-legal's or
    fuse-nothing's."""

    blocks: tuple
    chunk: int
    predicted_ms: float
    roles: tuple = ()
    width: int = 1

    def partition_label(self, cg: CallGraph) -> str:
        """`{axpy%0, dot%1}`."""
        return " ".join("{" + ", ".join(op_name(cg.nodes[i]) for i in b) + "}" for b in self.blocks)

    def label(self, cg: CallGraph) -> str:
        """`{axpy%0, dot%1} chunk 64 width 4`."""
        return f"{self.partition_label(cg)} chunk {self.chunk} width {self.width}"

    def lower(self, cg: CallGraph, sizes: Mapping[str, int]) -> Lowered:
        return lower(cg, self.blocks, self.chunk, sizes, self.width)


DP, FUSE_ALL, FUSE_NOTHING = "dp", "fuse-all-legal", "fuse-nothing"


def implementations(call_graph: CallGraph, sizes: Mapping[str, int], chunks: Sequence[int] = (64,),
                    limits: part.DeviceLimits = part.DeviceLimits(),
                    model: part.FusionCostModel = part.FusionCostModel(), widths: Sequence[int] = (1,)) -> list:
    """Every legal partition of the calls (`partition.enumerate_partitions`) times every chunk size and
    vector width, fastest predicted first: a partition at width `w` is predicted with `model.at_width(w)`
    (the model does not tell chunk sizes apart: they keep the order given). The DP's choice,
    fuse-all-legal and fuse-nothing are marked in `roles`."""
    graph = fusion_graph(call_graph, sizes)
    marks = {DP: search.optimal_partition(graph, limits, model, window=max(len(graph.ops), 1)),
             FUSE_ALL: search.fuse_all_legal(graph, limits, model), FUSE_NOTHING: search.fuse_nothing(graph, limits, model)}
    out = []
    for p in search.enumerate_partitions(graph, limits, model):
        roles = tuple(r for r, q in marks.items() if q.blocks == p.blocks)
        blocks = tuple(tuple(graph.index[name] for name in k.ops) for k in p.kernels)
        names = [k.ops for k in p.kernels]
        times = {w: part.predict(graph, names, limits, model.at_width(w)).time_ms for w in widths}
        out += [Implementation(blocks, c, times[w], roles, w) for c in chunks for w in widths]
    return sorted(out, key=lambda impl: impl.predicted_ms)


def is_program_of_calls(program: Lambda) -> bool:
    """Whether the program's body calls routines at its top level (a script of calls)."""
    try:
        return bool(CallGraph.of(program).nodes)
    except LiftError:
        return False


@dataclass
class SequenceSearch:
    """Candidates for `lift explore` from a program of calls: its implementations (legal partitions ×
    chunk sizes × vector widths) lowered by `lower`, the predicted best first, each with its partition,
    chunk and width as parameters and the partition then each block's rule steps as its derivation.

    A `lift.explore.search_strategy.SearchStrategy`."""

    program: Lambda
    sizes: Mapping[str, int]
    chunks: Sequence[int] = (16, 64, 256)
    widths: Sequence[int] = (1, 4, 8)
    limits: part.DeviceLimits = part.DeviceLimits()
    model: part.FusionCostModel = part.FusionCostModel()
    failures: list = field(default_factory=list)

    def use_device(self, device: DeviceModel) -> None:
        """Predict with the figures of the device the candidates will run on (the explorer calls this before
        it takes any): its bandwidth, launch cost, native vector width and peak."""
        self.model = part.FusionCostModel.from_device_model(device)

    def __iter__(self) -> Iterator[Candidate]:
        cg = CallGraph.of(self.program)
        for impl in implementations(cg, self.sizes, self.chunks, self.limits, self.model, self.widths):
            try:
                lowered = impl.lower(cg, self.sizes)
            except KernelFusionError as e:
                self.failures.append((impl, str(e)))
                continue
            params = {"partition": impl.partition_label(cg), "chunk": impl.chunk, "width": impl.width,
                      "kernels": len(impl.blocks), "model_ms": round(impl.predicted_ms, 6)}
            if impl.roles:
                params["role"] = ", ".join(impl.roles)
            yield Candidate(lowered.program, lowered.derivation(), params)

    def observe(self, candidate: Candidate, time_ms: Optional[float]) -> None:
        """The order is fixed by the fusion cost model: measured times change nothing."""
