"""Where the order of an array does not matter: the condition that makes `reorder → reorder-stride` sound.

`reorder` (Table 1) promises that the order of its result does not matter, and rule 4(c) picks an
order. The reference interpreter reads `reorder` as the identity, while `reorder-stride-s` really
permutes, so the rule is only applied where no permutation can show: where the array reaches a
reduction whose operator is associative and commutative (`(T, T) -> T`, the paper's contract for
`reduce`) through steps that keep "some permutation of the intended array":

- maps, `reorder`, `reorder-stride`, `id` and `join` (of permuted rows), and the end of a function
  mapped over rows (each row permuted, then joined);
- a partial reduction `part-red(f, z, m)`, whose results are then *partial sums*: these may only meet
  more `reorder`s and reductions by the same `f` and `z` before a full reduction.
"""

from __future__ import annotations

from typing import Optional

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, FunDecl, Lambda
from lift.ir.opencl_patterns import AddressSpaceCast, ReorderStride
from lift.rules.location import Context


def order_is_irrelevant(ctx: Context) -> bool:
    """Whether permuting the value computed at `ctx` (a call, or the function there) keeps the program's result."""
    depth = 0
    if ctx.is_function:
        exit_ = ctx.function_exit()
        if exit_ is None:
            return False
        ctx, depth = exit_
    return _reaches_reduction(ctx, depth, None)


def _reaches_reduction(ctx: Context, depth: int, partial_of: Optional[P.PartRed]) -> bool:
    """Follow the consumers of a permuted value (or of the partial results of `partial_of`) at `depth`."""
    while True:
        parent = ctx.parent
        if isinstance(parent.node, Lambda):
            exit_ = parent.function_exit()
            if exit_ is None:
                return False
            ctx, extra = exit_
            depth += extra
            continue
        if not (isinstance(parent.node, FunCall) and len(parent.node.args) == 1):
            return False
        ctx, f = parent, _uncast(parent.node.f)
        if isinstance(f, (P.Reorder, ReorderStride, P.Id)):
            continue
        if isinstance(f, P.Join) and depth > 0:
            depth -= 1
            continue
        if depth > 0:
            return False
        if isinstance(f, (P.Join, P.AbstractMap)) and partial_of is None:
            continue
        if not (isinstance(f, P.AbstractReduce) and _is_monoid(parent.node)):
            return False
        if partial_of is not None and (f.f, f.init) != (partial_of.f, partial_of.init):
            return False
        if not (isinstance(f, P.PartRed) and f.m != 1):
            return True
        partial_of = f


def _uncast(f: FunDecl) -> FunDecl:
    while isinstance(f, AddressSpaceCast):
        f = f.f
    return f


def _is_monoid(call: FunCall) -> bool:
    """Whether a typed reduction call has an operator of type `(T, T) -> T`."""
    return call.args[0].t.elem == _uncast(call.f).init.t
