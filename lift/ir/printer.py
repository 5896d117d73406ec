"""Printing expressions: the paper's notation, and Python source that evaluates back to an equal expression.

`paper(e)` writes `join ∘ map-workgroup(asScalar ∘ map-local(vectorize-4(mul3)) ∘ asVector-4) ∘ split-1024`
(Figure 2(b)): a lambda whose body is a chain of calls ending in its own parameter prints as a
composition. `python_source(e)` writes the DSL (`Join() @ MapWrg(...) @ Split(1024)`); evaluated with
`from lift import *` and the user functions in scope, it gives back an equal expression.
"""

from __future__ import annotations

import re

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, FunDecl, Lambda, Literal, Node, Param
from lift.ir.routine import Routine
from lift.ir.userfun import UserFun
from lift.types.arith import ArithExpr
from lift.types.types import ScalarType, VectorType

_DIM_MAPS = (P.MapGlb, P.MapWrg, P.MapLcl)


def _chain(lam: Lambda):
    """The functions of `lam` if it is a composition `λx. f1(f2(...fn(x)))`, outermost first; else None."""
    if len(lam.params) != 1:
        return None
    funs, e = [], lam.body
    while isinstance(e, FunCall) and len(e.args) == 1:
        funs.append(e.f)
        e = e.args[0]
    return funs if funs and e == lam.params[0] else None


# --- the paper's notation -------------------------------------------------------------------------------


def paper(node: Node) -> str:
    """The paper's notation of an expression or function."""
    if isinstance(node, Param):
        return node.name
    if isinstance(node, Literal):
        return _literal(node)
    if isinstance(node, FunCall):
        return _paper_call(node)
    if isinstance(node, Lambda):
        funs = _chain(node)
        if funs is not None:
            return " ∘ ".join(_paper_fun(f) for f in funs)
        return f"λ {', '.join(p.name for p in node.params)}. {paper(node.body)}"
    return _paper_fun(node)


def _paper_call(call: FunCall) -> str:
    """A chain of calls `f(g(h(x, y)))` prints as `f ∘ g ∘ h(x, y)`, as the paper writes `map(abs, x)`.

    A routine call ends the chain: it prints as the library call it stands for, `gemv(A, x)`.
    """
    funs, e = [], call
    while isinstance(e, FunCall) and len(e.args) == 1 and isinstance(e.args[0], FunCall) \
            and not isinstance(e.f, Routine):
        funs.append(e.f)
        e = e.args[0]
    last = f"{_paper_fun(e.f)}({', '.join(paper(a) for a in e.args)})"
    return " ∘ ".join([_paper_fun(f) for f in funs] + [last])


def _paper_fun(f: FunDecl) -> str:
    if isinstance(f, Lambda):
        return f"({paper(f)})"
    if isinstance(f, (UserFun, Routine)):
        return f.name
    if isinstance(f, P.Pattern):
        return _paper_pattern(f)
    return repr(f)


def _paper_pattern(f: P.Pattern) -> str:
    name = f.paper
    if isinstance(f, _DIM_MAPS) and f.dim != 0:
        name += f"[{f.dim}]"
    if isinstance(f, (P.Split, P.Iterate, P.ReorderStride, P.AsVector, P.Get, P.Vectorize)):
        n = {P.Split: "n", P.Iterate: "n", P.ReorderStride: "s", P.AsVector: "n", P.Get: "i", P.Vectorize: "n"}[type(f)]
        name += f"-{_size(getattr(f, n))}"
    args = []
    if isinstance(f, P.Fold):
        args = [paper(f.f), paper(f.init)] + ([_size(f.m)] if isinstance(f, P.PartRed) else [])
    elif f.funs:
        args = [paper(getattr(f, n)) for n in f.funs]
    elif isinstance(f, P.Slide):
        args = [str(f.size), str(f.step)]
    elif isinstance(f, P.Pad):
        args = [str(f.left), str(f.right), f.boundary if isinstance(f.boundary, str) else paper(f.boundary)]
    return f"{name}({', '.join(args)})" if args else name


def _size(n) -> str:
    s = str(n)
    return s if isinstance(n, int) or (isinstance(n, ArithExpr) and n.is_constant) else f"({s})"


def _literal(lit: Literal) -> str:
    v = lit.value
    if isinstance(lit.t, VectorType):
        return f"vectorize-{lit.t.width}({v})" if not isinstance(v, tuple) else f"{lit.t}{v}"
    return repr(v)


# --- Python source -----------------------------------------------------------------------------------------


def python_source(node: Node) -> str:
    """DSL source for `node`; `eval` it with `lift`'s names and the user functions in scope."""
    if isinstance(node, Param):
        return node.name
    if isinstance(node, Literal):
        return _py_literal(node)
    if isinstance(node, FunCall):
        if isinstance(node.f, (P.Zip, P.Tuple)):
            return f"{type(node.f).__name__}({', '.join(python_source(a) for a in node.args)})"
        return f"{_py_fun(node.f)}({', '.join(python_source(a) for a in node.args)})"
    return _py_fun(node)


def _py_fun(f: FunDecl) -> str:
    if isinstance(f, Lambda):
        params = ", ".join(p.name for p in f.params)
        types = [p.t for p in f.params]
        if all(t is not None for t in types) and types:
            return f"fun([{', '.join(_py_type(t) for t in types)}], lambda {params}: {python_source(f.body)})"
        return f"fun(lambda {params}: {python_source(f.body)})"
    if isinstance(f, (UserFun, Routine)):
        return f.name
    cls = type(f).__name__
    if isinstance(f, _DIM_MAPS):
        return f"{cls}({f.dim})({_py_fun(f.f)})" if f.dim else f"{cls}({_py_fun(f.f)})"
    if isinstance(f, P.Fold):
        extra = f", {_py_size(f.m)}" if isinstance(f, P.PartRed) else ""
        return f"{cls}({_py_fun(f.f)}, {python_source(f.init)}{extra})"
    if isinstance(f, P.AbstractMap) or isinstance(f, P.AddressSpaceCast):
        return f"{cls}({_py_fun(f.f)})"
    if isinstance(f, (P.Iterate, P.Vectorize)):
        return f"{cls}({_py_size(f.n)}, {_py_fun(f.f)})"
    if isinstance(f, (P.Split, P.AsVector, P.Zip, P.Tuple)):
        return f"{cls}({_py_size(f.n)})"
    if isinstance(f, P.ReorderStride):
        return f"{cls}({_py_size(f.s)})"
    if isinstance(f, P.Get):
        return f"{cls}({f.i})"
    if isinstance(f, P.Slide):
        return f"{cls}({f.size}, {f.step})"
    if isinstance(f, P.Pad):
        b = repr(f.boundary) if isinstance(f.boundary, str) else python_source(f.boundary)
        return f"{cls}({f.left}, {f.right}, {b})"
    return f"{cls}()"


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


def _py_literal(lit: Literal) -> str:
    t = lit.t
    if isinstance(t, VectorType):
        return f"VectorType({t.elem}, {t.width})({lit.value!r})"
    if t in (ScalarType("float"), ScalarType("int"), ScalarType("bool")):
        return repr(lit.value)
    return f"{t}({lit.value!r})"
