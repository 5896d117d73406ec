"""Pass `infer-address-spaces`: every result that needs new memory says where, with an explicit cast.

The rules choose memory with `toGlobal`, `toLocal` and `toPrivate` (paper 4.2, rule 4(c)). A result they
leave uncast follows one fixed rule of the memory model, `default_space`: inside a work-item (a
`map-local`, `map-global` or sequential pattern, or a kernel that runs in one work-item) it is private,
else global (a `map-workgroup`'s result is shared by its work-items). The rule is a convention, not an
optimisation: this pass writes it into the expression as casts, so that the emitter
(`lift.opencl_gen.emit`) and the cost model (`lift.explore.cost_model`) read the casts and decide nothing.

A result needs new memory where the emitter gives it no destination: a map, or a fold with an array
accumulator, that is an argument of a call; and the open components of a tuple whose other components
have a destination (`get-0(map-accum-seq(...))`: a destination with holes, which the cast's space fills).
Destinations flow as the emitter passes them: into a pattern's function, through lambdas, tuples of
arrays and the inverses of layout patterns (`lift.opencl_gen.destinations`). Outside every kernel nothing
is cast: a kernel's result goes to global memory, the only memory kernels share.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.ir.mapper import Mapper
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda
from lift.ir.opencl_patterns import AddressSpaceCast, ToGlobal, ToPrivate
from lift.opencl_gen import destinations as D
from lift.opencl_gen import views as V
from lift.opencl_gen.address_spaces import GLOBAL, PRIVATE
from lift.opencl_gen.barriers import at_workgroup_level
from lift.opencl_gen.launch import SEQUENTIAL, derive_launch
from lift.opencl_gen.memory import is_storable
from lift.rules.hierarchy import is_sequential_safe
from lift.types.types import ArrayType, TupleType, Type, element_type

THREADED = ("lcl", "glb", "seq", "reduce", "seq-kernel")
_CASTS = {GLOBAL: ToGlobal, PRIVATE: ToPrivate}


def default_space(kinds) -> str:
    """The space of an uncast result inside loops of these kinds (`wrg`, `lcl`, `glb`, `seq`, `reduce`,
    `seq-kernel`, outermost first)."""
    return PRIVATE if any(k in THREADED for k in kinds) else GLOBAL


def infer_address_spaces(body: Expr) -> Expr:
    """`body` (lowered and typed) with each result that needs new memory and has no cast wrapped in the cast
    `default_space` gives it; types are kept."""
    return _Spaces().top(body)


def no_space(path: str) -> LiftCodegenError:
    """The internal error for a result that needs new memory and has no cast saying where."""
    return LiftCodegenError(f"internal error: the result at {path} needs memory and has no address space (the "
                            "pass infer-address-spaces casts every such result)")


def has_holes(view: Optional[V.View]) -> bool:
    """Whether a destination leaves some tuple components open (`None`)."""
    return isinstance(view, V.TupleView) and any(p is None or has_holes(p) for p in view.parts)


@dataclass(eq=False)
class _Given(V.View):
    """A whole destination the emitter will have (which memory does not matter here)."""

    type: Type

    def get(self, k: int) -> V.View:
        return given(V.component_type(self.type, k))


def given(t: Type) -> V.View:
    """A stand-in for a whole destination of type `t`, shaped as the emitter's: a value with no flat layout
    has one part per component."""
    elem = element_type(t)
    if not is_storable(t) and isinstance(elem, TupleType):
        return V.TupleView(tuple(given(V.component_type(t, k)) for k in range(len(elem.elems))), t)
    return _Given(t)


def _needs_memory(f: FunDecl) -> bool:
    """Whether a call of `f` with no destination stores its result in new memory (else it is a value, a view,
    or, for `iterate`, its own buffer)."""
    return isinstance(f, (P.AbstractMap, P.MapSeqSlide, P.MapAccumSeq)) or (
        isinstance(f, P.ReduceSeq) and isinstance(f.init.t, ArrayType))


def _call(e: FunCall, f: FunDecl, args: tuple) -> FunCall:
    if f is e.f and all(a is b for a, b in zip(args, e.args)):
        return e
    return FunCall(f, args, e.t, e.written_at)


class _Spaces(Mapper):
    """`self(f, out, t, kinds)`: the function `f` with casts inside, for a call with destination `out` (None,
    or a view) and result type `t` inside loops of `kinds`."""

    def __init__(self):
        self.shared: dict = {}
        self.rewritten: dict = {}

    def top(self, e: Expr) -> Expr:
        """A top-level expression: each computation outside every map is a kernel with a global destination."""
        if not isinstance(e, FunCall):
            return e
        args = tuple(self.top(a) for a in e.args)
        f = e.f
        if D.is_tuple_of_arrays(e) or D.is_layout(e):
            pass
        elif isinstance(f, Lambda):
            f = self.lam(f, self.top(f.body))
        else:
            f = self(f, given(e.t), e.t, ("seq-kernel",) if derive_launch(e) is SEQUENTIAL else ())
        return _call(e, f, args)

    def expr(self, e: Expr, out: Optional[V.View], kinds: tuple) -> Expr:
        """An expression inside a kernel whose value goes to `out` (the emitter's `emit`)."""
        if not isinstance(e, FunCall):
            return e
        if D.is_tuple_of_arrays(e):
            shared = D.shared(e, out, "", self.shared) if out is not None else {}
            self.shared.update(shared)
            args = tuple(self.expr(a, None if out is None else out.get(k), kinds) for k, a in enumerate(e.args))
            for c in shared:
                del self.shared[c]
                self.rewritten.pop(c, None)
            return _call(e, e.f, args)
        if D.is_layout(e):
            return _call(e, e.f, tuple(self.expr(a, inverse, kinds)
                                        for a, inverse in zip(e.args, D.argument_destinations(e, out, False))))
        if e in self.shared:
            if e not in self.rewritten:
                self.rewritten[e] = self.computation(e, self.shared[e], kinds)
            return self.rewritten[e]
        return self.computation(e, out, kinds)

    def computation(self, e: FunCall, out: Optional[V.View], kinds: tuple) -> FunCall:
        args = tuple(self.expr(a, None, kinds) for a in e.args)
        f = e.f
        if has_holes(out) or (out is None and _needs_memory(f)):
            f = self(f, given(e.t), e.t, kinds)
            if not isinstance(f, AddressSpaceCast):
                f = _CASTS[default_space(kinds)](f)
        else:
            f = self(f, out, e.t, kinds)
        return _call(e, f, args)

    @staticmethod
    def lam(f: Lambda, body: Expr) -> Lambda:
        return f if body is f.body else replace(f, body=body)

    def map_default(self, f: FunDecl, out, t, kinds) -> FunDecl:
        return f

    def map_Lambda(self, f: Lambda, out, t, kinds) -> Lambda:
        return self.lam(f, self.expr(f.body, out, kinds))

    def map_AbstractMap(self, f: P.AbstractMap, out, t, kinds) -> FunDecl:
        inner = self(f.f, given(t.elem), t.elem, kinds + (f.thread_level,))
        return f if inner is f.f else replace(f, f=inner)

    map_MapSeqSlide = map_AbstractMap

    def map_Fold(self, f: P.Fold, out, t, kinds) -> FunDecl:
        """The initial value is computed outside the loop (into the accumulator where it is an array); each
        step writes the accumulator (and, for `map-accum-seq`, an element of the result). A fold at work-group
        level with `map-local`s in its operator runs in all work-items of the group together: its step is at
        work-group level, as a `map-workgroup`'s function is."""
        acc_t = f.init.t
        init = self.expr(f.init, given(acc_t) if isinstance(acc_t, ArrayType) else None, kinds)
        if isinstance(f, P.MapAccumSeq):
            step_t = TupleType(t.elems[0].elem, acc_t)
            step_out = V.TupleView((given(step_t.elems[0]), given(acc_t)), step_t)
        else:
            step_t, step_out = acc_t, given(acc_t)
        shared = at_workgroup_level(kinds) and not is_sequential_safe(f.f)
        step = self(f.f, step_out, step_t, kinds + (() if shared else ("reduce", "seq")))
        return f if step is f.f and init is f.init else replace(f, f=step, init=init)

    def map_AddressSpaceCast(self, f: AddressSpaceCast, out, t, kinds) -> FunDecl:
        inner = self(f.f, given(t), t, kinds)
        return f if inner is f.f else replace(f, f=inner)

    map_Iterate = map_IterateHost = map_AddressSpaceCast
