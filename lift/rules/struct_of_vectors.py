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

from typing import Mapping

from lift.ir import patterns as P
from lift.ir.nodes import FunCall
from lift.rules.default_lowering import MIN_CHUNK, high_level, hoist_invariants
from lift.rules.strategy import (Selector, Strategy, argument, everywhere, inside, is_call, normalize, rewrite,
                                 topdown, where)
from lift.rules.struct_of_arrays import struct_of_arrays

STRUCT_LANES = 8
"""The lanes of the default lowering's struct of vectors: N-body at 8192 bodies on PoCL (2 shared cores, load 8, best
of 5 interleaved rounds) ran in 86 ms on 8 lanes, 78 ms on 16, 181 ms on 4 and 837 ms a body per work-item; at 16384,
in a search, 8 lanes were the fastest (226 ms against 295 ms on 16)."""


def struct_of_vectors(width: int, padded: bool = False) -> Strategy:
    """At a map over arrays of vectors: its elements on `width` lanes (see the module)."""
    vectorise = argument(0, rewrite("vectorize-zip-tuple-map", n=width))
    lanes = rewrite("pad-map-repeat", k=width) >> vectorise if padded else \
        rewrite("vectorize-zip-tuple-map", n=width)
    on_global = everywhere(is_call(P.Map) & ~inside(), rewrite("map-to-global", dim=0))
    return rewrite("struct-of-arrays") >> argument(0, hoist_invariants() >> topdown(lanes)) >> on_global


def _length(t, sizes: Mapping[str, int]):
    """The length of array type `t` under `sizes`; None where it is not known."""
    try:
        return t.length.eval(sizes)
    except (AttributeError, KeyError, ValueError, TypeError):
        return None


def _folds_over_many(f, sizes: Mapping[str, int]) -> bool:
    """Whether function `f` folds (a reduction of any kind) over `MIN_CHUNK` elements or more under `sizes`."""
    return any(isinstance(node, FunCall) and isinstance(node.f, P.AbstractReduce)
               and (_length(node.args[-1].t, sizes) or 0) >= MIN_CHUNK for node in f.subterms())


def all_pairs_of_structs(sizes: Mapping[str, int]) -> Strategy:
    """The default lowering's step (see the module): each high-level map outside every map that `struct-of-arrays`
    rewrites and whose function folds over `MIN_CHUNK` elements or more, on `STRUCT_LANES` lanes (padded where they
    do not divide its elements)."""
    def all_pairs(ctx) -> bool:
        return (_folds_over_many(ctx.node.f.f, sizes)
                and next(struct_of_arrays.matches(ctx.node, ctx), None) is not None)

    def divided(ctx) -> bool:
        return (_length(ctx.node.args[0].t, sizes) or 1) % STRUCT_LANES == 0

    place = where(is_call(P.Map) & ~inside() & high_level & Selector(all_pairs, "all_pairs_of_structs"))
    return normalize(place >> ((where(Selector(divided, "lanes_divide")) >> struct_of_vectors(STRUCT_LANES))
                               | struct_of_vectors(STRUCT_LANES, True)))
