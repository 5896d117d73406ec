"""Pass `allocate-memory`: the memory of every result the program stores in new memory, before emission
(Lift's `OpenCLMemoryAllocator`).

A result needs new memory where it reaches no destination: a cast result with none (`toLocal(map-local(f))`
as an argument), a kernel's result that reaches no output, and the open components of a destination with
holes (`get-0(map-accum-seq(...))`). The pass walks the planned program as the emitter does, passing
destinations the same way (into a pattern's function, through lambdas, tuples of arrays, shared
computations and the inverses of layout patterns), and gives each such result an `Allocation`: its space,
element type and size, the type's size times the lengths of the enclosing maps whose work-items (or
work-groups) each need their own copy: all of them in global memory, those of `map-local` in local
memory, none in private memory. A private result at work-group level that `map-local`s write (the accumulator of
a `reduce-seq` at work-group level, whose initial value a `map-local[1](map-local[0](..))` writes) is held by
each work-item in part: the dimensions those `map-local`s index are collapsed (Lift's collapse of private
memory), each work-item holding only the elements of its own ids (`owned_dims`, `views.OwnedView`).

Allocations are keyed by where the emitter meets them: the path of the cast (`body.args0.f`), or of the
expression whose result or open components they hold. A value with no flat layout (a tuple of arrays)
gets a tuple of allocations, one per component; a destination with holes a tuple with `None` where it
already has memory. The emitter names each memory where it meets it, from the counter it also draws
loop indices and values from, so that names follow the code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.ir.mapper import Mapper
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda
from lift.ir.opencl_patterns import AddressSpaceCast
from lift.ir.typecheck import infer_fun
from lift.opencl_gen import destinations as D
from lift.opencl_gen.barriers import at_workgroup_level
from lift.opencl_gen import views as V
from lift.opencl_gen.address_spaces import GLOBAL, LOCAL, PRIVATE
from lift.opencl_gen.memory import element_count, is_storable
from lift.opencl_gen.space_inference import given, has_holes
from lift.types.arith import ArithExpr, Var
from lift.types.types import ArrayType, TupleType, Type, element_type

_LENGTH = Var("len", 1, None)
"""The length of an `iterate` step's input, which changes from step to step."""

REPLICATED = {GLOBAL: ("wrg", "lcl", "glb"), LOCAL: ("lcl",), PRIVATE: ()}
"""The kinds of the enclosing maps whose ids each hold their own copy of a memory in a space."""


@dataclass(frozen=True)
class Allocation:
    """New memory for a value of `type`: `size` elements of `elem` in `space`, one slice per id of the
    enclosing maps of the kinds `REPLICATED[space]`."""

    type: Type
    space: str
    elem: Type
    size: ArithExpr
    owned: tuple = ()  # `(position, dim)`: dimensions of `type` each work-item holds only its `map-local[dim]` id of


def owned_dims(f: FunDecl) -> tuple:
    """`(position, dim)` for each outer dimension of the result of `f` that a `map-local[dim]` writes: the
    `map-local`s `f` begins with, or, for a `reduce-seq`, those its initial value begins with (one position
    further in, past the fold's result of length 1)."""
    if isinstance(f, AddressSpaceCast):
        return owned_dims(f.f)
    if isinstance(f, P.MapLcl):
        return ((0, f.dim),) + tuple((p + 1, d) for p, d in owned_dims(f.f))
    if isinstance(f, Lambda) and isinstance(f.body, FunCall) and f.body.args == f.params:
        return owned_dims(f.body.f)
    if isinstance(f, P.ReduceSeq) and isinstance(f.init, FunCall):
        return tuple((p + 1, d) for p, d in owned_dims(f.init.f))
    return ()


