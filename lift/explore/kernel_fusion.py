"""Kernel fusion of programs of several routine calls: their fusion graph, one lowered program per
partition of the calls into kernels, the implementations to search, and the fusion paper's Table 4.

Filipovič et al. (*Optimizing CUDA code by kernel fusion*, Section 4) compile a script of BLAS calls by
(1) reading the data-dependency graph of the calls, (2) enumerating the fusions that are legal (one
thread-to-data mapping per kernel, no global barrier inside one), (3) predicting each implementation's
time and (4) generating the best predicted one, reporting how many implementations there are, where the
fastest measured ranks in the predicted order and how good the first choice is (their Table 4). Here:

- `fusion_graph(call_graph, sizes)` is step (1) for `lift.explore.partition`: each call becomes an `Op`
  whose iteration space, traffic, flops and reduction flag are read off the routine's expression at the
  call's argument types (`call_shape`), not off its name (an array that every iteration reads all of,
  gemv's `x`, and a matrix read by columns are read whole: the call does not share a kernel with the
  call producing it);
- `lower(call_graph, blocks, chunk, sizes)` is step (4): ONE lift program over the program's inputs
  holding, for each block of calls, the fused lowered expression `lift.rules.fused_derivations.fuse`
  derives from the block's inlined calls (a block of one call: `lower_unfused`), bound in launch order,
  so the code generator writes one `.cl` with every kernel and a manifest that orders them;
- `implementations` lists the legal partitions times the chunk sizes, fastest predicted first
  (`partition.predict`, the DP of `partition.optimal_partition` marked), `SequenceSearch` offers them to
  `lift explore` as `Candidate`s, and `table4` measures them as the paper's Table 4 does.

Fusion decisions are the partitioner's (which calls share a kernel) and the rules' (how they fuse); a
block whose calls the rules cannot merge still lowers correctly, into more than one kernel
(`Implementation.kernels` counts them after generation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping, Optional, Sequence

from lift.errors import LiftError
from lift.explore import partition as part
from lift.explore import partition_search as search
from lift.explore.candidate import Candidate
from lift.explore.cost_model import DeviceModel
from lift.ir import patterns as P
from lift.ir.call_graph import CallGraph, CallNode, Value, result_param
from lift.ir.nodes import Expr, FunCall, Lambda, Param, free_params, substitute
from lift.ir.routine import inline_routines
from lift.ir.typecheck import infer
from lift.ir.userfun import UserFun
from lift.opencl_gen.memory import value_bytes
from lift.types.arith import UnboundSize
from lift.types.types import ArrayType, TupleType, Type

REDUCED = "reduced"
_LAYOUT = (P.Join, P.Split, P.Transpose, P.Zip, P.Get, P.Unzip, P.Tuple, P.Id)


class KernelFusionError(LiftError):
    """A program of calls cannot be partitioned or lowered as asked (one line)."""


# --- (1) the fusion graph ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallShape:
    """What one call does, read off its routine's expression: its iteration space (`("vector", n)` for a
    map over the elements of a vector, `("rows", m, n)` for a map over the `m` rows of an `m × n`
    matrix), whether its result reduces that space away (a full reduction: dot's `Float[1]`, gemvt's sum
    over rows), its user-function applications (flops), and the positions of the arguments every iteration
    reads all of (`whole`)."""

    space: tuple
    reduction: bool
    flops: float
    whole: tuple = ()


def call_shape(node: CallNode, sizes: Mapping[str, int]) -> CallShape:
    """The shape of a call (see `CallShape`): its routine's body applied to parameters of the arguments'
    types, searched for the map or reduction nearest the arguments (the one defining the thread-to-data
    mapping, fusion paper 3.2.1), whose iteration dimension is then followed to the result."""
    params = tuple(Param(f"arg{i}", _bound(a.t, sizes)) for i, a in enumerate(node.call.args))
    lam = infer(Lambda(params, inline_routines(FunCall(node.routine, params)))).expr
    source = _source(lam.body)
    if source is None:
        raise KernelFusionError(f"call {node}: its routine maps or reduces no array argument")
    xs = source.args[0]
    if isinstance(source.f, P.AbstractMap) and _is_transposed(xs):
        columns = xs.t
        space = ("rows", _int(columns.elem.length), _int(columns.length))
        columns_of = tuple(i for i, p in enumerate(params) if p in free_params(xs))
        return CallShape(space, _is_scalar(source.t.elem), _flops(lam.body, 1.0),
                         tuple(sorted(set(columns_of) | set(_read_whole(source, params)))))
    rows = _row_length(xs.t.elem)
    space = ("vector", _int(xs.t.length)) if rows is None else ("rows", _int(xs.t.length), rows)
    return CallShape(space, _depth(lam.body, source, {}) == REDUCED, _flops(lam.body, 1.0), _read_whole(source, params))


def _read_whole(source: FunCall, params: tuple) -> tuple:
    """The positions of the array arguments that every iteration of `source` reads all of: those free in
    its function (gemv's `x` in `map(λrow. dot(row, x))(A)`), not reached through the iterated element."""
    free = free_params(source.f)
    return tuple(i for i, p in enumerate(params) if p in free and isinstance(p.t, ArrayType))


def _is_transposed(xs: Expr) -> bool:
    """Whether a map's input is the columns of a matrix (`transpose(A)`): it then iterates over the rows
    of `A` too, and a function reducing each column is a reduction over those rows."""
    return isinstance(xs, FunCall) and isinstance(xs.f, P.Transpose)


def _is_scalar(t: Type) -> bool:
    return not isinstance(t, ArrayType) or (not isinstance(t.elem, ArrayType) and t.length.is_constant and t.length.value == 1)


def fusion_graph(call_graph: CallGraph, sizes: Mapping[str, int]) -> part.FusionGraph:
    """The `partition.FusionGraph` of a program's calls at bound `sizes`: op `op_name(node)` per call, in
    the call graph's topological order, reading its argument arrays (program inputs by name, call results
    as `%i`) and writing `%i`, with the bytes of their types; the outputs are the results returned."""
    ops = []
    for node in call_graph.nodes:
        shape = call_shape(node, sizes)
        reads, whole = {}, set()
        for k, value in enumerate(node.args):
            for s in value.sources:
                t = call_graph.nodes[s].type if isinstance(s, int) else _input_type(call_graph, s)
                if isinstance(t, ArrayType):
                    reads[_array_name(s)] = _value_bytes(t, sizes)
                    if k in shape.whole:
                        whole.add(_array_name(s))
        ops.append(part.Op(op_name(node), shape.space, reads, {_array_name(node.id): _value_bytes(node.type, sizes)},
                           shape.flops, shape.reduction, whole=frozenset(whole)))
    return part.FusionGraph(tuple(ops), frozenset(_array_name(i) for i in call_graph.output_nodes()))


def op_name(node: CallNode) -> str:
    """An op's name: its routine and call id, `axpy%0`."""
    return f"{node.name}%{node.id}"


def _array_name(source) -> str:
    return f"%{source}" if isinstance(source, int) else source


def _input_type(cg: CallGraph, name: str) -> Type:
    return next(p.t for p in cg.inputs if p.name == name)


def _source(e: Expr) -> Optional[FunCall]:
    """The map or reduction nearest the parameters along the arguments of `e` (through layout patterns)."""
    if not isinstance(e, FunCall):
        return None
    if isinstance(e.f, (P.AbstractMap, P.AbstractReduce)):
        return _source(e.args[0]) or e
    if isinstance(e.f, _LAYOUT):
        return next((s for s in map(_source, e.args) if s is not None), None)
    return None


def _row_length(elem: Type) -> Optional[int]:
    """The length of the first array among an element's components (a row), None for scalar elements."""
    if isinstance(elem, ArrayType):
        return _int(elem.length)
    if isinstance(elem, TupleType):
        return next((r for r in map(_row_length, elem.elems) if r is not None), None)
    return None


def _depth(e: Expr, source: FunCall, env: dict):
    """Where the source's iteration dimension is in the value of `e`: an array depth (0 outermost),
    `REDUCED` when a reduction combined it away, None when `e` does not carry it."""
    if e is source or e == source:
        return REDUCED if isinstance(source.f, P.AbstractReduce) else 0
    if isinstance(e, Param):
        return env.get(e.name)
    if not isinstance(e, FunCall):
        return None
    found = [d for d in (_depth(a, source, env) for a in e.args) if d is not None]
    if not found:
        return None
    d = found[0]
    if d == REDUCED:
        return REDUCED
    f = e.f
    if isinstance(f, P.Join):
        return max(d - 1, 0)
    if isinstance(f, P.Split):
        return d if d == 0 else d + 1
    if isinstance(f, P.Transpose):
        return {0: 1, 1: 0}.get(d, d)
    if isinstance(f, P.AbstractMap):
        if d == 0:
            return 0
        inner = _applied_depth(f.f, d - 1, source)
        return REDUCED if inner == REDUCED else None if inner is None else inner + 1
    if isinstance(f, P.AbstractReduce):
        return REDUCED
    if isinstance(f, Lambda):
        return _depth(f.body, source, {**env, **{p.name: _depth(a, source, env) for p, a in zip(f.params, e.args)}})
    return d


def _applied_depth(f, d: int, source: FunCall):
    """The depth of the iteration dimension in `f(x)` where it is at depth `d` in `x`."""
    x = Param("x_depth", None)
    if isinstance(f, Lambda) and len(f.params) == 1:
        return _depth(f.body, source, {f.params[0].name: d})
    return _depth(FunCall(f, (x,)), source, {x.name: d})


def _flops(e, times: float) -> float:
    """The floating-point operations of `e`: its user functions' (`UserFun.flops`), each counted as often as
    its maps and reductions run it."""
    if not isinstance(e, FunCall):
        return 0.0
    total = sum(_flops(a, times) for a in e.args)
    f = e.f
    n = _int(e.args[0].t.length) if e.args and isinstance(e.args[0].t, ArrayType) else 1
    if isinstance(f, UserFun):
        return total + times * f.flops
    if isinstance(f, (P.AbstractMap, P.Fold)):
        return total + _function_flops(f.f, times * n)
    if isinstance(f, Lambda):
        return total + _flops(f.body, times)
    return total


def _function_flops(f, times: float) -> float:
    if isinstance(f, UserFun):
        return times * f.flops
    if isinstance(f, Lambda):
        return _flops(f.body, times)
    if isinstance(f, (P.AbstractMap, P.Fold)):
        return _function_flops(f.f, times)
    return 0.0


def _bound(t: Type, sizes: Mapping[str, int]) -> Type:
    if isinstance(t, ArrayType):
        return ArrayType(_bound(t.elem, sizes), t.length.substitute(dict(sizes)))
    return t


def _int(length) -> int:
    try:
        return int(length.value)
    except (AttributeError, TypeError, ValueError):
        raise KernelFusionError(f"the length {length} is not bound: give every size (--size)") from None


def _value_bytes(t: Type, sizes: Mapping[str, int]) -> int:
    try:
        return value_bytes(t, sizes)
    except UnboundSize as e:
        raise KernelFusionError(f"{e}: give every size (--size)") from None


# --- (4) one lowered program per partition ----------------------------------------------------------------


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


# --- (2, 3) implementations, search, Table 4 --------------------------------------------------------------


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
    chunk and width as parameters and the partition then each block's rule steps as its derivation."""

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


@dataclass(frozen=True)
class Table4Row:
    """The fusion paper's Table 4 for one sequence: how many implementations, the rank (in predicted
    order, from 1) of the fastest measured, the first choice's quality (fastest time / first choice's
    time) and the worst's (fastest / slowest measured), and the measured times of the DP's choice,
    fuse-all-legal and fuse-nothing (ms; None when not measured)."""

    sequence: str
    implementations: int
    measured: int
    best_rank: int
    first_quality: float
    worst: float
    dp_ms: Optional[float]
    fuse_all_ms: Optional[float]
    fuse_nothing_ms: Optional[float]
    times: tuple = ()


def table4(name: str, call_graph: CallGraph, sizes: Mapping[str, int],
           measure: Callable[[Sequence[Lowered]], Sequence[Optional[float]]], budget: int,
           chunks: Sequence[int] = (64,), limits: part.DeviceLimits = part.DeviceLimits(),
           model: part.FusionCostModel = part.FusionCostModel(), widths: Sequence[int] = (1,)) -> Table4Row:
    """Measure the first `budget` implementations that lower, in predicted order, and the first that lowers
    of each of the DP's, fuse-all-legal's and fuse-nothing's partitions if none is among them, with
    `measure` (the lowered programs, all at once so that it may time them interleaved, to their ms after
    checking their outputs, None for one that fails), and summarise them as Table 4 does."""
    impls = implementations(call_graph, sizes, chunks, limits, model, widths)
    lowered: dict = {}

    def lower(i: int) -> None:
        try:
            lowered[i] = impls[i].lower(call_graph, sizes)
        except KernelFusionError:  # a chunk that does not divide a width's vectors: not an implementation here
            pass

    for i in range(len(impls)):
        if len(lowered) == budget:
            break
        lower(i)
    for role in (DP, FUSE_ALL, FUSE_NOTHING):
        for i, im in enumerate(impls):
            if any(role in impls[j].roles for j in lowered):
                break
            if role in im.roles:
                lower(i)
    chosen = sorted(lowered)
    measured = measure([lowered[i] for i in chosen])
    times = {i: t for i, t in zip(chosen, measured) if t is not None and math.isfinite(t)}
    if not times:
        raise KernelFusionError(f"{name}: no implementation ran")
    fastest = min(times, key=times.get)
    first = min(times)

    def role(r):
        return next((times[i] for i in sorted(times) if r in impls[i].roles), None)

    return Table4Row(name, len(impls), len(times), fastest + 1, times[fastest] / times[first],
                     times[fastest] / max(times.values()), role(DP), role(FUSE_ALL), role(FUSE_NOTHING),
                     tuple((impls[i].label(call_graph), impls[i].predicted_ms, times[i]) for i in sorted(times)))
