"""Struct of arrays: a map over arrays of vectors as a map over the arrays of their components.

An array of `floatN` is, element by element, the zip of the `N` arrays of its lanes, and a user function of
vectors is a user function of their components (`lift.ir.userfun_components`: `u = pack ∘ u_soa ∘ lanes`). So a
map whose function takes vectors apart only through user functions computes the same on the component arrays:

    map(λx̄. B)(zip(ā))  →  map(pack)(map(λx̄'. B')(zip(ā')))                              (struct-of-arrays)

where each array of vectors `a` of `ā` (and each such array `B` reads, N-body's `pos` in its fold over all
bodies) is `zip(map(lane-0)(a), .., map(lane-N-1)(a))`, each vector parameter `p` is its `N` lanes `p_x .. p_w`,
a vector literal (`vectorize-4(0.0)`) the tuple of its lanes, a user function `u` of vectors `u_soa` applied to
the lanes of its arguments, and a reduction's operator on vectors `λacc x. u_soa(lanes(acc), lanes(x))` over
the tuples of lanes. Every value `B'` computes is `B`'s, its vectors flattened into tuples of scalars (a tuple
of vectors into one flat tuple), which `pack` (`map(pack)` under each array level of the result) builds back.

The point is what follows: the function of the component map is on scalars, so `vectorize-map` makes its lanes
*elements* (`n` bodies of N-body per work-item in `floatn` registers, the fold over all bodies reading each
body's components as scalars, broadcast), where the function of vectors could only use the `N` lanes of one
element (`lift.rules.vectorization`).
"""

from __future__ import annotations

from lift.ir.names import fresh_name
from lift.ir.nodes import Expr, FunCall, Lambda, Literal, Param
from lift.ir.patterns import Get, Map, Reduce, ReduceSeq, Tuple, Zip
from lift.ir.userfun import UserFun
from lift.ir.userfun_components import NotScalarisable, flat_scalars, has_vector, lane, packed, scalarised
from lift.rules.rule import RuleNotApplicable, requires, rule
from lift.types.types import ArrayType, ScalarType, TupleType, Type, VectorType, element_type


def _vectors_in(t: Type) -> bool:
    return has_vector(element_type(t))


