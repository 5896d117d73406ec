"""The price of a user function's body for the cost model (`lift.explore.cost_model`): its operations, by the
lanes they work on, and the length of its dependency chain from one parameter to its result.

An out-of-order core issues the independent operations of a body, and of the applications that follow it, side
by side (two floating-point pipes and more), so that a body costs its operations' issue slots, not the sum of
their latencies: N-body's force of one body on another (seventeen operations, `sqrt` and a division among them)
takes 4.5 ns per pair on one core of this machine's EPYC, where a chain of its operations at an add's latency
(1.2 ns, `dot`'s sequential sum) would take 20. What does not overlap is a reduction's accumulator: each step's
result waits for the previous one, so a sequential reduction takes at least its steps times the chain from the
accumulator to the result (`chain`); `dot`'s steps take an add's latency each, whatever their throughput.

Operations are weighted by the issue slots they hold: an arithmetic operator (on floats or integers), a comparison,
a selection or a cheap math function (`fabs`, `fmin`, ...) one, a division `DIVIDE_OPS` and a `sqrt` `SQRT_OPS`
(the divider is not pipelined: PoCL compiles N-body's `1 / sqrt(...)` to a `vsqrtss` and a `vdivss` that each hold
it several cycles), a transcendental function `MATH_CALL_OPS` (a polynomial after a range reduction, scalar or on a
native vector). An operation on a vector value of `n` lanes counts at width `n` (`operations`), so that one wider
than the device's native vector counts one instruction per native vector, and one on a narrower vector one
instruction for all its lanes. A loop
left rolled in the body (`userfun-loop-unroll` removes them) adds its counting (`LOOP_OPS` an iteration) and its
counters' integer arithmetic, scalar work whatever the lanes.

`array_reads` lists the elements a body reads of its array parameters, and which reads are gathers (at indices
computed from data), for the cost model to price where the arrays live.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Optional

from lift.ir.nodes import FunDecl
from lift.ir.opencl_patterns import Vectorize
from lift.ir.userfun import UserFun
from lift.ir.userfun_body import (MATH_FUNCTIONS, Assign, Binary, Call, For, If, Index, Return, Select, SinCos,
                                  Variable, lanes_scalar, parts, trip_count)
from lift.types.types import ArrayType, Double, Float, Type, VectorType

MATH_CALL_OPS = 80
"""The operations of a call of a transcendental math function (`exp`, `log`, `pow`, `sin`, ...): a call of PoCL's
library function, 14 ns a step of a loop adding `exp`s on one core of this machine (80 issue slots)."""

DIVIDE_OPS = 4
"""The operations of a floating-point division (or `%`): the issue slots it holds the divider."""

SQRT_OPS = 4
"""The operations of a `sqrt`, as a division's."""

CHEAP_CALLS = ("sqrt", "floor", "ceil", "trunc", "fabs", "copysign", "fmin", "fmax")
"""The math functions that are no transcendental call: one instruction each (`sqrt` a slow one)."""

LOOP_OPS = 2
"""The operations of an iteration of a loop left rolled in a user function's body: its counter's increment, and the
comparison and branch that end it (life's 3x3 window summed by two rolled loops, vectorised in 16 lanes, measured
1.12 ms on PoCL, where unrolled it took 0.85: the loop's scalar work does not shrink with the lanes)."""

_CALL_OPS = {name: MATH_CALL_OPS for name in MATH_FUNCTIONS if name not in CHEAP_CALLS} | {"sqrt": SQRT_OPS}
_UNROLL_CAP = 64  # a body loop's iterations walked one by one for its chain; the rest extrapolated


def _body(f: FunDecl) -> Optional[UserFun]:
    """The user function that `f` (or `vectorize-n(f)`) applies, when written in Python (its body parsed)."""
    inner = f.f if isinstance(f, Vectorize) else f
    return inner if isinstance(inner, UserFun) and inner.origin is not None else None


def _lanes(f: FunDecl) -> int:
    return f.n if isinstance(f, Vectorize) else 1


