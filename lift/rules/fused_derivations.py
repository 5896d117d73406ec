"""Derivations of fused kernels: a group of calls, inlined into one expression, to one OpenCL-level expression.

`fuse(program, chunk)` gives the rule steps from a kernel group's expression (the tuple of its outputs,
or one output) to one `map-global` over chunks of `chunk` elements of a zip of the inputs, computing
every output's chunk, followed by the final reductions of the partial results; `lower_unfused` lowers
one call the same way, so that fused and unfused kernels compare. Both are strategies
(`lift.rules.strategy`), phase by phase, that find their places by selectors (the calls outside every
function, a map under `split-chunk`, a reduction of the inputs; the rules are in `lift.rules.call_fusion`),
and return the `Derivation` they record, replayable and printable as Figure 8.
"""

from __future__ import annotations

from typing import Optional

from lift.ir.nodes import FunCall, Param
from lift.ir.patterns import Get, Map, Reduce, Split
from lift.rules import call_fusion as CF
from lift.rules.derivation import Derivation
from lift.rules.paper_derivations import chunked
from lift.rules.strategy import (Selector, Strategy, anywhere, applies, argument, argument_is, at_first, at_top,
                                 choice, derive, force, is_call, nowhere, progress, repeat, rewrite, seq, topdown,
                                 where)
from lift.types.arith import as_arith

LIMIT = 1000


def fuse(program, chunk: int, sizes: Optional[dict] = None, width: int = 1) -> Derivation:
    """The rule steps from the inlined expression of one kernel group (a tuple of outputs, or one output)
    to one fused, lowered expression: one `map-global` over `split-chunk` of a zip of the inputs computing
    every output's chunk (maps as `map-seq`, each reduction's partial result as `reduce-seq`), then the
    final reductions of the partial results (their own kernels).

    Transposed gemvs become column partial reductions of chunks of rows, folded row by row (`columns`),
    producers are fused into their consumers (`map-zip-fusion`, `map-zip-flatten`, `zip-map`, map fusion),
    the outputs' maps meet over one zip (`zip-union`), go over `width`-lane vectors where `width > 1`
    (`vectorized`), are chunked (split-join, partial reduction), lowered, and fused (`tuple-fusion`); a
    chunk's sequential maps and folds over the same arrays then become one loop (`map-accum-fusion`).
    """
    return derive(fused(chunk, width), program, sizes)


def lower_unfused(program, chunk: int, sizes: Optional[dict] = None, width: int = 1) -> Derivation:
    """The rule steps that lower one call as `fuse` lowers a group: a transposed gemv as column partial
    reductions folded row by row, maps over `width`-lane vectors, its map or reduction over chunks of
    `chunk` elements on `map-global`, `map-seq` and `reduce-seq` inside, the final reduction after it."""
    return derive(columns(chunk) >> vectorized(width) >> chunks(chunk) >> lowered, program, sizes)


def fused(chunk: int, width: int = 1) -> Strategy:
    """`fuse`'s strategy."""
    return seq(columns(chunk), producers(chunk), exhaust(("zip-union", at_top)), vectorized(width), chunks(chunk),
               exhaust(("zip-union", at_top)), lowered, exhaust(("tuple-fusion", program_body)),
               exhaust(("map-accum-fusion", anywhere)))


def exhaust(*rules, **params) -> Strategy:
    """The first of `rules` that applies, at the outermost place where it applies and its selector accepts,
    until none does: each a `(rule name, selector)` pair, or a `(strategy, selector)` pair. Given `params`, a
    rule applies with them at the place found, and `RuleNotApplicable` says why where they do not fit."""
    def at(r, pred):
        if not isinstance(r, str):
            return where(pred) >> r
        return applies(r) >> where(pred) >> (force(r, **params) if params else rewrite(r))

    return repeat(choice(*(topdown(at(r, pred)) for r, pred in rules)), limit=LIMIT)


def columns(chunk: int) -> Strategy:
    """Column reductions (a transposed gemv) → partial column sums of chunks of rows, each chunk folded
    row after row (`map-reduce-interchange`); the partial sums are reduced after."""
    return (exhaust(("transpose-partial-reduction", at_top), chunk=chunk)
            >> exhaust(("map-reduce-interchange", ~at_top)))


