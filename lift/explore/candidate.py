"""Candidates: lowered programs proposed by the rewrite search, with how they were derived.

A candidate's `key` names its program across processes and runs, so that the log can tell which
candidates were already measured: it hashes the program's DSL source with its bound parameters
renamed in order of appearance (the search names them from a process-wide counter) and the C bodies
of its user functions (the source names them only).
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field, replace
from typing import Mapping, Optional

from lift.ir.nodes import Lambda, Node, Param, substitute
from lift.ir.printer import python_source
from lift.ir.userfun import UserFun
from lift.opencl_gen.kernels import GeneratedProgram, generate


@dataclass(frozen=True, eq=False)
class Candidate:
    """A lowered program, the rewrite steps that derived it (JSON data, opaque here) and its parameters."""

    program: Lambda
    derivation: tuple = ()
    params: Mapping = field(default_factory=dict)
    key: str = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "derivation", tuple(self.derivation))
        object.__setattr__(self, "key", program_key(self.program))

    def generate(self, name: str, sizes: Optional[Mapping[str, int]] = None) -> GeneratedProgram:
        """The candidate's OpenCL kernels for bound `sizes`."""
        return generate(self.program, name, sizes)


def program_key(program: Lambda) -> str:
    """A stable structural hash of `program` (see the module docstring), as 16 hex digits."""
    canonical = _rename_binders(program, itertools.count(), root=True)
    bodies = sorted({f"{f.name}({', '.join(f.param_names)}) {{{f.body}}}" for f in _userfuns(program)})
    text = "\n".join([python_source(canonical)] + bodies)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _rename_binders(node: Node, names, root: bool = False) -> Node:
    """`node` with every lambda's parameters renamed `#0, #1, ...` in pre-order (inner ones untyped)."""
    if isinstance(node, Lambda):
        fresh = tuple(Param(f"#{next(names)}", p.t if root else None) for p in node.params)
        node = replace(node, params=fresh, body=substitute(node.body, dict(zip(node.params, fresh))))
    out = node
    for step, child in node.children():
        if isinstance(child, Param):
            continue
        new = _rename_binders(child, names)
        if new is not child:
            out = out.with_child(step, new)
    return out


def _userfuns(node: Node) -> set:
    found = {node} if isinstance(node, UserFun) else set()
    for _, child in node.children():
        found |= _userfuns(child)
    return found