def allocation(t: Type, space: str, lengths: tuple, where: str, owned: tuple = ()):
    """The memory of a value of `t` in `space` inside maps of `lengths` (`(kind, length)`, outermost first):
    an `Allocation`, or a tuple of them for a value with no flat layout (one per component). `owned`: the
    dimensions of a private value that each work-item holds only its part of (`owned_dims`)."""
    if not is_storable(t) and isinstance(element_type(t), TupleType):
        return tuple(allocation(V.component_type(t, k), space, lengths, where, owned)
                     for k in range(len(element_type(t).elems)))
    if not is_storable(t):
        raise LiftCodegenError(f"the result at {where} has type {t}, which has no flat memory layout")
    size = element_count(t)
    for n in _lengths_at(t, [p for p, _ in owned]):
        size = size / n
    for kind, n in lengths:
        if kind in REPLICATED[space]:
            size = size * n
    if _LENGTH in size.free_vars():
        raise LiftCodegenError(f"the result at {where} is inside iterate and its size {size} changes from step to "
                               "step: store it outside the iterate, or in a slice that does not grow with the array")
    if space == PRIVATE and not size.is_constant:
        raise LiftCodegenError(f"the private array at {where} has the symbolic size {size}: private "
                               "memory needs a constant size (use toGlobal, or bind the sizes)")
    return Allocation(t, space, element_type(t), size, owned)


def _lengths_at(t: Type, positions: list) -> list:
    """The lengths of the dimensions of `t` at `positions`."""
    lengths = []
    for p in range(max(positions, default=-1) + 1):
        if p in positions:
            lengths.append(t.length)
        t = t.elem
    return lengths


def allocate_memory(body: Expr, out: Optional[V.View], planned: dict) -> dict:
    """`{path: allocation}` for the results of `body` (lowered, cast, planned) that need new memory."""
    walk = _Allocator(planned)
    walk.emit(body, out, "body")
    return walk.found


