"""The default lowering's choice of blocks: how many results, columns or rows a work-item computes at once, and
where the blocks are padded (`lift.rules.default_lowering`, steps 1a, 3b and its matrix products).

- Register blocks: a matrix product (`map(λa. map(λb. reduce ∘ map ∘ zip(a, b))(transpose(B)))(A)`) whose sizes
  are bound computes `BLOCK` = 4 × 16 results per work-item in private accumulators, on two dimensions of global
  work-items (`lift.rules.macro_rules.register_blocked`, CASES 2016), its rows and columns padded to multiples of
  the block where it does not divide them and that adds at most `MAX_PADDING` (`padded_rows`, `padded_columns`);
  else a `SMALL_BLOCK` of 1 × 8 results in float4 updates, where it divides them (many small products). Every
  product outside every map is blocked, innermost first, a user function of its results split off first where it
  stands in the way (`blocked_products`: 2mm's `α · dot(a, b)`, a covariance's `dot(ci, cj) / (n - 1)`), a left
  operand that is a transposition (a covariance's `Xᵀ`) copied first, so that its rows are read along memory
  (`left_rows_copied`).
- Column blocks: a column reduction `map(λcol. reduce(f, z)(..col..))(transpose(A))` over `MIN_CHUNK` rows or
  more folds blocks of `column_block(cols)` columns row by row into as many accumulators on one global work-item
  each (`lift.rules.column_sums.blocked_columns`): the widest of `COLUMN_BLOCKS`, 64 down to 8, that divides the
  columns, or else the widest power of two whose padding adds at most `MAX_PADDING` (`pad-map-repeat`,
  `pad-transpose`: 997 columns as 16 blocks of 64, the padded columns' results dropped), a matrix in memory only
  (`column_width`). atax's `Aᵀ(Ax)` at 1001x999, 37 columns a block: 2.9x faster; mvt's `Aᵀy` at 2003², a
  prime, 64 columns a block over 2048: 12.5 ms, one column per work-item 76 ms.
- Row blocks: a map outside every map of reductions of its rows (`reduces_rows`) folds blocks of `h` rows
  (`ROW_BLOCK` = 4 by default) at once into private accumulators on one global work-item each
  (`lift.rules.row_blocking`), leaving two blocks at least: where `h` divides the rows, or else over the rows
  padded to a multiple of `h` with copies of the last row where that adds at most `MAX_PADDING`
  (`row_padding`; `pad-map-repeat`, the padded rows' results dropped).

Each choice is a strategy of rules placed by a selector, so a lowering that uses it replays as a derivation. This
module builds on the default lowering's selectors (`high_level`, and `reduces_rows` of
`lift.rules.reduction_choice`), and the macro rules build on its `lower_rest` and `clean_up`: the default lowering
imports it where it builds its strategy.
"""

from __future__ import annotations

from typing import Mapping, Optional

from lift.ir import patterns as P
from lift.rules import location as L
from lift.rules.column_sums import blocked_columns, column_reduction, reads_its_matrix
from lift.rules.default_lowering import high_level
from lift.rules.macro_rules import MAX_PADDING, blocked_products, left_rows_copied, register_blocked
from lift.rules.reduction_choice import LANES, MIN_CHUNK, reduces_rows
from lift.rules.row_blocking import row_blocks
from lift.rules.sizes import bound_length
from lift.rules.strategy import Focus, Selector, Strategy, inside, is_call, normalize, where

BLOCK = (4, 16)
"""The rows and columns of a matrix product each work-item computes (64 private accumulators; CASES 2016)."""
SMALL_BLOCK = (1, 8, LANES)
"""The block where `BLOCK`'s do not divide the sizes: a row of 8 results of float4 updates (a batch of 8x8
products, `examples/batched_matmul.py`: what `lift explore` finds for it)."""
COLUMN_BLOCKS = range(64, 7, -1)
"""The widths of the blocks of columns a column reduction's work-items fold, widest first."""


