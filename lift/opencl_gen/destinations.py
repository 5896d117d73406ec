"""Pass `plan-kernels`: where the outputs reach top-level computations, and which computations are shared.

A computation at the program's top level, outside every map, needs all of its input before it starts:
each one becomes its own kernel, with a temporary buffer between it and the next (Brook's multi-pass
reductions: asum's final `reduce-seq ∘ join ∘ map-workgroup(...)` is two kernels).

A program may have several outputs: a result that is a tuple of arrays has one output memory per
component. A tuple of arrays is computed component by component, each into its part of the destination;
`unzip` lets one map write several arrays (its inverse view is the tuple of the component destinations).
A top-level computation is computed once however often it occurs (structurally equal subterms, or a
parameter of a top-level lambda used several times, `lift.opencl_gen.inline_lets`), into the destinations
the outputs push down to it through `get`, `join` and the other layout patterns: the fused kernel of
AXPYDOT writes `z` straight into its output and the partial sums into a temporary. Inside a kernel, a
computation that several components of a tuple of arrays read (the two results of a `map-accum-seq`) is
computed once the same way (`shared`).
"""

from __future__ import annotations

from typing import Optional

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Param
from lift.ir.opencl_patterns import AsScalar, AsVector
from lift.ir.printer import paper
from lift.opencl_gen import views as V
from lift.opencl_gen.memory import is_storable
from lift.opencl_gen.pattern_views import MapView
from lift.opencl_gen.vector_views import AsScalarView, AsVectorView
from lift.types.arith import Cst
from lift.types.types import ArrayType, TupleType, Type, element_type


def plan_destinations(e: Expr, out: Optional[V.View], path: str = "body") -> dict:
    """`{computation: destination}` for the top-level computations of `e` that the destination `out` reaches."""
    planned: dict = {}
    for c, dest, where in destinations(e, out, path, True):
        planned[c] = merge(planned.get(c), dest, where)
    return planned


def destinations(e: Expr, out: Optional[V.View], path: str, top_level: bool):
    """`(computation, destination, where)` for every computation the destination `out` of `e` reaches
    through tuples of arrays, layout patterns and their inverses."""
    if out is None or not isinstance(e, FunCall):
        return
    f = e.f
    if is_tuple_of_arrays(e):
        for k, a in enumerate(e.args):
            yield from destinations(a, out.get(k), f"{path}.args{k}", top_level)
    elif is_layout(e):
        for k, (a, dest) in enumerate(zip(e.args, argument_destinations(e, out, top_level))):
            yield from destinations(a, dest, f"{path}.args{k}", top_level)
    elif isinstance(f, Lambda):
        yield from destinations(f.body, out, f"{path}.f.body", top_level)
    else:
        yield e, out, f"{paper(f)} at {path}"


def shared(e: FunCall, out: V.View, path: str, taken) -> dict:
    """Inside a kernel, for the tuple of arrays `e` stored into `out`: `{computation: merged destination}`
    for each computation occurring in several of its components (`tuple(get-0(m), join(get-1(m)))`,
    reached through arguments) and not in `taken`, computed once into the destinations they push to it
    together. A computation whose destinations clash is left out (each occurrence is computed apart)."""
    found: dict = {}
    for c, dest, where in destinations(e, out, path, False):
        found.setdefault(c, []).append((dest, where))
    chosen = {}
    for c, n in occurrences(e.args).items():
        if n < 2 or c in taken:
            continue
        merged = None
        try:
            for dest, where in found.get(c, ()):
                merged = merge(merged, dest, where)
        except LiftCodegenError:
            continue
        chosen[c] = merged
    return chosen


def argument_destinations(e: FunCall, out: Optional[V.View], top_level: bool) -> tuple:
    """Where each argument of the layout call `e` goes so that `e` lands in `out` (None: nowhere in place): a
    `zip` written into an array of tuples puts argument `k` into component `k` (a vectorised map of pairs writes
    `zip(asScalar ∘ get-0 ∘ unzip(m), asScalar ∘ get-1 ∘ unzip(m))`, `lift.rules.vectorization`)."""
    if isinstance(e.f, P.Zip) and out is not None:
        return tuple(out.get(k) for k in range(len(e.args)))
    if isinstance(e.f, P.Concat) and out is not None:
        return concatenated_destinations(e, out)
    return (inverse(e, out, top_level),) * len(e.args)


def concatenated_destinations(e: FunCall, out: V.View) -> tuple:
    """Where each array of `concat(a, b, ..)` goes so that the concatenation lands in `out`: its slice of `out`,
    the elements after the arrays before it (`drop-m` of `out` for `b`, `a` of `m` elements)."""
    dests, offset = [], Cst(0)
    for a in e.args:
        dests.append(V.DropView(out, offset, a.t))
        offset = offset + a.t.length
    return tuple(dests)


