"""The composition of two user functions written in Python: `f` applied to `g`'s result, as one function.

    (f ∘ᵢ g)(x₀, .., xᵢ₋₁, y₀, .., yₖ, xᵢ₊₁, ..) = f(x₀, .., xᵢ₋₁, g(y₀, .., yₖ), xᵢ₊₁, ..)

`g` must return one expression (`return e`), and `f` read its parameter `xᵢ` once, outside every loop: `f`'s
body with that read replaced by `e` (`g`'s parameters renamed apart from `f`'s names) computes the same values
and computes `e` as often as `f ∘ g` did. Why: OpenCL C lets a compiler contract `acc + x * w` into one
multiply-add only inside one expression (`FP_CONTRACT`, OpenCL C 6.10; `lift.opencl_gen.fp_contract`), so a
fold's step `add(acc, mult(x, w))` written as two functions costs two instructions where one does
(`lift.rules.userfun_composition`).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Optional

from lift.ir.userfun import UserFun, userfun
from lift.ir.userfun_scope import namespace


def _returned(g: UserFun) -> Optional[ast.expr]:
    """The expression `g` returns where its body is `return e` alone (a docstring aside), else None."""
    body = [s for s in g.origin.definition.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))]
    return body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value else None


def _reads(definition: ast.FunctionDef, name: str) -> list:
    """The reads of `name` in a function's body, None where one is inside a loop."""
    reads = []
    for stmt in definition.body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.For, ast.While)) and any(
                    isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
                return None
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                reads.append(node)
    return reads


def _names(tree: ast.AST, stored: bool = False) -> set:
    """The names a tree reads or binds (its parameters included); only those it binds where `stored`."""
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not (stored and isinstance(n.ctx, ast.Load))}
    return names | {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}


class _Substitute(ast.NodeTransformer):
    """Renames names (`renames`) and replaces the read of the parameter `param` by `expr`."""

    def __init__(self, renames: dict, param: Optional[str] = None, expr: Optional[ast.expr] = None):
        self.renames, self.param, self.expr = renames, param, expr

    def visit_Name(self, node: ast.Name):
        if node.id == self.param and isinstance(node.ctx, ast.Load):
            return self.expr
        return ast.copy_location(ast.Name(self.renames.get(node.id, node.id), node.ctx), node)


def contracts(f: UserFun, i: int, g: UserFun) -> bool:
    """Whether `f ∘ᵢ g` is a multiply-add the OpenCL compiler may contract: `g` returns a product and `f` adds
    (or subtracts) its `i`-th parameter to something (`acc + x * w`)."""
    expr = _returned(g) if g.origin is not None else None
    if f.origin is None or not (isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult)):
        return False
    param = f.param_names[i]
    return any(isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))
               and any(isinstance(side, ast.Name) and side.id == param for side in (node.left, node.right))
               for node in ast.walk(f.origin.definition))


def _plain(f: UserFun) -> bool:
    """`f` written in Python, read as written (no loops unrolled, sines fused, or scalar arrays)."""
    return f.origin is not None and not (f.origin.unroll or f.origin.sincos or f.origin.scalars)


@lru_cache(maxsize=256)
def composed(f: UserFun, i: int, g: UserFun) -> Optional[UserFun]:
    """`f ∘ᵢ g` (module docstring), named `<f>_<g>`, its parameters `f`'s with `g`'s in place of the `i`-th; None
    where either is written in C, `g`'s body is more than `return e`, `f` reads its `i`-th parameter other than
    once outside every loop, or a name `e` reads means another thing in `f`. Cached: the engine asks at every call
    of a user function."""
    if not (_plain(f) and _plain(g)) or g.out_type != f.in_types[i]:
        return None
    expr, param = _returned(g), f.param_names[i]
    reads = _reads(f.origin.definition, param)
    if expr is None or reads is None or len(reads) != 1:
        return None
    f_scope, g_scope = namespace(f.origin.function), namespace(g.origin.function)
    free = _names(expr) - set(g.param_names)
    taken = _names(f.origin.definition) | free
    clash = any(n in f_scope and n in g_scope and f_scope[n] is not g_scope[n] for n in free)
    if clash or free & _names(f.origin.definition, stored=True):
        return None
    renames = {}
    for p in g.param_names:
        name = p if p not in taken else next(f"{g.name}_{p}{k or ''}" for k in range(len(taken) + 1)
                                            if f"{g.name}_{p}{k or ''}" not in taken)
        taken.add(name)
        renames[p] = name
    inlined = ast.fix_missing_locations(_Substitute(renames).visit(
        ast.parse(ast.unparse(expr), mode="eval")).body)
    body = [_Substitute({}, param, inlined).visit(ast.parse(ast.unparse(s)).body[0]) for s in f.origin.definition.body]
    params = f.param_names[:i] + tuple(renames[p] for p in g.param_names) + f.param_names[i + 1:]
    types = f.in_types[:i] + g.in_types + f.in_types[i + 1:]
    annotations = {f"_T{k}": t for k, t in enumerate(types)} | {"_R": f.out_type}
    signature = ", ".join(f"{p}: _T{k}" for k, p in enumerate(params))
    lines = [f"def {f.name}_{g.name}({signature}) -> _R:"] + \
        ["    " + line for s in body for line in ast.unparse(ast.fix_missing_locations(s)).splitlines()]
    names = {**{n: g_scope[n] for n in free if n in g_scope}, **dict(f_scope), **annotations}
    return userfun(source="\n".join(lines), names=names)
