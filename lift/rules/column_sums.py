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
"""

from __future__ import annotations

from typing import Optional

from lift.ir.nodes import FunCall, Lambda
from lift.ir.patterns import Map, Reduce, ReduceSeq, Transpose
from lift.rules.macro_rules import vectorised_block
from lift.rules.strategy import (Selector, Strategy, argument, argument_is, arguments, function, identity, is_call,
                                 mapped_body, normalize, rewrite, try_, where)


def _reduces_columns(ctx) -> bool:
    f = ctx.node.f.f
    return isinstance(f, Reduce) or (isinstance(f, Lambda) and len(f.params) == 1 and isinstance(f.body, FunCall)
                                     and isinstance(f.body.f, Reduce))


column_reduction = is_call(Map) & argument_is(is_call(Transpose)) & Selector(_reduces_columns, "reduces_columns")
"""A map of a reduction over the columns of a matrix: `map(reduce(f, z) [∘ map(g)])(transpose(A))`."""

private_folds = normalize(where(is_call(ReduceSeq)) >> rewrite("private-accumulator"))
"""Every work-item's array accumulator in private memory (`private-accumulator`, 4(d))."""


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
