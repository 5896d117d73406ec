"""Map fission of a subterm: a computation inside a mapped function that reads one component of the element
is mapped on its own, over that component, before the map (Figure 3(f) applied to a subterm).

    map(λp. B[g(get-i p)])(zip(a0, .., ai, .., an)) → map(λp. B[get-i p])(zip(a0, .., map(λq. g(q))(ai), .., an))
    map(λp. B[g(get-i p)])(zip(a0, .., an))         → map(λp. B[get-(n+1) p])(zip(a0, .., an, map(λq. g(q))(ai)))
    map(λp. B[g(p)])(xs)                            → map(λv. B[v])(map(λq. g(q))(xs))

The first where `B` reads `get-i p` only in `g`, the second where it reads it elsewhere too; the third where the
map's argument is not a zip and `B` reads `p` only in `g`. It is map fusion read right to left, `map(f ∘ g) =
map(f) ∘ map(g)`, with `zip(.., map(g)(ai), ..) = map(λp. (.., g(get-i p), ..))(zip(.., ai, ..))`: exact for
any `g`. `g` may read values free in the map (gemv's `x`), nothing bound inside it. `map-fission` splits a
mapped function's spine, a chain of one-argument calls (`mult(a, dot(row, x))` after `map(mult(a))`); this rule
reaches a computation off the spine, an argument of a call of several (`x + dot(col, y)` in mvt,
`relu(dot(row, x) + b)` in a dense layer), so that the fold becomes a map whose function is the fold: the shape
the reduction macro rules match (`lift.rules.column_sums.blocked_columns`, `lift.rules.row_blocking`, the
lanes of `reduce-lanes`), the rest an elementwise map over its results.

The subterms are the outermost computations (`is_computation`: calls of patterns that are not views) of `B`
that read the element so, left to right, off its spine, or on it below a function that reads another component,
where `map-fission` cannot split (`map(λp. map(λv. f(v, get-1 p))(g(get-0 p)))`: a product's rows zipped with
a bias); the rule's parameter `at` picks one, every occurrence of which is replaced.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from lift.ir.nodes import Expr, FunCall, Lambda, Param, fresh_param, free_params, is_computation
from lift.ir.patterns import Get, Map, Reduce, Zip
from lift.rules.location import abstract
from lift.rules.rule import requires, rule

WHOLE = -1
"""`reads`' mark of the element read whole, not through `get-i`."""
_HOLE = Param("hole")
"""What stands for a subterm while `_rest` looks at the rest of the body."""


def reads(e, p) -> frozenset:
    """How `e` reads the parameter `p`: the components `i` of its `get-i p`, and `WHOLE` where it reads `p` itself."""
    if isinstance(e, FunCall) and isinstance(e.f, Get) and e.args == (p,):
        return frozenset((e.f.i,))
    if e == p:
        return frozenset((WHOLE,))
    if isinstance(e, Lambda) and p in e.params:
        return frozenset()
    return frozenset().union(*(reads(c, p) for _, c in e.children()))


def _spine(e) -> set:
    ids = set()
    while isinstance(e, FunCall):
        ids.add(id(e))
        if len(e.args) != 1:
            break
        e = e.args[0]
    return ids


def _replaced(e, g, new):
    """`e` with every occurrence of `g` replaced by `new`, but under a function that binds a name `g` reads (a
    routine's body, whose parameters may share the names of the program's)."""
    if e == g:
        return new
    if isinstance(e, Lambda) and not free_params(g).isdisjoint(e.params):
        return e
    return e.map_children(lambda c: _replaced(c, g, new))


def _rest(f: Lambda, g) -> frozenset:
    """How the body of `f` reads its parameter outside the occurrences of `g` (`reads`)."""
    return reads(_replaced(f.body, g, _HOLE), f.params[0])


def subterms(call: FunCall) -> list:
    """`(g, i)` for each computation `g` of the mapped function's body that the rule splits off (see the module),
    outermost first, left to right; `i` the component of the zipped element it reads (`WHOLE`: the element)."""
    f, arg = call.f.f, call.args[0]
    if not (isinstance(f, Lambda) and len(f.params) == 1):
        return []
    (p,), outside, spine = f.params, free_params(f), _spine(f.body)
    zipped = isinstance(arg, FunCall) and isinstance(arg.f, Zip)
    found = []

    def visit(e):
        if isinstance(e, Lambda) and not (outside | {p}).isdisjoint(e.params):
            return
        if is_computation(e) and free_params(e) - {p} <= outside:
            r, rest = reads(e, p), _rest(f, e)
            if (id(e) not in spine or rest) and (
                    (r == {WHOLE} and not rest) if not zipped else (len(r) == 1 and WHOLE not in r | rest)):
                found.append((e, next(iter(r))))
                return
        for _, c in e.children():
            visit(c)

    visit(f.body)
    return found


def _choices(call: FunCall, ctx) -> list:
    return [{"at": k} for k in range(len(subterms(call)))]


@rule("map-subterm-fission", figure="3(f)", heads=Map, on_functions=False, choices=_choices,
      description="a computation in a mapped function reading one component of the element is mapped over it first",
      equation="map(λp. B[g(get-i p)])(zip(.., ai, ..)) → map(λp. B[get-i p])(zip(.., map(g)(ai), ..))")
def map_subterm_fission(call: FunCall, at: int) -> Expr:
    found = subterms(call)
    requires(0 <= at < len(found), f"no computation {at} reading one component of the element splits off "
                                   f"(there are {len(found)})")
    g, i = found[at]
    f, arg, k = call.f.f, call.args[0], split_component(call, at)
    (p,), q = f.params, fresh_param("q")
    if k is None:
        v = fresh_param("v")
        return replace(call.f, f=Lambda((v,), _replaced(f.body, g, v)))(Map(abstract((q,), _replaced(g, p, q)))(arg))
    split = Map(abstract((q,), _replaced(g, Get(p, i), q)))(arg.args[i])
    return replace(call.f, f=Lambda((p,), _replaced(f.body, g, Get(p, k))))(Zip(*arg.args[:k], split, *arg.args[k + 1:]))


def split_component(call: FunCall, at: int) -> Optional[int]:
    """Where `map-subterm-fission` with `at` puts the map it splits off: the index of its component in the new
    zip (that of the one it reads, or a new last one), None where it is the map's argument (no zip)."""
    g, i = subterms(call)[at]
    if i == WHOLE:
        return None
    return len(call.args[0].args) if i in _rest(call.f.f, g) else i


def folds(call: FunCall) -> list:
    """The `at` of each subterm of `call` (`subterms`) that is a reduction."""
    return [k for k, (g, _) in enumerate(subterms(call)) if isinstance(g.f, Reduce)]


def maps_a_fold(e) -> bool:
    """Whether `e` is a map whose function is a fold, `map(λq. reduce(..)(..q..))(xs)` (what the rule splits a fold
    off a mapped function into)."""
    if not (isinstance(e, FunCall) and isinstance(e.f, Map)):
        return False
    f = e.f.f
    return isinstance(f, Reduce) or (isinstance(f, Lambda) and isinstance(f.body, FunCall)
                                     and isinstance(f.body.f, Reduce))


def maps_of_folds(call: FunCall) -> list:
    """The `at` of each subterm of `call` (`subterms`) that is a map of folds (`maps_a_fold`): a product's inner
    map once its fold is split off (`lift.rules.fold_splitting.product_split_off`)."""
    return [k for k, (g, _) in enumerate(subterms(call)) if maps_a_fold(g)]


RULES = (map_subterm_fission,)
