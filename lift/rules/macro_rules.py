"""Macro rules: named compositions of the rules of Figures 3-4 and of `lift.rules.interchange`,
`lift.rules.tiling` and `lift.rules.register_blocking`, each a strategy placed by a selector (Steuwer, Remmelg,
Dubach, CASES 2016, whose macro rules derive matrix multiply). Their recorded steps are rules only, so a
derivation that uses them replays like any other.

- `block_columns(w)`: a map over the columns of a matrix in blocks of `w`, each block one fold into `w`
  accumulators (work per thread along the columns);
- `block_rows(h)`: the rows of the enclosing map in blocks of `h`, interchanged with the blocks of columns,
  each block one fold into `h × w` accumulators (work per thread along the rows: register blocking);
- `vectorised_block(n)`: the innermost update of the accumulators as `n`-lane vectors (4(e));
- `vector_accumulators`: the accumulators kept as vectors where the update reads and writes them only as vectors
  (`vector-accumulator`, `lift.rules.vector_accumulators`);
- `global_2d(outer, inner)`: the blocks of rows and of columns on two dimensions of global work-items
  (`map-global[1] ∘ map-global[0]`, or transposed);
- `tiled_workgroups(rows, cols)`: the blocks in 2-D tiles, one work-group each (`map-workgroup[1] ∘
  map-workgroup[0]`, `map-local[1] ∘ map-local[0]` within);
- `staged_tiles(tk)`: the reduction dimension of the tiles in tiles of `tk`, one fold per work-group, each step
  staging a tile of each operand in local memory (`lift.rules.fold_tiling`);
- `private_accumulators`: the accumulators in private memory (4(d));
- `unrolled`: every sequential map of constant length unrolled (`map-seq-unroll`), so that the private
  accumulators are indexed by constants and stay in registers;
- `padded_columns(k)`, `padded_rows(k)`: the map over the columns, or over the rows, padded to a multiple of `k`
  where `k` does not divide it (`pad-map-repeat`, `pad-transpose`, `pad-copy`: `lift.rules.padding`), so that the
  blocks divide at every size, the padding's results dropped;
- `packed_columns`: the blocks of columns of the right operand copied once, each block contiguous (`pack-copy`,
  `lift.rules.packing`: BLAS packing);
- `register_blocked(h, w, vector, dims, tiles, padded, packed, staged)`: all of these, then the default lowering of what is
  left;
- `left_rows_copied(blocked)`: a product whose left operand is a transposition (a covariance's `Xᵀ X`) over a
  copy of it (`transpose-copy-argument`, `lift.rules.transposition`), then `blocked`;
- `blocked_products(blocked)`: every product outside every map blocked by `blocked` (a `register_blocked`), innermost
  first, a user function of its results split off first where one is applied to them
  (`lift.rules.fold_splitting.product_split_off`), a map of products with one right operand flattened into one
  product (`flatten-map`: doitgen) and a product `A Bᵀ` that walks the rows of `B` given a copy of `Bᵀ`
  (`transpose-copy-rows`: syrk's `A Aᵀ`) where that is what lets `blocked` apply.
"""

from __future__ import annotations

from typing import Optional

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, Lambda
from lift.ir.patterns import AbstractMap, Map, ReduceSeq, Transpose, Zip
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.fold_splitting import product_split_off
from lift.rules.packing import column_blocks
from lift.rules.paper_derivations import mapped
from lift.rules.strategy import (Selector, Strategy, argument, argument_is, arguments, body, bottomup, function,
                                 identity, inside, is_call, is_fun, mapped_body, normalize, outermost, repeat, rewrite,
                                 topdown, try_, where)
from lift.types.types import ScalarType

column_map = is_call(Map) & argument_is(is_call(Transpose)) & inside(Map)
"""A map over the columns of a matrix (`map(g)(transpose(B))`) inside another map: matrix multiply's map over
the columns of B, for each row of A."""

zipped_columns = (is_call(Map) & inside(Map) & argument_is(is_call(Zip) & Selector(
    lambda c: any(isinstance(a, FunCall) and isinstance(a.f, Transpose) for a in c.node.args), "zips_columns")))
