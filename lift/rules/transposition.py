"""Transposition: which dimension of a matrix the threads walk (beyond the paper's figures).

    map(map(f)) → transpose ∘ map(map(f)) ∘ transpose

A map of maps applies `f` to every element of a matrix independently, so the two loops may be
interchanged: transposing, mapping over the other dimension and transposing back gives the same
matrix. This is the choice behind coalesced matrix code such as gemv (Figure 5): lowered to
`map-global(map-seq(f))`, work-item `i` walks row `i` and neighbouring work-items read addresses a row
apart; after the interchange the outer map runs over columns, so at each step neighbouring work-items
read neighbouring elements of one row. The transpositions are views: the code generator only changes
its index expressions (and `transpose ∘ transpose → id` in `lift.rules.simplification` removes a pair).
"""

from __future__ import annotations

from lift.ir.patterns import Map, Transpose
from lift.rules.rule import requires, rule


@rule("map-interchange", figure="5", description="map over the other dimension of a matrix, between two transpositions",
      equation="map(map(f)) → transpose ∘ map(map(f)) ∘ transpose", heads=Map,
      match=lambda call: requires(isinstance(call.f.f, Map), "expects a map of maps"))
def map_interchange(call):
    return Transpose()(call.f(Transpose()(*call.args)))


RULES = (map_interchange,)