def producers(chunk: int) -> Strategy:
    """Fuse every producer into its consumers, and move maps under `split-chunk` into the chunks."""
    return repeat(progress(exhaust(("map-zip-fusion", anywhere), ("map-zip-flatten", anywhere),
                                   ("map-fusion", is_call(Map)), ("zip-map", anywhere))
                           >> exhaust(("split-join", at_top & _under_split(chunk)), n=chunk)
                           >> exhaust(("split-join-id", at_top))), limit=LIMIT)


def _under_split(chunk: int) -> Selector:
    n = as_arith(chunk)
    return Selector(lambda ctx: ctx.parent is not None and CF.is_call(ctx.parent.node, Split)
                    and ctx.parent.node.f.n == n, f"under(split-{chunk})")


def chunks(chunk: int) -> Strategy:
    """Every output's map or reduction over inputs → its computation over `split-chunk` of them."""
    over_map = where(argument_is(is_call(Map))) >> chunked(chunk)
    over_inputs = where(~argument_is(is_call(Map))) >> rewrite("part-red-split-join", n=chunk)
    reduces_inputs = at_top & Selector(lambda ctx: _reduces_inputs(ctx.node), "reduces_inputs")
    return (repeat(at_first(reduces_inputs, rewrite("partial-reduction", chunk=chunk)
                            >> argument(0, over_map | over_inputs)), limit=LIMIT)
            >> nowhere(reduces_inputs)
            >> exhaust(("split-join", at_top & Selector(lambda ctx: isinstance(ctx.node.f, Map)
                                                      and _over_inputs(ctx.node.args[0]), "map_over_inputs")),
                       n=chunk))


def vectorized(width: int) -> Strategy:
    """Every map of scalars of parameters (the program's, or a function's such as a row) → over
    `width`-lane vectors (Figure 4(e)), a reduction of its scalarised result → lanes first (9(b))."""
    if width == 1:
        return seq()
    of_parameters = Selector(lambda ctx: isinstance(ctx.node, FunCall) and _of_parameters(ctx.node.args[0]),
                             "of_parameters")
    reduces_map = Selector(lambda ctx: isinstance(ctx.node, FunCall) and CF.is_call(ctx.node.args[0].args[0], Map),
                           "reduces_map")
    return (exhaust(("vectorize-zip-map", of_parameters), ("vectorize-map", of_parameters), n=width)
            >> exhaust(("reduce-lanes", reduces_map)))


program_body = Selector(lambda ctx: ctx.parent is not None and ctx.parent.parent is None and ctx.step == "body",
                        "program_body")
"""The program's body (where the outputs' tuple is)."""

lowered = (exhaust((rewrite("map-to-global", dim=0), at_top), ("map-to-seq", ~at_top), ("part-red-to-reduce", anywhere),
                   ("reduce-to-seq", anywhere))
           >> exhaust(("reduce-seq-map-seq-fusion", anywhere)))
"""Maps outside functions → `map-global`, inside → `map-seq`, reductions → `reduce-seq`, fused with the
sequential maps they reduce."""


def _reduces_inputs(node) -> bool:
    """Whether `node` is a reduction of parameters (or of a zip of them), or of a map of them."""
    if not CF.is_call(node, Reduce):
        return False
    x = node.args[0]
    return _over_inputs(x.args[0] if CF.is_call(x, Map) else x)


def _of_parameters(x) -> bool:
    """Whether `x` is a parameter, a component of one (`get-i(t)`: a row of a zipped matrix), or a zip of
    those: arrays laid out in memory as they are, whose vectors are vector loads."""
    return all(isinstance(a, Param) or (CF.is_call(a, Get) and isinstance(a.args[0], Param))
               for a in CF.zipped_arrays(x))


def _over_inputs(x) -> bool:
    """Whether `x` is a parameter or a zip of parameters (not their chunks)."""
    found = CF.zipped_inputs(x)
    return found is not None and found[0] is None
