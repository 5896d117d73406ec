"""The default lowering's reductions: Figure 8's chunks on global work-items, of vector lanes where they pay.

Steps 2 and 3 of `lift.rules.default_lowering` (its docstring gives them in full): a reduction outside every map
runs in two kernels, `reduce ∘ map(g)` → `reduce-seq ∘ join ∘ map-global(reduce-seq(f ∘ g)) ∘ split-c`, of
float4 lanes where the device's vectors pay (Figure 9(c)), over its input padded with the neutral element where
the chunk `c` does not divide it (`lift.rules.padding`); a reduction inside a map reduces vector lanes
(`reduce-lanes`). A map of such reductions over rows (`reduces_rows`) is the row blocks' and the work-items'
concern (`lift.rules.block_choice`, the default lowering's step 4).
"""

from __future__ import annotations

from typing import Mapping, Optional

from lift.ir import patterns as P
from lift.ir.associativity import absorbs_itself, is_associative
from lift.ir.nodes import FunCall
from lift.ir.opencl_patterns import AsScalar
from lift.rules import location as L
from lift.rules.paper_derivations import groups, sequential_chunks
from lift.rules.sizes import bound_length
from lift.rules.strategy import Focus, Selector, Strategy, argument, arguments, rewrite

MIN_CHUNK, MAX_CHUNK, TARGET_ITEMS = 16, 4096, 4096
LANES = 4
"""The vector width the default lowering vectorises by (float4: Figures 2 and 9(c))."""


