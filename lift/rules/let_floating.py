"""Let floating: a value a map's function computes without reading its element is computed once, before the map.

    map(λv. B[e])(xs[e]) → (λs. map(λv. B[s])(xs[s]))(e) (e reads no parameter bound in λv. B)   (hoist-invariant)
    f((λs. B)(e))        → (λs. f(B))(e)                    (s not free in f)          (let-out-of-argument)
    map(λv. B[e, e])     → map(λv. (λs. B[s, s])(e))        (e reads only v and outer parameters) (share-computation)

This is β-reduction read right to left, so it holds for every `e`; it pays where `e` is a computation (a
reduction, a map: a call of a pattern that is not a view), which the map would otherwise repeat once per
element; an occurrence of `e` in the map's argument is the same value, and is replaced too (a covariance's
`map(λci. map(λcj. ..)(transpose(c)))(transpose(c))` computes `c` once). `x / sum(x)` written
`map(λv. div(v, reduce(+, 0)(x)))(x)`, or with the sum let-bound, reduces `x` once: outside every map, the let's
argument is a top-level computation, computed in kernels of its own into global memory
(`lift.opencl_gen.destinations`), which the map then reads. The computation floated is the
first invariant one found from the top of the body, left to right; applying the rule again floats the next.
A let floated out of a map in an argument (`map(g)(map(λv. h(v, m))(xs))`, `m` a row's maximum) moves out of
the call that takes it, so that the two maps are composed again, and fuse. A computation that a mapped function
does twice (a query row's scores in attention, `max(scores)` and `exp(scores - max)`, written as one Python variable
used twice) is bound once per element instead (`share-computation`, common-subexpression elimination).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Param, fresh_param, free_params, is_computation
from lift.ir.patterns import AbstractMap, Id, Map
from lift.rules.rule import requires, rule
from lift.types.types import ArrayType


def invariant_computation(f: Lambda) -> Optional[FunCall]:
    """The first computation in the body of `f` (outermost, left to right) that reads no parameter bound
    in `f`: a call of a pattern that is not a view (`is_computation`), whose value is an array."""
    outside = free_params(f)
    return next((e for e in f.body.subterms()
                 if is_computation(e) and isinstance(e.t, ArrayType) and free_params(e) <= outside), None)


def _invariant(call: FunCall) -> tuple:
    f = call.f.f
    requires(isinstance(f, Lambda), "the mapped function is not a lambda")
    e = invariant_computation(f)
    requires(e is not None, "the mapped function computes nothing independent of its element")
    return (e,)


@rule("hoist-invariant", figure="let", heads=AbstractMap, on_functions=False, match=_invariant,
      description="a computation the mapped function does without its element is let-bound before the map",
      equation="map(λv. B[e])(xs[e]) → (λs. map(λv. B[s])(xs[s]))(e)    (e independent of v)")
def hoist_invariant(call: FunCall, e: Expr) -> Expr:
    s = fresh_param("s")
    body = replaced(call.f.f.body, e, s)
    mapped = FunCall(replace(call.f, f=Lambda(call.f.f.params, body)), tuple(replaced(a, e, s) for a in call.args))
    return FunCall(Lambda((s,), mapped), (e,))


def replaced(body: Expr, e: Expr, s) -> Expr:
    """`body` with every occurrence of `e` replaced by `s` (structural equality)."""
    if body == e:
        return s
    return body.map_children(lambda c: replaced(c, e, s))


def let_copied(value: Expr, body: Callable[[Param], Expr], rank: int = 2) -> FunCall:
    """`(λt. body(t))(map(..map(id)..)(value))`, `rank` maps: `value`, an array of `rank` dimensions, copied once into
    memory of its own and let-bound (β-reduction read right to left; `map(id)` is the identity), so that `body` reads
    the copy (a transposed, padded or packed matrix) where it read the view."""
    t = fresh_param("t")
    copy = Id()
    for _ in range(rank):
        copy = Map(copy)
    return FunCall(Lambda((t,), body(t)), (copy(value),))


def repeated_computation(f: Lambda) -> Optional[FunCall]:
    """The first computation in the body of `f` (outermost, left to right) that occurs there more than once and
    reads only parameters of `f` and of its context: an array-valued call of a pattern that is not a view."""
    scope = free_params(f) | frozenset(f.params)
    return next((e for e in f.body.subterms() if is_computation(e) and isinstance(e.t, ArrayType)
                 and free_params(e) <= scope and occurrences(f.body, e) > 1), None)


def occurrences(body: Expr, e: Expr) -> int:
    """How often `e` occurs in `body` (structural equality; an occurrence inside another is not counted)."""
    if body == e:
        return 1
    return sum(occurrences(c, e) for _, c in body.children())


def _repeated(call: FunCall) -> tuple:
    f = call.f.f
    requires(isinstance(f, Lambda), "the mapped function is not a lambda")
    e = repeated_computation(f)
    requires(e is not None, "the mapped function computes nothing twice")
    return (e,)


@rule("share-computation", figure="let", heads=AbstractMap, on_functions=False, match=_repeated,
      description="a computation the mapped function does twice is let-bound once per element",
      equation="map(λv. B[e, e]) → map(λv. (λs. B[s, s])(e))    (e reads only v and outer parameters)")
def share_computation(call: FunCall, e: Expr) -> Expr:
    s = fresh_param("s")
    f = call.f.f
    return FunCall(replace(call.f, f=Lambda(f.params, FunCall(Lambda((s,), replaced(f.body, e, s)), (e,)))),
                   call.args)


def _let_argument(call: FunCall) -> tuple:
    lets = [k for k, a in enumerate(call.args) if isinstance(a, FunCall) and isinstance(a.f, Lambda)
            and len(a.f.params) == len(a.args) == 1]
    requires(lets, "no argument is a let")
    k = lets[0]
    s = call.args[k].f.params[0]
    requires(all(s not in free_params(a) for j, a in enumerate(call.args) if j != k) and s not in free_params(call.f),
             f"{s.name} is bound elsewhere in the call")
    return (k,)


@rule("let-out-of-argument", figure="let", heads=FunDecl, on_functions=False, match=_let_argument,
      description="a let in an argument binds its value around the whole call instead",
      equation="f((λs. B)(e)) → (λs. f(B))(e)    (s not free in f)")
def let_out_of_argument(call: FunCall, k: int) -> Expr:
    let = call.args[k]
    return FunCall(Lambda(let.f.params, FunCall(call.f, call.args[:k] + (let.f.body,) + call.args[k + 1:])), let.args)


RULES = (hoist_invariant, share_computation, let_out_of_argument)
