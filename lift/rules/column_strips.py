"""A 2-D stencil walked down column strips: overlapped tiling (`column-strips`, `lift.rules.overlapped_tiling`), a
global work-item per strip (or per block of `h` rows of a strip), the walk down its rows `map-seq-slide` (the band of
rows a neighbourhood reads in private variables, one new row loaded a step), the strip's `w` neighbourhoods of a
band computed in the `w` lanes of vectors (`vectorize-windows`, 4(e)).

    map(map(f))(slide2d(X))
      → .. map-global[0](λstrip. map-seq-slide(λband. asScalar(map(vect-w(f'))(packed-w(..band..))), n, s)(strip))
                                                                                  (h = 0: a strip per work-item)
      → .. map-global[0](λstrip. join(map-global[1](map-seq-slide(..))(slide((h-1)s + n, hs)(strip))))
                                                            (h > 0: `slide-tiling` on the strip's rows, `map-join`)

`f'` is `f` with its fold unrolled (`lift.rules.column_sums.window_steps`). This is the CGO 2018 paper's lowering
of a stencil with overlapped tiles, its tiles walked with `MapSeqSlide`: each row of the grid read once by a strip
(plus the halo its neighbour reads too), where the row blocks (`lift.rules.stencil_row_blocking`) read each row
once per block of rows.
"""

from __future__ import annotations

from lift.ir.patterns import Map, Transpose
from lift.rules.column_sums import window_steps
from lift.rules.strategy import (Strategy, argument, argument_is, at_first, first_of, is_call, mapped_body, normalize,
                                 rewrite)

strips_map = is_call(Map) & argument_is(is_call(Transpose))
"""The map over the column strips that `column-strips` gives: a map over the transposition of the tiled rows."""


packed_views = normalize(first_of(("transpose-transpose-id", "map-fusion")))
"""The views of `vectorize-windows`' packing of a band brought together: one view of each row of the band."""


def _band(w: int) -> Strategy:
    """At a band's map over its `w` neighbourhoods: each fold unrolled, the neighbourhoods in `w` lanes, the band
    read through one view of each of its rows (`packed_views`)."""
    return window_steps >> rewrite("vectorize-windows", n=w) >> packed_views


def column_strip_walk(w: int, extra: int = 0, h: int = 0) -> Strategy:
    """At `lift.rules.column_sums.grid_windows`: strips of `w` results (`extra`: the results a row is extended by,
    `column-strips`), each walked down by one global work-item of dimension 0, or in blocks of `h` rows (`h`
    dividing the rows of results) on dimension 1 (see the module)."""
    walk = (mapped_body(_band(w)) >> rewrite("map-view-before-slide") >> rewrite("map-to-seq")
            >> rewrite("map-seq-slide"))
    if h:
        rows = (argument(0, rewrite("slide-tiling", tile=h)) >> rewrite("map-join")
                >> argument(0, rewrite("map-fusion") >> rewrite("map-to-global", dim=1) >> mapped_body(walk)))
    else:
        rows = walk
    strip = rewrite("map-to-global", dim=0) >> mapped_body(rows)
    strategy = rewrite("column-strips", w=w, extra=extra) >> at_first(strips_map, strip)
    return Strategy(strategy.run, f"column_strip_walk({w}, {extra}, {h})")
