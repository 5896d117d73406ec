"""One lowered program per partition of a program's calls into kernels (the kernel-fusion paper's step (4)).

`lower(call_graph, blocks, chunk, sizes)` is ONE lift program over the program's inputs holding, for each
block of calls, the fused lowered expression `lift.rules.fused_derivations.fuse` derives from the block's
inlined calls (a block of one call: `lower_unfused`), bound in launch order, so the code generator writes
one `.cl` with every kernel and a manifest that orders them. Fusion decisions are the partitioner's (which
calls share a kernel) and the rules' (how they fuse); a block whose calls the rules cannot merge still
lowers correctly, into more than one kernel (`Implementation.kernels` counts them after generation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from lift.errors import LiftError
from lift.explore import partition as part
from lift.explore.fusion_graph import KernelFusionError, fusion_graph
from lift.ir import patterns as P
from lift.ir.call_graph import CallGraph, Value, result_param
from lift.ir.nodes import Expr, FunCall, Lambda, Param, free_params, substitute
from lift.ir.routine import inline_routines

@dataclass(frozen=True)
class Block:
    """One kernel group: its call ids, the ones whose results leave it (`exports`), its inlined high-level
    expression over the inputs and other blocks' results, and the lowered one with its rule steps."""

    calls: tuple
    exports: tuple
    group: Lambda
    lowered: Lambda
    steps: tuple
    chunk: int


@dataclass(frozen=True)
class Lowered:
    """A program of calls lowered for one partition: `program` over the original inputs, its blocks in
    launch order, and the chunk size and vector width asked for."""

    program: Lambda
    blocks: tuple
    chunk: int
    width: int = 1

    @property
    def partition(self) -> tuple:
        """The blocks' call ids in launch order."""
        return tuple(b.calls for b in self.blocks)

    def derivation(self) -> tuple:
        """JSON data of the derivation: the partition, then each block's rule steps."""
        out = [{"partition": [list(b.calls) for b in self.blocks], "chunk": self.chunk, "width": self.width}]
        for i, b in enumerate(self.blocks):
            out += [{"block": i, "chunk": b.chunk, **_step_json(s)} for s in b.steps]
        return tuple(out)


def lower(call_graph: CallGraph, blocks: Sequence[Iterable[int]], chunk: int,
          sizes: Optional[Mapping[str, int]] = None, width: int = 1) -> Lowered:
    """ONE lowered program computing the program of calls with these blocks of call ids as its kernel
    groups: each block's calls inlined into one expression over the program's inputs and earlier blocks'
    results (returning the results it exports), derived by `fuse` (by `lower_unfused` for a single call)
    with `split-chunk` (the largest power of two up to `chunk` dividing the block's length) and maps of
    scalars over `width`-lane vectors, then bound in a launch order the partition allows
    (`partition.launch_order`); the body returns the outputs in order.
    """
    from lift.rules.fused_derivations import fuse, lower_unfused

    sizes = dict(sizes or {})
    cg = call_graph
    ids = [tuple(sorted(set(int(i) for i in b))) for b in blocks]
    if sorted(i for b in ids for i in b) != list(range(len(cg.nodes))):
        raise KernelFusionError(f"the blocks {ids} do not hold every call of the program exactly once")
    graph = fusion_graph(cg, sizes) if sizes else None
    order = part.launch_order(_dependency_graph(cg), ids)
    if order is None:
        raise KernelFusionError(f"the blocks {ids} cannot be launched in any order: they depend on each other")
    direct: dict = {}
    bound: dict = {}
    done = []
    outputs = set(cg.output_nodes())
    for b in order:
        calls = ids[b]
        inside = set(calls)
        exports = tuple(i for i in calls if i in outputs or any(c not in inside for c in cg.consumers(i)))
        group, externals = _group(cg, calls, exports)
        length = _block_length(graph, calls) if graph is not None else None
        k = _divisor(chunk, length)
        derive = fuse if len(calls) > 1 else lower_unfused
        try:
            derivation = derive(group, k, sizes, width)
            lowered = derivation.replay(group)
        except LiftError as e:
            raise KernelFusionError(f"block {list(calls)} does not lower: {e}") from None
        body = _linked(lowered.body, {p: direct[i] for i, p in externals.items()},
                       {p: bound.setdefault(i, Param(_let_name(cg, i), cg.nodes[i].type)) for i, p in externals.items()})
        parts = body.args if len(exports) > 1 else (body,)
        direct.update(zip(exports, parts))
        done.append(Block(calls, exports, group, lowered, tuple(derivation.steps), k))
    results = [_output(cg, o, direct) for o in cg.outputs]
    body = results[0] if len(results) == 1 else P.Tuple(*results)
    for i in sorted(bound, reverse=True):
        if bound[i] in free_params(body):
            body = FunCall(Lambda((bound[i],), body), (direct[i],))
    return Lowered(Lambda(tuple(cg.inputs), body), tuple(done), chunk, width)