def inverse(e: FunCall, out: Optional[V.View], top_level: bool) -> Optional[V.View]:
    """Where the argument of the layout call `e` goes so that `e` lands in `out` (None: nowhere in place).

    `get-i` pushes `out` into component `i` of its tuple (at the top level, or inside a kernel where
    the tuple is computed), leaving the others open (`None` parts, filled with temporaries where the
    tuple is computed).
    """
    if out is None or len(e.args) != 1:
        return None
    f, arg_type = e.f, e.args[0].t
    if isinstance(f, P.Split):
        return V.JoinView(out, f.n, arg_type)
    if isinstance(f, P.Join):
        return V.SplitView(out, arg_type.elem.length, arg_type)
    if isinstance(f, AsVector):
        return AsScalarView(out, f.n, arg_type)
    if isinstance(f, AsScalar):
        return AsVectorView(out, element_type(arg_type).width, arg_type)
    if isinstance(f, P.Transpose):
        return V.TransposeView(out, arg_type)
    if isinstance(f, P.Id):
        return out
    if isinstance(f, P.Take):
        return V.DroppingView(out, f.n, arg_type)
    if isinstance(f, P.Map):
        g = _inverse_function(f.f, arg_type.elem)
        return None if g is None else MapView(out, g, arg_type)
    if isinstance(f, P.Unzip):
        return V.TupleView(tuple(out.get(k) for k in range(len(arg_type.elem.elems))), arg_type)
    if isinstance(f, P.Get) and isinstance(arg_type, TupleType) and (top_level or computes(e.args[0])):
        return V.TupleView(tuple(out if k == f.i else None for k in range(len(arg_type.elems))), arg_type)
    return None


def _inverse_function(g: FunDecl, arg_type: Type) -> Optional[FunDecl]:
    """The view function that undoes `g` applied to a value of `arg_type` (`split` for `join`), if any."""
    if isinstance(g, P.Split):
        return P.Join()
    if isinstance(g, P.Join):
        return P.Split(arg_type.elem.length)
    if isinstance(g, P.Transpose):
        return P.Transpose()
    if isinstance(g, AsScalar):
        return AsVector(element_type(arg_type).width)
    if isinstance(g, AsVector):
        return AsScalar()
    if isinstance(g, P.Map):
        inner = _inverse_function(g.f, arg_type.elem)
        return None if inner is None else P.Map(inner)
    if isinstance(g, Lambda) and len(g.params) == 1:
        return _inverse_composition(g)
    return None


def _inverse_composition(g: Lambda) -> Optional[Lambda]:
    """`λ y. inv(fn)(..(inv(f1)(y)))` for a composition `λ x. f1(..(fn(x)))` of invertible views (typed)."""
    chain, e = [], g.body
    while isinstance(e, FunCall) and len(e.args) == 1:
        chain.append(e)
        e = e.args[0]
    if not chain or e != g.params[0] or chain[0].t is None:
        return None
    y = Param("inverse_view", chain[0].t)
    body = y
    for call in chain:
        inv = _inverse_function(call.f, call.args[0].t)
        if inv is None or call.args[0].t is None:
            return None
        body = FunCall(inv, (body,), call.args[0].t)
    return Lambda((y,), body)


def merge(a: Optional[V.View], b: V.View, where: str) -> V.View:
    """Two destinations of one computation: the components of open tuples combine; anything else clashes."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, V.TupleView) and isinstance(b, V.TupleView):
        return V.TupleView(tuple(merge(p, q, where) for p, q in zip(a.parts, b.parts)), a.type)
    raise LiftCodegenError(f"the result of {where} is needed in two places of the output: copy it to the "
                           "second with a map (map(id))")


def occurrences(exprs) -> dict:
    """How often each computation (`computes`) occurs in `exprs`, reached through arguments only."""
    counts: dict = {}
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if isinstance(e, FunCall):
            if computes(e):
                counts[e] = counts.get(e, 0) + 1
            stack.extend(e.args)
    return counts


def computes(e: Expr) -> bool:
    """Whether `e` is a call that computes its value (not a parameter, nor a view of one)."""
    return isinstance(e, FunCall) and not (P.is_view(e.f) or isinstance(e.f, (P.Id, P.Tuple)))


def is_layout(e: FunCall) -> bool:
    """Whether the call `e` is a view of its arguments (a data-layout pattern, or `id`/`tuple` of arrays)."""
    return P.is_view(e.f) or (isinstance(e.f, (P.Id, P.Tuple)) and isinstance(e.t, ArrayType))


def is_tuple_of_arrays(e: FunCall) -> bool:
    """A `tuple` call with an array component: computed component by component, never as one value."""
    return isinstance(e.f, P.Tuple) and isinstance(e.t, TupleType) and not is_storable(e.t)
