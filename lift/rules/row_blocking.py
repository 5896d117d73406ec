"""Row blocking: a work-item reduces `h` rows at once, one fold into `h` private accumulators.

    map(λr. P(R(Q(r))))(A)
      → join ∘ map-global(λrows. map(P) ∘ transpose ∘ copy ∘ toPrivate(reduce-seq(λacc, t.
            map-seq-unroll(λe. f(get-0 e, .., get-1 e, ..))(zip(acc, get-i t)), copy([z]_h)))
            (zip(.., transpose(map(Q)(rows)), ..))) ∘ split-h(A)

where `R` is the fold of each row (`reduce(f, z) ∘ map(g)`, or `reduce-seq(f, z)`), `Q` a data-layout function
of the row (`asVector-n`: the row as vectors) and `P` what follows the fold (`reduce(+) ∘ asScalar`, the sum of
a vector's lanes; `map(a *)`). A row's fold alone is a chain of dependent steps, each waiting for the last
(a float4 add's latency, several cycles, per 16 bytes: gemv 4096² on PoCL runs at a third of the rate its reads
allow); `h` rows of a block keep `h` independent chains in flight and read the other zipped arrays (gemv's `x`)
once for the `h` rows. The matrix is still read row after row, each of the `h` rows as one stream. It is the
register blocking of Steuwer, Remmelg, Dubach (CASES 2016) along the rows of a map of reductions: the
`h` folds are one by `map-reduce-seq-interchange` (`lift.rules.interchange`), exact for any operator.

Derived by the rules only: split-join (3(c)), map-eta-expansion, map-fission (3(f)) of what follows the fold,
map-view-fission of the row's views, reduce-to-seq (4(b)) and reduce-seq-map-seq-fusion (3(f)),
map-reduce-seq-interchange, map-to-global (4(a)); then the block's other patterns lowered (`lower_rest`), its
accumulators in private memory (`private-accumulator`, 4(d)) and its loops over them unrolled
(`map-seq-unroll`), so that they are registers.
"""

from __future__ import annotations

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, Lambda
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.macro_rules import private_accumulators, unrolled
from lift.rules.paper_derivations import mapped
from lift.rules.strategy import Focus, Strategy, argument, choice, mapped_body, repeat, rewrite, try_

_FOLD = (try_(rewrite("reduce-to-seq")) >> try_(argument(0, rewrite("map-to-seq"))
                                                >> rewrite("reduce-seq-map-seq-fusion")))
"""A row's fold as one sequential fold of its mapped function (`reduce-seq(λacc, x. f(acc, g(x)))`)."""

_FOLDS_AS_ONE = (repeat(rewrite("map-view-fission")) >> (mapped_body(_FOLD) | mapped(rewrite("reduce-to-seq")))
                 >> rewrite("map-reduce-seq-interchange"))
"""At a map over a block's rows whose function is a fold of (views of) its row, or the fold itself
(`map(reduce(f, z))`): each view mapped on its own (`asVector-4 ∘ pad-to-multiple-4(0.0)`, a row padded to whole
vectors, two), then the folds as one fold into a row of accumulators."""


def _fold_at(f) -> list:
    """The places in the spine `f = λr. f1(..(fn(e)))` of a map's function where a fold is called, innermost
    first: the splits (`map-fission`'s `at`) that leave the fold of the row as the mapped function."""
    if isinstance(f, (P.Reduce, P.ReduceSeq)):
        return [0]
    if not (isinstance(f, Lambda) and len(f.params) == 1):
        return []
    at, e, places = 0, f.body, []
    while isinstance(e, FunCall):
        if isinstance(e.f, (P.Reduce, P.ReduceSeq)):
            places.append(at)
        if len(e.args) != 1:
            break
        at, e = at + 1, e.args[0]
    return places[::-1]


def _block_folds(focus: Focus):
    """At `map(λr. P(R(Q(r))))(rows)`: `map(P)` of the folds of the rows as one fold (`_FOLDS_AS_ONE`)."""
    ctx = focus.ctx
    if ctx is None or not (isinstance(ctx.node, FunCall) and isinstance(ctx.node.f, P.Map)):
        return None
    moves = [_FOLDS_AS_ONE if at == 0 else rewrite("map-fission", at=at) >> argument(0, _FOLDS_AS_ONE)
             for at in _fold_at(ctx.node.f.f)]
    return choice(*moves)(focus) if moves else None


def row_blocks(h: int, padded: bool = False) -> Strategy:
    """At a map outside every map whose function folds its row: its rows in blocks of `h`, one global work-item
    per block folding its `h` rows at once into private accumulators (module docstring). `padded`: over any
    number of rows, first padded to a multiple of `h` with copies of the last row (`pad-map-repeat`,
    `lift.rules.padding`: a padded row's reads need only its index clamped), the padded rows' results dropped."""
    blocked = (rewrite("split-join", n=h)
               >> argument(0, rewrite("map-eta-expansion") >> mapped_body(Strategy(_block_folds, "block_folds"))
                           >> rewrite("map-to-global", dim=0)
                           >> lower_rest >> clean_up >> private_accumulators >> unrolled))
    if padded:
        blocked = rewrite("pad-map-repeat", k=h) >> argument(0, blocked)
    return Strategy(blocked.run, f"row_blocks({h}{', padded' if padded else ''})")
