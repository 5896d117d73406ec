"""The moves the rewrite search (`lift.explore.rewrite_search`) offers at each place of a program: at a reduction,
a column reduction, a stencil's windows (1-D and 2-D), a transposition and a map outside every map. Each move is
`(name, params, strategy)`, a strategy of `lift.rules` that applies at that place, so that every candidate is a
derivation; the search's bandit draws a move's kind, then its parameters."""

from __future__ import annotations

import math
from functools import lru_cache

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, Lambda
from lift.rules.block_choice import row_padding
from lift.rules.column_strips import column_strip_walk
from lift.rules import location as L
from lift.rules.column_sums import (blocked_columns, blocked_grid, blocked_windows, folded_grid, folded_window_rows,
                                   grid_windows, partial_column_sums, transpose_tiles, vector_grid, vector_windows)
from lift.rules.default_lowering import GROUP
from lift.rules.macro_rules import MAX_PADDING
from lift.rules.paper_derivations import (groups, local_tree_groups, mapped, sequential_chunks, vector_groups,
                                          vector_lane_chunks, vectorised_work_groups)
from lift.rules.reduction_choice import pad_reduction, pad_results
from lift.rules.row_blocking import row_blocks
from lift.rules.stencil_lowering import under_views
from lift.rules.stencil_row_blocking import stencil_row_blocks
from lift.rules.strategy import argument, everywhere, is_call, mapped_body, rewrite, where
from lift.rules.struct_of_vectors import struct_of_vectors

GLOBAL0 = rewrite("map-to-global", dim=0)


def _pow2s(lo: int, hi: int) -> list:
    return [1 << k for k in range(max(hi, 1).bit_length()) if lo <= (1 << k) <= hi]


