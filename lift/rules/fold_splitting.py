"""Folds split off a mapped function, level by level, where what is split off then matches a macro rule.

    map(λp. f(.., reduce(..)(..p..), ..))(xs)       → map(λv. f(.., v, ..)) ∘ map(λq. reduce(..)(..q..))(xs)
    map(λa. map(λb. f(.., reduce(..)(..a..b..), ..))(X))(A)
        → map(λr. map(λv. f(.., v, ..))(r)) ∘ map(λa. map(λq. reduce(..)(..a..q..))(X))(A)

The first is `map-subterm-fission` (`lift.rules.subterm_fission`: a dense layer's `relu(dot(row, x) + b)`); the
second applies it twice, to the inner map and then, to the map of folds this leaves, at the outer one (or
`map-fission`, Figure 3(f), where that map is on the outer function's spine): a matrix product whose results a
user function post-processes (2mm's `α · dot(a, b)`, a covariance's `dot(ci, cj) / (n - 1)`, 2mm's
`dot(t, c) + β d` over `zip(transpose(C), d)`) becomes a plain product, the shape the register blocking matches
(`lift.rules.macro_rules`), and an elementwise map over its results. Both are exact for any user function: map
fusion read right to left.
"""

from __future__ import annotations

from typing import Callable, Optional

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, Lambda
from lift.rules.strategy import (Focus, Selector, Strategy, argument, choice, identity, inside, is_call, mapped_body,
                                 normalize, rewrite, try_, where)
from lift.rules.subterm_fission import folds, maps_a_fold, maps_of_folds, split_component


def _splits(pick: Callable[[FunCall], list], then: Strategy, name: str) -> Strategy:
    """At a map: each subterm `pick(call)` names (a `map-subterm-fission` `at`) mapped on its own, then `then` at
    the map split off; the first that succeeds."""
    def split(at: int, k: Optional[int]) -> Strategy:
        return rewrite("map-subterm-fission", at=at) >> argument(0, then if k is None else argument(k, then))

    def run(focus: Focus):
        call = focus.ctx.node
        moves = [split(at, split_component(call, at)) for at in pick(call)]
        return choice(*moves)(focus) if moves else None

    return Strategy(run, name)


def folds_split_off(accept: Selector) -> Strategy:
    """At every map outside every map whose function folds a component of its element off its spine
    (`relu(dot(row, x) + b)`): the fold mapped on its own (`map-subterm-fission`, `lift.rules.subterm_fission`)
    where that map, a map of folds, is one `accept` selects."""
    split = _splits(folds, where(is_call(P.Map) & accept), "folds_split_off")
    return normalize(where(is_call(P.Map) & ~inside()) >> split)


def _spine_split(then: Strategy) -> Strategy:
    """At a map whose function's spine (a chain of one-argument calls) reaches a map of folds after the functions
    `f1 .. fi`: `map-fission` after `fi`, then `then` at the map of folds split off."""
    def run(focus: Focus):
        f = focus.ctx.node.f.f
        e, at = (f.body if isinstance(f, Lambda) else None), 0
        while isinstance(e, FunCall) and len(e.args) == 1 and not maps_a_fold(e):
            e, at = e.args[0], at + 1
        return (rewrite("map-fission", at=at) >> argument(0, then))(focus) if at and maps_a_fold(e) else None

    return Strategy(run, "spine_split")


def product_split_off(then: Strategy) -> Strategy:
    """At a map whose function is a map applying a user function to a fold (`map(λa. map(λb. f(.., dot(a, b),
    ..))(X))(A)`): the fold split off the inner map, then the map of folds this leaves (or finds: `map(λa.
    map(relu)(map(λb. dot(a, b))(X)))(A)`) split off the outer one (module docstring), and `then` at that map of
    maps of folds (a product: `map(λa. map(λq. dot(a, q))(X))(A)`); the first choice of folds where `then`
    succeeds."""
    inner = mapped_body(where(is_call(P.Map)) >> _splits(folds, identity, "fold_split_off"))
    return try_(inner) >> (_splits(maps_of_folds, then, "map_of_folds_split_off") | _spine_split(then))
