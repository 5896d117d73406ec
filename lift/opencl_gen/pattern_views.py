"""The view of each data-layout pattern (`view_of`), and of a `map` of data-layout functions (`MapView`): what
`lift.opencl_gen.views` and `lift.opencl_gen.vector_views` make of `split`, `join`, `zip`, `pad`, ... applied to
the views of their inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.ir.nodes import FunDecl, Lambda, Param
from lift.ir.opencl_patterns import AsScalar, AsVector, ReorderStride
from lift.ir.printer import paper
from lift.opencl_gen.accesses import Access
from lift.opencl_gen.userfuns import c_literal
from lift.opencl_gen.vector_views import AsScalarView, AsVectorView
from lift.opencl_gen.views import (ConcatView, DropView, JoinView, PadView, ReorderStrideView, SlideView, SplitView,
                                   TakeView, TransposeView, TupleView, View)
from lift.types.arith import as_arith
from lift.types.types import Type, element_type


@dataclass(eq=False)
class MapView(View):
    """`map(g)` of a data-layout function `g`: element `[i]` is the view `g` gives of the input's `[i]`.

    So `map(pad)`, `map(slide)` and `map(transpose)` rewrite the indices of an inner dimension (Lift's
    multi-dimensional stencils: `slide2d = map(transpose) ∘ slide ∘ map(slide)`).
    """

    inner: View
    g: FunDecl
    type: Type

    def access(self, idx: tuple) -> Access:
        if not idx:
            raise LiftCodegenError(f"{self.type} needs an index")
        return self.index(idx[0]).access(tuple(idx[1:]))

    def index(self, i) -> View:
        """The view `g` gives of the input's `[i]`, so that a tuple it makes (`map(λt. zip(get-0 t, ..))`) has
        components."""
        return apply_view(self.g, [self.inner.index(as_arith(i))], self.type.elem)


def apply_view(g: FunDecl, args: list, t: Type) -> View:
    """The view of the data-layout function `g` (a view pattern, or a lambda composing them) of `args`."""
    if isinstance(g, Lambda):
        env = {p.name: a for p, a in zip(g.params, args)}
        return _compose(g.body, env)
    return view_of(g, args, t)


def _compose(e, env: dict) -> View:
    if isinstance(e, Param):
        return env[e.name]
    return apply_view(e.f, [_compose(a, env) for a in e.args], e.t)


def view_of(f: FunDecl, args: list, t: Type) -> View:
    """The view of the data-layout pattern `f` (or `id`, `tuple`) applied to the views `args`, of type `t`."""
    a = args[0]
    if isinstance(f, P.Split):
        return SplitView(a, f.n, t)
    if isinstance(f, P.Join):
        return JoinView(a, a.type.elem.length, t)
    if isinstance(f, P.Transpose):
        return TransposeView(a, t)
    if isinstance(f, ReorderStride):
        return ReorderStrideView(a, f.s, a.type.length, t)
    if isinstance(f, AsVector):
        return AsVectorView(a, f.n, t)
    if isinstance(f, AsScalar):
        return AsScalarView(a, element_type(a.type).width, t)
    if isinstance(f, (P.Zip, P.Tuple)):
        return TupleView(tuple(args), t)
    if isinstance(f, P.Unzip):
        return TupleView(tuple(a.get(k) for k in range(len(t.elems))), t)
    if isinstance(f, P.Get):
        return a.get(f.i)
    if isinstance(f, P.Slide):
        return SlideView(a, f.step, t)
    if isinstance(f, P.Pad):
        boundary = f.boundary if isinstance(f.boundary, str) else c_literal(f.boundary)
        return PadView(a, f.left, a.type.length, boundary, t)
    if isinstance(f, P.Take):
        return TakeView(a, t)
    if isinstance(f, P.Drop):
        return DropView(a, f.n, t)
    if isinstance(f, P.Concat):
        return ConcatView(tuple(args), t)
    if isinstance(f, P.PadToMultiple):
        return PadView(a, 0, a.type.length, f.value if isinstance(f.value, str) else c_literal(f.value), t)
    if isinstance(f, P.Id):
        return a
    if isinstance(f, P.Map) and P.is_view(f):
        return MapView(a, f.f, t)
    raise LiftCodegenError(f"no view for {paper(f)}")