"""A map over the columns of a matrix zipped with other arrays inside another map (`map(g)(zip(transpose(C), d))`):
a product whose results a user function combines with `d` (2mm's `dot(t, c) + β d`), once that is split off
(`blocked_products`)."""

computes = Selector(lambda c: isinstance(c.node, FunCall) and isinstance(c.node.f, Map) and not P.is_view(c.node.f),
                    "computes")
"""A call of a map whose function computes (not a map of a data-layout function such as `map(join)`)."""


def block_columns(w: int) -> Strategy:
    """At the outermost `column_map` where it applies: the columns in blocks of `w`, each block's column
    reductions one fold into `w` accumulators:

        map(λb. reduce(f, z)(map(g)(zip(a, b))))(transpose(B))
          → join(map(λX. transpose(reduce-seq(λacc, t. map(..)(zip(acc, get-0 t)), [z]_w)(zip(X, a))))
                 (transpose(map(split-w)(B))))

    by split-join (3(c)), split-transpose, map fusion (3(f)) and map-reduce-interchange (3(d))."""
    return outermost(column_map, rewrite("split-join", n=w) >> arguments(0, 0)(rewrite("split-transpose"))
                     >> argument(0, rewrite("map-fusion"))
                     >> argument(0, mapped_body(rewrite("map-reduce-interchange"))))


MAX_PADDING = 1 / 8
"""The most padding `padded_columns` and `padded_rows` add, a fraction of the length they pad (and the default
lowering's padded column and row blocks, `lift.rules.block_choice`): more is work wasted on results that are
dropped."""


def _padded_map(k: int) -> Strategy:
    """At a map of a bound length `n`: itself where `k` divides `n`, else `take-n ∘ map(f) ∘
    pad-to-multiple-k(clamp)` (`pad-map-repeat`) where that adds at most `MAX_PADDING · n` elements."""
    def run(focus):
        n = focus.ctx.choices.value(focus.ctx.node.t.length)
        if n is None or -n % k > n * MAX_PADDING:
            return None
        return focus if n % k == 0 else rewrite("pad-map-repeat", k=k)(focus)

    return Strategy(run, lambda: f"padded_map({k})")


takes = is_call(Map) & Selector(lambda c: isinstance(getattr(c.node.f.f, "body", None), FunCall)
                                 and isinstance(c.node.f.f.body.f, P.Take), "takes")
"""A map whose function ends in a `take`: `map(λa. take-n(..a..))`."""


def padded_columns(k: int, copied: bool = True) -> Strategy:
    """At the outermost `column_map`: the columns padded to a multiple of `k` (`_padded_map`), each row of the
    matrix padded rather than the transposition (`pad-transpose`), which `block_columns` then splits; the
    `take` of each row of results then taken out of the map over rows (`map-fission`, 3(f)) and applied to the
    columns of the whole result (`map-take-transpose`), so that no map of a `take` is left to write through; and,
    where `copied`, the padded matrix copied once, outside the map over rows (`pad-copy`), so that the blocks'
    loops read whole rows of it with no clamped index: `k` adjacent elements, vector loads (not `copied`: a packed
    copy, `packed_columns`, reads the padded matrix instead)."""
    pad = _padded_map(k) >> try_(arguments(0, 0)(rewrite("pad-transpose")))
    copy = arguments(0, 0, 0)(rewrite("pad-copy")) if copied else identity
    return outermost(column_map, pad) >> try_(outermost(takes & ~inside(), rewrite("map-fission", at=1)
                                                        >> rewrite("map-take-transpose") >> copy))


def padded_rows(k: int) -> Strategy:
    """At the outermost computing map outside every map: its rows padded to a multiple of `k` (`_padded_map`)."""
    return outermost(computes & ~inside(), _padded_map(k))


def _mapped_fold(call) -> bool:
    body = getattr(call.f.f, "body", None)
    while isinstance(body, FunCall) and isinstance(body.f, Transpose):
        body = body.args[0]
    return isinstance(body, FunCall) and isinstance(body.f, ReduceSeq)


folds_of_rows = is_call(Map) & Selector(lambda c: _mapped_fold(c.node), "maps_a_fold")
"""A map whose function is a fold (possibly transposed): `map(λa. transpose(reduce-seq(..)(zip(X, a))))`."""


