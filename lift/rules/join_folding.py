"""Folding a flattened array row by row: the rules that move a `join` out through zips, maps and reductions.

    zip(join(a1), .., join(an)) → join(map(λt. zip(get-0 t, .., get-(n-1) t))(zip(a1, .., an)))       (zip-join)
    map(f)(join(x))             → join(map(map(f))(x))                                                 (map-join)
    reduce(f, z)(join(x))       → reduce(f, z)(join(map(reduce(f, z))(x)))                          (reduce-join)

A 2-D stencil reads its neighbourhood `nb` (a `3 × 3` matrix) as the flat window `join(nb)`: a loop over
nine elements that divides and takes the remainder by 3 to find each one. The three rules fold the rows of
`nb` and then their columns instead, two loops without a division. `zip-join` needs rows of equal length in
every zipped array; `map-join` holds for any `f` (Figure 3(e)'s views commute with maps); `reduce-join` is
Figure 3(d)'s partial reduction with `split ∘ join = id`, so it re-associates the reduction and requires an
operator `(T, T) -> T` known to be associative, and rows longer than one element (a row of one is already
reduced, and the rule would apply again to its own result).
"""

from __future__ import annotations

from lift.ir.nodes import FunCall, Lambda, fresh_param
from lift.ir.patterns import Get, Join, Map, Reduce, Zip
from lift.rules.reduction import requires_absorbing
from lift.rules.rule import requires, rule


def _joined(x) -> bool:
    return isinstance(x, FunCall) and isinstance(x.f, Join)


def _rows_of_joins(call) -> None:
    requires(len(call.args) > 1 and all(_joined(a) for a in call.args), "not every zipped array is a join")
    lengths = {a.args[0].t.elem.length for a in call.args}
    requires(len(lengths) == 1, f"the joined arrays have rows of different lengths {sorted(map(str, lengths))}")


@rule("zip-join", figure="3(e)", heads=Zip, on_functions=False, match=_rows_of_joins,
      description="a zip of joined arrays with rows of equal length is the join of the zips of their rows",
      equation="zip(join(a1), .., join(an)) → join(map(λt. zip(get-0 t, .., get-(n-1) t))(zip(a1, .., an)))")
def zip_join(call):
    t = fresh_param("t")
    rows = Lambda((t,), Zip(*(Get(t, i) for i in range(len(call.args)))))
    return Join()(Map(rows)(Zip(*(a.args[0] for a in call.args))))


@rule("map-join", figure="3(e)", heads=Map, on_functions=False,
      match=lambda call: requires(_joined(call.args[0]), "the mapped array is not a join"),
      description="a map over a joined array is the join of the map over its rows",
      equation="map(f)(join(x)) → join(map(map(f))(x))")
def map_join(call):
    return Join()(Map(call.f)(call.args[0].args[0]))


def _joined_rows(call) -> None:
    requires(_joined(call.args[0]), "the reduced array is not a join")
    requires(call.f.init.t == call.args[0].t.elem,
             f"needs an operator of type (T, T) -> T, got an accumulator {call.f.init.t} over {call.args[0].t.elem}")
    length = call.args[0].args[0].t.elem.length
    requires(not (length.is_constant and length.value <= 1), f"the joined rows have {length} element")


@rule("reduce-join", figure="3(d)", heads=Reduce, on_functions=False, reassociates=True, match=_joined_rows,
      allowed=lambda call, ctx: requires_absorbing(call.f),
      description="a reduction of a joined array is the reduction of the reductions of its rows",
      equation="reduce(f, z)(join(x)) → reduce(f, z)(join(map(reduce(f, z))(x)))")
def reduce_join(call):
    return call.f(Join()(Map(call.f)(call.args[0].args[0])))


RULES = (zip_join, map_join, reduce_join)
