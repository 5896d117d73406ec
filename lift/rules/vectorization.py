"""Vectorisation (Figure 4(e)): maps and reductions over `n`-lane vectors.

    map(f)                          → asScalar ∘ map(vect-n(f)) ∘ asVector-n
    map(f) ∘ zip(a, b)              → asScalar ∘ map(vect-n(f)) ∘ zip(asVector-n(a), asVector-n(b))
    map(f) ∘ zip(ā), f giving T̄ or [T̄]1 →
                                    (λm. zip(asScalar ∘ get-0 ∘ unzip(m), ..)) ∘ map(vect-n(f)) ∘ zip(asVector-n(ā))
                                    (split-1 of that over join ∘ map(vect-n(f)) for [T̄]1)
    map(f), f: T → (T1, T2)         → zip(asScalar ∘ get-0 ∘ unzip(m), asScalar ∘ get-1 ∘ unzip(m)),
                                      m = map(vect-n(f)) ∘ asVector-n
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

A function giving a tuple of scalars (BlackScholes' call and put) gives a tuple of vectors on `n` lanes:
component `k` of lane `j` of vector `i` is component `k` of `f` of element `n*i + j`, so each component's
vectors scalarised, zipped, are `map(f)`. `m` is one computation read twice: the code generator computes it
once and stores the lanes of each component into the tuples of the output (`lift.opencl_gen.destinations`).

The last map rule is the tuple rule on zipped arrays, `vect-n` pushed through `f`'s maps and reductions (arrays
it reads that stay scalars broadcast, `lift.rules.vectorize_function`): the map of scalars that
`struct-of-arrays` leaves (`lift.rules.struct_of_arrays`), whose function folds over all of N-body's bodies and
gives each body's tuple of scalars in an array of one (a fold's result). The vectors of the map are let-bound, so
that they are computed once into memory whatever reads their lanes; `join` and `split-1` take the array of one
off and put it back.

`asVector-n` and `asScalar` act on the innermost dimension of any array (Table 2), so mapping them
over the outer dimension changes nothing: the last two rules take them out of a map after fission
(Figure 9(b)'s `join ∘ asScalar ∘ map-workgroup(...) ∘ asVector-4 ∘ split-2048`).
"""

from __future__ import annotations

from dataclasses import replace

from lift.ir.names import fresh_name
from lift.ir.nodes import FunCall, Lambda, Literal, Param
from lift.ir.opencl_patterns import AsScalar, AsVector, ReorderStride, vector_literal
from lift.ir.patterns import AbstractMap, Get, Join, PartRed, Reduce, Split, Unzip, Zip
from lift.rules.reduction import requires_absorbing, requires_associative
from lift.rules.rule import Equation, Rule, RuleNotApplicable, arg_call, expect, requires, rule
from lift.rules.sizes import integer
from lift.rules.vectorize_function import NotVectorisable, has_vectors, vectorize
from lift.types.types import VECTOR_WIDTHS, ArrayType, TupleType, VectorType, is_one_element


def _vectorised(rule: Rule, n: int, f, arrays: bool = False):
    try:
        return vectorize(n, f, arrays)
    except NotVectorisable as e:
        raise RuleNotApplicable(f"{rule.name}: {e}") from None


def _fits_a_vector(call, n) -> bool:
    return n in VECTOR_WIDTHS


def _result(call):
    """The element type of the map's result, where the call is typed."""
    return getattr(call.t, "elem", None)


def _scalar_map(call, ctx) -> None:
    elem = call.args[0].t.elem
    requires(has_vectors(elem), f"the elements are {elem}, not scalars that have vectors")
    requires(not isinstance(_result(call), TupleType), f"the map gives {_result(call)}, not scalars")
    _vectorised(vectorize_map, VECTOR_WIDTHS[0], call.f.f)


