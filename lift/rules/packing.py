"""Packing: the blocks of columns of a matrix copied once into contiguous memory (BLAS packing, Goto and van de
Geijn's packed panels of `B`), let-bound.

    map(f)(X)[P in f] → (λt. map(f[P := t])(X))(map(map(map(id)))(P))      P = transpose(map(split-w)(B))
                                                                                              (pack-copy)

A register-blocked matrix product (`lift.rules.macro_rules.register_blocked`) maps, for each block of rows of
`A`, over the blocks of `w` columns of `B`, `transpose(map(split-w)(B))`: block `j` is the `K × w` matrix
`B[k][j·w + c]`, and its fold reads one row of it, `w` adjacent floats, per step, a row of `B` (`N` floats: a
page where `N ≥ 1024`) apart. Copied once into an array of that type, `t[j][k][c]`, block `j` is `K · w`
adjacent floats, which the fold streams (hardware prefetching, one page per `4096 / w` steps). The view is the
same value as its copy (`map(id)` is the identity), so the rewrite is a let-binding, β-reduction read right to
left, as `transpose-copy` (`lift.rules.transposition`); the copy reads `B` once, in a kernel of its own.
`B` is a matrix of scalars reading no parameter bound in the call (the copy is computed outside it).
"""

from __future__ import annotations

from typing import Optional

from lift.ir.nodes import Expr, FunCall, Lambda, free_params
from lift.ir.patterns import AbstractMap, Map, Split, Transpose
from lift.rules.let_floating import let_copied, replaced
from lift.rules.rule import requires, rule
from lift.types.types import ArrayType, ScalarType


def _is_column_blocks(e: Expr) -> bool:
    """Whether `e` is `transpose(map(split-w)(B))`, `B` a matrix of scalars."""
    if not (isinstance(e, FunCall) and isinstance(e.f, Transpose)):
        return False
    inner = e.args[0]
    if not (isinstance(inner, FunCall) and isinstance(inner.f, Map) and isinstance(inner.f.f, Split)):
        return False
    b = inner.args[0].t
    return isinstance(b, ArrayType) and isinstance(b.elem, ArrayType) and isinstance(b.elem.elem, ScalarType)


def column_blocks(call: FunCall) -> Optional[FunCall]:
    """The first blocks of columns `transpose(map(split-w)(B))` in the function of the map call `call` that read no
    parameter bound in the call: the right operand of a register-blocked product, walked once per element."""
    bound = frozenset(p for n in call.subterms() if isinstance(n, Lambda) for p in n.params)
    return next((e for e in call.f.f.subterms() if _is_column_blocks(e) and not free_params(e) & bound), None)


def _packed(call: FunCall) -> tuple:
    blocks = column_blocks(call)
    requires(blocks is not None, "its function walks no blocks of columns, transpose(map(split-w)(B)), of a matrix "
                                 "it does not compute")
    return (blocks,)


@rule("pack-copy", figure="let", heads=AbstractMap, on_functions=False, match=_packed,
      description="the blocks of columns of a matrix that a map's function walks are copied once, each block "
                  "contiguous (packed), let-bound",
      equation="map(f)(X)[P in f] → (λt. map(f[P := t])(X))(map(map(map(id)))(P)), P = transpose(map(split-w)(B))")
def pack_copy(call: FunCall, blocks: FunCall):
    return let_copied(blocks, lambda t: FunCall(replaced(call.f, blocks, t), call.args), rank=3)


RULES = (pack_copy,)