def block_rows(h: int) -> Strategy:
    """At the outermost map outside every map where it applies (after `block_columns`): its rows in blocks of
    `h`, the two loops interchanged, and the `h` folds of a block one fold into `h` rows of accumulators:

        map(λa. join(map(λX. F(X, a))(Y)))(A)
          → join(map(λAs. map(join)(transpose(map(λX. map(transpose)(transpose(reduce-seq(..)
                 (zip(X, transpose(As))))))(Y))))(split-h(A)))

    by split-join (3(c)), map fission (3(f)), map-map-interchange, fission again and
    map-reduce-seq-interchange."""
    one_fold = (where(folds_of_rows) >> rewrite("map-fission", at=1)
                >> argument(0, rewrite("map-reduce-seq-interchange")))
    blocked = (rewrite("split-join", n=h) >> argument(0, mapped(rewrite("map-fission", at=1)))
               >> argument(0, mapped_body(argument(0, rewrite("map-map-interchange")))))
    return outermost(is_call(Map) & ~inside(), blocked >> topdown(one_fold))


def vectorised_block(n: int) -> Strategy:
    """The innermost maps of the accumulators' update, `map(f)(zip(acc_row, b_row))` inside a fold, as `n`-lane
    vectors (`vectorize-zip-map`, 4(e)): the vectorisation of the innermost dimension of a register block."""
    update = (is_call(Map) & argument_is(is_call(Zip)) & inside(ReduceSeq)
              & Selector(lambda c: isinstance(c.node.t.elem, ScalarType), "of_scalars"))
    return normalize(where(update) >> rewrite("vectorize-zip-map", n=n))


vector_accumulators = normalize(where(is_call(ReduceSeq)) >> rewrite("vector-accumulator"))
"""Every fold whose accumulator's rows are read and written only as vectors keeps them as vectors
(`vector-accumulator`): after `vectorised_block`, the private accumulators are vector registers."""


def global_2d(outer: int = 1, inner: int = 0) -> Strategy:
    """The outermost computing map on global work-items of dimension `outer`, and the outermost computing map in
    its function on dimension `inner` (4(a)): `map-global[1](.. map-global[0](..) ..)`."""
    return outermost(computes & ~inside(), rewrite("map-to-global", dim=outer)
                     >> mapped_body(outermost(computes, rewrite("map-to-global", dim=inner))))


def tiled_workgroups(rows: int, cols: int) -> Strategy:
    """2-D tiling of the blocks (after `block_columns`, `block_rows`): the blocks of rows in tiles of `rows`,
    the blocks of columns in tiles of `cols` (`tiles`), then `map-workgroup[1] ∘ map-workgroup[0]` over the tiles
    and `map-local[1] ∘ map-local[0]` within (4(a)): work-groups of `rows × cols` work-items, each computing one
    block."""
    return _tiles(rows, cols) >> workgroups(mapped_body(outermost(computes, _local_2d)))


def _tiles(rows: int, cols: int) -> Strategy:
    """The blocks of rows in tiles of `rows`, the blocks of columns in tiles of `cols` (split-join, 3(c)), the tiles
    interchanged (fission, 3(f), and `map-map-interchange`): a map over tiles of rows of a map over tiles of
    columns of the blocks of a tile."""
    split_rows = outermost(computes & ~inside(), rewrite("split-join", n=rows) >> argument(0, mapped(
        rewrite("map-fission", at=2) | rewrite("map-fission", at=1))))
    split_cols = outermost(is_call(Map) & inside() & Selector(lambda c: isinstance(c.node.f.f, Lambda), "of_lambda"),
                           mapped_body(where(computes) >> rewrite("split-join", n=cols))
                           >> rewrite("map-fission", at=1) >> argument(0, rewrite("map-map-interchange")))
    return split_rows >> split_cols


def workgroups(within: Strategy) -> Strategy:
    """The map over tiles of rows and, in its function, the map over tiles of columns on `map-workgroup[1] ∘
    map-workgroup[0]`, then `within` at the inner one."""
    return outermost(computes & ~inside(), rewrite("map-to-workgroup", dim=1)
                     >> mapped(outermost(computes, rewrite("map-to-workgroup", dim=0) >> within)))


