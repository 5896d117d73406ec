"""The default lowering's elementwise maps of a row: vector lanes, a head and a scalar tail where they do not divide.

A map of scalars inside a map over rows, whose results are the row's result (softmax's `map(λx. x / s)(row)` after
the row's reductions, layer normalisation's `scale(centre(x))`), computes `k` elements at once in the lanes of
vectors (`vectorize-map`, Figure 4(e): vector loads and stores), on a device where vectors pay. A user function of a
one-element array it reads as `[0]` (a row's sum, `s[0]`) first takes the element (`scalar-argument`), so that the
function has a vector version. Where `k` does not divide the row's length `n`, its first `k·⌊n/k⌋` elements are
mapped in vectors and the fewer than `k` left in scalars (`map-tail`, `lift.rules.map_tail`), each part written into
its own slice of the row's destination: neither part tests an index.

Only a map whose results are the row's result is vectorised so: written straight into the output's row, its head
is stored as vectors. A map whose results something in the row reads (a reduction, another map) is left to the
rules that read it (`reduce-seq ∘ map-seq` fused, no array in between).
"""

from __future__ import annotations

from typing import Mapping

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, Lambda
from lift.rules.reduction_choice import LANES, to_vectors
from lift.rules.sizes import bound_length
from lift.rules.strategy import Focus, Selector, Strategy, argument, inside, mapped_body, rewrite
from lift.rules.vectorize_function import has_vectors


def _row_result(ctx) -> bool:
    """Whether the value at `ctx` is the result of the function of a map outside every map, through the bodies of
    lets (`(λs. body)(e)`) alone: it is written into that map's output, element by element."""
    c, p = ctx, ctx.parent
    while p is not None and isinstance(p.node, Lambda) and c.step == "body" and p.parent is not None:
        g = p.parent
        if isinstance(g.node, FunCall) and g.node.f is p.node:
            c, p = g, g.parent
            continue
        return isinstance(g.node, P.AbstractMap) and g.parent is not None and not inside()(g.parent)
    return False


row_results = Selector(_row_result, "row_result")
"""A map inside a map whose results are the enclosing row's result (module docstring)."""


def row_map_lanes(sizes: Mapping[str, int], lanes: int) -> Strategy:
    """At a map of scalars of `LANES²` elements or more: its one-element arguments taken as scalars
    (`scalar-argument`), then vectors of `lanes` lanes where it holds `LANES` of them, else of `LANES`, a tail split
    off where they do not divide the length (`map-tail`). Fails, changing nothing, where the function has no
    vector version."""
    def vectorised(focus: Focus):
        call = focus.ctx.node
        length = bound_length(call.args[0].t, sizes)
        if length is None or length < LANES * LANES or not has_vectors(call.t.elem):
            return None
        k = lanes if length >= lanes * LANES else LANES
        if length % k == 0:
            return to_vectors(k)(focus)
        return (rewrite("map-tail", k=k) >> argument(0, to_vectors(k)))(focus)

    def run(focus: Focus):
        scalar = (rewrite("scalar-argument") >> argument(0, mapped_body(strategy)))(focus)
        return scalar if scalar is not None else vectorised(focus)

    strategy = Strategy(run, "row_map_lanes")
    return strategy
