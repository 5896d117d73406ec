"""Simplification (Figure 3(e)): a split undone by a join, a vectorisation undone by a scalarisation.

    split-n ∘ join      → id     (when the joined rows have n elements)
    join ∘ split-n      → id
    asVector-n ∘ asScalar → id   (when the scalarised vectors have n lanes)
    asScalar ∘ asVector-n → id
    transpose ∘ transpose → id
    id                  → (nothing): `id(x)` is `x`
    reduce(f, z)        → reduce(f, z) ∘ map(id)   (of an array no map computes)
    map(f)              → map(f) ∘ transpose ∘ transpose   (over a matrix)
    v(x)                → map^d(id)(v(x))   (a program's result that is a view of its inputs, copied)

The paper writes `split^n ∘ join^n`: the join must have joined rows of `n`, or the split regroups the
elements differently (`split-2 ∘ join` of rows of 4 is not the identity). A transposition undone by
another is removed too (after `lift.rules.transposition`'s interchange). The identity itself is
removed, since `f ∘ id = f` (rule 4(c) leaves one where a `reorder` was). Read right to left, the same
equation gives a bare reduction the map of the identity that the reduction derivations start from
(`reduce ∘ map(g)`: Figure 8's fused chunks, Figure 9's lanes and trees, the column partial reductions), so
that `x / sum(x)` or the column sums of a matrix parallelise as `asum` does; the map fuses into the
sequential reduction it becomes.
"""

from __future__ import annotations

from typing import Callable, Optional

from lift.ir.nodes import FunCall, Param
from lift.ir.opencl_patterns import AsScalar, AsVector, Vectorize
from lift.ir.patterns import Id, Join, Map, Pattern, Reduce, Split, Transpose, is_view
from lift.rules.rule import Equation, arg_call, expect, requires, rule
from lift.types.types import ArrayType, TupleType, VectorType, element_type


class CancellingPair(Equation):
    """`outer ∘ inner → id`, where `condition(outer call, inner call)` holds."""

    figure = "3(e)"
    on_functions = False

    def __init__(self, outer: type, inner: type, equation: str, description: str,
                 condition: Optional[Callable] = None, why: str = "", sized: bool = False):
        self.heads, self.inner = (outer,), inner
        self.name = f"{outer.paper}-{inner.paper}-id"
        self.equation, self.description = equation, description
        self.condition, self.why, self.sized = condition, why, sized

    def match(self, call):
        self.head(call)
        inner = arg_call(call, self, self.inner, self.inner.paper)
        expect(self.condition is None or self.condition(call, inner), self, self.why)
        return (inner.args[0],)

    def rewrite(self, call, x):
        return x


def _rows_of_split_length(split, join) -> bool:
    return join.args[0].t.elem.length == split.f.n


def _lanes_of_vector_width(as_vector, as_scalar) -> bool:
    t = element_type(as_scalar.args[0].t)
    return isinstance(t, VectorType) and t.width == as_vector.f.n


@rule("remove-id", figure="3(e)", description="the identity function does nothing", equation="f ∘ id → f",
      heads=Id, on_functions=False)
def remove_id(call):
    return call.args[0]


def _of_an_array(call) -> tuple:
    x = call.args[0]
    requires(not (isinstance(x, FunCall) and isinstance(x.f, Map)), "the reduced array is already a map")
    return ()


@rule("reduce-map-id", figure="3(e)", match=_of_an_array,
      description="a reduction of an array is the reduction of the array mapped by the identity (f = f ∘ id, "
                  "the form the reduction derivations start from)",
      equation="reduce(f, z) → reduce(f, z) ∘ map(id)", heads=Reduce)
def reduce_map_id(call):
    elem = call.args[0].t.elem
    return call.f(Map(Vectorize(elem.width, Id()) if isinstance(elem, VectorType) else Id())(call.args[0]))


def _over_a_matrix(call) -> tuple:
    x = call.args[0]
    requires(isinstance(x.t, ArrayType) and isinstance(x.t.elem, ArrayType), "the map is not over a matrix")
    requires(not (isinstance(x, FunCall) and isinstance(x.f, Transpose)), "the matrix is already transposed")
    return ()


@rule("map-transpose-transpose", figure="3(e)", match=_over_a_matrix, on_functions=False,
      description="a map over a matrix is a map over the columns of its transpose (transpose ∘ transpose = id)",
      equation="map(f) → map(f) ∘ transpose ∘ transpose", heads=Map)
def map_transpose_transpose(call):
    return call.f(Transpose()(Transpose()(call.args[0])))


def view_of_inputs(e) -> bool:
    """Whether `e` only rearranges the parameters it reads (views of views of parameters)."""
    return isinstance(e, Param) or isinstance(e, FunCall) and is_view(e.f) and all(map(view_of_inputs, e.args))


def _scalar_view(call) -> tuple:
    requires(is_view(call.f) and view_of_inputs(call), "the call computes something (it is not a view of inputs)")
    t = element_type(call.t)
    requires(isinstance(call.t, ArrayType) and not isinstance(t, TupleType),
             "the view is not an array of scalars or vectors")
    return ()


def _program_result(call, ctx) -> None:
    requires(ctx.step == "body" and ctx.parent is not None and ctx.parent.parent is None,
             "the view is not the program's result")


@rule("copy-view", figure="3(e)", match=_scalar_view, allowed=_program_result, on_functions=False,
      description="a program's result that is a view of its inputs is written by a copy, the map of the identity "
                  "down to its scalars (f = id ∘ f)",
      equation="v(x) → map^d(id)(v(x))", heads=Pattern)
def copy_view(call):
    return identity_copy(call.t)(call)


def identity_copy(t) -> Pattern:
    """`map^d(id)` for an array of type `t` of `d` dimensions: a copy down to its scalars (or vectors)."""
    depth = 0
    while isinstance(t, ArrayType):
        depth, t = depth + 1, t.elem
    copy = Vectorize(t.width, Id()) if isinstance(t, VectorType) else Id()
    for _ in range(depth):
        copy = Map(copy)
    return copy


RULES = (
    CancellingPair(Split, Join, "split-n ∘ join → id", "splitting joined rows of n elements into n is the identity",
                   _rows_of_split_length, "the joined rows do not have the split's length", sized=True),
    CancellingPair(Join, Split, "join ∘ split-n → id", "joining the chunks of a split is the identity"),
    CancellingPair(AsVector, AsScalar, "asVector-n ∘ asScalar → id",
                   "re-vectorising scalarised n-vectors by n is the identity",
                   _lanes_of_vector_width, "the scalarised vectors do not have the vector width"),
    CancellingPair(AsScalar, AsVector, "asScalar ∘ asVector-n → id",
                   "scalarising a vectorised array is the identity"),
    CancellingPair(Transpose, Transpose, "transpose ∘ transpose → id", "transposing twice is the identity"),
    reduce_map_id,
    map_transpose_transpose,
    copy_view,
    remove_id,
)