@rule("vectorize-map", figure="4(e)", heads=AbstractMap, param="n", allowed=_scalar_map, fits=_fits_a_vector,
      description="a map of a scalar function becomes a map of its n-lane vector version",
      equation="map(f) → asScalar ∘ map(vect-n(f)) ∘ asVector-n")
def vectorize_map(call, n):
    n = integer(n)
    return AsScalar()(replace(call.f, f=_vectorised(vectorize_map, n, call.f.f))(AsVector(n)(call.args[0])))


def _scalar_tuple_map(call, ctx) -> None:
    elem, result = call.args[0].t.elem, _result(call)
    requires(has_vectors(elem), f"the elements are {elem}, not scalars that have vectors")
    requires(isinstance(result, TupleType) and all(has_vectors(t) for t in result.elems),
             f"the map gives {result}, not tuples of scalars")
    _vectorised(vectorize_tuple_map, VECTOR_WIDTHS[0], call.f.f)


@rule("vectorize-tuple-map", figure="4(e)", heads=AbstractMap, param="n", allowed=_scalar_tuple_map,
      fits=_fits_a_vector,
      description="a map of a function giving a tuple of scalars becomes a map of its n-lane version giving a "
                  "tuple of vectors, each component scalarised",
      equation="map(f) → zip(asScalar ∘ get-0 ∘ unzip(m), asScalar ∘ get-1 ∘ unzip(m)), "
               "m = map(vect-n(f)) ∘ asVector-n")
def vectorize_tuple_map(call, n):
    n = integer(n)
    vectors = replace(call.f, f=_vectorised(vectorize_tuple_map, n, call.f.f))(AsVector(n)(call.args[0]))
    return Zip(*(AsScalar()(Get(k)(Unzip()(vectors))) for k in range(len(call.t.elem.elems))))


def _zipped_scalars(call, rule: Rule):
    """The zip that the map `call` of `rule` maps over, which must zip arrays of scalars that have vectors."""
    zipped = arg_call_n(call, rule)
    for a in zipped.args:
        requires(has_vectors(a.t.elem), f"zips {a.t}, not arrays of scalars that have vectors")
    return zipped


def _scalar_zip_map(call, ctx) -> None:
    _zipped_scalars(call, vectorize_zip_map)
    requires(has_vectors(call.t.elem), f"the map gives {call.t.elem}, not scalars that have vectors")
    _vectorised(vectorize_zip_map, VECTOR_WIDTHS[0], call.f.f)


@rule("vectorize-zip-map", figure="4(e)", heads=AbstractMap, on_functions=False, param="n", allowed=_scalar_zip_map,
      fits=_fits_a_vector,
      description="a map over zipped scalar arrays becomes a map of its n-lane version over zipped vector arrays",
      equation="map(f) ∘ zip(a, b) → asScalar ∘ map(vect-n(f)) ∘ zip(asVector-n(a), asVector-n(b))")
def vectorize_zip_map(call, n):
    n = integer(n)
    zipped = arg_call_n(call, vectorize_zip_map)
    vectors = Zip(*(AsVector(n)(a) for a in zipped.args))
    return AsScalar()(replace(call.f, f=_vectorised(vectorize_zip_map, n, call.f.f))(vectors))


def _tuples(t) -> bool:
    return isinstance(t, TupleType) and all(has_vectors(e) for e in t.elems)


def _one_tuple(t):
    """The tuple of scalars a function gives, alone or in an array of one; None otherwise."""
    if is_one_element(t):
        t = t.elem
    return t if _tuples(t) else None


def _scalar_zip_tuple_map(call, ctx) -> None:
    _zipped_scalars(call, vectorize_zip_tuple_map)
    requires(_one_tuple(call.t.elem) is not None, f"the map gives {call.t.elem}, not tuples of scalars (or one)")
    _vectorised(vectorize_zip_tuple_map, VECTOR_WIDTHS[0], call.f.f, arrays=True)


