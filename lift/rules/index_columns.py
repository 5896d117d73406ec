"""Index lists walked as columns: SHOC's layout of MD's neighbour list, a search's choice of layout.

    map(λ(p, ns). fold(..)(ns))(zip(particles, neighbours))
      → (λt. map(λ(p, ns). fold(..)(ns))(zip(particles, transpose(t))))(map(map(id))(transpose(neighbours)))

A map that walks the rows of a matrix of integers it maps over (MD's neighbour indices, whose user function
gathers the neighbours' positions) may walk them as the columns of a copy of its transposition instead
(`transpose-copy-walked-rows`, `lift.rules.transposition`): on a GPU, neighbouring work-items then read
neighbouring indices at each step (coalesced, as SHOC lays the list out); on a CPU each work-item reads one index
per row of the copy, a cache line each, besides the copy's own pass (PoCL: 2-3 times slower,
`benchmarks/bench_md_variants.py`). So the layout is a decision of the search, measured, and a cost model must
price it; the default lowering keeps the rows. Matrices of floats are walked by rows or columns through the
transposition rules the other programs use (`map-interchange`, `transpose-copy`).
"""

from __future__ import annotations

from lift.ir import patterns as P
from lift.rules.default_lowering import high_level
from lift.rules.strategy import Selector, Strategy, inside, is_call, normalize, rewrite, where
from lift.rules.transposition import walked_argument_rows
from lift.types.types import Int


def _walks_index_rows(ctx) -> bool:
    rows = walked_argument_rows(ctx.node)
    return rows is not None and rows.t.elem.elem == Int


index_columns: Strategy = normalize(
    where(is_call(P.Map) & ~inside() & high_level & Selector(_walks_index_rows, "walks_index_rows"))
    >> rewrite("transpose-copy-walked-rows"))
"""Every high-level map outside every map that walks the rows of a matrix of integers it maps over, walking them as
the columns of a copy of its transposition (module docstring)."""