def _weight(node) -> int:
    """The operations of one node itself (not its parts): arithmetic, comparisons, selections and math calls."""
    if isinstance(node, Call) and lanes_scalar(node.type) in (Float, Double):
        return _CALL_OPS.get(node.name, 1)
    if isinstance(node, Binary) and lanes_scalar(node.type) in (Float, Double):
        return DIVIDE_OPS if node.op in ("/", "%") else 1 if node.op in ("+", "-", "*", "**") else 0
    if isinstance(node, Binary):  # on integers, or a comparison, or a logical operator
        return DIVIDE_OPS if node.op in ("/", "%") else 1
    return 1 if isinstance(node, Select) else 0


def operations(f: FunDecl) -> Counter:
    """The operations of one application of the user function `f` (or of `vectorize-n(f)`) by the lanes each works
    on (`{lanes: operations}`; see the module docstring): at least one, of `f`'s lanes, for a function with
    none or with a C body, which is not parsed. A loop left rolled costs `LOOP_OPS` an iteration, and the integer
    arithmetic of its counters (an index `i * 3 + j`) one scalar operation each, whatever the lanes."""
    inner = _body(f)
    counts: Counter = Counter()
    if inner is not None:
        _count_ops(inner.origin.body, 1, _lanes(f), counts, set())
    return counts if sum(counts.values()) else Counter({_lanes(f): 1})


def _count_ops(node, times: int, lanes: int, counts: Counter, uniform: set) -> None:
    if isinstance(node, tuple):
        for n in node:
            _count_ops(n, times, lanes, counts, uniform)
        return
    if isinstance(node, For):  # a loop with symbolic bounds counts as one iteration
        trips = times * (trip_count(node) or 1)
        counts[1] += LOOP_OPS * trips
        _count_ops(node.body, trips, lanes, counts, uniform | {node.var})
        return
    if isinstance(node, Assign):
        _count_ops(node.value, times, lanes, counts, uniform)
        (uniform.add if _uniform(node.value, uniform) else uniform.discard)(node.name)
        return
    if isinstance(node, SinCos):  # one call of the math library for both
        _count_ops(node.angle, times, lanes, counts, uniform)
        width = node.angle.type.width if isinstance(node.angle.type, VectorType) else 1
        counts[1 if _uniform(node.angle, uniform) else lanes * width] += MATH_CALL_OPS * times
        (uniform.update if _uniform(node.angle, uniform) else uniform.difference_update)({node.sin, node.cos})
        return
    own = _weight(node)
    if own and _uniform(node, uniform):
        counts[1] += own * times
    elif own:
        counts[lanes * (node.type.width if isinstance(node.type, VectorType) else 1)] += own * times
    for p in parts(node):
        _count_ops(p, times, lanes, counts, uniform)


def transcendental(f: FunDecl) -> bool:
    """Whether the user function `f` calls a transcendental math function (one a compiler has no vector
    version of to call)."""
    inner = _body(f)
    return inner is not None and _calls(inner.origin.body)


def _calls(node) -> bool:
    if isinstance(node, SinCos) or (isinstance(node, Call) and node.name not in CHEAP_CALLS
                                    and node.name in MATH_FUNCTIONS):
        return True
    return any(_calls(p) for p in (node if isinstance(node, tuple) else parts(node)))


def chain(f: FunDecl, param: int) -> float:
    """The operations on the longest dependency chain from parameter `param` of the user function `f` to its
    result (0 where the result does not depend on it; 1 for a C body, which is not parsed)."""
    inner = _body(f)
    if inner is None:
        return 1.0
    env = {inner.param_names[param]: 0.0}
    returned = _run(inner.origin.body, env)
    return max(returned or 0.0, 0.0)


def _later(*depths) -> Optional[float]:
    """The latest of the depths that depend on the parameter (None where none does)."""
    known = [d for d in depths if d is not None]
    return max(known) if known else None


def _depth(e, env: Mapping) -> Optional[float]:
    """When the value of expression `e` is ready after the parameter is, in operations (None: independent)."""
    if isinstance(e, Variable):
        return env.get(e.name)
    if isinstance(e, tuple):
        return _later(*(_depth(p, env) for p in e))
    inputs = _later(*(_depth(p, env) for p in parts(e)))
    return None if inputs is None else inputs + _weight(e)


