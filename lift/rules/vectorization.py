"""Vectorisation (Figure 4(e)): maps and reductions over `n`-lane vectors.

    map(f)                          → asScalar ∘ map(vect-n(f)) ∘ asVector-n
    map(f) ∘ zip(a, b)              → asScalar ∘ map(vect-n(f)) ∘ zip(asVector-n(a), asVector-n(b))
    part-red(f, z, n) ∘ reorder-stride-n → asScalar ∘ reduce(vect-n(f), vect-n(z)) ∘ asVector-n
    reduce(f, z) ∘ asScalar         → reduce(f, z) ∘ asScalar ∘ reduce(vect-n(f), vect-n(z))
    map(asScalar)                   → asScalar
    map(asVector-n)                 → asVector-n

The map rule applies once per map: not to a map whose elements are vectors already (the paper checks
the function's type). `vect-n(f)` is pushed into `f` (`lift.rules.vectorize_function`).

The reduction rule is how Figure 9(b) and (c) turn a reduction of floats into a reduction of `float4`
followed by a reduction of the four lanes:

    reduce(f, z) = reduce(f, z) ∘ part-red(f, z, 4)                          3(d)
                 = reduce(f, z) ∘ part-red(f, z, 4) ∘ reorder                3(d)
                 = reduce(f, z) ∘ part-red(f, z, 4) ∘ reorder-stride-4       4(c)
                 = reduce(f, z) ∘ asScalar ∘ reduce(vect-4(f), vect-4(z)) ∘ asVector-4

and 4(b) makes both reductions sequential. The last step is this rule, itself a composition of
3(d) and two layout facts: `reorder-stride-n` followed by `split-(len/n)` is `transpose ∘ split-n`,
so `part-red(f, z, n) ∘ reorder-stride-n = join ∘ map(reduce(f, z)) ∘ transpose ∘ split-n` reduces
lane `j` of every group of `n` into result `j`; and an `n`-vector is an array of `n` lanes
(`asVector-n` is `split-n`, `vect-n(f)` is `f` on every lane), so reducing the groups lane-wise is
`reduce(vect-n(f), vect-n(z)) ∘ asVector-n`, with `asScalar` giving back the lanes as an array.

The zipped form is the map rule for a function of several arrays (dot's `map(mult) ∘ zip(x, y)`):
lane `j` of vector `i` of each `asVector-n(a)` is `a[n*i + j]`, so `vect-n(f)` on the zipped vectors
computes `f` on the zipped elements in order. A reduction of scalarised vectors may first add the
vectors lane-wise (`reduce(vect-n(f), vect-n(z))`, one vector) and then reduce its `n` lanes: for an
associative and commutative `f` with neutral `z`, as `reduce` requires, the order does not matter.

`asVector-n` and `asScalar` act on the innermost dimension of any array (Table 2), so mapping them
over the outer dimension changes nothing: the last two rules take them out of a map after fission
(Figure 9(b)'s `join ∘ asScalar ∘ map-workgroup(...) ∘ asVector-4 ∘ split-2048`).
"""

from __future__ import annotations

from dataclasses import replace

from lift.ir.nodes import FunCall, Literal
from lift.ir.patterns import AbstractMap, AsScalar, AsVector, PartRed, Reduce, ReorderStride, Zip, vector_literal
from lift.rules.rule import Equation, Rule, RuleNotApplicable, SizedRule, arg_call, expect
from lift.rules.sizes import integer
from lift.rules.vectorize_function import NotVectorisable, vectorize
from lift.types.types import VECTOR_WIDTHS, ArrayType, ScalarType, VectorType


def _vectorised(rule: Rule, n: int, f):
    try:
        return vectorize(n, f)
    except NotVectorisable as e:
        raise RuleNotApplicable(f"{rule.name}: {e}") from None


class MapVectorization(SizedRule):
    name = "vectorize-map"
    figure = "4(e)"
    description = "a map of a scalar function becomes a map of its n-lane vector version"
    equation = "map(f) → asScalar ∘ map(vect-n(f)) ∘ asVector-n"
    heads = (AbstractMap,)

    def allowed(self, call, ctx):
        elem = call.args[0].t.elem
        expect(isinstance(elem, ScalarType), self, f"the elements are {elem}, not scalars")
        _vectorised(self, VECTOR_WIDTHS[0], self.head(call).f)

    def fits(self, call, n):
        return n in VECTOR_WIDTHS

    def rewrite(self, call, n):
        n = integer(n)
        return AsScalar()(replace(call.f, f=_vectorised(self, n, call.f.f))(AsVector(n)(call.args[0])))


