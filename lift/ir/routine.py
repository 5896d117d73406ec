"""Routines: named lift functions that stand for one library call, and their inlining.

A routine is the kernel-fusion paper's *elementary function* (Filipovič et al., Section 4.1): one BLAS
call such as `axpy` or `gemv`, written once over high-level patterns and called by programs of several
calls (the paper's *script*). Unlike a lambda, calling a routine never inlines it: the program keeps its
calls, so that the data-dependency graph of the calls (`lift.ir.call_graph`) can be read off the program
and fusion can choose which calls to merge. `inline_routines` substitutes calls by their bodies when a
transformation or the code generator needs the patterns.

A routine declares its parameter types, which may be generic in their sizes: `gemv` over `Float[N][M]`
applies to a matrix and to its transpose in one program. Where it is applied, its size variables are
instantiated by matching the declared types against the arguments' types (`instantiate`); the body is
then typed at the arguments' types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Union

from lift.errors import LiftTypeError
from lift.ir.nodes import FunCall, FunDecl, Lambda, Node, Param, free_params, fun, substitute
from lift.types.arith import Var
from lift.types.types import ArrayType, TupleType, Type


@dataclass(frozen=True, eq=False)
class Routine(FunDecl):
    """A named function standing for one library call: `name(params) = lam` with declared parameter types.

    Calling it builds a `FunCall` (it is never inlined); its meaning and its type are its lambda's.
    """

    name: str
    types: tuple
    lam: Lambda

    def __post_init__(self):
        if not self.name.isidentifier():
            raise LiftTypeError(f"routine name {self.name!r} is not an identifier")
        if len(self.types) != len(self.lam.params):
            raise LiftTypeError(
                f"routine {self.name}: {len(self.types)} parameter types for {len(self.lam.params)} parameters")
        free = free_params(self.lam)
        if free:
            names = ", ".join(sorted(p.name for p in free))
            raise LiftTypeError(f"routine {self.name} refers to {names}, which are not its parameters")

    @property
    def arity(self) -> int:
        return len(self.types)

    @property
    def size_vars(self) -> frozenset:
        """The size variables of the declared parameter types: instantiated wherever the routine is applied."""
        return frozenset().union(*(_type_vars(t) for t in self.types))

    def signature(self) -> str:
        """`axpy(a: Float, x: Float[N], y: Float[N])`."""
        params = ", ".join(f"{p.name}: {t}" for p, t in zip(self.lam.params, self.types))
        return f"{self.name}({params})"

    def instantiate(self, arg_types: list, where: str = "the root") -> dict:
        """The routine's size variables bound by matching its declared types to `arg_types` (name to size).

        A plain size variable (`Float[N]`) is bound by the first argument that has it; every declared type
        instantiated with the binding must then equal its argument's type, else a `LiftTypeError` names
        the routine, the parameter and both types.
        """
        sizes: dict = {}
        for want, got in zip(self.types, arg_types):
            _bind(want, got, sizes)
        unbound = sorted(v.name for v in self.size_vars if v.name not in sizes)
        if unbound:
            raise LiftTypeError(
                f"routine {self.signature()}: cannot infer {', '.join(unbound)} from the arguments "
                f"({', '.join(map(str, arg_types))}) (at {where})")
        for p, want, got in zip(self.lam.params, self.types, arg_types):
            expected = instantiate_type(want, sizes)
            if expected != got:
                raise LiftTypeError(
                    f"routine {self.signature()} applied to ({', '.join(map(str, arg_types))}): "
                    f"{p.name} should be {expected}, got {got} (at {where})")
        return sizes

    def __str__(self) -> str:
        return self.name


def routine(name_or_types: Union[str, list, tuple], types: Optional[list] = None,
            f: Optional[Callable] = None):
    """Declare a routine: `routine("axpy", [Float, Vec, Vec], lambda a, x, y: ...)`.

    As a decorator, `@routine([Float, Vec, Vec])` over `def axpy(a, x, y): ...` names it after the
    function (and `@routine("axpy", [...])` names it explicitly). The body is type checked at once, at
    the declared (possibly symbolic) sizes.
    """
    if isinstance(name_or_types, str):
        name = name_or_types
        if types is None:
            raise LiftTypeError(f"routine {name}: declare its parameter types, routine({name!r}, [types], f)")
    else:
        name, types, f = None, name_or_types, types if f is None else f

    def declare(fn: Callable) -> Routine:
        if not callable(fn):
            raise LiftTypeError(f"routine: expected a Python function, got {fn!r}")
        declared = list(types) if isinstance(types, (list, tuple)) else [types]
        lam = fun(declared, fn)
        return Routine(name or fn.__name__, tuple(declared), lam)

    return declare if f is None else declare(f)


def instantiate_type(t: Type, sizes: dict) -> Type:
    """`t` with its size variables replaced by `sizes` (names to sizes)."""
    if isinstance(t, ArrayType):
        return ArrayType(instantiate_type(t.elem, sizes), t.length.substitute(sizes) if sizes else t.length)
    if isinstance(t, TupleType):
        return TupleType(*(instantiate_type(e, sizes) for e in t.elems))
    return t


def _bind(want: Type, got: Type, sizes: dict) -> None:
    if isinstance(want, ArrayType) and isinstance(got, ArrayType):
        if isinstance(want.length, Var) and want.length.name not in sizes:
            sizes[want.length.name] = got.length
        _bind(want.elem, got.elem, sizes)
    elif isinstance(want, TupleType) and isinstance(got, TupleType) and len(want.elems) == len(got.elems):
        for w, g in zip(want.elems, got.elems):
            _bind(w, g, sizes)


def _type_vars(t: Type) -> frozenset:
    if isinstance(t, ArrayType):
        return t.length.free_vars() | _type_vars(t.elem)
    if isinstance(t, TupleType):
        return frozenset().union(*(_type_vars(e) for e in t.elems))
    return frozenset()


# --- inlining ----------------------------------------------------------------------------------------


def inline_routines(program: Node, only: Optional[Iterable] = None) -> Node:
    """`program` with every routine call (or those of the routines in `only`, by routine or name) replaced
    by the routine's body with its parameters bound to the arguments (beta reduction).

    A routine used as a function value (`map(dot)`) becomes its lambda. Routines inside inlined bodies
    are inlined too. Binders of the body that would capture a free parameter of an argument are renamed
    (deterministically), and equal calls inline to equal expressions, so sharing by structural equality
    survives. The meaning is unchanged: `interpret(inline_routines(p)) == interpret(p)`.
    """
    names = None if only is None else frozenset(r if isinstance(r, str) else r.name for r in only)
    cache: dict = {}

    def chosen(r: Routine) -> bool:
        return names is None or r.name in names

    def go(e: Node) -> Node:
        hit = cache.get(e)
        if hit is not None:
            return hit
        if isinstance(e, FunCall) and isinstance(e.f, Routine) and chosen(e.f):
            args = tuple(go(a) for a in e.args)
            lam = go(e.f.lam)
            if len(args) == len(lam.params):
                avoid = frozenset(p.name for a in args for p in free_params(a))
                lam = _avoid_capture(lam, avoid, _names(lam) | avoid)
                out = substitute(lam.body, dict(zip(lam.params, args)))
            else:
                out = FunCall(lam, args)
        elif isinstance(e, Routine) and chosen(e):
            out = go(e.lam)
        else:
            out = e.map_children(go)
        cache[e] = out
        return out

    return go(program)


def _names(e: Node) -> set:
    """Every parameter name occurring in `e`, bound or free."""
    return {n.name for n in e.subterms() if isinstance(n, Param)}


def _avoid_capture(e: Node, avoid: frozenset, taken: set) -> Node:
    """`e` with the parameters of its inner lambdas named in `avoid` renamed to names not in `taken`."""
    if isinstance(e, Lambda):
        mapping = {}
        for p in e.params:
            if p.name in avoid:
                new, k = f"{p.name}_", 1
                while new in taken:
                    new, k = f"{p.name}_{k}", k + 1
                taken.add(new)
                mapping[p] = Param(new, p.t)
        if mapping:
            e = Lambda(tuple(mapping.get(p, p) for p in e.params), substitute(e.body, mapping))
        body = _avoid_capture(e.body, avoid, taken)
        return e if body is e.body else Lambda(e.params, body)
    return e.map_children(lambda c: _avoid_capture(c, avoid, taken))
