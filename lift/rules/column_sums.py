"""Column reductions in one pass over the rows: the partial-reduction macro rule for `map(reduce) ∘ transpose`.

A column reduction `map(reduce(f, z))(transpose(A))` (numpy's `A.sum(axis=0)`, or a transposed gemv's
`map(λcol. reduce(f, z)(map(g)(zip(col, y))))(transpose(A))`) read column after column walks the matrix with
the stride of a row. `partial_column_sums(chunk, width)` derives, by rules only:

    map(reduce(f, z))(transpose(A))
      → map(reduce(f, z) ∘ map(id))(transpose(A))                                      (reduce-map-id, 3(e))
      → map(reduce(f, z))(transpose(map(λc. join(map(..)(transpose(c))))(split-chunk(A))))
                                                                    (transpose-partial-reduction, 3(d))
      → .. map-global(λc. join(transpose(reduce-seq(λacc, row. map(λe. f(acc_e, g(row_e)))(zip(acc, row)),
                                                    [z, .., z])(c))))(split-chunk(A)) ..
                                                      (map-reduce-interchange, 3(d); map-to-global, 4(a))

each work-item folding `chunk` rows, read as they lie in memory, into a row of accumulators (in private
memory, 4(d); updated `width` lanes at a time, 4(e)); the column reductions of the partial sums, one row per
chunk, follow on global work-items. Every step re-associates the reduction as Figure 3(d) does, so the rules
require an operator known to be associative.

A transposition `map(map(f))(transpose(A))` written one element per work-item reads `A` a row apart from one
element to the next. `transpose_tiles(b)` gives each global work-item `b` rows of the result, written tile by
tile: split-join (3(c)) on both dimensions, map fission (3(f)) and `map-interchange` (5) put the loop over
`b × b` tiles outside the loops within a tile, which read `b` adjacent elements of `b` rows of `A` (cache lines)
and write `b` adjacent elements of `b` rows of the result.

A stencil's map over the windows of a grid, `map(λw. reduce(f, z)(map(g)(zip(w, k))))(slide(3, 1)(x))`, is a
map over the rows of a matrix, so it is the map over the columns of its transpose (`map-transpose-transpose`,
3(e)): `blocked_windows(w, width)` splits those columns into blocks of `w` (split-join, 3(c); `split-transpose`),
and folds each block's window rows, whole shifted rows of `w` grid values, into `w` accumulators
(`map-reduce-interchange`, 3(d)), `width` lanes at a time (4(e)), one global work-item per block: each
work-item computes `w` outputs from contiguous reads, where a work-item per output gathers its window.

`vector_windows(w, width)` keeps the windows and vectorises across them instead: each window's fold made
sequential and unrolled (`reduce-seq-unroll`, so that a flattened 2-D window's `join` and the grid's `pad` need
no division and no loop-carried index), then blocks of `w` windows, each block's map over its windows vectorised
`width` windows at a time (`vectorize-windows`, 4(e)): the fold accumulates `width` results in one vector
register from unaligned vector loads of the shifted rows, and stores them as one vector; the vectors of a block
one after another (`map-seq-unswitch`), each testing once whether its reads are clear of the grid's clamped
edges, and then reading without a check each.
"""

from __future__ import annotations

from typing import Optional

from lift.ir.nodes import FunCall, Lambda, is_computation
from lift.ir.opencl_patterns import ToPrivate
from lift.ir.userfun import UserFun
from lift.types.types import ArrayType
from lift.ir.patterns import Map, MapSeq, Reduce, ReduceSeq, Transpose
from lift.rules.macro_rules import computes, vectorised_block
from lift.rules.strategy import (Selector, Strategy, argument, argument_is, arguments, body, everywhere, function,
                                 identity, is_call, mapped_body, normalize, rewrite, try_, where)

GLOBAL0 = rewrite("map-to-global", dim=0)


def _reduces_columns(ctx) -> bool:
    return _reduces(ctx.node.f.f)


def _reduces(f) -> bool:
    return isinstance(f, Reduce) or (isinstance(f, Lambda) and len(f.params) == 1 and isinstance(f.body, FunCall)
                                     and isinstance(f.body.f, Reduce))


