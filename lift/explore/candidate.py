"""Candidates: lowered programs proposed by the rewrite search, with how they were derived.

A candidate's `key` names its program across processes and runs, so that the log can tell which
candidates were already measured: it hashes the program's DSL source with its bound parameters
renamed in order of appearance (the search names them from a process-wide counter) and the C bodies
of its user functions (the source names them only).

A candidate may also fix the work-group size (`local_size`) of the kernels whose local size the generator
leaves to the driver (`map-global` kernels): the explorer measures a program at several such sizes, since
the driver's choice can be far from the best (PoCL's halved a fused BiCGK kernel's speed against groups of
one work-item). The size takes part in the key, so the log tells these measurements apart, and in the
parameters, so the log and the report show it; a candidate without one keeps its program's key.
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
from lift.opencl_gen.launch import local_size_overrides
from lift.opencl_gen.userfun_c import userfun_c_body

LOCAL_SIZE = "local_size"
DEFAULT_LOWERING = "default-lowering"
"""The parameter of the default lowering's candidate, which the explore loop evaluates first, whatever its
predicted time, so that a short search never ends slower than `lift.compile`'s default."""


@dataclass(frozen=True, eq=False)
class Candidate:
    """A lowered program, the rewrite steps that derived it (JSON data, opaque here), its parameters, and the
    work-group size of its kernels that the generator leaves to the driver (None: the driver's choice)."""

    program: Lambda
    derivation: tuple = ()
    params: Mapping = field(default_factory=dict)
    local_size: Optional[int] = None
    key: str = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "derivation", tuple(self.derivation))
        if self.local_size is not None:
            object.__setattr__(self, "params", {**self.params, LOCAL_SIZE: self.local_size})
        object.__setattr__(self, "key", program_key(self.program, self.local_size))

    def with_local_size(self, local_size: Optional[int]) -> "Candidate":
        """This candidate at work-group size `local_size` (None: the driver's choice), noted in its params
        either way, so that the log says which size a measurement of a tunable program was taken at."""
        return replace(self, local_size=local_size, params={**self.params, LOCAL_SIZE: local_size})

    def generate(self, name: str, sizes: Optional[Mapping[str, int]] = None) -> GeneratedProgram:
        """The candidate's OpenCL kernels for bound `sizes`, launched at its work-group size."""
        generated = generate(self.program, name, sizes)
        if self.local_size is None:
            return generated
        overrides = local_size_overrides(generated.kernels, self.local_size)
        return generate(self.program, name, sizes, launch=overrides) if overrides else generated


def program_key(program: Lambda, local_size: Optional[int] = None) -> str:
    """A stable structural hash of `program` (see the module docstring), and of the work-group size of its
    driver-sized kernels where one is given, as 16 hex digits."""
    canonical = _rename_binders(program, itertools.count(), root=True)
    bodies = sorted({f"{f.name}({', '.join(f.param_names)}) {{{userfun_c_body(f)}}}" for f in _userfuns(program)})
    launch = [] if local_size is None else [f"local size {local_size}"]
    text = "\n".join([python_source(canonical)] + bodies + launch)
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
    return {n for n in node.subterms() if isinstance(n, UserFun)}
