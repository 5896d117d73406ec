"""The paper's derivations as strategies: Figures 2, 8 and 9, gemv, and a two-kernel sum.

Each derivation is a strategy (`lift.rules.strategy`) that finds its place by a selector (the outermost
reduction of a map, the outermost map) and applies there to any program where it matches: asum, a dot
product, a sum of squares, a reduction inside a map over rows. They are built from a few recurring
sub-strategies, each named after what it does and applied at the place in focus.

`FIGURE_2`, `FIGURE_8`, `FIGURE_9A`, ... are the `Derivation`s these strategies record on the paper's
programs of Figure 5 (`lift.rules.paper_programs`): replayable with `Derivation.replay`, printable with
`Derivation.format_figure8`. They are recorded on first use.
"""

from __future__ import annotations

from functools import lru_cache

from lift.ir.patterns import Map, Reduce
from lift.rules.derivation import Derivation
from lift.rules.strategy import (Strategy, argument, argument_is, arguments, derive, function, is_call,
                                 mapped_body, outermost, rewrite)


def step(rule: str, at: str, **params) -> Derivation:
    """A derivation of one step (a recorded trace: `at` is a location of the program it applies to)."""
    return Derivation().then(rule, at, **params)


def mapped(s: Strategy) -> Strategy:
    """`s` at the function `f` of the pattern called at the focus: `map(f)(xs)`."""
    return function(function(s))


groups = arguments(0, 0)
"""`groups(s)`: `s` at the map over chunks in `reduce ∘ join ∘ map(...) ∘ split-n` (the focus is the reduce)."""

vector_groups = arguments(0, 0, 0)
"""`vector_groups(s)`: `s` at the map over vectorised chunks in `reduce ∘ join ∘ asScalar ∘ map(...) ∘ ...`."""

reduce_of_map = is_call(Reduce) & argument_is(is_call(Map))
"""The selector of `reduce(f, z) ∘ map(g)`, where the reduction derivations start."""


def chunked(n) -> Strategy:
    """`part-red ∘ map(g)` at the focus → `join ∘ map(part-red ∘ map(g)) ∘ split-n` (Figure 8, (2) to (5)).

    The mapped function's body is then at `argument(0, mapped_body(...))`.
    """
    return (rewrite("part-red-split-join", n=n)
            >> arguments(0, 0, 0)(rewrite("split-join", n=n))
            >> arguments(0, 0)(rewrite("split-join-id"))
            >> argument(0, rewrite("map-fusion")))


def chunks_then(s: Strategy) -> Strategy:
    """`s` at the body of the function mapped over the chunks made by `chunked`."""
    return argument(0, mapped_body(s))


fused_sequential = (argument(0, rewrite("map-to-seq")) >> rewrite("part-red-to-reduce") >> rewrite("reduce-to-seq")
                    >> rewrite("reduce-seq-map-seq-fusion"))
"""`part-red(f, z, 1) ∘ map(g)` at the focus → `reduce-seq(λ acc, x. f(acc, g(x)), z)` (Figure 8, (5) to (8))."""


def local_tree(stride, chunk, iterations: int) -> Strategy:
    """`part-red(f, z, 1) ∘ map(g)` at the focus, inside a work-group, → Figure 9(a)'s reduction tree:

        iterate-k(join ∘ map(part-red(f, z, 1)) ∘ split-2) ∘ join ∘ map(reduce-seq(f ∘ g)) ∘ split-chunk
            ∘ reorder-stride-s

    Each work-item reduces `chunk` elements read with stride `stride` (coalesced), then `iterations`
    halving steps reduce the work-item's results to one.
    """
    return (rewrite("part-red-reorder")
            >> argument(0, rewrite("reorder-map"))
            >> arguments(0, 0)(rewrite("reorder-to-stride", s=stride))
            >> rewrite("part-red-to-reduce")
            >> rewrite("partial-reduction", chunk=chunk)
            >> rewrite("reduce-to-part-red")
            >> rewrite("part-red-iterate", n=iterations)
            >> argument(0, chunked(chunk))
            >> argument(0, chunks_then(fused_sequential)))


local_tree_lowered = (arguments(0, 0)(rewrite("map-to-local", dim=0))
                      >> arguments(0, 0)(rewrite("to-local"))
                      >> mapped_body(argument(0, mapped(rewrite("part-red-to-reduce"))))
                      >> mapped_body(argument(0, mapped(rewrite("reduce-to-seq"))))
                      >> mapped_body(argument(0, rewrite("map-to-local", dim=0))))
