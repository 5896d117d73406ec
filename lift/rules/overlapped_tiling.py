"""Overlapped tiling of stencils (Hagedorn et al., CGO 2018, Section 4: Lift's `slideTiling`, `tileStencils`):

    slide(n, s) → join ∘ map(slide(n, s)) ∘ slide(u, v)          u = (k - 1) s + n,  v = k s = u - (n - s)
                                                                                              (slide-tiling)

The windows of `slide(n, s)` come `k` at a time from tiles of `u` elements, each tile `v` after the last, so that
consecutive tiles overlap by the `n - s` elements two neighbouring windows share (a stencil's halo); `k` divides the
number of windows. Each tile is what a work-item reads to compute `k` results on its own.

The same on the columns of a 2-D stencil's neighbourhoods (`slide2d = map(transpose) ∘ slide(n, s) ∘ map(slide(m,
t))`, each row tiled so, then the tiles of every row gathered into column strips by a transposition):

    map(map(f))(map(transpose)(slide(n, s)(map(slide(m, t))(X))))
      → transpose ∘ join ∘ map(transpose) ∘ map(λstrip. map(λband. map(f)(transpose(map(slide(m, t))(band))))
                                                          (slide(n, s)(strip))) ∘ transpose ∘ map(slide(u, v))(X)
                                                                                              (column-strips)

with `u = (w - 1) t + m`, `v = w t`: strip `c` holds the `u` columns of `X` that the results `w c .. w c + w - 1`
of every row read, row after row; a band is `n` rows of a strip (`slide(n, s)` of the strip), and its `w`
neighbourhoods are those of `slide2d` in that band. The strip's results (rows of `w`) are put back in place by
views. Where `w` does not divide the number `C` of results of a row, each row of `X` is first extended with
copies of its last element (`pad(0, r, clamp)`, `r = (w - C mod w) t`), so that its windows make whole strips, and
the extra results are dropped (`take-C`). Each strip is a column of the grid that one work-item walks down with
`map-seq-slide` (`lift.rules.sliding_window`: the band's rows in private variables, one new row a step), its
neighbourhoods `w` lanes of vectors (`vectorize-windows`): `lift.rules.column_strips` places these.
"""

from __future__ import annotations

from lift.ir.nodes import FunCall, Lambda, fresh_param
from lift.ir.patterns import Join, Map, Pad, Slide, Take, Transpose
from lift.rules.rule import requires, rule
from lift.rules.sizes import integer


def _windows(call):
    requires(call.f.step <= call.f.size, "the windows do not overlap or touch (step larger than size)")
    return call.t.length


def _tilings(call, ctx) -> list:
    count = _windows(call)
    known = ctx.choices.value(count)
    return [{"tile": k} for k in ctx.choices.factors(count) if 1 < k and k != known and ctx.choices.divides(k, count)]


@rule("slide-tiling", figure="slide", heads=Slide, on_functions=False, sized=True, choices=_tilings,
      description="a slide's windows taken k at a time from overlapping tiles of the array",
      equation="slide(n, s) → join ∘ map(slide(n, s)) ∘ slide((k-1)s + n, ks)")
def slide_tiling(call, tile):
    requires(isinstance(tile, int) and tile > 1, f"needs a tile of more than one window, got {tile!r}")
    count = _windows(call)
    requires(integer(count) is None or integer(count) % tile == 0,
             f"{tile} windows to a tile do not divide the {count} windows")
    n, s = call.f.size, call.f.step
    return Join()(Map(call.f)(Slide((tile - 1) * s + n, tile * s)(*call.args)))


def _neighbourhoods(call) -> tuple:
    """`(f, slide(n, s), slide(m, t), X)` of `map(map(f))(map(transpose)(slide(n, s)(map(slide(m, t))(X))))`."""
    requires(type(call.f) is Map and type(call.f.f) is Map, "not a high-level map of maps")
    bands = call.args[0]
    requires(_call_of(bands, Map) and type(bands.f) is Map and isinstance(bands.f.f, Transpose),
             "its array is not map(transpose)(...)")
    rows = bands.args[0]
    requires(_call_of(rows, Slide), "not the neighbourhoods of slide ∘ map(slide)")
    columns = rows.args[0]
    requires(_call_of(columns, Map) and type(columns.f) is Map and isinstance(columns.f.f, Slide),
             "not the neighbourhoods of slide ∘ map(slide)")
    requires(columns.f.f.step <= columns.f.f.size, "the column windows do not overlap or touch (step larger than size)")
    return call.f.f.f, rows.f, columns.f.f, columns.args[0]


def _call_of(e, cls) -> bool:
    return isinstance(e, FunCall) and isinstance(e.f, cls) and len(e.args) == 1


STRIP_WIDTHS = (4, 8, 16)
"""The results a strip is wide: the lanes of a vector."""


def _strip_widths(call, ctx) -> list:
    _neighbourhoods(call)
    count = call.t.elem.length
    known = ctx.choices.value(count)
    return [{"w": w, "extra": -known % w if known is not None else 0} for w in STRIP_WIDTHS
            if (known is None and ctx.choices.divides(w, count)) or (known is not None and w < known)]


@rule("column-strips", figure="slide", heads=Map, on_functions=False, sized=True, choices=_strip_widths,
      description="a 2-D stencil's neighbourhoods computed strip by strip: each strip w results wide, the rows of "
                  "its overlapping columns of the grid slid down",
      equation="map(map(f)) ∘ map(transpose) ∘ slide(n, s) ∘ map(slide(m, t)) → transpose ∘ join ∘ map(transpose) "
               "∘ map(map(map(f) ∘ transpose ∘ map(slide(m, t))) ∘ slide(n, s)) ∘ transpose ∘ "
               "map(slide((w-1)t + m, wt))")
def column_strips(call, w, extra):
    """`extra`: the results each row is extended by (copies of its last element, the results dropped), so that
    strips of `w` make up the row: `-C mod w` for `C` results a row (0 where `C` is symbolic and `w` divides it)."""
    requires(isinstance(w, int) and w > 1, f"needs strips of more than one column, got {w!r}")
    f, rows, columns, grid = _neighbourhoods(call)
    count = call.t.elem.length
    known = integer(count)
    requires(isinstance(extra, int) and 0 <= extra < w and (known is None or (known + extra) % w == 0),
             f"{extra} more results do not make strips of {w} out of the {count} results of a row")
    m, t = columns.size, columns.step
    tiles = Slide((w - 1) * t + m, w * t)
    row, strip, band = fresh_param("row"), fresh_param("strip"), fresh_param("band")
    tiled = Map(tiles if not extra else Lambda((row,), tiles(Pad(0, extra * t, "clamp")(row))))(grid)
    per_band = Lambda((band,), Map(f)(Transpose()(Map(columns)(band))))
    strips = Map(Lambda((strip,), Map(per_band)(rows(strip))))(Transpose()(tiled))
    placed = Join()(Map(Transpose())(strips))
    return Transpose()(Take(count)(placed) if extra else placed)


RULES = (slide_tiling, column_strips)
