"""Locations in a program, and the context a rule sees there.

A location is a printable path of child steps from the program's root, the steps of
`Node.children()` (`body.args0.f.f`), so that a derivation can name where each rule applied and be
replayed. Locations are the calls of a program and the functions passed to patterns (`map(abs)` in
`map(map(abs))`); a function in call position is part of its call's location.

The `Context` of a location is a chain of parent links through the *typed* program (`infer` annotates
a copy of the same shape), giving a rule the types, the enclosing patterns (for OpenCL's thread
hierarchy) and the consumers of a value.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, Optional

from lift.ir import patterns as P
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Node, Param, fresh_param, free_params
from lift.ir.opencl_patterns import AddressSpaceCast
from lift.ir.source_location import with_location_of
from lift.rules.sizes import SizeChoices


@dataclass(frozen=True, eq=False)
class Context:
    """A typed node at `path`, linked to its parent; `choices` carries the engine's size settings."""

    node: Node
    path: str
    step: str
    parent: Optional["Context"]
    choices: SizeChoices

    @property
    def is_function(self) -> bool:
        """Whether this location is a function passed to a pattern (rules see it eta-expanded)."""
        return isinstance(self.node, FunDecl)

    @cached_property
    def eta_params(self) -> tuple:
        """The fresh, typed parameters of the eta-expanded function."""
        return tuple(fresh_param("x", t) for t in self.input_types())

    @cached_property
    def call(self) -> FunCall:
        """The typed call a rule rewrites: the call here, or the function here applied to fresh parameters."""
        if isinstance(self.node, FunCall):
            return self.node
        return FunCall(self.node, self.eta_params)

    def child(self, step: str, node: Node) -> "Context":
        path = f"{self.path}.{step}" if self.path else step
        return Context(node, path, step, self, self.choices)

    def input_types(self) -> tuple:
        """The argument types of the function at this location (or of the call's function)."""
        node = self.node
        if isinstance(node, FunCall):
            return tuple(a.t for a in node.args)
        if isinstance(node, Lambda):
            return tuple(p.t for p in node.params)
        parent = self.parent
        if isinstance(parent.node, FunCall):
            return parent.input_types()
        (outer,) = parent.input_types()
        if isinstance(parent.node, P.AbstractMap):
            return (outer.elem,)
        if isinstance(parent.node, P.Fold):
            return (parent.node.init.t, outer.elem)
        if isinstance(parent.node, (P.Iterate, P.IterateHost, AddressSpaceCast)):
            return (outer,)
        raise TypeError(f"no argument types known for {type(node).__name__} under {type(parent.node).__name__}")

    def enclosing(self) -> Iterator[P.Pattern]:
        """The patterns whose function contains this location, innermost first."""
        ctx = self
        while ctx.parent is not None:
            parent = ctx.parent.node
            if isinstance(parent, P.Pattern) and ctx.step in parent.funs:
                yield parent
            ctx = ctx.parent

    def in_resizing_iteration(self) -> bool:
        """Whether this location is inside the function of an `iterate` that changes its array's length
        (its types, annotated for the first iteration, differ in the others)."""
        ctx = self
        while ctx.parent is not None:
            if isinstance(ctx.parent.node, P.Iterate) and not _keeps_length(ctx.node):
                return True
            ctx = ctx.parent
        return False

    def function_exit(self) -> Optional[tuple]:
        """Where the result of the function at this location goes: `(context, depth)`.

        The depth counts the maps between: the result of `f` in `map(f)(x)` is an element of the
        map call's result, at depth 1. None where the result leaves through anything else (an
        iterate, a reduction's operator, a lambda applied directly, the program's result).
        """
        ctx, depth = self, 0
        while ctx.parent is not None:
            parent = ctx.parent
            if isinstance(parent.node, FunCall) and ctx.step == "f":
                return parent, depth
            if isinstance(parent.node, P.AbstractMap):
                depth += 1
            elif not isinstance(parent.node, AddressSpaceCast):
                return None
            ctx = parent
        return None


def _keeps_length(f: FunDecl) -> bool:
    """Whether the typed function `f` (an iterate's) returns an array of its argument's type."""
    if isinstance(f, Lambda):
        return f.body.t == f.params[0].t
    return isinstance(f, P.AbstractMap)


def walk(typed: Lambda, choices: SizeChoices) -> Iterator[Context]:
    """Every location of a typed program, outermost first (`subtree`'s order; the engine's hot loop)."""
    stack = [root(typed, choices)]
    while stack:
        ctx = stack.pop()
        if ctx.parent is not None and is_location(ctx):
            yield ctx
        for step, child in reversed(ctx.node.children()):
            if isinstance(child, (FunCall, FunDecl)):
                stack.append(ctx.child(step, child))