column_reduction = is_call(Map) & argument_is(is_call(Transpose)) & Selector(_reduces_columns, "reduces_columns")
"""A map of a reduction over the columns of a matrix: `map(reduce(f, z) [∘ map(g)])(transpose(A))`."""

private_folds = normalize(where(is_call(ReduceSeq)) >> rewrite("private-accumulator"))
"""Every work-item's array accumulator in private memory (`private-accumulator`, 4(d))."""


def vector_copies(width: int) -> Strategy:
    """Every work-item's array accumulators private (`private_folds`), and copied out of private memory `width`
    lanes at a time (`vectorize-map`, 4(e), at the copy's innermost `map-seq(id)`) where the row allows."""
    copy_out = is_call(MapSeq) & argument_is(is_call(ToPrivate))
    return private_folds >> everywhere(copy_out, function(function(rewrite("vectorize-map", n=width))))


def partial_column_sums(chunk: int, width: Optional[int] = None) -> Strategy:
    """At a `column_reduction`: chunks of `chunk` rows, each folded row by row into a row of accumulators by
    one global work-item (its update over `width`-lane vectors where given), then the column reductions of
    the partial sums on global work-items (see the module)."""
    per_chunk = arguments(0, 0)
    lanes = per_chunk(mapped_body(vectorised_block(width))) if width else identity
    return (try_(function(function(rewrite("reduce-map-id"))))
            >> rewrite("transpose-partial-reduction", chunk=chunk)
            >> per_chunk(mapped_body(argument(0, rewrite("map-reduce-interchange"))))
            >> per_chunk(rewrite("map-to-global", dim=0))
            >> lanes
            >> rewrite("map-to-global", dim=0))


reads_its_matrix = Selector(lambda ctx: not any(is_computation(n) for n in ctx.node.args[0].subterms()),
                            "reads_its_matrix")
"""A map over the columns of a matrix in memory, or a view of one: a padded view of a matrix that a kernel computes
would have to be written through, and none is."""


def blocked_columns(w: int, padded: bool = False) -> Strategy:
    """At a `column_reduction` over a number of columns that `w` divides: the columns in blocks of `w`
    (split-join, 3(c); `split-transpose`), each block's columns folded row by row into `w` accumulators
    (`map-reduce-interchange`, 3(d)) by one global work-item, which reads `w` adjacent elements of each row of
    the matrix where a work-item per column reads one element per row. `padded`: over any number of columns,
    first padded to a multiple of `w` with copies of the last column (`pad-map-repeat`, the padded columns'
    results dropped), each row padded rather than the transposition (`pad-transpose`, `lift.rules.padding`), so
    that the blocks divide (only where the matrix is read, `reads_its_matrix`); the accumulators then private
    (`private_folds`), so that only their copy out tests which columns are kept, not every update."""
    blocks = (rewrite("split-join", n=w) >> arguments(0, 0)(rewrite("split-transpose"))
              >> argument(0, rewrite("map-fusion")) >> argument(0, mapped_body(rewrite("map-reduce-interchange")))
              >> argument(0, GLOBAL0))
    if padded:
        blocks = (where(reads_its_matrix) >> rewrite("pad-map-repeat", k=w)
                  >> arguments(0, 0)(rewrite("pad-transpose")) >> argument(0, blocks >> private_folds))
    return try_(function(function(rewrite("reduce-map-id")))) >> blocks


def _small_rows(ctx) -> bool:
    return _windows_of(ctx.node.args[0].t, ctx.choices)


def _windows_of(t, choices) -> bool:
    """Whether `t` is an array of windows: of arrays of at most `MAX_WINDOW` elements (a size variable's bound value:
    a convolution's channels)."""
    length = getattr(getattr(t, "elem", None), "length", None)
    n = None if length is None else choices.value(length)
    return n is not None and n <= MAX_WINDOW


def _applies_a_user_function(f) -> bool:
    """`λw. u(..w..)`: a user function of arrays (reading the window at its indices) of the element."""
    return (isinstance(f, Lambda) and len(f.params) == 1 and isinstance(f.body, FunCall)
            and isinstance(f.body.f, UserFun) and any(isinstance(t, ArrayType) for t in f.body.f.in_types))


