"""Where results are stored (Figure 4(d)), and copies that move data between memories.

    map-local(f) → toLocal(map-local(f)) | toGlobal(map-local(f))
    map-seq(f)   → toPrivate(map-seq(f))                      (inside a work-item)
    f            → map(id) ∘ f                                (a copy)
    u(.., a, ..) → u(.., toPrivate(map-seq(id))(a), ..)      (a user function's array argument, in a work-item)

The address-space patterns only say where the result of their function goes (Section 3.2); the value
is unchanged. A `map-local` runs inside a `map-workgroup`, which owns local memory, so its result may
go to local or global memory. The result of a `map-seq` run by one work-item (inside a `map-local`
or `map-global`) may go to that work-item's private memory when its length is a constant, as OpenCL
private arrays need.

The copy is not in the figures: `map(id)` is the identity on arrays, and once lowered and placed it
moves data from one memory to another, as the `toGlobal(map-local(map-seq(id)))` that writes a
work-group's result from local back to global memory in Figure 9(a). It applies inside the parallel
maps of a kernel, where there are memories to move between, to calls whose result is an array of
scalars, vectors (copied as `vectorize-n(id)`, as Figure 9(b) writes it) or tuples, and not to the
result of a copy.

A user function given an array (`dist(p: Float[3], q: Float[3])`, a stencil's `f(w: Float[27])`) reads it
through a pointer, so the array must lie in memory as it is typed: an input does, but a row of a matrix
inside the map over its rows, or a window of `slide` and `pad` (a view: index arithmetic over another
array), does not. `private-argument` copies such an argument, a parameter of a pattern's function or a
view, of constant length (at most `PRIVATE_ARGUMENT_LIMIT` scalars), into the work-item's private memory
first; for `vectorize-n(u)` of such a `u` too, whose argument is then an array of vectors (`n` windows, one per
lane, of `vectorize-windows`).
"""

from __future__ import annotations

from typing import Callable, Optional

from lift.ir.nodes import FunCall, FunDecl, Lambda, Param
from lift.ir.opencl_patterns import AddressSpaceCast, ToGlobal, ToLocal, ToPrivate, Vectorize
from lift.ir.patterns import AbstractMap, Id, Map, MapGlb, MapLcl, MapSeq, Pattern, is_view
from lift.ir.userfun import UserFun
from lift.rules.hierarchy import PARALLEL_MAPS
from lift.rules.rule import Equation, called_userfun, expect, requires, rule
from lift.rules.sizes import integer
from lift.types.types import ArrayType, ScalarType, VectorType


class StoreIn(Equation):
    """`kind(f) → cast(kind(f))` where the result of `kind(f)` has no address space yet and `condition` holds."""

    figure = "4(d)"

    def __init__(self, cast: type, kind: type, description: str, condition: Optional[Callable] = None,
                 sized: bool = False):
        self.cast, self.heads = cast, (kind,)
        self.name = "to-" + cast.space
        self.equation = f"{kind.paper}(f) → {cast.paper}({kind.paper}(f))"
        self.description, self.condition, self.sized = description, condition, sized

    def allowed(self, call, ctx):
        expect(not (ctx.is_function and isinstance(ctx.parent.node, AddressSpaceCast)), self,
               "the result already has an address space")
        if self.condition:
            self.condition(self, call, ctx)

    def rewrite(self, call):
        return self.cast(call.f)(*call.args)


def _in_a_work_item(rule, call, ctx) -> None:
    expect(any(isinstance(p, (MapLcl, MapGlb)) for p in ctx.enclosing()), rule, "not inside a work-item")
    expect(integer(call.args[0].t.length) is not None, rule, "private arrays need a constant length")


def _copyable(call) -> None:
    requires(isinstance(call.t, ArrayType) and not isinstance(call.t.elem, ArrayType),
             "copies typed arrays of scalars, vectors or tuples")
    requires(not is_copy(call.f), "the value is already a copy")