@lru_cache(maxsize=1024)
def reduction_moves(length: int, in_map: bool, scalars: bool, zipped: bool) -> tuple:
    """The moves at a reduction `reduce(f, z) ∘ map(g)` over `length` elements: `(name, params, strategy)`,
    each strategy applying at the reduction.

    `scalars`: the map's elements are scalars (so it may be vectorised); `zipped`: it maps over a zip.
    """
    moves = [("sequential", {}, argument(0, rewrite("map-to-seq")) >> rewrite("reduce-to-seq")
              >> rewrite("reduce-seq-map-seq-fusion"))]

    def add(name, params, k, strategy):
        if length % k:  # chunks of k need the input padded to a multiple of k (`lift.rules.padding`), outside
            # every map the map's results where its input cannot be (`pad-reduction-result`)
            padded = pad_reduction(k) if in_map else pad_reduction(k) | pad_results(k)
            params, strategy = dict(params, padded=True), padded >> strategy
        moves.append((name, params, strategy))

    for width in ROW_LANES if scalars and in_map else (4,) if scalars else ():
        lanes = argument(0, rewrite("vectorize-zip-map" if zipped else "vectorize-map", n=width)) >> rewrite(
            "reduce-lanes")
        if width == 4 or length % width == 0:
            add("vectorize", {"width": width}, width, lanes)
        if length % width and length > width:  # the head's lanes, the tail's few elements folded after them
            moves.append(("vectorize", {"width": width, "tail": True},
                          rewrite("reduce-tail", k=width) >> argument(0, argument(0, lanes))))
    if in_map:
        return tuple(moves)
    finish = rewrite("reduce-to-seq")
    for c in _pow2s(64, length // 8):
        chunks = sequential_chunks(c)
        add("chunks-global", {"chunk": c}, c, chunks >> groups(rewrite("map-to-global", dim=0)) >> finish)
        add("chunks-workgroup", {"chunk": c}, c, chunks >> groups(rewrite("map-to-workgroup", dim=0)) >> finish)
    for g in _pow2s(1024, length // 8):
        for k in (1, 4, 16, 64):
            per_item = g // 4 // k
            if per_item < 16:
                continue
            lanes_ = vector_lane_chunks(g, per_item)
            items = mapped_body(argument(0, rewrite("map-to-local", dim=0)))
            add("lanes-workgroup", {"group": g, "items": k}, g,
                lanes_ >> vector_groups(rewrite("map-to-workgroup", dim=0) >> items) >> finish)
            add("lanes-global", {"group": g, "items": k}, g,
                lanes_ >> vector_groups(rewrite("map-to-global", dim=0)
                                        >> mapped_body(argument(0, rewrite("map-to-seq")))) >> finish)
    for g in _pow2s(4096, length // 4):
        for items in (32, 64, 128):
            if g // items < 2:
                continue
            add("local-tree", {"group": g, "items": items}, g,
                local_tree_groups(g, items, int(math.log2(items))) >> finish)
    return tuple(moves)


@lru_cache(maxsize=1024)
def array_reduction_moves(length: int, in_map: bool, scalars: bool) -> tuple:
    """The moves at a reduction of an array no map computes, `reduce(f, z)(x)` (`x / sum(x)`): those of
    `reduction_moves`, after `reduce-map-id` gives the reduction the map they start from."""
    return tuple((name, params, rewrite("reduce-map-id") >> strategy)
                 for name, params, strategy in reduction_moves(length, in_map, scalars, False))


@lru_cache(maxsize=1024)
def column_moves(rows: int, cols: int) -> tuple:
    """The moves at a column reduction `map(reduce(f, z))(transpose(A))` of a matrix of `rows` rows and `cols`
    columns: a global work-item per column, or per chunk of rows folded row by row into partial column sums,
    scalars or vectors, or per block of 8 to 64 columns folded row by row, the columns padded to a multiple of
    the block where it does not divide them and that adds at most `MAX_PADDING` (`lift.rules.column_sums`)."""
    moves = [("global", {}, rewrite("map-to-global", dim=0))]
    for chunk in _pow2s(4, rows // 2):
        if rows % chunk == 0:
            moves += [("partial-sums", {"chunk": chunk, "width": width or 1}, partial_column_sums(chunk, width))
                      for width in (None, 4, 8)]
    moves += [("blocked-columns", {"block": w, "padded": cols % w != 0}, blocked_columns(w, cols % w != 0))
              for w in _pow2s(8, min(cols // 2, 64)) if -cols % w <= cols * MAX_PADDING]
    return tuple(moves)


@lru_cache(maxsize=1024)
def window_moves(length: int, in_map: bool) -> tuple:
    """The moves at a stencil's map over `length` windows: the map's moves (inside a map, sequential), each flat
    2-D window folded row by row (`lift.rules.column_sums.folded_window_rows`), blocks of results, each
    folding whole shifted rows of the grid (`lift.rules.column_sums.blocked_windows`), or blocks of windows
    computed a vector of windows at a time (`lift.rules.column_sums.vector_windows`; over the windows padded to a
    multiple of the block where it does not divide `length`), one global work-item per block (inside a map, one
    after the other)."""
    rows = (("folded-rows", {}, folded_window_rows >> (rewrite("map-to-seq") if in_map else GLOBAL0)),)
    if in_map:
        seq = rewrite("map-to-seq")
        return ((("sequential", {}, seq),) + rows
                + _blocked(length, "blocked", lambda w, width: blocked_windows(w, width, seq))
                + _vectors(length, "vector-windows", lambda w, width, padded: vector_windows(w, width, seq, padded)))
    return (map_moves(length, False) + rows + _blocked(length, "blocked", blocked_windows)
            + _vectors(length, "vector-windows", lambda w, width, padded: vector_windows(w, width, padded=padded)))


@lru_cache(maxsize=1024)
def grid_moves(rows: int, cols: int) -> tuple:
    """The moves at a 2-D stencil's map over `rows` rows of `cols` windows: a global work-item per row (its windows
    then get `window_moves`), a work-item per output on two dimensions, each window folded row by row
    (`lift.rules.column_sums.folded_grid`), or the 2-D mapping of `lift.rules.column_sums.blocked_grid`: blocks
    of a row's results on global work-items of dimension 0, the rows on dimension 1, or its blocks of windows in
    vectors (`lift.rules.column_sums.vector_grid`, padded where the block does not divide `cols`), or blocks of
    `STENCIL_ROWS` rows whose columns of windows are vectorised so (`lift.rules.stencil_row_blocking`, padded where
    the blocks do not divide `rows`, `cols`), or column strips walked down with the window in registers
    (`column_strip_moves`)."""
    return ((("global", {}, GLOBAL0), ("folded-rows-2d", {}, folded_grid()))
            + _blocked(cols, "blocked-2d", blocked_grid) + _vectors(cols, "vector-windows-2d", vector_grid)
            + row_block_moves(rows, cols) + column_strip_moves(rows, cols))


def batched_grid(ctx):
    """The 2-D stencil's map over rows of windows (`grid_windows`) that the map called at `ctx` computes for each of
    its elements, under views: a convolution's map over its filters, `map(λk. map(map(λnb. ..))(..x..))(filters)`;
    None where it computes none."""
    pattern = L.descend(ctx, "f") if isinstance(ctx.node, FunCall) and type(ctx.node.f) is P.Map else None
    function = L.descend(pattern, "f") if pattern is not None else None
    here = L.descend(function, "body") if function is not None and isinstance(function.node, Lambda) else None
    while here is not None and not grid_windows(here) and P.is_view(here.node.f):
        here = L.argument(here, 0)
    return here.node if here is not None and grid_windows(here) and P.is_high_level(here.node.f) else None


def batched_moves(moves: tuple) -> tuple:
    """`moves` of a 2-D stencil (`grid_moves`) for the stencil computed for each element of a map (`batched_grid`):
    that map on global work-items of dimension 2, each move at the stencil in its function."""
    return tuple((name, params, rewrite("map-to-global", dim=2) >> mapped_body(under_views(where(grid_windows) >> s)))
                 for name, params, s in moves)


STENCIL_ROWS, STENCIL_ROW_COLUMNS = (2, 4, 8), (64, 256)
"""The rows per work-item of a 2-D stencil's row blocks, and the columns of a block (`grid_moves`)."""


EARLY_ROW_BLOCKS = ((2, 64, 16), (4, 256, 16))
"""The stencil row blocks `(rows, block, width)` measured right after the default lowering: the fastest of the
first measurements at 2048² on PoCL (2 cores, load 8-9: 3.2 and 3.0 ms best against the default's 3.6)."""


STRIP_ROWS = (4, 8, 16)
"""The rows of a column strip a work-item walks down (`column_strip_moves`), besides the whole strip."""

EARLY_COLUMN_STRIPS = ((16, 4), (8, 4))
"""The column strip walks `(w, h)` measured right after the default lowering, as `EARLY_ROW_BLOCKS`: the steadiest
at 2048² on PoCL (2 cores, load 6-8, best of 35-45 launches: 16x4 3.6 and 3.0 ms in two runs, 8x4 2.6 and 4.2 ms;
16x8 3.2 then 11.7 ms; 16 rows or more 13-64 ms, a whole strip per work-item 28-33 ms: a work-item walking down
`h + 2` rows reads as many lines a row apart, streams the CPU's prefetcher loses track of as `h` grows)."""


def column_strip_moves(rows: int, cols: int) -> tuple:
    """`column_strip_walk(w, extra, h)` (`lift.rules.column_strips`): strips of `w` results, 8 or 16 (a vector's
    lanes), the rows extended by `extra` results where `w` does not divide `cols`; each strip walked down whole
    by a work-item (`h` 0), or in blocks of `STRIP_ROWS` rows that divide `rows`, a work-item each."""
    return tuple(("column-strips", {"width": w, "rows": h, **({"padded": True} if cols % w else {})},
                  column_strip_walk(w, -cols % w, h))
                 for w in (8, 16) if w < cols for h in (0,) + STRIP_ROWS if h == 0 or (rows % h == 0 and rows > h))


def row_block_moves(rows: int, cols: int) -> tuple:
    """`stencil_row_blocks(h, w, width)` for `STENCIL_ROWS` that divide `rows`, `STENCIL_ROW_COLUMNS` and vectors of
    8 or 16 lanes, the columns padded where `w` does not divide `cols` (up to the power of two at or above it).
    Rows padded to a multiple of `h` are not proposed: their results are written lane by lane under the padding's
    tests (jacobi2d 2001x1999 in blocks of 2 rows took 9.8 ms of CPU time, best of 15, against 5.8 ms a row per
    work-item)."""
    top = 1 << max(cols - 1, 1).bit_length()
    return tuple(("row-blocks-2d", {"rows": h, "block": w, "width": width, **({"padded": True} if cols % w else {})},
                  stencil_row_blocks(h, w, width, padded_columns=cols % w != 0))
                 for h in STENCIL_ROWS for w in STENCIL_ROW_COLUMNS for width in (8, 16)
                 if rows % h == 0 and rows >= 2 * h and w <= top)


def _blocked(length: int, name: str, strategy) -> tuple:
    """`strategy(w, width)` for blocks of `w` results (8 to 256, dividing `length`), scalars or `width` lanes."""
    return tuple((name, {"block": w, "width": width or 1}, strategy(w, width))
                 for w in _pow2s(8, min(length // 2, 256)) if length % w == 0
                 for width in (None, 4, 8, 16) if width is None or width <= w)


VECTOR_WINDOW_BLOCKS = (64, 256, 1024, 4096)
"""The windows per work-item of `vector-windows` besides one vector's: short blocks give the driver more work-items
to spread over its cores, long ones fewer to schedule."""


def _vectors(length: int, name: str, strategy) -> tuple:
    """`strategy(w, width, padded)` for blocks of `w` windows (one vector of `width`, or `VECTOR_WINDOW_BLOCKS`),
    `width` of 4, 8 or 16: blocks that do not divide `length` over its windows padded to a multiple of `w`
    (`padded`), up to the power of two at or above `length` (`pad-map`'s multiples)."""
    top = 1 << max(length - 1, 1).bit_length()
    return tuple((name, {"block": w, "width": width, **({"padded": True} if length % w else {})},
                  strategy(w, width, bool(length % w)))
                 for width in (4, 8, 16) for w in (width,) + VECTOR_WINDOW_BLOCKS if w <= top and w % width == 0)


@lru_cache(maxsize=1024)
def transposition_moves(length: int) -> tuple:
    """The moves at a transposition's map over `length` columns: the map's moves, or `b` rows of the result per
    global work-item in `b × b` tiles (`lift.rules.column_sums.transpose_tiles`; the rules check that `b`
    divides both dimensions)."""
    return map_moves(length, False) + tuple(("tiles", {"tile": b}, transpose_tiles(b))
                                            for b in (4, 8, 16, 32) if length % b == 0)


VECTOR_GLOBAL_WIDTHS = (4, 8, 16)
"""The lanes of a work-item of `vector-global`: a compute-bound user function (BlackScholes' math) runs its
`exp`, `log` and `sqrt` on `float8` or `float16` at once, as numba's `prange` loop does on AVX lanes."""


ROW_LANES = (4, 8, 16)
"""The lanes of a reduction inside a map (a row's): wider vectors are more independent additions in flight."""
ROW_BLOCKS = (2, 4, 8)
"""The rows a work-item of a map of row reductions folds at once (`lift.rules.row_blocking`)."""


@lru_cache(maxsize=1024)
def map_moves(length: int, vectorisable: bool, tuples: bool = False, folds_rows: bool = False,
              vectors: bool = False) -> tuple:
    """The moves at a map outside every map over `length` elements, each strategy applying at the map; where a
    chunk does not divide `length`, the map computes over its input padded to a multiple of the chunk and keeps
    the first `length` results (`pad-map`, `lift.rules.padding`). A map of elements (or of vectors of
    `VECTOR_GLOBAL_WIDTHS` lanes) directly on global work-items is also proposed padded so that `GROUP`
    work-items divide the global size: a prime one (scal at N = 16,777,213) leaves the driver work-groups of one
    work-item, some 40 times slower on PoCL. Each work-item's chunk may be a loop over float4s
    (`vector-chunks-global`): padded, it tests one guard per vector, where a padded loop over scalars tests one
    per element (3 times slower on PoCL). A map giving tuples of scalars (`tuples`) is vectorised on global
    work-items only (`vectorize-tuple-map`). A map of reductions of its rows (`folds_rows`) may fold `ROW_BLOCKS`
    rows per work-item at once (`row-blocks`, over its rows padded to a multiple of the block where it does not
    divide `length` and that adds at most `MAX_PADDING`: `lift.rules.block_choice.row_padding`). A map whose
    function takes vectors apart by user functions (`vectors`: N-body's bodies) may compute `VECTOR_GLOBAL_WIDTHS`
    elements per work-item, one in each lane of the vectors of their components (`struct-of-vectors`,
    `lift.rules.struct_of_vectors`; its lane arrays padded where the width does not divide `length`)."""
    moves = [("global", {}, rewrite("map-to-global", dim=0))]
    if folds_rows:
        moves += [("row-blocks", {"rows": h, **({"padded": True} if padded else {})}, row_blocks(h, padded))
                  for h in ROW_BLOCKS for padded in (row_padding(length, h),) if padded is not None]

    def add(name, params, k, strategy):
        if length % k:
            params, strategy = dict(params, padded=True), rewrite("pad-map", k=k) >> argument(0, strategy)
        moves.append((name, params, strategy))

    if length % GROUP:
        add("global", {}, GROUP, rewrite("map-to-global", dim=0))
    for width in VECTOR_GLOBAL_WIDTHS if vectorisable or tuples else ():
        vectorise = rewrite("vectorize-tuple-map", n=width) if tuples else rewrite("vectorize-map", n=width)
        on_global = everywhere(is_call(P.Map), rewrite("map-to-global", dim=0)) if tuples else \
            argument(0, rewrite("map-to-global", dim=0))
        add("vector-global", {"width": width}, width * GROUP, vectorise >> on_global)
    moves += [("struct-of-vectors", {"width": w, **({"padded": True} if length % w else {})},
               struct_of_vectors(w, bool(length % w))) for w in (VECTOR_GLOBAL_WIDTHS if vectors else ())]
    for n in _pow2s(16, length // 16):
        split = rewrite("split-join", n=n)
        add("chunks-global", {"chunk": n}, n, split >> argument(0, rewrite("map-to-global", dim=0)
                                                                >> mapped(rewrite("map-to-seq"))))
        if n <= 4096:
            add("workgroup", {"chunk": n}, n, split >> argument(0, rewrite("map-to-workgroup", dim=0)
                                                                >> mapped(rewrite("map-to-local", dim=0))))
        if vectorisable and n % 4 == 0 and n <= 16384:
            add("vector-workgroup", {"chunk": n, "width": 4}, n, vectorised_work_groups(n))
        if vectorisable and n % 4 == 0:
            add("vector-chunks-global", {"chunk": n, "width": 4}, n, split >> argument(0, rewrite(
                "map-to-global", dim=0) >> mapped(rewrite("vectorize-map", n=4))
                >> mapped_body(argument(0, rewrite("map-to-seq")))))
    return tuple(moves)
