"""Pushing `vect-n` into a function (the rules Section 4.2 mentions but does not show).

`vect-n(f)` is `f` applied to the `n` lanes of vectors at once. The code generator knows it for user
functions and the identity (`vectorize-n(add)` compiles `add` at `float4`), so vectorising any other
function pushes `vect-n` inside it:

    vect-n(u)           = vectorize-n(u)                 (u a user function on scalars, or id)
                                                         (giving a scalar, or a tuple of vectors for one of scalars)
    vect-n(λ x̄. e)      = λ x̄. vect-n[e]
    vect-n[g(ē)]        = vect-n(g)(vect-n[ē])
    vect-n[x]           = x                              (a parameter: now a vector, or a broadcast scalar)
    vect-n[c]           = c                              (a scalar constant, broadcast to every lane)
    vect-n(get-i)       = get-i                          (a component of a tuple of vectors, zipped)

so `vect-4(λ x. mult(a, x))` is `λ x. vectorize-4(mult)(a, x)`: the scalar `a` is broadcast to every
lane. Functions built from other patterns (maps, reductions, tuples) are not vectorised.
"""

from __future__ import annotations

from lift.errors import LiftTypeError
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Literal, Param
from lift.ir.patterns import Get, Id, Vectorize
from lift.ir.userfun import UserFun
from lift.types.types import ScalarType, TupleType


class NotVectorisable(LiftTypeError):
    """A function that `vect-n` cannot be pushed into; the message names the part."""


def vectorize(n: int, f: FunDecl) -> FunDecl:
    """`vect-n(f)`, pushed into `f` down to its user functions."""
    if isinstance(f, Id):
        return Vectorize(n, f)
    if isinstance(f, Get):
        return f
    if isinstance(f, UserFun):
        results = f.out_type.elems if isinstance(f.out_type, TupleType) else (f.out_type,)
        if not all(isinstance(t, ScalarType) for t in f.in_types + results):
            raise NotVectorisable(f"vect-{n}: user function {f.name} is not on scalars")
        return Vectorize(n, f)
    if isinstance(f, Lambda):
        body = _vectorize_expr(n, f.body)
        if not isinstance(body, FunCall):
            raise NotVectorisable(f"vect-{n}: the lambda's result {body} would not be a vector")
        return Lambda(f.params, body)
    raise NotVectorisable(f"vect-{n}: cannot vectorise {type(f).__name__}")


def _vectorize_expr(n: int, e: Expr) -> Expr:
    if isinstance(e, FunCall):
        return FunCall(vectorize(n, e.f), tuple(_vectorize_expr(n, a) for a in e.args))
    if isinstance(e, Param) or (isinstance(e, Literal) and isinstance(e.t, ScalarType)):
        return e
    raise NotVectorisable(f"vect-{n}: cannot vectorise {e}")