class ZipMapVectorization(SizedRule):
    name = "vectorize-zip-map"
    figure = "4(e)"
    description = "a map over zipped scalar arrays becomes a map of its n-lane version over zipped vector arrays"
    equation = "map(f) ∘ zip(a, b) → asScalar ∘ map(vect-n(f)) ∘ zip(asVector-n(a), asVector-n(b))"
    heads = (AbstractMap,)
    on_functions = False

    def allowed(self, call, ctx):
        zipped = arg_call_n(call, self)
        for a in zipped.args:
            expect(isinstance(a.t.elem, ScalarType), self, f"zips {a.t}, not arrays of scalars")
        expect(isinstance(call.t.elem, ScalarType), self, f"the map gives {call.t.elem}, not scalars")
        _vectorised(self, VECTOR_WIDTHS[0], self.head(call).f)

    def fits(self, call, n):
        return n in VECTOR_WIDTHS

    def rewrite(self, call, n):
        n = integer(n)
        zipped = arg_call_n(call, self)
        vectors = Zip(*(AsVector(n)(a) for a in zipped.args))
        return AsScalar()(replace(call.f, f=_vectorised(self, n, call.f.f))(vectors))


def arg_call_n(call, rule: Rule):
    """The zip call `call` maps over."""
    inner = call.args[0] if len(call.args) == 1 else None
    expect(isinstance(inner, FunCall) and isinstance(inner.f, Zip), rule, "expects a map over zip(...)")
    return inner


class ReduceLanes(Equation):
    name = "reduce-lanes"
    figure = "9(b)"
    description = "reduce n-vectors lane-wise first, then the n lanes"
    equation = "reduce(f, z) ∘ asScalar → reduce(f, z) ∘ asScalar ∘ reduce(vect-n(f), vect-n(z))"
    heads = (Reduce,)
    reassociates = True

    def match(self, call):
        r, scalars = self.head(call), arg_call(call, self, AsScalar, "asScalar")
        x = scalars.args[0]
        expect(isinstance(x.t, ArrayType) and isinstance(x.t.elem, VectorType), self,
               f"needs a 1-D array of vectors under asScalar, got {x.t}")
        expect(call.args[0].t.elem == r.init.t and isinstance(r.init, Literal), self,
               "needs a (T, T) -> T operator with a constant neutral element")
        n = x.t.elem.width
        return n, _vectorised(self, n, r.f), r.init, x

    def rewrite(self, call, n, f, z, x):
        return self.head(call)(AsScalar()(Reduce(f, vector_literal(n, z))(x)))


class ReductionVectorization(Equation):
    name = "vectorize-reduction"
    figure = "9(b)"
    description = "partial sums of the n lanes (strided by n) are an n-lane vector reduction"
    equation = "part-red(f, z, n) ∘ reorder-stride-n → asScalar ∘ reduce(vect-n(f), vect-n(z)) ∘ asVector-n"
    heads = (PartRed,)
    reassociates = True

    def match(self, call):
        r, stride = self.head(call), arg_call(call, self, ReorderStride, "reorder-stride")
        n, x = integer(r.m), stride.args[0]
        expect(n in VECTOR_WIDTHS and stride.f.s == n, self, "needs part-red to n results of a reorder-stride-n")
        expect(isinstance(x.t.elem, ScalarType) and x.t.elem == r.init.t, self,
               "needs a (T, T) -> T operator over scalars")
        expect(isinstance(r.init, Literal), self, "needs a constant neutral element")
        return n, _vectorised(self, n, r.f), r.init, x

    def rewrite(self, call, n, f, z, x):
        return AsScalar()(Reduce(f, vector_literal(n, z))(AsVector(n)(x)))


class OutOfMap(Equation):
    """`map(g) → g` for a `g` that acts on the innermost dimension whatever the nesting."""

    figure = "9(b)"
    heads = (AbstractMap,)

    def __init__(self, inner: type, equation: str):
        self.inner, self.equation = inner, equation
        self.name = f"map-{inner.paper}"
        self.description = f"{inner.paper} acts on the innermost dimension: mapping it is applying it"

    def match(self, call):
        g = self.head(call).f
        expect(isinstance(g, self.inner), self, f"the mapped function is not {self.inner.paper}")
        return (g,)

    def rewrite(self, call, g):
        return g(*call.args)


RULES = (MapVectorization(), ZipMapVectorization(), ReductionVectorization(), ReduceLanes(), OutOfMap(AsScalar, "map(asScalar) → asScalar"),
         OutOfMap(AsVector, "map(asVector-n) → asVector-n"))
