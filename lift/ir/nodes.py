"""The expression language's core nodes: parameters, literals, calls, lambdas, and function declarations.

Lift programs are expressions (`Expr`: a `Param`, a `Literal` or a `FunCall`) built by applying function
declarations (`FunDecl`: a `Lambda`, a `UserFun` or a pattern) to arguments. Composition `f ∘ g`
(written `f @ g`) is the lambda `λx. f(g(x))`, so that every rewrite rule sees plain chains of calls.

Nodes are immutable dataclasses with structural equality and a cached structural hash: the search
deduplicates millions of expressions. Fields declared with `compare=False` (inferred types, the user's
source line `written_at` of a call or lambda: `lift.ir.source_location`) are annotations, not structure.
Parameters compare by name; names are unique per binder where lift creates them (`fresh_param`), and follow
the Python lambda's argument names where the user wrote them.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Iterator, Optional

from lift.errors import LiftTypeError
from lift.ir.names import fresh_name
from lift.ir.operators import ExprOperators
from lift.ir.source_location import caller_location
from lift.types.types import Type, as_type, literal_type, literals_are


class Node:
    """Structural equality and a cached structural hash for frozen dataclass nodes."""

    _compare_names: tuple = ()

    @classmethod
    def field_names(cls) -> tuple:
        """The structural fields (compared, hashed, printed), in declaration order; annotations excluded."""
        names = cls.__dict__.get("_compare_names_cache")
        if names is None:
            names = tuple(f.name for f in fields(cls) if f.compare)
            cls._compare_names_cache = names
        return names

    def _key(self) -> tuple:
        return tuple(getattr(self, n) for n in self.field_names())

    def __hash__(self) -> int:
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((type(self).__name__,) + self._key())
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if type(self) is not type(other) or hash(self) != hash(other):
            return False
        return self._key() == other._key()

    def __ne__(self, other) -> bool:
        return not self == other

    def children(self) -> tuple:
        """The (field name, child node) pairs of this node, in order: the steps of a location path."""
        out = []
        for name in self.field_names():
            v = getattr(self, name)
            if isinstance(v, Node):
                out.append((name, v))
            elif isinstance(v, tuple):
                out.extend((f"{name}{i}", c) for i, c in enumerate(v) if isinstance(c, Node))
        return tuple(out)

    def subterms(self) -> Iterator["Node"]:
        """Every node of this tree, itself first, in pre-order: a node before its children, children in the
        order of `children`, a lambda's parameters included; a subtree shared by two parents is visited twice."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(c for _, c in reversed(node.children()))

    def with_child(self, step: str, new: "Node") -> "Node":
        """A copy of this node with the child at `step` (as named by `children`) replaced.

        Annotations (fields with `compare=False`, such as inferred types) are dropped: they may be stale; the
        user's source line (`written_at`) stays.
        """
        stale = {f.name: None for f in fields(self) if not f.compare and f.name != "written_at"}
        for name in self.field_names():
            v = getattr(self, name)
            if step == name:
                return replace(self, **{name: new}, **stale)
            if isinstance(v, tuple) and step.startswith(name) and step[len(name):].isdigit():
                i = int(step[len(name):])
                return replace(self, **{name: v[:i] + (new,) + v[i + 1 :]}, **stale)
        raise KeyError(f"{type(self).__name__} has no child {step!r}")

    def map_children(self, fn) -> "Node":
        """This node with every child `c` replaced by `fn(c)`; the node itself when no child changed, so
        that unchanged subtrees stay shared."""
        out = self
        for step, child in self.children():
            new = fn(child)
            if new is not child:
                out = out.with_child(step, new)
        return out


class Expr(ExprOperators, Node):
    """A value: a parameter, a literal, or the result of a call; Python operators on values build calls of
    built-in user functions (`lift.ir.operators`)."""

    def __matmul__(self, other):
        raise LiftTypeError(f"cannot compose the value {self} with {other}: only functions compose with `@`")


class FunDecl(Node):
    """A function: lambdas, user functions and patterns. Calling one builds a `FunCall`; `f @ g` composes."""

    @property
    def arity(self) -> int:
        return 1

    def __call__(self, *args) -> Expr:
        return FunCall(self, tuple(to_expr(a) for a in args))

    def __matmul__(self, other):
        """`f @ g` is the paper's `f ∘ g`; `f @ x` with a value `x` applies `f` to it."""
        if isinstance(other, Expr):
            return self(other)
        g = to_fundecl(other)
        params = tuple(fresh_param("x") for _ in range(g.arity))
        return Lambda(params, self(g(*params)))