class _Allocator(Mapper):
    """The emitter's walk (`lift.opencl_gen.emit.Emitter`) reduced to destinations and map lengths:
    `self(f, arg_types, t, out, path)` walks a call of `f`."""

    def __init__(self, planned: dict):
        self.planned = planned
        self.found: dict = {}
        self.lengths: Optional[list] = None  # inside a kernel: the enclosing maps, `(kind, length)`
        self.computed: set = set()
        self.shared: dict = {}
        self.shared_done: set = set()

    def allocate(self, path: str, t: Type, space: str, out: Optional[V.View] = None, owned: tuple = ()) -> None:
        """Memory for the result at `path` in `space`: all of it, or the open components of `out`."""
        self.found[path] = self._fill(out, t, space, path) if not owned else allocation(
            t, space, tuple(self.lengths or ()), path, owned)

    def _fill(self, out: Optional[V.View], t: Type, space: str, path: str):
        if out is None:
            return allocation(t, space, tuple(self.lengths or ()), path)
        if not isinstance(out, V.TupleView):
            return None
        return tuple(self._fill(p, V.component_type(out.type, k), space, path) for k, p in enumerate(out.parts))

    def emit(self, e: Expr, out: Optional[V.View], path: str) -> None:
        if not isinstance(e, FunCall):
            return
        f = e.f
        if D.is_tuple_of_arrays(e):
            shared = D.shared(e, out, path, self.shared) if out is not None and self.lengths is not None else {}
            self.shared.update(shared)
            for k, a in enumerate(e.args):
                self.emit(a, None if out is None else out.get(k), f"{path}.args{k}")
            for c in shared:
                del self.shared[c]
                self.shared_done.discard(c)
        elif D.is_layout(e):
            for i, (a, inverse) in enumerate(zip(e.args, D.argument_destinations(e, out, self.lengths is None))):
                self.emit(a, inverse, f"{path}.args{i}")
        elif self.lengths is None and not isinstance(f, Lambda):
            self.kernel(e, out, path)
        elif e in self.shared:
            if e not in self.shared_done:
                self.shared_done.add(e)
                self.computation(e, self.shared[e], path)
        else:
            self.computation(e, out, path)

    def computation(self, e: FunCall, out: Optional[V.View], path: str) -> None:
        for i, a in enumerate(e.args):
            self.emit(a, None, f"{path}.args{i}")
        f = e.f
        if has_holes(out) and isinstance(f, AddressSpaceCast):
            self.allocate(path, e.t, f.space, out)
            f, out = f.f, given(e.t)
        self.call(f, [a.t for a in e.args], e.t, out, f"{path}.f")

    def kernel(self, e: FunCall, out: Optional[V.View], path: str) -> None:
        """A top-level computation: one kernel, into its planned destination or new global memory."""
        if e in self.computed:
            return
        self.computed.add(e)
        for i, a in enumerate(e.args):
            self.emit(a, None, f"{path}.args{i}")
        out = self.planned.get(e, out)
        if out is None or has_holes(out):
            self.allocate(path, e.t, GLOBAL, out)
        self.lengths = []
        try:
            self.call(e.f, [a.t for a in e.args], e.t, given(e.t), f"{path}.f")
        finally:
            self.lengths = None

    def call(self, f: FunDecl, arg_types: list, t: Type, out, path: str) -> None:
        if f.arity > 1 and len(arg_types) == 1 and isinstance(arg_types[0], TupleType):
            arg_types = list(arg_types[0].elems)
        self(f, arg_types, t, out, path)

    def map_default(self, f: FunDecl, arg_types, t, out, path: str) -> None:
        return None

    def map_Lambda(self, f: Lambda, arg_types, t, out, path: str) -> None:
        self.emit(f.body, out, f"{path}.body")

    def map_AbstractMap(self, f: P.AbstractMap, arg_types, t, out, path: str) -> None:
        self.lengths.append((f.thread_level, arg_types[0].length))
        try:
            self.call(f.f, [arg_types[0].elem], t.elem, given(t.elem), f"{path}.f")
        finally:
            self.lengths.pop()

    def map_MapSeqSlide(self, f: P.MapSeqSlide, arg_types, t, out, path: str) -> None:
        """The window is the emitter's (`call_MapSeqSlide`); the function applied to it is walked as a map's."""
        self.lengths.append((f.thread_level, t.length))
        try:
            self.call(f.f, [ArrayType(arg_types[0].elem, f.size)], t.elem, given(t.elem), f"{path}.f")
        finally:
            self.lengths.pop()

    def map_Fold(self, f: P.Fold, arg_types, t, out, path: str) -> None:
        acc_t = f.init.t
        self.emit(f.init, given(acc_t) if isinstance(acc_t, ArrayType) else None, f"{path}.init")
        step_t = TupleType(t.elems[0].elem, acc_t) if isinstance(f, P.MapAccumSeq) else acc_t
        self.call(f.f, [acc_t, arg_types[0].elem], step_t, given(step_t), f"{path}.f")

    def map_AddressSpaceCast(self, f: AddressSpaceCast, arg_types, t, out, path: str) -> None:
        if out is None:
            workgroup = self.lengths and at_workgroup_level([k for k, _ in self.lengths])
            self.allocate(path, t, f.space, owned=owned_dims(f) if f.space == PRIVATE and workgroup else ())
        self.call(f.f, arg_types, t, given(t), f"{path}.f")

    def map_IterateHost(self, f: P.IterateHost, arg_types, t, out, path: str) -> None:
        """The step is the kernel, walked once into a whole destination (the emitter's two buffers)."""
        self.call(f.f, arg_types, t, given(t), f"{path}.f")

    def map_Iterate(self, f: P.Iterate, arg_types, t, out, path: str) -> None:
        """The step is walked once, typed for an input of any length (as the emitter types it)."""
        (in_t,) = arg_types
        step_in = ArrayType(in_t.elem, _LENGTH)
        body_f, body_t = infer_fun(f.f, [step_in])
        self.call(body_f, [step_in], body_t, given(body_t), f"{path}.f")
