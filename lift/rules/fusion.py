"""Fusion (Figure 3(f)) and its inverse, fission: fewer or more passes over an array.

    map(f) ∘ map(g)                 → map(f ∘ g)
    reduce-seq(f, z) ∘ map-seq(g)   → reduce-seq(λ acc, x. f(acc, g(x)), z)
    map(f ∘ g)                      → map(f) ∘ map(g)                      (fission)

Fusion avoids storing the intermediate array (Section 6.1). The map-reduce fusion is only for the
sequential reduction, the one implementation that does not need `f` to be associative; the fused
operator takes an accumulator of one type and an element of another. Fusion and fission hold for any
one kind of map (two `map-local`s on one dimension fuse, with one barrier fewer).

Fission is not in the paper's figures. It is fusion read right to left, and it moves the parts of a
mapped function that act on whole rows out of the map: in Figure 9(b) and (c) the `asScalar` and
`asVector-4` of each work-group's chunk become one `asScalar` and one `asVector-4` around the
`map-workgroup`. It splits `map(λ x. f1(...(fi(fi+1(...(e)))))` after the `at`-th function, where
`f1 ... fi` do not use `x`.
"""

from __future__ import annotations

from dataclasses import replace

from lift.ir.nodes import FunCall, Lambda, fresh_param, free_params
from lift.ir.patterns import AbstractMap, MapSeq, ReduceSeq
from lift.rules.location import abstract
from lift.rules.rule import requires, requires_arg_call, rule


def _same_kind(call) -> None:
    requires_arg_call(call, AbstractMap, "a map")
    outer, inner = call.f, call.args[0].f
    requires(type(outer) is type(inner) and getattr(outer, "dim", 0) == getattr(inner, "dim", 0),
             "the two maps are of different kinds")


@rule("map-fusion", figure="3(f)", description="two maps of one kind become one map of the composition",
      equation="map(f) ∘ map(g) → map(f ∘ g)", heads=AbstractMap, on_functions=False, match=_same_kind)
def map_fusion(call):
    inner = call.args[0]
    return replace(call.f, f=call.f.f @ inner.f.f)(inner.args[0])


@rule("reduce-seq-map-seq-fusion", figure="3(f)", heads=ReduceSeq, on_functions=False,
      description="a sequential reduction of a sequential map folds the mapped function into its operator",
      equation="reduce-seq(f, z) ∘ map-seq(g) → reduce-seq(λ acc, x. f(acc, g(x)), z)",
      match=lambda call: requires_arg_call(call, MapSeq, "map-seq"))
def reduce_seq_map_seq_fusion(call):
    reduction, inner = call.f, call.args[0]
    acc, x = fresh_param("acc"), fresh_param("x")
    return ReduceSeq(Lambda((acc, x), reduction.f(acc, inner.f.f(x))), reduction.init)(inner.args[0])


@rule("map-fission", figure="3(f)", heads=AbstractMap,
      description="a map of a composition becomes a composition of maps (fusion, right to left)",
      equation="map(f ∘ g) → map(f) ∘ map(g)",
      choices=lambda call, ctx: [{"at": i} for i in _split_points(call.f.f)])
def map_fission(call, at):
    m = call.f
    requires(at in _split_points(m.f), f"cannot split the mapped function after its function {at}")
    (x,) = m.f.params
    funs, innermost = _spine(m.f.body)
    y = fresh_param("y")
    outer, inner = y, innermost
    for f in reversed(funs[:at]):
        outer = FunCall(f, (outer,))
    for f in reversed(funs[at:]):
        inner = FunCall(f, (inner,))
    return replace(m, f=abstract((y,), outer))(replace(m, f=abstract((x,), inner))(call.args[0]))


def _split_points(f) -> list:
    """Where `f = λ x. f1(...(fn(e)))` splits: after `f_at` with `f1..f_at` not using `x`, leaving more than `x`."""
    if not (isinstance(f, Lambda) and len(f.params) == 1):
        return []
    funs, innermost = _spine(f.body)
    last = len(funs) - 1 if innermost == f.params[0] else len(funs)
    points, used = [], frozenset()
    for i in range(1, last + 1):
        used |= free_params(funs[i - 1])
        if f.params[0] in used:
            break
        points.append(i)
    return points


def _spine(e) -> tuple:
    """The functions of a chain of one-argument calls, outermost first, and the expression they start from."""
    funs = []
    while isinstance(e, FunCall) and len(e.args) == 1:
        funs.append(e.f)
        e = e.args[0]
    return funs, e


RULES = (map_fusion, reduce_seq_map_seq_fusion, map_fission)
