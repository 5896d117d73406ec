"""The fusion graph of a program of several routine calls (Filipovič et al., *Optimizing CUDA code by kernel
fusion*, Section 4, step (1)): the data-dependency graph of the calls as `lift.explore.partition` reads it.

`fusion_graph(call_graph, sizes)`: each call becomes an `Op` whose iteration space, traffic, flops and
reduction flag are read off the routine's expression at the call's argument types (`call_shape`), not off
its name (an array that every iteration reads all of, gemv's `x`, and a matrix read by columns are read
whole: the call does not share a kernel with the call producing it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from lift.errors import LiftError
from lift.explore import partition as part
from lift.ir import patterns as P
from lift.ir.call_graph import CallGraph, CallNode
from lift.ir.nodes import Expr, FunCall, Lambda, Param, free_params
from lift.ir.routine import inline_routines
from lift.ir.typecheck import infer
from lift.ir.userfun import UserFun
from lift.opencl_gen.memory import value_bytes
from lift.types.arith import UnboundSize
from lift.types.types import ArrayType, TupleType, Type, is_one_element

REDUCED = "reduced"
_LAYOUT = (P.Join, P.Split, P.Transpose, P.Zip, P.Get, P.Unzip, P.Tuple, P.Id)


class KernelFusionError(LiftError):
    """A program of calls cannot be partitioned or lowered as asked (one line)."""



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
    return not isinstance(t, ArrayType) or (is_one_element(t) and not isinstance(t.elem, ArrayType))


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
        inner = _source(e.args[0])
        return e if inner is None else inner
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
