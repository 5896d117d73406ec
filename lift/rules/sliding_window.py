"""Sliding windows in registers (Lift's `MapSeqSlide`, register rotation for stencils):

    map-seq(f) ∘ slide(size, step) → map-seq-slide(f, size, step)                    (step ≤ size)
    map(map(f)) ∘ map(transpose) ∘ slide(n, s) ∘ map(slide(m, t))
        → map(map-seq-slide(f ∘ transpose, m, t) ∘ transpose) ∘ slide(n, s)          (t ≤ m)

Both sides of the first apply `f` to the windows in order, in one work-item. The left one reads every window from
the input, each element `size / step` times; the right one keeps the window in `size` private variables and each
step loads only the `step` elements that enter it, then shifts the others down (`lift.opencl_gen.emit`'s
`call_MapSeqSlide`): a stencil walking down a column then reads each row once.

The second is the first on a 2-D stencil's neighbourhoods as a user writes them (`slide2d`, Lift's macro rule
`mapSeqSlide2DSeq`): the `n x m` neighbourhoods of a band of `n` rows are the windows of `m` of its columns
(`transpose` of the band: columns of `n` values), each transposed back; the map over a band's neighbourhoods walks
its columns, keeping `m` of them in private variables and loading one new column of `n` values a step.

    map(λw. g(map(h)(w))) ∘ slide(n, s) → map(λw. g(w)) ∘ slide(n, s) ∘ map(h)              (map-view-before-slide)

A window read only through a view of each of its elements (`h`: `slide`, `transpose`, `asVector`..., the packing
of `vectorize-windows`) is the window of the viewed elements: `slide(n, s) ∘ map(h) = map(map(h)) ∘ slide(n, s)`.
Before `map-seq-slide`, it makes the window hold what the function reads (a column strip's row as its three
shifted vectors, loaded as vectors) rather than the elements it views.
"""

from __future__ import annotations

from dataclasses import replace

from lift.ir.nodes import FunCall, Lambda, Param, count_uses, fresh_param
from lift.ir.patterns import Map, MapSeq, MapSeqSlide, Slide, Transpose, is_view
from lift.rules.rule import requires, rule


def _slid(call) -> tuple:
    requires(type(call.f) is MapSeq, "the map-seq is unrolled, unswitched or not sequential")
    windows = call.args[0]
    requires(isinstance(windows, FunCall) and isinstance(windows.f, Slide), "its array is not a slide's windows")
    requires(windows.f.step <= windows.f.size, "the windows do not overlap or touch (step larger than size)")
    return (windows,)


@rule("map-seq-slide", figure="slide", heads=MapSeq, on_functions=False, match=_slid,
      description="a sequential map over a slide's windows keeping the window in private variables, "
                  "loading only the elements that enter it at each step",
      equation="map-seq(f) ∘ slide(size, step) → map-seq-slide(f, size, step)")
def map_seq_slide(call, windows):
    return MapSeqSlide(call.f.f, windows.f.size, windows.f.step)(*windows.args)


def _is_map_of(f, inner: type) -> bool:
    return type(f) in (Map, MapSeq) and isinstance(f.f, inner)


def _neighbourhoods(call) -> tuple:
    """`map(map(f))` (each map high-level or sequential) over `map(transpose) ∘ slide(n, s) ∘ map(slide(m, t))`."""
    requires(type(call.f) in (Map, MapSeq) and type(call.f.f) in (Map, MapSeq),
             "not a map of maps (high-level or sequential)")
    bands = call.args[0]
    requires(isinstance(bands, FunCall) and _is_map_of(bands.f, Transpose), "its array is not map(transpose)(...)")
    rows = bands.args[0]
    requires(isinstance(rows, FunCall) and isinstance(rows.f, Slide), "not the neighbourhoods of slide ∘ map(slide)")
    columns = rows.args[0]
    requires(isinstance(columns, FunCall) and _is_map_of(columns.f, Slide),
             "not the neighbourhoods of slide ∘ map(slide)")
    requires(columns.f.f.step <= columns.f.f.size, "the column windows do not overlap or touch (step larger than size)")
    return rows.f, columns.f.f, columns.args[0]


@rule("map-seq-slide-2d", figure="slide", heads=(Map, MapSeq), on_functions=False, match=_neighbourhoods,
      description="a map over a 2-D stencil's rows of neighbourhoods walking each band of rows column by column, "
                  "the window of columns in private variables",
      equation="map(map(f)) ∘ map(transpose) ∘ slide(n, s) ∘ map(slide(m, t)) → "
               "map(map-seq-slide(f ∘ transpose, m, t) ∘ transpose) ∘ slide(n, s)")
def map_seq_slide_2d(call, rows, columns, grid):
    w, band = fresh_param("w"), fresh_param("band")
    f = call.f.f.f
    walk = MapSeqSlide(Lambda((w,), f(Transpose()(w))), columns.size, columns.step)
    return replace(call.f, f=Lambda((band,), walk(Transpose()(band))))(rows(grid))


def _viewed_window(call) -> tuple:
    """`(g's body, map(h)(w), slide(n, s)(x))` of `map(λw. g(map(h)(w)))(slide(n, s)(x))`, `w` read there only."""
    requires(type(call.f) is Map and isinstance(call.f.f, Lambda) and len(call.f.f.params) == 1,
             "not a high-level map of a function of one window")
    windows = call.args[0]
    requires(isinstance(windows, FunCall) and isinstance(windows.f, Slide), "its array is not a slide's windows")
    w, g = call.f.f.params[0], call.f.f.body
    requires(count_uses(g, w) == 1, "the window is not read exactly once")
    viewed = next((e for e in g.subterms() if isinstance(e, FunCall) and type(e.f) is Map and e.args == (w,)), None)
    requires(viewed is not None, "the window is not read through a map over its elements")
    requires(is_view(viewed.f), "the map over the window's elements computes: only views move before the slide")
    return g, viewed, windows


@rule("map-view-before-slide", figure="slide", heads=Map, on_functions=False, match=_viewed_window,
      description="a window read through a view of each of its elements is a window of the viewed elements",
      equation="map(λw. g(map(h)(w))) ∘ slide(n, s) → map(λw. g(w)) ∘ slide(n, s) ∘ map(h)")
def map_view_before_slide(call, g, viewed, windows):
    v = fresh_param("w")
    return Map(Lambda((v,), _replaced(g, viewed, v)))(windows.f(viewed.f(*windows.args)))


def _replaced(e, old, new: Param):
    """`e` with the one occurrence of `old` (by identity) replaced by `new`."""
    if e is old:
        return new
    return e.map_children(lambda c: _replaced(c, old, new))


RULES = (map_seq_slide, map_seq_slide_2d, map_view_before_slide)