"""`local_tree`'s result at the focus, inside a `map-workgroup` → work-items and local memory:
`iterate-k(join ∘ map-local(reduce-seq(f, z)) ∘ split-2) ∘ join ∘ toLocal(map-local(...)) ∘ ...`."""

copied_to_global = (rewrite("copy") >> rewrite("split-join", n=1)
                    >> argument(0, rewrite("map-to-local", dim=0))
                    >> argument(0, mapped(rewrite("map-to-seq")))
                    >> argument(0, rewrite("to-global")))
"""The array computed at the focus in a `map-workgroup` → `join ∘ toGlobal(map-local(map-seq(id))) ∘ split-1`
of it: each work-item copies one element from local back to global memory (Figure 9(a))."""

lanes = (mapped_body(rewrite("part-red-reorder")
                     >> argument(0, rewrite("reorder-to-stride", s=4))
                     >> rewrite("vectorize-reduction")
                     >> arguments(0, 0, 0)(rewrite("vectorize-map", n=4))
                     >> arguments(0, 0)(rewrite("asVector-asScalar-id")))
         >> rewrite("map-fission", at=1)
         >> argument(0, rewrite("map-fission", at=2))
         >> rewrite("map-asScalar")
         >> arguments(0, 0)(rewrite("map-asVector")))
"""At a map whose function's body is `part-red(f, z, 4) ∘ map(g)` → `asScalar ∘ map(reduce(vect-4(f),
vect-4(z)) ∘ map(vect-4(g))) ∘ asVector-4`: each chunk reduced as float4 lanes (Figure 9(b), (c))."""


def work_groups(chunk, n) -> Strategy:
    """A reduction `reduce ∘ map(g)` at the focus → `reduce ∘ join ∘ map(part-red ∘ map(g)) ∘ split-n`, each
    part-red result reducing `chunk` elements."""
    return rewrite("partial-reduction", chunk=chunk) >> argument(0, chunked(n))


def at_reduction(s: Strategy) -> Strategy:
    """`s` at the outermost `reduce ∘ map` where it applies."""
    return outermost(reduce_of_map, s)


def sequential_chunks(chunk) -> Strategy:
    """A reduction `reduce ∘ map(g)` at the focus → `reduce ∘ join ∘ map(reduce-seq(f ∘ g)) ∘ split-chunk`
    (Figure 8); the map over chunks is left to lower."""
    return work_groups(chunk, chunk) >> groups(mapped_body(fused_sequential))


