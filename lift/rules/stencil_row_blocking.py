"""Stencil row blocking: a work-item computes `h` rows of a 2-D stencil's results, reading the rows of the grid they
share once.

    map(map(f))(X)                                   (X = slide2d(pad2d(a)): row i, the windows of rows i..i+2)
      → join ∘ map-global[1](λb. transpose(V(map-seq-unroll(f'))(transpose(b)))) ∘ split-h(X)

where `b` is a block of `h` rows of windows, `transpose(b)` its columns (a column: the `h` windows one above the
other, of rows i..i+h+1 of the grid), `f'` is `f` with its fold sequential and unrolled, and `V(g)` computes `g`
of every column, `n` columns at a time in the lanes of vectors, in blocks of `w` columns on global work-items of
dimension 0 (`lift.rules.column_sums.vector_windows`, whose windows are now the columns: `vectorize-windows`,
4(e), on windows of rank 3). Derived by rules only: split-join (3(c)) on the map over the rows, then in each
block `map-interchange` (5), `map(map(f)) → transpose ∘ map(map(f)) ∘ transpose`; each window's fold
made sequential and unrolled (`reduce-seq-unroll`), the map over a column's `h` windows sequential and unrolled
(`map-to-seq`, `map-seq-unroll`); the columns vectorised in blocks; the blocks of rows on dimension 1. Where `h`
does not divide the rows (or `w` the columns), the map is first padded to a multiple of it (`pad-map`), the
padding's results dropped.

Why: one vector of a column computes `n` results of each of `h` rows; unrolled, the windows of consecutive
rows read the same shifted vectors of the grid (the `h + 2` rows of the block's windows, each read by up to three
of them) at the same addresses, which the OpenCL compiler may load once: `3(h + 2)` distinct vector loads for `h`
vectors of results instead of `9h`, and `h` independent chains of additions in flight (the row blocking of
`lift.rules.row_blocking`, for stencils).
"""

from __future__ import annotations

from lift.rules.column_sums import vector_windows, window_steps
from lift.rules.paper_derivations import mapped
from lift.rules.strategy import Strategy, argument, mapped_body, rewrite

column_folds = (rewrite("map-eta-expansion") >> mapped_body(window_steps >> rewrite("map-to-seq"))
                >> mapped(rewrite("map-seq-unroll")))
"""At the map over a block's columns: each window's fold unrolled (a user function of the window as it is,
`lift.rules.column_sums.window_steps`), and the `h` windows of a column one after the other, unrolled."""


def stencil_row_blocks(h: int, w: int, width: int, padded_rows: bool = False, padded_columns: bool = False
                       ) -> Strategy:
    """At `lift.rules.column_sums.grid_windows` (`map(map(f))` over a 2-D stencil's rows of windows): blocks of
    `h` rows on global work-items of dimension 1, each block's columns in blocks of `w` on dimension 0, `width`
    columns to a vector (module docstring); `padded_rows`, `padded_columns`: the rows, the columns padded to a
    multiple of `h`, of `w` first (`pad-map`)."""
    columns = vector_windows(w, width, padded=padded_columns, fold=column_folds)
    block = rewrite("map-eta-expansion") >> mapped_body(rewrite("map-interchange") >> argument(0, columns))
    blocks = rewrite("split-join", n=h) >> argument(0, block >> rewrite("map-to-global", dim=1))
    strategy = rewrite("pad-map", k=h) >> argument(0, blocks) if padded_rows else blocks
    return Strategy(strategy.run, f"stencil_row_blocks({h}, {w}, {width})")