def _fold_on_spine(call) -> Optional[int]:
    """How many one-argument calls the mapped function's body applies after a fold it reaches along its spine
    (`map(λx. f1(..(fi(reduce-seq(..)(..)))))`: `i`), or None where it reaches none."""
    e, at = getattr(call.f.f, "body", None), 0
    while isinstance(e, FunCall) and len(e.args) == 1 and not isinstance(e.f, ReduceSeq):
        e, at = e.args[0], at + 1
    return at if isinstance(e, FunCall) and isinstance(e.f, ReduceSeq) else None


maps_a_spine_fold = is_call(Map) & Selector(lambda c: _fold_on_spine(c.node) is not None, "maps_a_spine_fold")
"""A map whose function ends in a fold: `map(λx. f1(..(fi(reduce-seq(..)(..)))))`."""


def _fold_split_off(then: Strategy) -> Strategy:
    """At a `maps_a_spine_fold` map: the functions after the fold mapped on their own (`map-fission`), then `then` at
    the map of the fold."""
    def run(focus):
        at = _fold_on_spine(focus.ctx.node)
        return (then if at == 0 else rewrite("map-fission", at=at) >> argument(0, then))(focus)

    return Strategy(run, "fold_split_off")


def staged_tiles(tk: int) -> Strategy:
    """CASES 2016's tiles of the reduction dimension (after `tiles`, before `workgroups`): each block's fold over
    `K` split into tiles of `tk` (`reduce-seq-split`), then interchanged out of the map over the blocks of columns
    of a tile and out of the map over its blocks of rows (`map-fission` after the fold, `map-fold-interchange`,
    `lift.rules.fold_tiling`): one fold per tile of blocks over the tiles of `K`, whose step updates every block's
    accumulators from the tile of each operand, copied first (`tile-copy`)."""
    split = mapped_body(outermost(is_call(ReduceSeq), rewrite("reduce-seq-split", k=tk)))
    inner = _fold_split_off(split >> rewrite("map-fold-interchange"))
    outer = _fold_split_off(rewrite("map-fold-interchange"))
    return (outermost(maps_a_spine_fold & inside(Map), inner) >> outermost(maps_a_spine_fold & inside(Map), outer)
            >> outermost(is_call(ReduceSeq) & inside(Map), rewrite("tile-copy")))


_local_2d = (rewrite("map-to-local", dim=1) >> mapped_body(outermost(computes, rewrite("map-to-local", dim=0))))


def _tile_copy_lowered(outer: int) -> Strategy:
    return (rewrite("map-to-local", dim=outer) >> function(function(rewrite("map-to-local", dim=1 - outer)))
            >> rewrite("to-local"))


staged_step = outermost(is_call(ReduceSeq), function(function(body(
    argument(0, _tile_copy_lowered(0)) >> argument(1, _tile_copy_lowered(1))
    >> function(body(outermost(computes, _local_2d)))))) >> rewrite("workgroup-private-accumulator"))
"""In a work-group (`workgroups`) after `staged_tiles`: its fold's step on `map-local[1] ∘ map-local[0]` (the blocks of
rows, of columns), the tile copies in local memory, the tile of the right operand's columns (`cols × tk × w`) on
`map-local[0] ∘ map-local[1]` and the left operand's rows (`rows × tk × h`) on `map-local[1] ∘ map-local[0]`, so that
a work-group of `rows × cols` work-items copies tiles of `tk ≤ rows, cols` with no more; and the accumulators private,
each work-item holding its block (`workgroup-private-accumulator`)."""


private_accumulators = normalize(where(is_call(ReduceSeq)) >> rewrite("private-accumulator"))
"""Every work-item's array accumulator in private memory (`private-accumulator`, 4(d)), once lowered."""

unrolled = normalize(where(is_fun(P.MapSeq)) >> rewrite("map-seq-unroll"))
"""Every sequential map of constant length unrolled (`map-seq-unroll`)."""


packs_columns = Selector(lambda c: isinstance(c.node, FunCall) and isinstance(c.node.f, AbstractMap)
                         and column_blocks(c.node) is not None, "packs_columns")
"""A map (of any kind) whose function walks the blocks of columns of a matrix it does not compute: a blocked
product's map over blocks of rows."""

packed_columns = outermost(packs_columns & ~inside(), rewrite("pack-copy")
                           >> argument(0, rewrite("map-to-global", dim=0) >> mapped(rewrite("map-to-global", dim=1))))
