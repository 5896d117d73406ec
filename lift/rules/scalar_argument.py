"""A one-element array passed to a user function as its element: `scalar-argument`.

    map(λv. B[f(.., e, ..)])(xs) → join(map(λs. map(λv. B[f'(.., s, ..)])(xs))(e))

for a call of `f` anywhere in the mapped function's body `B` (its body itself, `exp(x - m[0])`, or an argument
of another call, layer normalisation's `sq(centre(x, s, n))`), `e: [T]1` reading no parameter that the function
binds (not `v`, not one of a lambda inside `B`), read by `f` only as `e[0]` (a reduction's result: cross-entropy's
row maximum), and `f'` the same function taking that argument as `T` (`lift.ir.userfun_scalars`), named
`<f>_scalar`. Both sides are equal: with `e = [a]`, the right is `join([map(λv. B[f'(.., a, ..)])(xs)])`, the map
of `B` with `f'` of `a`, which is the left's map with `f` of `[a]`, as `f'(.., a, ..) = f(.., [a], ..)`, and `e`
has the same value wherever `B` computes it, reading nothing `B` binds.

The map over the one element of `e` binds the scalar `s` with the IR's own means (it has no indexing pattern), and
`f'` is a function of scalars: `vect-n` applies to it, broadcasting `s` to every lane (`lift.rules.vectorize_function`),
where `f` with an array argument has no vector version. So a row's `reduce(+, 0) ∘ map(λv. exp(v - m[0]))` sums
vectors (`vectorize-map`, `reduce-lanes`) once the reduction moves into the map (`reduce-join-map`).

    reduce(f, z)(join(map(λs. g)(e))) → join(map(λs. reduce(f, z)(g))(e))     (e: [T]1)

`reduce-join-map` is that: the join of the one array `g[a/s]` is itself, so both are `[reduce(f, z)(g[a/s])]`.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Optional

from lift.errors import LiftTypeError
from lift.ir.names import fresh_name
from lift.ir.nodes import FunCall, Lambda, Param, free_params
from lift.ir.patterns import Join, Map, Reduce
from lift.ir.userfun import UserFun
from lift.rules.let_floating import replaced
from lift.rules.rule import arg_call, requires, rule
from lift.types.types import is_one_element


@lru_cache(maxsize=256)
def scalar_userfun(f: UserFun, k: int) -> Optional[UserFun]:
    """`f` taking its argument `k`, an array of one element it reads only as `[0]`, as that element, named
    `<name>_scalar`; None where `f` is raw C or reads the argument otherwise. Cached: the engine asks at every map."""
    if f.origin is None or not is_one_element(f.in_types[k]):
        return None
    name = f.param_names[k]
    in_types = tuple(t.elem if i == k else t for i, t in enumerate(f.in_types))
    origin = replace(f.origin, in_types=in_types, scalars=f.origin.scalars | {name})
    try:
        body = origin.canonical_body
    except LiftTypeError:
        return None
    stem = f.name if f.name.endswith("_scalar") else f"{f.name}_scalar"
    return UserFun(stem, f.param_names, body, in_types, f.out_type, python=origin.numpy_impl, origin=origin)


def _one_element_argument(call) -> tuple:
    """`(v, u, f', k)`: the map's parameter, the first call `u` of a user function `f` in its function's body whose
    argument `k` is an array of one that reads only what the map's function does not bind (not `v`, not a
    parameter bound inside it), `f` reading it only as `[0]`; `f'` taking it as its element."""
    lam = call.f.f
    requires(isinstance(lam, Lambda) and len(lam.params) == 1, "the map's function is not λv. ..")
    outside = free_params(lam)
    for u in lam.body.subterms():
        if isinstance(u, FunCall) and isinstance(u.f, UserFun):
            for k, a in enumerate(u.args):
                if is_one_element(a.t) and free_params(a) <= outside:
                    scalar = scalar_userfun(u.f, k)
                    if scalar is not None:
                        return lam.params[0], u, scalar, k
    requires(False, "no user function in the map's function takes an array of one element that reads nothing the "
                    "function binds and that it reads only as [0]")


@rule("scalar-argument", figure="userfun", heads=Map, on_functions=False, match=_one_element_argument,
      description="a user function of a one-element array it reads as [0], in a mapped function, takes the element: "
                  "a map over the array of one binds it",
      equation="map(λv. B[f(.., e, ..)])(xs) → join(map(λs. map(λv. B[f'(.., s, ..)])(xs))(e)), e: [T]1 reading "
               "nothing B binds, f' = f reading e[0] as s")
def scalar_argument(call, v, u: FunCall, scalar: UserFun, k: int):
    s = Param(fresh_name("s"))
    body = replaced(call.f.f.body, u, FunCall(scalar, u.args[:k] + (s,) + u.args[k + 1:]))
    return Join()(Map(Lambda((s,), replace(call.f, f=Lambda((v,), body))(*call.args)))(u.args[k]))


def _reduced_map_of_one(call) -> tuple:
    joined = arg_call(call, reduce_join_map, Join, "join")
    mapped = joined.args[0]
    requires(isinstance(mapped, FunCall) and isinstance(mapped.f, Map) and isinstance(mapped.f.f, Lambda)
             and is_one_element(mapped.args[0].t), "needs join(map(λs. g)(e)) of an array e of one element")
    return mapped.f.f, mapped.args[0]


@rule("reduce-join-map", figure="userfun", heads=Reduce, on_functions=False, match=_reduced_map_of_one,
      description="a reduction of the join of a map over one element reduces inside that map",
      equation="reduce(f, z)(join(map(λs. g)(e))) → join(map(λs. reduce(f, z)(g))(e)), e: [T]1")
def reduce_join_map(call, g: Lambda, e):
    return Join()(Map(Lambda(g.params, call.f(g.body)))(e))


RULES = (scalar_argument, reduce_join_map)
