"""Folds split off a map's function (`map-subterm-fission`, `lift.rules.subterm_fission`) where their own map then
matches a reduction's macro rules: the default lowering's (`lift.rules.default_lowering`, steps 1a and 3b) and the
search's (`lift.explore.rewrite_search`) choice of where the rule pays."""

from __future__ import annotations

from typing import Optional

from lift.ir import patterns as P
from lift.rules.strategy import Focus, Selector, Strategy, argument, choice, inside, is_call, normalize, rewrite, where
from lift.rules.subterm_fission import folds, split_component


def folds_split_off(accept: Selector) -> Strategy:
    """At every map outside every map whose function folds a component of its element off its spine
    (`relu(dot(row, x) + b)`): the fold mapped on its own (`map-subterm-fission`, `lift.rules.subterm_fission`)
    where that map, a map of folds, is one `accept` selects."""
    there = where(is_call(P.Map) & accept)

    def split(at: int, k: Optional[int]) -> Strategy:
        return rewrite("map-subterm-fission", at=at) >> argument(0, there if k is None else argument(k, there))

    def run(focus: Focus):
        call = focus.ctx.node
        moves = [split(at, split_component(call, at)) for at in folds(call)]
        return choice(*moves)(focus) if moves else None

    return normalize(where(is_call(P.Map) & ~inside()) >> Strategy(run, "folds_split_off"))
