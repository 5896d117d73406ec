"""Fusion (Figure 3(f)) and its inverse, fission: fewer or more passes over an array.

    map(f) ∘ map(g)                 → map(f ∘ g)
    reduce-seq(f, z) ∘ map-seq(g)   → reduce-seq(λ acc, x. f(acc, g(x)), z)
    map(f ∘ g)                      → map(f) ∘ map(g)                      (fission)
    map(λx. B[g(x)])                → map(λy. B[y]) ∘ map(g)    (g a view, the only use of x: view fission)
    map(g)                          → map(λx. g(x))     (eta-expansion; g a map, or a user function of arrays)

Fusion avoids storing the intermediate array (Section 6.1). The map-reduce fusion is only for the
sequential reduction, the one implementation that does not need `f` to be associative; the fused
operator takes an accumulator of one type and an element of another. Fusion and fission hold for any
one kind of map (two `map-local`s on one dimension fuse, with one barrier fewer).

Fission is not in the paper's figures. It is fusion read right to left, and it moves the parts of a
mapped function that act on whole rows out of the map: in Figure 9(b) and (c) the `asScalar` and
`asVector-4` of each work-group's chunk become one `asScalar` and one `asVector-4` around the
`map-workgroup`. It splits `map(λ x. f1(...(fi(fi+1(...(e)))))` after the `at`-th function, where
`f1 ... fi` do not use `x`. A mapped function that reads its element only through one data-layout function
(`join(nb)` of a 2-D stencil's neighbourhood zipped with its weights) gives that view to a map of its own
the same way, whatever the rest of the body: the element is then the view's result, as a row of a matrix.
Eta-expansion names the row of a map of a map (`map(map(g))`, a grid), or the window or row a user function of
arrays takes (`map(avg3)(slide(3, 1)(a))`), so that strategies can reach the call `g(x)` in its body (and copy
the window to private memory: `private-argument`).
"""

from __future__ import annotations

from dataclasses import replace

from lift.ir.nodes import FunCall, Lambda, count_uses, fresh_param, free_params
from lift.ir.patterns import AbstractMap, Map, MapSeq, ReduceSeq, is_view
from lift.ir.printer import paper
from lift.ir.userfun import UserFun
from lift.rules.location import abstract
from lift.rules.rule import requires, requires_arg_call, rule
from lift.types.types import ArrayType


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


def _viewed_element(call) -> tuple:
    f = call.f.f
    requires(isinstance(f, Lambda) and len(f.params) == 1, "the mapped function is not a lambda of one element")
    (x,) = f.params
    views = _calls_of(f.body, x)
    requires(bool(views) and all(is_view(v.f) for v in views) and len({paper(v.f) for v in views}) == 1
             and len(views) == count_uses(f.body, x), "the element is not read through one data-layout function only")
    requires(f.body not in views, "the mapped function is the data-layout function itself")
    return views[0].f, views


def _calls_of(e, x) -> list:
    """The calls `g(x)` in `e`."""
    if isinstance(e, FunCall) and e.args == (x,):
        return [e]
    return [c for _, child in e.children() for c in _calls_of(child, x)]


@rule("map-view-fission", figure="3(f)", heads=Map, on_functions=False, match=_viewed_element,
      description="a map whose function reads its element through one data-layout function maps over that view",
      equation="map(λx. B[g(x)]) → map(λy. B[y]) ∘ map(g)    (g a view, x used only in g(x))")
def map_view_fission(call, g, views):
    y = fresh_param("y")
    body = _replaced(call.f.f.body, {id(v): y for v in views})
    return replace(call.f, f=Lambda((y,), body))(Map(g)(call.args[0]))


def _replaced(e, new: dict):
    if id(e) in new:
        return new[id(e)]
    return e.map_children(lambda c: _replaced(c, new))


def of_arrays(g) -> bool:
    """Whether `g` is a user function taking an array (a row, a window)."""
    return isinstance(g, UserFun) and any(isinstance(t, ArrayType) for t in g.in_types)


@rule("map-eta-expansion", figure="3(f)", heads=Map,
      match=lambda call: requires(isinstance(call.f.f, AbstractMap) or of_arrays(call.f.f),
                                  "the mapped function is neither a map nor a user function of arrays"),
      description="a map of a map, or of a user function of arrays, applies it to a named element (eta-expansion)",
      equation="map(g) → map(λx. g(x))    (g a map, or a user function of arrays)")
def map_eta_expansion(call):
    x = fresh_param("x")
    return replace(call.f, f=Lambda((x,), FunCall(call.f.f, (x,))))(call.args[0])


RULES = (map_fusion, reduce_seq_map_seq_fusion, map_fission, map_view_fission, map_eta_expansion)
