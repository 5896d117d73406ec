"""OpenCL's thread hierarchy: where each OpenCL map may be placed (paper 4.2, "Maps").

Rule 4(a) lowers `map` to one of four maps, and the context decides which are legal, both from the
patterns enclosing the map and from those already inside its function:

- `map-workgroup` at the top of a kernel: not inside a thread (`map-local`, `map-global`, a sequential
  pattern) nor inside an `iterate` (that would need a barrier across work-groups); nested
  `map-workgroup`s use different dimensions (`map-workgroup[1](map-workgroup(f))`);
- `map-local` only inside a `map-workgroup`, and nested `map-local`s use different dimensions; not inside
  a sequential pattern, except a `reduce-seq` at work-group level (inside `map-workgroup`s and such folds
  alone): a loop that all work-items of the group run together, each step of which may spread work over
  them (CASES 2016's tiles of the reduction dimension staged in local memory);
- `map-global` like `map-workgroup`, but nothing inside it may be a work-group or local map;
- `map-seq` anywhere, as long as nothing parallel is inside it: a sequential pattern (`map-seq`,
  `reduce-seq`, a reduction's operator) runs in one thread.

`placement_error` is the one statement of these constraints on the enclosing maps and sequential
patterns: the rules ask it for every dimension (`parallel_dims`), and the code generator's
`check_lowered` pass asks it for every OpenCL map of a lowered program.
"""

from __future__ import annotations

from typing import Iterator, Optional

from lift.ir import patterns as P
from lift.ir.nodes import FunDecl

PARALLEL_MAPS = (P.MapWrg, P.MapLcl, P.MapGlb)
_SEQUENTIAL = (P.MapSeq, P.MapSeqSlide, P.Fold)
_INSIDE = {P.MapWrg: (P.MapGlb,), P.MapLcl: (P.MapWrg, P.MapGlb), P.MapGlb: (P.MapWrg, P.MapLcl)}


def placement_error(kind: type, dim: int, enclosing: tuple) -> Optional[str]:
    """Why a map of `kind` (`MapWrg`, `MapLcl`, `MapGlb`) on dimension `dim` cannot run inside the patterns
    `enclosing` (outermost first; only the OpenCL maps and sequential patterns count), or None where it can."""
    outer = [p for p in enclosing if isinstance(p, PARALLEL_MAPS + _SEQUENTIAL)]
    if kind is P.MapWrg:
        if any(type(p) is not P.MapWrg or p.dim == dim for p in outer):
            return "map-workgroup must be outermost (only inside map-workgroups of other dimensions)"
    elif kind is P.MapGlb:
        if any(type(p) is not P.MapGlb or p.dim == dim for p in outer):
            return "map-global must be outermost (only inside map-globals of other dimensions)"
    elif kind is P.MapLcl:
        if not any(isinstance(p, P.MapWrg) for p in outer):
            return "map-local must be inside a map-workgroup"
        if any(isinstance(p, P.MapGlb) for p in outer):
            return "map-local cannot be inside a map-global"
        if any(type(p) is P.MapLcl and p.dim == dim for p in outer):
            return "map-local cannot be inside a map-local of the same dimension"
        if any(isinstance(p, _SEQUENTIAL) and not workgroup_fold(p, outer[:k]) for k, p in enumerate(outer)):
            return ("map-local cannot be inside a sequential pattern (other than a reduce-seq at work-group level, "
                    "outside every map-local)")
    return None


def workgroup_fold(p: P.Pattern, enclosing) -> bool:
    """Whether `p`, inside `enclosing` (outermost first), is a `reduce-seq` run by all work-items of a work-group
    together (`at_workgroup_level`)."""
    return isinstance(p, P.ReduceSeq) and at_workgroup_level(enclosing)


def at_workgroup_level(enclosing) -> bool:
    """Whether code inside `enclosing` (outermost first) runs in all work-items of a work-group together: inside
    `map-workgroup`s and `reduce-seq`s at work-group level alone."""
    return any(isinstance(q, P.MapWrg) for q in enclosing) and all(
        isinstance(q, P.MapWrg) or workgroup_fold(q, enclosing[:k])
        for k, q in enumerate(enclosing) if isinstance(q, PARALLEL_MAPS + _SEQUENTIAL))


def parallel_dims(kind: type, enclosing: tuple, f: FunDecl) -> list:
    """The dimensions on which a map of `kind` (`MapWrg`, `MapLcl`, `MapGlb`) of `f` may run inside `enclosing`
    (outermost first).

    Besides `placement_error`, the rules keep work-group and global maps out of `iterate` (that would
    need a barrier across work-groups) and out of each other's functions."""
    if kind is not P.MapLcl and any(isinstance(p, P.Iterate) for p in enclosing):
        return []
    inner = [p for p in patterns_in(f) if isinstance(p, PARALLEL_MAPS)]
    if any(isinstance(p, _INSIDE[kind]) for p in inner):
        return []
    used = {p.dim for p in inner if type(p) is kind}
    return [d for d in (0, 1, 2) if d not in used and placement_error(kind, d, enclosing) is None]


def is_sequential_safe(f: FunDecl) -> bool:
    """Whether `f` may run inside one thread (`map-seq(f)`, `reduce-seq(f, z)`): nothing parallel inside."""
    return not any(isinstance(p, PARALLEL_MAPS) for p in patterns_in(f))


def patterns_in(f: FunDecl) -> Iterator[P.Pattern]:
    """Every pattern in `f`, itself included."""
    return (n for n in f.subterms() if isinstance(n, P.Pattern))