@rule("vectorize-zip-tuple-map", figure="4(e)", heads=AbstractMap, on_functions=False, param="n",
      allowed=_scalar_zip_tuple_map, fits=_fits_a_vector,
      description="a map over zipped scalar arrays giving tuples of scalars (or arrays of one) becomes a map of its "
                  "n-lane version, each component of its let-bound vectors scalarised",
      equation="map(f) ∘ zip(ā) → (λm. zip(asScalar ∘ get-0 ∘ unzip(m), ..)) ∘ map(vect-n(f)) "
               "∘ zip(asVector-n(ā))")
def vectorize_zip_tuple_map(call, n):
    n = integer(n)
    zipped = arg_call_n(call, vectorize_zip_tuple_map)
    vectors = replace(call.f, f=vectorize(n, call.f.f, arrays=True))(Zip(*(AsVector(n)(a) for a in zipped.args)))
    in_array = call.t.elem != _one_tuple(call.t.elem)
    m = Param(fresh_name("m"))
    lanes = Zip(*(AsScalar()(Get(k)(Unzip()(m))) for k in range(len(_one_tuple(call.t.elem).elems))))
    scalars = FunCall(Lambda((m,), lanes), (Join()(vectors) if in_array else vectors,))
    return Split(1)(scalars) if in_array else scalars


def arg_call_n(call, rule_: Rule):
    """The zip call `call` maps over."""
    inner = call.args[0] if len(call.args) == 1 else None
    expect(isinstance(inner, FunCall) and isinstance(inner.f, Zip), rule_, "expects a map over zip(...)")
    return inner


def _lanes_to_reduce(call) -> tuple:
    r, scalars = call.f, arg_call(call, reduce_lanes, AsScalar, "asScalar")
    x = scalars.args[0]
    requires(isinstance(x.t, ArrayType) and isinstance(x.t.elem, VectorType),
             f"needs a 1-D array of vectors under asScalar, got {x.t}")
    requires(call.args[0].t.elem == r.init.t and isinstance(r.init, Literal),
             "needs a (T, T) -> T operator with a constant neutral element")
    requires_absorbing(r)
    n = x.t.elem.width
    return n, _vectorised(reduce_lanes, n, r.f), r.init, x


@rule("reduce-lanes", figure="9(b)", heads=Reduce, reassociates=True, match=_lanes_to_reduce,
      description="reduce n-vectors lane-wise first, then the n lanes",
      equation="reduce(f, z) ∘ asScalar → reduce(f, z) ∘ asScalar ∘ reduce(vect-n(f), vect-n(z))")
def reduce_lanes(call, n, f, z, x):
    return call.f(AsScalar()(Reduce(f, vector_literal(n, z))(x)))


def _strided_lanes(call) -> tuple:
    r, stride = call.f, arg_call(call, vectorize_reduction, ReorderStride, "reorder-stride")
    n, x = integer(r.m), stride.args[0]
    requires(n in VECTOR_WIDTHS and stride.f.s == n, "needs part-red to n results of a reorder-stride-n")
    requires(has_vectors(x.t.elem) and x.t.elem == r.init.t,
             "needs a (T, T) -> T operator over scalars that have vectors")
    requires(isinstance(r.init, Literal), "needs a constant neutral element")
    requires_associative(r.f)
    return n, _vectorised(vectorize_reduction, n, r.f), r.init, x


@rule("vectorize-reduction", figure="9(b)", heads=PartRed, reassociates=True, match=_strided_lanes,
      description="partial sums of the n lanes (strided by n) are an n-lane vector reduction",
      equation="part-red(f, z, n) ∘ reorder-stride-n → asScalar ∘ reduce(vect-n(f), vect-n(z)) ∘ asVector-n")
def vectorize_reduction(call, n, f, z, x):
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


RULES = (vectorize_map, vectorize_tuple_map, vectorize_zip_map, vectorize_zip_tuple_map, vectorize_reduction,
         reduce_lanes, OutOfMap(AsScalar, "map(asScalar) → asScalar"),
         OutOfMap(AsVector, "map(asVector-n) → asVector-n"))