@dataclass(frozen=True, eq=False)
class Param(Expr):
    """A lambda's parameter. `t` is its type once known (declared at the top level, inferred inside)."""

    name: str
    t: Optional[Type] = field(default=None, compare=False)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class Literal(Expr):
    """A typed constant: `Float(0.0)`, or a Python number (`0.0` is `Float`, `0` is `Int`).

    A literal of an array type holds one scalar, the value of every element (Lift's `Value` of an array
    type): the initial value of a reduction whose accumulator is an array.
    """

    value: Any
    t: Type

    def __post_init__(self):
        object.__setattr__(self, "value", _normalise_literal(self.value, self.t))

    def __str__(self) -> str:
        return repr(self.value)


literals_are(Literal)


@dataclass(frozen=True, eq=False)
class FunCall(Expr):
    """The application of a function to arguments; `t` is the result type once inferred."""

    f: FunDecl
    args: tuple
    t: Optional[Type] = field(default=None, compare=False)
    written_at: Optional[str] = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.written_at is None:
            object.__setattr__(self, "written_at", caller_location())

    @property
    def arg(self) -> Expr:
        return self.args[0]


@dataclass(frozen=True, eq=False)
class Lambda(FunDecl):
    """`λ params. body`: an anonymous function; compositions are lambdas whose body is a chain of calls."""

    params: tuple
    body: Expr
    written_at: Optional[str] = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.written_at is None:
            object.__setattr__(self, "written_at", caller_location())

    @property
    def arity(self) -> int:
        return len(self.params)

    def __call__(self, *args) -> Expr:
        """Applying a lambda whose parameters each occur at most once inlines it (composition stays flat),
        except where a computation (`computes`) would land inside a function: `fun(lambda s: Map(lambda
        v: div(v, s))(x))(Reduce(add, 0.0)(x))` stays a let, so the sum is computed once, not once per element."""
        args = tuple(to_expr(a) for a in args)
        if len(args) == len(self.params) and all(count_uses(self.body, p) <= 1 and
                                                 (not computes(a) or count_uses(self.body, p) ==
                                                  top_level_uses(self.body, p))
                                                 for p, a in zip(self.params, args)):
            return substitute(self.body, dict(zip(self.params, args)))
        return FunCall(self, args)


def is_computation(e: Node) -> bool:
    """Whether `e` is a call of a pattern that computes (not a view such as `split`, `transpose`, `get`): a value
    worth computing once rather than where each use is."""
    from lift.ir.patterns import Pattern, is_view

    return isinstance(e, FunCall) and isinstance(e.f, Pattern) and not is_view(e.f)


def computes(e: Node) -> bool:
    """Whether evaluating `e` computes something (`is_computation` anywhere in it): `join(map(f)(x))` does, a view
    of a computation; `split(n)(x)` does not."""
    return any(is_computation(n) for n in e.subterms())


def fresh_param(hint: str = "x", t: Optional[Type] = None) -> Param:
    """A parameter with a name new to the program being rewritten (`hint`, `_` and a number: see lift.ir.names)."""
    return Param(fresh_name(hint), t)


def param_named_after(node: Node, hint: str, t: Optional[Type] = None) -> Param:
    """A fresh parameter whose name is a function of `node` (`hint` and its structural hash): a rule that
    rewrites two equal occurrences of `node` one after the other gives equal results, so that a computation
    occurring twice, and computed once, stays one computation."""
    return Param(f"{hint}_h{hash(node) & 0xFFFFFFFF:08x}", t)