"""At the outermost `packs_columns` map outside every map: the blocks of columns copied once, each block contiguous
(`pack-copy`), so that each block's fold streams its `K × w` floats rather than reading `w` of them per row of the
matrix; the copy's blocks on dimension 0 of global work-items and their rows on dimension 1, so that neighbouring
work-items read neighbouring pieces of a row of the matrix."""


def register_blocked(h: int, w: int, vector: Optional[int] = None, dims: tuple = (1, 0),
                     tiles: Optional[tuple] = None, padded: bool = False, packed: bool = False,
                     staged: Optional[int] = None) -> Strategy:
    """Matrix multiply's register blocking (CASES 2016): blocks of `h × w` results per work-item (`h = 1`: no
    row blocking), their innermost updates `vector`-lane vectors (None: scalars), on global work-items of
    dimensions `dims` (rows, columns), or, with `tiles = (rows, cols)`, on work-groups of that many work-items
    (`tiled_workgroups`); then the default lowering of what is left and its clean-up, and the accumulators in
    private memory, the loops over them unrolled. `padded`: rows and columns first padded to multiples of the
    blocks (of the tiles of blocks) where these do not divide them (`padded_rows`, `padded_columns`). `packed`: the
    blocks of columns of the right operand copied once, contiguous (`packed_columns`), before the lowering, from
    the padded matrix itself (no `pad-copy` first). `staged`: with `tiles`, the reduction dimension in tiles of
    `staged` staged in local memory (`staged_tiles`, `staged_step`)."""
    tile_rows, tile_cols = tiles or (1, 1)
    pad_rows = padded_rows(h * tile_rows) if padded and h * tile_rows > 1 else identity
    pad_columns = padded_columns(w * tile_cols, copied=not packed) if padded else identity
    rows = block_rows(h) if h > 1 else identity
    lanes = vectorised_block(vector) >> vector_accumulators if vector else identity
    threads = (global_2d(*dims) if tiles is None else tiled_workgroups(*tiles) if staged is None
               else _tiles(*tiles) >> staged_tiles(staged) >> workgroups(staged_step))
    pack = packed_columns if packed else identity
    return (pad_columns >> pad_rows >> block_columns(w) >> rows >> lanes >> threads >> pack >> lower_rest >> clean_up
            >> private_accumulators >> unrolled)


def _reshaped(then: Strategy) -> Strategy:
    """`then` at the product that the map at the focus becomes: one product of the joined rows of a map of
    products with one right operand (`flatten-map`, `map(λs. map(λa. map(λb. dot(a, b))(transpose(B)))(s))(X)`:
    doitgen), or a product walking the columns of a copy of `Bᵀ` for one walking the rows of `B` (`transpose-copy-rows`,
    `map(λa. map(λb. dot(a, b))(B))(A)`: syrk's `A Aᵀ`)."""
    return ((rewrite("flatten-map") >> argument(0, then))
            | (rewrite("transpose-copy-rows") >> function(body(then))))


def left_rows_copied(blocked: Strategy) -> Strategy:
    """At a product whose left operand is a transposition, `map(λa. map(λb. dot(a, b))(transpose(X)))(transpose(X))`:
    `blocked` after copying it (`transpose-copy-argument`), so that a block of rows of the left operand is read
    along rows of the copy, a matrix multiply's `A`, not a few columns of `X` (one row, a cache line) per step;
    elsewhere `blocked`."""
    return (where(argument_is(is_call(Transpose))) >> rewrite("transpose-copy-argument") >> function(body(blocked))
            | blocked)


def blocked_products(blocked: Strategy) -> Strategy:
    """`blocked` (a `register_blocked`) at every computing map outside every map where it applies (a matrix product,
    or a map of them), innermost first, so that a product computing the matrix another reads (2mm's `A B` in `(A B)
    C`) is blocked before the other's lowering reaches it; where it does not apply, at the product left once the
    user function applied to its results is split off (`product_split_off`: 2mm's `α · dot(a, b)`), or once the map
    is reshaped into a product (`_reshaped`)."""
    direct = blocked | product_split_off(blocked)
    return repeat(bottomup(where(computes & ~inside()) >> (direct | _reshaped(direct))))