def _in_a_kernel_not_copied(call, ctx) -> None:
    requires(any(isinstance(p, PARALLEL_MAPS) for p in ctx.enclosing()), "not inside a kernel's parallel map")
    consumer = ctx.parent.node
    requires(not (isinstance(consumer, FunCall) and is_copy(consumer.f)), "the value is already copied")


@rule("copy", figure="9(a)", description="copy a result with a map of the identity (to move it to another memory)",
      equation="f → map(id) ∘ f", heads=FunDecl, on_functions=False, match=_copyable,
      allowed=_in_a_kernel_not_copied)
def copy(call):
    elem = call.t.elem
    return Map(Vectorize(elem.width, Id()) if isinstance(elem, VectorType) else Id())(call)


def is_copy(f: FunDecl) -> bool:
    while isinstance(f, AddressSpaceCast):
        f = f.f
    if isinstance(f, AbstractMap):
        return is_copy(f.f)
    return isinstance(f, Id) or (isinstance(f, Vectorize) and isinstance(f.f, Id))


PRIVATE_ARGUMENT_LIMIT = 256
"""The most scalars `private-argument` copies into a work-item's private memory (registers, where they fit)."""


def private_size(t) -> Optional[int]:
    """The number of scalars of `t`, an array (of arrays) of scalars of constant lengths; else None."""
    size = 1
    while isinstance(t, ArrayType):
        n = integer(t.length)
        if n is None:
            return None
        size, t = size * n, t.elem
    return size if isinstance(t, ScalarType) else None


def _bound_by_a_pattern(param: Param, ctx) -> bool:
    """Whether `param` is a parameter of a function a pattern applies (`λrow` in a map over rows), not of a
    let or of the program, whose values are whole memories."""
    while ctx is not None:
        node = ctx.node
        if isinstance(node, Lambda) and param in node.params:
            return ctx.parent is not None and isinstance(ctx.parent.node, Pattern) and ctx.step in ctx.parent.node.funs
        ctx = ctx.parent
    return False


def _copied_arguments(call, ctx) -> list:
    """One choice `k` per array argument of the user function `call` to copy to private memory: a parameter
    of a pattern's function or a view, of constant length, in a work-item."""
    requires(any(isinstance(p, (MapLcl, MapGlb)) for p in ctx.enclosing()), "not inside a work-item")

    def copied(a, t) -> bool:
        size = private_size(t) if isinstance(t, ArrayType) else None
        return size is not None and size <= PRIVATE_ARGUMENT_LIMIT and (
            (isinstance(a, Param) and _bound_by_a_pattern(a, ctx)) or (isinstance(a, FunCall) and is_view(a.f)))

    u = called_userfun(call)
    ks = [{"k": k} for k, (a, t) in enumerate(zip(call.args, u.in_types)) if copied(a, t)]
    requires(ks, "no array argument is a row, an element or a view of constant length")
    return ks


@rule("private-argument", figure="4(d)", heads=(UserFun, Vectorize), on_functions=False, sized=True,
      choices=_copied_arguments,
      description="a user function's (or its vectorised version's) array argument that is a row or a window (not "
                  "an input) is copied to private memory, which the function then reads",
      equation="u(.., a, ..) → u(.., toPrivate(map-seq(..(map-seq(id))))(a), ..)    (a of constant length)")
def private_argument(call, k):
    requires(isinstance(k, int) and 0 <= k < len(call.args), f"no argument {k!r}")
    a = call.args[k]
    return FunCall(call.f, call.args[:k] + (ToPrivate(identity_copy(a.t))(a),) + call.args[k + 1:])


def identity_copy(t):
    """`map-seq(..(map-seq(id)))`, one map per dimension of `t`."""
    copy = Id()
    while isinstance(t, ArrayType):
        copy, t = MapSeq(copy), t.elem
    return copy


RULES = (StoreIn(ToLocal, MapLcl, "store the result of a map-local in the work-group's local memory"),
         StoreIn(ToGlobal, MapLcl, "store the result of a map-local in global memory"),
         StoreIn(ToPrivate, MapSeq, "store the result of a work-item's map-seq in its private memory", _in_a_work_item,
                 sized=True),
         copy, private_argument)