def to_expr(value) -> Expr:
    """Coerce a DSL value to an expression: Python numbers become literals, Python tuples become tuples."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, tuple):
        from lift.ir.patterns import Tuple

        return Tuple(*value)
    if isinstance(value, FunDecl) or callable(value):
        raise LiftTypeError(f"expected a value, got the function {value!r}: apply it to an argument first")
    try:
        return Literal(value, literal_type(value))
    except TypeError:
        raise LiftTypeError(f"{value!r} is not a lift value (expected an expression or a number)") from None


def to_fundecl(f) -> FunDecl:
    """Coerce a DSL function to a `FunDecl`: patterns, user functions and lambdas pass, Python callables become lambdas."""
    if isinstance(f, FunDecl):
        return f
    if isinstance(f, Expr):
        raise LiftTypeError(f"expected a function, got the value {f}")
    if callable(f):
        return fun(f)
    raise LiftTypeError(f"expected a function, got {f!r}")


def fun(types_or_f, f: Optional[Callable] = None) -> Lambda:
    """Build a lambda from a Python callable over IR values.

    `fun([ArrayType(Float, N)], lambda x: ...)` declares the parameter types of a program (and type
    checks it at once, so that an ill-typed program fails where it is written); `fun(lambda x: ...)` is an
    untyped lambda whose parameter types are inferred from where it is applied. Parameters take the
    Python argument names; a parameter's type may be a Python tuple of types (`fun([(Float, Int)], ...)`), a tuple
    type.
    """
    if f is None:
        types, f = None, types_or_f
    else:
        types = types_or_f if isinstance(types_or_f, (list, tuple)) else [types_or_f]
    if not callable(f):
        raise LiftTypeError(f"fun: expected a Python function, got {f!r}")
    sig = inspect.signature(f)
    names = []
    for p in sig.parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise LiftTypeError(f"fun: parameter {p.name} of {f!r} must be positional (no *args, **kwargs)")
        names.append(p.name)
    if types is not None and len(types) != len(names):
        raise LiftTypeError(f"fun: {len(types)} parameter types declared for a function of {len(names)} parameters")
    params = tuple(Param(n, (as_type(types[i]) or types[i]) if types else None) for i, n in enumerate(names))
    body = to_expr(f(*params))
    lam = Lambda(params, body)
    if types is not None:
        from lift.ir.typecheck import infer

        infer(lam)
    return lam


def count_uses(e: Node, p: Param) -> int:
    """How often parameter `p` occurs free in `e`."""
    if isinstance(e, Param):
        return int(e == p)
    if isinstance(e, Lambda) and p in e.params:
        return 0
    return sum(count_uses(c, p) for _, c in e.children())


def top_level_uses(e: Node, p: Param) -> int:
    """How often `p` occurs in `e` outside every function (as an argument of calls only)."""
    if isinstance(e, Param):
        return int(e == p)
    if isinstance(e, FunCall):
        return sum(top_level_uses(a, p) for a in e.args)
    return 0


def free_params(e: Node) -> frozenset:
    """The parameters occurring free in `e`."""
    if isinstance(e, Param):
        return frozenset((e,))
    out = frozenset().union(*(free_params(c) for _, c in e.children())) if e.children() else frozenset()
    if isinstance(e, Lambda):
        out = out - frozenset(e.params)
    return out


def substitute(e: Node, mapping: dict) -> Node:
    """Replace free parameters by expressions (capture-avoiding: lift's binders have unique names)."""
    if not mapping:
        return e
    if isinstance(e, Param):
        return mapping.get(e, e)
    if isinstance(e, Lambda):
        inner = {k: v for k, v in mapping.items() if k not in e.params}
        return replace(e, body=substitute(e.body, inner)) if inner else e
    return e.map_children(lambda c: substitute(c, mapping))


def _normalise_literal(value, t: Type):
    from lift.types.types import ArrayType, ScalarType, VectorType

    if isinstance(t, ArrayType):
        elem = t.elem
        while isinstance(elem, ArrayType):
            elem = elem.elem
        if not isinstance(elem, (ScalarType, VectorType)) or isinstance(value, (tuple, list)):
            raise LiftTypeError(f"an array literal is one scalar, the value of every element: {value!r} of the "
                                f"type {t} is not")
        return _normalise_literal(value, elem)
    if isinstance(t, ScalarType) or isinstance(t, VectorType):
        scalar = t if isinstance(t, ScalarType) else t.elem
        cast = {"float": float, "double": float, "int": int, "bool": bool}[scalar.name]
        if isinstance(value, (tuple, list)):
            if isinstance(t, ScalarType) or len(value) != t.width:
                raise LiftTypeError(f"literal {value!r} does not fit the type {t}")
            return tuple(_scalar_literal(v, cast, t) for v in value)
        return _scalar_literal(value, cast, t)
    raise LiftTypeError(f"literals must have a scalar, vector or array type, got {t}")


def _scalar_literal(value, cast, t: Type):
    """`value` cast to the scalar of `t`; an `Int` holds 32 bits, as OpenCL's `int` and the interpreter's int32
    do (a larger literal would be cut short in C and overflow numpy)."""
    try:
        v = cast(value)
    except (TypeError, ValueError, OverflowError):
        raise LiftTypeError(f"literal {value!r} does not fit the type {t}") from None
    if cast is int and not -2**31 <= v < 2**31:
        raise LiftTypeError(f"literal {value!r} does not fit the type {t} (a 32-bit int, {-2**31} to {2**31 - 1})")
    return v


def bind_sizes_in(e: Node, sizes: dict) -> Node:
    """`e` with the size variables of its patterns' parameters (`split-(N/64)`) and of its literals' types
    replaced by `sizes`."""
    from lift.types.arith import ArithExpr
    from lift.types.types import bind_type

    changes = {}
    for f in fields(e):
        v = getattr(e, f.name)
        if isinstance(v, ArithExpr) and v.free_vars():
            new = v.substitute(sizes)
        elif isinstance(e, Literal) and f.name == "t":
            new = bind_type(v, sizes)
        else:
            continue
        if new != v:
            changes[f.name] = new
    out = replace(e, **changes) if changes else e
    return out.map_children(lambda c: bind_sizes_in(c, sizes))
