"""A user function's one-element array parameter taken as its element: a typed body (`lift.ir.userfun_body`) that
reads parameter `m: [T]1` only as `m[0]` reads the scalar `m: T` instead.

    f(.., m: [T]1, ..) { .. m[0] .. }   →   f'(.., m: T, ..) { .. m .. }

Both compute the same for `m` bound to `[a]` in `f` and to `a` in `f'`. A scalar argument has vectors: `vect-n(f')`
broadcasts it to every lane, where `vect-n(f)` of an array argument is not defined (`lift.rules.vectorize_function`).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace

from lift.errors import LiftTypeError
from lift.ir.userfun_body import Const, Index, Variable
from lift.types.types import Int


def scalar_reads(stmts: tuple, names: frozenset) -> tuple:
    """`stmts` with each read `m[0]` of a parameter `m` in `names` (typed as an array of one) the variable `m` of
    the element's type; `LiftTypeError` where a statement reads such an `m` otherwise (`m[i]`, `len(m)`)."""
    return tuple(_replaced(s, names) for s in stmts)


def _replaced(node, names: frozenset):
    if isinstance(node, tuple):
        return tuple(_replaced(n, names) for n in node)
    if isinstance(node, Index) and isinstance(node.array, Variable) and node.array.name in names:
        if node.index != Const(0, Int):
            raise LiftTypeError(f"parameter {node.array.name} is read at {node.index}, not only as "
                                f"{node.array.name}[0]")
        return Variable(node.array.name, node.type)
    if isinstance(node, Variable) and node.name in names or getattr(node, "array", None) in names:
        raise LiftTypeError(f"parameter {node.name if isinstance(node, Variable) else node.array} is read other than "
                            f"as its element [0]")
    if not is_dataclass(node):
        return node
    return replace(node, **{f.name: _replaced(getattr(node, f.name), names) for f in fields(node) if f.name != "type"})