def unfused_blocks(call_graph: CallGraph) -> tuple:
    """One block per call."""
    return tuple((n.id,) for n in call_graph.nodes)


def _dependency_graph(cg: CallGraph) -> part.FusionGraph:
    """The calls as ops reading and writing their results only (for launch orders, no sizes needed)."""
    return part.FusionGraph(tuple(part.Op(str(n.id), None, {f"%{p}": 1 for p in n.producers}, {f"%{n.id}": 1})
                                  for n in cg.nodes))


def _group(cg: CallGraph, calls: tuple, exports: tuple):
    """The block's high-level expression: a lambda over the inputs it reads and the results of other
    blocks it reads (`externals`, by call id), returning its exports (a tuple when several), inlined."""
    inside = set(calls)
    of_call = {n.call: n.id for n in cg.nodes}
    externals: dict = {}

    def cut(e):
        if isinstance(e, FunCall) and e in of_call and of_call[e] not in inside:
            i = of_call[e]
            return externals.setdefault(i, Param(f"r{i}_{cg.nodes[i].name}", cg.nodes[i].type))
        if not isinstance(e, FunCall):
            return e
        args = tuple(cut(a) for a in e.args)
        return e if all(a is b for a, b in zip(args, e.args)) else FunCall(e.f, args)

    results = [cut(cg.nodes[i].call) for i in exports]
    body = results[0] if len(results) == 1 else P.Tuple(*results)
    used = free_params(body)
    params = tuple(p for p in cg.inputs if p in used) + tuple(externals[i] for i in sorted(externals))
    return inline_routines(Lambda(params, body)), externals


def _linked(e: Expr, top: dict, inside: dict) -> Expr:
    """`e` with each parameter of `top` replaced by its value where the generator sees it outside every
    function (the same computation elsewhere is computed once), and by the let-bound parameter of `inside`
    within functions (the generator then computes the value first and passes it in memory)."""
    if isinstance(e, Param):
        return top.get(e, e)
    if isinstance(e, FunCall):
        return FunCall(substitute(e.f, inside), tuple(_linked(a, top, inside) for a in e.args))
    return e


def _output(cg: CallGraph, value: Value, env: dict) -> Expr:
    if value.expr is None:
        s = value.sources[0]
        return env[s] if isinstance(s, int) else next(p for p in cg.inputs if p.name == s)
    return substitute(value.expr, {result_param(i): env[i] for i in value.nodes})


def _let_name(cg: CallGraph, i: int) -> str:
    taken = {p.name for p in cg.inputs}
    name = f"{cg.nodes[i].name}{i}"
    while name in taken:
        name += "_"
    return name


def _block_length(graph: part.FusionGraph, calls: tuple) -> int:
    return graph.ops[calls[0]].space[1]


def _divisor(chunk: int, length: Optional[int]) -> int:
    """The largest power of two at most `chunk` dividing `length` (`chunk` itself when unknown)."""
    if chunk < 1:
        raise KernelFusionError(f"a chunk size is at least 1, got {chunk}")
    if length is None:
        return chunk
    k = 1 << (chunk.bit_length() - 1)
    while k > 1 and length % k:
        k //= 2
    return k


def _step_json(rw) -> dict:
    return {"rule": rw.rule, "at": rw.location, "params": dict(rw.param_dict)}
