"""Transposition: which dimension of a matrix the threads walk (beyond the paper's figures).

    map(map(f)) → transpose ∘ map(map(f)) ∘ transpose

A map of maps applies `f` to every element of a matrix independently, so the two loops may be
interchanged: transposing, mapping over the other dimension and transposing back gives the same
matrix. This is the choice behind coalesced matrix code such as gemv (Figure 5): lowered to
`map-global(map-seq(f))`, work-item `i` walks row `i` and neighbouring work-items read addresses a row
apart; after the interchange the outer map runs over columns, so at each step neighbouring work-items
read neighbouring elements of one row. The transpositions are views: the code generator only changes
its index expressions (and `transpose ∘ transpose → id` in `lift.rules.simplification` removes a pair).

    map(f)(X[transpose(A)]) → (λt. map(f)(X[t]))(map(map(id))(transpose(A)))      (transpose-copy)

A map over the columns of a row-major matrix whose function walks each column (a transposed gemv's
`map(λcol. reduce(+)(map(*)(zip(col, y))))(transpose(A))`, the `Bᵀ` of a matrix product `map(λa. map(λb.
dot(a, b))(transpose(B)))(A)`, a covariance's `Xᵀ X`) reads one element per row of `A` at each step: on a CPU
a cache line and a page per element. Let-binding a copy of the transposition (β-reduction read right to left,
as `hoist-invariant`) computes `Aᵀ` once, in a kernel of its own, and the map then walks its rows. Every
occurrence of `transpose(A)` in the call is replaced, in the function too; `A` reads no parameter bound in it.
"""

from __future__ import annotations

from typing import Optional

from lift.ir.nodes import FunCall, Lambda, fresh_param, free_params
from lift.ir.patterns import AbstractMap, AbstractReduce, Id, Map, Transpose, Zip
from lift.rules.let_floating import replaced
from lift.rules.rule import requires, rule
from lift.types.types import ArrayType, ScalarType


@rule("map-interchange", figure="5", description="map over the other dimension of a matrix, between two transpositions",
      equation="map(map(f)) → transpose ∘ map(map(f)) ∘ transpose", heads=Map,
      match=lambda call: requires(isinstance(call.f.f, Map), "expects a map of maps"))
def map_interchange(call):
    return Transpose()(call.f(Transpose()(*call.args)))


def walked_transposition(call: FunCall, repeatedly: bool = False) -> Optional[FunCall]:
    """The first `transpose(A)` of a matrix of scalars in the map call `call`, `A` reading no parameter bound in
    it, that a map in it walks: its argument (or a component of a zip there), the map's function reducing; with
    `repeatedly`, a map in `call`'s function, which walks `A` once per element of `call` (`Bᵀ` in a product)."""
    bound = frozenset(p for n in nodes(call) if isinstance(n, Lambda) for p in n.params)
    for n in nodes(call.f.f if repeatedly else call):
        if isinstance(n, FunCall) and isinstance(n.f, AbstractMap) and _reduces(n.f.f):
            arg = n.args[0]
            for t in (arg.args if isinstance(arg, FunCall) and isinstance(arg.f, Zip) else (arg,)):
                if (isinstance(t, FunCall) and isinstance(t.f, Transpose) and not free_params(t) & bound
                        and isinstance(t.t, ArrayType) and isinstance(t.t.elem, ArrayType)
                        and isinstance(t.t.elem.elem, ScalarType)):
                    return t
    return None


def nodes(e):
    """Every node of the expression `e`, `e` first."""
    yield e
    for _, c in e.children():
        yield from nodes(c)


def _reduces(f) -> bool:
    return any(isinstance(n, AbstractReduce) for n in nodes(f))


def _walked(call: FunCall) -> tuple:
    t = walked_transposition(call)
    requires(t is not None, "no map in it walks the columns of a matrix it does not compute")
    return (t,)


@rule("transpose-copy", figure="let", heads=AbstractMap, on_functions=False, match=_walked,
      description="the columns of a matrix that a map walks are the rows of a copy of its transposition, let-bound",
      equation="map(f)(X[transpose(A)]) → (λt. map(f)(X[t]))(map(map(id))(transpose(A)))")
def transpose_copy(call: FunCall, transposed: FunCall):
    t = fresh_param("t")
    return FunCall(Lambda((t,), replaced(call, transposed, t)), (Map(Map(Id()))(transposed),))


RULES = (map_interchange, transpose_copy)