def root(typed: Lambda, choices: SizeChoices) -> Context:
    """The context of a typed program itself (not a location: no rule rewrites a whole program)."""
    return Context(typed, "", "", None, choices)


def children(ctx: Context) -> list:
    """The contexts of the calls and functions directly under `ctx`, in order."""
    return [ctx.child(step, node) for step, node in ctx.node.children() if isinstance(node, (FunCall, FunDecl))]


def subtree(ctx: Context) -> Iterator[Context]:
    """`ctx` and every call and function under it, outermost first (pre-order)."""
    stack = [ctx]
    while stack:
        here = stack.pop()
        yield here
        stack.extend(reversed(children(here)))


def subtree_innermost(ctx: Context) -> Iterator[Context]:
    """`ctx` and every call and function under it, innermost first (post-order)."""
    for child in children(ctx):
        yield from subtree_innermost(child)
    yield ctx


def argument(ctx: Context, i: int) -> Optional[Context]:
    """The context of the `i`-th argument of the call at `ctx`; None where there is none."""
    return descend(ctx, f"args{i}")


def descend(ctx: Context, step: str) -> Optional[Context]:
    """The context of the child `step` of `ctx` (`f`, `body`, `args0`, ...); None where there is none."""
    node = dict(ctx.node.children()).get(step)
    return ctx.child(step, node) if isinstance(node, (FunCall, FunDecl)) else None


def is_location(ctx: Context) -> bool:
    """Whether `ctx` is a location: a call, or a function passed to a pattern (not one in call position)."""
    if ctx.parent is None:
        return False
    if isinstance(ctx.node, FunCall):
        return True
    return isinstance(ctx.node, FunDecl) and not isinstance(ctx.parent.node, FunCall)


def context_at(typed: Lambda, path: str, choices: SizeChoices) -> Context:
    """The context of the location `path` in a typed program; KeyError if there is none."""
    ctx = context_of(typed, path, choices)
    if not is_location(ctx):
        raise KeyError(f"{path!r} is not a location (a call, or a function passed to a pattern)")
    return ctx


def context_of(typed: Lambda, path: str, choices: SizeChoices) -> Context:
    """The context of the node at `path` in a typed program, a location or not; KeyError if there is none."""
    ctx = root(typed, choices)
    for step in path.split(".") if path else ():
        kids = dict(ctx.node.children())
        if step not in kids:
            where = ctx.path or "the root"
            raise KeyError(f"no location {path!r}: {type(ctx.node).__name__} at {where} has no {step!r}")
        ctx = ctx.child(step, kids[step])
    return ctx


def replace_at(root: Node, path: str, new: Node) -> Node:
    """`root` with the node at `path` replaced by `new` (which keeps the user's source line of the node it
    replaces where it has none: `lift.ir.source_location`)."""
    if not path:
        return with_location_of(root, new)
    step, _, rest = path.partition(".")
    child = dict(root.children())[step]
    return root.with_child(step, replace_at(child, rest, new))


def node_at(root: Node, path: str) -> Node:
    """The node at `path` in `root`."""
    for step in path.split(".") if path else ():
        root = dict(root.children())[step]
    return root


def untyped(result: Node, typed: Node, original: Node, extra: tuple = ()) -> Node:
    """`result`, built from parts of the typed node `typed`, with those parts swapped for their
    counterparts in `original` (the same node before type inference) and the nodes of `extra` untyped.

    Rules read types from the typed program but must not copy its annotations (or the typed tree's
    own shape where inference rewrote a node) into the program they rewrite.
    """
    parts = {id(p): Param(p.name) for p in extra}
    stack = [(typed, original)]
    while stack:
        t, u = stack.pop()
        parts[id(t)] = u
        tk, uk = t.children(), u.children()
        if type(t) is type(u) and len(tk) == len(uk):
            stack.extend((a, b) for (_, a), (_, b) in zip(tk, uk))
    return _swap(result, parts)


def _swap(node: Node, parts: dict) -> Node:
    found = parts.get(id(node))
    return found if found is not None else node.map_children(lambda child: _swap(child, parts))


def map_children(node: Node, fn) -> Node:
    """`node.map_children(fn)`, as a function (`Node.map_children` is the one child-rebuilding loop)."""
    return node.map_children(fn)


def abstract(params: tuple, body: Expr) -> FunDecl:
    """`λ params. body`, eta-reduced to `g` when `body` is `g(params)` and `g` does not use them."""
    if isinstance(body, FunCall) and body.args == params and not (free_params(body.f) & frozenset(params)):
        return body.f
    return Lambda(params, body)