class _SoA:
    """The rewriting of a map's body: `env` maps each vector (or tuple-of-vectors) parameter to its scalars."""

    def __init__(self):
        self.env: dict = {}

    def bind(self, p: Param) -> list:
        """Parameters standing for `p`: its scalars, or `p` itself."""
        if not has_vector(p.t):
            return [p]
        scalars = [Param(fresh_name(f"{p.name}_s{k}"), t) for k, t in enumerate(flat_scalars(p.t))]
        self.env[p] = scalars
        return scalars

    def array(self, a: Expr) -> Expr:
        """The array `a`, its elements' vectors flattened into tuples of scalars: an array parameter of vectors
        is the zip of its lane arrays, a computed one computes tuples."""
        if isinstance(a, Param) and isinstance(a.t, ArrayType) and isinstance(a.t.elem, VectorType):
            return Zip(*(Map(lane(a.t.elem, k))(a) for k in range(a.t.elem.width)))
        return self.expr(a)

    def columns(self, a: Expr) -> list:
        """The arrays a zip of `a` zips once its vectors are taken apart: an array of vectors its lane arrays, an
        array of scalars itself."""
        elem = a.t.elem
        if isinstance(elem, VectorType):
            lanes = self.array(a)
            requires(_is_zip(lanes), f"zips a computed array of {elem}")
            return list(lanes.args)
        requires(isinstance(elem, ScalarType), f"zips an array of {elem}, not of scalars or vectors")
        return [self.expr(a)]

    def known(self, e: Expr):
        """The scalars of a parameter taken apart, or of a component of one (`get-i`); None for other values."""
        if isinstance(e, Param) and e in self.env:
            return list(self.env[e])
        if isinstance(e, FunCall) and isinstance(e.f, Get):
            whole = self.known(e.args[0])
            if whole is not None:
                elems = e.args[0].t.elems
                start = sum(len(flat_scalars(t)) for t in elems[:e.f.i])
                return whole[start:start + len(flat_scalars(elems[e.f.i]))]
        return None

    def lanes(self, e: Expr) -> tuple:
        """`(lets, scalars)`: the scalar expressions of the value `e`, and the `(param, value)` lets they need."""
        known = self.known(e)
        if known is not None:
            return [], known
        if isinstance(e, Literal) and isinstance(e.t, VectorType):
            return [], [Literal(v, e.t.elem) for v in (e.value if isinstance(e.value, tuple) else
                                                        (e.value,) * e.t.width)]
        if not has_vector(e.t):
            return [], [self.expr(e)]
        value = self.expr(e)
        if isinstance(value, FunCall) and isinstance(value.f, Tuple):
            return [], list(value.args)
        if isinstance(value, Param):
            return [], [Get(k)(value) for k in range(len(flat_scalars(e.t)))]
        r = Param(fresh_name("soa"))
        return [(r, value)], [Get(k)(r) for k in range(len(flat_scalars(e.t)))]

    def expr(self, e: Expr) -> Expr:
        if self.known(e) is not None or isinstance(e, Literal) and isinstance(e.t, VectorType):
            scalars = self.lanes(e)[1]
            return scalars[0] if not has_vector(e.t) and len(scalars) == 1 else Tuple(*scalars)
        if isinstance(e, (Param, Literal)):
            requires(not _vectors_in(e.t), f"{e} of {e.t} is read other than element by element")
            return e
        requires(isinstance(e, FunCall), f"cannot take {e} apart")
        f = e.f
        if isinstance(f, UserFun):
            return self.userfun(f, e.args)
        if isinstance(f, Lambda):
            return self.applied(f, e.args)
        if type(f) is Map:
            return Map(self.function(f.f))(self.array(e.args[0]))
        if type(f) in (Reduce, ReduceSeq):
            return self.reduction(f, e.args[0])
        if isinstance(f, Zip):
            return Zip(*(c for a in e.args for c in self.columns(a)))
        if isinstance(f, Get):
            requires(not has_vector(e.args[0].t), "a component of a computed tuple of vectors")
            return f(self.expr(e.args[0]))
        requires(not any(_vectors_in(a.t) for a in e.args) and not _vectors_in(e.t),
                 f"{type(f).__name__} of vectors")
        requires(not any(node is p for node in f.subterms() for p in self.env),
                 f"{type(f).__name__} reads a vector taken apart")
        return FunCall(f, tuple(self.expr(a) for a in e.args))

    def userfun(self, u: UserFun, args: tuple) -> Expr:
        if not has_vector(u.out_type) and not any(isinstance(t, VectorType) for t in u.in_types):
            return u(*(self.expr(a) for a in args))
        try:
            u_soa = scalarised(u)
        except NotScalarisable as e:
            raise RuleNotApplicable(str(e)) from None
        lets, scalars = [], []
        for a in args:
            more, these = self.lanes(a)
            lets += more
            scalars += these
        return _let(lets, u_soa(*scalars))

    def function(self, f) -> Lambda:
        """A mapped function: its vector parameters their scalars (a tuple of scalars destructured)."""
        if isinstance(f, UserFun):
            xs = tuple(Param(fresh_name("x"), t) for t in f.in_types)
            f = Lambda(xs, FunCall(f, xs))
        requires(isinstance(f, Lambda), f"a {type(f).__name__} of vectors")
        params = tuple(q for p in f.params for q in self.bind(p))
        return Lambda(params, self.expr(f.body))

    def applied(self, f: Lambda, args: tuple) -> Expr:
        """`f(args)`: a vector argument passed as its scalars."""
        lets, values = [], []
        for a in args:
            more, these = self.lanes(a)
            lets += more
            values += these
        return _let(lets, FunCall(self.function(f), tuple(values)))

    def reduction(self, r, x: Expr) -> Expr:
        """`reduce(f, z)(x)`: the accumulator and the elements tuples of scalars, taken apart for `f`."""
        requires(isinstance(r.init, Literal), "a reduction from a value that is not a constant")
        acc, el = Param(fresh_name("acc"), r.init.t), Param(fresh_name("x"), x.t.elem)
        op = []
        for p in (acc, el):
            if has_vector(p.t):
                whole = Param(fresh_name(p.name), TupleType(*flat_scalars(p.t)))
                self.env[p] = [Get(k)(whole) for k in range(len(flat_scalars(p.t)))]
                op.append(whole)
            else:
                op.append(p)
        body = self.expr(FunCall(r.f, (acc, el)))
        return type(r)(Lambda(tuple(op), body), Tuple(*self.lanes(r.init)[1]))(self.array(x))


def _let(lets: list, body: Expr) -> Expr:
    for r, value in reversed(lets):
        body = FunCall(Lambda((r,), body), (value,))
    return body


def _is_zip(e: Expr) -> bool:
    return isinstance(e, FunCall) and isinstance(e.f, Zip)


def repacked(t: Type, e: Expr) -> Expr:
    """The values of type `t` from `e`, their vectors flattened to tuples of scalars (`map(pack)` per level)."""
    if isinstance(t, ArrayType):
        levels, elem = 0, t
        while isinstance(elem, ArrayType):
            levels, elem = levels + 1, elem.elem
        f = packed(elem)
        for _ in range(levels):
            f = Map(f)
        return f(e)
    return packed(t)(e)


def _taken_apart(call) -> Expr:
    """The map `call` over the lane arrays of its vectors (see the module); `RuleNotApplicable` saying why not."""
    requires(isinstance(call.f.f, Lambda) or isinstance(call.f.f, UserFun), "the map's function is not known")
    requires(_vectors_in(call.args[0].t.elem) or _vectors_in(call.t.elem), "the map has no vectors to take apart")
    soa = _SoA()
    mapped = Map(soa.function(call.f.f))(soa.array(call.args[0]))
    return repacked(call.t, mapped) if _vectors_in(call.t.elem) else mapped


@rule("struct-of-arrays", figure="4(e)", heads=Map, on_functions=False, allowed=lambda call, ctx: _taken_apart(call),
      description="a map over arrays of vectors is a map over the arrays of their lanes, its user functions on "
                  "scalars (the vectors built back after it)",
      equation="map(λx̄. B)(zip(ā)) → map(pack)(map(λx̄'. B')(zip(ā')))")
def struct_of_arrays(call):
    return _taken_apart(call)


RULES = (struct_of_arrays,)
