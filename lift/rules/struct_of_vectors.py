"""Struct of vectors: a map over arrays of vectors computed `n` elements at a time, one element per lane.

A strategy of three rules, at a map whose function takes vectors apart (N-body's map over bodies):

1. `struct-of-arrays` (`lift.rules.struct_of_arrays`): the map over the lane arrays of its vectors, its user
   functions on scalars, the vectors built back after it;
2. `hoist-invariant` (`lift.rules.let_floating`, through `default_lowering.hoist_invariants`): each lane array the
   function reads whole (the positions of all bodies) computed once, before the map, into an array of its own;
3. `vectorize-zip-tuple-map` (`lift.rules.vectorization`) with `n` lanes: element `n*i + j` of the map in lane `j`
   of its vectors, the arrays the function reads whole broadcast a scalar at a time.

The maps it leaves outside every map (the lane arrays' copies, the vectors built back, the vectorised map itself)
run on global work-items (`map-to-global`): each is one pass over the elements, not worth a decision of a search.

So each work-item holds `n` bodies in `floatn` registers and reads every other body once for all `n`, where the
map on vectors could use only the 4 lanes of one body (hand-written in OpenCL on PoCL at N = 8192: 34 ms against
264 ms one work-item per body). Where `n` does not divide the elements, the map runs over its lane arrays padded
with copies of the last element (`pad-map-repeat`), the padded lanes' results dropped.
"""

from __future__ import annotations

from lift.ir import patterns as P
from lift.rules.default_lowering import hoist_invariants
from lift.rules.strategy import Strategy, argument, everywhere, inside, is_call, rewrite, topdown


def struct_of_vectors(width: int, padded: bool = False) -> Strategy:
    """At a map over arrays of vectors: its elements on `width` lanes (see the module)."""
    vectorise = argument(0, rewrite("vectorize-zip-tuple-map", n=width))
    lanes = rewrite("pad-map-repeat", k=width) >> vectorise if padded else \
        rewrite("vectorize-zip-tuple-map", n=width)
    on_global = everywhere(is_call(P.Map) & ~inside(), rewrite("map-to-global", dim=0))
    return rewrite("struct-of-arrays") >> argument(0, hoist_invariants() >> topdown(lanes)) >> on_global
