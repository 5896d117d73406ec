"""A small C AST: the statements a generated kernel is made of, and their rendering as OpenCL C.

The emitter (`lift.opencl_gen.emit`) builds these nodes instead of strings, so that the code of a kernel
is data until the last pass (`render`): a pass may look at loops, declarations and barriers, and a
tentative piece of code is a list of nodes to keep or drop, never text to take back. Expressions stay C
strings (the views resolve them, `lift.opencl_gen.views`); statements are nodes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Optional

INDENT = "    "


class Stmt:
    """A C statement."""


@dataclass(frozen=True)
class Decl(Stmt):
    """`ctype name = init;`, or `ctype name[size];` for an array (no initialiser)."""

    ctype: str
    name: str
    init: Optional[str] = None
    size: Optional[int] = None


@dataclass(frozen=True)
class Assign(Stmt):
    """`target = value;`"""

    target: str
    value: str


@dataclass(frozen=True)
class Call(Stmt):
    """A function called for its effect: `name(args);` (`vstore4(v, 0, p)`)."""

    name: str
    args: tuple


@dataclass(frozen=True)
class Barrier(Stmt):
    """`barrier(fence);`: every work-item of the work-group waits here (`lift.opencl_gen.barriers`)."""

    fence: str


@dataclass(frozen=True)
class Swap(Stmt):
    """`{ ctype swap = a; a = b; b = swap; }`: the two buffers of `iterate` change roles."""

    ctype: str
    a: str
    b: str


@dataclass(frozen=True)
class For(Stmt):
    """`for (index var = start; var < stop; var += step) { /* comment */ body }`, `index` the C integer type

    `kind` says what the loop runs over (`wrg`, `lcl`, `glb`, `seq`, `iterate`; `""`: nothing the passes
    look at) and `fresh` the address space of new memory its work-items fill for each other to read
    after it (a `map-local` storing into memory of its own, the buffers of an `iterate`): the facts
    barrier placement reads (`lift.opencl_gen.barriers`). `unroll`: preceded by `#pragma unroll` (a
    `map-seq-unroll`), which unrolls a loop of constant length fully."""

    var: str
    start: str
    stop: str
    step: str
    body: tuple
    comment: str = ""
    kind: str = ""
    fresh: Optional[str] = None
    index: str = "int"
    unroll: bool = False


@dataclass(frozen=True)
class Block(Stmt):
    """`{ decl /* comment */ body }`: a scope, with an optional first declaration on its opening line and
    an optional `guard` (`{ int l = get_local_id(0); if (l < n) { ... } }`); a loop of one iteration per
    id has `kind` and `fresh` as `For`."""

    body: tuple
    decl: Optional[Decl] = None
    comment: str = ""
    guard: Optional[str] = None
    kind: str = ""
    fresh: Optional[str] = None


def render(stmts, depth: int = 1) -> list:
    """The lines of C of `stmts`, indented `depth` levels."""
    lines: list = []
    for s in stmts:
        _render(s, depth, lines)
    return lines


def _render(s: Stmt, depth: int, lines: list) -> None:
    pad = INDENT * depth
    if isinstance(s, Block):
        head = "{"
        if s.decl is not None:
            head += " " + _statement(s.decl)
        close = "}"
        if s.guard is not None:
            head += f" if ({s.guard}) {{"
            close = "} }"
        if s.comment:
            head += f" /* {s.comment} */"
        lines.append(pad + head)
        lines.extend(render(s.body, depth + 1))
        lines.append(pad + close)
    elif isinstance(s, For):
        comment = f" /* {s.comment} */" if s.comment else ""
        if s.unroll:
            lines.append(f"{pad}#pragma unroll")
        lines.append(f"{pad}for ({s.index} {s.var} = {s.start}; {s.var} < {s.stop}; {s.var} += {s.step}) {{{comment}")
        lines.extend(render(s.body, depth + 1))
        lines.append(pad + "}")
    else:
        lines.append(pad + _statement(s))


def _statement(s: Stmt) -> str:
    if isinstance(s, Decl):
        if s.size is not None:
            return f"{s.ctype} {s.name}[{s.size}];"
        return f"{s.ctype} {s.name} = {s.init};"
    if isinstance(s, Assign):
        return f"{s.target} = {s.value};"
    if isinstance(s, Call):
        return f"{s.name}({', '.join(s.args)});"
    if isinstance(s, Barrier):
        return f"barrier({s.fence});"
    if isinstance(s, Swap):
        return f"{{ {s.ctype} swap = {s.a}; {s.a} = {s.b}; {s.b} = swap; }}"
    raise TypeError(f"not a C statement: {s!r}")


def walk(stmts):
    """Every statement in `stmts`, nested ones included, outermost first."""
    for s in stmts:
        yield s
        if isinstance(s, (Block, For)):
            yield from walk(s.body)


def assuming(condition: str, expr: str) -> str:
    """The C expression `expr` where `condition` holds: each conditional `((condition) ? a : b)` in it is `(a)`.

    A padded array's vector read and the guarded write of its result test the same lanes: under the write's
    guard, the read is one plain vector load (`lift.opencl_gen.accesses.GuardedAccess`)."""
    head = f"(({condition}) ? "
    start = expr.find(head)
    while start >= 0:
        depth, colon, i = 0, None, start + len(head)
        while i < len(expr):
            c = expr[i]
            if c in "([":
                depth += 1
            elif c in ")]":
                if depth == 0:
                    break
                depth -= 1
            elif c == ":" and depth == 0 and colon is None:
                colon = i
            i += 1
        if colon is None or i == len(expr):
            return expr
        expr = f"{expr[:start]}({expr[start + len(head):colon].rstrip()}){expr[i + 1:]}"
        start = expr.find(head, start)
    return expr


def assumed(stmts: tuple, conditions: list) -> tuple:
    """`stmts` where every condition of `conditions` holds: `assuming` applied to each of their expressions (the
    fast copy of an iteration of `map-seq-unswitch`, `lift.opencl_gen.emit`)."""
    def text(expr):
        for condition in conditions:
            expr = assuming(condition, expr)
        return expr

    def stmt(s):
        if isinstance(s, Decl):
            return s if s.init is None else replace(s, init=text(s.init))
        if isinstance(s, Assign):
            return replace(s, target=text(s.target), value=text(s.value))
        if isinstance(s, Call):
            return replace(s, args=tuple(text(a) for a in s.args))
        if isinstance(s, (Block, For)):
            return replace(s, body=assumed(s.body, conditions))
        return s

    return without_unused(tuple(stmt(s) for s in stmts))


def without_unused(stmts: tuple) -> tuple:
    """`stmts` without the declarations of scalars that nothing reads (the clamped indices of the padded reads
    that the fast copy of an iteration of `map-seq-unswitch` reads directly)."""
    while True:
        words = Counter(re.findall(r"[A-Za-z_]\w*", "\n".join(render(stmts))))
        unused = {s.name for s in walk(stmts) if isinstance(s, Decl) and s.size is None and words[s.name] == 1}
        if not unused:
            return stmts
        stmts = _dropped(stmts, unused)


def _dropped(stmts: tuple, names: set) -> tuple:
    kept = []
    for s in stmts:
        if isinstance(s, Decl) and s.name in names:
            continue
        kept.append(replace(s, body=_dropped(s.body, names)) if isinstance(s, (Block, For)) else s)
    return tuple(kept)
