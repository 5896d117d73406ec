"""Split-join (Figure 3(c)): a map becomes a map of maps over chunks.

    map(f) → join ∘ map(map(f)) ∘ split-n

`split-n` cuts the array into chunks of `n`, the outer map runs over the chunks and the inner one
over each chunk's elements, and `join` concatenates the results in order: the same array. This is
how one map meets two levels of the thread hierarchy (`map-workgroup(map-local(f))`, Figure 2).
`n` is any factor of the array's length.
"""

from __future__ import annotations

from lift.ir.patterns import Join, Map, Split
from lift.rules.rule import rule


@rule("split-join", figure="3(c)", description="partition a map into a map of maps over chunks of n elements",
      equation="map(f) → join ∘ map(map(f)) ∘ split-n", heads=Map, param="n")
def split_join(call, n):
    return Join()(Map(call.f)(Split(n)(call.args[0])))


RULES = (split_join,)
