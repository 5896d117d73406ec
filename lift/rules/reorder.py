"""Reordering: commuting with maps (Figure 3(b)), and choosing an order (Figure 4(c)).

    map(f) ∘ reorder → reorder ∘ map(f)
    reorder ∘ map(f) → map(f) ∘ reorder
    reorder          → reorder-stride-s | id

A map applies `f` to each element independently, so it commutes with any permutation. `reorder`
leaves the order to the implementation: `id` keeps it, and `reorder-stride-s` reads
`in[i/n + s*(i mod n)]` so that consecutive work-items read consecutive elements after a split
(coalescing, Figure 9(a)). A real permutation is only chosen where the order provably does not
matter (`lift.rules.order_flow`); `s` is any factor of the length.
"""

from __future__ import annotations

from lift.ir.opencl_patterns import ReorderStride
from lift.ir.patterns import AbstractMap, Id, Reorder
from lift.rules.order_flow import order_is_irrelevant
from lift.rules.rule import Equation, arg_call, requires, rule


class Commutation(Equation):
    """`outer ∘ inner → inner ∘ outer` for a map and `reorder`, in either order."""

    figure = "3(b)"
    on_functions = False

    def __init__(self, name: str, outer: type, inner: type, what: str, equation: str, description: str):
        self.name, self.heads, self.inner, self.what = name, (outer,), inner, what
        self.equation, self.description = equation, description

    def match(self, call):
        return (self.head(call), arg_call(call, self, self.inner, self.what))

    def rewrite(self, call, outer, inner):
        return inner.f(outer(inner.args[0]))


@rule("reorder-to-stride", figure="4(c)", description="reorder with stride s, where the order does not matter",
      equation="reorder → reorder-stride-s", heads=Reorder, param="s", reassociates=True,
      allowed=lambda call, ctx: requires(order_is_irrelevant(ctx),
                                         "the order of this array matters: it does not only reach reductions"))
def reorder_to_stride(call, s):
    return ReorderStride(s)(*call.args)


@rule("reorder-to-id", figure="4(c)", description="keep the order", equation="reorder → id", heads=Reorder)
def reorder_to_id(call):
    return Id()(*call.args)


RULES = (Commutation("map-reorder", AbstractMap, Reorder, "reorder", "map(f) ∘ reorder → reorder ∘ map(f)",
                     "apply a map after the reordering rather than before it"),
         Commutation("reorder-map", Reorder, AbstractMap, "a map", "reorder ∘ map(f) → map(f) ∘ reorder",
                     "apply a map before the reordering rather than after it"),
         reorder_to_stride, reorder_to_id)