def _maps_windows(ctx) -> bool:
    g = ctx.node.f.f
    return (isinstance(g, Map) and (_reduces(g.f) or _applies_a_user_function(g.f))
            and isinstance(ctx.node.args[0].t.elem, ArrayType) and _windows_of(ctx.node.args[0].t.elem, ctx.choices))


MAX_WINDOW = 64
"""The most elements of a window (a row of the matrix a stencil maps over): a map over longer rows (gemv's map
over the rows of its matrix) is not a stencil; folding its columns would read the matrix by columns."""

windows = is_call(Map) & Selector(_reduces_columns, "reduces_rows") & Selector(_small_rows, "of_windows")
"""A map of a reduction over small windows: a stencil `map(λw. reduce(f, z)(..w..))(slide(n, s)(x))`, or the map
over a row of 2-D neighbourhoods `map(λnb. reduce(f, z)(..join(nb)..))(row)`."""

user_function_windows = (is_call(Map) & Selector(lambda ctx: _applies_a_user_function(ctx.node.f.f),
                                                 "applies_a_user_function") & Selector(_small_rows, "of_windows"))
"""A map of a user function of arrays over small windows, as the stencil paper writes a stencil (CGO 2018):
`map(λw. jacobi3(w))(slide(3, 1)(x))`, or the map over a row of 2-D neighbourhoods `map(λnb. jacobi5(join(nb)))(row)`;
the function reads the window at its indices (`vector_windows` vectorises it as it is)."""


def blocked_windows(w: int, width: Optional[int] = None, lowered: Strategy = GLOBAL0) -> Strategy:
    """At `windows`: its results in blocks of `w`, each block folding the windows' columns into `w` private
    accumulators, `width` lanes at a time (see the module); the map over the blocks then `lowered` (one global
    work-item per block by default). A window read through a view (`join(nb)`) is first mapped on its own
    (`map-view-fission`), so that the windows are the rows of a matrix. With `width` lanes the private
    accumulators are copied out `width` lanes at a time (`vector_copies`)."""
    lanes = argument(0, mapped_body(vectorised_block(width))) if width else identity
    copies = try_(vector_copies(width)) if width else identity
    return (try_(rewrite("map-view-fission")) >> rewrite("map-transpose-transpose") >> rewrite("split-join", n=w)
            >> arguments(0, 0)(rewrite("split-transpose")) >> argument(0, rewrite("map-fusion"))
            >> argument(0, mapped_body(rewrite("map-reduce-interchange"))) >> lanes >> argument(0, lowered) >> copies)


def _mapped(s: Strategy) -> Strategy:
    """`s` at the body of the function of the map at the focus, or at that function where it is a pattern."""
    return mapped_body(s) | function(function(s))


sequential_window_fold = (try_(_mapped(rewrite("reduce-map-id")))
                          >> mapped_body(argument(0, rewrite("map-to-seq")) >> rewrite("reduce-to-seq"))
                          >> _mapped(rewrite("reduce-seq-map-seq-fusion")))
"""At `windows`: each window's `reduce(f, z) ∘ map(g)` one sequential fold (`reduce-seq`); a fold of the window itself
is one of `map(id)` (`reduce-map-id`), and `map(λw. reduce-seq(f', z)(w))` once fused is the map's function,
`map(reduce-seq(f', z))`. Rolled, a 1-D window's reads are affine in the fold's counter, so that the edges of the
grid are still tested once per vector of windows (`map-seq-unswitch`), and the kernel holds one step, not `n`."""

unrolled_window_fold = sequential_window_fold >> _mapped(rewrite("reduce-seq-unroll"))
"""At `windows`: `sequential_window_fold`, unrolled (`reduce-seq-unroll`): the indices into a flattened window
(`join`) and the grid's edges are constants at each step."""

window_steps = unrolled_window_fold | where(user_function_windows) | sequential_window_fold
"""At `windows`, `unrolled_window_fold`; at `user_function_windows`, nothing: the user function is the window's
computation, straight-line code reading the window's private copy (`private-argument`, later); at a window of a size
variable's length (a convolution's channels), which no unrolling fixes, `sequential_window_fold`."""

rolled_window_steps = sequential_window_fold | where(user_function_windows)
"""`window_steps` with each window's fold a loop (`sequential_window_fold`)."""


