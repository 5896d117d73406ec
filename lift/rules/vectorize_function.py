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
lane. Functions built from other patterns (maps, reductions, tuples) are not vectorised, except where `arrays`
is asked for: a function of arrays whose elements are now vectors (the windows of `vectorize-windows`), where

    vect-n(map(f))      = map(vect-n(f))                 (and map-seq, map-seq-unroll)
    vect-n(reduce(f, z)) = reduce(vect-n(f), vect-n(z))  (z a scalar constant, or a tuple of them; and reduce-seq,
                                                      reduce-seq-unroll)
    vect-n(v)           = v                              (v a view: zip, join, split, transpose, get)
    vect-n(toPrivate(f)) = toPrivate(vect-n(f))          (a private copy of a window)
    vect-n(u)           = vectorize-n(u)                 (u a user function of arrays of scalars: `jacobi5(w)`)

lane `j` of every element of a mapped or reduced array of vectors being the element of lane `j`'s array (a tuple of
vectors is, lane by lane, the tuple of its lanes, so `vect-n` of a tuple of constants `(z1, z2)` is
`(vect-n(z1), vect-n(z2))`: lane `j` of the fold starts from `(z1, z2)`); an array
parameter that stays an array of scalars (a stencil's weights) is the same in every lane, broadcast elementwise.
"""

from __future__ import annotations

from dataclasses import replace

from lift.errors import LiftTypeError
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Literal, Param
from lift.ir.opencl_patterns import ToPrivate, Vectorize, vector_literal
from lift.ir.patterns import (Get, Id, Join, Map, MapSeq, MapSeqUnroll, Reduce, ReduceSeq, ReduceSeqUnroll, Split,
                              Transpose, Tuple, Zip)
from lift.ir.userfun import UserFun
from lift.types.types import ArrayType, Bool, ScalarType, TupleType


class NotVectorisable(LiftTypeError):
    """A function that `vect-n` cannot be pushed into; the message names the part."""


def has_vectors(t) -> bool:
    """Whether `t` is a scalar type OpenCL C has vectors of: any but `bool` (there is no `bool4`)."""
    return isinstance(t, ScalarType) and t != Bool


ARRAY_VIEWS = (Zip, Join, Split, Transpose)
"""Views that move whole elements: the same on arrays of vectors as on arrays of scalars."""


def vectorize(n: int, f: FunDecl, arrays: bool = False) -> FunDecl:
    """`vect-n(f)`, pushed into `f` down to its user functions; through maps, reductions and views too where
    `arrays` (see the module)."""
    if arrays and type(f) in (Map, MapSeq, MapSeqUnroll):
        return replace(f, f=vectorize(n, f.f, arrays))
    if arrays and type(f) in (Reduce, ReduceSeq, ReduceSeqUnroll):
        return replace(f, f=vectorize(n, f.f, arrays), init=_vector_init(n, f.init))
    if arrays and isinstance(f, ARRAY_VIEWS):
        return f
    if isinstance(f, Id):
        return Vectorize(n, f)
    if isinstance(f, Get):
        return f
    if arrays and isinstance(f, ToPrivate):
        return replace(f, f=vectorize(n, f.f, arrays))
    if isinstance(f, UserFun):
        results = f.out_type.elems if isinstance(f.out_type, TupleType) else (f.out_type,)
        if not all(has_vectors(_lane_type(t, arrays)) for t in f.in_types) or not all(map(has_vectors, results)):
            raise NotVectorisable(f"vect-{n}: user function {f.name} is not on scalars that have vectors (not bool)")
        return Vectorize(n, f)
    if isinstance(f, Lambda):
        body = _vectorize_expr(n, f.body, arrays)
        if not isinstance(body, FunCall):
            raise NotVectorisable(f"vect-{n}: the lambda's result {body} would not be a vector")
        return Lambda(f.params, body)
    raise NotVectorisable(f"vect-{n}: cannot vectorise {type(f).__name__}")


def _lane_type(t, arrays: bool):
    """What a parameter of type `t` holds in each lane: `t`, or, where `arrays`, the scalars of an array."""
    while arrays and isinstance(t, ArrayType):
        t = t.elem
    return t


def _vector_init(n: int, z: Expr) -> Expr:
    """`vect-n(z)` of a reduction's initial value: a scalar constant, or a tuple of them."""
    if isinstance(z, Literal) and isinstance(z.t, ScalarType):
        return vector_literal(n, z)
    if isinstance(z, FunCall) and isinstance(z.f, Tuple) and all(
            isinstance(a, Literal) and isinstance(a.t, ScalarType) for a in z.args):
        return Tuple(*(vector_literal(n, a) for a in z.args))
    raise NotVectorisable(f"vect-{n}: the reduction's initial value {z} is not a scalar constant or a tuple of them")


def _vectorize_expr(n: int, e: Expr, arrays: bool) -> Expr:
    if isinstance(e, FunCall):
        return FunCall(vectorize(n, e.f, arrays), tuple(_vectorize_expr(n, a, arrays) for a in e.args))
    if isinstance(e, Param) or (isinstance(e, Literal) and isinstance(e.t, ScalarType)):
        return e
    raise NotVectorisable(f"vect-{n}: cannot vectorise {e}")