def column_block(cols: int) -> Optional[int]:
    """The width of the blocks a column reduction over `cols` columns folds, leaving two blocks at least: the
    widest of `COLUMN_BLOCKS` that divides `cols`, or else the widest power of two among them whose padding
    (`pad-map-repeat` pads to multiples of powers of two) adds at most `MAX_PADDING` of `cols`, if any."""
    fits = [w for w in COLUMN_BLOCKS if cols // w >= 2]
    return next((w for w in fits if cols % w == 0), None) or next(
        (w for w in fits if w & (w - 1) == 0 and -cols % w <= cols * MAX_PADDING), None)


def column_width(ctx: L.Context, sizes: Mapping[str, int]) -> Optional[tuple]:
    """`(w, padded)` for the column reduction at `ctx` over `MIN_CHUNK` rows or more: its `column_block`, and
    whether it pads the columns (only a matrix in memory, `lift.rules.column_sums.reads_its_matrix`); None if none."""
    t = ctx.node.args[0].t
    cols, rows = bound_length(t, sizes), bound_length(t.elem, sizes)
    w = column_block(cols) if cols else None
    if w is None or rows is None or rows < MIN_CHUNK or (cols % w and not reads_its_matrix(ctx)):
        return None
    return w, cols % w != 0


def fold_column_blocks(sizes: Mapping[str, int]) -> Strategy:
    """Every column reduction outside every map, over `MIN_CHUNK` rows or more, folded in blocks of
    `column_block` columns, padded to a multiple of it where it does not divide them (`column_width`;
    `lift.rules.column_sums.blocked_columns`)."""
    def run(focus: Focus):
        block = column_width(focus.ctx, sizes)
        return None if block is None else blocked_columns(*block)(focus)

    return normalize(where(column_reduction & ~inside() & high_level) >> Strategy(run, "column_blocks"))


def blocks_columns(sizes: Mapping[str, int]) -> Selector:
    """A column reduction that `fold_column_blocks` blocks."""
    return column_reduction & Selector(lambda ctx: column_width(ctx, sizes) is not None, "blocked_columns")


def row_padding(rows: Optional[int], h: int) -> Optional[bool]:
    """Whether `rows` rows go in blocks of `h` padded to a multiple of it (True) or as they are (False), leaving
    two blocks at least; None where they do not go in blocks of `h`: as they are where `h` divides them, else
    padded where `h` is a power of two (`pad-map-repeat` pads to multiples of powers of two) and the padding adds
    at most `MAX_PADDING` of them."""
    if h < 2 or rows is None or rows < 2 * h:
        return None
    if rows % h == 0:
        return False
    return True if h & (h - 1) == 0 and -rows % h <= rows * MAX_PADDING else None


def fold_row_blocks(sizes: Mapping[str, int], h: int) -> Strategy:
    """Every map outside every map of folds of its rows (`reduces_rows`) with its rows in blocks of `h`
    (`lift.rules.row_blocking`), padded where `row_padding` says so."""
    blocked = {padded: row_blocks(h, padded) for padded in (False, True)}

    def run(focus: Focus):
        padded = row_padding(bound_length(focus.ctx.node.args[0].t, sizes), h)
        return None if padded is None else blocked[padded](focus)

    return normalize(where(is_call(P.Map) & ~inside() & high_level & reduces_rows(sizes))
                     >> Strategy(run, f"row_blocks({h})"))


def blocks_rows(sizes: Mapping[str, int], h: int) -> Selector:
    """A map of row reductions that `fold_row_blocks` blocks in `h` rows."""
    return reduces_rows(sizes) & Selector(
        lambda ctx: row_padding(bound_length(ctx.node.args[0].t, sizes), h) is not None, "blocked_rows")


def _bound(t, sizes: Mapping[str, int]) -> bool:
    """Whether `sizes` binds every length of the type `t`."""
    return getattr(t, "length", None) is None or (bound_length(t, sizes) is not None and _bound(t.elem, sizes))


def register_blocks(sizes: Mapping[str, int]) -> Strategy:
    """Every matrix product's register blocking in `BLOCK`, padded where the blocks do not divide, else in
    `SMALL_BLOCK` (`lift.rules.macro_rules.register_blocked`), a user function of its results split off first
    (`blocked_products`) and a transposed left operand copied (`left_rows_copied`), where `sizes` binds the
    program's sizes (its splits and paddings need them: a kernel for any size is not blocked); the program
    unchanged where none is blocked."""
    blocked = blocked_products(left_rows_copied(register_blocked(*BLOCK, padded=True)
                                                | register_blocked(*SMALL_BLOCK)))
    return Strategy(lambda focus: blocked(focus) if all(_bound(p.t, sizes) for p in focus.program.params) else focus,
                    "register_blocked")