def vector_windows(w: int, width: int, lowered: Strategy = GLOBAL0, padded: bool = False,
                   fold: Strategy = window_steps, rolled: bool = False) -> Strategy:
    """At `windows` or `user_function_windows`: each window's fold made sequential (`fold`), then blocks of `w`
    windows (split-join, 3(c)), each block's windows `width` at a time in the lanes of vectors (`vectorize-windows`,
    4(e)), one vector after the other, each testing the grid's edges once (`map-seq-unswitch`); the map over the
    blocks then `lowered` (one global work-item per block by default). `padded`: the windows first padded to a
    multiple of `w` (`pad-map`, `lift.rules.padding`), the results of the padding dropped, so that `w` need not
    divide their number; the vectors that read past the last window test that once too. `fold`: what makes each
    window's computation sequential, unrolled by default (`rolled_window_steps`: a loop; a stencil's row blocks,
    `lift.rules.stencil_row_blocking`, give it their own: their windows are columns of windows). `rolled`: the
    vectors at the edges, which check each read, fold their windows in loops (`map-seq-unswitch(f, rolled)`)."""
    vectors = everywhere(computes, rewrite("map-to-seq") >> rewrite("map-seq-unswitch", rolled=rolled))
    lanes = try_(rewrite("map-eta-expansion")) >> mapped_body(rewrite("vectorize-windows", n=width) >> vectors)
    blocks = fold >> rewrite("split-join", n=w) >> argument(0, lanes >> lowered)
    return rewrite("pad-map", k=w) >> argument(0, blocks) if padded else blocks


folded_window_rows = mapped_body(argument(0, argument(0, rewrite("zip-join")) >> rewrite("map-join"))
                                 >> rewrite("reduce-join"))
"""At `windows` over 2-D neighbourhoods read flat (`reduce(f, z)(map(g)(zip(join(nb), join(k))))`): each window
folded row by row, then over the row results (`lift.rules.join_folding`), so that no index is divided by the
width of a row."""

grid_windows = is_call(Map) & Selector(_maps_windows, "maps_windows")
"""A map over the rows of a grid of a map over each row's windows: a 2-D stencil `map(map(λnb. ..))(slide2d(x))`."""


def blocked_grid(w: int, width: Optional[int] = None) -> Strategy:
    """At `grid_windows`: each row's windows in blocks of `w` (`blocked_windows`, on global work-items of dimension
    0), the rows on dimension 1."""
    return (try_(rewrite("map-eta-expansion")) >> mapped_body(blocked_windows(w, width))
            >> rewrite("map-to-global", dim=1))


def vector_grid(w: int, width: int, padded: bool = False) -> Strategy:
    """At `grid_windows`: each row's windows in blocks of `w` (padded to a multiple of `w` if `padded`), `width`
    windows to a vector (`vector_windows`, on global work-items of dimension 0), the rows on dimension 1."""
    return (try_(rewrite("map-eta-expansion")) >> mapped_body(vector_windows(w, width, padded=padded))
            >> rewrite("map-to-global", dim=1))


def folded_grid() -> Strategy:
    """At `grid_windows`: each window folded row by row (`folded_window_rows`), one global work-item per window,
    the windows of a row on dimension 0, the rows on dimension 1."""
    return (try_(rewrite("map-eta-expansion")) >> mapped_body(folded_window_rows >> rewrite("map-to-global", dim=0))
            >> rewrite("map-to-global", dim=1))


transposition = (is_call(Map) & argument_is(is_call(Transpose))
                 & Selector(lambda ctx: isinstance(ctx.node.f.f, Map), "maps_rows"))
"""A map of a map over the columns of a matrix: a transposition `map(map(f))(transpose(A))`."""


def transpose_tiles(b: int) -> Strategy:
    """At a `transposition`: `b` rows of the result per global work-item, computed in `b × b` tiles (see the
    module)."""
    rows = arguments(0)
    tile_loop = rows(function(function(body(argument(0, rewrite("map-fission", at=1))))))
    return (rewrite("split-join", n=b) >> rows(function(function(function(rewrite("split-join", n=b)))))
            >> rows(function(function(rewrite("map-fission", at=1)))) >> tile_loop
            >> rows(function(function(body(argument(0, rewrite("map-interchange"))))))
            >> rows(rewrite("map-to-global", dim=0)))
