"""OpenCL's thread hierarchy: where each OpenCL map may be placed (paper 4.2, "Maps").

Rule 4(a) lowers `map` to one of four maps, and the context decides which are legal, both from the
patterns enclosing the map and from those already inside its function:

- `map-workgroup` at the top of a kernel: not inside a thread (`map-local`, `map-global`, a sequential
  pattern) nor inside an `iterate` (that would need a barrier across work-groups); nested
  `map-workgroup`s use different dimensions (`map-workgroup[1](map-workgroup(f))`);
- `map-local` only inside a `map-workgroup`, not inside a sequential pattern, and nested `map-local`s
  use different dimensions;
- `map-global` like `map-workgroup`, but nothing inside it may be a work-group or local map;
- `map-seq` anywhere, as long as nothing parallel is inside it: a sequential pattern (`map-seq`,
  `reduce-seq`, a reduction's operator) runs in one thread.
"""

from __future__ import annotations

from typing import Iterator

from lift.ir import patterns as P
from lift.ir.nodes import FunDecl

PARALLEL_MAPS = (P.MapWrg, P.MapLcl, P.MapGlb)
_SEQUENTIAL = (P.MapSeq, P.Fold)
_OUTSIDE = {
    P.MapWrg: (P.MapLcl, P.MapGlb, P.Iterate) + _SEQUENTIAL,
    P.MapLcl: (P.MapGlb,) + _SEQUENTIAL,
    P.MapGlb: (P.MapWrg, P.MapLcl, P.Iterate) + _SEQUENTIAL,
}
_INSIDE = {P.MapWrg: (P.MapGlb,), P.MapLcl: (P.MapWrg, P.MapGlb), P.MapGlb: (P.MapWrg, P.MapLcl)}


def parallel_dims(kind: type, enclosing: tuple, f: FunDecl) -> list:
    """The dimensions on which a map of `kind` (`MapWrg`, `MapLcl`, `MapGlb`) of `f` may run here."""
    if any(isinstance(p, _OUTSIDE[kind]) for p in enclosing):
        return []
    if kind is P.MapLcl and not any(isinstance(p, P.MapWrg) for p in enclosing):
        return []
    inner = [p for p in patterns_in(f) if isinstance(p, PARALLEL_MAPS)]
    if any(isinstance(p, _INSIDE[kind]) for p in inner):
        return []
    used = {p.dim for p in enclosing + tuple(inner) if type(p) is kind}
    return [d for d in (0, 1, 2) if d not in used]


def is_sequential_safe(f: FunDecl) -> bool:
    """Whether `f` may run inside one thread (`map-seq(f)`, `reduce-seq(f, z)`): nothing parallel inside."""
    return not any(isinstance(p, PARALLEL_MAPS) for p in patterns_in(f))


def patterns_in(f: FunDecl) -> Iterator[P.Pattern]:
    """Every pattern in `f`, itself included."""
    stack = [f]
    while stack:
        node = stack.pop()
        if isinstance(node, P.Pattern):
            yield node
        stack.extend(c for _, c in node.children())
