"""Unrolling the loops of a user function's typed body (`lift.ir.userfun_body`): a loop of constant trip count
becomes its iterations one after another, the loop variable a constant in each.

    for i in range(a, b, s): body   →   body[i := a]; body[i := a + s]; ...      (a, b constants)

Both mean the same: the iterations run in order, each with its own value of `i` (a loop's variable is never
assigned in its body, `lift.ir.userfun_typing`), and the locals the loop carries are the same variables. In
each copy, Int arithmetic on constants is folded as C folds it (`/` and `%` truncating), and so are comparisons
of Ints and logic on constants; a condition that folds to a constant leaves its taken branch alone. So a window
read as `w[i][j]` is read at constant indices, which lets an OpenCL compiler keep the private window in
registers (indexed by a loop counter, it lives in memory), and `if i != 1 or j != 1` costs nothing.

A loop is unrolled where its copies (their own loops unrolled first, inner loops whose bounds become constants
in a copy too) come to at most `limit` statements (`size`): unrolling trades code size for the loop's
control and its indexed loads, worth it for a stencil's window (3x3, 5x5), not for a long iteration (a
Mandelbrot point's 64 steps of one chain of dependent operations). A loop left rolled still has its inner
loops unrolled where they fit.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Optional

from lift.ir.userfun_body import (Assign, Binary, Const, Convert, For, If, Return, Select, Unary, Variable, assigned,
                                  trip_count)
from lift.ir.userfun_typing import fold
from lift.types.types import Bool, Double, Float, Int

_INT_RANGE = range(-2 ** 31, 2 ** 31)
_COMPARISONS = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__, "==": int.__eq__,
                "!=": int.__ne__}


def unrolled(stmts: tuple, limit: int) -> tuple:
    """`stmts` with every loop of constant trip count whose copies come to at most `limit` statements unrolled
    (see the module)."""
    out: list = []
    for stmt in stmts:
        out.extend(_unrolled_statement(stmt, limit))
    return tuple(out)


def size(stmts: tuple) -> int:
    """The statements of a typed body, those inside an `if` or a loop included: the measure of unrolled code."""
    total = 0
    for stmt in stmts:
        total += 1
        if isinstance(stmt, If):
            total += size(stmt.then) + size(stmt.other)
        elif isinstance(stmt, For):
            total += size(stmt.body)
    return total


def _unrolled_statement(stmt, limit: int) -> tuple:
    if isinstance(stmt, Assign):
        return (Assign(stmt.name, _folded(stmt.value)),)
    if isinstance(stmt, Return):
        return (Return(_folded(stmt.value)),)
    if isinstance(stmt, If):
        cond = _folded(stmt.cond)
        if isinstance(cond, Const):
            return unrolled(stmt.then if cond.value else stmt.other, limit)
        return (replace(stmt, cond=cond, then=unrolled(stmt.then, limit), other=unrolled(stmt.other, limit)),)
    loop = replace(stmt, start=_folded(stmt.start), stop=_folded(stmt.stop))
    copies = _copies(loop, limit)
    if copies is not None:
        return copies
    body = unrolled(loop.body, limit)
    carried = assigned(body)
    return (replace(loop, body=body, merged=tuple((n, t) for n, t in loop.merged if n in carried)),)


def _copies(loop: For, limit: int) -> Optional[tuple]:
    """The iterations of `loop` one after another, unrolled, where they come to at most `limit` statements."""
    trips = trip_count(loop)
    if trips is None or trips > limit:
        return None
    out: list = []
    for i in range(loop.start.value, loop.stop.value, loop.step):
        out.extend(unrolled(_substituted(loop.body, loop.var, Const(i, Int)), limit))
        if size(tuple(out)) > limit:
            return None
    return tuple(out)


def _substituted(node, name: str, value: Const):
    """`node` (a statement, an expression or a tuple of them) with the variable `name` replaced by `value`."""
    if isinstance(node, tuple):
        return tuple(_substituted(n, name, value) for n in node)
    if isinstance(node, Variable):
        return value if node.name == name else node
    if isinstance(node, (If, For)):
        changed = {f: _substituted(getattr(node, f), name, value) for f in ("cond", "then", "other", "start", "stop",
                                                                          "body") if hasattr(node, f)}
        return replace(node, **changed)
    if not hasattr(node, "__dataclass_fields__"):
        return node
    return replace(node, **{f.name: _substituted(getattr(node, f.name), name, value) for f in fields(node)
                            if f.name != "type"})


def _folded(e):
    """Expression `e` with Int arithmetic and comparisons on constants, logic on constants, conversions of Int
    constants and choices on a constant condition folded; floating-point arithmetic is left to the compiler
    (a Float's rounding is not Python's)."""
    if isinstance(e, tuple):
        return tuple(_folded(x) for x in e)
    if not hasattr(e, "__dataclass_fields__") or isinstance(e, (Const, Variable)):
        return e
    e = replace(e, **{f.name: _folded(getattr(e, f.name)) for f in fields(e) if f.name != "type"})
    if isinstance(e, Binary) and e.op in ("and", "or") and e.type == Bool:
        for known, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(known, Const):
                return known if known.value == (e.op == "or") else other
    if isinstance(e, Binary) and _is_int(e.left) and _is_int(e.right):
        a, b = e.left.value, e.right.value
        if e.op in _COMPARISONS:
            return Const(_COMPARISONS[e.op](a, b), Bool)
        if not (e.op in "/%" and b == 0):
            value = fold(e.op, a, b, Int)
            return Const(value, Int) if value in _INT_RANGE else e
    if isinstance(e, Unary) and e.op == "!" and isinstance(e.operand, Const):
        return Const(not e.operand.value, Bool)
    if isinstance(e, Unary) and e.op == "-" and _is_int(e.operand) and -e.operand.value in _INT_RANGE:
        return Const(-e.operand.value, Int)
    if isinstance(e, Convert) and _is_int(e.operand) and e.type in (Float, Double):
        return Const(float(e.operand.value), e.type)
    if isinstance(e, Select) and isinstance(e.cond, Const):
        return e.then if e.cond.value else e.other
    return e


def _is_int(e) -> bool:
    return isinstance(e, Const) and e.type == Int
