"""Sine and cosine of one angle computed by one call: a typed body (`lift.ir.userfun_body`) whose statements compute
`sin(a)` and `cos(a)` of the same floating-point expression `a` gets a `SinCos` statement before the first of them,
and reads its two locals instead.

    ... sin(a) ... cos(a) ...   →   s, c = sincos(a); ... s ... c ...

Both mean the same: `a` is an expression (no effects), and the calls it replaces are in the statements from the
`SinCos` on up to the first that assigns a variable `a` reads (that one included: its value is computed before its
assignment), so `a` has the same value in each; OpenCL's `sincos(a, &c)` returns `sin(a)` and stores `cos(a)`
(PoCL's results are bit-identical to the two calls'). A call inside an `if` or a loop pairs with those of its own
block. OpenCL's math library reduces the angle's range and evaluates the polynomials of both in one call: a naive
DFT's loop of `x cos(a)` and `-x sin(a)` took half the time with `sincos` on PoCL (2 cores, best of 7).
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Iterator

from lift.ir.userfun_body import (Assign, Call, For, If, Return, SinCos, Variable, assigned, lanes_scalar, parts)
from lift.types.types import Double, Float


def fused_sincos(stmts: tuple, local_types: dict, taken: set) -> tuple:
    """`(stmts, local_types)` with each pair of `sin(a)` and `cos(a)` a statement block computes fused into a
    `SinCos` (see the module), its locals named apart from `taken` (parameters and locals) and typed."""
    local_types = dict(local_types)
    names = _Names(set(taken) | set(local_types))
    return _block(stmts, local_types, names), local_types


class _Names:
    def __init__(self, taken: set):
        self.taken, self.count = taken, 0

    def fresh(self, stem: str) -> str:
        while f"{stem}{self.count}" in self.taken:
            self.count += 1
        name = f"{stem}{self.count}"
        self.taken.add(name)
        return name


def _block(stmts: tuple, local_types: dict, names: _Names) -> tuple:
    out = [_nested(s, local_types, names) for s in stmts]
    i = 0
    while i < len(out):
        fused = next(_pairs(out, i), None)
        if fused is None:
            i += 1
            continue
        call, last = fused
        angle, t = call.args[0], call.type
        sin, cos = names.fresh("sin_"), names.fresh("cos_")
        local_types[sin] = local_types[cos] = t
        calls = {Call("sin", (angle,), t): Variable(sin, t), Call("cos", (angle,), t): Variable(cos, t)}
        out[i:last + 1] = [SinCos(angle, sin, cos)] + [_replaced(s, calls) for s in out[i:last + 1]]
        i += 1
    return tuple(out)


def _nested(stmt, local_types: dict, names: _Names):
    if isinstance(stmt, If):
        return replace(stmt, then=_block(stmt.then, local_types, names), other=_block(stmt.other, local_types, names))
    if isinstance(stmt, For):
        return replace(stmt, body=_block(stmt.body, local_types, names))
    return stmt


def _pairs(stmts: list, i: int) -> Iterator[tuple]:
    """`(call, last)` for each `sin(a)` or `cos(a)` call that statement `i` makes whose other one statement `last`
    (at or after `i`, before any statement after the first to assign a variable `a` reads) does."""
    for call in _calls(stmts[i]):
        want = {"sin", "cos"} - {call.name}
        reads = _variables(call.args[0])
        for last in range(i, len(stmts)):
            if any(c.args == call.args and c.type == call.type and c.name in want for c in _calls(stmts[last])):
                yield call, last
                break
            if reads & set(assigned((stmts[last],))):
                break


def _calls(stmt) -> list:
    """The `sin` and `cos` calls of a floating-point angle in an assignment or a return statement."""
    if not isinstance(stmt, (Assign, Return)):
        return []
    found: list = []
    _collect(stmt.value, found)
    return found


def _collect(e, found: list) -> None:
    if isinstance(e, Call) and e.name in ("sin", "cos") and lanes_scalar(e.args[0].type) in (Float, Double):
        found.append(e)
    for p in (e if isinstance(e, tuple) else parts(e)):
        _collect(p, found)


def _variables(e) -> set:
    if isinstance(e, Variable):
        return {e.name}
    out: set = set()
    for p in (e if isinstance(e, tuple) else parts(e)):
        out |= _variables(p)
    return out


def _replaced(node, calls: dict):
    """`node` with the calls of `calls` replaced by their variables, in assignments and returns only."""
    if isinstance(node, tuple):
        return tuple(_replaced(n, calls) for n in node)
    if isinstance(node, (If, For, SinCos)) or not hasattr(node, "__dataclass_fields__"):
        return node
    if node in calls:
        return calls[node]
    return replace(node, **{f.name: _replaced(getattr(node, f.name), calls) for f in fields(node) if f.name != "type"})