def reduction_chunk(length: Optional[int]) -> Optional[int]:
    """The chunk each work-item reduces in a reduction over `length` elements: the power of two nearest above
    `length / TARGET_ITEMS` (within `MIN_CHUNK`..`MAX_CHUNK`), halved while it would leave fewer than two
    chunks; None for fewer than 4 elements (or an unknown `length`). It need not divide `length`: the reduction
    then reads its input padded with its neutral element (`lift.rules.padding`)."""
    if length is None or length < 4:
        return None
    c = MIN_CHUNK
    while c < MAX_CHUNK and c * TARGET_ITEMS < length:
        c *= 2
    while c > 2 and -(-length // c) < 2:
        c //= 2
    return c


def _dividing_chunk(length: int, chunk: int) -> Optional[int]:
    """The largest power of two up to `chunk` that divides `length` and leaves at least two chunks, if any."""
    while chunk >= 2 and (length % chunk or length // chunk < 2):
        chunk //= 2
    return chunk if chunk >= 2 else None


def vectorises(vector_width: int) -> bool:
    """Whether vectors pay on a device of native vector width `vector_width`: 2 or more (a CPU's; a GPU's is 1),
    the cost model's criterion put as a rule-level one (`lift.rules.default_lowering`'s docstring)."""
    return vector_width >= 2


def to_vectors(n: int) -> Strategy:
    return rewrite("vectorize-map", n=n) | rewrite("vectorize-zip-map", n=n)


def reduce_lanes(n: int) -> Strategy:
    """`reduce(f, z) ∘ map(g)` at the focus → `reduce(f, z) ∘ asScalar ∘ reduce(vect-n(f), vect-n(z)) ∘
    map(vect-n(g)) ∘ asVector-n`: the reduction of `n`-lane vectors, then of the `n` lanes (Figure 9(c))."""
    return argument(0, to_vectors(n)) >> rewrite("reduce-lanes")


_REDUCE_LANES = reduce_lanes(LANES)


def _from_neutral(s: Strategy) -> Strategy:
    """At a reduction `reduce(f, z)` with `f(z, z) ≠ z`: `reduce(f, z) ∘ reduce(f, e)` (`reduce-neutral-init`),
    `s` at the inner reduction from the neutral element `e`, which splits (`lift.rules.reduction`)."""
    return rewrite("reduce-neutral-init") >> argument(0, s)


def _chunks(chunk: int, of_map: bool) -> Strategy:
    """At a reduction: Figure 8's chunks of `chunk` elements on global work-items, then a final sequential
    reduction (two kernels); a reduction of a map fuses the map into the chunks' reductions."""
    to_global = groups(rewrite("map-to-global", dim=0)) >> rewrite("reduce-to-seq")
    if of_map:
        return sequential_chunks(chunk) >> to_global
    return (rewrite("partial-reduction", chunk=chunk) >> argument(0, rewrite("part-red-split-join", n=chunk))
            >> to_global)


def top_reduction(sizes: Mapping[str, int], vector_width: int) -> Strategy:
    """At a reduction outside every map: `_chunks`, of float4 lanes where they pay (a reduction of no map
    reduces `map(id)` of its input, `reduce-map-id`) (`lift.rules.default_lowering`, step 2)."""
    def chunks(chunk: int, of_map: bool) -> Strategy:
        scalar = _chunks(chunk, of_map)
        if vectorises(vector_width) and chunk >= LANES * LANES:
            lanes = _REDUCE_LANES >> arguments(0, 0)(_chunks(chunk // LANES, True)) >> rewrite("reduce-to-seq")
            return (lanes if of_map else rewrite("reduce-map-id") >> lanes) | scalar
        return scalar

    def run(focus: Focus):
        ctx = focus.ctx
        length = bound_length(ctx.node.args[0].t, sizes)
        chunk = reduction_chunk(length)
        if chunk is None or not is_associative(ctx.node.f.f):
            return None
        if not absorbs_itself(ctx.node.f.f, ctx.node.f.init):
            return _from_neutral(top)(focus)
        of_map = isinstance(ctx.node.args[0], FunCall) and isinstance(ctx.node.args[0].f, P.Map)
        if length % chunk == 0:
            return chunks(chunk, of_map)(focus)
        padded = (pad_reduction(chunk) >> chunks(chunk, of_map))(focus)
        dividing = _dividing_chunk(length, chunk)
        if padded is not None or dividing is not None:
            return padded if padded is not None else chunks(dividing, of_map)(focus)
        return (pad_results(chunk) >> chunks(chunk, of_map))(focus)

    top = Strategy(run, "top_reduction")
    return top


def pad_reduction(k: int) -> Strategy:
    """The reduction at the focus padded to a multiple of `k`: with elements its map sends to the neutral
    element, else (max, min) with copies of its last element (`lift.rules.padding`)."""
    return rewrite("pad-reduction", k=k) | rewrite("pad-reduction-repeat", k=k)


def pad_results(k: int) -> Strategy:
    """The reduction of a map at the focus reducing the map's results padded with its neutral element to a
    multiple of `k` (`pad-reduction-result`), through `map(id)` (`reduce-map-id`): again a reduction of a map,
    which the chunked derivations start from; the map computes its results into memory of their own."""
    return rewrite("pad-reduction-result", k=k) >> rewrite("reduce-map-id")


def inner_lanes(sizes: Mapping[str, int], lanes: int = LANES, tails: bool = True) -> Strategy:
    """At a reduction inside a map, not already of lanes (of `asScalar`): its vector lanes (`reduce_lanes`; a
    reduction of no map, of `LANES` vectors at least, reduces `map(id)` of its input), of `lanes` lanes where
    that many divide the length `LANES` times over, else of `LANES`, over its input padded to a multiple of
    `LANES` first where `LANES` does not divide the length and it holds `LANES` float4s at least, or, where no
    padding keeps its value and `tails`, the lanes of its first `k·⌊n/k⌋` elements, the rest folded after them
    (`reduce-tail`; `k` of `lanes` lanes where it holds `LANES` of their vectors, else `LANES`)
    (`lift.rules.default_lowering`, step 3)."""
    def run(focus: Focus):
        arg = focus.ctx.node.args[0]
        length = bound_length(arg.t, sizes)
        if length is None or isinstance(arg, FunCall) and isinstance(arg.f, AsScalar):
            return None
        if not absorbs_itself(focus.ctx.node.f.f, focus.ctx.node.f.init):
            return _from_neutral(inner)(focus)
        of_map = isinstance(arg, FunCall) and isinstance(arg.f, P.Map)
        n = lanes if length % lanes == 0 and length >= lanes * LANES else LANES
        reduced = reduce_lanes(n)
        reduced = reduced if of_map else rewrite("reduce-map-id") >> reduced
        if length % n == 0 and (of_map or length >= n * LANES):
            return reduced(focus)
        if length < LANES * LANES:
            return None
        padded = (pad_reduction(LANES) >> reduced)(focus)
        if padded is not None or not tails:
            return padded
        k = lanes if length >= lanes * LANES else LANES
        head = reduce_lanes(k) if of_map else rewrite("reduce-map-id") >> reduce_lanes(k)
        return (rewrite("reduce-tail", k=k) >> argument(0, argument(0, head)))(focus)

    inner = Strategy(run, "inner_lanes")
    return inner


def reduces_rows(sizes: Mapping[str, int]) -> Selector:
    """A map whose function reduces `MIN_CHUNK` scalars at least (or as many in float4s): a map of reductions
    over rows (row sums, gemv, a batched dot). Each work-item does a chunk's work, so that work-groups of one
    cost it little, while padding its input (`pad-map`) would bound-check every element of the rows it reads
    (and break their float4 loads)."""
    def scalars(t) -> int:
        return (bound_length(t, sizes) or 0) * getattr(t.elem, "width", 1)

    def test(ctx) -> bool:
        return any(isinstance(c.node, FunCall) and isinstance(c.node.f, P.AbstractReduce)
                   and scalars(c.node.args[0].t) >= MIN_CHUNK for c in L.subtree(L.descend(ctx, "f")))

    return Selector(test, "reduces_rows")
