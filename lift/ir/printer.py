"""Printing expressions: the paper's notation, and Python source that evaluates back to an equal expression.

`paper(e)` writes `join ∘ map-workgroup(asScalar ∘ map-local(vectorize-4(mul3)) ∘ asVector-4) ∘ split-1024`
(Figure 2(b)): a lambda whose body is a chain of calls ending in its own parameter prints as a
composition. `python_source(e)` writes the DSL (`Join() @ MapWrg(...) @ Split(1024)`); evaluated with
`from lift import *` and the user functions in scope, it gives back an equal expression.
"""

from __future__ import annotations

import math
import re

from lift.ir import patterns as P
from lift.ir.mapper import Mapper
from lift.ir.nodes import FunCall, FunDecl, Lambda, Literal, Node, Param, free_params
from lift.ir.operators import builtin_of
from lift.ir.routine import Routine
from lift.ir.userfun import UserFun
from lift.types.arith import ArithExpr
from lift.types.types import ScalarType, VectorType


def _chain(lam: Lambda):
    """The functions of `lam` if it is a composition `λx. f1(f2(...fn(x)))` whose functions do not read `x`,
    outermost first; else None (printed as a composition, a function that reads `x` would print it unbound)."""
    if len(lam.params) != 1:
        return None
    funs, e = [], lam.body
    while isinstance(e, FunCall) and len(e.args) == 1:
        funs.append(e.f)
        e = e.args[0]
    return funs if funs and e == lam.params[0] and not any(e in free_params(f) for f in funs) else None


# --- the paper's notation -------------------------------------------------------------------------------


class PaperNotation(Mapper):
    """The paper's notation of a node: a pattern is its `paper` name, its `size_field` after a dash
    (`split-1024`), then its other fields in brackets (`reduce(add, 0.0)`)."""

    def map_Param(self, p: Param) -> str:
        return p.name

    def map_Literal(self, lit: Literal) -> str:
        v = lit.value
        if isinstance(lit.t, VectorType):
            return f"vectorize-{lit.t.width}({v})" if not isinstance(v, tuple) else f"{lit.t}{v}"
        return repr(v)

    def map_FunCall(self, call: FunCall) -> str:
        """A chain of calls `f(g(h(x, y)))` prints as `f ∘ g ∘ h(x, y)`, as the paper writes `map(abs, x)`.

        A routine call ends the chain: it prints as the library call it stands for, `gemv(A, x)`.
        """
        funs, e = [], call
        while isinstance(e, FunCall) and len(e.args) == 1 and isinstance(e.args[0], FunCall) \
                and not isinstance(e.f, Routine):
            funs.append(e.f)
            e = e.args[0]
        last = f"{self.function(e.f)}({', '.join(self(a) for a in e.args)})"
        return " ∘ ".join([self.function(f) for f in funs] + [last])

    def map_Lambda(self, lam: Lambda) -> str:
        funs = _chain(lam)
        if funs is not None:
            return " ∘ ".join(self.function(f) for f in funs)
        return f"λ {', '.join(p.name for p in lam.params)}. {self(lam.body)}"

    def function(self, f: FunDecl) -> str:
        """`f` where it is applied or composed: a lambda in brackets."""
        return f"({self(f)})" if isinstance(f, Lambda) else self(f)

    def map_UserFun(self, f: UserFun) -> str:
        return f.name

    map_Routine = map_UserFun

    def map_AbstractMap(self, f: P.AbstractMap) -> str:
        return f"{f.paper}{f'[{f.dim}]' if f.dim else ''}({self(f.f)})"

    def map_MapSeqUnswitch(self, f: P.MapSeqUnswitch) -> str:
        return f"{f.paper}({self(f.f)}{', rolled' if f.rolled else ''})"

    def map_Pattern(self, f: P.Pattern) -> str:
        name = f.paper
        if f.size_field is not None:
            name += f"-{_size(getattr(f, f.size_field))}"
        if f.nary:
            return name
        args = [self.field(getattr(f, k)) for k in f.field_names() if k != f.size_field]
        return f"{name}({', '.join(args)})" if args else name

    def field(self, v) -> str:
        if isinstance(v, Node):
            return self(v)
        return v if isinstance(v, str) else _size(v)

    def map_default(self, node) -> str:
        return repr(node)


_PAPER = PaperNotation()