def _run(stmts, env: dict) -> Optional[float]:
    """Walk statements, updating `env` (variable -> depth); the latest depth of a value they return."""
    returned = None
    for s in stmts:
        if isinstance(s, Assign):
            env[s.name] = _depth(s.value, env)
        elif isinstance(s, SinCos):
            angle = _depth(s.angle, env)
            env[s.sin] = env[s.cos] = None if angle is None else angle + MATH_CALL_OPS
        elif isinstance(s, Return):
            returned = _later(returned, _depth(s.value, env))
        elif isinstance(s, If):
            cond = _depth(s.cond, env)
            then, other = dict(env), dict(env)
            returned = _later(returned, _run(s.then, then), _run(s.other, other))
            for name, _ in s.merged:
                env[name] = _later(then.get(name), other.get(name), cond)
        elif isinstance(s, For):
            trips = trip_count(s) or 1
            before = dict(env)
            for _ in range(min(trips, _UNROLL_CAP)):
                _run(s.body, env)
            for name, _ in s.merged:
                if trips > _UNROLL_CAP and env.get(name) is not None and before.get(name) is not None:
                    env[name] += (env[name] - before[name]) / _UNROLL_CAP * (trips - _UNROLL_CAP)
    return returned


@dataclass(frozen=True)
class ArrayRead:
    """A read of an element of an array parameter in a user function's body: the parameter, the element's type, the
    loads one read takes (the lanes of a vector index, `particles[nid]` with `nid` an `int8`, times those of
    `vectorize-n`: one load per lane), and whether it is a gather, its index computed from data (`particles[nid]`,
    `x[col]`: any address in the array), or not (constants and loop counters only: a window or row read in order)."""

    param: str
    elem: Type
    loads: int
    gathered: bool


def array_reads(f: FunDecl) -> Counter:
    """The reads of the elements of the array parameters of the user function `f` (or `vectorize-n(f)`) in one
    application, `{ArrayRead: reads}`, as often as the loops around them run (a loop with symbolic bounds counting
    once, a read in a branch as if the branch ran); none for a C body, which is not parsed."""
    inner = _body(f)
    counts: Counter = Counter()
    if inner is not None:
        arrays = {n for n, t in zip(inner.param_names, inner.in_types) if isinstance(t, ArrayType)}
        _reads(inner.origin.body, arrays, set(), 1, _lanes(f), counts)
    return counts


def _uniform(e, uniform: set) -> bool:
    """Whether expression `e` reads only constants and the `uniform` variables (loop counters and what is computed
    from them alone)."""
    if isinstance(e, Variable):
        return e.name in uniform
    if isinstance(e, (Index, Call)):
        return False
    return all(_uniform(p, uniform) for p in (e if isinstance(e, tuple) else parts(e)))


def _reads(node, arrays: set, uniform: set, times: int, lanes: int, counts: Counter) -> None:
    if isinstance(node, tuple):
        for n in node:
            _reads(n, arrays, uniform, times, lanes, counts)
        return
    if isinstance(node, Assign):
        _reads(node.value, arrays, uniform, times, lanes, counts)
        (uniform.add if _uniform(node.value, uniform) else uniform.discard)(node.name)
        return
    if isinstance(node, For):
        _reads((node.start, node.stop), arrays, uniform, times, lanes, counts)
        _reads(node.body, arrays, uniform | {node.var}, times * (trip_count(node) or 1), lanes, counts)
        return
    if isinstance(node, Index):
        root, indices = node, []
        while isinstance(root, Index):
            root, indices = root.array, indices + [root.index]
        _reads(tuple(indices), arrays, uniform, times, lanes, counts)
        if isinstance(root, Variable) and root.name in arrays and not isinstance(node.type, ArrayType):
            loads = lanes
            for i in indices:
                loads *= i.type.width if isinstance(i.type, VectorType) else 1
            counts[ArrayRead(root.name, node.type, loads, not all(_uniform(i, uniform) for i in indices))] += times
        return
    for p in parts(node):
        _reads(p, arrays, uniform, times, lanes, counts)