def local_tree_groups(group, items: int, iterations: int) -> Strategy:
    """A reduction `reduce ∘ map(g)` at the focus → work-groups of `group` elements, each reducing its chunk by
    `items` work-items and a local-memory tree of `iterations` halving steps (Figure 9(a))."""
    return (work_groups(group, group) >> groups(mapped_body(local_tree(items, group // items, iterations)))
            >> groups(rewrite("map-to-workgroup", dim=0)) >> groups(mapped_body(local_tree_lowered))
            >> groups(mapped_body(copied_to_global)))


def sequential_work_groups(per_item) -> Strategy:
    """At `map(part-red(f, z, 1) ∘ map(g))` over chunks: each chunk's work-items reduce `per_item` elements
    sequentially (Figure 8's fused reduction); the map becomes a `map-workgroup` of `map-local`s."""
    return (mapped_body(chunked(per_item)) >> mapped_body(chunks_then(fused_sequential))
            >> rewrite("map-to-workgroup", dim=0) >> mapped_body(argument(0, rewrite("map-to-local", dim=0))))


def vector_lane_chunks(group: int, per_item) -> Strategy:
    """A reduction `reduce ∘ map(g)` at the focus → chunks of `group` floats as float4 lanes (Figure 9(b), (c)),
    each chunk's lanes reduced `per_item` at a time sequentially; the maps over chunks are left to lower
    (`vector_groups`, and `mapped_body(argument(0, ...))` within)."""
    return (work_groups(group // 4, group) >> groups(lanes)
            >> vector_groups(mapped_body(rewrite("reduce-to-part-red") >> chunked(per_item)
                                         >> chunks_then(fused_sequential))))


def vectorised_work_groups(n) -> Strategy:
    """`map(f)` at the focus → `join ∘ map-workgroup(asScalar ∘ map-local(vectorize-4(f)) ∘ asVector-4) ∘
    split-n` (Figure 2(b))."""
    return (rewrite("split-join", n=n)
            >> argument(0, rewrite("map-to-workgroup", dim=0))
            >> argument(0, mapped(rewrite("vectorize-map", n=4)))
            >> argument(0, mapped_body(argument(0, rewrite("map-to-local", dim=0)))))


# Figure 2(b): map(mult(a)) to
# join ∘ map-workgroup(asScalar ∘ map-local(vectorize-4(mult(a))) ∘ asVector-4) ∘ split-1024.
FIGURE_2_STRATEGY = outermost(is_call(Map), vectorised_work_groups(1024))

# Figure 8: reduce(+, 0) ∘ map(abs) to
# reduce(+, 0) ∘ join ∘ map(reduce-seq(λ acc, a. acc + abs(a), 0)) ∘ split-n, with n = 128.
# Its expressions after steps 0, 2, 3, 4, 5, 6, 8 and 9 are the figure's lines (1) to (8).
FIGURE_8_STRATEGY = at_reduction(sequential_chunks(128))
FIGURE_8_LINES = (0, 2, 3, 4, 5, 6, 8, 9)

# Figure 9(a), Nvidia: work-groups of 262144 elements, 128 work-items each reducing 2048 with stride 128.
FIGURE_9A_STRATEGY = at_reduction(local_tree_groups(262144, 128, 7) >> rewrite("reduce-to-seq"))

# Figure 9(b), AMD: as (a), on float4: work-groups of 2048 floats, 256 work-items reducing 2 float4 each.
FIGURE_9B_STRATEGY = at_reduction(
    work_groups(512, 2048) >> groups(lanes) >> vector_groups(mapped_body(rewrite("reduce-to-part-red")))
    >> vector_groups(mapped_body(local_tree(256, 2, 8)))
    >> vector_groups(rewrite("map-to-workgroup", dim=0)) >> vector_groups(mapped_body(local_tree_lowered))
    >> vector_groups(mapped_body(copied_to_global)) >> rewrite("reduce-to-seq"))

# Figure 9(c), Intel: one work-item per work-group reduces 8192 float4 sequentially.
FIGURE_9C_STRATEGY = at_reduction(
    vector_lane_chunks(32768, 8192)
    >> vector_groups(rewrite("map-to-workgroup", dim=0) >> mapped_body(argument(0, rewrite("map-to-local", dim=0))))
    >> rewrite("reduce-to-seq"))

# A sum in two kernels: work-groups of 1024 elements leave 4 partial sums each (4 work-items of 256),
# and a final sequential reduction sums them: reduce-seq ∘ join ∘ map-workgroup(...) ∘ split-1024.
TWO_KERNEL_SUM_STRATEGY = at_reduction(
    work_groups(256, 1024) >> groups(sequential_work_groups(256)) >> rewrite("reduce-to-seq"))

# gemv (Figure 5) with one work-group per row of A: 64 work-items each reduce N/64 products of the
# dot product (coalesced), a local tree sums them, one work-item scales the sum; map-global elsewhere.
_ROW_DOT = argument(0, rewrite("reduce-to-part-red") >> local_tree(64, "N/64", 6))
GEMV_WORKGROUP_PER_ROW_STRATEGY = (
    outermost(is_call(Map), mapped_body(_ROW_DOT) >> rewrite("map-to-workgroup", dim=0)
              >> mapped_body(argument(0, local_tree_lowered))
              >> mapped_body(rewrite("map-to-local", dim=0)) >> mapped_body(rewrite("to-global")))
    >> outermost(is_call(Map), rewrite("map-to-global", dim=0))
    >> outermost(is_call(Map), rewrite("map-to-global", dim=0)))

_RECORDED_ON = {
    "FIGURE_2": (FIGURE_2_STRATEGY, "scal"),
    "FIGURE_8": (FIGURE_8_STRATEGY, "asum"),
    "FIGURE_9A": (FIGURE_9A_STRATEGY, "asum"),
    "FIGURE_9B": (FIGURE_9B_STRATEGY, "asum"),
    "FIGURE_9C": (FIGURE_9C_STRATEGY, "asum"),
    "TWO_KERNEL_SUM": (TWO_KERNEL_SUM_STRATEGY, "asum"),
    "GEMV_WORKGROUP_PER_ROW": (GEMV_WORKGROUP_PER_ROW_STRATEGY, "gemv"),
}


@lru_cache(maxsize=None)
def recorded(name: str) -> Derivation:
    """The derivation `name` (`"FIGURE_8"`, ...) as its strategy records it on the paper's program (built here,
    on first use, so that programs of the same shape built by a caller are the ones type inference caches)."""
    from lift.rules import paper_programs

    strategy, program = _RECORDED_ON[name]
    return derive(strategy, getattr(paper_programs, program))


def __getattr__(name: str):
    if name in _RECORDED_ON:
        return recorded(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