def paper(node: Node) -> str:
    """The paper's notation of an expression or function."""
    return _PAPER(node)


def _size(n) -> str:
    s = str(n)
    return s if isinstance(n, int) or (isinstance(n, ArithExpr) and n.is_constant) else f"({s})"


# --- Python source -----------------------------------------------------------------------------------------


class PythonSource(Mapper):
    """DSL source for a node: a pattern is its class applied to its fields in order (`Split(1024)`,
    `Reduce(add, 0.0)`), a parallel map on dimension d `MapGlb(d)(f)`."""

    def map_Param(self, p: Param) -> str:
        return p.name

    def map_Literal(self, lit: Literal) -> str:
        t = lit.t
        if isinstance(t, VectorType):
            return f"VectorType({t.elem}, {t.width})({_py_value(lit.value)})"
        if t in (ScalarType("float"), ScalarType("int"), ScalarType("bool")):
            return _py_value(lit.value)
        return f"{t}({_py_value(lit.value)})"

    def map_FunCall(self, call: FunCall) -> str:
        args = ", ".join(self(a) for a in call.args)
        if isinstance(call.f, P.Pattern) and call.f.nary:
            return f"{type(call.f).__name__}({args})"
        return f"{self(call.f)}({args})"

    def map_Lambda(self, f: Lambda) -> str:
        params = ", ".join(p.name for p in f.params)
        types = [p.t for p in f.params]
        if all(t is not None for t in types) and types:
            return f"fun([{', '.join(_py_type(t) for t in types)}], lambda {params}: {self(f.body)})"
        return f"fun(lambda {params}: {self(f.body)})"

    def map_UserFun(self, f: UserFun) -> str:
        """A user function by its name; a built-in one of an operator or math function (`mul_float`) by the call
        that builds it (`operator_userfun('mul', Float)`), which evaluates with lift's names."""
        built_in = builtin_of(f)
        if built_in is None:
            return f.name
        build, name, t = built_in
        return f"{build}({name!r}, {_py_type(t)})"

    def map_Routine(self, f: Routine) -> str:
        return f.name

    def map_AbstractMap(self, f: P.AbstractMap) -> str:
        cls = type(f).__name__
        return f"{cls}({f.dim})({self(f.f)})" if f.dim else f"{cls}({self(f.f)})"

    def map_MapSeqUnswitch(self, f: P.MapSeqUnswitch) -> str:
        return f"MapSeqUnswitch({self(f.f)}{', rolled=True' if f.rolled else ''})"

    def map_Pattern(self, f: P.Pattern) -> str:
        return f"{type(f).__name__}({', '.join(self.field(getattr(f, k)) for k in f.field_names())})"

    def field(self, v) -> str:
        if isinstance(v, Node):
            return self(v)
        return repr(v) if isinstance(v, str) else _py_size(v)

    def map_default(self, node) -> str:
        return f"{type(node).__name__}()"


_PYTHON_SOURCE = PythonSource()


def python_source(node: Node) -> str:
    """DSL source for `node`; `eval` it with `lift`'s names and the user functions in scope."""
    return _PYTHON_SOURCE(node)


def _py_value(v) -> str:
    """A literal's value as Python source: `float('-inf')` where `repr` gives `-inf`, which is no Python name."""
    if isinstance(v, tuple):
        return f"({', '.join(_py_value(x) for x in v)}{',' if len(v) == 1 else ''})"
    if isinstance(v, float) and not math.isfinite(v):
        return f"float('{v}')"
    return repr(v)


def _py_size(n) -> str:
    if isinstance(n, ArithExpr) and not n.is_constant:
        return _py_arith(n)
    return str(int(n))


def _py_arith(n: ArithExpr) -> str:
    names = "|".join(re.escape(v.name) for v in n.free_vars())
    return "(" + re.sub(rf"\b({names})\b", lambda m: f"SizeVar({m.group(1)!r})", str(n)) + ")"


def _py_type(t) -> str:
    from lift.types.types import ArrayType, TupleType

    if isinstance(t, ScalarType):
        return str(t)
    if isinstance(t, VectorType):
        return f"VectorType({t.elem}, {t.width})"
    if isinstance(t, TupleType):
        return f"TupleType({', '.join(_py_type(e) for e in t.elems)})"
    if isinstance(t, ArrayType):
        return f"ArrayType({_py_type(t.elem)}, {_py_size(t.length)})"
    raise TypeError(t)
